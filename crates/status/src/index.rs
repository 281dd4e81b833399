//! The in-memory index of AppContexts: per context its status and apps (in app order), per app its clusters (in
//! placement order), per cluster its resources (in key order, as EMCO lists them) with rsync and cluster status,
//! and counters at every level so that summaries never walk resources.
//!
//! Each (app, cluster) also keeps when the cluster was last heard from (`heard_at`) and each context when it
//! started, so an answer can tell a cluster whose monitor went quiet from one that is fresh.
//!
//! It is fed [`ContextChange`]s (from a full load, then from the store's watch) and remembers the store revision
//! it reflects, so a reader can wait until it has caught up with a write.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cluster_positions::ClusterPositions;
use emco_appcontext::{ClusterRecord, ContextChange, ContextMeta, Waiting};
use emco_model::{
    ClusterResourceStatus, Connectivity, ContextId, ContextStatus, Gvk, ReadyStatus, RsyncStatus,
};
use serde_json::value::RawValue;

use emco_k8s::bundle::{STATUS_REMOTE_FIELD, collection_disabled, find_object, ready_condition, typed_array};
use emco_k8s::readiness::{Health, Hints, assess_with, is_tracked, readiness};

/// The longest message a verdict keeps (bytes; longer ones are cut at a character boundary with `…`).
pub const MAX_VERDICT_MESSAGE: usize = 256;

/// Why a resource is (not) ready, as emco-k8s's `assess` tells it, with when its `Ready` condition last changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The verdict.
    pub health: Health,
    /// One line naming the object and what holds it up (at most [`MAX_VERDICT_MESSAGE`] bytes).
    pub message: Box<str>,
    /// The object's `metadata.generation`, when it has one.
    pub generation: Option<i64>,
    /// When the resource's `Ready` condition took its present status (the time of the report that changed it;
    /// `None` when that report had no time).
    pub since: Option<jiff::Timestamp>,
}

/// `message` cut to [`MAX_VERDICT_MESSAGE`] bytes.
fn bounded(message: &str) -> Box<str> {
    if message.len() <= MAX_VERDICT_MESSAGE {
        return message.into();
    }
    let mut end = MAX_VERDICT_MESSAGE - '…'.len_utf8();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &message[..end]).into()
}

/// The verdict on an object the cluster reported as `gvk` (objects in a bundle's typed arrays may lack their
/// `kind` and `apiVersion`; they are given the listed ones); `hints` name the condition that means ready for its
/// kind when a status config does.
fn verdict_of(gvk: &Gvk, object: &serde_json::Value, hints: &Hints) -> Verdict {
    let assessment = if object["kind"].is_string() {
        assess_with(object, hints)
    } else {
        let mut typed = object.clone();
        if let Some(map) = typed.as_object_mut() {
            map.insert("kind".into(), gvk.kind.as_str().into());
            let api_version = if gvk.group.is_empty() {
                gvk.version.clone()
            } else {
                format!("{}/{}", gvk.group, gvk.version)
            };
            map.insert("apiVersion".into(), api_version.into());
        }
        assess_with(&typed, hints)
    };
    Verdict {
        health: assessment.health,
        message: bounded(&assessment.message),
        generation: object["metadata"]["generation"].as_i64(),
        since: None,
    }
}

/// The readiness and verdict of a reported object: by the kind's own rule, or, when the monitor wrote the
/// condition a status config names as meaning ready (`entry` is the bundle entry, `object` the object), by that
/// condition.
fn judge_object(gvk: &Gvk, entry: &serde_json::Value, object: &serde_json::Value) -> (ReadyStatus, Verdict) {
    match ready_condition(entry) {
        Some(condition) => {
            let verdict = verdict_of(gvk, object, &Hints::default().ready_condition(condition));
            (verdict.health.ready_status(), verdict)
        }
        None => (
            readiness(&gvk.group, &gvk.kind, object),
            verdict_of(gvk, object, &Hints::default()),
        ),
    }
}

/// The value the monitor rolled up for a bundle entry (`statusRemote`), if any.
fn remote_of(entry: &serde_json::Value) -> Option<Box<serde_json::Value>> {
    entry.get(STATUS_REMOTE_FIELD).cloned().map(Box::new)
}

/// The verdict on a resource of a kind whose collection a status config disabled.
fn disabled_verdict(gvk: &Gvk, name: &str) -> Verdict {
    Verdict {
        health: Health::Unknown,
        message: bounded(&format!(
            "{} {name}: not collected (a status config disables the collection of its kind)",
            gvk.kind
        )),
        generation: None,
        since: None,
    }
}

/// The verdict on a tracked resource the cluster does not report.
fn absent_verdict(gvk: &Gvk, name: &str) -> Verdict {
    Verdict {
        health: Health::Unknown,
        message: bounded(&format!("{} {name}: not reported by the cluster", gvk.kind)),
        generation: None,
        since: None,
    }
}

/// Counters of resources by rsync status (indexed by `RsyncStatus as usize`) and by cluster status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// By rsync status.
    pub rsync: [u32; 5],
    /// By cluster status (Present, NotPresent, Unknown).
    pub cluster: [u32; 3],
    /// By readiness (Ready, NotReady, NotPresent); resources without a readiness are not counted.
    pub ready: [u32; 3],
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        for (a, b) in self.rsync.iter_mut().zip(other.rsync) {
            *a += b;
        }
        for (a, b) in self.cluster.iter_mut().zip(other.cluster) {
            *a += b;
        }
        for (a, b) in self.ready.iter_mut().zip(other.ready) {
            *a += b;
        }
    }

    fn subtract(&mut self, other: &Counts) {
        for (a, b) in self.rsync.iter_mut().zip(other.rsync) {
            *a = a.saturating_sub(b);
        }
        for (a, b) in self.cluster.iter_mut().zip(other.cluster) {
            *a = a.saturating_sub(b);
        }
        for (a, b) in self.ready.iter_mut().zip(other.ready) {
            *a = a.saturating_sub(b);
        }
    }

    /// Counts an object only the cluster reports: cluster status and readiness, no rsync status.
    pub fn count_cluster_only(&mut self, resource: &ResourceEntry) {
        self.cluster[resource.cluster as usize] += 1;
        if let Some(ready) = resource.ready {
            self.ready[ready as usize] += 1;
        }
    }

    /// Counts one resource.
    pub fn count(&mut self, resource: &ResourceEntry) {
        self.rsync[resource.rsync as usize] += 1;
        self.cluster[resource.cluster as usize] += 1;
        if let Some(ready) = resource.ready {
            self.ready[ready as usize] += 1;
        }
    }
}

/// A group, version and kind the index shares between the entries of that kind, with its JSON written once: the
/// status answer writes it as it is, for every resource of the kind (escaping the same three strings for each of
/// 300,000 resources was a third of an `output=all` answer's time).
#[derive(Debug)]
pub struct SharedGvk {
    gvk: Gvk,
    json: Box<RawValue>,
}

