//! ResourceQuota, for object counts: a create through the API in a namespace with a ResourceQuota whose
//! `spec.hard` limits that kind (`pods`, `services`, `configmaps`, `secrets`, `persistentvolumeclaims`,
//! `replicationcontrollers`, `resourcequotas`, or `count/<resource>[.<group>]`) is refused with Kubernetes' 403
//! when it would exceed the limit; a controller keeps each quota's `status.hard` and `status.used` current.
//!
//! Compute-resource quotas (`requests.cpu`, `limits.memory`, …) are stored and shown but not enforced, and the
//! simulated controllers' own writes (a ReplicaSet's pods) are not admitted against quotas.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use crate::catalog::{ResourceType, TypeKey};
use crate::error::ApiError;
use crate::store::Store;

/// The type key of ResourceQuotas.
#[must_use]
pub fn quota_key() -> TypeKey {
    TypeKey::new("", "resourcequotas")
}

/// The type a `spec.hard` key counts, if it counts objects.
fn counted_type(resource: &str) -> Option<TypeKey> {
    match resource {
        "pods"
        | "services"
        | "configmaps"
        | "secrets"
        | "persistentvolumeclaims"
        | "replicationcontrollers"
        | "resourcequotas" => Some(TypeKey::new("", resource)),
        _ => {
            let counted = resource.strip_prefix("count/")?;
            let (plural, group) = counted.split_once('.').unwrap_or((counted, ""));
            (!plural.is_empty()).then(|| TypeKey::new(group, plural))
        }
    }
}

/// A whole-number quantity (`10`, `"10"`, `"2k"`); none for anything else.
fn whole_quantity(value: &Json) -> Option<u64> {
    if let Some(number) = value.as_u64() {
        return Some(number);
    }
    let text = value.as_str()?.trim();
    let (digits, factor) = match text.strip_suffix('k') {
        Some(digits) => (digits, 1_000),
        None => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(factor)
}

/// The objects of `key` in `namespace` that count against a quota (those being deleted do not).
fn usage(store: &Store, key: &TypeKey, namespace: &str) -> u64 {
    let count = store
        .list(key, Some(namespace))
        .iter()
        .filter(|object| !crate::meta::is_deleting(object))
        .count();
    u64::try_from(count).unwrap_or(u64::MAX)
}

/// Refuses the create of an object `name` of type `t` in `namespace` if a quota there would be exceeded.
pub fn admit_create(store: &Store, t: &ResourceType, namespace: &str, name: &str) -> Result<(), ApiError> {
    let key = t.key();
    for quota in store.list(&quota_key(), Some(namespace)) {
        let Some(hard) = quota["spec"]["hard"].as_object() else {
            continue;
        };
        let mut exceeded = BTreeMap::new();
        for (resource, limit) in hard {
            if counted_type(resource).as_ref() != Some(&key) {
                continue;
            }
            let Some(limit) = whole_quantity(limit) else {
                continue;
            };
            let used = usage(store, &key, namespace);
            if used.saturating_add(1) > limit {
                exceeded.insert(resource.clone(), (used, limit));
            }
        }
        if !exceeded.is_empty() {
            let list = |value: &dyn Fn(&(u64, u64)) -> u64| {
                exceeded
                    .iter()
                    .map(|(resource, numbers)| format!("{resource}={}", value(numbers)))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let mut error = ApiError::forbidden(format!(
                "{} \"{name}\" is forbidden: exceeded quota: {}, requested: {}, used: {}, limited: {}",
                t.qualified(),
                crate::meta::name(&quota),
                list(&|_| 1),
                list(&|(used, _)| *used),
                list(&|(_, limit)| *limit)
            ));
            error.details = Some(json!({"name": name, "group": t.group, "kind": t.plural}));
            return Err(error);
        }
    }
    Ok(())
}

/// Brings `status.hard` and `status.used` of every quota in `namespace` up to date.
pub fn reconcile_namespace(store: &mut Store, namespace: &str) {
    let Some(t) = store.catalog.find_any_version(&quota_key()) else {
        return;
    };
    for quota in store.list(&quota_key(), Some(namespace)) {
        let hard = quota["spec"]["hard"].clone();
        let mut used = serde_json::Map::new();
        for resource in hard.as_object().into_iter().flatten().map(|(k, _)| k) {
            if let Some(key) = counted_type(resource) {
                used.insert(resource.clone(), json!(usage(store, &key, namespace).to_string()));
            }
        }
        let status = json!({"hard": hard, "used": used});
        let _ = store.write_status(&t, namespace, crate::meta::name(&quota), status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_keys_name_the_types_they_count() {
        assert_eq!(counted_type("pods"), Some(TypeKey::new("", "pods")));
        assert_eq!(
            counted_type("count/configmaps"),
            Some(TypeKey::new("", "configmaps"))
        );
        assert_eq!(
            counted_type("count/deployments.apps"),
            Some(TypeKey::new("apps", "deployments"))
        );
        assert_eq!(counted_type("requests.cpu"), None);
        assert_eq!(counted_type("count/"), None);
        assert_eq!(whole_quantity(&json!("3")), Some(3));
        assert_eq!(whole_quantity(&json!(4)), Some(4));
        assert_eq!(whole_quantity(&json!("2k")), Some(2000));
        assert_eq!(whole_quantity(&json!("500m")), None);
    }
}
