//! A Git server for the demo and the tests: repositories under one folder served over smart HTTP by Debian's
//! `git http-backend` (run as a CGI program per request, the command fixed), behind a token (HTTP basic
//! authentication; any user name), on a loopback port. It can be taken down (every request answered 503) and
//! brought back, it can hold its answers to pushes it took (a pusher stopped between its push and the answer),
//! and it keeps the request lines it answered.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The largest request body the server reads (a push's pack).
const MAX_REQUEST_BYTES: usize = 512 * 1024 * 1024;

struct State {
    root: PathBuf,
    token: String,
    down: AtomicBool,
    /// While it names a user, the answer to a push of that user waits (the push itself is taken).
    hold_pushes: tokio::sync::watch::Sender<Option<String>>,
    /// Pushes taken whose answer was held.
    held_pushes: std::sync::atomic::AtomicUsize,
    requests: Mutex<Vec<String>>,
    /// Per user, how many of its requests carried the token.
    requests_by_user: Mutex<std::collections::HashMap<String, usize>>,
}

/// A running Git server; stopped when dropped.
pub struct GitServer {
    address: SocketAddr,
    state: Arc<State>,
    accept: JoinHandle<()>,
}

impl std::fmt::Debug for GitServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitServer")
            .field("address", &self.address)
            .field("root", &self.state.root)
            .finish_non_exhaustive()
    }
}

impl GitServer {
    /// Serves the repositories under `root` on a loopback port to requests carrying `token`.
    pub async fn start(root: &Path, token: &str) -> std::io::Result<Self> {
        Self::start_on(root, token, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Serves the repositories under `root` on `address` to requests carrying `token`.
    pub async fn start_on(root: &Path, token: &str, address: SocketAddr) -> std::io::Result<Self> {
        std::fs::create_dir_all(root)?;
        let listener = TcpListener::bind(address).await?;
        let address = listener.local_addr()?;
        let state = Arc::new(State {
            root: root.to_path_buf(),
            token: token.to_string(),
            down: AtomicBool::new(false),
            hold_pushes: tokio::sync::watch::Sender::new(None),
            held_pushes: std::sync::atomic::AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
            requests_by_user: Mutex::new(std::collections::HashMap::new()),
        });
        let serving = state.clone();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let state = serving.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| answer(state.clone(), request));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Self {
            address,
            state,
            accept,
        })
    }

    /// Whether Debian's `git` is here to serve repositories. With `EMCO_REQUIRE_GIT` set (CI), its absence is a
    /// failure, not a reason to skip: this panics.
    #[must_use]
    pub fn git_available() -> bool {
        let available = std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_ok_and(|output| output.status.success());
        assert!(
            available || std::env::var_os("EMCO_REQUIRE_GIT").is_none(),
            "EMCO_REQUIRE_GIT is set and git is not installed"
        );
        available
    }

    /// For tests: a server under `root` behind `token` with the repository `name`, and its URL; `None` (said on
    /// stderr, the test skipped) when git is not here — see [`GitServer::git_available`].
    pub async fn start_if_available(root: &Path, token: &str, name: &str) -> Option<(Self, String)> {
        if !Self::git_available() {
            eprintln!("git is not installed: skipped");
            return None;
        }
        let server = Self::start(root, token).await.ok()?;
        let url = server.create_repository(name).ok()?;
        Some((server, url))
    }

    /// The remote of repository `name`'s `branch` on this server, as `user` with the server's token.
    #[must_use]
    pub fn remote(&self, name: &str, branch: &str, user: &str) -> crate::Remote {
        crate::Remote {
            url: self.url(name),
            branch: branch.to_string(),
            username: user.to_string(),
            token: crate::Secret::new(self.state.token.clone()),
            ca_pem: None,
        }
    }

    /// Makes the bare repository `name` (its default branch `main`) and answers its URL.
    pub fn create_repository(&self, name: &str) -> std::io::Result<String> {
        let status = std::process::Command::new("git")
            .args(["init", "--quiet", "--bare", "--initial-branch=main"])
            .arg(self.state.root.join(name))
            .status()?;
        if !status.success() {
            return Err(std::io::Error::other(format!("git init --bare {name}: {status}")));
        }
        Ok(self.url(name))
    }

    /// The URL of repository `name`.
    #[must_use]
    pub fn url(&self, name: &str) -> String {
        format!("http://{}/{name}", self.address)
    }

    /// The folder of repository `name`.
    #[must_use]
    pub fn repository_dir(&self, name: &str) -> PathBuf {
        self.state.root.join(name)
    }

