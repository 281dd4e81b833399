//! The embedded backend: one redb file (`emco.redb`) in the data directory.
//!
//! One process at a time holds the file (redb locks it). Opening waits a little for a lock that is about to be
//! released (a predecessor killed with SIGKILL keeps it until the kernel has torn the process down), and `emco.pid`
//! beside the file names the holder, so a store that stays locked is reported with the process that has it.
//!
//! Reads open their own read transaction. Writes go to one writer thread that commits them in groups: it takes
//! every transaction waiting in its queue, applies them in arrival order inside one redb write transaction, and
//! commits once (one fsync for the group). Each transaction keeps its own compares and atomicity; if the commit
//! fails, none of the group took effect and every caller gets the error.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use tokio::sync::oneshot;

use crate::engine::{KvTable, Record, apply_txn, prefix_end};
use crate::lease::{Expire, LeaseId, LeaseStatus, Leases};
use crate::watch::WatchHub;
use crate::{Error, Event, KeyValue, Op, Result, Revision, Txn, TxnResponse, Watcher};

/// Keys and encoded [`Record`]s.
const KV_TABLE: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("kv");
/// Store-wide bookkeeping: the current revision.
const META_TABLE: TableDefinition<'_, &str, i64> = TableDefinition::new("meta");
/// The keys put with a lease, and the lease: every lease ends with the process that granted it, so opening the
/// store deletes these keys.
const LEASED_TABLE: TableDefinition<'_, &str, i64> = TableDefinition::new("leased");
const REVISION_KEY: &str = "revision";
/// The file name inside the data directory.
pub(crate) const FILE_NAME: &str = "emco.redb";
/// The file in the data directory that names the process holding the store (its pid), written on open and removed
/// when the store is dropped.
pub(crate) const PID_FILE_NAME: &str = "emco.pid";
/// How long [`RedbStore::open`] waits for a store another process still holds.
pub const OPEN_WAIT: Duration = Duration::from_secs(5);
/// The first and the longest pause between two tries to open a locked store.
const OPEN_PAUSE_FIRST: Duration = Duration::from_millis(25);
const OPEN_PAUSE_MAX: Duration = Duration::from_millis(500);
/// The most bytes read from a pid file (a pid is at most 10 digits).
const PID_FILE_MAX: u64 = 64;
/// The most transactions committed together; bounds the latency one group adds to its first member.
const MAX_GROUP: usize = 512;
/// The most memory redb's page cache holds (read cache and write buffer together). redb's default, 1 GiB, keeps
/// every page the process ever wrote or read until the cache is full: after instantiating 1,000 clusters the file's
/// pages were most of emco's resident memory. The B-tree's inner pages, which every lookup touches, fit many times
/// over; a leaf read again after eviction comes from the kernel's page cache, which is not this process's memory.
/// 8 MiB: at 1,000 clusters × 30 resources with 60,000 pods reported, emco's resident memory was 28 MiB smaller
/// than with 32 MiB in interleaved runs, its CPU while instantiating and the status queries' times within the
/// runs' spread (BENCHMARKS.md).
pub const PAGE_CACHE_BYTES: usize = 8 * 1024 * 1024;

/// A store in one redb file.
pub struct RedbStore {
    path: PathBuf,
    database: Arc<redb::Database>,
    revision: Arc<AtomicI64>,
    hub: Arc<WatchHub>,
    /// The writer thread's queue; `None` once dropped.
    writer: Option<mpsc::Sender<WriteRequest>>,
    /// The writer thread, joined on drop so the file is released before `drop` returns.
    writer_thread: Option<std::thread::JoinHandle<()>>,
    /// `emco.pid`, naming this process, when it could be written.
    pid_file: Option<PathBuf>,
    /// This process's leases (the writer thread applies them).
    leases: Arc<Mutex<Leases>>,
    sweeper_started: AtomicBool,
}

