//! The Kubernetes objects of cluster network intents: the ovn4nfv-k8s-plugin's `Network` and `ProviderNetwork`
//! custom resources (`k8s.plugin.opnfv.org/v1alpha1`, namespaced; `deploy/ovn4nfv-network-crds.yaml` holds their
//! CRDs) that ncm builds from the stored network and provider-network bodies at `/apply`, and the Multus
//! `NetworkAttachmentDefinition` EMCO's ovn controller adds beside each.
//!
//! The spec is mapped field by field to the CRD's schema: `vlanID` of EMCO's body is `vlanId` in the resource, the
//! provider network type and node selector are written in the case the plugin compares (`VLAN`/`DIRECT`,
//! `any`/`specific`), a `VLAN` network carries a `vlan` block and a `DIRECT` one a `direct` block, and empty
//! optional strings are left out. Objects carry no namespace: rsync applies them in the namespace of the
//! cluster's level-0 logical cloud, as EMCO does.

use emco_model::network::{Ipv4Subnet, ProviderNetType, VLAN_NODE_SPECIFIC};
use emco_model::{Network, ProviderNetwork};
use serde_json::{Map, Value as Json, json};

/// The API group of the ovn4nfv network resources.
pub const NETWORK_GROUP: &str = "k8s.plugin.opnfv.org";
/// Their API version.
pub const NETWORK_VERSION: &str = "v1alpha1";
/// Their `apiVersion`.
pub const NETWORK_API_VERSION: &str = "k8s.plugin.opnfv.org/v1alpha1";
/// The kind of a virtual network.
pub const NETWORK_KIND: &str = "Network";
/// The plural (resource) name of virtual networks.
pub const NETWORK_PLURAL: &str = "networks";
/// The kind of a provider network.
pub const PROVIDER_NETWORK_KIND: &str = "ProviderNetwork";
/// The plural (resource) name of provider networks.
pub const PROVIDER_NETWORK_PLURAL: &str = "providernetworks";
/// The label EMCO puts on a `Network` resource, valued with the network's name.
pub const NETWORK_NAME_LABEL: &str = "net";

/// The `apiVersion` of Multus network attachment definitions.
pub const NETWORK_ATTACHMENT_API_VERSION: &str = "k8s.cni.cncf.io/v1";
/// The kind of a Multus network attachment definition.
pub const NETWORK_ATTACHMENT_KIND: &str = "NetworkAttachmentDefinition";

/// The name of the AppContext resource holding object `name` of `kind`: `<name>+<kind>`, as EMCO's controllers
/// name them.
#[must_use]
pub fn context_resource_name(name: &str, kind: &str) -> String {
    format!("{name}+{kind}")
}

fn subnets(subnets: &[Ipv4Subnet]) -> Json {
    subnets
        .iter()
        .map(|subnet| {
            let mut out = Map::new();
            out.insert("name".into(), subnet.name.clone().into());
            out.insert("subnet".into(), subnet.subnet.clone().into());
            if !subnet.gateway.is_empty() {
                out.insert("gateway".into(), subnet.gateway.clone().into());
            }
            if !subnet.exclude_ips.is_empty() {
                out.insert("excludeIps".into(), subnet.exclude_ips.clone().into());
            }
            Json::Object(out)
        })
        .collect()
}

/// The `Network` resource of a (validated) virtual network body, labelled `net: <name>`.
#[must_use]
pub fn network_object(network: &Network) -> Json {
    let name = &network.metadata.name;
    json!({
        "apiVersion": NETWORK_API_VERSION,
        "kind": NETWORK_KIND,
        "metadata": {"name": name, "labels": {NETWORK_NAME_LABEL: name}},
        "spec": {
            "cniType": network.spec.cni_type,
            "ipv4Subnets": subnets(&network.spec.ipv4_subnets),
        },
    })
}

