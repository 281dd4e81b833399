//! The `kubesim` command: flags, the admin endpoint (faults per cluster), and serving until Ctrl-C.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::cluster::{ClusterConfig, Faults, Timing};
use crate::server::SharedListener;
use crate::sim::{SimCluster, cluster_name};
use crate::version::KubernetesVersion;

/// Serve simulated Kubernetes clusters.
///
/// Each cluster serves HTTPS with a CA of its own made at start; its kubeconfig carries that CA and an admin
/// client certificate (CN kubesim-admin, O system:masters). Requests are authenticated (client certificate, bearer
/// token, else system:anonymous; impersonation with --as) and authorized by RBAC (Roles, ClusterRoles and their
/// bindings; system:masters bypasses), which also answers access reviews (kubectl auth can-i). Approved
/// CertificateSigningRequests for kubernetes.io/kube-apiserver-client are signed by the cluster's CA;
/// ResourceQuotas limit object counts, pod cpu and memory requests and limits, and claimed storage, for the
/// simulated controllers' pods too. --insecure-http serves plain HTTP, with the admin token in the kubeconfigs.
#[derive(Debug, clap::Parser)]
#[command(name = "kubesim", version, about, long_about)]
pub struct Args {
    /// Serve this many clusters, named edge01, edge02, ….
    #[arg(long, conflicts_with = "cluster")]
    pub clusters: Option<usize>,
    /// Serve a cluster with this name (repeatable).
    #[arg(long)]
    pub cluster: Vec<String>,
    /// Write one kubeconfig per cluster (`<name>.yaml`) into this directory.
    #[arg(long, default_value = "./kubeconfigs")]
    pub kubeconfig_dir: PathBuf,
    /// Address the clusters listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub address: IpAddr,
    /// First port; cluster i gets base-port + i (0: any free port per cluster); with --shared-listener, the port.
    #[arg(long, default_value_t = 0)]
    pub base_port: u16,
    /// Admin endpoint (`GET /clusters`, `GET|PUT /clusters/{name}/faults`).
    #[arg(long, default_value = "127.0.0.1:7070")]
    pub admin: SocketAddr,
    /// Nodes per cluster.
    #[arg(long, default_value_t = 1)]
    pub nodes: usize,
    /// Milliseconds from a pod's ContainerCreating to Ready.
    #[arg(long, default_value_t = Timing::default().ready_ms)]
    pub ready_ms: u64,
    /// Milliseconds a run-to-completion pod (restartPolicy Never or OnFailure: a Job's pod, a bare pod, a Helm
    /// hook) runs before it ends Succeeded (a pod's `kubesim.io/run-ms` annotation overrides it).
    #[arg(long, default_value_t = Timing::default().job_run_ms)]
    pub run_ms: u64,
    /// Make run-to-completion pods whose name starts with this prefix fail at the end of their run (exit code 1,
    /// reason Error), on every cluster (repeatable).
    #[arg(long, value_name = "NAME_PREFIX")]
    pub fail_pod: Vec<String>,
    /// Start these clusters down (connection refused), repeatable.
    #[arg(long)]
    pub down: Vec<String>,
    /// Add this latency to every API request of every cluster (milliseconds).
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
    /// Answer this share of API requests (0 to 1) with an error.
    #[arg(long, default_value_t = 0.0)]
    pub error_rate: f64,
    /// The error injected by --error-rate: 500, 503 or 429.
    #[arg(long, default_value_t = 503)]
    pub error_code: u16,
    /// Stop injecting --error-rate errors this many milliseconds after start.
    #[arg(long)]
    pub error_for_ms: Option<u64>,
    /// Send `Retry-After: N` with every injected 429 or 503.
    #[arg(long)]
    pub retry_after_seconds: Option<u32>,
    /// Refuse create, update and patch of this kind on every cluster (repeatable).
    #[arg(long)]
    pub reject_kind: Vec<String>,
    /// Put this label (key=value) on every node of every cluster, or with `CLUSTER:` first of that cluster only
    /// (repeatable), e.g. extraRuntime=virtlet, edge02:feature.node.kubernetes.io/intel_qat=true.
    #[arg(long, value_name = "[CLUSTER:]KEY=VALUE")]
    pub node_label: Vec<String>,
    /// Give every node of every cluster, or with `CLUSTER:` first of that cluster only, this much of a resource
    /// (repeatable), RESOURCE=QUANTITY: cpu=8, memory=16Gi, hugepages-2Mi=1Gi, edge02:intel.com/qat=4 — its
    /// capacity and allocatable.
    #[arg(long, value_name = "[CLUSTER:]RESOURCE=QUANTITY", value_parser = parse_node_capacity)]
    pub node_capacity: Vec<(Option<String>, String, String)>,
    /// Serve plain HTTP instead of HTTPS; kubeconfigs then carry the admin bearer token.
    #[arg(long, conflicts_with = "shared_listener")]
    pub insecure_http: bool,
    /// Serve every cluster on one port (--base-port; 0: any free port), telling clusters apart by the TLS server
    /// name each connection asks for: `<cluster>.kubesim`, the `tls-server-name` of its kubeconfig. One listening
    /// socket for all clusters instead of one each (10,000 clusters within a limit of 20,000 open files).
    #[arg(long)]
    pub shared_listener: bool,
    /// Accept this bearer token on every cluster (repeatable): TOKEN=USER or TOKEN=USER,GROUP,GROUP.
    #[arg(long, value_name = "TOKEN=USER[,GROUP...]")]
    pub token: Vec<String>,
    /// The Kubernetes release the clusters play (default: the newest, 1.33): `1.23` for every cluster, or
    /// `NAME=1.23` for one (repeatable, so one kubesim holds a mixed fleet). A cluster serves `/version` and the API
    /// group versions of its release, e.g. policy/v1beta1 PodSecurityPolicies and batch/v1beta1 CronJobs up to 1.24.
    #[arg(long, value_name = "[NAME=]1.MINOR")]
    pub kubernetes_version: Vec<String>,
    /// Run emco's monitor inside every cluster, reaching the cluster's API without a socket (`emco kubesim`
    /// only: the standalone kubesim has no monitor).
    #[arg(long)]
    pub monitors: bool,
    /// With --monitors: a cluster's monitor is also its pull agent once the cluster holds the Secret
    /// `emco-system/emco-agent` (keys `emco`, `cluster`, `token`: emco's URL, the cluster's name in emco and its agent
    /// token), as an agent deployed with its token would be.
    #[arg(long, requires = "monitors")]
    pub pull_agents: bool,
    /// Make this cluster a GitOps cluster that plays Flux v2 (repeatable): NAME=PROVIDER+CLUSTER, the second part
    /// the cluster's name in emco; Flux applies `clusters/PROVIDER+CLUSTER` of --git-url's --git-branch, and with
    /// --monitors the monitor commits its status to the branch PROVIDER+CLUSTER.
    #[arg(long, value_name = "NAME=PROVIDER+CLUSTER")]
    pub flux: Vec<String>,
    /// The repository the --flux clusters read (http(s)://…).
    #[arg(long, requires = "flux")]
    pub git_url: Option<String>,
    /// The branch the --flux clusters apply.
    #[arg(long, default_value = "main")]
    pub git_branch: String,
    /// The Git user of the --flux clusters.
    #[arg(long, default_value = "flux")]
    pub git_username: String,
    /// A file holding the Git token of the --flux clusters.
    #[arg(long)]
    pub git_token_file: Option<PathBuf>,
    /// How often a --flux cluster fetches and applies its path (milliseconds).
    #[arg(long, default_value_t = 1000)]
    pub flux_interval_ms: u64,
}

