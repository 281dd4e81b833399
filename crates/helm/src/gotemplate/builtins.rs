//! Go's builtin template functions (`and`, `or`, `not`, `len`, `index`, `slice`, `print*`, `html`, `js`,
//! `urlquery`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`, `call`) with Go's comparison rules and error messages.
//! `and`/`or` short-circuit, so the executor evaluates them itself; everything else here takes evaluated arguments.

use super::fmt;
use super::funcs::{Arity, FuncDef};
use super::value::Value;

/// A builtin function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    And,
    Or,
    Not,
    Len,
    Index,
    Slice,
    Print,
    Printf,
    Println,
    Html,
    Js,
    Urlquery,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Call,
}

/// What an identifier names: a FuncMap function (which shadows a builtin of the same name) or a builtin.
#[derive(Clone, Copy)]
pub(crate) enum Callee {
    Func(FuncDef),
    Builtin(Builtin),
}

impl std::fmt::Debug for Callee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Callee::Func(def) => write!(f, "Func({})", def.name),
            Callee::Builtin(b) => write!(f, "Builtin({b:?})"),
        }
    }
}

impl Builtin {
    pub(crate) fn lookup(name: &str) -> Option<Builtin> {
        Some(match name {
            "and" => Builtin::And,
            "or" => Builtin::Or,
            "not" => Builtin::Not,
            "len" => Builtin::Len,
            "index" => Builtin::Index,
            "slice" => Builtin::Slice,
            "print" => Builtin::Print,
            "printf" => Builtin::Printf,
            "println" => Builtin::Println,
            "html" => Builtin::Html,
            "js" => Builtin::Js,
            "urlquery" => Builtin::Urlquery,
            "eq" => Builtin::Eq,
            "ne" => Builtin::Ne,
            "lt" => Builtin::Lt,
            "le" => Builtin::Le,
            "gt" => Builtin::Gt,
            "ge" => Builtin::Ge,
            "call" => Builtin::Call,
            _ => return None,
        })
    }

    pub(crate) fn arity(self) -> Arity {
        match self {
            Builtin::And | Builtin::Or | Builtin::Index | Builtin::Slice | Builtin::Printf | Builtin::Eq => {
                Arity::AtLeast(1)
            }
            Builtin::Call => Arity::AtLeast(1),
            Builtin::Not | Builtin::Len => Arity::Exact(1),
            Builtin::Ne | Builtin::Lt | Builtin::Le | Builtin::Gt | Builtin::Ge => Arity::Exact(2),
            Builtin::Print | Builtin::Println | Builtin::Html | Builtin::Js | Builtin::Urlquery => {
                Arity::AtLeast(0)
            }
        }
    }

    /// Calls a builtin other than `and`/`or`. `callee` is the source text of `call`'s first argument.
    pub(crate) fn call(self, args: &[Value], callee: &str) -> Result<Value, String> {
        let arg0 = args.first().cloned().unwrap_or(Value::Nil);
        match self {
            Builtin::And | Builtin::Or => Ok(args.last().cloned().unwrap_or(Value::Nil)),
            Builtin::Not => Ok(Value::Bool(!arg0.is_truthy())),
            Builtin::Len => length(&arg0).map(Value::Int),
            Builtin::Index => index(&arg0, args.get(1..).unwrap_or(&[])),
            Builtin::Slice => slice(&arg0, args.get(1..).unwrap_or(&[])),
            Builtin::Print => Ok(Value::from(fmt::sprint(args))),
            Builtin::Println => Ok(Value::from(fmt::sprintln(args))),
            Builtin::Printf => match &arg0 {
                Value::String(format) => Ok(Value::from(fmt::sprintf(format, args.get(1..).unwrap_or(&[])))),
                other => Err(format!(
                    "wrong type for value; expected string; got {}",
                    other.type_name()
                )),
            },
            Builtin::Html => Ok(Value::from(html_escape(&eval_args(args)))),
            Builtin::Js => Ok(Value::from(js_escape(&eval_args(args)))),
            Builtin::Urlquery => Ok(Value::from(query_escape(&eval_args(args)))),
            Builtin::Eq => eq(&arg0, args.get(1..).unwrap_or(&[])).map(Value::Bool),
            Builtin::Ne => eq(&arg0, args.get(1..).unwrap_or(&[])).map(|b| Value::Bool(!b)),
            Builtin::Lt => lt(&arg0, args.get(1).unwrap_or(&Value::Nil)).map(Value::Bool),
            Builtin::Le => le(&arg0, args.get(1).unwrap_or(&Value::Nil)).map(Value::Bool),
            Builtin::Gt => le(&arg0, args.get(1).unwrap_or(&Value::Nil)).map(|b| Value::Bool(!b)),
            Builtin::Ge => lt(&arg0, args.get(1).unwrap_or(&Value::Nil)).map(|b| Value::Bool(!b)),
            Builtin::Call => match arg0 {
                Value::Nil => Err("call of nil".into()),
                other => Err(format!("non-function {callee} of type {}", other.type_name())),
            },
        }
    }
}

