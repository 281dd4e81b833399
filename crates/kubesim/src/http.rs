//! The HTTP face of one cluster: discovery, OpenAPI, CRUD with every patch type, subresources, lists with
//! selectors and pagination, and watches. JSON only; every error is a `metav1.Status`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Value as Json, json};

use crate::catalog::ResourceType;
use crate::cluster::{ClusterShared, ServedRequest};
use crate::error::{ApiError, success_status};
use crate::request::{Query, Route, Target, route};
use crate::selector::{FieldSelector, LabelSelector};
use crate::store::{DeleteOptions, PatchType, Stored, WriteOptions};
use crate::{meta, table, watch};

const AGGREGATED_V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const AGGREGATED_V2BETA1: &str = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

/// The router of one cluster.
pub fn router(cluster: Arc<ClusterShared>) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(cluster)
}

fn json_response(status: StatusCode, value: &impl serde::Serialize) -> Response {
    match serde_json::to_string(value) {
        Ok(text) => (status, [(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Err(err) => ApiError::internal(format!("cannot write the answer: {err}")).into_response(),
    }
}

fn ok(value: &impl serde::Serialize) -> Response {
    json_response(StatusCode::OK, value)
}

/// The whole API of a cluster.
async fn handle(
    State(cluster): State<Arc<ClusterShared>>,
    request: axum::http::request::Parts,
    body: Bytes,
) -> Response {
    let axum::http::request::Parts {
        method,
        version,
        uri,
        headers,
        extensions,
        ..
    } = request;
    let peer = extensions.get::<crate::auth::PeerIdentity>();
    let in_cluster = extensions.get::<crate::server::InCluster>();
    tracing::debug!(cluster = %cluster.name, %method, uri = %uri, content_type = ?headers.get(header::CONTENT_TYPE), accept = ?headers.get(header::ACCEPT), "request");
    let query = Query::parse(uri.query());
    cluster.log_request(ServedRequest {
        at: std::time::Instant::now(),
        method: method.to_string(),
        path: uri.path().to_string(),
        watch: query.flag("watch"),
        in_cluster: in_cluster.is_some(),
        version,
    });
    let faults = cluster.faults();
    if faults.latency_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(faults.latency_ms)).await;
    }
    let route = route(uri.path());
    if !matches!(route, Route::Health) && cluster.inject_error(&faults) {
        let retry_after = faults.retry_after_seconds.filter(|_| faults.error_code != 500);
        let mut error = match faults.error_code {
            429 => ApiError::too_many_requests(),
            500 => ApiError::internal("injected fault: internal error"),
            _ => {
                ApiError::unavailable("injected fault: the server is currently unable to handle the request")
            }
        };
        if let Some(seconds) = retry_after {
            error.details = Some(json!({"retryAfterSeconds": seconds}));
        }
        let mut response = error.into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
        }
        return response;
    }
    let user = match crate::auth::authenticate(&cluster, peer, &headers)
        .and_then(|user| crate::auth::impersonate(&cluster, user, &headers))
    {
        Ok(user) => user,
        Err(err) => return err.into_response(),
    };
    if let Err(err) = crate::rbac::authorize(&cluster, &user, &method, &route, &query, uri.path()) {
        return err.into_response();
    }
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("*/*")
        .to_string();
    if !accept.split(',').any(|t| {
        let t = t.trim();
        t.starts_with("application/json")
            || t.starts_with("*/*")
            || t.starts_with("application/*")
            || t.is_empty()
    }) {
        return ApiError::not_acceptable(format!(
            "only the following media types are accepted: application/json (asked for {accept})"
        ))
        .into_response();
    }
    match route {
        Route::Version => {
            let version = cluster.config.kubernetes_version;
            ok(
                &json!({"major": "1", "minor": version.minor().to_string(), "gitVersion": version.git_version(),
                "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"}),
            )
        }
        Route::Health => (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], "ok").into_response(),
        Route::CoreVersions => {
            if let Some(content_type) = aggregated(&accept, cluster.config.kubernetes_version) {
                let doc = cluster
                    .store()
                    .catalog
                    .aggregated(true, content_type_api_version(content_type));
                return (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, content_type)],
                    doc.to_string(),
                )
                    .into_response();
            }
            ok(
                &json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
            )
        }
        Route::Groups => {
            if let Some(content_type) = aggregated(&accept, cluster.config.kubernetes_version) {
                let doc = cluster
                    .store()
                    .catalog
                    .aggregated(false, content_type_api_version(content_type));
                return (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, content_type)],
                    doc.to_string(),
                )
                    .into_response();
            }
            ok(&cluster.store().catalog.group_list())
        }
        Route::Group(group) => match cluster.store().catalog.group(&group) {
            Some(doc) => ok(&doc),
            None => ApiError::not_found_message(format!(
                "the server could not find the requested resource (get {group})"
            ))
            .into_response(),
        },
        Route::Resources(group, version) => {
            let store = cluster.store();
            if (group.is_empty() && version == "v1") || store.catalog.has_group_version(&group, &version) {
                ok(&store.catalog.resource_list(&group, &version))
            } else {
                ApiError::not_found_message("the server could not find the requested resource")
                    .into_response()
            }
        }
        Route::OpenApiIndex => ok(&cluster.store().catalog.openapi_index()),
        Route::OpenApiDocument(group, version) => {
            match cluster.store().catalog.openapi_document(&group, &version) {
                Some(doc) => ok(&doc),
                None => ApiError::not_found_message("the server could not find the requested resource")
                    .into_response(),
            }
        }
        Route::Resource(target) => match resource(
            &cluster,
            &method,
            target,
            &query,
            &headers,
            &accept,
            &body,
            &faults.reject_kinds,
            &user,
        )
        .await
        {
            Ok(response) => response,
            Err(err) => err.into_response(),
        },
        Route::Unknown => ApiError::not_found_message(format!(
            "the server could not find the requested resource ({})",
            uri.path()
        ))
        .into_response(),
    }
}

