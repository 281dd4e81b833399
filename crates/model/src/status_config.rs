//! Per-kind status configurations (issue #16 §4, Kubefed's FederatedTypeConfig status fields, seed 004): the body
//! of `/v2/status-configs/{name}` and its checks. A config names a target kind (`group`/`version`/`kind`), whether
//! its objects' status is collected at all (`statusCollection`), the field whose value is rolled up to emco as
//! `statusRemote` (`statusPath`, an RFC 9535 JSONPath `$.status.replicas` or Kubefed's dotted form
//! `.status.replicas`), the condition that means ready for that kind (`readyCondition`) and whether the whole
//! `.status` is rolled up instead (`rawStatus`).
//!
//! Pure: the path is parsed here (so a bad one is refused at create, naming `spec.statusPath`) and evaluated by the
//! monitor through [`StatusPath::values`].

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use serde_json_path::JsonPath;

use crate::resources::Metadata;

/// The longest `spec.statusPath`, in characters.
pub const MAX_STATUS_PATH_LEN: usize = 256;
/// The longest `spec.targetType` part (group, version, kind, plural) and `spec.readyCondition`, in characters
/// (253 is the longest DNS subdomain, which API groups are).
pub const MAX_TYPE_PART_LEN: usize = 253;
/// How many status configs may exist: each adds a kind every monitor may watch.
pub const MAX_STATUS_CONFIGS: usize = 64;

/// What is wrong with a status config (or a status path); every message names the offending field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusConfigError {
    /// The name breaks EMCO's name rule, or metadata is too long.
    #[error(transparent)]
    Metadata(#[from] crate::resources::ValidationError),
    /// A required field is empty.
    #[error("{field} is required")]
    Missing {
        /// The field, as a JSON path.
        field: &'static str,
    },
    /// A field is longer than allowed.
    #[error("{field} is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// The field, as a JSON path.
        field: &'static str,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A field holds characters it may not.
    #[error("{field} '{}' {why}", crate::names::shown(.value))]
    Malformed {
        /// The field, as a JSON path.
        field: &'static str,
        /// The offending value.
        value: String,
        /// What is wrong.
        why: &'static str,
    },
    /// `spec.statusPath` is neither a JSONPath nor the dotted form.
    #[error("spec.statusPath '{}' is not a valid path: {why}", crate::names::shown(.path))]
    BadPath {
        /// The offending path.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// `rawStatus` and `statusPath` were both given.
    #[error("spec.statusPath must be empty when spec.rawStatus is true (the whole status is rolled up)")]
    PathWithRawStatus,
}

/// Whether a kind's objects are collected by the monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub enum StatusCollection {
    /// Collected (the default).
    #[default]
    Enabled,
    /// Not collected: the status answer says so for the kind's resources.
    Disabled,
}

/// The kind a status config is about.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["version", "kind"]))]
pub struct TargetType {
    /// API group; empty for the core group.
    #[serde(default)]
    #[schemars(length(max = MAX_TYPE_PART_LEN), pattern(r"^[A-Za-z0-9.-]*$"))]
    pub group: String,
    /// Version, e.g. `v1`.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_TYPE_PART_LEN), pattern(r"^[A-Za-z0-9.-]+$"))]
    pub version: String,
    /// Kind, e.g. `Deployment`.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_TYPE_PART_LEN), pattern(r"^[A-Za-z][A-Za-z0-9]*$"))]
    pub kind: String,
    /// Plural resource name (e.g. `deployments`); optional: rsync asks the cluster when it is absent.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub plural: String,
}

/// The spec of a status config.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["targetType"]))]
pub struct StatusConfigSpec {
    /// The kind.
    #[serde(default)]
    pub target_type: TargetType,
    /// Whether its objects are collected.
    #[serde(default)]
    pub status_collection: StatusCollection,
    /// The field rolled up as `statusRemote` (empty: none).
    #[serde(default)]
    pub status_path: String,
    /// The condition type whose `True` means ready for this kind (empty: the kind's own rule).
    #[serde(default)]
    pub ready_condition: String,
    /// Roll up the whole `.status` as `statusRemote`.
    #[serde(default)]
    pub raw_status: bool,
}

/// A status config: `{"metadata":{"name"},"spec":{…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
// A body without metadata (so without a name) is refused: the API document says it is required.
#[schemars(extend("required" = ["metadata"]))]
pub struct StatusConfig {
    /// Name and free text.
    #[serde(default)]
    pub metadata: Metadata,
    /// What it configures.
    #[serde(default)]
    pub spec: StatusConfigSpec,
}

