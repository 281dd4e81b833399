//! The status query: golden tests that rebuild every example of seeds 000 and 001 (statuses set through the
//! AppContext API, answers compared as JSON text, so key order counts), EMCO 22.x mode, and bad parameters.

use axum::http::StatusCode;
use emco_appcontext::{
    AppContexts, AppMeta, Catalog, ClusterRecord, ContextMeta, JsonText, Kind, ResourcePath, ResourceRecord,
};
use emco_model::{Connectivity, ContextId, ContextStatus, RsyncStatus, StateInfo};
use emco_store::Txn;
use serde_json::{Value as Json, json};

use crate::support::*;

fn golden(name: &str) -> Json {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.json"));
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Equal as JSON text: same keys, nesting, order and values.
#[track_caller]
fn assert_same_json(actual: &Json, expected: &Json) {
    let (actual_text, expected_text) = (
        serde_json::to_string(actual).unwrap(),
        serde_json::to_string(expected).unwrap(),
    );
    assert!(
        actual_text == expected_text,
        "answer differs from the seed\n--- answer\n{}\n--- seed\n{}",
        serde_json::to_string_pretty(actual).unwrap(),
        serde_json::to_string_pretty(expected).unwrap()
    );
}

/// The vFW resources of the seeds: (app, name, apiVersion, kind).
const RESOURCES: [(&str, &str, &str, &str); 6] = [
    ("packetgen", "fw0-packetgen", "apps/v1", "Deployment"),
    ("packetgen", "packetgen-service", "v1", "Service"),
    ("firewall", "fw0-firewall", "apps/v1", "Deployment"),
    ("sink", "fw0-sink", "apps/v1", "Deployment"),
    ("sink", "sink-configmap", "v1", "ConfigMap"),
    ("sink", "sink-service", "v1", "Service"),
];
const CLUSTERS: [&str; 2] = ["vfw-cluster-provider+edge01", "vfw-cluster-provider+edge02"];

fn dig_path() -> ResourcePath {
    ResourcePath::new(
        Kind::DeploymentIntentGroup,
        ["testvfw", "compositevfw", "v1", "vfw_deployment_intent_group"]
            .map(String::from)
            .to_vec(),
    )
}

/// Replaces the DIG's lifecycle history with a seed's.
async fn write_state(api: &Api, state: &Json) {
    let state: StateInfo = serde_json::from_value(state.clone()).unwrap();
    api.store
        .txn(Txn::new().and_then([Catalog::state_op(&dig_path(), &state)]))
        .await
        .unwrap();
}

/// Writes a vFW context with id `id`: every resource in `rsync` status, and for each (app, cluster) the bundle
/// `bundle` returns as the cluster's report.
async fn write_context(
    api: &Api,
    id: u64,
    status: ContextStatus,
    rsync: RsyncStatus,
    bundle: impl Fn(&str, &str) -> Option<Json>,
) {
    let manifests: Vec<(&str, Json)> = RESOURCES
        .iter()
        .map(|(app, name, api_version, kind)| {
            (
                *app,
                json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}),
            )
        })
        .collect();
    write_context_with(api, id, status, rsync, &manifests, bundle).await;
}

