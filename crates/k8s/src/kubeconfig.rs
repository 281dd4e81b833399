//! The kubeconfig policy: the one check a cluster's kubeconfig passes when it is uploaded (emco-server) and again
//! right before rsync builds a client from it (stored data is not trusted).
//!
//! Only inline credentials are allowed: `token`, `client-certificate-data`, `client-key-data`,
//! `certificate-authority-data`, `username`/`password`. Anything that makes a Kubernetes client run a command
//! (`exec`, `auth-provider`) or read a local file (`tokenFile`, `client-certificate`, `client-key`,
//! `certificate-authority`), a `proxy-url`, and a `server` that is not `http(s)://host[:port][/path]` are refused,
//! naming the user or cluster entry and the field. Keys are compared as Go's JSON decoding compares them (case
//! and `-`/`_` ignored), so `Exec` or `token_file` are refused too.
//!
//! What passes is returned as a [`CheckedKubeconfig`] holding only the allowed fields: rsync builds its client
//! from that, never from the raw bytes, so no field the policy did not look at can reach the client.
//!
//! One thing is configurable ([`KubeconfigPolicy`]): an operator whose clusters need cloud IAM may allow `exec`
//! credential plugins (`emco serve --allow-exec-credentials`). The plugin then runs as emco's own user on the
//! server, so it is only allowed when the API requires authentication; everything else stays refused.

use serde_json::{Map, Value as Json};

/// Why a kubeconfig is refused. Messages name the entry and the field, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeconfigError {
    /// The file as a whole is not a usable kubeconfig.
    #[error("kubeconfig: {0}")]
    Shape(String),
    /// An entry of `users` is refused.
    #[error("kubeconfig user '{user}': {reason}")]
    User {
        /// The entry's name.
        user: String,
        /// What is wrong.
        reason: String,
    },
    /// An entry of `clusters` is refused.
    #[error("kubeconfig cluster '{cluster}': {reason}")]
    Cluster {
        /// The entry's name.
        cluster: String,
        /// What is wrong.
        reason: String,
    },
    /// An entry of `contexts` is malformed.
    #[error("kubeconfig context '{context}': {reason}")]
    Context {
        /// The entry's name.
        context: String,
        /// What is wrong.
        reason: String,
    },
}

/// The message shown for a refused kubeconfig of cluster `cluster` (the API's 422 and rsync's Failed resources
/// say the same thing): `cluster 'edge01': kubeconfig user 'admin': exec credential plugins are not allowed`.
#[must_use]
pub fn refusal_message(cluster: &str, err: &KubeconfigError) -> String {
    format!("cluster '{cluster}': {err}")
}

/// What the policy allows beyond inline credentials. The default allows nothing more.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KubeconfigPolicy {
    /// Allow `exec` credential plugins (a `users[].user.exec` entry): the command runs on the emco server
    /// whenever a client for the cluster is built. Only its documented fields are kept (`apiVersion`,
    /// `command`, `args`, `env`, `installHint`, `provideClusterInfo`), and it never gets a terminal
    /// (`interactiveMode: Never`).
    pub allow_exec: bool,
}

/// A kubeconfig that passed the policy, reduced to the fields the policy allows (in the kubeconfig's own shape).
#[derive(Clone, PartialEq)]
pub struct CheckedKubeconfig(Json);

impl CheckedKubeconfig {
    /// The allowed fields as a kubeconfig document (JSON), to deserialize into a client library's type.
    #[must_use]
    pub fn as_json(&self) -> &Json {
        &self.0
    }
}

impl std::fmt::Debug for CheckedKubeconfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials are never printed.
        f.write_str("CheckedKubeconfig(..)")
    }
}

/// A field's type, as the policy copies it.
#[derive(Clone, Copy)]
enum Type {
    String,
    Bool,
    Strings,
    StringLists,
    /// A list of `{name, value}` string pairs (an exec plugin's `env`).
    NameValues,
}

/// The fields of a `users[].user` entry that are copied.
const USER_ALLOWED: &[(&str, Type)] = &[
    ("token", Type::String),
    ("client-certificate-data", Type::String),
    ("client-key-data", Type::String),
    ("username", Type::String),
    ("password", Type::String),
    ("as", Type::String),
    ("as-uid", Type::String),
    ("as-groups", Type::Strings),
    ("as-user-extra", Type::StringLists),
];

