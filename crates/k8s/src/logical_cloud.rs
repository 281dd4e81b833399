//! What a level-1 logical cloud puts into each of its clusters and what its user gets back, as pure functions:
//! the user's private key and certificate request, the Kubernetes objects dcm applies (Namespace, ResourceQuotas,
//! Roles, RoleBindings and the user's CertificateSigningRequest), and the user's kubeconfig once the cluster has
//! signed the request.
//!
//! Objects are named as EMCO's dcm names them, in lower case because Kubernetes object names are DNS-1123
//! subdomains: the Namespace is `spec.namespace`, the request `<lc>-user-csr`, a quota its body's name, and the
//! rule of user permission `i` becomes `<lc>-role<i>`/`<lc>-rolebinding<i>` (a permission without a namespace
//! becomes `<lc>-clusterrole<i>`/`<lc>-clusterrolebinding<i>`, as in EMCO). They come in EMCO's apply order:
//! Namespace, CertificateSigningRequest, ResourceQuotas, Roles, RoleBindings.
//!
//! The user's kubeconfig takes from the cluster's kubeconfig only where the API server is (`server`,
//! `certificate-authority-data`, `tls-server-name` of the current context's cluster), after the kubeconfig policy
//! ([`crate::kubeconfig`]) has checked it; the admin credentials in it are never read.

use base64::Engine as _;
use emco_model::{
    ClusterQuota, LogicalCloud, LogicalCloudLevel, UserPermission, ValidationError, network::is_dns_label,
};
use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
use serde_json::{Map, Value as Json, json};

use crate::kubeconfig::{KubeconfigError, KubeconfigPolicy, check_kubeconfig};

/// The signer of the user's certificate: client certificates the API server accepts.
pub const USER_SIGNER_NAME: &str = "kubernetes.io/kube-apiserver-client";
/// The API group of Roles and RoleBindings.
pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
/// The largest PEM accepted as a key, certificate or certificate request (a 4096-bit RSA key is about 3.3 KiB).
pub const MAX_PEM_BYTES: usize = 64 * 1024;
/// The most user permissions (and so Roles) and the most quotas one level-1 cloud turns into objects.
pub const MAX_LEVEL1_ITEMS: usize = 256;

/// Why credentials or objects of a logical cloud cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogicalCloudError {
    /// A stored body fails validation (stored data is checked again before use).
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// The logical cloud is not level 1: only level-1 clouds have objects and users.
    #[error("logical cloud '{0}' is not level 1")]
    NotLevel1(String),
    /// An argument is malformed; names the argument.
    #[error("{field}: {reason}")]
    Input {
        /// The argument (`key_pem`, `certificate_pem`, `user`, …).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// Too many permissions or quotas.
    #[error("{what}: {count} given; at most {max} are allowed")]
    TooMany {
        /// What was counted.
        what: String,
        /// How many there are.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// Making the key or the request failed.
    #[error("user credentials: {0}")]
    Crypto(String),
    /// The cluster's kubeconfig is refused by the kubeconfig policy.
    #[error(transparent)]
    ClusterKubeconfig(#[from] KubeconfigError),
    /// The cluster's kubeconfig does not say where the API server is.
    #[error("cluster kubeconfig: {0}")]
    NoServer(String),
    /// The kubeconfig could not be written as YAML.
    #[error("user kubeconfig: {0}")]
    Yaml(String),
}

fn input(field: &str, reason: impl Into<String>) -> LogicalCloudError {
    LogicalCloudError::Input {
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// Whether `user` can be a certificate's CommonName and an RBAC subject here (the rule `emco-model` applies to
/// `spec.user.userName`).
fn check_user(user: &str) -> Result<(), LogicalCloudError> {
    let bytes = user.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= emco_model::logical_cloud::MAX_USER_NAME_LEN
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'@'))
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric);
    if ok {
        Ok(())
    } else {
        Err(input(
            "user",
            "1-64 letters, digits, '-', '_', '.' or '@', starting and ending with a letter or digit",
        ))
    }
}

/// The body of the one PEM block of `pem` whose label is `label`, checked for size and shape.
fn pem_block<'a>(field: &str, pem: &'a str, label: &str) -> Result<&'a str, LogicalCloudError> {
    if pem.len() > MAX_PEM_BYTES {
        return Err(input(field, format!("larger than {MAX_PEM_BYTES} bytes")));
    }
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let trimmed = pem.trim();
    let body = trimmed
        .strip_prefix(begin.as_str())
        .and_then(|rest| rest.strip_suffix(end.as_str()))
        .ok_or_else(|| input(field, format!("not one PEM '{label}' block")))?;
    let compact: String = body.split_whitespace().collect();
    if compact.is_empty()
        || base64::engine::general_purpose::STANDARD
            .decode(&compact)
            .is_err()
    {
        return Err(input(field, format!("the PEM '{label}' block is not base64")));
    }
    Ok(trimmed)
}

