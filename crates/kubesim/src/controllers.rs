//! The simulated control plane of a cluster: namespaces, nodes, the scheduler, a kubelet, the workload controllers
//! (ReplicaSet, Deployment, StatefulSet, DaemonSet, Job), Services and garbage collection.
//!
//! One task per cluster follows the store's changes and a timer queue; each change marks the objects it concerns
//! for reconciliation, and each reconcile reads and writes the store under its lock, through the same write paths
//! as the API (so watches see controller writes like any other). Writes that change nothing emit nothing, so the
//! loop settles.

mod gc;
mod pods;

pub use pods::{FAIL_ANNOTATION, READY_AFTER_ANNOTATION, RUN_FOR_ANNOTATION};
mod workloads;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value as Json, json};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::catalog::{ResourceType, TypeKey};
use crate::cluster::ClusterShared;
use crate::meta;
use crate::store::{Change, ChangeKind, Store, Stored, WriteOptions};

/// The most reconciles one batch runs before the loop yields (keeps one busy cluster from starving others).
const BATCH_LIMIT: usize = 4096;

/// An object to reconcile: its type, namespace and name.
pub(crate) type Key = (TypeKey, String, String);

/// Work scheduled for later.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Timer {
    /// Reconcile an object again.
    Reconcile(Key),
    /// Move a pod to its next kubelet stage (checked against the pod's uid).
    PodStage {
        namespace: String,
        name: String,
        uid: String,
        stage: pods::Stage,
    },
}

/// What a reconcile asks of the loop.
#[derive(Default)]
pub(crate) struct Effects {
    /// Timers to set.
    pub(crate) timers: Vec<(Duration, Timer)>,
    /// Workloads a quota refused a pod: reconciled again when their namespace's quota usage is next recounted
    /// (something there was created, removed or finished, or a quota changed).
    pub(crate) blocked: Vec<Key>,
    /// Namespaces whose quota usage was recounted.
    pub(crate) recounted: Vec<String>,
}

impl Effects {
    pub(crate) fn after(&mut self, delay: Duration, timer: Timer) {
        self.timers.push((delay, timer));
    }

    /// Asks to reconcile `key` again once quota may have room.
    pub(crate) fn retry_when_quota_frees(&mut self, key: Key) {
        self.blocked.push(key);
    }
}

/// The most workloads per namespace kept waiting for quota (more are retried only when they change).
const BLOCKED_LIMIT: usize = 10_000;

/// Records a Warning Event about `owner` as its controller `component` does, or counts it again when the same
/// reason was already recorded.
pub(crate) fn record_warning(store: &mut Store, owner: &Json, reason: &str, message: &str, component: &str) {
    let events = builtin(store, "", "events");
    let namespace = meta::namespace(owner).to_string();
    let seed = json!([meta::uid(owner), reason]);
    let name = format!("{}.{}", meta::name(owner), meta::stable_hash(&seed, 16));
    let time = meta::now();
    if let Some(existing) = store.get(&events.key(), &namespace, &name) {
        let mut next = (*existing).clone();
        next["count"] = json!(existing["count"].as_i64().unwrap_or(1).saturating_add(1));
        next["lastTimestamp"] = json!(time);
        next["message"] = json!(message);
        let _ = store.write_object(&events, next);
        return;
    }
    let event = json!({
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {"kind": owner["kind"], "namespace": namespace, "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "apiVersion": owner["apiVersion"], "resourceVersion": owner["metadata"]["resourceVersion"]},
        "reason": reason, "message": message, "source": {"component": component},
        "firstTimestamp": time, "lastTimestamp": time, "count": 1, "type": "Warning",
        "eventTime": null, "reportingComponent": component, "reportingInstance": "",
    });
    let _ = store.create(&events, Some(&namespace), event, &controller_write());
}

pub(crate) fn key(group: &str, plural: &str, namespace: &str, name: &str) -> Key {
    (
        TypeKey::new(group, plural),
        namespace.to_string(),
        name.to_string(),
    )
}

/// The type of a built-in resource (always served).
pub(crate) fn builtin(store: &Store, group: &str, plural: &str) -> Arc<ResourceType> {
    store
        .catalog
        .find_any_version(&TypeKey::new(group, plural))
        .expect("built-in types are always served")
}

/// The options controllers write with.
pub(crate) fn controller_write() -> WriteOptions {
    WriteOptions::default()
}

/// The type key of an owner reference's kind.
fn owner_type(kind: &str) -> Option<TypeKey> {
    match kind {
        "ReplicaSet" => Some(TypeKey::new("apps", "replicasets")),
        "Deployment" => Some(TypeKey::new("apps", "deployments")),
        "StatefulSet" => Some(TypeKey::new("apps", "statefulsets")),
        "DaemonSet" => Some(TypeKey::new("apps", "daemonsets")),
        "Job" => Some(TypeKey::new("batch", "jobs")),
        _ => None,
    }
}

/// The controller owner reference `{apiVersion, kind, name, uid, controller, blockOwnerDeletion}` of `owner`.
pub(crate) fn controller_ref(owner: &Json) -> Json {
    json!([{"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}])
}

/// Whether `object` is controlled by the object with `uid`.
pub(crate) fn controlled_by(object: &Json, uid: &str) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r["uid"].as_str() == Some(uid) && r["controller"].as_bool() == Some(true))
        })
}