impl SharedGvk {
    fn new(gvk: Gvk) -> Self {
        // A struct of three strings always serializes.
        let json = serde_json::value::to_raw_value(&gvk).expect("a GVK serializes");
        Self { gvk, json }
    }

    /// Its JSON (`{"Group":…,"Version":…,"Kind":…}`), written once.
    #[must_use]
    pub fn json(&self) -> &RawValue {
        &self.json
    }
}

/// Equal when the GVKs are (the JSON is written from the GVK).
impl PartialEq for SharedGvk {
    fn eq(&self, other: &Self) -> bool {
        self.gvk == other.gvk
    }
}

impl Eq for SharedGvk {}

impl std::ops::Deref for SharedGvk {
    type Target = Gvk;

    fn deref(&self) -> &Gvk {
        &self.gvk
    }
}

/// One rsync resource as the index keeps it (no manifest: details are read from the store when asked for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    /// `metadata.name`.
    pub name: Box<str>,
    /// Group, version, kind (shared between resources of the same kind).
    pub gvk: Arc<SharedGvk>,
    /// What rsync last did with it.
    pub rsync: RsyncStatus,
    /// What the cluster reported.
    pub cluster: ClusterResourceStatus,
    /// Whether it works, by EMCO's rules; `None` for kinds the monitor does not track and the cluster did not list.
    pub ready: Option<ReadyStatus>,
    /// Why the cluster refused it (the API server's message), when it Failed.
    pub error: Option<Box<str>>,
    /// What the cluster's report says of it (`None` for kinds without a readiness the cluster did not list).
    pub verdict: Option<Box<Verdict>>,
    /// The value a status config rolls up for it (`statusRemote`: the field at its `statusPath`, or its whole
    /// status), as the cluster last reported it.
    pub status_remote: Option<Box<serde_json::Value>>,
    /// Whether a status config disabled the collection of its kind (the cluster then says nothing of it).
    pub collection_disabled: bool,
}

impl ResourceEntry {
    /// Whether its `Ready` condition is `True`: EMCO's readiness when it has one, else the verdict's.
    #[must_use]
    pub fn condition_ready(&self) -> bool {
        match self.ready {
            Some(ready) => ready == ReadyStatus::Ready,
            None => self.verdict.as_ref().is_some_and(|v| v.health == Health::Ready),
        }
    }
}

/// One app on one cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterEntry {
    /// `provider+cluster`.
    pub full_name: Box<str>,
    /// Length of the provider part of `full_name`.
    provider_len: usize,
    /// Whether rsync reaches the cluster.
    pub connectivity: Connectivity,
    /// Why rsync is retrying, while it is (`connection refused`, `HTTP 503 Service Unavailable`, …).
    pub connectivity_reason: Option<Box<str>>,
    /// What rsync deliberately waits for here (a hook, a CRD, an app it depends on), while it waits; else, while
    /// nothing is applied here yet, what a progressive rollout waits for before it reaches the cluster
    /// ([`crate::rollout_waits`]).
    pub waiting: Option<Box<Waiting>>,
    /// Whether `waiting` is what rsync recorded (not derived from the rollout).
    waiting_recorded: bool,
    /// Whether a ResourceBundleState was heard from the cluster for this app.
    pub has_bundle: bool,
    /// When it was last heard (`None`: never, or a record from before the time was kept).
    pub heard_at: Option<jiff::Timestamp>,
    /// The resources, ordered by `<name>+<Kind>`.
    pub resources: Vec<ResourceEntry>,
    /// Objects the cluster reports that the AppContext does not hold (the pods of a Deployment, …), by kind and
    /// name; they count for cluster status and readiness, not for rsync status.
    pub cluster_only: Vec<ResourceEntry>,
    /// Counters over `resources` (and, for cluster status and readiness, `cluster_only`).
    pub counts: Counts,
    /// Whether rsync propagated the resources here (no resource Failed, nothing retrying).
    pub propagated: bool,
    /// When the cluster was first heard from for this app.
    pub first_heard: Option<jiff::Timestamp>,
    /// Silences between two reports: (when it was heard again, how long it had been silent, in ms), oldest first,
    /// each longer than every later one (a shorter silence before a longer one can never be the latest silence
    /// longer than a grace, so it is dropped); at most [`MAX_HEARD_GAPS`]. From them, when the cluster last became
    /// fresh again is known for any grace.
    pub heard_gaps: Vec<(jiff::Timestamp, i64)>,
    /// The controllers that added or changed each resource (by `name+Kind`), when any did.
    pub changed_by: Option<Arc<std::collections::BTreeMap<String, Vec<String>>>>,
}

/// What an (app, cluster) with nothing applied yet waits for while its context instantiates and rsync recorded no
/// other wait ([`ClusterEntry::waits_for`]).
const QUEUED: &str = "rsync to apply it, queued or under way";

/// No controller changed anything.
static EMPTY_CHANGES: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();

/// How many silences each (app, cluster) remembers (the longest ones, which only a grace as long would not count).
pub const MAX_HEARD_GAPS: usize = 16;