impl Drop for RedbStore {
    fn drop(&mut self) {
        // Closing the queue ends the writer loop after it finished the transactions already queued.
        self.writer.take();
        if let Some(thread) = self.writer_thread.take() {
            let _ = thread.join();
        }
        // Only our own pid file goes: another process may have taken the store over meanwhile.
        if let Some(pid_file) = self.pid_file.take()
            && read_pid(&pid_file) == Some(std::process::id())
        {
            let _ = std::fs::remove_file(pid_file);
        }
    }
}

/// Reads the pid in a pid file, if it holds one.
fn read_pid(pid_file: &Path) -> Option<u32> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(pid_file)
        .ok()?
        .take(PID_FILE_MAX)
        .read_to_string(&mut text)
        .ok()?;
    text.trim().parse().ok()
}

/// Whether process `pid` is running, when the system can tell (Linux's `/proc`); a zombie (killed, not yet
/// reaped) no longer holds files and counts as gone.
fn process_alive(pid: u32) -> Option<bool> {
    if !Path::new("/proc/self/stat").exists() {
        return None;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Some(false);
    };
    // `pid (comm) S ...`: the state follows the last ')' (the command may hold parentheses).
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    Some(!matches!(state, Some('Z' | 'X')))
}

/// Who holds the store in `data_dir`, as the error says it: from `emco.pid` and whether that process runs.
fn holder(data_dir: &Path) -> String {
    let pid_file = data_dir.join(PID_FILE_NAME);
    match read_pid(&pid_file) {
        None => format!("another process ({} names none)", pid_file.display()),
        Some(pid) if pid == std::process::id() => {
            format!("this process (pid {pid}), which has it open already")
        }
        Some(pid) => match process_alive(pid) {
            Some(false) => format!(
                "emco (pid {pid}), which is no longer running: the lock is stale; if it does not clear, another \
                 process has {} open",
                data_dir.join(FILE_NAME).display()
            ),
            _ => format!("another emco (pid {pid})"),
        },
    }
}

/// Opens (or creates) the database file, trying again while another process holds it, for up to `wait`.
fn create_waiting(path: &Path, data_dir: &Path, wait: Duration) -> Result<redb::Database> {
    let deadline = Instant::now() + wait;
    let mut pause = OPEN_PAUSE_FIRST;
    loop {
        match redb::Builder::new().set_cache_size(PAGE_CACHE_BYTES).create(path) {
            Ok(database) => return Ok(database),
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                let now = Instant::now();
                if now >= deadline {
                    return Err(Error::InUse {
                        data_dir: data_dir.display().to_string(),
                        holder: holder(data_dir),
                    });
                }
                tracing::debug!(path = %path.display(), ?pause, "the store is locked; trying again");
                std::thread::sleep(pause.min(deadline - now));
                pause = (pause * 2).min(OPEN_PAUSE_MAX);
            }
            Err(err) => {
                return Err(Error::Open {
                    path: data_dir.display().to_string(),
                    message: err.to_string(),
                });
            }
        }
    }
}

/// What the writer thread is asked to do.
enum Work {
    /// Run a transaction.
    Txn(Txn),
    /// End these leases, deleting their keys.
    Revoke(Vec<LeaseId>),
}

struct WriteRequest {
    work: Work,
    reply: oneshot::Sender<Result<TxnResponse>>,
}

fn lock_leases(leases: &Mutex<Leases>) -> std::sync::MutexGuard<'_, Leases> {
    // Lease bookkeeping is replaced field by field and stays usable after a panic elsewhere.
    leases.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Keeps the table of leased keys in step with the ops that ran.
