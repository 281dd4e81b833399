//! What goes into a ResourceBundleState status: the objects of one app in one cluster, sanitized (no managed fields,
//! no last-applied annotation, no Secret data), sorted into the seed's typed arrays (`podStatuses`, …) or the
//! generic `resourceStatuses`, with `ready` and `resourceCount`, and kept under a size budget for apps with
//! thousands of pods.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use emco_k8s::readiness::readiness;
use emco_model::ReadyStatus;
use serde_json::{Map, Value as Json, json};

/// The most bytes a status may take; the API server refuses objects near 1.5 MiB (etcd's request limit), and the
/// rest of the object and the request need room too.
pub const MAX_STATUS_BYTES: usize = 1024 * 1024;

/// The typed arrays, by (group, kind), in the order they are written.
const TYPED: &[(&str, &str, &str)] = &[
    ("", "Pod", "podStatuses"),
    ("", "Service", "serviceStatuses"),
    ("", "ConfigMap", "configMapStatuses"),
    ("", "Secret", "secretStatuses"),
    ("apps", "Deployment", "deploymentStatuses"),
    ("apps", "DaemonSet", "daemonSetStatuses"),
    ("apps", "StatefulSet", "statefulSetStatuses"),
    ("batch", "Job", "jobStatuses"),
    ("networking.k8s.io", "Ingress", "ingressStatuses"),
    ("certificates.k8s.io", "CertificateSigningRequest", "csrStatuses"),
];

/// One object's identity within a bundle.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// The object without what must not (or need not) leave the cluster.
#[must_use]
pub fn sanitize(group: &str, kind: &str, object: &Json) -> Json {
    let mut clean = object.clone();
    if let Some(meta) = clean.get_mut("metadata").and_then(Json::as_object_mut) {
        meta.remove("managedFields");
        if let Some(annotations) = meta.get_mut("annotations").and_then(Json::as_object_mut) {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    if group.is_empty()
        && kind == "Secret"
        && let Some(map) = clean.as_object_mut()
    {
        map.remove("data");
        map.remove("stringData");
    }
    clean
}

/// A smaller pod: identity, owner, phase, conditions and container states only.
fn compact_pod(pod: &Json, minimal: bool) -> Json {
    let meta = &pod["metadata"];
    let mut metadata = json!({"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"], "labels": meta["labels"],
        "creationTimestamp": meta["creationTimestamp"]});
    if meta["deletionTimestamp"].is_string() {
        metadata["deletionTimestamp"] = meta["deletionTimestamp"].clone();
    }
    if !minimal {
        metadata["ownerReferences"] = meta["ownerReferences"].clone();
    }
    let status = &pod["status"];
    let mut slim = json!({"phase": status["phase"], "conditions": status["conditions"]});
    if !minimal {
        slim["containerStatuses"] = status["containerStatuses"].clone();
        slim["podIP"] = status["podIP"].clone();
    }
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "status": slim})
}

/// Builds the status of a bundle from its (already sanitized) objects.
#[must_use]
pub fn status<O: Borrow<Json>>(objects: &BTreeMap<ObjectKey, O>) -> Json {
    let mut ready = true;
    let mut arrays: BTreeMap<&str, Vec<Json>> =
        TYPED.iter().map(|(_, _, field)| (*field, Vec::new())).collect();
    let mut generic = Vec::new();
    for (key, object) in objects {
        let object: &Json = object.borrow();
        if readiness(&key.group, &key.kind, object) != ReadyStatus::Ready {
            ready = false;
        }
        match TYPED
            .iter()
            .find(|(group, kind, _)| *group == key.group && *kind == key.kind)
        {
            Some((_, _, field)) => arrays.entry(field).or_default().push(object.clone()),
            None => generic.push(
                json!({"group": key.group, "version": key.version, "kind": key.kind, "name": key.name,
                                        "namespace": key.namespace, "res": object.clone()}),
            ),
        }
    }
    let mut status = Map::new();
    status.insert("ready".into(), json!(ready));
    status.insert("resourceCount".into(), json!(objects.len()));
    for (_, _, field) in TYPED {
        status.insert(
            (*field).into(),
            Json::Array(arrays.remove(field).unwrap_or_default()),
        );
    }
    status.insert("resourceStatuses".into(), Json::Array(generic));
    let mut status = Json::Object(status);
    // Over budget: pods are the objects that multiply; shrink them, then shrink them further, then drop some.
    for minimal in [false, true] {
        if status.to_string().len() <= MAX_STATUS_BYTES {
            return status;
        }
        if let Some(pods) = status["podStatuses"].as_array_mut() {
            for pod in pods.iter_mut() {
                *pod = compact_pod(pod, minimal);
            }
        }
        status["compacted"] = json!(true);
    }
    while status.to_string().len() > MAX_STATUS_BYTES {
        let Some(pods) = status["podStatuses"].as_array_mut() else {
            break;
        };
        if pods.is_empty() {
            break;
        }
        let keep = pods.len() * 9 / 10;
        pods.truncate(keep);
        status["podStatusesTruncated"] = json!(true);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(group: &str, kind: &str, name: &str) -> ObjectKey {
        ObjectKey {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            namespace: "default".into(),
            name: name.into(),
        }
    }

    #[test]
    fn objects_land_in_typed_or_generic_arrays() {
        let mut objects = BTreeMap::new();
        objects.insert(key("", "ConfigMap", "c"), json!({"metadata": {"name": "c"}}));
        objects.insert(
            key("example.com", "Widget", "w"),
            json!({"metadata": {"name": "w"}}),
        );
        objects.insert(key("", "Pod", "p"), json!({"metadata": {"name": "p"}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}}));
        let status = status(&objects);
        assert_eq!(status["configMapStatuses"][0]["metadata"]["name"], "c");
        assert_eq!(status["resourceStatuses"][0]["kind"], "Widget");
        assert_eq!(status["resourceStatuses"][0]["res"]["metadata"]["name"], "w");
        assert_eq!(
            (status["resourceCount"].as_u64(), status["ready"].as_bool()),
            (Some(3), Some(false))
        );
        assert_eq!(status["deploymentStatuses"], json!([]));
    }

    #[test]
    fn secrets_and_managed_fields_stay_home() {
        let secret = json!({"metadata": {"name": "s", "managedFields": [{}], "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "1"}},
                            "data": {"password": "c2VjcmV0"}, "type": "Opaque"});
        let clean = sanitize("", "Secret", &secret);
        assert_eq!(
            clean,
            json!({"metadata": {"name": "s", "annotations": {"keep": "1"}}, "type": "Opaque"})
        );
    }

    #[test]
    fn thousands_of_pods_fit_the_budget() {
        let mut objects = BTreeMap::new();
        for i in 0..5000 {
            let name = format!("web-{i:05}");
            let pod = json!({"metadata": {"name": name, "namespace": "default", "uid": format!("{i:036}"), "labels": {"app": "web", "emco/deployment-id": "1-web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "resources": {}, "env": [{"name": "A", "value": "x".repeat(100)}]}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "podIP": "10.0.0.1",
                           "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "state": {"running": {}}}]}});
            objects.insert(key("", "Pod", &name), pod);
        }
        let status = status(&objects);
        assert!(status.to_string().len() <= MAX_STATUS_BYTES);
        assert_eq!(status["compacted"], true);
        assert!(!status["podStatuses"].as_array().unwrap().is_empty());
        assert_eq!(
            status["resourceCount"], 5000,
            "the count tells how many there are, whatever was compacted"
        );
    }
}
