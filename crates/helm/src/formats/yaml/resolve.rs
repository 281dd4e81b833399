//! YAML 1.1 plain-scalar resolution as go-yaml v2 does it (`resolve.go`): which plain scalars are null, booleans,
//! integers, floats or timestamps. Used by the reader (what a value becomes) and by the writer (which strings must
//! be quoted so that they read back as strings).

/// What a plain scalar resolves to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolved {
    /// `~`, `null`, empty.
    Null,
    /// `y`, `yes`, `on`, `true`, … (any of go-yaml's spellings).
    Bool(bool),
    /// An integer that fits `int64`.
    Int(i64),
    /// An integer that fits only `uint64`.
    Uint(u64),
    /// A float (also `.inf`, `.nan`).
    Float(f64),
    /// A timestamp (`2001-12-14`): decoded into `interface{}` it stays the original string.
    Timestamp,
    /// A string.
    Str,
}

/// go-yaml v2's `resolve("", text)` for a plain scalar.
pub(crate) fn resolve(text: &str) -> Resolved {
    let hint = match text.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        // `<<` is in go-yaml's table of words, but `<` is not a hint character, so `<<` resolves as a string
        // when written (and the reader handles merge keys itself).
        Some(_) => return Resolved::Str,
    };
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Resolved::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Resolved::Bool(false);
        }
        "" | "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        _ => {}
    }
    match hint {
        b'.' => {
            if is_dot_float(text)
                && let Some(float) = parse_float(text)
            {
                return Resolved::Float(float);
            }
            Resolved::Str
        }
        b'D' | b'S' => {
            if is_timestamp(text) {
                return Resolved::Timestamp;
            }
            let plain: String = text.chars().filter(|&c| c != '_').collect();
            if let Some(int) = go_parse_int(&plain) {
                return Resolved::Int(int);
            }
            if let Some(uint) = go_parse_uint(&plain) {
                return Resolved::Uint(uint);
            }
            if is_yaml_style_float(&plain)
                && let Some(float) = parse_float(&plain)
            {
                return Resolved::Float(float);
            }
            if let Some(binary) = plain.strip_prefix("0b") {
                if let Some(int) = parse_digits(binary, 2).and_then(|v| i64::try_from(v).ok()) {
                    return Resolved::Int(int);
                }
                if let Some(uint) = parse_digits(binary, 2).and_then(|v| u64::try_from(v).ok()) {
                    return Resolved::Uint(uint);
                }
            } else if let Some(binary) = plain.strip_prefix("-0b")
                && let Some(int) = parse_digits(binary, 2).and_then(|v| i64::try_from(-(v as i128)).ok())
            {
                return Resolved::Int(int);
            }
            Resolved::Str
        }
        _ => Resolved::Str,
    }
}

/// Whether a string must be quoted because go-yaml v2 reads it as a base-60 float (`1:20`), which the encoder
/// still quotes for compatibility.
pub(crate) fn is_base60_float(text: &str) -> bool {
    let bytes = text.as_bytes();
    match bytes.first() {
        Some(b'+' | b'-' | b'0'..=b'9') if text.contains(':') => {}
        _ => return false,
    }
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if !bytes.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while bytes.get(i).is_some_and(|b| b.is_ascii_digit() || *b == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while bytes.get(i) == Some(&b':') {
        i += 1;
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) && i - start < 2 {
            i += 1;
        }
        match i - start {
            1 => {}
            2 if bytes[start] <= b'5' => {}
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        while bytes.get(i).is_some_and(|b| b.is_ascii_digit() || *b == b'_') {
            i += 1;
        }
    }
    i == bytes.len()
}

/// `^\.[0-9]+([eE][-+]?[0-9]+)?$`: what Go's `ParseFloat` accepts of a scalar starting with a dot.
fn is_dot_float(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 1;
    let start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if i == start {
        return false;
    }
    exponent_tail(bytes, i)
}

fn exponent_tail(bytes: &[u8], mut i: usize) -> bool {
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == bytes.len()
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_style_float(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    } else {
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
    }
    exponent_tail(bytes, i)
}

/// Go's `ParseFloat` on text already checked against the float grammar; out of range (±Inf) is an error in Go.
fn parse_float(text: &str) -> Option<f64> {
    let float: f64 = text.parse().ok()?;
    float.is_finite().then_some(float)
}

/// Digits in `radix` (no sign, no prefix), at least one; `None` on overflow of u128 or a bad digit.
fn parse_digits(digits: &str, radix: u32) -> Option<u128> {
    if digits.is_empty() {
        return None;
    }
    let mut value: u128 = 0;
    for ch in digits.chars() {
        let digit = ch.to_digit(radix)?;
        value = value
            .checked_mul(u128::from(radix))?
            .checked_add(u128::from(digit))?;
        if value > u128::from(u64::MAX) + 1 {
            // Keep going only to validate digits; the value is out of every range we care about.
            value = u128::from(u64::MAX) + 2;
        }
    }
    Some(value)
}

/// Magnitude of an unsigned Go integer literal with base prefix (`strconv.ParseUint(s, 0, 64)` rules).
fn go_magnitude(text: &str) -> Option<u128> {
    let lower = text.get(..2).map(str::to_ascii_lowercase);
    match lower.as_deref() {
        Some("0x") => parse_digits(&text[2..], 16),
        Some("0o") => parse_digits(&text[2..], 8),
        Some("0b") => parse_digits(&text[2..], 2),
        _ if text.len() > 1 && text.starts_with('0') => parse_digits(&text[1..], 8),
        _ => parse_digits(text, 10),
    }
}

/// `strconv.ParseInt(text, 0, 64)`.
pub(crate) fn go_parse_int(text: &str) -> Option<i64> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = go_magnitude(rest)? as i128;
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).ok()
}

