//! Logical clouds (dcm) described to the lifecycle engine, and what DIGs need from them.
//!
//! Instantiating a logical cloud reads it, its cluster references, user permissions and cluster quotas, and
//! builds a context with the single app `logical-cloud` on every referenced cluster (`reference/emco.md` §2.4).
//! Level 0 (admin) clouds have no objects: they lend DIGs each cluster's own credentials and namespace. Level 1
//! clouds put, per cluster, a Namespace, their ResourceQuotas, a Role and RoleBinding per user permission, and a
//! CertificateSigningRequest for the user; the user's private key is made here, kept as the logical cloud's blob
//! and never answered. rsync approves the request and keeps the certificate the cluster issues; a DIG on the
//! logical cloud is then applied with that user's credentials ([`Binding`]), and
//! [`user_kubeconfig`] gives an administrator the user's kubeconfig for one cluster.

use emco_appcontext::{
    AppContexts, AppMeta, Catalog, ClusterRecord, ContextMeta, ContextOwner, Kind, ResourcePath,
    ResourceRecord, ResourceRole, UserCredentials,
};
use emco_model::logical_cloud::{
    ClusterQuota, ClusterReference, LogicalCloud, LogicalCloudLevel, UserPermission,
};
use emco_model::{ContextId, ContextStatus, DeploymentIntentGroup, StateValue};

use super::{Built, DEFAULT_NAMESPACE, LifecycleError, Result};

/// The one app of a logical cloud's context, as dcm names it.
pub const LOGICAL_CLOUD_APP: &str = "logical-cloud";

/// Everything instantiating a logical cloud reads.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Inputs {
    logical_cloud: LogicalCloud,
    /// The referenced clusters, `provider+cluster`, in reference order.
    clusters: Vec<String>,
    /// Those of them that an agent in the cluster serves (GitOps and pull clusters): they take the cloud's
    /// objects as their agent applies them, with a service account and no certificate request, which nobody
    /// there would sign for emco ([`emco_k8s::logical_cloud::gitops_level1_objects`]).
    agent_served: std::collections::BTreeSet<String>,
    permissions: Vec<UserPermission>,
    quotas: Vec<ClusterQuota>,
    /// The user's key and certificate request to keep (an update: the clusters already hold the request, which
    /// Kubernetes does not let change), else new ones are made.
    kept: Option<(String, String)>,
}

/// The user key (the logical cloud's blob) and the certificate request (PEM) of the logical cloud's current
/// context, which an update keeps.
async fn kept_credentials(
    catalog: &Catalog,
    contexts: &AppContexts,
    path: &ResourcePath,
) -> Result<(String, String)> {
    let missing = |what: &str| {
        LifecycleError::Incomplete(format!(
            "LogicalCloud '{}' has no {what} to keep: terminate and instantiate it instead",
            path.name()
        ))
    };
    let key = catalog.blob(path).await?.ok_or_else(|| missing("user key"))?;
    let key = String::from_utf8(key).map_err(|_| missing("readable user key"))?;
    let (state, _) = catalog.state(path).await?;
    let context = state.last_context().ok_or_else(|| missing("instance"))?;
    let request = contexts
        .clusters(context)
        .await?
        .into_iter()
        .flat_map(|record| record.resources)
        .find(|resource| matches!(resource.role, ResourceRole::Certificate))
        .and_then(|resource| resource.object()["spec"]["request"].as_str().map(str::to_string))
        .ok_or_else(|| missing("certificate request"))?;
    use base64::Engine as _;
    let request = base64::engine::general_purpose::STANDARD
        .decode(request)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| missing("readable certificate request"))?;
    Ok((key, request))
}

/// What a DIG deploying on a logical cloud takes from it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Binding {
    /// The clusters it references (`provider+cluster`).
    pub(super) clusters: Vec<String>,
    /// The namespace the DIG deploys to.
    pub(super) namespace: String,
    /// A level-1 cloud's user, whose credentials apply the DIG.
    pub(super) credentials: Option<UserCredentials>,
}