fn persist_leased(table: &mut redb::Table<'_, &'static str, i64>, ops: &[Op]) -> Result<()> {
    for op in ops {
        match op {
            Op::Put {
                key,
                lease: Some(lease),
                ..
            } => {
                table.insert(key.as_str(), *lease).map_err(backend)?;
            }
            Op::Put { key, lease: None, .. } | Op::Delete { key } => {
                table.remove(key.as_str()).map_err(backend)?;
            }
            Op::DeletePrefix { prefix } => {
                let mut keys = Vec::new();
                for entry in table.range::<&str>(prefix.as_str()..).map_err(backend)? {
                    let key = entry.map_err(backend)?.0.value().to_string();
                    if !key.starts_with(prefix.as_str()) {
                        break;
                    }
                    keys.push(key);
                }
                for key in keys {
                    table.remove(key.as_str()).map_err(backend)?;
                }
            }
        }
    }
    Ok(())
}

fn backend(err: impl Into<redb::Error>) -> Error {
    Error::from(err.into())
}

impl RedbStore {
    /// Opens or creates `emco.redb` in `data_dir`, creating the directory when missing; waits up to
    /// [`OPEN_WAIT`] for a store another process still holds (blocking the calling thread meanwhile).
    pub fn open(data_dir: &Path) -> Result<Self> {
        Self::open_waiting(data_dir, OPEN_WAIT)
    }

    /// [`RedbStore::open`], waiting up to `wait` for a store another process (or handle) holds; then
    /// [`Error::InUse`] names the holder.
    pub fn open_waiting(data_dir: &Path, wait: Duration) -> Result<Self> {
        let open_error = |message: String| Error::Open {
            path: data_dir.display().to_string(),
            message,
        };
        std::fs::create_dir_all(data_dir).map_err(|err| open_error(err.to_string()))?;
        let path = data_dir.join(FILE_NAME);
        let database = create_waiting(&path, data_dir, wait)?;
        // Create the tables once so that readers never meet a missing table.
        let write = database.begin_write().map_err(backend)?;
        let revision = {
            let mut table = write.open_table(KV_TABLE).map_err(backend)?;
            let mut meta = write.open_table(META_TABLE).map_err(backend)?;
            let mut leased = write.open_table(LEASED_TABLE).map_err(backend)?;
            let revision = meta
                .get(REVISION_KEY)
                .map_err(backend)?
                .map_or(0, |value| value.value());
            // The leases of the previous process ended with it: their keys go.
            let mut orphans = Vec::new();
            for entry in leased.iter().map_err(backend)? {
                orphans.push(Op::delete(entry.map_err(backend)?.0.value()));
            }
            if orphans.is_empty() {
                revision
            } else {
                tracing::info!(
                    keys = orphans.len(),
                    "deleting the keys of the previous process's leases"
                );
                let mut view = TableView { table: &mut table };
                let (response, _) = apply_txn(&mut view, revision, &Txn::new().and_then(orphans))?;
                meta.insert(REVISION_KEY, response.revision).map_err(backend)?;
                leased.retain(|_, _| false).map_err(backend)?;
                response.revision
            }
        };
        write.commit().map_err(backend)?;
        let leases = Arc::new(Mutex::new(Leases::default()));

        let database = Arc::new(database);
        let revision = Arc::new(AtomicI64::new(revision));
        let hub = Arc::new(WatchHub::new(revision.load(Ordering::SeqCst)));
        let (writer, queue) = mpsc::channel();
        let worker = Writer {
            database: database.clone(),
            revision: revision.clone(),
            hub: hub.clone(),
            leases: leases.clone(),
        };
        let writer_thread = std::thread::Builder::new()
            .name("emco-store-writer".into())
            .spawn(move || worker.run(queue))
            .map_err(|err| open_error(format!("cannot start the writer thread: {err}")))?;
        // Best effort: without it a later opener cannot name us, nothing else depends on it.
        let pid_file = data_dir.join(PID_FILE_NAME);
        let pid_file = match std::fs::write(&pid_file, format!("{}\n", std::process::id())) {
            Ok(()) => Some(pid_file),
            Err(err) => {
                tracing::warn!(path = %pid_file.display(), error = %err, "cannot write the pid file");
                None
            }
        };
        Ok(Self {
            path,
            database,
            revision,
            hub,
            writer: Some(writer),
            writer_thread: Some(writer_thread),
            pid_file,
            leases,
            sweeper_started: AtomicBool::new(false),
        })
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn revision(&self) -> Revision {
        self.revision.load(Ordering::SeqCst)
    }

    pub(crate) fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        let read = self.database.begin_read().map_err(backend)?;
        let table = read.open_table(KV_TABLE).map_err(backend)?;
        let Some(bytes) = table.get(key).map_err(backend)? else {
            return Ok(None);
        };
        let record = decode(key, bytes.value())?;
        Ok(Some(record.into_key_value(key.to_string())))
    }

