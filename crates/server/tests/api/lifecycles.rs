//! Cluster network intents and logical clouds through the API, without clusters (no engine): bodies refused with
//! 400 naming the field, the one lifecycle engine's states and guards for both (what may change or go while
//! applied or instantiated), references between logical clouds and clusters, a DIG on a logical cloud that is
//! not ready, and the user kubeconfig kept from viewers.

use axum::http::StatusCode;
use emco_server::{ServerConfig, TokenAuth};
use emco_store::Store;
use serde_json::{Value as Json, json};

use crate::support::*;

const EDGE01: &str = "/v2/cluster-providers/vfw-cluster-provider/clusters/edge01";
const LC: &str = "/v2/projects/testvfw/logical-clouds/lc1";

fn states(answer: &Json) -> Vec<String> {
    answer["state"]["Actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["State"].as_str().unwrap().to_string())
        .collect()
}

fn network(name: &str, subnet: &str, gateway: &str) -> Json {
    json!({"metadata": {"name": name}, "spec": {"cniType": "ovn4nfv", "ipv4Subnets": [{"subnet": subnet, "name": "s1", "gateway": gateway}]}})
}

#[tokio::test]
async fn network_bodies_are_refused_naming_the_field() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    for (body, field) in [
        (
            network("n1", "10.0.0.0/33", "10.0.0.1/24"),
            "spec.ipv4Subnets[0].subnet",
        ),
        (
            network("n1", "10.0.0.0/24", "10.0.1.1/24"),
            "spec.ipv4Subnets[0].gateway",
        ),
        (
            json!({"metadata": {"name": "n1"}, "spec": {"cniType": "flannel", "ipv4Subnets": [{"subnet": "10.0.0.0/24", "name": "s"}]}}),
            "spec.cniType",
        ),
        (
            json!({"metadata": {"name": "n1"}, "spec": {"cniType": "ovn4nfv", "ipv4Subnets": [{"subnet": "10.0.0.0/24", "name": "s", "excludeIps": "10.0.0.9..10.0.0.2"}]}}),
            "spec.ipv4Subnets[0].excludeIps",
        ),
    ] {
        let reply = api
            .post(&format!("{EDGE01}/networks"), body)
            .await
            .expect(StatusCode::BAD_REQUEST);
        assert!(reply.message().contains(field), "{field}: {}", reply.message());
    }
    let vlan = |id: &str, net_type: &str| {
        json!({"metadata": {"name": "p1"}, "spec": {"cniType": "ovn4nfv", "ipv4Subnets": [{"subnet": "10.1.0.0/24", "name": "s"}],
            "providerNetType": net_type, "vlan": {"vlanID": id, "providerInterfaceName": "eth1", "vlanNodeSelector": "any"}}})
    };
    let reply = api
        .post(&format!("{EDGE01}/provider-networks"), vlan("5000", "VLAN"))
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(reply.message().contains("vlanID"), "{}", reply.message());
    let reply = api
        .post(&format!("{EDGE01}/provider-networks"), vlan("100", "BRIDGE"))
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(reply.message().contains("providerNetType"), "{}", reply.message());
    api.post(&format!("{EDGE01}/provider-networks"), vlan("100", "VLAN"))
        .await
        .expect(StatusCode::CREATED);
}

