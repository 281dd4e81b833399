//! Deployment intent group answers stay byte for byte what they were before the engine learnt other subjects:
//! every shape, measure, output, filter and list query over one context (cluster-only pods, a Failed resource, a
//! retrying cluster, a Secret detail) is compared as text with `golden/dig-answers.txt`, which the DIG-only engine
//! wrote (one `query<TAB>answer` line per query). Keys added since (issue #16: `readiness`, a cluster's
//! `propagation`, a resource's `conditions`) are taken out before the comparison, so every key the golden holds
//! keeps its value and place; `new_keys_appear_only_where_expected` checks where they are.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use emco_appcontext::{AppMeta, ClusterRecord, ContextMeta, ContextOwner, JsonText, ResourceRecord};
use emco_model::{Connectivity, ContextId, ContextStatus, RsyncStatus, StateInfo, StateValue};
use emco_status::{
    DetailSource, DigIdentity, Measure, ResourceEntry, StatusIndex, StatusRequest, parse_query, write_status,
};
use serde_json::{Value as Json, json};

const CONTEXT: u64 = 2755581958183303505;

/// (app, cluster, name, apiVersion, kind, rsync status)
const RESOURCES: [(&str, &str, &str, &str, &str, RsyncStatus); 9] = [
    (
        "packetgen",
        "p+e1",
        "web",
        "apps/v1",
        "Deployment",
        RsyncStatus::Applied,
    ),
    ("packetgen", "p+e1", "web", "v1", "Service", RsyncStatus::Applied),
    (
        "packetgen",
        "p+e2",
        "web",
        "apps/v1",
        "Deployment",
        RsyncStatus::Failed,
    ),
    ("packetgen", "p+e2", "web", "v1", "Service", RsyncStatus::Pending),
    (
        "sink",
        "p+e1",
        "sink-config",
        "v1",
        "ConfigMap",
        RsyncStatus::Applied,
    ),
    (
        "sink",
        "p+e1",
        "sink-secret",
        "v1",
        "Secret",
        RsyncStatus::Applied,
    ),
    (
        "sink",
        "p+e1",
        "sink-role",
        "rbac.authorization.k8s.io/v1",
        "Role",
        RsyncStatus::Applied,
    ),
    (
        "sink",
        "p+e1",
        "sink",
        "apps/v1",
        "Deployment",
        RsyncStatus::Applied,
    ),
    ("sink", "p+e1", "sink-svc", "v1", "Service", RsyncStatus::Deleted),
];

fn manifest(name: &str, api_version: &str, kind: &str) -> Json {
    let mut manifest = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
    if kind == "Secret" {
        manifest["data"] = json!({"password": "c2VjcmV0"});
    }
    manifest
}

fn index() -> StatusIndex {
    let id = ContextId::new(CONTEXT).unwrap();
    let mut index = StatusIndex::new();
    index.apply_meta(&ContextMeta {
        project: "p".into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "cp".into(),
        deployment_intent_group: "dig".into(),
        release: "r1".into(),
        apps: vec![
            AppMeta {
                name: "packetgen".into(),
                dependencies: vec![],
                clusters: vec!["p+e1".into(), "p+e2".into()],
                excluded: Vec::new(),
            },
            AppMeta {
                name: "sink".into(),
                dependencies: vec![],
                clusters: vec!["p+e1".into()],
                excluded: Vec::new(),
            },
        ],
        status: ContextStatus::Instantiated,
        created: String::new(),
        ..ContextMeta::for_owner(id, ContextOwner::DeploymentIntentGroup, "default", Vec::new())
    });
    for (app, cluster) in [("packetgen", "p+e1"), ("packetgen", "p+e2"), ("sink", "p+e1")] {
        let resources = RESOURCES
            .iter()
            .filter(|r| r.0 == app && r.1 == cluster)
            .map(|(_, _, name, api_version, kind, status)| {
                let mut resource =
                    ResourceRecord::pending(name, kind, api_version, manifest(name, api_version, kind));
                resource.status = *status;
                if *status == RsyncStatus::Failed {
                    resource.error = Some("admission webhook denied the request".into());
                }
                resource
            })
            .collect();
        let mut record = ClusterRecord::pending(app, cluster, resources);
        record.connectivity = Connectivity::Available;
        if cluster == "p+e2" {
            record.connectivity = Connectivity::Retrying;
            record.connectivity_reason = Some("connection refused".into());
        }
        if app == "sink" {
            record.cluster_status = Some(JsonText::from(json!({
                "ready": false, "resourceCount": 4,
                "deploymentStatuses": [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sink"},
                    "spec": {"replicas": 2}, "status": {"replicas": 2, "readyReplicas": 1, "updatedReplicas": 2}}],
                "podStatuses": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sink-abc12"},
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}],
                "configMapStatuses": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sink-config"},
                    "data": {"k": "v"}}],
                "secretStatuses": [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sink-secret"},
                    "data": {"password": "c2VjcmV0"}}],
            })));
        }
        index.apply_cluster(id, &record);
    }
    index
}

