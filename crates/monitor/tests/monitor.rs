//! The monitor against kubesim clusters: an app of 2,000 pods whose ResourceBundleState stays under the API's size
//! limit, a heartbeat refreshed while nothing changes, watches of only the kinds the bundles name, status configs
//! from the bundle spec, and the `deploy/` manifests applied with the real kubectl.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use emco_monitor::MonitorConfig;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

/// A simulated cluster with the ResourceBundleState CRD, its client, and its CRD API.
async fn cluster_with_bundle_crd() -> (kubesim::Simulator, kube::Client, Api<DynamicObject>) {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    let crds = install_bundle_crd(&client).await;
    (sim, client, crds)
}

/// Installs the ResourceBundleState CRD through `client`; returns the CRD API.
async fn install_bundle_crd(client: &kube::Client) -> Api<DynamicObject> {
    let crds = Api::<DynamicObject>::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(emco_k8s::rbs_crd()).unwrap(),
    )
    .await
    .unwrap();
    crds
}

/// The ResourceBundleStates of namespace `default`.
fn bundles_in_default(client: &kube::Client) -> Api<DynamicObject> {
    let rbs = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(emco_k8s::RBS_GROUP, emco_k8s::RBS_VERSION, emco_k8s::RBS_KIND),
        emco_k8s::RBS_PLURAL,
    );
    Api::namespaced_with(client.clone(), "default", &rbs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_of_two_thousand_pods_stays_under_the_size_limit() {
    let (_sim, client, _) = cluster_with_bundle_crd().await;
    let bundles = bundles_in_default(&client);
    bundles
        .create(
            &PostParams::default(),
            &serde_json::from_value(emco_k8s::rbs_object("1-big", "default")).unwrap(),
        )
        .await
        .unwrap();
    let config = MonitorConfig {
        coalesce: Duration::from_millis(500),
        ..MonitorConfig::default()
    };
    let monitor = tokio::spawn(emco_monitor::run(client.clone(), config, std::future::pending()));

    let deployments = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("apps", "v1", "Deployment"), "deployments"),
    );
    let padding = "0123456789".repeat(10);
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "big", "labels": {"emco/deployment-id": "1-big"}},
        "spec": {"replicas": 2000, "selector": {"matchLabels": {"app": "big"}},
                 "template": {"metadata": {"labels": {"app": "big", "emco/deployment-id": "1-big"}},
                              "spec": {"containers": [{"name": "main", "image": "registry.local/big:1", "env": [{"name": "PADDING", "value": padding}]}]}}}});
    deployments
        .patch("big", &PatchParams::apply("test"), &Patch::Apply(&deployment))
        .await
        .unwrap();

    // Every pod counted and Ready, and the Deployment Ready with them: the status then describes 2,001 objects,
    // far more than fit in full. (kubesim's controllers resync from the store when the burst overflows their
    // change feed, so no reconcile of the Deployment is lost.)
    let deadline = tokio::time::Instant::now() + Duration::from_secs(180);
    let bundle = loop {
        let Some(bundle) = get_retrying(&bundles, "1-big").await else {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the bundle cannot be read"
            );
            continue;
        };
        let status = &bundle.data["status"];
        if status["resourceCount"].as_u64() == Some(2001) && status["ready"].as_bool() == Some(true) {
            break bundle;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the monitor never saw 2,001 objects Ready: resourceCount {}, ready {}",
            status["resourceCount"],
            status["ready"]
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let size = serde_json::to_vec(&bundle).unwrap().len();
    assert!(
        size <= emco_monitor::bundle::MAX_STATUS_BYTES + 4096,
        "ResourceBundleState is {size} bytes"
    );
    assert_eq!(bundle.data["status"]["compacted"], true);
    assert_eq!(
        bundle.data["status"]["deploymentStatuses"][0]["metadata"]["name"],
        "big"
    );
    monitor.abort();
}

