//! What goes into a ResourceBundleState status: the objects of one app in one cluster, sanitized (no managed fields,
//! no last-applied annotation, no Secret data), sorted into the seed's typed arrays (`podStatuses`, …) or the
//! generic `resourceStatuses`, with `ready` and `resourceCount`, and kept under a size budget for apps with
//! thousands of pods.
//!
//! The bundle's status configs (its spec's `statusConfigs`, issue #16 §4) refine it per kind: objects of a kind whose
//! collection is disabled are left out (the kind is listed in `statusCollectionDisabled`); an object of a kind with a
//! `statusPath` carries the value found there as `statusRemote` (with `rawStatus`, its whole `.status`), at most
//! [`MAX_STATUS_REMOTE_BYTES`]; a kind's `readyCondition` decides its objects' readiness and is written beside
//! them as `readyCondition` so emco judges them the same way.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use emco_k8s::bundle::{
    BundleStatusConfig, COLLECTION_DISABLED_FIELD, READY_CONDITION_FIELD, STATUS_REMOTE_FIELD,
};
use emco_k8s::readiness::{Hints, assess_with, readiness};
use emco_model::{ReadyStatus, StatusPath};
use serde_json::{Map, Value as Json, json};

/// The most bytes one object's `statusRemote` may take (as JSON); a larger value is replaced by its first bytes as
/// a string ending in `…`.
pub const MAX_STATUS_REMOTE_BYTES: usize = 4096;

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

/// The typed array an object goes into, if its kind has one (else it goes into `resourceStatuses`).
fn typed_field(key: &ObjectKey) -> Option<&'static str> {
    TYPED
        .iter()
        .find(|(group, kind, _)| *group == key.group && *kind == key.kind)
        .map(|(_, _, field)| *field)
}

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
pub fn sanitize(group: &str, kind: &str, object: Json) -> Json {
    let mut clean = object;
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

/// One object as a bundle keeps it between writes: its sanitized JSON text and its readiness without status
/// configs. Not the tree: a tree takes seven to nine times its text, and the monitor keeps every object of every
/// bundle in its cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// The sanitized object's JSON.
    text: Box<str>,
    /// Its readiness when no status config decides it.
    ready: ReadyStatus,
}

impl Reported {
    /// Keeps an object already [`sanitize`]d.
    #[must_use]
    pub fn new(group: &str, kind: &str, sanitized: &Json) -> Self {
        Self {
            text: sanitized.to_string().into_boxed_str(),
            ready: readiness(group, kind, sanitized),
        }
    }

    /// The object as a tree.
    #[must_use]
    pub fn tree(&self) -> Json {
        // The text is serde_json's own serialization of a tree, so it parses.
        serde_json::from_str(&self.text).unwrap_or(Json::Null)
    }
}

/// A bundle's status as the JSON text of its object, and whether it lists kinds whose collection is disabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusText {
    /// The status object's JSON.
    pub text: String,
    /// Whether it has `statusCollectionDisabled`.
    pub lists_disabled: bool,
}

/// Builds the status of a bundle as JSON text, the same as [`status_with`] would write. With no status configs
/// and within [`MAX_STATUS_BYTES`] it is put together from the kept texts, without a tree; otherwise the objects
/// are parsed and [`status_with`] builds it.
#[must_use]
pub fn status_text(
    objects: &BTreeMap<ObjectKey, std::sync::Arc<Reported>>,
    configs: &[BundleStatusConfig],
) -> StatusText {
    if configs.is_empty()
        && let Some(text) = assembled(objects)
    {
        return StatusText {
            text,
            lists_disabled: false,
        };
    }
    let trees: BTreeMap<ObjectKey, Json> = objects
        .iter()
        .map(|(key, object)| (key.clone(), object.tree()))
        .collect();
    let status = status_with(&trees, configs);
    StatusText {
        lists_disabled: status.get(COLLECTION_DISABLED_FIELD).is_some(),
        text: status.to_string(),
    }
}

