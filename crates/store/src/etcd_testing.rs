//! A throw-away etcd server for tests (this crate's conformance suite and the binaries' end-to-end tests): one
//! `etcd` process on free loopback ports, its data in a fresh temporary directory, killed and removed on drop.
//!
//! Tests call [`EtcdServer::start`]: without an `etcd` binary it answers `Ok(None)` after printing a note, so the
//! etcd cases skip — unless `EMCO_REQUIRE_ETCD=1`, which makes a missing binary an error (CI sets it).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::EtcdTls;
use crate::etcd_api;

/// Set to `1` to fail instead of skipping when no etcd binary is installed.
pub const REQUIRE_ENV: &str = "EMCO_REQUIRE_ETCD";
/// The etcd binary to run; by default `etcd` on the `PATH`.
pub const BINARY_ENV: &str = "EMCO_ETCD_BIN";
/// How long a started etcd may take to answer.
const READY_WAIT: Duration = Duration::from_secs(20);
/// How many times a start is tried (a free port may be taken between choosing it and etcd binding it).
const START_ATTEMPTS: usize = 3;

/// Errors of starting a test etcd.
#[derive(Debug, thiserror::Error)]
pub enum EtcdTestingError {
    /// No binary, and `EMCO_REQUIRE_ETCD=1`.
    #[error("no etcd binary found ({BINARY_ENV} or `etcd` on PATH), and {REQUIRE_ENV}=1 requires one")]
    Required,
    /// The process or its directory could not be made.
    #[error("cannot start {binary}: {message}")]
    Start {
        /// The etcd binary.
        binary: String,
        /// Why.
        message: String,
    },
    /// It started but did not answer in time.
    #[error("etcd at {endpoint} did not answer within {READY_WAIT:?}; its log is {log}")]
    NotReady {
        /// The client URL.
        endpoint: String,
        /// The log file (kept for reading).
        log: String,
    },
}

