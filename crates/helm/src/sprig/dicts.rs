//! Sprig's dicts (`dict`, `get`, `set`, `unset`, `hasKey`, `pluck`, `keys`, `pick`, `omit`, `merge`,
//! `mergeOverwrite`, `values`, `dig`, `deepCopy`, …).
//!
//! Dicts are Go maps: shared and mutable. `set`, `unset`, `merge` and `mergeOverwrite` change the map they are
//! given and return it. The merges follow dario.cat/mergo v1.0 on `map[string]interface{}` as Sprig calls it:
//!
//! - both values maps: merged recursively, into the destination's own nested map;
//! - `merge`: a key missing in the destination, or holding an empty value (nil, false, 0, "", empty list or map),
//!   takes the source value (even an empty one); a nil source value is skipped;
//! - `mergeOverwrite`: every source value replaces the destination's, empty ones and nil included, except that a
//!   map merged into a non-empty destination map keeps that map;
//! - lists are replaced, never merged; values taken from the source are shared, not copied.
//!
//! `keys` and `values` return the entries in key order (Go's map order is random; sorted is one of its orders).

use std::collections::BTreeMap;

use crate::gotemplate::funcs::{Arity, FuncError, FuncMap, Runtime, param_str, wrong_type};
use crate::gotemplate::value::MAX_VALUE_DEPTH;
use crate::gotemplate::{Map, Value};

use super::conv::strval;
use super::reflect::is_empty;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("dict", Arity::AtLeast(0), dict);
    map.add("get", Arity::Exact(2), get);
    map.add("set", Arity::Exact(3), set);
    map.add("unset", Arity::Exact(2), unset);
    map.add("hasKey", Arity::Exact(2), has_key);
    map.add("pluck", Arity::AtLeast(1), pluck);
    map.add("keys", Arity::AtLeast(0), keys);
    map.add("pick", Arity::AtLeast(1), pick);
    map.add("omit", Arity::AtLeast(1), omit);
    map.add("values", Arity::Exact(1), values);
    map.add("merge", Arity::AtLeast(1), |_, args| {
        Ok(merge_all(args, false).unwrap_or_else(|_| Value::from("")))
    });
    map.add("mustMerge", Arity::AtLeast(1), |_, args| merge_all(args, false));
    map.add("mergeOverwrite", Arity::AtLeast(1), |_, args| {
        Ok(merge_all(args, true).unwrap_or_else(|_| Value::from("")))
    });
    map.add("mustMergeOverwrite", Arity::AtLeast(1), |_, args| {
        merge_all(args, true)
    });
    map.add("deepCopy", Arity::Exact(1), deep_copy);
    map.add("mustDeepCopy", Arity::Exact(1), deep_copy);
    map.add("dig", Arity::AtLeast(0), dig);
}

/// A `map[string]interface{}` parameter: a map, or nil (Go's nil map: readable, not writable).
pub(crate) fn param_map(value: &Value) -> Result<Option<Map>, FuncError> {
    match value {
        Value::Map(map) => Ok(Some(map.clone())),
        Value::Nil => Ok(None),
        other => Err(wrong_type("map[string]interface {}", other)),
    }
}

fn arg(args: &[Value], index: usize) -> &Value {
    args.get(index).unwrap_or(&Value::Nil)
}

fn str_arg(args: &[Value], index: usize) -> Result<String, FuncError> {
    param_str(arg(args, index))
}

/// `dict K V …`: keys through `strval`; a key without a value maps to "".
fn dict(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut entries = BTreeMap::new();
    for pair in args.chunks(2) {
        let key = strval(&pair[0]);
        entries.insert(key, pair.get(1).cloned().unwrap_or_else(|| Value::from("")));
    }
    Ok(Value::Map(Map::from_entries(entries)))
}

/// `get DICT KEY`: the value, or "" (a string) when the key is missing.
fn get(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let map = param_map(arg(args, 0))?;
    let key = str_arg(args, 1)?;
    Ok(map
        .and_then(|map| map.get(&key))
        .unwrap_or_else(|| Value::from("")))
}

fn set(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let map = param_map(arg(args, 0))?;
    let key = str_arg(args, 1)?;
    let map = map.ok_or_else(|| FuncError::new("assignment to entry in nil map"))?;
    map.insert(key, arg(args, 2).clone());
    Ok(Value::Map(map))
}

