//! Live status streams under load (issue #19 §5): many server-sent event clients on one large DIG while one
//! cluster's state changes every 100 ms. Measures the server's CPU while the changes run, the memory each open
//! stream costs (the server's resident set growth from opening the streams, divided by their count), and the event
//! latency: from a change's write to its arrival at each client (the first event whose id, a store revision, is at
//! or past the change's), p50/p99.
//!
//! The server runs in this process; the clients run in a second process (this bench executed again with
//! `STREAMS_CLIENTS_OF=<address>`), so the CPU and memory measured are the server's alone. Both processes stamp
//! times with the system clock (one machine, one clock).
//!
//! The DIG is onboarded through the API with one app (a Deployment and a ConfigMap) on every cluster and
//! instantiated with the server's no-op engine (no cluster is contacted; every resource stays Pending). A change
//! flips one resource of one cluster between Pending and Applied, as rsync writes it.
//!
//! Run with `cargo bench -p emco --bench streams` (not in CI). `STREAMS_CLIENTS` (500), `STREAMS_CLUSTERS` (1000),
//! `STREAMS_CHANGES` (200) and `STREAMS_QUERY` (`type=rsync`: every resource of every cluster) change the load.

// Benchmark helpers may unwrap: a panic is a failed run.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "common/own_process.rs"]
mod own_process;

#[path = "../tests/e2e/support.rs"]
#[allow(dead_code, unreachable_pub)]
mod support;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use emco_appcontext::AppContexts;
use emco_model::{ContextId, RsyncStatus};
use emco_server::{Server, ServerConfig};
use emco_store::Store;
use emcoctl::client::EmcoClient;
use emcoctl::sse::EventReader;
use own_process::{cpu_time, env_number, now_micros, percentile, resident_bytes};
use support::{DIG, Http};

const CHANGE_EVERY: Duration = Duration::from_millis(100);

fn chart() -> Vec<u8> {
    emco_helm::archive::write_tgz(&[
        ("web/Chart.yaml", b"apiVersion: v2\nname: web\nversion: 0.1.0\n"),
        ("web/templates/deployment.yaml", b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: main\n        image: registry.local/web:1\n"),
        ("web/templates/config.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n"),
    ])
}

/// When each client received each event id (microseconds since the epoch).
type Arrivals = Arc<Mutex<Vec<(i64, i64)>>>;

/// The client process: opens `STREAMS_CLIENTS` streams of `STREAMS_PATH` on the server at `address`, prints
/// `ready` once every stream has its first event, and when its standard input closes prints
/// `<client> <event id> <arrival µs>` for every event it received.
async fn clients_of(address: &str) {
    let clients = env_number("STREAMS_CLIENTS", 500);
    let path = std::env::var("STREAMS_PATH").unwrap();
    let client = EmcoClient::new(&format!("http://{address}")).unwrap();
    let mut arrivals: Vec<Arrivals> = Vec::with_capacity(clients);
    for _ in 0..clients {
        let reply = client.stream(&path, None).await.unwrap();
        assert_eq!(reply.status, 200);
        let noted: Arrivals = Arc::default();
        arrivals.push(noted.clone());
        tokio::spawn(async move {
            let mut events = EventReader::new(reply.body);
            while let Ok(Some(event)) = events.next_event().await {
                if let Some(id) = event.id.and_then(|id| id.parse().ok()) {
                    noted.lock().unwrap().push((id, now_micros()));
                }
            }
        });
    }
    while arrivals.iter().any(|noted| noted.lock().unwrap().is_empty()) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!("ready");
    std::io::stdout().flush().unwrap();
    // The parent closes our standard input when its changes are done.
    tokio::task::spawn_blocking(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).unwrap_or(0) > 0 {}
    })
    .await
    .unwrap();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (index, noted) in arrivals.iter().enumerate() {
        for (id, arrived) in noted.lock().unwrap().iter() {
            writeln!(out, "{index} {id} {arrived}").unwrap();
        }
    }
    out.flush().unwrap();
    std::process::exit(0);
}

