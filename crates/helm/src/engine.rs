//! Helm's rendering engine: every template of a chart and its subcharts parsed into one template set (in Helm's
//! order, so parent definitions override subchart ones), Helm's own functions on top of Sprig (`include`, `tpl`,
//! `required`, `fail`, `lookup`, `getHostByName`, the YAML/JSON/TOML family), every non-partial template executed
//! with the data its chart sees, and failures worded as Helm words them (`execution error at (file:line:col): …`,
//! the multi-line trace of nested `include`s, `parse error at (…): …`).
//!
//! The output is what Helm's `engine.Render` returns: template name → rendered text (with Go's `<no value>`
//! blanked), for every template that is not a partial.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use crate::charts::{Chart, TemplateJob, helm_template_order};
use crate::gotemplate::funcs::param_str;
use crate::gotemplate::{
    Arity, FuncError, FuncMap, LimitExceeded, Limits, Map, Runtime, TemplateError, Templates, Usage, Value,
};

/// How often one template may be included inside itself before Helm gives up (Helm's `recursionMaxNums`).
const MAX_INCLUDE_RECURSION: usize = 1000;

/// Helm's markers around `required`/`fail` messages, found again when the error reaches the top.
const WARN_START: &str = "HELM_ERR_START";
const WARN_END: &str = "HELM_ERR_END";

/// Why a chart could not be rendered, in Helm's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    /// The template that failed (`chart/templates/x.yaml`).
    pub template: String,
    /// Helm's message.
    pub message: String,
    /// The bound that stopped rendering and where, when a bound is why it failed.
    pub limit: Option<LimitExceeded>,
}

thread_local! {
    /// `include` depth per template name for the render running on this thread (Helm's `includedNames`).
    static INCLUDED: RefCell<HashMap<String, usize>> = RefCell::new(HashMap::new());
}

/// Every function a chart template can call: Sprig's, then Helm's own. Built once and shared by every render.
#[must_use]
pub fn helm_funcs() -> std::sync::Arc<FuncMap> {
    static FUNCS: std::sync::OnceLock<std::sync::Arc<FuncMap>> = std::sync::OnceLock::new();
    FUNCS
        .get_or_init(|| std::sync::Arc::new(build_helm_funcs()))
        .clone()
}

fn build_helm_funcs() -> FuncMap {
    let mut funcs = crate::sprig::sprig_funcs();
    crate::formats::funcs::register(&mut funcs);
    funcs.add("include", Arity::Exact(2), include);
    funcs.add("tpl", Arity::Exact(2), tpl);
    funcs.add("required", Arity::Exact(2), required);
    funcs.add("fail", Arity::Exact(1), fail);
    funcs.add("lookup", Arity::Exact(4), lookup);
    funcs.add("getHostByName", Arity::Exact(1), get_host_by_name);
    funcs
}

fn include(runtime: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let name = param_str(args.first().unwrap_or(&Value::Nil))?;
    let data = args.get(1).cloned().unwrap_or_default();
    let over = INCLUDED.with(|included| {
        let mut included = included.borrow_mut();
        let depth = included.entry(name.clone()).or_insert(0);
        if *depth > MAX_INCLUDE_RECURSION {
            return true;
        }
        *depth += 1;
        false
    });
    if over {
        return Err(FuncError::wrapping(
            format!("rendering template has a nested reference name: {name}: unable to execute template"),
            vec!["unable to execute template".to_string()],
        ));
    }
    let result = runtime.include(&name, &data);
    INCLUDED.with(|included| {
        if let Some(depth) = included.borrow_mut().get_mut(&name) {
            *depth = depth.saturating_sub(1);
        }
    });
    result.map(Value::from)
}

fn tpl(runtime: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(args.first().unwrap_or(&Value::Nil))?;
    let data = args.get(1).cloned().unwrap_or_default();
    // The executor parses and wraps errors as Helm's `tpl` does (`cannot parse template …`,
    // `error during tpl function execution for …`); Helm blanks `<no value>` in the result.
    let output = runtime.tpl(&text, &data)?;
    Ok(Value::from(blank_no_value(output)))
}

fn required(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let warn = param_str(args.first().unwrap_or(&Value::Nil))?;
    let value = args.get(1).cloned().unwrap_or_default();
    match &value {
        Value::Nil => Err(FuncError::new(format!("{WARN_START}{warn}{WARN_END}"))),
        Value::String(text) if text.is_empty() => {
            Err(FuncError::new(format!("{WARN_START}{warn}{WARN_END}")))
        }
        _ => Ok(value),
    }
}

