//! Authentication of the real `emco serve` binary: the token file re-read on SIGHUP (new tokens in, removed ones
//! out, a bad file keeping the old ones and logged by line), request logs naming the user, the start refused
//! when the API would be exposed without authentication or exec credentials allowed without it, and exec
//! credential plugins run by rsync when they are allowed.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use emco_server::{KubeconfigPolicy, ServerConfig};
use serde_json::json;
use tokio::io::AsyncBufReadExt as _;

use crate::rsync::free_port;
use crate::support::*;

/// How long a started or reloaded server may take to show it (generous: the machine is shared).
const WITHIN: Duration = Duration::from_secs(30);

/// A running `emco serve` whose log (stderr) is collected.
struct Served {
    child: tokio::process::Child,
    http: Http,
    log: Arc<Mutex<String>>,
}

impl Served {
    /// `emco serve --in-memory` with `args` (which say where it listens), reached on loopback port `port`.
    async fn start(args: &[&str], port: u16) -> Self {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
            .args(["serve", "--in-memory"])
            .args(args)
            .env("RUST_LOG", "info,tower_http=debug")
            .env_remove("EMCO_TOKEN_AUTH_FILE")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let collected = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut log = collected.lock().unwrap();
                log.push_str(&without_colours(&line));
                log.push('\n');
            }
        });
        let http = Http {
            address: ([127, 0, 0, 1], port).into(),
        };
        let served = Self { child, http, log };
        let http = &served.http;
        served
            .wait_until("the server answers /healthz", || async move {
                tokio::net::TcpStream::connect(http.address).await.is_ok()
                    && http.get("/healthz").await.status == 200
            })
            .await;
        served
    }

    /// GET `path` with `token` as the bearer token.
    async fn get_as(&self, token: &str, path: &str) -> Reply {
        self.http
            .request_with("GET", path, &[("Authorization", &format!("Bearer {token}"))], b"")
            .await
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    fn hang_up(&self) {
        let pid = self.child.id().unwrap().to_string();
        let status = std::process::Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap();
        assert!(status.success());
    }

    async fn wait_until<F, Fut>(&self, what: &str, done: F)
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = tokio::time::Instant::now() + WITHIN;
        while !done().await {
            assert!(
                tokio::time::Instant::now() < deadline,
                "not within {WITHIN:?}: {what}\nlog:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_token_file_and_a_bad_file_keeps_the_old_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "first-token-a1,alice,1,emco:admin\n").unwrap();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let served = &Served::start(
        &["--listen", &listen, "--token-auth-file", tokens.to_str().unwrap()],
        port,
    )
    .await;

    served.get_as("first-token-a1", "/v2/projects").await.expect(200);
    served.get_as("second-token-b2", "/v2/projects").await.expect(401);
    assert_eq!(served.http.get("/v2/projects").await.status, 401);
    // Request logs name the user.
    served
        .wait_until("a request line names the user", || async move {
            served
                .log()
                .lines()
                .any(|line| line.contains("user=alice") && line.contains("uri=/v2/projects"))
        })
        .await;

    // The first token removed, a second one added.
    std::fs::write(&tokens, "second-token-b2,bob,2,\"emco:viewer\"\n").unwrap();
    served.hang_up();
    served
        .wait_until("the new token is accepted", || async move {
            served.get_as("second-token-b2", "/v2/projects").await.status == 200
        })
        .await;
    served.get_as("first-token-a1", "/v2/projects").await.expect(401);

    // A bad file: logged by line, the second token still works.
    std::fs::write(&tokens, "third-token-c3,carl,3,emco:admin\nbroken-line\n").unwrap();
    served.hang_up();
    served
        .wait_until("the bad file is logged by line", || async move {
            served.log().contains("tokens.csv, line 2")
        })
        .await;
    served.get_as("second-token-b2", "/v2/projects").await.expect(200);
    served.get_as("third-token-c3", "/v2/projects").await.expect(401);
    let log = served.log();
    assert!(log.contains("the previous tokens stay in force"), "{log}");
    for token in ["first-token-a1", "second-token-b2", "third-token-c3"] {
        assert!(!log.contains(token), "a token was logged:\n{log}");
    }
}

/// `line` without its terminal colour sequences (`ESC [ … m`).
fn without_colours(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs `emco serve` with `args`, expecting it to refuse to start; returns its stderr.
async fn refused_start(args: &[&str]) -> String {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args(["serve", "--in-memory"])
        .args(args)
        .env("RUST_LOG", "warn")
        .env_remove("EMCO_TOKEN_AUTH_FILE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(WITHIN, child.wait_with_output())
        .await
        .expect("emco serve started instead of refusing")
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(!output.status.success(), "{stderr}");
    stderr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_to_expose_the_api_without_authentication() {
    let stderr = refused_start(&["--listen", "0.0.0.0:0"]).await;
    assert!(
        stderr.contains("--token-auth-file") && stderr.contains("--insecure-allow-unauthenticated"),
        "{stderr}"
    );
    let stderr = refused_start(&["--listen", "127.0.0.1:0", "--allow-exec-credentials"]).await;
    assert!(
        stderr.contains("--allow-exec-credentials needs --token-auth-file"),
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "good-token-1,alice,1,emco:admin\nsecret-token-2,bob\n").unwrap();
    let stderr = refused_start(&[
        "--listen",
        "127.0.0.1:0",
        "--token-auth-file",
        tokens.to_str().unwrap(),
    ])
    .await;
    assert!(
        stderr.contains(&format!(
            "the token file {}, line 2: 2 field(s)",
            tokens.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("secret-token-2"), "{stderr}");

    // Insecure on purpose: it starts, and says so.
    let port = free_port();
    let served = Served::start(
        &[
            "--listen",
            &format!("0.0.0.0:{port}"),
            "--insecure-allow-unauthenticated",
        ],
        port,
    )
    .await;
    served.http.get("/v2/projects").await.expect(200);
    assert!(
        served.log().contains("WITHOUT authentication"),
        "{}",
        served.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_exec_credential_plugins_are_run_by_rsync() {
    let sim = vfw_clusters(2).await;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("plugin-ran");
    let policy = KubeconfigPolicy { allow_exec: true };
    let emco = Emco::start_with_configs(
        emco_store::Store::memory(),
        emco_rsync::RsyncConfig {
            kubeconfig_policy: policy,
            ..test_rsync_config()
        },
        ServerConfig {
            kubeconfig_policy: policy,
            ..ServerConfig::default()
        },
    )
    .await;
    // edge01's user gets its token from a plugin, as `aws eks get-token` would give it.
    let plugin = dir.path().join("plugin.sh");
    std::fs::write(
        &plugin,
        format!(
            "touch '{}'\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"kubesim\"}}}}'\n",
            marker.display()
        ),
    )
    .unwrap();
    // The admin's token (not its client certificate) in the kubeconfig, replaced by the plugin.
    let mut clusters = kubeconfigs(&sim);
    clusters[0].1 = sim.clusters()[0]
        .kubeconfig_for(
            "admin",
            &kubesim::Credentials::Token(kubesim::cluster::ADMIN_TOKEN.into()),
        )
        .replace(
        "    token: \"kubesim\"\n",
        &format!(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: /bin/sh\n      args: ['{}']\n",
            plugin.display()
        ),
    );
    assert!(clusters[0].1.contains("exec:"), "{}", clusters[0].1);
    onboard_vfw(&emco.http, &clusters).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?output=summary", WITHIN, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 12}), "{done}");
    assert!(marker.exists(), "the exec plugin did not run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_the_request_id_the_answer_echoes() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let served = &Served::start(&["--listen", &listen, "--log-format", "json"], port).await;
    let reply = served
        .http
        .request_with(
            "GET",
            "/v2/projects/absent",
            &[("X-Request-Id", "night-shift-42")],
            b"",
        )
        .await
        .expect(404);
    assert_eq!(reply.header("x-request-id").as_deref(), Some("night-shift-42"));
    // The answer's log line: one JSON object naming the request's id, route, status and latency.
    let line = |log: String| {
        log.lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .find(|entry| {
                entry["span"]["request_id"] == "night-shift-42" && entry["fields"]["status"].is_number()
            })
    };
    served
        .wait_until("the answer is logged as JSON", || async {
            line(served.log()).is_some()
        })
        .await;
    let entry = line(served.log()).unwrap();
    assert_eq!(entry["level"], "INFO");
    assert_eq!(entry["fields"]["status"], 404);
    assert_eq!(entry["span"]["uri"], "/v2/projects/absent");
    assert!(
        entry["timestamp"].is_string() && entry["fields"]["latency"].is_string(),
        "{entry}"
    );
    // Every line the server wrote is JSON.
    for line in served.log().lines().filter(|line| !line.trim().is_empty()) {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "not JSON: {line}"
        );
    }
}
