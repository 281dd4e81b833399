//! Bodies of EMCO's onboarding API (`reference/emco.md` §5): every resource is `{"metadata":{...},"spec":{...}}`
//! except cluster labels (`{"clusterLabel":"east"}`).
//!
//! Unknown fields are ignored, as EMCO's Go decoder does; missing optional fields take their defaults. Each type's
//! `validate` checks what EMCO's JSON schema checks, before anything is stored.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::names::{NameError, validate_label_value, validate_name};

/// The longest `metadata.description`.
pub const MAX_DESCRIPTION_LEN: usize = 1024;
/// The longest `metadata.userData1` / `userData2`.
pub const MAX_USER_DATA_LEN: usize = 512;
/// The longest override value of a DIG (`spec.overrideValues[].values`).
pub const MAX_OVERRIDE_VALUE_LEN: usize = 128;

/// A body that breaks EMCO's schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// A name breaks the name rule.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A field is longer than allowed.
    #[error("{field} is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// The field, as a JSON path.
        field: String,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A required field is missing or empty.
    #[error("{field} is required")]
    Missing {
        /// The field, as a JSON path.
        field: String,
    },
    /// A field has a value outside its allowed set.
    #[error("{field} is '{}'; allowed: {allowed}", crate::names::shown(.value))]
    NotAllowed {
        /// The field, as a JSON path.
        field: String,
        /// The offending value.
        value: String,
        /// The allowed values.
        allowed: String,
    },
    /// A placement rule is malformed.
    #[error("{0}")]
    Placement(String),
    /// A field's value is malformed or out of range.
    #[error("{field}: {message}")]
    Invalid {
        /// The field, as a JSON path.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl ValidationError {
    /// `field` is malformed or out of range: `message` says how.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// Refuses `value` longer than `max` characters, naming `field`.
pub(crate) fn check_len(field: &str, value: &str, max: usize) -> Result<(), ValidationError> {
    let len = value.chars().count();
    if len > max {
        return Err(ValidationError::TooLong {
            field: field.to_string(),
            len,
            max,
        });
    }
    Ok(())
}

/// Refuses an empty `value`, naming `field`.
pub(crate) fn require(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.is_empty() {
        return Err(ValidationError::Missing {
            field: field.to_string(),
        });
    }
    Ok(())
}

/// The error for `value` of `field` outside its `allowed` values.
pub(crate) fn not_allowed(field: &str, value: &str, allowed: impl Into<String>) -> ValidationError {
    ValidationError::NotAllowed {
        field: field.to_string(),
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// The common metadata block.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
// `name` defaults to empty when decoding (so its absence is refused naming it), but the API requires it: the API
// document says so.
#[schemars(extend("required" = ["name"]))]
pub struct Metadata {
    /// Required; EMCO's name rule.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub name: String,
    /// Free text, at most 1024 characters.
    #[serde(default)]
    pub description: String,
    /// Free text, at most 512 characters.
    #[serde(default, rename = "userData1")]
    pub user_data1: String,
    /// Free text, at most 512 characters.
    #[serde(default, rename = "userData2")]
    pub user_data2: String,
}

impl Metadata {
    /// Metadata with just a name.
    #[must_use]
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_string(),
            ..Self::default()
        }
    }

    /// Checks the name rule and the field lengths; `what` names the resource type in messages.
    pub fn validate(&self, what: &str) -> Result<(), ValidationError> {
        validate_name(what, &self.name)?;
        check_len("metadata.description", &self.description, MAX_DESCRIPTION_LEN)?;
        check_len("metadata.userData1", &self.user_data1, MAX_USER_DATA_LEN)?;
        check_len("metadata.userData2", &self.user_data2, MAX_USER_DATA_LEN)?;
        Ok(())
    }
}

/// An empty `spec` (kinds whose body is only metadata).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EmptySpec {}

/// A resource body: its metadata and its kind's spec.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(bound = "S: schemars::JsonSchema + Default + Serialize")]
pub struct Resource<S> {
    /// Name and descriptions.
    pub metadata: Metadata,
    /// The kind-specific part.
    #[serde(default)]
    pub spec: S,
}

/// A body that is only metadata; EMCO writes no `spec` for these.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetadataOnly {
    /// Name and descriptions.
    pub metadata: Metadata,
}