fn fail(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let message = param_str(args.first().unwrap_or(&Value::Nil))?;
    Err(FuncError::new(format!("{WARN_START}{message}{WARN_END}")))
}

/// `lookup` reads nothing: offline rendering (`helm template`) answers an empty map, and emco renders once for many
/// clusters, so no single cluster's state may shape the manifests.
fn lookup(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    for arg in args {
        param_str(arg)?;
    }
    Ok(Value::Map(Map::new()))
}

/// `getHostByName` resolves nothing (Helm's default without `--enable-dns`): a chart must not make emco's host
/// query a name server of its choosing.
fn get_host_by_name(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    param_str(args.first().unwrap_or(&Value::Nil))?;
    Ok(Value::from(""))
}

/// Helm blanks Go's `<no value>` in what templates render. Most texts hold none: they are kept as they are, found
/// by a byte scan for `<` rather than a substring search that copies the whole text.
fn blank_no_value(text: String) -> String {
    const NO_VALUE: &str = "<no value>";
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|&b| b == b'<'))
    {
        let at = from + offset;
        if bytes[at..].starts_with(NO_VALUE.as_bytes()) {
            return text.replace(NO_VALUE, "");
        }
        from = at + 1;
    }
    text
}

/// Parses every job into one template set and executes each template that renders, both in the order given —
/// [`charts::template_jobs`](crate::charts::template_jobs)'s, which is Helm's. Returns template name → output.
///
/// The budgets of `limits` bound the render as a whole: `max_output_bytes` counts the output of every template
/// together, and `deadline` ends the last of them.
pub fn render_jobs(jobs: &[TemplateJob], limits: Limits) -> Result<BTreeMap<String, String>, EngineError> {
    INCLUDED.with(|included| included.borrow_mut().clear());
    let mut templates = Templates::new(helm_funcs()).with_limits(limits);
    for job in jobs {
        templates.parse(&job.name, &job.text).map_err(|err| EngineError {
            template: job.name.clone(),
            message: parse_error_message(&job.name, &err.to_string()),
            limit: None,
        })?;
    }
    let mut rendered = BTreeMap::new();
    let mut usage = Usage::default();
    for job in jobs.iter().filter(|job| job.renders) {
        let output = templates
            .execute_sharing(&job.name, &job.enter(), &mut usage)
            .map_err(|err| EngineError {
                template: job.name.clone(),
                message: exec_error_message(&job.name, &err),
                limit: err.limit_exceeded(),
            })?;
        rendered.insert(job.name.clone(), blank_no_value(output));
    }
    Ok(rendered)
}

/// Parses every template of `chart` and its subcharts (as found, before values decide which subcharts are
/// enabled) without executing any: what can be known about a chart before its values are. A syntax error is
/// Helm's `parse error at (file:line): …`.
pub fn check_templates(chart: &Chart) -> Result<(), EngineError> {
    let mut named = Vec::new();
    collect_templates(chart, chart.name(), &mut named, 0);
    named.sort_by(|a, b| helm_template_order(&a.0, &b.0));
    let mut templates = Templates::new(helm_funcs());
    for (name, text) in &named {
        templates.parse(name, text).map_err(|err| EngineError {
            template: name.clone(),
            message: parse_error_message(name, &err.to_string()),
            limit: None,
        })?;
    }
    Ok(())
}

fn collect_templates(chart: &Chart, path: &str, out: &mut Vec<(String, String)>, depth: usize) {
    if depth > crate::charts::MAX_CHART_DEPTH {
        return;
    }
    for template in &chart.templates {
        out.push((
            format!("{path}/{}", template.name),
            String::from_utf8_lossy(&template.data).into_owned(),
        ));
    }
    for sub in &chart.dependencies {
        collect_templates(sub, &format!("{path}/charts/{}", sub.name()), out, depth + 1);
    }
}

/// Helm's `cleanupParseError`: `parse error at (LOCATION): MESSAGE`.
fn parse_error_message(file: &str, go_message: &str) -> String {
    let tokens: Vec<&str> = go_message.split(": ").collect();
    match (tokens.get(1), tokens.last()) {
        (Some(location), Some(last)) => format!("parse error at ({location}): {last}"),
        _ => format!("parse error in ({file}): {go_message}"),
    }
}

