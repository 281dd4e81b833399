//! Git for GitOps clusters. A [`Mirror`] is emco's local, bare copy of one branch of a cluster's repository: it
//! commits a step's files (written and removed paths, one commit) on top of the branch as the server has it and
//! pushes; when someone else pushed first it fetches, applies the same change to the new head and tries again. It
//! also reads a folder of the branch back (the status the clusters' monitors commit). Git is libgit2 (`git2`);
//! its HTTP(S) is emco's own transport (`transport.rs`: hyper and rustls, bounded in time and bytes, the token sent
//! only as a credential). [`GitServer`] serves repositories over smart HTTP with Debian's `git http-backend`
//! behind a token, for the demo and the tests.

mod mirror;
mod remote;
mod server;
mod transport;

pub use mirror::{Base, Change, Mirror, Published, Snapshot};
pub use remote::{Limits, Remote, Secret};
pub use server::GitServer;

/// What went wrong with Git.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The remote's settings are unusable (named).
    #[error("Git remote: {0}")]
    Remote(String),
    /// The server could not be reached, answered an error or refused the credentials.
    #[error("Git server: {0}")]
    Server(String),
    /// Every push attempt was rejected because others pushed first.
    #[error("the push was rejected {attempts} times: others kept pushing to '{branch}' first")]
    Contended {
        /// The branch.
        branch: String,
        /// How many pushes were tried.
        attempts: u32,
    },
    /// What the branch holds is larger than a bound.
    #[error("Git branch: {0}")]
    TooLarge(String),
    /// A path to write, remove or read is not a relative path inside the repository.
    #[error("Git path: {0}")]
    Path(String),
    /// libgit2 failed.
    #[error("Git: {0}")]
    Git(#[from] git2::Error),
    /// The local mirror's folder could not be used.
    #[error("Git mirror: {0}")]
    Io(#[from] std::io::Error),
}

impl GitError {
    /// Whether trying again later may help: the server down, refusing or failing, others pushing first, or a lock
    /// in the local mirror held for a moment.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Server(_) | Self::Contended { .. } => true,
            Self::Git(err) => err.code() == git2::ErrorCode::Locked,
            _ => false,
        }
    }
}

/// The result of a Git operation.
pub type Result<T> = std::result::Result<T, GitError>;
