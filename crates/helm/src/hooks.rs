//! Helm hooks and CRDs as EMCO applies them: which rendered objects are hooks (`helm.sh/hook`), their events,
//! weights and delete policies.
//!
//! STUB: filled in by the hooks work.
