//! Sprig's regular expressions (`regexMatch`, `regexFind`, `regexFindAll`, `regexReplaceAll`,
//! `regexReplaceAllLiteral`, `regexSplit`, `regexQuoteMeta`, and their `must…` variants), with Go's RE2 semantics.
//!
//! Patterns are translated from Go's syntax to the `regex` crate's before compiling: Go's `\d`, `\w`, `\s`, `\b`
//! are ASCII-only (the crate's are Unicode), `\Q…\E` quotes, and a `[` inside a class is a literal. The iteration
//! over matches (`FindAll`, `ReplaceAll`, `Split`) is Go's own loop — an empty match right after a previous match
//! is skipped — and `$1`, `${name}` in replacements expand as Go's `Regexp.Expand` does (`$1a` names group `1a`).
//! Invalid patterns fail with Go's message; the plain variants as Go's `MustCompile` panic words it
//! (``regexp: Compile(`(`): error parsing regexp: …``), the `must…` variants as the returned error.

use regex::Regex;

use crate::gotemplate::Value;
use crate::gotemplate::funcs::{
    Arity, FuncError, FuncMap, check_list_len, check_text_len, param_int, param_str,
};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("regexMatch", Arity::Exact(2), |_, args| {
        let (pattern, text) = (str_arg(args, 0)?, str_arg(args, 1)?);
        Ok(Value::Bool(
            compile(&pattern).map(|re| re.is_match(&text)).unwrap_or(false),
        ))
    });
    map.add("mustRegexMatch", Arity::Exact(2), |_, args| {
        let (pattern, text) = (str_arg(args, 0)?, str_arg(args, 1)?);
        Ok(Value::Bool(compile_must(&pattern)?.is_match(&text)))
    });
    map.add("regexFindAll", Arity::Exact(3), |_, args| {
        find_all(args, compile_panic)
    });
    map.add("mustRegexFindAll", Arity::Exact(3), |_, args| {
        find_all(args, compile_must)
    });
    map.add("regexFind", Arity::Exact(2), |_, args| find(args, compile_panic));
    map.add("mustRegexFind", Arity::Exact(2), |_, args| {
        find(args, compile_must)
    });
    map.add("regexReplaceAll", Arity::Exact(3), |_, args| {
        replace_all(args, compile_panic, true)
    });
    map.add("mustRegexReplaceAll", Arity::Exact(3), |_, args| {
        replace_all(args, compile_must, true)
    });
    map.add("regexReplaceAllLiteral", Arity::Exact(3), |_, args| {
        replace_all(args, compile_panic, false)
    });
    map.add("mustRegexReplaceAllLiteral", Arity::Exact(3), |_, args| {
        replace_all(args, compile_must, false)
    });
    map.add("regexSplit", Arity::Exact(3), |_, args| {
        split(args, compile_panic)
    });
    map.add("mustRegexSplit", Arity::Exact(3), |_, args| {
        split(args, compile_must)
    });
    map.add("regexQuoteMeta", Arity::Exact(1), |_, args| {
        Ok(Value::from(quote_meta(&str_arg(args, 0)?)))
    });
}

fn str_arg(args: &[Value], index: usize) -> Result<String, FuncError> {
    param_str(args.get(index).unwrap_or(&Value::Nil))
}

type Compiler = fn(&str) -> Result<Compiled, FuncError>;

/// A compiled pattern with Go's group names.
pub(crate) struct Compiled {
    regex: Regex,
}

impl Compiled {
    fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

/// Go's `regexp.Compile` message: ``error parsing regexp: CODE: `EXPR` ``.
fn compile(pattern: &str) -> Result<Compiled, String> {
    thread_local! {
        // Charts call the same few patterns in loops; compiled regexes are cheap to clone.
        static CACHE: std::cell::RefCell<std::collections::HashMap<String, Result<Regex, String>>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    const CACHE_ENTRIES: usize = 256;
    if let Some(cached) = CACHE.with(|cache| cache.borrow().get(pattern).cloned()) {
        return cached.map(|regex| Compiled { regex });
    }
    let result = compile_uncached(pattern).map(|compiled| compiled.regex);
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(pattern.to_string(), result.clone());
    });
    result.map(|regex| Compiled { regex })
}

