//! The HTTP side of emcoctl: requests to the EMCO API (JSON bodies, or multipart with a `metadata` part and file
//! parts, as EMCO's emcoctl sends them) and the answers, as they come. With a token, every request carries
//! `Authorization: Bearer <token>` (marked sensitive; the token is never printed).

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value as Json;

/// Boundary of the multipart bodies (never found in JSON metadata; file parts are length-delimited by it too, as
/// every multipart encoder does).
const BOUNDARY: &str = "emcoctl-5b7e0c93a1d24f68";

/// Why a request did not get an answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The target is not an `http://host:port` URL.
    #[error("'{0}' is not an http:// URL of the EMCO API (e.g. http://localhost:9015)")]
    BadTarget(String),
    /// The token cannot be sent in an HTTP header.
    #[error("the token holds characters an HTTP header cannot carry (only visible ASCII is allowed)")]
    BadToken,
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

/// A client of one EMCO API.
#[derive(Clone)]
pub struct EmcoClient {
    base: String,
    http: Client<HttpConnector, Full<Bytes>>,
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
    /// A client of the API at `target` (`http://host:port`, with or without a trailing `/`).
    pub fn new(target: &str) -> Result<Self, ClientError> {
        let base = target.trim_end_matches('/').to_string();
        let uri: http::Uri = base.parse().map_err(|_| ClientError::BadTarget(target.into()))?;
        if uri.scheme_str() != Some("http") || uri.host().is_none() {
            return Err(ClientError::BadTarget(target.into()));
        }
        Ok(Self {
            base,
            http: Client::builder(TokioExecutor::new()).build_http(),
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
            .map_err(|err| unreachable(format!("{err:#}")))?;
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

impl Body {
    /// The content type (none for an empty body) and the bytes, as they go on the wire.
    #[must_use]
    pub fn encode(self) -> (Option<String>, Vec<u8>) {
        match self {
            Body::Empty => (None, Vec::new()),
            Body::Json(value) => (Some("application/json".into()), value.to_string().into_bytes()),
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
