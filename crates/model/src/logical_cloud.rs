//! Bodies of dcm's logical clouds (`reference/emco.md` §2.4, §5.2): the logical cloud itself, its cluster
//! references, user permissions, cluster quotas and key-value pairs, with EMCO's JSON field names, and their
//! validation.
//!
//! Validation checks what EMCO's dcm schemas check, plus what the Kubernetes objects built from these bodies need
//! (a level-1 cloud's namespace is a DNS-1123 label; quota keys are ResourceQuota resource names and values
//! quantities), so a body that would only fail in a cluster is refused when it is posted. Every error names the
//! field as a JSON path (`spec.user.userName`).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::names::validate_name;
use crate::network::{is_dns_label, is_dns_subdomain, validate_k8s_label_key, validate_k8s_label_value};
use crate::resources::{Resource, ValidationError, check_len, not_allowed, require};

/// `spec.level` of an admin logical cloud.
pub const LEVEL_ADMIN: &str = "0";
/// `spec.level` of a standard (or privileged) logical cloud; the default.
pub const LEVEL_STANDARD: &str = "1";
/// The only user type EMCO supports (also what an empty `spec.user.type` means).
pub const USER_TYPE_CERTIFICATE: &str = "certificate";

/// The most labels of a logical cloud.
pub const MAX_LOGICAL_CLOUD_LABELS: usize = 64;
/// The most entries of each list of a user permission (`apiGroups`, `resources`, `verbs`).
pub const MAX_PERMISSION_ENTRIES: usize = 64;
/// The most keys of a cluster quota.
pub const MAX_QUOTA_KEYS: usize = 64;
/// The most entries of a key-value pair list.
pub const MAX_KV_ENTRIES: usize = 64;
/// The longest user name: the certificate's CommonName (X.509's upper bound).
pub const MAX_USER_NAME_LEN: usize = 64;
/// The longest key or value of a key-value pair, a quota value or a permission entry (EMCO's schemas: 128).
pub const MAX_LOGICAL_CLOUD_FIELD_LEN: usize = 128;
/// The longest `loadBalancerIP` (EMCO's schema).
pub const MAX_LOAD_BALANCER_IP_LEN: usize = 16;

/// A logical cloud (`/v2/projects/{p}/logical-clouds`).
pub type LogicalCloud = Resource<LogicalCloudSpec>;

/// Spec of a logical cloud.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LogicalCloudSpec {
    /// `"0"` (admin) or `"1"` (standard); `"1"` when absent.
    #[serde(default = "default_level")]
    pub level: String,
    /// The namespace; required for level 1 (a DNS-1123 label), taken from the clusters for level 0.
    #[serde(default)]
    pub namespace: String,
    /// Labels of the namespace a level-1 cloud creates.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The user a level-1 cloud creates credentials for; level 0 names none.
    #[serde(default)]
    pub user: LogicalCloudUser,
}

fn default_level() -> String {
    LEVEL_STANDARD.to_string()
}

impl Default for LogicalCloudSpec {
    fn default() -> Self {
        Self {
            level: default_level(),
            namespace: String::new(),
            labels: BTreeMap::new(),
            user: LogicalCloudUser::default(),
        }
    }
}

/// The user of a level-1 logical cloud.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LogicalCloudUser {
    /// The user name: the certificate's CommonName and the RoleBindings' subject.
    #[serde(default, rename = "userName")]
    pub user_name: String,
    /// `certificate` (or empty, meaning the same).
    #[serde(default, rename = "type")]
    pub user_type: String,
}

/// The level of a logical cloud.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicalCloudLevel {
    /// Level `"0"`: the clusters' own namespace and credentials; nothing is created in the clusters.
    Admin,
    /// Level `"1"`: a namespace, roles, quotas and a user certificate per cluster.
    Standard,
}

impl LogicalCloudSpec {
    /// The level, if `spec.level` is `"0"` or `"1"`.
    #[must_use]
    pub fn level(&self) -> Option<LogicalCloudLevel> {
        match self.level.as_str() {
            LEVEL_ADMIN => Some(LogicalCloudLevel::Admin),
            LEVEL_STANDARD => Some(LogicalCloudLevel::Standard),
            _ => None,
        }
    }
}

/// A cluster of a logical cloud (`.../cluster-references`).
pub type ClusterReference = Resource<ClusterReferenceSpec>;

/// Spec of a cluster reference.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("required" = ["clusterProvider", "cluster"]))]
pub struct ClusterReferenceSpec {
    /// The cluster provider (clm).
    #[serde(default, rename = "clusterProvider")]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub cluster_provider: String,
    /// The cluster of that provider.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub cluster: String,
    /// Unused by EMCO; an IPv4 address when given.
    #[serde(default, rename = "loadBalancerIP")]
    #[schemars(pattern(
        r"^(((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))?$"
    ))]
    pub load_balancer_ip: String,
}

