//! Authentication and roles through the API (`ServerConfig::token_auth`): admins do everything, viewers only
//! read, a user without an emco group nothing; a missing or unknown token is a 401 with a Bearer challenge;
//! `/healthz` and CORS preflights need no token; with exec credentials allowed an `exec:` kubeconfig is accepted
//! at upload while every other refused field stays refused.

use axum::http::{Method, StatusCode, header};
use emco_server::{KubeconfigPolicy, ServerConfig, TokenAuth};
use emco_store::Store;
use serde_json::json;

use crate::support::*;

const TOKENS: &str = "admin-token-1,alice,100,\"emco:admin,ops\"\nviewer-token-2,ann,101,emco:viewer\nnobody-token-3,bob,102,ops\n";
const UI: &str = "https://ui.example";

/// An API requiring the tokens of [`TOKENS`]; the temporary directory holds the token file.
fn api_with(policy: KubeconfigPolicy) -> (Api, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, TOKENS).unwrap();
    let api = Api::with_config(
        Store::memory(),
        ServerConfig {
            token_auth: Some(TokenAuth::load(&path).unwrap()),
            kubeconfig_policy: policy,
            cors_allowed_origins: vec![UI.to_string()],
            ..ServerConfig::default()
        },
    );
    (api, dir)
}

fn api() -> (Api, tempfile::TempDir) {
    api_with(KubeconfigPolicy::default())
}

#[track_caller]
fn assert_unauthorized(reply: &Reply) {
    assert_eq!(
        reply.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        String::from_utf8_lossy(&reply.bytes)
    );
    assert_eq!(reply.code(), "Unauthorized");
    assert_eq!(
        reply
            .headers
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok()),
        Some("Bearer realm=\"emco\"")
    );
}

