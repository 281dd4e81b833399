//! Logical clouds (dcm) end to end against a kubesim cluster: a level-1 logical cloud instantiated (namespace,
//! quota, role, binding, a certificate the cluster signed), its user's kubeconfig working with kube-rs and the real
//! `kubectl` (allowed in the namespace, forbidden outside), the vFW DIG deployed on it with the user's credentials
//! and into its namespace, the quota refusing what exceeds it with Kubernetes' message, terminate refused while the
//! DIG is instantiated, a level-0 logical cloud lending the clusters' own namespace, and updates by difference
//! (a cluster added, a quota deleted, a quota patched in place with nothing else written).

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use emco_k8s::k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(30);
pub(crate) const LC: &str = "/v2/projects/testvfw/logical-clouds/lc1";

/// Creates level-1 logical cloud `lc1` of project `testvfw` on `edge01`, for user `tenant-user` in namespace
/// `tenant1`, with a quota allowing two Deployments.
pub(crate) async fn create_level1(http: &Http) {
    http.post(
        "/v2/projects/testvfw/logical-clouds",
        json!({"metadata": {"name": "lc1"}, "spec": {"level": "1", "namespace": "tenant1", "user": {"userName": "tenant-user", "type": "certificate"}}}),
    )
    .await
    .expect(201);
    http.post(
        &format!("{LC}/cluster-references"),
        json!({"metadata": {"name": "edge01-ref"}, "spec": {"clusterProvider": "vfw-cluster-provider", "cluster": "edge01", "loadBalancerIP": "0.0.0.0"}}),
    )
    .await
    .expect(201);
    http.post(
        &format!("{LC}/user-permissions"),
        json!({"metadata": {"name": "tenant-admin"}, "spec": {"namespace": "tenant1", "apiGroups": ["", "apps"], "resources": ["*"], "verbs": ["*"]}}),
    )
    .await
    .expect(201);
    http.post(
        &format!("{LC}/cluster-quotas"),
        json!({"metadata": {"name": "small"}, "spec": {"count/deployments.apps": "2"}}),
    )
    .await
    .expect(201);
}

/// The sink on the level-1 logical cloud `lc1` of [`create_level1`], instantiated: its status answer then.
async fn instantiated_level1(http: &Http, sim: &kubesim::Simulator) -> Json {
    onboard_apps_on(http, &kubeconfigs(sim), &[("sink", vfw_chart("sink"))], "lc1").await;
    create_level1(http).await;
    http.post_empty(&format!("{LC}/instantiate")).await.expect(202);
    wait_lc(http, |a| a["deployedStatus"] == "Instantiated").await
}

pub(crate) async fn wait_lc(http: &Http, done: impl Fn(&Json) -> bool) -> Json {
    wait_lc_at(http, LC, done).await
}

/// Polls the EMCO 22.x `status=deployed` answer of logical cloud `lc` until `done` holds.
pub(crate) async fn wait_lc_at(http: &Http, lc: &str, done: impl Fn(&Json) -> bool) -> Json {
    http.wait_until(&format!("{lc}/status?status=deployed"), SETTLE, done)
        .await
}

