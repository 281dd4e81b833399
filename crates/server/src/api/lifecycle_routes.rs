//! The lifecycle POSTs of a DIG: approve, instantiate, terminate, stop. Each answers `202 Accepted` with a
//! `Location` header naming the DIG's status URL, where the progress of the asynchronous work shows.
//!
//! Instantiate renders without the write lock and takes it only to check and write; stop records the stop under
//! the lock, then (without it) waits a bounded time for the engine to carry it out, so that an instantiate sent
//! right after it finds the operation stopped.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use emco_appcontext::{Kind, ResourcePath};

use super::body::{PathNames, path_names};
use crate::{ApiError, AppState};

fn dig_path(path: PathNames) -> Result<ResourcePath, ApiError> {
    Ok(ResourcePath::new(Kind::DeploymentIntentGroup, path_names(path)?))
}

fn accepted(dig: &ResourcePath) -> Response {
    let names = dig.names();
    let location = format!(
        "/v2/projects/{}/composite-apps/{}/{}/deployment-intent-groups/{}/status",
        names[0], names[1], names[2], names[3]
    );
    (StatusCode::ACCEPTED, [(header::LOCATION, location)]).into_response()
}

pub(crate) async fn approve(State(state): State<AppState>, path: PathNames) -> Result<Response, ApiError> {
    let dig = dig_path(path)?;
    let _writing = state.write_lock().await;
    state.lifecycle().approve(&dig).await?;
    Ok(accepted(&dig))
}

pub(crate) async fn instantiate(
    State(state): State<AppState>,
    path: PathNames,
) -> Result<Response, ApiError> {
    let dig = dig_path(path)?;
    let prepared = state.lifecycle().prepare_instantiate(&dig).await?;
    let _writing = state.write_lock().await;
    state.lifecycle().commit_instantiate(&dig, prepared).await?;
    Ok(accepted(&dig))
}

pub(crate) async fn terminate(State(state): State<AppState>, path: PathNames) -> Result<Response, ApiError> {
    let dig = dig_path(path)?;
    let _writing = state.write_lock().await;
    state.lifecycle().terminate(&dig).await?;
    Ok(accepted(&dig))
}

pub(crate) async fn stop(State(state): State<AppState>, path: PathNames) -> Result<Response, ApiError> {
    let dig = dig_path(path)?;
    let stopping = {
        let _writing = state.write_lock().await;
        state.lifecycle().stop(&dig).await?
    };
    state.lifecycle().wait_stopped(stopping).await;
    Ok(accepted(&dig))
}