fn is_level0(logical_cloud: &LogicalCloud) -> bool {
    logical_cloud.level() == Some(LogicalCloudLevel::Admin)
}

/// The namespace of a logical cloud: its own at level 1; its clusters' (`default`) at level 0.
fn namespace_of(logical_cloud: &LogicalCloud) -> &str {
    if is_level0(logical_cloud) {
        DEFAULT_NAMESPACE
    } else {
        &logical_cloud.spec.namespace
    }
}

/// Reads the logical cloud at `path` and what it is built from (and, with `keep_key`, the user key and request
/// it has);
/// refuses what cannot be instantiated.
pub(super) async fn read_inputs(
    catalog: &Catalog,
    contexts: &AppContexts,
    path: &ResourcePath,
    keep_key: bool,
) -> Result<Inputs> {
    let logical_cloud: LogicalCloud = catalog.get_as(path).await?;
    let mut clusters = Vec::new();
    let mut agent_served = std::collections::BTreeSet::new();
    for (reference_path, reference) in catalog
        .list_as::<ClusterReference>(Kind::ClusterReference, path.names())
        .await?
    {
        let cluster = ResourcePath::new(
            Kind::Cluster,
            vec![
                reference.spec.cluster_provider.clone(),
                reference.spec.cluster.clone(),
            ],
        );
        let Some(entry) = catalog.find(&cluster).await? else {
            return Err(LifecycleError::Placement(format!(
                "cluster reference '{}' of LogicalCloud '{}' names cluster '{}+{}', which does not exist",
                reference_path.name(),
                path.name(),
                reference.spec.cluster_provider,
                reference.spec.cluster
            )));
        };
        let name = cluster.names().join("+");
        if serde_json::from_value::<emco_model::Cluster>(entry.body)
            .is_ok_and(|body| body.git_ops().is_some() || body.is_pull())
        {
            agent_served.insert(name.clone());
        }
        if !clusters.contains(&name) {
            clusters.push(name);
        }
    }
    if clusters.is_empty() {
        return Err(LifecycleError::Incomplete(format!(
            "LogicalCloud '{}' references no clusters: add a cluster reference",
            path.name()
        )));
    }
    let permissions: Vec<UserPermission> = catalog
        .list_as::<UserPermission>(Kind::UserPermission, path.names())
        .await?
        .into_iter()
        .map(|(_, body)| body)
        .collect();
    let quotas: Vec<ClusterQuota> = catalog
        .list_as::<ClusterQuota>(Kind::ClusterQuota, path.names())
        .await?
        .into_iter()
        .map(|(_, body)| body)
        .collect();
    if is_level0(&logical_cloud) {
        let namespace = &logical_cloud.spec.namespace;
        if !namespace.is_empty() && namespace != DEFAULT_NAMESPACE {
            return Err(LifecycleError::Invalid(format!(
                "LogicalCloud '{}' is level 0 and names namespace '{namespace}'; a level-0 logical cloud uses its clusters' namespace '{DEFAULT_NAMESPACE}'",
                path.name()
            )));
        }
        if let Some(quota) = quotas.first() {
            return Err(LifecycleError::Inconsistent(format!(
                "LogicalCloud '{}' is level 0 and has cluster quota '{}'; quotas apply only to level-1 logical clouds",
                path.name(),
                quota.metadata.name
            )));
        }
    } else if !permissions
        .iter()
        .any(|permission| permission.spec.namespace == logical_cloud.spec.namespace)
    {
        return Err(LifecycleError::Incomplete(format!(
            "LogicalCloud '{}' is level 1 and has no user permission for its namespace '{}': add one",
            path.name(),
            logical_cloud.spec.namespace
        )));
    }
    let kept = if keep_key && !is_level0(&logical_cloud) {
        Some(kept_credentials(catalog, contexts, path).await?)
    } else {
        None
    };
    Ok(Inputs {
        logical_cloud,
        clusters,
        agent_served,
        permissions,
        quotas,
        kept,
    })
}

