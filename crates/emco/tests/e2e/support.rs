//! Test helpers: a minimal HTTP/1.1 client, an in-process `emco` (API + rsync) on a loopback port, the vFW
//! onboarding, GitOps clusters (their agents, their registration), and status polling.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use emco_appcontext::{AppContexts, Catalog};
use emco_rsync::{Rsync, RsyncConfig};
use emco_server::{Server, ServerConfig};
use emco_store::Store;
use serde_json::{Value as Json, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub(crate) const DIG: &str = "/v2/projects/testvfw/composite-apps/compositevfw/v1/deployment-intent-groups/vfw_deployment_intent_group";
pub(crate) const APPS: [&str; 3] = ["packetgen", "firewall", "sink"];
/// The token of the test Git server's repositories.
pub(crate) const GIT_TOKEN: &str = "fleet-token";
const GITOPS_PROVIDER: &str = "/v2/cluster-providers/vfw-cluster-provider";

/// A response.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    /// The status line and headers, as received.
    pub(crate) head: String,
}

impl Reply {
    /// The value of header `name` (case-insensitive), if present.
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    }

    pub(crate) fn json(&self) -> Json {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&self.body)))
    }

    #[track_caller]
    pub(crate) fn expect(self, status: u16) -> Self {
        assert_eq!(self.status, status, "{}", String::from_utf8_lossy(&self.body));
        self
    }
}

/// An HTTP/1.1 client for one server (one connection per request, `Connection: close`).
#[derive(Clone)]
pub(crate) struct Http {
    pub(crate) address: SocketAddr,
}

fn dechunk(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(end) = rest.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(std::str::from_utf8(&rest[..end]).unwrap_or("0").trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&rest[start..start + size]);
        rest = &rest[start + size + 2..];
    }
    out
}

