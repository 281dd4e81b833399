//! One simulated cluster's objects: every write (from the API or from the simulated controllers) goes through
//! here, so server-owned metadata, defaulting, status-subresource rules, field ownership, finalizers, no-op
//! detection and the watch log behave the same whoever writes.
//!
//! The store holds a single revision counter; every persisted change raises it by one and is appended to a
//! bounded event log (for watches that resume from a revision) and broadcast to live watches.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Weak};

use serde_json::{Map, Value as Json, json};
use tokio::sync::broadcast;

use crate::catalog::{Catalog, ResourceType, TypeKey};
use crate::error::ApiError;
use crate::fields::{self, Manager};
use crate::meta;
use crate::patch;
use crate::selector::selectable_part;

/// How many changes the log keeps for watches that resume from a revision (older ones answer 410 Gone and the
/// client relists, as after an API server's compaction). Each change holds its object (and what selectors read of
/// the one before): with a
/// monitor rewriting its ResourceBundleStates at every heartbeat, 10,000 of them made an idle cluster grow to
/// megabytes; 1,024 keep a thousand clusters' worth of history within the bounds a real watch cache has.
pub const LOG_CAPACITY: usize = 1_024;
/// The most the log's objects may weigh, estimated from their JSON ([`approximate_size`]), before older changes
/// are dropped: 10,000 clusters whose monitors rewrite large ResourceBundleStates while pods start had grown
/// kubesim past 16 GiB within minutes on the change count alone. Each logged version of a ResourceBundleState is
/// a tree of its own (the store holds the newest), so at 64 KiB the log kept a few old versions of every
/// cluster's bundles; watches resume from their bookmarks, which the log need not reach back past.
pub const LOG_BYTES: usize = 16 * 1024;
/// How long a change stays in the log even past [`LOG_BYTES`]: the change feed refers to changes weakly (see
/// [`ChangeReceiver`]), so this is the time a subscriber may take, in a burst, before it counts as lagging.
pub const LOG_MIN_AGE: std::time::Duration = std::time::Duration::from_secs(5);
/// How many live changes a subscriber of the change feed may fall behind (by default, see
/// [`Store::with_change_feed`]) before a watch is ended with an ERROR 410 (the client relists) and a controller
/// loop resyncs from the store. The channel allocates its slots up front (33 KB for 1,024 of them, 330 MB at
/// 10,000 clusters); 256 cover a burst of a few hundred changes — three apps of twenty pods starting at once.
pub const DEFAULT_CHANGE_FEED_CAPACITY: usize = 256;

/// What a change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Removed.
    Deleted,
}

/// One persisted change.
#[derive(Debug)]
pub struct Change {
    /// The revision it made.
    pub revision: u64,
    /// Added, modified or deleted.
    pub kind: ChangeKind,
    /// The object's type.
    pub key: TypeKey,
    /// The object after the change (for a delete: its last state, at the delete's revision).
    pub object: Stored,
    /// What selectors read of the object before the change ([`crate::selector::selectable_part`]: name,
    /// namespace, labels, deletion mark and the fields field selectors support), not the whole object.
    pub previous: Option<Arc<Json>>,
}

/// An object as the store and its log keep it. Most kinds stay JSON trees, which the simulated controllers read
/// field by field; the kinds they do not ([`Store::keeps_text`]: custom resources, ConfigMaps, Secrets, Services) keep
/// their JSON text and the part selectors and controllers look at. A tree takes seven to nine times the memory of
/// its text, and a monitor's ResourceBundleState, rewritten at every report, is most of a cluster's data: at
/// 10,000 clusters the trees were gigabytes.
#[derive(Debug, Clone)]
pub enum Stored {
    /// The object as a tree.
    Tree(Arc<Json>),
    /// The object as JSON text.
    Text {
        /// The object's JSON.
        text: Arc<str>,
        /// What selectors and controllers read of it ([`selectable_part`] with its apiVersion, uid, owners and
        /// resourceVersion).
        part: Arc<Json>,
    },
}

impl Stored {
    /// The object as a tree (parsed from its text when kept as text).
    #[must_use]
    pub fn tree(&self) -> Arc<Json> {
        match self {
            Self::Tree(object) => object.clone(),
            // The text is the store's own serialization of a tree, so it parses.
            Self::Text { text, .. } => Arc::new(serde_json::from_str(text).unwrap_or(Json::Null)),
        }
    }

    /// What selectors and controllers read: the whole tree, or the kept part of an object kept as text.
    #[must_use]
    pub fn part(&self) -> &Json {
        match self {
            Self::Tree(object) => object,
            Self::Text { part, .. } => part,
        }
    }

    /// Roughly how much memory it takes (see [`approximate_size`]).
    fn weight(&self) -> usize {
        match self {
            Self::Tree(object) => approximate_size(object),
            Self::Text { text, part } => text.len() + approximate_size(part),
        }
    }
}

/// Options of a write.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// Validate only; persist nothing.
    pub dry_run: bool,
    /// The field manager recorded in `managedFields`.
    pub manager: Option<String>,
    /// Server-side apply: take ownership of conflicting fields.
    pub force: bool,
    /// A controller's write: keep `status` from the body on create.
    pub keep_status: bool,
}

/// The patch formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml`.
    Apply,
}

impl PatchType {
    /// The format of a Content-Type.
    #[must_use]
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        match content_type.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => Some(Self::Merge),
            "application/json-patch+json" => Some(Self::Json),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Some(Self::Apply),
            _ => None,
        }
    }
}

/// `DeleteOptions` of a delete.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `Background`, `Foreground` or `Orphan`.
    pub propagation: Option<String>,
    /// Overrides a pod's termination grace period.
    pub grace_period_seconds: Option<i64>,
    /// Delete only if the uid matches.
    pub uid: Option<String>,
    /// Delete only if the resourceVersion matches.
    pub resource_version: Option<String>,
    /// Validate only.
    pub dry_run: bool,
}

/// The outcome of a delete.
#[derive(Debug, Clone)]
pub struct Deleted {
    /// The object (its last state, or marked for deletion).
    pub object: Arc<Json>,
    /// Whether it is gone (false: it waits for finalizers or a grace period).
    pub removed: bool,
}

/// A subscriber's end of a store's change feed. The feed refers to changes weakly: the log holds them (bounded by
/// [`LOG_CAPACITY`], and by [`LOG_BYTES`] once older than [`LOG_MIN_AGE`]), so the feed's slots never keep old
/// objects alive (with strong references its 1,024 slots kept that many versions of every cluster's objects — a
/// monitor's heartbeats filled them with ResourceBundleStates). A change no longer logged when a subscriber gets
/// to it is a lag, as when the feed overflows: the subscriber resyncs (controllers) or relists (watches).
pub struct ChangeReceiver(broadcast::Receiver<Weak<Change>>);

