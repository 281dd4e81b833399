//! What a ResourceBundleState (the monitor's report from inside a cluster) says about one rsync resource:
//! Present, NotPresent or Unknown by the seed's rules, and the object itself for `output=detail`.
//!
//! Also what a ResourceBundleState's spec tells the monitor. rsync writes, per app, the kinds the app holds into
//! `spec.kinds` ([`BundleKind`]): the monitor watches only kinds some bundle names (and pods), so an edge cluster's
//! API server carries a watch per kind in use, not one per kind the monitor knows; a bundle without the list (one
//! EMCO's rsync wrote) has every known kind watched. And the status configs (issue #16 §4) of the kinds the app
//! holds, in `spec.statusConfigs` ([`BundleStatusConfig`], [`rbs_object_with`]); the
//! monitor watches those kinds, leaves out the objects of kinds whose collection is disabled (listing the kinds in
//! `status.statusCollectionDisabled`) and writes each object's rolled-up value beside it as `statusRemote` (and the
//! condition that means ready for its kind as `readyCondition`), which [`status_remote`] and [`ready_condition`]
//! read back.

use emco_model::{ClusterResourceStatus, Gvk, StatusCollection, StatusConfig};
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};

/// How many status configs one ResourceBundleState spec carries at most (more are ignored).
pub const MAX_BUNDLE_STATUS_CONFIGS: usize = 64;

/// The field of a bundle entry that holds its rolled-up value.
pub const STATUS_REMOTE_FIELD: &str = "statusRemote";
/// The field of a bundle entry that names the condition that means ready for its kind.
pub const READY_CONDITION_FIELD: &str = "readyCondition";
/// The status field listing the kinds (`{group, kind}`) whose collection a status config disabled.
pub const COLLECTION_DISABLED_FIELD: &str = "statusCollectionDisabled";

/// How many kinds one ResourceBundleState spec names at most (more are ignored).
pub const MAX_BUNDLE_KINDS: usize = 64;

/// A kind an app holds, as a ResourceBundleState spec names it (`spec.kinds[]`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BundleKind {
    /// API group (empty: core).
    #[serde(default)]
    pub group: String,
    /// Kind.
    pub kind: String,
}

impl BundleKind {
    /// A kind from its group and name.
    #[must_use]
    pub fn new(group: &str, kind: &str) -> Self {
        Self {
            group: group.into(),
            kind: kind.into(),
        }
    }

    /// The kind of objects of `gvk` (the version is not named: a kind is watched at the version the monitor knows).
    #[must_use]
    pub fn of(gvk: &Gvk) -> Self {
        Self::new(&gvk.group, &gvk.kind)
    }
}

/// The kinds a ResourceBundleState's spec names (`spec.kinds`), at most [`MAX_BUNDLE_KINDS`]; entries that do not
/// parse are skipped. `None` when the spec has no list: the bundle does not say, so every kind may be its.
#[must_use]
pub fn bundle_kinds(rbs: &Json) -> Option<Vec<BundleKind>> {
    let entries = rbs["spec"]["kinds"].as_array()?;
    Some(
        entries
            .iter()
            .take(MAX_BUNDLE_KINDS)
            .filter_map(|entry| BundleKind::deserialize(entry).ok())
            .collect(),
    )
}

/// One status config as a ResourceBundleState spec carries it (`spec.statusConfigs[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleStatusConfig {
    /// API group (empty: core).
    #[serde(default)]
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name (what the monitor watches).
    pub plural: String,
    /// The path rolled up as `statusRemote` (empty: none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status_path: String,
    /// The condition type whose `True` means ready (empty: the kind's own rule).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ready_condition: String,
    /// Whether objects of the kind are collected.
    #[serde(default = "collect_by_default")]
    pub collect: bool,
    /// Roll up the whole `.status` as `statusRemote`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raw_status: bool,
}

fn collect_by_default() -> bool {
    true
}

impl BundleStatusConfig {
    /// The bundle form of `config`, with the kind's plural (`plural`, found by the caller).
    #[must_use]
    pub fn from_config(config: &StatusConfig, plural: &str) -> Self {
        let spec = &config.spec;
        Self {
            group: spec.target_type.group.clone(),
            version: spec.target_type.version.clone(),
            kind: spec.target_type.kind.clone(),
            plural: plural.to_string(),
            status_path: spec.status_path.clone(),
            ready_condition: spec.ready_condition.clone(),
            collect: spec.status_collection == StatusCollection::Enabled,
            raw_status: spec.raw_status,
        }
    }

    /// Whether it is about objects of `group`/`kind`.
    #[must_use]
    pub fn is_for(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }
}

/// The status configs of a ResourceBundleState (its `spec.statusConfigs`): entries that do not parse are skipped,
/// and at most [`MAX_BUNDLE_STATUS_CONFIGS`] are read.
#[must_use]
pub fn bundle_status_configs(rbs: &Json) -> Vec<BundleStatusConfig> {
    rbs["spec"]["statusConfigs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .take(MAX_BUNDLE_STATUS_CONFIGS)
        .filter_map(|entry| serde_json::from_value(entry.clone()).ok())
        .collect()
}

/// [`crate::rbs_object`] whose spec names the app's `kinds` (`spec.kinds`, sorted, each once) and carries its
/// status `configs` (`spec.statusConfigs`, absent when there are none).
#[must_use]
pub fn rbs_object_with(
    label_value: &str,
    namespace: &str,
    kinds: impl IntoIterator<Item = BundleKind>,
    configs: &[BundleStatusConfig],
) -> Json {
    let mut object = crate::rbs_object(label_value, namespace);
    let kinds: std::collections::BTreeSet<BundleKind> = kinds.into_iter().collect();
    object["spec"]["kinds"] = json!(kinds);
    if !configs.is_empty() {
        object["spec"]["statusConfigs"] = json!(configs);
    }
    object
}

/// The rolled-up value the monitor wrote beside an object of a bundle, if any.
#[must_use]
pub fn status_remote<'a>(bundle: &'a Json, group: &str, kind: &str, name: &str) -> Option<&'a Json> {
    find_object(bundle, group, kind, name)?.get(STATUS_REMOTE_FIELD)
}

