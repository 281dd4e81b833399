//! TOML as Helm's `toToml` writes it (BurntSushi/toml's encoder) and as `fromToml` reads it.
//!
//! The encoder writes a map's plain keys first (sorted), then its tables (sorted): `[name]` for maps, `[[name]]`
//! for lists of maps, each nested level indented by two spaces; nil entries are skipped, floats always carry a
//! decimal point or an exponent. Reading uses `toml_edit`'s parser; the values are Go's (`int64`, `float64`, …) but
//! error messages are only close to BurntSushi's (`toml: line N: …`).

use std::fmt::Write as _;

use crate::formats::json::format_g;
use crate::gotemplate::value::MAX_VALUE_DEPTH;
use crate::gotemplate::{Map, Value};

/// Why TOML could not be written or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TomlError(pub String);

/// `toml.NewEncoder(w).Encode(value)`.
pub fn marshal(value: &Value) -> Result<String, TomlError> {
    let mut encoder = Encoder { out: String::new() };
    encoder.encode(&[], value, 0)?;
    Ok(encoder.out)
}

/// `toml.Unmarshal(text, &map[string]interface{})`.
pub fn parse(text: &str) -> Result<Value, TomlError> {
    let document: toml_edit::DocumentMut = text.parse().map_err(|err: toml_edit::TomlError| {
        let line = err
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1);
        let message = err.message().trim().to_string();
        TomlError(format!("toml: line {line}: {message}"))
    })?;
    Ok(table_value(document.as_table(), 0))
}

fn table_value(table: &toml_edit::Table, depth: usize) -> Value {
    let map = Map::new();
    if depth > MAX_VALUE_DEPTH {
        return Value::Map(map);
    }
    for (key, item) in table.iter() {
        map.insert(key, crate::formats::deeper(|| item_value(item, depth + 1)));
    }
    Value::Map(map)
}

fn item_value(item: &toml_edit::Item, depth: usize) -> Value {
    match item {
        toml_edit::Item::None => Value::Nil,
        toml_edit::Item::Value(value) => value_value(value, depth),
        toml_edit::Item::Table(table) => table_value(table, depth),
        toml_edit::Item::ArrayOfTables(tables) => {
            Value::list(tables.iter().map(|table| table_value(table, depth + 1)).collect())
        }
    }
}

fn value_value(value: &toml_edit::Value, depth: usize) -> Value {
    if depth > MAX_VALUE_DEPTH {
        return Value::Nil;
    }
    match value {
        toml_edit::Value::String(text) => Value::from(text.value().as_str()),
        toml_edit::Value::Integer(int) => Value::Int(*int.value()),
        toml_edit::Value::Float(float) => Value::Float(*float.value()),
        toml_edit::Value::Boolean(flag) => Value::Bool(*flag.value()),
        toml_edit::Value::Datetime(datetime) => Value::from(datetime.value().to_string()),
        toml_edit::Value::Array(items) => {
            Value::list(items.iter().map(|item| value_value(item, depth + 1)).collect())
        }
        toml_edit::Value::InlineTable(table) => {
            let map = Map::new();
            for (key, item) in table.iter() {
                map.insert(key, value_value(item, depth + 1));
            }
            Value::Map(map)
        }
    }
}

struct Encoder {
    out: String,
}

/// What TOML makes of a value: a table, an array of tables, or a plain value.
fn is_table(value: &Value) -> bool {
    matches!(resolve(value), Value::Map(_))
}

fn is_table_array(value: &Value) -> bool {
    match resolve(value) {
        Value::List(items) => !items.is_empty() && items.iter().all(is_table),
        _ => false,
    }
}

fn resolve(value: &Value) -> Value {
    match value {
        Value::Object(object) => object.to_value(),
        other => other.clone(),
    }
}

