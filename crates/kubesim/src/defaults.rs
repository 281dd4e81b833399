//! Defaulting of built-in kinds, as the API server does on every write (kubectl and controllers read these).

use serde_json::{Map, Value as Json, json};

fn set_default(map: &mut Map<String, Json>, key: &str, value: Json) {
    if map.get(key).is_none_or(Json::is_null) {
        map.insert(key.to_string(), value);
    }
}

fn object_at<'a>(value: &'a mut Json, path: &[&str]) -> Option<&'a mut Map<String, Json>> {
    let mut node = value;
    for key in path {
        let map = node.as_object_mut()?;
        node = map
            .entry((*key).to_string())
            .or_insert_with(|| Json::Object(Map::new()));
    }
    node.as_object_mut()
}

/// A pod's container that limits a resource without requesting it requests its limit (as `SetDefaults_Pod` does;
/// templates are left alone).
fn default_requests_to_limits(container: &mut Map<String, Json>) {
    let Some(Json::Object(resources)) = container.get_mut("resources") else {
        return;
    };
    let Some(Json::Object(limits)) = resources.get("limits").cloned() else {
        return;
    };
    if limits.is_empty() {
        return;
    }
    if !resources.get("requests").is_some_and(Json::is_object) {
        resources.insert("requests".into(), json!({}));
    }
    if let Some(Json::Object(requests)) = resources.get_mut("requests") {
        for (resource, limit) in limits {
            requests.entry(resource).or_insert(limit);
        }
    }
}

fn default_pod_spec(spec: &mut Map<String, Json>) {
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "serviceAccountName", json!("default"));
    set_default(spec, "enableServiceLinks", json!(true));
    set_default(spec, "securityContext", json!({}));
    for list in ["containers", "initContainers"] {
        if let Some(Json::Array(containers)) = spec.get_mut(list) {
            for container in containers.iter_mut().filter_map(Json::as_object_mut) {
                let image = container
                    .get("image")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string();
                let tag = image
                    .rsplit('/')
                    .next()
                    .and_then(|last| last.split_once(':'))
                    .map(|(_, tag)| tag.to_string());
                let policy = if tag.as_deref().is_none_or(|t| t == "latest") {
                    "Always"
                } else {
                    "IfNotPresent"
                };
                set_default(container, "imagePullPolicy", json!(policy));
                set_default(container, "terminationMessagePath", json!("/dev/termination-log"));
                set_default(container, "terminationMessagePolicy", json!("File"));
                set_default(container, "resources", json!({}));
                if let Some(Json::Array(ports)) = container.get_mut("ports") {
                    for port in ports.iter_mut().filter_map(Json::as_object_mut) {
                        set_default(port, "protocol", json!("TCP"));
                    }
                }
            }
        }
    }
}

