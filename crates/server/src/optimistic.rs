//! Optimistic concurrency of the API's check-then-write sequences (instead of a process-wide write lock, which
//! cannot serialize several replicas on one etcd): a mutating handler runs its checks and its write inside
//! [`optimistic`], which tracks every catalog and AppContext read in a read set
//! ([`emco_appcontext::read_set`]); the write is one store transaction that also compares that read set. When a
//! concurrent writer changed something the handler read, the transaction fails (`Conflict`), and the handler's
//! logic runs again on fresh reads — at most [`ATTEMPTS`] times, then 409 `Conflict` naming the resource.
//!
//! Because the retried logic reads the winner's write, a loser answers as a sequential second call would (a second
//! instantiate is refused by the state, a second create finds the name taken).

use std::future::Future;

use axum::http::StatusCode;
use emco_appcontext::read_set;

use crate::ApiError;

/// How many times a handler's logic runs before a lost race is answered with 409.
pub(crate) const ATTEMPTS: usize = 3;

/// Whether `err` is a lost race (a write whose compares failed, or inputs that changed while a context was built),
/// which running the logic again may win.
fn lost_race(err: &ApiError) -> bool {
    err.status == StatusCode::CONFLICT && err.code == "Conflict"
}

/// Runs `attempt` with a fresh read set until it does not lose a race, at most [`ATTEMPTS`] times; then 409
/// `Conflict`: "`<resource>` changed concurrently; retry".
pub(crate) async fn optimistic<T, F, Fut>(resource: &str, mut attempt: F) -> Result<T, ApiError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    for _ in 0..ATTEMPTS {
        match read_set::tracking(attempt()).await {
            Err(err) if lost_race(&err) => {
                tracing::debug!(resource, error = %err, "lost a race; running the request again");
            }
            other => return other,
        }
    }
    Err(ApiError::conflict(
        "Conflict",
        format!("{resource} changed concurrently; retry"),
    ))
}

/// How [`optimistic`]'s 409 names a resource: `DeploymentIntentGroup 'p/ca/v1/dig'`.
pub(crate) fn resource_name(path: &emco_appcontext::ResourcePath) -> String {
    format!("{} '{}'", path.kind().type_name(), path.display_name())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_lost_race_runs_again_and_gives_up_after_three_attempts() {
        let runs = AtomicUsize::new(0);
        let answer: Result<(), ApiError> = optimistic("Project 'p'", || async {
            runs.fetch_add(1, Ordering::SeqCst);
            Err(ApiError::conflict("Conflict", "p changed concurrently; retry"))
        })
        .await;
        assert_eq!(runs.load(Ordering::SeqCst), ATTEMPTS);
        let err = answer.unwrap_err();
        assert_eq!((err.status, err.code), (StatusCode::CONFLICT, "Conflict"));
        assert_eq!(err.message, "Project 'p' changed concurrently; retry");

        // Other refusals (and successes) answer at once; a later attempt may win.
        let runs = AtomicUsize::new(0);
        let answer: Result<(), ApiError> = optimistic("Project 'p'", || async {
            if runs.fetch_add(1, Ordering::SeqCst) == 0 {
                Err(ApiError::conflict("Conflict", "lost"))
            } else {
                Err(ApiError::conflict("AlreadyExists", "Project already exists: p"))
            }
        })
        .await;
        assert_eq!(answer.unwrap_err().code, "AlreadyExists");
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        // Each attempt tracks reads.
        let tracked = optimistic("x", || async { Ok::<_, ApiError>(read_set::is_tracking()) })
            .await
            .unwrap();
        assert!(tracked);
    }
}
