//! The catalog of onboarded EMCO resources: typed paths, parent/child integrity, references between resources,
//! the blobs that travel beside some resources, and lifecycle histories.
//!
//! Every read records what it saw in the current [`read_set`] (when the caller tracks one), and every write is a
//! single store transaction guarded by the compares of its own checks and of that read set, so a lost race fails
//! cleanly ([`CatalogError::Conflict`]) instead of corrupting the tree; the caller runs its check-then-write again.

use emco_model::StateInfo;
use emco_store::{Compare, Op, Revision, Store, Txn};
use serde_json::Value as Json;

use crate::read_set;
use crate::record::{self, RecordError};

const RESOURCE_ROOT: &str = "/emco/v1/res/";
const BLOB_ROOT: &str = "/emco/v1/blob/";
const STATE_ROOT: &str = "/emco/v1/state/";

/// Catalog errors; the server maps each to an HTTP status.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The resource does not exist.
    #[error("{kind} not found: {name}")]
    NotFound {
        /// EMCO's type name.
        kind: &'static str,
        /// The resource's path names, joined with `/`.
        name: String,
    },
    /// A resource with that name exists already.
    #[error("{kind} already exists: {name}")]
    AlreadyExists {
        /// EMCO's type name.
        kind: &'static str,
        /// The path names.
        name: String,
    },
    /// The parent resource is missing.
    #[error("cannot create {kind} '{name}': parent {parent_kind} '{parent}' not found")]
    ParentNotFound {
        /// The kind being created.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The parent's kind.
        parent_kind: &'static str,
        /// The parent's path names.
        parent: String,
    },
    /// The resource still has children.
    #[error("cannot delete {kind} '{name}': delete its {children} first")]
    HasChildren {
        /// EMCO's type name.
        kind: &'static str,
        /// The path names.
        name: String,
        /// What children remain, e.g. `App 'firewall'`.
        children: String,
    },
    /// Another resource refers to this one.
    #[error("cannot delete {kind} '{name}': it is referenced by {by}")]
    Referenced {
        /// EMCO's type name.
        kind: &'static str,
        /// The path names.
        name: String,
        /// The referencing resources.
        by: String,
    },
    /// A concurrent change won; retry.
    #[error("{0} changed concurrently; retry")]
    Conflict(String),
    /// A stored record cannot be read.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] emco_store::Error),
}

/// The result type of the catalog.
pub type Result<T, E = CatalogError> = std::result::Result<T, E>;

