//! Helm hooks and CRDs as EMCO applies them: which rendered objects are hooks (`helm.sh/hook`), their events,
//! weights and delete policies, and the order hooks of one event run in.
//!
//! Classification follows Helm's manifest sorter: an object without the `helm.sh/hook` annotation is not a hook;
//! events are comma-separated, trimmed and case-insensitive (`test-success` is `test`); a weight that is not a
//! decimal integer counts as 0; delete policies Helm does not know are ignored and no policy at all means
//! `before-hook-creation`. An object naming an event Helm does not know is an error here
//! ([`HookError::UnknownEvent`]); Helm itself skips such an object entirely (neither hook nor resource), which is
//! what callers do with the error.

pub use emco_model::{HookDeletePolicy, HookEvent};
use serde_json::Value as Json;

pub use emco_model::Hook;

/// The annotation naming a hook's events.
pub const HOOK_ANNOTATION: &str = "helm.sh/hook";
/// The annotation holding a hook's weight.
pub const WEIGHT_ANNOTATION: &str = "helm.sh/hook-weight";
/// The annotation holding a hook's delete policies.
pub const DELETE_POLICY_ANNOTATION: &str = "helm.sh/hook-delete-policy";

/// Why an object's hook annotations cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    /// `helm.sh/hook` names an event Helm does not know (Helm skips the whole object).
    #[error("unknown hook event '{event}' in helm.sh/hook '{value}'")]
    UnknownEvent {
        /// The unknown event, trimmed.
        event: String,
        /// The whole annotation value.
        value: String,
    },
    /// A hook annotation is not a string (Helm refuses to read such an object).
    #[error("annotation {annotation} must be a string")]
    NotText {
        /// The annotation.
        annotation: &'static str,
    },
}

fn annotation<'a>(object: &'a Json, name: &'static str) -> Result<Option<&'a str>, HookError> {
    match object
        .get("metadata")
        .and_then(|meta| meta.get("annotations"))
        .and_then(|annotations| annotations.get(name))
    {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(text)) => Ok(Some(text)),
        Some(_) => Err(HookError::NotText { annotation: name }),
    }
}

/// Reads a weight as Go's `strconv.Atoi` would: an optional sign and decimal digits within 64 bits; anything
/// else (spaces included) is 0, as in Helm.
#[must_use]
pub fn parse_weight(text: &str) -> i64 {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    text.parse().unwrap_or(0)
}

/// Whether a rendered object is a hook, and if so which: `Ok(None)` for an ordinary object.
pub fn hook_of(object: &Json) -> Result<Option<Hook>, HookError> {
    let Some(value) = annotation(object, HOOK_ANNOTATION)? else {
        return Ok(None);
    };
    let mut events = Vec::new();
    for part in value.split(',') {
        let event = HookEvent::parse(part).ok_or_else(|| HookError::UnknownEvent {
            event: part.trim().to_string(),
            value: value.to_string(),
        })?;
        if !events.contains(&event) {
            events.push(event);
        }
    }
    let weight = annotation(object, WEIGHT_ANNOTATION)?.map_or(0, parse_weight);
    let mut delete_policies = Vec::new();
    if let Some(policies) = annotation(object, DELETE_POLICY_ANNOTATION)? {
        for policy in policies.split(',').filter_map(HookDeletePolicy::parse) {
            if !delete_policies.contains(&policy) {
                delete_policies.push(policy);
            }
        }
    }
    if delete_policies.is_empty() {
        delete_policies.push(HookDeletePolicy::BeforeHookCreation);
    }
    Ok(Some(Hook {
        events,
        weight,
        delete_policies,
    }))
}