/// The fields of a `users[].user.exec` entry that are copied when the policy allows exec plugins (`command` is
/// required besides; `interactiveMode` is always `Never`).
const EXEC_ALLOWED: &[(&str, Type)] = &[
    ("apiVersion", Type::String),
    ("args", Type::Strings),
    ("env", Type::NameValues),
    ("installHint", Type::String),
    ("provideClusterInfo", Type::Bool),
];

/// The fields of a `clusters[].cluster` entry that are copied (besides `server`).
const CLUSTER_ALLOWED: &[(&str, Type)] = &[
    ("certificate-authority-data", Type::String),
    ("insecure-skip-tls-verify", Type::Bool),
    ("tls-server-name", Type::String),
    ("disable-compression", Type::Bool),
];

/// Refused fields: normalized key → reason.
const USER_REFUSED: &[(&str, &str)] = &[
    ("exec", "exec credential plugins are not allowed"),
    ("authprovider", "auth-provider plugins are not allowed"),
    (
        "tokenfile",
        "a token file path is not allowed (use inline 'token')",
    ),
    (
        "clientcertificate",
        "a client-certificate file path is not allowed (use 'client-certificate-data')",
    ),
    (
        "clientkey",
        "a client-key file path is not allowed (use 'client-key-data')",
    ),
];

const CLUSTER_REFUSED: &[(&str, &str)] = &[
    (
        "certificateauthority",
        "a certificate-authority file path is not allowed (use 'certificate-authority-data')",
    ),
    ("proxyurl", "proxy-url is not allowed"),
];

/// A key as Go's `encoding/json` matches it against field names (case-insensitive), with `-` and `_` ignored.
fn normalize(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Checks `bytes` against the policy and returns what may be used to build a client.
pub fn check_kubeconfig(
    bytes: &[u8],
    policy: KubeconfigPolicy,
) -> Result<CheckedKubeconfig, KubeconfigError> {
    let shape = |message: &str| KubeconfigError::Shape(message.to_string());
    let text = std::str::from_utf8(bytes).map_err(|_| shape("not UTF-8 text"))?;
    if text.trim().is_empty() {
        return Err(shape("the file is empty"));
    }
    let documents: Vec<Json> = serde_saphyr::from_multiple(text)
        .map_err(|err| KubeconfigError::Shape(format!("not YAML: {err}")))?;
    let mut documents = documents.into_iter().filter(|doc| !doc.is_null());
    let config = documents.next().ok_or_else(|| shape("the file is empty"))?;
    if documents.next().is_some() {
        return Err(shape("more than one YAML document"));
    }
    let Json::Object(config) = config else {
        return Err(shape("not a mapping"));
    };

    let mut out = Map::new();
    for key in ["apiVersion", "kind"] {
        if let Some(value) = config.get(key).and_then(Json::as_str) {
            out.insert(key.into(), value.into());
        }
    }

    let clusters = entries(&config, "clusters")?;
    if clusters.is_empty() {
        return Err(shape("no clusters"));
    }
    let mut checked_clusters = Vec::new();
    for (name, entry) in &clusters {
        checked_clusters.push(check_cluster(name, entry)?);
    }
    out.insert("clusters".into(), Json::Array(checked_clusters));

    let mut checked_users = Vec::new();
    for (name, entry) in entries(&config, "users")? {
        checked_users.push(check_user(&name, &entry, policy)?);
    }
    out.insert("users".into(), Json::Array(checked_users));

    let contexts = entries(&config, "contexts")?;
    let mut checked_contexts = Vec::new();
    for (name, entry) in &contexts {
        checked_contexts.push(check_context(name, entry)?);
    }
    out.insert("contexts".into(), Json::Array(checked_contexts));

    match config.get("current-context") {
        None | Some(Json::Null) => {}
        Some(Json::String(current)) if current.is_empty() => {}
        Some(Json::String(current)) => {
            if !contexts.iter().any(|(name, _)| name == current) {
                return Err(KubeconfigError::Shape(format!(
                    "current-context '{current}' is not among its contexts"
                )));
            }
            out.insert("current-context".into(), current.clone().into());
        }
        Some(_) => return Err(shape("current-context must be a string")),
    }
    Ok(CheckedKubeconfig(Json::Object(out)))
}

/// A named entry of a kubeconfig list: its name and its body.
type Entry = (String, Map<String, Json>);

/// The `(name, body)` of each entry of the list `list` (`clusters`, `users`, `contexts`); the body is the entry's
/// `cluster`/`user`/`context` mapping (empty when absent).
fn entries(config: &Map<String, Json>, list: &str) -> Result<Vec<Entry>, KubeconfigError> {
    let body_key = &list[..list.len() - 1];
    let items = match config.get(list) {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(items)) => items,
        Some(_) => return Err(KubeconfigError::Shape(format!("{list} must be a list"))),
    };
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let name = item
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| KubeconfigError::Shape(format!("{list}[{index}] has no name")))?;
        // Go matches `user`, `User`, …: look at every spelling, and refuse two.
        let mut bodies = item
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(key, _)| normalize(key) == body_key);
        let body = match (bodies.next(), bodies.next()) {
            (None, _) => Map::new(),
            (Some((_, Json::Object(body))), None) => body.clone(),
            (Some((_, Json::Null)), None) => Map::new(),
            (Some(_), None) => {
                return Err(KubeconfigError::Shape(format!(
                    "{list}[{index}].{body_key} must be a mapping"
                )));
            }
            (Some(_), Some(_)) => {
                return Err(KubeconfigError::Shape(format!(
                    "{list}[{index}] has '{body_key}' more than once"
                )));
            }
        };
        out.push((name.to_string(), body));
    }
    Ok(out)
}

