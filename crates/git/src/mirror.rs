//! A local, bare mirror of one branch of a repository: [`Mirror::publish`] fetches the branch, lets the caller say
//! what to write and remove given what is there, commits that as one commit and pushes it; a push rejected because
//! someone else pushed first is fetched and tried again on the new head (the caller's change made again), up to
//! [`Limits::push_attempts`]. [`Mirror::read`] answers the files under a folder of the branch as the server has it;
//! [`Mirror::fetch_heads`] fetches every branch of the repository at once and [`Mirror::read_commit`] reads one of
//! them (many clusters' status branches, one exchange).
//! Every call blocks (libgit2): call it from a blocking thread.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use git2::build::TreeUpdateBuilder;
use git2::{AutotagOption, ErrorCode, FetchOptions, FileMode, Oid, PushOptions, RemoteCallbacks, Repository};

use crate::remote::{Limits, Remote};
use crate::transport::Session;
use crate::{GitError, Result};

/// The remote's name in the mirror.
const ORIGIN: &str = "origin";

/// One path's change in a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Write `content` at `path` (relative, `/`-separated).
    Write {
        /// The file.
        path: String,
        /// Its content.
        content: Vec<u8>,
    },
    /// Remove the file or folder at `path` (nothing when there is none).
    Remove {
        /// The file or folder.
        path: String,
    },
}

/// What [`Mirror::publish`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Published {
    /// One commit pushed.
    Committed {
        /// Its id.
        commit: String,
        /// The push attempt that was accepted (1 when nobody pushed in between).
        attempts: u32,
    },
    /// The branch already held the change: nothing was committed.
    Unchanged,
}

/// The files under a folder of the branch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// The branch's head commit; none while the branch does not exist.
    pub commit: Option<String>,
    /// When it was committed (seconds since the epoch).
    pub committed_at: Option<i64>,
    /// Each file's path (from the repository's root) and content, in path order.
    pub files: Vec<(String, Vec<u8>)>,
}

/// The branch as the server has it, when [`Mirror::publish`] asks what to change.
pub struct Base<'r> {
    repository: &'r Repository,
    tree: Option<git2::Tree<'r>>,
}

impl Base<'_> {
    /// Whether the branch exists.
    #[must_use]
    pub fn exists(&self) -> bool {
        self.tree.is_some()
    }

    /// The content of the file at `path`, if there is one.
    #[must_use]
    pub fn file(&self, path: &str) -> Option<Vec<u8>> {
        let entry = self.tree.as_ref()?.get_path(Path::new(path)).ok()?;
        let blob = self.repository.find_blob(entry.id()).ok()?;
        Some(blob.content().to_vec())
    }

    /// The paths (from the root) of the files under `folder`.
    pub fn files_under(&self, folder: &str) -> Result<Vec<String>> {
        let folder = checked_path(folder, false)?;
        let Some(tree) = &self.tree else {
            return Ok(Vec::new());
        };
        let Ok(entry) = tree.get_path(Path::new(&folder)) else {
            return Ok(Vec::new());
        };
        if entry.kind() != Some(git2::ObjectType::Tree) {
            return Ok(Vec::new());
        }
        let subtree = self.repository.find_tree(entry.id())?;
        let mut paths = Vec::new();
        subtree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob) {
                let name = entry.name().unwrap_or_default();
                paths.push(format!("{folder}/{parent}{name}"));
            }
            git2::TreeWalkResult::Ok
        })?;
        Ok(paths)
    }
}

/// A local mirror of `remote`'s branch.
pub struct Mirror {
    repository: Mutex<Repository>,
    session: Arc<Session>,
    remote: Remote,
    limits: Limits,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("url", &self.remote.url)
            .field("branch", &self.remote.branch)
            .finish_non_exhaustive()
    }
}

impl Mirror {
    /// Opens (or makes) the mirror in `dir` for `remote`, checked, within `limits`.
    pub fn open(dir: &Path, remote: Remote, limits: Limits) -> Result<Self> {
        let session = Arc::new(Session::new(&remote, limits)?);
        std::fs::create_dir_all(dir)?;
        let repository = match Repository::open_bare(dir) {
            Ok(repository) => repository,
            Err(_) => Repository::init_bare(dir)?,
        };
        remove_stale_locks(dir)?;
        match repository.find_remote(ORIGIN) {
            Ok(existing) if existing.url().ok() == Some(remote.url.as_str()) => {}
            Ok(_) => repository.remote_set_url(ORIGIN, &remote.url)?,
            Err(_) => {
                repository.remote(ORIGIN, &remote.url)?;
            }
        }
        Ok(Self {
            repository: Mutex::new(repository),
            session,
            remote,
            limits,
        })
    }

