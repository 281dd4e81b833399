//! EMCO's hardware-platform-aware placement (`hpa-plc`) and its action controller (`hpa-ac`). Placement: for each
//! hpa-intent of the DIG, the intent's app keeps only the clusters where some node meets every requirement of each
//! resource consumer — non-allocatable ones a node label (`key` = `value`), allocatable ones `requests` units of a
//! resource left on a node for each of the consumer's replicas (`memory` in MB, `cpu` in cores; what the nodes'
//! running pods request is taken off, and each placed replica takes its share) — from what the clusters' nodes
//! report now. A cluster taken away is recorded with the requirement it does not meet; a required (`allOf`) cluster
//! taken away, or every cluster of an app, fails the instantiation naming each cluster and why. Action: each
//! consumer's Deployment gets the replicas, a node selector for each label requirement and, in its container, the
//! requests and limits of each allocatable requirement (`src/hpa-ac/internal/action/action.go`).
//!
//! One difference from EMCO, on purpose: every allocatable requirement of one replica is met on one node (a pod
//! runs on one node), where EMCO counts each resource on its own.

use std::collections::HashMap;
use std::time::Duration;

use emco_appcontext::{Catalog, Exclusion, Kind, NodeReport, ResourcePath, ResourceRecord};
use emco_model::hpa::{HpaConsumer, HpaConsumerSpec, HpaIntent, HpaRequirement, HpaRequirementSpec};
use serde_json::{Value as Json, json};

use super::Result;
use super::controllers::Deployed;

/// The names the placement controller is registered under (EMCO's examples use `hpa-placement-controller-1`).
pub(super) const PLACEMENT_CONTROLLERS: &[&str] =
    &["hpa", "hpa-placement-controller", "hpa-placement-controller-1"];
/// The names the action controller is registered under (EMCO's examples use `hpa-action-controller-1`).
pub(super) const ACTION_CONTROLLERS: &[&str] = &["hpa-action-controller", "hpa-action-controller-1"];
/// How long each cluster has to list its nodes and pods.
pub(super) const NODES_WAIT: Duration = Duration::from_secs(10);
/// Bytes in one unit of a `memory` requirement (EMCO counts memory in MB: 10^6 bytes).
const BYTES_PER_MEMORY_UNIT: i128 = 1_000_000;

/// Each cluster's nodes as read for placement, or why they could not be read.
pub(super) type ClusterNodes = HashMap<String, std::result::Result<Vec<NodeReport>, String>>;

/// Every hpa-intent of a DIG, read for an instantiation.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct HpaIntents {
    intents: Vec<AppNeeds>,
}

/// One hpa-intent: an app and its resource consumers.
#[derive(Debug, Clone, PartialEq)]
struct AppNeeds {
    intent: String,
    app: String,
    consumers: Vec<Consumer>,
}

/// A resource consumer with its requirements.
#[derive(Debug, Clone, PartialEq)]
struct Consumer {
    name: String,
    spec: HpaConsumerSpec,
    requirements: Vec<(String, HpaRequirementSpec)>,
}

/// Reads every hpa-intent of the DIG at `dig` with its consumers and their requirements, in creation order (EMCO's
/// hpa controllers read all of a DIG's hpa-intents, whatever the intent name its intents body gives them).
pub(super) async fn read(catalog: &Catalog, dig: &ResourcePath) -> Result<HpaIntents> {
    let mut intents = Vec::new();
    for (intent_path, intent) in catalog.list_as::<HpaIntent>(Kind::HpaIntent, dig.names()).await? {
        let mut consumers = Vec::new();
        for (consumer_path, consumer) in catalog
            .list_as::<HpaConsumer>(Kind::HpaConsumer, intent_path.names())
            .await?
        {
            let requirements = catalog
                .list_as::<HpaRequirement>(Kind::HpaRequirement, consumer_path.names())
                .await?
                .into_iter()
                .map(|(path, requirement)| (path.name().to_string(), requirement.spec))
                .collect();
            consumers.push(Consumer {
                name: consumer_path.name().to_string(),
                spec: consumer.spec,
                requirements,
            });
        }
        intents.push(AppNeeds {
            intent: intent_path.name().to_string(),
            app: intent.spec.app,
            consumers,
        });
    }
    Ok(HpaIntents { intents })
}

impl HpaIntents {
    /// The apps whose placement the intents narrow.
    pub(super) fn apps(&self) -> impl Iterator<Item = &str> {
        self.intents.iter().map(|intent| intent.app.as_str())
    }
}

