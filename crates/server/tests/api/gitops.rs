//! GitOps clusters through the API, with the bodies of EMCO's `examples/test-flux`: cluster sync objects kept with
//! their token never answered; a cluster with `spec.gitOps` created from emcoctl's multipart (its values file in
//! place of a kubeconfig, left unread); the GitOps fields refused when partial, unknown, not served yet or naming
//! a sync object that does not exist; and a sync object a cluster names kept from deletion.

use axum::http::StatusCode;
use serde_json::json;

use crate::support::*;

const SYNC: &str = "/v2/cluster-providers/vfw-cluster-provider/cluster-sync-objects";
const TOKEN: &str = "glpat-0123456789abcdef";

fn flux_cluster(name: &str, git_ops: serde_json::Value) -> serde_json::Value {
    json!({"metadata": {"name": name}, "spec": {"gitOps": git_ops}})
}

#[tokio::test]
async fn sync_objects_and_gitops_clusters_are_kept_as_emco_keeps_them_and_the_token_is_never_answered() {
    let api = Api::new(emco_store::Store::memory());
    api.onboard_vfw().await;
    let repo = json!({"metadata": {"name": "GitObjectFluxRepo"}, "spec": {"kv": [
        {"userName": "emco"}, {"gitToken": TOKEN}, {"repoName": "fleet"}, {"branch": "main"},
        {"url": "https://git.example.com/emco/fleet"}]}});
    let created = api.post(SYNC, repo.clone()).await.expect(StatusCode::CREATED);
    assert!(!String::from_utf8_lossy(&created.bytes).contains(TOKEN));
    // The token's entry stays, empty: the answer keeps the body's shape (at least one entry, as the schema says).
    assert_eq!(
        created.json()["spec"]["kv"],
        json!([{"userName": "emco"}, {}, {"repoName": "fleet"}, {"branch": "main"},
            {"url": "https://git.example.com/emco/fleet"}])
    );
    api.post(
        SYNC,
        json!({"metadata": {"name": "GitObjectFluxRes"}, "spec": {"kv": [
            {"timeOut": "60"}, {"syncInterval": "60"}, {"retryInterval": "60"}]}}),
    )
    .await
    .expect(StatusCode::CREATED);
    for answer in [
        api.get(&format!("{SYNC}/GitObjectFluxRepo"))
            .await
            .expect(StatusCode::OK),
        api.get(SYNC).await.expect(StatusCode::OK),
        api.put(&format!("{SYNC}/GitObjectFluxRepo"), repo.clone())
            .await
            .expect(StatusCode::CREATED),
    ] {
        let text = String::from_utf8_lossy(&answer.bytes).into_owned();
        assert!(!text.contains(TOKEN) && !text.contains("gitToken"), "{text}");
        assert!(text.contains("https://git.example.com/emco/fleet"), "{text}");
    }

    // A Flux cluster, as EMCO's emcoctl sends it: its values file in place of a kubeconfig (not read).
    let git_ops = json!({"gitOpsType": "fluxcd", "gitOpsReferenceObject": "GitObjectFluxRepo",
        "gitOpsResourceObject": "GitObjectFluxRes"});
    let values = b"PackagesPath: output\nGitToken: not-a-kubeconfig\n";
    api.post_form(
        &format!("{PROVIDER}/clusters"),
        Some(&flux_cluster("cluster2", git_ops.clone())),
        Some(values),
    )
    .await
    .expect(StatusCode::CREATED);
    let kept = api
        .get(&format!("{PROVIDER}/clusters/cluster2"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(kept["spec"]["gitOps"], git_ops);

    for (body, status, needle) in [
        (
            json!({}),
            StatusCode::BAD_REQUEST,
            "spec.gitOps.gitOpsType is required",
        ),
        (
            json!({"gitOpsType": "fluxv2", "gitOpsReferenceObject": "GitObjectFluxRepo"}),
            StatusCode::BAD_REQUEST,
            "spec.gitOps.gitOpsResourceObject is required",
        ),
        (
            json!({"gitOpsType": "argo", "gitOpsReferenceObject": "a", "gitOpsResourceObject": "b"}),
            StatusCode::BAD_REQUEST,
            "spec.gitOps.gitOpsType is 'argo'",
        ),
        (
            json!({"gitOpsType": "anthos", "gitOpsReferenceObject": "GitObjectFluxRepo", "gitOpsResourceObject": "GitObjectFluxRes"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "'anthos' is not served yet",
        ),
        (
            json!({"gitOpsType": "fluxv2", "gitOpsReferenceObject": "GitObjectFluxRepo", "gitOpsResourceObject": "missing"}),
            StatusCode::CONFLICT,
            "spec.gitOps.gitOpsResourceObject names ClusterSyncObject 'vfw-cluster-provider/missing'",
        ),
    ] {
        let refused = api
            .post_form(
                &format!("{PROVIDER}/clusters"),
                Some(&flux_cluster("cluster3", body)),
                Some(values),
            )
            .await
            .expect(status);
        assert!(refused.message().contains(needle), "{}", refused.message());
    }

    let refused = api
        .delete(&format!("{SYNC}/GitObjectFluxRes"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        refused
            .message()
            .contains("cluster 'vfw-cluster-provider+cluster2' names it"),
        "{}",
        refused.message()
    );

    api.delete(&format!("{PROVIDER}/clusters/cluster2"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.delete(&format!("{SYNC}/GitObjectFluxRes"))
        .await
        .expect(StatusCode::NO_CONTENT);
}
