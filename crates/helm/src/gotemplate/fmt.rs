//! Go's `fmt` for template values: `%v` printing (what `{{ . }}`, `print` and Sprig's `toString` produce) and
//! `Sprintf` with Go's verbs, flags, width and precision (what `printf` produces), including Go's `%!verb(type=value)`
//! markers for mismatched arguments, plus `strconv.FormatFloat` and `strconv.Quote`, which the formatter is built on.
//!
//! The printer follows Go's `fmt` state machine: a format is scanned for flags (`#0+- `), an argument index
//! (`%[n]d`), a width and a precision (either may be `*`, taken from the arguments), and a verb; each argument is
//! then printed the way Go prints a value of its dynamic type, recursing into lists and maps with the same verb.
//! Expected outputs in the tests were taken from Helm v4 itself.
//!
//! Bounds: Go accepts literal widths and precisions up to about 10^7 and `*` ones up to 10^6; a result is never
//! allowed to grow past [`MAX_TEXT_BYTES`] (the `try_` functions report that as an error, the plain ones cut the
//! text there), and nested values are printed at most [`MAX_VALUE_DEPTH`] levels deep (deeper levels print `...`;
//! Go would overflow its stack on a map that contains itself).

use super::funcs::{FuncError, MAX_TEXT_BYTES};
use super::value::{MAX_VALUE_DEPTH, Value};

/// Go's `fmt.Sprint(value)` (`%v`).
#[must_use]
pub fn sprint_value(value: &Value) -> String {
    let mut printer = Printer::new();
    printer.print_arg(value, 'v');
    printer.buf
}

/// Go's `fmt.Sprint(value)`, or an error if the text would exceed [`MAX_TEXT_BYTES`].
pub fn try_sprint_value(value: &Value) -> Result<String, FuncError> {
    let mut printer = Printer::new();
    printer.print_arg(value, 'v');
    printer.finish("print")
}

/// Go's `fmt.Sprint(args...)`: operands joined, with a space between two operands when neither is a string.
#[must_use]
pub fn sprint(args: &[Value]) -> String {
    let mut printer = Printer::new();
    printer.do_print(args);
    printer.buf
}

/// [`sprint`], or an error if the text would exceed [`MAX_TEXT_BYTES`].
pub fn try_sprint(args: &[Value]) -> Result<String, FuncError> {
    let mut printer = Printer::new();
    printer.do_print(args);
    printer.finish("print")
}

/// Go's `fmt.Sprintln(args...)`: operands always separated by spaces, newline appended.
#[must_use]
pub fn sprintln(args: &[Value]) -> String {
    let mut printer = Printer::new();
    printer.do_println(args);
    printer.buf
}

/// [`sprintln`], or an error if the text would exceed [`MAX_TEXT_BYTES`].
pub fn try_sprintln(args: &[Value]) -> Result<String, FuncError> {
    let mut printer = Printer::new();
    printer.do_println(args);
    printer.finish("println")
}

/// Go's `fmt.Sprintf(format, args...)`. A result that would exceed [`MAX_TEXT_BYTES`] is cut there (use
/// [`try_sprintf`] to get an error instead).
#[must_use]
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut printer = Printer::new();
    printer.do_printf(format, args);
    printer.buf
}

/// Go's `fmt.Sprintf(format, args...)`, or an error if the result would exceed [`MAX_TEXT_BYTES`] (Go would
/// allocate it; `printf "%9999999d%9999999d%9999999d%9999999d"` is 40 MB).
pub fn try_sprintf(format: &str, args: &[Value]) -> Result<String, FuncError> {
    let mut printer = Printer::new();
    printer.do_printf(format, args);
    printer.finish("printf")
}

/// Go's `strconv.FormatFloat(value, fmt, prec, 64)`: `fmt` is one of `b e E f g G x X`, `prec` the number of digits
/// (`-1`: the fewest that read back as the same float). An unknown `fmt` gives `%` followed by it, as Go's does.
/// Precisions above [`MAX_TEXT_BYTES`] are treated as [`MAX_TEXT_BYTES`].
#[must_use]
pub fn format_float(value: f64, fmt: char, prec: i32) -> String {
    let prec = if prec < 0 {
        -1
    } else {
        i64::from(prec).min(MAX_TEXT_BYTES as i64)
    };
    format_float_impl(value, fmt, prec)
}

/// Go's `strconv.Quote`: a double-quoted Go string literal, printable Unicode kept, everything else escaped.
#[must_use]
pub fn quote(text: &str) -> String {
    quote_with(text.as_bytes(), '"', false)
}

/// Go's `strconv.Quote` of a one-character string.
#[must_use]
pub fn quote_char(ch: char) -> String {
    quote(ch.encode_utf8(&mut [0; 4]))
}

/// Go's `strconv.QuoteToASCII`: like [`quote`] but every non-ASCII character is escaped too.
#[must_use]
pub fn quote_to_ascii(text: &str) -> String {
    quote_with(text.as_bytes(), '"', true)
}

/// Go's `strconv.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space.
#[must_use]
pub fn is_print(c: u32) -> bool {
    if c < 0x80 {
        return (0x20..0x7f).contains(&c);
    }
    PRINTABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

// ---------------------------------------------------------------------------------------------------------------
// The printer.

const LOWER_HEX: &[u8; 16] = b"0123456789abcdef";
const UPPER_HEX: &[u8; 16] = b"0123456789ABCDEF";
/// Go's bound on widths and precisions (`tooLarge`).
const TOO_LARGE: i64 = 1_000_000;
const REPLACEMENT: char = '\u{fffd}';

#[derive(Clone, Copy, Default)]
struct Flags {
    wid: usize,
    prec: usize,
    wid_present: bool,
    prec_present: bool,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    plus_v: bool,
    sharp_v: bool,
}

struct Printer {
    buf: String,
    /// Set once a write would have exceeded [`MAX_TEXT_BYTES`]; everything after is dropped.
    overflow: bool,
    f: Flags,
    reordered: bool,
    good_arg_num: bool,
}

/// What a bad verb reports: the operand (Go's `p.arg`/`p.value`).
#[derive(Clone, Copy)]
enum Operand<'a> {
    Value(&'a Value),
    /// A map key.
    Str(&'a str),
    Byte(u8),
}

impl Printer {
    fn new() -> Self {
        Self {
            buf: String::new(),
            overflow: false,
            f: Flags::default(),
            reordered: false,
            good_arg_num: true,
        }
    }

    fn finish(self, name: &str) -> Result<String, FuncError> {
        if self.overflow {
            Err(FuncError::over_limit(
                super::Limit::TextSize(MAX_TEXT_BYTES),
                format!("{name}: result exceeds the limit of {MAX_TEXT_BYTES} bytes"),
            ))
        } else {
            Ok(self.buf)
        }
    }

    /// Whether `extra` more bytes fit; marks the overflow if not.
    fn room(&mut self, extra: usize) -> bool {
        if self.overflow || self.buf.len().saturating_add(extra) > MAX_TEXT_BYTES {
            self.overflow = true;
            return false;
        }
        true
    }

    fn write_str(&mut self, text: &str) {
        if self.room(text.len()) {
            self.buf.push_str(text);
        }
    }

    fn write_char(&mut self, c: char) {
        if self.room(c.len_utf8()) {
            self.buf.push(c);
        }
    }

    /// Go's `writePadding`: `n` spaces, or zeros when zero-padding to the left.
    fn write_padding(&mut self, n: usize) {
        if n == 0 || !self.room(n) {
            return;
        }
        let pad = if self.f.zero && !self.f.minus { '0' } else { ' ' };
        push_repeated(&mut self.buf, pad, n);
    }

    /// Go's `pad`/`padString`: `text` padded to the width (counted in runes) on the left, or the right with `-`.
    fn pad_runes(&mut self, text: &str, runes: usize) {
        if !self.f.wid_present || self.f.wid == 0 {
            self.write_str(text);
            return;
        }
        let width = self.f.wid.saturating_sub(runes);
        if self.f.minus {
            self.write_str(text);
            self.write_padding(width);
        } else {
            self.write_padding(width);
            self.write_str(text);
        }
    }

    fn pad(&mut self, text: &str) {
        if !self.f.wid_present || self.f.wid == 0 {
            self.write_str(text);
            return;
        }
        self.pad_runes(text, text.chars().count());
    }

    fn pad_no_zero(&mut self, text: &str) {
        let zero = self.f.zero;
        self.f.zero = false;
        self.pad(text);
        self.f.zero = zero;
    }

    // --- Print, Println, Printf --------------------------------------------------------------------------------

    fn do_print(&mut self, args: &[Value]) {
        let mut prev_string = false;
        for (index, arg) in args.iter().enumerate() {
            let is_string = matches!(arg, Value::String(_));
            if index > 0 && !is_string && !prev_string {
                self.write_char(' ');
            }
            self.print_arg(arg, 'v');
            prev_string = is_string;
            if self.overflow {
                return;
            }
        }
    }

    fn do_println(&mut self, args: &[Value]) {
        for (index, arg) in args.iter().enumerate() {
            if index > 0 {
                self.write_char(' ');
            }
            self.print_arg(arg, 'v');
        }
        self.write_char('\n');
    }

    fn do_printf(&mut self, format: &str, args: &[Value]) {
        let bytes = format.as_bytes();
        let end = bytes.len();
        let mut arg_num = 0usize;
        let mut after_index;
        self.reordered = false;
        let mut i = 0usize;
        'format: while i < end {
            if self.overflow {
                return;
            }
            self.good_arg_num = true;
            let last = i;
            while i < end && bytes[i] != b'%' {
                i += 1;
            }
            if i > last {
                self.write_str(&format[last..i]);
            }
            if i >= end {
                break;
            }
            i += 1; // the '%'
            self.f = Flags::default();
            while i < end {
                let c = bytes[i];
                match c {
                    b'#' => self.f.sharp = true,
                    b'0' => self.f.zero = true,
                    b'+' => self.f.plus = true,
                    b'-' => self.f.minus = true,
                    b' ' => self.f.space = true,
                    _ => {
                        // Fast path: flags and a lower-case verb.
                        if c.is_ascii_lowercase() && arg_num < args.len() {
                            if c == b'v' || c == b'w' {
                                self.set_v_flags();
                            }
                            self.print_arg(&args[arg_num], char::from(c));
                            arg_num += 1;
                            i += 1;
                            continue 'format;
                        }
                        break;
                    }
                }
                i += 1;
            }

            // Argument index?
            (arg_num, i, after_index) = self.arg_number(arg_num, bytes, i, args.len());

            // Width?
            if i < end && bytes[i] == b'*' {
                i += 1;
                let (num, ok, next) = int_from_arg(args, arg_num);
                arg_num = next;
                self.f.wid_present = ok;
                if !ok {
                    self.write_str("%!(BADWIDTH)");
                }
                if num < 0 {
                    self.f.minus = true;
                    self.f.zero = false;
                }
                self.f.wid = usize::try_from(num.unsigned_abs()).unwrap_or(0);
                after_index = false;
            } else {
                let (num, ok, next) = parse_num(bytes, i, end);
                self.f.wid = num;
                self.f.wid_present = ok;
                i = next;
                if after_index && ok {
                    self.good_arg_num = false;
                }
            }

            // Precision?
            if i + 1 < end && bytes[i] == b'.' {
                i += 1;
                if after_index {
                    self.good_arg_num = false;
                }
                (arg_num, i, after_index) = self.arg_number(arg_num, bytes, i, args.len());
                if i < end && bytes[i] == b'*' {
                    i += 1;
                    let (num, ok, next) = int_from_arg(args, arg_num);
                    arg_num = next;
                    if num < 0 || !ok {
                        self.f.prec = 0;
                        self.f.prec_present = false;
                        self.write_str("%!(BADPREC)");
                    } else {
                        self.f.prec = usize::try_from(num).unwrap_or(0);
                        self.f.prec_present = true;
                    }
                    after_index = false;
                } else {
                    let (num, ok, next) = parse_num(bytes, i, end);
                    i = next;
                    self.f.prec = if ok { num } else { 0 };
                    self.f.prec_present = true;
                }
            }

            if !after_index {
                (arg_num, i, _) = self.arg_number(arg_num, bytes, i, args.len());
            }

            if i >= end {
                self.write_str("%!(NOVERB)");
                break;
            }

            let Some(verb) = format[i..].chars().next() else {
                break;
            };
            i += verb.len_utf8();

            if verb == '%' {
                self.write_char('%');
            } else if !self.good_arg_num {
                self.write_str("%!");
                self.write_char(verb);
                self.write_str("(BADINDEX)");
            } else if arg_num >= args.len() {
                self.write_str("%!");
                self.write_char(verb);
                self.write_str("(MISSING)");
            } else {
                if verb == 'v' || verb == 'w' {
                    self.set_v_flags();
                }
                self.print_arg(&args[arg_num], verb);
                arg_num += 1;
            }
        }

        if !self.reordered && arg_num < args.len() {
            self.f = Flags::default();
            self.write_str("%!(EXTRA ");
            for (index, arg) in args[arg_num..].iter().enumerate() {
                if index > 0 {
                    self.write_str(", ");
                }
                if arg.is_nil() {
                    self.write_str("<nil>");
                } else {
                    self.write_str(&arg.type_name());
                    self.write_char('=');
                    self.print_arg(arg, 'v');
                }
            }
            self.write_char(')');
        }
    }

    /// `%#v` and `%+v` are flagless formats of their own.
    fn set_v_flags(&mut self) {
        self.f.sharp_v = self.f.sharp;
        self.f.sharp = false;
        self.f.plus_v = self.f.plus;
        self.f.plus = false;
    }

    /// Go's `argNumber`: an explicit `[n]` argument index at `bytes[i..]`.
    fn arg_number(
        &mut self,
        arg_num: usize,
        bytes: &[u8],
        i: usize,
        num_args: usize,
    ) -> (usize, usize, bool) {
        if i >= bytes.len() || bytes[i] != b'[' {
            return (arg_num, i, false);
        }
        self.reordered = true;
        let (index, width, ok) = parse_arg_number(&bytes[i..]);
        if ok && index >= 1 && index - 1 < num_args as i64 {
            return (usize::try_from(index - 1).unwrap_or(0), i + width, true);
        }
        self.good_arg_num = false;
        (arg_num, i + width, ok)
    }

    // --- Printing one operand --------------------------------------------------------------------------------------

    /// Go's `printArg`: an operand at the top level.
    fn print_arg(&mut self, arg: &Value, verb: char) {
        if self.overflow {
            return;
        }
        if arg.is_nil() {
            match verb {
                'T' | 'v' => self.pad("<nil>"),
                _ => self.bad_verb(verb, None),
            }
            return;
        }
        match verb {
            'T' => {
                self.fmt_s(&arg.type_name());
                return;
            }
            'p' => {
                self.fmt_pointer(arg, verb);
                return;
            }
            _ => {}
        }
        match arg {
            Value::Bool(flag) => self.fmt_bool(*flag, verb, Operand::Value(arg)),
            Value::Int(int) => self.fmt_integer(*int as u64, true, verb, Operand::Value(arg)),
            Value::Float(float) => self.fmt_float(*float, verb, Operand::Value(arg)),
            Value::String(text) => self.fmt_string(text.as_bytes(), verb, Operand::Value(arg)),
            Value::Bytes(bytes) => self.fmt_bytes(bytes, verb, "[]byte", arg, 0),
            Value::Nil | Value::List(_) | Value::Map(_) | Value::Object(_) => {
                if !self.handle_methods(arg, verb) {
                    self.print_value(arg, verb, 0);
                }
            }
        }
    }

    /// Go's `handleMethods`: `%w` is always wrong in `Sprintf`; objects print through their `String()`.
    fn handle_methods(&mut self, value: &Value, verb: char) -> bool {
        if verb == 'w' {
            self.bad_verb(verb, Some(Operand::Value(value)));
            return true;
        }
        if let Value::Object(object) = value {
            if self.f.sharp_v || matches!(verb, 'v' | 's' | 'x' | 'X' | 'q') {
                let text = object.display();
                self.fmt_string(
                    text.as_bytes(),
                    if self.f.sharp_v { 's' } else { verb },
                    Operand::Value(value),
                );
            } else {
                self.bad_verb(verb, Some(Operand::Value(value)));
            }
            return true;
        }
        false
    }

    /// Go's `printValue`: a value inside a list or map (`depth > 0`), or a list or map at the top.
    fn print_value(&mut self, value: &Value, verb: char, depth: usize) {
        if self.overflow {
            return;
        }
        if depth > MAX_VALUE_DEPTH && matches!(value, Value::List(_) | Value::Map(_)) {
            self.write_str("...");
            return;
        }
        if depth > 0 && !value.is_nil() && self.handle_methods(value, verb) {
            return;
        }
        match value {
            Value::Nil => {
                if self.f.sharp_v {
                    self.write_str("interface {}(nil)");
                } else {
                    self.write_str("<nil>");
                }
            }
            Value::Bool(flag) => self.fmt_bool(*flag, verb, Operand::Value(value)),
            Value::Int(int) => self.fmt_integer(*int as u64, true, verb, Operand::Value(value)),
            Value::Float(float) => self.fmt_float(*float, verb, Operand::Value(value)),
            Value::String(text) => self.fmt_string(text.as_bytes(), verb, Operand::Value(value)),
            Value::Bytes(bytes) => {
                if matches!(verb, 's' | 'q' | 'x' | 'X') {
                    self.fmt_bytes(bytes, verb, "[]uint8", value, depth);
                } else {
                    self.print_byte_slice(bytes, verb, "[]uint8", depth);
                }
            }
            Value::List(items) => {
                if self.f.sharp_v {
                    self.write_str("[]interface {}{");
                    for (index, item) in items.iter().enumerate() {
                        if index > 0 {
                            self.write_str(", ");
                        }
                        self.print_value(item, verb, depth + 1);
                    }
                    self.write_char('}');
                } else {
                    self.write_char('[');
                    for (index, item) in items.iter().enumerate() {
                        if index > 0 {
                            self.write_char(' ');
                        }
                        self.print_value(item, verb, depth + 1);
                    }
                    self.write_char(']');
                }
            }
            Value::Map(map) => {
                // Printing never changes a map, so the borrow may be held while recursing (even into itself).
                let entries = map.borrow();
                let sharp_v = self.f.sharp_v;
                self.write_str(if sharp_v {
                    "map[string]interface {}{"
                } else {
                    "map["
                });
                for (index, (key, item)) in entries.iter().enumerate() {
                    if self.overflow {
                        return;
                    }
                    if index > 0 {
                        self.write_str(if sharp_v { ", " } else { " " });
                    }
                    if verb == 'w' {
                        self.bad_verb(verb, Some(Operand::Str(key)));
                    } else {
                        self.fmt_string(key.as_bytes(), verb, Operand::Str(key));
                    }
                    self.write_char(':');
                    self.print_value(item, verb, depth + 1);
                }
                self.write_char(if sharp_v { '}' } else { ']' });
            }
            Value::Object(object) => {
                let text = object.display();
                self.fmt_s(&text);
            }
        }
    }

    /// Go's `badVerb`: `%!verb(type=value)`, the value printed with `%v` and the current flags.
    fn bad_verb(&mut self, verb: char, operand: Option<Operand<'_>>) {
        self.write_str("%!");
        self.write_char(verb);
        self.write_char('(');
        match operand {
            None => self.write_str("<nil>"),
            Some(Operand::Value(value)) => {
                self.write_str(&value.type_name());
                self.write_char('=');
                match value {
                    // A list or map reaches here only through `%w`; Go prints it plainly (no methods).
                    Value::List(_) | Value::Map(_) => self.print_value(value, 'v', 0),
                    Value::Object(object) => {
                        let text = object.display();
                        self.fmt_s(&text);
                    }
                    _ => self.print_arg(value, 'v'),
                }
            }
            Some(Operand::Str(text)) => {
                self.write_str("string=");
                self.fmt_string(text.as_bytes(), 'v', Operand::Str(text));
            }
            Some(Operand::Byte(byte)) => {
                self.write_str("uint8=");
                self.fmt_integer(u64::from(byte), false, 'v', Operand::Byte(byte));
            }
        }
        self.write_char(')');
    }

    fn fmt_pointer(&mut self, arg: &Value, verb: char) {
        match arg {
            // Go prints the address, which no template can rely on.
            Value::List(_) | Value::Map(_) | Value::Bytes(_) | Value::Object(_) => {
                let sharp = self.f.sharp;
                self.f.sharp = !sharp;
                self.fmt_int(0xc000_010000, 16, false, verb, LOWER_HEX);
                self.f.sharp = sharp;
            }
            _ => self.bad_verb(verb, Some(Operand::Value(arg))),
        }
    }

    fn fmt_bool(&mut self, flag: bool, verb: char, operand: Operand<'_>) {
        match verb {
            't' | 'v' => self.pad(if flag { "true" } else { "false" }),
            _ => self.bad_verb(verb, Some(operand)),
        }
    }

    /// Go's `pp.fmtInteger`.
    fn fmt_integer(&mut self, v: u64, signed: bool, verb: char, operand: Operand<'_>) {
        match verb {
            'v' => {
                if self.f.sharp_v && !signed {
                    let sharp = self.f.sharp;
                    self.f.sharp = true;
                    self.fmt_int(v, 16, false, 'v', LOWER_HEX);
                    self.f.sharp = sharp;
                } else {
                    self.fmt_int(v, 10, signed, verb, LOWER_HEX);
                }
            }
            'd' => self.fmt_int(v, 10, signed, verb, LOWER_HEX),
            'b' => self.fmt_int(v, 2, signed, verb, LOWER_HEX),
            'o' | 'O' => self.fmt_int(v, 8, signed, verb, LOWER_HEX),
            'x' => self.fmt_int(v, 16, signed, verb, LOWER_HEX),
            'X' => self.fmt_int(v, 16, signed, verb, UPPER_HEX),
            'c' => {
                let c = rune_or_replacement(v);
                let mut tmp = [0u8; 4];
                self.pad(c.encode_utf8(&mut tmp));
            }
            'q' => {
                let c = rune_or_replacement(v);
                let quoted = quote_rune(c, self.f.plus);
                self.pad(&quoted);
            }
            'U' => self.fmt_unicode(v),
            _ => self.bad_verb(verb, Some(operand)),
        }
    }

    /// Go's `fmt.fmtInteger`: digits, precision zeros, `0x`/`0b`/`0`/`0o` prefixes, sign, padding.
    fn fmt_int(&mut self, u: u64, base: u64, signed: bool, verb: char, digits: &[u8; 16]) {
        let negative = signed && (u as i64) < 0;
        let mut u = if negative { (u as i64).unsigned_abs() } else { u };
        let mut prec = 0usize;
        if self.f.prec_present {
            prec = self.f.prec;
            if prec == 0 && u == 0 {
                let zero = self.f.zero;
                self.f.zero = false;
                self.write_padding(self.f.wid);
                self.f.zero = zero;
                return;
            }
        } else if self.f.zero && !self.f.minus && self.f.wid_present {
            prec = self.f.wid;
            if negative || self.f.plus || self.f.space {
                prec = prec.saturating_sub(1);
            }
        }
        if !self.room(prec.saturating_add(70)) {
            return;
        }
        // Digits, least significant first.
        let mut rev: Vec<u8> = Vec::with_capacity(prec.max(64) + 8);
        loop {
            rev.push(digits[(u % base) as usize]);
            u /= base;
            if u == 0 {
                break;
            }
        }
        if rev.len() < prec {
            rev.resize(prec, b'0');
        }
        if self.f.sharp {
            match base {
                2 => rev.extend_from_slice(b"b0"),
                8 if rev.last() != Some(&b'0') => rev.push(b'0'),
                16 => {
                    rev.push(if digits[10] == b'A' { b'X' } else { b'x' });
                    rev.push(b'0');
                }
                _ => {}
            }
        }
        if verb == 'O' {
            rev.extend_from_slice(b"o0");
        }
        if negative {
            rev.push(b'-');
        } else if self.f.plus {
            rev.push(b'+');
        } else if self.f.space {
            rev.push(b' ');
        }
        rev.reverse();
        // Digits, signs and prefixes only: ASCII.
        let text = String::from_utf8(rev).unwrap_or_default();
        self.pad_no_zero(&text);
    }

    /// Go's `fmtUnicode`: `U+0041`, with `#` also `'A'`.
    fn fmt_unicode(&mut self, u: u64) {
        let prec = if self.f.prec_present && self.f.prec > 4 {
            self.f.prec
        } else {
            4
        };
        if !self.room(prec.saturating_add(20)) {
            return;
        }
        let hex = format!("{u:X}");
        let mut text = String::with_capacity(prec + 12);
        text.push_str("U+");
        for _ in hex.len()..prec {
            text.push('0');
        }
        text.push_str(&hex);
        if self.f.sharp
            && let Some(c) = u32::try_from(u)
                .ok()
                .filter(|&c| is_print(c))
                .and_then(char::from_u32)
        {
            text.push_str(" '");
            text.push(c);
            text.push('\'');
        }
        self.pad_no_zero(&text);
    }

    /// Go's `pp.fmtFloat`: the verb picks the format and default precision.
    fn fmt_float(&mut self, v: f64, verb: char, operand: Operand<'_>) {
        match verb {
            'v' => self.fmt_float_with(v, 'g', -1),
            'b' | 'g' | 'G' | 'x' | 'X' => self.fmt_float_with(v, verb, -1),
            'f' | 'e' | 'E' => self.fmt_float_with(v, verb, 6),
            'F' => self.fmt_float_with(v, 'f', 6),
            _ => self.bad_verb(verb, Some(operand)),
        }
    }

    /// Go's `fmt.fmtFloat`: sign, `#`, zero padding, Inf and NaN.
    fn fmt_float_with(&mut self, v: f64, verb: char, default_prec: i64) {
        let prec = if self.f.prec_present {
            self.f.prec as i64
        } else {
            default_prec
        };
        if !self.room(
            usize::try_from(prec.max(0))
                .unwrap_or(usize::MAX)
                .saturating_add(400),
        ) {
            return;
        }
        let formatted = format_float_impl(v, verb, prec);
        // num[0] is the sign: '+', '-' or ' '.
        let mut num: Vec<u8> = Vec::with_capacity(formatted.len() + 8);
        match formatted.as_bytes().first() {
            Some(b'-' | b'+') => num.extend_from_slice(formatted.as_bytes()),
            _ => {
                num.push(b'+');
                num.extend_from_slice(formatted.as_bytes());
            }
        }
        if self.f.space && num[0] == b'+' && !self.f.plus {
            num[0] = b' ';
        }
        if matches!(num.get(1), Some(b'I' | b'N')) {
            let zero = self.f.zero;
            self.f.zero = false;
            let start = usize::from(num[1] == b'N' && !self.f.space && !self.f.plus);
            let text = String::from_utf8_lossy(&num[start..]).into_owned();
            self.pad(&text);
            self.f.zero = zero;
            return;
        }
        if self.f.sharp && verb != 'b' {
            let mut digits: i64 = match verb {
                'v' | 'g' | 'G' | 'x' => {
                    if prec == -1 {
                        6
                    } else {
                        prec
                    }
                }
                _ => 0,
            };
            let mut tail: Vec<u8> = Vec::new();
            let mut has_point = false;
            let mut saw_nonzero = false;
            let mut i = 1;
            while i < num.len() {
                let c = num[i];
                match c {
                    b'.' => has_point = true,
                    b'p' | b'P' => {
                        tail.extend_from_slice(&num[i..]);
                        num.truncate(i);
                        break;
                    }
                    b'e' | b'E' if verb != 'x' && verb != 'X' => {
                        tail.extend_from_slice(&num[i..]);
                        num.truncate(i);
                        break;
                    }
                    _ => {
                        if c != b'0' {
                            saw_nonzero = true;
                        }
                        if saw_nonzero {
                            digits -= 1;
                        }
                    }
                }
                i += 1;
            }
            if !has_point {
                if num.len() == 2 && num[1] == b'0' {
                    digits -= 1;
                }
                num.push(b'.');
            }
            while digits > 0 {
                num.push(b'0');
                digits -= 1;
            }
            num.extend_from_slice(&tail);
        }
        let sign = num[0];
        // strconv's output, a sign and padding only: ASCII.
        let text = String::from_utf8(num).unwrap_or_default();
        if self.f.plus || sign != b'+' {
            if self.f.zero && !self.f.minus && self.f.wid_present && self.f.wid > text.len() {
                self.write_str(&text[..1]);
                self.write_padding(self.f.wid - text.len());
                self.write_str(&text[1..]);
                return;
            }
            self.pad(&text);
            return;
        }
        self.pad(&text[1..]);
    }

    /// Go's `pp.fmtString` (the text as bytes, so byte slices share it).
    fn fmt_string(&mut self, text: &[u8], verb: char, operand: Operand<'_>) {
        match verb {
            'v' => {
                if self.f.sharp_v {
                    self.fmt_q(text);
                } else {
                    self.fmt_s_bytes(text);
                }
            }
            's' => self.fmt_s_bytes(text),
            'x' => self.fmt_sbx(text, LOWER_HEX),
            'X' => self.fmt_sbx(text, UPPER_HEX),
            'q' => self.fmt_q(text),
            _ => self.bad_verb(verb, Some(operand)),
        }
    }

    fn fmt_s(&mut self, text: &str) {
        self.fmt_s_bytes(text.as_bytes());
    }

    /// Go's `fmtS`/`fmtBs`: truncated to the precision (in runes), padded.
    fn fmt_s_bytes(&mut self, text: &[u8]) {
        let text = self.truncate(text);
        let runes = go_rune_count(text);
        let shown = String::from_utf8_lossy(text);
        self.pad_runes(&shown, runes);
    }

    /// Go's `truncate`: at most `prec` runes.
    fn truncate<'t>(&self, text: &'t [u8]) -> &'t [u8] {
        if !self.f.prec_present {
            return text;
        }
        let mut n = self.f.prec;
        let mut i = 0;
        while i < text.len() {
            if n == 0 {
                return &text[..i];
            }
            n -= 1;
            i += go_decode(&text[i..]).1;
        }
        text
    }

    /// Go's `fmtSbx`: hex of bytes, `% x` spaced, `#` with `0x`.
    fn fmt_sbx(&mut self, text: &[u8], digits: &[u8; 16]) {
        let mut length = text.len();
        if self.f.prec_present && self.f.prec < length {
            length = self.f.prec;
        }
        let mut width = length.saturating_mul(2);
        if width > 0 {
            if self.f.space {
                if self.f.sharp {
                    width = width.saturating_mul(2);
                }
                width = width.saturating_add(length - 1);
            } else if self.f.sharp {
                width += 2;
            }
        } else {
            if self.f.wid_present {
                self.write_padding(self.f.wid);
            }
            return;
        }
        if self.f.wid_present && self.f.wid > width && !self.f.minus {
            self.write_padding(self.f.wid - width);
        }
        if !self.room(width) {
            return;
        }
        let x = if digits[10] == b'A' { 'X' } else { 'x' };
        if self.f.sharp {
            self.buf.push('0');
            self.buf.push(x);
        }
        for (index, byte) in text[..length].iter().enumerate() {
            if self.f.space && index > 0 {
                self.buf.push(' ');
                if self.f.sharp {
                    self.buf.push('0');
                    self.buf.push(x);
                }
            }
            self.buf.push(char::from(digits[usize::from(byte >> 4)]));
            self.buf.push(char::from(digits[usize::from(byte & 0xf)]));
        }
        if self.f.wid_present && self.f.wid > width && self.f.minus {
            self.write_padding(self.f.wid - width);
        }
    }

    /// Go's `fmtQ`: a quoted string (`#`: backquoted when possible; `+`: ASCII only).
    fn fmt_q(&mut self, text: &[u8]) {
        let text = self.truncate(text);
        if self.f.sharp && can_backquote(text) {
            let mut quoted = String::with_capacity(text.len() + 2);
            quoted.push('`');
            quoted.push_str(&String::from_utf8_lossy(text));
            quoted.push('`');
            self.pad(&quoted);
            return;
        }
        let quoted = quote_with(text, '"', self.f.plus);
        self.pad(&quoted);
    }

    /// Go's `fmtBytes`: a `[]byte` operand (`typ` is how `%#v` names it).
    fn fmt_bytes(&mut self, bytes: &[u8], verb: char, typ: &str, value: &Value, depth: usize) {
        match verb {
            'v' | 'd' => {
                if self.f.sharp_v {
                    self.write_str(typ);
                    self.write_char('{');
                    for (index, byte) in bytes.iter().enumerate() {
                        if index > 0 {
                            self.write_str(", ");
                        }
                        let sharp = self.f.sharp;
                        self.f.sharp = true;
                        self.fmt_int(u64::from(*byte), 16, false, 'v', LOWER_HEX);
                        self.f.sharp = sharp;
                    }
                    self.write_char('}');
                } else {
                    self.write_char('[');
                    for (index, byte) in bytes.iter().enumerate() {
                        if index > 0 {
                            self.write_char(' ');
                        }
                        self.fmt_int(u64::from(*byte), 10, false, verb, LOWER_HEX);
                        if self.overflow {
                            return;
                        }
                    }
                    self.write_char(']');
                }
            }
            's' => self.fmt_s_bytes(bytes),
            'x' => self.fmt_sbx(bytes, LOWER_HEX),
            'X' => self.fmt_sbx(bytes, UPPER_HEX),
            'q' => self.fmt_q(bytes),
            _ => {
                let _ = value;
                self.print_byte_slice(bytes, verb, "[]uint8", depth);
            }
        }
    }

    /// Go's `printValue` of a `[]uint8` with a verb that is not a string verb: each byte as a `uint8`.
    fn print_byte_slice(&mut self, bytes: &[u8], verb: char, typ: &str, depth: usize) {
        let sharp_v = self.f.sharp_v;
        if sharp_v {
            self.write_str(typ);
            self.write_char('{');
        } else {
            self.write_char('[');
        }
        for (index, byte) in bytes.iter().enumerate() {
            if self.overflow {
                return;
            }
            if index > 0 {
                self.write_str(if sharp_v { ", " } else { " " });
            }
            let _ = depth;
            if verb == 'w' {
                self.bad_verb(verb, Some(Operand::Byte(*byte)));
            } else {
                self.fmt_integer(u64::from(*byte), false, verb, Operand::Byte(*byte));
            }
        }
        self.write_char(if sharp_v { '}' } else { ']' });
    }
}