impl ChangeReceiver {
    /// The next change; `Lagged` when changes were lost to this subscriber.
    pub async fn recv(&mut self) -> Result<Arc<Change>, broadcast::error::RecvError> {
        let change = self.0.recv().await?;
        change.upgrade().ok_or(broadcast::error::RecvError::Lagged(1))
    }

    /// The next change if one waits; `Lagged` when changes were lost to this subscriber.
    pub fn try_recv(&mut self) -> Result<Arc<Change>, broadcast::error::TryRecvError> {
        let change = self.0.try_recv()?;
        change.upgrade().ok_or(broadcast::error::TryRecvError::Lagged(1))
    }

    /// Whether no change waits.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The objects of one cluster.
pub struct Store {
    revision: u64,
    /// The served types.
    pub catalog: Catalog,
    objects: HashMap<TypeKey, BTreeMap<(String, String), Stored>>,
    /// The logged changes, their estimated sizes and when they were made.
    log: VecDeque<(Arc<Change>, usize, std::time::Instant)>,
    /// The estimated size of the log's objects.
    log_bytes: usize,
    /// Revisions up to this one are not in the log.
    log_floor: u64,
    /// How long a change stays logged past the bytes ([`LOG_MIN_AGE`]).
    log_min_age: std::time::Duration,
    sender: broadcast::Sender<Weak<Change>>,
    next_service_ip: u32,
    next_node_port: u32,
}

/// Roughly how much memory a JSON tree takes: its strings and keys, plus a fixed cost per value and entry.
#[must_use]
pub fn approximate_size(value: &Json) -> usize {
    const VALUE: usize = 32;
    match value {
        Json::String(text) => VALUE + text.len(),
        Json::Array(items) => VALUE + items.iter().map(approximate_size).sum::<usize>(),
        Json::Object(fields) => {
            VALUE
                + fields
                    .iter()
                    .map(|(key, field)| VALUE + key.len() + approximate_size(field))
                    .sum::<usize>()
        }
        _ => VALUE,
    }
}

fn status_key(value: &Json) -> Option<&Json> {
    value.get("status")
}

/// The fields outside an object's spec: a change anywhere else raises `generation`.
const NOT_SPEC: [&str; 4] = ["metadata", "status", "apiVersion", "kind"];

/// Whether two objects have the same fields outside metadata, status, apiVersion and kind (a change there raises
/// `generation`), compared in place: a status write compares without copying either object.
fn same_spec(a: &Json, b: &Json) -> bool {
    same_fields_except(a, b, &NOT_SPEC)
}

/// Whether objects `a` and `b` hold the same fields, those named in `skipped` aside (order does not matter, as
/// for `Json`'s own equality); values that are not objects are compared whole.
fn same_fields_except(a: &Json, b: &Json, skipped: &[&str]) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let kept = |key: &String| !skipped.contains(&key.as_str());
    a.keys().filter(|key| kept(key)).count() == b.keys().filter(|key| kept(key)).count()
        && a.iter()
            .filter(|(key, _)| kept(key))
            .all(|(key, value)| b.get(key) == Some(value))
}