/// The name and status of a state object's `last_operation` condition.
fn last_operation(state: &Json) -> (&str, &str) {
    let condition = state["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "last_operation")
        .unwrap();
    (
        condition["name"].as_str().unwrap(),
        condition["status"].as_str().unwrap(),
    )
}

pub(crate) async fn user_client(kubeconfig: &str) -> kube::Client {
    let parsed = kube::config::Kubeconfig::from_yaml(kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(parsed, &kube::config::KubeConfigOptions::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

pub(crate) fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}}),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level1_logical_cloud_carries_the_vfw_dig_with_its_users_credentials() {
    let sim = vfw_clusters(1).await;
    // The cluster's monitor reports the cloud's objects, so its readiness is known.
    let _monitors = start_monitors(&sim);
    let edge01 = &sim.clusters()[0];
    let emco = Emco::start().await;
    onboard_apps_on(
        &emco.http,
        &kubeconfigs(&sim),
        &APPS.iter().map(|app| (*app, vfw_chart(app))).collect::<Vec<_>>(),
        "lc1",
    )
    .await;
    create_level1(&emco.http).await;
    // The state object (seed 002) on the logical cloud's GET: created, not deployed.
    let state = emco.http.get(LC).await.expect(200).json()["state"].clone();
    assert_eq!(state["ready"], false, "{state}");
    assert_eq!(last_operation(&state), ("Create", "succeeded"), "{state}");

    // The DIG cannot instantiate on a logical cloud that is not instantiated.
    let early = emco
        .http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(409)
        .json();
    assert_eq!(early["code"], "LogicalCloudNotReady", "{early}");

    emco.http
        .post_empty(&format!("{LC}/instantiate"))
        .await
        .expect(202);
    let instantiated = wait_lc(&emco.http, |a| a["deployedStatus"] == "Instantiated").await;
    assert_eq!(instantiated["name"], "lc1", "{instantiated}");
    // Ready once instantiated: at the end of the 22.x answer and on the GET.
    wait_lc(&emco.http, |a| a["readiness"]["ready"] == true).await;
    let state = emco.http.get(LC).await.expect(200).json()["state"].clone();
    assert_eq!(state["ready"], true, "{state}");
    assert_eq!(last_operation(&state), ("Instantiate", "succeeded"), "{state}");
    // Namespace, quota, role and binding exist; the request was approved and signed.
    let admin = edge01.client().unwrap();
    Api::<Namespace>::all(admin.clone()).get("tenant1").await.unwrap();
    assert!(
        !Api::<Role>::namespaced(admin.clone(), "tenant1")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert!(
        !Api::<RoleBinding>::namespaced(admin.clone(), "tenant1")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let csrs: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("certificates.k8s.io", "v1", "CertificateSigningRequest"),
            "certificatesigningrequests",
        ),
    );
    let signed = csrs.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(signed.len(), 1);
    assert!(
        signed[0].data["status"]["certificate"].is_string(),
        "{:?}",
        signed[0].data
    );

    // The user's kubeconfig: allowed in the namespace, forbidden outside it; no admin credential in it.
    let reply = emco
        .http
        .get(&format!("{LC}/cluster-references/edge01-ref/kubeconfig"))
        .await
        .expect(200);
    let kubeconfig = String::from_utf8(reply.body.clone()).unwrap();
    let admin_certificate = edge01
        .kubeconfig()
        .lines()
        .find_map(|line| {
            line.trim()
                .strip_prefix("client-certificate-data:")
                .map(|v| v.trim().to_string())
        })
        .unwrap();
    assert!(
        !kubeconfig.contains(&admin_certificate),
        "the admin's certificate leaked into {kubeconfig}"
    );
    let user = user_client(&kubeconfig).await;
    Api::<ConfigMap>::namespaced(user.clone(), "tenant1")
        .create(&PostParams::default(), &config_map("mine"))
        .await
        .unwrap();
    let forbidden = Api::<ConfigMap>::namespaced(user.clone(), "default")
        .create(&PostParams::default(), &config_map("theirs"))
        .await
        .unwrap_err();
    assert!(
        forbidden
            .to_string()
            .contains("User \"tenant-user\" cannot create resource \"configmaps\""),
        "{forbidden}"
    );
    if let Some(kubectl) = kubectl() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("user.yaml");
        std::fs::write(&file, &kubeconfig).unwrap();
        let run = |args: &[&str]| {
            std::process::Command::new(&kubectl)
                .arg("--kubeconfig")
                .arg(&file)
                .args(args)
                .output()
                .unwrap()
        };
        let allowed = run(&["get", "configmaps", "-o", "name"]);
        assert!(
            allowed.status.success(),
            "{}",
            String::from_utf8_lossy(&allowed.stderr)
        );
        assert!(String::from_utf8_lossy(&allowed.stdout).contains("configmap/mine"));
        let refused = run(&["get", "configmaps", "-n", "default"]);
        assert!(!refused.status.success());
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("forbidden"),
            "{}",
            String::from_utf8_lossy(&refused.stderr)
        );
    }

    // The DIG lands in the logical cloud's namespace, applied as the user: the quota of two Deployments refuses
    // the third with Kubernetes' message.
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let settled = emco
        .http
        .wait_for("?status=deployed&output=detail", SETTLE, |a| {
            a["deployedStatus"] == "InstantiateFailed" || a["deployedStatus"] == "Instantiated"
        })
        .await;
    let deployments = Api::<Deployment>::namespaced(admin.clone(), "tenant1")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(deployments.len(), 2, "{settled}");
    assert!(
        Api::<Deployment>::namespaced(admin.clone(), "default")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert_eq!(settled["deployedStatus"], "InstantiateFailed", "{settled}");
    let text = settled.to_string();
    assert!(text.contains("exceeded quota: small"), "{settled}");
    assert!(text.contains("limited: count/deployments.apps=2"), "{settled}");

    // Terminate is refused while the DIG is instantiated.
    let refused = emco
        .http
        .post_empty(&format!("{LC}/terminate"))
        .await
        .expect(409)
        .json();
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("vfw_deployment_intent_group"),
        "{refused}"
    );
    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?status=deployed", SETTLE, |a| {
            a["deployedStatus"] == "Terminated"
        })
        .await;
    emco.http.post_empty(&format!("{LC}/terminate")).await.expect(202);
    wait_lc(&emco.http, |a| a["deployedStatus"] == "Terminated").await;
    let state = emco.http.get(LC).await.expect(200).json()["state"].clone();
    assert_eq!(state["ready"], false, "{state}");
    assert_eq!(last_operation(&state), ("Terminate", "succeeded"), "{state}");
    let gone = Api::<Namespace>::all(admin).get_opt("tenant1").await.unwrap();
    assert!(
        gone.is_none_or(|ns| ns.metadata.deletion_timestamp.is_some()),
        "the namespace is deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level0_logical_cloud_lends_the_clusters_namespace_and_checks_placement() {
    let sim = vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_apps_on(
        &emco.http,
        &kubeconfigs(&sim),
        &[("sink", vfw_chart("sink"))],
        "admin-lc",
    )
    .await;
    let lc = "/v2/projects/testvfw/logical-clouds/admin-lc";
    emco.http
        .post(
            "/v2/projects/testvfw/logical-clouds",
            json!({"metadata": {"name": "admin-lc"}, "spec": {"level": "0"}}),
        )
        .await
        .expect(201);
    emco.http
        .post(
            &format!("{lc}/cluster-references"),
            json!({"metadata": {"name": "one"}, "spec": {"clusterProvider": "vfw-cluster-provider", "cluster": "edge01"}}),
        )
        .await
        .expect(201);
    // A level-0 cloud has no objects, so no quota: the two do not go together (409).
    emco.http
        .post(
            &format!("{lc}/cluster-quotas"),
            json!({"metadata": {"name": "q"}, "spec": {"pods": "1"}}),
        )
        .await
        .expect(201);
    let refused = emco
        .http
        .post_empty(&format!("{lc}/instantiate"))
        .await
        .expect(409)
        .json();
    assert!(
        refused["message"].as_str().unwrap().contains("level 0"),
        "{refused}"
    );
    emco.http
        .delete(&format!("{lc}/cluster-quotas/q"))
        .await
        .expect(204);
    emco.http
        .post_empty(&format!("{lc}/instantiate"))
        .await
        .expect(202);
    wait_lc_at(&emco.http, lc, |a| a["deployedStatus"] == "Instantiated").await;
    // The DIG places `sink` on every `edge` cluster (both are mandatory), but the cloud has only edge01.
    let outside = emco
        .http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(400)
        .json();
    assert_eq!(outside["code"], "NotInLogicalCloud", "{outside}");
    assert!(
        outside["message"]
            .as_str()
            .unwrap()
            .contains("vfw-cluster-provider+edge02"),
        "{outside}"
    );
    // Referencing edge02 takes effect with /update; then the DIG places on both.
    emco.http
        .post(
            &format!("{lc}/cluster-references"),
            json!({"metadata": {"name": "two"}, "spec": {"clusterProvider": "vfw-cluster-provider", "cluster": "edge02"}}),
        )
        .await
        .expect(201);
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(400);
    emco.http.post_empty(&format!("{lc}/update")).await.expect(202);
    wait_lc_at(&emco.http, lc, |a| {
        a["deployedStatus"] == "Instantiated" && a["states"]["actions"][2]["state"] == "Updated"
    })
    .await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let deployed = emco
        .http
        .wait_for("?status=deployed", SETTLE, |a| {
            a["deployedStatus"] == "Instantiated"
        })
        .await;
    assert_eq!(deployed["deployedCounts"], json!({"Applied": 6}), "{deployed}");
    // No user, no kubeconfig: the cloud's state rules it out.
    emco.http
        .get(&format!("{lc}/cluster-references/one/kubeconfig"))
        .await
        .expect(409);
}

