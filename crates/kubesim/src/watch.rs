//! Watch streams: newline-delimited events, replay from a resourceVersion out of the event log, synthetic ADDED
//! events for a fresh watch (and `sendInitialEvents` with its end-of-initial-events bookmark), periodic bookmarks,
//! selector transitions (an object that stops matching is DELETED, one that starts matching ADDED), and expiry as
//! an in-stream `ERROR` 410 event, which is what makes clients relist.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value as Json, json};
use tokio::sync::{broadcast, mpsc};

use crate::catalog::ResourceType;
use crate::cluster::ClusterShared;
use crate::error::ApiError;
use crate::request::Query;
use crate::selector::{FieldSelector, LabelSelector};
use crate::store::{Change, ChangeKind, Stored};
use crate::{meta, table};

/// How long a watch without `timeoutSeconds` stays open.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
/// Buffered lines per watch before the writer waits for the client.
const STREAM_BUFFER: usize = 256;

struct Filter {
    t: Arc<ResourceType>,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
    as_table: bool,
}

impl Filter {
    fn matches(&self, object: &Json) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| meta::namespace(object) == ns)
            && self.labels.matches(object)
            && self.fields.matches(object)
    }

    fn line(&self, kind: &str, object: &Json) -> Bytes {
        let object = if self.as_table {
            std::borrow::Cow::Owned(table::table(
                &self.t,
                &[object],
                object["metadata"]["resourceVersion"].as_str().unwrap_or_default(),
                None,
            ))
        } else {
            crate::http::at_version(&self.t, object)
        };
        Bytes::from(format!("{{\"type\":\"{kind}\",\"object\":{object}}}\n"))
    }

    /// The event line of an object as the store keeps it: the kept text as it is when that is what the watch
    /// sends (JSON, at the stored version), else from the tree.
    fn stored_line(&self, kind: &str, object: &Stored) -> Bytes {
        match object {
            Stored::Text { text, part }
                if !self.as_table
                    && (!self.t.shared_storage
                        || part.get("apiVersion").and_then(Json::as_str)
                            == Some(self.t.api_version().as_str())) =>
            {
                Bytes::from(format!("{{\"type\":\"{kind}\",\"object\":{text}}}\n"))
            }
            _ => self.line(kind, &object.tree()),
        }
    }

    /// The event a change is for this watch, if any.
    fn event(&self, change: &Change) -> Option<Bytes> {
        if change.key != self.t.key() {
            return None;
        }
        let now = self.matches(change.object.part());
        let before = change.previous.as_ref().is_some_and(|p| self.matches(p));
        let kind = match change.kind {
            ChangeKind::Added if now => "ADDED",
            ChangeKind::Deleted if now || before => "DELETED",
            ChangeKind::Modified if now && before => "MODIFIED",
            ChangeKind::Modified if now => "ADDED",
            ChangeKind::Modified if before => "DELETED",
            _ => return None,
        };
        Some(self.stored_line(kind, &change.object))
    }

    fn bookmark(&self, revision: u64, initial_events_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": revision.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object = json!({"kind": self.t.kind, "apiVersion": self.t.api_version(), "metadata": metadata});
        Bytes::from(format!("{{\"type\":\"BOOKMARK\",\"object\":{object}}}\n"))
    }
}

fn expired_line(message: &str) -> Bytes {
    let status = ApiError::expired(message).status();
    Bytes::from(format!("{{\"type\":\"ERROR\",\"object\":{status}}}\n"))
}

/// The revision a bookmark may promise: this watch has seen every change up to it. That is the store's revision only
/// when none is still queued for this watch (checked under the store lock, under which every change is sent);
/// otherwise the last change it handled, so a client resuming from the bookmark misses nothing.
fn bookmark_revision(cluster: &ClusterShared, live: &crate::store::ChangeReceiver, last_handled: u64) -> u64 {
    let store = cluster.store();
    if live.is_empty() {
        store.revision().max(last_handled)
    } else {
        last_handled
    }
}