/// A cluster that plays Flux: its name in emco (`provider+cluster`) and where it reads from.
#[derive(Debug, Clone)]
pub struct GitOpsCluster {
    /// The cluster's name in emco, `provider+cluster`.
    pub emco_name: String,
    /// The repository's branch it applies (with its credentials).
    pub remote: emco_git::Remote,
}

/// What software running inside a cluster is given.
pub struct InClusterSite {
    /// The cluster's in-cluster client ([`SimCluster::in_cluster_client`]).
    pub client: kube::Client,
    /// For a GitOps cluster (`--flux`), where it is in Git.
    pub gitops: Option<GitOpsCluster>,
    /// Whether it also runs a pull agent once deployed with one (`--pull-agents`).
    pub pull_agent: bool,
}

/// Software the host runs inside every cluster (`--monitors`): given the cluster's [`InClusterSite`], the future
/// that runs it.
pub type InClusterAgent = Arc<
    dyn Fn(InClusterSite) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Send + Sync,
>;

/// Why kubesim stopped.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// No cluster was asked for.
    #[error("give --clusters N or at least one --cluster NAME")]
    NoClusters,
    /// A --token is not TOKEN=USER[,GROUP...].
    #[error("--token {0}: give TOKEN=USER or TOKEN=USER,GROUP,GROUP")]
    BadToken(String),
    /// --monitors was given to a kubesim that has no monitor to run.
    #[error("--monitors: this kubesim has no monitor to run; use `emco kubesim --monitors`")]
    NoMonitor,
    /// A --kubernetes-version is not a release kubesim plays, or names no cluster it serves.
    #[error("--kubernetes-version {entry}: {reason}")]
    BadVersion {
        /// The flag's value.
        entry: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A --flux entry or the Git settings are unusable.
    #[error("--flux: {0}")]
    BadFlux(String),
    /// A listener or file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The `--flux` clusters: kubesim name → where the cluster is in Git.
fn flux_clusters(args: &Args, names: &[String]) -> Result<HashMap<String, GitOpsCluster>, CliError> {
    let mut clusters = HashMap::new();
    if args.flux.is_empty() {
        return Ok(clusters);
    }
    let url = args
        .git_url
        .clone()
        .ok_or_else(|| CliError::BadFlux("give --git-url, the repository the clusters read".into()))?;
    let token = match &args.git_token_file {
        Some(file) => std::fs::read_to_string(file)
            .map_err(|err| CliError::BadFlux(format!("--git-token-file {}: {err}", file.display())))?
            .trim()
            .to_string(),
        None => String::new(),
    };
    for entry in &args.flux {
        let (name, emco_name) = entry
            .split_once('=')
            .filter(|(_, emco_name)| emco_name.contains('+'))
            .ok_or_else(|| CliError::BadFlux(format!("'{entry}' is not NAME=PROVIDER+CLUSTER")))?;
        if !names.iter().any(|known| known == name) {
            return Err(CliError::BadFlux(format!(
                "'{name}' is not a cluster this kubesim serves"
            )));
        }
        let remote = emco_git::Remote {
            url: url.clone(),
            branch: args.git_branch.clone(),
            username: args.git_username.clone(),
            token: emco_git::Secret::new(token.clone()),
            ca_pem: None,
        };
        remote.check().map_err(|err| CliError::BadFlux(err.to_string()))?;
        clusters.insert(
            name.to_string(),
            GitOpsCluster {
                emco_name: emco_name.to_string(),
                remote,
            },
        );
    }
    Ok(clusters)
}

type Clusters = Arc<Vec<SimCluster>>;

async fn list_clusters(State(clusters): State<Clusters>) -> Response {
    let items: Vec<_> = clusters
        .iter()
        .map(|c| json!({"name": c.name(), "url": c.url(), "kubernetesVersion": c.shared().config.kubernetes_version.to_string(), "faults": c.faults(), "writes": c.writes(), "inClusterObjectWrites": c.shared().in_cluster_object_writes(), "reads": c.reads(), "connections": c.shared().connections(), "fellBehind": c.shared().fell_behind()}))
        .collect();
    axum::Json(items).into_response()
}

async fn get_faults(State(clusters): State<Clusters>, Path(name): Path<String>) -> Response {
    match clusters.iter().find(|c| c.name() == name) {
        Some(cluster) => axum::Json(cluster.faults()).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"message": format!("no cluster named {name}")})),
        )
            .into_response(),
    }
}

