//! Server-sent event streams (issue #19 §1): the machinery every streaming route shares.
//!
//! - [`StreamRequest`] reads what a GET asks: whether it wants a stream (`Accept: text/event-stream` or
//!   `watch=true`), where to resume (`Last-Event-ID` header or `lastEventId` query), and the other query pairs,
//!   which the route validates as its plain query does (a bad one is answered 400 before any stream starts).
//! - [`answer_or_stream`] answers a status-like GET from a function that computes the answer bytes: the plain
//!   answer, or a stream of `event: status` (`id:` the store revision the answer was computed at, `data:` the
//!   answer on one line): first the current answer (unless `Last-Event-ID` says the client has it), then a new
//!   event only when the bytes changed, at most one per [`crate::ServerConfig::watch_interval`]. It wakes on the
//!   status index's progress (every store write the index applied), never by walking everything on a timer; a
//!   slower tick (half the status grace, 1–15 s) recomputes too, because staleness changes with time alone.
//!   Streams of the same path and query share one computation and one buffer per interval, their first
//!   answer included.
//! - [`open`] runs any producer (the lifecycle events of `/v2/events` too) as a stream: a bounded channel to the
//!   response body (a reader that falls that far behind is dropped, never buffered for), `: keep-alive` comments
//!   every [`KEEP_ALIVE`], at most [`crate::ServerConfig::max_streams`] open (503 `TooManyStreams` beyond), and
//!   an end at shutdown ([`Streams::shut_down`]) so that the graceful shutdown never waits for an open stream.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::body::Frame;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::answer_body::{self, AnswerBody, Writers};
use crate::{ApiError, AppState};

/// How often an idle stream sends `: keep-alive` (proxies close connections that say nothing for long).
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How many events may wait for a reader; a reader further behind is dropped.
pub(crate) const STREAM_BUFFER: usize = 16;
/// The query parameters that belong to the stream, not to the answer.
const STREAM_PARAMETERS: [&str; 3] = ["watch", "lastEventId", "access_token"];
/// The values `watch` takes (empty: true).
pub(crate) const WATCH_VALUES: &[&str] = &["true", "false", ""];
/// The longest `Last-Event-ID` read (a revision has at most 19 digits).
const MAX_EVENT_ID_BYTES: usize = 32;
/// The shape of `lastEventId` (and `Last-Event-ID`) as the API document states it: empty, or a store revision of at
/// most 18 digits (always below 2^63).
pub(crate) const EVENT_ID_PATTERN: &str = "^[0-9]{0,18}$";

/// The open streams of a server: their count and limit, the shutdown that ends them, and the answers streams of
/// the same path and query share.
pub(crate) struct Streams {
    open: Arc<AtomicUsize>,
    max: usize,
    shutdown: CancellationToken,
    shared: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Shared>>>>>,
    /// The turns of answers written while they are sent (plain answers and streams' answers alike).
    writers: Writers,
}

/// An answer computed for every stream of one path and query.
struct Shared {
    answer: Answer,
    computed: Instant,
}

impl Streams {
    /// No stream yet; at most `max` at once.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            open: Arc::new(AtomicUsize::new(0)),
            max,
            shutdown: CancellationToken::new(),
            shared: Mutex::new(HashMap::new()),
            writers: Writers::new(answer_body::DEFAULT_WRITERS, answer_body::DEFAULT_CHUNK_TIMEOUT),
        }
    }

    /// The turns of answers written while they are sent.
    pub(crate) fn writers(&self) -> &Writers {
        &self.writers
    }

    /// Ends every open stream and refuses new ones (the server is shutting down).
    pub(crate) fn shut_down(&self) {
        self.shutdown.cancel();
    }

    /// How many streams are open.
    pub(crate) fn open_count(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// Takes a slot, or answers 503 when every slot is taken (or the server is shutting down).
    fn admit(&self) -> Result<Slot, ApiError> {
        if self.shutdown.is_cancelled() {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "ShuttingDown",
                "the server is shutting down; streams are not started",
            ));
        }
        let taken = self.open.fetch_add(1, Ordering::AcqRel);
        let slot = Slot(self.open.clone());
        if taken >= self.max {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "TooManyStreams",
                format!(
                    "{} streams are open, the most this server serves (emco serve --max-streams); try again later",
                    self.max
                ),
            ));
        }
        Ok(slot)
    }

    /// The shared answer slot of `key` (kept while a stream holds it).
    fn shared_slot(&self, key: &str) -> Arc<tokio::sync::Mutex<Option<Shared>>> {
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        shared.entry(key.to_string()).or_default().clone()
    }

    /// Forgets the shared answers no stream holds any more.
    fn forget_unused(&self) {
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        shared.retain(|_, slot| Arc::strong_count(slot) > 1);
    }
}

