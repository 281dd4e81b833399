//! The etcd backend: the store's keys live in an etcd cluster (v3 API) under a prefix, with etcd's own
//! revisions, compares, transactions and watches.
//!
//! Layout under the prefix (default `/emco`): a caller's key `K` is the etcd key `<prefix>/k<K>`. Values larger
//! than [`CHUNK_THRESHOLD`] (etcd refuses requests above 1.5 MiB by default, and charts can be bigger) are stored
//! as a small *head* at `<prefix>/k<K>` holding a manifest (magic, SHA-256, length, chunk count), plus chunk keys
//! `<prefix>/c<K>\0<sha256>/<index>` that ranges and watches never show. The chunks are written first, each in its
//! own request; then the caller's transaction writes the head, nested in an outer transaction guarded by "every
//! chunk of the set still exists" (so the caller's compares keep their meaning, and a head never names missing
//! chunks). A compare on a large value compares manifests, which are equal exactly when the values are.
//! Chunk sets no head names any more (overwritten, deleted, or staged for a transaction whose compares failed) are
//! removed by a delete guarded by "the head does not name this set": right after such a transaction, by the
//! background watch when a head changes, and by a sweep when the store is opened.
//!
//! Revisions are etcd's: they do not start at 0, and they skip numbers (chunk writes, other prefixes).
//! [`EtcdStore`]'s `revision()` is the newest revision of a change under the prefix this process has seen: from its
//! own write transactions and from a background watch of the prefix (so writes by other processes count once the
//! watch has delivered them). Reads' response revisions do not raise it: they may name writes outside the prefix,
//! which no watch of the prefix ever delivers, and whoever waits for a watch to reach `revision()` would wait
//! forever.
//!
//! Every request is bounded by a timeout; a failure or an unreachable cluster is [`Error::Backend`] naming the
//! endpoints (a write that timed out may still have taken effect; compares make retrying safe). A watch at a
//! compacted revision ends with [`Error::Compacted`] as its first item. A transaction above etcd's request size
//! (estimated before sending) or operation count (`--max-txn-ops`, 128 by default: raise it for large
//! instantiations) is [`Error::TooLarge`]. Two stores' prefixes must not nest (`/emco` and `/emco/k1`).
//!
//! Within one transaction, writes of the same key are folded to the last one (etcd refuses a transaction that
//! writes a key twice); a key deleted and put again in one transaction therefore keeps its create revision here,
//! where the other backends start it anew.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use sha2::{Digest as _, Sha256};
use tokio::sync::{mpsc, watch};
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

use crate::etcd_api::etcdserverpb::compare::{CompareResult, TargetUnion};
use crate::etcd_api::etcdserverpb::range_request::{SortOrder, SortTarget};
use crate::etcd_api::etcdserverpb::{
    CompactionRequest, LeaseGrantRequest, LeaseKeepAliveRequest, LeaseRevokeRequest, LeaseTimeToLiveRequest,
    RangeRequest, RequestOp, ResponseOp, TxnRequest, WatchCreateRequest, WatchRequest, response_op,
    watch_request,
};
use crate::etcd_api::mvccpb::{self, event::EventType};
use crate::etcd_api::{self, ChannelOptions, KvClient, LeaseClient, WatchClient, status_text};

use crate::engine::prefix_end;
use crate::{
    Compare, CompareOp, CompareTarget, Error, EtcdTls, Event, EventKind, KeyValue, Op, Result, Revision, Txn,
    TxnResponse, Watcher,
};

/// Values larger than this are stored in chunks.
pub const CHUNK_THRESHOLD: usize = 256 * 1024;
/// Bytes of one chunk.
const CHUNK_SIZE: usize = 1024 * 1024;
/// The largest value stored (chunked); larger ones are refused with [`Error::TooLarge`].
pub const MAX_VALUE_BYTES: usize = 64 * 1024 * 1024;
/// etcd's default request limit (`--max-request-bytes`); a transaction whose request would be larger is refused
/// before it is sent.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024 + 512 * 1024;
/// Bytes counted per operation and compare on top of its key and value when estimating a request's size.
const REQUEST_OVERHEAD_PER_ITEM: usize = 32;
/// The largest response decoded (a page of a range, a chunk set, a watch response).
const MAX_RESPONSE_BYTES: usize = 256 * 1024 * 1024;
/// Keys read per range request at first (fewer when a page's values exceed [`MAX_RESPONSE_BYTES`]). 1,000 keys
/// of ~1 KiB read 30,000 keys about twice as fast as 256 per page.
const RANGE_PAGE: i64 = 1000;
/// What the gRPC client says of a response above [`MAX_RESPONSE_BYTES`].
const TOO_LARGE_TO_DECODE: &str = "message length too large";
/// How long one request may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// How long opening waits for the cluster to answer.
const OPEN_TIMEOUT: Duration = Duration::from_secs(5);
/// How many times a transaction with chunked values is tried when its chunks vanish meanwhile.
const STAGE_ATTEMPTS: usize = 3;
/// Transactions a caller's watcher may have waiting before etcd's stream is paused.
const WATCH_BUFFER: usize = 64;
/// The pause before the background watch starts again after it failed.
const BACKGROUND_RETRY: Duration = Duration::from_secs(1);
/// How many times a range (or a get) is read again when etcd compacted its revision between two requests.
const RANGE_ATTEMPTS: usize = 3;
/// The start of a chunked value's head.
const MAGIC: &[u8] = b"\0emco-chunked-v1\0";
/// Most chunks a manifest may name.
const MAX_CHUNKS: usize = MAX_VALUE_BYTES.div_ceil(CHUNK_SIZE);

/// A store in an etcd cluster. Dropping it ends its background watch and every watcher of it.
pub struct EtcdStore {
    inner: Arc<Inner>,
    /// Dropped with the store: the background tasks and watchers notice and end.
    _shutdown: watch::Sender<()>,
}