async fn put_faults(
    State(clusters): State<Clusters>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let Some(cluster) = clusters.iter().find(|c| c.name() == name) else {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"message": format!("no cluster named {name}")})),
        )
            .into_response();
    };
    let faults: Faults = match serde_json::from_slice(&body) {
        Ok(faults) => faults,
        Err(err) => {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"message": format!("faults body: {err}")})),
            )
                .into_response();
        }
    };
    match cluster.set_faults(faults).await {
        Ok(()) => axum::Json(cluster.faults()).into_response(),
        Err(err) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(json!({"message": err.to_string()})),
        )
            .into_response(),
    }
}

/// `TOKEN=USER[,GROUP...]` as (token, user, groups); none when the token or the user is empty. The token is
/// everything before the last `=` (base64 tokens end in `=`); user names may hold colons
/// (`system:serviceaccount:ns:name`).
fn parse_token(entry: &str) -> Option<(String, String, Vec<String>)> {
    let (token, identity) = entry.rsplit_once('=')?;
    let (user, groups) = identity.split_once(',').unwrap_or((identity, ""));
    if token.is_empty() || user.is_empty() {
        return None;
    }
    let groups = groups
        .split(',')
        .filter(|g| !g.is_empty())
        .map(String::from)
        .collect();
    Some((token.to_string(), user.to_string(), groups))
}