#[tokio::test]
async fn network_intents_follow_their_lifecycle_and_guard_the_cluster() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    api.post(
        &format!("{EDGE01}/networks"),
        network("n1", "10.0.0.0/24", "10.0.0.1/24"),
    )
    .await
    .expect(StatusCode::CREATED);
    // A cluster's history starts at Created; terminate before apply is refused.
    let created = api
        .get(&format!("{EDGE01}/status"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(states(&created), ["Created"]);
    assert_eq!(created["name"], "vfw-cluster-provider+edge01");
    api.post_empty(&format!("{EDGE01}/terminate"))
        .await
        .expect(StatusCode::CONFLICT);

    let reply = api
        .post_empty(&format!("{EDGE01}/apply"))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(
        reply.headers.get("location").unwrap(),
        &format!("{EDGE01}/status")
    );
    // Applying again is a no-op success: no second action.
    api.post_empty(&format!("{EDGE01}/apply"))
        .await
        .expect(StatusCode::ACCEPTED);
    let applied = api
        .get(&format!("{EDGE01}/status"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(states(&applied), ["Created", "Applied"]);
    assert_eq!(applied["rsync-status"], json!({"Pending": 1}), "{applied}");

    // While applied: no network changes, no cluster deletion.
    let refused = api
        .post(
            &format!("{EDGE01}/networks"),
            network("n2", "10.2.0.0/24", "10.2.0.1/24"),
        )
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(refused.code(), "InvalidState");
    assert!(
        refused
            .message()
            .contains("Cluster network intents 'vfw-cluster-provider+edge01' is Applied")
    );
    api.put(
        &format!("{EDGE01}/networks/n1"),
        network("n1", "10.0.0.0/24", "10.0.0.2/24"),
    )
    .await
    .expect(StatusCode::CONFLICT);
    api.delete(&format!("{EDGE01}/networks/n1"))
        .await
        .expect(StatusCode::CONFLICT);
    let refused = api.delete(EDGE01).await.expect(StatusCode::CONFLICT);
    assert!(refused.message().contains("applied"), "{}", refused.message());
    // The other cluster's intents are its own.
    api.post(
        "/v2/cluster-providers/vfw-cluster-provider/clusters/edge02/networks",
        network("n1", "10.0.0.0/24", "10.0.0.1/24"),
    )
    .await
    .expect(StatusCode::CREATED);

    api.post_empty(&format!("{EDGE01}/terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
    api.post_empty(&format!("{EDGE01}/terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
    let terminated = api
        .get(&format!("{EDGE01}/status"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(states(&terminated), ["Created", "Applied", "Terminated"]);
    // Terminated (and, without an engine, still terminating): networks may change again.
    api.post(
        &format!("{EDGE01}/networks"),
        network("n2", "10.2.0.0/24", "10.2.0.1/24"),
    )
    .await
    .expect(StatusCode::CREATED);
}

async fn onboard_logical_cloud(api: &Api, body: Json) {
    api.post("/v2/projects/testvfw/logical-clouds", body)
        .await
        .expect(StatusCode::CREATED);
}

#[tokio::test]
async fn logical_clouds_are_checked_follow_their_lifecycle_and_hold_their_clusters() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    for (body, field) in [
        (
            json!({"metadata": {"name": "lc1"}, "spec": {"level": "2"}}),
            "spec.level",
        ),
        (
            json!({"metadata": {"name": "lc1"}, "spec": {"level": "1", "user": {"userName": "u1", "type": "certificate"}}}),
            "spec.namespace",
        ),
    ] {
        let reply = api
            .post("/v2/projects/testvfw/logical-clouds", body)
            .await
            .expect(StatusCode::BAD_REQUEST);
        assert!(reply.message().contains(field), "{field}: {}", reply.message());
    }
    onboard_logical_cloud(
        &api,
        json!({"metadata": {"name": "lc1"}, "spec": {"namespace": "tenant1", "user": {"userName": "tenant-user", "type": "certificate"}}}),
    )
    .await;
    let reply = api
        .post(
            &format!("{LC}/cluster-quotas"),
            json!({"metadata": {"name": "q1"}, "spec": {"pods": "lots"}}),
        )
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(reply.message().contains("pods"), "{}", reply.message());
    // A level-0 logical cloud with a quota: each is valid, together they conflict at instantiate (409).
    onboard_logical_cloud(
        &api,
        json!({"metadata": {"name": "admin"}, "spec": {"level": "0"}}),
    )
    .await;
    let admin = "/v2/projects/testvfw/logical-clouds/admin";
    api.post(
        &format!("{admin}/cluster-references"),
        json!({"metadata": {"name": "r1"}, "spec": {"clusterProvider": "vfw-cluster-provider", "cluster": "edge01"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.post(
        &format!("{admin}/cluster-quotas"),
        json!({"metadata": {"name": "q0"}, "spec": {"pods": "10"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let inconsistent = api
        .post_empty(&format!("{admin}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        inconsistent.message().contains("quotas apply only to level-1"),
        "{}",
        inconsistent.message()
    );
    api.delete(&format!("{admin}/cluster-quotas/q0"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.delete(&format!("{admin}/cluster-references/r1"))
        .await
        .expect(StatusCode::NO_CONTENT);
    api.delete(admin).await.expect(StatusCode::NO_CONTENT);
    // A reference to a cluster that does not exist is refused.
    let missing = api
        .post(
            &format!("{LC}/cluster-references"),
            json!({"metadata": {"name": "r9"}, "spec": {"clusterProvider": "vfw-cluster-provider", "cluster": "edge09"}}),
        )
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(missing.code(), "ReferenceNotFound");
    // Instantiate needs a cluster, then a permission for the cloud's namespace.
    let incomplete = api
        .post_empty(&format!("{LC}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        incomplete.message().contains("references no clusters"),
        "{}",
        incomplete.message()
    );
    api.post(
        &format!("{LC}/cluster-references"),
        json!({"metadata": {"name": "r1"}, "spec": {"clusterProvider": "vfw-cluster-provider", "cluster": "edge01"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let incomplete = api
        .post_empty(&format!("{LC}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        incomplete.message().contains("user permission"),
        "{}",
        incomplete.message()
    );
    api.post(
        &format!("{LC}/user-permissions"),
        json!({"metadata": {"name": "p1"}, "spec": {"namespace": "tenant1", "apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}}),
    )
    .await
    .expect(StatusCode::CREATED);
    // The referenced cluster cannot go while the reference holds it.
    api.delete(&format!("{EDGE01}/labels/edge-cluster"))
        .await
        .expect(StatusCode::NO_CONTENT);
    let held = api.delete(EDGE01).await.expect(StatusCode::CONFLICT);
    assert!(
        held.message().contains("ClusterReference 'r1'"),
        "{}",
        held.message()
    );

    let reply = api
        .post_empty(&format!("{LC}/instantiate"))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(reply.headers.get("location").unwrap(), &format!("{LC}/status"));
    api.post_empty(&format!("{LC}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    // The default answer of a logical cloud is EMCO's status=ready shape, its clusters lifted.
    let status = api
        .get(&format!("{LC}/status"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(status["name"], "lc1");
    assert_eq!(status["deployedStatus"], "Instantiating", "{status}");
    let deployed = api
        .get(&format!("{LC}/status?status=deployed"))
        .await
        .expect(StatusCode::OK)
        .json();
    // Namespace, certificate request, Role and RoleBinding.
    assert_eq!(deployed["deployedCounts"], json!({"Pending": 4}), "{deployed}");
    // Network intents have no update.
    api.post_empty(&format!("{EDGE01}/update"))
        .await
        .expect(StatusCode::NOT_FOUND);

    // While instantiated: its level, namespace and user do not change and it is not deleted; its permissions,
    // quotas and clusters may change (an /update applies them).
    let refused = api
        .put(
            LC,
            json!({"metadata": {"name": "lc1"}, "spec": {"namespace": "tenant2", "user": {"userName": "tenant-user", "type": "certificate"}}}),
        )
        .await
        .expect(StatusCode::CONFLICT);
    assert!(refused.message().contains("namespace"), "{}", refused.message());
    api.post(
        &format!("{LC}/user-permissions"),
        json!({"metadata": {"name": "p2"}, "spec": {"namespace": "tenant1", "apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.delete(LC).await.expect(StatusCode::CONFLICT);
    // An update waits until the instance has finished instantiating (no engine here: it never does).
    let waiting = api
        .post_empty(&format!("{LC}/update"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        waiting.message().contains("finished instantiating"),
        "{}",
        waiting.message()
    );
    // Its user's kubeconfig waits for the certificate.
    let not_yet = api
        .get(&format!("{LC}/cluster-references/r1/kubeconfig"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(not_yet.code(), "LogicalCloudNotReady");

    // A DIG on it waits until it has finished instantiating.
    api.put(
        DIG,
        json!({"metadata": {"name": "vfw_deployment_intent_group"}, "spec": {"compositeProfile": "vfw_composite-profile", "version": "fw0", "logicalCloud": "lc1"}}),
    )
    .await
    .expect(StatusCode::OK);
    api.post_empty(&format!("{DIG}/approve"))
        .await
        .expect(StatusCode::ACCEPTED);
    let waiting = api
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(waiting.code(), "LogicalCloudNotReady");
    assert!(
        waiting.message().contains("still instantiating"),
        "{}",
        waiting.message()
    );

    api.post_empty(&format!("{LC}/terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
    let history = api
        .get(&format!("{LC}/status?type=rsync"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(states(&history), ["Created", "Instantiated", "Terminated"]);
}

#[tokio::test]
async fn only_admins_read_a_logical_cloud_users_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(
        &path,
        "admin-token,alice,1,emco:admin\nviewer-token,ann,2,emco:viewer\n",
    )
    .unwrap();
    let anonymous = Api::with_config(
        Store::memory(),
        ServerConfig {
            token_auth: Some(TokenAuth::load(&path).unwrap()),
            ..ServerConfig::default()
        },
    );
    let admin = anonymous.with_token("admin-token");
    let viewer = anonymous.with_token("viewer-token");
    admin.onboard_vfw().await;
    onboard_logical_cloud(
        &admin,
        json!({"metadata": {"name": "lc1"}, "spec": {"namespace": "tenant1", "user": {"userName": "tenant-user", "type": "certificate"}}}),
    )
    .await;
    admin
        .post(
            &format!("{LC}/cluster-references"),
            json!({"metadata": {"name": "r1"}, "spec": {"clusterProvider": "vfw-cluster-provider", "cluster": "edge01"}}),
        )
        .await
        .expect(StatusCode::CREATED);
    let kubeconfig = format!("{LC}/cluster-references/r1/kubeconfig");
    let refused = viewer.get(&kubeconfig).await.expect(StatusCode::FORBIDDEN);
    assert!(refused.message().contains("credentials"), "{}", refused.message());
    // Viewers still read the logical cloud and its status.
    viewer.get(LC).await.expect(StatusCode::OK);
    viewer.get(&format!("{LC}/status")).await.expect(StatusCode::OK);
    // An admin gets past the guard (and learns the cloud is not instantiated).
    let not_ready = admin.get(&kubeconfig).await.expect(StatusCode::CONFLICT);
    assert_eq!(not_ready.code(), "LogicalCloudNotReady");
}