async fn run() {
    let clients = env_number("STREAMS_CLIENTS", 500);
    let clusters = env_number("STREAMS_CLUSTERS", 1000);
    let changes = env_number("STREAMS_CHANGES", 200);
    let query = std::env::var("STREAMS_QUERY").unwrap_or_else(|_| "type=rsync".into());

    // One real kubeconfig (never contacted: the engine is a no-op) for every cluster.
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let kubeconfig = sim.clusters()[0].kubeconfig();
    let names: Vec<(String, String)> = (1..=clusters)
        .map(|index| (format!("edge{index:04}"), kubeconfig.clone()))
        .collect();
    let store = Store::memory();
    let server = Server::new(
        store.clone(),
        None,
        ServerConfig {
            max_streams: clients + 10,
            ..ServerConfig::default()
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(server.run(listener, std::future::pending()));
    let http = Http { address };
    let setup = Instant::now();
    support::onboard_apps(&http, &names, &[("web", chart())]).await;
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    let answer = http
        .get(&format!("{DIG}/status?output=summary"))
        .await
        .expect(200)
        .json();
    let context: ContextId = support::last_context(&answer).parse().unwrap();
    let path = format!("{DIG}/status?{query}");
    let size = http.get(&path).await.expect(200).body.len();
    println!(
        "{clusters} clusters onboarded and instantiated in {:.1} s; the streamed answer ({query}) is {} KiB",
        setup.elapsed().as_secs_f64(),
        size / 1024
    );

    // The clients, in their own process, each reading every event and noting when each id arrived.
    let before_streams = resident_bytes();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .env("STREAMS_CLIENTS_OF", address.to_string())
        .env("STREAMS_PATH", &path)
        .env("STREAMS_CLIENTS", clients.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child_out = std::io::BufReader::new(child.stdout.take().unwrap());
    let ready = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        child_out.read_line(&mut line).unwrap();
        (line, child_out)
    });
    let (line, mut child_out) = ready.await.unwrap();
    assert_eq!(line.trim(), "ready", "the client process did not start");
    let per_stream = resident_bytes().saturating_sub(before_streams) / clients as u64;
    println!(
        "{clients} streams open (clients in process {}): {:.1} KiB of the server's resident set each",
        child.id(),
        per_stream as f64 / 1024.0
    );

    // One cluster's resource flips every 100 ms.
    let contexts = AppContexts::new(store.clone());
    let cpu_before = cpu_time();
    let started = Instant::now();
    let mut writes: Vec<(i64, i64)> = Vec::with_capacity(changes);
    let mut flipped: HashMap<usize, bool> = HashMap::new();
    let mut tick = tokio::time::interval(CHANGE_EVERY);
    for change in 0..changes {
        tick.tick().await;
        let index = (change * 7919) % clusters;
        let applied = flipped.entry(index).or_insert(false);
        *applied = !*applied;
        let status = if *applied {
            RsyncStatus::Applied
        } else {
            RsyncStatus::Pending
        };
        let cluster = format!("vfw-cluster-provider+{}", names[index].0);
        contexts
            .update_cluster(context, "web", &cluster, |record| {
                record.resources[0].status = status
            })
            .await
            .unwrap();
        writes.push((store.revision(), now_micros()));
    }
    // The last change has time to arrive.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let elapsed = started.elapsed();
    let cpu = cpu_time() - cpu_before;
    let per_stream_after = resident_bytes().saturating_sub(before_streams) / clients as u64;

    drop(child.stdin.take());
    let received = tokio::task::spawn_blocking(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut child_out, &mut text).unwrap();
        text
    })
    .await
    .unwrap();
    child.wait().unwrap();
    let mut arrivals: Vec<Vec<(i64, i64)>> = vec![Vec::new(); clients];
    for line in received.lines() {
        let fields: Vec<i64> = line.split(' ').map(|field| field.parse().unwrap()).collect();
        arrivals[fields[0] as usize].push((fields[1], fields[2]));
    }

    let mut latencies = Vec::new();
    let mut missed = 0usize;
    for noted in &arrivals {
        for (revision, written) in &writes {
            match noted.iter().find(|(id, _)| id >= revision) {
                Some((_, arrived)) => {
                    latencies.push(Duration::from_micros((arrived - written).max(0) as u64))
                }
                None => missed += 1,
            }
        }
    }
    latencies.sort();
    let events: usize = arrivals.iter().map(Vec::len).sum();
    println!(
        "{changes} changes in {:.1} s to {clients} clients: {events} events ({:.1} per client per second), \
         server CPU {:.0}% of one core, latency p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms, \
         {missed} change-client pairs never seen; {:.1} KiB of the server's resident set per stream after the \
         changes (an upper bound: the allocator keeps memory it freed)",
        elapsed.as_secs_f64(),
        events as f64 / clients as f64 / elapsed.as_secs_f64(),
        cpu.as_secs_f64() / elapsed.as_secs_f64() * 100.0,
        percentile(&latencies, 0.5).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
        per_stream_after as f64 / 1024.0,
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    match std::env::var("STREAMS_CLIENTS_OF") {
        Ok(address) => runtime.block_on(clients_of(&address)),
        Err(_) => runtime.block_on(run()),
    }
}
