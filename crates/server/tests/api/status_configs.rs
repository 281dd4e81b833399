//! `/v2/status-configs`: create, list, read, replace and delete a per-kind status configuration, and the 400s that
//! name the offending field (a bad `statusPath` in either form, a missing kind, an unknown enum value).

use axum::http::{StatusCode, header};
use emco_store::Store;
use serde_json::{Value as Json, json};

use crate::support::*;

fn deployments(path: &str) -> Json {
    json!({"metadata": {"name": "deployments"},
        "spec": {"targetType": {"group": "apps", "version": "v1", "kind": "Deployment"},
                 "statusCollection": "Enabled", "statusPath": path, "readyCondition": "Available", "rawStatus": false}})
}

#[tokio::test]
async fn a_status_config_has_the_whole_crud() {
    let api = Api::new(Store::memory());
    let created = api
        .post("/v2/status-configs", deployments(".status.readyReplicas"))
        .await
        .expect(StatusCode::CREATED);
    assert_eq!(
        created.headers[header::LOCATION],
        "/v2/status-configs/deployments"
    );
    assert_eq!(created.json()["spec"]["statusPath"], ".status.readyReplicas");
    api.post("/v2/status-configs", deployments(".status.replicas"))
        .await
        .expect(StatusCode::CONFLICT);

    let listed = api.get("/v2/status-configs").await.expect(StatusCode::OK).json();
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
    assert_eq!(listed[0]["spec"]["targetType"]["kind"], "Deployment");

    api.put("/v2/status-configs/deployments", deployments("$.status.replicas"))
        .await
        .expect(StatusCode::OK);
    let read = api
        .get("/v2/status-configs/deployments")
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(read["spec"]["statusPath"], "$.status.replicas");

    api.delete("/v2/status-configs/deployments")
        .await
        .expect(StatusCode::NO_CONTENT);
    api.get("/v2/status-configs/deployments")
        .await
        .expect(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_status_configs_are_refused_naming_the_field() {
    let api = Api::new(Store::memory());
    for (body, field) in [
        (deployments("status.replicas"), "spec.statusPath"),
        (deployments("$.status["), "spec.statusPath"),
        (deployments(".status..replicas"), "spec.statusPath"),
        (
            json!({"metadata": {"name": "x"}, "spec": {"targetType": {"version": "v1"}}}),
            "spec.targetType.kind",
        ),
        (
            json!({"metadata": {"name": "x"}, "spec": {"targetType": {"version": "v1", "kind": "Deployment"},
                "statusCollection": "Sometimes"}}),
            "spec.statusCollection",
        ),
    ] {
        let reply = api
            .post("/v2/status-configs", body.clone())
            .await
            .expect(StatusCode::BAD_REQUEST);
        assert!(reply.message().contains(field), "{body}: {}", reply.message());
    }
    assert_eq!(
        api.get("/v2/status-configs").await.expect(StatusCode::OK).json(),
        json!([])
    );
}

#[tokio::test]
async fn status_configs_are_bounded_in_number() {
    let api = Api::new(Store::memory());
    for index in 0..emco_model::status_config::MAX_STATUS_CONFIGS {
        let mut body = deployments(".status.replicas");
        body["metadata"]["name"] = json!(format!("config{index}"));
        api.post("/v2/status-configs", body)
            .await
            .expect(StatusCode::CREATED);
    }
    let mut body = deployments(".status.replicas");
    body["metadata"]["name"] = json!("one-too-many");
    let refused = api
        .post("/v2/status-configs", body)
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(refused.code(), "TooManyStatusConfigs");
}
