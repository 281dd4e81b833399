//! Commands of the `emco` binary: `serve` runs the control plane (REST API, status index, rsync) with the embedded
//! store, an in-memory one, or etcd; `demo` runs it with simulated clusters and the vFW example ([`demo`]); `kubesim` serves
//! simulated clusters; `git-server` serves Git repositories for GitOps clusters (the walk-through, the tests).

pub mod demo;
pub mod fd_limit;
pub mod in_cluster;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use emco_appcontext::{AppContexts, Catalog, Replica};
use emco_rsync::{Rsync, RsyncConfig};
use emco_server::{KubeconfigPolicy, RenderLimits, ServeOptions, Server, ServerConfig, TlsConfig, TokenAuth};
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
    /// Serve Git repositories over smart HTTP behind a token (Debian's `git http-backend`), for GitOps clusters in
    /// a demo or a test.
    GitServer(GitServerArgs),
}

/// Flags of `emco git-server`.
#[derive(Debug, clap::Args)]
pub struct GitServerArgs {
    /// The folder of the repositories (created when missing).
    #[arg(long, default_value = "./git-repositories")]
    pub dir: PathBuf,
    /// A file holding the token requests must carry (HTTP basic authentication, any user name).
    #[arg(long)]
    pub token_file: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8070")]
    pub listen: SocketAddr,
    /// Make this bare repository (default branch `main`) when it is missing (repeatable).
    #[arg(long)]
    pub repository: Vec<String>,
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
    /// Keep the store in etcd instead: its members' client URLs, comma-separated (`http://h1:2379,http://h2:2379`,
    /// or `https://` with --etcd-ca-file). emco refuses to start when none answers within a few seconds. etcd
    /// allows 128 operations per transaction by default: an instantiation writes one per (app, cluster), so
    /// large DIGs need etcd's --max-txn-ops raised.
    #[arg(
        long,
        env = "EMCO_ETCD_ENDPOINTS",
        value_delimiter = ',',
        value_name = "URLS",
        conflicts_with_all = ["data_dir", "in_memory"]
    )]
    pub etcd_endpoints: Vec<String>,
    /// The etcd key prefix every key of the store is kept under.
    #[arg(long, env = "EMCO_ETCD_PREFIX", default_value = emco_store::DEFAULT_ETCD_PREFIX, value_name = "PREFIX")]
    pub etcd_prefix: String,
    /// PEM CA bundle that verifies etcd's server certificates (for `https://` endpoints).
    #[arg(
        long,
        env = "EMCO_ETCD_CA_FILE",
        requires = "etcd_endpoints",
        value_name = "FILE"
    )]
    pub etcd_ca_file: Option<PathBuf>,
    /// PEM client certificate emco presents to etcd (with --etcd-key-file).
    #[arg(
        long,
        env = "EMCO_ETCD_CERT_FILE",
        requires_all = ["etcd_endpoints", "etcd_key_file"],
        value_name = "FILE"
    )]
    pub etcd_cert_file: Option<PathBuf>,
    /// PEM private key of --etcd-cert-file.
    #[arg(
        long,
        env = "EMCO_ETCD_KEY_FILE",
        requires_all = ["etcd_endpoints", "etcd_cert_file"],
        value_name = "FILE"
    )]
    pub etcd_key_file: Option<PathBuf>,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "EMCO_MAX_BODY_BYTES", default_value_t = emco_server::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Origins (`scheme://host[:port]`, comma-separated) besides the server's own whose browser requests are
    /// served (CORS); requests with any other `Origin` header are refused with 403.
    #[arg(long, env = "EMCO_CORS_ALLOWED_ORIGINS", value_delimiter = ',', value_parser = parse_origin)]
    pub cors_allowed_origins: Vec<String>,
    /// Require `Authorization: Bearer <token>` on every request except `/healthz` and `/readyz` (`/metrics`: an
    /// admin's token, unless --metrics-without-auth). FILE is in kube-apiserver's static token format, one CSV line per token: `token,user,uid[,"group1,group2"]`; group `emco:admin` may
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
    /// PEM file with the server's certificate (then its chain): with --tls-key-file, the API is served over
    /// HTTPS (TLS 1.2/1.3) instead of plain HTTP. emco refuses to start when a file is missing, not PEM, or
    /// the key is not the certificate's.
    #[arg(
        long,
        env = "EMCO_TLS_CERT_FILE",
        requires = "tls_key_file",
        value_name = "FILE"
    )]
    pub tls_cert_file: Option<PathBuf>,
    /// PEM file with the private key of --tls-cert-file (PKCS#8, PKCS#1 RSA or SEC1 EC).
    #[arg(
        long,
        env = "EMCO_TLS_KEY_FILE",
        requires = "tls_cert_file",
        value_name = "FILE"
    )]
    pub tls_key_file: Option<PathBuf>,
    /// Longest time a client may take to send a request's headers, from their first byte (from connecting,
    /// for a new connection; the TLS handshake included); then the connection is closed. E.g. 10s, 500ms, 2m.
    #[arg(
        long,
        env = "EMCO_HEADER_READ_TIMEOUT",
        value_name = "DURATION",
        default_value = "10s",
        value_parser = parse_duration
    )]
    pub header_read_timeout: Duration,
    /// A kept-alive connection with no request in flight is closed after this long.
    #[arg(
        long,
        env = "EMCO_IDLE_TIMEOUT",
        value_name = "DURATION",
        default_value = "60s",
        value_parser = parse_duration
    )]
    pub idle_timeout: Duration,
    /// A request whose body sends nothing for this long is answered 408 (RequestTimeout) and its connection
    /// closed.
    #[arg(
        long,
        env = "EMCO_BODY_READ_TIMEOUT",
        value_name = "DURATION",
        default_value = "60s",
        value_parser = parse_duration
    )]
    pub body_read_timeout: Duration,
    /// Most client connections open at once, capped to the file-descriptor limit minus a reserve (a quarter,
    /// at least 64). At the limit a new connection closes the connection idle longest; it waits only when every
    /// connection has a request in flight.
    #[arg(
        long,
        env = "EMCO_MAX_CONNECTIONS",
        value_name = "N",
        default_value_t = emco_server::DEFAULT_MAX_CONNECTIONS,
        value_parser = parse_max_connections
    )]
    pub max_connections: usize,
    /// How long rendering one app's chart may take at instantiation (`500ms`, `10s`, `2m`; a bare number is
    /// seconds); a chart that takes longer makes instantiate answer 422 `RenderLimitExceeded`.
    #[arg(long, env = "EMCO_RENDER_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub render_timeout: Duration,
    /// How many bytes rendering one app's chart may produce, all its templates together; a chart that renders
    /// more makes instantiate answer 422 `RenderLimitExceeded`.
    #[arg(long, env = "EMCO_RENDER_MAX_OUTPUT_BYTES", default_value_t = emco_helm::render::DEFAULT_MAX_OUTPUT_BYTES, value_parser = parse_output_bytes)]
    pub render_max_output_bytes: usize,
    /// How long a cluster of a deployed app may go unheard (its monitor's heartbeat) before status answers show
    /// its resources as `Unknown` and the cluster as stale (SECONDS, or `90s`, `2m`).
    #[arg(long, env = "EMCO_STATUS_GRACE", value_name = "SECONDS", default_value = "60s", value_parser = parse_duration)]
    pub status_grace: Duration,
    /// How log lines are written to stderr: `text` for people, `json` (one object per line, with the request's
    /// span fields such as `request_id`) for a log collector.
    #[arg(long, env = "EMCO_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Serve `/metrics` (Prometheus text) without a token even with --token-auth-file, for a Prometheus that
    /// scrapes without credentials; by default it then needs an `emco:admin` token. `/healthz` and `/readyz`
    /// never need one.
    #[arg(long, env = "EMCO_METRICS_WITHOUT_AUTH")]
    pub metrics_without_auth: bool,
    /// With --etcd-endpoints: the time to live of this replica's lease (SECONDS, or `5s`, `1m`). Any number of
    /// `emco serve` processes may share one etcd; each running operation and each cluster's status watcher is
    /// owned by one of them through its lease, and taken over by another about this long after the owner dies.
    #[arg(long, env = "EMCO_LEASE_TTL", value_name = "DURATION", default_value = "5s", value_parser = parse_lease_ttl)]
    pub lease_ttl: Duration,
    /// The shortest time between two events of a status stream (`Accept: text/event-stream` or `?watch=true`):
    /// changes meanwhile are folded into one event (`250ms`, `1s`; a bare number is seconds).
    #[arg(long, env = "EMCO_WATCH_INTERVAL", default_value = "250ms", value_parser = parse_duration)]
    pub watch_interval: Duration,
    /// The most server-sent event streams (status streams, /v2/events) open at once; one more is answered 503.
    #[arg(long, env = "EMCO_MAX_STREAMS", default_value_t = emco_server::DEFAULT_MAX_STREAMS)]
    pub max_streams: usize,
    /// A URL prefix (`https://values.example.com/emco/`, ending in `/`; comma-separated or repeated) under which
    /// gac customizations may take patch values (`"value": "$(https://…)$"`, fetched at instantiate within 5 s and
    /// 64 KiB, redirects not followed). None by default: a customization naming any URL is refused. Plain
    /// `http://` only where a prefix says so.
    #[arg(long, env = "EMCO_PATCH_VALUE_URL_PREFIX", value_delimiter = ',', value_parser = parse_url_prefix)]
    pub patch_value_url_prefix: Vec<String>,
    /// An https:// URL prefix (`https://controllers.example.com/`, ending in `/`; comma-separated or repeated)
    /// under which webhook controllers (a controller registered with a `url`) may be called, at instantiate and
    /// update, within 10 s, 32 MiB sent and 8 MiB answered, redirects not followed. None by default: a DIG naming a
    /// webhook controller is refused.
    #[arg(long, env = "EMCO_CONTROLLER_URL_PREFIX", value_delimiter = ',', value_parser = parse_https_url_prefix)]
    pub controller_url_prefix: Vec<String>,
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

