//! Workload controllers: ReplicaSet, Deployment (rolling updates with surge and unavailability budgets, revisions,
//! Available/Progressing conditions and progress deadlines), StatefulSet (ordered, stable names), DaemonSet (one
//! pod per eligible node) and Job (parallelism, completions, back-off limit).

use std::time::Duration;

use serde_json::{Map, Value as Json, json};

use super::pods::{fits, is_ready};
use super::{Effects, Timer, builtin, controlled_by, controller_ref, controller_write, key, record_warning};
use crate::catalog::{ResourceType, TypeKey};
use crate::cluster::ClusterShared;
use crate::error::ApiError;
use crate::meta;
use crate::store::Store;

const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// The reason of a refused pod create, in events and in a ReplicaSet's `ReplicaFailure` condition.
const FAILED_CREATE: &str = "FailedCreate";
/// The condition a ReplicaSet (and its Deployment) shows while its pods cannot be created.
const REPLICA_FAILURE: &str = "ReplicaFailure";

fn int(value: &Json, default: i64) -> i64 {
    value.as_i64().unwrap_or(default)
}

/// Resolves an int-or-percent against `total` (percentages round up for surge, down for unavailability).
fn int_or_percent(value: &Json, total: i64, round_up: bool, default_percent: i64) -> i64 {
    match value {
        Json::Number(n) => n.as_i64().unwrap_or(0),
        Json::String(s) => {
            let percent = s.trim_end_matches('%').parse::<i64>().unwrap_or(default_percent);
            if round_up {
                (total * percent + 99) / 100
            } else {
                total * percent / 100
            }
        }
        _ => {
            if round_up {
                (total * default_percent + 99) / 100
            } else {
                total * default_percent / 100
            }
        }
    }
}

fn owned_pods(store: &Store, namespace: &str, uid: &str) -> Vec<std::sync::Arc<Json>> {
    store
        .list(&TypeKey::new("", "pods"), Some(namespace))
        .into_iter()
        .filter(|pod| controlled_by(pod, uid))
        .collect()
}

