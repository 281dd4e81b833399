//! Sprig's type conversions (`int`, `int64`, `float64`, `toString`, `toStrings`, `atoi`, `toDecimal`, …) and the
//! loose conversions other families share.
//!
//! Sprig converts `interface{}` arguments with its own `strval` and with spf13/cast (v1.7, as Helm v4 links it):
//! strings are parsed the way Go's `strconv` does (`ParseInt(s, 0, 0)` with prefixes and underscores, `ParseFloat`),
//! failures become 0, and floats truncate toward zero with Go's amd64 conversion (NaN and out-of-range values become
//! the smallest int64). The `pub(crate)` helpers here are those conversions, for every family to share.

use crate::gotemplate::Value;
use crate::gotemplate::fmt;
use crate::gotemplate::funcs::{Arity, FuncError, FuncMap, Runtime, param_int, param_str};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("toString", Arity::Exact(1), to_string_fn);
    map.add("toStrings", Arity::Exact(1), to_strings_fn);
    map.add("atoi", Arity::Exact(1), atoi_fn);
    map.add("int", Arity::Exact(1), int_fn);
    map.add("int64", Arity::Exact(1), int_fn);
    map.add("float64", Arity::Exact(1), float64_fn);
    map.add("toDecimal", Arity::Exact(1), to_decimal_fn);
    map.add("seq", Arity::AtLeast(0), seq_fn);
}

/// Sprig's `strval`: strings as they are, bytes as text, objects through their `String()`, anything else as `%v`.
pub(crate) fn strval(value: &Value) -> String {
    match value {
        Value::String(text) => text.to_string(),
        Value::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        other => fmt::sprint_value(other),
    }
}

