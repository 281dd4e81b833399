//! What live deployments stand on: the guard that keeps a cluster provider, a cluster or a cluster label from
//! being deleted while an AppContext still uses it (without the cluster, the engine could neither finish applying
//! nor ever delete what it applied), and a cluster sync object while a GitOps cluster names it.
//!
//! A context is live from its instantiation until its termination has finished
//! ([`ContextStatus::is_terminate_finished`]): Instantiating, Instantiated, InstantiateFailed (what was applied is
//! still on the clusters) and Terminating. Only the last context of a DIG can be live (instantiate waits until the
//! previous one has finished terminating), so the DIGs' lifecycle histories name every candidate: one range over
//! the histories, then one read of each candidate's meta record, which lists the clusters of every app. No
//! (app, cluster) resource record is read.
//!
//! The rules:
//! - a **cluster provider** is in use while a live context places an app on any of its clusters;
//! - a **cluster** is in use while a live context places an app on it;
//! - a **cluster label** is in use while a live context places an app on that cluster and an app intent for that
//!   app, in any generic placement intent of the context's DIG, selects clusters of that provider by that label
//!   (the placement that put the app there came through the label). The intents are read as they are now; they
//!   cannot change while the DIG is instantiated. A label no live placement selects by can go, even from a
//!   cluster in use;
//! - a **cluster sync object** is in use while a cluster of its provider names it (`spec.gitOps`), deployed or not.
//!
//! The histories and metas read here are in the request's read set (`emco_appcontext::read_set`): a context that
//! becomes live between the check and the delete (its history changes) fails the delete's transaction.

use emco_appcontext::{AppContexts, Catalog, CatalogError, ContextError, ContextMeta, Kind, ResourcePath};
use emco_model::{AppIntent, Cluster, ContextStatus, PlacementItem};

/// Why a resource cannot be deleted now.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UsageError {
    /// A live AppContext uses the resource.
    #[error(
        "cannot delete {kind} '{name}': DeploymentIntentGroup '{dig}' uses it (AppContext {context} is {status}{how}); terminate the DIG and wait until its termination has finished"
    )]
    InUse {
        /// EMCO's type name of the resource.
        kind: &'static str,
        /// Its path names.
        name: String,
        /// The DIG (project/composite-app/version/dig).
        dig: String,
        /// The live context.
        context: String,
        /// Its status.
        status: ContextStatus,
        /// How it uses the resource (`, app 'x' is placed on cluster 'p+c' by app intent 'y'`), or empty.
        how: String,
    },
    /// A GitOps cluster names the cluster sync object.
    #[error(
        "cannot delete ClusterSyncObject '{name}': cluster '{cluster}' names it ({field}); delete the cluster first"
    )]
    NamedByCluster {
        /// The sync object's path names.
        name: String,
        /// The cluster (`provider+cluster`).
        cluster: String,
        /// The field that names it.
        field: &'static str,
    },
    /// A catalog read failed.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// An AppContext read failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Refuses (with [`UsageError::InUse`]) while a live AppContext uses the cluster provider, cluster or cluster