/// The aggregated discovery format to answer in: the first of `accept` that the cluster's release serves
/// (`apidiscovery.k8s.io/v2beta1` from 1.26, `v2` from 1.30); none for the classic documents (any other media type
/// first, or an older release, as clients fall back to them).
fn aggregated(accept: &str, version: crate::KubernetesVersion) -> Option<&'static str> {
    for media_type in accept.split(',') {
        if !(media_type.contains("g=apidiscovery.k8s.io") && media_type.contains("as=APIGroupDiscoveryList"))
        {
            return None;
        }
        if media_type.contains("v=v2beta1") {
            if version.minor() >= 26 {
                return Some(AGGREGATED_V2BETA1);
            }
        } else if media_type.contains("v=v2") && version.minor() >= 30 {
            return Some(AGGREGATED_V2);
        }
    }
    None
}

fn content_type_api_version(content_type: &str) -> &'static str {
    if content_type.contains("v2beta1") {
        "apidiscovery.k8s.io/v2beta1"
    } else {
        "apidiscovery.k8s.io/v2"
    }
}

fn parse_body(headers: &HeaderMap, body: &Bytes) -> Result<Json, ApiError> {
    if body.is_empty() {
        return Ok(Json::Null);
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    if content_type.contains("protobuf") {
        return crate::protobuf::decode(body).map_err(|err| {
            ApiError::unsupported_media_type(format!(
                "{err} (kubesim reads JSON, YAML and protobuf for Namespace, ConfigMap and Secret only)"
            ))
        });
    }
    if content_type.contains("yaml") {
        let text = std::str::from_utf8(body).map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
        serde_saphyr::from_str(text)
            .map_err(|err| ApiError::bad_request(format!("error decoding YAML: {err}")))
    } else {
        serde_json::from_slice(body).map_err(|err| {
            ApiError::bad_request(format!("couldn't get version/kind; json parse error: {err}"))
        })
    }
}

fn field_manager(query: &Query, headers: &HeaderMap) -> Option<String> {
    if let Some(manager) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        return Some(manager.to_string());
    }
    let agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok())?;
    let name = agent.split('/').next().unwrap_or(agent).trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Serves an object at the version it was asked for (custom resources, and built-in types served at several
/// versions, share storage across versions).
pub(crate) fn at_version<'a>(t: &ResourceType, object: &'a Json) -> std::borrow::Cow<'a, Json> {
    let api_version = t.api_version();
    if !t.shared_storage || object["apiVersion"].as_str() == Some(api_version.as_str()) {
        // The object as stored is the answer: written out from the store's own tree, not from a copy of it.
        return std::borrow::Cow::Borrowed(object);
    }
    let mut copy = object.clone();
    copy["apiVersion"] = json!(api_version);
    std::borrow::Cow::Owned(copy)
}

