//! dtc through the API: a traffic group intent whose sub-controllers are refused at instantiate when emco does not
//! have them (naming the sub-controller) and, for `its`, when a server cluster lacks its Istio ingress gateway
//! kv-pairs (naming the intent, the cluster and the kv-pair) — then instantiated once the kv-pairs are there.

use axum::http::StatusCode;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn its_is_refused_without_the_gateway_kv_pairs_and_runs_with_them() {
    let api = Api::new(emco_store::Store::memory());
    api.onboard_vfw().await;
    api.post(
        "/v2/controllers",
        json!({"metadata": {"name": "dtc"}, "spec": {"host": "dtc", "port": 9048, "type": "action", "priority": 1}}),
    )
    .await
    .expect(StatusCode::CREATED);
    for name in ["its", "sds"] {
        api.post(
            "/v2/dtc-controllers",
            json!({"metadata": {"name": name}, "spec": {"host": name, "port": 9040, "type": "action", "priority": 1}}),
        )
        .await
        .expect(StatusCode::CREATED);
    }
    let traffic = format!("{DIG}/traffic-group-intents");
    api.post(&traffic, json!({"metadata": {"name": "testdtc"}}))
        .await
        .expect(StatusCode::CREATED);
    api.post(
        &format!("{traffic}/testdtc/inbound-intents"),
        json!({"metadata": {"name": "serverin"}, "spec": {"app": "firewall", "appLabel": "app=firewall",
            "serviceName": "firewall-svc", "port": 30083, "protocol": "TCP", "serviceMesh": "istio"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.name_controller("dtc", "testdtc").await;
    api.approve_vfw().await;

    let refused = api
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        refused.message().contains("dtc sub-controller 'sds'"),
        "{}",
        refused.message()
    );

    api.delete("/v2/dtc-controllers/sds")
        .await
        .expect(StatusCode::NO_CONTENT);
    let refused = api
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    let message = refused.message();
    assert!(
        message.contains("traffic group intent 'testdtc', inbound intent 'serverin'")
            && message.contains("has no kv-pair 'istioIngressGatewayAddress'"),
        "{message}"
    );

    for name in ["edge01", "edge02"] {
        api.post(
            &format!("{PROVIDER}/clusters/{name}/kv-pairs"),
            json!({"metadata": {"name": "istioingresskvpairs"}, "spec": {"kv": [
                {"istioIngressGatewayAddress": "192.168.121.15"}, {"istioIngressGatewayPort": "32001"},
                {"istioIngressGatewayInternalPort": "15443"}]}}),
        )
        .await
        .expect(StatusCode::CREATED);
    }
    api.post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::ACCEPTED);
}
