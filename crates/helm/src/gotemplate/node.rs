//! The parse tree of a template (Go's `text/template/parse` nodes) and its printing: Go quotes a node's source form
//! (`String()`) in execution errors (`executing "x" at <.Values.a.b>`), so every node prints as Go prints it.

use std::fmt::{self, Display, Write as _};
use std::rc::Rc;

use super::builtins::Callee;

/// A parsed template: its name, the name and text of the file it came from (for error positions), and its body.
#[derive(Debug)]
pub(crate) struct Tree {
    pub(crate) name: Rc<str>,
    pub(crate) parse_name: Rc<str>,
    pub(crate) text: Rc<str>,
    pub(crate) root: Vec<Node>,
}

impl Tree {
    /// Whether the body is empty or only whitespace text (Go's `IsEmptyTree`).
    pub(crate) fn is_empty(&self) -> bool {
        self.root.iter().all(|node| match node {
            Node::Text { pos, len, source } => text_at(source, *pos, *len).trim().is_empty(),
            _ => false,
        })
    }

    /// Go's `ErrorContext` location: `(line, column)`, the column a 0-based byte offset in the line.
    pub(crate) fn line_col(&self, pos: usize) -> (usize, usize) {
        let before = self.text.get(..pos).unwrap_or(&self.text);
        let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
        let col = before.rfind('\n').map_or(pos, |nl| pos - nl - 1);
        (line, col)
    }
}

/// The `len` bytes at `pos` of `source` (a text node's text).
pub(crate) fn text_at(source: &str, pos: usize, len: usize) -> &str {
    source.get(pos..pos.saturating_add(len)).unwrap_or_default()
}

/// A statement-level node.
#[derive(Debug)]
pub(crate) enum Node {
    /// Text between actions: `len` bytes at `pos` of the template's whole text `source` (shared, not copied).
    Text {
        pos: usize,
        len: usize,
        source: Rc<str>,
    },
    Action {
        pos: usize,
        pipe: Pipe,
    },
    If(Branch),
    With(Branch),
    Range(Branch),
    Template {
        pos: usize,
        name: Rc<str>,
        pipe: Option<Pipe>,
    },
    Break,
    Continue,
}

/// The body of `if`, `with` and `range`.
#[derive(Debug)]
pub(crate) struct Branch {
    pub(crate) pos: usize,
    pub(crate) pipe: Pipe,
    pub(crate) list: Vec<Node>,
    pub(crate) else_list: Option<Vec<Node>>,
}

/// A pipeline: optional declarations, then commands joined by `|`.
#[derive(Debug)]
pub(crate) struct Pipe {
    pub(crate) pos: usize,
    pub(crate) is_assign: bool,
    pub(crate) decl: Vec<Rc<str>>,
    pub(crate) decl_pos: Vec<usize>,
    /// Inline up to two (`.x`, `include "a" . | nindent 2`), as nearly all pipelines are.
    pub(crate) cmds: smallvec::SmallVec<[Command; 2]>,
}

/// A command: an operand or a function with arguments.
#[derive(Debug)]
pub(crate) struct Command {
    pub(crate) pos: usize,
    pub(crate) args: Vec<Arg>,
}

/// A number constant's value as `idealConstant` makes it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Num {
    Int(i64),
    Float(f64),
    /// A complex constant (`1i`, `1+2i`): real and imaginary parts, printed as Go prints a `complex128`.
    Complex(f64, f64),
    /// An integer constant that does not fit `int` (an execution error, as in Go).
    Overflow,
}

/// The names of a field chain (`.Values.image.tag`) or variable (`$x.a`): inline up to three, as nearly all are.
pub(crate) type Idents = smallvec::SmallVec<[Rc<str>; 3]>;