    pub(crate) fn range(&self, prefix: &str, limit: usize) -> Result<(Vec<KeyValue>, Revision)> {
        let read = self.database.begin_read().map_err(backend)?;
        // The revision comes from the same snapshot, so a watch from it misses nothing and repeats nothing.
        let meta = read.open_table(META_TABLE).map_err(backend)?;
        let revision = meta
            .get(REVISION_KEY)
            .map_err(backend)?
            .map_or(0, |value| value.value());
        let table = read.open_table(KV_TABLE).map_err(backend)?;
        let mut items = Vec::new();
        for entry in table.range::<&str>(prefix..).map_err(backend)? {
            let (key, value) = entry.map_err(backend)?;
            if !key.value().starts_with(prefix) || items.len() >= limit {
                break;
            }
            let record = decode(key.value(), value.value())?;
            items.push(record.into_key_value(key.value().to_string()));
        }
        Ok((items, revision))
    }

    pub(crate) async fn txn(&self, txn: Txn) -> Result<TxnResponse> {
        self.send(Work::Txn(txn))?.await.map_err(|_| Error::Closed)?
    }

    fn send(&self, work: Work) -> Result<oneshot::Receiver<Result<TxnResponse>>> {
        let (reply, answer) = oneshot::channel();
        let writer = self.writer.as_ref().ok_or(Error::Closed)?;
        writer
            .send(WriteRequest { work, reply })
            .map_err(|_| Error::Closed)?;
        Ok(answer)
    }

    pub(crate) fn grant_lease(&self, ttl: Duration) -> LeaseId {
        lock_leases(&self.leases).grant(ttl, Instant::now())
    }

    pub(crate) fn keep_alive(&self, lease: LeaseId) -> Option<Duration> {
        lock_leases(&self.leases).keep_alive(lease, Instant::now())
    }

    pub(crate) fn lease_status(&self, lease: LeaseId) -> Option<LeaseStatus> {
        lock_leases(&self.leases).status(lease, Instant::now())
    }

    pub(crate) async fn revoke_lease(&self, lease: LeaseId) -> Result<()> {
        self.send(Work::Revoke(vec![lease]))?
            .await
            .map_err(|_| Error::Closed)??;
        Ok(())
    }

    pub(crate) fn watch(&self, prefix: &str, after: Option<Revision>) -> Result<Watcher> {
        self.hub.subscribe(prefix, after, self.revision())
    }
}

fn decode(key: &str, bytes: &[u8]) -> Result<Record> {
    Record::decode(bytes).ok_or_else(|| Error::Backend(format!("record of key '{key}' is truncated")))
}

impl Expire for RedbStore {
    fn expire_due(&self) {
        let due = lock_leases(&self.leases).due(Instant::now());
        if !due.is_empty() {
            // The writer ends them in order with every other write; nobody waits for the answer.
            let _ = self.send(Work::Revoke(due));
        }
    }

    fn sweeper_started(&self) -> &AtomicBool {
        &self.sweeper_started
    }
}

/// The writer thread's state.
struct Writer {
    database: Arc<redb::Database>,
    revision: Arc<AtomicI64>,
    hub: Arc<WatchHub>,
    leases: Arc<Mutex<Leases>>,
}

