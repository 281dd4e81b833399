//! Commands of the `emco` binary: `serve` runs the control plane (REST API, status index, rsync) with the embedded
//! (or in-memory) store; `demo` runs it with simulated clusters and the vFW example ([`demo`]); `kubesim` serves
//! simulated clusters.

pub mod demo;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use emco_appcontext::{AppContexts, Catalog};
use emco_rsync::{Rsync, RsyncConfig};
use emco_server::{Server, ServerConfig};
use emco_store::{Store, StoreConfig};

/// emco-rs: an EMCO-compatible multi-cluster lifecycle-and-status system.
#[derive(Debug, Parser)]
#[command(name = "emco", version, about)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve EMCO's REST API (`/v2`) with the embedded store, and apply instantiations to clusters.
    Serve(ServeArgs),
    /// Run the vFW example end to end on simulated clusters, show its status, and keep serving the API.
    Demo(demo::DemoArgs),
    /// Serve simulated Kubernetes clusters (see `kubesim --help`).
    Kubesim(kubesim::cli::Args),
}

/// Flags of `emco serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (EMCO's orchestrator port by default).
    #[arg(long, env = "EMCO_LISTEN", default_value = "127.0.0.1:9015")]
    pub listen: SocketAddr,
    /// Directory of the embedded store (created when missing).
    #[arg(long, env = "EMCO_DATA_DIR", default_value = "./emco-data")]
    pub data_dir: PathBuf,
    /// Keep everything in memory instead (lost at exit).
    #[arg(long, conflicts_with = "data_dir")]
    pub in_memory: bool,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "EMCO_MAX_BODY_BYTES", default_value_t = emco_server::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Origins (`scheme://host[:port]`, comma-separated) besides the server's own whose browser requests are
    /// served (CORS); requests with any other `Origin` header are refused with 403.
    #[arg(long, env = "EMCO_CORS_ALLOWED_ORIGINS", value_delimiter = ',', value_parser = parse_origin)]
    pub cors_allowed_origins: Vec<String>,
}

/// An origin of `--cors-allowed-origins`, in its normal spelling.
fn parse_origin(text: &str) -> Result<String, String> {
    emco_server::normalize_origin(text)
        .ok_or_else(|| format!("'{text}' is not an origin: expected http(s)://host[:port], without a path"))
}

/// Logs to stderr, filtered by `RUST_LOG`; by default `info` for the servers and `warn` for the demo, whose
/// terminal belongs to its progress and table.
pub fn init_tracing(command: &Command) {
    let default = match command {
        Command::Demo(_) => "warn,kube_client=off",
        // kube-rs logs every failed request to an unreachable cluster at ERROR; rsync reports those itself (as
        // connectivity Retrying), so its log stays quiet unless asked for.
        Command::Serve(_) | Command::Kubesim(_) => "info,kube_client=off",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// Runs a command to completion.
pub fn run(args: Args) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    match args.command {
        Command::Serve(serve_args) => runtime.block_on(serve(serve_args)),
        Command::Demo(demo_args) => runtime.block_on(demo::run(demo_args, shutdown_signal())),
        Command::Kubesim(sim_args) => {
            drop(runtime);
            kubesim::cli::run(sim_args).context("serving simulated clusters")
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let ServeArgs {
        listen,
        data_dir,
        in_memory,
        max_body_bytes,
        cors_allowed_origins,
    } = args;
    let store_config = if in_memory {
        StoreConfig::Memory
    } else {
        StoreConfig::Redb {
            data_dir: data_dir.clone(),
        }
    };
    let store =
        Store::open(&store_config).with_context(|| format!("opening the store in {}", data_dir.display()))?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening on {listen}"))?;
    tracing::info!(address = %listener.local_addr()?, store = ?store, "serving the EMCO API under /v2");
    let rsync = Rsync::new(
        Catalog::new(store.clone()),
        AppContexts::new(store.clone()),
        RsyncConfig::default(),
    );
    let server = Server::new(
        store,
        Some(std::sync::Arc::new(rsync.clone())),
        ServerConfig {
            max_body_bytes,
            cors_allowed_origins,
        },
    );
    rsync.resume().await.context("resuming unfinished operations")?;
    server.run(listener, shutdown_signal()).await.context("serving")?;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %err, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Args, Command};

    fn origins(args: &[&str]) -> Result<Vec<String>, clap::Error> {
        let args = Args::try_parse_from(["emco", "serve"].iter().chain(args))?;
        match args.command {
            Command::Serve(serve) => Ok(serve.cors_allowed_origins),
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn cors_allowed_origins_are_parsed_and_checked() {
        assert_eq!(origins(&[]).ok(), Some(Vec::new()));
        assert_eq!(
            origins(&[
                "--cors-allowed-origins",
                "HTTPS://UI.example:443,http://b.example:8080/"
            ])
            .ok(),
            Some(vec![
                "https://ui.example".to_string(),
                "http://b.example:8080".to_string()
            ])
        );
        for bad in ["ui.example", "https://ui.example/app", "null", "ftp://x"] {
            let err = origins(&["--cors-allowed-origins", bad])
                .err()
                .map(|e| e.to_string());
            assert!(
                err.as_deref().is_some_and(|e| e.contains("is not an origin")),
                "{bad}: {err:?}"
            );
        }
    }
}
