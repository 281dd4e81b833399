//! One watcher per cluster on its ResourceBundleStates: each status the monitor writes is stored in the AppContext
//! named by the bundle's label (`<contextId>-<app>`), and in the live contexts of that context's update chain
//! (which label their objects with its id), with the time it was heard (`heard_at`). The monitor's
//! heartbeat (`status.heartbeat`) changes the status even when nothing else did, so a live monitor keeps `heard_at`
//! recent and the status answers can tell a silent cluster from a quiet one. A beat that changed nothing but the
//! heartbeat since the status this watcher stored (a fingerprint of the status without it, per context and app)
//! costs a small write under the record's heard key, batched with other clusters' beats (`heartbeats.rs`), not a
//! rewrite of the record: with thousands of bundles beating every 20 s, that is what keeps an idle emco idle. A deleted bundle leaves the last
//! status in place (the final state of a terminated app). A watcher lists only once the cluster serves bundles (this
//! process installed their CRD there, or the cluster has it). The watcher relists after errors and is restarted if
//! it ever ends, so a restarted monitor or a broken watch does not stop status from flowing.
//!
//! [`Watchers`] keeps a cluster's watcher exactly while a live context (Instantiating, Instantiated,
//! Terminating) uses the cluster: a batch holds its cluster for its context, the end of every operation settles
//! the context (held while it is still live, released once it is not), and [`Rsync::resume`] holds the clusters
//! of the live contexts it finds after a restart. The last release ends the watcher.
//!
//! [`Rsync::resume`]: crate::Rsync::resume

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use emco_appcontext::{Fence, JsonText};
use emco_k8s::{DEPLOYMENT_ID_LABEL, RBS_GROUP, RBS_HEARTBEAT_FIELD, RBS_KIND, RBS_PLURAL, RBS_VERSION};
use emco_model::{ContextId, ContextStatus, now_timestamp};
use futures::StreamExt;
use kube::api::Api;
use serde_json::value::RawValue;
use tokio::task::JoinHandle;

use crate::engine::Inner;

/// Every how many checks (four per `git_status_poll`) a GitOps cluster's status watcher reads the cluster's Git
/// settings again: every 30 s at the default poll.
const GIT_SETTINGS_RECHECK: u32 = 120;
/// How often a watcher waiting for the bundles' CRD asks the cluster whether it has it (meanwhile it waits for this
/// process to install it, without a request).
const CRD_RECHECK: Duration = Duration::from_secs(30);
/// Pause before restarting a watcher whose stream ended or whose client could not be built.
const RESTART_PAUSE: Duration = Duration::from_secs(2);
/// With replicas: how often a replica that needs a cluster watched checks whether it may claim it (its owner
/// left).
const CLAIM_POLL: Duration = Duration::from_secs(1);
/// With replicas: how often the replica watching a cluster checks whether rendezvous hashing prefers another live
/// replica for it (which then takes it over).
const REBALANCE_CHECK: Duration = Duration::from_secs(5);
/// With replicas: how long a replica that handed a cluster's watcher over waits before it would claim it back, so
/// that the preferred replica — which polls every [`CLAIM_POLL`], later still on a loaded machine — takes it.
const HANDOVER_GRACE: Duration = Duration::from_secs(5);
/// With replicas: after a handover the preferred replica did not take (it had no watcher for the cluster yet,
/// e.g. it learns of a context only at its next scan of the contexts), how long the watcher stays before it offers
/// the cluster again among the same replicas; doubled after every such failure up to [`HANDOVER_RETRY_MAX`].
const HANDOVER_RETRY: Duration = Duration::from_secs(30);
/// The longest wait between two offers of a cluster among the same replicas.
const HANDOVER_RETRY_MAX: Duration = Duration::from_secs(600);

/// What a watcher stored last, per (context, app): the fingerprint of the status without its heartbeat.
pub(crate) type Stored = HashMap<(ContextId, String), u64>;

