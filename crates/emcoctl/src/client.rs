//! The HTTP side of emcoctl: requests to the EMCO API (JSON bodies, or multipart with a `metadata` part and file
//! parts, as EMCO's emcoctl sends them) and the answers, as they come. `https://` targets are verified against
//! the system's CA certificates, or only against those of `--ca-file` when it is given (rustls, ring provider).
//! With a token, every request carries `Authorization: Bearer <token>` (marked sensitive; never printed).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper_rustls::{ConfigBuilderExt as _, HttpsConnector};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use serde_json::Value as Json;

/// Largest `--ca-file` read: a bundle of every public CA is about 200 KiB.
const MAX_CA_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Boundary of the multipart bodies (never found in JSON metadata; file parts are length-delimited by it too, as
/// every multipart encoder does).
const BOUNDARY: &str = "emcoctl-5b7e0c93a1d24f68";

/// Why a request did not get an answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The target is not an `http(s)://host:port` URL.
    #[error("'{0}' is not an http:// or https:// URL of the EMCO API (e.g. http://localhost:9015)")]
    BadTarget(String),
    /// The token cannot be sent in an HTTP header.
    #[error("the token holds characters an HTTP header cannot carry (only visible ASCII is allowed)")]
    BadToken,
    /// The CA file of `--ca-file` cannot be used.
    #[error("--ca-file {path}: {message}")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// No CA to verify an `https://` target with.
    #[error(
        "cannot verify {target}: {message}; give the CA that signed the server's certificate with --ca-file"
    )]
    NoTrustedCa {
        /// The target.
        target: String,
        /// Why the system's CA certificates cannot be used.
        message: String,
    },
    /// The request could not be built (a path with characters a URL cannot carry).
    #[error("cannot build the request for {path}: {message}")]
    Request {
        /// The path.
        path: String,
        /// Why.
        message: String,
    },
    /// No connection or no answer.
    #[error("{method} {url}: {message}")]
    Unreachable {
        /// The method.
        method: String,
        /// The URL.
        url: String,
        /// Why.
        message: String,
    },
}

/// A request body.
#[derive(Debug, Clone)]
pub enum Body {
    /// No body.
    Empty,
    /// JSON.
    Json(Json),
    /// JSON already encoded (a body built from parts that are JSON text, without parsing them into a tree).
    JsonText(Vec<u8>),
    /// A `metadata` part (JSON) and file parts `(part name, file name, content)`.
    Multipart {
        /// The JSON of the `metadata` part.
        metadata: Json,
        /// The file parts.
        files: Vec<(String, String, Vec<u8>)>,
    },
}

/// An answer: status code and body.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Reply {
    /// Whether the code is 2xx.
    #[must_use]
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as text.
    #[must_use]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// How often a [`EmcoClient::multiplexed`] client pings its connection.
pub const HTTP2_PING_EVERY: std::time::Duration = std::time::Duration::from_secs(20);
/// How long a ping of a [`EmcoClient::multiplexed`] client may go unanswered before its connection is closed.
pub const HTTP2_PING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How a client's requests share connections.
#[derive(Debug, Clone, Copy)]
enum Connections {
    /// HTTP/1.1: a request in flight holds a connection of its own (kept alive for the next one).
    PerRequest,
    /// HTTP/2: every request over one connection.
    OneHttp2,
}

/// A client of one EMCO API.
#[derive(Clone)]
pub struct EmcoClient {
    base: String,
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// `Bearer <token>`, when the API requires a token.
    authorization: Option<http::HeaderValue>,
}