#[allow(clippy::too_many_arguments)]
async fn resource(
    cluster: &Arc<ClusterShared>,
    method: &Method,
    target: Target,
    query: &Query,
    headers: &HeaderMap,
    accept: &str,
    body: &Bytes,
    reject_kinds: &[String],
    user: &crate::auth::UserInfo,
) -> Result<Response, ApiError> {
    let t = cluster
        .store()
        .catalog
        .find(&target.group, &target.version, &target.plural)
        .ok_or_else(|| ApiError::not_found_message("the server could not find the requested resource"))?;
    let namespace = target.namespace.clone().unwrap_or_default();
    if t.namespaced && target.name.is_some() && namespace.is_empty() {
        return Err(ApiError::not_found_message(
            "the server could not find the requested resource",
        ));
    }
    let writes = matches!(*method, Method::POST | Method::PUT | Method::PATCH);
    if writes && reject_kinds.iter().any(|kind| *kind == t.kind) {
        return Err(ApiError::forbidden(format!(
            "admission webhook \"reject.kubesim.io\" denied the request: kind {} is rejected on this cluster",
            t.kind
        )));
    }
    if t.create_only {
        return match (&target.name, method, target.subresource.as_deref()) {
            (None, &Method::POST, None) => {
                let body = parse_body(headers, body)?;
                let store = cluster.store();
                let answer = crate::access::review(&store, &t, user, target.namespace.as_deref(), &body)?;
                Ok(json_response(StatusCode::CREATED, &answer))
            }
            _ => Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            )),
        };
    }
    let options = WriteOptions {
        dry_run: query.get("dryRun") == Some("All"),
        manager: field_manager(query, headers),
        force: query.flag("force"),
        keep_status: false,
    };
    match (&target.name, method.clone(), target.subresource.as_deref()) {
        (None, Method::GET, None) => {
            if query.flag("watch") {
                watch::serve(cluster.clone(), t, target.namespace.clone(), query, accept).await
            } else {
                list(cluster, &t, target.namespace.as_deref(), query, accept)
            }
        }
        (None, Method::POST, None) => {
            let mut object = parse_body(headers, body)?;
            if is_certificate_signing_request(&t) {
                crate::csr::admit_create(&mut object, user)?;
            }
            let mut store = cluster.store();
            let created = store.create(&t, target.namespace.as_deref(), object, &options)?;
            drop(store);
            Ok(json_response(StatusCode::CREATED, &at_version(&t, &created)))
        }
        (None, Method::DELETE, None) => {
            let labels = LabelSelector::parse(query.get("labelSelector").unwrap_or_default())?;
            let fields = FieldSelector::parse(query.get("fieldSelector").unwrap_or_default(), &t.kind)?;
            let delete_options = delete_options(query, headers, body)?;
            let mut store = cluster.store();
            let mut deleted = Vec::new();
            for object in store.list(&t.key(), target.namespace.as_deref()) {
                if labels.matches(&object) && fields.matches(&object) {
                    let outcome =
                        store.delete(&t, meta::namespace(&object), meta::name(&object), &delete_options)?;
                    deleted.push(at_version(&t, &outcome.object).into_owned());
                }
            }
            let revision = store.revision();
            Ok(ok(
                &json!({"kind": format!("{}List", t.kind), "apiVersion": t.api_version(), "metadata": {"resourceVersion": revision.to_string()}, "items": deleted}),
            ))
        }
        (Some(name), Method::GET, None | Some("status")) => {
            let object = cluster
                .store()
                .get(&t.key(), &namespace, name)
                .ok_or_else(|| ApiError::not_found(&t, name))?;
            if table::wants_table(accept) {
                let rv = object["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                return Ok(ok(&table::table(&t, &[&object], &rv, None)));
            }
            Ok(ok(&at_version(&t, &object)))
        }
        (Some(name), Method::PUT, sub @ (None | Some("status"))) => {
            check_subresource(&t, sub)?;
            let object = parse_body(headers, body)?;
            let updated = cluster
                .store()
                .update(&t, &namespace, name, object, sub.is_some(), &options)?;
            Ok(ok(&at_version(&t, &updated)))
        }
        (Some(name), Method::PATCH, sub @ (None | Some("status"))) => {
            check_subresource(&t, sub)?;
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let patch_type = PatchType::from_content_type(content_type).ok_or_else(|| {
                ApiError::unsupported_media_type(format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type})"))
            })?;
            let mut patch = parse_body(headers, body)?;
            let mut store = cluster.store();
            // A server-side apply that creates a CertificateSigningRequest is a create: the request is checked
            // and stamped with its requester as a POST's is.
            if patch_type == PatchType::Apply
                && sub.is_none()
                && is_certificate_signing_request(&t)
                && store.get(&t.key(), &namespace, name).is_none()
            {
                crate::csr::admit_create(&mut patch, user)?;
            }
            let (object, created) =
                store.patch(&t, &namespace, name, patch_type, &patch, sub.is_some(), &options)?;
            drop(store);
            Ok(json_response(
                if created {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                },
                &at_version(&t, &object),
            ))
        }
        (Some(name), Method::DELETE, None) => {
            let delete_options = delete_options(query, headers, body)?;
            let outcome = cluster.store().delete(&t, &namespace, name, &delete_options)?;
            let returns_object = t.custom
                || (t.group.is_empty()
                    && matches!(t.kind.as_str(), "Pod" | "Service" | "Node" | "Namespace"));
            if outcome.removed && !returns_object {
                return Ok(ok(&success_status(&t, name, meta::uid(&outcome.object))));
            }
            Ok(ok(&at_version(&t, &outcome.object)))
        }
        (Some(name), Method::PUT, Some("approval")) if is_certificate_signing_request(&t) => {
            let object = parse_body(headers, body)?;
            let updated = crate::csr::approve(
                &mut cluster.store(),
                cluster.authority.as_ref(),
                &t,
                name,
                &object,
            )?;
            Ok(ok(&at_version(&t, &updated)))
        }
        (Some(name), method, Some("scale")) if t.scale => {
            scale(cluster, &t, &namespace, name, &method, headers, body, &options)
        }
        (Some(_), _, Some(sub)) => Err(ApiError::not_found_message(format!(
            "the server could not find the requested resource ({sub})"
        ))),
        _ => Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({method})"
        ))),
    }
}

