//! Bodies of EMCO's `ovnaction` controller: a DIG's network-controller-intent, its workload intents (which workload
//! of which app) and their interfaces (which network, interface name, gateway, addresses), as EMCO's JSON schemas
//! (`src/ovnaction/json-schemas`) and handlers check them.

use serde::{Deserialize, Serialize};

use crate::names::{validate_name, validate_name_up_to};
use crate::resources::{MetadataOnly, Resource, ValidationError, check_len};

/// The longest workload name (EMCO's schema: `maxLength: 254`).
pub const MAX_WORKLOAD_RESOURCE_LEN: usize = 254;
/// The longest other field.
pub const MAX_OVN_FIELD_LEN: usize = 128;

/// A network-controller-intent (`…/deployment-intent-groups/{dig}/network-controller-intent/{intent}`).
pub type NetworkControllerIntent = MetadataOnly;

/// A workload intent (`…/network-controller-intent/{intent}/workload-intents/{workload}`).
pub type WorkloadIntent = Resource<WorkloadIntentSpec>;

/// Spec of a workload intent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["app", "workloadResource", "type"]))]
pub struct WorkloadIntentSpec {
    /// The app whose render holds the workload.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_OVN_FIELD_LEN), pattern(crate::names::NAME_PATTERN))]
    pub app: String,
    /// The workload's `metadata.name`.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_WORKLOAD_RESOURCE_LEN), pattern(crate::names::NAME_PATTERN))]
    pub workload_resource: String,
    /// Its kind: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod or ReplicationController.
    #[serde(default, rename = "type")]
    #[schemars(length(min = 1, max = MAX_OVN_FIELD_LEN), pattern(crate::names::NAME_PATTERN))]
    pub workload_type: String,
}

impl WorkloadIntent {
    /// Checks EMCO's workload intent schema.
    pub fn validate_workload_intent(&self) -> Result<(), ValidationError> {
        self.metadata.validate("workload intent")?;
        validate_name("spec.app", &self.spec.app)?;
        named(
            "spec.workloadResource",
            &self.spec.workload_resource,
            MAX_WORKLOAD_RESOURCE_LEN,
        )?;
        named("spec.type", &self.spec.workload_type, MAX_OVN_FIELD_LEN)
    }
}

/// An interface of a workload (`…/workload-intents/{workload}/interfaces/{interface}`).
pub type WorkloadInterface = Resource<WorkloadInterfaceSpec>;

/// Spec of an interface: the fields, in the order, ovnaction writes into the pod template's
/// `k8s.plugin.opnfv.org/nfn-network` annotation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["interface", "name"]))]
pub struct WorkloadInterfaceSpec {
    /// The interface in the pod (`eth1`).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_OVN_FIELD_LEN), pattern(crate::names::NAME_PATTERN))]
    pub interface: String,
    /// The network it attaches to (a cluster network intent's name).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_OVN_FIELD_LEN), pattern(crate::names::NAME_PATTERN))]
    pub name: String,
    /// `"true"` when it is the default gateway; `"false"` when not given.
    #[serde(default)]
    #[schemars(length(max = MAX_OVN_FIELD_LEN))]
    #[schemars(extend("pattern" = crate::names::OPTIONAL_NAME_PATTERN))]
    pub default_gateway: String,
    /// A fixed IP address (else allocated).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_OVN_FIELD_LEN))]
    pub ip_address: String,
    /// A fixed MAC address (else allocated).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = MAX_OVN_FIELD_LEN))]
    pub mac_address: String,
}

impl WorkloadInterface {
    /// Checks EMCO's interface schema and fills in `defaultGateway: "false"` when it is absent, as EMCO's handler
    /// does.
    pub fn validate_interface(&mut self) -> Result<(), ValidationError> {
        self.metadata.validate("interface")?;
        let spec = &mut self.spec;
        named("spec.interface", &spec.interface, MAX_OVN_FIELD_LEN)?;
        named("spec.name", &spec.name, MAX_OVN_FIELD_LEN)?;
        if spec.default_gateway.is_empty() {
            spec.default_gateway = "false".into();
        }
        named("spec.defaultGateway", &spec.default_gateway, MAX_OVN_FIELD_LEN)?;
        check_len("spec.ipAddress", &spec.ip_address, MAX_OVN_FIELD_LEN)?;
        check_len("spec.macAddress", &spec.mac_address, MAX_OVN_FIELD_LEN)
    }
}

/// EMCO's name rule for a field of at most `max` characters.
fn named(field: &str, value: &str, max: usize) -> Result<(), ValidationError> {
    Ok(validate_name_up_to(field, value, max)?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_interface_defaults_to_no_gateway_and_names_are_checked() {
        let mut interface: WorkloadInterface =
            serde_json::from_value(json!({"metadata": {"name": "fw_if"}, "spec": {"interface": "eth1", "name": "protected-private-net"}}))
                .unwrap();
        interface.validate_interface().unwrap();
        assert_eq!(interface.spec.default_gateway, "false");
        assert_eq!(
            serde_json::to_value(&interface.spec).unwrap(),
            json!({"interface": "eth1", "name": "protected-private-net", "defaultGateway": "false"})
        );
        interface.spec.interface = "eth 1".into();
        let err = interface.validate_interface().unwrap_err();
        assert!(err.to_string().contains("spec.interface"), "{err}");
        let workload: WorkloadIntent = serde_json::from_value(
            json!({"metadata": {"name": "w"}, "spec": {"app": "fw", "workloadResource": "r1-fw"}}),
        )
        .unwrap();
        assert!(
            workload
                .validate_workload_intent()
                .unwrap_err()
                .to_string()
                .contains("spec.type")
        );
    }
}
