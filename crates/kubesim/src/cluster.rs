//! One simulated cluster: its store, its timing, its faults and the shared handle the API handlers and the
//! simulated controllers use.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::auth::UserInfo;
use crate::store::Store;

/// The bearer token of the admin user (`kubesim-admin` in `system:masters`) on every cluster.
pub const ADMIN_TOKEN: &str = "kubesim";

/// How fast simulated workloads progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Timing {
    /// From a pod's scheduling to ContainerCreating.
    pub create_ms: u64,
    /// From ContainerCreating to Running and Ready.
    pub ready_ms: u64,
    /// How long a gracefully deleted pod takes to stop.
    pub terminate_ms: u64,
    /// How long a run-to-completion pod (a Job's, a bare `restartPolicy: Never` one, a hook) runs before it
    /// completes.
    pub job_run_ms: u64,
    /// Between watch bookmarks.
    pub bookmark_ms: u64,
    /// How long a LoadBalancer Service waits for its ingress address.
    pub load_balancer_ms: u64,
}

impl Default for Timing {
    fn default() -> Self {
        // A pod is Ready about 0.3 s after it is created: "ready within about a second".
        Self {
            create_ms: 50,
            ready_ms: 250,
            terminate_ms: 200,
            job_run_ms: 2_000,
            bookmark_ms: 15_000,
            load_balancer_ms: 500,
        }
    }
}

impl Timing {
    /// A duration of `ms` milliseconds.
    #[must_use]
    pub fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }
}

/// Faults switched on per cluster (admin endpoint, flags, or the library).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Faults {
    /// Refuse connections, as a cluster that is off the network.
    pub down: bool,
    /// Added to every API request.
    pub latency_ms: u64,
    /// The share of API requests (0 to 1) answered with `error_code` instead.
    pub error_rate: f64,
    /// 500, 503 or 429 (default 503).
    pub error_code: u16,
    /// Injected errors stop this many milliseconds after the faults were set (none: until the faults change).
    pub error_for_ms: Option<u64>,
    /// Sent with every injected 429 or 503 as the `Retry-After` header (and `details.retryAfterSeconds`, as the
    /// API server does); none when unset.
    pub retry_after_seconds: Option<u32>,
    /// Kinds whose create, update and patch are refused with 403 (as an admission webhook would).
    pub reject_kinds: Vec<String>,
    /// Run-to-completion pods (`restartPolicy` `Never`/`OnFailure`: bare pods, Jobs' pods, Helm hooks) whose name
    /// starts with one of these prefixes fail at the end of their run: exit code 1, reason `Error`, phase `Failed`.
    pub fail_pods: Vec<String>,
}

/// How many requests a cluster remembers in its [request log](ClusterShared::requests).
pub const REQUEST_LOG_LEN: usize = 4096;

/// One request a cluster received (injected faults included), for tests that check who asked what and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedRequest {
    /// When it arrived.
    pub at: Instant,
    /// The HTTP method.
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// Whether it asked to watch (`watch=true`/`watch=1`).
    pub watch: bool,
    /// Whether software inside the cluster made it (not counted among reads and writes).
    pub in_cluster: bool,
    /// The HTTP version it arrived with (HTTP/2 when the client offered it in ALPN).
    pub version: http::Version,
}

/// How a cluster is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// The cluster's name (`edge01`).
    pub name: String,
    /// How many nodes it simulates.
    pub nodes: usize,
    /// Workload timing.
    pub timing: Timing,
    /// Labels every node carries besides kubesim's own (a kubelet's `--node-labels`), e.g. `extraRuntime=virtlet`
    /// for workloads whose node affinity asks for it.
    pub node_labels: std::collections::BTreeMap<String, String>,
    /// Resources every node has (`cpu`, `memory`, `hugepages-2Mi`, an extended resource such as
    /// `intel.com/qat`), as quantities: each node's `status.capacity` and `status.allocatable`, over kubesim's
    /// defaults (32 CPUs, 256Gi, 1000 pods).
    pub node_capacity: std::collections::BTreeMap<String, String>,
    /// Serve plain HTTP (kubeconfigs carry the admin token) instead of HTTPS with a CA of its own and client
    /// certificates.
    pub insecure_http: bool,
    /// How many changes the store's change feed keeps for a lagging subscriber (a controller loop or a watch);
    /// one that falls further behind resyncs from the store. Small values exercise that path in tests.
    pub change_feed_capacity: usize,
    /// How many requests the [request log](ClusterShared::requests) keeps ([`REQUEST_LOG_LEN`] by default; the
    /// `kubesim` binary keeps none — nothing reads them there, and 4,096 per cluster are gigabytes at 10,000).
    pub request_log_len: usize,
    /// The Kubernetes release it plays: what `/version` answers and which API versions it serves.
    pub kubernetes_version: crate::KubernetesVersion,
}

