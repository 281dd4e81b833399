//! emco-monitor: the in-cluster agent that reports what is really in a cluster. It watches every object labelled
//! `emco/deployment-id` of the kinds the seed's ResourceBundleState lists (plus any configured kind) and keeps, for
//! each label value, the matching ResourceBundleState's status current ([`bundle`] builds it).
//!
//! It watches only what the cluster's bundles need: the ResourceBundleStates themselves (once their CRD is
//! established), and of the kinds it knows those some bundle's spec names (`spec.kinds`, written by rsync: the
//! kinds the app holds) — every known kind for a bundle whose spec names none — plus pods while any bundle exists.
//! An idle cluster carries one watch, a cluster running a Deployment, Services and ConfigMaps five, not one per
//! kind the monitor knows. No status is written while a newly watched kind is still listing (for at most
//! [`LIST_GRACE`]), so a bundle never reports the objects of a kind it just gained as missing.
//!
//! Bursts are coalesced: each bundle is written at most once per `coalesce` interval (200 ms by default); a change to a
//! bundle that was not written within the interval goes out after `gather` (20 ms), time for the changes it causes
//! (a Deployment's counts after its pod's readiness) to join it. A bundle
//! whose ResourceBundleState does not exist yet (rsync creates it after the app's objects) is retried less often.
//!
//! Every `heartbeat` (20 s by default) each bundle's status gets a fresh `status.heartbeat` (RFC 3339), even when
//! nothing changed, so that emco can tell a live monitor with nothing to say from a dead one: a write that carries
//! changes carries the heartbeat too; a bundle that did not change gets a merge patch of the heartbeat alone.
//!
//! Status configs (issue #16 §4) reach it through its own cluster, never by calling emco: rsync writes the configs
//! of an app's kinds into the app's ResourceBundleState spec (`spec.statusConfigs`). Each bundle's status is built
//! under its own configs ([`bundle::status_with`]); the kinds they name that it does not know are watched while some
//! bundle names them (at most [`MAX_DYNAMIC_KINDS`]). A kind no bundle needs any more stops being watched and its
//! objects are forgotten.
//!
//! With Git settings (a GitOps cluster, which emco cannot reach), [`git`] also commits the bundles to the cluster's
//! status branch, from where emco reads them.
//!
//! Architecture invariant: its only outputs are ResourceBundleState status in its own cluster and, for a GitOps
//! cluster, the same bundles in its status folder of the repository.

pub mod agent;
pub mod bundle;
pub mod git;
mod seen;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use bundle::ObjectKey;
use emco_k8s::bundle::{BundleKind, BundleStatusConfig, bundle_kinds, bundle_status_configs};
use emco_k8s::{DEPLOYMENT_ID_LABEL, RBS_CRD_NAME, RBS_GROUP, RBS_KIND, RBS_PLURAL, RBS_VERSION};
use futures::StreamExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::{WatchStreamExt, watcher};
use seen::{BundleHead, Seen};
use serde_json::{Value as Json, json};
use sha2::{Digest as _, Sha256};

/// A kind the monitor watches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WatchedKind {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
}

impl WatchedKind {
    /// A kind from its parts.
    #[must_use]
    pub fn new(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
        }
    }

    /// Parses `group/version/Kind/plural` (group empty for the core group: `/v1/Pod/pods`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split('/').collect();
        match parts.as_slice() {
            [group, version, kind, plural]
                if !version.is_empty() && !kind.is_empty() && !plural.is_empty() =>
            {
                Ok(Self::new(group, version, kind, plural))
            }
            _ => Err(format!(
                "'{text}' is not group/version/Kind/plural (e.g. example.com/v1/Widget/widgets, or /v1/Pod/pods)"
            )),
        }
    }

    fn resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(&self.group, &self.version, &self.kind),
            &self.plural,
        )
    }
}

/// How many kinds status configs may add to the watched ones: each is one more watch on the API server.
pub const MAX_DYNAMIC_KINDS: usize = 32;

/// How long statuses wait for a newly watched kind's first list: a watch that cannot list (a kind the role does
/// not grant, say) holds them back no longer.
pub const LIST_GRACE: Duration = Duration::from_secs(10);

/// The kinds the seed's ResourceBundleState has arrays for.
#[must_use]
pub fn default_kinds() -> Vec<WatchedKind> {
    vec![
        WatchedKind::new("", "v1", "Pod", "pods"),
        WatchedKind::new("", "v1", "Service", "services"),
        WatchedKind::new("", "v1", "ConfigMap", "configmaps"),
        WatchedKind::new("", "v1", "Secret", "secrets"),
        WatchedKind::new("apps", "v1", "Deployment", "deployments"),
        WatchedKind::new("apps", "v1", "DaemonSet", "daemonsets"),
        WatchedKind::new("apps", "v1", "StatefulSet", "statefulsets"),
        WatchedKind::new("batch", "v1", "Job", "jobs"),
        WatchedKind::new("networking.k8s.io", "v1", "Ingress", "ingresses"),
    ]
}

