//! Values between JSON, CEL and the combined-status answer: JSON into CEL (integers stay CEL `int`, floats `double`
//! — serde's own conversion would make every JSON number a `uint`, so `obj.spec.replicas + 1` would fail), and a
//! CEL result into a [`Cell`], the seed's typed column value (`{"type":"Number","float":"2"}`, `String`, `Bool`,
//! `Object`, `Array`, `Null`).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use cel::Value;
use cel::objects::{Key, Map};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value as Json;

/// How deep a CEL result may nest when turned back into JSON (deeper parts become `null`).
const MAX_RESULT_DEPTH: usize = 64;

/// JSON as a CEL value: integers as `int` (those above `i64::MAX` as `uint`), other numbers as `double`.
#[must_use]
pub fn json_to_cel(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(value) => Value::Bool(*value),
        Json::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(int), _) => Value::Int(int),
            (None, Some(uint)) => Value::UInt(uint),
            _ => Value::Float(number.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(text) => Value::String(Arc::new(text.clone())),
        Json::Array(items) => Value::List(Arc::new(items.iter().map(json_to_cel).collect())),
        Json::Object(fields) => {
            let map: HashMap<Key, Value> = fields
                .iter()
                .map(|(key, value)| (Key::String(Arc::new(key.clone())), json_to_cel(value)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

/// One column value of a combined-status row.
#[derive(Debug, Clone)]
pub enum Cell {
    /// No value (a missing field, or CEL `null`).
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (CEL `int`, `uint` and `double` alike; shown as a decimal string).
    Number(f64),
    /// A string.
    String(Box<str>),
    /// A list, as JSON.
    Array(Json),
    /// A map, as JSON.
    Object(Json),
}

impl Cell {
    /// The cell of a CEL result; `None` for values with no JSON form (bytes, types, functions…).
    #[must_use]
    pub fn from_cel(value: &Value) -> Option<Cell> {
        Some(match value {
            Value::Null => Cell::Null,
            Value::Bool(value) => Cell::Bool(*value),
            Value::Int(int) => Cell::Number(*int as f64),
            Value::UInt(uint) => Cell::Number(*uint as f64),
            Value::Float(float) => Cell::Number(*float),
            Value::String(text) => Cell::String(text.as_str().into()),
            Value::List(_) => Cell::Array(cel_to_json(value, 0)?),
            Value::Map(_) => Cell::Object(cel_to_json(value, 0)?),
            _ => return None,
        })
    }

    /// The number, if this is one.
    #[must_use]
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Cell::Number(number) if number.is_finite() => Some(*number),
            _ => None,
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Cell::Null => 0,
            Cell::Bool(_) => 1,
            Cell::Number(_) => 2,
            Cell::String(_) => 3,
            Cell::Array(_) => 4,
            Cell::Object(_) => 5,
        }
    }

    /// The seed's type name.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Cell::Null => "Null",
            Cell::Bool(_) => "Bool",
            Cell::Number(_) => "Number",
            Cell::String(_) => "String",
            Cell::Array(_) => "Array",
            Cell::Object(_) => "Object",
        }
    }

    /// The value as text, for tables (`2`, `Running`, `{"replicas":2}`, empty for null).
    #[must_use]
    pub fn display(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Bool(value) => value.to_string(),
            Cell::Number(number) => number_text(*number),
            Cell::String(text) => text.to_string(),
            Cell::Array(json) | Cell::Object(json) => json.to_string(),
        }
    }
}

/// A number as the seed writes it: integers without a fraction (`2`), others in Rust's shortest form (`2.5`).
#[must_use]
pub fn number_text(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{number:.0}")
    } else {
        number.to_string()
    }
}

