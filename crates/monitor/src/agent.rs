//! The pull agent (`emco-monitor --pull-from URL --cluster provider+cluster --token-file FILE`): the monitor of a
//! cluster emco cannot reach, which reaches emco instead, over one HTTP/2 connection (opened again when it ends)
//! that carries every request: its poll and its reports. It keeps one long poll of its cluster's desired state
//! (`GET …/agent/desired-state?since=R`, resumed from the last answer's revision, so a reconnect gets only what
//! changed), keeps every order it is sent, runs each new one on its own cluster with rsync's own batches
//! (`emco_rsync::agent::AgentApplier`) — a newer order of the same context and app cancels the one still running —
//! and reports each outcome (`POST …/agent/reports`), again until emco took it. The cluster's ResourceBundleStates
//! (written by the monitor beside it) are read with rsync's bundle stream and reported in batches, each bundle once
//! per batch with its latest status: a status that changed at once (gathered for 50 ms with what changes with it,
//! and no sooner than `report_every`, 500 ms, after the report of changes before), one whose heartbeat alone changed with the
//! next heartbeats' report (`heartbeats_every`, 5 s); one that shows an object of an applied order
//! missing (deleted behind emco's back, as the cluster confirms) has that order applied again at once (a repair: no hook runs), and everything applied is applied again
//! every `repair_every` unless it was applied whole within it (an edited spec shows in no bundle). Disconnected, the cluster stays as last applied; the agent retries with a
//! back-off and catches up when emco answers again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use emco_appcontext::agent_order::MAX_BUNDLES_PER_REPORT;
use emco_appcontext::{AgentEnd, AgentOperation, AgentOrder, AgentResult, ResourceRecord};
use emco_model::ContextId;
use emco_rsync::RsyncConfig;
use emco_rsync::agent::AgentApplier;
use emcoctl::client::{Body, EmcoClient};
use futures::StreamExt as _;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// How the agent reaches emco and its own cluster.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// emco's API, `https://host:port` (or `http://` on a trusted network).
    pub emco: String,
    /// The cluster, `provider+cluster`.
    pub cluster: String,
    /// The cluster's agent token.
    pub token: String,
    /// The CA certificates (PEM) emco's certificate is checked against, else the system's.
    pub ca_file: Option<std::path::PathBuf>,
    /// How the agent reaches its own cluster.
    pub own_cluster: OwnCluster,
    /// How long emco may hold a poll open.
    pub poll_wait: Duration,
    /// How soon after the report before a bundle status that changed is reported: at most one report per
    /// `report_every` however busy the cluster.
    pub report_every: Duration,
    /// How often bundle statuses that changed in their heartbeat only are reported: the cluster's sign of life
    /// (emco believes a cluster's report for a minute by default).
    pub heartbeats_every: Duration,
    /// How often everything applied is applied again (changes made behind emco's back that no bundle shows, such as
    /// an edited spec), at a phase in the period that the cluster's name spreads; an object a bundle shows missing
    /// is applied again at once.
    pub repair_every: Duration,
    /// The batches' settings (retries, timeouts).
    pub rsync: RsyncConfig,
}

impl AgentConfig {
    /// Settings for `cluster` at `emco` with `token`, the rest as defaults.
    #[must_use]
    pub fn new(emco: &str, cluster: &str, token: &str, kubeconfig: Vec<u8>) -> Self {
        Self {
            emco: emco.to_string(),
            cluster: cluster.to_string(),
            token: token.to_string(),
            ca_file: None,
            own_cluster: OwnCluster::Kubeconfig(kubeconfig),
            poll_wait: Duration::from_secs(30),
            report_every: Duration::from_millis(500),
            heartbeats_every: Duration::from_secs(5),
            repair_every: Duration::from_secs(300),
            rsync: RsyncConfig::default(),
        }
    }
}

/// How the agent reaches the cluster it applies to.
#[derive(Clone)]
pub enum OwnCluster {
    /// Through a kubeconfig (inline credentials, as emco's kubeconfig policy wants them).
    Kubeconfig(Vec<u8>),
    /// Through this client: software a simulated cluster runs, reaching its API in-process.
    Client(kube::Client),
}

impl std::fmt::Debug for OwnCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Kubeconfig(bytes) => write!(f, "Kubeconfig({} bytes)", bytes.len()),
            Self::Client(_) => f.write_str("Client"),
        }
    }
}

