//! The engine: a worker per context (instantiate or terminate), stop and cancellation, app dependencies,
//! progressive rollouts (see [`crate::rollout`]), and resuming unfinished operations after a restart.
//!
//! An update (a context whose meta `supersedes` another: a DIG's `/update` or `/rollback`, a logical cloud's
//! `/update`) is instantiated against its predecessor (only what differs is written, see
//! [`Direction::Update`]); once it is instantiated, the contexts it takes over from delete what only they hold
//! ([`Direction::Supersede`]) and end `Updated` (`UpdateFailed` when a deletion failed, or when the new context
//! failed to instantiate). Every context of such a chain labels its objects with the chain's first context
//! ([`lineage_root`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use emco_appcontext::replicas::{self, Claim};
use emco_appcontext::{AppContexts, Catalog, ContextError, ContextMeta, Engine, Replica, Waiting};
use emco_model::{ContextId, ContextStatus};
use tokio::sync::{Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::apply::{BatchOutcome, Direction, app_ready, sync_cluster};
use crate::clients::Clients;
use crate::config::RsyncConfig;
use crate::watch::Watchers;

/// How many times the progress or end of an operation is written when the store fails (with the engine's back-off between).
const FINISH_ATTEMPTS: u32 = 20;
/// How often a dependency on another app's readiness is checked.
pub(crate) const READY_POLL: Duration = Duration::from_millis(500);

/// What every task shares.
pub(crate) struct Inner {
    pub(crate) contexts: AppContexts,
    pub(crate) clients: Clients,
    pub(crate) config: RsyncConfig,
    /// Bounds the (app, cluster) batches in flight.
    pub(crate) permits: Semaphore,
    workers: Mutex<HashMap<ContextId, Worker>>,
    next_worker: std::sync::atomic::AtomicU64,
    /// The ResourceBundleState watcher of each cluster a live context uses.
    pub(crate) watchers: Watchers,
    /// The first context of each context's update chain, once looked up (chains never change).
    roots: Mutex<HashMap<ContextId, ContextId>>,
    /// This replica's claims, when several replicas share the store.
    pub(crate) ownership: Option<crate::ownership::Ownership>,
    /// Heartbeats waiting to be written in a batch.
    pub(crate) heartbeats: crate::heartbeats::Heartbeats,
    /// The probers of clusters that batches wait on.
    pub(crate) reachability: crate::reachability::Reachability,
    /// The batches waiting for a pull cluster's agent.
    pub(crate) pull: crate::pull::PullWaiters,
}

impl Inner {
    /// Cancels the running operation of context `id` here, if any.
    pub(crate) fn cancel_worker(&self, id: ContextId) {
        if let Some(worker) = self
            .workers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&id)
        {
            worker.cancel.cancel();
        }
    }
}

/// Forgets the chain of a context that is no longer live (the memo stays bounded by the live contexts).
pub(crate) fn forget_root(inner: &Inner, id: ContextId) {
    inner
        .roots
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(&id);
}

/// At most this many contexts are followed back along an update chain.
const MAX_LINEAGE: usize = 10_000;

/// The first context of the update chain `id` belongs to (its recorded `lineage`, else following `supersedes`
/// back; `id` itself when it supersedes nothing): its id is the tracking label of every object of the chain. A
/// context that cannot be read ends the walk.
pub(crate) async fn lineage_root(inner: &Inner, id: ContextId) -> ContextId {
    let known = |id| {
        inner
            .roots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&id)
            .copied()
    };
    let mut current = id;
    for _ in 0..MAX_LINEAGE {
        if let Some(root) = known(current) {
            current = root;
            break;
        }
        match inner.contexts.meta(current).await {
            Ok(meta) => match (meta.lineage, meta.supersedes) {
                // Recorded when the context was made.
                (Some(root), _) => {
                    current = root;
                    break;
                }
                (None, Some(previous)) => current = previous,
                (None, None) => break,
            },
            Err(err) => {
                tracing::warn!(context = %current, error = %err, "cannot follow the update chain");
                break;
            }
        }
    }
    inner
        .roots
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(id, current);
    current
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.watchers.abort_all();
    }
}