/// `strconv.ParseUint(text, 0, 64)`.
fn go_parse_uint(text: &str) -> Option<u64> {
    u64::try_from(go_magnitude(text)?).ok()
}

/// go-yaml v2's `parseTimestamp`: `YYYY-M-D`, optionally with a time (`T`, `t` or a space) as Go's `time.Parse`
/// reads its four layouts.
pub(crate) fn is_timestamp(text: &str) -> bool {
    let bytes = text.as_bytes();
    let year_digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if year_digits != 4 || bytes.get(4) != Some(&b'-') {
        return false;
    }
    let year: i64 = text[..4].parse().unwrap_or(0);
    let mut i = 5;
    let Some(month) = getnum(bytes, &mut i) else {
        return false;
    };
    if !(1..=12).contains(&month) || bytes.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = getnum(bytes, &mut i) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if day < 1 || day > days {
        return false;
    }
    if i == bytes.len() {
        return true;
    }
    let separator = bytes[i];
    if !matches!(separator, b'T' | b't' | b' ') {
        return false;
    }
    i += 1;
    let Some(hour) = getnum(bytes, &mut i) else {
        return false;
    };
    if hour > 23 || bytes.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(minute) = getnum(bytes, &mut i) else {
        return false;
    };
    if minute > 59 || bytes.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(second) = getnum(bytes, &mut i) else {
        return false;
    };
    if second > 59 {
        return false;
    }
    if bytes.get(i) == Some(&b'.') {
        let start = i + 1;
        i += 1;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if separator == b' ' {
        return i == bytes.len();
    }
    match bytes.get(i) {
        Some(b'Z') => i + 1 == bytes.len(),
        Some(b'+' | b'-') => {
            let zone = &bytes[i + 1..];
            zone.len() == 5
                && zone[0].is_ascii_digit()
                && zone[1].is_ascii_digit()
                && zone[2] == b':'
                && zone[3].is_ascii_digit()
                && zone[4].is_ascii_digit()
        }
        _ => false,
    }
}

/// Go's `getnum(value, false)`: one digit, or two when the second is a digit.
fn getnum(bytes: &[u8], i: &mut usize) -> Option<u32> {
    let first = *bytes.get(*i)?;
    if !first.is_ascii_digit() {
        return None;
    }
    *i += 1;
    let mut value = u32::from(first - b'0');
    if let Some(second) = bytes.get(*i).filter(|b| b.is_ascii_digit()) {
        value = value * 10 + u32::from(second - b'0');
        *i += 1;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_1_1_scalars() {
        assert_eq!(resolve("n"), Resolved::Bool(false));
        assert_eq!(resolve("Yes"), Resolved::Bool(true));
        assert_eq!(resolve("0755"), Resolved::Int(493));
        assert_eq!(resolve("1_000"), Resolved::Int(1000));
        assert_eq!(resolve("0x1F"), Resolved::Int(31));
        assert_eq!(resolve("0o17"), Resolved::Int(15));
        assert_eq!(resolve("0b101"), Resolved::Int(5));
        assert_eq!(resolve("+1"), Resolved::Int(1));
        assert_eq!(
            resolve("12345678901234567000"),
            Resolved::Uint(12_345_678_901_234_567_000)
        );
        assert_eq!(resolve("1e3"), Resolved::Float(1000.0));
        assert_eq!(resolve("1."), Resolved::Float(1.0));
        assert_eq!(resolve("08"), Resolved::Float(8.0));
        assert_eq!(resolve("1e400"), Resolved::Str);
        assert_eq!(resolve("2001-12-14"), Resolved::Timestamp);
        assert_eq!(resolve("2001-12-14T21:59:43.10-05:00"), Resolved::Timestamp);
        assert_eq!(resolve("2001-02-30"), Resolved::Str);
        assert_eq!(resolve("<<"), Resolved::Str);
        assert_eq!(resolve("1e"), Resolved::Str);
        assert_eq!(resolve("-"), Resolved::Str);
        assert!(is_base60_float("190:20:30"));
        assert!(is_base60_float("1:20"));
        assert!(!is_base60_float("1:60"));
    }
}
