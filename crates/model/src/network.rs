//! Bodies of ncm's cluster network intents (`reference/emco.md` §5.2): virtual networks
//! (`/v2/cluster-providers/{p}/clusters/{c}/networks`) and provider networks (`.../provider-networks`), with EMCO's
//! JSON field names, and their validation.
//!
//! Validation checks what EMCO's ncm checks (its JSON schema and `validateProviderNetInputs`) and a little more
//! where EMCO would only fail later in the cluster: a gateway and every excluded address must lie inside their
//! subnet, exclusion ranges must ascend, subnet names must be unique. Every error names the field as a JSON path
//! (`spec.ipv4Subnets[0].gateway`). Like EMCO, `providerNetType` and `vlanNodeSelector` are matched ignoring case.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::names::validate_name;
use crate::resources::{Resource, ValidationError, check_len, not_allowed, require};

/// The only CNI EMCO's ncm knows.
pub const CNI_TYPE_OVN4NFV: &str = "ovn4nfv";
/// `providerNetType` of a VLAN provider network.
pub const PROVIDER_NET_TYPE_VLAN: &str = "VLAN";
/// `providerNetType` of a direct provider network.
pub const PROVIDER_NET_TYPE_DIRECT: &str = "DIRECT";
/// `vlanNodeSelector`: every node.
pub const VLAN_NODE_ANY: &str = "any";
/// `vlanNodeSelector`: the nodes matching `nodeLabelList`.
pub const VLAN_NODE_SPECIFIC: &str = "specific";

/// The most subnets one network may list.
pub const MAX_SUBNETS: usize = 256;
/// The most entries of `vlan.nodeLabelList`.
pub const MAX_NODE_LABELS: usize = 64;
/// The longest string field of a network body (EMCO's schema: 128).
pub const MAX_NETWORK_FIELD_LEN: usize = 128;
/// The longest Linux interface name (`IFNAMSIZ` − 1).
pub const MAX_INTERFACE_NAME_LEN: usize = 15;

/// A virtual network of a cluster (`/networks`).
pub type Network = Resource<NetworkSpec>;
/// A provider network of a cluster (`/provider-networks`).
pub type ProviderNetwork = Resource<ProviderNetworkSpec>;

/// Spec of a virtual network.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["cniType", "ipv4Subnets"]))]
pub struct NetworkSpec {
    /// The CNI; EMCO allows only `ovn4nfv`.
    #[serde(default)]
    #[schemars(extend("enum" = [CNI_TYPE_OVN4NFV]))]
    pub cni_type: String,
    /// At least one IPv4 subnet.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub ipv4_subnets: Vec<Ipv4Subnet>,
}

/// Spec of a provider network: a network's fields plus its type and VLAN settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["cniType", "ipv4Subnets", "providerNetType"]))]
pub struct ProviderNetworkSpec {
    /// The CNI; EMCO allows only `ovn4nfv`.
    #[serde(default)]
    #[schemars(extend("enum" = [CNI_TYPE_OVN4NFV]))]
    pub cni_type: String,
    /// At least one IPv4 subnet.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub ipv4_subnets: Vec<Ipv4Subnet>,
    /// `VLAN` or `DIRECT` (any case).
    #[serde(default)]
    #[schemars(pattern("^([Vv][Ll][Aa][Nn]|[Dd][Ii][Rr][Ee][Cc][Tt])$"))]
    pub provider_net_type: String,
    /// The provider interface and, for `VLAN`, the VLAN id.
    #[serde(default)]
    pub vlan: Vlan,
}