/// Writes a vFW context with id `id` whose resources are `manifests` (app, staged manifest), every one in `rsync`
/// status, and for each (app, cluster) the bundle `bundle` returns as the cluster's report.
async fn write_context_with(
    api: &Api,
    id: u64,
    status: ContextStatus,
    rsync: RsyncStatus,
    manifests: &[(&str, Json)],
    bundle: impl Fn(&str, &str) -> Option<Json>,
) {
    let id = ContextId::new(id).unwrap();
    let meta = ContextMeta {
        id,
        project: "testvfw".into(),
        composite_app: "compositevfw".into(),
        composite_app_version: "v1".into(),
        composite_profile: "vfw_composite-profile".into(),
        deployment_intent_group: "vfw_deployment_intent_group".into(),
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
                clusters: CLUSTERS.map(String::from).to_vec(),
                excluded: Vec::new(),
            })
            .collect(),
        status,
        stop_requested: false,
        rollout: None,
        created: "2020-08-21T05:39:34.64Z".into(),
    };
    let mut records = Vec::new();
    for app in APPS {
        for cluster in CLUSTERS {
            let resources = manifests
                .iter()
                .filter(|(owner, _)| *owner == app)
                .map(|(_, manifest)| {
                    let text = |key: &str| manifest[key].as_str().unwrap_or_default().to_string();
                    let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
                    let mut resource =
                        ResourceRecord::pending(name, &text("kind"), &text("apiVersion"), manifest.clone());
                    resource.status = rsync;
                    resource
                })
                .collect();
            let mut record = ClusterRecord::pending(app, cluster, resources);
            record.connectivity = Connectivity::Available;
            record.cluster_status = bundle(app, cluster).map(JsonText::from);
            records.push(record);
        }
    }
    let (guard, ops) = AppContexts::create_txn_parts(&meta, &records);
    assert!(
        api.store
            .txn(Txn::new().when([guard]).and_then(ops))
            .await
            .unwrap()
            .succeeded
    );
}

/// The world of seed 000's examples: two instantiations, the first terminated, the second applied, and the sink
/// ConfigMaps reported by both clusters.
async fn seed_world() -> Api {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    write_state(&api, &golden("default")["state"]).await;
    write_context(
        &api,
        2621114006130701074,
        ContextStatus::Terminated,
        RsyncStatus::Deleted,
        |_, _| None,
    )
    .await;
    let detail = golden("cluster-detail");
    let configmaps: Vec<Json> = detail["apps"][0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| cluster["resources"][0]["detail"].clone())
        .collect();
    write_context(&api, 2755581958183303505, ContextStatus::Instantiated, RsyncStatus::Applied, move |app, cluster| {
        let index = CLUSTERS.iter().position(|c| *c == cluster).unwrap();
        (app == "sink").then(|| json!({"ready": false, "resourceCount": 1, "configMapStatuses": [configmaps[index].clone()], "deploymentStatuses": [], "serviceStatuses": []}))
    })
    .await;
    api
}

use emco_store::Store;

const STATUS: &str = "/v2/projects/testvfw/composite-apps/compositevfw/v1/deployment-intent-groups/vfw_deployment_intent_group/status";

#[tokio::test]
async fn golden_default_summary_cluster_detail_and_instance_queries() {
    let api = seed_world().await;
    let cases = [
        ("", "default"),
        ("?output=summary", "summary"),
        (
            "?output=detail&type=cluster&app=sink&resource=sink-configmap",
            "cluster-detail",
        ),
        (
            "?output=all&type=rsync&resource=fw0-packetgen&resource=sink-configmap&instance=2621114006130701074",
            "instance",
        ),
    ];
    for (query, name) in cases {
        let reply = api.get(&format!("{STATUS}{query}")).await.expect(StatusCode::OK);
        assert_eq!(reply.headers["content-type"], "application/json");
        assert_same_json(&reply.json(), &golden(name));
    }
}

#[tokio::test]
async fn golden_cluster_filter_query() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let expected = golden("cluster-filter");
    write_state(&api, &expected["state"]).await;
    write_context(
        &api,
        3983785381246146818,
        ContextStatus::Instantiated,
        RsyncStatus::Applied,
        |_, _| None,
    )
    .await;
    let reply = api
        .get(&format!("{STATUS}?cluster=vfw-cluster-provider%2Bedge02"))
        .await
        .expect(StatusCode::OK);
    assert_same_json(&reply.json(), &expected);
}

