//! EMCO's `ovnaction` controller: for each workload intent of a DIG's network-controller-intent, the named workload
//! of the app gets, in its pod template, the Multus network `ovn-networkobj` (unless the cluster's kv-pairs say
//! Nodus serves every interface, or another CNI wrapper than Multus) and the `k8s.plugin.opnfv.org/nfn-network`
//! annotation listing its interfaces — the annotations and JSON of `src/ovnaction/pkg/module/resources.go`,
//! merged with what the template already carries. A workload the app does not render is refused, naming it.

use std::collections::{BTreeMap, BTreeSet};

use emco_appcontext::{Catalog, Kind, ResourcePath, ResourceRecord};
use emco_model::ovnaction::{WorkloadIntent, WorkloadInterface, WorkloadInterfaceSpec};
use emco_model::{ClusterKvPairs, validate_name};
use serde_json::{Map, Value as Json, json};

use super::controllers::Deployed;
use super::{LifecycleError, Result};

/// The name ovnaction is registered under in EMCO's examples.
pub(super) const CONTROLLER_NAME: &str = "ovnaction";
/// Multus' annotation: the networks a pod attaches to.
pub(super) const NETWORKS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/networks";
/// ovn4nfv's annotation: the pod's interfaces.
pub(super) const NFN_ANNOTATION: &str = "k8s.plugin.opnfv.org/nfn-network";
/// The Multus network ovnaction attaches: `{"name": "ovn-networkobj", "namespace": "default"}`.
const OVN_NETWORK: &str = "ovn-networkobj";
/// Cluster kv-pair: `"true"` when Nodus is the CNI for every interface (no Multus annotation then).
const KV_NODUS_FOR_ALL: &str = "CNI-Networking-Nodus-CNI-For-all-interfaces";
/// Cluster kv-pair: the multi-CNI wrapper (`multus` when absent).
const KV_MULTI_CNI_WRAPPER: &str = "CNI-Networking-Multi-CNI-Wrapper";

/// A network-controller-intent, read for an instantiation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct OvnIntent {
    name: String,
    workloads: Vec<Workload>,
    /// The clusters (`provider+cluster`) where the Multus annotation is written, from their kv-pairs.
    multus: BTreeSet<String>,
}

/// A workload intent with its interfaces.
#[derive(Debug, Clone, PartialEq)]
struct Workload {
    name: String,
    app: String,
    resource: String,
    kind: String,
    interfaces: Vec<WorkloadInterfaceSpec>,
}

/// Reads the network-controller-intent `intent` of the DIG at `dig`: its workload intents and their interfaces in
/// creation order, and for each cluster of their apps (`app_clusters`) whether it uses Multus.
pub(super) async fn read(
    catalog: &Catalog,
    dig: &ResourcePath,
    intent: &str,
    app_clusters: &BTreeMap<String, Vec<String>>,
) -> Result<OvnIntent> {
    let intent_path = dig.child(Kind::NetworkControllerIntent, &[intent]);
    if !catalog.exists(&intent_path).await? {
        return Err(LifecycleError::Incomplete(format!(
            "DeploymentIntentGroup '{}' names network controller intent '{intent}', which does not exist (create it under …/network-controller-intent)",
            dig.name()
        )));
    }
    let mut workloads = Vec::new();
    let mut clusters = BTreeSet::new();
    for (workload_path, workload) in catalog
        .list_as::<WorkloadIntent>(Kind::WorkloadIntent, intent_path.names())
        .await?
    {
        let interfaces = catalog
            .list_as::<WorkloadInterface>(Kind::WorkloadInterface, workload_path.names())
            .await?
            .into_iter()
            .map(|(_, interface)| interface.spec)
            .collect();
        clusters.extend(
            app_clusters
                .get(&workload.spec.app)
                .into_iter()
                .flatten()
                .cloned(),
        );
        workloads.push(Workload {
            name: workload.metadata.name,
            app: workload.spec.app,
            resource: workload.spec.workload_resource,
            kind: workload.spec.workload_type,
            interfaces,
        });
    }
    let mut multus = BTreeSet::new();
    for cluster in clusters {
        if uses_multus(catalog, &cluster).await? {
            multus.insert(cluster);
        }
    }
    Ok(OvnIntent {
        name: intent.to_string(),
        workloads,
        multus,
    })
}

/// Whether ovnaction writes the Multus annotation on `cluster` (`provider+cluster`): not when its kv-pairs say
/// Nodus serves every interface, nor when they name another CNI wrapper than Multus.
async fn uses_multus(catalog: &Catalog, cluster: &str) -> Result<bool> {
    let Some((provider, name)) = cluster.split_once('+') else {
        return Ok(true);
    };
    let names = [provider.to_string(), name.to_string()];
    if validate_name("cluster", name).is_err() {
        return Ok(true);
    }
    let mut nodus_for_all = false;
    let mut wrapper = "multus".to_string();
    for (_, pairs) in catalog.list_as::<ClusterKvPairs>(Kind::ClusterKv, &names).await? {
        for entry in pairs.spec.kv {
            if let Some(value) = entry.get(KV_NODUS_FOR_ALL) {
                nodus_for_all =
                    value.eq_ignore_ascii_case("true") || value == "1" || value.eq_ignore_ascii_case("t");
            }
            if let Some(value) = entry.get(KV_MULTI_CNI_WRAPPER) {
                wrapper.clone_from(value);
            }
        }
    }
    Ok(!nodus_for_all && wrapper.eq_ignore_ascii_case("multus"))
}

