//! rsync and logical clouds, against a kubesim cluster over HTTPS: a logical cloud's context applies its
//! namespace, RBAC, quota and its user's CertificateSigningRequest, which rsync approves and whose certificate it
//! keeps; a DIG on that logical cloud is then applied with the user's client certificate, so the cluster's RBAC
//! (and quotas) decide; a resumed rsync does it all again without harm; a kind the cluster does not serve fails
//! its resource with the cluster's message. And how rsync talks to a cluster: its applies and its bundle watch
//! share one HTTP/2 connection.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use base64::Engine as _;
use emco_appcontext::{
    AppContexts, AppMeta, Catalog, ClusterRecord, ContextMeta, ContextOwner, Engine, Kind, ResourcePath,
    ResourceRecord, ResourceRole, UserCredentials,
};
use emco_model::{ContextId, ContextStatus, Hook, HookDeletePolicy, HookEvent, RsyncStatus};
use emco_rsync::{Rsync, RsyncConfig};
use emco_store::{Store, Txn};
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kubesim::Simulator;
use serde_json::{Value as Json, json};

const PROVIDER: &str = "prov";
const CLUSTER: &str = "prov+edge01";
const PROJECT: &str = "p";
const LOGICAL_CLOUD: &str = "lc1";
const USER: &str = "alice";
const CSR_NAME: &str = "lc1-alice";

fn test_config() -> RsyncConfig {
    RsyncConfig {
        backoff_initial: Duration::from_millis(100),
        backoff_max: Duration::from_millis(500),
        unreachable_retry: Duration::from_millis(500),
        hook_timeout: Duration::from_secs(10),
        hook_poll: Duration::from_millis(50),
        ..RsyncConfig::default()
    }
}

/// A store with the cluster `prov+edge01` onboarded (its admin kubeconfig as the cluster's blob) and the project
/// `p`; with `key`, the logical cloud `lc1` holding that private key as its blob.
async fn onboarded_store(sim: &Simulator, key: Option<&str>) -> Store {
    let store = Store::memory();
    let catalog = Catalog::new(store.clone());
    let provider = ResourcePath::new(Kind::ClusterProvider, vec![PROVIDER.into()]);
    catalog.create(&provider, &json!({}), None, vec![]).await.unwrap();
    let cluster = ResourcePath::new(Kind::Cluster, vec![PROVIDER.into(), "edge01".into()]);
    let kubeconfig = sim.clusters()[0].kubeconfig();
    catalog
        .create(&cluster, &json!({}), Some(kubeconfig.as_bytes()), vec![])
        .await
        .unwrap();
    let project = ResourcePath::new(Kind::Project, vec![PROJECT.into()]);
    catalog.create(&project, &json!({}), None, vec![]).await.unwrap();
    if let Some(key) = key {
        let logical_cloud = ResourcePath::new(Kind::LogicalCloud, vec![PROJECT.into(), LOGICAL_CLOUD.into()]);
        catalog
            .create(&logical_cloud, &json!({}), Some(key.as_bytes()), vec![])
            .await
            .unwrap();
    }
    store
}

/// A private key (PEM PKCS#8) and a certificate request for `user` made with it (PEM).
fn user_request(user: &str) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, user);
    let request = params.serialize_request(&key).unwrap();
    (key.serialize_pem(), request.pem().unwrap())
}

fn resource(manifest: Json) -> ResourceRecord {
    let name = manifest["metadata"]["name"].as_str().unwrap().to_string();
    let kind = manifest["kind"].as_str().unwrap().to_string();
    let api_version = manifest["apiVersion"].as_str().unwrap().to_string();
    ResourceRecord::pending(&name, &kind, &api_version, manifest)
}

fn config_map(name: &str, namespace: Option<&str>) -> ResourceRecord {
    let mut manifest =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}});
    if let Some(namespace) = namespace {
        manifest["metadata"]["namespace"] = json!(namespace);
    }
    resource(manifest)
}

