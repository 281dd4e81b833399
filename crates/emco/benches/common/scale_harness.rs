//! The scale harness (run by `cargo bench -p emco --bench scale`, and on 50 clusters by the e2e tests): N
//! simulated clusters (kubesim in its own process, all clusters behind one listener told apart by TLS server name,
//! emco's monitor inside each cluster: `emco kubesim --shared-listener --monitors`),
//! the bench composite app (1 to 3 apps × 10 objects) instantiated by
//! `emco serve` in its own process (redb), and, in the same run, the reference — a raw kube-rs client applying
//! exactly the objects emco applies (the ResourceBundleState CRD, every app's rendered and labelled objects, one
//! ResourceBundleState per app) to N fresh clusters with rsync's concurrency. The writes that reached the clusters
//! are counted by kubesim for both, so the two are seen to apply the same. Then the status query through HTTP
//! (summary, all, detail: p50/p99 and answer size), the time until the monitors' reports make everything Ready,
//! freshness (a pod deleted → gone from `status=ready`), emco's and kubesim's memory (RSS) and emco's CPU while idle,
//! and a cold restart (SIGKILL, start on the same store: time until the status of everything is served again).
//! Reads, writes and connections are counted by kubesim (emco speaks HTTP/2: one connection per cluster).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bench_apps::{APPS, chart_with_replicas, dig, onboard_apps, onboard_apps_on_pull_clusters};
use crate::support::{
    Http, KubesimProcess, ServeProcess, total_connections, total_fell_behind, total_in_cluster_object_writes,
    total_reads, total_writes,
};
use emco_rsync::RsyncConfig;
use futures::StreamExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::Value as Json;

/// Samples per status query shape.
const STATUS_SAMPLES: usize = 40;

/// RSS in MiB of process `pid`.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

/// `pid`'s RSS once it has settled: kubesim reports serving before the monitors in its clusters have started
/// their watches, which take most of an idle cluster's memory. Sampled every second until two samples in a row
/// differ by less than 1 % (at most 60 s).
async fn settled_rss_mib(pid: u32) -> f64 {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut last = rss_mib(pid);
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let now = rss_mib(pid);
        if (now - last).abs() < last * 0.01 || tokio::time::Instant::now() >= deadline {
            return now;
        }
        last = now;
    }
}

/// CPU seconds (user + system) process `pid` used so far.
pub(crate) fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let ticks = fields.get(11).and_then(|t| t.parse::<f64>().ok()).unwrap_or(0.0)
        + fields.get(12).and_then(|t| t.parse::<f64>().ok()).unwrap_or(0.0);
    ticks / 100.0
}

/// What rsync applies to one cluster for the DIG `version` in context `context`: the CRD, then per app its
/// labelled objects and its ResourceBundleState.
fn objects_of_one_cluster(apps: &[&str], replicas: usize, version: &str, context: &str) -> Vec<Json> {
    let mut objects = vec![emco_k8s::rbs_crd()];
    for app in apps {
        let files = emco_helm::archive::read_tgz(&chart_with_replicas(app, replicas)).unwrap();
        let loaded = emco_helm::charts::load_files(files).unwrap();
        let release = emco_helm::render::Release {
            name: version.to_string(),
            namespace: "default".to_string(),
        };
        let label = format!("{context}-{app}");
        let mut kinds = Vec::new();
        for manifest in emco_helm::render::render_chart(&loaded, &serde_json::json!({}), &release).unwrap() {
            let object = emco_rsync::labels::prepare(manifest.object, &label, Some("default"));
            kinds.push(emco_k8s::bundle::BundleKind::of(
                &emco_model::Gvk::from_api_version(
                    object["apiVersion"].as_str().unwrap_or_default(),
                    object["kind"].as_str().unwrap_or_default(),
                ),
            ));
            objects.push(object);
        }
        // The bundle as rsync writes it: naming the app's kinds.
        objects.push(emco_k8s::bundle::rbs_object_with(&label, "default", kinds, &[]));
    }
    objects
}