fn unset(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let map = param_map(arg(args, 0))?;
    let key = str_arg(args, 1)?;
    Ok(match map {
        Some(map) => {
            map.remove(&key);
            Value::Map(map)
        }
        // Go returns the nil map, which prints and reflects as an empty map.
        None => Value::Map(Map::new()),
    })
}

fn has_key(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let map = param_map(arg(args, 0))?;
    let key = str_arg(args, 1)?;
    Ok(Value::Bool(map.is_some_and(|map| map.contains_key(&key))))
}

fn pluck(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let key = str_arg(args, 0)?;
    let mut out = Vec::new();
    for dict in args.iter().skip(1) {
        if let Some(value) = param_map(dict)?.and_then(|map| map.get(&key)) {
            out.push(value);
        }
    }
    Ok(Value::list(out))
}

fn keys(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut out = Vec::new();
    for dict in args {
        if let Some(map) = param_map(dict)? {
            out.extend(map.keys().into_iter().map(Value::from));
        }
    }
    Ok(Value::list(out))
}

fn pick(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let map = param_map(arg(args, 0))?;
    let wanted = args
        .iter()
        .skip(1)
        .map(param_str)
        .collect::<Result<Vec<_>, _>>()?;
    let mut entries = BTreeMap::new();
    if let Some(map) = map {
        for key in wanted {
            if let Some(value) = map.get(&key) {
                entries.insert(key, value);
            }
        }
    }
    Ok(Value::Map(Map::from_entries(entries)))
}

fn omit(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let map = param_map(arg(args, 0))?;
    let unwanted = args
        .iter()
        .skip(1)
        .map(param_str)
        .collect::<Result<Vec<_>, _>>()?;
    let entries = map
        .map(|map| {
            map.entries()
                .into_iter()
                .filter(|(key, _)| !unwanted.contains(key))
                .collect()
        })
        .unwrap_or_default();
    Ok(Value::Map(Map::from_entries(entries)))
}

fn values(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let map = param_map(arg(args, 0))?;
    Ok(Value::list(
        map.map(|map| map.entries().into_iter().map(|(_, value)| value).collect())
            .unwrap_or_default(),
    ))
}

/// `merge`/`mergeOverwrite DST SRC…`: SRCs merged into DST in place (a nil DST becomes a new map); DST returned.
fn merge_all(args: &[Value], overwrite: bool) -> Result<Value, FuncError> {
    let dst = param_map(arg(args, 0))?.unwrap_or_default();
    for src in args.iter().skip(1) {
        if let Some(src) = param_map(src)? {
            merge_into(&dst, &src, overwrite, 0)?;
        }
    }
    Ok(Value::Map(dst))
}

/// mergo's map merge (see the module documentation).
fn merge_into(dst: &Map, src: &Map, overwrite: bool, depth: usize) -> Result<(), FuncError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(FuncError::new(format!(
            "merge: maps nest deeper than {MAX_VALUE_DEPTH} levels"
        )));
    }
    for (key, src_value) in src.entries() {
        if src_value.is_nil() {
            if overwrite {
                dst.insert(key, Value::Nil);
            }
            continue;
        }
        let dst_value = dst.get(&key);
        if let (Value::Map(src_map), Some(Value::Map(dst_map))) = (&src_value, &dst_value) {
            if !src_map.ptr_eq(dst_map) {
                merge_into(dst_map, src_map, overwrite, depth + 1)?;
            }
            if !dst_map.is_empty() {
                continue;
            }
        }
        let dst_empty = dst_value.as_ref().is_none_or(is_empty);
        if overwrite || dst_empty {
            dst.insert(key, src_value);
        }
    }
    Ok(())
}

fn deep_copy(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let value = arg(args, 0);
    if value.is_nil() {
        return Err(FuncError::new(
            "reflect: call of reflect.Value.Type on zero Value",
        ));
    }
    value
        .deep_copy()
        .map_err(|error| FuncError::new(error.to_string()))
}

/// Go's message for a failed `x.(T)` on an `interface{}`.
fn conversion_error(value: &Value, want: &str) -> FuncError {
    let got = match value {
        Value::Nil => "nil".to_string(),
        other => other.type_name(),
    };
    FuncError::new(format!(
        "interface conversion: interface {{}} is {got}, not {want}"
    ))
}

