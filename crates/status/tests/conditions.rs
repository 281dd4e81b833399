//! Per-resource `Ready` conditions, per-cluster propagation and the state object (issue #16 §2, §3): a resource
//! that is not ready says why in metav1.Condition's shape; its `lastTransitionTime` moves only when its status
//! does; each cluster names what went wrong propagating to it (seed 004's names); the state object of each of the
//! three lifecycle resources follows its policy and its message names what to act on.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use emco_appcontext::{ClusterRecord, ContextMeta, JsonText, ResourceRecord};
use emco_model::{Connectivity, ContextId, ContextStatus, RsyncStatus, StateInfo, StateValue};
use emco_status::{
    DigIdentity, Freshness, NoDetail, Propagation, StatusIndex, StatusRequest, Subject, SubjectKind,
    parse_query_for, propagation, state_object, write_status,
};
use serde_json::{Value as Json, json};

const STARTED: &str = "2026-11-23T10:00:00Z";

fn id() -> ContextId {
    ContextId::new(77).unwrap()
}

fn at(seconds: i64) -> jiff::Timestamp {
    let started: jiff::Timestamp = STARTED.parse().unwrap();
    jiff::Timestamp::from_second(started.as_second() + seconds).unwrap()
}

fn meta(app: &str, clusters: &[&str], status: ContextStatus) -> ContextMeta {
    common::dig_meta(
        id(),
        app,
        clusters.iter().map(|c| (*c).to_string()),
        status,
        STARTED,
    )
}

fn deployment(name: &str, ready_replicas: i64, generation: i64) -> Json {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "generation": generation},
        "spec": {"replicas": 2},
        "status": {"observedGeneration": generation, "replicas": 2, "readyReplicas": ready_replicas,
            "updatedReplicas": 2, "availableReplicas": ready_replicas}})
}

fn crashing_pod(name: &str) -> Json {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [{"name": "sink", "ready": false, "restartCount": 5,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off restarting"}}}]}})
}

/// `app` on `cluster` with a Deployment `<app>` (Applied) and the given bundle, heard at `heard` seconds.
fn record(app: &str, cluster: &str, bundle: Option<Json>, heard: i64) -> ClusterRecord {
    let mut resource = ResourceRecord::pending(app, "Deployment", "apps/v1", json!({}));
    resource.status = RsyncStatus::Applied;
    let mut record = ClusterRecord::pending(app, cluster, vec![resource]);
    record.connectivity = Connectivity::Available;
    record.cluster_status = bundle.map(JsonText::from);
    record.heard_at = Some(at(heard).to_string());
    record
}

fn bundle(deployment_ready: i64, pods: &[Json]) -> Json {
    json!({"deploymentStatuses": [deployment("sink", deployment_ready, 3)], "podStatuses": pods})
}

fn state(last: StateValue) -> StateInfo {
    let mut state = StateInfo::created(STARTED.into());
    state.push(StateValue::Approved, None, STARTED.into());
    state.push(last, Some(id()), STARTED.into());
    state
}

fn answer(index: &StatusIndex, subject: Subject<'_>, state: &StateInfo, query: &str) -> Json {
    let pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key.to_string(), value.to_string())
        })
        .collect();
    let query = parse_query_for(&pairs, subject.kind()).unwrap();
    let request = StatusRequest {
        subject,
        state,
        context: index.context(id()).map(|entry| (id(), entry)),
        query: &query,
        detail: &NoDetail,
        freshness: Some(Freshness {
            now: at(100),
            grace: Duration::from_secs(60),
        }),
    };
    let mut out = Vec::new();
    write_status(&request, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

fn dig() -> Subject<'static> {
    Subject::Dig(DigIdentity {
        project: "p",
        composite_app: "ca",
        version: "v1",
        composite_profile: "cp",
        name: "dig",
    })
}

/// The resource `name` of the first cluster of the first app.
fn resource<'a>(answer: &'a Json, name: &str) -> &'a Json {
    answer["apps"][0]["clusters"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap()
}

