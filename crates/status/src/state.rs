//! The state object of a resource with a lifecycle (seed 002): `{"ready", "message", "conditions"}`, shown as
//! `readiness` at the end of a status answer (seed 000 already uses `state` for the `Actions` history) and as
//! `state` on the GET of a DIG, a cluster and a logical cloud.
//!
//! The conditions, in this order: `last_operation` (`status` `in_progress|succeeded|failed`, `name` the operation),
//! then `Deployed`, `Propagation`, `Ready`, `Stopped` and `StatusFresh`, each `True|False|Unknown` with a `reason`,
//! a `message` and, where known, a `lastTransitionTime`. Whether the resource is `ready` follows its kind's
//! [`Policy`] (data, in [`POLICIES`]); the `message` is that of the first condition the policy requires that is
//! not as required, an operator-actionable sentence (`sink on edge02: Pod fw0-sink-x: …`).
//!
//! A DIG changed while instantiated (its pending modification, `StateInfo::modified`) adds `UpToDate=False`,
//! reason `Modified`, naming the revision it was changed after and the `/update` that applies the change
//! ([`StateObject::name_update_url`] puts the URL in). A DIG's last instantiation that follows an `Updated` is its
//! `Update` operation; a failed one names every cluster that failed.

use serde::Serialize;

use emco_k8s::readiness::Health;
use emco_model::{ContextStatus, ReadyStatus, RsyncStatus, StateInfo, StateValue};

use crate::answer::propagation;
use crate::freshness::{Freshness, fresh_transition, judge};
use crate::index::{ContextEntry, ResourceEntry};
use crate::query::SubjectKind;

/// One condition of a state object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `last_operation`, `Deployed`, `Propagation`, `Ready`, `Stopped` or `StatusFresh`.
    #[serde(rename = "type")]
    pub condition_type: &'static str,
    /// `True|False|Unknown` (`last_operation`: `in_progress|succeeded|failed`).
    pub status: &'static str,
    /// The operation (`last_operation` only): `Create`, `Approve`, `Instantiate`, `Apply`, `Terminate`, `Stop`,
    /// `Update`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'static str>,
    /// One CamelCase word.
    pub reason: String,
    /// What an operator reads.
    pub message: String,
    /// When the status was last set, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// A state object (seed 002).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateObject {
    /// Whether the resource is usable, by its kind's policy.
    pub ready: bool,
    /// Why `ready` is what it is.
    pub message: String,
    /// The conditions, in a fixed order.
    pub conditions: Vec<Condition>,
}

/// Where the `UpToDate` message names the update to POST until [`StateObject::name_update_url`] names it.
const UPDATE_URL_PLACEHOLDER: &str = "…/update";

impl StateObject {
    /// Names the URL of the resource's `/update` in the `UpToDate` condition's message.
    pub fn name_update_url(&mut self, url: &str) {
        for condition in &mut self.conditions {
            if condition.condition_type == "UpToDate" {
                condition.message = condition.message.replace(UPDATE_URL_PLACEHOLDER, url);
            }
        }
    }

    /// The condition of `condition_type`, if present.
    #[must_use]
    pub fn condition(&self, condition_type: &str) -> Option<&Condition> {
        self.conditions
            .iter()
            .find(|condition| condition.condition_type == condition_type)
    }
}

/// How a kind of resource aggregates its conditions into `ready`.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// The kind.
    pub kind: SubjectKind,
    /// The actions that put the resource on its clusters: ready needs the last action (of those the status
    /// follows) to be one of them, and to have succeeded.
    pub deploys: &'static [StateValue],
    /// Actions that do not change which context the status follows (dcm's spec update).
    pub ignored: &'static [StateValue],
    /// The conditions that must be `True` for `ready`, in the order their message is chosen.
    pub requires: &'static [&'static str],
}

