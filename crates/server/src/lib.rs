//! The EMCO REST API of emco-rs and the composition root of the control plane.
//!
//! [`Server::new`] wires a store, the catalog, AppContexts, the lifecycle and an engine together;
//! [`Server::router`] is the whole API as an axum `Router` (tests call it without a socket);
//! [`Server::run`] serves it on a listener until a shutdown future resolves, [`Server::run_with`] with TLS,
//! timeouts and a connection limit ([`ServeOptions`], the serving loop of `serve.rs`). With
//! [`ServerConfig::token_auth`] every request but `/healthz`, `/readyz` and CORS preflights needs a bearer token
//! of the [`auth`] table and a role allowing its method (`/metrics`: an admin's, unless
//! [`ServerConfig::metrics_without_auth`]).
//!
//! Architecture invariant: this is the only crate that knows HTTP status codes and routes.

mod agent_orders;
mod api;
pub mod auth;
pub mod error;
pub mod lifecycle;
mod optimistic;
pub mod request_id;
mod serve;
mod status;
mod telemetry;
pub mod tls;
mod usage;

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use emco_appcontext::{AppContexts, Catalog, Engine, NoopEngine};
pub use emco_helm::RenderLimits;
use emco_store::Store;
pub use lifecycle::patch_values::PatchValueSources;
pub use lifecycle::webhooks::WebhookTargets;
use status::StatusKeeper;
use tokio::net::TcpListener;

pub use api::normalize_origin;

/// The OpenAPI 3.1 document of the API (as `/v2/openapi.json` serves it; `auth`: with bearer tokens on).
pub fn openapi_document(auth: bool) -> serde_json::Value {
    api::document(auth)
}

/// The API reference page, `docs/api.md`, generated from [`openapi_document`].
pub fn api_reference_markdown() -> String {
    api::markdown()
}
pub use auth::TokenAuth;
pub use emco_k8s::kubeconfig::KubeconfigPolicy;
pub use error::ApiError;
pub use lifecycle::Lifecycle;
pub use serve::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    ServeOptions,
};
pub use tls::{TlsConfig, TlsError};

/// The default largest request body: 64 MiB (charts are small; EMCO's own limit for a file part is 1 GiB, which
/// would let one request hold a GiB of server memory).
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Settings of the API server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Requests with a larger body are refused with 413.
    pub max_body_bytes: usize,
    /// Origins (`scheme://host[:port]`) besides the server's own whose browser requests are served; a request
    /// with any other `Origin` is refused with 403.
    pub cors_allowed_origins: Vec<String>,
    /// Bearer tokens and their users (`--token-auth-file`); `None` serves every request unauthenticated.
    pub token_auth: Option<TokenAuth>,
    /// What an uploaded kubeconfig may hold beyond inline credentials (checked at upload, 422 otherwise).
    pub kubeconfig_policy: KubeconfigPolicy,
    /// The bounds of rendering one app's chart at instantiation (output bytes, time); a chart that exceeds one
    /// makes instantiate answer 422 `RenderLimitExceeded`.
    pub render_limits: RenderLimits,
    /// How long a cluster of a live context may go unheard before its status answers show its resources as
    /// `Unknown` and the cluster as stale (`emco serve --status-grace`).
    pub status_grace: std::time::Duration,
    /// Serve `/metrics` without a token even when [`ServerConfig::token_auth`] is set (for a Prometheus that
    /// scrapes without credentials); by default it needs an admin's token then.
    pub metrics_without_auth: bool,
    /// The shortest time between two events of a status stream: changes meanwhile are folded into one event
    /// (`emco serve --watch-interval`).
    pub watch_interval: std::time::Duration,
    /// The most server-sent event streams open at once; one more is answered 503 `TooManyStreams`
    /// (`emco serve --max-streams`).
    pub max_streams: usize,
    /// The URL prefixes gac patch values (`$(https://…)$`) may be fetched from, and the bounds of a fetch
    /// (`emco serve --patch-value-url-prefix`); none by default, so a customization naming a URL is refused.
    pub patch_value_sources: lifecycle::patch_values::PatchValueSources,
    /// Where webhook controllers may be called (`emco serve --controller-url-prefix`), and the bounds of a call.
    pub webhook_targets: lifecycle::webhooks::WebhookTargets,
}

/// The default of [`ServerConfig::watch_interval`].
pub const DEFAULT_WATCH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);
/// The default of [`ServerConfig::max_streams`].
pub const DEFAULT_MAX_STREAMS: usize = 1000;

/// The default of [`ServerConfig::status_grace`]: three missed monitor heartbeats (20 s each).
pub const DEFAULT_STATUS_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            cors_allowed_origins: Vec::new(),
            token_auth: None,
            kubeconfig_policy: KubeconfigPolicy::default(),
            render_limits: RenderLimits::default(),
            status_grace: DEFAULT_STATUS_GRACE,
            metrics_without_auth: false,
            watch_interval: DEFAULT_WATCH_INTERVAL,
            max_streams: DEFAULT_MAX_STREAMS,
            patch_value_sources: lifecycle::patch_values::PatchValueSources::default(),
            webhook_targets: lifecycle::webhooks::WebhookTargets::default(),
        }
    }
}

/// Shared state of the request handlers.
#[derive(Clone)]
pub(crate) struct AppState {
    inner: Arc<StateInner>,
}