#[test]
fn not_ready_resources_say_why_and_ready_ones_only_when_asked() {
    let mut index = StatusIndex::new();
    index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Instantiated));
    index.apply_cluster(
        id(),
        &record(
            "sink",
            "p+edge02",
            Some(bundle(1, &[crashing_pod("fw0-sink-x")])),
            90,
        ),
    );
    let state = state(StateValue::Instantiated);
    let ready = answer(&index, dig(), &state, "status=ready");
    assert_eq!(ready["readyStatus"], "NotReady");
    let pod = resource(&ready, "fw0-sink-x");
    assert_eq!(pod["readyStatus"], "NotReady", "EMCO's value is kept");
    let condition = &pod["conditions"][0];
    assert_eq!(condition["type"], "Ready");
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "Failed");
    let message = condition["message"].as_str().unwrap();
    assert!(
        message.contains("fw0-sink-x") && message.contains("CrashLoopBackOff"),
        "{message}"
    );
    assert_eq!(condition["lastTransitionTime"], at(90).to_string());
    let keys: Vec<&str> = condition
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["type", "status", "lastTransitionTime", "reason", "message"]
    );

    // A rollout under way is in progress, not failed, and carries its generation.
    let rollout = &resource(&ready, "sink")["conditions"][0];
    assert_eq!(rollout["reason"], "InProgress");
    assert_eq!(rollout["observedGeneration"], 3);

    // Ready resources carry conditions only with conditions=all; status=deployed never does.
    index.apply_cluster(id(), &record("sink", "p+edge02", Some(bundle(2, &[])), 95));
    let ready = answer(&index, dig(), &state, "status=ready");
    assert!(resource(&ready, "sink").get("conditions").is_none());
    let all = answer(&index, dig(), &state, "status=ready&conditions=all");
    assert_eq!(resource(&all, "sink")["conditions"][0]["status"], "True");
    assert_eq!(resource(&all, "sink")["conditions"][0]["reason"], "Ready");
    let deployed = answer(&index, dig(), &state, "status=deployed&conditions=all");
    assert!(resource(&deployed, "sink").get("conditions").is_none());
}

#[test]
fn last_transition_time_moves_only_with_the_status() {
    let mut index = StatusIndex::new();
    index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Instantiated));
    let state = state(StateValue::Instantiated);
    let since = |index: &StatusIndex| {
        let answer = answer(index, dig(), &state, "status=ready&conditions=all");
        resource(&answer, "sink")["conditions"][0]["lastTransitionTime"].clone()
    };
    index.apply_cluster(id(), &record("sink", "p+edge02", Some(bundle(0, &[])), 50));
    assert_eq!(since(&index), at(50).to_string());
    // Still not ready, with another message: the time stays.
    index.apply_cluster(id(), &record("sink", "p+edge02", Some(bundle(1, &[])), 60));
    assert_eq!(since(&index), at(50).to_string());
    // Ready: the time moves, then stays while it is ready.
    index.apply_cluster(id(), &record("sink", "p+edge02", Some(bundle(2, &[])), 70));
    assert_eq!(since(&index), at(70).to_string());
    index.apply_cluster(id(), &record("sink", "p+edge02", Some(bundle(2, &[])), 80));
    assert_eq!(since(&index), at(70).to_string());
    index.apply_cluster(id(), &record("sink", "p+edge02", Some(bundle(1, &[])), 90));
    assert_eq!(since(&index), at(90).to_string());
}

/// A resource's rsync status and error, the cluster's connectivity, the context's status, and what is expected.
type Case = (
    RsyncStatus,
    Option<&'static str>,
    Connectivity,
    ContextStatus,
    Option<Propagation>,
);

