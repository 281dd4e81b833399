//! Combined status (issue #17, seed 003 — KubeStellar's StatusCollector): the bodies of
//! `/v2/projects/{p}/status-collectors/{name}` (a small SQL-like query in CEL over the per-cluster reported state of
//! an object: filter, select or group by + COUNT/SUM/AVG/MIN/MAX, limit) and of a DIG's
//! `status-collection-intents/{name}` (which objects of the DIG the collectors are applied to, and whether an
//! object placed on one cluster gets that cluster's status back), with their structural checks.
//!
//! Pure: the CEL expressions are only bounded here; emco-status compiles them (`combined::compile`), so a syntax
//! error is refused at create too, naming the field.

use serde::{Deserialize, Serialize};

use crate::names::{validate_label_value, validate_name};
use crate::resources::{Metadata, ValidationError};

/// The longest CEL expression, in bytes.
pub const MAX_EXPRESSION_LEN: usize = 4096;
/// How many `select` + `groupBy` + `combinedFields` columns a collector may have.
pub const MAX_COLUMNS: usize = 32;
/// The largest `spec.limit`.
pub const MAX_LIMIT: u32 = 1000;
/// `spec.limit` when absent.
pub const DEFAULT_LIMIT: u32 = 20;
/// How many resources and collectors a status collection intent may name (each).
pub const MAX_INTENT_ENTRIES: usize = 64;
/// The longest `labelSelector`, in bytes.
pub const MAX_LABEL_SELECTOR_LEN: usize = 1024;
/// A label selector as the API document states it (`parse_label_selector`, without the spaces it also takes):
/// `key=value` pairs separated by commas, a value empty or a label value.
const LABEL_SELECTOR_PATTERN: &str = r"^[^\s=,]{1,317}=(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?(,[^\s=,]{1,317}=(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?)*$";

/// What is wrong with a status collector or status collection intent; every message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusCollectorError {
    /// The name breaks EMCO's name rule, or metadata is too long.
    #[error(transparent)]
    Metadata(#[from] ValidationError),
    /// A name in the spec breaks EMCO's name rule.
    #[error(transparent)]
    Name(#[from] crate::names::NameError),
    /// A required field is empty.
    #[error("{field} is required")]
    Missing {
        /// The field, as a JSON path (`spec.select[1].def`).
        field: String,
    },
    /// A field is too long, or a list too long.
    #[error("{field} is {len} {unit} long; at most {max} are allowed")]
    TooLong {
        /// The field.
        field: String,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
        /// `bytes` or `entries`.
        unit: &'static str,
    },
    /// Two fields that exclude each other were both given, or a field given where it has no meaning.
    #[error("{field}: {why}")]
    Invalid {
        /// The field.
        field: String,
        /// What is wrong.
        why: String,
    },
}

/// One named CEL expression (a `select` or `groupBy` column).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NamedExpression {
    /// The column's name.
    #[serde(default)]
    pub name: String,
    /// The CEL expression.
    #[serde(default)]
    pub def: String,
}

/// An aggregate function of `combinedFields`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum AggregateKind {
    /// How many rows (no subject).
    #[serde(rename = "COUNT")]
    Count,
    /// The sum of the subject.
    #[serde(rename = "SUM")]
    Sum,
    /// The mean of the subject.
    #[serde(rename = "AVG")]
    Avg,
    /// The smallest subject.
    #[serde(rename = "MIN")]
    Min,
    /// The largest subject.
    #[serde(rename = "MAX")]
    Max,
}

/// One aggregated column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CombinedField {
    /// The column's name.
    #[serde(default)]
    pub name: String,
    /// The aggregate function.
    #[serde(rename = "type")]
    pub kind: AggregateKind,
    /// What is aggregated (CEL); absent for COUNT, required otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// The spec of a status collector.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
// A table has columns: `select`, or `combinedFields` (the check requires one).
#[schemars(extend("anyOf" = [
    {"required": ["select"], "properties": {"select": {"type": "array", "minItems": 1}}},
    {"required": ["combinedFields"], "properties": {"combinedFields": {"type": "array", "minItems": 1}}}
]))]
pub struct StatusCollectorSpec {
    /// Which rows (clusters) count (CEL, boolean); absent: every row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// Plain selection: one output row per (filtered) cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub select: Vec<NamedExpression>,
    /// Grouping columns (with `combinedFields`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_by: Vec<NamedExpression>,
    /// Aggregated columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub combined_fields: Vec<CombinedField>,
    /// At most this many rows (1..=1000, default 20).
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    pub limit: u32,
}