/// How the monitor runs.
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    /// The kinds it knows: each is watched while a bundle names it (or names none); pods while any bundle exists.
    pub kinds: Vec<WatchedKind>,
    /// At most one write per bundle per interval.
    pub coalesce: Duration,
    /// How long a change waits for the changes it causes (a pod's readiness, then its Deployment's counts) before
    /// a bundle not written within `coalesce` is written.
    pub gather: Duration,
    /// How long to wait before retrying a bundle whose ResourceBundleState is missing.
    pub missing_retry: Duration,
    /// How often every bundle's `status.heartbeat` is refreshed, changed or not.
    pub heartbeat: Duration,
    /// The field manager of its writes.
    pub field_manager: String,
}

/// The default of [`MonitorConfig::heartbeat`].
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(20);

/// The status field the heartbeat is written to.
pub const HEARTBEAT_FIELD: &str = emco_k8s::RBS_HEARTBEAT_FIELD;

impl Default for MonitorConfig {
    fn default() -> Self {
        Self {
            kinds: default_kinds(),
            coalesce: Duration::from_millis(200),
            gather: Duration::from_millis(20),
            missing_retry: Duration::from_secs(2),
            heartbeat: DEFAULT_HEARTBEAT,
            field_manager: "emco-monitor".into(),
        }
    }
}

/// One bundle: the objects of one label value in one namespace.
#[derive(Default)]
struct Bundle {
    /// Shared, so a flush can take a snapshot cheaply and build the status outside the lock; kept as text
    /// ([`bundle::Reported`]), not as trees.
    objects: BTreeMap<ObjectKey, Arc<bundle::Reported>>,
    dirty: bool,
    /// When it last went from written to changed.
    dirty_since: Option<tokio::time::Instant>,
    /// When the ResourceBundleState was last found missing.
    missing_since: Option<tokio::time::Instant>,
    /// The digest of the status last written (a rewrite of the same status is skipped). Not the status itself:
    /// that is as large as every object the bundle reports, and the cluster keeps it already.
    written: Option<StatusDigest>,
    /// When a write was last started: the next one waits until `coalesce` later.
    attempted_at: Option<tokio::time::Instant>,
    /// When a write last succeeded: the next heartbeat is due `heartbeat` later.
    written_at: Option<tokio::time::Instant>,
}

impl Bundle {
    /// When its next heartbeat is due (only once a status was written: before, the status write is pending).
    fn heartbeat_due(&self, config: &MonitorConfig) -> Option<tokio::time::Instant> {
        self.written_at.map(|at| at + config.heartbeat)
    }

    fn mark_dirty(&mut self) {
        if !self.dirty {
            self.dirty = true;
            self.dirty_since = Some(tokio::time::Instant::now());
        }
    }
}

/// A bundle's identity: (namespace, label value).
type BundleKey = (String, String);

/// What a ResourceBundleState's spec tells the monitor.
#[derive(Debug, Default, Clone, PartialEq)]
struct BundleSpec {
    /// The kinds the app holds; `None` when the spec does not say (any known kind may be the app's).
    kinds: Option<Vec<BundleKind>>,
    /// The status configs of the app's kinds.
    configs: Arc<Vec<BundleStatusConfig>>,
}

impl BundleSpec {
    fn of(bundle: BundleHead) -> Self {
        let rbs = json!({"spec": bundle.spec});
        Self {
            kinds: bundle_kinds(&rbs),
            configs: Arc::new(bundle_status_configs(&rbs)),
        }
    }

    /// Whether the bundle may hold objects of `kind`.
    fn names(&self, kind: &WatchedKind) -> bool {
        self.kinds.as_ref().is_none_or(|kinds| {
            kinds
                .iter()
                .any(|named| named.group == kind.group && named.kind == kind.kind)
        })
    }
}

fn is_pod(kind: &WatchedKind) -> bool {
    kind.group.is_empty() && kind.kind == "Pod"
}

#[derive(Default)]
struct State {
    /// By (namespace, label value).
    bundles: HashMap<(String, String), Bundle>,
    /// What each ResourceBundleState's spec says, by (namespace, name = label value).
    specs: HashMap<BundleKey, BundleSpec>,
    /// Bumped whenever `specs` changes, so the kinds to watch are worked out again.
    specs_generation: u64,
    /// The kinds whose watch started and has not listed yet, with when it started (see [`LIST_GRACE`]).
    listing: HashMap<WatchedKind, tokio::time::Instant>,
}

