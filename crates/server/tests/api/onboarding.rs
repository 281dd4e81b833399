//! The vFW onboarding of seeds 000/001, every DIG lifecycle transition allowed and refused, chart rendering with
//! overrides, persistence across a restart, and malformed requests with their codes and messages.

use axum::http::{Method, StatusCode, header};
use emco_appcontext::AppContexts;
use emco_model::{ContextStatus, RsyncStatus};
use emco_server::ServerConfig;
use emco_store::Store;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn vfw_onboards_approves_and_instantiates_into_twelve_pending_resources() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    assert_eq!(api.states().await, ["Created"]);

    let approved = api
        .post_empty(&format!("{DIG}/approve"))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(approved.headers[header::LOCATION], format!("{DIG}/status"));
    api.post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(api.states().await, ["Created", "Approved", "Instantiated"]);

    let contexts = AppContexts::new(api.store.clone());
    let ids = contexts.ids().await.unwrap();
    assert_eq!(ids.len(), 1);
    let meta = contexts.meta(ids[0]).await.unwrap();
    assert_eq!(meta.status, ContextStatus::Instantiating);
    assert_eq!(meta.namespace, "default");
    assert_eq!(meta.release, "fw0");
    let order: Vec<_> = meta.apps.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(order, APPS, "apps keep the order they were onboarded in");
    for app in &meta.apps {
        assert_eq!(
            app.clusters,
            ["vfw-cluster-provider+edge01", "vfw-cluster-provider+edge02"],
            "{}",
            app.name
        );
    }

    let records = contexts.clusters(ids[0]).await.unwrap();
    assert_eq!(records.len(), 6, "3 apps x 2 clusters");
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for record in &records {
        for resource in &record.resources {
            assert_eq!(resource.status, RsyncStatus::Pending);
            keys.push((record.cluster.clone(), record.app.clone(), resource.key()));
        }
    }
    assert_eq!(keys.len(), 12);
    let edge02: Vec<_> = keys
        .iter()
        .filter(|k| k.0 == "vfw-cluster-provider+edge02")
        .map(|k| k.2.as_str())
        .collect();
    let mut expected = [
        "fw0-firewall+Deployment",
        "fw0-packetgen+Deployment",
        "packetgen-service+Service",
        "sink-configmap+ConfigMap",
        "fw0-sink+Deployment",
        "sink-service+Service",
    ];
    let mut found = edge02.clone();
    expected.sort_unstable();
    found.sort_unstable();
    assert_eq!(found, expected);

    // The DIG's overrideValues reached the firewall chart; the profile and chart defaults the others.
    let firewall = records.iter().find(|r| r.app == "firewall").unwrap();
    assert_eq!(firewall.resources[0].object()["spec"]["replicas"], 2);
    assert_eq!(
        firewall.resources[0].object()["spec"]["template"]["spec"]["containers"][0]["image"],
        "virtlet.cloud/ubuntu/16.04:latest"
    );
    let sink = records.iter().find(|r| r.app == "sink").unwrap();
    let kinds: Vec<_> = sink.resources.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["ConfigMap", "Service", "Deployment"],
        "apply order is Helm's install order"
    );
    assert_eq!(
        sink.resources[0].object()["data"]["protected_net_gw"],
        "192.168.20.100"
    );
}