/// The release of each cluster from the `--kubernetes-version` entries (`1.23` for all, `NAME=1.23` for one; a
/// later entry wins).
fn cluster_versions(
    entries: &[String],
    names: &[String],
) -> Result<std::collections::HashMap<String, KubernetesVersion>, CliError> {
    let mut default = KubernetesVersion::NEWEST;
    let mut versions = std::collections::HashMap::new();
    for entry in entries {
        let refused = |reason: String| CliError::BadVersion {
            entry: entry.clone(),
            reason,
        };
        let (name, text) = match entry.split_once('=') {
            Some((name, text)) => (Some(name), text),
            None => (None, entry.as_str()),
        };
        let version: KubernetesVersion = text
            .parse()
            .map_err(|err: crate::version::VersionError| refused(err.to_string()))?;
        match name {
            None => {
                default = version;
                versions.clear();
            }
            Some(name) if names.iter().any(|n| n == name) => {
                versions.insert(name.to_string(), version);
            }
            Some(name) => return Err(refused(format!("no cluster named '{name}' is served"))),
        }
    }
    Ok(names
        .iter()
        .map(|name| (name.clone(), versions.get(name).copied().unwrap_or(default)))
        .collect())
}

/// Runs kubesim until Ctrl-C.
pub fn run(args: Args) -> Result<(), CliError> {
    run_with(args, None)
}