struct StateInner {
    store: Store,
    /// The engine the lifecycle drives (told when a pull cluster's agent reports).
    engine: Arc<dyn Engine>,
    catalog: Catalog,
    contexts: AppContexts,
    status: Arc<StatusKeeper>,
    lifecycle: Lifecycle,
    config: ServerConfig,
    /// The open server-sent event streams.
    streams: api::Streams,
    /// The short-lived tokens of `POST /v2/tokens/stream`.
    stream_tokens: auth::stream_tokens::StreamTokens,
    /// Ends the sweep of unfinished contexts with the server.
    _sweeper: AbortOnDrop,
}

/// How often the contexts whose paged creation never finished are looked for (also once at start).
const SWEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// Aborts a background task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sweeps, at start and every [`SWEEP_INTERVAL`], the records of contexts written in pages whose meta never came
/// and whose staging is older than [`emco_appcontext::context::STAGING_TIMEOUT`] (their writer died).
fn start_sweeper(contexts: AppContexts) -> AbortOnDrop {
    let task = tokio::spawn(async move {
        let mut ticks = tokio::time::interval(SWEEP_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            if let Err(err) = contexts
                .sweep_unfinished(emco_appcontext::context::STAGING_TIMEOUT)
                .await
            {
                tracing::warn!(error = %err, "cannot sweep unfinished contexts; trying again later");
            }
        }
    });
    AbortOnDrop(task.abort_handle())
}

impl AppState {
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    pub(crate) fn engine(&self) -> &Arc<dyn Engine> {
        &self.inner.engine
    }

    pub(crate) fn contexts(&self) -> &AppContexts {
        &self.inner.contexts
    }

    pub(crate) fn status(&self) -> &StatusKeeper {
        &self.inner.status
    }

    pub(crate) fn lifecycle(&self) -> &Lifecycle {
        &self.inner.lifecycle
    }

    pub(crate) fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    pub(crate) fn streams(&self) -> &api::Streams {
        &self.inner.streams
    }

    pub(crate) fn stream_tokens(&self) -> &auth::stream_tokens::StreamTokens {
        &self.inner.stream_tokens
    }
}

/// The control plane's API server.
pub struct Server {
    state: AppState,
}

impl Server {
    /// A server over `store`; `engine` applies AppContexts to clusters (`None`: an engine that applies nothing,
    /// leaving every resource Pending). Starts the status index's background task, so it must be called
    /// inside a Tokio runtime. Installs the process-wide metrics recorder of `/metrics` on first call.
    pub fn new(store: Store, engine: Option<Arc<dyn Engine>>, config: ServerConfig) -> Self {
        // Before anything touches the store, so that the status index's first load is timed too.
        telemetry::recorder();
        let catalog = Catalog::new(store.clone());
        let contexts = AppContexts::new(store.clone());
        let status = StatusKeeper::start(store.clone());
        let engine = engine.unwrap_or_else(|| NoopEngine::new(contexts.clone()));
        let lifecycle = Lifecycle::new(catalog.clone(), contexts.clone(), engine.clone())
            .with_render_limits(config.render_limits)
            .with_patch_value_sources(config.patch_value_sources.clone())
            .with_webhook_targets(config.webhook_targets.clone());
        let streams = api::Streams::new(config.max_streams);
        let sweeper = start_sweeper(contexts.clone());
        let inner = StateInner {
            _sweeper: sweeper,
            engine,
            store,
            catalog,
            contexts,
            status,
            lifecycle,
            config,
            streams,
            stream_tokens: auth::stream_tokens::StreamTokens::new(auth::stream_tokens::MAX_STREAM_TOKENS),
        };
        Self {
            state: AppState {
                inner: Arc::new(inner),
            },
        }
    }

    /// Resolves once the status index has loaded every AppContext (`true`), or after `bound` (`false`). Lets a
    /// restarted process resume its work after it serves status, so the two do not compete for the machine.
    pub fn status_loaded(&self, bound: std::time::Duration) -> impl Future<Output = bool> + Send + 'static {
        let state = self.state.clone();
        async move {
            let started = std::time::Instant::now();
            while !state.status().is_loaded() {
                if started.elapsed() >= bound {
                    return false;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            true
        }
    }

    /// The whole REST API.
    pub fn router(&self) -> Router {
        api::router(self.state.clone())
    }

    /// Serves the API over plain HTTP with the default timeouts and connection limit on `listener` until
    /// `shutdown` resolves, then finishes the requests in flight.
    pub async fn run(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        self.run_with(listener, ServeOptions::default(), shutdown).await
    }

    /// Serves the API on `listener` as `options` say (TLS, timeouts, connection limit) until `shutdown`
    /// resolves; then open streams end, requests in flight finish, idle connections close, and it returns once
    /// all have ended.
    pub async fn run_with(
        self,
        listener: TcpListener,
        options: ServeOptions,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let state = self.state.clone();
        let shutdown = async move {
            shutdown.await;
            state.streams().shut_down();
        };
        serve::serve(listener, self.router(), options, shutdown).await
    }

    /// Ends every open server-sent event stream and refuses new ones ([`Server::run_with`] does it when its
    /// shutdown future resolves; for a router served some other way).
    pub fn end_streams(&self) {
        self.state.streams().shut_down();
    }

    /// How many server-sent event streams are open.
    #[must_use]
    pub fn open_streams(&self) -> usize {
        self.state.streams().open_count()
    }
}