/// A fingerprint of a bundle status without its heartbeat field, from its JSON text: the top-level fields'
/// names and raw values in order, the heartbeat's left out — nothing parsed into a tree, nothing allocated (the
/// text is the API server's serialization, the same for the same status). `None` when it is not JSON.
fn fingerprint(status: &RawValue) -> Option<u64> {
    fingerprint_text(status.get())
}

/// [`fingerprint`] of JSON text.
pub(crate) fn fingerprint_text(status: &str) -> Option<u64> {
    use std::hash::{BuildHasher, Hasher};

    /// Hashes the fields of a JSON object as they are read.
    struct Fields(u64);

    impl<'de> serde::Deserialize<'de> for Fields {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Visitor;
            impl<'de> serde::de::Visitor<'de> for Visitor {
                type Value = Fields;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a bundle status object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                    let mut hasher = foldhash::fast::FixedState::with_seed(0).build_hasher();
                    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                        let value: &'de RawValue = map.next_value()?;
                        if key == RBS_HEARTBEAT_FIELD {
                            continue;
                        }
                        hasher.write(key.as_bytes());
                        hasher.write_u8(0xff);
                        hasher.write(value.get().as_bytes());
                        hasher.write_u8(0xfe);
                    }
                    Ok(Fields(hasher.finish()))
                }
            }
            deserializer.deserialize_map(Visitor)
        }
    }

    serde_json::from_str::<Fields>(status)
        .ok()
        .map(|Fields(hash)| hash)
}

/// Splits a bundle label into its context and app (at the first `-`: app names may contain `-`).
pub(crate) fn parse_label(label: &str) -> Option<(ContextId, &str)> {
    let (id, app) = label.split_once('-')?;
    Some((id.parse().ok()?, app))
}

/// A ResourceBundleState as its watcher reads it, for every heartbeat of every bundle: the metadata it uses (the
/// managed fields, which describe the whole status, are skipped unread), and the status as its JSON text, parsed
/// into a tree only when more than its heartbeat changed; the spec is skipped.
#[derive(Clone, Debug, serde::Deserialize)]
pub(crate) struct BundleState {
    #[serde(deserialize_with = "used_metadata")]
    metadata: kube::api::ObjectMeta,
    #[serde(default)]
    pub(crate) status: Option<Box<RawValue>>,
}

impl BundleState {
    /// Its labels.
    pub(crate) fn metadata_labels(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.metadata.labels.as_ref()
    }

    /// A bundle as a pull cluster's agent reports it: its `emco/deployment-id` label and its status (JSON text);
    /// `None` when the status is not JSON.
    pub(crate) fn reported(label: &str, status: String) -> Option<Self> {
        let status = RawValue::from_string(status).ok()?;
        Some(Self {
            metadata: kube::api::ObjectMeta {
                labels: Some(std::collections::BTreeMap::from([(
                    DEPLOYMENT_ID_LABEL.to_string(),
                    label.to_string(),
                )])),
                ..kube::api::ObjectMeta::default()
            },
            status: Some(status),
        })
    }
}

/// The metadata a bundle watcher uses (names, labels, resource version), without the rest.
fn used_metadata<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<kube::api::ObjectMeta, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Used {
        name: Option<String>,
        namespace: Option<String>,
        uid: Option<String>,
        resource_version: Option<String>,
        labels: Option<std::collections::BTreeMap<String, String>>,
    }
    let used = <Used as serde::Deserialize>::deserialize(deserializer)?;
    Ok(kube::api::ObjectMeta {
        name: used.name,
        namespace: used.namespace,
        uid: used.uid,
        resource_version: used.resource_version,
        labels: used.labels,
        ..kube::api::ObjectMeta::default()
    })
}

impl kube::Resource for BundleState {
    type DynamicType = ();
    type Scope = kube::core::NamespaceResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        RBS_KIND.into()
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        RBS_GROUP.into()
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        RBS_VERSION.into()
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        RBS_PLURAL.into()
    }
    fn meta(&self) -> &kube::api::ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut kube::api::ObjectMeta {
        &mut self.metadata
    }
}

/// Whether the watcher may go on: `false` once its cluster's claim was lost (with replicas).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claimed {
    Still,
    Lost,
}