#[tokio::test]
async fn answers_follow_the_lifecycle_and_every_write() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    // Before the first instantiate: identity and state only.
    let before = api.get(STATUS).await.expect(StatusCode::OK).json();
    let keys: Vec<&str> = before.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "project",
            "composite-app-name",
            "composite-app-version",
            "composite-profile-name",
            "name",
            "state"
        ]
    );
    let emco22 = api
        .get(&format!("{STATUS}?status=deployed"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(emco22["states"]["statusctxid"], "");
    assert!(emco22.get("deployedStatus").is_none());

    api.approve_and_instantiate_vfw().await;
    // Read-your-writes: the answer right after instantiate already has the new context.
    let summary = api
        .get(&format!("{STATUS}?output=summary"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(summary["status"], "Instantiating");
    assert_eq!(summary["rsync-status"], json!({"Pending": 12}));
    assert!(summary.get("apps").is_none());
    // Without a monitor, nothing is known of the clusters: every resource is Unknown.
    let cluster = api
        .get(&format!("{STATUS}?type=cluster"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(cluster["cluster-status"], json!({"Unknown": 12}));
    assert_eq!(
        cluster["apps"][0]["clusters"][0]["resources"][0]["cluster-status"],
        "Unknown"
    );

    // A status written through the AppContext API shows at once, with filters changing the counts.
    let contexts = AppContexts::new(api.store.clone());
    let id = contexts.ids().await.unwrap()[0];
    contexts
        .update_cluster(id, "sink", CLUSTERS[1], |record| {
            record.resources[0].status = RsyncStatus::Applied;
            record.resources[1].status = RsyncStatus::Failed;
            record.resources[1].error = Some("admission webhook denied".into());
            record.connectivity = Connectivity::Available;
        })
        .await
        .unwrap();
    let all = api.get(STATUS).await.expect(StatusCode::OK).json();
    assert_eq!(
        all["rsync-status"],
        json!({"Pending": 10, "Applied": 1, "Failed": 1})
    );
    let filtered = api
        .get(&format!(
            "{STATUS}?app=sink&cluster=vfw-cluster-provider%2Bedge02&output=summary"
        ))
        .await
        .json();
    assert_eq!(
        filtered["rsync-status"],
        json!({"Pending": 1, "Applied": 1, "Failed": 1})
    );
    // Records keep apply order (ConfigMap, Service, Deployment), so the writes above hit sink-configmap and
    // sink-service.
    let one = api.get(&format!("{STATUS}?resource=sink-configmap")).await.json();
    assert_eq!(one["rsync-status"], json!({"Pending": 1, "Applied": 1}));
    assert_eq!(
        one["apps"].as_array().unwrap().len(),
        1,
        "apps without a matching resource are left out"
    );
    let detail = api
        .get(&format!(
            "{STATUS}?output=detail&app=firewall&cluster=vfw-cluster-provider%2Bedge01"
        ))
        .await
        .json();
    let manifest = &detail["apps"][0]["clusters"][0]["resources"][0]["detail"];
    assert_eq!(
        manifest["spec"]["replicas"], 2,
        "rsync detail is the rendered manifest"
    );

    // EMCO 22.x: camelCase, connectivity, counts.
    let deployed = api
        .get(&format!("{STATUS}?status=deployed&app=sink"))
        .await
        .expect(StatusCode::OK)
        .json();
    let keys: Vec<&str> = deployed.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "project",
            "compositeApp",
            "compositeAppVersion",
            "compositeProfile",
            "name",
            "states",
            "deployedStatus",
            "deployedCounts",
            "apps",
            "readiness"
        ]
    );
    assert_eq!(deployed["readiness"]["ready"], false, "a resource failed");
    assert_eq!(deployed["states"]["statusctxid"], id.to_string());
    assert_eq!(
        deployed["states"]["actions"][2],
        json!({"state": "Instantiated", "instance": id.to_string(), "time": deployed["states"]["actions"][2]["time"], "revision": 1})
    );
    assert_eq!(
        deployed["deployedCounts"],
        json!({"Pending": 4, "Applied": 1, "Failed": 1})
    );
    let edge02 = &deployed["apps"][0]["clusters"][1];
    assert_eq!(
        (
            edge02["clusterProvider"].as_str(),
            edge02["cluster"].as_str(),
            edge02["connectivity"].as_str()
        ),
        (Some("vfw-cluster-provider"), Some("edge02"), Some("Available"))
    );
    let names: Vec<&str> = edge02["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["fw0-sink", "sink-configmap", "sink-service"],
        "listed in <name>+<Kind> order"
    );
    assert_eq!(edge02["resources"][1]["deployedStatus"], "Applied");
    assert_eq!(edge02["resources"][2]["deployedStatus"], "Failed");
    let ready = api
        .get(&format!("{STATUS}?status=ready&output=summary"))
        .await
        .json();
    assert_eq!(ready["readyStatus"], "NotReady");
    assert_eq!(
        ready["readyCounts"],
        json!({"NotPresent": 12}),
        "no cluster report yet: tracked kinds are NotPresent"
    );

    // List queries.
    let apps = api.get(&format!("{STATUS}?apps")).await.json();
    assert_eq!(apps["apps"], json!(["firewall", "packetgen", "sink"]));
    let clusters = api.get(&format!("{STATUS}?clusters&app=firewall")).await.json();
    assert_eq!(
        clusters["clustersByApp"],
        json!([{"app": "firewall", "clusters": [{"clusterProvider": "vfw-cluster-provider", "cluster": "edge01"}, {"clusterProvider": "vfw-cluster-provider", "cluster": "edge02"}]}])
    );
    let resources = api
        .get(&format!(
            "{STATUS}?resources&app=packetgen&cluster=vfw-cluster-provider%2Bedge01"
        ))
        .await
        .json();
    assert_eq!(
        resources["resourcesByApp"][0]["resources"][1],
        json!({"name": "packetgen-service", "GVK": {"Group": "", "Version": "v1", "Kind": "Service"}})
    );

    // Terminate: the status follows the context.
    api.post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(
        api.get(&format!("{STATUS}?output=summary")).await.json()["status"],
        "Terminating"
    );
}

#[tokio::test]
async fn a_retrying_cluster_says_why_in_detail_and_beside_connectivity() {
    let api = seed_world().await;
    let reason = "HTTP 503 Service Unavailable, retrying after 2s";
    let id = ContextId::new(2755581958183303505).unwrap();
    AppContexts::new(api.store.clone())
        .update_cluster(id, "sink", CLUSTERS[0], |record| {
            record.connectivity = Connectivity::Retrying;
            record.connectivity_reason = Some(reason.into());
            for resource in &mut record.resources {
                resource.status = RsyncStatus::Retrying;
            }
        })
        .await
        .unwrap();
    for query in ["output=detail&app=sink", "output=detail&type=cluster&app=sink"] {
        let detail = api
            .get(&format!("{STATUS}?{query}"))
            .await
            .expect(StatusCode::OK)
            .json();
        let clusters = &detail["apps"][0]["clusters"];
        let keys: Vec<&str> = clusters[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "cluster-provider",
                "cluster",
                "connectivity",
                "connectivity-reason",
                "resources"
            ],
            "{query}"
        );
        assert_eq!(
            (&clusters[0]["connectivity"], &clusters[0]["connectivity-reason"]),
            (&json!("Retrying"), &json!(reason)),
            "{query}"
        );
        assert!(
            clusters[1].get("connectivity").is_none(),
            "no reason, no field: {query}"
        );
    }
    let detail = api.get(&format!("{STATUS}?output=detail&app=sink")).await.json();
    assert_eq!(
        detail["apps"][0]["clusters"][0]["resources"][0]["rsync-status"],
        "Retrying"
    );
    // The seed's other outputs stay as the seed has them.
    let all = api.get(&format!("{STATUS}?app=sink")).await.json();
    assert!(all["apps"][0]["clusters"][0].get("connectivity").is_none());
    assert!(all["apps"][0]["clusters"][0].get("connectivity-reason").is_none());
    // EMCO 22.x: beside connectivity, whenever there is a reason.
    let deployed = api
        .get(&format!("{STATUS}?status=deployed&app=sink"))
        .await
        .json();
    let clusters = &deployed["apps"][0]["clusters"];
    assert_eq!(
        (&clusters[0]["connectivity"], &clusters[0]["connectivityReason"]),
        (&json!("Retrying"), &json!(reason))
    );
    assert!(clusters[1].get("connectivityReason").is_none());
    assert_eq!(deployed["deployedCounts"], json!({"Applied": 3, "Retrying": 3}));
}

#[tokio::test]
async fn bad_parameters_are_400_naming_the_parameter() {
    let api = seed_world().await;
    let cases = [
        ("output=foo", "'output'", "summary, all or detail"),
        ("type=bar", "'type'", "rsync or cluster"),
        ("status=x", "'status'", "deployed or ready"),
        ("cluster=edge02", "'cluster'", "%2B"),
        ("cluster=vfw-cluster-provider+edge02", "'cluster'", "%2B"),
        ("app=", "'app'", "empty"),
        ("instance=x", "'instance'", "context id"),
    ];
    for (query, parameter, hint) in cases {
        let reply = api
            .get(&format!("{STATUS}?{query}"))
            .await
            .expect(StatusCode::BAD_REQUEST);
        assert_eq!(reply.code(), "InvalidQuery", "{query}");
        assert!(
            reply.message().contains(parameter) && reply.message().contains(hint),
            "{query}: {}",
            reply.message()
        );
    }
    // Well-formed filters naming what does not exist: 404, naming the parameter and what there is.
    for (query, parameter, hint) in [
        ("app=nosuch", "'app'", "'nosuch' is not an app of composite app"),
        (
            "instance=42",
            "'instance'",
            "2621114006130701074, 2755581958183303505",
        ),
    ] {
        let reply = api
            .get(&format!("{STATUS}?{query}"))
            .await
            .expect(StatusCode::NOT_FOUND);
        assert!(
            reply.message().contains(parameter) && reply.message().contains(hint),
            "{query}: {}",
            reply.message()
        );
    }
    for missing in [
        "/v2/projects/nope/composite-apps/compositevfw/v1/deployment-intent-groups/vfw_deployment_intent_group/status",
        "/v2/projects/testvfw/composite-apps/compositevfw/v9/deployment-intent-groups/vfw_deployment_intent_group/status",
        "/v2/projects/testvfw/composite-apps/compositevfw/v1/deployment-intent-groups/nope/status",
    ] {
        api.get(missing).await.expect(StatusCode::NOT_FOUND);
    }
}

/// A Secret staged by a context and reported by a (hostile or older) monitor with its data: `output=detail` shows
/// its keys with `<redacted: N bytes>` and never a value, in every view and shape.
#[tokio::test]
async fn secret_values_never_appear_in_details() {
    const PASSWORD: &str = "s3cr3t-hunter2-value";
    const PASSWORD_B64: &str = "czNjcjN0LWh1bnRlcjItdmFsdWU=";
    const TOKEN: &str = "plain-token-value-xyz";
    const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
    let applied = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-secret"},
        "data": {"password": PASSWORD_B64}, "stringData": {"token": TOKEN}})
    .to_string();
    let staged = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db-secret", "annotations": {LAST_APPLIED: applied}},
        "type": "Opaque", "data": {"password": PASSWORD_B64}, "stringData": {"token": TOKEN}});
    let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sink-configmap"},
        "data": {"visible": "yes"}});
    // What a monitor that does not strip Secret data would report; without type fields, as list items come.
    let reported = json!({"metadata": {"name": "db-secret", "annotations": {LAST_APPLIED: applied}},
        "type": "Opaque", "data": {"password": PASSWORD_B64}});

    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    write_state(&api, &golden("default")["state"]).await;
    write_context_with(
        &api,
        2755581958183303505,
        ContextStatus::Instantiated,
        RsyncStatus::Applied,
        &[("sink", staged), ("sink", configmap)],
        move |app, _| {
            (app == "sink").then(|| {
                json!({"ready": true, "resourceCount": 1, "secretStatuses": [reported.clone()],
                    "configMapStatuses": [], "resourceStatuses": []})
            })
        },
    )
    .await;

    let cluster = "vfw-cluster-provider%2Bedge01";
    let redacted_password = json!({"password": "<redacted: 20 bytes>"});
    let redacted_token = json!({"token": "<redacted: 21 bytes>"});
    for query in [
        "output=detail&type=rsync",
        "output=detail&type=cluster",
        "output=detail&status=deployed",
        "output=detail&status=ready",
    ] {
        let reply = api
            .get(&format!("{STATUS}?{query}&app=sink&cluster={cluster}"))
            .await
            .expect(StatusCode::OK);
        let body = String::from_utf8_lossy(&reply.bytes).into_owned();
        for value in [PASSWORD, PASSWORD_B64, TOKEN] {
            assert!(
                !body.contains(value),
                "{query}: the answer shows {value:?}: {body}"
            );
        }
        let answer = reply.json();
        let resources = answer["apps"][0]["clusters"][0]["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{query}: no resources: {body}"));
        let secret = resources
            .iter()
            .find(|resource| resource["name"] == "db-secret")
            .unwrap_or_else(|| panic!("{query}: no db-secret: {body}"));
        let detail = &secret["detail"];
        assert_eq!(detail["data"], redacted_password, "{query}: {body}");
        assert_eq!(
            detail["metadata"]["annotations"][LAST_APPLIED],
            format!("<redacted: {} bytes>", applied.len()),
            "{query}"
        );
        if query.contains("rsync") || query.contains("deployed") {
            assert_eq!(detail["stringData"], redacted_token, "{query}: {body}");
            assert_eq!(
                detail["kind"], "Secret",
                "{query}: the rest of the manifest stays"
            );
            let configmap = resources
                .iter()
                .find(|resource| resource["name"] == "sink-configmap")
                .unwrap_or_else(|| panic!("{query}: no sink-configmap: {body}"));
            assert_eq!(
                configmap["detail"]["data"],
                json!({"visible": "yes"}),
                "{query}: other kinds are untouched"
            );
        } else {
            assert_eq!(detail["type"], "Opaque", "{query}: the rest of the object stays");
        }
    }
}