/// What the user of a level-1 logical cloud may do in a namespace (`.../user-permissions`).
pub type UserPermission = Resource<UserPermissionSpec>;

/// Spec of a user permission: one RBAC rule.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("required" = ["apiGroups", "resources", "verbs"]))]
pub struct UserPermissionSpec {
    /// The namespace of the Role; empty makes it a ClusterRole (as EMCO's dcm does).
    #[serde(default)]
    #[schemars(length(max = 63), pattern("^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$"))]
    pub namespace: String,
    /// API groups; `""` is the core group, `"*"` every group.
    #[serde(default, rename = "apiGroups")]
    #[schemars(length(min = 1, max = MAX_PERMISSION_ENTRIES))]
    #[schemars(extend("items" = {"type": "string", "maxLength": 128, "pattern": API_GROUP_PATTERN}))]
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/log`, `*`).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_PERMISSION_ENTRIES))]
    #[schemars(extend("items" = {"type": "string", "maxLength": 128, "pattern": RULE_RESOURCE_PATTERN}))]
    pub resources: Vec<String>,
    /// Verbs (`get`, `list`, `*`).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_PERMISSION_ENTRIES))]
    #[schemars(extend("items" = {"type": "string", "maxLength": 128, "pattern": "^(\\*|[a-z]+)$"}))]
    pub verbs: Vec<String>,
}

/// A ResourceQuota of a level-1 logical cloud's namespace (`.../cluster-quotas`): `spec` is the quota's `hard`
/// map, ResourceQuota resource names to quantities (`{"pods":"500","limits.cpu":"400"}`).
pub type ClusterQuota = Resource<ClusterQuotaSpec>;

/// Spec of a cluster quota: resource name → quantity.
pub type ClusterQuotaSpec = BTreeMap<String, String>;

/// A Kubernetes quantity as the API document states it (`is_quantity`).
const QUANTITY_PATTERN: &str = "([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]{1,3})?";

/// The API document's schema of a cluster quota, as `validate_cluster_quota` checks it: a DNS-1123 subdomain as its
/// name, ResourceQuota resource names (the standard ones, `count/…`, hugepages and storage classes; extended
/// resources are accepted but not described) to quantities.
pub fn cluster_quota_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut schema = <ClusterQuota as schemars::JsonSchema>::json_schema(generator);
    let subdomain = "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*";
    let key = format!(
        "^({}|count/{subdomain}|((requests|limits)\\.)?hugepages-{QUANTITY_PATTERN}|{subdomain}\\.storageclass\\.storage\\.k8s\\.io/(requests\\.storage|persistentvolumeclaims))$",
        QUOTA_RESOURCES.join("|").replace('.', "\\.")
    );
    if let Some(properties) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    {
        properties.insert(
            "spec".into(),
            serde_json::json!({
                "type": "object",
                "maxProperties": MAX_QUOTA_KEYS,
                "propertyNames": {"maxLength": 317, "pattern": key},
                "additionalProperties": {"type": "string", "maxLength": MAX_LOGICAL_CLOUD_FIELD_LEN, "pattern": format!("^{QUANTITY_PATTERN}$")}
            }),
        );
        let metadata = properties.get("metadata").cloned().unwrap_or_default();
        properties.insert(
            "metadata".into(),
            serde_json::json!({"allOf": [metadata, {"properties": {"name": {"maxLength": 128, "pattern": crate::names::DNS_SUBDOMAIN_PATTERN}}}]}),
        );
    }
    schema
}

/// The API document's schema of a logical cloud, as `validate_logical_cloud` checks it: a level-1 cloud (the
/// default level) has a DNS-1123 subdomain as its name, a namespace (a DNS-1123 label) and a user; a level-0 cloud
/// names no user.
pub fn logical_cloud_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut schema = <LogicalCloud as schemars::JsonSchema>::json_schema(generator);
    let user_name = "^[A-Za-z0-9]([-A-Za-z0-9_.@]{0,62}[A-Za-z0-9])?$";
    let level_0 = serde_json::json!({"required": ["spec"], "properties": {"spec": {"required": ["level"], "properties": {"level": {"const": LEVEL_ADMIN}}}}});
    let standard = serde_json::json!({
        "required": ["spec"],
        "properties": {
            "metadata": {"properties": {"name": {"pattern": crate::names::DNS_SUBDOMAIN_PATTERN}}},
            "spec": {
                "required": ["namespace", "user"],
                "properties": {
                    "level": {"const": LEVEL_STANDARD},
                    "namespace": {"type": "string", "minLength": 1, "maxLength": 63, "pattern": crate::names::DNS_LABEL_PATTERN},
                    "user": {"required": ["userName"], "properties": {"userName": {"type": "string", "minLength": 1, "maxLength": MAX_USER_NAME_LEN, "pattern": user_name}}}
                }
            }
        }
    });
    let admin = serde_json::json!({
        "properties": {"spec": {"properties": {
            "namespace": {"type": "string", "maxLength": 63, "pattern": "^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$"},
            "user": {"properties": {"userName": {"maxLength": 0}}}
        }}}
    });
    let labels = serde_json::json!({
        "properties": {"spec": {"properties": {
            "level": {"enum": [LEVEL_ADMIN, LEVEL_STANDARD]},
            "labels": {
                "maxProperties": MAX_LOGICAL_CLOUD_LABELS,
                "propertyNames": {"maxLength": 317, "pattern": crate::names::LABEL_KEY_PATTERN},
                "additionalProperties": {"type": "string", "maxLength": 63, "pattern": crate::names::OPTIONAL_NAME_PATTERN}
            },
            "user": {"properties": {"type": {"enum": ["", USER_TYPE_CERTIFICATE]}}}
        }}}
    });
    schema.insert(
        "allOf".into(),
        serde_json::json!([labels, {"if": level_0, "then": admin, "else": standard}]),
    );
    schema
}

/// Key-value pairs of a logical cloud (`.../kv-pairs`); EMCO stores them and uses them for nothing.
pub type LogicalCloudKv = Resource<KvSpec>;

/// Key-value pairs of a cluster (`/cluster-providers/{p}/clusters/{c}/kv-pairs`, EMCO's clm): the same body as a
/// logical cloud's; action controllers read them (a cluster's gateway address, its CNI, …).
pub type ClusterKvPairs = Resource<KvSpec>;

/// Key-value pairs of a cluster provider (`/cluster-providers/{p}/cluster-sync-objects`, EMCO's clm): what a GitOps
/// cluster's agent and repository need (`gitType`, `userName`, `gitToken`, `repoName`, `branch`, `url`; `timeOut`,
/// `syncInterval`, `retryInterval`). The same body as a cluster's kv-pairs.
pub type ClusterSyncObjects = Resource<KvSpec>;

/// The keys of a cluster sync object whose values are secrets: kept, used, never answered.
pub const SECRET_SYNC_KEYS: [&str; 2] = ["gitToken", "clientSecret"];

impl KvSpec {
    /// The pairs without the keys of [`SECRET_SYNC_KEYS`] (an entry that held only a secret stays, empty: the
    /// answer keeps the body's shape).
    #[must_use]
    pub fn without_secrets(&self) -> Self {
        let kv = self
            .kv
            .iter()
            .map(|entry| {
                entry
                    .iter()
                    .filter(|(key, _)| !SECRET_SYNC_KEYS.contains(&key.as_str()))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect::<BTreeMap<_, _>>()
            })
            .collect();
        Self { kv }
    }

    /// The first value of `key` among the pairs.
    #[must_use]
    pub fn value(&self, key: &str) -> Option<&str> {
        self.kv
            .iter()
            .find_map(|entry| entry.get(key))
            .map(String::as_str)
    }
}

/// Spec of key-value pairs: `{"kv":[{"k":"v"},...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("required" = ["kv"]))]
pub struct KvSpec {
    /// The pairs, each entry a map (usually of one key).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_KV_ENTRIES))]
    #[schemars(extend("items" = {
        "type": "object",
        "maxProperties": MAX_KV_ENTRIES,
        "propertyNames": {"minLength": 1, "maxLength": MAX_LOGICAL_CLOUD_FIELD_LEN},
        "additionalProperties": {"type": "string", "maxLength": MAX_LOGICAL_CLOUD_FIELD_LEN}
    }))]
    pub kv: Vec<BTreeMap<String, String>>,
}