fn is_certificate_signing_request(t: &ResourceType) -> bool {
    t.group == "certificates.k8s.io" && t.plural == "certificatesigningrequests"
}

fn check_subresource(t: &ResourceType, subresource: Option<&str>) -> Result<(), ApiError> {
    if subresource == Some("status") && !t.status {
        return Err(ApiError::not_found_message(format!(
            "the server could not find the requested resource ({}/status)",
            t.plural
        )));
    }
    Ok(())
}

fn delete_options(query: &Query, headers: &HeaderMap, body: &Bytes) -> Result<DeleteOptions, ApiError> {
    let body = parse_body(headers, body)?;
    let text = |key: &str| {
        body.get(key)
            .and_then(Json::as_str)
            .map(String::from)
            .or_else(|| query.get(key).map(String::from))
    };
    Ok(DeleteOptions {
        propagation: text("propagationPolicy").or_else(|| {
            match body.get("orphanDependents").and_then(Json::as_bool) {
                Some(true) => Some("Orphan".to_string()),
                _ => None,
            }
        }),
        grace_period_seconds: body
            .get("gracePeriodSeconds")
            .and_then(Json::as_i64)
            .or_else(|| query.get("gracePeriodSeconds").and_then(|g| g.parse().ok())),
        uid: body["preconditions"]["uid"].as_str().map(String::from),
        resource_version: body["preconditions"]["resourceVersion"]
            .as_str()
            .map(String::from),
        dry_run: body["dryRun"]
            .as_array()
            .is_some_and(|d| d.iter().any(|v| v == "All"))
            || query.get("dryRun") == Some("All"),
    })
}

