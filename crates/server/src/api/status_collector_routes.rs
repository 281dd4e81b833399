//! Combined status (issue #17, seed 003): `/v2/projects/{p}/status-collectors[/{name}]` (CEL queries, every
//! expression compiled at create: a syntax error or unknown variable is a 400 naming the field, the expression and
//! the position), a DIG's `status-collection-intents[/{name}]` (served by the generic handlers, under the DIG's
//! modification rules like its other intents; a collector an intent names must exist, and cannot be deleted while
//! named: 409 naming the intent), `GET …/combined-status` and the singleton object GET
//! `…/apps/{app}/resources/{name+Kind}`.
//!
//! The combined-status index (emco-status) is kept current from the store's watch beside the status index. A
//! context is registered with it on its first combined-status GET (and again whenever the DIG's intents or their
//! collectors change): its current records are applied once, then every report that arrives recomputes only the
//! objects it concerns; a GET reads the tables.

use super::contract::{Content, Operation, QueryValues, query};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, LazyLock};

use axum::Json as JsonResponse;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use emco_appcontext::{Kind, ResourcePath};
use emco_model::status_collector::{StatusCollectionIntent, StatusCollector};
use emco_model::{ContextId, Gvk, validate_name};
use emco_status::combined::{
    CombinedFilter, Env, Registration, compile_collector, environment, reported_object, staged_object,
};
use serde_json::Value as Json;

use super::answer_body::AnswerBody;
use super::body::{PathNames, decode, path_names};
use super::resources::{Reference, ResourceKind, query_value};
use super::stream::{self, ComputeAnswer, PreparedAnswer, StreamRequest};
use crate::{ApiError, AppState};

/// The label the singleton GET puts on an object whose status return was asked for.
pub(crate) const EXECUTING_COUNT_LABEL: &str = "emco.io/executing-count";

/// The environment collectors are checked in at create (the index compiles them again in its own).
static CHECK_ENV: LazyLock<Arc<Env>> = LazyLock::new(environment);

/// The status collector kind: the seed's rules, then every expression compiled.
pub(crate) static STATUS_COLLECTOR: ResourceKind = ResourceKind {
    kind: Kind::StatusCollector,
    name: "StatusCollector",
    schema: |generator| <StatusCollector as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<StatusCollector>(raw, |collector| {
            collector
                .validate_status_collector()
                .map_err(|err| ApiError::invalid(err.to_string()))?;
            compile_collector(&CHECK_ENV, &collector.metadata.name, &collector.spec).map_err(|err| {
                ApiError::new(StatusCode::BAD_REQUEST, "InvalidExpression", err.to_string())
            })?;
            Ok(())
        })?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |_, _| Vec::new(),
    put_answer: super::resources::PutAnswer::CreatedOrReplaced,
    shown: super::resources::as_stored,
};

/// A DIG's status collection intent: the collectors it names (in the DIG's project) and its app must exist.
pub(crate) static STATUS_COLLECTION_INTENT: ResourceKind = ResourceKind {
    kind: Kind::StatusCollectionIntent,
    name: "StatusCollectionIntent",
    schema: |generator| <StatusCollectionIntent as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<StatusCollectionIntent>(raw, |intent| {
            intent
                .validate_status_collection_intent()
                .map_err(|err| ApiError::invalid(err.to_string()))
        })?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| {
        let mut references = Vec::new();
        if parents.len() < 3 {
            return references;
        }
        if let Some(app) = body["spec"]["app"].as_str() {
            let mut names = parents[..3].to_vec();
            names.push(app.to_string());
            references.push(Reference {
                field: "spec.app",
                path: ResourcePath::new(Kind::App, names),
            });
        }
        for collector in body["spec"]["statusCollectors"].as_array().into_iter().flatten() {
            if let Some(name) = collector.as_str() {
                references.push(Reference {
                    field: "spec.statusCollectors[]",
                    path: ResourcePath::new(
                        Kind::StatusCollector,
                        vec![parents[0].clone(), name.to_string()],
                    ),
                });
            }
        }
        references
    },
    put_answer: super::resources::PutAnswer::CreatedOrReplaced,
    shown: super::resources::as_stored,
};

