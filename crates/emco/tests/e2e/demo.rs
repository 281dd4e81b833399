//! `emco demo`, the README's first command, as a newcomer runs it: the binary, its own simulated clusters and
//! monitors, the vFW example onboarded, Instantiated and Ready, and the status table printed.

use std::process::Stdio;
use std::time::Duration;

/// Runs `emco demo --exit-when-ready` with `extra` flags and its data in `data`; its standard output, once it
/// exited successfully.
async fn run_demo(data: &tempfile::TempDir, extra: &[&str]) -> String {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args([
            "demo",
            "--listen",
            "127.0.0.1:0",
            "--exit-when-ready",
            "--timeout-secs",
            "100",
        ])
        .args(extra)
        .arg("--data-dir")
        .arg(data.path())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(Duration::from_secs(150), child.wait_with_output())
        .await
        .expect("the demo did not finish")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_shows_the_vfw_example_instantiated_and_ready() {
    let data = tempfile::tempdir().unwrap();
    let stdout = run_demo(&data, &[]).await;

    // Progress ends Instantiated with all 12 resources applied and all 18 objects (6 pods) ready.
    assert!(
        stdout.contains("Instantiated   resources: Applied 12") && stdout.contains("readiness: Ready 18"),
        "{stdout}"
    );
    // The table: a row per placed resource and per pod, every one Present and Ready.
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|line| line.starts_with('│') && !line.contains("APP"))
        .map(|line| line.trim_matches('│').split('┆').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 18, "{stdout}");
    assert!(
        rows.iter().all(|row| row[5] == "Present" && row[6] == "Ready"),
        "{stdout}"
    );
    let placed = rows.iter().filter(|row| row[4] == "Applied").count();
    let pods = rows.iter().filter(|row| row[2] == "Pod" && row[4] == "-").count();
    assert_eq!((placed, pods), (12, 6), "{stdout}");
    for cluster in ["edge01", "edge02"] {
        assert_eq!(rows.iter().filter(|row| row[1] == cluster).count(), 9, "{stdout}");
    }
    // What to try next points at the running API and at a cluster's kubeconfig.
    assert!(stdout.contains("status?output=summary"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("Open the web page: http://") && line.ends_with("/ui/")),
        "{stdout}"
    );
    assert!(data.path().join("kubeconfigs/edge01.yaml").is_file());
    assert!(
        stdout.contains(&format!(
            "kubectl --kubeconfig {}",
            data.path().join("kubeconfigs/edge01.yaml").display()
        )),
        "{stdout}"
    );
}

#[tokio::test]
async fn the_demo_refuses_a_data_directory_in_use() {
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("store")).unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args([
            "demo",
            "--listen",
            "127.0.0.1:0",
            "--exit-when-ready",
            "--data-dir",
        ])
        .arg(data.path())
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("already holds the store of an earlier demo"),
        "{stderr}"
    );
}

#[tokio::test]
async fn the_demo_names_a_missing_example_directory() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args([
            "demo",
            "--listen",
            "127.0.0.1:0",
            "--exit-when-ready",
            "--example",
            "/nonexistent/vfw",
        ])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/vfw/charts/packetgen"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_a_cluster_in_pull_mode_beside_a_direct_one() {
    let data = tempfile::tempdir().unwrap();
    let stdout = run_demo(&data, &["--pull-clusters", "1"]).await;
    assert!(
        stdout.contains("pull cluster(s) edge02: an agent in each"),
        "{stdout}"
    );
    // Both clusters carry the example, every object Present and Ready, the pull cluster's too.
    assert!(
        stdout.contains("Instantiated   resources: Applied 12") && stdout.contains("readiness: Ready 18"),
        "{stdout}"
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|line| line.starts_with('│') && !line.contains("APP"))
        .map(|line| line.trim_matches('│').split('┆').map(str::trim).collect())
        .collect();
    assert_eq!(
        rows.iter().filter(|row| row[1] == "edge02").count(),
        9,
        "{stdout}"
    );
    assert!(
        rows.iter().all(|row| row[5] == "Present" && row[6] == "Ready"),
        "{stdout}"
    );

    // Every cluster a pull cluster is refused: edge01 carries the network intents.
    let refused = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args([
            "demo",
            "--listen",
            "127.0.0.1:0",
            "--clusters",
            "2",
            "--pull-clusters",
            "2",
        ])
        .output()
        .await
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--pull-clusters 2"),
        "{refused:?}"
    );
}
