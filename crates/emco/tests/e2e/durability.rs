//! What the API acknowledged survives a SIGKILL: `emco serve` on its embedded store, killed in the middle of an
//! instantiation while clients keep creating objects, keeps after its restart every object it answered 201 for
//! (the store commits many callers' writes together and answers each only once the group is durable).

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::rsync::{SlowInstantiation, start_emco_process, start_slow_instantiation};
use crate::support::counts;

/// Clients creating projects at once (enough for the store to commit their writes in groups).
const WRITERS: usize = 8;

/// POSTs `body` to `path` on `address`; the answer's status, or `None` when no complete answer came (the server
/// died before answering).
async fn try_post(address: std::net::SocketAddr, path: &str, body: &str) -> Option<u16> {
    let mut stream = tokio::net::TcpStream::connect(address).await.ok()?;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.ok()?;
    stream.write_all(body.as_bytes()).await.ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.ok()?;
    let text = String::from_utf8_lossy(&response);
    if !text.contains("\r\n\r\n") {
        return None;
    }
    text.split_whitespace().nth(1)?.parse().ok()
}

/// Creates projects `ack-{writer}-{n}` one after the other until the server stops answering; returns the names it
/// answered 201 for.
async fn create_projects(address: std::net::SocketAddr, writer: usize) -> Vec<String> {
    let mut acknowledged = Vec::new();
    for n in 0.. {
        let name = format!("ack-{writer}-{n}");
        let body = json!({"metadata": {"name": name, "description": "created during an instantiation"}});
        match try_post(address, "/v2/projects", &body.to_string()).await {
            Some(201) => acknowledged.push(name),
            Some(status) => panic!("creating {name}: {status}"),
            None => break,
        }
    }
    acknowledged
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_the_api_acknowledged_before_a_sigkill_survives_it() {
    const CLUSTERS: usize = 20;
    let SlowInstantiation {
        sim: _sim,
        data,
        port,
        http,
        mut emco,
    } = start_slow_instantiation(CLUSTERS, 100).await;
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| tokio::spawn(create_projects(http.address, writer)))
        .collect();
    // Killed while rsync records its progress and the clients' projects are being written.
    let total = CLUSTERS as u64 * 6;
    let partial = http
        .wait_for("?output=summary", Duration::from_secs(60), |a| {
            let applied = counts(a)["Applied"].as_u64().unwrap_or(0);
            applied >= total / 4 && applied < total
        })
        .await;
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();
    assert_eq!(partial["status"], "Instantiating");
    let mut acknowledged = Vec::new();
    for writer in writers {
        acknowledged.extend(writer.await.unwrap());
    }
    assert!(
        acknowledged.len() >= WRITERS,
        "every client had a project acknowledged before the kill: {acknowledged:?}"
    );

    let mut emco = start_emco_process(data.path(), port).await;
    let projects = http.get("/v2/projects").await.expect(200).json();
    let stored: std::collections::HashSet<&str> = projects
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|project| project["metadata"]["name"].as_str())
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|name| !stored.contains(name.as_str()))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged projects lost, e.g. {:?}",
        lost.len(),
        acknowledged.len(),
        &lost[..lost.len().min(5)]
    );
    // The instantiation killed halfway goes on to its end.
    let done = http
        .wait_for("?output=summary", Duration::from_secs(90), |a| {
            a["status"] == "Instantiated"
        })
        .await;
    assert_eq!(counts(&done), json!({"Applied": total}));
    emco.start_kill().unwrap();
}
