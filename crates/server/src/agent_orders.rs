//! Which orders each pull cluster's agent has, kept from the same store changes as the status index (so every
//! replica knows every order, whoever wrote it): per cluster, each (context, app) record holding an agent order,
//! with its sequence number, whether its outcome is in, and the store revision at which the order itself (its
//! sequence number) last changed — an outcome is the agent's own report, not news to send back to it. The records
//! themselves stay the one copy of the desired state; this is the map to them and the doorbell of each cluster's
//! waiting long poll ([`AgentOrders::doorbell`], rung only when an order changes, not at every status write).
//! It also keeps when each pull cluster's agent last reached this replica (a poll or a report), which the clusters'
//! GETs show (`connection.agentLastContact`; each replica knows its own agents' contacts).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use emco_appcontext::ContextChange;
use emco_model::ContextId;
use tokio::sync::Notify;

/// One order as the map keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OrderMark {
    /// The order's sequence number in its record.
    pub(crate) seq: u64,
    /// Whether its outcome is in.
    pub(crate) done: bool,
    /// The store revision at which the map saw the order change (not its outcome come in).
    pub(crate) revision: i64,
}

/// The orders of every pull cluster, and when each one's agent last reached this replica.
#[derive(Default)]
pub(crate) struct AgentOrders {
    clusters: HashMap<String, BTreeMap<(ContextId, String), OrderMark>>,
    doorbells: HashMap<String, Arc<Notify>>,
    contacts: HashMap<String, jiff::Timestamp>,
}

impl AgentOrders {
    /// Starts again from a full load.
    pub(crate) fn clear(&mut self) {
        self.clusters.clear();
        for doorbell in self.doorbells.values() {
            doorbell.notify_waiters();
        }
    }

    /// Takes in one change seen at `revision`.
    pub(crate) fn apply(&mut self, change: &ContextChange, revision: i64) {
        match change {
            ContextChange::Cluster(id, record) => {
                let key = (*id, record.app.clone());
                let Some(order) = &record.agent_order else {
                    // The order went with a rewrite of the record (never by rsync today); forget it.
                    if let Some(orders) = self.clusters.get_mut(&record.cluster)
                        && orders.remove(&key).is_some()
                    {
                        self.ring(&record.cluster);
                    }
                    return;
                };
                let (seq, done) = (order.seq, order.outcome.is_some());
                let orders = self.clusters.entry(record.cluster.clone()).or_default();
                match orders.get_mut(&key) {
                    Some(mark) if mark.seq == seq => mark.done = done,
                    _ => {
                        orders.insert(key, OrderMark { seq, done, revision });
                        self.ring(&record.cluster);
                    }
                }
            }
            ContextChange::ClusterDeleted { id, app, cluster } => {
                if let Some(orders) = self.clusters.get_mut(cluster)
                    && orders.remove(&(*id, app.clone())).is_some()
                {
                    self.ring(cluster);
                }
            }
            ContextChange::MetaDeleted(id) => {
                let mut rung = Vec::new();
                for (cluster, orders) in &mut self.clusters {
                    let before = orders.len();
                    orders.retain(|(context, _), _| context != id);
                    if orders.len() != before {
                        rung.push(cluster.clone());
                    }
                }
                for cluster in rung {
                    self.ring(&cluster);
                }
            }
            ContextChange::Meta(_) | ContextChange::Heard { .. } => {}
        }
    }

    fn ring(&self, cluster: &str) {
        if let Some(doorbell) = self.doorbells.get(cluster) {
            doorbell.notify_waiters();
        }
    }

    /// The doorbell of `cluster`: notified whenever one of its orders changes.
    pub(crate) fn doorbell(&mut self, cluster: &str) -> Arc<Notify> {
        self.doorbells.entry(cluster.to_string()).or_default().clone()
    }

    /// Notes that `cluster`'s agent reached this replica now.
    pub(crate) fn contact(&mut self, cluster: &str) {
        let now = jiff::Timestamp::now();
        match self.contacts.get_mut(cluster) {
            Some(last) => *last = now,
            None => {
                self.contacts.insert(cluster.to_string(), now);
            }
        }
    }

    /// When `cluster`'s agent last reached this replica.
    pub(crate) fn last_contact(&self, cluster: &str) -> Option<jiff::Timestamp> {
        self.contacts.get(cluster).copied()
    }

    /// The orders of `cluster`, in (context, app) order.
    pub(crate) fn orders(&self, cluster: &str) -> Vec<((ContextId, String), OrderMark)> {
        self.clusters
            .get(cluster)
            .map(|orders| orders.iter().map(|(key, mark)| (key.clone(), *mark)).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use emco_appcontext::{AgentOperation, AgentOrder, ClusterRecord};

    use super::*;

    fn record(cluster: &str, seq: Option<u64>) -> ClusterRecord {
        let mut record = ClusterRecord::pending("web", cluster, Vec::new());
        record.agent_order = seq.map(|seq| {
            Box::new(AgentOrder {
                seq,
                operation: AgentOperation::Apply,
                other: None,
                label: "1-web".into(),
                namespace: "default".into(),
                apply_as: None,
                issued_at: "2026-12-02T10:00:00.000Z".into(),
                outcome: None,
            })
        });
        record
    }

    #[test]
    fn marks_move_only_when_an_order_changes() {
        let id = ContextId::new(1).unwrap();
        let mut orders = AgentOrders::default();
        orders.apply(&ContextChange::Cluster(id, record("p+a", None)), 5);
        assert!(orders.orders("p+a").is_empty());
        orders.apply(&ContextChange::Cluster(id, record("p+a", Some(1))), 6);
        orders.apply(&ContextChange::Cluster(id, record("p+b", Some(1))), 6);
        // A status write that leaves the order as it was keeps its revision.
        orders.apply(&ContextChange::Cluster(id, record("p+a", Some(1))), 9);
        assert_eq!(orders.orders("p+a")[0].1.revision, 6);
        let mut reported = record("p+a", Some(1));
        if let Some(order) = reported.agent_order.as_mut() {
            order.outcome = Some(emco_appcontext::AgentOutcome {
                end: emco_appcontext::AgentEnd::Done,
                results: Vec::new(),
                reported_at: "2026-12-02T10:00:01.000Z".into(),
            });
        }
        // Its outcome coming in is no news to the agent that reported it: the mark says so, the revision stays.
        orders.apply(&ContextChange::Cluster(id, reported), 10);
        assert_eq!(
            orders.orders("p+a")[0].1,
            OrderMark {
                seq: 1,
                done: true,
                revision: 6
            }
        );
        orders.apply(&ContextChange::Cluster(id, record("p+a", Some(2))), 12);
        assert_eq!(
            orders.orders("p+a")[0].1,
            OrderMark {
                seq: 2,
                done: false,
                revision: 12
            }
        );
        orders.apply(&ContextChange::MetaDeleted(id), 13);
        assert!(orders.orders("p+a").is_empty() && orders.orders("p+b").is_empty());
    }
}
