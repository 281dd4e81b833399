//! `emco-monitor`: run the in-cluster agent against a cluster (in-cluster configuration, or `--kubeconfig`); with
//! `--git-url` (a GitOps cluster) it also commits the status to the cluster's status branch.

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
    #[arg(long, env = "GIT_CLUSTERNAME")]
    cluster_name: Option<String>,
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
        emco_monitor::run(client, config, shutdown).await;
        std::process::ExitCode::SUCCESS
    })
}
