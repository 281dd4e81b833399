//! Progressive rollouts against kubesim (issue #20 §4): the vFW example on 20 clusters updated in batches of 5
//! while three clusters of the second batch refuse Deployments — the rollout pauses after that batch and names
//! them, later batches get no write, `emcoctl resume` finishes it and a rollback from the paused rollout restores the
//! reached clusters in place without writing to the others; an instantiation in batches survives a SIGKILL while
//! paused and goes on at its next batch after `/resume`, and one killed between two batches goes on at the next
//! batch after its restart; a paused rollout is stopped and terminated.

use std::time::{Duration, Instant};

use kubesim::Faults;
use serde_json::{Value as Json, json};

use crate::support::*;
use crate::updates::{deployment, put_dig, replicas, uid, writes_since};

const SETTLE: Duration = Duration::from_secs(90);
const PROVIDER: &str = "vfw-cluster-provider";

/// The rollout of these tests: batches of 5, every batch ready before the next, more than 5% failed pauses.
fn in_batches_of_5() -> Json {
    json!({"batchSize": 5, "waitForReady": true, "failureThreshold": "5%", "readyTimeout": "60s"})
}

/// `provider+cluster` of each cluster.
fn names(clusters: &[kubesim::SimCluster]) -> Vec<String> {
    clusters
        .iter()
        .map(|cluster| format!("{PROVIDER}+{}", cluster.name()))
        .collect()
}

async fn reject_deployments(clusters: &[kubesim::SimCluster], reject: bool) {
    for cluster in clusters {
        let faults = Faults {
            reject_kinds: if reject {
                vec!["Deployment".into()]
            } else {
                Vec::new()
            },
            ..Faults::default()
        };
        cluster.set_faults(faults).await.unwrap();
    }
}

/// No write reached the vFW's objects on `cluster` since `since`.
fn assert_untouched_since(cluster: &kubesim::SimCluster, since: Instant) {
    assert_eq!(
        writes_since(cluster, since),
        Vec::<String>::new(),
        "{}",
        cluster.name()
    );
}

async fn sink_replicas(cluster: &kubesim::SimCluster) -> Option<i32> {
    replicas(&deployment(cluster, "fw0-sink").await.unwrap())
}

/// The vFW on every cluster, instantiated at once (no rollout yet): its first context.
async fn instantiated_everywhere(http: &Http, sim: &kubesim::Simulator) -> String {
    onboard_vfw(http, &kubeconfigs(sim)).await;
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    let done = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    last_context(&done)
}

