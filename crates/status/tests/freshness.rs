//! Stale cluster status (issue #16 §5): a cluster of a live context not heard from for longer than the grace has its
//! resources' cluster status and readiness shown as `Unknown` and says why; a fresh cluster's answer is unchanged;
//! a cluster never heard from is stale only once the grace after the context started has passed; hearing it again
//! restores it.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use emco_appcontext::{AppMeta, ClusterRecord, ContextMeta, ContextOwner, JsonText, ResourceRecord};
use emco_model::{Connectivity, ContextId, ContextStatus, RsyncStatus, StateInfo, StateValue};
use emco_status::{DigIdentity, Freshness, NoDetail, StatusIndex, StatusRequest, parse_query, write_status};
use proptest::prelude::*;
use serde_json::{Value as Json, json};

const STARTED: &str = "2026-11-23T10:00:00Z";
const CLUSTERS: [&str; 2] = ["p+edge01", "p+edge03"];

fn id() -> ContextId {
    ContextId::new(42).unwrap()
}

/// `seconds` after the context started.
fn at(seconds: f64) -> jiff::Timestamp {
    let started: jiff::Timestamp = STARTED.parse().unwrap();
    let millis = (seconds * 1000.0).round() as i64;
    jiff::Timestamp::from_millisecond(started.as_millisecond() + millis).unwrap()
}

fn meta(apps: &[&str], status: ContextStatus) -> ContextMeta {
    ContextMeta {
        project: "p".into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "cp".into(),
        deployment_intent_group: "dig".into(),
        release: "r".into(),
        apps: apps
            .iter()
            .map(|app| AppMeta {
                name: (*app).into(),
                dependencies: vec![],
                clusters: CLUSTERS.map(String::from).to_vec(),
                excluded: Vec::new(),
            })
            .collect(),
        status,
        created: STARTED.into(),
        ..ContextMeta::for_owner(id(), ContextOwner::DeploymentIntentGroup, "default", Vec::new())
    }
}

/// The record of `app` on `cluster`: a ready Deployment `<app>`, reported at `heard` seconds (no report: `None`).
fn record(app: &str, cluster: &str, heard: Option<f64>) -> ClusterRecord {
    let mut resource = ResourceRecord::pending(app, "Deployment", "apps/v1", json!({}));
    resource.status = RsyncStatus::Applied;
    let mut record = ClusterRecord::pending(app, cluster, vec![resource]);
    record.connectivity = Connectivity::Available;
    if let Some(seconds) = heard {
        record.cluster_status = Some(JsonText::from(json!({
            "ready": true, "resourceCount": 1,
            "deploymentStatuses": [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": app},
                "spec": {"replicas": 1}, "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1}}],
        })));
        record.heard_at = Some(at(seconds).to_string());
    }
    record
}

/// One app `web` on edge01 (heard at `edge01`) and edge03 (heard at `edge03`).
fn index(edge01: Option<f64>, edge03: Option<f64>, status: ContextStatus) -> StatusIndex {
    let mut index = StatusIndex::new();
    index.apply_meta(&meta(&["web"], status));
    index.apply_cluster(id(), &record("web", CLUSTERS[0], edge01));
    index.apply_cluster(id(), &record("web", CLUSTERS[1], edge03));
    index
}

fn text(index: &StatusIndex, query: &str, freshness: Option<Freshness>) -> String {
    let pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key.to_string(), value.replace("%2B", "+"))
        })
        .collect();
    let query = parse_query(&pairs).unwrap();
    let mut state = StateInfo::created("t".into());
    state.push(StateValue::Instantiated, Some(id()), "t".into());
    let request = StatusRequest {
        subject: DigIdentity {
            project: "p",
            composite_app: "ca",
            version: "v1",
            composite_profile: "cp",
            name: "dig",
        }
        .into(),
        state: &state,
        context: index.context(id()).map(|entry| (id(), entry)),
        query: &query,
        detail: &NoDetail,
        freshness,
    };
    let mut out = Vec::new();
    write_status(&request, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn answer(index: &StatusIndex, query: &str, freshness: Option<Freshness>) -> Json {
    serde_json::from_str(&text(index, query, freshness)).unwrap()
}

fn judged_at(seconds: f64) -> Option<Freshness> {
    Some(Freshness {
        now: at(seconds),
        grace: Duration::from_secs(60),
    })
}

fn cluster<'a>(answer: &'a Json, name: &str) -> &'a Json {
    answer["apps"][0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|cluster| cluster["cluster"] == name)
        .unwrap()
}

