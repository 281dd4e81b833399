//! rsync's settings.

use std::time::Duration;

/// How rsync retries and how much it does at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RsyncConfig {
    /// The first back-off after a cluster could not be reached (or answered 5xx/429).
    pub backoff_initial: Duration,
    /// The longest back-off.
    pub backoff_max: Duration,
    /// How long a batch waits before trying again on its own after its cluster could not be reached at all
    /// (refused, timed out, reset): the cluster is probed meanwhile ([`RsyncConfig::probe_interval`]) and the batch
    /// tries again as soon as it answers, so this is only a safety net.
    pub unreachable_retry: Duration,
    /// The longest delay a cluster's `Retry-After` (on a 429 or 5xx answer) may impose; it replaces the back-off
    /// for that retry, but is never shorter than `backoff_initial`.
    pub retry_after_max: Duration,
    /// How often a cluster whose batches wait out their back-off is probed (`GET /version`) to notice it answers
    /// again, at the least (more clusters than `probe_rate` × this are probed less often).
    pub probe_interval: Duration,
    /// The most probes per second across all clusters.
    pub probe_rate: u32,
    /// Give up after this many failed attempts on a cluster (`None`: retry until stopped, as EMCO does).
    pub max_retries: Option<u32>,
    /// How many (app, cluster) batches run at once across all contexts.
    pub concurrency: usize,
    /// How long one API request may take.
    pub request_timeout: Duration,
    /// How long to wait for a CRD to be established.
    pub crd_timeout: Duration,
    /// How long a hook (Job, Pod, Deployment, DaemonSet, StatefulSet) may take to succeed, and how long rsync
    /// waits for an object to be gone (a hook's previous object before it is created again; the main objects
    /// before post-delete hooks run). Helm's default `--timeout` is 5 minutes.
    pub hook_timeout: Duration,
    /// How often a hook's object is read while waiting for it.
    pub hook_poll: Duration,
    /// The server-side apply field manager.
    pub field_manager: String,
    /// What the kubeconfig policy allows beyond inline credentials (checked before every client is built).
    pub kubeconfig_policy: emco_k8s::kubeconfig::KubeconfigPolicy,
    /// Where the local mirrors of GitOps clusters' repositories are kept (none: a folder of this process under the
    /// system's temporary folder, removed when rsync goes).
    pub git_dir: Option<std::path::PathBuf>,
    /// How fresh a GitOps cluster's status is: the heads of a repository's status branches are fetched (one fetch
    /// for every cluster there) at most twice per this, and each cluster's watcher checks them four times per it,
    /// so a status commit is seen within about three quarters of it.
    pub git_status_poll: Duration,
    /// Whether rsync watches the ResourceBundleStates of the clusters it applies to (a pull cluster's agent, which
    /// applies with rsync's batches, reads them itself and sends them to emco).
    pub watch_bundles: bool,
    /// A logical cloud's user is impersonated with the cluster's own credentials (`Impersonate-User`) instead of
    /// authenticating with the certificate the cluster issued: a pull cluster's agent applies a cloud's apps as
    /// the cloud's service account.
    pub impersonate_users: bool,
}

impl Default for RsyncConfig {
    fn default() -> Self {
        Self {
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            unreachable_retry: Duration::from_secs(300),
            retry_after_max: Duration::from_secs(300),
            // A healed cluster is noticed within about 2 s while up to 100 clusters are probed (200: 4 s); 50
            // probes a second cost under 1 % of a core (BENCHMARKS.md, "A healed cluster").
            probe_interval: Duration::from_secs(2),
            probe_rate: 50,
            max_retries: None,
            // Enough to keep a loopback API busy from two cores without queueing thousands of requests.
            concurrency: 128,
            request_timeout: Duration::from_secs(30),
            crd_timeout: Duration::from_secs(60),
            hook_timeout: Duration::from_secs(300),
            hook_poll: Duration::from_millis(200),
            field_manager: "emco".into(),
            kubeconfig_policy: emco_k8s::kubeconfig::KubeconfigPolicy::default(),
            git_dir: None,
            git_status_poll: Duration::from_secs(1),
            watch_bundles: true,
            impersonate_users: false,
        }
    }
}

impl RsyncConfig {
    /// The back-off before attempt `attempt` (1-based): doubling from `backoff_initial`, capped, with ±20% jitter.
    #[must_use]
    pub fn backoff(&self, attempt: u32) -> Duration {
        let doubled = self
            .backoff_initial
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        let capped = doubled.min(self.backoff_max);
        let jitter = rand::random_range(0.8..1.2);
        capped.mul_f64(jitter)
    }

    /// The wait before trying a cluster that could not be reached again: `unreachable_retry` with ±20% jitter
    /// (the probe retries sooner when the cluster answers).
    #[must_use]
    pub fn unreachable_delay(&self) -> Duration {
        self.unreachable_retry.mul_f64(rand::random_range(0.8..1.2))
    }
}

impl RsyncConfig {
    /// The delay before the next attempt when the cluster asked for `retry_after`: honoured up to
    /// `retry_after_max`, never below `backoff_initial` (so an answer asking for no delay cannot make rsync spin).
    #[must_use]
    pub fn retry_after_delay(&self, retry_after: Duration) -> Duration {
        retry_after.min(self.retry_after_max).max(self.backoff_initial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let config = RsyncConfig {
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(1),
            ..RsyncConfig::default()
        };
        let first = config.backoff(1);
        assert!(
            first >= Duration::from_millis(80) && first <= Duration::from_millis(120),
            "{first:?}"
        );
        let third = config.backoff(3);
        assert!(
            third >= Duration::from_millis(320) && third <= Duration::from_millis(480),
            "{third:?}"
        );
        assert!(config.backoff(30) <= Duration::from_millis(1200));
        // A cluster that cannot be reached is tried again on its own rarely: it is probed meanwhile.
        let unreachable = config.unreachable_delay();
        assert!(
            unreachable >= Duration::from_secs(240) && unreachable <= Duration::from_secs(360),
            "{unreachable:?}"
        );
    }

    #[test]
    fn retry_after_is_honoured_within_bounds() {
        let config = RsyncConfig {
            backoff_initial: Duration::from_millis(100),
            retry_after_max: Duration::from_secs(300),
            ..RsyncConfig::default()
        };
        assert_eq!(
            config.retry_after_delay(Duration::from_secs(2)),
            Duration::from_secs(2)
        );
        assert_eq!(
            config.retry_after_delay(Duration::ZERO),
            Duration::from_millis(100)
        );
        assert_eq!(
            config.retry_after_delay(Duration::from_secs(86_400)),
            Duration::from_secs(300)
        );
    }
}