/// The longest a restarted process waits for its status index before it resumes unfinished work anyway.
const RESUME_AFTER_LOAD_BOUND: Duration = Duration::from_secs(10);

/// Resumes the unfinished operations once `loaded` resolves; a failed read of the store is tried again.
async fn resume_when_loaded(loaded: impl std::future::Future<Output = bool>, rsync: Rsync) {
    if !loaded.await {
        tracing::warn!("the status index is not loaded yet; resuming unfinished operations anyway");
    }
    let mut attempt = 0u32;
    loop {
        match rsync.resume().await {
            Ok(_) => return,
            Err(err) => {
                attempt += 1;
                tracing::warn!(error = %err, attempt, "cannot resume unfinished operations yet; trying again");
                tokio::time::sleep(Duration::from_secs(u64::from(attempt.min(10)))).await;
            }
        }
    }
}

/// A duration flag: a positive number with unit `ms`, `s`, `m` or `h` (a bare number is seconds; emcoctl's
/// reading), at most a day.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = emcoctl::config::parse_duration(text)?;
    if duration.is_zero() || duration > Duration::from_secs(24 * 3600) {
        return Err(format!("'{text}' is out of range: between 1ms and 24h"));
    }
    Ok(duration)
}

/// `--max-connections`: 1 to 1,048,576.
fn parse_max_connections(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=1 << 20).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a connection count between 1 and 1048576"
        )),
    }
}

