//! Combined status (issue #17, seed 003 — KubeStellar's CombinedStatus): status collectors are small SQL-like
//! queries in CEL (filter, select or group by + COUNT/SUM/AVG/MIN/MAX, limit) over one row per cluster an object
//! is placed on, with the seed's variables `inventory` (`name` = `provider+cluster`, `provider`, `cluster`,
//! `labels`), `obj` (the object as staged, without status), `returned.status` (as the cluster's monitor reported
//! it) and `propagation.lastReturnedUpdateTimestamp` (RFC 3339: when the cluster was last heard).
//!
//! - [`compile`]: compiling a collector once (syntax and unknown variables refused naming field and position).
//! - [`value`]: JSON into CEL (integers stay `int`) and CEL results into the seed's typed [`Cell`]s.
//! - [`table`]: evaluating one row, combining cached rows into a table.
//! - [`index`]: [`CombinedIndex`], kept current incrementally from the same `ContextChange`s as the status index.
//!
//! A missing field is `null` for that row (a filter on it is false); other evaluation errors are counted and the
//! first ten listed per table with cluster, field and expression.

pub mod compile;
pub mod index;
pub mod table;
pub mod value;

/// The CEL environment type collectors compile in (so callers need no `cel` dependency of their own).
pub use cel::Env;
pub use compile::{CompileError, CompiledCollector, compile_collector, environment};
pub use index::{
    CombinedFilter, CombinedIndex, ObjectKey, ObjectState, Registration, reported_object, staged_object,
};
pub use table::{CollectorResult, EvalError, ResultRow};
pub use value::{Cell, json_to_cel};
