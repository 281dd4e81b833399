//! The YAML reader: `sigs.k8s.io/yaml.Unmarshal` into `interface{}` — go-yaml v2's YAML 1.1 scalar resolution,
//! merge keys, keys stringified as `sigs.k8s.io/yaml` does — over the event parser of `granit-parser` (the
//! panic-free saphyr fork that `serde-saphyr` is built on). We resolve plain scalars ourselves: the parser hands
//! over each scalar's text with its style and tag, which is all YAML 1.1 resolution needs.
//!
//! Bounds: input size ([`MAX_INPUT_BYTES`]), nesting depth ([`MAX_DEPTH`]) and the number of nodes that aliases may
//! expand to ([`MAX_EXPANDED_NODES`]; a billion-laughs document is an error, never gigabytes).

use std::collections::HashMap;
use std::rc::Rc;

use granit_parser::{Event, Parser, ScalarStyle, ScanError};
use serde_json::{Map as JsonMap, Number, Value as Json};

use super::YamlError;
use super::resolve::{Resolved, resolve};
use crate::formats::json::format_g;

/// The largest YAML text read.
pub const MAX_INPUT_BYTES: usize = 64 << 20;
/// The deepest nesting of collections.
pub const MAX_DEPTH: usize = 1_000;
/// How many nodes a document may expand to once aliases are followed.
pub const MAX_EXPANDED_NODES: usize = 4_000_000;

/// A parsed node. Children are held directly (one allocation per collection, not per node); only an anchored
/// node is shared, between its place in the tree ([`Node::Anchored`]) and the aliases to it.
#[derive(Debug)]
enum Node {
    Scalar {
        text: String,
        plain: bool,
        tag: Option<String>,
        line: usize,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
    /// An alias of an anchored node (counted apart: go-yaml bounds how much of a document aliases may make).
    Alias(Rc<Node>),
    /// A node with an anchor, where it stands in the tree: the node itself in every respect (see [`plain`]).
    Anchored(Rc<Node>),
}

/// go-yaml v2's guard against alias bombs (`allowedAliasRatio`): once past 1,000 decoded nodes and 100 nodes
/// reached through aliases, the share of the latter may be 99% for documents up to 400,000 nodes, falling to 10%
/// at 4,000,000; beyond [`MAX_EXPANDED_NODES`] everything is refused.
struct Budget {
    decoded: usize,
    aliased: usize,
    alias_depth: usize,
}

impl Budget {
    fn new() -> Self {
        Self {
            decoded: 0,
            aliased: 0,
            alias_depth: 0,
        }
    }

    fn count(&mut self) -> Result<(), String> {
        self.decoded += 1;
        if self.alias_depth > 0 {
            self.aliased += 1;
        }
        let allowed = match self.decoded {
            0..=400_000 => 0.99,
            4_000_000.. => 0.10,
            n => 0.99 - 0.89 * ((n - 400_000) as f64 / 3_600_000.0),
        };
        if self.decoded > MAX_EXPANDED_NODES
            || (self.aliased > 100
                && self.decoded > 1000
                && self.aliased as f64 / self.decoded as f64 > allowed)
        {
            return Err("yaml: document contains excessive aliasing".into());
        }
        Ok(())
    }
}

/// The node itself, seen through the sharing of an anchored node.
fn plain(node: &Node) -> &Node {
    match node {
        Node::Anchored(inner) => inner,
        other => other,
    }
}

/// The node an alias stands for.
fn target(node: &Node) -> &Node {
    match plain(node) {
        Node::Alias(target) => target,
        other => other,
    }
}

/// Every document of `text` (a document without content is `None`).
pub(crate) fn documents(text: &str) -> Result<Vec<Option<Json>>, YamlError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(YamlError(format!(
            "error converting YAML to JSON: yaml: input of {} bytes exceeds the limit of {MAX_INPUT_BYTES} bytes",
            text.len()
        )));
    }
    let nodes =
        parse_nodes(text).map_err(|err| YamlError(format!("error converting YAML to JSON: {err}")))?;
    let mut out = Vec::new();
    for node in nodes {
        match node {
            None => out.push(None),
            Some(node) => {
                let mut budget = Budget::new();
                let json = to_json(&node, 0, &mut budget)
                    .map_err(|err| YamlError(format!("error converting YAML to JSON: {err}")))?;
                out.push(Some(json));
            }
        }
    }
    Ok(out)
}

