//! `metav1.Status` errors with Kubernetes' exact reasons and codes (clients match on `reason`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value as Json, json};

use crate::catalog::ResourceType;

/// An API error as the API server reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status, equal to the Status `code`.
    pub code: u16,
    /// The exact `reason`.
    pub reason: &'static str,
    /// The message.
    pub message: String,
    /// `details`, when the error concerns one object.
    pub details: Option<Json>,
}

fn details(t: &ResourceType, name: &str) -> Json {
    json!({"name": name, "group": t.group, "kind": t.plural})
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// 404 for an object.
    #[must_use]
    pub fn not_found(t: &ResourceType, name: &str) -> Self {
        let mut err = Self::new(404, "NotFound", format!("{} \"{name}\" not found", t.qualified()));
        err.details = Some(details(t, name));
        err
    }

    /// 404 for anything else.
    #[must_use]
    pub fn not_found_message(message: impl Into<String>) -> Self {
        Self::new(404, "NotFound", message)
    }

    /// 409 AlreadyExists.
    #[must_use]
    pub fn already_exists(t: &ResourceType, name: &str) -> Self {
        let mut err = Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", t.qualified()),
        );
        err.details = Some(details(t, name));
        err
    }

    /// 409 Conflict on a stale resourceVersion or precondition.
    #[must_use]
    pub fn conflict(t: &ResourceType, name: &str, why: &str) -> Self {
        let mut err = Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                t.qualified()
            ),
        );
        err.details = Some(details(t, name));
        err
    }

    /// 409 Conflict of server-side apply field managers.
    #[must_use]
    pub fn apply_conflict(t: &ResourceType, name: &str, conflicts: &[(String, String)]) -> Self {
        let causes: Vec<Json> = conflicts
            .iter()
            .map(|(manager, field)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with \"{manager}\" using {}", t.api_version()), "field": field}))
            .collect();
        let listed: Vec<String> = conflicts
            .iter()
            .map(|(manager, field)| format!("conflict with \"{manager}\" using {}: {field}", t.api_version()))
            .collect();
        let noun = if conflicts.len() == 1 {
            "conflict"
        } else {
            "conflicts"
        };
        let mut err = Self::new(
            409,
            "Conflict",
            format!(
                "Apply failed with {} {noun}: {}",
                conflicts.len(),
                listed.join("\n")
            ),
        );
        let mut d = details(t, name);
        d["causes"] = Json::Array(causes);
        err.details = Some(d);
        err
    }

    /// 400.
    #[must_use]
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 422 with field causes.
    #[must_use]
    pub fn invalid(t: &ResourceType, name: &str, field: &str, message: &str) -> Self {
        let mut err = Self::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {field}: {message}", t.kind),
        );
        let mut d = json!({"name": name, "group": t.group, "kind": t.kind});
        d["causes"] = json!([{"reason": "FieldValueInvalid", "message": message, "field": field}]);
        err.details = Some(d);
        err
    }

    /// 422 without an object.
    #[must_use]
    pub fn invalid_message(message: impl Into<String>) -> Self {
        Self::new(422, "Invalid", message)
    }

    /// 401 for a request whose credentials are not recognised.
    #[must_use]
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 403.
    #[must_use]
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 405.
    #[must_use]
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 406.
    #[must_use]
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self::new(406, "NotAcceptable", message)
    }

    /// 410 Expired (stale continue token or watch revision).
    #[must_use]
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 415.
    #[must_use]
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    /// 429 (fault injection).
    #[must_use]
    pub fn too_many_requests() -> Self {
        Self::new(
            429,
            "TooManyRequests",
            "the server has received too many requests and has asked us to try again later",
        )
    }

    /// 500.
    #[must_use]
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// 503 (fault injection).
    #[must_use]
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }

    /// The Status object.
    #[must_use]
    pub fn status(&self) -> Json {
        let mut status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message, "reason": self.reason, "code": self.code});
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (
            code,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            self.status().to_string(),
        )
            .into_response()
    }
}

/// A Success Status for a delete.
#[must_use]
pub fn success_status(t: &ResourceType, name: &str, uid: &str) -> Json {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": name, "group": t.group, "kind": t.plural, "uid": uid}})
}
