//! `GET …/status` of every resource with a lifecycle — a DIG, a cluster's network intents, a logical cloud: the
//! status query of seeds 000/001 and EMCO 22.x, answered from the in-memory index after it has caught up with every
//! write made before the request. Clusters not heard from within [`crate::ServerConfig::status_grace`] are shown
//! as stale: the answer is judged at the time of the request. `?readiness` ends the answer with the state object
//! (seed 002); [`with_state`] adds the same object under `state` to the GET of the resource itself.
//! With `Accept: text/event-stream` or `watch=true` the answer is streamed as it changes ([`super::stream`]): the
//! handler hands the stream a function computing the answer bytes, which is all another status route needs.

use super::contract::{Content, Operation, QueryParameter, QueryValues, query, repeatable};
use std::collections::HashMap;

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{MethodRouter, get};
use emco_appcontext::{ClusterRecord, Kind, ResourcePath, ResourceRecord, StoredCluster};
use emco_k8s::bundle::find_object;
use emco_model::StateInfo;
use emco_model::{ContextId, DeploymentIntentGroup};
use emco_status::{
    ContextEntry, DetailSource, DigIdentity, Freshness, Measure, Output, ResourceEntry, StatusQuery,
    StatusRequest, Subject as StatusSubject, SubjectKind, parse_query_for, write_status,
};
use serde_json::Value as Json;

use super::answer_body::{AnswerBody, AnswerWriter};
use super::body::{PathNames, path_names};
use super::stream::{self, ComputeAnswer, PreparedAnswer, StreamRequest};
use crate::lifecycle::Subject;
use crate::{ApiError, AppState};

/// The (app, cluster) records a detail query needs: their bytes, read before the answer is written, each decoded
/// when the answer reaches it. The answer asks for an (app, cluster)'s resources one after another, so one decoded
/// record is kept: a detail answer holds every record's bytes but one record's tree (decoding all of them first
/// held 100 MB of trees at 1,000 clusters × 30 resources).
struct Records {
    stored: HashMap<(String, String), StoredCluster>,
    decoded: Mutex<Option<Decoded>>,
}

/// The record [`Records`] decoded last, by app and cluster, with the cluster's status as a tree (`None` when
/// it failed to decode).
type Decoded = ((String, String), Option<(ClusterRecord, Option<Json>)>);

impl Records {
    fn new(stored: HashMap<(String, String), StoredCluster>) -> Self {
        Self {
            stored,
            decoded: Mutex::new(None),
        }
    }
}

impl DetailSource for Records {
    fn detail(&self, app: &str, cluster: &str, resource: &ResourceEntry, measure: Measure) -> Option<Json> {
        let mut decoded = self
            .decoded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let current = decoded
            .as_ref()
            .is_some_and(|((a, c), _)| a == app && c == cluster);
        if !current {
            let stored = self.stored.get(&(app.to_string(), cluster.to_string()))?;
            let record = stored
                .decode()
                .inspect_err(
                    |err| tracing::warn!(app, cluster, error = %err, "a record to detail does not decode"),
                )
                .ok()
                .map(|record| {
                    let bundle = record.heard_status();
                    (record, bundle)
                });
            *decoded = Some(((app.to_string(), cluster.to_string()), record));
        }
        let (record, bundle) = decoded.as_ref()?.1.as_ref()?;
        match measure {
            Measure::Deployed => record
                .resources
                .iter()
                .find(|r| r.name == *resource.name && r.kind == resource.gvk.kind)
                .map(ResourceRecord::object),
            Measure::Cluster => {
                let object = find_object(
                    bundle.as_ref()?,
                    &resource.gvk.group,
                    &resource.gvk.kind,
                    &resource.name,
                )?;
                // Generic kinds carry the object under `res`.
                Some(object.get("res").cloned().unwrap_or_else(|| object.clone()))
            }
        }
    }
}