/// The kinds of catalog resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `/controllers/{c}`
    Controller,
    /// `/projects/{p}`
    Project,
    /// `…/composite-apps/{ca}/{version}`
    CompositeApp,
    /// `…/apps/{app}`
    App,
    /// `…/apps/{app}/dependency/{d}`
    AppDependency,
    /// `…/composite-profiles/{cp}`
    CompositeProfile,
    /// `…/composite-profiles/{cp}/profiles/{ap}`
    AppProfile,
    /// `…/deployment-intent-groups/{dig}`
    DeploymentIntentGroup,
    /// `…/deployment-intent-groups/{dig}/intents/{i}`
    GroupIntent,
    /// `…/generic-placement-intents/{gpi}`
    GenericPlacementIntent,
    /// `…/generic-placement-intents/{gpi}/app-intents/{ai}`
    AppIntent,
    /// `/cluster-providers/{cp}`
    ClusterProvider,
    /// `…/clusters/{c}`
    Cluster,
    /// `…/clusters/{c}/labels/{l}`
    ClusterLabel,
    /// `…/clusters/{c}/kv-pairs/{kv}` (clm: key-value pairs of a cluster, read by action controllers)
    ClusterKv,
    /// `/cluster-providers/{cp}/cluster-sync-objects/{o}` (clm: key-value pairs of a provider — a GitOps
    /// cluster's repository and agent)
    ClusterSyncObject,
    /// `…/clusters/{c}/networks/{n}` (ncm)
    Network,
    /// `…/clusters/{c}/provider-networks/{n}` (ncm)
    ProviderNetwork,
    /// `/projects/{p}/logical-clouds/{lc}` (dcm)
    LogicalCloud,
    /// `…/logical-clouds/{lc}/cluster-references/{r}`
    ClusterReference,
    /// `…/logical-clouds/{lc}/user-permissions/{u}`
    UserPermission,
    /// `…/logical-clouds/{lc}/cluster-quotas/{q}`
    ClusterQuota,
    /// `…/logical-clouds/{lc}/kv-pairs/{kv}`
    LogicalCloudKv,
    /// `/dtc-controllers/{c}`
    DtcController,
    /// `/clm-controllers/{c}` (cluster-event listeners, as EMCO's clm registers them)
    ClmController,
    /// `/status-configs/{name}` (per-kind status configuration, issue #16 §4)
    StatusConfig,
    /// `/projects/{p}/status-collectors/{name}` (a combined-status query, issue #17)
    StatusCollector,
    /// `…/deployment-intent-groups/{dig}/status-collection-intents/{name}` (issue #17)
    StatusCollectionIntent,
    /// `…/deployment-intent-groups/{dig}/generic-k8s-intents/{intent}` (gac)
    GenericK8sIntent,
    /// `…/generic-k8s-intents/{intent}/resources/{resource}` (gac: an object to add or customise)
    GacResource,
    /// `…/resources/{resource}/customizations/{customization}` (gac: which clusters, which patch)
    GacCustomization,
    /// `…/deployment-intent-groups/{dig}/network-controller-intent/{intent}` (ovnaction)
    NetworkControllerIntent,
    /// `…/network-controller-intent/{intent}/workload-intents/{workload}` (ovnaction: a workload of an app)
    WorkloadIntent,
    /// `…/workload-intents/{workload}/interfaces/{interface}` (ovnaction: a network interface of the workload)
    WorkloadInterface,
    /// `…/deployment-intent-groups/{dig}/hpa-intents/{intent}` (hpa: an app whose placement needs hardware)
    HpaIntent,
    /// `…/hpa-intents/{intent}/hpa-resource-consumers/{consumer}` (hpa: a workload of the app)
    HpaConsumer,
    /// `…/hpa-resource-consumers/{consumer}/resource-requirements/{requirement}` (hpa: what it needs of a node)
    HpaRequirement,
    /// `…/deployment-intent-groups/{dig}/traffic-group-intents/{intent}` (dtc)
    TrafficGroupIntent,
    /// `…/traffic-group-intents/{intent}/inbound-intents/{server}` (dtc: an app that serves)
    InboundServerIntent,
    /// `…/inbound-intents/{server}/clients/{clients}` (dtc: who may reach it)
    InboundClientsIntent,
    /// `…/clients/{clients}/access-points/{access}` (dtc: what they may reach)
    InboundClientsAccessIntent,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 41] = [
        Kind::Controller,
        Kind::Project,
        Kind::CompositeApp,
        Kind::App,
        Kind::AppDependency,
        Kind::CompositeProfile,
        Kind::AppProfile,
        Kind::DeploymentIntentGroup,
        Kind::GroupIntent,
        Kind::GenericPlacementIntent,
        Kind::AppIntent,
        Kind::ClusterProvider,
        Kind::Cluster,
        Kind::ClusterLabel,
        Kind::ClusterKv,
        Kind::ClusterSyncObject,
        Kind::Network,
        Kind::ProviderNetwork,
        Kind::LogicalCloud,
        Kind::ClusterReference,
        Kind::UserPermission,
        Kind::ClusterQuota,
        Kind::LogicalCloudKv,
        Kind::DtcController,
        Kind::ClmController,
        Kind::StatusConfig,
        Kind::StatusCollector,
        Kind::StatusCollectionIntent,
        Kind::GenericK8sIntent,
        Kind::GacResource,
        Kind::GacCustomization,
        Kind::NetworkControllerIntent,
        Kind::WorkloadIntent,
        Kind::WorkloadInterface,
        Kind::HpaIntent,
        Kind::HpaConsumer,
        Kind::HpaRequirement,
        Kind::TrafficGroupIntent,
        Kind::InboundServerIntent,
        Kind::InboundClientsIntent,
        Kind::InboundClientsAccessIntent,
    ];

    fn segment(self) -> &'static str {
        match self {
            Self::Controller => "controller",
            Self::Project => "project",
            Self::CompositeApp => "compositeapp",
            Self::App => "app",
            Self::AppDependency => "appdependency",
            Self::CompositeProfile => "compositeprofile",
            Self::AppProfile => "appprofile",
            Self::DeploymentIntentGroup => "dig",
            Self::GroupIntent => "groupintent",
            Self::GenericPlacementIntent => "gpi",
            Self::AppIntent => "appintent",
            Self::ClusterProvider => "clusterprovider",
            Self::Cluster => "cluster",
            Self::ClusterLabel => "clusterlabel",
            Self::ClusterKv => "clusterkv",
            Self::ClusterSyncObject => "clustersyncobject",
            Self::Network => "network",
            Self::ProviderNetwork => "providernetwork",
            Self::LogicalCloud => "logicalcloud",
            Self::ClusterReference => "clusterreference",
            Self::UserPermission => "userpermission",
            Self::ClusterQuota => "clusterquota",
            Self::LogicalCloudKv => "logicalcloudkv",
            Self::DtcController => "dtccontroller",
            Self::ClmController => "clmcontroller",
            Self::StatusConfig => "statusconfig",
            Self::StatusCollector => "statuscollector",
            Self::StatusCollectionIntent => "statuscollectionintent",
            Self::GenericK8sIntent => "generick8sintent",
            Self::GacResource => "gacresource",
            Self::GacCustomization => "gaccustomization",
            Self::NetworkControllerIntent => "netcontrolintent",
            Self::WorkloadIntent => "workloadintent",
            Self::WorkloadInterface => "workloadifintent",
            Self::HpaIntent => "hpaintent",
            Self::HpaConsumer => "hpaconsumer",
            Self::HpaRequirement => "hparesource",
            Self::TrafficGroupIntent => "trafficgroupintent",
            Self::InboundServerIntent => "inboundserverintent",
            Self::InboundClientsIntent => "inboundclientsintent",
            Self::InboundClientsAccessIntent => "inboundclientsaccessintent",
        }
    }

    /// EMCO's type name, used in messages (`Project not found: p`).
    #[must_use]
    pub fn type_name(self) -> &'static str {
        match self {
            Self::Controller => "Controller",
            Self::Project => "Project",
            Self::CompositeApp => "CompositeApp",
            Self::App => "App",
            Self::AppDependency => "AppDependency",
            Self::CompositeProfile => "CompositeProfile",
            Self::AppProfile => "AppProfile",
            Self::DeploymentIntentGroup => "DeploymentIntentGroup",
            Self::GroupIntent => "DeploymentIntent",
            Self::GenericPlacementIntent => "GenericPlacementIntent",
            Self::AppIntent => "AppIntent",
            Self::ClusterProvider => "ClusterProvider",
            Self::Cluster => "Cluster",
            Self::ClusterLabel => "ClusterLabel",
            Self::ClusterKv => "ClusterKvPairs",
            Self::ClusterSyncObject => "ClusterSyncObject",
            Self::Network => "Network",
            Self::ProviderNetwork => "ProviderNetwork",
            Self::LogicalCloud => "LogicalCloud",
            Self::ClusterReference => "ClusterReference",
            Self::UserPermission => "UserPermission",
            Self::ClusterQuota => "ClusterQuota",
            Self::LogicalCloudKv => "LogicalCloudKeyValue",
            Self::DtcController => "DtcController",
            Self::ClmController => "ClmController",
            Self::StatusConfig => "StatusConfig",
            Self::StatusCollector => "StatusCollector",
            Self::StatusCollectionIntent => "StatusCollectionIntent",
            Self::GenericK8sIntent => "GenericK8sIntent",
            Self::GacResource => "GacResource",
            Self::GacCustomization => "GacCustomization",
            Self::NetworkControllerIntent => "NetControlIntent",
            Self::WorkloadIntent => "WorkloadIntent",
            Self::WorkloadInterface => "WorkloadIfIntent",
            Self::HpaIntent => "HpaIntent",
            Self::HpaConsumer => "HpaConsumer",
            Self::HpaRequirement => "HpaResource",
            Self::TrafficGroupIntent => "TrafficGroupIntent",
            Self::InboundServerIntent => "InboundServerIntent",
            Self::InboundClientsIntent => "InboundClientsIntent",
            Self::InboundClientsAccessIntent => "InboundClientsAccessIntent",
        }
    }

    /// The kind this one lives under.
    #[must_use]
    pub fn parent(self) -> Option<Kind> {
        match self {
            Self::Controller
            | Self::Project
            | Self::ClusterProvider
            | Self::DtcController
            | Self::ClmController
            | Self::StatusConfig => None,
            Self::CompositeApp => Some(Self::Project),
            Self::App | Self::CompositeProfile | Self::DeploymentIntentGroup => Some(Self::CompositeApp),
            Self::AppDependency => Some(Self::App),
            Self::AppProfile => Some(Self::CompositeProfile),
            Self::GroupIntent | Self::GenericPlacementIntent => Some(Self::DeploymentIntentGroup),
            Self::AppIntent => Some(Self::GenericPlacementIntent),
            Self::Cluster | Self::ClusterSyncObject => Some(Self::ClusterProvider),
            Self::ClusterLabel | Self::ClusterKv | Self::Network | Self::ProviderNetwork => {
                Some(Self::Cluster)
            }
            Self::LogicalCloud | Self::StatusCollector => Some(Self::Project),
            Self::StatusCollectionIntent
            | Self::GenericK8sIntent
            | Self::NetworkControllerIntent
            | Self::HpaIntent
            | Self::TrafficGroupIntent => Some(Self::DeploymentIntentGroup),
            Self::WorkloadIntent => Some(Self::NetworkControllerIntent),
            Self::WorkloadInterface => Some(Self::WorkloadIntent),
            Self::HpaConsumer => Some(Self::HpaIntent),
            Self::HpaRequirement => Some(Self::HpaConsumer),
            Self::InboundServerIntent => Some(Self::TrafficGroupIntent),
            Self::InboundClientsIntent => Some(Self::InboundServerIntent),
            Self::InboundClientsAccessIntent => Some(Self::InboundClientsIntent),
            Self::GacResource => Some(Self::GenericK8sIntent),
            Self::GacCustomization => Some(Self::GacResource),
            Self::ClusterReference | Self::UserPermission | Self::ClusterQuota | Self::LogicalCloudKv => {
                Some(Self::LogicalCloud)
            }
        }
    }

    /// How many path names identify a resource of this kind within its parent (two for composite apps:
    /// name and version).
    #[must_use]
    pub fn own_names(self) -> usize {
        if self == Self::CompositeApp { 2 } else { 1 }
    }

    /// How many path names identify a resource of this kind from the root.
    #[must_use]
    pub fn depth(self) -> usize {
        self.own_names() + self.parent().map_or(0, Kind::depth)
    }

    /// The kinds that live directly under this one.
    pub fn children(self) -> impl Iterator<Item = Kind> {
        Self::ALL
            .into_iter()
            .filter(move |kind| kind.parent() == Some(self))
    }
}

