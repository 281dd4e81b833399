//! Sprig's type inspection and comparison (`typeOf`, `typeIs`, `typeIsLike`, `kindOf`, `kindIs`, `deepEqual`) and
//! defaults and flow (`default`, `empty`, `coalesce`, `all`, `any`, `compact`, `mustCompact`, `ternary`, `fail`).
//!
//! Types are the ones [`Value`] models: Helm's `int64` results (`add`, `int64`, …) and `[]string` results
//! (`splitList`, `keys`, …) are an `int` and a `[]interface {}` here, so `typeOf` names them so and `deepEqual`
//! cannot tell them apart, where Go can.

use crate::gotemplate::Value;
use crate::gotemplate::funcs::{Arity, FuncError, FuncMap, Runtime, param_bool, param_str};
use crate::gotemplate::value::MAX_VALUE_DEPTH;

use super::lists::list_arg;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("typeOf", Arity::Exact(1), |_, args| {
        Ok(Value::from(arg(args, 0).type_name()))
    });
    map.add("typeIs", Arity::Exact(2), |_, args| {
        Ok(Value::Bool(param_str(arg(args, 0))? == arg(args, 1).type_name()))
    });
    map.add("typeIsLike", Arity::Exact(2), |_, args| {
        let target = param_str(arg(args, 0))?;
        let name = arg(args, 1).type_name();
        Ok(Value::Bool(name == target || name == format!("*{target}")))
    });
    map.add("kindOf", Arity::Exact(1), |_, args| {
        Ok(Value::from(arg(args, 0).kind().name()))
    });
    map.add("kindIs", Arity::Exact(2), |_, args| {
        Ok(Value::Bool(
            param_str(arg(args, 0))? == arg(args, 1).kind().name(),
        ))
    });
    map.add("deepEqual", Arity::Exact(2), |_, args| {
        Ok(Value::Bool(deep_equal(arg(args, 0), arg(args, 1))))
    });
    map.add("default", Arity::AtLeast(1), default);
    map.add("empty", Arity::Exact(1), |_, args| {
        Ok(Value::Bool(is_empty(arg(args, 0))))
    });
    map.add("coalesce", Arity::AtLeast(0), |_, args| {
        Ok(args
            .iter()
            .find(|value| !is_empty(value))
            .cloned()
            .unwrap_or(Value::Nil))
    });
    map.add("all", Arity::AtLeast(0), |_, args| {
        Ok(Value::Bool(args.iter().all(|value| !is_empty(value))))
    });
    map.add("any", Arity::AtLeast(0), |_, args| {
        Ok(Value::Bool(args.iter().any(|value| !is_empty(value))))
    });
    map.add("compact", Arity::Exact(1), compact);
    map.add("mustCompact", Arity::Exact(1), compact);
    map.add("ternary", Arity::Exact(3), |_, args| {
        let condition = param_bool(arg(args, 2))?;
        Ok(if condition { arg(args, 0) } else { arg(args, 1) }.clone())
    });
    map.add("fail", Arity::Exact(1), |_, args| {
        Err(FuncError::new(param_str(arg(args, 0))?))
    });
}

fn arg(args: &[Value], index: usize) -> &Value {
    args.get(index).unwrap_or(&Value::Nil)
}

/// Sprig's `empty`: Go's zero values (nil, false, 0, "", empty lists and maps); structs are never empty.
pub(crate) fn is_empty(value: &Value) -> bool {
    match value {
        Value::Object(_) => false,
        other => !other.is_truthy(),
    }
}

/// Go's `reflect.DeepEqual` over template values: same type and same contents (an int and a float differ; NaN is
/// not equal to itself). Walks at most [`MAX_VALUE_DEPTH`] levels (deeper is unequal).
pub(crate) fn deep_equal(left: &Value, right: &Value) -> bool {
    deep_equal_at(left, right, 0)
}

fn deep_equal_at(left: &Value, right: &Value, depth: usize) -> bool {
    if depth > MAX_VALUE_DEPTH {
        return false;
    }
    match (left, right) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::Float(a), Value::Float(b)) => a == b,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Bytes(a), Value::Bytes(b)) => a == b,
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(x, y)| deep_equal_at(x, y, depth + 1))
        }
        (Value::Map(a), Value::Map(b)) => {
            if a.ptr_eq(b) {
                return true;
            }
            let (a, b) = (a.entries(), b.entries());
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && deep_equal_at(va, vb, depth + 1))
        }
        (Value::Object(a), Value::Object(b)) => std::rc::Rc::ptr_eq(a, b),
        _ => false,
    }
}

/// `default DEFAULT [GIVEN]`: GIVEN unless it is missing or empty.
fn default(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    match args.get(1) {
        Some(given) if !is_empty(given) => Ok(given.clone()),
        _ => Ok(arg(args, 0).clone()),
    }
}