/// The context of a logical cloud; at level 1 with the user key and request to keep (an update) or new ones (the
/// key stored with the context) and, per cluster,
/// the cloud's objects, its certificate request playing [`ResourceRole::Certificate`] (a GitOps cluster takes them
/// as its agent applies them: a service account in place of the request).
pub(super) fn build(path: &ResourcePath, inputs: &Inputs) -> Result<Built> {
    let logical_cloud = &inputs.logical_cloud;
    let mut extra = Vec::new();
    let resources = if is_level0(logical_cloud) {
        Vec::new()
    } else {
        let request = match &inputs.kept {
            Some((_, request)) => request.clone(),
            None => {
                let key = emco_k8s::logical_cloud::generate_user_key()
                    .map_err(|err| LifecycleError::Renderer(format!("making the user's key: {err}")))?;
                extra.push(Catalog::blob_op(path, key.as_bytes()));
                emco_k8s::logical_cloud::certificate_request(&logical_cloud.spec.user.user_name, &key)
                    .map_err(|err| {
                        LifecycleError::Renderer(format!("making the user's certificate request: {err}"))
                    })?
            }
        };
        emco_k8s::logical_cloud::level1_objects(logical_cloud, &inputs.quotas, &inputs.permissions, &request)
            .map_err(|err| LifecycleError::Invalid(format!("LogicalCloud '{}': {err}", path.name())))?
    };
    let records_of = |objects: Vec<serde_json::Value>| -> Vec<ResourceRecord> {
        objects
            .into_iter()
            .map(|object| {
                let record = ResourceRecord::pending_object(object);
                if record.kind == "CertificateSigningRequest" {
                    record.with_role(ResourceRole::Certificate)
                } else {
                    record
                }
            })
            .collect()
    };
    let gitops_resources = records_of(emco_k8s::logical_cloud::gitops_level1_objects(
        &resources,
        path.name(),
        &logical_cloud.spec.namespace,
    ));
    let resources = records_of(resources);
    let names = path.names();
    let meta = ContextMeta::for_owner(
        AppContexts::new_id(),
        ContextOwner::LogicalCloud {
            project: names[0].clone(),
            name: names[1].clone(),
        },
        namespace_of(logical_cloud),
        vec![AppMeta {
            name: LOGICAL_CLOUD_APP.to_string(),
            dependencies: Vec::new(),
            clusters: inputs.clusters.clone(),
            excluded: Vec::new(),
        }],
    );
    let records = inputs
        .clusters
        .iter()
        .map(|cluster| {
            let resources = if inputs.agent_served.contains(cluster) {
                &gitops_resources
            } else {
                &resources
            };
            ClusterRecord::pending(LOGICAL_CLOUD_APP, cluster, resources.clone())
        })
        .collect();
    Ok(Built { meta, records, extra })
}

