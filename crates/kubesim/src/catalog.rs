//! The resource types a simulated cluster serves: the built-in kinds of the API subset and the kinds its
//! CustomResourceDefinitions add. Discovery documents and the OpenAPI index are generated from this catalogue, so
//! a CRD appears in (and disappears from) discovery in the same step as its write.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value as Json, json};

use crate::version::KubernetesVersion;

/// One resource type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// API group; empty for the core group.
    pub group: String,
    /// Served version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural (the URL segment).
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Short names (`deploy`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Has a `/status` subresource.
    pub status: bool,
    /// Has a `/scale` subresource.
    pub scale: bool,
    /// Comes from a CRD (served with JSON merge patch only, pruned, and removed with its CRD).
    pub custom: bool,
    /// Only `create` is served, and the object is answered rather than stored (the access reviews).
    pub create_only: bool,
    /// Served at other versions too (a CRD's, or a built-in type across releases such as `policy/v1beta1` and
    /// `policy/v1` PodDisruptionBudgets): objects are answered at the version asked for.
    pub shared_storage: bool,
}

impl ResourceType {
    /// `apps/v1` or `v1`.
    #[must_use]
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The qualified resource used in messages: `deployments.apps`, or `configmaps` for the core group.
    #[must_use]
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The key objects of this type are stored under (group and plural; versions share storage).
    #[must_use]
    pub fn key(&self) -> TypeKey {
        TypeKey {
            group: self.group.clone(),
            plural: self.plural.clone(),
        }
    }
}

/// Identifies stored objects of one resource type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeKey {
    /// API group.
    pub group: String,
    /// Plural.
    pub plural: String,
}

impl TypeKey {
    /// A key from literals.
    #[must_use]
    pub fn new(group: &str, plural: &str) -> Self {
        Self {
            group: group.to_string(),
            plural: plural.to_string(),
        }
    }
}

const ALL: &[&str] = &["all"];
const NONE: &[&str] = &[];

struct BuiltIn {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    categories: &'static [&'static str],
    status: bool,
    scale: bool,
    /// The first Kubernetes minor release that serves it.
    since: u32,
    /// The last Kubernetes minor release that serves it.
    until: u32,
}

impl BuiltIn {
    /// The same type, served from release `1.<since>` to `1.<until>` only.
    const fn served(mut self, since: u32, until: u32) -> Self {
        self.since = since;
        self.until = until;
        self
    }

    fn serves(&self, version: KubernetesVersion) -> bool {
        (self.since..=self.until).contains(&version.minor())
    }
}

#[allow(clippy::too_many_arguments)] // one argument per column of the table below
const fn builtin(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    categories: &'static [&'static str],
    status: bool,
    scale: bool,
) -> BuiltIn {
    BuiltIn {
        group,
        version,
        kind,
        plural,
        namespaced,
        short,
        categories,
        status,
        scale,
        since: KubernetesVersion::OLDEST.minor(),
        until: KubernetesVersion::NEWEST.minor(),
    }
}

