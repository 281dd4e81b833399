//! Commands of the `emco` binary: `serve` runs the control plane (REST API, status index, rsync) with the embedded
//! (or in-memory) store; `demo` runs it with simulated clusters and the vFW example ([`demo`]); `kubesim` serves
//! simulated clusters.

pub mod demo;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use emco_appcontext::{AppContexts, Catalog};
use emco_rsync::{Rsync, RsyncConfig};
use emco_server::{KubeconfigPolicy, Server, ServerConfig, TokenAuth};
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
    /// Require `Authorization: Bearer <token>` on every request except `/healthz`. FILE is in kube-apiserver's
    /// static token format, one CSV line per token: `token,user,uid[,"group1,group2"]`; group `emco:admin` may
    /// do everything, `emco:viewer` may only read. Re-read on SIGHUP (a bad file keeps the previous tokens).
    /// Without it, emco serves unauthenticated on a loopback address only.
    #[arg(long, env = "EMCO_TOKEN_AUTH_FILE", value_name = "FILE")]
    pub token_auth_file: Option<PathBuf>,
    /// Serve without authentication on a non-loopback address: anyone who can reach it may do everything.
    #[arg(long)]
    pub insecure_allow_unauthenticated: bool,
    /// DANGEROUS: accept cluster kubeconfigs with `exec` credential plugins (for cloud IAM such as
    /// `aws eks get-token`). Their commands run on this server, as emco's user, whenever emco connects to the
    /// cluster, so whoever may upload a cluster may run commands here. Needs --token-auth-file; every other
    /// kubeconfig rule (no file paths, auth-provider or proxy-url) still holds.
    #[arg(long)]
    pub allow_exec_credentials: bool,
}

/// Refuses settings that would expose the API: unauthenticated on a non-loopback address without
/// `--insecure-allow-unauthenticated`, or exec credentials without authentication.
fn check_exposure(
    listen: SocketAddr,
    token_auth_file: Option<&Path>,
    insecure_allow_unauthenticated: bool,
    allow_exec_credentials: bool,
) -> anyhow::Result<()> {
    if token_auth_file.is_some() {
        return Ok(());
    }
    if allow_exec_credentials {
        anyhow::bail!(
            "--allow-exec-credentials needs --token-auth-file: exec credential plugins run commands on this server, so only authenticated admins may upload them"
        );
    }
    if !listen.ip().is_loopback() {
        if !insecure_allow_unauthenticated {
            anyhow::bail!(
                "refusing to serve the API without authentication on {listen}, which is not a loopback address: give --token-auth-file FILE to require bearer tokens, or --insecure-allow-unauthenticated to let anyone who can reach it do everything"
            );
        }
        tracing::warn!(
            address = %listen,
            "serving the API WITHOUT authentication on a non-loopback address (--insecure-allow-unauthenticated): anyone who can reach it may do everything"
        );
    }
    Ok(())
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
        token_auth_file,
        insecure_allow_unauthenticated,
        allow_exec_credentials,
    } = args;
    check_exposure(
        listen,
        token_auth_file.as_deref(),
        insecure_allow_unauthenticated,
        allow_exec_credentials,
    )?;
    let token_auth = match &token_auth_file {
        Some(path) => {
            let tokens = TokenAuth::load(path)?;
            reload_on_hangup(tokens.clone())?;
            Some(tokens)
        }
        None => None,
    };
    let kubeconfig_policy = KubeconfigPolicy {
        allow_exec: allow_exec_credentials,
    };
    if allow_exec_credentials {
        tracing::warn!(
            "--allow-exec-credentials: cluster kubeconfigs may run exec credential plugins on this server"
        );
    }
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
    tracing::info!(
        address = %listener.local_addr()?,
        store = ?store,
        authentication = token_auth_file.as_ref().map_or("off".to_string(), |path| format!("bearer tokens of {}", path.display())),
        "serving the EMCO API under /v2"
    );
    let rsync = Rsync::new(
        Catalog::new(store.clone()),
        AppContexts::new(store.clone()),
        RsyncConfig {
            kubeconfig_policy,
            ..RsyncConfig::default()
        },
    );
    let server = Server::new(
        store,
        Some(std::sync::Arc::new(rsync.clone())),
        ServerConfig {
            max_body_bytes,
            cors_allowed_origins,
            token_auth,
            kubeconfig_policy,
        },
    );
    rsync.resume().await.context("resuming unfinished operations")?;
    server.run(listener, shutdown_signal()).await.context("serving")?;
    tracing::info!("stopped");
    Ok(())
}

/// Re-reads the token file on every SIGHUP; a file that is not valid keeps the previous tokens (and is logged,
/// naming the file and line).
fn reload_on_hangup(tokens: TokenAuth) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let mut hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .context("listening for SIGHUP")?;
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                let reloading = tokens.clone();
                match tokio::task::spawn_blocking(move || reloading.reload()).await {
                    Ok(Ok(count)) => {
                        tracing::info!(file = %tokens.path().display(), tokens = count, "reloaded the token file");
                    }
                    Ok(Err(err)) => {
                        tracing::error!(error = %err, "the token file was not reloaded; the previous tokens stay in force");
                    }
                    Err(err) => tracing::error!(error = %err, "reloading the token file failed"),
                }
            }
        });
    }
    #[cfg(not(unix))]
    drop(tokens);
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

    use super::{Args, Command, check_exposure};

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

    #[test]
    fn unauthenticated_serving_is_for_loopback_addresses_unless_insecure_is_asked_for() {
        let loopback = "127.0.0.1:9015".parse().unwrap();
        let loopback_v6 = "[::1]:9015".parse().unwrap();
        let any = "0.0.0.0:9015".parse().unwrap();
        let tokens = Some(std::path::Path::new("/etc/emco/tokens.csv"));
        assert!(check_exposure(loopback, None, false, false).is_ok());
        assert!(check_exposure(loopback_v6, None, false, false).is_ok());
        let refused = check_exposure(any, None, false, false).unwrap_err().to_string();
        assert!(
            refused.contains("--token-auth-file") && refused.contains("--insecure-allow-unauthenticated"),
            "{refused}"
        );
        assert!(check_exposure(any, None, true, false).is_ok());
        assert!(check_exposure(any, tokens, false, false).is_ok());
        // Exec credentials only with authentication, wherever emco listens.
        for address in [loopback, any] {
            for insecure in [false, true] {
                let refused = check_exposure(address, None, insecure, true)
                    .unwrap_err()
                    .to_string();
                assert!(
                    refused.starts_with("--allow-exec-credentials needs --token-auth-file"),
                    "{refused}"
                );
            }
            assert!(check_exposure(address, tokens, false, true).is_ok());
        }
    }
}