/// `bundle` of `bundles`, or `None` (after a pause) when the request failed in transport: a pooled keep-alive
/// connection the server closed as it was reused resets, and a poll asks again rather than fail the test.
async fn get_retrying(bundles: &Api<DynamicObject>, bundle: &str) -> Option<DynamicObject> {
    match bundles.get(bundle).await {
        Ok(object) => Some(object),
        Err(kube::Error::Api(response)) => panic!("reading {bundle}: {response:?}"),
        Err(err) => {
            eprintln!("reading {bundle}: {err}; asking again");
            tokio::time::sleep(Duration::from_millis(100)).await;
            None
        }
    }
}

/// Polls `bundle` of `bundles` until `done` holds of its status (or fails after a generous deadline).
async fn status_when(
    bundles: &Api<DynamicObject>,
    bundle: &str,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let Some(object) = get_retrying(bundles, bundle).await else {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: the bundle cannot be read"
            );
            continue;
        };
        let status = object.data["status"].clone();
        if done(&status) {
            return status;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what}: status {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_is_refreshed_while_nothing_changes() {
    let (_sim, client, _) = cluster_with_bundle_crd().await;
    let bundles = bundles_in_default(&client);
    bundles
        .create(
            &PostParams::default(),
            &serde_json::from_value(emco_k8s::rbs_object("1-quiet", "default")).unwrap(),
        )
        .await
        .unwrap();
    let configmaps = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "ConfigMap"), "configmaps"),
    );
    let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "labels": {"emco/deployment-id": "1-quiet"}}, "data": {"a": "1"}});
    configmaps
        .patch("settings", &PatchParams::apply("test"), &Patch::Apply(&configmap))
        .await
        .unwrap();
    let config = MonitorConfig {
        heartbeat: Duration::from_secs(1),
        ..MonitorConfig::default()
    };
    let monitor = tokio::spawn(emco_monitor::run(client.clone(), config, std::future::pending()));

    let first = status_when(&bundles, "1-quiet", "the ConfigMap is reported", |status| {
        status["configMapStatuses"][0]["metadata"]["name"] == "settings"
    })
    .await;
    let first_beat = first["heartbeat"].as_str().unwrap().to_string();
    assert!(
        first_beat.parse::<jiff::Timestamp>().is_ok(),
        "an RFC 3339 time: {first_beat}"
    );
    // Nothing changes in the cluster; the heartbeat moves on and the rest of the status stays.
    let later = status_when(&bundles, "1-quiet", "the heartbeat is refreshed", |status| {
        status["heartbeat"]
            .as_str()
            .is_some_and(|beat| beat != first_beat)
    })
    .await;
    let without_beat = |status: &serde_json::Value| {
        let mut status = status.clone();
        status.as_object_mut().unwrap().remove("heartbeat");
        status
    };
    assert_eq!(without_beat(&later), without_beat(&first));
    assert!(
        later["heartbeat"]
            .as_str()
            .unwrap()
            .parse::<jiff::Timestamp>()
            .unwrap()
            > first_beat.parse::<jiff::Timestamp>().unwrap()
    );
    monitor.abort();
}

fn kubectl_path() -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("kubectl"))
        .find(|candidate| candidate.is_file())
}

