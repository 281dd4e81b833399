//! What a pull cluster's agent is asked to do, kept in the (app, cluster) record it concerns: rsync writes the
//! order when a batch for a pull cluster begins, the agent reads it (with the record's resources, the desired state)
//! through emco's agent endpoints, runs it on its cluster and reports the outcome into the same order, which the
//! batch then records as it records a direct cluster's results. The record is the one copy of the desired state.

use emco_model::{Connectivity, ContextId, RsyncStatus, now_timestamp};
use serde::{Deserialize, Serialize};

use crate::AppContexts;
use crate::context::ContextError;

/// The longest message an agent's outcome keeps per resource, in bytes (longer ones are cut).
pub const MAX_AGENT_MESSAGE_BYTES: usize = 1024;
/// The most order outcomes one agent report may carry.
pub const MAX_OUTCOMES_PER_REPORT: usize = 256;
/// The most bundle statuses one agent report may carry.
pub const MAX_BUNDLES_PER_REPORT: usize = 1024;

/// An order to a pull cluster's agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentOrder {
    /// Counts the orders of this record from 1: an outcome names the order it answers, so a late report of an
    /// older order is not taken for the current one.
    pub seq: u64,
    /// What to do.
    pub operation: AgentOperation,
    /// For an update, the context it takes over from (whose objects and hooks it follows); for a handover, the
    /// context that takes over (whose objects stay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<ContextId>,
    /// The tracking label value of the objects, `<first context of the update chain>-<app>`.
    pub label: String,
    /// The namespace of objects that name none.
    pub namespace: String,
    /// Whom the main resources and hooks are applied as (`Impersonate-User`), when not the agent itself: a level-1
    /// logical cloud's service account, `system:serviceaccount:<namespace>:<cloud>-sa`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_as: Option<String>,
    /// When rsync issued it (RFC 3339).
    pub issued_at: String,
    /// What the agent reported, once it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<AgentOutcome>,
}

/// What an order asks, as rsync's batches go: apply (instantiate), update in place, delete (terminate), or hand
/// over to a successor (delete what it no longer holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgentOperation {
    /// Apply the record's resources: CRDs, install hooks, main resources, the bundle.
    Apply,
    /// Apply them over what `other` applied: upgrade hooks.
    Update,
    /// Delete them: delete hooks, main resources in reverse, the rest.
    Delete,
    /// Delete what `other` (the successor) no longer holds.
    Supersede,
}

/// How an order ended on the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgentEnd {
    /// Every resource was handled (some may have failed alone).
    Done,
    /// A hook or a required step failed: the batch failed.
    Failed,
}

/// The outcome of an order, per resource in the record's order (`None`: not touched).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentOutcome {
    /// How it ended.
    pub end: AgentEnd,
    /// Each resource's status and message, in the record's order.
    pub results: Vec<Option<AgentResult>>,
    /// When emco took the report (RFC 3339).
    pub reported_at: String,
}

/// One resource's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentResult {
    /// Applied, Deleted or Failed.
    pub status: RsyncStatus,
    /// The cluster's message when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl AgentOperation {
    /// The word an order is shown with (`apply`, `update`, `delete`, `supersede`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "apply",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::Supersede => "supersede",
        }
    }
}

impl AgentOperation {
    /// Whether an agent may report `status` for a resource of an order of this kind: what rsync itself records
    /// after such a batch (an apply's resource Applied or Failed; a delete's Deleted or Failed, and Applied for
    /// what a handover keeps).
    #[must_use]
    pub fn reportable(self, status: RsyncStatus) -> bool {
        match self {
            Self::Apply | Self::Update => matches!(status, RsyncStatus::Applied | RsyncStatus::Failed),
            Self::Delete | Self::Supersede => matches!(
                status,
                RsyncStatus::Deleted | RsyncStatus::Failed | RsyncStatus::Applied
            ),
        }
    }
}

/// What became of an agent's report of one order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportTaken {
    /// The outcome is in the record, with each resource's status.
    Recorded,
    /// The order is not the record's current one, or was reported already: nothing was written. `current` is the
    /// record's current order, if it has one.
    Stale {
        /// The sequence number of the record's current order.
        current: Option<u64>,
    },
    /// The report does not fit the order: nothing was written; the text says why.
    Refused(String),
}