/// A continue token: the revision of the first page and the last key served.
fn encode_continue(revision: u64, last: &(String, String)) -> String {
    let token = json!({"rv": revision, "ns": last.0, "name": last.1});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

fn decode_continue(token: &str) -> Result<(u64, (String, String)), ApiError> {
    let bad = || ApiError::bad_request(format!("continue key is not valid: {token}"));
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let value: Json = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let revision = value["rv"].as_u64().ok_or_else(bad)?;
    Ok((
        revision,
        (
            value["ns"].as_str().unwrap_or_default().to_string(),
            value["name"].as_str().unwrap_or_default().to_string(),
        ),
    ))
}

fn list(
    cluster: &Arc<ClusterShared>,
    t: &Arc<ResourceType>,
    namespace: Option<&str>,
    query: &Query,
    accept: &str,
) -> Result<Response, ApiError> {
    let labels = LabelSelector::parse(query.get("labelSelector").unwrap_or_default())?;
    let fields = FieldSelector::parse(query.get("fieldSelector").unwrap_or_default(), &t.kind)?;
    if query.get("sendInitialEvents").is_some() {
        return Err(ApiError::invalid_message(
            "sendInitialEvents: Forbidden: sendInitialEvents is allowed only with watch=true",
        ));
    }
    if query.get("resourceVersionMatch").is_some()
        && query.get("resourceVersion").unwrap_or_default().is_empty()
    {
        return Err(ApiError::invalid_message(
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ));
    }
    let limit: usize = query
        .get("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let start = match query.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => Some(decode_continue(token)?),
        None => None,
    };
    let store = cluster.store();
    let revision = store.revision();
    if query.get("resourceVersionMatch") == Some("Exact")
        && query.get("resourceVersion").and_then(|rv| rv.parse::<u64>().ok()) != Some(revision)
    {
        return Err(ApiError::expired(
            "too old resource version: the exact revision is no longer available",
        ));
    }
    let all = store.list_stored(&t.key(), namespace);
    drop(store);
    // Selected on what the store keeps for selectors; only the objects sent are parsed.
    let mut selected: Vec<&Stored> = Vec::new();
    let mut next = None;
    for object in &all {
        let part = object.part();
        let key = (meta::namespace(part).to_string(), meta::name(part).to_string());
        if let Some((_, after)) = &start
            && key <= *after
        {
            continue;
        }
        if !(labels.matches(part) && fields.matches(part)) {
            continue;
        }
        if selected.len() == limit {
            next = selected.last().map(|o| {
                let part = o.part();
                (meta::namespace(part).to_string(), meta::name(part).to_string())
            });
            break;
        }
        selected.push(object);
    }
    let selected: Vec<Arc<Json>> = selected.into_iter().map(Stored::tree).collect();
    let list_revision = start.as_ref().map_or(revision, |(rv, _)| *rv);
    let continue_token = next.map(|last| encode_continue(list_revision, &last));
    if table::wants_table(accept) {
        let objects: Vec<&Json> = selected.iter().map(|o| o.as_ref()).collect();
        return Ok(ok(&table::table(
            t,
            &objects,
            &list_revision.to_string(),
            continue_token.as_deref(),
        )));
    }
    let mut metadata = json!({"resourceVersion": list_revision.to_string()});
    if let Some(token) = continue_token {
        metadata["continue"] = json!(token);
    }
    let answer = ListAnswer {
        kind: format!("{}List", t.kind),
        api_version: t.api_version(),
        metadata,
        items: selected.iter().map(|o| at_version(t, o)).collect(),
    };
    Ok(ok(&answer))
}

/// A list's answer, written from the listed objects themselves (no copy of each for the list's tree).
#[derive(serde::Serialize)]
struct ListAnswer<'a> {
    kind: String,
    #[serde(rename = "apiVersion")]
    api_version: String,
    metadata: Json,
    items: Vec<std::borrow::Cow<'a, Json>>,
}

#[allow(clippy::too_many_arguments)]
fn scale(
    cluster: &Arc<ClusterShared>,
    t: &Arc<ResourceType>,
    namespace: &str,
    name: &str,
    method: &Method,
    headers: &HeaderMap,
    body: &Bytes,
    options: &WriteOptions,
) -> Result<Response, ApiError> {
    let scale_of = |object: &Json| {
        let selector = object["spec"]["selector"]["matchLabels"]
            .as_object()
            .map(|labels| {
                labels
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"], "uid": object["metadata"]["uid"],
                         "resourceVersion": object["metadata"]["resourceVersion"], "creationTimestamp": object["metadata"]["creationTimestamp"]},
            "spec": {"replicas": object["spec"]["replicas"].as_i64().unwrap_or(1)},
            "status": {"replicas": object["status"]["replicas"].as_i64().unwrap_or(0), "selector": selector}})
    };
    let mut store = cluster.store();
    let object = store
        .get(&t.key(), namespace, name)
        .ok_or_else(|| ApiError::not_found(t, name))?;
    if *method == Method::GET {
        return Ok(ok(&scale_of(&object)));
    }
    let mut scale = scale_of(&object);
    let patch = parse_body(headers, body)?;
    match *method {
        Method::PUT => scale = patch,
        Method::PATCH => {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            match PatchType::from_content_type(content_type) {
                Some(PatchType::Json) => crate::patch::json_patch(&mut scale, &patch)
                    .map_err(|err| ApiError::invalid_message(err.to_string()))?,
                Some(_) => scale = crate::patch::merge_patched(&scale, &patch),
                None => {
                    return Err(ApiError::unsupported_media_type(format!(
                        "unsupported patch type {content_type}"
                    )));
                }
            }
        }
        _ => {
            return Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ));
        }
    }
    let replicas = scale["spec"]["replicas"]
        .as_i64()
        .ok_or_else(|| ApiError::bad_request("Scale spec.replicas is required"))?;
    let updated = store
        .patch(
            t,
            namespace,
            name,
            PatchType::Merge,
            &json!({"spec": {"replicas": replicas}}),
            false,
            options,
        )?
        .0;
    Ok(ok(&scale_of(&updated)))
}