impl ClusterEntry {
    /// What rsync waits for here: what it recorded or the rollout makes the cluster wait for
    /// ([`ClusterEntry::waiting`]); else, while `context` instantiates and nothing is applied here yet, its turn —
    /// rsync applies a bounded number of (app, cluster) batches at a time, so this one is queued behind others or
    /// under way — since the context began. Derived when asked, never stored: at 10,000 clusters an
    /// instantiation's queue costs the index nothing.
    #[must_use]
    pub fn waits_for(&self, context: &ContextEntry) -> Option<std::borrow::Cow<'_, Waiting>> {
        if let Some(waiting) = self.waiting.as_deref() {
            return Some(std::borrow::Cow::Borrowed(waiting));
        }
        let since = self.queued_since(context)?;
        Some(std::borrow::Cow::Owned(Waiting {
            what: QUEUED.into(),
            since: emco_model::format_timestamp(since),
            until: None,
            then: None,
        }))
    }

    /// Whether rsync waits for anything here ([`ClusterEntry::waits_for`]), without building what.
    #[must_use]
    pub fn is_waiting(&self, context: &ContextEntry) -> bool {
        self.waiting.is_some() || self.queued_since(context).is_some()
    }

    /// When this (app, cluster) began to wait for its turn in rsync's queue: the context's start, while it
    /// instantiates, the cluster is not being retried and nothing is applied here yet.
    fn queued_since(&self, context: &ContextEntry) -> Option<jiff::Timestamp> {
        let queued = context.status == ContextStatus::Instantiating
            && self.connectivity != Connectivity::Retrying
            && !self.resources.is_empty()
            && self.all_pending();
        context.started_at.filter(|_| queued)
    }

    /// Whether every resource here is still `Pending` (nothing applied yet), from the counters.
    fn all_pending(&self) -> bool {
        self.counts.rsync[RsyncStatus::Pending as usize] as usize == self.resources.len()
    }

    /// What rsync waits for here ([`ClusterEntry::waits_for`]), in a sentence: `app nginx on cluster1 waits for
    /// pre-install hook Pod/migrate to complete (waiting 40 s, fails at 300 s)`, the seconds counted to `now`.
    #[must_use]
    pub fn waiting_message(&self, app: &str, context: &ContextEntry, now: jiff::Timestamp) -> Option<String> {
        use crate::freshness::seconds_between;
        let waiting = self.waits_for(context)?;
        let since: Option<jiff::Timestamp> = waiting.since.parse().ok();
        let until: Option<jiff::Timestamp> = waiting.until.as_deref().and_then(|until| until.parse().ok());
        let mut timing = Vec::new();
        if let Some(since) = since {
            timing.push(format!("waiting {} s", seconds_between(since, now)));
            if let Some(until) = until {
                let then = waiting.then.as_deref().unwrap_or("ends");
                timing.push(format!("{then} at {} s", seconds_between(since, until)));
            }
        }
        let timing = if timing.is_empty() {
            String::new()
        } else {
            format!(" ({})", timing.join(", "))
        };
        Some(format!(
            "app {app} on {} waits for {}{timing}",
            self.cluster(),
            waiting.what
        ))
    }

    /// Notes that the cluster was heard at `at`: `heard_at` only moves forward, and the silence it ends is
    /// remembered.
    fn hear(&mut self, at: Option<jiff::Timestamp>) {
        let Some(now) = at.filter(|now| self.heard_at.is_none_or(|before| *now > before)) else {
            return;
        };
        let previous = self.heard_at.replace(now);
        if self.first_heard.is_none() {
            self.first_heard = Some(now);
        }
        let Some(before) = previous else {
            return;
        };
        let silence = now.as_millisecond() - before.as_millisecond();
        if silence <= 0 {
            return;
        }
        self.heard_gaps.retain(|(_, longer)| *longer > silence);
        self.heard_gaps.push((now, silence));
        if self.heard_gaps.len() > MAX_HEARD_GAPS {
            self.heard_gaps.remove(0);
        }
    }

    /// When this (app, cluster) last became fresh under `grace_ms`: the end of its latest silence longer than the
    /// grace; else, if it was first heard more than the grace after `started`, then; else `started`.
    #[must_use]
    pub fn fresh_since(&self, grace_ms: i64, started: Option<jiff::Timestamp>) -> Option<jiff::Timestamp> {
        if let Some((again, _)) = self
            .heard_gaps
            .iter()
            .rev()
            .find(|(_, silence)| *silence > grace_ms)
        {
            return Some(*again);
        }
        match (self.first_heard, started) {
            (Some(first), Some(start)) if first.as_millisecond() - start.as_millisecond() > grace_ms => {
                Some(first)
            }
            (first, None) => first,
            (_, start) => start,
        }
    }

    fn empty(full_name: &str) -> Self {
        Self {
            full_name: full_name.into(),
            provider_len: full_name.find('+').unwrap_or(0),
            connectivity: Connectivity::Unknown,
            connectivity_reason: None,
            waiting: None,
            waiting_recorded: false,
            has_bundle: false,
            heard_at: None,
            resources: Vec::new(),
            cluster_only: Vec::new(),
            counts: Counts::default(),
            propagated: true,
            first_heard: None,
            heard_gaps: Vec::new(),
            changed_by: None,
        }
    }

    /// The cluster provider.
    #[must_use]
    pub fn provider(&self) -> &str {
        &self.full_name[..self.provider_len]
    }

    /// The cluster's own name.
    #[must_use]
    pub fn cluster(&self) -> &str {
        self.full_name
            .get(self.provider_len + 1..)
            .unwrap_or(&self.full_name)
    }
}

/// One app of a context.
#[derive(Debug, Clone, PartialEq)]
pub struct AppEntry {
    /// The app.
    pub name: Arc<str>,
    /// Its clusters, in placement order; each shared with the snapshots taken while it did not change (a write
    /// copies only the cluster it changes when a snapshot still holds it).
    pub clusters: Vec<Arc<ClusterEntry>>,
    /// Counters over every cluster.
    pub counts: Counts,
    /// The clusters a placement controller took away, each with why (none: most apps).
    pub excluded: Arc<[emco_appcontext::Exclusion]>,
    /// Where each of `clusters` is, by name.
    positions: ClusterPositions,
}

impl AppEntry {
    fn empty(name: &str) -> Self {
        Self {
            name: name.into(),
            clusters: Vec::new(),
            counts: Counts::default(),
            excluded: Arc::from([]),
            positions: ClusterPositions::default(),
        }
    }

    /// The position of cluster `name` in [`AppEntry::clusters`].
    fn cluster_position(&self, name: &str) -> Option<usize> {
        self.positions.find(&self.clusters, name)
    }
}

/// One context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextEntry {
    /// The context's top-level status.
    pub status: ContextStatus,
    /// When the context was created (`None` until its meta is applied, or if unreadable).
    pub started_at: Option<jiff::Timestamp>,
    /// Its apps, in app order.
    pub apps: Vec<AppEntry>,
    /// Counters over every app.
    pub counts: Counts,
    /// Whether every cluster took its resources (no (app, cluster) with a Failed resource or retrying), and since
    /// when (the time of the record that changed it: its newest resource update, else when it was heard; `None`
    /// when that record had neither). `None` until a record was applied.
    pub propagation: Option<(bool, Option<jiff::Timestamp>)>,
    /// Where its progressive rollout stands, when it has one.
    pub rollout: Option<emco_model::rollout::RolloutProgress>,
    /// The rollout batch of each cluster, when it has a rollout.
    rollout_batches: Option<Arc<std::collections::HashMap<String, u64>>>,
}

impl ContextEntry {
    fn empty() -> Self {
        Self {
            status: ContextStatus::Instantiating,
            started_at: None,
            apps: Vec::new(),
            counts: Counts::default(),
            propagation: None,
            rollout: None,
            rollout_batches: None,
        }
    }

    /// What the rollout makes `cluster` wait for, while nothing is applied there (`all_pending`).
    fn rollout_waiting(&self, cluster: &str, all_pending: bool) -> Option<Waiting> {
        let (progress, batches) = (self.rollout.as_ref()?, self.rollout_batches.as_ref()?);
        if !all_pending {
            return None;
        }
        let started = self
            .started_at
            .map(emco_model::format_timestamp)
            .unwrap_or_default();
        crate::rollout_waits::waiting(progress, *batches.get(cluster)?, &started)
    }

    /// Records whether every cluster is propagated now; the time moves only when that changes.
    fn note_propagation(&mut self, at: Option<jiff::Timestamp>) {
        let propagated = self
            .apps
            .iter()
            .all(|app| app.clusters.iter().all(|cluster| cluster.propagated));
        match self.propagation {
            Some((known, _)) if known == propagated => {}
            _ => self.propagation = Some((propagated, at)),
        }
    }

    fn app_mut(&mut self, name: &str) -> &mut AppEntry {
        let position = match self.apps.iter().position(|app| &*app.name == name) {
            Some(position) => position,
            None => {
                self.apps.push(AppEntry::empty(name));
                self.apps.len() - 1
            }
        };
        &mut self.apps[position]
    }
}