/// Go's `parsenum`: a decimal number at `bytes[start..end]`; `(0, false, end)` when it grows too large.
fn parse_num(bytes: &[u8], start: usize, end: usize) -> (usize, bool, usize) {
    if start >= end {
        return (0, false, end);
    }
    let mut num: i64 = 0;
    let mut is_num = false;
    let mut i = start;
    while i < end && bytes[i].is_ascii_digit() {
        if num > TOO_LARGE {
            return (0, false, end);
        }
        num = num * 10 + i64::from(bytes[i] - b'0');
        is_num = true;
        i += 1;
    }
    (usize::try_from(num).unwrap_or(0), is_num, i)
}

/// Go's `parseArgNumber`: `[n]` at the start of `bytes`: (n, bytes consumed, ok). `n` is one-based here.
fn parse_arg_number(bytes: &[u8]) -> (i64, usize, bool) {
    if bytes.len() < 3 {
        return (0, 1, false);
    }
    for i in 1..bytes.len() {
        if bytes[i] == b']' {
            let (num, ok, next) = parse_num(bytes, 1, i);
            if !ok || next != i {
                return (0, i + 1, false);
            }
            return (num as i64, i + 1, true);
        }
    }
    (0, 1, false)
}

/// Go's `intFromArg`: a `*` width or precision: (value, is an int within bounds, next argument).
fn int_from_arg(args: &[Value], arg_num: usize) -> (i64, bool, usize) {
    if arg_num >= args.len() {
        return (0, false, arg_num);
    }
    let (num, ok) = match &args[arg_num] {
        Value::Int(int) => (*int, true),
        _ => (0, false),
    };
    if !(-TOO_LARGE..=TOO_LARGE).contains(&num) {
        return (0, false, arg_num + 1);
    }
    (num, ok, arg_num + 1)
}

/// A code point as Go's `rune(c)` with `c > MaxRune` (or a surrogate) replaced by U+FFFD.
fn rune_or_replacement(v: u64) -> char {
    u32::try_from(v)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or(REPLACEMENT)
}

/// Go's `utf8.DecodeRune`: the character at the start of `bytes` (`None` for an invalid byte) and its length.
fn go_decode(bytes: &[u8]) -> (Option<char>, usize) {
    let Some(&first) = bytes.first() else {
        return (None, 0);
    };
    if first < 0x80 {
        return (Some(char::from(first)), 1);
    }
    let len = match first {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return (None, 1),
    };
    match bytes.get(..len).and_then(|head| std::str::from_utf8(head).ok()) {
        Some(text) => (text.chars().next(), len),
        None => (None, 1),
    }
}

/// Go's `utf8.RuneCount`: invalid bytes count one each.
fn go_rune_count(bytes: &[u8]) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        i += go_decode(&bytes[i..]).1.max(1);
        count += 1;
    }
    count
}

/// Go's `strconv.CanBackquote`.
fn can_backquote(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        let (c, len) = go_decode(&bytes[i..]);
        i += len.max(1);
        match c {
            None => return false,
            Some(c) if len > 1 => {
                if c == '\u{feff}' {
                    return false;
                }
            }
            Some(c) => {
                if (c < ' ' && c != '\t') || c == '`' || c == '\u{7f}' {
                    return false;
                }
            }
        }
    }
    true
}

/// Go's `appendQuotedWith` over bytes (invalid UTF-8 bytes become `\xNN`).
fn quote_with(bytes: &[u8], quote: char, ascii_only: bool) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push(quote);
    let mut i = 0;
    while i < bytes.len() {
        let (c, len) = go_decode(&bytes[i..]);
        match c {
            Some(c) => escape_rune(&mut out, c, quote, ascii_only),
            None => {
                out.push_str("\\x");
                out.push(char::from(LOWER_HEX[usize::from(bytes[i] >> 4)]));
                out.push(char::from(LOWER_HEX[usize::from(bytes[i] & 0xf)]));
            }
        }
        i += len.max(1);
    }
    out.push(quote);
    out
}

/// Go's `strconv.QuoteRune` (`ascii_only`: `QuoteRuneToASCII`).
fn quote_rune(c: char, ascii_only: bool) -> String {
    let mut out = String::with_capacity(8);
    out.push('\'');
    escape_rune(&mut out, c, '\'', ascii_only);
    out.push('\'');
    out
}

