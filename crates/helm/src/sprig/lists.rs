//! Sprig's lists (`list`, `append`, `prepend`, `first`, `rest`, `last`, `initial`, `reverse`, `uniq`, `without`,
//! `has`, `slice`, `concat`, `chunk`, `sortAlpha`, and their `must…` variants).
//!
//! Sprig reflects on any slice (`[]interface{}`, `[]string`, `[]byte`), so every list function takes any list here
//! (bytes as a list of ints). A non-list is Sprig's error (`Cannot find first on type string`); a nil argument is
//! the nil-pointer panic Go's `reflect.TypeOf(nil).Kind()` raises. The plain variants panic where the `must…`
//! variants return the error; both fail the template with the same message, which is what is returned here.
//! Equality (`has`, `uniq`, `without`) is `reflect.DeepEqual`: an int 1 and a float 1 differ.

use crate::gotemplate::Value;
use crate::gotemplate::funcs::{Arity, FuncError, FuncMap, Runtime, check_list_len};

use super::conv::{strslice, strval, to_int};
use super::reflect::deep_equal;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("list", Arity::AtLeast(0), list);
    map.add("tuple", Arity::AtLeast(0), list);
    map.add("append", Arity::Exact(2), push);
    map.add("push", Arity::Exact(2), push);
    map.add("mustAppend", Arity::Exact(2), push);
    map.add("mustPush", Arity::Exact(2), push);
    map.add("prepend", Arity::Exact(2), prepend);
    map.add("mustPrepend", Arity::Exact(2), prepend);
    map.add("first", Arity::Exact(1), first);
    map.add("mustFirst", Arity::Exact(1), first);
    map.add("rest", Arity::Exact(1), rest);
    map.add("mustRest", Arity::Exact(1), rest);
    map.add("last", Arity::Exact(1), last);
    map.add("mustLast", Arity::Exact(1), last);
    map.add("initial", Arity::Exact(1), initial);
    map.add("mustInitial", Arity::Exact(1), initial);
    map.add("reverse", Arity::Exact(1), reverse);
    map.add("mustReverse", Arity::Exact(1), reverse);
    map.add("uniq", Arity::Exact(1), uniq);
    map.add("mustUniq", Arity::Exact(1), uniq);
    map.add("without", Arity::AtLeast(1), without);
    map.add("mustWithout", Arity::AtLeast(1), without);
    map.add("has", Arity::Exact(2), has);
    map.add("mustHas", Arity::Exact(2), has);
    map.add("slice", Arity::AtLeast(1), slice);
    map.add("mustSlice", Arity::AtLeast(1), slice);
    map.add("concat", Arity::AtLeast(0), concat);
    map.add("chunk", Arity::Exact(2), chunk);
    map.add("mustChunk", Arity::Exact(2), chunk);
    map.add("sortAlpha", Arity::Exact(1), sort_alpha);
}

/// Go's panic when reflecting on a nil interface.
pub(crate) const NIL_DEREFERENCE: &str = "runtime error: invalid memory address or nil pointer dereference";

/// The items of any Go slice value (a list, or bytes as ints); `None` for anything else.
pub(crate) fn seq_items(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::List(items) => Some(items.to_vec()),
        Value::Bytes(bytes) => Some(bytes.iter().map(|byte| Value::Int(i64::from(*byte))).collect()),
        _ => None,
    }
}

/// The items of a list argument, or Sprig's error `{prefix} {kind}{suffix}` (nil: Go's nil-pointer panic).
pub(crate) fn list_arg(value: &Value, prefix: &str, suffix: &str) -> Result<Vec<Value>, FuncError> {
    if value.is_nil() {
        return Err(FuncError::new(NIL_DEREFERENCE));
    }
    seq_items(value).ok_or_else(|| FuncError::new(format!("{prefix} {}{suffix}", value.kind().name())))
}

fn arg(args: &[Value], index: usize) -> &Value {
    args.get(index).unwrap_or(&Value::Nil)
}

fn list(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::list(args.to_vec()))
}

fn push(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut items = list_arg(arg(args, 0), "Cannot push on type", "")?;
    check_list_len("append", items.len() as u128 + 1)?;
    items.push(arg(args, 1).clone());
    Ok(Value::list(items))
}

fn prepend(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let items = list_arg(arg(args, 0), "Cannot prepend on type", "")?;
    check_list_len("prepend", items.len() as u128 + 1)?;
    let mut out = Vec::with_capacity(items.len() + 1);
    out.push(arg(args, 1).clone());
    out.extend(items);
    Ok(Value::list(out))
}