/// What the cluster's ResourceBundleState says of one resource.
struct Observed {
    cluster: ClusterResourceStatus,
    ready: Option<ReadyStatus>,
    verdict: Option<Verdict>,
    status_remote: Option<Box<serde_json::Value>>,
    collection_disabled: bool,
}

/// What the cluster's ResourceBundleState says of one resource: presence by the seed's rules, readiness by EMCO's
/// (or by the condition a status config names), the value a status config rolls up.
fn observe(bundle: Option<&serde_json::Value>, gvk: &Gvk, name: &str) -> Observed {
    let tracked = is_tracked(&gvk.group, &gvk.kind);
    let absent = |cluster| {
        if tracked {
            Observed {
                cluster,
                ready: Some(ReadyStatus::NotPresent),
                verdict: Some(absent_verdict(gvk, name)),
                status_remote: None,
                collection_disabled: false,
            }
        } else {
            Observed {
                cluster,
                ready: None,
                verdict: None,
                status_remote: None,
                collection_disabled: false,
            }
        }
    };
    let Some(bundle) = bundle else {
        return absent(ClusterResourceStatus::Unknown);
    };
    if collection_disabled(bundle, &gvk.group, &gvk.kind) {
        return Observed {
            cluster: ClusterResourceStatus::Unknown,
            ready: None,
            verdict: Some(disabled_verdict(gvk, name)),
            status_remote: None,
            collection_disabled: true,
        };
    }
    match find_object(bundle, &gvk.group, &gvk.kind, name) {
        Some(entry) => {
            // A generic entry holds the object under `res`; a typed one is the object.
            let object = if typed_array(&gvk.group, &gvk.kind).is_some() {
                entry
            } else {
                entry.get("res").unwrap_or(entry)
            };
            let (ready, verdict) = judge_object(gvk, entry, object);
            Observed {
                cluster: ClusterResourceStatus::Present,
                ready: Some(ready),
                verdict: Some(verdict),
                status_remote: remote_of(entry),
                collection_disabled: false,
            }
        }
        None if typed_array(&gvk.group, &gvk.kind).is_some() => absent(ClusterResourceStatus::NotPresent),
        None => absent(ClusterResourceStatus::Unknown),
    }
}

/// Carries each `Ready` condition's transition time over from `old` when its status did not change; otherwise it
/// is the time of this report. Both lists are sorted by `order`.
fn carry_transitions(
    new: &mut [ResourceEntry],
    old: &[ResourceEntry],
    order: impl Fn(&ResourceEntry, &ResourceEntry) -> std::cmp::Ordering,
    heard_at: Option<jiff::Timestamp>,
) {
    for resource in new.iter_mut() {
        let ready = resource.condition_ready();
        let previous = old
            .binary_search_by(|probe| order(probe, resource))
            .ok()
            .map(|position| &old[position])
            .filter(|previous| previous.condition_ready() == ready)
            .and_then(|previous| previous.verdict.as_ref().map(|v| v.since));
        if let Some(verdict) = resource.verdict.as_mut() {
            verdict.since = previous.unwrap_or(heard_at);
        }
    }
}

/// The index of every context.
#[derive(Debug, Default)]
pub struct StatusIndex {
    contexts: HashMap<ContextId, ContextEntry>,
    gvks: HashMap<Gvk, Arc<SharedGvk>>,
    revision: i64,
}

impl StatusIndex {
    /// An empty index at revision 0.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The store revision the index reflects.
    #[must_use]
    pub fn revision(&self) -> i64 {
        self.revision
    }

    /// Records that the index reflects the store up to `revision`.
    pub fn set_revision(&mut self, revision: i64) {
        self.revision = self.revision.max(revision);
    }

    /// A context, if indexed.
    #[must_use]
    pub fn context(&self, id: ContextId) -> Option<&ContextEntry> {
        self.contexts.get(&id)
    }