/// Whether two objects are equal but for `metadata.resourceVersion`, compared in place.
fn same_but_resource_version(a: &Json, b: &Json) -> bool {
    let (Some(a_map), Some(b_map)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    a_map.len() == b_map.len()
        && a_map.iter().all(|(key, value)| match b_map.get(key) {
            None => false,
            Some(other) if key == "metadata" => same_fields_except(value, other, &["resourceVersion"]),
            Some(other) => value == other,
        })
}

/// `existing` with `status` in its status's place (after its other fields when it had none; without a status when
/// `status` is `None`), the old status not copied. Every other field is `spare`'s own, moved, where it is equal
/// there (a status patch built from the object holds them), else a copy of the existing one.
fn with_status(existing: &Json, mut status: Option<Json>, mut spare: Map<String, Json>) -> Json {
    let mut next = Map::new();
    for (key, value) in existing.as_object().into_iter().flatten() {
        if key == "status" {
            if let Some(status) = status.take() {
                next.insert(key.clone(), status);
            }
        } else {
            let kept = match spare.remove(key) {
                Some(same) if same == *value => same,
                _ => value.clone(),
            };
            next.insert(key.clone(), kept);
        }
    }
    if let Some(status) = status {
        next.insert("status".to_string(), status);
    }
    Json::Object(next)
}

impl Store {
    /// An empty store whose first write gets `initial_revision + 1`.
    #[must_use]
    pub fn new(initial_revision: u64) -> Self {
        Self::with_change_feed(initial_revision, DEFAULT_CHANGE_FEED_CAPACITY)
    }

    /// An empty store whose change feed (the broadcast controllers and watches follow) keeps `capacity` changes
    /// for a subscriber that lags; one that falls further behind resyncs from the store.
    #[must_use]
    pub fn with_change_feed(initial_revision: u64, capacity: usize) -> Self {
        let (sender, _) = broadcast::channel(capacity.max(1));
        Self {
            revision: initial_revision,
            catalog: Catalog::new(),
            objects: HashMap::new(),
            log: VecDeque::new(),
            log_bytes: 0,
            log_floor: initial_revision,
            log_min_age: LOG_MIN_AGE,
            sender,
            next_service_ip: 10,
            next_node_port: 30000,
        }
    }

    /// The current revision.
    #[must_use]
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// A receiver of every future change.
    #[must_use]
    pub fn subscribe(&self) -> ChangeReceiver {
        ChangeReceiver(self.sender.subscribe())
    }

    /// The logged changes after `revision`, or `None` when the log no longer reaches back that far.
    #[must_use]
    pub fn changes_since(&self, revision: u64) -> Option<Vec<Arc<Change>>> {
        if revision < self.log_floor {
            return None;
        }
        Some(
            self.log
                .iter()
                .filter(|(change, _, _)| change.revision > revision)
                .map(|(change, _, _)| change.clone())
                .collect(),
        )
    }

    /// Forgets the event log (a test hook: every watch that resumes from an older revision then gets 410).
    pub fn compact(&mut self) {
        self.log.clear();
        self.log_bytes = 0;
        self.log_floor = self.revision;
    }

    /// One object.
    #[must_use]
    pub fn get(&self, key: &TypeKey, namespace: &str, name: &str) -> Option<Arc<Json>> {
        self.objects
            .get(key)?
            .get(&(namespace.to_string(), name.to_string()))
            .map(Stored::tree)
    }

    /// Every object of a type, optionally in one namespace, ordered by namespace and name.
    #[must_use]
    pub fn list(&self, key: &TypeKey, namespace: Option<&str>) -> Vec<Arc<Json>> {
        self.list_stored(key, namespace)
            .iter()
            .map(Stored::tree)
            .collect()
    }

    /// Every object of a type as the store keeps it, optionally in one namespace, ordered by namespace and name:
    /// for a list or watch that selects on [`Stored::part`] and parses only what it sends.
    #[must_use]
    pub fn list_stored(&self, key: &TypeKey, namespace: Option<&str>) -> Vec<Stored> {
        let Some(objects) = self.objects.get(key) else {
            return Vec::new();
        };
        match namespace {
            Some(ns) => objects
                .range((ns.to_string(), String::new())..)
                .take_while(|((object_ns, _), _)| object_ns == ns)
                .map(|(_, object)| object.clone())
                .collect(),
            None => objects.values().cloned().collect(),
        }
    }

    /// How many objects the store holds.
    #[must_use]
    pub fn object_count(&self) -> usize {
        self.objects.values().map(BTreeMap::len).sum()
    }

    fn record(&mut self, change: Change) -> Arc<Change> {
        let change = Arc::new(change);
        let bytes = change.object.weight();
        let now = std::time::Instant::now();
        self.log.push_back((change.clone(), bytes, now));
        self.log_bytes += bytes;
        // The newest change stays whatever its size, and every change for its minimum age.
        while let Some((_, _, made)) = self.log.front()
            && self.log.len() > 1
            && (self.log.len() > LOG_CAPACITY
                || (self.log_bytes > LOG_BYTES && now.duration_since(*made) >= self.log_min_age))
        {
            if let Some((dropped, bytes, _)) = self.log.pop_front() {
                self.log_floor = dropped.revision;
                self.log_bytes -= bytes;
            }
        }
        let _ = self.sender.send(Arc::downgrade(&change));
        change
    }

    /// Whether objects of `t` are kept as text ([`Stored::Text`]): custom resources, ConfigMaps, Secrets and
    /// Services, which no simulated controller reads on every change of another object (they are parsed when a
    /// request, or a Service's own reconcile, reads them).
    #[must_use]
    pub fn keeps_text(t: &ResourceType) -> bool {
        t.custom || (t.group.is_empty() && matches!(t.plural.as_str(), "configmaps" | "secrets" | "services"))
    }

    /// `object` in the form [`Store::keeps_text`] chooses for `t`.
    fn keep(t: &ResourceType, object: &Arc<Json>) -> Stored {
        if !Self::keeps_text(t) {
            return Stored::Tree(object.clone());
        }
        let mut part = selectable_part(&t.kind, object);
        for field in ["uid", "ownerReferences", "resourceVersion"] {
            if let Some(value) = object["metadata"].get(field) {
                part["metadata"][field] = value.clone();
            }
        }
        if let Some(api_version) = object.get("apiVersion") {
            part["apiVersion"] = api_version.clone();
        }
        Stored::Text {
            text: object.to_string().into(),
            part: Arc::new(part),
        }
    }

    fn put(&mut self, t: &ResourceType, mut object: Json, previous: Option<Arc<Json>>) -> Arc<Json> {
        self.revision += 1;
        object["metadata"]["resourceVersion"] = json!(self.revision.to_string());
        let object = Arc::new(object);
        let key = (
            meta::namespace(&object).to_string(),
            meta::name(&object).to_string(),
        );
        let stored = Self::keep(t, &object);
        self.objects
            .entry(t.key())
            .or_default()
            .insert(key, stored.clone());
        let kind = if previous.is_some() {
            ChangeKind::Modified
        } else {
            ChangeKind::Added
        };
        self.record(Change {
            revision: self.revision,
            kind,
            key: t.key(),
            object: stored,
            previous: previous.map(|previous| Arc::new(selectable_part(&t.kind, &previous))),
        });
        object
    }

    fn remove(&mut self, t: &ResourceType, previous: Arc<Json>) -> Arc<Json> {
        self.revision += 1;
        let key = (
            meta::namespace(&previous).to_string(),
            meta::name(&previous).to_string(),
        );
        if let Some(objects) = self.objects.get_mut(&t.key()) {
            objects.remove(&key);
        }
        let mut last = (*previous).clone();
        last["metadata"]["resourceVersion"] = json!(self.revision.to_string());
        let last = Arc::new(last);
        self.record(Change {
            revision: self.revision,
            kind: ChangeKind::Deleted,
            key: t.key(),
            object: Self::keep(t, &last),
            previous: Some(Arc::new(selectable_part(&t.kind, &previous))),
        });
        // A CRD takes its custom resources and its discovery entries with it.
        if t.group == "apiextensions.k8s.io" && t.kind == "CustomResourceDefinition" {
            self.drop_custom_types(&key.1);
        }
        last
    }

    /// Refuses a body whose `apiVersion` or `kind` is not the type's.
    pub(crate) fn check_type_fields(t: &ResourceType, object: &Json) -> Result<(), ApiError> {
        if let Some(api_version) = object.get("apiVersion").and_then(Json::as_str)
            && !api_version.is_empty()
            && api_version != t.api_version()
        {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                t.api_version()
            )));
        }
        if let Some(kind) = object.get("kind").and_then(Json::as_str)
            && !kind.is_empty()
            && kind != t.kind
        {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({})",
                t.kind
            )));
        }
        Ok(())
    }

    fn check_namespace(&self, t: &ResourceType, namespace: &str) -> Result<(), ApiError> {
        if !t.namespaced {
            return Ok(());
        }
        let ns_type = TypeKey::new("", "namespaces");
        match self.get(&ns_type, "", namespace) {
            None => Err(ApiError::not_found_message(format!(
                "namespaces \"{namespace}\" not found"
            ))),
            Some(ns) if meta::is_deleting(&ns) => Err(ApiError::forbidden(format!(
                "{} \"{}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
                t.qualified(),
                namespace
            ))),
            Some(_) => Ok(()),
        }
    }

    fn allocate_cluster_ip(&mut self) -> String {
        self.next_service_ip += 1;
        let n = self.next_service_ip;
        format!("10.96.{}.{}", (n >> 8) & 0xff, n & 0xff)
    }

    fn allocate_node_port(&mut self) -> u32 {
        self.next_node_port += 1;
        if self.next_node_port > 32767 {
            self.next_node_port = 30001;
        }
        self.next_node_port
    }

    fn manager_entry(
        manager: &str,
        operation: &str,
        subresource: Option<&str>,
        fields: fields::FieldSet,
        api_version: String,
    ) -> Manager {
        Manager {
            manager: manager.to_string(),
            operation: operation.to_string(),
            subresource: subresource.map(String::from),
            fields,
            api_version,
            time: meta::now(),
        }
    }

    /// Creates an object (POST).
    pub fn create(
        &mut self,
        t: &Arc<ResourceType>,
        namespace: Option<&str>,
        mut object: Json,
        options: &WriteOptions,
    ) -> Result<Arc<Json>, ApiError> {
        if !object.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        Self::check_type_fields(t, &object)?;
        if !object["metadata"].is_object() {
            object["metadata"] = json!({});
        }
        let mut name = meta::name(&object).to_string();
        if name.is_empty() {
            let Some(prefix) = object["metadata"]["generateName"].as_str() else {
                return Err(ApiError::invalid(
                    t,
                    "",
                    "metadata.name",
                    "Required value: name or generateName is required",
                ));
            };
            name = format!("{prefix}{}", meta::random_suffix(5));
            object["metadata"]["name"] = json!(name);
        }
        if t.group == "rbac.authorization.k8s.io" {
            // RBAC names are path segments (`system:basic-user`), as `ValidateRBACName` has it.
            if name == "." || name == ".." || name.contains(['/', '%']) || name.len() > 253 {
                return Err(ApiError::invalid(
                    t,
                    &name,
                    "metadata.name",
                    &format!("Invalid value: \"{name}\": may not be '.' or '..' or contain '/' or '%'"),
                ));
            }
        } else if !meta::is_dns_subdomain(&name) {
            return Err(ApiError::invalid(
                t,
                &name,
                "metadata.name",
                &format!(
                    "Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
                ),
            ));
        }
        let body_namespace = meta::namespace(&object).to_string();
        let namespace = if t.namespaced {
            let ns = namespace
                .map(String::from)
                .unwrap_or_else(|| body_namespace.clone());
            if ns.is_empty() {
                return Err(ApiError::bad_request("the namespace of the object is required"));
            }
            if !body_namespace.is_empty() && body_namespace != ns {
                return Err(ApiError::bad_request(format!(
                    "the namespace of the provided object ({body_namespace}) does not match the namespace sent on the request ({ns})"
                )));
            }
            self.check_namespace(t, &ns)?;
            ns
        } else {
            String::new()
        };
        if self.get(&t.key(), &namespace, &name).is_some() {
            return Err(ApiError::already_exists(t, &name));
        }
        let metadata = object["metadata"]
            .as_object_mut()
            .ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
        for server_owned in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
            "managedFields",
        ] {
            metadata.remove(server_owned);
        }
        if namespace.is_empty() {
            metadata.remove("namespace");
        } else {
            metadata.insert("namespace".into(), json!(namespace));
        }
        metadata.insert("uid".into(), json!(meta::uuid()));
        metadata.insert("creationTimestamp".into(), json!(meta::now()));
        metadata.insert("generation".into(), json!(1));
        object["apiVersion"] = json!(t.api_version());
        object["kind"] = json!(t.kind);
        if t.status
            && !options.keep_status
            && let Some(map) = object.as_object_mut()
        {
            map.remove("status");
        }
        crate::defaults::apply(&t.group, &t.kind, &mut object);
        self.on_create(t, &mut object)?;
        if t.namespaced {
            crate::quota::admit_create(self, t, &namespace, &object)?;
        }
        if let Some(manager) = &options.manager {
            let entry = Self::manager_entry(
                manager,
                "Update",
                None,
                fields::leaf_fields(&object, false),
                t.api_version(),
            );
            fields::set_managers(&mut object, &[entry]);
        }
        if options.dry_run {
            return Ok(Arc::new(object));
        }
        let created = self.put(t, object, None);
        self.after_create(t, &created);
        Ok(created)
    }

    /// Kind-specific work that is part of the create itself.
    fn on_create(&mut self, t: &ResourceType, object: &mut Json) -> Result<(), ApiError> {
        match (t.group.as_str(), t.kind.as_str()) {
            ("", "Namespace") => {
                object["status"] = json!({"phase": "Active"});
                object["spec"] = json!({"finalizers": ["kubernetes"]});
            }
            ("", "Service") => {
                let spec = &mut object["spec"];
                if spec["clusterIP"].as_str() != Some("None") && spec["type"].as_str() != Some("ExternalName")
                {
                    let ip = self.allocate_cluster_ip();
                    spec["clusterIP"] = json!(ip);
                    spec["clusterIPs"] = json!([ip]);
                }
                if matches!(spec["type"].as_str(), Some("NodePort" | "LoadBalancer")) {
                    let ports = spec["ports"].as_array().map(Vec::len).unwrap_or(0);
                    for index in 0..ports {
                        if spec["ports"][index]["nodePort"].is_null() {
                            spec["ports"][index]["nodePort"] = json!(self.allocate_node_port());
                        }
                    }
                }
                if object["status"].is_null() {
                    object["status"] = json!({"loadBalancer": {}});
                }
            }
            ("", "Pod") => {
                crate::quota::validate_pod_resources(t, object)?;
                if object["status"]["phase"].is_null() {
                    object["status"] =
                        json!({"phase": "Pending", "qosClass": crate::quota::qos_class(object)});
                }
            }
            ("batch", "Job") => {
                let template = &object["spec"]["template"]["spec"]["restartPolicy"];
                if !matches!(template.as_str(), Some("Never" | "OnFailure")) {
                    return Err(ApiError::invalid(
                        t,
                        meta::name(object),
                        "spec.template.spec.restartPolicy",
                        "Required value: valid values: \"OnFailure\", \"Never\"",
                    ));
                }
                let uid = meta::uid(object).to_string();
                let name = meta::name(object).to_string();
                let labels = json!({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name, "controller-uid": uid, "job-name": name});
                if object["spec"]["selector"].is_null() {
                    object["spec"]["selector"] =
                        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
                }
                if let Some(template_labels) = object["spec"]["template"]["metadata"]["labels"]
                    .as_object()
                    .cloned()
                {
                    let mut merged = template_labels;
                    merged.extend(labels.as_object().cloned().unwrap_or_default());
                    object["spec"]["template"]["metadata"]["labels"] = Json::Object(merged);
                } else {
                    object["spec"]["template"]["metadata"]["labels"] = labels;
                }
            }
            ("apiextensions.k8s.io", "CustomResourceDefinition") => {
                let name = meta::name(object).to_string();
                let types = Catalog::types_of_crd(object)
                    .map_err(|message| ApiError::invalid(t, &name, "spec", &message))?;
                let names = &object["spec"]["names"];
                let kind = names["kind"].as_str().unwrap_or_default().to_string();
                let time = meta::now();
                let stored: Vec<Json> = object["spec"]["versions"]
                    .as_array()
                    .map(|v| {
                        v.iter()
                            .filter(|v| v["storage"].as_bool() == Some(true))
                            .map(|v| v["name"].clone())
                            .collect()
                    })
                    .unwrap_or_default();
                object["status"] = json!({
                    "conditions": [
                        {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": time},
                        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": time},
                    ],
                    "acceptedNames": {
                        "plural": names["plural"], "singular": names["singular"].as_str().map_or_else(|| kind.to_lowercase(), String::from),
                        "kind": kind, "listKind": names["listKind"].as_str().map_or_else(|| format!("{kind}List"), String::from),
                        "shortNames": names["shortNames"].as_array().cloned().unwrap_or_default(),
                        "categories": names["categories"].as_array().cloned().unwrap_or_default(),
                    },
                    "storedVersions": stored,
                });
                // Discovery changes in the same step as the write.
                self.catalog.set_custom(&name, types);
            }
            _ => {}
        }
        Ok(())
    }

    /// Objects every new namespace gets.
    fn after_create(&mut self, t: &ResourceType, created: &Json) {
        if t.group.is_empty() && t.kind == "Namespace" {
            let ns = meta::name(created).to_string();
            let internal = WriteOptions::default();
            if let Some(sa) = self.catalog.find("", "v1", "serviceaccounts") {
                let _ = self.create(
                    &sa,
                    Some(&ns),
                    json!({"metadata": {"name": "default"}}),
                    &internal,
                );
            }
            if let Some(cm) = self.catalog.find("", "v1", "configmaps") {
                let _ = self.create(&cm, Some(&ns), json!({"metadata": {"name": "kube-root-ca.crt"}, "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\nkubesim\n-----END CERTIFICATE-----\n"}}), &internal);
            }
        }
    }

    fn existing(&self, t: &ResourceType, namespace: &str, name: &str) -> Result<Arc<Json>, ApiError> {
        self.get(&t.key(), namespace, name)
            .ok_or_else(|| ApiError::not_found(t, name))
    }

    fn check_identity(t: &ResourceType, object: &Json, namespace: &str, name: &str) -> Result<(), ApiError> {
        let body_name = meta::name(object);
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let body_namespace = meta::namespace(object);
        if t.namespaced && !body_namespace.is_empty() && body_namespace != namespace {
            return Err(ApiError::bad_request(format!(
                "the namespace of the provided object ({body_namespace}) does not match the namespace sent on the request ({namespace})"
            )));
        }
        Ok(())
    }

    fn check_resource_version(
        t: &ResourceType,
        name: &str,
        object: &Json,
        existing: &Json,
    ) -> Result<(), ApiError> {
        let wanted = object["metadata"]["resourceVersion"].as_str().unwrap_or_default();
        let current = existing["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        if !wanted.is_empty() && wanted != current {
            return Err(ApiError::conflict(
                t,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        Ok(())
    }

    /// Replaces an object (PUT); `status_write` for the `/status` subresource.
    pub fn update(
        &mut self,
        t: &Arc<ResourceType>,
        namespace: &str,
        name: &str,
        object: Json,
        status_write: bool,
        options: &WriteOptions,
    ) -> Result<Arc<Json>, ApiError> {
        if !object.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        Self::check_type_fields(t, &object)?;
        Self::check_identity(t, &object, namespace, name)?;
        let existing = self.existing(t, namespace, name)?;
        Self::check_resource_version(t, name, &object, &existing)?;
        let next = Self::compose(t, &existing, object, status_write);
        self.finish_update(t, &existing, next, status_write, options, None)
    }

    /// The object a write produces: a `/status` write takes only `.status` from the body; any other write keeps
    /// the stored `.status` of kinds that have a status subresource.
    fn compose(t: &ResourceType, existing: &Json, body: Json, status_write: bool) -> Json {
        if status_write {
            // The existing object with the body's status in its place (moved, not copied; the old one not
            // copied either); no status when the body has none. Every other field is the existing one: the
            // body's own, moved, where it is equal (a patch built from the object holds them), else a copy.
            let mut body = match body {
                Json::Object(map) => map,
                _ => Map::new(),
            };
            let status = body.remove("status").filter(|status| !status.is_null());
            with_status(existing, status, body)
        } else {
            let mut next = body;
            if t.status {
                match status_key(existing) {
                    Some(status) => next["status"] = status.clone(),
                    None => {
                        if let Some(map) = next.as_object_mut() {
                            map.remove("status");
                        }
                    }
                }
            }
            next
        }
    }

    fn finish_update(
        &mut self,
        t: &Arc<ResourceType>,
        existing: &Arc<Json>,
        mut next: Json,
        status_write: bool,
        options: &WriteOptions,
        managers: Option<Vec<Manager>>,
    ) -> Result<Arc<Json>, ApiError> {
        let name = meta::name(existing).to_string();
        if !next["metadata"].is_object() {
            next["metadata"] = json!({});
        }
        let empty = Map::new();
        let old_meta = existing["metadata"].as_object().unwrap_or(&empty);
        {
            let metadata = next["metadata"]
                .as_object_mut()
                .ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
            for server_owned in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "name",
                "namespace",
                "generation",
            ] {
                match old_meta.get(server_owned) {
                    Some(value) => {
                        metadata.insert(server_owned.into(), value.clone());
                    }
                    None => {
                        metadata.remove(server_owned);
                    }
                }
            }
            metadata.remove("resourceVersion");
            metadata.remove("selfLink");
        }
        next["apiVersion"] = json!(t.api_version());
        next["kind"] = json!(t.kind);
        if !status_write {
            crate::defaults::apply(&t.group, &t.kind, &mut next);
            if meta::is_deleting(existing) {
                let old: Vec<&Json> = existing["metadata"]["finalizers"]
                    .as_array()
                    .map(|f| f.iter().collect())
                    .unwrap_or_default();
                if let Some(new) = next["metadata"]["finalizers"].as_array()
                    && new.iter().any(|f| !old.contains(&f))
                {
                    return Err(ApiError::invalid(
                        t,
                        &name,
                        "metadata.finalizers",
                        "Forbidden: no new finalizers can be added if the object is being deleted",
                    ));
                }
            }
        }
        let generation = existing["metadata"]["generation"].as_i64().unwrap_or(1);
        let spec_changed = !same_spec(existing, &next);
        next["metadata"]["generation"] = json!(if spec_changed { generation + 1 } else { generation });
        if t.group == "apiextensions.k8s.io" && t.kind == "CustomResourceDefinition" && spec_changed {
            let types = Catalog::types_of_crd(&next)
                .map_err(|message| ApiError::invalid(t, &name, "spec", &message))?;
            if !options.dry_run {
                self.catalog.set_custom(&name, types);
            }
        }

        // Field ownership.
        let subresource = status_write.then_some("status");
        let managers = match managers {
            Some(managers) => managers,
            None => {
                let mut managers = fields::managers(existing);
                let (changed, removed) = fields::changed_fields(existing, &next, status_write);
                for entry in &mut managers {
                    entry
                        .fields
                        .retain(|path| !changed.contains(path) && !removed.contains(path));
                }
                if let Some(manager) = &options.manager
                    && !changed.is_empty()
                {
                    let index = managers.iter().position(|m| {
                        m.manager == *manager
                            && m.operation == "Update"
                            && m.subresource.as_deref() == subresource
                    });
                    match index {
                        Some(index) => {
                            managers[index].fields.extend(changed);
                            managers[index].time = meta::now();
                        }
                        None => managers.push(Self::manager_entry(
                            manager,
                            "Update",
                            subresource,
                            changed,
                            t.api_version(),
                        )),
                    }
                }
                managers
            }
        };
        fields::set_managers(&mut next, &managers);

        if same_but_resource_version(existing, &next) {
            return Ok(existing.clone());
        }
        if options.dry_run {
            return Ok(Arc::new(next));
        }
        let finalizers_empty = next["metadata"]["finalizers"]
            .as_array()
            .is_none_or(Vec::is_empty);
        if meta::is_deleting(&next)
            && finalizers_empty
            && !(t.group.is_empty()
                && t.kind == "Pod"
                && next["spec"]["nodeName"].is_string()
                && existing["metadata"]["deletionGracePeriodSeconds"]
                    .as_i64()
                    .unwrap_or(0)
                    > 0)
        {
            let updated = self.put(t, next, Some(existing.clone()));
            return Ok(self.remove(t, updated));
        }
        Ok(self.put(t, next, Some(existing.clone())))
    }

    /// Patches an object; returns it and whether an apply created it.
    #[allow(clippy::too_many_arguments)] // the request's parts: type, name, format, body, subresource, options
    pub fn patch(
        &mut self,
        t: &Arc<ResourceType>,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        body: &Json,
        status_write: bool,
        options: &WriteOptions,
    ) -> Result<(Arc<Json>, bool), ApiError> {
        if patch_type == PatchType::Apply {
            return self.apply(t, namespace, name, body, status_write, options);
        }
        if patch_type == PatchType::Strategic && t.custom {
            return Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            ));
        }
        let existing = self.existing(t, namespace, name)?;
        let patched = match patch_type {
            // Built from the object and the patch: what the patch replaces is not copied first.
            PatchType::Merge => patch::merge_patched(&existing, body),
            PatchType::Strategic => {
                let mut patched = (*existing).clone();
                patch::strategic_merge_patch(&mut patched, body);
                patched
            }
            PatchType::Json => {
                let mut patched = (*existing).clone();
                patch::json_patch(&mut patched, body).map_err(|err| {
                    ApiError::invalid_message(format!(
                        "the server rejected our request due to an error in our request: {err}"
                    ))
                })?;
                patched
            }
            PatchType::Apply => unreachable!("handled above"),
        };
        Self::check_identity(t, &patched, namespace, name)?;
        Self::check_resource_version(t, name, &patched, &existing)?;
        let next = Self::compose(t, &existing, patched, status_write);
        Ok((
            self.finish_update(t, &existing, next, status_write, options, None)?,
            false,
        ))
    }

    fn apply(
        &mut self,
        t: &Arc<ResourceType>,
        namespace: &str,
        name: &str,
        body: &Json,
        status_write: bool,
        options: &WriteOptions,
    ) -> Result<(Arc<Json>, bool), ApiError> {
        let Some(manager) = options.manager.clone().filter(|m| !m.is_empty()) else {
            return Err(ApiError::bad_request(
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            ));
        };
        if !body.is_object() {
            return Err(ApiError::bad_request("the apply configuration must be an object"));
        }
        Self::check_type_fields(t, body)?;
        if body.get("apiVersion").is_none() || body.get("kind").is_none() {
            return Err(ApiError::bad_request(
                "invalid object type: apiVersion and kind are required for apply",
            ));
        }
        let body_name = meta::name(body);
        if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let applied_fields = fields::leaf_fields(body, status_write);
        let subresource = status_write.then_some("status");
        let Some(existing) = self.get(&t.key(), namespace, name) else {
            let mut object = body.clone();
            if status_write {
                return Err(ApiError::not_found(t, name));
            }
            if let Some(meta) = object["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
            let create_options = WriteOptions {
                manager: None,
                ..options.clone()
            };
            let mut created = (*self.create(
                t,
                Some(namespace).filter(|ns| !ns.is_empty()),
                object,
                &WriteOptions {
                    dry_run: true,
                    ..create_options.clone()
                },
            )?)
            .clone();
            let entry = Self::manager_entry(&manager, "Apply", None, applied_fields, t.api_version());
            fields::set_managers(&mut created, &[entry]);
            if options.dry_run {
                return Ok((Arc::new(created), true));
            }
            let stored = self.put(t, created, None);
            self.after_create(t, &stored);
            return Ok((stored, true));
        };
        let mut managers = fields::managers(&existing);
        let mut conflicts = Vec::new();
        for entry in managers
            .iter()
            .filter(|m| !(m.manager == manager && m.operation == "Apply"))
        {
            for path in entry.fields.intersection(&applied_fields) {
                if fields::value_at(&existing, path) != fields::value_at(body, path) {
                    conflicts.push((entry.manager.clone(), fields::describe(path)));
                }
            }
        }
        if !conflicts.is_empty() && !options.force {
            conflicts.sort();
            conflicts.dedup();
            return Err(ApiError::apply_conflict(t, name, &conflicts));
        }
        let mut merged = (*existing).clone();
        let mut applied = body.clone();
        if let Some(meta) = applied["metadata"].as_object_mut() {
            for server_owned in [
                "managedFields",
                "resourceVersion",
                "uid",
                "creationTimestamp",
                "generation",
            ] {
                meta.remove(server_owned);
            }
        }
        if status_write {
            fields::apply_merge(&mut merged["status"], &applied["status"], "status");
        } else {
            if let Some(map) = applied.as_object_mut() {
                map.remove("status");
            }
            fields::apply_merge(&mut merged, &applied, "");
        }
        // Fields this manager applied before and not now, that nobody else owns, are removed.
        let previous = managers
            .iter()
            .find(|m| {
                m.manager == manager && m.operation == "Apply" && m.subresource.as_deref() == subresource
            })
            .map(|m| m.fields.clone())
            .unwrap_or_default();
        for path in previous.difference(&applied_fields) {
            let owned_elsewhere = managers
                .iter()
                .filter(|m| !(m.manager == manager && m.operation == "Apply"))
                .any(|m| m.fields.contains(path));
            if !owned_elsewhere {
                fields::remove_at(&mut merged, path);
            }
        }
        for entry in managers
            .iter_mut()
            .filter(|m| !(m.manager == manager && m.operation == "Apply"))
        {
            // Forced fields move to the applier; equal values stay shared.
            entry.fields.retain(|path| {
                !(applied_fields.contains(path)
                    && fields::value_at(&existing, path) != fields::value_at(body, path))
            });
        }
        match managers.iter().position(|m| {
            m.manager == manager && m.operation == "Apply" && m.subresource.as_deref() == subresource
        }) {
            Some(index) => {
                if managers[index].fields != applied_fields {
                    managers[index].time = meta::now();
                }
                managers[index].fields = applied_fields;
            }
            None => managers.push(Self::manager_entry(
                &manager,
                "Apply",
                subresource,
                applied_fields,
                t.api_version(),
            )),
        }
        let updated = self.finish_update(t, &existing, merged, status_write, options, Some(managers))?;
        Ok((updated, false))
    }

    /// Deletes an object.
    pub fn delete(
        &mut self,
        t: &Arc<ResourceType>,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        let existing = self.existing(t, namespace, name)?;
        if let Some(uid) = &options.uid
            && uid != meta::uid(&existing)
        {
            return Err(ApiError::conflict(
                t,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta::uid(&existing)
                ),
            ));
        }
        if let Some(rv) = &options.resource_version
            && Some(rv.as_str()) != existing["metadata"]["resourceVersion"].as_str()
        {
            return Err(ApiError::conflict(
                t,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        if options.dry_run {
            return Ok(Deleted {
                object: existing,
                removed: false,
            });
        }
        let is_pod = t.group.is_empty() && t.kind == "Pod";
        if meta::is_deleting(&existing) {
            if is_pod
                && options.grace_period_seconds == Some(0)
                && existing["metadata"]["finalizers"]
                    .as_array()
                    .is_none_or(Vec::is_empty)
            {
                return Ok(Deleted {
                    object: self.remove(t, existing),
                    removed: true,
                });
            }
            return Ok(Deleted {
                object: existing,
                removed: false,
            });
        }
        let mut next = (*existing).clone();
        let mut finalizers: Vec<Json> = next["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match options.propagation.as_deref() {
            Some("Foreground") if !finalizers.contains(&json!("foregroundDeletion")) => {
                finalizers.push(json!("foregroundDeletion"))
            }
            Some("Orphan") if !finalizers.contains(&json!("orphan")) => finalizers.push(json!("orphan")),
            _ => {}
        }
        let is_namespace = t.group.is_empty() && t.kind == "Namespace";
        let grace = if is_pod && next["spec"]["nodeName"].is_string() {
            options
                .grace_period_seconds
                .or_else(|| next["spec"]["terminationGracePeriodSeconds"].as_i64())
                .unwrap_or(30)
        } else {
            0
        };
        if finalizers.is_empty() && grace <= 0 && !is_namespace {
            return Ok(Deleted {
                object: self.remove(t, existing),
                removed: true,
            });
        }
        let now = jiff::Timestamp::now();
        let deletion = jiff::Timestamp::from_second(now.as_second() + grace.max(0))
            .unwrap_or(now)
            .to_string();
        next["metadata"]["deletionTimestamp"] = json!(deletion);
        next["metadata"]["deletionGracePeriodSeconds"] = json!(grace.max(0));
        if !finalizers.is_empty() {
            next["metadata"]["finalizers"] = Json::Array(finalizers);
        }
        if is_namespace {
            next["status"]["phase"] = json!("Terminating");
        }
        let generation = next["metadata"]["generation"].as_i64().unwrap_or(0);
        if generation > 0 {
            next["metadata"]["generation"] = json!(generation + 1);
        }
        let marked = self.put(t, next, Some(existing));
        Ok(Deleted {
            object: marked,
            removed: false,
        })
    }

    /// Removes an object now, whatever its finalizers (controllers finishing a deletion; CRD cleanup).
    pub fn remove_now(&mut self, t: &ResourceType, namespace: &str, name: &str) -> Option<Arc<Json>> {
        let existing = self.get(&t.key(), namespace, name)?;
        Some(self.remove(t, existing))
    }

    /// Replaces only `.status` (controllers); no-op writes change nothing.
    pub fn write_status(
        &mut self,
        t: &Arc<ResourceType>,
        namespace: &str,
        name: &str,
        status: Json,
    ) -> Result<Arc<Json>, ApiError> {
        let existing = self.existing(t, namespace, name)?;
        if existing.get("status") == Some(&status) {
            return Ok(existing);
        }
        // Built around the new status, in the old one's place: the old one is not copied.
        let mut next = with_status(&existing, Some(status), Map::new());
        if let Some(meta) = next["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        Ok(self.put(t, next, Some(existing)))
    }

    /// Replaces an object as a controller does (status included); no-op writes change nothing.
    pub fn write_object(&mut self, t: &Arc<ResourceType>, object: Json) -> Result<Arc<Json>, ApiError> {
        let existing = self.existing(t, meta::namespace(&object), meta::name(&object))?;
        if same_but_resource_version(&existing, &object) {
            return Ok(existing);
        }
        let mut next = object;
        if let Some(meta) = next["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        Ok(self.put(t, next, Some(existing)))
    }

    /// Removes every object of a CRD's types (when the CRD is deleted), then the types themselves.
    pub fn drop_custom_types(&mut self, crd_name: &str) {
        let Some((plural, group)) = crd_name.split_once('.') else {
            return;
        };
        let key = TypeKey::new(group, plural);
        if let Some(t) = self.catalog.find_any_version(&key).filter(|t| t.custom) {
            for object in self.list(&key, None) {
                self.remove(&t, object);
            }
        }
        self.catalog.remove_custom(crd_name);
    }

    /// Every type key with stored objects.
    #[must_use]
    pub fn type_keys(&self) -> Vec<TypeKey> {
        self.objects
            .iter()
            .filter(|(_, objects)| !objects.is_empty())
            .map(|(key, _)| key.clone())
            .collect()
    }
}

/// Copies the labels of a template into a map (used by workload controllers).
#[must_use]
pub fn template_labels(object: &Json) -> Map<String, Json> {
    object["spec"]["template"]["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object of few fields and values, so that two drawn objects are often equal in some parts: optional
    /// metadata (with or without a resourceVersion), status, apiVersion, kind, spec and data.
    fn small_object() -> impl proptest::strategy::Strategy<Value = Json> {
        use proptest::prelude::*;
        let value = prop_oneof![Just(json!(1)), Just(json!("a")), Just(json!({"x": 1}))];
        let metadata = (
            proptest::option::of(prop_oneof![Just(json!("1")), Just(json!("2"))]),
            proptest::option::of(Just(json!("n"))),
        )
            .prop_map(|(version, name)| {
                let mut map = Map::new();
                if let Some(version) = version {
                    map.insert("resourceVersion".into(), version);
                }
                if let Some(name) = name {
                    map.insert("name".into(), name);
                }
                Json::Object(map)
            });
        (
            proptest::option::of(metadata),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("status"),
                    Just("apiVersion"),
                    Just("kind"),
                    Just("spec"),
                    Just("data")
                ],
                value,
                0..4,
            ),
        )
            .prop_map(|(metadata, fields)| {
                let mut map: Map<String, Json> =
                    fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                if let Some(metadata) = metadata {
                    map.insert("metadata".into(), metadata);
                }
                Json::Object(map)
            })
    }

    /// The copies the comparisons replace: the object without the fields outside its spec, and without its
    /// resourceVersion.
    fn spec_copy(object: &Json) -> Json {
        let mut copy = object.clone();
        if let Some(map) = copy.as_object_mut() {
            for key in NOT_SPEC {
                map.remove(key);
            }
        }
        copy
    }

    fn without_resource_version_copy(object: &Json) -> Json {
        let mut copy = object.clone();
        if let Some(meta) = copy.get_mut("metadata").and_then(Json::as_object_mut) {
            meta.remove("resourceVersion");
        }
        copy
    }

    proptest::proptest! {
        /// Comparing in place says what comparing the stripped copies says, for any two objects.
        #[test]
        fn in_place_comparisons_agree_with_comparing_stripped_copies(a in small_object(), b in small_object()) {
            proptest::prop_assert_eq!(same_spec(&a, &b), spec_copy(&a) == spec_copy(&b));
            proptest::prop_assert_eq!(
                same_but_resource_version(&a, &b),
                without_resource_version_copy(&a) == without_resource_version_copy(&b)
            );
        }
    }

    /// A store with the `default` namespace, and its ConfigMap type.
    fn store_with_default_namespace() -> (Store, Arc<ResourceType>) {
        let mut store = Store::new(1);
        let namespaces = store.catalog.find("", "v1", "namespaces").unwrap();
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}});
        store
            .create(&namespaces, None, namespace, &WriteOptions::default())
            .unwrap();
        let configmaps = store.catalog.find("", "v1", "configmaps").unwrap();
        (store, configmaps)
    }

    /// A ConfigMap is kept as its text and the part selectors read: it reads back as written, its change carries
    /// the same, and a relabelling leaves the labels of before and after to the watches' selectors.
    #[test]
    fn an_object_kept_as_text_reads_back_as_written_and_its_changes_carry_what_selectors_read() {
        let (mut store, configmaps) = store_with_default_namespace();
        assert!(Store::keeps_text(&configmaps));
        let mut feed = store.subscribe();
        let written = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "labels": {"app": "web"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-1"}]},
            "data": {"key": "value"}});
        let created = store
            .create(&configmaps, Some("default"), written, &WriteOptions::default())
            .unwrap();
        let read = store.get(&configmaps.key(), "default", "c").unwrap();
        assert_eq!(read, created);
        assert_eq!(read["data"]["key"], "value");
        assert!(store.list(&configmaps.key(), Some("default")).contains(&created));
        let change = feed.try_recv().unwrap();
        let Stored::Text { text, part } = &change.object else {
            panic!("a ConfigMap's change is kept as text: {:?}", change.object)
        };
        assert_eq!(serde_json::from_str::<Json>(text).unwrap(), *created);
        assert_eq!(part["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(part["metadata"]["uid"], created["metadata"]["uid"]);
        assert_eq!(
            part["metadata"]["resourceVersion"],
            created["metadata"]["resourceVersion"]
        );
        assert_eq!(part["metadata"]["ownerReferences"][0]["uid"], "u-1");
        assert_eq!(part["apiVersion"], "v1");
        assert!(part.get("data").is_none(), "the part holds no data: {part}");

        let mut relabelled = (*created).clone();
        relabelled["metadata"]["labels"] = json!({"app": "db"});
        store.write_object(&configmaps, relabelled).unwrap();
        let change = feed.try_recv().unwrap();
        assert_eq!(change.kind, ChangeKind::Modified);
        assert_eq!(change.object.part()["metadata"]["labels"], json!({"app": "db"}));
        assert_eq!(
            change.previous.as_ref().unwrap()["metadata"]["labels"],
            json!({"app": "web"})
        );
    }

    /// The feed refers to logged changes only: a burst past the log's bytes is kept for its minimum age (a
    /// subscriber gets every change), and a change the log dropped is a lag for a subscriber that had not taken it,
    /// while the feed keeps no old object alive.
    #[test]
    fn the_change_feed_keeps_no_change_the_log_dropped() {
        let (mut store, configmaps) = store_with_default_namespace();
        let data = "x".repeat(32 * 1024);
        let write = |store: &mut Store, i: usize| {
            let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{i}"), "namespace": "default"}, "data": {"blob": data}});
            store
                .create(&configmaps, Some("default"), object, &WriteOptions::default())
                .unwrap();
        };
        // A burst within the minimum age: far past the bytes, all of it logged and delivered.
        let mut burst = store.subscribe();
        for i in 0..10 {
            write(&mut store, i);
        }
        assert!(store.log_bytes > LOG_BYTES);
        for i in 0..10 {
            let change = burst
                .try_recv()
                .unwrap_or_else(|err| panic!("change {i}: {err:?}"));
            assert_eq!(meta::name(change.object.part()), format!("cm-{i}"));
        }
        // Past the minimum age the bytes bound the log again; a subscriber that did not take the dropped changes
        // lags, and the feed keeps none of their objects.
        store.log_min_age = std::time::Duration::ZERO;
        let mut late = store.subscribe();
        let mut first = None;
        for i in 10..20 {
            write(&mut store, i);
            if i == 10 {
                first = store.objects[&configmaps.key()]
                    .get(&("default".to_string(), "cm-10".to_string()))
                    .cloned();
            }
        }
        assert!(store.log_bytes <= LOG_BYTES || store.log.len() == 1);
        assert!(matches!(
            late.try_recv(),
            Err(broadcast::error::TryRecvError::Lagged(_))
        ));
        let holders = match first.unwrap() {
            Stored::Tree(object) => Arc::strong_count(&object),
            Stored::Text { text, .. } => Arc::strong_count(&text),
        };
        assert_eq!(
            holders, 2,
            "only the store's map and this test hold the first object, not the feed"
        );
    }

    #[test]
    fn the_log_keeps_at_most_its_bytes_and_older_resumes_are_refused() {
        let (mut store, configmaps) = store_with_default_namespace();
        store.log_min_age = std::time::Duration::ZERO;
        let start = store.revision();
        // A quarter of the log's bytes per ConfigMap: the log holds about four of them.
        let data = "x".repeat(LOG_BYTES / 4);
        let mut revisions = Vec::new();
        for i in 0..20 {
            let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("big-{i}"), "namespace": "default"}, "data": {"blob": data}});
            store
                .create(&configmaps, Some("default"), object, &WriteOptions::default())
                .unwrap();
            revisions.push(store.revision());
            assert!(
                store.log_bytes <= LOG_BYTES || store.log.len() == 1,
                "{}",
                store.log_bytes
            );
        }
        assert!(
            store.log.len() < 20 && !store.log.is_empty(),
            "{}",
            store.log.len()
        );
        assert!(
            store.changes_since(start).is_none(),
            "a resume from before the floor gets 410"
        );
        let recent = store.changes_since(revisions[17]).unwrap();
        assert_eq!(recent.len(), 2);
        // Everything stays in the store itself.
        let kept = store.list(&configmaps.key(), Some("default"));
        assert_eq!(
            kept.iter()
                .filter(|cm| meta::name(cm).starts_with("big-"))
                .count(),
            20
        );
        // One object larger than the whole budget is still logged, alone.
        let huge = "y".repeat(LOG_BYTES + 1);
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "huge", "namespace": "default"}, "data": {"blob": huge}});
        store
            .create(&configmaps, Some("default"), object, &WriteOptions::default())
            .unwrap();
        assert_eq!(store.log.len(), 1);
        assert_eq!(store.changes_since(revisions[19]).unwrap().len(), 1);
    }

    #[test]
    fn sizes_grow_with_strings_and_entries() {
        let small = approximate_size(&json!({"a": "b"}));
        let longer = approximate_size(&json!({"a": "b".repeat(100)}));
        let more = approximate_size(&json!({"a": "b", "c": ["d", "e"]}));
        assert_eq!(longer - small, 99);
        assert!(more > small);
    }
}