const QUERIES: [&str; 8] = [
    "",
    "type=cluster",
    "type=cluster&output=summary",
    "type=cluster&output=detail",
    "status=ready",
    "status=ready&output=summary",
    "status=deployed",
    "status=ready&cluster=p%2Bedge03",
];

#[test]
fn a_silent_cluster_is_unknown_and_says_why() {
    // edge03 was last heard 95 s before the answer, edge01 5 s before.
    let index = index(Some(100.0), Some(10.0), ContextStatus::Instantiated);
    let ready = answer(&index, "status=ready", judged_at(105.0));
    assert_eq!(ready["readyStatus"], "NotReady");
    assert_eq!(ready["readyCounts"], json!({"Ready": 1, "Unknown": 1}));
    let edge03 = cluster(&ready, "edge03");
    assert_eq!(edge03["statusFresh"], false);
    assert_eq!(edge03["statusMessage"], "no report from edge03 for 95 s");
    assert_eq!(edge03["lastHeard"], at(10.0).to_string());
    assert_eq!(edge03["resources"][0]["readyStatus"], "Unknown");
    let edge01 = cluster(&ready, "edge01");
    assert!(edge01.get("statusFresh").is_none() && edge01.get("statusMessage").is_none());
    assert_eq!(edge01["resources"][0]["readyStatus"], "Ready");

    let seed = answer(&index, "type=cluster", judged_at(105.0));
    assert_eq!(seed["cluster-status"], json!({"Present": 1, "Unknown": 1}));
    let edge03 = cluster(&seed, "edge03");
    assert_eq!(edge03["status-fresh"], false);
    assert_eq!(edge03["status-message"], "no report from edge03 for 95 s");
    assert!(edge03.get("last-heard").is_none(), "seed shape: only in detail");
    assert_eq!(edge03["resources"][0]["cluster-status"], "Unknown");
    let detail = answer(&index, "type=cluster&output=detail", judged_at(105.0));
    assert_eq!(cluster(&detail, "edge03")["last-heard"], at(10.0).to_string());

    // What rsync did is not a report of the cluster: unchanged (but for the state object, whose `StatusFresh`
    // tells the silence).
    assert_eq!(
        text(&index, "status=deployed&readiness=false", judged_at(105.0)),
        text(&index, "status=deployed&readiness=false", None)
    );
    // A filter on the fresh cluster leaves the answer Ready.
    let fresh_only = answer(&index, "status=ready&cluster=p%2Bedge01", judged_at(105.0));
    assert_eq!(fresh_only["readyStatus"], "Ready");
}

#[test]
fn the_grace_is_inclusive() {
    let index = index(Some(10.0), Some(10.0), ContextStatus::Instantiated);
    let on_the_boundary = answer(&index, "status=ready", judged_at(70.0));
    assert_eq!(on_the_boundary["readyStatus"], "Ready");
    assert_eq!(on_the_boundary["readyCounts"], json!({"Ready": 2}));
    let just_after = answer(&index, "status=ready", judged_at(70.001));
    assert_eq!(just_after["readyStatus"], "NotReady");
    assert_eq!(just_after["readyCounts"], json!({"Unknown": 2}));
    assert_eq!(
        cluster(&just_after, "edge01")["statusMessage"],
        "no report from edge01 for 60 s"
    );
}

#[test]
fn a_cluster_never_heard_from_is_stale_only_after_the_grace() {
    let index = index(Some(1.0), None, ContextStatus::Instantiating);
    let early = answer(&index, "status=ready", judged_at(30.0));
    assert!(cluster(&early, "edge03").get("statusFresh").is_none());
    assert_eq!(
        cluster(&early, "edge03")["resources"][0]["readyStatus"],
        "NotPresent",
        "no report yet: as before"
    );
    let late = answer(&index, "status=ready", judged_at(61.0));
    let edge03 = cluster(&late, "edge03");
    assert_eq!(edge03["statusFresh"], false);
    assert_eq!(
        edge03["statusMessage"],
        "no report from edge03 since the deployment started 61 s ago"
    );
    assert!(edge03.get("lastHeard").is_none());
    assert_eq!(edge03["resources"][0]["readyStatus"], "Unknown");
    assert_eq!(late["readyStatus"], "NotReady");
}

