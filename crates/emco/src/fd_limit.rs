//! The process's file-descriptor limit: `emco serve` raises its soft `RLIMIT_NOFILE` to the hard limit at start,
//! and caps its connection limit below it, keeping a reserve for the store, cluster connections and logs, so
//! that accepting a connection never runs the process out of descriptors.

/// The soft limit after raising it to the hard one; `None` when it is unlimited or cannot be read (not Unix).
#[cfg(unix)]
pub fn raise_to_hard_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if let (Some(soft), Some(hard)) = (limit.current, limit.maximum)
        && soft < hard
    {
        let raised = Rlimit {
            current: Some(hard),
            maximum: Some(hard),
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => tracing::info!(from = soft, to = hard, "raised the file-descriptor limit"),
            Err(err) => {
                tracing::warn!(limit = soft, hard, error = %err, "cannot raise the file-descriptor limit")
            }
        }
    }
    let soft = getrlimit(Resource::Nofile).current;
    tracing::debug!(limit = ?soft, "file-descriptor limit");
    soft
}

/// The soft limit after raising it to the hard one; `None` when it is unlimited or cannot be read (not Unix).
#[cfg(not(unix))]
pub fn raise_to_hard_limit() -> Option<u64> {
    None
}

/// Descriptors kept for everything but API connections: a quarter of the limit, at least 64.
#[must_use]
pub fn reserve(fd_limit: u64) -> u64 {
    (fd_limit / 4).max(64)
}

/// `requested` connections, or fewer when the descriptor limit minus the [`reserve`] is smaller (at least 1).
#[must_use]
pub fn cap_connections(requested: usize, fd_limit: Option<u64>) -> usize {
    let Some(limit) = fd_limit else {
        return requested;
    };
    let available = usize::try_from(limit.saturating_sub(reserve(limit))).unwrap_or(usize::MAX);
    requested.min(available).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_stay_below_the_descriptor_limit() {
        assert_eq!(cap_connections(4096, None), 4096);
        assert_eq!(cap_connections(4096, Some(1024)), 768);
        assert_eq!(cap_connections(100, Some(1024)), 100);
        assert_eq!(cap_connections(4096, Some(200)), 136);
        assert_eq!(cap_connections(4096, Some(10)), 1);
        assert_eq!(cap_connections(4096, Some(1 << 20)), 4096);
    }
}