    /// [`Mirror::open`] on a blocking thread, for async callers.
    pub async fn open_async(dir: PathBuf, remote: Remote, limits: Limits) -> Result<Self> {
        tokio::task::spawn_blocking(move || Self::open(&dir, remote, limits))
            .await
            .map_err(|err| GitError::Io(std::io::Error::other(err)))?
    }

    /// [`Mirror::read`] on a blocking thread, for async callers.
    pub async fn read_async(self: &Arc<Self>, folder: &str) -> Result<Snapshot> {
        let (mirror, folder) = (self.clone(), folder.to_string());
        tokio::task::spawn_blocking(move || mirror.read(&folder))
            .await
            .map_err(|err| GitError::Io(std::io::Error::other(err)))?
    }

    /// The folder of the mirror's repository.
    #[must_use]
    pub fn dir(&self) -> PathBuf {
        self.repository().path().to_path_buf()
    }

    fn repository(&self) -> MutexGuard<'_, Repository> {
        self.repository
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn branch_ref(&self) -> String {
        format!("refs/heads/{}", self.remote.branch)
    }

    fn tracking_ref(&self) -> String {
        format!("refs/remotes/{ORIGIN}/{}", self.remote.branch)
    }

    /// Fetches the branch; its head as the server has it (none while it does not exist there).
    fn fetch(&self, repository: &Repository) -> Result<Option<Oid>> {
        let mut remote = repository.find_remote(ORIGIN)?;
        let refspec = format!("+{}:{}", self.branch_ref(), self.tracking_ref());
        let mut options = FetchOptions::new();
        options.download_tags(AutotagOption::None);
        self.session
            .enter(|| remote.fetch(&[refspec.as_str()], Some(&mut options), None))
            .map_err(server_error)?;
        // The branch's head as just advertised: a branch the server no longer has leaves no tracking ref behind.
        let advertised = remote
            .list()
            .map(|heads| {
                heads
                    .iter()
                    .find(|head| head.name() == self.branch_ref())
                    .map(git2::RemoteHead::oid)
            })
            .unwrap_or(None);
        if advertised.is_none()
            && let Ok(mut stale) = repository.find_reference(&self.tracking_ref())
        {
            stale.delete()?;
        }
        Ok(advertised)
    }

