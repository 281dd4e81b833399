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
//! - a GET that opens a stream (`/v2/events`, or a status with `Accept: text/event-stream` or `watch=true`) may
//!   instead carry `?access_token=<stream token>` minted by `POST /v2/tokens/stream` (which viewers may call too:
//!   it grants only reading what they read); an `access_token` anywhere else, or one that is not an unexpired
//!   stream token (a real token in a URL is refused), is answered 401.
//!
//! - a bearer token that is a pull cluster's agent token (`emco-agent.…`) is checked by `agent_routes`, with or
//!   without the token table: it admits its own cluster's agent endpoints and is answered 403 anywhere else.
//!
//! The user is recorded in the request's log span (`user`; `-` when authentication is off or not needed), and
//! the identity is left in the request's extensions for the handlers.

use super::contract::{Content, Operation};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::replicas_routes::REPLICAS_PATH;
use std::sync::Arc;

use axum::Extension;

use super::events_routes::EVENTS_PATH;
use super::stream::accepts_event_stream;
use super::{HEALTH_PATH, METRICS_PATH, READY_PATH};
use crate::auth::agent_tokens;
use crate::auth::stream_tokens::StreamTokenError;
use crate::auth::{ADMIN_GROUP, Identity, Role, VIEWER_GROUP};
use crate::{ApiError, AppState};

/// The challenge of a 401 answer.
const CHALLENGE: &str = "Bearer realm=\"emco\"";

/// The middleware: bearer token → user → role → allowed or 401/403.
pub(crate) async fn guard(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    // The log span's `user` is recorded once (a second record would be logged beside the first).
    let span = tracing::Span::current();
    let anonymous = || span.record("user", tracing::field::display("-"));
    // An agent token admits its own cluster's agent endpoints and nothing else, with or without a token table.
    if let Ok(token) = bearer_token(request.headers())
        && agent_tokens::is_agent_token(token)
    {
        let token = token.to_string();
        return super::agent_routes::admit_agent(&state, &token, request, next).await;
    }
    let Some(tokens) = &state.config().token_auth else {
        anonymous();
        return next.run(request).await;
    };
    let path = request.uri().path().to_string();
    let path = path.as_str();
    let open_metrics = path == METRICS_PATH && state.config().metrics_without_auth;
    if path == HEALTH_PATH || path == READY_PATH || open_metrics || super::ui::is_ui_path(path) {
        anonymous();
        return next.run(request).await;
    }
    let access_token = access_token(request.uri().query());
    let identity = match (bearer_token(request.headers()), access_token) {
        (Err(_), Some(Ok(presented))) => {
            if !opens_stream(&request) {
                anonymous();
                return unauthorized(
                    "access_token is only accepted on a GET that opens a stream; send 'Authorization: Bearer <token>'",
                );
            }
            match state.stream_tokens().redeem(&presented) {
                Some(identity) => identity,
                None => {
                    anonymous();
                    tracing::info!("refused a stream with an unknown or expired access_token");
                    return unauthorized(
                        "the access_token is not a valid stream token (mint one with POST /v2/tokens/stream; \
                         it is accepted for 60 s; a bearer token never goes in a URL)",
                    );
                }
            }
        }
        (Err(_), Some(Err(message))) => {
            anonymous();
            return unauthorized(message);
        }
        (Err(message), None) => {
            anonymous();
            return unauthorized(message);
        }
        (Ok(token), _) => match tokens.authenticate(token.as_bytes()) {
            Some(identity) => identity,
            None => {
                anonymous();
                tracing::info!("refused a request with an unknown bearer token");
                return unauthorized("the bearer token is not valid");
            }
        },
    };
    span.record("user", tracing::field::display(&identity.user));
    request.extensions_mut().insert(identity.clone());
    // Minting a stream token only lends the caller's own reading to a stream.
    let mints_stream_token = request.method() == Method::POST && path == STREAM_TOKEN_PATH;
    let reads = matches!(*request.method(), Method::GET | Method::HEAD) || mints_stream_token;
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

/// The path of `POST /v2/tokens/stream`.
pub(crate) const STREAM_TOKEN_PATH: &str = "/v2/tokens/stream";
/// The longest `access_token` read.
const MAX_ACCESS_TOKEN_BYTES: usize = 256;

/// The `access_token` query parameter, if the query has one (or why it cannot be read).
fn access_token(query: Option<&str>) -> Option<Result<String, &'static str>> {
    let query = query?;
    let Ok(uri) = format!("/?{query}").parse::<axum::http::Uri>() else {
        return Some(Err("the query string cannot be read"));
    };
    let pairs: Vec<(String, String)> = match axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri)
    {
        Ok(axum::extract::Query(pairs)) => pairs,
        Err(_) => return Some(Err("the query string cannot be read")),
    };
    let mut tokens = pairs.into_iter().filter(|(name, _)| name == "access_token");
    let (_, token) = tokens.next()?;
    if tokens.next().is_some() {
        return Some(Err("the query holds access_token more than once"));
    }
    if token.is_empty() || token.len() > MAX_ACCESS_TOKEN_BYTES {
        return Some(Err("the access_token is empty or too long to be a stream token"));
    }
    Some(Ok(token))
}

