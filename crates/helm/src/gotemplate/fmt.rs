//! Go's `fmt` for template values: `%v` printing (what `{{ . }}`, `print` and Sprig's `toString` produce) and
//! `Sprintf` with Go's verbs, flags, width and precision (what `printf` produces), including Go's `%!verb(type=value)`
//! markers for mismatched arguments.
//!
//! STUB: a provisional `%v` until the engine's formatter lands; the signatures are the contract.

use super::value::Value;

/// Go's `fmt.Sprint(value)` (`%v`).
#[must_use]
pub fn sprint_value(value: &Value) -> String {
    match value {
        Value::Nil => "<nil>".into(),
        Value::Bool(flag) => flag.to_string(),
        Value::Int(int) => int.to_string(),
        Value::Float(float) => float.to_string(),
        Value::String(text) => text.to_string(),
        Value::Bytes(bytes) => format!("{:?}", bytes.as_ref()),
        Value::List(items) => format!(
            "[{}]",
            items.iter().map(sprint_value).collect::<Vec<_>>().join(" ")
        ),
        Value::Map(map) => format!(
            "map[{}]",
            map.entries()
                .iter()
                .map(|(key, value)| format!("{key}:{}", sprint_value(value)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        Value::Object(object) => object.display(),
    }
}

/// Go's `fmt.Sprint(args...)`: operands joined, with a space between two operands when neither is a string.
#[must_use]
pub fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (index, arg) in args.iter().enumerate() {
        let is_string = matches!(arg, Value::String(_));
        if index > 0 && !is_string && !matches!(args[index - 1], Value::String(_)) {
            out.push(' ');
        }
        out.push_str(&sprint_value(arg));
    }
    out
}

/// Go's `fmt.Sprintln(args...)`: operands always separated by spaces, newline appended.
#[must_use]
pub fn sprintln(args: &[Value]) -> String {
    let mut out = args.iter().map(sprint_value).collect::<Vec<_>>().join(" ");
    out.push('\n');
    out
}

/// Go's `fmt.Sprintf(format, args...)`.
#[must_use]
pub fn sprintf(format: &str, args: &[Value]) -> String {
    // Provisional: %v/%s/%d only.
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some(_) => out.push_str(&args.next().map(sprint_value).unwrap_or_default()),
            None => out.push_str("%!(NOVERB)"),
        }
    }
    out
}