/// label at `path`; other kinds are never in use this way.
pub(crate) async fn check_unused(
    catalog: &Catalog,
    contexts: &AppContexts,
    path: &ResourcePath,
) -> Result<(), UsageError> {
    let names = path.names();
    let in_use = |dig: &ResourcePath, meta: &ContextMeta, how: String| UsageError::InUse {
        kind: path.kind().type_name(),
        name: path.display_name(),
        dig: dig.display_name(),
        context: meta.id.to_string(),
        status: meta.status,
        how,
    };
    match path.kind() {
        Kind::ClusterProvider => {
            let prefix = format!("{}+", names[0]);
            for (dig, meta) in live_contexts(catalog, contexts).await? {
                if let Some((app, cluster)) = placements(&meta).find(|(_, c)| c.starts_with(&prefix)) {
                    let how = format!(", app '{app}' is placed on cluster '{cluster}'");
                    return Err(in_use(&dig, &meta, how));
                }
            }
        }
        Kind::Cluster => {
            let cluster = format!("{}+{}", names[0], names[1]);
            for (dig, meta) in live_contexts(catalog, contexts).await? {
                if let Some((app, _)) = placements(&meta).find(|(_, c)| *c == cluster) {
                    let how = format!(", app '{app}' is placed on it");
                    return Err(in_use(&dig, &meta, how));
                }
            }
        }
        Kind::ClusterLabel => {
            let (provider, label) = (&names[0], &names[2]);
            let cluster = format!("{provider}+{}", names[1]);
            for (dig, meta) in live_contexts(catalog, contexts).await? {
                let apps: Vec<&str> = placements(&meta)
                    .filter(|(_, c)| *c == cluster)
                    .map(|(app, _)| app)
                    .collect();
                if apps.is_empty() {
                    continue;
                }
                for (intent, app) in label_selections(catalog, &dig, provider, label).await? {
                    if apps.contains(&app.as_str()) {
                        let how = format!(
                            ", app '{app}' is placed on cluster '{cluster}' by this label in app intent '{intent}'"
                        );
                        return Err(in_use(&dig, &meta, how));
                    }
                }
            }
        }
        Kind::ClusterSyncObject => {
            let (provider, object) = (&names[0], &names[1]);
            for (cluster, body) in catalog
                .list_as::<Cluster>(Kind::Cluster, std::slice::from_ref(provider))
                .await?
            {
                let Some(git_ops) = body.git_ops() else {
                    continue;
                };
                let field = if git_ops.git_ops_reference_object == *object {
                    "spec.gitOps.gitOpsReferenceObject"
                } else if git_ops.git_ops_resource_object == *object {
                    "spec.gitOps.gitOpsResourceObject"
                } else {
                    continue;
                };
                return Err(UsageError::NamedByCluster {
                    name: path.display_name(),
                    cluster: format!("{provider}+{}", cluster.name()),
                    field,
                });
            }
        }
        _ => {}
    }
    Ok(())
}

/// Every live AppContext with its DIG, in the order of the DIGs' keys.
async fn live_contexts(
    catalog: &Catalog,
    contexts: &AppContexts,
) -> Result<Vec<(ResourcePath, ContextMeta)>, UsageError> {
    let mut live = Vec::new();
    for (dig, history) in catalog.histories(Kind::DeploymentIntentGroup).await? {
        let Some(id) = history.last_context() else {
            continue;
        };
        let meta = match contexts.meta(id).await {
            Ok(meta) => meta,
            // A history may name a context that is gone; it uses nothing.
            Err(ContextError::NotFound(_)) => continue,
            Err(other) => return Err(other.into()),
        };
        if !meta.status.is_terminate_finished() {
            live.push((dig, meta));
        }
    }
    Ok(live)
}

/// Every (app, `provider+cluster`) placement of a context.
fn placements(meta: &ContextMeta) -> impl Iterator<Item = (&str, &str)> {
    meta.apps.iter().flat_map(|app| {
        app.clusters
            .iter()
            .map(move |cluster| (app.name.as_str(), cluster.as_str()))
    })
}

/// The (app intent, app) pairs of a DIG whose placement selects clusters of `provider` by `label`.
async fn label_selections(
    catalog: &Catalog,
    dig: &ResourcePath,
    provider: &str,
    label: &str,
) -> Result<Vec<(String, String)>, UsageError> {
    let mut found = Vec::new();
    for gpi in catalog.list(Kind::GenericPlacementIntent, dig.names()).await? {
        for (path, intent) in catalog
            .list_as::<AppIntent>(Kind::AppIntent, gpi.path.names())
            .await?
        {
            let rules = &intent.spec.intent;
            let selects = rules
                .all_of
                .iter()
                .chain(&rules.any_of)
                .flat_map(|item| std::iter::once(item).chain(&item.any_of))
                .any(|item| selects_by_label(item, provider, label));
            if selects {
                found.push((path.name().to_string(), intent.spec.app));
            }
        }
    }
    Ok(found)
}

