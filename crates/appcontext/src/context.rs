//! AppContexts: the staged, rendered resources of one instantiation, organised app → cluster → resource, with the
//! context's top-level status, each resource's rsync status and each cluster's connectivity.
//!
//! One record holds the meta (identity, app order, dependencies, status, stop request); one record per
//! (app, cluster) holds that pair's resources and observed state, so status writes are batched per (app, cluster).
//! Every update is a compare-and-swap on the record's revision, retried on conflict.
//!
//! A context exists once its meta exists. A large context is written in pages ([`AppContexts::stage`]): its
//! (app, cluster) records first, each page one transaction of at most [`PAGE_OPS`] ops and [`PAGE_BYTES`] bytes
//! (etcd refuses more than 128 ops or 1.5 MiB per request by default), with a staging marker
//! `/context-staging/<id>` holding the writer's time; then, last, one transaction writes the meta, removes the
//! marker and commits whatever the caller adds (the lifecycle's state action). Readers find contexts by their
//! meta ([`AppContexts::ids`]) or through a state history (written with the meta), so they never see a
//! half-written one; the status index holds its records (from [`AppContexts::load_all`] and the watch) only for
//! when its meta comes. Records of a
//! context whose meta never came (the writer died between pages) are swept ([`AppContexts::sweep_unfinished`])
//! once their marker is older than [`STAGING_TIMEOUT`] — long enough that a writer still paging (on this replica
//! or another) is never swept; a writer that finds its marker gone stops with [`ContextError::Swept`].

use emco_model::{AppDependencySpec, Connectivity, ContextId, ContextStatus, Gvk, Hook, RsyncStatus};
use std::time::Duration;

use emco_store::{Compare, Op, Store, Txn};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::json_text::JsonText;
use crate::record::{self, RecordError};
use crate::replicas::Fence;

const CONTEXT_ROOT: &str = "/context/";
/// Where the staging markers of contexts being written in pages live (outside [`CONTEXT_ROOT`]).
const STAGING_ROOT: &str = "/context-staging/";

/// The most ops one page of a paged context write holds.
pub const PAGE_OPS: usize = 64;
/// The most bytes (keys and values) one page holds; a single larger record is a page of its own (the store
/// chunks values that large).
pub const PAGE_BYTES: usize = 1024 * 1024;
/// A context being written in pages whose meta has not come after this long is swept.
pub const STAGING_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// AppContext errors.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// No such context.
    #[error("AppContext {0} not found")]
    NotFound(ContextId),
    /// No such app/cluster pair in the context.
    #[error("AppContext {id} has no app '{app}' on cluster '{cluster}'")]
    NoSuchCluster {
        /// The context.
        id: ContextId,
        /// The app.
        app: String,
        /// The cluster (`provider+cluster`).
        cluster: String,
    },
    /// The staging marker of a context being written in pages was removed (it was swept as abandoned); nothing
    /// of the context is committed.
    #[error("AppContext {0} was swept while it was being written; retry")]
    Swept(ContextId),
    /// A stored record cannot be read.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The write's fence failed: this replica no longer owns the work it wrote for (nothing was written).
    #[error("AppContext {id}: not written, this replica lost '{owner_key}'")]
    Fenced {
        /// The context.
        id: ContextId,
        /// The owner key whose claim was lost.
        owner_key: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] emco_store::Error),
}

/// The result type of AppContext operations.
pub type Result<T, E = ContextError> = std::result::Result<T, E>;

/// The meta record of a context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextMeta {
    /// The context id.
    pub id: ContextId,
    /// Project of the DIG.
    pub project: String,
    /// Composite app of the DIG.
    pub composite_app: String,
    /// Composite app version.
    pub composite_app_version: String,
    /// Composite profile used.
    pub composite_profile: String,
    /// The DIG.
    pub deployment_intent_group: String,
    /// Helm release name (the DIG's `spec.version`).
    pub release: String,
    /// Namespace the resources go to.
    pub namespace: String,
    /// Logical cloud, empty when none.
    #[serde(default)]
    pub logical_cloud: String,
    /// What the context instantiates: a DIG (the identity fields above), a cluster's network intents or a
    /// logical cloud.
    #[serde(default, skip_serializing_if = "ContextOwner::is_dig")]
    pub owner: ContextOwner,
    /// Whose credentials apply the main resources: the cluster's own kubeconfig (`None`), or a level-1 logical
    /// cloud's user (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<UserCredentials>,
    /// The context this one takes over from (an `/update`): once this one is instantiated, the engine deletes the
    /// objects only that one has and marks it `Terminated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<ContextId>,
    /// The first context of the update chain this one belongs to, when it is not this one (an update, rollback
    /// or migration): its id labels the chain's objects. Recorded when the context is made, so the chain need
    /// not be walked (and still holds when the contexts before were deleted with their DIG after a migration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<ContextId>,
    /// Apps in the composite app's order, with their dependencies and clusters.
    pub apps: Vec<AppMeta>,
    /// The context's top-level status.
    pub status: ContextStatus,
    /// Set by `/stop`: the running operation must end.
    #[serde(default)]
    pub stop_requested: bool,
    /// A progressive rollout (a DIG's `spec.rollout`): its plan and how far rsync got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<emco_model::rollout::RolloutProgress>,
    /// When the context was created.
    pub created: String,
}

impl ContextMeta {
    /// The schema the meta needs: 3 when it applies with a logical cloud user's credentials (an older emco must
    /// refuse it rather than apply as the cluster's administrator), else 1.
    #[must_use]
    pub fn schema(&self) -> u64 {
        if self.credentials.is_some() { 3 } else { 1 }
    }

    /// Every cluster of every app, once each, in name order: the order a progressive rollout reaches them.
    #[must_use]
    pub fn clusters(&self) -> Vec<String> {
        let clusters: std::collections::BTreeSet<&String> =
            self.apps.iter().flat_map(|app| &app.clusters).collect();
        clusters.into_iter().cloned().collect()
    }

    /// The lineage of a context that takes over from this one: this one's, or this one when it starts a chain
    /// (`None` when neither is known: a context from before lineages were recorded that took over from another).
    #[must_use]
    pub fn lineage_for_successor(&self) -> Option<ContextId> {
        self.lineage.or(self.supersedes.is_none().then_some(self.id))
    }

    /// Whether the context is a progressive rollout paused past its failure threshold: no operation runs for it
    /// until a `/resume` (or an update, rollback, stop or terminate takes it over).
    #[must_use]
    pub fn rollout_paused(&self) -> bool {
        self.status == ContextStatus::Instantiating
            && !self.stop_requested
            && self.rollout.as_ref().is_some_and(|rollout| rollout.paused)
    }

    /// Starts a progressive rollout of `spec` over the context's clusters (none: all at once).
    pub fn plan_rollout(&mut self, spec: Option<&emco_model::rollout::RolloutSpec>) {
        self.rollout = spec.map(|spec| {
            let plan = spec.plan(self.clusters().len() as u64);
            emco_model::rollout::RolloutProgress::new(plan)
        });
    }

