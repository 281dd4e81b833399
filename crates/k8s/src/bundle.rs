//! What a ResourceBundleState (the monitor's report from inside a cluster) says about one rsync resource:
//! Present, NotPresent or Unknown by the seed's rules, and the object itself for `output=detail`.

use emco_model::ClusterResourceStatus;
use serde_json::Value as Json;

/// The typed arrays of a ResourceBundleState status and the kind each holds (group, kind).
pub const TYPED_ARRAYS: &[(&str, &str, &str)] = &[
    ("podStatuses", "", "Pod"),
    ("serviceStatuses", "", "Service"),
    ("configMapStatuses", "", "ConfigMap"),
    ("secretStatuses", "", "Secret"),
    ("deploymentStatuses", "apps", "Deployment"),
    ("daemonSetStatuses", "apps", "DaemonSet"),
    ("statefulSetStatuses", "apps", "StatefulSet"),
    ("jobStatuses", "batch", "Job"),
    ("ingressStatuses", "networking.k8s.io", "Ingress"),
    ("csrStatuses", "certificates.k8s.io", "CertificateSigningRequest"),
];

/// The typed array that holds objects of this group and kind, if any.
#[must_use]
pub fn typed_array(group: &str, kind: &str) -> Option<&'static str> {
    TYPED_ARRAYS
        .iter()
        .find(|(_, g, k)| *g == group && *k == kind)
        .map(|(field, _, _)| *field)
}

/// Finds the object named `name` of `group`/`kind` in a ResourceBundleState status.
#[must_use]
pub fn find_object<'a>(bundle: &'a Json, group: &str, kind: &str, name: &str) -> Option<&'a Json> {
    if let Some(field) = typed_array(group, kind) {
        return bundle[field]
            .as_array()?
            .iter()
            .find(|object| object["metadata"]["name"].as_str() == Some(name));
    }
    bundle["resourceStatuses"].as_array()?.iter().find(|entry| {
        entry["name"].as_str() == Some(name)
            && entry["kind"].as_str() == Some(kind)
            && entry["group"].as_str().unwrap_or_default() == group
    })
}

/// The seed's rule: no bundle heard → Unknown; listed → Present; a tracked kind not listed → NotPresent; a kind
/// the bundle does not track (no typed array, not in the generic list) → Unknown.
#[must_use]
pub fn presence(bundle: Option<&Json>, group: &str, kind: &str, name: &str) -> ClusterResourceStatus {
    let Some(bundle) = bundle else {
        return ClusterResourceStatus::Unknown;
    };
    if find_object(bundle, group, kind, name).is_some() {
        ClusterResourceStatus::Present
    } else if typed_array(group, kind).is_some() {
        ClusterResourceStatus::NotPresent
    } else {
        ClusterResourceStatus::Unknown
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn presence_follows_the_seed_rules() {
        let bundle = json!({
            "configMapStatuses": [{"metadata": {"name": "sink-configmap"}}],
            "deploymentStatuses": [],
            "resourceStatuses": [{"group": "k8s.plugin.opnfv.org", "version": "v1alpha1", "kind": "Network", "name": "n1"}],
        });
        assert_eq!(
            presence(None, "", "ConfigMap", "sink-configmap"),
            ClusterResourceStatus::Unknown
        );
        assert_eq!(
            presence(Some(&bundle), "", "ConfigMap", "sink-configmap"),
            ClusterResourceStatus::Present
        );
        assert_eq!(
            presence(Some(&bundle), "apps", "Deployment", "fw0-sink"),
            ClusterResourceStatus::NotPresent
        );
        assert_eq!(
            presence(Some(&bundle), "k8s.plugin.opnfv.org", "Network", "n1"),
            ClusterResourceStatus::Present
        );
        assert_eq!(
            presence(Some(&bundle), "k8s.plugin.opnfv.org", "Network", "n2"),
            ClusterResourceStatus::Unknown
        );
        assert_eq!(
            presence(Some(&bundle), "", "Service", "sink-service"),
            ClusterResourceStatus::NotPresent,
            "a missing array is an empty one"
        );
    }
}
