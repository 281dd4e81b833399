//! Bodies of the generic action controller (EMCO's `gac`): a DIG's generic-k8s-intents, their resources (an object
//! to add to an app, or one of the app's own objects to customise) and the resources' customizations (which
//! clusters, which patch, which data files). Each `validate` checks what EMCO's JSON schemas
//! (`src/genericactioncontroller/json-schemas`) and its handlers check before anything is stored.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::names::validate_name;
use crate::resources::{MetadataOnly, Resource, ValidationError, check_len, not_allowed, require};

/// The longest field of a gac body (EMCO's schemas: `maxLength: 128`).
pub const MAX_GAC_FIELD_LEN: usize = 128;
/// The most JSON-patch operations one customization holds.
pub const MAX_PATCH_OPERATIONS: usize = 256;
/// The most data-key options one customization holds.
pub const MAX_DATA_KEY_OPTIONS: usize = 256;

/// A generic-k8s-intent (`…/deployment-intent-groups/{dig}/generic-k8s-intents/{intent}`): metadata only.
pub type GenericK8sIntent = MetadataOnly;

/// A gac resource (`…/generic-k8s-intents/{intent}/resources/{resource}`); its object file travels beside it.
pub type GacResource = Resource<GacResourceSpec>;

/// Spec of a gac resource.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["app", "newObject", "resourceGVK"]))]
pub struct GacResourceSpec {
    /// The app whose clusters get (or whose render holds) the object.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_GAC_FIELD_LEN), pattern(crate::names::NAME_PATTERN))]
    pub app: String,
    /// `"true"`: the file is a new object added to the app; `"false"`: the app's rendered object named by
    /// `resourceGVK` is customised.
    #[serde(default)]
    #[schemars(extend("enum" = ["true", "false"]))]
    pub new_object: String,
    /// The object: apiVersion, kind and name.
    #[serde(default, rename = "resourceGVK")]
    pub resource_gvk: ResourceGvk,
}

impl GacResourceSpec {
    /// Whether the resource adds a new object (`newObject: "true"`).
    #[must_use]
    pub fn is_new_object(&self) -> bool {
        self.new_object == "true"
    }
}

/// A Kubernetes object's identity as gac names it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["apiVersion", "kind", "name"]))]
pub struct ResourceGvk {
    /// `apiVersion`.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_GAC_FIELD_LEN))]
    pub api_version: String,
    /// `kind` (EMCO compares it without regard to case).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_GAC_FIELD_LEN))]
    pub kind: String,
    /// `metadata.name`.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_GAC_FIELD_LEN))]
    pub name: String,
}

impl GacResource {
    /// Checks EMCO's resource schema.
    pub fn validate_gac_resource(&self) -> Result<(), ValidationError> {
        self.metadata.validate("resource")?;
        let spec = &self.spec;
        validate_name("spec.app", &spec.app)?;
        if !matches!(spec.new_object.as_str(), "true" | "false") {
            return Err(not_allowed(
                "spec.newObject",
                &spec.new_object,
                "\"true\", \"false\"",
            ));
        }
        for (field, value) in [
            ("spec.resourceGVK.apiVersion", &spec.resource_gvk.api_version),
            ("spec.resourceGVK.kind", &spec.resource_gvk.kind),
            ("spec.resourceGVK.name", &spec.resource_gvk.name),
        ] {
            require(field, value)?;
            check_len(field, value, MAX_GAC_FIELD_LEN)?;
        }
        Ok(())
    }
}

/// A customization of a gac resource (`…/resources/{resource}/customizations/{customization}`); its data files
/// travel beside it.
pub type GacCustomization = Resource<CustomizationSpec>;