/// The logical cloud `name` of `project` as a DIG instantiating on it needs it: it must exist and be
/// instantiated, its context finished instantiating (409 `LogicalCloudNotReady` otherwise, in dcm's words).
pub(super) async fn binding(
    catalog: &Catalog,
    contexts: &AppContexts,
    project: &str,
    name: &str,
) -> Result<Binding> {
    let path = ResourcePath::new(Kind::LogicalCloud, vec![project.to_string(), name.to_string()]);
    let not_ready = |why: &str| LifecycleError::LogicalCloudNotReady(format!("LogicalCloud '{name}' {why}"));
    let Some(entry) = catalog.find(&path).await? else {
        return Err(not_ready("does not exist in this project"));
    };
    let logical_cloud: LogicalCloud =
        serde_json::from_value(entry.body).map_err(|err| not_ready(&format!("cannot be read: {err}")))?;
    let (state, _) = catalog.state(&path).await?;
    let context = match (state.current(), state.last_context()) {
        (Some(StateValue::Instantiated | StateValue::Updated), Some(context)) => context,
        (_, None) => return Err(not_ready("has never been instantiated")),
        (Some(current), Some(_)) => {
            return Err(not_ready(&format!(
                "is not currently instantiated (it is {current})"
            )));
        }
        (None, Some(_)) => return Err(not_ready("has no state")),
    };
    let meta = contexts.meta(context).await?;
    match meta.status {
        ContextStatus::Instantiated => {}
        ContextStatus::Instantiating => {
            return Err(not_ready("is still instantiating, please wait and try again"));
        }
        other => {
            return Err(not_ready(&format!(
                "failed instantiating (its context {context} is {other})"
            )));
        }
    }
    let clusters = meta
        .apps
        .iter()
        .find(|app| app.name == LOGICAL_CLOUD_APP)
        .map(|app| app.clusters.clone())
        .unwrap_or_default();
    let credentials = (!is_level0(&logical_cloud)).then(|| UserCredentials {
        project: project.to_string(),
        logical_cloud: name.to_string(),
        context,
        user: logical_cloud.spec.user.user_name.clone(),
    });
    Ok(Binding {
        clusters,
        namespace: namespace_of(&logical_cloud).to_string(),
        credentials,
    })
}

/// A DIG deployed on a logical cloud and not finished terminating.
struct LiveDig {
    /// `composite-app/version/dig`.
    name: String,
    state: StateValue,
    /// Its last context.
    context: Option<ContextId>,
}

/// The DIGs of the logical cloud's project deployed on it that are instantiated or still terminating.
async fn live_digs(catalog: &Catalog, contexts: &AppContexts, path: &ResourcePath) -> Result<Vec<LiveDig>> {
    let project = &path.names()[0];
    let mut live_digs = Vec::new();
    for (dig_path, history) in catalog.histories(Kind::DeploymentIntentGroup).await? {
        if dig_path.names()[0] != *project {
            continue;
        }
        let Some(state) = history.current() else { continue };
        let live = match state {
            StateValue::Instantiated | StateValue::InstantiateStopped | StateValue::Updated => true,
            StateValue::Terminated | StateValue::TerminateStopped => match history.last_context() {
                Some(id) => !contexts.meta(id).await?.status.is_terminate_finished(),
                None => false,
            },
            _ => false,
        };
        if !live {
            continue;
        }
        let Some(entry) = catalog.find(&dig_path).await? else {
            continue;
        };
        let Ok(dig) = serde_json::from_value::<DeploymentIntentGroup>(entry.body) else {
            continue;
        };
        if dig.spec.logical_cloud == path.name() {
            live_digs.push(LiveDig {
                name: dig_path.names()[1..].join("/"),
                state,
                context: history.last_context(),
            });
        }
    }
    Ok(live_digs)
}

/// Refuses terminating the logical cloud at `path` while a DIG of its project deployed on it is instantiated
/// or still terminating (409 naming the DIG).
pub(super) async fn check_unused(
    catalog: &Catalog,
    contexts: &AppContexts,
    path: &ResourcePath,
) -> Result<()> {
    match live_digs(catalog, contexts, path).await?.into_iter().next() {
        Some(dig) => Err(LifecycleError::LogicalCloudInUse {
            logical_cloud: path.name().to_string(),
            dig: dig.name,
            state: dig.state,
        }),
        None => Ok(()),
    }
}