/// The logical cloud's resources: namespace `t1`, a Role and RoleBinding for the user there, a quota of
/// `config_maps` ConfigMaps (kube-root-ca.crt is one), and the user's certificate request.
fn logical_cloud_resources(request_pem: &str, config_maps: u32) -> Vec<ResourceRecord> {
    let csr = json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": CSR_NAME},
        "spec": {
            "request": base64::engine::general_purpose::STANDARD.encode(request_pem),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"],
        },
    });
    vec![
        resource(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t1"}})),
        resource(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "lc1-role", "namespace": "t1"},
            "rules": [{"apiGroups": ["", "apps"], "resources": ["*"],
                       "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}],
        })),
        resource(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "lc1-rolebinding", "namespace": "t1"},
            "subjects": [{"kind": "User", "name": USER, "apiGroup": "rbac.authorization.k8s.io"}],
            "roleRef": {"kind": "Role", "name": "lc1-role", "apiGroup": "rbac.authorization.k8s.io"},
        })),
        resource(json!({
            "apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "lc1-quota", "namespace": "t1"},
            "spec": {"hard": {"configmaps": config_maps.to_string()}},
        })),
        resource(csr).with_role(ResourceRole::Certificate),
    ]
}

/// Stores a context of one app on the cluster, Instantiating.
async fn store_context(store: &Store, meta: &ContextMeta, resources: Vec<ResourceRecord>) {
    let app = &meta.apps[0].name;
    let records = vec![ClusterRecord::pending(app, CLUSTER, resources)];
    let (guard, ops) = AppContexts::create_txn_parts(meta, &records);
    assert!(
        store
            .txn(Txn::new().when([guard]).and_then(ops))
            .await
            .unwrap()
            .succeeded
    );
}

fn app(name: &str) -> Vec<AppMeta> {
    vec![AppMeta {
        name: name.into(),
        dependencies: vec![],
        clusters: vec![CLUSTER.into()],
        excluded: Vec::new(),
    }]
}

fn logical_cloud_meta(id: ContextId) -> ContextMeta {
    ContextMeta::for_owner(
        id,
        ContextOwner::LogicalCloud {
            project: PROJECT.into(),
            name: LOGICAL_CLOUD.into(),
        },
        "default",
        app("logical-cloud"),
    )
}

fn dig_meta(id: ContextId, credentials: UserCredentials) -> ContextMeta {
    ContextMeta {
        project: PROJECT.into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "cp".into(),
        deployment_intent_group: "dig".into(),
        release: "r".into(),
        logical_cloud: LOGICAL_CLOUD.into(),
        credentials: Some(credentials),
        ..ContextMeta::for_owner(id, ContextOwner::DeploymentIntentGroup, "t1", app("app"))
    }
}

fn alice(context: ContextId) -> UserCredentials {
    UserCredentials {
        project: PROJECT.into(),
        logical_cloud: LOGICAL_CLOUD.into(),
        context,
        user: USER.into(),
    }
}

async fn idle(rsync: &Rsync) {
    for _ in 0..1200 {
        if !rsync.busy() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("rsync is still busy");
}

async fn run(rsync: &Rsync, id: ContextId) {
    rsync.instantiate(id);
    idle(rsync).await;
}

/// The (status, error) of the resource `name` of the context's only record.
async fn outcome(
    contexts: &AppContexts,
    id: ContextId,
    app: &str,
    name: &str,
) -> (RsyncStatus, Option<String>) {
    let record = contexts.cluster(id, app, CLUSTER).await.unwrap();
    let resource = record.resources.iter().find(|r| r.name == name).unwrap();
    (resource.status, resource.error.clone())
}

fn csr_api(client: &kube::Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("certificates.k8s.io", "v1", "CertificateSigningRequest");
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "certificatesigningrequests"),
    )
}