/// Only the first document, as go-yaml's `Unmarshal` reads it (`null` when there is none).
pub(crate) fn first_document(text: &str) -> Result<Json, YamlError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(YamlError(format!(
            "error converting YAML to JSON: yaml: input of {} bytes exceeds the limit of {MAX_INPUT_BYTES} bytes",
            text.len()
        )));
    }
    let node = parse_first(text).map_err(|err| YamlError(format!("error converting YAML to JSON: {err}")))?;
    match node {
        None => Ok(Json::Null),
        Some(node) => {
            let mut budget = Budget::new();
            to_json(&node, 0, &mut budget)
                .map_err(|err| YamlError(format!("error converting YAML to JSON: {err}")))
        }
    }
}

/// go-yaml's words and line numbering for a parse error. go-yaml numbers scanner errors from 1 but parser errors
/// from 0 (a quirk of `yaml.v2`'s `fail`), prints no line for line 0, and reports errors found at the end of the
/// input at the end-of-stream position (after a forced line break).
fn scan_error(err: &ScanError, text: &str) -> String {
    use granit_parser::ErrorKind as K;
    let granit_line = err.marker().line();
    let breaks = text.matches('\n').count();
    let eof_forced = breaks + usize::from(!text.is_empty() && !text.ends_with('\n'));
    // (message, go-yaml's 0-based line, whether a scanner error)
    let (message, line0, scanner): (String, usize, bool) = match err.kind() {
        K::UnclosedFlowCollection { open: '{' } => {
            ("did not find expected ',' or '}'".into(), eof_forced, false)
        }
        K::UnclosedFlowCollection { .. } => ("did not find expected ',' or ']'".into(), eof_forced, false),
        K::UnclosedQuotedScalar => ("found unexpected end of stream".into(), breaks, true),
        K::SimpleKeyExpected | K::InvalidSimpleKey => {
            ("could not find expected ':'".into(), eof_forced, true)
        }
        K::MappingValueNotAllowed => (
            "mapping values are not allowed in this context".into(),
            granit_line.saturating_sub(1),
            true,
        ),
        K::ExpectedFlowSequenceSeparator => (
            "did not find expected ',' or ']'".into(),
            granit_line.saturating_sub(1),
            false,
        ),
        K::ExpectedFlowMappingSeparator => (
            "did not find expected ',' or '}'".into(),
            granit_line.saturating_sub(1),
            false,
        ),
        K::ExpectedBlockMappingKey => (
            "did not find expected key".into(),
            granit_line.saturating_sub(1),
            false,
        ),
        K::ExpectedBlockSequenceEntry => (
            "did not find expected '-' indicator".into(),
            granit_line.saturating_sub(1),
            false,
        ),
        K::ExpectedNodeContent => (
            "did not find expected node content".into(),
            granit_line.saturating_sub(1),
            false,
        ),
        K::TabInPlainScalar => (
            "found a tab character that violates indentation".into(),
            granit_line,
            true,
        ),
        K::TabInIndentation | K::TabInBlockIndentation | K::TabNotAllowed => (
            "found character that cannot start any token".into(),
            granit_line.saturating_sub(1),
            true,
        ),
        K::UnexpectedCharacter { .. } => (
            "found character that cannot start any token".into(),
            granit_line.saturating_sub(1),
            true,
        ),
        K::UnknownAnchor => {
            let name = alias_name(err, text);
            return format!("yaml: unknown anchor '{name}' referenced");
        }
        _ => {
            let info = err.info();
            // go-yaml prints the problem without libyaml's "while scanning …" context.
            let message = match info.split_once(", ") {
                Some((context, problem)) if context.starts_with("while ") => problem.to_string(),
                _ => info,
            };
            (message, granit_line.saturating_sub(1), true)
        }
    };
    let shown = if scanner && line0 != 0 { line0 + 1 } else { line0 };
    if line0 == 0 {
        format!("yaml: {message}")
    } else {
        format!("yaml: line {shown}: {message}")
    }
}