/// A controller registration (`/v2/controllers`); `rsync` is built in, registering it is accepted.
pub type Controller = Resource<ControllerSpec>;
/// Spec of a controller.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ControllerSpec {
    /// Host of the controller's gRPC endpoint.
    #[serde(default)]
    pub host: String,
    /// Port of the controller's gRPC endpoint.
    #[serde(default)]
    pub port: u16,
    /// `placement` or `action`; empty for rsync.
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub controller_type: String,
    /// Ordering among controllers of one type.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub priority: i64,
    /// A webhook controller's HTTPS URL: emco POSTs the DIG's objects there and applies what it answers (empty
    /// for EMCO's gRPC controllers and emco's built-in ones).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_CONTROLLER_URL_LEN), pattern(r"^(https://\S+)?$"))]
    pub url: String,
    /// The PEM certificates of the CAs the webhook's certificate is checked against (empty: the system's).
    #[serde(default, rename = "caCert", skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_CONTROLLER_CA_LEN), pattern(r"^(-----BEGIN CERTIFICATE-----[\s\S]*)?$"))]
    pub ca_cert: String,
}

/// The longest webhook URL of a controller.
pub const MAX_CONTROLLER_URL_LEN: usize = 2048;
/// The longest CA bundle of a webhook controller.
pub const MAX_CONTROLLER_CA_LEN: usize = 65_536;

impl Controller {
    /// Checks the metadata and a webhook's URL (`https://`, no blanks) and CA (PEM certificates).
    pub fn validate_controller(&self) -> Result<(), ValidationError> {
        self.metadata.validate("controller")?;
        let spec = &self.spec;
        check_len("spec.url", &spec.url, MAX_CONTROLLER_URL_LEN)?;
        check_len("spec.caCert", &spec.ca_cert, MAX_CONTROLLER_CA_LEN)?;
        if !spec.url.is_empty()
            && (!spec.url.starts_with("https://")
                || spec.url.len() == "https://".len()
                || spec.url.chars().any(char::is_whitespace))
        {
            return Err(ValidationError::invalid(
                "spec.url",
                format!(
                    "'{}' is not an https:// URL (a webhook controller is called over HTTPS only)",
                    crate::names::shown(&spec.url)
                ),
            ));
        }
        if !spec.ca_cert.is_empty() && !spec.ca_cert.starts_with("-----BEGIN CERTIFICATE-----") {
            return Err(ValidationError::invalid(
                "spec.caCert",
                "not PEM certificates (-----BEGIN CERTIFICATE-----…)",
            ));
        }
        Ok(())
    }
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

/// A project.
pub type Project = MetadataOnly;
/// A composite profile.
pub type CompositeProfile = MetadataOnly;
/// An app of a composite app (its chart travels beside it).
pub type App = MetadataOnly;
/// A generic placement intent.
pub type GenericPlacementIntent = MetadataOnly;
/// A cluster provider.
pub type ClusterProvider = MetadataOnly;

/// A composite app; `spec.compositeAppVersion` is the second half of its identity.
pub type CompositeApp = Resource<CompositeAppSpec>;
/// Spec of a composite app.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["compositeAppVersion"]))]
pub struct CompositeAppSpec {
    /// The version, e.g. `v1`; EMCO's name rule.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub composite_app_version: String,
}

/// An app dependency: wait for another app before applying this one.
pub type AppDependency = Resource<AppDependencySpec>;
/// Spec of an app dependency.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["app", "opStatus"]))]
pub struct AppDependencySpec {
    /// The app waited for.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub app: String,
    /// `Ready` or `Deployed`.
    #[serde(default)]
    #[schemars(extend("enum" = ["Ready", "Deployed"]))]
    pub op_status: String,
    /// Seconds to wait after the other app reached `op_status`.
    #[serde(default)]
    pub wait: u64,
}

impl AppDependency {
    /// Checks names and the `opStatus` value.
    pub fn validate_dependency(&self) -> Result<(), ValidationError> {
        self.metadata.validate("dependency")?;
        validate_name("dependency app", &self.spec.app)?;
        if !matches!(self.spec.op_status.as_str(), "Ready" | "Deployed") {
            return Err(ValidationError::NotAllowed {
                field: "spec.opStatus".into(),
                value: self.spec.op_status.clone(),
                allowed: "Ready, Deployed".into(),
            });
        }
        Ok(())
    }
}

/// An app profile: override values for one app.
pub type AppProfile = Resource<AppProfileSpec>;
/// Spec of an app profile.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("required" = ["app"]))]
pub struct AppProfileSpec {
    /// The app the profile is for.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub app: String,
}

/// A deployment intent group.
pub type DeploymentIntentGroup = Resource<DigSpec>;
/// Spec of a deployment intent group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["compositeProfile", "version"]))]
pub struct DigSpec {
    /// The composite profile whose app profiles apply.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub composite_profile: String,
    /// The Helm release name (`.Release.Name`).
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub version: String,
    /// The logical cloud; optional until logical clouds exist (then the `default` namespace is used).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 128), pattern(crate::names::OPTIONAL_NAME_PATTERN))]
    pub logical_cloud: String,
    /// Per-app `key=value` overrides, applied last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub override_values: Vec<OverrideValues>,
    /// How instantiations, updates and rollbacks reach the clusters (beyond EMCO): in batches; absent, all at
    /// once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<crate::rollout::RolloutSpec>,
}

/// Override values for one app.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("required" = ["app"]))]
pub struct OverrideValues {
    /// The app.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub app: String,
    /// Dotted keys to values, as Helm's `--set key=value`.
    #[serde(default)]
    #[schemars(extend(
        "propertyNames" = {"minLength": 1},
        "additionalProperties" = {"type": "string", "maxLength": MAX_OVERRIDE_VALUE_LEN}
    ))]
    pub values: BTreeMap<String, String>,
}

