//! Integrity guards of the API: app dependencies that would close a cycle are refused when written, clusters,
//! cluster labels and cluster providers that a live deployment stands on cannot be deleted, and request bodies
//! are read strictly (a key repeated in an object, a `spec` or `metadata` of the wrong shape, a field of the wrong
//! type). After every refusal the server keeps serving and nothing changed.

use axum::http::{Method, StatusCode};
use emco_appcontext::{AppContexts, Catalog, Kind, ResourcePath};
use emco_model::{ContextId, ContextStatus};
use emco_server::ServerConfig;
use emco_store::Store;
use proptest::prelude::*;
use serde_json::{Value as Json, json};

use crate::support::*;

fn dependency_uri(app: &str) -> String {
    format!("{CA}/apps/{app}/dependency")
}

fn dependency(name: &str, on: &str) -> Json {
    json!({"metadata": {"name": name}, "spec": {"app": on, "opStatus": "Ready"}})
}

/// Asserts a refusal left the store as it was and the server still answers.
async fn assert_unchanged_and_serving(api: &Api, revision_before: i64) {
    assert_eq!(
        api.store.revision(),
        revision_before,
        "a refused request wrote nothing"
    );
    api.get("/healthz").await.expect(StatusCode::OK);
    api.get(PROJECT).await.expect(StatusCode::OK);
}

#[tokio::test]
async fn a_dependency_that_would_close_a_cycle_is_refused_when_posted() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    api.post(
        &dependency_uri("packetgen"),
        dependency("after-firewall", "firewall"),
    )
    .await
    .expect(StatusCode::CREATED);

    let revision = api.store.revision();
    let reply = api
        .post(
            &dependency_uri("firewall"),
            dependency("after-packetgen", "packetgen"),
        )
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "DependencyCycle");
    assert_eq!(
        reply.message(),
        "app dependencies form a cycle: packetgen → firewall → packetgen"
    );
    assert_unchanged_and_serving(&api, revision).await;
    assert_eq!(api.get(&dependency_uri("firewall")).await.json(), json!([]));

    // An app that waits for itself.
    let reply = api
        .post(&dependency_uri("sink"), dependency("self", "sink"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "DependencyCycle");
    assert_eq!(reply.message(), "app dependencies form a cycle: sink → sink");
    assert_unchanged_and_serving(&api, revision).await;

    // A longer cycle is named whole.
    api.post(&dependency_uri("firewall"), dependency("after-sink", "sink"))
        .await
        .expect(StatusCode::CREATED);
    let revision = api.store.revision();
    let reply = api
        .post(
            &dependency_uri("sink"),
            dependency("after-packetgen", "packetgen"),
        )
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(
        reply.message(),
        "app dependencies form a cycle: packetgen → firewall → sink → packetgen"
    );
    assert_unchanged_and_serving(&api, revision).await;

    // A diamond (packetgen waits for firewall and sink, firewall for sink) is no cycle.
    api.post(&dependency_uri("packetgen"), dependency("after-sink", "sink"))
        .await
        .expect(StatusCode::CREATED);
    assert_eq!(
        api.get(&dependency_uri("packetgen"))
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn a_dependency_that_would_close_a_cycle_is_refused_when_put() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    api.post(&dependency_uri("packetgen"), dependency("first", "firewall"))
        .await
        .expect(StatusCode::CREATED);
    api.post(&dependency_uri("firewall"), dependency("first", "sink"))
        .await
        .expect(StatusCode::CREATED);

    // A new dependency by PUT, and an existing one replaced by PUT, closing a cycle: both refused.
    let revision = api.store.revision();
    for (app, name, on) in [("sink", "new", "packetgen"), ("firewall", "first", "packetgen")] {
        let reply = api
            .put(&format!("{}/{name}", dependency_uri(app)), dependency(name, on))
            .await
            .expect(StatusCode::CONFLICT);
        assert_eq!(reply.code(), "DependencyCycle", "{app}/{name}");
        assert!(
            reply
                .message()
                .starts_with("app dependencies form a cycle: packetgen → firewall → "),
            "{}",
            reply.message()
        );
        assert_unchanged_and_serving(&api, revision).await;
    }
    assert_eq!(
        api.get(&format!("{}/first", dependency_uri("firewall")))
            .await
            .json()["spec"]["app"],
        "sink"
    );

    // A replaced dependency no longer counts: packetgen now waits for sink instead of firewall, so firewall may
    // wait for packetgen.
    api.put(
        &format!("{}/first", dependency_uri("packetgen")),
        dependency("first", "sink"),
    )
    .await
    .expect(StatusCode::OK);
    api.post(&dependency_uri("firewall"), dependency("second", "packetgen"))
        .await
        .expect(StatusCode::CREATED);
}

#[tokio::test]
async fn two_concurrent_posts_cannot_close_a_cycle_together() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let (packetgen, sink) = (dependency_uri("packetgen"), dependency_uri("sink"));
    for _ in 0..20 {
        let (one, two) = tokio::join!(
            api.post(&packetgen, dependency("race", "sink")),
            api.post(&sink, dependency("race", "packetgen")),
        );
        let mut statuses = [one.status, two.status];
        statuses.sort();
        assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CONFLICT]);
        let refused = if one.status == StatusCode::CONFLICT {
            one
        } else {
            two
        };
        assert_eq!(refused.code(), "DependencyCycle");
        for app in ["packetgen", "sink"] {
            let uri = format!("{}/race", dependency_uri(app));
            if api.get(&uri).await.status == StatusCode::OK {
                api.delete(&uri).await.expect(StatusCode::NO_CONTENT);
            }
        }
    }
}

