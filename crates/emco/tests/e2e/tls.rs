//! `emco serve` over HTTPS, against the real binary: a CA and a server certificate made at test time (emco-helm's
//! Sprig `genCA`/`genSignedCert`), emcoctl's client trusting the CA with `--ca-file` (and failing without it), a
//! plain-HTTP request to the TLS port getting no API answer, and bad certificate files refused at start.

use std::path::{Path, PathBuf};
use std::time::Duration;

use emcoctl::client::{Body, ClientError, EmcoClient};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::ServeProcess;

/// PEM files of a CA and a server certificate for `localhost`/`127.0.0.1` signed by it.
struct Certificates {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn certificates(dir: &Path, prefix: &str) -> Certificates {
    use emco_helm::gotemplate::{MapScope, Templates, Value};
    let _maps = MapScope::open();
    let mut templates = Templates::new(emco_helm::engine::helm_funcs());
    let text = r#"{{- $ca := genCA "emco-e2e-ca" 30 -}}
{{- $cert := genSignedCert "localhost" (list "127.0.0.1") (list "localhost") 30 $ca -}}
{{ $ca.Cert }}@@{{ $cert.Cert }}@@{{ $cert.Key }}"#;
    templates.parse("certs", text).unwrap();
    let output = templates
        .execute("certs", &Value::from_json(&serde_json::json!({})))
        .unwrap();
    let parts: Vec<&str> = output.split("@@").collect();
    let write = |name: &str, text: &str| {
        let path = dir.join(format!("{prefix}{name}"));
        std::fs::write(&path, text).unwrap();
        path
    };
    Certificates {
        ca: write("ca.pem", parts[0]),
        cert: write("cert.pem", parts[1]),
        key: write("key.pem", parts[2]),
    }
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emco_serves_https_to_clients_that_trust_its_ca() {
    let dir = tempfile::tempdir().unwrap();
    let files = certificates(dir.path(), "");
    let emco = ServeProcess::start(
        &[
            "--tls-cert-file",
            arg(&files.cert),
            "--tls-key-file",
            arg(&files.key),
        ],
        None,
    )
    .await;
    let target = format!("https://127.0.0.1:{}", emco.port);
    assert!(
        emco.log().contains(&format!("url={target}/v2")) && emco.log().contains("over https"),
        "{}",
        emco.log()
    );

    // emcoctl's client with --ca-file: served.
    let client = EmcoClient::with_ca_file(&target, Some(&files.ca)).unwrap();
    let reply = client
        .send("GET", "/v2/projects", true, Body::Empty)
        .await
        .unwrap();
    assert_eq!((reply.status, reply.text()), (200, "[]".to_string()));
    let created = client
        .send(
            "POST",
            "/v2/projects",
            true,
            Body::Json(serde_json::json!({"metadata": {"name": "p1"}})),
        )
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.text());
    // A pull agent's client, which speaks HTTP/2 only (ALPN h2): served too.
    let multiplexed = EmcoClient::multiplexed(&target, Some(&files.ca)).unwrap();
    let reply = multiplexed
        .send("GET", "/v2/projects/p1", true, Body::Empty)
        .await
        .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());

    // Without it, the system's CAs do not know the certificate: the request fails naming the URL and why.
    match EmcoClient::new(&target) {
        Ok(client) => {
            let err = client
                .send("GET", "/v2/projects", true, Body::Empty)
                .await
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("GET {target}/v2/projects"))
                    && err.contains("UnknownIssuer")
                    && err.contains("--ca-file"),
                "{err}"
            );
        }
        // A system without CA certificates cannot verify anything, and says so.
        Err(err @ ClientError::NoTrustedCa { .. }) => assert!(err.to_string().contains("--ca-file")),
        Err(other) => panic!("{other}"),
    }

    // A CA file that is not the server's CA (same name, other key): refused too.
    let other = certificates(dir.path(), "other-");
    let err = EmcoClient::with_ca_file(&target, Some(&other.ca))
        .unwrap()
        .send("GET", "/v2/projects", true, Body::Empty)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid peer certificate: BadSignature"), "{err}");

    // Plain HTTP to the TLS port gets no API answer.
    let mut plain = tokio::net::TcpStream::connect(emco.address()).await.unwrap();
    plain
        .write_all(b"GET /v2/projects HTTP/1.1\r\nHost: emco\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), plain.read_to_end(&mut answer))
        .await
        .expect("the server closes the connection");
    assert!(
        !answer.starts_with(b"HTTP/") && !answer.windows(2).any(|w| w == b"p1"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emco_refuses_to_start_with_bad_certificate_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = certificates(dir.path(), "");
    let other = certificates(dir.path(), "other-");
    let missing = dir.path().join("missing.pem");
    let start = |cert: &Path, key: &Path| {
        let (cert, key) = (cert.to_path_buf(), key.to_path_buf());
        async move {
            let output = tokio::time::timeout(
                Duration::from_secs(30),
                tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
                    .args(["serve", "--in-memory", "--listen", "127.0.0.1:0"])
                    .arg("--tls-cert-file")
                    .arg(&cert)
                    .arg("--tls-key-file")
                    .arg(&key)
                    .output(),
            )
            .await
            .expect("emco exits")
            .unwrap();
            assert!(!output.status.success());
            String::from_utf8_lossy(&output.stderr).into_owned()
        }
    };

    let err = start(&missing, &files.key).await;
    assert!(
        err.contains(&format!("cannot read {}", missing.display())),
        "{err}"
    );
    let err = start(&files.cert, &missing).await;
    assert!(
        err.contains(&format!("cannot read {}", missing.display())),
        "{err}"
    );
    let err = start(&files.cert, &other.key).await;
    assert!(
        err.contains(&format!(
            "the private key in {} does not match the certificate in {}",
            other.key.display(),
            files.cert.display()
        )),
        "{err}"
    );
    let err = start(&files.key, &files.key).await;
    assert!(
        err.contains(&format!("{} holds no PEM certificate", files.key.display())),
        "{err}"
    );

    // One file without the other is a command-line error.
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args(["serve", "--in-memory", "--tls-cert-file"])
        .arg(&files.cert)
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--tls-key-file"));
}
