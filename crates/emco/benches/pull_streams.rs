//! Pull clusters' agents at rest and at work (issue #44): many agents each holding emco's desired-state long poll
//! open, as `emco-monitor --pull-from` does. Measures the memory an idle agent's poll costs emco (the server's
//! resident set growth from parking every agent's poll, divided by their count), the server's CPU while they sit
//! idle, and the latency from an order's write into a record (as rsync writes it) to its arrival at that cluster's
//! agent, p50/p99, while orders are written at a steady rate.
//!
//! The server runs in this process (in-memory store, no-op engine: no cluster is contacted); the agents' polls run
//! in a second process (this bench executed again with `PULL_AGENTS_OF=<address>`), so what is measured is the
//! server's alone. Both processes stamp times with the system clock.
//!
//! Run with `cargo bench -p emco --bench pull_streams` (not in CI). `PULL_CLUSTERS` (1000), `PULL_ORDERS` (200,
//! one every 50 ms) change the load; `PULL_IDLE_CONNECTIONS=1` measures a baseline instead: each connection
//! answers one `/healthz` and stays open idle.

// Benchmark helpers may unwrap: a panic is a failed run.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "common/own_process.rs"]
mod own_process;

#[path = "../tests/e2e/support.rs"]
#[allow(dead_code, unreachable_pub)]
mod support;

use std::io::{BufRead, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use emco_appcontext::{AgentOperation, AgentOrder, AppContexts};
use emco_model::ContextId;
use emco_server::{Server, ServerConfig};
use emco_store::Store;
use emcoctl::client::{Body, EmcoClient};
use own_process::{cpu_time, env_number, now_micros, percentile, resident_bytes};
use support::{DIG, Http};

const ORDER_EVERY: Duration = Duration::from_millis(50);
const PROVIDER: &str = "vfw-cluster-provider";

fn chart() -> Vec<u8> {
    emco_helm::archive::write_tgz(&[
        ("web/Chart.yaml", b"apiVersion: v2\nname: web\nversion: 0.1.0\n"),
        (
            "web/templates/config.yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n",
        ),
    ])
}

/// The agents' process: for every `cluster token` line of `PULL_TOKENS`, an agent that polls its desired state
/// as the agent does (`wait=55`, resumed from each answer's revision), noting when each order sequence number
/// first arrived. Prints `ready` once every agent's second poll is open; when its standard input closes, prints
/// `<cluster> <seq> <arrival µs>` for every order it received.
async fn agents_of(address: &str) {
    let tokens = std::fs::read_to_string(std::env::var("PULL_TOKENS").unwrap()).unwrap();
    let arrivals: Arc<Mutex<Vec<(String, u64, i64)>>> = Arc::default();
    let parked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let agents: Vec<(String, String)> = tokens
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(cluster, token)| (cluster.to_string(), token.to_string()))
        .collect();
    // `PULL_IDLE_CONNECTIONS=1`: a baseline instead: each agent's connection answers one `/healthz` and then
    // stays open idle (what a connection alone costs the server, without a request in flight).
    if std::env::var("PULL_IDLE_CONNECTIONS").is_ok() {
        // A client (so a connection) per agent, as each agent has its own.
        let clients: Vec<EmcoClient> = agents
            .iter()
            .map(|_| EmcoClient::multiplexed(&format!("http://{address}"), None).unwrap())
            .collect();
        let asks: Vec<_> = clients
            .iter()
            .map(|client| {
                let client = client.clone();
                tokio::spawn(async move { client.send("GET", "/healthz", true, Body::Empty).await.unwrap() })
            })
            .collect();
        for ask in asks {
            ask.await.unwrap();
        }
        parked.store(agents.len(), std::sync::atomic::Ordering::Relaxed);
        std::mem::forget(clients);
    }
    for (cluster, token) in agents
        .iter()
        .filter(|_| std::env::var("PULL_IDLE_CONNECTIONS").is_err())
    {
        let client = EmcoClient::multiplexed(&format!("http://{address}"), None)
            .unwrap()
            .with_token(token)
            .unwrap();
        let path = format!("/v2/cluster-providers/{PROVIDER}/clusters/{cluster}/agent/desired-state");
        let (cluster, arrivals, parked) = (cluster.clone(), arrivals.clone(), parked.clone());
        tokio::spawn(async move {
            let mut since = 0i64;
            let mut seen = std::collections::HashSet::new();
            loop {
                if since > 0 && seen.is_empty() {
                    parked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    seen.insert(0);
                }
                let reply = client
                    .send("GET", &format!("{path}?since={since}&wait=55"), true, Body::Empty)
                    .await
                    .unwrap();
                let arrived = now_micros();
                let answer: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
                since = answer["revision"].as_i64().unwrap();
                for change in answer["changed"].as_array().unwrap() {
                    let seq = change["order"]["seq"].as_u64().unwrap();
                    if seen.insert(seq) {
                        arrivals.lock().unwrap().push((cluster.clone(), seq, arrived));
                    }
                }
            }
        });
    }
    while parked.load(std::sync::atomic::Ordering::Relaxed) < agents.len() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Parked: every second poll is open (give the last ones time to reach the server).
    tokio::time::sleep(Duration::from_millis(500)).await;
    println!("ready");
    std::io::stdout().flush().unwrap();
    tokio::task::spawn_blocking(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).unwrap_or(0) > 0 {}
    })
    .await
    .unwrap();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (cluster, seq, arrived) in arrivals.lock().unwrap().iter() {
        writeln!(out, "{cluster} {seq} {arrived}").unwrap();
    }
    out.flush().unwrap();
    std::process::exit(0);
}