impl Http {
    pub(crate) async fn request(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Reply {
        let headers: Vec<(&str, &str)> = content_type.map(|ct| ("Content-Type", ct)).into_iter().collect();
        self.request_with(method, path, &headers, body).await
    }

    /// A request with these extra headers.
    pub(crate) async fn request_with(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Reply {
        let mut stream = tokio::net::TcpStream::connect(self.address).await.unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.address,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete response");
        let head = String::from_utf8_lossy(&response[..split]).to_string();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let raw = &response[split + 4..];
        let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            dechunk(raw)
        } else {
            raw.to_vec()
        };
        Reply { status, body, head }
    }

    pub(crate) async fn post(&self, path: &str, body: Json) -> Reply {
        self.request(
            "POST",
            path,
            Some("application/json"),
            body.to_string().as_bytes(),
        )
        .await
    }

    pub(crate) async fn post_empty(&self, path: &str) -> Reply {
        self.request("POST", path, None, b"").await
    }

    pub(crate) async fn delete(&self, path: &str) -> Reply {
        self.request("DELETE", path, None, b"").await
    }

    pub(crate) async fn get(&self, path: &str) -> Reply {
        self.request("GET", path, None, b"").await
    }

    pub(crate) async fn post_form(&self, path: &str, metadata: Json, file: &[u8]) -> Reply {
        const BOUNDARY: &str = "e2e-boundary-51c2";
        let mut body = format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{metadata}\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n").into_bytes();
        body.extend_from_slice(file);
        body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        self.request(
            "POST",
            path,
            Some(&format!("multipart/form-data; boundary={BOUNDARY}")),
            &body,
        )
        .await
    }

    /// The DIG's status summary (seed shape).
    pub(crate) async fn summary(&self) -> Json {
        self.get(&format!("{DIG}/status?output=summary"))
            .await
            .expect(200)
            .json()
    }

    /// Polls the DIG's status until `done` holds (or panics after `timeout`, showing the last answer).
    pub(crate) async fn wait_for(
        &self,
        query: &str,
        timeout: Duration,
        done: impl Fn(&Json) -> bool,
    ) -> Json {
        self.wait_until(&format!("{DIG}/status{query}"), timeout, done)
            .await
    }

    /// Polls GET `path` until its JSON answer satisfies `done` (or panics after `timeout`, showing the last one).
    pub(crate) async fn wait_until(
        &self,
        path: &str,
        timeout: Duration,
        done: impl Fn(&Json) -> bool,
    ) -> Json {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let answer = self.get(path).await.expect(200).json();
            if done(&answer) {
                return answer;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out; last answer: {answer}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// An `emco` (API, status index and rsync) served in-process on a loopback port.
pub(crate) struct Emco {
    pub(crate) http: Http,
    /// The engine the server drives (a handle on the same one).
    pub(crate) rsync: Rsync,
    _task: tokio::task::JoinHandle<()>,
}

/// Fast retries for tests.
pub(crate) fn test_rsync_config() -> RsyncConfig {
    RsyncConfig {
        backoff_initial: Duration::from_millis(100),
        backoff_max: Duration::from_millis(500),
        unreachable_retry: Duration::from_millis(500),
        ..RsyncConfig::default()
    }
}

impl Emco {
    pub(crate) async fn start() -> Self {
        Self::start_with(Store::memory(), test_rsync_config()).await
    }

    pub(crate) async fn start_with(store: Store, config: RsyncConfig) -> Self {
        Self::start_with_configs(store, config, ServerConfig::default()).await
    }

    pub(crate) async fn start_with_configs(
        store: Store,
        config: RsyncConfig,
        server_config: ServerConfig,
    ) -> Self {
        let rsync = Rsync::new(
            Catalog::new(store.clone()),
            AppContexts::new(store.clone()),
            config,
        );
        let server = Server::new(store, Some(Arc::new(rsync.clone())), server_config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = server.run(listener, std::future::pending()).await;
        });
        Self {
            http: Http { address },
            rsync,
            _task: task,
        }
    }
}

pub(crate) fn pack_dir(dir: &Path) -> Vec<u8> {
    let prefix = format!("{}/", dir.file_name().unwrap().to_string_lossy());
    emco_helm::archive::pack_dir(dir, &prefix).unwrap()
}

/// The packed chart of a vFW app (`packetgen`, `firewall`, `sink`).
pub(crate) fn vfw_chart(app: &str) -> Vec<u8> {
    pack_dir(&example(&format!("charts/{app}")))
}

fn example(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/vfw")
        .join(path)
}

/// Onboards the vFW example on the clusters `(name, kubeconfig)`, approves it, and leaves it ready to instantiate.
pub(crate) async fn onboard_vfw(http: &Http, clusters: &[(String, String)]) {
    let charts: Vec<(&str, Vec<u8>)> = APPS
        .iter()
        .map(|app| (*app, pack_dir(&example(&format!("charts/{app}")))))
        .collect();
    onboard_apps(http, clusters, &charts).await;
}

/// Onboards a composite app `compositevfw` of the given `(app, chart)` pairs (every app on every cluster) with the
/// DIG of the vFW example, approved.
pub(crate) async fn onboard_apps(http: &Http, clusters: &[(String, String)], charts: &[(&str, Vec<u8>)]) {
    onboard_apps_on(http, clusters, charts, "").await;
}

/// [`onboard_apps`] with a DIG naming `logical_cloud` (empty: none).
pub(crate) async fn onboard_apps_on(
    http: &Http,
    clusters: &[(String, String)],
    charts: &[(&str, Vec<u8>)],
    logical_cloud: &str,
) {
    let vfw = VFW_ONBOARDING;
    let dig = OnboardedDig {
        name: "vfw_deployment_intent_group",
        version: "fw0",
        label: "edge",
        logical_cloud,
    };
    vfw.onboard(http, clusters, &|_| "edge".to_string(), charts, &[dig])
        .await;
}

/// The names the vFW example is onboarded with.
pub(crate) const VFW_ONBOARDING: Onboarding<'static> = Onboarding {
    provider: "vfw-cluster-provider",
    project: "testvfw",
    composite_app: "compositevfw",
    profile: "vfw_composite-profile",
};

/// The names of an onboarding by [`Onboarding::onboard`].
pub(crate) struct Onboarding<'a> {
    pub(crate) provider: &'a str,
    pub(crate) project: &'a str,
    /// The composite app (version `v1`).
    pub(crate) composite_app: &'a str,
    pub(crate) profile: &'a str,
}

/// A DIG to onboard: every app on the clusters labelled `label`.
pub(crate) struct OnboardedDig<'a> {
    pub(crate) name: &'a str,
    /// `spec.version` (the release name).
    pub(crate) version: &'a str,
    pub(crate) label: &'a str,
    /// `spec.logicalCloud` (empty: none).
    pub(crate) logical_cloud: &'a str,
}

