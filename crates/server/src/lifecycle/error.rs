//! Why a lifecycle operation was refused or failed ([`LifecycleError`]), which the API maps to status codes.

use emco_appcontext::{CatalogError, ContextError};
use emco_model::StateValue;

/// Why a lifecycle operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// A catalog lookup or write failed.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// An AppContext lookup or write failed.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// The state does not allow the operation.
    #[error("{subject} '{name}' is {state}: {reason}")]
    InvalidState {
        /// What has the lifecycle (`DeploymentIntentGroup`, `Cluster network intents`, `LogicalCloud`).
        subject: &'static str,
        /// Its name (`provider+cluster` for network intents).
        name: String,
        /// Its current state (or its context's status).
        state: String,
        /// What is refused and what to do.
        reason: String,
    },
    /// The resource lacks what instantiation needs (apps, placement, a user permission).
    #[error("{0}")]
    Incomplete(String),
    /// A body stored earlier cannot be used (it breaks a rule checked when it is used, e.g. a level-0 logical
    /// cloud naming a namespace its clusters do not have).
    #[error("{0}")]
    Invalid(String),
    /// Resources that are each valid do not go together (a quota on a level-0 logical cloud): 409.
    #[error("{0}")]
    Inconsistent(String),
    /// A placement intent names a cluster or label that resolves to nothing.
    #[error("{0}")]
    Placement(String),
    /// A DIG's logical cloud does not exist or is not instantiated.
    #[error("{0}")]
    LogicalCloudNotReady(String),
    /// A DIG places an app on a cluster its logical cloud does not have.
    #[error(
        "app '{app}' is placed on cluster '{cluster}', which logical cloud '{logical_cloud}' does not reference"
    )]
    NotInLogicalCloud {
        /// The app.
        app: String,
        /// The cluster (`provider+cluster`).
        cluster: String,
        /// The logical cloud.
        logical_cloud: String,
    },
    /// A logical cloud cannot be terminated while a DIG deployed on it is instantiated.
    #[error(
        "LogicalCloud '{logical_cloud}' is used by DeploymentIntentGroup '{dig}' (state {state}); terminate the DIG first"
    )]
    LogicalCloudInUse {
        /// The logical cloud.
        logical_cloud: String,
        /// The DIG, `composite-app/version/dig`.
        dig: String,
        /// The DIG's state.
        state: StateValue,
    },
    /// An update of a logical cloud would remove a cluster a DIG deployed on it uses.
    #[error(
        "LogicalCloud '{logical_cloud}' would no longer reference cluster '{cluster}', where DeploymentIntentGroup '{dig}' is deployed; terminate the DIG first or keep the cluster reference"
    )]
    LogicalCloudClusterInUse {
        /// The logical cloud.
        logical_cloud: String,
        /// The cluster (`provider+cluster`).
        cluster: String,
        /// The DIG, `composite-app/version/dig`.
        dig: String,
    },
    /// The composite app's app dependencies form a cycle (no app of it could ever start).
    #[error("app dependencies form a cycle: {}", cycle.join(" → "))]
    DependencyCycle {
        /// The apps of the cycle, the first repeated at the end.
        cycle: Vec<String>,
    },
    /// An app's values break its chart's `values.schema.json`.
    #[error("app '{app}': {message}")]
    Values {
        /// The app.
        app: String,
        /// Helm's message, naming the chart and the path of each violation.
        message: String,
    },
    /// An app's chart could not be rendered.
    #[error("app '{app}': {message}")]
    Render {
        /// The app.
        app: String,
        /// The chart, values or template error, naming the file (and line).
        message: String,
    },
    /// Rendering an app's chart exceeded a bound (output size, time, nesting, a function's result size).
    #[error("app '{app}': {message}")]
    RenderLimit {
        /// The app.
        app: String,
        /// The template file and line, and the bound (`t/templates/x.yaml:3: rendering exceeded …`).
        message: String,
    },
    /// Building the context failed for a reason of ours (a key could not be made; a task ended without an
    /// answer).
    #[error("building the context failed: {0}")]
    Renderer(String),
    /// A rollback names a revision the current instantiation does not have.
    #[error(
        "{subject} '{name}' has no revision {revision} in its current instantiation (revisions 1 to {latest})"
    )]
    UnknownRevision {
        /// What has the lifecycle.
        subject: &'static str,
        /// Its name.
        name: String,
        /// The revision asked for.
        revision: u64,
        /// The latest revision.
        latest: u64,
    },
    /// A DIG names a controller that cannot run: not registered, of no type that takes intents, or not one emco
    /// has.
    #[error("{0}")]
    Controller(String),
    /// A controller refused to change the rendered objects (its message names the intent, the object and the
    /// cluster).
    #[error("controller '{controller}': {message}")]
    Action {
        /// The controller's registered name.
        controller: String,
        /// What it refused and why.
        message: String,
    },
    /// The resource or what it instantiates changed while its context was being built.
    #[error(
        "{subject} '{name}' or what it is built from changed while it was being instantiated; instantiate it again"
    )]
    InputsChanged {
        /// What has the lifecycle.
        subject: &'static str,
        /// Its name.
        name: String,
    },
}

/// The result type of lifecycle operations.
pub type Result<T, E = LifecycleError> = std::result::Result<T, E>;
