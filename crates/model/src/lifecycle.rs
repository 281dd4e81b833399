//! Lifecycles as data: for each kind of resource with a lifecycle (deployment intent groups, cluster network
//! intents, logical clouds), which operation may run from which state and what it appends to `state.Actions`
//! (seed 001; `reference/emco.md` §2.2–2.4). One engine (the server's `lifecycle` module) carries out every
//! operation of every kind; it learns the differences between the kinds only from these tables.

use crate::{Action, StateValue};

/// An operation on a resource with a lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `/approve` (deployment intent groups only).
    Approve,
    /// `/instantiate` (`/apply` for cluster network intents): a new AppContext that rsync applies.
    Instantiate,
    /// `/terminate`: rsync deletes what the last AppContext applied.
    Terminate,
    /// `/stop`: the running instantiation or termination ends.
    Stop,
    /// Changing the resource or what it is built from (its intents, networks, cluster references, …).
    Modify,
    /// Changing only what the resource is built from (a logical cloud's references, permissions, quotas); a
    /// table without rows for it treats it as [`Operation::Modify`].
    ModifyPart,
    /// `/update`: a new AppContext from the resource as it is now, which takes over from the current one (the
    /// objects only the current one has are deleted once the new one is instantiated). A DIG's `/rollback` is an
    /// update to the content of an earlier revision.
    Update,
    /// `/resume`: a progressive rollout paused past its failure threshold goes on with its next batch (DIGs
    /// only; the state does not change).
    Resume,
    /// Deleting the resource.
    Delete,
    /// Deleting something the resource is built from (a DIG's intents, placement intents, app intents); from a
    /// state without a row for it, it counts as [`Operation::ModifyPart`].
    DeletePart,
}

impl Operation {
    /// The operation as a verb for messages.
    #[must_use]
    pub fn verb(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Instantiate => "instantiate",
            Self::Terminate => "terminate",
            Self::Stop => "stop",
            Self::Modify | Self::ModifyPart => "modify",
            Self::Update => "update",
            Self::Resume => "resume",
            Self::Delete | Self::DeletePart => "delete",
        }
    }
}

/// What an operation does from a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It runs and appends this state (for [`Operation::Modify`] and [`Operation::Delete`]: allowed, and the
    /// state returns to it — `Created` — if it is not there already).
    Enter(StateValue),
    /// It is allowed and changes no state (a modification of a Created resource; an `/apply` of applied
    /// network intents).
    Unchanged,
    /// It is refused; the text says why and what to do.
    Refused(&'static str),
}

/// One row of a lifecycle table: `operation` from any of `from` has `outcome`.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The operation.
    pub operation: Operation,
    /// The states it applies from; a resource without history counts as `Created`.
    pub from: &'static [StateValue],
    /// What happens.
    pub outcome: Outcome,
}

/// How an `/update` is recorded in `state.Actions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateRecord {
    /// One action naming the new context (dcm: `Updated`).
    NewContext,
    /// `Updated` naming the context taken over from, then the rule's state naming the new one (the
    /// orchestrator: `Updated`, `Instantiated`; the revision counts up, see [`revisions`]).
    Handover,
}

/// The lifecycle of one kind of resource.
#[derive(Debug)]
pub struct LifecycleTable {
    /// The resource as messages name it (`DeploymentIntentGroup`, `Cluster network intents`, `LogicalCloud`).
    pub subject: &'static str,
    /// The state a successful instantiation is recorded as.
    pub instantiated: StateValue,
    /// How an update is recorded (kinds without an Update rule never use it).
    pub update_record: UpdateRecord,
    /// Whether a modification the table allows from a state an update runs from is recorded
    /// ([`crate::StateInfo::mark_modified`]), so the resource can show it is not up to date.
    pub tracks_modifications: bool,
    /// The rows; an operation from a state no row names is refused with [`LifecycleTable::refusal`].
    pub rules: &'static [Rule],
}