/// Copies the `allowed` fields of `body` into `out` with their types checked; `refuse` builds the error.
fn copy_allowed(
    body: &Map<String, Json>,
    allowed: &[(&str, Type)],
    out: &mut Map<String, Json>,
    refuse: &dyn Fn(String) -> KubeconfigError,
) -> Result<(), KubeconfigError> {
    for (field, kind) in allowed {
        let Some(value) = body.get(*field) else {
            continue;
        };
        if value.is_null() {
            continue;
        }
        let ok = match kind {
            Type::String => value.is_string(),
            Type::Bool => value.is_boolean(),
            Type::Strings => value
                .as_array()
                .is_some_and(|items| items.iter().all(Json::is_string)),
            Type::StringLists => value.as_object().is_some_and(|map| {
                map.values().all(|items| {
                    items
                        .as_array()
                        .is_some_and(|items| items.iter().all(Json::is_string))
                })
            }),
            Type::NameValues => value.as_array().is_some_and(|items| {
                items.iter().all(|item| {
                    item.as_object().is_some_and(|pair| {
                        pair.len() == 2
                            && pair.get("name").is_some_and(Json::is_string)
                            && pair.get("value").is_some_and(Json::is_string)
                    })
                })
            }),
        };
        if !ok {
            let expected = match kind {
                Type::String => "a string",
                Type::Bool => "true or false",
                Type::Strings => "a list of strings",
                Type::StringLists => "a mapping of lists of strings",
                Type::NameValues => "a list of {name, value} strings",
            };
            return Err(refuse(format!("'{field}' must be {expected}")));
        }
        out.insert((*field).to_string(), value.clone());
    }
    Ok(())
}

