//! JSON as Go's `encoding/json` writes it (sorted keys, `<`, `>`, `&` escaped unless raw, Go's float format), and
//! Go's float formatting (`strconv.FormatFloat` with shortest digits) shared with the YAML writer.
//!
//! Reading JSON (`fromJson`) goes through `serde_json` and [`Value::from_json`]; only the error messages are Go's
//! (see [`unmarshal`]).

use std::fmt::Write as _;

use crate::gotemplate::Value;
use crate::gotemplate::value::MAX_VALUE_DEPTH;

/// Why a value could not be written as JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonError(pub String);

/// `json.Marshal(value)` (`escape_html`: Go's default; Sprig's `toRawJson` turns it off), indented like
/// `json.MarshalIndent(value, "", indent)` when `indent` is given.
pub fn marshal(value: &Value, escape_html: bool, indent: Option<&str>) -> Result<String, JsonError> {
    let mut out = String::new();
    let mut writer = Writer {
        out: &mut out,
        escape_html,
        indent,
    };
    writer.value(value, 0)?;
    Ok(out)
}

struct Writer<'a> {
    out: &'a mut String,
    escape_html: bool,
    indent: Option<&'a str>,
}

impl Writer<'_> {
    fn newline(&mut self, depth: usize) {
        if let Some(indent) = self.indent {
            self.out.push('\n');
            for _ in 0..depth {
                self.out.push_str(indent);
            }
        }
    }

    fn value(&mut self, value: &Value, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_VALUE_DEPTH {
            return Err(JsonError(format!(
                "json: unsupported value: encountered a cycle via {}",
                value.type_name()
            )));
        }
        if self.out.len() > crate::gotemplate::funcs::MAX_TEXT_BYTES {
            return Err(JsonError("json: output exceeds the size limit".into()));
        }
        match value {
            Value::Nil => self.out.push_str("null"),
            Value::Bool(flag) => self.out.push_str(if *flag { "true" } else { "false" }),
            Value::Int(int) => {
                let _ = write!(self.out, "{int}");
            }
            Value::Float(float) => self.out.push_str(&json_float(*float)?),
            Value::String(text) => write_string(self.out, text, self.escape_html),
            Value::Bytes(bytes) => {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
                write_string(self.out, &encoded, self.escape_html);
            }
            Value::List(items) => {
                self.out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        self.out.push(',');
                    }
                    self.newline(depth + 1);
                    crate::formats::deeper(|| self.value(item, depth + 1))?;
                }
                if !items.is_empty() {
                    self.newline(depth);
                }
                self.out.push(']');
            }
            Value::Map(map) => {
                let entries = map.entries();
                self.out.push('{');
                for (index, (key, item)) in entries.iter().enumerate() {
                    if index > 0 {
                        self.out.push(',');
                    }
                    self.newline(depth + 1);
                    write_string(self.out, key, self.escape_html);
                    self.out.push(':');
                    if self.indent.is_some() {
                        self.out.push(' ');
                    }
                    crate::formats::deeper(|| self.value(item, depth + 1))?;
                }
                if !entries.is_empty() {
                    self.newline(depth);
                }
                self.out.push('}');
            }
            Value::Object(object) => self.value(&object.to_value(), depth + 1)?,
        }
        Ok(())
    }
}

/// Appends `text` as a JSON string the way Go's encoder escapes it.
pub(crate) fn write_string(out: &mut String, text: &str, escape_html: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if escape_html => {
                out.push_str("\\u00");
                out.push(HEX[(ch as usize) >> 4] as char);
                out.push(HEX[(ch as usize) & 0xF] as char);
            }
            c if (c as u32) < 0x20 => {
                out.push_str("\\u00");
                out.push(HEX[(c as usize) >> 4] as char);
                out.push(HEX[(c as usize) & 0xF] as char);
            }
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A float as `encoding/json` writes it: `'f'` format, or `'e'` below 1e-6 and from 1e21 (with `e-7`, not `e-07`).
pub(crate) fn json_float(float: f64) -> Result<String, JsonError> {
    if float.is_nan() {
        return Err(JsonError("json: unsupported value: NaN".into()));
    }
    if float.is_infinite() {
        let sign = if float > 0.0 { "+Inf" } else { "-Inf" };
        return Err(JsonError(format!("json: unsupported value: {sign}")));
    }
    let abs = float.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let mut text = format_e(float);
        // Go cleans up `e-07` to `e-7`.
        let bytes = text.as_bytes();
        let n = bytes.len();
        if n >= 4 && bytes[n - 4] == b'e' && bytes[n - 3] == b'-' && bytes[n - 2] == b'0' {
            text.remove(n - 2);
        }
        Ok(text)
    } else {
        Ok(format_f(float))
    }
}

