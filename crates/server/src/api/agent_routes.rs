//! Pull clusters at the API: their agent tokens — issued when a pull cluster is registered, replaced by `POST
//! /v2/cluster-providers/{provider}/clusters/{cluster}/agent-token` (admins; the old one refused from then on),
//! checked by the guard for any request that presents one: an agent token admits its own cluster's agent endpoints
//! (`…/clusters/{cluster}/agent/…`) and nothing else, whether or not `--token-auth-file` is set — and the agent
//! endpoints themselves:
//! - `GET …/agent/desired-state?since=R&wait=S`, a long poll: the cluster's orders (each (context, app) record
//!   holding one, with its sequence number and whether its outcome is in) and, in full with the record's
//!   resources, those issued after store revision `R` (an outcome coming in is the agent's own news, not sent
//!   back to it); answered at once when some were (or `R` is 0),
//!   else when one does or after `S` seconds (default 30, at most 55) — then the status and headers come at once
//!   and the JSON body when it is known, so a parked agent costs emco only its body's small future. The answer's `revision` is the `since` of
//!   the next poll, so a reconnecting agent gets only what changed. Orders are read from the AppContext records:
//!   there is no second copy of the desired state.
//! - `POST …/agent/reports`: outcomes of orders (per resource: Applied, Deleted or Failed with the cluster's
//!   message), each recorded in its record if it answers the record's current order, and the batch waiting for it
//!   told ([`emco_appcontext::Engine::agent_reported`]); and the statuses of the cluster's ResourceBundleStates,
//!   which the engine stores as it stores those it watches ([`emco_appcontext::Engine::agent_status`]).

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use emco_appcontext::agent_order::{MAX_BUNDLES_PER_REPORT, MAX_OUTCOMES_PER_REPORT};
use emco_appcontext::{
    AgentEnd, AgentOrder, AgentResult, Catalog, ContextError, Kind, ReportTaken, ResourcePath, ResourceRecord,
};
use emco_model::ContextId;
use emco_model::resources::Cluster;
use emco_store::Txn;
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};

use super::body::{PathNames, json_body, path_names};
use super::contract::{Content, Operation, QueryParameter, QueryValues, RequestBody, query};
use crate::auth::agent_tokens::{self, AgentTokenError, IssuedAgentToken};
use crate::auth::{Identity, Role};
use crate::{ApiError, AppState};

/// The route of `POST …/agent-token`.
pub(crate) const AGENT_TOKEN_ROUTE: &str = "/v2/cluster-providers/{provider}/clusters/{cluster}/agent-token";

/// The cluster whose agent sent a request, for the handlers of agent endpoints (the guard puts it in the request's
/// extensions once the token checked out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentOf(pub(crate) String);

/// The cluster an agent path belongs to (`provider+cluster`), when `path` is one:
/// `/v2/cluster-providers/{p}/clusters/{c}/agent` or below it.
pub(crate) fn agent_path_cluster(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/v2/cluster-providers/")?;
    let mut segments = rest.split('/');
    let provider = segments.next().filter(|s| !s.is_empty())?;
    let clusters = segments.next()?;
    let cluster = segments.next().filter(|s| !s.is_empty())?;
    let agent = segments.next()?;
    (clusters == "clusters" && agent == "agent").then(|| format!("{provider}+{cluster}"))
}