#[tokio::test]
async fn lifecycle_transitions_are_allowed_and_refused_as_the_seeds_say() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let op = |name: &str| format!("{DIG}/{name}");

    // Created: only approve.
    for refused in ["instantiate", "terminate", "stop"] {
        let reply = api.post_empty(&op(refused)).await.expect(StatusCode::CONFLICT);
        assert_eq!(reply.code(), "InvalidState", "{refused}");
        assert!(
            reply.message().contains("vfw_deployment_intent_group is Created")
                || reply
                    .message()
                    .contains("'vfw_deployment_intent_group' is Created"),
            "{}",
            reply.message()
        );
    }
    api.post_empty(&op("approve")).await.expect(StatusCode::ACCEPTED);
    api.post_empty(&op("approve")).await.expect(StatusCode::ACCEPTED); // approving twice is harmless
    assert_eq!(api.states().await, ["Created", "Approved"]);

    // Modifying an approved DIG or its intents returns it to Created.
    api.put(
        DIG,
        json!({"metadata": {"name": "vfw_deployment_intent_group", "description": "changed"},
                         "spec": {"compositeProfile": "vfw_composite-profile", "version": "fw0"}}),
    )
    .await
    .expect(StatusCode::OK);
    assert_eq!(api.states().await, ["Created", "Approved", "Created"]);
    api.post_empty(&op("approve")).await.expect(StatusCode::ACCEPTED);
    api.post(
        &format!("{DIG}/generic-placement-intents"),
        json!({"metadata": {"name": "extra"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    assert_eq!(api.states().await.last().map(String::as_str), Some("Created"));
    api.delete(&format!("{DIG}/generic-placement-intents/extra"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.post_empty(&op("approve")).await.expect(StatusCode::ACCEPTED);

    // Instantiated: no modification, no deletion, no second instantiate.
    api.post_empty(&op("instantiate"))
        .await
        .expect(StatusCode::ACCEPTED);
    let reply = api
        .post_empty(&op("instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        reply.message().contains("already been instantiated"),
        "{}",
        reply.message()
    );
    // A change waits for /update (issue #20): allowed, recorded, the state unchanged; parts stay until terminated.
    let reply = api.put(DIG, json!({"metadata": {"name": "vfw_deployment_intent_group", "description": "changed"}, "spec": {"compositeProfile": "vfw_composite-profile", "version": "fw0"}})).await;
    reply.expect(StatusCode::OK);
    assert_eq!(
        api.states().await.last().map(String::as_str),
        Some("Instantiated")
    );
    let reply = api
        .delete(&format!(
            "{DIG}/generic-placement-intents/fw-placement-intent/app-intents/sink-placement"
        ))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        reply.message().contains("cannot be deleted"),
        "{}",
        reply.message()
    );
    let reply = api.delete(DIG).await.expect(StatusCode::CONFLICT);
    assert!(
        reply.message().contains("terminated before it can be deleted"),
        "{}",
        reply.message()
    );
    api.post_empty(&op("approve")).await.expect(StatusCode::CONFLICT);

    // Stop while instantiating (nothing applies resources here, so the context is still Instantiating).
    api.post_empty(&op("stop")).await.expect(StatusCode::ACCEPTED);
    assert_eq!(
        api.states().await.last().map(String::as_str),
        Some("InstantiateStopped")
    );
    api.post_empty(&op("stop")).await.expect(StatusCode::CONFLICT);

    // Terminate, then delete only after the termination completed.
    let first_context = AppContexts::new(api.store.clone()).ids().await.unwrap()[0];
    api.post_empty(&op("terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
    let contexts = AppContexts::new(api.store.clone());
    assert_eq!(
        contexts.meta(first_context).await.unwrap().status,
        ContextStatus::Terminating
    );
    api.post_empty(&op("terminate"))
        .await
        .expect(StatusCode::CONFLICT);
    let reply = api
        .post_empty(&op("instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        reply.message().contains("still terminating"),
        "{}",
        reply.message()
    );
    let reply = api.delete(DIG).await.expect(StatusCode::CONFLICT);
    assert!(
        reply.message().contains("not completed terminating"),
        "{}",
        reply.message()
    );
    api.post_empty(&op("stop")).await.expect(StatusCode::ACCEPTED);
    wait_for_status(&contexts, first_context, ContextStatus::TerminateFailed).await;

    // Re-instantiate from TerminateStopped: a new context id, the old one kept.
    api.post_empty(&op("instantiate"))
        .await
        .expect(StatusCode::ACCEPTED);
    let ids = contexts.ids().await.unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        api.states().await,
        [
            "Created",
            "Approved",
            "Created",
            "Approved",
            "Created",
            "Approved",
            "Instantiated",
            "InstantiateStopped",
            "Terminated",
            "TerminateStopped",
            "Instantiated"
        ]
    );
    api.post_empty(&op("terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
    api.post_empty(&op("stop")).await.expect(StatusCode::ACCEPTED);
    let second = ids.into_iter().find(|id| *id != first_context).unwrap();
    wait_for_status(&contexts, second, ContextStatus::TerminateFailed).await;

    // Delete: children first, then the DIG, which takes its contexts with it.
    let reply = api.delete(DIG).await.expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "HasChildren");
    for app in APPS {
        api.delete(&format!(
            "{DIG}/generic-placement-intents/fw-placement-intent/app-intents/{app}-placement"
        ))
        .await
        .expect(StatusCode::NO_CONTENT);
    }
    api.delete(&format!("{DIG}/generic-placement-intents/fw-placement-intent"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.delete(&format!("{DIG}/intents/fw-deployment-intent"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.delete(DIG).await.expect(StatusCode::NO_CONTENT);
    assert!(
        contexts.ids().await.unwrap().is_empty(),
        "the DIG's contexts are deleted with it"
    );
    api.get(DIG).await.expect(StatusCode::NOT_FOUND);
}

async fn wait_for_status(contexts: &AppContexts, id: emco_model::ContextId, status: ContextStatus) {
    for _ in 0..200 {
        if contexts.meta(id).await.unwrap().status == status {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("context {id} never reached {status}");
}

#[tokio::test]
async fn resources_list_get_replace_and_delete_as_emco_does() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let projects = api.get("/v2/projects").await.expect(StatusCode::OK).json();
    assert_eq!(
        projects,
        json!([{"metadata": {"name": "testvfw", "description": "", "userData1": "", "userData2": ""}}])
    );
    let apps: Vec<String> = api
        .get(&format!("{CA}/apps"))
        .await
        .expect(StatusCode::OK)
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(apps, APPS, "lists keep creation order");

    // PUT: 200 for an update, 201 for a new name; the name in the body must match the URL.
    api.put(
        PROJECT,
        json!({"metadata": {"name": "testvfw", "description": "vFW"}}),
    )
    .await
    .expect(StatusCode::OK);
    assert_eq!(api.get(PROJECT).await.json()["metadata"]["description"], "vFW");
    api.put("/v2/projects/other", json!({"metadata": {"name": "other"}}))
        .await
        .expect(StatusCode::CREATED);
    let reply = api
        .put("/v2/projects/other", json!({"metadata": {"name": "else"}}))
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(reply.message().contains("Mismatched name"), "{}", reply.message());

    // Apps by Accept header: JSON metadata, the chart bytes, or both.
    let app = format!("{CA}/apps/firewall");
    assert_eq!(
        api.call(Method::GET, &app, None, vec![], Some("application/json"))
            .await
            .expect(StatusCode::OK)
            .json()["metadata"]["name"],
        "firewall"
    );
    let file = api
        .call(Method::GET, &app, None, vec![], Some("application/octet-stream"))
        .await
        .expect(StatusCode::OK);
    assert_eq!(file.bytes.as_ref(), chart("firewall").as_slice());
    let both = api
        .call(Method::GET, &app, None, vec![], Some("multipart/form-data"))
        .await
        .expect(StatusCode::OK);
    assert!(
        both.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("multipart/form-data; boundary=")
    );
    assert!(
        both.bytes
            .windows(b"name=\"metadata\"".len())
            .any(|w| w == b"name=\"metadata\"")
    );
    api.call(Method::GET, &app, None, vec![], Some("text/html"))
        .await
        .expect(StatusCode::MULTIPLE_CHOICES);

    // A kubeconfig goes in and never comes out.
    for uri in [
        format!("{PROVIDER}/clusters/edge01"),
        format!("{PROVIDER}/clusters"),
        format!("{PROVIDER}/clusters?withLabels=true"),
    ] {
        let reply = api
            .call(Method::GET, &uri, None, vec![], Some("multipart/form-data"))
            .await
            .expect(StatusCode::OK);
        let text = String::from_utf8_lossy(&reply.bytes);
        assert!(
            !text.contains("secret-token") && !text.contains("server:"),
            "{uri}: {text}"
        );
    }
    let labelled = api
        .get(&format!("{PROVIDER}/clusters?label=edge-cluster"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(labelled, json!(["edge01", "edge02"]));
    let profiles = api
        .get(&format!(
            "{CA}/composite-profiles/vfw_composite-profile/profiles?app=sink"
        ))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(profiles.as_array().unwrap().len(), 1);

    // References and children guard deletes.
    let reply = api
        .delete(&format!("{CA}/apps/sink"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "Referenced");
    assert!(
        reply.message().contains("AppProfile 'sink-profile'")
            && reply.message().contains("AppIntent 'sink-placement'"),
        "{}",
        reply.message()
    );
    let reply = api.delete(PROVIDER).await.expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "HasChildren");
    let reply = api
        .delete(&format!("{CA}/composite-profiles/vfw_composite-profile"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "HasChildren");
    api.post(
        &format!("{CA}/composite-profiles"),
        json!({"metadata": {"name": "spare"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.post(
        &format!("{CA}/deployment-intent-groups"),
        json!({"metadata": {"name": "dig2"}, "spec": {"compositeProfile": "spare", "version": "r2"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let reply = api
        .delete(&format!("{CA}/composite-profiles/spare"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        reply
            .message()
            .contains("referenced by DeploymentIntentGroup 'dig2'"),
        "{}",
        reply.message()
    );
    api.delete(&format!("{PROVIDER}/clusters/edge02/labels/edge-cluster"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.get(&format!("{PROVIDER}/clusters/edge02/labels/edge-cluster"))
        .await
        .expect(StatusCode::NOT_FOUND);
    api.delete("/v2/projects/other")
        .await
        .expect(StatusCode::NO_CONTENT);
    api.delete("/v2/projects/other")
        .await
        .expect(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn instantiate_explains_what_is_missing_or_broken() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let instantiate = || async {
        api.post_empty(&format!("{DIG}/approve"))
            .await
            .expect(StatusCode::ACCEPTED);
        api.post_empty(&format!("{DIG}/instantiate")).await
    };
    // A label no cluster has.
    let placement = format!("{DIG}/generic-placement-intents/fw-placement-intent/app-intents/sink-placement");
    api.put(&placement, json!({"metadata": {"name": "sink-placement"}, "spec": {"app": "sink", "intent": {"allOf": [{"clusterProvider": "vfw-cluster-provider", "clusterLabel": "nowhere"}]}}}))
        .await
        .expect(StatusCode::OK);
    let reply = instantiate().await.expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "PlacementFailed");
    assert!(
        reply.message().contains("'nowhere'") && reply.message().contains("sink"),
        "{}",
        reply.message()
    );
    // An app without placement.
    api.delete(&placement).await.expect(StatusCode::NO_CONTENT);
    let reply = instantiate().await.expect(StatusCode::CONFLICT);
    assert!(
        reply.message().contains("app 'sink' has no placement intent"),
        "{}",
        reply.message()
    );
    api.post(&format!("{DIG}/generic-placement-intents/fw-placement-intent/app-intents"), json!({"metadata": {"name": "sink-placement"}, "spec": {"app": "sink", "intent": {"allOf": [{"clusterProvider": "vfw-cluster-provider", "cluster": "edge01"}]}}}))
        .await
        .expect(StatusCode::CREATED);
    // A chart whose template does not parse is refused at upload with Helm's message (file and line).
    let broken = emco_helm::archive::write_tgz(&[
        ("sink/Chart.yaml", b"name: sink\nversion: 0.1.0\n"),
        (
            "sink/templates/cm.yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name | default \"x\" }\n",
        ),
    ]);
    let reply = api
        .put_form(
            &format!("{CA}/apps/sink"),
            &json!({"metadata": {"name": "sink"}}),
            &broken,
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        reply.message(),
        "Error in file format: chart: parse error at (sink/templates/cm.yaml:4): unexpected \"}\" in operand"
    );
    // A chart that parses but fails with these values is accepted, and instantiate answers 409 naming the app
    // and Helm's `file:line:col` with the chart's own message.
    let needs_values = emco_helm::archive::write_tgz(&[
        ("sink/Chart.yaml", b"name: sink\nversion: 0.1.0\n"),
        (
            "sink/templates/cm.yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ required \"name is required\" .Values.name }}\n",
        ),
    ]);
    api.put_form(
        &format!("{CA}/apps/sink"),
        &json!({"metadata": {"name": "sink"}}),
        &needs_values,
    )
    .await
    .expect(StatusCode::CREATED);
    let reply = instantiate().await.expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "RenderFailed");
    assert_eq!(
        reply.message(),
        "app 'sink': execution error at (sink/templates/cm.yaml:4:11): name is required"
    );
    // Values the chart's values.schema.json refuses: 422 with Helm's message naming the chart and the path.
    let schema_chart = emco_helm::archive::write_tgz(&[
        ("sink/Chart.yaml", b"apiVersion: v2\nname: sink\nversion: 0.1.0\n"),
        ("sink/values.yaml", b"replicas: two\n"),
        (
            "sink/values.schema.json",
            br#"{"type":"object","properties":{"replicas":{"type":"integer"}}}"#,
        ),
        (
            "sink/templates/cm.yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
        ),
    ]);
    api.put_form(
        &format!("{CA}/apps/sink"),
        &json!({"metadata": {"name": "sink"}}),
        &schema_chart,
    )
    .await
    .expect(StatusCode::CREATED);
    let reply = instantiate().await.expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.code(), "InvalidValues");
    assert_eq!(
        reply.message(),
        "app 'sink': values don't meet the specifications of the schema(s) in the following chart(s):\nsink:\n- at '/replicas': got string, want integer"
    );
    // Nothing was half-instantiated.
    assert!(
        AppContexts::new(api.store.clone())
            .ids()
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(api.states().await.last().map(String::as_str), Some("Approved"));
    // With a good chart again, placement on edge01 only yields a context with sink on one cluster.
    api.put_form(
        &format!("{CA}/apps/sink"),
        &json!({"metadata": {"name": "sink"}}),
        &chart("sink"),
    )
    .await
    .expect(StatusCode::CREATED);
    instantiate().await.expect(StatusCode::ACCEPTED);
    let contexts = AppContexts::new(api.store.clone());
    let id = contexts.ids().await.unwrap()[0];
    let sink = contexts
        .meta(id)
        .await
        .unwrap()
        .apps
        .into_iter()
        .find(|a| a.name == "sink")
        .unwrap();
    assert_eq!(sink.clusters, ["vfw-cluster-provider+edge01"]);
}

#[tokio::test]
async fn data_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let api = Api::new(Store::open_redb(dir.path()).unwrap());
        api.onboard_vfw().await;
        api.approve_and_instantiate_vfw().await;
    }
    // The first server's background tasks release the file as they notice it is gone; they run on this test's
    // one thread, so the open must not block it while it waits.
    let open = || Store::open_redb_waiting(dir.path(), std::time::Duration::ZERO);
    let mut reopened = open();
    for _ in 0..100 {
        if reopened.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        reopened = open();
    }
    let api = Api::new(reopened.unwrap());
    assert_eq!(api.states().await, ["Created", "Approved", "Instantiated"]);
    let apps = api.get(&format!("{CA}/apps")).await.expect(StatusCode::OK).json();
    assert_eq!(apps.as_array().unwrap().len(), 3);
    let chart_back = api
        .call(
            Method::GET,
            &format!("{CA}/apps/sink"),
            None,
            vec![],
            Some("application/octet-stream"),
        )
        .await;
    assert_eq!(chart_back.bytes.as_ref(), chart("sink").as_slice());
    let contexts = AppContexts::new(api.store.clone());
    let id = contexts.ids().await.unwrap()[0];
    let resources: usize = contexts
        .clusters(id)
        .await
        .unwrap()
        .iter()
        .map(|c| c.resources.len())
        .sum();
    assert_eq!(resources, 12);
    api.post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
}

#[tokio::test]
async fn malformed_requests_get_clear_errors_and_change_nothing() {
    let api = Api::with_config(
        Store::memory(),
        ServerConfig {
            max_body_bytes: 64 * 1024,
            ..ServerConfig::default()
        },
    );
    api.onboard_vfw().await;
    let revision_before = api.store.revision();
    let json = Some("application/json");
    let big = vec![b' '; 100 * 1024];
    // method, URI, content type, body, expected status, code and part of the message
    type Case<'a> = (
        Method,
        String,
        Option<&'a str>,
        Vec<u8>,
        StatusCode,
        &'a str,
        &'a str,
    );
    let cases: Vec<Case<'_>> = vec![
        (Method::POST, "/v2/projects".into(), json, br#"{"metadata":{"name":"bad name"}}"#.to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "project name 'bad name' is invalid"),
        (Method::POST, "/v2/projects".into(), json, br#"{"metadata":{"name":"-x"}}"#.to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "'-x'"),
        (Method::POST, "/v2/projects".into(), json, format!(r#"{{"metadata":{{"name":"{}"}}}}"#, "a".repeat(129)).into_bytes(), StatusCode::BAD_REQUEST, "InvalidInput", "129 characters"),
        (Method::POST, "/v2/projects".into(), json, br#"{"metadata":{"name":"x""#.to_vec(), StatusCode::UNPROCESSABLE_ENTITY, "MalformedJson", "not valid JSON"),
        (Method::POST, "/v2/projects".into(), json, b"".to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "Empty body"),
        (Method::POST, "/v2/projects".into(), json, b"[1]".to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "must be a JSON object"),
        (Method::POST, "/v2/projects".into(), json, br#"{"metadata":{"name":5}}"#.to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "metadata.name: expected a string, found a number (5)"),
        (Method::POST, "/v2/projects".into(), json, br#"{"metadata":{"name":"testvfw"}}"#.to_vec(), StatusCode::CONFLICT, "AlreadyExists", "Project already exists: testvfw"),
        (Method::POST, "/v2/projects".into(), json, big.clone(), StatusCode::PAYLOAD_TOO_LARGE, "PayloadTooLarge", "65536 bytes"),
        (Method::POST, "/v2/projects/nope/composite-apps".into(), json, br#"{"metadata":{"name":"ca"},"spec":{"compositeAppVersion":"v1"}}"#.to_vec(), StatusCode::CONFLICT, "ParentNotFound", "Project 'nope' not found"),
        (Method::POST, "/v2/projects/testvfw/composite-apps".into(), json, br#"{"metadata":{"name":"ca"},"spec":{}}"#.to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "spec.compositeAppVersion name is empty"),
        (Method::GET, "/v2/projects/nope".into(), None, vec![], StatusCode::NOT_FOUND, "NotFound", "Project not found: nope"),
        (Method::GET, "/v2/projects/nope/composite-apps".into(), None, vec![], StatusCode::NOT_FOUND, "NotFound", "Project not found: nope"),
        (Method::GET, format!("{CA}/apps/nope"), None, vec![], StatusCode::NOT_FOUND, "NotFound", "App not found: testvfw/compositevfw/v1/nope"),
        (Method::GET, "/v2/nothing/here".into(), None, vec![], StatusCode::NOT_FOUND, "NotFound", "no API path /v2/nothing/here"),
        (Method::GET, "/v2/projects/a%2Fb".into(), None, vec![], StatusCode::BAD_REQUEST, "InvalidInput", "'a/b'"),
        (Method::DELETE, "/v2/projects/testvfw".into(), None, vec![], StatusCode::CONFLICT, "HasChildren", "CompositeApp"),
        (Method::DELETE, format!("{CA}/apps/firewall"), None, vec![], StatusCode::CONFLICT, "Referenced", "AppProfile 'firewall-profile'"),
        (Method::POST, format!("{CA}/apps/firewall/dependency"), json, br#"{"metadata":{"name":"d"},"spec":{"app":"nope","opStatus":"Ready"}}"#.to_vec(), StatusCode::CONFLICT, "ReferenceNotFound", "spec.app names App 'testvfw/compositevfw/v1/nope'"),
        (Method::POST, format!("{CA}/apps/firewall/dependency"), json, br#"{"metadata":{"name":"d"},"spec":{"app":"sink","opStatus":"Running"}}"#.to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "allowed: Ready, Deployed"),
        (Method::POST, format!("{CA}/deployment-intent-groups"), json, br#"{"metadata":{"name":"d2"},"spec":{"compositeProfile":"nope","version":"r1"}}"#.to_vec(), StatusCode::CONFLICT, "ReferenceNotFound", "spec.compositeProfile"),
        (Method::POST, format!("{CA}/deployment-intent-groups"), json, br#"{"metadata":{"name":"d2"},"spec":{"compositeProfile":"vfw_composite-profile"}}"#.to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "spec.version is required"),
        (Method::POST, format!("{DIG}/generic-placement-intents/fw-placement-intent/app-intents"), json, br#"{"metadata":{"name":"x"},"spec":{"app":"sink","intent":{"allOf":[{"clusterProvider":"p"}]}}}"#.to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "allOf[0]"),
        (Method::POST, format!("{PROVIDER}/clusters/edge01/labels"), json, br#"{"clusterLabel":""}"#.to_vec(), StatusCode::BAD_REQUEST, "InvalidInput", "clusterLabel name is empty"),
        (Method::POST, format!("{DIG}/nope"), None, vec![], StatusCode::NOT_FOUND, "NotFound", "no API path"),
        (Method::POST, "/v2/projects/testvfw/composite-apps/compositevfw/v1/deployment-intent-groups/nope/approve".into(), None, vec![], StatusCode::NOT_FOUND, "NotFound", "DeploymentIntentGroup not found"),
        (Method::POST, format!("{CA}/apps"), json, br#"{"metadata":{"name":"x"}}"#.to_vec(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType", "multipart/form-data"),
    ];
    for (method, uri, content_type, body, status, code, message) in cases {
        let reply = api.call(method.clone(), &uri, content_type, body, None).await;
        assert_eq!(
            reply.status,
            status,
            "{method} {uri}: {}",
            String::from_utf8_lossy(&reply.bytes)
        );
        assert_eq!(
            reply.headers[header::CONTENT_TYPE],
            "application/json",
            "{method} {uri}"
        );
        assert_eq!(reply.code(), code, "{method} {uri}");
        assert!(
            reply.message().contains(message),
            "{method} {uri}: {:?} lacks {message:?}",
            reply.message()
        );
    }

    // Multipart mistakes.
    let apps = format!("{CA}/apps");
    let meta = json!({"metadata": {"name": "extra"}});
    let reply = api
        .post_form(&apps, Some(&meta), None)
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        reply.message().contains("part 'file' is missing"),
        "{}",
        reply.message()
    );
    let reply = api
        .post_form(&apps, None, Some(&chart("sink")))
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(
        reply.message().contains("part 'metadata' is missing"),
        "{}",
        reply.message()
    );
    let reply = api
        .post_form(&apps, Some(&meta), Some(b"not a tgz"))
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        reply.message().contains("Error in file format"),
        "{}",
        reply.message()
    );
    let no_chart_yaml = emco_helm::archive::write_tgz(&[("x/values.yaml", b"a: 1")]);
    let reply = api
        .post_form(&apps, Some(&meta), Some(&no_chart_yaml))
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(reply.message().contains("Chart.yaml"), "{}", reply.message());
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let broken_metadata = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{{nope\r\n--{BOUNDARY}--\r\n"
    );
    let reply = api
        .call(
            Method::POST,
            &apps,
            Some(&content_type),
            broken_metadata.into_bytes(),
            None,
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        reply.message().contains("'metadata' is not valid JSON"),
        "{}",
        reply.message()
    );
    let reply = api
        .post_form(&apps, Some(&meta), Some(&vec![7u8; 100 * 1024]))
        .await
        .expect(StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(reply.code(), "PayloadTooLarge");
    let clusters = format!("{PROVIDER}/clusters");
    let reply = api
        .post_form(
            &clusters,
            Some(&json!({"metadata": {"name": "edge03"}})),
            Some(b"clusters: []"),
        )
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        reply.message().contains("kubeconfig: no clusters"),
        "{}",
        reply.message()
    );
    let profiles = format!("{CA}/composite-profiles/vfw_composite-profile/profiles");
    let reply = api
        .post_form(
            &profiles,
            Some(&json!({"metadata": {"name": "p"}, "spec": {"app": "nope"}})),
            Some(&profile("sink")),
        )
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        reply.message().contains("App 'testvfw/compositevfw/v1/nope'"),
        "{}",
        reply.message()
    );

    assert_eq!(
        api.store.revision(),
        revision_before,
        "no refused request wrote anything"
    );
}

#[tokio::test]
async fn cluster_kv_pairs_are_kept_read_replaced_and_deleted_as_emco_does() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let pairs = format!("{PROVIDER}/clusters/edge01/kv-pairs");
    let body = json!({
        "metadata": {"name": "istio", "description": "", "userData1": "", "userData2": ""},
        "spec": {"kv": [{"istioIngressGatewayAddress": "10.0.0.9"}, {"istioIngressGatewayPort": "32001"}]}
    });
    api.post(&pairs, body.clone()).await.expect(StatusCode::CREATED);
    assert_eq!(
        api.get(&format!("{pairs}/istio"))
            .await
            .expect(StatusCode::OK)
            .json(),
        body
    );
    assert_eq!(api.get(&pairs).await.expect(StatusCode::OK).json(), json!([body]));
    let replaced =
        json!({"metadata": {"name": "istio"}, "spec": {"kv": [{"istioIngressGatewayAddress": "10.0.0.10"}]}});
    api.put(&format!("{pairs}/istio"), replaced)
        .await
        .expect(StatusCode::OK);
    let read = api
        .get(&format!("{pairs}/istio"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        read["spec"]["kv"],
        json!([{"istioIngressGatewayAddress": "10.0.0.10"}])
    );
    // Malformed pairs are refused naming the field; pairs need their cluster.
    let reply = api
        .post(&pairs, json!({"metadata": {"name": "none"}, "spec": {"kv": []}}))
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(reply.message().contains("spec.kv"), "{}", reply.message());
    let reply = api
        .post(&format!("{PROVIDER}/clusters/nosuch/kv-pairs"), body.clone())
        .await;
    assert!(reply.status.is_client_error(), "{}", reply.message());
    assert!(reply.message().contains("nosuch"), "{}", reply.message());
    // A cluster keeps its pairs until they are deleted.
    let reply = api
        .delete(&format!("{PROVIDER}/clusters/edge01"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "HasChildren");
    api.delete(&format!("{pairs}/istio"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.get(&format!("{pairs}/istio"))
        .await
        .expect(StatusCode::NOT_FOUND);
}