/// Sprig's `strslice` (`toStrings`, `join`, `sortAlpha`): the items of a list through [`strval`], nils dropped; a
/// non-list is a one-item list, nil an empty one.
pub(crate) fn strslice(value: &Value) -> Vec<String> {
    match value {
        Value::List(items) => items.iter().filter(|item| !item.is_nil()).map(strval).collect(),
        Value::Bytes(bytes) => bytes.iter().map(|byte| byte.to_string()).collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

/// Go's `int64(f)` on amd64: truncation toward zero; NaN and values out of range become `math.MinInt64`.
pub(crate) fn go_f64_to_i64(float: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if float.is_nan() || !(-LIMIT..LIMIT).contains(&float) {
        i64::MIN
    } else {
        float.trunc() as i64
    }
}

/// spf13/cast `ToInt64` (and `ToInt`, the same on 64-bit): 0 for anything it cannot convert.
pub(crate) fn to_int64(value: &Value) -> i64 {
    match value {
        Value::Int(int) => *int,
        Value::Float(float) => go_f64_to_i64(*float),
        Value::Bool(flag) => i64::from(*flag),
        Value::String(text) => parse_go_int(trim_zero_decimal(text), 0, false).unwrap_or(0),
        _ => 0,
    }
}

/// spf13/cast `ToInt` (Go's `int` is 64 bits here).
pub(crate) fn to_int(value: &Value) -> i64 {
    to_int64(value)
}

/// spf13/cast `ToFloat64`: 0 for anything it cannot convert.
pub(crate) fn to_float64(value: &Value) -> f64 {
    match value {
        Value::Int(int) => *int as f64,
        Value::Float(float) => *float,
        Value::Bool(flag) => f64::from(u8::from(*flag)),
        Value::String(text) => parse_go_float(text).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// cast's `trimZeroDecimal`: "1.0" and "1.00" become "1"; anything else is unchanged.
fn trim_zero_decimal(text: &str) -> &str {
    let bytes = text.as_bytes();
    let mut found_zero = false;
    for index in (0..bytes.len()).rev() {
        match bytes[index] {
            b'.' if found_zero => return &text[..index],
            b'.' => {}
            b'0' => found_zero = true,
            _ => return text,
        }
    }
    text
}

/// Why Go's `strconv.ParseInt` failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParseIntError {
    /// Not a number (`strconv.ErrSyntax`).
    Syntax,
    /// Out of range (`strconv.ErrRange`); holds the clamped value Go returns with the error.
    Range(i64),
}

/// Go's underscore rule for number literals (base 0 only): underscores only between digits or after a base prefix.
fn underscore_ok(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut index = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        index = 1;
    }
    // saw: '^' start, '0' digit or prefix, '_' underscore, '!' other
    let mut saw = b'^';
    let mut hex = false;
    if bytes.len() >= index + 2
        && bytes[index] == b'0'
        && matches!(bytes[index + 1].to_ascii_lowercase(), b'b' | b'o' | b'x')
    {
        hex = bytes[index + 1].eq_ignore_ascii_case(&b'x');
        index += 2;
        saw = b'0';
    }
    for &byte in &bytes[index..] {
        if byte.is_ascii_digit() || (hex && byte.is_ascii_hexdigit()) {
            saw = b'0';
            continue;
        }
        if byte == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
            continue;
        }
        if saw == b'_' {
            return false;
        }
        saw = b'!';
    }
    saw != b'_'
}

/// Go's `strconv.ParseInt(text, base, 64)`; base 0 reads Go's prefixes (`0x`, `0o`, `0b`, a leading `0` for octal)
/// and underscores. `atoi` is base 10 without underscores.
pub(crate) fn parse_go_int(text: &str, base: u32, _atoi: bool) -> Result<i64, ParseIntError> {
    if text.is_empty() {
        return Err(ParseIntError::Syntax);
    }
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'+' => (false, &text[1..]),
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    let (base, digits, underscores) = if base == 0 {
        let lower = unsigned.to_ascii_lowercase();
        if lower.starts_with("0x") {
            (16, &unsigned[2..], true)
        } else if lower.starts_with("0o") {
            (8, &unsigned[2..], true)
        } else if lower.starts_with("0b") {
            (2, &unsigned[2..], true)
        } else if unsigned.starts_with('0') && unsigned.len() > 1 {
            (8, &unsigned[1..], true)
        } else {
            (10, unsigned, true)
        }
    } else {
        (base, unsigned, false)
    };
    if underscores && digits.contains('_') && !underscore_ok(text) {
        return Err(ParseIntError::Syntax);
    }
    let mut magnitude: u128 = 0;
    let mut any = false;
    let mut overflow = false;
    for ch in digits.chars() {
        if ch == '_' && underscores {
            continue;
        }
        let digit = ch.to_digit(base).ok_or(ParseIntError::Syntax)?;
        any = true;
        if !overflow {
            magnitude = magnitude * u128::from(base) + u128::from(digit);
            if magnitude > 1u128 << 64 {
                overflow = true;
            }
        }
    }
    if !any {
        return Err(ParseIntError::Syntax);
    }
    let limit: u128 = if negative { 1u128 << 63 } else { (1u128 << 63) - 1 };
    if overflow || magnitude > limit {
        return Err(ParseIntError::Range(if negative { i64::MIN } else { i64::MAX }));
    }
    let value = magnitude as i128;
    Ok((if negative { -value } else { value }) as i64)
}

/// Go's `strconv.ParseFloat(text, 64)`: decimal and hexadecimal (`0x1p4`) literals, underscores between digits,
/// `inf`/`infinity`/`nan`; out-of-range values are an error, as Go reports them.
pub(crate) fn parse_go_float(text: &str) -> Option<f64> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'+') => (false, &text[1..]),
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    let lower = unsigned.to_ascii_lowercase();
    let sign = if negative { -1.0 } else { 1.0 };
    match lower.as_str() {
        "inf" | "infinity" => return Some(sign * f64::INFINITY),
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    let cleaned: String = if unsigned.contains('_') {
        if !underscore_ok(text) {
            return None;
        }
        unsigned.chars().filter(|ch| *ch != '_').collect()
    } else {
        unsigned.to_string()
    };
    let lower = cleaned.to_ascii_lowercase();
    let magnitude = if let Some(hex) = lower.strip_prefix("0x") {
        parse_hex_float(hex)?
    } else {
        if !cleaned.starts_with(|ch: char| ch.is_ascii_digit() || ch == '.')
            || !cleaned
                .bytes()
                .all(|byte| byte.is_ascii_digit() || matches!(byte, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return None;
        }
        let parsed: f64 = cleaned.parse().ok()?;
        if parsed.is_infinite() {
            return None;
        }
        parsed
    };
    Some(sign * magnitude)
}

/// A hexadecimal float mantissa and mandatory `p` exponent (Go's `0x1.8p3`), without the `0x`.
fn parse_hex_float(hex: &str) -> Option<f64> {
    let (mantissa, exponent) = hex.split_once('p')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut value = 0.0f64;
    for ch in int_part.chars() {
        value = value * 16.0 + f64::from(ch.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for ch in frac_part.chars() {
        value += f64::from(ch.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    let result = value * 2f64.powi(exponent);
    result.is_finite().then_some(result)
}

fn to_string_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(strval(args.first().unwrap_or(&Value::Nil))))
}

fn to_strings_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let items = strslice(args.first().unwrap_or(&Value::Nil));
    Ok(Value::list(items.into_iter().map(Value::from).collect()))
}

/// `atoi`: `strconv.Atoi` with the error dropped (syntax errors give 0, overflow the clamped value).
fn atoi_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(args.first().unwrap_or(&Value::Nil))?;
    Ok(Value::Int(match parse_go_int(&text, 10, true) {
        Ok(int) | Err(ParseIntError::Range(int)) => int,
        Err(ParseIntError::Syntax) => 0,
    }))
}

fn int_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Int(to_int64(args.first().unwrap_or(&Value::Nil))))
}

