//! The lexer of Go's `text/template`: splits a template's text into text runs and action tokens, applying the
//! `{{-`/`-}}` trim markers and skipping `{{/* */}}` comments, with Go's token kinds and error messages.
//!
//! The whole text is lexed up front into a vector (no goroutine, no state machine across calls); a lexing error
//! becomes the last token, as Go's `itemError` does, so the parser reports it where Go would.

pub(crate) use super::fmt::quote as go_quote;

/// Token kinds (Go's `itemType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    Error,
    Bool,
    Char,
    CharConstant,
    /// A complex constant written as a sum (`1+2i`).
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl Tok {
    fn is_keyword(self) -> bool {
        matches!(
            self,
            Tok::Block
                | Tok::Break
                | Tok::Continue
                | Tok::Dot
                | Tok::Define
                | Tok::Else
                | Tok::End
                | Tok::If
                | Tok::Nil
                | Tok::Range
                | Tok::Template
                | Tok::With
        )
    }
}

/// A token: kind, byte offset in the text, text, and 1-based line. Copied freely by the parser's look-ahead.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item<'a> {
    pub(crate) typ: Tok,
    pub(crate) pos: usize,
    /// The token's text, borrowed from the template (empty for an error token: its message is [`Lexed::error`]).
    pub(crate) val: &'a str,
    pub(crate) line: usize,
}

/// The tokens of a text, and the message of the error token that ends them, if lexing failed.
pub(crate) struct Lexed<'a> {
    pub(crate) items: Vec<Item<'a>>,
    pub(crate) error: Option<String>,
}

impl std::fmt::Display for Item<'_> {
    /// Go's `item.String()`, as parse errors quote tokens.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.typ {
            Tok::Eof => f.write_str("EOF"),
            Tok::Error => f.write_str(self.val),
            t if t.is_keyword() => write!(f, "<{}>", self.val),
            _ if self.val.chars().count() > 10 => {
                let head: String = self.val.chars().take(10).collect();
                write!(f, "{}...", go_quote(&head))
            }
            _ => f.write_str(&go_quote(self.val)),
        }
    }
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_alnum(c: char) -> bool {
    if c.is_ascii() {
        return c == '_' || c.is_ascii_alphanumeric();
    }
    c.is_alphabetic() || c.is_numeric()
}

/// Where the two-byte `pair` first occurs in `haystack`: a byte scan for its first byte, far cheaper than a
/// general substring search set up anew for every run of text between actions.
fn find_pair(haystack: &[u8], pair: &[u8; 2]) -> Option<usize> {
    let mut from = 0;
    while let Some(offset) = haystack.get(from..)?.iter().position(|&b| b == pair[0]) {
        let at = from + offset;
        if haystack.get(at + 1) == Some(&pair[1]) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn has_left_trim(s: &[u8]) -> bool {
    s.len() >= 2 && s[0] == b'-' && is_space(s[1])
}

fn has_right_trim(s: &[u8]) -> bool {
    s.len() >= 2 && is_space(s[0]) && s[1] == b'-'
}

/// Lexes `input` into tokens, ending with `Eof` or `Error`. `break_ok`/`continue_ok` say whether `break` and
/// `continue` are keywords (they are not when the function map defines them, as in Go).
pub(crate) fn lex(input: &str, break_ok: bool, continue_ok: bool) -> Lexed<'_> {
    let mut lx = Lexer {
        input,
        bytes: input.as_bytes(),
        pos: 0,
        start: 0,
        line: 1,
        start_line: 1,
        items: Vec::with_capacity(expected_items(input.as_bytes())),
        error: None,
        paren_depth: 0,
        break_ok,
        continue_ok,
    };
    lx.run();
    Lexed {
        items: lx.items,
        error: lx.error,
    }
}

/// A guess at how many tokens `input` lexes into, so the token vector grows rarely: chart templates average one
/// token per 6–10 bytes.
fn expected_items(input: &[u8]) -> usize {
    input.len() / 8 + 2
}

struct Lexer<'a> {
    input: &'a str,
    bytes: &'a [u8],
    pos: usize,
    start: usize,
    line: usize,
    start_line: usize,
    items: Vec<Item<'a>>,
    error: Option<String>,
    paren_depth: i64,
    break_ok: bool,
    continue_ok: bool,
}

