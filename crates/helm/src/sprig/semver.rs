//! Sprig's semantic versions as Masterminds/semver has them (`semver`, `semverCompare`).
//!
//! Both follow Masterminds/semver v3 as Helm v4 links it: versions parse loosely (`v` prefix, missing minor/patch,
//! leading zeros coerced), constraints are `||`-separated groups of comma/space-separated comparisons with `^`, `~`,
//! `x`-ranges and hyphen ranges, and a prerelease version only satisfies a group in which some comparison names a
//! prerelease (`>=1.21-0`). The matching uses the library's own regular expressions (with Go's ASCII `\s`/`\d`),
//! so what Go's parser accepts and rejects is accepted and rejected here with the same messages.
//!
//! `semver` returns a `*semver.Version` object: `.Major .Minor .Patch .Prerelease .Metadata .Original .String`,
//! `.Compare .LessThan .GreaterThan .Equal …` (taking another `*semver.Version`), `.IncPatch .IncMinor .IncMajor
//! .SetPrerelease .SetMetadata` (returning a `semver.Version` value, on which Go's pointer methods are unavailable).

use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;

pub(crate) use crate::gotemplate::fmt::quote as go_quote;
use crate::gotemplate::funcs::param_str;
use crate::gotemplate::{Arity, FuncError, FuncMap, Object, Runtime, Value};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("semver", Arity::Exact(1), semver);
    map.add("semverCompare", Arity::Exact(2), semver_compare);
}

const INVALID: &str = "invalid semantic version";
const STARTS_ZERO: &str = "version segment starts with 0";
const INVALID_PRERELEASE: &str = "invalid prerelease string";
const INVALID_METADATA: &str = "invalid metadata string";

/// Go's `\s` (ASCII white space) for the translated patterns.
const WS: &str = r"[\t\n\f\r ]";

static LOOSE_VERSION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$",
    )
    .ok()
});

const CV: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

struct ConstraintRegexes {
    single: Regex,
    range: Regex,
    find: Regex,
    valid: Regex,
}

static CONSTRAINT: LazyLock<Option<ConstraintRegexes>> = LazyLock::new(|| {
    Some(ConstraintRegexes {
        single: Regex::new(&format!(r"^{WS}*({OPS}){WS}*({CV}){WS}*$")).ok()?,
        range: Regex::new(&format!(r"{WS}*({CV}){WS}+-{WS}+({CV}){WS}*")).ok()?,
        find: Regex::new(&format!(r"({OPS}){WS}*({CV})")).ok()?,
        valid: Regex::new(&format!(
            r"^({WS}*({OPS}){WS}*({CV}){WS}*)((?:{WS}+|,{WS}*)({OPS}){WS}*({CV}){WS}*)*$"
        ))
        .ok()?,
    })
});

/// A parsed version (Masterminds' `Version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
    original: String,
}

fn only(text: &str, allowed: impl Fn(u8) -> bool) -> bool {
    text.bytes().all(allowed)
}

fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-'
}

fn validate_prerelease(pre: &str) -> Result<(), String> {
    for part in pre.split('.') {
        if part.is_empty() {
            return Err(INVALID_PRERELEASE.into());
        } else if only(part, |b| b.is_ascii_digit()) {
            if part.len() > 1 && part.starts_with('0') {
                return Err(STARTS_ZERO.into());
            }
        } else if !only(part, is_ident_byte) {
            return Err(INVALID_PRERELEASE.into());
        }
    }
    Ok(())
}

fn validate_metadata(metadata: &str) -> Result<(), String> {
    for part in metadata.split('.') {
        if part.is_empty() || !only(part, is_ident_byte) {
            return Err(INVALID_METADATA.into());
        }
    }
    Ok(())
}

/// Go's `strconv.ParseUint(text, 10, 64)` as the version parser reports it.
fn parse_segment(text: &str) -> Result<u64, String> {
    text.parse::<u64>().map_err(|_| {
        format!(
            "error parsing version segment: strconv.ParseUint: parsing {}: value out of range",
            go_quote(text)
        )
    })
}