impl LifecycleTable {
    /// What `operation` does from `state` (`None`: no history, which counts as `Created`).
    #[must_use]
    pub fn outcome(&self, operation: Operation, state: Option<StateValue>) -> Outcome {
        let state = state.unwrap_or(StateValue::Created);
        let mut operation = operation;
        let has_rule = |operation: Operation| {
            self.rules
                .iter()
                .any(|rule| rule.operation == operation && rule.from.contains(&state))
        };
        if operation == Operation::DeletePart && !has_rule(Operation::DeletePart) {
            operation = Operation::ModifyPart;
        }
        if operation == Operation::ModifyPart && !self.offers(Operation::ModifyPart) {
            operation = Operation::Modify;
        }
        self.rules
            .iter()
            .find(|rule| rule.operation == operation && rule.from.contains(&state))
            .map_or(Outcome::Refused(self.refusal(operation)), |rule| rule.outcome)
    }

    /// Whether the kind offers `operation` at all.
    #[must_use]
    pub fn offers(&self, operation: Operation) -> bool {
        self.rules.iter().any(|rule| rule.operation == operation)
    }

    /// The states from which `operation` runs (appends a state).
    pub fn runs_from(&self, operation: Operation) -> impl Iterator<Item = StateValue> + '_ {
        self.rules
            .iter()
            .filter(move |rule| rule.operation == operation && matches!(rule.outcome, Outcome::Enter(_)))
            .flat_map(|rule| rule.from.iter().copied())
    }

    /// Why an operation no row allows is refused.
    #[must_use]
    pub fn refusal(&self, operation: Operation) -> &'static str {
        match operation {
            Operation::Approve => "it cannot be approved now",
            Operation::Instantiate => "it cannot be instantiated now",
            Operation::Terminate => "it is not instantiated",
            Operation::Stop => "there is no instantiation or termination to stop",
            Operation::Modify | Operation::ModifyPart => "it cannot be modified now",
            Operation::Update => "only an instantiated resource can be updated",
            Operation::Resume => "only an instantiated DIG has a rollout to resume",
            Operation::Delete | Operation::DeletePart => "it cannot be deleted now",
        }
    }

    /// Whether a modification from `state` is one an `/update` applies later (it must be recorded).
    #[must_use]
    pub fn modification_is_pending_update(&self, state: Option<StateValue>) -> bool {
        self.tracks_modifications
            && matches!(self.outcome(Operation::Update, state), Outcome::Enter(_))
            && matches!(self.outcome(Operation::Modify, state), Outcome::Unchanged)
    }
}

/// The revision of every action of a history kept by [`UpdateRecord::Handover`] (EMCO's orchestrator): an
/// instantiation is revision 1; an `Updated` carries the revision of the instantiation it ends, and the
/// instantiation right after it that revision + 1; every other action 0.
#[must_use]
pub fn revisions(actions: &[Action]) -> Vec<u64> {
    let mut current = 0;
    let mut previous: Option<StateValue> = None;
    let mut revisions = Vec::with_capacity(actions.len());
    for action in actions {
        let revision = match action.state {
            Instantiated | Applied if previous == Some(Updated) => current + 1,
            Instantiated | Applied => 1,
            Updated => current,
            _ => 0,
        };
        if matches!(action.state, Instantiated | Applied) {
            current = revision;
        }
        previous = Some(action.state);
        revisions.push(revision);
    }
    revisions
}

/// The context of revision `revision` within the current instantiation (since the last instantiation that was
/// not an update): EMCO looks for the first action with that revision; an older instantiation's revisions are
/// terminated and not offered.
#[must_use]
pub fn revision_context(actions: &[Action], revision: u64) -> Option<crate::ContextId> {
    let revisions = revisions(actions);
    let start = actions.iter().enumerate().rposition(|(index, action)| {
        matches!(action.state, Instantiated | Applied) && (index == 0 || actions[index - 1].state != Updated)
    })?;
    actions
        .iter()
        .zip(&revisions)
        .skip(start)
        .find(|(action, rev)| **rev == revision && matches!(action.state, Instantiated | Applied))
        .and_then(|(action, _)| action.context_id)
}

