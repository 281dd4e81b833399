//! What can go wrong talking to a cluster, sorted by what rsync does about it, and the short reason a retried
//! failure is shown with (`connection refused`, `HTTP 503 Service Unavailable`).

use std::time::Duration;

/// The most characters of a cluster's message kept in a reason.
const MESSAGE_LIMIT: usize = 160;

/// A failure of one step of a sync.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// The cluster could not be reached (connection refused, timeout): retry later; connectivity is Retrying.
    /// The text is the short reason (`connection refused`, `timed out`).
    #[error("cluster unreachable: {0}")]
    Unreachable(String),
    /// The cluster answered with an error worth retrying (5xx, 429), or its answer could not be read.
    #[error("cluster busy or failing: {reason}")]
    Transient {
        /// The short reason: `HTTP 503 Service Unavailable`, with the cluster's message in parentheses when it
        /// gave one.
        reason: String,
        /// How long the cluster asked rsync to wait (its `Retry-After`), if it did.
        retry_after: Option<Duration>,
    },
    /// A GitOps cluster's Git server could not be reached, refused the credentials or the push (others kept
    /// pushing first): retry later; connectivity is Retrying. The text is the Git server's error.
    #[error("{0}")]
    GitServer(String),
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
    /// A logical cloud user's credentials for the cluster (the certificate the cluster issued, the private key)
    /// are missing or unusable: every resource of the batch fails.
    #[error("credentials of logical cloud '{logical_cloud}' on cluster '{cluster}': {message}")]
    Credentials {
        /// The logical cloud.
        logical_cloud: String,
        /// The cluster (`provider+cluster`).
        cluster: String,
        /// What is missing or wrong.
        message: String,
    },
    /// A GitOps cluster's settings are unusable (a sync object missing, a key it needs absent, a URL refused) or
    /// what would be written to its repository is: every resource of the batch fails.
    #[error("GitOps cluster {cluster}: {message}")]
    GitOps {
        /// The cluster (`provider+cluster`).
        cluster: String,
        /// What is wrong.
        message: String,
    },
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
        matches!(
            self,
            Self::Unreachable(_) | Self::Transient { .. } | Self::GitServer(_)
        )
    }

    /// Why rsync retries, as the cluster's connectivity shows it; `None` for failures that are not retried.
    #[must_use]
    pub fn retry_reason(&self) -> Option<&str> {
        match self {
            Self::Unreachable(reason) | Self::Transient { reason, .. } | Self::GitServer(reason) => {
                Some(reason)
            }
            _ => None,
        }
    }

    /// The delay the cluster asked for (`Retry-After` of a 429 or 5xx answer).
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Transient { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// A cluster's message made fit for a one-line reason: its first line, trimmed and bounded; `None` when empty or
/// markup (a proxy's HTML page).
fn short_message(message: &str) -> Option<String> {
    let line = message.lines().map(str::trim).find(|line| !line.is_empty())?;
    if line.starts_with('<') {
        return None;
    }
    let mut short: String = line
        .chars()
        .filter(|c| !c.is_control())
        .take(MESSAGE_LIMIT)
        .collect();
    if line.chars().count() > MESSAGE_LIMIT {
        short.push('…');
    }
    Some(short)
}

/// `HTTP 503 Service Unavailable (message)` for an error answer.
fn answer_reason(status: &kube::core::Status) -> String {
    let phrase = http::StatusCode::from_u16(status.code)
        .ok()
        .and_then(|code| code.canonical_reason())
        .unwrap_or("");
    let mut reason = format!("HTTP {} {phrase}", status.code).trim_end().to_string();
    if let Some(message) = short_message(&status.message) {
        reason.push_str(&format!(" ({message})"));
    }
    reason
}

/// The short reason a cluster could not be reached, from the innermost cause that says it: `connection refused`,
/// `timed out`, `connection reset`, …, else the innermost error's own words.
fn unreachable_reason(err: &(dyn std::error::Error + 'static)) -> String {
    use std::io::ErrorKind;
    let mut innermost = err.to_string();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = cause {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            let known = match io.kind() {
                ErrorKind::ConnectionRefused => Some("connection refused"),
                ErrorKind::TimedOut => Some("timed out"),
                ErrorKind::ConnectionReset => Some("connection reset"),
                ErrorKind::ConnectionAborted => Some("connection aborted"),
                ErrorKind::UnexpectedEof | ErrorKind::BrokenPipe => Some("connection closed"),
                ErrorKind::HostUnreachable => Some("host unreachable"),
                ErrorKind::NetworkUnreachable => Some("network unreachable"),
                _ => None,
            };
            if let Some(known) = known {
                return known.to_string();
            }
        }
        let text = current.to_string();
        let lower = text.to_ascii_lowercase();
        if lower.contains("timed out") || lower.contains("deadline has elapsed") {
            return "timed out".to_string();
        }
        innermost = text;
        cause = current.source();
    }
    short_message(&innermost).unwrap_or_else(|| "the cluster cannot be reached".to_string())
}

/// Whether `err` says the cluster could not be reached at all (no connection, no TLS session), as opposed to an
/// answer it gave: the one split between [`SyncError::Unreachable`] and the others, which bundle watchers use too.
pub(crate) fn is_unreachable(err: &kube::Error) -> bool {
    matches!(err, kube::Error::HyperError(_) | kube::Error::Service(_))
}

impl From<kube::Error> for SyncError {
    fn from(err: kube::Error) -> Self {
        match err {
            kube::Error::Api(status) if status.code == 429 || status.code >= 500 => Self::Transient {
                reason: answer_reason(&status),
                retry_after: status
                    .details
                    .as_ref()
                    .map(|details| details.retry_after_seconds)
                    .filter(|seconds| *seconds > 0)
                    .map(|seconds| Duration::from_secs(u64::from(seconds))),
            },
            kube::Error::Api(status) => {
                Self::Rejected(format!("{} ({} {})", status.message, status.code, status.reason))
            }
            kube::Error::HyperError(err) => Self::Unreachable(unreachable_reason(&err)),
            kube::Error::Service(err) => Self::Unreachable(unreachable_reason(err.as_ref())),
            // (`is_unreachable` names the two arms above.)
            other => Self::Transient {
                reason: short_message(&other.to_string()).unwrap_or_else(|| "unreadable answer".into()),
                retry_after: None,
            },
        }
    }
}

impl From<emco_appcontext::ContextError> for SyncError {
    fn from(err: emco_appcontext::ContextError) -> Self {
        Self::Context(err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(code: u16, message: &str, retry_after_seconds: u32) -> kube::Error {
        let mut status = kube::core::Status::failure(message, "").with_code(code);
        if retry_after_seconds > 0 {
            status.details = Some(
                serde_json::from_value(serde_json::json!({"retryAfterSeconds": retry_after_seconds}))
                    .unwrap(),
            );
        }
        kube::Error::Api(status.boxed())
    }

    #[test]
    fn error_answers_are_retried_with_their_status_line_and_delay() {
        let unavailable = SyncError::from(answer(503, "", 0));
        assert!(unavailable.is_retryable());
        assert_eq!(unavailable.retry_reason(), Some("HTTP 503 Service Unavailable"));
        assert_eq!(unavailable.retry_after(), None);
        let busy = SyncError::from(answer(429, "slow down\nplease", 5));
        assert_eq!(
            busy.retry_reason(),
            Some("HTTP 429 Too Many Requests (slow down)")
        );
        assert_eq!(busy.retry_after(), Some(Duration::from_secs(5)));
        let html = SyncError::from(answer(502, "<html><body>Bad gateway</body></html>", 0));
        assert_eq!(html.retry_reason(), Some("HTTP 502 Bad Gateway"));
        let long = SyncError::from(answer(500, &"x".repeat(10_000), 0));
        assert!(long.retry_reason().is_some_and(|r| r.chars().count() < 200));
        let rejected = SyncError::from(answer(403, "forbidden", 0));
        assert!(!rejected.is_retryable() && rejected.retry_reason().is_none());
    }

    #[test]
    fn unreachable_clusters_say_why_in_short() {
        #[derive(Debug, thiserror::Error)]
        #[error("client error (Connect)")]
        struct Connect(#[source] std::io::Error);
        let refused = Connect(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "tcp connect error",
        ));
        assert_eq!(unreachable_reason(&refused), "connection refused");
        let timeout = Connect(std::io::Error::other("operation timed out after 5s"));
        assert_eq!(unreachable_reason(&timeout), "timed out");
        let dns = Connect(std::io::Error::other("dns error: failed to lookup address"));
        assert_eq!(unreachable_reason(&dns), "dns error: failed to lookup address");
    }
}
