//! Live status streams end to end (issue #19 §1, §2): a DIG's status as server-sent events while a pod fails in
//! kubesim, `Last-Event-ID` resuming, parameters refused before a stream starts, `/v2/events` seeing the DIG
//! instantiated, authentication by bearer header and by a stream token (a real token in the URL refused), the
//! limit on open streams, streams ending at shutdown, and `emcoctl status --watch --until ready` on the streams.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_server::{Server, ServerConfig, TokenAuth};
use emcoctl::client::EmcoClient;
use emcoctl::sse::{BodyEvents, Event, EventReader};
use emcoctl::status::{WatchEnd, WatchOptions};
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(30);
const READY: &str = "status=ready&readiness&app=sink";

/// An open stream.
struct Stream {
    events: BodyEvents,
}

impl Stream {
    /// The next event (not a keep-alive); panics when the stream ends or nothing comes within [`SETTLE`].
    async fn next(&mut self) -> Event {
        tokio::time::timeout(SETTLE, self.events.next_event())
            .await
            .expect("an event in time")
            .expect("a readable stream")
            .expect("the stream goes on")
    }

    /// The next `status` event: its id (a store revision) and answer.
    async fn next_status(&mut self) -> (i64, Json) {
        let event = self.next().await;
        assert_eq!(event.name, "status", "{event:?}");
        let id = event.id.as_deref().unwrap().parse().unwrap();
        (id, serde_json::from_str(&event.data).unwrap())
    }
}

/// GETs `path` as a stream: 200 and the stream, or the status and the error answer.
async fn open(client: &EmcoClient, path: &str, last_event_id: Option<&str>) -> Result<Stream, (u16, Json)> {
    let reply = client.stream(path, last_event_id).await.unwrap();
    let mut events = EventReader::new(reply.body);
    if reply.status == 200 {
        return Ok(Stream { events });
    }
    let text = events.remaining_text().await.unwrap().unwrap_or_default();
    Err((
        reply.status,
        serde_json::from_str(&text).unwrap_or(Json::String(text)),
    ))
}

async fn open_ok(client: &EmcoClient, path: &str, last_event_id: Option<&str>) -> Stream {
    match open(client, path, last_event_id).await {
        Ok(stream) => stream,
        Err((status, answer)) => panic!("{path}: {status} {answer}"),
    }
}

fn client_of(emco: &Emco) -> EmcoClient {
    EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap()
}

/// Makes the sink's pods crash (`kubesim.io/fail`), or heal when `reason` is `None`.
async fn set_sink_failure(cluster: &kubesim::SimCluster, reason: Option<&str>) {
    Api::<Deployment>::namespaced(cluster.client().unwrap(), "default")
        .patch(
            "fw0-sink",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"template": {"metadata": {"annotations": {"kubesim.io/fail": reason}}}}}),
            ),
        )
        .await
        .unwrap();
}

fn crashing(answer: &Json) -> bool {
    answer["readiness"]["message"]
        .as_str()
        .is_some_and(|message| message.contains("CrashLoopBackOff"))
}

