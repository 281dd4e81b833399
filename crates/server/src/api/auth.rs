//! The authentication and role check in front of every route when `ServerConfig::token_auth` is set.
//!
//! It runs after the browser guard (so a CORS preflight, which browsers send without credentials, is answered
//! before it, and its answers get CORS headers and the API's JSON error shape) and before any handler:
//! - `/healthz` and `/readyz` are open to everyone (load balancers and probes carry no token), and so is
//!   `/metrics` with `ServerConfig::metrics_without_auth`; otherwise `/metrics` is for admins only; the web page's
//!   files under `/ui/` are open too (the page asks for a token and sends it with its API calls);
//! - a request without `Authorization: Bearer <token>`, or with a token the table does not hold, is answered
//!   401 `Unauthorized` with `WWW-Authenticate: Bearer realm="emco"`;
//! - a user in `emco:viewer` may only GET and HEAD, and never read credentials (a logical cloud user's
//!   kubeconfig); anything else is answered 403 `Forbidden` naming the user and the role; a user in neither
//!   `emco:admin` nor `emco:viewer` is answered 403 for everything.
//!
//! The user is recorded in the request's log span (`user`; `-` when authentication is off or not needed).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::replicas_routes::REPLICAS_PATH;
use super::{HEALTH_PATH, METRICS_PATH, READY_PATH};
use crate::auth::{ADMIN_GROUP, Role, VIEWER_GROUP};
use crate::{ApiError, AppState};

/// The challenge of a 401 answer.
const CHALLENGE: &str = "Bearer realm=\"emco\"";

/// The middleware: bearer token → user → role → allowed or 401/403.
pub(crate) async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    // The log span's `user` is recorded once (a second record would be logged beside the first).
    let span = tracing::Span::current();
    let anonymous = || span.record("user", tracing::field::display("-"));
    let Some(tokens) = &state.config().token_auth else {
        anonymous();
        return next.run(request).await;
    };
    let path = request.uri().path();
    let open_metrics = path == METRICS_PATH && state.config().metrics_without_auth;
    if path == HEALTH_PATH || path == READY_PATH || open_metrics || super::ui::is_ui_path(path) {
        anonymous();
        return next.run(request).await;
    }
    let identity = match bearer_token(request.headers()) {
        Err(message) => {
            anonymous();
            return unauthorized(message);
        }
        Ok(token) => match tokens.authenticate(token.as_bytes()) {
            Some(identity) => identity,
            None => {
                anonymous();
                tracing::info!("refused a request with an unknown bearer token");
                return unauthorized("the bearer token is not valid");
            }
        },
    };
    span.record("user", tracing::field::display(&identity.user));
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    match identity.role {
        Role::Admin => {}
        Role::Viewer if [METRICS_PATH, REPLICAS_PATH].contains(&request.uri().path()) => {
            return forbidden(format!(
                "user '{}' has role {VIEWER_GROUP}; only {ADMIN_GROUP} may read {}",
                identity.user,
                request.uri().path()
            ));
        }
        Role::Viewer if reads && reads_credentials(request.uri().path()) => {
            return forbidden(format!(
                "user '{}' has role {VIEWER_GROUP}, which may not read credentials (a logical cloud user's kubeconfig)",
                identity.user
            ));
        }
        Role::Viewer if reads => {}
        Role::Viewer => {
            return forbidden(format!(
                "user '{}' has role {VIEWER_GROUP}, which may only read",
                identity.user
            ));
        }
        Role::None => {
            return forbidden(format!(
                "user '{}' has no emco role: it is in neither group {ADMIN_GROUP} nor {VIEWER_GROUP}",
                identity.user
            ));
        }
    }
    next.run(request).await
}

/// Whether a path answers credentials: a logical cloud user's kubeconfig
/// (`/v2/projects/{p}/logical-clouds/{lc}/cluster-references/{ref}/kubeconfig`), which only admins read.
fn reads_credentials(path: &str) -> bool {
    path.starts_with("/v2/projects/")
        && path.contains("/logical-clouds/")
        && path.trim_end_matches('/').ends_with("/kubeconfig")
}

/// The token of an `Authorization: Bearer <token>` header, or why there is none.
fn bearer_token(headers: &HeaderMap) -> Result<&str, &'static str> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err("this API requires authentication: send 'Authorization: Bearer <token>'");
    };
    let malformed = "the Authorization header is not 'Bearer <token>'";
    let text = value.to_str().map_err(|_| malformed)?;
    let (scheme, token) = text.trim().split_once(' ').ok_or(malformed)?;
    let token = token.trim_start();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(malformed);
    }
    Ok(token)
}

fn unauthorized(message: &str) -> Response {
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, "Unauthorized", message).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(CHALLENGE));
    response
}

fn forbidden(message: String) -> Response {
    tracing::info!(%message, "refused a request");
    ApiError::new(StatusCode::FORBIDDEN, "Forbidden", message).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn only_bearer_tokens_are_read() {
        assert_eq!(bearer_token(&headers("Bearer abc")), Ok("abc"));
        assert_eq!(bearer_token(&headers("bearer   abc ")), Ok("abc"));
        for bad in ["Basic YWJj", "Bearer", "Bearer ", "abc", "Bearerabc"] {
            assert!(bearer_token(&headers(bad)).is_err(), "{bad}");
        }
        assert!(
            bearer_token(&HeaderMap::new())
                .unwrap_err()
                .contains("requires authentication")
        );
    }
}
