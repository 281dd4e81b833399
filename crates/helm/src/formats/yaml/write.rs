//! The YAML writer: `sigs.k8s.io/yaml.Marshal` (JSON first, then go-yaml v2's encoder and emitter) and go-yaml v3's
//! encoder with indented sequences (Helm's `toYamlPretty`).
//!
//! The emitter follows libyaml's (as ported to Go) decisions: scalar analysis (which styles a text allows), style
//! selection, 2-space indentation, line folding at 80 columns, block scalar hints, and go-yaml's "natural" key order.

use super::YamlError;
use super::resolve::{Resolved, is_base60_float, resolve};
use crate::formats::json::{format_g, json_float};
use crate::gotemplate::Value;
use crate::gotemplate::value::MAX_VALUE_DEPTH;

/// A document ready for the emitter.
#[derive(Debug, Clone)]
enum Node {
    /// A scalar the encoder writes plain (null, booleans, numbers).
    Plain(String),
    /// A string (the encoder picks its style).
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping with string keys, in emitting order.
    Map(Vec<(String, Node)>),
}

/// Which encoder's rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `sigs.k8s.io/yaml.Marshal`: JSON, then go-yaml v2.
    SigsV2,
    /// go-yaml v3's encoder on the Go values, `SetIndent(2)` (Helm's `toYamlPretty`).
    PrettyV3,
}

/// Writes `value` as YAML text ending in a newline.
pub(crate) fn marshal(value: &Value, flavor: Flavor) -> Result<String, YamlError> {
    let mut budget = crate::gotemplate::funcs::MAX_TEXT_BYTES;
    let node = to_node(value, flavor, 0, &mut budget)?;
    let mut emitter = Emitter::new(flavor);
    emitter.node(&node, Context::ROOT);
    // Document end: go to the start of a line.
    emitter.indent = -1;
    emitter.write_indent();
    Ok(emitter.out)
}

