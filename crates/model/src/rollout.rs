//! Progressive rollouts (a DIG's `spec.rollout`, beyond EMCO): an instantiation, update or rollback reaches its
//! clusters in batches; the next batch starts only when the previous one is ready, and the rollout pauses once
//! more clusters failed than the failure threshold allows. Here: the spec as users write it, the plan it resolves
//! to for a number of clusters, and the progress rsync records in the AppContext (so a restart resumes at the
//! right batch and the status query can tell where the rollout stands).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::duration::parse_duration;
use crate::resources::ValidationError;

/// At most this many clusters in one batch (and as an absolute count).
pub const MAX_BATCH_SIZE: u64 = 100_000;
/// The longest pause between batches and the longest wait for a batch to be ready.
pub const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);
/// The durations the API document states (`parse_duration` within [`MAX_WAIT`]; the server takes more spellings):
/// up to 9999 s or ms, 999 m or 24 h.
const DURATION_PATTERN: &str = "^([0-9]{1,4}(s|ms)?|[0-9]{1,3}m|(1?[0-9]|2[0-4])h)$";
/// How long a batch may take to be ready when the spec does not say.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(300);

/// A number of clusters: a count (`3`, `"3"`) or a percentage of the clusters being rolled out to (`"10%"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ClusterCount {
    /// A count.
    Count(u64),
    /// A count or a percentage as text.
    Text(String),
}

/// A [`ClusterCount`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Amount {
    Count(u64),
    Percent(u64),
}

impl ClusterCount {
    fn amount(&self, field: &str) -> Result<Amount, ValidationError> {
        let invalid = |text: &str| {
            ValidationError::invalid(
                field,
                format!(
                    "'{}' is not a number of clusters or a percentage between 0% and 100%",
                    crate::names::shown(text)
                ),
            )
        };
        match self {
            Self::Count(count) if *count <= MAX_BATCH_SIZE => Ok(Amount::Count(*count)),
            Self::Count(count) => Err(invalid(&count.to_string())),
            Self::Text(text) => {
                let trimmed = text.trim();
                if let Some(percent) = trimmed.strip_suffix('%') {
                    match percent.parse::<u64>() {
                        Ok(percent) if percent <= 100 => Ok(Amount::Percent(percent)),
                        _ => Err(invalid(text)),
                    }
                } else {
                    match trimmed.parse::<u64>() {
                        Ok(count) if count <= MAX_BATCH_SIZE => Ok(Amount::Count(count)),
                        _ => Err(invalid(text)),
                    }
                }
            }
        }
    }
}

impl Amount {
    /// The count out of `total` clusters; a percentage rounds down (as Kubernetes rounds `maxUnavailable`).
    fn of(self, total: u64) -> u64 {
        match self {
            Self::Count(count) => count,
            Self::Percent(percent) => total.saturating_mul(percent) / 100,
        }
    }
}

/// A DIG's `spec.rollout`: how an instantiation, update or rollback reaches its clusters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutSpec {
    /// At most this many clusters are changed (and so possibly unavailable) at once: bounds the batch size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("anyOf" = [
        {"type": "null"},
        {"type": "integer", "minimum": 1, "maximum": MAX_BATCH_SIZE},
        {"type": "string", "pattern": "^([1-9][0-9]{0,4}|100000|([1-9][0-9]?|100)%)$"}
    ]))]
    pub max_unavailable_clusters: Option<ClusterCount>,
    /// Clusters per batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_BATCH_SIZE))]
    pub batch_size: Option<u64>,
    /// Whether the next batch waits until every cluster of the previous one is ready (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_ready: Option<bool>,
    /// More failed clusters than this pause the rollout (default 0: the first failure pauses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("anyOf" = [
        {"type": "null"},
        {"type": "integer", "minimum": 0, "maximum": MAX_BATCH_SIZE},
        {"type": "string", "pattern": "^([0-9]{1,5}|100000|(100|[1-9]?[0-9])%)$"}
    ]))]
    pub failure_threshold: Option<ClusterCount>,
    /// A pause after each batch before the next one starts (`"30s"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(DURATION_PATTERN))]
    pub pause_between_batches: Option<String>,
    /// How long a batch may take to be ready before its clusters that are not count as failed (default `5m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(DURATION_PATTERN))]
    pub ready_timeout: Option<String>,
}

impl RolloutSpec {
    /// Checks every field; the error names the field (`spec.rollout.batchSize`, …).
    pub fn validate(&self) -> Result<(), ValidationError> {
        if let Some(count) = &self.max_unavailable_clusters {
            let amount = count.amount("spec.rollout.maxUnavailableClusters")?;
            if matches!(amount, Amount::Count(0) | Amount::Percent(0)) {
                return Err(ValidationError::invalid(
                    "spec.rollout.maxUnavailableClusters",
                    "must allow at least one cluster",
                ));
            }
        }
        if let Some(size) = self.batch_size
            && !(1..=MAX_BATCH_SIZE).contains(&size)
        {
            return Err(ValidationError::invalid(
                "spec.rollout.batchSize",
                format!("{size} is not between 1 and {MAX_BATCH_SIZE}"),
            ));
        }
        if let Some(count) = &self.failure_threshold {
            count.amount("spec.rollout.failureThreshold")?;
        }
        for (field, text) in [
            ("pauseBetweenBatches", &self.pause_between_batches),
            ("readyTimeout", &self.ready_timeout),
        ] {
            if let Some(text) = text {
                wait(field, text)?;
            }
        }
        Ok(())
    }