/// Stores `bundle`'s status (see the module's doc), heard at `heard_at` (now for a watched bundle; for a GitOps
/// cluster, the time of the status commit it came in).
pub(crate) async fn store(
    engine: &Weak<Inner>,
    inner: &Inner,
    cluster: &str,
    bundle: &BundleState,
    heard_at: &str,
    fence: Option<&Fence>,
    stored: &mut Stored,
) -> Claimed {
    let Some(label) = bundle
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(DEPLOYMENT_ID_LABEL))
    else {
        return Claimed::Still;
    };
    let Some((root, app)) = parse_label(label) else {
        return Claimed::Still;
    };
    let Some(raw) = bundle.status.as_deref().filter(|raw| raw.get() != "null") else {
        return Claimed::Still;
    };
    if inner.heartbeats.take_lost(cluster) {
        return lost(cluster);
    }
    let Some(fingerprint) = fingerprint(raw) else {
        tracing::debug!(
            cluster,
            label,
            "a bundle status that is not a JSON object; ignored"
        );
        return Claimed::Still;
    };
    // Copied only when a status is stored.
    let mut copied: Option<JsonText> = None;
    // With replicas the context's records may be unknown here (another replica runs the context): the chain's
    // first context and, once looked up, its live members.
    for id in inner.watchers.lineage(root) {
        let key = (id, app.to_string());
        if stored.get(&key) == Some(&fingerprint) {
            // Nothing but the heartbeat changed since this watcher stored the status: note the time only, in the
            // next batch.
            inner.heartbeats.note(
                engine,
                emco_appcontext::HeardNote {
                    id,
                    app: app.to_string(),
                    cluster: cluster.to_string(),
                    at: heard_at.to_string(),
                    fence: fence.cloned(),
                },
            );
            continue;
        }
        let status = copied.get_or_insert_with(|| JsonText::from(raw.to_owned()));
        match store_in(inner, id, app, cluster, status, heard_at, fence).await {
            Outcome::Lost => return Claimed::Lost,
            Outcome::Held => {
                stored.insert(key, fingerprint);
            }
            Outcome::NotHeld => {
                stored.remove(&key);
            }
        }
    }
    Claimed::Still
}

fn lost(cluster: &str) -> Claimed {
    tracing::warn!(
        cluster,
        "this replica no longer owns the cluster's status watcher; dropping it"
    );
    Claimed::Lost
}

/// What [`store_in`] did with a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The record holds it now (written, or it held it already).
    Held,
    /// Not stored (not one of ours, or the write failed).
    NotHeld,
    /// This replica no longer owns the cluster's watcher.
    Lost,
}

async fn store_in(
    inner: &Inner,
    id: ContextId,
    app: &str,
    cluster: &str,
    status: &JsonText,
    heard: &str,
    fence: Option<&Fence>,
) -> Outcome {
    // A status the record holds already is not written again (the watcher relists now and then).
    let result = inner
        .contexts
        .update_cluster_fenced(id, app, cluster, fence, |record| {
            if record.cluster_status.as_ref() != Some(status) {
                record.cluster_status = Some(status.clone());
                record.heard_at = Some(heard.to_string());
            }
        })
        .await;
    match result {
        Ok(_) => Outcome::Held,
        // Not one of ours (another emco's, or a deleted context): ignore.
        Err(emco_appcontext::ContextError::NoSuchCluster { .. }) => Outcome::NotHeld,
        Err(emco_appcontext::ContextError::Fenced { .. }) => {
            lost(cluster);
            Outcome::Lost
        }
        Err(err) => {
            tracing::debug!(context = %id, app, cluster, error = %err, "cannot store a cluster status");
            Outcome::NotHeld
        }
    }
}

/// With replicas: waits until this replica owns the cluster's watcher (`None` without replicas); `Err` when the
/// engine is gone.
async fn claim(engine: &Weak<Inner>, cluster: &str) -> Result<Option<Fence>, ()> {
    loop {
        let inner = engine.upgrade().ok_or(())?;
        let Some(ownership) = &inner.ownership else {
            return Ok(None);
        };
        if let Some(fence) = ownership.claim_cluster(cluster).await {
            return Ok(Some(fence));
        }
        drop(inner);
        tokio::time::sleep(CLAIM_POLL).await;
    }
}