/// The name of the alias at an error's position (`*name`).
fn alias_name(err: &ScanError, text: &str) -> String {
    let offset = err.marker().byte_offset().unwrap_or_else(|| {
        text.char_indices()
            .nth(err.marker().index())
            .map_or(text.len(), |(i, _)| i)
    });
    let rest = text.get(offset..).unwrap_or_default();
    let rest = rest.strip_prefix('*').unwrap_or(rest);
    rest.chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
        .collect()
}

/// The parser's defaults without comment events: comments mean nothing to values, and capturing their text (on
/// by default when any crate of the build enables granit's `comments` feature) is a large share of reading a
/// commented `values.yaml`. Comments are still scanned and validated as YAML syntax.
fn parser_options() -> granit_parser::Options {
    let mut options = granit_parser::Options::default();
    options.set_emit_comments(false);
    options
}

struct Builder<'a> {
    text: &'a str,
    /// Whether only the first document is read (go-yaml's `Unmarshal`: what follows its root node is never parsed).
    first_only: bool,
    parser: Parser<'a, granit_parser::StrInput<'a>>,
    anchors: HashMap<usize, Rc<Node>>,
    /// Where a stray closing bracket was found (go-yaml stops reading before it when it follows the root node).
    misplaced_at: Option<usize>,
    /// Where a lone `-` in a flow collection was refused.
    dash_at: Option<usize>,
    /// Whether the last event covered no text (an empty document's null scalar).
    last_empty: bool,
    /// Where the last event's text starts.
    last_start: Option<usize>,
    /// Where the last event's text ends.
    last_end: Option<usize>,
}

fn parse_first(text: &str) -> Result<Option<Node>, String> {
    let mut text = std::borrow::Cow::Borrowed(text);
    let mut retries = 0;
    loop {
        let mut builder = Builder::new(&text, true);
        let result = builder
            .expect_stream_start()
            .and_then(|()| builder.next_document());
        let (misplaced, dash) = (builder.misplaced_at, builder.dash_at);
        drop(builder);
        match result {
            Ok(node) => return Ok(node.flatten()),
            Err(err) if retries >= MAX_RETRIES => return Err(err),
            Err(err) => {
                retries += 1;
                if let Some(fixed) = quote_dash(&text, dash) {
                    text = std::borrow::Cow::Owned(fixed);
                    continue;
                }
                match misplaced {
                    // go-yaml never reads past the first document's root node: a stray `]` or `}` after a flow
                    // collection is not an error there. Read again without it.
                    Some(offset) if offset > 0 && offset < text.len() && text.is_char_boundary(offset) => {
                        text = std::borrow::Cow::Owned(text[..offset].to_string());
                    }
                    _ => return Err(err),
                }
            }
        }
    }
}

/// How many times a text is read again after working around a YAML 1.2 rule that go-yaml (YAML 1.1) does not have.
const MAX_RETRIES: usize = 16;

/// go-yaml reads a lone `-` in a flow collection (`[a, -, b]`) as the string "-"; YAML 1.2 refuses it. Quote it.
fn quote_dash(text: &str, dash: Option<usize>) -> Option<String> {
    let offset = dash?;
    if text.as_bytes().get(offset) != Some(&b'-') {
        return None;
    }
    Some(format!("{}\"-\"{}", &text[..offset], &text[offset + 1..]))
}