    /// The plan for `clusters` clusters (the spec must be valid; an invalid field counts as absent).
    #[must_use]
    pub fn plan(&self, clusters: u64) -> RolloutPlan {
        let mut batch_size = self.batch_size.unwrap_or(clusters.max(1));
        if let Some(Ok(bound)) = self
            .max_unavailable_clusters
            .as_ref()
            .map(|count| count.amount("maxUnavailableClusters"))
        {
            batch_size = batch_size.min(bound.of(clusters).max(1));
        }
        let tolerated_failures = self
            .failure_threshold
            .as_ref()
            .and_then(|count| count.amount("failureThreshold").ok())
            .map_or(0, |amount| amount.of(clusters));
        let millis = |field: &str, text: &Option<String>, default: Duration| {
            text.as_deref()
                .and_then(|text| wait(field, text).ok())
                .unwrap_or(default)
                .as_millis()
                .try_into()
                .unwrap_or(u64::MAX)
        };
        RolloutPlan {
            clusters,
            batch_size: batch_size.max(1),
            wait_for_ready: self.wait_for_ready.unwrap_or(true),
            tolerated_failures,
            pause_ms: millis("pauseBetweenBatches", &self.pause_between_batches, Duration::ZERO),
            ready_timeout_ms: millis("readyTimeout", &self.ready_timeout, DEFAULT_READY_TIMEOUT),
        }
    }
}

/// A duration field of the spec: at most [`MAX_WAIT`].
fn wait(field: &str, text: &str) -> Result<Duration, ValidationError> {
    let field = format!("spec.rollout.{field}");
    let duration = parse_duration(text).map_err(|message| ValidationError::invalid(&field, message))?;
    if duration > MAX_WAIT {
        return Err(ValidationError::invalid(
            &field,
            format!("'{}' is longer than 24h", crate::names::shown(text)),
        ));
    }
    Ok(duration)
}

/// A rollout resolved for its clusters, as the AppContext stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutPlan {
    /// How many clusters the rollout reaches.
    pub clusters: u64,
    /// Clusters per batch (at least 1).
    pub batch_size: u64,
    /// Whether the next batch waits for the previous one to be ready.
    pub wait_for_ready: bool,
    /// Failed clusters beyond this many pause the rollout.
    pub tolerated_failures: u64,
    /// The pause after each batch, in milliseconds.
    pub pause_ms: u64,
    /// How long a batch may take to be ready, in milliseconds.
    pub ready_timeout_ms: u64,
}

impl RolloutPlan {
    /// How many batches there are.
    #[must_use]
    pub fn batches(&self) -> u64 {
        self.clusters.div_ceil(self.batch_size.max(1))
    }

    /// The batches of `clusters` (which must be the rollout's clusters in their rollout order): consecutive
    /// runs of [`RolloutPlan::batch_size`].
    #[must_use]
    pub fn batches_of<'a>(&self, clusters: &'a [String]) -> Vec<&'a [String]> {
        let size = usize::try_from(self.batch_size.max(1)).unwrap_or(usize::MAX);
        clusters.chunks(size).collect()
    }
}

/// Where a rollout stands, as rsync records it in the AppContext after each batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutProgress {
    /// The plan.
    pub plan: RolloutPlan,
    /// How many batches are done (applied, and ready or failed).
    pub batches_done: u64,
    /// The clusters that failed (their apply failed, or they were not ready in time), in the order found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// Failures a `/resume` accepted: only failures beyond these count against the threshold again.
    #[serde(default)]
    pub accepted_failures: u64,
    /// Whether the rollout is paused (past the failure threshold) until a `/resume`.
    #[serde(default)]
    pub paused: bool,
    /// When the last batch was done (RFC 3339; none before the first): since then the clusters of later batches
    /// wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_batch_at: Option<String>,
}

impl RolloutProgress {
    /// A rollout that has not started.
    #[must_use]
    pub fn new(plan: RolloutPlan) -> Self {
        Self {
            plan,
            batches_done: 0,
            failed: Vec::new(),
            accepted_failures: 0,
            paused: false,
            last_batch_at: None,
        }
    }

    /// How many clusters the done batches reached.
    #[must_use]
    pub fn clusters_reached(&self) -> u64 {
        self.batches_done
            .saturating_mul(self.plan.batch_size)
            .min(self.plan.clusters)
    }

    /// How many reached clusters did not fail.
    #[must_use]
    pub fn clusters_updated(&self) -> u64 {
        self.clusters_reached().saturating_sub(self.failed.len() as u64)
    }