/// The running operation of one context.
struct Worker {
    serial: u64,
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

/// The rsync engine.
#[derive(Clone)]
pub struct Rsync {
    pub(crate) inner: Arc<Inner>,
}

/// An app's progress, for the apps that depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AppProgress {
    Running,
    Deployed,
    Failed,
}

impl Rsync {
    /// An engine over the AppContexts and kubeconfigs in the store of `catalog` and `contexts`.
    #[must_use]
    pub fn new(catalog: Catalog, contexts: AppContexts, config: RsyncConfig) -> Self {
        Self::build(catalog, contexts, config, None)
    }

    /// An engine that is one of several replicas on the store: it runs only the work `replica` owns, and
    /// fences every write with the claim (see [`crate::ownership`]).
    #[must_use]
    pub fn with_replica(
        catalog: Catalog,
        contexts: AppContexts,
        config: RsyncConfig,
        replica: Arc<Replica>,
    ) -> Self {
        Self::build(
            catalog,
            contexts,
            config,
            Some(crate::ownership::Ownership::new(replica)),
        )
    }

    fn build(
        catalog: Catalog,
        contexts: AppContexts,
        config: RsyncConfig,
        ownership: Option<crate::ownership::Ownership>,
    ) -> Self {
        let permits = Semaphore::new(config.concurrency.max(1));
        let clients = Clients::new(catalog, config.clone());
        Self {
            inner: Arc::new(Inner {
                contexts,
                clients,
                config,
                permits,
                workers: Mutex::new(HashMap::new()),
                next_worker: std::sync::atomic::AtomicU64::new(1),
                watchers: Watchers::default(),
                roots: Mutex::new(HashMap::new()),
                ownership,
                heartbeats: crate::heartbeats::Heartbeats::default(),
                reachability: crate::reachability::Reachability::new(),
                pull: crate::pull::PullWaiters::default(),
            }),
        }
    }

    fn workers(&self) -> std::sync::MutexGuard<'_, HashMap<ContextId, Worker>> {
        self.inner
            .workers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Resumes every operation the store says is unfinished (after a restart): running instantiations and
    /// terminations continue; ones that were being stopped end as stopped.
    ///
    /// With replicas, only operations no replica owns are resumed, each by the replica rendezvous hashing
    /// prefers (the others after a grace; see [`Rsync::adopt_orphans`], which calls this again).
    pub async fn resume(&self) -> Result<usize, emco_appcontext::ContextError> {
        let owners = match &self.inner.ownership {
            Some(ownership) => {
                if let Err(err) = ownership.replica.refresh_members().await {
                    tracing::warn!(error = %err, "cannot list the replicas");
                }
                Some(
                    replicas::context_owners(ownership.replica.store())
                        .await
                        .map_err(|err| {
                            emco_appcontext::ContextError::Store(emco_store::Error::Backend(err.to_string()))
                        })?,
                )
            }
            None => None,
        };
        let mut resumed = 0;
        for id in self.inner.contexts.ids().await? {
            let meta = match self.inner.contexts.meta(id).await {
                Ok(meta) => meta,
                // Deleted between the listing and the read (another replica).
                Err(emco_appcontext::ContextError::NotFound(_)) if owners.is_some() => continue,
                Err(err) => return Err(err),
            };
            // Status keeps flowing from every cluster a live context uses.
            if crate::watch::is_live(meta.status) {
                let root = lineage_root(&self.inner, id).await;
                self.inner.watchers.join_lineage(root, id);
                for app in &meta.apps {
                    for cluster in &app.clusters {
                        self.inner.watchers.hold(&self.inner, id, cluster);
                    }
                }
            }
            // An update that finished instantiating has a handover left while its predecessor is pending.
            let handover_left = match (meta.status, meta.stop_requested, meta.supersedes) {
                (ContextStatus::Instantiated, false, Some(previous)) => {
                    match self.inner.contexts.meta(previous).await {
                        Ok(previous) => superseding_pending(previous.status),
                        Err(_) => false,
                    }
                }
                _ => false,
            };
            // A paused rollout waits for `/resume` (which starts it again), not for a replica.
            let unfinished = handover_left
                || (matches!(
                    meta.status,
                    ContextStatus::Instantiating | ContextStatus::Terminating
                ) && !meta.rollout_paused());
            let key = replicas::context_owner_key(id);
            if !unfinished {
                if let Some(ownership) = &self.inner.ownership {
                    ownership.forget_orphan(&key);
                }
                continue;
            }
            if let (Some(owners), Some(ownership)) = (&owners, &self.inner.ownership) {
                match owners.get(&id) {
                    // Ours since before this process started (the replica restarted under its id), and not
                    // running here yet: resumed at once.
                    Some(owner) if *owner == ownership.replica.id() => {
                        ownership.forget_orphan(&key);
                        if self.running(id) {
                            continue;
                        }
                        tracing::info!(context = %id, "resuming an operation this replica owned before it restarted");
                    }
                    Some(_) => {
                        ownership.forget_orphan(&key);
                        continue;
                    }
                    None => {
                        if !ownership.may_claim(&key) {
                            continue;
                        }
                        tracing::info!(context = %id, "taking over an operation no replica owns");
                    }
                }
            }
            let claim = Claim::IfFree;
            match (meta.status, meta.stop_requested) {
                // An update whose context finished instantiating but had not handed over yet.
                (ContextStatus::Instantiated, false) if handover_left => {
                    self.start(id, true, claim, move |inner, cancel| {
                        supersede_if_done(inner, id, cancel)
                    });
                }
                (ContextStatus::Instantiating | ContextStatus::Terminating, true) => {
                    self.start(id, true, claim, move |inner, _| run_stop(inner, id));
                }
                (ContextStatus::Instantiating, false) => {
                    self.start(id, true, claim, move |inner, cancel| async move {
                        run_instantiate(inner.clone(), id, cancel.clone()).await;
                        supersede_if_done(inner, id, cancel).await;
                    });
                }
                (ContextStatus::Terminating, false) => {
                    self.start(id, true, claim, move |inner, cancel| {
                        run_terminate(inner, id, cancel)
                    });
                }
                _ => continue,
            }
            resumed += 1;
        }
        if resumed > 0 {
            tracing::info!(operations = resumed, "resumed unfinished operations");
        }
        Ok(resumed)
    }