impl Version {
    /// Masterminds' `NewVersion` (coercing mode, the library default).
    pub(crate) fn parse(text: &str) -> Result<Version, String> {
        let regex = LOOSE_VERSION.as_ref().ok_or_else(|| INVALID.to_string())?;
        let caps = regex.captures(text).ok_or_else(|| INVALID.to_string())?;
        let group = |index: usize| caps.get(index).map_or("", |m| m.as_str());
        let major = parse_segment(group(1))?;
        let minor = match group(2) {
            "" => 0,
            text => parse_segment(text.trim_start_matches('.'))?,
        };
        let patch = match group(3) {
            "" => 0,
            text => parse_segment(text.trim_start_matches('.'))?,
        };
        let pre = group(5).to_string();
        let metadata = group(8).to_string();
        if !pre.is_empty() {
            validate_prerelease(&pre)?;
        }
        if !metadata.is_empty() {
            validate_metadata(&metadata)?;
        }
        Ok(Version {
            major,
            minor,
            patch,
            pre,
            metadata,
            original: text.to_string(),
        })
    }

    /// `String()`: the canonical form, without a `v`.
    fn canonical(&self) -> String {
        let mut out = format!("{}.{}.{}", self.major, self.minor, self.patch);
        if !self.pre.is_empty() {
            out.push('-');
            out.push_str(&self.pre);
        }
        if !self.metadata.is_empty() {
            out.push('+');
            out.push_str(&self.metadata);
        }
        out
    }

    fn v_prefix(&self) -> &'static str {
        if self.original.starts_with('v') { "v" } else { "" }
    }

    /// `Compare`: -1, 0 or 1, metadata ignored, a prerelease lower than its release.
    pub(crate) fn compare(&self, other: &Version) -> i64 {
        let by_number = (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if by_number != std::cmp::Ordering::Equal {
            return by_number as i64;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => -1,
            (false, false) => compare_prerelease(&self.pre, &other.pre),
        }
    }
}

fn compare_prerelease(left: &str, right: &str) -> i64 {
    let left: Vec<&str> = left.split('.').collect();
    let right: Vec<&str> = right.split('.').collect();
    for index in 0..left.len().max(right.len()) {
        let l = left.get(index).copied().unwrap_or("");
        let r = right.get(index).copied().unwrap_or("");
        let d = compare_pre_part(l, r);
        if d != 0 {
            return d;
        }
    }
    0
}

fn compare_pre_part(s: &str, o: &str) -> i64 {
    if s == o {
        return 0;
    }
    if s.is_empty() {
        return -1;
    }
    if o.is_empty() {
        return 1;
    }
    match (s.parse::<u64>(), o.parse::<u64>()) {
        (Err(_), Err(_)) => {
            if s > o {
                1
            } else {
                -1
            }
        }
        (Ok(_), Err(_)) => -1,
        (Err(_), Ok(_)) => 1,
        (Ok(si), Ok(oi)) => {
            if si > oi {
                1
            } else {
                -1
            }
        }
    }
}