impl PartialEq for Cell {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Cell {}

impl PartialOrd for Cell {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A total order (rows and groups are sorted by it): null, booleans, numbers, strings, lists, maps; lists and maps
/// by their JSON text.
impl Ord for Cell {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Cell::Bool(a), Cell::Bool(b)) => a.cmp(b),
            (Cell::Number(a), Cell::Number(b)) => a.total_cmp(b),
            (Cell::String(a), Cell::String(b)) => a.cmp(b),
            (Cell::Array(a), Cell::Array(b)) | (Cell::Object(a), Cell::Object(b)) => {
                a.to_string().cmp(&b.to_string())
            }
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl Serialize for Cell {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.type_name())?;
        match self {
            Cell::Null => {}
            Cell::Bool(value) => map.serialize_entry("bool", value)?,
            Cell::Number(number) => map.serialize_entry("float", &number_text(*number))?,
            Cell::String(text) => map.serialize_entry("string", text)?,
            Cell::Array(json) => map.serialize_entry("array", json)?,
            Cell::Object(json) => map.serialize_entry("object", json)?,
        }
        map.end()
    }
}

/// A CEL value as JSON (map keys as strings); `None` for values with no JSON form.
fn cel_to_json(value: &Value, depth: usize) -> Option<Json> {
    if depth > MAX_RESULT_DEPTH {
        return Some(Json::Null);
    }
    Some(match value {
        Value::Null => Json::Null,
        Value::Bool(value) => Json::Bool(*value),
        Value::Int(int) => Json::from(*int),
        Value::UInt(uint) => Json::from(*uint),
        Value::Float(float) => serde_json::Number::from_f64(*float).map_or(Json::Null, Json::Number),
        Value::String(text) => Json::String(text.to_string()),
        Value::List(items) => Json::Array(
            items
                .iter()
                .map(|item| cel_to_json(item, depth + 1))
                .collect::<Option<Vec<_>>>()?,
        ),
        Value::Map(map) => {
            let mut entries: Vec<(String, Json)> = map
                .map
                .iter()
                .map(|(key, value)| {
                    let key = match key {
                        Key::String(text) => text.to_string(),
                        Key::Int(int) => int.to_string(),
                        Key::Uint(uint) => uint.to_string(),
                        Key::Bool(value) => value.to_string(),
                    };
                    cel_to_json(value, depth + 1).map(|value| (key, value))
                })
                .collect::<Option<Vec<_>>>()?;
            // CEL maps are unordered; the answer is not.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries.into_iter().collect())
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_integers_become_cel_ints_and_floats_doubles() {
        assert_eq!(json_to_cel(&serde_json::json!(2)), Value::Int(2));
        assert_eq!(json_to_cel(&serde_json::json!(-2)), Value::Int(-2));
        assert_eq!(json_to_cel(&serde_json::json!(2.5)), Value::Float(2.5));
        assert_eq!(json_to_cel(&serde_json::json!(u64::MAX)), Value::UInt(u64::MAX));
    }

    #[test]
    fn cells_serialize_in_the_seed_shape() {
        let cells = [
            Cell::from_cel(&Value::Int(2)).unwrap(),
            Cell::from_cel(&Value::Float(2.5)).unwrap(),
            Cell::from_cel(&Value::String(Arc::new("Running".into()))).unwrap(),
            Cell::from_cel(&Value::Bool(true)).unwrap(),
            Cell::from_cel(&Value::Null).unwrap(),
            Cell::from_cel(&json_to_cel(&serde_json::json!({"b": [1, 2.5], "a": null}))).unwrap(),
        ];
        assert_eq!(
            serde_json::to_value(cells).unwrap(),
            serde_json::json!([
                {"type": "Number", "float": "2"},
                {"type": "Number", "float": "2.5"},
                {"type": "String", "string": "Running"},
                {"type": "Bool", "bool": true},
                {"type": "Null"},
                {"type": "Object", "object": {"a": null, "b": [1, 2.5]}},
            ])
        );
    }

    #[test]
    fn cells_order_totally_and_numbers_compare_across_int_and_double() {
        assert_eq!(Cell::from_cel(&Value::Int(2)), Cell::from_cel(&Value::Float(2.0)));
        let mut cells = [
            Cell::String("b".into()),
            Cell::Number(3.0),
            Cell::Null,
            Cell::String("a".into()),
            Cell::Number(-1.0),
        ];
        cells.sort();
        let shown: Vec<String> = cells.iter().map(Cell::display).collect();
        assert_eq!(shown, ["", "-1", "3", "a", "b"]);
    }
}