/// `emco serve` killed with SIGKILL while a cluster's network intents and a logical cloud are both still being
/// applied to a cluster that is down; the next `emco serve` on the same data resumes both to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_intents_and_a_logical_cloud_resume_after_sigkill() {
    use crate::network_intents::{EDGE01, install_network_crds, onboard_networks, wait_status};
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let edge01 = &sim.clusters()[0];
    install_network_crds(edge01).await;
    let data = tempfile::tempdir().unwrap();
    let port = crate::rsync::free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    onboard_networks(&http, &edge01.kubeconfig()).await;
    http.post("/v2/projects", json!({"metadata": {"name": "testvfw"}}))
        .await
        .expect(201);
    create_level1(&http).await;
    edge01
        .set_faults(kubesim::Faults {
            down: true,
            ..kubesim::Faults::default()
        })
        .await
        .unwrap();
    http.post_empty(&format!("{EDGE01}/apply")).await.expect(202);
    http.post_empty(&format!("{LC}/instantiate")).await.expect(202);
    wait_status(&http, "", |a| a["rsync-status"] == json!({"Retrying": 3})).await;
    wait_lc(&http, |a| a["deployedCounts"]["Retrying"].as_u64() == Some(5)).await;
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();

    edge01.set_faults(kubesim::Faults::default()).await.unwrap();
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    let applied = wait_status(&http, "", |a| a["status"] == "Instantiated").await;
    assert_eq!(applied["rsync-status"], json!({"Applied": 3}), "{applied}");
    let instantiated = wait_lc(&http, |a| a["deployedStatus"] == "Instantiated").await;
    assert_eq!(
        instantiated["deployedCounts"],
        json!({"Applied": 5}),
        "{instantiated}"
    );
    // The resumed instantiation approved the request and kept the certificate: the user's kubeconfig works.
    let kubeconfig = http
        .get(&format!("{LC}/cluster-references/edge01-ref/kubeconfig"))
        .await
        .expect(200);
    let user = user_client(&String::from_utf8(kubeconfig.body).unwrap()).await;
    Api::<ConfigMap>::namespaced(user, "tenant1")
        .create(&PostParams::default(), &config_map("after-restart"))
        .await
        .unwrap();
    emco.start_kill().unwrap();
}

