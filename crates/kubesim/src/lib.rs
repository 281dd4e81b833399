//! kubesim: a Kubernetes API simulator serving many clusters from one process, faithful enough that kube-rs and
//! the real `kubectl` work against it (the role KWOK plays for Kubernetes), for tests, demos and scale benchmarks.
//!
//! Each cluster has its own store and revision counter ([`store`]), its own loopback port or a port shared by TLS
//! server name ([`server`]), the API
//! subset of `reference/kube-api-subset.md` ([`http`], [`watch`]: discovery, OpenAPI, CRUD, every patch type,
//! server-side apply with field ownership, selectors, pagination, watches with bookmarks and 410 expiry), simulated
//! controllers that move workloads through their lifecycle ([`controllers`]), switchable faults ([`cluster`]) and the
//! Kubernetes minor version each cluster plays ([`version`]); a cluster may play Flux v2 for GitOps ([`flux`]).
//! [`sim::Simulator`] starts many clusters in-process and hands out kubeconfigs and `kube::Client`s.
//!
//! Architecture invariant: kubesim is a normal dependency only of the `kubesim` binary and of `emco demo`; other
//! crates use it in tests.

pub mod access;
pub mod auth;
pub mod catalog;
pub mod cli;
pub mod cluster;
pub mod controllers;
pub mod csr;
pub mod defaults;
pub mod error;
pub mod fields;
pub mod flux;
pub mod http;
pub mod meta;
pub mod patch;
pub mod protobuf;
pub mod quota;
pub mod rbac;
pub mod request;
pub mod selector;
pub mod server;
pub mod sim;
pub mod store;
pub mod table;
pub mod tls;
pub mod version;
pub mod watch;

pub use cluster::{ClusterConfig, Faults, ServedRequest, Timing};
pub use controllers::{FAIL_ANNOTATION, READY_AFTER_ANNOTATION, RUN_FOR_ANNOTATION};
pub use sim::{Credentials, SimCluster, Simulator, cluster_name};
pub use tls::ClientCredentials;
pub use version::KubernetesVersion;
