//! `emco demo`: the whole system in one process for a first look. It starts simulated clusters (kubesim) with a
//! monitor in each, serves the API with the embedded store, and through that API (as a user would with curl):
//! applies seed 000's network intents to edge01 (whose kubesim serves the ovn4nfv CRDs of `deploy/`),
//! instantiates a level-1 logical cloud over every cluster, onboards the vFW example of `examples/vfw` on it,
//! approves and instantiates it, shows progress until it is Instantiated and Ready, prints the status as a table and
//! what to try next (with the logical cloud user's kubeconfig), then keeps serving until Ctrl-C.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use axum::body::Body;
use emco_appcontext::{AppContexts, Catalog};
use emco_rsync::{Rsync, RsyncConfig};
use emco_server::{Server, ServerConfig};
use emco_store::{Store, StoreConfig};
use emcoctl::client::Body as Payload;
use http_body_util::BodyExt as _;
use serde_json::{Value as Json, json};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

const PROVIDER: &str = "vfw-cluster-provider";
const PROJECT: &str = "testvfw";
const COMPOSITE_APP: &str = "compositevfw";
const DIG: &str = "vfw_deployment_intent_group";
const APPS: [&str; 3] = ["packetgen", "firewall", "sink"];
const LOGICAL_CLOUD: &str = "vfw-lc";
const NAMESPACE: &str = "vfw";
const LC_USER: &str = "vfw-user";
/// The ovn4nfv Network and ProviderNetwork CRDs emco ships.
const NETWORK_CRDS: &str = include_str!("../../../deploy/ovn4nfv-network-crds.yaml");

/// Flags of `emco demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// How many simulated clusters (edge01, edge02, …) the example is placed on.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub clusters: u16,
    /// Address the API listens on (EMCO's orchestrator port by default; port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:9015")]
    pub listen: SocketAddr,
    /// Directory for the store and the clusters' kubeconfigs (default: a temporary one, removed at exit).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// The vFW example: `charts/{packetgen,firewall,sink}` and `profiles/…`.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/vfw"))]
    pub example: PathBuf,
    /// Give up when the example is not Instantiated and Ready within this many seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout_secs: u64,
    /// Exit once the example is Ready instead of serving until Ctrl-C (for scripts and tests).
    #[arg(long)]
    pub exit_when_ready: bool,
    /// How many of the clusters (the last ones) are pull clusters: emco never dials them; an agent in each
    /// (`emco-monitor --pull-from`, here in this process) takes its desired state from emco and reports back.
    /// edge01 stays a direct cluster (it carries the network intents).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=999))]
    pub pull_clusters: u16,
}

/// The DIG's path under `/v2`.
fn dig_path() -> String {
    format!("/v2/projects/{PROJECT}/composite-apps/{COMPOSITE_APP}/v1/deployment-intent-groups/{DIG}")
}