#[test]
fn propagation_names_what_went_wrong_per_cluster() {
    let cases: [Case; 7] = [
        (
            RsyncStatus::Applied,
            None,
            Connectivity::Available,
            ContextStatus::Instantiated,
            None,
        ),
        (
            RsyncStatus::Failed,
            Some("admission webhook denied the request"),
            Connectivity::Available,
            ContextStatus::InstantiateFailed,
            Some(Propagation::CreationFailed),
        ),
        (
            RsyncStatus::Failed,
            Some("forbidden"),
            Connectivity::Available,
            ContextStatus::TerminateFailed,
            Some(Propagation::DeletionFailed),
        ),
        (
            RsyncStatus::Retrying,
            None,
            Connectivity::Retrying,
            ContextStatus::Instantiating,
            Some(Propagation::ClusterNotReady),
        ),
        (
            RsyncStatus::Failed,
            Some("kubeconfig of cluster p+edge02: the cluster has no kubeconfig (or was deleted)"),
            Connectivity::Available,
            ContextStatus::InstantiateFailed,
            Some(Propagation::ClientRetrievalFailed),
        ),
        (
            RsyncStatus::Failed,
            Some("credentials of logical cloud 'lc' on cluster 'p+edge02': no certificate"),
            Connectivity::Available,
            ContextStatus::InstantiateFailed,
            Some(Propagation::ClientRetrievalFailed),
        ),
        (
            RsyncStatus::Failed,
            Some("hook Job migrate: timed out waiting for completion"),
            Connectivity::Available,
            ContextStatus::InstantiateFailed,
            Some(Propagation::CreationTimedOut),
        ),
    ];
    for (rsync, error, connectivity, status, expected) in cases {
        let mut index = StatusIndex::new();
        index.apply_meta(&meta("sink", &["p+edge02"], status));
        let mut record = record("sink", "p+edge02", None, 10);
        record.resources[0].status = rsync;
        record.resources[0].error = error.map(String::from);
        record.connectivity = connectivity;
        index.apply_cluster(id(), &record);
        let cluster = &index.context(id()).unwrap().apps[0].clusters[0];
        assert_eq!(propagation(cluster, status), expected, "{error:?}");
        for query in ["status=ready", "status=deployed"] {
            let answer = answer(&index, dig(), &state(StateValue::Instantiated), query);
            let shown = &answer["apps"][0]["clusters"][0]["propagation"];
            match expected {
                Some(expected) => assert_eq!(shown, expected.as_str(), "{query}"),
                None => assert!(shown.is_null(), "omitted when OK: {query}"),
            }
        }
    }
}