fn approved_conditions(csr: &DynamicObject) -> usize {
    csr.data["status"]["conditions"]
        .as_array()
        .map_or(0, |conditions| {
            conditions.iter().filter(|c| c["type"] == "Approved").count()
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logical_cloud_user_is_certified_and_a_dig_is_applied_with_its_credentials() {
    let sim = Simulator::start_named(1).await.unwrap();
    let admin = sim.clusters()[0].client().unwrap();
    let (key, request) = user_request(USER);
    let store = onboarded_store(&sim, Some(&key)).await;
    let contexts = AppContexts::new(store.clone());
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());

    // The logical cloud: everything applied, the request approved and its certificate kept.
    let cloud = ContextId::new(1).unwrap();
    store_context(
        &store,
        &logical_cloud_meta(cloud),
        logical_cloud_resources(&request, 10),
    )
    .await;
    run(&rsync, cloud).await;
    let record = contexts.cluster(cloud, "logical-cloud", CLUSTER).await.unwrap();
    for resource in &record.resources {
        assert_eq!(resource.status, RsyncStatus::Applied, "{resource:?}");
    }
    assert_eq!(
        contexts.meta(cloud).await.unwrap().status,
        ContextStatus::Instantiated
    );
    let certificate = record.resources[4]
        .certificate
        .clone()
        .expect("the issued certificate");
    assert!(
        certificate.starts_with("-----BEGIN CERTIFICATE-----"),
        "{certificate}"
    );
    assert!(record.resources[..4].iter().all(|r| r.certificate.is_none()));
    let csr = csr_api(&admin).get(CSR_NAME).await.unwrap();
    assert_eq!(approved_conditions(&csr), 1);
    let approved = &csr.data["status"]["conditions"][0];
    assert_eq!(
        (approved["status"].as_str(), approved["reason"].as_str()),
        (Some("True"), Some("EmcoApproved"))
    );
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(csr.data["status"]["certificate"].as_str().unwrap())
            .unwrap(),
        certificate.as_bytes()
    );

    // A DIG on the logical cloud, as alice: allowed in t1, forbidden in default.
    let dig = ContextId::new(2).unwrap();
    store_context(
        &store,
        &dig_meta(dig, alice(cloud)),
        vec![config_map("cm1", None), config_map("cm-default", Some("default"))],
    )
    .await;
    run(&rsync, dig).await;
    assert_eq!(
        outcome(&contexts, dig, "app", "cm1").await,
        (RsyncStatus::Applied, None)
    );
    let (status, error) = outcome(&contexts, dig, "app", "cm-default").await;
    assert_eq!(status, RsyncStatus::Failed);
    assert_eq!(
        error.as_deref(),
        Some(
            "configmaps \"cm-default\" is forbidden: User \"alice\" cannot patch resource \"configmaps\" in API group \"\" in the namespace \"default\" (403 Forbidden)"
        )
    );
    assert_eq!(
        contexts.meta(dig).await.unwrap().status,
        ContextStatus::InstantiateFailed
    );
    let config_maps: Api<DynamicObject> = Api::namespaced_with(
        admin.clone(),
        "t1",
        &ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "ConfigMap")),
    );
    let cm1 = config_maps.get("cm1").await.unwrap();
    assert_eq!(
        cm1.metadata.labels.unwrap()["emco/deployment-id"],
        format!("{dig}-app")
    );
    let in_default: Api<DynamicObject> = Api::namespaced_with(
        admin.clone(),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "ConfigMap")),
    );
    assert!(in_default.get_opt("cm-default").await.unwrap().is_none());

    // Hooks run as alice too: one in t1 runs, one in default is forbidden.
    let hooks = ContextId::new(3).unwrap();
    let hook = |name: &str, namespace: &str, event: HookEvent| {
        config_map(name, Some(namespace)).with_role(ResourceRole::Hook(Hook {
            events: vec![event],
            weight: 0,
            delete_policies: vec![HookDeletePolicy::HookFailed],
        }))
    };
    store_context(
        &store,
        &dig_meta(hooks, alice(cloud)),
        vec![
            hook("pre-t1", "t1", HookEvent::PreInstall),
            config_map("cm-hooks", None),
            hook("post-default", "default", HookEvent::PostInstall),
        ],
    )
    .await;
    run(&rsync, hooks).await;
    assert_eq!(
        outcome(&contexts, hooks, "app", "pre-t1").await,
        (RsyncStatus::Applied, None)
    );
    assert_eq!(
        outcome(&contexts, hooks, "app", "cm-hooks").await,
        (RsyncStatus::Applied, None)
    );
    assert_eq!(
        outcome(&contexts, hooks, "app", "post-default").await,
        (
            RsyncStatus::Failed,
            Some("post-install hook ConfigMap/post-default failed: configmaps \"post-default\" is forbidden: User \"alice\" cannot patch resource \"configmaps\" in API group \"\" in the namespace \"default\" (403 Forbidden)".into())
        )
    );
    assert!(config_maps.get_opt("pre-t1").await.unwrap().is_some());

    // A restart while both were instantiating: a new rsync over the same store resumes them, and nothing
    // changes — the request is not approved twice, the certificate is the one issued before.
    for id in [cloud, dig] {
        contexts
            .update_meta(id, |meta| meta.status = ContextStatus::Instantiating)
            .await
            .unwrap();
    }
    drop(rsync);
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());
    assert_eq!(rsync.resume().await.unwrap(), 2);
    idle(&rsync).await;
    let record = contexts.cluster(cloud, "logical-cloud", CLUSTER).await.unwrap();
    assert!(
        record.resources.iter().all(|r| r.status == RsyncStatus::Applied),
        "{record:?}"
    );
    assert_eq!(
        record.resources[4].certificate.as_deref(),
        Some(certificate.as_str())
    );
    assert_eq!(
        approved_conditions(&csr_api(&admin).get(CSR_NAME).await.unwrap()),
        1
    );
    assert_eq!(
        contexts.meta(cloud).await.unwrap().status,
        ContextStatus::Instantiated
    );
    assert_eq!(
        outcome(&contexts, dig, "app", "cm1").await,
        (RsyncStatus::Applied, None)
    );
    assert_eq!(
        outcome(&contexts, dig, "app", "cm-default").await.0,
        RsyncStatus::Failed
    );
    assert_eq!(
        contexts.meta(dig).await.unwrap().status,
        ContextStatus::InstantiateFailed
    );

    // Terminate: the DIG's objects go as alice (who may not even delete in default), then the logical cloud's,
    // the request among them.
    for (id, terminated) in [
        (dig, ContextStatus::TerminateFailed),
        (cloud, ContextStatus::Terminated),
    ] {
        contexts
            .update_meta(id, |meta| meta.status = ContextStatus::Terminating)
            .await
            .unwrap();
        rsync.terminate(id);
        idle(&rsync).await;
        assert_eq!(contexts.meta(id).await.unwrap().status, terminated);
    }
    assert_eq!(
        outcome(&contexts, dig, "app", "cm1").await,
        (RsyncStatus::Deleted, None)
    );
    assert_eq!(
        outcome(&contexts, dig, "app", "cm-default").await,
        (
            RsyncStatus::Failed,
            Some("configmaps \"cm-default\" is forbidden: User \"alice\" cannot delete resource \"configmaps\" in API group \"\" in the namespace \"default\" (403 Forbidden)".into())
        )
    );
    assert!(config_maps.get_opt("cm1").await.unwrap().is_none());
    assert!(csr_api(&admin).get_opt(CSR_NAME).await.unwrap().is_none());
    assert_eq!(
        outcome(&contexts, cloud, "logical-cloud", CSR_NAME).await,
        (RsyncStatus::Deleted, None)
    );
}