/// One IPv4 subnet of a network.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["subnet", "name"]))]
pub struct Ipv4Subnet {
    /// `a.b.c.d/len`, e.g. `172.16.33.0/24`.
    #[serde(default)]
    #[schemars(pattern(
        r"^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])/([0-9]|[12][0-9]|3[0-2])$"
    ))]
    pub subnet: String,
    /// The subnet's name (EMCO's name rule).
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), pattern(crate::names::NAME_PATTERN))]
    pub name: String,
    /// Optional `a.b.c.d/len` inside the subnet, e.g. `172.16.33.1/24`.
    #[serde(default)]
    pub gateway: String,
    /// Optional space-separated addresses and ascending `a..b` ranges not to hand out, all inside the subnet.
    #[serde(default)]
    pub exclude_ips: String,
}

/// The VLAN block of a provider network (EMCO's JSON spells the id `vlanID`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Vlan {
    /// Decimal 0–4095; required for `VLAN`.
    #[serde(default, rename = "vlanID")]
    pub vlan_id: String,
    /// The node interface the network uses, e.g. `eth1`; required.
    #[serde(default)]
    pub provider_interface_name: String,
    /// The VLAN interface to create, e.g. `eth1.100`; optional.
    #[serde(default)]
    pub logical_interface_name: String,
    /// `any` or `specific` (any case).
    #[serde(default)]
    pub vlan_node_selector: String,
    /// `key=value` node labels; at least one when the selector is `specific`.
    #[serde(default)]
    pub node_label_list: Vec<String>,
}

/// The type of a provider network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderNetType {
    /// A VLAN on a node interface.
    Vlan,
    /// A node interface used directly.
    Direct,
}

impl ProviderNetworkSpec {
    /// The network's type, if `providerNetType` is one EMCO knows (compared ignoring case).
    #[must_use]
    pub fn net_type(&self) -> Option<ProviderNetType> {
        if self
            .provider_net_type
            .eq_ignore_ascii_case(PROVIDER_NET_TYPE_VLAN)
        {
            Some(ProviderNetType::Vlan)
        } else if self
            .provider_net_type
            .eq_ignore_ascii_case(PROVIDER_NET_TYPE_DIRECT)
        {
            Some(ProviderNetType::Direct)
        } else {
            None
        }
    }
}

impl Network {
    /// Checks the metadata, the CNI type and every subnet.
    pub fn validate_network(&self) -> Result<(), ValidationError> {
        self.metadata.validate("network")?;
        validate_cni_type(&self.spec.cni_type)?;
        validate_subnets(&self.spec.ipv4_subnets)
    }
}

impl ProviderNetwork {
    /// Checks the metadata, the CNI type, every subnet, the type and the VLAN block.
    pub fn validate_provider_network(&self) -> Result<(), ValidationError> {
        self.metadata.validate("provider network")?;
        validate_cni_type(&self.spec.cni_type)?;
        validate_subnets(&self.spec.ipv4_subnets)?;
        let field = "spec.providerNetType";
        check_len(field, &self.spec.provider_net_type, MAX_NETWORK_FIELD_LEN)?;
        let net_type = self.spec.net_type().ok_or_else(|| ValidationError::NotAllowed {
            field: field.into(),
            value: self.spec.provider_net_type.clone(),
            allowed: format!("{PROVIDER_NET_TYPE_VLAN}, {PROVIDER_NET_TYPE_DIRECT}"),
        })?;
        validate_vlan(&self.spec.vlan, net_type)
    }
}

fn validate_cni_type(cni_type: &str) -> Result<(), ValidationError> {
    let field = "spec.cniType";
    require(field, cni_type)?;
    check_len(field, cni_type, MAX_NETWORK_FIELD_LEN)?;
    if cni_type != CNI_TYPE_OVN4NFV {
        return Err(not_allowed(field, cni_type, CNI_TYPE_OVN4NFV));
    }
    Ok(())
}

