//! Merge patches as Kubernetes applies them to an object: a strategic merge patch for the built-in kinds (lists
//! of named things — containers, volumes, env, ports, host aliases… — merged element by element by their merge
//! key, `$patch: replace|delete` directives) and an RFC 7386 JSON merge patch for every other kind (a custom
//! resource has no merge keys).

use serde_json::{Map, Value as Json};

/// Why a merge patch cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum MergeError {
    /// The patch holds a directive this implementation does not apply.
    #[error("{path}: the directive '{directive}' is not supported (only $patch: replace and delete are)")]
    Directive {
        /// Where, as a JSON path.
        path: String,
        /// The directive.
        directive: String,
    },
    /// The patch is not an object.
    #[error("a merge patch must be a mapping, found {0}")]
    NotAMapping(&'static str),
}

/// The API groups whose kinds Kubernetes patches strategically (client-go's scheme): the core group and the
/// built-in named groups.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "node.k8s.io",
    "certificates.k8s.io",
    "admissionregistration.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
];

/// Whether objects of `api_version` are built-in kinds, patched strategically.
#[must_use]
pub(super) fn is_built_in(api_version: &str) -> bool {
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    BUILT_IN_GROUPS.contains(&group)
}

/// Applies `patch` to `object` as `kubectl patch --type` would for the object's kind: strategic for built-in
/// kinds, RFC 7386 otherwise.
pub(super) fn apply(object: &mut Json, patch: &Json) -> Result<(), MergeError> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default().to_string();
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    if !patch.is_object() {
        return Err(MergeError::NotAMapping(type_name(patch)));
    }
    if !is_built_in(&api_version) {
        json_patch::merge(object, patch);
        return Ok(());
    }
    let mut path = Vec::new();
    merge_value(object, patch, &kind, &mut path)
}

fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a mapping",
    }
}

/// How a list field merges: by a key of its elements, as a set of scalars, or not at all (replaced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListStrategy {
    Key(&'static str),
    Set,
    Replace,
}

/// The strategy of the list `field` at `path` (field names from the object's root) of an object of `kind`:
/// Kubernetes' `patchMergeKey` / `patchStrategy` tags of the built-in types.
fn list_strategy(kind: &str, path: &[String], field: &str) -> ListStrategy {
    let in_container = path.iter().any(|segment| {
        matches!(
            segment.as_str(),
            "containers" | "initContainers" | "ephemeralContainers"
        )
    });
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => ListStrategy::Key("name"),
        "env" if in_container => ListStrategy::Key("name"),
        "volumeMounts" if in_container => ListStrategy::Key("mountPath"),
        "volumeDevices" if in_container => ListStrategy::Key("devicePath"),
        "ports" if in_container => ListStrategy::Key("containerPort"),
        "ports" if kind == "Service" && path == ["spec"] => ListStrategy::Key("port"),
        "hostAliases" => ListStrategy::Key("ip"),
        "topologySpreadConstraints" => ListStrategy::Key("topologyKey"),
        "ownerReferences" if path == ["metadata"] => ListStrategy::Key("uid"),
        "finalizers" if path == ["metadata"] => ListStrategy::Set,
        _ => ListStrategy::Replace,
    }
}

fn shown_path(path: &[String], field: &str) -> String {
    let mut shown: Vec<&str> = path.iter().map(String::as_str).collect();
    shown.push(field);
    format!(".{}", shown.join("."))
}

/// Merges `patch` into `target`: mappings key by key (null deletes), lists by their strategy, anything else
/// replaced.
fn merge_value(
    target: &mut Json,
    patch: &Json,
    kind: &str,
    path: &mut Vec<String>,
) -> Result<(), MergeError> {
    let Json::Object(patch) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    if let Some(directive) = patch.get("$patch") {
        if directive == "replace" {
            *target = Json::Object(without_directives(patch));
            return Ok(());
        }
        return Err(MergeError::Directive {
            path: shown_path(path, "$patch"),
            directive: format!("$patch: {}", directive.as_str().unwrap_or("?")),
        });
    }
    if !target.is_object() {
        *target = Json::Object(Map::new());
    }
    let Json::Object(target) = target else {
        return Ok(());
    };
    for (field, value) in patch {
        if field.starts_with('$') {
            return Err(MergeError::Directive {
                path: shown_path(path, field),
                directive: field.clone(),
            });
        }
        if value.is_null() {
            target.remove(field);
            continue;
        }
        if value.get("$patch").and_then(Json::as_str) == Some("delete") {
            target.remove(field);
            continue;
        }
        match (target.get_mut(field), value) {
            (Some(existing @ Json::Array(_)), Json::Array(items)) => {
                let strategy = list_strategy(kind, path, field);
                path.push(field.clone());
                let merged = merge_list(existing, items, strategy, kind, path);
                path.pop();
                merged?;
            }
            (Some(existing @ Json::Object(_)), Json::Object(_)) => {
                path.push(field.clone());
                let merged = merge_value(existing, value, kind, path);
                path.pop();
                merged?;
            }
            _ => {
                let mut fresh = Json::Null;
                path.push(field.clone());
                let merged = merge_new(&mut fresh, value, kind, path);
                path.pop();
                merged?;
                target.insert(field.clone(), fresh);
            }
        }
    }
    Ok(())
}