#[tokio::test]
async fn admins_create_and_delete_and_viewers_read_statuses_but_cannot_change_anything() {
    let (anonymous, _dir) = api();
    let admin = anonymous.with_token("admin-token-1");
    let viewer = anonymous.with_token("viewer-token-2");

    admin.onboard_vfw().await;
    admin
        .post_empty(&format!("{DIG}/approve"))
        .await
        .expect(StatusCode::ACCEPTED);
    admin
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::ACCEPTED);
    admin
        .post("/v2/projects", json!({"metadata": {"name": "scratch"}}))
        .await
        .expect(StatusCode::CREATED);
    admin
        .delete("/v2/projects/scratch")
        .await
        .expect(StatusCode::NO_CONTENT);

    // The viewer reads: a status, a list, an item, and HEAD.
    let status = viewer
        .get(&format!("{DIG}/status?output=summary"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(status["rsync-status"], json!({"Pending": 12}), "{status}");
    viewer.get("/v2/projects").await.expect(StatusCode::OK);
    viewer.get(PROJECT).await.expect(StatusCode::OK);
    viewer
        .call(Method::HEAD, PROJECT, None, Vec::new(), None)
        .await
        .expect(StatusCode::OK);

    // Every change is refused, naming the user and the role, and nothing is written.
    let before = anonymous.store.revision();
    let refusals = [
        viewer
            .post("/v2/projects", json!({"metadata": {"name": "p2"}}))
            .await,
        viewer
            .put(
                PROJECT,
                json!({"metadata": {"name": "testvfw", "description": "changed"}}),
            )
            .await,
        viewer.delete(PROJECT).await,
        viewer.post_empty(&format!("{DIG}/terminate")).await,
    ];
    for reply in refusals {
        let reply = reply.expect(StatusCode::FORBIDDEN);
        assert_eq!(reply.code(), "Forbidden");
        assert_eq!(
            reply.message(),
            "user 'ann' has role emco:viewer, which may only read"
        );
    }
    assert_eq!(anonymous.store.revision(), before);
    let project = viewer.get(PROJECT).await.expect(StatusCode::OK).json();
    assert_ne!(project["metadata"]["description"], "changed");
}

#[tokio::test]
async fn a_user_without_an_emco_group_may_do_nothing() {
    let (anonymous, _dir) = api();
    let nobody = anonymous.with_token("nobody-token-3");
    for reply in [
        nobody.get("/v2/projects").await,
        nobody
            .post("/v2/projects", json!({"metadata": {"name": "p"}}))
            .await,
    ] {
        let reply = reply.expect(StatusCode::FORBIDDEN);
        assert_eq!(reply.code(), "Forbidden");
        assert_eq!(
            reply.message(),
            "user 'bob' has no emco role: it is in neither group emco:admin nor emco:viewer"
        );
    }
}

#[tokio::test]
async fn missing_malformed_and_unknown_tokens_are_401_with_a_bearer_challenge() {
    let (anonymous, _dir) = api();
    let before = anonymous.store.revision();

    let missing = anonymous.get("/v2/projects").await;
    assert_unauthorized(&missing);
    assert!(
        missing.message().contains("Authorization: Bearer"),
        "{}",
        missing.message()
    );
    assert_unauthorized(
        &anonymous
            .post("/v2/projects", json!({"metadata": {"name": "p"}}))
            .await,
    );

    let unknown = anonymous.with_token("admin-token-10").get("/v2/projects").await;
    assert_unauthorized(&unknown);
    assert_eq!(unknown.message(), "the bearer token is not valid");
    assert!(!String::from_utf8_lossy(&unknown.bytes).contains("admin-token"));

    for value in ["Basic YWRtaW46cHc=", "Bearer", "admin-token-1"] {
        let reply = anonymous
            .request(
                Method::GET,
                "/v2/projects",
                &[("authorization", value)],
                Vec::new(),
            )
            .await;
        assert_unauthorized(&reply);
        assert_eq!(
            reply.message(),
            "the Authorization header is not 'Bearer <token>'"
        );
    }
    // An unknown path is not revealed to anonymous callers either.
    assert_unauthorized(&anonymous.get("/v2/no-such-thing").await);
    assert_eq!(anonymous.store.revision(), before);
}

#[tokio::test]
async fn healthz_and_cors_preflights_need_no_token() {
    let (anonymous, _dir) = api();
    let health = anonymous.get("/healthz").await.expect(StatusCode::OK);
    assert_eq!(health.json(), json!({"status": "ok"}));

    let preflight = anonymous
        .request(
            Method::OPTIONS,
            "/v2/projects",
            &[
                ("origin", UI),
                ("access-control-request-method", "POST"),
                ("access-control-request-headers", "authorization, content-type"),
            ],
            Vec::new(),
        )
        .await
        .expect(StatusCode::NO_CONTENT);
    let allowed = preflight
        .headers
        .get(header::ACCESS_CONTROL_ALLOW_HEADERS)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(allowed.contains("authorization"), "{allowed}");

    // The browser can read a 401: it carries the CORS headers.
    let refused = anonymous
        .request(Method::GET, "/v2/projects", &[("origin", UI)], Vec::new())
        .await;
    assert_unauthorized(&refused);
    assert_eq!(
        refused
            .headers
            .get(header::ACCESS_CONTROL_ALLOW_ORIGIN)
            .and_then(|v| v.to_str().ok()),
        Some(UI)
    );
    // A foreign origin is still refused first, whatever the token.
    let foreign = anonymous
        .with_token("admin-token-1")
        .request(
            Method::GET,
            "/v2/projects",
            &[("origin", "https://evil.example")],
            Vec::new(),
        )
        .await
        .expect(StatusCode::FORBIDDEN);
    assert_eq!(foreign.code(), "OriginNotAllowed");
}

/// A kubeconfig whose user runs an exec credential plugin, plus `extra` user lines.
fn exec_kubeconfig(extra: &str) -> Vec<u8> {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: iam\ncurrent-context: x\nusers:\n- name: iam\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n      args: [eks, get-token, --cluster-name, edge01]\n{extra}"
    )
    .into_bytes()
}

#[tokio::test]
async fn exec_kubeconfigs_are_accepted_at_upload_only_when_exec_credentials_are_allowed() {
    let (allowing, _dir) = api_with(KubeconfigPolicy { allow_exec: true });
    let (strict, _dir2) = api();
    for api in [&allowing, &strict] {
        api.with_token("admin-token-1")
            .post(
                "/v2/cluster-providers",
                json!({"metadata": {"name": "vfw-cluster-provider"}}),
            )
            .await
            .expect(StatusCode::CREATED);
    }
    let upload = |api: &Api, name: &str, kubeconfig: Vec<u8>| {
        let api = api.with_token("admin-token-1");
        let name = name.to_string();
        async move {
            api.post_form(
                &format!("{PROVIDER}/clusters"),
                Some(&json!({"metadata": {"name": name}})),
                Some(&kubeconfig),
            )
            .await
        }
    };
    upload(&allowing, "edge01", exec_kubeconfig(""))
        .await
        .expect(StatusCode::CREATED);
    let refused = upload(&strict, "edge01", exec_kubeconfig(""))
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused.message(),
        "cluster 'edge01': kubeconfig user 'iam': exec credential plugins are not allowed"
    );
    // Everything else stays refused, exec allowed or not.
    let refused = upload(
        &allowing,
        "edge02",
        exec_kubeconfig("    tokenFile: /var/run/token\n"),
    )
    .await
    .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused.message(),
        "cluster 'edge02': kubeconfig user 'iam': a token file path is not allowed (use inline 'token')"
    );
    allowing
        .with_token("viewer-token-2")
        .get(&format!("{PROVIDER}/clusters/edge02"))
        .await
        .expect(StatusCode::NOT_FOUND);
}