fn parse_nodes(text: &str) -> Result<Vec<Option<Node>>, String> {
    let mut text = std::borrow::Cow::Borrowed(text);
    let mut retries = 0;
    loop {
        let mut builder = Builder::new(&text, false);
        let mut result = builder.expect_stream_start().map(|()| Vec::new());
        if let Ok(out) = &mut result {
            loop {
                match builder.next_document() {
                    Ok(Some(node)) => out.push(node),
                    Ok(None) => break,
                    Err(err) => {
                        result = Err(err);
                        break;
                    }
                }
            }
        }
        let dash = builder.dash_at;
        drop(builder);
        match result {
            Err(_) if retries < MAX_RETRIES && quote_dash(&text, dash).is_some() => {
                retries += 1;
                text = std::borrow::Cow::Owned(quote_dash(&text, dash).unwrap_or_default());
            }
            other => return other,
        }
    }
}

impl<'a> Builder<'a> {
    fn new(text: &'a str, first_only: bool) -> Self {
        Self {
            text,
            first_only,
            misplaced_at: None,
            dash_at: None,
            parser: Parser::new_from_str_with_options(text, parser_options()),
            anchors: HashMap::new(),
            last_empty: false,
            last_start: None,
            last_end: None,
        }
    }

    fn next(&mut self) -> Result<(Event<'a>, usize), String> {
        match self.parser.next_event() {
            None => Err("yaml: unexpected end of event stream".into()),
            Some(Err(err)) => {
                if matches!(err.kind(), granit_parser::ErrorKind::MisplacedFlowCollectionEnd) {
                    self.misplaced_at = err.marker().byte_offset();
                }
                if matches!(
                    err.kind(),
                    granit_parser::ErrorKind::PlainScalarStartsWithDashFlowIndicator
                ) {
                    self.dash_at = err.marker().byte_offset();
                }
                Err(scan_error(&err, self.text))
            }
            Some(Ok((event, span))) => {
                self.last_empty = span.start.index() == span.end.index();
                self.last_start = span.start.byte_offset();
                self.last_end = span.end.byte_offset();
                Ok((event, span.start.line()))
            }
        }
    }

    /// Whether the whitespace between the last event and the `-` before it holds a tab.
    fn tab_after_dash(&self) -> bool {
        let Some(start) = self.last_start else {
            return false;
        };
        let bytes = self.text.as_bytes();
        let mut i = start.min(bytes.len());
        let mut tab = false;
        while i > 0 && matches!(bytes[i - 1], b' ' | b'\t') {
            tab |= bytes[i - 1] == b'\t';
            i -= 1;
        }
        tab && i > 0 && bytes[i - 1] == b'-'
    }

    fn next_content(&mut self) -> Result<(Event<'a>, usize), String> {
        loop {
            let (event, line) = self.next()?;
            match event {
                #[allow(unreachable_patterns)]
                Event::Comment(..) | Event::Anchor(..) => continue,
                other => return Ok((other, line)),
            }
        }
    }

    fn expect_stream_start(&mut self) -> Result<(), String> {
        match self.next_content()? {
            (Event::StreamStart, _) => Ok(()),
            _ => Err("yaml: expected the stream to start".into()),
        }
    }

    /// The next document: `None` at the end of the stream, `Some(None)` for a document without content.
    fn next_document(&mut self) -> Result<Option<Option<Node>>, String> {
        let (event, _) = self.next_content()?;
        match event {
            Event::StreamEnd => Ok(None),
            Event::DocumentStart(..) => {
                self.anchors.clear();
                let (event, line) = self.next_content()?;
                if matches!(event, Event::DocumentEnd) {
                    return Ok(Some(None));
                }
                let empty = self.last_empty && matches!(event, Event::Scalar(_, ScalarStyle::Plain, 0, None));
                let node = self.node(event, line, 0)?;
                match self.next_content() {
                    Ok((Event::DocumentEnd, _)) => {}
                    Err(_) if self.first_only => {}
                    Err(err) => return Err(err),
                    Ok(_) => return Err("yaml: expected the document to end".into()),
                }
                // An empty document reads as a plain scalar that covers no text.
                if empty {
                    return Ok(Some(None));
                }
                Ok(Some(Some(node)))
            }
            _ => Err("yaml: expected a document".into()),
        }
    }