/// A `--render-max-output-bytes`: a positive number of bytes.
fn parse_output_bytes(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) | Err(_) => Err(format!("'{text}' is not a positive number of bytes")),
        Ok(bytes) => Ok(bytes),
    }
}

/// An origin of `--cors-allowed-origins`, in its normal spelling.
fn parse_url_prefix(text: &str) -> Result<String, String> {
    let refused =
        || format!("'{text}' is not a URL prefix: expected http(s)://host[:port]/path/, ending in '/'");
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .ok_or_else(refused)?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() || !rest.contains('/') || !text.ends_with('/') || text.contains(['?', '#', '@', ' ']) {
        return Err(refused());
    }
    Ok(text.to_string())
}

fn parse_https_url_prefix(text: &str) -> Result<String, String> {
    if !text.starts_with("https://") {
        return Err(format!(
            "'{text}' is not an https:// URL prefix: webhook controllers are called over HTTPS only"
        ));
    }
    parse_url_prefix(text)
}

fn parse_origin(text: &str) -> Result<String, String> {
    emco_server::normalize_origin(text)
        .ok_or_else(|| format!("'{text}' is not an origin: expected http(s)://host[:port], without a path"))
}

/// The format of `emco serve`'s log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line: `timestamp`, `level`, `fields`, `target` and the current `span` (a request's
    /// `request_id`, `method`, `uri`, `user`).
    Json,
}

