//! Pull clusters' agent tokens at the API: issuing one when a pull cluster is registered, `POST
//! /v2/cluster-providers/{provider}/clusters/{cluster}/agent-token` (admins: a new token, the old one refused from
//! then on), and the guard's check of a request that presents one — an agent token admits its own cluster's agent
//! endpoints (`…/clusters/{cluster}/agent/…`) and nothing else, whether or not `--token-auth-file` is set.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use emco_appcontext::{Catalog, Kind, ResourcePath};
use emco_model::resources::Cluster;
use emco_store::Txn;
use serde_json::{Value as Json, json};

use super::body::{PathNames, path_names};
use super::contract::{Content, Operation};
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

/// A registered pull cluster's answer: its body and, this once, its agent token.
pub(crate) fn with_agent_token(mut body: Json, issued: &IssuedAgentToken) -> Json {
    if let Some(object) = body.as_object_mut() {
        object.insert("agentToken".to_string(), Json::String(issued.token.clone()));
    }
    body
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
}