/// A resource's identity: its kind and every path name from the root (e.g. App: project, composite app, version,
/// app).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourcePath {
    kind: Kind,
    names: Vec<String>,
}

impl ResourcePath {
    /// A path; `names` must hold exactly `kind.depth()` names (callers build them from validated URLs).
    #[must_use]
    pub fn new(kind: Kind, names: Vec<String>) -> Self {
        debug_assert_eq!(names.len(), kind.depth(), "{kind:?} {names:?}");
        Self { kind, names }
    }

    /// The kind.
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Every path name.
    #[must_use]
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The resource's own name (the last path name).
    #[must_use]
    pub fn name(&self) -> &str {
        self.names.last().map_or("", String::as_str)
    }

    /// The path names joined with `/`, for messages.
    #[must_use]
    pub fn display_name(&self) -> String {
        self.names.join("/")
    }

    /// The parent's path.
    #[must_use]
    pub fn parent(&self) -> Option<ResourcePath> {
        let parent = self.kind.parent()?;
        Some(Self::new(parent, self.names[..parent.depth()].to_vec()))
    }

    /// A child of this resource.
    #[must_use]
    pub fn child(&self, kind: Kind, own: &[&str]) -> ResourcePath {
        let mut names = self.names.clone();
        names.extend(own.iter().map(|name| (*name).to_string()));
        Self::new(kind, names)
    }