const BUILT_INS: &[BuiltIn] = &[
    builtin(
        "",
        "v1",
        "Namespace",
        "namespaces",
        false,
        &["ns"],
        NONE,
        true,
        false,
    ),
    builtin("", "v1", "Pod", "pods", true, &["po"], ALL, true, false),
    builtin("", "v1", "Service", "services", true, &["svc"], ALL, true, false),
    builtin(
        "",
        "v1",
        "ResourceQuota",
        "resourcequotas",
        true,
        &["quota"],
        NONE,
        true,
        false,
    ),
    builtin(
        "",
        "v1",
        "ConfigMap",
        "configmaps",
        true,
        &["cm"],
        NONE,
        false,
        false,
    ),
    builtin("", "v1", "Secret", "secrets", true, NONE, NONE, false, false),
    builtin(
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        true,
        &["sa"],
        NONE,
        false,
        false,
    ),
    builtin(
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
        &["pvc"],
        NONE,
        true,
        false,
    ),
    builtin(
        "",
        "v1",
        "Endpoints",
        "endpoints",
        true,
        &["ep"],
        NONE,
        false,
        false,
    ),
    builtin("", "v1", "Event", "events", true, &["ev"], NONE, false, false),
    builtin("", "v1", "Node", "nodes", false, &["no"], NONE, true, false),
    builtin(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        true,
        &["deploy"],
        ALL,
        true,
        true,
    ),
    builtin(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        true,
        &["rs"],
        ALL,
        true,
        true,
    ),
    builtin(
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        true,
        &["sts"],
        ALL,
        true,
        true,
    ),
    builtin(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        true,
        &["ds"],
        ALL,
        true,
        false,
    ),
    builtin(
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        true,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin("batch", "v1", "Job", "jobs", true, NONE, ALL, true, false),
    builtin(
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        true,
        &["cj"],
        ALL,
        true,
        false,
    )
    .served(21, 33),
    builtin(
        "batch",
        "v1beta1",
        "CronJob",
        "cronjobs",
        true,
        &["cj"],
        ALL,
        true,
        false,
    )
    .served(19, 24),
    builtin(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        &["crd", "crds"],
        &["api-extensions"],
        true,
        false,
    ),
    builtin(
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        true,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        "coordination.k8s.io",
        "v1beta1",
        "Lease",
        "leases",
        true,
        NONE,
        NONE,
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        true,
        &["ev"],
        NONE,
        false,
        false,
    ),
    builtin(
        "events.k8s.io",
        "v1beta1",
        "Event",
        "events",
        true,
        &["ev"],
        NONE,
        false,
        false,
    )
    .served(19, 24),
    builtin(
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        true,
        NONE,
        NONE,
        false,
        false,
    )
    .served(21, 33),
    builtin(
        "discovery.k8s.io",
        "v1beta1",
        "EndpointSlice",
        "endpointslices",
        true,
        NONE,
        NONE,
        false,
        false,
    )
    .served(19, 24),
    builtin(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        false,
        &["csr"],
        NONE,
        true,
        false,
    ),
    builtin(
        "rbac.authorization.k8s.io",
        "v1",
        "Role",
        "roles",
        true,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        "rbac.authorization.k8s.io",
        "v1beta1",
        "Role",
        "roles",
        true,
        NONE,
        NONE,
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "rbac.authorization.k8s.io",
        "v1beta1",
        "RoleBinding",
        "rolebindings",
        true,
        NONE,
        NONE,
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "rbac.authorization.k8s.io",
        "v1beta1",
        "ClusterRole",
        "clusterroles",
        false,
        NONE,
        NONE,
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "rbac.authorization.k8s.io",
        "v1beta1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        NONE,
        NONE,
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "networking.k8s.io",
        "v1",
        "Ingress",
        "ingresses",
        true,
        &["ing"],
        NONE,
        true,
        false,
    ),
    builtin(
        "networking.k8s.io",
        "v1beta1",
        "Ingress",
        "ingresses",
        true,
        &["ing"],
        NONE,
        true,
        false,
    )
    .served(19, 21),
    builtin(
        "networking.k8s.io",
        "v1",
        "IngressClass",
        "ingressclasses",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        "networking.k8s.io",
        "v1beta1",
        "IngressClass",
        "ingressclasses",
        false,
        NONE,
        NONE,
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
        &["netpol"],
        NONE,
        false,
        false,
    ),
    builtin(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        &["pdb"],
        NONE,
        true,
        false,
    )
    .served(21, 33),
    builtin(
        "policy",
        "v1beta1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        &["pdb"],
        NONE,
        true,
        false,
    )
    .served(19, 24),
    builtin(
        "policy",
        "v1beta1",
        "PodSecurityPolicy",
        "podsecuritypolicies",
        false,
        &["psp"],
        NONE,
        false,
        false,
    )
    .served(19, 24),
    builtin(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        &["hpa"],
        ALL,
        true,
        false,
    )
    .served(23, 33),
    builtin(
        "autoscaling",
        "v2beta2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        &["hpa"],
        ALL,
        true,
        false,
    )
    .served(19, 25),
    builtin(
        "autoscaling",
        "v2beta1",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        &["hpa"],
        ALL,
        true,
        false,
    )
    .served(19, 24),
    builtin(
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        &["hpa"],
        ALL,
        true,
        false,
    ),
    builtin(
        "storage.k8s.io",
        "v1",
        "StorageClass",
        "storageclasses",
        false,
        &["sc"],
        NONE,
        false,
        false,
    ),
    builtin(
        "",
        "v1",
        "LimitRange",
        "limitranges",
        true,
        &["limits"],
        NONE,
        false,
        false,
    ),
    builtin(
        "",
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        false,
        &["pv"],
        NONE,
        true,
        false,
    ),
    builtin(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
        NONE,
        &["api-extensions"],
        false,
        false,
    ),
    builtin(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
        NONE,
        &["api-extensions"],
        false,
        false,
    ),
    builtin(
        "admissionregistration.k8s.io",
        "v1beta1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
        NONE,
        &["api-extensions"],
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "admissionregistration.k8s.io",
        "v1beta1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
        NONE,
        &["api-extensions"],
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
        &["pc"],
        NONE,
        false,
        false,
    ),
    builtin(
        "scheduling.k8s.io",
        "v1beta1",
        "PriorityClass",
        "priorityclasses",
        false,
        &["pc"],
        NONE,
        false,
        false,
    )
    .served(19, 21),
    builtin(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "FlowSchema",
        "flowschemas",
        false,
        NONE,
        NONE,
        true,
        false,
    )
    .served(29, 33),
    builtin(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        false,
        NONE,
        NONE,
        true,
        false,
    )
    .served(29, 33),
    builtin(
        "flowcontrol.apiserver.k8s.io",
        "v1beta3",
        "FlowSchema",
        "flowschemas",
        false,
        NONE,
        NONE,
        true,
        false,
    )
    .served(26, 31),
    builtin(
        "flowcontrol.apiserver.k8s.io",
        "v1beta3",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        false,
        NONE,
        NONE,
        true,
        false,
    )
    .served(26, 31),
    builtin(
        "flowcontrol.apiserver.k8s.io",
        "v1beta2",
        "FlowSchema",
        "flowschemas",
        false,
        NONE,
        NONE,
        true,
        false,
    )
    .served(23, 28),
    builtin(
        "flowcontrol.apiserver.k8s.io",
        "v1beta2",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        false,
        NONE,
        NONE,
        true,
        false,
    )
    .served(23, 28),
    builtin(
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        "FlowSchema",
        "flowschemas",
        false,
        NONE,
        NONE,
        true,
        false,
    )
    .served(20, 25),
    builtin(
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        false,
        NONE,
        NONE,
        true,
        false,
    )
    .served(20, 25),
    builtin(
        REVIEW_GROUP,
        "v1",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        REVIEW_GROUP,
        "v1",
        "SubjectAccessReview",
        "subjectaccessreviews",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        REVIEW_GROUP,
        "v1",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        true,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        WHOAMI_GROUP,
        "v1",
        "SelfSubjectReview",
        "selfsubjectreviews",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    builtin(
        REVIEW_GROUP,
        "v1",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
];

/// The group of the access reviews, whose types are create-only.
pub const REVIEW_GROUP: &str = "authorization.k8s.io";
/// The group of SelfSubjectReview (who am I?), create-only too.
pub const WHOAMI_GROUP: &str = "authentication.k8s.io";

/// The verbs of a stored type.
const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

impl ResourceType {
    /// The verbs discovery lists for the type.
    fn verbs(&self) -> Json {
        if self.create_only {
            json!(["create"])
        } else {
            json!(ALL_VERBS)
        }
    }
}

/// Kubernetes version priority: GA above beta above alpha, higher numbers first (v2 > v1 > v1beta2 > v1alpha1).
fn version_priority(version: &str) -> (u8, u32, u32) {
    let rest = version.strip_prefix('v').unwrap_or(version);
    let major_len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let major: u32 = rest[..major_len].parse().unwrap_or(0);
    let tail = &rest[major_len..];
    if tail.is_empty() {
        (3, major, 0)
    } else if let Some(minor) = tail.strip_prefix("beta") {
        (2, major, minor.parse().unwrap_or(0))
    } else if let Some(minor) = tail.strip_prefix("alpha") {
        (1, major, minor.parse().unwrap_or(0))
    } else {
        (0, major, 0)
    }
}

/// The types a cluster serves.
#[derive(Debug, Clone)]
pub struct Catalog {
    types: Vec<Arc<ResourceType>>,
    /// Changes with every CRD change, so clients re-fetch the OpenAPI documents.
    generation: u64,
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new()
    }
}

/// Every built-in type of every release, built once per process, each with the releases that serve it.
static BUILT_IN_TYPES: std::sync::LazyLock<Vec<(Arc<ResourceType>, &'static BuiltIn)>> =
    std::sync::LazyLock::new(|| {
        BUILT_INS
            .iter()
            .map(|b| {
                let versions = BUILT_INS
                    .iter()
                    .filter(|other| other.group == b.group && other.plural == b.plural)
                    .count();
                let resource_type = Arc::new(ResourceType {
                    group: b.group.into(),
                    version: b.version.into(),
                    kind: b.kind.into(),
                    plural: b.plural.into(),
                    singular: b.kind.to_lowercase(),
                    namespaced: b.namespaced,
                    short_names: b.short.iter().map(|s| (*s).to_string()).collect(),
                    categories: b.categories.iter().map(|s| (*s).to_string()).collect(),
                    status: b.status,
                    scale: b.scale,
                    custom: false,
                    create_only: b.group == REVIEW_GROUP || b.group == WHOAMI_GROUP,
                    shared_storage: versions > 1,
                });
                (resource_type, b)
            })
            .collect()
    });

impl Catalog {
    /// The built-in types of the newest release kubesim plays.
    #[must_use]
    pub fn new() -> Self {
        Self::serving(KubernetesVersion::NEWEST)
    }

    /// The built-in types Kubernetes `version` serves (shared by every cluster's catalog: built once per process,
    /// not once per cluster).
    #[must_use]
    pub fn serving(version: KubernetesVersion) -> Self {
        Self {
            types: BUILT_IN_TYPES
                .iter()
                .filter(|(_, built_in)| built_in.serves(version))
                .map(|(resource_type, _)| resource_type.clone())
                .collect(),
            generation: 1,
        }
    }

    /// A content generation for cache keys.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The type served at `group/version/plural`.
    #[must_use]
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
            .cloned()
    }

    /// Any served version of `group/plural` (for storage-level lookups).
    #[must_use]
    pub fn find_any_version(&self, key: &TypeKey) -> Option<Arc<ResourceType>> {
        self.types
            .iter()
            .find(|t| t.group == key.group && t.plural == key.plural)
            .cloned()
    }

    /// The type of `apiVersion` + `kind`.
    #[must_use]
    pub fn find_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceType>> {
        self.types
            .iter()
            .find(|t| t.api_version() == api_version && t.kind == kind)
            .cloned()
    }

    /// Whether any version of `group` is served.
    #[must_use]
    pub fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.types
            .iter()
            .any(|t| t.group == group && t.version == version)
    }

    /// Groups (non-core) with their served versions, preferred first.
    #[must_use]
    pub fn groups(&self) -> BTreeMap<String, Vec<String>> {
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in self.types.iter().filter(|t| !t.group.is_empty()) {
            let versions = groups.entry(t.group.clone()).or_default();
            if !versions.contains(&t.version) {
                versions.push(t.version.clone());
            }
        }
        for versions in groups.values_mut() {
            versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        }
        groups
    }

    /// The types of one group version.
    pub fn in_group_version<'a>(
        &'a self,
        group: &'a str,
        version: &'a str,
    ) -> impl Iterator<Item = &'a Arc<ResourceType>> + 'a {
        self.types
            .iter()
            .filter(move |t| t.group == group && t.version == version)
    }

    /// Adds or replaces the types a CRD serves (one per served version).
    pub fn set_custom(&mut self, crd_name: &str, served: Vec<ResourceType>) {
        self.remove_custom(crd_name);
        self.types.extend(served.into_iter().map(Arc::new));
        self.generation += 1;
    }

    /// Removes the types of a CRD (`<plural>.<group>`).
    pub fn remove_custom(&mut self, crd_name: &str) {
        let before = self.types.len();
        self.types
            .retain(|t| !(t.custom && format!("{}.{}", t.plural, t.group) == crd_name));
        if self.types.len() != before {
            self.generation += 1;
        }
    }

    /// The types a CRD object describes, or why it is invalid.
    pub fn types_of_crd(crd: &Json) -> Result<Vec<ResourceType>, String> {
        let spec = &crd["spec"];
        let group = spec["group"].as_str().unwrap_or_default();
        let names = &spec["names"];
        let plural = names["plural"].as_str().unwrap_or_default();
        let kind = names["kind"].as_str().unwrap_or_default();
        if group.is_empty() || plural.is_empty() || kind.is_empty() {
            return Err("spec.group, spec.names.plural and spec.names.kind are required".into());
        }
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        if name != format!("{plural}.{group}") {
            return Err(format!(
                "metadata.name: Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"
            ));
        }
        let versions = spec["versions"].as_array().cloned().unwrap_or_default();
        if versions
            .iter()
            .filter(|v| v["storage"].as_bool() == Some(true))
            .count()
            != 1
        {
            return Err(
                "spec.versions: Invalid value: must have exactly one version marked as storage version"
                    .into(),
            );
        }
        let namespaced = spec["scope"].as_str() != Some("Cluster");
        let strings = |value: &Json| -> Vec<String> {
            value
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|i| i.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(versions
            .iter()
            .filter(|v| v["served"].as_bool().unwrap_or(true))
            .map(|v| ResourceType {
                group: group.to_string(),
                version: v["name"].as_str().unwrap_or("v1").to_string(),
                kind: kind.to_string(),
                plural: plural.to_string(),
                singular: names["singular"]
                    .as_str()
                    .map_or_else(|| kind.to_lowercase(), String::from),
                namespaced,
                short_names: strings(&names["shortNames"]),
                categories: strings(&names["categories"]),
                status: v["subresources"]["status"].is_object(),
                scale: v["subresources"]["scale"].is_object(),
                custom: true,
                create_only: false,
                shared_storage: true,
            })
            .collect())
    }

    /// `GET /api/v1` or `/apis/{g}/{v}`: an APIResourceList.
    #[must_use]
    pub fn resource_list(&self, group: &str, version: &str) -> Json {
        let mut resources = Vec::new();
        for t in self.in_group_version(group, version) {
            resources.push(json!({
                "name": t.plural, "singularName": t.singular, "namespaced": t.namespaced, "kind": t.kind,
                "verbs": t.verbs(), "shortNames": t.short_names, "categories": t.categories,
            }));
            if t.status {
                resources.push(json!({"name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced,
                    "kind": t.kind, "verbs": ["get", "patch", "update"]}));
            }
            if t.scale {
                resources.push(json!({"name": format!("{}/scale", t.plural), "singularName": "", "namespaced": t.namespaced,
                    "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}));
            }
        }
        let group_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
    }

    /// `GET /apis` (legacy): an APIGroupList.
    #[must_use]
    pub fn group_list(&self) -> Json {
        let groups: Vec<Json> = self
            .groups()
            .iter()
            .map(|(group, versions)| Self::group_json(group, versions))
            .collect();
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
    }

    fn group_json(group: &str, versions: &[String]) -> Json {
        let entries: Vec<Json> = versions
            .iter()
            .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
            .collect();
        json!({"name": group, "versions": entries, "preferredVersion": entries.first().cloned().unwrap_or(Json::Null)})
    }

    /// `GET /apis/{g}`: an APIGroup.
    #[must_use]
    pub fn group(&self, group: &str) -> Option<Json> {
        let groups = self.groups();
        let versions = groups.get(group)?;
        let mut doc = Self::group_json(group, versions);
        doc["kind"] = json!("APIGroup");
        doc["apiVersion"] = json!("v1");
        Some(doc)
    }

    /// Aggregated discovery (`APIGroupDiscoveryList`) for `/api` (core) or `/apis` (groups).
    #[must_use]
    pub fn aggregated(&self, core: bool, api_version: &str) -> Json {
        let resources_of = |group: &str, version: &str| -> Vec<Json> {
            self.in_group_version(group, version)
                .map(|t| {
                    let mut subresources = Vec::new();
                    if t.status {
                        subresources.push(json!({"subresource": "status", "responseKind": {"group": t.group, "version": t.version, "kind": t.kind}, "verbs": ["get", "patch", "update"]}));
                    }
                    if t.scale {
                        subresources.push(json!({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]}));
                    }
                    json!({
                        "resource": t.plural, "responseKind": {"group": t.group, "version": t.version, "kind": t.kind},
                        "scope": if t.namespaced { "Namespaced" } else { "Cluster" }, "singularResource": t.singular,
                        "shortNames": t.short_names, "categories": t.categories, "verbs": t.verbs(), "subresources": subresources,
                    })
                })
                .collect()
        };
        let items: Vec<Json> = if core {
            vec![
                json!({"metadata": {}, "versions": [{"version": "v1", "freshness": "Current", "resources": resources_of("", "v1")}]}),
            ]
        } else {
            self.groups()
                .iter()
                .map(|(group, versions)| {
                    let versions: Vec<Json> = versions
                        .iter()
                        .map(|v| json!({"version": v, "freshness": "Current", "resources": resources_of(group, v)}))
                        .collect();
                    json!({"metadata": {"name": group}, "versions": versions})
                })
                .collect()
        };
        json!({"kind": "APIGroupDiscoveryList", "apiVersion": api_version, "metadata": {}, "items": items})
    }

    /// `GET /openapi/v3`: the index of group-version documents.
    #[must_use]
    pub fn openapi_index(&self) -> Json {
        let mut paths = serde_json::Map::new();
        let hash = format!("{:016x}", self.generation);
        paths.insert(
            "api/v1".into(),
            json!({"serverRelativeURL": format!("/openapi/v3/api/v1?hash={hash}")}),
        );
        for (group, versions) in self.groups() {
            for version in versions {
                let key = format!("apis/{group}/{version}");
                paths.insert(
                    key.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={hash}")}),
                );
            }
        }
        json!({"paths": paths})
    }

    /// `GET /openapi/v3/{api/v1 | apis/g/v}`: a minimal OpenAPI document that declares, for every kind, a PATCH
    /// operation taking `fieldValidation`, which makes kubectl leave validation to the server.
    #[must_use]
    pub fn openapi_document(&self, group: &str, version: &str) -> Option<Json> {
        if !(self.has_group_version(group, version) || (group.is_empty() && version == "v1")) {
            return None;
        }
        let mut paths = serde_json::Map::new();
        for t in self.in_group_version(group, version) {
            let prefix = if t.group.is_empty() {
                "/api/v1".to_string()
            } else {
                format!("/apis/{}/{}", t.group, t.version)
            };
            let path = if t.namespaced {
                format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
            } else {
                format!("{prefix}/{}/{{name}}", t.plural)
            };
            paths.insert(
                path,
                json!({"patch": {
                    "x-kubernetes-group-version-kind": {"group": t.group, "version": t.version, "kind": t.kind},
                    "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
                    "requestBody": {"content": {"application/merge-patch+json": {"schema": {"type": "object"}}}},
                    "responses": {"200": {"description": "OK"}},
                }}),
            );
        }
        Some(
            json!({"openapi": "3.0.0", "info": {"title": "kubesim", "version": version}, "components": {"schemas": {}}, "paths": paths}),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_by_kubernetes_priority() {
        let mut versions = vec!["v1beta1", "v1", "v2", "v1alpha1", "v1beta2"];
        versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        assert_eq!(versions, ["v2", "v1", "v1beta2", "v1beta1", "v1alpha1"]);
    }

    #[test]
    fn crds_add_and_remove_types() {
        let mut catalog = Catalog::new();
        let crd = json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wg"]},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}}]}});
        let types = Catalog::types_of_crd(&crd).unwrap();
        let other_cluster = Catalog::new();
        catalog.set_custom("widgets.example.com", types);
        let widget = catalog.find("example.com", "v1", "widgets").unwrap();
        assert!(widget.status && widget.namespaced && widget.custom);
        assert!(
            other_cluster.find("example.com", "v1", "widgets").is_none(),
            "a CRD is one cluster's"
        );
        let pods = |c: &Catalog| c.find("", "v1", "pods").unwrap();
        assert!(
            Arc::ptr_eq(&pods(&catalog), &pods(&other_cluster)),
            "the built-in types are shared, not built per cluster"
        );
        assert!(catalog.groups().contains_key("example.com"));
        catalog.remove_custom("widgets.example.com");
        assert!(catalog.find("example.com", "v1", "widgets").is_none());
        let bad = json!({"metadata": {"name": "x"}, "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}, "versions": []}});
        assert!(Catalog::types_of_crd(&bad).unwrap_err().contains("metadata.name"));
    }
}
