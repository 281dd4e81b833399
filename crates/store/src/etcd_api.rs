//! etcd's v3 gRPC API as the etcd store speaks it: the messages and clients generated from etcd's `.proto` files
//! (`proto/`, trimmed to the KV, Watch and Lease services by `scripts/etcd-proto-trim.py`), kept in `etcd_api/` so
//! that building needs no `protoc` (the test `etcd_api_generated` regenerates them with protox and fails when they
//! differ), the channel to a cluster's endpoints, and builders for the requests the store sends.

use std::time::Duration;

use futures::Stream;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

/// etcd's key-value and event messages (`mvccpb`).
#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
pub(crate) mod mvccpb {
    include!("etcd_api/mvccpb.rs");
}

/// etcd's KV, Watch and Lease services and their messages (`etcdserverpb`).
#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
pub(crate) mod etcdserverpb {
    include!("etcd_api/etcdserverpb.rs");
}

use etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use etcdserverpb::{
    Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest, request_op,
};

pub(crate) type KvClient = etcdserverpb::kv_client::KvClient<Channel>;
pub(crate) type WatchClient = etcdserverpb::watch_client::WatchClient<Channel>;
pub(crate) type LeaseClient = etcdserverpb::lease_client::LeaseClient<Channel>;

/// How a channel reaches etcd: timeouts and keep-alive.
pub(crate) struct ChannelOptions {
    pub(crate) connect_timeout: Duration,
    pub(crate) keep_alive_interval: Duration,
    pub(crate) keep_alive_timeout: Duration,
    pub(crate) tls: Option<ClientTlsConfig>,
}

impl ChannelOptions {
    /// The store's HTTP/2 keep-alive (ping every 10 s, dead after 5 s without an answer: a dead connection under
    /// a watch is noticed within about 15 s), connecting within `connect_timeout`, over `tls` when given.
    pub(crate) fn with_keep_alive(connect_timeout: Duration, tls: Option<ClientTlsConfig>) -> Self {
        Self {
            connect_timeout,
            keep_alive_interval: Duration::from_secs(10),
            keep_alive_timeout: Duration::from_secs(5),
            tls,
        }
    }
}

/// One channel balanced over `endpoints` (`http://host:port` or `https://host:port`); it connects lazily, so the
/// first request tells whether a cluster answers. Needs a tokio runtime.
pub(crate) fn channel(endpoints: &[String], options: &ChannelOptions) -> Result<Channel, String> {
    let mut list = Vec::with_capacity(endpoints.len());
    for url in endpoints {
        let mut endpoint = Endpoint::from_shared(url.clone())
            .map_err(|err| format!("'{url}' is not an etcd endpoint: {err}"))?
            .connect_timeout(options.connect_timeout)
            .http2_keep_alive_interval(options.keep_alive_interval)
            .keep_alive_timeout(options.keep_alive_timeout)
            .keep_alive_while_idle(true);
        if let Some(tls) = &options.tls {
            endpoint = endpoint
                .tls_config(tls.clone())
                .map_err(|err| format!("TLS for '{url}': {err}"))?;
        }
        list.push(endpoint);
    }
    Ok(Channel::balance_list(list.into_iter()))
}

/// What a failed call says: the status message and, for transport failures, their causes.
pub(crate) fn status_text(status: &tonic::Status) -> String {
    let mut text = format!("{:?}: {}", status.code(), status.message());
    let mut source = std::error::Error::source(status);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A stream that sends `first` and then stays open until the call is dropped (a watch or keep-alive stream
/// that closed its sending side would end early on some servers).
pub(crate) fn open_stream<T: Send + 'static>(first: T) -> impl Stream<Item = T> + Send + 'static {
    use futures::StreamExt as _;
    futures::stream::once(std::future::ready(first)).chain(futures::stream::pending())
}

/// A read of `key`, or with `range_end` of `[key, range_end)`.
pub(crate) fn range(key: impl Into<Vec<u8>>, range_end: Option<Vec<u8>>) -> RangeRequest {
    RangeRequest {
        key: key.into(),
        range_end: range_end.unwrap_or_default(),
        ..RangeRequest::default()
    }
}

/// A comparison of `key`'s (or, with `range_end`, every key's in range) target with `value`.
pub(crate) fn compare(
    key: impl Into<Vec<u8>>,
    result: CompareResult,
    value: TargetUnion,
    range_end: Option<Vec<u8>>,
) -> Compare {
    let target = match value {
        TargetUnion::Version(_) => CompareTarget::Version,
        TargetUnion::CreateRevision(_) => CompareTarget::Create,
        TargetUnion::ModRevision(_) => CompareTarget::Mod,
        TargetUnion::Value(_) => CompareTarget::Value,
        TargetUnion::Lease(_) => CompareTarget::Lease,
    };
    Compare {
        result: result.into(),
        target: target.into(),
        key: key.into(),
        range_end: range_end.unwrap_or_default(),
        target_union: Some(value),
    }
}

/// A put of `value` at `key`, attached to `lease` when given.
pub(crate) fn put_op(key: impl Into<Vec<u8>>, value: Vec<u8>, lease: Option<i64>) -> RequestOp {
    RequestOp {
        request: Some(request_op::Request::RequestPut(PutRequest {
            key: key.into(),
            value,
            lease: lease.unwrap_or_default(),
            ..PutRequest::default()
        })),
    }
}

/// A delete of `key`, or with `range_end` of `[key, range_end)`.
pub(crate) fn delete_op(key: impl Into<Vec<u8>>, range_end: Option<Vec<u8>>) -> RequestOp {
    RequestOp {
        request: Some(request_op::Request::RequestDeleteRange(DeleteRangeRequest {
            key: key.into(),
            range_end: range_end.unwrap_or_default(),
            ..DeleteRangeRequest::default()
        })),
    }
}

/// A nested transaction.
pub(crate) fn txn_op(txn: TxnRequest) -> RequestOp {
    RequestOp {
        request: Some(request_op::Request::RequestTxn(txn)),
    }
}