/// The policy of each kind (ARCHITECTURE.md, emco-status).
pub const POLICIES: [Policy; 3] = [
    Policy {
        kind: SubjectKind::Dig,
        deploys: &[StateValue::Instantiated, StateValue::Updated],
        ignored: &[],
        requires: &[
            "last_operation",
            "Deployed",
            "Propagation",
            "StatusFresh",
            "Ready",
        ],
    },
    Policy {
        kind: SubjectKind::ClusterNetworks,
        deploys: &[StateValue::Applied],
        ignored: &[],
        requires: &[
            "last_operation",
            "Deployed",
            "Propagation",
            "StatusFresh",
            "Ready",
        ],
    },
    Policy {
        kind: SubjectKind::LogicalCloud,
        deploys: &[StateValue::Instantiated],
        ignored: &[StateValue::Updated],
        requires: &[
            "last_operation",
            "Deployed",
            "Propagation",
            "StatusFresh",
            "Ready",
        ],
    },
];

/// The policy of `kind`.
#[must_use]
pub fn policy(kind: SubjectKind) -> &'static Policy {
    POLICIES
        .iter()
        .find(|policy| policy.kind == kind)
        .unwrap_or(&POLICIES[0])
}

/// The operation an action records.
fn operation(state: StateValue) -> &'static str {
    match state {
        StateValue::Created => "Create",
        StateValue::Approved => "Approve",
        StateValue::Instantiated => "Instantiate",
        StateValue::Applied => "Apply",
        StateValue::Terminated => "Terminate",
        StateValue::InstantiateStopped | StateValue::TerminateStopped => "Stop",
        StateValue::Updated => "Update",
    }
}

fn condition(
    condition_type: &'static str,
    status: &'static str,
    reason: impl Into<String>,
    message: impl Into<String>,
    at: Option<String>,
) -> Condition {
    Condition {
        condition_type,
        status,
        name: None,
        reason: reason.into(),
        message: message.into(),
        last_transition_time: at,
    }
}

/// A health's name (`Ready`, `InProgress`, …).
fn health_name(health: Health) -> &'static str {
    match health {
        Health::Ready => "Ready",
        Health::InProgress => "InProgress",
        Health::Failed => "Failed",
        Health::Terminating => "Terminating",
        Health::Unknown => "Unknown",
    }
}

/// How bad a health is, for choosing which resource the message names (worst first).
fn severity(health: Health) -> u8 {
    match health {
        Health::Failed => 4,
        Health::Terminating => 3,
        Health::Unknown => 2,
        Health::InProgress => 1,
        Health::Ready => 0,
    }
}