#[test]
fn a_dig_is_ready_only_when_instantiated_ready_and_fresh() {
    let mut index = StatusIndex::new();
    index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Instantiating));
    let mut pending = record("sink", "p+edge02", None, 10);
    pending.resources[0].status = RsyncStatus::Pending;
    index.apply_cluster(id(), &pending);
    let instantiated = state(StateValue::Instantiated);
    let freshness = Some(Freshness {
        now: at(100),
        grace: Duration::from_secs(60),
    });

    // Before the index has the context: pending.
    let none = state_object(SubjectKind::Dig, &instantiated, None, freshness);
    assert!(!none.ready);
    assert_eq!(none.condition("last_operation").unwrap().status, "in_progress");

    let object = state_object(SubjectKind::Dig, &instantiated, index.context(id()), freshness);
    assert!(!object.ready);
    let operation = object.condition("last_operation").unwrap();
    assert_eq!(
        (operation.status, operation.name),
        ("in_progress", Some("Instantiate"))
    );
    // Nothing applied on edge02 yet and no other wait recorded: it waits for its turn in rsync's queue, since the
    // context began (100 s before the answer's time).
    let queued = "instantiating: 0 of 1 resources applied; app sink on edge02 waits for rsync to apply it, queued or under way (waiting 100 s)";
    assert_eq!(operation.message, queued);
    assert_eq!(object.message, queued);

    // Instantiated with a crashing pod: the message names the app, the cluster and the pod.
    index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Instantiated));
    index.apply_cluster(
        id(),
        &record(
            "sink",
            "p+edge02",
            Some(bundle(2, &[crashing_pod("fw0-sink-x")])),
            90,
        ),
    );
    let object = state_object(SubjectKind::Dig, &instantiated, index.context(id()), freshness);
    assert!(!object.ready);
    assert!(
        object.message.starts_with("sink on edge02: Pod fw0-sink-x: ")
            && object.message.contains("CrashLoopBackOff"),
        "{}",
        object.message
    );
    let ready = object.condition("Ready").unwrap();
    assert_eq!((ready.status, ready.reason.as_str()), ("False", "Failed"));
    assert_eq!(object.condition("Deployed").unwrap().status, "True");

    // Everything ready and heard: ready.
    index.apply_cluster(id(), &record("sink", "p+edge02", Some(bundle(2, &[])), 95));
    let object = state_object(SubjectKind::Dig, &instantiated, index.context(id()), freshness);
    assert!(object.ready, "{object:?}");
    let types: Vec<&str> = object.conditions.iter().map(|c| c.condition_type).collect();
    assert_eq!(
        types,
        [
            "last_operation",
            "Deployed",
            "Propagation",
            "StatusFresh",
            "Ready",
            "Stopped"
        ]
    );

    // Silent for longer than the grace: not ready, and the message says so.
    let later = Some(Freshness {
        now: at(200),
        grace: Duration::from_secs(60),
    });
    let object = state_object(SubjectKind::Dig, &instantiated, index.context(id()), later);
    assert!(!object.ready);
    assert_eq!(object.message, "no report from edge02 for 105 s");
    assert_eq!(object.condition("StatusFresh").unwrap().status, "False");

    // Terminated: not ready, whatever the last report said.
    index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Terminated));
    let terminated = state(StateValue::Terminated);
    let object = state_object(SubjectKind::Dig, &terminated, index.context(id()), freshness);
    assert!(!object.ready);
    assert_eq!(
        object.condition("last_operation").unwrap().name,
        Some("Terminate")
    );
    assert_eq!(object.condition("Deployed").unwrap().status, "False");

    // Stopped: the Stopped condition is True.
    let stopped = state(StateValue::InstantiateStopped);
    let object = state_object(SubjectKind::Dig, &stopped, index.context(id()), freshness);
    assert_eq!(object.condition("Stopped").unwrap().status, "True");
    assert!(!object.ready);
}

#[test]
fn network_intents_are_ready_once_applied_and_logical_clouds_ignore_updates() {
    let mut index = StatusIndex::new();
    index.apply_meta(&meta(
        "network-intents",
        &["p+edge02"],
        ContextStatus::Instantiated,
    ));
    let mut applied = record("network-intents", "p+edge02", None, 90);
    applied.resources[0] = {
        let mut network =
            ResourceRecord::pending("net-a", "Network", "k8s.plugin.opnfv.org/v1alpha1", json!({}));
        network.status = RsyncStatus::Applied;
        network
    };
    index.apply_cluster(id(), &applied);
    let freshness = Some(Freshness {
        now: at(100),
        grace: Duration::from_secs(60),
    });
    let context = index.context(id());
    let ncm = state(StateValue::Applied);
    let object = state_object(SubjectKind::ClusterNetworks, &ncm, context, freshness);
    assert!(object.ready, "{object:?}");
    assert_eq!(object.condition("last_operation").unwrap().name, Some("Apply"));
    // A DIG's policy does not take Applied as a deployment.
    assert!(!state_object(SubjectKind::Dig, &ncm, context, freshness).ready);

    let mut lc = state(StateValue::Instantiated);
    lc.push(StateValue::Updated, None, STARTED.into());
    let object = state_object(SubjectKind::LogicalCloud, &lc, context, freshness);
    assert!(object.ready, "an update keeps the instantiation: {object:?}");
    assert_eq!(
        object.condition("last_operation").unwrap().name,
        Some("Instantiate")
    );
    let subject = Subject::LogicalCloud {
        project: "p",
        name: "lc",
    };
    let answer = answer(&index, subject, &lc, "readiness");
    assert_eq!(answer["readiness"]["ready"], true);
    let keys: Vec<&String> = answer.as_object().unwrap().keys().collect();
    assert_eq!(
        keys.last().unwrap().as_str(),
        "readiness",
        "after the existing keys"
    );
    // A logical cloud answers EMCO 22.x's `status=ready` by default, which ends with the state object unless
    // turned off.
    let default = self::answer(&index, subject, &lc, "");
    assert_eq!(default["readiness"], answer["readiness"]);
    let without = self::answer(&index, subject, &lc, "readiness=false");
    assert!(without.get("readiness").is_none());
}

