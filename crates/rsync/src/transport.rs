//! The one `kube::Client` rsync keeps per cluster (and per logical cloud user), over one hyper client: HTTP/2 when
//! the cluster offers it in ALPN, as Kubernetes API servers do, so the cluster's bundle watch and its applies share
//! one connection (one descriptor, one TLS session); HTTP/1.1 otherwise. Timeouts are per request, not per
//! connection: a request that is not a watch must be answered within the request timeout and its body must not
//! stall longer than that between chunks; a watch may stay open as long as the cluster keeps it (HTTP/2 pings find a
//! dead connection under it, as client-go's do).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::{Body, ConfigExt as _, DynBody};
use tower::{BoxError, ServiceBuilder};

use crate::retry_after::RetryAfterLayer;

/// How long to wait for a TCP connection to a cluster before calling it unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an unused connection stays open for the next request: long enough that a cluster's first apply finds
/// the connection its watcher opened, minutes earlier at 10,000 clusters (each new connection is a TLS handshake).
const IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// An HTTP/2 connection silent this long is pinged (a watch's too) …
const PING_INTERVAL: Duration = Duration::from_secs(30);
/// … and closed when the ping is not answered within this.
const PING_TIMEOUT: Duration = Duration::from_secs(15);

/// The timeouts and limits of a cluster's client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientSettings {
    /// The longest a request other than a watch may take to be answered, and its body may stall.
    pub(crate) request_timeout: Duration,
    /// The longest `Retry-After` honoured.
    pub(crate) retry_after_max: Duration,
}

/// The servers whose TLS sessions a client remembers for resumption: a client talks to one cluster (two leave
/// room for a changed server name).
const SESSION_CACHE_SERVERS: usize = 2;

/// A client of the cluster `config` describes (server, CA, `tls-server-name`, credentials, impersonation), with
/// rsync's timeouts and its `Retry-After` layer.
pub(crate) fn client(config: &kube::Config, settings: ClientSettings) -> Result<kube::Client, kube::Error> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    let mut tls_config = config.rustls_client_config()?;
    // One server per client: a session cache of rustls's default 256 servers would take 14 KiB per cluster
    // (14 MiB at 1,000 clusters) to remember one.
    tls_config.resumption = rustls::client::Resumption::in_memory_sessions(SESSION_CACHE_SERVERS);
    let tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls_config)
        .https_or_http();
    let tls = match &config.tls_server_name {
        Some(name) => {
            let name = rustls::pki_types::ServerName::try_from(name.clone())
                .map_err(|err| kube::Error::Service(format!("tls-server-name {name:?}: {err}").into()))?;
            tls.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => tls,
    };
    let connector = tls.enable_all_versions().wrap_connector(http);
    let transport = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(IDLE_TIMEOUT)
        .http2_keep_alive_interval(PING_INTERVAL)
        .http2_keep_alive_timeout(PING_TIMEOUT)
        .build::<_, Body>(connector);
    let service = ServiceBuilder::new()
        // A 429's or 5xx's Retry-After survives into the error rsync retries on.
        .layer(RetryAfterLayer::new(settings.retry_after_max))
        .layer(DeadlineLayer {
            timeout: settings.request_timeout,
        })
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .layer(FirstAnswerFirst::layer())
        .service(transport);
    Ok(kube::Client::new(service, config.default_namespace.clone()))
}

/// Holds a new client's requests until its first one is answered, so that they find its first connection open and
/// known to speak HTTP/2 (or not): before ALPN has answered, the pool cannot know that one connection would do, and
/// requests that start together (a cluster's first apply and its bundle watch) would each open one.
#[derive(Clone)]
struct FirstAnswerFirst<S> {
    inner: S,
    answered: Arc<AtomicBool>,
    gate: Arc<tokio::sync::Mutex<()>>,
}

impl FirstAnswerFirst<()> {
    fn layer() -> FirstAnswerFirst<()> {
        FirstAnswerFirst {
            inner: (),
            answered: Arc::new(AtomicBool::new(false)),
            gate: Arc::new(tokio::sync::Mutex::new(())),
        }
    }
}

impl<S> tower::Layer<S> for FirstAnswerFirst<()> {
    type Service = FirstAnswerFirst<S>;