/// Adds the interfaces of every workload intent to its workload on each cluster of its app.
pub(super) fn apply(intent: &OvnIntent, apps: &mut [Deployed]) -> std::result::Result<(), String> {
    for workload in &intent.workloads {
        let failed = |cluster: Option<&str>, message: String| {
            let place = cluster
                .map(|cluster| format!(", cluster '{cluster}'"))
                .unwrap_or_default();
            format!(
                "network controller intent '{}', workload intent '{}'{place}: {message}",
                intent.name, workload.name
            )
        };
        if workload.interfaces.is_empty() {
            // EMCO leaves a workload without interfaces alone.
            continue;
        }
        let app = apps
            .iter_mut()
            .find(|app| app.app == workload.app)
            .ok_or_else(|| failed(None, format!("the composite app has no app '{}'", workload.app)))?;
        for (cluster, objects) in app.clusters.iter().zip(app.objects.iter_mut()) {
            let Some(record) = objects.iter_mut().find(|record| {
                record.name == workload.resource && record.kind.eq_ignore_ascii_case(&workload.kind)
            }) else {
                return Err(failed(
                    Some(cluster),
                    format!(
                        "app '{}' renders no {} '{}' there",
                        workload.app, workload.kind, workload.resource
                    ),
                ));
            };
            let mut object = record.object();
            let annotations = pod_template(&mut object).and_then(annotations_of).ok_or_else(|| {
                failed(
                    Some(cluster),
                    format!(
                        "{} '{}' has no pod template with annotations (ovnaction adds interfaces to Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs and CronJobs)",
                        record.kind, record.name
                    ),
                )
            })?;
            if intent.multus.contains(cluster) {
                let networks = with_ovn_network(annotations.get(NETWORKS_ANNOTATION).and_then(Json::as_str))
                    .map_err(|message| failed(Some(cluster), message))?;
                annotations.insert(NETWORKS_ANNOTATION.into(), Json::String(networks));
            }
            let interfaces = with_interfaces(
                annotations.get(NFN_ANNOTATION).and_then(Json::as_str),
                &workload.interfaces,
            );
            annotations.insert(NFN_ANNOTATION.into(), Json::String(interfaces));
            let role = record.role.clone();
            *record = ResourceRecord::pending_object(object).with_role(role);
        }
    }
    Ok(())
}

/// The pod template of a workload object (the object itself for a Pod).
fn pod_template(object: &mut Json) -> Option<&mut Json> {
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    match kind.as_str() {
        "Pod" => Some(object),
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "ReplicationController" | "Job" => {
            object.get_mut("spec")?.get_mut("template")
        }
        "CronJob" => object
            .get_mut("spec")?
            .get_mut("jobTemplate")?
            .get_mut("spec")?
            .get_mut("template"),
        _ => None,
    }
}

/// The `metadata.annotations` of a template, created when absent; `None` when the template, its metadata or its
/// annotations are not mappings.
fn annotations_of(template: &mut Json) -> Option<&mut Map<String, Json>> {
    let metadata = template
        .as_object_mut()?
        .entry("metadata")
        .or_insert_with(|| json!({}));
    if metadata.is_null() {
        *metadata = json!({});
    }
    let annotations = metadata
        .as_object_mut()?
        .entry("annotations")
        .or_insert_with(|| json!({}));
    if annotations.is_null() {
        *annotations = json!({});
    }
    annotations.as_object_mut()
}

/// The Multus networks annotation with `ovn-networkobj` added (once): the existing one read as Multus reads it (a
/// JSON list, or `[namespace/]name[@interface]` separated by commas), written as a JSON list.
fn with_ovn_network(existing: Option<&str>) -> std::result::Result<String, String> {
    let mut elements: Vec<Json> = match existing.map(str::trim) {
        None | Some("") => Vec::new(),
        Some(text) if text.starts_with('[') => serde_json::from_str(text).map_err(|err| {
            format!("the pod template's {NETWORKS_ANNOTATION} annotation is not a JSON list: {err}")
        })?,
        Some(text) => text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                let (item, interface) = item.split_once('@').map_or((item, None), |(n, i)| (n, Some(i)));
                let (namespace, name) = item.split_once('/').map_or((None, item), |(ns, n)| (Some(ns), n));
                let mut element = Map::new();
                element.insert("name".into(), json!(name));
                if let Some(namespace) = namespace {
                    element.insert("namespace".into(), json!(namespace));
                }
                if let Some(interface) = interface {
                    element.insert("interface".into(), json!(interface));
                }
                Json::Object(element)
            })
            .collect(),
    };
    if !elements.iter().any(|element| element["name"] == OVN_NETWORK) {
        elements.push(json!({"name": OVN_NETWORK, "namespace": "default"}));
    }
    Ok(Json::Array(elements).to_string())
}

