//! The one error type of the REST API: every failure becomes `{"code": "<StableName>", "message": "…"}` with a
//! specific HTTP status. Internal details of 500s stay in the log; the client gets a generic message.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use emco_appcontext::{CatalogError, ContextError};
use emco_model::NameError;
use emco_model::resources::ValidationError;

use crate::lifecycle::LifecycleError;
use crate::usage::UsageError;

/// An API error: status, stable code and a message that names the offending input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable, machine-readable name.
    pub code: &'static str,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400: the request is invalid.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "InvalidInput", message)
    }

    /// 409: the request conflicts with the state of a resource.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    /// 404: no such resource.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NotFound", message)
    }

    /// 500: a bug or a store failure; the details go to the log only.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "request failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal",
            "internal error; the server log has the details",
        )
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"code": self.code, "message": self.message});
        (self.status, Json(body)).into_response()
    }
}

impl From<CatalogError> for ApiError {
    fn from(err: CatalogError) -> Self {
        let message = err.to_string();
        match err {
            CatalogError::NotFound { .. } => Self::not_found(message),
            CatalogError::AlreadyExists { .. } => Self::conflict("AlreadyExists", message),
            CatalogError::ParentNotFound { .. } => Self::conflict("ParentNotFound", message),
            CatalogError::HasChildren { .. } => Self::conflict("HasChildren", message),
            CatalogError::Referenced { .. } => Self::conflict("Referenced", message),
            CatalogError::Conflict(_) => Self::conflict("Conflict", message),
            CatalogError::Record(_) | CatalogError::Store(_) => Self::internal(message),
        }
    }
}

impl From<ContextError> for ApiError {
    fn from(err: ContextError) -> Self {
        match err {
            ContextError::NotFound(_) | ContextError::NoSuchCluster { .. } => {
                Self::not_found(err.to_string())
            }
            // Runs the request again (see `optimistic`): its context was swept as abandoned.
            ContextError::Swept(_) => Self::conflict("Conflict", err.to_string()),
            ContextError::Record(_) | ContextError::Store(_) | ContextError::Fenced { .. } => {
                Self::internal(err)
            }
        }
    }
}

impl From<ValidationError> for ApiError {
    fn from(err: ValidationError) -> Self {
        Self::invalid(err.to_string())
    }
}

impl From<NameError> for ApiError {
    fn from(err: NameError) -> Self {
        Self::invalid(err.to_string())
    }
}

impl From<LifecycleError> for ApiError {
    fn from(err: LifecycleError) -> Self {
        let message = err.to_string();
        match err {
            LifecycleError::Catalog(inner) => inner.into(),
            LifecycleError::Context(inner) => inner.into(),
            LifecycleError::InvalidState { .. } => Self::conflict("InvalidState", message),
            LifecycleError::Incomplete(_) => Self::conflict("Incomplete", message),
            LifecycleError::Placement(_) => Self::conflict("PlacementFailed", message),
            LifecycleError::Invalid(_) => Self::new(StatusCode::BAD_REQUEST, "InvalidInput", message),
            LifecycleError::Inconsistent(_) => Self::conflict("Inconsistent", message),
            LifecycleError::LogicalCloudNotReady(_) => Self::conflict("LogicalCloudNotReady", message),
            LifecycleError::NotInLogicalCloud { .. } => {
                Self::new(StatusCode::BAD_REQUEST, "NotInLogicalCloud", message)
            }
            LifecycleError::LogicalCloudInUse { .. } | LifecycleError::LogicalCloudClusterInUse { .. } => {
                Self::conflict("InUse", message)
            }
            LifecycleError::Render { .. } => Self::conflict("RenderFailed", message),
            LifecycleError::DependencyCycle { .. } => Self::conflict("DependencyCycle", message),
            LifecycleError::Controller(_) => Self::conflict("ControllerUnavailable", message),
            LifecycleError::Action { .. } => Self::conflict("ActionFailed", message),
            LifecycleError::Values { .. } => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "InvalidValues", message)
            }
            LifecycleError::RenderLimit { .. } => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "RenderLimitExceeded", message)
            }
            LifecycleError::InputsChanged { .. } => Self::conflict("Conflict", message),
            LifecycleError::UnknownRevision { .. } => Self::not_found(message),
            LifecycleError::Renderer(_) => Self::internal(message),
        }
    }
}

impl From<UsageError> for ApiError {
    fn from(err: UsageError) -> Self {
        match err {
            UsageError::Catalog(inner) => inner.into(),
            UsageError::Context(inner) => inner.into(),
            in_use @ (UsageError::InUse { .. } | UsageError::NamedByCluster { .. }) => {
                Self::conflict("InUse", in_use.to_string())
            }
        }
    }
}