proptest::proptest! {
    /// Whatever the sequence of reports, a resource's `lastTransitionTime` is the time of the report that last
    /// changed its `Ready` status (the first report when it never changed).
    #[test]
    fn last_transition_time_is_the_last_change(readiness in proptest::collection::vec(0_i64..=2, 1..12)) {
        let mut index = StatusIndex::new();
        index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Instantiated));
        let mut expected = None;
        let mut previous: Option<bool> = None;
        for (step, ready_replicas) in readiness.iter().enumerate() {
            let heard = 40 + i64::try_from(step).unwrap();
            index.apply_cluster(id(), &record("sink", "p+edge02", Some(bundle(*ready_replicas, &[])), heard));
            let ready = *ready_replicas == 2;
            if previous != Some(ready) {
                expected = Some(at(heard));
            }
            previous = Some(ready);
            let entry = &index.context(id()).unwrap().apps[0].clusters[0].resources[0];
            let verdict = entry.verdict.as_ref().unwrap();
            proptest::prop_assert_eq!(verdict.since, expected);
            proptest::prop_assert_eq!(entry.condition_ready(), ready);
        }
    }
}

/// `Propagation` and `StatusFresh` carry a `lastTransitionTime` that moves only when their status does: the time of
/// the record that changed propagation, and when the cluster went stale (its last report plus the grace) or became
/// fresh again (the report that ended a silence longer than the grace).
#[test]
fn aggregate_conditions_say_when_they_last_changed() {
    let mut index = StatusIndex::new();
    index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Instantiated));
    let instantiated = state(StateValue::Instantiated);
    let judged_at = |now: i64| {
        Some(Freshness {
            now: at(now),
            grace: Duration::from_secs(60),
        })
    };
    let transition = |index: &StatusIndex, now: i64, condition: &str| {
        let object = state_object(
            SubjectKind::Dig,
            &instantiated,
            index.context(id()),
            judged_at(now),
        );
        let found = object.condition(condition).unwrap().clone();
        (found.status, found.last_transition_time)
    };
    let applied = |heard: i64, updated: i64, status: RsyncStatus| {
        let mut record = record("sink", "p+edge02", Some(bundle(2, &[])), heard);
        record.resources[0].status = status;
        record.resources[0].updated = Some(at(updated).to_string());
        record
    };

    index.apply_cluster(id(), &applied(10, 5, RsyncStatus::Applied));
    assert_eq!(
        transition(&index, 20, "Propagation"),
        ("True", Some(at(5).to_string())),
        "the time of the record that set it"
    );
    // Heard again, nothing changed in propagation: the time stays.
    index.apply_cluster(id(), &applied(30, 5, RsyncStatus::Applied));
    assert_eq!(
        transition(&index, 40, "Propagation"),
        ("True", Some(at(5).to_string()))
    );
    // A refused update: False since the resource's update.
    index.apply_cluster(id(), &applied(50, 45, RsyncStatus::Failed));
    assert_eq!(
        transition(&index, 60, "Propagation"),
        ("False", Some(at(45).to_string()))
    );
    index.apply_cluster(id(), &applied(55, 45, RsyncStatus::Failed));
    assert_eq!(
        transition(&index, 60, "Propagation"),
        ("False", Some(at(45).to_string()))
    );
    index.apply_cluster(id(), &applied(70, 65, RsyncStatus::Applied));
    assert_eq!(
        transition(&index, 80, "Propagation"),
        ("True", Some(at(65).to_string()))
    );

    // Fresh since the deployment started (never silent longer than the grace), whenever it is asked.
    assert_eq!(
        transition(&index, 80, "StatusFresh"),
        ("True", Some(at(0).to_string()))
    );
    assert_eq!(
        transition(&index, 120, "StatusFresh"),
        ("True", Some(at(0).to_string()))
    );
    // Silent since 70: stale from 130 on, and it says so at any later time.
    assert_eq!(
        transition(&index, 200, "StatusFresh"),
        ("False", Some(at(130).to_string()))
    );
    assert_eq!(
        transition(&index, 300, "StatusFresh"),
        ("False", Some(at(130).to_string()))
    );
    // Heard again at 310: fresh since then; a later short silence does not move it.
    index.apply_cluster(id(), &applied(310, 65, RsyncStatus::Applied));
    assert_eq!(
        transition(&index, 320, "StatusFresh"),
        ("True", Some(at(310).to_string()))
    );
    index.apply_cluster(id(), &applied(330, 65, RsyncStatus::Applied));
    assert_eq!(
        transition(&index, 340, "StatusFresh"),
        ("True", Some(at(310).to_string()))
    );
    // Under a longer grace, the silence from 70 to 310 (240 s) still counts; one of 300 s would not.
    let object = state_object(
        SubjectKind::Dig,
        &instantiated,
        index.context(id()),
        Some(Freshness {
            now: at(340),
            grace: Duration::from_secs(300),
        }),
    );
    assert_eq!(
        object.condition("StatusFresh").unwrap().last_transition_time,
        Some(at(0).to_string())
    );
}

