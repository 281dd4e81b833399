//! The REST API end to end through the router (no socket), and the serving loop on a loopback socket
//! (`serving.rs`). One test binary for the whole crate: every binary links the full dependency tree, so one keeps
//! CI fast.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

mod auth;
mod browser;
mod contract;
mod conventions;
mod dtc;
mod fuzz;
mod gac;
mod gitops;
mod hpa;
mod integrity;
mod kubeconfig;
mod lifecycles;
mod multipart;
mod onboarding;
mod ops;
mod pull;
mod render_limits;
mod replicas;
mod serving;
mod state;
mod status;
mod status_configs;
mod support;