/// An operand.
#[derive(Debug)]
pub(crate) enum Arg {
    Field {
        pos: usize,
        idents: Idents,
    },
    Variable {
        pos: usize,
        idents: Idents,
    },
    Identifier {
        pos: usize,
        name: Rc<str>,
        callee: Callee,
    },
    Dot {
        pos: usize,
    },
    Nil {
        pos: usize,
    },
    Bool {
        pos: usize,
        value: bool,
    },
    Number {
        pos: usize,
        text: Rc<str>,
        value: Num,
    },
    String {
        pos: usize,
        /// The literal as written; `None` for a `"…"` literal without escapes, which is `text` quoted.
        quoted: Option<Rc<str>>,
        text: Rc<str>,
    },
    Pipe(Box<Pipe>),
    Chain {
        pos: usize,
        node: Box<Arg>,
        fields: Vec<Rc<str>>,
    },
}

impl Arg {
    pub(crate) fn pos(&self) -> usize {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Dot { pos }
            | Arg::Nil { pos }
            | Arg::Bool { pos, .. }
            | Arg::Number { pos, .. }
            | Arg::String { pos, .. }
            | Arg::Chain { pos, .. } => *pos,
            Arg::Pipe(pipe) => pipe.pos,
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, list: &[Node]) -> fmt::Result {
    for node in list {
        write!(f, "{node}")?;
    }
    Ok(())
}

impl Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Text { pos, len, source } => f.write_str(text_at(source, *pos, *len)),
            Node::Action { pipe, .. } => write!(f, "{{{{{pipe}}}}}"),
            Node::If(b) => write_branch(f, "if", b),
            Node::With(b) => write_branch(f, "with", b),
            Node::Range(b) => write_branch(f, "range", b),
            Node::Template { name, pipe, .. } => match pipe {
                Some(pipe) => write!(f, "{{{{template {} {pipe}}}}}", super::lex::go_quote(name)),
                None => write!(f, "{{{{template {}}}}}", super::lex::go_quote(name)),
            },
            Node::Break => f.write_str("{{break}}"),
            Node::Continue => f.write_str("{{continue}}"),
        }
    }
}

fn write_branch(f: &mut fmt::Formatter<'_>, name: &str, b: &Branch) -> fmt::Result {
    write!(f, "{{{{{name} {}}}}}", b.pipe)?;
    write_list(f, &b.list)?;
    if let Some(else_list) = &b.else_list {
        f.write_str("{{else}}")?;
        write_list(f, else_list)?;
    }
    f.write_str("{{end}}")
}

impl Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            for (i, v) in self.decl.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(v)?;
            }
            f.write_str(if self.is_assign { " = " } else { " := " })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_char(' ')?;
            }
            if let Arg::Pipe(pipe) = arg {
                write!(f, "({pipe})")?;
            } else {
                write!(f, "{arg}")?;
            }
        }
        Ok(())
    }
}

impl Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Field { idents, .. } => {
                for ident in idents {
                    write!(f, ".{ident}")?;
                }
                Ok(())
            }
            Arg::Variable { idents, .. } => {
                for (i, ident) in idents.iter().enumerate() {
                    if i > 0 {
                        f.write_char('.')?;
                    }
                    f.write_str(ident)?;
                }
                Ok(())
            }
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Dot { .. } => f.write_char('.'),
            Arg::Nil { .. } => f.write_str("nil"),
            Arg::Bool { value, .. } => write!(f, "{value}"),
            Arg::Number { text, .. } => f.write_str(text),
            Arg::String {
                quoted: Some(quoted), ..
            } => f.write_str(quoted),
            Arg::String { text, .. } => write!(f, "\"{text}\""),
            Arg::Pipe(pipe) => write!(f, "{pipe}"),
            Arg::Chain { node, fields, .. } => {
                if let Arg::Pipe(pipe) = node.as_ref() {
                    write!(f, "({pipe})")?;
                } else {
                    write!(f, "{node}")?;
                }
                for field in fields {
                    write!(f, ".{field}")?;
                }
                Ok(())
            }
        }
    }
}
