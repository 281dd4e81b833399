//! The parser of Go's `text/template`: builds [`Tree`]s from the lexer's tokens with Go's grammar, variable
//! scoping checks, function-existence checks and error messages (`unexpected "}" in operand`, `missing value for
//! if`, `function "x" not defined`, `undefined variable "$x"`, …). Nesting is bounded by `max_parse_depth`.

use std::rc::Rc;

use super::Limit;
use super::builtins::Callee;
use super::funcs::NameHasher;
use super::lex::{Item, Tok, go_quote, lex};
use super::node::{Arg, Branch, Command, Node, Num, Pipe, Tree};

/// A parse failure: the 1-based line and Go's message.
#[derive(Debug)]
pub(crate) struct ParseError {
    pub(crate) line: usize,
    pub(crate) message: String,
    /// The bound that stopped parsing, if one did (nesting or native stack).
    pub(crate) limit: Option<Limit>,
}

type PResult<T> = Result<T, ParseError>;

/// Parses `text` (file `name`) into its top-level tree and its `define`/`block` trees, in definition order.
pub(crate) fn parse(
    name: &str,
    text: &str,
    resolve: &dyn Fn(&str) -> Option<Callee>,
    max_depth: usize,
    max_stack: usize,
) -> PResult<Vec<Tree>> {
    let marker = 0u8;
    let stack_base = std::hint::black_box(&marker as *const u8 as usize);
    let lexed = lex(text, resolve("break").is_none(), resolve("continue").is_none());
    let text: Rc<str> = Rc::from(text);
    let parse_name: Rc<str> = Rc::from(name);
    let mut p = Parser {
        names: std::collections::HashMap::with_capacity_and_hasher(64, Default::default()),
        items: lexed.items,
        lex_error: lexed.error.unwrap_or_default(),
        index: 0,
        vars: vec![Rc::from("$")],
        range_depth: 0,
        depth: 0,
        max_depth,
        max_stack,
        stack_base,
        resolve,
        defs: Vec::new(),
        text,
        parse_name,
        last_line: 1,
        action_line: 0,
    };
    let root = p.parse_top()?;
    let mut trees = vec![Tree {
        name: Rc::from(name),
        parse_name: p.parse_name.clone(),
        text: p.text.clone(),
        root,
    }];
    // The file's own tree first, then its definitions; within one file a second non-empty definition of a name
    // is an error (Go's `multiple definition`), an empty one never replaces a non-empty one.
    let mut defs: Vec<Tree> = Vec::new();
    let mut index: std::collections::HashMap<Rc<str>, usize> = std::collections::HashMap::new();
    for (line, def) in std::mem::take(&mut p.defs) {
        if let Some(existing) = index.get(&def.name).and_then(|&i| defs.get_mut(i)) {
            if existing.is_empty() {
                *existing = def;
            } else if !def.is_empty() {
                return Err(ParseError {
                    line,
                    message: format!(
                        "template: multiple definition of template {}",
                        go_quote(&def.name)
                    ),
                    limit: None,
                });
            }
        } else {
            index.insert(def.name.clone(), defs.len());
            defs.push(def);
        }
    }
    if let Some(pos) = defs.iter().position(|t| *t.name == *name) {
        // `{{define "file"}}` inside file "file": the definition and the file's own tree compete as Go's treeSet.
        let def = defs.remove(pos);
        if trees[0].is_empty() {
            trees[0] = def;
        } else if !def.is_empty() {
            return Err(ParseError {
                line: 1,
                message: format!("template: multiple definition of template {}", go_quote(name)),
                limit: None,
            });
        }
    }
    trees.extend(defs);
    Ok(trees)
}

struct Parser<'f, 'a> {
    /// Every field, variable and function name of the text, allocated once and shared by the nodes naming it.
    names: std::collections::HashMap<&'a str, Rc<str>, std::hash::BuildHasherDefault<NameHasher>>,
    items: Vec<Item<'a>>,
    /// The message of the lexer's error token (the last token when lexing failed).
    lex_error: String,
    index: usize,
    vars: Vec<Rc<str>>,
    range_depth: usize,
    depth: usize,
    max_depth: usize,
    max_stack: usize,
    stack_base: usize,
    resolve: &'f dyn Fn(&str) -> Option<Callee>,
    defs: Vec<(usize, Tree)>,
    text: Rc<str>,
    parse_name: Rc<str>,
    last_line: usize,
    action_line: usize,
}