fn selects_by_label(item: &PlacementItem, provider: &str, label: &str) -> bool {
    item.cluster.is_empty() && item.cluster_provider == provider && item.cluster_label == label
}

#[cfg(test)]
mod tests {
    use emco_appcontext::AppMeta;
    use emco_model::{ContextId, StateInfo, StateValue};
    use emco_store::{Store, Txn};

    use super::*;

    fn path(kind: Kind, names: &[&str]) -> ResourcePath {
        ResourcePath::new(kind, names.iter().map(|name| (*name).to_string()).collect())
    }

    async fn write_context(store: &Store, dig: &str, id: u64, status: ContextStatus) {
        let id = ContextId::new(id).expect("a valid id");
        let meta = ContextMeta {
            id,
            project: "p".into(),
            composite_app: "ca".into(),
            composite_app_version: "v1".into(),
            composite_profile: "cp".into(),
            deployment_intent_group: dig.into(),
            release: "r".into(),
            namespace: "default".into(),
            logical_cloud: String::new(),
            owner: Default::default(),
            credentials: None,
            supersedes: None,
            lineage: None,
            apps: vec![AppMeta {
                name: "web".into(),
                dependencies: vec![],
                clusters: vec!["prov+east".into()],
                excluded: Vec::new(),
            }],
            status,
            stop_requested: false,
            rollout: None,
            created: "t".into(),
        };
        let mut history = StateInfo::created("t0".into());
        history.push(StateValue::Instantiated, Some(id), "t1".into());
        let (_, ops) = AppContexts::create_txn_parts(&meta, &[]);
        let dig = path(Kind::DeploymentIntentGroup, &["p", "ca", "v1", dig]);
        let txn = Txn::new()
            .and_then(ops)
            .and_then([Catalog::state_op(&dig, &history)]);
        store.txn(txn).await.expect("stored");
    }

    #[tokio::test]
    async fn only_contexts_not_done_terminating_hold_their_clusters() {
        let store = Store::memory();
        let (catalog, contexts) = (Catalog::new(store.clone()), AppContexts::new(store.clone()));
        let cluster = path(Kind::Cluster, &["prov", "east"]);
        let provider = path(Kind::ClusterProvider, &["prov"]);
        let other = path(Kind::Cluster, &["prov", "west"]);
        write_context(&store, "done", 1, ContextStatus::Terminated).await;
        write_context(&store, "failed", 2, ContextStatus::TerminateFailed).await;
        check_unused(&catalog, &contexts, &cluster)
            .await
            .expect("finished contexts hold nothing");
        for (id, status) in [
            (3, ContextStatus::Instantiating),
            (4, ContextStatus::Instantiated),
            (5, ContextStatus::InstantiateFailed),
            (6, ContextStatus::Terminating),
        ] {
            let store = Store::memory();
            let (catalog, contexts) = (Catalog::new(store.clone()), AppContexts::new(store.clone()));
            write_context(&store, "live", id, status).await;
            for held in [&cluster, &provider] {
                let err = check_unused(&catalog, &contexts, held).await.expect_err("in use");
                let message = err.to_string();
                assert!(
                    message.contains("DeploymentIntentGroup 'p/ca/v1/live'"),
                    "{message}"
                );
                assert!(
                    message.contains(&format!("AppContext {id} is {status}")),
                    "{message}"
                );
            }
            check_unused(&catalog, &contexts, &other)
                .await
                .expect("another cluster is free");
            check_unused(&catalog, &contexts, &path(Kind::ClusterProvider, &["elsewhere"]))
                .await
                .expect("another provider is free");
        }
    }
}