/// The state object of a resource of `kind` with history `state`, whose status context is `context` (`None`
/// before its first deployment or while the index has not seen it), judged by `freshness` (`None`: none stale).
#[must_use]
pub fn state_object(
    kind: SubjectKind,
    state: &StateInfo,
    context: Option<&ContextEntry>,
    freshness: Option<Freshness>,
) -> StateObject {
    let policy = policy(kind);
    let last = state
        .actions
        .iter()
        .rev()
        .find(|action| !policy.ignored.contains(&action.state));
    let last_time = last.map(|action| action.timestamp.clone());
    let status = context.map(|context| context.status);
    // An instantiation right after `Updated` is a DIG's update (or rollback).
    let updating = last.is_some_and(|action| action.state == StateValue::Instantiated)
        && state
            .actions
            .iter()
            .rev()
            .nth(1)
            .is_some_and(|before| before.state == StateValue::Updated);
    let operation_of = |action: &emco_model::Action| {
        if updating && action.state == StateValue::Instantiated {
            "Update"
        } else {
            operation(action.state)
        }
    };
    let mut conditions = Vec::with_capacity(6);

    // last_operation: the last action; one that ran on clusters follows its context's status.
    let (op_status, op_reason, op_message) = match (last, status) {
        (None, _) => (
            "succeeded",
            "NoOperation".to_string(),
            "no operation yet".to_string(),
        ),
        (Some(action), _) if action.context_id.is_none() => (
            "succeeded",
            action.state.as_str().to_string(),
            format!("{} succeeded", operation_of(action).to_lowercase()),
        ),
        (Some(action), None) => (
            "in_progress",
            "Pending".to_string(),
            format!(
                "{}: not started on any cluster yet",
                operation_of(action).to_lowercase()
            ),
        ),
        (Some(action), Some(status)) => {
            let verb = operation_of(action).to_lowercase();
            match status {
                ContextStatus::Instantiating | ContextStatus::Terminating | ContextStatus::Updating => (
                    "in_progress",
                    status.as_str().to_string(),
                    progress(context, status, freshness),
                ),
                ContextStatus::InstantiateFailed
                | ContextStatus::TerminateFailed
                | ContextStatus::UpdateFailed => {
                    let first = context
                        .and_then(first_failure)
                        .unwrap_or_else(|| format!("{verb} failed"));
                    let message = match context.map(failed_clusters) {
                        Some(clusters) if updating && !clusters.is_empty() => {
                            format!("update failed on {}: {first}", clusters.join(", "))
                        }
                        _ => first,
                    };
                    ("failed", status.as_str().to_string(), message)
                }
                ContextStatus::Instantiated | ContextStatus::Terminated | ContextStatus::Updated => (
                    "succeeded",
                    status.as_str().to_string(),
                    format!("{verb} succeeded"),
                ),
            }
        }
    };
    conditions.push(Condition {
        condition_type: "last_operation",
        status: op_status,
        name: Some(last.map_or("Create", operation_of)),
        reason: op_reason,
        message: op_message,
        last_transition_time: last_time.clone(),
    });

    let deploying = last.is_some_and(|action| policy.deploys.contains(&action.state));
    conditions.push(match (deploying, status) {
        (true, Some(ContextStatus::Instantiated)) => condition(
            "Deployed",
            "True",
            "Instantiated",
            "every resource applied",
            last_time.clone(),
        ),
        (true, Some(ContextStatus::Instantiating)) => condition(
            "Deployed",
            "False",
            "Instantiating",
            progress(context, ContextStatus::Instantiating, freshness),
            last_time.clone(),
        ),
        (_, Some(status)) if !deploying || status != ContextStatus::Instantiated => {
            let message = match status {
                ContextStatus::InstantiateFailed | ContextStatus::TerminateFailed => context
                    .and_then(first_failure)
                    .unwrap_or_else(|| "the last operation failed".into()),
                _ => format!("not deployed ({})", status.as_str().to_lowercase()),
            };
            condition("Deployed", "False", status.as_str(), message, last_time.clone())
        }
        _ => condition("Deployed", "False", "NotInstantiated", "not deployed yet", None),
    });

    // Propagation: the first cluster rsync could not propagate to.
    let live = context.filter(|_| deploying);
    conditions.push(match live {
        None => condition(
            "Propagation",
            "Unknown",
            "NotDeployed",
            "nothing to propagate",
            None,
        ),
        Some(context) => {
            let problem = context.apps.iter().find_map(|app| {
                app.clusters.iter().find_map(|cluster| {
                    propagation(cluster, context.status).map(|found| {
                        let why = cluster
                            .resources
                            .iter()
                            .find_map(|resource| {
                                (resource.rsync == RsyncStatus::Failed).then(|| resource_failure(resource))
                            })
                            .or_else(|| cluster.connectivity_reason.as_deref().map(str::to_string))
                            .unwrap_or_else(|| "retrying".into());
                        (found, format!("{} on {}: {why}", app.name, cluster.cluster()))
                    })
                })
            });
            let since = context
                .propagation
                .and_then(|(_, since)| since)
                .map(|at| at.to_string());
            match problem {
                Some((found, message)) => condition("Propagation", "False", found.as_str(), message, since),
                None => condition(
                    "Propagation",
                    "True",
                    "Propagated",
                    "every cluster took its resources",
                    since,
                ),
            }
        }
    });

    // StatusFresh, then Ready over the fresh clusters.
    let staleness = live.map(|context| judge(context, freshness));
    let stale_message = live.and_then(|context| {
        let staleness = staleness.as_ref()?;
        context.apps.iter().find_map(|app| {
            app.clusters.iter().find_map(|cluster| {
                staleness
                    .cluster(&cluster.full_name)
                    .and_then(|fresh| fresh.stale.clone())
            })
        })
    });
    let fresh_since = live
        .zip(staleness.as_ref())
        .and_then(|(context, staleness)| fresh_transition(context, freshness, staleness))
        .map(|at| at.to_string());
    conditions.push(match (live, &stale_message) {
        (None, _) => condition(
            "StatusFresh",
            "Unknown",
            "NotDeployed",
            "no cluster is expected to report",
            None,
        ),
        (Some(_), Some(message)) => condition(
            "StatusFresh",
            "False",
            "ClusterSilent",
            message.clone(),
            fresh_since,
        ),
        (Some(_), None) => condition(
            "StatusFresh",
            "True",
            "Fresh",
            "every cluster reported within the grace",
            fresh_since,
        ),
    });

    conditions.push(match live {
        None => condition("Ready", "False", "NotDeployed", "not deployed", None),
        Some(context) => {
            // The worst resource: (severity, message, health, since).
            let mut worst: Option<(u8, String, Health, Option<jiff::Timestamp>)> = None;
            let mut newest: Option<jiff::Timestamp> = None;
            let mut counted = 0_usize;
            for app in &context.apps {
                for cluster in &app.clusters {
                    if staleness
                        .as_ref()
                        .is_some_and(|staleness| staleness.is_stale(&cluster.full_name))
                    {
                        continue;
                    }
                    for resource in cluster.resources.iter().chain(&cluster.cluster_only) {
                        if resource.ready.is_none() {
                            continue;
                        }
                        counted += 1;
                        let since = resource.verdict.as_ref().and_then(|verdict| verdict.since);
                        newest = newest.max(since);
                        if resource.ready == Some(ReadyStatus::Ready) {
                            continue;
                        }
                        let health =
                            resource.verdict.as_ref().map_or(Health::Unknown, |verdict| {
                                match verdict.health {
                                    Health::Ready => Health::InProgress,
                                    health => health,
                                }
                            });
                        let rank = severity(health);
                        if worst.as_ref().is_none_or(|(best, ..)| rank > *best) {
                            let what = resource.verdict.as_ref().map_or_else(
                                || format!("{} {}: not ready", resource.gvk.kind, resource.name),
                                |verdict| verdict.message.to_string(),
                            );
                            worst = Some((
                                rank,
                                format!("{} on {}: {what}", app.name, cluster.cluster()),
                                health,
                                since,
                            ));
                        }
                    }
                }
            }
            match worst {
                Some((_, message, health, since)) => condition(
                    "Ready",
                    "False",
                    health_name(health),
                    message,
                    since.map(|at| at.to_string()),
                ),
                None if stale_message.is_some() => condition(
                    "Ready",
                    "Unknown",
                    "ClusterSilent",
                    stale_message.clone().unwrap_or_default(),
                    None,
                ),
                None => condition(
                    "Ready",
                    "True",
                    "Ready",
                    format!("{counted} resources ready"),
                    newest.map(|at| at.to_string()),
                ),
            }
        }
    });

    let stopped = last.is_some_and(|action| {
        matches!(
            action.state,
            StateValue::InstantiateStopped | StateValue::TerminateStopped
        )
    });
    conditions.push(if stopped {
        condition(
            "Stopped",
            "True",
            "StopRequested",
            "the operation was stopped",
            last_time,
        )
    } else {
        condition("Stopped", "False", "NotStopped", "no stop requested", None)
    });

    // A change made while instantiated waits for /update (DIGs record it).
    if kind == SubjectKind::Dig
        && let Some(modified) = state.pending_modification()
    {
        let revision = emco_model::lifecycle::revisions(&state.actions)
            .last()
            .copied()
            .unwrap_or(0);
        conditions.push(condition(
            "UpToDate",
            "False",
            "Modified",
            format!("modified since revision {revision}; POST {UPDATE_URL_PLACEHOLDER} to apply"),
            Some(modified.timestamp.clone()),
        ));
    }

    let unmet = policy.requires.iter().find_map(|required| {
        let found = conditions
            .iter()
            .find(|condition| condition.condition_type == *required)?;
        let met = if found.condition_type == "last_operation" {
            found.status == "succeeded" && deploying
        } else {
            found.status == "True"
        };
        (!met).then(|| {
            if found.condition_type == "last_operation" && found.status == "succeeded" {
                format!(
                    "not deployed: the last operation was {}",
                    found.name.unwrap_or("Create")
                )
            } else {
                found.message.clone()
            }
        })
    });
    let (ready, message) = match unmet {
        Some(message) => (false, message),
        None => (true, "ready".into()),
    };
    StateObject {
        ready,
        message,
        conditions,
    }
}

