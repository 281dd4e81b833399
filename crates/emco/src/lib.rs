//! Commands of the `emco` binary: `serve` runs the control plane (REST API, status index, rsync) with the embedded
//! (or in-memory) store; `demo` runs it with simulated clusters and the vFW example ([`demo`]); `kubesim` serves
//! simulated clusters.

pub mod demo;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use emco_appcontext::{AppContexts, Catalog};
use emco_rsync::{Rsync, RsyncConfig};
use emco_server::{RenderLimits, Server, ServerConfig};
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
    /// How long rendering one app's chart may take at instantiation (`500ms`, `10s`, `2m`; a bare number is
    /// seconds); a chart that takes longer makes instantiate answer 422 `RenderLimitExceeded`.
    #[arg(long, env = "EMCO_RENDER_TIMEOUT", default_value = "10s", value_parser = parse_render_timeout)]
    pub render_timeout: Duration,
    /// How many bytes rendering one app's chart may produce, all its templates together; a chart that renders
    /// more makes instantiate answer 422 `RenderLimitExceeded`.
    #[arg(long, env = "EMCO_RENDER_MAX_OUTPUT_BYTES", default_value_t = emco_helm::render::DEFAULT_MAX_OUTPUT_BYTES, value_parser = parse_output_bytes)]
    pub render_max_output_bytes: usize,
}

/// The longest `--render-timeout`: a render holds a thread and its memory while it runs.
const MAX_RENDER_TIMEOUT: Duration = Duration::from_secs(3600);

/// A `--render-timeout`: a positive number with `ms`, `s` or `m` (a bare number is seconds), at most an hour.
fn parse_render_timeout(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let number: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration: expected e.g. 500ms, 10s or 2m"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "s" => number,
        "m" => number * 60.0,
        other => return Err(format!("'{text}': unknown unit '{other}' (use ms, s or m)")),
    };
    let duration = Duration::try_from_secs_f64(seconds).map_err(|err| format!("'{text}': {err}"))?;
    if duration.is_zero() || duration > MAX_RENDER_TIMEOUT {
        return Err(format!(
            "'{text}': the render timeout must be above 0 and at most 1 hour"
        ));
    }
    Ok(duration)
}

/// A `--render-max-output-bytes`: a positive number of bytes.
fn parse_output_bytes(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) | Err(_) => Err(format!("'{text}' is not a positive number of bytes")),
        Ok(bytes) => Ok(bytes),
    }
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
        render_timeout,
        render_max_output_bytes,
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
            render_limits: RenderLimits {
                max_output_bytes: render_max_output_bytes,
                timeout: render_timeout,
            },
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

    fn serve_args(args: &[&str]) -> Result<super::ServeArgs, clap::Error> {
        match Args::try_parse_from(["emco", "serve"].iter().chain(args))?.command {
            Command::Serve(serve) => Ok(serve),
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn render_limits_have_defaults_and_are_checked() {
        let defaults = serve_args(&[]).unwrap();
        assert_eq!(defaults.render_timeout, std::time::Duration::from_secs(10));
        assert_eq!(defaults.render_max_output_bytes, 32 << 20);
        let set = serve_args(&[
            "--render-timeout",
            "1500ms",
            "--render-max-output-bytes",
            "1048576",
        ])
        .unwrap();
        assert_eq!(set.render_timeout, std::time::Duration::from_millis(1500));
        assert_eq!(set.render_max_output_bytes, 1 << 20);
        for (text, seconds) in [("2m", 120.0), ("3", 3.0), ("0.5s", 0.5)] {
            let args = serve_args(&["--render-timeout", text]).unwrap();
            assert_eq!(args.render_timeout.as_secs_f64(), seconds, "{text}");
        }
        for bad in ["0s", "ten", "5h", "2d", "-1s", "90m"] {
            assert!(serve_args(&["--render-timeout", bad]).is_err(), "{bad}");
        }
        for bad in ["0", "-5", "1MiB"] {
            assert!(serve_args(&["--render-max-output-bytes", bad]).is_err(), "{bad}");
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