/// `GET …/deployment-intent-groups/{dig}/combined-status`: the answer, or a stream of it (`Accept:
/// text/event-stream` or `watch=true`, as every status route; see [`super::stream`]).
pub(crate) fn combined_status() -> MethodRouter<AppState> {
    get(
        |State(state): State<AppState>, path: PathNames, request: StreamRequest| async move {
            let names = Arc::new(path_names(path)?);
            let pairs = Arc::new(request.pairs.clone());
            let computing = state.clone();
            let compute: ComputeAnswer = Arc::new(move || {
                let (state, names, pairs) = (computing.clone(), names.clone(), pairs.clone());
                Box::pin(async move { answer_combined(&state, &names, &pairs).await })
            });
            stream::answer_or_stream(&state, &request, compute).await
        },
    )
}

/// `GET …/deployment-intent-groups/{dig}/apps/{app}/resources/{name+Kind}`.
pub(crate) fn singleton_object() -> MethodRouter<AppState> {
    get(
        |state: State<AppState>, path: Result<Path<Vec<(String, String)>>, PathRejection>| {
            answer_object(state, path)
        },
    )
}

/// `name+Kind` split, or a 400 naming `what`.
fn split_resource(what: &str, value: &str) -> Result<(String, String), ApiError> {
    match value.split_once('+') {
        Some((name, kind)) if !name.is_empty() && !kind.is_empty() && !kind.contains('+') => {
            validate_name(what, name)?;
            Ok((name.to_string(), kind.to_string()))
        }
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "InvalidQuery",
            format!(
                "{what} '{}' is not <name>+<Kind> (e.g. firewall+Deployment)",
                emco_model::shown(value)
            ),
        )),
    }
}

/// The combined-status answer of the DIG named `names` for the query `pairs`, with the store revision it reflects.
async fn answer_combined(
    state: &AppState,
    names: &[String],
    pairs: &[(String, String)],
) -> Result<PreparedAnswer, ApiError> {
    if let Some((unknown, _)) = pairs
        .iter()
        .find(|(key, _)| !matches!(key.as_str(), "app" | "resource" | "collector"))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "InvalidQuery",
            format!(
                "unknown query parameter '{}'; the parameters are app, resource and collector",
                emco_model::shown(unknown)
            ),
        ));
    }
    let filter = CombinedFilter {
        app: query_value(pairs, "app").map(str::to_string),
        resource: query_value(pairs, "resource")
            .map(|value| split_resource("query parameter 'resource'", value))
            .transpose()?,
        collector: query_value(pairs, "collector").map(str::to_string),
    };
    let dig = ResourcePath::new(Kind::DeploymentIntentGroup, names.to_vec());
    // Everything written before this request (through any replica) is in the index before it answers.
    let revision = crate::status::StatusKeeper::request_revision(state.store()).await;
    state.catalog().get(&dig).await?;
    let (history, _) = state.catalog().state(&dig).await?;
    let context = history.last_context();
    if let Some(id) = context {
        register(state, &dig, id).await?;
    }
    if !state.status().caught_up(revision).await {
        tracing::warn!(
            revision,
            "status index is behind the store; answering combined status from what it has"
        );
    }
    let mut body = Vec::with_capacity(1024);
    state
        .status()
        .combined()
        .write_answer(context, &filter, &mut body)
        .map_err(ApiError::internal)?;
    Ok(PreparedAnswer {
        revision,
        body: AnswerBody::Bytes(body.into()),
    })
}

