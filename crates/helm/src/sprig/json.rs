//! Sprig's JSON functions (`toJson`, `toPrettyJson`, `toRawJson`, their `must…` forms, `fromJson`,
//! `mustFromJson`). Helm replaces `toJson`, `mustToJson` and `fromJson` with its own (see `formats::funcs`).

use crate::formats::json;
use crate::gotemplate::funcs::param_str;
use crate::gotemplate::{Arity, FuncError, FuncMap, Runtime, Value};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("toJson", Arity::Exact(1), to_json);
    map.add("mustToJson", Arity::Exact(1), must_to_json);
    map.add("toPrettyJson", Arity::Exact(1), to_pretty_json);
    map.add("mustToPrettyJson", Arity::Exact(1), must_to_pretty_json);
    map.add("toRawJson", Arity::Exact(1), to_raw_json);
    map.add("mustToRawJson", Arity::Exact(1), must_to_raw_json);
    map.add("fromJson", Arity::Exact(1), from_json);
    map.add("mustFromJson", Arity::Exact(1), must_from_json);
}

fn arg(args: &[Value]) -> Value {
    args.first().cloned().unwrap_or_default()
}

fn marshal(args: &[Value], escape_html: bool, indent: Option<&str>) -> Result<Value, FuncError> {
    json::marshal(&arg(args), escape_html, indent)
        .map(Value::from)
        .map_err(|err| FuncError::new(err.0))
}

fn to_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(marshal(args, true, None).unwrap_or_else(|_| Value::from("")))
}

fn must_to_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    marshal(args, true, None)
}

fn to_pretty_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(marshal(args, true, Some("  ")).unwrap_or_else(|_| Value::from("")))
}

fn must_to_pretty_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    marshal(args, true, Some("  "))
}

fn to_raw_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(marshal(args, false, None).unwrap_or_else(|_| Value::from("")))
}

fn must_to_raw_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    marshal(args, false, None)
}

fn from_json(rt: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(must_from_json(rt, args).unwrap_or_default())
}

fn must_from_json(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&arg(args))?;
    json::unmarshal(&text).map_err(|err| FuncError::new(err.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::NoRuntime;

    #[test]
    fn sprig_json_as_sprig_prints_it() {
        let value = json::unmarshal(r#"{"s":"<a>","l":[1,{}]}"#).unwrap_or_default();
        let args = [value];
        let out = |f: crate::gotemplate::FuncImpl| f(&mut NoRuntime, &args).unwrap_or_default();
        assert_eq!(out(to_json).as_str(), Some(r#"{"l":[1,{}],"s":"\u003ca\u003e"}"#));
        assert_eq!(out(to_raw_json).as_str(), Some(r#"{"l":[1,{}],"s":"<a>"}"#));
        assert_eq!(
            out(to_pretty_json).as_str(),
            Some("{\n  \"l\": [\n    1,\n    {}\n  ],\n  \"s\": \"\\u003ca\\u003e\"\n}")
        );
        let err = must_from_json(&mut NoRuntime, &[Value::from("{\"a\" 1}")]);
        assert_eq!(
            err.map(|_| ()),
            Err(FuncError::new("invalid character '1' after object key"))
        );
        assert!(from_json(&mut NoRuntime, &[Value::from("nope")]).is_ok_and(|v| v.is_nil()));
    }
}