    /// Every indexed context, in no particular order (`emco serve`'s metrics count them at scrape time).
    pub fn contexts(&self) -> impl Iterator<Item = (ContextId, &ContextEntry)> + '_ {
        self.contexts.iter().map(|(id, entry)| (*id, entry))
    }

    /// How many contexts are indexed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.contexts.len()
    }

    /// Whether no context is indexed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.contexts.is_empty()
    }

    /// Applies one change.
    pub fn apply(&mut self, change: &ContextChange) {
        match change {
            ContextChange::Meta(meta) => self.apply_meta(meta),
            ContextChange::Cluster(id, record) => self.apply_cluster(*id, record),
            ContextChange::MetaDeleted(id) => {
                self.contexts.remove(id);
            }
            ContextChange::ClusterDeleted { id, app, cluster } => self.remove_cluster(*id, app, cluster),
            ContextChange::Heard { id, app, cluster, at } => self.apply_heard(*id, app, cluster, at),
        }
    }

    /// A heartbeat: the (app, cluster) was heard from at `at` with nothing else changed. Only moves `heard_at`
    /// forward (and notes the silence it ended).
    fn apply_heard(&mut self, id: ContextId, app_name: &str, cluster_name: &str, at: &str) {
        let Ok(at) = at.parse::<jiff::Timestamp>() else {
            return;
        };
        let Some(cluster) = self
            .contexts
            .get_mut(&id)
            .and_then(|entry| entry.apps.iter_mut().find(|app| &*app.name == app_name))
            .and_then(|app| {
                let position = app.cluster_position(cluster_name)?;
                app.clusters.get_mut(position)
            })
        else {
            return;
        };
        // Only a newer time changes the entry (and copies it while a snapshot shares it).
        if cluster.heard_at.is_none_or(|before| at > before) {
            Arc::make_mut(cluster).hear(Some(at));
        }
    }

    /// Applies a context's meta: its status and the order of its apps and clusters.
    pub fn apply_meta(&mut self, meta: &ContextMeta) {
        let entry = self.contexts.entry(meta.id).or_insert_with(ContextEntry::empty);
        entry.status = meta.status;
        entry.started_at = meta.created.parse().ok();
        entry.rollout.clone_from(&meta.rollout);
        entry.rollout_batches = meta
            .rollout
            .as_ref()
            .map(|progress| Arc::new(crate::rollout_waits::batches(progress, &meta.clusters())));
        let mut ordered = Vec::with_capacity(meta.apps.len());
        for app_meta in &meta.apps {
            let mut app = match entry.apps.iter().position(|app| *app.name == *app_meta.name) {
                Some(position) => entry.apps.remove(position),
                None => AppEntry::empty(&app_meta.name),
            };
            if *app.excluded != *app_meta.excluded {
                app.excluded = Arc::from(app_meta.excluded.as_slice());
            }
            let found: Vec<Option<usize>> = app_meta
                .clusters
                .iter()
                .map(|cluster_name| app.cluster_position(cluster_name))
                .collect();
            let mut previous: Vec<Option<Arc<ClusterEntry>>> =
                std::mem::take(&mut app.clusters).into_iter().map(Some).collect();
            let mut clusters = Vec::with_capacity(app_meta.clusters.len());
            for (cluster_name, position) in app_meta.clusters.iter().zip(found) {
                // A name the meta lists twice gets a fresh entry the second time, as the first took it.
                let taken = position.and_then(|position| previous[position].take());
                clusters.push(taken.unwrap_or_else(|| Arc::new(ClusterEntry::empty(cluster_name))));
            }
            // Clusters the meta does not list (it always lists all) stay, after the listed ones.
            clusters.extend(previous.into_iter().flatten());
            app.clusters = clusters;
            app.positions.rebuild(&app.clusters);
            ordered.push(app);
        }
        ordered.append(&mut entry.apps);
        entry.apps = ordered;
        // The rollout moved on (or went): what its clusters wait for, where rsync recorded nothing.
        let mut derived = Vec::new();
        for (app_index, app) in entry.apps.iter().enumerate() {
            for (cluster_index, cluster) in app.clusters.iter().enumerate() {
                if cluster.waiting_recorded {
                    continue;
                }
                let waiting = entry
                    .rollout_waiting(&cluster.full_name, cluster.all_pending())
                    .map(Box::new);
                if waiting != cluster.waiting {
                    derived.push((app_index, cluster_index, waiting));
                }
            }
        }
        for (app_index, cluster_index, waiting) in derived {
            Arc::make_mut(&mut entry.apps[app_index].clusters[cluster_index]).waiting = waiting;
        }
    }

    fn intern(&mut self, gvk: Gvk) -> Arc<SharedGvk> {
        if let Some(shared) = self.gvks.get(&gvk) {
            return shared.clone();
        }
        let shared = Arc::new(SharedGvk::new(gvk.clone()));
        self.gvks.insert(gvk, shared.clone());
        shared
    }

    /// Applies an (app, cluster) record: its resources, their statuses and the cluster's connectivity.
    pub fn apply_cluster(&mut self, id: ContextId, record: &ClusterRecord) {
        let bundle = record.heard_status();
        let bundle = bundle.as_ref();
        let mut resources: Vec<ResourceEntry> = record
            .resources
            .iter()
            .map(|resource| {
                let gvk = self.intern(resource.gvk());
                let Observed {
                    cluster,
                    mut ready,
                    mut verdict,
                    status_remote,
                    collection_disabled,
                } = observe(bundle, &gvk, &resource.name);
                // A hook's object comes and goes by design (deleted by its policy once it succeeded, or not run
                // yet because its event has not come): it counts for readiness only while the cluster reports
                // it, never as NotPresent, so a completed and deleted hook Job leaves the app Ready.
                // A logical cloud user's certificate request is cluster-scoped, which no ResourceBundleState
                // holds: rsync applied it only once the cluster approved it and issued the certificate, so an
                // unreported request does not hold the cloud's readiness back either.
                let unreported_by_design = resource.role.hook().is_some()
                    || matches!(resource.role, emco_appcontext::ResourceRole::Certificate);
                if unreported_by_design && ready == Some(ReadyStatus::NotPresent) {
                    ready = None;
                    verdict = None;
                }
                ResourceEntry {
                    name: resource.name.as_str().into(),
                    gvk,
                    rsync: resource.status,
                    cluster,
                    ready,
                    error: resource.error.as_deref().map(Into::into),
                    verdict: verdict.map(Box::new),
                    status_remote,
                    collection_disabled,
                }
            })
            .collect();
        // EMCO lists resources in `<name>+<Kind>` key order; '+' sorts below every character a name may hold, so
        // comparing (name, kind) gives the same order without building the keys.
        resources.sort_by(|a, b| (&*a.name, &a.gvk.kind).cmp(&(&*b.name, &b.gvk.kind)));
        let mut cluster_only = bundle
            .map(|bundle| self.cluster_only(bundle, &resources))
            .unwrap_or_default();
        let heard_at: Option<jiff::Timestamp> = record.heard_at.as_deref().and_then(|text| text.parse().ok());
        let mut counts = Counts::default();
        for resource in &resources {
            counts.count(resource);
        }
        for resource in &cluster_only {
            counts.count_cluster_only(resource);
        }
        let entry = self.contexts.entry(id).or_insert_with(ContextEntry::empty);
        let derived_waiting = match &record.waiting {
            Some(_) => None,
            None => entry.rollout_waiting(
                &record.cluster,
                resources
                    .iter()
                    .all(|resource| resource.rsync == RsyncStatus::Pending),
            ),
        };
        let app = entry.app_mut(&record.app);
        let position = match app.cluster_position(&record.cluster) {
            Some(position) => position,
            None => {
                app.clusters.push(Arc::new(ClusterEntry::empty(&record.cluster)));
                app.positions.pushed(&app.clusters);
                app.clusters.len() - 1
            }
        };
        let cluster = Arc::make_mut(&mut app.clusters[position]);
        // A heartbeat under the heard key may be newer than the record's own time (a record rewritten by rsync
        // keeps the time of the last full status): the cluster was heard at the newer of the two.
        cluster.hear(heard_at);
        let propagated = !resources
            .iter()
            .any(|r| matches!(r.rsync, RsyncStatus::Failed | RsyncStatus::Retrying))
            && record.connectivity != Connectivity::Retrying;
        cluster.propagated = propagated;
        carry_transitions(
            &mut resources,
            &cluster.resources,
            |a, b| (&*a.name, &a.gvk.kind).cmp(&(&*b.name, &b.gvk.kind)),
            heard_at,
        );
        carry_transitions(
            &mut cluster_only,
            &cluster.cluster_only,
            |a, b| (&a.gvk.kind, &*a.name).cmp(&(&b.gvk.kind, &*b.name)),
            heard_at,
        );
        let old = cluster.counts;
        cluster.resources = resources;
        cluster.cluster_only = cluster_only;
        cluster.counts = counts;
        cluster.connectivity = record.connectivity;
        cluster.connectivity_reason = record.connectivity_reason.as_deref().map(Into::into);
        cluster.waiting_recorded = record.waiting.is_some();
        cluster.waiting = record.waiting.clone().or(derived_waiting).map(Box::new);
        cluster.has_bundle = bundle.is_some();
        let changed_by = cluster.changed_by.as_deref().unwrap_or(&EMPTY_CHANGES);
        if *changed_by != record.changed_by {
            cluster.changed_by = (!record.changed_by.is_empty()).then(|| Arc::new(record.changed_by.clone()));
        }
        app.counts.subtract(&old);
        app.counts.add(&counts);
        entry.counts.subtract(&old);
        entry.counts.add(&counts);
        // The time of this record: its newest resource update, else when the cluster was heard.
        let updated = record
            .resources
            .iter()
            .filter_map(|resource| resource.updated.as_deref()?.parse::<jiff::Timestamp>().ok())
            .max();
        entry.note_propagation(updated.or(heard_at));
    }

    /// The objects of a bundle that are not among `resources`.
    fn cluster_only(
        &mut self,
        bundle: &serde_json::Value,
        resources: &[ResourceEntry],
    ) -> Vec<ResourceEntry> {
        let mut found = Vec::new();
        for (field, group, kind) in emco_k8s::bundle::TYPED_ARRAYS {
            for object in bundle[*field].as_array().into_iter().flatten() {
                let name = object["metadata"]["name"].as_str().unwrap_or_default();
                let version = object["apiVersion"]
                    .as_str()
                    .and_then(|v| v.rsplit('/').next())
                    .unwrap_or("v1");
                found.push((
                    Gvk {
                        group: (*group).into(),
                        version: version.into(),
                        kind: (*kind).into(),
                    },
                    name.to_string(),
                    object,
                    object,
                ));
            }
        }
        for entry in bundle["resourceStatuses"].as_array().into_iter().flatten() {
            let gvk = Gvk {
                group: entry["group"].as_str().unwrap_or_default().into(),
                version: entry["version"].as_str().unwrap_or_default().into(),
                kind: entry["kind"].as_str().unwrap_or_default().into(),
            };
            found.push((
                gvk,
                entry["name"].as_str().unwrap_or_default().to_string(),
                entry,
                entry.get("res").unwrap_or(entry),
            ));
        }
        let mut extras: Vec<ResourceEntry> = found
            .into_iter()
            .filter(|(gvk, name, _, _)| {
                !resources
                    .iter()
                    .any(|r| *r.name == **name && r.gvk.kind == gvk.kind && r.gvk.group == gvk.group)
            })
            .map(|(gvk, name, entry, object)| {
                let (ready, verdict) = judge_object(&gvk, entry, object);
                let status_remote = remote_of(entry);
                ResourceEntry {
                    name: name.into(),
                    gvk: self.intern(gvk),
                    rsync: RsyncStatus::Applied,
                    cluster: ClusterResourceStatus::Present,
                    ready: Some(ready),
                    error: None,
                    verdict: Some(Box::new(verdict)),
                    status_remote,
                    collection_disabled: false,
                }
            })
            .collect();
        extras.sort_by(|a, b| (&a.gvk.kind, &*a.name).cmp(&(&b.gvk.kind, &*b.name)));
        extras
    }

    fn remove_cluster(&mut self, id: ContextId, app_name: &str, cluster_name: &str) {
        let Some(entry) = self.contexts.get_mut(&id) else {
            return;
        };
        let Some(app) = entry.apps.iter_mut().find(|app| &*app.name == app_name) else {
            return;
        };
        let Some(position) = app.cluster_position(cluster_name) else {
            return;
        };
        let removed = app.clusters.remove(position);
        app.positions.rebuild(&app.clusters);
        app.counts.subtract(&removed.counts);
        entry.counts.subtract(&removed.counts);
        entry.note_propagation(None);
    }
}

