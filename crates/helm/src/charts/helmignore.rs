//! `.helmignore` as Helm's `pkg/ignore` applies it when a chart is loaded from a directory: one pattern a line
//! (`#` comments), Go's `filepath.Match` syntax, `!` negation (Helm's quirk: a negated rule ignores every path it
//! does *not* match), a trailing `/` for directories only, a leading `/` or an inner `/` to match the whole path,
//! otherwise the base name; `**` is refused. The default rule `templates/.?*` is always added.

use super::ChartError;

struct Pattern {
    rule: String,
    negate: bool,
    must_dir: bool,
    whole_path: bool,
}

/// Parsed `.helmignore` rules.
pub(crate) struct Rules {
    patterns: Vec<Pattern>,
}

impl Rules {
    /// Parses `.helmignore` text and adds Helm's default rule.
    pub(crate) fn parse(text: &str) -> Result<Rules, ChartError> {
        let mut rules = Rules { patterns: Vec::new() };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for line in text.lines() {
            rules.add(line)?;
        }
        rules.add("templates/.?*")?;
        Ok(rules)
    }

    fn add(&mut self, line: &str) -> Result<(), ChartError> {
        let rule = line.trim();
        if rule.is_empty() || rule.starts_with('#') {
            return Ok(());
        }
        if rule.contains("**") {
            return Err(ChartError::Load(
                "double-star (**) syntax is not supported".into(),
            ));
        }
        if go_match(rule, "abc").is_err() {
            return Err(ChartError::Load("syntax error in pattern".into()));
        }
        let mut rule = rule;
        let negate = rule.starts_with('!');
        if negate {
            rule = &rule[1..];
        }
        let must_dir = rule.ends_with('/');
        if must_dir {
            rule = &rule[..rule.len() - 1];
        }
        let (rule, whole_path) = match rule.strip_prefix('/') {
            Some(rest) => (rest, true),
            None => (rule, rule.contains('/')),
        };
        self.patterns.push(Pattern {
            rule: rule.to_string(),
            negate,
            must_dir,
            whole_path,
        });
        Ok(())
    }

    /// Whether `path` (relative to the chart, `/`-separated) is ignored; `is_dir` for directories.
    pub(crate) fn ignore(&self, path: &str, is_dir: bool) -> bool {
        if path.is_empty() || path == "." || path == "./" {
            return false;
        }
        for pattern in &self.patterns {
            let subject = if pattern.whole_path {
                path
            } else {
                path.rsplit('/').next().unwrap_or(path)
            };
            let matched = go_match(&pattern.rule, subject).unwrap_or(false);
            if pattern.negate {
                if pattern.must_dir && !is_dir {
                    return true;
                }
                if !matched {
                    return true;
                }
                continue;
            }
            if pattern.must_dir && !is_dir {
                continue;
            }
            if matched {
                return true;
            }
        }
        false
    }

    /// Whether a file is skipped by the directory walk: it, or any of its parent directories, is ignored.
    pub(crate) fn ignore_file(&self, path: &str) -> bool {
        let mut prefix = String::new();
        let parts: Vec<&str> = path.split('/').collect();
        for (index, part) in parts.iter().enumerate() {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            let is_dir = index + 1 < parts.len();
            if self.ignore(&prefix, is_dir) {
                return true;
            }
        }
        false
    }
}

/// Go's `path/filepath.Match` (with `/` as the separator): `Err` for a malformed pattern.
pub(crate) fn go_match(pattern: &str, name: &str) -> Result<bool, ()> {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let mut budget = 100_000usize;
    match_from(&pattern, &name, &mut budget)
}