/// A running test etcd; dropping it kills the process and removes its data.
#[derive(Debug)]
pub struct EtcdServer {
    child: Child,
    data_dir: PathBuf,
    endpoint: String,
    /// How it was started (for [`EtcdServer::restart`]).
    command: Vec<String>,
    binary: PathBuf,
    log_path: PathBuf,
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// The etcd binary: `EMCO_ETCD_BIN`, or `etcd` in a `PATH` directory.
#[must_use]
pub fn etcd_binary() -> Option<PathBuf> {
    if let Some(binary) = std::env::var_os(BINARY_ENV) {
        return Some(PathBuf::from(binary));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("etcd"))
        .find(|candidate| candidate.is_file())
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl EtcdServer {
    /// Starts an etcd with its default limits; `Ok(None)` when none is installed (and not required).
    pub async fn start() -> Result<Option<Self>, EtcdTestingError> {
        Self::start_with(&[]).await
    }

    /// [`EtcdServer::start`] with extra etcd flags (e.g. `--max-txn-ops=1000`).
    pub async fn start_with(extra_args: &[&str]) -> Result<Option<Self>, EtcdTestingError> {
        Self::start_inner(extra_args, None).await
    }

    /// An etcd serving clients over TLS with `server_cert`/`server_key` (PEM files), requiring client
    /// certificates signed by `client.ca_file`; `client` is what a store needs to connect (it probes with it).
    pub async fn start_tls(
        server_cert: &Path,
        server_key: &Path,
        client: &EtcdTls,
    ) -> Result<Option<Self>, EtcdTestingError> {
        let ca = client.ca_file.as_deref().unwrap_or(server_cert);
        let args = [
            "--cert-file".to_string(),
            server_cert.display().to_string(),
            "--key-file".to_string(),
            server_key.display().to_string(),
            "--trusted-ca-file".to_string(),
            ca.display().to_string(),
            "--client-cert-auth".to_string(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Self::start_inner(&args, Some(client)).await
    }

    async fn start_inner(
        extra_args: &[&str],
        tls: Option<&EtcdTls>,
    ) -> Result<Option<Self>, EtcdTestingError> {
        let Some(binary) = etcd_binary() else {
            if std::env::var(REQUIRE_ENV).is_ok_and(|value| value == "1") {
                return Err(EtcdTestingError::Required);
            }
            eprintln!("note: no etcd binary ({BINARY_ENV} or `etcd` on PATH): the etcd cases are skipped");
            return Ok(None);
        };
        let mut last_error = None;
        for _ in 0..START_ATTEMPTS {
            match Self::try_start(&binary, extra_args, tls).await {
                Ok(server) => return Ok(Some(server)),
                Err(err) => last_error = Some(err),
            }
        }
        Err(last_error.unwrap_or(EtcdTestingError::Required))
    }

    async fn try_start(
        binary: &Path,
        extra_args: &[&str],
        tls: Option<&EtcdTls>,
    ) -> Result<Self, EtcdTestingError> {
        let start_error = |message: String| EtcdTestingError::Start {
            binary: binary.display().to_string(),
            message,
        };
        let (client_port, peer_port) = (
            free_port().map_err(|err| start_error(err.to_string()))?,
            free_port().map_err(|err| start_error(err.to_string()))?,
        );
        let data_dir = std::env::temp_dir().join(format!(
            "emco-test-etcd-{}-{client_port}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.subsec_nanos())
        ));
        std::fs::create_dir_all(&data_dir).map_err(|err| start_error(err.to_string()))?;
        let log_path = data_dir.join("etcd.log");
        let log = std::fs::File::create(&log_path).map_err(|err| start_error(err.to_string()))?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let endpoint = format!("{scheme}://127.0.0.1:{client_port}");
        let mut command = vec![
            "--data-dir".to_string(),
            data_dir.join("data").display().to_string(),
            "--listen-client-urls".to_string(),
            endpoint.clone(),
            "--advertise-client-urls".to_string(),
            endpoint.clone(),
            "--listen-peer-urls".to_string(),
            format!("http://127.0.0.1:{peer_port}"),
            "--logger=zap".to_string(),
            "--log-outputs=stderr".to_string(),
        ];
        command.extend(extra_args.iter().map(|arg| (*arg).to_string()));
        let child = Command::new(binary)
            .args(&command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|err| start_error(err.to_string()))?;
        let mut server = Self {
            child,
            data_dir,
            endpoint,
            command,
            binary: binary.to_path_buf(),
            log_path: log_path.clone(),
        };
        let deadline = Instant::now() + READY_WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(start_error(format!(
                    "etcd exited at once ({status}): {}",
                    std::fs::read_to_string(&log_path).unwrap_or_default()
                )));
            }
            if server.answers(tls).await {
                return Ok(server);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Keep the log for reading: take the directory out of the server before it is dropped.
        let log = log_path.display().to_string();
        server.data_dir = PathBuf::new();
        Err(EtcdTestingError::NotReady {
            endpoint: server.endpoint.clone(),
            log,
        })
    }

    async fn answers(&self, tls: Option<&EtcdTls>) -> bool {
        let probe = async {
            let mut kv = kv_client(&self.endpoint, tls).ok()?;
            kv.range(etcd_api::range("probe", None)).await.ok()
        };
        matches!(
            tokio::time::timeout(Duration::from_secs(2), probe).await,
            Ok(Some(_))
        )
    }

    /// The client URL (`http://127.0.0.1:PORT`, `https://` when started with TLS).
    #[must_use]
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The process id (for tests that stop it).
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills etcd now (its data stays until drop): the store then meets a lost connection.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Kills etcd and starts it again on the same ports and data (not for TLS servers), waiting until it answers.
    pub async fn restart(&mut self) -> Result<(), EtcdTestingError> {
        self.kill();
        let start_error = |message: String| EtcdTestingError::Start {
            binary: self.binary.display().to_string(),
            message,
        };
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.log_path)
            .map_err(|err| start_error(err.to_string()))?;
        self.child = Command::new(&self.binary)
            .args(&self.command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|err| start_error(err.to_string()))?;
        let deadline = Instant::now() + READY_WAIT;
        while Instant::now() < deadline {
            if self.answers(None).await {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(EtcdTestingError::NotReady {
            endpoint: self.endpoint.clone(),
            log: self.log_path.display().to_string(),
        })
    }
}

/// A plain client of one etcd endpoint's KV service (keys as etcd holds them, no store layout).
fn kv_client(endpoint: &str, tls: Option<&EtcdTls>) -> Result<etcd_api::KvClient, String> {
    let tls = tls
        .map(crate::etcd::tls_options)
        .transpose()
        .map_err(|err| err.to_string())?;
    let options = etcd_api::ChannelOptions::with_keep_alive(Duration::from_secs(2), tls);
    let channel = etcd_api::channel(&[endpoint.to_string()], &options)?;
    Ok(etcd_api::KvClient::new(channel))
}

/// How many etcd keys start with `prefix` at the plain-HTTP `endpoint` (as etcd holds them: a store's own
/// layout is visible).
pub async fn key_count(endpoint: &str, prefix: &str) -> Result<i64, String> {
    let mut kv = kv_client(endpoint, None)?;
    let request = etcd_api::etcdserverpb::RangeRequest {
        count_only: true,
        ..etcd_api::range(prefix, Some(crate::etcd::bytes_prefix_end(prefix.as_bytes())))
    };
    let response = kv
        .range(request)
        .await
        .map_err(|status| etcd_api::status_text(&status))?;
    Ok(response.into_inner().count)
}

/// Writes `value` at the etcd key `key` of the plain-HTTP `endpoint` as it is, past any store (tests that damage
/// a store's layout).
pub async fn put_key(endpoint: &str, key: &str, value: &[u8]) -> Result<(), String> {
    let mut kv = kv_client(endpoint, None)?;
    let request = etcd_api::etcdserverpb::PutRequest {
        key: key.as_bytes().to_vec(),
        value: value.to_vec(),
        ..Default::default()
    };
    kv.put(request)
        .await
        .map_err(|status| etcd_api::status_text(&status))?;
    Ok(())
}
