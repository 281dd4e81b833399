//! Helm hooks as data: the events a hook runs at (`helm.sh/hook`), its weight (`helm.sh/hook-weight`) and its
//! delete policies (`helm.sh/hook-delete-policy`). emco-helm classifies rendered objects into these, the
//! AppContext stores them with each hook resource, and rsync runs hooks by them.
//!
//! The JSON shape (kebab-case event and policy names, as Helm writes them in annotations) is stored in AppContext
//! records, so it is a compatibility commitment.

use serde::{Deserialize, Serialize};

/// When a hook runs. Helm's names; `test-success` is read as [`HookEvent::Test`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum HookEvent {
    /// Before the release's resources are created.
    PreInstall,
    /// After the release's resources are created.
    PostInstall,
    /// Before the release's resources are deleted.
    PreDelete,
    /// After the release's resources are deleted.
    PostDelete,
    /// Before an upgrade (stored, never run by instantiate or terminate).
    PreUpgrade,
    /// After an upgrade (stored, never run by instantiate or terminate).
    PostUpgrade,
    /// Before a rollback (stored, never run by instantiate or terminate).
    PreRollback,
    /// After a rollback (stored, never run by instantiate or terminate).
    PostRollback,
    /// `helm test` (never put into an AppContext).
    Test,
}

impl HookEvent {
    /// Every event, in Helm's order.
    pub const ALL: [HookEvent; 9] = [
        Self::PreInstall,
        Self::PostInstall,
        Self::PreDelete,
        Self::PostDelete,
        Self::PreUpgrade,
        Self::PostUpgrade,
        Self::PreRollback,
        Self::PostRollback,
        Self::Test,
    ];

    /// The annotation value naming the event.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreInstall => "pre-install",
            Self::PostInstall => "post-install",
            Self::PreDelete => "pre-delete",
            Self::PostDelete => "post-delete",
            Self::PreUpgrade => "pre-upgrade",
            Self::PostUpgrade => "post-upgrade",
            Self::PreRollback => "pre-rollback",
            Self::PostRollback => "post-rollback",
            Self::Test => "test",
        }
    }

    /// Reads an annotation value as Helm does: trimmed, case-insensitive, `test-success` meaning `test`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim().to_ascii_lowercase();
        if text == "test-success" {
            return Some(Self::Test);
        }
        Self::ALL.into_iter().find(|event| event.as_str() == text)
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When a hook's object is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HookDeletePolicy {
    /// Delete an existing object of the hook before creating it (Helm's default when none is given).
    BeforeHookCreation,
    /// Delete the object once the hook succeeded.
    HookSucceeded,
    /// Delete the object when the hook failed.
    HookFailed,
}

impl HookDeletePolicy {
    /// The annotation value naming the policy.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BeforeHookCreation => "before-hook-creation",
            Self::HookSucceeded => "hook-succeeded",
            Self::HookFailed => "hook-failed",
        }
    }

    /// Reads an annotation value as Helm does (trimmed, case-insensitive); `None` for a policy Helm does not
    /// know (Helm keeps such values but never acts on them).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "before-hook-creation" => Some(Self::BeforeHookCreation),
            "hook-succeeded" => Some(Self::HookSucceeded),
            "hook-failed" => Some(Self::HookFailed),
            _ => None,
        }
    }
}

/// What makes a rendered object a hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hook {
    /// The events it runs at, in annotation order, without repeats.
    pub events: Vec<HookEvent>,
    /// Lower weights run first.
    #[serde(default)]
    pub weight: i64,
    /// When its object is deleted; never empty (Helm's default is `before-hook-creation`).
    pub delete_policies: Vec<HookDeletePolicy>,
}

impl Hook {
    /// Whether it is a Helm test hook (`test`, `test-success`): EMCO never applies those.
    #[must_use]
    pub fn is_test(&self) -> bool {
        self.runs_at(HookEvent::Test)
    }

    /// Whether the hook runs at `event`.
    #[must_use]
    pub fn runs_at(&self, event: HookEvent) -> bool {
        self.events.contains(&event)
    }

    /// Whether its object is deleted in the situation `policy` names.
    #[must_use]
    pub fn deletes_on(&self, policy: HookDeletePolicy) -> bool {
        self.delete_policies.contains(&policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_policies_read_as_helm_reads_them() {
        assert_eq!(HookEvent::parse(" Pre-Install "), Some(HookEvent::PreInstall));
        assert_eq!(HookEvent::parse("test-success"), Some(HookEvent::Test));
        assert_eq!(HookEvent::parse("crd-install"), None);
        assert_eq!(HookEvent::parse(""), None);
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::parse(event.as_str()), Some(event));
        }
        assert_eq!(
            HookDeletePolicy::parse("HOOK-SUCCEEDED"),
            Some(HookDeletePolicy::HookSucceeded)
        );
        assert_eq!(HookDeletePolicy::parse("never"), None);
        let hook = Hook {
            events: vec![HookEvent::PostInstall],
            weight: -1,
            delete_policies: vec![HookDeletePolicy::HookSucceeded],
        };
        assert_eq!(
            serde_json::to_value(&hook).unwrap(),
            serde_json::json!({"events": ["post-install"], "weight": -1, "deletePolicies": ["hook-succeeded"]})
        );
    }
}