/// Follows one cluster's ResourceBundleStates until the task is aborted or the engine is gone. It holds the engine
/// only while it handles an event, so dropping the last [`Rsync`](crate::Rsync) handle ends its watchers.
pub(crate) async fn watch_cluster(engine: Weak<Inner>, cluster: String) {
    let mut fence: Option<Fence> = None;
    // The handovers offered among the same live replicas that came back here.
    let mut offers = Offers::default();
    // Whether the inner loop below ended by handing the cluster over (then the pause is the grace).
    let mut handed_over = false;
    loop {
        let owned = engine
            .upgrade()
            .is_some_and(|inner| inner.ownership.is_none() || fence.is_some());
        if !owned {
            match claim(&engine, &cluster).await {
                Ok(claimed) => fence = claimed,
                Err(()) => return,
            }
        }
        let Some(inner) = engine.upgrade() else {
            return;
        };
        // A pull cluster is never dialled: its agent reports its status.
        if inner.clients.is_pull(&cluster).await.unwrap_or(false) {
            drop(inner);
            tokio::time::sleep(RESTART_PAUSE).await;
            continue;
        }
        // A GitOps cluster is never dialled: its monitor's status is read from its status branch.
        match inner.clients.git_target(&cluster).await {
            Ok(Some(target)) => {
                let poll = inner.config.git_status_poll;
                drop(inner);
                if watch_git(&engine, &cluster, &target, poll, &mut fence).await == Claimed::Lost {
                    continue;
                }
                tokio::time::sleep(RESTART_PAUSE).await;
                continue;
            }
            Ok(None) => {}
            Err(err) => {
                drop(inner);
                tracing::debug!(cluster, error = %err, "the GitOps cluster's settings cannot be read yet");
                tokio::time::sleep(RESTART_PAUSE).await;
                continue;
            }
        }
        let client = inner.clients.client(&cluster).await;
        drop(inner);
        let client = match client {
            Ok(client) => client,
            Err(err) => {
                tracing::debug!(cluster, error = %err, "no client for the bundle watcher yet");
                tokio::time::sleep(RESTART_PAUSE).await;
                continue;
            }
        };
        if !wait_for_bundle_crd(&engine, &cluster, &client).await {
            return;
        }
        // What this session of the watcher stored; a new session starts from the records again.
        let mut stored = Stored::new();
        let mut events =
            crate::bundle_stream::bundle_states(client, Some(reachable(&engine, &cluster))).boxed();
        let mut rebalance = tokio::time::interval(REBALANCE_CHECK);
        rebalance.tick().await;
        loop {
            let event = tokio::select! {
                event = events.next() => event,
                _ = rebalance.tick() => {
                    if let Some(live) = should_hand_over(&engine, &cluster, fence.as_ref(), &offers) {
                        if let Some(inner) = engine.upgrade()
                            && let Some(ownership) = &inner.ownership
                        {
                            tracing::info!(cluster, "handing the cluster's status watcher to the replica preferred for it");
                            ownership.release_clusters(std::slice::from_ref(&cluster));
                        }
                        offers.offered(live);
                        fence = None;
                        handed_over = true;
                        break;
                    }
                    continue;
                }
            };
            let Some(event) = event else { break };
            match event {
                Ok(bundle) => {
                    let Some(inner) = engine.upgrade() else {
                        return;
                    };
                    let heard_at = now_timestamp();
                    if store(
                        &engine,
                        &inner,
                        &cluster,
                        &bundle,
                        &heard_at,
                        fence.as_ref(),
                        &mut stored,
                    )
                    .await
                        == Claimed::Lost
                    {
                        if let Some(ownership) = &inner.ownership {
                            ownership.forget_cluster(&cluster);
                        }
                        fence = None;
                        break;
                    }
                }
                Err(err) => {
                    tracing::debug!(cluster, error = %err, "bundle watch failed; relisting after back-off")
                }
            }
        }
        let pause = if std::mem::take(&mut handed_over) {
            HANDOVER_GRACE
        } else {
            RESTART_PAUSE
        };
        tokio::time::sleep(pause).await;
    }
}

