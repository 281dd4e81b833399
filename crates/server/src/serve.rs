//! The serving loop: accepts connections on the listener, optionally runs a TLS handshake, and serves the API's
//! router on each with hyper's HTTP/1.1 or HTTP/2 server (whichever the client's first bytes speak: HTTP/2 by
//! prior knowledge on plain connections, by ALPN `h2` under TLS), holding every connection to time and count
//! limits. One HTTP/2 connection carries many requests (a pull agent's long poll and its reports share one), at
//! most [`HTTP2_MAX_STREAMS`] at once, with flow-control windows that bound the request bodies it may send ahead.
//!
//! - **Connection limit.** At most [`ServeOptions::max_connections`] connections are open. When a new one is
//!   accepted at the limit, the connection idle longest (accepted, no request in flight) is closed to make room;
//!   only when every connection has a request in flight does the new one wait for a connection to end. So idle
//!   sockets, however many, never keep a new client from being served.
//! - **Header-read timeout.** A request head (and a TLS handshake) must arrive completely within
//!   [`ServeOptions::header_read_timeout`] of its first byte (of the accept, for a new connection). On HTTP/2,
//!   whose idle connections also carry frames that start no request, only a new connection's first request is
//!   held to it; hyper bounds an HTTP/2 request head's size.
//! - **Idle timeout.** A kept-alive connection with no request in flight and no byte of a new one is closed after
//!   [`ServeOptions::idle_timeout`].
//! - **Body-read timeout.** A request body that sends nothing for [`ServeOptions::body_read_timeout`] fails
//!   (tower-http's `TimeoutBody`), and the request is answered `408 RequestTimeout` in the API's JSON, connection
//!   closed.
//! - **Graceful shutdown.** When the shutdown future resolves, the listener closes, requests in flight finish and
//!   idle connections close; the loop returns once every connection has ended.
//!
//! hyper's own `header_read_timeout` is not used: its clock starts whenever a connection waits for a request
//! head, including a kept-alive connection waiting for its next request, so it would close every idle
//! connection after the header-read timeout and an idle timeout longer than it could not exist. Here a small
//! wrapper around the connection's stream notes the first byte of each request head instead.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use axum::response::IntoResponse as _;
use http_body_util::BodyExt as _;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;
use tower_http::timeout::{TimeoutBody, TimeoutError};

use crate::{ApiError, TlsConfig};

/// Default of [`ServeOptions::header_read_timeout`].
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default of [`ServeOptions::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of [`ServeOptions::body_read_timeout`].
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of [`ServeOptions::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Most requests in flight at once on one HTTP/2 connection.
const HTTP2_MAX_STREAMS: u32 = 100;
/// How much of one request's body an HTTP/2 client may send ahead of the handler reading it.
const HTTP2_STREAM_WINDOW: u32 = 64 * 1024;
/// How much of all its requests' bodies an HTTP/2 client may send ahead of the handlers reading them: the memory
/// a connection's unread bodies can take.
const HTTP2_CONNECTION_WINDOW: u32 = 256 * 1024;

/// The first bytes of every HTTP/2 connection (RFC 9113, 3.4).
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// How long the accept loop pauses after an accept error that is not about one connection (out of file
/// descriptors, out of memory), so that it does not spin.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);

/// How connections are served.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Serve HTTPS with this certificate; `None`: plain HTTP.
    pub tls: Option<TlsConfig>,
    /// Longest time from the first byte of a request head (or from the accept) to its end, TLS handshake
    /// included.
    pub header_read_timeout: Duration,
    /// Longest time a kept-alive connection stays open with no request in flight.
    pub idle_timeout: Duration,
    /// Longest time a request body may send nothing.
    pub body_read_timeout: Duration,
    /// Most connections open at once (at least 1).
    pub max_connections: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            tls: None,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then finishes the requests in flight.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let options = Arc::new(options);
    let connections = Arc::new(Connections::new(options.max_connections));
    let stop = CancellationToken::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) if is_connection_error(&err) => continue,
                Err(err) => {
                    // Out of file descriptors (or memory): closing an idle connection frees one.
                    tracing::warn!(error = %err, "cannot accept a connection; closing the connection idle longest");
                    connections.lock().evict_longest_idle();
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
        };
        let connection = tokio::select! {
            () = &mut shutdown => break,
            connection = connections.admit(&stop) => connection,
        };
        // Small answers go out at once instead of waiting for Nagle's timer.
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let options = options.clone();
        tokio::spawn(async move {
            // Frees the slot however the task ends (even by a panic), so the limit and the shutdown never wait
            // for a connection that is gone.
            let _ended = EndOnDrop(connection.clone());
            serve_connection(stream, peer, &connection, router, &options).await;
        });
    }
    drop(listener);
    stop.cancel();
    connections.all_ended().await;
    Ok(())
}