/// One open stream's place in the count; given back when dropped.
#[derive(Debug)]
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer and the store revision it was computed at (every write up to it is in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    /// The store revision read before computing it.
    pub(crate) revision: i64,
    /// The answer's JSON.
    pub(crate) body: Bytes,
}

/// An answer prepared to be written (see [`super::answer_body`]) and the store revision it reflects.
#[derive(Debug)]
pub(crate) struct PreparedAnswer {
    /// The store revision read before preparing it.
    pub(crate) revision: i64,
    /// Its JSON, or what writes it.
    pub(crate) body: AnswerBody,
}

/// The future of one computation of an answer.
pub(crate) type AnswerFuture = Pin<Box<dyn Future<Output = Result<PreparedAnswer, ApiError>> + Send>>;
/// What computes a route's answer, as often as a stream needs it.
pub(crate) type ComputeAnswer = Arc<dyn Fn() -> AnswerFuture + Send + Sync>;

/// What a GET asks of a (possibly) streaming route.
#[derive(Debug, Clone)]
pub(crate) struct StreamRequest {
    /// Whether it asks for a stream.
    pub(crate) streaming: bool,
    /// The revision of the last event the client has (`Last-Event-ID`, else `lastEventId`).
    pub(crate) last_event_id: Option<i64>,
    /// The query pairs without the stream's own (`watch`, `lastEventId`, `access_token`), in order.
    pub(crate) pairs: Vec<(String, String)>,
    /// The path and the query pairs, the key under which streams share answers.
    key: String,
}

impl<S: Send + Sync> FromRequestParts<S> for StreamRequest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let all: Vec<(String, String)> =
            axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
                .map_err(|err| ApiError::invalid(format!("bad query string: {err}")))?
                .0;
        Self::read(&parts.headers, parts.uri.path(), all)
    }
}

impl StreamRequest {
    /// Reads the stream's parameters from the headers and the query pairs of a GET of `path`.
    pub(crate) fn read(
        headers: &HeaderMap,
        path: &str,
        all: Vec<(String, String)>,
    ) -> Result<Self, ApiError> {
        let mut streaming = accepts_event_stream(headers);
        let mut last_event_id = None;
        if let Some(value) = headers.get("last-event-id") {
            let text = value
                .to_str()
                .map_err(|_| invalid_event_id("the Last-Event-ID header", "not text"))?;
            last_event_id = parse_event_id(text, "the Last-Event-ID header")?;
        }
        let mut pairs = Vec::with_capacity(all.len());
        for (name, value) in all {
            match name.as_str() {
                "watch" => {
                    streaming |= match value.as_str() {
                        "true" | "" => true,
                        "false" => false,
                        other => {
                            return Err(ApiError::new(
                                StatusCode::BAD_REQUEST,
                                "InvalidQuery",
                                format!(
                                    "invalid query parameter 'watch': '{}' is not true or false",
                                    emco_model::shown(other)
                                ),
                            ));
                        }
                    };
                }
                "lastEventId" if last_event_id.is_none() => {
                    last_event_id = parse_event_id(&value, "query parameter 'lastEventId'")?;
                }
                _ if STREAM_PARAMETERS.contains(&name.as_str()) => {}
                _ => pairs.push((name, value)),
            }
        }
        let mut key = path.to_string();
        for (name, value) in &pairs {
            key.push('\n');
            key.push_str(name);
            key.push('=');
            key.push_str(value);
        }
        Ok(Self {
            streaming,
            last_event_id,
            pairs,
            key,
        })
    }
}