/// `GET …/status` of a resource with a lifecycle: the answer, or a stream of it (see [`super::stream`]).
pub(crate) fn status(subject: Subject) -> MethodRouter<AppState> {
    get(
        move |state: State<AppState>, path: PathNames, request: StreamRequest| {
            stream_status(subject, state, path, request)
        },
    )
}

fn query_kind(subject: Subject) -> SubjectKind {
    match subject {
        Subject::DeploymentIntentGroup => SubjectKind::Dig,
        Subject::ClusterNetworks => SubjectKind::ClusterNetworks,
        Subject::LogicalCloud => SubjectKind::LogicalCloud,
    }
}

async fn stream_status(
    subject: Subject,
    State(state): State<AppState>,
    path: PathNames,
    request: StreamRequest,
) -> Result<Response, ApiError> {
    let names = Arc::new(path_names(path)?);
    let pairs = Arc::new(request.pairs.clone());
    let computing = state.clone();
    let compute: ComputeAnswer = Arc::new(move || {
        let (state, names, pairs) = (computing.clone(), names.clone(), pairs.clone());
        Box::pin(async move { answer_status(subject, &state, &names, &pairs).await })
    });
    stream::answer_or_stream(&state, &request, compute).await
}

/// The status answer of the resource named `names` for the query `pairs`, with the store revision it reflects.
async fn answer_status(
    subject: Subject,
    state: &AppState,
    names: &[String],
    pairs: &[(String, String)],
) -> Result<PreparedAnswer, ApiError> {
    let query = parse_query_for(pairs, query_kind(subject))
        .map_err(|err| ApiError::new(StatusCode::BAD_REQUEST, "InvalidQuery", err.to_string()))?;
    let path = ResourcePath::new(subject.kind(), names.to_vec());
    // Everything written before this request is in the index before it answers.
    let revision = crate::status::StatusKeeper::request_revision(state.store()).await;
    let entry = state.catalog().get(&path).await?;
    let (history, _) = state.catalog().state(&path).await?;
    let composite_profile = match subject {
        Subject::DeploymentIntentGroup => {
            let dig: DeploymentIntentGroup =
                serde_json::from_value(entry.body).map_err(ApiError::internal)?;
            check_app_filter(state, &path, &query.apps).await?;
            dig.spec.composite_profile
        }
        _ => String::new(),
    };
    let contexts = history.contexts();
    let context_id: Option<ContextId> = match query.instance {
        Some(instance) if !contexts.contains(&instance) => {
            let known: Vec<String> = contexts.iter().map(ToString::to_string).collect();
            // A well-formed id this subject never had: not found, as any other missing resource.
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "NotFound",
                format!(
                    "invalid query parameter 'instance': {instance} is not a context of this {} (its contexts: {})",
                    subject.table().subject,
                    if known.is_empty() {
                        "none yet".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
        Some(instance) => Some(instance),
        None => history.last_context(),
    };

    let mut records = HashMap::new();
    if query.output == Output::Detail
        && let Some(id) = context_id
    {
        for record in state.contexts().stored_clusters(id).await? {
            let selected = (query.apps.is_empty() || query.apps.contains(&record.app))
                && (query.clusters.is_empty() || query.clusters.contains(&record.cluster));
            if selected {
                records.insert((record.app.clone(), record.cluster.clone()), record);
            }
        }
    }
    if !state.status().caught_up(revision).await {
        tracing::warn!(
            revision,
            "status index is behind the store; answering from what it has"
        );
    }

    let parts = AnswerParts {
        subject,
        names: path.names().to_vec(),
        composite_profile,
        history,
        query,
        detail: Records::new(records),
        freshness: Freshness {
            now: jiff::Timestamp::now(),
            grace: state.config().status_grace,
        },
    };
    let index = state.status().read();
    let context = context_id.and_then(|id| index.context(id).map(|entry| (id, entry)));
    if context_id.is_some() && context.is_none() {
        tracing::warn!(context = ?context_id, "context is not in the status index");
    }
    // A summary is small and quick: written at once from the index.
    if parts.query.output == Output::Summary {
        let mut body = Vec::with_capacity(1024);
        parts.write(context, &mut body).map_err(ApiError::internal)?;
        return Ok(PreparedAnswer {
            revision,
            body: AnswerBody::Bytes(body.into()),
        });
    }
    // Else a snapshot of the context: it shares the index's cluster entries (a write meanwhile copies the one it
    // changes), so the answer is written while it is sent, without holding the index.
    let context = context.map(|(id, entry)| (id, entry.clone()));
    drop(index);
    let write: AnswerWriter = Box::new(move |out| {
        parts
            .write(context.as_ref().map(|(id, entry)| (*id, entry)), out)
            .map_err(std::io::Error::other)
    });
    Ok(PreparedAnswer {
        revision,
        body: AnswerBody::Writer(write),
    })
}

/// Everything a status answer is written from but the context.
struct AnswerParts {
    subject: Subject,
    names: Vec<String>,
    composite_profile: String,
    history: StateInfo,
    query: StatusQuery,
    detail: Records,
    freshness: Freshness,
}

impl AnswerParts {
    /// Writes the answer about `context` into `out`.
    fn write(
        &self,
        context: Option<(ContextId, &ContextEntry)>,
        out: impl std::io::Write,
    ) -> serde_json::Result<()> {
        let request = StatusRequest {
            subject: status_subject(self.subject, &self.names, &self.composite_profile),
            state: &self.history,
            context,
            query: &self.query,
            detail: &self.detail,
            freshness: Some(self.freshness),
        };
        write_status(&request, out)
    }
}

/// What a status answer names as its subject, from the path's names.
fn status_subject<'a>(
    subject: Subject,
    names: &'a [String],
    composite_profile: &'a str,
) -> StatusSubject<'a> {
    match subject {
        Subject::DeploymentIntentGroup => StatusSubject::Dig(DigIdentity {
            project: &names[0],
            composite_app: &names[1],
            version: &names[2],
            composite_profile,
            name: &names[3],
        }),
        Subject::ClusterNetworks => StatusSubject::ClusterNetworks {
            provider: &names[0],
            cluster: &names[1],
        },
        Subject::LogicalCloud => StatusSubject::LogicalCloud {
            project: &names[0],
            name: &names[1],
        },
    }
}

/// Refuses an `app` filter naming an app the DIG's composite app does not have.
async fn check_app_filter(
    state: &AppState,
    dig_path: &ResourcePath,
    apps: &[String],
) -> Result<(), ApiError> {
    if apps.is_empty() {
        return Ok(());
    }
    let composite_app = dig_path.parent().expect("a DIG lives under a composite app");
    let known = state.catalog().list(Kind::App, composite_app.names()).await?;
    if let Some(unknown) = apps
        .iter()
        .find(|app| !known.iter().any(|entry| entry.path.name() == app.as_str()))
    {
        // A well-formed name of an app that does not exist: not found (EMCO answers 400).
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!(
                "invalid query parameter 'app': '{unknown}' is not an app of composite app '{}'",
                composite_app.display_name()
            ),
        ));
    }
    Ok(())
}

