//! What the monitor's watches and writes decode from its cluster, and no more.
//!
//! kube's `DynamicObject` flattens the type fields and the body into itself: serde then buffers every event whole
//! (its `Content` tree) before it builds the object's own tree from the buffer, and the monitor copied that into a
//! third tree to report it. [`Seen`] decodes an object straight into one tree and reads its metadata from it;
//! [`BundleHead`] decodes a ResourceBundleState's metadata and spec and skips its status unbuilt — the status is the
//! monitor's own writes, as large as everything the bundle reports, and comes back with every write's answer and
//! every watch event of the bundle.

use std::borrow::Cow;

use kube::api::ObjectMeta;
use kube::core::{ApiResource, DynamicResourceScope, Resource};
use serde::{Deserialize, Deserializer};
use serde_json::Value as Json;

/// An object of a watched kind: the whole object, as the bundle reports it, and its metadata.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) metadata: ObjectMeta,
    pub(crate) object: Json,
}

impl<'de> Deserialize<'de> for Seen {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = Json::deserialize(deserializer)?;
        let metadata = match object.get("metadata") {
            Some(metadata) => ObjectMeta::deserialize(metadata).map_err(serde::de::Error::custom)?,
            None => ObjectMeta::default(),
        };
        Ok(Self { metadata, object })
    }
}

/// A ResourceBundleState's metadata and spec; the status is skipped without being built.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct BundleHead {
    pub(crate) metadata: ObjectMeta,
    #[serde(default)]
    pub(crate) spec: Json,
}

/// Both are addressed as kube's dynamic objects are: by the [`ApiResource`] they are of.
macro_rules! dynamic_resource {
    ($type:ty) => {
        impl Resource for $type {
            type DynamicType = ApiResource;
            type Scope = DynamicResourceScope;

            fn kind(resource: &ApiResource) -> Cow<'_, str> {
                resource.kind.as_str().into()
            }

            fn group(resource: &ApiResource) -> Cow<'_, str> {
                resource.group.as_str().into()
            }

            fn version(resource: &ApiResource) -> Cow<'_, str> {
                resource.version.as_str().into()
            }

            fn api_version(resource: &ApiResource) -> Cow<'_, str> {
                resource.api_version.as_str().into()
            }

            fn plural(resource: &ApiResource) -> Cow<'_, str> {
                resource.plural.as_str().into()
            }

            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }

            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

dynamic_resource!(Seen);
dynamic_resource!(BundleHead);

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::DynamicObject;
    use serde_json::json;

    fn pod() -> Json {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "edge", "labels": {"emco/deployment-id": "7-web"},
                "resourceVersion": "12", "deletionTimestamp": "2026-12-03T10:00:00Z"},
            "spec": {"containers": [{"name": "main", "image": "web:1"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        })
    }

    #[test]
    fn a_seen_object_is_the_object_and_the_metadata_kube_reads_from_it() {
        let text = pod().to_string();
        let seen: Seen = serde_json::from_str(&text).unwrap();
        let dynamic: DynamicObject = serde_json::from_str(&text).unwrap();
        assert_eq!(seen.metadata, dynamic.metadata);
        assert_eq!(seen.object, pod());
        // What the monitor reported before: the dynamic object turned back into a tree.
        assert_eq!(seen.object, serde_json::to_value(&dynamic).unwrap());
    }

    #[test]
    fn an_object_without_metadata_or_with_malformed_metadata() {
        let seen: Seen = serde_json::from_str(r#"{"kind":"Pod"}"#).unwrap();
        assert_eq!(seen.metadata, ObjectMeta::default());
        assert!(serde_json::from_str::<Seen>(r#"{"metadata":{"labels":[1]}}"#).is_err());
    }

    #[test]
    fn a_bundle_head_keeps_the_spec_and_skips_the_status() {
        let rbs = json!({
            "apiVersion": "k8splugin.io/v1alpha1", "kind": "ResourceBundleState",
            "metadata": {"name": "7-web", "namespace": "default"},
            "spec": {"kinds": [{"group": "apps", "version": "v1", "kind": "Deployment"}]},
            "status": {"ready": true, "podStatuses": [{"name": "a"}]}
        });
        let head: BundleHead = serde_json::from_value(rbs.clone()).unwrap();
        assert_eq!(head.metadata.name.as_deref(), Some("7-web"));
        assert_eq!(head.spec, rbs["spec"]);
        let without: BundleHead = serde_json::from_str(r#"{"metadata":{"name":"x"}}"#).unwrap();
        assert_eq!(without.spec, Json::Null);
    }
}