struct Inner {
    kv: KvClient,
    lease: LeaseClient,
    watch: WatchClient,
    /// The endpoints as errors name them.
    endpoints: String,
    /// The prefix as configured (for `Debug`).
    prefix: String,
    /// `<prefix>/k`: callers' keys follow it.
    data_root: String,
    /// `<prefix>/c`: chunk keys follow it.
    chunk_root: String,
    revision: AtomicI64,
    runtime: tokio::runtime::Handle,
    shutdown: watch::Receiver<()>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "etcd {} under {}", self.inner.endpoints, self.inner.prefix)
    }
}

/// A value as it is written: inline, or as a head naming chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Manifest {
    digest: String,
    length: usize,
    chunks: usize,
}

impl Manifest {
    fn of(value: &[u8]) -> Self {
        let digest = Sha256::digest(value)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        Self {
            digest,
            length: value.len(),
            chunks: value.len().div_ceil(CHUNK_SIZE).max(1),
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(format!("{} {} {}", self.digest, self.length, self.chunks).as_bytes());
        bytes
    }

    /// The manifest in a head, `None` when the head holds an inline value, an error when it is a damaged one.
    fn decode(key: &str, head: &[u8]) -> Result<Option<Self>> {
        let Some(body) = head.strip_prefix(MAGIC) else {
            return Ok(None);
        };
        let bad = || Error::Backend(format!("the chunk manifest of key '{key}' is damaged"));
        let text = std::str::from_utf8(body).map_err(|_| bad())?;
        let mut fields = text.split(' ');
        let (Some(digest), Some(length), Some(chunks), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(bad());
        };
        let length: usize = length.parse().map_err(|_| bad())?;
        let chunks: usize = chunks.parse().map_err(|_| bad())?;
        if digest.len() != 64
            || !digest.bytes().all(|b| b.is_ascii_hexdigit())
            || length > MAX_VALUE_BYTES
            || chunks == 0
            || chunks > MAX_CHUNKS
        {
            return Err(bad());
        }
        Ok(Some(Self {
            digest: digest.to_string(),
            length,
            chunks,
        }))
    }
}

/// Whether a value is stored in chunks: when it is large, or when it would read as a manifest.
fn is_chunked(value: &[u8]) -> bool {
    value.len() > CHUNK_THRESHOLD || value.starts_with(MAGIC)
}

/// What the head of `value` holds: the value itself or its manifest.
fn head_of(value: &[u8]) -> Vec<u8> {
    if is_chunked(value) {
        Manifest::of(value).encode()
    } else {
        value.to_vec()
    }
}

/// One write of a branch after overlapping writes were folded (etcd refuses a transaction that writes a key twice
/// or puts a key a range delete of the same branch covers).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Write {
    Put {
        key: String,
        value: Vec<u8>,
        lease: Option<crate::LeaseId>,
    },
    Delete {
        key: String,
    },
    /// `[start, end)`; `end: None` is "to the end of the key space".
    DeleteRange {
        start: String,
        end: Option<String>,
    },
}

fn in_range(key: &str, start: &str, end: Option<&str>) -> bool {
    key >= start && end.is_none_or(|end| key < end)
}

/// Folds a branch's ops into writes etcd accepts in one transaction, with the same final state: a later write of
/// a key replaces an earlier one, a put inside an earlier range delete splits the range around the key. (One
/// difference remains: a key deleted and put again in one transaction keeps its create revision on etcd.)
fn fold_ops(ops: &[Op]) -> Vec<Write> {
    let mut writes: Vec<Write> = Vec::new();
    let is_point = |write: &Write, key: &str| match write {
        Write::Put { key: k, .. } | Write::Delete { key: k } => k == key,
        Write::DeleteRange { .. } => false,
    };
    for op in ops {
        match op {
            Op::Put { key, value, lease } => {
                writes.retain(|write| !is_point(write, key));
                let mut split = Vec::with_capacity(writes.len() + 2);
                for write in writes.drain(..) {
                    match write {
                        Write::DeleteRange { start, end } if in_range(key, &start, end.as_deref()) => {
                            if start.as_str() < key.as_str() {
                                split.push(Write::DeleteRange {
                                    start,
                                    end: Some(key.clone()),
                                });
                            }
                            let after = format!("{key}\0");
                            if end.as_deref().is_none_or(|end| after.as_str() < end) {
                                split.push(Write::DeleteRange { start: after, end });
                            }
                        }
                        other => split.push(other),
                    }
                }
                writes = split;
                writes.push(Write::Put {
                    key: key.clone(),
                    value: value.clone(),
                    lease: *lease,
                });
            }
            Op::Delete { key } => {
                writes.retain(|write| !is_point(write, key));
                let covered = writes.iter().any(|write| {
                    matches!(write, Write::DeleteRange { start, end } if in_range(key, start, end.as_deref()))
                });
                if !covered {
                    writes.push(Write::Delete { key: key.clone() });
                }
            }
            Op::DeletePrefix { prefix } => {
                let end = prefix_end(prefix);
                writes.retain(|write| match write {
                    Write::Put { key, .. } | Write::Delete { key } => !in_range(key, prefix, end.as_deref()),
                    Write::DeleteRange { .. } => true,
                });
                writes.push(Write::DeleteRange {
                    start: prefix.clone(),
                    end,
                });
            }
        }
    }
    writes
}

/// The byte string just after every key starting with `prefix` (etcd's range end; `\0` is "to the end").
pub(crate) fn bytes_prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