/// The guard's branch for a request whose bearer token is an agent token: 401 unless it is the current token of
/// the cluster it names; 403 unless the path is that cluster's agent path; else the request goes on, carrying
/// [`AgentOf`] and an identity `agent:<provider>+<cluster>` (no role: it reaches no other route).
pub(crate) async fn admit_agent(state: &AppState, token: &str, mut request: Request, next: Next) -> Response {
    let span = tracing::Span::current();
    let cluster = match check_agent_token(state.catalog(), token).await {
        Ok(cluster) => cluster,
        Err(response) => {
            span.record("user", tracing::field::display("-"));
            return response;
        }
    };
    span.record("user", tracing::field::display(format!("agent:{cluster}")));
    let path = request.uri().path();
    if agent_path_cluster(path).as_deref() != Some(cluster.as_str()) {
        let (provider, name) = cluster.split_once('+').unwrap_or((cluster.as_str(), ""));
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "Forbidden",
            format!(
                "the agent token of cluster '{cluster}' admits only /v2/cluster-providers/{provider}/clusters/{name}/agent/…, not {}",
                emco_model::shown(path)
            ),
        )
        .into_response();
    }
    request.extensions_mut().insert(Arc::new(Identity {
        user: format!("agent:{cluster}"),
        uid: String::new(),
        groups: Vec::new(),
        role: Role::None,
    }));
    request.extensions_mut().insert(AgentOf(cluster));
    next.run(request).await
}

/// The cluster (`provider+cluster`) whose current agent token `token` is, or the 401 (or 500) answer.
async fn check_agent_token(catalog: &Catalog, token: &str) -> Result<String, Response> {
    let refused = |why: &str| {
        tracing::info!(reason = why, "refused an agent token");
        super::auth::unauthorized("the agent token is not valid (a rotated token stops working at once)")
    };
    let presented = match agent_tokens::parse(token) {
        Ok(presented) => presented,
        Err(err) => return Err(refused(&err.to_string())),
    };
    let path = ResourcePath::new(
        Kind::Cluster,
        vec![presented.provider.to_string(), presented.cluster.to_string()],
    );
    let pull = match catalog.find(&path).await {
        Ok(Some(entry)) => {
            serde_json::from_value::<Cluster>(entry.body).is_ok_and(|cluster| cluster.is_pull())
        }
        Ok(None) => false,
        Err(err) => return Err(ApiError::internal(err).into_response()),
    };
    if !pull {
        return Err(refused("no such pull cluster"));
    }
    let record = match catalog.blob(&path).await {
        Ok(Some(record)) => record,
        Ok(None) => return Err(refused("the pull cluster has no token record")),
        Err(err) => return Err(ApiError::internal(err).into_response()),
    };
    match presented.matches(&record) {
        Ok(true) => Ok(presented.cluster_key()),
        Ok(false) => Err(refused("not the cluster's current token")),
        Err(err @ AgentTokenError::Record(_)) => Err(ApiError::internal(err).into_response()),
        Err(err) => Err(refused(&err.to_string())),
    }
}

/// A new agent token for a pull cluster being registered, or the 500 answer when the random source failed.
pub(crate) fn issue_for(provider: &str, cluster: &str) -> Result<IssuedAgentToken, ApiError> {
    agent_tokens::issue(provider, cluster).map_err(ApiError::internal)
}

/// `POST …/clusters/{cluster}/agent-token`: replaces a pull cluster's agent token; the answer holds the new one
/// (201 `{"cluster","agentToken"}`); the old one is refused from this answer on.
pub(crate) async fn rotate(State(state): State<AppState>, path: PathNames) -> Result<Response, ApiError> {
    let names = path_names(path)?;
    let path = ResourcePath::new(Kind::Cluster, names);
    let entry = state.catalog().get(&path).await?;
    let cluster: Cluster = serde_json::from_value(entry.body).map_err(ApiError::internal)?;
    let [provider, name] = path.names() else {
        return Err(ApiError::internal("a cluster path has two names"));
    };
    if !cluster.is_pull() {
        return Err(ApiError::conflict(
            "NotAPullCluster",
            format!(
                "cluster '{provider}+{name}' is not a pull cluster (spec.pull): emco reaches it, and no agent token is issued for it"
            ),
        ));
    }
    let issued = issue_for(provider, name)?;
    // Written only while the cluster is the one read (not deleted and registered again meanwhile).
    let txn = Txn::new()
        .when([Catalog::unchanged_since(&path, entry.mod_revision)])
        .and_then([Catalog::blob_op(&path, &issued.record)]);
    if !state
        .store()
        .txn(txn)
        .await
        .map_err(ApiError::internal)?
        .succeeded
    {
        return Err(ApiError::conflict(
            "Conflict",
            format!("cluster '{provider}+{name}' changed concurrently; retry"),
        ));
    }
    tracing::info!(cluster = %format!("{provider}+{name}"), "rotated a pull cluster's agent token");
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({"cluster": format!("{provider}+{name}"), "agentToken": issued.token})),
    )
        .into_response())
}