fn compile_uncached(pattern: &str) -> Result<Compiled, String> {
    let translated = translate(pattern)?;
    match Regex::new(&translated) {
        Ok(regex) => Ok(Compiled { regex }),
        Err(regex::Error::CompiledTooBig(_)) => Err(format!(
            "error parsing regexp: expression too large: {}",
            go_backquote(pattern)
        )),
        Err(error) => {
            let detail = error.to_string();
            let last = detail
                .lines()
                .rev()
                .find(|line| line.starts_with("error: "))
                .unwrap_or("invalid syntax");
            Err(format!(
                "error parsing regexp: {}: {}",
                last.trim_start_matches("error: "),
                go_backquote(pattern)
            ))
        }
    }
}

/// The `must…` variants: the compile error returned.
fn compile_must(pattern: &str) -> Result<Compiled, FuncError> {
    compile(pattern).map_err(FuncError::new)
}

/// The plain variants: `regexp.MustCompile`'s panic.
fn compile_panic(pattern: &str) -> Result<Compiled, FuncError> {
    compile(pattern)
        .map_err(|error| FuncError::new(format!("regexp: Compile({}): {error}", go_backquote(pattern))))
}

/// Go's `quote` in regexp errors: backquoted when it can be, else a Go string literal.
fn go_backquote(text: &str) -> String {
    let can_backquote = text
        .chars()
        .all(|ch| ch == '\t' || !(ch.is_control() || ch == '`' || ch == '\u{feff}'));
    if can_backquote {
        format!("`{text}`")
    } else {
        super::strings::go_quote(text)
    }
}

/// Go's error for a bad pattern, when the translation finds it.
fn syntax_error(code: &str, expr: &str) -> String {
    format!("error parsing regexp: {code}: {}", go_backquote(expr))
}