    /// With replicas: claims the operations whose owner is gone and resumes them here (the preferred replica at
    /// once, others after a grace), and keeps every live context's clusters held so their watchers are claimed.
    /// Scans the contexts only when an owner or replica left since the last call, an orphan waits, or every
    /// 30 s. Call it about every second; without replicas it does nothing.
    pub async fn adopt_orphans(&self) -> Result<usize, emco_appcontext::ContextError> {
        let Some(ownership) = &self.inner.ownership else {
            return Ok(0);
        };
        let as_context_error = |err: replicas::ReplicaError| {
            emco_appcontext::ContextError::Store(emco_store::Error::Backend(err.to_string()))
        };
        let members = ownership
            .replica
            .refresh_members()
            .await
            .map_err(as_context_error)?;
        let owners = replicas::context_owners(ownership.replica.store())
            .await
            .map_err(as_context_error)?;
        if !ownership.scan_due(owners.keys().copied().collect(), members) {
            return Ok(0);
        }
        self.resume().await
    }

    /// With replicas: this replica's lease was lost (and replaced); everything it ran under the old one is
    /// dropped here without writing (its fences fail anyway), and [`Rsync::adopt_orphans`] claims work anew.
    pub fn lease_lost(&self) {
        let Some(ownership) = &self.inner.ownership else {
            return;
        };
        ownership.forget_all();
        for worker in self.workers().values() {
            worker.cancel.cancel();
        }
        self.inner.watchers.abort_all();
    }

    /// The clusters whose ResourceBundleStates are watched now (those a live context uses), in name order.
    #[must_use]
    pub fn watched_clusters(&self) -> Vec<String> {
        self.inner.watchers.clusters()
    }

    /// Whether an operation of context `id` is running here.
    fn running(&self, id: ContextId) -> bool {
        self.workers()
            .get(&id)
            .is_some_and(|worker| !worker.task.is_finished())
    }

    /// Whether any operation is running (for tests and shutdown).
    #[must_use]
    pub fn busy(&self) -> bool {
        self.workers().values().any(|worker| !worker.task.is_finished())
    }