/// Whether the `Accept` header asks for `text/event-stream`.
pub(crate) fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|media| {
            media
                .split(';')
                .next()
                .is_some_and(|media| media.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

/// A `Last-Event-ID`: a store revision; empty means none.
fn parse_event_id(text: &str, what: &str) -> Result<Option<i64>, ApiError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if text.len() > MAX_EVENT_ID_BYTES {
        return Err(invalid_event_id(what, "longer than a revision"));
    }
    text.parse::<i64>()
        .ok()
        .filter(|revision| *revision >= 0)
        .map(Some)
        .ok_or_else(|| {
            invalid_event_id(
                what,
                &format!("'{}' is not a store revision", emco_model::shown(text)),
            )
        })
}

fn invalid_event_id(what: &str, why: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "InvalidQuery",
        format!("invalid {what}: {why} (an event id is a store revision, a number)"),
    )
}

/// Answers a status-like GET: the answer `compute` makes, or, when `request` asks for a stream, a stream of
/// `event: status` events as the module describes. The first computation happens before the answer starts, so
/// whatever it refuses (a bad parameter, a missing resource) is answered with its error code.
pub(crate) async fn answer_or_stream(
    state: &AppState,
    request: &StreamRequest,
    compute: ComputeAnswer,
) -> Result<Response, ApiError> {
    if !request.streaming {
        let answer = compute().await?;
        let body = answer.body.into_body(state.streams().writers()).await?;
        return Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response());
    }
    // The first answer too is the one the streams of this path and query share: opening many streams costs one
    // computation per interval, and they all hold the same bytes.
    let streams = state.streams();
    let shared = streams.shared_slot(&request.key);
    let first = shared_answer(state, &shared, &compute, state.config().watch_interval).await?;
    let producer_state = state.clone();
    let last_event_id = request.last_event_id;
    let response = open(state, move |events| async move {
        status_events(&producer_state, events, first, last_event_id, compute, shared).await;
    });
    state.streams().forget_unused();
    response
}

/// Where a producer sends its events (already in SSE form).
pub(crate) struct EventSink {
    sender: mpsc::Sender<EventParts>,
    shutdown: CancellationToken,
    keep_alive: tokio::time::Interval,
}

/// Why a producer stops.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The client went away, is too slow, or the server is shutting down.
    Ended,
}

impl EventSink {
    /// Queues an event; a reader [`STREAM_BUFFER`] events behind is dropped.
    pub(crate) fn send(&mut self, event: impl Into<EventParts>) -> Result<(), Stop> {
        let event = event.into();
        match self.sender.try_send(event) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::info!(
                    buffered = STREAM_BUFFER,
                    "a stream's reader fell behind; dropping the stream"
                );
                Err(Stop::Ended)
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(Stop::Ended),
        }
    }

    /// Waits for `future`, sending keep-alives meanwhile; [`Stop`] when the client went away or the server shuts
    /// down first.
    pub(crate) async fn wait<T>(&mut self, future: impl Future<Output = T>) -> Result<T, Stop> {
        tokio::pin!(future);
        loop {
            tokio::select! {
                biased;
                () = self.shutdown.cancelled() => return Err(Stop::Ended),
                () = self.sender.closed() => return Err(Stop::Ended),
                value = &mut future => return Ok(value),
                _ = self.keep_alive.tick() => self.send(Bytes::from_static(b": keep-alive\n\n"))?,
            }
        }
    }
}