impl std::fmt::Debug for EmcoClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmcoClient")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl EmcoClient {
    /// A client of the API at `target` (`http(s)://host:port`, with or without a trailing `/`); `https://` is
    /// verified against the system's CA certificates.
    pub fn new(target: &str) -> Result<Self, ClientError> {
        Self::with_ca_file(target, None)
    }

    /// A client of the API at `target`; an `https://` target is verified against the CA certificates of the PEM
    /// file `ca_file` only, or against the system's when it is `None` (for `http://`, `ca_file` is not used).
    pub fn with_ca_file(target: &str, ca_file: Option<&Path>) -> Result<Self, ClientError> {
        Self::build(target, ca_file, Connections::PerRequest)
    }

    /// A client that sends every request over one HTTP/2 connection (opened again when it ends), however many
    /// are in flight: ALPN `h2` for `https://`, prior knowledge for `http://`. emco's own server speaks both
    /// HTTP/1.1 and HTTP/2; a server (or proxy) that speaks HTTP/1.1 only cannot be reached this way. The
    /// connection is pinged every [`HTTP2_PING_EVERY`] and closed when a ping goes unanswered for
    /// [`HTTP2_PING_TIMEOUT`], so a connection that died silently is replaced rather than holding every request.
    pub fn multiplexed(target: &str, ca_file: Option<&Path>) -> Result<Self, ClientError> {
        Self::build(target, ca_file, Connections::OneHttp2)
    }

    fn build(target: &str, ca_file: Option<&Path>, connections: Connections) -> Result<Self, ClientError> {
        let base = target.trim_end_matches('/').to_string();
        let uri: http::Uri = base.parse().map_err(|_| ClientError::BadTarget(target.into()))?;
        let https = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err(ClientError::BadTarget(target.into())),
        };
        if uri.host().is_none() {
            return Err(ClientError::BadTarget(target.into()));
        }
        let tls = tls_config(target, https, ca_file)?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http();
        let http = match connections {
            Connections::PerRequest => {
                Client::builder(TokioExecutor::new()).build(connector.enable_http1().build())
            }
            Connections::OneHttp2 => Client::builder(TokioExecutor::new())
                .timer(TokioTimer::new())
                .http2_only(true)
                .http2_keep_alive_interval(HTTP2_PING_EVERY)
                .http2_keep_alive_timeout(HTTP2_PING_TIMEOUT)
                .http2_keep_alive_while_idle(true)
                .build(connector.enable_http2().build()),
        };
        Ok(Self {
            base,
            http,
            authorization: None,
        })
    }

    /// The same client, sending `token` as a bearer token with every request.
    pub fn with_token(mut self, token: &str) -> Result<Self, ClientError> {
        if token.is_empty() || !token.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(ClientError::BadToken);
        }
        let mut value =
            http::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| ClientError::BadToken)?;
        value.set_sensitive(true);
        self.authorization = Some(value);
        Ok(self)
    }

    /// The full URL of `path` (which starts with `/`).
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends one request and reads the whole answer.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        accept_json: bool,
        body: Body,
    ) -> Result<Reply, ClientError> {
        let url = self.url(path);
        let request_error = |message: String| ClientError::Request {
            path: path.into(),
            message,
        };
        let mut builder = http::Request::builder().method(method).uri(&url);
        if let Some(authorization) = &self.authorization {
            builder = builder.header(http::header::AUTHORIZATION, authorization.clone());
        }
        if accept_json {
            builder = builder.header("accept", "application/json");
        }
        let (content_type, bytes) = body.encode();
        if let Some(content_type) = content_type {
            builder = builder.header("content-type", content_type);
        }
        let request = builder
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|err| request_error(err.to_string()))?;
        let unreachable = |message: String| ClientError::Unreachable {
            method: method.into(),
            url: url.clone(),
            message,
        };
        let response = self
            .http
            .request(request)
            .await
            .map_err(|err| unreachable(describe(&err)))?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|err| unreachable(err.to_string()))?
            .to_bytes()
            .to_vec();
        Ok(Reply { status, body })
    }
}

/// The TLS settings: for `https`, roots from `ca_file` or the system; for `http`, none are needed.
/// The answer of a GET that opened a server-sent event stream: the status and, with 200, the events as they
/// come ([`crate::sse::EventReader`] reads them); another status comes with its whole (bounded) body.
pub struct StreamReply {
    /// The HTTP status.
    pub status: u16,
    /// The body, read as it arrives.
    pub body: hyper::body::Incoming,
}

