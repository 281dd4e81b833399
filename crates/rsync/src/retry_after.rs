//! `Retry-After` from clusters: the header parsed (delta-seconds or an HTTP-date, bounded) and a client layer that
//! copies it from a 429 or 5xx answer into the Kubernetes `Status` the answer carries, as
//! `details.retryAfterSeconds` — where the API server itself puts it — so that the kube-rs error rsync sees keeps
//! it (kube-rs turns an error answer into its `Status` and drops the headers).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use kube::client::{Body, DynBody};
use serde_json::{Value as Json, json};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The most bytes of an error answer read to add `retryAfterSeconds` to it (the API server's are well below).
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// The most characters of a non-`Status` answer kept as the message of the `Status` made for it.
const MESSAGE_LIMIT: usize = 256;

/// The delay a `Retry-After` value asks for, at most `max`: delta-seconds (`120`) or an HTTP-date (IMF-fixdate,
/// RFC 850 or asctime, in GMT) measured from `now`; a date in the past asks for no delay. `None` for anything
/// else.
#[must_use]
pub(crate) fn parse_retry_after(value: &str, now: jiff::Timestamp, max: Duration) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Digits beyond what u64 holds are still a (huge) number of seconds.
        let seconds = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(seconds).min(max));
    }
    let ahead = parse_http_date(value)?.duration_since(now);
    // Negative (a date in the past) does not convert: no delay.
    Some(Duration::try_from(ahead).unwrap_or(Duration::ZERO).min(max))
}

/// An HTTP-date in any of the three forms RFC 9110 §5.6.7 asks recipients to accept.
fn parse_http_date(value: &str) -> Option<jiff::Timestamp> {
    if value.len() > 64 {
        return None;
    }
    // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    if let Ok(timestamp) = jiff::fmt::rfc2822::DateTimeParser::new().parse_timestamp(value) {
        return Some(timestamp);
    }
    let gmt = |format: &str| {
        jiff::fmt::strtime::parse(format, value)
            .ok()?
            .to_datetime()
            .ok()?
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|zoned| zoned.timestamp())
    };
    // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`; asctime: `Sun Nov  6 08:49:37 1994`.
    gmt("%A, %d-%b-%y %H:%M:%S GMT").or_else(|| gmt("%a %b %e %H:%M:%S %Y"))
}

/// Adds `details.retryAfterSeconds` to an error answer's body: to its `Status` when it is one, else to a `Status`
/// made for it (the answer's text as the message).
fn with_retry_after(body: &[u8], status: StatusCode, seconds: u32) -> Bytes {
    let parsed = serde_json::from_slice::<Json>(body)
        .ok()
        .filter(|value| value.get("kind").and_then(Json::as_str) == Some("Status"));
    let mut object = parsed.unwrap_or_else(|| {
        let text: String = String::from_utf8_lossy(body)
            .trim()
            .chars()
            .take(MESSAGE_LIMIT)
            .collect();
        json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "message": text,
            "reason": status.canonical_reason().unwrap_or_default(), "code": status.as_u16(),
        })
    });
    if !object["details"].is_object() {
        object["details"] = json!({});
    }
    object["details"]["retryAfterSeconds"] = json!(seconds);
    Bytes::from(object.to_string())
}

/// The layer: see the module's documentation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryAfterLayer {
    /// The longest delay honoured (longer ones are cut to it).
    max: Duration,
}

impl RetryAfterLayer {
    pub(crate) fn new(max: Duration) -> Self {
        Self { max }
    }
}

impl<S> tower::Layer<S> for RetryAfterLayer {
    type Service = RetryAfterService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RetryAfterService { inner, max: self.max }
    }
}

/// The service [`RetryAfterLayer`] wraps around a client's stack.
#[derive(Debug, Clone)]
pub(crate) struct RetryAfterService<S> {
    inner: S,
    max: Duration,
}

impl<S> tower::Service<Request<Body>> for RetryAfterService<S>
where
    S: tower::Service<Request<Body>, Response = Response<Box<DynBody>>, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Response<Box<DynBody>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let answer = self.inner.call(request);
        let max = self.max;
        Box::pin(async move {
            let response = answer.await?;
            Ok(add_retry_after(response, max).await)
        })
    }
}

