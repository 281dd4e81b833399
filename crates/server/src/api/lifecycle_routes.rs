//! The lifecycle POSTs of every resource with a lifecycle — a DIG's approve, instantiate, terminate and stop; a
//! cluster's network-intents apply, terminate and stop; a logical cloud's instantiate, update, terminate and stop — one
//! set of handlers over the one lifecycle engine. Each answers `202 Accepted` with a `Location` header naming the
//! status URL, where the progress of the asynchronous work shows.
//!
//! Instantiate builds without the write lock and takes it only to check and write; stop records the stop under
//! the lock, then (without it) waits a bounded time for the engine to carry it out, so that an instantiate sent
//! right after it finds the operation stopped.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use emco_appcontext::ResourcePath;

use super::body::{PathNames, path_names};
use crate::lifecycle::Subject;
use crate::{ApiError, AppState};

fn subject_path(subject: Subject, path: PathNames) -> Result<ResourcePath, ApiError> {
    Ok(ResourcePath::new(subject.kind(), path_names(path)?))
}

/// The status URL of a resource with a lifecycle.
pub(crate) fn status_url(subject: Subject, path: &ResourcePath) -> String {
    let names = path.names();
    match subject {
        Subject::DeploymentIntentGroup => format!(
            "/v2/projects/{}/composite-apps/{}/{}/deployment-intent-groups/{}/status",
            names[0], names[1], names[2], names[3]
        ),
        Subject::ClusterNetworks => {
            format!("/v2/cluster-providers/{}/clusters/{}/status", names[0], names[1])
        }
        Subject::LogicalCloud => format!("/v2/projects/{}/logical-clouds/{}/status", names[0], names[1]),
    }
}

fn accepted(subject: Subject, path: &ResourcePath) -> Response {
    (
        StatusCode::ACCEPTED,
        [(header::LOCATION, status_url(subject, path))],
    )
        .into_response()
}

/// `POST …/approve`.
pub(crate) fn approve(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        let _writing = state.write_lock().await;
        state.lifecycle().approve(&path).await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/instantiate` (`…/apply` for network intents).
pub(crate) fn instantiate(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        let prepared = state.lifecycle().prepare_instantiate(&path).await?;
        let _writing = state.write_lock().await;
        state.lifecycle().commit_instantiate(&path, prepared).await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/update` (logical clouds): a new context from the resource as it is now takes over from the current one.
pub(crate) fn update(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        let prepared = state.lifecycle().prepare_update(&path).await?;
        let _writing = state.write_lock().await;
        state.lifecycle().commit_prepared(&path, prepared).await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/terminate`.
pub(crate) fn terminate(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        let _writing = state.write_lock().await;
        state.lifecycle().terminate(&path).await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/stop`.
pub(crate) fn stop(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        let stopping = {
            let _writing = state.write_lock().await;
            state.lifecycle().stop(&path).await?
        };
        state.lifecycle().wait_stopped(stopping).await;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}