/// The API document's entry of `POST …/agent-token`.
pub(crate) fn rotate_operation() -> Operation {
    Operation::post(
        "rotateAgentToken",
        "clusters",
        "Replace a pull cluster's agent token (the old one is refused at once)",
    )
    .answer(
        201,
        "The new token, shown only in this answer",
        Content::Json("AgentToken", agent_token_schema),
    )
    .errors(&[
        (400, "A name in the URL breaks the name rule"),
        (404, "No such cluster"),
        (
            409,
            "The cluster is not a pull cluster, or it changed concurrently",
        ),
    ])
}

fn agent_token_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["cluster", "agentToken"],
        "properties": {
            "cluster": {"type": "string", "description": "The cluster, `provider+cluster`."},
            "agentToken": {"type": "string", "description": "The token for the agent's --token-file; emco keeps only its digest."}
        },
        "additionalProperties": false
    })
}

/// A cluster's body as the GETs show it: with `connection`, how emco reaches it — `mode` `direct` (a kubeconfig),
/// `gitops` (its Git repository) or `pull` (its agent reaches emco; `agentLastContact`, when its agent last reached
/// this replica, RFC 3339, absent when it has not since this replica started).
pub(crate) fn with_connection(state: &AppState, cluster: &str, mut body: Json) -> Json {
    let mode = if super::files::is_pull_cluster(&body) {
        "pull"
    } else if super::files::is_git_ops_cluster(&body) {
        "gitops"
    } else {
        "direct"
    };
    let mut connection = json!({ "mode": mode });
    if mode == "pull"
        && let Some(contact) = state.status().agent_orders().last_contact(cluster)
    {
        connection["agentLastContact"] = Json::String(emco_model::format_timestamp(contact));
    }
    if let Some(object) = body.as_object_mut() {
        object.insert("connection".to_string(), connection);
    }
    body
}

/// A registered pull cluster's answer: its body and, this once, its agent token.
pub(crate) fn with_agent_token(mut body: Json, issued: &IssuedAgentToken) -> Json {
    if let Some(object) = body.as_object_mut() {
        object.insert("agentToken".to_string(), Json::String(issued.token.clone()));
    }
    body
}

/// The route of the desired-state long poll.
pub(crate) const DESIRED_STATE_ROUTE: &str =
    "/v2/cluster-providers/{provider}/clusters/{cluster}/agent/desired-state";
/// The route of the agent's reports.
pub(crate) const REPORTS_ROUTE: &str = "/v2/cluster-providers/{provider}/clusters/{cluster}/agent/reports";
/// The longest a long poll waits, in seconds (below common proxies' 60 s idle timeouts).
const MAX_WAIT_SECONDS: u64 = 55;
/// How long a long poll waits without `wait`, in seconds.
const DEFAULT_WAIT_SECONDS: u64 = 30;
/// The longest bundle label read (`<context id>-<app>`).
const MAX_BUNDLE_LABEL: usize = 160;

const SINCE_QUERY: QueryParameter = query(
    "since",
    "The revision of the previous answer: only orders issued after it are answered in full (0 or none: all)",
)
.taking(QueryValues::Integer(0, i64::MAX));
const WAIT_QUERY: QueryParameter = query(
    "wait",
    "Seconds to wait for a change when none is there yet (0 to 55; default 30)",
)
.taking(QueryValues::Integer(0, MAX_WAIT_SECONDS as i64));