impl EtcdStore {
    /// Connects to the etcd cluster at `endpoints` (`http://host:port`, `https://host:port` with `tls`) and
    /// keeps every key under `prefix`. Fails within a few seconds, naming the endpoints, when no endpoint answers.
    /// Must run inside a tokio runtime, which the store's background tasks then use.
    pub async fn open(endpoints: &[String], prefix: &str, tls: Option<&EtcdTls>) -> Result<Self> {
        let label = endpoints.join(",");
        let open_error = |message: String| Error::Open {
            path: format!("etcd {label}"),
            message,
        };
        if endpoints.is_empty() {
            return Err(open_error("no etcd endpoint given".to_string()));
        }
        for endpoint in endpoints {
            let authority = endpoint
                .strip_prefix("http://")
                .or_else(|| endpoint.strip_prefix("https://"))
                .unwrap_or_default();
            if authority.is_empty() || authority.contains(char::is_whitespace) {
                return Err(open_error(format!(
                    "'{endpoint}' is not an etcd endpoint: expected http://host:port or https://host:port"
                )));
            }
            if endpoint.starts_with("https://") != tls.is_some() {
                return Err(open_error(format!(
                    "'{endpoint}': https endpoints need the TLS files, and TLS needs https endpoints"
                )));
            }
        }
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| open_error("opening an etcd store needs a tokio runtime".to_string()))?;
        let options = ChannelOptions::with_keep_alive(OPEN_TIMEOUT, tls.map(tls_options).transpose()?);
        let channel = etcd_api::channel(endpoints, &options).map_err(open_error)?;
        let root = prefix.trim_end_matches('/');
        let (shutdown_sender, shutdown) = watch::channel(());
        let inner = Arc::new(Inner {
            lease: LeaseClient::new(channel.clone()),
            kv: KvClient::new(channel.clone())
                .max_decoding_message_size(MAX_RESPONSE_BYTES)
                .max_encoding_message_size(MAX_RESPONSE_BYTES),
            watch: WatchClient::new(channel).max_decoding_message_size(MAX_RESPONSE_BYTES),
            endpoints: label.clone(),
            prefix: prefix.to_string(),
            data_root: format!("{root}/k"),
            chunk_root: format!("{root}/c"),
            revision: AtomicI64::new(0),
            runtime,
            shutdown,
        });
        // One request proves the cluster answers and gives the starting revision.
        let probe = RangeRequest {
            count_only: true,
            ..etcd_api::range(
                inner.data_root.clone(),
                Some(bytes_prefix_end(inner.data_root.as_bytes())),
            )
        };
        let mut kv = inner.kv.clone();
        let response = tokio::time::timeout(OPEN_TIMEOUT, kv.range(probe))
            .await
            .map_err(|_| open_error(format!("no answer within {OPEN_TIMEOUT:?}")))?
            .map_err(|status| open_error(status_text(&status)))?
            .into_inner();
        let revision = response.header.map_or(0, |header| header.revision);
        inner.revision.store(revision, Ordering::SeqCst);
        inner.runtime.spawn(background_watch(inner.clone(), revision));
        inner.runtime.spawn(sweep_chunks(inner.clone()));
        Ok(Self {
            inner,
            _shutdown: shutdown_sender,
        })
    }

    /// The endpoints, comma-separated.
    #[must_use]
    pub fn endpoints(&self) -> &str {
        &self.inner.endpoints
    }

    /// Compacts etcd's history up to `revision`: watches from older revisions then end with
    /// [`Error::Compacted`]. (etcd is usually compacted by its own `--auto-compaction-*` settings.)
    pub async fn compact(&self, revision: Revision) -> Result<()> {
        let mut kv = self.inner.kv.clone();
        let request = CompactionRequest {
            revision,
            physical: false,
        };
        self.inner.call("compaction", kv.compact(request)).await?;
        Ok(())
    }

    pub(crate) fn revision(&self) -> Revision {
        self.inner.revision.load(Ordering::SeqCst)
    }

    /// The revision of the newest change under the prefix that etcd holds now (asked of etcd; at least
    /// [`EtcdStore::revision`]): the newest mod revision of a key under the prefix. Unlike a response header's
    /// revision, a watch of the prefix reaches it. A change that only deleted keys leaves no key to show it, so
    /// it counts only once this process has seen it.
    pub(crate) async fn current_revision(&self) -> Result<Revision> {
        let seen = self.revision();
        let start = self.inner.data_root.clone();
        let end = bytes_prefix_end(start.as_bytes());
        let request = RangeRequest {
            keys_only: true,
            min_mod_revision: seen.saturating_add(1),
            sort_target: SortTarget::Mod.into(),
            sort_order: SortOrder::Descend.into(),
            limit: 1,
            ..etcd_api::range(start, Some(end))
        };
        let mut kv = self.inner.kv.clone();
        let response = self
            .inner
            .call("read of the newest revision", kv.range(request))
            .await?;
        Ok(response
            .kvs
            .first()
            .map_or(seen, |newest| newest.mod_revision.max(seen)))
    }

    pub(crate) async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            // Compacted only when etcd compacted between reading a head and its chunks: read both again.
            match self.inner.get(key).await {
                Err(Error::Compacted { .. }) if attempt < RANGE_ATTEMPTS => {}
                other => return other,
            }
        }
    }

    pub(crate) async fn range(&self, prefix: &str, limit: usize) -> Result<(Vec<KeyValue>, Revision)> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.inner.range(prefix, limit).await {
                Err(Error::Compacted { .. }) if attempt < RANGE_ATTEMPTS => {}
                other => return other,
            }
        }
    }

    pub(crate) async fn txn(&self, txn: Txn) -> Result<TxnResponse> {
        match self.inner.txn(&txn).await {
            Err(Error::Backend(message)) if message.contains("requested lease not found") => {
                let leased = txn.success.iter().chain(&txn.failure).find_map(|op| match op {
                    Op::Put {
                        key,
                        lease: Some(lease),
                        ..
                    } => Some((key.clone(), *lease)),
                    _ => None,
                });
                Err(match leased {
                    Some((key, lease)) => Error::LeaseNotFound { lease, key },
                    None => Error::Backend(message),
                })
            }
            other => other,
        }
    }

    pub(crate) async fn grant_lease(&self, ttl: Duration) -> Result<crate::LeaseId> {
        let seconds = i64::try_from(ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0)).unwrap_or(i64::MAX);
        let mut lease = self.inner.lease.clone();
        let request = LeaseGrantRequest { ttl: seconds, id: 0 };
        let response = self.inner.call("lease grant", lease.lease_grant(request)).await?;
        Ok(response.id)
    }

    pub(crate) async fn keep_alive(&self, id: crate::LeaseId) -> Result<Option<Duration>> {
        let mut lease = self.inner.lease.clone();
        // One request on a keep-alive stream; etcd answers a time to live of 0 for a lease that is gone, and the
        // lease's whole time to live for one it renewed.
        let answer = async {
            let requests = etcd_api::open_stream(LeaseKeepAliveRequest { id });
            let mut answers = lease.lease_keep_alive(requests).await?.into_inner();
            answers.message().await
        };
        match tokio::time::timeout(CALL_TIMEOUT, answer).await {
            Ok(Ok(Some(renewed))) => Ok(u64::try_from(renewed.ttl)
                .ok()
                .filter(|seconds| *seconds > 0)
                .map(Duration::from_secs)),
            Ok(Ok(None)) => Err(Error::Backend(format!(
                "etcd at {}: the lease keep-alive stream ended without an answer",
                self.inner.endpoints
            ))),
            Ok(Err(status)) if lease_gone(&status) => Ok(None),
            Ok(Err(status)) => Err(self.inner.error("lease keep-alive", &status)),
            Err(_) => Err(Error::Backend(format!(
                "etcd at {}: lease keep-alive got no answer within {CALL_TIMEOUT:?}",
                self.inner.endpoints
            ))),
        }
    }

    pub(crate) async fn lease_status(&self, id: crate::LeaseId) -> Result<Option<crate::LeaseStatus>> {
        let mut lease = self.inner.lease.clone();
        let request = LeaseTimeToLiveRequest { id, keys: false };
        let response = match tokio::time::timeout(CALL_TIMEOUT, lease.lease_time_to_live(request)).await {
            Ok(Ok(response)) => response.into_inner(),
            Ok(Err(status)) if lease_gone(&status) => return Ok(None),
            Ok(Err(status)) => return Err(self.inner.error("lease status", &status)),
            Err(_) => {
                return Err(Error::Backend(format!(
                    "etcd at {}: lease status got no answer within {CALL_TIMEOUT:?}",
                    self.inner.endpoints
                )));
            }
        };
        // etcd answers -1 for a lease that expired.
        let (Ok(remaining), Ok(granted)) = (u64::try_from(response.ttl), u64::try_from(response.granted_ttl))
        else {
            return Ok(None);
        };
        Ok(Some(crate::LeaseStatus {
            id,
            granted_ttl: Duration::from_secs(granted),
            remaining: Duration::from_secs(remaining),
        }))
    }

    pub(crate) async fn revoke_lease(&self, id: crate::LeaseId) -> Result<()> {
        let mut lease = self.inner.lease.clone();
        match tokio::time::timeout(CALL_TIMEOUT, lease.lease_revoke(LeaseRevokeRequest { id })).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(status)) if lease_gone(&status) => Ok(()),
            Ok(Err(status)) => Err(self.inner.error("lease revoke", &status)),
            Err(_) => Err(Error::Backend(format!(
                "etcd at {}: lease revoke got no answer within {CALL_TIMEOUT:?}",
                self.inner.endpoints
            ))),
        }
    }

    pub(crate) fn watch(&self, prefix: &str, after: Option<Revision>) -> Result<Watcher> {
        let start = after.unwrap_or_else(|| self.revision()) + 1;
        let (sender, receiver) = mpsc::channel(WATCH_BUFFER);
        self.inner.runtime.spawn(forward_watch(
            self.inner.clone(),
            prefix.to_string(),
            start,
            sender,
        ));
        Ok(Watcher::from_channel(receiver))
    }
}