impl State {
    /// Records what a bundle's ResourceBundleState spec says (`None`: it is gone); a change of its configs marks
    /// the bundle for rewriting.
    fn set_spec(&mut self, key: BundleKey, spec: Option<BundleSpec>) {
        if self.specs.get(&key) == spec.as_ref() {
            return;
        }
        let configs_before = self.specs.get(&key).map(|known| known.configs.clone());
        let configs_after = spec.as_ref().map(|spec| spec.configs.clone());
        let added = spec.is_some() && !self.specs.contains_key(&key);
        match spec {
            Some(spec) => self.specs.insert(key.clone(), spec),
            None => self.specs.remove(&key),
        };
        self.specs_generation += 1;
        if added {
            self.adopt_strays(&key);
        }
        if configs_before.unwrap_or_default() != configs_after.unwrap_or_default()
            && let Some(bundle) = self.bundles.get_mut(&key)
        {
            bundle.mark_dirty();
        }
    }

    /// The bundle an object of `namespace` labelled `label` is filed under: its own namespace's when a
    /// ResourceBundleState of that label is there, else the namespace of the one elsewhere (an app's objects in
    /// other namespaces than its own, such as a chart's Services in `kube-system`, are reported by its bundle too),
    /// else its own namespace's until one appears.
    fn bundle_key(&self, namespace: String, label: String) -> BundleKey {
        let own = (namespace, label);
        if self.specs.contains_key(&own) {
            return own;
        }
        self.specs
            .keys()
            .find(|(_, other)| *other == own.1)
            .cloned()
            .unwrap_or(own)
    }

    /// Moves into the bundle `key` (whose ResourceBundleState just appeared) the objects filed under its label in
    /// other namespaces that have no ResourceBundleState of that label.
    fn adopt_strays(&mut self, key: &BundleKey) {
        let strays: Vec<BundleKey> = self
            .bundles
            .keys()
            .filter(|(namespace, label)| *label == key.1 && *namespace != key.0)
            .filter(|stray| !self.specs.contains_key(*stray))
            .cloned()
            .collect();
        for stray in strays {
            let Some(bundle) = self.bundles.remove(&stray) else {
                continue;
            };
            let adopter = self.bundles.entry(key.clone()).or_default();
            adopter.objects.extend(bundle.objects);
            adopter.mark_dirty();
        }
    }

    /// The kinds to watch, in a stable order: of the `known` ones, pods while any bundle exists and the others
    /// while a bundle names them (or names none); then the kinds the configs name that `known` does not hold and
    /// whose objects are collected, at most [`MAX_DYNAMIC_KINDS`] of those.
    fn wanted_kinds(&self, known: &[WatchedKind]) -> Vec<WatchedKind> {
        if self.specs.is_empty() {
            return Vec::new();
        }
        let mut wanted: Vec<WatchedKind> = known
            .iter()
            .filter(|kind| is_pod(kind) || self.specs.values().any(|spec| spec.names(kind)))
            .cloned()
            .collect();
        wanted.extend(self.extra_kinds(known));
        wanted
    }

    /// The kinds the configs name that `fixed` does not hold and whose objects are collected, in a stable order,
    /// at most [`MAX_DYNAMIC_KINDS`].
    fn extra_kinds(&self, fixed: &[WatchedKind]) -> Vec<WatchedKind> {
        let mut kinds: Vec<WatchedKind> = self
            .specs
            .values()
            .flat_map(|spec| spec.configs.iter())
            .filter(|config| config.collect && !config.plural.is_empty())
            .filter(|config| !fixed.iter().any(|kind| config.is_for(&kind.group, &kind.kind)))
            .map(|config| WatchedKind::new(&config.group, &config.version, &config.kind, &config.plural))
            .collect();
        kinds.sort_by(|a, b| (&a.group, &a.kind, &a.version).cmp(&(&b.group, &b.kind, &b.version)));
        kinds.dedup_by(|a, b| a.group == b.group && a.kind == b.kind);
        if kinds.len() > MAX_DYNAMIC_KINDS {
            tracing::warn!(
                named = kinds.len(),
                watched = MAX_DYNAMIC_KINDS,
                "status configs name more kinds than are watched"
            );
            kinds.truncate(MAX_DYNAMIC_KINDS);
        }
        kinds
    }

    /// Until when statuses wait for a newly watched kind's first list, if one is listing (within [`LIST_GRACE`]).
    fn listing_until(&self, now: tokio::time::Instant) -> Option<tokio::time::Instant> {
        self.listing
            .values()
            .map(|started| *started + LIST_GRACE)
            .filter(|until| *until > now)
            .max()
    }

