//! Status query speed and index memory at scale: one synthetic context of 1,000 clusters × 3 apps × 10 resources
//! (30,000 resources). Measures `output=summary`, `output=all` (engine + serialization to bytes) and, as the
//! references, serialization alone of the same answer (as a `serde_json::Value` and as typed structs); prints the
//! index's memory per resource.
//!
//! Run with `cargo bench -p emco-status`.

use criterion::{BatchSize, Criterion};
use emco_appcontext::{AppMeta, ClusterRecord, ContextMeta, ResourceRecord};
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
        apps: APPS
            .iter()
            .map(|app| AppMeta {
                name: (*app).into(),
                dependencies: vec![],
                clusters: clusters.clone(),
            })
            .collect(),
        status: ContextStatus::Instantiated,
        stop_requested: false,
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
            let resources = (0..RESOURCES_PER_APP)
                .map(|r| {
                    let (api_version, kind) = kinds[r % kinds.len()];
                    let name = format!("{app}-resource-{r:02}");
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
            all.push(record);
        }
    }
    (meta, all)
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
    criterion.final_summary();
}