/// The status of a GitOps cluster, read from its status branch when it has a new commit (the heads of the
/// repository's branches fetched together for every cluster there, at most every half `poll`, and checked every
/// quarter), each bundle file stored as a watched bundle would be, heard at the commit's time; ends when the
/// cluster's Git settings change (or it stops being a GitOps cluster), or when the claim is lost (answered `Lost`).
async fn watch_git(
    engine: &Weak<Inner>,
    cluster: &str,
    target: &Arc<crate::gitops::GitTarget>,
    poll: Duration,
    fence: &mut Option<Fence>,
) -> Claimed {
    let mut stored = Stored::new();
    let mut last: Option<String> = None;
    let mut polls = 0u32;
    loop {
        let Some(inner) = engine.upgrade() else {
            return Claimed::Still;
        };
        // The cluster's Git settings are read again now and then (a catalog read of the cluster and its two sync
        // objects), not at every poll.
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(GIT_SETTINGS_RECHECK) {
            match inner.clients.git_target(cluster).await {
                Ok(Some(current)) if Arc::ptr_eq(&current, target) => {}
                _ => return Claimed::Still,
            }
        }
        // The repository's heads are fetched at most every half `poll` (for every cluster there at once); a check
        // against them costs nothing, so the watcher checks every quarter: a commit is seen within ~¾ `poll`.
        match crate::gitops::read_status(target, cluster, last.as_deref(), poll / 2).await {
            Ok(Some(crate::gitops::StatusCommit {
                commit,
                heard_at,
                files,
            })) => {
                for content in files {
                    let Ok(bundle) = serde_json::from_slice::<BundleState>(&content) else {
                        tracing::debug!(cluster, "a status file that is not a bundle; ignored");
                        continue;
                    };
                    if store(
                        engine,
                        &inner,
                        cluster,
                        &bundle,
                        &heard_at,
                        fence.as_ref(),
                        &mut stored,
                    )
                    .await
                        == Claimed::Lost
                    {
                        if let Some(ownership) = &inner.ownership {
                            ownership.forget_cluster(cluster);
                        }
                        *fence = None;
                        return Claimed::Lost;
                    }
                }
                last = Some(commit);
            }
            Ok(None) => {}
            Err(err) => tracing::debug!(cluster, error = %err, "cannot read the cluster's status branch yet"),
        }
        drop(inner);
        tokio::time::sleep(poll / 4).await;
    }
}

/// What a bundle watcher waits for after its cluster could not be reached: the cluster's prober finding it
/// answering, or rsync's `unreachable_retry`; it holds no engine while it waits.
fn reachable(engine: &Weak<Inner>, cluster: &str) -> crate::bundle_stream::Reachable {
    let engine = engine.clone();
    let cluster = cluster.to_string();
    Box::new(move || {
        let registered = engine.upgrade().map(|inner| {
            (
                crate::reachability::Reachability::wait(&inner, &cluster),
                inner.config.unreachable_delay(),
            )
        });
        Box::pin(async move {
            let Some((mut wait, delay)) = registered else {
                return std::future::pending().await;
            };
            tokio::select! {
                () = wait.answered() => {}
                () = tokio::time::sleep(delay) => {}
            }
        })
    })
}

/// Waits until the cluster serves ResourceBundleStates: this process installed their CRD there (its first apply
/// does), or the cluster has it (one read, then another every [`CRD_RECHECK`] while it has not). Listing a kind the
/// cluster does not serve only fails and is retried: at 10,000 clusters, watchers started with their contexts made
/// most of the reads kubesim served that way. `false` when the engine is gone.
async fn wait_for_bundle_crd(engine: &Weak<Inner>, cluster: &str, client: &kube::Client) -> bool {
    use emco_k8s::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    loop {
        let Some(crd) = engine.upgrade().map(|inner| inner.clients.bundle_crd(cluster)) else {
            return false;
        };
        if crd.installed_within(std::time::Duration::ZERO).await {
            return true;
        }
        if let Ok(Some(_)) = crds.get_opt(emco_k8s::RBS_CRD_NAME).await {
            return true;
        }
        if crd.installed_within(CRD_RECHECK).await {
            return true;
        }
    }
}

