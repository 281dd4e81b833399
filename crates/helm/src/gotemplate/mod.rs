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
use std::time::{Duration, Instant};

pub use funcs::{Arity, FuncDef, FuncError, FuncImpl, FuncMap, NoRuntime, Runtime};
pub use value::{Kind, Map, MapScope, Object, Value, ValueError};

use builtins::{Builtin, Callee};
use node::Tree;

/// Bounds on one execution (and on parsing), so that no template can hang, exhaust memory or overflow the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Nested `template`/`include`/`tpl` executions (default 100).
    pub max_depth: usize,
    /// Bytes written by the whole execution, nested `include`/`tpl` output included, plus what earlier
    /// executions sharing its [`Usage`] wrote ([`Templates::execute_sharing`]) (default 64 MiB).
    pub max_output_bytes: usize,
    /// Node evaluations plus `range` iterations (default 100,000,000).
    pub max_steps: u64,
    /// Nesting of parentheses and blocks in one template text (default 1000).
    pub max_parse_depth: usize,
    /// Native stack the executor may use below its outermost call (default 1 MiB; safe on a 2 MiB thread). Deep
    /// but legitimate nesting needs more only on threads with bigger stacks.
    pub max_stack_bytes: usize,
    /// When execution must have ended (default none). The executor reads the clock every [`CLOCK_CHECK_STEPS`]
    /// steps and after every function call, so the overshoot is at most one function call, whose work the size
    /// bounds of functions ([`funcs::MAX_TEXT_BYTES`], [`funcs::MAX_LIST_ITEMS`]) keep short.
    pub deadline: Option<Deadline>,
}

/// How many evaluation steps may pass between two looks at the clock: a step without a function call is a few
/// hundred nanoseconds at most, so 64 of them stay far below a millisecond while the clock costs little.
pub const CLOCK_CHECK_STEPS: u64 = 64;

/// A wall-clock budget: the instant execution must end by, and the budget it came from (for the error message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// When the budget runs out.
    pub at: Instant,
    /// The whole budget.
    pub budget: Duration,
}

impl Deadline {
    /// A budget of `budget` from now.
    #[must_use]
    pub fn after(budget: Duration) -> Self {
        /// Longer budgets are this long (a year from now always fits the monotonic clock).
        const LONGEST: Duration = Duration::from_secs(365 * 24 * 3600);
        let now = Instant::now();
        Self {
            at: now.checked_add(budget.min(LONGEST)).unwrap_or(now),
            budget,
        }
    }

    /// Whether the budget has run out.
    #[must_use]
    pub fn passed(&self) -> bool {
        Instant::now() >= self.at
    }
}

/// Which bound stopped an execution. Errors carry it, so a caller can tell a template that is too big or too slow
/// from one that is wrong; its `Display` names the bound and its value (`the output limit of 32 MiB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Nested `template`/`include`/`tpl` calls ([`Limits::max_depth`]).
    Depth(usize),
    /// Bytes written ([`Limits::max_output_bytes`]).
    Output(usize),
    /// Evaluation steps ([`Limits::max_steps`]).
    Steps(u64),
    /// Native stack ([`Limits::max_stack_bytes`]).
    Stack(usize),
    /// Nesting of parentheses and blocks in one template text, `tpl`'s included ([`Limits::max_parse_depth`]).
    ParseDepth(usize),
    /// Wall-clock time ([`Limits::deadline`]).
    Time(Duration),
    /// The size of one function's text result ([`funcs::MAX_TEXT_BYTES`]).
    TextSize(usize),
    /// The items of one function's list result ([`funcs::MAX_LIST_ITEMS`]).
    ListItems(usize),
}

/// `n` bytes as people read them: `32 MiB`, `512 KiB`, or `1000 bytes`.
fn byte_size(n: usize) -> String {
    const KIB: usize = 1 << 10;
    const MIB: usize = 1 << 20;
    match n {
        0 => "0 bytes".to_string(),
        n if n % MIB == 0 => format!("{} MiB", n / MIB),
        n if n % KIB == 0 => format!("{} KiB", n / KIB),
        n => format!("{n} bytes"),
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Depth(n) => write!(f, "the nesting limit of {n} template/include/tpl calls"),
            Limit::Output(n) => write!(f, "the output limit of {}", byte_size(*n)),
            Limit::Steps(n) => write!(f, "the limit of {n} evaluation steps"),
            Limit::Stack(n) => write!(f, "the native stack limit of {}", byte_size(*n)),
            Limit::ParseDepth(n) => write!(f, "the nesting limit of {n} levels in one template text"),
            Limit::Time(budget) => write!(f, "the time limit of {budget:?}"),
            Limit::TextSize(n) => write!(f, "the size limit of {} for one function's result", byte_size(*n)),
            Limit::ListItems(n) => write!(f, "the limit of {n} items for one function's list"),
        }
    }
}

/// A bound an execution hit, and where: the template file and line of the action that was running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitExceeded {
    /// The template file (Go's `ParseName`: `chart/templates/x.yaml`).
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// Go's source text of the action that was running, cut to [`LimitExceeded::MAX_AT_CHARS`] characters.
    pub at: String,
    /// The bound.
    pub limit: Limit,
}

impl LimitExceeded {
    /// How much of the action's text an error quotes.
    pub const MAX_AT_CHARS: usize = 60;
}

impl std::fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        write!(f, ": rendering exceeded {}", self.limit)?;
        if !self.at.is_empty() {
            write!(f, " (at <{}>)", self.at)?;
        }
        Ok(())
    }
}

/// What executions that share budgets have used of them so far (the output budget of one chart's render spans
/// all its templates).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes written, counted against [`Limits::max_output_bytes`].
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 100,
            max_output_bytes: 64 << 20,
            max_steps: 100_000_000,
            max_parse_depth: 1000,
            max_stack_bytes: 1 << 20,
            deadline: None,
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
    /// The bound that stopped the execution, if one did (wherever it was hit, nested `include`s and `tpl`s
    /// included).
    pub limit: Option<Limit>,
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
            limit: error.limit,
        }
    }

    /// The bound that stopped the execution and where, if a bound did.
    #[must_use]
    pub fn limit_exceeded(&self) -> Option<LimitExceeded> {
        let mut at: String = self.context.chars().take(LimitExceeded::MAX_AT_CHARS).collect();
        if at.len() < self.context.len() {
            at.push('…');
        }
        self.limit.map(|limit| LimitExceeded {
            file: self.name.clone(),
            line: self.line,
            at,
            limit,
        })
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
    funcs: std::sync::Arc<FuncMap>,
    limits: Limits,
    trees: HashMap<Rc<str>, Rc<Tree>>,
}

impl Templates {
    /// An empty set calling `funcs` (which shadow builtins of the same name; a shared map is not copied).
    #[must_use]
    pub fn new(funcs: impl Into<std::sync::Arc<FuncMap>>) -> Self {
        Self {
            funcs: funcs.into(),
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
        self.execute_sharing(name, data, &mut Usage::default())
    }

    /// Executes template `name` as [`Templates::execute`] does, counting what it uses on top of `usage` (what
    /// earlier executions of the same render used), so budgets such as the output limit span all of them.
    #[allow(clippy::result_large_err)] // Go's error fields, returned once per call
    pub fn execute_sharing(
        &self,
        name: &str,
        data: &Value,
        usage: &mut Usage,
    ) -> Result<String, TemplateError> {
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
                limit: None,
            });
        };
        exec::Exec::new(&self.trees, &self.funcs, &self.limits, tree, usage.output_bytes)
            .run(tree, data, usage)
    }
}
