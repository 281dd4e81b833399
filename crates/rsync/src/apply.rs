//! One app on one cluster: apply its resources (CRDs first, waited for, then the rest in order, then the app's
//! ResourceBundleState) or delete them (in reverse), retrying while the cluster is unreachable, and record the
//! outcome in one AppContext write.

use std::sync::Arc;
use std::time::Duration;

use emco_appcontext::{ClusterRecord, ResourceRecord};
use emco_model::{Connectivity, ContextId, RsyncStatus, now_timestamp};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::core::{DynamicObject, GroupVersionKind};
use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;

use crate::engine::Inner;
use crate::error::SyncError;
use crate::labels::prepare;

/// What a batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchOutcome {
    /// Every resource reached its goal (Applied / Deleted).
    Succeeded,
    /// At least one resource is Failed.
    Failed,
    /// The operation was stopped before the batch finished.
    Cancelled,
}

/// Apply or delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Apply,
    Delete,
}

fn is_crd(resource: &ResourceRecord) -> bool {
    resource.kind == "CustomResourceDefinition" && resource.api_version.starts_with("apiextensions.k8s.io/")
}

fn gvk_of(resource: &ResourceRecord) -> GroupVersionKind {
    let gvk = resource.gvk();
    GroupVersionKind::gvk(&gvk.group, &gvk.version, &gvk.kind)
}

