//! What can go wrong talking to a cluster, sorted by what rsync does about it.

/// A failure of one step of a sync.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// The cluster could not be reached (connection refused, timeout): retry later; connectivity is Retrying.
    #[error("cluster unreachable: {0}")]
    Unreachable(String),
    /// The cluster answered with an error worth retrying (5xx, 429).
    #[error("cluster busy or failing: {0}")]
    Transient(String),
    /// The cluster refused the object (4xx): the resource is Failed with this message; nothing is retried.
    #[error("{0}")]
    Rejected(String),
    /// The cluster's kubeconfig is missing or unusable: every resource of the cluster fails.
    #[error("kubeconfig of cluster {cluster}: {message}")]
    Kubeconfig {
        /// The cluster.
        cluster: String,
        /// What is wrong.
        message: String,
    },
    /// The cluster's kubeconfig is refused by the kubeconfig policy (the message names the cluster, the entry and
    /// the field): every resource of the cluster fails and no client is built.
    #[error("{0}")]
    KubeconfigRefused(String),
    /// The operation was stopped or superseded.
    #[error("cancelled")]
    Cancelled,
    /// The AppContext could not be read or written.
    #[error("appcontext: {0}")]
    Context(String),
}

impl SyncError {
    /// Whether waiting and trying again may help.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unreachable(_) | Self::Transient(_))
    }
}

impl From<kube::Error> for SyncError {
    fn from(err: kube::Error) -> Self {
        match err {
            kube::Error::Api(status) if status.code == 429 || status.code >= 500 => {
                Self::Transient(format!("{} ({})", status.message, status.code))
            }
            kube::Error::Api(status) => {
                Self::Rejected(format!("{} ({} {})", status.message, status.code, status.reason))
            }
            kube::Error::HyperError(err) => Self::Unreachable(err.to_string()),
            kube::Error::Service(err) => Self::Unreachable(err.to_string()),
            other => Self::Transient(other.to_string()),
        }
    }
}

impl From<emco_appcontext::ContextError> for SyncError {
    fn from(err: emco_appcontext::ContextError) -> Self {
        Self::Context(err.to_string())
    }
}