/// A new private key for a logical cloud's user: ECDSA P-256, PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
pub fn generate_user_key() -> Result<String, LogicalCloudError> {
    let key = KeyPair::generate().map_err(|err| LogicalCloudError::Crypto(err.to_string()))?;
    Ok(key.serialize_pem())
}

/// A PKCS#10 certificate request (PEM) for `user` (the subject's CommonName), signed with `key_pem` (PKCS#8 PEM,
/// as [`generate_user_key`] makes).
pub fn certificate_request(user: &str, key_pem: &str) -> Result<String, LogicalCloudError> {
    check_user(user)?;
    let key_pem = pem_block("key_pem", key_pem, "PRIVATE KEY")?;
    let key = KeyPair::from_pem(key_pem).map_err(|_| input("key_pem", "not a PKCS#8 private key"))?;
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, user);
    let request = params
        .serialize_request(&key)
        .map_err(|err| LogicalCloudError::Crypto(err.to_string()))?;
    request
        .pem()
        .map_err(|err| LogicalCloudError::Crypto(err.to_string()))
}

/// The name of the CertificateSigningRequest of logical cloud `logical_cloud` (in every cluster).
#[must_use]
pub fn csr_name(logical_cloud: &str) -> String {
    format!("{logical_cloud}-user-csr")
}

/// The condition dcm approves the user's request with (the body of the request's `/approval` subresource puts
/// it in `status.conditions`); `now` is an RFC 3339 timestamp.
#[must_use]
pub fn csr_approval_condition(now: &str) -> Json {
    json!({
        "type": "Approved",
        "status": "True",
        "reason": "LogicalCloud",
        "message": "Approved for Logical Cloud authentication",
        "lastUpdateTime": now,
    })
}

/// The signed certificate (PEM) in a CertificateSigningRequest read back from a cluster, if it has one yet.
pub fn issued_certificate(csr_object: &Json) -> Result<Option<String>, LogicalCloudError> {
    let Some(encoded) = csr_object["status"]["certificate"].as_str() else {
        return Ok(None);
    };
    if encoded.is_empty() {
        return Ok(None);
    }
    if encoded.len() > MAX_PEM_BYTES * 2 {
        return Err(input("status.certificate", "too large"));
    }
    let pem = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| input("status.certificate", "not base64 of a PEM text"))?;
    if !pem.contains("-----BEGIN CERTIFICATE-----") {
        return Err(input("status.certificate", "no PEM 'CERTIFICATE' block"));
    }
    Ok(Some(pem))
}