/// Refuses an update that would take a cluster away from a DIG deployed on the logical cloud (409 naming the DIG
/// and the cluster): its objects there would lose their namespace and user.
pub(super) async fn check_update(
    catalog: &Catalog,
    contexts: &AppContexts,
    path: &ResourcePath,
    inputs: &Inputs,
) -> Result<()> {
    for dig in live_digs(catalog, contexts, path).await? {
        let Some(context) = dig.context else { continue };
        let meta = contexts.meta(context).await?;
        let removed = meta
            .apps
            .iter()
            .flat_map(|app| &app.clusters)
            .find(|cluster| !inputs.clusters.contains(cluster));
        if let Some(cluster) = removed {
            return Err(LifecycleError::LogicalCloudClusterInUse {
                logical_cloud: path.name().to_string(),
                cluster: cluster.clone(),
                dig: dig.name,
            });
        }
    }
    Ok(())
}

/// The kubeconfig of a level-1 logical cloud's user for the cluster of its cluster reference `reference`: the
/// cluster's server and CA, the user's certificate as the cluster issued it and the key emco keeps, the logical
/// cloud's namespace. Only once the cloud's context holds the certificate.
pub async fn user_kubeconfig(
    catalog: &Catalog,
    contexts: &AppContexts,
    path: &ResourcePath,
    reference: &str,
) -> Result<String> {
    let logical_cloud: LogicalCloud = catalog.get_as(path).await?;
    if is_level0(&logical_cloud) {
        // The cloud's state, not the request, rules the answer out: 409, as for any other state.
        return Err(LifecycleError::InvalidState {
            subject: "LogicalCloud",
            name: path.name().to_string(),
            state: "level 0".into(),
            reason: "it has no user of its own (use the clusters' kubeconfigs)".into(),
        });
    }
    let reference_path = path.child(Kind::ClusterReference, &[reference]);
    let cluster_reference: ClusterReference = catalog.get_as(&reference_path).await?;
    let cluster = format!(
        "{}+{}",
        cluster_reference.spec.cluster_provider, cluster_reference.spec.cluster
    );
    let not_ready =
        |why: String| LifecycleError::LogicalCloudNotReady(format!("LogicalCloud '{}' {why}", path.name()));
    let (state, _) = catalog.state(path).await?;
    let context: ContextId = match (state.current(), state.last_context()) {
        (
            Some(StateValue::Instantiated | StateValue::InstantiateStopped | StateValue::Updated),
            Some(context),
        ) => context,
        _ => {
            return Err(not_ready(format!(
                "is not instantiated (it is {})",
                super::state_name(state.current())
            )));
        }
    };
    let record = contexts
        .clusters(context)
        .await?
        .into_iter()
        .find(|record| record.app == LOGICAL_CLOUD_APP && record.cluster == cluster)
        .ok_or_else(|| {
            not_ready(format!(
                "does not reach cluster '{cluster}' (instantiated before the reference was added)"
            ))
        })?;
    let certificate = record
        .resources
        .iter()
        .find(|resource| matches!(resource.role, ResourceRole::Certificate))
        .and_then(|resource| resource.certificate.clone())
        .ok_or_else(|| not_ready(format!("has no certificate from cluster '{cluster}' yet")))?;
    let key = catalog
        .blob(path)
        .await?
        .ok_or_else(|| not_ready("has no user key (instantiate it again)".to_string()))?;
    let key = String::from_utf8(key).map_err(|_| not_ready("has a damaged user key".to_string()))?;
    let cluster_path = ResourcePath::new(
        Kind::Cluster,
        vec![
            cluster_reference.spec.cluster_provider.clone(),
            cluster_reference.spec.cluster.clone(),
        ],
    );
    let cluster_kubeconfig = catalog
        .blob(&cluster_path)
        .await?
        .ok_or_else(|| not_ready(format!("cannot reach cluster '{cluster}': it has no kubeconfig")))?;
    emco_k8s::logical_cloud::user_kubeconfig(
        &cluster_kubeconfig,
        &cluster,
        &logical_cloud.spec.user.user_name,
        namespace_of(&logical_cloud),
        &certificate,
        &key,
    )
    .map_err(|err| LifecycleError::Invalid(format!("cluster '{cluster}': {err}")))
}