/// Go's `appendEscapedRune`.
fn escape_rune(out: &mut String, c: char, quote: char, ascii_only: bool) {
    use std::fmt::Write as _;
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    let code = u32::from(c);
    if ascii_only {
        if code < 0x80 && is_print(code) {
            out.push(c);
            return;
        }
    } else if is_print(code) {
        out.push(c);
        return;
    }
    match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        _ => {
            if code < 0x20 || code == 0x7f {
                let _ = write!(out, "\\x{code:02x}");
            } else if code < 0x10000 {
                let _ = write!(out, "\\u{code:04x}");
            } else {
                let _ = write!(out, "\\U{code:08x}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// strconv.FormatFloat.

/// More fraction digits than any float's exact decimal expansion has (2^-1074 has 1074).
const EXACT_FRACTION_DIGITS: usize = 1100;
/// More significant digits than any float's exact decimal expansion has (767).
const EXACT_SIGNIFICANT_DIGITS: usize = 800;

/// Decimal digits of a float: `digits` (ASCII, no trailing zeros; empty for zero) times 10^(`dp` - len).
struct Decimal {
    digits: Vec<u8>,
    dp: i64,
}

impl Decimal {
    /// Parses Rust's `{:e}` output (`d.ddde±x`) of a finite non-negative float.
    fn from_exp_text(text: &str) -> Decimal {
        let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
        let exp: i64 = exp.parse().unwrap_or(0);
        let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits.is_empty() {
            return Decimal { digits, dp: 0 };
        }
        Decimal { digits, dp: exp + 1 }
    }

    /// The shortest digits that read back as `abs` (Go's `prec = -1`).
    fn shortest(abs: f64) -> Decimal {
        if abs == 0.0 {
            return Decimal {
                digits: Vec::new(),
                dp: 0,
            };
        }
        Self::from_exp_text(&format!("{abs:e}"))
    }

    /// `abs` correctly rounded (ties to even) to `n >= 1` significant digits.
    fn significant(abs: f64, n: usize) -> Decimal {
        if abs == 0.0 {
            return Decimal {
                digits: Vec::new(),
                dp: 0,
            };
        }
        // No float has more than 767 significant digits: beyond that, the digits are exact and the rest zeros.
        let n = n.clamp(1, EXACT_SIGNIFICANT_DIGITS);
        Self::from_exp_text(&format!("{abs:.*e}", n - 1))
    }

    fn nd(&self) -> i64 {
        self.digits.len() as i64
    }

    fn digit(&self, index: i64) -> u8 {
        usize::try_from(index)
            .ok()
            .and_then(|index| self.digits.get(index))
            .copied()
            .unwrap_or(b'0')
    }
}

fn format_float_impl(value: f64, fmt: char, prec: i64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    let neg = value.is_sign_negative();
    let abs = value.abs();
    match fmt {
        'b' => return fmt_b(value),
        'x' | 'X' => return fmt_x(value, prec, fmt),
        _ => {}
    }
    let shortest = prec < 0;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    match fmt {
        'e' | 'E' => {
            let (digits, prec) = if shortest {
                let d = Decimal::shortest(abs);
                let p = (d.nd() - 1).max(0);
                (d, p)
            } else {
                (
                    Decimal::significant(abs, usize::try_from(prec).unwrap_or(0).saturating_add(1)),
                    prec,
                )
            };
            fmt_e(&mut out, &digits, prec, fmt);
        }
        'f' => {
            if shortest {
                let d = Decimal::shortest(abs);
                let p = (d.nd() - d.dp).max(0);
                fmt_f(&mut out, &d, p);
            } else {
                // Every float's exact decimal expansion ends within 1074 fraction digits: format that many (Rust's
                // precision is bounded) and extend with zeros.
                let prec = usize::try_from(prec).unwrap_or(0);
                let exact = prec.min(EXACT_FRACTION_DIGITS);
                out.push_str(&format!("{abs:.exact$}"));
                push_repeated(&mut out, '0', prec - exact);
            }
        }
        'g' | 'G' => {
            let mut prec = prec;
            let digits = if shortest {
                let d = Decimal::shortest(abs);
                prec = d.nd();
                d
            } else {
                if prec == 0 {
                    prec = 1;
                }
                Decimal::significant(abs, usize::try_from(prec).unwrap_or(1))
            };
            let mut eprec = prec;
            if eprec > digits.nd() && digits.nd() >= digits.dp {
                eprec = digits.nd();
            }
            if shortest {
                eprec = 6;
            }
            let exp = digits.dp - 1;
            if exp < -4 || exp >= eprec {
                if prec > digits.nd() {
                    prec = digits.nd();
                }
                fmt_e(&mut out, &digits, prec - 1, if fmt == 'g' { 'e' } else { 'E' });
            } else {
                if prec > digits.dp {
                    prec = digits.nd();
                }
                fmt_f(&mut out, &digits, (prec - digits.dp).max(0));
            }
        }
        other => {
            return format!("%{other}");
        }
    }
    out
}

/// Go's `fmtE`: `d.ddde±dd`.
fn fmt_e(out: &mut String, d: &Decimal, prec: i64, fmt: char) {
    out.push(char::from(d.digit(0)));
    if prec > 0 {
        out.push('.');
        let shown = d.nd().min(prec + 1);
        for index in 1..shown {
            out.push(char::from(d.digit(index)));
        }
        let zeros = usize::try_from(prec + 1 - shown.max(1)).unwrap_or(0);
        push_repeated(out, '0', zeros);
    }
    out.push(fmt);
    let exp = if d.digits.is_empty() { 0 } else { d.dp - 1 };
    out.push(if exp < 0 { '-' } else { '+' });
    let exp = exp.unsigned_abs();
    if exp < 10 {
        out.push('0');
    }
    out.push_str(&exp.to_string());
}

/// Go's `fmtF`: `ddd.ddd` with `prec` fraction digits.
fn fmt_f(out: &mut String, d: &Decimal, prec: i64) {
    if d.dp > 0 {
        for index in 0..d.dp.min(d.nd()) {
            out.push(char::from(d.digit(index)));
        }
        push_repeated(out, '0', usize::try_from(d.dp - d.nd()).unwrap_or(0));
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        // Fraction digits: zeros before the first digit, the digits, zeros after.
        let mut index = 0;
        while index < prec && d.dp + index < d.nd() {
            out.push(char::from(d.digit(d.dp + index)));
            index += 1;
        }
        push_repeated(out, '0', usize::try_from(prec - index).unwrap_or(0));
    }
}

/// Appends `n` copies of `c` (fast even for millions).
fn push_repeated(out: &mut String, c: char, n: usize) {
    if n > 0 {
        let mut tmp = [0u8; 4];
        out.push_str(&c.encode_utf8(&mut tmp).repeat(n));
    }
}

/// The sign, the mantissa with its implicit bit and the binary exponent of a finite float (Go's `genericFtoa`).
fn float_parts(value: f64) -> (bool, u64, i64) {
    let bits = value.to_bits();
    let neg = bits >> 63 != 0;
    let mut exp = ((bits >> 52) & 0x7ff) as i64;
    let mut mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        exp += 1;
    } else {
        mant |= 1u64 << 52;
    }
    (neg, mant, exp - 1023)
}

/// Go's `fmtB`: `mantissa p±exponent`.
fn fmt_b(value: f64) -> String {
    let (neg, mant, exp) = float_parts(value);
    let exp = exp - 52;
    format!(
        "{}{mant}p{}{exp}",
        if neg { "-" } else { "" },
        if exp >= 0 { "+" } else { "" }
    )
}

/// Go's `fmtX`: `0x1.hhhhp±dd`, rounded to `prec` hex digits when `0 <= prec < 15`.
fn fmt_x(value: f64, prec: i64, fmt: char) -> String {
    let (neg, mut mant, mut exp) = float_parts(value);
    if mant == 0 {
        exp = 0;
    }
    // Leading 1 at bit 60.
    mant <<= 60 - 52;
    while mant != 0 && mant & (1u64 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    if (0..15).contains(&prec) {
        let shift = (prec * 4) as u32;
        let extra = (mant << shift) & ((1u64 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1u64 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1u64 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let hex = if fmt == 'X' { UPPER_HEX } else { LOWER_HEX };
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push('0');
    out.push(fmt);
    out.push(char::from(b'0' + ((mant >> 60) & 1) as u8));
    mant <<= 4;
    if prec < 0 && mant != 0 {
        out.push('.');
        while mant != 0 {
            out.push(char::from(hex[((mant >> 60) & 15) as usize]));
            mant <<= 4;
        }
    } else if prec > 0 {
        out.push('.');
        let mut remaining = prec;
        while remaining > 0 && mant != 0 {
            out.push(char::from(hex[((mant >> 60) & 15) as usize]));
            mant <<= 4;
            remaining -= 1;
        }
        push_repeated(&mut out, '0', usize::try_from(remaining).unwrap_or(0));
    }
    out.push(if fmt == 'X' { 'P' } else { 'p' });
    out.push(if exp < 0 { '-' } else { '+' });
    let exp = exp.unsigned_abs();
    if exp < 10 {
        out.push('0');
    }
    out.push_str(&exp.to_string());
    out
}

/// The code points Go's `strconv.IsPrint` accepts, as inclusive ranges (read from Helm's own `%q` output over every
/// code point, so this is the Unicode version Helm was built with).
const PRINTABLE: &[(u32, u32)] = &[
    (0x20, 0x7e),
    (0xa1, 0xac),
    (0xae, 0x377),
    (0x37a, 0x37f),
    (0x384, 0x38a),
    (0x38c, 0x38c),
    (0x38e, 0x3a1),
    (0x3a3, 0x52f),
    (0x531, 0x556),
    (0x559, 0x58a),
    (0x58d, 0x58f),
    (0x591, 0x5c7),
    (0x5d0, 0x5ea),
    (0x5ef, 0x5f4),
    (0x606, 0x61b),
    (0x61d, 0x6dc),
    (0x6de, 0x70d),
    (0x710, 0x74a),
    (0x74d, 0x7b1),
    (0x7c0, 0x7fa),
    (0x7fd, 0x82d),
    (0x830, 0x83e),
    (0x840, 0x85b),
    (0x85e, 0x85e),
    (0x860, 0x86a),
    (0x870, 0x88e),
    (0x898, 0x8e1),
    (0x8e3, 0x983),
    (0x985, 0x98c),
    (0x98f, 0x990),
    (0x993, 0x9a8),
    (0x9aa, 0x9b0),
    (0x9b2, 0x9b2),
    (0x9b6, 0x9b9),
    (0x9bc, 0x9c4),
    (0x9c7, 0x9c8),
    (0x9cb, 0x9ce),
    (0x9d7, 0x9d7),
    (0x9dc, 0x9dd),
    (0x9df, 0x9e3),
    (0x9e6, 0x9fe),
    (0xa01, 0xa03),
    (0xa05, 0xa0a),
    (0xa0f, 0xa10),
    (0xa13, 0xa28),
    (0xa2a, 0xa30),
    (0xa32, 0xa33),
    (0xa35, 0xa36),
    (0xa38, 0xa39),
    (0xa3c, 0xa3c),
    (0xa3e, 0xa42),
    (0xa47, 0xa48),
    (0xa4b, 0xa4d),
    (0xa51, 0xa51),
    (0xa59, 0xa5c),
    (0xa5e, 0xa5e),
    (0xa66, 0xa76),
    (0xa81, 0xa83),
    (0xa85, 0xa8d),
    (0xa8f, 0xa91),
    (0xa93, 0xaa8),
    (0xaaa, 0xab0),
    (0xab2, 0xab3),
    (0xab5, 0xab9),
    (0xabc, 0xac5),
    (0xac7, 0xac9),
    (0xacb, 0xacd),
    (0xad0, 0xad0),
    (0xae0, 0xae3),
    (0xae6, 0xaf1),
    (0xaf9, 0xaff),
    (0xb01, 0xb03),
    (0xb05, 0xb0c),
    (0xb0f, 0xb10),
    (0xb13, 0xb28),
    (0xb2a, 0xb30),
    (0xb32, 0xb33),
    (0xb35, 0xb39),
    (0xb3c, 0xb44),
    (0xb47, 0xb48),
    (0xb4b, 0xb4d),
    (0xb55, 0xb57),
    (0xb5c, 0xb5d),
    (0xb5f, 0xb63),
    (0xb66, 0xb77),
    (0xb82, 0xb83),
    (0xb85, 0xb8a),
    (0xb8e, 0xb90),
    (0xb92, 0xb95),
    (0xb99, 0xb9a),
    (0xb9c, 0xb9c),
    (0xb9e, 0xb9f),
    (0xba3, 0xba4),
    (0xba8, 0xbaa),
    (0xbae, 0xbb9),
    (0xbbe, 0xbc2),
    (0xbc6, 0xbc8),
    (0xbca, 0xbcd),
    (0xbd0, 0xbd0),
    (0xbd7, 0xbd7),
    (0xbe6, 0xbfa),
    (0xc00, 0xc0c),
    (0xc0e, 0xc10),
    (0xc12, 0xc28),
    (0xc2a, 0xc39),
    (0xc3c, 0xc44),
    (0xc46, 0xc48),
    (0xc4a, 0xc4d),
    (0xc55, 0xc56),
    (0xc58, 0xc5a),
    (0xc5d, 0xc5d),
    (0xc60, 0xc63),
    (0xc66, 0xc6f),
    (0xc77, 0xc8c),
    (0xc8e, 0xc90),
    (0xc92, 0xca8),
    (0xcaa, 0xcb3),
    (0xcb5, 0xcb9),
    (0xcbc, 0xcc4),
    (0xcc6, 0xcc8),
    (0xcca, 0xccd),
    (0xcd5, 0xcd6),
    (0xcdd, 0xcde),
    (0xce0, 0xce3),
    (0xce6, 0xcef),
    (0xcf1, 0xcf3),
    (0xd00, 0xd0c),
    (0xd0e, 0xd10),
    (0xd12, 0xd44),
    (0xd46, 0xd48),
    (0xd4a, 0xd4f),
    (0xd54, 0xd63),
    (0xd66, 0xd7f),
    (0xd81, 0xd83),
    (0xd85, 0xd96),
    (0xd9a, 0xdb1),
    (0xdb3, 0xdbb),
    (0xdbd, 0xdbd),
    (0xdc0, 0xdc6),
    (0xdca, 0xdca),
    (0xdcf, 0xdd4),
    (0xdd6, 0xdd6),
    (0xdd8, 0xddf),
    (0xde6, 0xdef),
    (0xdf2, 0xdf4),
    (0xe01, 0xe3a),
    (0xe3f, 0xe5b),
    (0xe81, 0xe82),
    (0xe84, 0xe84),
    (0xe86, 0xe8a),
    (0xe8c, 0xea3),
    (0xea5, 0xea5),
    (0xea7, 0xebd),
    (0xec0, 0xec4),
    (0xec6, 0xec6),
    (0xec8, 0xece),
    (0xed0, 0xed9),
    (0xedc, 0xedf),
    (0xf00, 0xf47),
    (0xf49, 0xf6c),
    (0xf71, 0xf97),
    (0xf99, 0xfbc),
    (0xfbe, 0xfcc),
    (0xfce, 0xfda),
    (0x1000, 0x10c5),
    (0x10c7, 0x10c7),
    (0x10cd, 0x10cd),
    (0x10d0, 0x1248),
    (0x124a, 0x124d),
    (0x1250, 0x1256),
    (0x1258, 0x1258),
    (0x125a, 0x125d),
    (0x1260, 0x1288),
    (0x128a, 0x128d),
    (0x1290, 0x12b0),
    (0x12b2, 0x12b5),
    (0x12b8, 0x12be),
    (0x12c0, 0x12c0),
    (0x12c2, 0x12c5),
    (0x12c8, 0x12d6),
    (0x12d8, 0x1310),
    (0x1312, 0x1315),
    (0x1318, 0x135a),
    (0x135d, 0x137c),
    (0x1380, 0x1399),
    (0x13a0, 0x13f5),
    (0x13f8, 0x13fd),
    (0x1400, 0x167f),
    (0x1681, 0x169c),
    (0x16a0, 0x16f8),
    (0x1700, 0x1715),
    (0x171f, 0x1736),
    (0x1740, 0x1753),
    (0x1760, 0x176c),
    (0x176e, 0x1770),
    (0x1772, 0x1773),
    (0x1780, 0x17dd),
    (0x17e0, 0x17e9),
    (0x17f0, 0x17f9),
    (0x1800, 0x180d),
    (0x180f, 0x1819),
    (0x1820, 0x1878),
    (0x1880, 0x18aa),
    (0x18b0, 0x18f5),
    (0x1900, 0x191e),
    (0x1920, 0x192b),
    (0x1930, 0x193b),
    (0x1940, 0x1940),
    (0x1944, 0x196d),
    (0x1970, 0x1974),
    (0x1980, 0x19ab),
    (0x19b0, 0x19c9),
    (0x19d0, 0x19da),
    (0x19de, 0x1a1b),
    (0x1a1e, 0x1a5e),
    (0x1a60, 0x1a7c),
    (0x1a7f, 0x1a89),
    (0x1a90, 0x1a99),
    (0x1aa0, 0x1aad),
    (0x1ab0, 0x1ace),
    (0x1b00, 0x1b4c),
    (0x1b50, 0x1b7e),
    (0x1b80, 0x1bf3),
    (0x1bfc, 0x1c37),
    (0x1c3b, 0x1c49),
    (0x1c4d, 0x1c88),
    (0x1c90, 0x1cba),
    (0x1cbd, 0x1cc7),
    (0x1cd0, 0x1cfa),
    (0x1d00, 0x1f15),
    (0x1f18, 0x1f1d),
    (0x1f20, 0x1f45),
    (0x1f48, 0x1f4d),
    (0x1f50, 0x1f57),
    (0x1f59, 0x1f59),
    (0x1f5b, 0x1f5b),
    (0x1f5d, 0x1f5d),
    (0x1f5f, 0x1f7d),
    (0x1f80, 0x1fb4),
    (0x1fb6, 0x1fc4),
    (0x1fc6, 0x1fd3),
    (0x1fd6, 0x1fdb),
    (0x1fdd, 0x1fef),
    (0x1ff2, 0x1ff4),
    (0x1ff6, 0x1ffe),
    (0x2010, 0x2027),
    (0x2030, 0x205e),
    (0x2070, 0x2071),
    (0x2074, 0x208e),
    (0x2090, 0x209c),
    (0x20a0, 0x20c0),
    (0x20d0, 0x20f0),
    (0x2100, 0x218b),
    (0x2190, 0x2426),
    (0x2440, 0x244a),
    (0x2460, 0x2b73),
    (0x2b76, 0x2b95),
    (0x2b97, 0x2cf3),
    (0x2cf9, 0x2d25),
    (0x2d27, 0x2d27),
    (0x2d2d, 0x2d2d),
    (0x2d30, 0x2d67),
    (0x2d6f, 0x2d70),
    (0x2d7f, 0x2d96),
    (0x2da0, 0x2da6),
    (0x2da8, 0x2dae),
    (0x2db0, 0x2db6),
    (0x2db8, 0x2dbe),
    (0x2dc0, 0x2dc6),
    (0x2dc8, 0x2dce),
    (0x2dd0, 0x2dd6),
    (0x2dd8, 0x2dde),
    (0x2de0, 0x2e5d),
    (0x2e80, 0x2e99),
    (0x2e9b, 0x2ef3),
    (0x2f00, 0x2fd5),
    (0x2ff0, 0x2ffb),
    (0x3001, 0x303f),
    (0x3041, 0x3096),
    (0x3099, 0x30ff),
    (0x3105, 0x312f),
    (0x3131, 0x318e),
    (0x3190, 0x31e3),
    (0x31f0, 0x321e),
    (0x3220, 0xa48c),
    (0xa490, 0xa4c6),
    (0xa4d0, 0xa62b),
    (0xa640, 0xa6f7),
    (0xa700, 0xa7ca),
    (0xa7d0, 0xa7d1),
    (0xa7d3, 0xa7d3),
    (0xa7d5, 0xa7d9),
    (0xa7f2, 0xa82c),
    (0xa830, 0xa839),
    (0xa840, 0xa877),
    (0xa880, 0xa8c5),
    (0xa8ce, 0xa8d9),
    (0xa8e0, 0xa953),
    (0xa95f, 0xa97c),
    (0xa980, 0xa9cd),
    (0xa9cf, 0xa9d9),
    (0xa9de, 0xa9fe),
    (0xaa00, 0xaa36),
    (0xaa40, 0xaa4d),
    (0xaa50, 0xaa59),
    (0xaa5c, 0xaac2),
    (0xaadb, 0xaaf6),
    (0xab01, 0xab06),
    (0xab09, 0xab0e),
    (0xab11, 0xab16),
    (0xab20, 0xab26),
    (0xab28, 0xab2e),
    (0xab30, 0xab6b),
    (0xab70, 0xabed),
    (0xabf0, 0xabf9),
    (0xac00, 0xd7a3),
    (0xd7b0, 0xd7c6),
    (0xd7cb, 0xd7fb),
    (0xf900, 0xfa6d),
    (0xfa70, 0xfad9),
    (0xfb00, 0xfb06),
    (0xfb13, 0xfb17),
    (0xfb1d, 0xfb36),
    (0xfb38, 0xfb3c),
    (0xfb3e, 0xfb3e),
    (0xfb40, 0xfb41),
    (0xfb43, 0xfb44),
    (0xfb46, 0xfbc2),
    (0xfbd3, 0xfd8f),
    (0xfd92, 0xfdc7),
    (0xfdcf, 0xfdcf),
    (0xfdf0, 0xfe19),
    (0xfe20, 0xfe52),
    (0xfe54, 0xfe66),
    (0xfe68, 0xfe6b),
    (0xfe70, 0xfe74),
    (0xfe76, 0xfefc),
    (0xff01, 0xffbe),
    (0xffc2, 0xffc7),
    (0xffca, 0xffcf),
    (0xffd2, 0xffd7),
    (0xffda, 0xffdc),
    (0xffe0, 0xffe6),
    (0xffe8, 0xffee),
    (0xfffc, 0xfffd),
    (0x10000, 0x1000b),
    (0x1000d, 0x10026),
    (0x10028, 0x1003a),
    (0x1003c, 0x1003d),
    (0x1003f, 0x1004d),
    (0x10050, 0x1005d),
    (0x10080, 0x100fa),
    (0x10100, 0x10102),
    (0x10107, 0x10133),
    (0x10137, 0x1018e),
    (0x10190, 0x1019c),
    (0x101a0, 0x101a0),
    (0x101d0, 0x101fd),
    (0x10280, 0x1029c),
    (0x102a0, 0x102d0),
    (0x102e0, 0x102fb),
    (0x10300, 0x10323),
    (0x1032d, 0x1034a),
    (0x10350, 0x1037a),
    (0x10380, 0x1039d),
    (0x1039f, 0x103c3),
    (0x103c8, 0x103d5),
    (0x10400, 0x1049d),
    (0x104a0, 0x104a9),
    (0x104b0, 0x104d3),
    (0x104d8, 0x104fb),
    (0x10500, 0x10527),
    (0x10530, 0x10563),
    (0x1056f, 0x1057a),
    (0x1057c, 0x1058a),
    (0x1058c, 0x10592),
    (0x10594, 0x10595),
    (0x10597, 0x105a1),
    (0x105a3, 0x105b1),
    (0x105b3, 0x105b9),
    (0x105bb, 0x105bc),
    (0x10600, 0x10736),
    (0x10740, 0x10755),
    (0x10760, 0x10767),
    (0x10780, 0x10785),
    (0x10787, 0x107b0),
    (0x107b2, 0x107ba),
    (0x10800, 0x10805),
    (0x10808, 0x10808),
    (0x1080a, 0x10835),
    (0x10837, 0x10838),
    (0x1083c, 0x1083c),
    (0x1083f, 0x10855),
    (0x10857, 0x1089e),
    (0x108a7, 0x108af),
    (0x108e0, 0x108f2),
    (0x108f4, 0x108f5),
    (0x108fb, 0x1091b),
    (0x1091f, 0x10939),
    (0x1093f, 0x1093f),
    (0x10980, 0x109b7),
    (0x109bc, 0x109cf),
    (0x109d2, 0x10a03),
    (0x10a05, 0x10a06),
    (0x10a0c, 0x10a13),
    (0x10a15, 0x10a17),
    (0x10a19, 0x10a35),
    (0x10a38, 0x10a3a),
    (0x10a3f, 0x10a48),
    (0x10a50, 0x10a58),
    (0x10a60, 0x10a9f),
    (0x10ac0, 0x10ae6),
    (0x10aeb, 0x10af6),
    (0x10b00, 0x10b35),
    (0x10b39, 0x10b55),
    (0x10b58, 0x10b72),
    (0x10b78, 0x10b91),
    (0x10b99, 0x10b9c),
    (0x10ba9, 0x10baf),
    (0x10c00, 0x10c48),
    (0x10c80, 0x10cb2),
    (0x10cc0, 0x10cf2),
    (0x10cfa, 0x10d27),
    (0x10d30, 0x10d39),
    (0x10e60, 0x10e7e),
    (0x10e80, 0x10ea9),
    (0x10eab, 0x10ead),
    (0x10eb0, 0x10eb1),
    (0x10efd, 0x10f27),
    (0x10f30, 0x10f59),
    (0x10f70, 0x10f89),
    (0x10fb0, 0x10fcb),
    (0x10fe0, 0x10ff6),
    (0x11000, 0x1104d),
    (0x11052, 0x11075),
    (0x1107f, 0x110bc),
    (0x110be, 0x110c2),
    (0x110d0, 0x110e8),
    (0x110f0, 0x110f9),
    (0x11100, 0x11134),
    (0x11136, 0x11147),
    (0x11150, 0x11176),
    (0x11180, 0x111df),
    (0x111e1, 0x111f4),
    (0x11200, 0x11211),
    (0x11213, 0x11241),
    (0x11280, 0x11286),
    (0x11288, 0x11288),
    (0x1128a, 0x1128d),
    (0x1128f, 0x1129d),
    (0x1129f, 0x112a9),
    (0x112b0, 0x112ea),
    (0x112f0, 0x112f9),
    (0x11300, 0x11303),
    (0x11305, 0x1130c),
    (0x1130f, 0x11310),
    (0x11313, 0x11328),
    (0x1132a, 0x11330),
    (0x11332, 0x11333),
    (0x11335, 0x11339),
    (0x1133b, 0x11344),
    (0x11347, 0x11348),
    (0x1134b, 0x1134d),
    (0x11350, 0x11350),
    (0x11357, 0x11357),
    (0x1135d, 0x11363),
    (0x11366, 0x1136c),
    (0x11370, 0x11374),
    (0x11400, 0x1145b),
    (0x1145d, 0x11461),
    (0x11480, 0x114c7),
    (0x114d0, 0x114d9),
    (0x11580, 0x115b5),
    (0x115b8, 0x115dd),
    (0x11600, 0x11644),
    (0x11650, 0x11659),
    (0x11660, 0x1166c),
    (0x11680, 0x116b9),
    (0x116c0, 0x116c9),
    (0x11700, 0x1171a),
    (0x1171d, 0x1172b),
    (0x11730, 0x11746),
    (0x11800, 0x1183b),
    (0x118a0, 0x118f2),
    (0x118ff, 0x11906),
    (0x11909, 0x11909),
    (0x1190c, 0x11913),
    (0x11915, 0x11916),
    (0x11918, 0x11935),
    (0x11937, 0x11938),
    (0x1193b, 0x11946),
    (0x11950, 0x11959),
    (0x119a0, 0x119a7),
    (0x119aa, 0x119d7),
    (0x119da, 0x119e4),
    (0x11a00, 0x11a47),
    (0x11a50, 0x11aa2),
    (0x11ab0, 0x11af8),
    (0x11b00, 0x11b09),
    (0x11c00, 0x11c08),
    (0x11c0a, 0x11c36),
    (0x11c38, 0x11c45),
    (0x11c50, 0x11c6c),
    (0x11c70, 0x11c8f),
    (0x11c92, 0x11ca7),
    (0x11ca9, 0x11cb6),
    (0x11d00, 0x11d06),
    (0x11d08, 0x11d09),
    (0x11d0b, 0x11d36),
    (0x11d3a, 0x11d3a),
    (0x11d3c, 0x11d3d),
    (0x11d3f, 0x11d47),
    (0x11d50, 0x11d59),
    (0x11d60, 0x11d65),
    (0x11d67, 0x11d68),
    (0x11d6a, 0x11d8e),
    (0x11d90, 0x11d91),
    (0x11d93, 0x11d98),
    (0x11da0, 0x11da9),
    (0x11ee0, 0x11ef8),
    (0x11f00, 0x11f10),
    (0x11f12, 0x11f3a),
    (0x11f3e, 0x11f59),
    (0x11fb0, 0x11fb0),
    (0x11fc0, 0x11ff1),
    (0x11fff, 0x12399),
    (0x12400, 0x1246e),
    (0x12470, 0x12474),
    (0x12480, 0x12543),
    (0x12f90, 0x12ff2),
    (0x13000, 0x1342f),
    (0x13440, 0x13455),
    (0x14400, 0x14646),
    (0x16800, 0x16a38),
    (0x16a40, 0x16a5e),
    (0x16a60, 0x16a69),
    (0x16a6e, 0x16abe),
    (0x16ac0, 0x16ac9),
    (0x16ad0, 0x16aed),
    (0x16af0, 0x16af5),
    (0x16b00, 0x16b45),
    (0x16b50, 0x16b59),
    (0x16b5b, 0x16b61),
    (0x16b63, 0x16b77),
    (0x16b7d, 0x16b8f),
    (0x16e40, 0x16e9a),
    (0x16f00, 0x16f4a),
    (0x16f4f, 0x16f87),
    (0x16f8f, 0x16f9f),
    (0x16fe0, 0x16fe4),
    (0x16ff0, 0x16ff1),
    (0x17000, 0x187f7),
    (0x18800, 0x18cd5),
    (0x18d00, 0x18d08),
    (0x1aff0, 0x1aff3),
    (0x1aff5, 0x1affb),
    (0x1affd, 0x1affe),
    (0x1b000, 0x1b122),
    (0x1b132, 0x1b132),
    (0x1b150, 0x1b152),
    (0x1b155, 0x1b155),
    (0x1b164, 0x1b167),
    (0x1b170, 0x1b2fb),
    (0x1bc00, 0x1bc6a),
    (0x1bc70, 0x1bc7c),
    (0x1bc80, 0x1bc88),
    (0x1bc90, 0x1bc99),
    (0x1bc9c, 0x1bc9f),
    (0x1cf00, 0x1cf2d),
    (0x1cf30, 0x1cf46),
    (0x1cf50, 0x1cfc3),
    (0x1d000, 0x1d0f5),
    (0x1d100, 0x1d126),
    (0x1d129, 0x1d172),
    (0x1d17b, 0x1d1ea),
    (0x1d200, 0x1d245),
    (0x1d2c0, 0x1d2d3),
    (0x1d2e0, 0x1d2f3),
    (0x1d300, 0x1d356),
    (0x1d360, 0x1d378),
    (0x1d400, 0x1d454),
    (0x1d456, 0x1d49c),
    (0x1d49e, 0x1d49f),
    (0x1d4a2, 0x1d4a2),
    (0x1d4a5, 0x1d4a6),
    (0x1d4a9, 0x1d4ac),
    (0x1d4ae, 0x1d4b9),
    (0x1d4bb, 0x1d4bb),
    (0x1d4bd, 0x1d4c3),
    (0x1d4c5, 0x1d505),
    (0x1d507, 0x1d50a),
    (0x1d50d, 0x1d514),
    (0x1d516, 0x1d51c),
    (0x1d51e, 0x1d539),
    (0x1d53b, 0x1d53e),
    (0x1d540, 0x1d544),
    (0x1d546, 0x1d546),
    (0x1d54a, 0x1d550),
    (0x1d552, 0x1d6a5),
    (0x1d6a8, 0x1d7cb),
    (0x1d7ce, 0x1da8b),
    (0x1da9b, 0x1da9f),
    (0x1daa1, 0x1daaf),
    (0x1df00, 0x1df1e),
    (0x1df25, 0x1df2a),
    (0x1e000, 0x1e006),
    (0x1e008, 0x1e018),
    (0x1e01b, 0x1e021),
    (0x1e023, 0x1e024),
    (0x1e026, 0x1e02a),
    (0x1e030, 0x1e06d),
    (0x1e08f, 0x1e08f),
    (0x1e100, 0x1e12c),
    (0x1e130, 0x1e13d),
    (0x1e140, 0x1e149),
    (0x1e14e, 0x1e14f),
    (0x1e290, 0x1e2ae),
    (0x1e2c0, 0x1e2f9),
    (0x1e2ff, 0x1e2ff),
    (0x1e4d0, 0x1e4f9),
    (0x1e7e0, 0x1e7e6),
    (0x1e7e8, 0x1e7eb),
    (0x1e7ed, 0x1e7ee),
    (0x1e7f0, 0x1e7fe),
    (0x1e800, 0x1e8c4),
    (0x1e8c7, 0x1e8d6),
    (0x1e900, 0x1e94b),
    (0x1e950, 0x1e959),
    (0x1e95e, 0x1e95f),
    (0x1ec71, 0x1ecb4),
    (0x1ed01, 0x1ed3d),
    (0x1ee00, 0x1ee03),
    (0x1ee05, 0x1ee1f),
    (0x1ee21, 0x1ee22),
    (0x1ee24, 0x1ee24),
    (0x1ee27, 0x1ee27),
    (0x1ee29, 0x1ee32),
    (0x1ee34, 0x1ee37),
    (0x1ee39, 0x1ee39),
    (0x1ee3b, 0x1ee3b),
    (0x1ee42, 0x1ee42),
    (0x1ee47, 0x1ee47),
    (0x1ee49, 0x1ee49),
    (0x1ee4b, 0x1ee4b),
    (0x1ee4d, 0x1ee4f),
    (0x1ee51, 0x1ee52),
    (0x1ee54, 0x1ee54),
    (0x1ee57, 0x1ee57),
    (0x1ee59, 0x1ee59),
    (0x1ee5b, 0x1ee5b),
    (0x1ee5d, 0x1ee5d),
    (0x1ee5f, 0x1ee5f),
    (0x1ee61, 0x1ee62),
    (0x1ee64, 0x1ee64),
    (0x1ee67, 0x1ee6a),
    (0x1ee6c, 0x1ee72),
    (0x1ee74, 0x1ee77),
    (0x1ee79, 0x1ee7c),
    (0x1ee7e, 0x1ee7e),
    (0x1ee80, 0x1ee89),
    (0x1ee8b, 0x1ee9b),
    (0x1eea1, 0x1eea3),
    (0x1eea5, 0x1eea9),
    (0x1eeab, 0x1eebb),
    (0x1eef0, 0x1eef1),
    (0x1f000, 0x1f02b),
    (0x1f030, 0x1f093),
    (0x1f0a0, 0x1f0ae),
    (0x1f0b1, 0x1f0bf),
    (0x1f0c1, 0x1f0cf),
    (0x1f0d1, 0x1f0f5),
    (0x1f100, 0x1f1ad),
    (0x1f1e6, 0x1f202),
    (0x1f210, 0x1f23b),
    (0x1f240, 0x1f248),
    (0x1f250, 0x1f251),
    (0x1f260, 0x1f265),
    (0x1f300, 0x1f6d7),
    (0x1f6dc, 0x1f6ec),
    (0x1f6f0, 0x1f6fc),
    (0x1f700, 0x1f776),
    (0x1f77b, 0x1f7d9),
    (0x1f7e0, 0x1f7eb),
    (0x1f7f0, 0x1f7f0),
    (0x1f800, 0x1f80b),
    (0x1f810, 0x1f847),
    (0x1f850, 0x1f859),
    (0x1f860, 0x1f887),
    (0x1f890, 0x1f8ad),
    (0x1f8b0, 0x1f8b1),
    (0x1f900, 0x1fa53),
    (0x1fa60, 0x1fa6d),
    (0x1fa70, 0x1fa7c),
    (0x1fa80, 0x1fa88),
    (0x1fa90, 0x1fabd),
    (0x1fabf, 0x1fac5),
    (0x1face, 0x1fadb),
    (0x1fae0, 0x1fae8),
    (0x1faf0, 0x1faf8),
    (0x1fb00, 0x1fb92),
    (0x1fb94, 0x1fbca),
    (0x1fbf0, 0x1fbf9),
    (0x20000, 0x2a6df),
    (0x2a700, 0x2b739),
    (0x2b740, 0x2b81d),
    (0x2b820, 0x2cea1),
    (0x2ceb0, 0x2ebe0),
    (0x2f800, 0x2fa1d),
    (0x30000, 0x3134a),
    (0x31350, 0x323af),
    (0xe0100, 0xe01ef),
];

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::super::value::Map;
    use super::*;

    fn i(n: i64) -> Value {
        Value::Int(n)
    }
    fn f(x: f64) -> Value {
        Value::Float(x)
    }
    fn s(text: &str) -> Value {
        Value::string(text)
    }
    fn by(bytes: &[u8]) -> Value {
        Value::Bytes(Rc::from(bytes))
    }
    fn l(items: Vec<Value>) -> Value {
        Value::list(items)
    }
    fn m(entries: Vec<(&str, Value)>) -> Value {
        Value::Map(Map::from_entries(
            entries
                .into_iter()
                .map(|(key, value)| (key.to_string(), value))
                .collect(),
        ))
    }

    #[derive(Debug)]
    enum Kind {
        /// `printf FORMAT ARGS...`
        F,
        /// `print ARGS...`
        P,
        /// `println ARGS...`
        L,
    }
    use Kind::{F, L, P};

    #[derive(Debug)]
    enum Expect {
        Exact(&'static str),
        /// Byte length, first and last characters of a long output.
        Big(usize, &'static str, &'static str),
    }
    use Expect::{Big, Exact};

    /// Every expected output below is what Helm v4.2.3 printed for the same operands (`printf`, `print`,
    /// `println` in a chart template; floats made with `float64 "…"`, bytes with `.Files.GetBytes`).
    #[allow(clippy::too_many_lines)]
    #[rustfmt::skip]
    fn helm_cases() -> Vec<(Kind, &'static str, Vec<Value>, Expect)> {
        vec![
        (P, "", vec![Value::Nil], Exact("<nil>")),
        (P, "", vec![Value::Bool(true)], Exact("true")),
        (P, "", vec![Value::Bool(false)], Exact("false")),
        (P, "", vec![i(0)], Exact("0")),
        (P, "", vec![i(42)], Exact("42")),
        (P, "", vec![i(-7)], Exact("-7")),
        (P, "", vec![i(9223372036854775807)], Exact("9223372036854775807")),
        (P, "", vec![i(i64::MIN)], Exact("-9223372036854775808")),
        (P, "", vec![s("")], Exact("")),
        (P, "", vec![s("hi")], Exact("hi")),
        (P, "", vec![by(&[104, 105])], Exact("[104 105]")),
        (P, "", vec![by(&[])], Exact("[]")),
        (P, "", vec![l(vec![])], Exact("[]")),
        (P, "", vec![l(vec![s("a"), s("b"), s("c")])], Exact("[a b c]")),
        (P, "", vec![l(vec![i(1), Value::Nil, s("x"), l(vec![i(2), f(f64::from_bits(0x4004000000000000))])])], Exact("[1 <nil> x [2 2.5]]")),
        (P, "", vec![m(vec![])], Exact("map[]")),
        (P, "", vec![m(vec![("a", s("x")), ("b", i(2)), ("c", l(vec![Value::Nil]))])], Exact("map[a:x b:2 c:[<nil>]]")),
        (P, "", vec![m(vec![("n", m(vec![("x", f(f64::from_bits(0x412e848000000000)))]))])], Exact("map[n:map[x:1e+06]]")),
        (P, "", vec![f(f64::from_bits(0x0000000000000000))], Exact("0")),
        (P, "", vec![f(f64::from_bits(0x8000000000000000))], Exact("-0")),
        (P, "", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("1")),
        (P, "", vec![f(f64::from_bits(0x3ff8000000000000))], Exact("1.5")),
        (P, "", vec![f(f64::from_bits(0x40f86a0000000000))], Exact("100000")),
        (P, "", vec![f(f64::from_bits(0x412e848000000000))], Exact("1e+06")),
        (P, "", vec![f(f64::from_bits(0x444b1ae4d6e2ef50))], Exact("1e+21")),
        (P, "", vec![f(f64::from_bits(0x4415af1d78b58c40))], Exact("1e+20")),
        (P, "", vec![f(f64::from_bits(0x419d6f3454000000))], Exact("1.23456789e+08")),
        (P, "", vec![f(f64::from_bits(0x43e56a95319d63e1))], Exact("1.2345678901234567e+19")),
        (P, "", vec![f(f64::from_bits(0x3ee4f8b588e368f1))], Exact("1e-05")),
        (P, "", vec![f(f64::from_bits(0x3f1a36e2eb1c432d))], Exact("0.0001")),
        (P, "", vec![f(f64::from_bits(0x3fb999999999999a))], Exact("0.1")),
        (P, "", vec![f(f64::from_bits(0x3fd3333333333333))], Exact("0.3")),
        (P, "", vec![f(f64::from_bits(0x3fd5555555555555))], Exact("0.3333333333333333")),
        (P, "", vec![f(f64::from_bits(0x7ff0000000000000))], Exact("+Inf")),
        (P, "", vec![f(f64::from_bits(0xfff0000000000000))], Exact("-Inf")),
        (P, "", vec![f(f64::from_bits(0x7ff8000000000000))], Exact("NaN")),
        (P, "", vec![f(f64::from_bits(0x0000000000000001))], Exact("5e-324")),
        (P, "", vec![f(f64::from_bits(0x7fefffffffffffff))], Exact("1.7976931348623157e+308")),
        (P, "", vec![f(f64::from_bits(0x3e90c6f7a0b5ed8d))], Exact("2.5e-07")),
        (P, "", vec![f(f64::from_bits(0x40c81cd6c8b43958))], Exact("12345.678")),
        (P, "", vec![f(f64::from_bits(0xbf201f31f46ed246))], Exact("-0.000123")),
        (P, "", vec![f(f64::from_bits(0x44b52d02c7e14af6))], Exact("1e+23")),
        (P, "", vec![f(f64::from_bits(0x4340000000000000))], Exact("9.007199254740992e+15")),
        (P, "", vec![s("a"), s("b")], Exact("ab")),
        (P, "", vec![i(1), i(2)], Exact("1 2")),
        (P, "", vec![s("a"), i(1), i(2), s("b"), i(3)], Exact("a1 2b3")),
        (P, "", vec![i(1), s("a"), f(f64::from_bits(0x4000000000000000))], Exact("1a2")),
        (P, "", vec![Value::Nil, Value::Nil], Exact("<nil> <nil>")),
        (P, "", vec![l(vec![i(1)]), m(vec![("a", i(1))])], Exact("[1] map[a:1]")),
        (P, "", vec![by(&[120]), by(&[121])], Exact("[120] [121]")),
        (P, "", vec![Value::Bool(true), s("x"), Value::Bool(false)], Exact("truexfalse")),
        (L, "", vec![s("a"), s("b")], Exact("a b\n")),
        (L, "", vec![i(1), s("x"), Value::Nil, f(f64::from_bits(0x412e848000000000))], Exact("1 x <nil> 1e+06\n")),
        (L, "", vec![], Exact("\n")),
        (F, "%5.2f|%-4d|%x|%q|%v|%d", vec![f(f64::from_bits(0x400921f9f01b866e)), i(42), s("hi"), s("a\"b"), l(vec![i(1), s("a"), Value::Nil]), f(f64::from_bits(0x3ff0000000000000))], Exact(" 3.14|42  |6869|\"a\\\"b\"|[1 a <nil>]|%!d(float64=1)")),
        (F, "%d", vec![s("hi")], Exact("%!d(string=hi)")),
        (F, "%d", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("%!d(float64=1)")),
        (F, "%s", vec![], Exact("%!s(MISSING)")),
        (F, "%d %d", vec![i(1)], Exact("1 %!d(MISSING)")),
        (F, "x", vec![s("x"), i(3)], Exact("x%!(EXTRA string=x, int=3)")),
        (F, "%d", vec![i(1), s("x"), Value::Nil, f(f64::from_bits(0x4004000000000000)), l(vec![i(1)])], Exact("1%!(EXTRA string=x, <nil>, float64=2.5, []interface {}=[1])")),
        (F, "%", vec![], Exact("%!(NOVERB)")),
        (F, "abc%", vec![], Exact("abc%!(NOVERB)")),
        (F, "%-", vec![], Exact("%!(NOVERB)")),
        (F, "%5", vec![], Exact("%!(NOVERB)")),
        (F, "%.", vec![], Exact("%!.(MISSING)")),
        (F, "%[2]d %[1]d", vec![i(1), i(2)], Exact("2 1")),
        (F, "%[3]d", vec![i(1)], Exact("%!d(BADINDEX)")),
        (F, "%[0]d", vec![i(1)], Exact("%!d(BADINDEX)")),
        (F, "%[x]d", vec![i(1)], Exact("%!d(BADINDEX)")),
        (F, "%[1]d %d %d", vec![i(1), i(2)], Exact("1 2 %!d(MISSING)")),
        (F, "%[2]*[1]d|", vec![i(7), i(5)], Exact("    7|")),
        (F, "%[3]2d", vec![i(1), i(2), i(3)], Exact("%!d(BADINDEX)")),
        (F, "%[2].2f", vec![f(f64::from_bits(0x3ff0000000000000)), f(f64::from_bits(0x4000000000000000))], Exact("%!f(BADINDEX)")),
        (F, "%[1", vec![i(1)], Exact("%!(NOVERB)")),
        (F, "%[]d", vec![i(1)], Exact("%!d(BADINDEX)")),
        (F, "%*d|", vec![i(5), i(42)], Exact("   42|")),
        (F, "%-*d|", vec![i(5), i(42)], Exact("42   |")),
        (F, "%*d|", vec![i(-5), i(42)], Exact("42   |")),
        (F, "%*d|", vec![s("x"), i(42)], Exact("%!(BADWIDTH)42|")),
        (F, "%.*f", vec![i(2), f(f64::from_bits(0x400921f9f01b866e))], Exact("3.14")),
        (F, "%.*f", vec![i(-1), f(f64::from_bits(0x400921f9f01b866e))], Exact("%!(BADPREC)3.141590")),
        (F, "%.*f", vec![s("x"), f(f64::from_bits(0x400921f9f01b866e))], Exact("%!(BADPREC)3.141590")),
        (F, "%*d", vec![i(1000001), i(1)], Exact("%!(BADWIDTH)1")),
        (F, "%.*d", vec![i(1000001), i(1)], Exact("%!(BADPREC)1")),
        (F, "%*d|", vec![f(f64::from_bits(0x4014000000000000)), i(1)], Exact("%!(BADWIDTH)1|")),
        (F, "%*d|", vec![Value::Nil, i(1)], Exact("%!(BADWIDTH)1|")),
        (F, "%*d|", vec![], Exact("%!(BADWIDTH)%!d(MISSING)|")),
        (F, "%10000000d|", vec![i(1)], Big(10000001, "                                        ", "                                      1|")),
        (F, "%.10000000d|", vec![i(1)], Big(10000001, "0000000000000000000000000000000000000000", "000000000000000000000000000000000000001|")),
        (F, "%1000001d|", vec![i(1)], Big(1000002, "                                        ", "                                      1|")),
        (F, "%.1000001f|", vec![f(f64::from_bits(0x3ff0000000000000))], Big(1000004, "1.00000000000000000000000000000000000000", "000000000000000000000000000000000000000|")),
        (F, "%99999999999999999999d", vec![i(1)], Exact("%!(NOVERB)%!(EXTRA int=1)")),
        (F, "%d", vec![Value::Nil], Exact("%!d(<nil>)")),
        (F, "%s", vec![Value::Nil], Exact("%!s(<nil>)")),
        (F, "%v", vec![Value::Nil], Exact("<nil>")),
        (F, "%T", vec![Value::Nil], Exact("<nil>")),
        (F, "%5v|", vec![Value::Nil], Exact("<nil>|")),
        (F, "%x", vec![Value::Nil], Exact("%!x(<nil>)")),
        (F, "%10T|", vec![Value::Nil], Exact("     <nil>|")),
        (F, "%.2T|", vec![i(1)], Exact("in|")),
        (F, "%s", vec![l(vec![s("a"), s("b")])], Exact("[a b]")),
        (F, "%s", vec![l(vec![s("a"), i(1)])], Exact("[a %!s(int=1)]")),
        (F, "%d", vec![l(vec![i(1), i(2)])], Exact("[1 2]")),
        (F, "%d", vec![l(vec![i(1), s("a"), Value::Nil])], Exact("[1 %!d(string=a) <nil>]")),
        (F, "%5d|", vec![l(vec![i(1), i(2)])], Exact("[    1     2]|")),
        (F, "%v", vec![m(vec![("a", l(vec![i(1), m(vec![("b", Value::Nil)])]))])], Exact("map[a:[1 map[b:<nil>]]]")),
        (F, "%d", vec![m(vec![("a", i(1))])], Exact("map[%!d(string=a):1]")),
        (F, "%s", vec![m(vec![("a", i(1)), ("b", s("x"))])], Exact("map[a:%!s(int=1) b:x]")),
        (F, "%q", vec![l(vec![s("a"), i(65)])], Exact("[\"a\" 'A']")),
        (F, "%x", vec![l(vec![s("hi"), i(255)])], Exact("[6869 ff]")),
        (F, "%q", vec![s("a\"b\\c\n\t\u{0}\u{7f} é 日本 \u{200b} 😀 \u{feff} \u{a0}")], Exact("\"a\\\"b\\\\c\\n\\t\\x00\\x7f é 日本 \\u200b 😀 \\ufeff \\u00a0\"")),
        (F, "%+q", vec![s("é 日本 😀 x")], Exact("\"\\u00e9 \\u65e5\\u672c \\U0001f600 x\"")),
        (F, "%#q", vec![s("ab`c")], Exact("\"ab`c\"")),
        (F, "%#q", vec![s("abc\tdef")], Exact("`abc\tdef`")),
        (F, "%#q", vec![s("a\nb")], Exact("\"a\\nb\"")),
        (F, "%#+q", vec![s("é")], Exact("`é`")),
        (F, "%q", vec![i(65)], Exact("'A'")),
        (F, "%q", vec![i(128512)], Exact("'😀'")),
        (F, "%+q", vec![i(233)], Exact("'\\u00e9'")),
        (F, "%q", vec![i(39)], Exact("'\\''")),
        (F, "%q", vec![i(34)], Exact("'\"'")),
        (F, "%q", vec![i(-1)], Exact("'�'")),
        (F, "%q", vec![i(55296)], Exact("'�'")),
        (F, "%q", vec![i(10)], Exact("'\\n'")),
        (F, "%q", vec![i(1114112)], Exact("'�'")),
        (F, "%q", vec![i(133)], Exact("'\\u0085'")),
        (F, "%x", vec![s("hi")], Exact("6869")),
        (F, "%X", vec![s("hi")], Exact("6869")),
        (F, "% x", vec![s("hi!")], Exact("68 69 21")),
        (F, "%#x", vec![s("hi")], Exact("0x6869")),
        (F, "% #x", vec![s("hi")], Exact("0x68 0x69")),
        (F, "%.1x", vec![s("hi")], Exact("68")),
        (F, "%8x|", vec![s("hi")], Exact("    6869|")),
        (F, "%-8x|", vec![s("hi")], Exact("6869    |")),
        (F, "%8x|", vec![s("")], Exact("        |")),
        (F, "%x", vec![by(&[1, 255])], Exact("01ff")),
        (F, "%s", vec![by(&[104, 105])], Exact("hi")),
        (F, "%q", vec![by(&[104, 105, 255])], Exact("\"hi\\xff\"")),
        (F, "%v", vec![by(&[104, 105])], Exact("[104 105]")),
        (F, "%d", vec![by(&[104, 105])], Exact("[104 105]")),
        (F, "%o", vec![by(&[104, 105])], Exact("[150 151]")),
        (F, "%e", vec![by(&[104])], Exact("[%!e(uint8=104)]")),
        (F, "%#v", vec![by(&[104, 105])], Exact("[]byte{0x68, 0x69}")),
        (F, "%T", vec![by(&[104, 105])], Exact("[]uint8")),
        (F, "%.1s", vec![by(&[104, 105])], Exact("h")),
        (F, "%5s|", vec![by(&[104, 105])], Exact("   hi|")),
        (F, "%x", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("0x1p+00")),
        (F, "%x", vec![f(f64::from_bits(0x400c000000000000))], Exact("0x1.cp+01")),
        (F, "%X", vec![f(f64::from_bits(0xbfb999999999999a))], Exact("-0X1.999999999999AP-04")),
        (F, "%.2x", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("0x1.00p+00")),
        (F, "%#x", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("0x1.0000p+00")),
        (F, "%x", vec![f(f64::from_bits(0x0000000000000000))], Exact("0x0p+00")),
        (F, "%b", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("4503599627370496p-52")),
        (F, "%b", vec![f(f64::from_bits(0x0000000000000000))], Exact("0p-1074")),
        (F, "%x", vec![f(f64::from_bits(0x0000000000000001))], Exact("0x1p-1074")),
        (F, "%.0x", vec![f(f64::from_bits(0x3ff8000000000000))], Exact("0x1p+01")),
        (F, "%d", vec![l(vec![i(1), i(2)])], Exact("[1 2]")),
        (F, "%t", vec![Value::Bool(true)], Exact("true")),
        (F, "%t", vec![i(1)], Exact("%!t(int=1)")),
        (F, "%5t|", vec![i(3)], Exact("%!t(int=    3)|")),
        (F, "%+t", vec![i(3)], Exact("%!t(int=+3)")),
        (F, "%v", vec![Value::Bool(true)], Exact("true")),
        (F, "%5t|", vec![Value::Bool(false)], Exact("false|")),
        (F, "%d", vec![Value::Bool(true)], Exact("%!d(bool=true)")),
        (F, "%c", vec![i(65)], Exact("A")),
        (F, "%c", vec![i(26085)], Exact("日")),
        (F, "%c", vec![i(-1)], Exact("�")),
        (F, "%c", vec![i(55296)], Exact("�")),
        (F, "%3c|", vec![i(65)], Exact("  A|")),
        (F, "%U", vec![i(65)], Exact("U+0041")),
        (F, "%#U", vec![i(65)], Exact("U+0041 'A'")),
        (F, "%#U", vec![i(10)], Exact("U+000A")),
        (F, "%U", vec![i(-1)], Exact("U+FFFFFFFFFFFFFFFF")),
        (F, "%.6U", vec![i(65)], Exact("U+000041")),
        (F, "%8U|", vec![i(65)], Exact("  U+0041|")),
        (F, "%08U|", vec![i(65)], Exact("  U+0041|")),
        (F, "%e", vec![f(f64::from_bits(0x40934a456d5cfaad))], Exact("1.234568e+03")),
        (F, "%E", vec![f(f64::from_bits(0x40934a456d5cfaad))], Exact("1.234568E+03")),
        (F, "%.2e", vec![f(f64::from_bits(0x40934a456d5cfaad))], Exact("1.23e+03")),
        (F, "%.0e", vec![f(f64::from_bits(0x40934a456d5cfaad))], Exact("1e+03")),
        (F, "%#.0e", vec![f(f64::from_bits(0x40934a456d5cfaad))], Exact("1.e+03")),
        (F, "%e", vec![f(f64::from_bits(0x0000000000000000))], Exact("0.000000e+00")),
        (F, "%e", vec![f(f64::from_bits(0x54b249ad2594c37d))], Exact("1.000000e+100")),
        (F, "%e", vec![f(f64::from_bits(0x01a56e1fc2f8f359))], Exact("1.000000e-300")),
        (F, "%f", vec![f(f64::from_bits(0x40934a456d5cfaad))], Exact("1234.567800")),
        (F, "%.2f", vec![f(f64::from_bits(0x3fc0000000000000))], Exact("0.12")),
        (F, "%.2f", vec![f(f64::from_bits(0x3fd8000000000000))], Exact("0.38")),
        (F, "%.0f", vec![f(f64::from_bits(0x4004000000000000))], Exact("2")),
        (F, "%.0f", vec![f(f64::from_bits(0x3fe0000000000000))], Exact("0")),
        (F, "%#.0f", vec![f(f64::from_bits(0x4000000000000000))], Exact("2.")),
        (F, "%f", vec![f(f64::from_bits(0x4415af1d78b58c40))], Exact("100000000000000000000.000000")),
        (F, "%.3f", vec![f(f64::from_bits(0xbf1a36e2eb1c432d))], Exact("-0.000")),
        (F, "%F", vec![f(f64::from_bits(0x3ff8000000000000))], Exact("1.500000")),
        (F, "%g", vec![f(f64::from_bits(0x40934a456d5cfaad))], Exact("1234.5678")),
        (F, "%.3g", vec![f(f64::from_bits(0x40934a456d5cfaad))], Exact("1.23e+03")),
        (F, "%.3g", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("1")),
        (F, "%#.3g", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("1.00")),
        (F, "%#g", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("1.00000")),
        (F, "%#g", vec![f(f64::from_bits(0x0000000000000000))], Exact("0.00000")),
        (F, "%#g", vec![f(f64::from_bits(0x419d6f3454000000))], Exact("1.23456789e+08")),
        (F, "%G", vec![f(f64::from_bits(0x3e7ad7f29abcaf48))], Exact("1E-07")),
        (F, "%.10g", vec![f(f64::from_bits(0x3fd5555555555555))], Exact("0.3333333333")),
        (F, "%.0g", vec![f(f64::from_bits(0x4028000000000000))], Exact("1e+01")),
        (F, "%g", vec![f(f64::from_bits(0x444b1ae4d6e2ef50))], Exact("1e+21")),
        (F, "%.20g", vec![f(f64::from_bits(0x3fb999999999999a))], Exact("0.10000000000000000555")),
        (F, "%.3g", vec![f(f64::from_bits(0x4059000000000000))], Exact("100")),
        (F, "%.3g", vec![f(f64::from_bits(0x40f86a0000000000))], Exact("1e+05")),
        (F, "%5.2f|", vec![f(f64::from_bits(0x400921f9f01b866e))], Exact(" 3.14|")),
        (F, "%-8.2f|", vec![f(f64::from_bits(0x400921f9f01b866e))], Exact("3.14    |")),
        (F, "%08.2f|", vec![f(f64::from_bits(0xc00921f9f01b866e))], Exact("-0003.14|")),
        (F, "%+.2f", vec![f(f64::from_bits(0x400921f9f01b866e))], Exact("+3.14")),
        (F, "% .2f", vec![f(f64::from_bits(0x400921f9f01b866e))], Exact(" 3.14")),
        (F, "%+ .2f", vec![f(f64::from_bits(0x400921f9f01b866e))], Exact("+3.14")),
        (F, "%08f|", vec![f(f64::from_bits(0x7ff0000000000000))], Exact("    +Inf|")),
        (F, "%8v|", vec![f(f64::from_bits(0x7ff8000000000000))], Exact("     NaN|")),
        (F, "%+v", vec![f(f64::from_bits(0x7ff8000000000000))], Exact("NaN")),
        (F, "% v", vec![f(f64::from_bits(0x7ff8000000000000))], Exact(" NaN")),
        (F, "%-08.2f|", vec![f(f64::from_bits(0x3ff8000000000000))], Exact("1.50    |")),
        (F, "%010v|", vec![f(f64::from_bits(0xbff8000000000000))], Exact("-0000001.5|")),
        (F, "%v", vec![f(f64::from_bits(0x8000000000000000))], Exact("-0")),
        (F, "%+v", vec![f(f64::from_bits(0x0000000000000000))], Exact("0")),
        (F, "%-5s|", vec![s("ab")], Exact("ab   |")),
        (F, "%5s|", vec![s("ab")], Exact("   ab|")),
        (F, "%05s|", vec![s("ab")], Exact("000ab|")),
        (F, "%-05s|", vec![s("ab")], Exact("ab   |")),
        (F, "%.1s", vec![s("日本")], Exact("日")),
        (F, "%5s|", vec![s("日本")], Exact("   日本|")),
        (F, "%.0s|", vec![s("ab")], Exact("|")),
        (F, "%s", vec![s("%d")], Exact("%d")),
        (F, "%05d", vec![i(42)], Exact("00042")),
        (F, "%05d", vec![i(-42)], Exact("-0042")),
        (F, "%-05d|", vec![i(42)], Exact("42   |")),
        (F, "%+d", vec![i(42)], Exact("+42")),
        (F, "% d", vec![i(42)], Exact(" 42")),
        (F, "%+05d", vec![i(42)], Exact("+0042")),
        (F, "%.3d", vec![i(7)], Exact("007")),
        (F, "%6.3d|", vec![i(-7)], Exact("  -007|")),
        (F, "%06.3d|", vec![i(7)], Exact("   007|")),
        (F, "%.0d|", vec![i(0)], Exact("|")),
        (F, "%5.0d|", vec![i(0)], Exact("     |")),
        (F, "%d", vec![i(i64::MIN)], Exact("-9223372036854775808")),
        (F, "%x", vec![i(i64::MIN)], Exact("-8000000000000000")),
        (F, "%b", vec![i(i64::MIN)], Exact("-1000000000000000000000000000000000000000000000000000000000000000")),
        (F, "%x", vec![i(-255)], Exact("-ff")),
        (F, "%X", vec![i(255)], Exact("FF")),
        (F, "%#x", vec![i(255)], Exact("0xff")),
        (F, "%#x", vec![i(-255)], Exact("-0xff")),
        (F, "%#X", vec![i(255)], Exact("0XFF")),
        (F, "%o", vec![i(8)], Exact("10")),
        (F, "%#o", vec![i(8)], Exact("010")),
        (F, "%#o", vec![i(0)], Exact("0")),
        (F, "%O", vec![i(8)], Exact("0o10")),
        (F, "%O", vec![i(-8)], Exact("-0o10")),
        (F, "%#O", vec![i(8)], Exact("0o010")),
        (F, "%b", vec![i(5)], Exact("101")),
        (F, "%#b", vec![i(5)], Exact("0b101")),
        (F, "%08b", vec![i(5)], Exact("00000101")),
        (F, "%#08x", vec![i(255)], Exact("0x000000ff")),
        (F, "%x", vec![f(f64::from_bits(0x406fe00000000000))], Exact("0x1.fep+07")),
        (F, "%#v", vec![s("a\"b")], Exact("\"a\\\"b\"")),
        (F, "%#v", vec![i(1)], Exact("1")),
        (F, "%#v", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("1")),
        (F, "%#v", vec![f(f64::from_bits(0x412e848000000000))], Exact("1e+06")),
        (F, "%#v", vec![f(f64::from_bits(0x3ff8000000000000))], Exact("1.5")),
        (F, "%#v", vec![Value::Bool(true)], Exact("true")),
        (F, "%#v", vec![Value::Nil], Exact("<nil>")),
        (F, "%#v", vec![l(vec![s("a"), i(1)])], Exact("[]interface {}{\"a\", 1}")),
        (F, "%#v", vec![l(vec![Value::Nil, f(f64::from_bits(0x4000000000000000))])], Exact("[]interface {}{interface {}(nil), 2}")),
        (F, "%#v", vec![m(vec![("a", i(1)), ("b", l(vec![s("x")]))])], Exact("map[string]interface {}{\"a\":1, \"b\":[]interface {}{\"x\"}}")),
        (F, "%#v", vec![l(vec![])], Exact("[]interface {}{}")),
        (F, "%#v", vec![m(vec![])], Exact("map[string]interface {}{}")),
        (F, "%#v", vec![m(vec![("a", Value::Nil)])], Exact("map[string]interface {}{\"a\":interface {}(nil)}")),
        (F, "%+v", vec![m(vec![("a", i(1))])], Exact("map[a:1]")),
        (F, "%T", vec![i(1)], Exact("int")),
        (F, "%T", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("float64")),
        (F, "%T", vec![s("")], Exact("string")),
        (F, "%T", vec![Value::Bool(true)], Exact("bool")),
        (F, "%T", vec![l(vec![])], Exact("[]interface {}")),
        (F, "%T", vec![m(vec![])], Exact("map[string]interface {}")),
        (F, "%-12T|", vec![i(1)], Exact("int         |")),
        (F, "%w", vec![i(1)], Exact("%!w(int=1)")),
        (F, "%z", vec![i(1)], Exact("%!z(int=1)")),
        (F, "%!", vec![i(1)], Exact("%!!(int=1)")),
        (F, "%é", vec![i(1)], Exact("%!é(int=1)")),
        (F, "%p", vec![i(1)], Exact("%!p(int=1)")),
        (F, "%s %s", vec![s("a")], Exact("a %!s(MISSING)")),
        (F, "%v%%%v", vec![i(1), i(2)], Exact("1%2")),
        (F, "%5%|", vec![], Exact("%|")),
        (F, "%-+# 0d", vec![i(1)], Exact("+1")),
        (F, "%[2]d", vec![i(1)], Exact("%!d(BADINDEX)")),
        (F, "%[2]*d", vec![i(1), i(2)], Exact("%!d(MISSING)")),
        (F, "%.[2]d", vec![i(1), i(2)], Exact("2")),
        (F, "%d %s", vec![i(1), s("a"), i(2)], Exact("1 a%!(EXTRA int=2)")),
        (F, "%v", vec![l(vec![l(vec![l(vec![i(1)])])])], Exact("[[[1]]]")),
        (F, "%s", vec![i(1)], Exact("%!s(int=1)")),
        (F, "%s", vec![f(f64::from_bits(0x3ff8000000000000))], Exact("%!s(float64=1.5)")),
        (F, "%s", vec![Value::Bool(true)], Exact("%!s(bool=true)")),
        (F, "%q", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("%!q(float64=1)")),
        (F, "%x", vec![Value::Bool(true)], Exact("%!x(bool=true)")),
        (F, "%v", vec![l(vec![f(f64::from_bits(0x412e848000000000)), f(f64::from_bits(0x3fb999999999999a))])], Exact("[1e+06 0.1]")),
        (F, "%.2f", vec![l(vec![f(f64::from_bits(0x3ff0000000000000)), i(2)])], Exact("[1.00 %!f(int=02)]")),
        (F, "%6.2v|", vec![f(f64::from_bits(0x400921f9f01b866e))], Exact("   3.1|")),
        (F, "%.3v", vec![s("abcdef")], Exact("abc")),
        (F, "%.2v", vec![f(f64::from_bits(0x405ec00000000000))], Exact("1.2e+02")),
        (F, "%e", vec![i(1)], Exact("%!e(int=1)")),
        (F, "%f", vec![i(1)], Exact("%!f(int=1)")),
        (F, "%g", vec![s("x")], Exact("%!g(string=x)")),
        (F, "%s", vec![l(vec![])], Exact("[]")),
        (F, "%v", vec![m(vec![("a", by(&[104, 105]))])], Exact("map[a:[104 105]]")),
        (F, "%s", vec![l(vec![by(&[104, 105])])], Exact("[hi]")),
        (F, "%x", vec![l(vec![by(&[104, 105])])], Exact("[6869]")),
        (F, "%#v", vec![l(vec![by(&[104, 105])])], Exact("[]interface {}{[]uint8{0x68, 0x69}}")),
        (F, "%.1000f|", vec![f(f64::from_bits(0x3fb999999999999a))], Big(1003, "0.10000000000000000555111512312578270211", "000000000000000000000000000000000000000|")),
        (F, "%.30e", vec![f(f64::from_bits(0x3fb999999999999a))], Exact("1.000000000000000055511151231258e-01")),
        (F, "%.25g", vec![f(f64::from_bits(0x44b52d02c7e14af6))], Exact("99999999999999991611392")),
        (F, "%.17g", vec![f(f64::from_bits(0x3fb999999999999a))], Exact("0.10000000000000001")),
        (F, "%.18e", vec![f(f64::from_bits(0x3fd5555555555555))], Exact("3.333333333333333148e-01")),
        (F, "%.40f", vec![f(f64::from_bits(0x0000000000000001))], Exact("0.0000000000000000000000000000000000000000")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xf2a74de452e6b438)), f(f64::from_bits(0xf2a74de452e6b438)), f(f64::from_bits(0xf2a74de452e6b438)), f(f64::from_bits(0xf2a74de452e6b438)), f(f64::from_bits(0xf2a74de452e6b438)), f(f64::from_bits(0xf2a74de452e6b438)), f(f64::from_bits(0xf2a74de452e6b438)), f(f64::from_bits(0xf2a74de452e6b438)), f(f64::from_bits(0xf2a74de452e6b438))], Big(410, "-1.989032661366619e+244|-1.989033e+244|-", "4821453279324101034702448915133683990528")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x6513270e269e0d37)), f(f64::from_bits(0x6513270e269e0d37)), f(f64::from_bits(0x6513270e269e0d37)), f(f64::from_bits(0x6513270e269e0d37)), f(f64::from_bits(0x6513270e269e0d37)), f(f64::from_bits(0x6513270e269e0d37)), f(f64::from_bits(0x6513270e269e0d37)), f(f64::from_bits(0x6513270e269e0d37)), f(f64::from_bits(0x6513270e269e0d37))], Big(335, "7.761117632285041e+178|7.761118e+178|7.7", "1506479979574200570825826167097816776704")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x0c5c7fd0a6a3a450)), f(f64::from_bits(0x0c5c7fd0a6a3a450)), f(f64::from_bits(0x0c5c7fd0a6a3a450)), f(f64::from_bits(0x0c5c7fd0a6a3a450)), f(f64::from_bits(0x0c5c7fd0a6a3a450)), f(f64::from_bits(0x0c5c7fd0a6a3a450)), f(f64::from_bits(0x0c5c7fd0a6a3a450)), f(f64::from_bits(0x0c5c7fd0a6a3a450)), f(f64::from_bits(0x0c5c7fd0a6a3a450))], Exact("3.980498358697587e-249|3.980498e-249|3.980e-249|3.980498359e-249|3.980498358697587e-249|0x1.c7fd0a6a3a45p-826|8021833473565776p-878|3.980498358697587E-249|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xd23f0824128b2f33)), f(f64::from_bits(0xd23f0824128b2f33)), f(f64::from_bits(0xd23f0824128b2f33)), f(f64::from_bits(0xd23f0824128b2f33)), f(f64::from_bits(0xd23f0824128b2f33)), f(f64::from_bits(0xd23f0824128b2f33)), f(f64::from_bits(0xd23f0824128b2f33)), f(f64::from_bits(0xd23f0824128b2f33)), f(f64::from_bits(0xd23f0824128b2f33))], Exact("-1.5432835417340557e+88|-1.543284e+88|-1.543e+88|-1.543283542e+88|-1.5432835417340557e+88|-0x1.f0824128b2f33p+292|-8734675300986675p+240|-1.5432835417340557E+88|-15432835417340557405158500330682502071656501781791298759666279418262109828379128417484800")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x1818e811892f902b)), f(f64::from_bits(0x1818e811892f902b)), f(f64::from_bits(0x1818e811892f902b)), f(f64::from_bits(0x1818e811892f902b)), f(f64::from_bits(0x1818e811892f902b)), f(f64::from_bits(0x1818e811892f902b)), f(f64::from_bits(0x1818e811892f902b)), f(f64::from_bits(0x1818e811892f902b)), f(f64::from_bits(0x1818e811892f902b))], Exact("1.3647584518757569e-192|1.364758e-192|1.365e-192|1.364758452e-192|1.3647584518757569e-192|0x1.8e811892f902bp-638|7010561454739499p-690|1.3647584518757569E-192|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x9531985d5d9dc9f8)), f(f64::from_bits(0x9531985d5d9dc9f8)), f(f64::from_bits(0x9531985d5d9dc9f8)), f(f64::from_bits(0x9531985d5d9dc9f8)), f(f64::from_bits(0x9531985d5d9dc9f8)), f(f64::from_bits(0x9531985d5d9dc9f8)), f(f64::from_bits(0x9531985d5d9dc9f8)), f(f64::from_bits(0x9531985d5d9dc9f8)), f(f64::from_bits(0x9531985d5d9dc9f8))], Exact("-1.3701135617873088e-206|-1.370114e-206|-1.370e-206|-1.370113562e-206|-1.3701135617873088e-206|-0x1.1985d5d9dc9f8p-684|-4952601374083576p-736|-1.3701135617873088E-206|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xe8e25d940ed90475)), f(f64::from_bits(0xe8e25d940ed90475)), f(f64::from_bits(0xe8e25d940ed90475)), f(f64::from_bits(0xe8e25d940ed90475)), f(f64::from_bits(0xe8e25d940ed90475)), f(f64::from_bits(0xe8e25d940ed90475)), f(f64::from_bits(0xe8e25d940ed90475)), f(f64::from_bits(0xe8e25d940ed90475)), f(f64::from_bits(0xe8e25d940ed90475))], Big(366, "-1.7160537630466207e+197|-1.716054e+197|", "5094230778152152119682461104277540569088")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x36f675cc81e74ef5)), f(f64::from_bits(0x36f675cc81e74ef5)), f(f64::from_bits(0x36f675cc81e74ef5)), f(f64::from_bits(0x36f675cc81e74ef5)), f(f64::from_bits(0x36f675cc81e74ef5)), f(f64::from_bits(0x36f675cc81e74ef5)), f(f64::from_bits(0x36f675cc81e74ef5)), f(f64::from_bits(0x36f675cc81e74ef5)), f(f64::from_bits(0x36f675cc81e74ef5))], Exact("6.294675241195386e-44|6.294675e-44|6.295e-44|6.294675241e-44|6.2946752411953861e-44|0x1.675cc81e74ef5p-144|6321970700832501p-196|6.294675241195386E-44|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x1600a35a099950d8)), f(f64::from_bits(0x1600a35a099950d8)), f(f64::from_bits(0x1600a35a099950d8)), f(f64::from_bits(0x1600a35a099950d8)), f(f64::from_bits(0x1600a35a099950d8)), f(f64::from_bits(0x1600a35a099950d8)), f(f64::from_bits(0x1600a35a099950d8)), f(f64::from_bits(0x1600a35a099950d8)), f(f64::from_bits(0x1600a35a099950d8))], Exact("1.0613447212142254e-202|1.061345e-202|1.061e-202|1.061344721e-202|1.0613447212142254e-202|0x1.0a35a099950d8p-671|4683206730797272p-723|1.0613447212142254E-202|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x6b0d549b6f03675a)), f(f64::from_bits(0x6b0d549b6f03675a)), f(f64::from_bits(0x6b0d549b6f03675a)), f(f64::from_bits(0x6b0d549b6f03675a)), f(f64::from_bits(0x6b0d549b6f03675a)), f(f64::from_bits(0x6b0d549b6f03675a)), f(f64::from_bits(0x6b0d549b6f03675a)), f(f64::from_bits(0x6b0d549b6f03675a)), f(f64::from_bits(0x6b0d549b6f03675a))], Big(364, "4.708325160387546e+207|4.708325e+207|4.7", "6065688693766716335562310843758920335360")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f))], Exact("6.387016158513563e-12|6.387016e-12|6.387e-12|6.387016159e-12|6.3870161585135632e-12|0x1.c172411e20b8fp-38|7906743034186639p-90|6.387016158513563E-12|0")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f)), f(f64::from_bits(0x3d9c172411e20b8f))], Exact("0.000000|0.00|0.000000000006|6.387016158513563e-12|+6.387e-12|0000.000")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x8d116ece1738f7d9)), f(f64::from_bits(0x8d116ece1738f7d9)), f(f64::from_bits(0x8d116ece1738f7d9)), f(f64::from_bits(0x8d116ece1738f7d9)), f(f64::from_bits(0x8d116ece1738f7d9)), f(f64::from_bits(0x8d116ece1738f7d9)), f(f64::from_bits(0x8d116ece1738f7d9)), f(f64::from_bits(0x8d116ece1738f7d9)), f(f64::from_bits(0x8d116ece1738f7d9))], Exact("-9.973130378568733e-246|-9.973130e-246|-9.973e-246|-9.973130379e-246|-9.9731303785687331e-246|-0x1.16ece1738f7d9p-814|-4906906036008921p-866|-9.973130378568733E-246|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x0f21ddb66cad4a26)), f(f64::from_bits(0x0f21ddb66cad4a26)), f(f64::from_bits(0x0f21ddb66cad4a26)), f(f64::from_bits(0x0f21ddb66cad4a26)), f(f64::from_bits(0x0f21ddb66cad4a26)), f(f64::from_bits(0x0f21ddb66cad4a26)), f(f64::from_bits(0x0f21ddb66cad4a26)), f(f64::from_bits(0x0f21ddb66cad4a26)), f(f64::from_bits(0x0f21ddb66cad4a26))], Exact("8.779753225680271e-236|8.779753e-236|8.780e-236|8.779753226e-236|8.7797532256802712e-236|0x1.1ddb66cad4a26p-781|5028850181163558p-833|8.779753225680271E-236|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x90c192cfd3ac94af)), f(f64::from_bits(0x90c192cfd3ac94af)), f(f64::from_bits(0x90c192cfd3ac94af)), f(f64::from_bits(0x90c192cfd3ac94af)), f(f64::from_bits(0x90c192cfd3ac94af)), f(f64::from_bits(0x90c192cfd3ac94af)), f(f64::from_bits(0x90c192cfd3ac94af)), f(f64::from_bits(0x90c192cfd3ac94af)), f(f64::from_bits(0x90c192cfd3ac94af))], Exact("-5.795503248498993e-228|-5.795503e-228|-5.796e-228|-5.795503248e-228|-5.7955032484989932e-228|-0x1.192cfd3ac94afp-755|-4946495911269551p-807|-5.795503248498993E-228|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xf28c105d1fb17c23)), f(f64::from_bits(0xf28c105d1fb17c23)), f(f64::from_bits(0xf28c105d1fb17c23)), f(f64::from_bits(0xf28c105d1fb17c23)), f(f64::from_bits(0xf28c105d1fb17c23)), f(f64::from_bits(0xf28c105d1fb17c23)), f(f64::from_bits(0xf28c105d1fb17c23)), f(f64::from_bits(0xf28c105d1fb17c23)), f(f64::from_bits(0xf28c105d1fb17c23))], Big(410, "-5.988180159386011e+243|-5.988180e+243|-", "3064864865492795362030345869397640347648")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xa170b33839263059)), f(f64::from_bits(0xa170b33839263059)), f(f64::from_bits(0xa170b33839263059)), f(f64::from_bits(0xa170b33839263059)), f(f64::from_bits(0xa170b33839263059)), f(f64::from_bits(0xa170b33839263059)), f(f64::from_bits(0xa170b33839263059)), f(f64::from_bits(0xa170b33839263059)), f(f64::from_bits(0xa170b33839263059))], Exact("-1.306052388527796e-147|-1.306052e-147|-1.306e-147|-1.306052389e-147|-1.3060523885277959e-147|-0x1.0b33839263059p-488|-4700653685715033p-540|-1.306052388527796E-147|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x953f48f1a09f76b5)), f(f64::from_bits(0x953f48f1a09f76b5)), f(f64::from_bits(0x953f48f1a09f76b5)), f(f64::from_bits(0x953f48f1a09f76b5)), f(f64::from_bits(0x953f48f1a09f76b5)), f(f64::from_bits(0x953f48f1a09f76b5)), f(f64::from_bits(0x953f48f1a09f76b5)), f(f64::from_bits(0x953f48f1a09f76b5)), f(f64::from_bits(0x953f48f1a09f76b5))], Exact("-2.436117699484841e-206|-2.436118e-206|-2.436e-206|-2.436117699e-206|-2.4361176994848409e-206|-0x1.f48f1a09f76b5p-684|-8805926897153717p-736|-2.436117699484841E-206|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x0fd630f1f29d0da9)), f(f64::from_bits(0x0fd630f1f29d0da9)), f(f64::from_bits(0x0fd630f1f29d0da9)), f(f64::from_bits(0x0fd630f1f29d0da9)), f(f64::from_bits(0x0fd630f1f29d0da9)), f(f64::from_bits(0x0fd630f1f29d0da9)), f(f64::from_bits(0x0fd630f1f29d0da9)), f(f64::from_bits(0x0fd630f1f29d0da9)), f(f64::from_bits(0x0fd630f1f29d0da9))], Exact("2.233386999150174e-232|2.233387e-232|2.233e-232|2.233386999e-232|2.2333869991501741e-232|0x1.630f1f29d0da9p-770|6246265203264937p-822|2.233386999150174E-232|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x95e60af593bd04cf)), f(f64::from_bits(0x95e60af593bd04cf)), f(f64::from_bits(0x95e60af593bd04cf)), f(f64::from_bits(0x95e60af593bd04cf)), f(f64::from_bits(0x95e60af593bd04cf)), f(f64::from_bits(0x95e60af593bd04cf)), f(f64::from_bits(0x95e60af593bd04cf)), f(f64::from_bits(0x95e60af593bd04cf)), f(f64::from_bits(0x95e60af593bd04cf))], Exact("-3.51527970626667e-203|-3.515280e-203|-3.515e-203|-3.515279706e-203|-3.5152797062666699e-203|-0x1.60af593bd04cfp-673|-6204499349537999p-725|-3.51527970626667E-203|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x0cb1e29c658cda14)), f(f64::from_bits(0x0cb1e29c658cda14)), f(f64::from_bits(0x0cb1e29c658cda14)), f(f64::from_bits(0x0cb1e29c658cda14)), f(f64::from_bits(0x0cb1e29c658cda14)), f(f64::from_bits(0x0cb1e29c658cda14)), f(f64::from_bits(0x0cb1e29c658cda14)), f(f64::from_bits(0x0cb1e29c658cda14)), f(f64::from_bits(0x0cb1e29c658cda14))], Exact("1.5987381841032883e-247|1.598738e-247|1.599e-247|1.598738184e-247|1.5987381841032883e-247|0x1.1e29c658cda14p-820|5034235950586388p-872|1.5987381841032883E-247|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x3898d190f9ebdacc)), f(f64::from_bits(0x3898d190f9ebdacc)), f(f64::from_bits(0x3898d190f9ebdacc)), f(f64::from_bits(0x3898d190f9ebdacc)), f(f64::from_bits(0x3898d190f9ebdacc)), f(f64::from_bits(0x3898d190f9ebdacc)), f(f64::from_bits(0x3898d190f9ebdacc)), f(f64::from_bits(0x3898d190f9ebdacc)), f(f64::from_bits(0x3898d190f9ebdacc))], Exact("4.6678633181812096e-36|4.667863e-36|4.668e-36|4.667863318e-36|4.6678633181812096e-36|0x1.8d190f9ebdaccp-118|6985820039535308p-170|4.6678633181812096E-36|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x8e81973e0becd7b0)), f(f64::from_bits(0x8e81973e0becd7b0)), f(f64::from_bits(0x8e81973e0becd7b0)), f(f64::from_bits(0x8e81973e0becd7b0)), f(f64::from_bits(0x8e81973e0becd7b0)), f(f64::from_bits(0x8e81973e0becd7b0)), f(f64::from_bits(0x8e81973e0becd7b0)), f(f64::from_bits(0x8e81973e0becd7b0)), f(f64::from_bits(0x8e81973e0becd7b0))], Exact("-8.441872792105456e-239|-8.441873e-239|-8.442e-239|-8.441872792e-239|-8.4418727921054556e-239|-0x1.1973e0becd7bp-791|-4951367347918768p-843|-8.441872792105456E-239|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x2217beaddbc496cb)), f(f64::from_bits(0x2217beaddbc496cb)), f(f64::from_bits(0x2217beaddbc496cb)), f(f64::from_bits(0x2217beaddbc496cb)), f(f64::from_bits(0x2217beaddbc496cb)), f(f64::from_bits(0x2217beaddbc496cb)), f(f64::from_bits(0x2217beaddbc496cb)), f(f64::from_bits(0x2217beaddbc496cb)), f(f64::from_bits(0x2217beaddbc496cb))], Exact("1.9015657400796622e-144|1.901566e-144|1.902e-144|1.90156574e-144|1.9015657400796622e-144|0x1.7beaddbc496cbp-478|6683578390058699p-530|1.9015657400796622E-144|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x6b4cb2424a23d596)), f(f64::from_bits(0x6b4cb2424a23d596)), f(f64::from_bits(0x6b4cb2424a23d596)), f(f64::from_bits(0x6b4cb2424a23d596)), f(f64::from_bits(0x6b4cb2424a23d596)), f(f64::from_bits(0x6b4cb2424a23d596)), f(f64::from_bits(0x6b4cb2424a23d596)), f(f64::from_bits(0x6b4cb2424a23d596)), f(f64::from_bits(0x6b4cb2424a23d596))], Big(365, "7.370437700706684e+208|7.370438e+208|7.3", "0229111789078516235397670571927937220608")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x8a6a63ec24ede6a4)), f(f64::from_bits(0x8a6a63ec24ede6a4)), f(f64::from_bits(0x8a6a63ec24ede6a4)), f(f64::from_bits(0x8a6a63ec24ede6a4)), f(f64::from_bits(0x8a6a63ec24ede6a4)), f(f64::from_bits(0x8a6a63ec24ede6a4)), f(f64::from_bits(0x8a6a63ec24ede6a4)), f(f64::from_bits(0x8a6a63ec24ede6a4)), f(f64::from_bits(0x8a6a63ec24ede6a4))], Exact("-1.7163996725272777e-258|-1.716400e-258|-1.716e-258|-1.716399673e-258|-1.7163996725272777e-258|-0x1.a63ec24ede6a4p-857|-7428215277479588p-909|-1.7163996725272777E-258|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x922766581e27a1c0)), f(f64::from_bits(0x922766581e27a1c0)), f(f64::from_bits(0x922766581e27a1c0)), f(f64::from_bits(0x922766581e27a1c0)), f(f64::from_bits(0x922766581e27a1c0)), f(f64::from_bits(0x922766581e27a1c0)), f(f64::from_bits(0x922766581e27a1c0)), f(f64::from_bits(0x922766581e27a1c0)), f(f64::from_bits(0x922766581e27a1c0))], Exact("-3.2367190832119987e-221|-3.236719e-221|-3.237e-221|-3.236719083e-221|-3.2367190832119987e-221|-0x1.766581e27a1cp-733|-6586453113414080p-785|-3.2367190832119987E-221|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x8f6d05584ef8aa38)), f(f64::from_bits(0x8f6d05584ef8aa38)), f(f64::from_bits(0x8f6d05584ef8aa38)), f(f64::from_bits(0x8f6d05584ef8aa38)), f(f64::from_bits(0x8f6d05584ef8aa38)), f(f64::from_bits(0x8f6d05584ef8aa38)), f(f64::from_bits(0x8f6d05584ef8aa38)), f(f64::from_bits(0x8f6d05584ef8aa38)), f(f64::from_bits(0x8f6d05584ef8aa38))], Exact("-2.2818334634712625e-234|-2.281833e-234|-2.282e-234|-2.281833463e-234|-2.2818334634712625e-234|-0x1.d05584ef8aa38p-777|-8168651164789304p-829|-2.2818334634712625E-234|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xae97ba94d0eda82f)), f(f64::from_bits(0xae97ba94d0eda82f)), f(f64::from_bits(0xae97ba94d0eda82f)), f(f64::from_bits(0xae97ba94d0eda82f)), f(f64::from_bits(0xae97ba94d0eda82f)), f(f64::from_bits(0xae97ba94d0eda82f)), f(f64::from_bits(0xae97ba94d0eda82f)), f(f64::from_bits(0xae97ba94d0eda82f)), f(f64::from_bits(0xae97ba94d0eda82f))], Exact("-3.0536383926309363e-84|-3.053638e-84|-3.054e-84|-3.053638393e-84|-3.0536383926309363e-84|-0x1.7ba94d0eda82fp-278|-6679072787507247p-330|-3.0536383926309363E-84|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x1a61dbe22e44158b)), f(f64::from_bits(0x1a61dbe22e44158b)), f(f64::from_bits(0x1a61dbe22e44158b)), f(f64::from_bits(0x1a61dbe22e44158b)), f(f64::from_bits(0x1a61dbe22e44158b)), f(f64::from_bits(0x1a61dbe22e44158b)), f(f64::from_bits(0x1a61dbe22e44158b)), f(f64::from_bits(0x1a61dbe22e44158b)), f(f64::from_bits(0x1a61dbe22e44158b))], Exact("1.3449551894627777e-181|1.344955e-181|1.345e-181|1.344955189e-181|1.3449551894627777e-181|0x1.1dbe22e44158bp-601|5026839089386891p-653|1.3449551894627777E-181|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x923a736994e3bf91)), f(f64::from_bits(0x923a736994e3bf91)), f(f64::from_bits(0x923a736994e3bf91)), f(f64::from_bits(0x923a736994e3bf91)), f(f64::from_bits(0x923a736994e3bf91)), f(f64::from_bits(0x923a736994e3bf91)), f(f64::from_bits(0x923a736994e3bf91)), f(f64::from_bits(0x923a736994e3bf91)), f(f64::from_bits(0x923a736994e3bf91))], Exact("-7.317495976062606e-221|-7.317496e-221|-7.317e-221|-7.317495976e-221|-7.3174959760626057e-221|-0x1.a736994e3bf91p-732|-7445246701191057p-784|-7.317495976062606E-221|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x301850c5a38fd547)), f(f64::from_bits(0x301850c5a38fd547)), f(f64::from_bits(0x301850c5a38fd547)), f(f64::from_bits(0x301850c5a38fd547)), f(f64::from_bits(0x301850c5a38fd547)), f(f64::from_bits(0x301850c5a38fd547)), f(f64::from_bits(0x301850c5a38fd547)), f(f64::from_bits(0x301850c5a38fd547)), f(f64::from_bits(0x301850c5a38fd547))], Exact("5.249822308814304e-77|5.249822e-77|5.250e-77|5.249822309e-77|5.2498223088143036e-77|0x1.850c5a38fd547p-254|6844209223947591p-306|5.249822308814304E-77|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x18f135d25f557203)), f(f64::from_bits(0x18f135d25f557203)), f(f64::from_bits(0x18f135d25f557203)), f(f64::from_bits(0x18f135d25f557203)), f(f64::from_bits(0x18f135d25f557203)), f(f64::from_bits(0x18f135d25f557203)), f(f64::from_bits(0x18f135d25f557203)), f(f64::from_bits(0x18f135d25f557203)), f(f64::from_bits(0x18f135d25f557203))], Exact("1.5450754142984396e-188|1.545075e-188|1.545e-188|1.545075414e-188|1.5450754142984396e-188|0x1.135d25f557203p-624|4844252262920707p-676|1.5450754142984396E-188|0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xb64ce4228c38fb29)), f(f64::from_bits(0xb64ce4228c38fb29)), f(f64::from_bits(0xb64ce4228c38fb29)), f(f64::from_bits(0xb64ce4228c38fb29)), f(f64::from_bits(0xb64ce4228c38fb29)), f(f64::from_bits(0xb64ce4228c38fb29)), f(f64::from_bits(0xb64ce4228c38fb29)), f(f64::from_bits(0xb64ce4228c38fb29)), f(f64::from_bits(0xb64ce4228c38fb29))], Exact("-3.953625698224792e-47|-3.953626e-47|-3.954e-47|-3.953625698e-47|-3.9536256982247919e-47|-0x1.ce4228c38fb29p-155|-8132136380463913p-207|-3.953625698224792E-47|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x907a70c31012f037)), f(f64::from_bits(0x907a70c31012f037)), f(f64::from_bits(0x907a70c31012f037)), f(f64::from_bits(0x907a70c31012f037)), f(f64::from_bits(0x907a70c31012f037)), f(f64::from_bits(0x907a70c31012f037)), f(f64::from_bits(0x907a70c31012f037)), f(f64::from_bits(0x907a70c31012f037)), f(f64::from_bits(0x907a70c31012f037))], Exact("-2.72491267476498e-229|-2.724913e-229|-2.725e-229|-2.724912675e-229|-2.7249126747649799e-229|-0x1.a70c31012f037p-760|-7442332485087287p-812|-2.72491267476498E-229|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x9e7769b10f4205b4)), f(f64::from_bits(0x9e7769b10f4205b4)), f(f64::from_bits(0x9e7769b10f4205b4)), f(f64::from_bits(0x9e7769b10f4205b4)), f(f64::from_bits(0x9e7769b10f4205b4)), f(f64::from_bits(0x9e7769b10f4205b4)), f(f64::from_bits(0x9e7769b10f4205b4)), f(f64::from_bits(0x9e7769b10f4205b4)), f(f64::from_bits(0x9e7769b10f4205b4))], Exact("-6.505141861548772e-162|-6.505142e-162|-6.505e-162|-6.505141862e-162|-6.5051418615487723e-162|-0x1.769b10f4205b4p-536|-6590133650458036p-588|-6.505141861548772E-162|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x7f15052434b9b5df)), f(f64::from_bits(0x7f15052434b9b5df)), f(f64::from_bits(0x7f15052434b9b5df)), f(f64::from_bits(0x7f15052434b9b5df)), f(f64::from_bits(0x7f15052434b9b5df)), f(f64::from_bits(0x7f15052434b9b5df)), f(f64::from_bits(0x7f15052434b9b5df)), f(f64::from_bits(0x7f15052434b9b5df)), f(f64::from_bits(0x7f15052434b9b5df))], Big(462, "1.441484839555994e+304|1.441485e+304|1.4", "1599443051581348616518215457212488220672")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x881ed162ae2eb154)), f(f64::from_bits(0x881ed162ae2eb154)), f(f64::from_bits(0x881ed162ae2eb154)), f(f64::from_bits(0x881ed162ae2eb154)), f(f64::from_bits(0x881ed162ae2eb154)), f(f64::from_bits(0x881ed162ae2eb154)), f(f64::from_bits(0x881ed162ae2eb154)), f(f64::from_bits(0x881ed162ae2eb154)), f(f64::from_bits(0x881ed162ae2eb154))], Exact("-1.4583679262758548e-269|-1.458368e-269|-1.458e-269|-1.458367926e-269|-1.4583679262758548e-269|-0x1.ed162ae2eb154p-894|-8674471060615508p-946|-1.4583679262758548E-269|-0")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc6f877186d76b07e)), f(f64::from_bits(0xc6f877186d76b07e)), f(f64::from_bits(0xc6f877186d76b07e)), f(f64::from_bits(0xc6f877186d76b07e)), f(f64::from_bits(0xc6f877186d76b07e)), f(f64::from_bits(0xc6f877186d76b07e)), f(f64::from_bits(0xc6f877186d76b07e)), f(f64::from_bits(0xc6f877186d76b07e)), f(f64::from_bits(0xc6f877186d76b07e))], Exact("-7.939416668807721e+33|-7.939417e+33|-7.939e+33|-7.939416669e+33|-7.9394166688077208e+33|-0x1.877186d76b07ep+112|-6886346240471166p+60|-7.939416668807721E+33|-7939416668807720765072559902294016")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x7731af10506bf2ef)), f(f64::from_bits(0x7731af10506bf2ef)), f(f64::from_bits(0x7731af10506bf2ef)), f(f64::from_bits(0x7731af10506bf2ef)), f(f64::from_bits(0x7731af10506bf2ef)), f(f64::from_bits(0x7731af10506bf2ef)), f(f64::from_bits(0x7731af10506bf2ef)), f(f64::from_bits(0x7731af10506bf2ef)), f(f64::from_bits(0x7731af10506bf2ef))], Big(426, "1.4255183989699612e+266|1.425518e+266|1.", "7387986968701297701853560990776485216256")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xec66a78795e761d1)), f(f64::from_bits(0xec66a78795e761d1)), f(f64::from_bits(0xec66a78795e761d1)), f(f64::from_bits(0xec66a78795e761d1)), f(f64::from_bits(0xec66a78795e761d1)), f(f64::from_bits(0xec66a78795e761d1)), f(f64::from_bits(0xec66a78795e761d1)), f(f64::from_bits(0xec66a78795e761d1)), f(f64::from_bits(0xec66a78795e761d1))], Big(381, "-1.525315701232403e+214|-1.525316e+214|-", "3195538346922190615937477565243142963200")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698))], Exact("-93631.24725844932|-9.363125e+04|-9.363e+04|-93631.24726|-93631.247258449323|-0x1.6dbf3f4c54698p+16|-6434290317739672p-36|-93631.24725844932|-93631")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698)), f(f64::from_bits(0xc0f6dbf3f4c54698))], Exact("-93631.247258|-93631.25|-93631.247258449323|-93631.24725844932|-9.363e+04|-93631.247")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e))], Exact("-400466.0062726353|-4.004660e+05|-4.005e+05|-400466.0063|-400466.00627263531|-0x1.87148066c556ep+18|-6879953600402798p-34|-400466.0062726353|-400466")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e)), f(f64::from_bits(0xc1187148066c556e))], Exact("-400466.006273|-400466.01|-400466.006272635306|-400466.0062726353|-4.005e+05|-400466.006")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60))], Exact("588758.9630449824|5.887590e+05|5.888e+05|588758.963|588758.9630449824|0x1.1f7aded143b6p+19|5057400983010144p-33|588758.9630449824|588759")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60)), f(f64::from_bits(0x4121f7aded143b60))], Exact("588758.963045|588758.96|588758.963044982404|588758.9630449824|+5.888e+05|588758.963")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0))], Exact("397988.8674591426|3.979889e+05|3.980e+05|397988.8675|397988.86745914258|0x1.84a93784735ap+18|6837396679636384p-34|397988.8674591426|397989")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0)), f(f64::from_bits(0x41184a93784735a0))], Exact("397988.867459|397988.87|397988.867459142581|397988.8674591426|+3.98e+05|397988.867")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100))], Exact("-511806.9785556942|-5.118070e+05|-5.118e+05|-511806.9786|-511806.97855569422|-0x1.f3cfbea0a81p+18|-8792776939045120p-34|-511806.9785556942|-511807")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100)), f(f64::from_bits(0xc11f3cfbea0a8100))], Exact("-511806.978556|-511806.98|-511806.978555694222|-511806.9785556942|-5.118e+05|-511806.979")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238))], Exact("148847.42051734193|1.488474e+05|1.488e+05|148847.4205|148847.42051734193|0x1.22b7b5d383238p+17|5114358425727544p-35|148847.42051734193|148847")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238)), f(f64::from_bits(0x41022b7b5d383238))], Exact("148847.420517|148847.42|148847.420517341932|148847.42051734193|+1.488e+05|148847.421")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0))], Exact("50393.00762290298|5.039301e+04|5.039e+04|50393.00762|50393.00762290298|0x1.89b203e7262ep+15|6925962229998304p-37|50393.00762290298|50393")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0)), f(f64::from_bits(0x40e89b203e7262e0))], Exact("50393.007623|50393.01|50393.007622902980|50393.00762290298|+5.039e+04|50393.008")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8))], Exact("750274.9911468579|7.502750e+05|7.503e+05|750274.9911|750274.99114685785|0x1.6e585fb7799d8p+19|6444813099964888p-33|750274.9911468579|750275")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8)), f(f64::from_bits(0x4126e585fb7799d8))], Exact("750274.991147|750274.99|750274.991146857850|750274.9911468579|+7.503e+05|750274.991")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230))], Exact("458890.5788784353|4.588906e+05|4.589e+05|458890.5789|458890.57887843531|0x1.c022a50c5823p+18|7883680114901552p-34|458890.5788784353|458891")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230)), f(f64::from_bits(0x411c022a50c58230))], Exact("458890.578878|458890.58|458890.578878435306|458890.5788784353|+4.589e+05|458890.579")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe))], Exact("-424124.4702196269|-4.241245e+05|-4.241e+05|-424124.4702|-424124.47021962691|-0x1.9e2f1e18140fep+18|-7286402916106494p-34|-424124.4702196269|-424124")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe)), f(f64::from_bits(0xc119e2f1e18140fe))], Exact("-424124.470220|-424124.47|-424124.470219626906|-424124.4702196269|-4.241e+05|-424124.470")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e))], Exact("960349.6949851641|9.603497e+05|9.603e+05|960349.695|960349.6949851641|0x1.d4ebb63d5186ep+19|8249341065369710p-33|960349.6949851641|960350")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e)), f(f64::from_bits(0x412d4ebb63d5186e))], Exact("960349.694985|960349.69|960349.694985164097|960349.6949851641|+9.603e+05|960349.695")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197))], Exact("-763868.4434900758|-7.638684e+05|-7.639e+05|-763868.4435|-763868.44349007576|-0x1.74fb8e3112197p+19|-6561579966472599p-33|-763868.4434900758|-763868")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197)), f(f64::from_bits(0xc1274fb8e3112197))], Exact("-763868.443490|-763868.44|-763868.443490075762|-763868.4434900758|-7.639e+05|-763868.443")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc))], Exact("-163754.35642954556|-1.637544e+05|-1.638e+05|-163754.3564|-163754.35642954556|-0x1.3fd52d9f7bbccp+17|-5626556843539404p-35|-163754.35642954556|-163754")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc)), f(f64::from_bits(0xc103fd52d9f7bbcc))], Exact("-163754.356430|-163754.36|-163754.356429545558|-163754.35642954556|-1.638e+05|-163754.356")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc))], Exact("514281.8591304987|5.142819e+05|5.143e+05|514281.8591|514281.85913049872|0x1.f63a76fbfe7ccp+18|8835295063566284p-34|514281.8591304987|514282")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc)), f(f64::from_bits(0x411f63a76fbfe7cc))], Exact("514281.859130|514281.86|514281.859130498720|514281.8591304987|+5.143e+05|514281.859")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6))], Exact("-696030.9306789904|-6.960309e+05|-6.960e+05|-696030.9307|-696030.93067899044|-0x1.53dbddc81f4e6p+19|-5978860168541414p-33|-696030.9306789904|-696031")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6)), f(f64::from_bits(0xc1253dbddc81f4e6))], Exact("-696030.930679|-696030.93|-696030.930678990437|-696030.9306789904|-6.96e+05|-696030.931")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80))], Exact("-22073.799048388842|-2.207380e+04|-2.207e+04|-22073.79905|-22073.799048388842|-0x1.58e73239bda8p+14|-6067599680723584p-38|-22073.799048388842|-22074")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80)), f(f64::from_bits(0xc0d58e73239bda80))], Exact("-22073.799048|-22073.80|-22073.799048388842|-22073.799048388842|-2.207e+04|-22073.799")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77))], Exact("-921585.4859051247|-9.215855e+05|-9.216e+05|-921585.4859|-921585.48590512469|-0x1.c1fe2f8c88e77p+19|-7916359044861559p-33|-921585.4859051247|-921585")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77)), f(f64::from_bits(0xc12c1fe2f8c88e77))], Exact("-921585.485905|-921585.49|-921585.485905124689|-921585.4859051247|-9.216e+05|-921585.486")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478))], Exact("336431.71306879027|3.364317e+05|3.364e+05|336431.7131|336431.71306879027|0x1.488beda2eb478p+18|5779852819870840p-34|336431.71306879027|336432")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478)), f(f64::from_bits(0x411488beda2eb478))], Exact("336431.713069|336431.71|336431.713068790268|336431.71306879027|+3.364e+05|336431.713")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde))], Exact("529141.7324256261|5.291417e+05|5.291e+05|529141.7324|529141.73242562613|0x1.025eb77007ddep+19|4545292871433694p-33|529141.7324256261|529142")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde)), f(f64::from_bits(0x412025eb77007dde))], Exact("529141.732426|529141.73|529141.732425626134|529141.7324256261|+5.291e+05|529141.732")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58))], Exact("146051.88055476802|1.460519e+05|1.461e+05|146051.8806|146051.88055476802|0x1.1d41f0b604c58p+17|5018304404016216p-35|146051.88055476802|146052")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58)), f(f64::from_bits(0x4101d41f0b604c58))], Exact("146051.880555|146051.88|146051.880554768024|146051.88055476802|+1.461e+05|146051.881")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac))], Exact("750955.6236617765|7.509556e+05|7.510e+05|750955.6237|750955.62366177654|0x1.6ead73f5098acp+19|6450659688749228p-33|750955.6236617765|750956")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac)), f(f64::from_bits(0x4126ead73f5098ac))], Exact("750955.623662|750955.62|750955.623661776539|750955.6236617765|+7.51e+05|750955.624")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4))], Exact("-372504.97430380643|-3.725050e+05|-3.725e+05|-372504.9743|-372504.97430380643|-0x1.6bc63e5afe5a4p+18|-6399586728928676p-34|-372504.97430380643|-372505")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4)), f(f64::from_bits(0xc116bc63e5afe5a4))], Exact("-372504.974304|-372504.97|-372504.974303806433|-372504.97430380643|-3.725e+05|-372504.974")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260))], Exact("390590.73254731856|3.905907e+05|3.906e+05|390590.7325|390590.73254731856|0x1.7d6faee20e26p+18|6710297689645664p-34|390590.73254731856|390591")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260)), f(f64::from_bits(0x4117d6faee20e260))], Exact("390590.732547|390590.73|390590.732547318563|390590.73254731856|+3.906e+05|390590.733")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598))], Exact("188739.75421003695|1.887398e+05|1.887e+05|188739.7542|188739.75421003695|0x1.70a1e089f4598p+17|6485048574297496p-35|188739.75421003695|188740")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598)), f(f64::from_bits(0x41070a1e089f4598))], Exact("188739.754210|188739.75|188739.754210036946|188739.75421003695|+1.887e+05|188739.754")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0))], Exact("159790.40856498433|1.597904e+05|1.598e+05|159790.4086|159790.40856498433|0x1.3817344bdb7fp+17|5490356632008688p-35|159790.40856498433|159790")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0)), f(f64::from_bits(0x4103817344bdb7f0))], Exact("159790.408565|159790.41|159790.408564984333|159790.40856498433|+1.598e+05|159790.409")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438))], Exact("-87589.33739717386|-8.758934e+04|-8.759e+04|-87589.3374|-87589.337397173862|-0x1.5625565fa9438p+16|-6019093433586744p-36|-87589.33739717386|-87589")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438)), f(f64::from_bits(0xc0f5625565fa9438))], Exact("-87589.337397|-87589.34|-87589.337397173862|-87589.33739717386|-8.759e+04|-87589.337")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe))], Exact("679935.5610250828|6.799356e+05|6.799e+05|679935.561|679935.56102508283|0x1.4bfff1f3eadfep+19|5840601995980286p-33|679935.5610250828|679936")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe)), f(f64::from_bits(0x4124bfff1f3eadfe))], Exact("679935.561025|679935.56|679935.561025082832|679935.5610250828|+6.799e+05|679935.561")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4))], Exact("889362.1902158749|8.893622e+05|8.894e+05|889362.1902|889362.19021587493|0x1.b24246163f9a4p+19|7639563042552228p-33|889362.1902158749|889362")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4)), f(f64::from_bits(0x412b24246163f9a4))], Exact("889362.190216|889362.19|889362.190215874929|889362.1902158749|+8.894e+05|889362.190")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80))], Exact("-51803.32516071107|-5.180333e+04|-5.180e+04|-51803.32516|-51803.325160711072|-0x1.94b6a67b76f8p+15|-7119794796457856p-37|-51803.32516071107|-51803")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80)), f(f64::from_bits(0xc0e94b6a67b76f80))], Exact("-51803.325161|-51803.33|-51803.325160711072|-51803.32516071107|-5.18e+04|-51803.325")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8))], Exact("328304.41094934894|3.283044e+05|3.283e+05|328304.4109|328304.41094934894|0x1.409c1a4cfe7f8p+18|5640226832639992p-34|328304.41094934894|328304")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8)), f(f64::from_bits(0x411409c1a4cfe7f8))], Exact("328304.410949|328304.41|328304.410949348938|328304.41094934894|+3.283e+05|328304.411")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6))], Exact("60.67|6.067000e+01|6.067e+01|60.67|60.670000000000002|0x1.e55c28f5c28f6p+05|8538543418517750p-47|60.67|61")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6)), f(f64::from_bits(0x404e55c28f5c28f6))], Exact("60.670000|60.67|60.670000000000|60.6700|+60.67|0060.670")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979))], Exact("647.129|6.471290e+02|6.471e+02|647.129|647.12900000000002|0x1.439083126e979p+09|5692206881368441p-43|647.129|647")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979)), f(f64::from_bits(0x408439083126e979))], Exact("647.129000|647.13|647.129000000000|647.129|+647.1|0647.129")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8))], Exact("284.596|2.845960e+02|2.846e+02|284.596|284.596|0x1.1c989374bc6a8p+08|5006665779496616p-44|284.596|285")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8)), f(f64::from_bits(0x4071c989374bc6a8))], Exact("284.596000|284.60|284.596000000000|284.596|+284.6|0284.596")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8))], Exact("887.04|8.870400e+02|8.870e+02|887.04|887.03999999999996|0x1.bb851eb851eb8p+09|7802486354419384p-43|887.04|887")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8)), f(f64::from_bits(0x408bb851eb851eb8))], Exact("887.040000|887.04|887.040000000000|887.040|+887|0887.040")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3))], Exact("22.563|2.256300e+01|2.256e+01|22.563|22.562999999999999|0x1.69020c49ba5e3p+04|6350919899522531p-48|22.563|23")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3)), f(f64::from_bits(0x40369020c49ba5e3))], Exact("22.563000|22.56|22.563000000000|22.5630|+22.56|0022.563")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d))], Exact("355.4641|3.554641e+02|3.555e+02|355.4641|355.46409999999997|0x1.6376cf41f212dp+08|6253390579310893p-44|355.4641|355")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d)), f(f64::from_bits(0x4076376cf41f212d))], Exact("355.464100|355.46|355.464100000000|355.4641|+355.5|0355.464")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000))], Exact("117|1.170000e+02|1.170e+02|117|117|0x1.d4p+06|8233143068786688p-46|117|117")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000)), f(f64::from_bits(0x405d400000000000))], Exact("117.000000|117.00|117.000000000000|117.000|+117|0117.000")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f))], Exact("218.21|2.182100e+02|2.182e+02|218.21|218.21000000000001|0x1.b46b851eb851fp+07|7677581833504031p-45|218.21|218")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f)), f(f64::from_bits(0x406b46b851eb851f))], Exact("218.210000|218.21|218.210000000000|218.210|+218.2|0218.210")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a))], Exact("129.3|1.293000e+02|1.293e+02|129.3|129.30000000000001|0x1.029999999999ap+07|4549339311085978p-45|129.3|129")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a)), f(f64::from_bits(0x406029999999999a))], Exact("129.300000|129.30|129.300000000000|129.300|+129.3|0129.300")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee))], Exact("397.898|3.978980e+02|3.979e+02|397.898|397.89800000000002|0x1.8de5e353f7ceep+08|6999895642701038p-44|397.898|398")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee)), f(f64::from_bits(0x4078de5e353f7cee))], Exact("397.898000|397.90|397.898000000000|397.898|+397.9|0397.898")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77))], Exact("80.581|8.058100e+01|8.058e+01|80.581|80.581000000000003|0x1.4252f1a9fbe77p+06|5670383774580343p-46|80.581|81")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77)), f(f64::from_bits(0x4054252f1a9fbe77))], Exact("80.581000|80.58|80.581000000000|80.5810|+80.58|0080.581")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a))], Exact("401.64|4.016400e+02|4.016e+02|401.64|401.63999999999999|0x1.91a3d70a3d70ap+08|7065725602879242p-44|401.64|402")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a)), f(f64::from_bits(0x40791a3d70a3d70a))], Exact("401.640000|401.64|401.640000000000|401.640|+401.6|0401.640")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50))], Exact("883.384|8.833840e+02|8.834e+02|883.384|883.38400000000001|0x1.b9b126e978d5p+09|7770327838330192p-43|883.384|883")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50)), f(f64::from_bits(0x408b9b126e978d50))], Exact("883.384000|883.38|883.384000000000|883.384|+883.4|0883.384")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4))], Exact("863.98|8.639800e+02|8.640e+02|863.98|863.98000000000002|0x1.affd70a3d70a4p+09|7599648449327268p-43|863.98|864")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4)), f(f64::from_bits(0x408affd70a3d70a4))], Exact("863.980000|863.98|863.980000000000|863.980|+864|0863.980")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333))], Exact("706.4|7.064000e+02|7.064e+02|706.4|706.39999999999998|0x1.6133333333333p+09|6213560110887731p-43|706.4|706")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333)), f(f64::from_bits(0x4086133333333333))], Exact("706.400000|706.40|706.400000000000|706.400|+706.4|0706.400")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810))], Exact("682.723|6.827230e+02|6.827e+02|682.723|682.72299999999996|0x1.555c8b439581p+09|6005295016400912p-43|682.723|683")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810)), f(f64::from_bits(0x408555c8b4395810))], Exact("682.723000|682.72|682.723000000000|682.723|+682.7|0682.723")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a))], Exact("957.7|9.577000e+02|9.577e+02|957.7|957.70000000000005|0x1.ded999999999ap+09|8424018287368602p-43|957.7|958")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a)), f(f64::from_bits(0x408ded999999999a))], Exact("957.700000|957.70|957.700000000000|957.700|+957.7|0957.700")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000))], Exact("83|8.300000e+01|8.300e+01|83|83|0x1.4cp+06|5840605766746112p-46|83|83")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000)), f(f64::from_bits(0x4054c00000000000))], Exact("83.000000|83.00|83.000000000000|83.0000|+83|0083.000")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000))], Exact("232|2.320000e+02|2.320e+02|232|232|0x1.dp+07|8162774324609024p-45|232|232")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000)), f(f64::from_bits(0x406d000000000000))], Exact("232.000000|232.00|232.000000000000|232.000|+232|0232.000")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155))], Exact("12.0631|1.206310e+01|1.206e+01|12.0631|12.0631|0x1.8204ea4a8c155p+03|6790921583116629p-49|12.0631|12")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155)), f(f64::from_bits(0x4028204ea4a8c155))], Exact("12.063100|12.06|12.063100000000|12.0631|+12.06|0012.063")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334))], Exact("0.30000000000000004|3.000000e-01|3.000e-01|0.3|0.30000000000000004|0x1.3333333333334p-02|5404319552844596p-54|0.30000000000000004|0")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334)), f(f64::from_bits(0x3fd3333333333334))], Exact("0.300000|0.30|0.300000000000|0.30000000000000004|+0.3|0000.300")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592))], Exact("1e+22|1.000000e+22|1.000e+22|1e+22|1e+22|0x1.0f0cf064dd592p+73|4768371582031250p+21|1E+22|10000000000000000000000")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592)), f(f64::from_bits(0x4480f0cf064dd592))], Exact("10000000000000000000000.000000|10000000000000000000000.00|10000000000000000000000.000000000000|1.00000e+22|+1e+22|10000000000000000000000.000")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48))], Exact("1e-07|1.000000e-07|1.000e-07|1e-07|9.9999999999999995e-08|0x1.ad7f29abcaf48p-24|7555786372591432p-76|1E-07|0")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48)), f(f64::from_bits(0x3e7ad7f29abcaf48))], Exact("0.000000|0.00|0.000000100000|1.00000e-07|+1e-07|0000.000")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000))], Exact("123456|1.234560e+05|1.235e+05|123456|123456|0x1.e24p+16|8483831719919616p-36|123456|123456")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000)), f(f64::from_bits(0x40fe240000000000))], Exact("123456.000000|123456.00|123456.000000000000|123456.|+1.235e+05|123456.000")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000))], Exact("999999.5|9.999995e+05|1.000e+06|999999.5|999999.5|0x1.e847fp+19|8589930297032704p-33|999999.5|1000000")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000)), f(f64::from_bits(0x412e847f00000000))], Exact("999999.500000|999999.50|999999.500000000000|999999.5|+1e+06|999999.500")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000))], Exact("9.5|9.500000e+00|9.500e+00|9.5|9.5|0x1.3p+03|5348024557502464p-49|9.5|10")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000)), f(f64::from_bits(0x4023000000000000))], Exact("9.500000|9.50|9.500000000000|9.50000|+9.5|0009.500")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a))], Exact("0.05|5.000000e-02|5.000e-02|0.05|0.050000000000000003|0x1.999999999999ap-05|7205759403792794p-57|0.05|0")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fa999999999999a))], Exact("0.050000|0.05|0.050000000000|0.0500000|+0.05|0000.050")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14))], Exact("1.005|1.005000e+00|1.005e+00|1.005|1.0049999999999999|0x1.0147ae147ae14p+00|4526117625507348p-52|1.005|1")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14)), f(f64::from_bits(0x3ff0147ae147ae14))], Exact("1.005000|1.00|1.005000000000|1.00500|+1.005|0001.005")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666))], Exact("2.675|2.675000e+00|2.675e+00|2.675|2.6749999999999998|0x1.5666666666666p+01|6023564501608038p-51|2.675|3")),
        (F, "%f|%.2f|%.12f|%#g|%+.4g|%08.3f", vec![f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666)), f(f64::from_bits(0x4005666666666666))], Exact("2.675000|2.67|2.675000000000|2.67500|+2.675|0002.675")),
        (F, "%v|%e|%.3e|%.10g|%.17g|%x|%b|%G|%.0f", vec![f(f64::from_bits(0x00005c0ab9347ed7)), f(f64::from_bits(0x00005c0ab9347ed7)), f(f64::from_bits(0x00005c0ab9347ed7)), f(f64::from_bits(0x00005c0ab9347ed7)), f(f64::from_bits(0x00005c0ab9347ed7)), f(f64::from_bits(0x00005c0ab9347ed7)), f(f64::from_bits(0x00005c0ab9347ed7)), f(f64::from_bits(0x00005c0ab9347ed7)), f(f64::from_bits(0x00005c0ab9347ed7))], Exact("5e-310|5.000000e-310|5.000e-310|5e-310|4.9999999999999847e-310|0x1.702ae4d1fb5cp-1028|101201126653655p-1074|5E-310|0")),
        (F, "%#v", vec![l(vec![m(vec![("a", l(vec![i(1), Value::Nil]))]), s("x")])], Exact("[]interface {}{map[string]interface {}{\"a\":[]interface {}{1, interface {}(nil)}}, \"x\"}")),
        (F, "%v", vec![l(vec![m(vec![("a", l(vec![i(1), Value::Nil]))]), s("x")])], Exact("[map[a:[1 <nil>]] x]")),
        (F, "%q", vec![m(vec![("k", s("v"))])], Exact("map[\"k\":\"v\"]")),
        (F, "%x", vec![m(vec![("k", s("v"))])], Exact("map[6b:76]")),
        (F, "%5v|", vec![m(vec![("k", i(1))])], Exact("map[    k:    1]|")),
        (F, "%-5v|", vec![l(vec![s("a"), Value::Nil])], Exact("[a     <nil>]|")),
        (F, "%05v|", vec![l(vec![i(1), f(f64::from_bits(0xc004000000000000))])], Exact("[00001 -02.5]|")),
        (F, "%#x", vec![l(vec![i(255)])], Exact("[0xff]")),
        (F, "%#v", vec![f(f64::from_bits(0x8000000000000000))], Exact("-0")),
        (F, "%#v", vec![f(f64::from_bits(0x7ff0000000000000))], Exact("+Inf")),
        (F, "%#v", vec![f(f64::from_bits(0x444b1ae4d6e2ef50))], Exact("1e+21")),
        (F, "%#v", vec![f(f64::from_bits(0x4415af1d78b58c40))], Exact("1e+20")),
        (F, "%x", vec![f(f64::from_bits(0xbff8000000000000))], Exact("-0x1.8p+00")),
        (F, "%#X", vec![f(f64::from_bits(0x4000000000000000))], Exact("0X1.P+01")),
        (F, "%#b", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("4503599627370496p-52")),
        (F, "%.3b", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("4503599627370496p-52")),
        (F, "%+x", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("+0x1p+00")),
        (F, "%10.2x|", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("0x1.00p+00|")),
        (F, "%010.2x|", vec![f(f64::from_bits(0xbff0000000000000))], Exact("-0x1.00p+00|")),
        (F, "%#.0x", vec![f(f64::from_bits(0x3ff0000000000000))], Exact("0x1.p+00")),
        (F, "%#o", vec![i(-8)], Exact("-010")),
        (F, "% x", vec![i(255)], Exact(" ff")),
        (F, "% X", vec![s("abc")], Exact("61 62 63")),
        (F, "% #X", vec![s("abc")], Exact("0X61 0X62 0X63")),
        (F, "%#8.3x|", vec![i(10)], Exact("   0x00a|")),
        (F, "%+.3d", vec![i(5)], Exact("+005")),
        (F, "%x", vec![i(0)], Exact("0")),
        (F, "%#x", vec![i(0)], Exact("0x0")),
        (F, "%.0x|", vec![i(0)], Exact("|")),
        (F, "%#.0o|", vec![i(0)], Exact("|")),
        (F, "%6.2q|", vec![s("abcdef")], Exact("  \"ab\"|")),
        (F, "%-8q|", vec![s("a")], Exact("\"a\"     |")),
        (F, "%08q|", vec![s("a")], Exact("00000\"a\"|")),
        (F, "%#08q|", vec![s("a")], Exact("00000`a`|")),
        (F, "%q", vec![s("")], Exact("\"\"")),
        (F, "%#q", vec![s("")], Exact("``")),
        (F, "%q", vec![s("\u{1}\u{1b}\u{2028}\u{e0001}")], Exact("\"\\x01\\x1b\\u2028\\U000e0001\"")),
        (F, "%c%c%c", vec![i(72), i(105), i(128512)], Exact("Hi😀")),
        (F, "%-4c|", vec![i(26085)], Exact("日   |")),
        (F, "%#U", vec![i(128512)], Exact("U+1F600 '😀'")),
        (F, "%#U", vec![i(133)], Exact("U+0085")),
        (F, "%#.2U", vec![i(65)], Exact("U+0041 'A'")),
        (F, "%+U", vec![i(65)], Exact("U+0041")),
        (F, "%#-12U|", vec![i(26085)], Exact("U+65E5 '日'  |")),
        (F, "%v %[1]v %v", vec![i(1), i(2)], Exact("1 1 2")),
        (F, "%[1]d %[1]x %[1]o", vec![i(10)], Exact("10 a 12")),
        (F, "%[2]d%[1]d", vec![i(1)], Exact("%!d(BADINDEX)1")),
        (F, "%[1]*d", vec![i(3)], Exact("%!d(MISSING)")),
        (F, "%.[1]*d", vec![i(3)], Exact("%!d(MISSING)")),
        (F, "%[1]*.[1]*d|", vec![i(3)], Exact("%!d(MISSING)|")),
        (F, "%*.*f|", vec![i(8), i(2), f(f64::from_bits(0x400921f9f01b866e))], Exact("    3.14|")),
        (F, "%-*.*s|", vec![i(6), i(2), s("abc")], Exact("ab    |")),
        (F, "%!d(string=x)", vec![], Exact("%!!(MISSING)d(string=x)")),
        (F, "%d%", vec![], Exact("%!d(MISSING)%!(NOVERB)")),
        (F, "% ", vec![], Exact("%!(NOVERB)")),
        (F, "%#", vec![], Exact("%!(NOVERB)")),
        (F, "%.5", vec![], Exact("%!(NOVERB)")),
        (F, "%.5", vec![i(1)], Exact("%!(NOVERB)%!(EXTRA int=1)")),
        (F, "%.d", vec![i(5)], Exact("5")),
        (F, "%.f", vec![f(f64::from_bits(0x4004000000000000))], Exact("2")),
        (F, "%5.d|", vec![i(0)], Exact("     |")),
        (F, "%.s|", vec![s("x")], Exact("|")),
        (F, "%.*", vec![i(1)], Exact("%!(NOVERB)")),
        (F, "%*", vec![i(1)], Exact("%!(NOVERB)")),
        (F, "%[2]*[1]d|%d", vec![i(7), i(5)], Exact("    7|5")),
        (F, "%[5]d", vec![], Exact("%!d(BADINDEX)")),
        (F, "%[1]d", vec![], Exact("%!d(BADINDEX)")),
        (F, "%[1]", vec![], Exact("%!(NOVERB)")),
        (F, "%[1]%", vec![i(1)], Exact("%")),
        (F, "%[2]%", vec![i(1)], Exact("%")),
        (F, "%d %[1]", vec![i(1)], Exact("1 %!(NOVERB)")),
        (F, "%[1]d%!", vec![i(1)], Exact("1%!!(MISSING)")),
        (F, "%3[1]d", vec![i(1)], Exact("  1")),
        (F, "%[1]3d", vec![i(1)], Exact("%!d(BADINDEX)")),
        (F, "%s", vec![l(vec![s("a"), l(vec![s("b"), Value::Nil]), m(vec![("c", s("d"))])])], Exact("[a [b <nil>] map[c:d]]")),
        (F, "%d", vec![l(vec![Value::Bool(true), f(f64::from_bits(0x3ff8000000000000))])], Exact("[%!d(bool=true) %!d(float64=1.5)]")),
        (F, "%t", vec![l(vec![Value::Bool(true), i(1)])], Exact("[true %!t(int=1)]")),
        (F, "%s", vec![l(vec![by(&[104, 105]), s("x")])], Exact("[hi x]")),
        (F, "%v", vec![by(&[255, 0])], Exact("[255 0]")),
        (F, "%X", vec![by(&[104, 105])], Exact("6869")),
        (F, "% x", vec![by(&[104, 105])], Exact("68 69")),
        (F, "%c", vec![by(&[104, 105])], Exact("[h i]")),
        (F, "%q", vec![l(vec![by(&[97])])], Exact("[\"a\"]")),
        (F, "%U", vec![by(&[65])], Exact("[U+0041]")),
        (F, "%s", vec![m(vec![("a", by(&[120]))])], Exact("map[a:x]")),
        (F, "%v", vec![l(vec![f(f64::from_bits(0x3ee4f8b588e368f1)), f(f64::from_bits(0x419d6f3454000000)), f(f64::from_bits(0x8000000000000000))])], Exact("[1e-05 1.23456789e+08 -0]")),
        (F, "%.1f", vec![l(vec![f(f64::from_bits(0x3fa999999999999a)), f(f64::from_bits(0x3fc3333333333333)), f(f64::from_bits(0x3fd0000000000000))])], Exact("[0.1 0.1 0.2]")),
        (F, "%e", vec![l(vec![i(1)])], Exact("[%!e(int=1)]")),
        (F, "%T", vec![l(vec![i(1)])], Exact("[]interface {}")),
        (F, "%T", vec![m(vec![("a", i(1))])], Exact("map[string]interface {}")),
        (F, "%p", vec![s("x")], Exact("%!p(string=x)")),
        (F, "%p", vec![Value::Nil], Exact("%!p(<nil>)")),
        (F, "%-+ 8.3e|", vec![f(f64::from_bits(0x40c81cd6c8b43958))], Exact("+1.235e+04|")),
        (F, "% 8.3e|", vec![f(f64::from_bits(0xc0c81cd6c8b43958))], Exact("-1.235e+04|")),
        (F, "%+08.3e|", vec![f(f64::from_bits(0x40c81cd6c8b43958))], Exact("+1.235e+04|")),
        (F, "%8.3E|", vec![f(f64::from_bits(0x01a56e1fc2f8f359))], Exact("1.000E-300|")),
        (F, "%+g", vec![f(f64::from_bits(0x7ff0000000000000))], Exact("+Inf")),
        (F, "% g", vec![f(f64::from_bits(0x7ff0000000000000))], Exact(" Inf")),
        (F, "%-8g|", vec![f(f64::from_bits(0xfff0000000000000))], Exact("-Inf    |")),
        (F, "%08g|", vec![f(f64::from_bits(0xfff0000000000000))], Exact("    -Inf|")),
        (F, "%+08.2f|", vec![f(f64::from_bits(0x7ff8000000000000))], Exact("    +NaN|")),
        (F, "%s", vec![s("日本語")], Exact("日本語")),
        (F, "%.2s", vec![s("日本語")], Exact("日本")),
        (F, "%-6s|", vec![s("日本語")], Exact("日本語   |")),
        (F, "%x", vec![s("日")], Exact("e697a5")),
        (F, "%q", vec![s("日本語")], Exact("\"日本語\"")),
        (F, "%+q", vec![s("日本語")], Exact("\"\\u65e5\\u672c\\u8a9e\"")),
        (F, "%#+q", vec![s("a\u{2028}")], Exact("`a\u{2028}`")),
        (F, "%.1q", vec![s("日本語")], Exact("\"日\"")),
        (F, "%5.1s|", vec![s("日本語")], Exact("    日|")),
        (F, "%d", vec![m(vec![("a", m(vec![("c", i(2))])), ("b", l(vec![i(1)]))])], Exact("map[%!d(string=a):map[%!d(string=c):2] %!d(string=b):[1]]")),
        (F, "%#v", vec![m(vec![("a", m(vec![("c", i(2))])), ("b", l(vec![i(1)]))])], Exact("map[string]interface {}{\"a\":map[string]interface {}{\"c\":2}, \"b\":[]interface {}{1}}")),
        (F, "%#v", vec![l(vec![by(&[])])], Exact("[]interface {}{[]uint8{}}")),
        (F, "%#v", vec![l(vec![l(vec![])])], Exact("[]interface {}{[]interface {}{}}")),
        (F, "%#v", vec![s("\n")], Exact("\"\\n\"")),
        (F, "%#v", vec![l(vec![s("`")])], Exact("[]interface {}{\"`\"}")),
        (F, "%#v", vec![l(vec![Value::Bool(true), f(f64::from_bits(0x3fe0000000000000))])], Exact("[]interface {}{true, 0.5}")),
        // Random formats (flags, widths, precisions, `*`, `[n]`, verbs) over random operands.
        (F, " %  12q|%U|", vec![i(42), s("x`y")], Exact("          '*'|%!U(string=x`y)|")),
        (F, "%3F|", vec![s("x`y")], Exact("%!F(string=x`y)|")),
        (F, "x=%##.8v|", vec![], Exact("x=%!v(MISSING)|")),
        (F, "%-0*v %# v|", vec![i(-2), by(&[195, 169])], Exact("[195 169] %!v(MISSING)|")),
        (F, "|%.7q|", vec![l(vec![by(&[104, 105])])], Exact("|[\"hi\"]|")),
        (F, " %3.4v%4.5E|", vec![f(f64::from_bits(0xc004000000000000)), i(1)], Exact(" -2.5%!E(int=00001)|")),
        (F, "x=% c|", vec![f(f64::from_bits(0x412e848000000000))], Exact("x=%!c(float64= 1e+06)|")),
        (F, "|%10E|", vec![by(&[])], Exact("|[]|")),
        (F, "x=%U|", vec![by(&[255, 0])], Exact("x=[U+00FF U+0000]|")),
        (F, "|%v|", vec![s("a\"b")], Exact("|a\"b|")),
        (F, "%-.2G|", vec![], Exact("%!G(MISSING)|")),
        (F, " %0+.6x|%5w|", vec![f(f64::from_bits(0x7ff8000000000000)), i(-405585133)], Exact(" +NaN|%!w(int=-405585133)|")),
        (F, "|%- U%9.4O|", vec![by(&[255, 0]), l(vec![])], Exact("|[U+00FF U+0000][]|")),
        (F, "%0s|", vec![by(&[])], Exact("|")),
        (F, "%7.0t|%5G|", vec![m(vec![]), Value::Bool(true)], Exact("map[]|%!G(bool= true)|")),
        (F, "%-0.0c|", vec![l(vec![by(&[255, 0]), l(vec![i(550345006)])])], Exact("[[ÿ \u{0}] [�]]|")),
        (F, "%6t% 7o|%.8d|", vec![s("é"), by(&[]), by(&[104, 105])], Exact("%!t(string=     é)[]|[00000104 00000105]|")),
        (F, " % #tx=%-O %.0v|", vec![l(vec![Value::Nil]), f(f64::from_bits(0x400921f9f01b866e)), Value::Nil], Exact(" [<nil>]x=%!O(float64=3.14159) <nil>|")),
        (F, "%#08E %0+g|", vec![s("a\"b"), Value::Nil], Exact("%!E(string=00000a\"b) %!g(<nil>)|")),
        (F, "%0*Xx=%0.1U|%#-t|", vec![i(-4), i(42), s(" sp "), f(f64::from_bits(0x3e7ad7f29abcaf48))], Exact("2A  x=%!U(string= )|%!t(float64=1.00000e-07)|")),
        (F, "|%qx=%3X %w|", vec![s("\u{a0}"), f(f64::from_bits(0x400921f9f01b866e))], Exact("|\"\\u00a0\"x=0X1.921F9F01B866EP+01 %!w(MISSING)|")),
        (F, "x=%%%8g|", vec![f(f64::from_bits(0x7fefffffffffffff)), f(f64::from_bits(0xc004000000000000))], Exact("x=%1.7976931348623157e+308|%!(EXTRA float64=-2.5)")),
        (F, "%10b %-5.0q|", vec![s("x`y"), s("x`y")], Exact("%!b(string=       x`y) \"\"   |")),
        (F, "|%.1w|", vec![l(vec![Value::Bool(true), Value::Nil, Value::Bool(false)])], Exact("|%!w([]interface {}=[true <nil> false])|")),
        (F, "|%0+q|", vec![s("a\"b"), s("é")], Exact("|\"a\\\"b\"|%!(EXTRA string=é)")),
        (F, "%vx=%E|", vec![f(f64::from_bits(0x444b1ae4d6e2ef50)), Value::Nil], Exact("1e+21x=%!E(<nil>)|")),
        (F, "% #1E%.4b %U|", vec![Value::Nil, Value::Nil, l(vec![])], Exact("%!E(<nil>)%!b(<nil>) []|")),
        (F, " %fx=% +4O|", vec![by(&[195, 169]), l(vec![i(1000000), f(f64::from_bits(0x412e848000000000))])], Exact(" [%!f(uint8=195) %!f(uint8=169)]x=[+0o3641100 %!O(float64=+1e+06)]|")),
        (F, "x=%# X|", vec![s(" sp ")], Exact("x=0X20 0X73 0X70 0X20|")),
        (F, "%X|", vec![], Exact("%!X(MISSING)|")),
        (F, "|%2.7f|", vec![by(&[255, 0])], Exact("|[%!f(uint8=0000255) %!f(uint8=0000000)]|")),
        (F, "|%01Gx=% T|", vec![Value::Bool(false), s("a\"b")], Exact("|%!G(bool=false)x=string|")),
        (F, "|%.4Ux=%Xx=%-s|", vec![i(7), l(vec![by(&[195, 169]), s("a\"b")]), by(&[104, 105])], Exact("|U+0007x=[C3A9 612262]x=hi|")),
        (F, "|%0t % 5.1c|", vec![m(vec![]), by(&[195, 169])], Exact("|map[] [    Ã     ©]|")),
        (F, "x=%g|", vec![m(vec![("k0", s("hi")), ("b1", s("%d"))])], Exact("x=map[%!g(string=b1):%!g(string=%d) %!g(string=k0):%!g(string=hi)]|")),
        (F, "x=%  F|", vec![Value::Nil], Exact("x=%!F(<nil>)|")),
        (F, "|% 05.6x|%v|", vec![m(vec![("k0", s("\u{1}")), ("b1", Value::Bool(true))]), f(f64::from_bits(0x412e848000000000))], Exact("|map[62 31:%!x(bool=0true) 6b 30:00001]|1e+06|")),
        (F, "x=%tx=%d|", vec![l(vec![]), f(f64::from_bits(0xfff0000000000000))], Exact("x=[]x=%!d(float64=-Inf)|")),
        (F, " %+.4O%#+2U|", vec![l(vec![f(f64::from_bits(0x0000000000000001))]), m(vec![("b0", by(&[104, 105]))])], Exact(" [%!O(float64=+4.941e-324)]map[%!U(string=b0):[U+0068 'h' U+0069 'i']]|")),
        (F, " %-t|%#0G|", vec![i(36404566), Value::Nil], Exact(" %!t(int=36404566)|%!G(<nil>)|")),
        (F, "|%X|", vec![m(vec![("b0", s("hi"))])], Exact("|map[6230:6869]|")),
        (F, "|% .2*d%-#O %.7t|", vec![i(-4), i(42), i(7), s("\u{1}")], Exact("|%!*(int=-04)d0o052 %!t(int=0000007)|%!(EXTRA string=\u{1})")),
        (F, " %+xx=%+E%E|", vec![f(f64::from_bits(0xc004000000000000)), i(-1), i(65), f(f64::from_bits(0xc004000000000000))], Exact(" -0x1.4p+01x=%!E(int=-1)%!E(int=65)|%!(EXTRA float64=-2.5)")),
        (F, " %6x %-b|", vec![f(f64::from_bits(0xfff0000000000000)), f(f64::from_bits(0x0000000000000000))], Exact("   -Inf 0p-1074|")),
        (F, " %.5sx=% 9w|", vec![Value::Bool(true), f(f64::from_bits(0x3e7ad7f29abcaf48)), l(vec![i(7)])], Exact(" %!s(bool=true)x=%!w(float64=    1e-07)|%!(EXTRA []interface {}=[7])")),
        (F, " %+5.1dx=%U|", vec![f(f64::from_bits(0x3ff0000000000000)), f(f64::from_bits(0x0000000000000000))], Exact(" %!d(float64=   +1)x=%!U(float64=0)|")),
        (F, "x=%8E|", vec![f(f64::from_bits(0x3fb999999999999a))], Exact("x=1.000000E-01|")),
        (F, " %6E|% 3T|%- 5w|", vec![i(-255), i(9223372036854775807), Value::Bool(false)], Exact(" %!E(int=  -255)|int|%!w(bool=false)|")),
        (F, " %# 8fx=%- 12v|", vec![i(0), f(f64::from_bits(0x0000000000000001))], Exact(" %!f(int=       0)x= 5e-324     |")),
        (F, " %.4X|", vec![i(i64::MIN)], Exact(" -8000000000000000|")),
        (F, "|%11e|%.0O|", vec![by(&[]), m(vec![("k0", s(" sp "))])], Exact("|[]|map[%!O(string=):%!O(string=)]|")),
        (F, " %4.3Xx=%+G|", vec![Value::Nil, f(f64::from_bits(0x412e848000000000))], Exact(" %!X(<nil>)x=+1E+06|")),
        (F, "%#-.0*t%12.2t|%v|", vec![i(1), s("tab\there"), i(1000000), by(&[])], Exact("%!*(int=1)t%!t(string=          ta)|1000000|%!(EXTRA []uint8=[])")),
        (F, "x=%-T%0-.3tx=%11.7q|", vec![l(vec![Value::Bool(true)]), f(f64::from_bits(0x7fefffffffffffff)), s("hi")], Exact("x=[]interface {}%!t(float64=1.8e+308)x=       \"hi\"|")),
        (F, " %#2X%-5o|", vec![Value::Bool(true)], Exact(" %!X(bool=true)%!o(MISSING)|")),
        (F, " %011F|", vec![i(-255)], Exact(" %!F(int=-0000000255)|")),
        (F, "%d|%4v%.3b|", vec![m(vec![("a0", i(-255))]), l(vec![s("é")])], Exact("map[%!d(string=a0):-255]|[   é]%!b(MISSING)|")),
        (F, "|% 10e|", vec![i(i64::MIN)], Exact("|%!e(int=-9223372036854775808)|")),
        (F, "%E|", vec![s("é")], Exact("%!E(string=é)|")),
        (F, "x=% 0.8v|", vec![f(f64::from_bits(0xc077770a19554424))], Exact("x=-375.43997|")),
        (F, "%-+11.2xx=%d|", vec![by(&[104, 105]), by(&[255, 0])], Exact("6869       x=[255 0]|")),
        (F, "%#+E %+0c|%- 5.3T|", vec![by(&[255, 0]), s("é"), i(26085)], Exact("[%!E(uint8=+255) %!E(uint8=+0)] %!c(string=é)|int  |")),
        (F, "%--%x=%-0.3o|", vec![Value::Nil], Exact("%x=%!o(<nil>)|")),
        (F, "%+0w|%.7Ox=% w|", vec![s("%d"), s("tab\there"), f(f64::from_bits(0x3fb999999999999a))], Exact("%!w(string=%d)|%!O(string=tab\ther)x=%!w(float64= 0.1)|")),
        (F, "x=%v|", vec![f(f64::from_bits(0x406e650aa3925320)), s("tab\there")], Exact("x=243.1575487001328|%!(EXTRA string=tab\there)")),
        (F, " %+10x %d|%d|", vec![Value::Bool(true), f(f64::from_bits(0x444b1ae4d6e2ef50)), s(" sp ")], Exact(" %!x(bool=      true) %!d(float64=1e+21)|%!d(string= sp )|")),
        (F, " %#00.2E|%v|", vec![s("日本語"), f(f64::from_bits(0x444b1ae4d6e2ef50)), s("x`y")], Exact(" %!E(string=日本)|1e+21|%!(EXTRA string=x`y)")),
        (F, "|%-#v|", vec![f(f64::from_bits(0x400921f9f01b866e))], Exact("|3.14159|")),
        (F, " %0%|", vec![], Exact(" %|")),
        (F, " %.5*o|", vec![i(8), f(f64::from_bits(0x7fefffffffffffff))], Exact(" %!*(int=00008)o|%!(EXTRA float64=1.7976931348623157e+308)")),
        (F, " %8v|", vec![f(f64::from_bits(0xc004000000000000))], Exact("     -2.5|")),
        (F, "|%.5t|", vec![i(-255)], Exact("|%!t(int=-00255)|")),
        (F, "|%7X%.5b|%#*g|", vec![i(65), i(255), i(6), i(9223372036854775807)], Exact("|     4111111111|%!g(int=9223372036854775807)|")),
        (F, "|%-#o|%9sx=%01e|", vec![l(vec![m(vec![])]), s("日本語"), s("tab\there"), s("tab\there")], Exact("|[map[]]|      日本語x=%!e(string=tab\there)|%!(EXTRA string=tab\there)")),
        (F, " %-1w %4T|", vec![s("a\"b"), by(&[104, 105])], Exact(" %!w(string=a\"b) []uint8|")),
        (F, " %.6cx=%.6c %+12s|", vec![by(&[255, 0]), s("tab\there")], Exact(" [ÿ \u{0}]x=%!c(string=tab\the) %!s(MISSING)|")),
        (F, "%#.1Fx=% #E|", vec![Value::Nil, s("a\"b")], Exact("%!F(<nil>)x=%!E(string=a\"b)|")),
        (F, "%-0d|", vec![Value::Nil], Exact("%!d(<nil>)|")),
        (F, "%o|", vec![l(vec![i(65), f(f64::from_bits(0x7ff0000000000000)), i(255)])], Exact("[101 %!o(float64=+Inf) 377]|")),
        (F, "% .3v|", vec![Value::Nil], Exact("<nil>|")),
        (F, "|%-#s|", vec![by(&[104, 105])], Exact("|hi|")),
        (F, "|%U %12wx=%t|", vec![m(vec![]), s("hi"), l(vec![])], Exact("|map[] %!w(string=          hi)x=[]|")),
        (F, "x=%x|", vec![l(vec![Value::Bool(true)])], Exact("x=[%!x(bool=true)]|")),
        (F, "x=%6T %8.8b%#7G|", vec![s("日本語"), s("a\"b"), by(&[])], Exact("x=string %!b(string=     a\"b)[]|")),
        (F, "%09x|", vec![Value::Bool(true)], Exact("%!x(bool=00000true)|")),
        (F, "x=%.4f%3bx=%v|", vec![l(vec![s("a"), s("\u{a0}")]), f(f64::from_bits(0x444b1ae4d6e2ef50)), Value::Nil], Exact("x=[%!f(string=a) %!f(string=\u{a0})]7629394531250000p+17x=<nil>|")),
        (F, "|%-x|", vec![l(vec![by(&[195, 169]), m(vec![("z0", i(i64::MIN))]), f(f64::from_bits(0x7ff8000000000000))])], Exact("|[c3a9 map[7a30:-8000000000000000] NaN]|")),
        (F, "x=%  F|", vec![s("\u{a0}")], Exact("x=%!F(string=\u{a0})|")),
        (F, "x=%.4fx=%.3f|", vec![Value::Bool(true), Value::Bool(true)], Exact("x=%!f(bool=true)x=%!f(bool=true)|")),
        (F, "x=%0.4O|%-0.4d|%%|", vec![s("\u{1}"), s("hi"), m(vec![("k0", s("")), ("z1", s("%d"))])], Exact("x=%!O(string=\u{1})|%!d(string=hi)|%|%!(EXTRA map[string]interface {}=map[k0: z1:%d])")),
        (F, "x=%0e%#9e|", vec![f(f64::from_bits(0xc004000000000000)), s("日本語"), l(vec![])], Exact("x=-2.500000e+00%!e(string=      日本語)|%!(EXTRA []interface {}=[])")),
        (F, "% 0G|", vec![], Exact("%!G(MISSING)|")),
        (F, "% .1g|", vec![], Exact("%!g(MISSING)|")),
        (F, "%.3d|%# U|%.0O|", vec![Value::Nil, Value::Bool(false), s("")], Exact("%!d(<nil>)|%!U(bool=false)|%!O(string=)|")),
        (F, "%12.6f|", vec![s("日本語")], Exact("%!f(string=         日本語)|")),
        (F, "x=%%|", vec![s("x`y")], Exact("x=%|%!(EXTRA string=x`y)")),
        (F, "|%4bx=%3.8x|", vec![f(f64::from_bits(0x400921f9f01b866e)), l(vec![])], Exact("|7074231776675438p-51x=[]|")),
        (F, "|%0#e|", vec![i(1)], Exact("|%!e(int=1)|")),
        (F, " %12.4v|", vec![i(-1)], Exact("        -0001|")),
        (F, "%7b|", vec![f(f64::from_bits(0x3fb999999999999a))], Exact("7205759403792794p-56|")),
        (F, "|%10.7s|", vec![s("hi"), f(f64::from_bits(0x8000000000000000))], Exact("|        hi|%!(EXTRA float64=-0)")),
        (F, "x=%0.8c|", vec![by(&[255, 0]), f(f64::from_bits(0x444b1ae4d6e2ef50))], Exact("x=[ÿ \u{0}]|%!(EXTRA float64=1e+21)")),
        (F, "|%#9o|", vec![Value::Bool(false)], Exact("|%!o(bool=    false)|")),
        (F, " %  X|%0b%8.8%|", vec![l(vec![by(&[255, 0])]), s("%d"), i(65)], Exact(" [FF 00]|%!b(string=%d)%|%!(EXTRA int=65)")),
        (F, " %7d %12.6o % 1O|", vec![i(26085), f(f64::from_bits(0xc004000000000000)), s("%d")], Exact("   26085 %!o(float64=        -2.5) %!O(string=%d)|")),
        (F, "|%+0O|", vec![f(f64::from_bits(0x7fefffffffffffff))], Exact("|%!O(float64=+1.7976931348623157e+308)|")),
        (F, "x=% -%|", vec![f(f64::from_bits(0x444b1ae4d6e2ef50))], Exact("x=%|%!(EXTRA float64=1e+21)")),
        (F, "x=%f|", vec![s("")], Exact("x=%!f(string=)|")),
        (F, " %5.2X|%+-2.4s%9v|", vec![f(f64::from_bits(0xc004000000000000)), s("日本語"), s("a")], Exact(" -0X1.40P+01|日本語        a|")),
        (F, "%11G|%+-0T|", vec![f(f64::from_bits(0x7ff0000000000000)), Value::Nil], Exact("       +Inf|<nil>|")),
        (F, " %6T|", vec![Value::Nil], Exact("  <nil>|")),
        (F, "|%##.0E % #3c|", vec![i(1), s("%d")], Exact("|%!E(int=1) %!c(string= %d)|")),
        (F, " %0+1e|", vec![l(vec![f(f64::from_bits(0x7ff8000000000000)), f(f64::from_bits(0x406ef5aedb3a9768)), s("\u{a0}")])], Exact(" [+NaN +2.476776e+02 %!e(string=\u{a0})]|")),
        (F, " % -.3U %.1b|", vec![Value::Bool(false)], Exact(" %!U(bool=false) %!b(MISSING)|")),
        (F, "x=%.6x|%# e|", vec![m(vec![("a0", by(&[]))]), Value::Bool(false)], Exact("x=map[6130:]|%!e(bool=false)|")),
        (F, " %.5Gx=%+0g|%F|", vec![i(1000000), s("tab\there"), Value::Bool(true)], Exact(" %!G(int=1000000)x=%!g(string=tab\there)|%!F(bool=true)|")),
        (F, "%11.5E|", vec![m(vec![("b0", s("\u{a0}"))]), s("tab\there")], Exact("map[%!E(string=         b0):%!E(string=          \u{a0})]|%!(EXTRA string=tab\there)")),
        (F, " %U%.3g%+11x|", vec![f(f64::from_bits(0x0000000000000000)), i(128512)], Exact(" %!U(float64=0)%!g(int=128512)%!x(MISSING)|")),
        (F, "x=%0T %qx=%g|", vec![s("x`y"), by(&[255, 0]), s("")], Exact("x=string \"\\xff\\x00\"x=%!g(string=)|")),
        (F, "%0g|", vec![], Exact("%!g(MISSING)|")),
        (F, "|%#F|", vec![s("a\"b")], Exact("|%!F(string=a\"b)|")),
        (F, "%.0*fx=%1O|", vec![i(1), Value::Bool(true), Value::Nil], Exact("%!*(int=1)fx=%!O(bool=true)|%!(EXTRA <nil>)")),
        (F, " %Fx=%6.0O|% F|", vec![by(&[104, 105]), Value::Nil, i(26085)], Exact(" [%!F(uint8=104) %!F(uint8=105)]x=%!O(<nil>)|%!F(int= 26085)|")),
        (F, "|%8Gx=%v%s|", vec![Value::Nil, Value::Nil, by(&[195, 169])], Exact("|%!G(<nil>)x=<nil>é|")),
        (F, "|%x|", vec![by(&[255, 0])], Exact("|ff00|")),
        (F, "%10X|%.3X|%T|", vec![s("日本語"), f(f64::from_bits(0x8000000000000000)), s("é")], Exact("E697A5E69CACE8AA9E|-0X0.000P+00|string|")),
        (F, "%.4%|%-#4.3v|", vec![s("tab\there"), s("hi")], Exact("%|\"tab\"|%!(EXTRA string=hi)")),
        (F, "%+-6G%9d|%X|", vec![s(""), Value::Bool(true), by(&[104, 105]), Value::Nil], Exact("%!G(string=      )%!d(bool=     true)|6869|%!(EXTRA <nil>)")),
        (F, "|%3q|", vec![s(" sp ")], Exact("|\" sp \"|")),
        (F, "|%0T|", vec![s("\u{a0}")], Exact("|string|")),
        (F, "%3v|", vec![l(vec![i(-637849902)])], Exact("[-637849902]|")),
        (F, " %7v|", vec![f(f64::from_bits(0x0000000000000000))], Exact("       0|")),
        (F, " %12cx=%0+o|", vec![s("a\"b"), f(f64::from_bits(0x3e7ad7f29abcaf48))], Exact(" %!c(string=         a\"b)x=%!o(float64=+1e-07)|")),
        (F, "|%t|", vec![m(vec![])], Exact("|map[]|")),
        (F, "%#.4t%.3cx=%11s|", vec![by(&[255, 0]), f(f64::from_bits(0x412e848000000000)), s("%d")], Exact("[%!t(uint8=0255) %!t(uint8=0000)]%!c(float64=1e+06)x=         %d|")),
        (F, "|%O|%#s|", vec![l(vec![by(&[104, 105]), i(65), s("x`y")]), m(vec![("a0", by(&[195, 169]))])], Exact("|[[0o150 0o151] 0o101 %!O(string=x`y)]|map[a0:é]|")),
        (F, " %-+1.6%%e%d|", vec![f(f64::from_bits(0xc05bf7e6c72dc0f8)), s("a\"b"), i(i64::MIN)], Exact(" %-1.118735e+02%!d(string=a\"b)|%!(EXTRA int=-9223372036854775808)")),
        (F, "|%-0.0d|", vec![s("a"), l(vec![by(&[195, 169]), f(f64::from_bits(0x412e848000000000))])], Exact("|%!d(string=)|%!(EXTRA []interface {}=[[195 169] 1e+06])")),
        (F, " %+.1qx=%v|", vec![by(&[104, 105]), Value::Nil], Exact(" \"h\"x=<nil>|")),
        (F, "x=%ox=%.4T|", vec![m(vec![("b0", s("tab\there")), ("a1", s("tab\there"))]), i(-1)], Exact("x=map[%!o(string=a1):%!o(string=tab\there) %!o(string=b0):%!o(string=tab\there)]x=int|")),
        (F, "x=%12d%.1U|", vec![s("%d"), f(f64::from_bits(0x7ff8000000000000))], Exact("x=%!d(string=          %d)%!U(float64=NaN)|")),
        (F, " %q|", vec![Value::Nil], Exact(" %!q(<nil>)|")),
        (F, " %O %.5b %#04%|", vec![i(-1), s(""), f(f64::from_bits(0x3e7ad7f29abcaf48)), i(65)], Exact(" -0o1 %!b(string=) %|%!(EXTRA float64=1e-07, int=65)")),
        (F, "|%x|", vec![l(vec![l(vec![s("%d")]), by(&[104, 105]), m(vec![("b0", Value::Nil)])])], Exact("|[[2564] 6869 map[6230:<nil>]]|")),
        (F, "%.5O|", vec![l(vec![s("x`y"), i(1000000)])], Exact("[%!O(string=x`y) 0o3641100]|")),
        (F, "x=%8v%0+5.1d %05.3v|", vec![Value::Nil, i(9223372036854775807), f(f64::from_bits(0x7ff8000000000000)), s("")], Exact("x=   <nil>+9223372036854775807   NaN|%!(EXTRA string=)")),
        (F, " %#vx=%5.3O|", vec![s("\u{a0}"), by(&[])], Exact(" \"\\u00a0\"x=[]|")),
        (F, "% #4E|", vec![i(277952353), f(f64::from_bits(0x7ff8000000000000))], Exact("%!E(int= 277952353)|%!(EXTRA float64=NaN)")),
        (F, "|%##4cx=%#.7v|", vec![Value::Nil], Exact("|%!c(<nil>)x=%!v(MISSING)|")),
        (F, "|%12*e|%T|", vec![i(-8), i(26085), by(&[])], Exact("|%!*(int=          -8)e|int|%!(EXTRA []uint8=[])")),
        (F, "%F %11*v|", vec![i(128512), i(5), Value::Bool(false)], Exact("%!F(int=128512) %!*(int=          5)v|%!(EXTRA bool=false)")),
        (F, "x=% 5F|%6.4sx=% 01b|", vec![l(vec![f(f64::from_bits(0x7ff8000000000000))]), s("é"), Value::Nil], Exact("x=[  NaN]|     éx=%!b(<nil>)|")),
        (F, " %.6v|", vec![f(f64::from_bits(0x8000000000000000))], Exact(" -0|")),
        (F, "%#[3]F%s%+-T|", vec![s("a\"b"), s("hi"), m(vec![])], Exact("map[]%!s(MISSING)%!T(MISSING)|")),
        (F, "%#2%%b|", vec![i(26085), s("")], Exact("%110010111100101|%!(EXTRA string=)")),
        (F, "%- dx=%.*o|", vec![Value::Nil, i(3), i(1000000)], Exact("%!d(<nil>)x=3641100|")),
        (F, " %5G|", vec![s("\u{a0}")], Exact(" %!G(string=    \u{a0})|")),
        (F, "|%[4]O|", vec![by(&[255, 0])], Exact("|%!O(BADINDEX)|")),
        (F, "%#1.3U|", vec![f(f64::from_bits(0x4050ac567aaf87d0))], Exact("%!U(float64=66.7)|")),
        (F, "x=%0+12x|", vec![], Exact("x=%!x(MISSING)|")),
        (F, " %F %x|", vec![f(f64::from_bits(0x7ff0000000000000)), s("日本語")], Exact(" +Inf e697a5e69cace8aa9e|")),
        (F, "x=%1v|%#ex=%- %|", vec![s("x`y"), s("é")], Exact("x=x`y|%!e(string=é)x=%|")),
        (F, "%+9.1[3]T|", vec![i(42)], Exact("%!T(BADINDEX)|")),
        (F, "%x|%#*d %.5q|", vec![by(&[]), i(5), f(f64::from_bits(0x7ff0000000000000)), f(f64::from_bits(0xc004000000000000))], Exact("|%!d(float64= +Inf) %!q(float64=-2.5)|")),
        (F, "% 0x%6s|%-.8s|", vec![i(9223372036854775807), m(vec![])], Exact(" 7fffffffffffffffmap[]|%!s(MISSING)|")),
        (F, "%#0.3v|", vec![s("x`y")], Exact("\"x`y\"|")),
        (F, " %#0[2]s|% G|%-t|", vec![m(vec![("k0", s("%d")), ("b1", s("é"))]), s("%d"), i(65)], Exact(" %d|%!G(int= 65)|%!t(MISSING)|")),
        (F, " %1.3X|", vec![Value::Bool(true)], Exact(" %!X(bool=true)|")),
        (F, " %G|%[3].*T|", vec![i(9223372036854775807), i(-2), by(&[104, 105])], Exact(" %!G(int=9223372036854775807)|%!(BADPREC)%!T(BADINDEX)|")),
        (F, "|%12v %0 vx=%3.0v|", vec![s("é"), s("a"), f(f64::from_bits(0x3e7ad7f29abcaf48)), Value::Nil], Exact("|           é ax=1e-07|%!(EXTRA <nil>)")),
        (F, "%5.0T|", vec![i(904033377), f(f64::from_bits(0x8000000000000000))], Exact("     |%!(EXTRA float64=-0)")),
        (F, "%o|", vec![by(&[195, 169])], Exact("[303 251]|")),
        (F, "%8X|", vec![s("\u{a0}"), Value::Nil], Exact("    C2A0|%!(EXTRA <nil>)")),
        (F, "%0q|", vec![f(f64::from_bits(0x3fb999999999999a))], Exact("%!q(float64=0.1)|")),
        (F, " %*e %12s|", vec![i(5), f(f64::from_bits(0x0000000000000000)), by(&[255, 0])], Exact(" 0.000000e+00           �\u{0}|")),
        (F, "x=%x % 1.0[2]v|", vec![i(128512)], Exact("x=1f600 %!v(BADINDEX)|")),
        (F, "x=%11.5d|", vec![m(vec![("k0", i(i64::MIN))])], Exact("x=map[%!d(string=         k0):-9223372036854775808]|")),
        (F, " % 2f|", vec![s("hi")], Exact(" %!f(string=hi)|")),
        (F, "x=%#.4f|", vec![by(&[195, 169])], Exact("x=[%!f(uint8=0195) %!f(uint8=0169)]|")),
        (F, " %-.6t%#c %+3E|", vec![i(i64::MIN), s("a\"b"), i(i64::MIN)], Exact(" %!t(int=-9223372036854775808)%!c(string=a\"b) %!E(int=-9223372036854775808)|")),
        (F, "% 0v|", vec![s("a\"b")], Exact("a\"b|")),
        (F, "%+v|", vec![s("\u{a0}")], Exact("\u{a0}|")),
        (F, "%.3X%4F|", vec![l(vec![s("é"), m(vec![("z0", i(7))])]), i(1000000)], Exact("[C3A9 map[7A30:007]]%!F(int=1000000)|")),
        (F, "|%.1Xx=%5v|", vec![s("\u{1}"), Value::Nil], Exact("|01x=<nil>|")),
        (F, "%#0.3F|", vec![s("\u{1}")], Exact("%!F(string=\u{1})|")),
        (F, " %++6.0T|%- q %4U|", vec![i(255), m(vec![]), Value::Nil], Exact("       |map[] %!U(<nil>)|")),
        (F, "|% .1*F %.3v|", vec![i(6), by(&[]), m(vec![])], Exact("|%!*(int= 6)F []|%!(EXTRA map[string]interface {}=map[])")),
        (F, "x=%#c%0.5O|% 10s|", vec![i(-1), i(0), s("x`y")], Exact("x=�0o00000|       x`y|")),
        (F, "x=%+x %1.3v|%+.5t|", vec![s("a"), i(i64::MIN), i(i64::MIN)], Exact("x=61 -9223372036854775808|%!t(int=-9223372036854775808)|")),
        (F, "|%v %+9q %+[4]G|", vec![l(vec![s("hi"), by(&[195, 169]), by(&[104, 105])]), Value::Bool(true), i(128512)], Exact("|[hi [195 169] [104 105]] %!q(bool=     true) %!G(BADINDEX)|")),
        (F, "|%.1[0].*x%11.6c|", vec![i(3), l(vec![]), l(vec![s("a\"b"), i(-1)])], Exact("|%!.(BADINDEX)*x          \u{3}|")),
        (F, " %-#3g %0c|", vec![Value::Nil, s("")], Exact(" %!g(<nil>) %!c(string=)|")),
        (F, "x=%--4.0v% +v|", vec![i(i64::MIN), i(26085)], Exact("x=-9223372036854775808 26085|")),
        (F, "%3.0c|", vec![Value::Nil, s("hi")], Exact("%!c(<nil>)|%!(EXTRA string=hi)")),
        (F, "x=%.0Ex=%  o|", vec![Value::Bool(false), f(f64::from_bits(0x7fefffffffffffff))], Exact("x=%!E(bool=false)x=%!o(float64= 1.7976931348623157e+308)|")),
        (F, "%3.2O|% .4X%-+v|", vec![by(&[195, 169]), f(f64::from_bits(0xc075445e57580fb8)), Value::Bool(false)], Exact("[0o303 0o251]|-0X1.5446P+08false|")),
        (F, " %  Fx=%#d|", vec![s("x`y"), s("a")], Exact(" %!F(string=x`y)x=%!d(string=a)|")),
        (F, "|%d %.1*t %5v|", vec![f(f64::from_bits(0x7ff8000000000000)), i(4), m(vec![("z0", i(26085))]), Value::Nil], Exact("|%!d(float64=NaN) %!*(int=4)t map[   z0:26085]|%!(EXTRA <nil>)")),
        (F, " %0O %-011[2].*U|", vec![i(i64::MIN), i(-2), s("a\"b")], Exact(" -0o1000000000000000000000 %!.(int=-2         )*U|")),
        (F, "|%# 8v|", vec![], Exact("|%!v(MISSING)|")),
        (F, "|%0v|%+sx=%s|", vec![s("hi"), f(f64::from_bits(0x0000000000000001)), l(vec![f(f64::from_bits(0x7ff0000000000000))])], Exact("|hi|%!s(float64=+5e-324)x=[%!s(float64=+Inf)]|")),
        (F, " %0#2x|", vec![], Exact(" %!x(MISSING)|")),
        (F, " %0v|", vec![f(f64::from_bits(0xc084bcb06d43fa54))], Exact(" -663.5861459074754|")),
        (F, "%04.6b %ox=%10e|", vec![Value::Bool(false), s("hi"), i(128512)], Exact("%!b(bool=false) %!o(string=hi)x=%!e(int=    128512)|")),
        (F, "%-0.8vx=%+0.2e|", vec![s("\u{a0}"), i(9223372036854775807)], Exact("\u{a0}x=%!e(int=+9223372036854775807)|")),
        (F, " %2ex=%.2v|", vec![i(26085), by(&[255, 0])], Exact(" %!e(int=26085)x=[255 00]|")),
        (F, "x=%4%|%8[1]d|", vec![s("\u{1}"), s("\u{1}")], Exact("x=%|%!d(string=       \u{1})|")),
        (F, "|%fx=%2d|", vec![Value::Bool(false), s("é")], Exact("|%!f(bool=false)x=%!d(string= é)|")),
        (F, "x=%f|%##3q|", vec![Value::Bool(true)], Exact("x=%!f(bool=true)|%!q(MISSING)|")),
        (F, "%g%-U|", vec![f(f64::from_bits(0x40fe240c9fbe76c9)), m(vec![]), Value::Bool(false)], Exact("123456.789map[]|%!(EXTRA bool=false)")),
        (F, "%.8Fx=%#012[1]v|", vec![f(f64::from_bits(0x7ff8000000000000)), Value::Bool(false)], Exact("NaNx=         NaN|")),
        (F, "|% 11[3]v|", vec![by(&[255, 0])], Exact("|%!v(BADINDEX)|")),
        (F, "|%.4e|%vx=% %|", vec![i(-255), s("a\"b"), s("%d")], Exact("|%!e(int=-0255)|a\"bx=%|%!(EXTRA string=%d)")),
        (F, " %b|", vec![Value::Nil], Exact(" %!b(<nil>)|")),
        (F, "|% .3e|", vec![Value::Nil], Exact("|%!e(<nil>)|")),
        (F, "x=%+ 6.3fx=%+11%%2t|", vec![s("日本語"), l(vec![i(0)]), s("日本語")], Exact("x=%!f(string=   日本語)x=%[%!t(int= 0)]|%!(EXTRA string=日本語)")),
        (F, "x=%+8b|%.8o%5.4[4]v|", vec![s("\u{a0}"), s("\u{1}"), f(f64::from_bits(0x0000000000000000))], Exact("x=%!b(string=       \u{a0})|%!o(string=\u{1})%!v(BADINDEX)|")),
        (F, "%10.2*O|%3d|", vec![i(1), Value::Nil, s("\u{1}")], Exact("%!*(int=        01)O|%!d(<nil>)|%!(EXTRA string=\u{1})")),
        (F, " %-5x%++1v %5v|", vec![l(vec![]), s("tab\there"), f(f64::from_bits(0x8000000000000000)), s("\u{1}")], Exact(" []tab\there    -0|%!(EXTRA string=\u{1})")),
        (F, "x=%00wx=%f%  b|", vec![s(" sp "), l(vec![]), m(vec![("k0", Value::Bool(false))])], Exact("x=%!w(string= sp )x=[]map[%!b(string=k0):%!b(bool=false)]|")),
        (F, "%0.8Gx=%.8e|", vec![i(878507081), s("a")], Exact("%!G(int=878507081)x=%!e(string=a)|")),
        (F, "%--2E%5x|", vec![l(vec![l(vec![s("x`y"), s("hi")]), f(f64::from_bits(0x0000000000000001)), m(vec![])]), i(7)], Exact("[[%!E(string=x`y) %!E(string=hi)] 4.940656E-324 map[]]    7|")),
        (F, "x=%12T|%+0*[4]c%0 G|", vec![Value::Nil, i(-6), s("a"), s(" sp ")], Exact("x=       <nil>|%!c(string= sp   )%!G(MISSING)|")),
        (F, "|%3c|", vec![], Exact("|%!c(MISSING)|")),
        (F, " %011.2w%0%%+F|", vec![f(f64::from_bits(0x8000000000000000)), i(128512), Value::Bool(true)], Exact(" %!w(float64=-0000000000)%%!F(int=+128512)|%!(EXTRA bool=true)")),
        (F, "x=%G|", vec![], Exact("x=%!G(MISSING)|")),
        (F, "%.8E %1.6[1]O|", vec![s("x`y"), s("a\"b")], Exact("%!E(string=x`y) %!O(string=x`y)|")),
        (F, "x=%.2X|", vec![], Exact("x=%!X(MISSING)|")),
        (F, "%1.5q|%0c|", vec![Value::Nil, s("x`y")], Exact("%!q(<nil>)|%!c(string=x`y)|")),
        (F, " %+-8d%1d|", vec![s("hi"), i(-990432029)], Exact(" %!d(string=hi      )-990432029|")),
        (F, " %v|", vec![Value::Bool(false)], Exact(" false|")),
        (F, "x=%#.5c|", vec![l(vec![m(vec![])])], Exact("x=[map[]]|")),
        (F, " %0#U%b|", vec![f(f64::from_bits(0x444b1ae4d6e2ef50)), s("a")], Exact(" %!U(float64=1.00000e+21)%!b(string=a)|")),
        (F, " % 0g|", vec![f(f64::from_bits(0x444b1ae4d6e2ef50))], Exact("  1e+21|")),
        (F, " %cx=%.7[1]F|", vec![s("a\"b"), by(&[195, 169])], Exact(" %!c(string=a\"b)x=%!F(string=a\"b)|")),
        (F, "x=%02%|%ex=% .5b|", vec![i(255), s("é")], Exact("x=%|%!e(int=255)x=%!b(string=é)|")),
        (F, " %-.2t%+.5f%v|", vec![i(42), by(&[104, 105]), l(vec![by(&[195, 169])])], Exact(" %!t(int=42)[%!f(uint8=+00104) %!f(uint8=+00105)][[195 169]]|")),
        (F, "%T %.5U|%#0t|", vec![Value::Bool(false), s("é")], Exact("bool %!U(string=é)|%!t(MISSING)|")),
        (F, "x=%.6%x=%#O|", vec![Value::Bool(true), i(1)], Exact("x=%x=%!O(bool=true)|%!(EXTRA int=1)")),
        (F, " %-+O%0*f|", vec![f(f64::from_bits(0x40fe240c9fbe76c9)), i(3), f(f64::from_bits(0x0000000000000000))], Exact(" %!O(float64=+123456.789)0.000000|")),
        (F, " %.7O%#010.1t|", vec![i(65), s("\u{a0}")], Exact(" 0o0000101%!t(string=000000000\u{a0})|")),
        (F, "|%E|", vec![Value::Bool(true)], Exact("|%!E(bool=true)|")),
        (F, " %[3]O %.3e%3e|", vec![i(26085), s("x`y"), f(f64::from_bits(0x403e22b837426f40))], Exact(" %!O(float64=30.135623410910966) %!e(MISSING)%!e(MISSING)|")),
        (F, " %#1[1]v%2.5tx=%7[4]e|", vec![f(f64::from_bits(0xfff0000000000000)), l(vec![f(f64::from_bits(0x3fb999999999999a))]), s("\u{a0}")], Exact(" -Inf[%!t(float64=0.1)]x=%!e(BADINDEX)|")),
        (F, " %#10*t%2[1]w|%+#4v|", vec![i(-2), i(1), i(65), f(f64::from_bits(0x3ff0000000000000))], Exact(" %!*(int=        -2)t%!w(int=-2)|   1|")),
        (F, "x=%#1F %.8t|", vec![s(" sp "), i(255)], Exact("x=%!F(string= sp ) %!t(int=00000255)|")),
        (F, "%-.8[0]X%08[0]v|%# *E|", vec![s("%d"), f(f64::from_bits(0x3e7ad7f29abcaf48)), i(7), by(&[104, 105])], Exact("%!X(BADINDEX)%!v(BADINDEX)|%!(BADWIDTH) 1.000000E-07|")),
        (F, " %1U %.7b %+t|", vec![by(&[]), i(1)], Exact(" [] 0000001 %!t(MISSING)|")),
        (F, "%0-[1]d% 0.*e %2t|", vec![Value::Nil, s("x"), f(f64::from_bits(0x7fefffffffffffff)), by(&[])], Exact("%!d(<nil>)%!(BADPREC) 1.797693e+308 []|")),
        (F, " %4t % -12.8X|", vec![Value::Bool(true), s("hi")], Exact(" true 68 69       |")),
        (F, "x=%e %#6.7[2]t %.8g|", vec![s(""), s(" sp "), Value::Bool(false)], Exact("x=%!e(string=) %!t(string=   sp ) %!g(bool=false)|")),
        (F, "|%o|%0bx=% 4d|", vec![i(-1), i(1), f(f64::from_bits(0x40fe240c9fbe76c9))], Exact("|-1|1x=%!d(float64= 123456.789)|")),
        (F, "|%9E %-#g|%6U|", vec![Value::Nil, f(f64::from_bits(0xfff0000000000000)), s("x`y")], Exact("|%!E(<nil>) -Inf|%!U(string=   x`y)|")),
        (F, "%0 0U|%10*%|", vec![s("\u{a0}"), i(7), f(f64::from_bits(0x8000000000000000))], Exact("%!U(string=\u{a0})|%!*(int=         7)%!|(float64=-0)")),
        (F, "%1x|", vec![f(f64::from_bits(0xfff0000000000000))], Exact("-Inf|")),
        (F, "%0.7[2]v|%06qx=% .0c|", vec![s("a\"b"), f(f64::from_bits(0xc004000000000000)), f(f64::from_bits(0x444b1ae4d6e2ef50))], Exact("-2.5|%!q(float64=01e+21)x=%!c(MISSING)|")),
        (F, "|%0.1*v %0 X|", vec![i(-8), Value::Nil, f(f64::from_bits(0x3fb999999999999a))], Exact("|%!*(int=-8)v %!X(<nil>)|%!(EXTRA float64=0.1)")),
        (F, "|%s|", vec![Value::Nil], Exact("|%!s(<nil>)|")),
        (F, "%##s %%|", vec![s("hi"), i(-255)], Exact("hi %|%!(EXTRA int=-255)")),
        (F, "%+7.0v % 9.7[0]v%#6v|", vec![Value::Nil, l(vec![Value::Nil]), Value::Bool(true)], Exact("  <nil> %!v(BADINDEX)[]interface {}{interface {}(nil)}|")),
        (F, "x=%q%T|", vec![i(128512)], Exact("x='😀'%!T(MISSING)|")),
        (F, "%4.5e|% -12[1]Ex=%+-5f|", vec![f(f64::from_bits(0x8000000000000000)), s("tab\there"), i(26085)], Exact("-0.00000e+00|-0.000000E+00x=%!f(string=tab\there)|")),
        (F, "%-v|", vec![i(7)], Exact("7|")),
        (F, "|%.7wx=%U|%##.1e|", vec![s("x`y"), m(vec![]), i(26085)], Exact("|%!w(string=x`y)x=map[]|%!e(int=26085)|")),
        (F, " %-2Tx=%.6*[1]U|%#-X|", vec![Value::Bool(true), i(5), i(65), by(&[195, 169])], Exact(" boolx=%!*(int=000005)[1]U|0X41|%!(EXTRA []uint8=[195 169])")),
        (F, "|%o|", vec![s(" sp ")], Exact("|%!o(string= sp )|")),
        (F, " %4[1]G|", vec![f(f64::from_bits(0xfff0000000000000))], Exact(" -Inf|")),
        (F, "x=% +g|", vec![f(f64::from_bits(0x7ff0000000000000)), s("日本語")], Exact("x=+Inf|%!(EXTRA string=日本語)")),
        (F, "|%0v|", vec![Value::Bool(true)], Exact("|true|")),
        (F, " %9.0o|", vec![i(i64::MIN)], Exact(" -1000000000000000000000|")),
        (F, "%2.5s|", vec![Value::Nil], Exact("%!s(<nil>)|")),
        (F, "|%-12.3q %# 11f %U|", vec![by(&[195, 169]), s("a"), Value::Bool(true)], Exact("|\"é\"          %!f(string=          a) %!U(bool=true)|")),
        (F, "%*[3]%|%o|", vec![i(-8), Value::Bool(true)], Exact("%|%!o(bool=true)|")),
        (F, " %-#v|", vec![], Exact(" %!v(MISSING)|")),
        (F, "x=%-8.5o|", vec![Value::Nil], Exact("x=%!o(<nil>)|")),
        (F, " %##.1d|", vec![i(1000000)], Exact(" 1000000|")),
        (F, " %-11U|", vec![f(f64::from_bits(0x412e848000000000))], Exact(" %!U(float64=1e+06      )|")),
        (F, " %.5%|%12.1o|", vec![Value::Nil, Value::Nil], Exact(" %|%!o(<nil>)|%!(EXTRA <nil>)")),
        (F, "x=%#O|%.7%|", vec![Value::Bool(false), m(vec![])], Exact("x=%!O(bool=false)|%|%!(EXTRA map[string]interface {}=map[])")),
        (F, " %1E%.0cx=%-#q|", vec![s("%d"), Value::Bool(true), l(vec![s("a\"b")])], Exact(" %!E(string=%d)%!c(bool=true)x=[`a\"b`]|")),
        (F, "|%s|%++.0[4]o|%%|", vec![m(vec![]), s("a\"b"), l(vec![f(f64::from_bits(0x412e848000000000))])], Exact("|map[]|%!o(BADINDEX)|%|")),
        (F, "x=%12.0f|%c|", vec![Value::Nil, s("\u{1}")], Exact("x=%!f(<nil>)|%!c(string=\u{1})|")),
        (F, "|%11o|", vec![], Exact("|%!o(MISSING)|")),
        (F, "|%7.4f|", vec![], Exact("|%!f(MISSING)|")),
        (F, " %.3U|", vec![by(&[195, 169])], Exact(" [U+00C3 U+00A9]|")),
        (F, "|%0+12.3X|%q|", vec![Value::Nil], Exact("|%!X(<nil>)|%!q(MISSING)|")),
        (F, "x=%.1e|", vec![s("日本語")], Exact("x=%!e(string=日)|")),
        (F, " %E%7.5% %.6v|", vec![s(""), f(f64::from_bits(0xc004000000000000)), s("\u{1}")], Exact(" %!E(string=)% -2.5|%!(EXTRA string=\u{1})")),
        (F, "%-.4v|% .6X|", vec![by(&[255, 0]), s("%d")], Exact("[0255 0000]|25 64|")),
        (F, " %-0c|%4[0]E %.5g|", vec![by(&[104, 105]), s("%d"), by(&[])], Exact(" [h i]|%!E(BADINDEX) %!g(string=%d)|")),
        (F, "x=%-t|%-.5%|", vec![f(f64::from_bits(0x0000000000000001)), f(f64::from_bits(0x40fe240c9fbe76c9))], Exact("x=%!t(float64=5e-324)|%|%!(EXTRA float64=123456.789)")),
        (F, "x=%b%G %11x|", vec![f(f64::from_bits(0x3e7ad7f29abcaf48)), i(26085), Value::Bool(true)], Exact("x=7555786372591432p-76%!G(int=26085) %!x(bool=       true)|")),
        (F, " %2v%x|", vec![Value::Nil, i(i64::MIN)], Exact(" <nil>-8000000000000000|")),
        (F, " %+0b|", vec![i(128512)], Exact(" +11111011000000000|")),
        (F, "x=%-#8b|", vec![i(128512)], Exact("x=0b11111011000000000|")),
        (F, "%+05w|%10v %9E|", vec![l(vec![]), i(-255), l(vec![i(26085)])], Exact("%!w([]interface {}=[])|      -255 [%!E(int=    26085)]|")),
        (F, "% 2.2%|", vec![s("x`y")], Exact("%|%!(EXTRA string=x`y)")),
        (F, "%.1b|", vec![i(-255)], Exact("-11111111|")),
        (F, "|%+s %#0Ex=%.4%|", vec![Value::Nil, Value::Bool(true), i(-1), s("")], Exact("|%!s(<nil>) %!E(bool=true)x=%|%!(EXTRA int=-1, string=)")),
        (F, " %+ fx=%*E|", vec![i(7), i(-8), s("é")], Exact(" %!f(int=+7)x=%!E(string=é       )|")),
        ]
    }

    #[test]
    fn matches_helm_output() {
        let cases = helm_cases();
        assert!(cases.len() > 850);
        let mut failures = Vec::new();
        for (kind, format, args, expect) in &cases {
            let got = match kind {
                F => sprintf(format, args),
                P => sprint(args),
                L => sprintln(args),
            };
            let ok = match expect {
                Exact(want) => got == *want,
                Big(len, head, tail) => got.len() == *len && got.starts_with(head) && got.ends_with(tail),
            };
            if !ok {
                let shown: String = got.chars().take(200).collect();
                failures.push(format!(
                    "{kind:?} {format:?} {args:?}: got {shown:?}, want {expect:?}"
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} cases differ:\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n")
        );
    }

    #[test]
    fn sprint_value_is_print_of_one_operand() {
        assert_eq!(sprint_value(&f(1e6)), "1e+06");
        assert_eq!(
            sprint_value(&l(vec![s("a"), Value::Nil, f(0.5)])),
            "[a <nil> 0.5]"
        );
        assert_eq!(
            sprint_value(&m(vec![("b", i(1)), ("a", by(b"hi"))])),
            "map[a:[104 105] b:1]"
        );
        assert_eq!(try_sprint_value(&i(-3)), Ok("-3".to_string()));
    }

    #[test]
    fn format_float_mirrors_strconv() {
        // strconv.FormatFloat(x, fmt, prec, 64), as printed by Helm through printf where a verb reaches it.
        assert_eq!(format_float(1e6, 'g', -1), "1e+06");
        assert_eq!(format_float(100000.0, 'g', -1), "100000");
        assert_eq!(format_float(1.5, 'f', -1), "1.5");
        assert_eq!(format_float(1e21, 'f', -1), "1000000000000000000000");
        assert_eq!(format_float(0.000_001_5, 'f', -1), "0.0000015");
        assert_eq!(format_float(123.456, 'e', -1), "1.23456e+02");
        assert_eq!(format_float(-0.0, 'g', -1), "-0");
        assert_eq!(format_float(2.5, 'f', 0), "2");
        assert_eq!(format_float(1.0, 'x', -1), "0x1p+00");
        assert_eq!(format_float(1.0, 'b', -1), "4503599627370496p-52");
        assert_eq!(format_float(f64::NAN, 'f', 2), "NaN");
        assert_eq!(format_float(1.0, 'z', 2), "%z");
        assert_eq!(format_float(1.0, 'f', i32::MAX).len(), MAX_TEXT_BYTES + 2);
    }

    #[test]
    fn quoting_follows_go() {
        assert_eq!(
            quote("a\"b\u{7}\u{85}é\u{1F600}"),
            "\"a\\\"b\\a\\u0085é\u{1F600}\""
        );
        assert_eq!(quote_to_ascii("é\u{1F600}"), "\"\\u00e9\\U0001f600\"");
        assert!(is_print(0x20) && is_print(0xe9) && is_print(0x1F600) && is_print(0x65e5));
        assert!(
            !is_print(0x7f) && !is_print(0x85) && !is_print(0xa0) && !is_print(0x200b) && !is_print(0xfeff)
        );
        assert!(!is_print(0xD800) && !is_print(0x110000) && !is_print(0xE0000));
        assert_eq!(PRINTABLE.len(), 711);
        assert!(PRINTABLE.windows(2).all(|pair| pair[0].1 + 1 < pair[1].0));
    }

    #[test]
    fn huge_results_are_refused_not_allocated() {
        let wide = "%9999999d".repeat(5);
        let err = try_sprintf(&wide, &[i(1), i(2), i(3), i(4), i(5)]).expect_err("50 MB");
        assert!(err.to_string().contains("exceeds the limit"), "{err}");
        assert!(sprintf(&wide, &[i(1), i(2), i(3), i(4), i(5)]).len() <= MAX_TEXT_BYTES);
        let items: Vec<Value> = (0..1000).map(i).collect();
        assert!(try_sprintf("%9999999d", &[l(items.clone())]).is_err());
        assert!(try_sprintf("%.9999999f", &[l(items.iter().map(|_| f(1.5)).collect())]).is_err());
        assert!(
            try_sprintf(
                "%.9999999x|%.9999999e|%.9999999f|%9999999.9999999g",
                &[f(1.0), f(2.0), f(3.0), f(4.0)]
            )
            .is_err()
        );
        assert_eq!(
            try_sprintf("%.9999999d", &[i(7)]).map(|text| text.len()),
            Ok(9_999_999)
        );
        // Go's bound on `*`: more than 10^6 is BADWIDTH/BADPREC.
        assert_eq!(sprintf("%*d", &[i(1_000_001), i(1)]), "%!(BADWIDTH)1");
        assert_eq!(sprintf("%.*d", &[i(-1_000_001), i(1)]), "%!(BADPREC)1");
        assert_eq!(sprintf("%*d", &[i(i64::MIN), i(1)]), "%!(BADWIDTH)1");
        assert_eq!(sprintf("%*d|", &[i(-1_000_000), i(1)]).len(), 1_000_001);
    }

    #[test]
    fn a_map_that_contains_itself_prints_to_the_depth_bound() {
        let _scope = super::super::value::MapScope::open();
        let map = Map::new();
        map.insert("a", Value::Map(map.clone()));
        map.insert("b", i(1));
        let text = sprint_value(&Value::Map(map.clone()));
        assert!(text.starts_with("map[a:map[a:map[a:"), "{}", &text[..40]);
        assert_eq!(text.matches("map[").count(), MAX_VALUE_DEPTH + 1);
        assert!(text.contains("map[a:... b:1]"));
        // Two self-references: the text doubles per level and stops at the size bound.
        map.insert("c", Value::Map(map.clone()));
        assert!(try_sprintf("%v", &[Value::Map(map.clone())]).is_err());
    }

    struct Version;

    impl super::super::value::Object for Version {
        fn type_name(&self) -> &str {
            "*common.KubeVersion"
        }
        fn field(&self, _name: &str) -> Option<Value> {
            None
        }
        fn call(&self, _name: &str, _args: &[Value]) -> Option<Result<Value, String>> {
            None
        }
        fn display(&self) -> String {
            "v1.20.0".into()
        }
        fn to_value(&self) -> Value {
            Value::Nil
        }
    }

    #[test]
    fn objects_print_through_their_string_method() {
        let object = Value::Object(Rc::new(Version));
        assert_eq!(sprint_value(&object), "v1.20.0");
        assert_eq!(sprint(&[object.clone(), i(1)]), "v1.20.0 1");
        assert_eq!(
            sprintf(
                "%s|%10v|%q|%x|%T",
                &[
                    object.clone(),
                    object.clone(),
                    object.clone(),
                    object.clone(),
                    object.clone()
                ]
            ),
            "v1.20.0|   v1.20.0|\"v1.20.0\"|76312e32302e30|*common.KubeVersion"
        );
        assert_eq!(sprintf("%v", &[l(vec![object.clone()])]), "[v1.20.0]");
        assert_eq!(
            sprintf("%d", std::slice::from_ref(&object)),
            "%!d(*common.KubeVersion=v1.20.0)"
        );
        assert_eq!(sprintf("x", &[object]), "x%!(EXTRA *common.KubeVersion=v1.20.0)");
    }

    #[test]
    fn no_panics_on_odd_formats() {
        let args = [
            i(i64::MIN),
            f(-0.0),
            s("é"),
            Value::Nil,
            by(&[0xff, 0xe6, 0x97]),
            l(vec![]),
            m(vec![]),
        ];
        for format in [
            "%",
            "%%",
            "%[",
            "%[]",
            "%[9]",
            "%[-1]d",
            "%.[",
            "%*",
            "%.*",
            "%-+# 0",
            "%#08.3x",
            "%#U",
            "%+q",
            "%#q",
            "%#v",
            "%9999999999999999999999d",
            "%[1]*.[2]*[3]d",
            "%é",
            "%\u{fffd}",
            "%.0T",
            "%U",
            "%c",
            "%q",
            "%x",
            "%X",
            "%o",
            "%O",
            "%b",
            "%e",
            "%E",
            "%f",
            "%F",
            "%g",
            "%G",
            "%s",
            "%t",
            "%p",
            "%w",
            "% x",
            "%#x",
        ] {
            let text = sprintf(format, &args);
            assert!(!text.is_empty(), "{format}");
        }
        assert_eq!(sprintf("%q", &[by(&[0xff, 0xe6, 0x97])]), "\"\\xff\\xe6\\x97\"");
        assert_eq!(
            sprintf("%c|%q|%U", &[i(i64::MIN), i(i64::MAX), i(i64::MIN)]),
            "\u{fffd}|'\u{fffd}'|U+8000000000000000"
        );
    }
}