/// The state object (seed 002) of a resource with a lifecycle, as its GET shows it under `state`; `None` for
/// resources without one. It is judged like a status answer: after the index caught up, at the time of the
/// request, on the context the status follows.
pub(crate) async fn state_object_of(state: &AppState, path: &ResourcePath) -> Result<Option<Json>, ApiError> {
    let Some(subject) = Subject::of(path.kind()) else {
        return Ok(None);
    };
    let revision = crate::status::StatusKeeper::request_revision(state.store()).await;
    let (history, _) = state.catalog().state(path).await?;
    if !state.status().caught_up(revision).await {
        tracing::warn!(
            revision,
            "status index is behind the store; the state is judged from what it has"
        );
    }
    let index = state.status().read();
    let context = history.last_context().and_then(|id| index.context(id));
    let mut object = emco_status::state_object(
        query_kind(subject),
        &history,
        context,
        Some(Freshness {
            now: jiff::Timestamp::now(),
            grace: state.config().status_grace,
        }),
    );
    object.name_update_url(&super::lifecycle_routes::operation_url(subject, path, "update"));
    serde_json::to_value(object).map(Some).map_err(ApiError::internal)
}

/// `body` with the state object of `path` (if it has one) under `state`, after the stored keys.
pub(crate) async fn with_state(
    state: &AppState,
    path: &ResourcePath,
    mut body: Json,
) -> Result<Json, ApiError> {
    if let Some(object) = state_object_of(state, path).await?
        && let Some(map) = body.as_object_mut()
    {
        map.insert("state".into(), object);
    }
    Ok(body)
}

