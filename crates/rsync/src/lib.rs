//! rsync, the resource synchronizer: turns an instantiated AppContext into objects in remote clusters and back,
//! keeping every resource's status honest.
//!
//! [`Rsync`] implements the lifecycle's [`Engine`](emco_appcontext::Engine): per context a worker, per (app,
//! cluster) a task; apps wait for the apps they depend on; in a cluster, CRDs go first and are waited for, then the
//! resources in order, each applied with server-side apply (field manager `emco`) and labelled
//! `emco/deployment-id: <contextId>-<app>` (pod templates too), then the app's ResourceBundleState. A logical
//! cloud user's certificate requests are approved and their certificates kept; a context with `credentials` is
//! applied with that user's client certificate. Unreachable
//! or failing clusters are retried with capped exponential back-off (or the delay their `Retry-After` asks for),
//! showing `Retrying` with the reason and the next attempt's time, and probed meanwhile so that a cluster that
//! answers again is retried at once; `/stop` ends an attempt; a terminate cancels a running
//! instantiation first. Every operation is recorded in the store before it starts, so [`Rsync::resume`] picks up
//! unfinished ones after a restart. A GitOps cluster (its body's `spec.gitOps`) is never dialled: its batches are
//! commits to its repository and its status is read from its status branch (`gitops.rs`).
//!
//! Architecture invariant: one of the three crates that build a `kube::Client`; status goes to the AppContext in one
//! write per (app, cluster) batch, never one write per resource.

pub mod agent;
mod apply;
mod bundle_stream;
mod capabilities;
mod clients;
mod config;
mod engine;
mod error;
mod gitops;
mod heartbeats;
pub mod labels;
mod nodes;
mod ownership;
mod pull;
mod reachability;
mod retry_after;
mod rollout;
mod status_configs;
mod transport;
mod watch;

pub use config::RsyncConfig;

/// Locks `mutex`, going on with its data if a holder panicked (every critical section here leaves it whole).
pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
pub use engine::Rsync;
pub use error::SyncError;