/// Where a requirement is described in messages.
fn described(intent: &AppNeeds, consumer: &Consumer, requirement: &str) -> String {
    format!(
        "requirement '{requirement}' of consumer '{}' (hpa intent '{}')",
        consumer.name, intent.intent
    )
}

/// The units of `resource` a requirement of `units` asks for, as nodes count them (memory: MB to bytes).
fn needed(resource: &str, units: i64) -> i128 {
    if resource == "memory" {
        i128::from(units) * BYTES_PER_MEMORY_UNIT
    } else {
        i128::from(units)
    }
}

/// Narrows each app's clusters to those whose nodes meet its hpa-intents (`nodes`: what each cluster reported);
/// `controller` is the name the placement controller runs under.
pub(super) fn place(
    intents: &HpaIntents,
    apps: &mut [Deployed],
    nodes: &ClusterNodes,
    controller: &str,
) -> std::result::Result<(), String> {
    // What each node has left, by app and cluster: replicas placed by one intent take their share before the
    // next intent of the same app; each app starts from what the clusters reported, as EMCO's placement does.
    let mut left: HashMap<(String, String), Vec<NodeReport>> = HashMap::new();
    for intent in &intents.intents {
        let Some(app) = apps.iter_mut().find(|app| app.app == intent.app) else {
            return Err(format!(
                "hpa intent '{}' names app '{}', which the composite app does not have",
                intent.intent, intent.app
            ));
        };
        let mut kept = Vec::new();
        let mut excluded = Vec::new();
        for (index, cluster) in app.clusters.iter().enumerate() {
            let reported = match nodes.get(cluster) {
                Some(Ok(reported)) => reported,
                Some(Err(why)) => {
                    excluded.push((cluster.clone(), format!("its nodes could not be read: {why}")));
                    continue;
                }
                None => {
                    excluded.push((cluster.clone(), "its nodes were not read".to_string()));
                    continue;
                }
            };
            let key = (intent.app.clone(), cluster.clone());
            let mut trial = left.get(&key).cloned().unwrap_or_else(|| reported.clone());
            match fit(intent, &mut trial) {
                Ok(()) => {
                    left.insert(key, trial);
                    kept.push(index);
                }
                Err(why) => excluded.push((cluster.clone(), why)),
            }
        }
        if let Some((cluster, why)) = excluded
            .iter()
            .find(|(cluster, _)| app.required.contains(cluster))
        {
            return Err(format!(
                "hpa intent '{}': app '{}' must run on cluster '{cluster}' (allOf), which does not meet its requirements: {why}",
                intent.intent, intent.app
            ));
        }
        if kept.is_empty() && !excluded.is_empty() {
            let reasons: Vec<String> = excluded
                .iter()
                .map(|(cluster, why)| format!("'{cluster}': {why}"))
                .collect();
            return Err(format!(
                "hpa intent '{}': no cluster of app '{}' meets its requirements ({})",
                intent.intent,
                intent.app,
                reasons.join("; ")
            ));
        }
        app.keep_clusters(&kept);
        app.excluded
            .extend(excluded.into_iter().map(|(cluster, reason)| Exclusion {
                cluster,
                controller: controller.to_string(),
                reason,
            }));
    }
    Ok(())
}