impl<'a> Parser<'_, 'a> {
    /// The shared allocation of `name`.
    fn name(&mut self, name: &'a str) -> Rc<str> {
        self.names.entry(name).or_insert_with(|| Rc::from(name)).clone()
    }

    fn err<T>(&self, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            line: self.last_line,
            message: message.into(),
            limit: None,
        })
    }

    /// An error for a bound hit while parsing.
    fn limit_err<T>(&self, limit: Limit, message: String) -> PResult<T> {
        Err(ParseError {
            line: self.last_line,
            message,
            limit: Some(limit),
        })
    }

    fn next(&mut self) -> Item<'a> {
        let item = match self.items.get(self.index) {
            Some(item) => *item,
            None => self.items.last().copied().unwrap_or(Item {
                typ: Tok::Eof,
                pos: self.text.len(),
                val: "",
                line: 1,
            }),
        };
        self.index += 1;
        self.last_line = item.line;
        item
    }

    fn backup(&mut self) {
        self.index = self.index.saturating_sub(1);
    }

    fn peek(&mut self) -> Item<'a> {
        let item = self.next();
        self.backup();
        item
    }

    fn next_non_space(&mut self) -> Item<'a> {
        loop {
            let item = self.next();
            if item.typ != Tok::Space {
                return item;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item<'a> {
        let item = self.next_non_space();
        self.backup();
        item
    }

    fn expect(&mut self, typ: Tok, context: &str) -> PResult<Item<'a>> {
        let item = self.next_non_space();
        if item.typ != typ {
            return self.unexpected(&item, context);
        }
        Ok(item)
    }

    fn unexpected<T>(&self, item: &Item<'_>, context: &str) -> PResult<T> {
        if item.typ == Tok::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != item.line {
                extra = format!(" in action started at {}:{}", self.parse_name, self.action_line);
                if self.lex_error.ends_with(" action") {
                    extra = extra.split_off(" in action".len());
                }
            }
            return self.err(format!("{}{extra}", self.lex_error));
        }
        self.err(format!("unexpected {item} in {context}"))
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        let marker = 0u8;
        let here = std::hint::black_box(&marker as *const u8 as usize);
        let used = self.stack_base.abs_diff(here);
        if self.depth > self.max_depth {
            return self.limit_err(
                Limit::ParseDepth(self.max_depth),
                format!(
                    "max expression depth exceeded (limit max_parse_depth = {})",
                    self.max_depth
                ),
            );
        }
        if used > self.max_stack {
            return self.limit_err(
                Limit::Stack(self.max_stack),
                format!(
                    "max expression depth exceeded (native stack budget max_stack_bytes = {} used up)",
                    self.max_stack
                ),
            );
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn parse_top(&mut self) -> PResult<Vec<Node>> {
        let mut root = Vec::new();
        while self.peek().typ != Tok::Eof {
            if self.peek().typ == Tok::LeftDelim {
                let save = self.index;
                self.next();
                if self.next_non_space().typ == Tok::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.index = save;
            }
            match self.text_or_action()? {
                Parsed::Node(node) => root.push(node),
                Parsed::End(_) => return self.err("unexpected {{end}}"),
                Parsed::Else(_) => return self.err("unexpected {{else}}"),
            }
        }
        if let Some(item) = self.items.last()
            && item.typ == Tok::Error
        {
            self.last_line = item.line;
            return self.err(self.lex_error.clone());
        }
        Ok(root)
    }

    fn parse_definition(&mut self) -> PResult<()> {
        let context = "define clause";
        let token = self.next_non_space();
        if !matches!(token.typ, Tok::String | Tok::RawString) {
            return self.unexpected(&token, context);
        }
        let name = self.unquote(token.val)?;
        self.expect(Tok::RightDelim, context)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec![Rc::from("$")]);
        let (list, end) = self.item_list()?;
        self.vars = saved_vars;
        if let End::Else(_) = end {
            return self.err(format!("unexpected {{{{else}}}} in {context}"));
        }
        let line = token.line;
        self.defs.push((
            line,
            Tree {
                name: Rc::from(name.as_str()),
                parse_name: self.parse_name.clone(),
                text: self.text.clone(),
                root: list,
            },
        ));
        Ok(())
    }

    fn item_list(&mut self) -> PResult<(Vec<Node>, End)> {
        self.enter()?;
        let mut list = Vec::new();
        while self.peek_non_space().typ != Tok::Eof {
            match self.text_or_action()? {
                Parsed::Node(node) => list.push(node),
                Parsed::End(pos) => {
                    self.leave();
                    let _ = pos;
                    return Ok((list, End::End));
                }
                Parsed::Else(pos) => {
                    self.leave();
                    return Ok((list, End::Else(pos)));
                }
            }
        }
        if let Some(item) = self.items.last()
            && item.typ == Tok::Error
        {
            self.last_line = item.line;
            return self.err(self.lex_error.clone());
        }
        self.err("unexpected EOF")
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.typ {
            Tok::Text => Ok(Parsed::Node(Node::Text {
                pos: token.pos,
                len: token.val.len(),
                source: self.text.clone(),
            })),
            Tok::LeftDelim => {
                self.action_line = token.line;
                let action = self.action();
                self.action_line = 0;
                action
            }
            _ => self.unexpected(&token, "input"),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.typ {
            Tok::Block => return self.block_control().map(Parsed::Node),
            Tok::Break | Tok::Continue => {
                let what = if token.typ == Tok::Break {
                    "break"
                } else {
                    "continue"
                };
                let next = self.next_non_space();
                if next.typ != Tok::RightDelim {
                    return self.unexpected(&next, &format!("{{{{{what}}}}}"));
                }
                if self.range_depth == 0 {
                    return self.err(format!("{{{{{what}}}}} outside {{{{range}}}}"));
                }
                return Ok(Parsed::Node(if token.typ == Tok::Break {
                    Node::Break
                } else {
                    Node::Continue
                }));
            }
            Tok::Else => {
                let peek = self.peek_non_space();
                if matches!(peek.typ, Tok::If | Tok::With) {
                    return Ok(Parsed::Else(peek.pos));
                }
                let token = self.expect(Tok::RightDelim, "else")?;
                return Ok(Parsed::Else(token.pos));
            }
            Tok::End => {
                let token = self.expect(Tok::RightDelim, "end")?;
                return Ok(Parsed::End(token.pos));
            }
            Tok::If => return self.control("if").map(|b| Parsed::Node(Node::If(b))),
            Tok::Range => return self.control("range").map(|b| Parsed::Node(Node::Range(b))),
            Tok::With => return self.control("with").map(|b| Parsed::Node(Node::With(b))),
            Tok::Template => return self.template_control().map(Parsed::Node),
            _ => {}
        }
        self.backup();
        let token = self.peek();
        let pipe = self.pipeline("command", Tok::RightDelim)?;
        Ok(Parsed::Node(Node::Action { pos: token.pos, pipe }))
    }

    fn control(&mut self, context: &str) -> PResult<Branch> {
        let mark = self.vars.len();
        let result = self.control_inner(context);
        self.vars.truncate(mark);
        result
    }

    fn control_inner(&mut self, context: &str) -> PResult<Branch> {
        let pipe = self.pipeline(context, Tok::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let listed = self.item_list();
        if context == "range" {
            self.range_depth -= 1;
        }
        let (list, next) = listed?;
        let mut else_list = None;
        if let End::Else(else_pos) = next {
            let peek = self.peek().typ;
            if context == "if" && peek == Tok::If {
                self.next();
                self.enter()?;
                let inner = self.control("if")?;
                self.leave();
                let _ = else_pos;
                else_list = Some(vec![Node::If(inner)]);
            } else if context == "with" && peek == Tok::With {
                self.next();
                self.enter()?;
                let inner = self.control("with")?;
                self.leave();
                else_list = Some(vec![Node::With(inner)]);
            } else {
                let (list, next) = self.item_list()?;
                if let End::Else(_) = next {
                    return self.err("expected end; found {{else}}");
                }
                else_list = Some(list);
            }
        }
        Ok(Branch {
            pos: pipe.pos,
            pipe,
            list,
            else_list,
        })
    }

    fn block_control(&mut self) -> PResult<Node> {
        let context = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = self.pipeline(context, Tok::RightDelim)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec![Rc::from("$")]);
        let saved_range = std::mem::replace(&mut self.range_depth, 0);
        let listed = self.item_list();
        self.vars = saved_vars;
        self.range_depth = saved_range;
        let (list, end) = listed?;
        if let End::Else(_) = end {
            return self.err(format!("unexpected {{{{else}}}} in {context}"));
        }
        self.defs.push((
            token.line,
            Tree {
                name: Rc::from(name.as_str()),
                parse_name: self.parse_name.clone(),
                text: self.text.clone(),
                root: list,
            },
        ));
        Ok(Node::Template {
            pos: token.pos,
            name: Rc::from(name.as_str()),
            pipe: Some(pipe),
        })
    }

    fn template_control(&mut self) -> PResult<Node> {
        let context = "template clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = if self.next_non_space().typ == Tok::RightDelim {
            None
        } else {
            self.backup();
            Some(self.pipeline(context, Tok::RightDelim)?)
        };
        Ok(Node::Template {
            pos: token.pos,
            name: Rc::from(name.as_str()),
            pipe,
        })
    }

    fn template_name(&mut self, token: &Item<'_>, context: &str) -> PResult<String> {
        match token.typ {
            Tok::String | Tok::RawString => self.unquote(token.val),
            _ => self.unexpected(token, context),
        }
    }

    fn unquote(&self, quoted: &str) -> PResult<String> {
        unquote(quoted).map_or_else(|| self.err("invalid syntax"), Ok)
    }

    fn pipeline(&mut self, context: &str, end: Tok) -> PResult<Pipe> {
        self.enter()?;
        let token = self.peek_non_space();
        let mut pipe = Pipe {
            pos: token.pos,
            is_assign: false,
            decl: Vec::new(),
            decl_pos: Vec::new(),
            cmds: smallvec::SmallVec::new(),
        };
        'decls: loop {
            let v = self.peek_non_space();
            if v.typ != Tok::Variable {
                break;
            }
            let before = self.index;
            self.next_non_space();
            let after_var = self.peek();
            let next = self.peek_non_space();
            match next.typ {
                Tok::Assign | Tok::Declare => {
                    pipe.is_assign = next.typ == Tok::Assign;
                    self.next_non_space();
                    let name = self.name(v.val);
                    pipe.decl.push(name.clone());
                    pipe.decl_pos.push(v.pos);
                    self.vars.push(name);
                }
                Tok::Char if next.val == "," => {
                    self.next_non_space();
                    let name = self.name(v.val);
                    pipe.decl.push(name.clone());
                    pipe.decl_pos.push(v.pos);
                    self.vars.push(name);
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_non_space().typ {
                            Tok::Variable | Tok::RightDelim | Tok::RightParen => continue 'decls,
                            _ => return self.err("range can only initialize variables"),
                        }
                    }
                    return self.err(format!("too many declarations in {context}"));
                }
                _ => {
                    let _ = after_var;
                    self.index = before;
                }
            }
            break;
        }
        loop {
            let token = self.next_non_space();
            match token.typ {
                t if t == end => {
                    self.check_pipeline(&pipe, context)?;
                    self.leave();
                    return Ok(pipe);
                }
                Tok::Bool
                | Tok::CharConstant
                | Tok::Complex
                | Tok::Dot
                | Tok::Field
                | Tok::Identifier
                | Tok::Number
                | Tok::Nil
                | Tok::RawString
                | Tok::String
                | Tok::Variable
                | Tok::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return self.unexpected(&token, context),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return self.err(format!("missing value for {context}"));
        }
        for (i, cmd) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                cmd.args.first(),
                Some(
                    Arg::Bool { .. }
                        | Arg::Dot { .. }
                        | Arg::Nil { .. }
                        | Arg::Number { .. }
                        | Arg::String { .. }
                )
            ) {
                return self.err(format!("non executable command in pipeline stage {}", i + 1));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<Command> {
        let pos = self.peek_non_space().pos;
        let mut cmd = Command {
            pos,
            args: Vec::new(),
        };
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                cmd.args.push(operand);
            }
            let token = self.next();
            match token.typ {
                Tok::Space => continue,
                Tok::RightDelim | Tok::RightParen => self.backup(),
                Tok::Pipe => {}
                _ => return self.unexpected(&token, "operand"),
            }
            break;
        }
        if cmd.args.is_empty() {
            return self.err("empty command");
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().typ != Tok::Field {
            return Ok(Some(node));
        }
        let chain_pos = self.peek().pos;
        // The fields of the chain, counted first so a field or variable grows its names once.
        let count = self
            .items
            .get(self.index..)
            .unwrap_or_default()
            .iter()
            .take_while(|item| item.typ == Tok::Field)
            .count();
        Ok(Some(match node {
            Arg::Field { mut idents, .. } => {
                self.chain_fields(count, &mut idents);
                Arg::Field {
                    pos: chain_pos,
                    idents,
                }
            }
            Arg::Variable { mut idents, .. } => {
                self.chain_fields(count, &mut idents);
                Arg::Variable {
                    pos: chain_pos,
                    idents,
                }
            }
            Arg::Bool { .. }
            | Arg::String { .. }
            | Arg::Number { .. }
            | Arg::Nil { .. }
            | Arg::Dot { .. } => {
                return self.err(format!("unexpected . after term {}", go_quote(&node.to_string())));
            }
            other => {
                let mut names = Vec::with_capacity(count);
                self.chain_fields(count, &mut names);
                Arg::Chain {
                    pos: chain_pos,
                    node: Box::new(other),
                    fields: names,
                }
            }
        }))
    }

    /// The next `count` field tokens' names, into `into`.
    fn chain_fields(&mut self, count: usize, into: &mut impl Extend<Rc<str>>) {
        into.extend((0..count).map(|_| {
            let item = self.next();
            self.name(item.val.get(1..).unwrap_or(""))
        }));
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let token = self.next_non_space();
        Ok(Some(match token.typ {
            Tok::Identifier => {
                let Some(callee) = (self.resolve)(token.val) else {
                    return self.err(format!("function {} not defined", go_quote(token.val)));
                };
                Arg::Identifier {
                    pos: token.pos,
                    name: self.name(token.val),
                    callee,
                }
            }
            Tok::Dot => Arg::Dot { pos: token.pos },
            Tok::Nil => Arg::Nil { pos: token.pos },
            Tok::Variable => {
                if !self.vars.iter().any(|v| **v == *token.val) {
                    return self.err(format!("undefined variable {}", go_quote(token.val)));
                }
                Arg::Variable {
                    pos: token.pos,
                    idents: smallvec::smallvec![self.name(token.val)],
                }
            }
            Tok::Field => Arg::Field {
                pos: token.pos,
                idents: smallvec::smallvec![self.name(token.val.get(1..).unwrap_or(""))],
            },
            Tok::Bool => Arg::Bool {
                pos: token.pos,
                value: token.val == "true",
            },
            Tok::CharConstant | Tok::Complex | Tok::Number => {
                let value = self.number(&token)?;
                Arg::Number {
                    pos: token.pos,
                    text: Rc::from(token.val),
                    value,
                }
            }
            Tok::LeftParen => Arg::Pipe(Box::new(
                self.pipeline("parenthesized pipeline", Tok::RightParen)?,
            )),
            Tok::String | Tok::RawString => {
                // A literal with nothing to unescape (most) is its own text, and a plain `"…"` one is not kept
                // twice: its source form is its text quoted.
                match plain_literal(token.val) {
                    Some(plain) => Arg::String {
                        pos: token.pos,
                        quoted: (!token.val.starts_with('"')).then(|| Rc::from(token.val)),
                        text: Rc::from(plain),
                    },
                    None => Arg::String {
                        pos: token.pos,
                        quoted: Some(Rc::from(token.val)),
                        text: Rc::from(self.unquote(token.val)?.as_str()),
                    },
                }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }

    /// Go's `parse.newNumber` followed by `exec.idealConstant`: what value a number literal is.
    fn number(&self, token: &Item<'_>) -> PResult<Num> {
        let text = token.val;
        match token.typ {
            Tok::CharConstant => {
                let inner = text.get(1..).unwrap_or("");
                let Some((c, rest)) = unquote_char(inner, '\'') else {
                    return self.err(format!("malformed character constant: {text}"));
                };
                if rest != "'" {
                    return self.err(format!("malformed character constant: {text}"));
                }
                return Ok(Num::Int(i64::from(u32::from(c))));
            }
            Tok::Complex => {
                // Go lets `fmt.Sscan` read the pair.
                return match scan_complex(text) {
                    Some((re, im)) => Ok(Num::Complex(re, im)),
                    None => self.err("syntax error scanning complex number".to_string()),
                };
            }
            _ => {}
        }
        // An imaginary constant is complex (even `0i`).
        if let Some(imaginary) = text.strip_suffix('i')
            && let Some(im) = parse_go_float(imaginary)
        {
            return Ok(Num::Complex(0.0, im));
        }
        // A fraction or an exponent makes a float, but for hexadecimal integers (whose digits may be `e`).
        let float_syntax = !is_hex_int(text) && text.contains(['.', 'e', 'E', 'p', 'P']);
        match parse_go_int(text) {
            IntParse::Int(int) if !float_syntax => Ok(Num::Int(int)),
            IntParse::Uint if !float_syntax => Ok(Num::Overflow),
            IntParse::Int(_) | IntParse::Uint => match parse_go_float(text) {
                Some(float) => Ok(Num::Float(float)),
                None => self.err(format!("illegal number syntax: {}", go_quote(text))),
            },
            IntParse::Bad => match parse_go_float(text) {
                Some(_) if !float_syntax => self.err(format!("integer overflow: {}", go_quote(text))),
                Some(float) => Ok(Num::Float(float)),
                None => self.err(format!("illegal number syntax: {}", go_quote(text))),
            },
        }
    }
}

/// Go's `exec.isHexInt`: `0x…` without a binary exponent.
fn is_hex_int(text: &str) -> bool {
    text.len() > 2
        && text.starts_with('0')
        && matches!(text.as_bytes().get(1), Some(b'x' | b'X'))
        && !text.contains(['p', 'P'])
}

/// `fmt.Sscan` of a `complex128` from a lexed complex constant (`1+2i`, `0x1p2-1.5e3i`): a real and an imaginary
/// float token, each read as `fmt` reads floats (a `p` exponent applied to the mantissa before it).
fn scan_complex(text: &str) -> Option<(f64, f64)> {
    let body = text.strip_suffix('i')?;
    // The sign that starts the imaginary part: the first `+`/`-` after the real part's first character that does
    // not follow an exponent letter.
    let bytes = body.as_bytes();
    let hex = |at: usize| {
        let real = body[..at].trim_start_matches(['+', '-']);
        real.starts_with("0x") || real.starts_with("0X")
    };
    let split = (1..bytes.len()).find(|&at| {
        matches!(bytes[at], b'+' | b'-') && {
            let before = bytes[at - 1].to_ascii_lowercase();
            !(before == b'p' || (before == b'e' && !hex(at)))
        }
    })?;
    let (real, imaginary) = body.split_at(split);
    Some((scan_float(real)?, scan_float(imaginary)?))
}

/// `fmt`'s `convertFloat`: `strconv.ParseFloat`, except that a `p` exponent after a decimal mantissa scales it.
fn scan_float(text: &str) -> Option<f64> {
    match text.find(['p', 'P']).filter(|_| !text.contains(['x', 'X'])) {
        Some(at) => {
            let mantissa = parse_go_float(&text[..at])?;
            let exponent: i64 = text[at + 1..].parse().ok()?;
            Some(scale(mantissa, exponent))
        }
        None => parse_go_float(text),
    }
}

enum Parsed {
    Node(Node),
    End(usize),
    Else(usize),
}

enum End {
    End,
    Else(usize),
}

enum IntParse {
    Int(i64),
    Uint,
    Bad,
}

/// Go's `strconv.ParseInt(text, 0, 64)` (with `ParseUint` as the fallback that still overflows `int`).
fn parse_go_int(text: &str) -> IntParse {
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits, prefixed) =
        if let Some(rest) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, rest, true)
        } else if let Some(rest) = body.strip_prefix("0o").or_else(|| body.strip_prefix("0O")) {
            (8, rest, true)
        } else if let Some(rest) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
            (2, rest, true)
        } else if body.len() > 1 && body.starts_with('0') {
            (8, &body[1..], true)
        } else {
            (10, body, false)
        };
    // Underscores only between digits (or after a base prefix).
    if digits.is_empty()
        || digits.ends_with('_')
        || digits.contains("__")
        || (!prefixed && digits.starts_with('_'))
    {
        return IntParse::Bad;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    match u64::from_str_radix(&clean, radix) {
        Ok(magnitude) => {
            if neg {
                if magnitude <= (i64::MAX as u64) + 1 {
                    IntParse::Int((magnitude as i64).wrapping_neg())
                } else {
                    IntParse::Bad
                }
            } else if let Ok(int) = i64::try_from(magnitude) {
                IntParse::Int(int)
            } else {
                IntParse::Uint
            }
        }
        Err(_) => IntParse::Bad,
    }
}

