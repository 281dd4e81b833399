//! What each cluster tells a chart about itself — its Kubernetes version and the API group versions and kinds it
//! serves, as `helm install` reads them from a live cluster — for rendering a chart per cluster version. Asked
//! through the cluster's own client (aggregated discovery where the cluster serves it, else one read per group
//! version), kept for [`CAPABILITIES_TTL`] and forgotten when the cluster's kubeconfig changes; many clusters are
//! asked at once (`Clients::ask_each`), and the whole question is bounded by the caller's wait.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use emco_appcontext::ClusterCapabilities;
use futures::StreamExt;
use kube::Discovery;

use crate::clients::Clients;
use crate::lock;

/// How long what a cluster said is reused before it is asked again (an upgraded cluster is seen after this).
pub(crate) const CAPABILITIES_TTL: Duration = Duration::from_secs(600);
/// The most API versions and kinds kept of one cluster (a cluster answering more is cut here).
const MAX_API_VERSIONS: usize = 20_000;

/// What was learned of a cluster, and when.
pub(crate) type Learned = HashMap<String, (Instant, Arc<ClusterCapabilities>)>;

impl Clients {
    /// The capabilities of each of `clusters` that answers within `wait`, or answered within [`CAPABILITIES_TTL`].
    pub(crate) async fn capabilities(
        &self,
        clusters: Vec<String>,
        wait: Duration,
    ) -> HashMap<String, ClusterCapabilities> {
        let mut known = HashMap::new();
        let mut to_ask = Vec::new();
        {
            let learned = lock(&self.capabilities);
            for cluster in clusters {
                match learned.get(&cluster) {
                    Some((at, capabilities)) if at.elapsed() < CAPABILITIES_TTL => {
                        known.insert(cluster, (**capabilities).clone());
                    }
                    _ => to_ask.push(cluster),
                }
            }
        }
        let deadline = tokio::time::Instant::now() + wait;
        let answers = self.ask_each(to_ask, |clients, cluster| async move {
            let answer = clients.ask(&cluster).await;
            (cluster, answer)
        });
        let mut answers = std::pin::pin!(answers);
        loop {
            match tokio::time::timeout_at(deadline, answers.next()).await {
                Ok(Some((cluster, Ok(capabilities)))) => {
                    lock(&self.capabilities)
                        .insert(cluster.clone(), (Instant::now(), Arc::new(capabilities.clone())));
                    known.insert(cluster, capabilities);
                }
                Ok(Some((cluster, Err(message)))) => {
                    tracing::info!(
                        cluster,
                        error = message,
                        "cannot read the cluster's version and API versions; its charts render with Helm's defaults"
                    );
                }
                Ok(None) => break,
                Err(_) => {
                    tracing::info!(waited = ?wait, "some clusters did not say their version and API versions in time; their charts render with Helm's defaults");
                    break;
                }
            }
        }
        known
    }

    /// Asks `cluster` for its version and discovery.
    async fn ask(&self, cluster: &str) -> Result<ClusterCapabilities, String> {
        let client = self.client(cluster).await.map_err(|err| err.to_string())?;
        let version = client.apiserver_version().await.map_err(|err| err.to_string())?;
        // Aggregated discovery (two reads) where the cluster serves it; else one read per group version.
        // (A cluster older than aggregated discovery answers with the classic documents, which read as none.)
        let discovery = match Discovery::new(client.clone()).run_aggregated().await {
            Ok(discovery) if discovery.has_group("") => discovery,
            _ => Discovery::new(client)
                .run()
                .await
                .map_err(|err| err.to_string())?,
        };
        Ok(ClusterCapabilities {
            kube_version: version.git_version,
            api_versions: api_versions(&discovery),
        })
    }

    /// Forgets what `cluster` said (its kubeconfig changed).
    pub(crate) fn forget_capabilities(&self, cluster: &str) {
        lock(&self.capabilities).remove(cluster);
    }
}

/// Helm's version set of a discovery: every group version, and every `group/version/Kind` (`v1/Pod` for the core
/// group), sorted, without repeats, at most [`MAX_API_VERSIONS`].
fn api_versions(discovery: &Discovery) -> Vec<String> {
    let mut versions = BTreeSet::new();
    for group in discovery.groups() {
        for version in group.versions() {
            let group_version = if group.name().is_empty() {
                version.to_string()
            } else {
                format!("{}/{version}", group.name())
            };
            for (resource, _) in group.versioned_resources(version) {
                versions.insert(format!("{group_version}/{}", resource.kind));
            }
            versions.insert(group_version);
        }
    }
    versions.into_iter().take(MAX_API_VERSIONS).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::clients::clients_of;

    #[tokio::test]
    async fn each_cluster_says_its_own_version_and_api_versions_and_a_silent_one_is_left_out() {
        let sim = kubesim::Simulator::start(vec![
            kubesim::ClusterConfig::new("old").with_kubernetes_version("1.23".parse().unwrap()),
            kubesim::ClusterConfig::new("new"),
            kubesim::ClusterConfig::new("down"),
        ])
        .await
        .unwrap();
        sim.cluster("down")
            .unwrap()
            .set_faults(kubesim::Faults {
                down: true,
                ..kubesim::Faults::default()
            })
            .await
            .unwrap();
        let clients = clients_of(&sim).await;
        let names = ["p+old", "p+new", "p+down"].map(String::from).to_vec();
        let answers = clients.capabilities(names, Duration::from_secs(10)).await;
        assert!(!answers.contains_key("p+down"));
        let old = &answers["p+old"];
        assert_eq!(old.kube_version, "v1.23.0+kubesim");
        for wanted in [
            "v1",
            "v1/Pod",
            "policy/v1beta1",
            "policy/v1beta1/PodSecurityPolicy",
            "apps/v1/Deployment",
        ] {
            assert!(
                old.api_versions.iter().any(|v| v == wanted),
                "{wanted}: {:?}",
                old.api_versions
            );
        }
        let new = &answers["p+new"];
        assert_eq!(new.kube_version, "v1.33.0+kubesim");
        assert!(!new.api_versions.iter().any(|v| v == "policy/v1beta1"));
        // Asked again, the answers come from what was learned: the cluster is not read again.
        let reads = sim.cluster("old").unwrap().reads();
        let again = clients
            .capabilities(vec!["p+old".into()], Duration::from_secs(10))
            .await;
        assert_eq!(&again["p+old"], old);
        assert_eq!(sim.cluster("old").unwrap().reads(), reads);
    }
}
