//! Pull clusters through the API: registered with `spec.pull` and no kubeconfig, answered once with an agent
//! token that is never shown again; `POST …/agent-token` replaces it (the old one refused at once) for pull
//! clusters only; an agent token admits nothing but its own cluster's agent endpoints — 403 on any other path or
//! cluster, with or without a token table — and a wrong, rotated or malformed one is a 401.

use axum::http::{Method, StatusCode};
use emco_server::{ServerConfig, TokenAuth};
use emco_store::Store;
use serde_json::json;

use crate::support::*;

fn pull_cluster(name: &str) -> serde_json::Value {
    json!({"metadata": {"name": name}, "spec": {"pull": {}}})
}

/// Registers a pull cluster and answers its agent token.
async fn register(api: &Api, name: &str) -> String {
    let created = api
        .post_form(&format!("{PROVIDER}/clusters"), Some(&pull_cluster(name)), None)
        .await
        .expect(StatusCode::CREATED);
    let body = created.json();
    assert_eq!(body["spec"], json!({"pull": {}}));
    let token = body["agentToken"].as_str().expect("an agent token").to_string();
    assert!(
        token.starts_with(&format!("emco-agent.vfw-cluster-provider+{name}.")),
        "{token}"
    );
    token
}

#[tokio::test]
async fn a_pull_cluster_is_registered_without_kubeconfig_and_its_token_is_answered_once() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let token = register(&api, "site1").await;
    let secret = token.rsplit_once('.').unwrap().1;
    for uri in [
        format!("{PROVIDER}/clusters/site1"),
        format!("{PROVIDER}/clusters"),
    ] {
        let text = String::from_utf8_lossy(&api.get(&uri).await.expect(StatusCode::OK).bytes).into_owned();
        assert!(text.contains("\"pull\":{}"), "{text}");
        assert!(!text.contains(secret) && !text.contains("agentToken"), "{text}");
    }
    // What the store keeps is a digest, not the token.
    let (kept, _) = api.store.range("").await.unwrap();
    assert!(
        kept.iter()
            .all(|kv| !String::from_utf8_lossy(&kv.value).contains(secret)),
        "the store holds the agent token"
    );
    // A kubeconfig sent along is not kept (a pull cluster is never dialled).
    api.post_form(
        &format!("{PROVIDER}/clusters"),
        Some(&pull_cluster("site2")),
        Some(&kubeconfig("site2")),
    )
    .await
    .expect(StatusCode::CREATED);

    // Pull and GitOps at once is refused, naming the field.
    let both = json!({"metadata": {"name": "site3"}, "spec": {"pull": {}, "gitOps": {
        "gitOpsType": "fluxv2", "gitOpsReferenceObject": "a", "gitOpsResourceObject": "b"}}});
    let refused = api
        .post_form(&format!("{PROVIDER}/clusters"), Some(&both), None)
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(refused.message().contains("spec.pull"), "{}", refused.message());
    // Neither pull nor GitOps: a kubeconfig is still required.
    api.post_form(
        &format!("{PROVIDER}/clusters"),
        Some(&json!({"metadata": {"name": "site4"}})),
        None,
    )
    .await
    .expect(StatusCode::UNPROCESSABLE_ENTITY);
    api.get(&format!("{PROVIDER}/clusters/site3"))
        .await
        .expect(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn rotation_replaces_the_token_and_only_pull_clusters_have_one() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let first = register(&api, "site1").await;
    let rotated = api
        .post_empty(&format!("{PROVIDER}/clusters/site1/agent-token"))
        .await
        .expect(StatusCode::CREATED)
        .json();
    assert_eq!(rotated["cluster"], "vfw-cluster-provider+site1");
    let second = rotated["agentToken"].as_str().unwrap().to_string();
    assert_ne!(first, second);

    // The old token is refused at once; the new one is admitted as far as the guard goes (403 elsewhere).
    let elsewhere = format!("{PROVIDER}/clusters/site1");
    let old = api.with_token(&first).get(&elsewhere).await;
    assert_eq!(old.status, StatusCode::UNAUTHORIZED, "{}", old.message());
    assert!(old.message().contains("not valid"), "{}", old.message());
    let new = api.with_token(&second).get(&elsewhere).await;
    assert_eq!(new.status, StatusCode::FORBIDDEN, "{}", new.message());

    // vfw's clusters are dialled: they have no agent token.
    let direct = api
        .post_empty(&format!("{PROVIDER}/clusters/edge01/agent-token"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(direct.code(), "NotAPullCluster");
    assert!(direct.message().contains("edge01"), "{}", direct.message());
    api.post_empty(&format!("{PROVIDER}/clusters/nowhere/agent-token"))
        .await
        .expect(StatusCode::NOT_FOUND);

    // A deleted and re-registered cluster's old token is refused.
    api.delete(&elsewhere).await.expect(StatusCode::NO_CONTENT);
    let gone = api.with_token(&second).get(&elsewhere).await;
    assert_eq!(gone.status, StatusCode::UNAUTHORIZED, "{}", gone.message());
    let third = register(&api, "site1").await;
    assert_eq!(
        api.with_token(&second).get(&elsewhere).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        api.with_token(&third).get(&elsewhere).await.status,
        StatusCode::FORBIDDEN
    );
}

/// Every request an agent token is refused on, with or without a token table: other clusters' agent paths, the
/// API's resources, writes, the status query.
async fn assert_confined(api: &Api, token: &str) {
    let agent = api.with_token(token);
    for (method, uri) in [
        (
            Method::GET,
            format!("{PROVIDER}/clusters/site2/agent/desired-state"),
        ),
        (Method::POST, format!("{PROVIDER}/clusters/site2/agent/reports")),
        (Method::GET, format!("{PROVIDER}/clusters/site1")),
        (Method::POST, format!("{PROVIDER}/clusters/site1/agent-token")),
        (Method::GET, PROJECT.to_string()),
        (Method::DELETE, format!("{PROVIDER}/clusters/site1")),
        (Method::GET, format!("{DIG}/status")),
        (Method::GET, "/v2/events".to_string()),
    ] {
        let reply = agent.call(method.clone(), &uri, None, Vec::new(), None).await;
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{method} {uri}: {}",
            reply.message()
        );
        assert!(
            reply.message().contains("vfw-cluster-provider+site1")
                && reply.message().contains("/clusters/site1/agent/"),
            "{}",
            reply.message()
        );
    }
    // The cluster is still there: the refused DELETE did nothing.
    api.get(&format!("{PROVIDER}/clusters/site1"))
        .await
        .expect(StatusCode::OK);
    // A token naming another cluster with this one's secret, or a malformed one, is a 401.
    let secret = token.rsplit_once('.').unwrap().1;
    for forged in [
        format!("emco-agent.vfw-cluster-provider+site2.{secret}"),
        format!("emco-agent.vfw-cluster-provider+edge01.{secret}"),
        "emco-agent.nothing".to_string(),
    ] {
        let reply = api
            .with_token(&forged)
            .get(&format!("{PROVIDER}/clusters/site2/agent/desired-state"))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNAUTHORIZED,
            "{forged}: {}",
            reply.message()
        );
    }
}