/// Details from the manifests (deployed) or from the bundle (cluster), unredacted: the answer redacts.
struct Manifests(Json);

impl DetailSource for Manifests {
    fn detail(&self, app: &str, cluster: &str, resource: &ResourceEntry, measure: Measure) -> Option<Json> {
        let kind = &resource.gvk.kind;
        match measure {
            Measure::Deployed => RESOURCES
                .iter()
                .find(|r| r.0 == app && r.1 == cluster && r.2 == &*resource.name && r.4 == kind)
                .map(|(_, _, name, api_version, kind, _)| manifest(name, api_version, kind)),
            Measure::Cluster => (app == "sink" && cluster == "p+e1").then(|| {
                let mut object = json!({"kind": kind, "metadata": {"name": &*resource.name}});
                if kind == "Secret" {
                    object["data"] = self.0.clone();
                }
                object
            }),
        }
    }
}

const QUERIES: &[&str] = &[
    "",
    "type=cluster",
    "output=summary",
    "type=cluster&output=summary",
    "output=detail",
    "type=cluster&output=detail",
    "status=deployed",
    "status=ready",
    "status=deployed&output=summary",
    "status=ready&output=summary",
    "status=deployed&output=detail",
    "status=ready&output=detail",
    "status=ready&app=sink",
    "app=sink&type=cluster",
    "cluster=p%2Be2",
    "status=deployed&cluster=p%2Be2",
    "resource=web",
    "status=ready&resource=sink-abc12",
    "status=deployed&resource=none",
    "apps",
    "clusters",
    "clusters&app=sink",
    "resources",
    "resources&status=ready",
    "resources&cluster=p%2Be1&app=packetgen",
    "instance=2755581958183303505&status=ready",
];

fn decode(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key.to_string(), value.replace("%2B", "+"))
        })
        .collect()
}