/// Whether etcd refused a request because the lease it names does not exist (any more).
fn lease_gone(status: &tonic::Status) -> bool {
    status.message().contains("requested lease not found")
}

/// The TLS settings of a channel to etcd, from the PEM files `tls` names.
pub(crate) fn tls_options(tls: &EtcdTls) -> Result<ClientTlsConfig> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|err| Error::Open {
            path: path.display().to_string(),
            message: format!("cannot read the etcd TLS file: {err}"),
        })
    };
    let mut options = ClientTlsConfig::new();
    if let Some(ca) = &tls.ca_file {
        options = options.ca_certificate(Certificate::from_pem(read(ca)?));
    }
    match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => {
            options = options.identity(Identity::from_pem(read(cert)?, read(key)?));
        }
        (None, None) => {}
        _ => {
            return Err(Error::Open {
                path: "etcd TLS".to_string(),
                message: "a client certificate and its key go together: give both or neither".to_string(),
            });
        }
    }
    Ok(options)
}

impl Inner {
    fn data_key(&self, key: &str) -> String {
        format!("{}{key}", self.data_root)
    }

    fn chunk_set_prefix(&self, key: &str, manifest: &Manifest) -> String {
        format!("{}{key}\0{}/", self.chunk_root, manifest.digest)
    }

    fn chunk_key(&self, key: &str, manifest: &Manifest, index: usize) -> String {
        format!("{}{index:06}", self.chunk_set_prefix(key, manifest))
    }

    /// The caller's key of an etcd key under the data root.
    fn user_key(&self, etcd_key: &[u8]) -> Result<String> {
        etcd_key
            .strip_prefix(self.data_root.as_bytes())
            .and_then(|key| std::str::from_utf8(key).ok())
            .map(str::to_string)
            .ok_or_else(|| {
                Error::Backend(format!(
                    "etcd key '{}' under {} is not a store key",
                    String::from_utf8_lossy(etcd_key),
                    self.data_root
                ))
            })
    }

    fn error(&self, what: &str, status: &tonic::Status) -> Error {
        let text = status_text(status);
        if text.contains("required revision has been compacted") {
            return Error::Compacted {
                requested: 0,
                compacted: 0,
            };
        }
        if text.contains("request is too large") || text.contains("larger than max") {
            return Error::TooLarge(format!(
                "etcd at {} refused the {what} as too large (its --max-request-bytes): {text}",
                self.endpoints
            ));
        }
        if text.contains("too many operations in txn request") {
            return Error::TooLarge(format!(
                "etcd at {} refused the {what}: it has more operations than etcd's --max-txn-ops allows ({text})",
                self.endpoints
            ));
        }
        Error::Backend(format!("etcd at {}: {what} failed: {text}", self.endpoints))
    }

