//! The executor of Go's `text/template`: walks parsed trees over [`Value`]s with Go's semantics (missingkey=zero
//! field access, variable scoping, `range`/`break`/`continue`, template calls) and Go's error texts and positions,
//! and serves `include`/`tpl` to functions through the [`Runtime`] trait.
//!
//! Every execution is bounded: template nesting (`max_depth`), total output (`max_output_bytes`), node evaluations
//! and range iterations (`max_steps`), and the native stack it may use (`max_stack_bytes`, measured from the
//! outermost execution), so hostile templates fail with an error instead of hanging or overflowing the stack.

use std::collections::HashMap;
use std::fmt::Display;
use std::rc::Rc;

use super::builtins::{Builtin, Callee};
use super::fmt;
use super::funcs::{Arity, FuncError, FuncMap, Runtime};
use super::lex::go_quote;
use super::node::{Arg, Branch, Command, Node, Num, Pipe, Tree};
use super::value::Value;
use super::{CLOCK_CHECK_STEPS, ErrorKind, Limit, Limits, TemplateError, Usage};

/// Templates by name.
pub(crate) type Trees = HashMap<Rc<str>, Rc<Tree>>;

/// The name Helm gives its template set (and so `tpl`'s templates and `include`'s errors).
pub(crate) const ROOT_NAME: &str = "gotpl";

type R<T> = Result<T, Box<TemplateError>>;

#[derive(Clone, Copy)]
struct Dot<'v> {
    val: &'v Value,
    /// Whether the value's static Go type is `interface {}` (a map element or list element), which changes Go's
    /// messages and makes a nil an error to dereference rather than an invalid value.
    iface: bool,
}

struct Var {
    name: Rc<str>,
    value: Value,
    iface: bool,
}

enum Flow {
    Normal,
    Break,
    Continue,
}

/// The state of one execution (a top-level template and everything it includes).
pub(crate) struct Exec<'a> {
    base: &'a Trees,
    overlays: Vec<Trees>,
    funcs: &'a FuncMap,
    limits: &'a Limits,
    steps: u64,
    /// The step count at which the clock is read next (when there is a deadline).
    next_clock_check: u64,
    /// Bytes written, by this execution and the earlier ones of the same render.
    out_bytes: usize,
    /// The bound hit, if any: recorded where it is hit, because `include` and `tpl` pass errors up as text.
    limit_hit: Option<Limit>,
    depth: usize,
    stack_base: usize,
    top_name: Rc<str>,
    vars: Vec<Var>,
    out: String,
    tree: Rc<Tree>,
    /// The name `$`, shared by the first variable of every template run.
    dollar: Rc<str>,
}

fn stack_addr() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker as *const u8 as usize)
}

/// The node Go's executor last visited when evaluating `arg` (its error context).
fn last_at(arg: &Arg) -> &Arg {
    match arg {
        Arg::Pipe(pipe) => last_at_pipe(pipe).unwrap_or(arg),
        Arg::Chain { node, .. } => last_at(node),
        _ => arg,
    }
}

fn last_at_pipe(pipe: &Pipe) -> Option<&Arg> {
    let cmd = pipe.cmds.last()?;
    let first = cmd.args.first()?;
    Some(match first {
        Arg::Identifier { .. } if cmd.args.len() > 1 => last_at(cmd.args.last()?),
        Arg::Pipe(_) | Arg::Chain { .. } => last_at(first),
        _ => first,
    })
}

impl<'a> Exec<'a> {
    /// An execution of `top`; `output_used`: bytes earlier executions of the same render wrote.
    pub(crate) fn new(
        base: &'a Trees,
        funcs: &'a FuncMap,
        limits: &'a Limits,
        top: &Rc<Tree>,
        output_used: usize,
    ) -> Self {
        Self {
            base,
            overlays: Vec::new(),
            funcs,
            limits,
            steps: 0,
            next_clock_check: 0,
            out_bytes: output_used,
            limit_hit: None,
            depth: 0,
            stack_base: stack_addr(),
            top_name: top.name.clone(),
            vars: Vec::new(),
            out: String::new(),
            tree: top.clone(),
            dollar: Rc::from("$"),
        }
    }