/// The query parameters of a status answer (`emco_status::query`) and of its stream (`super::stream`).
const STATUS_QUERY: &[QueryParameter] = &[
    query(
        "type",
        "rsync (deployed state, seed 000 shape) or cluster (what the clusters report)",
    )
    .taking(QueryValues::OneOf(emco_status::query::TYPE_VALUES)),
    query(
        "status",
        "deployed or ready: the EMCO 22.x shape of rsync or cluster",
    )
    .taking(QueryValues::OneOf(emco_status::query::STATUS_VALUES)),
    query("output", "summary, all (the default) or detail")
        .taking(QueryValues::OneOf(emco_status::query::OUTPUT_VALUES)),
    query(
        "instance",
        "An AppContext id of this subject's history instead of the current one",
    )
    .taking(QueryValues::Pattern(emco_model::context::CONTEXT_ID_PATTERN)),
    repeatable("app", "Only this app").taking(QueryValues::PatternUpTo(
        emco_status::query::APP_FILTER_PATTERN,
        emco_model::names::MAX_LABEL_VALUE_LEN,
    )),
    repeatable("cluster", "Only this cluster, as provider+cluster").taking(QueryValues::PatternUpTo(
        emco_status::query::CLUSTER_FILTER_PATTERN,
        2 * emco_model::MAX_NAME_LEN + 1,
    )),
    repeatable("resource", "Only this resource name").taking(QueryValues::PatternUpTo(
        emco_status::query::RESOURCE_FILTER_PATTERN,
        emco_status::query::MAX_RESOURCE_NAME,
    )),
    query("apps", "List the apps instead of the status"),
    query("clusters", "List the clusters instead of the status"),
    query("resources", "List the resources instead of the status"),
    query(
        "conditions",
        "notready (the default), all or none: which resources show their Ready condition",
    )
    .taking(QueryValues::OneOf(emco_status::query::CONDITIONS_VALUES)),
    query("readiness", "End the answer with the state object")
        .taking(QueryValues::OneOf(emco_status::query::READINESS_VALUES)),
    query(
        "watch",
        "true: a server-sent event stream of the answer as it changes",
    )
    .taking(QueryValues::OneOf(super::stream::WATCH_VALUES)),
    query("lastEventId", "With watch: resume after this event")
        .taking(QueryValues::Pattern(super::stream::EVENT_ID_PATTERN)),
    query(
        "access_token",
        "With watch: a short-lived stream token (POST /v2/tokens/stream)",
    ),
];

/// `GET …/status`, described.
pub(crate) fn status_operation(id: &str, summary: &str) -> Operation {
    Operation::get(id, "status", summary)
        .query(STATUS_QUERY)
        .answer(
            200,
            "The status answer (or, with watch=true or Accept: text/event-stream, a stream of it)",
            Content::JsonOrStream("StatusAnswer", status_answer_schema),
        )
        .also(&[
            ("StatusCounts", status_counts_schema),
            ("AppStatus", app_status_schema),
        ])
        .errors(&[
            (400, "A query parameter is invalid (named)"),
            (404, "It, or the app or instance a filter names, does not exist"),
        ])
}

/// Counts by status name (`{"Applied": 5, "Failed": 1}`); names with no count are left out.
fn status_counts_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}})
}