/// Translates Go RE2 syntax into the `regex` crate's (see the module documentation); finds the common errors
/// with Go's words.
fn translate(pattern: &str) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut index = 0;
    let mut depth = 0usize;
    // Start (char index) of the open class and whether its next char is the first of the class.
    let mut class_start: Option<usize> = None;
    let mut class_first = false;
    // The previous token, when it was a repetition operator: where it starts and whether its lazy `?` was read.
    let mut last_repeat: Option<(usize, bool)> = None;
    while index < chars.len() {
        let ch = chars[index];
        let is_repeat = class_start.is_none()
            && (matches!(ch, '*' | '+' | '?') || (ch == '{' && repeat_count(&chars[index..]).is_some()));
        if !is_repeat {
            last_repeat = None;
        }
        if ch == '\\' {
            let Some(&escaped) = chars.get(index + 1) else {
                return Err(syntax_error("trailing backslash at end of expression", ""));
            };
            index += 2;
            class_first = false;
            if class_start.is_none() && escaped == 'Q' {
                let rest: String = chars[index..].iter().collect();
                let (literal, after) = match rest.find("\\E") {
                    Some(end) => (rest[..end].to_string(), end + 2),
                    None => (rest.clone(), rest.len()),
                };
                out.push_str(&format!("(?:{})", regex::escape(&literal)));
                index += rest[..after].chars().count();
                continue;
            }
            let inside = class_start.is_some();
            let replacement = match (escaped, inside) {
                ('d', false) => "[0-9]",
                ('D', false) => "[^0-9]",
                ('w', false) => "[0-9A-Za-z_]",
                ('W', false) => "[^0-9A-Za-z_]",
                ('s', false) => "[\\t\\n\\f\\r ]",
                ('S', false) => "[^\\t\\n\\f\\r ]",
                ('d', true) => "0-9",
                ('w', true) => "0-9A-Za-z_",
                ('s', true) => "\\t\\n\\f\\r ",
                ('D', true) => "[^0-9]",
                ('W', true) => "[^0-9A-Za-z_]",
                ('S', true) => "[^\\t\\n\\f\\r ]",
                ('b', false) => "(?-u:\\b)",
                ('B', false) => "(?-u:\\B)",
                _ => {
                    if ('0'..='7').contains(&escaped) {
                        // Go's octal escape: `\0` plus up to two digits, or `\1`-`\7` plus one or two digits (a
                        // lone `\1` would be a backreference, which RE2 refuses).
                        let mut digits = escaped.to_string();
                        while digits.len() < 3 && chars.get(index).is_some_and(|ch| ('0'..='7').contains(ch))
                        {
                            digits.push(chars[index]);
                            index += 1;
                        }
                        if escaped != '0' && digits.len() == 1 {
                            return Err(syntax_error("invalid escape sequence", &format!("\\{escaped}")));
                        }
                        let code = u32::from_str_radix(&digits, 8).unwrap_or(0);
                        out.push_str(&format!("\\x{{{code:x}}}"));
                        continue;
                    }
                    let valid = !escaped.is_ascii_alphanumeric() || "aAbBdDfnpPrsStvwWxz".contains(escaped);
                    if !valid {
                        return Err(syntax_error("invalid escape sequence", &format!("\\{escaped}")));
                    }
                    out.push('\\');
                    out.push(escaped);
                    // `\p{Greek}`, `\x{41}`: the braces belong to the escape.
                    if matches!(escaped, 'p' | 'P' | 'x') && chars.get(index) == Some(&'{') {
                        while let Some(&next) = chars.get(index) {
                            out.push(next);
                            index += 1;
                            if next == '}' {
                                break;
                            }
                        }
                    }
                    continue;
                }
            };
            out.push_str(replacement);
            continue;
        }
        if let Some(start) = class_start {
            match ch {
                ']' if !class_first => {
                    class_start = None;
                    out.push(']');
                }
                '[' if chars.get(index + 1) == Some(&':') => {
                    // A POSIX class `[:alpha:]`, copied whole.
                    let rest: String = chars[index..].iter().collect();
                    match rest.find(":]") {
                        Some(end) => {
                            out.push_str(&rest[..end + 2]);
                            index += rest[..end + 2].chars().count();
                            class_first = false;
                            continue;
                        }
                        None => out.push_str("\\["),
                    }
                }
                '[' | '&' | '~' => {
                    out.push('\\');
                    out.push(ch);
                }
                '-' if chars.get(index + 1) == Some(&'-') => out.push_str("\\-"),
                '-' if !class_first
                    && index >= 1
                    && chars[index - 1] != '\\'
                    && chars[index - 1] != '['
                    && chars
                        .get(index + 1)
                        .is_some_and(|next| *next != ']' && *next != '\\')
                    && chars.get(index + 1).is_some_and(|next| *next < chars[index - 1]) =>
                {
                    let range = format!("{}-{}", chars[index - 1], chars[index + 1]);
                    return Err(syntax_error("invalid character class range", &range));
                }
                _ => out.push(ch),
            }
            class_first = false;
            index += 1;
            let _ = start;
            continue;
        }
        match ch {
            '[' => {
                class_start = Some(index);
                out.push('[');
                index += 1;
                if chars.get(index) == Some(&'^') {
                    out.push('^');
                    index += 1;
                }
                class_first = true;
                continue;
            }
            '(' => {
                depth += 1;
                if chars.get(index + 1) == Some(&'?') {
                    check_group_flags(&chars[index..])?;
                }
            }
            '{' => match repeat_count(&chars[index..]) {
                Some((text, min, max)) => {
                    let length = text.chars().count();
                    if let Some((start, _)) = last_repeat {
                        let nested: String = chars[start..index + length].iter().collect();
                        return Err(syntax_error("invalid nested repetition operator", &nested));
                    }
                    let prev = index.checked_sub(1).map(|at| chars[at]);
                    if matches!(prev, None | Some('(' | '|')) {
                        return Err(syntax_error("missing argument to repetition operator", &text));
                    }
                    if min > 1000 || max.is_some_and(|max| max > 1000 || max < min) {
                        return Err(syntax_error("invalid repeat count", &text));
                    }
                    out.push_str(&text);
                    last_repeat = Some((index, false));
                    index += length;
                    continue;
                }
                None => {
                    // Not a repetition: Go reads a literal brace.
                    out.push_str("\\{");
                    index += 1;
                    continue;
                }
            },
            ')' => {
                if depth == 0 {
                    return Err(syntax_error("unexpected )", pattern));
                }
                depth -= 1;
            }
            '*' | '+' | '?' => {
                let prev = index.checked_sub(1).map(|at| chars[at]);
                let escaped_prev = index >= 2 && chars[index - 2] == '\\';
                let group_flags = ch == '?' && prev == Some('(');
                match last_repeat {
                    Some((start, false)) if ch == '?' => {
                        // The lazy marker of the previous operator.
                        last_repeat = Some((start, true));
                        out.push(ch);
                        index += 1;
                        continue;
                    }
                    Some((start, _)) => {
                        let nested: String = chars[start..=index].iter().collect();
                        return Err(syntax_error("invalid nested repetition operator", &nested));
                    }
                    None => {}
                }
                if !escaped_prev && !group_flags && matches!(prev, None | Some('(' | '|')) {
                    return Err(syntax_error(
                        "missing argument to repetition operator",
                        &ch.to_string(),
                    ));
                }
                if !group_flags {
                    last_repeat = Some((index, false));
                }
            }
            _ => {}
        }
        out.push(ch);
        index += 1;
    }
    if let Some(start) = class_start {
        let rest: String = chars[start..].iter().collect();
        return Err(syntax_error("missing closing ]", &rest));
    }
    if depth > 0 {
        return Err(syntax_error("missing closing )", pattern));
    }
    Ok(out)
}