    /// Runs one request, bounded by [`CALL_TIMEOUT`].
    async fn call<T>(
        &self,
        what: &str,
        request: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T> {
        match tokio::time::timeout(CALL_TIMEOUT, request).await {
            Ok(Ok(response)) => Ok(response.into_inner()),
            Ok(Err(status)) => Err(self.error(what, &status)),
            Err(_) => Err(Error::Backend(format!(
                "etcd at {}: {what} got no answer within {CALL_TIMEOUT:?}",
                self.endpoints
            ))),
        }
    }

    /// A key-value as callers see it: the user key and the whole value (chunks read at `revision`).
    async fn to_key_value(&self, kv: &mvccpb::KeyValue, revision: Revision) -> Result<KeyValue> {
        let key = self.user_key(&kv.key)?;
        let value = self.value_of(&key, &kv.value, revision).await?;
        Ok(KeyValue {
            key,
            value,
            create_revision: kv.create_revision,
            mod_revision: kv.mod_revision,
            version: kv.version,
        })
    }

    /// The value a head stands for: itself, or its chunks as they were at `revision`.
    async fn value_of(&self, key: &str, head: &[u8], revision: Revision) -> Result<Vec<u8>> {
        let Some(manifest) = Manifest::decode(key, head)? else {
            return Ok(head.to_vec());
        };
        let mut kv = self.kv.clone();
        let set = self.chunk_set_prefix(key, &manifest);
        let end = bytes_prefix_end(set.as_bytes());
        let request = RangeRequest {
            revision,
            ..etcd_api::range(set, Some(end))
        };
        let response = self
            .call(&format!("read of the chunks of key '{key}'"), kv.range(request))
            .await
            .map_err(|err| match err {
                Error::Compacted { .. } => Error::Compacted {
                    requested: revision,
                    compacted: revision,
                },
                other => other,
            })?;
        let mut value = Vec::with_capacity(manifest.length);
        for chunk in &response.kvs {
            value.extend_from_slice(&chunk.value);
            if value.len() > manifest.length {
                break;
            }
        }
        if response.kvs.len() != manifest.chunks
            || value.len() != manifest.length
            || Manifest::of(&value).digest != manifest.digest
        {
            return Err(Error::Backend(format!(
                "the chunks of key '{key}' at revision {revision} are incomplete or damaged"
            )));
        }
        Ok(value)
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        let mut kv = self.kv.clone();
        let response = self
            .call(
                &format!("read of key '{key}'"),
                kv.range(etcd_api::range(self.data_key(key), None)),
            )
            .await?;
        let revision = response.header.map_or(0, |header| header.revision);
        match response.kvs.first() {
            Some(found) => Ok(Some(self.to_key_value(found, revision).await?)),
            None => Ok(None),
        }
    }

    async fn range(&self, prefix: &str, limit: usize) -> Result<(Vec<KeyValue>, Revision)> {
        let start = self.data_key(prefix);
        let end = bytes_prefix_end(start.as_bytes());
        let mut from = start.into_bytes();
        let mut items = Vec::new();
        let mut revision = 0;
        let mut page_size = RANGE_PAGE;
        while items.len() < limit {
            let page = page_size.min(i64::try_from(limit - items.len()).unwrap_or(page_size));
            // Every page after the first reads the snapshot of the first one.
            let request = RangeRequest {
                limit: page,
                revision,
                ..etcd_api::range(from.clone(), Some(end.clone()))
            };
            let mut kv = self.kv.clone();
            let response = match self
                .call(&format!("range read of prefix '{prefix}'"), kv.range(request))
                .await
            {
                Ok(response) => response,
                // A page of large values may exceed the response limit: read fewer keys at a time.
                Err(Error::Backend(message)) if message.contains(TOO_LARGE_TO_DECODE) && page_size > 1 => {
                    page_size /= 2;
                    continue;
                }
                Err(err) => return Err(err),
            };
            if revision == 0 {
                revision = response.header.map_or(0, |header| header.revision);
            }
            for found in &response.kvs {
                items.push(self.to_key_value(found, revision).await?);
            }
            match response.kvs.last() {
                Some(last) if response.more => {
                    from.clone_from(&last.key);
                    from.push(0);
                }
                _ => break,
            }
        }
        Ok((items, revision))
    }

    fn compare(&self, compare: &Compare) -> crate::etcd_api::etcdserverpb::Compare {
        let key = self.data_key(&compare.key);
        let result = match compare.op {
            CompareOp::Equal => CompareResult::Equal,
            CompareOp::NotEqual => CompareResult::NotEqual,
            CompareOp::Greater => CompareResult::Greater,
            CompareOp::Less => CompareResult::Less,
        };
        let (value, range_end) = match &compare.target {
            CompareTarget::CreateRevision(revision) => (TargetUnion::CreateRevision(*revision), None),
            CompareTarget::ModRevision(revision) => (TargetUnion::ModRevision(*revision), None),
            CompareTarget::PrefixModRevision(revision) => (
                TargetUnion::ModRevision(*revision),
                Some(bytes_prefix_end(key.as_bytes())),
            ),
            CompareTarget::Version(version) => (TargetUnion::Version(*version), None),
            // A large value compares as its manifest: equal manifests mean equal values.
            CompareTarget::Value(value) => (TargetUnion::Value(head_of(value)), None),
        };
        etcd_api::compare(key, result, value, range_end)
    }

    fn txn_op(&self, write: &Write) -> RequestOp {
        match write {
            Write::Put { key, value, lease } => etcd_api::put_op(self.data_key(key), head_of(value), *lease),
            Write::Delete { key } => etcd_api::delete_op(self.data_key(key), None),
            Write::DeleteRange { start, end } => {
                let end = match end {
                    Some(end) => self.data_key(end).into_bytes(),
                    None => bytes_prefix_end(self.data_root.as_bytes()),
                };
                etcd_api::delete_op(self.data_key(start), Some(end))
            }
        }
    }

    /// Refuses values and transactions etcd would refuse, naming the largest values.
    fn check_size(txn: &Txn, success: &[Write], failure: &[Write]) -> Result<()> {
        let mut values: Vec<(&str, usize)> = Vec::new();
        let mut bytes = 0usize;
        for compare in &txn.compares {
            let target = match &compare.target {
                CompareTarget::Value(value) => head_of(value).len(),
                _ => 8,
            };
            bytes += compare.key.len() + target + REQUEST_OVERHEAD_PER_ITEM;
        }
        for write in success.iter().chain(failure) {
            bytes += REQUEST_OVERHEAD_PER_ITEM;
            match write {
                Write::Put { key, value, .. } => {
                    if value.len() > MAX_VALUE_BYTES {
                        return Err(Error::TooLarge(format!(
                            "the value of key '{key}' has {} bytes; the etcd store keeps values up to {MAX_VALUE_BYTES} bytes",
                            value.len()
                        )));
                    }
                    let head = if is_chunked(value) {
                        Manifest::of(value).encode().len()
                    } else {
                        value.len()
                    };
                    bytes += key.len() + head;
                    values.push((key, head));
                }
                Write::Delete { key } => bytes += key.len(),
                Write::DeleteRange { start, end } => {
                    bytes += start.len() + end.as_ref().map_or(0, String::len);
                }
            }
        }
        if bytes > MAX_REQUEST_BYTES {
            values.sort_by_key(|value| std::cmp::Reverse(value.1));
            let largest: Vec<String> = values
                .iter()
                .take(3)
                .map(|(key, size)| format!("'{key}' ({size} bytes)"))
                .collect();
            return Err(Error::TooLarge(format!(
                "the transaction needs a request of about {bytes} bytes, more than etcd's limit of \
                 {MAX_REQUEST_BYTES} bytes (--max-request-bytes); its largest values: {}",
                largest.join(", ")
            )));
        }
        Ok(())
    }

    /// The chunk sets the puts of `writes` need, keyed by chunk-set prefix.
    fn chunk_sets<'a>(&self, writes: &'a [Write]) -> BTreeMap<String, (&'a str, Manifest, &'a [u8])> {
        let mut sets = BTreeMap::new();
        for write in writes {
            if let Write::Put { key, value, .. } = write
                && is_chunked(value)
            {
                let manifest = Manifest::of(value);
                sets.insert(
                    self.chunk_set_prefix(key, &manifest),
                    (key.as_str(), manifest, value.as_slice()),
                );
            }
        }
        sets
    }

