//! Helm's data-format template functions (`pkg/engine/funcs.go`): `toYaml`, `mustToYaml`, `toYamlPretty`,
//! `fromYaml`, `fromYamlArray`, `toJson`, `mustToJson`, `fromJson`, `fromJsonArray`, `toToml`, `mustToToml`,
//! `fromToml`.
//!
//! Helm registers these after Sprig's, so its `toJson`, `mustToJson` and `fromJson` replace Sprig's. Error
//! behaviour is Helm's: `toYaml`/`toJson` of something unmarshalable give `""`, `fromYaml`/`fromJson` of bad input
//! give a map with an `Error` key, the `…Array` variants a one-item list holding the message, the `must…`
//! variants fail the template.

use serde_json::Value as Json;

use super::{json, toml, yaml};
use crate::gotemplate::funcs::param_str;
use crate::gotemplate::{Arity, FuncError, FuncMap, Map, Runtime, Value};

/// Helm's data-format functions on their own (what `register` adds).
#[must_use]
pub fn format_funcs() -> FuncMap {
    let mut map = FuncMap::new();
    register(&mut map);
    map
}

/// Registers Helm's data-format functions (call after Sprig's, whose `toJson`/`fromJson` these replace).
pub(crate) fn register(map: &mut FuncMap) {
    map.add("toYaml", Arity::Exact(1), to_yaml);
    map.add("mustToYaml", Arity::Exact(1), must_to_yaml);
    map.add("toYamlPretty", Arity::Exact(1), to_yaml_pretty);
    map.add("fromYaml", Arity::Exact(1), from_yaml);
    map.add("fromYamlArray", Arity::Exact(1), from_yaml_array);
    map.add("toJson", Arity::Exact(1), to_json);
    map.add("mustToJson", Arity::Exact(1), must_to_json);
    map.add("fromJson", Arity::Exact(1), from_json);
    map.add("fromJsonArray", Arity::Exact(1), from_json_array);
    map.add("toToml", Arity::Exact(1), to_toml);
    map.add("mustToToml", Arity::Exact(1), must_to_toml);
    map.add("fromToml", Arity::Exact(1), from_toml);
}

fn arg(args: &[Value]) -> Value {
    args.first().cloned().unwrap_or_default()
}

fn trim_newline(text: String) -> Value {
    Value::from(text.strip_suffix('\n').map(str::to_string).unwrap_or(text))
}

fn to_yaml(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(yaml::marshal(&arg(args)).map_or_else(|_| Value::string(""), trim_newline))
}

fn must_to_yaml(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    yaml::marshal(&arg(args))
        .map(trim_newline)
        .map_err(|err| FuncError::new(err.0))
}

fn to_yaml_pretty(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(yaml::marshal_pretty(&arg(args)).map_or_else(|_| Value::string(""), trim_newline))
}

/// Go's `json` error for a decoded value that does not fit the target type.
fn type_error(json: &Json, target: &str) -> String {
    let kind = match json {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    };
    format!("json: cannot unmarshal {kind} into Go value of type {target}")
}

const MAP_TYPE: &str = "map[string]interface {}";
const LIST_TYPE: &str = "[]interface {}";

fn error_map(message: String) -> Value {
    let map = Map::new();
    map.insert("Error", Value::from(message));
    Value::Map(map)
}

fn from_yaml(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&arg(args))?;
    Ok(match yaml::parse(&text) {
        Ok(json @ Json::Object(_)) => Value::from_json(&json),
        Ok(Json::Null) => Value::Map(Map::new()),
        Ok(other) => error_map(format!(
            "error unmarshaling JSON: while decoding JSON: {}",
            type_error(&other, MAP_TYPE)
        )),
        Err(err) => error_map(err.0),
    })
}

fn from_yaml_array(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&arg(args))?;
    Ok(match yaml::parse(&text) {
        Ok(json @ Json::Array(_)) => Value::from_json(&json),
        Ok(Json::Null) => Value::list(Vec::new()),
        Ok(other) => Value::list(vec![Value::from(format!(
            "error unmarshaling JSON: while decoding JSON: {}",
            type_error(&other, LIST_TYPE)
        ))]),
        Err(err) => Value::list(vec![Value::from(err.0)]),
    })
}

fn to_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(
        json::marshal(&arg(args), true, None).unwrap_or_default(),
    ))
}

fn must_to_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    json::marshal(&arg(args), true, None)
        .map(Value::from)
        .map_err(|err| FuncError::new(err.0))
}

fn from_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&arg(args))?;
    Ok(match json::unmarshal_json(&text) {
        Ok(json @ Json::Object(_)) => Value::from_json(&json),
        Ok(Json::Null) => Value::Map(Map::new()),
        Ok(other) => error_map(type_error(&other, MAP_TYPE)),
        Err(err) => error_map(err.0),
    })
}