fn check_len(field: &'static str, value: &str, max: usize) -> Result<(), StatusConfigError> {
    let len = value.chars().count();
    if len > max {
        return Err(StatusConfigError::TooLong { field, len, max });
    }
    Ok(())
}

/// A DNS-ish token: letters, digits, `-`, `.` (groups, versions, plurals) — or also `_` and `/` for condition types
/// such as `example.com/Synced`.
fn check_token(field: &'static str, value: &str, extra: &[char]) -> Result<(), StatusConfigError> {
    check_len(field, value, MAX_TYPE_PART_LEN)?;
    if value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || extra.contains(&c))
    {
        Ok(())
    } else {
        Err(StatusConfigError::Malformed {
            field,
            value: value.chars().take(MAX_TYPE_PART_LEN).collect(),
            why: "may hold only letters, digits, '-' and '.'",
        })
    }
}

impl StatusConfig {
    /// Checks the name, the target type, the path and the combination of fields.
    pub fn validate(&self) -> Result<(), StatusConfigError> {
        self.metadata.validate("status config")?;
        let target = &self.spec.target_type;
        if target.version.is_empty() {
            return Err(StatusConfigError::Missing {
                field: "spec.targetType.version",
            });
        }
        if target.kind.is_empty() {
            return Err(StatusConfigError::Missing {
                field: "spec.targetType.kind",
            });
        }
        check_token("spec.targetType.group", &target.group, &[])?;
        check_token("spec.targetType.version", &target.version, &[])?;
        check_token("spec.targetType.plural", &target.plural, &[])?;
        check_len("spec.targetType.kind", &target.kind, MAX_TYPE_PART_LEN)?;
        if !target.kind.chars().all(|c| c.is_ascii_alphanumeric())
            || !target.kind.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            return Err(StatusConfigError::Malformed {
                field: "spec.targetType.kind",
                value: target.kind.clone(),
                why: "must be a Kubernetes kind (letters and digits, starting with a letter, e.g. Deployment)",
            });
        }
        check_token("spec.readyCondition", &self.spec.ready_condition, &['_', '/'])?;
        if self.spec.raw_status && !self.spec.status_path.is_empty() {
            return Err(StatusConfigError::PathWithRawStatus);
        }
        if !self.spec.status_path.is_empty() {
            StatusPath::parse(&self.spec.status_path)?;
        }
        Ok(())
    }
}

/// A parsed `statusPath`: what it was written as and the RFC 9535 query it means.
#[derive(Debug, Clone)]
pub struct StatusPath {
    text: String,
    query: JsonPath,
}

impl PartialEq for StatusPath {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for StatusPath {}

/// Kubefed's dotted form (`.status.replicas`, `.status.conditions[0].type`) as an RFC 9535 query
/// (`$['status']['replicas']`).
fn dotted_to_jsonpath(text: &str) -> Result<String, String> {
    let Some(rest) = text.strip_prefix('.') else {
        return Err("a dotted path starts with '.'".into());
    };
    let mut query = String::from("$");
    for segment in rest.split('.') {
        let (name, indices) = match segment.find('[') {
            Some(open) => segment.split_at(open),
            None => (segment, ""),
        };
        if name.is_empty() {
            return Err("a dotted path has an empty field name".into());
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '/')
        {
            return Err(format!(
                "field name '{}' may hold only letters, digits, '_', '-' and '/' (use a $ JSONPath for others)",
                crate::names::shown(name)
            ));
        }
        query.push_str("['");
        query.push_str(name);
        query.push_str("']");
        let mut indices = indices;
        while !indices.is_empty() {
            let Some(close) = indices.find(']') else {
                return Err("an index has no closing ']'".into());
            };
            let index = &indices[1..close];
            if index.is_empty() || !index.chars().all(|c| c.is_ascii_digit()) {
                return Err(format!("index '[{index}]' is not a non-negative integer"));
            }
            query.push('[');
            query.push_str(index);
            query.push(']');
            indices = &indices[close + 1..];
            if !indices.is_empty() && !indices.starts_with('[') {
                return Err("text after an index must be another index or '.'".into());
            }
        }
    }
    Ok(query)
}

impl StatusPath {
    /// Parses an RFC 9535 JSONPath (starting with `$`) or Kubefed's dotted form (starting with `.`).
    pub fn parse(text: &str) -> Result<Self, StatusConfigError> {
        let bad = |why: String| StatusConfigError::BadPath {
            path: text.chars().take(MAX_STATUS_PATH_LEN).collect(),
            why,
        };
        check_len("spec.statusPath", text, MAX_STATUS_PATH_LEN)?;
        let query = if text.starts_with('$') {
            text.to_string()
        } else if text.starts_with('.') {
            dotted_to_jsonpath(text).map_err(bad)?
        } else {
            return Err(bad(
                "must start with '$' (RFC 9535 JSONPath, e.g. $.status.replicas) or '.' (dotted form, e.g. .status.replicas)".into(),
            ));
        };
        let query = JsonPath::parse(&query).map_err(|err| bad(err.to_string()))?;
        Ok(Self {
            text: text.to_string(),
            query,
        })
    }

