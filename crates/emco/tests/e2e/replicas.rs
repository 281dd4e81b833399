//! Several `emco serve` processes on one etcd: the replica that owns a 50-cluster instantiation is killed with
//! SIGKILL and another finishes it within the takeover deadline, every object applied once; the owner paused
//! with SIGSTOP past its lease and continued writes nothing more for the context; `GET /v2/replicas` lists every
//! replica with its lease and work, and every replica answers the same status; cluster status watchers spread
//! over the replicas; a replica restarted on its address takes its work back at once; a pull cluster's agent is
//! served by a replica that does not own the instantiation, then by another once that one is gone. Skips (with a note) when no
//! `etcd` binary is installed, unless `EMCO_REQUIRE_ETCD=1`.

use std::time::{Duration, Instant};

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_store::Store;
use emco_store::etcd_testing::EtcdServer;
use kube::api::{Api, ListParams};
use serde_json::{Value as Json, json};

use crate::support::{
    DIG, Http, ServeProcess, counts, kubeconfigs, last_context, onboard_vfw, slow_down, vfw_clusters,
};

/// The etcd key prefix of these tests.
const PREFIX: &str = "/replicas-e2e";
/// The lease of the replicas in these tests (the default is 5 s).
const LEASE_TTL: &str = "3s";
/// The longest a takeover may take after the owner died: the lease's time to live plus detection.
const TAKEOVER_DEADLINE: Duration = Duration::from_secs(10);
/// How long an instantiation may take to settle.
const SETTLE: Duration = Duration::from_secs(120);

/// etcd for replicas: an instantiation writes one record per (app, cluster) in one transaction.
async fn etcd() -> Option<EtcdServer> {
    EtcdServer::start_with(&["--max-txn-ops=2000"]).await.unwrap()
}

/// `count` `emco serve` processes on `etcd`, each with its own port and log.
async fn start_replicas(etcd: &EtcdServer, count: usize) -> Vec<ServeProcess> {
    let mut replicas = Vec::with_capacity(count);
    for _ in 0..count {
        replicas.push(
            ServeProcess::start_on(
                &["--etcd-endpoints", etcd.endpoint(), "--etcd-prefix", PREFIX],
                &["--lease-ttl", LEASE_TTL],
                None,
            )
            .await,
        );
    }
    replicas
}

fn http(replica: &ServeProcess) -> Http {
    Http {
        address: replica.address(),
    }
}

fn signal(replica: &ServeProcess, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &replica.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {}", replica.pid());
}

/// The replica (by id) owning context `id` in a `GET /v2/replicas` answer.
fn owner_of(replicas: &Json, id: &str) -> Option<String> {
    replicas.as_array()?.iter().find_map(|replica| {
        replica["owns"]["contexts"]
            .as_array()?
            .iter()
            .any(|owned| owned == id)
            .then(|| replica["id"].as_str().unwrap_or_default().to_string())
    })
}