fn validate_subnets(subnets: &[Ipv4Subnet]) -> Result<(), ValidationError> {
    let field = "spec.ipv4Subnets";
    if subnets.is_empty() {
        return Err(ValidationError::Missing { field: field.into() });
    }
    if subnets.len() > MAX_SUBNETS {
        return Err(not_allowed(
            field,
            &format!("{} subnets", subnets.len()),
            format!("at most {MAX_SUBNETS} subnets"),
        ));
    }
    let mut names = BTreeSet::new();
    for (index, subnet) in subnets.iter().enumerate() {
        let at = format!("{field}[{index}]");
        validate_subnet(&at, subnet)?;
        if !names.insert(subnet.name.as_str()) {
            return Err(not_allowed(
                &format!("{at}.name"),
                &subnet.name,
                "a name no other subnet has",
            ));
        }
    }
    Ok(())
}

/// An IPv4 network: an address and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Cidr {
    /// The address as written (host bits may be set, as Go's `net.ParseCIDR` allows).
    pub address: Ipv4Addr,
    /// The prefix length, 0–32.
    pub prefix_len: u8,
}

impl Ipv4Cidr {
    /// Parses `a.b.c.d/len` (dotted decimal without leading zeros; a length 0–32 without leading zeros).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let (address, prefix_len) = text.split_once('/')?;
        let address = parse_ipv4(address)?;
        let well_formed = !prefix_len.is_empty()
            && prefix_len.len() <= 2
            && prefix_len.bytes().all(|b| b.is_ascii_digit())
            && !(prefix_len.len() > 1 && prefix_len.starts_with('0'));
        if !well_formed {
            return None;
        }
        let prefix_len: u8 = prefix_len.parse().ok().filter(|len| *len <= 32)?;
        Some(Self { address, prefix_len })
    }

    fn mask(self) -> u32 {
        match self.prefix_len {
            0 => 0,
            len => u32::MAX << (32 - u32::from(len)),
        }
    }

    /// The network address (host bits cleared).
    #[must_use]
    pub fn network(self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.address) & self.mask())
    }

    /// Whether `address` lies inside this network.
    #[must_use]
    pub fn contains(self, address: Ipv4Addr) -> bool {
        u32::from(address) & self.mask() == u32::from(self.network())
    }
}

impl std::fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network(), self.prefix_len)
    }
}

/// A dotted-decimal IPv4 address (Rust's parser: four decimal octets, no leading zeros).
fn parse_ipv4(text: &str) -> Option<Ipv4Addr> {
    text.parse().ok()
}

fn validate_subnet(at: &str, subnet: &Ipv4Subnet) -> Result<(), ValidationError> {
    let field = format!("{at}.subnet");
    require(&field, &subnet.subnet)?;
    check_len(&field, &subnet.subnet, MAX_NETWORK_FIELD_LEN)?;
    let cidr = Ipv4Cidr::parse(&subnet.subnet)
        .ok_or_else(|| not_allowed(&field, &subnet.subnet, "an IPv4 CIDR a.b.c.d/len"))?;

    validate_name(&format!("{at}.name"), &subnet.name)?;

    if !subnet.gateway.is_empty() {
        let field = format!("{at}.gateway");
        check_len(&field, &subnet.gateway, MAX_NETWORK_FIELD_LEN)?;
        let gateway = Ipv4Cidr::parse(&subnet.gateway)
            .ok_or_else(|| not_allowed(&field, &subnet.gateway, "an IPv4 address with length a.b.c.d/len"))?;
        if !cidr.contains(gateway.address) || gateway.prefix_len != cidr.prefix_len {
            return Err(not_allowed(
                &field,
                &subnet.gateway,
                format!("an address inside {cidr} written with /{}", cidr.prefix_len),
            ));
        }
    }

    let field = format!("{at}.excludeIps");
    check_len(&field, &subnet.exclude_ips, MAX_NETWORK_FIELD_LEN)?;
    for item in subnet.exclude_ips.split_whitespace() {
        let (first, last) = match item.split_once("..") {
            Some((first, last)) => (first, last),
            None => (item, item),
        };
        let (Some(first), Some(last)) = (parse_ipv4(first), parse_ipv4(last)) else {
            return Err(not_allowed(
                &field,
                item,
                "IPv4 addresses a.b.c.d or ranges a.b.c.d..e.f.g.h",
            ));
        };
        if first > last {
            return Err(not_allowed(
                &field,
                item,
                "ranges whose first address is not above the last",
            ));
        }
        if !cidr.contains(first) || !cidr.contains(last) {
            return Err(not_allowed(&field, item, format!("addresses inside {cidr}")));
        }
    }
    Ok(())
}

