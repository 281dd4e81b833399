//! Masterminds/semver v3 as Helm's chart model uses it: `NewVersion` (loose: `v` prefix, missing minor/patch) for
//! `Chart.yaml` versions, and constraint checks (`IsCompatibleRange`) for dependency `version` ranges and
//! `kubeVersion`.

use std::cmp::Ordering;

/// A parsed version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
}

fn valid_ident_list(text: &str) -> bool {
    !text.is_empty()
        && text
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

impl Version {
    /// Masterminds' `NewVersion`.
    pub(crate) fn parse(text: &str) -> Option<Version> {
        let body = text.strip_prefix('v').unwrap_or(text);
        let (body, meta) = match body.split_once('+') {
            Some((body, meta)) => (body, Some(meta)),
            None => (body, None),
        };
        if let Some(meta) = meta
            && !valid_ident_list(meta)
        {
            return None;
        }
        let (core, pre) = match body.split_once('-') {
            Some((core, pre)) => (core, pre),
            None => (body, ""),
        };
        if !pre.is_empty() || body.contains('-') {
            if !valid_ident_list(pre) {
                return None;
            }
            // Numeric identifiers must not have leading zeros.
            if pre.split('.').any(|part| {
                part.len() > 1 && part.starts_with('0') && part.chars().all(|c| c.is_ascii_digit())
            }) {
                return None;
            }
        }
        let mut numbers = core.split('.');
        let mut next = |required: bool| -> Option<u64> {
            match numbers.next() {
                None if !required => Some(0),
                None => None,
                Some(part) if !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()) => {
                    part.parse().ok()
                }
                Some(_) => None,
            }
        };
        let major = next(true)?;
        let minor = next(false)?;
        let patch = next(false)?;
        if numbers.next().is_some() {
            return None;
        }
        Some(Version {
            major,
            minor,
            patch,
            pre: pre.to_string(),
        })
    }

    fn compare(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| compare_pre(&self.pre, &other.pre))
    }
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// One constraint: operator and a version whose missing/wildcard parts are recorded.
struct Constraint {
    op: String,
    version: Version,
    minor_dirty: bool,
    patch_dirty: bool,
    any: bool,
}

fn is_wild(part: &str) -> bool {
    matches!(part, "x" | "X" | "*")
}