/// One comparison of a constraint (Masterminds' `constraint`).
#[derive(Debug, Clone)]
struct Constraint {
    con: Version,
    op: String,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn is_x(text: &str) -> bool {
    matches!(text, "x" | "*" | "X")
}

fn parse_constraint(text: &str, regexes: &ConstraintRegexes) -> Result<Constraint, String> {
    if text.is_empty() {
        return Ok(Constraint {
            con: Version::parse("0.0.0").map_err(|_| "constraint parser error".to_string())?,
            op: String::new(),
            minor_dirty: false,
            patch_dirty: false,
            dirty: true,
        });
    }
    let caps = regexes
        .single
        .captures(text)
        .ok_or_else(|| format!("improper constraint: {}", go_quote(text)))?;
    let group = |index: usize| caps.get(index).map_or("", |m| m.as_str());
    let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
    let version = if is_x(group(3)) || group(3).is_empty() {
        dirty = true;
        format!("0.0.0{}", group(6))
    } else if is_x(group(4).trim_start_matches('.')) || group(4).is_empty() {
        minor_dirty = true;
        dirty = true;
        format!("{}.0.0{}", group(3), group(6))
    } else if is_x(group(5).trim_start_matches('.')) || group(5).is_empty() {
        dirty = true;
        patch_dirty = true;
        format!("{}{}.0{}", group(3), group(4), group(6))
    } else {
        group(2).to_string()
    };
    let con = Version::parse(&version).map_err(|_| "constraint parser error".to_string())?;
    Ok(Constraint {
        con,
        op: group(1).to_string(),
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

/// Masterminds' `Constraints`: OR groups of AND comparisons, with whether each group names a prerelease.
struct Constraints {
    groups: Vec<(Vec<Constraint>, bool)>,
}

/// Masterminds' `rewriteRange`: `a - b` becomes `>= a, <= b `.
fn rewrite_range(text: &str, regexes: &ConstraintRegexes) -> String {
    let mut out = text.to_string();
    for caps in regexes.range.captures_iter(text) {
        let whole = caps.get(0).map_or("", |m| m.as_str());
        let low = caps.get(1).map_or("", |m| m.as_str());
        let high = caps.get(11).map_or("", |m| m.as_str());
        out = out.replacen(whole, &format!(">= {low}, <= {high} "), 1);
    }
    out
}

impl Constraints {
    fn parse(text: &str) -> Result<Constraints, String> {
        let regexes = CONSTRAINT
            .as_ref()
            .ok_or_else(|| "constraint parser error".to_string())?;
        let text = rewrite_range(text, regexes);
        let mut groups = Vec::new();
        for part in text.split("||") {
            if !regexes.valid.is_match(part) {
                return Err(format!("improper constraint: {}", go_quote(part)));
            }
            let mut found: Vec<&str> = regexes.find.find_iter(part).map(|m| m.as_str()).collect();
            if found.is_empty() {
                found.push(part);
            }
            let mut group = Vec::with_capacity(found.len());
            let mut has_pre = false;
            for item in found {
                let constraint = parse_constraint(item, regexes)?;
                has_pre |= !constraint.con.pre.is_empty();
                group.push(constraint);
            }
            groups.push((group, has_pre));
        }
        Ok(Constraints { groups })
    }

    fn check(&self, version: &Version) -> bool {
        self.groups
            .iter()
            .any(|(group, include_pre)| group.iter().all(|c| c.check(version, *include_pre)))
    }
}

impl Constraint {
    fn check(&self, v: &Version, include_pre: bool) -> bool {
        if !v.pre.is_empty() && !include_pre {
            return false;
        }
        let c = &self.con;
        match self.op.as_str() {
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v.compare(c) == 0
                }
            }
            "!=" => {
                if self.dirty {
                    if c.major != v.major {
                        return true;
                    }
                    if c.minor != v.minor && !self.minor_dirty {
                        return true;
                    } else if self.minor_dirty {
                        return false;
                    } else if c.patch != v.patch && !self.patch_dirty {
                        return true;
                    } else if self.patch_dirty {
                        if !v.pre.is_empty() || !c.pre.is_empty() {
                            return compare_prerelease(&v.pre, &c.pre) != 0;
                        }
                        return false;
                    }
                }
                v.compare(c) != 0
            }
            ">" => {
                if !self.dirty {
                    return v.compare(c) == 1;
                }
                if v.major > c.major {
                    true
                } else if v.major < c.major || self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    v.compare(c) == 1
                }
            }
            "<" => v.compare(c) < 0,
            ">=" | "=>" => v.compare(c) >= 0,
            "<=" | "=<" => {
                if !self.dirty {
                    return v.compare(c) <= 0;
                }
                !(v.major > c.major || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            "~" | "~>" => self.tilde(v),
            "^" => {
                if v.compare(c) < 0 {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if v.major > 0 {
                    return false;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.minor == c.minor;
                }
                if v.minor > 0 {
                    return false;
                }
                c.patch == v.patch
            }
            _ => false,
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) < 0 {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        v.minor == c.minor || self.minor_dirty
    }
}

/// A `*semver.Version` (pointer: every method) or a `semver.Version` value (from `IncPatch` and friends: Go
/// offers only the value methods on it).
struct VersionObject {
    version: Version,
    pointer: bool,
}

fn uint(value: u64) -> Value {
    // Go's uint64; versions beyond i64 are not representable here and saturate.
    Value::Int(i64::try_from(value).unwrap_or(i64::MAX))
}

fn version_value(version: Version, pointer: bool) -> Value {
    Value::Object(Rc::new(VersionObject { version, pointer }))
}

impl VersionObject {
    fn other(&self, args: &[Value]) -> Result<Version, String> {
        match args {
            [Value::Object(object)] if object.type_name() == "*semver.Version" => {
                Version::parse(&object.display()).map_err(|_| INVALID.to_string())
            }
            [Value::Object(object)] => Err(format!(
                "wrong type for value; expected *semver.Version; got {}",
                object.type_name()
            )),
            [Value::String(text)] => Err(format!(
                "can't handle {} for arg of type *semver.Version",
                go_quote(text)
            )),
            [other] => Err(format!(
                "wrong type for value; expected *semver.Version; got {}",
                other.type_name()
            )),
            _ => Err(format!("wrong number of args: want 1 got {}", args.len())),
        }
    }
}

impl Object for VersionObject {
    fn type_name(&self) -> &str {
        if self.pointer {
            "*semver.Version"
        } else {
            "semver.Version"
        }
    }

    fn field(&self, name: &str) -> Option<Value> {
        let v = &self.version;
        Some(match name {
            "Major" => uint(v.major),
            "Minor" => uint(v.minor),
            "Patch" => uint(v.patch),
            "Prerelease" => Value::from(v.pre.as_str()),
            "Metadata" => Value::from(v.metadata.as_str()),
            "String" | "Value" => Value::from(v.canonical()),
            "Original" if self.pointer => Value::from(v.original.as_str()),
            "IncPatch" => {
                let mut next = v.clone();
                if next.pre.is_empty() {
                    next.patch = next.patch.checked_add(1)?;
                }
                next.pre.clear();
                next.metadata.clear();
                version_value(next.with_original_from(v), false)
            }
            "IncMinor" => {
                let mut next = v.clone();
                next.minor = next.minor.checked_add(1)?;
                next.patch = 0;
                next.pre.clear();
                next.metadata.clear();
                version_value(next.with_original_from(v), false)
            }
            "IncMajor" => {
                let mut next = v.clone();
                next.major = next.major.checked_add(1)?;
                next.minor = 0;
                next.patch = 0;
                next.pre.clear();
                next.metadata.clear();
                version_value(next.with_original_from(v), false)
            }
            _ => return None,
        })
    }

    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        let v = &self.version;
        let pointer_method = matches!(
            name,
            "Compare" | "LessThan" | "LessThanEqual" | "GreaterThan" | "GreaterThanEqual" | "Equal"
        );
        if pointer_method && self.pointer {
            return Some(self.other(args).map(|other| {
                let order = v.compare(&other);
                match name {
                    "Compare" => Value::Int(order),
                    "LessThan" => Value::Bool(order < 0),
                    "LessThanEqual" => Value::Bool(order <= 0),
                    "GreaterThan" => Value::Bool(order > 0),
                    "GreaterThanEqual" => Value::Bool(order >= 0),
                    _ => Value::Bool(order == 0),
                }
            }));
        }
        match (name, args) {
            ("SetPrerelease", [arg]) => Some(param_str(arg).map_err(|e| e.message).and_then(|pre| {
                if !pre.is_empty() {
                    validate_prerelease(&pre)?;
                }
                let mut next = v.clone();
                next.pre = pre;
                Ok(version_value(next.with_original_from(v), false))
            })),
            ("SetMetadata", [arg]) => Some(param_str(arg).map_err(|e| e.message).and_then(|metadata| {
                if !metadata.is_empty() {
                    validate_metadata(&metadata)?;
                }
                let mut next = v.clone();
                next.metadata = metadata;
                Ok(version_value(next.with_original_from(v), false))
            })),
            _ => None,
        }
    }

    fn display(&self) -> String {
        self.version.canonical()
    }

    fn to_value(&self) -> Value {
        Value::from(self.version.canonical())
    }
}

impl Version {
    /// The `original` Masterminds gives a derived version: the source's `v` prefix and the new canonical form.
    fn with_original_from(self, source: &Version) -> Version {
        let mut next = self;
        next.original = format!("{}{}", source.v_prefix(), next.canonical());
        next
    }
}

/// Helm's `IsCompatibleRange` (chart `kubeVersion`, dependency versions): whether `version` meets `constraint`;
/// false when either does not parse.
pub(crate) fn is_compatible_range(constraint: &str, version: &str) -> bool {
    match (Constraints::parse(constraint), Version::parse(version)) {
        (Ok(constraints), Ok(version)) => constraints.check(&version),
        _ => false,
    }
}

/// Whether `text` is a version Masterminds' `NewVersion` accepts (Helm's check of `Chart.yaml` `version`).
pub(crate) fn is_valid_version(text: &str) -> bool {
    Version::parse(text).is_ok()
}

fn semver(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    let version = Version::parse(&text).map_err(FuncError::new)?;
    Ok(version_value(version, true))
}

fn semver_compare(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let constraint = param_str(&args[0])?;
    let version = param_str(&args[1])?;
    let constraints = Constraints::parse(&constraint).map_err(FuncError::new)?;
    let version = Version::parse(&version).map_err(FuncError::new)?;
    Ok(Value::Bool(constraints.check(&version)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::NoRuntime;

    fn compare(constraint: &str, version: &str) -> Result<bool, String> {
        match semver_compare(&mut NoRuntime, &[Value::from(constraint), Value::from(version)]) {
            Ok(Value::Bool(result)) => Ok(result),
            Ok(other) => Err(format!("{other:?}")),
            Err(error) => Err(error.message),
        }
    }

    #[test]
    fn chart_idioms_match_helm() {
        // Expected values printed by Helm v4.2.3.
        assert_eq!(compare(">=1.21-0", "v1.36.0"), Ok(true));
        assert_eq!(compare(">=1.21-0", "v1.22.0-gke.100"), Ok(true));
        assert_eq!(compare(">=1.21", "v1.22.0-gke.100"), Ok(false));
        assert_eq!(compare(">1.0.0-0 <2.0.0", "1.5.0-beta"), Ok(true));
        assert_eq!(compare("^1.2", "1.3.0"), Ok(true));
        assert_eq!(compare(">= 1.0, < 2 || 3.x", "3.1.2"), Ok(true));
        assert_eq!(compare(">=1.21-0", "v1.21.0-eks-1"), Ok(true));
        assert_eq!(compare("<1.25.0-0", "1.24.9-gke.3"), Ok(true));
    }

    #[test]
    fn corpus_idioms_against_kube_versions_match_helm() {
        // Rows: constraint, then Helm's verdict (T/F) for each version below (Helm v4.2.3 probe).
        let versions = [
            "v1.36.0",
            "1.36.0",
            "v1.20.15-gke.100",
            "v1.14.0-alpha.1",
            "9.9.9-10",
            "v1.36.0+k3s1",
        ];
        let rows = [
            (">=1.14.0-0", "TTTTTT"),
            ("<9.9.9-9", "TTTTFT"),
            ("> 1.15.0-0", "TTTFTT"),
            (">= 1.18-0", "TTTFTT"),
            ("<1.21-0", "FFTTFF"),
            ("<1.14-0", "FFFFFF"),
            (">=1.10.0-0", "TTTTTT"),
            ("<1.14.0-0", "FFFFFF"),
            (">=1.21-0", "TTFFTT"),
            ("^1.36", "TTFFFT"),
            ("~1.36.0", "TTFFFT"),
            ("1.36.x", "TTFFFT"),
            (">=1.36.1", "FFFFFF"),
            ("<=1.36", "TTFFFT"),
            ("!=1.36.0", "FFFFFF"),
            ("1.20 - 1.36", "TTFFFT"),
        ];
        for (constraint, verdicts) in rows {
            for (version, verdict) in versions.iter().zip(verdicts.chars()) {
                assert_eq!(
                    compare(constraint, version),
                    Ok(verdict == 'T'),
                    "{constraint} {version}"
                );
            }
        }
    }

    #[test]
    fn constraint_table_matches_helm() {
        // Each row printed by Helm v4.2.3.
        let cases = [
            ("1.2.3 - 1.4", "1.3.9", true),
            ("1.2 - 1.4", "1.4.9", true),
            ("1.2 - 1.4.0", "1.4.1", false),
            ("~1.2.3", "1.2.9", true),
            ("~1.2.3", "1.3.0", false),
            ("1.2.x", "1.2.7", true),
            ("*", "1.0.0-alpha", false),
            (">1.x", "1.5.0", false),
            ("<=1.2", "1.2.9", true),
            ("!=1.2.x", "1.3.0", true),
            ("^0.2.3", "0.2.9", true),
            ("^0.0.3", "0.0.4", false),
            (">=1.2.3 <1.3, !=1.2.5", "1.2.5", false),
            ("=v1.2.3+meta", "1.2.3", true),
            ("1.x || >=2.5.0-0", "2.6.0-rc.1", true),
            ("  >=1.2  ", "1.2.3", true),
            (">=1.2 <=1.2.0", "1.2.0", true),
            ("^1.2.3-alpha", "1.2.3-beta", true),
            ("~>2", "2.9", true),
            ("=>1,=<2", "2.0.0", true),
            ("1.2.3-0 - 2", "2.1.0-1", true),
            ("1.2", "1.2.5", true),
            ("v1.2.3", "1.2.3", true),
            ("~0", "0.9.9", true),
        ];
        for (constraint, version, expected) in cases {
            assert_eq!(
                compare(constraint, version),
                Ok(expected),
                "{constraint} {version}"
            );
        }
    }

    #[test]
    fn errors_match_helm() {
        assert_eq!(compare("foo", "1.0"), Err("improper constraint: \"foo\"".into()));
        assert_eq!(compare("1.0", "foo"), Err(INVALID.into()));
        assert_eq!(compare("", "1.0.0"), Err("improper constraint: \"\"".into()));
        assert_eq!(
            compare(">= 1.2 ||", "1.2.3"),
            Err("improper constraint: \"\"".into())
        );
        assert_eq!(
            compare("1.2 - ", "1.2.3"),
            Err("improper constraint: \"1.2 - \"".into())
        );
        assert_eq!(compare("1|2", "1.2.3"), Err("constraint parser error".into()));
        assert_eq!(compare("1x", "1.2.3"), Err("constraint parser error".into()));
        assert_eq!(Version::parse("1.2.3.4"), Err(INVALID.into()));
        assert_eq!(Version::parse(""), Err(INVALID.into()));
        assert_eq!(Version::parse(" 1.2.3"), Err(INVALID.into()));
        assert_eq!(Version::parse("1.2.3-a..b"), Err(INVALID.into()));
        assert_eq!(Version::parse("1.2.3+"), Err(INVALID.into()));
        assert_eq!(Version::parse("1.2.3-01"), Err(STARTS_ZERO.into()));
        assert_eq!(
            Version::parse("99999999999999999999.1"),
            Err("error parsing version segment: strconv.ParseUint: parsing \"99999999999999999999\": value out of range".into())
        );
        assert!(Version::parse("01.2.3").is_ok_and(|v| v.major == 1));
    }

    #[test]
    fn version_objects_match_helm() {
        let Ok(Value::Object(v)) = semver(&mut NoRuntime, &[Value::from("v1.2.3-rc.1+b5")]) else {
            panic!("semver failed");
        };
        let field = |name: &str| {
            v.field(name)
                .map(|value| crate::gotemplate::fmt::sprint_value(&value))
        };
        assert_eq!(v.type_name(), "*semver.Version");
        assert_eq!(field("Major").as_deref(), Some("1"));
        assert_eq!(field("Minor").as_deref(), Some("2"));
        assert_eq!(field("Patch").as_deref(), Some("3"));
        assert_eq!(field("Prerelease").as_deref(), Some("rc.1"));
        assert_eq!(field("Metadata").as_deref(), Some("b5"));
        assert_eq!(field("Original").as_deref(), Some("v1.2.3-rc.1+b5"));
        assert_eq!(field("String").as_deref(), Some("1.2.3-rc.1+b5"));
        assert_eq!(field("IncPatch").as_deref(), Some("1.2.3"));
        assert_eq!(v.display(), "1.2.3-rc.1+b5");
        let Some(Value::Object(next)) = v.field("IncMinor") else {
            panic!("IncMinor")
        };
        assert_eq!(next.type_name(), "semver.Version");
        assert!(next.field("Original").is_none());
        let Ok(two) = semver(&mut NoRuntime, &[Value::from("2.0.0")]) else {
            panic!("semver")
        };
        assert!(matches!(v.call("LessThan", &[two]), Some(Ok(Value::Bool(true)))));
        assert_eq!(
            v.call("Compare", &[Value::from("1.0.0")]).and_then(Result::err),
            Some("can't handle \"1.0.0\" for arg of type *semver.Version".into())
        );
        assert_eq!(
            v.call("Compare", &[Value::Object(next)]).and_then(Result::err),
            Some("wrong type for value; expected *semver.Version; got semver.Version".into())
        );
        assert_eq!(
            v.call("SetPrerelease", &[Value::from("01")])
                .and_then(Result::err),
            Some(STARTS_ZERO.into())
        );
    }
}
