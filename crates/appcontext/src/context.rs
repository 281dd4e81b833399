//! AppContexts: the staged, rendered resources of one instantiation, organised app → cluster → resource, with the
//! context's top-level status, each resource's rsync status and each cluster's connectivity.
//!
//! One record holds the meta (identity, app order, dependencies, status, stop request); one record per
//! (app, cluster) holds that pair's resources and observed state, so status writes are batched per (app, cluster).
//! Every update is a compare-and-swap on the record's revision, retried on conflict.

use emco_model::{AppDependencySpec, Connectivity, ContextId, ContextStatus, Gvk, Hook, RsyncStatus};
use emco_store::{Compare, Op, Store, Txn};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::record::{self, RecordError};
use crate::replicas::Fence;

const CONTEXT_ROOT: &str = "/context/";

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
    /// Apps in the composite app's order, with their dependencies and clusters.
    pub apps: Vec<AppMeta>,
    /// The context's top-level status.
    pub status: ContextStatus,
    /// Set by `/stop`: the running operation must end.
    #[serde(default)]
    pub stop_requested: bool,
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
            apps,
            status: ContextStatus::Instantiating,
            stop_requested: false,
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
    /// The last ResourceBundleState status heard from the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_status: Option<Json>,
    /// When it was heard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heard_at: Option<String>,
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
        }
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
    /// The rendered object.
    pub manifest: Json,
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
    pub fn pending(name: &str, kind: &str, api_version: &str, manifest: Json) -> Self {
        Self {
            name: name.to_string(),
            kind: kind.to_string(),
            api_version: api_version.to_string(),
            manifest,
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
    Meta(ContextMeta),
    /// An (app, cluster) record was written.
    Cluster(ContextId, ClusterRecord),
    /// A context's meta was deleted (the whole context goes with it).
    MetaDeleted(ContextId),
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

/// What a context key names.
enum ContextKey<'a> {
    Meta(ContextId),
    Cluster(ContextId, &'a str, &'a str),
}

fn parse_context_key(key: &str) -> Option<ContextKey<'_>> {
    let rest = key.strip_prefix(CONTEXT_ROOT)?;
    let (id, rest) = rest.split_once('/')?;
    let id: ContextId = id.parse().ok()?;
    if rest == "meta" {
        return Some(ContextKey::Meta(id));
    }
    let rest = rest.strip_prefix("app/")?;
    let (app, cluster) = rest.split_once("/cluster/")?;
    Some(ContextKey::Cluster(id, app, cluster))
}

impl ContextChange {
    /// Decodes a store event; `None` for keys outside the AppContexts.
    pub fn from_event(event: &emco_store::Event) -> Option<Result<Self, RecordError>> {
        let key = parse_context_key(&event.kv.key)?;
        Some(match (event.kind, key) {
            (emco_store::EventKind::Put, ContextKey::Meta(_)) => {
                record::decode(&event.kv.key, &event.kv.value).map(Self::Meta)
            }
            (emco_store::EventKind::Put, ContextKey::Cluster(id, _, _)) => {
                record::decode(&event.kv.key, &event.kv.value).map(|record| Self::Cluster(id, record))
            }
            (emco_store::EventKind::Delete, ContextKey::Meta(id)) => Ok(Self::MetaDeleted(id)),
            (emco_store::EventKind::Delete, ContextKey::Cluster(id, app, cluster)) => {
                Ok(Self::ClusterDeleted {
                    id,
                    app: app.to_string(),
                    cluster: cluster.to_string(),
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

fn context_prefix(id: ContextId) -> String {
    format!("{CONTEXT_ROOT}{id}/")
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

    /// Reads a context's meta.
    pub async fn meta(&self, id: ContextId) -> Result<ContextMeta> {
        let key = meta_key(id);
        let kv = self.store.get(&key).await?.ok_or(ContextError::NotFound(id))?;
        Ok(record::decode(&key, &kv.value)?)
    }

    /// Reads a context's meta with the revision it was written at.
    pub async fn meta_with_revision(&self, id: ContextId) -> Result<(ContextMeta, emco_store::Revision)> {
        let key = meta_key(id);
        let kv = self.store.get(&key).await?.ok_or(ContextError::NotFound(id))?;
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

    /// Every AppContext record in the store as changes (metas before their clusters), with the revision read.
    pub async fn load_all(&self) -> Result<(Vec<ContextChange>, emco_store::Revision)> {
        let (items, revision) = self.store.range(CONTEXT_ROOT).await?;
        let mut metas = Vec::new();
        let mut clusters = Vec::new();
        for kv in &items {
            match parse_context_key(&kv.key) {
                Some(ContextKey::Meta(_)) => {
                    metas.push(ContextChange::Meta(record::decode(&kv.key, &kv.value)?))
                }
                Some(ContextKey::Cluster(id, _, _)) => {
                    clusters.push(ContextChange::Cluster(id, record::decode(&kv.key, &kv.value)?));
                }
                None => {}
            }
        }
        metas.extend(clusters);
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

    /// Changes one (app, cluster) record with `change` in one write, retrying on conflict.
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
            let txn = Txn::new()
                .when([Compare::mod_revision_is(&key, kv.mod_revision)])
                .when(fence.map(Fence::compare))
                .and_then([Op::put(
                    &key,
                    record::encode_with_schema(&record, record.schema()),
                )]);
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
            apps: vec![AppMeta {
                name: "sink".into(),
                dependencies: vec![],
                clusters: vec!["prov+edge01".into()],
            }],
            status: ContextStatus::Instantiating,
            stop_requested: false,
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
}