/// Waits until `done` holds for the answer of `GET /v2/replicas`, returning it and how long it took.
async fn wait_for_replicas(
    http: &Http,
    deadline: Duration,
    done: impl Fn(&Json) -> bool,
) -> (Json, Duration) {
    let start = Instant::now();
    loop {
        let answer = http.get("/v2/replicas").await.expect(200).json();
        if done(&answer) {
            return (answer, start.elapsed());
        }
        assert!(start.elapsed() < deadline, "timed out; last answer: {answer}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every deployment of every cluster: three per cluster, each at generation 1 (applied once, never changed).
async fn assert_applied_once(sim: &kubesim::Simulator) {
    for cluster in sim.clusters() {
        let deployments = Api::<Deployment>::namespaced(cluster.client().unwrap(), "default")
            .list(&ListParams::default().labels("emco/deployment-id"))
            .await
            .unwrap()
            .items;
        assert_eq!(deployments.len(), 3, "{}", cluster.name());
        for deployment in &deployments {
            assert_eq!(
                deployment.metadata.generation,
                Some(1),
                "{} {:?}",
                cluster.name(),
                deployment.metadata.name
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_the_owner_of_a_50_cluster_instantiation_hands_it_to_another_replica() {
    let Some(etcd) = etcd().await else {
        return;
    };
    const CLUSTERS: usize = 50;
    let sim = vfw_clusters(CLUSTERS).await;
    slow_down(&sim, 150).await;
    let replicas = start_replicas(&etcd, 3).await;
    let (first, others) = (&replicas[0], &replicas[1..]);
    onboard_vfw(&http(first), &kubeconfigs(&sim)).await;
    http(first)
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let total = CLUSTERS as u64 * 6;
    let partial = http(first)
        .wait_for("?output=summary", SETTLE, |a| {
            let applied = counts(a)["Applied"].as_u64().unwrap_or(0);
            applied > 0 && applied < total
        })
        .await;
    let id = last_context(&partial);
    // The replica that received the call owns the context; every replica says so.
    let (listed, _) = wait_for_replicas(&http(&others[0]), SETTLE, |r| owner_of(r, &id).is_some()).await;
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");
    let killed = owner_of(&listed, &id).unwrap();
    let first_id = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == first.address().to_string())
        .map(|r| r["id"].as_str().unwrap().to_string())
        .unwrap();
    assert_eq!(
        killed,
        first_id,
        "{listed}\n{}",
        replicas
            .iter()
            .map(ServeProcess::log)
            .collect::<Vec<_>>()
            .join("\n-----\n")
    );
    for replica in listed.as_array().unwrap() {
        assert_eq!(replica["lease"]["ttlSeconds"], 3, "{replica}");
        assert!(replica["startedAt"].is_string());
    }

    signal(first, "KILL");
    let (after, took) = wait_for_replicas(&http(&others[0]), TAKEOVER_DEADLINE, |r| {
        owner_of(r, &id).is_some_and(|owner| owner != killed)
    })
    .await;
    println!("takeover of a 50-cluster instantiation after SIGKILL of its owner: {took:?}");
    assert!(took <= TAKEOVER_DEADLINE);
    assert!(
        after
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["id"] != killed.as_str()),
        "the killed replica left the list: {after}"
    );

    let done = http(&others[0])
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": total}));
    assert_applied_once(&sim).await;
    // Every replica answers the same status.
    let summaries = [http(&others[0]).summary().await, http(&others[1]).summary().await];
    assert_eq!(summaries[0], summaries[1]);
    // The finished operation is owned by nobody any more.
    let (_, _) = wait_for_replicas(&http(&others[1]), SETTLE, |r| owner_of(r, &id).is_none()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_paused_past_its_lease_writes_nothing_more_for_the_context() {
    let Some(etcd) = etcd().await else {
        return;
    };
    const CLUSTERS: usize = 10;
    let sim = vfw_clusters(CLUSTERS).await;
    slow_down(&sim, 400).await;
    let replicas = start_replicas(&etcd, 2).await;
    let (paused, other) = (&replicas[0], &replicas[1]);
    onboard_vfw(&http(paused), &kubeconfigs(&sim)).await;
    http(paused)
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let total = CLUSTERS as u64 * 6;
    let partial = http(other)
        .wait_for("?output=summary", SETTLE, |a| {
            let applied = counts(a)["Applied"].as_u64().unwrap_or(0);
            applied > 0 && applied < total
        })
        .await;
    let id = last_context(&partial);

    signal(paused, "STOP");
    let (listed, took) = wait_for_replicas(&http(other), TAKEOVER_DEADLINE, |r| {
        owner_of(r, &id).is_some_and(|owner| !owner.is_empty()) && r.as_array().is_some_and(|a| a.len() == 1)
    })
    .await;
    println!("takeover from a paused owner: {took:?}");
    assert!(owner_of(&listed, &id).is_some());
    let done = http(other)
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": total}));

    // The context's records as they are now; the paused replica continues and must not change any of them.
    let store = Store::open_etcd(&[etcd.endpoint().to_string()], PREFIX, None)
        .await
        .unwrap();
    let context_prefix = format!("/context/{id}/");
    let revisions = |items: Vec<emco_store::KeyValue>| -> Vec<(String, i64)> {
        items.into_iter().map(|kv| (kv.key, kv.mod_revision)).collect()
    };
    let before = revisions(store.range(&context_prefix).await.unwrap().0);
    assert!(!before.is_empty());
    signal(paused, "CONT");
    // Long enough for the continued replica to run whatever it had in flight and to notice its lost lease.
    let noticed = Instant::now();
    while !paused.log().contains("lease was lost") {
        assert!(noticed.elapsed() < SETTLE, "{}", paused.log());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = revisions(store.range(&context_prefix).await.unwrap().0);
    assert_eq!(before, after, "the paused replica wrote after it lost its lease");
    assert_applied_once(&sim).await;
    assert_eq!(http(paused).summary().await, http(other).summary().await);
    // It is a replica again, with a new lease, and owns nothing of the finished context.
    let (again, _) = wait_for_replicas(&http(paused), SETTLE, |r| {
        r.as_array().is_some_and(|a| a.len() == 2)
    })
    .await;
    assert!(owner_of(&again, &id).is_none(), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_restarted_in_the_middle_of_an_instantiation_converges() {
    let Some(mut etcd) = etcd().await else {
        return;
    };
    const CLUSTERS: usize = 20;
    let sim = vfw_clusters(CLUSTERS).await;
    slow_down(&sim, 200).await;
    let replicas = start_replicas(&etcd, 2).await;
    onboard_vfw(&http(&replicas[0]), &kubeconfigs(&sim)).await;
    http(&replicas[1])
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let total = CLUSTERS as u64 * 6;
    http(&replicas[0])
        .wait_for("?output=summary", SETTLE, |a| {
            let applied = counts(a)["Applied"].as_u64().unwrap_or(0);
            applied > 0 && applied < total
        })
        .await;
    etcd.restart().await.unwrap();
    for replica in &replicas {
        let done = http(replica)
            .wait_for("?output=summary", SETTLE, |a| {
                a["status"] == "Instantiated" && counts(a) == json!({"Applied": total})
            })
            .await;
        assert_eq!(counts(&done), json!({"Applied": total}));
    }
    assert_applied_once(&sim).await;
    // Both replicas are still registered after etcd came back.
    let (listed, _) = wait_for_replicas(&http(&replicas[0]), SETTLE, |r| {
        r.as_array().is_some_and(|a| a.len() == 2)
    })
    .await;
    assert_eq!(listed.as_array().unwrap().len(), 2);
}

/// The clusters whose status watcher each replica runs, per replica, in a `GET /v2/replicas` answer.
fn watched_clusters(replicas: &Json) -> Vec<Vec<String>> {
    replicas.as_array().map_or_else(Vec::new, |list| {
        list.iter()
            .map(|replica| {
                replica["owns"]["clusters"]
                    .as_array()
                    .map_or_else(Vec::new, |clusters| {
                        clusters
                            .iter()
                            .filter_map(|c| c.as_str().map(str::to_string))
                            .collect()
                    })
            })
            .collect()
    })
}

/// Work spreads over the replicas: the status watchers of 16 clusters on two replicas — every cluster watched by
/// exactly one replica, and each replica watching some (whichever replica claimed a watcher first hands it to the
/// one rendezvous hashing over the live replicas prefers; all 16 preferring the same one of two has a chance of
/// 2^-15).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_watchers_spread_over_the_replicas() {
    let Some(etcd) = etcd().await else {
        return;
    };
    const CLUSTERS: usize = 16;
    let sim = vfw_clusters(CLUSTERS).await;
    let replicas = start_replicas(&etcd, 2).await;
    onboard_vfw(&http(&replicas[0]), &kubeconfigs(&sim)).await;
    http(&replicas[1])
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    http(&replicas[0])
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    let (listed, _) = wait_for_replicas(&http(&replicas[0]), SETTLE, |r| {
        let per_replica = watched_clusters(r);
        let mut all: Vec<String> = per_replica.concat();
        let watched = all.len();
        all.sort();
        all.dedup();
        watched == CLUSTERS
            && all.len() == CLUSTERS
            && per_replica.len() == 2
            && per_replica.iter().all(|clusters| !clusters.is_empty())
    })
    .await;
    let per_replica = watched_clusters(&listed);
    assert_eq!(per_replica.len(), 2, "{listed}");
    assert!(
        per_replica.iter().all(|clusters| !clusters.is_empty()),
        "one replica watches every cluster: {listed}"
    );
}

/// A replica killed and started again on its address is the same replica: it takes back the instantiation it
/// owned at once, long before the killed process's lease (60 s here) would have let anyone else take it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_restarted_on_its_address_resumes_its_work_before_its_old_lease_expires() {
    let Some(etcd) = etcd().await else {
        return;
    };
    const CLUSTERS: usize = 20;
    let sim = vfw_clusters(CLUSTERS).await;
    slow_down(&sim, 150).await;
    let store = ["--etcd-endpoints", etcd.endpoint(), "--etcd-prefix", PREFIX];
    let long_lease = ["--lease-ttl", "60s"];
    let replica = ServeProcess::start_on(&store, &long_lease, None).await;
    onboard_vfw(&http(&replica), &kubeconfigs(&sim)).await;
    http(&replica)
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let total = CLUSTERS as u64 * 6;
    http(&replica)
        .wait_for("?output=summary", SETTLE, |a| {
            let applied = counts(a)["Applied"].as_u64().unwrap_or(0);
            applied > 0 && applied < total
        })
        .await;
    let port = replica.kill().await;
    let restarted = Instant::now();
    let replica = ServeProcess::start_at(port, &store, &long_lease, None).await;
    let done = http(&replica)
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    let took = restarted.elapsed();
    assert!(
        took < Duration::from_secs(30),
        "finished {took:?} after the restart: it waited for the old lease\n{}",
        replica.log()
    );
    assert_eq!(counts(&done), json!({"Applied": total}));
    assert!(
        replica
            .log()
            .contains("took back the work this replica owned before it restarted"),
        "{}",
        replica.log()
    );
    assert_applied_once(&sim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_clusters_agent_is_served_by_any_replica() {
    let Some(etcd) = etcd().await else {
        return;
    };
    let sim = vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    let _monitors = crate::support::start_in_cluster_monitors(&sim);
    let mut replicas = start_replicas(&etcd, 2).await;
    let (owner, other) = (&replicas[0], &replicas[1]);
    onboard_vfw(&http(owner), &[]).await;
    let token = crate::support::register_pull_cluster(&http(owner), "edge01").await;
    // The instantiation runs on the replica that took it; the agent polls and reports to the other one, which
    // knows the orders from etcd and records the outcomes the owner's batches wait for.
    http(owner)
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let agent = crate::pull::start_agent(&http(other), edge01, &token);
    let ready = http(owner)
        .wait_until(
            &format!("{DIG}/status?status=ready&output=summary"),
            SETTLE,
            |answer| answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready",
        )
        .await;
    assert_eq!(ready["readyCounts"], json!({"Ready": 9}), "{ready}");
    assert_eq!(counts(&http(other).summary().await), json!({"Applied": 6}));
    agent.abort();

    // The agent's replica goes away; the agent comes back through the owner, and a terminate reaches the cluster.
    replicas.pop().unwrap().kill().await;
    let owner = &replicas[0];
    let agent = crate::pull::start_agent(&http(owner), edge01, &token);
    http(owner)
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    http(owner)
        .wait_until(&format!("{DIG}/status?output=summary"), SETTLE, |answer| {
            answer["status"] == "Terminated"
        })
        .await;
    let left = Api::<Deployment>::namespaced(edge01.client().unwrap(), "default")
        .list(&ListParams::default().labels("emco/deployment-id"))
        .await
        .unwrap();
    assert!(left.items.is_empty(), "{:?}", left.items);
    agent.abort();
}
