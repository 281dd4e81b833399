//! hpa through the API: hpa-intents, resource consumers and resource requirements kept as EMCO keeps them and
//! refused as its schemas and handlers refuse them, naming the field; a DIG whose hpa placement finds no cluster
//! refused at instantiate naming the app, each cluster and why.

use axum::http::StatusCode;
use serde_json::json;

use crate::support::*;

const HPA: &str = "/v2/projects/testvfw/composite-apps/compositevfw/v1/deployment-intent-groups/vfw_deployment_intent_group/hpa-intents";

#[tokio::test]
async fn hpa_intents_consumers_and_requirements_are_kept_and_checked() {
    let api = Api::new(emco_store::Store::memory());
    api.onboard_vfw().await;
    api.post(
        HPA,
        json!({"metadata": {"name": "sink-hpa"}, "spec": {"app": "sink"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let refused = api
        .post(HPA, json!({"metadata": {"name": "x"}, "spec": {"app": "vpn"}}))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(refused.message().contains("spec.app"), "{}", refused.message());
    // EMCO's hpa answers every PUT 200, one that creates too.
    let put = json!({"metadata": {"name": "packetgen-hpa"}, "spec": {"app": "packetgen"}});
    api.put(&format!("{HPA}/packetgen-hpa"), put.clone())
        .await
        .expect(StatusCode::OK);
    api.put(&format!("{HPA}/packetgen-hpa"), put)
        .await
        .expect(StatusCode::OK);
    api.delete(&format!("{HPA}/packetgen-hpa"))
        .await
        .expect(StatusCode::NO_CONTENT);
    let consumers = format!("{HPA}/sink-hpa/hpa-resource-consumers");
    let refused = api
        .post(
            &consumers,
            json!({"metadata": {"name": "c"}, "spec": {"container": "sink"}}),
        )
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(refused.message().contains("spec.name"), "{}", refused.message());
    api.post(
        &consumers,
        json!({"metadata": {"name": "c"}, "spec": {"apiVersion": "apps/v1", "kind": "Deployment", "replicas": 2, "name": "r1-sink", "container": "sink"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let requirements = format!("{consumers}/c/resource-requirements");
    for (spec, needle) in [
        (
            json!({"resource": {"name": "cpu", "requests": 1}}),
            "spec.allocatable",
        ),
        (
            json!({"allocatable": true, "resource": {"name": "cpu", "requests": 3, "limits": 2}}),
            "less or equal to limits",
        ),
        (
            json!({"allocatable": false, "resource": {"name": "cpu", "requests": 1}}),
            "spec.resource.key",
        ),
    ] {
        let refused = api
            .post(&requirements, json!({"metadata": {"name": "r"}, "spec": spec}))
            .await
            .expect(StatusCode::BAD_REQUEST);
        assert!(refused.message().contains(needle), "{}", refused.message());
    }
    api.post(
        &requirements,
        json!({"metadata": {"name": "qat"}, "spec": {"allocatable": false, "mandatory": true, "weight": 1, "resource": {"key": "feature.node.kubernetes.io/intel_qat", "value": "true"}}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let kept = api
        .get(&format!("{requirements}/qat"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        kept["spec"]["resource"],
        json!({"key": "feature.node.kubernetes.io/intel_qat", "value": "true"})
    );
    assert_eq!(
        api.get(&requirements)
            .await
            .expect(StatusCode::OK)
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // EMCO's hpa examples also register the placement controller as a cluster-event listener (clm): kept.
    let clm = json!({"metadata": {"name": "hpa-placement-controller-1"}, "spec": {"host": "hpaplc", "port": 9099, "priority": 1}});
    api.post("/v2/clm-controllers", clm)
        .await
        .expect(StatusCode::CREATED);
    let listed = api.get("/v2/clm-controllers").await.expect(StatusCode::OK).json();
    assert_eq!(listed[0]["spec"]["host"], "hpaplc");

    // Named in the DIG's intents, hpa reads the clusters' nodes; none can be read here (no cluster engine): the
    // instantiation is refused naming the app, each cluster and why.
    api.post(
        "/v2/controllers",
        json!({"metadata": {"name": "hpa-placement-controller-1"}, "spec": {"host": "hpaplc", "port": 9099, "type": "placement", "priority": 1}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.name_controller("hpa-placement-controller-1", "hpa-placement-intent")
        .await;
    api.approve_vfw().await;
    let refused = api
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    let message = refused.message();
    assert!(message.contains("hpa-placement-controller-1"), "{message}");
    assert!(
        message.contains("no cluster of app 'sink' meets its requirements"),
        "{message}"
    );
    assert!(
        message.contains("its nodes could not be read: no cluster engine reads clusters"),
        "{message}"
    );
}