    /// Commits what `change` says (given the branch as the server has it) with `message`, and pushes it; see the
    /// module's doc.
    pub fn publish(
        &self,
        message: &str,
        change: impl Fn(&Base<'_>) -> Result<Vec<Change>>,
    ) -> Result<Published> {
        let repository = self.repository();
        for attempt in 1..=self.limits.push_attempts.max(1) {
            let head = self.fetch(&repository)?;
            let parent = head.map(|oid| repository.find_commit(oid)).transpose()?;
            let base = match &parent {
                Some(commit) => commit.tree()?,
                None => {
                    let empty = repository.treebuilder(None)?.write()?;
                    repository.find_tree(empty)?
                }
            };
            let changes = change(&Base {
                repository: &repository,
                tree: parent.as_ref().map(|_| base.clone()),
            })?;
            let tree = apply(&repository, &base, &changes)?;
            if parent.is_some() && tree == base.id() {
                return Ok(Published::Unchanged);
            }
            let tree = repository.find_tree(tree)?;
            let signature = git2::Signature::now("emco", "emco@localhost")?;
            let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
            let commit = repository.commit(None, &signature, &signature, message, &tree, &parents)?;
            repository.reference(&self.branch_ref(), commit, true, "emco: publish")?;
            if self.push(&repository)? {
                return Ok(Published::Committed {
                    commit: commit.to_string(),
                    attempts: attempt,
                });
            }
            tracing::debug!(attempt, branch = %self.remote.branch, "push rejected: others pushed first; fetching again");
        }
        Err(GitError::Contended {
            branch: self.remote.branch.clone(),
            attempts: self.limits.push_attempts.max(1),
        })
    }

    /// Makes `folder` hold exactly `files` (paths from the root, each under `folder`), in one commit with
    /// `message`: what differs is written, what is no longer there removed; nothing is committed when the folder
    /// already holds them.
    pub fn publish_folder(
        &self,
        message: &str,
        folder: &str,
        files: &std::collections::BTreeMap<String, Vec<u8>>,
    ) -> Result<Published> {
        let folder = checked_path(folder, false)?;
        if let Some(outside) = files.keys().find(|path| !path.starts_with(&format!("{folder}/"))) {
            return Err(GitError::Path(format!("'{outside}' is not under '{folder}'")));
        }
        self.publish(message, |base| {
            let mut changes: Vec<Change> = base
                .files_under(&folder)?
                .into_iter()
                .filter(|path| !files.contains_key(path))
                .map(|path| Change::Remove { path })
                .collect();
            changes.extend(files.iter().map(|(path, content)| Change::Write {
                path: path.clone(),
                content: content.clone(),
            }));
            Ok(changes)
        })
    }

    /// Pushes the local branch; false when the server (or libgit2, knowing the server's head) rejects it as not a
    /// fast-forward.
    fn push(&self, repository: &Repository) -> Result<bool> {
        let mut remote = repository.find_remote(ORIGIN)?;
        let refspec = format!("{0}:{0}", self.branch_ref());
        let mut rejected = None;
        let pushed = {
            let mut callbacks = RemoteCallbacks::new();
            callbacks.push_update_reference(|_, status| {
                rejected = status.map(str::to_string);
                Ok(())
            });
            let mut options = PushOptions::new();
            options.remote_callbacks(callbacks);
            self.session
                .enter(|| remote.push(&[refspec.as_str()], Some(&mut options)))
        };
        match pushed {
            Ok(()) => Ok(rejected.is_none()),
            Err(err) if err.code() == ErrorCode::NotFastForward => Ok(false),
            Err(err) => Err(server_error(err)),
        }
    }

    /// The files under `folder` (relative, `/`-separated; empty: the whole branch) of the branch as the server has
    /// it now, bounded by [`Limits::max_read_files`] and [`Limits::max_read_bytes`].
    pub fn read(&self, folder: &str) -> Result<Snapshot> {
        let folder = checked_path(folder, true)?;
        let repository = self.repository();
        let Some(head) = self.fetch(&repository)? else {
            return Ok(Snapshot::default());
        };
        self.snapshot(&repository, head, &folder)
    }

    /// Fetches every branch of the repository in one exchange (many clusters' status branches at once); their
    /// heads as the server has them, by branch name, at most [`Limits::max_read_files`] of them.
    pub fn fetch_heads(&self) -> Result<std::collections::BTreeMap<String, String>> {
        let repository = self.repository();
        let mut remote = repository.find_remote(ORIGIN)?;
        let refspec = format!("+refs/heads/*:refs/remotes/{ORIGIN}/*");
        let mut options = FetchOptions::new();
        options.download_tags(AutotagOption::None);
        options.prune(git2::FetchPrune::On);
        self.session
            .enter(|| remote.fetch(&[refspec.as_str()], Some(&mut options), None))
            .map_err(server_error)?;
        let heads = remote.list().map_err(server_error)?;
        if heads.len() > self.limits.max_read_files {
            return Err(GitError::TooLarge(format!(
                "the repository has more than {} branches",
                self.limits.max_read_files
            )));
        }
        Ok(heads
            .iter()
            .filter_map(|head| {
                let branch = head.name().strip_prefix("refs/heads/")?;
                Some((branch.to_string(), head.oid().to_string()))
            })
            .collect())
    }

    /// The files under `folder` at `commit`, one this mirror fetched ([`Mirror::fetch_heads`]), bounded as
    /// [`Mirror::read`] is; nothing is fetched.
    pub fn read_commit(&self, commit: &str, folder: &str) -> Result<Snapshot> {
        let folder = checked_path(folder, true)?;
        let head = Oid::from_str(commit)?;
        let repository = self.repository();
        self.snapshot(&repository, head, &folder)
    }

    /// The files under `folder` at `head`, bounded (see [`Mirror::read`]).
    fn snapshot(&self, repository: &Repository, head: Oid, folder: &str) -> Result<Snapshot> {
        let commit = repository.find_commit(head)?;
        let mut snapshot = Snapshot {
            commit: Some(head.to_string()),
            committed_at: Some(commit.time().seconds()),
            files: Vec::new(),
        };
        let root = commit.tree()?;
        let tree = if folder.is_empty() {
            root
        } else {
            match root.get_path(Path::new(&folder)) {
                Ok(entry) if entry.kind() == Some(git2::ObjectType::Tree) => {
                    repository.find_tree(entry.id())?
                }
                _ => return Ok(snapshot),
            }
        };
        let mut bytes = 0usize;
        let mut over = None;
        let walked = tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
            if entry.kind() != Some(git2::ObjectType::Blob) {
                return git2::TreeWalkResult::Ok;
            }
            let Ok(blob) = repository.find_blob(entry.id()) else {
                return git2::TreeWalkResult::Ok;
            };
            bytes += blob.size();
            if snapshot.files.len() >= self.limits.max_read_files || bytes > self.limits.max_read_bytes {
                over = Some(format!(
                    "'{folder}' holds more than {} files or {} bytes",
                    self.limits.max_read_files, self.limits.max_read_bytes
                ));
                return git2::TreeWalkResult::Abort;
            }
            let name = entry.name().unwrap_or_default();
            let path = [folder, parent.trim_end_matches('/'), name]
                .iter()
                .filter(|part| !part.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("/");
            snapshot.files.push((path, blob.content().to_vec()));
            git2::TreeWalkResult::Ok
        });
        if let Some(message) = over {
            return Err(GitError::TooLarge(message));
        }
        walked?;
        snapshot.files.sort();
        Ok(snapshot)
    }
}