fn from_json_array(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&arg(args))?;
    Ok(match json::unmarshal_json(&text) {
        Ok(json @ Json::Array(_)) => Value::from_json(&json),
        Ok(Json::Null) => Value::list(Vec::new()),
        Ok(other) => Value::list(vec![Value::from(type_error(&other, LIST_TYPE))]),
        Err(err) => Value::list(vec![Value::from(err.0)]),
    })
}

fn to_toml(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(toml::marshal(&arg(args)).unwrap_or_else(|err| err.0)))
}

fn must_to_toml(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    toml::marshal(&arg(args))
        .map(Value::from)
        .map_err(|err| FuncError::new(err.0))
}

fn from_toml(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&arg(args))?;
    Ok(match toml::parse(&text) {
        Ok(value) => value,
        Err(err) => error_map(err.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::NoRuntime;

    fn call(name: &str, arg: Value) -> Value {
        let mut map = FuncMap::new();
        register(&mut map);
        let def = map.get(name).copied();
        def.map(|def| (def.call)(&mut NoRuntime, &[arg]).unwrap_or_default())
            .unwrap_or_default()
    }

    fn json_of(value: &Value) -> String {
        json::marshal(value, true, None).unwrap_or_default()
    }

    #[test]
    fn helm_error_behaviour() {
        // Each expectation is what Helm v4 printed for `{{ X | toJson }}`.
        assert_eq!(
            json_of(&call("fromYaml", Value::from("a: [1, 2"))),
            r#"{"Error":"error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'"}"#
        );
        assert_eq!(
            json_of(&call("fromYaml", Value::from("- a"))),
            r#"{"Error":"error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"}"#
        );
        assert_eq!(
            json_of(&call("fromYamlArray", Value::from("a: 1"))),
            r#"["error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go value of type []interface {}"]"#
        );
        assert_eq!(
            json_of(&call("fromJson", Value::from("[1,2"))),
            r#"{"Error":"unexpected end of JSON input"}"#
        );
        assert_eq!(
            json_of(&call("fromJson", Value::from("[1,2]"))),
            r#"{"Error":"json: cannot unmarshal array into Go value of type map[string]interface {}"}"#
        );
        assert_eq!(
            json_of(&call("fromJsonArray", Value::from("{\"a\":1}"))),
            r#"["json: cannot unmarshal object into Go value of type []interface {}"]"#
        );
        assert_eq!(
            json_of(&call("fromYaml", Value::from("a: 1\na: 2"))),
            r#"{"a":2}"#
        );
        assert_eq!(call("toYaml", Value::Float(f64::NAN)).as_str(), Some(""));
        assert_eq!(call("toJson", Value::Float(f64::NAN)).as_str(), Some(""));
        assert_eq!(call("mustToYaml", Value::from("a: 1")).as_str(), Some("'a: 1'"));
        assert_eq!(call("toYaml", Value::Nil).as_str(), Some("null"));
        assert_eq!(call("mustToToml", Value::from("x")).as_str(), Some("\"x\""));
        assert_eq!(
            json_of(&call(
                "fromToml",
                Value::from(
                    "a = 1\nb = 'x'\nc = 1.5\nd = 1979-05-27T07:32:00Z\ne = [1, 2]\n[t]\nx = true\n[[arr]]\ny = 1"
                )
            )),
            r#"{"a":1,"arr":[{"y":1}],"b":"x","c":1.5,"d":"1979-05-27T07:32:00Z","e":[1,2],"t":{"x":true}}"#
        );
    }

    #[test]
    fn from_yaml_as_helm_printed() {
        // testdata/fromyaml.json: [input, what Helm printed for `{{ input | fromYaml | toJson }}`], valid and
        // malformed YAML (go-yaml's messages and line numbers).
        let pairs: Vec<(String, String)> =
            serde_json::from_str(include_str!("testdata/fromyaml.json")).unwrap_or_default();
        assert!(pairs.len() > 100);
        for (input, expected) in pairs {
            assert_eq!(
                json_of(&call("fromYaml", Value::from(input.as_str()))),
                expected,
                "{input:?}"
            );
        }
    }

    /// Prints `fromYaml | toJson` of each string in the JSON list `$FORMATS_YAML_CASES` (by hand, against Helm).
    #[test]
    #[ignore = "probe, run by hand"]
    fn probe_from_yaml_cases() {
        let Ok(path) = std::env::var("FORMATS_YAML_CASES") else {
            return;
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let cases: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
        for case in cases {
            println!("CASE:{}", json_of(&call("fromYaml", Value::from(case))));
        }
    }

    /// For each path listed in `$FORMATS_FILES_LIST`, prints `fromYaml | toJson` of its text (by hand, against Helm).
    #[test]
    #[ignore = "probe, run by hand"]
    fn probe_from_yaml_files() {
        let Ok(list) = std::env::var("FORMATS_FILES_LIST") else {
            return;
        };
        let list = std::fs::read_to_string(list).unwrap_or_default();
        for (index, path) in list.lines().enumerate() {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            println!("##FILE files/{index}.txt");
            println!("{}", json_of(&call("fromYaml", Value::from(text))));
        }
    }
}