/// Errors of one connection (the peer gave up before it was accepted); the listener is fine.
fn is_connection_error(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// Runs the TLS handshake if any, then HTTP until the connection ends, is timed out or is closed.
async fn serve_connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    connection: &Arc<Connection>,
    router: Router,
    options: &ServeOptions,
) {
    let Some(tls) = &options.tls else {
        drive(
            Tracked::new(stream, connection.clone()),
            connection,
            router,
            options,
        )
        .await;
        return;
    };
    let handshake = tokio::time::timeout(options.header_read_timeout, tls.acceptor().accept(stream));
    let stream = tokio::select! {
        result = handshake => match result {
            Ok(Ok(stream)) => stream,
            Ok(Err(err)) => {
                tracing::debug!(%peer, error = %err, "TLS handshake failed");
                return;
            }
            Err(_) => {
                tracing::debug!(%peer, "TLS handshake timed out");
                return;
            }
        },
        () = connection.close.cancelled() => return,
    };
    drive(
        Tracked::new(stream, connection.clone()),
        connection,
        router,
        options,
    )
    .await;
}

/// Serves HTTP/1.1 or HTTP/2 on `io` and closes the connection when its deadline passes or it is asked to close.
async fn drive<IO>(io: Tracked<IO>, connection: &Arc<Connection>, router: Router, options: &ServeOptions)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = RequestService {
        router,
        connection: connection.clone(),
        body_read_timeout: options.body_read_timeout,
    };
    let mut http = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    http.http2()
        .max_concurrent_streams(HTTP2_MAX_STREAMS)
        .initial_stream_window_size(HTTP2_STREAM_WINDOW)
        .initial_connection_window_size(HTTP2_CONNECTION_WINDOW);
    let conn = http.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    // Set once hyper was asked to finish: the request in flight (if any) completes, then the connection closes.
    let mut closing = false;
    loop {
        let deadline = connection.deadline(options);
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(err) = result {
                    tracing::debug!(error = %err, "connection ended with an error");
                }
                return;
            }
            () = connection.close.cancelled(), if !closing => {
                // A connection that never had a request has nothing to finish or flush.
                if !connection.has_served() {
                    return;
                }
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            () = connection.woken.notified() => {}
            () = sleep_until(deadline), if deadline.is_some() => {
                if connection.is_expired(options) {
                    if closing || !connection.has_served() {
                        return;
                    }
                    // Idle after a response: hyper closes at once; a request that raced in is finished first.
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The open connections: admission at the limit (evicting the connection idle longest), the activity every
/// timeout is computed from, and the end of the graceful shutdown. One lock; every critical section is short and
/// never awaits.
struct Connections {
    /// Most connections open at once.
    max: usize,
    table: Mutex<Table>,
    /// Woken when a connection ends, becomes idle, or an evicted connection gets a request after all: a waiting
    /// admission looks again.
    changed: Notify,
}

/// What [`Connections`] guards.
#[derive(Default)]
struct Table {
    next_id: u64,
    open: HashMap<u64, Activity>,
}

/// The state of one open connection that timeouts and eviction need.
struct Activity {
    /// Requests between their start and the end of their response body (0 or 1 on HTTP/1.1, up to
    /// [`HTTP2_MAX_STREAMS`] on HTTP/2).
    in_flight: usize,
    /// When the connection was accepted or its last request ended.
    idle_since: Instant,
    /// When the first byte of the next request head arrived (the accept, for a new connection); `None` while a
    /// request is in flight or a kept-alive connection waits with nothing received.
    head_started: Option<Instant>,
    /// Whether any request started on it (a connection that never answered has nothing to flush when closed).
    served: bool,
    /// Chosen to make room for a new connection.
    evicted: bool,
    /// Asks the connection's task to close it.
    close: CancellationToken,
}

impl Connections {
    fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            table: Mutex::new(Table::default()),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic under this lock leaves a consistent table (every update is a single assignment), so poisoning
        // is ignored rather than turned into a second panic.
        self.table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for room for one more connection and registers it: at the limit, the connection idle longest is
    /// closed to make room; when every connection is busy, waits until one ends or becomes idle.
    async fn admit(self: &Arc<Self>, stop: &CancellationToken) -> Arc<Connection> {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut table = self.lock();
                if table.open.len() < self.max {
                    return self.register(&mut table, stop);
                }
                table.evict_longest_idle();
            }
            changed.await;
        }
    }

    fn register(self: &Arc<Self>, table: &mut Table, stop: &CancellationToken) -> Arc<Connection> {
        let id = table.next_id;
        table.next_id += 1;
        let now = Instant::now();
        let close = stop.child_token();
        table.open.insert(
            id,
            Activity {
                in_flight: 0,
                idle_since: now,
                head_started: Some(now),
                served: false,
                evicted: false,
                close: close.clone(),
            },
        );
        Arc::new(Connection {
            id,
            connections: self.clone(),
            close,
            woken: Notify::new(),
            awaiting_head: AtomicBool::new(false),
        })
    }

    /// Resolves once every connection has ended.
    async fn all_ended(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.lock().open.is_empty() {
                return;
            }
            changed.await;
        }
    }
}

