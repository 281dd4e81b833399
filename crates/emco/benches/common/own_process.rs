//! What the benchmarks that measure their own process share: its CPU time and resident set (Linux `/proc`), the
//! system clock both of a benchmark's processes stamp, percentiles, and numbers from the environment.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The number in environment variable `name`, else `default`.
pub(crate) fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The process's CPU time so far (user + system, from `/proc/self/stat`, Linux; clock ticks of 10 ms).
pub(crate) fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = after_name
        .split_whitespace()
        .map(|field| field.parse().unwrap_or(0))
        .collect();
    // After the name: state (0), …, utime (11), stime (12).
    let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// The resident set size in bytes (`/proc/self/statm`, Linux).
pub(crate) fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// The `p` quantile of sorted samples (nearest rank).
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

/// Microseconds since the Unix epoch: the clock both processes of a benchmark share.
pub(crate) fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_micros() as i64)
}