    /// Executes `tree` with `data` as dot and `$`; returns its output and adds what it wrote to `usage`. An
    /// error caused by a bound carries it, however deep in `include`s and `tpl`s it was hit.
    #[allow(clippy::result_large_err)] // Go's error fields, returned once per call
    pub(crate) fn run(
        mut self,
        tree: &Rc<Tree>,
        data: &Value,
        usage: &mut Usage,
    ) -> Result<String, TemplateError> {
        self.stack_base = stack_addr();
        let result = self.run_tree(tree, data);
        usage.output_bytes = self.out_bytes;
        result.map_err(|mut err| {
            if err.limit.is_none() {
                err.limit = self.limit_hit;
            }
            *err
        })
    }

    fn run_tree(&mut self, tree: &Rc<Tree>, data: &Value) -> R<String> {
        let saved_out = std::mem::take(&mut self.out);
        let saved_vars = std::mem::replace(
            &mut self.vars,
            vec![Var {
                name: self.dollar.clone(),
                value: data.clone(),
                iface: false,
            }],
        );
        let saved_tree = std::mem::replace(&mut self.tree, tree.clone());
        let result = self.walk_list(
            &tree.root,
            Dot {
                val: data,
                iface: false,
            },
        );
        self.tree = saved_tree;
        self.vars = saved_vars;
        let out = std::mem::replace(&mut self.out, saved_out);
        result.map(|_| out)
    }

    fn lookup(&self, name: &str) -> Option<Rc<Tree>> {
        for overlay in self.overlays.iter().rev() {
            if let Some(tree) = overlay.get(name) {
                return Some(tree.clone());
            }
        }
        self.base.get(name).cloned()
    }

    fn error(&self, pos: usize, context: &dyn Display, message: impl Into<String>) -> Box<TemplateError> {
        let (line, col) = self.tree.line_col(pos);
        Box::new(TemplateError {
            kind: ErrorKind::Exec,
            name: self.tree.parse_name.to_string(),
            template: self.tree.name.to_string(),
            line,
            col: Some(col),
            context: context.to_string(),
            message: message.into(),
            cause: Vec::new(),
            limit: None,
        })
    }

    /// An error for a bound hit at `pos`; the bound is remembered for the whole execution.
    fn limit_error(
        &mut self,
        limit: Limit,
        pos: usize,
        context: &dyn Display,
        message: impl Into<String>,
    ) -> Box<TemplateError> {
        self.limit_hit = Some(limit);
        let mut err = self.error(pos, context, message);
        err.limit = Some(limit);
        err
    }

    /// Go's `error calling NAME: %w`: the function's error and what it wraps stay in the chain.
    fn call_error(
        &mut self,
        pos: usize,
        context: &dyn Display,
        name: &str,
        error: FuncError,
    ) -> Box<TemplateError> {
        if error.limit.is_some() {
            self.limit_hit = error.limit;
        }
        let mut err = self.error(pos, context, format!("error calling {name}: {}", error.message));
        err.cause = std::iter::once(error.message).chain(error.chain).collect();
        err
    }

    fn step(&mut self, pos: usize, context: &dyn Display) -> R<()> {
        self.steps += 1;
        if self.steps > self.limits.max_steps {
            return Err(self.limit_error(
                Limit::Steps(self.limits.max_steps),
                pos,
                context,
                format!(
                    "exceeded the limit of {} evaluation steps (max_steps)",
                    self.limits.max_steps
                ),
            ));
        }
        if let Some(deadline) = self.limits.deadline
            && self.steps >= self.next_clock_check
        {
            self.next_clock_check = self.steps.saturating_add(CLOCK_CHECK_STEPS);
            if deadline.passed() {
                return Err(self.limit_error(
                    Limit::Time(deadline.budget),
                    pos,
                    context,
                    format!("exceeded the time limit of {:?}", deadline.budget),
                ));
            }
        }
        let used = self.stack_base.abs_diff(stack_addr());
        if used > self.limits.max_stack_bytes {
            return Err(self.limit_error(
                Limit::Stack(self.limits.max_stack_bytes),
                pos,
                context,
                format!(
                    "exceeded the native stack budget of {} bytes (max_stack_bytes): template nests too deeply",
                    self.limits.max_stack_bytes
                ),
            ));
        }
        Ok(())
    }

