//! Checking an uploaded kubeconfig before it is stored: it must be YAML with at least one cluster that has a
//! server URL, and its current context (if set) must exist. The content is never echoed back.

use serde_json::Value as Json;

/// What is wrong with a kubeconfig.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kubeconfig: {0}")]
pub struct KubeconfigError(pub String);

/// Checks the shape of a kubeconfig file.
pub fn validate_kubeconfig(bytes: &[u8]) -> Result<(), KubeconfigError> {
    let bad = |message: &str| KubeconfigError(message.to_string());
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8 text"))?;
    if text.trim().is_empty() {
        return Err(bad("the file is empty"));
    }
    let config: Json =
        serde_saphyr::from_str(text).map_err(|err| KubeconfigError(format!("not YAML: {err}")))?;
    let clusters = config["clusters"]
        .as_array()
        .filter(|list| !list.is_empty())
        .ok_or_else(|| bad("no clusters"))?;
    for (index, cluster) in clusters.iter().enumerate() {
        let server = cluster["cluster"]["server"].as_str().unwrap_or_default();
        if !(server.starts_with("http://") || server.starts_with("https://")) {
            return Err(KubeconfigError(format!(
                "clusters[{index}].cluster.server must be an http(s) URL"
            )));
        }
    }
    if let Some(current) = config["current-context"].as_str().filter(|name| !name.is_empty()) {
        let contexts = config["contexts"].as_array().cloned().unwrap_or_default();
        if !contexts
            .iter()
            .any(|context| context["name"].as_str() == Some(current))
        {
            return Err(KubeconfigError(format!(
                "current-context '{current}' is not among its contexts"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_kubeconfig_and_names_what_is_wrong() {
        let good = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:6443\ncontexts:\n- name: x\n  context:\n    cluster: c\ncurrent-context: x\n";
        assert_eq!(validate_kubeconfig(good.as_bytes()), Ok(()));
        assert!(validate_kubeconfig(b"").unwrap_err().0.contains("empty"));
        assert!(validate_kubeconfig(b"a: [").unwrap_err().0.contains("not YAML"));
        assert!(
            validate_kubeconfig(b"clusters: []")
                .unwrap_err()
                .0
                .contains("no clusters")
        );
        let no_server = "clusters:\n- name: c\n  cluster: {}\n";
        assert!(
            validate_kubeconfig(no_server.as_bytes())
                .unwrap_err()
                .0
                .contains("server")
        );
        let bad_current = good.replace("current-context: x", "current-context: other");
        assert!(
            validate_kubeconfig(bad_current.as_bytes())
                .unwrap_err()
                .0
                .contains("'other'")
        );
    }
}
