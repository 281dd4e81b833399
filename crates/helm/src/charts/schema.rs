//! `values.schema.json` validation as Helm's `ValidateAgainstSchema` does it: every chart's schema against its
//! scoped values (subcharts against `values[sub]`), errors worded and nested like `santhosh-tekuri/jsonschema` v6
//! (`- at '/replicas': got string, want integer`, `validation failed` groups), under Helm's heading.
//!
//! The validator is the `jsonschema` crate with no resolvers: a `$ref` to anything outside the schema is refused,
//! never fetched (Helm would fetch `http(s)://` and `file://` references).

use serde_json::Value as Json;

use super::{Chart, ChartError};
use jsonschema::error::{TypeKind, ValidationErrorKind};

/// Refuses every external reference.
struct NoRetrieve;

impl jsonschema::Retrieve for NoRetrieve {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Json, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("external schema reference {uri} is not loaded (no network or file access)").into())
    }
}

/// Helm's `ValidateAgainstSchema` with the message `helm template` prints.
pub fn validate_against_schema(chart: &Chart, values: &Json) -> Result<(), ChartError> {
    let mut out = String::new();
    validate_chart(chart, values, &mut out, 0);
    if out.is_empty() {
        Ok(())
    } else {
        Err(ChartError::Schema(format!(
            "values don't meet the specifications of the schema(s) in the following chart(s):\n{out}"
        )))
    }
}

fn go_type_name(json: &Json) -> &'static str {
    match json {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}

fn validate_chart(chart: &Chart, values: &Json, out: &mut String, depth: usize) {
    if depth > super::load::MAX_CHART_DEPTH {
        return;
    }
    if let Some(schema) = &chart.schema
        && let Err(message) = validate_single(values, schema)
    {
        out.push_str(&format!("{}:\n{message}", chart.name()));
    }
    for sub in &chart.dependencies {
        match values.get(sub.name()) {
            None | Some(Json::Null) => {}
            Some(scoped @ Json::Object(_)) => validate_chart(sub, scoped, out, depth + 1),
            Some(other) => out.push_str(&format!(
                "{}:\ninvalid type for values: expected object (map), got {}\n",
                sub.name(),
                go_type_name(other)
            )),
        }
    }
}

/// One node of santhosh-tekuri's error tree.
struct Node {
    location: String,
    message: String,
    children: Vec<Node>,
}

/// Validates `values` against one schema; `Err` is the error text Helm prints for it (ending in a newline).
fn validate_single(values: &Json, schema: &[u8]) -> Result<(), String> {
    let schema: Json = serde_json::from_slice(schema).map_err(|err| format!("{err}"))?;
    let validator = jsonschema::options()
        .should_validate_formats(false)
        .with_retriever(NoRetrieve)
        .build(&schema)
        .map_err(|err| format!("jsonschema: failed to compile file:///values.schema.json: {err}"))?;
    let errors: Vec<jsonschema::ValidationError<'_>> = validator.iter_errors(values).collect();
    if errors.is_empty() {
        return Ok(());
    }
    let nodes = merge_required(to_nodes(&errors));
    let grouped = group(nodes, "");
    let mut lines = Vec::new();
    for node in &grouped {
        print_node(node, 0, &mut lines);
    }
    Err(format!("{}\n", lines.join("\n")))
}

fn print_node(node: &Node, indent: usize, lines: &mut Vec<String>) {
    lines.push(format!(
        "{}- at '{}': {}",
        "  ".repeat(indent),
        node.location,
        node.message
    ));
    for child in &node.children {
        print_node(child, indent + 1, lines);
    }
}

/// santhosh-tekuri's nesting: errors under one property with more than one error become a `validation failed`
/// node at that property.
fn group(nodes: Vec<Node>, base: &str) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    let mut groups: Vec<(String, Vec<Node>)> = Vec::new();
    for node in nodes {
        if node.location == base || !node.location.starts_with(&format!("{base}/")) {
            out.push(node);
            continue;
        }
        let rest = &node.location[base.len() + 1..];
        let segment = rest.split('/').next().unwrap_or(rest).to_string();
        match groups.iter_mut().find(|(name, _)| *name == segment) {
            Some((_, members)) => members.push(node),
            None => groups.push((segment, vec![node])),
        }
    }
    for (segment, mut members) in groups {
        if members.len() == 1 {
            out.extend(members.pop());
        } else {
            let location = format!("{base}/{segment}");
            let children = group(members, &location);
            out.push(Node {
                location,
                message: "validation failed".into(),
                children,
            });
        }
    }
    out
}

