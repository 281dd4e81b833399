//! Watchers, and the watches served in-process: a bounded history of recent transactions (so a watcher can resume from a revision,
//! as with etcd before compaction) and a broadcast channel for live ones. Each message is one whole transaction,
//! so a watcher can apply a transaction's changes together.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::{Error, Event, Result, Revision};

/// How many recent events are kept for watchers that resume from an older revision. Older revisions answer
/// [`Error::Compacted`], as etcd does after compaction; 65,536 events cover several full instantiations of a
/// 1,000-cluster DIG.
const HISTORY_EVENTS: usize = 65_536;

/// The most bytes (keys and values) the kept events may hold: records carrying cluster status are kilobytes each
/// (tens of kilobytes for an app with twenty pods), and 65,536 of them would hold hundreds of MiB that only a
/// watcher resuming from long ago could use. Past either bound the oldest transactions go (a resume from before
/// them answers [`Error::Compacted`], and the watcher re-lists). Live watchers do not need it (they take the
/// broadcast, [`LIVE_BUFFER_TRANSACTIONS`]); 8 MiB cover a reconnecting event stream's seconds, and the bound is
/// resident memory whatever the number of clusters (32 MiB were 7 % of emco's at 1,000 clusters × 30 resources).
const HISTORY_BYTES: usize = 8 << 20;

/// How many live transactions a slow watcher may fall behind before it is told to re-list
/// ([`Error::WatchLagged`]).
const LIVE_BUFFER_TRANSACTIONS: usize = 16_384;

/// The events of one committed transaction.
#[derive(Debug)]
struct Batch {
    revision: Revision,
    events: Vec<Event>,
}

impl Batch {
    /// The bytes of its keys and values.
    fn bytes(&self) -> usize {
        self.events
            .iter()
            .map(|event| event.kv.key.len() + event.kv.value.len())
            .sum()
    }
}

#[derive(Debug)]
pub(crate) struct WatchHub {
    inner: Mutex<HubInner>,
    /// The most events and bytes `history` keeps.
    history_bounds: (usize, usize),
}

/// How much a [`WatchHub`] keeps for its watchers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WatchBounds {
    /// Transactions a live watcher may fall behind.
    pub(crate) live_transactions: usize,
    /// Events and bytes of the history a watcher may resume from.
    pub(crate) history: (usize, usize),
}

impl WatchBounds {
    /// A store's watchers' bounds: [`LIVE_BUFFER_TRANSACTIONS`], [`HISTORY_EVENTS`] and [`HISTORY_BYTES`].
    pub(crate) const SERVING: Self = Self {
        live_transactions: LIVE_BUFFER_TRANSACTIONS,
        history: (HISTORY_EVENTS, HISTORY_BYTES),
    };
    /// For a store nobody watches from afar (a pull agent's, thousands in one simulating process): a few live
    /// transactions, no history (a resume from before now answers [`Error::Compacted`]). The live buffer is
    /// allocated whole when the store opens (16,384 slots are most of an idle agent's memory).
    pub(crate) const LOCAL: Self = Self {
        live_transactions: 64,
        history: (0, 0),
    };
}

#[derive(Debug)]
struct HubInner {
    history: VecDeque<Arc<Batch>>,
    history_events: usize,
    history_bytes: usize,
    /// The newest revision whose events are no longer (or were never) in `history`.
    compacted: Revision,
    sender: broadcast::Sender<Arc<Batch>>,
}

impl WatchHub {
    /// A hub whose history starts after `revision` (the revision the store had when it was opened).
    pub(crate) fn new(revision: Revision) -> Self {
        Self::bounded(revision, WatchBounds::SERVING)
    }

