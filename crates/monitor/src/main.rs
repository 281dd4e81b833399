//! `emco-monitor`: run the in-cluster agent against a cluster (in-cluster configuration, or `--kubeconfig`); with
//! `--git-url` (a GitOps cluster) it also commits the status to the cluster's status branch; with `--pull-from` (a
//! pull cluster) it also takes the cluster's desired state from emco, applies it and reports back.

use clap::Parser;

/// Keep ResourceBundleState statuses current from the objects labelled `emco/deployment-id`.
#[derive(Debug, Parser)]
#[command(name = "emco-monitor", version, about)]
struct Args {
    /// Kubeconfig to use (default: in-cluster configuration, then ~/.kube/config).
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: Option<std::path::PathBuf>,
    /// Also watch this kind: group/version/Kind/plural (repeatable; e.g. example.com/v1/Widget/widgets).
    #[arg(long = "watch")]
    watch: Vec<String>,
    /// Write each bundle at most once per this many milliseconds.
    #[arg(long, default_value_t = 200)]
    coalesce_ms: u64,
    /// Let a change wait this many milliseconds for the changes it causes before its bundle is written.
    #[arg(long, default_value_t = 20)]
    gather_ms: u64,
    /// Refresh every bundle's `status.heartbeat` every this many seconds, changed or not (emco shows a cluster
    /// not heard from within its `--status-grace` as stale).
    #[arg(long, default_value_t = emco_monitor::DEFAULT_HEARTBEAT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=3600))]
    heartbeat: u64,
    /// A GitOps cluster's repository (`https://host/org/repo`; EMCO's monitor chart value `git.giturl`): the
    /// bundles are also committed to its branch named after the cluster, where emco reads them.
    #[arg(long, env = "GIT_URL")]
    git_url: Option<String>,
    /// The repository's name (EMCO's `git.repo`; the URL already names it).
    #[arg(long, env = "GIT_REPO")]
    git_repo: Option<String>,
    /// The branch the cluster's resources are on (EMCO's `git.gitbranch`; status goes to the branch named after
    /// the cluster, as EMCO's monitor writes it).
    #[arg(long, env = "GIT_BRANCH")]
    git_branch: Option<String>,
    /// The Git user (EMCO's `git.username`).
    #[arg(long, env = "GIT_USERNAME", default_value = "emco")]
    git_username: String,
    /// The Git token (EMCO's `git.token`); prefer --git-token-file or the environment, which keep it out of the
    /// process list.
    #[arg(long, env = "GIT_TOKEN", hide_env_values = true)]
    git_token: Option<String>,
    /// A file holding the Git token.
    #[arg(long)]
    git_token_file: Option<std::path::PathBuf>,
    /// The cluster as emco names it, `provider+cluster` (EMCO's `git.clustername`).
    #[arg(long, env = "GIT_CLUSTERNAME", alias = "cluster")]
    cluster_name: Option<String>,
    /// A pull cluster: emco's API (`https://host:port`) to take the cluster's desired state from and report to
    /// (with --cluster and --token-file).
    #[arg(long, env = "EMCO_PULL_FROM")]
    pull_from: Option<String>,
    /// The file holding the pull cluster's agent token (answered when the cluster was registered).
    #[arg(long, env = "EMCO_AGENT_TOKEN_FILE")]
    token_file: Option<std::path::PathBuf>,
    /// CA certificates (PEM) emco's certificate is checked against (default: the system's).
    #[arg(long)]
    ca_file: Option<std::path::PathBuf>,
    /// Commit the status at most once per this many seconds.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=3600))]
    git_interval: u64,
    /// The folder of the monitor's copy of the repository.
    #[arg(long, default_value = "/tmp/emco-monitor-git")]
    git_dir: std::path::PathBuf,
}

/// The Git status settings the flags give, if any (refused, named, when incomplete).
fn git_status(args: &Args) -> Result<Option<emco_monitor::git::GitStatusConfig>, String> {
    let Some(url) = &args.git_url else {
        return Ok(None);
    };
    let Some(cluster) = &args.cluster_name else {
        return Err("--git-url needs --cluster-name provider+cluster (GIT_CLUSTERNAME)".into());
    };
    let token = match (&args.git_token, &args.git_token_file) {
        (_, Some(file)) => std::fs::read_to_string(file)
            .map_err(|err| format!("--git-token-file {}: {err}", file.display()))?
            .trim()
            .to_string(),
        (Some(token), None) => token.clone(),
        (None, None) => String::new(),
    };
    let _ = (&args.git_repo, &args.git_branch);
    let remote = emco_git::Remote {
        url: url.clone(),
        branch: cluster.clone(),
        username: args.git_username.clone(),
        token: emco_git::Secret::new(token),
        ca_pem: None,
    };
    remote.check().map_err(|err| err.to_string())?;
    Ok(Some(emco_monitor::git::GitStatusConfig {
        remote,
        cluster: cluster.clone(),
        interval: std::time::Duration::from_secs(args.git_interval),
        mirror_dir: args.git_dir.clone(),
    }))
}