/// Places every replica of every consumer of `intent` on `nodes`, taking each replica's share off the node it
/// lands on; says which requirement cannot be met when one cannot.
fn fit(intent: &AppNeeds, nodes: &mut [NodeReport]) -> std::result::Result<(), String> {
    for consumer in &intent.consumers {
        if consumer.requirements.is_empty() {
            continue;
        }
        // Non-allocatable requirements: the nodes carrying every label.
        let mut candidates: Vec<usize> = (0..nodes.len()).collect();
        for (name, requirement) in consumer.requirements.iter().filter(|(_, r)| !r.is_allocatable()) {
            let (key, value) = (&requirement.resource.key, &requirement.resource.value);
            candidates.retain(|&node| nodes[node].labels.get(key) == Some(value));
            if candidates.is_empty() {
                return Err(format!(
                    "{}: no node is labelled {key}={value}",
                    described(intent, consumer, name)
                ));
            }
        }
        let counted: Vec<&(String, HpaRequirementSpec)> = consumer
            .requirements
            .iter()
            .filter(|(_, requirement)| requirement.is_allocatable())
            .collect();
        if counted.is_empty() {
            continue;
        }
        let replicas = consumer.spec.replicas.unwrap_or(1).max(1);
        for replica in 1..=replicas {
            // The candidate with the most left of the first resource that holds every resource of the replica.
            let fits = |node: &NodeReport| {
                counted.iter().all(|(_, requirement)| {
                    let resource = &requirement.resource;
                    node.available.get(&resource.name).copied().unwrap_or(0)
                        >= needed(&resource.name, resource.requests.unwrap_or(0))
                })
            };
            let first = &counted[0].1.resource.name;
            let chosen = candidates
                .iter()
                .copied()
                .filter(|&node| fits(&nodes[node]))
                .max_by_key(|&node| nodes[node].available.get(first).copied().unwrap_or(0));
            let Some(chosen) = chosen else {
                let (name, requirement) = counted
                    .iter()
                    .find(|(_, requirement)| {
                        let resource = &requirement.resource;
                        !candidates.iter().any(|&node| {
                            nodes[node].available.get(&resource.name).copied().unwrap_or(0)
                                >= needed(&resource.name, resource.requests.unwrap_or(0))
                        })
                    })
                    .copied()
                    .unwrap_or(counted[0]);
                let resource = &requirement.resource;
                let most = candidates
                    .iter()
                    .map(|&node| nodes[node].available.get(&resource.name).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0);
                return Err(format!(
                    "{}: replica {replica} of {replicas} needs {} of {} on one node{}, and the most any node has left is {most}",
                    described(intent, consumer, name),
                    needed(&resource.name, resource.requests.unwrap_or(0)),
                    resource.name,
                    if counted.len() > 1 {
                        " with the replica's other resources"
                    } else {
                        ""
                    },
                ));
            };
            for (_, requirement) in &counted {
                let resource = &requirement.resource;
                if let Some(available) = nodes[chosen].available.get_mut(&resource.name) {
                    *available -= needed(&resource.name, resource.requests.unwrap_or(0));
                }
            }
        }
    }
    Ok(())
}

/// Gives each consumer's Deployment, on every cluster its app kept, the consumer's replicas, a node selector for
/// each label requirement and its container the requests and limits of each allocatable requirement.
pub(super) fn act(intents: &HpaIntents, apps: &mut [Deployed]) -> std::result::Result<(), String> {
    for intent in &intents.intents {
        let Some(app) = apps.iter_mut().find(|app| app.app == intent.app) else {
            return Err(format!(
                "hpa intent '{}' names app '{}', which the composite app does not have",
                intent.intent, intent.app
            ));
        };
        for consumer in &intent.consumers {
            for (cluster, objects) in app.clusters.iter().zip(app.objects.iter_mut()) {
                let failed = |message: String| {
                    format!(
                        "hpa intent '{}', consumer '{}', cluster '{cluster}': {message}",
                        intent.intent, consumer.name
                    )
                };
                let Some(record) = objects
                    .iter_mut()
                    .find(|record| record.kind == "Deployment" && record.name == consumer.spec.name)
                else {
                    return Err(failed(format!(
                        "app '{}' renders no Deployment '{}'",
                        intent.app, consumer.spec.name
                    )));
                };
                let mut object = record.object();
                shape(&mut object, consumer).map_err(failed)?;
                let role = record.role.clone();
                *record = ResourceRecord::pending_object(object).with_role(role);
            }
        }
    }
    Ok(())
}

