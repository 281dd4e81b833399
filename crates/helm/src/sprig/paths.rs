//! Sprig's file paths and URLs (`base`, `dir`, `ext`, `clean`, `isAbs`, `osBase`, `osDir`, `osExt`, `osClean`,
//! `osIsAbs`, `urlParse`, `urlJoin`) and the network function (`getHostByName`, which resolves nothing).
//!
//! Paths are Go's `path` package (slash-separated); the `os…` variants are `path/filepath` on Linux, where Helm
//! runs, which is the same. URLs follow Go's `net/url` `Parse` and `URL.String` for the parts Sprig exposes.

use std::collections::BTreeMap;

use crate::gotemplate::funcs::{Arity, FuncError, FuncMap, Runtime, param_str};
use crate::gotemplate::{Map, Value};

use super::dicts::param_map;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    for name in ["base", "osBase"] {
        map.add(name, Arity::Exact(1), |_, args| {
            Ok(Value::from(base(&str_arg(args)?)))
        });
    }
    for name in ["dir", "osDir"] {
        map.add(name, Arity::Exact(1), |_, args| {
            Ok(Value::from(dir(&str_arg(args)?)))
        });
    }
    for name in ["clean", "osClean"] {
        map.add(name, Arity::Exact(1), |_, args| {
            Ok(Value::from(clean(&str_arg(args)?)))
        });
    }
    for name in ["ext", "osExt"] {
        map.add(name, Arity::Exact(1), |_, args| {
            Ok(Value::from(ext(&str_arg(args)?)))
        });
    }
    for name in ["isAbs", "osIsAbs"] {
        map.add(name, Arity::Exact(1), |_, args| {
            Ok(Value::Bool(str_arg(args)?.starts_with('/')))
        });
    }
    map.add("urlParse", Arity::Exact(1), url_parse);
    map.add("urlJoin", Arity::Exact(1), url_join);
    map.add("getHostByName", Arity::Exact(1), get_host_by_name);
}

fn str_arg(args: &[Value]) -> Result<String, FuncError> {
    param_str(args.first().unwrap_or(&Value::Nil))
}