/// Whether `name` can be a Linux network interface name: 1–15 bytes, no `/`, `:`, whitespace or control
/// characters, not `.` or `..`.
fn is_interface_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_INTERFACE_NAME_LEN
        && name != "."
        && name != ".."
        && name.chars().all(|c| c.is_ascii_graphic() && c != '/' && c != ':')
}

fn validate_vlan(vlan: &Vlan, net_type: ProviderNetType) -> Result<(), ValidationError> {
    let field = "spec.vlan.vlanID";
    if net_type == ProviderNetType::Vlan {
        require(field, &vlan.vlan_id)?;
    }
    if !vlan.vlan_id.is_empty() {
        let in_range = vlan.vlan_id.len() <= 4
            && vlan.vlan_id.bytes().all(|b| b.is_ascii_digit())
            && vlan.vlan_id.parse::<u16>().is_ok_and(|id| id <= 4095);
        if !in_range {
            check_len(field, &vlan.vlan_id, MAX_NETWORK_FIELD_LEN)?;
            return Err(not_allowed(field, &vlan.vlan_id, "a decimal number 0-4095"));
        }
    }

    let field = "spec.vlan.providerInterfaceName";
    require(field, &vlan.provider_interface_name)?;
    check_len(field, &vlan.provider_interface_name, MAX_NETWORK_FIELD_LEN)?;
    if !is_interface_name(&vlan.provider_interface_name) {
        return Err(not_allowed(
            field,
            &vlan.provider_interface_name,
            "an interface name of 1-15 visible characters without '/' or ':'",
        ));
    }
    let field = "spec.vlan.logicalInterfaceName";
    check_len(field, &vlan.logical_interface_name, MAX_NETWORK_FIELD_LEN)?;
    if !vlan.logical_interface_name.is_empty() && !is_interface_name(&vlan.logical_interface_name) {
        return Err(not_allowed(
            field,
            &vlan.logical_interface_name,
            "an interface name of 1-15 visible characters without '/' or ':'",
        ));
    }

    let field = "spec.vlan.vlanNodeSelector";
    require(field, &vlan.vlan_node_selector)?;
    check_len(field, &vlan.vlan_node_selector, MAX_NETWORK_FIELD_LEN)?;
    let specific = if vlan.vlan_node_selector.eq_ignore_ascii_case(VLAN_NODE_ANY) {
        false
    } else if vlan.vlan_node_selector.eq_ignore_ascii_case(VLAN_NODE_SPECIFIC) {
        true
    } else {
        return Err(not_allowed(
            field,
            &vlan.vlan_node_selector,
            format!("{VLAN_NODE_ANY}, {VLAN_NODE_SPECIFIC}"),
        ));
    };

    let field = "spec.vlan.nodeLabelList";
    if vlan.node_label_list.len() > MAX_NODE_LABELS {
        return Err(not_allowed(
            field,
            &format!("{} labels", vlan.node_label_list.len()),
            format!("at most {MAX_NODE_LABELS} labels"),
        ));
    }
    if specific && vlan.node_label_list.is_empty() {
        return Err(ValidationError::Missing {
            field: format!("{field} (vlanNodeSelector is '{VLAN_NODE_SPECIFIC}')"),
        });
    }
    for (index, label) in vlan.node_label_list.iter().enumerate() {
        let field = format!("{field}[{index}]");
        check_len(&field, label, MAX_NETWORK_FIELD_LEN * 4)?;
        let Some((key, value)) = label.split_once('=') else {
            return Err(not_allowed(&field, label, "key=value"));
        };
        validate_k8s_label_key(&field, key)?;
        validate_k8s_label_value(&field, value)?;
    }
    Ok(())
}

