//! Go's `text/template`, as Helm uses it: lexer, parser, executor and the builtin functions, over [`Value`]s.
//!
//! The engine is ours rather than a crate's because Helm's contract needs three things the Rust ports lack: maps
//! that templates mutate in place (Sprig's `set`/`merge`), functions that call back into the executing template
//! set (`include`, `tpl`), and positions (`file:line:col`) on execution errors as Go reports them.
//!
//! Usage: build a [`Templates`] set with a [`FuncMap`], [`Templates::parse`] each file under its name (its
//! `define`s join the set; a later non-empty definition replaces an earlier one, as Go's), then
//! [`Templates::execute`] a name with data. Every execution is bounded by [`Limits`].
//!
//! Modules: `lex` (tokens, trim markers, comments), `parse` (Go's grammar into `node` trees, with variable and
//! function checks; identifiers are resolved to a FuncMap function or a builtin once, at parse time), `exec` (the
//! tree walker; implements [`Runtime`] so `include`/`tpl` run inside the same execution and budgets), `builtins`
//! (Go's builtin functions and comparison rules). Errors are [`TemplateError`]s whose `Display` is Go's text.
//!
//! `include`/`tpl`: [`Runtime::include`] runs a template of the set (or of an enclosing `tpl`'s definitions);
//! [`Runtime::tpl`] parses its text as template `gotpl` (Helm's name) into an overlay visible only during that call,
//! and wraps errors as Helm does (`cannot parse template "…": …`, `error during tpl function execution for "…": …`),
//! so a Sprig-layer `tpl` function only forwards to it.

mod builtins;
mod exec;
pub mod fmt;
pub mod funcs;
mod lex;
mod node;
mod parse;
#[cfg(test)]
mod tests;
pub mod value;

use std::collections::HashMap;
use std::rc::Rc;

pub use funcs::{Arity, FuncDef, FuncError, FuncImpl, FuncMap, NoRuntime, Runtime};
pub use value::{Kind, Map, MapScope, Object, Value, ValueError};

use builtins::{Builtin, Callee};
use node::Tree;

/// Bounds on one execution (and on parsing), so that no template can hang, exhaust memory or overflow the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Nested `template`/`include`/`tpl` executions (default 100).
    pub max_depth: usize,
    /// Bytes written by the whole execution, nested `include`/`tpl` output included (default 64 MiB).
    pub max_output_bytes: usize,
    /// Node evaluations plus `range` iterations (default 100,000,000).
    pub max_steps: u64,
    /// Nesting of parentheses and blocks in one template text (default 1000).
    pub max_parse_depth: usize,
    /// Native stack the executor may use below its outermost call (default 1 MiB; safe on a 2 MiB thread). Deep
    /// but legitimate nesting needs more only on threads with bigger stacks.
    pub max_stack_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 100,
            max_output_bytes: 64 << 20,
            max_steps: 100_000_000,
            max_parse_depth: 1000,
            max_stack_bytes: 1 << 20,
        }
    }
}

/// Whether a [`TemplateError`] happened while parsing or while executing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `template: NAME:LINE: MESSAGE`.
    Parse,
    /// `template: NAME:LINE:COL: executing "TEMPLATE" at <CONTEXT>: MESSAGE`.
    Exec,
}

/// A parse or execution error, displayed exactly as Go's `text/template` words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// Parse or exec.
    pub kind: ErrorKind,
    /// The name of the file (Go's `ParseName`) the position is in.
    pub name: String,
    /// The template being executed (a `define`'s name, or the file's); for parse errors the file's name.
    pub template: String,
    /// 1-based line.
    pub line: usize,
    /// Column as Go reports it: the 0-based byte offset of the node in its line (exec errors only).
    pub col: Option<usize>,
    /// Go's source text of the node the error happened at (exec errors only).
    pub context: String,
    /// Go's message.
    pub message: String,
    /// `Error()` of each error this one wraps below its own text (Go's `errors.Unwrap` chain after the
    /// `ExecError` and its wrapped message): set when a function's error is wrapped (`error calling F: %w`).
    pub cause: Vec<String>,
}

