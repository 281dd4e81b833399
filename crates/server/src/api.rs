//! The route table of EMCO's `/v2` API (`reference/emco.md` §5.1) and the glue every route shares.

mod agent_routes;
mod answer_body;
mod auth;
mod body;
mod browser;
mod contract;
mod events_routes;
mod files;
mod lifecycle_routes;
mod logical_cloud_routes;
mod ops_routes;
mod paging;
mod preconditions;
mod preview_routes;
mod replicas_routes;
mod resources;
mod status_collector_routes;
mod status_config_routes;
mod status_routes;
mod stream;
mod strict_json;
mod ui;

use std::sync::OnceLock;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::Uri;
use axum::http::header;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::get;
use tower_http::compression::CompressionLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::lifecycle::Subject;
use crate::request_id;
use crate::telemetry;
use crate::{ApiError, AppState};
use contract::{Content, Endpoint, Operation};

pub use browser::normalize_origin;
pub(crate) use ops_routes::{HEALTH_PATH, METRICS_PATH, READY_PATH};
pub(crate) use stream::Streams;

const COMPOSITE_APP: &str = "/v2/projects/{project}/composite-apps/{composite_app}/{version}";
const DIG: &str =
    "/v2/projects/{project}/composite-apps/{composite_app}/{version}/deployment-intent-groups/{dig}";
const CLUSTER: &str = "/v2/cluster-providers/{provider}/clusters/{cluster}";
const LOGICAL_CLOUD: &str = "/v2/projects/{project}/logical-clouds/{logical_cloud}";

/// Every route of the API, with the layers every request passes; the API document is built from the same table.
pub(crate) fn router(state: AppState) -> Router {
    let max_body = state.config().max_body_bytes;
    let mut router = Router::new();
    for endpoint in endpoints(state.config().token_auth.is_some()) {
        router = router.route(&endpoint.path, endpoint.handler);
    }
    router
        .fallback(unknown_path)
        // Layers wrap from the inside out, so a request meets them bottom up: its latency timer first (labelled
        // with the route template, so refusals count too), then compression, then its id, then its log span (which logs each
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
        // Answers are gzip-compressed when the client accepts it (a 3 MiB status answer of 1,000 clusters is a
        // few hundred KiB on the wire); event streams are not, so that no event waits in a compressor's buffer.
        .layer(CompressionLayer::new().gzip(true))
        .layer(from_fn(telemetry::record_request))
        .with_state(state)
}

/// The API document, as served: JSON and YAML.
struct Published {
    json: Bytes,
    yaml: Bytes,
}

impl Published {
    fn of(document: &serde_json::Value) -> Self {
        let json = serde_json::to_vec_pretty(document).unwrap_or_default();
        let yaml = serde_saphyr::to_string(document).unwrap_or_default();
        Self {
            json: Bytes::from(json),
            yaml: Bytes::from(yaml),
        }
    }
}

/// The served document of a server with (`auth`) or without bearer tokens: the same for every server of the
/// process, so it is built once, by the first request for it, never when a router is built.
fn published(auth: bool) -> &'static Published {
    static PUBLISHED: [OnceLock<Published>; 2] = [OnceLock::new(), OnceLock::new()];
    PUBLISHED[usize::from(auth)].get_or_init(|| Published::of(&document(auth)))
}

/// The API document: every route, described (`auth`: as a server with bearer tokens on describes itself).
pub(crate) fn document(auth: bool) -> serde_json::Value {
    contract::document(&endpoints(auth), auth)
}

/// The API document as a page to read (`docs/api.md`).
pub(crate) fn markdown() -> String {
    contract::markdown(&document(false))
}