    /// Replaces the context's worker with `run`, after cancelling and awaiting the previous one if `supersede`.
    /// With replicas, the worker first claims the context (`claim`) and runs only when it got it; at its end it
    /// gives the claim up unless a newer worker took over here.
    fn start<F, Fut>(&self, id: ContextId, supersede: bool, claim: Claim, run: F)
    where
        F: FnOnce(Arc<Inner>, CancellationToken) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let serial = self
            .inner
            .next_worker
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let cancel = CancellationToken::new();
        let previous = self.workers().remove(&id);
        let inner = self.inner.clone();
        let token = cancel.clone();
        let task = tokio::spawn(async move {
            if let Some(previous) = previous {
                if supersede {
                    previous.cancel.cancel();
                }
                let _ = previous.task.await;
            }
            let is_current = || {
                inner
                    .workers
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&id)
                    .is_some_and(|w| w.serial == serial)
            };
            let owned = match &inner.ownership {
                Some(ownership) => ownership.claim_context(id, claim).await.is_some(),
                None => true,
            };
            if owned {
                run(inner.clone(), token).await;
                crate::watch::settle(&inner, id).await;
                if let Some(ownership) = &inner.ownership
                    && is_current()
                {
                    ownership.release_context(id).await;
                }
            }
            let mut workers = inner
                .workers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if workers.get(&id).is_some_and(|w| w.serial == serial) {
                workers.remove(&id);
            }
        });
        self.workers().insert(id, Worker { serial, cancel, task });
    }
}

/// The outcome of a set of batches: Cancelled if any was cancelled, else Failed if any failed (or panicked), else
/// Succeeded.
async fn overall(mut batches: JoinSet<BatchOutcome>) -> BatchOutcome {
    let mut outcome = BatchOutcome::Succeeded;
    while let Some(result) = batches.join_next().await {
        match result.unwrap_or(BatchOutcome::Failed) {
            BatchOutcome::Cancelled => outcome = BatchOutcome::Cancelled,
            BatchOutcome::Failed if outcome == BatchOutcome::Succeeded => outcome = BatchOutcome::Failed,
            _ => {}
        }
    }
    outcome
}

/// Sets the context's final status unless a stop or another operation got there first.
async fn finish(inner: &Inner, id: ContextId, running: ContextStatus, done: ContextStatus) {
    let result = update_meta_waiting(inner, id, |meta| {
        if meta.status == running && !meta.stop_requested {
            meta.status = done;
        }
    })
    .await;
    match result {
        Ok(meta) if meta.status == done => {
            tracing::info!(context = %id, status = %done, "operation finished")
        }
        Ok(_) => {}
        Err(err) => tracing::warn!(context = %id, error = %err, "cannot record the operation's end"),
    }
}

/// Changes the meta of the context this replica runs (fenced by its claim): a store that is briefly unreachable
/// (etcd restarting) is waited for, [`FINISH_ATTEMPTS`] times; a lost claim is not retried.
pub(crate) async fn update_meta_waiting(
    inner: &Inner,
    id: ContextId,
    mut change: impl FnMut(&mut ContextMeta),
) -> Result<ContextMeta, emco_appcontext::ContextError> {
    let mut attempt = 0u32;
    loop {
        match inner.update_meta(id, id, &mut change).await {
            Err(emco_appcontext::ContextError::Store(err)) if attempt < FINISH_ATTEMPTS => {
                attempt += 1;
                tracing::info!(context = %id, error = %err, "cannot record the operation's progress yet; trying again");
                tokio::time::sleep(inner.config.backoff(attempt)).await;
            }
            other => return other,
        }
    }
}