/// One app of a status answer: its clusters, each with its resources.
fn app_status_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "clusters": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "cluster-provider": {"type": "string"}, "clusterProvider": {"type": "string"},
                    "cluster": {"type": "string"},
                    "connectivity": {"type": "string"},
                    "resources": {"type": "array", "items": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "GVK": {"type": "object", "properties": {"Group": {"type": "string"}, "Version": {"type": "string"}, "Kind": {"type": "string"}}},
                        "changedBy": {"type": "array", "items": {"type": "string"}, "description": "The controllers that added or changed it, in the order they ran"}
                    }}}
                }
            }},
            "excludedClusters": {
                "type": "array",
                "description": "The clusters its placement named that a placement controller (hpa) took away, each with the controller and the requirement it does not meet",
                "items": {"type": "object", "required": ["cluster", "controller", "reason"], "properties": {
                    "cluster": {"type": "string"}, "controller": {"type": "string"}, "reason": {"type": "string"}
                }}
            }
        }
    })
}

/// A status answer: its shape depends on the query — seed 000's (hyphenated keys, `state.Actions`) with
/// `type=rsync|cluster`, EMCO 22.x's (camelCase keys, `states`) with `status=deployed|ready`, a list with
/// `apps`/`clusters`/`resources`. Every key any of them writes is here, typed; no other key is written.
fn status_answer_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let state = generator.subschema_for::<emco_model::StateInfo>();
    schemars::json_schema!({
        "type": "object",
        "description": "A status answer (seed 000 shape with type=rsync|cluster; EMCO 22.x shape with status=deployed|ready; a list with apps, clusters or resources).",
        "properties": {
            "project": {"type": "string"},
            "composite-app-name": {"type": "string"},
            "composite-app-version": {"type": "string"},
            "composite-profile-name": {"type": "string"},
            "compositeApp": {"type": "string"},
            "compositeAppVersion": {"type": "string"},
            "compositeProfile": {"type": "string"},
            "name": {"type": "string", "description": "The DIG, logical cloud, or provider+cluster"},
            "state": state,
            "states": {
                "type": "object",
                "properties": {
                    "statusctxid": {"type": "string"},
                    "actions": {"type": "array", "items": {"type": "object", "properties": {
                        "state": {"type": "string"}, "instance": {"type": "string"},
                        "time": {"type": "string"}, "revision": {"type": "integer"}
                    }}}
                }
            },
            "status": {"type": "string", "description": "The context's status (seed shape)"},
            "deployedStatus": {"type": "string"},
            "readyStatus": {"type": "string", "enum": ["Ready", "NotReady"]},
            "rsync-status": {"$ref": "#/components/schemas/StatusCounts"},
            "cluster-status": {"$ref": "#/components/schemas/StatusCounts"},
            "deployedCounts": {"$ref": "#/components/schemas/StatusCounts"},
            "readyCounts": {"$ref": "#/components/schemas/StatusCounts"},
            "rollout": {"type": "object", "description": "A progressive rollout's progress: state, batch, batches, clustersUpdated, clusters, failed, summary"},
            "apps": {"type": "array", "description": "The apps with their clusters and resources; with apps, the app names", "items": {"anyOf": [{"$ref": "#/components/schemas/AppStatus"}, {"type": "string"}]}},
            "cluster": {"type": "object", "description": "EMCO 22.x's network-intents answer: the one cluster ({} when none)"},
            "clusters": {"type": "array", "description": "A logical cloud's clusters; with clusters, the clusters", "items": {"type": ["object", "string"]}},
            "resources": {"type": "array", "description": "With resources, the resources", "items": {"type": ["object", "string"]}},
            "resourcesByApp": {"type": "array", "items": {"type": "object"}},
            "clustersByApp": {"type": "array", "items": {"type": "object"}},
            "readiness": {"type": "object", "description": "The state object (seed 002), with readiness=true"}
        },
        "additionalProperties": false
    })
}