fn float64_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Float(to_float64(args.first().unwrap_or(&Value::Nil))))
}

/// `toDecimal`: the `%v` text of the value read as octal; 0 when it is not octal.
fn to_decimal_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = fmt::sprint_value(args.first().unwrap_or(&Value::Nil));
    Ok(Value::Int(parse_go_int(&text, 8, false).unwrap_or(0)))
}

/// `seq`: like GNU seq, a space-separated string (`seq 3` = "1 2 3", `seq 2 5`, `seq 0 2 10`).
fn seq_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let params = args.iter().map(param_int).collect::<Result<Vec<_>, _>>()?;
    let (start, end, step) = match params.as_slice() {
        [end] => {
            let increment = if *end < 1 { -1 } else { 1 };
            (1, end.wrapping_add(increment), increment)
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            (*start, end.wrapping_add(step), step)
        }
        [start, step, end] => {
            let mut increment = 1;
            if end < start {
                increment = -1;
                if *step > 0 {
                    return Ok(Value::from(""));
                }
            }
            (*start, end.wrapping_add(increment), *step)
        }
        _ => return Ok(Value::from("")),
    };
    let items = until_step("seq", start, end, step)?;
    let text = items.iter().map(i64::to_string).collect::<Vec<_>>().join(" ");
    Ok(Value::from(text))
}

/// Sprig's `untilStep`: the integers from `start` toward `stop` (exclusive) by `step`; empty when the step does
/// not lead there. Refuses more than [`crate::gotemplate::funcs::MAX_LIST_ITEMS`] items before building them.
pub(crate) fn until_step(name: &str, start: i64, stop: i64, step: i64) -> Result<Vec<i64>, FuncError> {
    let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
    let count = if stop < start {
        if step >= 0 {
            return Ok(Vec::new());
        }
        (start - stop + (-step) - 1) / (-step)
    } else {
        if step <= 0 {
            return Ok(Vec::new());
        }
        (stop - start + step - 1) / step
    };
    crate::gotemplate::funcs::check_list_len(name, count.max(0) as u128)?;
    Ok((0..count).map(|index| (start + index * step) as i64).collect())
}