/// Reads status events until one satisfies `done`, checking on the way that ids only grow and every event
/// differs from the one before; returns the last id and answer.
async fn read_until(
    stream: &mut Stream,
    mut previous: (i64, Json),
    done: impl Fn(&Json) -> bool,
) -> (i64, Json) {
    loop {
        let (id, answer) = stream.next_status().await;
        assert!(id > previous.0, "ids grow: {id} after {}", previous.0);
        assert_ne!(answer, previous.1, "an event only when the answer changed");
        previous = (id, answer);
        if done(&previous.1) {
            return previous;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_stream_follows_a_failing_pod_resumes_and_drives_emcoctl_watch() {
    let sim = vfw_clusters(1).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let client = client_of(&emco);
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    let path = format!("{DIG}/status?{READY}");

    // Bad parameters are refused before any stream starts; so is a filter naming an app that does not exist.
    for bad in [
        format!("{DIG}/status?type=bogus"),
        format!("{DIG}/status?watch=maybe"),
    ] {
        let (status, answer) = open(&client, &bad, None).await.err().unwrap();
        assert_eq!(status, 400, "{bad}: {answer}");
        assert_eq!(answer["code"], "InvalidQuery", "{bad}: {answer}");
    }
    let missing = format!("{DIG}/status?app=nosuchapp");
    let (status, answer) = open(&client, &missing, None).await.err().unwrap();
    assert_eq!(
        (status, answer["code"].as_str()),
        (404, Some("NotFound")),
        "{answer}"
    );
    let (status, answer) = open(&client, &path, Some("yesterday")).await.err().unwrap();
    assert_eq!(
        (status, &answer["code"]),
        (400, &json!("InvalidQuery")),
        "{answer}"
    );
    let (status, _) = open(&client, &format!("{DIG}x/status"), None)
        .await
        .err()
        .unwrap();
    assert_eq!(status, 404);

    // emcoctl watches the instantiation on the streams until every cluster is ready.
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let mut printed = Vec::new();
    let end = emcoctl::status::watch(
        &client,
        DIG,
        "",
        &WatchOptions {
            until: Some("ready".into()),
            timeout: SETTLE,
            terminal: false,
        },
        &mut printed,
    )
    .await
    .unwrap();
    let printed = String::from_utf8(printed).unwrap();
    assert_eq!(end, WatchEnd::Reached, "{printed}");
    let last_line = printed.lines().last().unwrap();
    assert!(last_line.starts_with("1/1 clusters ready · "), "{printed}");

    // The stream's first event is the current answer.
    let before = emco.http.get(&path).await.expect(200).json();
    let mut stream = open_ok(&client, &path, None).await;
    let first = stream.next_status().await;
    let after = emco.http.get(&path).await.expect(200).json();
    assert!(first.1 == before || first.1 == after, "{} vs {before}", first.1);
    assert_eq!(first.1["readyStatus"], "Ready");
    let watch_query = open_ok(&client, &format!("{DIG}/status?watch=true&{READY}"), None)
        .await
        .next_status()
        .await;
    assert_eq!(
        watch_query.1["readyStatus"], "Ready",
        "?watch=true streams as the header does"
    );

    // A pod fails: a changed answer arrives without asking.
    let cluster = &sim.clusters()[0];
    set_sink_failure(cluster, Some("CrashLoopBackOff")).await;
    let failing = read_until(&mut stream, first.clone(), crashing).await;

    // emcoctl --until ready stops at the failure, not at the timeout.
    let end = emcoctl::status::watch(
        &client,
        DIG,
        "app=sink",
        &WatchOptions {
            until: Some("ready".into()),
            timeout: SETTLE,
            terminal: false,
        },
        &mut Vec::new(),
    )
    .await
    .unwrap();
    assert!(
        matches!(&end, WatchEnd::Failed(why) if why.contains("CrashLoopBackOff")),
        "{end:?}"
    );

    // Resuming from an older event gets the current answer at once.
    let mut resumed = open_ok(&client, &path, Some(&first.0.to_string())).await;
    let (id, answer) = resumed.next_status().await;
    assert!(id >= failing.0 && crashing(&answer), "{id} {answer}");
    // Resuming from the newest event waits for the next change: the pods heal.
    let mut caught_up = open_ok(&client, &path, Some(&id.to_string())).await;
    set_sink_failure(cluster, None).await;
    let (next_id, _) = caught_up.next_status().await;
    assert!(
        next_id > id,
        "not the answer the client has: {next_id} after {id}"
    );
    let healed = read_until(&mut stream, failing, |answer| answer["readyStatus"] == "Ready").await;
    assert_eq!(healed.1["readyStatus"], "Ready");
    drop(caught_up);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_sees_the_dig_instantiated_and_replays_from_an_id() {
    let sim = vfw_clusters(1).await;
    let emco = Emco::start().await;
    let client = client_of(&emco);
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    let mut events = open_ok(&client, "/v2/events?project=testvfw", None).await;
    let hello = events.next().await;
    assert_eq!(hello.name, "hello");
    let hello_id: i64 = hello.id.as_deref().unwrap().parse().unwrap();
    assert_eq!(
        serde_json::from_str::<Json>(&hello.data).unwrap()["revision"],
        hello_id
    );
    let mut elsewhere = open_ok(&client, "/v2/events?project=other", None).await;
    assert_eq!(elsewhere.next().await.name, "hello");

    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let instantiated = loop {
        let event = events.next().await;
        assert_eq!(event.name, "lifecycle", "{event:?}");
        let data: Json = serde_json::from_str(&event.data).unwrap();
        assert_eq!(data["revision"].to_string(), event.id.clone().unwrap());
        if data["state"] == "Instantiated" {
            break data;
        }
    };
    assert_eq!(
        (
            &instantiated["kind"],
            &instantiated["project"],
            &instantiated["compositeApp"],
            &instantiated["version"],
            &instantiated["name"]
        ),
        (
            &json!("deploymentIntentGroup"),
            &json!("testvfw"),
            &json!("compositevfw"),
            &json!("v1"),
            &json!("vfw_deployment_intent_group")
        )
    );
    assert!(instantiated["time"].as_str().is_some_and(|t| t.ends_with('Z')));

    // Resuming from the hello replays the change.
    let mut replay = open_ok(&client, "/v2/events", Some(&hello_id.to_string())).await;
    assert_eq!(replay.next().await.name, "hello");
    let replayed = loop {
        let event = replay.next().await;
        let data: Json = serde_json::from_str(&event.data).unwrap();
        if data["state"] == "Instantiated" {
            break data;
        }
    };
    assert_eq!(replayed, instantiated);

    let (status, answer) = open(&client, "/v2/events?colour=red", None).await.err().unwrap();
    assert_eq!(
        (status, &answer["code"]),
        (400, &json!("InvalidQuery")),
        "{answer}"
    );
    drop(elsewhere);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_need_a_bearer_header_or_a_stream_token_never_a_real_token_in_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.csv");
    std::fs::write(
        &file,
        "admin-secret,admin,1,emco:admin\nviewer-secret,vera,2,emco:viewer\n",
    )
    .unwrap();
    let emco = Emco::start_with_configs(
        emco_store::Store::memory(),
        test_rsync_config(),
        ServerConfig {
            token_auth: Some(TokenAuth::load(&file).unwrap()),
            ..ServerConfig::default()
        },
    )
    .await;
    let anonymous = client_of(&emco);
    let viewer = client_of(&emco).with_token("viewer-secret").unwrap();

    let (status, _) = open(&anonymous, "/v2/events", None).await.err().unwrap();
    assert_eq!(status, 401, "no token");
    assert_eq!(
        open_ok(&viewer, "/v2/events", None).await.next().await.name,
        "hello"
    );

    // A viewer may mint a stream token; it opens a stream without any header.
    let minted = viewer
        .send("POST", "/v2/tokens/stream", true, emcoctl::client::Body::Empty)
        .await
        .unwrap();
    assert_eq!(minted.status, 201, "{}", minted.text());
    let minted: Json = serde_json::from_slice(&minted.body).unwrap();
    let token = minted["token"].as_str().unwrap();
    assert!(minted["expiresAt"].as_str().unwrap().ends_with('Z'), "{minted}");
    let with_token = format!("/v2/events?access_token={token}");
    assert_eq!(
        open_ok(&anonymous, &with_token, None).await.next().await.name,
        "hello"
    );
    // A status stream authenticated by it gets as far as the (missing) DIG.
    let (status, _) = open(
        &anonymous,
        &format!("{DIG}/status?watch=true&access_token={token}"),
        None,
    )
    .await
    .err()
    .unwrap();
    assert_eq!(status, 404);

    // Not on a request that is no stream, and a real token never in a URL.
    let plain = emco.http.get(&format!("/v2/projects?access_token={token}")).await;
    assert_eq!(plain.status, 401, "{}", String::from_utf8_lossy(&plain.body));
    let (status, answer) = open(&anonymous, "/v2/events?access_token=admin-secret", None)
        .await
        .err()
        .unwrap();
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains("stream token"),
        "{answer}"
    );
    let (status, _) = open(&anonymous, "/v2/events?access_token=forged", None)
        .await
        .err()
        .unwrap();
    assert_eq!(status, 401);
    let refused = anonymous
        .send("POST", "/v2/tokens/stream", true, emcoctl::client::Body::Empty)
        .await
        .unwrap();
    assert_eq!(refused.status, 401, "minting needs a real token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_are_limited_and_end_at_shutdown() {
    let server = Server::new(
        emco_store::Store::memory(),
        None,
        ServerConfig {
            max_streams: 2,
            ..ServerConfig::default()
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(listener, async {
        let _ = stopped.await;
    }));
    let client = EmcoClient::new(&format!("http://{address}")).unwrap();
    let mut first = open_ok(&client, "/v2/events", None).await;
    let mut second = open_ok(&client, "/v2/events", None).await;
    assert_eq!(first.next().await.name, "hello");
    assert_eq!(second.next().await.name, "hello");
    let (status, answer) = open(&client, "/v2/events", None).await.err().unwrap();
    assert_eq!(
        (status, &answer["code"]),
        (503, &json!("TooManyStreams")),
        "{answer}"
    );

    // A stream that ends gives its place back.
    drop(second);
    let deadline = tokio::time::Instant::now() + SETTLE;
    let mut third = loop {
        match open(&client, "/v2/events", None).await {
            Ok(stream) => break stream,
            Err((503, _)) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err((status, answer)) => panic!("{status} {answer}"),
        }
    };
    assert_eq!(third.next().await.name, "hello");

    // Shutdown ends the open streams, and the server stops although they were open.
    stop.send(()).unwrap();
    for stream in [&mut first, &mut third] {
        let end = tokio::time::timeout(SETTLE, stream.events.next_event())
            .await
            .expect("the stream ends at shutdown");
        assert!(matches!(end, Ok(None) | Err(_)), "{end:?}");
    }
    tokio::time::timeout(SETTLE, serving)
        .await
        .expect("the server stops with streams open")
        .unwrap()
        .unwrap();
}
