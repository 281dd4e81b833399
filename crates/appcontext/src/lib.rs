//! The only crate that knows how EMCO data is laid out in the store: the catalog of onboarded resources
//! ([`catalog`]), the AppContexts of instantiations ([`context`]) and the interface of the engine that applies
//! them ([`engine`]), and the read sets of optimistic writes ([`read_set`]).
//!
//! # Key layout
//! - `/emco/v1/res/<kind>/<names…>`: one catalog resource (`{"schema":1,"body":{…}}`); `<names…>` are the
//!   resource's path names from the REST URL, e.g. `/emco/v1/res/app/testvfw/compositevfw/v1/firewall`.
//! - `/emco/v1/blob/<kind>/<names…>`: the bytes that travel beside a resource (an app's chart, an app profile's
//!   archive, a cluster's kubeconfig). Never returned by a catalog read of the resource itself.
//! - `/emco/v1/state/<kind>/<names…>`: the lifecycle history of a resource (`state.Actions`).
//! - `/emco/v1/replicas/member/<replicaId>`, `/emco/v1/replicas/owner/{context,cluster}/<name>`: live replicas
//!   and the work each owns, put with the replica's lease ([`replicas`]).
//! - `/context/<id>/meta`: an AppContext's meta, app order and top-level status.
//! - `/context/<id>/app/<app>/cluster/<provider+cluster>`: the resources of one app on one cluster, their rsync
//!   status, the cluster's connectivity and the last ResourceBundleState heard from it.
//!
//! Architecture invariants: every record carries a schema version and is refused (not misread) when it is newer
//! than this build understands; names never contain `/`, so a prefix range over a parent lists exactly its children.

pub mod agent_order;
pub mod catalog;
pub mod context;
pub mod engine;
mod json_text;
pub mod read_set;
mod record;
pub mod replicas;

pub use agent_order::{AgentEnd, AgentOperation, AgentOrder, AgentOutcome, AgentResult, ReportTaken};
pub use catalog::{Catalog, CatalogError, Entry, Kind, ResourcePath, STATE_PREFIX, decode_state};
pub use context::{
    AppContexts, AppMeta, ClusterRecord, ContextChange, ContextError, ContextMeta, ContextOwner, Exclusion,
    HeardNote, MAX_HEARD_PER_TXN, ResourceRecord, ResourceRole, StoredCluster, UserCredentials, Waiting,
};
pub use engine::{
    AgentStatusFuture, CapabilitiesFuture, ClusterCapabilities, Engine, NodeReport, NodesFuture, NoopEngine,
};
pub use json_text::JsonText;
pub use record::RecordError;
pub use replicas::{Claim, Fence, Replica};
