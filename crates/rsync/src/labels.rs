//! The tracking label on every object rsync applies, and on every pod template inside it, so that the pods a
//! workload creates are tracked too.

use emco_k8s::DEPLOYMENT_ID_LABEL;
use serde_json::{Map, Value as Json};

fn label(metadata: &mut Json, value: &str) {
    if !metadata.is_object() {
        *metadata = Json::Object(Map::new());
    }
    let labels = &mut metadata["labels"];
    if !labels.is_object() {
        *labels = Json::Object(Map::new());
    }
    labels[DEPLOYMENT_ID_LABEL] = Json::String(value.to_string());
}

/// `manifest` carrying `emco/deployment-id: <value>` on the object and its pod templates, and the
/// namespace `namespace` when it is namespaced and names none.
#[must_use]
pub fn prepare(manifest: Json, value: &str, namespace: Option<&str>) -> Json {
    let mut object = manifest;
    label(&mut object["metadata"], value);
    if let Some(ns) = namespace
        && object["metadata"]["namespace"].as_str().is_none_or(str::is_empty)
    {
        object["metadata"]["namespace"] = Json::String(ns.to_string());
    }
    // Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs: spec.template; CronJobs: spec.jobTemplate.
    if object["spec"]["template"].is_object() {
        label(&mut object["spec"]["template"]["metadata"], value);
    }
    if object["spec"]["jobTemplate"]["spec"]["template"].is_object() {
        label(
            &mut object["spec"]["jobTemplate"]["spec"]["template"]["metadata"],
            value,
        );
    }
    object
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn labels_objects_and_pod_templates() {
        let deployment =
            json!({"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": {"spec": {}}}});
        let prepared = prepare(deployment, "42-web", Some("default"));
        assert_eq!(prepared["metadata"]["labels"][DEPLOYMENT_ID_LABEL], "42-web");
        assert_eq!(
            prepared["spec"]["template"]["metadata"]["labels"][DEPLOYMENT_ID_LABEL],
            "42-web"
        );
        assert_eq!(prepared["metadata"]["namespace"], "default");
        let cron = json!({"metadata": {"name": "c", "namespace": "ops"}, "spec": {"jobTemplate": {"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}}});
        let prepared = prepare(cron, "42-c", Some("default"));
        assert_eq!(
            prepared["metadata"]["namespace"], "ops",
            "an explicit namespace stays"
        );
        assert_eq!(
            prepared["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"],
            json!({"a": "b", DEPLOYMENT_ID_LABEL: "42-c"})
        );
    }
}
