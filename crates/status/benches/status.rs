//! Status query speed and index memory at scale: one synthetic context of 1,000 clusters × 3 apps × 10 resources
//! (30,000 resources), each (app, cluster) with the ResourceBundleState its monitor would report (2 % of the objects
//! not ready). Measures `output=summary`, `output=all` (engine + serialization to bytes) and, as the references,
//! serialization alone of the same answer (as a `serde_json::Value` and as typed structs); EMCO 22.x's
//! `status=ready` answer without conditions (`conditions=none`), with the default conditions (on the resources not
//! ready) and with `conditions=all`; prints the index's memory per resource (verdicts included); and the index's
//! own work per change: one cluster's record, and a context's meta.
//!
//! Run with `cargo bench -p emco-status`.

use criterion::{BatchSize, Criterion};
use emco_appcontext::{AppMeta, ClusterRecord, ContextMeta, JsonText, ResourceRecord};
use emco_model::{Connectivity, ContextId, ContextStatus, RsyncStatus, StateInfo, StateValue};
use emco_status::{DigIdentity, NoDetail, StatusIndex, StatusRequest, parse_query, write_status};
use serde_json::json;

/// The same answer as plain typed structs: the fastest way to serialize it with serde, the tighter reference.
#[derive(serde::Serialize, serde::Deserialize)]
struct TypedAnswer {
    project: String,
    #[serde(rename = "composite-app-name")]
    composite_app_name: String,
    #[serde(rename = "composite-app-version")]
    composite_app_version: String,
    #[serde(rename = "composite-profile-name")]
    composite_profile_name: String,
    name: String,
    state: StateInfo,
    status: String,
    #[serde(rename = "rsync-status")]
    rsync_status: std::collections::BTreeMap<String, u64>,
    apps: Vec<TypedApp>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TypedApp {
    name: String,
    clusters: Vec<TypedCluster>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TypedCluster {
    #[serde(rename = "cluster-provider")]
    cluster_provider: String,
    cluster: String,
    resources: Vec<TypedResource>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TypedResource {
    #[serde(rename = "GVK")]
    gvk: emco_model::Gvk,
    name: String,
    #[serde(rename = "rsync-status")]
    rsync_status: String,
}

/// The process's resident memory in bytes (Linux), to measure what the index holds.
fn resident_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}

const CLUSTERS: usize = 1_000;
const APPS: [&str; 3] = ["packetgen", "firewall", "sink"];
const RESOURCES_PER_APP: usize = 10;

fn records(id: ContextId) -> (ContextMeta, Vec<ClusterRecord>) {
    let clusters: Vec<String> = (0..CLUSTERS)
        .map(|i| format!("edge-provider+edge{i:04}"))
        .collect();
    let meta = ContextMeta {
        id,
        project: "bench".into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "cp".into(),
        deployment_intent_group: "dig".into(),
        release: "r1".into(),
        namespace: "default".into(),
        logical_cloud: String::new(),
        owner: Default::default(),
        credentials: None,
        supersedes: None,
        lineage: None,
        apps: APPS
            .iter()
            .map(|app| AppMeta {
                name: (*app).into(),
                dependencies: vec![],
                clusters: clusters.clone(),
                excluded: Vec::new(),
            })
            .collect(),
        status: ContextStatus::Instantiated,
        stop_requested: false,
        rollout: None,
        created: String::new(),
    };
    let kinds = [
        ("apps/v1", "Deployment"),
        ("v1", "Service"),
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("batch/v1", "Job"),
    ];
    let mut all = Vec::new();
    for app in APPS {
        for (c, cluster) in clusters.iter().enumerate() {
            let mut bundle = serde_json::Map::new();
            let resources = (0..RESOURCES_PER_APP)
                .map(|r| {
                    let (api_version, kind) = kinds[r % kinds.len()];
                    let name = format!("{app}-resource-{r:02}");
                    let ready = (c + r) % 50 != 1;
                    let (field, object) = reported(api_version, kind, &name, ready);
                    bundle
                        .entry(field)
                        .or_insert_with(|| json!([]))
                        .as_array_mut()
                        .expect("an array")
                        .push(object);
                    let mut resource = ResourceRecord::pending(&name, kind, api_version, json!({}));
                    resource.status = if (c + r) % 50 == 0 {
                        RsyncStatus::Failed
                    } else {
                        RsyncStatus::Applied
                    };
                    resource
                })
                .collect();
            let mut record = ClusterRecord::pending(app, cluster, resources);
            record.connectivity = Connectivity::Available;
            record.cluster_status = Some(JsonText::from(serde_json::Value::Object(bundle)));
            all.push(record);
        }
    }
    (meta, all)
}

/// What a monitor reports of one object: the ResourceBundleState array it goes in and the object, ready or not.
fn reported(api_version: &str, kind: &str, name: &str, ready: bool) -> (String, serde_json::Value) {
    let metadata = json!({"name": name, "namespace": "default", "generation": 1});
    let (field, status) = match kind {
        "Deployment" => (
            "deploymentStatuses",
            if ready {
                json!({"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
                       "availableReplicas": 1})
            } else {
                json!({"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "unavailableReplicas": 1})
            },
        ),
        "Job" => (
            "jobStatuses",
            if ready {
                json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
            } else {
                json!({"failed": 1, "conditions": [{"type": "Failed", "status": "True",
                       "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]})
            },
        ),
        "Service" => ("serviceStatuses", json!({})),
        "ConfigMap" => ("configMapStatuses", json!(null)),
        _ => ("secretStatuses", json!(null)),
    };
    let mut object = json!({"apiVersion": api_version, "kind": kind, "metadata": metadata});
    if kind == "Service" {
        object["spec"] = json!({"type": "ClusterIP", "clusterIP": "10.0.0.1"});
    }
    if !status.is_null() {
        object["status"] = status;
    }
    (field.to_string(), object)
}

fn main() {
    let id = ContextId::new(2755581958183303505).expect("a valid id");
    let (meta, clusters) = records(id);
    let before = resident_bytes();
    let mut index = StatusIndex::new();
    index.apply_meta(&meta);
    for record in &clusters {
        index.apply_cluster(id, record);
    }
    let index_bytes = resident_bytes().saturating_sub(before);
    let resources = CLUSTERS * APPS.len() * RESOURCES_PER_APP;
    println!(
        "index memory (resident set growth): {index_bytes} bytes for {resources} resources = {:.0} bytes per resource",
        index_bytes as f64 / resources as f64
    );
    // The last cluster of the last app: the one a scan of an app's clusters reaches last.
    let last_record = clusters.last().expect("records").clone();
    drop(clusters);

    let mut state = StateInfo::created("2020-08-21T05:36:54.186Z".into());
    state.push(StateValue::Approved, None, "2020-08-21T05:37:28.748Z".into());
    state.push(
        StateValue::Instantiated,
        Some(id),
        "2020-08-21T05:37:28.947Z".into(),
    );
    let identity = DigIdentity {
        project: "bench",
        composite_app: "ca",
        version: "v1",
        composite_profile: "cp",
        name: "dig",
    };
    let context = index.context(id).expect("indexed");
    let answer = |query_text: &[(&str, &str)]| {
        let pairs: Vec<(String, String)> = query_text
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        parse_query(&pairs).expect("a valid query")
    };
    let summary = answer(&[("output", "summary")]);
    let all = answer(&[]);
    let ready_plain = answer(&[("status", "ready"), ("conditions", "none")]);
    let ready_default = answer(&[("status", "ready")]);
    let ready_all = answer(&[("status", "ready"), ("conditions", "all")]);
    let run = |query: &emco_status::StatusQuery, out: &mut Vec<u8>| {
        let request = StatusRequest {
            subject: identity.into(),
            state: &state,
            context: Some((id, context)),
            query,
            detail: &NoDetail,
            freshness: None,
        };
        write_status(&request, out).expect("serializes");
    };
    let mut reference_bytes = Vec::new();
    run(&all, &mut reference_bytes);
    let reference: serde_json::Value = serde_json::from_slice(&reference_bytes).expect("valid JSON");
    println!("output=all answer: {} bytes", reference_bytes.len());
    for (label, query) in [
        ("status=ready&conditions=none", &ready_plain),
        ("status=ready", &ready_default),
        ("status=ready&conditions=all", &ready_all),
    ] {
        let mut bytes = Vec::new();
        run(query, &mut bytes);
        let text = String::from_utf8_lossy(&bytes);
        println!(
            "{label} answer: {} bytes, {} resources with conditions",
            bytes.len(),
            text.matches("\"conditions\":[{\"type\":\"Ready\"").count()
        );
    }
    let typed: TypedAnswer = serde_json::from_slice(&reference_bytes).expect("the answer has the seed shape");
    assert_eq!(
        serde_json::to_vec(&typed).expect("serializes"),
        reference_bytes,
        "the typed reference writes the same bytes"
    );

    let mut criterion = Criterion::default().configure_from_args();
    criterion.bench_function("status summary (30,000 resources)", |b| {
        b.iter_batched_ref(
            || Vec::with_capacity(1024),
            |out| run(&summary, out),
            BatchSize::SmallInput,
        )
    });
    criterion.bench_function("status all (30,000 resources, engine + serialization)", |b| {
        b.iter_batched_ref(
            || Vec::with_capacity(reference_bytes.len()),
            |out| run(&all, out),
            BatchSize::SmallInput,
        )
    });
    for (label, query) in [
        ("status=ready, conditions=none (30,000 resources)", &ready_plain),
        (
            "status=ready, conditions on the not-ready (30,000 resources)",
            &ready_default,
        ),
        ("status=ready, conditions=all (30,000 resources)", &ready_all),
    ] {
        criterion.bench_function(label, |b| {
            b.iter_batched_ref(
                || Vec::with_capacity(2 * reference_bytes.len()),
                |out| run(query, out),
                BatchSize::SmallInput,
            )
        });
    }
    criterion.bench_function(
        "serialization alone of the same answer as a serde_json::Value (reference)",
        |b| {
            b.iter_batched_ref(
                || Vec::with_capacity(reference_bytes.len()),
                |out| serde_json::to_writer(out, &reference).expect("serializes"),
                BatchSize::SmallInput,
            )
        },
    );
    criterion.bench_function(
        "serialization alone of the same answer as typed structs (reference)",
        |b| {
            b.iter_batched_ref(
                || Vec::with_capacity(reference_bytes.len()),
                |out| serde_json::to_writer(out, &typed).expect("serializes"),
                BatchSize::SmallInput,
            )
        },
    );
    criterion.bench_function(
        "one cluster's record applied to the index (an app of 1,000 clusters)",
        |b| b.iter(|| index.apply_cluster(id, &last_record)),
    );
    criterion.bench_function(
        "a context's meta applied to the index (3 apps × 1,000 clusters)",
        |b| b.iter(|| index.apply_meta(&meta)),
    );
    criterion.final_summary();
}