fn is_bare(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn key_part(key: &str) -> String {
    if is_bare(key) {
        key.to_string()
    } else {
        quoted(key)
    }
}

fn key_path(key: &[String]) -> String {
    key.iter()
        .map(|part| key_part(part))
        .collect::<Vec<_>>()
        .join(".")
}

fn indent(key: &[String]) -> String {
    "  ".repeat(key.len().saturating_sub(1))
}

impl Encoder {
    fn newline(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    fn encode(&mut self, key: &[String], value: &Value, depth: usize) -> Result<(), TomlError> {
        if depth > MAX_VALUE_DEPTH {
            return Err(TomlError("toml: value nests too deep".into()));
        }
        if self.out.len() > crate::gotemplate::funcs::MAX_TEXT_BYTES {
            return Err(TomlError("toml: output exceeds the size limit".into()));
        }
        match resolve(value) {
            Value::Nil => Ok(()),
            Value::Map(map) => self.table(key, &map, depth),
            list @ Value::List(_) if is_table_array(&list) => {
                let Value::List(items) = list else {
                    return Ok(());
                };
                if key.is_empty() {
                    return Err(TomlError(
                        "toml: top-level values must be Go maps or structs".into(),
                    ));
                }
                for item in items.iter() {
                    if let Value::Map(map) = resolve(item) {
                        self.newline();
                        let _ = write!(self.out, "{}[[{}]]", indent(key), key_path(key));
                        self.newline();
                        self.map_body(key, &map, depth)?;
                    }
                }
                Ok(())
            }
            other => {
                if key.is_empty() {
                    return self.element(&other, depth);
                }
                let last = key.last().map(String::as_str).unwrap_or_default();
                let _ = write!(self.out, "{}{} = ", indent(key), key_part(last));
                self.element(&other, depth)?;
                self.newline();
                Ok(())
            }
        }
    }

    fn table(&mut self, key: &[String], map: &Map, depth: usize) -> Result<(), TomlError> {
        if key.len() == 1 {
            self.newline();
        }
        if !key.is_empty() {
            let _ = write!(self.out, "{}[{}]", indent(key), key_path(key));
            self.newline();
        }
        self.map_body(key, map, depth)
    }

    fn map_body(&mut self, key: &[String], map: &Map, depth: usize) -> Result<(), TomlError> {
        let entries = map.entries();
        let (subs, direct): (Vec<_>, Vec<_>) = entries
            .into_iter()
            .partition(|(_, value)| is_table(value) || is_table_array(value));
        for (name, value) in direct.iter().chain(subs.iter()) {
            let mut path = key.to_vec();
            path.push(name.clone());
            crate::formats::deeper(|| self.encode(&path, value, depth + 1))?;
        }
        Ok(())
    }

    fn element(&mut self, value: &Value, depth: usize) -> Result<(), TomlError> {
        if depth > MAX_VALUE_DEPTH {
            return Err(TomlError("toml: value nests too deep".into()));
        }
        if self.out.len() > crate::gotemplate::funcs::MAX_TEXT_BYTES {
            return Err(TomlError("toml: output exceeds the size limit".into()));
        }
        match resolve(value) {
            Value::Nil => return Err(TomlError("toml: cannot encode a nil value".into())),
            Value::Bool(flag) => self.out.push_str(if flag { "true" } else { "false" }),
            Value::Int(int) => {
                let _ = write!(self.out, "{int}");
            }
            Value::Float(float) => {
                if float.is_nan() {
                    self.out
                        .push_str(if float.is_sign_negative() { "-nan" } else { "nan" });
                } else if float.is_infinite() {
                    self.out.push_str(if float < 0.0 { "-inf" } else { "inf" });
                } else {
                    let text = format_g(float);
                    self.out.push_str(&text);
                    if !text.contains(['.', 'e']) {
                        self.out.push_str(".0");
                    }
                }
            }
            Value::String(text) => self.out.push_str(&quoted(&text)),
            Value::Bytes(bytes) => {
                // Go encodes []byte as an array of integers.
                let items: Vec<String> = bytes.iter().map(u8::to_string).collect();
                let _ = write!(self.out, "[{}]", items.join(", "));
            }
            Value::List(items) => {
                self.out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        self.out.push_str(", ");
                    }
                    crate::formats::deeper(|| self.element(item, depth + 1))?;
                }
                self.out.push(']');
            }
            Value::Map(map) => {
                self.out.push('{');
                let entries: Vec<_> = map.entries().into_iter().filter(|(_, v)| !v.is_nil()).collect();
                for (index, (name, item)) in entries.iter().enumerate() {
                    if index > 0 {
                        self.out.push_str(", ");
                    }
                    let _ = write!(self.out, "{} = ", key_part(name));
                    crate::formats::deeper(|| self.element(item, depth + 1))?;
                }
                self.out.push('}');
            }
            Value::Object(_) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoder_as_helm_printed() {
        let json = r#"{"s":"<a>&\b\f\u2028\u0001\u007f\u00e9 \"q\\","f":[1.5,1e21,1e-7,0.000001,123456789012345678901234,-0.0,1e20],"l":[{"b":1,"a":[]},{}],"n":null}"#;
        let value = Value::from_json(&serde_json::from_str(json).unwrap_or_default());
        assert_eq!(
            marshal(&value).as_deref(),
            Ok(concat!(
                "f = [1.5, 1e+21, 1e-07, 1e-06, 1.2345678901234569e+23, -0.0, 1e+20]\n",
                "s = \"<a>&\\b\\f\u{2028}\\u0001\\u007fé \\\"q\\\\\"\n",
                "\n[[l]]\n  a = []\n  b = 1.0\n\n[[l]]\n"
            ))
        );
    }

    #[test]
    fn encoder_tables_as_helm_printed() {
        let json = r#"{"z": 1, "a b": "x", "é": true, "": "empty", "n": null, "t": {"k": "v", "sub": {"deep": {"x": [1, 2]}, "arr": [{"q": 1}, {"r": {"s": 2}}]}, "inl": [{"a": 1}, 2]}, "list": [[1, 2], ["a"], []], "s": "multi\nline\ttab \u001b", "f": 3, "big": 1e6, "m": {}, "dotted.key": {"x": 1}, "lm": [{}]}"#;
        let value = Value::from_json(&serde_json::from_str(json).unwrap_or_default());
        let expected = "\"\" = \"empty\"\n\"a b\" = \"x\"\nbig = 1e+06\nf = 3.0\nlist = [[1.0, 2.0], [\"a\"], []]\ns = \"multi\\nline\\ttab \\u001b\"\nz = 1.0\n\"é\" = true\n\n[\"dotted.key\"]\n  x = 1.0\n\n[[lm]]\n\n[m]\n\n[t]\n  inl = [{a = 1.0}, 2.0]\n  k = \"v\"\n  [t.sub]\n\n    [[t.sub.arr]]\n      q = 1.0\n\n    [[t.sub.arr]]\n      [t.sub.arr.r]\n        s = 2.0\n    [t.sub.deep]\n      x = [1.0, 2.0]\n";
        assert_eq!(marshal(&value).as_deref(), Ok(expected));
    }

    #[test]
    fn reader_gives_go_values() {
        let value = parse("a = 1\nb = [1.5, \"x\"]\n[t]\nc = true\n").unwrap_or_default();
        let json = crate::formats::json::marshal(&value, true, None).unwrap_or_default();
        assert_eq!(json, r#"{"a":1,"b":[1.5,"x"],"t":{"c":true}}"#);
        assert!(parse("a: 1").is_err_and(|err| err.0.starts_with("toml: line 1: ")));
    }

    /// Prints `toToml` of the JSON in `$FORMATS_JSON_FILE` (by hand, against Helm).
    #[test]
    #[ignore = "probe, run by hand"]
    fn probe_to_toml() {
        let Ok(path) = std::env::var("FORMATS_JSON_FILE") else {
            return;
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let value = Value::from_json(&serde_json::from_str(&text).unwrap_or_default());
        print!("{}", marshal(&value).unwrap_or_else(|err| err.0));
    }
}
