//! `emco serve --etcd-endpoints`: the vFW example instantiated with the store in etcd, `emco serve` restarted on
//! the same etcd (the project, the DIG and its status are still there), and a bad endpoint refused at startup.
//! Skips (with a note) when no `etcd` binary is installed, unless `EMCO_REQUIRE_ETCD=1`.

use std::process::Stdio;
use std::time::Duration;

use emco_store::etcd_testing::EtcdServer;
use serde_json::json;

use crate::rsync::free_port;
use crate::support::{DIG, Http, counts, kubeconfigs, onboard_vfw, vfw_clusters};

/// How long the instantiation may take to settle.
const SETTLE: Duration = Duration::from_secs(60);

/// `emco serve` on etcd at `endpoint`, listening on `port`; killed when dropped.
async fn serve_on_etcd(endpoint: &str, port: u16) -> tokio::process::Child {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--etcd-endpoints", endpoint, "--etcd-prefix", "/e2e"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..400 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return child;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("emco serve on etcd exited: {status}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("emco serve on etcd does not listen on {port}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_on_etcd_keeps_projects_and_status_across_a_restart() {
    let Some(etcd) = EtcdServer::start().await.unwrap() else {
        return;
    };
    let sim = vfw_clusters(1).await;
    let port = free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = serve_on_etcd(etcd.endpoint(), port).await;
    http.post(
        "/v2/projects",
        json!({"metadata": {"name": "kept", "description": "on etcd"}}),
    )
    .await
    .expect(201);
    onboard_vfw(&http, &kubeconfigs(&sim)).await;
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    let done = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 6}));

    emco.start_kill().unwrap();
    emco.wait().await.unwrap();
    let _emco = serve_on_etcd(etcd.endpoint(), port).await;
    let project = http.get("/v2/projects/kept").await.expect(200).json();
    assert_eq!(project["metadata"]["description"], "on etcd");
    // The status index is rebuilt from etcd: the answer is the one before the restart.
    let again = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&again), json!({"Applied": 6}));
}

#[tokio::test]
async fn serve_refuses_an_etcd_endpoint_that_does_not_answer() {
    let closed = format!("http://127.0.0.1:{}", free_port());
    let output = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
            .args(["serve", "--listen", &format!("127.0.0.1:{}", free_port())])
            .args(["--etcd-endpoints", &closed])
            .env("RUST_LOG", "error")
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("emco serve gives up by itself")
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&closed), "{stderr}");
}
