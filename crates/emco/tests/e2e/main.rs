//! emco end to end: the REST API, rsync and kubesim clusters together — the vFW example instantiated and terminated,
//! unreachable clusters, stop, terminate during instantiate, rejected objects, kubesim as its own process, `emco
//! serve` killed with SIGKILL in the middle of an instantiation (what the API acknowledged survives), cluster status
//! from monitors, Helm hooks and chart CRDs, `emco demo` as a newcomer runs it, `emco serve`'s HTTPS, timeouts and
//! connection limit, `emco serve` on etcd (and several replicas on one etcd), a DIG's update and rollback, combined
//! status (CEL status collectors), live status streams and the web page in Chromium.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

mod auth;
#[path = "../../benches/common/bench_apps.rs"]
#[allow(dead_code)]
mod bench_apps;
mod browser;
mod cluster_status;
mod combined_status;
mod connections;
mod demo;
mod dtc;
mod durability;
mod emcoctl;
mod etcd;
mod gac;
mod gitops;
mod helm_chart;
mod hooks;
mod hpa;
mod kube_versions;
mod logical_clouds;
mod migrate;
mod network_intents;
mod ovnaction;
mod pull;
mod readiness;
mod replicas;
mod rollouts;
mod rsync;
mod scale;
#[path = "../../benches/common/scale_harness.rs"]
mod scale_harness;
mod stale_status;
mod status_configs;
mod streams;
mod support;
mod tls;
mod updates;
mod webhooks;