impl DeploymentIntentGroup {
    /// Checks names, required fields and override value lengths.
    pub fn validate_dig(&self) -> Result<(), ValidationError> {
        self.metadata.validate("deployment intent group")?;
        require("spec.compositeProfile", &self.spec.composite_profile)?;
        validate_name("composite profile", &self.spec.composite_profile)?;
        require("spec.version", &self.spec.version)?;
        validate_name("release version", &self.spec.version)?;
        if !self.spec.logical_cloud.is_empty() {
            validate_name("logical cloud", &self.spec.logical_cloud)?;
        }
        for (index, entry) in self.spec.override_values.iter().enumerate() {
            validate_name(&format!("spec.overrideValues[{index}].app"), &entry.app)?;
            for (key, value) in &entry.values {
                require(&format!("spec.overrideValues[{index}].values key"), key)?;
                check_len(
                    &format!("spec.overrideValues[{index}].values.{key}"),
                    value,
                    MAX_OVERRIDE_VALUE_LEN,
                )?;
            }
        }
        if let Some(rollout) = &self.spec.rollout {
            rollout.validate()?;
        }
        Ok(())
    }
}

/// A DIG's group intent (`/intents`): names the generic placement intent (and action intents) to use.
pub type GroupIntent = Resource<GroupIntentSpec>;
/// Spec of a group intent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupIntentSpec {
    /// Controller name → intent name; `genericPlacementIntent` names a generic placement intent of the DIG.
    #[serde(default)]
    #[schemars(extend(
        "propertyNames" = {"minLength": 1, "maxLength": 128, "pattern": crate::names::NAME_PATTERN},
        "additionalProperties" = {"type": "string", "minLength": 1, "maxLength": 128, "pattern": crate::names::NAME_PATTERN}
    ))]
    pub intent: BTreeMap<String, String>,
}

/// The key of a group intent that names the generic placement intent.
pub const GENERIC_PLACEMENT_INTENT_KEY: &str = "genericPlacementIntent";

/// An app placement intent.
pub type AppIntent = Resource<AppIntentSpec>;
/// Spec of an app placement intent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("required" = ["app", "intent"]))]
pub struct AppIntentSpec {
    /// The app placed.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub app: String,
    /// Where it goes.
    #[serde(default)]
    pub intent: PlacementIntent,
}