    fn key_under(&self, root: &str) -> String {
        format!("{root}{}/{}", self.kind.segment(), self.names.join("/"))
    }

    fn key(&self) -> String {
        self.key_under(RESOURCE_ROOT)
    }

    fn blob_key(&self) -> String {
        self.key_under(BLOB_ROOT)
    }

    fn state_key(&self) -> String {
        self.key_under(STATE_ROOT)
    }
}

fn children_prefix(kind: Kind, parent_names: &[String]) -> String {
    if parent_names.is_empty() {
        format!("{RESOURCE_ROOT}{}/", kind.segment())
    } else {
        format!("{RESOURCE_ROOT}{}/{}/", kind.segment(), parent_names.join("/"))
    }
}

/// One stored resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its path.
    pub path: ResourcePath,
    /// Its body, as the API returns it.
    pub body: Json,
    /// When it was created: lists are in creation order, as EMCO's.
    pub create_revision: Revision,
    /// When it was last changed (for compare-and-swap).
    pub mod_revision: Revision,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ResourceRecord {
    body: Json,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct StateRecord {
    state: StateInfo,
}

/// The prefix of every lifecycle history key: a store watch under it sees every lifecycle state change.
pub const STATE_PREFIX: &str = STATE_ROOT;

/// The resource and lifecycle history a key under [`STATE_PREFIX`] holds (as a store watch reports it); `None`
/// for a key that is not a lifecycle history of a known kind, an error for a history that cannot be read.
pub fn decode_state(key: &str, value: &[u8]) -> Option<Result<(ResourcePath, StateInfo)>> {
    let rest = key.strip_prefix(STATE_ROOT)?;
    let (segment, names) = rest.split_once('/')?;
    let kind = Kind::ALL.into_iter().find(|kind| kind.segment() == segment)?;
    let names: Vec<String> = names.split('/').map(str::to_string).collect();
    if names.len() != kind.depth() || names.iter().any(String::is_empty) {
        return None;
    }
    let path = ResourcePath::new(kind, names);
    Some(
        record::decode::<StateRecord>(key, value)
            .map(|record| (path, record.state))
            .map_err(CatalogError::from),
    )
}

/// The catalog over a store.
#[derive(Debug, Clone)]
pub struct Catalog {
    store: Store,
}

impl Catalog {
    /// A catalog over `store`.
    #[must_use]
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The store (for transactions that span the catalog and AppContexts).
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Reads a key, recording what it saw in the current read set.
    async fn get_tracked(&self, key: &str) -> Result<Option<emco_store::KeyValue>> {
        let read_at = self.store.revision();
        let kv = self.store.get(key).await?;
        read_set::record_key(key, kv.as_ref().map_or(0, |kv| kv.mod_revision), read_at);
        Ok(kv)
    }

    /// Reads a resource, or `None`.
    pub async fn find(&self, path: &ResourcePath) -> Result<Option<Entry>> {
        let key = path.key();
        let Some(kv) = self.get_tracked(&key).await? else {
            return Ok(None);
        };
        let record: ResourceRecord = record::decode(&key, &kv.value)?;
        Ok(Some(Entry {
            path: path.clone(),
            body: record.body,
            create_revision: kv.create_revision,
            mod_revision: kv.mod_revision,
        }))
    }

    /// Reads a resource.
    pub async fn get(&self, path: &ResourcePath) -> Result<Entry> {
        self.find(path).await?.ok_or_else(|| not_found(path))
    }

    /// Reads a resource into its model type.
    pub async fn get_as<T: serde::de::DeserializeOwned>(&self, path: &ResourcePath) -> Result<T> {
        let entry = self.get(path).await?;
        serde_json::from_value(entry.body).map_err(|err| {
            CatalogError::Record(RecordError::Damaged {
                key: path.key(),
                message: err.to_string(),
            })
        })
    }

    /// Whether a resource exists.
    pub async fn exists(&self, path: &ResourcePath) -> Result<bool> {
        Ok(self.get_tracked(&path.key()).await?.is_some())
    }

    /// Fails with [`CatalogError::NotFound`] when `path` or any ancestor is missing, naming the first missing one.
    pub async fn require(&self, path: &ResourcePath) -> Result<()> {
        let mut chain = vec![path.clone()];
        while let Some(parent) = chain.last().and_then(ResourcePath::parent) {
            chain.push(parent);
        }
        for ancestor in chain.iter().rev() {
            if !self.exists(ancestor).await? {
                return Err(not_found(ancestor));
            }
        }
        Ok(())
    }

    /// Lists the resources of `kind` under the parent named by `parent_names`, in creation order.
    pub async fn list(&self, kind: Kind, parent_names: &[String]) -> Result<Vec<Entry>> {
        let prefix = children_prefix(kind, parent_names);
        let (items, revision) = self.store.range(&prefix).await?;
        read_set::record_prefix(&prefix, revision);
        let mut entries = Vec::with_capacity(items.len());
        for kv in items {
            let own: Vec<String> = kv.key[prefix.len()..].split('/').map(str::to_string).collect();
            if own.len() != kind.own_names() {
                continue;
            }
            let mut names = parent_names.to_vec();
            names.extend(own);
            let record: ResourceRecord = record::decode(&kv.key, &kv.value)?;
            entries.push(Entry {
                path: ResourcePath::new(kind, names),
                body: record.body,
                create_revision: kv.create_revision,
                mod_revision: kv.mod_revision,
            });
        }
        entries.sort_by_key(|entry| entry.create_revision);
        Ok(entries)
    }

    /// Lists and decodes into the model type.
    pub async fn list_as<T: serde::de::DeserializeOwned>(
        &self,
        kind: Kind,
        parent_names: &[String],
    ) -> Result<Vec<(ResourcePath, T)>> {
        let mut typed = Vec::new();
        for entry in self.list(kind, parent_names).await? {
            let value = serde_json::from_value(entry.body).map_err(|err| {
                CatalogError::Record(RecordError::Damaged {
                    key: entry.path.key(),
                    message: err.to_string(),
                })
            })?;
            typed.push((entry.path, value));
        }
        Ok(typed)
    }

    /// The ops that store `body` (and `blob`) at `path`.
    #[must_use]
    pub fn put_ops(path: &ResourcePath, body: &Json, blob: Option<&[u8]>) -> Vec<Op> {
        let mut ops = vec![Op::put(
            path.key(),
            record::encode(&ResourceRecord { body: body.clone() }),
        )];
        if let Some(blob) = blob {
            ops.push(Op::put(path.blob_key(), blob.to_vec()));
        }
        ops
    }

    /// The op that stores (replaces) the blob of the resource at `path` (e.g. a logical cloud's user key).
    #[must_use]
    pub fn blob_op(path: &ResourcePath, blob: &[u8]) -> Op {
        Op::put(path.blob_key(), blob.to_vec())
    }

    /// The op that stores a lifecycle history.
    #[must_use]
    pub fn state_op(path: &ResourcePath, state: &StateInfo) -> Op {
        Op::put(
            path.state_key(),
            record::encode(&StateRecord { state: state.clone() }),
        )
    }

    /// The compare that holds while a resource exists unchanged since `revision`.
    #[must_use]
    pub fn unchanged_since(path: &ResourcePath, revision: Revision) -> Compare {
        Compare::mod_revision_is(path.key(), revision)
    }

    /// Creates a resource; its parent must exist and the name must be free. `extra` ops (e.g. an initial
    /// lifecycle history) commit in the same transaction.
    pub async fn create(
        &self,
        path: &ResourcePath,
        body: &Json,
        blob: Option<&[u8]>,
        extra: Vec<Op>,
    ) -> Result<()> {
        let mut compares = vec![Compare::absent(path.key())];
        if let Some(parent) = path.parent() {
            if !self.exists(&parent).await? {
                return Err(CatalogError::ParentNotFound {
                    kind: path.kind.type_name(),
                    name: path.name().to_string(),
                    parent_kind: parent.kind.type_name(),
                    parent: parent.display_name(),
                });
            }
            compares.push(Compare::present(parent.key()));
        }
        if self.exists(path).await? {
            return Err(CatalogError::AlreadyExists {
                kind: path.kind.type_name(),
                name: path.display_name(),
            });
        }
        let mut ops = Self::put_ops(path, body, blob);
        ops.extend(extra);
        let txn = read_set::guard(Txn::new().when(compares).and_then(ops));
        let response = self.store.txn(txn).await?;
        if !response.succeeded {
            return Err(CatalogError::Conflict(path.display_name()));
        }
        Ok(())
    }

    /// Creates or replaces a resource; returns whether it was created. The parent must exist.
    pub async fn upsert(
        &self,
        path: &ResourcePath,
        body: &Json,
        blob: Option<&[u8]>,
        extra: Vec<Op>,
    ) -> Result<bool> {
        match self.find(path).await? {
            None => self.create(path, body, blob, extra).await.map(|()| true),
            Some(existing) => {
                let mut ops = Self::put_ops(path, body, blob);
                ops.extend(extra);
                let txn = Txn::new().when([Self::unchanged_since(path, existing.mod_revision)]);
                let response = self.store.txn(read_set::guard(txn.and_then(ops))).await?;
                if !response.succeeded {
                    return Err(CatalogError::Conflict(path.display_name()));
                }
                Ok(false)
            }
        }
    }

    /// Reads the blob stored beside a resource.
    pub async fn blob(&self, path: &ResourcePath) -> Result<Option<Vec<u8>>> {
        Ok(self.get_tracked(&path.blob_key()).await?.map(|kv| kv.value))
    }

    /// Reads a lifecycle history and the revision it was written at (for compare-and-swap).
    pub async fn state(&self, path: &ResourcePath) -> Result<(StateInfo, Revision)> {
        let key = path.state_key();
        let Some(kv) = self.get_tracked(&key).await? else {
            return Ok((StateInfo::default(), 0));
        };
        let record: StateRecord = record::decode(&key, &kv.value)?;
        Ok((record.state, kv.mod_revision))
    }

    /// Every lifecycle history of resources of `kind` (DIGs are the kind that has them), in key order: one range
    /// over the histories alone, which name each instantiation's context without reading any AppContext.
    pub async fn histories(&self, kind: Kind) -> Result<Vec<(ResourcePath, StateInfo)>> {
        let prefix = format!("{STATE_ROOT}{}/", kind.segment());
        let (items, revision) = self.store.range(&prefix).await?;
        read_set::record_prefix(&prefix, revision);
        let mut histories = Vec::with_capacity(items.len());
        for kv in items {
            let names: Vec<String> = kv.key[prefix.len()..].split('/').map(str::to_string).collect();
            if names.len() != kind.depth() {
                continue;
            }
            let record: StateRecord = record::decode(&kv.key, &kv.value)?;
            histories.push((ResourcePath::new(kind, names), record.state));
        }
        Ok(histories)
    }

    /// The compare that holds while a lifecycle history is unchanged since `revision`.
    #[must_use]
    pub fn state_unchanged_since(path: &ResourcePath, revision: Revision) -> Compare {
        Compare::mod_revision_is(path.state_key(), revision)
    }

    /// Names the children that keep `path` from being deleted (at most one per child kind).
    pub async fn remaining_children(&self, path: &ResourcePath) -> Result<Vec<String>> {
        let mut found = Vec::new();
        for kind in path.kind.children() {
            let prefix = children_prefix(kind, path.names());
            let (items, revision) = self.store.range_limit(&prefix, 1).await?;
            read_set::record_prefix(&prefix, revision);
            if let Some(kv) = items.first() {
                let name = kv.key.rsplit('/').next().unwrap_or_default();
                found.push(format!("{} '{name}'", kind.type_name()));
            }
        }
        Ok(found)
    }

    /// Names the resources that refer to `path` by name: app profiles, app intents, dependencies and DIG
    /// overrides referring to an app; DIGs referring to a composite profile; logical clouds' cluster references
    /// referring to a cluster. (A DIG's group intent may name a
    /// placement intent that does not exist yet, as in EMCO, so it does not hold it either.)
    pub async fn referrers(&self, path: &ResourcePath) -> Result<Vec<String>> {
        let names = path.names();
        let name = path.name();
        let mut found = Vec::new();
        let mut scan = |entries: Vec<Entry>, kind: Kind, refers: &dyn Fn(&Json) -> bool| {
            for entry in entries.into_iter().filter(|entry| refers(&entry.body)) {
                found.push(format!("{} '{}'", kind.type_name(), entry.path.name()));
            }
        };
        match path.kind {
            Kind::App => {
                let composite_app = &names[..3];
                let spec_app = |body: &Json| body["spec"]["app"].as_str() == Some(name);
                for profile in self.list(Kind::CompositeProfile, composite_app).await? {
                    scan(
                        self.list(Kind::AppProfile, profile.path.names()).await?,
                        Kind::AppProfile,
                        &spec_app,
                    );
                }
                for dig in self.list(Kind::DeploymentIntentGroup, composite_app).await? {
                    let overrides = |body: &Json| {
                        body["spec"]["overrideValues"]
                            .as_array()
                            .is_some_and(|items| items.iter().any(|item| item["app"].as_str() == Some(name)))
                    };
                    scan(vec![dig.clone()], Kind::DeploymentIntentGroup, &overrides);
                    for gpi in self.list(Kind::GenericPlacementIntent, dig.path.names()).await? {
                        scan(
                            self.list(Kind::AppIntent, gpi.path.names()).await?,
                            Kind::AppIntent,
                            &spec_app,
                        );
                    }
                }
                for app in self.list(Kind::App, composite_app).await? {
                    if app.path.name() != name {
                        scan(
                            self.list(Kind::AppDependency, app.path.names()).await?,
                            Kind::AppDependency,
                            &spec_app,
                        );
                    }
                }
            }
            Kind::Cluster => {
                // Logical clouds' cluster references name a cluster by provider and name.
                let provider = &names[0];
                let refers = |body: &Json| {
                    body["spec"]["clusterProvider"].as_str() == Some(provider.as_str())
                        && body["spec"]["cluster"].as_str() == Some(name)
                };
                for project in self.list(Kind::Project, &[]).await? {
                    for logical_cloud in self.list(Kind::LogicalCloud, project.path.names()).await? {
                        let references = self
                            .list(Kind::ClusterReference, logical_cloud.path.names())
                            .await?;
                        for reference in references.into_iter().filter(|entry| refers(&entry.body)) {
                            found.push(format!(
                                "{} '{}' of LogicalCloud '{}'",
                                Kind::ClusterReference.type_name(),
                                reference.path.name(),
                                logical_cloud.path.display_name()
                            ));
                        }
                    }
                }
            }
            Kind::CompositeProfile => {
                let uses = |body: &Json| body["spec"]["compositeProfile"].as_str() == Some(name);
                scan(
                    self.list(Kind::DeploymentIntentGroup, &names[..3]).await?,
                    Kind::DeploymentIntentGroup,
                    &uses,
                );
            }
            Kind::StatusCollector => {
                // Status collection intents of the project's DIGs name collectors.
                let uses = |body: &Json| {
                    body["spec"]["statusCollectors"]
                        .as_array()
                        .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
                };
                for composite_app in self.list(Kind::CompositeApp, &names[..1]).await? {
                    for dig in self
                        .list(Kind::DeploymentIntentGroup, composite_app.path.names())
                        .await?
                    {
                        let intents = self.list(Kind::StatusCollectionIntent, dig.path.names()).await?;
                        for intent in intents.into_iter().filter(|entry| uses(&entry.body)) {
                            found.push(format!(
                                "{} '{}' of DeploymentIntentGroup '{}'",
                                Kind::StatusCollectionIntent.type_name(),
                                intent.path.name(),
                                dig.path.display_name()
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(found)
    }

    /// Deletes a resource with its blob and lifecycle history, refusing while it has children or referrers.
    /// `extra` ops (e.g. deleting the AppContexts of a DIG) commit in the same transaction.
    pub async fn delete(&self, path: &ResourcePath, extra: Vec<Op>) -> Result<()> {
        let revision = self
            .get_tracked(&path.key())
            .await?
            .map(|kv| kv.mod_revision)
            .ok_or_else(|| not_found(path))?;
        let children = self.remaining_children(path).await?;
        if !children.is_empty() {
            return Err(CatalogError::HasChildren {
                kind: path.kind.type_name(),
                name: path.display_name(),
                children: children.join(", "),
            });
        }
        let referrers = self.referrers(path).await?;
        if !referrers.is_empty() {
            return Err(CatalogError::Referenced {
                kind: path.kind.type_name(),
                name: path.display_name(),
                by: referrers.join(", "),
            });
        }
        let mut ops = vec![
            Op::delete(path.key()),
            Op::delete(path.blob_key()),
            Op::delete(path.state_key()),
        ];
        ops.extend(extra);
        let txn = Txn::new()
            .when([Self::unchanged_since(path, revision)])
            .and_then(ops);
        if !self.store.txn(read_set::guard(txn)).await?.succeeded {
            return Err(CatalogError::Conflict(path.display_name()));
        }
        Ok(())
    }
}

fn not_found(path: &ResourcePath) -> CatalogError {
    CatalogError::NotFound {
        kind: path.kind.type_name(),
        name: path.display_name(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn path(kind: Kind, names: &[&str]) -> ResourcePath {
        ResourcePath::new(kind, names.iter().map(|n| (*n).to_string()).collect())
    }

    #[test]
    fn depths_follow_the_url_tree() {
        assert_eq!(Kind::Project.depth(), 1);
        assert_eq!(Kind::CompositeApp.depth(), 3);
        assert_eq!(Kind::AppProfile.depth(), 5);
        assert_eq!(Kind::AppIntent.depth(), 6);
        assert_eq!(Kind::ClusterLabel.depth(), 3);
        let children: Vec<_> = Kind::CompositeApp.children().collect();
        assert_eq!(
            children,
            [Kind::App, Kind::CompositeProfile, Kind::DeploymentIntentGroup]
        );
    }

    #[tokio::test]
    async fn parents_children_and_references_guard_the_tree() {
        let catalog = Catalog::new(Store::memory());
        let project = path(Kind::Project, &["p"]);
        let ca = path(Kind::CompositeApp, &["p", "ca", "v1"]);
        assert!(matches!(
            catalog.create(&ca, &json!({}), None, vec![]).await,
            Err(CatalogError::ParentNotFound {
                parent_kind: "Project",
                ..
            })
        ));
        catalog
            .create(&project, &json!({"metadata": {"name": "p"}}), None, vec![])
            .await
            .unwrap();
        assert!(matches!(
            catalog.create(&project, &json!({}), None, vec![]).await,
            Err(CatalogError::AlreadyExists { .. })
        ));
        catalog.create(&ca, &json!({}), None, vec![]).await.unwrap();
        let app = ca.child(Kind::App, &["fw"]);
        catalog
            .create(&app, &json!({"metadata": {"name": "fw"}}), Some(b"chart"), vec![])
            .await
            .unwrap();
        assert_eq!(
            catalog.blob(&app).await.unwrap().as_deref(),
            Some(b"chart".as_slice())
        );

        let err = catalog.delete(&project, vec![]).await.unwrap_err();
        assert!(
            err.to_string().contains("CompositeApp 'v1'") || err.to_string().contains("CompositeApp"),
            "{err}"
        );

        let cp = ca.child(Kind::CompositeProfile, &["cp"]);
        catalog.create(&cp, &json!({}), None, vec![]).await.unwrap();
        let ap = cp.child(Kind::AppProfile, &["ap"]);
        catalog
            .create(&ap, &json!({"spec": {"app": "fw"}}), None, vec![])
            .await
            .unwrap();
        let err = catalog.delete(&app, vec![]).await.unwrap_err();
        assert!(
            matches!(&err, CatalogError::Referenced { by, .. } if by == "AppProfile 'ap'"),
            "{err}"
        );
        catalog.delete(&ap, vec![]).await.unwrap();
        catalog.delete(&app, vec![]).await.unwrap();
        assert_eq!(
            catalog.blob(&app).await.unwrap(),
            None,
            "the blob goes with its resource"
        );
    }

    #[tokio::test]
    async fn lists_are_in_creation_order_and_only_direct_children() {
        let catalog = Catalog::new(Store::memory());
        let project = path(Kind::Project, &["p"]);
        catalog.create(&project, &json!({}), None, vec![]).await.unwrap();
        for (name, version) in [("zeta", "v1"), ("alpha", "v2"), ("alpha", "v1")] {
            catalog
                .create(
                    &project.child(Kind::CompositeApp, &[name, version]),
                    &json!({}),
                    None,
                    vec![],
                )
                .await
                .unwrap();
        }
        let listed = catalog.list(Kind::CompositeApp, project.names()).await.unwrap();
        let names: Vec<_> = listed.iter().map(|e| e.path.display_name()).collect();
        assert_eq!(names, ["p/zeta/v1", "p/alpha/v2", "p/alpha/v1"]);
        assert!(catalog.list(Kind::Project, &[]).await.unwrap().len() == 1);
    }

    #[tokio::test]
    async fn histories_list_every_lifecycle_of_a_kind_and_nothing_else() {
        let catalog = Catalog::new(Store::memory());
        let first = path(Kind::DeploymentIntentGroup, &["p", "ca", "v1", "d1"]);
        let second = path(Kind::DeploymentIntentGroup, &["p", "ca", "v2", "d2"]);
        let mut state = StateInfo::created("t0".into());
        let id = emco_model::ContextId::new(7).expect("a valid id");
        state.push(emco_model::StateValue::Instantiated, Some(id), "t1".into());
        let txn = Txn::new().and_then([
            Catalog::state_op(&first, &state),
            Catalog::state_op(&second, &StateInfo::created("t2".into())),
            Catalog::state_op(&path(Kind::Project, &["p"]), &StateInfo::created("t3".into())),
        ]);
        catalog.store().txn(txn).await.unwrap();
        let histories = catalog.histories(Kind::DeploymentIntentGroup).await.unwrap();
        let found: Vec<_> = histories
            .iter()
            .map(|(path, state)| (path.display_name(), state.last_context()))
            .collect();
        assert_eq!(
            found,
            [
                ("p/ca/v1/d1".to_string(), Some(id)),
                ("p/ca/v2/d2".to_string(), None)
            ]
        );
    }
}