    /// Drops every object of `kind` (no longer watched) from the bundles.
    fn forget_kind(&mut self, kind: &WatchedKind) {
        self.listing.remove(kind);
        for bundle in self.bundles.values_mut() {
            let before = bundle.objects.len();
            bundle
                .objects
                .retain(|key, _| !(key.group == kind.group && key.kind == kind.kind));
            if bundle.objects.len() != before {
                bundle.mark_dirty();
            }
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn bundle_of(object: &Seen) -> Option<(String, String)> {
    let label = object.metadata.labels.as_ref()?.get(DEPLOYMENT_ID_LABEL)?.clone();
    let namespace = object
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_string());
    Some((namespace, label))
}

fn key_of(kind: &WatchedKind, object: &Seen) -> ObjectKey {
    ObjectKey {
        group: kind.group.clone(),
        version: kind.version.clone(),
        kind: kind.kind.clone(),
        namespace: object.metadata.namespace.clone().unwrap_or_default(),
        name: object.metadata.name.clone().unwrap_or_default(),
    }
}

fn reported(kind: &WatchedKind, object: Seen) -> bundle::Reported {
    let mut value = object.object;
    let api_version = if kind.group.is_empty() {
        kind.version.clone()
    } else {
        format!("{}/{}", kind.group, kind.version)
    };
    value["apiVersion"] = json!(api_version);
    value["kind"] = json!(kind.kind);
    let sanitized = bundle::sanitize(&kind.group, &kind.kind, value);
    bundle::Reported::new(&kind.group, &kind.kind, &sanitized)
}

/// Removes `key` from whichever bundle holds it.
fn forget(state: &mut State, key: &ObjectKey) {
    for bundle in state.bundles.values_mut() {
        if bundle.objects.remove(key).is_some() {
            bundle.mark_dirty();
        }
    }
}

/// Files an object under its bundle (serialized before the lock is taken: the watches share it).
fn record(state: &Mutex<State>, kind: &WatchedKind, object: Seen) {
    let key = key_of(kind, &object);
    let filed = (object.metadata.deletion_timestamp.is_none())
        .then(|| bundle_of(&object))
        .flatten()
        .map(|bundle_key| (bundle_key, Arc::new(reported(kind, object))));
    let mut state = lock(state);
    // An object can move between bundles when its label changes.
    forget(&mut state, &key);
    if let Some(((namespace, label), reported)) = filed {
        let bundle_key = state.bundle_key(namespace, label);
        let bundle = state.bundles.entry(bundle_key).or_default();
        bundle.objects.insert(key, reported);
        bundle.mark_dirty();
    }
}

async fn watch_kind(client: kube::Client, kind: WatchedKind, state: Arc<Mutex<State>>, changed: Arc<Notify>) {
    let api: Api<Seen> = Api::all_with(client, &kind.resource());
    let config = watcher::Config::default().labels(DEPLOYMENT_ID_LABEL);
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    let mut listed: HashSet<ObjectKey> = HashSet::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(watcher::Event::Apply(object)) => record(&state, &kind, object),
            Ok(watcher::Event::Delete(object)) => forget(&mut lock(&state), &key_of(&kind, &object)),
            Ok(watcher::Event::Init) => listed.clear(),
            Ok(watcher::Event::InitApply(object)) => {
                listed.insert(key_of(&kind, &object));
                record(&state, &kind, object);
            }
            Ok(watcher::Event::InitDone) => {
                // Objects of this kind that disappeared while the watch was down.
                let mut state = lock(&state);
                state.listing.remove(&kind);
                for bundle in state.bundles.values_mut() {
                    let before = bundle.objects.len();
                    bundle.objects.retain(|key, _| {
                        !(key.group == kind.group && key.kind == kind.kind) || listed.contains(key)
                    });
                    if bundle.objects.len() != before {
                        bundle.mark_dirty();
                    }
                }
            }
            Err(err) => tracing::debug!(kind = kind.kind, error = %err, "watch failed; retrying"),
        }
        changed.notify_one();
    }
}

/// The ResourceBundleState resource.
fn bundle_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(RBS_GROUP, RBS_VERSION, RBS_KIND),
        RBS_PLURAL,
    )
}

fn bundle_key_of(object: &BundleHead) -> BundleKey {
    (
        object
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string()),
        object.metadata.name.clone().unwrap_or_default(),
    )
}

/// The CustomResourceDefinition resource.
fn crd_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    )
}

/// Whether a CustomResourceDefinition says its objects are served (condition `Established` is `True`).
fn established(crd: Option<&DynamicObject>) -> bool {
    crd.and_then(|crd| crd.data["status"]["conditions"].as_array())
        .into_iter()
        .flatten()
        .any(|condition| condition["type"] == "Established" && condition["status"] == "True")
}