impl<'a> Lexer<'a> {
    fn emit(&mut self, typ: Tok) {
        let val = self.input.get(self.start..self.pos).unwrap_or("");
        self.items.push(Item {
            typ,
            pos: self.start,
            val,
            line: self.start_line,
        });
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn ignore(&mut self) {
        let skipped = self.bytes.get(self.start..self.pos).unwrap_or(&[]);
        self.line += skipped.iter().filter(|&&b| b == b'\n').count();
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn error(&mut self, message: String) {
        self.items.push(Item {
            typ: Tok::Error,
            pos: self.start,
            val: "",
            line: self.start_line,
        });
        self.error = Some(message);
    }

    fn peek(&self) -> Option<char> {
        let first = *self.bytes.get(self.pos)?;
        if first.is_ascii() {
            return Some(char::from(first));
        }
        self.input.get(self.pos..).and_then(|s| s.chars().next())
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn rest(&self) -> &[u8] {
        self.bytes.get(self.pos..).unwrap_or(&[])
    }

    fn run(&mut self) {
        loop {
            if !self.lex_text() {
                return;
            }
            if !self.lex_left_delim() {
                return;
            }
        }
    }

    /// Text up to the next left delimiter; false at EOF.
    fn lex_text(&mut self) -> bool {
        let Some(x) = find_pair(self.rest(), b"{{") else {
            self.pos = self.input.len();
            if self.pos > self.start {
                let text = &self.bytes[self.start..self.pos];
                let newlines = text.iter().filter(|&&b| b == b'\n').count();
                self.line += newlines;
                self.emit(Tok::Text);
            }
            self.emit(Tok::Eof);
            return false;
        };
        if x > 0 {
            self.pos += x;
            let delim_end = self.pos + LEFT.len();
            let mut trim = 0;
            if has_left_trim(self.bytes.get(delim_end..).unwrap_or(&[])) {
                let text = &self.bytes[self.start..self.pos];
                trim = text.len() - text.iter().rposition(|&b| !is_space(b)).map_or(0, |i| i + 1);
            }
            self.pos -= trim;
            let text = &self.bytes[self.start..self.pos];
            let newlines = text.iter().filter(|&&b| b == b'\n').count();
            self.line += newlines;
            if self.pos > self.start {
                self.emit(Tok::Text);
            }
            self.pos += trim;
            self.ignore();
        }
        true
    }

    /// At a left delimiter: a comment or an action. False when lexing stops.
    fn lex_left_delim(&mut self) -> bool {
        self.pos += LEFT.len();
        let trim = has_left_trim(self.rest());
        let after = if trim { 2 } else { 0 };
        if self
            .bytes
            .get(self.pos + after..)
            .is_some_and(|s| s.starts_with(b"/*"))
        {
            self.pos += after;
            self.ignore();
            return self.lex_comment();
        }
        // Emit the delimiter.
        let item = Item {
            typ: Tok::LeftDelim,
            pos: self.start,
            val: LEFT,
            line: self.start_line,
        };
        self.pos += after;
        self.ignore();
        self.items.push(item);
        self.paren_depth = 0;
        self.lex_inside_action()
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim(rest) && rest.get(2..).is_some_and(|s| s.starts_with(RIGHT.as_bytes())) {
            return (true, true);
        }
        (rest.starts_with(RIGHT.as_bytes()), false)
    }

    fn lex_comment(&mut self) -> bool {
        self.pos += 2;
        let Some(end) = find_pair(self.rest(), b"*/") else {
            self.error("unclosed comment".into());
            return false;
        };
        self.pos += end + 2;
        let (delim, trim) = self.at_right_delim();
        if !delim {
            self.error("comment ends before closing delimiter".into());
            return false;
        }
        self.ignore();
        if trim {
            self.pos += 2;
        }
        self.pos += RIGHT.len();
        if trim {
            self.skip_leading_space();
        }
        self.ignore();
        true
    }

    fn skip_leading_space(&mut self) {
        while self.rest().first().is_some_and(|&b| is_space(b)) {
            self.pos += 1;
        }
    }

    fn lex_right_delim(&mut self, trim: bool) {
        if trim {
            self.pos += 2;
            self.ignore();
        }
        self.pos += RIGHT.len();
        self.emit(Tok::RightDelim);
        if trim {
            self.skip_leading_space();
            self.ignore();
        }
    }

    /// Tokens inside an action, through its right delimiter. False when lexing stops (error).
    fn lex_inside_action(&mut self) -> bool {
        loop {
            let (delim, trim) = self.at_right_delim();
            if delim {
                if self.paren_depth == 0 {
                    self.lex_right_delim(trim);
                    return true;
                }
                self.error("unclosed left paren".into());
                return false;
            }
            let Some(r) = self.next() else {
                self.error("unclosed action".into());
                return false;
            };
            match r {
                ' ' | '\t' | '\r' | '\n' => {
                    self.pos -= 1;
                    if r == '\n' {
                        self.line -= 1;
                    }
                    self.lex_space();
                }
                '=' => self.emit(Tok::Assign),
                ':' => {
                    if self.next() != Some('=') {
                        self.error("expected :=".into());
                        return false;
                    }
                    self.emit(Tok::Declare);
                }
                '|' => self.emit(Tok::Pipe),
                '"' => {
                    if !self.lex_quote() {
                        return false;
                    }
                }
                '`' => {
                    if !self.lex_raw_quote() {
                        return false;
                    }
                }
                '$' => {
                    if !self.lex_field_or_variable(Tok::Variable) {
                        return false;
                    }
                }
                '\'' => {
                    if !self.lex_char() {
                        return false;
                    }
                }
                '.' if self.rest().first().is_none_or(|&b| !b.is_ascii_digit()) => {
                    if !self.lex_field_or_variable(Tok::Field) {
                        return false;
                    }
                }
                '.' | '+' | '-' | '0'..='9' => {
                    self.pos -= 1;
                    if !self.lex_number() {
                        return false;
                    }
                }
                c if is_alnum(c) => {
                    self.pos -= c.len_utf8();
                    if !self.lex_identifier() {
                        return false;
                    }
                }
                '(' => {
                    self.emit(Tok::LeftParen);
                    self.paren_depth += 1;
                }
                ')' => {
                    self.paren_depth -= 1;
                    if self.paren_depth < 0 {
                        self.error("unexpected right paren".into());
                        return false;
                    }
                    self.emit(Tok::RightParen);
                }
                c if c.is_ascii() && !c.is_ascii_control() => self.emit(Tok::Char),
                c => {
                    self.error(format!("unrecognized character in action: {}", go_unicode(c)));
                    return false;
                }
            }
        }
    }

    fn lex_space(&mut self) {
        let spaces = self.rest().iter().take_while(|&&b| is_space(b)).count();
        self.line += self.rest()[..spaces].iter().filter(|&&b| b == b'\n').count();
        self.pos += spaces;
        // A trim-marked right delimiter starts with a space: leave that space to it.
        let before = self.bytes.get(self.pos - 1..).unwrap_or(&[]);
        if before.len() >= 4 && before[1] == b'-' && before[2..].starts_with(RIGHT.as_bytes()) {
            self.pos -= 1;
            if self.bytes[self.pos] == b'\n' {
                self.line -= 1;
            }
            if spaces == 1 {
                return;
            }
        }
        self.emit(Tok::Space);
    }

    fn at_terminator(&self) -> bool {
        match self.rest().first() {
            None => true,
            Some(&b) if is_space(b) => true,
            Some(b'.' | b',' | b'|' | b':' | b')' | b'(') => true,
            _ => self.rest().starts_with(RIGHT.as_bytes()),
        }
    }

    fn bad_char(&mut self) -> bool {
        let c = self.peek().unwrap_or('\0');
        self.error(format!("bad character {}", go_unicode(c)));
        false
    }

    fn lex_field_or_variable(&mut self, typ: Tok) -> bool {
        if self.at_terminator() {
            self.emit(if typ == Tok::Variable {
                Tok::Variable
            } else {
                Tok::Dot
            });
            return true;
        }
        self.skip_alnum();
        if !self.at_terminator() {
            return self.bad_char();
        }
        self.emit(typ);
        true
    }

    /// Skips letters, digits and `_` (ASCII by bytes, the rest by characters).
    fn skip_alnum(&mut self) {
        loop {
            match self.bytes.get(self.pos) {
                Some(&b) if b.is_ascii_alphanumeric() || b == b'_' => self.pos += 1,
                Some(&b) if !b.is_ascii() && self.peek().is_some_and(is_alnum) => {
                    self.next();
                }
                _ => return,
            }
        }
    }

    fn lex_identifier(&mut self) -> bool {
        self.skip_alnum();
        if !self.at_terminator() {
            return self.bad_char();
        }
        let word = &self.input[self.start..self.pos];
        let typ = match word {
            "block" => Tok::Block,
            "break" if self.break_ok => Tok::Break,
            "continue" if self.continue_ok => Tok::Continue,
            "define" => Tok::Define,
            "else" => Tok::Else,
            "end" => Tok::End,
            "if" => Tok::If,
            "range" => Tok::Range,
            "nil" => Tok::Nil,
            "template" => Tok::Template,
            "with" => Tok::With,
            "true" | "false" => Tok::Bool,
            _ => Tok::Identifier,
        };
        self.emit(typ);
        true
    }

    fn lex_char(&mut self) -> bool {
        loop {
            match self.next() {
                Some('\\') => {
                    if !matches!(self.next(), Some(c) if c != '\n') {
                        self.error("unterminated character constant".into());
                        return false;
                    }
                }
                None | Some('\n') => {
                    self.error("unterminated character constant".into());
                    return false;
                }
                Some('\'') => break,
                Some(_) => {}
            }
        }
        self.emit(Tok::CharConstant);
        true
    }

    fn lex_quote(&mut self) -> bool {
        // The bytes that matter are ASCII, which never occur inside a multi-byte character: scan bytes.
        loop {
            let Some(offset) = self
                .rest()
                .iter()
                .position(|&b| matches!(b, b'\\' | b'"' | b'\n'))
            else {
                self.pos = self.bytes.len();
                self.error("unterminated quoted string".into());
                return false;
            };
            self.pos += offset;
            match self.bytes[self.pos] {
                b'\\' => {
                    self.pos += 1;
                    if !matches!(self.next(), Some(c) if c != '\n') {
                        self.error("unterminated quoted string".into());
                        return false;
                    }
                }
                b'"' => {
                    self.pos += 1;
                    break;
                }
                _ => {
                    self.pos += 1;
                    self.line += 1;
                    self.error("unterminated quoted string".into());
                    return false;
                }
            }
        }
        self.emit(Tok::String);
        true
    }

    fn lex_raw_quote(&mut self) -> bool {
        let Some(offset) = self.rest().iter().position(|&b| b == b'`') else {
            self.line += self.rest().iter().filter(|&&b| b == b'\n').count();
            self.pos = self.bytes.len();
            self.error("unterminated raw quoted string".into());
            return false;
        };
        self.line += self.rest()[..offset].iter().filter(|&&b| b == b'\n').count();
        self.pos += offset + 1;
        self.emit(Tok::RawString);
        true
    }

    fn accept(&mut self, valid: &str) -> bool {
        if self.peek().is_some_and(|c| valid.contains(c)) {
            self.next();
            return true;
        }
        false
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn lex_number(&mut self) -> bool {
        if !self.scan_number() {
            let text = self.input[self.start..self.pos].to_string();
            self.error(format!("bad number syntax: {}", go_quote(&text)));
            return false;
        }
        if matches!(self.peek(), Some('+' | '-')) {
            // A complex constant: `1+2i`, no spaces, ending in `i`.
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let text = self.input[self.start..self.pos].to_string();
                self.error(format!("bad number syntax: {}", go_quote(&text)));
                return false;
            }
            self.emit(Tok::Complex);
            return true;
        }
        self.emit(Tok::Number);
        true
    }

    /// Go's `lexer.scanNumber`: a sign, a base prefix, digits, a fraction, an exponent (`e` for decimal, `p` for
    /// hexadecimal), an imaginary `i`; false when a letter or digit follows.
    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alnum) {
            self.next();
            return false;
        }
        true
    }
}

/// Go's `%#U` of a rune: `U+0041 'A'`.
fn go_unicode(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("U+{:04X} '{c}'", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Tok, String)> {
        let lexed = lex(text, true, true);
        lexed
            .items
            .iter()
            .map(|i| match i.typ {
                Tok::Error => (i.typ, lexed.error.clone().unwrap_or_default()),
                _ => (i.typ, i.val.to_string()),
            })
            .collect()
    }

    #[test]
    fn trims_and_comments() {
        let items = kinds("a  {{- .x -}}  b {{/* c */}} d {{- /* e */ -}} f");
        let texts: Vec<_> = items
            .iter()
            .filter(|(t, _)| *t == Tok::Text)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(texts, ["a", "b ", " d", "f"]);
    }

    #[test]
    fn numbers_fields_and_errors() {
        let items = kinds("{{ $x := .A.B 0x1F 'a' `r` \"s\" }}");
        let typs: Vec<_> = items
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| *t != Tok::Space)
            .collect();
        assert_eq!(
            typs,
            [
                Tok::LeftDelim,
                Tok::Variable,
                Tok::Declare,
                Tok::Field,
                Tok::Field,
                Tok::Number,
                Tok::CharConstant,
                Tok::RawString,
                Tok::String,
                Tok::RightDelim,
                Tok::Eof
            ]
        );
        assert_eq!(
            kinds("{{ \"abc").last().map(|i| i.1.clone()),
            Some("unterminated quoted string".into())
        );
        assert_eq!(
            kinds("{{ 3x }}").last().map(|i| i.1.clone()),
            Some("bad number syntax: \"3x\"".into())
        );
        assert_eq!(
            kinds("{{ .x").last().map(|i| i.1.clone()),
            Some("unclosed action".into())
        );
    }
}