/// Logs to stderr, filtered by `RUST_LOG`; by default `info` for the servers and `warn` for the demo, whose
/// terminal belongs to its progress and table.
pub fn init_tracing(command: &Command) {
    let default = match command {
        Command::Demo(_) => "warn,kube_client=off",
        // kube-rs logs every failed request to an unreachable cluster at ERROR; rsync reports those itself (as
        // connectivity Retrying), so its log stays quiet unless asked for.
        Command::Serve(_) | Command::Kubesim(_) | Command::GitServer(_) => "info,kube_client=off",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let format = match command {
        Command::Serve(serve) => serve.log_format,
        Command::Demo(_) | Command::Kubesim(_) | Command::GitServer(_) => LogFormat::Text,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
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
        Command::GitServer(git_args) => runtime.block_on(git_server(git_args)),
        Command::Kubesim(sim_args) => {
            drop(runtime);
            fd_limit::raise_to_hard_limit();
            // `--monitors`: emco's monitor runs inside every simulated cluster, as it would be deployed in a real one.
            let monitor = in_cluster::software();
            kubesim::cli::run_with(sim_args, Some(monitor)).context("serving simulated clusters")
        }
    }
}

/// `emco git-server`: serves the repositories until interrupted.
async fn git_server(args: GitServerArgs) -> anyhow::Result<()> {
    let token = std::fs::read_to_string(&args.token_file)
        .with_context(|| format!("--token-file {}", args.token_file.display()))?
        .trim()
        .to_string();
    anyhow::ensure!(
        !token.is_empty(),
        "--token-file {} is empty",
        args.token_file.display()
    );
    anyhow::ensure!(
        emco_git::GitServer::git_available(),
        "git is not installed: the server runs `git http-backend`"
    );
    let server = emco_git::GitServer::start_on(&args.dir, &token, args.listen)
        .await
        .with_context(|| format!("serving Git on {}", args.listen))?;
    for name in &args.repository {
        if !server.repository_dir(name).exists() {
            server
                .create_repository(name)
                .with_context(|| format!("making repository {name}"))?;
        }
        tracing::info!(repository = name, url = server.url(name), "serving");
    }
    tracing::info!(dir = %args.dir.display(), listen = %args.listen, "the Git server is serving");
    shutdown_signal().await;
    Ok(())
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let ServeArgs {
        listen,
        data_dir,
        in_memory,
        etcd_endpoints,
        etcd_prefix,
        etcd_ca_file,
        etcd_cert_file,
        etcd_key_file,
        max_body_bytes,
        cors_allowed_origins,
        token_auth_file,
        insecure_allow_unauthenticated,
        allow_exec_credentials,
        tls_cert_file,
        tls_key_file,
        header_read_timeout,
        idle_timeout,
        body_read_timeout,
        max_connections,
        render_timeout,
        render_max_output_bytes,
        status_grace,
        metrics_without_auth,
        lease_ttl,
        watch_interval,
        max_streams,
        patch_value_url_prefix,
        controller_url_prefix,
        log_format: _,
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
    let tls = match (tls_cert_file, tls_key_file) {
        (Some(cert), Some(key)) => Some(TlsConfig::from_pem_files(&cert, &key).context("cannot serve TLS")?),
        (None, None) => None,
        _ => anyhow::bail!("--tls-cert-file and --tls-key-file go together: give both or neither"),
    };
    let fd_limit = fd_limit::raise_to_hard_limit();
    let connection_limit = fd_limit::cap_connections(max_connections, fd_limit);
    if connection_limit < max_connections {
        tracing::info!(
            requested = max_connections,
            limit = connection_limit,
            fd_limit = ?fd_limit,
            "connection limit capped below the file-descriptor limit"
        );
    }
    // GitOps clusters' mirrors live beside the embedded store, so that a restart reuses them; with etcd or in
    // memory, under the temporary folder.
    let git_dir = (etcd_endpoints.is_empty() && !in_memory).then(|| data_dir.join("git"));
    let store_config = store_config(
        data_dir,
        in_memory,
        etcd_endpoints,
        etcd_prefix,
        emco_store::EtcdTls {
            ca_file: etcd_ca_file,
            cert_file: etcd_cert_file,
            key_file: etcd_key_file,
        },
    );
    let store = Store::open(&store_config)
        .await
        .with_context(|| match &store_config {
            StoreConfig::Etcd { .. } => "opening the store in etcd".to_string(),
            StoreConfig::Redb { data_dir } => format!("opening the store in {}", data_dir.display()),
            StoreConfig::Memory => "opening the in-memory store".to_string(),
        })?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening on {listen}"))?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    if tls.is_none() && !listen.ip().is_loopback() {
        tracing::warn!(
            address = %listen,
            "serving plain HTTP beyond loopback: requests and answers cross the network unencrypted; give \
             --tls-cert-file and --tls-key-file to serve HTTPS"
        );
    }
    tracing::info!(
        url = %format!("{scheme}://{}/v2", listener.local_addr()?),
        store = ?store,
        max_connections = connection_limit,
        authentication = token_auth_file.as_ref().map_or("off".to_string(), |path| format!("bearer tokens of {}", path.display())),
        "serving the EMCO API over {scheme}"
    );
    let rsync_config = RsyncConfig {
        kubeconfig_policy,
        git_dir,
        ..RsyncConfig::default()
    };
    // On etcd this process is one replica among any number: it registers with a lease and runs only the work it
    // owns. The memory and redb stores belong to one process, which owns everything.
    let replica = if store.is_shared() {
        Some(
            Replica::register(
                store.clone(),
                emco_appcontext::replicas::replica_id(&listener.local_addr()?),
                listener.local_addr()?.to_string(),
                lease_ttl,
            )
            .await
            .context("registering this replica in etcd")?,
        )
    } else {
        None
    };
    let rsync = match &replica {
        Some(replica) => {
            tracing::info!(replica = replica.id(), lease_ttl = ?lease_ttl, "serving as one replica of several");
            Rsync::with_replica(
                Catalog::new(store.clone()),
                AppContexts::new(store.clone()),
                rsync_config,
                replica.clone(),
            )
        }
        None => Rsync::new(
            Catalog::new(store.clone()),
            AppContexts::new(store.clone()),
            rsync_config,
        ),
    };
    let server = Server::new(
        store,
        Some(std::sync::Arc::new(rsync.clone())),
        ServerConfig {
            max_body_bytes,
            cors_allowed_origins,
            token_auth,
            kubeconfig_policy,
            render_limits: RenderLimits {
                max_output_bytes: render_max_output_bytes,
                timeout: render_timeout,
            },
            status_grace,
            metrics_without_auth,
            watch_interval,
            max_streams,
            patch_value_sources: emco_server::PatchValueSources {
                prefixes: patch_value_url_prefix,
                ..emco_server::PatchValueSources::default()
            },
            webhook_targets: emco_server::WebhookTargets {
                prefixes: controller_url_prefix,
                ..emco_server::WebhookTargets::default()
            },
        },
    );
    // Unfinished work resumes once status is served (the index loaded), so a cold restart answers status first and
    // the two do not compete for the machine; a store error is retried.
    tokio::spawn(resume_when_loaded(
        server.status_loaded(RESUME_AFTER_LOAD_BOUND),
        rsync.clone(),
    ));
    let replica_task = replica
        .clone()
        .map(|replica| tokio::spawn(keep_replica(replica, rsync.clone())));
    let options = ServeOptions {
        tls,
        header_read_timeout,
        idle_timeout,
        body_read_timeout,
        max_connections: connection_limit,
    };
    server
        .run_with(listener, options, shutdown_signal())
        .await
        .context("serving")?;
    if let (Some(task), Some(replica)) = (replica_task, replica) {
        task.abort();
        // Leaving at once hands this replica's work to the others without waiting for the lease to expire.
        if let Err(err) = replica.leave().await {
            tracing::warn!(error = %err, "cannot leave the replicas; the lease will expire");
        }
    }
    tracing::info!("stopped");
    Ok(())
}

/// How often a replica looks for work whose owner is gone.
const ADOPT_INTERVAL: Duration = Duration::from_secs(1);

/// Keeps this replica's lease alive (a third of its time to live apart) and adopts orphaned work every second;
/// when the lease was lost (the process was paused or cut off), drops the work run under it.
async fn keep_replica(replica: std::sync::Arc<Replica>, rsync: Rsync) {
    let renew_every = replica.ttl() / 3;
    let mut last_renewal = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(ADOPT_INTERVAL.min(renew_every)).await;
        if last_renewal.elapsed() >= renew_every {
            match replica.keep_alive().await {
                Ok(true) => rsync.lease_lost(),
                Ok(false) => {}
                Err(err) => tracing::warn!(error = %err, "cannot renew this replica's lease"),
            }
            last_renewal = tokio::time::Instant::now();
        }
        if let Err(err) = rsync.adopt_orphans().await {
            tracing::warn!(error = %err, "cannot look for work whose owner is gone");
        }
    }
}