    /// [`WatchHub::new`] keeping what `bounds` allow.
    pub(crate) fn bounded(revision: Revision, bounds: WatchBounds) -> Self {
        let (sender, _) = broadcast::channel(bounds.live_transactions.max(1));
        Self {
            history_bounds: bounds.history,
            inner: Mutex::new(HubInner {
                history: VecDeque::new(),
                history_events: 0,
                history_bytes: 0,
                compacted: revision,
                sender,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HubInner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records and sends the events of one committed transaction (callers publish in revision order).
    pub(crate) fn publish(&self, events: Vec<Event>) {
        let Some(revision) = events.first().map(|event| event.kv.mod_revision) else {
            return;
        };
        let batch = Arc::new(Batch { revision, events });
        let (most_events, most_bytes) = self.history_bounds;
        let mut inner = self.lock();
        inner.history_events += batch.events.len();
        inner.history_bytes += batch.bytes();
        inner.history.push_back(batch.clone());
        while (inner.history_events > most_events || inner.history_bytes > most_bytes)
            && (inner.history.len() > 1 || most_events == 0)
        {
            if let Some(dropped) = inner.history.pop_front() {
                inner.history_events -= dropped.events.len();
                inner.history_bytes -= dropped.bytes();
                inner.compacted = inner.compacted.max(dropped.revision);
            }
        }
        // No receiver is not an error: nobody is watching.
        let _ = inner.sender.send(batch);
    }

    /// A watcher of `prefix` that first replays the kept transactions after `after` (default: `current`, only
    /// new ones).
    pub(crate) fn subscribe(
        &self,
        prefix: &str,
        after: Option<Revision>,
        current: Revision,
    ) -> Result<Watcher> {
        let after = after.unwrap_or(current);
        let inner = self.lock();
        if after < inner.compacted {
            return Err(Error::Compacted {
                requested: after + 1,
                compacted: inner.compacted,
            });
        }
        let replay = inner
            .history
            .iter()
            .filter(|batch| batch.revision > after)
            .cloned()
            .collect();
        Ok(Watcher {
            source: Source::Hub {
                prefix: prefix.to_string(),
                after,
                replay,
                live: inner.sender.subscribe(),
            },
            pending: VecDeque::new(),
        })
    }
}

/// A stream of changes under a prefix, in revision order.
#[derive(Debug)]
pub struct Watcher {
    source: Source,
    /// Events of the current transaction not yet returned by [`Watcher::next`].
    pending: VecDeque<Event>,
}

/// Where a watcher's transactions come from.
#[derive(Debug)]
enum Source {
    /// An in-process hub (memory and redb backends).
    Hub {
        prefix: String,
        /// Transactions at or below it were seen before the watch began (a live batch may repeat one).
        after: Revision,
        replay: VecDeque<Arc<Batch>>,
        live: broadcast::Receiver<Arc<Batch>>,
    },
    /// A task that forwards a backend's own watch (etcd), already filtered by prefix.
    #[cfg(feature = "etcd")]
    Channel(tokio::sync::mpsc::Receiver<Result<(Revision, Vec<Event>)>>),
}

impl Watcher {
    /// A watcher fed by a task: each item is one transaction (or the error that ended the watch); the channel
    /// closing means the store is gone.
    #[cfg(feature = "etcd")]
    pub(crate) fn from_channel(
        receiver: tokio::sync::mpsc::Receiver<Result<(Revision, Vec<Event>)>>,
    ) -> Self {
        Self {
            source: Source::Channel(receiver),
            pending: VecDeque::new(),
        }
    }

    /// The changes of the next transaction that touched the prefix, with its revision; `None` when the store is
    /// gone. After an error the watcher is finished: re-list and watch again from the list's revision.
    pub async fn next_batch(&mut self) -> Option<Result<(Revision, Vec<Event>)>> {
        let (prefix, after, replay, live) = match &mut self.source {
            #[cfg(feature = "etcd")]
            Source::Channel(receiver) => return receiver.recv().await,
            Source::Hub {
                prefix,
                after,
                replay,
                live,
            } => (prefix, after, replay, live),
        };
        loop {
            let batch = match replay.pop_front() {
                Some(batch) => batch,
                None => match live.recv().await {
                    Ok(batch) => batch,
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        return Some(Err(Error::WatchLagged(missed)));
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
            };
            if batch.revision <= *after {
                continue;
            }
            *after = batch.revision;
            let events: Vec<Event> = batch
                .events
                .iter()
                .filter(|event| event.kv.key.starts_with(prefix.as_str()))
                .cloned()
                .collect();
            if !events.is_empty() {
                return Some(Ok((batch.revision, events)));
            }
        }
    }

    /// The next change; `None` when the store is gone. After an error the watcher is finished.
    pub async fn next(&mut self) -> Option<Result<Event>> {
        if let Some(event) = self.pending.pop_front() {
            return Some(Ok(event));
        }
        match self.next_batch().await? {
            Ok((_, events)) => {
                self.pending.extend(events);
                self.pending.pop_front().map(Ok)
            }
            Err(err) => Some(Err(err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventKind, KeyValue};

    fn put(revision: Revision, bytes: usize) -> Vec<Event> {
        vec![Event {
            kind: EventKind::Put,
            kv: KeyValue {
                key: format!("/k{revision}"),
                value: vec![b'x'; bytes],
                create_revision: revision,
                mod_revision: revision,
                version: 1,
            },
        }]
    }

    #[test]
    fn the_history_keeps_at_most_its_bytes_and_older_resumes_are_compacted() {
        let hub = WatchHub::new(0);
        // Five transactions of a quarter of the bound each: the oldest go.
        for revision in 1..=5 {
            hub.publish(put(revision, HISTORY_BYTES / 4));
        }
        let inner = hub.lock();
        assert!(inner.history_bytes <= HISTORY_BYTES, "{}", inner.history_bytes);
        assert_eq!(inner.history.len(), 3);
        drop(inner);
        assert!(matches!(
            hub.subscribe("/", Some(0), 5),
            Err(Error::Compacted { compacted: 2, .. })
        ));
        assert!(hub.subscribe("/", Some(2), 5).is_ok());
    }

    #[tokio::test]
    async fn a_hub_without_history_keeps_nothing_yet_serves_live_watchers() {
        let hub = WatchHub::bounded(0, WatchBounds::LOCAL);
        let mut live = hub.subscribe("/", Some(0), 0).unwrap();
        hub.publish(put(1, 10));
        hub.publish(put(2, 10));
        {
            let inner = hub.lock();
            assert!(inner.history.is_empty());
            assert_eq!(inner.compacted, 2);
        }
        assert!(matches!(
            hub.subscribe("/", Some(1), 2),
            Err(Error::Compacted { compacted: 2, .. })
        ));
        let first = live.next().await.unwrap().unwrap();
        assert_eq!(first.kv.mod_revision, 1);
    }
}