impl ClusterConfig {
    /// A cluster with one node and default timing.
    #[must_use]
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            nodes: 1,
            timing: Timing::default(),
            node_labels: std::collections::BTreeMap::new(),
            node_capacity: std::collections::BTreeMap::new(),
            insecure_http: false,
            change_feed_capacity: crate::store::DEFAULT_CHANGE_FEED_CAPACITY,
            request_log_len: REQUEST_LOG_LEN,
            kubernetes_version: crate::KubernetesVersion::NEWEST,
        }
    }

    /// The same cluster playing Kubernetes `version`.
    #[must_use]
    pub fn with_kubernetes_version(mut self, version: crate::KubernetesVersion) -> Self {
        self.kubernetes_version = version;
        self
    }

    /// The same cluster with `key=value` on every node.
    #[must_use]
    pub fn with_node_label(mut self, key: &str, value: &str) -> Self {
        self.node_labels.insert(key.to_string(), value.to_string());
        self
    }

    /// The same cluster whose nodes each have `quantity` of `resource` (capacity and allocatable).
    #[must_use]
    pub fn with_node_capacity(mut self, resource: &str, quantity: &str) -> Self {
        self.node_capacity
            .insert(resource.to_string(), quantity.to_string());
        self
    }
}

/// The state of one cluster shared by its API handlers and controllers.
pub struct ClusterShared {
    /// The cluster's name.
    pub name: String,
    /// Its configuration.
    pub config: ClusterConfig,
    store: Mutex<Store>,
    /// The faults and when they were set.
    faults: Mutex<(Faults, Instant)>,
    /// The last [`REQUEST_LOG_LEN`] requests, oldest first.
    requests: Mutex<VecDeque<ServedRequest>>,
    /// How many writes (requests other than GET, HEAD and OPTIONS) the cluster received over the network since it
    /// started.
    writes: std::sync::atomic::AtomicU64,
    /// How many writes to objects (not to their `/status`) software inside the cluster made since it started: what
    /// a pull agent applied (a monitor writes status only).
    in_cluster_object_writes: std::sync::atomic::AtomicU64,
    /// How many reads (GET, HEAD, OPTIONS: lists, watches, discovery) the cluster received since it started.
    reads: std::sync::atomic::AtomicU64,
    /// How many connections the cluster accepted over the network (after the TLS handshake) since it started.
    connections: std::sync::atomic::AtomicU64,
    /// How many times a subscriber of the change feed fell behind: a watch ended with a 410 for its client to
    /// relist, or a controller loop resynced from the store.
    fell_behind: std::sync::atomic::AtomicU64,
    /// Bearer tokens and their users.
    tokens: Mutex<HashMap<String, UserInfo>>,
    /// The cluster's CA, serving and admin certificates (none: plain HTTP).
    pub authority: Option<crate::tls::ClusterAuthority>,
}

