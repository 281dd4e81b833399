//! Nodes, the scheduler and the kubelet: pods go Pending → scheduled → ContainerCreating → Running and Ready; a
//! run-to-completion pod (`restartPolicy` `Never` or `OnFailure`: a bare pod, a Job's, a Helm hook) then runs for
//! the cluster's run time (or its `kubesim.io/run-ms` annotation) and ends `Succeeded`, its containers terminated
//! with exit code 0 (`Completed`); deleted pods stop after a short grace. Failures are opted into per pod
//! (annotation `kubesim.io/fail`), by pod name (the cluster's `failPods` fault: the run ends `Failed`, exit code 1,
//! `Error`) or by image name: `ImagePullBackOff` (images containing `doesnotexist`), `CrashLoopBackOff` (images
//! containing `crashloop`), `Unschedulable`, `NeverReady`, `Error` (the container exits 1).

use std::time::Duration;

use serde_json::{Value as Json, json};

use super::{Effects, Timer, builtin};
use crate::catalog::TypeKey;
use crate::cluster::{ClusterShared, Timing};
use crate::meta;
use crate::store::Store;

/// The annotation that opts a pod into a failure.
pub const FAIL_ANNOTATION: &str = "kubesim.io/fail";
/// The annotation that overrides how long a pod takes to become ready (milliseconds).
pub const READY_AFTER_ANNOTATION: &str = "kubesim.io/ready-after-ms";
/// The annotation that overrides how long a run-to-completion pod runs before it completes (milliseconds).
pub const RUN_FOR_ANNOTATION: &str = "kubesim.io/run-ms";
/// The longest crash-loop back-off.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Kubelet stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// Containers are being created.
    Creating,
    /// Containers run (and are ready, unless a failure says otherwise).
    Running,
    /// A run-to-completion pod finishes.
    Complete,
    /// A crashing container restarts (the restart count so far).
    Restart(u32),
    /// A deleted pod's containers have stopped.
    Stopped,
}

/// A simulated node.
#[must_use]
pub(crate) fn node_object(name: &str, index: usize, version: crate::KubernetesVersion) -> Json {
    let git_version = version.git_version();
    let time = meta::now();
    let condition = |kind: &str, status: &str, reason: &str, message: &str| json!({"type": kind, "status": status, "reason": reason, "message": message, "lastHeartbeatTime": time, "lastTransitionTime": time});
    json!({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kubesim"}},
        "spec": {"podCIDR": format!("10.244.{index}.0/24")},
        "status": {
            "capacity": {"cpu": "32", "memory": "256Gi", "pods": "1000"},
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "1000"},
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": format!("10.0.0.{}", index + 11)}, {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": git_version, "containerRuntimeVersion": "kubesim://1.0", "operatingSystem": "linux", "architecture": "amd64",
                          "kernelVersion": "6.0.0", "osImage": "kubesim", "kubeProxyVersion": git_version, "machineID": "", "systemUUID": "", "bootID": ""},
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        },
    })
}

/// The failure a pod is opted into: its own (annotation, image), else the cluster's `failPods` fault for a
/// run-to-completion pod whose name starts with one of its prefixes.
fn failure(pod: &Json, cluster: &ClusterShared) -> Option<String> {
    own_failure(pod).or_else(|| {
        let name = meta::name(pod);
        (runs_to_completion(pod)
            && cluster
                .faults()
                .fail_pods
                .iter()
                .any(|prefix| !prefix.is_empty() && name.starts_with(prefix.as_str())))
        .then(|| "Error".to_string())
    })
}

/// The failure a pod opts into itself: its `kubesim.io/fail` annotation, or its image's name.
fn own_failure(pod: &Json) -> Option<String> {
    if let Some(mode) = pod["metadata"]["annotations"][FAIL_ANNOTATION].as_str() {
        return Some(mode.to_string());
    }
    let images = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["image"].as_str());
    for image in images {
        if image.contains("doesnotexist") {
            return Some("ImagePullBackOff".into());
        }
        if image.contains("crashloop") {
            return Some("CrashLoopBackOff".into());
        }
    }
    None
}

