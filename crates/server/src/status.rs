//! Keeps the status index current: loads every AppContext at start, then applies the store's watch events, and
//! lets a query wait until the index reflects every write acknowledged before it (read-your-writes), also a
//! write made through another replica: the query asks the store for its newest revision
//! ([`StatusKeeper::request_revision`]) and waits for the index to apply it, at most [`CATCH_UP_TIMEOUT`]; after
//! that it answers from what the index has (and logs a warning) rather than failing.
//!
//! One task owns the writing side; queries take short read locks and never wait on the store.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard};
use std::time::Duration;

use emco_appcontext::{AppContexts, ContextChange};
use emco_status::StatusIndex;
use emco_status::combined::CombinedIndex;
use emco_store::Store;
use tokio::sync::watch;

use crate::agent_orders::AgentOrders;

/// How long a query waits for the index to catch up with the store before answering from what it has.
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(2);
/// Pause before reloading after the store failed to load or a watch fell behind.
const RELOAD_PAUSE: Duration = Duration::from_millis(200);

/// The status index and its progress.
pub(crate) struct StatusKeeper {
    index: RwLock<StatusIndex>,
    /// Combined status (issue #17): fed the same changes, after the index, in the same task.
    combined: RwLock<CombinedIndex>,
    /// Pull clusters' agent orders (issue #44): fed the same changes too.
    agents: std::sync::Mutex<AgentOrders>,
    /// The store revision the index reflects.
    progress: watch::Sender<i64>,
    /// Whether the first load of every AppContext finished (`/readyz` waits for it).
    loaded: AtomicBool,
    /// Dropped with the keeper, which ends the background task (and its hold on the store).
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl StatusKeeper {
    /// Starts keeping an index of the AppContexts in `store` (spawns the task on the current runtime).
    pub(crate) fn start(store: Store) -> Arc<Self> {
        let (progress, _) = watch::channel(0);
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let keeper = Arc::new(Self {
            index: RwLock::new(StatusIndex::new()),
            combined: RwLock::new(CombinedIndex::new()),
            agents: std::sync::Mutex::new(AgentOrders::default()),
            progress,
            loaded: AtomicBool::new(false),
            _stop: stop,
        });
        let task = keep(Arc::downgrade(&keeper), store);
        tokio::spawn(async move {
            tokio::select! {
                () = task => {}
                _ = stopped => {}
            }
        });
        keeper
    }

    /// A read view of the index.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, StatusIndex> {
        self.index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, StatusIndex> {
        self.index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A read view of the combined-status index.
    pub(crate) fn combined(&self) -> RwLockReadGuard<'_, CombinedIndex> {
        self.combined
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The writing side of the combined-status index (registrations).
    pub(crate) fn combined_mut(&self) -> std::sync::RwLockWriteGuard<'_, CombinedIndex> {
        self.combined
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The pull clusters' agent orders.
    pub(crate) fn agent_orders(&self) -> std::sync::MutexGuard<'_, AgentOrders> {
        self.agents
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the index has loaded every AppContext once (it answers from then on, even while reloading).
    pub(crate) fn is_loaded(&self) -> bool {
        self.loaded.load(Ordering::Acquire)
    }

    /// The revision a request must see (read-your-writes): the newest change the store holds now, also one made
    /// through another replica on the same etcd ([`Store::current_revision`]); when the store cannot answer,
    /// what this process has seen.
    pub(crate) async fn request_revision(store: &Store) -> i64 {
        match store.current_revision().await {
            Ok(revision) => revision,
            Err(err) => {
                tracing::warn!(error = %err, "cannot read the store's revision; waiting for what this process has seen");
                store.revision()
            }
        }
    }

    /// The store revision the index reflects, as it advances: status streams wait on it for a change.
    pub(crate) fn subscribe(&self) -> watch::Receiver<i64> {
        self.progress.subscribe()
    }

    /// Waits until the index reflects the store at `revision` (or a short timeout passes).
    pub(crate) async fn caught_up(&self, revision: i64) -> bool {
        let mut progress = self.progress.subscribe();
        tokio::time::timeout(CATCH_UP_TIMEOUT, progress.wait_for(|seen| *seen >= revision))
            .await
            .is_ok_and(|result| result.is_ok())
    }
}

async fn keep(keeper: std::sync::Weak<StatusKeeper>, store: Store) {
    let contexts = AppContexts::new(store.clone());
    loop {
        let loaded = async {
            let (changes, revision) = contexts.load_all().await?;
            let watcher = store.watch("", Some(revision))?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((changes, revision, watcher))
        }
        .await;
        let (changes, revision, mut watcher) = match loaded {
            Ok(loaded) => loaded,
            Err(err) => {
                tracing::warn!(error = %err, "cannot load AppContexts for the status index; retrying");
                tokio::time::sleep(RELOAD_PAUSE).await;
                continue;
            }
        };
        {
            let Some(keeper) = keeper.upgrade() else { return };
            let mut index = StatusIndex::new();
            for change in &changes {
                index.apply(change);
            }
            index.set_revision(revision);
            {
                let mut combined = keeper.combined_mut();
                combined.clear_rows();
                for change in &changes {
                    combined.apply(change);
                }
            }
            {
                let mut agents = keeper.agent_orders();
                agents.clear();
                for change in &changes {
                    agents.apply(change, revision);
                }
            }
            *keeper.write() = index;
            keeper.progress.send_replace(revision);
            keeper.loaded.store(true, Ordering::Release);
            tracing::debug!(contexts = keeper.read().len(), revision, "status index loaded");
        }
        loop {
            // Whole transactions at a time, so a reader never sees half of one.
            let (revision, events) = match watcher.next_batch().await {
                Some(Ok(batch)) => batch,
                Some(Err(err)) => {
                    tracing::warn!(error = %err, "status index watch ended; reloading");
                    break;
                }
                None => return,
            };
            let Some(keeper) = keeper.upgrade() else { return };
            // Records are decoded before the index is locked: readers wait only for the changes to be applied.
            let changes: Vec<ContextChange> = events
                .iter()
                .filter_map(|event| match ContextChange::from_event(event)? {
                    Ok(change) => Some(change),
                    Err(err) => {
                        tracing::warn!(error = %err, "unreadable AppContext record; the status index skips it");
                        None
                    }
                })
                .collect();
            {
                let mut index = keeper.write();
                let mut combined = keeper.combined_mut();
                for change in &changes {
                    index.apply(change);
                    combined.apply(change);
                }
                index.set_revision(revision);
            }
            {
                let mut agents = keeper.agent_orders();
                for change in &changes {
                    agents.apply(change, revision);
                }
            }
            keeper.progress.send_replace(revision);
        }
        tokio::time::sleep(RELOAD_PAUSE).await;
    }
}