/// Starts a stream whose events `producer` sends: a 200 `text/event-stream` response, or 503 when too many
/// streams are open. The producer runs in its own task and is dropped when the client goes away.
pub(crate) fn open<P, F>(state: &AppState, producer: P) -> Result<Response, ApiError>
where
    P: FnOnce(EventSink) -> F + Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let streams = state.streams();
    let slot = streams.admit()?;
    let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
    let mut keep_alive = tokio::time::interval_at(Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    keep_alive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let sink = EventSink {
        sender,
        shutdown: streams.shutdown.clone(),
        keep_alive,
    };
    tokio::spawn(async move {
        let _slot = slot;
        producer(sink).await;
    });
    let mut response = Body::new(EventBody {
        receiver,
        pending: std::collections::VecDeque::new(),
    })
    .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies such as nginx would otherwise hold events back to fill their buffers.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// One event as the pieces written one after the other: a large answer is shared by every stream that sends it,
/// never copied into each stream's event.
pub(crate) struct EventParts(Vec<Bytes>);

impl From<Bytes> for EventParts {
    fn from(bytes: Bytes) -> Self {
        Self(vec![bytes])
    }
}

/// The response body of a stream: the events its producer queues, until the producer ends.
struct EventBody {
    receiver: mpsc::Receiver<EventParts>,
    /// The rest of the event being written.
    pending: std::collections::VecDeque<Bytes>,
}

impl HttpBody for EventBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        loop {
            if let Some(bytes) = self.pending.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(bytes))));
            }
            match self.receiver.poll_recv(cx) {
                Poll::Ready(Some(EventParts(parts))) => self.pending.extend(parts),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// One SSE event: `event: {name}`, `id: {id}` (if any), `data: {data}` (which must be one line).
pub(crate) fn event(name: &str, id: Option<i64>, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + name.len() + 40);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.push(b'\n');
    if let Some(id) = id {
        out.extend_from_slice(format!("id: {id}\n").as_bytes());
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// A `status` event whose data is `answer` (one line), sharing its bytes rather than copying them.
fn status_event(revision: i64, answer: &Bytes) -> EventParts {
    EventParts(vec![
        Bytes::from(format!("event: status\nid: {revision}\ndata: ")),
        one_line(answer),
        Bytes::from_static(b"\n\n"),
    ])
}

/// An answer as one line: compact JSON has no line break, but an answer from elsewhere is made compact.
fn one_line(body: &Bytes) -> Bytes {
    if !body.contains(&b'\n') && !body.contains(&b'\r') {
        return body.clone();
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(json) => Bytes::from(json.to_string()),
        Err(_) => Bytes::from(
            body.iter()
                .map(|byte| {
                    if *byte == b'\n' || *byte == b'\r' {
                        b' '
                    } else {
                        *byte
                    }
                })
                .collect::<Vec<u8>>(),
        ),
    }
}

/// The producer of a status stream: the first answer, then each changed answer, coalesced.
async fn status_events(
    state: &AppState,
    mut events: EventSink,
    first: Answer,
    last_event_id: Option<i64>,
    compute: ComputeAnswer,
    shared: Arc<tokio::sync::Mutex<Option<Shared>>>,
) {
    let interval = state.config().watch_interval;
    let grace = state.config().status_grace;
    let freshness_tick = (grace / 2).clamp(Duration::from_secs(1), KEEP_ALIVE);
    let mut progress = state.status().subscribe();
    progress.borrow_and_update();
    let mut shown = first.body.clone();
    let mut computed_at = Instant::now();
    let resumed_with_it = last_event_id.is_some_and(|id| first.revision <= id);
    if !resumed_with_it && events.send(status_event(first.revision, &first.body)).is_err() {
        return;
    }
    loop {
        // A change of the index (any store write it applied), or time passing for staleness.
        let woken = events
            .wait(async {
                tokio::select! {
                    changed = progress.changed() => changed.is_ok(),
                    () = tokio::time::sleep(freshness_tick) => true,
                }
            })
            .await;
        match woken {
            Ok(true) => {}
            Ok(false) | Err(Stop::Ended) => return,
        }
        // At most one computation per interval; changes meanwhile are folded into it.
        if events
            .wait(tokio::time::sleep_until(computed_at + interval))
            .await
            .is_err()
        {
            return;
        }
        progress.borrow_and_update();
        computed_at = Instant::now();
        let answer = match events
            .wait(shared_answer(state, &shared, &compute, interval))
            .await
        {
            Ok(Ok(answer)) => answer,
            Ok(Err(err)) => {
                // The resource was deleted, or the store failed: the stream says so and ends.
                let message = serde_json::json!({"code": err.code, "message": err.message});
                let _ = events.send(event("error", None, message.to_string().as_bytes()));
                return;
            }
            Err(Stop::Ended) => return,
        };
        // The shared answer is the same buffer for every stream: compare its bytes only when it is another one.
        let same_buffer = answer.body.as_ptr() == shown.as_ptr() && answer.body.len() == shown.len();
        if !same_buffer && answer.body != shown {
            if events.send(status_event(answer.revision, &answer.body)).is_err() {
                return;
            }
            shown = answer.body;
        }
    }
}

/// The answer of the streams sharing `shared`: the one computed last, if it reflects every write the store had
/// when asked and is younger than `interval`; else a new one.
async fn shared_answer(
    state: &AppState,
    shared: &tokio::sync::Mutex<Option<Shared>>,
    compute: &ComputeAnswer,
    interval: Duration,
) -> Result<Answer, ApiError> {
    let revision = state.store().revision();
    let mut shared = shared.lock().await;
    if let Some(known) = &*shared
        && known.answer.revision >= revision
        && known.computed.elapsed() < interval
    {
        return Ok(known.answer.clone());
    }
    let prepared = compute().await?;
    let answer = Answer {
        revision: prepared.revision,
        body: prepared.body.into_bytes(state.streams().writers()).await?,
    };
    *shared = Some(Shared {
        answer: answer.clone(),
        computed: Instant::now(),
    });
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(name, value)| ((*name).to_string(), (*value).to_string()))
            .collect()
    }

    #[test]
    fn a_stream_is_asked_by_accept_or_watch() {
        let plain = StreamRequest::read(&HeaderMap::new(), "/s", pairs(&[("status", "ready")])).unwrap();
        assert!(!plain.streaming);
        assert_eq!(plain.pairs, pairs(&[("status", "ready")]));
        let accept = headers(&[("accept", "application/json, text/event-stream;q=0.9")]);
        assert!(StreamRequest::read(&accept, "/s", Vec::new()).unwrap().streaming);
        let watch = StreamRequest::read(
            &HeaderMap::new(),
            "/s",
            pairs(&[("watch", "true"), ("app", "a"), ("access_token", "t")]),
        )
        .unwrap();
        assert!(watch.streaming);
        assert_eq!(
            watch.pairs,
            pairs(&[("app", "a")]),
            "the stream's parameters are not the query's"
        );
        assert_eq!(watch.key, "/s\napp=a");
        let refused = StreamRequest::read(&HeaderMap::new(), "/s", pairs(&[("watch", "yes")])).unwrap_err();
        assert!(refused.message.contains("'watch'"), "{}", refused.message);
    }

    #[test]
    fn last_event_id_comes_from_the_header_before_the_query() {
        let both = StreamRequest::read(
            &headers(&[("last-event-id", "42")]),
            "/s",
            pairs(&[("lastEventId", "7")]),
        )
        .unwrap();
        assert_eq!(both.last_event_id, Some(42));
        let query = StreamRequest::read(&HeaderMap::new(), "/s", pairs(&[("lastEventId", "7")])).unwrap();
        assert_eq!(query.last_event_id, Some(7));
        for bad in ["x", "-1", "99999999999999999999999999999999999"] {
            let err = StreamRequest::read(&headers(&[("last-event-id", bad)]), "/s", Vec::new()).unwrap_err();
            assert!(err.message.contains("Last-Event-ID"), "{bad}: {}", err.message);
        }
    }

    #[test]
    fn a_status_event_is_the_same_bytes_in_shared_parts() {
        let EventParts(parts) = status_event(12, &Bytes::from_static(b"{\"a\":1}"));
        assert_eq!(parts.concat(), event("status", Some(12), b"{\"a\":1}").to_vec());
    }

    #[test]
    fn events_are_framed_on_one_line() {
        assert_eq!(
            event("status", Some(12), b"{\"a\":1}"),
            Bytes::from_static(b"event: status\nid: 12\ndata: {\"a\":1}\n\n")
        );
        assert_eq!(
            one_line(&Bytes::from_static(b"{\n  \"a\": \"x\"\n}")),
            Bytes::from_static(b"{\"a\":\"x\"}")
        );
    }

    #[test]
    fn slots_are_bounded_and_given_back() {
        let streams = Streams::new(2);
        let first = streams.admit().unwrap();
        let _second = streams.admit().unwrap();
        let refused = streams.admit().unwrap_err();
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(streams.open_count(), 2, "a refused stream gives its slot back");
        drop(first);
        assert!(streams.admit().is_ok());
        streams.shut_down();
        assert_eq!(streams.admit().unwrap_err().code, "ShuttingDown");
    }
}