#[cfg(test)]
mod tests {
    use emco_appcontext::{AppMeta, JsonText, ResourceRecord};
    use serde_json::json;

    use super::*;

    fn meta(id: ContextId, apps: &[(&str, &[&str])]) -> ContextMeta {
        ContextMeta {
            id,
            project: "p".into(),
            composite_app: "ca".into(),
            composite_app_version: "v1".into(),
            composite_profile: "cp".into(),
            deployment_intent_group: "dig".into(),
            release: "r1".into(),
            namespace: "default".into(),
            logical_cloud: String::new(),
            owner: Default::default(),
            credentials: None,
            supersedes: None,
            lineage: None,
            apps: apps
                .iter()
                .map(|(name, clusters)| AppMeta {
                    name: (*name).into(),
                    dependencies: vec![],
                    clusters: clusters.iter().map(|c| (*c).to_string()).collect(),
                    excluded: Vec::new(),
                })
                .collect(),
            status: ContextStatus::Instantiated,
            stop_requested: false,
            rollout: None,
            created: String::new(),
        }
    }

    /// A heartbeat of (`app`, `cluster`) of context `id` at `at`.
    fn heard(id: ContextId, app: &str, cluster: &str, at: &str) -> ContextChange {
        ContextChange::Heard {
            id,
            app: app.into(),
            cluster: cluster.into(),
            at: at.into(),
        }
    }

    fn record(app: &str, cluster: &str, resources: &[(&str, &str, RsyncStatus)]) -> ClusterRecord {
        let mut record = ClusterRecord::pending(
            app,
            cluster,
            resources
                .iter()
                .map(|(name, kind, status)| {
                    let api_version = match *kind {
                        "Deployment" => "apps/v1",
                        "Job" => "batch/v1",
                        _ => "v1",
                    };
                    let mut resource = ResourceRecord::pending(name, kind, api_version, json!({}));
                    resource.status = *status;
                    resource
                })
                .collect(),
        );
        record.connectivity = Connectivity::Available;
        record
    }