/// Spec of a customization.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["clusterSpecific", "clusterInfo"]))]
// EMCO's handler: a cluster-specific customization names its label or cluster; a json patch has operations.
#[schemars(extend("allOf" = [
    {"if": {"required": ["clusterSpecific", "clusterInfo"], "properties": {"clusterSpecific": {"const": "true"}, "clusterInfo": {"required": ["scope"], "properties": {"scope": {"const": "label"}}}}},
     "then": {"properties": {"clusterInfo": {"required": ["clusterLabel"], "properties": {"clusterLabel": {"minLength": 1}}}}}},
    {"if": {"required": ["clusterSpecific", "clusterInfo"], "properties": {"clusterSpecific": {"const": "true"}, "clusterInfo": {"required": ["scope"], "properties": {"scope": {"const": "name"}}}}},
     "then": {"properties": {"clusterInfo": {"required": ["cluster"], "properties": {"cluster": {"minLength": 1}}}}}},
    {"if": {"required": ["patchType"], "properties": {"patchType": {"const": "json"}}},
     "then": {"required": ["patchJson"], "properties": {"patchJson": {"minItems": 1}}}}
]))]
pub struct CustomizationSpec {
    /// `"true"`: only the clusters `clusterInfo` selects; `"false"`: every cluster of the app.
    #[serde(default)]
    #[schemars(extend("enum" = ["true", "false"]))]
    pub cluster_specific: String,
    /// Which clusters, when `clusterSpecific` is `"true"`.
    #[serde(default)]
    pub cluster_info: ClusterInfo,
    /// `json` (RFC 6902 `patchJson`), `merge` (the files are merge patches) or empty (no patch).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(extend("enum" = ["json", "merge", ""]))]
    pub patch_type: String,
    /// The RFC 6902 operations of a `json` patch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_PATCH_OPERATIONS))]
    #[schemars(extend("items" = {
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ["add", "remove", "replace", "move", "copy", "test"]},
            "path": {"type": "string", "maxLength": MAX_GAC_FIELD_LEN},
            "from": {"type": "string", "maxLength": MAX_GAC_FIELD_LEN},
            "value": {}
        },
        "required": ["op", "path", "value"]
    }))]
    pub patch_json: Vec<Map<String, Json>>,
    /// How a ConfigMap's data keys are named after the files.
    #[serde(default, skip_serializing_if = "DataOptions::is_empty")]
    pub config_map_options: DataOptions,
    /// How a Secret's data keys are named after the files.
    #[serde(default, skip_serializing_if = "DataOptions::is_empty")]
    pub secret_options: DataOptions,
}

impl CustomizationSpec {
    /// Whether the customization applies only to the clusters its `clusterInfo` selects.
    #[must_use]
    pub fn is_cluster_specific(&self) -> bool {
        self.cluster_specific == "true"
    }
}

/// The clusters a customization selects.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["scope", "clusterProvider", "mode"]))]
pub struct ClusterInfo {
    /// `name` (the cluster `cluster`) or `label` (the clusters labelled `clusterLabel`).
    #[serde(default)]
    #[schemars(extend("enum" = ["label", "name"]))]
    pub scope: String,
    /// The provider of the clusters.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_GAC_FIELD_LEN))]
    pub cluster_provider: String,
    /// The cluster, for scope `name`.
    #[serde(default)]
    #[schemars(length(max = MAX_GAC_FIELD_LEN))]
    pub cluster: String,
    /// The label, for scope `label`.
    #[serde(default)]
    #[schemars(length(max = MAX_GAC_FIELD_LEN))]
    pub cluster_label: String,
    /// `allow` (the selected clusters get it) or `deny` (as EMCO does: no cluster gets it).
    #[serde(default)]
    #[schemars(extend("enum" = ["allow", "deny"]))]
    pub mode: String,
}

/// ConfigMap or Secret options: the data key of each file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataOptions {
    /// One entry per file that is not keyed by its own name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_DATA_KEY_OPTIONS))]
    pub data_key_options: Vec<DataKeyOption>,
}

impl DataOptions {
    fn is_empty(&self) -> bool {
        self.data_key_options.is_empty()
    }

    /// The data key of the file `file_name`: its option's `keyName`, else the file name.
    #[must_use]
    pub fn key_of<'a>(&'a self, file_name: &'a str) -> &'a str {
        self.data_key_options
            .iter()
            .find(|option| option.file_name == file_name)
            .map_or(file_name, |option| option.key_name.as_str())
    }

    /// Whether the file `file_name` is a merge patch rather than data (`mergePatch: "true"`).
    #[must_use]
    pub fn is_merge_patch(&self, file_name: &str) -> bool {
        self.data_key_options
            .iter()
            .any(|option| option.file_name == file_name && option.merge_patch == "true")
    }
}

