//! AppContext vocabulary: context ids, the context's top-level status, per-resource rsync status, per-cluster
//! connectivity and Kubernetes group/version/kind.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The id of one instantiation: a random positive int63, written in decimal (e.g. `2755581958183303505`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextId(u64);

impl ContextId {
    /// Wraps a raw id; ids are positive and fit in 63 bits, like EMCO's.
    #[must_use]
    pub fn new(raw: u64) -> Option<Self> {
        (raw > 0 && raw <= i64::MAX as u64).then_some(Self(raw))
    }

    /// The raw number.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ContextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The shape of a context id as the API document states it: a positive decimal integer of at most 18 digits (so
/// always below 2^63, which the parser accepts).
pub const CONTEXT_ID_PATTERN: &str = "^[1-9][0-9]{0,17}$";

/// A string that is not a context id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a context id (a positive decimal integer below 2^63)")]
pub struct ParseContextIdError(pub String);

impl FromStr for ContextId {
    type Err = ParseContextIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseContextIdError(crate::names::shown(s)));
        }
        s.parse::<u64>()
            .ok()
            .and_then(Self::new)
            .ok_or_else(|| ParseContextIdError(crate::names::shown(s)))
    }
}

impl Serialize for ContextId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl schemars::JsonSchema for ContextId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ContextId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[0-9]+$",
            "description": "An AppContext's id: a positive 64-bit integer in decimal."
        })
    }
}

impl<'de> Deserialize<'de> for ContextId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value as EMCO writes it.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => stringify!($variant)),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $(stringify!($variant) => Ok($name::$variant),)+
                    other => Err(format!(
                        "'{}' is not one of {}",
                        $crate::names::shown(other),
                        [$(stringify!($variant)),+].join(", ")
                    )),
                }
            }
        }
    };
}

string_enum! {
    /// The top-level status of an AppContext, maintained by the rsync engine (seed 001, "AppContext State").
    ContextStatus {
        /// Rsync is applying the context's resources.
        Instantiating,
        /// Every resource was applied.
        Instantiated,
        /// A resource failed to apply, or the instantiation was stopped.
        InstantiateFailed,
        /// Rsync is deleting the context's resources.
        Terminating,
        /// Every resource was deleted.
        Terminated,
        /// A delete failed, or the termination was stopped.
        TerminateFailed,
        /// An update's new context is taking over from this one (`/update`, `/rollback`): this one deletes, once
        /// the new one is instantiated, what only it holds.
        Updating,
        /// An update's new context took over from this one; it holds nothing in the clusters any more.
        Updated,
        /// The update taking over from this one failed (the new context failed to instantiate, or a deletion of
        /// the handover failed); this one may still hold objects. EMCO writes this value as `UpdatedFailed`.
        UpdateFailed,
    }
}

impl ContextStatus {
    /// Whether an operation is still running for a context in this status.
    #[must_use]
    pub fn is_running(self) -> bool {
        matches!(self, Self::Instantiating | Self::Terminating)
    }

    /// Whether a context in this status may still hold objects in its clusters that no newer context holds
    /// (instantiated, or an update or instantiation that did not finish), so a terminate must delete them.
    #[must_use]
    pub fn may_hold_objects(self) -> bool {
        matches!(
            self,
            Self::Instantiated | Self::InstantiateFailed | Self::Updating | Self::UpdateFailed
        )
    }

    /// Whether a terminate has finished (successfully or not), so the context may be deleted.
    #[must_use]
    pub fn is_terminate_finished(self) -> bool {
        matches!(self, Self::Terminated | Self::TerminateFailed)
    }
}

string_enum! {
    /// The status of one rsync resource: what rsync last did with it (seed 000, "Rsync resource state values").
    RsyncStatus {
        /// Not handled by rsync yet.
        Pending,
        /// Applied to its cluster (says nothing about readiness).
        Applied,
        /// The cluster refused the apply or delete; rsync takes no further action.
        Failed,
        /// The cluster is unreachable or answers errors worth retrying (5xx, 429); rsync keeps trying.
        Retrying,
        /// Deleted from its cluster after a terminate.
        Deleted,
    }
}

string_enum! {
    /// Whether rsync can reach a cluster, as last known.
    Connectivity {
        /// Rsync has not talked to the cluster yet.
        Unknown,
        /// The last attempt reached the cluster.
        Available,
        /// The cluster is unreachable or answers errors worth retrying (5xx, 429), and rsync is retrying; the
        /// (app, cluster) record says why.
        Retrying,
    }
}

string_enum! {
    /// What the cluster reports about an rsync resource (seed 000, "Cluster resource status").
    ClusterResourceStatus {
        /// The cluster's ResourceBundleState lists the object.
        Present,
        /// The ResourceBundleState tracks the kind but does not list the object.
        NotPresent,
        /// No ResourceBundleState heard yet, or it does not track the kind.
        Unknown,
    }
}

string_enum! {
    /// Readiness of a resource (EMCO 22.x `status=ready`).
    ReadyStatus {
        /// Present and working.
        Ready,
        /// Present but not working (yet).
        NotReady,
        /// Expected but not in the cluster.
        NotPresent,
    }
}

/// A Kubernetes group, version and kind, with the capitalised keys of the status query (`{"Group","Version","Kind"}`).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Gvk {
    /// API group; empty for the core group.
    #[serde(rename = "Group")]
    pub group: String,
    /// API version.
    #[serde(rename = "Version")]
    pub version: String,
    /// Kind.
    #[serde(rename = "Kind")]
    pub kind: String,
}

impl Gvk {
    /// Splits an `apiVersion` (`apps/v1` or `v1`) and a kind.
    #[must_use]
    pub fn from_api_version(api_version: &str, kind: &str) -> Self {
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", api_version),
        };
        Self {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        }
    }

    /// The `apiVersion` string (`apps/v1`, or `v1` for the core group).
    #[must_use]
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_ids_parse_only_positive_int63() {
        assert_eq!(
            "2755581958183303505".parse::<ContextId>().map(ContextId::get),
            Ok(2755581958183303505)
        );
        for bad in ["", "0", "-1", "12a", "9223372036854775808", " 1"] {
            assert!(bad.parse::<ContextId>().is_err(), "{bad:?}");
        }
        let id: ContextId = serde_json::from_str("\"42\"").unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"42\"");
    }

    #[test]
    fn statuses_round_trip_and_name_the_allowed_values() {
        for status in RsyncStatus::ALL {
            assert_eq!(status.as_str().parse::<RsyncStatus>(), Ok(*status));
        }
        let err = "Done".parse::<ContextStatus>().unwrap_err();
        assert!(
            err.contains("Instantiating") && err.contains("TerminateFailed"),
            "{err}"
        );
    }

    #[test]
    fn gvk_splits_api_versions() {
        let core = Gvk::from_api_version("v1", "Service");
        assert_eq!((core.group.as_str(), core.version.as_str()), ("", "v1"));
        assert_eq!(core.api_version(), "v1");
        let apps = Gvk::from_api_version("apps/v1", "Deployment");
        assert_eq!(apps.api_version(), "apps/v1");
        assert_eq!(
            serde_json::to_string(&apps).unwrap(),
            r#"{"Group":"apps","Version":"v1","Kind":"Deployment"}"#
        );
    }
}