/// Waits, watching it by name, until the ResourceBundleState CRD is established: until then there is nothing to
/// report into (rsync installs it with an app's first deployment, or an operator with the monitor).
async fn bundle_crd_established(client: &kube::Client) {
    let crds: Api<DynamicObject> = Api::all_with(client.clone(), &crd_resource());
    loop {
        match kube::runtime::wait::await_condition(crds.clone(), RBS_CRD_NAME, established).await {
            Ok(_) => return,
            Err(err) => {
                tracing::debug!(error = %err, "cannot watch the ResourceBundleState CRD; retrying");
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        }
    }
}

/// Follows every ResourceBundleState of the cluster for what its spec says: the kinds its app holds and their
/// status configs.
async fn watch_bundles(client: kube::Client, state: Arc<Mutex<State>>, changed: Arc<Notify>) {
    bundle_crd_established(&client).await;
    let api: Api<BundleHead> = Api::all_with(client, &bundle_resource());
    let mut stream = watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    let mut listed: HashSet<BundleKey> = HashSet::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(watcher::Event::Apply(object)) => {
                lock(&state).set_spec(bundle_key_of(&object), Some(BundleSpec::of(object)));
            }
            Ok(watcher::Event::Delete(object)) => lock(&state).set_spec(bundle_key_of(&object), None),
            Ok(watcher::Event::Init) => listed.clear(),
            Ok(watcher::Event::InitApply(object)) => {
                let key = bundle_key_of(&object);
                listed.insert(key.clone());
                lock(&state).set_spec(key, Some(BundleSpec::of(object)));
            }
            Ok(watcher::Event::InitDone) => {
                let mut state = lock(&state);
                let gone: Vec<BundleKey> = state
                    .specs
                    .keys()
                    .filter(|key| !listed.contains(*key))
                    .cloned()
                    .collect();
                for key in gone {
                    state.set_spec(key, None);
                }
            }
            Err(err) => tracing::debug!(error = %err, "ResourceBundleState watch failed; retrying"),
        }
        changed.notify_one();
    }
}

/// When a bundle may be written next (a dirty one, or one whose heartbeat is due), if any.
fn next_due(state: &State, config: &MonitorConfig) -> Option<tokio::time::Instant> {
    let dirty = state.bundles.values().filter(|b| b.dirty).map(|b| {
        let gathered = b.dirty_since.map(|since| since + config.gather);
        let coalesced = b.attempted_at.map(|at| at + config.coalesce);
        let retried = b.missing_since.map(|since| since + config.missing_retry);
        gathered
            .max(coalesced)
            .max(retried)
            .unwrap_or_else(tokio::time::Instant::now)
    });
    let beats = state
        .bundles
        .values()
        .filter(|b| !b.dirty)
        .filter_map(|b| b.heartbeat_due(config));
    dirty.chain(beats).min()
}

/// The SHA-256 of a status's JSON: what tells a status from the one last written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatusDigest([u8; 32]);

impl StatusDigest {
    fn of(status: &str) -> Self {
        Self(Sha256::digest(status.as_bytes()).into())
    }
}

/// What one flush writes of a bundle.
enum Write {
    /// Its status, built from the snapshot under the bundle's status configs, with a heartbeat.
    Status(
        BTreeMap<ObjectKey, Arc<bundle::Reported>>,
        Arc<Vec<BundleStatusConfig>>,
    ),
    /// The heartbeat alone (nothing changed since the last write).
    Heartbeat,
}

/// The merge patch of a write, as JSON text: the status (if it changed) and the heartbeat. A status that no longer
/// lists disabled kinds clears the list (a merge patch keeps the fields it does not name).
fn patch_of(status: Option<&bundle::StatusText>, heartbeat: &str) -> String {
    let heartbeat = format!("\"{HEARTBEAT_FIELD}\":{}", Json::from(heartbeat));
    let Some(status) = status else {
        return format!("{{\"status\":{{{heartbeat}}}}}");
    };
    // The status is a JSON object's text: its fields, then the heartbeat (and the cleared list) before its end.
    let fields = status
        .text
        .trim()
        .strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap_or_default();
    let mut patch = format!("{{\"status\":{{{fields}");
    if !fields.trim().is_empty() {
        patch.push(',');
    }
    patch.push_str(&heartbeat);
    if !status.lists_disabled {
        patch.push_str(&format!(
            ",\"{}\":null",
            emco_k8s::bundle::COLLECTION_DISABLED_FIELD
        ));
    }
    patch.push_str("}}");
    patch
}