fn pod_from_template(owner: &Json, name: &str, extra_labels: &Map<String, Json>) -> Json {
    let template = &owner["spec"]["template"];
    let mut labels = template["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    labels.extend(extra_labels.clone());
    let mut metadata = json!({"name": name, "namespace": meta::namespace(owner), "labels": labels, "ownerReferences": controller_ref(owner)});
    if let Some(annotations) = template["metadata"]["annotations"].as_object() {
        metadata["annotations"] = Json::Object(annotations.clone());
    }
    json!({"metadata": metadata, "spec": template["spec"].clone()})
}

/// Creates a pod; a refusal (a quota, a terminating namespace) is returned for the owner's status and events.
fn create_pod(store: &mut Store, pod: Json) -> Result<(), ApiError> {
    let pods = builtin(store, "", "pods");
    let namespace = meta::namespace(&pod).to_string();
    store
        .create(&pods, Some(&namespace), pod, &controller_write())
        .map(|_| ())
        .inspect_err(
            |err| tracing::debug!(error = %err.message, "simulated controller could not create a pod"),
        )
}

/// Records a refused pod create as `RealPodControl` does (a `FailedCreate` Warning, `Error creating: …`, except
/// for a namespace being terminated) and asks to try again once quota may have room.
fn failed_create(store: &mut Store, owner: &Json, component: &str, message: &str, effects: &mut Effects) {
    if !message.ends_with("because it is being terminated") {
        record_warning(store, owner, FAILED_CREATE, message, component);
    }
    let kind_key = match owner["kind"].as_str() {
        Some("ReplicaSet") => ("apps", "replicasets"),
        Some("StatefulSet") => ("apps", "statefulsets"),
        Some("DaemonSet") => ("apps", "daemonsets"),
        _ => ("batch", "jobs"),
    };
    effects.retry_when_quota_frees(key(
        kind_key.0,
        kind_key.1,
        meta::namespace(owner),
        meta::name(owner),
    ));
}

fn delete_pod(store: &mut Store, pod: &Json) {
    let pods = builtin(store, "", "pods");
    let _ = store.delete(
        &pods,
        meta::namespace(pod),
        meta::name(pod),
        &crate::store::DeleteOptions::default(),
    );
}

fn write_status(store: &mut Store, t: &std::sync::Arc<ResourceType>, object: &Json, status: Json) {
    let _ = store.write_status(t, meta::namespace(object), meta::name(object), status);
}

/// Keeps a ReplicaSet's pods at `spec.replicas`; while a create is refused, shows Kubernetes' `ReplicaFailure`
/// condition (reason `FailedCreate`, the refusal as message) and retries when quota may have room.
pub(crate) fn reconcile_replica_set(store: &mut Store, namespace: &str, name: &str, effects: &mut Effects) {
    let rs_type = builtin(store, "apps", "replicasets");
    let Some(rs) = store.get(&rs_type.key(), namespace, name) else {
        return;
    };
    if meta::is_deleting(&rs) {
        return;
    }
    let uid = meta::uid(&rs).to_string();
    let want = int(&rs["spec"]["replicas"], 1).max(0) as usize;
    let live: Vec<_> = owned_pods(store, namespace, &uid)
        .into_iter()
        .filter(|p| !meta::is_deleting(p))
        .collect();
    let mut failure = None;
    if live.len() < want {
        for _ in live.len()..want {
            let pod = pod_from_template(&rs, &format!("{name}-{}", meta::random_suffix(5)), &Map::new());
            if let Err(err) = create_pod(store, pod) {
                let message = format!("Error creating: {}", err.message);
                failed_create(store, &rs, "replicaset-controller", &message, effects);
                failure = Some(err.message);
                break;
            }
        }
    } else if live.len() > want {
        let mut surplus = live.clone();
        // Remove not-ready pods first, then the newest.
        surplus.sort_by_key(|p| {
            (
                is_ready(p),
                std::cmp::Reverse(
                    p["metadata"]["creationTimestamp"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                ),
            )
        });
        for pod in surplus.iter().take(live.len() - want) {
            delete_pod(store, pod);
        }
    }
    let live: Vec<_> = owned_pods(store, namespace, &uid)
        .into_iter()
        .filter(|p| !meta::is_deleting(p))
        .collect();
    let ready = live.iter().filter(|p| is_ready(p)).count();
    let mut conditions: Vec<Json> = rs["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let failing = conditions.iter().any(|c| c["type"] == REPLICA_FAILURE);
    match (failure, failing) {
        (Some(message), false) => conditions.push(json!({"type": REPLICA_FAILURE, "status": "True",
            "lastTransitionTime": meta::now(), "reason": FAILED_CREATE, "message": message})),
        (None, true) => conditions.retain(|c| c["type"] != REPLICA_FAILURE),
        _ => {}
    }
    let mut status = json!({"replicas": live.len(), "fullyLabeledReplicas": live.len(), "readyReplicas": ready, "availableReplicas": ready,
                        "observedGeneration": rs["metadata"]["generation"]});
    if !conditions.is_empty() {
        status["conditions"] = Json::Array(conditions);
    }
    write_status(store, &rs_type, &rs, status);
}

fn set_condition(
    conditions: &mut Vec<Json>,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    time: &str,
    progressed: bool,
) {
    let index = conditions.iter().position(|c| c["type"] == kind);
    let previous = index.map(|i| conditions[i].clone());
    let transition = previous
        .as_ref()
        .filter(|p| p["status"] == status)
        .and_then(|p| p["lastTransitionTime"].as_str())
        .map_or_else(|| time.to_string(), String::from);
    let same = previous
        .as_ref()
        .is_some_and(|p| p["status"] == status && p["reason"] == reason && p["message"] == message);
    let update = if same && !progressed {
        previous
            .as_ref()
            .and_then(|p| p["lastUpdateTime"].as_str())
            .unwrap_or(time)
            .to_string()
    } else {
        time.to_string()
    };
    let condition = json!({"type": kind, "status": status, "lastUpdateTime": update, "lastTransitionTime": transition, "reason": reason, "message": message});
    match index {
        Some(i) => conditions[i] = condition,
        None => conditions.push(condition),
    }
}

/// Rolls a Deployment's ReplicaSets toward its template.
pub(crate) fn reconcile_deployment(store: &mut Store, namespace: &str, name: &str, effects: &mut Effects) {
    let deployments = builtin(store, "apps", "deployments");
    let rs_type = builtin(store, "apps", "replicasets");
    let Some(deployment) = store.get(&deployments.key(), namespace, name) else {
        return;
    };
    if meta::is_deleting(&deployment) {
        return;
    }
    let uid = meta::uid(&deployment).to_string();
    let spec = &deployment["spec"];
    let replicas = int(&spec["replicas"], 1).max(0);
    let template = &spec["template"];
    let hash = meta::stable_hash(template, 10);
    let new_name = format!("{name}-{hash}");
    let strategy_type = spec["strategy"]["type"]
        .as_str()
        .unwrap_or("RollingUpdate")
        .to_string();
    let mut surge = int_or_percent(&spec["strategy"]["rollingUpdate"]["maxSurge"], replicas, true, 25);
    let mut unavailable = int_or_percent(
        &spec["strategy"]["rollingUpdate"]["maxUnavailable"],
        replicas,
        false,
        25,
    );
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    if strategy_type == "Recreate" {
        surge = 0;
    }
    let paused = spec["paused"].as_bool() == Some(true);
    let owned: Vec<_> = store
        .list(&rs_type.key(), Some(namespace))
        .into_iter()
        .filter(|rs| controlled_by(rs, &uid))
        .collect();
    let revision_of = |rs: &Json| {
        rs["metadata"]["annotations"][REVISION_ANNOTATION]
            .as_str()
            .and_then(|r| r.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let max_revision = owned.iter().map(|rs| revision_of(rs)).max().unwrap_or(0);
    let new_rs = owned.iter().find(|rs| meta::name(rs) == new_name).cloned();
    let olds: Vec<_> = owned
        .iter()
        .filter(|rs| meta::name(rs) != new_name)
        .cloned()
        .collect();
    let old_spec_total: i64 = olds.iter().map(|rs| int(&rs["spec"]["replicas"], 0)).sum();
    let old_status_total: i64 = olds.iter().map(|rs| int(&rs["status"]["replicas"], 0)).sum();
    let mut revision = new_rs.as_ref().map_or(max_revision + 1, |rs| revision_of(rs));

    if !paused {
        let new_target = |current: i64| -> i64 {
            if strategy_type == "Recreate" {
                if old_status_total > 0 || old_spec_total > 0 {
                    0
                } else {
                    replicas
                }
            } else if current > replicas {
                replicas
            } else {
                current
                    .max((replicas + surge - old_spec_total).min(replicas))
                    .max(0)
            }
        };
        match &new_rs {
            None => {
                let mut labels = template["metadata"]["labels"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                labels.insert("pod-template-hash".into(), json!(hash));
                let mut selector = spec["selector"]["matchLabels"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                selector.insert("pod-template-hash".into(), json!(hash));
                let mut rs_template = template.clone();
                rs_template["metadata"]["labels"] = Json::Object(labels.clone());
                revision = max_revision + 1;
                let rs = json!({
                    "metadata": {"name": new_name, "namespace": namespace, "labels": labels, "ownerReferences": controller_ref(&deployment),
                                 "annotations": {REVISION_ANNOTATION: revision.to_string(), "deployment.kubernetes.io/desired-replicas": replicas.to_string(),
                                                 "deployment.kubernetes.io/max-replicas": (replicas + surge).to_string()}},
                    "spec": {"replicas": new_target(0), "minReadySeconds": spec["minReadySeconds"].as_i64().unwrap_or(0),
                             "selector": {"matchLabels": selector}, "template": rs_template},
                });
                let _ = store.create(&rs_type, Some(namespace), rs, &controller_write());
            }
            Some(rs) => {
                let current = int(&rs["spec"]["replicas"], 0);
                let target = new_target(current);
                if target != current {
                    let mut next = (**rs).clone();
                    next["spec"]["replicas"] = json!(target);
                    let _ = store.write_object(&rs_type, next);
                }
            }
        }
        // Scale old ReplicaSets down within the unavailability budget (unavailable old pods go first).
        let new_available = new_rs
            .as_ref()
            .map_or(0, |rs| int(&rs["status"]["availableReplicas"], 0));
        let old_available: i64 = olds
            .iter()
            .map(|rs| int(&rs["status"]["availableReplicas"], 0))
            .sum();
        let mut budget = if strategy_type == "Recreate" {
            i64::MAX
        } else {
            (new_available + old_available) - (replicas - unavailable)
        };
        let mut olds_sorted = olds.clone();
        olds_sorted.sort_by_key(|rs| revision_of(rs));
        for rs in olds_sorted {
            let current = int(&rs["spec"]["replicas"], 0);
            if current == 0 {
                continue;
            }
            let unavailable_here = (current - int(&rs["status"]["availableReplicas"], 0)).max(0);
            let cut = (budget.max(0) + unavailable_here).min(current);
            if cut > 0 {
                budget -= (cut - unavailable_here).max(0);
                let mut next = (*rs).clone();
                next["spec"]["replicas"] = json!(current - cut);
                let _ = store.write_object(&rs_type, next);
            }
        }
    }

    // Status from the ReplicaSets as they are now.
    let owned: Vec<_> = store
        .list(&rs_type.key(), Some(namespace))
        .into_iter()
        .filter(|rs| controlled_by(rs, &uid))
        .collect();
    let sum = |field: &str| -> i64 { owned.iter().map(|rs| int(&rs["status"][field], 0)).sum() };
    let (total, ready, available) = (sum("replicas"), sum("readyReplicas"), sum("availableReplicas"));
    let new_rs = owned.iter().find(|rs| meta::name(rs) == new_name);
    let updated = new_rs.map_or(0, |rs| int(&rs["status"]["replicas"], 0));
    let updated_available = new_rs.map_or(0, |rs| int(&rs["status"]["availableReplicas"], 0));
    let old_remaining: i64 = owned
        .iter()
        .filter(|rs| meta::name(rs) != new_name)
        .map(|rs| int(&rs["spec"]["replicas"], 0) + int(&rs["status"]["replicas"], 0))
        .sum();
    let time = meta::now();
    let previous = &deployment["status"];
    let progressed = [
        ("replicas", total),
        ("updatedReplicas", updated),
        ("readyReplicas", ready),
        ("availableReplicas", available),
    ]
    .iter()
    .any(|(field, value)| int(&previous[*field], 0) != *value);
    let mut conditions: Vec<Json> = previous["conditions"].as_array().cloned().unwrap_or_default();
    if available >= replicas - unavailable {
        set_condition(
            &mut conditions,
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            &time,
            false,
        );
    } else {
        set_condition(
            &mut conditions,
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            &time,
            false,
        );
    }
    let complete =
        updated == replicas && total == updated && updated_available >= replicas && old_remaining == 0;
    let deadline = spec["progressDeadlineSeconds"].as_i64().unwrap_or(600);
    if paused {
        set_condition(
            &mut conditions,
            "Progressing",
            "Unknown",
            "DeploymentPaused",
            "Deployment is paused",
            &time,
            false,
        );
    } else if complete {
        set_condition(
            &mut conditions,
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            &format!("ReplicaSet \"{new_name}\" has successfully progressed."),
            &time,
            false,
        );
    } else {
        let last_progress = conditions
            .iter()
            .find(|c| c["type"] == "Progressing")
            .and_then(|c| c["lastUpdateTime"].as_str())
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        let stalled = !progressed
            && last_progress
                .is_some_and(|last| jiff::Timestamp::now().as_second() - last.as_second() >= deadline);
        let already_failed = conditions
            .iter()
            .any(|c| c["type"] == "Progressing" && c["reason"] == "ProgressDeadlineExceeded");
        if stalled || (already_failed && !progressed) {
            set_condition(
                &mut conditions,
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                &format!("ReplicaSet \"{new_name}\" has timed out progressing."),
                &time,
                false,
            );
        } else {
            set_condition(
                &mut conditions,
                "Progressing",
                "True",
                "ReplicaSetUpdated",
                &format!("ReplicaSet \"{new_name}\" is progressing."),
                &time,
                progressed,
            );
            effects.after(
                Duration::from_secs(u64::try_from(deadline.max(1)).unwrap_or(600))
                    + Duration::from_millis(100),
                Timer::Reconcile(key("apps", "deployments", namespace, name)),
            );
        }
    }
    // A ReplicaSet's failure to create pods shows on the Deployment (the new ReplicaSet's first), as
    // Kubernetes' `getReplicaFailures` does.
    let replica_failure = new_rs
        .into_iter()
        .chain(owned.iter())
        .find_map(|rs| {
            rs["status"]["conditions"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["type"] == REPLICA_FAILURE))
        })
        .map(|c| {
            json!({"type": REPLICA_FAILURE, "status": c["status"], "lastUpdateTime": c["lastTransitionTime"],
                "lastTransitionTime": c["lastTransitionTime"], "reason": c["reason"], "message": c["message"]})
        });
    conditions.retain(|c| c["type"] != REPLICA_FAILURE);
    conditions.extend(replica_failure);
    // Keep the conventional order: Available, Progressing, ReplicaFailure.
    conditions.sort_by_key(|c| match c["type"].as_str() {
        Some("Available") => 0,
        Some("Progressing") => 1,
        _ => 2,
    });
    let status = json!({"observedGeneration": deployment["metadata"]["generation"], "replicas": total, "updatedReplicas": updated,
        "readyReplicas": ready, "availableReplicas": available, "unavailableReplicas": (replicas - available).max(0), "conditions": conditions});
    let mut next = (*deployment).clone();
    next["metadata"]["annotations"][REVISION_ANNOTATION] = json!(revision.to_string());
    next["status"] = status;
    let _ = store.write_object(&deployments, next);
}

/// Ordered, stable-named pods for a StatefulSet; a refused create is a `FailedCreate` Warning and is retried when
/// quota may have room.
pub(crate) fn reconcile_stateful_set(store: &mut Store, namespace: &str, name: &str, effects: &mut Effects) {
    let sts_type = builtin(store, "apps", "statefulsets");
    let Some(sts) = store.get(&sts_type.key(), namespace, name) else {
        return;
    };
    if meta::is_deleting(&sts) {
        return;
    }
    let uid = meta::uid(&sts).to_string();
    let replicas = int(&sts["spec"]["replicas"], 1).max(0);
    let revision = format!("{name}-{}", meta::stable_hash(&sts["spec"]["template"], 10));
    let pods = owned_pods(store, namespace, &uid);
    let pod_at = |ordinal: i64| {
        pods.iter()
            .find(|p| meta::name(p) == format!("{name}-{ordinal}"))
            .cloned()
    };
    let all_ready = pods.iter().all(|p| is_ready(p) && !meta::is_deleting(p));
    // Create the first missing ordinal once its predecessor is Ready.
    for ordinal in 0..replicas {
        match pod_at(ordinal) {
            Some(pod) if meta::is_deleting(&pod) || !is_ready(&pod) => break,
            Some(_) => {}
            None => {
                let pod_name = format!("{name}-{ordinal}");
                let mut labels = Map::new();
                labels.insert("statefulset.kubernetes.io/pod-name".into(), json!(pod_name));
                labels.insert("apps.kubernetes.io/pod-index".into(), json!(ordinal.to_string()));
                labels.insert("controller-revision-hash".into(), json!(revision));
                let mut pod = pod_from_template(&sts, &pod_name, &labels);
                pod["spec"]["hostname"] = json!(pod_name);
                if let Some(service) = sts["spec"]["serviceName"].as_str() {
                    pod["spec"]["subdomain"] = json!(service);
                }
                if let Err(err) = create_pod(store, pod) {
                    let message = format!(
                        "create Pod {pod_name} in StatefulSet {name} failed error: {}",
                        err.message
                    );
                    failed_create(store, &sts, "statefulset-controller", &message, effects);
                }
                break;
            }
        }
    }
    // Scale down from the highest ordinal, one at a time.
    if let Some(extra) = pods
        .iter()
        .filter(|p| {
            meta::name(p)
                .rsplit('-')
                .next()
                .and_then(|i| i.parse::<i64>().ok())
                .is_some_and(|i| i >= replicas)
                && !meta::is_deleting(p)
        })
        .max_by_key(|p| {
            meta::name(p)
                .rsplit('-')
                .next()
                .and_then(|i| i.parse::<i64>().ok())
                .unwrap_or(0)
        })
    {
        delete_pod(store, extra);
    } else if all_ready {
        // Rolling update: replace the highest ordinal still on an old revision.
        if let Some(stale) = pods
            .iter()
            .filter(|p| p["metadata"]["labels"]["controller-revision-hash"].as_str() != Some(&revision))
            .max_by_key(|p| meta::name(p).to_string())
        {
            delete_pod(store, stale);
        }
    }
    let pods = owned_pods(store, namespace, &uid);
    let live: Vec<_> = pods.iter().filter(|p| !meta::is_deleting(p)).collect();
    let ready = live.iter().filter(|p| is_ready(p)).count();
    let updated = live
        .iter()
        .filter(|p| p["metadata"]["labels"]["controller-revision-hash"].as_str() == Some(&revision))
        .count();
    let current_revision = if updated == live.len() {
        revision.clone()
    } else {
        sts["status"]["currentRevision"]
            .as_str()
            .unwrap_or(&revision)
            .to_string()
    };
    let status = json!({"observedGeneration": sts["metadata"]["generation"], "replicas": live.len(), "readyReplicas": ready,
        "currentReplicas": updated, "updatedReplicas": updated, "availableReplicas": ready, "currentRevision": current_revision,
        "updateRevision": revision, "collisionCount": 0});
    write_status(store, &sts_type, &sts, status);
}

/// One pod per eligible node for a DaemonSet.
pub(crate) fn reconcile_daemon_set(
    store: &mut Store,
    _cluster: &ClusterShared,
    namespace: &str,
    name: &str,
    effects: &mut Effects,
) {
    let ds_type = builtin(store, "apps", "daemonsets");
    let Some(ds) = store.get(&ds_type.key(), namespace, name) else {
        return;
    };
    if meta::is_deleting(&ds) {
        return;
    }
    let uid = meta::uid(&ds).to_string();
    let hash = meta::stable_hash(&ds["spec"]["template"], 10);
    let mut template_pod = json!({"spec": ds["spec"]["template"]["spec"].clone()});
    let mut tolerations = template_pod["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        tolerations.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute"}));
    }
    template_pod["spec"]["tolerations"] = Json::Array(tolerations.clone());
    let nodes = store.list(&TypeKey::new("", "nodes"), None);
    let eligible: Vec<String> = nodes
        .iter()
        .filter(|n| fits(&template_pod, n))
        .map(|n| meta::name(n).to_string())
        .collect();
    let pods = owned_pods(store, namespace, &uid);
    let node_of = |pod: &Json| -> Option<String> {
        pod["spec"]["nodeName"].as_str().map(String::from).or_else(|| {
            pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
                .as_str()
                .map(String::from)
        })
    };
    let all_ready = pods.iter().all(|p| is_ready(p));
    let mut replaced_one = false;
    for node in &eligible {
        let on_node: Vec<_> = pods
            .iter()
            .filter(|p| node_of(p).as_deref() == Some(node.as_str()))
            .collect();
        if on_node.is_empty() {
            let mut labels = Map::new();
            labels.insert("controller-revision-hash".into(), json!(hash));
            labels.insert(
                "pod-template-generation".into(),
                json!(ds["metadata"]["generation"].as_i64().unwrap_or(1).to_string()),
            );
            let mut pod = pod_from_template(&ds, &format!("{name}-{}", meta::random_suffix(5)), &labels);
            pod["spec"]["tolerations"] = Json::Array(tolerations.clone());
            pod["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}});
            if let Err(err) = create_pod(store, pod) {
                let message = format!("Error creating: {}", err.message);
                failed_create(store, &ds, "daemonset-controller", &message, effects);
                break;
            }
        } else if !replaced_one
            && all_ready
            && let Some(stale) = on_node.iter().find(|p| {
                p["metadata"]["labels"]["controller-revision-hash"].as_str() != Some(&hash)
                    && !meta::is_deleting(p)
            })
        {
            delete_pod(store, stale);
            replaced_one = true;
        }
    }
    for pod in pods
        .iter()
        .filter(|p| node_of(p).is_some_and(|n| !eligible.contains(&n)))
    {
        delete_pod(store, pod);
    }
    let pods = owned_pods(store, namespace, &uid);
    let scheduled: Vec<_> = pods
        .iter()
        .filter(|p| !meta::is_deleting(p) && node_of(p).is_some_and(|n| eligible.contains(&n)))
        .collect();
    let ready = scheduled.iter().filter(|p| is_ready(p)).count();
    let updated = scheduled
        .iter()
        .filter(|p| p["metadata"]["labels"]["controller-revision-hash"].as_str() == Some(&hash))
        .count();
    let status = json!({"desiredNumberScheduled": eligible.len(), "currentNumberScheduled": scheduled.len(), "numberReady": ready,
        "numberAvailable": ready, "numberUnavailable": eligible.len().saturating_sub(ready), "updatedNumberScheduled": updated,
        "numberMisscheduled": 0, "observedGeneration": ds["metadata"]["generation"]});
    write_status(store, &ds_type, &ds, status);
}

/// Runs a Job's pods to completion; a refused create is a `FailedCreate` Warning and is retried when quota may
/// have room.
pub(crate) fn reconcile_job(store: &mut Store, namespace: &str, name: &str, effects: &mut Effects) {
    let jobs = builtin(store, "batch", "jobs");
    let Some(job) = store.get(&jobs.key(), namespace, name) else {
        return;
    };
    if meta::is_deleting(&job) {
        return;
    }
    let uid = meta::uid(&job).to_string();
    let spec = &job["spec"];
    let completions = int(&spec["completions"], 1);
    let parallelism = int(&spec["parallelism"], 1);
    let backoff_limit = int(&spec["backoffLimit"], 6);
    let mut status = job["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    let finished = status["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
    });
    let time = meta::now();
    let pods = owned_pods(store, namespace, &uid);
    let phase = |p: &Json| p["status"]["phase"].as_str().unwrap_or("Pending").to_string();
    let succeeded = pods.iter().filter(|p| phase(p) == "Succeeded").count() as i64;
    let failed = pods.iter().filter(|p| phase(p) == "Failed").count() as i64;
    let active: Vec<_> = pods
        .iter()
        .filter(|p| !meta::is_deleting(p) && !matches!(phase(p).as_str(), "Succeeded" | "Failed"))
        .cloned()
        .collect();
    if status["startTime"].is_null() {
        status["startTime"] = json!(time);
    }
    let condition = |kind: &str, reason: &str, message: &str| json!({"type": kind, "status": "True", "lastProbeTime": time, "lastTransitionTime": time, "reason": reason, "message": message});
    if !finished {
        if failed > backoff_limit {
            for pod in &active {
                delete_pod(store, pod);
            }
            status["conditions"] = json!([
                condition(
                    "FailureTarget",
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit"
                ),
                condition(
                    "Failed",
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit"
                )
            ]);
        } else if succeeded >= completions {
            status["conditions"] = json!([
                condition(
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods"
                ),
                condition(
                    "Complete",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods"
                )
            ]);
            status["completionTime"] = json!(time);
        } else {
            let wanted = (parallelism - active.len() as i64)
                .min(completions - succeeded - active.len() as i64)
                .max(0);
            for _ in 0..wanted {
                let pod = pod_from_template(&job, &format!("{name}-{}", meta::random_suffix(5)), &Map::new());
                if let Err(err) = create_pod(store, pod) {
                    let message = format!("Error creating: {}", err.message);
                    failed_create(store, &job, "job-controller", &message, effects);
                    break;
                }
            }
        }
    }
    let pods = owned_pods(store, namespace, &uid);
    let active_now = pods
        .iter()
        .filter(|p| !meta::is_deleting(p) && !matches!(phase(p).as_str(), "Succeeded" | "Failed"))
        .count();
    let ready_now = pods.iter().filter(|p| is_ready(p)).count();
    status["active"] = json!(active_now);
    status["ready"] = json!(ready_now);
    status["succeeded"] = json!(succeeded);
    status["failed"] = json!(failed);
    status["terminating"] = json!(0);
    status["uncountedTerminatedPods"] = json!({});
    if let Some(map) = status.as_object_mut() {
        for zero in ["active", "succeeded", "failed"] {
            if map.get(zero) == Some(&json!(0)) {
                map.remove(zero);
            }
        }
    }
    write_status(store, &jobs, &job, status);
}