    /// `node` in the tree, shared with later aliases when it has an anchor.
    fn anchored(&mut self, node: Node, anchor: usize) -> Node {
        if anchor == 0 {
            return node;
        }
        let shared = Rc::new(node);
        self.anchors.insert(anchor, shared.clone());
        Node::Anchored(shared)
    }

    /// Whether the block scalar just read ends the input on a line of its own content with no line break after
    /// it (`a: |\n  x` at the end of a document; a last line of only indentation still ends with its break).
    fn block_ends_the_input_unbroken(&self) -> bool {
        if self.last_end != Some(self.text.len()) || self.text.ends_with(['\n', '\r']) {
            return false;
        }
        let last_line = self.text.rsplit(['\n', '\r']).next().unwrap_or_default();
        !last_line.trim_start_matches(' ').is_empty()
    }

    fn node(&mut self, event: Event<'a>, line: usize, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(format!("yaml: line {line}: exceeded max depth of {MAX_DEPTH}"));
        }
        match event {
            Event::Alias(id) => self
                .anchors
                .get(&id)
                .map(|node| Node::Alias(node.clone()))
                .ok_or_else(|| format!("yaml: line {line}: unknown anchor referenced")),
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|tag| format!("{}{}", tag.handle(), tag.suffix()));
                // go-yaml v2 reads NEL as a line break (YAML 1.1); the parser (YAML 1.2) keeps it as content.
                let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
                let mut text = if !text.contains('\u{85}') || !self.text.contains('\u{85}') {
                    text.into_owned()
                } else if block {
                    text.replace('\u{85}', "\n")
                } else {
                    super::write::fold_nel(&text)
                };
                if block && self.block_ends_the_input_unbroken() && text.ends_with('\n') {
                    // go-yaml keeps a block scalar's final line break (clip or keep chomping) only where the input
                    // has one: a scalar whose last line ends the input has none (Helm's manifests often end so).
                    text.pop();
                }
                let node = Node::Scalar {
                    text,
                    plain: style == ScalarStyle::Plain,
                    tag,
                    line,
                };
                Ok(self.anchored(node, anchor))
            }
            Event::SequenceStart(style, anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let (event, line) = self.next_content()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    if style == granit_parser::StructureStyle::Block && self.tab_after_dash() {
                        // go-yaml (YAML 1.1) does not skip a tab after `-` in block context.
                        return Err(if line > 1 {
                            format!("yaml: line {line}: found character that cannot start any token")
                        } else {
                            "yaml: found character that cannot start any token".into()
                        });
                    }
                    items.push(crate::formats::deeper(|| self.node(event, line, depth + 1))?);
                }
                Ok(self.anchored(Node::Seq(items), anchor))
            }
            Event::MappingStart(_, anchor, _) => {
                let mut entries = Vec::new();
                loop {
                    let (event, line) = self.next_content()?;
                    if matches!(event, Event::MappingEnd) {
                        break;
                    }
                    let key = crate::formats::deeper(|| self.node(event, line, depth + 1))?;
                    let (event, line) = self.next_content()?;
                    let value = crate::formats::deeper(|| self.node(event, line, depth + 1))?;
                    entries.push((key, value));
                }
                Ok(self.anchored(Node::Map(entries), anchor))
            }
            other => Err(format!("yaml: line {line}: unexpected event {other:?}")),
        }
    }
}