/// The answer with its `Retry-After` (if a 429 or 5xx has one) copied into its `Status`.
async fn add_retry_after(response: Response<Box<DynBody>>, max: Duration) -> Response<Box<DynBody>> {
    let status = response.status();
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return response;
    }
    let Some(delay) = response
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| parse_retry_after(value, jiff::Timestamp::now(), max))
    else {
        return response;
    };
    // Whole seconds, rounded up: `0` would mean "no advice" in a Status.
    let seconds = u32::try_from(delay.as_secs() + u64::from(delay.subsec_nanos() > 0)).unwrap_or(u32::MAX);
    if seconds == 0 {
        return response;
    }
    let (mut parts, mut body) = response.into_parts();
    // An answer too large or broken becomes an empty one: its status line and Retry-After still count.
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            bytes.clear();
            break;
        };
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > ERROR_BODY_LIMIT {
                bytes.clear();
                break;
            }
            bytes.extend_from_slice(&data);
        }
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    let body: Box<DynBody> =
        Box::new(Full::new(with_retry_after(&bytes, status, seconds)).map_err(|never| match never {}));
    Response::from_parts(parts, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: Duration = Duration::from_secs(300);

    fn now() -> jiff::Timestamp {
        "1994-11-06T08:49:00Z".parse().unwrap()
    }

    #[test]
    fn seconds_are_taken_as_they_are_and_bounded() {
        assert_eq!(parse_retry_after("5", now(), MAX), Some(Duration::from_secs(5)));
        assert_eq!(
            parse_retry_after(" 120 ", now(), MAX),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after("0", now(), MAX), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("86400", now(), MAX), Some(MAX));
        assert_eq!(
            parse_retry_after("99999999999999999999999999999", now(), MAX),
            Some(MAX)
        );
    }

    #[test]
    fn http_dates_count_from_now_in_every_form() {
        let in_37s = Some(Duration::from_secs(37));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now(), MAX),
            in_37s
        );
        assert_eq!(
            parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now(), MAX),
            in_37s
        );
        assert_eq!(parse_retry_after("Sun Nov  6 08:49:37 1994", now(), MAX), in_37s);
        // In the past: no delay; far ahead: bounded.
        assert_eq!(
            parse_retry_after("Sat, 05 Nov 1994 08:49:37 GMT", now(), MAX),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Fri, 01 Jan 2100 00:00:00 GMT", now(), MAX),
            Some(MAX)
        );
    }

    #[test]
    fn garbage_asks_for_nothing() {
        for garbage in [
            "",
            "soon",
            "-5",
            "5s",
            "1.5",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994",
            &"9".repeat(10_000).replace('9', "x"),
        ] {
            assert_eq!(parse_retry_after(garbage, now(), MAX), None, "{garbage:?}");
        }
    }

    #[test]
    fn the_delay_is_added_to_the_status_or_to_one_made_for_the_answer() {
        let status = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"slow down","reason":"TooManyRequests","code":429}"#;
        let rewritten: Json =
            serde_json::from_slice(&with_retry_after(status, StatusCode::TOO_MANY_REQUESTS, 2)).unwrap();
        assert_eq!(rewritten["message"], "slow down");
        assert_eq!(rewritten["details"]["retryAfterSeconds"], 2);
        let parsed: kube::core::Status = serde_json::from_value(rewritten).unwrap();
        assert_eq!(parsed.details.map(|d| d.retry_after_seconds), Some(2));

        let html = b"<html>503 Service Unavailable</html>";
        let made: Json =
            serde_json::from_slice(&with_retry_after(html, StatusCode::SERVICE_UNAVAILABLE, 7)).unwrap();
        assert_eq!(
            (
                &made["code"],
                &made["reason"],
                &made["details"]["retryAfterSeconds"]
            ),
            (&json!(503), &json!("Service Unavailable"), &json!(7))
        );
    }

    #[tokio::test]
    async fn the_layer_moves_the_header_of_a_429_into_its_status() {
        use tower::{Layer, ServiceExt};
        let cluster = tower::service_fn(|_request: Request<Body>| async {
            let body: Box<DynBody> = Box::new(
                Full::new(Bytes::from_static(
                    br#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":429}"#,
                ))
                .map_err(|never| match never {}),
            );
            let response = Response::builder()
                .status(429)
                .header(header::RETRY_AFTER, "2")
                .header(header::CONTENT_LENGTH, "64")
                .body(body)
                .unwrap();
            Ok::<_, BoxError>(response)
        });
        let service = RetryAfterLayer::new(MAX).layer(cluster);
        let response = service.oneshot(Request::new(Body::empty())).await.unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(response.headers().get(header::CONTENT_LENGTH).is_none());
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let status: kube::core::Status = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(status.details.map(|d| d.retry_after_seconds), Some(2));
    }
}