/// The first refused field of `body`, if any; `allowed` (normalized keys) are exempt.
fn refused(
    body: &Map<String, Json>,
    refused: &[(&str, &'static str)],
    allowed: &[&str],
) -> Option<&'static str> {
    // In `refused`'s order, so the message does not depend on the YAML's key order.
    refused.iter().find_map(|(normalized, reason)| {
        if allowed.contains(normalized) {
            return None;
        }
        body.iter()
            .any(|(key, value)| !value.is_null() && normalize(key) == *normalized)
            .then_some(*reason)
    })
}

fn check_user(
    name: &str,
    body: &Map<String, Json>,
    policy: KubeconfigPolicy,
) -> Result<Json, KubeconfigError> {
    let refuse = |reason: String| KubeconfigError::User {
        user: name.to_string(),
        reason,
    };
    let exempt: &[&str] = if policy.allow_exec { &["exec"] } else { &[] };
    if let Some(reason) = refused(body, USER_REFUSED, exempt) {
        return Err(refuse(reason.to_string()));
    }
    let mut user = Map::new();
    copy_allowed(body, USER_ALLOWED, &mut user, &refuse)?;
    if policy.allow_exec {
        let mut execs = body
            .iter()
            .filter(|(key, value)| !value.is_null() && normalize(key) == "exec");
        match (execs.next(), execs.next()) {
            (None, _) => {}
            (Some((_, exec)), None) => {
                user.insert("exec".into(), check_exec(exec, &refuse)?);
            }
            (Some(_), Some(_)) => return Err(refuse("'exec' is given more than once".into())),
        }
    }
    Ok(serde_json::json!({"name": name, "user": user}))
}

/// An allowed exec plugin entry, reduced to its documented fields and made non-interactive.
fn check_exec(exec: &Json, refuse: &dyn Fn(String) -> KubeconfigError) -> Result<Json, KubeconfigError> {
    let Json::Object(exec) = exec else {
        return Err(refuse("'exec' must be a mapping".into()));
    };
    let mut out = Map::new();
    match exec.get("command") {
        Some(Json::String(command)) if !command.trim().is_empty() => {
            out.insert("command".into(), command.clone().into());
        }
        _ => return Err(refuse("'exec.command' must be a non-empty string".into())),
    }
    copy_allowed(exec, EXEC_ALLOWED, &mut out, &|reason| {
        refuse(format!("exec: {reason}"))
    })?;
    // emco runs without a terminal: the plugin must never wait for one.
    out.insert("interactiveMode".into(), "Never".into());
    Ok(Json::Object(out))
}

fn check_cluster(name: &str, body: &Map<String, Json>) -> Result<Json, KubeconfigError> {
    let refuse = |reason: String| KubeconfigError::Cluster {
        cluster: name.to_string(),
        reason,
    };
    if let Some(reason) = refused(body, CLUSTER_REFUSED, &[]) {
        return Err(refuse(reason.to_string()));
    }
    // `server` under any spelling Go would accept must be the one, well-formed, exact `server`.
    let servers: Vec<_> = body
        .iter()
        .filter(|(key, _)| normalize(key) == "server")
        .collect();
    let server = match servers.as_slice() {
        [(key, Json::String(server))] if key.as_str() == "server" && server_ok(server) => server,
        [] => return Err(refuse("'server' is missing".to_string())),
        _ => {
            return Err(refuse(
                "'server' must be an http(s)://host[:port][/path] URL".to_string(),
            ));
        }
    };
    let mut cluster = Map::new();
    cluster.insert("server".into(), server.clone().into());
    copy_allowed(body, CLUSTER_ALLOWED, &mut cluster, &refuse)?;
    Ok(serde_json::json!({"name": name, "cluster": cluster}))
}

fn check_context(name: &str, body: &Map<String, Json>) -> Result<Json, KubeconfigError> {
    let refuse = |reason: String| KubeconfigError::Context {
        context: name.to_string(),
        reason,
    };
    let mut context = Map::new();
    match body.get("cluster") {
        Some(Json::String(cluster)) => {
            context.insert("cluster".into(), cluster.clone().into());
        }
        _ => return Err(refuse("'cluster' must be a string".into())),
    }
    for field in ["user", "namespace"] {
        match body.get(field) {
            None | Some(Json::Null) => {}
            Some(Json::String(value)) => {
                context.insert(field.into(), value.clone().into());
            }
            Some(_) => return Err(refuse(format!("'{field}' must be a string"))),
        }
    }
    Ok(serde_json::json!({"name": name, "context": context}))
}

/// Whether `url` is `http(s)://host[:port][/path]`: no user info, query or fragment; a DNS name, IPv4 address or
/// bracketed IPv6 address; a port 1–65535.
fn server_ok(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return false;
    };
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let (host_ok, port) = if let Some(v6) = authority.strip_prefix('[') {
        let Some((host, after)) = v6.split_once(']') else {
            return false;
        };
        let port = match after {
            "" => None,
            _ => match after.strip_prefix(':') {
                Some(port) => Some(port),
                None => return false,
            },
        };
        (
            !host.is_empty()
                && host.contains(':')
                && host
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.'),
            port,
        )
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        (
            !host.is_empty()
                && !host.starts_with(['-', '.'])
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'),
            port,
        )
    };
    let port_ok = port.is_none_or(|port| {
        !port.is_empty()
            && port.len() <= 5
            && port.chars().all(|c| c.is_ascii_digit())
            && port.parse::<u16>().is_ok_and(|port| port > 0)
    });
    let path_ok = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._~/%!$&'()*+,;=:@".contains(c));
    host_ok && port_ok && path_ok
}

#[cfg(test)]
mod tests;