    fn layer(&self, inner: S) -> Self::Service {
        FirstAnswerFirst {
            inner,
            answered: self.answered.clone(),
            gate: self.gate.clone(),
        }
    }
}

impl<S, R> tower::Service<Request<Body>> for FirstAnswerFirst<S>
where
    S: tower::Service<Request<Body>, Response = R> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    type Response = R;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<R, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        if self.answered.load(Ordering::Acquire) {
            let answer = self.inner.call(request);
            return Box::pin(async move { answer.await.map_err(Into::into) });
        }
        // The service made ready is the one called later; a clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let (answered, gate) = (self.answered.clone(), self.gate.clone());
        Box::pin(async move {
            let _first = if answered.load(Ordering::Acquire) {
                None
            } else {
                Some(gate.lock().await)
            };
            let answer = inner.call(request).await.map_err(Into::into);
            if answer.is_ok() {
                answered.store(true, Ordering::Release);
            }
            answer
        })
    }
}

/// Whether `request` asks to watch (`watch=true` or `watch=1`): its answer may stream for as long as it lasts.
fn is_watch<B>(request: &Request<B>) -> bool {
    request.uri().query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1")
    })
}

/// Puts the request timeout on every request but watches: on the answer's arrival and on each chunk of its body.
#[derive(Debug, Clone, Copy)]
struct DeadlineLayer {
    timeout: Duration,
}

impl<S> tower::Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Deadline {
            inner,
            timeout: self.timeout,
        }
    }
}

#[derive(Debug, Clone)]
struct Deadline<S> {
    inner: S,
    timeout: Duration,
}

fn timed_out() -> BoxError {
    Box::new(std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"))
}

impl<S, B> tower::Service<Request<Body>> for Deadline<S>
where
    S: tower::Service<Request<Body>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Box<DynBody>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let timeout = (!is_watch(&request)).then_some(self.timeout);
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = match timeout {
                Some(timeout) => tokio::time::timeout(timeout, answer)
                    .await
                    .map_err(|_| timed_out())?,
                None => answer.await,
            }
            .map_err(Into::into)?;
            Ok(response.map(|body| -> Box<DynBody> {
                Box::new(StallLimit {
                    body,
                    timeout,
                    sleep: None,
                })
            }))
        })
    }
}

/// A response body that fails with "timed out" when no chunk arrives within `timeout` (none: never).
struct StallLimit<B> {
    body: B,
    timeout: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<B> HttpBody for StallLimit<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            this.sleep = None;
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if let Some(timeout) = this.timeout {
            let sleep = this
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Some(Err(timed_out())));
            }
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_watches_go_without_a_deadline() {
        let request = |uri: &str| Request::get(uri).body(()).unwrap();
        assert!(is_watch(&request("/api/v1/pods?watch=true&resourceVersion=5")));
        assert!(is_watch(&request("/api/v1/pods?resourceVersion=5&watch=1")));
        assert!(!is_watch(&request("/api/v1/pods?watch=false")));
        assert!(!is_watch(&request("/api/v1/pods?labelSelector=watch%3Dtrue")));
        assert!(!is_watch(&request("/api/v1/namespaces/watch=true")));
        assert!(!is_watch(&request("/api/v1/pods")));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stalls_times_out_and_one_without_a_limit_waits() {
        use http_body_util::BodyExt as _;
        let (mut sender, body) = http_body_util::channel::Channel::<Bytes, BoxError>::new(1);
        let mut limited = StallLimit {
            body,
            timeout: Some(Duration::from_secs(2)),
            sleep: None,
        };
        sender.send_data(Bytes::from_static(b"first")).await.unwrap();
        let first = limited.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), Bytes::from_static(b"first"));
        // Nothing more arrives: after 2 s the body fails, and says why.
        let err = limited.frame().await.unwrap().unwrap_err();
        assert_eq!(err.to_string(), "timed out");

        let (mut sender, body) = http_body_util::channel::Channel::<Bytes, BoxError>::new(1);
        let mut unlimited = StallLimit {
            body,
            timeout: None,
            sleep: None,
        };
        let late = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            sender
                .send_data(Bytes::from_static(b"an hour later"))
                .await
                .unwrap();
        });
        let frame = unlimited.frame().await.unwrap().unwrap();
        assert_eq!(frame.into_data().unwrap(), Bytes::from_static(b"an hour later"));
        late.await.unwrap();
    }
}
