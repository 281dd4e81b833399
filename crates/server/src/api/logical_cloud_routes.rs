//! `GET /v2/projects/{p}/logical-clouds/{lc}/cluster-references/{ref}/kubeconfig`: a level-1 logical cloud user's
//! kubeconfig for the cluster of one reference (YAML), built from the certificate the cluster issued and the key
//! emco keeps. With authentication on, only admins read it (the guard in `auth.rs`).

use super::contract::{Content, Operation};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use emco_appcontext::{Kind, ResourcePath};

use super::body::{PathNames, path_names};
use crate::{ApiError, AppState};

pub(crate) async fn kubeconfig(State(state): State<AppState>, path: PathNames) -> Result<Response, ApiError> {
    let mut names = path_names(path)?;
    let reference = names.pop().unwrap_or_default();
    let logical_cloud = ResourcePath::new(Kind::LogicalCloud, names);
    let yaml =
        crate::lifecycle::user_kubeconfig(state.catalog(), state.contexts(), &logical_cloud, &reference)
            .await?;
    Ok(([(header::CONTENT_TYPE, "application/yaml")], yaml).into_response())
}

/// `GET …/cluster-references/{reference}/kubeconfig`, described.
pub(crate) fn kubeconfig_operation() -> Operation {
    Operation::get(
        "getLogicalCloudKubeconfig",
        "logical-clouds",
        "The kubeconfig of a cluster of an instantiated logical cloud",
    )
    .answer(200, "The kubeconfig", Content::Other("application/yaml"))
    .errors(&[(
        404,
        "It does not exist, or the logical cloud is not instantiated there",
    )])
}