/// Go accepts `(?P<name>`, `(?<name>` and the flags `i`, `m`, `s`, `U` (with `-`) before `)` or `:`.
fn check_group_flags(group: &[char]) -> Result<(), String> {
    // `group` starts with "(?".
    let text = |end: usize| group[..end.min(group.len())].iter().collect::<String>();
    match group.get(2) {
        Some('P') if group.get(3) == Some(&'<') => return Ok(()),
        Some('P') => return Err(syntax_error("invalid or unsupported Perl syntax", &text(3))),
        Some('<') => return Ok(()),
        _ => {}
    }
    let mut saw_flag = false;
    let mut saw_minus = false;
    for (at, ch) in group.iter().enumerate().skip(2) {
        match ch {
            'i' | 'm' | 's' | 'U' => saw_flag = true,
            '-' if !saw_minus => {
                saw_minus = true;
                saw_flag = false;
            }
            ':' | ')' if saw_flag || (!saw_minus && *ch == ':') => return Ok(()),
            _ => return Err(syntax_error("invalid or unsupported Perl syntax", &text(at + 1))),
        }
    }
    Err(syntax_error("missing closing )", &text(group.len())))
}

/// A Go repetition `{n}`, `{n,}` or `{n,m}` at the start of `text`: its text and bounds; `None` when the brace is
/// a literal.
fn repeat_count(text: &[char]) -> Option<(String, u64, Option<u64>)> {
    let close = text.iter().position(|ch| *ch == '}')?;
    let inner: String = text[1..close].iter().collect();
    let (min, max) = match inner.split_once(',') {
        Some((min, max)) => (min, Some(max)),
        None => (inner.as_str(), None),
    };
    let number = |digits: &str| -> Option<u64> {
        if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        Some(digits.parse::<u64>().unwrap_or(u64::MAX))
    };
    let min = number(min)?;
    let max = match max {
        None => Some(min),
        Some("") => None,
        Some(max) => Some(number(max)?),
    };
    Some((text[..=close].iter().collect(), min, max))
}