/// The condition the monitor wrote as meaning ready for a bundle entry's kind, if any.
#[must_use]
pub fn ready_condition(entry: &Json) -> Option<&str> {
    entry[READY_CONDITION_FIELD]
        .as_str()
        .filter(|condition| !condition.is_empty())
}

/// Whether a status config disabled the collection of `group`/`kind` in this bundle.
#[must_use]
pub fn collection_disabled(bundle: &Json, group: &str, kind: &str) -> bool {
    bundle[COLLECTION_DISABLED_FIELD]
        .as_array()
        .into_iter()
        .flatten()
        .any(|entry| entry["group"].as_str().unwrap_or_default() == group && entry["kind"] == kind)
}

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
    fn status_configs_travel_in_the_bundle_spec() {
        let config: StatusConfig = serde_json::from_value(json!({"metadata": {"name": "d"},
            "spec": {"targetType": {"group": "apps", "version": "v1", "kind": "Deployment"},
                     "statusCollection": "Disabled", "statusPath": ".status.replicas"}}))
        .unwrap();
        let entry = BundleStatusConfig::from_config(&config, "deployments");
        assert!(!entry.collect);
        let kinds = [BundleKind::new("apps", "Deployment")];
        let rbs = rbs_object_with("1-web", "default", kinds, std::slice::from_ref(&entry));
        assert_eq!(rbs["spec"]["statusConfigs"][0]["plural"], "deployments");
        assert_eq!(bundle_status_configs(&rbs), vec![entry]);
        assert!(
            rbs_object_with("1-web", "default", [], &[])["spec"]
                .get("statusConfigs")
                .is_none(),
            "no configs, no list"
        );
        let garbage =
            json!({"spec": {"statusConfigs": [{"kind": 3}, {"version": "v1", "kind": "W", "plural": "ws"}]}});
        assert_eq!(
            bundle_status_configs(&garbage).len(),
            1,
            "entries that do not parse are skipped"
        );
    }

    #[test]
    fn the_bundle_spec_names_each_kind_of_the_app_once() {
        let kinds = [
            BundleKind::new("", "Service"),
            BundleKind::new("apps", "Deployment"),
            BundleKind::new("", "Service"),
        ];
        assert_eq!(
            BundleKind::of(&Gvk::from_api_version("apps/v1", "Deployment")),
            BundleKind::new("apps", "Deployment")
        );
        let rbs = rbs_object_with("1-web", "default", kinds, &[]);
        assert_eq!(
            rbs["spec"]["kinds"],
            json!([{"group": "", "kind": "Service"}, {"group": "apps", "kind": "Deployment"}])
        );
        assert_eq!(
            bundle_kinds(&rbs),
            Some(vec![
                BundleKind::new("", "Service"),
                BundleKind::new("apps", "Deployment")
            ])
        );
        assert_eq!(
            bundle_kinds(&crate::rbs_object("1-web", "default")),
            None,
            "the seed's bundle does not say"
        );
        let garbage = json!({"spec": {"kinds": [{"group": 3}, {"kind": "ConfigMap"}, "Pod"]}});
        assert_eq!(
            bundle_kinds(&garbage),
            Some(vec![BundleKind::new("", "ConfigMap")]),
            "entries that do not parse are skipped"
        );
        let many: Vec<Json> = (0..200).map(|n| json!({"kind": format!("K{n}")})).collect();
        let many = json!({"spec": {"kinds": many}});
        assert_eq!(
            bundle_kinds(&many).map(|kinds| kinds.len()),
            Some(MAX_BUNDLE_KINDS)
        );
    }

    #[test]
    fn a_bundle_entry_carries_its_remote_status() {
        let bundle = json!({
            "deploymentStatuses": [{"metadata": {"name": "web"}, "statusRemote": 2}],
            "resourceStatuses": [{"group": "example.com", "version": "v1", "kind": "Widget", "name": "w",
                                  "statusRemote": "Synced", "readyCondition": "Synced", "res": {}}],
            "statusCollectionDisabled": [{"group": "", "kind": "ConfigMap"}],
        });
        assert_eq!(
            status_remote(&bundle, "apps", "Deployment", "web"),
            Some(&json!(2))
        );
        assert_eq!(
            status_remote(&bundle, "example.com", "Widget", "w"),
            Some(&json!("Synced"))
        );
        assert_eq!(status_remote(&bundle, "apps", "Deployment", "other"), None);
        assert_eq!(ready_condition(&bundle["resourceStatuses"][0]), Some("Synced"));
        assert!(collection_disabled(&bundle, "", "ConfigMap"));
        assert!(!collection_disabled(&bundle, "apps", "Deployment"));
    }

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