use Operation::{
    Approve, Delete, DeletePart, Instantiate, Modify, ModifyPart, Resume, Stop, Terminate, Update,
};
use Outcome::{Enter, Refused, Unchanged};
use StateValue::{
    Applied, Approved, Created, InstantiateStopped, Instantiated, TerminateStopped, Terminated, Updated,
};

const STOPPED: &[StateValue] = &[InstantiateStopped, TerminateStopped];

/// Deployment intent groups (seed 001, `reference/emco.md` §2.2): Created → Approved → Instantiated →
/// Terminated, the stop states; modifying an approved or terminated DIG (or its intents) returns it to Created.
/// An instantiated DIG, its override values and intents may change (recorded, applied by `/update`, which
/// appends `Updated` then `Instantiated`); deleting it or its parts waits for its termination.
pub static DEPLOYMENT_INTENT_GROUP: LifecycleTable = LifecycleTable {
    subject: "DeploymentIntentGroup",
    instantiated: Instantiated,
    update_record: UpdateRecord::Handover,
    tracks_modifications: true,
    rules: &[
        Rule {
            operation: Approve,
            from: &[Approved],
            outcome: Unchanged,
        },
        Rule {
            operation: Approve,
            from: &[Created, Terminated, Updated],
            outcome: Enter(Approved),
        },
        Rule {
            operation: Approve,
            from: &[Instantiated, InstantiateStopped, TerminateStopped],
            outcome: Refused("only a Created or Terminated DIG can be approved"),
        },
        Rule {
            operation: Instantiate,
            from: &[Approved, Terminated, TerminateStopped],
            outcome: Enter(Instantiated),
        },
        Rule {
            operation: Instantiate,
            from: &[Created],
            outcome: Refused("it must be approved before instantiating"),
        },
        Rule {
            operation: Instantiate,
            from: &[Instantiated, InstantiateStopped, Updated],
            outcome: Refused("it has already been instantiated"),
        },
        Rule {
            operation: Terminate,
            from: &[Instantiated, InstantiateStopped],
            outcome: Enter(Terminated),
        },
        Rule {
            operation: Stop,
            from: &[Instantiated],
            outcome: Enter(InstantiateStopped),
        },
        Rule {
            operation: Stop,
            from: &[Terminated],
            outcome: Enter(TerminateStopped),
        },
        Rule {
            operation: Stop,
            from: STOPPED,
            outcome: Refused("it is already stopped"),
        },
        Rule {
            operation: Modify,
            from: &[Created],
            outcome: Unchanged,
        },
        Rule {
            operation: Modify,
            from: &[Approved, Terminated, TerminateStopped, Updated],
            outcome: Enter(Created),
        },
        // Changes to an instantiated DIG wait for `/update`.
        Rule {
            operation: Modify,
            from: &[Instantiated],
            outcome: Unchanged,
        },
        Rule {
            operation: Modify,
            from: &[InstantiateStopped],
            outcome: Refused("the DIG and its intents cannot be modified while stopped; terminate it first"),
        },
        Rule {
            operation: Update,
            from: &[Instantiated],
            outcome: Enter(Instantiated),
        },
        Rule {
            operation: Resume,
            from: &[Instantiated],
            outcome: Unchanged,
        },
        Rule {
            operation: DeletePart,
            from: &[Instantiated, InstantiateStopped],
            outcome: Refused(
                "the intents of an instantiated DIG cannot be deleted (change them and /update); terminate it first",
            ),
        },
        Rule {
            operation: Delete,
            from: &[Created, Approved, Terminated, TerminateStopped, Updated],
            outcome: Unchanged,
        },
        Rule {
            operation: Delete,
            from: &[Instantiated, InstantiateStopped],
            outcome: Refused("it must be terminated before it can be deleted"),
        },
    ],
};