/// The objects a level-1 logical cloud applies to one cluster, in apply order: its Namespace (with
/// `spec.labels`), the user's CertificateSigningRequest for `certificate_request_pem`, a ResourceQuota per quota,
/// and a Role (ClusterRole when the permission names no namespace) and RoleBinding (to the user, kind `User`) per
/// user permission.
///
/// The bodies are validated again (stored data is not trusted), and the cloud needs a permission for its own
/// namespace, as EMCO requires.
pub fn level1_objects(
    logical_cloud: &LogicalCloud,
    quotas: &[ClusterQuota],
    permissions: &[UserPermission],
    certificate_request_pem: &str,
) -> Result<Vec<Json>, LogicalCloudError> {
    let name = &logical_cloud.metadata.name;
    if logical_cloud.level() != Some(LogicalCloudLevel::Standard) {
        return Err(LogicalCloudError::NotLevel1(name.clone()));
    }
    logical_cloud.validate_logical_cloud()?;
    for (what, count) in [
        ("user permissions", permissions.len()),
        ("cluster quotas", quotas.len()),
    ] {
        if count > MAX_LEVEL1_ITEMS {
            return Err(LogicalCloudError::TooMany {
                what: what.into(),
                count,
                max: MAX_LEVEL1_ITEMS,
            });
        }
    }
    logical_cloud.validate_level1_permissions(permissions)?;
    for quota in quotas {
        quota.validate_cluster_quota()?;
    }
    for permission in permissions {
        permission.validate_user_permission()?;
    }
    let request = pem_block(
        "certificate_request_pem",
        certificate_request_pem,
        "CERTIFICATE REQUEST",
    )?;

    let namespace = &logical_cloud.spec.namespace;
    let user = &logical_cloud.spec.user.user_name;
    let mut objects = Vec::with_capacity(2 + quotas.len() + 2 * permissions.len());

    let mut namespace_metadata = Map::new();
    namespace_metadata.insert("name".into(), namespace.clone().into());
    if !logical_cloud.spec.labels.is_empty() {
        namespace_metadata.insert("labels".into(), json!(logical_cloud.spec.labels));
    }
    objects.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": namespace_metadata}));

    objects.push(json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": csr_name(name)},
        "spec": {
            "request": base64::engine::general_purpose::STANDARD.encode(request),
            "signerName": USER_SIGNER_NAME,
            "usages": ["client auth"],
        },
    }));

    for quota in quotas {
        objects.push(json!({
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": quota.metadata.name, "namespace": namespace},
            "spec": {"hard": quota.spec},
        }));
    }

    let mut bindings = Vec::with_capacity(permissions.len());
    for (index, permission) in permissions.iter().enumerate() {
        let spec = &permission.spec;
        let cluster_wide = spec.namespace.is_empty();
        let (role_kind, role_name, binding_kind, binding_name) = if cluster_wide {
            (
                "ClusterRole",
                format!("{name}-clusterrole{index}"),
                "ClusterRoleBinding",
                format!("{name}-clusterrolebinding{index}"),
            )
        } else {
            (
                "Role",
                format!("{name}-role{index}"),
                "RoleBinding",
                format!("{name}-rolebinding{index}"),
            )
        };
        let metadata = |object_name: &str| {
            if cluster_wide {
                json!({"name": object_name})
            } else {
                json!({"name": object_name, "namespace": spec.namespace})
            }
        };
        objects.push(json!({
            "apiVersion": format!("{RBAC_GROUP}/v1"),
            "kind": role_kind,
            "metadata": metadata(&role_name),
            "rules": [{"apiGroups": spec.api_groups, "resources": spec.resources, "verbs": spec.verbs}],
        }));
        bindings.push(json!({
            "apiVersion": format!("{RBAC_GROUP}/v1"),
            "kind": binding_kind,
            "metadata": metadata(&binding_name),
            "subjects": [{"kind": "User", "name": user, "apiGroup": RBAC_GROUP}],
            "roleRef": {"kind": role_kind, "name": role_name, "apiGroup": RBAC_GROUP},
        }));
    }
    objects.extend(bindings);
    Ok(objects)
}

/// The service account a GitOps cluster's Flux applies a level-1 logical cloud's apps as (EMCO's `<lc>-sa`, in
/// the cloud's namespace).
#[must_use]
pub fn flux_service_account(logical_cloud: &str) -> String {
    format!("{logical_cloud}-sa")
}

/// A level-1 logical cloud's `objects` ([`level1_objects`]) as a GitOps cluster takes them, EMCO's Flux
/// multi-tenancy: its agent applies the cloud's apps as the service account [`flux_service_account`], not as the
/// user — so the user's CertificateSigningRequest is left out (nobody there would sign it for emco), the service
/// account is added after the Namespace, and every binding binds it beside the user.
#[must_use]
pub fn gitops_level1_objects(objects: &[Json], logical_cloud: &str, namespace: &str) -> Vec<Json> {
    let account = flux_service_account(logical_cloud);
    let mut taken = Vec::with_capacity(objects.len() + 1);
    for object in objects {
        match object["kind"].as_str() {
            Some("CertificateSigningRequest") => continue,
            Some("RoleBinding" | "ClusterRoleBinding") => {
                let mut binding = object.clone();
                if let Some(subjects) = binding["subjects"].as_array_mut() {
                    subjects.push(json!({"kind": "ServiceAccount", "name": account, "namespace": namespace}));
                }
                taken.push(binding);
            }
            Some("Namespace") => {
                taken.push(object.clone());
                taken.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": account, "namespace": namespace}}));
            }
            _ => taken.push(object.clone()),
        }
    }
    taken
}

