//! Garbage collection through ownerReferences (background, foreground and orphan deletion), namespace deletion,
//! and Services' load balancers.

use serde_json::{Value as Json, json};

use super::{Effects, Timer, builtin, key};
use crate::catalog::TypeKey;
use crate::cluster::{ClusterShared, Timing};
use crate::meta;
use crate::store::{DeleteOptions, Store};

fn owner_uids(object: &Json) -> Vec<String> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uid"].as_str().map(String::from))
        .collect()
}

fn uid_exists(store: &Store, uid: &str) -> bool {
    store
        .type_keys()
        .iter()
        .any(|key| store.list(key, None).iter().any(|o| meta::uid(o) == uid))
}

/// Every object that names `uid` as an owner.
fn dependents(store: &Store, uid: &str) -> Vec<(TypeKey, std::sync::Arc<Json>)> {
    let mut found = Vec::new();
    for key in store.type_keys() {
        for object in store.list(&key, None) {
            if owner_uids(&object).iter().any(|u| u == uid) {
                found.push((key.clone(), object));
            }
        }
    }
    found
}

/// An owner was removed: delete dependents whose every owner is gone.
pub(crate) fn collect_dependents(store: &mut Store, uid: &str) {
    for (key, object) in dependents(store, uid) {
        if meta::is_deleting(&object) {
            continue;
        }
        let remaining = owner_uids(&object)
            .into_iter()
            .filter(|u| u != uid)
            .any(|u| uid_exists(store, &u));
        if !remaining && let Some(t) = store.catalog.find_any_version(&key) {
            let _ = store.delete(
                &t,
                meta::namespace(&object),
                meta::name(&object),
                &DeleteOptions {
                    propagation: Some("Background".into()),
                    ..DeleteOptions::default()
                },
            );
        }
    }
}

/// A dependent went away: an owner waiting in foreground deletion may be done.
pub(crate) fn recheck_owner(store: &mut Store, uid: &str) {
    for key in store.type_keys() {
        for object in store.list(&key, None) {
            if meta::uid(&object) == uid && meta::is_deleting(&object) {
                finalize(store, &key, meta::namespace(&object), meta::name(&object));
            }
        }
    }
}

fn drop_finalizer(store: &mut Store, key: &TypeKey, object: &Json, finalizer: &str) {
    let Some(t) = store.catalog.find_any_version(key) else {
        return;
    };
    let mut next = object.clone();
    if let Some(list) = next["metadata"]["finalizers"].as_array_mut() {
        list.retain(|f| f != finalizer);
    }
    let finalizers_empty = next["metadata"]["finalizers"]
        .as_array()
        .is_none_or(Vec::is_empty);
    if finalizers_empty {
        store.remove_now(&t, meta::namespace(object), meta::name(object));
    } else {
        let _ = store.write_object(&t, next);
    }
}

/// Runs the foreground and orphan finalizers of an object being deleted.
pub(crate) fn finalize(store: &mut Store, key: &TypeKey, namespace: &str, name: &str) {
    let Some(object) = store.get(key, namespace, name) else {
        return;
    };
    let finalizers: Vec<String> = object["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(String::from))
        .collect();
    let uid = meta::uid(&object).to_string();
    if finalizers.iter().any(|f| f == "orphan") {
        for (dependent_key, dependent) in dependents(store, &uid) {
            if let Some(t) = store.catalog.find_any_version(&dependent_key) {
                let mut next = (*dependent).clone();
                if let Some(refs) = next["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"].as_str() != Some(&uid));
                    if refs.is_empty()
                        && let Some(meta) = next["metadata"].as_object_mut()
                    {
                        meta.remove("ownerReferences");
                    }
                }
                let _ = store.write_object(&t, next);
            }
        }
        drop_finalizer(store, key, &object, "orphan");
    } else if finalizers.iter().any(|f| f == "foregroundDeletion") {
        let children = dependents(store, &uid);
        if children.is_empty() {
            drop_finalizer(store, key, &object, "foregroundDeletion");
        } else {
            for (dependent_key, dependent) in children {
                if !meta::is_deleting(&dependent)
                    && let Some(t) = store.catalog.find_any_version(&dependent_key)
                {
                    let _ = store.delete(
                        &t,
                        meta::namespace(&dependent),
                        meta::name(&dependent),
                        &DeleteOptions {
                            propagation: Some("Foreground".into()),
                            ..DeleteOptions::default()
                        },
                    );
                }
            }
        }
    }
}

/// Deletes a terminating namespace's objects, then the namespace.
pub(crate) fn reconcile_namespace(store: &mut Store, name: &str) {
    let namespaces = builtin(store, "", "namespaces");
    let Some(namespace) = store.get(&namespaces.key(), "", name) else {
        return;
    };
    if !meta::is_deleting(&namespace) {
        return;
    }
    let mut remaining = 0;
    for key in store.type_keys() {
        let Some(t) = store.catalog.find_any_version(&key) else {
            continue;
        };
        if !t.namespaced {
            continue;
        }
        for object in store.list(&key, Some(name)) {
            remaining += 1;
            if !meta::is_deleting(&object) {
                let _ = store.delete(
                    &t,
                    name,
                    meta::name(&object),
                    &DeleteOptions {
                        grace_period_seconds: Some(0),
                        ..DeleteOptions::default()
                    },
                );
            }
        }
    }
    let left = store
        .type_keys()
        .iter()
        .map(|key| store.list(key, Some(name)).len())
        .sum::<usize>();
    if left == 0 || remaining == 0 {
        store.remove_now(&namespaces, "", name);
    }
}

/// Gives LoadBalancer Services an ingress address after a short delay.
pub(crate) fn reconcile_service(
    store: &mut Store,
    cluster: &ClusterShared,
    namespace: &str,
    name: &str,
    effects: &mut Effects,
) {
    let services = builtin(store, "", "services");
    let Some(service) = store.get(&services.key(), namespace, name) else {
        return;
    };
    if service["spec"]["type"] != "LoadBalancer" || service["status"]["loadBalancer"]["ingress"].is_array() {
        return;
    }
    let created = service["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let waited_ms = created.map_or(0, |c| {
        (jiff::Timestamp::now().as_millisecond() - c.as_millisecond()).max(0) as u64
    });
    let delay = cluster.config.timing.load_balancer_ms;
    if waited_ms + 1000 >= delay {
        let ip = format!("172.18.255.{}", 1 + meta::uid(&service).len() % 200);
        let _ = store.write_status(
            &services,
            namespace,
            name,
            json!({"loadBalancer": {"ingress": [{"ip": ip, "ipMode": "VIP"}]}}),
        );
    } else {
        effects.after(
            Timing::ms(delay - waited_ms),
            Timer::Reconcile(key("", "services", namespace, name)),
        );
    }
}
