//! The status query engine (seeds 000/001, DESIGN §5 and §9): an in-memory index of every AppContext with
//! per-status counters ([`index`]), the query parameters ([`query`]), and answers written straight from the index
//! into JSON bytes in the seed shape or EMCO 22.x's camelCase shape ([`answer`]), for deployment intent groups,
//! cluster network intents and logical clouds alike ([`Subject`]); clusters not heard from within a grace are
//! shown as stale ([`freshness`]). [`combined`] keeps combined status: status collectors' CEL tables over the
//! per-cluster reported state of selected objects (issue #17).
//!
//! Architecture invariant: no I/O and no clock (the time an answer is judged at comes with the request). The
//! server loads the index at start and keeps it current from the store's watch; queries take a read view, so
//! `output=summary` costs O(filters) (cluster/ready answers add one pass over the context's (app, cluster) entries
//! to judge freshness) and `output=all` one pass over the selected resources plus serialization.

pub mod answer;
mod cluster_positions;
pub mod combined;
pub mod freshness;
pub mod index;
pub mod query;
pub mod rollout_waits;
pub mod state;

pub use answer::{
    DetailSource, DigIdentity, NoDetail, Propagation, StatusRequest, Subject, propagation, write_status,
};
pub use freshness::{ClusterFreshness, Freshness};
pub use index::{AppEntry, ClusterEntry, ContextEntry, ResourceEntry, SharedGvk, StatusIndex, Verdict};
pub use query::{
    ConditionsShown, ListQuery, Measure, Output, QueryError, Shape, StatusQuery, SubjectKind, parse_query,
    parse_query_for,
};
pub use state::{Condition, POLICIES, Policy, StateObject, state_object};