#[tokio::test]
async fn instantiate_still_refuses_a_cycle_stored_before_writes_were_checked() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    // Written straight into the catalog, as a store from before the rule may hold them.
    let catalog = Catalog::new(api.store.clone());
    for (app, on) in [
        ("packetgen", "firewall"),
        ("firewall", "sink"),
        ("sink", "packetgen"),
    ] {
        let name = format!("after-{on}");
        let path = ResourcePath::new(
            Kind::AppDependency,
            ["testvfw", "compositevfw", "v1", app, &name]
                .map(String::from)
                .to_vec(),
        );
        catalog
            .create(&path, &dependency(&name, on), None, Vec::new())
            .await
            .unwrap();
    }
    api.post_empty(&format!("{DIG}/approve"))
        .await
        .expect(StatusCode::ACCEPTED);
    let reply = api
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "DependencyCycle");
    assert_eq!(
        reply.message(),
        "app dependencies form a cycle: packetgen → firewall → sink → packetgen"
    );
    assert!(
        AppContexts::new(api.store.clone())
            .ids()
            .await
            .unwrap()
            .is_empty()
    );

    // Breaking the cycle lets it through.
    api.delete(&format!("{}/after-packetgen", dependency_uri("sink")))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.approve_and_instantiate_vfw().await;
}

const DIG_NAME: &str = "testvfw/compositevfw/v1/vfw_deployment_intent_group";

#[track_caller]
fn assert_in_use(reply: Reply, what: &str, context: ContextId) {
    let reply = reply.expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "InUse", "{}", reply.message());
    let message = reply.message();
    assert!(
        message.starts_with(&format!("cannot delete {what}: ")),
        "{message}"
    );
    assert!(
        message.contains(&format!("DeploymentIntentGroup '{DIG_NAME}'")),
        "{message}"
    );
    assert!(
        message.contains(&format!("AppContext {context} is ")),
        "{message}"
    );
}