/// Whether `text` is a DNS-1123 label: 1–63 lower-case alphanumerics or `-`, starting and ending alphanumeric.
#[must_use]
pub fn is_dns_label(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// Whether `text` is a DNS-1123 subdomain: at most 253 characters of dot-separated DNS-1123 labels.
#[must_use]
pub fn is_dns_subdomain(text: &str) -> bool {
    text.len() <= 253 && text.split('.').all(is_dns_label)
}

/// Whether `text` is the name part of a Kubernetes label key or a non-empty label value: 1–63 characters of
/// alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric.
fn is_label_name(text: &str) -> bool {
    // The label-value rule emco checks everywhere (at most 63 characters, alphanumeric ends).
    crate::names::validate_label_value("label", text).is_ok()
}

/// Checks a Kubernetes label key (`[prefix/]name`, the prefix a DNS subdomain); `field` names it in errors.
pub fn validate_k8s_label_key(field: &str, key: &str) -> Result<(), ValidationError> {
    let ok = match key.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_label_name(name),
        None => is_label_name(key),
    };
    if !ok {
        check_len(field, key, 317)?;
        return Err(not_allowed(
            field,
            key,
            "a label key: [DNS-subdomain/]name, the name 1-63 alphanumerics, '-', '_' or '.'",
        ));
    }
    Ok(())
}