/// The data key of one customization file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["fileName", "keyName"]))]
pub struct DataKeyOption {
    /// The file, as uploaded.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_GAC_FIELD_LEN))]
    pub file_name: String,
    /// Its key in the object's `data`.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_GAC_FIELD_LEN))]
    pub key_name: String,
    /// `"true"`: the file is a strategic merge patch, not data.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(extend("enum" = ["true", "false", ""]))]
    pub merge_patch: String,
}

/// The JSON-patch operations RFC 6902 defines.
const PATCH_OPS: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];

impl GacCustomization {
    /// Checks EMCO's customization schema and its handler's rules (a cluster-specific customization names the
    /// label or cluster its scope needs).
    pub fn validate_customization(&self) -> Result<(), ValidationError> {
        self.metadata.validate("customization")?;
        let spec = &self.spec;
        one_of("spec.clusterSpecific", &spec.cluster_specific, &["true", "false"])?;
        let info = &spec.cluster_info;
        one_of("spec.clusterInfo.scope", &info.scope, &["label", "name"])?;
        one_of("spec.clusterInfo.mode", &info.mode, &["allow", "deny"])?;
        for (field, value) in [
            ("spec.clusterInfo.clusterProvider", &info.cluster_provider),
            ("spec.clusterInfo.cluster", &info.cluster),
            ("spec.clusterInfo.clusterLabel", &info.cluster_label),
        ] {
            check_len(field, value, MAX_GAC_FIELD_LEN)?;
        }
        require("spec.clusterInfo.clusterProvider", &info.cluster_provider)?;
        if spec.is_cluster_specific() {
            match info.scope.as_str() {
                "label" => require("spec.clusterInfo.clusterLabel", &info.cluster_label)?,
                _ => require("spec.clusterInfo.cluster", &info.cluster)?,
            }
        }
        one_of("spec.patchType", &spec.patch_type, &["json", "merge", ""])?;
        if spec.patch_json.len() > MAX_PATCH_OPERATIONS {
            return Err(not_allowed(
                "spec.patchJson",
                &format!("{} operations", spec.patch_json.len()),
                format!("at most {MAX_PATCH_OPERATIONS}"),
            ));
        }
        for (index, operation) in spec.patch_json.iter().enumerate() {
            validate_operation(&format!("spec.patchJson[{index}]"), operation)?;
        }
        if spec.patch_type == "json" && spec.patch_json.is_empty() {
            return Err(ValidationError::invalid(
                "spec.patchJson",
                "patchType json needs at least one operation",
            ));
        }
        for (field, options) in [
            ("spec.configMapOptions.dataKeyOptions", &spec.config_map_options),
            ("spec.secretOptions.dataKeyOptions", &spec.secret_options),
        ] {
            if options.data_key_options.len() > MAX_DATA_KEY_OPTIONS {
                return Err(not_allowed(
                    field,
                    &format!("{} entries", options.data_key_options.len()),
                    format!("at most {MAX_DATA_KEY_OPTIONS}"),
                ));
            }
            for (index, option) in options.data_key_options.iter().enumerate() {
                let field = format!("{field}[{index}]");
                require(&format!("{field}.fileName"), &option.file_name)?;
                require(&format!("{field}.keyName"), &option.key_name)?;
                check_len(&format!("{field}.fileName"), &option.file_name, MAX_GAC_FIELD_LEN)?;
                check_len(&format!("{field}.keyName"), &option.key_name, MAX_GAC_FIELD_LEN)?;
                one_of(
                    &format!("{field}.mergePatch"),
                    &option.merge_patch,
                    &["true", "false", ""],
                )?;
            }
        }
        Ok(())
    }
}

fn one_of(field: &str, value: &str, allowed: &[&str]) -> Result<(), ValidationError> {
    if allowed.contains(&value) {
        return Ok(());
    }
    let shown: Vec<String> = allowed
        .iter()
        .filter(|allowed| !allowed.is_empty())
        .map(|allowed| format!("\"{allowed}\""))
        .collect();
    Err(not_allowed(field, value, shown.join(", ")))
}