/// Waits until a CRD reports `Established=True`.
pub(crate) async fn wait_established(
    api: &Api<DynamicObject>,
    name: &str,
    timeout: Duration,
) -> Result<(), SyncError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let crd = api.get(name).await?;
        let established = crd.data["status"]["conditions"]
            .as_array()
            .is_some_and(|conditions| {
                conditions
                    .iter()
                    .any(|c| c["type"] == "Established" && c["status"] == "True")
            });
        if established {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(SyncError::Rejected(format!(
                "CustomResourceDefinition {name} was not established within {timeout:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The result of each resource in a batch; `None` for resources the batch did not reach (it was cancelled).
type Results = Vec<Option<(RsyncStatus, Option<String>)>>;

async fn api_for(
    inner: &Inner,
    cluster: &str,
    client: &kube::Client,
    resource: &ResourceRecord,
    namespace: &str,
) -> Result<(Api<DynamicObject>, Option<String>), SyncError> {
    let resolved = inner.clients.resolve(cluster, client, &gvk_of(resource)).await?;
    if resolved.namespaced {
        let ns = resource.manifest["metadata"]["namespace"]
            .as_str()
            .filter(|n| !n.is_empty())
            .unwrap_or(namespace)
            .to_string();
        Ok((
            Api::namespaced_with(client.clone(), &ns, &resolved.resource),
            Some(ns),
        ))
    } else {
        Ok((Api::all_with(client.clone(), &resolved.resource), None))
    }
}

/// One attempt at the whole batch. Retryable errors abort the attempt; rejections mark single resources Failed; a
/// cancellation ends it between two requests, with the results so far (so nothing applied is lost track of).
async fn attempt(
    inner: &Inner,
    id: ContextId,
    record: &ClusterRecord,
    namespace: &str,
    direction: Direction,
    cancel: &CancellationToken,
) -> Result<Results, SyncError> {
    let cluster = record.cluster.as_str();
    let client = inner.clients.client(cluster).await?;
    let label = format!("{id}-{}", record.app);
    let params = PatchParams::apply(&inner.config.field_manager).force();
    let mut results: Results = vec![None; record.resources.len()];
    let order: Vec<usize> = {
        let (crds, others): (Vec<usize>, Vec<usize>) =
            (0..record.resources.len()).partition(|i| is_crd(&record.resources[*i]));
        match direction {
            Direction::Apply => crds.into_iter().chain(others).collect(),
            Direction::Delete => others.into_iter().rev().chain(crds.into_iter().rev()).collect(),
        }
    };
    let rejected = |err: SyncError| -> Result<(RsyncStatus, Option<String>), SyncError> {
        match err {
            SyncError::Rejected(message) => Ok((RsyncStatus::Failed, Some(message))),
            other => Err(other),
        }
    };
    if direction == Direction::Apply {
        inner.clients.ensure_bundle_crd(cluster, &client).await?;
    }
    let mut crds_applied = false;
    for index in order {
        if cancel.is_cancelled() {
            return Ok(results);
        }
        let resource = &record.resources[index];
        let outcome = match api_for(inner, cluster, &client, resource, namespace).await {
            Err(err) => rejected(err)?,
            Ok((api, ns)) => match direction {
                Direction::Apply => {
                    if !is_crd(resource) && crds_applied {
                        // Kinds the CRDs just added must be discovered afresh.
                        inner.clients.forget_kinds(cluster);
                        crds_applied = false;
                    }
                    let body = prepare(&resource.manifest, &label, ns.as_deref());
                    match api.patch(&resource.name, &params, &Patch::Apply(&body)).await {
                        Ok(_) if is_crd(resource) => {
                            crds_applied = true;
                            match wait_established(&api, &resource.name, inner.config.crd_timeout).await {
                                Ok(()) => (RsyncStatus::Applied, None),
                                Err(err) => rejected(err)?,
                            }
                        }
                        Ok(_) => (RsyncStatus::Applied, None),
                        Err(err) => rejected(SyncError::from(err))?,
                    }
                }
                Direction::Delete => match api.delete(&resource.name, &DeleteParams::background()).await {
                    Ok(_) => (RsyncStatus::Deleted, None),
                    Err(kube::Error::Api(status)) if status.code == 404 => (RsyncStatus::Deleted, None),
                    Err(err) => rejected(SyncError::from(err))?,
                },
            },
        };
        results[index] = Some(outcome);
    }
    if cancel.is_cancelled() {
        return Ok(results);
    }
    // The app's ResourceBundleState: applied with the resources, deleted after them.
    if !record.resources.is_empty() {
        let gvk = GroupVersionKind::gvk(emco_k8s::RBS_GROUP, emco_k8s::RBS_VERSION, emco_k8s::RBS_KIND);
        let bundle_ns = namespace.to_string();
        match direction {
            Direction::Apply => {
                let resolved = inner.clients.resolve(cluster, &client, &gvk).await?;
                let api: Api<DynamicObject> =
                    Api::namespaced_with(client.clone(), &bundle_ns, &resolved.resource);
                api.patch(
                    &label,
                    &params,
                    &Patch::Apply(emco_k8s::rbs_object(&label, &bundle_ns)),
                )
                .await?;
            }
            Direction::Delete => {
                if let Ok(resolved) = inner.clients.resolve(cluster, &client, &gvk).await {
                    let api: Api<DynamicObject> =
                        Api::namespaced_with(client.clone(), &bundle_ns, &resolved.resource);
                    match api.delete(&label, &DeleteParams::background()).await {
                        Ok(_) => {}
                        Err(kube::Error::Api(status)) if status.code == 404 => {}
                        Err(err) => return Err(err.into()),
                    }
                }
            }
        }
    }
    Ok(results)
}

/// Writes a batch's outcome: every resource's status and error, and the cluster's connectivity, in one write.
async fn record_results(
    inner: &Inner,
    id: ContextId,
    record: &ClusterRecord,
    results: Option<&Results>,
    connectivity: Connectivity,
    retrying: bool,
) -> Result<(), SyncError> {
    let time = now_timestamp();
    inner
        .contexts
        .update_cluster(id, &record.app, &record.cluster, |stored| {
            stored.connectivity = connectivity;
            for (index, resource) in stored.resources.iter_mut().enumerate() {
                if let Some((status, error)) = results.and_then(|r| r.get(index)).and_then(Option::as_ref) {
                    resource.status = *status;
                    resource.error = error.clone();
                    resource.updated = Some(time.clone());
                } else if retrying && !matches!(resource.status, RsyncStatus::Failed) {
                    resource.status = RsyncStatus::Retrying;
                    resource.updated = Some(time.clone());
                }
            }
        })
        .await?;
    Ok(())
}

/// Applies or deletes one app on one cluster until it succeeds, is rejected, or is cancelled.
pub(crate) async fn sync_cluster(
    inner: Arc<Inner>,
    id: ContextId,
    app: String,
    cluster: String,
    namespace: String,
    direction: Direction,
    cancel: CancellationToken,
) -> BatchOutcome {
    if direction == Direction::Apply {
        inner.ensure_watcher(&cluster);
    }
    let mut attempt_number = 0u32;
    let mut marked_retrying = false;
    loop {
        if cancel.is_cancelled() {
            return BatchOutcome::Cancelled;
        }
        let record = match inner.contexts.cluster(id, &app, &cluster).await {
            Ok(record) => record,
            Err(err) => {
                tracing::warn!(context = %id, app, cluster, error = %err, "cannot read the AppContext");
                return BatchOutcome::Failed;
            }
        };
        let result = {
            let permit = tokio::select! {
                permit = inner.permits.acquire() => permit,
                () = cancel.cancelled() => return BatchOutcome::Cancelled,
            };
            let Ok(_permit) = permit else {
                return BatchOutcome::Cancelled;
            };
            attempt(&inner, id, &record, &namespace, direction, &cancel).await
        };
        match result {
            Ok(results) => {
                let failed = results
                    .iter()
                    .flatten()
                    .any(|(status, _)| *status == RsyncStatus::Failed);
                let complete = results.iter().all(Option::is_some);
                if let Err(err) = record_results(
                    &inner,
                    id,
                    &record,
                    Some(&results),
                    Connectivity::Available,
                    false,
                )
                .await
                {
                    tracing::warn!(context = %id, app, cluster, error = %err, "cannot record the batch");
                }
                return match (complete, failed) {
                    (false, _) => BatchOutcome::Cancelled,
                    (true, true) => BatchOutcome::Failed,
                    (true, false) => BatchOutcome::Succeeded,
                };
            }
            Err(SyncError::Kubeconfig {
                cluster: name,
                message,
            }) => {
                let message = format!("kubeconfig of cluster {name}: {message}");
                let results: Results =
                    vec![Some((RsyncStatus::Failed, Some(message))); record.resources.len()];
                let _ = record_results(&inner, id, &record, Some(&results), record.connectivity, false).await;
                return BatchOutcome::Failed;
            }
            Err(err) if err.is_retryable() => {
                attempt_number += 1;
                if !marked_retrying {
                    let unreachable = matches!(err, SyncError::Unreachable(_));
                    let connectivity = if unreachable {
                        Connectivity::Retrying
                    } else {
                        record.connectivity
                    };
                    if let Err(write_err) =
                        record_results(&inner, id, &record, None, connectivity, true).await
                    {
                        tracing::warn!(context = %id, app, cluster, error = %write_err, "cannot record Retrying");
                    }
                    marked_retrying = true;
                }
                if inner.config.max_retries.is_some_and(|max| attempt_number > max) {
                    let message = format!("Retries exceeded max: {cluster} ({err})");
                    let results: Results =
                        vec![Some((RsyncStatus::Failed, Some(message))); record.resources.len()];
                    let _ =
                        record_results(&inner, id, &record, Some(&results), Connectivity::Retrying, false)
                            .await;
                    return BatchOutcome::Failed;
                }
                let delay = inner.config.backoff(attempt_number);
                tracing::debug!(context = %id, app, cluster, error = %err, ?delay, "retrying");
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = cancel.cancelled() => return BatchOutcome::Cancelled,
                }
            }
            Err(err) => {
                tracing::warn!(context = %id, app, cluster, error = %err, "batch failed");
                return BatchOutcome::Failed;
            }
        }
    }
}

/// Whether every resource of `app` reports Ready from its clusters' ResourceBundleStates.
pub(crate) fn app_ready(records: &[ClusterRecord], app: &str) -> bool {
    let mut any = false;
    for record in records.iter().filter(|r| r.app == app) {
        any = true;
        let Some(bundle) = record.cluster_status.as_ref() else {
            return false;
        };
        for resource in &record.resources {
            let gvk = resource.gvk();
            let Some(object) = emco_k8s::bundle::find_object(bundle, &gvk.group, &gvk.kind, &resource.name)
            else {
                return false;
            };
            let object: &Json = object.get("res").unwrap_or(object);
            if emco_k8s::readiness::readiness(&gvk.group, &gvk.kind, object) != emco_model::ReadyStatus::Ready
            {
                return false;
            }
        }
    }
    any
}