/// `deploy/` applies with the real kubectl; its CRD is the one rsync installs; its role lets the monitor read every
/// kind it watches and write ResourceBundleState status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deploy_manifests_apply_and_grant_what_the_monitor_needs() {
    let Some(kubectl) = kubectl_path() else {
        eprintln!("skipping: no kubectl on PATH");
        return;
    };
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = sim.write_kubeconfigs(dir.path()).unwrap().remove(0);
    let deploy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
    let kubectl_json = |args: Vec<String>| {
        let kubectl = kubectl.clone();
        let kubeconfig = kubeconfig.clone();
        let cache = dir.path().join("cache");
        async move {
            let output = tokio::process::Command::new(kubectl)
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .arg("--cache-dir")
                .arg(&cache)
                .args(&args)
                .output()
                .await
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout).to_string();
            assert!(
                output.status.success(),
                "kubectl {args:?} failed: {}{}",
                stdout,
                String::from_utf8_lossy(&output.stderr)
            );
            stdout
        }
    };
    // The CRD first (as an operator would), then the rest of the directory.
    kubectl_json(vec![
        "apply".into(),
        "-f".into(),
        deploy.join("resourcebundlestate-crd.yaml").display().to_string(),
    ])
    .await;
    kubectl_json(vec!["apply".into(), "-f".into(), deploy.display().to_string()]).await;

    let crd: serde_json::Value = serde_json::from_str(
        &kubectl_json(vec![
            "get".into(),
            "crd".into(),
            "resourcebundlestates.k8splugin.io".into(),
            "-o".into(),
            "json".into(),
        ])
        .await,
    )
    .unwrap();
    let expected = emco_k8s::rbs_crd();
    for field in ["group", "scope", "names"] {
        assert_eq!(
            crd["spec"][field], expected["spec"][field],
            "spec.{field} differs from the CRD rsync installs"
        );
    }
    for field in ["name", "served", "storage", "subresources", "schema"] {
        assert_eq!(
            crd["spec"]["versions"][0][field], expected["spec"]["versions"][0][field],
            "versions[0].{field} differs"
        );
    }

    let role: serde_json::Value = serde_json::from_str(
        &kubectl_json(vec![
            "get".into(),
            "clusterrole".into(),
            "emco-monitor".into(),
            "-o".into(),
            "json".into(),
        ])
        .await,
    )
    .unwrap();
    let allows = |group: &str, resource: &str, verb: &str| {
        role["rules"].as_array().into_iter().flatten().any(|rule| {
            let has =
                |field: &str, value: &str| rule[field].as_array().into_iter().flatten().any(|v| v == value);
            has("apiGroups", group) && has("resources", resource) && has("verbs", verb)
        })
    };
    for kind in emco_monitor::default_kinds() {
        for verb in ["list", "watch"] {
            assert!(
                allows(&kind.group, &kind.plural, verb),
                "the role does not allow {verb} on {}",
                kind.plural
            );
        }
    }
    for verb in ["list", "watch"] {
        assert!(allows("k8splugin.io", "resourcebundlestates", verb));
        assert!(
            allows("apiextensions.k8s.io", "customresourcedefinitions", verb),
            "the monitor waits for the ResourceBundleState CRD by watching it"
        );
    }
    assert!(allows("k8splugin.io", "resourcebundlestates/status", "patch"));

    let deployment: serde_json::Value = serde_json::from_str(
        &kubectl_json(vec![
            "get".into(),
            "deployment".into(),
            "emco-monitor".into(),
            "-n".into(),
            "emco-system".into(),
            "-o".into(),
            "json".into(),
        ])
        .await,
    )
    .unwrap();
    assert_eq!(
        deployment["spec"]["template"]["spec"]["serviceAccountName"],
        "emco-monitor"
    );
    let binding: serde_json::Value = serde_json::from_str(
        &kubectl_json(vec![
            "get".into(),
            "clusterrolebinding".into(),
            "emco-monitor".into(),
            "-o".into(),
            "json".into(),
        ])
        .await,
    )
    .unwrap();
    assert_eq!(binding["subjects"][0]["namespace"], "emco-system");
}