    /// Writes a value's chunks (each in its own request, below etcd's request limit).
    async fn stage(&self, key: &str, manifest: &Manifest, value: &[u8]) -> Result<()> {
        for index in (0..manifest.chunks).rev() {
            let start = index * CHUNK_SIZE;
            let chunk = value
                .get(start..value.len().min(start + CHUNK_SIZE))
                .unwrap_or_default();
            let mut kv = self.kv.clone();
            let request = crate::etcd_api::etcdserverpb::PutRequest {
                key: self.chunk_key(key, manifest, index).into_bytes(),
                value: chunk.to_vec(),
                ..Default::default()
            };
            self.call(&format!("write of chunk {index} of key '{key}'"), kv.put(request))
                .await?;
        }
        Ok(())
    }

    /// Deletes the chunk set `digest` of `key` unless `key`'s head names it — guarded inside etcd, so a set a
    /// writer has just made current is never lost, and one a writer is about to make current is noticed by that
    /// writer's own guard (every chunk exists), which then writes the set again.
    async fn drop_chunk_set(&self, key: &str, digest: &str) -> Result<()> {
        let head_key = self.data_key(key);
        let set = format!("{}{key}\0{digest}/", self.chunk_root);
        let delete = || etcd_api::delete_op(set.clone(), Some(bytes_prefix_end(set.as_bytes())));
        // A head naming this set starts with `naming` and goes on with digits and spaces, all below 0x7f.
        let mut naming = MAGIC.to_vec();
        naming.extend_from_slice(digest.as_bytes());
        naming.push(b' ');
        let mut beyond = naming.clone();
        beyond.push(0x7f);
        let above = TxnRequest {
            compare: vec![etcd_api::compare(
                head_key.clone(),
                CompareResult::Greater,
                TargetUnion::Value(beyond),
                None,
            )],
            success: vec![delete()],
            failure: Vec::new(),
        };
        let below_or_above = TxnRequest {
            compare: vec![etcd_api::compare(
                head_key.clone(),
                CompareResult::Less,
                TargetUnion::Value(naming),
                None,
            )],
            success: vec![delete()],
            failure: vec![etcd_api::txn_op(above)],
        };
        let txn = TxnRequest {
            compare: vec![etcd_api::compare(
                head_key,
                CompareResult::Equal,
                TargetUnion::CreateRevision(0),
                None,
            )],
            success: vec![delete()],
            failure: vec![etcd_api::txn_op(below_or_above)],
        };
        let mut kv = self.kv.clone();
        self.call(&format!("removal of stale chunks of key '{key}'"), kv.txn(txn))
            .await?;
        Ok(())
    }

    async fn txn(&self, txn: &Txn) -> Result<TxnResponse> {
        let success = fold_ops(&txn.success);
        let failure = fold_ops(&txn.failure);
        Self::check_size(txn, &success, &failure)?;
        let inner = TxnRequest {
            compare: txn.compares.iter().map(|c| self.compare(c)).collect(),
            success: success.iter().map(|w| self.txn_op(w)).collect(),
            failure: failure.iter().map(|w| self.txn_op(w)).collect(),
        };
        let success_sets = self.chunk_sets(&success);
        let failure_sets = self.chunk_sets(&failure);
        if success_sets.is_empty() && failure_sets.is_empty() {
            let mut kv = self.kv.clone();
            let response = self.call("transaction", kv.txn(inner)).await?;
            let revision = response.header.map_or(0, |header| header.revision);
            return Ok(self.outcome(response.succeeded, &response.responses, revision));
        }
        let all_sets: Vec<_> = success_sets.values().chain(failure_sets.values()).collect();
        for attempt in 1..=STAGE_ATTEMPTS {
            for (key, manifest, value) in &all_sets {
                self.stage(key, manifest, value).await?;
            }
            // Every chunk must still exist: a removal may have come between two chunks being written.
            let guards = all_sets
                .iter()
                .flat_map(|(key, manifest, _)| {
                    (0..manifest.chunks).map(|index| {
                        etcd_api::compare(
                            self.chunk_key(key, manifest, index),
                            CompareResult::Greater,
                            TargetUnion::CreateRevision(0),
                            None,
                        )
                    })
                })
                .collect();
            let outer = TxnRequest {
                compare: guards,
                success: vec![etcd_api::txn_op(inner.clone())],
                failure: Vec::new(),
            };
            let mut kv = self.kv.clone();
            let response = self.call("transaction", kv.txn(outer)).await?;
            if !response.succeeded {
                tracing::debug!(
                    attempt,
                    "chunks of a transaction vanished before it ran; writing them again"
                );
                continue;
            }
            let revision = response.header.map_or(0, |header| header.revision);
            let Some(response_op::Response::ResponseTxn(answer)) =
                response.responses.into_iter().next().and_then(|op| op.response)
            else {
                return Err(Error::Backend(format!(
                    "etcd at {} answered a transaction without its inner result",
                    self.endpoints
                )));
            };
            let outcome = self.outcome(answer.succeeded, &answer.responses, revision);
            // The branch that did not run staged chunks nobody names.
            let unused = if answer.succeeded {
                &failure_sets
            } else {
                &success_sets
            };
            for (key, manifest, _) in unused.values() {
                if let Err(err) = self.drop_chunk_set(key, &manifest.digest).await {
                    tracing::warn!(key, error = %err, "cannot remove unused chunks; the next sweep will");
                }
            }
            return Ok(outcome);
        }
        Err(Error::Backend(format!(
            "etcd at {}: the chunks of a transaction were removed {STAGE_ATTEMPTS} times before it could run",
            self.endpoints
        )))
    }