/// Writes a consumer's replicas and requirements into its Deployment `object`.
fn shape(object: &mut Json, consumer: &Consumer) -> std::result::Result<(), String> {
    let Some(spec) = object.get_mut("spec").and_then(Json::as_object_mut) else {
        return Err("the Deployment has no spec".into());
    };
    if let Some(replicas) = consumer.spec.replicas
        && spec.contains_key("replicas")
    {
        spec.insert("replicas".into(), json!(replicas));
    }
    let Some(pod) = spec
        .get_mut("template")
        .and_then(|template| template.get_mut("spec"))
        .and_then(Json::as_object_mut)
    else {
        return Err("the Deployment has no pod template spec".into());
    };
    for (_, requirement) in &consumer.requirements {
        let resource = &requirement.resource;
        if !requirement.is_allocatable() {
            let selector = pod.entry("nodeSelector").or_insert_with(|| json!({}));
            if !selector.is_object() {
                *selector = json!({});
            }
            selector[&resource.key] = json!(resource.value);
            continue;
        }
        let containers = pod.get_mut("containers").and_then(Json::as_array_mut);
        let names: Vec<String> = containers
            .as_deref()
            .into_iter()
            .flatten()
            .filter_map(|container| container["name"].as_str().map(str::to_string))
            .collect();
        let Some(container) = containers.and_then(|containers| {
            containers
                .iter_mut()
                .find(|container| container["name"].as_str() == Some(consumer.spec.container_name.as_str()))
        }) else {
            return Err(format!(
                "the Deployment has no container '{}' (its containers: {})",
                consumer.spec.container_name,
                names.join(", ")
            ));
        };
        let Some(container) = container.as_object_mut() else {
            return Err("a container of the Deployment is not a mapping".into());
        };
        let resources = container.entry("resources").or_insert_with(|| json!({}));
        if !resources.is_object() {
            *resources = json!({});
        }
        let quantity = |units: i64| needed(&resource.name, units).to_string();
        for (field, units) in [("requests", resource.requests), ("limits", resource.limits)] {
            let Some(units) = units else { continue };
            let list = &mut resources[field];
            if !list.is_object() {
                *list = json!({});
            }
            list[&resource.name] = json!(quantity(units));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn node(name: &str, labels: &[(&str, &str)], available: &[(&str, i128)]) -> NodeReport {
        NodeReport {
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            available: available
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    fn requirement(spec: Json) -> (String, HpaRequirementSpec) {
        let name = if spec["allocatable"] == json!(true) {
            "cpu-4"
        } else {
            "qat"
        };
        (name.to_string(), serde_json::from_value(spec).unwrap())
    }

    fn intents(replicas: i64) -> HpaIntents {
        HpaIntents {
            intents: vec![AppNeeds {
                intent: "hpa-placement-intent-1".into(),
                app: "http-client".into(),
                consumers: vec![Consumer {
                    name: "hpa-placement-consumer-1".into(),
                    spec: serde_json::from_value(
                        json!({"name": "r1-http-client", "container": "http-client", "replicas": replicas}),
                    )
                    .unwrap(),
                    requirements: vec![
                        requirement(
                            json!({"allocatable": false, "resource": {"key": "feature.node.kubernetes.io/intel_qat", "value": "true"}}),
                        ),
                        requirement(
                            json!({"allocatable": true, "resource": {"name": "cpu", "requests": 4, "limits": 4}}),
                        ),
                    ],
                }],
            }],
        }
    }

    fn app(clusters: &[&str], required: &[&str]) -> Deployed {
        let clusters: Vec<String> = clusters.iter().map(|c| c.to_string()).collect();
        let required: Vec<String> = required.iter().map(|c| c.to_string()).collect();
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "r1-http-client"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "http-client", "image": "i"}]}}}});
        let objects = clusters
            .iter()
            .map(|_| vec![ResourceRecord::pending_object(deployment.clone())])
            .collect();
        Deployed::rendered("http-client", &clusters, &required, objects)
    }

    fn reports() -> ClusterNodes {
        let qat = [("feature.node.kubernetes.io/intel_qat", "true")];
        HashMap::from([
            // Two nodes with the label: 6 and 5 cores left; two replicas of 4 cores fit, one on each.
            (
                "p+edge1".to_string(),
                Ok(vec![
                    node("a", &qat, &[("cpu", 6)]),
                    node("b", &qat, &[("cpu", 5)]),
                    node("c", &[], &[("cpu", 64)]),
                ]),
            ),
            // One labelled node with 6 cores: the second replica does not fit.
            (
                "p+edge2".to_string(),
                Ok(vec![
                    node("a", &qat, &[("cpu", 6)]),
                    node("b", &[], &[("cpu", 64)]),
                ]),
            ),
            // No node with the label.
            ("p+edge3".to_string(), Ok(vec![node("a", &[], &[("cpu", 64)])])),
            ("p+down".to_string(), Err("connection refused".to_string())),
        ])
    }

    #[test]
    fn clusters_whose_nodes_miss_a_requirement_are_taken_away_with_the_requirement_named() {
        let mut apps = vec![app(&["p+edge1", "p+edge2", "p+edge3", "p+down"], &[])];
        place(&intents(2), &mut apps, &reports(), "hpa-placement-controller-1").unwrap();
        assert_eq!(apps[0].clusters, ["p+edge1"]);
        assert_eq!(apps[0].objects.len(), 1);
        let reasons: BTreeMap<&str, &str> = apps[0]
            .excluded
            .iter()
            .map(|exclusion| (exclusion.cluster.as_str(), exclusion.reason.as_str()))
            .collect();
        assert!(
            reasons["p+edge2"].starts_with("requirement 'cpu-4' of consumer 'hpa-placement-consumer-1' (hpa intent 'hpa-placement-intent-1'): replica 2 of 2 needs 4 of cpu on one node"),
            "{}", reasons["p+edge2"]
        );
        assert!(
            reasons["p+edge2"].ends_with("the most any node has left is 2"),
            "{}",
            reasons["p+edge2"]
        );
        assert!(
            reasons["p+edge3"].contains("no node is labelled feature.node.kubernetes.io/intel_qat=true"),
            "{}",
            reasons["p+edge3"]
        );
        assert!(
            reasons["p+down"].contains("connection refused"),
            "{}",
            reasons["p+down"]
        );
        assert!(
            apps[0]
                .excluded
                .iter()
                .all(|exclusion| exclusion.controller == "hpa-placement-controller-1")
        );
        // One replica fits on edge2 as well.
        let mut apps = vec![app(&["p+edge1", "p+edge2", "p+edge3"], &[])];
        place(&intents(1), &mut apps, &reports(), "hpa").unwrap();
        assert_eq!(apps[0].clusters, ["p+edge1", "p+edge2"]);
    }

    #[test]
    fn the_intents_of_one_app_share_what_nodes_have_left_and_each_app_starts_afresh() {
        // edge2's one labelled node has 6 cores: one replica of 4 fits, a second does not.
        let mut second = intents(1).intents.remove(0);
        second.intent = "hpa-placement-intent-2".into();
        let same_app = HpaIntents {
            intents: vec![intents(1).intents.remove(0), second.clone()],
        };
        let mut apps = vec![app(&["p+edge2"], &[])];
        let refused = place(&same_app, &mut apps, &reports(), "hpa").unwrap_err();
        assert!(
            refused.contains("hpa intent 'hpa-placement-intent-2'"),
            "{refused}"
        );
        assert!(refused.contains("the most any node has left is 2"), "{refused}");

        second.app = "sink".into();
        let other_app = HpaIntents {
            intents: vec![intents(1).intents.remove(0), second],
        };
        let mut sink = app(&["p+edge2"], &[]);
        sink.app = "sink".into();
        let mut apps = vec![app(&["p+edge2"], &[]), sink];
        place(&other_app, &mut apps, &reports(), "hpa").unwrap();
        assert_eq!(apps[1].clusters, ["p+edge2"]);
    }

    #[test]
    fn a_required_cluster_or_every_cluster_taken_away_fails_naming_why() {
        let mut apps = vec![app(&["p+edge1", "p+edge3"], &["p+edge3"])];
        let refused = place(&intents(1), &mut apps, &reports(), "hpa").unwrap_err();
        assert!(
            refused.contains("must run on cluster 'p+edge3' (allOf)"),
            "{refused}"
        );
        assert!(refused.contains("no node is labelled"), "{refused}");
        let mut apps = vec![app(&["p+edge2", "p+edge3"], &[])];
        let refused = place(&intents(2), &mut apps, &reports(), "hpa").unwrap_err();
        assert!(
            refused.contains("no cluster of app 'http-client' meets its requirements"),
            "{refused}"
        );
        assert!(refused.contains("'p+edge2': requirement 'cpu-4'"), "{refused}");
        assert!(refused.contains("'p+edge3': requirement 'qat'"), "{refused}");
    }

    #[test]
    fn the_consumer_deployment_gets_replicas_a_node_selector_and_its_container_requests() {
        let mut apps = vec![app(&["p+edge1"], &[])];
        act(&intents(2), &mut apps).unwrap();
        let object = apps[0].objects[0][0].object();
        assert_eq!(object["spec"]["replicas"], json!(2));
        let pod = &object["spec"]["template"]["spec"];
        assert_eq!(
            pod["nodeSelector"],
            json!({"feature.node.kubernetes.io/intel_qat": "true"})
        );
        assert_eq!(
            pod["containers"][0]["resources"],
            json!({"requests": {"cpu": "4"}, "limits": {"cpu": "4"}})
        );
        let mut wrong = intents(1);
        wrong.intents[0].consumers[0].spec.container_name = "sidecar".into();
        let refused = act(&wrong, &mut [app(&["p+edge1"], &[])]).unwrap_err();
        assert!(
            refused.contains("no container 'sidecar' (its containers: http-client)"),
            "{refused}"
        );
        let mut missing = intents(1);
        missing.intents[0].consumers[0].spec.name = "r1-other".into();
        let refused = act(&missing, &mut [app(&["p+edge1"], &[])]).unwrap_err();
        assert!(refused.contains("renders no Deployment 'r1-other'"), "{refused}");
    }

    #[test]
    fn memory_is_asked_in_megabytes_and_written_in_bytes() {
        assert_eq!(needed("memory", 1000), 1_000_000_000);
        assert_eq!(needed("cpu", 4), 4);
    }
}