async fn wait_for_dependencies(
    inner: &Inner,
    id: ContextId,
    meta: &ContextMeta,
    app: &str,
    progress: &HashMap<String, watch::Receiver<AppProgress>>,
    clusters: &BTreeSet<String>,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let Some(app_meta) = meta.apps.iter().find(|a| a.name == app) else {
        return Ok(());
    };
    // The clusters of this app where the operation runs now.
    let here: Vec<&str> = app_meta
        .clusters
        .iter()
        .filter(|cluster| clusters.contains(*cluster))
        .map(String::as_str)
        .collect();
    for dependency in &app_meta.dependencies {
        let other = dependency.app.as_str();
        let then = if dependency.wait > 0 {
            format!(", then {} s", dependency.wait)
        } else {
            String::new()
        };
        // What the other app must reach: Ready, or deployed (any other opStatus waits for the deployment).
        let reached = if dependency.op_status == "Ready" {
            "Ready"
        } else {
            "deployed"
        };
        note_waiting(
            inner,
            id,
            app,
            &here,
            Some(Waiting::starting_now(
                format!("app {other} to be {reached}{then}"),
                None,
            )),
        )
        .await;
        match dependency.op_status.as_str() {
            "Ready" => loop {
                let mut records = inner.contexts.clusters(id).await.map_err(|err| err.to_string())?;
                // Ready where the operation runs now (a rollout's batch); an app with no cluster there is not
                // waited for.
                records.retain(|record| record.app == other && clusters.contains(&record.cluster));
                if records.is_empty() || app_ready(&records, other) {
                    break;
                }
                tokio::select! {
                    () = tokio::time::sleep(READY_POLL) => {}
                    () = cancel.cancelled() => return Err("cancelled".into()),
                }
            },
            _ => {
                let Some(receiver) = progress.get(other) else {
                    continue;
                };
                let mut receiver = receiver.clone();
                let reached = tokio::select! {
                    reached = receiver.wait_for(|p| *p != AppProgress::Running) => reached.map(|p| *p).unwrap_or(AppProgress::Failed),
                    () = cancel.cancelled() => return Err("cancelled".into()),
                };
                if reached == AppProgress::Failed {
                    return Err(format!(
                        "app '{app}' depends on app '{other}', which failed to deploy"
                    ));
                }
            }
        }
        if dependency.wait > 0 {
            let wait = Duration::from_secs(dependency.wait);
            note_waiting(
                inner,
                id,
                app,
                &here,
                Some(Waiting::starting_now(
                    format!(
                        "the {} s that follow app {other} being {reached}",
                        dependency.wait
                    ),
                    Some((wait, "continues")),
                )),
            )
            .await;
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => return Err("cancelled".into()),
            }
        }
    }
    if !app_meta.dependencies.is_empty() {
        note_waiting(inner, id, app, &here, None).await;
    }
    Ok(())
}

/// Records on each of `app`'s `clusters` what its batch waits for (`None`: nothing more); a write that fails only
/// leaves the status less precise, so it is logged.
async fn note_waiting(inner: &Inner, id: ContextId, app: &str, clusters: &[&str], waiting: Option<Waiting>) {
    for &cluster in clusters {
        let result = inner
            .update_cluster(id, app, cluster, |stored| stored.waiting.clone_from(&waiting))
            .await;
        match result {
            Ok(_) | Err(ContextError::NotFound(_)) => {}
            Err(err) => {
                tracing::debug!(context = %id, app, cluster, error = %err, "cannot record what rsync waits for")
            }
        }
    }
}

async fn run_instantiate(inner: Arc<Inner>, id: ContextId, cancel: CancellationToken) {
    let meta = match inner.contexts.meta(id).await {
        Ok(meta) => meta,
        Err(err) => {
            return tracing::warn!(context = %id, error = %err, "cannot read the context to instantiate");
        }
    };
    if meta.status != ContextStatus::Instantiating || meta.stop_requested {
        return;
    }
    if meta.rollout_paused() {
        return tracing::info!(context = %id, "the rollout is paused: waiting for /resume");
    }
    tracing::info!(context = %id, apps = meta.apps.len(), supersedes = ?meta.supersedes, "instantiating");
    let direction = meta.supersedes.map_or(Direction::Apply, Direction::Update);
    let meta = Arc::new(meta);
    let overall = match meta.rollout.clone() {
        None => {
            let clusters: BTreeSet<String> = meta.clusters().into_iter().collect();
            apply_clusters(&inner, id, &meta, &clusters, direction, &cancel)
                .await
                .outcome()
        }
        Some(progress) => match crate::rollout::run(&inner, id, &meta, progress, direction, &cancel).await {
            crate::rollout::End::Complete { failed: false } => BatchOutcome::Succeeded,
            crate::rollout::End::Complete { failed: true } => BatchOutcome::Failed,
            crate::rollout::End::Paused => return,
            crate::rollout::End::Cancelled => BatchOutcome::Cancelled,
        },
    };
    match overall {
        BatchOutcome::Succeeded => {
            finish(
                &inner,
                id,
                ContextStatus::Instantiating,
                ContextStatus::Instantiated,
            )
            .await
        }
        BatchOutcome::Failed => {
            finish(
                &inner,
                id,
                ContextStatus::Instantiating,
                ContextStatus::InstantiateFailed,
            )
            .await
        }
        BatchOutcome::Cancelled => tracing::info!(context = %id, "instantiation cancelled"),
    }
}

