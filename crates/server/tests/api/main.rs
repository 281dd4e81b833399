//! The REST API end to end through the router (no socket). One test binary for the whole crate: every binary
//! links the full dependency tree, so one keeps CI fast.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

mod browser;
mod kubeconfig;
mod onboarding;
mod render_limits;
mod status;
mod support;
