//! The request id: every request gets one, logged with everything the request causes and echoed in the answer's
//! `X-Request-Id` header, so that a client's report ("my PUT at 03:12 failed") finds its log lines.
//!
//! A client may send its own `X-Request-Id` (a proxy's, or a script's correlation id); it is kept when it is a
//! plain token of at most [`MAX_REQUEST_ID_LEN`] characters (letters, digits and `-._:/+=@`), because it ends up
//! in every log line. Any other value, or none, is replaced by a new random UUID.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::HeaderName;
use axum::middleware::Next;
use axum::response::Response;

/// The header that carries a request's id, both ways.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The longest client-chosen request id that is kept.
pub const MAX_REQUEST_ID_LEN: usize = 128;

/// The id of the request being served (a request extension).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestId(pub(crate) HeaderValue);

impl RequestId {
    /// The id as text.
    pub(crate) fn as_str(&self) -> &str {
        // Only ids made of ASCII characters are ever built (`acceptable` or a UUID).
        self.0.to_str().unwrap_or_default()
    }
}

/// Whether a client's id is kept: non-empty, short, and made of characters that cannot forge a log line.
fn acceptable(value: &HeaderValue) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_REQUEST_ID_LEN
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:/+=@".contains(b))
}

/// The middleware: picks the request's id, stores it in the request's extensions for the log span, and sets it
/// on the answer, whatever answered (a route, a guard, the fallback).
pub(crate) async fn assign(mut request: Request, next: Next) -> Response {
    let id = match request.headers().get(&REQUEST_ID_HEADER) {
        Some(value) if acceptable(value) => value.clone(),
        _ => {
            let fresh = uuid::Uuid::new_v4().hyphenated().to_string();
            HeaderValue::from_str(&fresh).expect("a UUID is a valid header value")
        }
    };
    request.extensions_mut().insert(RequestId(id.clone()));
    let mut response = next.run(request).await;
    response.headers_mut().insert(REQUEST_ID_HEADER, id);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_short_ids_are_kept() {
        let ok = |text: &str| acceptable(&HeaderValue::from_str(text).expect("header value"));
        assert!(ok("abc-123"));
        assert!(ok("trace:4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7"));
        assert!(ok(&"a".repeat(MAX_REQUEST_ID_LEN)));
        assert!(!ok(&"a".repeat(MAX_REQUEST_ID_LEN + 1)));
        assert!(!ok(""));
        assert!(!ok("two words"));
        assert!(!ok("quote\"injection"));
        assert!(!ok("{\"json\":1}"));
    }
}