    fn write(&mut self, text: &str, pos: usize, context: &dyn Display) -> R<()> {
        self.out_bytes = self.out_bytes.saturating_add(text.len());
        if self.out_bytes > self.limits.max_output_bytes {
            return Err(self.limit_error(
                Limit::Output(self.limits.max_output_bytes),
                pos,
                context,
                format!(
                    "exceeded the output limit of {} bytes (max_output_bytes)",
                    self.limits.max_output_bytes
                ),
            ));
        }
        self.out.push_str(text);
        Ok(())
    }

    fn walk_list(&mut self, list: &[Node], dot: Dot<'_>) -> R<Flow> {
        for node in list {
            let flow = self.walk(node, dot)?;
            if !matches!(flow, Flow::Normal) {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn walk(&mut self, node: &Node, dot: Dot<'_>) -> R<Flow> {
        match node {
            Node::Text { pos, len, source } => {
                self.steps += 1;
                self.write(super::node::text_at(source, *pos, *len), *pos, node)?;
            }
            Node::Action { pos, pipe } => {
                self.step(*pos, node)?;
                let value = self.eval_pipeline(pipe, dot)?;
                if pipe.decl.is_empty() {
                    if value.is_nil() {
                        self.write("<no value>", *pos, node)?;
                    } else if let Value::String(text) = &value {
                        // `%v` of a string is the string: no printer needed for the most common action.
                        self.write(text, *pos, node)?;
                    } else {
                        let text = fmt::sprint_value(&value);
                        self.write(&text, *pos, node)?;
                    }
                }
            }
            Node::If(branch) | Node::With(branch) => {
                self.step(branch.pos, node)?;
                let is_with = matches!(node, Node::With(_));
                let mark = self.vars.len();
                let result = self.walk_if_or_with(branch, dot, is_with);
                self.vars.truncate(mark);
                return result;
            }
            Node::Range(branch) => {
                self.step(branch.pos, node)?;
                let mark = self.vars.len();
                let result = self.walk_range(branch, dot);
                self.vars.truncate(mark);
                return result;
            }
            Node::Template { pos, name, pipe } => {
                self.step(*pos, node)?;
                self.walk_template(node, *pos, name, pipe.as_ref(), dot)?;
            }
            Node::Break => return Ok(Flow::Break),
            Node::Continue => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    fn walk_if_or_with(&mut self, branch: &Branch, dot: Dot<'_>, is_with: bool) -> R<Flow> {
        let value = self.eval_pipeline(&branch.pipe, dot)?;
        if value.is_truthy() {
            if is_with {
                return self.walk_list(
                    &branch.list,
                    Dot {
                        val: &value,
                        iface: false,
                    },
                );
            }
            return self.walk_list(&branch.list, dot);
        }
        if let Some(else_list) = &branch.else_list {
            return self.walk_list(else_list, dot);
        }
        Ok(Flow::Normal)
    }

    fn set_var(&mut self, name: &str, value: Value, iface: bool) -> bool {
        if let Some(var) = self.vars.iter_mut().rev().find(|v| *v.name == *name) {
            var.value = value;
            var.iface = iface;
            return true;
        }
        false
    }

    fn set_top_var(&mut self, n: usize, value: Value, iface: bool) {
        if let Some(index) = self.vars.len().checked_sub(n)
            && let Some(var) = self.vars.get_mut(index)
        {
            var.value = value;
            var.iface = iface;
        }
    }

    fn range_iteration(
        &mut self,
        branch: &Branch,
        mark: usize,
        index: Value,
        elem: &Value,
        iface: bool,
    ) -> R<Flow> {
        let pipe = &branch.pipe;
        self.vars.truncate(mark);
        if !pipe.decl.is_empty() {
            if pipe.is_assign {
                if pipe.decl.len() > 1 {
                    self.set_var(&pipe.decl[0], index.clone(), false);
                } else {
                    self.set_var(&pipe.decl[0], elem.clone(), iface);
                }
            } else {
                self.set_top_var(1, elem.clone(), iface);
            }
        }
        if pipe.decl.len() > 1 {
            if pipe.is_assign {
                self.set_var(&pipe.decl[1], elem.clone(), iface);
            } else {
                self.set_top_var(2, index, false);
            }
        }
        let flow = self.walk_list(&branch.list, Dot { val: elem, iface });
        self.vars.truncate(mark);
        flow
    }

    fn walk_range(&mut self, branch: &Branch, dot: Dot<'_>) -> R<Flow> {
        let value = self.eval_pipeline(&branch.pipe, dot)?;
        let value = match &value {
            Value::Object(object) => object.collection().unwrap_or(value),
            _ => value,
        };
        let mark = self.vars.len();
        let context: &dyn Display = match last_at_pipe(&branch.pipe) {
            Some(arg) => arg,
            None => &branch.pipe,
        };
        let context_pos = last_at_pipe(&branch.pipe).map_or(branch.pos, Arg::pos);
        let mut ran = false;
        macro_rules! iterate {
            ($index:expr, $elem:expr, $iface:expr) => {{
                ran = true;
                self.step(branch.pos, context)?;
                match self.range_iteration(branch, mark, $index, $elem, $iface)? {
                    Flow::Break => break,
                    Flow::Continue | Flow::Normal => {}
                }
            }};
        }
        match &value {
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    iterate!(Value::Int(i as i64), item, true);
                }
            }
            Value::Bytes(bytes) => {
                for (i, byte) in bytes.iter().enumerate() {
                    iterate!(Value::Int(i as i64), &Value::Int(i64::from(*byte)), false);
                }
            }
            Value::Map(map) => {
                for (key, item) in map.entries() {
                    iterate!(Value::from(key), &item, true);
                }
            }
            Value::Int(n) => {
                if branch.pipe.decl.len() > 1 {
                    return Err(self.error(
                        context_pos,
                        context,
                        format!("can't use {n} to iterate over more than one variable"),
                    ));
                }
                for i in 0..*n {
                    iterate!(Value::Int(i), &Value::Int(i), false);
                }
            }
            Value::Nil => {}
            other => {
                return Err(self.error(
                    context_pos,
                    context,
                    format!("range can't iterate over {}", fmt::sprint_value(other)),
                ));
            }
        }
        if ran {
            return Ok(Flow::Normal);
        }
        if let Some(else_list) = &branch.else_list {
            return self.walk_list(else_list, dot);
        }
        Ok(Flow::Normal)
    }

    fn walk_template(
        &mut self,
        node: &Node,
        pos: usize,
        name: &str,
        pipe: Option<&Pipe>,
        dot: Dot<'_>,
    ) -> R<()> {
        let Some(tree) = self.lookup(name) else {
            return Err(self.error(pos, node, format!("template {} not defined", go_quote(name))));
        };
        if self.depth >= self.limits.max_depth {
            let message = self.depth_message();
            return Err(self.limit_error(Limit::Depth(self.limits.max_depth), pos, node, message));
        }
        let new_dot = match pipe {
            Some(pipe) => self.eval_pipeline(pipe, dot)?,
            None => Value::Nil,
        };
        let saved_vars = std::mem::replace(
            &mut self.vars,
            vec![Var {
                name: self.dollar.clone(),
                value: new_dot.clone(),
                iface: false,
            }],
        );
        let saved_tree = std::mem::replace(&mut self.tree, tree.clone());
        self.depth += 1;
        let result = self.walk_list(
            &tree.root,
            Dot {
                val: &new_dot,
                iface: false,
            },
        );
        self.depth -= 1;
        self.tree = saved_tree;
        self.vars = saved_vars;
        result.map(|_| ())
    }

    fn depth_message(&self) -> String {
        format!(
            "exceeded maximum template depth ({}) (max_depth: nested template/include/tpl calls)",
            self.limits.max_depth
        )
    }

    fn eval_pipeline(&mut self, pipe: &Pipe, dot: Dot<'_>) -> R<Value> {
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            value = Some(self.eval_command(cmd, dot, value)?);
        }
        let value = value.unwrap_or_default();
        for name in &pipe.decl {
            if pipe.is_assign {
                if !self.set_var(name, value.clone(), false) {
                    let (pos, context): (usize, &dyn Display) = match last_at_pipe(pipe) {
                        Some(arg) => (arg.pos(), arg),
                        None => (pipe.pos, pipe),
                    };
                    return Err(self.error(pos, context, format!("undefined variable: {name}")));
                }
            } else {
                self.vars.push(Var {
                    name: name.clone(),
                    value: value.clone(),
                    iface: false,
                });
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, cmd: &Command, has_final: bool, context: &dyn Display, pos: usize) -> R<()> {
        if cmd.args.len() > 1 || has_final {
            let first = cmd.args.first().map(ToString::to_string).unwrap_or_default();
            return Err(self.error(
                pos,
                context,
                format!("can't give argument to non-function {first}"),
            ));
        }
        Ok(())
    }

    fn eval_command(&mut self, cmd: &Command, dot: Dot<'_>, last: Option<Value>) -> R<Value> {
        let Some(first) = cmd.args.first() else {
            return Ok(Value::Nil);
        };
        self.step(cmd.pos, cmd)?;
        match first {
            Arg::Field { idents, .. } => {
                self.eval_field_chain(dot, dot.val.clone(), dot.iface, idents, first, &cmd.args, last)
            }
            Arg::Chain { .. } => self.eval_chain(dot, first, &cmd.args, last),
            Arg::Identifier { name, callee, .. } => {
                self.eval_function(dot, name, *callee, &cmd.args, last, cmd.pos, cmd)
            }
            Arg::Pipe(pipe) => {
                self.not_a_function(cmd, last.is_some(), cmd, cmd.pos)?;
                self.eval_pipeline(pipe, dot)
            }
            Arg::Variable { idents, .. } => self.eval_variable(dot, first, idents, &cmd.args, last),
            _ => {
                self.not_a_function(cmd, last.is_some(), first, first.pos())?;
                self.eval_constant(first, dot)
            }
        }
    }

    fn eval_constant(&self, arg: &Arg, dot: Dot<'_>) -> R<Value> {
        Ok(match arg {
            Arg::Bool { value, .. } => Value::Bool(*value),
            Arg::Dot { .. } => dot.val.clone(),
            Arg::Nil { pos } => return Err(self.error(*pos, arg, "nil is not a command")),
            Arg::Number { pos, text, value } => match value {
                Num::Int(int) => Value::Int(*int),
                Num::Float(float) => Value::Float(*float),
                Num::Complex(re, im) => Value::Object(std::rc::Rc::new(super::value::Complex(*re, *im))),
                Num::Overflow => return Err(self.error(*pos, arg, format!("{text} overflows int"))),
            },
            Arg::String { text, .. } => Value::String(text.clone()),
            _ => Value::Nil,
        })
    }

    fn var_value(&self, name: &str) -> (Value, bool) {
        self.vars
            .iter()
            .rev()
            .find(|v| *v.name == *name)
            .map_or((Value::Nil, false), |v| (v.value.clone(), v.iface))
    }

    fn eval_variable(
        &mut self,
        dot: Dot<'_>,
        node: &Arg,
        idents: &[Rc<str>],
        args: &[Arg],
        last: Option<Value>,
    ) -> R<Value> {
        let (value, iface) = self.var_value(idents.first().map_or("$", |s| s));
        if idents.len() == 1 {
            if args.len() > 1 || last.is_some() {
                return Err(self.error(
                    node.pos(),
                    node,
                    format!("can't give argument to non-function {node}"),
                ));
            }
            return Ok(value);
        }
        self.eval_field_chain(dot, value, iface, &idents[1..], node, args, last)
    }

    fn eval_chain(&mut self, dot: Dot<'_>, chain: &Arg, args: &[Arg], last: Option<Value>) -> R<Value> {
        let Arg::Chain { node, fields, pos } = chain else {
            return Ok(Value::Nil);
        };
        if let Arg::Nil { .. } = node.as_ref() {
            return Err(self.error(
                *pos,
                chain,
                format!("indirection through explicit nil in {chain}"),
            ));
        }
        let receiver = self.eval_arg(dot, node)?;
        self.eval_field_chain(dot, receiver, false, fields, last_at(node), args, last)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field_chain(
        &mut self,
        dot: Dot<'_>,
        receiver: Value,
        iface: bool,
        idents: &[Rc<str>],
        node: &Arg,
        args: &[Arg],
        mut last: Option<Value>,
    ) -> R<Value> {
        let mut receiver = receiver;
        let mut iface = iface;
        let n = idents.len();
        for (i, ident) in idents.iter().enumerate() {
            let (call_args, final_value): (&[Arg], Option<Value>) = if i + 1 == n {
                (args, last.take())
            } else {
                (&[], None)
            };
            let (value, value_iface) =
                self.eval_field(dot, ident, node, call_args, final_value, receiver, iface)?;
            receiver = value;
            iface = value_iface;
        }
        Ok(receiver)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field(
        &mut self,
        dot: Dot<'_>,
        name: &str,
        node: &Arg,
        args: &[Arg],
        last: Option<Value>,
        receiver: Value,
        iface: bool,
    ) -> R<(Value, bool)> {
        let has_args = args.len() > 1 || last.is_some();
        let pos = node.pos();
        match receiver {
            Value::Nil if !iface => Ok((Value::Nil, false)),
            Value::Nil => Err(self.error(pos, node, format!("nil pointer evaluating interface {{}}.{name}"))),
            Value::Map(map) => {
                if has_args {
                    return Err(self.error(pos, node, format!("{name} is not a method but has arguments")));
                }
                Ok((map.get(name).unwrap_or_default(), true))
            }
            Value::Object(object) => {
                if !has_args && let Some(value) = object.field(name) {
                    return Ok((value, false));
                }
                let mut argv = Vec::with_capacity(args.len());
                for arg in args.iter().skip(1) {
                    argv.push(self.eval_arg(dot, arg)?);
                }
                if let Some(last) = last {
                    argv.push(last);
                }
                match object.call(name, &argv) {
                    Some(Ok(value)) => Ok((value, false)),
                    Some(Err(message)) => Err(self.call_error(pos, node, name, FuncError::new(message))),
                    None if has_args && object.field(name).is_some() => Err(self.error(
                        pos,
                        node,
                        format!("{name} has arguments but cannot be invoked as function"),
                    )),
                    None => Err(self.error(
                        pos,
                        node,
                        format!("can't evaluate field {name} in type {}", object.type_name()),
                    )),
                }
            }
            other => {
                let type_name = if iface {
                    "interface {}".to_string()
                } else {
                    other.type_name()
                };
                Err(self.error(
                    pos,
                    node,
                    format!("can't evaluate field {name} in type {type_name}"),
                ))
            }
        }
    }

    fn eval_arg(&mut self, dot: Dot<'_>, arg: &Arg) -> R<Value> {
        match arg {
            Arg::Dot { .. } => Ok(dot.val.clone()),
            Arg::Nil { .. } => Ok(Value::Nil),
            Arg::Field { idents, .. } => self.eval_field_chain(
                dot,
                dot.val.clone(),
                dot.iface,
                idents,
                arg,
                std::slice::from_ref(arg),
                None,
            ),
            Arg::Variable { idents, .. } => self.eval_variable(dot, arg, idents, &[], None),
            Arg::Pipe(pipe) => {
                self.step(pipe.pos, pipe)?;
                self.eval_pipeline(pipe, dot)
            }
            Arg::Identifier { name, callee, pos } => {
                self.eval_function(dot, name, *callee, std::slice::from_ref(arg), None, *pos, arg)
            }
            Arg::Chain { .. } => self.eval_chain(dot, arg, &[], None),
            Arg::Bool { .. } | Arg::Number { .. } | Arg::String { .. } => self.eval_constant(arg, dot),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_function(
        &mut self,
        dot: Dot<'_>,
        name: &str,
        callee: Callee,
        args: &[Arg],
        last: Option<Value>,
        site_pos: usize,
        site: &dyn Display,
    ) -> R<Value> {
        let explicit = args.len().saturating_sub(1);
        let num_in = explicit + usize::from(last.is_some());
        let arity = match callee {
            Callee::Func(def) => def.arity,
            Callee::Builtin(builtin) => builtin.arity(),
        };
        let arity_error = match arity {
            Arity::Exact(n) if num_in != n => Arity::Exact(n).check(name, num_in).err(),
            Arity::AtLeast(n) if num_in < n => Arity::AtLeast(n).check(name, explicit).err(),
            _ => None,
        };
        if let Some(error) = arity_error {
            let ident = args.first();
            let pos = ident.map_or(site_pos, Arg::pos);
            return Err(match ident {
                Some(ident) => self.error(pos, ident, error.message),
                None => self.error(pos, site, error.message),
            });
        }
        if let Callee::Builtin(builtin @ (Builtin::And | Builtin::Or)) = callee {
            let is_or = builtin == Builtin::Or;
            let mut value = Value::Nil;
            for arg in args.iter().skip(1) {
                value = self.eval_arg(dot, arg)?;
                if value.is_truthy() == is_or {
                    return Ok(value);
                }
            }
            if let Some(last) = last {
                value = last;
            }
            return Ok(value);
        }
        let mut argv = Vec::with_capacity(num_in);
        for arg in args.iter().skip(1) {
            argv.push(self.eval_arg(dot, arg)?);
        }
        if let Some(last) = last {
            argv.push(last);
        }
        let result = match callee {
            Callee::Builtin(builtin) => {
                let callee_text = if builtin == Builtin::Call {
                    args.get(1).map(ToString::to_string).unwrap_or_default()
                } else {
                    String::new()
                };
                builtin.call(&argv, &callee_text).map_err(FuncError::new)
            }
            Callee::Func(def) => (def.call)(self, &argv),
        };
        // A function call may have taken long (within the size bounds of functions): read the clock at the next
        // step.
        self.next_clock_check = self.steps;
        if let Err(error) = &result
            && let Some(conversion) = self.conversion_error(&error.message, args, &argv)
        {
            return Err(conversion);
        }
        result.map_err(|error| self.call_error(site_pos, site, name, error))
    }

    /// Go converts arguments to a function's parameter types before calling it, and reports a mismatch at the
    /// argument, without `error calling`. Our functions convert themselves (`funcs::param_*`, whose message is
    /// Go's); this puts such an error where Go reports it: the first argument of the reported type.
    fn conversion_error(&self, message: &str, args: &[Arg], argv: &[Value]) -> Option<Box<TemplateError>> {
        if let Some(expected) = message.strip_prefix("invalid value; expected ") {
            return self.nil_conversion_error(expected, args, argv);
        }
        let rest = message.strip_prefix("wrong type for value; expected ")?;
        let (expected, got) = rest.split_once("; got ")?;
        let index = argv.iter().position(|value| value.type_name() == got)?;
        let explicit = args.len().saturating_sub(1);
        if index >= explicit {
            // The piped-in final value: Go is still at the last explicit argument (or the function's name).
            let node = if explicit == 0 {
                args.first()?
            } else {
                last_at(args.last()?)
            };
            return Some(self.error(node.pos(), node, message));
        }
        let node = args.get(index + 1)?;
        let kind = match expected {
            "string" => "string",
            "bool" => "bool",
            "float64" | "float32" => "float",
            "int" | "int64" | "int32" | "uint" | "uint64" | "uint32" => "integer",
            _ => "",
        };
        let text = match node {
            Arg::Bool { .. } | Arg::Number { .. } | Arg::String { .. } if !kind.is_empty() => {
                format!("expected {kind}; found {node}")
            }
            _ => message.to_string(),
        };
        Some(self.error(node.pos(), last_at(node), text))
    }

    /// A nil given for a typed parameter (a function reported `invalid value; expected T`): Go words it by where
    /// the nil came from — a nil literal, a map element (a nil `interface {}`), or an untyped nil result.
    fn nil_conversion_error(
        &self,
        expected: &str,
        args: &[Arg],
        argv: &[Value],
    ) -> Option<Box<TemplateError>> {
        let index = argv.iter().position(Value::is_nil)?;
        let explicit = args.len().saturating_sub(1);
        let invalid = format!("invalid value; expected {expected}");
        if index >= explicit {
            let node = if explicit == 0 {
                args.first()?
            } else {
                last_at(args.last()?)
            };
            return Some(self.error(node.pos(), node, invalid));
        }
        let node = args.get(index + 1)?;
        let text = match node {
            Arg::Nil { .. } => format!("cannot assign nil to {expected}"),
            Arg::Field { .. } | Arg::Chain { .. } => {
                format!("wrong type for value; expected {expected}; got interface {{}}")
            }
            Arg::Variable { idents, .. } if idents.len() > 1 => {
                format!("wrong type for value; expected {expected}; got interface {{}}")
            }
            _ => invalid,
        };
        let at = last_at(node);
        Some(self.error(at.pos(), at, text))
    }

    fn enter_nested(&mut self) -> Result<(), FuncError> {
        if self.depth >= self.limits.max_depth {
            let limit = Limit::Depth(self.limits.max_depth);
            self.limit_hit = Some(limit);
            return Err(FuncError::over_limit(limit, self.depth_message()));
        }
        Ok(())
    }

    fn execute_nested(&mut self, tree: &Rc<Tree>, data: &Value) -> Result<String, Box<TemplateError>> {
        self.depth += 1;
        let result = self.run_tree(tree, data);
        self.depth -= 1;
        result
    }
}

impl Runtime for Exec<'_> {
    fn include(&mut self, name: &str, data: &Value) -> Result<String, FuncError> {
        let Some(tree) = self.lookup(name) else {
            return Err(FuncError::new(format!(
                "template: no template {} associated with template {}",
                go_quote(name),
                go_quote(ROOT_NAME)
            )));
        };
        self.enter_nested()?;
        // Helm's include returns the inner ExecError itself: its text, then what it wraps.
        self.execute_nested(&tree, data).map_err(|e| {
            let mut chain = e.go_chain();
            let message = chain.remove(0);
            FuncError::wrapping(message, chain)
        })
    }

    fn tpl(&mut self, text: &str, data: &Value) -> Result<String, FuncError> {
        self.enter_nested()?;
        let funcs = self.funcs;
        let resolve = |name: &str| super::resolve(funcs, name);
        let trees = super::parse::parse(
            ROOT_NAME,
            text,
            &resolve,
            self.limits.max_parse_depth,
            // The parser's stack budget is what this execution has left.
            self.limits
                .max_stack_bytes
                .saturating_sub(self.stack_base.abs_diff(stack_addr())),
        )
        .map_err(|e| {
            if e.limit.is_some() {
                self.limit_hit = e.limit;
            }
            let error = TemplateError::parse(ROOT_NAME, e);
            FuncError::wrapping(
                format!("cannot parse template {}: {error}", go_quote(text)),
                vec![error.to_string()],
            )
        })?;
        let mut trees = trees.into_iter().map(Rc::new);
        let Some(main) = trees.next() else {
            return Ok(String::new());
        };
        let mut overlay = Trees::new();
        for tree in trees {
            let keep_old = tree.is_empty() && self.lookup(&tree.name).is_some_and(|old| !old.is_empty());
            if !keep_old {
                overlay.insert(tree.name.clone(), tree);
            }
        }
        self.overlays.push(overlay);
        let result = self.execute_nested(&main, data);
        self.overlays.pop();
        result.map_err(|e| {
            FuncError::wrapping(
                format!("error during tpl function execution for {}: {e}", go_quote(text)),
                e.go_chain(),
            )
        })
    }

    fn template_name(&self) -> String {
        self.top_name.to_string()
    }
}