fn default_limit() -> u32 {
    DEFAULT_LIMIT
}

/// A status collector: `{"metadata":{"name"},"spec":{…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
// A body without metadata (so without a name) is refused: the API document says it is required.
#[schemars(extend("required" = ["metadata"]))]
pub struct StatusCollector {
    /// Name and free text.
    #[serde(default)]
    pub metadata: Metadata,
    /// The query.
    #[serde(default)]
    pub spec: StatusCollectorSpec,
}

fn check_expression(field: &str, expression: &str) -> Result<(), StatusCollectorError> {
    if expression.trim().is_empty() {
        return Err(StatusCollectorError::Missing {
            field: field.to_string(),
        });
    }
    if expression.len() > MAX_EXPRESSION_LEN {
        return Err(StatusCollectorError::TooLong {
            field: field.to_string(),
            len: expression.len(),
            max: MAX_EXPRESSION_LEN,
            unit: "bytes",
        });
    }
    Ok(())
}

fn check_count(field: &str, len: usize, max: usize) -> Result<(), StatusCollectorError> {
    if len > max {
        return Err(StatusCollectorError::TooLong {
            field: field.to_string(),
            len,
            max,
            unit: "entries",
        });
    }
    Ok(())
}

impl StatusCollectorSpec {
    /// Every CEL expression with the field that holds it (`spec.filter`, `spec.select[0].def`,
    /// `spec.groupBy[0].def`, `spec.combinedFields[0].subject`), in that order.
    #[must_use]
    pub fn expressions(&self) -> Vec<(String, &str)> {
        let mut found = Vec::new();
        if let Some(filter) = &self.filter {
            found.push(("spec.filter".to_string(), filter.as_str()));
        }
        for (i, column) in self.select.iter().enumerate() {
            found.push((format!("spec.select[{i}].def"), column.def.as_str()));
        }
        for (i, column) in self.group_by.iter().enumerate() {
            found.push((format!("spec.groupBy[{i}].def"), column.def.as_str()));
        }
        for (i, field) in self.combined_fields.iter().enumerate() {
            if let Some(subject) = &field.subject {
                found.push((format!("spec.combinedFields[{i}].subject"), subject.as_str()));
            }
        }
        found
    }

    /// The output column names: `select`'s, or `groupBy`'s then `combinedFields`'.
    #[must_use]
    pub fn column_names(&self) -> Vec<String> {
        if self.select.is_empty() {
            self.group_by
                .iter()
                .map(|c| c.name.clone())
                .chain(self.combined_fields.iter().map(|c| c.name.clone()))
                .collect()
        } else {
            self.select.iter().map(|c| c.name.clone()).collect()
        }
    }
}