    /// A meta with every DIG identity field empty, for contexts that belong to something else.
    #[must_use]
    pub fn for_owner(id: ContextId, owner: ContextOwner, namespace: &str, apps: Vec<AppMeta>) -> Self {
        Self {
            id,
            project: String::new(),
            composite_app: String::new(),
            composite_app_version: String::new(),
            composite_profile: String::new(),
            deployment_intent_group: String::new(),
            release: String::new(),
            namespace: namespace.to_string(),
            logical_cloud: String::new(),
            owner,
            credentials: None,
            supersedes: None,
            lineage: None,
            apps,
            status: ContextStatus::Instantiating,
            stop_requested: false,
            rollout: None,
            created: emco_model::now_timestamp(),
        }
    }
}

/// What a context instantiates.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum ContextOwner {
    /// A deployment intent group, named by the meta's identity fields.
    #[default]
    DeploymentIntentGroup,
    /// The network intents of one cluster (app `network-intents`).
    #[serde(rename_all = "camelCase")]
    ClusterNetworks {
        /// The cluster provider.
        provider: String,
        /// The cluster.
        cluster: String,
    },
    /// A logical cloud (app `logical-cloud`).
    #[serde(rename_all = "camelCase")]
    LogicalCloud {
        /// The project.
        project: String,
        /// The logical cloud.
        name: String,
    },
}

impl ContextOwner {
    /// Whether a DIG owns the context.
    #[must_use]
    pub fn is_dig(&self) -> bool {
        matches!(self, Self::DeploymentIntentGroup)
    }
}

/// The credentials of a level-1 logical cloud's user, with which a DIG on that logical cloud is applied: the
/// private key kept as the logical cloud's blob, and per cluster the certificate the cluster signed, kept in
/// the logical cloud's context (the resource with [`ResourceRole::Certificate`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserCredentials {
    /// The project of the logical cloud.
    pub project: String,
    /// The logical cloud.
    pub logical_cloud: String,
    /// The logical cloud's context holding the signed certificates.
    pub context: ContextId,
    /// The user (the certificate's CommonName).
    pub user: String,
}

/// One app of a context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppMeta {
    /// The app.
    pub name: String,
    /// Apps it waits for.
    #[serde(default)]
    pub dependencies: Vec<AppDependencySpec>,
    /// The clusters it is placed on (`provider+cluster`), in placement order.
    pub clusters: Vec<String>,
    /// The clusters its placement named that a placement controller took away, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Exclusion>,
}

/// A cluster a placement controller took away from an app, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exclusion {
    /// The cluster (`provider+cluster`).
    pub cluster: String,
    /// The controller that took it away.
    pub controller: String,
    /// Why: the requirement it does not meet, with what it has.
    pub reason: String,
}

/// One app on one cluster: its resources (in apply order) and what rsync and the cluster last reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRecord {
    /// The app.
    pub app: String,
    /// The cluster, `provider+cluster`.
    pub cluster: String,
    /// The resources, in apply order.
    pub resources: Vec<ResourceRecord>,
    /// Whether rsync can reach the cluster, as last known.
    pub connectivity: Connectivity,
    /// Why rsync is retrying (`connection refused`, `HTTP 503 Service Unavailable`, …), while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connectivity_reason: Option<String>,
    /// The last ResourceBundleState status heard from the cluster, as the text it was stored as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_status: Option<JsonText>,
    /// When it was heard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heard_at: Option<String>,
    /// What rsync deliberately waits for before it goes on with this app on this cluster, while it waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    /// The controllers that added or changed each resource (by key, `name+Kind`), in the order they ran; empty when
    /// no controller touched the app here.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub changed_by: std::collections::BTreeMap<String, Vec<String>>,
    /// On a pull cluster: the last order to its agent and, once reported, its outcome
    /// ([`crate::agent_order`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_order: Option<Box<crate::agent_order::AgentOrder>>,
}

/// What rsync waits for, since when and until when (a hook to complete, a CRD to be established, an app it depends
/// on to be Ready, the seconds a dependency asks for after that).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// What is waited for, as a sentence's object: `pre-install hook Pod/migrate to complete`.
    #[serde(rename = "for")]
    pub what: String,
    /// When the wait began (RFC 3339).
    pub since: String,
    /// When the wait ends at the latest (RFC 3339): a hook's timeout, the end of a dependency's extra seconds;
    /// none when it has no limit (an app it depends on may take as long as it takes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// What happens then: `fails` (a hook that has not completed fails the operation) or `continues`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<String>,
}

impl Waiting {
    /// A wait that began now and ends, at the latest, after `limit` (none: no limit).
    #[must_use]
    pub fn starting_now(what: impl Into<String>, limit: Option<(std::time::Duration, &str)>) -> Self {
        let now = jiff::Timestamp::now();
        let until = limit.and_then(|(limit, _)| {
            let limit = jiff::SignedDuration::try_from(limit).ok()?;
            now.checked_add(limit).ok()
        });
        Self {
            what: what.into(),
            since: emco_model::format_timestamp(now),
            until: until.map(emco_model::format_timestamp),
            then: limit.map(|(_, then)| then.to_string()),
        }
    }
}

impl ClusterRecord {
    /// A record of freshly rendered resources: every one `Pending`, connectivity `Unknown`.
    #[must_use]
    pub fn pending(app: &str, cluster: &str, resources: Vec<ResourceRecord>) -> Self {
        Self {
            app: app.to_string(),
            cluster: cluster.to_string(),
            resources,
            connectivity: Connectivity::Unknown,
            connectivity_reason: None,
            cluster_status: None,
            heard_at: None,
            waiting: None,
            changed_by: std::collections::BTreeMap::new(),
            agent_order: None,
        }
    }

    /// The last ResourceBundleState status heard, as a tree: `None` when none was heard, or when its text nests
    /// deeper than the parser reads.
    #[must_use]
    pub fn heard_status(&self) -> Option<Json> {
        self.cluster_status.as_ref()?.to_json().ok()
    }

    /// The provider half of the cluster name.
    #[must_use]
    pub fn provider(&self) -> &str {
        self.cluster
            .split_once('+')
            .map_or(self.cluster.as_str(), |(provider, _)| provider)
    }

    /// The schema the record needs: 3 when it holds a certificate request emco approves, 2 when a resource has
    /// another role than main (an older emco must refuse the record rather than apply hooks and CRDs as ordinary
    /// resources), else 1, which older builds still read.
    #[must_use]
    pub fn schema(&self) -> u64 {
        if self
            .resources
            .iter()
            .any(|resource| matches!(resource.role, ResourceRole::Certificate))
        {
            3
        } else if self.resources.iter().all(|resource| resource.role.is_main()) {
            1
        } else {
            2
        }
    }

    /// The cluster half of the cluster name.
    #[must_use]
    pub fn cluster_name(&self) -> &str {
        self.cluster
            .split_once('+')
            .map_or(self.cluster.as_str(), |(_, name)| name)
    }
}

/// One rsync resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRecord {
    /// `metadata.name`.
    pub name: String,
    /// `kind`.
    pub kind: String,
    /// `apiVersion`.
    pub api_version: String,
    /// The rendered object, as the text it was stored as.
    pub manifest: JsonText,
    /// What rsync last did with it.
    pub status: RsyncStatus,
    /// The cluster's message when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    /// What part it plays in the apply sequence (schema 2; schema-1 records hold only main resources).
    #[serde(default, skip_serializing_if = "ResourceRole::is_main")]
    pub role: ResourceRole,
    /// For a [`ResourceRole::Certificate`] request: the certificate the cluster issued (PEM), once it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
}