/// Writes the statuses of the dirty bundles that are due (not written within the last `coalesce`, not waiting for a
/// missing ResourceBundleState); returns when the next one is due.
async fn flush(
    client: &kube::Client,
    state: &Arc<Mutex<State>>,
    config: &MonitorConfig,
) -> Option<tokio::time::Instant> {
    let now = tokio::time::Instant::now();
    // Snapshots under the lock (reference counts only); the statuses, which for thousands of pods take a while, are
    // built off the async workers so the watches keep flowing meanwhile.
    let snapshots: Vec<(BundleKey, Write)> = {
        let mut guard = lock(state);
        if let Some(until) = guard.listing_until(now) {
            // A kind just watched is listing: its objects are not in the bundles yet.
            return Some(until);
        }
        let State { bundles, specs, .. } = &mut *guard;
        bundles
            .iter_mut()
            .filter_map(|(key, b)| {
                let write_due = b.dirty
                    && b.missing_since
                        .is_none_or(|since| now.duration_since(since) >= config.missing_retry)
                    && b.attempted_at
                        .is_none_or(|at| now.duration_since(at) >= config.coalesce)
                    && b.dirty_since
                        .is_none_or(|since| now.duration_since(since) >= config.gather);
                let beat_due = !b.dirty && b.heartbeat_due(config).is_some_and(|due| due <= now);
                let write = if write_due {
                    b.dirty = false;
                    let configs = specs.get(key).map(|spec| spec.configs.clone());
                    Write::Status(b.objects.clone(), configs.unwrap_or_default())
                } else if beat_due {
                    Write::Heartbeat
                } else {
                    return None;
                };
                b.attempted_at = Some(now);
                Some((key.clone(), write))
            })
            .collect()
    };
    if snapshots.is_empty() {
        return next_due(&lock(state), config);
    }
    let built = tokio::task::spawn_blocking(move || {
        snapshots
            .into_iter()
            .map(|(key, write)| {
                let status = match write {
                    Write::Status(objects, configs) => {
                        let status = bundle::status_text(&objects, &configs);
                        let digest = StatusDigest::of(&status.text);
                        Some((status, digest))
                    }
                    Write::Heartbeat => None,
                };
                (key, status)
            })
            .collect::<Vec<_>>()
    })
    .await;
    let due = match built {
        Ok(due) => due,
        Err(err) => {
            tracing::warn!(error = %err, "building bundle statuses failed");
            return next_due(&lock(state), config);
        }
    };
    let resource = bundle_resource();
    for ((namespace, label), status) in due {
        // A rewrite of the same status is skipped unless its heartbeat is due; then only the heartbeat goes.
        let status = {
            let state = lock(state);
            let Some(bundle) = state.bundles.get(&(namespace.clone(), label.clone())) else {
                continue;
            };
            let beat_due = bundle.heartbeat_due(config).is_some_and(|due| due <= now);
            match status {
                Some((_, digest)) if bundle.written == Some(digest) && !beat_due => continue,
                Some((_, digest)) if bundle.written == Some(digest) => None,
                status => status,
            }
        };
        // The answer is decoded as a bundle head: its status, the one just written, is not built again.
        let api: Api<BundleHead> = Api::namespaced_with(client.clone(), &namespace, &resource);
        let params = PatchParams::apply(&config.field_manager);
        let (status, digest) = status.unzip();
        let patch = patch_of(status.as_ref(), &emco_model::now_timestamp());
        let patch = match serde_json::value::RawValue::from_string(patch) {
            Ok(patch) => patch,
            Err(err) => {
                tracing::warn!(bundle = label, error = %err, "a bundle's status patch is not JSON; not written");
                continue;
            }
        };
        let result = api.patch_status(&label, &params, &Patch::Merge(&patch)).await;
        let mut state = lock(state);
        let Some(bundle) = state.bundles.get_mut(&(namespace.clone(), label.clone())) else {
            continue;
        };
        match result {
            Ok(_) => {
                bundle.missing_since = None;
                bundle.written_at = Some(now);
                if digest.is_some() {
                    bundle.written = digest;
                }
                if bundle.objects.is_empty() {
                    // Everything it tracked is gone and reported: forget the bundle.
                    state.bundles.remove(&(namespace, label));
                }
            }
            Err(kube::Error::Api(response)) if response.code == 404 => {
                if bundle.objects.is_empty() {
                    // Nothing to report and nowhere to report it (the bundle went first): forget it.
                    state.bundles.remove(&(namespace, label));
                } else {
                    bundle.dirty = true;
                    bundle.missing_since = Some(now);
                }
            }
            Err(err) => {
                tracing::debug!(bundle = label, error = %err, "cannot write the ResourceBundleState status; will retry");
                bundle.dirty = true;
            }
        }
    }
    next_due(&lock(state), config)
}