/// Whether a request is a GET that opens a server-sent event stream.
fn opens_stream(request: &Request) -> bool {
    if request.method() != Method::GET {
        return false;
    }
    if request.uri().path() == EVENTS_PATH || accepts_event_stream(request.headers()) {
        return true;
    }
    request.uri().query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair == "watch" || pair == "watch=true")
    })
}

/// `POST /v2/tokens/stream`: a stream token for the caller (`{"token","expiresAt"}`); with authentication off,
/// one for an anonymous user (streams need none then).
pub(crate) async fn mint_stream_token(
    State(state): State<AppState>,
    identity: Option<Extension<Arc<Identity>>>,
) -> Response {
    let identity = identity.map_or_else(
        || {
            Arc::new(Identity {
                user: "-".into(),
                uid: String::new(),
                groups: Vec::new(),
                role: Role::None,
            })
        },
        |Extension(identity)| identity,
    );
    match state.stream_tokens().mint(identity) {
        Ok(minted) => (
            StatusCode::CREATED,
            axum::Json(serde_json::json!({
                "token": minted.token,
                "expiresAt": minted.expires_at.to_string(),
            })),
        )
            .into_response(),
        Err(err @ StreamTokenError::TooMany(_)) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "TooManyStreamTokens",
            err.to_string(),
        )
        .into_response(),
        Err(err) => ApiError::internal(err).into_response(),
    }
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

pub(crate) fn unauthorized(message: &str) -> Response {
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

/// `POST /v2/tokens/stream`, described.
pub(crate) fn stream_token_operation() -> Operation {
    Operation::post(
        "createStreamToken",
        "operations",
        "A short-lived token for event streams (EventSource cannot send headers)",
    )
    .answer(
        201,
        "The token and when it expires",
        Content::Json("StreamToken", stream_token_schema),
    )
    .errors(&[
        (401, "No valid bearer token"),
        (
            503,
            "Too many stream tokens are live; try again when some expired",
        ),
    ])
}

fn stream_token_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["token", "expiresAt"],
        "properties": {
            "token": {"type": "string", "description": "The token, for `?access_token=` of an event stream."},
            "expiresAt": {"type": "string", "description": "When it stops working (RFC 3339)."}
        },
        "additionalProperties": false
    })
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
    fn access_tokens_are_read_once_from_the_query() {
        assert_eq!(access_token(None), None);
        assert_eq!(access_token(Some("watch=true")), None);
        assert_eq!(
            access_token(Some("watch=true&access_token=abc")),
            Some(Ok("abc".to_string()))
        );
        assert!(matches!(
            access_token(Some("access_token=a&access_token=b")),
            Some(Err(_))
        ));
        assert!(matches!(access_token(Some("access_token=")), Some(Err(_))));
        let stream = |uri: &str, accept: Option<&str>, method: Method| {
            let mut builder = axum::http::Request::builder().method(method).uri(uri);
            if let Some(accept) = accept {
                builder = builder.header(header::ACCEPT, accept);
            }
            opens_stream(&builder.body(axum::body::Body::empty()).unwrap())
        };
        assert!(stream("/v2/events?access_token=x", None, Method::GET));
        assert!(stream("/v2/x/status?watch=true", None, Method::GET));
        assert!(stream("/v2/x/status", Some("text/event-stream"), Method::GET));
        assert!(!stream("/v2/x/status", None, Method::GET));
        assert!(!stream("/v2/events", None, Method::POST));
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
