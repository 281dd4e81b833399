//! Bodies of EMCO's hardware-platform-aware placement (`hpa-plc`, with `hpa-ac` applying what it chose): a DIG's
//! hpa-intents (which app), their resource consumers (which workload and container, how many replicas) and the
//! consumers' resource requirements — allocatable (`cpu`, `memory` in MB, extended resources such as
//! `nvidia.com/gpu`: a number of units per replica) or non-allocatable (a node label `key` = `value`) — as EMCO's
//! JSON schemas (`src/hpa-plc/json-schemas`) and handlers check them.

use serde::{Deserialize, Serialize};

use crate::names::validate_name;
use crate::resources::{Resource, ValidationError, check_len, require};

/// The longest free-text field of a consumer or requirement (names of kinds, resources and label keys).
pub const MAX_HPA_FIELD_LEN: usize = 253;
/// The most replicas a consumer asks for (placement accounts for each one, node by node).
pub const MAX_HPA_REPLICAS: i64 = 10_000;

/// An hpa-intent (`…/deployment-intent-groups/{dig}/hpa-intents/{intent}`).
pub type HpaIntent = Resource<HpaIntentSpec>;

/// Spec of an hpa-intent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["app"]))]
pub struct HpaIntentSpec {
    /// The app whose placement the intent's requirements narrow.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub app: String,
}

impl HpaIntent {
    /// Checks EMCO's hpa-intent schema.
    pub fn validate_hpa_intent(&self) -> Result<(), ValidationError> {
        self.metadata.validate("hpa intent")?;
        Ok(validate_name("spec.app", &self.spec.app)?)
    }
}

/// A resource consumer (`…/hpa-intents/{intent}/hpa-resource-consumers/{consumer}`): a workload of the app.
pub type HpaConsumer = Resource<HpaConsumerSpec>;

/// Spec of a resource consumer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["name"]))]
pub struct HpaConsumerSpec {
    /// The workload's API version (`apps/v1`), as the user wrote it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = MAX_HPA_FIELD_LEN))]
    pub api_version: String,
    /// The workload's kind (`Deployment`), as the user wrote it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = MAX_HPA_FIELD_LEN))]
    pub kind: String,
    /// The replicas placement must find room for (and the workload is given); 0 or absent: 1 for placement, the
    /// workload's own count kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_HPA_REPLICAS))]
    pub replicas: Option<i64>,
    /// The workload's `metadata.name`.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_HPA_FIELD_LEN))]
    pub name: String,
    /// The container allocatable requirements apply to.
    #[serde(default, rename = "container", skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = MAX_HPA_FIELD_LEN))]
    pub container_name: String,
}

impl HpaConsumer {
    /// Checks EMCO's consumer schema.
    pub fn validate_hpa_consumer(&self) -> Result<(), ValidationError> {
        self.metadata.validate("hpa resource consumer")?;
        let spec = &self.spec;
        require("spec.name", &spec.name)?;
        for (field, value) in [
            ("spec.apiVersion", &spec.api_version),
            ("spec.kind", &spec.kind),
            ("spec.name", &spec.name),
            ("spec.container", &spec.container_name),
        ] {
            check_len(field, value, MAX_HPA_FIELD_LEN)?;
        }
        if let Some(replicas) = spec.replicas
            && !(1..=MAX_HPA_REPLICAS).contains(&replicas)
        {
            return Err(ValidationError::invalid(
                "spec.replicas",
                format!("{replicas} is out of range: 1 to {MAX_HPA_REPLICAS}"),
            ));
        }
        Ok(())
    }
}

/// A resource requirement (`…/hpa-resource-consumers/{consumer}/resource-requirements/{requirement}`).
pub type HpaRequirement = Resource<HpaRequirementSpec>;

/// Spec of a resource requirement: `allocatable` says which half of `resource` it uses.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaRequirementSpec {
    /// Whether the resource is counted (`cpu`, `memory`, extended resources) or a node label.
    #[serde(default)]
    pub allocatable: Option<bool>,
    /// Kept as EMCO keeps it (EMCO's placement does not read it: every requirement must be met).
    #[serde(default)]
    pub mandatory: bool,
    /// Kept as EMCO keeps it (EMCO's placement does not read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
    /// The resource: `name`/`requests`/`limits`/`units` when allocatable, `key`/`value` when not.
    #[serde(default)]
    pub resource: HpaResource,
}

/// The resource of a requirement: one half is used, by `allocatable`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaResource {
    /// The allocatable resource (`cpu`, `memory`, `nvidia.com/gpu`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Units asked per replica (`memory`: MB; `cpu`: cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<i64>,
    /// The limit per replica, in the same units (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<i64>,
    /// The units, as the user wrote them (kept, not read).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub units: String,
    /// The node label's key.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// The node label's value.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
}

/// The largest `requests`/`limits` (memory in MB: an exabyte).
pub const MAX_HPA_UNITS: i64 = 1_000_000_000_000;

impl HpaRequirementSpec {
    /// Whether the requirement counts a resource (else it matches a node label).
    #[must_use]
    pub fn is_allocatable(&self) -> bool {
        self.allocatable == Some(true)
    }
}