    #[test]
    fn shared_gvks_are_one_per_kind_and_carry_their_json() {
        let mut index = StatusIndex::new();
        let odd = Gvk {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Odd\"Kind\\".into(),
        };
        let first = index.intern(odd.clone());
        let again = index.intern(odd.clone());
        assert!(Arc::ptr_eq(&first, &again), "one shared GVK per kind");
        assert_eq!(**first, odd);
        // The JSON written once reads back as the GVK, escapes included.
        let back: Gvk = serde_json::from_str(first.json().get()).unwrap();
        assert_eq!(back, odd);
        assert_eq!(
            serde_json::to_string(&json!({"GVK": first.json()})).unwrap(),
            serde_json::to_string(&json!({"GVK": odd})).unwrap()
        );
        let other = index.intern(Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "Service".into(),
        });
        assert!(!Arc::ptr_eq(&first, &other));
    }

    #[test]
    fn status_configs_show_through_the_index() {
        let id = ContextId::new(7).unwrap();
        let mut index = StatusIndex::new();
        index.apply_meta(&meta(id, &[("web", &["p+c1"])]));
        let mut record = record(
            "web",
            "p+c1",
            &[
                ("web", "Deployment", RsyncStatus::Applied),
                ("settings", "ConfigMap", RsyncStatus::Applied),
                ("gizmo", "Widget", RsyncStatus::Applied),
            ],
        );
        record.resources[2] = ResourceRecord::pending("gizmo", "Widget", "example.com/v1", json!({}));
        record.resources[2].status = RsyncStatus::Applied;
        record.cluster_status = Some(JsonText::from(json!({
            "deploymentStatuses": [{"metadata": {"name": "web", "generation": 1}, "spec": {"replicas": 1},
                "status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1},
                "statusRemote": 1}],
            "resourceStatuses": [{"group": "example.com", "version": "v1", "kind": "Widget", "name": "gizmo",
                "statusRemote": "Pending", "readyCondition": "Synced",
                "res": {"kind": "Widget", "apiVersion": "example.com/v1", "metadata": {"name": "gizmo"},
                        "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}}}],
            "statusCollectionDisabled": [{"group": "", "kind": "ConfigMap"}],
        })));
        index.apply_cluster(id, &record);
        let cluster = &index.context(id).unwrap().apps[0].clusters[0];
        let by_name = |name: &str| cluster.resources.iter().find(|r| &*r.name == name).unwrap();
        assert_eq!(by_name("web").status_remote.as_deref(), Some(&json!(1)));
        assert_eq!(by_name("web").ready, Some(ReadyStatus::Ready));
        let gizmo = by_name("gizmo");
        assert_eq!(gizmo.status_remote.as_deref(), Some(&json!("Pending")));
        assert_eq!(
            gizmo.ready,
            Some(ReadyStatus::NotReady),
            "Synced is the condition that means ready, and it is False (Ready=True does not count)"
        );
        let settings = by_name("settings");
        assert!(settings.collection_disabled);
        assert_eq!(settings.cluster, ClusterResourceStatus::Unknown);
        assert_eq!(settings.ready, None);
        assert!(
            settings
                .verdict
                .as_ref()
                .unwrap()
                .message
                .contains("not collected")
        );
    }

    /// A clone of a context is a snapshot: it shares every (app, cluster) entry, a later change copies only the
    /// entry it changes, and the snapshot keeps what it saw.
    #[test]
    fn a_snapshot_shares_unchanged_clusters_and_keeps_what_it_saw() {
        let id = ContextId::new(8).unwrap();
        let mut index = StatusIndex::new();
        index.apply_meta(&meta(id, &[("sink", &["p+edge01", "p+edge02"])]));
        for cluster in ["p+edge01", "p+edge02"] {
            index.apply_cluster(
                id,
                &record("sink", cluster, &[("svc", "Service", RsyncStatus::Pending)]),
            );
        }
        let snapshot = index.context(id).unwrap().clone();
        index.apply_cluster(
            id,
            &record("sink", "p+edge01", &[("svc", "Service", RsyncStatus::Applied)]),
        );
        let heard_on_edge02 = |at: &str| heard(id, "sink", "p+edge02", at);
        index.apply(&heard_on_edge02("2026-11-27T10:00:00Z"));
        let now = index.context(id).unwrap();
        assert_eq!(now.apps[0].clusters[0].resources[0].rsync, RsyncStatus::Applied);
        assert_eq!(
            snapshot.apps[0].clusters[0].resources[0].rsync,
            RsyncStatus::Pending
        );
        assert_eq!(snapshot.counts.rsync, [2, 0, 0, 0, 0]);
        assert!(now.apps[0].clusters[1].heard_at.is_some());
        assert!(snapshot.apps[0].clusters[1].heard_at.is_none());
        // A heartbeat that does not move the time forward leaves the entry shared.
        let shared = index.context(id).unwrap().clone();
        index.apply(&heard_on_edge02("2026-11-27T09:00:00Z"));
        let now = index.context(id).unwrap();
        assert!(Arc::ptr_eq(&shared.apps[0].clusters[1], &now.apps[0].clusters[1]));
        assert!(Arc::ptr_eq(&shared.apps[0].clusters[0], &now.apps[0].clusters[0]));
    }

    #[test]
    fn counters_follow_every_change_and_order_follows_the_meta() {
        let id = ContextId::new(7).unwrap();
        let mut index = StatusIndex::new();
        // A cluster record may arrive before its context's meta.
        index.apply_cluster(
            id,
            &record(
                "sink",
                "p+edge02",
                &[("sink-service", "Service", RsyncStatus::Applied)],
            ),
        );
        index.apply_meta(&meta(
            id,
            &[("packetgen", &["p+edge01"]), ("sink", &["p+edge01", "p+edge02"])],
        ));
        index.apply_cluster(
            id,
            &record(
                "sink",
                "p+edge01",
                &[
                    ("sink-service", "Service", RsyncStatus::Pending),
                    ("fw0-sink", "Deployment", RsyncStatus::Failed),
                ],
            ),
        );
        let entry = index.context(id).unwrap();
        let apps: Vec<_> = entry.apps.iter().map(|a| &*a.name).collect();
        assert_eq!(apps, ["packetgen", "sink"]);
        let clusters: Vec<_> = entry.apps[1].clusters.iter().map(|c| c.cluster()).collect();
        assert_eq!(clusters, ["edge01", "edge02"]);
        let names: Vec<_> = entry.apps[1].clusters[0]
            .resources
            .iter()
            .map(|r| &*r.name)
            .collect();
        assert_eq!(
            names,
            ["fw0-sink", "sink-service"],
            "resources in <name>+<Kind> order"
        );
        assert_eq!(entry.counts.rsync, [1, 1, 1, 0, 0]);
        assert_eq!(entry.counts.cluster, [0, 0, 3], "no bundle heard: Unknown");

        // Rewriting a record replaces its counts; deleting it removes them.
        index.apply_cluster(
            id,
            &record(
                "sink",
                "p+edge01",
                &[("sink-service", "Service", RsyncStatus::Applied)],
            ),
        );
        assert_eq!(index.context(id).unwrap().counts.rsync, [0, 2, 0, 0, 0]);
        index.apply(&ContextChange::ClusterDeleted {
            id,
            app: "sink".into(),
            cluster: "p+edge02".into(),
        });
        assert_eq!(index.context(id).unwrap().counts.rsync, [0, 1, 0, 0, 0]);
        assert_eq!(index.context(id).unwrap().apps[1].counts.rsync, [0, 1, 0, 0, 0]);
        index.apply(&ContextChange::MetaDeleted(id));
        assert!(index.is_empty());
    }

    #[test]
    fn records_heartbeats_and_removals_find_their_cluster_through_reorders() {
        let id = ContextId::new(8).unwrap();
        let mut index = StatusIndex::new();
        let names: Vec<String> = (0..200).map(|i| format!("p+edge{i:03}")).collect();
        let listed: Vec<&str> = names.iter().map(String::as_str).collect();
        // Records first (the clusters pushed as they come), then a meta listing them in reverse order.
        for name in listed.iter().step_by(3) {
            index.apply_cluster(
                id,
                &record("app", name, &[("svc", "Service", RsyncStatus::Applied)]),
            );
        }
        let reversed: Vec<&str> = listed.iter().rev().copied().collect();
        index.apply_meta(&meta(id, &[("app", &reversed)]));
        let order = |index: &StatusIndex| -> Vec<String> {
            index.context(id).unwrap().apps[0]
                .clusters
                .iter()
                .map(|c| c.full_name.to_string())
                .collect()
        };
        assert_eq!(order(&index), reversed);
        // Every record reaches its own cluster after the reorder.
        for name in &listed {
            index.apply_cluster(
                id,
                &record("app", name, &[("svc", "Service", RsyncStatus::Failed)]),
            );
        }
        let app = &index.context(id).unwrap().apps[0];
        assert!(
            app.clusters
                .iter()
                .all(|c| c.counts.rsync[RsyncStatus::Failed as usize] == 1)
        );
        assert_eq!(app.clusters.len(), 200, "no cluster added twice");
        // A removal shifts the clusters after it: later records and heartbeats still find theirs.
        index.apply(&ContextChange::ClusterDeleted {
            id,
            app: "app".into(),
            cluster: "p+edge150".into(),
        });
        index.apply(&heard(id, "app", "p+edge010", "2026-01-02T03:04:05Z"));
        index.apply_cluster(
            id,
            &record("app", "p+edge000", &[("svc", "Service", RsyncStatus::Applied)]),
        );
        let app = &index.context(id).unwrap().apps[0];
        assert_eq!(app.clusters.len(), 199);
        let cluster = |name: &str| app.clusters.iter().find(|c| &*c.full_name == name).unwrap();
        assert!(cluster("p+edge010").heard_at.is_some());
        assert_eq!(app.clusters.iter().filter(|c| c.heard_at.is_some()).count(), 1);
        assert_eq!(
            cluster("p+edge000").counts.rsync[RsyncStatus::Applied as usize],
            1
        );
        assert_eq!(app.counts.rsync[RsyncStatus::Failed as usize], 198);
        // A meta listing a cluster twice keeps the first's entry and gives the second a fresh one.
        index.apply_meta(&meta(id, &[("app", &["p+edge000", "p+edge000"])]));
        let app = &index.context(id).unwrap().apps[0];
        assert_eq!(app.clusters[0].counts.rsync[RsyncStatus::Applied as usize], 1);
        assert_eq!(app.clusters[1].counts.rsync, [0; 5]);
        assert_eq!(
            app.clusters.len(),
            200,
            "the unlisted 198 stay after the listed ones"
        );
    }

    #[test]
    fn an_unreported_certificate_request_does_not_hold_readiness_back() {
        use emco_appcontext::ResourceRole;

        let id = ContextId::new(12).unwrap();
        let mut index = StatusIndex::new();
        let mut cluster = ClusterRecord::pending(
            "logical-cloud",
            "p+c1",
            vec![
                ResourceRecord::pending(
                    "lc1-user-csr",
                    "CertificateSigningRequest",
                    "certificates.k8s.io/v1",
                    json!({}),
                )
                .with_role(ResourceRole::Certificate),
                ResourceRecord::pending(
                    "plain-csr",
                    "CertificateSigningRequest",
                    "certificates.k8s.io/v1",
                    json!({}),
                ),
            ],
        );
        for resource in &mut cluster.resources {
            resource.status = RsyncStatus::Applied;
        }
        cluster.connectivity = Connectivity::Available;
        // The cluster reports its bundle, which holds no cluster-scoped request.
        cluster.cluster_status = Some(JsonText::from(json!({"ready": true, "resourceCount": 0})));
        index.apply_cluster(id, &cluster);
        let entry = &index.context(id).unwrap().apps[0].clusters[0];
        let ready: Vec<_> = entry.resources.iter().map(|r| (&*r.name, r.ready)).collect();
        assert_eq!(
            ready,
            [
                ("lc1-user-csr", None),
                ("plain-csr", Some(ReadyStatus::NotPresent)),
            ],
            "only the logical cloud's own request is exempt"
        );
    }

    #[test]
    fn a_heartbeat_moves_heard_at_forward_and_a_rewritten_record_does_not_move_it_back() {
        let id = ContextId::new(12).unwrap();
        let mut index = StatusIndex::new();
        let mut reported = record("a", "p+c1", &[("web", "Deployment", RsyncStatus::Applied)]);
        reported.heard_at = Some("2026-11-27T10:00:00Z".into());
        index.apply_cluster(id, &reported);
        let heard_at = |index: &StatusIndex| {
            index.context(id).unwrap().apps[0].clusters[0]
                .heard_at
                .map(|t| t.to_string())
        };
        let beat = |at: &str| heard(id, "a", "p+c1", at);
        index.apply(&beat("2026-11-27T10:00:20Z"));
        assert_eq!(heard_at(&index).as_deref(), Some("2026-11-27T10:00:20Z"));
        // An older beat (replayed) changes nothing.
        index.apply(&beat("2026-11-27T10:00:10Z"));
        assert_eq!(heard_at(&index).as_deref(), Some("2026-11-27T10:00:20Z"));
        // rsync rewrites the record (a resource's status) with the time of the last full status: still heard at 20 s.
        reported.resources[0].status = RsyncStatus::Failed;
        index.apply_cluster(id, &reported);
        assert_eq!(heard_at(&index).as_deref(), Some("2026-11-27T10:00:20Z"));
        let gaps = &index.context(id).unwrap().apps[0].clusters[0].heard_gaps;
        assert_eq!(gaps.len(), 1, "the 20 s silence the beat ended: {gaps:?}");
        // A beat for a cluster the index does not hold is ignored.
        index.apply(&heard(id, "a", "p+c9", "2026-11-27T10:00:30Z"));
        assert_eq!(index.context(id).unwrap().apps[0].clusters.len(), 1);
    }

    #[test]
    fn absent_hooks_do_not_count_as_not_present() {
        use emco_appcontext::ResourceRole;
        use emco_model::{Hook, HookDeletePolicy, HookEvent};

        let id = ContextId::new(11).unwrap();
        let mut index = StatusIndex::new();
        let hook = |events: Vec<HookEvent>| {
            ResourceRole::Hook(Hook {
                events,
                weight: 0,
                delete_policies: vec![HookDeletePolicy::HookSucceeded],
            })
        };
        let mut cluster = record(
            "a",
            "p+c1",
            &[
                ("web", "Deployment", RsyncStatus::Applied),
                ("migrate", "Job", RsyncStatus::Applied),
                ("cleanup", "Job", RsyncStatus::Pending),
                ("seed", "Job", RsyncStatus::Applied),
            ],
        );
        cluster.resources[1].role = hook(vec![HookEvent::PreInstall]);
        cluster.resources[2].role = hook(vec![HookEvent::PostDelete]);
        cluster.resources[3].role = hook(vec![HookEvent::PostInstall]);
        // The cluster reports the Deployment and the seed hook Job (still running); the migrate hook Job was
        // deleted by its policy and the cleanup hook never ran.
        cluster.cluster_status = Some(JsonText::from(json!({
            "deploymentStatuses": [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"replicas": 1}, "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1}}],
            "jobStatuses": [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "seed"},
                "spec": {"completions": 1}, "status": {"active": 1}}],
        })));
        index.apply_cluster(id, &cluster);
        let entry = &index.context(id).unwrap().apps[0].clusters[0];
        let ready: Vec<_> = entry.resources.iter().map(|r| (&*r.name, r.ready)).collect();
        assert_eq!(
            ready,
            [
                ("cleanup", None),
                ("migrate", None),
                ("seed", Some(ReadyStatus::NotReady)),
                ("web", Some(ReadyStatus::Ready)),
            ]
        );
        assert_eq!(entry.counts.ready, [1, 1, 0], "no NotPresent");
    }

    #[test]
    fn gvks_are_shared() {
        let id = ContextId::new(9).unwrap();
        let mut index = StatusIndex::new();
        index.apply_cluster(
            id,
            &record("a", "p+c1", &[("x", "Service", RsyncStatus::Pending)]),
        );
        index.apply_cluster(
            id,
            &record("a", "p+c2", &[("y", "Service", RsyncStatus::Pending)]),
        );
        let app = &index.context(id).unwrap().apps[0];
        assert!(Arc::ptr_eq(
            &app.clusters[0].resources[0].gvk,
            &app.clusters[1].resources[0].gvk
        ));
    }
}