    /// The response of a transaction whose executed branch answered `responses` at `revision`; raises the
    /// store's revision when the branch changed something.
    fn outcome(&self, succeeded: bool, responses: &[ResponseOp], revision: Revision) -> TxnResponse {
        let changed = responses.iter().any(|response| match &response.response {
            Some(response_op::Response::ResponsePut(_)) => true,
            Some(response_op::Response::ResponseDeleteRange(delete)) => delete.deleted > 0,
            Some(response_op::Response::ResponseRange(_) | response_op::Response::ResponseTxn(_)) | None => {
                false
            }
        });
        let revision = if changed {
            self.revision.fetch_max(revision, Ordering::SeqCst).max(revision)
        } else {
            self.revision.load(Ordering::SeqCst)
        };
        TxnResponse { succeeded, revision }
    }

    /// Converts one watch response's events to callers' events, one batch per revision.
    async fn batches(&self, events: &[mvccpb::Event]) -> Result<Vec<(Revision, Vec<Event>)>> {
        let mut batches: Vec<(Revision, Vec<Event>)> = Vec::new();
        for event in events {
            let Some(kv) = &event.kv else { continue };
            let revision = kv.mod_revision;
            let converted = match event.r#type() {
                EventType::Put => Event {
                    kind: EventKind::Put,
                    kv: self.to_key_value(kv, revision).await?,
                },
                EventType::Delete => Event {
                    kind: EventKind::Delete,
                    kv: KeyValue {
                        key: self.user_key(&kv.key)?,
                        value: Vec::new(),
                        create_revision: kv.create_revision,
                        mod_revision: revision,
                        version: 0,
                    },
                },
            };
            match batches.last_mut() {
                Some((last, batch)) if *last == revision => batch.push(converted),
                _ => batches.push((revision, vec![converted])),
            }
        }
        Ok(batches)
    }
}

/// Feeds a caller's watcher: etcd's watch of `<data root><prefix>` from `start`, one batch per revision; ends
/// with an error (compaction, connection loss), when the watcher is dropped, or when the store is.
async fn forward_watch(
    inner: Arc<Inner>,
    prefix: String,
    start: Revision,
    sender: mpsc::Sender<Result<(Revision, Vec<Event>)>>,
) {
    let mut shutdown = inner.shutdown.clone();
    tokio::select! {
        () = watch_into(&inner, &prefix, start, &sender) => {}
        () = sender.closed() => {}
        _ = shutdown.changed() => {}
    }
}

async fn watch_into(
    inner: &Inner,
    prefix: &str,
    start: Revision,
    sender: &mpsc::Sender<Result<(Revision, Vec<Event>)>>,
) {
    let what = format!("watch of prefix '{prefix}'");
    let key = inner.data_key(prefix).into_bytes();
    let request = watch_create(WatchCreateRequest {
        range_end: bytes_prefix_end(&key),
        key,
        start_revision: start,
        ..WatchCreateRequest::default()
    });
    let mut client = inner.watch.clone();
    let mut stream = match inner
        .call(&what, client.watch(etcd_api::open_stream(request)))
        .await
    {
        Ok(stream) => stream,
        Err(err) => {
            let _ = sender.send(Err(err)).await;
            return;
        }
    };
    loop {
        let response = match stream.message().await {
            Ok(Some(response)) => response,
            Ok(None) => {
                let _ = sender
                    .send(Err(Error::Backend(format!(
                        "etcd at {}: the {what} ended",
                        inner.endpoints
                    ))))
                    .await;
                return;
            }
            Err(err) => {
                let _ = sender.send(Err(inner.error(&what, &err))).await;
                return;
            }
        };
        // etcd answers a watch at a compacted revision with `created`, and cancels it in a later message.
        if response.canceled {
            let err = if response.compact_revision > 0 {
                Error::Compacted {
                    requested: start,
                    compacted: response.compact_revision - 1,
                }
            } else {
                Error::Backend(format!(
                    "etcd at {}: the {what} was canceled: {}",
                    inner.endpoints, response.cancel_reason
                ))
            };
            let _ = sender.send(Err(err)).await;
            return;
        }
        match inner.batches(&response.events).await {
            Ok(batches) => {
                for batch in batches {
                    if sender.send(Ok(batch)).await.is_err() {
                        return;
                    }
                }
            }
            Err(err) => {
                let _ = sender.send(Err(err)).await;
                return;
            }
        }
    }
}

/// A watch request creating one watch.
fn watch_create(create: WatchCreateRequest) -> WatchRequest {
    WatchRequest {
        request_union: Some(watch_request::RequestUnion::CreateRequest(create)),
    }
}