/// `instantiating: 8 of 12 resources applied` (terminating: deleted).
/// With what rsync waits for, if anything: `…; app nginx on edge01 waits for pre-install hook Pod/migrate to
/// complete (waiting 40 s, fails at 300 s)`, counted to the answer's time (`freshness`), else to now.
fn progress(context: Option<&ContextEntry>, status: ContextStatus, freshness: Option<Freshness>) -> String {
    let Some(context) = context else {
        return status.as_str().to_lowercase();
    };
    let total: u32 = context.counts.rsync.iter().sum();
    let (done, verb) = if status == ContextStatus::Terminating {
        (context.counts.rsync[RsyncStatus::Deleted as usize], "deleted")
    } else {
        (context.counts.rsync[RsyncStatus::Applied as usize], "applied")
    };
    let mut message = format!(
        "{}: {done} of {total} resources {verb}",
        status.as_str().to_lowercase()
    );
    // What rsync waits for, where it does: the first such cluster, and how many more.
    let now = freshness.map_or_else(jiff::Timestamp::now, |freshness| freshness.now);
    // Only the first wait is put in words: at 10,000 queued clusters the others are counted, not formatted.
    let mut waits = context.apps.iter().flat_map(|app| {
        app.clusters
            .iter()
            .filter(move |cluster| cluster.is_waiting(context))
            .map(move |cluster| (&app.name, cluster))
    });
    if let Some((app, cluster)) = waits.next() {
        if let Some(first) = cluster.waiting_message(app, context, now) {
            message.push_str("; ");
            message.push_str(&first);
        }
        let more = waits.count();
        if more > 0 {
            message.push_str(&format!(" (and {more} more waiting)"));
        }
    }
    message
}

