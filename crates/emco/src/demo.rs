//! `emco demo`: the whole system in one process for a first look. It starts simulated clusters (kubesim) with a
//! monitor in each, serves the API with the embedded store, onboards the vFW example of `examples/vfw` through
//! that API (as a user would with curl), approves and instantiates it, shows progress until it is Instantiated and
//! Ready, prints the status as a table and what to try next, then keeps serving until Ctrl-C.

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
    onboard(&api, &clusters, &charts).await?;
    println!(
        "onboarded the vFW example: project {PROJECT}, composite app {COMPOSITE_APP} (packetgen, firewall, sink), DIG {DIG}"
    );
    api.send("POST", &format!("{}/approve", dig_path()), Payload::Empty)
        .await?;
    api.send("POST", &format!("{}/instantiate", dig_path()), Payload::Empty)
        .await?;
    println!("approved and instantiated; waiting for the clusters:");
    wait_until_ready(&api, Duration::from_secs(args.timeout_secs)).await?;

    let table = status_table(&api).await?;
    println!("\n{table}\n");
    print_next_steps(address, &kubeconfig_dir, &names);

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
    async fn send(&self, method: &str, path: &str, payload: Payload) -> anyhow::Result<Json> {
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
        if bytes.is_empty() {
            return Ok(Json::Null);
        }
        serde_json::from_slice(&bytes)
            .with_context(|| format!("{method} {path} answered something that is not JSON"))
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

/// The vFW onboarding of the seeds, through the API.
async fn onboard(api: &Api, clusters: &[(String, Vec<u8>)], example: &Charts) -> anyhow::Result<()> {
    let provider = format!("/v2/cluster-providers/{PROVIDER}");
    api.post(
        "/v2/cluster-providers",
        json!({"metadata": {"name": PROVIDER, "description": "simulated edge clusters"}}),
    )
    .await?;
    for (name, kubeconfig) in clusters {
        api.post_form(
            &format!("{provider}/clusters"),
            json!({"metadata": {"name": name}}),
            kubeconfig,
        )
        .await?;
        api.post(
            &format!("{provider}/clusters/{name}/labels"),
            json!({"clusterLabel": "edge"}),
        )
        .await?;
    }
    api.post("/v2/projects", json!({"metadata": {"name": PROJECT}}))
        .await?;
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
        json!({"metadata": {"name": DIG}, "spec": {"compositeProfile": "vfw_composite-profile", "version": "fw0"}}),
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

fn print_next_steps(address: SocketAddr, kubeconfig_dir: &Path, names: &[String]) {
    let status = format!("http://{address}{}/status", dig_path());
    let first = names.first().map_or("edge01", String::as_str);
    println!("Try next (while the demo runs):");
    println!("  curl -s '{status}?output=summary'");
    println!("  curl -s '{status}?type=cluster&output=detail&app=sink'");
    println!("  curl -s '{status}?status=ready'");
    println!(
        "  kubectl --kubeconfig {} get deployments,pods",
        kubeconfig_dir.join(format!("{first}.yaml")).display()
    );
    println!(
        "  cargo run -q --release --bin emcoctl -- --emco http://{address} status {} --watch",
        dig_path().trim_start_matches("/v2/")
    );
}
