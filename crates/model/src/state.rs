//! The lifecycle state of a resource with a lifecycle (deployment intent group, cluster network intents, logical
//! cloud): the state values and the append-only `state.Actions` history of seed 000
//! (`{"State","ContextId","TimeStamp"}`). Which operation may run from which state is `lifecycle.rs`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ContextId;

/// A lifecycle state requested through the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum StateValue {
    /// Created, or modified since it was approved.
    Created,
    /// Approved for instantiation.
    Approved,
    /// Instantiated: an AppContext exists and rsync applies it.
    Instantiated,
    /// Cluster network intents' name for Instantiated.
    Applied,
    /// Terminated: rsync deletes the AppContext's resources.
    Terminated,
    /// The running instantiation was stopped.
    InstantiateStopped,
    /// The running termination was stopped.
    TerminateStopped,
    /// An instantiated resource was updated to a new AppContext.
    Updated,
}

impl StateValue {
    /// The state as EMCO writes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "Created",
            Self::Approved => "Approved",
            Self::Instantiated => "Instantiated",
            Self::Applied => "Applied",
            Self::Terminated => "Terminated",
            Self::InstantiateStopped => "InstantiateStopped",
            Self::TerminateStopped => "TerminateStopped",
            Self::Updated => "Updated",
        }
    }
}

impl fmt::Display for StateValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StateValue {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        serde_json::from_value(serde_json::Value::String(s.to_string()))
            .map_err(|_| format!("'{}' is not a lifecycle state", crate::names::shown(s)))
    }
}

/// One entry of the lifecycle history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Action {
    /// The state entered.
    #[serde(rename = "State")]
    pub state: StateValue,
    /// The AppContext the action concerns; `""` for Created and Approved.
    #[serde(rename = "ContextId", with = "optional_context_id")]
    #[schemars(with = "String")]
    pub context_id: Option<ContextId>,
    /// When the action was requested: RFC 3339 UTC with at most millisecond precision.
    #[serde(rename = "TimeStamp")]
    pub timestamp: String,
    /// What made an update's actions, when it was not a plain `/update`: `rollback to revision 1`, `migrated to
    /// v2/dig2`, `migrated from v1/dig1` (emco's own; EMCO's clients ignore it).
    #[serde(rename = "Note", default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The lifecycle history of a resource; the current state is that of the last action.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StateInfo {
    /// Every action ever taken, oldest first; never shortened.
    #[serde(rename = "Actions")]
    pub actions: Vec<Action>,
    /// The last change made to the resource (or what it is built from) while it was instantiated, which no
    /// action has followed yet (an `/update` would apply it).
    #[serde(rename = "Modified", default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<Modification>,
}

/// A change made to an instantiated resource that only an `/update` applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Modification {
    /// When it was made.
    #[serde(rename = "TimeStamp")]
    pub timestamp: String,
    /// How many actions the history had then: the modification is pending while no action followed it.
    #[serde(rename = "Actions")]
    pub after_actions: usize,
}

impl StateInfo {
    /// A history that starts with `Created` at `timestamp`.
    #[must_use]
    pub fn created(timestamp: String) -> Self {
        Self {
            actions: vec![Action {
                state: StateValue::Created,
                context_id: None,
                timestamp,
                note: None,
            }],
            modified: None,
        }
    }

    /// Records a modification made now (the history as it is).
    pub fn mark_modified(&mut self, timestamp: String) {
        self.modified = Some(Modification {
            timestamp,
            after_actions: self.actions.len(),
        });
    }

    /// The modification no action has followed yet (an `/update` would apply it).
    #[must_use]
    pub fn pending_modification(&self) -> Option<&Modification> {
        self.modified
            .as_ref()
            .filter(|modified| modified.after_actions == self.actions.len())
    }

    /// The current state, if any action was recorded.
    #[must_use]
    pub fn current(&self) -> Option<StateValue> {
        self.actions.last().map(|action| action.state)
    }

    /// The context of the last action that named one: the latest instantiation.
    #[must_use]
    pub fn last_context(&self) -> Option<ContextId> {
        self.actions.iter().rev().find_map(|action| action.context_id)
    }

