//! What each cluster's nodes offer, for placement that needs hardware (hpa): each node's labels and what it has
//! left of every allocatable resource once the requests of the pods running on it are taken off — as EMCO's
//! `GetAvailableNodeResources` counts it. Read now, through the cluster's own client, many clusters at once, each
//! bounded in time and in the nodes and pods it may list.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use emco_appcontext::NodeReport;
use emco_k8s::k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
use emco_k8s::quantity::Quantity;
use futures::StreamExt;
use kube::api::{Api, ListParams};

use crate::clients::Clients;

/// The most nodes read of one cluster.
const MAX_NODES: usize = 5_000;
/// The most pods read of one cluster (their requests are taken off their nodes).
const MAX_PODS: usize = 200_000;
/// The page size of the lists.
const PAGE: u32 = 500;

impl Clients {
    /// The nodes of each of `clusters`, each cluster read within `wait`; one that cannot be read is answered with
    /// why.
    pub(crate) async fn nodes(
        &self,
        clusters: Vec<String>,
        wait: Duration,
    ) -> HashMap<String, Result<Vec<NodeReport>, String>> {
        self.ask_each(clusters, move |clients, cluster| async move {
            let answer = match tokio::time::timeout(wait, clients.read_nodes(&cluster)).await {
                Ok(answer) => answer,
                Err(_) => Err(format!("did not list its nodes and pods within {wait:?}")),
            };
            (cluster, answer)
        })
        .collect()
        .await
    }

    async fn read_nodes(&self, cluster: &str) -> Result<Vec<NodeReport>, String> {
        let client = self.client(cluster).await.map_err(|err| err.to_string())?;
        let nodes: Vec<Node> = list_all(Api::all(client.clone()), MAX_NODES, "nodes").await?;
        let pods: Vec<Pod> = list_all(Api::all(client), MAX_PODS, "pods").await?;
        let mut requested: HashMap<String, BTreeMap<String, Quantity>> = HashMap::new();
        for pod in &pods {
            let Some(spec) = &pod.spec else { continue };
            let Some(node) = spec.node_name.as_deref().filter(|node| !node.is_empty()) else {
                continue;
            };
            let phase = pod.status.as_ref().and_then(|status| status.phase.as_deref());
            if matches!(phase, Some("Succeeded" | "Failed")) {
                continue;
            }
            let on_node = requested.entry(node.to_string()).or_default();
            for (resource, quantity) in pod_requests(spec) {
                let total = on_node.entry(resource).or_insert_with(Quantity::zero);
                *total = total.saturating_add(&quantity);
            }
        }
        Ok(nodes
            .into_iter()
            .map(|node| {
                let name = node.metadata.name.unwrap_or_default();
                let labels = node.metadata.labels.unwrap_or_default();
                let used = requested.remove(&name).unwrap_or_default();
                let available = node
                    .status
                    .and_then(|status| status.allocatable)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|(resource, quantity)| {
                        // A quantity the cluster writes that does not parse counts as none of that resource.
                        let allocatable = Quantity::parse(&quantity.0).ok()?;
                        let left = match used.get(&resource) {
                            Some(taken) => allocatable.checked_sub(taken)?,
                            None => allocatable,
                        };
                        Some((resource, left.whole_units()))
                    })
                    .collect();
                NodeReport {
                    name,
                    labels,
                    available,
                }
            })
            .collect())
    }
}

/// Every object of `api`, page by page; refused past `max` objects.
async fn list_all<K>(api: Api<K>, max: usize, what: &str) -> Result<Vec<K>, String>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let mut objects = Vec::new();
    let mut params = ListParams::default().limit(PAGE);
    loop {
        let page = api
            .list(&params)
            .await
            .map_err(|err| format!("cannot list {what}: {err}"))?;
        objects.extend(page.items);
        if objects.len() > max {
            return Err(format!(
                "has more than {max} {what}; hardware-aware placement reads at most that many"
            ));
        }
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(objects),
        }
    }
}