    /// Takes the server down (every request answered 503) or brings it back.
    pub fn set_down(&self, down: bool) {
        self.state.down.store(down, Ordering::SeqCst);
    }

    /// Holds the answers to the pushes of `user` (none: lets them go): a push is taken — the branch moves — but
    /// its pusher hears nothing until they are let go, as when it is stopped between its push and the answer.
    pub fn hold_answers_to_pushes_of(&self, user: Option<&str>) {
        self.state.hold_pushes.send_replace(user.map(str::to_string));
    }

    /// How many pushes were taken with their answers held.
    #[must_use]
    pub fn held_pushes(&self) -> usize {
        self.state.held_pushes.load(Ordering::SeqCst)
    }

    /// The request lines answered so far (`GET /fleet/info/refs?service=…`).
    #[must_use]
    pub fn requests(&self) -> Vec<String> {
        self.state
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// How many requests `user` made with the token so far.
    #[must_use]
    pub fn requests_of(&self, user: &str) -> usize {
        self.state
            .requests_by_user
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(user)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for GitServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_string())));
    *response.status_mut() = status;
    response
}

/// The user name of a request carrying the server's token, if it does.
fn authorised_user(state: &State, request: &Request<Incoming>) -> Option<String> {
    let header = request.headers().get(AUTHORIZATION)?.to_str().ok()?;
    let encoded = header.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, token) = decoded.split_once(':')?;
    (token == state.token).then(|| user.to_string())
}

async fn answer(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    let line = format!(
        "{} {}",
        request.method(),
        request
            .uri()
            .path_and_query()
            .map_or("/", http::uri::PathAndQuery::as_str)
    );
    state
        .requests
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(line);
    if state.down.load(Ordering::SeqCst) {
        return Ok(plain(StatusCode::SERVICE_UNAVAILABLE, "the Git server is down"));
    }
    let Some(user) = authorised_user(&state, &request) else {
        let mut response = plain(StatusCode::UNAUTHORIZED, "a token is needed");
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"git\""));
        return Ok(response);
    };
    *state
        .requests_by_user
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(user.clone())
        .or_default() += 1;
    let push = request.method() == http::Method::POST && request.uri().path().ends_with("/git-receive-pack");
    let answer = http_backend(&state, &user, request)
        .await
        .unwrap_or_else(|message| plain(StatusCode::INTERNAL_SERVER_ERROR, &message));
    let held = |hold: &Option<String>| hold.as_deref() == Some(user.as_str());
    if push && held(&state.hold_pushes.borrow()) {
        state.held_pushes.fetch_add(1, Ordering::SeqCst);
        let mut hold = state.hold_pushes.subscribe();
        let _ = hold.wait_for(|hold| !held(hold)).await;
    }
    Ok(answer)
}

/// Runs `git http-backend` for `request` as `user`.
async fn http_backend(
    state: &State,
    user: &str,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, String> {
    let (parts, body) = request.into_parts();
    let body = Limited::new(body, MAX_REQUEST_BYTES)
        .collect()
        .await
        .map_err(|_| "the request body is too large or broke off".to_string())?
        .to_bytes();
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let mut child = tokio::process::Command::new("git")
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", &state.root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", parts.method.as_str())
        .env("PATH_INFO", parts.uri.path())
        .env("QUERY_STRING", parts.uri.query().unwrap_or_default())
        .env("CONTENT_TYPE", content_type)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_USER", user)
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("git http-backend cannot run: {err}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let writing = async move {
        let written = stdin.write_all(&body).await;
        drop(stdin);
        written
    };
    let (written, output) = tokio::join!(writing, child.wait_with_output());
    written.map_err(|err| format!("git http-backend did not read the request: {err}"))?;
    let output = output.map_err(|err| format!("git http-backend failed: {err}"))?;
    cgi_response(&output.stdout)
}

/// A CGI program's output as an HTTP response: its header lines (`Status:` among them), a blank line, the body.
fn cgi_response(output: &[u8]) -> Result<Response<Full<Bytes>>, String> {
    let (head, body) = [&b"\r\n\r\n"[..], &b"\n\n"[..]]
        .iter()
        .find_map(|separator| {
            output
                .windows(separator.len())
                .position(|window| window == *separator)
                .map(|at| (&output[..at], &output[at + separator.len()..]))
        })
        .ok_or("git http-backend answered no headers")?;
    let mut response = Response::new(Full::new(Bytes::copy_from_slice(body)));
    for line in String::from_utf8_lossy(head).lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value.split(' ').next().unwrap_or_default();
            *response.status_mut() = code
                .parse::<u16>()
                .ok()
                .and_then(|code| StatusCode::from_u16(code).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        } else if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.trim().as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    Ok(response)
}