/// Go's `strconv.ParseFloat(text, 64)` for what the template lexer can produce: decimal floats and hexadecimal
/// ones (`0x1.8p3`, whose `p` exponent is required), with underscores only between digits or after a base prefix.
/// A value out of range is refused, as Go refuses it.
fn parse_go_float(text: &str) -> Option<f64> {
    if text.contains('_') && !underscores_ok(text) {
        return None;
    }
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let (negative, body) = match clean.as_bytes().first() {
        Some(b'-') => (true, &clean[1..]),
        Some(b'+') => (false, &clean[1..]),
        _ => (false, clean.as_str()),
    };
    let magnitude = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(hex) => parse_hex_float(hex)?,
        None => {
            if !body
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_digit() || b == b'.')
                || !body
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
            {
                return None;
            }
            body.parse::<f64>().ok()?
        }
    };
    magnitude
        .is_finite()
        .then_some(if negative { -magnitude } else { magnitude })
}

/// The mantissa and `p` exponent of a hexadecimal float after its `0x`: hex digits with at most one point, at
/// least one digit, then `p` and a decimal exponent (Go requires the exponent).
fn parse_hex_float(text: &str) -> Option<f64> {
    let (mantissa, exponent) = text.split_once(['p', 'P'])?;
    let exponent: i64 = exponent.parse().ok()?;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    // The first 60 significant bits exactly, and whether any later digit is not zero (a sticky bit below the
    // rounding point, so converting the bits to a float rounds as the whole mantissa would).
    let (mut bits, mut shift, mut sticky) = (0u64, 0i64, false);
    for (index, c) in whole.chars().chain(fraction.chars()).enumerate() {
        let digit = u64::from(c.to_digit(16)?);
        let in_fraction = index >= whole.len();
        if bits >> 56 == 0 {
            bits = (bits << 4) | digit;
            shift -= i64::from(in_fraction) * 4;
        } else {
            sticky |= digit != 0;
            shift += i64::from(!in_fraction) * 4;
        }
    }
    Some(scale(
        (bits | u64::from(sticky)) as f64,
        shift.checked_add(exponent)?,
    ))
}

