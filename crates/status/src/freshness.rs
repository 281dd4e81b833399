//! Whether what a cluster last reported can still be believed (issue #16 §5): a cluster whose monitor died or
//! that dropped off keeps its last ResourceBundleState in the store, so an answer must not show it as truth for
//! ever. Per cluster of a live context (Instantiating, Instantiated), `lastHeard` is the newest `heard_at` over the
//! cluster's (app, cluster) records; the cluster is stale when that is older than the grace, or, never heard from,
//! when the context started longer than the grace ago. A record with a status but no time (kept from before the
//! time was recorded) counts as fresh: nothing says it is old.
//!
//! The clock is the caller's: the answer is written with the `now` and the grace of the request ([`Freshness`]).

use std::collections::HashMap;
use std::time::Duration;

use emco_model::ContextStatus;

use crate::index::ContextEntry;

/// The clock and the grace an answer judges cluster reports by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    /// The time of the answer.
    pub now: jiff::Timestamp,
    /// How long a cluster of a live context may stay silent before its report is no longer believed.
    pub grace: Duration,
}

/// What an answer knows of one cluster's reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterFreshness {
    /// The newest `heard_at` over the cluster's records of the context.
    pub last_heard: Option<jiff::Timestamp>,
    /// Why its report is not believed, when it is stale (`no report from edge03 for 95 s`).
    pub stale: Option<String>,
}

/// The clusters of one context, by `provider+cluster`.
#[derive(Debug, Default)]
pub(crate) struct Staleness<'a> {
    clusters: HashMap<&'a str, ClusterFreshness>,
}

impl Staleness<'_> {
    /// What is known of `full_name` (nothing: fresh, never heard, or not judged).
    pub(crate) fn cluster(&self, full_name: &str) -> Option<&ClusterFreshness> {
        self.clusters.get(full_name)
    }

    /// Whether `full_name`'s report is not believed.
    pub(crate) fn is_stale(&self, full_name: &str) -> bool {
        self.cluster(full_name)
            .is_some_and(|cluster| cluster.stale.is_some())
    }

    /// Whether any cluster is stale.
    pub(crate) fn any_stale(&self) -> bool {
        self.clusters.values().any(|cluster| cluster.stale.is_some())
    }
}

/// Whether a context in `status` expects its clusters to report.
fn expects_reports(status: ContextStatus) -> bool {
    matches!(status, ContextStatus::Instantiating | ContextStatus::Instantiated)
}

/// Whole seconds from `since` to `now` (0 if `since` is later).
pub(crate) fn seconds_between(since: jiff::Timestamp, now: jiff::Timestamp) -> i64 {
    (now.as_millisecond() - since.as_millisecond()).max(0) / 1000
}

/// Whether more than `grace` passed from `since` to `now`.
fn longer_than(since: jiff::Timestamp, now: jiff::Timestamp, grace: Duration) -> bool {
    let grace_ms = i64::try_from(grace.as_millis()).unwrap_or(i64::MAX);
    now.as_millisecond().saturating_sub(since.as_millisecond()) > grace_ms
}

/// When the context's `StatusFresh` took its present status under `freshness` (`None` when unknown or not judged):
/// with stale clusters, when the first of them went stale (its last report, or the context's start if it never
/// reported, plus the grace); with none, when the last of them became fresh again
/// ([`crate::ClusterEntry::fresh_since`]). It depends on the reports alone, not on the time of the answer, so it
/// moves only when the status does.
pub(crate) fn fresh_transition(
    context: &ContextEntry,
    freshness: Option<Freshness>,
    staleness: &Staleness<'_>,
) -> Option<jiff::Timestamp> {
    let Freshness { grace, .. } = freshness.filter(|_| expects_reports(context.status))?;
    let grace_ms = i64::try_from(grace.as_millis()).unwrap_or(i64::MAX);
    let after_grace = |since: jiff::Timestamp| {
        jiff::Timestamp::from_millisecond(since.as_millisecond().saturating_add(grace_ms)).ok()
    };
    if staleness.any_stale() {
        return staleness
            .clusters
            .values()
            .filter(|cluster| cluster.stale.is_some())
            .filter_map(|cluster| cluster.last_heard.or(context.started_at))
            .filter_map(after_grace)
            .min();
    }
    context
        .apps
        .iter()
        .flat_map(|app| &app.clusters)
        .filter_map(|cluster| cluster.fresh_since(grace_ms, context.started_at))
        .max()
}

/// Judges every cluster of `context` by `freshness`; with no `freshness`, every cluster is only described (its
/// `lastHeard`), never stale.
pub(crate) fn judge<'a>(context: &'a ContextEntry, freshness: Option<Freshness>) -> Staleness<'a> {
    // Per cluster: the newest time heard, and whether any record holds a status at all.
    // A cluster rsync deliberately waits on before it applies anything there (a hook, a dependency, its turn in
    // rsync's queue) counts as reporting: nothing there is expected to report yet.
    let mut heard: HashMap<&'a str, (Option<jiff::Timestamp>, bool)> = HashMap::new();
    for app in &context.apps {
        for cluster in &app.clusters {
            let entry = heard.entry(&*cluster.full_name).or_default();
            entry.0 = entry.0.max(cluster.heard_at);
            // (A cluster rsync retries is waited on too, but not deliberately: it stays silent.)
            entry.1 |= cluster.has_bundle
                || (cluster.is_waiting(context)
                    && cluster.connectivity != emco_model::Connectivity::Retrying);
        }
    }
    let live = freshness.filter(|_| expects_reports(context.status));
    let clusters = heard
        .into_iter()
        .map(|(full_name, (last_heard, has_bundle))| {
            let name = full_name.split_once('+').map_or(full_name, |(_, name)| name);
            let stale = live.and_then(
                |Freshness { now, grace }| match (last_heard, context.started_at) {
                    (Some(at), _) => longer_than(at, now, grace)
                        .then(|| format!("no report from {name} for {} s", seconds_between(at, now))),
                    (None, _) if has_bundle => None,
                    (None, Some(started)) => longer_than(started, now, grace).then(|| {
                        format!(
                            "no report from {name} since the deployment started {} s ago",
                            seconds_between(started, now)
                        )
                    }),
                    (None, None) => None,
                },
            );
            (full_name, ClusterFreshness { last_heard, stale })
        })
        .collect();
    Staleness { clusters }
}