/// Placement rules: every `allOf` cluster, and the clusters of each `anyOf` group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
// At least one item (`validate_app_intent`); an `anyOf` item is not itself an `anyOf` list.
#[schemars(extend(
    "anyOf" = [{"required": ["allOf"], "properties": {"allOf": {"type": "array", "minItems": 1}}},
               {"required": ["anyOf"], "properties": {"anyOf": {"type": "array", "minItems": 1}}}],
    "allOf" = [{"properties": {"anyOf": {"type": "array", "items": {"properties": {"anyOf": {"type": "array", "maxItems": 0}}}}}}]
))]
pub struct PlacementIntent {
    /// Mandatory clusters (an item may itself be an `anyOf` list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all_of: Vec<PlacementItem>,
    /// One optional group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<PlacementItem>,
}

/// One placement item: a cluster or a cluster label of a provider, or a nested `anyOf` list.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
// As `PlacementItem::validate` checks it: a provider with exactly one of a cluster and a label, or a nested `anyOf`
// list naming neither (whose items nest no further).
#[schemars(extend("oneOf" = [
    {"required": ["clusterProvider", "cluster"],
     "properties": {"clusterProvider": {"type": "string", "minLength": 1}, "cluster": {"type": "string", "minLength": 1},
                    "clusterLabel": {"type": "string", "maxLength": 0}, "anyOf": {"type": "array", "maxItems": 0}}},
    {"required": ["clusterProvider", "clusterLabel"],
     "properties": {"clusterProvider": {"type": "string", "minLength": 1}, "clusterLabel": {"type": "string", "minLength": 1, "maxLength": 63},
                    "cluster": {"type": "string", "maxLength": 0}, "anyOf": {"type": "array", "maxItems": 0}}},
    {"required": ["anyOf"],
     "properties": {"anyOf": {"type": "array", "minItems": 1, "items": {"properties": {"anyOf": {"type": "array", "maxItems": 0}}}},
                    "clusterProvider": {"type": "string", "maxLength": 0}, "cluster": {"type": "string", "maxLength": 0}, "clusterLabel": {"type": "string", "maxLength": 0}}}
]))]
pub struct PlacementItem {
    /// The cluster provider.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 128), pattern(crate::names::OPTIONAL_NAME_PATTERN))]
    pub cluster_provider: String,
    /// A cluster of the provider.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 128), pattern(crate::names::OPTIONAL_NAME_PATTERN))]
    pub cluster: String,
    /// A label selecting clusters of the provider.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 63), pattern(crate::names::OPTIONAL_NAME_PATTERN))]
    pub cluster_label: String,
    /// A nested optional group (only inside `allOf`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<PlacementItem>,
}

impl PlacementItem {
    fn validate(&self, field: &str, nested_allowed: bool) -> Result<(), ValidationError> {
        if !self.any_of.is_empty() {
            if !nested_allowed {
                return Err(ValidationError::Placement(format!(
                    "{field}: anyOf cannot be nested here"
                )));
            }
            if !self.cluster_provider.is_empty() || !self.cluster.is_empty() || !self.cluster_label.is_empty()
            {
                return Err(ValidationError::Placement(format!(
                    "{field}: an anyOf item cannot also name a cluster provider, cluster or label"
                )));
            }
            for (index, item) in self.any_of.iter().enumerate() {
                item.validate(&format!("{field}.anyOf[{index}]"), false)?;
            }
            return Ok(());
        }
        validate_name(&format!("{field}.clusterProvider"), &self.cluster_provider)?;
        match (self.cluster.is_empty(), self.cluster_label.is_empty()) {
            (false, true) => validate_name(&format!("{field}.cluster"), &self.cluster)?,
            (true, false) => validate_label_value(&format!("{field}.clusterLabel"), &self.cluster_label)?,
            _ => {
                return Err(ValidationError::Placement(format!(
                    "{field}: give exactly one of cluster or clusterLabel"
                )));
            }
        }
        Ok(())
    }
}