/// `value * 2^exponent` without intermediate overflow or underflow.
fn scale(value: f64, exponent: i64) -> f64 {
    let mut value = value;
    let mut exponent = exponent.clamp(-2200, 2200) as i32;
    while exponent > 0 {
        let step = exponent.min(1000);
        value *= 2f64.powi(step);
        exponent -= step;
    }
    while exponent < 0 {
        let step = exponent.max(-1000);
        value *= 2f64.powi(step);
        exponent -= step;
    }
    value
}

/// Go's `strconv.underscoreOK`: underscores only between digits, or between a base prefix and a digit.
fn underscores_ok(text: &str) -> bool {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let bytes = body.as_bytes();
    let (mut saw, mut index, mut hex) = (b'^', 0, false);
    if bytes.len() >= 2 && bytes[0] == b'0' && matches!(bytes[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        index = 2;
        saw = b'0';
        hex = bytes[1].eq_ignore_ascii_case(&b'x');
    }
    for &b in &bytes[index..] {
        if b.is_ascii_digit() || (hex && b.to_ascii_lowercase().is_ascii_hexdigit()) {
            saw = b'0';
        } else if b == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Go's `strconv.Unquote` for a double-quoted or raw (back-quoted) string.
/// The value of a string literal that needs no unescaping (a raw string without carriage returns, a quoted one
/// without escapes), borrowed from the literal; `None` when [`unquote`] has work to do or refuses it.
fn plain_literal(quoted: &str) -> Option<&str> {
    if let Some(raw) = quoted.strip_prefix('`') {
        let raw = raw.strip_suffix('`')?;
        return (!raw.contains(['`', '\r'])).then_some(raw);
    }
    let rest = quoted.strip_prefix('"')?.strip_suffix('"')?;
    (!rest.bytes().any(|b| matches!(b, b'\\' | b'"' | b'\n'))).then_some(rest)
}

pub(crate) fn unquote(quoted: &str) -> Option<String> {
    if let Some(raw) = quoted.strip_prefix('`') {
        let raw = raw.strip_suffix('`')?;
        if raw.contains('`') {
            return None;
        }
        return Some(raw.replace('\r', ""));
    }
    let mut rest = quoted.strip_prefix('"')?.strip_suffix('"')?;
    if !rest.bytes().any(|b| matches!(b, b'\\' | b'"' | b'\n')) {
        // Nothing to unescape (most strings in templates): the text is the value.
        return Some(rest.to_string());
    }
    let mut out = String::with_capacity(rest.len());
    while !rest.is_empty() {
        if rest.starts_with('"') || rest.starts_with('\n') {
            return None;
        }
        let (c, tail) = unquote_char(rest, '"')?;
        match c {
            Char::Rune(c) => out.push(c),
            Char::Byte(b) => {
                // A \x or octal escape is a raw byte; Go strings may hold invalid UTF-8, ours hold the rune.
                out.push(char::from(b));
            }
        }
        rest = tail;
    }
    Some(out)
}

enum Char {
    Rune(char),
    Byte(u8),
}

impl From<Char> for u32 {
    fn from(c: Char) -> u32 {
        match c {
            Char::Rune(c) => c as u32,
            Char::Byte(b) => u32::from(b),
        }
    }
}

/// Go's `strconv.UnquoteChar`: one (possibly escaped) character off the front of `s`.
fn unquote_char(s: &str, quote: char) -> Option<(Char, &str)> {
    let mut chars = s.chars();
    let c = chars.next()?;
    if c == quote && (quote == '\'' || quote == '"') {
        return None;
    }
    if c != '\\' {
        return Some((Char::Rune(c), chars.as_str()));
    }
    let e = chars.next()?;
    let rest = chars.as_str();
    let simple = match e {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' => Some('\\'),
        '\'' | '"' => {
            if e != quote {
                return None;
            }
            Some(e)
        }
        _ => None,
    };
    if let Some(c) = simple {
        return Some((Char::Rune(c), rest));
    }
    match e {
        'x' | 'u' | 'U' => {
            let n = match e {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let hex = rest.get(..n)?;
            let v = u32::from_str_radix(hex, 16).ok()?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let rest = &rest[n..];
            if e == 'x' {
                return Some((Char::Byte(u8::try_from(v).ok()?), rest));
            }
            Some((Char::Rune(char::from_u32(v)?), rest))
        }
        '0'..='7' => {
            let oct = s.get(1..4)?;
            if !oct.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return None;
            }
            let v = u32::from_str_radix(oct, 8).ok()?;
            Some((Char::Byte(u8::try_from(v).ok()?), s.get(4..)?))
        }
        _ => None,
    }
}
