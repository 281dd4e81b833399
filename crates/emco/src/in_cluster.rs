//! What `emco kubesim --monitors` runs inside every simulated cluster, as it would be deployed in a real one:
//! emco's monitor; in a GitOps cluster (`--flux`) also its status publisher to Git (the bundles' CRD installed
//! first, as the monitor's chart does); with `--pull-agents`, the cluster's pull agent once the cluster holds the
//! Secret an agent is deployed with (`emco-system/emco-agent`: emco's URL, the cluster's name in emco, its agent
//! token) — started again when that Secret changes (a rotated token), stopped when it goes.

use std::sync::Arc;

use emco_k8s::k8s_openapi::api::core::v1::Secret;
use emco_monitor::agent::{AgentConfig, OwnCluster};
use futures::StreamExt as _;
use kube::runtime::{WatchStreamExt as _, watcher};
use kubesim::cli::{InClusterAgent, InClusterSite};

/// The namespace of the Secret a pull agent is deployed with.
pub const AGENT_SECRET_NAMESPACE: &str = "emco-system";
/// The name of the Secret a pull agent is deployed with.
pub const AGENT_SECRET: &str = "emco-agent";

/// The software of every simulated cluster.
pub(crate) fn software() -> InClusterAgent {
    Arc::new(|site: InClusterSite| {
        Box::pin(async move {
            let InClusterSite {
                client,
                gitops,
                pull_agent,
            } = site;
            if let Some(gitops) = gitops {
                install_bundle_crd(&client).await;
                let config = emco_monitor::git::GitStatusConfig {
                    remote: gitops.remote,
                    mirror_dir: std::env::temp_dir()
                        .join(format!("emco-monitor-git-{}", std::process::id()))
                        .join(&gitops.emco_name),
                    cluster: gitops.emco_name,
                    interval: std::time::Duration::from_secs(1),
                };
                tokio::spawn(emco_monitor::git::publish_status(
                    client.clone(),
                    config,
                    std::future::pending(),
                ));
            }
            if pull_agent {
                tokio::spawn(pull_agent_when_deployed(client.clone()));
            }
            emco_monitor::run(
                client,
                emco_monitor::MonitorConfig::default(),
                std::future::pending(),
            )
            .await;
        })
    })
}

/// Creates the ResourceBundleState CRD through `client`, as the monitor's chart does (present already: nothing).
async fn install_bundle_crd(client: &kube::Client) {
    let crds: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
        client.clone(),
        &kube::core::ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    if let Ok(crd) = serde_json::from_value(emco_k8s::rbs_crd()) {
        let _ = crds.create(&kube::api::PostParams::default(), &crd).await;
    }
}

/// What an agent Secret says: emco's URL, the cluster (`provider+cluster`) and the token, each present and
/// non-empty; `None` for a Secret that lacks one (no agent runs from it).
fn deployed_agent(secret: &Secret) -> Option<(String, String, String)> {
    let data = secret.data.as_ref()?;
    let text = |key: &str| {
        data.get(key)
            .and_then(|value| std::str::from_utf8(&value.0).ok())
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    Some((text("emco")?, text("cluster")?, text("token")?))
}

/// Runs the cluster's pull agent as its Secret says, for as long as it says so.
async fn pull_agent_when_deployed(client: kube::Client) {
    let secrets: kube::Api<Secret> = kube::Api::namespaced(client.clone(), AGENT_SECRET_NAMESPACE);
    let only_the_agents = watcher::Config::default().fields(&format!("metadata.name={AGENT_SECRET}"));
    let mut events = std::pin::pin!(watcher(secrets, only_the_agents).default_backoff());
    let mut running: Option<((String, String, String), tokio::task::JoinHandle<()>)> = None;
    // While the watch lists again: whether the Secret was among what it listed.
    let mut relisted: Option<Option<(String, String, String)>> = None;
    while let Some(event) = events.next().await {
        let deployed = match event {
            Ok(watcher::Event::Init) => {
                relisted = Some(None);
                continue;
            }
            Ok(watcher::Event::InitApply(secret)) => {
                relisted = Some(deployed_agent(&secret));
                continue;
            }
            Ok(watcher::Event::InitDone) => relisted.take().flatten(),
            Ok(watcher::Event::Apply(secret)) => deployed_agent(&secret),
            Ok(watcher::Event::Delete(_)) => None,
            Err(err) => {
                tracing::debug!(error = %err, "watching the agent's Secret");
                continue;
            }
        };
        if running.as_ref().map(|(settings, _)| settings) == deployed.as_ref() {
            continue;
        }
        if let Some((_, agent)) = running.take() {
            // The agent's tasks stop with it.
            agent.abort();
        }
        if let Some(settings) = deployed {
            let (emco, cluster, token) = &settings;
            let mut config = AgentConfig::new(emco, cluster, token, Vec::new());
            config.own_cluster = OwnCluster::Client(client.clone());
            let agent = tokio::spawn(async move {
                if let Err(err) = emco_monitor::agent::run_agent(config, std::future::pending()).await {
                    tracing::error!(error = %err, "the pull agent cannot start");
                }
            });
            running = Some((settings, agent));
        }
    }
}