impl Onboarding<'_> {
    /// The composite app's URL (`v1`).
    #[allow(dead_code)] // the benchmarks' (they include this file)
    pub(crate) fn composite_app_url(&self) -> String {
        self.composite_app_url_at("v1")
    }

    /// The URL of version `version` of the composite app.
    pub(crate) fn composite_app_url_at(&self, version: &str) -> String {
        format!(
            "/v2/projects/{}/composite-apps/{}/{version}",
            self.project, self.composite_app
        )
    }

    /// Onboards the clusters `(name, kubeconfig)` (labelled by `label_of` their index), the composite app (`v1`)
    /// of the given `(app, chart)` pairs with its profile, and each DIG of `digs` with its placement, approved.
    pub(crate) async fn onboard(
        &self,
        http: &Http,
        clusters: &[(String, String)],
        label_of: &dyn Fn(usize) -> String,
        charts: &[(&str, Vec<u8>)],
        digs: &[OnboardedDig<'_>],
    ) {
        let registered = clusters.iter().map(|(name, kubeconfig)| {
            (
                name.as_str(),
                json!({"metadata": {"name": name}}),
                kubeconfig.as_bytes(),
            )
        });
        self.onboard_clusters(http, registered, label_of, charts, digs)
            .await;
    }

    /// [`Onboarding::onboard`] of pull clusters named `names` (`spec.pull`, no kubeconfig): the agent token each
    /// registration answered, in `names`' order.
    #[allow(dead_code)] // the benchmarks' (they include this file)
    pub(crate) async fn onboard_pull(
        &self,
        http: &Http,
        names: &[String],
        label_of: &dyn Fn(usize) -> String,
        charts: &[(&str, Vec<u8>)],
        digs: &[OnboardedDig<'_>],
    ) -> Vec<String> {
        let registered = names.iter().map(|name| {
            (
                name.as_str(),
                json!({"metadata": {"name": name}, "spec": {"pull": {}}}),
                &b""[..],
            )
        });
        let answers = self
            .onboard_clusters(http, registered, label_of, charts, digs)
            .await;
        answers
            .iter()
            .map(|answer| answer["agentToken"].as_str().unwrap().to_string())
            .collect()
    }

    /// The provider, each `(name, body, blob)` cluster (labelled by `label_of` its index), the project and the
    /// composite app's `v1` with `digs`: each cluster's registration answer, in order.
    async fn onboard_clusters<'c>(
        &self,
        http: &Http,
        clusters: impl Iterator<Item = (&'c str, Json, &'c [u8])>,
        label_of: &dyn Fn(usize) -> String,
        charts: &[(&str, Vec<u8>)],
        digs: &[OnboardedDig<'_>],
    ) -> Vec<Json> {
        let provider = format!("/v2/cluster-providers/{}", self.provider);
        http.post(
            "/v2/cluster-providers",
            json!({"metadata": {"name": self.provider}}),
        )
        .await
        .expect(201);
        let mut answers = Vec::new();
        for (index, (name, body, blob)) in clusters.enumerate() {
            let answer = http
                .post_form(&format!("{provider}/clusters"), body, blob)
                .await
                .expect(201)
                .json();
            answers.push(answer);
            http.post(
                &format!("{provider}/clusters/{name}/labels"),
                json!({"clusterLabel": label_of(index)}),
            )
            .await
            .expect(201);
        }
        http.post("/v2/projects", json!({"metadata": {"name": self.project}}))
            .await
            .expect(201);
        self.add_version(http, "v1", charts, digs).await;
        answers
    }

    /// Onboards version `version` of the composite app (the project and clusters exist): its `(app, chart)`
    /// pairs, its profile, and each DIG of `digs` with its placement, approved.
    pub(crate) async fn add_version(
        &self,
        http: &Http,
        version: &str,
        charts: &[(&str, Vec<u8>)],
        digs: &[OnboardedDig<'_>],
    ) {
        http.post(
            &format!("/v2/projects/{}/composite-apps", self.project),
            json!({"metadata": {"name": self.composite_app}, "spec": {"compositeAppVersion": version}}),
        )
        .await
        .expect(201);
        let ca = self.composite_app_url_at(version);
        for (app, chart) in charts {
            http.post_form(&format!("{ca}/apps"), json!({"metadata": {"name": app}}), chart)
                .await
                .expect(201);
        }
        http.post(
            &format!("{ca}/composite-profiles"),
            json!({"metadata": {"name": self.profile}}),
        )
        .await
        .expect(201);
        for dig in digs {
            http.post(
                &format!("{ca}/deployment-intent-groups"),
                json!({"metadata": {"name": dig.name}, "spec": {"compositeProfile": self.profile, "version": dig.version, "logicalCloud": dig.logical_cloud}}),
            )
            .await
            .expect(201);
            let url = format!("{ca}/deployment-intent-groups/{}", dig.name);
            http.post(
                &format!("{url}/intents"),
                json!({"metadata": {"name": "i"}, "spec": {"intent": {"genericPlacementIntent": "pi"}}}),
            )
            .await
            .expect(201);
            http.post(
                &format!("{url}/generic-placement-intents"),
                json!({"metadata": {"name": "pi"}}),
            )
            .await
            .expect(201);
            for (app, _) in charts {
                http.post(
                    &format!("{url}/generic-placement-intents/pi/app-intents"),
                    json!({"metadata": {"name": format!("{app}-pi")}, "spec": {"app": app, "intent": {"allOf": [{"clusterProvider": self.provider, "clusterLabel": dig.label}]}}}),
                )
                .await
                .expect(201);
            }
            http.post_empty(&format!("{url}/approve")).await.expect(202);
        }
    }
}

/// The `(name, kubeconfig)` pairs of simulated clusters.
/// `count` simulated edge clusters prepared for the vFW example: EMCO's upstream vFW charts schedule their VMs on
/// nodes labelled `extraRuntime=virtlet`.
pub(crate) async fn vfw_clusters(count: usize) -> kubesim::Simulator {
    kubesim::Simulator::start(
        (1..=count)
            .map(|index| {
                kubesim::ClusterConfig::new(&kubesim::cluster_name(index))
                    .with_node_label("extraRuntime", "virtlet")
            })
            .collect(),
    )
    .await
    .unwrap()
}

/// Monitors running in simulated clusters, as the clusters of a real installation run one (aborted when dropped).
pub(crate) struct Monitors(pub(crate) Vec<tokio::task::JoinHandle<()>>);

impl Drop for Monitors {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// A monitor configuration for tests: changes coalesced for 50 ms, a bundle not created yet retried every 200 ms.
pub(crate) fn quick_monitor_config() -> emco_monitor::MonitorConfig {
    emco_monitor::MonitorConfig {
        coalesce: Duration::from_millis(50),
        missing_retry: Duration::from_millis(200),
        ..emco_monitor::MonitorConfig::default()
    }
}

/// A monitor reaching its cluster through `client`, with `config`, until aborted.
fn spawn_monitor(client: kube::Client, config: emco_monitor::MonitorConfig) -> tokio::task::JoinHandle<()> {
    tokio::spawn(emco_monitor::run(client, config, std::future::pending()))
}

/// A monitor in `cluster` with `config`.
pub(crate) fn start_monitor_with(
    cluster: &kubesim::SimCluster,
    config: emco_monitor::MonitorConfig,
) -> tokio::task::JoinHandle<()> {
    spawn_monitor(cluster.client().unwrap(), config)
}

/// A monitor in `cluster` with [`quick_monitor_config`].
pub(crate) fn start_monitor(cluster: &kubesim::SimCluster) -> tokio::task::JoinHandle<()> {
    start_monitor_with(cluster, quick_monitor_config())
}

/// A monitor in each simulated cluster that reaches its API from inside, as software running in the cluster does
/// (its requests are not among those the cluster counts from outside, and a cluster off the network keeps it).
pub(crate) fn start_in_cluster_monitors(sim: &kubesim::Simulator) -> Monitors {
    Monitors(
        sim.clusters()
            .iter()
            .map(|cluster| spawn_monitor(cluster.in_cluster_client(), quick_monitor_config()))
            .collect(),
    )
}

/// A monitor in each simulated cluster.
pub(crate) fn start_monitors(sim: &kubesim::Simulator) -> Monitors {
    Monitors(sim.clusters().iter().map(start_monitor).collect())
}

pub(crate) fn kubeconfigs(sim: &kubesim::Simulator) -> Vec<(String, String)> {
    sim.clusters()
        .iter()
        .map(|c| (c.name().to_string(), c.kubeconfig()))
        .collect()
}

/// The rsync-status counts of a seed-shaped answer.
pub(crate) fn counts(answer: &Json) -> Json {
    answer["rsync-status"].clone()
}

/// An `emco serve --in-memory` process on a free loopback port, its log (stderr) in a file.
pub(crate) struct ServeProcess {
    /// Killed when dropped.
    child: tokio::process::Child,
    pub(crate) port: u16,
    log: tempfile::NamedTempFile,
}

/// A wrapped emco ends with its wrapper.
impl Drop for ServeProcess {
    fn drop(&mut self) {
        kill_group(&self.child);
    }
}

impl ServeProcess {
    /// Starts `emco serve` with `args` added, under `ulimit -n` when `fd_limit` is given (soft and hard limit),
    /// and waits until it accepts connections.
    pub(crate) async fn start(args: &[&str], fd_limit: Option<u32>) -> Self {
        Self::start_on(&["--in-memory"], args, fd_limit).await
    }

    /// [`ServeProcess::start`] with the store chosen by `store_args` (e.g. `--etcd-endpoints URL`).
    pub(crate) async fn start_on(store_args: &[&str], args: &[&str], fd_limit: Option<u32>) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_at(port, store_args, args, fd_limit).await
    }

    /// [`ServeProcess::start_on`] listening on `port` (a replica restarted on its address).
    pub(crate) async fn start_at(
        port: u16,
        store_args: &[&str],
        args: &[&str],
        fd_limit: Option<u32>,
    ) -> Self {
        let log = tempfile::NamedTempFile::new().unwrap();
        let emco = env!("CARGO_BIN_EXE_emco");
        let mut command = match fd_limit {
            Some(limit) => {
                let mut command = tokio::process::Command::new("sh");
                command
                    .arg("-c")
                    .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
                    .arg(emco);
                command
            }
            // `EMCO_SERVE_WRAPPER` (benchmarks: e.g. `heaptrack -o FILE`) runs emco under that command.
            None => command_under("EMCO_SERVE_WRAPPER", emco),
        };
        command
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(store_args)
            .args(args)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::null())
            .stderr(log.reopen().unwrap())
            .kill_on_drop(true);
        let mut child = command.spawn().unwrap();
        for _ in 0..400 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Self { child, port, log };
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "emco serve exited ({status}): {}",
                    std::fs::read_to_string(log.path()).unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("emco serve does not listen on {port}");
    }

    pub(crate) fn address(&self) -> SocketAddr {
        ([127, 0, 0, 1], self.port).into()
    }

    /// Kills it (SIGKILL) and waits until it is gone (its port free again); returns its port.
    pub(crate) async fn kill(mut self) -> u16 {
        kill_group(&self.child);
        self.child.kill().await.unwrap();
        self.port
    }

    /// The process id (to signal it).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// What it logged so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

/// The context of the last action (with a context) of a seed-shaped status answer.
pub(crate) fn last_context(answer: &Json) -> String {
    answer["state"]["Actions"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find_map(|a| a["ContextId"].as_str().filter(|c| !c.is_empty()))
        .unwrap()
        .to_string()
}

/// `emco kubesim` with many clusters in its own process (for benchmarks at scale); killed when dropped.
#[allow(dead_code)] // used by the benchmarks, which include this file
pub(crate) struct KubesimProcess {
    child: tokio::process::Child,
    /// Its admin API (faults, counters).
    pub(crate) admin: Http,
    /// `(name, kubeconfig)` of every cluster.
    pub(crate) kubeconfigs: Vec<(String, String)>,
    dir: tempfile::TempDir,
}

/// A wrapped kubesim ends with its wrapper.
impl Drop for KubesimProcess {
    fn drop(&mut self) {
        kill_group(&self.child);
    }
}

/// `program`, or `program` run by the command the environment variable `variable` holds (benchmarks run a
/// process under a profiler: e.g. `heaptrack -o FILE`).
fn command_under(variable: &str, program: &str) -> tokio::process::Command {
    match std::env::var(variable) {
        Ok(wrapper) if !wrapper.trim().is_empty() => {
            let mut words = wrapper.split_whitespace();
            let mut command = tokio::process::Command::new(words.next().unwrap_or_default());
            // The wrapper leads a process group of its own, so that killing the group ends the program it runs
            // as well ([`kill_group`]): killing the wrapper alone left the program running on.
            command.args(words).arg(program).process_group(0);
            command
        }
        _ => tokio::process::Command::new(program),
    }
}

/// SIGKILL to the process group `child` leads: a wrapped program ([`command_under`]) with its wrapper and the
/// profiler's helpers (whose file then ends at the kill). A process started without a wrapper leads no group,
/// and nothing happens.
fn kill_group(child: &tokio::process::Child) {
    if let Some(pid) = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[allow(dead_code)] // used by the benchmarks, which include this file
impl KubesimProcess {
    /// Starts `clusters` clusters and waits for every kubeconfig and the admin endpoint (on a port the process
    /// chose itself: a port picked here could be taken meanwhile by any outgoing connection).
    pub(crate) async fn start(clusters: usize) -> Self {
        Self::start_with(clusters, &[]).await
    }

    /// [`KubesimProcess::start`] with `args` added (e.g. `--monitors`).
    pub(crate) async fn start_with(clusters: usize, args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("kubesim.log");
        // `KUBESIM_WRAPPER` (benchmarks: e.g. a script running `heaptrack -o DIR/sim.$$ "$@"`) runs kubesim under
        // that command.
        let mut child = command_under("KUBESIM_WRAPPER", env!("CARGO_BIN_EXE_emco"))
            .args([
                "kubesim",
                "--clusters",
                &clusters.to_string(),
                "--admin",
                "127.0.0.1:0",
                "--kubeconfig-dir",
            ])
            .arg(dir.path().join("k"))
            .args(args)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let admin = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let serving = text.lines().find(|line| line.contains("kubesim is serving"));
            if let Some(address) = serving
                .and_then(|line| line.split("admin=").nth(1))
                .and_then(|rest| rest.split_whitespace().next())
            {
                break address.parse::<SocketAddr>().unwrap();
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("kubesim exited ({status}): {text}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let names: Vec<String> = (1..=clusters).map(kubesim::cluster_name).collect();
        let kubeconfigs = names
            .iter()
            .map(|name| {
                let path = dir.path().join("k").join(format!("{name}.yaml"));
                (name.clone(), std::fs::read_to_string(path).unwrap())
            })
            .collect();
        Self {
            child,
            admin: Http { address: admin },
            kubeconfigs,
            dir,
        }
    }
}

/// Every write (not GET) the clusters of a kubesim process received since they started, summed, from its admin
/// API (`admin`).
#[allow(dead_code)] // used by the benchmarks, which include this file
pub(crate) async fn total_writes(admin: &Http) -> u64 {
    total_of(admin, "writes").await
}

/// Every read (GET, HEAD, OPTIONS: lists, watches, discovery) the clusters of a kubesim process received since
/// they started, summed, from its admin API (`admin`).
#[allow(dead_code)] // used by the benchmarks, which include this file
pub(crate) async fn total_reads(admin: &Http) -> u64 {
    total_of(admin, "reads").await
}

/// Every connection the clusters of a kubesim process accepted since they started, summed.
#[allow(dead_code)] // used by the benchmarks, which include this file
pub(crate) async fn total_connections(admin: &Http) -> u64 {
    total_of(admin, "connections").await
}

/// How many times a change-feed subscriber of the clusters of a kubesim process fell behind (watches ended for
/// their clients to relist, controller resyncs), summed.
#[allow(dead_code)] // used by the benchmarks, which include this file
pub(crate) async fn total_fell_behind(admin: &Http) -> u64 {
    total_of(admin, "fellBehind").await
}

/// Every write to objects (not to their status) that software inside the clusters of a kubesim process made
/// (pull agents applying), summed.
#[allow(dead_code)] // used by the benchmarks, which include this file
pub(crate) async fn total_in_cluster_object_writes(admin: &Http) -> u64 {
    total_of(admin, "inClusterObjectWrites").await
}

#[allow(dead_code)] // used by the benchmarks, which include this file
async fn total_of(admin: &Http, counter: &str) -> u64 {
    let clusters = admin.get("/clusters").await.expect(200).json();
    clusters
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| cluster[counter].as_u64().unwrap())
        .sum()
}

#[allow(dead_code)] // used by the benchmarks, which include this file
impl KubesimProcess {
    /// The process id (to read its memory from /proc).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// Panics with its log when the process has ended.
    pub(crate) fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!(
                "kubesim exited ({status}): {}",
                std::fs::read_to_string(self.dir.path().join("kubesim.log")).unwrap_or_default()
            );
        }
    }
}

/// The real `kubectl`, when this machine has one.
pub(crate) fn kubectl() -> Option<std::path::PathBuf> {
    program("kubectl")
}

/// The program `name` on the PATH, if there is one.
pub(crate) fn program(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// Runs emcoctl's `verb` on the resource file `file` with `values`, as `emcoctl <verb> -f file -v values`; panics
/// with emcoctl's output when it fails.
pub(crate) async fn emcoctl_file(
    client: &emcoctl::client::EmcoClient,
    verb: emcoctl::commands::Verb,
    file: &std::path::Path,
    values: &Json,
) {
    let documents = emcoctl::documents::read_documents(file, Some(values)).unwrap();
    let mut out = Vec::new();
    let ok = emcoctl::commands::run(client, verb, &documents, &Default::default(), &mut out)
        .await
        .unwrap();
    assert!(
        ok,
        "emcoctl {verb:?} -f {}:\n{}",
        file.display(),
        String::from_utf8_lossy(&out)
    );
}

impl Http {
    /// Polls the DIG at `dig` until it is Instantiated and Ready (or panics after a minute).
    pub(crate) async fn wait_dig_ready(&self, dig: &str) {
        self.wait_until(
            &format!("{dig}/status?status=ready&output=summary"),
            Duration::from_secs(60),
            |a| a["deployedStatus"] == "Instantiated" && a["readyStatus"] == "Ready",
        )
        .await;
    }
}

/// Creates the cluster-scoped objects of the YAML stream `text` (Namespaces and CustomResourceDefinitions, as
/// installing an add-on leaves them) in `cluster`, and answers how many; CRDs are served once established
/// (kubesim establishes them at once; discovery follows the write).
pub(crate) async fn install_cluster_objects(cluster: &kubesim::SimCluster, text: &str) -> usize {
    use kube::api::{Api, DynamicObject, PostParams};
    use kube::core::{ApiResource, GroupVersionKind};

    let client = cluster.client().unwrap();
    let mut installed = 0;
    for document in serde_saphyr::from_multiple::<Json>(text).unwrap() {
        if document.is_null() {
            continue;
        }
        let resource = match document["kind"].as_str() {
            Some("Namespace") => {
                ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Namespace"), "namespaces")
            }
            Some("CustomResourceDefinition") => ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
                "customresourcedefinitions",
            ),
            other => panic!("install_cluster_objects creates Namespaces and CRDs, not {other:?}"),
        };
        let object: DynamicObject = serde_json::from_value(document).unwrap();
        Api::<DynamicObject>::all_with(client.clone(), &resource)
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
        installed += 1;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    installed
}

/// The object `name` of kind `gvk` (`(group, version, kind)`, served as `plural`) in `cluster`: in `namespace`,
/// or cluster-scoped when none; `None` when there is none.
pub(crate) async fn get_object(
    cluster: &kubesim::SimCluster,
    gvk: (&str, &str, &str),
    plural: &str,
    namespace: Option<&str>,
    name: &str,
) -> Option<kube::api::DynamicObject> {
    use kube::api::{Api, DynamicObject};
    use kube::core::{ApiResource, GroupVersionKind};

    let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(gvk.0, gvk.1, gvk.2), plural);
    let client = cluster.client().unwrap();
    let api: Api<DynamicObject> = match namespace {
        Some(namespace) => Api::namespaced_with(client, namespace, &resource),
        None => Api::all_with(client, &resource),
    };
    api.get_opt(name).await.unwrap()
}

/// The agents a GitOps cluster's owner runs in it, as set up for these tests (aborted when dropped).
pub(crate) struct GitOpsAgents(Vec<tokio::task::JoinHandle<()>>);

impl Drop for GitOpsAgents {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// `cluster` set up by its owner as a GitOps cluster `provider+{cluster}` of the vFW's provider: the bundles' CRD
/// (the monitor's chart), Flux bootstrapped on `clusters/<provider>+<cluster>` of `server`'s `fleet`, and the
/// monitor committing status to Git — all from inside the cluster, with their mirrors under `dir`; Flux reconciles
/// once per `flux_interval`, the monitor commits status at most once per `status_interval`.
pub(crate) async fn start_gitops_agents(
    server: &emco_git::GitServer,
    cluster: &kubesim::SimCluster,
    dir: &Path,
    flux_interval: Duration,
    status_interval: Duration,
) -> GitOpsAgents {
    use kube::api::{Api, DynamicObject, PostParams};
    use kube::core::{ApiResource, GroupVersionKind};
    let full_name = format!("vfw-cluster-provider+{}", cluster.name());
    let inside = cluster.in_cluster_client();
    Api::<DynamicObject>::all_with(
        inside.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    )
    .create(
        &PostParams::default(),
        &serde_json::from_value(emco_k8s::rbs_crd()).unwrap(),
    )
    .await
    .unwrap();
    let flux = kubesim::flux::FluxConfig {
        remote: server.remote("fleet", "main", cluster.name()),
        path: format!("clusters/{full_name}"),
        interval: flux_interval,
        mirror_dir: dir.join(format!("flux-{}", cluster.name())),
    };
    let git_status = emco_monitor::git::GitStatusConfig {
        remote: server.remote("fleet", "main", cluster.name()),
        cluster: full_name,
        interval: status_interval,
        mirror_dir: dir.join(format!("monitor-{}", cluster.name())),
    };
    GitOpsAgents(vec![
        tokio::spawn(kubesim::flux::run(inside.clone(), flux, std::future::pending())),
        tokio::spawn(emco_monitor::run(
            inside.clone(),
            quick_monitor_config(),
            std::future::pending(),
        )),
        tokio::spawn(emco_monitor::git::publish_status(
            inside,
            git_status,
            std::future::pending(),
        )),
    ])
}

/// The two cluster sync objects of the vFW's provider for the repository `fleet` at `url` (`GitObjectFluxRepo`,
/// `GitObjectFluxRes`), as EMCO's `examples/test-flux` has them.
pub(crate) async fn register_gitops_sync_objects(http: &Http, url: &str) {
    for (name, kv) in [
        (
            "GitObjectFluxRepo",
            json!([{"userName": "emco"}, {"gitToken": GIT_TOKEN}, {"repoName": "fleet"},
            {"branch": "main"}, {"url": url}]),
        ),
        (
            "GitObjectFluxRes",
            json!([{"timeOut": "60"}, {"syncInterval": "1"}, {"retryInterval": "1"}]),
        ),
    ] {
        http.post(
            &format!("{GITOPS_PROVIDER}/cluster-sync-objects"),
            json!({"metadata": {"name": name}, "spec": {"kv": kv}}),
        )
        .await
        .expect(201);
    }
}

/// Registers `cluster` of the vFW's provider as a GitOps cluster of the sync objects of
/// [`register_gitops_sync_objects`], labelled `edge`, as EMCO's emcoctl sends it: its values file in place of a
/// kubeconfig.
pub(crate) async fn register_gitops_cluster(http: &Http, cluster: &str) {
    http.post_form(
        &format!("{GITOPS_PROVIDER}/clusters"),
        json!({"metadata": {"name": cluster}, "spec": {"gitOps": {"gitOpsType": "fluxcd",
            "gitOpsReferenceObject": "GitObjectFluxRepo", "gitOpsResourceObject": "GitObjectFluxRes"}}}),
        b"PackagesPath: output\n",
    )
    .await
    .expect(201);
    http.post(
        &format!("{GITOPS_PROVIDER}/clusters/{cluster}/labels"),
        json!({"clusterLabel": "edge"}),
    )
    .await
    .expect(201);
}

/// Registers the pull cluster `cluster` of the vFW's provider with the label `edge` and answers its agent token.
pub(crate) async fn register_pull_cluster(http: &Http, cluster: &str) -> String {
    let created = http
        .post_form(
            &format!("{GITOPS_PROVIDER}/clusters"),
            json!({"metadata": {"name": cluster}, "spec": {"pull": {}}}),
            b"",
        )
        .await
        .expect(201)
        .json();
    http.post(
        &format!("{GITOPS_PROVIDER}/clusters/{cluster}/labels"),
        json!({"clusterLabel": "edge"}),
    )
    .await
    .expect(201);
    created["agentToken"].as_str().unwrap().to_string()
}

/// The objects of `kind` (`group/version` or `v1`, its plural) that `client` reaches, in `namespace` or all.
pub(crate) fn dynamic_api(
    client: &kube::Client,
    version: &str,
    kind: &str,
    plural: &str,
    namespace: Option<&str>,
) -> kube::Api<kube::api::DynamicObject> {
    let (group, version) = version.split_once('/').unwrap_or(("", version));
    let resource = kube::core::ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(group, version, kind),
        plural,
    );
    match namespace {
        Some(namespace) => kube::Api::namespaced_with(client.clone(), namespace, &resource),
        None => kube::Api::all_with(client.clone(), &resource),
    }
}

/// Waits (up to `settle`) until the cluster `client` reaches holds logical cloud `lc1`'s objects as a cluster
/// served by an agent takes them (GitOps or pull): the role binding naming the service account `lc1-sa` of namespace
/// `tenant1`, that account, and no certificate request (nobody there signs one for emco).
pub(crate) async fn assert_level1_service_account_objects(client: &kube::Client, settle: Duration) {
    // An agent may apply them in any order (Flux applies a folder at once): both are waited for.
    let deadline = tokio::time::Instant::now() + settle;
    let binding = loop {
        let bindings = dynamic_api(
            client,
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            "rolebindings",
            Some("tenant1"),
        );
        let accounts = dynamic_api(client, "v1", "ServiceAccount", "serviceaccounts", Some("tenant1"));
        if let (Ok(Some(binding)), Ok(Some(_))) = (
            bindings.get_opt("lc1-rolebinding0").await,
            accounts.get_opt("lc1-sa").await,
        ) {
            break binding;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cloud's binding or service account never arrived"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        binding.data["subjects"]
            .as_array()
            .unwrap()
            .contains(&json!({"kind": "ServiceAccount", "name": "lc1-sa", "namespace": "tenant1"})),
        "{:?}",
        binding.data
    );
    let requests = dynamic_api(
        client,
        "certificates.k8s.io/v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        None,
    )
    .list(&Default::default())
    .await
    .unwrap();
    assert!(requests.items.is_empty(), "{:?}", requests.items);
}

/// Every cluster of the simulator slowed down, so an instantiation lasts long enough to interrupt.
pub(crate) async fn slow_down(sim: &kubesim::Simulator, latency_ms: u64) {
    for cluster in sim.clusters() {
        cluster
            .set_faults(kubesim::Faults {
                latency_ms,
                ..kubesim::Faults::default()
            })
            .await
            .unwrap();
    }
}

/// The vFW cluster provider and its pull cluster `cluster`, registered: the agent token and the cluster's agent
/// path (`…/clusters/{cluster}/agent`).
pub(crate) async fn pull_cluster_agent(http: &Http, cluster: &str) -> (String, String) {
    http.post(
        "/v2/cluster-providers",
        json!({"metadata": {"name": "vfw-cluster-provider"}}),
    )
    .await
    .expect(201);
    let token = register_pull_cluster(http, cluster).await;
    (token, format!("{GITOPS_PROVIDER}/clusters/{cluster}/agent"))
}