/// The name of the context in a user's kubeconfig: `<user>@<cluster>`.
#[must_use]
pub fn user_context_name(user: &str, cluster_name: &str) -> String {
    format!("{user}@{cluster_name}")
}

/// Where the API server of the cluster kubeconfig's current context is: its `cluster` entry (server, CA data,
/// TLS server name), from the policy-checked kubeconfig.
fn current_cluster(checked: &Json) -> Result<Map<String, Json>, LogicalCloudError> {
    let entries = |list: &str| checked[list].as_array().cloned().unwrap_or_default();
    let clusters = entries("clusters");
    let cluster_name = match checked["current-context"].as_str() {
        Some(current) => entries("contexts")
            .iter()
            .find(|context| context["name"] == current)
            .and_then(|context| context["context"]["cluster"].as_str().map(str::to_string))
            .ok_or_else(|| {
                LogicalCloudError::NoServer(format!("current-context '{current}' has no cluster"))
            })?,
        None => match clusters.as_slice() {
            [only] => only["name"].as_str().unwrap_or_default().to_string(),
            _ => {
                return Err(LogicalCloudError::NoServer(
                    "no current-context, and more than one cluster".into(),
                ));
            }
        },
    };
    let cluster = clusters
        .iter()
        .find(|cluster| cluster["name"] == cluster_name.as_str())
        .and_then(|cluster| cluster["cluster"].as_object())
        .ok_or_else(|| LogicalCloudError::NoServer(format!("no cluster entry '{cluster_name}'")))?;
    let mut out = Map::new();
    for field in ["server", "certificate-authority-data", "tls-server-name"] {
        if let Some(value) = cluster.get(field).and_then(Json::as_str) {
            out.insert(field.into(), value.into());
        }
    }
    if !out.contains_key("server") {
        return Err(LogicalCloudError::NoServer(format!(
            "cluster '{cluster_name}' has no server"
        )));
    }
    Ok(out)
}

/// The kubeconfig (YAML) of a level-1 logical cloud's `user` for one cluster: the cluster's API server as the
/// cluster kubeconfig's current context names it (server, CA data, TLS server name; never its credentials), the
/// user's `client-certificate-data` and `client-key-data`, and a context `<user>@<cluster_name>` with
/// `namespace`, which is the current context.
///
/// The cluster kubeconfig is checked by the kubeconfig policy first. `exec` users are let through that check
/// because no user entry of it is read here; everything the policy refuses in a cluster entry stays refused.
pub fn user_kubeconfig(
    cluster_kubeconfig: &[u8],
    cluster_name: &str,
    user: &str,
    namespace: &str,
    certificate_pem: &str,
    key_pem: &str,
) -> Result<String, LogicalCloudError> {
    if cluster_name.is_empty() || cluster_name.len() > emco_model::MAX_NAME_LEN * 2 + 1 {
        return Err(input("cluster_name", "empty or too long"));
    }
    check_user(user)?;
    if !is_dns_label(namespace) {
        return Err(input("namespace", "not a DNS-1123 label"));
    }
    let certificate_pem = pem_block("certificate_pem", certificate_pem, "CERTIFICATE")?;
    let key_pem = pem_block("key_pem", key_pem, "PRIVATE KEY")?;
    KeyPair::from_pem(key_pem).map_err(|_| input("key_pem", "not a PKCS#8 private key"))?;

    let checked = check_kubeconfig(cluster_kubeconfig, KubeconfigPolicy { allow_exec: true })?;
    let cluster = current_cluster(checked.as_json())?;

    let encode = |pem: &str| base64::engine::general_purpose::STANDARD.encode(format!("{pem}\n"));
    let context = user_context_name(user, cluster_name);
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": [{"name": user, "user": {
            "client-certificate-data": encode(certificate_pem),
            "client-key-data": encode(key_pem),
        }}],
        "contexts": [{"name": context, "context": {"cluster": cluster_name, "user": user, "namespace": namespace}}],
        "current-context": context,
        "preferences": {},
    });
    serde_saphyr::to_string(&config).map_err(|err| LogicalCloudError::Yaml(err.to_string()))
}

#[cfg(test)]
mod tests;