fn parse_constraint(text: &str) -> Option<Constraint> {
    let ops = ["!=", ">=", "=>", "<=", "=<", "~>", ">", "<", "=", "~", "^"];
    let text = text.trim();
    let (op, rest) = ops
        .iter()
        .find_map(|op| text.strip_prefix(op).map(|rest| (*op, rest.trim())))
        .unwrap_or(("", text));
    let op = match op {
        "=>" => ">=",
        "=<" => "<=",
        "~>" => "~",
        other => other,
    };
    let rest_no_v = rest.strip_prefix('v').unwrap_or(rest);
    let (core, suffix) = match rest_no_v.find(['-', '+']) {
        Some(index) => rest_no_v.split_at(index),
        None => (rest_no_v, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    if is_wild(parts[0]) {
        return Some(Constraint {
            op: op.to_string(),
            version: Version {
                major: 0,
                minor: 0,
                patch: 0,
                pre: String::new(),
            },
            minor_dirty: true,
            patch_dirty: true,
            any: true,
        });
    }
    let minor_dirty = parts.len() < 2 || is_wild(parts[1]);
    let patch_dirty = minor_dirty || parts.len() < 3 || is_wild(parts[2]);
    let clean: Vec<&str> = parts
        .iter()
        .map(|part| if is_wild(part) { "0" } else { part })
        .collect();
    let version = Version::parse(&format!("{}{suffix}", clean.join(".")))?;
    Some(Constraint {
        op: op.to_string(),
        version,
        minor_dirty,
        patch_dirty,
        any: false,
    })
}

impl Constraint {
    fn check(&self, v: &Version) -> bool {
        let c = &self.version;
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        if self.any {
            return matches!(self.op.as_str(), "" | "=" | ">=" | "<=" | "~" | "^");
        }
        let cmp = v.compare(c);
        match self.op.as_str() {
            "" | "=" => {
                if self.minor_dirty || self.patch_dirty {
                    self.tilde(v)
                } else {
                    cmp == Ordering::Equal
                }
            }
            "!=" => {
                if self.minor_dirty {
                    v.major != c.major
                } else if self.patch_dirty {
                    v.major != c.major || v.minor != c.minor
                } else {
                    cmp != Ordering::Equal
                }
            }
            ">" => {
                if self.minor_dirty {
                    v.major > c.major
                } else if self.patch_dirty {
                    v.major > c.major || (v.major == c.major && v.minor > c.minor)
                } else {
                    cmp == Ordering::Greater
                }
            }
            ">=" => cmp != Ordering::Less,
            "<" => cmp == Ordering::Less,
            "<=" => {
                if self.minor_dirty {
                    v.major <= c.major
                } else if self.patch_dirty {
                    v.major < c.major || (v.major == c.major && v.minor <= c.minor)
                } else {
                    cmp != Ordering::Greater
                }
            }
            "~" => self.tilde(v),
            "^" => {
                if cmp == Ordering::Less {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    v.major == c.major
                } else if c.minor > 0 || self.patch_dirty {
                    v.major == 0 && v.minor == c.minor
                } else {
                    v.major == 0 && v.minor == 0 && v.patch == c.patch
                }
            }
            _ => false,
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && self.minor_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        if v.minor != c.minor && !self.minor_dirty {
            return false;
        }
        true
    }
}

/// Helm's `IsCompatibleRange(constraint, version)`: false when either does not parse.
pub(crate) fn is_compatible_range(constraint: &str, version: &str) -> bool {
    let Some(version) = Version::parse(version) else {
        return false;
    };
    let constraint = constraint.trim();
    if constraint.is_empty() {
        return false;
    }
    let mut groups = Vec::new();
    for group in constraint.split("||") {
        let group = group.trim();
        // Hyphen ranges `a - b` become `>= a, <= b`.
        let normalized = match group.split_once(" - ") {
            Some((low, high)) => format!(">={}, <={}", low.trim(), high.trim()),
            None => group.to_string(),
        };
        let mut items = Vec::new();
        let mut pending_op = String::new();
        for token in normalized
            .split([',', ' '])
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            if token.chars().all(|c| "<>=!~^".contains(c)) {
                pending_op.push_str(token);
                continue;
            }
            let text = format!("{pending_op}{token}");
            pending_op.clear();
            match parse_constraint(&text) {
                Some(item) => items.push(item),
                None => return false,
            }
        }
        if items.is_empty() {
            return false;
        }
        groups.push(items);
    }
    groups
        .iter()
        .any(|items| items.iter().all(|item| item.check(&version)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_loose_versions() {
        assert!(Version::parse("1.2.3").is_some());
        assert!(Version::parse("v1.2").is_some());
        assert!(Version::parse("1.0.0-rc.1+build.5").is_some());
        assert!(Version::parse("1.0.0-01").is_none());
        assert!(Version::parse("one").is_none());
        assert!(Version::parse("1.2.3.4").is_none());
    }

    #[test]
    fn checks_ranges_like_masterminds() {
        assert!(is_compatible_range("*", "1.2.3"));
        assert!(!is_compatible_range("*", "1.2.3-rc1"));
        assert!(is_compatible_range(">=1.20.0-0", "v1.36.0"));
        assert!(is_compatible_range("~1.2.0", "1.2.9"));
        assert!(!is_compatible_range("~1.2.0", "1.3.0"));
        assert!(is_compatible_range("^1.2", "1.9.0"));
        assert!(!is_compatible_range("^0.2.1", "0.3.0"));
        assert!(is_compatible_range("1.x", "1.4.0"));
        assert!(is_compatible_range(">= 1.0, < 2.0", "1.5.0"));
        assert!(is_compatible_range("<1.0 || >=3", "3.1.0"));
        assert!(is_compatible_range("1.0 - 2.0", "1.5.0"));
        assert!(!is_compatible_range("", "1.0.0"));
        assert!(is_compatible_range("0.1.0", "0.1.0"));
    }
}
