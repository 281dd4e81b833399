//! kubesim end to end: kube-rs against simulated clusters (discovery both ways, server-side apply with conflicts,
//! watches from a resourceVersion, watcher recovery after a 410, CRDs, workloads becoming ready, faults), and the
//! kubectl conformance list run with the real `kubectl`, and HTTPS, authentication, RBAC authorization,
//! certificate signing requests and ResourceQuota admission. One test binary for the crate keeps CI's link time
//! down.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

mod auth;
mod client;
mod kubectl;
mod quota;