impl TemplateError {
    /// The texts of the Go error chain Helm walks to format a failed render: the `ExecError`, the error it wraps
    /// (same text), then the wrapped function error and what that wraps.
    #[must_use]
    pub fn go_chain(&self) -> Vec<String> {
        let text = self.to_string();
        let mut chain = vec![text.clone(), text];
        chain.extend(self.cause.iter().cloned());
        chain
    }

    pub(crate) fn parse(name: &str, error: parse::ParseError) -> Self {
        Self {
            kind: ErrorKind::Parse,
            name: name.to_string(),
            template: name.to_string(),
            line: error.line,
            col: None,
            context: String::new(),
            message: error.message,
            cause: Vec::new(),
        }
    }
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.kind, self.col) {
            (ErrorKind::Exec, Some(col)) => write!(
                f,
                "template: {}:{}:{}: executing {} at <{}>: {}",
                self.name,
                self.line,
                col,
                lex::go_quote(&self.template),
                self.context,
                self.message
            ),
            (ErrorKind::Exec, None) => write!(f, "template: {}", self.message),
            (ErrorKind::Parse, _) => write!(f, "template: {}:{}: {}", self.name, self.line, self.message),
        }
    }
}

impl std::error::Error for TemplateError {}

/// What an identifier in a template names: the FuncMap's function first, then Go's builtins (Go's lookup order).
pub(crate) fn resolve(funcs: &FuncMap, name: &str) -> Option<Callee> {
    if let Some(def) = funcs.get(name) {
        return Some(Callee::Func(*def));
    }
    Builtin::lookup(name).map(Callee::Builtin)
}

/// A set of named templates sharing one function map: parse once, execute many times. Cloning is cheap (parsed
/// trees are shared).
#[derive(Clone)]
pub struct Templates {
    funcs: FuncMap,
    limits: Limits,
    trees: HashMap<Rc<str>, Rc<Tree>>,
}

impl Templates {
    /// An empty set calling `funcs` (which shadow builtins of the same name).
    #[must_use]
    pub fn new(funcs: FuncMap) -> Self {
        Self {
            funcs,
            limits: Limits::default(),
            trees: HashMap::new(),
        }
    }

    /// The same set with other limits.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Parses `text` as template `name`; its `define`s and `block`s join the set. As Go's `associate`, a later
    /// definition replaces an earlier one unless it is empty (whitespace only) and the earlier one is not.
    #[allow(clippy::result_large_err)] // Go's error fields, returned once per call
    pub fn parse(&mut self, name: &str, text: &str) -> Result<(), TemplateError> {
        let funcs = &self.funcs;
        let resolve = |ident: &str| resolve(funcs, ident);
        let trees = parse::parse(
            name,
            text,
            &resolve,
            self.limits.max_parse_depth,
            self.limits.max_stack_bytes,
        )
        .map_err(|error| TemplateError::parse(name, error))?;
        for tree in trees {
            let keep_old = tree.is_empty() && self.trees.get(&*tree.name).is_some_and(|old| !old.is_empty());
            if !keep_old {
                self.trees.insert(tree.name.clone(), Rc::new(tree));
            }
        }
        Ok(())
    }

    /// Whether a template named `name` is in the set.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.trees.contains_key(name)
    }

    /// The names of the templates in the set (unordered).
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.trees.keys().map(|name| &**name)
    }

    /// Executes template `name` with `data` as dot and `$`.
    #[allow(clippy::result_large_err)] // Go's error fields, returned once per call
    pub fn execute(&self, name: &str, data: &Value) -> Result<String, TemplateError> {
        let Some(tree) = self.trees.get(name) else {
            return Err(TemplateError {
                kind: ErrorKind::Exec,
                name: exec::ROOT_NAME.to_string(),
                template: exec::ROOT_NAME.to_string(),
                line: 0,
                col: None,
                context: String::new(),
                message: format!(
                    "no template {} associated with template {}",
                    lex::go_quote(name),
                    lex::go_quote(exec::ROOT_NAME)
                ),
                cause: Vec::new(),
            });
        };
        exec::Exec::new(&self.trees, &self.funcs, &self.limits, tree).run(tree, data)
    }
}