/// The agent's cluster, or the answer for a request without the cluster's agent token.
fn agent_of(agent: Option<Extension<AgentOf>>, path: PathNames) -> Result<String, ApiError> {
    let names = path_names(path)?;
    let cluster = names.join("+");
    match agent {
        Some(Extension(AgentOf(agent))) if agent == cluster => Ok(cluster),
        _ => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Forbidden",
            format!("only the agent token of pull cluster '{cluster}' is accepted here"),
        )),
    }
}

/// One order in the answer, by its (context, app).
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OrderSummary {
    context: ContextId,
    app: String,
    seq: u64,
    done: bool,
}

/// An order that changed, with the desired state it is about.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ChangedOrder {
    context: ContextId,
    app: String,
    order: AgentOrder,
    resources: Vec<ResourceRecord>,
}

/// The long poll's answer, serialized as it is (the records' manifests are not copied into a JSON tree first).
#[derive(Debug, Serialize)]
struct DesiredState {
    cluster: String,
    revision: i64,
    orders: Vec<OrderSummary>,
    changed: Vec<ChangedOrder>,
}

/// `GET …/agent/desired-state`.
pub(crate) async fn desired_state(
    State(state): State<AppState>,
    agent: Option<Extension<AgentOf>>,
    path: PathNames,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let cluster = agent_of(agent, path)?;
    let Query(pairs) = query.map_err(|err| ApiError::invalid(format!("bad query: {err}")))?;
    let (mut since, mut wait) = (0i64, DEFAULT_WAIT_SECONDS);
    for (name, value) in &pairs {
        let number = || {
            value.parse::<u64>().map_err(|_| {
                ApiError::invalid(format!(
                    "query parameter '{name}' is '{}'; expected a whole number",
                    emco_model::shown(value)
                ))
            })
        };
        match name.as_str() {
            "since" => {
                since = i64::try_from(number()?).map_err(|_| ApiError::invalid("since is too large"))?
            }
            "wait" if number()? <= MAX_WAIT_SECONDS => wait = number()?,
            "wait" => {
                return Err(ApiError::invalid(format!(
                    "query parameter 'wait' is {value}; at most {MAX_WAIT_SECONDS} seconds"
                )));
            }
            other => {
                return Err(ApiError::invalid(format!(
                    "unknown query parameter '{}'; allowed: since, wait",
                    emco_model::shown(other)
                )));
            }
        }
    }
    let doorbell = {
        let mut orders = state.status().agent_orders();
        orders.contact(&cluster);
        orders.doorbell(&cluster)
    };
    let (revision, orders, changed) = pending(&state, &cluster, since);
    if !changed.is_empty() || since == 0 || wait == 0 {
        let answer = answer_orders(&state, &cluster, revision, &orders, changed).await?;
        return Ok(axum::Json(answer).into_response());
    }
    // Nothing new: the answer's status and headers go at once and its body when an order changes or the wait
    // ends. Waiting in the body, not in the handler, leaves only the body's small future per parked agent (the
    // handler's and the middleware's futures are done), which is most of an idle agent's cost to emco.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(wait);
    let body = async move {
        loop {
            let notified = doorbell.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let (revision, orders, changed) = pending(&state, &cluster, since);
            if !changed.is_empty() || tokio::time::Instant::now() >= deadline {
                // Boxed: the answer's reads take room only once they run, not in every parked agent's future.
                return body_of(Box::pin(answer_orders(&state, &cluster, revision, &orders, changed)).await);
            }
            // Rung (something of the cluster changed) or the wait is over: look again.
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    };
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        axum::body::Body::from_stream(futures::stream::once(body)),
    )
        .into_response())
}

/// A cluster's orders with their marks.
type Marks = Vec<((ContextId, String), crate::agent_orders::OrderMark)>;