    /// The path as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// What the path selects in `object`: `None` when nothing, the value when one node, an array when several.
    #[must_use]
    pub fn values(&self, object: &Json) -> Option<Json> {
        let nodes = self.query.query(object).all();
        match nodes.as_slice() {
            [] => None,
            [one] => Some((*one).clone()),
            many => Some(Json::Array(many.iter().map(|node| (*node).clone()).collect())),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config(spec: Json) -> Result<StatusConfig, String> {
        let config: StatusConfig =
            serde_json::from_value(json!({"metadata": {"name": "deployments"}, "spec": spec}))
                .map_err(|err| err.to_string())?;
        config.validate().map_err(|err| err.to_string())?;
        Ok(config)
    }

    #[test]
    fn both_path_forms_select_the_same_field() {
        let deployment = json!({"status": {"replicas": 3, "readyReplicas": 2,
            "conditions": [{"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True"}]}});
        for text in [".status.readyReplicas", "$.status.readyReplicas"] {
            let path = StatusPath::parse(text).unwrap();
            assert_eq!(path.values(&deployment), Some(json!(2)), "{text}");
        }
        let dotted = StatusPath::parse(".status.conditions[1].type").unwrap();
        assert_eq!(dotted.values(&deployment), Some(json!("Progressing")));
        let filter = StatusPath::parse("$.status.conditions[?@.type=='Available'].status").unwrap();
        assert_eq!(filter.values(&deployment), Some(json!("True")));
        let many = StatusPath::parse("$.status.conditions[*].type").unwrap();
        assert_eq!(
            many.values(&deployment),
            Some(json!(["Available", "Progressing"]))
        );
        assert_eq!(
            StatusPath::parse(".status.missing").unwrap().values(&deployment),
            None
        );
    }

    #[test]
    fn bad_paths_are_refused_naming_spec_status_path() {
        for text in [
            "status.replicas",
            "$.status[",
            ".status..replicas",
            ".status.x[a]",
            "$$",
            ".st atus",
        ] {
            let err = StatusPath::parse(text).unwrap_err().to_string();
            assert!(err.starts_with("spec.statusPath"), "{text}: {err}");
        }
        let long = format!(".{}", "a".repeat(MAX_STATUS_PATH_LEN));
        assert!(
            StatusPath::parse(&long)
                .unwrap_err()
                .to_string()
                .contains("spec.statusPath")
        );
    }

    #[test]
    fn a_config_is_checked_field_by_field() {
        let good = config(json!({"targetType": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "statusCollection": "Enabled", "statusPath": ".status.replicas", "readyCondition": "Available", "rawStatus": false}))
        .unwrap();
        assert_eq!(good.spec.status_collection, StatusCollection::Enabled);
        let defaults = config(json!({"targetType": {"version": "v1", "kind": "ConfigMap"}})).unwrap();
        assert_eq!(defaults.spec.status_collection, StatusCollection::Enabled);
        let err = |spec: Json| config(spec).unwrap_err();
        assert!(err(json!({"targetType": {"version": "v1"}})).contains("spec.targetType.kind"));
        assert!(err(json!({"targetType": {"kind": "Deployment"}})).contains("spec.targetType.version"));
        assert!(
            err(json!({"targetType": {"version": "v1", "kind": "Deploy ment"}}))
                .contains("spec.targetType.kind")
        );
        assert!(
            err(json!({"targetType": {"group": "apps/x", "version": "v1", "kind": "Deployment"}}))
                .contains("spec.targetType.group")
        );
        assert!(
            err(json!({"targetType": {"version": "v1", "kind": "Deployment"}, "statusPath": "status"}))
                .contains("spec.statusPath")
        );
        assert!(err(json!({"targetType": {"version": "v1", "kind": "Deployment"}, "statusCollection": "Sometimes"}))
            .contains("Sometimes"));
        assert!(
            err(json!({"targetType": {"version": "v1", "kind": "Deployment"}, "statusPath": ".status", "rawStatus": true}))
                .contains("spec.rawStatus")
        );
    }
}