/// Cluster network intents (`reference/emco.md` §2.3; seed 001: "similar to the DIG, lacking Approved, and
/// Instantiated is called Applied"). `/apply` of applied intents and `/terminate` of terminated ones succeed
/// without doing anything, as ncm's do. The state lives on the cluster.
pub static CLUSTER_NETWORK_INTENTS: LifecycleTable = LifecycleTable {
    subject: "Cluster network intents",
    instantiated: Applied,
    update_record: UpdateRecord::NewContext,
    tracks_modifications: false,
    rules: &[
        Rule {
            operation: Instantiate,
            from: &[Created, Terminated, TerminateStopped],
            outcome: Enter(Applied),
        },
        Rule {
            operation: Instantiate,
            from: &[Applied, InstantiateStopped],
            outcome: Unchanged,
        },
        Rule {
            operation: Terminate,
            from: &[Applied, InstantiateStopped],
            outcome: Enter(Terminated),
        },
        Rule {
            operation: Terminate,
            from: &[Terminated, TerminateStopped],
            outcome: Unchanged,
        },
        Rule {
            operation: Terminate,
            from: &[Created],
            outcome: Refused("cluster network intents have not been applied"),
        },
        Rule {
            operation: Stop,
            from: &[Applied],
            outcome: Enter(InstantiateStopped),
        },
        Rule {
            operation: Stop,
            from: &[Terminated],
            outcome: Enter(TerminateStopped),
        },
        Rule {
            operation: Stop,
            from: STOPPED,
            outcome: Refused("it is already stopped"),
        },
        Rule {
            operation: Modify,
            from: &[Created, Terminated, TerminateStopped],
            outcome: Unchanged,
        },
        Rule {
            operation: Modify,
            from: &[Applied, InstantiateStopped],
            outcome: Refused("existing cluster network intents must be terminated before networks change"),
        },
        Rule {
            operation: Delete,
            from: &[Created, Terminated, TerminateStopped],
            outcome: Unchanged,
        },
        Rule {
            operation: Delete,
            from: &[Applied, InstantiateStopped],
            outcome: Refused("its network intents are applied; terminate them first"),
        },
    ],
};