/// The revision the answer stands at, the cluster's orders, and those changed after `since` (all with 0). The
/// revision is read first: every order change up to it is in the map already (a change seen later is answered
/// again by the next poll, never missed).
fn pending(state: &AppState, cluster: &str, since: i64) -> (i64, Marks, Vec<(ContextId, String)>) {
    let revision = *state.status().subscribe().borrow();
    let orders = state.status().agent_orders().orders(cluster);
    let changed = orders
        .iter()
        .filter(|(_, mark)| since == 0 || mark.revision > since)
        .map(|(key, _)| key.clone())
        .collect();
    (revision, orders, changed)
}

/// A waited answer as the body's one chunk; a store failure ends the body with an error (the agent polls again).
fn body_of(answer: Result<DesiredState, ApiError>) -> Result<axum::body::Bytes, std::io::Error> {
    let answer = answer.map_err(|err| std::io::Error::other(err.to_string()))?;
    serde_json::to_vec(&answer)
        .map(axum::body::Bytes::from)
        .map_err(std::io::Error::other)
}

async fn answer_orders(
    state: &AppState,
    cluster: &str,
    revision: i64,
    orders: &[((ContextId, String), crate::agent_orders::OrderMark)],
    changed: Vec<(ContextId, String)>,
) -> Result<DesiredState, ApiError> {
    let mut changed_orders = Vec::with_capacity(changed.len());
    for (context, app) in changed {
        let record = match state.contexts().cluster(context, &app, cluster).await {
            Ok(record) => record,
            // Deleted since the map saw it: the next answer's list no longer holds it.
            Err(ContextError::NoSuchCluster { .. } | ContextError::NotFound(_)) => continue,
            Err(err) => return Err(ApiError::internal(err)),
        };
        let Some(order) = record.agent_order else { continue };
        changed_orders.push(ChangedOrder {
            context,
            app,
            order: *order,
            resources: record.resources,
        });
    }
    let summaries: Vec<OrderSummary> = orders
        .iter()
        .map(|((context, app), mark)| OrderSummary {
            context: *context,
            app: app.clone(),
            seq: mark.seq,
            done: mark.done,
        })
        .collect();
    Ok(DesiredState {
        cluster: cluster.to_string(),
        revision,
        orders: summaries,
        changed: changed_orders,
    })
}

/// A report's body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Report {
    #[serde(default)]
    outcomes: Vec<ReportedOutcome>,
}

/// Takes a report's `bundles` out of its parsed body: each bundle's `emco/deployment-id` label (`<context>-<app>`)
/// and its `status`, an object, as JSON text — read by hand rather than decoded, since decoding would build every
/// status's tree again only to write it out as text (most of what a report costs emco). Refused naming the place.
fn take_bundles(body: &mut Json) -> Result<Vec<(String, String)>, ApiError> {
    let Some(bundles) = body.as_object_mut().and_then(|report| report.remove("bundles")) else {
        return Ok(Vec::new());
    };
    let Json::Array(bundles) = bundles else {
        return Err(ApiError::invalid("bundles: expected an array"));
    };
    if bundles.len() > MAX_BUNDLES_PER_REPORT {
        return Err(ApiError::invalid(format!(
            "bundles: {} in one report; at most {MAX_BUNDLES_PER_REPORT}",
            bundles.len()
        )));
    }
    let mut taken = Vec::with_capacity(bundles.len());
    for (index, bundle) in bundles.into_iter().enumerate() {
        let Json::Object(mut fields) = bundle else {
            return Err(ApiError::invalid(format!("bundles[{index}]: expected an object")));
        };
        if let Some(unknown) = fields
            .keys()
            .find(|field| !matches!(field.as_str(), "label" | "status"))
        {
            return Err(ApiError::invalid(format!(
                "bundles[{index}]: unknown field '{}', expected 'label' or 'status'",
                emco_model::shown(unknown)
            )));
        }
        let mut field = |name: &str| {
            fields
                .remove(name)
                .ok_or_else(|| ApiError::invalid(format!("bundles[{index}]: missing field '{name}'")))
        };
        let Json::String(label) = field("label")? else {
            return Err(ApiError::invalid(format!(
                "bundles[{index}].label: expected a string"
            )));
        };
        let well_formed = label.len() <= MAX_BUNDLE_LABEL
            && label
                .split_once('-')
                .is_some_and(|(id, app)| id.parse::<ContextId>().is_ok() && !app.is_empty());
        if !well_formed {
            return Err(ApiError::invalid(format!(
                "bundles[{index}].label: '{}' is not '<context id>-<app>'",
                emco_model::shown(&label)
            )));
        }
        let status @ Json::Object(_) = field("status")? else {
            return Err(ApiError::invalid(format!(
                "bundles[{index}].status: expected an object"
            )));
        };
        let status = serde_json::to_string(&status).map_err(ApiError::internal)?;
        taken.push((label, status));
    }
    Ok(taken)
}

