//! ResourceQuota admission through kube-rs: object counts are enforced with Kubernetes' 403 and shown in the
//! quota's status.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Namespace, ResourceQuota};
use kube::api::{Api, DeleteParams, PostParams};
use kubesim::Simulator;
use serde_json::json;

fn status_message(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(status) => (status.code, status.message.clone()),
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn quotas_refuse_objects_past_their_counts_and_show_their_usage() {
    let sim = Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    let post = PostParams::default();
    Api::<Namespace>::all(client.clone())
        .create(
            &post,
            &serde_json::from_value(json!({"metadata": {"name": "q"}})).unwrap(),
        )
        .await
        .unwrap();
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "q");
    quotas
        .create(
            &post,
            &serde_json::from_value(json!({"metadata": {"name": "small"},
                "spec": {"hard": {"configmaps": "3", "count/deployments.apps": "1", "requests.cpu": "1"}}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "q");
    let config_map =
        |name: &str| -> ConfigMap { serde_json::from_value(json!({"metadata": {"name": name}})).unwrap() };
    config_maps.create(&post, &config_map("c0")).await.unwrap();
    config_maps.create(&post, &config_map("c1")).await.unwrap();
    assert_eq!(
        status_message(config_maps.create(&post, &config_map("c2")).await.unwrap_err()),
        (
            403,
            "configmaps \"c2\" is forbidden: exceeded quota: small, requested: configmaps=1, used: configmaps=3, limited: configmaps=3".into()
        )
    );
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "q");
    let deployment = |name: &str| -> Deployment {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "main", "image": "registry.local/x:1"}]}}}}))
        .unwrap()
    };
    deployments.create(&post, &deployment("d1")).await.unwrap();
    assert_eq!(
        status_message(deployments.create(&post, &deployment("d2")).await.unwrap_err()).1,
        "deployments.apps \"d2\" is forbidden: exceeded quota: small, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1"
    );
    // Another namespace is not limited.
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&post, &config_map("c2"))
        .await
        .unwrap();

    // The status shows the limits and what is used, counting compute quotas as not enforced.
    let mut status = None;
    for _ in 0..100 {
        status = quotas.get("small").await.unwrap().status;
        if status
            .as_ref()
            .and_then(|s| s.used.as_ref())
            .is_some_and(|used| used.len() == 2)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = serde_json::to_value(status.unwrap()).unwrap();
    assert_eq!(
        status["used"],
        json!({"configmaps": "3", "count/deployments.apps": "1"}),
        "{status}"
    );
    assert_eq!(status["hard"]["requests.cpu"], "1", "{status}");

    // Deleting makes room again.
    config_maps.delete("c0", &DeleteParams::default()).await.unwrap();
    config_maps.create(&post, &config_map("c2")).await.unwrap();
}
