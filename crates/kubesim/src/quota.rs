//! ResourceQuota, as the API server's admission plugin and the quota controller do it. Every create in a
//! namespace with a ResourceQuota (through the API or by the simulated controllers) is measured against each
//! quota whose `spec.hard` limits what the object uses, and refused with Kubernetes' 403 when it would exceed one:
//! object counts (`pods`, `services`, `configmaps`, `secrets`, `persistentvolumeclaims`,
//! `replicationcontrollers`, `resourcequotas`, `count/<resource>[.<group>]`), pod compute resources (`cpu` and
//! `memory` — the requests — `requests.cpu`, `requests.memory`, `limits.cpu`, `limits.memory`, the same for
//! `ephemeral-storage`, `hugepages-<size>`, and `requests.<extended resource>`), and claimed storage (`requests.storage`, and per storage class
//! `<class>.storageclass.storage.k8s.io/requests.storage` and `…/persistentvolumeclaims`).
//!
//! A pod's usage is Kubernetes' `PodRequests`/`PodLimits`: the sum over its containers, or the largest init
//! container if that is more (sidecars — init containers with `restartPolicy: Always` — add to both), plus
//! `spec.overhead`. Pods that have finished (`Succeeded`, `Failed`) or whose deletion grace has run out use no
//! compute and do not count as `pods`. A quota limiting cpu or memory refuses a pod with a container that does
//! not state that resource (`failed quota: q: must specify limits.cpu for: c1`). Quotas with `spec.scopes` or
//! `spec.scopeSelector` (`BestEffort`, `NotBestEffort`, `Terminating`, `NotTerminating`, `PriorityClass`)
//! measure only the pods in their scope.
//!
//! A controller keeps each quota's `status.hard` and `status.used` current (usage is recounted from the store,
//! so it is released as soon as a pod finishes or is removed).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value as Json, json};

use crate::catalog::{ResourceType, TypeKey};
use crate::error::ApiError;
use crate::store::Store;
use emco_k8s::quantity::Quantity;

/// Measured usage: resource name (`requests.cpu`) to amount.
pub type Usage = BTreeMap<String, Quantity>;

/// What a pod is measured in.
const POD_RESOURCES: &[&str] = &[
    "pods",
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
];

/// The compute resources every container must state when a quota limits them (Kubernetes' `validationSet`).
const MUST_SPECIFY: &[&str] = &[
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// Object counts with a name of their own (besides `count/<resource>`).
const LEGACY_COUNTS: &[&str] = &[
    "pods",
    "services",
    "configmaps",
    "secrets",
    "persistentvolumeclaims",
    "replicationcontrollers",
    "resourcequotas",
];

const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";

/// The type key of ResourceQuotas.
#[must_use]
pub fn quota_key() -> TypeKey {
    TypeKey::new("", "resourcequotas")
}

fn pods_key() -> TypeKey {
    TypeKey::new("", "pods")
}

fn claims_key() -> TypeKey {
    TypeKey::new("", "persistentvolumeclaims")
}

/// The type a `spec.hard` key counts, if it counts objects.
fn counted_type(resource: &str) -> Option<TypeKey> {
    if LEGACY_COUNTS.contains(&resource) {
        return Some(TypeKey::new("", resource));
    }
    let counted = resource.strip_prefix("count/")?;
    let (plural, group) = counted.split_once('.').unwrap_or((counted, ""));
    (!plural.is_empty()).then(|| TypeKey::new(group, plural))
}

/// An extended resource (`example.com/gpu`: a domain other than `kubernetes.io`), which quotas limit only as
/// `requests.<name>`.
fn is_extended(resource: &str) -> bool {
    resource.split_once('/').is_some_and(|(domain, name)| {
        !domain.is_empty()
            && !name.is_empty()
            && domain != "kubernetes.io"
            && !domain.ends_with(".kubernetes.io")
            && !resource.starts_with("requests.")
    })
}

/// The type whose objects a `spec.hard` key measures (none: a key kubesim does not measure).
fn measured_type(resource: &str) -> Option<TypeKey> {
    let requested = resource.strip_prefix("requests.");
    if POD_RESOURCES.contains(&resource)
        || resource.starts_with("hugepages-")
        || requested.is_some_and(|name| name.starts_with("hugepages-") || is_extended(name))
    {
        return Some(pods_key());
    }
    if resource == "requests.storage"
        || resource
            .split_once(STORAGE_CLASS_SUFFIX)
            .is_some_and(|(class, what)| {
                !class.is_empty() && matches!(what, "requests.storage" | "persistentvolumeclaims")
            })
    {
        return Some(claims_key());
    }
    counted_type(resource)
}

/// A quota's limits (`spec.hard`), leaving out values that are not quantities.
fn hard_limits(quota: &Json) -> Usage {
    quota["spec"]["hard"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(resource, value)| Some((resource.clone(), Quantity::from_json(value).ok()?)))
        .collect()
}

fn add_to(usage: &mut Usage, resource: &str, amount: Quantity) {
    match usage.get_mut(resource) {
        Some(total) => *total = total.saturating_add(&amount),
        None => {
            usage.insert(resource.to_string(), amount);
        }
    }
}

/// A container's `resources.<field>` (`requests` or `limits`), leaving out values that are not quantities.
fn resource_list(container: &Json, field: &str) -> Usage {
    container["resources"][field]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(resource, value)| Some((resource.clone(), Quantity::from_json(value).ok()?)))
        .collect()
}