/// What a pod requests, as Kubernetes accounts it on its node: the sum of its containers' requests, or an init
/// container's when that is larger, plus the pod's overhead. A request that does not parse counts as nothing.
fn pod_requests(spec: &PodSpec) -> BTreeMap<String, Quantity> {
    let parse = |requests: Option<
        &BTreeMap<String, emco_k8s::k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    >| {
        requests
            .into_iter()
            .flatten()
            .filter_map(|(resource, quantity)| Some((resource.clone(), Quantity::parse(&quantity.0).ok()?)))
            .collect::<Vec<_>>()
    };
    let mut total: BTreeMap<String, Quantity> = BTreeMap::new();
    for container in &spec.containers {
        let requests = container.resources.as_ref().and_then(|r| r.requests.as_ref());
        for (resource, quantity) in parse(requests) {
            let sum = total.entry(resource).or_insert_with(Quantity::zero);
            *sum = sum.saturating_add(&quantity);
        }
    }
    for container in spec.init_containers.iter().flatten() {
        let requests = container.resources.as_ref().and_then(|r| r.requests.as_ref());
        for (resource, quantity) in parse(requests) {
            let current = total.entry(resource).or_insert_with(Quantity::zero);
            if quantity > *current {
                *current = quantity;
            }
        }
    }
    for (resource, quantity) in parse(spec.overhead.as_ref()) {
        let sum = total.entry(resource).or_insert_with(Quantity::zero);
        *sum = sum.saturating_add(&quantity);
    }
    total
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn each_node_reports_its_labels_and_what_is_left_after_running_pods() {
        let sim = kubesim::Simulator::start(vec![
            kubesim::ClusterConfig::new("qat")
                .with_node_label("feature.node.kubernetes.io/intel_qat", "true")
                .with_node_capacity("cpu", "8")
                .with_node_capacity("nvidia.com/gpu", "2"),
            kubesim::ClusterConfig::new("down"),
        ])
        .await
        .unwrap();
        let qat = sim.cluster("qat").unwrap();
        let pods: Api<Pod> = Api::namespaced(qat.client().unwrap(), "default");
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "busy"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "2500m"}}}]}
        }))
        .unwrap();
        pods.create(&Default::default(), &pod).await.unwrap();
        // The pod is scheduled on the node before its requests count there.
        for _ in 0..200 {
            let scheduled = pods.get("busy").await.unwrap();
            if scheduled.spec.and_then(|spec| spec.node_name).is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        sim.cluster("down")
            .unwrap()
            .set_faults(kubesim::Faults {
                down: true,
                ..kubesim::Faults::default()
            })
            .await
            .unwrap();
        let clients = crate::clients::clients_of(&sim).await;
        let answers = clients
            .nodes(vec!["p+qat".into(), "p+down".into()], Duration::from_secs(10))
            .await;
        assert!(answers["p+down"].is_err());
        let nodes = answers["p+qat"].as_ref().unwrap();
        assert_eq!(nodes.len(), 1);
        let node = &nodes[0];
        assert_eq!(node.labels["feature.node.kubernetes.io/intel_qat"], "true");
        // 8 cores less 2.5 requested: 5500m, 5 whole cores.
        assert_eq!(node.available["cpu"], 5);
        assert_eq!(node.available["nvidia.com/gpu"], 2);
    }

    #[tokio::test]
    async fn a_list_past_its_bound_is_refused_naming_the_bound() {
        let mut config = kubesim::ClusterConfig::new("big");
        config.nodes = 3;
        let sim = kubesim::Simulator::start(vec![config]).await.unwrap();
        let client = sim.cluster("big").unwrap().client().unwrap();
        let nodes: Vec<Node> = list_all(Api::all(client.clone()), 3, "nodes").await.unwrap();
        assert_eq!(nodes.len(), 3);
        let refused = list_all::<Node>(Api::all(client), 2, "nodes").await.unwrap_err();
        assert!(refused.contains("has more than 2 nodes"), "{refused}");
    }

    #[tokio::test]
    async fn a_cluster_slower_than_the_wait_is_answered_with_why() {
        let sim = kubesim::Simulator::start(vec![kubesim::ClusterConfig::new("slow")])
            .await
            .unwrap();
        sim.cluster("slow")
            .unwrap()
            .set_faults(kubesim::Faults {
                latency_ms: 2_000,
                ..kubesim::Faults::default()
            })
            .await
            .unwrap();
        let clients = crate::clients::clients_of(&sim).await;
        let answers = clients
            .nodes(vec!["p+slow".into()], Duration::from_millis(200))
            .await;
        let why = answers["p+slow"].as_ref().unwrap_err();
        assert!(
            why.contains("did not list its nodes and pods within 200ms"),
            "{why}"
        );
    }

    #[test]
    fn a_pod_requests_its_containers_sum_or_its_largest_init_container_plus_overhead() {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                {"name": "b", "resources": {"requests": {"cpu": "1"}}},
                {"name": "c"}
            ],
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2", "memory": "bad"}}}],
            "overhead": {"cpu": "250m"}
        }))
        .unwrap();
        let requests = pod_requests(&spec);
        assert_eq!(requests["cpu"].canonical(), "2250m");
        assert_eq!(requests["memory"].canonical(), "1Gi");
    }
}