impl StatusCollector {
    /// Checks the seed's rules: some column; plain selection excludes `groupBy` and `combinedFields`; `groupBy` needs
    /// `combinedFields`; COUNT has no subject, the others need one; distinct column names; `limit` 1..=1000; every
    /// expression non-empty and at most [`MAX_EXPRESSION_LEN`] bytes; at most [`MAX_COLUMNS`] columns.
    pub fn validate_status_collector(&self) -> Result<(), StatusCollectorError> {
        self.metadata.validate("status collector")?;
        let spec = &self.spec;
        if spec.limit == 0 || spec.limit > MAX_LIMIT {
            return Err(StatusCollectorError::Invalid {
                field: "spec.limit".into(),
                why: format!("{} is out of range; it must be 1..{MAX_LIMIT}", spec.limit),
            });
        }
        let columns = spec.select.len() + spec.group_by.len() + spec.combined_fields.len();
        check_count("spec (select + groupBy + combinedFields)", columns, MAX_COLUMNS)?;
        if columns == 0 {
            return Err(StatusCollectorError::Missing {
                field: "spec.select or spec.combinedFields".into(),
            });
        }
        let aggregates = !spec.group_by.is_empty() || !spec.combined_fields.is_empty();
        if !spec.select.is_empty() && aggregates {
            return Err(StatusCollectorError::Invalid {
                field: "spec.select".into(),
                why: "plain selection excludes spec.groupBy and spec.combinedFields".into(),
            });
        }
        if !spec.group_by.is_empty() && spec.combined_fields.is_empty() {
            return Err(StatusCollectorError::Invalid {
                field: "spec.groupBy".into(),
                why: "grouping needs spec.combinedFields (the aggregated columns)".into(),
            });
        }
        if let Some(filter) = &spec.filter {
            check_expression("spec.filter", filter)?;
        }
        let mut names: Vec<&str> = Vec::with_capacity(columns);
        let check_name = |names: &[&str], field: String, name: &str| -> Result<(), StatusCollectorError> {
            validate_name(&field, name)?;
            if names.contains(&name) {
                return Err(StatusCollectorError::Invalid {
                    field,
                    why: format!("column name '{}' is used twice", crate::names::shown(name)),
                });
            }
            Ok(())
        };
        for (list, columns) in [("select", &spec.select), ("groupBy", &spec.group_by)] {
            for (i, column) in columns.iter().enumerate() {
                check_name(&names, format!("spec.{list}[{i}].name"), &column.name)?;
                names.push(&column.name);
                check_expression(&format!("spec.{list}[{i}].def"), &column.def)?;
            }
        }
        for (i, field) in spec.combined_fields.iter().enumerate() {
            check_name(&names, format!("spec.combinedFields[{i}].name"), &field.name)?;
            names.push(&field.name);
            let subject_field = format!("spec.combinedFields[{i}].subject");
            match (field.kind, &field.subject) {
                (AggregateKind::Count, Some(_)) => {
                    return Err(StatusCollectorError::Invalid {
                        field: subject_field,
                        why: "COUNT takes no subject".into(),
                    });
                }
                (AggregateKind::Count, None) => {}
                (_, None) => return Err(StatusCollectorError::Missing { field: subject_field }),
                (_, Some(subject)) => check_expression(&subject_field, subject)?,
            }
        }
        Ok(())
    }
}

/// An object of the DIG a status collection intent selects.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("required" = ["kind", "name"]))]
pub struct ObjectReference {
    /// Its kind (`Deployment`).
    #[serde(default)]
    #[schemars(length(min = 1, max = 63), pattern(r"^[A-Za-z0-9]+$"))]
    pub kind: String,
    /// Its `metadata.name`.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub name: String,
}

/// The spec of a status collection intent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
// Objects are selected by `resources` or by `labelSelector`, and given collectors or returned (the check requires
// both).
#[schemars(extend("anyOf" = [
    {"required": ["resources", "statusCollectors"]},
    {"required": ["resources", "wantSingletonReportedState"], "properties": {"wantSingletonReportedState": {"enum": [true]}}},
    {"required": ["labelSelector", "statusCollectors"]},
    {"required": ["labelSelector", "wantSingletonReportedState"], "properties": {"wantSingletonReportedState": {"enum": [true]}}}
]))]
pub struct StatusCollectionIntentSpec {
    /// Only objects of this app (absent: every app of the DIG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub app: Option<String>,
    /// Objects selected by kind and name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1))]
    pub resources: Vec<ObjectReference>,
    /// Objects selected by their labels, `k=v[,k2=v2]` (all must match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_LABEL_SELECTOR_LEN), pattern(LABEL_SELECTOR_PATTERN))]
    // A string when present: `null` would satisfy `required` while selecting nothing.
    #[schemars(extend("type" = "string"))]
    pub label_selector: Option<String>,
    /// The collectors applied to every selected object (names of the project's status collectors); absent when
    /// none (the object is only returned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1))]
    #[schemars(extend("items" = {"type": "string", "minLength": 1, "maxLength": 128, "pattern": crate::names::NAME_PATTERN}))]
    pub status_collectors: Vec<String>,
    /// Return the reported status into the object when it is placed on exactly one cluster.
    #[serde(default)]
    pub want_singleton_reported_state: bool,
}