async fn client(kubeconfig: Option<&std::path::Path>) -> Result<kube::Client, String> {
    let config = match kubeconfig {
        Some(path) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(path)
                .map_err(|err| format!("{}: {err}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .map_err(|err| err.to_string())?
        }
        None => kube::Config::infer().await.map_err(|err| err.to_string())?,
    };
    kube::Client::try_from(config).map_err(|err| err.to_string())
}

/// The largest token or kubeconfig file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Reads a small file the flags name (bounded: a path given by mistake to a large file is refused).
fn read_small(path: &std::path::Path, what: &str) -> Result<Vec<u8>, String> {
    let size = std::fs::metadata(path)
        .map_err(|err| format!("{what} {}: {err}", path.display()))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{what} {} is larger than {MAX_FILE_BYTES} bytes",
            path.display()
        ));
    }
    std::fs::read(path).map_err(|err| format!("{what} {}: {err}", path.display()))
}

/// The pull agent's settings the flags give, if any (refused, named, when incomplete).
fn pull_agent(args: &Args) -> Result<Option<emco_monitor::agent::AgentConfig>, String> {
    let Some(emco) = &args.pull_from else {
        return Ok(None);
    };
    let cluster = args
        .cluster_name
        .as_deref()
        .ok_or("--pull-from needs --cluster provider+cluster")?;
    let token_file = args
        .token_file
        .as_deref()
        .ok_or("--pull-from needs --token-file (the cluster's agent token)")?;
    let token = String::from_utf8(read_small(token_file, "--token-file")?)
        .map_err(|_| format!("--token-file {}: not text", token_file.display()))?;
    let kubeconfig = match &args.kubeconfig {
        Some(path) => read_small(path, "--kubeconfig")?,
        None => in_cluster_kubeconfig()?,
    };
    let mut config = emco_monitor::agent::AgentConfig::new(emco, cluster, token.trim(), kubeconfig);
    config.ca_file.clone_from(&args.ca_file);
    Ok(Some(config))
}

/// A kubeconfig with the pod's service account, inline (rsync's kubeconfig policy takes no file paths).
fn in_cluster_kubeconfig() -> Result<Vec<u8>, String> {
    const ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
    let host = std::env::var("KUBERNETES_SERVICE_HOST")
        .map_err(|_| "not in a cluster (no KUBERNETES_SERVICE_HOST): give --kubeconfig".to_string())?;
    let port = std::env::var("KUBERNETES_SERVICE_PORT").unwrap_or_else(|_| "443".into());
    let token = read_small(
        std::path::Path::new(&format!("{ACCOUNT}/token")),
        "the service account token",
    )?;
    let ca = read_small(
        std::path::Path::new(&format!("{ACCOUNT}/ca.crt")),
        "the service account CA",
    )?;
    use base64::Engine as _;
    let kubeconfig = serde_json::json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "in-cluster",
        "clusters": [{"name": "in-cluster", "cluster": {"server": format!("https://{host}:{port}"),
            "certificate-authority-data": base64::engine::general_purpose::STANDARD.encode(ca)}}],
        "users": [{"name": "agent", "user": {"token": String::from_utf8_lossy(&token).trim()}}],
        "contexts": [{"name": "in-cluster", "context": {"cluster": "in-cluster", "user": "agent"}}]
    });
    Ok(kubeconfig.to_string().into_bytes())
}

/// Resolves at Ctrl-C.
async fn until_ctrl_c() {
    let _ = tokio::signal::ctrl_c().await;
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube_client=off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let mut config = emco_monitor::MonitorConfig {
        coalesce: std::time::Duration::from_millis(args.coalesce_ms),
        gather: std::time::Duration::from_millis(args.gather_ms),
        heartbeat: std::time::Duration::from_secs(args.heartbeat),
        ..Default::default()
    };
    for kind in &args.watch {
        match emco_monitor::WatchedKind::parse(kind) {
            Ok(kind) => config.kinds.push(kind),
            Err(err) => {
                eprintln!("emco-monitor: --watch {err}");
                return std::process::ExitCode::from(2);
            }
        }
    }
    let git = match git_status(&args) {
        Ok(git) => git,
        Err(err) => {
            eprintln!("emco-monitor: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    let agent = match pull_agent(&args) {
        Ok(agent) => agent,
        Err(err) => {
            eprintln!("emco-monitor: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("emco-monitor: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let client = match client(args.kubeconfig.as_deref()).await {
            Ok(client) => client,
            Err(err) => {
                eprintln!("emco-monitor: cannot reach the cluster: {err}");
                return std::process::ExitCode::FAILURE;
            }
        };
        tracing::info!(
            kinds = config.kinds.len(),
            "monitoring objects labelled emco/deployment-id"
        );
        let shutdown = until_ctrl_c();
        if let Some(git) = git {
            tracing::info!(cluster = git.cluster, "committing status to Git");
            tokio::spawn(emco_monitor::git::publish_status(
                client.clone(),
                git,
                std::future::pending(),
            ));
        }
        if let Some(agent) = agent {
            tracing::info!(
                cluster = agent.cluster,
                emco = agent.emco,
                "pull agent: taking the desired state from emco"
            );
            tokio::spawn(async move {
                if let Err(err) = emco_monitor::agent::run_agent(agent, std::future::pending()).await {
                    tracing::error!(error = %err, "the pull agent cannot start");
                }
            });
        }
        emco_monitor::run(client, config, shutdown).await;
        std::process::ExitCode::SUCCESS
    })
}