fn first(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let items = list_arg(arg(args, 0), "Cannot find first on type", "")?;
    Ok(items.into_iter().next().unwrap_or(Value::Nil))
}

fn last(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let items = list_arg(arg(args, 0), "Cannot find last on type", "")?;
    Ok(items.into_iter().next_back().unwrap_or(Value::Nil))
}

fn rest(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let items = list_arg(arg(args, 0), "Cannot find rest on type", "")?;
    Ok(Value::list(items.into_iter().skip(1).collect()))
}

fn initial(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut items = list_arg(arg(args, 0), "Cannot find initial on type", "")?;
    items.pop();
    Ok(Value::list(items))
}

fn reverse(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut items = list_arg(arg(args, 0), "Cannot find reverse on type", "")?;
    items.reverse();
    Ok(Value::list(items))
}

fn in_list(haystack: &[Value], needle: &Value) -> bool {
    haystack.iter().any(|item| deep_equal(needle, item))
}

/// A scalar's identity for `reflect.DeepEqual` (`None` for NaN, which equals nothing, and for lists and maps).
#[derive(PartialEq, Eq, Hash)]
enum ScalarKey {
    Nil,
    Bool(bool),
    Int(i64),
    Float(u64),
    String(std::rc::Rc<str>),
}

fn scalar_key(value: &Value) -> Option<ScalarKey> {
    Some(match value {
        Value::Nil => ScalarKey::Nil,
        Value::Bool(flag) => ScalarKey::Bool(*flag),
        Value::Int(int) => ScalarKey::Int(*int),
        // -0 == 0 for Go's `==` on floats.
        Value::Float(float) if !float.is_nan() => ScalarKey::Float((float + 0.0).to_bits()),
        Value::String(text) => ScalarKey::String(text.clone()),
        _ => return None,
    })
}

/// `uniq`: the first of each group of deeply equal items, in order (scalars hashed, so long lists stay fast).
fn uniq(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let items = list_arg(arg(args, 0), "Cannot find uniq on type", "")?;
    let mut seen = std::collections::HashSet::new();
    let mut others: Vec<Value> = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    for item in items {
        match scalar_key(&item) {
            Some(key) => {
                if seen.insert(key) {
                    out.push(item);
                }
            }
            None if matches!(item, Value::Float(_)) => out.push(item),
            None => {
                if !in_list(&others, &item) {
                    others.push(item.clone());
                    out.push(item);
                }
            }
        }
    }
    Ok(Value::list(out))
}

fn without(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let items = list_arg(arg(args, 0), "Cannot find without on type", "")?;
    let omit = args.get(1..).unwrap_or(&[]);
    Ok(Value::list(
        items.into_iter().filter(|item| !in_list(omit, item)).collect(),
    ))
}

fn has(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let haystack = arg(args, 1);
    if haystack.is_nil() {
        return Ok(Value::Bool(false));
    }
    let items = list_arg(haystack, "Cannot find has on type", "")?;
    Ok(Value::Bool(in_list(&items, arg(args, 0))))
}

/// `slice LIST [START [END]]`: Go's `list[start:end]`; an empty list gives nil; bad bounds are reflect's panic.
fn slice(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let list = arg(args, 0);
    if list.is_nil() {
        return Err(FuncError::new(NIL_DEREFERENCE));
    }
    let items = seq_items(list).ok_or_else(|| {
        FuncError::new(format!(
            "list should be type of slice or array but {}",
            list.kind().name()
        ))
    })?;
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    let len = items.len() as i64;
    let start = args.get(1).map_or(0, to_int);
    let end = args.get(2).map_or(len, to_int);
    if start < 0 || end < start || end > len {
        return Err(FuncError::new("reflect.Value.Slice: slice index out of bounds"));
    }
    Ok(Value::list(items[start as usize..end as usize].to_vec()))
}

fn concat(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut out: Vec<Value> = Vec::new();
    for list in args {
        let items = list_arg(list, "Cannot concat type", " as list")?;
        check_list_len("concat", out.len() as u128 + items.len() as u128)?;
        out.extend(items);
    }
    Ok(Value::list(out))
}