/// A status collection intent: `{"metadata":{"name"},"spec":{…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
// A body without metadata (so without a name) is refused: the API document says it is required.
#[schemars(extend("required" = ["metadata"]))]
pub struct StatusCollectionIntent {
    /// Name and free text.
    #[serde(default)]
    pub metadata: Metadata,
    /// What it selects and applies.
    #[serde(default)]
    pub spec: StatusCollectionIntentSpec,
}

/// A parsed `labelSelector`: `(key, value)` pairs that must all match.
pub type LabelSelector = Vec<(String, String)>;

/// Parses `k=v[,k2=v2]` (spaces around parts allowed); `field` names the field in errors.
pub fn parse_label_selector(field: &str, text: &str) -> Result<LabelSelector, StatusCollectorError> {
    if text.len() > MAX_LABEL_SELECTOR_LEN {
        return Err(StatusCollectorError::TooLong {
            field: field.to_string(),
            len: text.len(),
            max: MAX_LABEL_SELECTOR_LEN,
            unit: "bytes",
        });
    }
    let mut pairs = Vec::new();
    for part in text.split(',').map(str::trim).filter(|part| !part.is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(StatusCollectorError::Invalid {
                field: field.to_string(),
                why: format!("'{}' is not key=value", crate::names::shown(part)),
            });
        };
        let (key, value) = (key.trim(), value.trim().trim_start_matches('='));
        if key.is_empty() || key.len() > 317 || key.chars().any(|c| c.is_whitespace() || c == '=') {
            return Err(StatusCollectorError::Invalid {
                field: field.to_string(),
                why: format!("'{}' is not a label key", crate::names::shown(key)),
            });
        }
        if !value.is_empty() {
            validate_label_value(field, value)?;
        }
        pairs.push((key.to_string(), value.to_string()));
    }
    Ok(pairs)
}

impl StatusCollectionIntent {
    /// Checks names, bounds and the label selector; something must be selected (resources or a label selector)
    /// and some collector named or the singleton status asked for.
    pub fn validate_status_collection_intent(&self) -> Result<(), StatusCollectorError> {
        self.metadata.validate("status collection intent")?;
        let spec = &self.spec;
        if let Some(app) = &spec.app {
            validate_name("spec.app", app)?;
        }
        check_count("spec.resources", spec.resources.len(), MAX_INTENT_ENTRIES)?;
        check_count(
            "spec.statusCollectors",
            spec.status_collectors.len(),
            MAX_INTENT_ENTRIES,
        )?;
        for (i, resource) in spec.resources.iter().enumerate() {
            validate_name(&format!("spec.resources[{i}].name"), &resource.name)?;
            if resource.kind.is_empty()
                || resource.kind.len() > 63
                || !resource.kind.chars().all(|c| c.is_ascii_alphanumeric())
            {
                return Err(StatusCollectorError::Invalid {
                    field: format!("spec.resources[{i}].kind"),
                    why: format!("'{}' is not a kind", crate::names::shown(&resource.kind)),
                });
            }
        }
        if let Some(selector) = &spec.label_selector {
            parse_label_selector("spec.labelSelector", selector)?;
        }
        if spec.resources.is_empty() && spec.label_selector.as_deref().is_none_or(str::is_empty) {
            return Err(StatusCollectorError::Missing {
                field: "spec.resources or spec.labelSelector".into(),
            });
        }
        for (i, collector) in spec.status_collectors.iter().enumerate() {
            validate_name(&format!("spec.statusCollectors[{i}]"), collector)?;
        }
        if spec.status_collectors.is_empty() && !spec.want_singleton_reported_state {
            return Err(StatusCollectorError::Missing {
                field: "spec.statusCollectors (or spec.wantSingletonReportedState)".into(),
            });
        }
        Ok(())
    }