struct TableView<'a, 'txn> {
    table: &'a mut redb::Table<'txn, &'static str, &'static [u8]>,
}

impl KvTable for TableView<'_, '_> {
    fn read(&self, key: &str) -> Result<Option<Record>> {
        match self.table.get(key).map_err(backend)? {
            Some(bytes) => decode(key, bytes.value()).map(Some),
            None => Ok(None),
        }
    }

    fn write(&mut self, key: &str, record: &Record) -> Result<()> {
        self.table
            .insert(key, record.encode().as_slice())
            .map_err(backend)?;
        Ok(())
    }

    fn remove(&mut self, key: &str) -> Result<()> {
        self.table.remove(key).map_err(backend)?;
        Ok(())
    }

    fn keys_with_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        let entries = match prefix_end(prefix) {
            Some(end) => self.table.range::<&str>(prefix..end.as_str()).map_err(backend)?,
            None => self.table.range::<&str>(prefix..).map_err(backend)?,
        };
        for entry in entries {
            keys.push(entry.map_err(backend)?.0.value().to_string());
        }
        Ok(keys)
    }
}

impl Writer {
    fn run(self, queue: mpsc::Receiver<WriteRequest>) {
        while let Ok(first) = queue.recv() {
            let mut group = vec![first];
            while group.len() < MAX_GROUP {
                match queue.try_recv() {
                    Ok(request) => group.push(request),
                    Err(_) => break,
                }
            }
            let works: Vec<&Work> = group.iter().map(|request| &request.work).collect();
            match self.commit_group(&works) {
                Ok(outcomes) => {
                    for (request, outcome) in group.into_iter().zip(outcomes) {
                        let reply = outcome.map(|(response, events)| {
                            self.hub.publish(events);
                            response
                        });
                        let _ = request.reply.send(reply);
                    }
                }
                Err(err) => {
                    tracing::error!(error = %err, "store commit failed; {} transactions not applied", group.len());
                    for request in group {
                        let _ = request.reply.send(Err(Error::Backend(err.to_string())));
                    }
                }
            }
        }
    }

    /// Applies a group in one redb transaction: per request its outcome (a put with a lease that does not exist
    /// fails alone), or an error for the whole group when the commit fails.
    #[allow(clippy::type_complexity)] // per request: its response and events, or its own error
    fn commit_group(&self, works: &[&Work]) -> Result<Vec<Result<(TxnResponse, Vec<Event>)>>> {
        let write = self.database.begin_write().map_err(backend)?;
        let mut current = self.revision.load(Ordering::SeqCst);
        let mut outcomes = Vec::with_capacity(works.len());
        {
            let mut leases = lock_leases(&self.leases);
            let mut table = write.open_table(KV_TABLE).map_err(backend)?;
            let mut leased = write.open_table(LEASED_TABLE).map_err(backend)?;
            let mut view = TableView { table: &mut table };
            for work in works {
                let txn = match work {
                    Work::Txn(txn) => {
                        if let Err(err) = leases.check(txn) {
                            outcomes.push(Err(err));
                            continue;
                        }
                        txn.clone()
                    }
                    Work::Revoke(ids) => {
                        let mut deletes = Txn::new();
                        for id in ids {
                            if let Some(txn) = leases.take(*id) {
                                deletes.success.extend(txn.success);
                            }
                        }
                        deletes
                    }
                };
                let (response, events) = apply_txn(&mut view, current, &txn)?;
                let ran = if response.succeeded {
                    &txn.success
                } else {
                    &txn.failure
                };
                leases.record(ran);
                persist_leased(&mut leased, ran)?;
                current = response.revision;
                outcomes.push(Ok((response, events)));
            }
            let mut meta = write.open_table(META_TABLE).map_err(backend)?;
            meta.insert(REVISION_KEY, current).map_err(backend)?;
        }
        write.commit().map_err(backend)?;
        self.revision.store(current, Ordering::SeqCst);
        Ok(outcomes)
    }
}