/// What applying a context on some of its clusters came to.
#[derive(Debug, Default)]
pub(crate) struct ClustersOutcome {
    /// Whether the operation was cancelled before every (app, cluster) finished.
    pub(crate) cancelled: bool,
    /// The clusters where an app failed (an apply was refused, retries ran out, or a dependency failed).
    pub(crate) failed: BTreeSet<String>,
}

impl ClustersOutcome {
    fn outcome(&self) -> BatchOutcome {
        if self.cancelled {
            BatchOutcome::Cancelled
        } else if self.failed.is_empty() {
            BatchOutcome::Succeeded
        } else {
            BatchOutcome::Failed
        }
    }
}

/// Applies every app of the context on those of its clusters in `clusters`: each app once the apps it depends on
/// are deployed (or ready) on these clusters, all its clusters at once.
pub(crate) async fn apply_clusters(
    inner: &Arc<Inner>,
    id: ContextId,
    meta: &Arc<ContextMeta>,
    clusters: &BTreeSet<String>,
    direction: Direction,
    cancel: &CancellationToken,
) -> ClustersOutcome {
    let mut senders = HashMap::new();
    let mut receivers = HashMap::new();
    for app in &meta.apps {
        let (sender, receiver) = watch::channel(AppProgress::Running);
        senders.insert(app.name.clone(), sender);
        receivers.insert(app.name.clone(), receiver);
    }
    let receivers = Arc::new(receivers);
    let clusters = Arc::new(clusters.clone());
    let mut apps = JoinSet::new();
    for app in meta.apps.clone() {
        let (inner, meta, receivers, cancel, clusters) = (
            inner.clone(),
            meta.clone(),
            receivers.clone(),
            cancel.clone(),
            clusters.clone(),
        );
        let sender = senders.remove(&app.name);
        apps.spawn(async move {
            let here: Vec<String> = app
                .clusters
                .iter()
                .filter(|cluster| clusters.contains(*cluster))
                .cloned()
                .collect();
            if let Err(reason) =
                wait_for_dependencies(&inner, id, &meta, &app.name, &receivers, &clusters, &cancel).await
            {
                if cancel.is_cancelled() {
                    return (here, vec![BatchOutcome::Cancelled]);
                }
                tracing::warn!(context = %id, app = app.name, reason, "app not applied");
                for cluster in &here {
                    let _ = inner
                        .update_cluster(id, &app.name, cluster, |record| {
                            for resource in &mut record.resources {
                                resource.status = emco_model::RsyncStatus::Failed;
                                resource.error = Some(reason.clone());
                            }
                        })
                        .await;
                }
                if let Some(sender) = &sender {
                    let _ = sender.send(AppProgress::Failed);
                }
                let failed = vec![BatchOutcome::Failed; here.len()];
                return (here, failed);
            }
            let mut batches = JoinSet::new();
            for (index, cluster) in here.iter().enumerate() {
                let batch = sync_cluster(
                    inner.clone(),
                    id,
                    app.name.clone(),
                    cluster.clone(),
                    meta.namespace.clone(),
                    direction,
                    meta.credentials.clone(),
                    cancel.clone(),
                );
                batches.spawn(async move { (index, batch.await) });
            }
            let mut outcomes = vec![BatchOutcome::Failed; here.len()];
            while let Some(done) = batches.join_next().await {
                if let Ok((index, outcome)) = done {
                    outcomes[index] = outcome;
                }
            }
            let deployed = outcomes.iter().all(|outcome| *outcome == BatchOutcome::Succeeded);
            if let Some(sender) = &sender {
                let _ = sender.send(if deployed {
                    AppProgress::Deployed
                } else {
                    AppProgress::Failed
                });
            }
            (here, outcomes)
        });
    }
    let mut outcome = ClustersOutcome::default();
    while let Some(result) = apps.join_next().await {
        let Ok((here, outcomes)) = result else {
            // A panicked app counts as failed on every cluster of the batch.
            outcome.failed.extend(clusters.iter().cloned());
            continue;
        };
        for (index, app_outcome) in outcomes.iter().enumerate() {
            match app_outcome {
                BatchOutcome::Cancelled => outcome.cancelled = true,
                BatchOutcome::Failed => {
                    if let Some(cluster) = here.get(index) {
                        outcome.failed.insert(cluster.clone());
                    }
                }
                BatchOutcome::Succeeded => {}
            }
        }
    }
    outcome
}

