//! Heartbeats written in batches. A ResourceBundleState whose status changed only in its heartbeat is noted here
//! by its cluster's watcher (which goes on at once); every [`FLUSH_EVERY`] one task writes what was noted, up to
//! [`MAX_HEARD_PER_TXN`] heartbeats per transaction ([`AppContexts::note_heard_many`]), so a thousand clusters
//! beating every 20 s cost a few small transactions a second, not one commit per beat. When a batch is refused
//! (a record went, a claim was lost) its notes are written one by one; a note refused for a lost claim marks its
//! cluster, and that cluster's watcher hands the cluster back ([`Heartbeats::take_lost`]).
//!
//! The queue is bounded ([`MAX_PENDING`]): a beat that finds it full is dropped — the next one comes a beat later.
//!
//! [`AppContexts::note_heard_many`]: emco_appcontext::AppContexts::note_heard_many

use std::collections::HashSet;
use std::sync::{Mutex, Weak};
use std::time::Duration;

use emco_appcontext::{ContextError, HeardNote, MAX_HEARD_PER_TXN};

use crate::engine::Inner;
use crate::lock;

/// How often noted heartbeats are written.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// The most heartbeats waiting to be written.
pub(crate) const MAX_PENDING: usize = 65_536;

/// Heartbeats waiting to be written, and the clusters whose claim a heartbeat found lost.
#[derive(Debug, Default)]
pub(crate) struct Heartbeats {
    pending: Mutex<Vec<HeardNote>>,
    lost: Mutex<HashSet<String>>,
    flushing: std::sync::atomic::AtomicBool,
}

impl Heartbeats {
    /// Queues `note` (dropped when [`MAX_PENDING`] wait already); starts the flushing task on first use.
    pub(crate) fn note(&self, engine: &Weak<Inner>, note: HeardNote) {
        {
            let mut pending = lock(&self.pending);
            if pending.len() >= MAX_PENDING {
                tracing::debug!(cluster = note.cluster, "heartbeat queue full; dropping a beat");
                return;
            }
            pending.push(note);
        }
        if !self.flushing.swap(true, std::sync::atomic::Ordering::AcqRel) {
            tokio::spawn(flush_loop(engine.clone()));
        }
    }

    /// Whether a heartbeat of `cluster` was refused because this replica's claim on it was lost (cleared).
    pub(crate) fn take_lost(&self, cluster: &str) -> bool {
        lock(&self.lost).remove(cluster)
    }

    /// How many heartbeats wait.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        lock(&self.pending).len()
    }
}

/// Writes the noted heartbeats every [`FLUSH_EVERY`] while the engine lives.
async fn flush_loop(engine: Weak<Inner>) {
    loop {
        tokio::time::sleep(FLUSH_EVERY).await;
        let Some(inner) = engine.upgrade() else {
            return;
        };
        let notes = std::mem::take(&mut *lock(&inner.heartbeats.pending));
        for batch in notes.chunks(MAX_HEARD_PER_TXN) {
            match inner.contexts.note_heard_many(batch).await {
                Ok(true) => {}
                Ok(false) | Err(_) => {
                    for note in batch {
                        let written = inner.contexts.note_heard(note).await;
                        match written {
                            Ok(()) => {}
                            Err(ContextError::Fenced { .. }) => {
                                lock(&inner.heartbeats.lost).insert(note.cluster.clone());
                            }
                            Err(err) => {
                                tracing::debug!(context = %note.id, app = note.app, cluster = note.cluster, error = %err, "cannot note a heartbeat");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_is_bounded() {
        let heartbeats = Heartbeats::default();
        // Marked as flushing so that no task is started (no runtime here).
        heartbeats
            .flushing
            .store(true, std::sync::atomic::Ordering::Release);
        let note = HeardNote {
            id: emco_model::ContextId::new(1).unwrap(),
            app: "a".into(),
            cluster: "p+c".into(),
            at: "2026-11-27T10:00:00Z".into(),
            fence: None,
        };
        for _ in 0..MAX_PENDING + 10 {
            heartbeats.note(&Weak::new(), note.clone());
        }
        assert_eq!(heartbeats.pending(), MAX_PENDING);
    }
}