/// Runs the demo until `shutdown` resolves (or, with `--exit-when-ready`, until the example is Ready).
pub async fn run(args: DemoArgs, shutdown: impl std::future::Future<Output = ()>) -> anyhow::Result<()> {
    let temporary;
    let data_dir = match &args.data_dir {
        Some(dir) => dir.clone(),
        None => {
            temporary = tempfile::Builder::new()
                .prefix("emco-demo-")
                .tempdir()
                .context("creating a temporary directory")?;
            temporary.path().to_path_buf()
        }
    };
    if args.pull_clusters >= args.clusters {
        bail!(
            "--pull-clusters {} leaves no direct cluster of --clusters {}: edge01 stays direct (it carries the network intents)",
            args.pull_clusters,
            args.clusters
        );
    }
    let charts = read_example(&args.example)?;
    if data_dir.join("store").exists() {
        bail!(
            "{} already holds the store of an earlier demo; remove it or give another --data-dir",
            data_dir.display()
        );
    }

    let names: Vec<String> = (1..=usize::from(args.clusters))
        .map(kubesim::cluster_name)
        .collect();
    let sim = kubesim::Simulator::start(
        names
            .iter()
            // EMCO's vFW runs its VMs on nodes labelled for virtlet; the simulated edge nodes are prepared so.
            .map(|name| kubesim::ClusterConfig::new(name).with_node_label("extraRuntime", "virtlet"))
            .collect(),
    )
    .await
    .context("starting the simulated clusters")?;
    let kubeconfig_dir = data_dir.join("kubeconfigs");
    let kubeconfigs = sim
        .write_kubeconfigs(&kubeconfig_dir)
        .context("writing the clusters' kubeconfigs")?;
    let stop = CancellationToken::new();
    let mut background = tokio::task::JoinSet::new();
    for cluster in sim.clusters() {
        let client = cluster
            .client()
            .with_context(|| format!("a client for cluster {}", cluster.name()))?;
        background.spawn(emco_monitor::run(
            client,
            emco_monitor::MonitorConfig::default(),
            stop.clone().cancelled_owned(),
        ));
    }

    let store = Store::open(&StoreConfig::Redb {
        data_dir: data_dir.join("store"),
    })
    .await
    .with_context(|| format!("opening the store in {}", data_dir.display()))?;
    let rsync = Rsync::new(
        Catalog::new(store.clone()),
        AppContexts::new(store.clone()),
        RsyncConfig::default(),
    );
    let server = Server::new(store, Some(Arc::new(rsync)), ServerConfig::default());
    let api = Api {
        router: server.router(),
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let address = listener.local_addr()?;
    {
        let stop = stop.clone();
        background.spawn(async move {
            if let Err(err) = server.run(listener, stop.cancelled_owned()).await {
                tracing::error!(error = %err, "the API server stopped");
            }
        });
    }
    println!(
        "emco demo: {} simulated cluster(s), a monitor in each, the API on http://{address}/v2",
        names.len()
    );
    let pull: Vec<String> = names[names.len() - usize::from(args.pull_clusters)..].to_vec();

    let clusters: Vec<(String, Vec<u8>)> = names
        .iter()
        .zip(&kubeconfigs)
        .map(|(name, path)| {
            Ok((
                name.clone(),
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
            ))
        })
        .collect::<anyhow::Result<_>>()?;
    let edge01 = &sim.clusters()[0];
    install_network_crds(edge01).await?;
    let tokens = onboard_clusters(&api, &clusters, &pull).await?;
    for ((name, kubeconfig), token) in clusters
        .iter()
        .filter(|(name, _)| pull.contains(name))
        .zip(&tokens)
    {
        let config = emco_monitor::agent::AgentConfig::new(
            &format!("http://{address}"),
            &format!("{PROVIDER}+{name}"),
            token,
            kubeconfig.clone(),
        );
        let stop = stop.clone();
        background.spawn(async move {
            if let Err(err) = emco_monitor::agent::run_agent(config, stop.cancelled_owned()).await {
                tracing::error!(error = %err, "a pull cluster's agent cannot start");
            }
        });
    }
    if !pull.is_empty() {
        println!(
            "pull cluster(s) {}: an agent in each takes its desired state from emco; emco never dials them",
            pull.join(", ")
        );
    }
    apply_networks(&api, edge01.name()).await?;
    api.post("/v2/projects", json!({"metadata": {"name": PROJECT}}))
        .await?;
    instantiate_logical_cloud(&api, &names).await?;
    let user_kubeconfig = data_dir
        .join("kubeconfigs")
        .join(format!("{}-{LC_USER}.yaml", edge01.name()));
    let yaml = api
        .get_text(&format!(
            "/v2/projects/{PROJECT}/logical-clouds/{LOGICAL_CLOUD}/cluster-references/{}/kubeconfig",
            edge01.name()
        ))
        .await?;
    std::fs::write(&user_kubeconfig, yaml)
        .with_context(|| format!("writing {}", user_kubeconfig.display()))?;
    onboard(&api, &charts).await?;
    println!(
        "onboarded the vFW example: project {PROJECT}, composite app {COMPOSITE_APP} (packetgen, firewall, sink), DIG {DIG} on logical cloud {LOGICAL_CLOUD}"
    );
    api.send("POST", &format!("{}/approve", dig_path()), Payload::Empty)
        .await?;
    api.send("POST", &format!("{}/instantiate", dig_path()), Payload::Empty)
        .await?;
    println!("approved and instantiated; waiting for the clusters:");
    wait_until_ready(&api, Duration::from_secs(args.timeout_secs)).await?;

    let table = status_table(&api).await?;
    println!("\n{table}\n");
    print_next_steps(address, &kubeconfig_dir, &names, &user_kubeconfig);

    if !args.exit_when_ready {
        println!("Serving until Ctrl-C.");
        shutdown.await;
    }
    stop.cancel();
    while background.join_next().await.is_some() {}
    drop(sim);
    Ok(())
}

/// The example's charts and profiles, packed as the API takes them.
struct Charts {
    charts: Vec<(&'static str, Vec<u8>)>,
    profiles: Vec<(&'static str, Vec<u8>)>,
}

fn read_example(example: &Path) -> anyhow::Result<Charts> {
    let mut charts = Vec::new();
    let mut profiles = Vec::new();
    for app in APPS {
        let chart_dir = example.join("charts").join(app);
        charts.push((
            app,
            emco_helm::archive::pack_dir(&chart_dir, &format!("{app}/"))
                .with_context(|| format!("packing the chart {}", chart_dir.display()))?,
        ));
        let profile_dir = example.join("profiles").join(app);
        profiles.push((
            app,
            emco_helm::archive::pack_dir(&profile_dir, "")
                .with_context(|| format!("packing the profile {}", profile_dir.display()))?,
        ));
    }
    Ok(Charts { charts, profiles })
}

/// The API, called in-process through the same router the listener serves.
struct Api {
    router: axum::Router,
}

impl Api {
    /// A request through the router: the answer's bytes, or an error naming the request and the answer.
    async fn call(&self, method: &str, path: &str, payload: Payload) -> anyhow::Result<Vec<u8>> {
        let (content_type, bytes) = payload.encode();
        let mut builder = http::Request::builder().method(method).uri(path);
        if let Some(content_type) = content_type {
            builder = builder.header("content-type", content_type);
        }
        let request = builder.body(Body::from(bytes)).context("building a request")?;
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .context("calling the API")?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .context("reading the API's answer")?
            .to_bytes();
        if !status.is_success() {
            bail!(
                "{method} {path} answered {status}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
        Ok(bytes.to_vec())
    }

    async fn send(&self, method: &str, path: &str, payload: Payload) -> anyhow::Result<Json> {
        let bytes = self.call(method, path, payload).await?;
        if bytes.is_empty() {
            return Ok(Json::Null);
        }
        serde_json::from_slice(&bytes)
            .with_context(|| format!("{method} {path} answered something that is not JSON"))
    }

    /// A GET whose answer is text (a kubeconfig).
    async fn get_text(&self, path: &str) -> anyhow::Result<String> {
        let bytes = self.call("GET", path, Payload::Empty).await?;
        String::from_utf8(bytes).with_context(|| format!("GET {path} answered something that is not text"))
    }

    async fn post(&self, path: &str, body: Json) -> anyhow::Result<Json> {
        self.send("POST", path, Payload::Json(body)).await
    }

    async fn post_form(&self, path: &str, metadata: Json, file: &[u8]) -> anyhow::Result<Json> {
        self.send(
            "POST",
            path,
            Payload::Multipart {
                metadata,
                files: vec![("file".into(), "file".into(), file.to_vec())],
            },
        )
        .await
    }

    async fn status(&self, query: &str) -> anyhow::Result<Json> {
        self.send("GET", &format!("{}/status?{query}", dig_path()), Payload::Empty)
            .await
    }
}

/// The cluster provider and its clusters (labelled `edge`), through the API: those named in `pull` as pull
/// clusters, whose agent tokens are answered (in their order), the others with their kubeconfig.
async fn onboard_clusters(
    api: &Api,
    clusters: &[(String, Vec<u8>)],
    pull: &[String],
) -> anyhow::Result<Vec<String>> {
    let provider = format!("/v2/cluster-providers/{PROVIDER}");
    api.post(
        "/v2/cluster-providers",
        json!({"metadata": {"name": PROVIDER, "description": "simulated edge clusters"}}),
    )
    .await?;
    let mut tokens = Vec::new();
    for (name, kubeconfig) in clusters {
        if pull.contains(name) {
            let created = api
                .post_form(
                    &format!("{provider}/clusters"),
                    json!({"metadata": {"name": name}, "spec": {"pull": {}}}),
                    b"",
                )
                .await?;
            let token = created["agentToken"]
                .as_str()
                .with_context(|| format!("registering pull cluster {name} answered no agent token"))?;
            tokens.push(token.to_string());
        } else {
            api.post_form(
                &format!("{provider}/clusters"),
                json!({"metadata": {"name": name}}),
                kubeconfig,
            )
            .await?;
        }
        api.post(
            &format!("{provider}/clusters/{name}/labels"),
            json!({"clusterLabel": "edge"}),
        )
        .await?;
    }
    Ok(tokens)
}

/// Installs the ovn4nfv CRDs into `cluster`, as an operator would before applying network intents.
async fn install_network_crds(cluster: &kubesim::SimCluster) -> anyhow::Result<()> {
    use kube::api::{Api as KubeApi, DynamicObject, PostParams};
    use kube::core::{ApiResource, GroupVersionKind};
    let client = cluster.client().context("a client for edge01")?;
    let crds: KubeApi<DynamicObject> = KubeApi::all_with(
        client,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    for document in serde_saphyr::from_multiple::<Json>(NETWORK_CRDS).context("reading the network CRDs")? {
        if document.is_null() {
            continue;
        }
        let object: DynamicObject = serde_json::from_value(document).context("a network CRD")?;
        crds.create(&PostParams::default(), &object)
            .await
            .context("installing the network CRDs")?;
    }
    Ok(())
}

/// Applies seed 000's network intents (two provider networks, one network) to `cluster` and waits for them.
async fn apply_networks(api: &Api, cluster: &str) -> anyhow::Result<()> {
    let base = format!("/v2/cluster-providers/{PROVIDER}/clusters/{cluster}");
    for (name, subnet, gateway, vlan) in [
        ("emco-private-net", "10.10.20.0/24", "10.10.20.1/24", "100"),
        (
            "unprotected-private-net",
            "192.168.10.0/24",
            "192.168.10.1/24",
            "101",
        ),
    ] {
        api.post(
            &format!("{base}/provider-networks"),
            json!({"metadata": {"name": name}, "spec": {
                "cniType": "ovn4nfv",
                "ipv4Subnets": [{"subnet": subnet, "name": "subnet1", "gateway": gateway}],
                "providerNetType": "VLAN",
                "vlan": {"vlanID": vlan, "providerInterfaceName": "eth1", "logicalInterfaceName": format!("eth1.{vlan}"), "vlanNodeSelector": "any"}
            }}),
        )
        .await?;
    }
    api.post(
        &format!("{base}/networks"),
        json!({"metadata": {"name": "protected-private-net"}, "spec": {
            "cniType": "ovn4nfv",
            "ipv4Subnets": [{"subnet": "192.168.20.0/24", "name": "subnet1", "gateway": "192.168.20.100/24"}]
        }}),
    )
    .await?;
    api.send("POST", &format!("{base}/apply"), Payload::Empty).await?;
    let answer = wait_for(api, &format!("{base}/status?output=summary"), |a| {
        a["status"] != "Instantiating"
    })
    .await?;
    println!(
        "network intents of {cluster}: {} ({})",
        answer["status"].as_str().unwrap_or("?"),
        emcoctl::status::counts_text(&answer["rsync-status"])
    );
    if answer["status"] != "Instantiated" {
        bail!("the network intents of {cluster} were not applied: {answer}");
    }
    Ok(())
}

/// A level-1 logical cloud over every cluster: namespace `vfw`, user `vfw-user` allowed everything in it, a quota.
async fn instantiate_logical_cloud(api: &Api, clusters: &[String]) -> anyhow::Result<()> {
    let lc = format!("/v2/projects/{PROJECT}/logical-clouds/{LOGICAL_CLOUD}");
    api.post(
        &format!("/v2/projects/{PROJECT}/logical-clouds"),
        json!({"metadata": {"name": LOGICAL_CLOUD}, "spec": {"level": "1", "namespace": NAMESPACE, "user": {"userName": LC_USER, "type": "certificate"}}}),
    )
    .await?;
    for cluster in clusters {
        api.post(
            &format!("{lc}/cluster-references"),
            json!({"metadata": {"name": cluster}, "spec": {"clusterProvider": PROVIDER, "cluster": cluster, "loadBalancerIP": "0.0.0.0"}}),
        )
        .await?;
    }
    api.post(
        &format!("{lc}/user-permissions"),
        json!({"metadata": {"name": "vfw-admin"}, "spec": {"namespace": NAMESPACE, "apiGroups": ["", "apps"], "resources": ["*"], "verbs": ["*"]}}),
    )
    .await?;
    api.post(
        &format!("{lc}/cluster-quotas"),
        json!({"metadata": {"name": "vfw-quota"}, "spec": {"pods": "50", "services": "10", "configmaps": "20"}}),
    )
    .await?;
    api.send("POST", &format!("{lc}/instantiate"), Payload::Empty)
        .await?;
    let answer = wait_for(api, &format!("{lc}/status?status=deployed&output=summary"), |a| {
        a["deployedStatus"] != "Instantiating"
    })
    .await?;
    println!(
        "logical cloud {LOGICAL_CLOUD} (level 1, namespace {NAMESPACE}, user {LC_USER}) on {} cluster(s): {} ({})",
        clusters.len(),
        answer["deployedStatus"].as_str().unwrap_or("?"),
        emcoctl::status::counts_text(&answer["deployedCounts"])
    );
    if answer["deployedStatus"] != "Instantiated" {
        bail!("the logical cloud was not instantiated: {answer}");
    }
    Ok(())
}

/// Polls `path` until `done` holds (at most a minute).
async fn wait_for(api: &Api, path: &str, done: impl Fn(&Json) -> bool) -> anyhow::Result<Json> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let answer = api.send("GET", path, Payload::Empty).await?;
        if done(&answer) {
            return Ok(answer);
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("GET {path} did not settle within a minute: {answer}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The vFW onboarding of the seeds, through the API, on the logical cloud.
async fn onboard(api: &Api, example: &Charts) -> anyhow::Result<()> {
    api.post(
        &format!("/v2/projects/{PROJECT}/composite-apps"),
        json!({"metadata": {"name": COMPOSITE_APP}, "spec": {"compositeAppVersion": "v1"}}),
    )
    .await?;
    let composite_app = format!("/v2/projects/{PROJECT}/composite-apps/{COMPOSITE_APP}/v1");
    for (app, chart) in &example.charts {
        api.post_form(
            &format!("{composite_app}/apps"),
            json!({"metadata": {"name": app}}),
            chart,
        )
        .await?;
    }
    api.post(
        &format!("{composite_app}/composite-profiles"),
        json!({"metadata": {"name": "vfw_composite-profile"}}),
    )
    .await?;
    for (app, profile) in &example.profiles {
        api.post_form(
            &format!("{composite_app}/composite-profiles/vfw_composite-profile/profiles"),
            json!({"metadata": {"name": format!("{app}-profile")}, "spec": {"app": app}}),
            profile,
        )
        .await?;
    }
    let dig = dig_path();
    api.post(
        &format!("{composite_app}/deployment-intent-groups"),
        json!({"metadata": {"name": DIG}, "spec": {"compositeProfile": "vfw_composite-profile", "version": "fw0", "logicalCloud": LOGICAL_CLOUD}}),
    )
    .await?;
    api.post(&format!("{dig}/intents"), json!({"metadata": {"name": "vfw-intent"}, "spec": {"intent": {"genericPlacementIntent": "vfw-placement"}}}))
        .await?;
    api.post(
        &format!("{dig}/generic-placement-intents"),
        json!({"metadata": {"name": "vfw-placement"}}),
    )
    .await?;
    for app in APPS {
        api.post(
            &format!("{dig}/generic-placement-intents/vfw-placement/app-intents"),
            json!({"metadata": {"name": format!("{app}-pi")},
                   "spec": {"app": app, "intent": {"allOf": [{"clusterProvider": PROVIDER, "clusterLabel": "edge"}]}}}),
        )
        .await?;
    }
    Ok(())
}

/// Prints a line whenever the progress changes, until the context is Instantiated and every resource Ready.
async fn wait_until_ready(api: &Api, timeout: Duration) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last = String::new();
    loop {
        let summary = api.status("output=summary").await?;
        let ready = api.status("status=ready&output=summary").await?;
        let line = format!(
            "  {:<14} resources: {:<24} readiness: {}",
            summary["status"].as_str().unwrap_or("?"),
            emcoctl::status::counts_text(&summary["rsync-status"]),
            emcoctl::status::counts_text(&ready["readyCounts"]),
        );
        if line != last {
            println!("{line}");
            last.clone_from(&line);
        }
        if summary["status"] == "Instantiated" && ready["readyStatus"] == "Ready" {
            return Ok(());
        }
        if summary["status"] == "InstantiateFailed" {
            bail!("the instantiation failed: {summary}");
        }
        if tokio::time::Instant::now() >= deadline {
            bail!(
                "not Instantiated and Ready within {} s; last: {}",
                timeout.as_secs(),
                line.trim()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The status table emcoctl prints, from the three answers.
async fn status_table(api: &Api) -> anyhow::Result<String> {
    let answers = emcoctl::status::Answers {
        rsync: api.status("").await?,
        cluster: api.status("type=cluster").await?,
        ready: api.status("status=ready").await?,
    };
    Ok(emcoctl::status::table(&emcoctl::status::rows(&answers)).to_string())
}

fn print_next_steps(address: SocketAddr, kubeconfig_dir: &Path, names: &[String], user_kubeconfig: &Path) {
    let status = format!("http://{address}{}/status", dig_path());
    let first = names.first().map_or("edge01", String::as_str);
    println!("Open the web page: http://{address}/ui/");
    println!("Try next (while the demo runs):");
    println!("  curl -s '{status}?output=summary'");
    println!("  curl -s '{status}?type=cluster&output=detail&app=sink'");
    println!("  curl -s '{status}?status=ready'");
    println!(
        "  kubectl --kubeconfig {} get deployments,pods      # as {LC_USER}, in namespace {NAMESPACE}",
        user_kubeconfig.display()
    );
    println!(
        "  kubectl --kubeconfig {} get networks,providernetworks,namespaces",
        kubeconfig_dir.join(format!("{first}.yaml")).display()
    );
    println!("  curl -s 'http://{address}/v2/cluster-providers/{PROVIDER}/clusters/{first}/status'");
    println!("  curl -s 'http://{address}/v2/projects/{PROJECT}/logical-clouds/{LOGICAL_CLOUD}/status'");
    println!(
        "  cargo run -q --release --bin emcoctl -- --emco http://{address} status {} --watch",
        dig_path().trim_start_matches("/v2/")
    );
}
