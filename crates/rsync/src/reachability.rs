//! Noticing within seconds that a cluster answers again. While batches (and bundle watchers) wait on a cluster
//! that could not be reached (refused, timed out, reset: `SyncError::Unreachable`), one prober per cluster opens a
//! TCP connection to its API server's address on a short interval with jitter — no TLS, no request: the cheapest
//! sign that the server listens again — and when one opens, every batch waiting on that cluster tries again at
//! once. So batches need not try on their own more than every [`RsyncConfig::unreachable_retry`], and a cluster
//! that stays down costs one connection attempt per interval.
//!
//! Cost is bounded for any number of clusters: all probes together run at most [`RsyncConfig::probe_rate`] per
//! second (the interval of each grows with the number of clusters probed) and at most [`MAX_PROBES_IN_FLIGHT`] at
//! once, each within [`PROBE_TIMEOUT`]; a cluster's prober ends when nothing waits on it. A server that accepts
//! connections but still fails requests wakes its batches at most once per interval.
//!
//! [`RsyncConfig::unreachable_retry`]: crate::RsyncConfig::unreachable_retry
//! [`RsyncConfig::probe_rate`]: crate::RsyncConfig::probe_rate

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{Semaphore, watch};

use crate::engine::Inner;
use crate::lock;

/// Probes in flight at once, across all clusters (a cluster that drops packets holds one for [`PROBE_TIMEOUT`]).
pub(crate) const MAX_PROBES_IN_FLIGHT: usize = 256;
/// How often a prober resolves its cluster's server name again (an address literal resolves without a lookup).
const RESOLVE_AGAIN: u32 = 30;
/// How long one probe may take.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The probers of the clusters batches wait on.
pub(crate) struct Reachability {
    clusters: Mutex<HashMap<String, Arc<Prober>>>,
    in_flight: Arc<Semaphore>,
}

impl std::fmt::Debug for Reachability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reachability({} clusters probed)", self.probed())
    }
}

/// One cluster's prober: how many batches wait on it, and a counter raised each time the cluster answered.
struct Prober {
    waiting: AtomicUsize,
    answered: watch::Sender<u64>,
}

/// A batch waiting on a cluster; dropping it stops counting the batch.
pub(crate) struct Wait {
    prober: Arc<Prober>,
    answered: watch::Receiver<u64>,
}

impl Drop for Wait {
    fn drop(&mut self) {
        self.prober.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Wait {
    /// Resolves when the cluster answered a probe after this wait began (never, if the prober ended).
    pub(crate) async fn answered(&mut self) {
        if self.answered.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl Reachability {
    pub(crate) fn new() -> Self {
        Self {
            clusters: Mutex::new(HashMap::new()),
            in_flight: Arc::new(Semaphore::new(MAX_PROBES_IN_FLIGHT)),
        }
    }

    /// How many clusters are probed now.
    pub(crate) fn probed(&self) -> usize {
        lock(&self.clusters).len()
    }

    /// Registers a batch waiting on `cluster`, starting the cluster's prober when it has none.
    pub(crate) fn wait(inner: &Arc<Inner>, cluster: &str) -> Wait {
        let mut clusters = lock(&inner.reachability.clusters);
        let prober = match clusters.get(cluster) {
            Some(prober) => prober.clone(),
            None => {
                let prober = Arc::new(Prober {
                    waiting: AtomicUsize::new(0),
                    answered: watch::channel(0).0,
                });
                clusters.insert(cluster.to_string(), prober.clone());
                tokio::spawn(probe(Arc::downgrade(inner), cluster.to_string(), prober.clone()));
                prober
            }
        };
        prober.waiting.fetch_add(1, Ordering::SeqCst);
        let answered = prober.answered.subscribe();
        Wait { prober, answered }
    }
}

/// The interval between two probes of one cluster when `probed` clusters are probed: the configured interval, or
/// longer so that all of them together stay within the configured rate; ±20 % jitter so that clusters that went
/// down together are not probed together.
pub(crate) fn probe_interval(base: Duration, rate: u32, probed: usize) -> Duration {
    let spread = Duration::from_secs_f64(probed as f64 / f64::from(rate.max(1)));
    base.max(spread).mul_f64(rand::random_range(0.8..1.2))
}

/// Probes `cluster` until no batch waits on it (or rsync is gone); raises the counter each time it answers.
async fn probe(inner: Weak<Inner>, cluster: String, prober: Arc<Prober>) {
    // The server's addresses, resolved once and again every [`RESOLVE_AGAIN`] probes.
    let mut addresses: Vec<std::net::SocketAddr> = Vec::new();
    let mut probes = 0u32;
    loop {
        let Some(interval) = inner.upgrade().map(|inner| {
            probe_interval(
                inner.config.probe_interval,
                inner.config.probe_rate,
                inner.reachability.probed(),
            )
        }) else {
            return;
        };
        tokio::time::sleep(interval).await;
        let Some(inner) = inner.upgrade() else { return };
        {
            // Ends only under the map's lock, so that a batch registering meanwhile finds no ended prober.
            let mut clusters = lock(&inner.reachability.clusters);
            if prober.waiting.load(Ordering::SeqCst) == 0 {
                clusters.remove(&cluster);
                return;
            }
        }
        let Ok(_permit) = inner.reachability.in_flight.clone().acquire_owned().await else {
            return;
        };
        if addresses.is_empty() || probes.is_multiple_of(RESOLVE_AGAIN) {
            addresses = resolve(&inner, &cluster).await;
        }
        probes = probes.wrapping_add(1);
        let answered = !addresses.is_empty()
            && matches!(
                tokio::time::timeout(PROBE_TIMEOUT, tokio::net::TcpStream::connect(&addresses[..])).await,
                Ok(Ok(_))
            );
        if answered {
            tracing::debug!(
                cluster,
                "the cluster answers again; its waiting batches retry now"
            );
            prober.answered.send_modify(|count| *count += 1);
        }
    }
}

/// The socket addresses of `cluster`'s API server; none when its kubeconfig or its server's name does not resolve
/// now (then the probe counts as not answering).
async fn resolve(inner: &Inner, cluster: &str) -> Vec<std::net::SocketAddr> {
    let Ok(address) = inner.clients.server_address(cluster).await else {
        return Vec::new();
    };
    match tokio::time::timeout(PROBE_TIMEOUT, tokio::net::lookup_host(address)).await {
        Ok(Ok(found)) => found.collect(),
        Ok(Err(_)) | Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_grows_with_the_clusters_probed_to_keep_the_rate() {
        let base = Duration::from_secs(2);
        for _ in 0..100 {
            let few = probe_interval(base, 100, 10);
            assert!(
                few >= Duration::from_millis(1600) && few <= Duration::from_millis(2400),
                "{few:?}"
            );
            // 10,000 clusters at 100 probes a second: each one every 100 s.
            let many = probe_interval(base, 100, 10_000);
            assert!(
                many >= Duration::from_secs(80) && many <= Duration::from_secs(120),
                "{many:?}"
            );
        }
    }
}