/// The part a resource plays in an (app, cluster) apply sequence, as EMCO's `resorder` and `resdependency` say
/// it: main resources are applied in order; CRDs (`crd-install`) are created first if absent; hooks run at
/// their events.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum ResourceRole {
    /// An ordinary resource (EMCO's `resorder`).
    #[default]
    Main,
    /// A CustomResourceDefinition, from the chart's `crds/` folder or rendered (EMCO's `crd-install`).
    Crd,
    /// A Helm hook (EMCO's `resdependency.<event>`); `test` hooks are never stored.
    Hook(Hook),
    /// A `certificates.k8s.io/v1` CertificateSigningRequest for a logical cloud's user: applied in order like a
    /// main resource, then approved by rsync, which keeps the certificate the cluster issues in the record
    /// (schema 3).
    Certificate,
}

impl ResourceRole {
    /// Whether this is an ordinary resource.
    #[must_use]
    pub fn is_main(&self) -> bool {
        matches!(self, Self::Main)
    }

    /// The hook, if this is one.
    #[must_use]
    pub fn hook(&self) -> Option<&Hook> {
        match self {
            Self::Hook(hook) => Some(hook),
            _ => None,
        }
    }
}

impl ResourceRecord {
    /// A pending resource for a rendered object.
    #[must_use]
    pub fn pending(name: &str, kind: &str, api_version: &str, manifest: impl Into<JsonText>) -> Self {
        Self {
            name: name.to_string(),
            kind: kind.to_string(),
            api_version: api_version.to_string(),
            manifest: manifest.into(),
            status: RsyncStatus::Pending,
            error: None,
            updated: None,
            role: ResourceRole::Main,
            certificate: None,
        }
    }

    /// A pending resource for an object built by emco itself (network intents, a logical cloud's objects): name,
    /// kind and apiVersion read from the object (empty when absent).
    #[must_use]
    pub fn pending_object(object: Json) -> Self {
        let field = |value: &Json| value.as_str().unwrap_or_default().to_string();
        let (name, kind, api_version) = (
            field(&object["metadata"]["name"]),
            field(&object["kind"]),
            field(&object["apiVersion"]),
        );
        Self::pending(&name, &kind, &api_version, object)
    }

    /// The rendered object as a tree: `Json::Null` when its text nests deeper than the parser reads (rsync,
    /// which applies it, reads [`ResourceRecord::manifest`] itself and fails the resource then).
    #[must_use]
    pub fn object(&self) -> Json {
        self.manifest.to_json().unwrap_or(Json::Null)
    }

    /// The namespace the manifest names (`metadata.namespace`, empty when none), read without the rest.
    #[must_use]
    pub fn namespace(&self) -> String {
        #[derive(Deserialize)]
        struct Object {
            #[serde(default)]
            metadata: Option<Metadata>,
        }
        #[derive(Deserialize)]
        struct Metadata {
            #[serde(default)]
            namespace: Option<Json>,
        }
        self.manifest
            .read::<Object>()
            .ok()
            .and_then(|object| object.metadata?.namespace)
            .and_then(|namespace| namespace.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// The same resource in another role.
    #[must_use]
    pub fn with_role(mut self, role: ResourceRole) -> Self {
        self.role = role;
        self
    }

    /// The AppContext key: `<name>+<kind>`.
    #[must_use]
    pub fn key(&self) -> String {
        format!("{}+{}", self.name, self.kind)
    }

    /// Group, version and kind.
    #[must_use]
    pub fn gvk(&self) -> Gvk {
        Gvk::from_api_version(&self.api_version, &self.kind)
    }
}

/// A change to the AppContexts in the store, decoded from a key and value (for indexes kept current by a watch).
#[derive(Debug, Clone, PartialEq)]
pub enum ContextChange {
    /// A context's meta was written.
    Meta(Box<ContextMeta>),
    /// An (app, cluster) record was written.
    Cluster(ContextId, ClusterRecord),
    /// A context's meta was deleted (the whole context goes with it).
    MetaDeleted(ContextId),
    /// The cluster was heard from for an (app, cluster) record with nothing else in its status changed (a
    /// monitor's heartbeat): kept under a small key of its own ([`AppContexts::note_heard`]), so a beat
    /// writes a time, not the whole record. The newer of this and the record's `heard_at` is when it was heard.
    Heard {
        /// The context.
        id: ContextId,
        /// The app.
        app: String,
        /// The cluster.
        cluster: String,
        /// When (RFC 3339).
        at: String,
    },
    /// An (app, cluster) record was deleted.
    ClusterDeleted {
        /// The context.
        id: ContextId,
        /// The app.
        app: String,
        /// The cluster.
        cluster: String,
    },
}

/// An (app, cluster) record as the store holds it: its names, and its bytes until [`StoredCluster::decode`].
#[derive(Debug, Clone)]
pub struct StoredCluster {
    /// The app.
    pub app: String,
    /// The cluster, `provider+cluster`.
    pub cluster: String,
    key: String,
    bytes: Vec<u8>,
}

impl StoredCluster {
    /// The record.
    pub fn decode(&self) -> Result<ClusterRecord> {
        Ok(record::decode(&self.key, &self.bytes)?)
    }
}

/// What a context key names.
enum ContextKey<'a> {
    Meta(ContextId),
    Cluster(ContextId, &'a str, &'a str),
    Heard(ContextId, &'a str, &'a str),
}

/// The most heartbeats [`AppContexts::note_heard_many`] writes in one transaction (a compare and a put each,
/// plus their fences: within etcd's default 128 operations).
pub const MAX_HEARD_PER_TXN: usize = 32;

/// A heartbeat to note: the cluster was heard from at `at` for an (app, cluster) record, by the holder of `fence`.
#[derive(Debug, Clone)]
pub struct HeardNote {
    /// The context.
    pub id: ContextId,
    /// The app.
    pub app: String,
    /// The cluster.
    pub cluster: String,
    /// When (RFC 3339).
    pub at: String,
    /// The claim the write depends on (with replicas).
    pub fence: Option<Fence>,
}

/// The value under a heard key: when the cluster was last heard from for an (app, cluster).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeardRecord {
    heard_at: String,
}

fn parse_context_key(key: &str) -> Option<ContextKey<'_>> {
    let rest = key.strip_prefix(CONTEXT_ROOT)?;
    let (id, rest) = rest.split_once('/')?;
    let id: ContextId = id.parse().ok()?;
    if rest == "meta" {
        return Some(ContextKey::Meta(id));
    }
    if let Some(rest) = rest.strip_prefix("heard/") {
        let (app, cluster) = rest.split_once("/cluster/")?;
        return Some(ContextKey::Heard(id, app, cluster));
    }
    let rest = rest.strip_prefix("app/")?;
    let (app, cluster) = rest.split_once("/cluster/")?;
    Some(ContextKey::Cluster(id, app, cluster))
}

impl ContextChange {
    /// Decodes a store event; `None` for keys outside the AppContexts.
    pub fn from_event(event: &emco_store::Event) -> Option<Result<Self, RecordError>> {
        if event.kind == emco_store::EventKind::Put {
            return Self::from_put(&event.kv);
        }
        Some(Ok(match parse_context_key(&event.kv.key)? {
            ContextKey::Meta(id) => Self::MetaDeleted(id),
            ContextKey::Cluster(id, app, cluster) => Self::ClusterDeleted {
                id,
                app: app.to_string(),
                cluster: cluster.to_string(),
            },
            // A heard key goes with its context; its record's deletion says everything.
            ContextKey::Heard(..) => return None,
        }))
    }