fn add_list(total: &mut Usage, list: &Usage) {
    for (resource, amount) in list {
        add_to(total, resource, *amount);
    }
}

fn max_list(total: &mut Usage, list: &Usage) {
    for (resource, amount) in list {
        match total.get(resource) {
            Some(current) if current >= amount => {}
            _ => {
                total.insert(resource.clone(), *amount);
            }
        }
    }
}

fn containers<'a>(pod: &'a Json, list: &str) -> impl Iterator<Item = &'a Json> {
    pod["spec"][list].as_array().into_iter().flatten()
}

/// A pod's `requests` or `limits` as Kubernetes totals them (`PodRequests`, `PodLimits`).
fn pod_resources(pod: &Json, field: &str) -> Usage {
    let mut total = Usage::new();
    for container in containers(pod, "containers") {
        add_list(&mut total, &resource_list(container, field));
    }
    let mut sidecars = Usage::new();
    let mut init_max = Usage::new();
    for container in containers(pod, "initContainers") {
        let own = resource_list(container, field);
        let effective = if container["restartPolicy"].as_str() == Some("Always") {
            add_list(&mut total, &own);
            add_list(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut with_sidecars = own;
            add_list(&mut with_sidecars, &sidecars);
            with_sidecars
        };
        max_list(&mut init_max, &effective);
    }
    max_list(&mut total, &init_max);
    let overhead: Usage = pod["spec"]["overhead"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(resource, value)| Some((resource.clone(), Quantity::from_json(value).ok()?)))
        .collect();
    for (resource, amount) in overhead {
        // Limits get the overhead only where they are limited at all.
        if field == "requests" || total.contains_key(&resource) {
            add_to(&mut total, &resource, amount);
        }
    }
    total
}

/// Kubernetes' `podComputeUsageHelper`: the quota resources that requests and limits use.
fn compute_usage(requests: &Usage, limits: &Usage) -> Usage {
    let mut usage = Usage::new();
    usage.insert("pods".into(), Quantity::from_units(1));
    for resource in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(request) = requests.get(resource) {
            usage.insert(resource.into(), *request);
            usage.insert(format!("requests.{resource}"), *request);
        }
        if let Some(limit) = limits.get(resource) {
            usage.insert(format!("limits.{resource}"), *limit);
        }
    }
    for (resource, request) in requests {
        if resource.starts_with("hugepages-") {
            usage.insert(resource.clone(), *request);
        }
        if resource.starts_with("hugepages-") || is_extended(resource) {
            usage.insert(format!("requests.{resource}"), *request);
        }
    }
    usage
}

/// Whether a pod still uses compute (Kubernetes' `QuotaV1Pod`): not finished, and not past its deletion grace.
fn uses_compute(pod: &Json, now: jiff::Timestamp) -> bool {
    if matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed")) {
        return false;
    }
    let deletion = pod["metadata"]["deletionTimestamp"]
        .as_str()
        .and_then(|at| at.parse::<jiff::Timestamp>().ok());
    match (deletion, pod["metadata"]["deletionGracePeriodSeconds"].as_i64()) {
        (Some(at), Some(grace)) => now.as_second() <= at.as_second().saturating_add(grace),
        _ => true,
    }
}