fn api_resource(object: &Json) -> (ApiResource, bool) {
    let api_version = object["apiVersion"].as_str().unwrap();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let kind = object["kind"].as_str().unwrap();
    let plural = match kind {
        "CustomResourceDefinition" => "customresourcedefinitions".to_string(),
        "ResourceBundleState" => emco_k8s::RBS_PLURAL.to_string(),
        other => format!("{}s", other.to_lowercase()),
    };
    let namespaced = kind != "CustomResourceDefinition";
    (
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), &plural),
        namespaced,
    )
}

/// A kube-rs client of the cluster `kubeconfig` names, without kube-rs's retries (what fails, fails the run).
async fn client_of(kubeconfig: &str) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(kubeconfig).unwrap();
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    config.default_retry = false;
    // The harness measures emco, not its own patience: a simulator saturated by 10,000 clusters' monitors may take
    // longer than kube's 30 s to accept a new connection of the harness's.
    config.connect_timeout = Some(Duration::from_secs(300));
    config.read_timeout = Some(Duration::from_secs(300));
    kube::Client::try_from(config).unwrap()
}

/// The reference: a raw client applies `objects` to every cluster, clusters in parallel up to `concurrency`.
pub(crate) async fn reference(
    kubeconfigs: &[(String, String)],
    objects: Arc<Vec<Json>>,
    concurrency: usize,
) -> Duration {
    let started = Instant::now();
    futures::stream::iter(kubeconfigs.to_vec())
        .map(|(_, kubeconfig)| {
            let objects = objects.clone();
            async move {
                let client = client_of(&kubeconfig).await;
                for object in objects.iter() {
                    let (resource, namespaced) = api_resource(object);
                    let api: Api<DynamicObject> = if namespaced {
                        Api::namespaced_with(client.clone(), "default", &resource)
                    } else {
                        Api::all_with(client.clone(), &resource)
                    };
                    let name = object["metadata"]["name"].as_str().unwrap();
                    api.patch(
                        name,
                        &PatchParams::apply("reference").force(),
                        &Patch::Apply(object),
                    )
                    .await
                    .unwrap();
                }
            }
        })
        .buffer_unordered(concurrency)
        .for_each(|()| async {})
        .await;
    started.elapsed()
}