/// The handovers of one cluster's watcher among the same live replicas that came back (the preferred replica did
/// not take the cluster within [`HANDOVER_GRACE`]): the next offer among them waits [`HANDOVER_RETRY`], doubled
/// after each, so a replica that learns of the cluster late still gets it, and one that never does costs a
/// watcher restart every [`HANDOVER_RETRY_MAX`] at most.
#[derive(Debug, Default)]
struct Offers {
    /// The live replicas of the last offer.
    among: BTreeSet<String>,
    /// Offers among them so far.
    made: u32,
    /// When the last one was made.
    at: Option<tokio::time::Instant>,
}

impl Offers {
    /// Notes an offer among `live`.
    fn offered(&mut self, live: BTreeSet<String>) {
        if self.among != live {
            self.made = 0;
        }
        self.among = live;
        self.made = self.made.saturating_add(1);
        self.at = Some(tokio::time::Instant::now());
    }

    /// Whether the cluster may be offered among `live` now: at once among other replicas than the last offer's,
    /// else once the back-off since that offer passed.
    fn may_offer(&self, live: &BTreeSet<String>) -> bool {
        let Some(at) = self.at else {
            return true;
        };
        if self.among != *live {
            return true;
        }
        let doublings = self.made.saturating_sub(1).min(16);
        let wait = HANDOVER_RETRY
            .saturating_mul(1 << doublings)
            .min(HANDOVER_RETRY_MAX);
        at.elapsed() >= wait
    }
}

/// With replicas, when this replica owns the cluster's watcher but rendezvous hashing prefers another live
/// replica for it: the live replicas now (`None`: keep it). A watcher that came back after an offer among the
/// same replicas stays for the offers' back-off.
fn should_hand_over(
    engine: &Weak<Inner>,
    cluster: &str,
    fence: Option<&Fence>,
    offers: &Offers,
) -> Option<BTreeSet<String>> {
    let inner = engine.upgrade()?;
    let ownership = inner.ownership.as_ref()?;
    fence?;
    let live = ownership.replica.live();
    if live.len() < 2 || !offers.may_offer(&live) {
        return None;
    }
    let key = emco_appcontext::replicas::cluster_owner_key(cluster);
    (!ownership.replica.prefers_me(&key)).then_some(live)
}

/// Whether a context in `status` uses its clusters: an operation runs, it is instantiated, or an update is
/// taking over from it.
pub(crate) fn is_live(status: ContextStatus) -> bool {
    matches!(
        status,
        ContextStatus::Instantiating
            | ContextStatus::Instantiated
            | ContextStatus::Terminating
            | ContextStatus::Updating
    )
}

/// The bundle watchers and the live contexts that hold them.
#[derive(Default)]
pub(crate) struct Watchers {
    state: Mutex<WatcherState>,
}

#[derive(Default)]
struct WatcherState {
    /// The clusters each live context holds.
    holders: HashMap<ContextId, HashSet<String>>,
    /// The watcher of each held cluster.
    tasks: HashMap<String, JoinHandle<()>>,
    /// The live contexts of each update chain, by the chain's first context (the label's id).
    lineages: HashMap<ContextId, BTreeSet<ContextId>>,
}

impl Watchers {
    fn state(&self) -> std::sync::MutexGuard<'_, WatcherState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes that live context `id` uses `cluster`, and starts the cluster's watcher unless it runs already.
    pub(crate) fn hold(&self, inner: &Arc<Inner>, id: ContextId, cluster: &str) {
        let mut state = self.state();
        state.holders.entry(id).or_default().insert(cluster.to_string());
        if !inner.config.watch_bundles || state.tasks.get(cluster).is_some_and(|task| !task.is_finished()) {
            return;
        }
        tracing::debug!(cluster, "starting the bundle watcher");
        state.tasks.insert(
            cluster.to_string(),
            tokio::spawn(watch_cluster(Arc::downgrade(inner), cluster.to_string())),
        );
    }