/// The outcome of one order.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReportedOutcome {
    context: ContextId,
    app: String,
    seq: u64,
    end: AgentEnd,
    results: Vec<Option<AgentResult>>,
}

/// `POST …/agent/reports`.
pub(crate) async fn reports(
    State(state): State<AppState>,
    agent: Option<Extension<AgentOf>>,
    path: PathNames,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let cluster = agent_of(agent, path)?;
    state.status().agent_orders().contact(&cluster);
    let mut body = json_body(&headers, body, state.config().max_body_bytes)?;
    let bundles = take_bundles(&mut body)?;
    // Taken by value: the parsed body's strings move into the report rather than being copied.
    let report: Report = serde_path_to_error::deserialize(body)
        .map_err(|err| ApiError::invalid(format!("{}: {}", err.path(), err.inner())))?;
    if report.outcomes.len() > MAX_OUTCOMES_PER_REPORT {
        return Err(ApiError::invalid(format!(
            "outcomes: {} in one report; at most {MAX_OUTCOMES_PER_REPORT}",
            report.outcomes.len()
        )));
    }
    let bundles_taken = bundles.len();
    if !bundles.is_empty() {
        state.engine().agent_status(&cluster, bundles).await;
    }
    let mut answers = Vec::with_capacity(report.outcomes.len());
    for (index, outcome) in report.outcomes.iter().enumerate() {
        let taken = state
            .contexts()
            .record_agent_outcome(
                outcome.context,
                &outcome.app,
                &cluster,
                outcome.seq,
                outcome.end,
                &outcome.results,
            )
            .await;
        let (taken, message) = match taken {
            Ok(ReportTaken::Recorded) => {
                state
                    .engine()
                    .agent_reported(outcome.context, &outcome.app, &cluster);
                ("recorded", None)
            }
            Ok(ReportTaken::Stale { current }) => (
                "stale",
                Some(match current {
                    Some(current) => format!("the current order is {current}"),
                    None => "there is no order".to_string(),
                }),
            ),
            Ok(ReportTaken::Refused(why)) => ("refused", Some(format!("outcomes[{index}]: {why}"))),
            Err(ContextError::NoSuchCluster { .. } | ContextError::NotFound(_)) => (
                "unknown",
                Some(format!(
                    "context {} has no app '{}' on {cluster}",
                    outcome.context,
                    emco_model::shown(&outcome.app)
                )),
            ),
            Err(err) => return Err(ApiError::internal(err)),
        };
        answers.push(json!({
            "context": outcome.context,
            "app": outcome.app,
            "seq": outcome.seq,
            "taken": taken,
            "message": message,
        }));
    }
    Ok(axum::Json(json!({ "outcomes": answers, "bundles": bundles_taken })).into_response())
}