    /// Every distinct context the history names, oldest first.
    #[must_use]
    pub fn contexts(&self) -> Vec<ContextId> {
        let mut ids: Vec<ContextId> = Vec::new();
        for id in self.actions.iter().filter_map(|action| action.context_id) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }

    /// Appends an action (which ends any pending modification: an update applied it, or the resource left the
    /// state it was made in).
    pub fn push(&mut self, state: StateValue, context_id: Option<ContextId>, timestamp: String) {
        self.push_noted(state, context_id, timestamp, None);
    }

    /// [`StateInfo::push`] with a note saying what made the action (a rollback, a migration).
    pub fn push_noted(
        &mut self,
        state: StateValue,
        context_id: Option<ContextId>,
        timestamp: String,
        note: Option<String>,
    ) {
        self.modified = None;
        self.actions.push(Action {
            state,
            context_id,
            timestamp,
            note,
        });
    }
}

/// The current time as EMCO writes it: RFC 3339 UTC, milliseconds, trailing zeros trimmed
/// (`2020-08-21T05:39:34.64Z`).
#[must_use]
pub fn now_timestamp() -> String {
    format_timestamp(jiff::Timestamp::now())
}

/// Formats a timestamp at millisecond precision with trailing zeros trimmed.
#[must_use]
pub fn format_timestamp(timestamp: jiff::Timestamp) -> String {
    let millis = timestamp.as_millisecond();
    let truncated = jiff::Timestamp::from_millisecond(millis).unwrap_or(timestamp);
    // jiff's Display for Timestamp writes UTC with 'Z' and trims trailing fractional zeros, like Go's RFC3339Nano.
    truncated.to_string()
}

mod optional_context_id {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::ContextId;

    pub(super) fn serialize<S: Serializer>(id: &Option<ContextId>, serializer: S) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => serializer.collect_str(id),
            None => serializer.serialize_str(""),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<ContextId>, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.is_empty() {
            Ok(None)
        } else {
            text.parse().map(Some).map_err(serde::de::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_serialize_as_in_seed_000() {
        let mut info = StateInfo::created("2020-08-21T05:36:54.186Z".to_string());
        info.push(
            StateValue::Instantiated,
            ContextId::new(2621114006130701074),
            "2020-08-21T05:37:28.947Z".into(),
        );
        let json = serde_json::to_string(&info).unwrap();
        assert_eq!(
            json,
            r#"{"Actions":[{"State":"Created","ContextId":"","TimeStamp":"2020-08-21T05:36:54.186Z"},{"State":"Instantiated","ContextId":"2621114006130701074","TimeStamp":"2020-08-21T05:37:28.947Z"}]}"#
        );
        let back: StateInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, info);
        assert!(back.pending_modification().is_none());
        assert_eq!(back.current(), Some(StateValue::Instantiated));
        assert_eq!(back.last_context(), ContextId::new(2621114006130701074));
    }

    #[test]
    fn a_modification_is_pending_until_the_next_action() {
        let mut info = StateInfo::created("2020-08-21T05:36:54.186Z".to_string());
        info.push(StateValue::Instantiated, ContextId::new(7), "t1".into());
        info.mark_modified("t2".into());
        assert_eq!(info.pending_modification().unwrap().timestamp, "t2");
        let json = serde_json::to_string(&info).unwrap();
        assert!(
            json.ends_with(r#""Modified":{"TimeStamp":"t2","Actions":2}}"#),
            "{json}"
        );
        let back: StateInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, info);
        info.push(StateValue::Updated, ContextId::new(7), "t3".into());
        assert!(info.pending_modification().is_none());
        assert!(!serde_json::to_string(&info).unwrap().contains("Modified"));
    }

    #[test]
    fn timestamps_have_millisecond_precision_trimmed() {
        let ts: jiff::Timestamp = "2020-08-21T05:39:34.640999Z".parse().unwrap();
        assert_eq!(format_timestamp(ts), "2020-08-21T05:39:34.64Z");
        let whole: jiff::Timestamp = "2020-08-21T05:39:34Z".parse().unwrap();
        assert_eq!(format_timestamp(whole), "2020-08-21T05:39:34Z");
        assert!(now_timestamp().ends_with('Z'));
    }
}