/// `<Kind> <name>: <error>` of a Failed resource.
fn resource_failure(resource: &ResourceEntry) -> String {
    format!(
        "{} {}: {}",
        resource.gvk.kind,
        resource.name,
        resource.error.as_deref().unwrap_or("refused by the cluster")
    )
}

/// The clusters (`provider+cluster`, without repeats, in app order) where a resource of the context failed.
fn failed_clusters(context: &ContextEntry) -> Vec<String> {
    let mut clusters: Vec<String> = Vec::new();
    for app in &context.apps {
        for cluster in &app.clusters {
            let name = cluster.cluster().to_string();
            if cluster
                .resources
                .iter()
                .any(|resource| resource.rsync == RsyncStatus::Failed)
                && !clusters.contains(&name)
            {
                clusters.push(name);
            }
        }
    }
    clusters
}

/// The first Failed resource of a context, as `<app> on <cluster>: <Kind> <name>: <error>`.
fn first_failure(context: &ContextEntry) -> Option<String> {
    context.apps.iter().find_map(|app| {
        app.clusters.iter().find_map(|cluster| {
            cluster
                .resources
                .iter()
                .find(|resource| resource.rsync == RsyncStatus::Failed)
                .map(|resource| {
                    format!(
                        "{} on {}: {}",
                        app.name,
                        cluster.cluster(),
                        resource_failure(resource)
                    )
                })
        })
    })
}