impl ClusterShared {
    /// A cluster whose revisions start after `initial_revision` (seed it from the clock so revisions never go
    /// backwards across simulator restarts), serving HTTPS with `authority` (none: plain HTTP).
    #[must_use]
    pub fn new(
        config: ClusterConfig,
        initial_revision: u64,
        authority: Option<crate::tls::ClusterAuthority>,
    ) -> Arc<Self> {
        let mut store = Store::with_change_feed(initial_revision, config.change_feed_capacity);
        store.catalog = crate::catalog::Catalog::serving(config.kubernetes_version);
        Arc::new(Self {
            name: config.name.clone(),
            config,
            store: Mutex::new(store),
            faults: Mutex::new((Faults::default(), Instant::now())),
            requests: Mutex::new(VecDeque::new()),
            writes: std::sync::atomic::AtomicU64::new(0),
            in_cluster_object_writes: std::sync::atomic::AtomicU64::new(0),
            reads: std::sync::atomic::AtomicU64::new(0),
            connections: std::sync::atomic::AtomicU64::new(0),
            fell_behind: std::sync::atomic::AtomicU64::new(0),
            tokens: Mutex::new(HashMap::from([(ADMIN_TOKEN.to_string(), UserInfo::admin())])),
            authority,
        })
    }

    /// Exclusive access to the store (never held across an await).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current faults.
    #[must_use]
    pub fn faults(&self) -> Faults {
        self.faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0
            .clone()
    }

    /// Whether a request arriving now is answered with an injected error (`error_rate`, within `error_for_ms`).
    #[must_use]
    pub fn inject_error(&self, faults: &Faults) -> bool {
        if faults.error_rate <= 0.0 {
            return false;
        }
        let set_at = self
            .faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1;
        let within = faults
            .error_for_ms
            .is_none_or(|ms| set_at.elapsed() < Duration::from_millis(ms));
        within && rand::Rng::random_bool(&mut rand::rng(), faults.error_rate.clamp(0.0, 1.0))
    }

    /// Notes a request in the request log (and counts it as a read or a write when it came over the network).
    pub fn log_request(&self, request: ServedRequest) {
        let read = matches!(request.method.as_str(), "GET" | "HEAD" | "OPTIONS");
        let counter = match (request.in_cluster, read) {
            (false, true) => Some(&self.reads),
            (false, false) => Some(&self.writes),
            (true, false) if !request.path.ends_with("/status") => Some(&self.in_cluster_object_writes),
            (true, _) => None,
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let capacity = self.config.request_log_len;
        if capacity == 0 {
            return;
        }
        let mut requests = self
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if requests.len() >= capacity {
            requests.pop_front();
        }
        requests.push_back(request);
    }

    /// How many writes (requests other than GET, HEAD and OPTIONS) the cluster received since it started.
    #[must_use]
    pub fn writes(&self) -> u64 {
        self.writes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many writes to objects (not to their status) software inside the cluster made since it started.
    #[must_use]
    pub fn in_cluster_object_writes(&self) -> u64 {
        self.in_cluster_object_writes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many reads (GET, HEAD, OPTIONS) the cluster received since it started.
    #[must_use]
    pub fn reads(&self) -> u64 {
        self.reads.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Notes that a subscriber of the change feed fell behind (a watch ended for its client to relist, or a
    /// controller loop resynced).
    pub fn note_fell_behind(&self) {
        self.fell_behind
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many times a subscriber of the change feed fell behind since the cluster started.
    #[must_use]
    pub fn fell_behind(&self) -> u64 {
        self.fell_behind.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many connections the cluster accepted over the network since it started (HTTP/2 carries many requests
    /// on one).
    #[must_use]
    pub fn connections(&self) -> u64 {
        self.connections.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts a connection accepted over the network.
    pub fn count_connection(&self) {
        self.connections
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The last requests the cluster received (at most [`REQUEST_LOG_LEN`]), oldest first.
    #[must_use]
    pub fn requests(&self) -> Vec<ServedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// Accepts `token` as a bearer token of `user` in `groups` (and `system:authenticated`).
    pub fn add_token(&self, token: &str, user: &str, groups: &[String]) {
        self.tokens
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(token.to_string(), UserInfo::authenticated(user, groups));
    }

    /// The user of a bearer token.
    #[must_use]
    pub fn token_user(&self, token: &str) -> Option<UserInfo> {
        self.tokens
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(token)
            .cloned()
    }

    /// Replaces the faults (an `error_for_ms` window starts now).
    pub fn set_faults(&self, faults: Faults) {
        *self
            .faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = (faults, Instant::now());
    }
}
