//! `emco-monitor`: run the in-cluster agent against a cluster (in-cluster configuration, or `--kubeconfig`).

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
        emco_monitor::run(client, config, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
        std::process::ExitCode::SUCCESS
    })
}