/// A lease's time to live: a duration within the store's bounds.
fn parse_lease_ttl(text: &str) -> Result<Duration, String> {
    let ttl = parse_duration(text)?;
    if ttl < emco_store::MIN_LEASE_TTL || ttl > emco_store::MAX_LEASE_TTL {
        return Err(format!(
            "'{text}': the lease's time to live must be between {:?} and {:?}",
            emco_store::MIN_LEASE_TTL,
            emco_store::MAX_LEASE_TTL
        ));
    }
    Ok(ttl)
}

/// The store `emco serve` opens: etcd when endpoints are given (TLS when any TLS file is), else in memory or in
/// the data directory.
fn store_config(
    data_dir: PathBuf,
    in_memory: bool,
    etcd_endpoints: Vec<String>,
    etcd_prefix: String,
    etcd_tls: emco_store::EtcdTls,
) -> StoreConfig {
    if !etcd_endpoints.is_empty() {
        let tls = (etcd_tls != emco_store::EtcdTls::default()).then_some(etcd_tls);
        StoreConfig::Etcd {
            endpoints: etcd_endpoints,
            prefix: etcd_prefix,
            tls,
        }
    } else if in_memory {
        StoreConfig::Memory
    } else {
        StoreConfig::Redb { data_dir }
    }
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
    use std::time::Duration;

    use clap::Parser;

    use super::{Args, Command, ServeArgs, StoreConfig, check_exposure, store_config};

    fn serve_args(args: &[&str]) -> Result<ServeArgs, String> {
        let args = Args::try_parse_from(["emco", "serve"].iter().chain(args)).map_err(|e| e.to_string())?;
        match args.command {
            Command::Serve(serve) => Ok(serve),
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn patch_value_url_prefixes_are_whole_url_prefixes() {
        let serve = serve_args(&[
            "--patch-value-url-prefix",
            "https://values.example.com/emco/,http://10.0.0.1:8080/v/",
        ])
        .unwrap();
        assert_eq!(
            serve.patch_value_url_prefix,
            ["https://values.example.com/emco/", "http://10.0.0.1:8080/v/"]
        );
        for refused in [
            "https://values.example.com",
            "file:///etc/",
            "https:///path/",
            "https://u@h/p/",
        ] {
            let err = serve_args(&["--patch-value-url-prefix", refused]).unwrap_err();
            assert!(err.contains("is not a URL prefix"), "{refused}: {err}");
        }
        assert!(
            serve_args(&[]).unwrap().patch_value_url_prefix.is_empty(),
            "none by default"
        );
    }

    #[test]
    fn controller_url_prefixes_are_https_only() {
        let serve = serve_args(&["--controller-url-prefix", "https://controllers.example.com/"]).unwrap();
        assert_eq!(serve.controller_url_prefix, ["https://controllers.example.com/"]);
        let err = serve_args(&["--controller-url-prefix", "http://controllers.example.com/"]).unwrap_err();
        assert!(err.contains("over HTTPS only"), "{err}");
        assert!(serve_args(&[]).unwrap().controller_url_prefix.is_empty());
    }

    fn chosen_store(args: &[&str]) -> Result<StoreConfig, String> {
        let serve = serve_args(args)?;
        Ok(store_config(
            serve.data_dir,
            serve.in_memory,
            serve.etcd_endpoints,
            serve.etcd_prefix,
            emco_store::EtcdTls {
                ca_file: serve.etcd_ca_file,
                cert_file: serve.etcd_cert_file,
                key_file: serve.etcd_key_file,
            },
        ))
    }

    #[test]
    fn etcd_flags_choose_the_etcd_store_and_exclude_the_others() {
        assert_eq!(
            chosen_store(&["--etcd-endpoints", "http://h1:2379,http://h2:2379"]).unwrap(),
            StoreConfig::Etcd {
                endpoints: vec!["http://h1:2379".into(), "http://h2:2379".into()],
                prefix: "/emco".into(),
                tls: None,
            }
        );
        let with_tls = chosen_store(&[
            "--etcd-endpoints=https://h1:2379",
            "--etcd-prefix=/other",
            "--etcd-ca-file=ca.pem",
            "--etcd-cert-file=c.pem",
            "--etcd-key-file=k.pem",
        ])
        .unwrap();
        assert_eq!(
            with_tls,
            StoreConfig::Etcd {
                endpoints: vec!["https://h1:2379".into()],
                prefix: "/other".into(),
                tls: Some(emco_store::EtcdTls {
                    ca_file: Some("ca.pem".into()),
                    cert_file: Some("c.pem".into()),
                    key_file: Some("k.pem".into()),
                }),
            }
        );
        assert_eq!(chosen_store(&["--in-memory"]).unwrap(), StoreConfig::Memory);
        assert_eq!(
            chosen_store(&[]).unwrap(),
            StoreConfig::Redb {
                data_dir: "./emco-data".into()
            }
        );
        for conflicting in [&["--data-dir", "d"][..], &["--in-memory"][..]] {
            let err = chosen_store(&[&["--etcd-endpoints", "http://h:2379"][..], conflicting].concat())
                .unwrap_err();
            assert!(err.contains("cannot be used with"), "{err}");
        }
        let lone_cert =
            chosen_store(&["--etcd-endpoints=https://h:2379", "--etcd-cert-file=c.pem"]).unwrap_err();
        assert!(lone_cert.contains("--etcd-key-file"), "{lone_cert}");
        let tls_without_etcd = chosen_store(&["--etcd-ca-file=ca.pem"]).unwrap_err();
        assert!(
            tls_without_etcd.contains("--etcd-endpoints"),
            "{tls_without_etcd}"
        );
    }

    #[test]
    fn tls_files_go_together() {
        let both = serve_args(&["--tls-cert-file", "c.pem", "--tls-key-file", "k.pem"]).unwrap();
        assert_eq!(
            (both.tls_cert_file.unwrap(), both.tls_key_file.unwrap()),
            ("c.pem".into(), "k.pem".into())
        );
        let neither = serve_args(&[]).unwrap();
        assert!(neither.tls_cert_file.is_none() && neither.tls_key_file.is_none());
        let only_cert = serve_args(&["--tls-cert-file", "c.pem"]).unwrap_err();
        assert!(only_cert.contains("--tls-key-file"), "{only_cert}");
        let only_key = serve_args(&["--tls-key-file", "k.pem"]).unwrap_err();
        assert!(only_key.contains("--tls-cert-file"), "{only_key}");
    }

    #[test]
    fn timeouts_and_the_connection_limit_are_parsed_and_checked() {
        let defaults = serve_args(&[]).unwrap();
        assert_eq!(
            (
                defaults.header_read_timeout,
                defaults.idle_timeout,
                defaults.body_read_timeout,
                defaults.max_connections
            ),
            (
                Duration::from_secs(10),
                Duration::from_secs(60),
                Duration::from_secs(60),
                4096
            )
        );
        let set = serve_args(&[
            "--header-read-timeout",
            "500ms",
            "--idle-timeout",
            "2m",
            "--body-read-timeout",
            "15",
            "--max-connections",
            "10",
        ])
        .unwrap();
        assert_eq!(
            (
                set.header_read_timeout,
                set.idle_timeout,
                set.body_read_timeout,
                set.max_connections
            ),
            (
                Duration::from_millis(500),
                Duration::from_secs(120),
                Duration::from_secs(15),
                10
            )
        );
        for bad in ["0s", "ten", "5 parsecs", "2d", "25h", "-1s"] {
            let err = serve_args(&[&format!("--idle-timeout={bad}")]).unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
        for bad in ["0", "-3", "many", "2000000"] {
            let err = serve_args(&[&format!("--max-connections={bad}")]).unwrap_err();
            assert!(err.contains("is not a connection count"), "{bad}: {err}");
        }
    }

    fn origins(args: &[&str]) -> Result<Vec<String>, clap::Error> {
        let args = Args::try_parse_from(["emco", "serve"].iter().chain(args))?;
        match args.command {
            Command::Serve(serve) => Ok(serve.cors_allowed_origins),
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn render_limits_have_defaults_and_are_checked() {
        let defaults = serve_args(&[]).unwrap();
        assert_eq!(defaults.render_timeout, Duration::from_secs(10));
        assert_eq!(defaults.render_max_output_bytes, 32 << 20);
        let set = serve_args(&[
            "--render-timeout",
            "1500ms",
            "--render-max-output-bytes",
            "1048576",
        ])
        .unwrap();
        assert_eq!(set.render_timeout, Duration::from_millis(1500));
        assert_eq!(set.render_max_output_bytes, 1 << 20);
        for (text, seconds) in [("2m", 120.0), ("3", 3.0), ("500ms", 0.5)] {
            let args = serve_args(&["--render-timeout", text]).unwrap();
            assert_eq!(args.render_timeout.as_secs_f64(), seconds, "{text}");
        }
        for bad in ["0s", "ten", "25h", "2d", "-1s", "0.5s"] {
            assert!(serve_args(&["--render-timeout", bad]).is_err(), "{bad}");
        }
        for bad in ["0", "-5", "1MiB"] {
            assert!(serve_args(&["--render-max-output-bytes", bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn watch_interval_defaults_to_a_quarter_second() {
        let defaults = serve_args(&[]).unwrap();
        assert_eq!(defaults.watch_interval, Duration::from_millis(250));
        assert_eq!(defaults.max_streams, emco_server::DEFAULT_MAX_STREAMS);
        assert_eq!(
            serve_args(&["--watch-interval", "1s"]).unwrap().watch_interval,
            Duration::from_secs(1)
        );
    }

    #[test]
    fn status_grace_defaults_to_a_minute_and_takes_seconds() {
        assert_eq!(serve_args(&[]).unwrap().status_grace, Duration::from_secs(60));
        assert_eq!(
            serve_args(&["--status-grace", "95"]).unwrap().status_grace,
            Duration::from_secs(95)
        );
        assert_eq!(
            serve_args(&["--status-grace", "2m"]).unwrap().status_grace,
            Duration::from_secs(120)
        );
        for bad in ["0", "soon", "-3"] {
            assert!(serve_args(&["--status-grace", bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn lease_ttl_defaults_to_five_seconds_and_is_bounded() {
        assert_eq!(serve_args(&[]).unwrap().lease_ttl, Duration::from_secs(5));
        assert_eq!(
            serve_args(&["--lease-ttl", "3s"]).unwrap().lease_ttl,
            Duration::from_secs(3)
        );
        for bad in ["500ms", "2h", "never"] {
            assert!(serve_args(&["--lease-ttl", bad]).is_err(), "{bad}");
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