/// Shortest round-trip decimal digits of a finite float and its decimal point position: the value is
/// `0.DIGITS × 10^point` (Go's `decimalSlice`: `d`, `dp`). Zero gives no digits and point 0.
fn shortest_digits(float: f64) -> (String, i32) {
    if float == 0.0 {
        return (String::new(), 0);
    }
    // Rust's `{:e}` prints the shortest digits that round-trip, as Go's shortest formatting does.
    let text = format!("{:e}", float.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0').to_string();
    if digits.is_empty() {
        return (String::new(), 0);
    }
    (digits, exponent + 1)
}

/// `strconv.FormatFloat(f, 'f', -1, 64)`.
pub(crate) fn format_f(float: f64) -> String {
    let (digits, point) = shortest_digits(float);
    let mut out = String::new();
    if float.is_sign_negative() {
        out.push('-');
    }
    if digits.is_empty() {
        out.push('0');
        return out;
    }
    let n = digits.len() as i32;
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..-point {
            out.push('0');
        }
        out.push_str(&digits);
    } else if point >= n {
        out.push_str(&digits);
        for _ in 0..point - n {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    out
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`.
pub(crate) fn format_e(float: f64) -> String {
    let (digits, point) = shortest_digits(float);
    let mut out = String::new();
    if float.is_sign_negative() {
        out.push('-');
    }
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits
    };
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let exponent = if float == 0.0 { 0 } else { point - 1 };
    out.push('e');
    out.push(if exponent < 0 { '-' } else { '+' });
    let exponent = exponent.unsigned_abs();
    if exponent < 10 {
        out.push('0');
    }
    let _ = write!(out, "{exponent}");
    out
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`, including Go's `+Inf`, `-Inf`, `NaN`.
pub(crate) fn format_g(float: f64) -> String {
    if float.is_nan() {
        return "NaN".into();
    }
    if float.is_infinite() {
        return if float > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    let (digits, point) = shortest_digits(float);
    let exponent = if digits.is_empty() { 0 } else { point - 1 };
    if !(-4..6).contains(&exponent) {
        format_e(float)
    } else {
        format_f(float)
    }
}

/// `json.Unmarshal(text, &v)` into `interface{}`: numbers are `float64`; errors in Go's words.
pub fn unmarshal(text: &str) -> Result<Value, JsonError> {
    Ok(Value::from_json(&unmarshal_json(text)?))
}

/// [`unmarshal`] before the conversion to a template value (callers check the decoded type, as Go's target types
/// do).
pub fn unmarshal_json(text: &str) -> Result<serde_json::Value, JsonError> {
    if text.len() > crate::gotemplate::funcs::MAX_TEXT_BYTES {
        return Err(JsonError("json: input exceeds the size limit".into()));
    }
    if let Some(message) = go_syntax_error(text) {
        return Err(JsonError(message));
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    // Well-formed JSON that still fails here: a number out of float64's range (Go refuses it too), or nesting
    // deeper than serde_json's 128 levels (Go allows 10,000).
    let json = serde::Deserialize::deserialize(&mut deserializer)
        .map_err(|err: serde_json::Error| JsonError(format!("json: {err}")))?;
    Ok(json)
}

/// Go's `json.Valid` scanner: the message `encoding/json` reports for malformed input, `None` when well-formed.
fn go_syntax_error(text: &str) -> Option<String> {
    let mut scanner = SyntaxScanner {
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    scanner.document().err()
}

struct SyntaxScanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

/// Go's `quoteChar`: how the scanner names a character in its errors.
fn quote_char(byte: u8, rest: &[u8]) -> String {
    match byte {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        _ => {
            // Go decodes the rune at this position.
            let ch = std::str::from_utf8(&rest[..rest.len().min(4)])
                .ok()
                .and_then(|s| s.chars().next())
                .or_else(|| {
                    (1..=4)
                        .filter_map(|n| rest.get(..n))
                        .find_map(|slice| std::str::from_utf8(slice).ok().and_then(|s| s.chars().next()))
                })
                .unwrap_or('\u{fffd}');
            let quoted = crate::gotemplate::fmt::quote_char(ch);
            format!("'{}'", &quoted[1..quoted.len() - 1])
        }
    }
}

impl SyntaxScanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn invalid(&self, context: &str) -> String {
        match self.peek() {
            Some(byte) => format!(
                "invalid character {} {context}",
                quote_char(byte, &self.bytes[self.pos..])
            ),
            None => "unexpected end of JSON input".into(),
        }
    }

    fn document(&mut self) -> Result<(), String> {
        self.skip_space();
        self.value()?;
        self.skip_space();
        if self.pos < self.bytes.len() {
            return Err(self.invalid("after top-level value"));
        }
        Ok(())
    }

    fn value(&mut self) -> Result<(), String> {
        match self.peek() {
            None => Err("unexpected end of JSON input".into()),
            Some(b'{') => {
                self.enter()?;
                self.pos += 1;
                self.skip_space();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                loop {
                    if self.peek() != Some(b'"') {
                        return Err(self.invalid("looking for beginning of object key string"));
                    }
                    self.string()?;
                    self.skip_space();
                    if self.peek() != Some(b':') {
                        return Err(self.invalid("after object key"));
                    }
                    self.pos += 1;
                    self.skip_space();
                    crate::formats::deeper(|| self.value())?;
                    self.skip_space();
                    match self.peek() {
                        Some(b',') => {
                            self.pos += 1;
                            self.skip_space();
                        }
                        Some(b'}') => {
                            self.pos += 1;
                            self.depth -= 1;
                            return Ok(());
                        }
                        _ => return Err(self.invalid("after object key:value pair")),
                    }
                }
            }
            Some(b'[') => {
                self.enter()?;
                self.pos += 1;
                self.skip_space();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                loop {
                    crate::formats::deeper(|| self.value())?;
                    self.skip_space();
                    match self.peek() {
                        Some(b',') => {
                            self.pos += 1;
                            self.skip_space();
                        }
                        Some(b']') => {
                            self.pos += 1;
                            self.depth -= 1;
                            return Ok(());
                        }
                        _ => return Err(self.invalid("after array element")),
                    }
                }
            }
            Some(b'"') => self.string(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.invalid("looking for beginning of value")),
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > 1_000 {
            return Err("exceeded max depth".into());
        }
        Ok(())
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), String> {
        let name = String::from_utf8_lossy(word).into_owned();
        for (index, expected) in word.iter().enumerate() {
            if index == 0 {
                self.pos += 1;
                continue;
            }
            if self.peek() != Some(*expected) {
                return Err(self.invalid(&format!("in literal {name} (expecting '{}')", *expected as char)));
            }
            self.pos += 1;
        }
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err("unexpected end of JSON input".into()),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"') => self.pos += 1,
                        Some(b'u') => {
                            self.pos += 1;
                            for _ in 0..4 {
                                match self.peek() {
                                    Some(byte) if byte.is_ascii_hexdigit() => self.pos += 1,
                                    _ => return Err(self.invalid("in \\u hexadecimal character escape")),
                                }
                            }
                        }
                        _ => return Err(self.invalid("in string escape code")),
                    }
                }
                Some(byte) if byte < 0x20 => return Err(self.invalid("in string literal")),
                Some(_) => self.pos += 1,
            }
        }
    }

    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.invalid("in numeric literal"));
            }
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else {
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.invalid("after decimal point in numeric literal"));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.invalid("in exponent of numeric literal"));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::Map;

    #[test]
    fn floats_as_go_writes_them() {
        let cases = [
            (1.5, "1.5"),
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (1.2345678901234569e23, "1.2345678901234569e+23"),
            (-0.0, "-0"),
            (1e20, "100000000000000000000"),
            (12345678901234567000.0, "12345678901234567000"),
        ];
        for (float, text) in cases {
            assert_eq!(json_float(float).as_deref(), Ok(text), "{float}");
        }
        assert_eq!(format_g(1234567.5), "1.2345675e+06");
        assert_eq!(format_g(1e-7), "1e-07");
        assert_eq!(format_g(123456.5), "123456.5");
        assert_eq!(format_g(0.0001), "0.0001");
        assert_eq!(format_g(0.00001), "1e-05");
    }

    #[test]
    fn marshal_as_helm_printed() {
        let map = Map::new();
        map.insert("s", Value::string("<a>&\u{8}\u{c}\u{2028}\u{1}\u{7f}é \"q\\"));
        map.insert("n", Value::Nil);
        let inner = Map::new();
        inner.insert("b", Value::Float(1.0));
        inner.insert("a", Value::list(vec![]));
        map.insert("l", Value::list(vec![Value::Map(inner), Value::Map(Map::new())]));
        let value = Value::Map(map);
        assert_eq!(
            marshal(&value, true, None).as_deref(),
            Ok(
                "{\"l\":[{\"a\":[],\"b\":1},{}],\"n\":null,\"s\":\"\\u003ca\\u003e\\u0026\\b\\f\\u2028\\u0001\u{7f}é \\\"q\\\\\"}"
            )
        );
        assert_eq!(
            marshal(&value, false, Some("  ")).as_deref(),
            Ok(
                "{\n  \"l\": [\n    {\n      \"a\": [],\n      \"b\": 1\n    },\n    {}\n  ],\n  \"n\": null,\n  \"s\": \"<a>&\\b\\f\\u2028\\u0001\u{7f}é \\\"q\\\\\"\n}"
            )
        );
    }

    #[test]
    fn syntax_errors_in_go_words() {
        assert_eq!(
            unmarshal("[1,2").map(|_| ()),
            Err(JsonError("unexpected end of JSON input".into()))
        );
        assert_eq!(
            unmarshal("{\"a\" 1}").map(|_| ()),
            Err(JsonError("invalid character '1' after object key".into()))
        );
        assert_eq!(
            unmarshal("a: 1").map(|_| ()),
            Err(JsonError(
                "invalid character 'a' looking for beginning of value".into()
            ))
        );
    }
}