/// What one object uses, in every resource a quota can measure it by.
fn object_usage(key: &TypeKey, object: &Json, now: jiff::Timestamp) -> Usage {
    let mut usage = Usage::new();
    let one = Quantity::from_units(1);
    let deleting = crate::meta::is_deleting(object);
    if !deleting {
        let count = if key.group.is_empty() {
            format!("count/{}", key.plural)
        } else {
            format!("count/{}.{}", key.plural, key.group)
        };
        usage.insert(count, one);
        if key.group.is_empty() && LEGACY_COUNTS.contains(&key.plural.as_str()) {
            usage.insert(key.plural.clone(), one);
        }
    }
    if *key == pods_key() {
        usage.remove("pods");
        if uses_compute(object, now) {
            usage.extend(compute_usage(
                &pod_resources(object, "requests"),
                &pod_resources(object, "limits"),
            ));
        }
    } else if *key == claims_key() && !deleting {
        let storage = Quantity::from_json(&object["spec"]["resources"]["requests"]["storage"]).ok();
        if let Some(storage) = storage {
            usage.insert("requests.storage".into(), storage);
        }
        if let Some(class) = object["spec"]["storageClassName"]
            .as_str()
            .filter(|c| !c.is_empty())
        {
            usage.insert(
                format!("{class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"),
                one,
            );
            if let Some(storage) = storage {
                usage.insert(format!("{class}{STORAGE_CLASS_SUFFIX}requests.storage"), storage);
            }
        }
    }
    usage
}