impl HpaRequirement {
    /// Checks EMCO's requirement schema and its handler's checks: `allocatable` given; an allocatable resource
    /// has a `name` and `requests` (1 or more, at most `limits` when limits are given); a non-allocatable one a
    /// label `key` and `value`. The half `allocatable` does not use is ignored, as EMCO ignores it.
    pub fn validate_hpa_requirement(&self) -> Result<(), ValidationError> {
        self.metadata.validate("hpa resource requirement")?;
        let spec = &self.spec;
        let resource = &spec.resource;
        let Some(allocatable) = spec.allocatable else {
            return Err(ValidationError::Missing {
                field: "spec.allocatable".into(),
            });
        };
        if let Some(weight) = spec.weight
            && weight < 1
        {
            return Err(ValidationError::invalid(
                "spec.weight",
                format!("{weight} is below the minimum of 1"),
            ));
        }
        if allocatable {
            require("spec.resource.name", &resource.name)?;
            check_len("spec.resource.name", &resource.name, MAX_HPA_FIELD_LEN)?;
            check_len("spec.resource.units", &resource.units, MAX_HPA_FIELD_LEN)?;
            for (field, value) in [
                ("spec.resource.requests", resource.requests),
                ("spec.resource.limits", resource.limits),
            ] {
                if let Some(value) = value
                    && !(1..=MAX_HPA_UNITS).contains(&value)
                {
                    return Err(ValidationError::invalid(
                        field,
                        format!("{value} is out of range: 1 to {MAX_HPA_UNITS}"),
                    ));
                }
            }
            let Some(requests) = resource.requests else {
                return Err(ValidationError::Missing {
                    field: "spec.resource.requests".into(),
                });
            };
            if let Some(limits) = resource.limits
                && requests > limits
            {
                return Err(ValidationError::invalid(
                    "spec.resource.requests",
                    format!(
                        "{requests} is more than spec.resource.limits ({limits}): requests must be less or equal to limits"
                    ),
                ));
            }
        } else {
            for (field, value) in [
                ("spec.resource.key", &resource.key),
                ("spec.resource.value", &resource.value),
            ] {
                require(field, value)?;
                check_len(field, value, MAX_HPA_FIELD_LEN)?;
            }
        }
        Ok(())
    }
}

impl schemars::JsonSchema for HpaRequirementSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "HpaRequirementSpec".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let text = serde_json::json!({"type": "string", "minLength": 1, "maxLength": MAX_HPA_FIELD_LEN});
        let count =
            serde_json::json!({"type": "integer", "format": "int64", "minimum": 1, "maximum": MAX_HPA_UNITS});
        let common = serde_json::json!({
            "mandatory": {"type": "boolean", "description": "Kept, not read: every requirement must be met."},
            "weight": {"type": "integer", "format": "int32", "minimum": 1, "maximum": i32::MAX, "description": "Kept, not read."},
        });
        let with = |allocatable: bool, resource: serde_json::Value| {
            let mut properties = common.clone();
            properties["allocatable"] = serde_json::json!({"const": allocatable});
            properties["resource"] = resource;
            serde_json::json!({
                "type": "object",
                "required": ["allocatable", "resource"],
                "properties": properties,
            })
        };
        schemars::json_schema!({
            "description": "A resource requirement: allocatable (a resource counted per replica: cpu in cores, memory in MB, extended resources in units; requests at most limits) or not (a node label key and value).",
            "oneOf": [
                with(true, serde_json::json!({
                    "type": "object",
                    "required": ["name", "requests"],
                    "properties": {
                        "name": text,
                        "requests": count,
                        "limits": count,
                        "units": {"type": "string", "maxLength": MAX_HPA_FIELD_LEN},
                    },
                })),
                with(false, serde_json::json!({
                    "type": "object",
                    "required": ["key", "value"],
                    "properties": {"key": text, "value": text},
                })),
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn requirement(spec: serde_json::Value) -> Result<(), ValidationError> {
        let requirement: HpaRequirement =
            serde_json::from_value(json!({"metadata": {"name": "r"}, "spec": spec})).unwrap();
        requirement.validate_hpa_requirement()
    }

    #[test]
    fn requirements_use_the_half_of_resource_allocatable_names() {
        requirement(json!({"allocatable": true, "mandatory": true, "weight": 1, "resource": {"name": "cpu", "requests": 4, "limits": 4}})).unwrap();
        requirement(json!({"allocatable": false, "resource": {"key": "feature.node.kubernetes.io/intel_qat", "value": "true"}})).unwrap();
        let missing = requirement(json!({"resource": {"name": "cpu", "requests": 1}})).unwrap_err();
        assert!(missing.to_string().contains("spec.allocatable"), "{missing}");
        let mixed = requirement(json!({"allocatable": false, "resource": {"name": "cpu", "requests": 1}}))
            .unwrap_err();
        let zero = requirement(json!({"allocatable": true, "resource": {"name": "cpu", "requests": 0}}))
            .unwrap_err();
        assert!(zero.to_string().contains("out of range"), "{zero}");
        assert!(mixed.to_string().contains("spec.resource.key"), "{mixed}");
        let above = requirement(
            json!({"allocatable": true, "resource": {"name": "cpu", "requests": 3, "limits": 2}}),
        )
        .unwrap_err();
        assert!(above.to_string().contains("less or equal to limits"), "{above}");
        let none = requirement(json!({"allocatable": true, "resource": {"name": "cpu"}})).unwrap_err();
        assert!(none.to_string().contains("spec.resource.requests"), "{none}");
    }

    #[test]
    fn a_consumer_needs_its_workload_name() {
        let consumer: HpaConsumer = serde_json::from_value(
            json!({"metadata": {"name": "c"}, "spec": {"apiVersion": "v19", "kind": "Deployment", "replicas": 2, "container": "http-client"}}),
        )
        .unwrap();
        let refused = consumer.validate_hpa_consumer().unwrap_err();
        assert!(refused.to_string().contains("spec.name"), "{refused}");
    }
}