/// `budget`: bytes the document may still take (a value that shares one map many times over can be small in memory
/// and enormous as text).
fn to_node(value: &Value, flavor: Flavor, depth: usize, budget: &mut usize) -> Result<Node, YamlError> {
    let cost = 8 + match value {
        Value::String(text) => text.len(),
        Value::Bytes(bytes) => bytes.len() * 4 / 3,
        _ => 0,
    };
    if cost > *budget {
        return Err(YamlError(format!(
            "yaml: the document exceeds the limit of {} bytes",
            crate::gotemplate::funcs::MAX_TEXT_BYTES
        )));
    }
    *budget -= cost;
    if depth > MAX_VALUE_DEPTH {
        return Err(YamlError(format!(
            "error marshaling into JSON: json: unsupported value: encountered a cycle via {}",
            value.type_name()
        )));
    }
    Ok(match value {
        Value::Nil => Node::Plain("null".into()),
        Value::Bool(flag) => Node::Plain(flag.to_string()),
        Value::Int(int) => Node::Plain(int.to_string()),
        Value::Float(float) => Node::Plain(match flavor {
            SIGS => sigs_number(
                &json_float(*float)
                    .map_err(|err| YamlError(format!("error marshaling into JSON: {}", err.0)))?,
            ),
            Flavor::PrettyV3 => v3_float(*float),
        }),
        Value::String(text) => Node::Str(match flavor {
            SIGS => through_json(text)?,
            Flavor::PrettyV3 => text.to_string(),
        }),
        Value::Bytes(bytes) => {
            use base64::Engine as _;
            Node::Str(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        Value::List(items) => Node::Seq(
            items
                .iter()
                .map(|item| crate::formats::deeper(|| to_node(item, flavor, depth + 1, budget)))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(map) => {
            let mut entries = Vec::new();
            for (key, item) in map.entries() {
                let key = match flavor {
                    SIGS => through_json(&key)?,
                    Flavor::PrettyV3 => key,
                };
                *budget = budget.saturating_sub(key.len());
                entries.push((
                    key,
                    crate::formats::deeper(|| to_node(&item, flavor, depth + 1, budget))?,
                ));
            }
            sort_keys(&mut entries, flavor);
            Node::Map(entries)
        }
        Value::Object(object) => to_node(&object.to_value(), flavor, depth + 1, budget)?,
    })
}

const SIGS: Flavor = Flavor::SigsV2;

/// A JSON number as go-yaml v2 reads it back and writes it again: integers stay as they are (an `int64` or a
/// `uint64`), anything else is a float written with `FormatFloat(f, 'g', -1, 64)`.
fn sigs_number(json: &str) -> String {
    match resolve(json) {
        Resolved::Int(int) => int.to_string(),
        Resolved::Uint(uint) => uint.to_string(),
        Resolved::Float(float) => yaml_float(float),
        _ => json.to_string(),
    }
}

/// go-yaml's float text.
fn yaml_float(float: f64) -> String {
    match format_g(float).as_str() {
        "+Inf" => ".inf".into(),
        "-Inf" => "-.inf".into(),
        "NaN" => ".nan".into(),
        other => other.into(),
    }
}

/// go-yaml v3 writes a `float64` with `FormatFloat(f, 'g', -1, 64)` too.
fn v3_float(float: f64) -> String {
    yaml_float(float)
}

/// What a string becomes after `json.Marshal` and go-yaml's reading of that JSON: characters YAML forbids make it
/// fail, and NEL (a line break in YAML 1.1, written raw by JSON) folds as a line break in a double-quoted scalar.
pub(crate) fn through_json(text: &str) -> Result<String, YamlError> {
    if text.chars().any(|c| {
        let c = c as u32;
        c == 0x7F || (0x80..=0x9F).contains(&c) && c != 0x85 || c == 0xFFFE || c == 0xFFFF
    }) {
        return Err(YamlError("yaml: control characters are not allowed".into()));
    }
    Ok(fold_nel(text))
}

/// go-yaml v2 reads NEL (U+0085) as a line break: in a flow scalar, a run of spaces and NELs folds to one space
/// (one NEL) or to one newline fewer than the NELs.
pub(crate) fn fold_nel(text: &str) -> String {
    if !text.contains('\u{85}') {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        // A run of spaces and NELs that holds at least one NEL folds.
        let start = i;
        let mut end = i;
        let mut breaks = 0;
        while end < chars.len() && matches!(chars[end], ' ' | '\u{85}') {
            if chars[end] == '\u{85}' {
                breaks += 1;
            }
            end += 1;
        }
        if end > start && breaks > 0 {
            // Spaces after the last NEL start the next line's content... go-yaml skips them too.
            if breaks == 1 {
                out.push(' ');
            } else {
                for _ in 1..breaks {
                    out.push('\n');
                }
            }
            i = end;
        } else if end > start {
            out.extend(&chars[start..end]);
            i = end;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// go-yaml's key order (`keyList.Less`): letters before other characters is not it — digit runs compare as
/// numbers, letters compare as runes, a letter sorts after a non-letter.
/// go-yaml v3 differs in one point: after equal digits, a letter sorts before a non-letter (`a0b` < `a00`).
fn key_less(a: &str, b: &str, flavor: Flavor) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let is_letter = |c: char| c.is_alphabetic();
    let is_digit = |c: char| c.is_ascii_digit();
    let mut i = 0;
    let mut digits = false;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            digits = is_digit(ar[i]);
            i += 1;
            continue;
        }
        let al = is_letter(ar[i]);
        let bl = is_letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return if digits && flavor == Flavor::PrettyV3 {
                al
            } else {
                bl
            };
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// Sorts with [`key_less`] (a merge sort: it never panics, whatever the order's quirks).
fn sort_keys(entries: &mut Vec<(String, Node)>, flavor: Flavor) {
    if entries.len() < 2 {
        return;
    }
    let mut items = std::mem::take(entries);
    let right = items.split_off(items.len() / 2);
    let mut left = items;
    let mut right = right;
    sort_keys(&mut left, flavor);
    sort_keys(&mut right, flavor);
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_right = match (left.peek(), right.peek()) {
            (Some(l), Some(r)) => key_less(&r.0, &l.0, flavor),
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (None, None) => break,
        };
        let next = if take_right { right.next() } else { left.next() };
        if let Some(next) = next {
            entries.push(next);
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Context {
    mapping: bool,
    simple_key: bool,
}

impl Context {
    const ROOT: Context = Context {
        mapping: false,
        simple_key: false,
    };
    const SEQUENCE: Context = Context::ROOT;
    const VALUE: Context = Context {
        mapping: true,
        simple_key: false,
    };
    const KEY: Context = Context {
        mapping: true,
        simple_key: true,
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// What a scalar's text allows (`yaml_emitter_analyze_scalar`).
#[derive(Debug, Clone, Copy)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_printable(c: char) -> bool {
    let c = c as u32;
    c == 0x0A
        || (0x20..=0x7E).contains(&c)
        || (0xA0..=0xD7FF).contains(&c)
        || (0xE000..=0xFFFD).contains(&c) && c != 0xFEFF
}

fn analyze(value: &str, flavor: Flavor) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    // ASCII text (nearly all) is walked by bytes, which skips UTF-8 decoding; the analysis is the same.
    if value.is_ascii() {
        analyze_chars(value, value.bytes().map(char::from), flavor)
    } else {
        analyze_chars(value, value.chars(), flavor)
    }
}

fn analyze_chars(value: &str, chars: impl Iterator<Item = char>, flavor: Flavor) -> Analysis {
    let mut chars = chars.peekable();
    let mut block_indicators = false;
    let mut line_breaks = false;
    let mut special_characters = false;
    let mut tab_characters = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut previous_space = false;
    let mut previous_break = false;
    if value.starts_with("---") || value.starts_with("...") {
        block_indicators = true;
    }
    let mut preceded_by_whitespace = true;
    let mut first = true;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let last = next.is_none();
        let followed_by_whitespace = next.is_none_or(|n| n == ' ' || n == '\t' || is_break(n));
        if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@'
                | '`' => {
                    block_indicators = true;
                }
                '?' | ':' if followed_by_whitespace => block_indicators = true,
                '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if c == '\t' && flavor == Flavor::PrettyV3 {
            // go-yaml v3 tells tabs apart from other special characters: they only rule out plain and single quotes.
            tab_characters = true;
        } else if !is_printable(c) {
            special_characters = true;
        }
        if c == ' ' {
            if first {
                leading_space = true;
            }
            if last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if first {
                leading_break = true;
            }
            if last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = c == ' ' || c == '\t' || is_break(c) || c == '\0';
        first = false;
    }
    let mut analysis = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        analysis.block_plain_allowed = false;
    }
    if trailing_space {
        analysis.block_allowed = false;
    }
    if break_space {
        analysis.block_plain_allowed = false;
        analysis.single_quoted_allowed = false;
    }
    let tabs_matter = flavor == Flavor::PrettyV3 && tab_characters;
    if space_break || special_characters || tabs_matter {
        analysis.block_plain_allowed = false;
        analysis.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        analysis.block_allowed = false;
    }
    if line_breaks {
        analysis.block_plain_allowed = false;
    }
    if block_indicators {
        analysis.block_plain_allowed = false;
    }
    analysis
}

struct Emitter {
    out: String,
    flavor: Flavor,
    column: usize,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
}

const BEST_INDENT: i64 = 2;
const BEST_WIDTH: usize = 80;

impl Emitter {
    fn new(flavor: Flavor) -> Self {
        Self {
            out: String::new(),
            flavor,
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
        }
    }

    /// Where lines fold: go-yaml v2 folds at 80 columns, v3 (as Helm's `toYamlPretty` uses it) never folds.
    fn best_width(&self) -> usize {
        match self.flavor {
            Flavor::SigsV2 => BEST_WIDTH,
            Flavor::PrettyV3 => usize::MAX,
        }
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
        self.indention = true;
    }

    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
            self.indention = true;
        }
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn node(&mut self, node: &Node, context: Context) {
        match node {
            Node::Plain(text) => self.scalar(text, Style::Plain, context),
            Node::Str(text) => {
                let can_use_plain = match resolve(text) {
                    Resolved::Str => !is_base60_float(text),
                    // go-yaml v2 reads `<<` as a string when it is a value.
                    _ => false,
                } && !(self.flavor == Flavor::PrettyV3 && is_old_bool(text));
                let can_use_plain = can_use_plain && self.v3_plain_ok(text);
                let style = if text.contains('\n') {
                    Style::Literal
                } else if can_use_plain {
                    Style::Plain
                } else {
                    Style::Double
                };
                self.scalar(text, style, context);
            }
            Node::Seq(items) if items.is_empty() => self.write_flow_empty("[", "]"),
            Node::Map(entries) if entries.is_empty() => self.write_flow_empty("{", "}"),
            Node::Seq(items) => {
                let indentless = self.flavor == Flavor::SigsV2 && context.mapping && !self.indention;
                self.increase_indent(false, indentless);
                for item in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    crate::formats::deeper(|| self.node(item, Context::SEQUENCE));
                }
                self.pop_indent();
            }
            Node::Map(entries) => {
                self.increase_indent(false, false);
                for (key, value) in entries {
                    self.write_indent();
                    let analysis = analyze(key, self.flavor);
                    if key.len() <= 128 && !analysis.multiline {
                        self.node(&Node::Str(key.clone()), Context::KEY);
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.node(&Node::Str(key.clone()), Context::VALUE);
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    crate::formats::deeper(|| self.node(value, Context::VALUE));
                }
                self.pop_indent();
            }
        }
    }

    /// go-yaml v3 resolves with YAML 1.2 rules but still quotes what v2 would read differently; strings v3 itself
    /// resolves as non-strings are covered by `resolve` already for the common cases.
    fn v3_plain_ok(&self, _text: &str) -> bool {
        true
    }

    fn write_flow_empty(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn scalar(&mut self, text: &str, requested: Style, context: Context) {
        let analysis = analyze(text, self.flavor);
        let mut style = requested;
        if context.simple_key && analysis.multiline {
            style = Style::Double;
        }
        if style == Style::Plain {
            if !analysis.block_plain_allowed {
                style = Style::Single;
            }
            if text.is_empty() && context.simple_key {
                style = Style::Single;
            }
        }
        if style == Style::Single && !analysis.single_quoted_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!analysis.block_allowed || context.simple_key) {
            style = Style::Double;
        }
        self.increase_indent(true, false);
        let allow_breaks = !context.simple_key;
        match style {
            Style::Plain => self.write_plain(text, allow_breaks),
            Style::Single => self.write_single(text, allow_breaks),
            Style::Double => self.write_double(text, allow_breaks),
            Style::Literal => self.write_literal(text),
        }
        self.pop_indent();
    }

    fn write_plain(&mut self, text: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        if !text.contains(' ') {
            // Without spaces there is nowhere to break: the text goes out as it is (most keys and values).
            self.out.push_str(text);
            self.column += text.chars().count();
            self.whitespace = false;
            self.indention = false;
            return;
        }
        let mut spaces = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c == ' ' {
                if allow_breaks && !spaces && self.column > self.best_width() && chars.peek() != Some(&' ') {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single(&mut self, text: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let len = text.len();
        let mut byte_pos = 0;
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width()
                    && byte_pos > 0
                    && byte_pos < len - 1
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
            byte_pos += c.len_utf8();
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double(&mut self, text: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let len = text.len();
        let mut byte_pos = 0;
        let mut spaces = false;
        // go-yaml's `is_bom` looks at the start of the text, not at the current character: once a text starts with
        // a BOM, every character is escaped.
        let starts_with_bom = text.starts_with('\u{FEFF}');
        let ordinary = |c: char| is_printable(c) && !is_break(c) && !matches!(c, '"' | '\\' | ' ');
        // The text is walked in place (`byte_pos` is always at a character boundary).
        let char_at = |at: usize| text.get(at..).and_then(|rest| rest.chars().next());
        while let Some(c) = char_at(byte_pos) {
            if !starts_with_bom && ordinary(c) {
                // A run of characters written as they are.
                let start = byte_pos;
                let mut count = 0;
                for c in text.get(byte_pos..).unwrap_or_default().chars() {
                    if !ordinary(c) {
                        break;
                    }
                    byte_pos += c.len_utf8();
                    count += 1;
                }
                self.out.push_str(&text[start..byte_pos]);
                self.column += count;
                spaces = false;
                continue;
            }
            if starts_with_bom || !is_printable(c) || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{A0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    other => {
                        let v = other as u32;
                        let (prefix, width) = if v <= 0xFF {
                            ('x', 2)
                        } else if v <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(prefix);
                        for k in (0..width).rev() {
                            let digit = (v >> (k * 4)) & 0xF;
                            self.put(char::from_digit(digit, 16).unwrap_or('0').to_ascii_uppercase());
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width()
                    && byte_pos > 0
                    && byte_pos < len - 1
                {
                    self.write_indent();
                    if char_at(byte_pos + 1) == Some(' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
            byte_pos += c.len_utf8();
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, text: &str) {
        self.write_indicator("|", true, false, false);
        if text.chars().next().is_some_and(|c| c == ' ' || is_break(c)) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        let mut from_end = text.chars().rev();
        let chomp = match (from_end.next(), from_end.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(before_last)) if is_break(before_last) => Some("+"),
            (Some(_), Some(_)) => None,
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
                rest = &rest[c.len_utf8()..];
            } else {
                if breaks {
                    self.write_indent();
                    breaks = false;
                }
                // The rest of the line goes out as it is. Its end is found by bytes: `\r` and `\n` are ASCII, and
                // the other breaks start with bytes 0xC2 (U+0085) or 0xE2 (U+2028, U+2029), checked as characters.
                let end = rest
                    .bytes()
                    .enumerate()
                    .find(|&(at, b)| match b {
                        b'\r' | b'\n' => true,
                        0xC2 | 0xE2 => rest[at..].chars().next().is_some_and(is_break),
                        _ => false,
                    })
                    .map_or(rest.len(), |(at, _)| at);
                let line = &rest[..end];
                self.out.push_str(line);
                self.column += if line.is_ascii() {
                    line.len()
                } else {
                    line.chars().count()
                };
                self.indention = false;
                rest = &rest[end..];
            }
        }
    }
}

/// go-yaml v3 quotes YAML 1.1 booleans it would itself read as strings (`isOldBool`).
fn is_old_bool(text: &str) -> bool {
    matches!(
        text,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "on"
            | "On"
            | "ON"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "off"
            | "Off"
            | "OFF"
    )
}
