//! `GET /v2/replicas` (admins only): the emco replicas registered on the store, each with its lease and the work
//! it owns. Read from the store, so every replica answers the same; without replicas (memory or redb, one
//! process) the list is empty.

use super::contract::{Content, Operation};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use emco_appcontext::replicas;
use serde::Serialize;

use crate::{ApiError, AppState};

/// The path.
pub(crate) const REPLICAS_PATH: &str = "/v2/replicas";

/// One replica in the answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplicaAnswer {
    id: String,
    address: String,
    started_at: String,
    lease: LeaseAnswer,
    owns: replicas::Owned,
}

/// A replica's lease: `expiresIn` is the seconds left until it expires unless renewed (0: gone).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LeaseAnswer {
    id: String,
    ttl_seconds: u64,
    expires_in: u64,
}

/// `GET /v2/replicas`.
pub(crate) async fn list(State(state): State<AppState>) -> Response {
    match answer(&state).await {
        Ok(replicas) => axum::Json(replicas).into_response(),
        Err(err) => ApiError::internal(format!("cannot list the replicas: {err}")).into_response(),
    }
}

async fn answer(state: &AppState) -> Result<Vec<ReplicaAnswer>, replicas::ReplicaError> {
    let store = state.store();
    let mut answers = Vec::new();
    for view in replicas::list(store).await? {
        let status = store.lease_status(view.member.lease).await?;
        answers.push(ReplicaAnswer {
            lease: LeaseAnswer {
                // etcd's lease ids are printed in hex by etcdctl; the decimal id is as unambiguous.
                id: view.member.lease.to_string(),
                ttl_seconds: status.map_or(0, |status| status.granted_ttl.as_secs()),
                expires_in: status.map_or(0, |status| status.remaining.as_secs()),
            },
            id: view.member.id,
            address: view.member.address,
            started_at: view.member.started_at,
            owns: view.owns,
        });
    }
    Ok(answers)
}

/// `GET /v2/replicas`, described.
pub(crate) fn list_operation() -> Operation {
    Operation::get(
        "listReplicas",
        "operations",
        "The emco replicas on this store, their leases and what each owns (admin)",
    )
    .answer(200, "The replicas", Content::Other("application/json"))
}