    /// Notes that live context `id` belongs to the update chain whose first context is `root`.
    pub(crate) fn join_lineage(&self, root: ContextId, id: ContextId) {
        self.state().lineages.entry(root).or_default().insert(id);
    }

    /// The contexts whose status a bundle labelled with `root` reports: the live contexts of its chain (`root`
    /// itself until an update takes over from it), else `root`.
    pub(crate) fn lineage(&self, root: ContextId) -> Vec<ContextId> {
        match self.state().lineages.get(&root) {
            Some(members) if !members.is_empty() => members.iter().copied().collect(),
            _ => vec![root],
        }
    }

    /// Context `id` uses no cluster any more: ends the watchers no other live context holds; returns their
    /// clusters.
    pub(crate) fn release(&self, id: ContextId) -> Vec<String> {
        let mut state = self.state();
        for members in state.lineages.values_mut() {
            members.remove(&id);
        }
        state.lineages.retain(|_, members| !members.is_empty());
        if state.holders.remove(&id).is_none() {
            return Vec::new();
        }
        let WatcherState { holders, tasks, .. } = &mut *state;
        let mut ended = Vec::new();
        tasks.retain(|cluster, task| {
            let held = holders.values().any(|clusters| clusters.contains(cluster));
            if !held {
                tracing::debug!(
                    cluster,
                    "ending the bundle watcher: no live context uses the cluster"
                );
                task.abort();
                ended.push(cluster.clone());
            }
            held
        });
        ended
    }

    /// The clusters watched now, in name order.
    pub(crate) fn clusters(&self) -> Vec<String> {
        let state = self.state();
        let running: BTreeSet<&String> = state
            .tasks
            .iter()
            .filter(|(_, task)| !task.is_finished())
            .map(|(cluster, _)| cluster)
            .collect();
        running.into_iter().cloned().collect()
    }

    /// Ends every watcher (the engine is going away).
    pub(crate) fn abort_all(&self) {
        for task in self.state().tasks.values() {
            task.abort();
        }
    }
}