fn match_from(pattern: &[char], name: &[char], budget: &mut usize) -> Result<bool, ()> {
    if *budget == 0 {
        return Ok(false);
    }
    *budget -= 1;
    let Some(&first) = pattern.first() else {
        return Ok(name.is_empty());
    };
    match first {
        '*' => {
            let rest = &pattern[1..];
            // Validate the rest of the pattern even if nothing can match.
            let mut index = 0;
            loop {
                if match_from(rest, &name[index..], budget)? {
                    return Ok(true);
                }
                if index == name.len() || name[index] == '/' {
                    return Ok(false);
                }
                index += 1;
            }
        }
        '?' => {
            if name.is_empty() || name[0] == '/' {
                check_rest(&pattern[1..])?;
                return Ok(false);
            }
            match_from(&pattern[1..], &name[1..], budget)
        }
        '[' => {
            let (matched, consumed) = match_class(&pattern[1..], name.first().copied())?;
            if name.is_empty() || !matched || name[0] == '/' {
                check_rest(&pattern[1 + consumed..])?;
                return Ok(false);
            }
            match_from(&pattern[1 + consumed..], &name[1..], budget)
        }
        '\\' => {
            let Some(&escaped) = pattern.get(1) else {
                return Err(());
            };
            if name.first() == Some(&escaped) {
                match_from(&pattern[2..], &name[1..], budget)
            } else {
                check_rest(&pattern[2..])?;
                Ok(false)
            }
        }
        literal => {
            if name.first() == Some(&literal) {
                match_from(&pattern[1..], &name[1..], budget)
            } else {
                check_rest(&pattern[1..])?;
                Ok(false)
            }
        }
    }
}

/// Checks the syntax of the rest of a pattern (Go reports a bad pattern even after a mismatch).
fn check_rest(pattern: &[char]) -> Result<(), ()> {
    let mut index = 0;
    while index < pattern.len() {
        match pattern[index] {
            '[' => {
                let (_, consumed) = match_class(&pattern[index + 1..], None)?;
                index += 1 + consumed;
            }
            '\\' => {
                if index + 1 >= pattern.len() {
                    return Err(());
                }
                index += 2;
            }
            _ => index += 1,
        }
    }
    Ok(())
}

/// Matches a character class (after the `[`); returns whether `c` matched and how many pattern chars were used.
fn match_class(pattern: &[char], c: Option<char>) -> Result<(bool, usize), ()> {
    let mut index = 0;
    let negated = pattern.first() == Some(&'^');
    if negated {
        index += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let Some(&next) = pattern.get(index) else {
            return Err(());
        };
        if next == ']' && !first {
            index += 1;
            break;
        }
        first = false;
        let read = |index: &mut usize| -> Result<char, ()> {
            let ch = *pattern.get(*index).ok_or(())?;
            if ch == '\\' {
                let escaped = *pattern.get(*index + 1).ok_or(())?;
                *index += 2;
                return Ok(escaped);
            }
            if ch == '-' || ch == ']' {
                return Err(());
            }
            *index += 1;
            Ok(ch)
        };
        let low = read(&mut index)?;
        let mut high = low;
        if pattern.get(index) == Some(&'-') {
            index += 1;
            high = read(&mut index)?;
        }
        if let Some(c) = c
            && low <= c
            && c <= high
        {
            matched = true;
        }
    }
    Ok((matched != negated, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_filepath_match() {
        assert_eq!(go_match("*.bak", "x.bak"), Ok(true));
        assert_eq!(go_match("*", "a/b"), Ok(false));
        assert_eq!(go_match("a/*", "a/b"), Ok(true));
        assert_eq!(go_match("[a-c]x", "bx"), Ok(true));
        assert_eq!(go_match("[^a-c]x", "bx"), Ok(false));
        assert_eq!(go_match("[", "a"), Err(()));
        assert_eq!(go_match("a?c", "abc"), Ok(true));
    }

    #[test]
    fn helm_ignore_rules() {
        let rules = Rules::parse("# comment\nignored/\n*.bak\n/top.txt\n").unwrap();
        assert!(rules.ignore_file("ignored/x"));
        assert!(rules.ignore_file("x.bak"));
        assert!(rules.ignore_file("sub/y.bak"));
        assert!(rules.ignore_file("top.txt"));
        assert!(!rules.ignore_file("sub/top.txt"));
        assert!(rules.ignore_file("templates/.hidden"));
        assert!(!rules.ignore_file("templates/a.yaml"));
        assert!(!rules.ignore_file(".helmignore"));
        assert!(Rules::parse("a/**/b").is_err());
        // Helm's quirk: a negated rule ignores whatever it does not match.
        let negated = Rules::parse("!keep.txt").unwrap();
        assert!(negated.ignore_file("other.txt"));
    }
}