/// Follows every change under the data root: raises the store's revision, and removes the chunk sets of heads
/// that were overwritten or deleted. Starts again after failures; a compacted start resumes from now.
async fn background_watch(inner: Arc<Inner>, opened_at: Revision) {
    let mut shutdown = inner.shutdown.clone();
    let mut next = opened_at + 1;
    loop {
        tokio::select! {
            resumed = follow(&inner, next) => {
                next = resumed;
            }
            _ = shutdown.changed() => return,
        }
        tokio::select! {
            () = tokio::time::sleep(BACKGROUND_RETRY) => {}
            _ = shutdown.changed() => return,
        }
    }
}

/// One life of the background watch from `start`; returns the revision to start the next one from.
async fn follow(inner: &Inner, start: Revision) -> Revision {
    let request = watch_create(WatchCreateRequest {
        key: inner.data_root.clone().into_bytes(),
        range_end: bytes_prefix_end(inner.data_root.as_bytes()),
        start_revision: start,
        prev_kv: true,
        ..WatchCreateRequest::default()
    });
    let mut client = inner.watch.clone();
    let mut stream = match inner
        .call("background watch", client.watch(etcd_api::open_stream(request)))
        .await
    {
        Ok(stream) => stream,
        Err(err) => {
            tracing::warn!(error = %err, "the etcd store's background watch cannot start; retrying");
            return start;
        }
    };
    let mut next = start;
    loop {
        let response = match stream.message().await {
            Ok(Some(response)) => response,
            Ok(None) => return next,
            Err(err) => {
                tracing::warn!(error = %inner.error("background watch", &err), "the etcd store's background watch failed; retrying");
                return next;
            }
        };
        if response.canceled {
            // Compacted: what was missed needs no chunk cleanup the open-time sweep would not also do.
            return if response.compact_revision > 0 {
                response.compact_revision.max(next)
            } else {
                next
            };
        }
        for event in &response.events {
            let Some(kv) = &event.kv else { continue };
            inner.revision.fetch_max(kv.mod_revision, Ordering::SeqCst);
            next = next.max(kv.mod_revision + 1);
            let Some(previous) = &event.prev_kv else { continue };
            let Ok(key) = inner.user_key(&kv.key) else {
                continue;
            };
            let Ok(Some(old)) = Manifest::decode(&key, &previous.value) else {
                continue;
            };
            let still_current = event.r#type() == EventType::Put && kv.value == previous.value;
            if !still_current && let Err(err) = inner.drop_chunk_set(&key, &old.digest).await {
                tracing::warn!(key, error = %err, "cannot remove replaced chunks; the next sweep will");
            }
        }
    }
}

/// Removes chunk sets no head names (left by a process that stopped between staging chunks and its transaction,
/// or before it removed replaced chunks).
async fn sweep_chunks(inner: Arc<Inner>) {
    let mut kv = inner.kv.clone();
    let request = RangeRequest {
        keys_only: true,
        ..etcd_api::range(
            inner.chunk_root.clone(),
            Some(bytes_prefix_end(inner.chunk_root.as_bytes())),
        )
    };
    let response = match inner.call("listing of chunks", kv.range(request)).await {
        Ok(response) => response,
        Err(err) => {
            tracing::warn!(error = %err, "cannot list chunks to sweep");
            return;
        }
    };
    let mut sets = std::collections::BTreeSet::new();
    for found in &response.kvs {
        let Some(rest) = found.key.strip_prefix(inner.chunk_root.as_bytes()) else {
            continue;
        };
        let Ok(rest) = std::str::from_utf8(rest) else {
            continue;
        };
        let Some((key, set)) = rest.rsplit_once('\0') else {
            continue;
        };
        let Some((digest, _index)) = set.split_once('/') else {
            continue;
        };
        sets.insert((key.to_string(), digest.to_string()));
    }
    for (key, digest) in sets {
        if let Err(err) = inner.drop_chunk_set(&key, &digest).await {
            tracing::warn!(key, error = %err, "cannot sweep stale chunks");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_round_trip_and_damaged_ones_are_refused() {
        let value = vec![7u8; CHUNK_SIZE * 2 + 5];
        let manifest = Manifest::of(&value);
        assert_eq!(manifest.chunks, 3);
        assert_eq!(
            Manifest::decode("/k", &manifest.encode()).unwrap(),
            Some(manifest.clone())
        );
        assert_eq!(Manifest::decode("/k", b"plain").unwrap(), None);
        let mut damaged = MAGIC.to_vec();
        damaged.extend_from_slice(b"zz 1 1");
        assert!(Manifest::decode("/k", &damaged).is_err());
        assert!(is_chunked(&value));
        assert!(
            is_chunked(&manifest.encode()),
            "a value that looks like a manifest is chunked too"
        );
        assert!(!is_chunked(b"small"));
    }

    #[test]
    fn folding_keeps_the_final_state_without_overlaps() {
        let folded = fold_ops(&[
            Op::put("/a", "1"),
            Op::put("/a", "2"),
            Op::delete_prefix("/p/"),
            Op::put("/p/m", "x"),
            Op::delete("/b"),
            Op::put("/b", "3"),
            Op::put("/q/x", "y"),
            Op::delete_prefix("/q/"),
        ]);
        assert_eq!(
            folded,
            vec![
                Write::Put {
                    key: "/a".into(),
                    value: b"2".to_vec(),
                    lease: None
                },
                Write::DeleteRange {
                    start: "/p/".into(),
                    end: Some("/p/m".into())
                },
                Write::DeleteRange {
                    start: "/p/m\0".into(),
                    end: Some("/p0".into())
                },
                Write::Put {
                    key: "/p/m".into(),
                    value: b"x".to_vec(),
                    lease: None
                },
                Write::Put {
                    key: "/b".into(),
                    value: b"3".to_vec(),
                    lease: None
                },
                Write::DeleteRange {
                    start: "/q/".into(),
                    end: Some("/q0".into())
                },
            ]
        );
        assert_eq!(fold_ops(&[Op::delete_prefix("/p/"), Op::delete("/p/x")]).len(), 1);
    }

    #[test]
    fn byte_prefix_end_bounds_the_prefix() {
        assert_eq!(bytes_prefix_end(b"/emco/k"), b"/emco/l".to_vec());
        assert_eq!(bytes_prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(bytes_prefix_end(b""), vec![0]);
    }
}