/// A value the target does not have yet: the patch's, with its directives applied to nothing.
fn merge_new(target: &mut Json, value: &Json, kind: &str, path: &mut Vec<String>) -> Result<(), MergeError> {
    match value {
        Json::Object(_) => merge_value(target, value, kind, path),
        Json::Array(items) => {
            let mut list = Json::Array(Vec::new());
            let field = path.pop().unwrap_or_default();
            let strategy = list_strategy(kind, path, &field);
            path.push(field);
            merge_list(&mut list, items, strategy, kind, path)?;
            *target = list;
            Ok(())
        }
        other => {
            *target = other.clone();
            Ok(())
        }
    }
}

fn merge_list(
    target: &mut Json,
    items: &[Json],
    strategy: ListStrategy,
    kind: &str,
    path: &mut Vec<String>,
) -> Result<(), MergeError> {
    let replace_all = items
        .iter()
        .any(|item| item.get("$patch").and_then(Json::as_str) == Some("replace"));
    let Json::Array(existing) = target else {
        return Ok(());
    };
    if replace_all || strategy == ListStrategy::Replace {
        let kept: Vec<&Json> = items.iter().filter(|item| item.get("$patch").is_none()).collect();
        let mut replaced = Vec::with_capacity(kept.len());
        for item in kept {
            let mut fresh = Json::Null;
            merge_new(&mut fresh, item, kind, path)?;
            replaced.push(fresh);
        }
        *existing = replaced;
        return Ok(());
    }
    match strategy {
        ListStrategy::Set => {
            for item in items {
                if !existing.contains(item) {
                    existing.push(item.clone());
                }
            }
        }
        ListStrategy::Key(key) => {
            for item in items {
                let Some(id) = item.get(key) else {
                    existing.push(item.clone());
                    continue;
                };
                let position = existing.iter().position(|element| element.get(key) == Some(id));
                if item.get("$patch").and_then(Json::as_str) == Some("delete") {
                    if let Some(position) = position {
                        existing.remove(position);
                    }
                    continue;
                }
                match position {
                    Some(position) => merge_value(&mut existing[position], item, kind, path)?,
                    None => {
                        let mut fresh = Json::Null;
                        merge_new(&mut fresh, item, kind, path)?;
                        existing.push(fresh);
                    }
                }
            }
        }
        ListStrategy::Replace => {}
    }
    Ok(())
}

fn without_directives(patch: &Map<String, Json>) -> Map<String, Json> {
    patch
        .iter()
        .filter(|(key, _)| !key.starts_with('$'))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn containers_merge_by_name_and_host_aliases_are_added() {
        let mut deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": {"containers": [{"name": "nginx-ctr", "image": "nginx"}]}}}});
        apply(
            &mut deployment,
            &json!({"spec": {"template": {"spec": {
                "containers": [{"name": "redis-ctr", "image": "redis"}, {"name": "nginx-ctr", "image": "nginx:1.27"}],
                "hostAliases": [{"ip": "1.2.3.4", "hostnames": ["host1"]}]
            }}}}),
        )
        .unwrap();
        assert_eq!(
            deployment["spec"]["template"]["spec"],
            json!({
                "containers": [{"name": "nginx-ctr", "image": "nginx:1.27"}, {"name": "redis-ctr", "image": "redis"}],
                "hostAliases": [{"ip": "1.2.3.4", "hostnames": ["host1"]}]
            })
        );
    }

    #[test]
    fn directives_delete_and_replace_and_lists_without_a_key_are_replaced() {
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
            "spec": {"containers": [{"name": "a", "args": ["x", "y"], "env": [{"name": "K", "value": "1"}]}, {"name": "b"}],
                     "tolerations": [{"key": "t1"}]}});
        apply(
            &mut pod,
            &json!({"metadata": {"labels": {"a": null}},
                    "spec": {"containers": [{"name": "b", "$patch": "delete"}, {"name": "a", "args": ["z"], "env": [{"name": "L", "value": "2"}]}],
                             "tolerations": [{"key": "t2"}]}}),
        )
        .unwrap();
        assert_eq!(pod["metadata"]["labels"], json!({"b": "2"}));
        assert_eq!(
            pod["spec"]["containers"],
            json!([{"name": "a", "args": ["z"], "env": [{"name": "K", "value": "1"}, {"name": "L", "value": "2"}]}])
        );
        assert_eq!(pod["spec"]["tolerations"], json!([{"key": "t2"}]));
        apply(
            &mut pod,
            &json!({"spec": {"containers": [{"$patch": "replace"}, {"name": "c"}]}}),
        )
        .unwrap();
        assert_eq!(pod["spec"]["containers"], json!([{"name": "c"}]));
        let err = apply(&mut pod, &json!({"spec": {"$retainKeys": ["x"]}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            ".spec.$retainKeys: the directive '$retainKeys' is not supported (only $patch: replace and delete are)"
        );
    }

    #[test]
    fn service_ports_merge_by_port_and_custom_resources_by_rfc_7386() {
        let mut service =
            json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80, "name": "http"}]}});
        apply(
            &mut service,
            &json!({"spec": {"ports": [{"port": 443, "name": "https"}]}}),
        )
        .unwrap();
        assert_eq!(service["spec"]["ports"].as_array().map(Vec::len), Some(2));
        let mut custom =
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"items": [{"name": "a"}]}});
        apply(&mut custom, &json!({"spec": {"items": [{"name": "b"}]}})).unwrap();
        assert_eq!(custom["spec"]["items"], json!([{"name": "b"}]));
        assert!(is_built_in("networking.k8s.io/v1") && is_built_in("v1") && !is_built_in("example.com/v1"));
    }
}