#[tokio::test]
async fn what_a_live_deployment_stands_on_cannot_be_deleted_until_it_has_terminated() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    // A label no placement selects by.
    api.post(
        &format!("{PROVIDER}/clusters/edge01/labels"),
        json!({"clusterLabel": "spare"}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.approve_and_instantiate_vfw().await;
    let contexts = AppContexts::new(api.store.clone());
    let context = contexts.ids().await.unwrap()[0];
    assert_eq!(
        contexts.meta(context).await.unwrap().status,
        ContextStatus::Instantiating
    );

    let label = format!("{PROVIDER}/clusters/edge01/labels/edge-cluster");
    let cluster = format!("{PROVIDER}/clusters/edge01");
    let refusals = |status: &'static str| {
        let (label, cluster) = (label.clone(), cluster.clone());
        let api = &api;
        async move {
            let revision = api.store.revision();
            let reply = api.delete(&label).await;
            assert!(
                reply.message().contains(&format!("is {status}")),
                "{}",
                reply.message()
            );
            assert!(
                reply
                    .message()
                    .contains("by this label in app intent 'packetgen-placement'"),
                "{}",
                reply.message()
            );
            assert_in_use(
                reply,
                "ClusterLabel 'vfw-cluster-provider/edge01/edge-cluster'",
                context,
            );
            assert_in_use(
                api.delete(&cluster).await,
                "Cluster 'vfw-cluster-provider/edge01'",
                context,
            );
            assert_in_use(
                api.delete(PROVIDER).await,
                "ClusterProvider 'vfw-cluster-provider'",
                context,
            );
            assert_unchanged_and_serving(api, revision).await;
            api.get(&label).await.expect(StatusCode::OK);
            api.get(&cluster).await.expect(StatusCode::OK);
        }
    };
    refusals("Instantiating").await;
    // A label the deployment did not place by may go, even from a cluster in use.
    api.delete(&format!("{PROVIDER}/clusters/edge01/labels/spare"))
        .await
        .expect(StatusCode::NO_CONTENT);

    // Terminating still uses them.
    api.post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
    refusals("Terminating").await;

    // Once the engine reports the termination finished, they can go (children first, as always).
    contexts
        .update_meta(context, |meta| meta.status = ContextStatus::Terminated)
        .await
        .unwrap();
    api.delete(&label).await.expect(StatusCode::NO_CONTENT);
    api.delete(&cluster).await.expect(StatusCode::NO_CONTENT);
    let reply = api.delete(PROVIDER).await.expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "HasChildren", "{}", reply.message());
    api.delete(&format!("{PROVIDER}/clusters/edge02/labels/edge-cluster"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.delete(&format!("{PROVIDER}/clusters/edge02"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.delete(PROVIDER).await.expect(StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn a_failed_instantiation_still_holds_its_clusters() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    api.approve_and_instantiate_vfw().await;
    let contexts = AppContexts::new(api.store.clone());
    let context = contexts.ids().await.unwrap()[0];
    // What was applied before the failure is still on the cluster.
    contexts
        .update_meta(context, |meta| meta.status = ContextStatus::InstantiateFailed)
        .await
        .unwrap();
    assert_in_use(
        api.delete(&format!("{PROVIDER}/clusters/edge02/labels/edge-cluster"))
            .await,
        "ClusterLabel 'vfw-cluster-provider/edge02/edge-cluster'",
        context,
    );
}

/// A multipart form whose `metadata` part is `metadata` as given (so it may hold what `serde_json` cannot write).
fn raw_form(metadata: &[u8], file: &[u8]) -> Vec<u8> {
    let mut body =
        format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n").into_bytes();
    body.extend_from_slice(metadata);
    body.extend_from_slice(
        format!("\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n")
            .as_bytes(),
    );
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

#[tokio::test]
async fn repeated_keys_and_wrongly_shaped_bodies_are_refused_naming_the_field() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let revision = api.store.revision();
    let projects = "/v2/projects".to_string();
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    // method, URI, body, status, code, part of the message
    let cases: Vec<(Method, String, String, StatusCode, &str, &str)> = vec![
        (Method::POST, projects.clone(), r#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#.into(), StatusCode::BAD_REQUEST, "DuplicateKey", "duplicate key 'metadata' at line 1 column "),
        (Method::POST, projects.clone(), r#"{"metadata":{"name":"a","name":"b"}}"#.into(), StatusCode::BAD_REQUEST, "DuplicateKey", "duplicate key 'metadata.name' at line 1 column 30 of the request body"),
        (Method::PUT, PROJECT.to_string(), r#"{"metadata":{"name":"testvfw","description":"x","description":"y"}}"#.into(), StatusCode::BAD_REQUEST, "DuplicateKey", "duplicate key 'metadata.description'"),
        (Method::POST, format!("{CA}/deployment-intent-groups"), r#"{"metadata":{"name":"d2"},"spec":{"compositeProfile":"vfw_composite-profile","version":"r2","overrideValues":[{"app":"firewall","values":{"k":"1","k":"2"}}]}}"#.into(), StatusCode::BAD_REQUEST, "DuplicateKey", "duplicate key 'spec.overrideValues[0].values.k'"),
        (Method::POST, format!("{CA}/deployment-intent-groups"), r#"{"metadata":{"name":"d3"},"spec":{"compositeProfile":"vfw_composite-profile","version":"r3","rollout":{"batchSize":0}}}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec.rollout.batchSize: 0 is not between 1 and 100000"),
        (Method::POST, format!("{CA}/deployment-intent-groups"), r#"{"metadata":{"name":"d3"},"spec":{"compositeProfile":"vfw_composite-profile","version":"r3","rollout":{"failureThreshold":"lots"}}}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec.rollout.failureThreshold: 'lots' is not a number of clusters"),
        (Method::POST, format!("{CA}/deployment-intent-groups"), r#"{"metadata":{"name":"d3"},"spec":{"compositeProfile":"vfw_composite-profile","version":"r3","rollout":{"pauseBetweenBatches":"2 days"}}}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec.rollout.pauseBetweenBatches: '2 days' is not a duration"),
        (Method::POST, format!("{DIG}/resume"), String::new(), StatusCode::CONFLICT, "InvalidState", "only an instantiated DIG has a rollout to resume"),
        (Method::POST, format!("{PROJECT}/composite-apps"), r#"{"metadata":{"name":"ca2"},"spec":[]}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec: expected an object, found an array"),
        (Method::POST, format!("{PROJECT}/composite-apps"), r#"{"metadata":{"name":"ca2"},"spec":7}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec: expected an object, found a number (7)"),
        (Method::POST, projects.clone(), r#"{"metadata":"x"}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "metadata: expected an object, found a string"),
        (Method::POST, projects.clone(), r#"{"metadata":{"name":"p2"},"spec":[]}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec: expected an object, found an array"),
        (Method::POST, projects.clone(), r#"{"spec":{}}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "metadata is required"),
        (Method::POST, dependency_uri("sink"), r#"{"metadata":{"name":"d"},"spec":{"app":"firewall","opStatus":"Ready","wait":"10"}}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec.wait: expected a non-negative integer, found a string"),
        (Method::POST, dependency_uri("sink"), r#"{"metadata":{"name":"d"},"spec":{"app":"firewall","opStatus":"Ready","wait":-1}}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec.wait: expected a non-negative integer, found a number (-1)"),
        (Method::POST, format!("{DIG}/generic-placement-intents/fw-placement-intent/app-intents"), r#"{"metadata":{"name":"x"},"spec":{"app":"sink","intent":{"allOf":[{"clusterProvider":5}]}}}"#.into(), StatusCode::BAD_REQUEST, "InvalidInput", "spec.intent.allOf[0].clusterProvider: expected a string, found a number (5)"),
        (Method::POST, projects.clone(), format!(r#"{{"metadata":{{"name":"p3"}},"x":{deep}}}"#), StatusCode::BAD_REQUEST, "InvalidInput", "nests deeper than 64 levels"),
    ];
    for (method, uri, body, status, code, message) in cases {
        let reply = api
            .call(
                method.clone(),
                &uri,
                Some("application/json"),
                body.into_bytes(),
                None,
            )
            .await;
        assert_eq!(
            reply.status,
            status,
            "{method} {uri}: {}",
            String::from_utf8_lossy(&reply.bytes)
        );
        assert_eq!(reply.code(), code, "{method} {uri}: {}", reply.message());
        assert!(
            reply.message().contains(message),
            "{method} {uri}: {:?} lacks {message:?}",
            reply.message()
        );
        assert_unchanged_and_serving(&api, revision).await;
    }

    // The metadata part of a multipart request is read the same way.
    let clusters = format!("{PROVIDER}/clusters");
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let form_cases = [
        (
            r#"{"metadata":{"name":"c9","name":"c10"}}"#,
            "DuplicateKey",
            "duplicate key 'metadata.name' at line 1 column 31 of the multipart part 'metadata'",
        ),
        (
            r#"{"metadata":{"name":"c9"},"spec":[]}"#,
            "InvalidInput",
            "spec: expected an object, found an array",
        ),
        (
            r#"{"metadata":{"name":"c9"},"spec":{"gitOps":7}}"#,
            "InvalidInput",
            "spec.gitOps: expected an object, found a number (7)",
        ),
    ];
    for (metadata, code, message) in form_cases {
        let reply = api
            .call(
                Method::POST,
                &clusters,
                Some(&content_type),
                raw_form(metadata.as_bytes(), &kubeconfig("c9")),
                None,
            )
            .await
            .expect(StatusCode::BAD_REQUEST);
        assert_eq!(reply.code(), code, "{metadata}: {}", reply.message());
        assert!(
            reply.message().contains(message),
            "{metadata}: {:?} lacks {message:?}",
            reply.message()
        );
        assert_unchanged_and_serving(&api, revision).await;
    }
    api.get(&format!("{clusters}/c9"))
        .await
        .expect(StatusCode::NOT_FOUND);
}

/// A JSON text built from a small set of keys (so objects often repeat one), with whether any object in it
/// repeats a key, known from how it was built.
fn json_text() -> impl Strategy<Value = (String, bool)> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,2})?",
        "\"[a-z ]{0,4}\"",
    ]
    .prop_map(|text| (text, false));
    leaf.prop_recursive(4, 48, 5, |inner| {
        let key = prop_oneof![
            Just("metadata"),
            Just("spec"),
            Just("name"),
            Just("app"),
            Just("k")
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|items| {
                let repeated = items.iter().any(|(_, repeated)| *repeated);
                let texts: Vec<String> = items.into_iter().map(|(text, _)| text).collect();
                (format!("[{}]", texts.join(",")), repeated)
            }),
            prop::collection::vec((key, inner), 0..5).prop_map(|members| {
                let mut keys: Vec<&str> = members.iter().map(|(key, _)| *key).collect();
                let count = keys.len();
                keys.sort_unstable();
                keys.dedup();
                let repeated = keys.len() < count || members.iter().any(|(_, (_, repeated))| *repeated);
                let texts: Vec<String> = members
                    .into_iter()
                    .map(|(key, (text, _))| format!("\"{key}\" : {text}"))
                    .collect();
                (format!("{{{}}}", texts.join(",")), repeated)
            }),
        ]
    })
}

/// Bodies of every kind: raw bytes, JSON-ish text, and JSON built to repeat keys (with whether it does).
fn any_body() -> impl Strategy<Value = (Vec<u8>, Option<bool>)> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..(MAX_BODY + 200)).prop_map(|bytes| (bytes, None)),
        "[\\[\\]{}\":,. 0-9a-z\\\\-]{0,120}".prop_map(|text| (text.into_bytes(), None)),
        json_text().prop_map(|(text, repeated)| (text.into_bytes(), Some(repeated))),
        json_text().prop_map(|(text, repeated)| {
            (
                format!(r#"{{"metadata":{{"name":"p1"}},"spec":{text}}}"#).into_bytes(),
                Some(repeated),
            )
        }),
    ]
}

/// The request body limit of the server under test, small so that some generated bodies exceed it.
const MAX_BODY: usize = 2048;

/// Every answer to a body is a success or a JSON `{"code","message"}` refusal with a status of body reading
/// (400, 413, 415, 422) or of the resource (409); a body built with a repeated key (within the limit, sent as
/// JSON) gets 400 `DuplicateKey`, and no other body does.
#[track_caller]
fn check_answer(reply: &Reply, repeated: Option<bool>, what: &[u8]) {
    let allowed = [
        StatusCode::CREATED,
        StatusCode::CONFLICT,
        StatusCode::BAD_REQUEST,
        StatusCode::PAYLOAD_TOO_LARGE,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        StatusCode::UNPROCESSABLE_ENTITY,
    ];
    let what = String::from_utf8_lossy(what);
    assert!(
        allowed.contains(&reply.status),
        "{what}: {} {:?}",
        reply.status,
        reply.bytes
    );
    if !reply.status.is_success() {
        let answer: Json = serde_json::from_slice(&reply.bytes).expect("a JSON error");
        assert!(
            answer["code"].is_string() && answer["message"].is_string(),
            "{what}: {answer}"
        );
    }
    if let Some(repeated) = repeated.filter(|_| reply.status != StatusCode::PAYLOAD_TOO_LARGE) {
        assert_eq!(
            reply.code() == "DuplicateKey",
            repeated,
            "{what}: {}",
            reply.message()
        );
        if repeated {
            assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn any_body_gets_an_answer_and_every_refusal_is_a_json_error(
        (body, repeated) in any_body(),
        content_type in prop_oneof![Just(Some("application/json")), Just(Some("text/plain")), Just(None)],
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let config = ServerConfig { max_body_bytes: MAX_BODY, ..ServerConfig::default() };
            let api = Api::with_config(Store::memory(), config);
            api.post("/v2/cluster-providers", json!({"metadata": {"name": "prov"}}))
                .await
                .expect(StatusCode::CREATED);
            let reply = api.call(Method::POST, "/v2/projects", content_type, body.clone(), None).await;
            let sent_as_json = content_type == Some("application/json");
            check_answer(&reply, repeated.filter(|_| sent_as_json), &body);
            if !sent_as_json && !body.is_empty() {
                // Read first (too large → 413), then the type decides.
                let refused = [StatusCode::UNSUPPORTED_MEDIA_TYPE, StatusCode::PAYLOAD_TOO_LARGE];
                assert!(refused.contains(&reply.status), "{}", reply.status);
            }

            let form_type = format!("multipart/form-data; boundary={BOUNDARY}");
            let form = raw_form(&body, &kubeconfig("c1"));
            let reply = api
                .call(Method::POST, "/v2/cluster-providers/prov/clusters", Some(&form_type), form, None)
                .await;
            check_answer(&reply, repeated, &body);
            api.get("/healthz").await.expect(StatusCode::OK);
        });
    }
}