/// The nfn-network annotation with `interfaces` merged in: an existing interface of the same network and name
/// takes the new gateway and addresses; new ones are appended; the CNI type is always `ovn4nfv`.
fn with_interfaces(existing: Option<&str>, interfaces: &[WorkloadInterfaceSpec]) -> String {
    let mut merged: Vec<WorkloadInterfaceSpec> = existing
        .and_then(|text| serde_json::from_str::<Json>(text).ok())
        .and_then(|value| serde_json::from_value(value["interface"].clone()).ok())
        .unwrap_or_default();
    for new in interfaces {
        match merged
            .iter_mut()
            .find(|old| old.name == new.name && old.interface == new.interface)
        {
            Some(old) => {
                old.default_gateway.clone_from(&new.default_gateway);
                old.ip_address.clone_from(&new.ip_address);
                old.mac_address.clone_from(&new.mac_address);
            }
            None => merged.push(new.clone()),
        }
    }
    json!({"type": "ovn4nfv", "interface": merged}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interface(interface: &str, network: &str, ip: &str) -> WorkloadInterfaceSpec {
        WorkloadInterfaceSpec {
            interface: interface.into(),
            name: network.into(),
            default_gateway: "false".into(),
            ip_address: ip.into(),
            mac_address: String::new(),
        }
    }

    #[test]
    fn the_annotations_are_emcos_json() {
        assert_eq!(
            with_ovn_network(None).unwrap(),
            r#"[{"name":"ovn-networkobj","namespace":"default"}]"#
        );
        assert_eq!(
            with_ovn_network(Some("kube-system/macvlan@eth9, sriov")).unwrap(),
            r#"[{"name":"macvlan","namespace":"kube-system","interface":"eth9"},{"name":"sriov"},{"name":"ovn-networkobj","namespace":"default"}]"#
        );
        let once = with_ovn_network(None).unwrap();
        assert_eq!(with_ovn_network(Some(&once)).unwrap(), once, "added once");
        assert!(
            with_ovn_network(Some("[not json"))
                .unwrap_err()
                .contains("not a JSON list")
        );
        let nfn = with_interfaces(
            None,
            &[interface("eth1", "protected-private-net", "192.168.20.3")],
        );
        assert_eq!(
            nfn,
            r#"{"type":"ovn4nfv","interface":[{"interface":"eth1","name":"protected-private-net","defaultGateway":"false","ipAddress":"192.168.20.3"}]}"#
        );
        let updated = with_interfaces(
            Some(&nfn),
            &[
                interface("eth1", "protected-private-net", "192.168.20.9"),
                interface("eth2", "emco-private-net", ""),
            ],
        );
        assert_eq!(
            updated,
            r#"{"type":"ovn4nfv","interface":[{"interface":"eth1","name":"protected-private-net","defaultGateway":"false","ipAddress":"192.168.20.9"},{"interface":"eth2","name":"emco-private-net","defaultGateway":"false"}]}"#
        );
    }

    #[test]
    fn workloads_get_the_annotations_in_their_pod_template_and_a_missing_one_is_refused() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "r1-sink"},
            "spec": {"template": {"metadata": {"labels": {"app": "sink"}}, "spec": {"containers": []}}}});
        let mut apps = vec![super::super::controllers::on_two_clusters("sink", &deployment)];
        let mut intent = OvnIntent {
            name: "vfw".into(),
            workloads: vec![Workload {
                name: "sink_workload_intent".into(),
                app: "sink".into(),
                resource: "r1-sink".into(),
                kind: "Deployment".into(),
                interfaces: vec![interface("eth1", "protected-private-net", "192.168.20.3")],
            }],
            multus: ["p+a".to_string()].into(),
        };
        apply(&intent, &mut apps).unwrap();
        let annotations = |cluster: usize| {
            apps[0].objects[cluster][0].object()["spec"]["template"]["metadata"]["annotations"].clone()
        };
        assert_eq!(
            annotations(0)[NETWORKS_ANNOTATION],
            r#"[{"name":"ovn-networkobj","namespace":"default"}]"#
        );
        assert!(
            annotations(1).get(NETWORKS_ANNOTATION).is_none(),
            "no Multus on p+b"
        );
        assert!(
            annotations(1)[NFN_ANNOTATION]
                .as_str()
                .unwrap()
                .contains("protected-private-net")
        );
        intent.workloads[0].resource = "r2-sink".into();
        let err = apply(&intent, &mut apps).unwrap_err();
        assert_eq!(
            err,
            "network controller intent 'vfw', workload intent 'sink_workload_intent', cluster 'p+a': app 'sink' renders no Deployment 'r2-sink' there"
        );
    }
}
