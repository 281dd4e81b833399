//! emco's smart-HTTP transport for libgit2: each of libgit2's four exchanges (the upload-pack and receive-pack
//! advertisements, the fetch and the push) is one HTTP request through hyper and rustls — ring only, the server
//! checked against the remote's CA certificates or the system's — bounded in time and in bytes each way, with the
//! token sent only as basic authentication (never in a URL), redirects not followed. libgit2 is synchronous: a
//! [`Session`] (the remote's client and credentials, with a small runtime of its own) is made the current thread's
//! for the duration of one libgit2 call, and the transport, registered once per process for `http` and `https`,
//! takes it from there.

use std::cell::RefCell;
use std::io::{self, Cursor, Read, Write};
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use bytes::Bytes;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use http::{HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::remote::{Limits, Remote};
use crate::{GitError, Result};

/// What emco says it is (servers such as GitHub's answer the smart protocol to `git/…` agents only).
const AGENT: &str = "git/2.0 (emco)";

thread_local! {
    static SESSION: RefCell<Option<Arc<Session>>> = const { RefCell::new(None) };
}

type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// One remote's HTTP client and credentials.
pub(crate) struct Session {
    /// Drives the client while a libgit2 call blocks this thread on an exchange.
    runtime: Option<tokio::runtime::Runtime>,
    client: HttpsClient,
    authorization: Option<HeaderValue>,
    limits: Limits,
}

impl Session {
    /// The session of `remote` (checked), bounded by `limits`.
    pub(crate) fn new(remote: &Remote, limits: Limits) -> Result<Self> {
        remote.check()?;
        register()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let tls =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(|err| GitError::Remote(err.to_string()))?;
        let tls = match &remote.ca_pem {
            Some(pem) => {
                use rustls::pki_types::CertificateDer;
                use rustls::pki_types::pem::PemObject as _;
                let mut roots = rustls::RootCertStore::empty();
                for certificate in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                    let certificate = certificate
                        .map_err(|err| GitError::Remote(format!("the CA certificates do not read: {err}")))?;
                    roots
                        .add(certificate)
                        .map_err(|err| GitError::Remote(format!("a CA certificate is not usable: {err}")))?;
                }
                tls.with_root_certificates(roots)
            }
            None => hyper_rustls::ConfigBuilderExt::with_native_roots(tls).map_err(|err| {
                GitError::Remote(format!("the system's CA certificates cannot be read: {err}"))
            })?,
        }
        .with_no_client_auth();
        let builder = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls);
        let connector = if remote.is_plain_http() {
            builder.https_or_http().enable_http1().build()
        } else {
            builder.https_only().enable_http1().build()
        };
        let client = Client::builder(TokioExecutor::new()).build(connector);
        let authorization = if remote.token.expose().is_empty() {
            None
        } else {
            let credentials = base64::engine::general_purpose::STANDARD.encode(format!(
                "{}:{}",
                remote.username,
                remote.token.expose()
            ));
            let mut value = HeaderValue::from_str(&format!("Basic {credentials}"))
                .map_err(|_| GitError::Remote("the credentials do not fit an HTTP header".into()))?;
            value.set_sensitive(true);
            Some(value)
        };
        Ok(Self {
            runtime: Some(runtime),
            client,
            authorization,
            limits,
        })
    }

    /// Runs `call` (libgit2 work) with this session as the current thread's (the one before it restored after).
    pub(crate) fn enter<T>(self: &Arc<Self>, call: impl FnOnce() -> T) -> T {
        let before = SESSION.with(|current| current.borrow_mut().replace(self.clone()));
        let answer = call();
        SESSION.with(|current| *current.borrow_mut() = before);
        answer
    }

    /// One exchange: `method` on `url` with `body`, answering the response's body.
    fn exchange(
        &self,
        method: Method,
        url: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> io::Result<Bytes> {
        let failed = |message: String| io::Error::other(message);
        let mut request = Request::builder()
            .method(method)
            .uri(url)
            .header(USER_AGENT, AGENT)
            .header(ACCEPT, "*/*");
        if let Some(content_type) = content_type {
            request = request.header(CONTENT_TYPE, content_type);
        }
        if let Some(authorization) = &self.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|err| failed(format!("the request cannot be made: {err}")))?;
        let timeout = self.limits.request_timeout;
        let max = self.limits.max_response_bytes;
        let runtime = self
            .runtime
            .as_ref()
            .ok_or_else(|| failed("the session is closed".into()))?;
        runtime.block_on(async {
            let exchange = async {
                let response = self
                    .client
                    .request(request)
                    .await
                    .map_err(|err| failed(format!("cannot reach it: {err}")))?;
                let status = response.status();
                if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                    return Err(failed(format!("it refused the credentials ({status})")));
                }
                if status != StatusCode::OK {
                    return Err(failed(format!(
                        "it answered {status} (redirects are not followed)"
                    )));
                }
                Limited::new(response.into_body(), max)
                    .collect()
                    .await
                    .map(http_body_util::Collected::to_bytes)
                    .map_err(|_| failed(format!("its answer is larger than {max} bytes, or broke off")))
            };
            tokio::time::timeout(timeout, exchange)
                .await
                .unwrap_or_else(|_| Err(failed(format!("no answer within {timeout:?}"))))
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A runtime may not be dropped where blocking is not allowed (a session dropped in async code).
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Registers the transport for `http` and `https`, once per process.
fn register() -> Result<()> {
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            for scheme in ["http", "https"] {
                #[allow(unsafe_code)]
                // SAFETY: libgit2's transport registry is global and not synchronised; `register` must not run
                // concurrently with another registration or with a transport lookup of the same scheme. The
                // `OnceLock` makes this the process's only registration, run once, before the first session
                // exists — and only sessions use libgit2's network transports.
                let registered = unsafe {
                    git2::transport::register(scheme, |remote| Transport::smart(remote, true, HttpTransport))
                };
                registered.map_err(|err| err.to_string())?;
            }
            Ok(())
        })
        .clone()
        .map_err(GitError::Server)
}