/// The `ProviderNetwork` resource of a (validated) provider network body: a `vlan` block for `VLAN`, a `direct`
/// block for `DIRECT`.
#[must_use]
pub fn provider_network_object(provider_network: &ProviderNetwork) -> Json {
    let spec = &provider_network.spec;
    let vlan = &spec.vlan;
    // The plugin compares these in one case; EMCO accepts any.
    let node_selector = if vlan.vlan_node_selector.eq_ignore_ascii_case(VLAN_NODE_SPECIFIC) {
        VLAN_NODE_SPECIFIC.to_string()
    } else {
        vlan.vlan_node_selector.to_ascii_lowercase()
    };
    let mut out_spec = Map::new();
    out_spec.insert("cniType".into(), spec.cni_type.clone().into());
    out_spec.insert("ipv4Subnets".into(), subnets(&spec.ipv4_subnets));
    out_spec.insert(
        "providerNetType".into(),
        spec.provider_net_type.to_ascii_uppercase().into(),
    );
    match spec.net_type() {
        Some(ProviderNetType::Direct) => {
            out_spec.insert(
                "direct".into(),
                json!({
                    "providerInterfaceName": vlan.provider_interface_name,
                    "directNodeSelector": node_selector,
                    "nodeLabelList": vlan.node_label_list,
                }),
            );
        }
        Some(ProviderNetType::Vlan) | None => {
            let mut block = Map::new();
            block.insert("vlanId".into(), vlan.vlan_id.clone().into());
            block.insert(
                "providerInterfaceName".into(),
                vlan.provider_interface_name.clone().into(),
            );
            if !vlan.logical_interface_name.is_empty() {
                block.insert(
                    "logicalInterfaceName".into(),
                    vlan.logical_interface_name.clone().into(),
                );
            }
            block.insert("vlanNodeSelector".into(), node_selector.into());
            block.insert("nodeLabelList".into(), json!(vlan.node_label_list));
            out_spec.insert("vlan".into(), Json::Object(block));
        }
    }
    json!({
        "apiVersion": NETWORK_API_VERSION,
        "kind": PROVIDER_NETWORK_KIND,
        "metadata": {"name": provider_network.metadata.name},
        "spec": out_spec,
    })
}