    /// Decodes a key as written (a put, or a key read from the store); `None` for keys outside the AppContexts.
    fn from_put(kv: &emco_store::KeyValue) -> Option<Result<Self, RecordError>> {
        Some(match parse_context_key(&kv.key)? {
            ContextKey::Meta(_) => record::decode(&kv.key, &kv.value).map(Self::Meta),
            ContextKey::Cluster(id, _, _) => {
                record::decode(&kv.key, &kv.value).map(|record| Self::Cluster(id, record))
            }
            ContextKey::Heard(id, app, cluster) => {
                record::decode::<HeardRecord>(&kv.key, &kv.value).map(|heard| Self::Heard {
                    id,
                    app: app.to_string(),
                    cluster: cluster.to_string(),
                    at: heard.heard_at,
                })
            }
        })
    }
}

fn meta_key(id: ContextId) -> String {
    format!("{CONTEXT_ROOT}{id}/meta")
}

fn cluster_key(id: ContextId, app: &str, cluster: &str) -> String {
    format!("{CONTEXT_ROOT}{id}/app/{app}/cluster/{cluster}")
}

fn heard_key(id: ContextId, app: &str, cluster: &str) -> String {
    format!("{CONTEXT_ROOT}{id}/heard/{app}/cluster/{cluster}")
}

fn context_prefix(id: ContextId) -> String {
    format!("{CONTEXT_ROOT}{id}/")
}

fn staging_key(id: ContextId) -> String {
    format!("{STAGING_ROOT}{id}")
}

/// The staging marker of a context being written in pages: since when (seconds since the Unix epoch, the
/// writer's clock).
#[derive(Debug, Serialize, Deserialize)]
struct StagingMarker {
    since: u64,
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// The transactions that write `puts` (the records of context `id`) in pages of at most [`PAGE_OPS`] ops and
/// [`PAGE_BYTES`] bytes: the first creates the staging marker (guarded by "no meta, no marker"), the others are
/// guarded by "the marker is still there".
fn page_txns(id: ContextId, puts: Vec<(String, Vec<u8>)>) -> Vec<Txn> {
    let marker = record::encode(&StagingMarker {
        since: unix_seconds(),
    });
    let mut pages: Vec<(Vec<Op>, usize)> = vec![(vec![Op::put(staging_key(id), marker)], 0)];
    for (key, value) in puts {
        let size = key.len() + value.len();
        let full = pages.last().is_some_and(|(ops, bytes)| {
            ops.len() >= PAGE_OPS || (!ops.is_empty() && bytes + size > PAGE_BYTES)
        });
        if full {
            pages.push((Vec::new(), 0));
        }
        if let Some((ops, bytes)) = pages.last_mut() {
            ops.push(Op::put(key, value));
            *bytes += size;
        }
    }
    pages
        .into_iter()
        .enumerate()
        .map(|(index, (ops, _))| {
            let guard = if index == 0 {
                vec![Compare::absent(meta_key(id)), Compare::absent(staging_key(id))]
            } else {
                vec![Compare::present(staging_key(id))]
            };
            Txn::new().when(guard).and_then(ops)
        })
        .collect()
}

/// A context whose (app, cluster) records are written (in pages, or kept to commit inline when they fit one
/// transaction), waiting for the transaction that writes its meta ([`StagedContext::create_parts`]).
#[derive(Debug, Clone)]
pub struct StagedContext {
    id: ContextId,
    /// Whether the records went ahead in pages (then a staging marker exists).
    paged: bool,
    /// The record puts the creating transaction still commits (when not paged).
    inline: Vec<Op>,
}

impl StagedContext {
    /// The context.
    #[must_use]
    pub fn id(&self) -> ContextId {
        self.id
    }

    /// Whether its records were written ahead in pages.
    #[must_use]
    pub fn is_paged(&self) -> bool {
        self.paged
    }

    /// The compares and ops that create the context with `meta` (whose id must be this context's): the meta is
    /// absent, the staging marker (if paged) still there; write the meta (and inline records), remove the marker.
    #[must_use]
    pub fn create_parts(&self, meta: &ContextMeta) -> (Vec<Compare>, Vec<Op>) {
        let mut compares = vec![Compare::absent(meta_key(self.id))];
        let mut ops = vec![AppContexts::meta_op(meta)];
        ops.extend(self.inline.iter().cloned());
        if self.paged {
            compares.push(Compare::present(staging_key(self.id)));
            ops.push(Op::delete(staging_key(self.id)));
        }
        (compares, ops)
    }
}

/// Access to AppContexts in a store.
#[derive(Debug, Clone)]
pub struct AppContexts {
    store: Store,
}

impl AppContexts {
    /// AppContexts over `store`.
    #[must_use]
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// A fresh random context id (a positive int63, as EMCO's).
    #[must_use]
    pub fn new_id() -> ContextId {
        loop {
            let raw = rand::random::<u64>() >> 1;
            if let Some(id) = ContextId::new(raw) {
                return id;
            }
        }
    }

    /// The compare and ops that create a context with its (app, cluster) records; commit them together with the
    /// lifecycle change that asked for them.
    #[must_use]
    pub fn create_txn_parts(meta: &ContextMeta, clusters: &[ClusterRecord]) -> (Compare, Vec<Op>) {
        let mut ops = Vec::with_capacity(clusters.len() + 1);
        ops.push(Op::put(
            meta_key(meta.id),
            record::encode_with_schema(meta, meta.schema()),
        ));
        for cluster in clusters {
            ops.push(Op::put(
                cluster_key(meta.id, &cluster.app, &cluster.cluster),
                record::encode_with_schema(cluster, cluster.schema()),
            ));
        }
        (Compare::absent(meta_key(meta.id)), ops)
    }

    /// The op that deletes a context entirely.
    #[must_use]
    pub fn delete_op(id: ContextId) -> Op {
        Op::delete_prefix(context_prefix(id))
    }

    /// Writes the (app, cluster) records of the new context `meta` describes ahead of its meta: when they fit one
    /// page ([`PAGE_OPS`] − 1 records, [`PAGE_BYTES`]) nothing is written and the creating transaction carries
    /// them; otherwise pages of records, the first with the staging marker. Nothing reads them until the
    /// creating transaction ([`StagedContext::create_parts`]) writes the meta.
    pub async fn stage(&self, meta: &ContextMeta, clusters: &[ClusterRecord]) -> Result<StagedContext> {
        let id = meta.id;
        let puts: Vec<(String, Vec<u8>)> = clusters
            .iter()
            .map(|cluster| {
                (
                    cluster_key(id, &cluster.app, &cluster.cluster),
                    record::encode_with_schema(cluster, cluster.schema()),
                )
            })
            .collect();
        let bytes: usize = puts.iter().map(|(key, value)| key.len() + value.len()).sum();
        if puts.len() < PAGE_OPS && bytes <= PAGE_BYTES {
            return Ok(StagedContext {
                id,
                paged: false,
                inline: puts.into_iter().map(|(key, value)| Op::put(key, value)).collect(),
            });
        }
        for (index, txn) in page_txns(id, puts).into_iter().enumerate() {
            if !self.store.txn(txn).await?.succeeded {
                if index > 0 {
                    // Swept meanwhile: remove what this page's predecessors left (a sweep may have run between).
                    self.discard_staged(id).await?;
                }
                return Err(ContextError::Swept(id));
            }
        }
        Ok(StagedContext {
            id,
            paged: true,
            inline: Vec::new(),
        })
    }