#[tokio::test]
async fn an_agent_token_admits_nothing_but_its_own_clusters_agent_endpoints() {
    // Without a token table (loopback): agent tokens are still confined.
    let open = Api::new(Store::memory());
    open.onboard_vfw().await;
    let token = register(&open, "site1").await;
    register(&open, "site2").await;
    assert_confined(&open, &token).await;

    // With a token table: admins register and rotate, viewers may not rotate, agents only reach their own.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(
        &path,
        "admin-token-1,alice,100,emco:admin\nviewer-token-2,ann,101,emco:viewer\n",
    )
    .unwrap();
    let guarded = Api::with_config(
        Store::memory(),
        ServerConfig {
            token_auth: Some(TokenAuth::load(&path).unwrap()),
            ..ServerConfig::default()
        },
    );
    let admin = guarded.with_token("admin-token-1");
    admin.onboard_vfw().await;
    let token = register(&admin, "site1").await;
    register(&admin, "site2").await;
    assert_confined(&admin, &token).await;
    let viewer = guarded
        .with_token("viewer-token-2")
        .post_empty(&format!("{PROVIDER}/clusters/site1/agent-token"))
        .await;
    assert_eq!(viewer.status, StatusCode::FORBIDDEN);
    guarded
        .post_empty(&format!("{PROVIDER}/clusters/site1/agent-token"))
        .await
        .expect(StatusCode::UNAUTHORIZED);
}