#[test]
fn a_cluster_rsync_deliberately_waits_on_is_not_silent_and_says_what_it_waits_for() {
    // edge03 holds nothing yet: rsync waits there for a pre-install hook (since 5 s, failing at 305 s).
    let mut index = index(Some(1.0), None, ContextStatus::Instantiating);
    let mut waiting = record("web", CLUSTERS[1], None);
    waiting.resources[0].status = RsyncStatus::Pending;
    waiting.waiting = Some(emco_appcontext::Waiting {
        what: "pre-install hook Pod/migrate to complete".into(),
        since: at(5.0).to_string(),
        until: Some(at(305.0).to_string()),
        then: Some("fails".into()),
    });
    index.apply_cluster(id(), &waiting);
    let late = answer(&index, "status=ready", judged_at(61.0));
    let edge03 = cluster(&late, "edge03");
    assert!(edge03.get("statusFresh").is_none(), "{edge03}");
    assert_eq!(
        edge03["waiting"]["for"],
        "pre-install hook Pod/migrate to complete"
    );
    assert_eq!(edge03["waiting"]["until"], at(305.0).to_string());
    let deployed = answer(&index, "status=deployed&output=all", judged_at(61.0));
    let message = cluster(&deployed, "edge03")["resources"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("app web on edge03 waits for pre-install hook Pod/migrate to complete (waiting ")
            && message.ends_with("(waiting 56 s, fails at 300 s)"),
        "{message}"
    );
    // The DIG's readiness says it too; edge01, which waits for nothing, has no `waiting`.
    let readiness = deployed["readiness"]["message"].as_str().unwrap();
    assert!(readiness.ends_with(&format!("; {message}")), "{readiness}");
    assert!(cluster(&deployed, "edge01").get("waiting").is_none());
}

#[test]
fn a_cluster_with_nothing_applied_yet_waits_for_rsync_and_is_not_silent() {
    // edge03's batch has not been applied yet and rsync recorded no wait: it is queued (or under way).
    let mut instantiating = index(Some(1.0), None, ContextStatus::Instantiating);
    let mut queued = record("web", CLUSTERS[1], None);
    queued.resources[0].status = RsyncStatus::Pending;
    instantiating.apply_cluster(id(), &queued);
    let late = answer(&instantiating, "status=ready", judged_at(61.0));
    let edge03 = cluster(&late, "edge03");
    assert!(
        edge03.get("statusFresh").is_none(),
        "emco's own queue, not a silent cluster: {edge03}"
    );
    assert_eq!(edge03["waiting"]["for"], "rsync to apply it, queued or under way");
    assert_eq!(edge03["waiting"]["since"], STARTED, "since the context began");
    assert!(edge03["waiting"].get("until").is_none(), "{edge03}");
    let deployed = answer(&instantiating, "status=deployed&output=all", judged_at(61.0));
    assert_eq!(
        cluster(&deployed, "edge03")["resources"][0]["message"],
        "app web on edge03 waits for rsync to apply it, queued or under way (waiting 61 s)"
    );
    assert!(
        cluster(&deployed, "edge01").get("waiting").is_none(),
        "edge01 is applied"
    );

    // Retried, it waits for the cluster (the record says so), not for its turn; once applied, for nothing.
    let mut retrying = queued.clone();
    retrying.connectivity = Connectivity::Retrying;
    instantiating.apply_cluster(id(), &retrying);
    let answer_retrying = answer(&instantiating, "status=ready", judged_at(61.0));
    assert!(cluster(&answer_retrying, "edge03").get("waiting").is_none());
    let mut applied = queued;
    applied.resources[0].status = RsyncStatus::Applied;
    instantiating.apply_cluster(id(), &applied);
    let answer_applied = answer(&instantiating, "status=ready", judged_at(61.0));
    assert!(cluster(&answer_applied, "edge03").get("waiting").is_none());
    assert_eq!(
        cluster(&answer_applied, "edge03")["statusFresh"],
        false,
        "applied and silent"
    );

    // A context that no longer instantiates queues nothing.
    let mut stopped = index(Some(1.0), None, ContextStatus::InstantiateFailed);
    let mut pending = record("web", CLUSTERS[1], None);
    pending.resources[0].status = RsyncStatus::Pending;
    stopped.apply_cluster(id(), &pending);
    let failed = answer(&stopped, "status=ready", judged_at(61.0));
    assert!(cluster(&failed, "edge03").get("waiting").is_none(), "{failed}");
}