impl AppIntent {
    /// Checks names and the shape of every placement item.
    pub fn validate_app_intent(&self) -> Result<(), ValidationError> {
        self.metadata.validate("app intent")?;
        validate_name("spec.app", &self.spec.app)?;
        let intent = &self.spec.intent;
        if intent.all_of.is_empty() && intent.any_of.is_empty() {
            return Err(ValidationError::Placement(
                "spec.intent: give at least one allOf or anyOf item".to_string(),
            ));
        }
        for (index, item) in intent.all_of.iter().enumerate() {
            item.validate(&format!("spec.intent.allOf[{index}]"), true)?;
        }
        for (index, item) in intent.any_of.iter().enumerate() {
            item.validate(&format!("spec.intent.anyOf[{index}]"), false)?;
        }
        Ok(())
    }
}

/// A cluster's metadata part (the kubeconfig travels as the `file` part and is never returned).
pub type Cluster = Resource<ClusterSpec>;
/// Spec of a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// GitOps settings; when `gitOpsType` is set no kubeconfig is needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_ops: Option<GitOps>,
    /// Present on a pull cluster: an agent in the cluster (`emco-monitor --pull-from`) reaches emco, takes the
    /// cluster's desired state and reports its status; emco never dials the cluster and needs no kubeconfig.
    /// Its own key rather than a `gitOpsType`: a pull cluster has no sync objects, and `gitOps` keeps meaning
    /// exactly what EMCO means by it (a Git repository between emco and the cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull: Option<PullSettings>,
}

/// The settings of a pull cluster (none yet: its presence makes the cluster a pull cluster).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullSettings {}

/// GitOps settings of a cluster: all three fields (EMCO's `cluster-gitops.json`); a cluster without them has no
/// `gitOps`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["gitOpsType", "gitOpsReferenceObject", "gitOpsResourceObject"]))]
pub struct GitOps {
    /// The GitOps agent of the cluster: `fluxv2` (EMCO's examples also write `fluxcd`); EMCO's `anthos` and
    /// `azureArcV2` are not served yet.
    #[serde(default)]
    #[schemars(extend("enum" = ["fluxv2", "fluxcd", "anthos", "azureArcV2"]))]
    pub git_ops_type: String,
    /// The cluster sync object (`…/cluster-sync-objects/{name}`) that configures the agent (Flux: the Git
    /// repository it reads).
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub git_ops_reference_object: String,
    /// The cluster sync object of the Git repository emco writes the cluster's resources to.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub git_ops_resource_object: String,
}

/// The GitOps types emco serves: Flux v2, as EMCO names it and as its examples also spell it.
pub const SERVED_GITOPS_TYPES: [&str; 2] = ["fluxv2", "fluxcd"];
/// The GitOps types EMCO has that emco does not serve yet.
pub const UNSERVED_GITOPS_TYPES: [&str; 2] = ["anthos", "azureArcV2"];

impl Cluster {
    /// Checks the metadata and the GitOps settings: with `gitOps`, all three fields, a GitOps type EMCO has, object
    /// names by the name rule. (A type EMCO has that emco does not serve yet passes here: see [`GitOps::served`].)
    pub fn validate_cluster(&self) -> Result<(), ValidationError> {
        self.metadata.validate("cluster")?;
        if self.spec.pull.is_some() && self.spec.git_ops.is_some() {
            return Err(ValidationError::invalid(
                "spec.pull",
                "a cluster is either a pull cluster (spec.pull) or a GitOps cluster (spec.gitOps), not both",
            ));
        }
        let Some(git_ops) = &self.spec.git_ops else {
            return Ok(());
        };
        let fields = [
            ("spec.gitOps.gitOpsType", &git_ops.git_ops_type),
            (
                "spec.gitOps.gitOpsReferenceObject",
                &git_ops.git_ops_reference_object,
            ),
            (
                "spec.gitOps.gitOpsResourceObject",
                &git_ops.git_ops_resource_object,
            ),
        ];
        for (field, value) in fields {
            require(field, value)?;
        }
        let known = SERVED_GITOPS_TYPES
            .iter()
            .chain(&UNSERVED_GITOPS_TYPES)
            .any(|known| *known == git_ops.git_ops_type);
        if !known {
            return Err(not_allowed(
                "spec.gitOps.gitOpsType",
                &git_ops.git_ops_type,
                "fluxv2 (or fluxcd), anthos, azureArcV2",
            ));
        }
        validate_name(
            "spec.gitOps.gitOpsReferenceObject",
            &git_ops.git_ops_reference_object,
        )?;
        validate_name(
            "spec.gitOps.gitOpsResourceObject",
            &git_ops.git_ops_resource_object,
        )?;
        Ok(())
    }