/// kubesim admits only POST creates against quotas, not server-side apply creates (which rsync uses), so the
/// quota is not enforced on rsync's objects yet: see the report of this change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dig_past_the_logical_clouds_quota_fails_with_the_clusters_message() {
    let sim = Simulator::start_named(1).await.unwrap();
    let (key, request) = user_request(USER);
    let store = onboarded_store(&sim, Some(&key)).await;
    let contexts = AppContexts::new(store.clone());
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());
    let cloud = ContextId::new(1).unwrap();
    store_context(
        &store,
        &logical_cloud_meta(cloud),
        logical_cloud_resources(&request, 2),
    )
    .await;
    run(&rsync, cloud).await;
    assert_eq!(
        contexts.meta(cloud).await.unwrap().status,
        ContextStatus::Instantiated
    );

    // kube-root-ca.crt and cm1 fill the quota of two.
    let dig = ContextId::new(2).unwrap();
    store_context(
        &store,
        &dig_meta(dig, alice(cloud)),
        vec![config_map("cm1", None), config_map("cm2", None)],
    )
    .await;
    run(&rsync, dig).await;
    assert_eq!(
        outcome(&contexts, dig, "app", "cm1").await,
        (RsyncStatus::Applied, None)
    );
    assert_eq!(
        outcome(&contexts, dig, "app", "cm2").await,
        (
            RsyncStatus::Failed,
            Some("configmaps \"cm2\" is forbidden: exceeded quota: lc1-quota, requested: configmaps=1, used: configmaps=2, limited: configmaps=2 (403 Forbidden)".into())
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_users_certificate_or_key_a_dig_fails_naming_the_logical_cloud_and_cluster() {
    let sim = Simulator::start_named(1).await.unwrap();
    let (key, _) = user_request(USER);
    let store = onboarded_store(&sim, Some(&key)).await;
    let contexts = AppContexts::new(store.clone());
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());

    // The logical cloud's context exists but its request was never applied: no certificate.
    let cloud = ContextId::new(1).unwrap();
    let (_, request) = user_request(USER);
    let mut meta = logical_cloud_meta(cloud);
    meta.status = ContextStatus::InstantiateFailed;
    store_context(&store, &meta, logical_cloud_resources(&request, 10)).await;
    let dig = ContextId::new(2).unwrap();
    store_context(
        &store,
        &dig_meta(dig, alice(cloud)),
        vec![config_map("cm1", None)],
    )
    .await;
    run(&rsync, dig).await;
    assert_eq!(
        outcome(&contexts, dig, "app", "cm1").await,
        (
            RsyncStatus::Failed,
            Some("credentials of logical cloud 'lc1' on cluster 'prov+edge01': user 'alice' has no certificate issued by the cluster yet".into())
        )
    );
    assert_eq!(
        contexts.meta(dig).await.unwrap().status,
        ContextStatus::InstantiateFailed
    );

    // No logical cloud context at all.
    let orphan = ContextId::new(3).unwrap();
    store_context(
        &store,
        &dig_meta(orphan, alice(ContextId::new(99).unwrap())),
        vec![config_map("cm1", None)],
    )
    .await;
    run(&rsync, orphan).await;
    let (status, error) = outcome(&contexts, orphan, "app", "cm1").await;
    assert_eq!(status, RsyncStatus::Failed);
    let error = error.unwrap();
    assert!(
        error.starts_with("credentials of logical cloud 'lc1' on cluster 'prov+edge01': the logical cloud's context cannot be read"),
        "{error}"
    );

    // A certificate but no key: the logical cloud of another store has none.
    let keyless = onboarded_store(&sim, None).await;
    let keyless_contexts = AppContexts::new(keyless.clone());
    let keyless_rsync = Rsync::new(
        Catalog::new(keyless.clone()),
        keyless_contexts.clone(),
        test_config(),
    );
    let (_, request) = user_request(USER);
    store_context(
        &keyless,
        &logical_cloud_meta(cloud),
        logical_cloud_resources(&request, 10),
    )
    .await;
    run(&keyless_rsync, cloud).await;
    let record = keyless_contexts
        .cluster(cloud, "logical-cloud", CLUSTER)
        .await
        .unwrap();
    assert!(record.resources[4].certificate.is_some(), "{record:?}");
    store_context(
        &keyless,
        &dig_meta(dig, alice(cloud)),
        vec![config_map("cm1", None)],
    )
    .await;
    run(&keyless_rsync, dig).await;
    assert_eq!(
        outcome(&keyless_contexts, dig, "app", "cm1").await,
        (
            RsyncStatus::Failed,
            Some("credentials of logical cloud 'lc1' on cluster 'prov+edge01': user 'alice' has no private key".into())
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_certificate_request_fails_its_resource() {
    let sim = Simulator::start_named(1).await.unwrap();
    let admin = sim.clusters()[0].client().unwrap();
    let (key, request) = user_request(USER);
    let store = onboarded_store(&sim, Some(&key)).await;
    let contexts = AppContexts::new(store.clone());
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());

    // Someone denied the request before emco got to it.
    let resources = logical_cloud_resources(&request, 10);
    let csr: DynamicObject = resources[4].manifest.read().unwrap();
    let api = csr_api(&admin);
    let created = api.create(&PostParams::default(), &csr).await.unwrap();
    let mut denial = serde_json::to_value(&created).unwrap();
    denial["status"] = json!({"conditions": [{"type": "Denied", "status": "True", "reason": "AdminDenied",
        "message": "not this user"}]});
    api.replace_subresource("approval", CSR_NAME, &PostParams::default(), &denial)
        .await
        .unwrap();

    let cloud = ContextId::new(1).unwrap();
    store_context(&store, &logical_cloud_meta(cloud), resources).await;
    run(&rsync, cloud).await;
    let record = contexts.cluster(cloud, "logical-cloud", CLUSTER).await.unwrap();
    assert_eq!(
        (record.resources[4].status, record.resources[4].error.as_deref()),
        (
            RsyncStatus::Failed,
            Some("CertificateSigningRequest lc1-alice was denied: not this user")
        )
    );
    assert!(record.resources[4].certificate.is_none());
    assert!(
        record.resources[..4]
            .iter()
            .all(|r| r.status == RsyncStatus::Applied)
    );
    assert_eq!(
        contexts.meta(cloud).await.unwrap().status,
        ContextStatus::InstantiateFailed
    );
    // emco did not approve over the denial.
    assert_eq!(approved_conditions(&api.get(CSR_NAME).await.unwrap()), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_the_cluster_does_not_serve_fails_its_resource_with_the_clusters_message() {
    // A cluster playing Kubernetes 1.20, which predates policy/v1.
    let old = kubesim::ClusterConfig::new(&kubesim::cluster_name(1))
        .with_kubernetes_version("1.20".parse().unwrap());
    let sim = Simulator::start(vec![old]).await.unwrap();
    let store = onboarded_store(&sim, None).await;
    let contexts = AppContexts::new(store.clone());
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());
    let id = ContextId::new(1).unwrap();
    let meta = ContextMeta::for_owner(
        id,
        ContextOwner::ClusterNetworks {
            provider: PROVIDER.into(),
            cluster: "edge01".into(),
        },
        "default",
        app("network-intents"),
    );
    store_context(
        &store,
        &meta,
        vec![
            resource(
                json!({"apiVersion": "k8s.plugin.opnfv.org/v1alpha1", "kind": "ProviderNetwork",
                "metadata": {"name": "pnet1"}, "spec": {"cniType": "ovn4nfv"}}),
            ),
            // A group version the cluster serves, without this kind.
            resource(json!({"apiVersion": "v1", "kind": "Frobnicator", "metadata": {"name": "f1"}})),
            // A built-in kind (resolved without discovery) this cluster does not serve.
            resource(json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": "high"}, "spec": {"minAvailable": 1}})),
            config_map("cm1", None),
        ],
    )
    .await;
    run(&rsync, id).await;
    let (status, error) = outcome(&contexts, id, "network-intents", "pnet1").await;
    assert_eq!(status, RsyncStatus::Failed);
    let error = error.unwrap();
    assert!(
        error.starts_with("the cluster does not serve k8s.plugin.opnfv.org/v1alpha1 ProviderNetwork: ")
            && error.ends_with("(404 NotFound)"),
        "{error}"
    );
    assert_eq!(
        outcome(&contexts, id, "network-intents", "f1").await,
        (
            RsyncStatus::Failed,
            Some(
                "the cluster does not serve v1 Frobnicator: the server could not find the requested resource"
                    .into()
            )
        )
    );
    let (status, error) = outcome(&contexts, id, "network-intents", "high").await;
    assert_eq!(status, RsyncStatus::Failed);
    let error = error.unwrap();
    assert!(
        error.starts_with(
            "the cluster does not serve policy/v1 PodDisruptionBudget: the server could not find the requested resource"
        ),
        "{error}"
    );
    assert_eq!(
        outcome(&contexts, id, "network-intents", "cm1").await,
        (RsyncStatus::Applied, None)
    );
    assert_eq!(
        contexts.meta(id).await.unwrap().status,
        ContextStatus::InstantiateFailed
    );
}

/// An update's context takes over from the one before: once it is instantiated, the objects only the old one has
/// are deleted, the shared ones stay, and the old context ends Updated — also when rsync restarts between the
/// two steps (`resume` finishes the handover).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_updated_context_takes_over_and_a_restart_finishes_the_handover() {
    use emco_k8s::k8s_openapi::api::core::v1::ConfigMap;
    let sim = Simulator::start_named(1).await.unwrap();
    let store = onboarded_store(&sim, None).await;
    let contexts = AppContexts::new(store.clone());
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());
    let old = ContextId::new(71).unwrap();
    let new = ContextId::new(72).unwrap();
    store_context(
        &store,
        &logical_cloud_meta(old),
        vec![config_map("only-old", None), config_map("shared", None)],
    )
    .await;
    run(&rsync, old).await;
    assert_eq!(
        contexts.meta(old).await.unwrap().status,
        ContextStatus::Instantiated
    );
    store_context(
        &store,
        &logical_cloud_meta(new),
        vec![config_map("shared", None), config_map("only-new", None)],
    )
    .await;
    run(&rsync, new).await;
    // Without `supersedes` nothing is handed over.
    assert_eq!(
        contexts.meta(old).await.unwrap().status,
        ContextStatus::Instantiated
    );
    let config_maps: Api<ConfigMap> = Api::namespaced(sim.clusters()[0].client().unwrap(), "default");
    let names = || async {
        let mut names: Vec<String> = config_maps
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .filter(|name| name != "kube-root-ca.crt")
            .collect();
        names.sort();
        names
    };
    assert_eq!(names().await, ["only-new", "only-old", "shared"]);

    // As if emco had stopped right after the new context was instantiated: a fresh rsync resumes the handover.
    contexts
        .update_meta(new, |meta| meta.supersedes = Some(old))
        .await
        .unwrap();
    let restarted = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());
    restarted.resume().await.unwrap();
    idle(&restarted).await;
    assert_eq!(contexts.meta(old).await.unwrap().status, ContextStatus::Updated);
    assert_eq!(
        contexts.meta(new).await.unwrap().status,
        ContextStatus::Instantiated
    );
    assert_eq!(names().await, ["only-new", "shared"]);
    assert_eq!(
        outcome(&contexts, old, "logical-cloud", "only-old").await.0,
        RsyncStatus::Deleted
    );
    assert_eq!(
        outcome(&contexts, old, "logical-cloud", "shared").await.0,
        RsyncStatus::Applied
    );
    // A second resume has nothing more to do.
    restarted.resume().await.unwrap();
    idle(&restarted).await;
    assert_eq!(names().await, ["only-new", "shared"]);
}

/// An update to another namespace: the objects without a namespace of their own move (applied in the new one,
/// deleted from the old one, its ResourceBundleState too); a cluster-scoped object both contexts hold stays.
/// An update in the same namespace writes nothing for what its predecessor applied unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_to_another_namespace_moves_namespaced_objects_and_keeps_cluster_scoped_ones() {
    use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    let sim = Simulator::start_named(1).await.unwrap();
    let store = onboarded_store(&sim, None).await;
    let contexts = AppContexts::new(store.clone());
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());
    let client = sim.clusters()[0].client().unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "moved"}})).unwrap(),
        )
        .await
        .unwrap();
    let cluster_scoped =
        || resource(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kept"}}));
    let first = ContextId::new(81).unwrap();
    store_context(
        &store,
        &logical_cloud_meta(first),
        vec![cluster_scoped(), config_map("app-config", None)],
    )
    .await;
    run(&rsync, first).await;
    let kept_uid = namespaces.get("kept").await.unwrap().metadata.uid;

    // The same content again (an update that changed nothing): no write at all.
    let second = ContextId::new(82).unwrap();
    let mut meta = logical_cloud_meta(second);
    meta.supersedes = Some(first);
    store_context(
        &store,
        &meta,
        vec![cluster_scoped(), config_map("app-config", None)],
    )
    .await;
    let before = std::time::Instant::now();
    run(&rsync, second).await;
    let writes: Vec<String> = sim.clusters()[0]
        .shared()
        .requests()
        .into_iter()
        .filter(|request| request.at >= before && request.method != "GET")
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert_eq!(contexts.meta(first).await.unwrap().status, ContextStatus::Updated);
    assert_eq!(
        outcome(&contexts, second, "logical-cloud", "app-config").await.0,
        RsyncStatus::Applied
    );

    // Another namespace.
    let third = ContextId::new(83).unwrap();
    let mut meta = logical_cloud_meta(third);
    meta.namespace = "moved".into();
    meta.supersedes = Some(second);
    store_context(
        &store,
        &meta,
        vec![cluster_scoped(), config_map("app-config", None)],
    )
    .await;
    run(&rsync, third).await;
    assert_eq!(
        contexts.meta(third).await.unwrap().status,
        ContextStatus::Instantiated
    );
    assert_eq!(
        contexts.meta(second).await.unwrap().status,
        ContextStatus::Updated
    );
    let in_default: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let in_moved: Api<ConfigMap> = Api::namespaced(client.clone(), "moved");
    assert!(in_default.get_opt("app-config").await.unwrap().is_none());
    assert!(in_moved.get_opt("app-config").await.unwrap().is_some());
    assert_eq!(namespaces.get("kept").await.unwrap().metadata.uid, kept_uid);
    // Every object of the chain carries the first context's label.
    let moved = in_moved.get("app-config").await.unwrap();
    assert_eq!(
        moved.metadata.labels.unwrap()["emco/deployment-id"],
        "81-logical-cloud"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusters_applies_and_its_bundle_watch_share_one_http2_connection() {
    let sim = Simulator::start_named(1).await.unwrap();
    let store = onboarded_store(&sim, None).await;
    let contexts = AppContexts::new(store.clone());
    let rsync = Rsync::new(Catalog::new(store.clone()), contexts.clone(), test_config());
    let id = ContextId::new(1).unwrap();
    let meta = ContextMeta::for_owner(id, ContextOwner::DeploymentIntentGroup, "default", app("app"));
    let config_maps = (0..20)
        .map(|i| config_map(&format!("cm{i}"), Some("default")))
        .collect();
    store_context(&store, &meta, config_maps).await;
    run(&rsync, id).await;
    let record = contexts.cluster(id, "app", CLUSTER).await.unwrap();
    assert!(record.resources.iter().all(|r| r.status == RsyncStatus::Applied));
    let cluster = sim.clusters()[0].shared();
    for _ in 0..400 {
        if cluster.requests().iter().any(|r| r.watch) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let requests = cluster.requests();
    assert!(requests.iter().any(|r| r.watch), "the bundle watch started");
    assert!(requests.len() > 20, "{} requests", requests.len());
    assert!(
        requests.iter().all(|r| r.version == http::Version::HTTP_2),
        "{:?}",
        requests.iter().map(|r| r.version).collect::<Vec<_>>()
    );
    assert_eq!(cluster.connections(), 1, "one connection carries them all");
    // The watcher lists bundles once, after their CRD is installed (a list before it would fail and be retried).
    let bundle_lists = requests
        .iter()
        .filter(|r| r.method == "GET" && !r.watch && r.path.ends_with("/resourcebundlestates"))
        .count();
    assert_eq!(bundle_lists, 1);
}