#[test]
fn hearing_again_restores_the_cluster() {
    let mut index = index(Some(100.0), Some(10.0), ContextStatus::Instantiated);
    assert_eq!(
        answer(&index, "status=ready", judged_at(105.0))["readyStatus"],
        "NotReady"
    );
    index.apply_cluster(id(), &record("web", CLUSTERS[1], Some(104.0)));
    let answer = answer(&index, "status=ready", judged_at(105.0));
    assert_eq!(answer["readyStatus"], "Ready");
    assert_eq!(answer["readyCounts"], json!({"Ready": 2}));
    assert!(cluster(&answer, "edge03").get("statusFresh").is_none());
    assert_eq!(cluster(&answer, "edge03")["lastHeard"], at(104.0).to_string());
}

#[test]
fn a_cluster_is_heard_through_any_of_its_apps() {
    let mut index = StatusIndex::new();
    index.apply_meta(&meta(&["web", "db"], ContextStatus::Instantiated));
    index.apply_cluster(id(), &record("web", CLUSTERS[0], Some(100.0)));
    index.apply_cluster(id(), &record("db", CLUSTERS[0], Some(10.0)));
    index.apply_cluster(id(), &record("web", CLUSTERS[1], Some(100.0)));
    index.apply_cluster(id(), &record("db", CLUSTERS[1], Some(100.0)));
    let answer = answer(&index, "status=ready", judged_at(105.0));
    assert_eq!(answer["readyStatus"], "Ready");
    let db = &answer["apps"][1];
    assert_eq!(db["name"], "db");
    assert_eq!(
        db["clusters"][0]["lastHeard"],
        at(100.0).to_string(),
        "the newest time over the cluster's records"
    );
}

#[test]
fn fresh_and_finished_contexts_answer_as_before() {
    let cases = [
        // Every cluster heard within the grace.
        (index(Some(100.0), Some(50.0), ContextStatus::Instantiated), 105.0),
        // Silent for long, but the context is not live.
        (index(Some(10.0), Some(10.0), ContextStatus::Terminated), 1000.0),
        (index(None, None, ContextStatus::InstantiateFailed), 1000.0),
    ];
    for (index, now) in cases {
        for query in QUERIES {
            // The state object is the only part that knows the clock (its `StatusFresh` condition).
            let query = &format!("{query}&readiness=false");
            assert_eq!(
                text(&index, query, judged_at(now)),
                text(&index, query, None),
                "'{query}'"
            );
        }
    }
    // A report kept from before times were recorded: nothing says it is old.
    let mut index = StatusIndex::new();
    index.apply_meta(&meta(&["web"], ContextStatus::Instantiated));
    for cluster in CLUSTERS {
        let mut record = record("web", cluster, Some(0.0));
        record.heard_at = None;
        index.apply_cluster(id(), &record);
    }
    for query in QUERIES {
        let query = &format!("{query}&readiness=false");
        let answer = text(&index, query, judged_at(10_000.0));
        assert_eq!(answer, text(&index, query, None), "'{query}'");
        assert!(!answer.contains("lastHeard") && !answer.contains("statusFresh"));
    }
}

proptest! {
    /// Whatever the times, the counts equal what the listed resources say, and the answer is NotReady exactly
    /// when a cluster is stale or a resource not ready.
    #[test]
    fn counts_match_the_listed_resources(
        edge01 in proptest::option::of(0u32..200),
        edge03 in proptest::option::of(0u32..200),
        now in 0u32..300,
    ) {
        let seconds = |heard: Option<u32>| heard.map(f64::from);
        let index = index(seconds(edge01), seconds(edge03), ContextStatus::Instantiated);
        let answer = answer(&index, "status=ready", judged_at(f64::from(now)));
        let mut listed = std::collections::BTreeMap::<String, u64>::new();
        let mut stale = false;
        for cluster in answer["apps"][0]["clusters"].as_array().unwrap() {
            stale |= cluster["statusFresh"] == false;
            for resource in cluster["resources"].as_array().unwrap() {
                *listed.entry(resource["readyStatus"].as_str().unwrap().to_string()).or_default() += 1;
            }
        }
        let counted: std::collections::BTreeMap<String, u64> =
            serde_json::from_value(answer["readyCounts"].clone()).unwrap();
        prop_assert_eq!(&counted, &listed);
        let all_ready = listed.keys().all(|status| status == "Ready");
        prop_assert_eq!(answer["readyStatus"] == "Ready", all_ready && !stale);
        // Stale exactly when heard longer than the grace ago, or never heard and started longer ago.
        let expect_stale = [edge01, edge03]
            .iter()
            .any(|heard| i64::from(now) - i64::from(heard.unwrap_or(0)) > 60);
        prop_assert_eq!(stale, expect_stale);
    }
}