/// The route table: every path, its handler and its operations, described (`auth`: of a server with bearer tokens
/// on, whose document says so).
fn endpoints(auth: bool) -> Vec<Endpoint> {
    use lifecycle_routes::{
        approve, instantiate, lifecycle_operation, migrate, resume, rollback, stop, terminate, update,
        update_dig,
    };
    use resources::{
        APP_DEPENDENCY, APP_INTENT, CLM_CONTROLLER, CLUSTER_KV, CLUSTER_LABEL, CLUSTER_PROVIDER,
        CLUSTER_QUOTA, CLUSTER_REFERENCE, CLUSTER_SYNC_OBJECT, COMPOSITE_APP as CA, COMPOSITE_PROFILE,
        CONTROLLER, DEPLOYMENT_INTENT_GROUP, DTC_CONTROLLER, GENERIC_K8S_INTENT, GENERIC_PLACEMENT_INTENT,
        GROUP_INTENT, HPA_CONSUMER, HPA_INTENT, HPA_REQUIREMENT, INBOUND_CLIENTS_ACCESS_INTENT,
        INBOUND_CLIENTS_INTENT, INBOUND_SERVER_INTENT, LOGICAL_CLOUD as LC, LOGICAL_CLOUD_KV, NETWORK,
        NETWORK_CONTROLLER_INTENT, PROJECT, PROVIDER_NETWORK, TRAFFIC_GROUP_INTENT, USER_PERMISSION,
        WORKLOAD_INTENT, WORKLOAD_INTERFACE, collection_endpoint as collection, item_endpoint as item,
    };
    use status_collector_routes::{STATUS_COLLECTION_INTENT, STATUS_COLLECTOR};
    let dig = Subject::DeploymentIntentGroup;
    let networks = Subject::ClusterNetworks;
    let logical_cloud = Subject::LogicalCloud;
    let apps = format!("{COMPOSITE_APP}/apps");
    let app = format!("{apps}/{{app}}");
    let profiles = format!("{COMPOSITE_APP}/composite-profiles/{{composite_profile}}/profiles");
    let gac_resources = format!("{DIG}/generic-k8s-intents/{{generic_k8s_intent}}/resources");
    let gac_customizations = format!("{gac_resources}/{{gac_resource}}/customizations");
    let workload_intents =
        format!("{DIG}/network-controller-intent/{{network_controller_intent}}/workload-intents");
    let hpa_intents = format!("{DIG}/hpa-intents");
    let hpa_consumers = format!("{hpa_intents}/{{hpa_intent}}/hpa-resource-consumers");
    let hpa_requirements = format!("{hpa_consumers}/{{hpa_consumer}}/resource-requirements");
    let traffic_groups = format!("{DIG}/traffic-group-intents");
    let servers = format!("{traffic_groups}/{{traffic_group_intent}}/inbound-intents");
    let clients_of = format!("{servers}/{{inbound_intent}}/clients");
    let access_points = format!("{clients_of}/{{clients_intent}}/access-points");
    let (projects, deployment, clusters, clouds, status, controllers, operations) = (
        "projects",
        "deployment",
        "clusters",
        "logical-clouds",
        "status",
        "controllers",
        "operations",
    );
    let lifecycle = |path: String, handler, id: &str, summary: &str, tag| {
        Endpoint::new(path, handler, vec![lifecycle_operation(id, summary, tag)])
    };
    vec![
        collection("/v2/controllers", &CONTROLLER, controllers),
        item("/v2/controllers/{controller}", &CONTROLLER, controllers),
        collection("/v2/projects", &PROJECT, projects),
        item("/v2/projects/{project}", &PROJECT, projects),
        collection("/v2/projects/{project}/composite-apps", &CA, projects),
        item(COMPOSITE_APP, &CA, projects),
        files::collection_endpoint(&apps, &files::APP, projects),
        files::item_endpoint(&app, &files::APP, projects),
        collection(format!("{app}/dependency"), &APP_DEPENDENCY, projects),
        item(
            format!("{app}/dependency/{{dependency}}"),
            &APP_DEPENDENCY,
            projects,
        ),
        collection(
            format!("{COMPOSITE_APP}/composite-profiles"),
            &COMPOSITE_PROFILE,
            projects,
        ),
        item(
            format!("{COMPOSITE_APP}/composite-profiles/{{composite_profile}}"),
            &COMPOSITE_PROFILE,
            projects,
        ),
        files::collection_endpoint(&profiles, &files::APP_PROFILE, projects),
        files::item_endpoint(
            format!("{profiles}/{{app_profile}}"),
            &files::APP_PROFILE,
            projects,
        ),
        collection(
            format!("{COMPOSITE_APP}/deployment-intent-groups"),
            &DEPLOYMENT_INTENT_GROUP,
            deployment,
        ),
        item(DIG, &DEPLOYMENT_INTENT_GROUP, deployment),
        collection(format!("{DIG}/intents"), &GROUP_INTENT, deployment),
        item(format!("{DIG}/intents/{{intent}}"), &GROUP_INTENT, deployment),
        collection(
            format!("{DIG}/generic-placement-intents"),
            &GENERIC_PLACEMENT_INTENT,
            deployment,
        ),
        item(
            format!("{DIG}/generic-placement-intents/{{gpi}}"),
            &GENERIC_PLACEMENT_INTENT,
            deployment,
        ),
        collection(
            format!("{DIG}/generic-placement-intents/{{gpi}}/app-intents"),
            &APP_INTENT,
            deployment,
        ),
        item(
            format!("{DIG}/generic-placement-intents/{{gpi}}/app-intents/{{app_intent}}"),
            &APP_INTENT,
            deployment,
        ),
        lifecycle(
            format!("{DIG}/approve"),
            approve(dig),
            "approveDeploymentIntentGroup",
            "Approve a deployment intent group (Created → Approved)",
            deployment,
        ),
        lifecycle(
            format!("{DIG}/instantiate"),
            instantiate(dig),
            "instantiateDeploymentIntentGroup",
            "Instantiate an approved deployment intent group on its clusters",
            deployment,
        ),
        lifecycle(
            format!("{DIG}/terminate"),
            terminate(dig),
            "terminateDeploymentIntentGroup",
            "Terminate: delete what it applied",
            deployment,
        ),
        lifecycle(
            format!("{DIG}/stop"),
            stop(dig),
            "stopDeploymentIntentGroup",
            "Stop the instantiation or termination in progress",
            deployment,
        ),
        Endpoint::new(
            format!("{DIG}/update"),
            update_dig(),
            vec![lifecycle_routes::update_operation()],
        ),
        Endpoint::new(
            format!("{DIG}/rollback"),
            rollback(),
            vec![lifecycle_routes::rollback_operation()],
        ),
        lifecycle(
            format!("{DIG}/resume"),
            resume(),
            "resumeDeploymentIntentGroup",
            "Resume a progressive rollout paused past its failure threshold",
            deployment,
        ),
        Endpoint::new(
            format!("{DIG}/migrate"),
            migrate(),
            vec![lifecycle_routes::migrate_operation()],
        ),
        Endpoint::new(
            format!("{DIG}/preview"),
            preview_routes::preview(),
            vec![preview_routes::preview_operation()],
        ),
        Endpoint::new(
            format!("{DIG}/status"),
            status_routes::status(dig),
            vec![status_routes::status_operation(
                "getDeploymentIntentGroupStatus",
                "The status of a deployment intent group (seed 000 and EMCO 22.x shapes)",
            )],
        ),
        collection(
            format!("{DIG}/generic-k8s-intents"),
            &GENERIC_K8S_INTENT,
            deployment,
        ),
        item(
            format!("{DIG}/generic-k8s-intents/{{generic_k8s_intent}}"),
            &GENERIC_K8S_INTENT,
            deployment,
        ),
        files::collection_endpoint(&gac_resources, &files::GAC_RESOURCE, deployment),
        files::item_endpoint(
            format!("{gac_resources}/{{gac_resource}}"),
            &files::GAC_RESOURCE,
            deployment,
        ),
        files::collection_endpoint(&gac_customizations, &files::GAC_CUSTOMIZATION, deployment),
        files::item_endpoint(
            format!("{gac_customizations}/{{customization}}"),
            &files::GAC_CUSTOMIZATION,
            deployment,
        ),
        collection(
            format!("{DIG}/network-controller-intent"),
            &NETWORK_CONTROLLER_INTENT,
            deployment,
        ),
        item(
            format!("{DIG}/network-controller-intent/{{network_controller_intent}}"),
            &NETWORK_CONTROLLER_INTENT,
            deployment,
        ),
        collection(&workload_intents, &WORKLOAD_INTENT, deployment),
        item(
            format!("{workload_intents}/{{workload_intent}}"),
            &WORKLOAD_INTENT,
            deployment,
        ),
        collection(
            format!("{workload_intents}/{{workload_intent}}/interfaces"),
            &WORKLOAD_INTERFACE,
            deployment,
        ),
        item(
            format!("{workload_intents}/{{workload_intent}}/interfaces/{{interface}}"),
            &WORKLOAD_INTERFACE,
            deployment,
        ),
        collection(&traffic_groups, &TRAFFIC_GROUP_INTENT, deployment),
        item(
            format!("{traffic_groups}/{{traffic_group_intent}}"),
            &TRAFFIC_GROUP_INTENT,
            deployment,
        ),
        collection(&servers, &INBOUND_SERVER_INTENT, deployment),
        item(
            format!("{servers}/{{inbound_intent}}"),
            &INBOUND_SERVER_INTENT,
            deployment,
        ),
        collection(&clients_of, &INBOUND_CLIENTS_INTENT, deployment),
        item(
            format!("{clients_of}/{{clients_intent}}"),
            &INBOUND_CLIENTS_INTENT,
            deployment,
        ),
        collection(&access_points, &INBOUND_CLIENTS_ACCESS_INTENT, deployment),
        item(
            format!("{access_points}/{{access_point}}"),
            &INBOUND_CLIENTS_ACCESS_INTENT,
            deployment,
        ),
        collection(&hpa_intents, &HPA_INTENT, deployment),
        item(format!("{hpa_intents}/{{hpa_intent}}"), &HPA_INTENT, deployment),
        collection(&hpa_consumers, &HPA_CONSUMER, deployment),
        item(
            format!("{hpa_consumers}/{{hpa_consumer}}"),
            &HPA_CONSUMER,
            deployment,
        ),
        collection(&hpa_requirements, &HPA_REQUIREMENT, deployment),
        item(
            format!("{hpa_requirements}/{{hpa_requirement}}"),
            &HPA_REQUIREMENT,
            deployment,
        ),
        collection(
            format!("{DIG}/status-collection-intents"),
            &STATUS_COLLECTION_INTENT,
            status,
        ),
        item(
            format!("{DIG}/status-collection-intents/{{status_collection_intent}}"),
            &STATUS_COLLECTION_INTENT,
            status,
        ),
        Endpoint::new(
            format!("{DIG}/combined-status"),
            status_collector_routes::combined_status(),
            vec![status_collector_routes::combined_status_operation()],
        ),
        Endpoint::new(
            format!("{DIG}/apps/{{app}}/resources/{{resource}}"),
            status_collector_routes::singleton_object(),
            vec![status_collector_routes::singleton_object_operation()],
        ),
        collection(
            "/v2/projects/{project}/status-collectors",
            &STATUS_COLLECTOR,
            status,
        ),
        item(
            "/v2/projects/{project}/status-collectors/{status_collector}",
            &STATUS_COLLECTOR,
            status,
        ),
        collection("/v2/cluster-providers", &CLUSTER_PROVIDER, clusters),
        item("/v2/cluster-providers/{provider}", &CLUSTER_PROVIDER, clusters),
        collection(
            "/v2/cluster-providers/{provider}/cluster-sync-objects",
            &CLUSTER_SYNC_OBJECT,
            clusters,
        ),
        item(
            "/v2/cluster-providers/{provider}/cluster-sync-objects/{sync_object}",
            &CLUSTER_SYNC_OBJECT,
            clusters,
        ),
        files::collection_endpoint(
            "/v2/cluster-providers/{provider}/clusters",
            &files::CLUSTER,
            clusters,
        ),
        files::item_endpoint(CLUSTER, &files::CLUSTER, clusters),
        Endpoint::new(
            agent_routes::AGENT_TOKEN_ROUTE,
            axum::routing::post(agent_routes::rotate),
            vec![agent_routes::rotate_operation()],
        ),
        Endpoint::new(
            agent_routes::DESIRED_STATE_ROUTE,
            get(agent_routes::desired_state),
            vec![agent_routes::desired_state_operation()],
        ),
        Endpoint::new(
            agent_routes::REPORTS_ROUTE,
            axum::routing::post(agent_routes::reports),
            vec![agent_routes::reports_operation()],
        ),
        collection(format!("{CLUSTER}/labels"), &CLUSTER_LABEL, clusters),
        item(format!("{CLUSTER}/labels/{{label}}"), &CLUSTER_LABEL, clusters),
        collection(format!("{CLUSTER}/kv-pairs"), &CLUSTER_KV, clusters),
        item(format!("{CLUSTER}/kv-pairs/{{kv_pair}}"), &CLUSTER_KV, clusters),
        collection(format!("{CLUSTER}/networks"), &NETWORK, clusters),
        item(format!("{CLUSTER}/networks/{{network}}"), &NETWORK, clusters),
        collection(
            format!("{CLUSTER}/provider-networks"),
            &PROVIDER_NETWORK,
            clusters,
        ),
        item(
            format!("{CLUSTER}/provider-networks/{{provider_network}}"),
            &PROVIDER_NETWORK,
            clusters,
        ),
        lifecycle(
            format!("{CLUSTER}/apply"),
            instantiate(networks),
            "applyClusterNetworkIntents",
            "Apply a cluster's network intents",
            clusters,
        ),
        lifecycle(
            format!("{CLUSTER}/terminate"),
            terminate(networks),
            "terminateClusterNetworkIntents",
            "Remove a cluster's network intents",
            clusters,
        ),
        lifecycle(
            format!("{CLUSTER}/stop"),
            stop(networks),
            "stopClusterNetworkIntents",
            "Stop the apply or removal in progress",
            clusters,
        ),
        Endpoint::new(
            format!("{CLUSTER}/status"),
            status_routes::status(networks),
            vec![status_routes::status_operation(
                "getClusterNetworkIntentsStatus",
                "The status of a cluster's network intents",
            )],
        ),
        collection("/v2/projects/{project}/logical-clouds", &LC, clouds),
        item(LOGICAL_CLOUD, &LC, clouds),
        collection(
            format!("{LOGICAL_CLOUD}/cluster-references"),
            &CLUSTER_REFERENCE,
            clouds,
        ),
        item(
            format!("{LOGICAL_CLOUD}/cluster-references/{{reference}}"),
            &CLUSTER_REFERENCE,
            clouds,
        ),
        Endpoint::new(
            format!("{LOGICAL_CLOUD}/cluster-references/{{reference}}/kubeconfig"),
            get(logical_cloud_routes::kubeconfig),
            vec![logical_cloud_routes::kubeconfig_operation()],
        ),
        collection(
            format!("{LOGICAL_CLOUD}/user-permissions"),
            &USER_PERMISSION,
            clouds,
        ),
        item(
            format!("{LOGICAL_CLOUD}/user-permissions/{{permission}}"),
            &USER_PERMISSION,
            clouds,
        ),
        collection(format!("{LOGICAL_CLOUD}/cluster-quotas"), &CLUSTER_QUOTA, clouds),
        item(
            format!("{LOGICAL_CLOUD}/cluster-quotas/{{quota}}"),
            &CLUSTER_QUOTA,
            clouds,
        ),
        collection(format!("{LOGICAL_CLOUD}/kv-pairs"), &LOGICAL_CLOUD_KV, clouds),
        item(
            format!("{LOGICAL_CLOUD}/kv-pairs/{{kv_pair}}"),
            &LOGICAL_CLOUD_KV,
            clouds,
        ),
        lifecycle(
            format!("{LOGICAL_CLOUD}/instantiate"),
            instantiate(logical_cloud),
            "instantiateLogicalCloud",
            "Instantiate a logical cloud on its clusters",
            clouds,
        ),
        lifecycle(
            format!("{LOGICAL_CLOUD}/update"),
            update(logical_cloud),
            "updateLogicalCloud",
            "Apply a logical cloud's changed references, permissions, quotas and pairs",
            clouds,
        ),
        lifecycle(
            format!("{LOGICAL_CLOUD}/terminate"),
            terminate(logical_cloud),
            "terminateLogicalCloud",
            "Terminate a logical cloud",
            clouds,
        ),
        lifecycle(
            format!("{LOGICAL_CLOUD}/stop"),
            stop(logical_cloud),
            "stopLogicalCloud",
            "Stop the instantiation or termination in progress",
            clouds,
        ),
        Endpoint::new(
            format!("{LOGICAL_CLOUD}/status"),
            status_routes::status(logical_cloud),
            vec![status_routes::status_operation(
                "getLogicalCloudStatus",
                "The status of a logical cloud",
            )],
        ),
        collection("/v2/dtc-controllers", &DTC_CONTROLLER, controllers),
        item("/v2/dtc-controllers/{controller}", &DTC_CONTROLLER, controllers),
        collection("/v2/clm-controllers", &CLM_CONTROLLER, controllers),
        item("/v2/clm-controllers/{controller}", &CLM_CONTROLLER, controllers),
        status_config_routes::collection_endpoint("/v2/status-configs"),
        resources::item_endpoint(
            "/v2/status-configs/{name}",
            &status_config_routes::STATUS_CONFIG,
            status,
        ),
        Endpoint::new(
            events_routes::EVENTS_PATH,
            get(events_routes::events),
            vec![events_routes::events_operation()],
        ),
        Endpoint::new(
            auth::STREAM_TOKEN_PATH,
            axum::routing::post(auth::mint_stream_token),
            vec![auth::stream_token_operation()],
        ),
        Endpoint::new(
            HEALTH_PATH,
            get(ops_routes::healthz),
            vec![ops_routes::health_operation()],
        ),
        Endpoint::new(
            READY_PATH,
            get(ops_routes::readyz),
            vec![ops_routes::ready_operation()],
        ),
        Endpoint::new(
            METRICS_PATH,
            get(ops_routes::metrics),
            vec![ops_routes::metrics_operation()],
        ),
        Endpoint::new(ui::UI_PATH, get(ui::redirect), vec![ui::redirect_operation()]),
        Endpoint::new(ui::UI_PATH_SLASH, get(ui::index), vec![ui::index_operation()]),
        Endpoint::new(ui::UI_ASSET_ROUTE, get(ui::asset), vec![ui::asset_operation()]),
        Endpoint::new(
            replicas_routes::REPLICAS_PATH,
            get(replicas_routes::list),
            vec![replicas_routes::list_operation()],
        ),
        Endpoint::new(
            contract::OPENAPI_JSON_PATH,
            get(move || async move {
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    published(auth).json.clone(),
                )
            }),
            vec![
                Operation::get("getOpenApiJson", operations, "This document, as JSON").answer(
                    200,
                    "The OpenAPI 3.1 document",
                    Content::Other("application/json"),
                ),
            ],
        ),
        Endpoint::new(
            contract::OPENAPI_YAML_PATH,
            get(move || async move {
                (
                    [(header::CONTENT_TYPE, "application/yaml")],
                    published(auth).yaml.clone(),
                )
            }),
            vec![
                Operation::get("getOpenApiYaml", operations, "This document, as YAML").answer(
                    200,
                    "The OpenAPI 3.1 document",
                    Content::Other("application/yaml"),
                ),
            ],
        ),
    ]
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