/// A pod whose containers are not restarted when they exit: it runs once and ends `Succeeded` or `Failed` (an
/// `OnFailure` pod that fails is not restarted in place here; it ends `Failed` as a `Never` one does).
fn runs_to_completion(pod: &Json) -> bool {
    matches!(pod["spec"]["restartPolicy"].as_str(), Some("Never" | "OnFailure"))
}

fn run_for(pod: &Json, timing: &Timing) -> Duration {
    pod["metadata"]["annotations"][RUN_FOR_ANNOTATION]
        .as_str()
        .and_then(|v| v.parse().ok())
        .map_or(Timing::ms(timing.job_run_ms), Timing::ms)
}

fn ready_after(pod: &Json, timing: &Timing) -> Duration {
    pod["metadata"]["annotations"][READY_AFTER_ANNOTATION]
        .as_str()
        .and_then(|v| v.parse().ok())
        .map_or(Timing::ms(timing.ready_ms), Timing::ms)
}

fn condition(kind: &str, status: bool, reason: Option<&str>, time: &str) -> Json {
    let mut c = json!({"type": kind, "status": if status { "True" } else { "False" }, "lastProbeTime": null, "lastTransitionTime": time});
    if let Some(reason) = reason {
        c["reason"] = json!(reason);
    }
    c
}

fn node_index(store: &Store, node: &str) -> usize {
    store
        .list(&TypeKey::new("", "nodes"), None)
        .iter()
        .position(|n| meta::name(n) == node)
        .unwrap_or(0)
}

fn host_ip(index: usize) -> String {
    format!("10.0.0.{}", index + 11)
}

fn pod_ip(pod: &Json, index: usize) -> String {
    let hash = meta::uid(pod)
        .bytes()
        .fold(0u32, |acc, b| acc.wrapping_mul(31).wrapping_add(u32::from(b)));
    format!("10.244.{index}.{}", 2 + hash % 250)
}