/// Registers the context with the combined index unless it is registered with the same intents and collectors:
/// compiles the collectors, reads the clusters' labels, then applies the context's current records.
async fn register(state: &AppState, dig: &ResourcePath, id: ContextId) -> Result<(), ApiError> {
    let intents: Vec<StatusCollectionIntent> = state
        .catalog()
        .list_as::<StatusCollectionIntent>(Kind::StatusCollectionIntent, dig.names())
        .await?
        .into_iter()
        .map(|(_, intent)| intent)
        .collect();
    let named: BTreeSet<&String> = intents
        .iter()
        .flat_map(|intent| intent.spec.status_collectors.iter())
        .collect();
    let mut collectors: Vec<StatusCollector> = Vec::with_capacity(named.len());
    for name in named {
        let path = ResourcePath::new(Kind::StatusCollector, vec![dig.names()[0].clone(), name.clone()]);
        if let Ok(collector) = state.catalog().get_as::<StatusCollector>(&path).await {
            collectors.push(collector);
        }
    }
    let fingerprint = serde_json::to_string(&(&intents, &collectors)).map_err(ApiError::internal)?;
    if state
        .status()
        .combined()
        .registration(id)
        .is_some_and(|known| known.fingerprint == fingerprint)
    {
        return Ok(());
    }
    let env = state.status().combined().env().clone();
    let mut compiled = HashMap::new();
    for collector in &collectors {
        match compile_collector(&env, &collector.metadata.name, &collector.spec) {
            Ok(done) => {
                compiled.insert(collector.metadata.name.clone(), Arc::new(done));
            }
            Err(err) => tracing::warn!(error = %err, "a stored status collector does not compile; skipped"),
        }
    }
    let meta = state.contexts().meta(id).await?;
    let clusters: BTreeSet<&String> = meta.apps.iter().flat_map(|app| app.clusters.iter()).collect();
    let mut cluster_labels = HashMap::new();
    for cluster in clusters {
        let Some((provider, name)) = cluster.split_once('+') else {
            continue;
        };
        let labels = state
            .catalog()
            .list(Kind::ClusterLabel, &[provider.to_string(), name.to_string()])
            .await
            .map(|entries| {
                entries
                    .iter()
                    .map(|entry| entry.path.name().to_string())
                    .collect()
            })
            .unwrap_or_else(|_| Vec::<String>::new());
        cluster_labels.insert(cluster.clone(), labels);
    }
    let records = state.contexts().clusters(id).await?;
    let mut combined = state.status().combined_mut();
    combined.register(
        id,
        Registration {
            intents,
            collectors: compiled,
            cluster_labels,
            fingerprint,
        },
    );
    for record in &records {
        combined.apply_record(id, record);
    }
    Ok(())
}

async fn answer_object(
    State(state): State<AppState>,
    path: Result<Path<Vec<(String, String)>>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path(pairs) = path.map_err(|err| ApiError::invalid(format!("bad URL: {err}")))?;
    let mut names = Vec::with_capacity(pairs.len());
    let mut resource = None;
    for (param, value) in pairs {
        if param == "resource" {
            resource = Some(split_resource("resource", &value)?);
        } else {
            validate_name(&param.replace('_', " "), &value)?;
            names.push(value);
        }
    }
    let (Some((name, kind)), Some(app)) = (resource, names.pop()) else {
        return Err(ApiError::invalid(
            "bad URL: expected …/apps/{app}/resources/{name+Kind}",
        ));
    };
    let dig = ResourcePath::new(Kind::DeploymentIntentGroup, names);
    state.catalog().get(&dig).await?;
    let (history, _) = state.catalog().state(&dig).await?;
    let Some(id) = history.last_context() else {
        return Err(ApiError::not_found(format!(
            "DeploymentIntentGroup '{}' has no AppContext: instantiate it first",
            dig.display_name()
        )));
    };
    let meta = state.contexts().meta(id).await?;
    let not_placed = || {
        ApiError::not_found(format!(
            "{kind} '{name}' of app '{app}' is not in DeploymentIntentGroup '{}' (AppContext {id})",
            dig.display_name()
        ))
    };
    let clusters = &meta
        .apps
        .iter()
        .find(|placed| placed.name == app)
        .ok_or_else(not_placed)?
        .clusters;
    let first = clusters.first().ok_or_else(not_placed)?;
    let record = state.contexts().cluster(id, &app, first).await?;
    let staged = record
        .resources
        .iter()
        .find(|r| r.name == name && r.kind == kind)
        .ok_or_else(not_placed)?;
    let manifest = staged.object();
    let mut object = staged_object(&manifest);
    let intents = state
        .catalog()
        .list_as::<StatusCollectionIntent>(Kind::StatusCollectionIntent, dig.names())
        .await?;
    let labels = manifest["metadata"]["labels"].clone();
    let requested = intents.iter().any(|(_, intent)| {
        intent.spec.want_singleton_reported_state && intent.selects(&app, &kind, &name, &labels)
    });
    if requested {
        singleton_return(&mut object, clusters.len(), || {
            let gvk: Gvk = staged.gvk();
            reported_object(record.heard_status().as_ref(), &gvk, &name)
                .and_then(|reported| reported.get("status"))
                .cloned()
        });
    }
    Ok(JsonResponse(object).into_response())
}