/// Test helpers shared by the Sprig families of this crate: call a registered function as the engine would (arity
/// first) and compare results through their `Debug` text (values have no `PartialEq`: maps are shared cells).
#[cfg(test)]
pub(crate) mod test_support {
    use crate::gotemplate::{FuncError, FuncMap, NoRuntime, Value};

    fn funcs() -> FuncMap {
        let mut map = FuncMap::new();
        super::super::strings::register(&mut map);
        super::super::lists::register(&mut map);
        super::super::dicts::register(&mut map);
        super::super::math::register(&mut map);
        super::register(&mut map);
        super::super::regexp::register(&mut map);
        super::super::reflect::register(&mut map);
        super::super::paths::register(&mut map);
        map
    }

    /// Calls `name` with `args`; the outcome as comparable text.
    pub(crate) fn call(name: &str, args: &[Value]) -> String {
        let map = funcs();
        let Some(def) = map.get(name) else {
            return format!("function {name:?} not defined");
        };
        let result = def
            .arity
            .check(name, args.len())
            .and_then(|()| (def.call)(&mut NoRuntime, args));
        show(&result)
    }

    /// The raw result of calling `name`.
    pub(crate) fn call_raw(name: &str, args: &[Value]) -> Result<Value, FuncError> {
        let map = funcs();
        let def = map.get(name).ok_or_else(|| FuncError::new("not defined"))?;
        def.arity.check(name, args.len())?;
        (def.call)(&mut NoRuntime, args)
    }

    /// A result as comparable text.
    pub(crate) fn show(result: &Result<Value, FuncError>) -> String {
        match result {
            Ok(value) => format!("{value:?}"),
            Err(error) => format!("error: {error}"),
        }
    }

    /// The text of a successful call returning `value`.
    pub(crate) fn ok(value: impl Into<Value>) -> String {
        show(&Ok(value.into()))
    }

    /// The text of a call failing with `message`.
    pub(crate) fn err(message: &str) -> String {
        format!("error: {message}")
    }

    /// A string value.
    pub(crate) fn s(text: &str) -> Value {
        Value::from(text)
    }

    /// An int value.
    pub(crate) fn i(int: i64) -> Value {
        Value::Int(int)
    }

    /// A float value.
    pub(crate) fn f(float: f64) -> Value {
        Value::Float(float)
    }

    /// A list value.
    pub(crate) fn l(items: Vec<Value>) -> Value {
        Value::list(items)
    }