async fn run() {
    let clusters = env_number("PULL_CLUSTERS", 1000);
    let orders = env_number("PULL_ORDERS", 200);
    let store = Store::memory();
    let server = Server::new(store.clone(), None, ServerConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    // One connection per agent, as `emco serve --max-connections` allows them.
    let options = emco_server::ServeOptions {
        max_connections: clusters + 256,
        ..emco_server::ServeOptions::default()
    };
    tokio::spawn(server.run_with(listener, options, std::future::pending()));
    let http = Http { address };
    let setup = Instant::now();
    support::onboard_apps(&http, &[], &[("web", chart())]).await;
    let mut tokens = String::new();
    let names: Vec<String> = (1..=clusters).map(|index| format!("site{index:05}")).collect();
    for name in &names {
        let token = support::register_pull_cluster(&http, name).await;
        tokens.push_str(&format!("{name} {token}\n"));
    }
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    let answer = http
        .get(&format!("{DIG}/status?output=summary"))
        .await
        .expect(200)
        .json();
    let context: ContextId = support::last_context(&answer).parse().unwrap();
    println!(
        "{clusters} pull clusters registered and a DIG instantiated on them in {:.1} s",
        setup.elapsed().as_secs_f64()
    );
    let token_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token_file.path(), tokens).unwrap();

    let before = resident_bytes();
    let cpu_before_idle = cpu_time();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .env("PULL_AGENTS_OF", address.to_string())
        .env("PULL_TOKENS", token_file.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child_out = std::io::BufReader::new(child.stdout.take().unwrap());
    let (line, mut child_out) = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        child_out.read_line(&mut line).unwrap();
        (line, child_out)
    })
    .await
    .unwrap();
    assert_eq!(line.trim(), "ready", "the agents' process did not start");
    let per_poll = resident_bytes().saturating_sub(before) as f64 / clusters as f64;
    let cpu_opening = cpu_time() - cpu_before_idle;
    let idle_from = (Instant::now(), cpu_time());
    tokio::time::sleep(Duration::from_secs(10)).await;
    let idle_cpu = (cpu_time() - idle_from.1).as_secs_f64() / idle_from.0.elapsed().as_secs_f64();
    println!(
        "{clusters} agents' polls parked (agents in process {}): {:.1} KiB of the server's resident set each; \
         opening them took {:.2} s of server CPU; idle, the server used {:.1} % of a core",
        child.id(),
        per_poll / 1024.0,
        cpu_opening.as_secs_f64(),
        idle_cpu * 100.0
    );

    if std::env::var("PULL_IDLE_CONNECTIONS").is_ok() {
        drop(child.stdin.take());
        child.wait().unwrap();
        return;
    }
    // An order every ORDER_EVERY, each to another cluster, written as rsync writes it.
    let contexts = AppContexts::new(store.clone());
    let mut writes: Vec<(String, u64, i64)> = Vec::with_capacity(orders);
    let mut tick = tokio::time::interval(ORDER_EVERY);
    let cpu_before = cpu_time();
    let started = Instant::now();
    for order in 0..orders {
        tick.tick().await;
        let name = &names[(order * 7919) % clusters];
        let cluster = format!("{PROVIDER}+{name}");
        let mut seq = 0;
        contexts
            .update_cluster(context, "web", &cluster, |record| {
                seq = record.agent_order.as_ref().map_or(1, |order| order.seq + 1);
                record.agent_order = Some(Box::new(AgentOrder {
                    seq,
                    operation: AgentOperation::Apply,
                    other: None,
                    label: format!("{context}-web"),
                    namespace: "default".into(),
                    apply_as: None,
                    issued_at: emco_model::now_timestamp(),
                    outcome: None,
                }));
            })
            .await
            .unwrap();
        writes.push((name.clone(), seq, now_micros()));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cpu = (cpu_time() - cpu_before).as_secs_f64() / started.elapsed().as_secs_f64();

    drop(child.stdin.take());
    let received = tokio::task::spawn_blocking(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut child_out, &mut text).unwrap();
        text
    })
    .await
    .unwrap();
    child.wait().unwrap();
    let arrivals: std::collections::HashMap<(String, u64), i64> = received
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            Some((
                (fields.next()?.to_string(), fields.next()?.parse().ok()?),
                fields.next()?.parse().ok()?,
            ))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut missed = 0;
    for (name, seq, written) in &writes {
        match arrivals.get(&(name.clone(), *seq)) {
            Some(arrived) => latencies.push(Duration::from_micros((arrived - written).max(0) as u64)),
            None => missed += 1,
        }
    }
    latencies.sort();
    println!(
        "{orders} orders, one every {} ms: order → its agent p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {missed} \
         never arrived; server CPU {:.1} % of a core",
        ORDER_EVERY.as_millis(),
        percentile(&latencies, 0.5).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
        cpu * 100.0
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    match std::env::var("PULL_AGENTS_OF") {
        Ok(address) => runtime.block_on(agents_of(&address)),
        Err(_) => runtime.block_on(run()),
    }
}
