//! The latency of the store's operations as a Prometheus histogram, recorded through the `metrics` facade:
//! [`OPERATION_DURATION_METRIC`] with label `op` (`get`, `range`, `txn`). Nothing is kept unless the process
//! installed a recorder (`emco serve` does; tests and tools that do not pay one no-op call per operation).

use std::time::Instant;

/// The histogram's name.
pub const OPERATION_DURATION_METRIC: &str = "emco_store_operation_duration_seconds";

/// Records the time from its start to its drop (success, error or cancellation alike) under `op`.
pub(crate) struct OpTimer {
    op: &'static str,
    started: Instant,
}

impl OpTimer {
    /// Starts timing one operation.
    pub(crate) fn start(op: &'static str) -> Self {
        Self {
            op,
            started: Instant::now(),
        }
    }
}

impl Drop for OpTimer {
    fn drop(&mut self) {
        metrics::histogram!(OPERATION_DURATION_METRIC, "op" => self.op).record(self.started.elapsed());
    }
}