/// Why the agent cannot start.
#[derive(Debug, thiserror::Error)]
pub enum AgentStartError {
    /// `--cluster` is not `provider+cluster`.
    #[error("--cluster '{0}' is not provider+cluster")]
    Cluster(String),
    /// emco's URL, CA file or token is unusable.
    #[error("{0}")]
    Client(#[from] emcoctl::client::ClientError),
    /// The cluster's kubeconfig is unusable.
    #[error("{0}")]
    Applier(#[from] emco_rsync::agent::AgentError),
}

/// Why a request to emco brought no answer.
#[derive(Debug, thiserror::Error)]
enum SendError {
    /// emco could not be reached, or the answer broke off.
    #[error("{0}")]
    Client(#[from] emcoctl::client::ClientError),
    /// No answer within the bound (a connection that hangs is given up, and the request made again).
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
}

/// How long a report may go unanswered; a poll may take its wait on top.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// One request to emco, given up after `limit`.
async fn send_within(
    client: &EmcoClient,
    (method, path): (&str, &str),
    body: Body,
    limit: Duration,
) -> Result<emcoctl::client::Reply, SendError> {
    match tokio::time::timeout(limit, client.send(method, path, true, body)).await {
        Ok(answer) => Ok(answer?),
        Err(_) => Err(SendError::TimedOut(limit)),
    }
}

/// The first pause after emco could not be reached; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// One answer of the long poll.
#[derive(Debug, Deserialize)]
struct DesiredState {
    revision: i64,
    changed: Vec<ChangedOrder>,
}

#[derive(Debug, Deserialize)]
struct ChangedOrder {
    context: ContextId,
    app: String,
    order: AgentOrder,
    resources: Vec<ResourceRecord>,
}

/// A (context, app) of the cluster.
type Key = (ContextId, String);

/// What runs for each (context, app): the order (its seq; [`REPAIR`] for a repair) and how to cancel it, and a
/// lock each run holds while it touches the cluster, so a run cancelled for a newer order has stopped before the
/// newer one starts (a repair cancelled by a delete never applies an object after the delete removed it).
#[derive(Default)]
struct Runs {
    current: HashMap<Key, (u64, CancellationToken)>,
    serial: HashMap<Key, Arc<tokio::sync::Mutex<()>>>,
    /// When each (context, app) was last applied whole (an order or a repair with nothing failed): the periodic
    /// repair passes over what was applied within its period.
    applied: HashMap<Key, tokio::time::Instant>,
}

impl Runs {
    /// Starts order `seq` of `key`, cancelling what runs for it; `None` when that order runs already.
    fn order(
        &mut self,
        key: &Key,
        seq: u64,
        cancel: &CancellationToken,
    ) -> Option<Arc<tokio::sync::Mutex<()>>> {
        match self.current.get(key) {
            Some((running, _)) if *running == seq => return None,
            Some((_, older)) => older.cancel(),
            None => {}
        }
        self.current.insert(key.clone(), (seq, cancel.clone()));
        Some(self.serial.entry(key.clone()).or_default().clone())
    }

    /// Starts a repair of `key` unless something runs for it.
    fn repair(&mut self, key: &Key, cancel: &CancellationToken) -> Option<Arc<tokio::sync::Mutex<()>>> {
        if self.current.contains_key(key) {
            return None;
        }
        self.order(key, REPAIR, cancel)
    }

    /// Run `seq` of `key` is over; `applied_whole`: it applied every object (so the next periodic repair of
    /// `key` may wait a period from now).
    fn finish(&mut self, key: &Key, seq: u64, applied_whole: bool) {
        if self.current.get(key).is_some_and(|(running, _)| *running == seq) {
            self.current.remove(key);
        }
        if applied_whole {
            self.applied.insert(key.clone(), tokio::time::Instant::now());
        } else {
            self.applied.remove(key);
        }
    }

    /// Whether `key` was applied whole less than `every` ago.
    fn applied_within(&self, key: &Key, every: Duration) -> bool {
        self.applied.get(key).is_some_and(|at| at.elapsed() < every)
    }
}

type Running = Arc<Mutex<Runs>>;

/// The seq a repair runs under in [`Running`] (orders count from 1, so any order cancels a repair).
const REPAIR: u64 = 0;

/// How long a status that changed waits for others changing with it before their report goes out.
const GATHER_CHANGES: Duration = Duration::from_millis(50);

/// The cluster's bundle statuses: the latest read of each (by label) and those not reported yet; `changed` wakes
/// the reporter for a status that says something new (a heartbeat alone waits for the heartbeats' report).
#[derive(Default)]
struct Bundles {
    latest: Mutex<HashMap<String, String>>,
    pending: Mutex<HashMap<String, String>>,
    changed: tokio::sync::Notify,
}

impl Bundles {
    /// Keeps `label`'s new status for the next report; whether it changed in more than its heartbeat.
    fn read(&self, label: String, status: String) -> bool {
        let previous = lock(&self.latest).insert(label.clone(), status.clone());
        let changed =
            previous.is_none_or(|previous| emco_rsync::agent::changed_beyond_heartbeat(&previous, &status));
        lock(&self.pending).insert(label, status);
        if changed {
            self.changed.notify_one();
        }
        changed
    }

    /// Reports the latest status of `label` again (an update that changed nothing finished: the new context's
    /// records hold no status of the bundle yet, and the bundle will not change to say it again).
    fn again(&self, label: &str) {
        let latest = lock(&self.latest).get(label).cloned();
        if let Some(status) = latest {
            lock(&self.pending).entry(label.to_string()).or_insert(status);
            self.changed.notify_one();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs the agent until `shutdown` resolves.
pub async fn run_agent(
    config: AgentConfig,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), AgentStartError> {
    let Some((provider, name)) = config.cluster.split_once('+') else {
        return Err(AgentStartError::Cluster(config.cluster.clone()));
    };
    let client =
        EmcoClient::multiplexed(&config.emco, config.ca_file.as_deref())?.with_token(&config.token)?;
    let base = format!("/v2/cluster-providers/{provider}/clusters/{name}/agent");
    let applier = Arc::new(match config.own_cluster {
        OwnCluster::Kubeconfig(kubeconfig) => AgentApplier::new(&kubeconfig, config.rsync.clone()).await?,
        OwnCluster::Client(client) => AgentApplier::with_client(client, config.rsync.clone()).await?,
    });
    let stop = CancellationToken::new();
    // However the agent ends — shutdown, or this future dropped — everything it started stops with it: no order,
    // repair or report of an agent that is gone runs on.
    let _stop_on_drop = stop.clone().drop_guard();
    let running: Running = Arc::default();
    let bundles: Arc<Bundles> = Arc::default();
    let reporter = tokio::spawn(report_bundles(
        client.clone(),
        base.clone(),
        applier.clone(),
        (config.report_every, config.heartbeats_every),
        (running.clone(), bundles.clone()),
        stop.clone(),
    ));
    let repairer = tokio::spawn(repair_now_and_then(
        applier.clone(),
        (
            config.repair_every,
            repair_phase(&config.cluster, config.repair_every),
        ),
        running.clone(),
        stop.clone(),
    ));
    tokio::select! {
        () = poll(&client, &base, &applier, config.poll_wait, (&running, &bundles), &stop) => {}
        () = shutdown => {}
    }
    stop.cancel();
    reporter.abort();
    repairer.abort();
    Ok(())
}

/// Applies `(context, app)` again unless an order or a repair of it is running.
fn start_repair(
    applier: &Arc<AgentApplier>,
    running: &Running,
    stop: &CancellationToken,
    context: ContextId,
    app: String,
) {
    let key = (context, app.clone());
    let cancel = stop.child_token();
    let Some(serial) = lock(running).repair(&key, &cancel) else {
        return;
    };
    tracing::info!(context = %context, app, "applying again what was applied (repair)");
    let (applier, running) = (applier.clone(), running.clone());
    tokio::spawn(async move {
        {
            let _serial = serial.lock().await;
            let repaired = applier.repair(context, &app, cancel).await;
            if !repaired {
                tracing::info!(context = %context, app, "the repair did not apply everything; the next one tries again");
            }
            lock(&running).finish(&key, REPAIR, repaired);
        }
    });
}

/// Where in each `every` cluster `cluster`'s agent applies everything again: a phase spread over the period by the
/// cluster's name (the same for the same cluster), so that thousands of agents started together do not all apply
/// everything in the same second, every period.
fn repair_phase(cluster: &str, every: Duration) -> Duration {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    cluster.hash(&mut hasher);
    let period = u64::try_from(every.as_millis()).unwrap_or(u64::MAX).max(1);
    Duration::from_millis(hasher.finish() % period)
}

/// The safety net: everything applied is applied again every `every`, at the cluster's phase in the period,
/// unless it was applied whole within the period (an order that came lately is not applied twice): an edit behind
/// emco's back that no bundle shows is undone within two periods.
async fn repair_now_and_then(
    applier: Arc<AgentApplier>,
    (every, phase): (Duration, Duration),
    running: Running,
    stop: CancellationToken,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + phase, every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            () = stop.cancelled() => return,
        }
        for (context, app) in applier.repairable().await {
            // Applied whole within the period (its order came lately, or a missing object was repaired): not yet.
            if lock(&running).applied_within(&(context, app.clone()), every) {
                continue;
            }
            start_repair(&applier, &running, &stop, context, app);
        }
    }
}

/// The long poll: keeps each changed order, runs the new ones.
async fn poll(
    client: &EmcoClient,
    base: &str,
    applier: &Arc<AgentApplier>,
    wait: Duration,
    (running, bundles): (&Running, &Arc<Bundles>),
    stop: &CancellationToken,
) {
    let mut since = 0i64;
    let mut backoff = FIRST_BACKOFF;
    loop {
        let path = format!("{base}/desired-state?since={since}&wait={}", wait.as_secs());
        let answer = send_within(client, ("GET", &path), Body::Empty, wait + REQUEST_TIMEOUT).await;
        let state = match answer {
            Ok(reply) if reply.status == 200 => match serde_json::from_slice::<DesiredState>(&reply.body) {
                Ok(state) => state,
                Err(err) => {
                    tracing::warn!(error = %err, "emco's desired state does not read; polling again");
                    pause(&mut backoff).await;
                    continue;
                }
            },
            Ok(reply) => {
                tracing::warn!(status = reply.status, answer = %reply.text(), "emco refused the poll; trying again");
                pause(&mut backoff).await;
                continue;
            }
            Err(err) => {
                tracing::info!(error = %err, "emco cannot be reached; the cluster stays as last applied");
                pause(&mut backoff).await;
                continue;
            }
        };
        backoff = FIRST_BACKOFF;
        since = state.revision;
        for changed in state.changed {
            let ChangedOrder {
                context,
                app,
                order,
                resources,
            } = changed;
            if let Err(err) = applier.keep(context, &app, &order, resources).await {
                tracing::warn!(context = %context, app, error = %err, "cannot keep an order");
                continue;
            }
            if order.outcome.is_some() {
                continue;
            }
            let key = (context, app.clone());
            let cancel = stop.child_token();
            let Some(serial) = lock(running).order(&key, order.seq, &cancel) else {
                continue;
            };
            tracing::info!(context = %context, app, seq = order.seq, operation = order.operation.as_str(), "running an order");
            let (client, base, applier, running, bundles) = (
                client.clone(),
                base.to_string(),
                applier.clone(),
                running.clone(),
                bundles.clone(),
            );
            tokio::spawn(async move {
                let serial = serial.lock().await;
                let outcome = applier.run(context, &app, &order, cancel.clone()).await;
                drop(serial);
                let applied_whole = matches!(order.operation, AgentOperation::Apply | AgentOperation::Update)
                    && outcome
                        .as_ref()
                        .is_some_and(emco_rsync::agent::OrderRun::nothing_failed);
                if let Some(run) = outcome {
                    report_outcome(
                        &client,
                        &base,
                        context,
                        &app,
                        order.seq,
                        run.end,
                        &run.results,
                        &cancel,
                    )
                    .await;
                    if run.unchanged {
                        bundles.again(&order.label);
                    }
                }
                lock(&running).finish(&key, order.seq, applied_whole);
            });
        }
    }
}

async fn pause(backoff: &mut Duration) {
    tokio::time::sleep(*backoff).await;
    *backoff = (*backoff * 2).min(MAX_BACKOFF);
}

/// Reports an order's outcome until emco answers it (or the order is cancelled by a newer one).
#[allow(clippy::too_many_arguments)] // one outcome: whose, which order, what it came to, and when to give up
async fn report_outcome(
    client: &EmcoClient,
    base: &str,
    context: ContextId,
    app: &str,
    seq: u64,
    end: AgentEnd,
    results: &[Option<AgentResult>],
    cancel: &CancellationToken,
) {
    let body =
        json!({"outcomes": [{"context": context, "app": app, "seq": seq, "end": end, "results": results}]});
    let mut backoff = FIRST_BACKOFF;
    loop {
        match send_within(
            client,
            ("POST", &format!("{base}/reports")),
            Body::Json(body.clone()),
            REQUEST_TIMEOUT,
        )
        .await
        {
            Ok(reply) if reply.status == 200 => {
                tracing::info!(context = %context, app, seq, answer = %reply.text(), "reported an order's outcome");
                return;
            }
            Ok(reply) if (400..500).contains(&reply.status) => {
                tracing::warn!(context = %context, app, seq, status = reply.status, answer = %reply.text(), "emco refused an outcome");
                return;
            }
            Ok(reply) => tracing::info!(status = reply.status, "emco could not take an outcome yet"),
            Err(err) => tracing::info!(error = %err, "emco cannot be reached to take an outcome"),
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = cancel.cancelled() => return,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Reads the cluster's bundle statuses and reports them (see the module's doc), the latest of each bundle once; what
/// emco could not take (no answer within [`REQUEST_TIMEOUT`], or 5xx) is sent again with the next batch, what it
/// refused (4xx) is dropped. A bundle that shows an object of an applied order missing
/// starts a repair of that order.
async fn report_bundles(
    client: EmcoClient,
    base: String,
    applier: Arc<AgentApplier>,
    (report_every, heartbeats_every): (Duration, Duration),
    (running, bundles): (Running, Arc<Bundles>),
    stop: CancellationToken,
) {
    let gathered = bundles.clone();
    let reader_stop = stop.clone();
    let reader = tokio::spawn(async move {
        let mut statuses = std::pin::pin!(applier.bundle_statuses());
        loop {
            let next = tokio::select! {
                next = statuses.next() => next,
                () = reader_stop.cancelled() => return,
            };
            let Some((label, status)) = next else { return };
            // A heartbeat alone shows nothing missing that the status before it did not.
            let missing = if gathered.read(label.clone(), status.clone()) {
                applier.missing_objects(&label, &status).await
            } else {
                Vec::new()
            };
            for (context, app) in missing {
                start_repair(&applier, &running, &reader_stop, context, app);
            }
        }
    });
    let mut heartbeats = tokio::time::interval(heartbeats_every);
    heartbeats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_report = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = heartbeats.tick() => {}
            () = bundles.changed.notified() => {
                // Gather what else changes meanwhile into the same report, and keep a busy cluster's reports
                // `report_every` apart.
                let due = (tokio::time::Instant::now() + GATHER_CHANGES).max(last_report + report_every);
                tokio::select! {
                    () = tokio::time::sleep_until(due) => {}
                    () = stop.cancelled() => break,
                }
                // Only reports of changes space the next: a heartbeats' report just before never delays a change.
                last_report = tokio::time::Instant::now();
            }
            () = stop.cancelled() => break,
        }
        let batch: Vec<(String, String)> = {
            let mut pending = lock(&bundles.pending);
            let labels: Vec<String> = pending.keys().take(MAX_BUNDLES_PER_REPORT).cloned().collect();
            labels
                .into_iter()
                .filter_map(|label| pending.remove_entry(&label))
                .collect()
        };
        if batch.is_empty() {
            continue;
        }
        let body = match report_body(&batch) {
            Ok(body) => body,
            Err(err) => {
                tracing::warn!(error = %err, "cannot encode the bundle statuses; dropped");
                continue;
            }
        };
        let sent = send_within(
            &client,
            ("POST", &format!("{base}/reports")),
            Body::JsonText(body),
            REQUEST_TIMEOUT,
        )
        .await;
        if let Ok(reply) = &sent
            && (400..500).contains(&reply.status)
        {
            // Sending the same again would be refused again; the bundles' next statuses go with a later report.
            tracing::warn!(status = reply.status, answer = %reply.text(), "emco refused bundle statuses; dropped");
            continue;
        }
        let taken = matches!(&sent, Ok(reply) if reply.status == 200);
        if !taken {
            tracing::info!("emco did not take the bundle statuses; they go with the next report");
            let mut pending = lock(&bundles.pending);
            for (label, status) in batch {
                // A newer status gathered meanwhile wins.
                pending.entry(label).or_insert(status);
            }
        }
    }
    reader.abort();
}

/// The body of a report of `(label, status)` pairs: each status as the text the cluster gave (checked to be JSON,
/// not parsed into a tree); a status that is not JSON is left out.
fn report_body(batch: &[(String, String)]) -> serde_json::Result<Vec<u8>> {
    let bundles = batch
        .iter()
        .filter_map(|(label, status)| {
            Some(ReportedBundle {
                label,
                status: serde_json::from_str(status).ok()?,
            })
        })
        .collect();
    serde_json::to_vec(&BundlesReport { bundles })
}

/// A report of bundle statuses, as emco's reports endpoint takes it.
#[derive(serde::Serialize)]
struct BundlesReport<'a> {
    bundles: Vec<ReportedBundle<'a>>,
}

/// One bundle's status in a report.
#[derive(serde::Serialize)]
struct ReportedBundle<'a> {
    label: &'a str,
    status: &'a serde_json::value::RawValue,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_carries_each_status_as_given_and_leaves_out_what_is_not_json() {
        let status = r#"{"ready":true,"podStatuses":[{"name":"a"}],"heartbeat":"10:00:00"}"#;
        let batch = vec![
            ("7-web".to_string(), status.to_string()),
            ("7-db".to_string(), "{not json".to_string()),
        ];
        let body = report_body(&batch).unwrap();
        let text = String::from_utf8(body).unwrap();
        assert_eq!(
            text,
            format!(r#"{{"bundles":[{{"label":"7-web","status":{status}}}]}}"#)
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["bundles"][0]["status"]["podStatuses"][0]["name"], "a");
    }

    #[test]
    fn a_newer_order_cancels_the_run_and_a_repair_waits_its_turn() {
        let mut runs = Runs::default();
        let key: Key = (ContextId::new(7).unwrap(), "web".into());
        let repair = CancellationToken::new();
        let serial = runs.repair(&key, &repair).unwrap();
        // Nothing else starts a repair while one runs.
        assert!(runs.repair(&key, &CancellationToken::new()).is_none());
        // An order cancels the repair and shares its lock, so it starts once the repair let go.
        let order = CancellationToken::new();
        let order_serial = runs.order(&key, 1, &order).unwrap();
        assert!(repair.is_cancelled() && !order.is_cancelled());
        assert!(Arc::ptr_eq(&serial, &order_serial));
        // The same order again is not started twice; the repair's end leaves the order's run in place.
        assert!(runs.order(&key, 1, &CancellationToken::new()).is_none());
        runs.finish(&key, REPAIR, true);
        assert!(runs.repair(&key, &CancellationToken::new()).is_none());
        runs.finish(&key, 1, true);
        assert!(runs.repair(&key, &CancellationToken::new()).is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn what_was_applied_whole_within_the_period_is_passed_over_by_the_periodic_repair() {
        let every = Duration::from_secs(300);
        let mut runs = Runs::default();
        let key: Key = (ContextId::new(7).unwrap(), "web".into());
        // Never applied: due.
        assert!(!runs.applied_within(&key, every));
        runs.order(&key, 1, &CancellationToken::new()).unwrap();
        runs.finish(&key, 1, true);
        assert!(runs.applied_within(&key, every));
        tokio::time::advance(every).await;
        assert!(!runs.applied_within(&key, every));
        // A run that did not apply everything leaves the key due at once.
        runs.order(&key, 2, &CancellationToken::new()).unwrap();
        runs.finish(&key, 2, true);
        runs.repair(&key, &CancellationToken::new()).unwrap();
        runs.finish(&key, REPAIR, false);
        assert!(!runs.applied_within(&key, every));
    }

    #[test]
    fn clusters_repair_at_phases_spread_over_the_period() {
        let every = Duration::from_secs(300);
        let phases: Vec<Duration> = (0..1_000)
            .map(|n| repair_phase(&format!("edge+site{n}"), every))
            .collect();
        assert!(phases.iter().all(|phase| *phase < every));
        // The same cluster keeps its phase.
        assert_eq!(repair_phase("edge+site7", every), phases[7]);
        // Every tenth of the period holds some of the 1,000 clusters, none more than twice its share.
        let mut tenths = [0usize; 10];
        for phase in &phases {
            tenths[(phase.as_millis() * 10 / every.as_millis()) as usize] += 1;
        }
        assert!(tenths.iter().all(|n| (30..=200).contains(n)), "{tenths:?}");
    }
}