    /// A map value from pairs.
    pub(crate) fn d(pairs: Vec<(&str, Value)>) -> Value {
        let map = crate::gotemplate::Map::new();
        for (key, value) in pairs {
            map.insert(key, value);
        }
        Value::Map(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sprig::conv::test_support::*;

    #[test]
    fn int_conversions_follow_cast() {
        // Expected values printed by Helm v4.2.3 (`int X`).
        let cases: &[(Value, i64)] = &[
            (s("12"), 12),
            (s("0x1F"), 31),
            (s("010"), 8),
            (Value::Float(3.9), 3),
            (Value::Float(-3.9), -3),
            (Value::Bool(true), 1),
            (Value::Nil, 0),
            (s("x"), 0),
            (s("1.5"), 0),
            (s("1e3"), 0),
            (s("0b11"), 3),
            (s("0o17"), 15),
            (s(" 5"), 0),
            (s("1_000"), 1000),
            (s("-0x10"), -16),
            (s("08"), 0),
            (s("0"), 0),
            (s("-010"), -8),
            (Value::list(vec![Value::Int(1)]), 0),
            (s("+5"), 5),
            (s("99999999999999999999"), 0),
            (s("1.0"), 1),
            (s("1.50"), 0),
            (s("10."), 0),
        ];
        for (input, want) in cases {
            assert_eq!(
                call("int", std::slice::from_ref(input)),
                ok(Value::Int(*want)),
                "int {input:?}"
            );
            assert_eq!(
                call("int64", std::slice::from_ref(input)),
                ok(Value::Int(*want)),
                "int64 {input:?}"
            );
        }
    }

    #[test]
    fn atoi_float64_and_to_decimal() {
        let atoi: &[(&str, i64)] = &[
            ("12", 12),
            ("x", 0),
            (" 3", 0),
            ("+4", 4),
            ("1.5", 0),
            ("99999999999999999999", i64::MAX),
            ("-99999999999999999999", i64::MIN),
            ("1_0", 0),
        ];
        for (input, want) in atoi {
            assert_eq!(call("atoi", &[s(input)]), ok(Value::Int(*want)), "atoi {input}");
        }
        assert_eq!(
            call("atoi", &[Value::Int(5)]),
            err("wrong type for value; expected string; got int")
        );
        let floats: &[(Value, f64)] = &[
            (s("1.5"), 1.5),
            (Value::Int(3), 3.0),
            (s("x"), 0.0),
            (Value::Bool(true), 1.0),
            (Value::Nil, 0.0),
            (s("1e3"), 1000.0),
            (s(" 1"), 0.0),
            (s("0x10"), 0.0),
            (s("1_0"), 10.0),
            (s("1e400"), 0.0),
            (s(".5"), 0.5),
            (s("5."), 5.0),
            (s("0x1p4"), 16.0),
        ];
        for (input, want) in floats {
            assert_eq!(
                call("float64", std::slice::from_ref(input)),
                ok(Value::Float(*want)),
                "float64 {input:?}"
            );
        }
        assert_eq!(call("float64", &[s("inf")]), ok(f64::INFINITY));
        assert_eq!(call("float64", &[s("Infinity")]), ok(f64::INFINITY));
        let decimals: &[(Value, i64)] = &[
            (s("0777"), 511),
            (Value::Int(777), 511),
            (s("8"), 0),
            (s("x"), 0),
            (Value::Float(7.0), 7),
        ];
        for (input, want) in decimals {
            assert_eq!(
                call("toDecimal", std::slice::from_ref(input)),
                ok(Value::Int(*want)),
                "toDecimal {input:?}"
            );
        }
    }

    #[test]
    fn strings_and_seq() {
        assert_eq!(call("toString", &[Value::Int(1)]), ok(s("1")));
        assert_eq!(call("toString", &[Value::Nil]), ok(s("<nil>")));
        assert_eq!(call("toString", &[Value::Float(1.5)]), ok(s("1.5")));
        assert_eq!(call("toString", &[Value::Bool(true)]), ok(s("true")));
        assert_eq!(
            call(
                "toStrings",
                &[Value::list(vec![
                    Value::Int(1),
                    Value::Nil,
                    s("a"),
                    Value::Float(2.5)
                ])]
            ),
            ok(Value::list(vec![s("1"), s("a"), s("2.5")]))
        );
        assert_eq!(call("toStrings", &[s("x")]), ok(Value::list(vec![s("x")])));
        assert_eq!(call("toStrings", &[Value::Nil]), ok(Value::list(vec![])));
        let seqs: &[(&[i64], &str)] = &[
            (&[5], "1 2 3 4 5"),
            (&[3, 1], "3 2 1"),
            (&[0, 2, 10], "0 2 4 6 8 10"),
            (&[10, -3, 1], "10 7 4 1"),
            (&[10, 3, 1], ""),
            (&[], ""),
            (&[1, 2, 3, 4], ""),
            (&[0], "1 0"),
            (&[-2], "1 0 -1 -2"),
            (&[2, 2], "2"),
            (&[1, 0, 5], ""),
        ];
        for (params, want) in seqs {
            let args: Vec<Value> = params.iter().map(|p| Value::Int(*p)).collect();
            assert_eq!(call("seq", &args), ok(s(want)), "seq {params:?}");
        }
        assert!(call("seq", &[Value::Int(1_000_000_000_000)]).starts_with("error: seq: list of"));
    }
}
