//! Watches served in-process: a bounded history of recent events (so a watcher can resume from a revision, as
//! with etcd before compaction) and a broadcast channel for live events.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::{Error, Event, Result, Revision};

/// How many recent events are kept for watchers that resume from an older revision. Older revisions answer
/// [`Error::Compacted`], as etcd does after compaction; 65,536 events cover several full instantiations of a
/// 1,000-cluster DIG.
const HISTORY_EVENTS: usize = 65_536;

/// How many live events a slow watcher may fall behind before it is told to re-list ([`Error::WatchLagged`]).
const LIVE_BUFFER_EVENTS: usize = 16_384;

#[derive(Debug)]
pub(crate) struct WatchHub {
    inner: Mutex<HubInner>,
}

#[derive(Debug)]
struct HubInner {
    history: VecDeque<Arc<Event>>,
    /// The newest revision whose events are no longer (or were never) in `history`.
    compacted: Revision,
    sender: broadcast::Sender<Arc<Event>>,
}

impl WatchHub {
    /// A hub whose history starts after `revision` (the revision the store had when it was opened).
    pub(crate) fn new(revision: Revision) -> Self {
        let (sender, _) = broadcast::channel(LIVE_BUFFER_EVENTS);
        Self {
            inner: Mutex::new(HubInner {
                history: VecDeque::new(),
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
        if events.is_empty() {
            return;
        }
        let mut inner = self.lock();
        for event in events {
            let event = Arc::new(event);
            if inner.history.len() == HISTORY_EVENTS
                && let Some(dropped) = inner.history.pop_front()
            {
                inner.compacted = inner.compacted.max(dropped.kv.mod_revision);
            }
            inner.history.push_back(event.clone());
            // No receiver is not an error: nobody is watching.
            let _ = inner.sender.send(event);
        }
    }

    /// A watcher of `prefix` that first replays the kept events after `after` (default: `current`, only new ones).
    pub(crate) fn subscribe(
        &self,
        prefix: &str,
        after: Option<Revision>,
        current: Revision,
    ) -> Result<Watcher> {
        let after = after.unwrap_or(current);
        let inner = self.lock();
        // Events of revision `compacted` itself may be partly gone, so resuming needs `after >= compacted`.
        if after < inner.compacted {
            return Err(Error::Compacted {
                requested: after + 1,
                compacted: inner.compacted,
            });
        }
        let replay = inner
            .history
            .iter()
            .filter(|event| event.kv.mod_revision > after && event.kv.key.starts_with(prefix))
            .cloned()
            .collect();
        Ok(Watcher {
            prefix: prefix.to_string(),
            replay,
            live: inner.sender.subscribe(),
            after,
        })
    }
}

/// A stream of changes under a prefix, in revision order.
#[derive(Debug)]
pub struct Watcher {
    prefix: String,
    replay: VecDeque<Arc<Event>>,
    live: broadcast::Receiver<Arc<Event>>,
    /// Events at or below this revision were delivered already (or predate the watch).
    after: Revision,
}

impl Watcher {
    /// The next change; `None` when the store is gone. After an error the watcher is finished: re-list and watch
    /// again from the list's revision.
    pub async fn next(&mut self) -> Option<Result<Event>> {
        if let Some(event) = self.replay.pop_front() {
            self.after = self.after.max(event.kv.mod_revision - 1);
            return Some(Ok((*event).clone()));
        }
        loop {
            match self.live.recv().await {
                Ok(event) => {
                    // Skip what the replay already delivered and keys outside the prefix.
                    if event.kv.mod_revision <= self.after || !event.kv.key.starts_with(&self.prefix) {
                        continue;
                    }
                    return Some(Ok((*event).clone()));
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    return Some(Err(Error::WatchLagged(missed)));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}
