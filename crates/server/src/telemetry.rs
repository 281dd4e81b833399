//! The server's Prometheus metrics: one process-wide recorder (installed on first use, kept for the process's
//! life, so tests that start many servers in one process share it), the request-latency middleware, and the text
//! `GET /metrics` answers.
//!
//! Every label value is bounded: a request is labelled with its route template (axum's `MatchedPath`, never the
//! raw path; `unmatched` for paths no route serves), its method (one of the HTTP methods the API knows, `OTHER`
//! for any other token) and its status class (`2xx`, …). The store's operations are timed by the store itself
//! (`emco_store::OPERATION_DURATION_METRIC`); the gauges that describe the server's own state are computed by
//! the scrape (`api::ops_routes`), so they are per server even when several share the recorder.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics::Unit;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// The request-latency histogram (labels `method`, `route`, `status`).
pub(crate) const REQUEST_DURATION_METRIC: &str = "emco_http_request_duration_seconds";
/// The route label of a request no route matched.
pub(crate) const UNMATCHED_ROUTE: &str = "unmatched";

/// Histogram buckets, in seconds: from half a millisecond (a read from the embedded store) to 30 s (a large
/// chart's instantiation).
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
/// How often samples are folded into the histograms between scrapes, so that memory stays bounded when nobody
/// scrapes.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

static RECORDER: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// The process-wide recorder's handle, installing it on first use; `None` when another `metrics` recorder was
/// installed in this process first (then `/metrics` shows the server's gauges only).
pub(crate) fn recorder() -> Option<&'static PrometheusHandle> {
    RECORDER.get_or_init(install).as_ref()
}

fn install() -> Option<PrometheusHandle> {
    let builder = match PrometheusBuilder::new().set_buckets(BUCKETS) {
        Ok(builder) => builder,
        Err(err) => {
            tracing::warn!(error = %err, "the metrics recorder was not built; /metrics shows gauges only");
            return None;
        }
    };
    let recorder = builder.build_recorder();
    let handle = recorder.handle();
    if metrics::set_global_recorder(recorder).is_err() {
        tracing::warn!(
            "another metrics recorder is installed in this process; /metrics shows the server's gauges only"
        );
        return None;
    }
    metrics::describe_histogram!(
        REQUEST_DURATION_METRIC,
        Unit::Seconds,
        "Time from receiving a request to answering its headers, by method, route template and status class."
    );
    metrics::describe_histogram!(
        emco_store::OPERATION_DURATION_METRIC,
        Unit::Seconds,
        "Time of one store operation, by operation (get, range, txn)."
    );
    let upkeep = handle.clone();
    let spawned = std::thread::Builder::new()
        .name("emco-metrics-upkeep".to_string())
        .spawn(move || {
            loop {
                std::thread::sleep(UPKEEP_INTERVAL);
                upkeep.run_upkeep();
            }
        });
    if let Err(err) = spawned {
        // Rendering also folds samples in, so scrapes keep memory bounded without the thread.
        tracing::warn!(error = %err, "the metrics upkeep thread did not start");
    }
    Some(handle)
}

/// The middleware: times each request and records it under its route template, method and status class.
pub(crate) async fn record_request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED_ROUTE.to_string(), |path| path.as_str().to_string());
    let method = method_label(request.method());
    let response = next.run(request).await;
    if recorder().is_some() {
        let status = status_class(response.status().as_u16());
        metrics::histogram!(REQUEST_DURATION_METRIC, "method" => method, "route" => route, "status" => status)
            .record(started.elapsed());
    }
    response
}

/// The method's label: the methods of HTTP's registry that a client plausibly sends, `OTHER` for any other token
/// (a method is any token, so recording it as sent would let a client create label values without bound).
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// `2xx`, `4xx`, …
fn status_class(status: u16) -> &'static str {
    match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_bounded() {
        let custom = axum::http::Method::from_bytes(b"BREW").unwrap();
        assert_eq!(method_label(&custom), "OTHER");
        assert_eq!(method_label(&axum::http::Method::PUT), "PUT");
        assert_eq!(status_class(204), "2xx");
        assert_eq!(status_class(404), "4xx");
        assert_eq!(status_class(503), "5xx");
        assert_eq!(status_class(101), "1xx");
    }
}