    /// Whether the intent selects the object `name` of `kind` with `labels` in `app`.
    #[must_use]
    pub fn selects(&self, app: &str, kind: &str, name: &str, labels: &serde_json::Value) -> bool {
        let spec = &self.spec;
        if spec.app.as_deref().is_some_and(|only| only != app) {
            return false;
        }
        if spec.resources.iter().any(|r| r.kind == kind && r.name == name) {
            return true;
        }
        match spec.label_selector.as_deref() {
            Some(text) if !text.trim().is_empty() => parse_label_selector("spec.labelSelector", text)
                .is_ok_and(|pairs| {
                    pairs
                        .iter()
                        .all(|(key, value)| labels[key.as_str()].as_str() == Some(value.as_str()))
                }),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collector(spec: serde_json::Value) -> StatusCollector {
        serde_json::from_value(serde_json::json!({"metadata": {"name": "c"}, "spec": spec})).unwrap()
    }

    #[test]
    fn seed_examples_are_valid_and_limit_defaults_to_20() {
        let count = collector(
            serde_json::json!({"combinedFields": [{"name": "count", "type": "COUNT"}], "limit": 10}),
        );
        count.validate_status_collector().unwrap();
        let phase = collector(serde_json::json!({
            "groupBy": [{"name": "phase", "def": "returned.status.phase"}],
            "combinedFields": [{"name": "count", "type": "COUNT"}]}));
        phase.validate_status_collector().unwrap();
        assert_eq!(phase.spec.limit, 20);
        assert_eq!(phase.spec.column_names(), ["phase", "count"]);
        let list = collector(serde_json::json!({
            "filter": "obj.spec.replicas != returned.status.availableReplicas",
            "select": [{"name": "wec", "def": "inventory.name"}]}));
        list.validate_status_collector().unwrap();
        assert_eq!(list.spec.expressions()[0].0, "spec.filter");
        assert_eq!(list.spec.expressions()[1].0, "spec.select[0].def");
    }

    #[test]
    fn seed_rules_are_enforced_naming_the_field() {
        let cases = [
            (
                serde_json::json!({"select": [{"name": "a", "def": "inventory.name"}],
                    "combinedFields": [{"name": "count", "type": "COUNT"}]}),
                "spec.select",
            ),
            (
                serde_json::json!({"combinedFields": [{"name": "n", "type": "COUNT", "subject": "obj"}]}),
                "spec.combinedFields[0].subject: COUNT takes no subject",
            ),
            (
                serde_json::json!({"combinedFields": [{"name": "n", "type": "SUM"}]}),
                "spec.combinedFields[0].subject is required",
            ),
            (
                serde_json::json!({"combinedFields": [{"name": "n", "type": "COUNT"}], "limit": 0}),
                "spec.limit",
            ),
            (
                serde_json::json!({"combinedFields": [{"name": "n", "type": "COUNT"}], "limit": 1001}),
                "spec.limit",
            ),
            (
                serde_json::json!({}),
                "spec.select or spec.combinedFields is required",
            ),
            (
                serde_json::json!({"select": [{"name": "a", "def": "x"}, {"name": "b", "def": ""}]}),
                "spec.select[1].def is required",
            ),
            (
                serde_json::json!({"select": [{"name": "a", "def": "x".repeat(MAX_EXPRESSION_LEN + 1)}]}),
                "spec.select[0].def is 4097 bytes long",
            ),
            (
                serde_json::json!({"select": [{"name": "a", "def": "x"}, {"name": "a", "def": "y"}]}),
                "column name 'a' is used twice",
            ),
        ];
        for (spec, expected) in cases {
            let err = collector(spec.clone()).validate_status_collector().unwrap_err();
            assert!(err.to_string().contains(expected), "{spec}: {err}");
        }
    }

    #[test]
    fn intents_select_by_kind_and_name_or_labels() {
        let intent: StatusCollectionIntent = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "i"},
            "spec": {"app": "fw", "resources": [{"kind": "Deployment", "name": "firewall"}],
                "labelSelector": "tier=edge", "statusCollectors": ["count"]}
        }))
        .unwrap();
        intent.validate_status_collection_intent().unwrap();
        let none = serde_json::json!({});
        assert!(intent.selects("fw", "Deployment", "firewall", &none));
        assert!(!intent.selects("other", "Deployment", "firewall", &none));
        assert!(!intent.selects("fw", "Service", "firewall", &none));
        assert!(intent.selects("fw", "Service", "x", &serde_json::json!({"tier": "edge"})));
        let bad: StatusCollectionIntent = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "i"}, "spec": {"labelSelector": "tier", "statusCollectors": ["c"]}
        }))
        .unwrap();
        let err = bad.validate_status_collection_intent().unwrap_err().to_string();
        assert!(err.contains("spec.labelSelector"), "{err}");
    }
}