/// The scopes a quota measures (`spec.scopes`, and `spec.scopeSelector.matchExpressions`), as
/// `(scope, operator, values)`.
fn scopes(quota: &Json) -> Vec<(String, String, Vec<String>)> {
    let mut selected: Vec<(String, String, Vec<String>)> = quota["spec"]["scopes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .map(|scope| (scope.to_string(), "Exists".to_string(), Vec::new()))
        .collect();
    for expression in quota["spec"]["scopeSelector"]["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let values = expression["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .map(String::from)
            .collect();
        selected.push((
            expression["scopeName"].as_str().unwrap_or_default().to_string(),
            expression["operator"].as_str().unwrap_or_default().to_string(),
            values,
        ));
    }
    selected
}

/// Whether a pod has no cpu or memory requests or limits at all (QoS class `BestEffort`).
fn is_best_effort(pod: &Json) -> bool {
    containers(pod, "containers")
        .chain(containers(pod, "initContainers"))
        .all(|container| {
            ["requests", "limits"].iter().all(|field| {
                container["resources"][field]
                    .as_object()
                    .is_none_or(|list| !list.contains_key("cpu") && !list.contains_key("memory"))
            })
        })
}

/// A pod's QoS class, as `GetPodQOS` decides it from cpu and memory: `BestEffort` without any requests or
/// limits, `Guaranteed` when every container limits both and the requests equal the limits, else `Burstable`.
#[must_use]
pub fn qos_class(pod: &Json) -> &'static str {
    let mut requests = Usage::new();
    let mut limits = Usage::new();
    let mut guaranteed = true;
    for container in containers(pod, "containers").chain(containers(pod, "initContainers")) {
        let compute = |list: Usage| -> Usage {
            list.into_iter()
                .filter(|(resource, amount)| {
                    matches!(resource.as_str(), "cpu" | "memory") && !amount.is_zero()
                })
                .collect()
        };
        let container_requests = compute(resource_list(container, "requests"));
        let container_limits = compute(resource_list(container, "limits"));
        if !(container_limits.contains_key("cpu") && container_limits.contains_key("memory")) {
            guaranteed = false;
        }
        add_list(&mut requests, &container_requests);
        add_list(&mut limits, &container_limits);
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed
        && requests.len() == limits.len()
        && requests
            .iter()
            .all(|(resource, amount)| limits.get(resource) == Some(amount))
    {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn in_scope(pod: &Json, scope: &str, operator: &str, values: &[String]) -> bool {
    let terminating = pod["spec"]["activeDeadlineSeconds"]
        .as_i64()
        .is_some_and(|seconds| seconds >= 0);
    match scope {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "PriorityClass" => {
            let class = pod["spec"]["priorityClassName"]
                .as_str()
                .filter(|c| !c.is_empty());
            match operator {
                "Exists" => class.is_some(),
                "DoesNotExist" => class.is_none(),
                "In" => class.is_some_and(|c| values.iter().any(|v| v == c)),
                "NotIn" => class.is_none_or(|c| values.iter().all(|v| v != c)),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether a quota measures this object at all (a quota with scopes measures only pods in all its scopes).
fn quota_covers(quota: &Json, key: &TypeKey, object: &Json) -> bool {
    let scopes = scopes(quota);
    scopes.is_empty()
        || (*key == pods_key()
            && scopes
                .iter()
                .all(|(scope, operator, values)| in_scope(object, scope, operator, values)))
}

/// The usage of everything of type `key` in `namespace` that `quota` measures, in the resources of `wanted`.
fn measure(
    store: &Store,
    quota: &Json,
    key: &TypeKey,
    namespace: &str,
    wanted: &BTreeSet<&String>,
    now: jiff::Timestamp,
) -> Usage {
    let mut total = Usage::new();
    for object in store.list(key, Some(namespace)) {
        if !quota_covers(quota, key, &object) {
            continue;
        }
        for (resource, amount) in object_usage(key, &object, now) {
            if wanted.contains(&resource) {
                add_to(&mut total, &resource, amount);
            }
        }
    }
    total
}

fn pretty(usage: &Usage, resources: &[&String]) -> String {
    resources
        .iter()
        .map(|resource| {
            let amount = usage.get(*resource).copied().unwrap_or_else(Quantity::zero);
            format!("{resource}={amount}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Kubernetes' `Constraints` of pods: with a quota limiting cpu or memory, every container must state it. The
/// message lists each missing resource with the containers lacking it (`must specify limits.cpu for: c1`).
fn missing_compute(limited: &[&String], pod: &Json) -> Option<String> {
    let required: Vec<&str> = limited
        .iter()
        .map(|resource| resource.as_str())
        .filter(|resource| MUST_SPECIFY.contains(resource))
        .collect();
    let mut missing: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for container in containers(pod, "containers").chain(containers(pod, "initContainers")) {
        let stated = compute_usage(
            &resource_list(container, "requests"),
            &resource_list(container, "limits"),
        );
        for resource in &required {
            if !stated.contains_key(*resource) {
                missing
                    .entry(resource)
                    .or_default()
                    .insert(container["name"].as_str().unwrap_or_default());
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(resource, names)| {
            format!(
                "{resource} for: {}",
                names.iter().copied().collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    Some(format!("must specify {}", parts.join("; ")))
}

fn forbidden(t: &ResourceType, name: &str, why: &str) -> ApiError {
    let mut error = ApiError::forbidden(format!("{} \"{name}\" is forbidden: {why}", t.qualified()));
    error.details = Some(json!({"name": name, "group": t.group, "kind": t.plural}));
    error
}

/// Refuses the create of `object` (named, defaulted, of type `t`) in `namespace` if a quota there would be
/// exceeded, or if a quota limits compute the pod's containers do not state; the 403 has Kubernetes' message.
pub fn admit_create(store: &Store, t: &ResourceType, namespace: &str, object: &Json) -> Result<(), ApiError> {
    let quotas = store.list(&quota_key(), Some(namespace));
    if quotas.is_empty() {
        return Ok(());
    }
    let key = t.key();
    let name = crate::meta::name(object);
    let now = jiff::Timestamp::now();
    // First every quota's constraints, then every quota's limits, as the admission plugin orders them.
    let mut limiting = Vec::new();
    for quota in &quotas {
        if !quota_covers(quota, &key, object) {
            continue;
        }
        let hard = hard_limits(quota);
        let limited: Vec<&String> = hard
            .keys()
            .filter(|resource| measured_type(resource).as_ref() == Some(&key))
            .collect();
        if limited.is_empty() {
            continue;
        }
        if key == pods_key()
            && let Some(missing) = missing_compute(&limited, object)
        {
            let why = format!("failed quota: {}: {missing}", crate::meta::name(quota));
            return Err(forbidden(t, name, &why));
        }
        limiting.push((quota, hard));
    }
    let requested_usage = object_usage(&key, object, now);
    if let Some((resource, _)) = requested_usage.iter().find(|(_, amount)| amount.is_negative()) {
        let why = format!("quota usage is negative for resource(s): {resource}");
        return Err(forbidden(t, name, &why));
    }
    for (quota, hard) in limiting {
        let requested: Usage = requested_usage
            .iter()
            .filter(|(resource, amount)| hard.contains_key(*resource) && !amount.is_zero())
            .map(|(resource, amount)| (resource.clone(), *amount))
            .collect();
        if requested.is_empty() {
            continue;
        }
        let wanted: BTreeSet<&String> = requested.keys().collect();
        let used = measure(store, quota, &key, namespace, &wanted, now);
        let exceeded: Vec<&String> = requested
            .iter()
            .filter(|(resource, amount)| {
                let total = used
                    .get(*resource)
                    .copied()
                    .unwrap_or_else(Quantity::zero)
                    .saturating_add(amount);
                hard.get(*resource).is_some_and(|limit| total > *limit)
            })
            .map(|(resource, _)| resource)
            .collect();
        if !exceeded.is_empty() {
            let why = format!(
                "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                crate::meta::name(quota),
                pretty(&requested, &exceeded),
                pretty(&used, &exceeded),
                pretty(&hard, &exceeded)
            );
            return Err(forbidden(t, name, &why));
        }
    }
    Ok(())
}

/// Checks the quantities of a pod's container resources, as decoding a Pod does (a 400 naming the field), and
/// that none is negative (a 422, as validation says).
pub fn validate_pod_resources(t: &ResourceType, pod: &Json) -> Result<(), ApiError> {
    for list in ["containers", "initContainers"] {
        for (index, container) in containers(pod, list).enumerate() {
            for field in ["requests", "limits"] {
                for (resource, value) in container["resources"][field].as_object().into_iter().flatten() {
                    let path = format!("spec.{list}[{index}].resources.{field}[{resource}]");
                    let amount = Quantity::from_json(value).map_err(|err| {
                        ApiError::bad_request(format!(
                            "Pod in version \"v1\" cannot be handled as a Pod: {path}: {err}"
                        ))
                    })?;
                    if amount.is_negative() {
                        return Err(ApiError::invalid(
                            t,
                            crate::meta::name(pod),
                            &path,
                            &format!("Invalid value: \"{amount}\": must be greater than or equal to 0"),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Brings `status.hard` and `status.used` of every quota in `namespace` up to date.
pub fn reconcile_namespace(store: &mut Store, namespace: &str) {
    let Some(t) = store.catalog.find_any_version(&quota_key()) else {
        return;
    };
    let now = jiff::Timestamp::now();
    for quota in store.list(&quota_key(), Some(namespace)) {
        let spec_hard = quota["spec"]["hard"].as_object().cloned().unwrap_or_default();
        let mut hard = serde_json::Map::new();
        for (resource, value) in &spec_hard {
            let shown = Quantity::from_json(value).map_or_else(|_| value.clone(), |q| json!(q.to_string()));
            hard.insert(resource.clone(), shown);
        }
        let mut by_type: BTreeMap<TypeKey, BTreeSet<&String>> = BTreeMap::new();
        for resource in spec_hard.keys() {
            if let Some(key) = measured_type(resource) {
                by_type.entry(key).or_default().insert(resource);
            }
        }
        let mut used = serde_json::Map::new();
        for (key, wanted) in &by_type {
            let usage = measure(store, &quota, key, namespace, wanted, now);
            for resource in wanted {
                let amount = usage.get(*resource).copied().unwrap_or_else(Quantity::zero);
                used.insert((*resource).clone(), json!(amount.to_string()));
            }
        }
        let status = json!({"hard": hard, "used": used});
        let _ = store.write_status(&t, namespace, crate::meta::name(&quota), status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(spec: Json) -> Json {
        json!({"metadata": {"name": "p"}, "spec": spec})
    }

    #[test]
    fn hard_keys_name_the_types_they_measure() {
        assert_eq!(counted_type("pods"), Some(pods_key()));
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
        assert_eq!(measured_type("requests.cpu"), Some(pods_key()));
        assert_eq!(measured_type("memory"), Some(pods_key()));
        assert_eq!(measured_type("requests.storage"), Some(claims_key()));
        assert_eq!(
            measured_type("gold.storageclass.storage.k8s.io/requests.storage"),
            Some(claims_key())
        );
        assert_eq!(
            measured_type(".storageclass.storage.k8s.io/requests.storage"),
            None
        );
        assert_eq!(measured_type("services.nodeports"), None);
        assert_eq!(measured_type("requests.example.com/gpu"), Some(pods_key()));
        assert_eq!(measured_type("requests.hugepages-2Mi"), Some(pods_key()));
        assert_eq!(measured_type("example.com/gpu"), None);
        assert_eq!(measured_type("requests.kubernetes.io/thing"), None);
    }

    #[test]
    fn pods_use_the_sum_of_containers_or_the_largest_init_container() {
        let spec = json!({
            "initContainers": [
                {"name": "setup", "resources": {"requests": {"cpu": "2"}, "limits": {"memory": "1Gi"}}},
                {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
            ],
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}},
                {"name": "b", "resources": {"requests": {"cpu": "700m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}},
            ],
            "overhead": {"cpu": "50m"},
        });
        let usage = object_usage(&pods_key(), &pod(spec), jiff::Timestamp::now());
        let shown: BTreeMap<&str, String> = usage.iter().map(|(k, v)| (k.as_str(), v.to_string())).collect();
        // Requests: containers 1200m + sidecar 100m = 1300m < the init container's 2 → 2, plus overhead 50m.
        assert_eq!(shown["requests.cpu"], "2050m");
        assert_eq!(shown["cpu"], "2050m");
        assert_eq!(shown["requests.memory"], "512Mi");
        // Limits: containers 1Gi vs init 1Gi.
        assert_eq!(shown["limits.memory"], "1Gi");
        assert!(!shown.contains_key("limits.cpu"));
        assert_eq!(shown["pods"], "1");
        assert_eq!(shown["count/pods"], "1");

        let gpu = pod(
            json!({"containers": [{"name": "a", "resources": {"requests": {"example.com/gpu": "2"}, "limits": {"example.com/gpu": "2"}}}]}),
        );
        let usage = object_usage(&pods_key(), &gpu, jiff::Timestamp::now());
        assert_eq!(usage["requests.example.com/gpu"].to_string(), "2");
        assert!(!usage.contains_key("limits.example.com/gpu"));

        let finished = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Succeeded"}});
        let usage = object_usage(&pods_key(), &finished, jiff::Timestamp::now());
        assert_eq!(usage.keys().collect::<Vec<_>>(), ["count/pods"]);
    }

    #[test]
    fn missing_compute_names_resources_and_containers_in_order() {
        let spec = pod(json!({"containers": [
            {"name": "c2", "resources": {"requests": {"cpu": "1"}}},
            {"name": "c1", "resources": {}},
        ]}));
        let limits_cpu = "limits.cpu".to_string();
        let requests_cpu = "requests.cpu".to_string();
        let pods = "pods".to_string();
        assert_eq!(
            missing_compute(&[&limits_cpu, &pods, &requests_cpu], &spec).unwrap(),
            "must specify limits.cpu for: c1,c2; requests.cpu for: c1"
        );
        assert_eq!(missing_compute(&[&pods], &spec), None);
    }

    #[test]
    fn qos_classes_follow_requests_and_limits() {
        let with = |resources: Json| pod(json!({"containers": [{"name": "a", "resources": resources}]}));
        assert_eq!(qos_class(&with(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&with(
                json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}})
            )),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&with(
                json!({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}})
            )),
            "Burstable"
        );
        assert_eq!(
            qos_class(&with(json!({"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}))),
            "Burstable"
        );
    }

    #[test]
    fn scopes_select_pods() {
        let best_effort = pod(json!({"containers": [{"name": "a"}]}));
        let burstable = pod(
            json!({"containers": [{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}], "activeDeadlineSeconds": 10, "priorityClassName": "high"}),
        );
        let quota = |spec: Json| json!({"spec": spec});
        let pods = pods_key();
        let be = quota(json!({"scopes": ["BestEffort"]}));
        assert!(quota_covers(&be, &pods, &best_effort));
        assert!(!quota_covers(&be, &pods, &burstable));
        assert!(!quota_covers(&be, &TypeKey::new("", "configmaps"), &json!({})));
        let terminating = quota(json!({"scopes": ["Terminating", "NotBestEffort"]}));
        assert!(quota_covers(&terminating, &pods, &burstable));
        assert!(!quota_covers(&terminating, &pods, &best_effort));
        let high = quota(
            json!({"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}),
        );
        assert!(quota_covers(&high, &pods, &burstable));
        assert!(!quota_covers(&high, &pods, &best_effort));
        assert!(quota_covers(&quota(json!({"hard": {}})), &pods, &best_effort));
    }
}