async fn run_terminate(inner: Arc<Inner>, id: ContextId, cancel: CancellationToken) {
    let meta = match inner.contexts.meta(id).await {
        Ok(meta) => meta,
        Err(err) => {
            return tracing::warn!(context = %id, error = %err, "cannot read the context to terminate");
        }
    };
    if meta.status != ContextStatus::Terminating || meta.stop_requested {
        return;
    }
    tracing::info!(context = %id, "terminating");
    let mut batches = JoinSet::new();
    // Reverse app order; every cluster of every app at once.
    for app in meta.apps.iter().rev() {
        for cluster in &app.clusters {
            batches.spawn(sync_cluster(
                inner.clone(),
                id,
                app.name.clone(),
                cluster.clone(),
                meta.namespace.clone(),
                Direction::Delete,
                meta.credentials.clone(),
                cancel.clone(),
            ));
        }
    }
    let overall = overall(batches).await;
    match overall {
        BatchOutcome::Succeeded => {
            finish(&inner, id, ContextStatus::Terminating, ContextStatus::Terminated).await
        }
        BatchOutcome::Failed => {
            finish(
                &inner,
                id,
                ContextStatus::Terminating,
                ContextStatus::TerminateFailed,
            )
            .await
        }
        BatchOutcome::Cancelled => tracing::info!(context = %id, "termination cancelled"),
    }
}

/// After context `id` finished instantiating: if it takes over from other contexts (an update), each of them
/// still holding objects — the one it supersedes and, before that one, those whose own update failed — deletes
/// the objects only it has and ends `Updated` (`UpdateFailed` when a deletion failed). When `id` failed to
/// instantiate, the context it supersedes ends `UpdateFailed` and keeps its objects. Also run by `resume`, so a
/// restart between the two steps finishes the handover.
async fn supersede_if_done(inner: Arc<Inner>, id: ContextId, cancel: CancellationToken) {
    let meta = match inner.contexts.meta(id).await {
        Ok(meta) => meta,
        Err(err) => return tracing::warn!(context = %id, error = %err, "cannot read the updated context"),
    };
    let Some(mut old) = meta.supersedes else { return };
    match meta.status {
        ContextStatus::Instantiated => {}
        ContextStatus::InstantiateFailed => {
            mark_superseded(&inner, id, old, ContextStatus::UpdateFailed).await;
            return;
        }
        _ => return,
    }
    for _ in 0..MAX_LINEAGE {
        let previous = match inner.contexts.meta(old).await {
            Ok(previous) => previous,
            Err(err) => {
                return tracing::warn!(context = %old, error = %err, "cannot read the superseded context");
            }
        };
        if superseding_pending(previous.status) {
            match hand_over(&inner, id, &previous, &cancel).await {
                Some(done) => mark_superseded(&inner, id, old, done).await,
                None => return tracing::info!(context = %old, "handover cancelled"),
            }
        }
        // An older context whose own update failed may still hold objects nobody else does; a context that was
        // not pending had its own predecessors handed over when it took over (or was terminated with them).
        match previous.supersedes {
            Some(older) if superseding_pending(previous.status) => old = older,
            _ => return,
        }
    }
}

