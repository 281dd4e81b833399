//! A controller of one's own (`examples/webhook-controller/sample_controller.py`, EMCO's sample-controller as a
//! webhook) registered with its HTTPS URL and CA and named in the vFW DIG's intents: at instantiate emco calls it
//! with the DIG's objects and applies its answer — the firewall, packet generator and sink Deployments carry its
//! label on both clusters, and each app has its ConfigMap; the status says the webhook changed them. A webhook
//! outside the operator's allowed prefixes is never called: the instantiate is refused naming it.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::core::v1::ConfigMap;
use emco_server::{ServerConfig, WebhookTargets};
use emco_store::Store;
use serde_json::json;

use crate::support::*;

/// The sample webhook, killed when dropped.
struct Webhook(Child);

impl Drop for Webhook {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A CA and a serving certificate for 127.0.0.1 signed by it: (CA PEM, certificate PEM, key PEM).
fn certificates() -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::default();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let mut server = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    server.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let cert = server.signed_by(&key, &issuer).unwrap();
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

/// Starts the example's webhook on a free port with `cert` and `key`; answers it and its port.
fn start_webhook(python: &Path, dir: &Path, cert: &str, key: &str) -> (Webhook, u16) {
    std::fs::write(dir.join("server.crt"), cert).unwrap();
    std::fs::write(dir.join("server.key"), key).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/webhook-controller/sample_controller.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg("--cert")
        .arg(dir.join("server.crt"))
        .arg("--key")
        .arg(dir.join("server.key"))
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .parse()
        .unwrap();
    (Webhook(child), port)
}

/// Names `controller` (with intent `sample-intent`) beside the vFW's placement in its DIG's intents, approves the
/// DIG and answers its instantiate.
/// emco allowed to call webhooks on the loopback `port` (within `bounds`), with the vFW onboarded on `sim`'s
/// clusters.
async fn emco_calling(port: u16, bounds: WebhookTargets, sim: &kubesim::Simulator) -> Emco {
    let config = ServerConfig {
        webhook_targets: WebhookTargets {
            prefixes: vec![format!("https://127.0.0.1:{port}/")],
            ..bounds
        },
        ..ServerConfig::default()
    };
    let emco = Emco::start_with_configs(Store::memory(), test_rsync_config(), config).await;
    onboard_vfw(&emco.http, &kubeconfigs(sim)).await;
    emco
}

async fn instantiate_naming(http: &Http, controller: &str) -> Reply {
    let intents = json!({"metadata": {"name": "i"}, "spec": {"intent": {"genericPlacementIntent": "pi", controller: "sample-intent"}}});
    http.request(
        "PUT",
        &format!("{DIG}/intents/i"),
        Some("application/json"),
        intents.to_string().as_bytes(),
    )
    .await
    .expect(200);
    http.post_empty(&format!("{DIG}/approve")).await.expect(202);
    http.post_empty(&format!("{DIG}/instantiate")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_controller_changes_every_cluster_s_objects() {
    let Some(python) = program("python3") else {
        eprintln!("python3 is not installed: the webhook example is not run");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates();
    let (_webhook, port) = start_webhook(&python, dir.path(), &cert, &key);
    let url = format!("https://127.0.0.1:{port}/sample");
    let sim = vfw_clusters(2).await;
    let _monitors = start_monitors(&sim);
    let emco = emco_calling(port, WebhookTargets::default(), &sim).await;
    let register = |name: &str, url: &str| json!({"metadata": {"name": name}, "spec": {"host": "sample", "port": 9099, "type": "action", "priority": 5, "url": url, "caCert": ca}});
    emco.http
        .post("/v2/controllers", register("sample", &url))
        .await
        .expect(201);
    emco.http
        .post(
            "/v2/controllers",
            register("elsewhere", "https://controllers.example.com/x"),
        )
        .await
        .expect(201);
    // A webhook outside the allowed prefixes is never called.
    let refused = instantiate_naming(&emco.http, "elsewhere")
        .await
        .expect(409)
        .json();
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("'elsewhere'")
            && message.contains("under none of the URL prefixes allowed for webhook controllers"),
        "{message}"
    );

    instantiate_naming(&emco.http, "sample").await.expect(202);
    emco.http.wait_dig_ready(DIG).await;

    for cluster in sim.clusters() {
        let client = cluster.client().unwrap();
        let deployments: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), "default");
        for deployment in deployments.list(&Default::default()).await.unwrap() {
            let labels = deployment
                .spec
                .template
                .metadata
                .and_then(|m| m.labels)
                .unwrap_or_default();
            assert_eq!(
                labels.get("sample.emco.io/intent").map(String::as_str),
                Some("sample-intent"),
                "{}",
                cluster.name()
            );
        }
        let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(client, "default");
        let sample = config_maps
            .get("sink-sample")
            .await
            .unwrap()
            .data
            .unwrap_or_default();
        assert_eq!(
            sample["cluster"],
            format!("vfw-cluster-provider+{}", cluster.name())
        );
    }
    let status = emco
        .http
        .get(&format!("{DIG}/status?app=sink"))
        .await
        .expect(200)
        .json();
    let resources = status["apps"][0]["clusters"][0]["resources"].as_array().unwrap();
    let config_map = resources.iter().find(|r| r["name"] == "sink-sample").unwrap();
    assert_eq!(config_map["changedBy"], json!(["sample"]));
}

/// A webhook that misbehaves by path, over TLS with `cert` and `key`: `/slow` never answers, `/big` answers more
/// than a kilobyte, `/moved` redirects. Answers its port.
async fn start_misbehaving_webhook(cert: &str, key: &str) -> u16 {
    use rustls::pki_types::pem::PemObject as _;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let chain = vec![rustls::pki_types::CertificateDer::from_pem_slice(cert.as_bytes()).unwrap()];
    let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(stream).await else {
                    return;
                };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && tls.read(&mut byte).await.unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or_default().to_string();
                let answer = match path.as_str() {
                    "/slow" => {
                        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                        return;
                    }
                    "/big" => {
                        let body = format!("{{\"patches\": [], \"padding\": \"{}\"}}", "x".repeat(4096));
                        format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len())
                    }
                    _ => "HTTP/1.1 302 Found\r\nLocation: https://elsewhere.example.com/\r\nContent-Length: 0\r\n\r\n".to_string(),
                };
                let _ = tls.write_all(answer.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_hangs_answers_too_much_or_redirects_fails_the_instantiate_and_emco_keeps_serving() {
    let (ca, cert, key) = certificates();
    let port = start_misbehaving_webhook(&cert, &key).await;
    let sim = vfw_clusters(1).await;
    let bounds = WebhookTargets {
        timeout: std::time::Duration::from_secs(1),
        max_answer_bytes: 1024,
        ..WebhookTargets::default()
    };
    let emco = emco_calling(port, bounds, &sim).await;
    for (path, expected) in [
        ("slow", "no answer within 1s"),
        ("big", "the answer is larger than 1024 bytes"),
        ("moved", "302 Found, not 200 OK (redirects are not followed)"),
    ] {
        let registration = json!({"metadata": {"name": path}, "spec": {"host": "h", "port": 1, "type": "action", "priority": 1,
            "url": format!("https://127.0.0.1:{port}/{path}"), "caCert": ca}});
        emco.http.post("/v2/controllers", registration).await.expect(201);
        let refused = instantiate_naming(&emco.http, path).await.expect(409).json();
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("controller '{path}'")) && message.contains(expected),
            "{path}: {message}"
        );
        // The process keeps serving.
        emco.http.get("/v2/projects").await.expect(200);
    }
}