/// Runs the monitor against `client`'s cluster until `shutdown` resolves.
pub async fn run(
    client: kube::Client,
    config: MonitorConfig,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let state = Arc::new(Mutex::new(State::default()));
    let changed = Arc::new(Notify::new());
    let mut watches = tokio::task::JoinSet::new();
    watches.spawn(watch_bundles(client.clone(), state.clone(), changed.clone()));
    // The kinds watched, with the handle that stops each one's watch.
    let mut watched: HashMap<WatchedKind, tokio::task::AbortHandle> = HashMap::new();
    let mut seen_generation = 0;
    tokio::pin!(shutdown);
    loop {
        let generation = lock(&state).specs_generation;
        if generation != seen_generation {
            seen_generation = generation;
            let wanted = lock(&state).wanted_kinds(&config.kinds);
            let dropped: Vec<WatchedKind> = watched
                .keys()
                .filter(|kind| !wanted.contains(kind))
                .cloned()
                .collect();
            for kind in dropped {
                if let Some(handle) = watched.remove(&kind) {
                    handle.abort();
                }
                lock(&state).forget_kind(&kind);
                tracing::debug!(
                    kind = kind.kind,
                    group = kind.group,
                    "no bundle needs the kind; not watched"
                );
            }
            for kind in wanted {
                if let std::collections::hash_map::Entry::Vacant(slot) = watched.entry(kind.clone()) {
                    tracing::debug!(
                        kind = kind.kind,
                        group = kind.group,
                        "a bundle needs the kind; watching it"
                    );
                    lock(&state)
                        .listing
                        .insert(kind.clone(), tokio::time::Instant::now());
                    slot.insert(watches.spawn(watch_kind(
                        client.clone(),
                        kind,
                        state.clone(),
                        changed.clone(),
                    )));
                }
            }
        }
        // A change to a bundle not written within the last `coalesce` goes out at once; changes that follow soon
        // after are gathered into one write at the end of the interval.
        let next = flush(&client, &state, &config).await;
        let idle = tokio::time::sleep_until(
            next.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600)),
        );
        tokio::select! {
            () = changed.notified() => {}
            () = idle => {}
            () = &mut shutdown => break,
        }
    }
    watches.abort_all();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeat_alone_patches_only_the_heartbeat() {
        let parsed = |text: String| serde_json::from_str::<Json>(&text).unwrap();
        assert_eq!(
            parsed(patch_of(None, "2026-11-23T10:00:00Z")),
            json!({"status": {"heartbeat": "2026-11-23T10:00:00Z"}})
        );
        let status = bundle::StatusText {
            text: json!({"ready": true, "resourceCount": 0}).to_string(),
            lists_disabled: false,
        };
        assert_eq!(
            parsed(patch_of(Some(&status), "2026-11-23T10:00:01Z")),
            json!({"status": {"ready": true, "resourceCount": 0, "heartbeat": "2026-11-23T10:00:01Z",
                              "statusCollectionDisabled": null}}),
            "a status without disabled kinds clears an earlier list"
        );
        let disabling = bundle::StatusText {
            text: json!({"ready": true, "statusCollectionDisabled": [{"group": "", "kind": "Secret"}]})
                .to_string(),
            lists_disabled: true,
        };
        assert_eq!(
            parsed(patch_of(Some(&disabling), "2026-11-23T10:00:02Z")),
            json!({"status": {"ready": true, "statusCollectionDisabled": [{"group": "", "kind": "Secret"}],
                              "heartbeat": "2026-11-23T10:00:02Z"}})
        );
        let empty = bundle::StatusText {
            text: "{}".into(),
            lists_disabled: false,
        };
        assert_eq!(
            parsed(patch_of(Some(&empty), "2026-11-23T10:00:03Z")),
            json!({"status": {"heartbeat": "2026-11-23T10:00:03Z", "statusCollectionDisabled": null}})
        );
    }

    #[test]
    fn a_status_digest_tells_statuses_apart_and_is_the_same_for_the_same_status() {
        let status = json!({"ready": true, "podStatuses": [{"metadata": {"name": "web-1"}}]}).to_string();
        assert_eq!(StatusDigest::of(&status), StatusDigest::of(&status.clone()));
        let other_pod = json!({"ready": true, "podStatuses": [{"metadata": {"name": "web-2"}}]}).to_string();
        assert_ne!(StatusDigest::of(&status), StatusDigest::of(&other_pod));
        assert_ne!(
            StatusDigest::of(&status),
            StatusDigest::of(&json!({"ready": true}).to_string())
        );
    }

    #[test]
    fn the_kinds_watched_are_those_the_bundles_name_and_pods() {
        let known = default_kinds();
        let plurals = |kinds: Vec<WatchedKind>| kinds.into_iter().map(|kind| kind.plural).collect::<Vec<_>>();
        let mut state = State::default();
        assert!(state.wanted_kinds(&known).is_empty(), "no bundle, no watch");
        let narrow = BundleSpec {
            kinds: Some(vec![
                BundleKind::new("apps", "Deployment"),
                BundleKind::new("", "Service"),
            ]),
            configs: Arc::default(),
        };
        state.set_spec(("default".into(), "1-web".into()), Some(narrow.clone()));
        assert_eq!(
            plurals(state.wanted_kinds(&known)),
            ["pods", "services", "deployments"]
        );
        let generation = state.specs_generation;
        state.set_spec(("default".into(), "1-web".into()), Some(narrow));
        assert_eq!(
            state.specs_generation, generation,
            "the same spec again changes nothing"
        );
        state.set_spec(("other".into(), "2-db".into()), Some(BundleSpec::default()));
        assert_eq!(
            state.wanted_kinds(&known),
            known,
            "a bundle that does not name its kinds: every known kind"
        );
        state.set_spec(("other".into(), "2-db".into()), None);
        state.set_spec(("default".into(), "1-web".into()), None);
        assert!(state.wanted_kinds(&known).is_empty());
    }

    #[test]
    fn statuses_wait_for_a_new_kind_to_list_but_not_past_the_grace() {
        let now = tokio::time::Instant::now();
        let mut state = State::default();
        assert_eq!(state.listing_until(now), None);
        let pods = WatchedKind::new("", "v1", "Pod", "pods");
        state.listing.insert(pods.clone(), now);
        assert_eq!(state.listing_until(now), Some(now + LIST_GRACE));
        assert_eq!(
            state.listing_until(now + LIST_GRACE),
            None,
            "a watch that cannot list holds nothing back past the grace"
        );
        state.forget_kind(&pods);
        assert_eq!(state.listing_until(now), None);
    }

    #[test]
    fn a_written_bundle_is_due_again_after_a_heartbeat() {
        let config = MonitorConfig {
            heartbeat: Duration::from_secs(5),
            ..MonitorConfig::default()
        };
        let mut state = State::default();
        state
            .bundles
            .insert(("default".into(), "1-web".into()), Bundle::default());
        assert_eq!(
            next_due(&state, &config),
            None,
            "never written, nothing changed: nothing due"
        );
        let written = tokio::time::Instant::now();
        if let Some(bundle) = state.bundles.values_mut().next() {
            bundle.written_at = Some(written);
        }
        assert_eq!(next_due(&state, &config), Some(written + Duration::from_secs(5)));
        if let Some(bundle) = state.bundles.values_mut().next() {
            bundle.mark_dirty();
        }
        let due = next_due(&state, &config).unwrap();
        assert!(
            due < written + Duration::from_secs(5),
            "a change goes out before the heartbeat"
        );
    }

    #[test]
    fn an_apps_objects_in_other_namespaces_are_reported_by_its_bundle() {
        let mut state = State::default();
        let object = |namespace: &str, name: &str| ObjectKey {
            group: String::new(),
            version: "v1".into(),
            kind: "Service".into(),
            namespace: namespace.into(),
            name: name.into(),
        };
        let reported = Arc::new(bundle::Reported::new(
            "",
            "Service",
            &json!({"metadata": {"name": "x"}}),
        ));
        // Before the app's ResourceBundleState is seen, a kube-system object waits in a bundle of its own.
        let early = state.bundle_key("kube-system".into(), "1-web".into());
        assert_eq!(early, ("kube-system".to_string(), "1-web".to_string()));
        state
            .bundles
            .entry(early)
            .or_default()
            .objects
            .insert(object("kube-system", "etcd"), reported.clone());
        state.set_spec(("apps".into(), "1-web".into()), Some(BundleSpec::default()));
        assert!(
            !state
                .bundles
                .contains_key(&("kube-system".to_string(), "1-web".to_string()))
        );
        let adopted = &state.bundles[&("apps".to_string(), "1-web".to_string())];
        assert!(adopted.dirty && adopted.objects.contains_key(&object("kube-system", "etcd")));
        // Once it is seen, objects elsewhere go straight to it; another app's label keeps its own bundle.
        assert_eq!(
            state.bundle_key("kube-system".into(), "1-web".into()),
            ("apps".to_string(), "1-web".to_string())
        );
        assert_eq!(
            state.bundle_key("default".into(), "2-db".into()),
            ("default".to_string(), "2-db".to_string())
        );
    }
}