/// Status configs reach the monitor through the ResourceBundleState spec: a custom kind it did not watch is watched
/// while a bundle names it, its objects carry the value at `statusPath` as `statusRemote`, a kind whose collection
/// is disabled is left out, and the kind is dropped again once no bundle names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_configs_in_the_bundle_spec_add_kinds_and_remote_values() {
    let (_sim, client, crds) = cluster_with_bundle_crd().await;
    let widget_crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(widget_crd).unwrap(),
    )
    .await
    .unwrap();
    let widgets = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets"),
    );
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "gizmo", "labels": {"emco/deployment-id": "1-cfg"}},
        "spec": {"size": 3},
        "status": {"phase": "Synced", "conditions": [{"type": "Synced", "status": "True"}]}});
    widgets
        .create(&PostParams::default(), &serde_json::from_value(widget).unwrap())
        .await
        .unwrap();
    let configmaps = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "ConfigMap"), "configmaps"),
    );
    let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "labels": {"emco/deployment-id": "1-cfg"}}, "data": {"a": "1"}});
    configmaps
        .patch("settings", &PatchParams::apply("test"), &Patch::Apply(&configmap))
        .await
        .unwrap();

    let bundles = bundles_in_default(&client);
    let configs = [
        emco_k8s::bundle::BundleStatusConfig {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            status_path: ".status.phase".into(),
            ready_condition: "Synced".into(),
            collect: true,
            raw_status: false,
        },
        emco_k8s::bundle::BundleStatusConfig {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            status_path: String::new(),
            ready_condition: String::new(),
            collect: false,
            raw_status: false,
        },
    ];
    bundles
        .create(
            &PostParams::default(),
            &serde_json::from_value(emco_k8s::bundle::rbs_object_with(
                "1-cfg",
                "default",
                [
                    emco_k8s::bundle::BundleKind::new("example.com", "Widget"),
                    emco_k8s::bundle::BundleKind::new("", "ConfigMap"),
                ],
                &configs,
            ))
            .unwrap(),
        )
        .await
        .unwrap();
    let monitor = tokio::spawn(emco_monitor::run(
        client.clone(),
        MonitorConfig::default(),
        std::future::pending(),
    ));

    let status = status_when(
        &bundles,
        "1-cfg",
        "the widget is reported with its phase",
        |status| status["resourceStatuses"][0]["statusRemote"] == "Synced",
    )
    .await;
    assert_eq!(status["resourceStatuses"][0]["name"], "gizmo");
    assert_eq!(status["resourceStatuses"][0]["readyCondition"], "Synced");
    assert_eq!(
        status["configMapStatuses"],
        json!([]),
        "ConfigMaps are not collected"
    );
    assert_eq!(
        status["statusCollectionDisabled"],
        json!([{"group": "", "kind": "ConfigMap"}])
    );
    assert_eq!(status["ready"], true);

    // No status configs any more: the ConfigMap is collected again and the widget kind is no longer watched.
    bundles
        .patch(
            "1-cfg",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"statusConfigs": null}})),
        )
        .await
        .unwrap();
    let status = status_when(&bundles, "1-cfg", "the configs are gone", |status| {
        status["configMapStatuses"][0]["metadata"]["name"] == "settings"
            && status["resourceStatuses"] == json!([])
    })
    .await;
    assert!(status.get("statusCollectionDisabled").is_none());
    monitor.abort();
}

/// The resources the monitor has opened watches on, by plural (the last segment of the watched path).
fn watched_resources(sim: &kubesim::Simulator) -> std::collections::BTreeSet<String> {
    sim.clusters()[0]
        .shared()
        .requests()
        .into_iter()
        .filter(|request| request.watch)
        .filter_map(|request| request.path.rsplit('/').next().map(String::from))
        .collect()
}

