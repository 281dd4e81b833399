//! What the clusters of a progressive rollout wait for before rsync reaches them: the batch under way, the pause
//! between batches, or a `/resume` of a rollout paused past its failure threshold. Derived from the rollout's
//! progress in the context's meta (rsync writes it once per batch, not once per waiting cluster), so at 10,000
//! clusters a batch costs one write, not one per later cluster.

use std::collections::HashMap;

use emco_appcontext::Waiting;
use emco_model::rollout::RolloutProgress;

/// The batch of each cluster of a rollout (`provider+cluster` → 0-based batch), from the context's clusters in
/// rollout order.
#[must_use]
pub fn batches(progress: &RolloutProgress, clusters: &[String]) -> HashMap<String, u64> {
    let size = progress.plan.batch_size.max(1);
    clusters
        .iter()
        .enumerate()
        .map(|(position, cluster)| (cluster.clone(), position as u64 / size))
        .collect()
}

/// What a cluster in batch `batch` (0-based) waits for while nothing is applied there yet; none once the rollout
/// reached it. `started` is when the context was created (RFC 3339), the wait's start before the first batch is
/// done.
#[must_use]
pub fn waiting(progress: &RolloutProgress, batch: u64, started: &str) -> Option<Waiting> {
    if progress.is_complete() && !progress.paused {
        return None;
    }
    let done = progress.batches_done;
    let batches = progress.plan.batches();
    let since = progress
        .last_batch_at
        .clone()
        .unwrap_or_else(|| started.to_string());
    if progress.paused && batch >= done {
        return Some(Waiting {
            what: format!(
                "a /resume of the rollout, paused after batch {done} of {batches} with {} failed clusters (more than the {} it tolerates)",
                progress.failed.len(),
                progress.plan.tolerated_failures
            ),
            since,
            until: None,
            then: None,
        });
    }
    if batch > done {
        let goal = if progress.plan.wait_for_ready {
            "Ready"
        } else {
            "applied"
        };
        return Some(Waiting {
            what: format!("rollout batch {} of {batches} to be {goal}", done + 1),
            since,
            until: None,
            then: None,
        });
    }
    if batch == done && done > 0 && progress.plan.pause_ms > 0 {
        let until = progress
            .last_batch_at
            .as_deref()
            .and_then(|at| at.parse::<jiff::Timestamp>().ok())
            .and_then(|at| {
                at.checked_add(jiff::SignedDuration::from_millis(
                    i64::try_from(progress.plan.pause_ms).unwrap_or(i64::MAX),
                ))
                .ok()
            })
            .map(emco_model::format_timestamp);
        return Some(Waiting {
            what: format!("the rollout's pause after batch {done} of {batches}"),
            since,
            until,
            then: Some("continues".into()),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use emco_model::rollout::RolloutPlan;

    use super::*;

    fn progress(done: u64, pause_ms: u64) -> RolloutProgress {
        let mut progress = RolloutProgress::new(RolloutPlan {
            clusters: 6,
            batch_size: 2,
            wait_for_ready: true,
            tolerated_failures: 0,
            pause_ms,
            ready_timeout_ms: 60_000,
        });
        progress.batches_done = done;
        if done > 0 {
            progress.last_batch_at = Some("2026-11-29T10:00:00Z".into());
        }
        progress
    }

    #[test]
    fn later_batches_wait_for_the_one_under_way() {
        let clusters: Vec<String> = (1..=6).map(|i| format!("p+edge0{i}")).collect();
        let plan = batches(&progress(0, 0), &clusters);
        assert_eq!(
            (
                plan["p+edge01"],
                plan["p+edge02"],
                plan["p+edge03"],
                plan["p+edge06"]
            ),
            (0, 0, 1, 2)
        );
        let started = "2026-11-29T09:59:00Z";
        assert_eq!(
            waiting(&progress(0, 0), 0, started),
            None,
            "the first batch is under way"
        );
        let later = waiting(&progress(0, 0), 1, started).unwrap();
        assert_eq!(
            (later.what.as_str(), later.since.as_str()),
            ("rollout batch 1 of 3 to be Ready", started)
        );
        let later = waiting(&progress(1, 0), 2, started).unwrap();
        assert_eq!(
            (later.what.as_str(), later.since.as_str()),
            ("rollout batch 2 of 3 to be Ready", "2026-11-29T10:00:00Z")
        );
        assert_eq!(waiting(&progress(1, 0), 1, started), None, "batch 2 is under way");
        assert_eq!(waiting(&progress(3, 0), 2, started), None, "complete");
    }

    #[test]
    fn the_pause_between_batches_and_a_paused_rollout_are_waits_too() {
        let started = "2026-11-29T09:59:00Z";
        let pause = waiting(&progress(1, 30_000), 1, started).unwrap();
        assert_eq!(pause.what, "the rollout's pause after batch 1 of 3");
        assert_eq!(pause.until.as_deref(), Some("2026-11-29T10:00:30Z"));
        let mut paused = progress(1, 0);
        paused.paused = true;
        paused.failed = vec!["p+edge02".into()];
        let resume = waiting(&paused, 1, started).unwrap();
        assert!(
            resume
                .what
                .starts_with("a /resume of the rollout, paused after batch 1 of 3 with 1 failed clusters"),
            "{}",
            resume.what
        );
        assert_eq!(waiting(&paused, 0, started), None, "a batch done is not waiting");
    }
}