/// Helm's `reformatExecErrorMsg` over the Go error chain of a failed execution.
fn exec_error_message(file: &str, err: &TemplateError) -> String {
    let chain = err.go_chain();
    let Some(first) = chain.first() else {
        return format!("execution error in ({file}): {err}");
    };
    let tokens: Vec<&str> = first.splitn(3, ": ").collect();
    let [_, location, rest] = tokens.as_slice() else {
        return format!("execution error in ({file}): {first}");
    };
    if let Some(start) = rest.find(WARN_START) {
        let after = &rest[start + WARN_START.len()..];
        if let Some(end) = after.rfind(WARN_END) {
            return format!("execution error at ({location}): {}", &after[..end]);
        }
    }
    let mut traces: Vec<Trace> = Vec::new();
    for message in &chain {
        let Some(trace) = Trace::parse(message) else {
            return first.clone();
        };
        if traces.last() != Some(&trace) {
            traces.push(trace);
        }
    }
    let mut out = String::new();
    for trace in &traces {
        trace.write(&mut out);
    }
    out.trim().to_string()
}

/// One level of Helm's `TraceableError`.
#[derive(Debug, PartialEq, Eq)]
struct Trace {
    location: String,
    message: String,
    executed: String,
}

impl Trace {
    fn parse(text: &str) -> Option<Trace> {
        let remainder = text.strip_prefix("template: ")?;
        if remainder.starts_with("no template ") {
            return Some(Trace {
                location: String::new(),
                message: text.to_string(),
                executed: String::new(),
            });
        }
        if let Some((location, after)) = remainder.split_once(": executing ") {
            let after = after.strip_prefix('"')?;
            let end = after.find('"')?;
            let function = &after[..end];
            let after_at = after[end + 1..].strip_prefix(" at <")?;
            let (node, message) = after_at.split_once(">: ")?;
            let message = message.find(" template:").map_or(message, |cut| &message[..cut]);
            return Some(Trace {
                location: location.to_string(),
                message: message.to_string(),
                executed: format!("executing \"{function}\" at <{node}>:"),
            });
        }
        let separator = remainder.rfind(": ")?;
        let message = &remainder[separator + 2..];
        let message = message.find(" template:").map_or(message, |cut| &message[..cut]);
        Some(Trace {
            location: remainder[..separator].to_string(),
            message: message.to_string(),
            executed: String::new(),
        })
    }

    fn write(&self, out: &mut String) {
        if !self.location.is_empty() {
            out.push_str(&self.location);
            out.push_str("\n  ");
        }
        if !self.executed.is_empty() {
            out.push_str(&self.executed);
            out.push_str("\n    ");
        }
        if !self.message.is_empty() {
            out.push_str(&self.message);
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_no_value_only_where_it_is() {
        assert_eq!(
            blank_no_value("a: <no value>\nb: <x> <no value>".into()),
            "a: \nb: <x> "
        );
        assert_eq!(blank_no_value("a: <no val".into()), "a: <no val");
        assert_eq!(blank_no_value("<<no value>>".into()), "<>");
        assert_eq!(blank_no_value(String::new()), "");
    }

    #[test]
    fn sorts_templates_as_helm_does() {
        let mut names = vec![
            "p/templates/b.yaml",
            "p/charts/s/templates/a.yaml",
            "p/templates/_h.tpl",
            "p/templates/a.yaml",
        ];
        names.sort_by(|a, b| helm_template_order(a, b));
        assert_eq!(
            names,
            [
                "p/charts/s/templates/a.yaml",
                "p/templates/b.yaml",
                "p/templates/a.yaml",
                "p/templates/_h.tpl"
            ]
        );
    }

    #[test]
    fn formats_parse_errors_as_helm() {
        assert_eq!(
            parse_error_message(
                "c/templates/a.yaml",
                "template: c/templates/a.yaml:3: unexpected \"}\" in operand"
            ),
            "parse error at (c/templates/a.yaml:3): unexpected \"}\" in operand"
        );
    }

    #[test]
    fn traces_nested_errors_as_helm() {
        let chain = [
            "template: k/templates/c.yaml:46:16: executing \"k/templates/c.yaml\" at <include \"x\" .>: error calling include: template: no template \"x\" associated with template \"gotpl\"",
            "template: k/templates/c.yaml:46:16: executing \"k/templates/c.yaml\" at <include \"x\" .>: error calling include: template: no template \"x\" associated with template \"gotpl\"",
            "template: no template \"x\" associated with template \"gotpl\"",
        ];
        let mut out = String::new();
        let mut traces: Vec<Trace> = Vec::new();
        for text in chain {
            let trace = Trace::parse(text).expect("parses");
            if traces.last() != Some(&trace) {
                traces.push(trace);
            }
        }
        for trace in &traces {
            trace.write(&mut out);
        }
        assert_eq!(
            out.trim(),
            "k/templates/c.yaml:46:16\n  executing \"k/templates/c.yaml\" at <include \"x\" .>:\n    error calling include:\ntemplate: no template \"x\" associated with template \"gotpl\""
        );
    }
}