/// Fills the defaults of a built-in kind in place.
pub fn apply(group: &str, kind: &str, object: &mut Json) {
    match (group, kind) {
        ("", "Pod") => {
            if let Some(spec) = object_at(object, &["spec"]) {
                default_pod_spec(spec);
                for list in ["containers", "initContainers"] {
                    if let Some(Json::Array(containers)) = spec.get_mut(list) {
                        for container in containers.iter_mut().filter_map(Json::as_object_mut) {
                            default_requests_to_limits(container);
                        }
                    }
                }
            }
        }
        ("apps", "Deployment") => {
            if let Some(spec) = object_at(object, &["spec"]) {
                set_default(spec, "replicas", json!(1));
                set_default(spec, "revisionHistoryLimit", json!(10));
                set_default(spec, "progressDeadlineSeconds", json!(600));
                set_default(
                    spec,
                    "strategy",
                    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}),
                );
            }
            if let Some(spec) = object_at(object, &["spec", "template", "spec"]) {
                default_pod_spec(spec);
            }
        }
        ("apps", "ReplicaSet") => {
            if let Some(spec) = object_at(object, &["spec"]) {
                set_default(spec, "replicas", json!(1));
            }
            if let Some(spec) = object_at(object, &["spec", "template", "spec"]) {
                default_pod_spec(spec);
            }
        }
        ("apps", "StatefulSet") => {
            if let Some(spec) = object_at(object, &["spec"]) {
                set_default(spec, "replicas", json!(1));
                set_default(spec, "podManagementPolicy", json!("OrderedReady"));
                set_default(
                    spec,
                    "updateStrategy",
                    json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
                );
                set_default(spec, "revisionHistoryLimit", json!(10));
            }
            if let Some(spec) = object_at(object, &["spec", "template", "spec"]) {
                default_pod_spec(spec);
            }
        }
        ("apps", "DaemonSet") => {
            if let Some(spec) = object_at(object, &["spec"]) {
                set_default(
                    spec,
                    "updateStrategy",
                    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
                );
                set_default(spec, "revisionHistoryLimit", json!(10));
            }
            if let Some(spec) = object_at(object, &["spec", "template", "spec"]) {
                default_pod_spec(spec);
            }
        }
        ("batch", "Job") => {
            if let Some(spec) = object_at(object, &["spec"]) {
                set_default(spec, "completions", json!(1));
                set_default(spec, "parallelism", json!(1));
                set_default(spec, "backoffLimit", json!(6));
                set_default(spec, "completionMode", json!("NonIndexed"));
            }
            if let Some(spec) = object_at(object, &["spec", "template", "spec"]) {
                default_pod_spec(spec);
            }
        }
        ("", "Service") => {
            if let Some(spec) = object_at(object, &["spec"]) {
                set_default(spec, "type", json!("ClusterIP"));
                set_default(spec, "sessionAffinity", json!("None"));
                set_default(spec, "ipFamilies", json!(["IPv4"]));
                set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
                set_default(spec, "internalTrafficPolicy", json!("Cluster"));
                if let Some(Json::Array(ports)) = spec.get_mut("ports") {
                    for port in ports.iter_mut().filter_map(Json::as_object_mut) {
                        set_default(port, "protocol", json!("TCP"));
                        if let Some(number) = port.get("port").cloned() {
                            set_default(port, "targetPort", number);
                        }
                    }
                }
            }
        }
        ("", "Secret") => {
            if let Some(secret) = object.as_object_mut() {
                set_default(secret, "type", json!("Opaque"));
                merge_string_data(secret);
            }
        }
        _ => {}
    }
}

/// A Secret's `stringData` written into its `data`, base64-encoded (a key in both takes `stringData`'s value), and
/// `stringData` dropped: the API server stores and answers `data` only. A value that is not a string is left out.
fn merge_string_data(secret: &mut Map<String, Json>) {
    use base64::Engine as _;
    let Some(Json::Object(string_data)) = secret.remove("stringData") else {
        return;
    };
    let Some(data) = secret
        .entry("data")
        .or_insert_with(|| Json::Object(Map::new()))
        .as_object_mut()
    else {
        return;
    };
    for (key, value) in string_data {
        if let Json::String(text) = value {
            data.insert(key, json!(base64::engine::general_purpose::STANDARD.encode(text)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secrets_string_data_is_stored_as_data() {
        let mut secret = json!({"data": {"kept": "YQ==", "token": "b2xk"}, "stringData": {"token": "new", "cluster": "c1"}});
        apply("", "Secret", &mut secret);
        assert_eq!(
            secret,
            json!({"type": "Opaque", "data": {"kept": "YQ==", "token": "bmV3", "cluster": "YzE="}})
        );
        let mut typed = json!({"type": "kubernetes.io/tls", "stringData": {"tls.crt": ""}});
        apply("", "Secret", &mut typed);
        assert_eq!(
            typed,
            json!({"type": "kubernetes.io/tls", "data": {"tls.crt": ""}})
        );
    }

    #[test]
    fn workloads_get_the_defaults_clients_rely_on() {
        let mut deployment = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx:1.27"}]}}}});
        apply("apps", "Deployment", &mut deployment);
        assert_eq!(deployment["spec"]["replicas"], 1);
        assert_eq!(deployment["spec"]["strategy"]["type"], "RollingUpdate");
        let containers = &deployment["spec"]["template"]["spec"]["containers"];
        assert_eq!(
            (
                containers[0]["imagePullPolicy"].as_str(),
                containers[1]["imagePullPolicy"].as_str()
            ),
            (Some("Always"), Some("IfNotPresent"))
        );
        let mut sts = json!({"spec": {"replicas": 3}});
        apply("apps", "StatefulSet", &mut sts);
        assert_eq!(
            (
                sts["spec"]["replicas"].as_i64(),
                sts["spec"]["updateStrategy"]["type"].as_str()
            ),
            (Some(3), Some("RollingUpdate"))
        );
        let mut service = json!({"spec": {"ports": [{"port": 80}]}});
        apply("", "Service", &mut service);
        assert_eq!(
            service["spec"]["ports"][0],
            json!({"port": 80, "protocol": "TCP", "targetPort": 80})
        );
    }
}
