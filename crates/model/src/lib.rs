//! The vocabulary of emco-rs, shared by every other crate: EMCO resource bodies, lifecycle states, AppContext
//! status values and the name rules EMCO checks before anything is stored.
//!
//! Architecture invariant: this crate does no I/O and knows nothing about HTTP, storage or Kubernetes clients.
//! Types here are serialized into the REST API and into stored records, so their JSON shape is a compatibility
//! commitment.
//!
//! # Layout
//! - [`names`]: EMCO's name rule and Kubernetes label-value rule.
//! - [`resources`]: request and response bodies of the onboarding API.
//! - [`state`]: lifecycle states and the `state.Actions` history.
//! - [`lifecycle`]: the lifecycles of DIGs, cluster network intents and logical clouds as tables.
//! - [`context`]: AppContext ids and the status values rsync and the monitor report.
//! - [`hooks`]: Helm hooks (events, weight, delete policies) as rendered charts declare them.
//! - [`dependencies`]: app dependencies as a graph (the cycle check).
//! - [`duration`]: durations as users write them (`90s`, `5m`).
//! - [`rollout`]: progressive rollouts: a DIG's `spec.rollout`, its plan and the progress rsync records.
//! - [`network`]: ncm's network and provider-network bodies.
//! - [`logical_cloud`]: dcm's logical cloud, cluster reference, user permission, quota and kv bodies.
//! - [`status_config`]: per-kind status configurations (`/v2/status-configs`) and their status paths.
//! - [`status_collector`]: combined status: status collectors (CEL queries) and a DIG's status collection intents.
//! - [`gac`]: the generic action controller's intents, resources and customizations.
//! - [`ovnaction`]: ovnaction's network-controller intents, workload intents and interfaces.

pub mod context;
pub mod dependencies;
pub mod dtc;
pub mod duration;
pub mod gac;
pub mod hooks;
pub mod hpa;
pub mod lifecycle;
pub mod logical_cloud;
pub mod names;
pub mod network;
pub mod ovnaction;
pub mod resources;
pub mod rollout;
pub mod state;
pub mod status_collector;
pub mod status_config;

pub use context::{
    ClusterResourceStatus, Connectivity, ContextId, ContextStatus, Gvk, ReadyStatus, RsyncStatus,
};
pub use dependencies::dependency_cycle;
pub use hooks::{Hook, HookDeletePolicy, HookEvent};
pub use lifecycle::{LifecycleTable, Operation, Outcome};
pub use logical_cloud::{
    ClusterKvPairs, ClusterQuota, ClusterQuotaSpec, ClusterReference, ClusterReferenceSpec,
    ClusterSyncObjects, KvSpec, LogicalCloud, LogicalCloudKv, LogicalCloudLevel, LogicalCloudSpec,
    LogicalCloudUser, SECRET_SYNC_KEYS, UserPermission, UserPermissionSpec,
};
pub use names::{MAX_LABEL_VALUE_LEN, MAX_NAME_LEN, NameError, shown, validate_label_value, validate_name};
pub use network::{
    Ipv4Subnet, Network, NetworkSpec, ProviderNetType, ProviderNetwork, ProviderNetworkSpec, Vlan,
};
pub use resources::*;
pub use state::{Action, Modification, StateInfo, StateValue, format_timestamp, now_timestamp};
pub use status_config::{
    StatusCollection, StatusConfig, StatusConfigError, StatusConfigSpec, StatusPath, TargetType,
};