/// Starts a watch and returns the streaming response.
pub async fn serve(
    cluster: Arc<ClusterShared>,
    t: Arc<ResourceType>,
    namespace: Option<String>,
    query: &Query,
    accept: &str,
) -> Result<Response, ApiError> {
    let filter = Filter {
        labels: LabelSelector::parse(query.get("labelSelector").unwrap_or_default())?,
        fields: FieldSelector::parse(query.get("fieldSelector").unwrap_or_default(), &t.kind)?,
        namespace,
        as_table: table::wants_table(accept),
        t,
    };
    let send_initial = query.flag("sendInitialEvents");
    if send_initial && query.get("resourceVersionMatch") != Some("NotOlderThan") {
        return Err(ApiError::invalid_message(
            "resourceVersionMatch: Invalid value: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    let bookmarks = query.flag("allowWatchBookmarks");
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let requested = query.get("resourceVersion").unwrap_or_default().to_string();

    let (tx, rx) = mpsc::channel::<Bytes>(STREAM_BUFFER);
    let (initial, mut live, start_revision, failed) = {
        let store = cluster.store();
        let live = store.subscribe();
        let revision = store.revision();
        let mut initial = Vec::new();
        let mut failed = None;
        if send_initial || requested.is_empty() || requested == "0" {
            for object in store.list_stored(&filter.t.key(), filter.namespace.as_deref()) {
                if filter.matches(object.part()) {
                    initial.push(filter.stored_line("ADDED", &object));
                }
            }
            if send_initial && bookmarks {
                initial.push(filter.bookmark(revision, true));
            }
        } else {
            match requested.parse::<u64>() {
                Ok(from) if from > revision => {
                    failed = Some(format!("too large resource version: {from}, current: {revision}"))
                }
                Ok(from) => match store.changes_since(from) {
                    Some(changes) => initial.extend(changes.iter().filter_map(|change| filter.event(change))),
                    None => failed = Some(format!("too old resource version: {from} ({revision})")),
                },
                Err(_) => {
                    return Err(ApiError::bad_request(format!(
                        "invalid resource version: {requested}"
                    )));
                }
            }
        }
        (initial, live, revision, failed)
    };
    let bookmark_every = Duration::from_millis(cluster.config.timing.bookmark_ms.max(100));
    tokio::spawn(async move {
        if let Some(message) = failed {
            let _ = tx.send(expired_line(&message)).await;
            return;
        }
        for line in initial {
            if tx.send(line).await.is_err() {
                return;
            }
        }
        let mut last_revision = start_revision;
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut ticker =
            tokio::time::interval_at(tokio::time::Instant::now() + bookmark_every, bookmark_every);
        loop {
            tokio::select! {
                received = live.recv() => match received {
                    Ok(change) => {
                        if change.revision <= start_revision {
                            continue;
                        }
                        last_revision = change.revision;
                        if let Some(line) = filter.event(&change)
                            && tx.send(line).await.is_err()
                        {
                            return;
                        }
                        // The CRD behind a custom type was deleted: its watches end.
                        if filter.t.custom && change.kind == ChangeKind::Deleted && change.key.plural == "customresourcedefinitions"
                            && meta::name(change.object.part()) == format!("{}.{}", filter.t.plural, filter.t.group)
                        {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        cluster.note_fell_behind();
                        let _ = tx.send(expired_line("the watch fell behind; relist")).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = ticker.tick(), if bookmarks => {
                    let current = bookmark_revision(&cluster, &live, last_revision);
                    if tx.send(filter.bookmark(current, false)).await.is_err() {
                        return;
                    }
                }
                () = &mut deadline => {
                    if bookmarks {
                        let current = bookmark_revision(&cluster, &live, last_revision);
                        let _ = tx.send(filter.bookmark(current, false)).await;
                    }
                    return;
                }
                () = tx.closed() => return,
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|line| (Ok::<_, Infallible>(line), rx))
    });
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(stream),
    )
        .into_response())
}