fn answer(state: &StateInfo, index: &StatusIndex, query: &str) -> String {
    let query = parse_query(&decode(query)).unwrap();
    let identity = DigIdentity {
        project: "p",
        composite_app: "ca",
        version: "v1",
        composite_profile: "cp",
        name: "dig",
    };
    let context = state
        .last_context()
        .and_then(|id| index.context(id).map(|entry| (id, entry)));
    let detail = Manifests(json!({"password": "c2VjcmV0"}));
    let request = StatusRequest {
        subject: identity.into(),
        state,
        context,
        query: &query,
        detail: &detail,
        freshness: None,
    };
    let mut out = Vec::new();
    write_status(&request, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Every query's answer: first before the first instantiation (state only), then instantiated.
fn answers() -> Vec<(String, String)> {
    let index = index();
    let mut state = StateInfo::created("2026-11-23T09:00:00Z".into());
    state.push(StateValue::Approved, None, "2026-11-23T09:00:01Z".into());
    let mut lines = Vec::new();
    for query in ["", "status=ready", "apps", "clusters", "resources"] {
        lines.push((format!("created:{query}"), answer(&state, &index, query)));
    }
    state.push(
        StateValue::Instantiated,
        ContextId::new(CONTEXT),
        "2026-11-23T09:00:02.5Z".into(),
    );
    for query in QUERIES {
        lines.push(((*query).to_string(), answer(&state, &index, query)));
    }
    lines
}

/// Keys added to the answers after the golden was written.
const NEW_KEYS: [&str; 3] = ["readiness", "propagation", "conditions"];

/// `text` without [`NEW_KEYS`], written again (key order is kept).
fn without_new_keys(text: &str) -> String {
    fn strip(value: &mut Json) {
        match value {
            Json::Object(map) => {
                for key in NEW_KEYS {
                    map.shift_remove(key);
                }
                map.values_mut().for_each(strip);
            }
            Json::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value: Json = serde_json::from_str(text).unwrap();
    strip(&mut value);
    serde_json::to_string(&value).unwrap()
}

#[test]
fn dig_answers_are_unchanged() {
    let golden = include_str!("golden/dig-answers.txt");
    let expected: Vec<(&str, &str)> = golden
        .lines()
        .map(|line| line.split_once('\t').unwrap())
        .collect();
    let actual = answers();
    assert_eq!(actual.len(), expected.len(), "one golden line per query");
    for ((query, text), (golden_query, golden_text)) in actual.iter().zip(expected) {
        assert_eq!(query, golden_query);
        assert_eq!(&without_new_keys(text), golden_text, "answer to '{query}'");
    }
    // The golden holds what matters: a redacted Secret, a retrying cluster's reason, cluster-only pods.
    assert!(!golden.contains("c2VjcmV0"));
    assert!(golden.contains("connectivityReason"));
    assert!(golden.contains("sink-abc12"));
}

#[test]
fn new_keys_appear_only_where_expected() {
    let lines = answers();
    let answer = |query: &str| -> Json {
        let (_, text) = lines.iter().find(|(q, _)| q == query).unwrap();
        serde_json::from_str(text).unwrap()
    };
    // The seed shape gains nothing; EMCO 22.x answers end with the state object (`readiness`).
    for (query, text) in &lines {
        let emco22 = query.contains("status=") || query.starts_with("created:status");
        if !emco22 {
            assert_eq!(&without_new_keys(text), text, "'{query}'");
        }
        // List queries (`apps`, `clusters`, `resources`) answer names only.
        let list = query
            .split(['&', ':'])
            .any(|part| ["apps", "clusters", "resources"].contains(&part));
        let last_key = serde_json::from_str::<Json>(text)
            .unwrap()
            .as_object()
            .and_then(|map| map.keys().next_back().cloned());
        assert_eq!(
            last_key.as_deref() == Some("readiness"),
            emco22 && !list,
            "'{query}'"
        );
    }
    // The cluster with a Failed resource says so, in both EMCO 22.x measures; the others say nothing.
    for query in ["status=deployed", "status=ready"] {
        let packetgen = &answer(query)["apps"][0]["clusters"];
        assert!(packetgen[0].get("propagation").is_none(), "{query}");
        assert_eq!(packetgen[1]["propagation"], "CreationFailed", "{query}");
    }
    // Only resources that are not ready carry conditions.
    let ready = answer("status=ready");
    for app in ready["apps"].as_array().unwrap() {
        for cluster in app["clusters"].as_array().unwrap() {
            for resource in cluster["resources"].as_array().unwrap() {
                let not_ready = resource["readyStatus"].as_str().is_some_and(|s| s != "Ready");
                assert_eq!(resource.get("conditions").is_some(), not_ready, "{resource}");
            }
        }
    }
}
