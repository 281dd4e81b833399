//! Test helpers: an in-process API (router without a socket), the vFW example packed from `examples/vfw`, and
//! request builders.

use std::path::Path;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, StatusCode};
use emco_server::{Server, ServerConfig};
use emco_store::Store;
use http_body_util::BodyExt;
use serde_json::{Value as Json, json};
use tower::ServiceExt;

pub(crate) const PROJECT: &str = "/v2/projects/testvfw";
pub(crate) const CA: &str = "/v2/projects/testvfw/composite-apps/compositevfw/v1";
pub(crate) const DIG: &str = "/v2/projects/testvfw/composite-apps/compositevfw/v1/deployment-intent-groups/vfw_deployment_intent_group";
pub(crate) const PROVIDER: &str = "/v2/cluster-providers/vfw-cluster-provider";
pub(crate) const APPS: [&str; 3] = ["packetgen", "firewall", "sink"];

#[derive(Clone)]
pub(crate) struct Api {
    pub(crate) router: Router,
    pub(crate) store: Store,
    /// Sent as `Authorization: Bearer …` with every request when set.
    pub(crate) token: Option<String>,
}

pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) bytes: Bytes,
}

impl Reply {
    pub(crate) fn json(&self) -> Json {
        serde_json::from_slice(&self.bytes).unwrap_or_else(|_| panic!("not JSON: {:?}", self.bytes))
    }

    pub(crate) fn code(&self) -> String {
        self.json()["code"].as_str().unwrap_or_default().to_string()
    }

    pub(crate) fn message(&self) -> String {
        self.json()["message"].as_str().unwrap_or_default().to_string()
    }

    #[track_caller]
    pub(crate) fn expect(self, status: StatusCode) -> Self {
        assert_eq!(
            self.status,
            status,
            "body: {}",
            String::from_utf8_lossy(&self.bytes)
        );
        self
    }
}

pub(crate) fn pack_dir(dir: &Path) -> Vec<u8> {
    fn walk(root: &Path, dir: &Path, prefix: &str, files: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, prefix, files);
            } else {
                let relative = path.strip_prefix(root).unwrap().to_string_lossy().to_string();
                files.push((format!("{prefix}{relative}"), std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    let prefix = format!("{}/", dir.file_name().unwrap().to_string_lossy());
    walk(dir, dir, &prefix, &mut files);
    let borrowed: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    emco_helm::archive::write_tgz(&borrowed)
}

pub(crate) fn example(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/vfw")
        .join(path)
}

/// The vFW chart of `app`, packed once per test binary.
pub(crate) fn chart(app: &str) -> Vec<u8> {
    static PACKED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>> =
        std::sync::OnceLock::new();
    let packed = PACKED.get_or_init(Default::default);
    let mut packed = packed.lock().unwrap();
    packed
        .entry(app.to_string())
        .or_insert_with(|| pack_dir(&example(&format!("charts/{app}"))))
        .clone()
}

pub(crate) fn profile(app: &str) -> Vec<u8> {
    let dir = example(&format!("profiles/{app}"));
    let manifest = std::fs::read(dir.join("manifest.yaml")).unwrap();
    let values = std::fs::read(dir.join("override_values.yaml")).unwrap();
    emco_helm::archive::write_tgz(&[("manifest.yaml", &manifest), ("override_values.yaml", &values)])
}

pub(crate) fn kubeconfig(cluster: &str) -> Vec<u8> {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster}\n  cluster:\n    server: http://127.0.0.1:6443/clusters/{cluster}\ncontexts:\n- name: {cluster}\n  context:\n    cluster: {cluster}\n    user: admin\ncurrent-context: {cluster}\nusers:\n- name: admin\n  user:\n    token: secret-token-{cluster}\n"
    )
    .into_bytes()
}

pub(crate) const BOUNDARY: &str = "test-boundary-7d1f";

pub(crate) fn form(metadata: Option<&Json>, file: Option<&[u8]>) -> Vec<u8> {
    let files: Vec<(&str, &str, &[u8])> = file.map(|file| ("file", "f.tgz", file)).into_iter().collect();
    form_with(metadata, &files)
}