/// Updates the sink to 2 replicas in batches of 5 while edge06–edge08 (the second batch) refuse Deployments, and
/// waits for the pause: the summary answer then.
async fn paused_update(http: &Http, sim: &kubesim::Simulator) -> Json {
    reject_deployments(&sim.clusters()[5..8], true).await;
    put_dig(http, 2, Some(in_batches_of_5())).await;
    let reply = http.post_empty(&format!("{DIG}/update")).await.expect(202);
    assert_eq!(reply.json(), json!(2));
    http.wait_for("?output=summary", SETTLE, |a| a["rollout"]["state"] == "Paused")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progressive_update_pauses_past_its_threshold_names_the_failures_and_resumes() {
    let sim = vfw_clusters(20).await;
    let _monitors = start_monitors(&sim);
    let clusters = sim.clusters();
    let emco = Emco::start().await;
    let http = &emco.http;
    let first = instantiated_everywhere(http, &sim).await;
    let before_update = Instant::now();
    let paused = paused_update(http, &sim).await;

    // Paused after the second batch, the three failures named; the context is still instantiating.
    assert_eq!(paused["status"], "Instantiating", "{paused}");
    assert_eq!(
        paused["rollout"],
        json!({"state": "Paused", "batch": 2, "batches": 4, "clustersUpdated": 7, "clusters": 20,
               "failed": names(&clusters[5..8]),
               "summary": "batch 2/4, 7/20 clusters updated, 3 failed (paused)"}),
        "{paused}"
    );
    for cluster in clusters[..5].iter().chain(&clusters[8..10]) {
        assert_eq!(sink_replicas(cluster).await, Some(2), "{}", cluster.name());
    }
    for cluster in &clusters[5..8] {
        assert_eq!(
            sink_replicas(cluster).await,
            Some(1),
            "{} refused it",
            cluster.name()
        );
    }
    // The batches after the pause were not touched at all.
    for cluster in &clusters[10..] {
        assert_untouched_since(cluster, before_update);
        assert_eq!(sink_replicas(cluster).await, Some(1));
    }
    // The full answer says the same; emco keeps the old revision's objects where the rollout has not been.
    let full = http.get(&format!("{DIG}/status")).await.expect(200).json();
    assert_eq!(full["rollout"], paused["rollout"], "{full}");
    // The clusters the rollout has not reached say what they wait for: a /resume.
    let deployed = http
        .get(&format!("{DIG}/status?status=deployed&app=sink"))
        .await
        .expect(200)
        .json();
    let waiting: Vec<(String, String)> = deployed["apps"][0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            Some((
                c["cluster"].as_str()?.to_string(),
                c["waiting"]["for"].as_str()?.to_string(),
            ))
        })
        .collect();
    assert_eq!(
        waiting
            .iter()
            .map(|(cluster, _)| cluster.clone())
            .collect::<Vec<_>>(),
        clusters[10..]
            .iter()
            .map(|c| c.name().to_string())
            .collect::<Vec<_>>(),
        "{deployed}"
    );
    assert!(
        waiting.iter().all(|(_, what)| what
            .starts_with("a /resume of the rollout, paused after batch 2 of 4 with 3 failed clusters")),
        "{waiting:?}"
    );

    // Resume: the failures are accepted, the last two batches go out, and the update ends failed on the three.
    let client = emcoctl::client::EmcoClient::new(&format!("http://{}", http.address)).unwrap();
    let mut out = Vec::new();
    let names_dig = "testvfw/compositevfw/v1/vfw_deployment_intent_group";
    assert!(
        emcoctl::commands::resume_dig(&client, names_dig, &mut out)
            .await
            .unwrap()
    );
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(&format!("POST  --> URL: http://{}{DIG}/resume", http.address))
            && out.contains("Response Code: 202"),
        "{out}"
    );
    let done = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] != "Instantiating")
        .await;
    assert_eq!(done["status"], "InstantiateFailed", "{done}");
    assert_eq!(
        done["rollout"]["summary"], "batch 4/4, 17/20 clusters updated, 3 failed",
        "{done}"
    );
    for cluster in &clusters[10..] {
        assert_eq!(sink_replicas(cluster).await, Some(2), "{}", cluster.name());
    }
    // Nothing is paused any more.
    let refused = http.post_empty(&format!("{DIG}/resume")).await.expect(409).json();
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("there is no paused rollout to resume"),
        "{refused}"
    );
    // The old revision keeps what the failed update did not take over, as any failed update leaves it.
    http.wait_until(
        &format!("{DIG}/status?output=summary&instance={first}"),
        SETTLE,
        |a| a["status"] == "UpdateFailed",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_rollout_rolls_back_where_it_reached_and_writes_nowhere_else() {
    let sim = vfw_clusters(20).await;
    let _monitors = start_monitors(&sim);
    let clusters = sim.clusters();
    let emco = Emco::start().await;
    let http = &emco.http;
    instantiated_everywhere(http, &sim).await;
    let mut uids = Vec::new();
    for cluster in clusters {
        uids.push(uid(&deployment(cluster, "fw0-sink").await.unwrap()));
    }
    let paused = paused_update(http, &sim).await;
    let second = last_context(&paused);
    reject_deployments(&clusters[5..8], false).await;

    let before_rollback = Instant::now();
    let reply = http
        .post(
            &format!("{DIG}/rollback"),
            json!({"metadata": {"description": ""}, "spec": {"revision": "1"}}),
        )
        .await
        .expect(202);
    assert_eq!(reply.json(), json!(3));
    http.wait_until(
        &format!("{DIG}/status?output=summary&instance={second}"),
        SETTLE,
        |a| a["status"] == "Updated",
    )
    .await;
    let done = http
        .wait_for("?output=summary", SETTLE, |a| {
            a["status"] == "Instantiated" && last_context(a) != second
        })
        .await;
    assert_eq!(
        done["rollout"]["summary"], "batch 4/4, 20/20 clusters updated, 0 failed",
        "{done}"
    );
    // Where the paused rollout reached, the old value is back in place (same object).
    for (cluster, before) in clusters[..10].iter().zip(&uids) {
        let sink = deployment(cluster, "fw0-sink").await.unwrap();
        assert_eq!(
            (uid(&sink), replicas(&sink)),
            (before.clone(), Some(1)),
            "{}",
            cluster.name()
        );
    }
    // Where it never went, the rollback wrote nothing either.
    for (cluster, before) in clusters[10..].iter().zip(&uids[10..]) {
        assert_untouched_since(cluster, before_rollback);
        assert_eq!(uid(&deployment(cluster, "fw0-sink").await.unwrap()), *before);
    }
    http.wait_for("?status=ready&output=summary", SETTLE, |a| {
        a["readyStatus"] == "Ready"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instantiation_in_batches_stays_paused_across_a_sigkill_and_resumes_at_its_next_batch() {
    let sim = vfw_clusters(10).await;
    let _monitors = start_monitors(&sim);
    let clusters = sim.clusters();
    let data = tempfile::tempdir().unwrap();
    let port = crate::rsync::free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    onboard_vfw(&http, &kubeconfigs(&sim)).await;
    put_dig(&http, 1, Some(in_batches_of_5())).await;
    http.post_empty(&format!("{DIG}/approve")).await.expect(202);
    reject_deployments(&clusters[2..3], true).await;
    let started = Instant::now();
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    let paused = http
        .wait_for("?output=summary", SETTLE, |a| a["rollout"]["state"] == "Paused")
        .await;
    assert_eq!(
        paused["rollout"]["summary"], "batch 1/2, 4/10 clusters updated, 1 failed (paused)",
        "{paused}"
    );
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();
    reject_deployments(&clusters[2..3], false).await;

    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    // Still paused after the restart: nothing went to the second batch.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after_restart = http
        .get(&format!("{DIG}/status?output=summary"))
        .await
        .expect(200)
        .json();
    assert_eq!(after_restart["rollout"], paused["rollout"], "{after_restart}");
    for cluster in &clusters[5..] {
        assert_untouched_since(cluster, started);
    }
    let before_resume = Instant::now();
    http.post_empty(&format!("{DIG}/resume")).await.expect(202);
    let done = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] != "Instantiating")
        .await;
    assert_eq!(
        (&done["status"], &done["rollout"]["summary"]),
        (
            &json!("InstantiateFailed"),
            &json!("batch 2/2, 9/10 clusters updated, 1 failed")
        ),
        "{done}"
    );
    // The first batch was not applied again; the second got everything.
    for cluster in &clusters[..5] {
        assert_untouched_since(cluster, before_resume);
    }
    for cluster in &clusters[5..] {
        assert_eq!(sink_replicas(cluster).await, Some(1), "{}", cluster.name());
    }
    emco.start_kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_rollout_is_stopped_and_terminated() {
    let sim = vfw_clusters(10).await;
    let _monitors = start_monitors(&sim);
    let clusters = sim.clusters();
    let emco = Emco::start().await;
    let http = &emco.http;
    onboard_vfw(http, &kubeconfigs(&sim)).await;
    put_dig(http, 1, Some(in_batches_of_5())).await;
    http.post_empty(&format!("{DIG}/approve")).await.expect(202);
    reject_deployments(&clusters[..1], true).await;
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    http.wait_for("?output=summary", SETTLE, |a| a["rollout"]["state"] == "Paused")
        .await;

    http.post_empty(&format!("{DIG}/stop")).await.expect(202);
    let stopped = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "InstantiateFailed")
        .await;
    assert_eq!(
        stopped["rollout"]["summary"], "batch 1/2, 4/10 clusters updated, 1 failed (paused)",
        "{stopped}"
    );
    let actions = stopped["state"]["Actions"].as_array().unwrap();
    assert_eq!(
        actions.last().unwrap()["State"],
        "InstantiateStopped",
        "{stopped}"
    );
    http.post_empty(&format!("{DIG}/resume")).await.expect(409);

    http.post_empty(&format!("{DIG}/terminate")).await.expect(202);
    http.wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    for cluster in clusters {
        assert!(
            deployment(cluster, "fw0-sink").await.is_none(),
            "{}",
            cluster.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_rollout_killed_between_batches_goes_on_at_its_next_batch() {
    let sim = vfw_clusters(10).await;
    let _monitors = start_monitors(&sim);
    let clusters = sim.clusters();
    let data = tempfile::tempdir().unwrap();
    let port = crate::rsync::free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    onboard_vfw(&http, &kubeconfigs(&sim)).await;
    let mut rollout = in_batches_of_5();
    rollout["pauseBetweenBatches"] = json!("4s");
    put_dig(&http, 1, Some(rollout)).await;
    http.post_empty(&format!("{DIG}/approve")).await.expect(202);
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    // The first batch is done and recorded; the second waits out the pause.
    let between = http
        .wait_for("?output=summary", SETTLE, |a| {
            a["rollout"]["clustersUpdated"] == 5
        })
        .await;
    assert_eq!(
        (&between["rollout"]["state"], &between["rollout"]["batch"]),
        (&json!("Running"), &json!(2)),
        "{between}"
    );
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();
    let killed = Instant::now();

    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    let done = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] != "Instantiating")
        .await;
    assert_eq!(
        (&done["status"], &done["rollout"]["summary"]),
        (
            &json!("Instantiated"),
            &json!("batch 2/2, 10/10 clusters updated, 0 failed")
        ),
        "{done}"
    );
    for cluster in &clusters[..5] {
        assert_untouched_since(cluster, killed);
    }
    for cluster in &clusters[5..] {
        assert_eq!(sink_replicas(cluster).await, Some(1), "{}", cluster.name());
    }
    emco.start_kill().unwrap();
}
