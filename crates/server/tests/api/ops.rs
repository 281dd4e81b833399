//! The operator's routes: `/healthz` and `/readyz` answer JSON without a token, `/metrics` serves Prometheus text
//! (admins only with authentication on, unless `metrics_without_auth`): request latency by route template (never
//! the raw path), store operation latency, build info, and the gauges computed from the status index.

use axum::http::StatusCode;
use emco_appcontext::{AppContexts, AppMeta, ClusterRecord, ContextMeta, ResourceRecord};
use emco_model::{Connectivity, ContextId, ContextStatus};
use emco_server::{ServerConfig, TokenAuth};
use emco_store::{Store, Txn};
use serde_json::json;

use crate::support::*;

const TOKENS: &str = "admin-token-1,alice,100,emco:admin\nviewer-token-2,ann,101,emco:viewer\n";

fn api_with_tokens(metrics_without_auth: bool) -> (Api, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, TOKENS).unwrap();
    let api = Api::with_config(
        Store::memory(),
        ServerConfig {
            token_auth: Some(TokenAuth::load(&path).unwrap()),
            metrics_without_auth,
            ..ServerConfig::default()
        },
    );
    (api, dir)
}

/// Polls `/readyz` until it answers 200 (the status index loads in the background); at most 5 s.
async fn wait_ready(api: &Api) -> Reply {
    for _ in 0..500 {
        let reply = api.get("/readyz").await;
        if reply.status == StatusCode::OK {
            return reply;
        }
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
        let body = reply.json();
        assert_eq!(body["status"], "not ready");
        assert!(
            body["reason"].as_str().unwrap().starts_with("status index:"),
            "{body}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("/readyz never answered 200");
}

/// The value of the sample `name{labels}` whose labels include every one of `labels`.
fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .find(|line| {
            let (series, _) = line.rsplit_once(' ').unwrap();
            let (metric, rest) = series.split_once('{').unwrap_or((series, ""));
            metric == name && labels.iter().all(|label| rest.contains(label))
        })
        .map(|line| line.rsplit_once(' ').unwrap().1.parse().unwrap())
}

#[tokio::test]
async fn health_and_readiness_answer_json_without_a_token() {
    let (anonymous, _dir) = api_with_tokens(false);
    let health = anonymous.get("/healthz").await.expect(StatusCode::OK);
    assert_eq!(health.json(), json!({"status": "ok"}));
    let ready = wait_ready(&anonymous).await;
    assert_eq!(ready.json(), json!({"status": "ok"}));
    // Everything else still needs a token.
    anonymous
        .get("/v2/projects")
        .await
        .expect(StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn metrics_need_an_admin_unless_opened() {
    let (anonymous, _dir) = api_with_tokens(false);
    anonymous.get("/metrics").await.expect(StatusCode::UNAUTHORIZED);
    let viewer = anonymous
        .with_token("viewer-token-2")
        .get("/metrics")
        .await
        .expect(StatusCode::FORBIDDEN);
    assert!(viewer.message().contains("emco:admin"), "{}", viewer.message());
    let admin = anonymous
        .with_token("admin-token-1")
        .get("/metrics")
        .await
        .expect(StatusCode::OK);
    assert!(
        admin.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );

    let (open, _dir) = api_with_tokens(true);
    let scraped = open.get("/metrics").await.expect(StatusCode::OK);
    let text = String::from_utf8(scraped.bytes.to_vec()).unwrap();
    let version = format!("version=\"{}\"", env!("CARGO_PKG_VERSION"));
    assert_eq!(sample(&text, "emco_build_info", &[&version]), Some(1.0));
    // Opening /metrics opens nothing else.
    open.get("/v2/projects").await.expect(StatusCode::UNAUTHORIZED);
    // Refused requests are timed under their route too.
    let text = String::from_utf8(open.get("/metrics").await.bytes.to_vec()).unwrap();
    let refused = sample(
        &text,
        "emco_http_request_duration_seconds_count",
        &["method=\"GET\"", "route=\"/v2/projects\"", "status=\"4xx\""],
    );
    assert!(refused.is_some_and(|n| n >= 1.0), "{text}");
}

#[tokio::test]
async fn request_latency_is_labelled_by_route_template_and_status_class() {
    let api = Api::new(Store::memory());
    let requests = 7;
    for n in 0..requests {
        api.get(&format!("/v2/projects/latency-probe-{n}"))
            .await
            .expect(StatusCode::NOT_FOUND);
        api.get(&format!("/no-such-path/unmatched-probe-{n}"))
            .await
            .expect(StatusCode::NOT_FOUND);
    }
    // A method is any token: one the API does not know is labelled OTHER, not as sent.
    let brew = axum::http::Method::from_bytes(b"BREWCOFFEE").unwrap();
    api.request(brew, "/v2/projects", &[], Vec::new()).await;
    api.post("/v2/projects", json!({"metadata": {"name": "metrics-project"}}))
        .await
        .expect(StatusCode::CREATED);
    let text = String::from_utf8(api.get("/metrics").await.expect(StatusCode::OK).bytes.to_vec()).unwrap();
    let count = "emco_http_request_duration_seconds_count";
    // The recorder is shared by every server of this test process, so counts are at least ours.
    let by_template = sample(
        &text,
        count,
        &[
            "method=\"GET\"",
            "route=\"/v2/projects/{project}\"",
            "status=\"4xx\"",
        ],
    )
    .unwrap_or_else(|| panic!("no series for the project route in\n{text}"));
    assert!(by_template >= f64::from(requests), "{by_template}");
    let created = sample(
        &text,
        count,
        &["method=\"POST\"", "route=\"/v2/projects\"", "status=\"2xx\""],
    );
    assert!(created.is_some_and(|n| n >= 1.0), "{text}");
    let unmatched = sample(
        &text,
        count,
        &["method=\"GET\"", "route=\"unmatched\"", "status=\"4xx\""],
    );
    assert!(unmatched.is_some_and(|n| n >= f64::from(requests)), "{text}");
    // No raw path became a label value.
    assert!(!text.contains("latency-probe"), "{text}");
    assert!(!text.contains("unmatched-probe"), "{text}");
    assert!(!text.contains("/no-such-path"), "{text}");
    assert!(!text.contains("BREWCOFFEE"), "{text}");
    assert!(
        sample(&text, count, &["method=\"OTHER\"", "route=\"/v2/projects\""]).is_some(),
        "{text}"
    );
    // Histograms have buckets, not only a sum and count.
    assert!(
        text.contains("emco_http_request_duration_seconds_bucket{"),
        "{text}"
    );
    // The requests read and wrote the store, which timed its operations.
    for op in ["get", "range", "txn"] {
        let ops = sample(
            &text,
            "emco_store_operation_duration_seconds_count",
            &[&format!("op=\"{op}\"")],
        );
        assert!(ops.is_some_and(|n| n >= 1.0), "no {op} operations in\n{text}");
    }
}

/// Writes a context `id` in `status` whose apps `a` and `b` run on `retrying` (rsync retrying) and `reachable`.
async fn write_context(store: &Store, id: u64, status: ContextStatus, retrying: &str, reachable: &str) {
    let clusters = vec![retrying.to_string(), reachable.to_string()];
    let meta = ContextMeta {
        id: ContextId::new(id).unwrap(),
        project: "p".into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "profile".into(),
        deployment_intent_group: "dig".into(),
        release: "r1".into(),
        namespace: "default".into(),
        logical_cloud: String::new(),
        owner: Default::default(),
        credentials: None,
        supersedes: None,
        lineage: None,
        apps: ["a", "b"]
            .iter()
            .map(|app| AppMeta {
                name: (*app).into(),
                dependencies: vec![],
                clusters: clusters.clone(),
                excluded: Vec::new(),
            })
            .collect(),
        status,
        stop_requested: false,
        rollout: None,
        created: "2026-01-01T00:00:00Z".into(),
    };
    let mut records = Vec::new();
    for app in ["a", "b"] {
        for cluster in &clusters {
            let manifest = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": app}});
            let resource = ResourceRecord::pending(app, "ConfigMap", "v1", manifest);
            let mut record = ClusterRecord::pending(app, cluster, vec![resource]);
            record.connectivity = if cluster == retrying {
                Connectivity::Retrying
            } else {
                Connectivity::Available
            };
            records.push(record);
        }
    }
    let (guard, ops) = AppContexts::create_txn_parts(&meta, &records);
    assert!(
        store
            .txn(Txn::new().when([guard]).and_then(ops))
            .await
            .unwrap()
            .succeeded
    );
}

#[tokio::test]
async fn gauges_count_operations_in_progress_and_the_clusters_they_retry() {
    let api = Api::new(Store::memory());
    let gauges = |text: &str| {
        (
            sample(text, "emco_operations_in_progress", &[]),
            sample(text, "emco_clusters_retrying", &[]),
        )
    };
    wait_ready(&api).await;
    let text = String::from_utf8(api.get("/metrics").await.bytes.to_vec()).unwrap();
    assert_eq!(gauges(&text), (Some(0.0), Some(0.0)), "{text}");

    // Two operations in progress retrying the same cluster count it once; a finished context's stale
    // connectivity does not count.
    write_context(
        &api.store,
        11,
        ContextStatus::Instantiating,
        "prov+edge01",
        "prov+edge02",
    )
    .await;
    write_context(
        &api.store,
        12,
        ContextStatus::Terminating,
        "prov+edge01",
        "prov+edge03",
    )
    .await;
    write_context(
        &api.store,
        13,
        ContextStatus::Instantiated,
        "prov+edge09",
        "prov+edge02",
    )
    .await;
    let mut seen = (None, None);
    for _ in 0..500 {
        let text = String::from_utf8(api.get("/metrics").await.bytes.to_vec()).unwrap();
        seen = gauges(&text);
        if seen == (Some(2.0), Some(1.0)) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("gauges never reached 2 operations and 1 retrying cluster: {seen:?}");
}