    /// Whether the failures since the last `/resume` are past the threshold.
    #[must_use]
    pub fn past_threshold(&self) -> bool {
        (self.failed.len() as u64).saturating_sub(self.accepted_failures) > self.plan.tolerated_failures
    }

    /// Whether every batch is done.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.batches_done >= self.plan.batches()
    }

    /// The state in one word: `Paused`, `Complete` or `Running`.
    #[must_use]
    pub fn state(&self) -> &'static str {
        if self.paused {
            "Paused"
        } else if self.is_complete() {
            "Complete"
        } else {
            "Running"
        }
    }

    /// The batch the rollout is at, counting from 1: the last one done while paused or complete, the running
    /// one otherwise.
    #[must_use]
    pub fn batch(&self) -> u64 {
        if self.paused || self.is_complete() {
            self.batches_done.max(1).min(self.plan.batches().max(1))
        } else {
            self.batches_done + 1
        }
    }

    /// `batch 3/20, 150/1000 clusters updated, 2 failed`, and `(paused)` when paused.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut text = format!(
            "batch {}/{}, {}/{} clusters updated, {} failed",
            self.batch(),
            self.plan.batches(),
            self.clusters_updated(),
            self.plan.clusters,
            self.failed.len()
        );
        if self.paused {
            text.push_str(" (paused)");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(body: serde_json::Value) -> RolloutSpec {
        serde_json::from_value(body).unwrap()
    }

    #[test]
    fn batch_size_is_bounded_by_max_unavailable_and_percentages_round_down() {
        let both = spec(json!({"maxUnavailableClusters": "10%", "batchSize": 50}));
        assert_eq!(both.plan(1000).batch_size, 50);
        assert_eq!(both.plan(200).batch_size, 20);
        assert_eq!(
            both.plan(5).batch_size,
            1,
            "10% of 5 rounds down to 0: one cluster at a time"
        );
        let only_bound = spec(json!({"maxUnavailableClusters": 3}));
        assert_eq!(only_bound.plan(20).batch_size, 3);
        assert_eq!(only_bound.plan(20).batches(), 7);
        let neither = spec(json!({}));
        assert_eq!((neither.plan(20).batch_size, neither.plan(20).batches()), (20, 1));
        assert!(neither.plan(20).wait_for_ready);
        assert_eq!(neither.plan(0).batches(), 0);
    }

    #[test]
    fn the_threshold_counts_failures_since_the_last_resume() {
        let plan =
            spec(json!({"batchSize": 5, "failureThreshold": "5%", "pauseBetweenBatches": "30s"})).plan(20);
        assert_eq!(
            (plan.tolerated_failures, plan.pause_ms, plan.ready_timeout_ms),
            (1, 30_000, 300_000)
        );
        let mut progress = RolloutProgress::new(plan);
        progress.batches_done = 2;
        progress.failed = vec!["p+a".into()];
        assert!(!progress.past_threshold());
        progress.failed.push("p+b".into());
        assert!(progress.past_threshold());
        progress.paused = true;
        assert_eq!(
            progress.summary(),
            "batch 2/4, 8/20 clusters updated, 2 failed (paused)"
        );
        progress.accepted_failures = 2;
        progress.paused = false;
        assert!(!progress.past_threshold());
        assert_eq!(progress.batch(), 3);
        progress.batches_done = 4;
        assert_eq!(
            (progress.state(), progress.batch(), progress.clusters_updated()),
            ("Complete", 4, 18)
        );
    }

    #[test]
    fn batches_are_consecutive_runs() {
        let clusters: Vec<String> = (1..=7).map(|n| format!("p+c{n}")).collect();
        let plan = spec(json!({"batchSize": 3})).plan(7);
        let batches = plan.batches_of(&clusters);
        assert_eq!(batches.len() as u64, plan.batches());
        assert_eq!(batches[2], ["p+c7".to_string()]);
    }

    #[test]
    fn invalid_fields_are_named() {
        for (body, field) in [
            (json!({"batchSize": 0}), "spec.rollout.batchSize"),
            (
                json!({"maxUnavailableClusters": "0%"}),
                "spec.rollout.maxUnavailableClusters",
            ),
            (
                json!({"maxUnavailableClusters": "ten"}),
                "spec.rollout.maxUnavailableClusters",
            ),
            (
                json!({"failureThreshold": "101%"}),
                "spec.rollout.failureThreshold",
            ),
            (
                json!({"pauseBetweenBatches": "soon"}),
                "spec.rollout.pauseBetweenBatches",
            ),
            (json!({"readyTimeout": "48h"}), "spec.rollout.readyTimeout"),
        ] {
            let err = spec(body.clone()).validate().unwrap_err();
            assert!(err.to_string().contains(field), "{body}: {err}");
        }
        spec(
            json!({"maxUnavailableClusters": "10%", "batchSize": 50, "waitForReady": true,
            "failureThreshold": "5%", "pauseBetweenBatches": "30s"}),
        )
        .validate()
        .unwrap();
    }
}