/// Whether a node satisfies a pod's node selector, required node affinity and taints.
pub(crate) fn fits(pod: &Json, node: &Json) -> bool {
    let labels = node["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(selector) = pod["spec"]["nodeSelector"].as_object()
        && !selector.iter().all(|(k, v)| labels.get(k) == Some(v))
    {
        return false;
    }
    let terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"].as_array();
    if let Some(terms) = terms {
        let term_matches = |term: &Json| {
            let expressions = term["matchExpressions"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|e| {
                    let actual = labels
                        .get(e["key"].as_str().unwrap_or_default())
                        .and_then(Json::as_str);
                    let values: Vec<&str> = e["values"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Json::as_str)
                        .collect();
                    match e["operator"].as_str() {
                        Some("In") => actual.is_some_and(|a| values.contains(&a)),
                        Some("NotIn") => actual.is_none_or(|a| !values.contains(&a)),
                        Some("Exists") => actual.is_some(),
                        Some("DoesNotExist") => actual.is_none(),
                        _ => false,
                    }
                });
            let fields = term["matchFields"].as_array().into_iter().flatten().all(|f| {
                let values: Vec<&str> = f["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .collect();
                f["key"] == "metadata.name" && f["operator"] == "In" && values.contains(&meta::name(node))
            });
            expressions && fields
        };
        if !terms.iter().any(term_matches) {
            return false;
        }
    }
    let tolerations = pod["spec"]["tolerations"].as_array().cloned().unwrap_or_default();
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|taint| {
            if !matches!(taint["effect"].as_str(), Some("NoSchedule" | "NoExecute")) {
                return true;
            }
            tolerations.iter().any(|t| {
                let key_ok = t["key"].is_null() || t["key"] == taint["key"];
                let value_ok = t["operator"] == "Exists" || t["value"] == taint["value"];
                key_ok && value_ok
            })
        })
}

/// Schedules, starts and stops a pod.
pub(crate) fn reconcile_pod(
    store: &mut Store,
    cluster: &ClusterShared,
    namespace: &str,
    name: &str,
    effects: &mut Effects,
) {
    let pods = builtin(store, "", "pods");
    let Some(pod) = store.get(&pods.key(), namespace, name) else {
        return;
    };
    let uid = meta::uid(&pod).to_string();
    let stage = |stage: Stage| Timer::PodStage {
        namespace: namespace.to_string(),
        name: name.to_string(),
        uid: uid.clone(),
        stage,
    };
    if meta::is_deleting(&pod) {
        let stopped = pod["status"]["containerStatuses"]
            .as_array()
            .is_some_and(|s| s.iter().all(|c| c["state"]["terminated"].is_object()));
        let finalizers_empty = pod["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty);
        if pod["spec"]["nodeName"].is_null() || (stopped && finalizers_empty) {
            if finalizers_empty {
                store.remove_now(&pods, namespace, name);
            }
        } else if !stopped {
            effects.after(
                Timing::ms(cluster.config.timing.terminate_ms),
                stage(Stage::Stopped),
            );
        }
        return;
    }
    if pod["spec"]["nodeName"].is_null() {
        schedule(store, &pod, effects, &stage(Stage::Creating), cluster);
        return;
    }
    // A scheduled pod the kubelet has not started yet.
    if pod["status"]["containerStatuses"].is_null()
        && pod["status"]["phase"] == "Pending"
        && pod["status"]["hostIP"].is_null()
    {
        effects.after(
            Timing::ms(cluster.config.timing.create_ms),
            stage(Stage::Creating),
        );
    }
}

fn schedule(store: &mut Store, pod: &Json, effects: &mut Effects, creating: &Timer, cluster: &ClusterShared) {
    let pods = builtin(store, "", "pods");
    let nodes = store.list(&TypeKey::new("", "nodes"), None);
    let forced = failure(pod, cluster).as_deref() == Some("Unschedulable");
    let chosen = if forced {
        None
    } else {
        // Spread pods: the fitting node with the fewest pods.
        let all_pods = store.list(&pods.key(), None);
        nodes
            .iter()
            .filter(|node| fits(pod, node))
            .min_by_key(|node| {
                all_pods
                    .iter()
                    .filter(|p| p["spec"]["nodeName"].as_str() == Some(meta::name(node)))
                    .count()
            })
            .cloned()
    };
    let time = meta::now();
    match chosen {
        Some(node) => {
            let mut next = pod.clone();
            next["spec"]["nodeName"] = json!(meta::name(&node));
            next["status"] = json!({"phase": "Pending", "qosClass": crate::quota::qos_class(pod), "conditions": [condition("PodScheduled", true, None, &time)]});
            let _ = store.write_object(&pods, next);
            effects.after(Timing::ms(cluster.config.timing.create_ms), creating.clone());
        }
        None => {
            let count = nodes.len();
            let mut unscheduled = condition("PodScheduled", false, Some("Unschedulable"), &time);
            unscheduled["message"] = json!(format!(
                "0/{count} nodes are available: {count} node(s) didn't match Pod's node affinity/selector."
            ));
            let status = json!({"phase": "Pending", "qosClass": crate::quota::qos_class(pod), "conditions": [unscheduled]});
            if pod["status"]["conditions"][0]["reason"] != "Unschedulable" {
                let _ = store.write_status(&pods, meta::namespace(pod), meta::name(pod), status);
            }
        }
    }
}

/// Retries every unscheduled pod (nodes changed).
pub(crate) fn reschedule_pending(store: &mut Store, cluster: &ClusterShared, effects: &mut Effects) {
    let pods = builtin(store, "", "pods");
    for pod in store.list(&pods.key(), None) {
        if pod["spec"]["nodeName"].is_null() && !meta::is_deleting(&pod) {
            reconcile_pod(store, cluster, meta::namespace(&pod), meta::name(&pod), effects);
        }
    }
}

fn container_statuses(pod: &Json, state: impl Fn(&Json) -> (Json, bool, u32, Option<Json>)) -> Json {
    let statuses: Vec<Json> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|container| {
            let image = container["image"].as_str().unwrap_or_default();
            let (state, ready, restarts, last) = state(container);
            let mut status = json!({"name": container["name"], "image": image, "imageID": format!("kubesim://{image}"),
                "containerID": format!("kubesim://{}", meta::stable_hash(&json!([meta::uid(pod), container["name"]]), 16)),
                "ready": ready, "started": state.get("running").is_some(), "restartCount": restarts, "state": state});
            if let Some(last) = last {
                status["lastState"] = last;
            }
            status
        })
        .collect();
    Json::Array(statuses)
}

/// Moves a pod to its next stage.
pub(crate) fn advance(
    store: &mut Store,
    cluster: &ClusterShared,
    namespace: &str,
    name: &str,
    uid: &str,
    stage: Stage,
    effects: &mut Effects,
) {
    let pods = builtin(store, "", "pods");
    let Some(pod) = store.get(&pods.key(), namespace, name) else {
        return;
    };
    if meta::uid(&pod) != uid {
        return;
    }
    let timing = &cluster.config.timing;
    let node = pod["spec"]["nodeName"].as_str().unwrap_or_default().to_string();
    let index = node_index(store, &node);
    let time = meta::now();
    let next_stage = |stage: Stage| Timer::PodStage {
        namespace: namespace.to_string(),
        name: name.to_string(),
        uid: uid.to_string(),
        stage,
    };
    let mode = failure(&pod, cluster);
    let start_time = pod["status"]["startTime"]
        .as_str()
        .map_or_else(|| time.clone(), String::from);
    let qos_class = crate::quota::qos_class(&pod);
    let base = |phase: &str, ready: bool, reason: Option<&str>| {
        json!({"phase": phase, "qosClass": qos_class, "startTime": start_time, "hostIP": host_ip(index), "hostIPs": [{"ip": host_ip(index)}],
        "conditions": [
            condition("PodReadyToStartContainers", true, None, &time),
            condition("Initialized", true, None, &time),
            condition("Ready", ready, reason, &time),
            condition("ContainersReady", ready, reason, &time),
            condition("PodScheduled", true, None, &time),
        ]})
    };
    if meta::is_deleting(&pod) && stage != Stage::Stopped {
        return;
    }
    match stage {
        Stage::Creating => {
            let mut status = base("Pending", false, Some("ContainersNotReady"));
            if mode.as_deref() == Some("ImagePullBackOff") {
                status["containerStatuses"] = container_statuses(&pod, |c| {
                    let image = c["image"].as_str().unwrap_or_default();
                    (
                        json!({"waiting": {"reason": "ImagePullBackOff", "message": format!("Back-off pulling image \"{image}\"")}}),
                        false,
                        0,
                        None,
                    )
                });
                let _ = store.write_status(&pods, namespace, name, status);
                return;
            }
            status["containerStatuses"] = container_statuses(&pod, |_| {
                (
                    json!({"waiting": {"reason": "ContainerCreating"}}),
                    false,
                    0,
                    None,
                )
            });
            let _ = store.write_status(&pods, namespace, name, status);
            effects.after(ready_after(&pod, timing), next_stage(Stage::Running));
        }
        Stage::Running | Stage::Restart(_) => {
            let restarts = if let Stage::Restart(n) = stage { n } else { 0 };
            let (ready, reason) = match mode.as_deref() {
                Some("CrashLoopBackOff" | "NeverReady") => (false, Some("ContainersNotReady")),
                _ => (true, None),
            };
            let mut status = base("Running", ready, reason);
            status["podIP"] = json!(pod_ip(&pod, index));
            status["podIPs"] = json!([{"ip": pod_ip(&pod, index)}]);
            match mode.as_deref() {
                Some("CrashLoopBackOff") => {
                    let backoff = Duration::from_secs(10u64 << restarts.min(5)).min(MAX_BACKOFF);
                    status["containerStatuses"] = container_statuses(&pod, |c| {
                        let message = format!(
                            "back-off {}s restarting failed container={} pod={name}",
                            backoff.as_secs(),
                            c["name"].as_str().unwrap_or_default()
                        );
                        (
                            json!({"waiting": {"reason": "CrashLoopBackOff", "message": message}}),
                            false,
                            restarts + 1,
                            Some(
                                json!({"terminated": {"exitCode": 1, "reason": "Error", "startedAt": time, "finishedAt": time}}),
                            ),
                        )
                    });
                    let _ = store.write_status(&pods, namespace, name, status);
                    // Restarts come faster than the kubelet's real back-off, scaled by the cluster's ready time.
                    let warped =
                        Duration::from_millis(timing.ready_ms.max(50) << restarts.min(5)).min(MAX_BACKOFF);
                    effects.after(warped, next_stage(Stage::Restart(restarts + 1)));
                }
                _ => {
                    status["containerStatuses"] = container_statuses(&pod, |_| {
                        (json!({"running": {"startedAt": time}}), ready, 0, None)
                    });
                    let _ = store.write_status(&pods, namespace, name, status);
                    if runs_to_completion(&pod) {
                        effects.after(run_for(&pod, timing), next_stage(Stage::Complete));
                    }
                }
            }
        }
        Stage::Complete => {
            // The run ends: exit code 1 (`Error`) for a pod chosen to fail, else 0 (`Completed`).
            let (phase, exit_code, reason, ready_reason) = if mode.as_deref() == Some("Error") {
                ("Failed", 1, "Error", "PodFailed")
            } else {
                ("Succeeded", 0, "Completed", "PodCompleted")
            };
            let mut status = base(phase, false, Some(ready_reason));
            status["podIP"] = json!(pod_ip(&pod, index));
            status["containerStatuses"] = container_statuses(&pod, |_| {
                (
                    json!({"terminated": {"exitCode": exit_code, "reason": reason, "startedAt": start_time, "finishedAt": time}}),
                    false,
                    0,
                    None,
                )
            });
            let _ = store.write_status(&pods, namespace, name, status);
        }
        Stage::Stopped => {
            let finalizers_empty = pod["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty);
            if finalizers_empty {
                store.remove_now(&pods, namespace, name);
            } else {
                let mut status = pod["status"].clone();
                status["containerStatuses"] = container_statuses(&pod, |_| {
                    (
                        json!({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": start_time, "finishedAt": time}}),
                        false,
                        0,
                        None,
                    )
                });
                let _ = store.write_status(&pods, namespace, name, status);
            }
        }
    }
}

/// Whether a pod is Ready.
#[must_use]
pub(crate) fn is_ready(pod: &Json) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_fit_by_selector_affinity_and_taints() {
        let node = json!({"metadata": {"name": "n1", "labels": {"zone": "a"}}, "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}});
        let tolerating = json!({"spec": {"tolerations": [{"key": "dedicated", "operator": "Exists"}]}});
        assert!(fits(&tolerating, &node));
        assert!(
            !fits(&json!({"spec": {}}), &node),
            "an untolerated taint keeps pods away"
        );
        let selecting =
            json!({"spec": {"nodeSelector": {"zone": "b"}, "tolerations": [{"operator": "Exists"}]}});
        assert!(!fits(&selecting, &node));
        let pinned = json!({"spec": {"tolerations": [{"operator": "Exists"}], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}}});
        assert!(fits(&pinned, &node));
    }

    #[test]
    fn failures_come_from_annotations_or_images() {
        assert_eq!(
            own_failure(&json!({"spec": {"containers": [{"image": "x/doesnotexist:1"}]}})).as_deref(),
            Some("ImagePullBackOff")
        );
        assert_eq!(
            own_failure(&json!({"metadata": {"annotations": {FAIL_ANNOTATION: "NeverReady"}}})).as_deref(),
            Some("NeverReady")
        );
        assert_eq!(
            own_failure(&json!({"spec": {"containers": [{"image": "nginx"}]}})),
            None
        );
    }
}