    /// Removes the records and staging marker of a context written in pages whose meta was never written (its
    /// creation failed). Does nothing to a context with a meta.
    pub async fn discard_staged(&self, id: ContextId) -> Result<()> {
        let txn = Txn::new()
            .when([Compare::absent(meta_key(id))])
            .and_then([Op::delete_prefix(context_prefix(id)), Op::delete(staging_key(id))]);
        self.store.txn(txn).await?;
        Ok(())
    }

    /// Sweeps contexts written in pages whose meta never came: those whose staging marker is older than
    /// `older_than` (by this clock) lose their records and marker, each in one transaction guarded by "the marker
    /// is unchanged and the meta absent". Returns the contexts swept.
    pub async fn sweep_unfinished(&self, older_than: Duration) -> Result<Vec<ContextId>> {
        let (markers, _) = self.store.range(STAGING_ROOT).await?;
        let now = unix_seconds();
        let mut swept = Vec::new();
        for kv in markers {
            let Some(id) = kv
                .key
                .strip_prefix(STAGING_ROOT)
                .and_then(|id| id.parse::<ContextId>().ok())
            else {
                continue;
            };
            let since = match record::decode::<StagingMarker>(&kv.key, &kv.value) {
                Ok(marker) => marker.since,
                Err(err) => {
                    tracing::warn!(key = %kv.key, error = %err, "unreadable staging marker; sweeping it");
                    0
                }
            };
            if now.saturating_sub(since) < older_than.as_secs() {
                continue;
            }
            let txn = Txn::new()
                .when([
                    Compare::mod_revision_is(kv.key.clone(), kv.mod_revision),
                    Compare::absent(meta_key(id)),
                ])
                .and_then([Op::delete_prefix(context_prefix(id)), Op::delete(kv.key.clone())]);
            if self.store.txn(txn).await?.succeeded {
                tracing::info!(context = %id, "swept the records of a context whose creation never finished");
                swept.push(id);
            }
        }
        Ok(swept)
    }

    /// Reads a context's meta (recording it in the current [`crate::read_set`]).
    pub async fn meta(&self, id: ContextId) -> Result<ContextMeta> {
        Ok(self.meta_with_revision(id).await?.0)
    }

    /// Reads a context's meta with the revision it was written at (recording it in the current
    /// [`crate::read_set`]).
    pub async fn meta_with_revision(&self, id: ContextId) -> Result<(ContextMeta, emco_store::Revision)> {
        let key = meta_key(id);
        let read_at = self.store.revision();
        let kv = self.store.get(&key).await?;
        crate::read_set::record_key(&key, kv.as_ref().map_or(0, |kv| kv.mod_revision), read_at);
        let kv = kv.ok_or(ContextError::NotFound(id))?;
        Ok((record::decode(&key, &kv.value)?, kv.mod_revision))
    }

    /// The op that writes a context's meta.
    #[must_use]
    pub fn meta_op(meta: &ContextMeta) -> Op {
        Op::put(meta_key(meta.id), record::encode_with_schema(meta, meta.schema()))
    }

    /// The compare that holds while a context's meta is unchanged since `revision`.
    #[must_use]
    pub fn meta_unchanged_since(id: ContextId, revision: emco_store::Revision) -> Compare {
        Compare::mod_revision_is(meta_key(id), revision)
    }

    /// Reads every (app, cluster) record of a context, in key order.
    pub async fn clusters(&self, id: ContextId) -> Result<Vec<ClusterRecord>> {
        let prefix = format!("{}app/", context_prefix(id));
        let (items, _) = self.store.range(&prefix).await?;
        items
            .iter()
            .map(|kv| Ok(record::decode(&kv.key, &kv.value)?))
            .collect()
    }

    /// Every (app, cluster) record of context `id` as stored, each decoded when asked ([`StoredCluster::decode`]):
    /// a reader that needs them one at a time (a detail answer) holds their bytes, not every record's tree at once.
    pub async fn stored_clusters(&self, id: ContextId) -> Result<Vec<StoredCluster>> {
        let prefix = format!("{}app/", context_prefix(id));
        let (items, _) = self.store.range(&prefix).await?;
        Ok(items
            .into_iter()
            .filter_map(|kv| {
                let Some(ContextKey::Cluster(_, app, cluster)) = parse_context_key(&kv.key) else {
                    return None;
                };
                Some(StoredCluster {
                    app: app.to_string(),
                    cluster: cluster.to_string(),
                    key: kv.key,
                    bytes: kv.value,
                })
            })
            .collect())
    }

    /// Reads one (app, cluster) record.
    pub async fn cluster(&self, id: ContextId, app: &str, cluster: &str) -> Result<ClusterRecord> {
        let key = cluster_key(id, app, cluster);
        let kv = self
            .store
            .get(&key)
            .await?
            .ok_or_else(|| ContextError::NoSuchCluster {
                id,
                app: app.to_string(),
                cluster: cluster.to_string(),
            })?;
        Ok(record::decode(&key, &kv.value)?)
    }

    /// Every AppContext record in the store as changes (metas before their clusters), with the revision read;
    /// records of a context without meta (being written in pages) too — [`AppContexts::ids`] finds contexts.
    pub async fn load_all(&self) -> Result<(Vec<ContextChange>, emco_store::Revision)> {
        let (items, revision) = self.store.range(CONTEXT_ROOT).await?;
        let mut metas = Vec::new();
        let mut clusters = Vec::new();
        let mut heard = Vec::new();
        for kv in &items {
            let Some(change) = ContextChange::from_put(kv) else {
                continue;
            };
            let change = change?;
            match change {
                ContextChange::Meta(_) => metas.push(change),
                ContextChange::Heard { .. } => heard.push(change),
                _ => clusters.push(change),
            }
        }
        // Records of a context still being written in pages come too, as its watch events do: an index fed from
        // here must hold them for when the meta comes (nothing names a context before its meta and state history).
        metas.extend(clusters);
        metas.extend(heard);
        Ok((metas, revision))
    }

    /// Every context id in the store.
    pub async fn ids(&self) -> Result<Vec<ContextId>> {
        let (items, _) = self.store.range(CONTEXT_ROOT).await?;
        Ok(items
            .iter()
            .filter_map(|kv| {
                kv.key
                    .strip_prefix(CONTEXT_ROOT)?
                    .strip_suffix("/meta")?
                    .parse()
                    .ok()
            })
            .collect())
    }

    /// Changes a context's meta with `change`, retrying when another writer got there first.
    pub async fn update_meta(
        &self,
        id: ContextId,
        change: impl FnMut(&mut ContextMeta),
    ) -> Result<ContextMeta> {
        self.update_meta_fenced(id, None, change).await
    }

    /// [`AppContexts::update_meta`], written only while `fence` holds ([`ContextError::Fenced`] once it does
    /// not).
    pub async fn update_meta_fenced(
        &self,
        id: ContextId,
        fence: Option<&Fence>,
        mut change: impl FnMut(&mut ContextMeta),
    ) -> Result<ContextMeta> {
        let key = meta_key(id);
        loop {
            let kv = self.store.get(&key).await?.ok_or(ContextError::NotFound(id))?;
            let mut meta: ContextMeta = record::decode(&key, &kv.value)?;
            change(&mut meta);
            let txn = Txn::new()
                .when([Compare::mod_revision_is(&key, kv.mod_revision)])
                .when(fence.map(Fence::compare))
                .and_then([Op::put(&key, record::encode_with_schema(&meta, meta.schema()))]);
            if self.store.txn(txn).await?.succeeded {
                return Ok(meta);
            }
            self.check_fence(id, fence).await?;
        }
    }