/// Go's `path.Clean`: one slash between elements, `.` removed, `..` resolved lexically; "" is ".".
pub(crate) fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for element in path.split('/') {
        match element {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|last| *last != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`: the last element, trailing slashes ignored; "" is ".", all slashes "/".
fn base(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// Go's `path.Dir`: everything before the last element, cleaned.
fn dir(path: &str) -> String {
    let cut = path.rfind('/').map_or(0, |at| at + 1);
    clean(&path[..cut])
}

/// Go's `path.Ext`: from the last dot of the last element.
fn ext(path: &str) -> String {
    for (at, byte) in path.bytes().enumerate().rev() {
        match byte {
            b'/' => break,
            b'.' => return path[at..].to_string(),
            _ => {}
        }
    }
    String::new()
}

/// How a URL component is escaped (Go's `net/url` encoding modes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Path,
    Host,
    UserPassword,
    Fragment,
}

/// Go's `shouldEscape`.
fn should_escape(byte: u8, mode: Encoding) -> bool {
    if byte.is_ascii_alphanumeric() {
        return false;
    }
    if mode == Encoding::Host
        && matches!(
            byte,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match byte {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => {
            return match mode {
                Encoding::Path => byte == b'?',
                Encoding::UserPassword => matches!(byte, b'@' | b'/' | b'?' | b':'),
                Encoding::Fragment => false,
                Encoding::Host => true,
            };
        }
        _ => {}
    }
    if mode == Encoding::Fragment && matches!(byte, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

/// Go's `escape`.
fn escape(text: &str, mode: Encoding) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if should_escape(byte, mode) {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push(char::from(byte));
        }
    }
    out
}

/// Go's `unescape` (no `+` handling: paths, hosts, user info, fragments); `Err` is the error text.
fn unescape(text: &str, mode: Encoding) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'%' => {
                let hex = bytes
                    .get(index + 1..index + 3)
                    .filter(|pair| pair.iter().all(u8::is_ascii_hexdigit));
                let Some(hex) = hex else {
                    let bad: String = text[index..].chars().take(3).collect();
                    return Err(format!("invalid URL escape {}", super::strings::go_quote(&bad)));
                };
                let value = u8::from_str_radix(std::str::from_utf8(hex).unwrap_or("00"), 16).unwrap_or(0);
                if mode == Encoding::Host && value < 0x80 && value != b'%' {
                    let bad = &text[index..index + 3];
                    return Err(format!("invalid URL escape {}", super::strings::go_quote(bad)));
                }
                out.push(value);
                index += 3;
            }
            byte => {
                if mode == Encoding::Host && byte < 0x80 && should_escape(byte, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        super::strings::go_quote(&char::from(byte).to_string())
                    ));
                }
                out.push(byte);
                index += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The parts of a URL Sprig exposes.
#[derive(Default)]
struct Url {
    scheme: String,
    opaque: String,
    user: Option<(String, Option<String>)>,
    host: String,
    path: String,
    raw_query: String,
    force_query: bool,
    fragment: String,
}

/// Go's `url.Parse`; `Err` is the message after `parse "URL": `.
fn parse_url(raw: &str) -> Result<Url, String> {
    let (rest, fragment) = match raw.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (raw, None),
    };
    let mut url = parse_without_fragment(rest)?;
    if let Some(fragment) = fragment {
        url.fragment = unescape(fragment, Encoding::Fragment)?;
    }
    Ok(url)
}

fn parse_without_fragment(raw: &str) -> Result<Url, String> {
    if raw.bytes().any(|byte| byte < 0x20 || byte == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    // The scheme.
    let mut rest = raw;
    for (at, byte) in raw.bytes().enumerate() {
        if byte.is_ascii_alphabetic() {
            continue;
        }
        if at > 0 && (byte.is_ascii_digit() || matches!(byte, b'+' | b'-' | b'.')) {
            continue;
        }
        if byte == b':' {
            if at == 0 {
                return Err("missing protocol scheme".into());
            }
            url.scheme = raw[..at].to_ascii_lowercase();
            rest = &raw[at + 1..];
        }
        break;
    }
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, path) = match after.find('/') {
            Some(at) => (&after[..at], &after[at..]),
            None => (after, ""),
        };
        parse_authority(&mut url, authority)?;
        rest = path;
    }
    url.path = unescape(rest, Encoding::Path)?;
    Ok(url)
}

fn parse_authority(url: &mut Url, authority: &str) -> Result<(), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
        None => (None, authority),
    };
    url.host = parse_host(host)?;
    if let Some(userinfo) = userinfo {
        let valid = userinfo
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&byte));
        if !valid {
            return Err("net/url: invalid userinfo".into());
        }
        url.user = Some(match userinfo.split_once(':') {
            Some((name, password)) => (
                unescape(name, Encoding::UserPassword)?,
                Some(unescape(password, Encoding::UserPassword)?),
            ),
            None => (unescape(userinfo, Encoding::UserPassword)?, None),
        });
    }
    Ok(())
}

fn valid_port(port: &str) -> bool {
    port.is_empty() || (port.starts_with(':') && port[1..].bytes().all(|byte| byte.is_ascii_digit()))
}

fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let port = &host[close + 1..];
        if !valid_port(port) {
            return Err(format!(
                "invalid port {} after host",
                super::strings::go_quote(port)
            ));
        }
        return Ok(host.to_string());
    }
    if let Some(colon) = host.rfind(':') {
        let port = &host[colon..];
        if !valid_port(port) {
            return Err(format!(
                "invalid port {} after host",
                super::strings::go_quote(port)
            ));
        }
    }
    unescape(host, Encoding::Host)
}

/// Go's `URL.Hostname`: the host without port or IPv6 brackets.
fn hostname(host: &str) -> String {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("").to_string();
    }
    match host.rfind(':') {
        Some(colon) if valid_port(&host[colon..]) => host[..colon].to_string(),
        _ => host.to_string(),
    }
}

fn user_string(user: &(String, Option<String>)) -> String {
    let mut out = escape(&user.0, Encoding::UserPassword);
    if let Some(password) = &user.1 {
        out.push(':');
        out.push_str(&escape(password, Encoding::UserPassword));
    }
    out
}

/// Go's `URL.String`.
fn url_string(url: &Url) -> String {
    let mut out = String::new();
    if !url.scheme.is_empty() {
        out.push_str(&url.scheme);
        out.push(':');
    }
    if !url.opaque.is_empty() {
        out.push_str(&url.opaque);
    } else {
        if !url.scheme.is_empty() || !url.host.is_empty() || url.user.is_some() {
            if !url.host.is_empty() || !url.path.is_empty() || url.user.is_some() {
                out.push_str("//");
            }
            if let Some(user) = &url.user {
                out.push_str(&user_string(user));
                out.push('@');
            }
            if !url.host.is_empty() {
                out.push_str(&escape(&url.host, Encoding::Host));
            }
        }
        let path = escape(&url.path, Encoding::Path);
        if !path.is_empty() && !path.starts_with('/') && !url.host.is_empty() {
            out.push('/');
        }
        if out.is_empty()
            && path
                .split('/')
                .next()
                .is_some_and(|segment| segment.contains(':'))
        {
            out.push_str("./");
        }
        out.push_str(&path);
    }
    if url.force_query || !url.raw_query.is_empty() {
        out.push('?');
        out.push_str(&url.raw_query);
    }
    if !url.fragment.is_empty() {
        out.push('#');
        out.push_str(&escape(&url.fragment, Encoding::Fragment));
    }
    out
}

/// `urlParse URL`: a dict of scheme, host, hostname, path, query, opaque, fragment, userinfo.
fn url_parse(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let raw = str_arg(args)?;
    let url = parse_url(&raw).map_err(|error| {
        FuncError::new(format!(
            "unable to parse url: parse {}: {error}",
            super::strings::go_quote(&raw)
        ))
    })?;
    let mut entries = BTreeMap::new();
    entries.insert("scheme".to_string(), Value::from(url.scheme.as_str()));
    entries.insert("host".to_string(), Value::from(url.host.as_str()));
    entries.insert("hostname".to_string(), Value::from(hostname(&url.host)));
    entries.insert("path".to_string(), Value::from(url.path.as_str()));
    entries.insert("query".to_string(), Value::from(url.raw_query.as_str()));
    entries.insert("opaque".to_string(), Value::from(url.opaque.as_str()));
    entries.insert("fragment".to_string(), Value::from(url.fragment.as_str()));
    entries.insert(
        "userinfo".to_string(),
        Value::from(url.user.as_ref().map(user_string).unwrap_or_default()),
    );
    Ok(Value::Map(Map::from_entries(entries)))
}

/// A string entry of the `urlJoin` dict ("" when missing; anything but a string is Sprig's panic).
fn dict_string(map: Option<&Map>, key: &str) -> Result<String, FuncError> {
    match map.and_then(|map| map.get(key)) {
        None => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.to_string()),
        Some(Value::Nil) => Err(FuncError::new(super::lists::NIL_DEREFERENCE)),
        Some(other) => Err(FuncError::new(format!(
            "unable to parse {key} key, must be of type string, but {} found",
            other.kind().name()
        ))),
    }
}

/// `urlJoin DICT`: the URL of the parts `urlParse` returns.
fn url_join(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let map = param_map(args.first().unwrap_or(&Value::Nil))?;
    let map = map.as_ref();
    let mut url = Url {
        scheme: dict_string(map, "scheme")?,
        host: dict_string(map, "host")?,
        path: dict_string(map, "path")?,
        raw_query: dict_string(map, "query")?,
        opaque: dict_string(map, "opaque")?,
        fragment: dict_string(map, "fragment")?,
        ..Url::default()
    };
    let userinfo = dict_string(map, "userinfo")?;
    if !userinfo.is_empty() {
        let probe = format!("proto://{userinfo}@host");
        let parsed = parse_url(&probe).map_err(|error| {
            FuncError::new(format!(
                "unable to parse userinfo in dict: parse {}: {error}",
                super::strings::go_quote(&probe)
            ))
        })?;
        url.user = parsed.user;
    }
    Ok(Value::from(url_string(&url)))
}

/// `getHostByName NAME`: always "". Helm v4 renders it as an empty string unless DNS lookups are explicitly enabled
/// (`--enable-dns`), and a renderer must never reach the network because a chart asks it to.
fn get_host_by_name(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    str_arg(args)?;
    Ok(Value::from(""))
}

#[cfg(test)]
mod tests {
    use crate::gotemplate::Value;
    use crate::sprig::conv::test_support::*;

    #[test]
    fn paths() {
        let cases: &[(&str, &str, &str)] = &[
            ("base", "a/b/c.txt", "c.txt"),
            ("base", "", "."),
            ("base", "/", "/"),
            ("base", "a/b/", "b"),
            ("dir", "a/b/c", "a/b"),
            ("dir", "", "."),
            ("dir", "/a", "/"),
            ("dir", "a", "."),
            ("clean", "a//b/../c/.", "a/c"),
            ("clean", "", "."),
            ("clean", "/../a", "/a"),
            ("clean", "../../a/..", "../.."),
            ("ext", "a/b.tar.gz", ".gz"),
            ("ext", "a.b/c", ""),
            ("ext", "x", ""),
            ("osBase", "a/b", "b"),
            ("osDir", "a/b", "a"),
            ("osClean", "a/../b", "b"),
            ("osExt", "a.x", ".x"),
        ];
        for (name, input, want) in cases {
            assert_eq!(call(name, &[s(input)]), ok(*want), "{name} {input:?}");
        }
        assert_eq!(call("isAbs", &[s("/a")]), ok(true));
        assert_eq!(call("isAbs", &[s("a")]), ok(false));
        assert_eq!(call("osIsAbs", &[s("/x")]), ok(true));
        assert_eq!(
            call("base", &[i(1)]),
            err("wrong type for value; expected string; got int")
        );
        assert_eq!(call("getHostByName", &[s("localhost")]), ok(""));
    }

    fn url(parts: [&str; 8]) -> Value {
        let keys = [
            "fragment", "host", "hostname", "opaque", "path", "query", "scheme", "userinfo",
        ];
        d(keys
            .iter()
            .zip(parts)
            .map(|(key, value)| (*key, s(value)))
            .collect())
    }

    #[test]
    fn urls() {
        let cases: Vec<(&str, Value)> = vec![
            (
                "https://u:p@host.com:8080/a/b?x=1&y=2#frag",
                url([
                    "frag",
                    "host.com:8080",
                    "host.com",
                    "",
                    "/a/b",
                    "x=1&y=2",
                    "https",
                    "u:p",
                ]),
            ),
            ("mailto:a@b.c", url(["", "", "", "a@b.c", "", "", "mailto", ""])),
            ("/rel/path", url(["", "", "", "", "/rel/path", "", "", ""])),
            ("", url(["", "", "", "", "", "", "", ""])),
            ("//host/x", url(["", "host", "host", "", "/x", "", "", ""])),
            ("a:b:c", url(["", "", "", "b:c", "", "", "a", ""])),
            ("http://u@h", url(["", "h", "h", "", "", "", "http", "u"])),
            ("http://h:80?x", url(["", "h:80", "h", "", "", "x", "http", ""])),
            ("x?", url(["", "", "", "", "x", "", "", ""])),
            (
                "http://h/a#b%20c",
                url(["b c", "h", "h", "", "/a", "", "http", ""]),
            ),
            ("http://%41:%42@h", url(["", "h", "h", "", "", "", "http", "A:B"])),
            (
                "http://h/%41%2Fb?q=%20",
                url(["", "h", "h", "", "/A/b", "q=%20", "http", ""]),
            ),
            (
                "HTTP://H.com/",
                url(["", "H.com", "H.com", "", "/", "", "http", ""]),
            ),
            (
                "http://[::1]:80/x",
                url(["", "[::1]:80", "::1", "", "/x", "", "http", ""]),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(call("urlParse", &[s(input)]), ok(want), "urlParse {input:?}");
        }
        assert_eq!(
            call("urlParse", &[s("http://a b.com/")]),
            err("unable to parse url: parse \"http://a b.com/\": invalid character \" \" in host name")
        );
        let failures: &[(&str, &str)] = &[
            ("1a:x", "first path segment in URL cannot contain colon"),
            (":x", "missing protocol scheme"),
            ("http://[::1", "missing ']' in host"),
            ("http://h:port", "invalid port \":port\" after host"),
        ];
        for (input, want) in failures {
            assert_eq!(
                call("urlParse", &[s(input)]),
                err(&format!("unable to parse url: parse \"{input}\": {want}")),
                "urlParse {input:?}"
            );
        }
        assert_eq!(
            call("urlParse", &[s("%zz")]),
            err("unable to parse url: parse \"%zz\": invalid URL escape \"%zz\"")
        );
        let joins: Vec<(Value, &str)> = vec![
            (
                d(vec![
                    ("scheme", s("https")),
                    ("host", s("h.com:80")),
                    ("path", s("/a b")),
                    ("query", s("x=1")),
                    ("fragment", s("f g")),
                    ("userinfo", s("u:p")),
                ]),
                "https://u:p@h.com:80/a%20b?x=1#f%20g",
            ),
            (
                d(vec![("opaque", s("a@b.c")), ("scheme", s("mailto"))]),
                "mailto:a@b.c",
            ),
            (d(vec![]), ""),
            (d(vec![("path", s("a:b"))]), "./a:b"),
            (d(vec![("host", s("h")), ("path", s("x"))]), "//h/x"),
            (
                d(vec![("scheme", s("http")), ("host", s("h")), ("path", s("/ä/%"))]),
                "http://h/%C3%A4/%25",
            ),
            (d(vec![("scheme", s("http")), ("host", s("a b"))]), "http://a%20b"),
            (d(vec![("scheme", s("http")), ("path", s("x"))]), "http://x"),
            (d(vec![("userinfo", s("u:p@q")), ("host", s("h"))]), "//u:p%40q@h"),
            (d(vec![("query", s(""))]), ""),
        ];
        for (input, want) in joins {
            assert_eq!(
                call("urlJoin", std::slice::from_ref(&input)),
                ok(want),
                "urlJoin {input:?}"
            );
        }
        assert_eq!(
            call("urlJoin", &[d(vec![("host", i(1))])]),
            err("unable to parse host key, must be of type string, but int found")
        );
        assert_eq!(
            call("urlJoin", &[d(vec![("host", Value::Nil)])]),
            err("runtime error: invalid memory address or nil pointer dereference")
        );
        assert_eq!(
            call(
                "urlJoin",
                &[d(vec![("userinfo", s("u@x:p w")), ("host", s("h"))])]
            ),
            err(
                "unable to parse userinfo in dict: parse \"proto://u@x:p w@host\": net/url: invalid userinfo"
            )
        );
    }
}