/// A scalar as go-yaml v2 decodes it into `interface{}`, already in JSON's terms.
fn scalar_json(text: &str, plain: bool, tag: Option<&str>, line: usize) -> Result<Json, String> {
    const CORE: &str = "tag:yaml.org,2002:";
    let tag = tag.map(|tag| {
        tag.strip_prefix(CORE)
            .map_or_else(|| tag.to_string(), |s| format!("!!{s}"))
    });
    let resolved = match tag.as_deref() {
        None if plain => resolve(text),
        None => Resolved::Str,
        Some("!!str") | Some("!") => Resolved::Str,
        Some("!!binary") => {
            use base64::Engine as _;
            let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(clean.as_bytes())
                .map_err(|_| format!("yaml: line {line}: !!binary value contains invalid base64 data"))?;
            return Ok(Json::String(String::from_utf8_lossy(&bytes).into_owned()));
        }
        Some(tag @ ("!!int" | "!!float" | "!!bool" | "!!null" | "!!timestamp")) => {
            let resolved = resolve(text);
            let fits = matches!(
                (&resolved, tag),
                (Resolved::Int(_) | Resolved::Uint(_), "!!int" | "!!float")
                    | (Resolved::Float(_), "!!float")
                    | (Resolved::Bool(_), "!!bool")
                    | (Resolved::Null, "!!null")
                    | (Resolved::Timestamp, "!!timestamp")
            );
            if !fits {
                return Err(format!("yaml: cannot decode !!str `{text}` as a {tag}"));
            }
            if tag == "!!float"
                && let Resolved::Int(int) = resolved
            {
                return float_json(int as f64);
            }
            resolved
        }
        // Other tags: go-yaml keeps the text.
        Some(_) => Resolved::Str,
    };
    Ok(match resolved {
        Resolved::Null => Json::Null,
        Resolved::Bool(flag) => Json::Bool(flag),
        Resolved::Int(int) => Json::from(int),
        Resolved::Uint(uint) => Json::from(uint),
        Resolved::Float(float) => float_json(float)?,
        Resolved::Timestamp | Resolved::Str => Json::String(text.to_string()),
    })
}

fn float_json(float: f64) -> Result<Json, String> {
    Number::from_f64(float)
        .map(Json::Number)
        .ok_or_else(|| format!("json: unsupported value: {}", format_g(float)))
}

/// A key as `sigs.k8s.io/yaml` stringifies it.
/// `None` for a null key (which `sigs.k8s.io/yaml` refuses, naming the value).
fn key_string(node: &Node, budget: &mut Budget) -> Result<Option<String>, String> {
    let Node::Scalar {
        text,
        plain,
        tag,
        line,
    } = target(node)
    else {
        let key = to_json(node, MAX_DEPTH - 8, budget).unwrap_or(Json::Null);
        return Err(format!("yaml: invalid map key: {}", go_sharp_v(&key, 0)));
    };
    Ok(Some(match scalar_json(text, *plain, tag.as_deref(), *line)? {
        Json::String(text) => text,
        Json::Bool(flag) => flag.to_string(),
        Json::Number(number) => {
            if let Some(int) = number.as_i64() {
                int.to_string()
            } else if let Some(uint) = number.as_u64() {
                uint.to_string()
            } else {
                // Go formats float keys with 32-bit precision.
                let float = number.as_f64().unwrap_or(0.0) as f32;
                format_g32(float)
            }
        }
        Json::Null => return Ok(None),
        other => other.to_string(),
    }))
}