    /// After a failed write: [`ContextError::Fenced`] when the fence is why.
    async fn check_fence(&self, id: ContextId, fence: Option<&Fence>) -> Result<()> {
        let Some(fence) = fence else { return Ok(()) };
        match fence.holds(&self.store).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(ContextError::Fenced {
                id,
                owner_key: fence.key.clone(),
            }),
            Err(crate::replicas::ReplicaError::Store(err)) => Err(err.into()),
            Err(err) => Err(ContextError::Store(emco_store::Error::Backend(err.to_string()))),
        }
    }

    /// Notes that the cluster was heard from at `note.at` for the (app, cluster) record, with nothing else in its
    /// status changed: one small write under the record's heard key, while the record exists and the note's fence
    /// holds ([`ContextError::NoSuchCluster`], [`ContextError::Fenced`] otherwise).
    pub async fn note_heard(&self, note: &HeardNote) -> Result<()> {
        if self.note_heard_many(std::slice::from_ref(note)).await? {
            return Ok(());
        }
        self.check_fence(note.id, note.fence.as_ref()).await?;
        Err(ContextError::NoSuchCluster {
            id: note.id,
            app: note.app.clone(),
            cluster: note.cluster.clone(),
        })
    }

    /// Notes several heartbeats ([`AppContexts::note_heard`]) in one transaction: written all together,
    /// or — when any record is gone or any fence no longer holds — none (`Ok(false)`; note them one by one to
    /// learn which). At most [`MAX_HEARD_PER_TXN`] notes, so the compares and puts stay within etcd's bounds.
    pub async fn note_heard_many(&self, notes: &[HeardNote]) -> Result<bool> {
        let notes = &notes[..notes.len().min(MAX_HEARD_PER_TXN)];
        let mut fences: Vec<&Fence> = Vec::new();
        for fence in notes.iter().filter_map(|note| note.fence.as_ref()) {
            if !fences.contains(&fence) {
                fences.push(fence);
            }
        }
        let txn = Txn::new()
            .when(
                notes
                    .iter()
                    .map(|note| Compare::present(cluster_key(note.id, &note.app, &note.cluster))),
            )
            .when(fences.into_iter().map(Fence::compare))
            .and_then(notes.iter().map(|note| {
                Op::put(
                    heard_key(note.id, &note.app, &note.cluster),
                    record::encode(&HeardRecord {
                        heard_at: note.at.clone(),
                    }),
                )
            }));
        Ok(self.store.txn(txn).await?.succeeded)
    }

    /// Changes one (app, cluster) record with `change` in one write, retrying on conflict; nothing is written
    /// when the record `change` leaves encodes to the bytes stored.
    pub async fn update_cluster(
        &self,
        id: ContextId,
        app: &str,
        cluster: &str,
        change: impl FnMut(&mut ClusterRecord),
    ) -> Result<ClusterRecord> {
        self.update_cluster_fenced(id, app, cluster, None, change).await
    }

    /// [`AppContexts::update_cluster`], written only while `fence` holds ([`ContextError::Fenced`] once it
    /// does not).
    pub async fn update_cluster_fenced(
        &self,
        id: ContextId,
        app: &str,
        cluster: &str,
        fence: Option<&Fence>,
        mut change: impl FnMut(&mut ClusterRecord),
    ) -> Result<ClusterRecord> {
        let key = cluster_key(id, app, cluster);
        loop {
            let kv = self
                .store
                .get(&key)
                .await?
                .ok_or_else(|| ContextError::NoSuchCluster {
                    id,
                    app: app.to_string(),
                    cluster: cluster.to_string(),
                })?;
            let mut record: ClusterRecord = record::decode(&key, &kv.value)?;
            change(&mut record);
            let bytes = record::encode_with_schema(&record, record.schema());
            if bytes == kv.value {
                // A change that changes nothing writes nothing (the fence is checked all the same).
                self.check_fence(id, fence).await?;
                return Ok(record);
            }
            let txn = Txn::new()
                .when([Compare::mod_revision_is(&key, kv.mod_revision)])
                .when(fence.map(Fence::compare))
                .and_then([Op::put(&key, bytes)]);
            if self.store.txn(txn).await?.succeeded {
                return Ok(record);
            }
            self.check_fence(id, fence).await?;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn meta(id: ContextId) -> ContextMeta {
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
            apps: vec![AppMeta {
                name: "sink".into(),
                dependencies: vec![],
                clusters: vec!["prov+edge01".into()],
                excluded: Vec::new(),
            }],
            status: ContextStatus::Instantiating,
            stop_requested: false,
            rollout: None,
            created: "2020-08-21T05:39:34.64Z".into(),
        }
    }

    #[test]
    fn roles_raise_the_schema_and_old_records_read_as_main_resources() {
        use emco_model::{HookDeletePolicy, HookEvent};

        let plain = ClusterRecord::pending(
            "sink",
            "p+c",
            vec![ResourceRecord::pending("cm", "ConfigMap", "v1", json!({}))],
        );
        assert_eq!(plain.schema(), 1);
        let bytes = record::encode_with_schema(&plain, plain.schema());
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.starts_with(r#"{"schema":1,"#) && !text.contains("role"),
            "{text}"
        );
        // A record written before roles existed reads back with every resource main.
        let old: ClusterRecord = record::decode("k", &bytes).unwrap();
        assert!(old.resources[0].role.is_main());

        let hook = Hook {
            events: vec![HookEvent::PreInstall],
            weight: 3,
            delete_policies: vec![HookDeletePolicy::HookSucceeded],
        };
        let with_roles = ClusterRecord::pending(
            "sink",
            "p+c",
            vec![
                ResourceRecord::pending(
                    "w.example.com",
                    "CustomResourceDefinition",
                    "apiextensions.k8s.io/v1",
                    json!({}),
                )
                .with_role(ResourceRole::Crd),
                ResourceRecord::pending("migrate", "Job", "batch/v1", json!({}))
                    .with_role(ResourceRole::Hook(hook.clone())),
            ],
        );
        assert_eq!(with_roles.schema(), 2);
        let bytes = record::encode_with_schema(&with_roles, with_roles.schema());
        let value: Json = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["schema"], 2);
        assert_eq!(value["resources"][0]["role"], json!({"type": "crd"}));
        assert_eq!(
            value["resources"][1]["role"],
            json!({"type": "hook", "events": ["pre-install"], "weight": 3, "deletePolicies": ["hook-succeeded"]})
        );
        let back: ClusterRecord = record::decode("k", &bytes).unwrap();
        assert_eq!(back, with_roles);
        assert_eq!(back.resources[1].role.hook(), Some(&hook));
    }

