//! The one crate that pins `k8s-openapi` (and so the Kubernetes API version every emco-rs crate compiles against),
//! plus what emco knows about what it writes into and reads from clusters: the tracking label, the
//! ResourceBundleState resource ([`bundle`]: what a bundle says of an object), per-kind readiness rules
//! ([`readiness`]) and the redaction of Secret values from anything emco shows ([`secret`]); the ovn4nfv network
//! resources cluster network intents create ([`network`]); the objects and user credentials of level-1 logical
//! clouds ([`logical_cloud`]); and resource quantities as Kubernetes reads them ([`quantity`]: kubesim's quotas,
//! the node capacity hardware-aware placement reads).
//!
//! Architecture invariant: pure data and functions; no client, no I/O.

pub mod bundle;
pub mod kubeconfig;
pub mod logical_cloud;
pub mod network;
pub mod quantity;
pub mod readiness;
pub mod secret;

pub use k8s_openapi;

use serde_json::{Value as Json, json};

/// The label rsync puts on every object it applies (and every pod template): `<contextId>-<app>`.
pub const DEPLOYMENT_ID_LABEL: &str = "emco/deployment-id";

/// The API group of the ResourceBundleState custom resource.
pub const RBS_GROUP: &str = "k8splugin.io";
/// The API version of the ResourceBundleState custom resource.
pub const RBS_VERSION: &str = "v1alpha1";
/// The kind of the ResourceBundleState custom resource.
pub const RBS_KIND: &str = "ResourceBundleState";
/// The plural (resource) name of the ResourceBundleState custom resource.
pub const RBS_PLURAL: &str = "resourcebundlestates";
/// The ResourceBundleState status field the monitor refreshes at every heartbeat, changed or not.
pub const RBS_HEARTBEAT_FIELD: &str = "heartbeat";

/// The name of the ResourceBundleState CRD.
pub const RBS_CRD_NAME: &str = "resourcebundlestates.k8splugin.io";

/// The ResourceBundleState CustomResourceDefinition, as rsync installs it where it is absent (and `deploy/` ships
/// it).
#[must_use]
pub fn rbs_crd() -> Json {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": RBS_CRD_NAME},
        "spec": {
            "group": RBS_GROUP,
            "scope": "Namespaced",
            "names": {"plural": RBS_PLURAL, "singular": "resourcebundlestate", "kind": RBS_KIND, "listKind": "ResourceBundleStateList",
                      "shortNames": ["rbs"]},
            "versions": [{
                "name": RBS_VERSION, "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
        },
    })
}

/// The ResourceBundleState that collects the status of one app's objects in one cluster: named after the label
/// value `<contextId>-<app>`, selecting that label.
#[must_use]
pub fn rbs_object(label_value: &str, namespace: &str) -> Json {
    json!({
        "apiVersion": format!("{RBS_GROUP}/{RBS_VERSION}"),
        "kind": RBS_KIND,
        "metadata": {"name": label_value, "namespace": namespace, "labels": {DEPLOYMENT_ID_LABEL: label_value}},
        "spec": {"selector": {"matchLabels": {DEPLOYMENT_ID_LABEL: label_value}}},
    })
}