/// `chunk SIZE LIST`: lists of SIZE items (the last one shorter), computed with Sprig's float arithmetic — so a
/// size of 0 or a negative size is Go's `makeslice` panic where Sprig's arithmetic asks for a negative length.
fn chunk(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    const MAKESLICE: &str = "runtime error: makeslice: len out of range";
    let size = crate::gotemplate::funcs::param_int(arg(args, 0))?;
    let items = list_arg(arg(args, 1), "Cannot chunk type", "")?;
    let len = items.len() as i64;
    let chunks_float = ((len - 1) as f64 / size as f64).floor() + 1.0;
    let chunks = super::conv::go_f64_to_i64(chunks_float);
    if chunks < 0 {
        return Err(FuncError::new(MAKESLICE));
    }
    check_list_len("chunk", chunks as u128)?;
    let mut out = Vec::with_capacity(chunks as usize);
    for index in 0..chunks {
        let mut chunk_len = size;
        if index == chunks - 1 {
            chunk_len = super::conv::go_f64_to_i64((len as f64 % size as f64).floor());
            if chunk_len == 0 {
                chunk_len = size;
            }
        }
        if chunk_len < 0 {
            return Err(FuncError::new(MAKESLICE));
        }
        let start = index.saturating_mul(size);
        let mut chunk = Vec::new();
        for offset in 0..chunk_len {
            let at = start.saturating_add(offset);
            let item = usize::try_from(at)
                .ok()
                .and_then(|at| items.get(at))
                .ok_or_else(|| FuncError::new("reflect: slice index out of range"))?;
            chunk.push(item.clone());
        }
        out.push(Value::list(chunk));
    }
    Ok(Value::list(out))
}

/// `sortAlpha`: the items as strings, sorted bytewise; a non-list is a one-item list of its text.
fn sort_alpha(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let value = arg(args, 0);
    let mut items = match value {
        Value::List(_) | Value::Bytes(_) => strslice(value),
        other => vec![strval(other)],
    };
    items.sort();
    Ok(Value::list(items.into_iter().map(Value::from).collect()))
}

#[cfg(test)]
mod tests {
    use crate::gotemplate::Value;
    use crate::sprig::conv::test_support::*;

    const NIL: &str = "runtime error: invalid memory address or nil pointer dereference";