fn validate_operation(field: &str, operation: &Map<String, Json>) -> Result<(), ValidationError> {
    let op = match operation.get("op") {
        Some(Json::String(op)) => op.as_str(),
        Some(_) => {
            return Err(ValidationError::invalid(
                &format!("{field}.op"),
                "must be a string",
            ));
        }
        None => {
            return Err(ValidationError::Missing {
                field: format!("{field}.op"),
            });
        }
    };
    one_of(&format!("{field}.op"), op, &PATCH_OPS)?;
    for key in ["path", "from"] {
        match operation.get(key) {
            Some(Json::String(path)) => check_len(&format!("{field}.{key}"), path, MAX_GAC_FIELD_LEN)?,
            Some(_) => {
                return Err(ValidationError::invalid(
                    &format!("{field}.{key}"),
                    "must be a string",
                ));
            }
            None if key == "path" => {
                return Err(ValidationError::Missing {
                    field: format!("{field}.path"),
                });
            }
            None => {}
        }
    }
    if !operation.contains_key("value") {
        return Err(ValidationError::Missing {
            field: format!("{field}.value"),
        });
    }
    Ok(())
}

/// A patch value EMCO fetches from a URL: `$(http…)$`; the URL, if `value` is one.
#[must_use]
pub fn external_patch_url(value: &Json) -> Option<&str> {
    let text = value.as_str()?;
    let url = text.strip_prefix("$(")?.strip_suffix(")$")?;
    url.starts_with("http").then_some(url)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn customization(spec: Json) -> GacCustomization {
        serde_json::from_value(json!({"metadata": {"name": "c"}, "spec": spec})).unwrap()
    }

    #[test]
    fn a_customization_is_checked_as_emco_checks_it() {
        let base = json!({"clusterSpecific": "false", "clusterInfo": {"scope": "label", "clusterProvider": "p", "mode": "allow"}});
        customization(base.clone()).validate_customization().unwrap();
        let mut specific = base.clone();
        specific["clusterSpecific"] = json!("true");
        let err = customization(specific).validate_customization().unwrap_err();
        assert_eq!(err.to_string(), "spec.clusterInfo.clusterLabel is required");
        let mut json_patch = base.clone();
        json_patch["patchType"] = json!("json");
        json_patch["patchJson"] = json!([{"op": "replace", "path": "/spec/replicas"}]);
        let err = customization(json_patch.clone())
            .validate_customization()
            .unwrap_err();
        assert_eq!(err.to_string(), "spec.patchJson[0].value is required");
        json_patch["patchJson"] = json!([{"op": "splice", "path": "/a", "value": 1}]);
        let err = customization(json_patch).validate_customization().unwrap_err();
        assert!(
            err.to_string().starts_with("spec.patchJson[0].op is 'splice'"),
            "{err}"
        );
        let mut mode = base;
        mode["clusterInfo"]["mode"] = json!("maybe");
        let err = customization(mode).validate_customization().unwrap_err();
        assert!(
            err.to_string().starts_with("spec.clusterInfo.mode is 'maybe'"),
            "{err}"
        );
    }

    #[test]
    fn data_keys_come_from_the_options_else_the_file_name() {
        let options: DataOptions = serde_json::from_value(json!({"dataKeyOptions": [
            {"fileName": "a.yaml", "keyName": "a.properties"},
            {"fileName": "p.yaml", "keyName": "p", "mergePatch": "true"}
        ]}))
        .unwrap();
        assert_eq!(options.key_of("a.yaml"), "a.properties");
        assert_eq!(options.key_of("b.json"), "b.json");
        assert!(options.is_merge_patch("p.yaml") && !options.is_merge_patch("a.yaml"));
    }

    #[test]
    fn only_a_dollar_parenthesised_http_value_is_an_external_url() {
        assert_eq!(
            external_patch_url(&json!("$(https://h/{cluster})$")),
            Some("https://h/{cluster}")
        );
        for value in [json!("$(file:///etc/passwd)$"), json!("https://h"), json!(3)] {
            assert_eq!(external_patch_url(&value), None, "{value}");
        }
    }
}