fn compact(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let items = list_arg(arg(args, 0), "Cannot compact on type", "")?;
    Ok(Value::list(
        items.into_iter().filter(|item| !is_empty(item)).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use crate::gotemplate::Value;
    use crate::sprig::conv::test_support::*;

    #[test]
    fn types_kinds_and_equality() {
        let t = Value::Bool(true);
        let no = Value::Bool(false);
        let cases: Vec<(&str, Vec<Value>, Value)> = vec![
            ("typeOf", vec![i(1)], s("int")),
            ("typeOf", vec![f(1.5)], s("float64")),
            ("typeOf", vec![s("a")], s("string")),
            ("typeOf", vec![Value::Nil], s("<nil>")),
            ("typeOf", vec![l(vec![])], s("[]interface {}")),
            ("typeOf", vec![d(vec![])], s("map[string]interface {}")),
            ("typeOf", vec![t.clone()], s("bool")),
            ("kindOf", vec![i(1)], s("int")),
            ("kindOf", vec![f(1.5)], s("float64")),
            ("kindOf", vec![s("a")], s("string")),
            ("kindOf", vec![Value::Nil], s("invalid")),
            ("kindOf", vec![l(vec![])], s("slice")),
            ("kindOf", vec![d(vec![])], s("map")),
            ("kindOf", vec![t.clone()], s("bool")),
            ("typeIs", vec![s("int"), i(1)], t.clone()),
            ("typeIs", vec![s("string"), i(1)], no.clone()),
            ("typeIsLike", vec![s("int"), i(1)], t.clone()),
            ("kindIs", vec![s("map"), d(vec![])], t.clone()),
            ("kindIs", vec![s("invalid"), Value::Nil], t.clone()),
            ("typeIs", vec![s("<nil>"), Value::Nil], t.clone()),
            ("deepEqual", vec![i(1), i(1)], t.clone()),
            ("deepEqual", vec![i(1), f(1.0)], no.clone()),
            (
                "deepEqual",
                vec![
                    l(vec![i(1), d(vec![("a", i(1))])]),
                    l(vec![i(1), d(vec![("a", i(1))])]),
                ],
                t.clone(),
            ),
            ("deepEqual", vec![Value::Nil, Value::Nil], t.clone()),
            ("deepEqual", vec![l(vec![]), Value::Nil], no.clone()),
            ("deepEqual", vec![s("a"), s("a")], t.clone()),
            ("deepEqual", vec![d(vec![]), d(vec![])], t.clone()),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, &args), ok(want), "{name} {args:?}");
        }
        assert_eq!(
            call("typeIs", &[i(1), i(1)]),
            err("wrong type for value; expected string; got int")
        );
    }

    #[test]
    fn defaults_and_flow() {
        let t = Value::Bool(true);
        let no = Value::Bool(false);
        let empties = [i(0), f(0.0), s(""), Value::Nil, no.clone(), l(vec![]), d(vec![])];
        for value in &empties {
            assert_eq!(
                call("empty", std::slice::from_ref(value)),
                ok(true),
                "empty {value:?}"
            );
            assert_eq!(
                call("default", &[s("d"), value.clone()]),
                ok("d"),
                "default {value:?}"
            );
        }
        for value in [i(1), s(" ")] {
            assert_eq!(
                call("empty", std::slice::from_ref(&value)),
                ok(false),
                "empty {value:?}"
            );
        }
        let cases: Vec<(&str, Vec<Value>, Value)> = vec![
            ("default", vec![s("d"), s("x")], s("x")),
            ("default", vec![s("d")], s("d")),
            ("default", vec![s("d"), i(1), i(2)], i(1)),
            ("coalesce", vec![Value::Nil, s(""), i(0), s("a"), s("b")], s("a")),
            ("coalesce", vec![Value::Nil], Value::Nil),
            ("coalesce", vec![], Value::Nil),
            ("all", vec![i(1), s("a"), t.clone()], t.clone()),
            ("all", vec![i(1), s("")], no.clone()),
            ("all", vec![], t.clone()),
            ("any", vec![i(0), s(""), Value::Nil], no.clone()),
            ("any", vec![i(0), i(1)], t.clone()),
            ("any", vec![], no.clone()),
            ("ternary", vec![s("a"), s("b"), t.clone()], s("a")),
            ("ternary", vec![s("a"), s("b"), no.clone()], s("b")),
            (
                "compact",
                vec![l(vec![
                    i(0),
                    i(1),
                    s(""),
                    s("a"),
                    Value::Nil,
                    no.clone(),
                    t.clone(),
                    l(vec![]),
                    d(vec![]),
                ])],
                l(vec![i(1), s("a"), t.clone()]),
            ),
            ("mustCompact", vec![l(vec![])], l(vec![])),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, &args), ok(want), "{name} {args:?}");
        }
        assert_eq!(
            call("default", &[]),
            err("wrong number of args for default: want at least 1 got 0")
        );
        assert_eq!(call("fail", &[s("boom")]), err("boom"));
        assert_eq!(
            call("fail", &[i(1)]),
            err("wrong type for value; expected string; got int")
        );
        assert_eq!(call("compact", &[i(1)]), err("Cannot compact on type int"));
        assert_eq!(
            call("ternary", &[s("a"), s("b"), i(1)]),
            err("wrong type for value; expected bool; got int")
        );
    }
}