/// Orders hooks as Helm runs those of one event: by weight, then by name; equal ones keep their given order.
/// Give them in Helm's kind install order (as [`render_chart`](crate::render_chart) returns manifests), so that
/// kind breaks the remaining ties as in Helm, whose sort is stable over hooks pre-sorted by kind.
pub fn order_hooks<T>(hooks: &mut [T], key: impl Fn(&T) -> (i64, &str)) {
    hooks.sort_by(|a, b| key(a).cmp(&key(b)));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(annotations: Json) -> Json {
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "annotations": annotations}})
    }

    #[test]
    fn ordinary_objects_are_not_hooks() {
        assert_eq!(hook_of(&json!({"kind": "ConfigMap"})), Ok(None));
        assert_eq!(hook_of(&object(json!({"other": "x"}))), Ok(None));
        assert_eq!(hook_of(&object(json!({HOOK_ANNOTATION: null}))), Ok(None));
    }

    #[test]
    fn events_weights_and_policies_are_read_as_helm_reads_them() {
        let hook = hook_of(&object(json!({
            HOOK_ANNOTATION: "pre-install, Post-Install,pre-install",
            WEIGHT_ANNOTATION: "-5",
            DELETE_POLICY_ANNOTATION: "hook-succeeded, hook-failed, sometimes",
        })))
        .unwrap()
        .unwrap();
        assert_eq!(hook.events, [HookEvent::PreInstall, HookEvent::PostInstall]);
        assert_eq!(hook.weight, -5);
        assert_eq!(
            hook.delete_policies,
            [HookDeletePolicy::HookSucceeded, HookDeletePolicy::HookFailed]
        );

        let defaults = hook_of(&object(json!({HOOK_ANNOTATION: "test-success"})))
            .unwrap()
            .unwrap();
        assert_eq!(defaults.events, [HookEvent::Test]);
        assert_eq!(defaults.weight, 0);
        assert_eq!(defaults.delete_policies, [HookDeletePolicy::BeforeHookCreation]);
        let unknown_policy_only = hook_of(&object(
            json!({HOOK_ANNOTATION: "post-delete", DELETE_POLICY_ANNOTATION: "keep"}),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            unknown_policy_only.delete_policies,
            [HookDeletePolicy::BeforeHookCreation]
        );
    }

    #[test]
    fn invalid_weights_count_as_zero_like_go_atoi() {
        for (text, weight) in [
            ("7", 7),
            ("+7", 7),
            ("-12", -12),
            ("", 0),
            (" 5", 0),
            ("5 ", 0),
            ("1.5", 0),
            ("five", 0),
            ("-", 0),
            ("99999999999999999999", 0),
            ("-9223372036854775808", i64::MIN),
        ] {
            assert_eq!(parse_weight(text), weight, "{text:?}");
        }
        let hook = hook_of(&object(
            json!({HOOK_ANNOTATION: "pre-delete", WEIGHT_ANNOTATION: "x"}),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(hook.weight, 0);
    }

    #[test]
    fn unknown_events_and_non_text_annotations_are_errors() {
        assert_eq!(
            hook_of(&object(json!({HOOK_ANNOTATION: "pre-install,crd-install"}))),
            Err(HookError::UnknownEvent {
                event: "crd-install".into(),
                value: "pre-install,crd-install".into()
            })
        );
        assert!(matches!(
            hook_of(&object(json!({HOOK_ANNOTATION: ""}))),
            Err(HookError::UnknownEvent { .. })
        ));
        assert_eq!(
            hook_of(&object(
                json!({HOOK_ANNOTATION: "pre-install", WEIGHT_ANNOTATION: 3})
            )),
            Err(HookError::NotText {
                annotation: WEIGHT_ANNOTATION
            })
        );
    }

    #[test]
    fn hooks_run_by_weight_then_name_keeping_kind_order_for_ties() {
        // Given in kind install order: ServiceAccount, ConfigMap, Job.
        let mut hooks = vec![
            (5, "z", "ServiceAccount"),
            (0, "b", "ServiceAccount"),
            (0, "b", "ConfigMap"),
            (-1, "y", "Job"),
            (0, "a", "Job"),
        ];
        order_hooks(&mut hooks, |(weight, name, _)| (*weight, name));
        assert_eq!(
            hooks,
            [
                (-1, "y", "Job"),
                (0, "a", "Job"),
                (0, "b", "ServiceAccount"),
                (0, "b", "ConfigMap"),
                (5, "z", "ServiceAccount"),
            ]
        );
    }
}