/// A status config's rolled-up value shows as `statusRemote` in cluster/ready answers, not in the rsync view, and
/// not for a stale cluster; a kind whose collection is disabled says so.
#[test]
fn status_remote_shows_where_the_cluster_is_believed() {
    let with_remote = |heard: i64| {
        let mut deployment = deployment("sink", 2, 3);
        deployment["statusRemote"] = json!(2);
        record(
            "sink",
            "p+edge02",
            Some(json!({"deploymentStatuses": [deployment]})),
            heard,
        )
    };
    let mut index = StatusIndex::new();
    index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Instantiated));
    index.apply_cluster(id(), &with_remote(90));
    let instantiated = state(StateValue::Instantiated);
    let shown = |index: &StatusIndex, query: &str| {
        answer(index, dig(), &instantiated, query)["apps"][0]["clusters"][0]["resources"][0].clone()
    };
    assert_eq!(shown(&index, "status=ready")["statusRemote"], 2);
    assert!(
        shown(&index, "type=cluster")["statusRemote"].is_null(),
        "seed shape: only with output=detail"
    );
    assert!(
        shown(&index, "status=deployed").get("statusRemote").is_none(),
        "not in the rsync view"
    );
    // Heard last at 10, judged at 100 with a 60 s grace: stale, its report (and value) not believed. (A fresh
    // index: in one index the time a cluster was heard only moves forward.)
    let mut index = StatusIndex::new();
    index.apply_meta(&meta("sink", &["p+edge02"], ContextStatus::Instantiated));
    index.apply_cluster(id(), &with_remote(10));
    let stale = shown(&index, "status=ready");
    assert_eq!(stale["readyStatus"], "Unknown");
    assert!(stale.get("statusRemote").is_none(), "{stale}");

    let mut disabled = record(
        "sink",
        "p+edge02",
        Some(
            json!({"deploymentStatuses": [], "statusCollectionDisabled": [{"group": "apps", "kind": "Deployment"}]}),
        ),
        95,
    );
    disabled.resources[0].status = RsyncStatus::Applied;
    index.apply_cluster(id(), &disabled);
    let resource = shown(&index, "status=ready");
    assert_eq!(resource["statusCollection"], "Disabled", "{resource}");
    assert!(resource.get("readyStatus").is_none(), "{resource}");
}