/// Creates the namespaces every cluster has and its nodes.
pub fn bootstrap(cluster: &Arc<ClusterShared>) {
    let mut store = cluster.store();
    let namespaces = builtin(&store, "", "namespaces");
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let _ = store.create(
            &namespaces,
            None,
            json!({"metadata": {"name": name}}),
            &controller_write(),
        );
    }
    let nodes = builtin(&store, "", "nodes");
    for index in 0..cluster.config.nodes.max(1) {
        let name = if cluster.config.nodes <= 1 {
            format!("{}-node", cluster.name)
        } else {
            format!("{}-node-{index}", cluster.name)
        };
        let mut node = pods::node_object(&name, index, cluster.config.kubernetes_version);
        for (key, value) in &cluster.config.node_labels {
            node["metadata"]["labels"][key] = serde_json::Value::from(value.as_str());
        }
        for (resource, quantity) in &cluster.config.node_capacity {
            for field in ["capacity", "allocatable"] {
                node["status"][field][resource] = serde_json::Value::from(quantity.as_str());
            }
        }
        if let Ok(created) = store.create(
            &nodes,
            None,
            node.clone(),
            &WriteOptions {
                keep_status: true,
                ..controller_write()
            },
        ) {
            let _ = store.write_status(&nodes, "", meta::name(&created), node["status"].clone());
        }
    }
    // The API server's bootstrap role: everything, bound to system:masters (which bypasses RBAC anyway).
    let cluster_roles = builtin(&store, "rbac.authorization.k8s.io", "clusterroles");
    let _ = store.create(
        &cluster_roles,
        None,
        json!({"metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, {"nonResourceURLs": ["*"], "verbs": ["*"]}]}),
        &controller_write(),
    );
    let cluster_role_bindings = builtin(&store, "rbac.authorization.k8s.io", "clusterrolebindings");
    let _ = store.create(
        &cluster_role_bindings,
        None,
        json!({"metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}]}),
        &controller_write(),
    );
    // Every authenticated user may ask what it may do (`kubectl auth can-i`), as Kubernetes' system:basic-user.
    let _ = store.create(
        &cluster_roles,
        None,
        json!({"metadata": {"name": "system:basic-user", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
            "rules": [{"apiGroups": [crate::catalog::REVIEW_GROUP], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
                      {"apiGroups": [crate::catalog::WHOAMI_GROUP], "resources": ["selfsubjectreviews"], "verbs": ["create"]}]}),
        &controller_write(),
    );
    let _ = store.create(
        &cluster_role_bindings,
        None,
        json!({"metadata": {"name": "system:basic-user", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:basic-user"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": crate::auth::AUTHENTICATED_GROUP}]}),
        &controller_write(),
    );
}

/// The keys a change asks to reconcile.
fn keys_for(change: &Change, out: &mut BTreeSet<Key>) {
    let object = change.object.part();
    let namespace = meta::namespace(object).to_string();
    let name = meta::name(object).to_string();
    let group = change.key.group.as_str();
    let plural = change.key.plural.as_str();
    match (group, plural) {
        ("", "pods")
        | ("apps", "replicasets" | "deployments" | "statefulsets" | "daemonsets")
        | ("batch", "jobs")
        | ("", "services") => {
            out.insert((change.key.clone(), namespace.clone(), name.clone()));
        }
        ("", "namespaces") => {
            out.insert((change.key.clone(), String::new(), name.clone()));
        }
        ("", "nodes") => {
            out.insert(key("", "nodes", "", "*"));
        }
        _ => {}
    }
    // Owners hear about their dependents.
    for owner in object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let (Some(kind), Some(owner_name)) = (owner["kind"].as_str(), owner["name"].as_str())
            && let Some(owner_key) = owner_type(kind)
        {
            out.insert((owner_key, namespace.clone(), owner_name.to_string()));
        }
        if change.kind == ChangeKind::Deleted {
            out.insert((
                TypeKey::new("*owner*", owner["uid"].as_str().unwrap_or_default()),
                namespace.clone(),
                String::new(),
            ));
        }
    }
    // Quotas count objects as they come and go, release a pod's compute when it finishes or is being deleted,
    // and show their limits when they change.
    let pod_lifecycle_changed = change.key.group.is_empty()
        && change.key.plural == "pods"
        && change.previous.as_ref().is_some_and(|previous| {
            previous["status"]["phase"] != object["status"]["phase"]
                || meta::is_deleting(previous) != meta::is_deleting(object)
        });
    if !namespace.is_empty()
        && (change.kind != ChangeKind::Modified
            || change.key == crate::quota::quota_key()
            || pod_lifecycle_changed)
    {
        out.insert((TypeKey::new("*quota*", ""), namespace.clone(), String::new()));
    }
    // A namespace being emptied waits for its objects.
    if !namespace.is_empty() && change.kind == ChangeKind::Deleted {
        out.insert(key("", "namespaces", "", &namespace));
    }
    if change.kind == ChangeKind::Deleted {
        out.insert((
            TypeKey::new("*dependents*", meta::uid(object)),
            String::new(),
            String::new(),
        ));
    } else if meta::is_deleting(object) {
        out.insert((
            TypeKey::new("*finalize*", &change.key.group),
            format!("{}/{}", change.key.plural, namespace),
            name,
        ));
    }
}

fn reconcile(store: &mut Store, cluster: &ClusterShared, key: &Key, effects: &mut Effects) {
    let (type_key, namespace, name) = key;
    match (type_key.group.as_str(), type_key.plural.as_str()) {
        ("", "pods") => pods::reconcile_pod(store, cluster, namespace, name, effects),
        ("", "nodes") => {
            pods::reschedule_pending(store, cluster, effects);
            for ds in store.list(&TypeKey::new("apps", "daemonsets"), None) {
                workloads::reconcile_daemon_set(
                    store,
                    cluster,
                    meta::namespace(&ds),
                    meta::name(&ds),
                    effects,
                );
            }
        }
        ("apps", "replicasets") => workloads::reconcile_replica_set(store, namespace, name, effects),
        ("apps", "deployments") => workloads::reconcile_deployment(store, namespace, name, effects),
        ("apps", "statefulsets") => workloads::reconcile_stateful_set(store, namespace, name, effects),
        ("apps", "daemonsets") => workloads::reconcile_daemon_set(store, cluster, namespace, name, effects),
        ("batch", "jobs") => workloads::reconcile_job(store, namespace, name, effects),
        ("", "services") => gc::reconcile_service(store, cluster, namespace, name, effects),
        ("", "namespaces") => gc::reconcile_namespace(store, name),
        ("*quota*", _) => {
            crate::quota::reconcile_namespace(store, namespace);
            effects.recounted.push(namespace.clone());
        }
        ("*dependents*", uid) => gc::collect_dependents(store, uid),
        ("*owner*", uid) => gc::recheck_owner(store, uid),
        ("*finalize*", group) => {
            if let Some((plural, ns)) = namespace.split_once('/') {
                gc::finalize(store, &TypeKey::new(group, plural), ns, name);
            }
        }
        _ => {}
    }
}

type TimerQueue = BinaryHeap<Reverse<(Instant, u64, Timer)>>;

impl Effects {
    /// Sets the timers, and moves workloads waiting for quota in a recounted namespace back to work.
    fn apply(
        self,
        timers: &mut TimerQueue,
        sequence: &mut u64,
        blocked: &mut BTreeMap<String, BTreeSet<Key>>,
        dirty: &mut BTreeSet<Key>,
    ) {
        for (delay, timer) in self.timers {
            *sequence += 1;
            timers.push(Reverse((Instant::now() + delay, *sequence, timer)));
        }
        for namespace in self.recounted {
            if let Some(waiting) = blocked.remove(&namespace) {
                dirty.extend(waiting);
            }
        }
        for key in self.blocked {
            let waiting = blocked.entry(key.1.clone()).or_default();
            if waiting.len() < BLOCKED_LIMIT {
                waiting.insert(key);
            }
        }
    }
}

/// Runs the controllers of a cluster until the task is aborted.
pub async fn run(cluster: Arc<ClusterShared>) {
    let mut changes = cluster.store().subscribe();
    let mut timers: TimerQueue = BinaryHeap::new();
    let mut sequence = 0u64;
    let mut dirty: BTreeSet<Key> = BTreeSet::new();
    let mut blocked: BTreeMap<String, BTreeSet<Key>> = BTreeMap::new();
    // Start from the state the store has (bootstrap objects, or anything created before the loop subscribed).
    dirty.insert(key("", "nodes", "", "*"));
    loop {
        if !dirty.is_empty() {
            let mut effects = Effects::default();
            {
                let mut store = cluster.store();
                let batch: Vec<Key> = dirty.iter().take(BATCH_LIMIT).cloned().collect();
                for key in &batch {
                    dirty.remove(key);
                    reconcile(&mut store, &cluster, key, &mut effects);
                }
            }
            effects.apply(&mut timers, &mut sequence, &mut blocked, &mut dirty);
            // Let the changes these writes made come back through the subscription.
            tokio::task::yield_now().await;
        }
        let next = timers.peek().map(|Reverse((at, _, _))| *at);
        tokio::select! {
            received = changes.recv() => match received {
                Ok(change) => keys_for(&change, &mut dirty),
                Err(broadcast::error::RecvError::Lagged(_)) => resync(&cluster, &mut dirty),
                Err(broadcast::error::RecvError::Closed) => return,
            },
            () = tokio::time::sleep_until(next.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600))), if next.is_some() => {
                let now = Instant::now();
                let mut effects = Effects::default();
                {
                    let mut store = cluster.store();
                    while let Some(Reverse((at, _, _))) = timers.peek() {
                        if *at > now {
                            break;
                        }
                        let Some(Reverse((_, _, timer))) = timers.pop() else { break };
                        match timer {
                            Timer::Reconcile(key) => reconcile(&mut store, &cluster, &key, &mut effects),
                            Timer::PodStage { namespace, name, uid, stage } => pods::advance(&mut store, &cluster, &namespace, &name, &uid, stage, &mut effects),
                        }
                    }
                }
                effects.apply(&mut timers, &mut sequence, &mut blocked, &mut dirty);
            }
        }
        // Drain what else is already waiting, so a burst becomes one batch. A lag here (the broadcast overflowed
        // while the controllers worked) loses changes just as in `recv`: resync from the store then too.
        loop {
            match changes.try_recv() {
                Ok(change) => keys_for(&change, &mut dirty),
                Err(broadcast::error::TryRecvError::Lagged(_)) => resync(&cluster, &mut dirty),
                Err(broadcast::error::TryRecvError::Empty | broadcast::error::TryRecvError::Closed) => break,
            }
        }
    }
}

/// After falling behind the change stream: reconcile every controller-managed object.
fn resync(cluster: &ClusterShared, dirty: &mut BTreeSet<Key>) {
    cluster.note_fell_behind();
    let store = cluster.store();
    for type_key in store.type_keys() {
        for object in store.list(&type_key, None) {
            let change = Change {
                revision: 0,
                kind: ChangeKind::Modified,
                key: type_key.clone(),
                object: Stored::Tree(object.clone()),
                previous: None,
            };
            keys_for(&change, dirty);
        }
    }
}