impl Table {
    /// Asks the connection idle longest to close, unless an earlier eviction is still closing (one at a time,
    /// so a burst of new connections never closes more idle ones than it needs). Returns whether one is closing.
    fn evict_longest_idle(&mut self) -> bool {
        if self.open.values().any(|a| a.evicted && a.in_flight == 0) {
            return true;
        }
        let victim = self
            .open
            .iter_mut()
            .filter(|(_, a)| !a.evicted && a.in_flight == 0)
            .min_by_key(|(_, a)| a.idle_since);
        match victim {
            Some((id, activity)) => {
                tracing::debug!(
                    connection = id,
                    "closing the connection idle longest to make room"
                );
                activity.evicted = true;
                activity.close.cancel();
                true
            }
            None => false,
        }
    }
}

/// One open connection, shared by its task, its stream wrapper and its requests.
struct Connection {
    id: u64,
    connections: Arc<Connections>,
    /// Asks the task to close the connection (eviction, shutdown).
    close: CancellationToken,
    /// Wakes the task when its deadline may have changed.
    woken: Notify,
    /// Set while the connection waits for a new request with nothing received, so the stream wrapper takes the
    /// lock only for the first byte of a request head.
    awaiting_head: AtomicBool,
}

impl Connection {
    /// When the connection is to be closed if nothing changes; `None` while a request is in flight.
    fn deadline(&self, options: &ServeOptions) -> Option<Instant> {
        let table = self.connections.lock();
        let activity = table.open.get(&self.id)?;
        if activity.in_flight > 0 {
            return None;
        }
        Some(match activity.head_started {
            Some(started) => started + options.header_read_timeout,
            None => activity.idle_since + options.idle_timeout,
        })
    }

    fn is_expired(&self, options: &ServeOptions) -> bool {
        self.deadline(options)
            .is_some_and(|deadline| deadline <= Instant::now())
    }

    fn has_served(&self) -> bool {
        self.connections
            .lock()
            .open
            .get(&self.id)
            .is_some_and(|activity| activity.served)
    }

    /// The first byte of a request head arrived.
    fn head_started(&self) {
        {
            let mut table = self.connections.lock();
            if let Some(activity) = table.open.get_mut(&self.id)
                && activity.in_flight == 0
                && activity.head_started.is_none()
            {
                activity.head_started = Some(Instant::now());
            }
        }
        self.woken.notify_one();
    }

    fn request_started(&self) {
        let mut evicted_got_busy = false;
        {
            let mut table = self.connections.lock();
            if let Some(activity) = table.open.get_mut(&self.id) {
                evicted_got_busy = activity.evicted && activity.in_flight == 0;
                activity.in_flight += 1;
                activity.served = true;
                activity.head_started = None;
            }
            self.awaiting_head.store(false, Ordering::Release);
        }
        self.woken.notify_one();
        if evicted_got_busy {
            // It finishes its request before closing: a waiting admission may pick another idle connection.
            self.connections.changed.notify_waiters();
        }
    }

    fn request_ended(&self) {
        let mut became_idle = false;
        {
            let mut table = self.connections.lock();
            if let Some(activity) = table.open.get_mut(&self.id) {
                activity.in_flight = activity.in_flight.saturating_sub(1);
                if activity.in_flight == 0 {
                    became_idle = true;
                    activity.idle_since = Instant::now();
                    activity.head_started = None;
                    self.awaiting_head.store(true, Ordering::Release);
                }
            }
        }
        if became_idle {
            self.woken.notify_one();
            self.connections.changed.notify_waiters();
        }
    }

