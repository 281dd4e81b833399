//! The one crate that pins `k8s-openapi` (and so the Kubernetes API version every emco-rs crate compiles against),
//! plus the names emco writes into clusters: the tracking label and the ResourceBundleState resource.
//!
//! Architecture invariant: pure data; no client, no I/O.

pub use k8s_openapi;

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
