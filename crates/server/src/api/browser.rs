//! What keeps a browser from being turned against the API, and what makes every error JSON.
//!
//! A web page an operator has open can make the browser send requests to emco. Three rules stop it:
//! - a request with an `Origin` header that is neither the server's own origin (the request's `Host`) nor one of
//!   `ServerConfig::cors_allowed_origins` is refused with 403 before any handler runs (requests without `Origin`,
//!   from curl or emcoctl, are not affected);
//! - a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin is answered here with
//!   the `Access-Control-Allow-*` headers; an allowed cross-origin request gets `Access-Control-Allow-Origin`;
//! - JSON bodies must be sent as JSON (`body::json_body`), so a "simple" `text/plain` request cannot create
//!   anything.
//!
//! Besides, every error answer that is not already the API's `{"code","message"}` JSON (405 from the router,
//! 414 for a too-long URI) is rewritten into it, headers such as `Allow` kept.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiError, AppState};

/// Longest request URI (path and query) served; longer ones are answered 414.
pub(crate) const MAX_URI_BYTES: usize = 8 * 1024;

/// The methods of the API, as a preflight announces them.
const ALLOW_METHODS: &str = "GET, POST, PUT, DELETE";
/// The request headers a cross-origin page may send.
const ALLOW_HEADERS: &str = "content-type, accept, authorization";
/// How long a browser may cache a preflight answer, in seconds.
const MAX_AGE: &str = "600";

/// The middleware: URI length, origin check, preflight, CORS headers, JSON errors.
pub(crate) async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let uri_len = request.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if uri_len > MAX_URI_BYTES {
        return ApiError::new(
            StatusCode::URI_TOO_LONG,
            "UriTooLong",
            format!("the request URI is {uri_len} bytes long; the limit is {MAX_URI_BYTES}"),
        )
        .into_response();
    }
    let cross_origin = match request.headers().get(header::ORIGIN) {
        None => None,
        Some(origin) => match check_origin(origin, request.headers(), &state.config().cors_allowed_origins) {
            Ok(cross) => cross.then(|| origin.clone()),
            Err(err) => return err.into_response(),
        },
    };
    let is_preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if is_preflight && request.headers().contains_key(header::ORIGIN) {
        return preflight(cross_origin);
    }
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let mut response = next.run(request).await;
    if let Some(origin) = cross_origin {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("location"),
        );
        headers.append(header::VARY, HeaderValue::from_static("origin"));
    }
    json_error(response, &method, &path)
}

/// `Ok(false)`: the request comes from the server's own origin; `Ok(true)`: from an allowed other origin;
/// `Err`: 403.
fn check_origin(origin: &HeaderValue, headers: &HeaderMap, allowed: &[String]) -> Result<bool, ApiError> {
    let refuse = |shown: &str| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "OriginNotAllowed",
            format!(
                "requests from origin '{shown}' are not allowed; start emco with --cors-allowed-origins to allow it"
            ),
        )
    };
    let Ok(text) = origin.to_str() else {
        return Err(refuse(&String::from_utf8_lossy(origin.as_bytes())));
    };
    let Some(origin_norm) = normalize_origin(text) else {
        return Err(refuse(text));
    };
    let host = headers.get(header::HOST).and_then(|host| host.to_str().ok());
    if let Some(host) = host {
        let own = ["http", "https"]
            .iter()
            .filter_map(|scheme| normalize_origin(&format!("{scheme}://{host}")))
            .any(|own| own == origin_norm);
        if own {
            return Ok(false);
        }
    }
    if allowed
        .iter()
        .filter_map(|allowed| normalize_origin(allowed))
        .any(|allowed| allowed == origin_norm)
    {
        return Ok(true);
    }
    Err(refuse(text))
}

/// An origin `scheme://host[:port]` in one spelling: lower case, default port dropped, trailing `/` dropped.
/// `None` when it is not an http(s) origin (`null`, a path, …).
pub fn normalize_origin(origin: &str) -> Option<String> {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, authority) = origin.split_once("://")?;
    let default_port = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return None,
    };
    if authority.is_empty()
        || authority
            .chars()
            .any(|c| matches!(c, '/' | '?' | '#' | '@') || c.is_whitespace())
    {
        return None;
    }
    let authority = authority.strip_suffix(default_port).unwrap_or(authority);
    Some(format!("{scheme}://{authority}"))
}

/// The answer to a preflight from an allowed origin (`Some` for another origin, `None` for the server's own).
fn preflight(cross_origin: Option<HeaderValue>) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    if let Some(origin) = cross_origin {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOW_METHODS),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOW_HEADERS),
    );
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(MAX_AGE));
    headers.insert(
        header::VARY,
        HeaderValue::from_static("origin, access-control-request-method, access-control-request-headers"),
    );
    response
}

/// Rewrites an error answer that is not JSON into the API's error JSON, keeping its status and headers.
fn json_error(response: Response, method: &Method, path: &str) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let (code, message) = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed = parts
                .headers
                .get(header::ALLOW)
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default();
            (
                "MethodNotAllowed",
                format!("method {method} is not allowed on {path}; allowed: {allowed}"),
            )
        }
        StatusCode::NOT_FOUND => ("NotFound", format!("no API path {path}")),
        StatusCode::URI_TOO_LONG => ("UriTooLong", "the request URI is too long".to_string()),
        StatusCode::PAYLOAD_TOO_LARGE => ("PayloadTooLarge", "the request body is too large".to_string()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            "UnsupportedMediaType",
            "the request's Content-Type is not supported".to_string(),
        ),
        _ => (
            "HttpError",
            status
                .canonical_reason()
                .unwrap_or("the request failed")
                .to_string(),
        ),
    };
    let body = serde_json::json!({"code": code, "message": message}).to_string();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Response::from_parts(parts, Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::normalize_origin;

    #[test]
    fn origins_are_compared_in_one_spelling() {
        assert_eq!(
            normalize_origin("HTTP://Example.com:80/").as_deref(),
            Some("http://example.com")
        );
        assert_eq!(normalize_origin("https://a:443").as_deref(), Some("https://a"));
        assert_eq!(
            normalize_origin("https://a:8443").as_deref(),
            Some("https://a:8443")
        );
        assert_eq!(normalize_origin("null"), None);
        assert_eq!(normalize_origin("http://a/b"), None);
        assert_eq!(normalize_origin("ftp://a"), None);
        assert_eq!(normalize_origin("http://"), None);
    }
}