/// Runs kubesim until Ctrl-C, with `agent` inside every cluster when `--monitors` asks for it.
pub fn run_with(args: Args, agent: Option<InClusterAgent>) -> Result<(), CliError> {
    let agent = match (args.monitors, agent) {
        (true, None) => return Err(CliError::NoMonitor),
        (true, Some(agent)) => Some(agent),
        (false, _) => None,
    };
    let names: Vec<String> = match args.clusters {
        Some(count) => (1..=count).map(cluster_name).collect(),
        None => args.cluster.clone(),
    };
    if names.is_empty() {
        return Err(CliError::NoClusters);
    }
    let tokens = args
        .token
        .iter()
        .map(|entry| parse_token(entry).ok_or_else(|| CliError::BadToken(entry.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    let versions = cluster_versions(&args.kubernetes_version, &names)?;
    let flux = flux_clusters(&args, &names)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let shared_listener = if args.shared_listener {
            Some(SharedListener::bind(SocketAddr::new(args.address, args.base_port)).await?)
        } else {
            None
        };
        let mut clusters = Vec::with_capacity(names.len());
        for (index, name) in names.iter().enumerate() {
            let mut config = ClusterConfig::new(name);
            config.nodes = args.nodes;
            config.timing.ready_ms = args.ready_ms;
            config.timing.job_run_ms = args.run_ms;
            config.insecure_http = args.insecure_http;
            config.kubernetes_version = versions.get(name).copied().unwrap_or_default();
            // Only the library's users read the request log; the counters the admin endpoint shows stay.
            config.request_log_len = 0;
            for label in &args.node_label {
                let (only, label) = for_cluster(label);
                if only.is_some_and(|only| only != name) {
                    continue;
                }
                let (key, value) = label.split_once('=').unwrap_or((label, ""));
                config = config.with_node_label(key, value);
            }
            for (only, resource, quantity) in &args.node_capacity {
                if only.as_ref().is_some_and(|only| only != name) {
                    continue;
                }
                config = config.with_node_capacity(resource, quantity);
            }
            let cluster = match &shared_listener {
                Some(listener) => SimCluster::start_shared(config, listener)?,
                None => {
                    let port = if args.base_port == 0 { 0 } else { args.base_port.saturating_add(u16::try_from(index).unwrap_or(u16::MAX)) };
                    SimCluster::start(config, SocketAddr::new(args.address, port)).await?
                }
            };
            let faults = Faults {
                down: args.down.contains(name),
                latency_ms: args.latency_ms,
                error_rate: args.error_rate,
                error_code: args.error_code,
                error_for_ms: args.error_for_ms,
                retry_after_seconds: args.retry_after_seconds,
                reject_kinds: args.reject_kind.clone(),
                fail_pods: args.fail_pod.clone(),
            };
            cluster.set_faults(faults).await?;
            for (token, user, groups) in &tokens {
                let groups: Vec<&str> = groups.iter().map(String::as_str).collect();
                cluster.add_token(token, user, &groups);
            }
            clusters.push(cluster);
        }
        std::fs::create_dir_all(&args.kubeconfig_dir)?;
        for cluster in &clusters {
            std::fs::write(args.kubeconfig_dir.join(format!("{}.yaml", cluster.name())), cluster.kubeconfig())?;
        }
        let git_dir = std::env::temp_dir().join(format!("kubesim-flux-{}", std::process::id()));
        for cluster in &clusters {
            let gitops = flux.get(cluster.name()).cloned();
            if let Some(gitops) = &gitops {
                let config = crate::flux::FluxConfig {
                    remote: gitops.remote.clone(),
                    path: format!("clusters/{}", gitops.emco_name),
                    interval: std::time::Duration::from_millis(args.flux_interval_ms.max(100)),
                    mirror_dir: git_dir.join(cluster.name()),
                };
                tracing::info!(cluster = cluster.name(), path = config.path, "the cluster plays Flux");
                tokio::spawn(crate::flux::run(cluster.in_cluster_client(), config, std::future::pending()));
            }
            if let Some(agent) = &agent {
                tokio::spawn(agent(InClusterSite {
                    client: cluster.in_cluster_client(),
                    gitops,
                    pull_agent: args.pull_agents,
                }));
            }
        }
        let clusters: Clusters = Arc::new(clusters);
        let admin = axum::Router::new()
            .route("/clusters", get(list_clusters))
            .route("/clusters/{name}/faults", get(get_faults).put(put_faults))
            .with_state(clusters.clone());
        let listener = tokio::net::TcpListener::bind(args.admin).await?;
        tracing::info!(clusters = clusters.len(), kubeconfigs = %args.kubeconfig_dir.display(), admin = %listener.local_addr()?, "kubesim is serving");
        for cluster in clusters.iter().take(10) {
            tracing::info!(cluster = cluster.name(), url = %cluster.url(), "cluster");
        }
        axum::serve(listener, admin)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flux_clusters_name_their_emco_cluster_and_need_the_repository() {
        use clap::Parser as _;
        let names = vec!["edge01".to_string(), "edge02".to_string()];
        let args = |extra: &[&str]| {
            let mut all = vec!["kubesim", "--clusters", "2"];
            all.extend_from_slice(extra);
            Args::parse_from(all)
        };
        let flux = flux_clusters(
            &args(&[
                "--flux",
                "edge02=provider1+edge02",
                "--git-url",
                "http://127.0.0.1:8070/fleet",
            ]),
            &names,
        )
        .unwrap();
        assert_eq!(flux["edge02"].emco_name, "provider1+edge02");
        assert_eq!(flux["edge02"].remote.branch, "main");
        for (extra, needle) in [
            (
                vec!["--flux", "edge02=edge02", "--git-url", "http://h/r"],
                "NAME=PROVIDER+CLUSTER",
            ),
            (
                vec!["--flux", "edge09=p+edge09", "--git-url", "http://h/r"],
                "not a cluster this kubesim serves",
            ),
            (
                vec!["--flux", "edge02=p+edge02", "--git-url", "ssh://h/r"],
                "https://",
            ),
        ] {
            let refused = flux_clusters(&args(&extra), &names).unwrap_err().to_string();
            assert!(refused.contains(needle), "{refused}");
        }
    }

    #[test]
    fn tokens_name_a_user_and_groups() {
        assert_eq!(
            parse_token("t0k=alice,team,ops"),
            Some(("t0k".into(), "alice".into(), vec!["team".into(), "ops".into()]))
        );
        assert_eq!(
            parse_token("t0k=system:serviceaccount:t1:builder"),
            Some((
                "t0k".into(),
                "system:serviceaccount:t1:builder".into(),
                Vec::new()
            ))
        );
        assert_eq!(
            parse_token("t0k=bob"),
            Some(("t0k".into(), "bob".into(), Vec::new()))
        );
        assert_eq!(
            parse_token("YWJj==bob"),
            Some(("YWJj=".into(), "bob".into(), Vec::new()))
        );
        assert_eq!(parse_token("t0k"), None);
        assert_eq!(parse_token("=bob"), None);
        assert_eq!(parse_token("t0k=,team"), None);
    }

    #[test]
    fn kubernetes_versions_are_set_for_all_then_per_cluster() {
        let names = vec!["edge01".to_string(), "edge02".to_string()];
        let entries = |list: &[&str]| list.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        let versions = cluster_versions(&entries(&["1.30", "edge02=v1.23.4"]), &names).unwrap();
        assert_eq!(versions["edge01"].minor(), 30);
        assert_eq!(versions["edge02"].minor(), 23);
        let versions = cluster_versions(&[], &names).unwrap();
        assert_eq!(versions["edge01"], KubernetesVersion::NEWEST);
        let err = cluster_versions(&entries(&["edge03=1.23"]), &names)
            .unwrap_err()
            .to_string();
        assert!(err.contains("edge03"), "{err}");
        let err = cluster_versions(&entries(&["1.12"]), &names)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--kubernetes-version 1.12") && err.contains("19 to 33"),
            "{err}"
        );
    }
}

/// The cluster a node option names (`CLUSTER:` before the first `=`), if any, and the rest.
fn for_cluster(text: &str) -> (Option<&str>, &str) {
    match text.split_once(':') {
        Some((cluster, rest)) if !cluster.is_empty() && !cluster.contains('=') => (Some(cluster), rest),
        _ => (None, text),
    }
}

/// `[CLUSTER:]RESOURCE=QUANTITY` of `--node-capacity`: a resource name (letters, digits, `.`, `/`, `-`, `_`) and a
/// non-negative Kubernetes quantity (`500m`, `16Gi`, `2`).
fn parse_node_capacity(text: &str) -> Result<(Option<String>, String, String), String> {
    let refused = || {
        format!(
            "'{text}' is not [CLUSTER:]RESOURCE=QUANTITY (e.g. cpu=8, memory=16Gi, edge02:intel.com/qat=4)"
        )
    };
    let (cluster, rest) = for_cluster(text);
    let (resource, quantity) = rest.split_once('=').ok_or_else(refused)?;
    let resource_ok = !resource.is_empty()
        && resource
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'/' | b'-' | b'_'));
    let quantity_ok = emco_k8s::quantity::Quantity::parse(quantity).is_ok_and(|q| !q.is_negative());
    if resource_ok && quantity_ok {
        Ok((
            cluster.map(str::to_string),
            resource.to_string(),
            quantity.to_string(),
        ))
    } else {
        Err(refused())
    }
}