/// The Multus `NetworkAttachmentDefinition` EMCO adds for each network and provider network `name`, pointing
/// pods at the ovn4nfv CNI for it. Applying it needs Multus's CRD in the cluster.
#[must_use]
pub fn network_attachment_definition(name: &str) -> Json {
    let config = json!({"cniVersion": "0.3.1", "type": "ovn4nfvk8s-cni", "nfn-network": name});
    json!({
        "apiVersion": NETWORK_ATTACHMENT_API_VERSION,
        "kind": NETWORK_ATTACHMENT_KIND,
        "metadata": {"name": name},
        "spec": {"config": config.to_string()},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRDS: &str = include_str!("../../../deploy/ovn4nfv-network-crds.yaml");

    fn crds() -> Vec<Json> {
        serde_saphyr::from_multiple(CRDS).unwrap()
    }

    fn crd_for(kind: &str) -> Json {
        crds()
            .into_iter()
            .find(|crd| crd["spec"]["names"]["kind"] == kind)
            .unwrap()
    }

    /// Every problem of `value` against the structural schema `schema` (types, required fields, unknown fields).
    fn schema_problems(path: &str, value: &Json, schema: &Json, problems: &mut Vec<String>) {
        let type_ok = match schema["type"].as_str() {
            Some("object") => value.is_object(),
            Some("array") => value.is_array(),
            Some("string") => value.is_string(),
            Some("integer") => value.is_i64() || value.is_u64(),
            Some("boolean") => value.is_boolean(),
            _ => true,
        };
        if !type_ok {
            problems.push(format!("{path}: not {}", schema["type"]));
            return;
        }
        if let Some(object) = value.as_object() {
            for required in schema["required"].as_array().into_iter().flatten() {
                if !object.contains_key(required.as_str().unwrap_or_default()) {
                    problems.push(format!("{path}: {required} is missing"));
                }
            }
            if let Some(properties) = schema["properties"].as_object() {
                for (key, item) in object {
                    match properties.get(key) {
                        Some(property) => schema_problems(&format!("{path}.{key}"), item, property, problems),
                        None => problems.push(format!("{path}.{key}: not in the schema")),
                    }
                }
            }
        }
        if let Some(items) = value.as_array() {
            for (index, item) in items.iter().enumerate() {
                schema_problems(&format!("{path}[{index}]"), item, &schema["items"], problems);
            }
        }
    }

    fn problems(object: &Json) -> Vec<String> {
        let crd = crd_for(object["kind"].as_str().unwrap());
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        let mut problems = Vec::new();
        schema_problems("", object, schema, &mut problems);
        problems
    }

    fn provider(net_type: &str, vlan: &str) -> ProviderNetwork {
        serde_json::from_str(&format!(
            r#"{{"metadata":{{"name":"pnet1"}},"spec":{{"cniType":"ovn4nfv","providerNetType":"{net_type}",
                "ipv4Subnets":[{{"subnet":"172.16.33.0/24","name":"subnet1","excludeIps":"172.16.33.2"}}],
                "vlan":{vlan}}}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn crds_are_the_plugins_two_namespaced_v1_crds() {
        let crds = crds();
        assert_eq!(crds.len(), 2);
        for (crd, (kind, plural)) in crds.iter().zip([
            (NETWORK_KIND, NETWORK_PLURAL),
            (PROVIDER_NETWORK_KIND, PROVIDER_NETWORK_PLURAL),
        ]) {
            assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1");
            assert_eq!(crd["metadata"]["name"], format!("{plural}.{NETWORK_GROUP}"));
            assert_eq!(crd["spec"]["group"], NETWORK_GROUP);
            assert_eq!(crd["spec"]["scope"], "Namespaced");
            assert_eq!(crd["spec"]["names"]["kind"], kind);
            assert_eq!(crd["spec"]["names"]["plural"], plural);
            let version = &crd["spec"]["versions"][0];
            assert_eq!(version["name"], NETWORK_VERSION);
            assert_eq!(format!("{NETWORK_GROUP}/{NETWORK_VERSION}"), NETWORK_API_VERSION);
            assert_eq!(version["schema"]["openAPIV3Schema"]["type"], "object");
        }
    }

    #[test]
    fn network_object_maps_the_body_and_fits_the_crd() {
        let network: Network = serde_json::from_str(
            r#"{"metadata":{"name":"ovn-priv-net"},"spec":{"cniType":"ovn4nfv",
                "ipv4Subnets":[{"subnet":"172.16.33.0/24","name":"subnet1","gateway":"172.16.33.1/24",
                                "excludeIps":"172.16.33.2 172.16.33.5..172.16.33.10"},
                               {"subnet":"10.0.0.0/8","name":"subnet2"}]}}"#,
        )
        .unwrap();
        network.validate_network().unwrap();
        let object = network_object(&network);
        assert_eq!(object["apiVersion"], NETWORK_API_VERSION);
        assert_eq!(object["kind"], "Network");
        assert_eq!(object["metadata"]["name"], "ovn-priv-net");
        assert_eq!(object["metadata"]["labels"]["net"], "ovn-priv-net");
        assert!(object["metadata"].get("namespace").is_none());
        assert_eq!(object["spec"]["ipv4Subnets"][0]["gateway"], "172.16.33.1/24");
        assert_eq!(
            object["spec"]["ipv4Subnets"][0]["excludeIps"],
            "172.16.33.2 172.16.33.5..172.16.33.10"
        );
        assert!(object["spec"]["ipv4Subnets"][1].get("gateway").is_none());
        assert_eq!(problems(&object), Vec::<String>::new());
        assert_eq!(
            context_resource_name("ovn-priv-net", NETWORK_KIND),
            "ovn-priv-net+Network"
        );
    }

    #[test]
    fn vlan_provider_network_carries_a_vlan_block() {
        let body = provider(
            "vlan",
            r#"{"vlanID":"100","providerInterfaceName":"eth1","logicalInterfaceName":"eth1.100",
                "vlanNodeSelector":"Specific","nodeLabelList":["kubernetes.io/hostname=node1"]}"#,
        );
        body.validate_provider_network().unwrap();
        let object = provider_network_object(&body);
        assert_eq!(object["kind"], "ProviderNetwork");
        assert_eq!(object["spec"]["providerNetType"], "VLAN");
        let vlan = &object["spec"]["vlan"];
        assert_eq!(vlan["vlanId"], "100");
        assert!(vlan.get("vlanID").is_none());
        assert_eq!(vlan["vlanNodeSelector"], "specific");
        assert_eq!(vlan["logicalInterfaceName"], "eth1.100");
        assert_eq!(vlan["nodeLabelList"][0], "kubernetes.io/hostname=node1");
        assert!(object["spec"].get("direct").is_none());
        assert_eq!(problems(&object), Vec::<String>::new());
    }

    #[test]
    fn direct_provider_network_carries_a_direct_block() {
        let body = provider(
            "DIRECT",
            r#"{"providerInterfaceName":"eth2","vlanNodeSelector":"ANY"}"#,
        );
        body.validate_provider_network().unwrap();
        let object = provider_network_object(&body);
        assert_eq!(object["spec"]["providerNetType"], "DIRECT");
        assert_eq!(object["spec"]["direct"]["providerInterfaceName"], "eth2");
        assert_eq!(object["spec"]["direct"]["directNodeSelector"], "any");
        assert!(object["spec"].get("vlan").is_none());
        assert_eq!(problems(&object), Vec::<String>::new());
    }

    #[test]
    fn the_schema_check_catches_a_wrong_object() {
        // The checker the tests above rely on does find mismatches.
        let mut object = provider_network_object(&provider(
            "VLAN",
            r#"{"vlanID":"7","providerInterfaceName":"eth1","vlanNodeSelector":"any"}"#,
        ));
        object["spec"]["vlan"]["vlanID"] = json!("7");
        object["spec"]["ipv4Subnets"][0]["name"] = json!(1);
        let found = problems(&object);
        assert!(found.iter().any(|p| p.contains("vlanID")), "{found:?}");
        assert!(
            found.iter().any(|p| p.contains("ipv4Subnets[0].name")),
            "{found:?}"
        );
    }

    #[test]
    fn attachment_definition_points_at_the_network() {
        let nad = network_attachment_definition("ovn-priv-net");
        assert_eq!(nad["kind"], NETWORK_ATTACHMENT_KIND);
        let config: Json = serde_json::from_str(nad["spec"]["config"].as_str().unwrap()).unwrap();
        assert_eq!(config["nfn-network"], "ovn-priv-net");
        assert_eq!(config["type"], "ovn4nfvk8s-cni");
    }
}