/// When this process first opened a mirror: a lock file older than that was left by another process.
static FIRST_OPEN: std::sync::OnceLock<std::time::SystemTime> = std::sync::OnceLock::new();

/// Removes the lock files (`*.lock` in the mirror's folder and under `refs/`) that a process killed in the middle
/// of writing a ref left behind: libgit2 would refuse every later ref write ("locked") for ever. Only those older
/// than this process's first open go — a mirror's folder belongs to one process, and this process's own locks are
/// held for a moment by one of its operations.
fn remove_stale_locks(dir: &Path) -> Result<()> {
    let first_open = *FIRST_OPEN.get_or_init(std::time::SystemTime::now);
    let mut folders = vec![dir.to_path_buf()];
    let mut visited = 0usize;
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            // A mirror's refs are a handful; a folder with more is not walked further.
            if visited > 100_000 {
                return Ok(());
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if folder == dir && entry.file_name() == "refs" || folder.starts_with(dir.join("refs")) {
                    folders.push(path);
                }
                continue;
            }
            let stale = path.extension().is_some_and(|extension| extension == "lock")
                && entry
                    .metadata()
                    .and_then(|metadata| metadata.modified())
                    .is_ok_and(|modified| modified < first_open);
            if stale {
                tracing::info!(lock = %path.display(), "removing a lock file left by a process that stopped mid-write");
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(())
}

/// A libgit2 failure talking to the server, as a server error (its message is the transport's).
fn server_error(err: git2::Error) -> GitError {
    GitError::Server(err.message().to_string())
}

/// `path` if it is relative, `/`-separated, without `.`/`..` components or a `.git` folder (`empty_ok`: the root).
fn checked_path(path: &str, empty_ok: bool) -> Result<String> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return if empty_ok {
            Ok(String::new())
        } else {
            Err(GitError::Path("an empty path".into()))
        };
    }
    let fine = !path.starts_with('/')
        && trimmed.len() <= 4096
        && !trimmed.contains('\\')
        && trimmed
            .split('/')
            .all(|part| !matches!(part, "" | "." | ".." | ".git") && !part.contains('\0'));
    if !fine {
        return Err(GitError::Path(format!(
            "'{}' is not a relative path inside the repository",
            trimmed.chars().take(128).collect::<String>()
        )));
    }
    Ok(trimmed.to_string())
}

/// The tree `base` with `changes` made (a removal of what is not there, or of what a removal of its folder removes
/// already, changes nothing).
fn apply(repository: &Repository, base: &git2::Tree<'_>, changes: &[Change]) -> Result<Oid> {
    let removed_folders: Vec<String> = changes
        .iter()
        .filter_map(|change| match change {
            Change::Remove { path } => Some(format!("{}/", path.trim_matches('/'))),
            Change::Write { .. } => None,
        })
        .collect();
    let mut builder = TreeUpdateBuilder::new();
    for change in changes {
        if let Change::Remove { path } = change
            && removed_folders
                .iter()
                .any(|folder| path.starts_with(folder.as_str()))
        {
            continue;
        }
        match change {
            Change::Write { path, content } => {
                let path = checked_path(path, false)?;
                let blob = repository.blob(content)?;
                builder.upsert(path, blob, FileMode::Blob);
            }
            Change::Remove { path } => {
                let path = checked_path(path, false)?;
                if base.get_path(Path::new(&path)).is_ok() {
                    builder.remove(path);
                }
            }
        }
    }
    Ok(builder.create_updated(repository, base)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relative_paths_inside_the_repository_are_written() {
        assert_eq!(
            checked_path("clusters/p+c/status/", false).unwrap(),
            "clusters/p+c/status"
        );
        assert_eq!(checked_path("", true).unwrap(), "");
        for bad in [
            "/etc/passwd",
            "a/../b",
            ".git/config",
            "a/./b",
            "a\\b",
            "a//b",
            "",
        ] {
            assert!(checked_path(bad, false).is_err(), "{bad}");
        }
    }
}