#[cfg(test)]
mod node_capacity_tests {
    use super::{for_cluster, parse_node_capacity};

    #[test]
    fn a_node_label_may_name_its_cluster_first() {
        assert_eq!(
            for_cluster("edge01:feature.node.kubernetes.io/intel_qat=true"),
            (Some("edge01"), "feature.node.kubernetes.io/intel_qat=true")
        );
        assert_eq!(
            for_cluster("extraRuntime=virtlet"),
            (None, "extraRuntime=virtlet")
        );
        assert_eq!(for_cluster("key=a:b"), (None, "key=a:b"));
    }

    #[test]
    fn node_capacity_is_a_resource_and_a_quantity() {
        for (text, resource, quantity) in [
            ("cpu=8", "cpu", "8"),
            ("memory=16Gi", "memory", "16Gi"),
            ("cpu=500m", "cpu", "500m"),
            ("intel.com/qat=4", "intel.com/qat", "4"),
            ("hugepages-2Mi=1.5Gi", "hugepages-2Mi", "1.5Gi"),
        ] {
            assert_eq!(
                parse_node_capacity(text),
                Ok((None, resource.to_string(), quantity.to_string()))
            );
        }
        assert_eq!(
            parse_node_capacity("edge02:intel.com/qat=4"),
            Ok((
                Some("edge02".to_string()),
                "intel.com/qat".to_string(),
                "4".to_string()
            ))
        );
        for refused in [
            "cpu",
            "=8",
            "cpu=",
            "cpu=8x",
            "cpu=1.2.3",
            "cpu=-1",
            ":cpu=1",
            "c pu=1",
            "cpu=Gi",
        ] {
            assert!(parse_node_capacity(refused).is_err(), "{refused}");
        }
    }
}