/// The API document's entry of the desired-state long poll.
pub(crate) fn desired_state_operation() -> Operation {
    Operation::get(
        "getAgentDesiredState",
        "clusters",
        "A pull cluster's orders, those changed since a revision in full (long poll; the cluster's agent token only)",
    )
    .query(&[SINCE_QUERY, WAIT_QUERY])
    .answer(
        200,
        "The cluster's orders and the revision to poll from next",
        Content::Json("AgentDesiredState", desired_state_schema),
    )
    .errors(&[
        (400, "A query parameter or a name in the URL is malformed"),
        (401, "No valid agent token"),
        (403, "Not the agent token of this cluster"),
    ])
}

/// The API document's entry of the agent's reports.
pub(crate) fn reports_operation() -> Operation {
    Operation::post(
        "postAgentReports",
        "clusters",
        "Outcomes of a pull cluster's orders (the cluster's agent token only)",
    )
    .body(RequestBody::Json("AgentReport", report_schema))
    .answer(
        200,
        "What became of each outcome: recorded, stale (not the current order), refused or unknown",
        Content::Json("AgentReportAnswer", report_answer_schema),
    )
    .errors(&[
        (400, "The report is malformed (the message names the field)"),
        (401, "No valid agent token"),
        (403, "Not the agent token of this cluster"),
        (413, "The body is too large"),
        (415, "The body is not sent as JSON"),
        (422, "The body is not JSON"),
    ])
}

fn desired_state_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["cluster", "revision", "orders", "changed"],
        "properties": {
            "cluster": {"type": "string"},
            "revision": {"type": "integer", "description": "Send it as `since` in the next poll."},
            "orders": {"type": "array", "items": {
                "type": "object",
                "required": ["context", "app", "seq", "done"],
                "properties": {
                    "context": {"type": "string"}, "app": {"type": "string"},
                    "seq": {"type": "integer", "minimum": 1}, "done": {"type": "boolean"}
                }
            }},
            "changed": {"type": "array", "items": {
                "type": "object",
                "required": ["context", "app", "order", "resources"],
                "properties": {
                    "context": {"type": "string"}, "app": {"type": "string"},
                    "order": {"type": "object", "description": "What to do: seq, operation (apply, update, delete, supersede), other, label, namespace, issuedAt, outcome."},
                    "resources": {"type": "array", "items": {"type": "object", "description": "A resource as the AppContext keeps it: name, kind, apiVersion, manifest, role."}}
                }
            }}
        }
    })
}

fn report_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "properties": {
            "outcomes": {"type": "array", "maxItems": MAX_OUTCOMES_PER_REPORT, "items": {
                "type": "object",
                "required": ["context", "app", "seq", "end", "results"],
                "properties": {
                    "context": {"type": "string", "pattern": "^[1-9][0-9]{0,18}$"},
                    "app": {"type": "string"},
                    "seq": {"type": "integer", "minimum": 0},
                    "end": {"enum": ["done", "failed"]},
                    "results": {"type": "array", "items": {"oneOf": [
                        {"type": "null"},
                        {"type": "object", "required": ["status"], "properties": {
                            "status": {"enum": ["Applied", "Deleted", "Failed"]},
                            "error": {"type": "string"}
                        }, "additionalProperties": false}
                    ]}}
                },
                "additionalProperties": false
            }},
            "bundles": {"type": "array", "maxItems": MAX_BUNDLES_PER_REPORT, "items": {
                "type": "object",
                "required": ["label", "status"],
                "properties": {
                    "label": {"type": "string", "pattern": "^[1-9][0-9]{0,18}-.+$", "maxLength": MAX_BUNDLE_LABEL, "description": "The bundle's emco/deployment-id label."},
                    "status": {"type": "object", "description": "The ResourceBundleState's status, as the monitor writes it."}
                },
                "additionalProperties": false
            }}
        },
        "additionalProperties": false
    })
}