/// Deletes what `previous` holds and `successor` does not, on every cluster of every app of `previous`: the
/// status `previous` ends with, or `None` when cancelled.
async fn hand_over(
    inner: &Arc<Inner>,
    successor: ContextId,
    previous: &ContextMeta,
    cancel: &CancellationToken,
) -> Option<ContextStatus> {
    let old = previous.id;
    tracing::info!(context = %old, successor = %successor, "handing over to the updated context");
    mark_superseded(inner, successor, old, ContextStatus::Updating).await;
    // The predecessor's records are written under the successor's claim.
    if let Some(ownership) = &inner.ownership {
        ownership.alias(old, successor);
    }
    let mut batches = JoinSet::new();
    for app in previous.apps.iter().rev() {
        for cluster in &app.clusters {
            batches.spawn(sync_cluster(
                inner.clone(),
                old,
                app.name.clone(),
                cluster.clone(),
                previous.namespace.clone(),
                Direction::Supersede(successor),
                previous.credentials.clone(),
                cancel.clone(),
            ));
        }
    }
    let outcome = overall(batches).await;
    if let Some(ownership) = &inner.ownership {
        ownership.unalias(old);
    }
    match outcome {
        BatchOutcome::Succeeded => Some(ContextStatus::Updated),
        BatchOutcome::Failed => Some(ContextStatus::UpdateFailed),
        BatchOutcome::Cancelled => None,
    }
}

/// Records the status of a context an update (`owner`) takes over from, unless it left the update meanwhile (a
/// terminate took it); its clusters stay watched only while it is still live.
async fn mark_superseded(inner: &Arc<Inner>, owner: ContextId, id: ContextId, status: ContextStatus) {
    let result = inner
        .update_meta(owner, id, |meta| {
            if superseding_pending(meta.status) {
                meta.status = status;
            }
        })
        .await;
    match result {
        Ok(meta) => tracing::info!(context = %id, status = %meta.status, "superseded context"),
        Err(err) => tracing::warn!(context = %id, error = %err, "cannot record the handover"),
    }
    crate::watch::settle(inner, id).await;
}

/// Whether a context superseded by an update still holds objects to hand over (it was never terminated, nor
/// handed over completely).
fn superseding_pending(status: ContextStatus) -> bool {
    status.may_hold_objects()
}

/// Ends the running operation of `id` as stopped; a stopped update leaves the context it was taking over from
/// `UpdateFailed` (it keeps its objects until a terminate).
async fn run_stop(inner: Arc<Inner>, id: ContextId) {
    let result = inner
        .update_meta(id, id, |meta| {
            meta.status = match meta.status {
                ContextStatus::Instantiating => ContextStatus::InstantiateFailed,
                ContextStatus::Terminating => ContextStatus::TerminateFailed,
                other => other,
            };
        })
        .await;
    match result {
        Ok(meta) => {
            tracing::info!(context = %id, status = %meta.status, "operation stopped");
            if let Some(old) = meta.supersedes
                && meta.status == ContextStatus::InstantiateFailed
            {
                mark_superseded(&inner, id, old, ContextStatus::UpdateFailed).await;
            }
        }
        Err(err) => tracing::warn!(context = %id, error = %err, "cannot record the stopped operation"),
    }
}

impl Engine for Rsync {
    fn agent_reported(&self, id: ContextId, app: &str, cluster: &str) {
        self.inner.pull.wake(id, app, cluster);
    }

    fn agent_status(
        &self,
        cluster: &str,
        bundles: Vec<(String, String)>,
    ) -> emco_appcontext::AgentStatusFuture {
        let (inner, cluster) = (self.inner.clone(), cluster.to_string());
        Box::pin(async move { crate::pull::store_agent_status(&inner, &cluster, bundles).await })
    }

    fn instantiate(&self, id: ContextId) {
        self.start(id, false, Claim::Force, move |inner, cancel| async move {
            run_instantiate(inner.clone(), id, cancel.clone()).await;
            supersede_if_done(inner, id, cancel).await;
        });
    }

    fn terminate(&self, id: ContextId) {
        // A running instantiation is cancelled first.
        self.start(id, true, Claim::Force, move |inner, cancel| {
            run_terminate(inner, id, cancel)
        });
    }

    fn stop(&self, id: ContextId) {
        self.start(id, true, Claim::Force, move |inner, _| run_stop(inner, id));
    }

    fn capabilities(
        &self,
        clusters: Vec<String>,
        wait: std::time::Duration,
    ) -> emco_appcontext::CapabilitiesFuture {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move { inner.clients.capabilities(clusters, wait).await })
    }

    fn nodes(&self, clusters: Vec<String>, wait: std::time::Duration) -> emco_appcontext::NodesFuture {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move { inner.clients.nodes(clusters, wait).await })
    }
}