/// Go's `%#v` of a decoded YAML value (as go-yaml's and `sigs.k8s.io/yaml`'s errors print keys and values).
fn go_sharp_v(json: &Json, depth: usize) -> String {
    if depth > 16 {
        return "...".into();
    }
    match json {
        Json::Null => "interface {}(nil)".into(),
        Json::Bool(flag) => flag.to_string(),
        Json::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(int), _) => int.to_string(),
            (None, Some(uint)) => format!("0x{uint:x}"),
            _ => format_g(number.as_f64().unwrap_or(0.0)),
        },
        Json::String(text) => format!("{text:?}"),
        Json::Array(items) => format!(
            "[]interface {{}}{{{}}}",
            items
                .iter()
                .map(|item| go_sharp_v(item, depth + 1))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Json::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            format!(
                "map[interface {{}}]interface {{}}{{{}}}",
                entries
                    .iter()
                    .map(|(key, value)| format!("{key:?}:{}", go_sharp_v(value, depth + 1)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 32)`.
fn format_g32(float: f32) -> String {
    if float.is_nan() {
        return ".nan".into();
    }
    if float.is_infinite() {
        return if float > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    // Shortest digits for f32, then Go's 'g' layout.
    let text = format!("{float:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if float != 0.0 && !(-4..6).contains(&exponent) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&format!(
            "e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        ));
    } else {
        let value: f64 = format!("{}e{}", digits, exponent - (digits.len() as i32 - 1))
            .parse()
            .unwrap_or(0.0);
        let _ = value;
        let point = exponent + 1;
        let n = digits.len() as i32;
        if float == 0.0 {
            out.push('0');
        } else if point <= 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat((-point) as usize));
            out.push_str(digits);
        } else if point >= n {
            out.push_str(digits);
            out.push_str(&"0".repeat((point - n) as usize));
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    }
    out
}

fn is_merge_key(node: &Node) -> bool {
    match plain(node) {
        Node::Scalar { text, plain, tag, .. } => {
            text == "<<" && (*plain && tag.is_none() || tag.as_deref() == Some("tag:yaml.org,2002:merge"))
        }
        _ => false,
    }
}

fn to_json(node: &Node, depth: usize, budget: &mut Budget) -> Result<Json, String> {
    if depth > MAX_DEPTH {
        return Err(format!("yaml: exceeded max depth of {MAX_DEPTH}"));
    }
    let node = plain(node);
    budget.count()?;
    match node {
        Node::Scalar {
            text,
            plain,
            tag,
            line,
        } => scalar_json(text, *plain, tag.as_deref(), *line),
        Node::Seq(items) => Ok(Json::Array(
            items
                .iter()
                .map(|item| crate::formats::deeper(|| to_json(item, depth + 1, budget)))
                .collect::<Result<_, _>>()?,
        )),
        Node::Map(entries) => {
            let mut map = JsonMap::new();
            fill_map(&mut map, entries, depth, budget)?;
            Ok(Json::Object(map))
        }
        Node::Alias(target) => {
            budget.alias_depth += 1;
            let result = crate::formats::deeper(|| to_json(target, depth + 1, budget));
            budget.alias_depth -= 1;
            result
        }
        // `plain` above has looked through it.
        Node::Anchored(inner) => to_json(inner, depth, budget),
    }
}

fn fill_map(
    map: &mut JsonMap<String, Json>,
    entries: &[(Node, Node)],
    depth: usize,
    budget: &mut Budget,
) -> Result<(), String> {
    for (key, value) in entries {
        if is_merge_key(key) {
            merge(map, value, depth, budget)?;
            continue;
        }
        let key = key_string(key, budget)?;
        let value = crate::formats::deeper(|| to_json(value, depth + 1, budget))?;
        let Some(key) = key else {
            return Err(format!(
                "unsupported map key of type: %!s(<nil>), key: <nil>, value: {}",
                go_sharp_v(&value, 0)
            ));
        };
        map.insert(key, value);
    }
    Ok(())
}

fn merge(
    map: &mut JsonMap<String, Json>,
    value: &Node,
    depth: usize,
    budget: &mut Budget,
) -> Result<(), String> {
    const WANT_MAP: &str = "yaml: map merge requires map or sequence of maps as the value";
    match plain(value) {
        Node::Map(entries) => fill_map(map, entries, depth + 1, budget),
        Node::Alias(target) if matches!(**target, Node::Map(_)) => {
            budget.alias_depth += 1;
            let result = merge(map, target, depth + 1, budget);
            budget.alias_depth -= 1;
            result
        }
        Node::Seq(items) => {
            // Earlier maps take precedence: go-yaml merges them last.
            for item in items.iter().rev() {
                match plain(item) {
                    Node::Map(_) | Node::Alias(_) if matches!(target(item), Node::Map(_)) => {
                        merge(map, item, depth + 1, budget)?;
                    }
                    _ => return Err(WANT_MAP.into()),
                }
            }
            Ok(())
        }
        _ => Err(WANT_MAP.into()),
    }
}