/// `/update` applies what changed in an instantiated logical cloud: a new cluster gets the cloud's objects, a
/// removed quota goes, what stays is untouched (the namespace survives the handover), the old context ends
/// Updated; an update that would take a cluster from a DIG deployed there is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_applies_the_changes_of_an_instantiated_logical_cloud() {
    use emco_k8s::k8s_openapi::api::core::v1::ResourceQuota;
    let sim = vfw_clusters(2).await;
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    let emco = Emco::start().await;
    let first = instantiated_level1(&emco.http, &sim).await;
    assert_eq!(first["deployedCounts"], json!({"Applied": 5}), "{first}");
    let first_context = first["states"]["actions"][1]["instance"]
        .as_str()
        .unwrap()
        .to_string();
    let namespace_uid = |cluster: &kubesim::SimCluster| {
        let client = cluster.client().unwrap();
        async move {
            Api::<Namespace>::all(client)
                .get("tenant1")
                .await
                .unwrap()
                .metadata
                .uid
                .unwrap()
        }
    };
    let uid = namespace_uid(edge01).await;

    // Nothing changed in the cloud's body; its clusters and quotas may change while it is instantiated.
    emco.http
        .post(
            &format!("{LC}/cluster-references"),
            json!({"metadata": {"name": "edge02-ref"}, "spec": {"clusterProvider": "vfw-cluster-provider", "cluster": "edge02"}}),
        )
        .await
        .expect(201);
    emco.http
        .delete(&format!("{LC}/cluster-quotas/small"))
        .await
        .expect(204);
    emco.http.post_empty(&format!("{LC}/update")).await.expect(202);
    let updated = wait_lc(&emco.http, |a| {
        a["deployedStatus"] == "Instantiated" && a["states"]["actions"].as_array().unwrap().len() == 3
    })
    .await;
    // Namespace, certificate request, Role and RoleBinding on each cluster.
    assert_eq!(updated["deployedCounts"], json!({"Applied": 8}), "{updated}");
    assert_eq!(updated["states"]["actions"][2]["state"], "Updated", "{updated}");
    let old = emco
        .http
        .wait_until(
            &format!("{LC}/status?status=deployed&instance={first_context}"),
            SETTLE,
            |a| a["deployedStatus"] == "Updated",
        )
        .await;
    assert_eq!(
        old["deployedCounts"]["Deleted"], 1,
        "only the quota was deleted: {old}"
    );
    // The namespace on edge01 is the same object; edge02 has one now; the quota is gone.
    assert_eq!(namespace_uid(edge01).await, uid);
    namespace_uid(edge02).await;
    let quotas = Api::<ResourceQuota>::namespaced(edge01.client().unwrap(), "tenant1")
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(quotas.items.is_empty(), "{:?}", quotas.items);
    // The user keeps working on edge01 and now reaches edge02.
    for reference in ["edge01-ref", "edge02-ref"] {
        let kubeconfig = emco
            .http
            .get(&format!("{LC}/cluster-references/{reference}/kubeconfig"))
            .await
            .expect(200);
        let user = user_client(&String::from_utf8(kubeconfig.body).unwrap()).await;
        Api::<ConfigMap>::namespaced(user, "tenant1")
            .create(&PostParams::default(), &config_map("works"))
            .await
            .unwrap();
    }

    // A DIG on both clusters: dropping edge02 from the cloud is refused.
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?status=deployed", SETTLE, |a| {
            a["deployedStatus"] == "Instantiated"
        })
        .await;
    emco.http
        .delete(&format!("{LC}/cluster-references/edge02-ref"))
        .await
        .expect(204);
    let refused = emco
        .http
        .post_empty(&format!("{LC}/update"))
        .await
        .expect(409)
        .json();
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("vfw-cluster-provider+edge02") && message.contains("vfw_deployment_intent_group"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_patches_a_changed_quota_in_place_and_writes_nothing_else() {
    use emco_k8s::k8s_openapi::api::core::v1::ResourceQuota;
    let sim = vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    let emco = Emco::start().await;
    instantiated_level1(&emco.http, &sim).await;
    let quotas = Api::<ResourceQuota>::namespaced(edge01.client().unwrap(), "tenant1");
    let before = quotas.get("small").await.unwrap();

    emco.http
        .request(
            "PUT",
            &format!("{LC}/cluster-quotas/small"),
            Some("application/json"),
            json!({"metadata": {"name": "small"}, "spec": {"count/deployments.apps": "5"}})
                .to_string()
                .as_bytes(),
        )
        .await
        .expect(200);
    let since = std::time::Instant::now();
    emco.http.post_empty(&format!("{LC}/update")).await.expect(202);
    wait_lc(&emco.http, |a| {
        a["deployedStatus"] == "Instantiated" && a["states"]["actions"].as_array().unwrap().len() == 3
    })
    .await;
    let after = quotas.get("small").await.unwrap();
    assert_eq!(after.metadata.uid, before.metadata.uid, "patched in place");
    let hard = after.spec.unwrap().hard.unwrap();
    assert_eq!(hard["count/deployments.apps"].0, "5");
    // The namespace, the certificate request, the role and its binding were left alone.
    let writes: Vec<String> = edge01
        .shared()
        .requests()
        .into_iter()
        .filter(|request| request.at >= since && request.method != "GET")
        .filter(|request| !request.path.contains("resourcebundlestates"))
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    assert_eq!(
        writes,
        ["PATCH /api/v1/namespaces/tenant1/resourcequotas/small"],
        "the only object written"
    );
}
