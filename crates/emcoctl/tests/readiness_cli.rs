//! `emcoctl readiness -f FILE`: exit 0 when every object is Ready, 1 when one is not, 2 when the file is unreadable
//! or not Kubernetes objects (naming the document); table and JSON output. No API is involved.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::process::Output;

fn emcoctl(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_emcoctl"))
        .args(args)
        // No API is needed: an unreachable one must not matter.
        .env("EMCO_URL", "http://127.0.0.1:1")
        .output()
        .unwrap()
}

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const READY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: firewall, namespace: vfw}
spec: {replicas: 2}
status: {replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: vfw}
";

const CRASHING: &str = r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sink-0", "namespace": "vfw"},
   "status": {"phase": "Running", "containerStatuses": [
     {"name": "sink", "ready": false, "restartCount": 5, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}},
  {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "sink", "namespace": "vfw"},
   "spec": {"clusterIP": "10.0.0.3"}}
]}"#;

#[test]
fn exit_code_says_whether_everything_is_ready() {
    let dir = tempfile::tempdir().unwrap();

    let ready = file(&dir, "ready.yaml", READY);
    let output = emcoctl(&["readiness", "-f", &ready]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("KIND") && stdout.contains("MESSAGE"), "{stdout}");
    assert!(
        stdout.contains("Deployment firewall: 2 of 2 replicas available"),
        "{stdout}"
    );
    assert!(stdout.contains("ConfigMap settings: present"), "{stdout}");

    let crashing = file(&dir, "crashing.json", CRASHING);
    let output = emcoctl(&["readiness", "-f", &crashing, "-o", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        printed,
        serde_json::json!([
            {"kind": "Pod", "name": "sink-0", "namespace": "vfw", "status": "Failed",
             "message": "Pod sink-0: container sink CrashLoopBackOff (restarted 5 times)"},
            {"kind": "Service", "name": "sink", "namespace": "vfw", "status": "Ready",
             "message": "Service sink: cluster IP 10.0.0.3"},
        ])
    );
}

#[test]
fn bad_files_exit_2_naming_the_document() {
    let dir = tempfile::tempdir().unwrap();
    let not_objects = file(
        &dir,
        "values.yaml",
        "apiVersion: v1\nkind: ConfigMap\n---\nreplicas: 3\n",
    );
    let output = emcoctl(&["readiness", "-f", &not_objects]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("values.yaml, document 2: not a Kubernetes object: no apiVersion"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());

    let missing = dir.path().join("missing.yaml").display().to_string();
    let output = emcoctl(&["readiness", "-f", &missing]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read") && stderr.contains("missing.yaml"),
        "{stderr}"
    );

    let output = emcoctl(&["readiness", "-f", &missing, "-o", "yaml"]);
    assert_eq!(output.status.code(), Some(2), "clap refuses an unknown output");
}