/// Seed 003's special case: the label with the number of clusters, and with exactly one, that cluster's status.
fn singleton_return(object: &mut Json, executing: usize, reported_status: impl FnOnce() -> Option<Json>) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let metadata = map
        .entry("metadata")
        .or_insert_with(|| Json::Object(serde_json::Map::new()));
    if let Some(metadata) = metadata.as_object_mut() {
        let labels = metadata
            .entry("labels")
            .or_insert_with(|| Json::Object(serde_json::Map::new()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(EXECUTING_COUNT_LABEL.into(), Json::String(executing.to_string()));
        }
    }
    if executing == 1
        && let Some(status) = reported_status()
    {
        map.insert("status".into(), status);
    }
}

/// `GET …/combined-status`, described.
pub(crate) fn combined_status_operation() -> Operation {
    Operation::get(
        "getCombinedStatus",
        "status",
        "The DIG's combined status: its status collectors' tables (seed 003)",
    )
    .query(&[
        query("app", "Only the objects of this app"),
        query("resource", "Only this object, as <name>+<Kind>")
            .taking(QueryValues::Pattern(super::contract::RESOURCE_KEY_PATTERN)),
        query("collector", "Only this status collector's results"),
        query(
            "watch",
            "true: a server-sent event stream of the answer as it changes",
        )
        .taking(QueryValues::OneOf(super::stream::WATCH_VALUES)),
        query("lastEventId", "With watch: resume after this event")
            .taking(QueryValues::Pattern(super::stream::EVENT_ID_PATTERN)),
        query("access_token", "With watch: a short-lived stream token"),
    ])
    .answer(
        200,
        "Per selected object, its collectors' results (an empty list before the DIG is instantiated)",
        Content::JsonOrStream("CombinedStatus", combined_schema),
    )
    .errors(&[(404, "The DIG does not exist")])
}

/// `GET …/apps/{app}/resources/{resource}`, described.
pub(crate) fn singleton_object_operation() -> Operation {
    Operation::get(
        "getSingletonObject",
        "status",
        "One object of the DIG as applied, with its status when one cluster reports it",
    )
    .answer(
        200,
        "The object",
        Content::Json("KubernetesObject", object_schema),
    )
    .errors(&[
        (400, "The resource is not name+Kind"),
        (404, "The DIG, app or object does not exist"),
    ])
}

fn combined_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "description": "Seed 003's combined status: per selected object, its app, the object, and each status collector's result.",
        "items": {
            "type": "object",
            "required": ["app", "resource", "results"],
            "properties": {
                "app": {"type": "string"},
                "resource": {"type": "object", "description": "The object's GVK and name."},
                "results": {"type": "array", "items": {"type": "object", "description": "A collector's name and its table."}}
            }
        }
    })
}

fn object_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object", "description": "A Kubernetes object as emco applied it."})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singleton_return_labels_and_returns_status_only_for_one_cluster() {
        let staged = serde_json::json!({"kind": "Deployment", "metadata": {"name": "fw"}, "spec": {}});
        let mut one = staged.clone();
        singleton_return(&mut one, 1, || Some(serde_json::json!({"readyReplicas": 1})));
        assert_eq!(one["metadata"]["labels"][EXECUTING_COUNT_LABEL], "1");
        assert_eq!(one["status"]["readyReplicas"], 1);
        let mut two = staged;
        singleton_return(&mut two, 2, || Some(serde_json::json!({"readyReplicas": 1})));
        assert_eq!(two["metadata"]["labels"][EXECUTING_COUNT_LABEL], "2");
        assert!(two.get("status").is_none());
    }

    #[test]
    fn resources_are_name_plus_kind() {
        assert_eq!(
            split_resource("resource", "fw+Deployment").unwrap(),
            ("fw".to_string(), "Deployment".to_string())
        );
        for bad in ["fw", "+Deployment", "fw+", "fw+a+b"] {
            assert!(split_resource("resource", bad).is_err(), "{bad}");
        }
    }
}