/// The monitor waits for the ResourceBundleState CRD, then watches only the kinds the bundles name (and pods):
/// an object of a kind no bundle names is not reported until a bundle names it, and a kind no bundle names any
/// more is dropped with its objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_monitor_watches_only_the_kinds_its_bundles_name() {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    let monitor = tokio::spawn(emco_monitor::run(
        client.clone(),
        MonitorConfig::default(),
        std::future::pending(),
    ));
    let labelled = |kind: &str, name: &str| {
        json!({"apiVersion": "v1", "kind": kind,
               "metadata": {"name": name, "labels": {"emco/deployment-id": "1-narrow"}}, "data": {"a": "MQ=="}})
    };
    for (kind, plural, name) in [
        ("ConfigMap", "configmaps", "settings"),
        ("Secret", "secrets", "token"),
    ] {
        Api::<DynamicObject>::namespaced_with(
            client.clone(),
            "default",
            &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", kind), plural),
        )
        .create(
            &PostParams::default(),
            &serde_json::from_value(labelled(kind, name)).unwrap(),
        )
        .await
        .unwrap();
    }
    // No CRD yet: the monitor waits for it and watches nothing else.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        watched_resources(&sim),
        ["customresourcedefinitions".to_string()].into(),
        "before any bundle can exist"
    );

    install_bundle_crd(&client).await;
    let bundles = bundles_in_default(&client);
    let config_map = emco_k8s::bundle::BundleKind::new("", "ConfigMap");
    let secret = emco_k8s::bundle::BundleKind::new("", "Secret");
    bundles
        .create(
            &PostParams::default(),
            &serde_json::from_value(emco_k8s::bundle::rbs_object_with(
                "1-narrow",
                "default",
                [config_map.clone()],
                &[],
            ))
            .unwrap(),
        )
        .await
        .unwrap();
    let status = status_when(&bundles, "1-narrow", "the ConfigMap is reported", |status| {
        status["configMapStatuses"][0]["metadata"]["name"] == "settings"
    })
    .await;
    assert!(
        status["secretStatuses"].as_array().is_none_or(Vec::is_empty),
        "no bundle names Secrets: {status}"
    );
    let watched = watched_resources(&sim);
    for resource in [
        "customresourcedefinitions",
        "resourcebundlestates",
        "configmaps",
        "pods",
    ] {
        assert!(watched.contains(resource), "{resource} not watched: {watched:?}");
    }
    for resource in [
        "secrets",
        "deployments",
        "daemonsets",
        "statefulsets",
        "jobs",
        "ingresses",
        "services",
    ] {
        assert!(!watched.contains(resource), "{resource} watched: {watched:?}");
    }

    // The bundle names Secrets too: the Secret is reported.
    let spec_kinds = |kinds: &[&emco_k8s::bundle::BundleKind]| json!({"spec": {"kinds": kinds}});
    bundles
        .patch(
            "1-narrow",
            &PatchParams::default(),
            &Patch::Merge(spec_kinds(&[&config_map, &secret])),
        )
        .await
        .unwrap();
    status_when(&bundles, "1-narrow", "the Secret is reported", |status| {
        status["secretStatuses"][0]["metadata"]["name"] == "token"
            && status["configMapStatuses"][0]["metadata"]["name"] == "settings"
    })
    .await;

    // Secrets alone: the ConfigMap kind is dropped and its object no longer reported.
    bundles
        .patch(
            "1-narrow",
            &PatchParams::default(),
            &Patch::Merge(spec_kinds(&[&secret])),
        )
        .await
        .unwrap();
    status_when(&bundles, "1-narrow", "the ConfigMap is forgotten", |status| {
        status["secretStatuses"][0]["metadata"]["name"] == "token"
            && status["configMapStatuses"].as_array().is_none_or(Vec::is_empty)
    })
    .await;

    // The bundle goes before its objects: its kinds stop being watched, and the monitor, with nothing to report
    // and nowhere to report it, stops trying to write it (it would otherwise retry every `missing_retry`).
    bundles.delete("1-narrow", &Default::default()).await.unwrap();
    let status_writes = || {
        sim.clusters()[0]
            .shared()
            .requests()
            .into_iter()
            .filter(|request| request.method == "PATCH" && request.path.ends_with("/1-narrow/status"))
            .count()
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let settled = status_writes();
    tokio::time::sleep(MonitorConfig::default().missing_retry * 2).await;
    assert_eq!(
        status_writes(),
        settled,
        "the monitor kept writing a deleted bundle"
    );
    monitor.abort();
}