    /// The connection's task ended: its slot is free.
    fn end(&self) {
        self.connections.lock().open.remove(&self.id);
        self.connections.changed.notify_waiters();
    }
}

/// Ends its connection when dropped.
struct EndOnDrop(Arc<Connection>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// The connection's stream, noting the first byte of each HTTP/1.1 request head for the header-read timeout.
struct Tracked<IO> {
    io: IO,
    connection: Arc<Connection>,
    protocol: Protocol,
}

/// What the connection's first bytes say it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    /// Fewer bytes than the HTTP/2 preface arrived, all of them its own.
    Undecided {
        /// How many of the preface's bytes arrived.
        seen: usize,
    },
    /// HTTP/1.1: a byte on an idle connection starts a request head.
    Http1,
    /// HTTP/2: an idle connection also carries frames that are no request (pings, window updates, settings), so
    /// only the idle timeout applies between requests.
    Http2,
}

impl Protocol {
    /// The protocol after `bytes` more arrived.
    fn after(self, bytes: &[u8]) -> Self {
        let Self::Undecided { seen } = self else {
            return self;
        };
        let expected = &HTTP2_PREFACE[seen..];
        let compared = bytes.len().min(expected.len());
        if bytes[..compared] != expected[..compared] {
            Self::Http1
        } else if seen + compared == HTTP2_PREFACE.len() {
            Self::Http2
        } else {
            Self::Undecided {
                seen: seen + compared,
            }
        }
    }
}

impl<IO> Tracked<IO> {
    fn new(io: IO, connection: Arc<Connection>) -> Self {
        Self {
            io,
            connection,
            protocol: Protocol::Undecided { seen: 0 },
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Tracked<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            if let Protocol::Undecided { .. } = self.protocol {
                self.protocol = self.protocol.after(&buf.filled()[before..]);
            }
            let connection = &self.connection;
            if self.protocol != Protocol::Http2 && connection.awaiting_head.swap(false, Ordering::AcqRel) {
                connection.head_started();
            }
        }
        result
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Tracked<IO> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// A request in flight, from its start until its response body is dropped (written or abandoned).
struct InFlight(Arc<Connection>);

impl std::fmt::Debug for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InFlight({})", self.0.id)
    }
}

impl InFlight {
    fn start(connection: Arc<Connection>) -> Self {
        connection.request_started();
        Self(connection)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

/// The router as hyper calls it on one connection: the body-read timeout on the way in, in-flight tracking on
/// the way out.
#[derive(Clone)]
struct RequestService {
    router: Router,
    connection: Arc<Connection>,
    body_read_timeout: Duration,
}

impl hyper::service::Service<Request<Incoming>> for RequestService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let in_flight = InFlight::start(self.connection.clone());
        let timeout = self.body_read_timeout;
        let body_timed_out = Arc::new(AtomicBool::new(false));
        let noted = body_timed_out.clone();
        let request = request.map(|body| {
            Body::new(TimeoutBody::new(timeout, body).map_err(move |err| {
                if err.is::<TimeoutError>() {
                    noted.store(true, Ordering::Release);
                }
                err
            }))
        });
        let router = self.router.clone();
        Box::pin(async move {
            let response = match router.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            let response = if body_timed_out.load(Ordering::Acquire) {
                body_timeout_response(timeout)
            } else {
                response
            };
            Ok(response.map(|body| {
                Body::new(InFlightBody {
                    body,
                    _in_flight: in_flight,
                })
            }))
        })
    }
}

/// A response body that keeps its request in flight until hyper has taken the last frame (or dropped the body),
/// so an eviction or timeout never cuts an answer short. Size hints pass through, so a sized answer keeps its
/// `Content-Length`.
struct InFlightBody {
    body: Body,
    /// Dropped with the body.
    _in_flight: InFlight,
}