/// Go's `regexp.QuoteMeta`.
fn quote_meta(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for ch in text.chars() {
        if "\\.+*?()|[]{}^$".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Go's match loop (`allMatches`): up to `limit` matches (negative: all), skipping an empty match that abuts the
/// previous match.
fn all_matches(re: &Regex, text: &str, limit: i64) -> Result<Vec<(usize, usize)>, FuncError> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let mut prev_end: Option<usize> = None;
    while (limit < 0 || (out.len() as i64) < limit) && pos <= text.len() {
        let Some(found) = re.find_at(text, pos) else {
            break;
        };
        let mut accept = true;
        if found.end() == pos {
            if Some(found.start()) == prev_end {
                accept = false;
            }
            pos += text[pos..].chars().next().map_or(1, char::len_utf8);
        } else {
            pos = found.end();
        }
        prev_end = Some(found.end());
        if accept {
            check_list_len("regexFindAll", out.len() as u128 + 1)?;
            out.push((found.start(), found.end()));
        }
    }
    Ok(out)
}

fn find_all(args: &[Value], compiler: Compiler) -> Result<Value, FuncError> {
    let (pattern, text) = (str_arg(args, 0)?, str_arg(args, 1)?);
    let limit = param_int(args.get(2).unwrap_or(&Value::Nil))?;
    let re = compiler(&pattern)?;
    let found = all_matches(&re.regex, &text, limit)?;
    Ok(Value::list(
        found
            .iter()
            .map(|&(start, stop)| Value::from(&text[start..stop]))
            .collect(),
    ))
}

fn find(args: &[Value], compiler: Compiler) -> Result<Value, FuncError> {
    let (pattern, text) = (str_arg(args, 0)?, str_arg(args, 1)?);
    let re = compiler(&pattern)?;
    Ok(Value::from(re.regex.find(&text).map_or("", |m| m.as_str())))
}

/// Go's `extract`: a group name after `$` (braced or not); `None` when malformed.
fn extract(template: &str) -> Option<(&str, Option<usize>, &str)> {
    let (braced, body) = match template.strip_prefix('{') {
        Some(rest) => (true, rest),
        None => (false, template),
    };
    let end = body
        .char_indices()
        .find(|(_, ch)| !(ch.is_alphanumeric() || *ch == '_'))
        .map_or(body.len(), |(at, _)| at);
    if end == 0 {
        return None;
    }
    let name = &body[..end];
    let mut rest = &body[end..];
    if braced {
        rest = rest.strip_prefix('}')?;
    }
    let number =
        if name.bytes().all(|byte| byte.is_ascii_digit()) && !(name.starts_with('0') && name.len() > 1) {
            name.parse::<usize>().ok().filter(|number| *number < 100_000_000)
        } else {
            None
        };
    Some((name, number, rest))
}

/// Go's `Regexp.Expand` of `template` with one match.
fn expand(re: &Regex, caps: &regex::Captures<'_>, mut template: &str, out: &mut String) {
    while let Some(at) = template.find('$') {
        out.push_str(&template[..at]);
        template = &template[at + 1..];
        if let Some(rest) = template.strip_prefix('$') {
            out.push('$');
            template = rest;
            continue;
        }
        let Some((name, number, rest)) = extract(template) else {
            out.push('$');
            continue;
        };
        template = rest;
        let group = match number {
            Some(number) => caps.get(number),
            None => re
                .capture_names()
                .position(|candidate| candidate == Some(name))
                .and_then(|index| caps.get(index)),
        };
        if let Some(group) = group {
            out.push_str(group.as_str());
        }
    }
    out.push_str(template);
}

/// Go's `ReplaceAllString` / `ReplaceAllLiteralString`.
fn replace_all(args: &[Value], compiler: Compiler, expand_groups: bool) -> Result<Value, FuncError> {
    let (pattern, text, replacement) = (str_arg(args, 0)?, str_arg(args, 1)?, str_arg(args, 2)?);
    let re = compiler(&pattern)?.regex;
    let mut out = String::with_capacity(text.len());
    let mut last_end = 0usize;
    let mut search = 0usize;
    while search <= text.len() {
        let Some(caps) = re.captures_at(&text, search) else {
            break;
        };
        let Some(whole) = caps.get(0) else { break };
        out.push_str(&text[last_end..whole.start()]);
        if whole.end() > last_end || whole.start() == 0 {
            if expand_groups {
                expand(&re, &caps, &replacement, &mut out);
            } else {
                out.push_str(&replacement);
            }
        }
        check_text_len(
            "regexReplaceAll",
            out.len() as u128 + (text.len() - whole.end()) as u128,
        )?;
        last_end = whole.end();
        let width = text[search..].chars().next().map_or(1, char::len_utf8);
        if search + width > whole.end() {
            search += width;
        } else if search + 1 > whole.end() {
            search += 1;
        } else {
            search = whole.end();
        }
    }
    out.push_str(&text[last_end.min(text.len())..]);
    Ok(Value::from(out))
}

/// Go's `Regexp.Split`.
fn split(args: &[Value], compiler: Compiler) -> Result<Value, FuncError> {
    let (pattern, text) = (str_arg(args, 0)?, str_arg(args, 1)?);
    let limit = param_int(args.get(2).unwrap_or(&Value::Nil))?;
    let re = compiler(&pattern)?.regex;
    if limit == 0 {
        return Ok(Value::list(Vec::new()));
    }
    if !pattern.is_empty() && text.is_empty() {
        return Ok(Value::list(vec![Value::from("")]));
    }
    let matches = all_matches(&re, &text, limit)?;
    let mut parts: Vec<Value> = Vec::new();
    let (mut begin, mut end) = (0usize, 0usize);
    for &(start, stop) in &matches {
        if limit > 0 && parts.len() as i64 == limit - 1 {
            break;
        }
        end = start;
        if stop != 0 {
            parts.push(Value::from(&text[begin..end]));
        }
        begin = stop;
    }
    if end != text.len() {
        parts.push(Value::from(&text[begin..]));
    }
    Ok(Value::list(parts))
}

#[cfg(test)]
mod tests {
    use crate::gotemplate::Value;
    use crate::sprig::conv::test_support::*;

    #[test]
    fn matching_finding_replacing_splitting() {
        let t = Value::Bool(true);
        let cases: Vec<(&str, Vec<Value>, Value)> = vec![
            ("regexMatch", vec![s("^a.c$"), s("abc")], t.clone()),
            ("regexMatch", vec![s("b"), s("abc")], t.clone()),
            ("regexMatch", vec![s("("), s("abc")], Value::Bool(false)),
            ("regexMatch", vec![s("(?i)ABC"), s("xabc")], t.clone()),
            ("regexMatch", vec![s("^\\w+$"), s("héllo")], Value::Bool(false)),
            ("regexMatch", vec![s("^\\d$"), s("٣")], Value::Bool(false)),
            ("regexFind", vec![s("[0-9]+"), s("a12b345")], s("12")),
            ("regexFind", vec![s("\\p{Greek}"), s("aλb")], s("λ")),
            (
                "regexFindAll",
                vec![s("[0-9]+"), s("a12b345c6"), i(-1)],
                l(vec![s("12"), s("345"), s("6")]),
            ),
            (
                "regexFindAll",
                vec![s("[0-9]+"), s("a12b345c6"), i(2)],
                l(vec![s("12"), s("345")]),
            ),
            ("regexFindAll", vec![s("[0-9]+"), s("a12b345c6"), i(0)], l(vec![])),
            ("regexFindAll", vec![s("x"), s("abc"), i(-1)], l(vec![])),
            (
                "regexFindAll",
                vec![s("a*"), s("baaab"), i(-1)],
                l(vec![s(""), s("aaa"), s("")]),
            ),
            (
                "regexReplaceAll",
                vec![s("a(x*)b"), s("-ab-axxb-"), s("${1}W")],
                s("-W-xxW-"),
            ),
            (
                "regexReplaceAll",
                vec![s("a(x*)b"), s("-ab-axxb-"), s("$1W")],
                s("---"),
            ),
            (
                "regexReplaceAll",
                vec![s("(?P<n>x+)"), s("axxb"), s("[$n]")],
                s("a[xx]b"),
            ),
            ("regexReplaceAll", vec![s("a"), s("aaa"), s("$$")], s("$$$")),
            (
                "regexReplaceAll",
                vec![s("a(b)"), s("ab"), s("$2|$0|$")],
                s("|ab|$"),
            ),
            ("regexReplaceAll", vec![s(""), s("abc"), s("-")], s("-a-b-c-")),
            ("regexReplaceAll", vec![s("a*"), s("baaab"), s("-")], s("-b-b-")),
            (
                "regexReplaceAll",
                vec![s("(a)(b)?"), s("ac"), s("[$2]")],
                s("[]c"),
            ),
            (
                "regexReplaceAll",
                vec![
                    s("(?P<first>\\w+)\\s(?P<last>\\w+)"),
                    s("John Smith"),
                    s("${last}, $first"),
                ],
                s("Smith, John"),
            ),
            ("regexReplaceAll", vec![s("(a)"), s("a"), s("$1x")], s("")),
            ("regexReplaceAll", vec![s("(a)"), s("a"), s("$1_")], s("")),
            ("regexReplaceAll", vec![s("(a)"), s("a"), s("${1")], s("${1")),
            ("regexReplaceAll", vec![s("(a)"), s("a"), s("$ 1")], s("$ 1")),
            (
                "regexReplaceAllLiteral",
                vec![s("a(x*)b"), s("-ab-axxb-"), s("${1}")],
                s("-${1}-${1}-"),
            ),
            (
                "mustRegexReplaceAllLiteral",
                vec![s("a"), s("abc"), s("$1")],
                s("$1bc"),
            ),
            (
                "regexSplit",
                vec![s("z+"), s("pizza"), i(-1)],
                l(vec![s("pi"), s("a")]),
            ),
            ("regexSplit", vec![s("z+"), s("pizza"), i(1)], l(vec![s("pizza")])),
            (
                "regexSplit",
                vec![s(""), s("abc"), i(-1)],
                l(vec![s("a"), s("b"), s("c")]),
            ),
            ("regexSplit", vec![s("a"), s(""), i(-1)], l(vec![s("")])),
            ("regexSplit", vec![s("z"), s("pizza"), i(0)], l(vec![])),
            (
                "regexSplit",
                vec![s("a*"), s("baaab"), i(-1)],
                l(vec![s("b"), s("b")]),
            ),
            (
                "mustRegexSplit",
                vec![s(","), s("a,b"), i(-1)],
                l(vec![s("a"), s("b")]),
            ),
            ("regexQuoteMeta", vec![s("a.b*c[d]")], s("a\\.b\\*c\\[d\\]")),
            ("regexMatch", vec![s("[[]"), s("[")], t.clone()),
            ("regexMatch", vec![s("\\Qa.b\\E"), s("a.b")], t.clone()),
            ("regexMatch", vec![s("\\Qa.b\\E"), s("axb")], Value::Bool(false)),
            ("regexMatch", vec![s("[[:alpha:]]+"), s("ab")], t.clone()),
            ("regexReplaceAll", vec![s("\\bx"), s("éx x"), s("Y")], s("éY Y")),
            ("regexMatch", vec![s("^\\s$"), s("\u{b}")], Value::Bool(false)),
            (
                "mustRegexMatch",
                vec![s("(?i:a)(?s)(?m)(?U)(?-i)b"), s("")],
                Value::Bool(false),
            ),
            ("regexMatch", vec![s("[a-]"), s("-")], t.clone()),
            ("regexMatch", vec![s("[]a]"), s("]")], t.clone()),
            ("regexMatch", vec![s("[^]a]"), s("b")], t.clone()),
            ("regexMatch", vec![s("[a&&b]"), s("&")], t.clone()),
            ("regexMatch", vec![s("a{,2}"), s("a{,2}")], t.clone()),
            ("regexMatch", vec![s("\\pL"), s("é")], t.clone()),
            ("regexMatch", vec![s("[\\d\\s]"), s(" ")], t.clone()),
            ("regexMatch", vec![s("[^\\D]"), s("5")], t.clone()),
            ("regexMatch", vec![s("\\x41"), s("A")], t.clone()),
            ("regexMatch", vec![s("\\x{41}"), s("A")], t.clone()),
            ("regexMatch", vec![s("\\101"), s("A")], t.clone()),
            ("regexMatch", vec![s("\\a"), s("\u{7}")], t.clone()),
            ("mustRegexMatch", vec![s("(?<n>a)"), s("a")], t.clone()),
            // Patterns from the chart corpus.
            (
                "regexMatch",
                vec![s("{(v[0-9])*[^}]*}}$"), s("{v1abc}}")],
                t.clone(),
            ),
            (
                "regexMatch",
                vec![s("{(v[0-9])*[^}]*}}$"), s("x")],
                Value::Bool(false),
            ),
            (
                "regexReplaceAllLiteral",
                vec![s("\\W"), s("a-b.c"), s("_")],
                s("a_b_c"),
            ),
            (
                "regexReplaceAll",
                vec![s("(^.*/)(.*)\\.json$"), s("a/b/c.json"), s("${2}")],
                s("c"),
            ),
            (
                "regexFind",
                vec![s("-r\\d+$|sha256:"), s("img@sha256:abc")],
                s("sha256:"),
            ),
            (
                "mustRegexFind",
                vec![s("^mongodb(\\+srv)?://[^/]+"), s("mongodb+srv://u:p@h/db")],
                s("mongodb+srv://u:p@h"),
            ),
            (
                "regexFind",
                vec![s("v\\d+\\.\\d+\\.\\d+"), s("v1.22.3-eks")],
                s("v1.22.3"),
            ),
            ("regexMatch", vec![s("a*?b+?c??d{1,2}?"), s("abcd")], t.clone()),
            (
                "regexFindAll",
                vec![s("(?m)^a"), s("a\na"), i(-1)],
                l(vec![s("a"), s("a")]),
            ),
            ("regexFindAll", vec![s(""), s(""), i(-1)], l(vec![s("")])),
            (
                "regexFindAll",
                vec![s("é*"), s("aé"), i(-1)],
                l(vec![s(""), s("é")]),
            ),
            ("regexReplaceAll", vec![s("(a)"), s("a"), s("$01")], s("")),
            ("regexReplaceAll", vec![s("(a)"), s("a"), s("${1}${1}")], s("aa")),
            ("regexReplaceAll", vec![s("(?P<x>a)"), s("a"), s("$x$x")], s("aa")),
            ("regexReplaceAll", vec![s("(a)"), s("a"), s("$")], s("$")),
            ("regexReplaceAll", vec![s("(a)"), s("a"), s("${}")], s("${}")),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, &args), ok(want), "{name} {args:?}");
        }
    }

    #[test]
    fn match_lists_are_bounded() {
        let big = s(&"x".repeat((1 << 20) + 1));
        assert!(call("regexFindAll", &[s(""), big, i(-1)]).starts_with("error: regexFindAll: list of"));
    }

    #[test]
    fn invalid_patterns_fail_as_go_does() {
        let cases: Vec<(&str, Vec<Value>, &str)> = vec![
            (
                "mustRegexMatch",
                vec![s("("), s("abc")],
                "error parsing regexp: missing closing ): `(`",
            ),
            (
                "regexFind",
                vec![s("("), s("abc")],
                "regexp: Compile(`(`): error parsing regexp: missing closing ): `(`",
            ),
            (
                "mustRegexFind",
                vec![s("("), s("abc")],
                "error parsing regexp: missing closing ): `(`",
            ),
            (
                "mustRegexFindAll",
                vec![s("["), s("abc"), i(-1)],
                "error parsing regexp: missing closing ]: `[`",
            ),
            (
                "regexReplaceAll",
                vec![s("["), s("a"), s("b")],
                "regexp: Compile(`[`): error parsing regexp: missing closing ]: `[`",
            ),
            (
                "mustRegexReplaceAll",
                vec![s("["), s("a"), s("b")],
                "error parsing regexp: missing closing ]: `[`",
            ),
            (
                "mustRegexMatch",
                vec![s("a)"), s("")],
                "error parsing regexp: unexpected ): `a)`",
            ),
            (
                "mustRegexMatch",
                vec![s("*a"), s("")],
                "error parsing regexp: missing argument to repetition operator: `*`",
            ),
            (
                "mustRegexMatch",
                vec![s("a**"), s("")],
                "error parsing regexp: invalid nested repetition operator: `**`",
            ),
            (
                "mustRegexMatch",
                vec![s("\\q"), s("")],
                "error parsing regexp: invalid escape sequence: `\\q`",
            ),
            (
                "mustRegexMatch",
                vec![s("\\1"), s("")],
                "error parsing regexp: invalid escape sequence: `\\1`",
            ),
            (
                "mustRegexMatch",
                vec![s("a{2,1}"), s("")],
                "error parsing regexp: invalid repeat count: `{2,1}`",
            ),
            (
                "mustRegexMatch",
                vec![s("a{1001}"), s("")],
                "error parsing regexp: invalid repeat count: `{1001}`",
            ),
            (
                "mustRegexMatch",
                vec![s("a{1,1001}"), s("")],
                "error parsing regexp: invalid repeat count: `{1,1001}`",
            ),
            (
                "mustRegexMatch",
                vec![s("(?x)a"), s("")],
                "error parsing regexp: invalid or unsupported Perl syntax: `(?x`",
            ),
            (
                "mustRegexMatch",
                vec![s("(?P=n)"), s("")],
                "error parsing regexp: invalid or unsupported Perl syntax: `(?P`",
            ),
            (
                "mustRegexMatch",
                vec![s("a?*"), s("")],
                "error parsing regexp: invalid nested repetition operator: `?*`",
            ),
            (
                "mustRegexMatch",
                vec![s("a*?*"), s("")],
                "error parsing regexp: invalid nested repetition operator: `*?*`",
            ),
            (
                "mustRegexMatch",
                vec![s("x{2}{3}"), s("")],
                "error parsing regexp: invalid nested repetition operator: `{2}{3}`",
            ),
            (
                "mustRegexMatch",
                vec![s("[z-a]"), s("")],
                "error parsing regexp: invalid character class range: `z-a`",
            ),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, &args), err(want), "{name} {args:?}");
        }
    }
}