impl AppContexts {
    /// Records a pull cluster agent's outcome of order `seq` of (context `id`, `app`) on `cluster`: the order's
    /// outcome and each resource's status and message (as a batch's results are recorded), the wait over, the
    /// cluster heard from; nothing when the order is not the current one, was reported already, or the report does
    /// not fit it (one result per resource, statuses such an order ends in).
    pub async fn record_agent_outcome(
        &self,
        id: ContextId,
        app: &str,
        cluster: &str,
        seq: u64,
        end: AgentEnd,
        results: &[Option<AgentResult>],
    ) -> Result<ReportTaken, ContextError> {
        let reported_at = now_timestamp();
        let mut taken = ReportTaken::Stale { current: None };
        self.update_cluster(id, app, cluster, |stored| {
            let Some(order) = stored.agent_order.as_mut() else {
                taken = ReportTaken::Stale { current: None };
                return;
            };
            if order.seq != seq || order.outcome.is_some() {
                taken = ReportTaken::Stale {
                    current: Some(order.seq),
                };
                return;
            }
            if results.len() != stored.resources.len() {
                taken = ReportTaken::Refused(format!(
                    "order {seq} has {} resources; the report gives {} results",
                    stored.resources.len(),
                    results.len()
                ));
                return;
            }
            if let Some((index, result)) = results.iter().enumerate().find_map(|(index, result)| {
                result
                    .as_ref()
                    .filter(|result| !order.operation.reportable(result.status))
                    .map(|result| (index, result))
            }) {
                taken = ReportTaken::Refused(format!(
                    "results[{index}]: an order to {} does not end in {}",
                    order.operation.as_str(),
                    result.status.as_str()
                ));
                return;
            }
            let results: Vec<Option<AgentResult>> = results
                .iter()
                .map(|result| {
                    result.as_ref().map(|result| AgentResult {
                        status: result.status,
                        error: result.error.as_deref().map(bounded_message),
                    })
                })
                .collect();
            for (resource, result) in stored.resources.iter_mut().zip(&results) {
                if let Some(result) = result {
                    resource.status = result.status;
                    resource.error.clone_from(&result.error);
                    resource.updated = Some(reported_at.clone());
                }
            }
            order.outcome = Some(AgentOutcome {
                end,
                results,
                reported_at: reported_at.clone(),
            });
            stored.waiting = None;
            stored.connectivity = Connectivity::Available;
            stored.connectivity_reason = None;
            taken = ReportTaken::Recorded;
        })
        .await?;
        Ok(taken)
    }
}

/// Cuts `message` to [`MAX_AGENT_MESSAGE_BYTES`] at a character boundary.
#[must_use]
pub fn bounded_message(message: &str) -> String {
    if message.len() <= MAX_AGENT_MESSAGE_BYTES {
        return message.to_string();
    }
    let mut cut = MAX_AGENT_MESSAGE_BYTES;
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &message[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_keep_their_shape_and_messages_are_bounded() {
        let order = AgentOrder {
            seq: 2,
            operation: AgentOperation::Update,
            other: ContextId::new(7),
            label: "7-web".into(),
            namespace: "default".into(),
            apply_as: None,
            issued_at: "2026-12-02T10:00:00.000Z".into(),
            outcome: None,
        };
        let text = serde_json::to_string(&order).unwrap();
        assert_eq!(
            text,
            r#"{"seq":2,"operation":"update","other":"7","label":"7-web","namespace":"default","issuedAt":"2026-12-02T10:00:00.000Z"}"#
        );
        assert_eq!(serde_json::from_str::<AgentOrder>(&text).unwrap(), order);
        let long = "é".repeat(MAX_AGENT_MESSAGE_BYTES);
        let cut = bounded_message(&long);
        assert!(cut.len() <= MAX_AGENT_MESSAGE_BYTES + '…'.len_utf8() && cut.ends_with('…'));
        assert_eq!(bounded_message("short"), "short");
    }
}