/// Checks a Kubernetes label value (empty, or 1–63 alphanumerics, `-`, `_`, `.` starting and ending
/// alphanumeric); `field` names it in errors.
pub fn validate_k8s_label_value(field: &str, value: &str) -> Result<(), ValidationError> {
    if !value.is_empty() && !is_label_name(value) {
        check_len(field, value, 63)?;
        return Err(not_allowed(
            field,
            value,
            "a label value: empty or 1-63 alphanumerics, '-', '_' or '.'",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn network(body: &str) -> Network {
        serde_json::from_str(body).unwrap()
    }

    fn provider(vlan: &str) -> ProviderNetwork {
        serde_json::from_str(&format!(
            r#"{{"metadata":{{"name":"pnet1"}},"spec":{{"cniType":"ovn4nfv","providerNetType":"VLAN",
                "ipv4Subnets":[{{"subnet":"172.16.33.0/24","name":"subnet1","gateway":"172.16.33.1/24"}}],
                "vlan":{vlan}}}}}"#
        ))
        .unwrap()
    }

    /// The field an error names (its JSON path), for assertions.
    fn field_of(err: &ValidationError) -> String {
        match err {
            ValidationError::TooLong { field, .. }
            | ValidationError::Missing { field }
            | ValidationError::NotAllowed { field, .. } => field.clone(),
            other => other.to_string(),
        }
    }

    fn subnet_error(subnet: &str, gateway: &str, exclude: &str) -> Option<String> {
        let mut net = network(r#"{"metadata":{"name":"n"},"spec":{"cniType":"ovn4nfv"}}"#);
        net.spec.ipv4_subnets.push(Ipv4Subnet {
            subnet: subnet.into(),
            name: "subnet1".into(),
            gateway: gateway.into(),
            exclude_ips: exclude.into(),
        });
        net.validate_network().err().map(|err| field_of(&err))
    }

    #[test]
    fn emco_example_network_round_trips_and_validates() {
        let body = r#"{"metadata":{"name":"ovn-priv-net"},"spec":{"cniType":"ovn4nfv",
            "ipv4Subnets":[{"subnet":"172.16.33.0/24","name":"subnet1","gateway":"172.16.33.1/24",
                            "excludeIps":"172.16.33.2 172.16.33.5..172.16.33.10"}]}}"#;
        let net = network(body);
        net.validate_network().unwrap();
        let json = serde_json::to_value(&net).unwrap();
        assert_eq!(
            json["spec"]["ipv4Subnets"][0]["excludeIps"],
            "172.16.33.2 172.16.33.5..172.16.33.10"
        );
        assert_eq!(json["spec"]["cniType"], "ovn4nfv");
    }

    #[test]
    fn network_errors_name_their_field() {
        let no_subnets = network(r#"{"metadata":{"name":"n"},"spec":{"cniType":"ovn4nfv"}}"#);
        assert_eq!(
            field_of(&no_subnets.validate_network().unwrap_err()),
            "spec.ipv4Subnets"
        );
        let mut bad_cni = no_subnets.clone();
        bad_cni.spec.cni_type = "calico".into();
        let err = bad_cni.validate_network().unwrap_err();
        assert_eq!(field_of(&err), "spec.cniType");
        assert!(err.to_string().contains("ovn4nfv"), "{err}");
        let bad_name = network(r#"{"metadata":{"name":"-n"},"spec":{"cniType":"ovn4nfv"}}"#);
        assert!(
            bad_name
                .validate_network()
                .unwrap_err()
                .to_string()
                .contains("network name")
        );

        let sub = "spec.ipv4Subnets[0].subnet";
        let gw = "spec.ipv4Subnets[0].gateway";
        let ex = "spec.ipv4Subnets[0].excludeIps";
        assert_eq!(subnet_error("10.0.0.0/8", "", ""), None);
        assert_eq!(
            subnet_error("10.0.0.0/8", "10.255.0.1/8", "10.0.0.1 10.0.0.5..10.0.0.9"),
            None
        );
        assert_eq!(subnet_error("", "", "").as_deref(), Some(sub));
        for bad in [
            "10.0.0/8",
            "10.0.0.0",
            "10.0.0.0/33",
            "10.0.0.0/08",
            "010.0.0.0/8",
            "10.0.0.0/-1",
            "x",
        ] {
            assert_eq!(subnet_error(bad, "", "").as_deref(), Some(sub), "{bad}");
        }
        for bad in ["10.0.0.1", "11.0.0.1/8", "10.0.0.1/16", "10.0.0.1/x"] {
            assert_eq!(subnet_error("10.0.0.0/8", bad, "").as_deref(), Some(gw), "{bad}");
        }
        for bad in [
            "10.0.0.9..10.0.0.5",
            "11.0.0.1",
            "10.0.0.1..11.0.0.1",
            "10.0.0.1,10.0.0.2",
            "10.0.0.1..",
            "a",
        ] {
            assert_eq!(subnet_error("10.0.0.0/8", "", bad).as_deref(), Some(ex), "{bad}");
        }
        assert_eq!(
            subnet_error("10.0.0.0/8", "", &"10.0.0.1 ".repeat(20)).as_deref(),
            Some(ex)
        );

        let mut unnamed = network(
            r#"{"metadata":{"name":"n"},"spec":{"cniType":"ovn4nfv",
            "ipv4Subnets":[{"subnet":"10.0.0.0/8","name":"a"},{"subnet":"11.0.0.0/8","name":""}]}}"#,
        );
        assert!(
            unnamed
                .validate_network()
                .unwrap_err()
                .to_string()
                .contains("spec.ipv4Subnets[1].name")
        );
        unnamed.spec.ipv4_subnets[1].name = "a".into();
        assert_eq!(
            field_of(&unnamed.validate_network().unwrap_err()),
            "spec.ipv4Subnets[1].name"
        );

        let mut many = network(r#"{"metadata":{"name":"n"},"spec":{"cniType":"ovn4nfv"}}"#);
        many.spec.ipv4_subnets = (0..=MAX_SUBNETS)
            .map(|i| Ipv4Subnet {
                subnet: "10.0.0.0/8".into(),
                name: format!("s{i}"),
                ..Ipv4Subnet::default()
            })
            .collect();
        assert_eq!(
            field_of(&many.validate_network().unwrap_err()),
            "spec.ipv4Subnets"
        );
    }

    #[test]
    fn cidr_containment() {
        let cidr = Ipv4Cidr::parse("172.16.33.7/24").unwrap();
        assert_eq!(cidr.to_string(), "172.16.33.0/24");
        assert!(cidr.contains(Ipv4Addr::new(172, 16, 33, 255)));
        assert!(!cidr.contains(Ipv4Addr::new(172, 16, 34, 0)));
        assert!(
            Ipv4Cidr::parse("0.0.0.0/0")
                .unwrap()
                .contains(Ipv4Addr::new(8, 8, 8, 8))
        );
        let host = Ipv4Cidr::parse("10.1.2.3/32").unwrap();
        assert!(host.contains(Ipv4Addr::new(10, 1, 2, 3)) && !host.contains(Ipv4Addr::new(10, 1, 2, 4)));
    }

    proptest::proptest! {
        /// Parsing `a.b.c.d/len` keeps the address and length, and containment agrees with comparing the top
        /// `len` bits.
        #[test]
        fn cidr_parse_and_containment_agree_with_bit_arithmetic(
            address: u32, other: u32, prefix_len in 0u8..=32,
        ) {
            let text = format!("{}/{prefix_len}", Ipv4Addr::from(address));
            let cidr = Ipv4Cidr::parse(&text).unwrap();
            proptest::prop_assert_eq!((u32::from(cidr.address), cidr.prefix_len), (address, prefix_len));
            proptest::prop_assert!(cidr.contains(Ipv4Addr::from(address)));
            let same_prefix = prefix_len == 0
                || address >> (32 - u32::from(prefix_len)) == other >> (32 - u32::from(prefix_len));
            proptest::prop_assert_eq!(cidr.contains(Ipv4Addr::from(other)), same_prefix);
        }
    }

    #[test]
    fn emco_example_provider_network_validates() {
        let vlan = provider(
            r#"{"vlanID":"100","providerInterfaceName":"eth1","logicalInterfaceName":"eth1.100",
                "vlanNodeSelector":"specific","nodeLabelList":["kubernetes.io/hostname=localhost","zone=a"]}"#,
        );
        vlan.validate_provider_network().unwrap();
        assert_eq!(vlan.spec.net_type(), Some(ProviderNetType::Vlan));
        let json = serde_json::to_value(&vlan).unwrap();
        assert_eq!(json["spec"]["vlan"]["vlanID"], "100");
        let mut direct = provider(r#"{"providerInterfaceName":"eth1","vlanNodeSelector":"any"}"#);
        direct.spec.provider_net_type = "direct".into();
        direct.validate_provider_network().unwrap();
        assert_eq!(direct.spec.net_type(), Some(ProviderNetType::Direct));
    }

    #[test]
    fn provider_network_errors_name_their_field() {
        let cases = [
            (
                r#"{"providerInterfaceName":"eth1","vlanNodeSelector":"any"}"#,
                "spec.vlan.vlanID",
            ),
            (
                r#"{"vlanID":"4096","providerInterfaceName":"eth1","vlanNodeSelector":"any"}"#,
                "spec.vlan.vlanID",
            ),
            (
                r#"{"vlanID":"-1","providerInterfaceName":"eth1","vlanNodeSelector":"any"}"#,
                "spec.vlan.vlanID",
            ),
            (
                r#"{"vlanID":"1e2","providerInterfaceName":"eth1","vlanNodeSelector":"any"}"#,
                "spec.vlan.vlanID",
            ),
            (
                r#"{"vlanID":"100","vlanNodeSelector":"any"}"#,
                "spec.vlan.providerInterfaceName",
            ),
            (
                r#"{"vlanID":"100","providerInterfaceName":"eth/1","vlanNodeSelector":"any"}"#,
                "spec.vlan.providerInterfaceName",
            ),
            (
                r#"{"vlanID":"100","providerInterfaceName":"eth1","logicalInterfaceName":"a-very-long-interface",
                    "vlanNodeSelector":"any"}"#,
                "spec.vlan.logicalInterfaceName",
            ),
            (
                r#"{"vlanID":"100","providerInterfaceName":"eth1"}"#,
                "spec.vlan.vlanNodeSelector",
            ),
            (
                r#"{"vlanID":"100","providerInterfaceName":"eth1","vlanNodeSelector":"some"}"#,
                "spec.vlan.vlanNodeSelector",
            ),
            (
                r#"{"vlanID":"100","providerInterfaceName":"eth1","vlanNodeSelector":"any","nodeLabelList":["zone"]}"#,
                "spec.vlan.nodeLabelList[0]",
            ),
            (
                r#"{"vlanID":"100","providerInterfaceName":"eth1","vlanNodeSelector":"any",
                    "nodeLabelList":["a=b","-bad=x"]}"#,
                "spec.vlan.nodeLabelList[1]",
            ),
            (
                r#"{"vlanID":"100","providerInterfaceName":"eth1","vlanNodeSelector":"any","nodeLabelList":["a=b c"]}"#,
                "spec.vlan.nodeLabelList[0]",
            ),
            (
                r#"{"vlanID":"100","providerInterfaceName":"eth1","vlanNodeSelector":"any",
                    "nodeLabelList":["Bad_Prefix/a=b"]}"#,
                "spec.vlan.nodeLabelList[0]",
            ),
        ];
        for (vlan, field) in cases {
            let err = provider(vlan).validate_provider_network().unwrap_err();
            assert_eq!(field_of(&err), field, "{vlan}: {err}");
        }
        let specific =
            provider(r#"{"vlanID":"100","providerInterfaceName":"eth1","vlanNodeSelector":"Specific"}"#);
        let err = specific.validate_provider_network().unwrap_err();
        assert!(err.to_string().contains("spec.vlan.nodeLabelList"), "{err}");

        let mut bad_type =
            provider(r#"{"vlanID":"100","providerInterfaceName":"eth1","vlanNodeSelector":"any"}"#);
        bad_type.spec.provider_net_type = "VXLAN".into();
        let err = bad_type.validate_provider_network().unwrap_err();
        assert_eq!(field_of(&err), "spec.providerNetType");
        assert!(err.to_string().contains("VLAN, DIRECT"), "{err}");

        let mut too_many =
            provider(r#"{"vlanID":"100","providerInterfaceName":"eth1","vlanNodeSelector":"any"}"#);
        too_many.spec.vlan.node_label_list = vec!["a=b".into(); MAX_NODE_LABELS + 1];
        assert_eq!(
            field_of(&too_many.validate_provider_network().unwrap_err()),
            "spec.vlan.nodeLabelList"
        );
    }

    #[test]
    fn label_and_dns_rules() {
        assert!(is_dns_label("ns-1") && !is_dns_label("Ns") && !is_dns_label("a.b") && !is_dns_label(""));
        assert!(!is_dns_label(&"a".repeat(64)) && is_dns_label(&"a".repeat(63)));
        assert!(is_dns_subdomain("a.b-c.d") && !is_dns_subdomain("a..b") && !is_dns_subdomain("a_b"));
        assert!(validate_k8s_label_key("f", "example.com/app").is_ok());
        assert!(validate_k8s_label_key("f", "app.kubernetes.io/name").is_ok());
        assert!(
            validate_k8s_label_key("f", "/app").is_err() && validate_k8s_label_key("f", "a/b/c").is_err()
        );
        assert!(validate_k8s_label_value("f", "").is_ok() && validate_k8s_label_value("f", "v_1.x").is_ok());
        assert!(validate_k8s_label_value("f", "v!").is_err());
        // A hostile value is not echoed at length: the length error comes first.
        let err = validate_k8s_label_value("f", &"!".repeat(10_000)).unwrap_err();
        assert!(matches!(err, ValidationError::TooLong { .. }), "{err}");
    }
}