    /// The cluster's GitOps settings, when it is a GitOps cluster (its `gitOpsType` set).
    #[must_use]
    pub fn git_ops(&self) -> Option<&GitOps> {
        self.spec
            .git_ops
            .as_ref()
            .filter(|git_ops| !git_ops.git_ops_type.is_empty())
    }

    /// Whether the cluster is a pull cluster (`spec.pull`): its agent reaches emco.
    #[must_use]
    pub fn is_pull(&self) -> bool {
        self.spec.pull.is_some()
    }
}

impl GitOps {
    /// Whether emco serves this GitOps type (Flux v2).
    #[must_use]
    pub fn served(&self) -> bool {
        SERVED_GITOPS_TYPES.contains(&self.git_ops_type.as_str())
    }
}

/// A cluster label.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["clusterLabel"]))]
pub struct ClusterLabel {
    /// The label; the Kubernetes label-value rule.
    #[serde(default)]
    #[schemars(length(min = 1, max = 63), pattern(crate::names::NAME_PATTERN))]
    pub cluster_label: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dig_body_round_trips_and_validates() {
        let body = r#"{"metadata":{"name":"vfw_deployment_intent_group","description":"x"},
            "spec":{"compositeProfile":"vfw_composite-profile","version":"r1",
                    "overrideValues":[{"app":"firewall","values":{"replicaCount":"2"}}],"unknown":1}}"#;
        let dig: DeploymentIntentGroup = serde_json::from_str(body).unwrap();
        dig.validate_dig().unwrap();
        assert_eq!(dig.spec.override_values[0].values["replicaCount"], "2");
        let mut missing = dig.clone();
        missing.spec.version.clear();
        assert_eq!(
            missing.validate_dig(),
            Err(ValidationError::Missing {
                field: "spec.version".into()
            })
        );
    }

    #[test]
    fn placement_items_need_exactly_one_target() {
        let ok: AppIntent = serde_json::from_str(
            r#"{"metadata":{"name":"fw-pi"},"spec":{"app":"firewall","intent":{"allOf":[
                {"clusterProvider":"p","cluster":"edge01"},{"clusterProvider":"p","clusterLabel":"east"},
                {"anyOf":[{"clusterProvider":"p","clusterLabel":"west"}]}]}}}"#,
        )
        .unwrap();
        ok.validate_app_intent().unwrap();
        let both: AppIntent = serde_json::from_str(
            r#"{"metadata":{"name":"x"},"spec":{"app":"a","intent":{"allOf":[
                {"clusterProvider":"p","cluster":"c","clusterLabel":"l"}]}}}"#,
        )
        .unwrap();
        let err = both.validate_app_intent().unwrap_err().to_string();
        assert!(err.contains("allOf[0]") && err.contains("exactly one"), "{err}");
        let empty: AppIntent =
            serde_json::from_str(r#"{"metadata":{"name":"x"},"spec":{"app":"a","intent":{}}}"#).unwrap();
        assert!(empty.validate_app_intent().is_err());
    }

    #[test]
    fn metadata_limits_name_the_field() {
        let mut meta = Metadata::named("p");
        meta.user_data1 = "x".repeat(513);
        let err = meta.validate("project").unwrap_err().to_string();
        assert!(err.contains("metadata.userData1"), "{err}");
    }

    #[test]
    fn dependency_op_status_is_checked() {
        let dep: AppDependency = serde_json::from_str(
            r#"{"metadata":{"name":"d"},"spec":{"app":"db","opStatus":"Running","wait":10}}"#,
        )
        .unwrap();
        let err = dep.validate_dependency().unwrap_err().to_string();
        assert!(err.contains("Ready, Deployed"), "{err}");
    }
}