fn quote_value(json: &Json) -> String {
    match json {
        Json::String(text) => format!("'{text}'"),
        Json::Null => "<nil>".into(),
        Json::Number(number) => number_text(number),
        other => other.to_string(),
    }
}

fn number_text(number: &serde_json::Number) -> String {
    if number.is_f64() {
        super::tree::format_g(number.as_f64().unwrap_or(0.0), false)
    } else {
        number.to_string()
    }
}

fn json_type_name(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn want_types(kind: &TypeKind) -> String {
    let order = [
        "null", "boolean", "number", "integer", "string", "array", "object",
    ];
    let mut names: Vec<String> = match kind {
        TypeKind::Single(one) => vec![one.to_string()],
        TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
    };
    names.sort_by_key(|name| order.iter().position(|o| o == name).unwrap_or(order.len()));
    names.join(" or ")
}

fn limit_text(value: &Json) -> String {
    match value {
        Json::Number(number) => number_text(number),
        other => other.to_string(),
    }
}

fn to_nodes(errors: &[jsonschema::ValidationError<'_>]) -> Vec<Node> {
    // A failed `type` makes santhosh-tekuri skip the other keywords of that schema object.
    let type_failures: Vec<String> = errors
        .iter()
        .filter(|err| matches!(err.kind(), ValidationErrorKind::Type { .. }))
        .filter_map(|err| {
            let path = err.schema_path().as_str();
            path.strip_suffix("/type").map(|parent| format!("{parent}/"))
        })
        .collect();
    errors
        .iter()
        .filter(|err| {
            let path = err.schema_path().as_str();
            matches!(err.kind(), ValidationErrorKind::Type { .. })
                || !type_failures
                    .iter()
                    .any(|prefix| path.starts_with(prefix.as_str()))
        })
        .fold(Vec::new(), |mut nodes: Vec<Node>, err| {
            let node = to_node(err);
            match all_of_scope(err.schema_path().as_str(), &node.location) {
                None => nodes.push(node),
                Some((key, location)) => {
                    let message = format!("'allOf' failed{ALL_OF_MARK}{key}");
                    match nodes
                        .iter_mut()
                        .find(|n| n.message == message && n.location == location)
                    {
                        Some(group) => group.children.push(node),
                        None => nodes.push(Node {
                            location,
                            message,
                            children: vec![node],
                        }),
                    }
                }
            }
            nodes
        })
        .into_iter()
        .map(|mut node| {
            if let Some(index) = node.message.find(ALL_OF_MARK) {
                node.message.truncate(index);
            }
            node
        })
        .collect()
}

/// Separates the `allOf` group key from its message until the groups are built.
const ALL_OF_MARK: char = '\u{1}';

/// For an error under an `allOf` branch: the `allOf` keyword's schema path and the instance location it applies
/// to (the error's location less one segment per instance-descending keyword after the branch).
fn all_of_scope(schema_path: &str, location: &str) -> Option<(String, String)> {
    let index = schema_path.find("/allOf/")?;
    let key = schema_path[..index + "/allOf".len()].to_string();
    let after: Vec<&str> = schema_path[index + "/allOf/".len()..]
        .split('/')
        .skip(1)
        .collect();
    let mut hops = 0;
    let mut position = 0;
    while position < after.len() {
        match after[position] {
            "properties" | "patternProperties" | "prefixItems" | "dependentSchemas" => {
                if after[position] != "dependentSchemas" {
                    hops += 1;
                }
                position += 2;
            }
            "items"
            | "additionalProperties"
            | "additionalItems"
            | "contains"
            | "unevaluatedProperties"
            | "unevaluatedItems" => {
                hops += 1;
                position += 1;
                if after
                    .get(position)
                    .is_some_and(|segment| segment.parse::<usize>().is_ok())
                {
                    position += 1;
                }
            }
            _ => position += 1,
        }
    }
    let mut segments: Vec<&str> = location.split('/').collect();
    for _ in 0..hops {
        if segments.len() > 1 {
            segments.pop();
        }
    }
    Some((key, segments.join("/")))
}

fn to_node(err: &jsonschema::ValidationError<'_>) -> Node {
    let location = err.instance_path().as_str().to_string();
    let instance: &Json = err.instance();
    let mut children = Vec::new();
    let message = match err.kind() {
        ValidationErrorKind::Type { kind } => {
            format!("got {}, want {}", json_type_name(instance), want_types(kind))
        }
        ValidationErrorKind::Required { property } => format!("missing property {}", quote_value(property)),
        ValidationErrorKind::Enum { options } => match options.as_ref() {
            Json::Array(items) => format!(
                "value must be one of {}",
                items.iter().map(quote_value).collect::<Vec<_>>().join(", ")
            ),
            other => format!("value must be one of {}", quote_value(other)),
        },
        ValidationErrorKind::Constant { expected_value } => match expected_value.as_ref() {
            Json::Object(_) | Json::Array(_) => "'const' failed".into(),
            other => format!("value must be {}", quote_value(other)),
        },
        ValidationErrorKind::Minimum { limit } => format!(
            "minimum: got {}, want {}",
            limit_text(instance),
            limit_text(limit)
        ),
        ValidationErrorKind::Maximum { limit } => format!(
            "maximum: got {}, want {}",
            limit_text(instance),
            limit_text(limit)
        ),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!(
                "exclusiveMinimum: got {}, want {}",
                limit_text(instance),
                limit_text(limit)
            )
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!(
                "exclusiveMaximum: got {}, want {}",
                limit_text(instance),
                limit_text(limit)
            )
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!(
                "multipleOf: got {}, want {}",
                limit_text(instance),
                super::tree::format_g(*multiple_of, false)
            )
        }
        ValidationErrorKind::MinLength { limit } => {
            format!(
                "minLength: got {}, want {limit}",
                instance.as_str().map_or(0, |s| s.chars().count())
            )
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!(
                "maxLength: got {}, want {limit}",
                instance.as_str().map_or(0, |s| s.chars().count())
            )
        }
        ValidationErrorKind::MinItems { limit } => {
            format!(
                "minItems: got {}, want {limit}",
                instance.as_array().map_or(0, Vec::len)
            )
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!(
                "maxItems: got {}, want {limit}",
                instance.as_array().map_or(0, Vec::len)
            )
        }
        ValidationErrorKind::MinProperties { limit } => {
            format!(
                "minProperties: got {}, want {limit}",
                instance.as_object().map_or(0, serde_json::Map::len)
            )
        }
        ValidationErrorKind::MaxProperties { limit } => {
            format!(
                "maxProperties: got {}, want {limit}",
                instance.as_object().map_or(0, serde_json::Map::len)
            )
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{} does not match pattern '{pattern}'", quote_value(instance))
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => format!(
            "additional properties {} not allowed",
            unexpected
                .iter()
                .map(|name| format!("'{name}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ValidationErrorKind::UniqueItems => {
            let items = instance.as_array().map(Vec::as_slice).unwrap_or_default();
            let mut pair = (0, 0);
            'outer: for (i, a) in items.iter().enumerate() {
                for (j, b) in items.iter().enumerate().skip(i + 1) {
                    if a == b {
                        pair = (i, j);
                        break 'outer;
                    }
                }
            }
            format!("items at {} and {} are equal", pair.0, pair.1)
        }
        ValidationErrorKind::Not { .. } => "'not' failed".into(),
        ValidationErrorKind::FalseSchema => "false schema".into(),
        ValidationErrorKind::Contains => "no items match contains schema".into(),
        ValidationErrorKind::AnyOf { context } => {
            children = context.iter().flatten().map(|e| to_node(e)).collect();
            "'anyOf' failed".into()
        }
        ValidationErrorKind::OneOfNotValid { context } => {
            children = context.iter().flatten().map(|e| to_node(e)).collect();
            "'oneOf' failed, none matched".into()
        }
        ValidationErrorKind::OneOfMultipleValid { context } => {
            let matched: Vec<String> = context
                .iter()
                .enumerate()
                .filter(|(_, errors)| errors.is_empty())
                .map(|(index, _)| index.to_string())
                .collect();
            if matched.len() > 1 {
                format!("'oneOf' failed, subschemas {} matched", matched.join(", "))
            } else {
                "'oneOf' failed, more than one matched".into()
            }
        }
        ValidationErrorKind::PropertyNames { error } => {
            let mut inner = to_node(error);
            inner.location = String::new();
            children.push(inner);
            return Node {
                location: String::new(),
                message: format!("invalid propertyName {}", quote_value(error.instance())),
                children,
            };
        }
        other => {
            if let ValidationErrorKind::Custom { message, .. } = other {
                message.clone()
            } else {
                err.to_string()
            }
        }
    };
    Node {
        location,
        message,
        children,
    }
}

/// Joins `missing property` errors at one location into santhosh-tekuri's `missing properties 'a', 'b'`.
fn merge_required(nodes: Vec<Node>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for node in nodes {
        if let Some(name) = node.message.strip_prefix("missing property ")
            && let Some(existing) = out.iter_mut().find(|n| {
                n.location == node.location
                    && (n.message.starts_with("missing property ")
                        || n.message.starts_with("missing properties "))
            })
        {
            let names = existing
                .message
                .trim_start_matches("missing properties ")
                .trim_start_matches("missing property ")
                .to_string();
            existing.message = format!("missing properties {names}, {name}");
            continue;
        }
        out.push(node);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::charts::Metadata;

    fn chart(name: &str, schema: &str, deps: Vec<Chart>) -> Chart {
        Chart {
            metadata: Metadata {
                name: name.into(),
                version: "0.1.0".into(),
                api_version: "v2".into(),
                ..Metadata::default()
            },
            values: json!({}).into(),
            schema: Some(schema.as_bytes().to_vec()),
            templates: Vec::new(),
            files: Vec::new(),
            dependencies: deps,
        }
    }

    #[test]
    fn errors_read_like_helms() {
        // Helm v4.2.3's text for the same schema and values (its order of sibling errors is Go-map random).
        let sub = chart(
            "sc",
            r#"{"type":"object","properties":{"port":{"type":"integer"}},"required":["port"]}"#,
            vec![],
        );
        let top = chart(
            "p3",
            r#"{"type":"object","required":["replicas","name"],"properties":{"replicas":{"type":"integer","minimum":1},
               "tags":{"type":"array","items":{"type":"string"},"maxItems":2},
               "obj":{"type":"object","additionalProperties":false,"properties":{"k":{"type":"string","pattern":"^x"}}}}}"#,
            vec![sub],
        );
        let values = json!({"replicas": "two", "tags": [1, "a", "b"], "obj": {"k": "y", "extra": 1}, "sc": {"port": "x"}});
        let err = validate_against_schema(&top, &values).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "values don't meet the specifications of the schema(s) in the following chart(s):\np3:\n"
            ),
            "{err}"
        );
        for line in [
            "- at '': missing property 'name'\n",
            "- at '/tags': validation failed\n",
            "  - at '/tags/0': got number, want string\n",
            "  - at '/tags': maxItems: got 3, want 2\n",
            "- at '/obj': validation failed\n",
            "  - at '/obj/k': 'y' does not match pattern '^x'\n",
            "  - at '/obj': additional properties 'extra' not allowed\n",
            "- at '/replicas': got string, want integer\n",
            "sc:\n- at '/port': got string, want integer\n",
        ] {
            assert!(err.contains(line), "{line:?} missing from:\n{err}");
        }
        assert!(
            !err.contains("minimum"),
            "a failed type hides the other keywords:\n{err}"
        );
        assert!(validate_against_schema(&top, &json!({"replicas": 2, "name": "x"})).is_ok());
    }

    #[test]
    fn all_of_and_one_of_read_like_helms() {
        // Helm v4.2.3 printed these lines for the same schema and values.
        let top = chart(
            "p3",
            r#"{"type":"object","properties":{"all":{"allOf":[{"type":"string"},{"minLength":2}]},
               "all3":{"allOf":[{"properties":{"x":{"type":"string"}}},{"required":["y"]}]},
               "one":{"oneOf":[{"type":"string"},{"minimum":3}]}},"allOf":[{"required":["zz"]}]}"#,
            vec![],
        );
        let err = validate_against_schema(&top, &json!({"all": "a", "all3": {"x": 1}, "one": "s"}))
            .unwrap_err()
            .to_string();
        for line in [
            "- at '/one': 'oneOf' failed, subschemas 0, 1 matched\n",
            "- at '/all': 'allOf' failed\n  - at '/all': minLength: got 1, want 2\n",
            "- at '/all3': 'allOf' failed\n",
            "  - at '/all3/x': got number, want string\n",
            "  - at '/all3': missing property 'y'\n",
            "- at '': 'allOf' failed\n  - at '': missing property 'zz'\n",
        ] {
            assert!(err.contains(line), "{line:?} missing from:\n{err}");
        }
    }

    #[test]
    fn remote_refs_are_never_fetched() {
        let top = chart("r", r#"{"$ref":"https://example.invalid/schema.json"}"#, vec![]);
        let err = validate_against_schema(&top, &json!({})).unwrap_err().to_string();
        assert!(err.contains("r:\n"), "{err}");
    }
}
