//! `.Capabilities`: Helm's `*common.Capabilities` with the defaults of Helm v4.2.3's `helm template` (no cluster):
//! Kubernetes `v1.36.0`, the API versions client-go v0.36 knows, Helm `v4.2`.
//!
//! Go prints these objects two ways: `{{ .Capabilities.KubeVersion }}` uses `KubeVersion.String()` (`v1.36.0`),
//! which [`Object::display`] returns; `printf "%v"` of the same field would print the raw struct
//! (`{v1.36.0 v1.36.0 1 36}`), which [`KubeVersion::go_struct`] gives.

use std::rc::Rc;

use crate::gotemplate::funcs::param_str;
use crate::gotemplate::{Map, Object, Value};

/// The API versions of `helm template` without a cluster (Helm v4.2.3's `DefaultVersionSet`, in its order).
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha2",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// `common.KubeVersion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeVersion {
    /// `Version` / `GitVersion()`, e.g. `v1.36.0`.
    pub version: String,
    /// What `String()` returns (the normalised version).
    pub normalized: String,
    /// `Major`, e.g. `1`.
    pub major: String,
    /// `Minor`, e.g. `36`.
    pub minor: String,
}

impl KubeVersion {
    /// Helm's `ParseKubeVersion` (`helm template --kube-version`): `v` optional, at least `major.minor`, anything
    /// after the numeric components (`-gke.1`) kept in `Version` only; `None` when it does not parse.
    #[must_use]
    pub fn parse(text: &str) -> Option<KubeVersion> {
        let trimmed = text.trim();
        let body = trimmed.strip_prefix('v').unwrap_or(trimmed);
        let numeric_end = body
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(body.len());
        let (numeric, rest) = body.split_at(numeric_end);
        let components: Vec<&str> = numeric.split('.').collect();
        if components.len() < 2
            || components
                .iter()
                .any(|part| part.is_empty() || part.parse::<u64>().is_err())
        {
            return None;
        }
        if !rest.is_empty() && !rest.starts_with(['-', '+']) {
            return None;
        }
        let numbers: Vec<u64> = components.iter().filter_map(|part| part.parse().ok()).collect();
        let normalized = format!(
            "v{}",
            numbers.iter().map(u64::to_string).collect::<Vec<_>>().join(".")
        );
        Some(KubeVersion {
            version: if text.starts_with('v') {
                text.to_string()
            } else {
                format!("v{text}")
            },
            normalized,
            major: numbers[0].to_string(),
            minor: numbers[1].to_string(),
        })
    }

    /// Go's `%v` of the struct value (not through `String()`): `{v1.36.0 v1.36.0 1 36}`.
    #[must_use]
    pub fn go_struct(&self) -> String {
        format!(
            "{{{} {} {} {}}}",
            self.version, self.normalized, self.major, self.minor
        )
    }
}

impl Object for KubeVersion {
    fn type_name(&self) -> &str {
        "common.KubeVersion"
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Version" | "GitVersion" => Some(Value::string(&self.version)),
            "Major" => Some(Value::string(&self.major)),
            "Minor" => Some(Value::string(&self.minor)),
            "String" => Some(Value::string(&self.normalized)),
            _ => None,
        }
    }

    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        match name {
            "GitVersion" | "String" if args.is_empty() => self.field(name).map(Ok),
            "GitVersion" | "String" => Some(Err(format!(
                "wrong number of args for {name}: want 0 got {}",
                args.len()
            ))),
            _ => None,
        }
    }

    fn display(&self) -> String {
        self.normalized.clone()
    }

    fn to_value(&self) -> Value {
        let map = Map::new();
        map.insert("Version", Value::string(&self.version));
        map.insert("Major", Value::string(&self.major));
        map.insert("Minor", Value::string(&self.minor));
        Value::Map(map)
    }
}

/// `common.VersionSet`: the API versions, with `Has`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSet(pub Vec<String>);

impl Object for VersionSet {
    fn type_name(&self) -> &str {
        "common.VersionSet"
    }

    fn field(&self, _name: &str) -> Option<Value> {
        None
    }

    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        if name != "Has" {
            return None;
        }
        if args.len() != 1 {
            return Some(Err(format!(
                "wrong number of args for Has: want 1 got {}",
                args.len()
            )));
        }
        Some(
            param_str(&args[0])
                .map(|wanted| Value::Bool(self.0.contains(&wanted)))
                .map_err(|err| err.to_string()),
        )
    }

    fn display(&self) -> String {
        format!("[{}]", self.0.join(" "))
    }

    fn to_value(&self) -> Value {
        Value::list(self.0.iter().map(Value::string).collect())
    }

    fn collection(&self) -> Option<Value> {
        Some(self.to_value())
    }
}

/// `version.BuildInfo` (`.Capabilities.HelmVersion`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildInfo {
    /// `Version`, e.g. `v4.2`.
    pub version: String,
    /// `GitCommit`.
    pub git_commit: String,
    /// `GitTreeState`.
    pub git_tree_state: String,
    /// `GoVersion`.
    pub go_version: String,
    /// `KubeClientVersion`.
    pub kube_client_version: String,
}

impl Object for BuildInfo {
    fn type_name(&self) -> &str {
        "version.BuildInfo"
    }

    fn field(&self, name: &str) -> Option<Value> {
        let value = match name {
            "Version" => &self.version,
            "GitCommit" => &self.git_commit,
            "GitTreeState" => &self.git_tree_state,
            "GoVersion" => &self.go_version,
            "KubeClientVersion" => &self.kube_client_version,
            _ => return None,
        };
        Some(Value::string(value))
    }

