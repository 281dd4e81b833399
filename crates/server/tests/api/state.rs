//! The state object (seed 002) on the GET of the resources with a lifecycle, and `Location` on every mutation:
//! creates and PUTs name the resource's GET, a DELETE of a resource with a lifecycle its status (lifecycle POSTs
//! name their status; `lifecycles.rs` checks those).

use axum::http::{StatusCode, header};
use emco_store::Store;
use serde_json::{Value as Json, json};

use crate::support::*;

fn location(reply: &Reply) -> &str {
    reply
        .headers
        .get(header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_else(|| panic!("no Location: {:?}", reply.headers))
}

fn condition<'a>(state: &'a Json, condition_type: &str) -> &'a Json {
    state["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == condition_type)
        .unwrap_or_else(|| panic!("no {condition_type} in {state}"))
}

#[tokio::test]
async fn resources_with_a_lifecycle_show_their_state_and_puts_do_not_store_one() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;

    let dig = api.get(DIG).await.expect(StatusCode::OK).json();
    let state = &dig["state"];
    assert_eq!(state["ready"], false);
    assert_eq!(state["message"], "not deployed: the last operation was Create");
    assert_eq!(condition(state, "last_operation")["name"], "Create");
    assert_eq!(condition(state, "last_operation")["status"], "succeeded");
    assert_eq!(condition(state, "Deployed")["status"], "False");
    let keys: Vec<&String> = dig.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().unwrap().as_str(), "state", "after the stored keys");

    // A PUT body's `state` is not the client's to set: it is neither kept nor shown.
    let mut body = dig.clone();
    body["state"] = json!({"ready": true, "message": "forged", "conditions": []});
    let put = api.put(DIG, body).await;
    assert!(put.status.is_success(), "{:?}", put.bytes);
    assert!(
        put.json().get("state").is_none(),
        "the PUT answer is the stored body"
    );
    assert_eq!(api.get(DIG).await.json()["state"]["message"], state["message"]);

    // Approve: the last operation is Approve, still not deployed.
    api.post_empty(&format!("{DIG}/approve"))
        .await
        .expect(StatusCode::ACCEPTED);
    let state = api.get(DIG).await.json()["state"].clone();
    assert_eq!(condition(&state, "last_operation")["name"], "Approve");
    assert_eq!(state["ready"], false);

    // A cluster's metadata view shows its network intents' state; the file view is unchanged.
    let cluster = api
        .get(&format!("{PROVIDER}/clusters/edge01"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(cluster["metadata"]["name"], "edge01");
    assert_eq!(condition(&cluster["state"], "last_operation")["name"], "Create");

    // A logical cloud too; a resource without a lifecycle does not.
    api.post(
        "/v2/projects/testvfw/logical-clouds",
        json!({"metadata": {"name": "lc0"}, "spec": {"level": "0"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let lc = api.get("/v2/projects/testvfw/logical-clouds/lc0").await.json();
    assert_eq!(lc["state"]["ready"], false);
    assert!(api.get(PROJECT).await.json().get("state").is_none());
}

#[tokio::test]
async fn every_mutation_says_where_its_state_is_read() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;

    let created = api
        .post("/v2/projects", json!({"metadata": {"name": "p2"}}))
        .await
        .expect(StatusCode::CREATED);
    assert_eq!(location(&created), "/v2/projects/p2");
    let created = api
        .post(
            "/v2/projects/p2/composite-apps",
            json!({"metadata": {"name": "ca2"}, "spec": {"compositeAppVersion": "v3"}}),
        )
        .await
        .expect(StatusCode::CREATED);
    assert_eq!(location(&created), "/v2/projects/p2/composite-apps/ca2/v3");
    let put = api
        .put(
            "/v2/projects/p2",
            json!({"metadata": {"name": "p2", "description": "two"}}),
        )
        .await;
    assert!(put.status.is_success());
    assert_eq!(location(&put), "/v2/projects/p2");
    // A multipart create names the created resource too.
    let metadata = json!({"metadata": {"name": "edge09"}});
    let cluster = api
        .post_form(
            &format!("{PROVIDER}/clusters"),
            Some(&metadata),
            Some(&kubeconfig("edge09")),
        )
        .await
        .expect(StatusCode::CREATED);
    assert_eq!(location(&cluster), format!("{PROVIDER}/clusters/edge09"));
    // What a Location names answers.
    api.get(location(&cluster)).await.expect(StatusCode::OK);

    // Deleting a resource with a lifecycle: its status; without one: itself (404 once gone).
    let deleted = api
        .delete(&format!("{PROVIDER}/clusters/edge09"))
        .await
        .expect(StatusCode::NO_CONTENT);
    assert_eq!(location(&deleted), format!("{PROVIDER}/clusters/edge09/status"));
    let deleted = api
        .delete("/v2/projects/p2/composite-apps/ca2/v3")
        .await
        .expect(StatusCode::NO_CONTENT);
    assert_eq!(location(&deleted), "/v2/projects/p2/composite-apps/ca2/v3");
    api.get(location(&deleted)).await.expect(StatusCode::NOT_FOUND);
}
