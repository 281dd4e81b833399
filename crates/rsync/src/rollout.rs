//! Progressive rollouts in the engine (a DIG's `spec.rollout`): the context's clusters in batches, in name order.
//! Each batch is applied as a whole context is (every app, dependencies first, see
//! [`crate::engine::apply_clusters`]); with `waitForReady` the next batch starts only once every cluster of this
//! one is ready (as the monitor reports it) or the ready timeout passed; a cluster whose apply failed or that is
//! not ready in time has failed. After each batch the progress is written to the context's meta (fenced by the
//! claim), so a restart or a takeover goes on at the next batch; past the failure threshold the rollout pauses
//! there until `/resume`. An update's or rollback's handover (deleting what only the old context holds) runs once,
//! after the last batch, as it does without a rollout: clusters not reached yet keep the old revision untouched.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use emco_appcontext::ContextMeta;
use emco_model::rollout::RolloutProgress;
use emco_model::{ContextId, ContextStatus};
use tokio_util::sync::CancellationToken;

use crate::apply::{Direction, record_ready};
use crate::engine::{Inner, READY_POLL, apply_clusters, update_meta_waiting};

/// How a rollout run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Every batch is done; `failed` when a cluster failed on the way.
    Complete { failed: bool },
    /// Past the failure threshold: paused until `/resume`.
    Paused,
    /// Stopped, superseded, or the claim was lost.
    Cancelled,
}

/// Runs the rollout of context `id` from the batch `progress` says is next.
pub(crate) async fn run(
    inner: &Arc<Inner>,
    id: ContextId,
    meta: &Arc<ContextMeta>,
    mut progress: RolloutProgress,
    direction: Direction,
    cancel: &CancellationToken,
) -> End {
    let clusters = meta.clusters();
    let batches = progress.plan.batches_of(&clusters);
    let first = usize::try_from(progress.batches_done).unwrap_or(usize::MAX);
    for (index, batch) in batches.iter().enumerate().skip(first) {
        if index > 0 && progress.plan.pause_ms > 0 {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(progress.plan.pause_ms)) => {}
                () = cancel.cancelled() => return End::Cancelled,
            }
        }
        tracing::info!(context = %id, batch = index + 1, batches = batches.len(), clusters = batch.len(), "rolling out a batch");
        let members: BTreeSet<String> = batch.iter().cloned().collect();
        let applied = apply_clusters(inner, id, meta, &members, direction, cancel).await;
        if applied.cancelled {
            return End::Cancelled;
        }
        let mut failed: Vec<String> = batch
            .iter()
            .filter(|cluster| applied.failed.contains(*cluster))
            .cloned()
            .collect();
        if progress.plan.wait_for_ready {
            let waiting: Vec<&String> = batch
                .iter()
                .filter(|cluster| !applied.failed.contains(*cluster))
                .collect();
            let timeout = Duration::from_millis(progress.plan.ready_timeout_ms);
            match not_ready_within(inner, id, meta, &waiting, timeout, cancel).await {
                Some(not_ready) => failed.extend(not_ready),
                None => return End::Cancelled,
            }
        }
        progress.batches_done = index as u64 + 1;
        progress.last_batch_at = Some(emco_model::now_timestamp());
        progress.failed.extend(failed.iter().cloned());
        progress.paused = progress.past_threshold() && !progress.is_complete();
        if !failed.is_empty() {
            tracing::warn!(context = %id, batch = index + 1, failed = ?failed, "clusters failed in the rollout's batch");
        }
        let recorded = progress.clone();
        let written = update_meta_waiting(inner, id, |meta| {
            if meta.status == ContextStatus::Instantiating && !meta.stop_requested {
                meta.rollout = Some(recorded.clone());
            }
        })
        .await;
        match written {
            Ok(meta) if meta.rollout.as_ref() == Some(&recorded) => {}
            // Stopped or taken over meanwhile.
            Ok(_) => return End::Cancelled,
            Err(err) => {
                tracing::warn!(context = %id, error = %err, "cannot record the rollout's progress");
                return End::Cancelled;
            }
        }
        if progress.paused {
            tracing::warn!(context = %id, rollout = progress.summary(), failed = ?progress.failed, "rollout paused past its failure threshold; POST …/resume to go on");
            return End::Paused;
        }
    }
    End::Complete {
        failed: !progress.failed.is_empty(),
    }
}

/// Waits until every cluster of `clusters` is ready for every app of the context placed there, at most
/// `timeout`: the clusters that are not ready by then (`None` when cancelled). A cluster once ready is not
/// looked at again.
async fn not_ready_within(
    inner: &Inner,
    id: ContextId,
    meta: &ContextMeta,
    clusters: &[&String],
    timeout: Duration,
    cancel: &CancellationToken,
) -> Option<Vec<String>> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut waiting: Vec<&String> = clusters.to_vec();
    loop {
        let mut still = Vec::new();
        for cluster in waiting {
            if !cluster_ready(inner, id, meta, cluster).await {
                still.push(cluster);
            }
        }
        waiting = still;
        if waiting.is_empty() || tokio::time::Instant::now() >= deadline {
            return Some(waiting.into_iter().cloned().collect());
        }
        tokio::select! {
            () = tokio::time::sleep(READY_POLL) => {}
            () = cancel.cancelled() => return None,
        }
    }
}

/// Whether every app of the context placed on `cluster` is ready there (an unreadable record is not).
async fn cluster_ready(inner: &Inner, id: ContextId, meta: &ContextMeta, cluster: &str) -> bool {
    for app in meta
        .apps
        .iter()
        .filter(|app| app.clusters.iter().any(|c| c == cluster))
    {
        match inner.contexts.cluster(id, &app.name, cluster).await {
            Ok(record) if record_ready(&record) => {}
            _ => return false,
        }
    }
    true
}
