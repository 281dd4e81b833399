//! The route table of EMCO's `/v2` API (`reference/emco.md` §5.1) and the glue every route shares.

mod auth;
mod body;
mod browser;
mod events_routes;
mod files;
mod lifecycle_routes;
mod logical_cloud_routes;
mod ops_routes;
mod paging;
mod preconditions;
mod replicas_routes;
mod resources;
mod status_collector_routes;
mod status_config_routes;
mod status_routes;
mod stream;
mod strict_json;
mod ui;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::Uri;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::get;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::lifecycle::Subject;
use crate::request_id;
use crate::telemetry;
use crate::{ApiError, AppState};

pub use browser::normalize_origin;
pub(crate) use ops_routes::{HEALTH_PATH, METRICS_PATH, READY_PATH};
pub(crate) use stream::Streams;

const COMPOSITE_APP: &str = "/v2/projects/{project}/composite-apps/{composite_app}/{version}";
const DIG: &str =
    "/v2/projects/{project}/composite-apps/{composite_app}/{version}/deployment-intent-groups/{dig}";
const CLUSTER: &str = "/v2/cluster-providers/{provider}/clusters/{cluster}";
const LOGICAL_CLOUD: &str = "/v2/projects/{project}/logical-clouds/{logical_cloud}";

/// Every route of the API.
pub(crate) fn router(state: AppState) -> Router {
    use lifecycle_routes::{
        approve, instantiate, migrate, resume, rollback, stop, terminate, update, update_dig,
    };
    use resources::{
        APP_DEPENDENCY, APP_INTENT, CLUSTER_LABEL, CLUSTER_PROVIDER, CLUSTER_QUOTA, CLUSTER_REFERENCE,
        COMPOSITE_APP as CA, COMPOSITE_PROFILE, CONTROLLER, DEPLOYMENT_INTENT_GROUP, DTC_CONTROLLER,
        GENERIC_PLACEMENT_INTENT, GROUP_INTENT, LOGICAL_CLOUD as LC, LOGICAL_CLOUD_KV, NETWORK, PROJECT,
        PROVIDER_NETWORK, USER_PERMISSION, collection, item,
    };
    let dig = Subject::DeploymentIntentGroup;
    let networks = Subject::ClusterNetworks;
    let logical_cloud = Subject::LogicalCloud;
    let max_body = state.config().max_body_bytes;
    let apps = format!("{COMPOSITE_APP}/apps");
    let app = format!("{apps}/{{app}}");
    let profiles = format!("{COMPOSITE_APP}/composite-profiles/{{composite_profile}}/profiles");
    Router::new()
        .route("/v2/controllers", collection(&CONTROLLER))
        .route("/v2/controllers/{controller}", item(&CONTROLLER))
        .route("/v2/projects", collection(&PROJECT))
        .route("/v2/projects/{project}", item(&PROJECT))
        .route("/v2/projects/{project}/composite-apps", collection(&CA))
        .route(COMPOSITE_APP, item(&CA))
        .route(&apps, files::collection(&files::APP))
        .route(&app, files::item(&files::APP))
        .route(&format!("{app}/dependency"), collection(&APP_DEPENDENCY))
        .route(&format!("{app}/dependency/{{dependency}}"), item(&APP_DEPENDENCY))
        .route(
            &format!("{COMPOSITE_APP}/composite-profiles"),
            collection(&COMPOSITE_PROFILE),
        )
        .route(
            &format!("{COMPOSITE_APP}/composite-profiles/{{composite_profile}}"),
            item(&COMPOSITE_PROFILE),
        )
        .route(&profiles, files::collection(&files::APP_PROFILE))
        .route(
            &format!("{profiles}/{{app_profile}}"),
            files::item(&files::APP_PROFILE),
        )
        .route(
            &format!("{COMPOSITE_APP}/deployment-intent-groups"),
            collection(&DEPLOYMENT_INTENT_GROUP),
        )
        .route(DIG, item(&DEPLOYMENT_INTENT_GROUP))
        .route(&format!("{DIG}/intents"), collection(&GROUP_INTENT))
        .route(&format!("{DIG}/intents/{{intent}}"), item(&GROUP_INTENT))
        .route(
            &format!("{DIG}/generic-placement-intents"),
            collection(&GENERIC_PLACEMENT_INTENT),
        )
        .route(
            &format!("{DIG}/generic-placement-intents/{{gpi}}"),
            item(&GENERIC_PLACEMENT_INTENT),
        )
        .route(
            &format!("{DIG}/generic-placement-intents/{{gpi}}/app-intents"),
            collection(&APP_INTENT),
        )
        .route(
            &format!("{DIG}/generic-placement-intents/{{gpi}}/app-intents/{{app_intent}}"),
            item(&APP_INTENT),
        )
        .route(&format!("{DIG}/approve"), approve(dig))
        .route(&format!("{DIG}/instantiate"), instantiate(dig))
        .route(&format!("{DIG}/terminate"), terminate(dig))
        .route(&format!("{DIG}/stop"), stop(dig))
        .route(&format!("{DIG}/update"), update_dig())
        .route(&format!("{DIG}/rollback"), rollback())
        .route(&format!("{DIG}/resume"), resume())
        .route(&format!("{DIG}/migrate"), migrate())
        .route(&format!("{DIG}/status"), status_routes::status(dig))
        .route(
            &format!("{DIG}/status-collection-intents"),
            collection(&status_collector_routes::STATUS_COLLECTION_INTENT),
        )
        .route(
            &format!("{DIG}/status-collection-intents/{{status_collection_intent}}"),
            item(&status_collector_routes::STATUS_COLLECTION_INTENT),
        )
        .route(
            &format!("{DIG}/combined-status"),
            status_collector_routes::combined_status(),
        )
        .route(
            &format!("{DIG}/apps/{{app}}/resources/{{resource}}"),
            status_collector_routes::singleton_object(),
        )
        .route(
            "/v2/projects/{project}/status-collectors",
            collection(&status_collector_routes::STATUS_COLLECTOR),
        )
        .route(
            "/v2/projects/{project}/status-collectors/{status_collector}",
            item(&status_collector_routes::STATUS_COLLECTOR),
        )
        .route("/v2/cluster-providers", collection(&CLUSTER_PROVIDER))
        .route("/v2/cluster-providers/{provider}", item(&CLUSTER_PROVIDER))
        .route(
            "/v2/cluster-providers/{provider}/clusters",
            files::collection(&files::CLUSTER),
        )
        .route(CLUSTER, files::item(&files::CLUSTER))
        .route(&format!("{CLUSTER}/labels"), collection(&CLUSTER_LABEL))
        .route(&format!("{CLUSTER}/labels/{{label}}"), item(&CLUSTER_LABEL))
        .route(&format!("{CLUSTER}/networks"), collection(&NETWORK))
        .route(&format!("{CLUSTER}/networks/{{network}}"), item(&NETWORK))
        .route(
            &format!("{CLUSTER}/provider-networks"),
            collection(&PROVIDER_NETWORK),
        )
        .route(
            &format!("{CLUSTER}/provider-networks/{{provider_network}}"),
            item(&PROVIDER_NETWORK),
        )
        .route(&format!("{CLUSTER}/apply"), instantiate(networks))
        .route(&format!("{CLUSTER}/terminate"), terminate(networks))
        .route(&format!("{CLUSTER}/stop"), stop(networks))
        .route(&format!("{CLUSTER}/status"), status_routes::status(networks))
        .route("/v2/projects/{project}/logical-clouds", collection(&LC))
        .route(LOGICAL_CLOUD, item(&LC))
        .route(
            &format!("{LOGICAL_CLOUD}/cluster-references"),
            collection(&CLUSTER_REFERENCE),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/cluster-references/{{reference}}"),
            item(&CLUSTER_REFERENCE),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/cluster-references/{{reference}}/kubeconfig"),
            get(logical_cloud_routes::kubeconfig),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/user-permissions"),
            collection(&USER_PERMISSION),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/user-permissions/{{permission}}"),
            item(&USER_PERMISSION),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/cluster-quotas"),
            collection(&CLUSTER_QUOTA),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/cluster-quotas/{{quota}}"),
            item(&CLUSTER_QUOTA),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/kv-pairs"),
            collection(&LOGICAL_CLOUD_KV),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/kv-pairs/{{kv_pair}}"),
            item(&LOGICAL_CLOUD_KV),
        )
        .route(
            &format!("{LOGICAL_CLOUD}/instantiate"),
            instantiate(logical_cloud),
        )
        .route(&format!("{LOGICAL_CLOUD}/update"), update(logical_cloud))
        .route(&format!("{LOGICAL_CLOUD}/terminate"), terminate(logical_cloud))
        .route(&format!("{LOGICAL_CLOUD}/stop"), stop(logical_cloud))
        .route(
            &format!("{LOGICAL_CLOUD}/status"),
            status_routes::status(logical_cloud),
        )
        .route("/v2/dtc-controllers", collection(&DTC_CONTROLLER))
        .route("/v2/dtc-controllers/{controller}", item(&DTC_CONTROLLER))
        .route("/v2/status-configs", status_config_routes::status_configs())
        .route("/v2/status-configs/{name}", status_config_routes::status_config())
        .route(events_routes::EVENTS_PATH, get(events_routes::events))
        .route(
            auth::STREAM_TOKEN_PATH,
            axum::routing::post(auth::mint_stream_token),
        )
        .route(HEALTH_PATH, get(ops_routes::healthz))
        .route(READY_PATH, get(ops_routes::readyz))
        .route(METRICS_PATH, get(ops_routes::metrics))
        .route(ui::UI_PATH, get(ui::redirect))
        .route(ui::UI_PATH_SLASH, get(ui::index))
        .route(ui::UI_ASSET_ROUTE, get(ui::asset))
        .route(replicas_routes::REPLICAS_PATH, get(replicas_routes::list))
        .fallback(unknown_path)
        // Layers wrap from the inside out, so a request meets them bottom up: its latency timer first (labelled
        // with the route template, so refusals count too), then its id, then its log span (which logs each
        // answer's status and latency at INFO), then the browser guard (URI length,
        // origin, CORS preflight — browsers send it without credentials — and JSON errors), then authentication
        // and roles, then the body limit and the route.
        .layer(DefaultBodyLimit::max(max_body))
        .layer(from_fn_with_state(state.clone(), auth::guard))
        .layer(from_fn_with_state(state.clone(), browser::guard))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        )
        .layer(from_fn(request_id::assign))
        .layer(from_fn(telemetry::record_request))
        .with_state(state)
}

/// The log span of a request: its id ([`request_id`]), method, URI, HTTP version (as tower-http's default span)
/// and the user (filled in by the authentication guard).
fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let id = request
        .extensions()
        .get::<request_id::RequestId>()
        .map(|id| id.as_str().to_string())
        .unwrap_or_default();
    tracing::info_span!(
        "request",
        request_id = %id,
        method = %request.method(),
        uri = %request.uri(),
        version = ?request.version(),
        user = tracing::field::Empty,
    )
}

async fn unknown_path(uri: Uri) -> ApiError {
    ApiError::not_found(format!("no API path {}", uri.path()))
}