/// The transport libgit2 calls: one stream per exchange, through the current thread's session.
struct HttpTransport;

impl SmartSubtransport for HttpTransport {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> std::result::Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let session = SESSION
            .with(|current| current.borrow().clone())
            .ok_or_else(|| git2::Error::from_str("emco's Git transport is used outside a session"))?;
        let (method, path, content_type) = match action {
            Service::UploadPackLs => (Method::GET, "/info/refs?service=git-upload-pack", None),
            Service::UploadPack => (
                Method::POST,
                "/git-upload-pack",
                Some("application/x-git-upload-pack-request"),
            ),
            Service::ReceivePackLs => (Method::GET, "/info/refs?service=git-receive-pack", None),
            Service::ReceivePack => (
                Method::POST,
                "/git-receive-pack",
                Some("application/x-git-receive-pack-request"),
            ),
        };
        Ok(Box::new(HttpStream {
            session,
            method,
            url: format!("{}{path}", url.trim_end_matches('/')),
            content_type,
            sent: Vec::new(),
            answer: None,
        }))
    }

    fn close(&self) -> std::result::Result<(), git2::Error> {
        Ok(())
    }
}

/// One exchange: what libgit2 writes is sent when it first reads.
struct HttpStream {
    session: Arc<Session>,
    method: Method,
    url: String,
    content_type: Option<&'static str>,
    sent: Vec<u8>,
    answer: Option<Cursor<Bytes>>,
}

impl Read for HttpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.answer.is_none() {
            let body = std::mem::take(&mut self.sent);
            let answer = self
                .session
                .exchange(self.method.clone(), &self.url, self.content_type, body)?;
            self.answer = Some(Cursor::new(answer));
        }
        self.answer.as_mut().map_or(Ok(0), |answer| answer.read(buf))
    }
}

impl Write for HttpStream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let max = self.session.limits.max_request_bytes;
        if self.sent.len() + data.len() > max {
            return Err(io::Error::other(format!(
                "the request would be larger than {max} bytes"
            )));
        }
        self.sent.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