async fn wait_for(http: &Http, url: &str, done: impl Fn(&Json) -> bool) -> Json {
    loop {
        let reply = http.get(url).await;
        if reply.status == 200 {
            let answer = reply.json();
            if done(&answer) {
                return answer;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// p50 and p99 latency and the answer's size of `STATUS_SAMPLES` GETs of `url`.
async fn latency(http: &Http, url: &str) -> (Duration, Duration, usize) {
    let mut samples = Vec::with_capacity(STATUS_SAMPLES);
    let mut size = 0;
    for _ in 0..STATUS_SAMPLES {
        let started = Instant::now();
        let reply = http.get(url).await.expect(200);
        samples.push(started.elapsed());
        size = reply.body.len();
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99), size)
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

/// Pod change to visible in `status=ready`, on `samples` clusters spread over all: a pod of `app` is deleted
/// (its Deployment makes another) and the cluster's `status=ready` answer is read until the deleted pod is gone
/// from it. The monitors report the change; rsync's watcher stores it; the index answers it.
async fn freshness(
    http: &Http,
    kubeconfigs: &[(String, String)],
    app: &str,
    samples: usize,
) -> Vec<Duration> {
    let step = (kubeconfigs.len() / samples.max(1)).max(1);
    let mut seen = Vec::with_capacity(samples);
    for (name, kubeconfig) in kubeconfigs.iter().step_by(step).take(samples) {
        let pods: Api<DynamicObject> = Api::namespaced_with(
            client_of(kubeconfig).await,
            "default",
            &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Pod"), "pods"),
        );
        let listed = pods
            .list(&kube::api::ListParams::default().labels(&format!("app={app}")))
            .await
            .unwrap();
        let Some(pod) = listed.items.first().and_then(|pod| pod.metadata.name.clone()) else {
            continue;
        };
        let url = format!(
            "{}/status?status=ready&app={app}&cluster={}%2B{name}",
            dig("dig"),
            crate::bench_apps::BENCH.provider
        );
        // The pod is in the answer before it goes.
        let shown = |text: &str, pod: &str| text.contains(&format!("\"{pod}\""));
        tokio::time::timeout(Duration::from_secs(60), async {
            while !shown(&String::from_utf8_lossy(&http.get(&url).await.body), &pod) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the pod shows in the status");
        let started = Instant::now();
        pods.delete(&pod, &Default::default()).await.unwrap();
        loop {
            let reply = http.get(&url).await;
            if reply.status == 200 && !shown(&String::from_utf8_lossy(&reply.body), &pod) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        seen.push(started.elapsed());
    }
    seen.sort();
    seen
}

/// The `q` quantile of sorted `samples`.
fn quantile(samples: &[Duration], q: f64) -> Duration {
    samples
        .get(((samples.len().max(1) - 1) as f64 * q).round() as usize)
        .copied()
        .unwrap_or_default()
}

/// `perf record` of process `pid` into the file the environment variable `variable` names, if it is set.
fn profile(variable: &str, pid: u32) -> Option<std::process::Child> {
    let file = std::env::var(variable).ok()?;
    std::process::Command::new("perf")
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-F",
            "499",
            // Release builds keep no frame pointers: callers come from unwinding a copy of the stack.
            "--call-graph",
            "dwarf,16384",
            "-o",
            &file,
            "-p",
            &pid.to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()
}

/// Ends a [`profile`] (perf writes its file on SIGINT).
fn stop_profile(profiler: Option<std::process::Child>) {
    if let Some(mut profiler) = profiler {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &profiler.id().to_string()])
            .status();
        let _ = profiler.wait();
    }
}

/// What a run measured.
pub(crate) struct Report {
    /// The table's rows: what, and the figure.
    pub(crate) rows: Vec<(String, String)>,
    /// Writes that reached the reference's clusters.
    pub(crate) reference_writes: u64,
    /// Writes emco's instantiation made.
    pub(crate) emco_writes: u64,
    /// The summary status answer after the instantiation.
    pub(crate) done: Json,
    /// Connections emco opened to the clusters while instantiating.
    pub(crate) emco_connections: u64,
}

/// How a run is shaped.
pub(crate) struct Shape {
    /// Simulated clusters.
    pub(crate) clusters: usize,
    /// Apps of the composite app (1 to 3, 10 objects each).
    pub(crate) apps: usize,
    /// Pods of each app's Deployment (the monitors report each).
    pub(crate) replicas: usize,
    /// How long idle CPU is measured.
    pub(crate) idle_window: Duration,
    /// Clusters on which freshness is measured (0: not measured).
    pub(crate) freshness_samples: usize,
    /// Whether emco's monitor runs in every cluster (without, nothing reports readiness: no Ready, no freshness).
    pub(crate) monitors: bool,
    /// Whether the clusters are pull clusters, each served by the agent running beside its monitor (`emco kubesim
    /// --monitors --pull-agents`, deployed by writing its Secret into the cluster): emco never dials them, and what
    /// the agents apply is counted by kubesim as in-cluster writes.
    pub(crate) pull: bool,
}

/// Runs the harness: `shape.clusters` clusters with emco's monitor in each, `shape.apps` apps on every one.
pub(crate) async fn run(shape: Shape) -> Report {
    let Shape {
        clusters,
        apps,
        replicas,
        idle_window,
        freshness_samples,
        monitors,
        pull,
    } = shape;
    assert!(
        monitors || !pull,
        "a pull cluster's agent runs beside its monitor"
    );
    let apps = &APPS[..apps.clamp(1, APPS.len())];
    let concurrency = RsyncConfig::default().concurrency;
    let mut rows: Vec<(String, String)> = Vec::new();
    // One listener for all clusters (told apart by TLS server name): 10,000 clusters' listeners would take half
    // of a 20,000 open-file limit.
    let mut sim_args = vec!["--shared-listener"];
    if monitors {
        sim_args.push("--monitors");
    }
    if pull {
        sim_args.push("--pull-agents");
    }
    let sim_args = sim_args.as_slice();

    // The reference on clusters of its own, so that emco's clusters start as fresh as the reference's did.
    let reference_sim = KubesimProcess::start_with(clusters, sim_args).await;
    let objects = Arc::new(objects_of_one_cluster(apps, replicas, "dig", "1"));
    let per_cluster = objects.len();
    let (sim_cpu, own_cpu) = (cpu_seconds(reference_sim.pid()), cpu_seconds(std::process::id()));
    // `SCALE_PROFILE_KUBESIM_REFERENCE=FILE`: perf samples the reference's kubesim while the reference applies.
    let profiler = profile("SCALE_PROFILE_KUBESIM_REFERENCE", reference_sim.pid());
    let reference_time = reference(&reference_sim.kubeconfigs, objects, concurrency).await;
    stop_profile(profiler);
    let reference_cpu = (
        cpu_seconds(std::process::id()) - own_cpu,
        cpu_seconds(reference_sim.pid()) - sim_cpu,
    );
    let reference_writes = total_writes(&reference_sim.admin).await;
    let reference_reads = total_reads(&reference_sim.admin).await;
    let reference_connections = total_connections(&reference_sim.admin).await;
    let reference_fell_behind = total_fell_behind(&reference_sim.admin).await;
    drop(reference_sim);
    let total = (clusters * per_cluster) as f64;
    let reference_rate = total / reference_time.as_secs_f64();

    let kubesim = KubesimProcess::start_with(clusters, sim_args).await;
    let kubesim_rss_idle = settled_rss_mib(kubesim.pid()).await;
    let data = tempfile::tempdir().unwrap();
    let store = ["--data-dir", data.path().to_str().unwrap()];
    // Pull clusters' agents hold one connection each (their long poll and reports share it).
    let max_connections = (clusters + 1024).to_string();
    let serve_args: &[&str] = if pull {
        &["--max-connections", &max_connections]
    } else {
        &[]
    };
    let emco = ServeProcess::start_on(&store, serve_args, None).await;
    let http = Http {
        address: emco.address(),
    };
    let label = |_| "edge".to_string();
    let tokens = if pull {
        let names: Vec<String> = kubesim.kubeconfigs.iter().map(|(name, _)| name.clone()).collect();
        Some(onboard_apps_on_pull_clusters(&http, apps, replicas, &names, label, &[("dig", "edge")]).await)
    } else {
        onboard_apps(
            &http,
            apps,
            replicas,
            &kubesim.kubeconfigs,
            label,
            &[("dig", "edge")],
        )
        .await;
        None
    };
    let rss_onboarded = rss_mib(emco.pid());
    if let Some(tokens) = &tokens {
        let started = Instant::now();
        deploy_agents(
            &kubesim.kubeconfigs,
            tokens,
            &format!("http://{}", emco.address()),
        )
        .await;
        let deployed = started.elapsed();
        every_agent_polls(&http).await;
        rows.push((
            "pull agents: Secrets written / until every agent polls emco".into(),
            format!(
                "{:.2} s / {:.2} s",
                deployed.as_secs_f64(),
                started.elapsed().as_secs_f64()
            ),
        ));
        // Every poll parked: what an idle pull cluster costs emco.
        let rss_parked = settled_rss_mib(emco.pid()).await;
        rows.push((
            "emco RSS: onboarded / every agent's poll parked (per pull cluster)".into(),
            format!(
                "{rss_onboarded:.0} MiB / {rss_parked:.0} MiB ({:.1} KiB)",
                (rss_parked - rss_onboarded) * 1024.0 / clusters as f64
            ),
        ));
    }
    let count_writes = async |admin: &Http| {
        if pull {
            total_in_cluster_object_writes(admin).await
        } else {
            total_writes(admin).await
        }
    };
    let writes_before = count_writes(&kubesim.admin).await;
    let reads_before = total_reads(&kubesim.admin).await;
    let connections_before = total_connections(&kubesim.admin).await;
    let (sim_cpu, emco_cpu) = (cpu_seconds(kubesim.pid()), cpu_seconds(emco.pid()));
    // `SCALE_PROFILE=FILE`: perf samples emco's process (software clock, call graphs) while it instantiates.
    let profiler = profile("SCALE_PROFILE", emco.pid());
    // `SCALE_PROFILE_KUBESIM=FILE`: the same for kubesim while emco instantiates.
    let kubesim_profiler = profile("SCALE_PROFILE_KUBESIM", kubesim.pid());
    let started = Instant::now();
    http.post_empty(&format!("{}/instantiate", dig("dig")))
        .await
        .expect(202);
    let summary_url = format!("{}/status?output=summary", dig("dig"));
    let done = wait_for(&http, &summary_url, |answer| answer["status"] != "Instantiating").await;
    let instantiate_time = started.elapsed();
    let emco_cpu = (
        cpu_seconds(emco.pid()) - emco_cpu,
        cpu_seconds(kubesim.pid()) - sim_cpu,
    );
    let emco_reads = total_reads(&kubesim.admin).await - reads_before;
    let emco_connections = total_connections(&kubesim.admin).await - connections_before;
    stop_profile(profiler);
    stop_profile(kubesim_profiler);
    let emco_writes = count_writes(&kubesim.admin).await - writes_before;
    // The same objects as the reference's: writes beyond them (a pull agent's repairs, a retry) are no progress.
    let emco_rate = total / instantiate_time.as_secs_f64();
    rows.push((
        "clusters × objects per cluster (pods per Deployment)".into(),
        format!(
            "{clusters} × {per_cluster} ({replicas}){}",
            if pull { ", pull clusters" } else { "" }
        ),
    ));
    rows.push((
        "reference: raw kube-rs client, same objects".into(),
        format!(
            "{:.2} s, {reference_rate:.0} objects/s ({reference_writes} writes)",
            reference_time.as_secs_f64()
        ),
    ));
    rows.push((
        "emco: instantiate until the status says so".into(),
        format!(
            "{:.2} s, {emco_rate:.0} objects/s ({emco_writes} writes; {}; {})",
            instantiate_time.as_secs_f64(),
            done["status"],
            done["rsync-status"]
        ),
    ));
    rows.push((
        "emco rate / reference rate".into(),
        format!("{:.2}", emco_rate / reference_rate),
    ));
    rows.push((
        "CPU while applying: client / kubesim (reference; emco)".into(),
        format!(
            "{:.1} s / {:.1} s; {:.1} s / {:.1} s",
            reference_cpu.0, reference_cpu.1, emco_cpu.0, emco_cpu.1
        ),
    ));
    rows.push((
        "reads the clusters served (reference; emco)".into(),
        format!("{reference_reads}; {emco_reads}"),
    ));
    rows.push((
        if pull {
            "connections the clusters accepted (reference, HTTP/1.1; emco: none, its agents apply)".into()
        } else {
            "connections the clusters accepted (reference, HTTP/1.1; emco, HTTP/2)".into()
        },
        format!("{reference_connections}; {emco_connections}"),
    ));
    let ready_url = format!("{}/status?output=summary&readiness", dig("dig"));
    let ready = monitors
        && tokio::time::timeout(
            Duration::from_secs(300),
            wait_for(&http, &ready_url, |answer| answer["readiness"]["ready"] == true),
        )
        .await
        .is_ok();
    rows.push((
        "instantiate until everything is Ready (monitors' reports)".into(),
        if ready {
            format!("{:.2} s", started.elapsed().as_secs_f64())
        } else if monitors {
            "not Ready within 300 s".into()
        } else {
            "no monitors".into()
        },
    ));

    // What tracking everything costs, before any status query: the queries' answers (`output=detail` decodes every
    // record) leave the allocator holding memory it may reuse, measured below as well.
    let rss_tracking = rss_mib(emco.pid());

    // The status query through HTTP.
    for (shape, query) in [
        ("summary", "?output=summary"),
        ("all", "?output=all"),
        ("detail", "?output=detail"),
        ("ready (EMCO 22.x, all)", "?status=ready"),
    ] {
        let (p50, p99, size) = latency(&http, &format!("{}/status{query}", dig("dig"))).await;
        rows.push((
            format!("status {shape}: p50 / p99, answer"),
            format!("{} / {}, {:.1} KiB", ms(p50), ms(p99), size as f64 / 1024.0),
        ));
    }

    // serde_json serializing the same `output=all` answer from a tree in memory: what writing it costs without
    // the index's hand-written views, the HTTP stack or the network.
    let all_url = format!("{}/status?output=all", dig("dig"));
    let answer: Json = http.get(&all_url).await.expect(200).json();
    let mut serialize = Vec::with_capacity(STATUS_SAMPLES);
    for _ in 0..STATUS_SAMPLES {
        let started = Instant::now();
        let bytes = serde_json::to_vec(&answer).unwrap();
        serialize.push(started.elapsed());
        std::hint::black_box(bytes);
    }
    serialize.sort();
    // `SCALE_PROFILE_ALL=FILE`: perf samples emco's process while it answers `output=all` 200 times.
    if let Some(profiler) = profile("SCALE_PROFILE_ALL", emco.pid()) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        for _ in 0..200 {
            http.get(&all_url).await.expect(200);
        }
        stop_profile(Some(profiler));
    }
    let (all_p50, _, _) = latency(&http, &all_url).await;
    rows.push((
        "serde_json serializing the same `all` answer in process, p50; all through HTTP / that".into(),
        format!(
            "{}; {:.2}",
            ms(quantile(&serialize, 0.5)),
            all_p50.as_secs_f64() / quantile(&serialize, 0.5).as_secs_f64()
        ),
    ));

    // The `output=all` answer gzip-compressed, as a client that accepts it receives it.
    let zipped = http
        .request_with(
            "GET",
            &format!("{}/status?output=all", dig("dig")),
            &[("Accept-Encoding", "gzip")],
            b"",
        )
        .await
        .expect(200);
    assert_eq!(zipped.header("content-encoding").as_deref(), Some("gzip"));
    rows.push((
        "status all, gzip-compressed (Accept-Encoding: gzip)".into(),
        format!("{:.1} KiB", zipped.body.len() as f64 / 1024.0),
    ));

    if monitors && freshness_samples > 0 {
        let seen = freshness(&http, &kubesim.kubeconfigs, apps[0], freshness_samples).await;
        rows.push((
            format!(
                "freshness: pod deleted → gone from status=ready, p50 / p99 ({} clusters)",
                seen.len()
            ),
            format!("{} / {}", ms(quantile(&seen, 0.5)), ms(quantile(&seen, 0.99))),
        ));
    }

    // Memory and idle CPU.
    let resources = clusters * apps.len() * 10;
    // Each app's Deployment has `replicas` pods, which its cluster's monitor reports.
    let tracked = resources + clusters * apps.len() * replicas;
    let rss = rss_mib(emco.pid());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (cpu_before, sim_cpu_before, wall) = (
        cpu_seconds(emco.pid()),
        cpu_seconds(kubesim.pid()),
        Instant::now(),
    );
    // `SCALE_PROFILE_IDLE=FILE`: the same while it is idle.
    let profiler = profile("SCALE_PROFILE_IDLE", emco.pid());
    // `SCALE_PROFILE_KUBESIM_IDLE=FILE`: kubesim meanwhile (its monitors' heartbeats and reports).
    let sim_profiler = profile("SCALE_PROFILE_KUBESIM_IDLE", kubesim.pid());
    tokio::time::sleep(idle_window).await;
    stop_profile(profiler);
    stop_profile(sim_profiler);
    let idle_cpu = (cpu_seconds(emco.pid()) - cpu_before) / wall.elapsed().as_secs_f64();
    let sim_idle_cpu = (cpu_seconds(kubesim.pid()) - sim_cpu_before) / wall.elapsed().as_secs_f64();
    rows.push((
        "emco RSS: onboarded / tracking everything / after the status queries".into(),
        format!(
            "{rss_onboarded:.0} MiB / {rss_tracking:.0} MiB / {rss:.0} MiB ({:.2} / {:.2} KiB per tracked object: {tracked} resources and pods)",
            rss_tracking * 1024.0 / tracked as f64,
            rss * 1024.0 / tracked as f64
        ),
    ));
    rows.push((
        format!(
            "emco CPU, idle with everything instantiated ({} s)",
            idle_window.as_secs()
        ),
        format!("{:.1}% of a core", idle_cpu * 100.0),
    ));
    rows.push((
        format!(
            "kubesim CPU meanwhile: the clusters' monitors{} heart-beating and reporting ({} s)",
            if pull { " and agents" } else { "" },
            idle_window.as_secs()
        ),
        format!("{:.1}% of a core", sim_idle_cpu * 100.0),
    ));
    rows.push((
        "kubesim RSS: started (settled) / with everything applied".into(),
        format!("{kubesim_rss_idle:.0} MiB / {:.0} MiB", rss_mib(kubesim.pid())),
    ));
    rows.push((
        "kubesim: watches ended for falling behind the change feed, and controller resyncs (reference; emco)"
            .into(),
        format!(
            "{reference_fell_behind}; {}",
            total_fell_behind(&kubesim.admin).await
        ),
    ));

    // Cold restart: SIGKILL, start on the same store and port, until the status of everything is served.
    let port = emco.kill().await;
    let started = Instant::now();
    // With the same settings: at 10,000 pull clusters, a connection limit below the agents' number keeps a client
    // waiting until a poll ends.
    let restarted = ServeProcess::start_at(port, &store, serve_args, None).await;
    let all_url = format!("{}/status?output=summary", dig("dig"));
    let expected = done["rsync-status"].clone();
    wait_for(&http, &all_url, |answer| answer["rsync-status"] == expected).await;
    rows.push((
        "cold restart until the status of everything is served".into(),
        format!("{:.2} s", started.elapsed().as_secs_f64()),
    ));
    drop(restarted);

    Report {
        rows,
        reference_writes,
        emco_writes,
        done,
        emco_connections,
    }
}

/// Deploys each cluster's pull agent as an operator would: the namespace `emco-system` and the Secret
/// `emco-agent` naming emco's URL, the cluster and its token (the software in the cluster runs the agent once the
/// Secret is there).
async fn deploy_agents(kubeconfigs: &[(String, String)], tokens: &[String], emco: &str) {
    use base64::Engine as _;
    let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    futures::stream::iter(kubeconfigs.iter().zip(tokens))
        .map(|((name, kubeconfig), token)| async move {
            let client = client_of(kubeconfig).await;
            let namespace: DynamicObject = serde_json::from_value(serde_json::json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": emco::in_cluster::AGENT_SECRET_NAMESPACE}
            }))
            .unwrap();
            let namespaces = Api::<DynamicObject>::all_with(
                client.clone(),
                &ApiResource::from_gvk_with_plural(
                    &GroupVersionKind::gvk("", "v1", "Namespace"),
                    "namespaces",
                ),
            );
            namespaces.create(&Default::default(), &namespace).await.unwrap();
            let secret: DynamicObject = serde_json::from_value(serde_json::json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": emco::in_cluster::AGENT_SECRET},
                "data": {
                    "emco": encode(emco),
                    "cluster": encode(&format!("{}+{name}", crate::bench_apps::BENCH.provider)),
                    "token": encode(token),
                }
            }))
            .unwrap();
            Api::<DynamicObject>::namespaced_with(
                client,
                emco::in_cluster::AGENT_SECRET_NAMESPACE,
                &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Secret"), "secrets"),
            )
            .create(&Default::default(), &secret)
            .await
            .unwrap();
        })
        .buffer_unordered(64)
        .for_each(|()| async {})
        .await;
}

/// Waits until emco shows a last contact of every pull cluster's agent.
async fn every_agent_polls(http: &Http) {
    let url = format!(
        "/v2/cluster-providers/{}/clusters",
        crate::bench_apps::BENCH.provider
    );
    tokio::time::timeout(
        Duration::from_secs(600),
        wait_for(http, &url, |clusters| {
            clusters.as_array().is_some_and(|clusters| {
                clusters
                    .iter()
                    .all(|cluster| cluster["connection"]["agentLastContact"].is_string())
            })
        }),
    )
    .await
    .expect("every agent polls emco within 600 s");
}