/// `dig KEY… DEFAULT DICT`: the value at the key path, DEFAULT when a key is missing.
fn dig(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    if args.len() < 3 {
        return Err(FuncError::new("dig needs at least three arguments"));
    }
    let dict = &args[args.len() - 1];
    let default = &args[args.len() - 2];
    let Value::Map(mut map) = dict.clone() else {
        return Err(conversion_error(dict, "map[string]interface {}"));
    };
    let keys = args[..args.len() - 2]
        .iter()
        .map(|key| {
            key.as_str()
                .map(str::to_string)
                .ok_or_else(|| conversion_error(key, "string"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (index, key) in keys.iter().enumerate() {
        let Some(step) = map.get(key) else {
            return Ok(default.clone());
        };
        if index + 1 == keys.len() {
            return Ok(step);
        }
        match step {
            Value::Map(next) => map = next,
            other => return Err(conversion_error(&other, "map[string]interface {}")),
        }
    }
    Ok(default.clone())
}

#[cfg(test)]
mod tests {
    use crate::gotemplate::Value;
    use crate::sprig::conv::test_support::*;

    #[test]
    fn dict_access() {
        let cases: Vec<(&str, Vec<Value>, Value)> = vec![
            (
                "dict",
                vec![s("a"), i(1), s("b")],
                d(vec![("a", i(1)), ("b", s(""))]),
            ),
            (
                "dict",
                vec![i(1), i(2), Value::Nil, i(3)],
                d(vec![("1", i(2)), ("<nil>", i(3))]),
            ),
            ("dict", vec![], d(vec![])),
            ("get", vec![d(vec![("a", i(1))]), s("a")], i(1)),
            ("get", vec![d(vec![("a", i(1))]), s("b")], s("")),
            ("get", vec![d(vec![("a", Value::Nil)]), s("a")], Value::Nil),
            ("get", vec![Value::Nil, s("a")], s("")),
            (
                "hasKey",
                vec![d(vec![("a", Value::Nil)]), s("a")],
                Value::Bool(true),
            ),
            ("hasKey", vec![d(vec![]), s("a")], Value::Bool(false)),
            ("hasKey", vec![Value::Nil, s("a")], Value::Bool(false)),
            (
                "pluck",
                vec![
                    s("a"),
                    d(vec![("a", i(1))]),
                    d(vec![("b", i(2))]),
                    d(vec![("a", i(3))]),
                ],
                l(vec![i(1), i(3)]),
            ),
            ("pluck", vec![s("a")], l(vec![])),
            (
                "keys",
                vec![
                    d(vec![("b", i(1)), ("a", i(2))]),
                    d(vec![("c", i(3)), ("a", i(4))]),
                ],
                l(vec![s("a"), s("b"), s("a"), s("c")]),
            ),
            ("keys", vec![], l(vec![])),
            (
                "pick",
                vec![
                    d(vec![("a", i(1)), ("b", i(2)), ("c", i(3))]),
                    s("a"),
                    s("c"),
                    s("z"),
                ],
                d(vec![("a", i(1)), ("c", i(3))]),
            ),
            (
                "omit",
                vec![d(vec![("a", i(1)), ("b", i(2)), ("c", i(3))]), s("a"), s("z")],
                d(vec![("b", i(2)), ("c", i(3))]),
            ),
            ("pick", vec![d(vec![("a", i(1))])], d(vec![])),
            (
                "values",
                vec![d(vec![("a", i(1)), ("b", i(2))])],
                l(vec![i(1), i(2)]),
            ),
            ("values", vec![d(vec![])], l(vec![])),
            (
                "dig",
                vec![s("a"), s("b"), s("def"), d(vec![("a", d(vec![("b", i(1))]))])],
                i(1),
            ),
            (
                "dig",
                vec![s("a"), s("c"), s("def"), d(vec![("a", d(vec![("b", i(1))]))])],
                s("def"),
            ),
            ("dig", vec![s("x"), s("def"), d(vec![])], s("def")),
            (
                "dig",
                vec![s("a"), s("def"), d(vec![("a", Value::Nil)])],
                Value::Nil,
            ),
            (
                "deepCopy",
                vec![l(vec![i(1), d(vec![("a", i(1))])])],
                l(vec![i(1), d(vec![("a", i(1))])]),
            ),
            ("mustDeepCopy", vec![i(1)], i(1)),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, &args), ok(want), "{name} {args:?}");
        }
        let errors: Vec<(&str, Vec<Value>, &str)> = vec![
            (
                "get",
                vec![l(vec![i(1)]), s("a")],
                "wrong type for value; expected map[string]interface {}; got []interface {}",
            ),
            (
                "set",
                vec![Value::Nil, s("a"), i(1)],
                "assignment to entry in nil map",
            ),
            (
                "set",
                vec![d(vec![]), i(1), i(2)],
                "wrong type for value; expected string; got int",
            ),
            (
                "dig",
                vec![s("a"), s("b"), s("def"), d(vec![("a", i(1))])],
                "interface conversion: interface {} is int, not map[string]interface {}",
            ),
            (
                "dig",
                vec![s("a"), s("def"), Value::Nil],
                "interface conversion: interface {} is nil, not map[string]interface {}",
            ),
            (
                "dig",
                vec![i(1), s("def"), d(vec![])],
                "interface conversion: interface {} is int, not string",
            ),
            ("dig", vec![s("a"), s("b")], "dig needs at least three arguments"),
            (
                "dig",
                vec![s("a"), s("b"), s("d"), d(vec![("a", Value::Nil)])],
                "interface conversion: interface {} is nil, not map[string]interface {}",
            ),
            (
                "deepCopy",
                vec![Value::Nil],
                "reflect: call of reflect.Value.Type on zero Value",
            ),
            (
                "mustDeepCopy",
                vec![Value::Nil],
                "reflect: call of reflect.Value.Type on zero Value",
            ),
        ];
        for (name, args, want) in errors {
            assert_eq!(call(name, &args), err(want), "{name} {args:?}");
        }
    }

    #[test]
    fn set_unset_and_merges_change_the_map_in_place() {
        let map = d(vec![("a", i(1))]);
        assert_eq!(
            call("set", &[map.clone(), s("b"), i(2)]),
            ok(d(vec![("a", i(1)), ("b", i(2))]))
        );
        assert_eq!(call("unset", &[map.clone(), s("a")]), ok(d(vec![("b", i(2))])));
        assert_eq!(format!("{map:?}"), format!("{:?}", d(vec![("b", i(2))])));
        assert_eq!(call("unset", &[Value::Nil, s("a")]), ok(d(vec![])));

        let dst = d(vec![
            ("a", i(1)),
            ("n", d(vec![("x", i(1)), ("l", l(vec![i(1), i(2)]))])),
            ("z", i(0)),
            ("f", Value::Bool(false)),
            ("s", s("")),
            ("m", d(vec![])),
        ]);
        let src = d(vec![
            ("a", i(2)),
            ("b", i(3)),
            ("n", d(vec![("x", i(2)), ("y", i(3)), ("l", l(vec![i(9)]))])),
            ("z", i(5)),
            ("f", Value::Bool(true)),
            ("s", s("x")),
            ("m", d(vec![("q", i(1))])),
        ]);
        let want = d(vec![
            ("a", i(1)),
            ("b", i(3)),
            ("f", Value::Bool(true)),
            ("m", d(vec![("q", i(1))])),
            ("n", d(vec![("l", l(vec![i(1), i(2)])), ("x", i(1)), ("y", i(3))])),
            ("s", s("x")),
            ("z", i(5)),
        ]);
        assert_eq!(call("merge", &[dst.clone(), src]), ok(want.clone()));
        assert_eq!(format!("{dst:?}"), format!("{want:?}"));

        let merges: Vec<(&str, Value, Value, Value)> = vec![
            (
                "mergeOverwrite",
                d(vec![("a", i(1))]),
                d(vec![("a", s(""))]),
                d(vec![("a", s(""))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", i(1))]),
                d(vec![("a", i(0))]),
                d(vec![("a", i(0))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", i(1))]),
                d(vec![("a", Value::Bool(false))]),
                d(vec![("a", Value::Bool(false))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", i(1))]),
                d(vec![("a", Value::Nil)]),
                d(vec![("a", Value::Nil)]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", i(1))]),
                d(vec![("a", l(vec![]))]),
                d(vec![("a", l(vec![]))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", i(1))]),
                d(vec![("a", d(vec![]))]),
                d(vec![("a", d(vec![]))]),
            ),
            (
                "merge",
                d(vec![("a", Value::Nil)]),
                d(vec![("a", i(1))]),
                d(vec![("a", i(1))]),
            ),
            (
                "merge",
                d(vec![("a", l(vec![]))]),
                d(vec![("a", l(vec![i(1)]))]),
                d(vec![("a", l(vec![i(1)]))]),
            ),
            (
                "merge",
                d(vec![("a", d(vec![]))]),
                d(vec![("a", d(vec![("b", i(1))]))]),
                d(vec![("a", d(vec![("b", i(1))]))]),
            ),
            (
                "merge",
                d(vec![("a", i(1))]),
                d(vec![("a", d(vec![("b", i(1))]))]),
                d(vec![("a", i(1))]),
            ),
            (
                "merge",
                d(vec![("a", d(vec![("b", i(1))]))]),
                d(vec![("a", i(1))]),
                d(vec![("a", d(vec![("b", i(1))]))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", d(vec![("b", i(1))]))]),
                d(vec![("a", i(1))]),
                d(vec![("a", i(1))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", i(1))]),
                d(vec![("a", d(vec![("b", i(1))]))]),
                d(vec![("a", d(vec![("b", i(1))]))]),
            ),
            (
                "merge",
                d(vec![("a", s(""))]),
                d(vec![("a", i(2))]),
                d(vec![("a", i(2))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", d(vec![("b", i(1)), ("c", i(2))]))]),
                d(vec![("a", d(vec![("b", i(0)), ("d", s(""))]))]),
                d(vec![("a", d(vec![("b", i(0)), ("c", i(2)), ("d", s(""))]))]),
            ),
            (
                "merge",
                d(vec![("a", d(vec![("b", i(0))]))]),
                d(vec![("a", d(vec![("b", i(5)), ("c", i(1))]))]),
                d(vec![("a", d(vec![("b", i(5)), ("c", i(1))]))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", d(vec![("b", i(1))]))]),
                d(vec![("a", d(vec![]))]),
                d(vec![("a", d(vec![("b", i(1))]))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", d(vec![("b", i(1))]))]),
                d(vec![("a", Value::Nil)]),
                d(vec![("a", Value::Nil)]),
            ),
            (
                "merge",
                d(vec![("a", i(0))]),
                d(vec![("a", s(""))]),
                d(vec![("a", s(""))]),
            ),
            ("merge", d(vec![]), d(vec![("a", Value::Nil)]), d(vec![])),
            (
                "merge",
                d(vec![("a", Value::Bool(false))]),
                d(vec![("a", Value::Nil)]),
                d(vec![("a", Value::Bool(false))]),
            ),
            (
                "mergeOverwrite",
                d(vec![]),
                d(vec![("a", Value::Nil)]),
                d(vec![("a", Value::Nil)]),
            ),
            (
                "merge",
                d(vec![("a", l(vec![i(1)]))]),
                d(vec![("a", l(vec![i(2), i(3)]))]),
                d(vec![("a", l(vec![i(1)]))]),
            ),
            (
                "mergeOverwrite",
                d(vec![("a", l(vec![i(1), i(2)]))]),
                d(vec![("a", l(vec![i(3)]))]),
                d(vec![("a", l(vec![i(3)]))]),
            ),
            ("merge", d(vec![("a", i(1))]), Value::Nil, d(vec![("a", i(1))])),
            ("merge", Value::Nil, d(vec![("a", i(1))]), d(vec![("a", i(1))])),
        ];
        for (name, dst, src, want) in merges {
            assert_eq!(
                call(name, &[dst.clone(), src.clone()]),
                ok(want),
                "{name} {dst:?} {src:?}"
            );
        }
        assert_eq!(
            call(
                "merge",
                &[d(vec![]), d(vec![("a", i(1))]), d(vec![("a", i(2)), ("b", i(3))])]
            ),
            ok(d(vec![("a", i(1)), ("b", i(3))]))
        );

        // A nested map missing in the destination is shared with the source; one present is merged into.
        let nested = d(vec![("y", i(1))]);
        let merged = call_raw("merge", &[d(vec![]), d(vec![("x", nested.clone())])]).expect("merge");
        let inner = merged.as_map().and_then(|m| m.get("x")).expect("x");
        inner.as_map().expect("map").insert("y", i(2));
        assert_eq!(format!("{nested:?}"), format!("{:?}", d(vec![("y", i(2))])));
        // deepCopy copies.
        let original = d(vec![("x", d(vec![("y", i(1))]))]);
        let copy = call_raw("deepCopy", std::slice::from_ref(&original)).expect("copy");
        copy.as_map()
            .and_then(|m| m.get("x"))
            .and_then(|x| x.as_map().cloned())
            .expect("x")
            .insert("y", i(2));
        assert_eq!(
            format!("{original:?}"),
            format!("{:?}", d(vec![("x", d(vec![("y", i(1))]))]))
        );
    }
}