fn report_answer_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["outcomes", "bundles"],
        "properties": {
            "bundles": {"type": "integer", "description": "How many bundle statuses were taken."},
            "outcomes": {"type": "array", "items": {
                "type": "object",
                "required": ["context", "app", "seq", "taken"],
                "properties": {
                    "context": {"type": "string"}, "app": {"type": "string"}, "seq": {"type": "integer"},
                    "taken": {"enum": ["recorded", "stale", "refused", "unknown"]},
                    "message": {"type": ["string", "null"]}
                }
            }}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_paths_name_their_cluster() {
        assert_eq!(
            agent_path_cluster("/v2/cluster-providers/edge/clusters/site1/agent/desired-state").as_deref(),
            Some("edge+site1")
        );
        assert_eq!(
            agent_path_cluster("/v2/cluster-providers/edge/clusters/site1/agent").as_deref(),
            Some("edge+site1")
        );
        for other in [
            "/v2/cluster-providers/edge/clusters/site1",
            "/v2/cluster-providers/edge/clusters/site1/agent-token",
            "/v2/cluster-providers/edge/clusters/site1/labels",
            "/v2/cluster-providers/edge/cluster/site1/agent",
            "/v2/cluster-providers//clusters/site1/agent",
            "/v2/projects/p/agent",
        ] {
            assert_eq!(agent_path_cluster(other), None, "{other}");
        }
    }

    #[track_caller]
    fn refused(mut body: Json) -> String {
        let err = take_bundles(&mut body).expect_err("the report is refused");
        assert_eq!(err.status, StatusCode::BAD_REQUEST, "{err:?}");
        err.message
    }

    #[test]
    fn a_reports_bundles_are_taken_as_label_and_status_text() {
        let mut body = json!({
            "outcomes": [],
            "bundles": [{"label": "7-web", "status": {"ready": true, "podStatuses": [{"name": "a"}]}}]
        });
        let bundles = take_bundles(&mut body).unwrap();
        assert_eq!(
            bundles,
            vec![(
                "7-web".to_string(),
                r#"{"ready":true,"podStatuses":[{"name":"a"}]}"#.to_string()
            )]
        );
        // The rest of the report stays to be decoded; without bundles there are none.
        assert_eq!(body, json!({"outcomes": []}));
        assert!(take_bundles(&mut body).unwrap().is_empty());
    }

    #[test]
    fn a_malformed_bundle_is_refused_naming_its_place() {
        let cases = [
            (
                json!({"bundles": {"label": "7-web"}}),
                "bundles: expected an array",
            ),
            (json!({"bundles": [3]}), "bundles[0]: expected an object"),
            (
                json!({"bundles": [{"label": "7-web", "status": {}}, {"label": "7-web", "status": {}, "extra": 1}]}),
                "bundles[1]: unknown field 'extra'",
            ),
            (
                json!({"bundles": [{"status": {}}]}),
                "bundles[0]: missing field 'label'",
            ),
            (
                json!({"bundles": [{"label": 7, "status": {}}]}),
                "bundles[0].label: expected a string",
            ),
            (
                json!({"bundles": [{"label": "web", "status": {}}]}),
                "bundles[0].label: 'web' is not",
            ),
            (
                json!({"bundles": [{"label": "0-web", "status": {}}]}),
                "bundles[0].label: '0-web' is not",
            ),
            (
                json!({"bundles": [{"label": "7-web"}]}),
                "bundles[0]: missing field 'status'",
            ),
            (
                json!({"bundles": [{"label": "7-web", "status": "ready"}]}),
                "bundles[0].status: expected an object",
            ),
        ];
        for (body, expected) in cases {
            let message = refused(body.clone());
            assert!(message.contains(expected), "{body}: {message}");
        }
        let too_many: Vec<Json> = (0..=MAX_BUNDLES_PER_REPORT)
            .map(|_| json!({"label": "7-web", "status": {}}))
            .collect();
        let message = refused(json!({ "bundles": too_many }));
        assert!(message.contains("in one report; at most"), "{message}");
        let long = format!("7-{}", "a".repeat(MAX_BUNDLE_LABEL));
        let message = refused(json!({"bundles": [{"label": long, "status": {}}]}));
        assert!(message.contains("bundles[0].label"), "{message}");
    }
}