    #[tokio::test]
    async fn contexts_are_created_atomically_updated_and_deleted() {
        let store = Store::memory();
        let contexts = AppContexts::new(store.clone());
        let id = AppContexts::new_id();
        let resource =
            ResourceRecord::pending("sink-configmap", "ConfigMap", "v1", json!({"kind": "ConfigMap"}));
        assert_eq!(resource.key(), "sink-configmap+ConfigMap");
        let (guard, ops) = AppContexts::create_txn_parts(
            &meta(id),
            &[ClusterRecord::pending("sink", "prov+edge01", vec![resource])],
        );
        assert!(
            store
                .txn(Txn::new().when([guard.clone()]).and_then(ops.clone()))
                .await
                .unwrap()
                .succeeded
        );
        assert!(
            !store
                .txn(Txn::new().when([guard]).and_then(ops))
                .await
                .unwrap()
                .succeeded,
            "ids are never reused"
        );

        assert_eq!(contexts.ids().await.unwrap(), [id]);
        let updated = contexts
            .update_cluster(id, "sink", "prov+edge01", |record| {
                record.resources[0].status = RsyncStatus::Applied
            })
            .await
            .unwrap();
        assert_eq!(updated.resources[0].status, RsyncStatus::Applied);
        assert_eq!(
            contexts.clusters(id).await.unwrap()[0].resources[0].status,
            RsyncStatus::Applied
        );
        contexts
            .update_meta(id, |meta| meta.status = ContextStatus::Instantiated)
            .await
            .unwrap();
        assert_eq!(
            contexts.meta(id).await.unwrap().status,
            ContextStatus::Instantiated
        );
        assert!(matches!(
            contexts.cluster(id, "sink", "prov+edge02").await,
            Err(ContextError::NoSuchCluster { .. })
        ));

        store
            .txn(Txn::new().and_then([AppContexts::delete_op(id)]))
            .await
            .unwrap();
        assert!(matches!(contexts.meta(id).await, Err(ContextError::NotFound(_))));
        assert!(contexts.clusters(id).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn stored_records_name_their_app_and_cluster_and_a_damaged_one_fails_only_when_decoded() {
        let store = Store::memory();
        let contexts = AppContexts::new(store.clone());
        let id = AppContexts::new_id();
        let records = [
            ClusterRecord::pending(
                "sink",
                "prov+edge01",
                vec![ResourceRecord::pending(
                    "cm",
                    "ConfigMap",
                    "v1",
                    json!({"kind": "ConfigMap"}),
                )],
            ),
            ClusterRecord::pending("sink", "prov+edge02", vec![]),
        ];
        let (guard, ops) = AppContexts::create_txn_parts(&meta(id), &records);
        store.txn(Txn::new().when([guard]).and_then(ops)).await.unwrap();
        store
            .put(&cluster_key(id, "sink", "prov+edge02"), "{not json")
            .await
            .unwrap();

        let stored = contexts.stored_clusters(id).await.unwrap();
        let names: Vec<(&str, &str)> = stored
            .iter()
            .map(|record| (record.app.as_str(), record.cluster.as_str()))
            .collect();
        assert_eq!(names, [("sink", "prov+edge01"), ("sink", "prov+edge02")]);
        assert_eq!(stored[0].decode().unwrap(), records[0]);
        assert!(matches!(
            stored[1].decode(),
            Err(ContextError::Record(RecordError::Damaged { .. }))
        ));
    }

    fn many_records(pairs: usize) -> Vec<ClusterRecord> {
        (0..pairs)
            .map(|index| {
                ClusterRecord::pending(
                    &format!("app{}", index % 10),
                    &format!("prov+edge{index:04}"),
                    vec![ResourceRecord::pending(
                        "cm",
                        "ConfigMap",
                        "v1",
                        json!({"kind": "ConfigMap", "data": {"index": index}}),
                    )],
                )
            })
            .collect()
    }

    /// Stages and commits a context of `pairs` records on `store`; returns its id.
    async fn create_paged(store: &Store, pairs: usize) -> ContextId {
        let contexts = AppContexts::new(store.clone());
        let id = AppContexts::new_id();
        let staged = contexts.stage(&meta(id), &many_records(pairs)).await.unwrap();
        assert!(staged.is_paged());
        // Not a context before its meta: no reader finds it.
        assert!(contexts.ids().await.unwrap().is_empty());
        assert!(matches!(contexts.meta(id).await, Err(ContextError::NotFound(_))));
        let (compares, ops) = staged.create_parts(&meta(id));
        assert!(
            ops.len() <= 3,
            "the final transaction holds the meta, not the records: {}",
            ops.len()
        );
        let committed = store.txn(Txn::new().when(compares).and_then(ops)).await.unwrap();
        assert!(committed.succeeded);
        id
    }

    #[tokio::test]
    async fn a_large_context_is_written_in_bounded_pages_and_exists_only_with_its_meta() {
        let records = many_records(300);
        let puts: Vec<(String, Vec<u8>)> = records
            .iter()
            .map(|c| {
                (
                    cluster_key(ContextId::new(7).unwrap(), &c.app, &c.cluster),
                    vec![0; 100],
                )
            })
            .collect();
        let pages = page_txns(ContextId::new(7).unwrap(), puts);
        assert_eq!(pages.len(), 5, "1 marker + 300 records in pages of 64");
        assert!(pages.iter().all(|txn| txn.success.len() <= PAGE_OPS));
        // Bytes bound a page too; one record above the bound is a page of its own.
        let big = vec![
            ("/context/7/app/a/cluster/c1".to_string(), vec![0; PAGE_BYTES / 2]),
            ("/context/7/app/a/cluster/c2".to_string(), vec![0; PAGE_BYTES / 2]),
            ("/context/7/app/a/cluster/c3".to_string(), vec![0; PAGE_BYTES * 2]),
        ];
        let sizes: Vec<usize> = page_txns(ContextId::new(7).unwrap(), big)
            .iter()
            .map(|txn| txn.success.len())
            .collect();
        assert_eq!(sizes, [2, 1, 1]);

        let store = Store::memory();
        let id = create_paged(&store, 300).await;
        let contexts = AppContexts::new(store.clone());
        assert_eq!(contexts.ids().await.unwrap(), [id]);
        assert_eq!(contexts.clusters(id).await.unwrap().len(), 300);
        assert_eq!(contexts.load_all().await.unwrap().0.len(), 301);
        assert!(
            store.range(STAGING_ROOT).await.unwrap().0.is_empty(),
            "the marker goes with the meta"
        );
        // A finished context is never swept.
        assert!(
            contexts
                .sweep_unfinished(Duration::ZERO)
                .await
                .unwrap()
                .is_empty()
        );
        // A small context needs no pages.
        let small = AppContexts::new_id();
        assert!(
            !contexts
                .stage(&meta(small), &many_records(3))
                .await
                .unwrap()
                .is_paged()
        );
    }

    /// A context of 100 (app, cluster) pairs written in pages, and the app and cluster of its first record.
    async fn paged_context_and_its_first_pair() -> (Store, AppContexts, ContextId, String, String) {
        let store = Store::memory();
        let contexts = AppContexts::new(store.clone());
        let id = create_paged(&store, 100).await;
        let records = contexts.clusters(id).await.unwrap();
        let (app, cluster) = (records[0].app.clone(), records[0].cluster.clone());
        (store, contexts, id, app, cluster)
    }

    #[tokio::test]
    async fn an_update_that_changes_nothing_writes_nothing_and_statuses_keep_their_text() {
        let (store, contexts, id, app, cluster) = paged_context_and_its_first_pair().await;
        let key = cluster_key(id, &app, &cluster);
        let revision =
            |store: Store, key: String| async move { store.get(&key).await.unwrap().unwrap().mod_revision };
        let before = revision(store.clone(), key.clone()).await;
        contexts.update_cluster(id, &app, &cluster, |_| {}).await.unwrap();
        assert_eq!(
            revision(store.clone(), key.clone()).await,
            before,
            "no change, no write"
        );
        // A status as the cluster wrote it (spaces and key order included) is stored and read back as that text.
        let text = r#"{"ready": true, "podStatuses": [], "a": {"z": 1, "b": 2}}"#;
        let status = JsonText::from_text(text.to_string()).unwrap();
        let set = |record: &mut ClusterRecord| {
            if record.cluster_status.as_ref() != Some(&status) {
                record.cluster_status = Some(status.clone());
            }
        };
        contexts.update_cluster(id, &app, &cluster, set).await.unwrap();
        let written = revision(store.clone(), key.clone()).await;
        assert!(written > before);
        let record = contexts.cluster(id, &app, &cluster).await.unwrap();
        assert_eq!(record.cluster_status.as_ref().map(JsonText::as_str), Some(text));
        assert_eq!(record.heard_status().unwrap()["a"]["b"], 2);
        // The same status again changes nothing.
        contexts.update_cluster(id, &app, &cluster, set).await.unwrap();
        assert_eq!(revision(store.clone(), key.clone()).await, written);
    }

    #[tokio::test]
    async fn a_heartbeat_is_a_small_write_beside_its_record_and_goes_with_the_context() {
        let (store, contexts, id, app, cluster) = paged_context_and_its_first_pair().await;
        let note = |cluster: &str, at: &str| HeardNote {
            id,
            app: app.clone(),
            cluster: cluster.to_string(),
            at: at.to_string(),
            fence: None,
        };
        let before = store
            .get(&cluster_key(id, &app, &cluster))
            .await
            .unwrap()
            .unwrap();
        contexts
            .note_heard(&note(&cluster, "2026-11-27T10:00:00Z"))
            .await
            .unwrap();
        // The record itself is untouched.
        let after = store
            .get(&cluster_key(id, &app, &cluster))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(after.mod_revision, before.mod_revision);
        let heard = store.get(&heard_key(id, &app, &cluster)).await.unwrap().unwrap();
        let event = emco_store::Event {
            kind: emco_store::EventKind::Put,
            kv: heard,
        };
        let change = ContextChange::from_event(&event).unwrap().unwrap();
        assert!(
            matches!(&change, ContextChange::Heard { id: heard, app: a, cluster: c, at }
                if heard == &id && *a == app && *c == cluster && at == "2026-11-27T10:00:00Z"),
            "{change:?}"
        );
        // After the records, when everything is loaded.
        let (loaded, _) = contexts.load_all().await.unwrap();
        assert!(matches!(loaded.last(), Some(ContextChange::Heard { .. })));
        // No record, no heartbeat: a context that is gone does not come back as a heard key.
        let missing = contexts
            .note_heard(&note("p+elsewhere", "2026-11-27T10:00:01Z"))
            .await;
        assert!(
            matches!(missing, Err(ContextError::NoSuchCluster { .. })),
            "{missing:?}"
        );
        // Several at once: all or none.
        let records = contexts.clusters(id).await.unwrap();
        let two = [
            note(&records[0].cluster, "2026-11-27T10:00:20Z"),
            note(&records[1].cluster, "2026-11-27T10:00:20Z"),
        ];
        assert!(contexts.note_heard_many(&two).await.unwrap());
        let spoiled = [
            note(&records[0].cluster, "2026-11-27T10:00:40Z"),
            note("p+elsewhere", "2026-11-27T10:00:40Z"),
        ];
        assert!(!contexts.note_heard_many(&spoiled).await.unwrap());
        let kept = store
            .get(&heard_key(id, &app, &records[0].cluster))
            .await
            .unwrap()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&kept.value).contains("10:00:20Z"),
            "a refused batch writes nothing"
        );
        store
            .txn(Txn::new().and_then([AppContexts::delete_op(id)]))
            .await
            .unwrap();
        assert!(store.range(&context_prefix(id)).await.unwrap().0.is_empty());
    }

