//! The operator's routes beside the `/v2` API: liveness (`/healthz`), readiness (`/readyz`) and Prometheus
//! metrics (`/metrics`).
//!
//! `/healthz` and `/readyz` need no token (kubelets and load balancers carry none); `/metrics` needs an admin's
//! token when authentication is on, unless `ServerConfig::metrics_without_auth` (the auth guard decides). The
//! readiness answer names what is not ready but never the store's own error text (it would be shown to anyone
//! who can reach the port); the server log has it.

use super::contract::{Content, Operation};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::time::Duration;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use emco_model::Connectivity;
use serde_json::json;

use crate::AppState;
use crate::telemetry;

/// The liveness path.
pub(crate) const HEALTH_PATH: &str = "/healthz";
/// The readiness path.
pub(crate) const READY_PATH: &str = "/readyz";
/// The metrics path.
pub(crate) const METRICS_PATH: &str = "/metrics";

/// How long the store may take to answer the readiness read.
pub(crate) const STORE_READ_BOUND: Duration = Duration::from_secs(1);
/// The key the readiness probe reads (absent: the answer is what matters, not the value).
const PROBE_KEY: &str = "/emco/readiness-probe";
/// Prometheus's text format.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `GET /healthz`: 200 while the process serves.
pub(crate) async fn healthz() -> Response {
    axum::Json(json!({"status": "ok"})).into_response()
}

/// `GET /readyz`: 200 when the store answers a read within [`STORE_READ_BOUND`] and the status index has loaded;
/// 503 naming the first part that is not ready otherwise.
pub(crate) async fn readyz(State(state): State<AppState>) -> Response {
    let store_read = tokio::time::timeout(STORE_READ_BOUND, state.store().get(PROBE_KEY))
        .await
        .map(|read| read.map(drop));
    match readiness(store_read, state.status().is_loaded()) {
        Ok(()) => axum::Json(json!({"status": "ok"})).into_response(),
        Err(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({"status": "not ready", "reason": reason})),
        )
            .into_response(),
    }
}

/// The verdict from the store's answer to the probe read (`Err(Elapsed)`: none within the bound) and whether the
/// status index has loaded: `Err` names what is not ready.
fn readiness(
    store_read: Result<Result<(), emco_store::Error>, tokio::time::error::Elapsed>,
    index_loaded: bool,
) -> Result<(), String> {
    match store_read {
        Err(_) => {
            tracing::warn!(bound = ?STORE_READ_BOUND, "not ready: the store did not answer a read in time");
            return Err(format!(
                "store: no answer to a read within {} ms",
                STORE_READ_BOUND.as_millis()
            ));
        }
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "not ready: the store failed a read");
            return Err("store: a read failed (the server log has the error)".to_string());
        }
        Ok(Ok(())) => {}
    }
    if !index_loaded {
        return Err("status index: still loading the AppContexts".to_string());
    }
    Ok(())
}

/// `GET /metrics`: the recorder's histograms, then the server's gauges, in Prometheus's text format.
pub(crate) async fn metrics(State(state): State<AppState>) -> Response {
    let mut text = telemetry::recorder()
        .map(|handle| handle.render())
        .unwrap_or_default();
    write_gauges(&state, &mut text);
    ([(header::CONTENT_TYPE, PROMETHEUS_TEXT)], text).into_response()
}

/// The gauges computed at scrape time from the status index: build info, operations in progress (contexts
/// instantiating or terminating) and clusters rsync is retrying for such a context.
fn write_gauges(state: &AppState, text: &mut String) {
    let (in_progress, retrying) = {
        let index = state.status().read();
        let mut in_progress = 0_usize;
        let mut retrying = HashSet::new();
        for (_, context) in index.contexts() {
            if !context.status.is_running() {
                continue;
            }
            in_progress += 1;
            for app in &context.apps {
                for cluster in &app.clusters {
                    if cluster.connectivity == Connectivity::Retrying {
                        retrying.insert(cluster.full_name.clone());
                    }
                }
            }
        }
        (in_progress, retrying.len())
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let version = env!("CARGO_PKG_VERSION");
    // Writing to a String cannot fail.
    let _ = write!(
        text,
        "# HELP emco_build_info The emco version serving, as a label; always 1.\n\
         # TYPE emco_build_info gauge\n\
         emco_build_info{{version=\"{version}\"}} 1\n\
         # HELP emco_operations_in_progress AppContexts being instantiated or terminated.\n\
         # TYPE emco_operations_in_progress gauge\n\
         emco_operations_in_progress {in_progress}\n\
         # HELP emco_clusters_retrying Clusters rsync cannot reach and keeps retrying for an operation in progress.\n\
         # TYPE emco_clusters_retrying gauge\n\
         emco_clusters_retrying {retrying}\n"
    );
}

/// `GET /healthz`, described.
pub(crate) fn health_operation() -> Operation {
    Operation::get("getHealth", "operations", "Liveness: the process serves")
        .answer(200, "{\"status\":\"ok\"}", Content::Other("application/json"))
        .public()
}

/// `GET /readyz`, described.
pub(crate) fn ready_operation() -> Operation {
    Operation::get(
        "getReadiness",
        "operations",
        "Readiness: the store answers and the status index has loaded",
    )
    .answer(200, "{\"status\":\"ready\"}", Content::Other("application/json"))
    .answer(
        503,
        "{\"status\":\"not ready\",\"reason\":…}",
        Content::Other("application/json"),
    )
    .public()
}

/// `GET /metrics`, described.
pub(crate) fn metrics_operation() -> Operation {
    Operation::get(
        "getMetrics",
        "operations",
        "Prometheus metrics (an admin's token unless --metrics-without-auth)",
    )
    .answer(200, "Prometheus text format", Content::Other("text/plain"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn readiness_names_what_is_not_ready() {
        assert_eq!(readiness(Ok(Ok(())), true), Ok(()));
        let secret = "/var/lib/emco/emco.redb: permission denied";
        let failed = readiness(Ok(Err(emco_store::Error::Backend(secret.to_string()))), true).unwrap_err();
        assert!(failed.starts_with("store: "), "{failed}");
        assert!(
            !failed.contains("/var/lib"),
            "the store's error text stays in the log: {failed}"
        );
        let elapsed = || async {
            tokio::time::timeout(Duration::from_millis(1), std::future::pending::<()>())
                .await
                .unwrap_err()
        };
        let slow = readiness(Err(elapsed().await), true).unwrap_err();
        assert_eq!(slow, "store: no answer to a read within 1000 ms");
        // The store comes first: a failing store is named even while the index loads.
        assert!(
            readiness(Err(elapsed().await), false)
                .unwrap_err()
                .starts_with("store: ")
        );
        assert_eq!(
            readiness(Ok(Ok(())), false).unwrap_err(),
            "status index: still loading the AppContexts"
        );
    }
}