/// A large answer is sent as it is written, in chunks (no length known beforehand, no whole copy), from a snapshot
/// of the context: a change the index applies while a client is still reading shows in the next answer, not in
/// the one being read, and the server answers other requests meanwhile.
#[tokio::test]
async fn a_large_answer_is_streamed_from_a_snapshot_while_the_index_moves_on() {
    use axum::http::{Method, Request};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    write_state(&api, &golden("default")["state"]).await;
    let manifests: Vec<(&str, Json)> = (0..8_000)
        .map(|n| {
            let name = format!("sink-config-{n:05}");
            (
                "sink",
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
            )
        })
        .collect();
    let id = 2755581958183303505;
    write_context_with(
        &api,
        id,
        ContextStatus::Instantiated,
        RsyncStatus::Applied,
        &manifests,
        |_, _| None,
    )
    .await;
    let query = format!("{STATUS}?output=all&type=rsync&app=sink");
    let whole = api.get(&query).await.expect(StatusCode::OK).bytes;
    assert!(whole.len() > 1_000_000, "{} bytes", whole.len());

    let response = api
        .router
        .clone()
        .oneshot(
            Request::builder()
                .method(Method::GET)
                .uri(&query)
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers().get("content-length").is_none(),
        "a streamed answer has no length: {:?}",
        response.headers()
    );
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert!(first.len() < whole.len(), "the first chunk is the whole answer");

    // While the client holds the rest, a resource fails on edge01 and the index applies it.
    AppContexts::new(api.store.clone())
        .update_cluster(ContextId::new(id).unwrap(), "sink", CLUSTERS[0], |record| {
            record.resources[0].status = RsyncStatus::Failed;
        })
        .await
        .unwrap();
    let after = api.get(&query).await.expect(StatusCode::OK).json();
    assert_eq!(after["rsync-status"]["Failed"], 1, "{}", after["rsync-status"]);

    let mut read = first.to_vec();
    let mut frames = 1;
    while let Some(frame) = body.frame().await {
        read.extend_from_slice(&frame.unwrap().into_data().unwrap());
        frames += 1;
    }
    assert!(frames > 2, "{frames} chunks");
    assert!(
        read == whole,
        "the answer read meanwhile is the snapshot taken when it was asked"
    );
}