    #[test]
    fn list_functions() {
        let ints = |items: &[i64]| l(items.iter().map(|x| i(*x)).collect());
        let cases: Vec<(&str, Vec<Value>, Value)> = vec![
            (
                "list",
                vec![i(1), s("a"), Value::Nil],
                l(vec![i(1), s("a"), Value::Nil]),
            ),
            ("tuple", vec![i(1), i(2)], ints(&[1, 2])),
            ("list", vec![], ints(&[])),
            ("append", vec![ints(&[1]), i(2)], ints(&[1, 2])),
            ("push", vec![ints(&[]), i(1)], ints(&[1])),
            (
                "mustAppend",
                vec![ints(&[1, 2]), ints(&[3])],
                l(vec![i(1), i(2), ints(&[3])]),
            ),
            ("prepend", vec![ints(&[1, 2]), i(0)], ints(&[0, 1, 2])),
            ("first", vec![ints(&[1, 2])], i(1)),
            ("first", vec![ints(&[])], Value::Nil),
            ("last", vec![ints(&[1, 2])], i(2)),
            ("rest", vec![ints(&[1, 2, 3])], ints(&[2, 3])),
            ("initial", vec![ints(&[1, 2, 3])], ints(&[1, 2])),
            ("rest", vec![ints(&[])], ints(&[])),
            ("rest", vec![ints(&[1])], ints(&[])),
            ("reverse", vec![ints(&[1, 2, 3])], ints(&[3, 2, 1])),
            ("reverse", vec![ints(&[])], ints(&[])),
            (
                "uniq",
                vec![l(vec![i(1), i(2), i(1), s("1"), f(1.0), i(1)])],
                l(vec![i(1), i(2), s("1"), f(1.0)]),
            ),
            ("without", vec![ints(&[1, 2, 3, 1]), i(1), i(3)], ints(&[2])),
            ("has", vec![i(1), ints(&[1, 2])], Value::Bool(true)),
            ("has", vec![f(1.0), ints(&[1, 2])], Value::Bool(false)),
            ("has", vec![s("a"), Value::Nil], Value::Bool(false)),
            ("has", vec![ints(&[1]), l(vec![ints(&[1])])], Value::Bool(true)),
            ("slice", vec![ints(&[1, 2, 3, 4]), i(1), i(3)], ints(&[2, 3])),
            ("slice", vec![ints(&[1, 2, 3]), i(1)], ints(&[2, 3])),
            ("slice", vec![ints(&[1, 2, 3])], ints(&[1, 2, 3])),
            ("slice", vec![ints(&[]), i(1), i(2)], Value::Nil),
            ("slice", vec![ints(&[1, 2, 3]), s("1"), f(2.0)], ints(&[2])),
            ("slice", vec![ints(&[1, 2, 3]), Value::Nil, i(2)], ints(&[1, 2])),
            (
                "concat",
                vec![ints(&[1, 2]), ints(&[3]), l(vec![s("a")])],
                l(vec![i(1), i(2), i(3), s("a")]),
            ),
            ("concat", vec![], ints(&[])),
            (
                "chunk",
                vec![i(2), ints(&[1, 2, 3, 4, 5])],
                l(vec![ints(&[1, 2]), ints(&[3, 4]), ints(&[5])]),
            ),
            ("chunk", vec![i(3), ints(&[1, 2, 3])], l(vec![ints(&[1, 2, 3])])),
            ("chunk", vec![i(2), ints(&[])], l(vec![])),
            ("chunk", vec![i(-1), ints(&[1, 2])], l(vec![])),
            (
                "sortAlpha",
                vec![l(vec![s("b"), s("a"), i(10), i(2), Value::Nil])],
                l(vec![s("10"), s("2"), s("a"), s("b")]),
            ),
            ("sortAlpha", vec![s("x")], l(vec![s("x")])),
            ("sortAlpha", vec![i(3)], l(vec![s("3")])),
            ("sortAlpha", vec![Value::Nil], l(vec![s("<nil>")])),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, &args), ok(want), "{name} {args:?}");
        }
    }

    #[test]
    fn uniq_hashes_scalars_and_compares_the_rest() {
        let nested = l(vec![i(1)]);
        let input = l(vec![
            f(0.0),
            f(-0.0),
            f(f64::NAN),
            f(f64::NAN),
            nested.clone(),
            l(vec![i(1)]),
            s("a"),
            s("a"),
            Value::Nil,
            Value::Nil,
        ]);
        let got = call_raw("uniq", &[input]).expect("uniq");
        let items = got.as_list().expect("list");
        assert_eq!(items.len(), 6, "{items:?}");
        let many = l((0..200_000).map(i).collect());
        let got = call_raw("uniq", &[many]).expect("uniq");
        assert_eq!(got.as_list().map(<[Value]>::len), Some(200_000));
    }

    #[test]
    fn list_misuse_errors() {
        let ints = |items: &[i64]| l(items.iter().map(|x| i(*x)).collect());
        let cases: Vec<(&str, Vec<Value>, &str)> = vec![
            ("append", vec![Value::Nil, i(1)], NIL),
            ("append", vec![s("abc"), i(1)], "Cannot push on type string"),
            ("mustAppend", vec![i(1), i(1)], "Cannot push on type int"),
            ("mustPrepend", vec![d(vec![]), i(1)], "Cannot prepend on type map"),
            ("first", vec![s("abc")], "Cannot find first on type string"),
            ("first", vec![Value::Nil], NIL),
            ("mustFirst", vec![i(1)], "Cannot find first on type int"),
            ("mustLast", vec![s("x")], "Cannot find last on type string"),
            ("has", vec![i(1), s("abc")], "Cannot find has on type string"),
            ("mustHas", vec![i(1), i(2)], "Cannot find has on type int"),
            (
                "slice",
                vec![ints(&[1, 2, 3]), i(2), i(1)],
                "reflect.Value.Slice: slice index out of bounds",
            ),
            (
                "slice",
                vec![ints(&[1, 2, 3]), i(1), i(5)],
                "reflect.Value.Slice: slice index out of bounds",
            ),
            (
                "mustSlice",
                vec![ints(&[1, 2, 3]), i(2), i(1)],
                "reflect.Value.Slice: slice index out of bounds",
            ),
            (
                "slice",
                vec![ints(&[1, 2, 3]), i(-1)],
                "reflect.Value.Slice: slice index out of bounds",
            ),
            (
                "slice",
                vec![s("abc"), i(1)],
                "list should be type of slice or array but string",
            ),
            (
                "mustSlice",
                vec![i(1), i(1)],
                "list should be type of slice or array but int",
            ),
            ("concat", vec![ints(&[1]), i(2)], "Cannot concat type int as list"),
            ("concat", vec![ints(&[1]), Value::Nil], NIL),
            (
                "chunk",
                vec![i(0), ints(&[1, 2])],
                "runtime error: makeslice: len out of range",
            ),
            ("mustChunk", vec![i(2), s("x")], "Cannot chunk type string"),
            ("uniq", vec![i(1)], "Cannot find uniq on type int"),
            ("without", vec![i(1), i(1)], "Cannot find without on type int"),
            ("reverse", vec![Value::Nil], NIL),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, &args), err(want), "{name} {args:?}");
        }
    }
}