impl HttpBody for InFlightBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// 408 for a request whose body stalled; the connection closes after it (the rest of the body is not read).
fn body_timeout_response(timeout: Duration) -> Response<Body> {
    let mut response = ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        "RequestTimeout",
        format!(
            "the request body sent nothing for {} s (the server's --body-read-timeout)",
            timeout.as_secs_f64()
        ),
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bytes_tell_http2_from_http1_however_they_are_split() {
        let undecided = Protocol::Undecided { seen: 0 };
        assert_eq!(undecided.after(HTTP2_PREFACE), Protocol::Http2);
        assert_eq!(undecided.after(b"GET / HTTP/1.1\r\n"), Protocol::Http1);
        // "P" could start POST as well as the preface: undecided until a byte tells them apart.
        let split = undecided.after(b"P");
        assert_eq!(split, Protocol::Undecided { seen: 1 });
        assert_eq!(split.after(b"OST /v2 HTTP/1.1"), Protocol::Http1);
        let mut protocol = undecided;
        for byte in HTTP2_PREFACE {
            protocol = protocol.after(std::slice::from_ref(byte));
        }
        assert_eq!(protocol, Protocol::Http2);
        // Frames after the preface change nothing.
        assert_eq!(Protocol::Http2.after(b"GET"), Protocol::Http2);
        assert_eq!(Protocol::Http1.after(HTTP2_PREFACE), Protocol::Http1);
    }

    fn table_with(activities: &[(usize, u64)]) -> (Table, Vec<CancellationToken>) {
        let base = Instant::now();
        let mut table = Table::default();
        let mut tokens = Vec::new();
        for (id, (in_flight, idle_for_secs)) in activities.iter().enumerate() {
            let close = CancellationToken::new();
            tokens.push(close.clone());
            table.open.insert(
                id as u64,
                Activity {
                    in_flight: *in_flight,
                    idle_since: base
                        .checked_sub(Duration::from_secs(*idle_for_secs))
                        .unwrap_or(base),
                    head_started: None,
                    served: true,
                    evicted: false,
                    close,
                },
            );
        }
        (table, tokens)
    }

    fn cancelled(tokens: &[CancellationToken]) -> Vec<bool> {
        tokens.iter().map(CancellationToken::is_cancelled).collect()
    }

    #[test]
    fn eviction_closes_the_connection_idle_longest_and_never_a_busy_one() {
        // (requests in flight, seconds idle): the busy connection has the oldest idle_since.
        let (mut table, tokens) = table_with(&[(1, 300), (0, 5), (0, 50), (0, 20)]);
        assert!(table.evict_longest_idle());
        assert_eq!(cancelled(&tokens), [false, false, true, false]);
        // While that one is closing, a second call closes nothing more.
        assert!(table.evict_longest_idle());
        assert_eq!(cancelled(&tokens), [false, false, true, false]);
        // Once it has ended, the next longest idle goes.
        table.open.remove(&2);
        assert!(table.evict_longest_idle());
        assert_eq!(cancelled(&tokens), [false, false, true, true]);
    }

    #[test]
    fn nothing_is_evicted_when_every_connection_is_busy() {
        let (mut table, tokens) = table_with(&[(1, 10), (1, 20)]);
        assert!(!table.evict_longest_idle());
        assert_eq!(cancelled(&tokens), [false, false]);
    }

    #[test]
    fn an_evicted_connection_that_got_a_request_lets_another_be_evicted() {
        let (mut table, tokens) = table_with(&[(0, 30), (0, 10)]);
        assert!(table.evict_longest_idle());
        assert_eq!(cancelled(&tokens), [true, false]);
        // A request raced in on the victim: it finishes that request, and is no longer a pending eviction.
        if let Some(activity) = table.open.get_mut(&0) {
            activity.in_flight = 1;
        }
        assert!(table.evict_longest_idle());
        assert_eq!(cancelled(&tokens), [true, true]);
    }

    #[tokio::test]
    async fn admission_at_the_limit_evicts_and_waits_for_the_slot() {
        let connections = Arc::new(Connections::new(2));
        let stop = CancellationToken::new();
        let first = connections.admit(&stop).await;
        let second = connections.admit(&stop).await;
        second.request_started();
        // Full: the third admission closes the idle first connection and waits until its task ends.
        let waiting = tokio::spawn({
            let connections = connections.clone();
            let stop = stop.clone();
            async move { connections.admit(&stop).await }
        });
        first.close.cancelled().await;
        assert!(!second.close.is_cancelled());
        assert!(!waiting.is_finished());
        first.end();
        let third = waiting.await.expect("the admission ends");
        assert_eq!(connections.lock().open.len(), 2);
        second.request_ended();
        third.end();
        second.end();
        connections.all_ended().await;
    }
}