/// After an operation of context `id` ended: its clusters stay held while it is live, and are released once it
/// is not (finished terminating, failed, stopped).
pub(crate) async fn settle(inner: &Arc<Inner>, id: ContextId) {
    match inner.contexts.meta(id).await {
        Ok(meta) if is_live(meta.status) => {
            for app in &meta.apps {
                for cluster in &app.clusters {
                    inner.watchers.hold(inner, id, cluster);
                }
            }
        }
        Ok(_) | Err(emco_appcontext::ContextError::NotFound(_)) => {
            let ended = inner.watchers.release(id);
            if let Some(ownership) = &inner.ownership {
                ownership.release_clusters(&ended);
            }
            crate::engine::forget_root(inner, id);
        }
        Err(err) => {
            tracing::warn!(context = %id, error = %err, "cannot read the context to settle its watchers")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_split_at_the_first_dash() {
        let (id, app) = parse_label("2755581958183303505-sink-v2").unwrap();
        assert_eq!((id.get(), app), (2755581958183303505, "sink-v2"));
        assert!(parse_label("nodash").is_none());
        assert!(parse_label("x-app").is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_handover_that_came_back_is_offered_again_after_a_growing_wait() {
        let two: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        let three: BTreeSet<String> = ["a".to_string(), "b".to_string(), "c".to_string()].into();
        let mut offers = Offers::default();
        assert!(offers.may_offer(&two), "the first offer is made at once");
        let mut waits = Vec::new();
        for _ in 0..7 {
            offers.offered(two.clone());
            assert!(
                offers.may_offer(&three),
                "other replicas are offered the cluster at once"
            );
            let mut waited = Duration::ZERO;
            while !offers.may_offer(&two) {
                tokio::time::advance(Duration::from_secs(1)).await;
                waited += Duration::from_secs(1);
            }
            waits.push(waited.as_secs());
        }
        assert_eq!(waits, [30, 60, 120, 240, 480, 600, 600]);
        offers.offered(three.clone());
        assert!(!offers.may_offer(&three));
        tokio::time::advance(HANDOVER_RETRY).await;
        assert!(
            offers.may_offer(&three),
            "an offer among new replicas starts the back-off again"
        );
    }

    #[test]
    fn fingerprints_ignore_only_the_heartbeat() {
        use serde_json::json;
        let print = |status: &serde_json::Value| {
            fingerprint(&RawValue::from_string(status.to_string()).unwrap()).expect("an object")
        };
        let status =
            json!({"ready": true, "podStatuses": [{"name": "a", "ready": 1}], "heartbeat": "10:00:00"});
        let beat =
            json!({"ready": true, "podStatuses": [{"name": "a", "ready": 1}], "heartbeat": "10:00:20"});
        assert_eq!(print(&status), print(&beat));
        assert_eq!(
            print(&status),
            print(&json!({"ready": true, "podStatuses": [{"name": "a", "ready": 1}]})),
            "without a heartbeat"
        );
        for changed in [
            json!({"ready": false, "podStatuses": [{"name": "a", "ready": 1}], "heartbeat": "10:00:20"}),
            json!({"ready": true, "podStatuses": [{"name": "a", "ready": 2}], "heartbeat": "10:00:20"}),
            json!({"ready": true, "podStatuses": [{"name": "a", "ready": "1"}], "heartbeat": "10:00:20"}),
            json!({"ready": true, "podStatuses": [{"name": "a", "ready": 1}, {}], "heartbeat": "10:00:20"}),
            json!({"ready": true, "podStatuses": [{"name": "a", "ready": 1, "heartbeat": "x"}], "heartbeat": "10:00:20"}),
            json!({"ready": true, "pod": [{"name": "a", "ready": 1}], "heartbeat": "10:00:20"}),
        ] {
            assert_ne!(print(&status), print(&changed), "{changed}");
        }
        for not_an_object in ["[1]", "\"text\"", "3"] {
            assert_eq!(
                fingerprint(&RawValue::from_string(not_an_object.into()).unwrap()),
                None
            );
        }
    }

    /// A watch event as the API server sends it, read the way kube's watcher reads it: the metadata the watcher
    /// uses is there, the managed fields are not kept, and the status stays the text it was sent as.
    #[test]
    fn a_watch_event_keeps_the_used_metadata_and_the_status_text() {
        let line = r#"{"type":"MODIFIED","object":{"apiVersion":"k8splugin.io/v1alpha1","kind":"ResourceBundleState","metadata":{"name":"b","namespace":"default","uid":"u1","resourceVersion":"42","labels":{"emco/deployment-id":"7-app"},"managedFields":[{"manager":"monitor","operation":"Update","fieldsV1":{"f:status":{"f:ready":{},"f:heartbeat":{}}}}]},"spec":{"selector":{}},"status":{"ready":true,"heartbeat":"2026-11-27T10:00:00Z","podStatuses":[{"name":"p"}]}}}"#;
        let event: kube::core::WatchEvent<BundleState> = serde_json::from_str(line).unwrap();
        let kube::core::WatchEvent::Modified(bundle) = event else {
            panic!("not a MODIFIED event");
        };
        assert_eq!(bundle.metadata.name.as_deref(), Some("b"));
        assert_eq!(bundle.metadata.resource_version.as_deref(), Some("42"));
        assert_eq!(bundle.metadata.labels.unwrap()["emco/deployment-id"], "7-app");
        assert!(bundle.metadata.managed_fields.is_none());
        assert_eq!(
            bundle.status.unwrap().get(),
            r#"{"ready":true,"heartbeat":"2026-11-27T10:00:00Z","podStatuses":[{"name":"p"}]}"#
        );
        let list = r#"{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"43"},"items":[{"metadata":{"name":"c"}}]}"#;
        let listed: kube::core::ObjectList<BundleState> = serde_json::from_str(list).unwrap();
        assert!(listed.items[0].status.is_none(), "a bundle without a status yet");
    }
}