    #[tokio::test]
    async fn a_writer_that_died_between_pages_leaves_records_only_the_sweep_of_old_staging_removes() {
        let store = Store::memory();
        let contexts = AppContexts::new(store.clone());
        let id = AppContexts::new_id();
        let puts: Vec<(String, Vec<u8>)> = many_records(200)
            .iter()
            .map(|c| {
                (
                    cluster_key(id, &c.app, &c.cluster),
                    record::encode_with_schema(c, c.schema()),
                )
            })
            .collect();
        // The writer dies after two of its four transactions.
        for txn in page_txns(id, puts.clone()).into_iter().take(2) {
            assert!(store.txn(txn).await.unwrap().succeeded);
        }
        assert_eq!(store.range("/context/").await.unwrap().0.len(), 127);
        assert!(contexts.ids().await.unwrap().is_empty());
        assert!(
            !contexts
                .load_all()
                .await
                .unwrap()
                .0
                .iter()
                .any(|change| matches!(change, ContextChange::Meta(_))),
            "no meta, no context"
        );
        // A writer may still be paging: a young staging is kept.
        assert!(
            contexts
                .sweep_unfinished(STAGING_TIMEOUT)
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(store.range("/context/").await.unwrap().0.len(), 127);
        // Old enough: swept, records and marker.
        assert_eq!(contexts.sweep_unfinished(Duration::ZERO).await.unwrap(), [id]);
        assert!(store.range("/context/").await.unwrap().0.is_empty());
        assert!(store.range(STAGING_ROOT).await.unwrap().0.is_empty());
        // A writer whose staging was swept cannot go on: its next page (and its meta) fail.
        let mut rest = page_txns(id, puts).into_iter().skip(2);
        assert!(!store.txn(rest.next().unwrap()).await.unwrap().succeeded);
        let staged = StagedContext {
            id,
            paged: true,
            inline: Vec::new(),
        };
        let (compares, ops) = staged.create_parts(&meta(id));
        assert!(
            !store
                .txn(Txn::new().when(compares).and_then(ops))
                .await
                .unwrap()
                .succeeded
        );
        // A failed creation removes its own pages at once.
        let other = AppContexts::new_id();
        contexts.stage(&meta(other), &many_records(100)).await.unwrap();
        contexts.discard_staged(other).await.unwrap();
        assert!(store.range("/context/").await.unwrap().0.is_empty());
        assert!(store.range(STAGING_ROOT).await.unwrap().0.is_empty());
    }

    #[tokio::test]
    async fn on_etcd_with_its_default_txn_limit_a_context_of_300_pairs_is_created() {
        let Some(server) = emco_store::etcd_testing::EtcdServer::start().await.unwrap() else {
            return;
        };
        let store = Store::open_etcd(&[server.endpoint().to_string()], "/paging", None)
            .await
            .unwrap();
        // In one transaction it is refused by etcd (128 ops at most by default)…
        let id = AppContexts::new_id();
        let (guard, ops) = AppContexts::create_txn_parts(&meta(id), &many_records(300));
        let refused = store.txn(Txn::new().when([guard]).and_then(ops)).await;
        assert!(refused.is_err(), "{refused:?}");
        // …in pages it is created whole.
        let id = create_paged(&store, 300).await;
        let contexts = AppContexts::new(store);
        assert_eq!(contexts.ids().await.unwrap(), [id]);
        assert_eq!(contexts.clusters(id).await.unwrap().len(), 300);
    }
}