fn check_count(field: &str, count: usize, max: usize) -> Result<(), ValidationError> {
    if count > max {
        return Err(not_allowed(
            field,
            &format!("{count} entries"),
            format!("at most {max} entries"),
        ));
    }
    Ok(())
}

/// Whether `name` may be a level-1 user: 1–64 letters, digits, `-`, `_`, `.` or `@`, starting and ending with a
/// letter or digit (so never a `system:` user).
fn is_user_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_USER_NAME_LEN
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'@'))
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

fn validate_namespace(field: &str, namespace: &str) -> Result<(), ValidationError> {
    check_len(field, namespace, 63)?;
    if !is_dns_label(namespace) {
        return Err(not_allowed(
            field,
            namespace,
            "a DNS-1123 label: 1-63 lower-case letters, digits or '-', starting and ending alphanumeric",
        ));
    }
    Ok(())
}

impl LogicalCloud {
    /// The level; `None` when `spec.level` is neither `"0"` nor `"1"` (refused by validation).
    #[must_use]
    pub fn level(&self) -> Option<LogicalCloudLevel> {
        self.spec.level()
    }

    /// Checks the metadata, the level, the labels and, by level, the namespace and the user: level 1 needs a
    /// namespace (a DNS-1123 label), a user name and a name that can prefix Kubernetes object names; level 0
    /// must not name a user.
    pub fn validate_logical_cloud(&self) -> Result<(), ValidationError> {
        self.metadata.validate("logical cloud")?;
        let spec = &self.spec;
        check_len("spec.level", &spec.level, 2)?;
        let level = spec.level().ok_or_else(|| {
            not_allowed(
                "spec.level",
                &spec.level,
                format!("{LEVEL_ADMIN}, {LEVEL_STANDARD}"),
            )
        })?;

        check_count("spec.labels", spec.labels.len(), MAX_LOGICAL_CLOUD_LABELS)?;
        for (key, value) in &spec.labels {
            validate_k8s_label_key("spec.labels", key)?;
            validate_k8s_label_value(&format!("spec.labels.{key}"), value)?;
        }

        let user = &spec.user;
        check_len("spec.user.type", &user.user_type, MAX_LOGICAL_CLOUD_FIELD_LEN)?;
        if !user.user_type.is_empty() && user.user_type != USER_TYPE_CERTIFICATE {
            return Err(not_allowed(
                "spec.user.type",
                &user.user_type,
                USER_TYPE_CERTIFICATE,
            ));
        }
        match level {
            LogicalCloudLevel::Admin => {
                if !user.user_name.is_empty() {
                    check_len("spec.user.userName", &user.user_name, MAX_USER_NAME_LEN)?;
                    return Err(not_allowed(
                        "spec.user.userName",
                        &user.user_name,
                        "no user for a level-0 logical cloud",
                    ));
                }
                if !spec.namespace.is_empty() {
                    validate_namespace("spec.namespace", &spec.namespace)?;
                }
            }
            LogicalCloudLevel::Standard => {
                if !is_dns_subdomain(&self.metadata.name) {
                    return Err(not_allowed(
                        "metadata.name",
                        &self.metadata.name,
                        "a lower-case DNS-1123 subdomain for a level-1 logical cloud (it prefixes the names \
                         of the Kubernetes objects it creates)",
                    ));
                }
                require("spec.namespace", &spec.namespace)?;
                validate_namespace("spec.namespace", &spec.namespace)?;
                require("spec.user.userName", &user.user_name)?;
                check_len("spec.user.userName", &user.user_name, MAX_USER_NAME_LEN)?;
                if !is_user_name(&user.user_name) {
                    return Err(not_allowed(
                        "spec.user.userName",
                        &user.user_name,
                        "letters, digits, '-', '_', '.' or '@', starting and ending with a letter or digit",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks what EMCO checks when a level-1 cloud is instantiated: at least one of `permissions` is for the
    /// cloud's own namespace.
    pub fn validate_level1_permissions(&self, permissions: &[UserPermission]) -> Result<(), ValidationError> {
        if permissions
            .iter()
            .any(|permission| permission.spec.namespace == self.spec.namespace)
        {
            return Ok(());
        }
        Err(ValidationError::Missing {
            field: format!(
                "user-permissions (a level-1 logical cloud needs one for its namespace '{}')",
                self.spec.namespace
            ),
        })
    }
}

impl ClusterReference {
    /// Checks the metadata, the provider and cluster names and the load-balancer address.
    pub fn validate_cluster_reference(&self) -> Result<(), ValidationError> {
        self.metadata.validate("cluster reference")?;
        require("spec.clusterProvider", &self.spec.cluster_provider)?;
        validate_name("spec.clusterProvider", &self.spec.cluster_provider)?;
        require("spec.cluster", &self.spec.cluster)?;
        validate_name("spec.cluster", &self.spec.cluster)?;
        let field = "spec.loadBalancerIP";
        check_len(field, &self.spec.load_balancer_ip, MAX_LOAD_BALANCER_IP_LEN)?;
        if !self.spec.load_balancer_ip.is_empty() && self.spec.load_balancer_ip.parse::<Ipv4Addr>().is_err() {
            return Err(not_allowed(
                field,
                &self.spec.load_balancer_ip,
                "an IPv4 address a.b.c.d",
            ));
        }
        Ok(())
    }
}

/// Whether `group` is an API group a rule may name: `""` (core), `"*"` or a DNS-1123 subdomain.
fn is_api_group(group: &str) -> bool {
    group.is_empty() || group == "*" || is_dns_subdomain(group)
}

/// A rule's API group as the API document states it (`is_api_group`): empty, `*` or a DNS-1123 subdomain.
const API_GROUP_PATTERN: &str =
    "^(\\*|[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*)?$";
/// A rule's resource as the API document states it (`is_rule_resource`).
const RULE_RESOURCE_PATTERN: &str = "^(\\*|[a-z0-9.-]+)(/(\\*|[a-z0-9.-]+))?$";

/// Whether `resource` is a rule's resource: `*`, or `name[/subresource]` with each part `*` or lower-case
/// letters, digits, `-` and `.`.
fn is_rule_resource(resource: &str) -> bool {
    let part_ok = |part: &str| {
        part == "*"
            || (!part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.')))
    };
    match resource.split_once('/') {
        Some((name, sub)) => part_ok(name) && part_ok(sub),
        None => part_ok(resource),
    }
}

/// Whether `verb` is a rule's verb: `*` or lower-case letters (`get`, `deletecollection`, `impersonate`).
fn is_verb(verb: &str) -> bool {
    verb == "*" || (!verb.is_empty() && verb.bytes().all(|b| b.is_ascii_lowercase()))
}

fn validate_rule_list(
    field: &str,
    entries: &[String],
    entry_ok: fn(&str) -> bool,
    allowed: &str,
) -> Result<(), ValidationError> {
    if entries.is_empty() {
        return Err(ValidationError::Missing { field: field.into() });
    }
    check_count(field, entries.len(), MAX_PERMISSION_ENTRIES)?;
    for (index, entry) in entries.iter().enumerate() {
        let field = format!("{field}[{index}]");
        check_len(&field, entry, MAX_LOGICAL_CLOUD_FIELD_LEN)?;
        if !entry_ok(entry) {
            return Err(not_allowed(&field, entry, allowed));
        }
    }
    Ok(())
}

impl UserPermission {
    /// Checks the metadata, the namespace (empty, or a DNS-1123 label) and the rule's lists (each non-empty).
    pub fn validate_user_permission(&self) -> Result<(), ValidationError> {
        self.metadata.validate("user permission")?;
        if !self.spec.namespace.is_empty() {
            validate_namespace("spec.namespace", &self.spec.namespace)?;
        }
        validate_rule_list(
            "spec.apiGroups",
            &self.spec.api_groups,
            is_api_group,
            "\"\" (the core group), \"*\" or a DNS-1123 subdomain",
        )?;
        validate_rule_list(
            "spec.resources",
            &self.spec.resources,
            is_rule_resource,
            "\"*\" or a resource[/subresource] of lower-case letters, digits, '-' and '.'",
        )?;
        validate_rule_list(
            "spec.verbs",
            &self.spec.verbs,
            is_verb,
            "\"*\" or a verb of lower-case letters",
        )
    }
}

/// ResourceQuota resource names that need no pattern.
const QUOTA_RESOURCES: &[&str] = &[
    "pods",
    "services",
    "services.loadbalancers",
    "services.nodeports",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
];

/// Whether `key` is a ResourceQuota resource name: a standard name, `count/<resource>[.<group>]`,
/// `<class>.storageclass.storage.k8s.io/{requests.storage,persistentvolumeclaims}`, a hugepages resource
/// (`[requests.|limits.]hugepages-<size>`) or an extended resource (`requests.<domain>/<name>`).
#[must_use]
pub fn is_quota_resource(key: &str) -> bool {
    if QUOTA_RESOURCES.contains(&key) {
        return true;
    }
    if let Some(counted) = key.strip_prefix("count/") {
        return is_dns_subdomain(counted);
    }
    let hugepages = key
        .strip_prefix("requests.")
        .or_else(|| key.strip_prefix("limits."))
        .unwrap_or(key)
        .strip_prefix("hugepages-");
    if let Some(size) = hugepages {
        return is_quantity(size);
    }
    if let Some((prefix, resource)) = key.split_once('/') {
        if let Some(class) = prefix.strip_suffix(".storageclass.storage.k8s.io") {
            return is_dns_subdomain(class)
                && matches!(resource, "requests.storage" | "persistentvolumeclaims");
        }
        if let Some(domain) = prefix.strip_prefix("requests.") {
            return domain.contains('.')
                && is_dns_subdomain(domain)
                && !domain.ends_with("kubernetes.io")
                && is_dns_label(resource);
        }
    }
    false
}

/// Whether `text` is a non-negative Kubernetes quantity: a decimal number (`1`, `1.5`, `.5`, `1.`) followed by
/// nothing, a binary suffix (`Ki` … `Ei`), a decimal suffix (`n`, `u`, `m`, `k`, `M`, `G`, `T`, `P`, `E`) or an
/// exponent (`e3`, `E-2`).
#[must_use]
pub fn is_quantity(text: &str) -> bool {
    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(number_end);
    let number_ok = match number.split_once('.') {
        Some((whole, fraction)) => {
            !(whole.is_empty() && fraction.is_empty())
                && whole.bytes().all(|b| b.is_ascii_digit())
                && fraction.bytes().all(|b| b.is_ascii_digit())
        }
        None => !number.is_empty(),
    };
    if !number_ok {
        return false;
    }
    match suffix {
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => true,
        _ => {
            let Some(exponent) = suffix.strip_prefix(['e', 'E']) else {
                return false;
            };
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            !digits.is_empty() && digits.len() <= 3 && digits.bytes().all(|b| b.is_ascii_digit())
        }
    }
}

impl ClusterQuota {
    /// Checks the metadata (the name also names the ResourceQuota, so it is a DNS-1123 subdomain), that every key
    /// is a ResourceQuota resource name and every value a quantity.
    pub fn validate_cluster_quota(&self) -> Result<(), ValidationError> {
        self.metadata.validate("cluster quota")?;
        if !is_dns_subdomain(&self.metadata.name) {
            return Err(not_allowed(
                "metadata.name",
                &self.metadata.name,
                "a lower-case DNS-1123 subdomain (it names the ResourceQuota)",
            ));
        }
        check_count("spec", self.spec.len(), MAX_QUOTA_KEYS)?;
        for (key, value) in &self.spec {
            check_len("spec", key, 317)?;
            if !is_quota_resource(key) {
                return Err(not_allowed(
                    "spec",
                    key,
                    "ResourceQuota resource names (pods, requests.cpu, limits.memory, count/deployments.apps, …)",
                ));
            }
            let field = format!("spec.{key}");
            check_len(&field, value, MAX_LOGICAL_CLOUD_FIELD_LEN)?;
            if !is_quantity(value) {
                return Err(not_allowed(
                    &field,
                    value,
                    "a Kubernetes quantity (500, 1.5, 400m, 2Gi, 1e3)",
                ));
            }
        }
        Ok(())
    }
}

impl LogicalCloudKv {
    /// Checks the metadata and the pairs: at least one entry, keys non-empty, keys and values at most 128
    /// characters.
    pub fn validate_kv(&self) -> Result<(), ValidationError> {
        self.metadata.validate("kv pair")?;
        if self.spec.kv.is_empty() {
            return Err(ValidationError::Missing {
                field: "spec.kv".into(),
            });
        }
        check_count("spec.kv", self.spec.kv.len(), MAX_KV_ENTRIES)?;
        for (index, entry) in self.spec.kv.iter().enumerate() {
            let field = format!("spec.kv[{index}]");
            check_count(&field, entry.len(), MAX_KV_ENTRIES)?;
            for (key, value) in entry {
                require(&format!("{field} key"), key)?;
                check_len(&format!("{field} key"), key, MAX_LOGICAL_CLOUD_FIELD_LEN)?;
                check_len(&format!("{field}.{key}"), value, MAX_LOGICAL_CLOUD_FIELD_LEN)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The field an error names (its JSON path), for assertions.
    fn field_of(err: &ValidationError) -> String {
        match err {
            ValidationError::TooLong { field, .. }
            | ValidationError::Missing { field }
            | ValidationError::NotAllowed { field, .. } => field.clone(),
            other => other.to_string(),
        }
    }

    fn cloud(body: &str) -> LogicalCloud {
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn level_defaults_to_one_and_the_body_round_trips() {
        let lc = cloud(r#"{"metadata":{"name":"lc1"},"spec":{"namespace":"ns1","user":{"userName":"u1"}}}"#);
        assert_eq!(lc.spec.level, "1");
        assert_eq!(lc.level(), Some(LogicalCloudLevel::Standard));
        lc.validate_logical_cloud().unwrap();
        let no_spec = cloud(r#"{"metadata":{"name":"lc1"}}"#);
        assert_eq!(no_spec.spec.level, "1");
        let json = serde_json::to_value(&lc).unwrap();
        assert_eq!(json["spec"]["user"]["userName"], "u1");
        assert_eq!(json["spec"]["level"], "1");
        let full = cloud(
            r#"{"metadata":{"name":"lc1"},"spec":{"level":"1","namespace":"ns1","labels":{"geo":"usa-nw"},
                "user":{"userName":"u1","type":"certificate"}}}"#,
        );
        full.validate_logical_cloud().unwrap();
        let admin = cloud(r#"{"metadata":{"name":"Admin_LC"},"spec":{"level":"0"}}"#);
        admin.validate_logical_cloud().unwrap();
        assert_eq!(admin.level(), Some(LogicalCloudLevel::Admin));
    }

    #[test]
    fn logical_cloud_errors_name_their_field() {
        let cases = [
            (
                r#"{"level":"2","namespace":"ns1","user":{"userName":"u1"}}"#,
                "spec.level",
            ),
            (r#"{"user":{"userName":"u1"}}"#, "spec.namespace"),
            (
                r#"{"namespace":"NS1","user":{"userName":"u1"}}"#,
                "spec.namespace",
            ),
            (r#"{"namespace":"ns1"}"#, "spec.user.userName"),
            (
                r#"{"namespace":"ns1","user":{"userName":"system:admin"}}"#,
                "spec.user.userName",
            ),
            (
                r#"{"namespace":"ns1","user":{"userName":"u1","type":"token"}}"#,
                "spec.user.type",
            ),
            (r#"{"level":"0","user":{"userName":"u1"}}"#, "spec.user.userName"),
            (r#"{"level":"0","namespace":"a_b"}"#, "spec.namespace"),
            (
                r#"{"namespace":"ns1","user":{"userName":"u1"},"labels":{"-x":"y"}}"#,
                "spec.labels",
            ),
            (
                r#"{"namespace":"ns1","user":{"userName":"u1"},"labels":{"x":"y z"}}"#,
                "spec.labels.x",
            ),
        ];
        for (spec, field) in cases {
            let lc = cloud(&format!(r#"{{"metadata":{{"name":"lc1"}},"spec":{spec}}}"#));
            let err = lc.validate_logical_cloud().unwrap_err();
            assert_eq!(field_of(&err), field, "{spec}: {err}");
        }
        let underscore =
            cloud(r#"{"metadata":{"name":"lc_1"},"spec":{"namespace":"ns1","user":{"userName":"u"}}}"#);
        assert_eq!(
            field_of(&underscore.validate_logical_cloud().unwrap_err()),
            "metadata.name"
        );
        let long_user = cloud(&format!(
            r#"{{"metadata":{{"name":"lc1"}},"spec":{{"namespace":"ns1","user":{{"userName":"{}"}}}}}}"#,
            "u".repeat(65)
        ));
        assert!(matches!(
            long_user.validate_logical_cloud(),
            Err(ValidationError::TooLong { .. })
        ));
    }

    #[test]
    fn level1_needs_a_permission_for_its_namespace() {
        let lc = cloud(r#"{"metadata":{"name":"lc1"},"spec":{"namespace":"ns1","user":{"userName":"u1"}}}"#);
        let other: UserPermission = serde_json::from_str(
            r#"{"metadata":{"name":"p"},"spec":{"namespace":"ns2","apiGroups":[""],"resources":["pods"],"verbs":["get"]}}"#,
        )
        .unwrap();
        let err = lc
            .validate_level1_permissions(std::slice::from_ref(&other))
            .unwrap_err();
        assert!(err.to_string().contains("'ns1'"), "{err}");
        let mut own = other.clone();
        own.spec.namespace = "ns1".into();
        lc.validate_level1_permissions(&[other, own]).unwrap();
    }

    #[test]
    fn cluster_reference_validation() {
        let ok: ClusterReference = serde_json::from_str(
            r#"{"metadata":{"name":"ref1"},"spec":{"clusterProvider":"p","cluster":"edge01","loadBalancerIP":"0.0.0.0"}}"#,
        )
        .unwrap();
        ok.validate_cluster_reference().unwrap();
        assert_eq!(
            serde_json::to_value(&ok).unwrap()["spec"]["loadBalancerIP"],
            "0.0.0.0"
        );
        let mut missing = ok.clone();
        missing.spec.cluster.clear();
        assert_eq!(
            field_of(&missing.validate_cluster_reference().unwrap_err()),
            "spec.cluster"
        );
        let mut bad_ip = ok.clone();
        bad_ip.spec.load_balancer_ip = "1.2.3".into();
        assert_eq!(
            field_of(&bad_ip.validate_cluster_reference().unwrap_err()),
            "spec.loadBalancerIP"
        );
        let mut bad_provider = ok;
        bad_provider.spec.cluster_provider = "a b".into();
        let err = bad_provider.validate_cluster_reference().unwrap_err().to_string();
        assert!(err.contains("spec.clusterProvider"), "{err}");
    }

    #[test]
    fn user_permission_validation() {
        let body = r#"{"metadata":{"name":"perm1"},"spec":{"namespace":"ns1","apiGroups":["","apps"],
            "resources":["pods","pods/log","deployments","*/scale"],"verbs":["get","list","*"]}}"#;
        let ok: UserPermission = serde_json::from_str(body).unwrap();
        ok.validate_user_permission().unwrap();
        assert_eq!(serde_json::to_value(&ok).unwrap()["spec"]["apiGroups"][0], "");
        let mutate = |change: fn(&mut UserPermissionSpec)| {
            let mut permission = ok.clone();
            change(&mut permission.spec);
            field_of(&permission.validate_user_permission().unwrap_err())
        };
        assert_eq!(mutate(|s| s.namespace = "Ns".into()), "spec.namespace");
        assert_eq!(mutate(|s| s.api_groups.clear()), "spec.apiGroups");
        assert_eq!(mutate(|s| s.api_groups.push("Apps".into())), "spec.apiGroups[2]");
        assert_eq!(mutate(|s| s.resources.clear()), "spec.resources");
        assert_eq!(mutate(|s| s.resources[1] = "pods/".into()), "spec.resources[1]");
        assert_eq!(mutate(|s| s.verbs.clear()), "spec.verbs");
        assert_eq!(mutate(|s| s.verbs[0] = "Get".into()), "spec.verbs[0]");
        assert_eq!(mutate(|s| s.verbs = vec!["get".into(); 65]), "spec.verbs");
    }

    #[test]
    fn quota_keys_and_quantities() {
        for key in [
            "pods",
            "requests.cpu",
            "limits.memory",
            "count/deployments.apps",
            "count/secrets",
            "services.loadbalancers",
            "gold.storageclass.storage.k8s.io/requests.storage",
            "requests.nvidia.com/gpu",
            "hugepages-2Mi",
            "requests.hugepages-1Gi",
        ] {
            assert!(is_quota_resource(key), "{key}");
        }
        for key in [
            "pod",
            "requests.gpu",
            "count/",
            "count/Deployments",
            "gold.storageclass.storage.k8s.io/limits.cpu",
            "requests.example.kubernetes.io/x",
            "hugepages-x",
        ] {
            assert!(!is_quota_resource(key), "{key}");
        }
        for value in ["500", "1.5", ".5", "1.", "400m", "2Gi", "1e3", "1E-2", "0"] {
            assert!(is_quantity(value), "{value}");
        }
        for value in ["", "-1", "1.2.3", "1Gb", "Gi", "1e", ".", "1 Gi", "1ki", "e3"] {
            assert!(!is_quantity(value), "{value}");
        }
    }

    #[test]
    fn cluster_quota_errors_name_their_field() {
        let ok: ClusterQuota = serde_json::from_str(
            r#"{"metadata":{"name":"quota1"},"spec":{"limits.cpu":"400","pods":"500","count/deployments.apps":"10"}}"#,
        )
        .unwrap();
        ok.validate_cluster_quota().unwrap();
        assert_eq!(serde_json::to_value(&ok).unwrap()["spec"]["pods"], "500");
        let mut bad_key = ok.clone();
        bad_key.spec.insert("podz".into(), "1".into());
        let err = bad_key.validate_cluster_quota().unwrap_err();
        assert_eq!(field_of(&err), "spec");
        assert!(err.to_string().contains("podz"), "{err}");
        let mut bad_value = ok.clone();
        bad_value.spec.insert("requests.memory".into(), "lots".into());
        assert_eq!(
            field_of(&bad_value.validate_cluster_quota().unwrap_err()),
            "spec.requests.memory"
        );
        let mut bad_name = ok;
        bad_name.metadata.name = "Quota_1".into();
        assert_eq!(
            field_of(&bad_name.validate_cluster_quota().unwrap_err()),
            "metadata.name"
        );
    }

    #[test]
    fn kv_validation() {
        let ok: LogicalCloudKv = serde_json::from_str(
            r#"{"metadata":{"name":"kv1"},"spec":{"kv":[{"owner":"bob"},{"hw":"custom"}]}}"#,
        )
        .unwrap();
        ok.validate_kv().unwrap();
        assert_eq!(ok.spec.kv[1]["hw"], "custom");
        let empty: LogicalCloudKv = serde_json::from_str(r#"{"metadata":{"name":"kv1"},"spec":{}}"#).unwrap();
        assert_eq!(field_of(&empty.validate_kv().unwrap_err()), "spec.kv");
        let mut long = ok;
        long.spec.kv[0].insert("big".into(), "x".repeat(129));
        assert_eq!(field_of(&long.validate_kv().unwrap_err()), "spec.kv[0].big");
    }
}