/// A multipart form: the metadata part, then each (part name, file name, content).
pub(crate) fn form_with(metadata: Option<&Json>, files: &[(&str, &str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    if let Some(metadata) = metadata {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{metadata}\r\n"
            )
            .as_bytes(),
        );
    }
    for (part, file_name, content) in files {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{part}\"; filename=\"{file_name}\"\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

impl Api {
    pub(crate) fn new(store: Store) -> Self {
        Self::with_config(store, ServerConfig::default())
    }

    pub(crate) fn with_config(store: Store, config: ServerConfig) -> Self {
        Self {
            router: Server::new(store.clone(), None, config).router(),
            store,
            token: None,
        }
    }

    /// The same API, called with `token` as the bearer token.
    pub(crate) fn with_token(&self, token: &str) -> Self {
        Self {
            token: Some(token.to_string()),
            ..self.clone()
        }
    }

    pub(crate) async fn call(
        &self,
        method: Method,
        uri: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
        accept: Option<&str>,
    ) -> Reply {
        let mut headers = Vec::new();
        if let Some(content_type) = content_type {
            headers.push(("content-type", content_type));
        }
        if let Some(accept) = accept {
            headers.push(("accept", accept));
        }
        self.request(method, uri, &headers, body).await
    }

    /// A request with these headers.
    pub(crate) async fn request(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Reply {
        let mut request = Request::builder().method(method).uri(uri);
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = self
            .router
            .clone()
            .oneshot(request.body(Body::from(body)).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            headers,
            bytes,
        }
    }

    pub(crate) async fn post(&self, uri: &str, body: Json) -> Reply {
        self.call(
            Method::POST,
            uri,
            Some("application/json"),
            body.to_string().into_bytes(),
            None,
        )
        .await
    }

    pub(crate) async fn put(&self, uri: &str, body: Json) -> Reply {
        self.call(
            Method::PUT,
            uri,
            Some("application/json"),
            body.to_string().into_bytes(),
            None,
        )
        .await
    }

    pub(crate) async fn post_empty(&self, uri: &str) -> Reply {
        self.call(Method::POST, uri, None, Vec::new(), None).await
    }

    pub(crate) async fn get(&self, uri: &str) -> Reply {
        self.call(Method::GET, uri, None, Vec::new(), None).await
    }

    pub(crate) async fn delete(&self, uri: &str) -> Reply {
        self.call(Method::DELETE, uri, None, Vec::new(), None).await
    }

    pub(crate) async fn post_form(&self, uri: &str, metadata: Option<&Json>, file: Option<&[u8]>) -> Reply {
        let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
        self.call(Method::POST, uri, Some(&content_type), form(metadata, file), None)
            .await
    }

    pub(crate) async fn put_form(&self, uri: &str, metadata: &Json, file: &[u8]) -> Reply {
        let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
        self.call(
            Method::PUT,
            uri,
            Some(&content_type),
            form(Some(metadata), Some(file)),
            None,
        )
        .await
    }

    /// Names `controller` with its `intent` in the vFW DIG's group intent, beside its placement intent.
    pub(crate) async fn name_controller(&self, controller: &str, intent: &str) {
        self.put(
            &format!("{DIG}/intents/fw-deployment-intent"),
            json!({"metadata": {"name": "fw-deployment-intent"}, "spec": {"intent":
                {"genericPlacementIntent": "fw-placement-intent", controller: intent}}}),
        )
        .await
        .expect(StatusCode::OK);
    }

    /// Approves the vFW DIG.
    pub(crate) async fn approve_vfw(&self) {
        self.post_empty(&format!("{DIG}/approve"))
            .await
            .expect(StatusCode::ACCEPTED);
    }

    /// Adds `count` clusters `<prefix>000`… to the vFW cluster provider, each labelled `edge-cluster` (so the
    /// apps placed by that label go on them too).
    pub(crate) async fn add_labelled_clusters(&self, prefix: &str, count: usize) {
        for index in 0..count {
            let cluster = format!("{prefix}{index:03}");
            self.post_form(
                &format!("{PROVIDER}/clusters"),
                Some(&json!({"metadata": {"name": cluster}})),
                Some(&kubeconfig(&cluster)),
            )
            .await
            .expect(StatusCode::CREATED);
            self.post(
                &format!("{PROVIDER}/clusters/{cluster}/labels"),
                json!({"clusterLabel": "edge-cluster"}),
            )
            .await
            .expect(StatusCode::CREATED);
        }
    }

    /// Onboards the vFW example of the seeds up to the DIG with its intents (state Created).
    pub(crate) async fn onboard_vfw(&self) {
        self.post(
            "/v2/controllers",
            json!({"metadata": {"name": "rsync"}, "spec": {"host": "rsync", "port": 9031}}),
        )
        .await
        .expect(StatusCode::CREATED);
        self.post(
            "/v2/cluster-providers",
            json!({"metadata": {"name": "vfw-cluster-provider"}}),
        )
        .await
        .expect(StatusCode::CREATED);
        for cluster in ["edge01", "edge02"] {
            let metadata = json!({"metadata": {"name": cluster}});
            self.post_form(
                &format!("{PROVIDER}/clusters"),
                Some(&metadata),
                Some(&kubeconfig(cluster)),
            )
            .await
            .expect(StatusCode::CREATED);
            self.post(
                &format!("{PROVIDER}/clusters/{cluster}/labels"),
                json!({"clusterLabel": "edge-cluster"}),
            )
            .await
            .expect(StatusCode::CREATED);
        }
        self.post("/v2/projects", json!({"metadata": {"name": "testvfw"}}))
            .await
            .expect(StatusCode::CREATED);
        self.post(
            &format!("{PROJECT}/composite-apps"),
            json!({"metadata": {"name": "compositevfw"}, "spec": {"compositeAppVersion": "v1"}}),
        )
        .await
        .expect(StatusCode::CREATED);
        for app in APPS {
            let metadata = json!({"metadata": {"name": app, "description": format!("{app} app")}});
            self.post_form(&format!("{CA}/apps"), Some(&metadata), Some(&chart(app)))
                .await
                .expect(StatusCode::CREATED);
        }
        self.post(
            &format!("{CA}/composite-profiles"),
            json!({"metadata": {"name": "vfw_composite-profile"}}),
        )
        .await
        .expect(StatusCode::CREATED);
        for app in APPS {
            let metadata = json!({"metadata": {"name": format!("{app}-profile")}, "spec": {"app": app}});
            self.post_form(
                &format!("{CA}/composite-profiles/vfw_composite-profile/profiles"),
                Some(&metadata),
                Some(&profile(app)),
            )
            .await
            .expect(StatusCode::CREATED);
        }
        self.post(
            &format!("{CA}/deployment-intent-groups"),
            json!({"metadata": {"name": "vfw_deployment_intent_group"},
                   "spec": {"compositeProfile": "vfw_composite-profile", "version": "fw0",
                            "overrideValues": [{"app": "firewall", "values": {"replicaCount": "2"}}]}}),
        )
        .await
        .expect(StatusCode::CREATED);
        self.post(&format!("{DIG}/intents"), json!({"metadata": {"name": "fw-deployment-intent"}, "spec": {"intent": {"genericPlacementIntent": "fw-placement-intent"}}}))
            .await
            .expect(StatusCode::CREATED);
        self.post(
            &format!("{DIG}/generic-placement-intents"),
            json!({"metadata": {"name": "fw-placement-intent"}}),
        )
        .await
        .expect(StatusCode::CREATED);
        let intents = [
            (
                "packetgen",
                json!({"allOf": [{"clusterProvider": "vfw-cluster-provider", "clusterLabel": "edge-cluster"}]}),
            ),
            (
                "firewall",
                json!({"allOf": [{"clusterProvider": "vfw-cluster-provider", "cluster": "edge01"},
                                          {"clusterProvider": "vfw-cluster-provider", "cluster": "edge02"}]}),
            ),
            (
                "sink",
                json!({"anyOf": [{"clusterProvider": "vfw-cluster-provider", "clusterLabel": "edge-cluster"}]}),
            ),
        ];
        for (app, intent) in intents {
            self.post(
                &format!("{DIG}/generic-placement-intents/fw-placement-intent/app-intents"),
                json!({"metadata": {"name": format!("{app}-placement")}, "spec": {"app": app, "intent": intent}}),
            )
            .await
            .expect(StatusCode::CREATED);
        }
    }

    /// Approves and instantiates the onboarded vFW's DIG (both answered 202).
    pub(crate) async fn approve_and_instantiate_vfw(&self) {
        self.post_empty(&format!("{DIG}/approve"))
            .await
            .expect(StatusCode::ACCEPTED);
        self.post_empty(&format!("{DIG}/instantiate"))
            .await
            .expect(StatusCode::ACCEPTED);
    }

    pub(crate) async fn states(&self) -> Vec<String> {
        let (state, _) = emco_appcontext::Catalog::new(self.store.clone())
            .state(&emco_appcontext::ResourcePath::new(
                emco_appcontext::Kind::DeploymentIntentGroup,
                ["testvfw", "compositevfw", "v1", "vfw_deployment_intent_group"]
                    .map(String::from)
                    .to_vec(),
            ))
            .await
            .unwrap();
        state.actions.iter().map(|a| a.state.to_string()).collect()
    }
}