/// Logical clouds (`reference/emco.md` §2.4): Created → Instantiated → Terminated, no Approved; stop is ours
/// (EMCO's dcm records it but never stops anything).
pub static LOGICAL_CLOUD: LifecycleTable = LifecycleTable {
    subject: "LogicalCloud",
    instantiated: Instantiated,
    update_record: UpdateRecord::NewContext,
    tracks_modifications: false,
    rules: &[
        Rule {
            operation: Instantiate,
            from: &[Created, Terminated, TerminateStopped],
            outcome: Enter(Instantiated),
        },
        Rule {
            operation: Instantiate,
            from: &[Instantiated, InstantiateStopped, Updated],
            outcome: Refused("it is already instantiated"),
        },
        Rule {
            operation: Terminate,
            from: &[Instantiated, InstantiateStopped, Updated],
            outcome: Enter(Terminated),
        },
        Rule {
            operation: Stop,
            from: &[Instantiated, Updated],
            outcome: Enter(InstantiateStopped),
        },
        Rule {
            operation: Stop,
            from: &[Terminated],
            outcome: Enter(TerminateStopped),
        },
        Rule {
            operation: Stop,
            from: STOPPED,
            outcome: Refused("it is already stopped"),
        },
        Rule {
            operation: Stop,
            from: &[Created],
            outcome: Refused("it has not been asked to instantiate"),
        },
        Rule {
            operation: Update,
            from: &[Instantiated, Updated],
            outcome: Enter(Updated),
        },
        Rule {
            operation: Modify,
            from: &[Created, Terminated, TerminateStopped],
            outcome: Unchanged,
        },
        Rule {
            operation: Modify,
            from: &[Instantiated, InstantiateStopped, Updated],
            outcome: Refused(
                "an instantiated logical cloud's level, namespace and user cannot change; terminate it first",
            ),
        },
        // Its clusters, permissions and quotas may change while it is instantiated; `/update` applies them.
        Rule {
            operation: ModifyPart,
            from: &[
                Created,
                Instantiated,
                InstantiateStopped,
                Terminated,
                TerminateStopped,
                Updated,
            ],
            outcome: Unchanged,
        },
        Rule {
            operation: Delete,
            from: &[Created, Terminated, TerminateStopped],
            outcome: Unchanged,
        },
        Rule {
            operation: Delete,
            from: &[Instantiated, InstantiateStopped, Updated],
            outcome: Refused("it must be terminated before it can be deleted"),
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY_STATE: [Option<StateValue>; 9] = [
        None,
        Some(Created),
        Some(Approved),
        Some(Instantiated),
        Some(Applied),
        Some(Terminated),
        Some(InstantiateStopped),
        Some(TerminateStopped),
        Some(Updated),
    ];

    #[test]
    fn dig_follows_seed_001() {
        let dig = &DEPLOYMENT_INTENT_GROUP;
        assert_eq!(dig.outcome(Approve, Some(Created)), Enter(Approved));
        assert_eq!(dig.outcome(Approve, Some(Approved)), Unchanged);
        assert_eq!(dig.outcome(Instantiate, Some(Approved)), Enter(Instantiated));
        assert!(matches!(dig.outcome(Instantiate, Some(Created)), Refused(_)));
        assert_eq!(
            dig.outcome(Instantiate, Some(TerminateStopped)),
            Enter(Instantiated)
        );
        assert_eq!(dig.outcome(Stop, Some(Instantiated)), Enter(InstantiateStopped));
        assert_eq!(dig.outcome(Stop, Some(Terminated)), Enter(TerminateStopped));
        assert_eq!(dig.outcome(Modify, Some(Approved)), Enter(Created));
        assert!(matches!(
            dig.outcome(Modify, Some(InstantiateStopped)),
            Refused(_)
        ));
        assert!(matches!(dig.outcome(Terminate, Some(Approved)), Refused(_)));
    }

    #[test]
    fn network_intents_lack_approve_and_call_instantiated_applied() {
        let ncm = &CLUSTER_NETWORK_INTENTS;
        assert!(!ncm.offers(Approve));
        assert_eq!(ncm.outcome(Instantiate, None), Enter(Applied));
        assert_eq!(ncm.outcome(Instantiate, Some(Applied)), Unchanged);
        assert_eq!(ncm.outcome(Terminate, Some(Terminated)), Unchanged);
        assert_eq!(ncm.outcome(Stop, Some(Applied)), Enter(InstantiateStopped));
        assert!(matches!(ncm.outcome(Modify, Some(Applied)), Refused(_)));
        assert!(ncm.runs_from(Instantiate).all(|state| state != Applied));
    }

    #[test]
    fn logical_clouds_instantiate_without_approval() {
        let dcm = &LOGICAL_CLOUD;
        assert_eq!(dcm.outcome(Update, Some(Instantiated)), Enter(Updated));
        assert!(matches!(dcm.outcome(Update, Some(Terminated)), Refused(_)));
        assert!(matches!(dcm.outcome(Modify, Some(Instantiated)), Refused(_)));
        assert_eq!(dcm.outcome(ModifyPart, Some(Instantiated)), Unchanged);
        // Tables without parts rules judge a part's change as the resource's own.
        assert!(matches!(
            DEPLOYMENT_INTENT_GROUP.outcome(ModifyPart, Some(InstantiateStopped)),
            Refused(_)
        ));
        assert!(!CLUSTER_NETWORK_INTENTS.offers(Update));
        // A part's deletion is judged as its change where the table has no rule for it.
        assert_eq!(dcm.outcome(DeletePart, Some(Instantiated)), Unchanged);
        assert!(!dcm.modification_is_pending_update(Some(Instantiated)));
        assert!(!dcm.offers(Approve));
        assert_eq!(dcm.outcome(Instantiate, Some(Created)), Enter(Instantiated));
        assert!(matches!(dcm.outcome(Instantiate, Some(Instantiated)), Refused(_)));
        assert!(matches!(dcm.outcome(Stop, Some(Created)), Refused(_)));
    }

    #[test]
    fn an_instantiated_dig_may_change_and_update_but_not_lose_parts() {
        let dig = &DEPLOYMENT_INTENT_GROUP;
        assert_eq!(dig.outcome(Modify, Some(Instantiated)), Unchanged);
        assert_eq!(dig.outcome(ModifyPart, Some(Instantiated)), Unchanged);
        assert!(matches!(dig.outcome(DeletePart, Some(Instantiated)), Refused(_)));
        assert!(matches!(dig.outcome(Delete, Some(Instantiated)), Refused(_)));
        // Parts of a DIG that is not instantiated are deleted as they are changed.
        assert_eq!(dig.outcome(DeletePart, Some(Approved)), Enter(Created));
        assert_eq!(dig.outcome(DeletePart, Some(Created)), Unchanged);
        assert_eq!(dig.outcome(Update, Some(Instantiated)), Enter(Instantiated));
        for state in [
            Created,
            Approved,
            Terminated,
            InstantiateStopped,
            TerminateStopped,
        ] {
            assert!(matches!(dig.outcome(Update, Some(state)), Refused(_)), "{state}");
            assert!(!dig.modification_is_pending_update(Some(state)), "{state}");
        }
        assert!(dig.modification_is_pending_update(Some(Instantiated)));
        assert_eq!(dig.update_record, UpdateRecord::Handover);
        assert_eq!(LOGICAL_CLOUD.update_record, UpdateRecord::NewContext);
    }

    #[test]
    fn revisions_count_up_with_updates_and_restart_with_instantiation() {
        let id = |n| crate::ContextId::new(n);
        let mut info = crate::StateInfo::created("t".into());
        info.push(Approved, None, "t".into());
        info.push(Instantiated, id(1), "t".into());
        info.push(Updated, id(1), "t".into());
        info.push(Instantiated, id(2), "t".into());
        info.push(Updated, id(2), "t".into());
        info.push(Instantiated, id(3), "t".into());
        assert_eq!(revisions(&info.actions), [0, 0, 1, 1, 2, 2, 3]);
        assert_eq!(revision_context(&info.actions, 1), id(1));
        assert_eq!(revision_context(&info.actions, 3), id(3));
        assert_eq!(revision_context(&info.actions, 4), None);
        info.push(Terminated, id(3), "t".into());
        info.push(Instantiated, id(4), "t".into());
        assert_eq!(revisions(&info.actions)[7..], [0, 1]);
        // The terminated instantiation's revisions are gone: revision 1 is the new instantiation's.
        assert_eq!(revision_context(&info.actions, 1), id(4));
        assert_eq!(revision_context(&info.actions, 2), None);
        assert_eq!(revision_context(&[], 1), None);
    }

    /// Every table answers every (operation, state) pair, and a stop always enters a stop state: the engine
    /// relies on both.
    #[test]
    fn tables_are_total_and_stops_enter_stop_states() {
        for table in [&DEPLOYMENT_INTENT_GROUP, &CLUSTER_NETWORK_INTENTS, &LOGICAL_CLOUD] {
            for state in EVERY_STATE {
                if let Enter(next) = table.outcome(Stop, state) {
                    assert!(STOPPED.contains(&next), "{}: stop from {state:?}", table.subject);
                }
                if let Enter(next) = table.outcome(Instantiate, state) {
                    assert_eq!(next, table.instantiated, "{}", table.subject);
                }
                if let Enter(next) = table.outcome(Terminate, state) {
                    assert_eq!(next, Terminated, "{}", table.subject);
                }
            }
        }
    }
}