    fn call(&self, _name: &str, _args: &[Value]) -> Option<Result<Value, String>> {
        None
    }

    fn display(&self) -> String {
        format!(
            "{{{} {} {} {} {}}}",
            self.version, self.git_commit, self.git_tree_state, self.go_version, self.kube_client_version
        )
    }

    fn to_value(&self) -> Value {
        // json tags: version, git_commit,omitempty, git_tree_state,omitempty, go_version,omitempty,
        // kube_client_version,omitempty.
        let map = Map::new();
        map.insert("version", Value::string(&self.version));
        for (key, value) in [
            ("git_commit", &self.git_commit),
            ("git_tree_state", &self.git_tree_state),
            ("go_version", &self.go_version),
            ("kube_client_version", &self.kube_client_version),
        ] {
            if !value.is_empty() {
                map.insert(key, Value::string(value));
            }
        }
        Value::Map(map)
    }
}

/// `*common.Capabilities`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// `KubeVersion`.
    pub kube_version: KubeVersion,
    /// `APIVersions`.
    pub api_versions: VersionSet,
    /// `HelmVersion`.
    pub helm_version: BuildInfo,
}

impl Default for Capabilities {
    /// Helm v4.2.3's `helm template` defaults.
    fn default() -> Self {
        Self {
            kube_version: KubeVersion {
                version: "v1.36.0".into(),
                normalized: "v1.36.0".into(),
                major: "1".into(),
                minor: "36".into(),
            },
            api_versions: VersionSet(DEFAULT_API_VERSIONS.iter().map(|v| (*v).to_string()).collect()),
            helm_version: BuildInfo {
                version: "v4.2".into(),
                git_commit: String::new(),
                git_tree_state: String::new(),
                go_version: "go1.26.6".into(),
                kube_client_version: "v1.36".into(),
            },
        }
    }
}

impl Capabilities {
    /// The defaults with another Kubernetes version (`helm template --kube-version`).
    #[must_use]
    pub fn with_kube_version(mut self, kube_version: KubeVersion) -> Self {
        self.kube_version = kube_version;
        self
    }

    /// The defaults with extra API versions appended (`helm template --api-versions`).
    #[must_use]
    pub fn with_api_versions(mut self, extra: &[String]) -> Self {
        self.api_versions.0.extend(extra.iter().cloned());
        self
    }
}

impl Object for Capabilities {
    fn type_name(&self) -> &str {
        "*common.Capabilities"
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "KubeVersion" => Some(Value::Object(Rc::new(self.kube_version.clone()))),
            "APIVersions" => Some(Value::Object(Rc::new(self.api_versions.clone()))),
            "HelmVersion" => Some(Value::Object(Rc::new(self.helm_version.clone()))),
            _ => None,
        }
    }

    fn call(&self, _name: &str, _args: &[Value]) -> Option<Result<Value, String>> {
        None
    }

    fn display(&self) -> String {
        format!(
            "&{{{} {} {}}}",
            self.kube_version.go_struct(),
            self.api_versions.display(),
            self.helm_version.display()
        )
    }

    fn to_value(&self) -> Value {
        let map = Map::new();
        map.insert("KubeVersion", self.kube_version.to_value());
        map.insert("APIVersions", self.api_versions.to_value());
        map.insert("HelmVersion", self.helm_version.to_value());
        Value::Map(map)
    }
}

/// `.Capabilities` that notes whether a template read anything of it (a field, a method, how it prints or
/// marshals): a render that read nothing is the same for every cluster, whatever its version.
pub(crate) struct Observed {
    capabilities: Capabilities,
    read: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Observed {
    /// `capabilities`, setting `read` when a template reads them.
    pub(crate) fn new(
        capabilities: Capabilities,
        read: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> Self {
        Self { capabilities, read }
    }

    fn note(&self) -> &Capabilities {
        self.read.store(true, std::sync::atomic::Ordering::Relaxed);
        &self.capabilities
    }
}

impl Object for Observed {
    fn type_name(&self) -> &str {
        self.capabilities.type_name()
    }

    fn field(&self, name: &str) -> Option<Value> {
        self.note().field(name)
    }

    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        self.note().call(name, args)
    }

    fn display(&self) -> String {
        self.note().display()
    }

    fn to_value(&self) -> Value {
        self.note().to_value()
    }

    fn collection(&self) -> Option<Value> {
        self.note().collection()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_helm_template_defaults() {
        // Printed by Helm v4.2.3 (probes p1 and p4).
        let caps = Capabilities::default();
        assert_eq!(caps.api_versions.0.len(), 55);
        assert_eq!(caps.kube_version.display(), "v1.36.0");
        assert_eq!(caps.kube_version.go_struct(), "{v1.36.0 v1.36.0 1 36}");
        assert_eq!(caps.helm_version.display(), "{v4.2   go1.26.6 v1.36}");
        assert!(
            caps.display()
                .starts_with("&{{v1.36.0 v1.36.0 1 36} [v1 admissionregistration.k8s.io/v1 ")
        );
        assert_eq!(caps.type_name(), "*common.Capabilities");
        assert_eq!(
            caps.helm_version.to_value().to_json().unwrap(),
            serde_json::json!({"version": "v4.2", "go_version": "go1.26.6", "kube_client_version": "v1.36"})
        );
        let has = |v: &str| caps.api_versions.call("Has", &[Value::string(v)]);
        assert!(matches!(has("v1"), Some(Ok(Value::Bool(true)))));
        assert!(matches!(has("apps/v1/Deployment"), Some(Ok(Value::Bool(false)))));
        assert!(
            matches!(caps.field("KubeVersion"), Some(Value::Object(o)) if o.type_name() == "common.KubeVersion")
        );
    }
}