/// The status with no status configs, written from the kept texts in [`status_with`]'s order; `None` past
/// [`MAX_STATUS_BYTES`] (then pods are shrunk, which takes the trees).
fn assembled(objects: &BTreeMap<ObjectKey, std::sync::Arc<Reported>>) -> Option<String> {
    let quoted = |text: &str| Json::from(text).to_string();
    let mut arrays: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut generic = Vec::new();
    for (key, object) in objects {
        match typed_field(key) {
            Some(field) => arrays.entry(field).or_default().push(&object.text),
            None => generic.push(format!(
                "{{\"group\":{},\"version\":{},\"kind\":{},\"name\":{},\"namespace\":{},\"res\":{}}}",
                quoted(&key.group),
                quoted(&key.version),
                quoted(&key.kind),
                quoted(&key.name),
                quoted(&key.namespace),
                object.text
            )),
        }
    }
    let ready = objects.values().all(|object| object.ready == ReadyStatus::Ready);
    let mut text = format!("{{\"ready\":{ready},\"resourceCount\":{}", objects.len());
    for (_, _, field) in TYPED {
        text.push_str(&format!(",\"{field}\":["));
        text.push_str(&arrays.remove(field).unwrap_or_default().join(","));
        text.push(']');
        if text.len() > MAX_STATUS_BYTES {
            return None;
        }
    }
    text.push_str(",\"resourceStatuses\":[");
    text.push_str(&generic.join(","));
    text.push_str("]}");
    (text.len() <= MAX_STATUS_BYTES).then_some(text)
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
    let mut compact = json!({"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "status": slim});
    for field in [STATUS_REMOTE_FIELD, READY_CONDITION_FIELD] {
        if let Some(value) = pod.get(field) {
            compact[field] = value.clone();
        }
    }
    compact
}

/// `value` if its JSON fits [`MAX_STATUS_REMOTE_BYTES`], else its first bytes as a string ending in `…`.
fn bounded_remote(value: Json) -> Json {
    let text = value.to_string();
    if text.len() <= MAX_STATUS_REMOTE_BYTES {
        return value;
    }
    let mut end = MAX_STATUS_REMOTE_BYTES - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    json!(format!("{}…", &text[..end]))
}

/// The value an object rolls up under `config`, if any.
fn remote_value(config: &BundleStatusConfig, path: Option<&StatusPath>, object: &Json) -> Option<Json> {
    let value = if config.raw_status {
        object.get("status").cloned()
    } else {
        path?.values(object)
    };
    value.map(bounded_remote)
}

/// Builds the status of a bundle from its (already sanitized) objects, with no status configs.
#[must_use]
pub fn status<O: Borrow<Json>>(objects: &BTreeMap<ObjectKey, O>) -> Json {
    status_with(objects, &[])
}

/// Builds the status of a bundle from its (already sanitized) objects under the bundle's status configs.
#[must_use]
pub fn status_with<O: Borrow<Json>>(
    objects: &BTreeMap<ObjectKey, O>,
    configs: &[BundleStatusConfig],
) -> Json {
    // Each path is parsed once per build; one that does not parse (emco checks them at create) rolls up nothing.
    let paths: Vec<Option<StatusPath>> = configs
        .iter()
        .map(|config| {
            (!config.status_path.is_empty())
                .then(|| StatusPath::parse(&config.status_path).ok())
                .flatten()
        })
        .collect();
    let mut ready = true;
    let mut count = 0_usize;
    let mut arrays: BTreeMap<&str, Vec<Json>> =
        TYPED.iter().map(|(_, _, field)| (*field, Vec::new())).collect();
    let mut generic = Vec::new();
    for (key, object) in objects {
        let object: &Json = object.borrow();
        let config = configs
            .iter()
            .position(|config| config.is_for(&key.group, &key.kind));
        if config.is_some_and(|index| !configs[index].collect) {
            continue;
        }
        count += 1;
        let mut entry = object.clone();
        let mut extra = Map::new();
        let mut object_ready = readiness(&key.group, &key.kind, object);
        if let Some(index) = config {
            let config = &configs[index];
            if let Some(remote) = remote_value(config, paths[index].as_ref(), object) {
                extra.insert(STATUS_REMOTE_FIELD.into(), remote);
            }
            if !config.ready_condition.is_empty() {
                extra.insert(READY_CONDITION_FIELD.into(), json!(config.ready_condition));
                let hints = Hints::default().ready_condition(config.ready_condition.clone());
                object_ready = assess_with(object, &hints).health.ready_status();
            }
        }
        if object_ready != ReadyStatus::Ready {
            ready = false;
        }
        match typed_field(key) {
            Some(field) => {
                if let Some(map) = entry.as_object_mut() {
                    map.extend(extra);
                }
                arrays.entry(field).or_default().push(entry);
            }
            None => {
                let mut generic_entry = json!({"group": key.group, "version": key.version, "kind": key.kind, "name": key.name,
                                        "namespace": key.namespace, "res": entry});
                if let Some(map) = generic_entry.as_object_mut() {
                    map.extend(extra);
                }
                generic.push(generic_entry);
            }
        }
    }
    let mut status = Map::new();
    status.insert("ready".into(), json!(ready));
    status.insert("resourceCount".into(), json!(count));
    let disabled: Vec<Json> = configs
        .iter()
        .filter(|config| !config.collect)
        .map(|config| json!({"group": config.group, "kind": config.kind}))
        .collect();
    if !disabled.is_empty() {
        status.insert(COLLECTION_DISABLED_FIELD.into(), Json::Array(disabled));
    }
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

    fn config(group: &str, kind: &str, plural: &str) -> BundleStatusConfig {
        BundleStatusConfig {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            status_path: String::new(),
            ready_condition: String::new(),
            collect: true,
            raw_status: false,
        }
    }

    #[test]
    fn status_configs_roll_up_values_and_leave_out_disabled_kinds() {
        let mut objects = BTreeMap::new();
        objects.insert(
            key("apps", "Deployment", "web"),
            json!({"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "web"}, "spec": {"replicas": 2},
                   "status": {"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2, "availableReplicas": 2}}),
        );
        objects.insert(
            key("", "ConfigMap", "settings"),
            json!({"metadata": {"name": "settings"}}),
        );
        objects.insert(
            key("example.com", "Widget", "w"),
            json!({"kind": "Widget", "apiVersion": "example.com/v1", "metadata": {"name": "w"},
                   "status": {"phase": "Synced", "conditions": [{"type": "Synced", "status": "False"}]}}),
        );
        let deployments = BundleStatusConfig {
            status_path: ".status.readyReplicas".into(),
            ..config("apps", "Deployment", "deployments")
        };
        let widgets = BundleStatusConfig {
            raw_status: true,
            ready_condition: "Synced".into(),
            ..config("example.com", "Widget", "widgets")
        };
        let configmaps = BundleStatusConfig {
            collect: false,
            ..config("", "ConfigMap", "configmaps")
        };
        let status = status_with(&objects, &[deployments, widgets, configmaps]);
        assert_eq!(status["deploymentStatuses"][0]["statusRemote"], 2);
        assert_eq!(status["resourceStatuses"][0]["statusRemote"]["phase"], "Synced");
        assert_eq!(status["resourceStatuses"][0]["readyCondition"], "Synced");
        assert_eq!(
            status["configMapStatuses"],
            json!([]),
            "a disabled kind is not collected"
        );
        assert_eq!(
            status["statusCollectionDisabled"],
            json!([{"group": "", "kind": "ConfigMap"}])
        );
        assert_eq!(status["resourceCount"], 2);
        assert_eq!(
            status["ready"], false,
            "the widget's Synced condition is False: not ready by its readyCondition"
        );
        let plain = status_with(&objects, &[]);
        assert!(plain["deploymentStatuses"][0].get("statusRemote").is_none());
        assert!(plain.get("statusCollectionDisabled").is_none());
        assert_eq!(plain["resourceCount"], 3);
    }

    #[test]
    fn the_status_put_together_from_kept_texts_is_the_one_built_from_the_trees() {
        let objects: BTreeMap<ObjectKey, Json> = [
            (key("", "Pod", "p1"), json!({"kind": "Pod", "metadata": {"name": "p1"},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})),
            (key("", "Pod", "p2"), json!({"kind": "Pod", "metadata": {"name": "p2"}, "status": {"phase": "Pending"}})),
            (key("apps", "Deployment", "d"), json!({"kind": "Deployment", "metadata": {"name": "d", "generation": 1},
                "spec": {"replicas": 1}, "status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1,
                "updatedReplicas": 1, "availableReplicas": 1}})),
            (key("", "ConfigMap", "c \"quoted\""), json!({"kind": "ConfigMap", "metadata": {"name": "c \"quoted\""}, "data": {"k": "é\n"}})),
            (key("example.com", "Widget", "w"), json!({"kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1.5}})),
        ]
        .into_iter()
        .collect();
        let kept: BTreeMap<ObjectKey, std::sync::Arc<Reported>> = objects
            .iter()
            .map(|(key, object)| {
                (
                    key.clone(),
                    std::sync::Arc::new(Reported::new(&key.group, &key.kind, object)),
                )
            })
            .collect();
        let built = status_with(&objects, &[]);
        assert_eq!(built["ready"], false, "a pending pod keeps the bundle from Ready");
        assert_eq!(
            status_text(&kept, &[]),
            StatusText {
                text: built.to_string(),
                lists_disabled: false
            }
        );
        // Ready when every object is.
        let ready: BTreeMap<ObjectKey, std::sync::Arc<Reported>> = kept
            .iter()
            .filter(|(key, _)| key.name != "p2")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let ready_trees: BTreeMap<ObjectKey, Json> =
            objects.into_iter().filter(|(key, _)| key.name != "p2").collect();
        assert_eq!(
            status_text(&ready, &[]).text,
            status_with(&ready_trees, &[]).to_string()
        );
        assert_eq!(status_with(&ready_trees, &[])["ready"], true);
        // Under configs the trees decide, and disabled kinds are listed.
        let disabled = BundleStatusConfig {
            collect: false,
            ..config("", "ConfigMap", "configmaps")
        };
        let with_configs = status_text(&kept, std::slice::from_ref(&disabled));
        assert!(with_configs.lists_disabled);
        let parsed: Json = serde_json::from_str(&with_configs.text).unwrap();
        assert_eq!(parsed["configMapStatuses"], json!([]));
        assert_eq!(parsed["resourceCount"], 4);
    }

    #[test]
    fn a_huge_remote_value_is_cut() {
        let mut objects = BTreeMap::new();
        objects.insert(
            key("example.com", "Widget", "w"),
            json!({"metadata": {"name": "w"}, "status": {"blob": "x".repeat(3 * MAX_STATUS_REMOTE_BYTES)}}),
        );
        let raw = BundleStatusConfig {
            raw_status: true,
            ..config("example.com", "Widget", "widgets")
        };
        let status = status_with(&objects, &[raw]);
        let remote = status["resourceStatuses"][0]["statusRemote"].as_str().unwrap();
        assert!(remote.len() <= MAX_STATUS_REMOTE_BYTES && remote.ends_with('…'));
    }

    #[test]
    fn secrets_and_managed_fields_stay_home() {
        let secret = json!({"metadata": {"name": "s", "managedFields": [{}], "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "1"}},
                            "data": {"password": "c2VjcmV0"}, "type": "Opaque"});
        let clean = sanitize("", "Secret", secret);
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