impl EmcoClient {
    /// GETs `path` asking for a server-sent event stream (`Accept: text/event-stream`), resuming after
    /// `last_event_id` when given (`Last-Event-ID`).
    pub async fn stream(&self, path: &str, last_event_id: Option<&str>) -> Result<StreamReply, ClientError> {
        let url = self.url(path);
        let mut builder = http::Request::builder()
            .method("GET")
            .uri(&url)
            .header("accept", "text/event-stream");
        if let Some(authorization) = &self.authorization {
            builder = builder.header(http::header::AUTHORIZATION, authorization.clone());
        }
        if let Some(id) = last_event_id {
            builder = builder.header("last-event-id", id);
        }
        let request = builder
            .body(Full::new(Bytes::new()))
            .map_err(|err| ClientError::Request {
                path: path.into(),
                message: err.to_string(),
            })?;
        let response = self
            .http
            .request(request)
            .await
            .map_err(|err| ClientError::Unreachable {
                method: "GET".into(),
                url: url.clone(),
                message: describe(&err),
            })?;
        Ok(StreamReply {
            status: response.status().as_u16(),
            body: response.into_body(),
        })
    }
}

fn tls_config(
    target: &str,
    https: bool,
    ca_file: Option<&Path>,
) -> Result<rustls::ClientConfig, ClientError> {
    let builder =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|err| ClientError::NoTrustedCa {
                target: target.into(),
                message: err.to_string(),
            })?;
    let builder = match (https, ca_file) {
        (false, _) => builder.with_root_certificates(rustls::RootCertStore::empty()),
        (true, Some(path)) => builder.with_root_certificates(read_ca_file(path)?),
        (true, None) => builder
            .with_native_roots()
            .map_err(|err| ClientError::NoTrustedCa {
                target: target.into(),
                message: format!("the system's CA certificates cannot be read: {err}"),
            })?,
    };
    Ok(builder.with_no_client_auth())
}

/// The CA certificates of a PEM bundle.
fn read_ca_file(path: &Path) -> Result<rustls::RootCertStore, ClientError> {
    let fail = |message: String| ClientError::CaFile {
        path: path.into(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|err| fail(format!("cannot read it: {err}")))?;
    let mut pem = Vec::new();
    file.take(MAX_CA_FILE_BYTES + 1)
        .read_to_end(&mut pem)
        .map_err(|err| fail(format!("cannot read it: {err}")))?;
    if pem.len() as u64 > MAX_CA_FILE_BYTES {
        return Err(fail(format!(
            "larger than {MAX_CA_FILE_BYTES} bytes; not a CA bundle"
        )));
    }
    let mut roots = rustls::RootCertStore::empty();
    for (index, certificate) in CertificateDer::pem_slice_iter(&pem).enumerate() {
        let certificate = certificate.map_err(|err| fail(format!("not valid PEM: {err}")))?;
        roots
            .add(certificate)
            .map_err(|err| fail(format!("certificate {} cannot be used: {err}", index + 1)))?;
    }
    if roots.is_empty() {
        return Err(fail(
            "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    Ok(roots)
}

/// An error with its causes (`client error (Connect): invalid peer certificate: UnknownIssuer`), and what to do
/// about an unknown certificate issuer.
fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    if text.contains("UnknownIssuer") {
        text.push_str(
            " (the server's certificate is not signed by a trusted CA; give its CA with --ca-file)",
        );
    }
    text
}

impl Body {
    /// The content type (none for an empty body) and the bytes, as they go on the wire.
    #[must_use]
    pub fn encode(self) -> (Option<String>, Vec<u8>) {
        match self {
            Body::Empty => (None, Vec::new()),
            Body::Json(value) => (Some("application/json".into()), value.to_string().into_bytes()),
            Body::JsonText(bytes) => (Some("application/json".into()), bytes),
            Body::Multipart { metadata, files } => (
                Some(format!("multipart/form-data; boundary={BOUNDARY}")),
                multipart(&metadata, &files),
            ),
        }
    }
}

fn multipart(metadata: &Json, files: &[(String, String, Vec<u8>)]) -> Vec<u8> {
    let mut body = format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"metadata\"\r\nContent-Type: application/json\r\n\r\n{metadata}\r\n").into_bytes();
    for (part, file_name, content) in files {
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{part}\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes(),
        );
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}