fn length(item: &Value) -> Result<i64, String> {
    let collection = match item {
        Value::Object(object) => object.collection(),
        _ => None,
    };
    let n = match collection.as_ref().unwrap_or(item) {
        Value::Nil => return Err("len of nil pointer".into()),
        Value::String(text) => text.len(),
        Value::Bytes(bytes) => bytes.len(),
        Value::List(items) => items.len(),
        Value::Map(map) => map.len(),
        other => return Err(format!("len of type {}", other.type_name())),
    };
    Ok(i64::try_from(n).unwrap_or(i64::MAX))
}

fn index_arg(index: &Value, cap: usize) -> Result<usize, String> {
    let x = match index {
        Value::Int(x) => *x,
        Value::Nil => return Err("cannot index slice/array with nil".into()),
        other => {
            return Err(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            ));
        }
    };
    match usize::try_from(x) {
        Ok(i) if i <= cap => Ok(i),
        _ => Err(format!("index out of range: {x}")),
    }
}

fn index(item: &Value, indexes: &[Value]) -> Result<Value, String> {
    let mut item = item.clone();
    if item.is_nil() {
        return Err("index of untyped nil".into());
    }
    for (n, index) in indexes.iter().enumerate() {
        if let Value::Object(object) = &item
            && let Some(collection) = object.collection()
        {
            item = collection;
        }
        item = match &item {
            Value::Nil if n > 0 => return Err("index of nil pointer".into()),
            Value::List(items) => {
                let i = index_arg(index, items.len())?;
                items.get(i).cloned().ok_or("reflect: slice index out of range")?
            }
            Value::Bytes(bytes) => {
                let i = index_arg(index, bytes.len())?;
                Value::Int(i64::from(
                    *bytes.get(i).ok_or("reflect: slice index out of range")?,
                ))
            }
            Value::String(text) => {
                let i = index_arg(index, text.len())?;
                Value::Int(i64::from(
                    *text
                        .as_bytes()
                        .get(i)
                        .ok_or("reflect: string index out of range")?,
                ))
            }
            Value::Map(map) => match index {
                Value::String(key) => map.get(key).unwrap_or(Value::Nil),
                Value::Nil => return Err("value is nil; should be of type string".into()),
                other => return Err(format!("value has type {}; should be string", other.type_name())),
            },
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn slice(item: &Value, indexes: &[Value]) -> Result<Value, String> {
    if item.is_nil() {
        return Err("slice of untyped nil".into());
    }
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let len = match item {
        Value::String(text) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            text.len()
        }
        Value::List(items) => items.len(),
        Value::Bytes(bytes) => bytes.len(),
        other => return Err(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0, len, len];
    for (i, index) in indexes.iter().enumerate() {
        idx[i] = index_arg(index, len)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match item {
        Value::String(text) => {
            let bytes = text.as_bytes().get(idx[0]..idx[1]).unwrap_or(&[]);
            Value::from(String::from_utf8_lossy(bytes).into_owned())
        }
        Value::List(items) => Value::list(items.get(idx[0]..idx[1]).unwrap_or(&[]).to_vec()),
        Value::Bytes(bytes) => Value::Bytes(bytes.get(idx[0]..idx[1]).unwrap_or(&[]).into()),
        _ => Value::Nil,
    })
}

/// Go's `evalArgs` for the escapers: one string argument as is, otherwise `fmt.Sprint` of all.
fn eval_args(args: &[Value]) -> String {
    if let [Value::String(text)] = args {
        return text.to_string();
    }
    fmt::sprint(args)
}

/// Go's `template.HTMLEscapeString`.
pub(crate) fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
pub(crate) fn js_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c if c.is_ascii() => out.push(c),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub(crate) fn query_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(char::from(b)),
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum BasicKind {
    Invalid,
    Bool,
    Int,
    Float,
    String,
}

fn basic_kind(v: &Value) -> BasicKind {
    match v {
        Value::Bool(_) => BasicKind::Bool,
        Value::Int(_) => BasicKind::Int,
        Value::Float(_) => BasicKind::Float,
        Value::String(_) => BasicKind::String,
        _ => BasicKind::Invalid,
    }
}

/// Go's `eq`: `arg1` against each of `others`.
pub(crate) fn eq(arg1: &Value, others: &[Value]) -> Result<bool, String> {
    if others.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let k1 = basic_kind(arg1);
    for arg in others {
        let k2 = basic_kind(arg);
        let truth = if k1 != k2 {
            if !arg1.is_nil() && !arg.is_nil() {
                return Err(format!(
                    "incompatible types for comparison: {} and {}",
                    arg1.type_name(),
                    arg.type_name()
                ));
            }
            false
        } else {
            match (arg1, arg) {
                (Value::Bool(a), Value::Bool(b)) => a == b,
                (Value::Int(a), Value::Int(b)) => a == b,
                (Value::Float(a), Value::Float(b)) => a == b,
                (Value::String(a), Value::String(b)) => a == b,
                _ => {
                    let comparable_kinds = arg1.is_nil() || arg.is_nil() || arg1.kind() == arg.kind();
                    if !comparable_kinds {
                        return Err(format!(
                            "non-comparable types {}: {}, {}: {}",
                            fmt::sprintf("%s", std::slice::from_ref(arg1)),
                            arg1.type_name(),
                            arg.type_name(),
                            fmt::sprintf("%v", std::slice::from_ref(arg)),
                        ));
                    }
                    if arg1.is_nil() || arg.is_nil() {
                        arg1.is_nil() == arg.is_nil()
                    } else {
                        match (arg1, arg) {
                            (Value::Object(a), Value::Object(b)) => std::rc::Rc::ptr_eq(a, b),
                            _ => {
                                return Err(format!(
                                    "non-comparable type {}: {}",
                                    fmt::sprintf("%s", std::slice::from_ref(arg)),
                                    arg.type_name()
                                ));
                            }
                        }
                    }
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

fn lt(arg1: &Value, arg2: &Value) -> Result<bool, String> {
    let k1 = basic_kind(arg1);
    let k2 = basic_kind(arg2);
    if k1 == BasicKind::Invalid || k2 == BasicKind::Invalid {
        return Err("invalid type for comparison".into());
    }
    if k1 != k2 {
        return Err(format!(
            "incompatible types for comparison: {} and {}",
            arg1.type_name(),
            arg2.type_name()
        ));
    }
    match (arg1, arg2) {
        (Value::Int(a), Value::Int(b)) => Ok(a < b),
        (Value::Float(a), Value::Float(b)) => Ok(a < b),
        (Value::String(a), Value::String(b)) => Ok(a < b),
        _ => Err("invalid type for comparison".into()),
    }
}

fn le(arg1: &Value, arg2: &Value) -> Result<bool, String> {
    if lt(arg1, arg2)? {
        return Ok(true);
    }
    eq(arg1, std::slice::from_ref(arg2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapers_match_go() {
        // Expected values printed by Helm for html/js/urlquery of the same inputs.
        assert_eq!(html_escape("<a&\"b'>"), "&lt;a&amp;&#34;b&#39;&gt;");
        assert_eq!(
            js_escape("a<'b\"=&\\ \t"),
            "a\\u003C\\'b\\\"\\u003D\\u0026\\\\ \\u0009"
        );
        assert_eq!(query_escape("a b&c/é~"), "a+b%26c%2F%C3%A9~");
    }

    #[test]
    fn comparisons_follow_basic_kinds() {
        assert_eq!(eq(&Value::Int(1), &[Value::Int(2), Value::Int(1)]), Ok(true));
        assert_eq!(
            eq(&Value::Int(1), &[Value::Float(1.0)]),
            Err("incompatible types for comparison: int and float64".into())
        );
        assert_eq!(eq(&Value::Nil, &[Value::Nil]), Ok(true));
        assert_eq!(eq(&Value::Nil, &[Value::Int(1)]), Ok(false));
        assert_eq!(
            eq(&Value::Int(1), &[]),
            Err("missing argument for comparison".into())
        );
        assert_eq!(
            lt(&Value::Bool(true), &Value::Bool(false)),
            Err("invalid type for comparison".into())
        );
        assert_eq!(lt(&Value::from("a"), &Value::from("b")), Ok(true));
        assert_eq!(le(&Value::Int(2), &Value::Int(2)), Ok(true));
    }

    #[test]
    fn index_errors() {
        let list = Value::list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        assert_eq!(
            index(&list, &[Value::Int(5)]).err(),
            Some("index out of range: 5".into())
        );
        assert_eq!(
            index(&list, &[Value::Int(3)]).err(),
            Some("reflect: slice index out of range".into())
        );
        assert!(matches!(index(&list, &[Value::Int(1)]), Ok(Value::Int(2))));
        assert_eq!(length(&Value::Int(3)).err(), Some("len of type int".into()));
    }
}
