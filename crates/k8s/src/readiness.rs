//! Whether a cluster object works, by EMCO's per-kind rules (`reference/emco.md` §1.6, Helm-derived): Pods by
//! their Ready condition (Job pods by completion, a pod that ran to completion as Ready), Services by having an address, workloads by ready replicas,
//! Jobs by completions; ConfigMaps and other kinds count as Ready when present. [`assess`] is the finer,
//! kstatus-grade verdict (Ready / InProgress / Failed / Terminating / Unknown with a message) for every kind.

use emco_model::ReadyStatus;
use serde_json::Value as Json;

mod assess;

pub use assess::{
    Assessment, Health, Hints, MAX_BUNDLE_OBJECTS, MAX_FIELD_CHARS, MAX_LIST_ENTRIES, MAX_MESSAGE_CHARS,
    assess, assess_with,
};

/// The kinds EMCO's monitor always tracks: absent ones are NotPresent; other kinds absent are not counted.
pub const TRACKED_KINDS: &[(&str, &str)] = &[
    ("", "ConfigMap"),
    ("", "Service"),
    ("", "Pod"),
    ("apps", "Deployment"),
    ("apps", "DaemonSet"),
    ("apps", "StatefulSet"),
    ("batch", "Job"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
];

/// Whether the monitor always tracks this kind.
#[must_use]
pub fn is_tracked(group: &str, kind: &str) -> bool {
    TRACKED_KINDS.iter().any(|(g, k)| *g == group && *k == kind)
}

fn int(value: &Json) -> Option<i64> {
    value.as_i64()
}

fn ready(flag: bool) -> ReadyStatus {
    if flag {
        ReadyStatus::Ready
    } else {
        ReadyStatus::NotReady
    }
}

/// `percent`% of `replicas`, rounded down; saturating, as the counts come from the cluster.
fn percent_of(replicas: i64, percent: i64) -> i64 {
    let share = i128::from(replicas) * i128::from(percent) / 100;
    i64::try_from(share).unwrap_or(if share < 0 { i64::MIN } else { i64::MAX })
}

/// `maxUnavailable` of a rolling update: an integer or a percentage of `replicas` (rounded down), default 25%.
fn max_unavailable(strategy: &Json, replicas: i64) -> i64 {
    match &strategy["rollingUpdate"]["maxUnavailable"] {
        Json::Number(number) => number.as_i64().unwrap_or(0),
        Json::String(text) => text
            .strip_suffix('%')
            .and_then(|percent| percent.parse::<i64>().ok())
            .map_or(0, |percent| percent_of(replicas, percent)),
        _ => percent_of(replicas, 25),
    }
}

/// The readiness of one object reported by the cluster.
#[must_use]
pub fn readiness(group: &str, kind: &str, object: &Json) -> ReadyStatus {
    let spec = &object["spec"];
    let status = &object["status"];
    match (group, kind) {
        ("", "Pod") => {
            if object["metadata"]["labels"]["job-name"].is_string() {
                return ready(matches!(status["phase"].as_str(), Some("Succeeded" | "Failed")));
            }
            // A run-to-completion pod (a bare `restartPolicy: Never` one, a hook) that completed has done its work.
            if status["phase"] == "Succeeded" {
                return ReadyStatus::Ready;
            }
            let conditions = status["conditions"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            ready(
                conditions
                    .iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True"),
            )
        }
        ("", "Service") => {
            let service_type = spec["type"].as_str().unwrap_or("ClusterIP");
            if service_type == "ExternalName" {
                return ReadyStatus::Ready;
            }
            let has_cluster_ip = spec["clusterIP"].as_str().is_some_and(|ip| !ip.is_empty());
            let load_balanced = service_type != "LoadBalancer"
                || spec["externalIPs"].as_array().is_some_and(|ips| !ips.is_empty())
                || status["loadBalancer"]["ingress"]
                    .as_array()
                    .is_some_and(|ingress| !ingress.is_empty());
            ready(has_cluster_ip && load_balanced)
        }
        ("apps", "Deployment") => {
            if spec["paused"].as_bool() == Some(true) {
                return ReadyStatus::Ready;
            }
            let replicas = int(&spec["replicas"]).unwrap_or(1);
            let ready_replicas = int(&status["readyReplicas"]).unwrap_or(0);
            ready(ready_replicas >= replicas.saturating_sub(max_unavailable(&spec["strategy"], replicas)))
        }
        ("apps", "DaemonSet") => {
            if spec["updateStrategy"]["type"]
                .as_str()
                .is_some_and(|t| t != "RollingUpdate")
            {
                return ReadyStatus::Ready;
            }
            let desired = int(&status["desiredNumberScheduled"]).unwrap_or(0);
            let updated = int(&status["updatedNumberScheduled"]).unwrap_or(0);
            let number_ready = int(&status["numberReady"]).unwrap_or(0);
            ready(
                updated == desired
                    && number_ready
                        >= desired.saturating_sub(max_unavailable(&spec["updateStrategy"], desired)),
            )
        }
        ("apps", "StatefulSet") => {
            if spec["updateStrategy"]["type"]
                .as_str()
                .is_some_and(|t| t != "RollingUpdate")
            {
                return ReadyStatus::Ready;
            }
            let replicas = int(&spec["replicas"]).unwrap_or(1);
            let partition = int(&spec["updateStrategy"]["rollingUpdate"]["partition"]).unwrap_or(0);
            let updated = int(&status["updatedReplicas"]).unwrap_or(0);
            let ready_replicas = int(&status["readyReplicas"]).unwrap_or(0);
            ready(updated == replicas.saturating_sub(partition) && ready_replicas == replicas)
        }
        ("batch", "Job") => {
            let backoff_limit = int(&spec["backoffLimit"]).unwrap_or(6);
            let completions = int(&spec["completions"]).unwrap_or(1);
            let failed = int(&status["failed"]).unwrap_or(0);
            let succeeded = int(&status["succeeded"]).unwrap_or(0);
            ready(failed <= backoff_limit && succeeded >= completions)
        }
        _ => generic(object),
    }
}

/// kstatus-style readiness for kinds without their own rule: terminating, an unobserved generation, or a
/// `Reconciling`/`Stalled` condition mean not ready; a `Ready` condition decides; otherwise present is ready.
#[must_use]
pub fn generic(object: &Json) -> ReadyStatus {
    if object["metadata"]["deletionTimestamp"].is_string() {
        return ReadyStatus::NotReady;
    }
    if let (Some(generation), Some(observed)) = (
        object["metadata"]["generation"].as_i64(),
        object["status"]["observedGeneration"].as_i64(),
    ) && observed < generation
    {
        return ReadyStatus::NotReady;
    }
    let conditions = object["status"]["conditions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let is = |kind: &str, status: &str| {
        conditions
            .iter()
            .any(|c| c["type"] == kind && c["status"] == status)
    };
    if is("Reconciling", "True") || is("Stalled", "True") || is("Ready", "False") {
        return ReadyStatus::NotReady;
    }
    ReadyStatus::Ready
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn kinds_follow_emco_rules() {
        let ready_pod = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(readiness("", "Pod", &ready_pod), ReadyStatus::Ready);
        let crashing =
            json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}});
        assert_eq!(readiness("", "Pod", &crashing), ReadyStatus::NotReady);
        let job_pod = json!({"metadata": {"labels": {"job-name": "j"}}, "status": {"phase": "Succeeded"}});
        assert_eq!(readiness("", "Pod", &job_pod), ReadyStatus::Ready);
        let completed_hook = json!({"spec": {"restartPolicy": "Never"}, "status": {"phase": "Succeeded",
            "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted"}]}});
        assert_eq!(readiness("", "Pod", &completed_hook), ReadyStatus::Ready);
        let failed_hook = json!({"spec": {"restartPolicy": "Never"}, "status": {"phase": "Failed"}});
        assert_eq!(readiness("", "Pod", &failed_hook), ReadyStatus::NotReady);

        let deployment = |ready_replicas: i64| json!({"spec": {"replicas": 4}, "status": {"readyReplicas": ready_replicas}});
        assert_eq!(
            readiness("apps", "Deployment", &deployment(3)),
            ReadyStatus::Ready,
            "25% may be unavailable"
        );
        assert_eq!(
            readiness("apps", "Deployment", &deployment(2)),
            ReadyStatus::NotReady
        );
        let strict = json!({"spec": {"replicas": 3, "strategy": {"rollingUpdate": {"maxUnavailable": 0}}}, "status": {"readyReplicas": 2}});
        assert_eq!(readiness("apps", "Deployment", &strict), ReadyStatus::NotReady);

        assert_eq!(
            readiness("", "Service", &json!({"spec": {"clusterIP": "10.0.0.1"}})),
            ReadyStatus::Ready
        );
        assert_eq!(
            readiness(
                "",
                "Service",
                &json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1"}})
            ),
            ReadyStatus::NotReady
        );
        assert_eq!(
            readiness(
                "batch",
                "Job",
                &json!({"spec": {"completions": 2}, "status": {"succeeded": 1}})
            ),
            ReadyStatus::NotReady
        );
        assert_eq!(readiness("", "ConfigMap", &json!({})), ReadyStatus::Ready);
        assert!(is_tracked("apps", "Deployment") && !is_tracked("rbac.authorization.k8s.io", "Role"));
        let widget = |conditions: serde_json::Value| json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "conditions": conditions}});
        assert_eq!(
            readiness("example.com", "Widget", &widget(json!([]))),
            ReadyStatus::Ready
        );
        assert_eq!(
            readiness(
                "example.com",
                "Widget",
                &widget(json!([{"type": "Ready", "status": "False"}]))
            ),
            ReadyStatus::NotReady
        );
        assert_eq!(
            readiness(
                "example.com",
                "Widget",
                &widget(json!([{"type": "Stalled", "status": "True"}]))
            ),
            ReadyStatus::NotReady
        );
        let behind = json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 2}});
        assert_eq!(readiness("example.com", "Widget", &behind), ReadyStatus::NotReady);
    }

    /// Found by the `assess` proptest: counts near `i64::MAX` overflowed the 25% default (a panic in debug builds).
    #[test]
    fn extreme_counts_do_not_overflow() {
        let huge = json!({"spec": {"replicas": i64::MAX, "strategy": {"rollingUpdate": {"maxUnavailable": "50%"}}},
                          "status": {"readyReplicas": i64::MIN}});
        assert_eq!(readiness("apps", "Deployment", &huge), ReadyStatus::NotReady);
        let default_share =
            json!({"spec": {"replicas": i64::MAX}, "status": {"readyReplicas": i64::MAX - 1}});
        assert_eq!(
            readiness("apps", "Deployment", &default_share),
            ReadyStatus::Ready
        );
        let daemons = json!({"status": {"desiredNumberScheduled": i64::MIN, "updatedNumberScheduled": i64::MIN,
                                        "numberReady": 0}});
        assert_eq!(readiness("apps", "DaemonSet", &daemons), ReadyStatus::Ready);
        let partitioned = json!({"spec": {"replicas": i64::MIN, "updateStrategy": {"rollingUpdate": {"partition": i64::MAX}}}});
        assert_eq!(
            readiness("apps", "StatefulSet", &partitioned),
            ReadyStatus::NotReady
        );
        let half = json!({"spec": {"replicas": 4, "strategy": {"rollingUpdate": {"maxUnavailable": "50%"}}},
                          "status": {"readyReplicas": 2}});
        assert_eq!(readiness("apps", "Deployment", &half), ReadyStatus::Ready);
    }
}
