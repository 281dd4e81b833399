//! The deployment-intent-group lifecycle (seeds 000/001; DESIGN §6): approve, instantiate, terminate and stop,
//! the rule that modifying an approved DIG or its intents returns it to Created, and the guards on modifying and
//! deleting an instantiated DIG. Instantiate resolves placement, renders every app's chart and creates the
//! AppContext in the same store transaction that records the `Instantiated` action; only then is the engine told.
//!
//! Instantiation has two halves, so that a slow chart never holds up other writes: [`Lifecycle::prepare_instantiate`]
//! reads the DIG's inputs and renders them (on the blocking pool, at most [`MAX_CONCURRENT_RENDERS`] at once, each
//! app within its [`RenderLimits`]) without the API's write lock; [`Lifecycle::commit_instantiate`], called under
//! it, checks the state again, reads the inputs again and refuses (409 `Conflict`) if any changed meanwhile, then
//! writes. Two instantiations of one DIG racing therefore create exactly one context.
//!
//! Stop returns once the engine has recorded the stopped operation ([`Lifecycle::wait_stopped`], bounded by
//! [`STOP_WAIT`]); an instantiation after a stopped termination supersedes it even if the engine has not recorded
//! it yet (the old context is marked `TerminateFailed` in the same transaction that creates the new one).
//!
//! No HTTP here: errors are [`LifecycleError`]s, which the API maps to status codes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use emco_appcontext::{
    AppContexts, AppMeta, Catalog, CatalogError, ClusterRecord, ContextError, ContextMeta, Engine, Kind,
    ResourcePath, ResourceRecord, ResourceRole,
};
use emco_helm::{Manifest, Release, RenderLimits, render_chart_within};
use emco_model::{
    AppDependency, AppDependencySpec, AppIntent, ContextId, ContextStatus, DeploymentIntentGroup,
    GENERIC_PLACEMENT_INTENT_KEY, GroupIntent, PlacementItem, StateInfo, StateValue, dependency_cycle,
    now_timestamp,
};
use emco_store::{Op, Txn};
use tokio::sync::Semaphore;

/// The namespace a DIG deploys to while it names no logical cloud.
pub const DEFAULT_NAMESPACE: &str = "default";

/// At most this many instantiations render at once (each holds its charts, values and up to
/// [`RenderLimits::max_output_bytes`] of output per app in memory); the others wait their turn.
pub const MAX_CONCURRENT_RENDERS: usize = 4;

/// How long a stop waits for the engine to record the stopped operation before it answers anyway: an engine stops
/// between two requests to a cluster, which take well under this.
pub const STOP_WAIT: Duration = Duration::from_secs(10);

/// How often a stop looks whether the engine has recorded it.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Why a lifecycle operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// A catalog lookup or write failed.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// An AppContext lookup or write failed.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// The DIG's state does not allow the operation.
    #[error("DeploymentIntentGroup '{dig}' is {state}: {reason}")]
    InvalidState {
        /// The DIG.
        dig: String,
        /// Its current state (or its context's status).
        state: String,
        /// What is refused and what to do.
        reason: String,
    },
    /// The DIG lacks what instantiation needs (apps, placement, a logical cloud).
    #[error("{0}")]
    Incomplete(String),
    /// A placement intent names a cluster or label that resolves to nothing.
    #[error("{0}")]
    Placement(String),
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
    /// The renderer's task ended without an answer (a bug).
    #[error("rendering stopped unexpectedly: {0}")]
    Renderer(String),
    /// The DIG or what it instantiates changed while it was being rendered.
    #[error(
        "DeploymentIntentGroup '{dig}' or its apps, profiles, intents or clusters changed while it was being instantiated; instantiate it again"
    )]
    InputsChanged {
        /// The DIG.
        dig: String,
    },
}

/// The result type of lifecycle operations.
pub type Result<T, E = LifecycleError> = std::result::Result<T, E>;

/// Drives DIG lifecycles over the catalog, AppContexts and an engine.
#[derive(Clone)]
pub struct Lifecycle {
    catalog: Catalog,
    contexts: AppContexts,
    engine: Arc<dyn Engine>,
    /// The bounds of each app's render.
    render_limits: RenderLimits,
    /// Bounds the renders running at once ([`MAX_CONCURRENT_RENDERS`]).
    renders: Arc<Semaphore>,
}

/// Everything an instantiation reads from the catalog: read once to render, and again under the write lock to
/// check that nothing changed in between.
#[derive(Debug, Clone, PartialEq)]
struct Inputs {
    dig: DeploymentIntentGroup,
    apps: Vec<AppInput>,
}

/// One app of an instantiation, as read from the catalog.
#[derive(Debug, Clone, PartialEq)]
struct AppInput {
    name: String,
    /// The chart archive.
    chart: Vec<u8>,
    /// The app profile of the DIG's composite profile for this app (name and archive).
    profile: Option<(String, Vec<u8>)>,
    /// Where placement puts it (`provider+cluster`), resolved.
    clusters: Vec<String>,
    dependencies: Vec<AppDependencySpec>,
}

/// A rendered instantiation waiting to be committed ([`Lifecycle::commit_instantiate`]).
pub struct PreparedInstance {
    inputs: Inputs,
    meta: ContextMeta,
    records: Vec<ClusterRecord>,
}

/// A stop that was recorded; [`Lifecycle::wait_stopped`] waits until the engine has carried it out.
#[derive(Debug, Clone, Copy)]
pub struct Stopping {
    /// The context whose operation is stopping.
    pub context: ContextId,
    /// The status of the operation being stopped.
    running: ContextStatus,
}

fn invalid_state(dig: &ResourcePath, state: impl std::fmt::Display, reason: &str) -> LifecycleError {
    LifecycleError::InvalidState {
        dig: dig.name().to_string(),
        state: state.to_string(),
        reason: reason.to_string(),
    }
}

fn state_name(state: Option<StateValue>) -> String {
    state.map_or_else(|| "without state".to_string(), |s| s.to_string())
}

impl Lifecycle {
    /// A lifecycle over these parts.
    pub fn new(catalog: Catalog, contexts: AppContexts, engine: Arc<dyn Engine>) -> Self {
        Self {
            catalog,
            contexts,
            engine,
            render_limits: RenderLimits::default(),
            renders: Arc::new(Semaphore::new(MAX_CONCURRENT_RENDERS)),
        }
    }

    /// The same lifecycle rendering each app within `limits`.
    #[must_use]
    pub fn with_render_limits(mut self, limits: RenderLimits) -> Self {
        self.render_limits = limits;
        self
    }

    /// The state history of a DIG (which must exist) and its revision.
    pub async fn state(&self, dig: &ResourcePath) -> Result<(StateInfo, i64)> {
        self.catalog.require(dig).await?;
        Ok(self.catalog.state(dig).await?)
    }

    async fn commit(&self, dig: &ResourcePath, revision: i64, state: &StateInfo, mut txn: Txn) -> Result<()> {
        txn.compares.push(Catalog::state_unchanged_since(dig, revision));
        txn.success.push(Catalog::state_op(dig, state));
        if !self
            .catalog
            .store()
            .txn(txn)
            .await
            .map_err(CatalogError::from)?
            .succeeded
        {
            return Err(CatalogError::Conflict(dig.display_name()).into());
        }
        Ok(())
    }

    /// Approves a DIG (Created, Terminated → Approved; Approved stays as it is).
    pub async fn approve(&self, dig: &ResourcePath) -> Result<()> {
        let (mut state, revision) = self.state(dig).await?;
        match state.current() {
            Some(StateValue::Approved) => Ok(()),
            Some(StateValue::Created | StateValue::Terminated) => {
                state.push(StateValue::Approved, None, now_timestamp());
                self.commit(dig, revision, &state, Txn::new()).await
            }
            other => Err(invalid_state(
                dig,
                state_name(other),
                "only a Created or Terminated DIG can be approved",
            )),
        }
    }

    /// What modifying a DIG or its intents does to its state: refused while instantiated; otherwise an
    /// approved or terminated DIG returns to Created. Returns the op that records it (if any).
    pub async fn modification_ops(&self, dig: &ResourcePath) -> Result<Vec<Op>> {
        let (mut state, _) = self.state(dig).await?;
        match state.current() {
            Some(StateValue::Created) | None => Ok(Vec::new()),
            Some(current @ (StateValue::Instantiated | StateValue::InstantiateStopped)) => {
                Err(invalid_state(
                    dig,
                    current,
                    "the DIG and its intents cannot be modified or deleted; terminate it first",
                ))
            }
            Some(_) => {
                state.push(StateValue::Created, None, now_timestamp());
                Ok(vec![Catalog::state_op(dig, &state)])
            }
        }
    }

    /// The ops that delete a DIG's AppContexts, after checking that termination has completed.
    pub async fn deletion_ops(&self, dig: &ResourcePath) -> Result<Vec<Op>> {
        let (state, _) = self.state(dig).await?;
        match state.current() {
            Some(current @ (StateValue::Instantiated | StateValue::InstantiateStopped)) => {
                return Err(invalid_state(
                    dig,
                    current,
                    "it must be terminated before it can be deleted",
                ));
            }
            Some(StateValue::Terminated | StateValue::TerminateStopped) => {
                if let Some(last) = state.last_context() {
                    let status = self.contexts.meta(last).await?.status;
                    if !status.is_terminate_finished() {
                        return Err(invalid_state(
                            dig,
                            format!("{} (context {last} is {status})", state_name(state.current())),
                            "it has not completed terminating; wait, or stop the termination",
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(state.contexts().into_iter().map(AppContexts::delete_op).collect())
    }

    /// Instantiates an approved (or terminated) DIG: a new AppContext, then the engine. Both halves in one call
    /// (the API calls them apart, to hold its write lock only for the second).
    pub async fn instantiate(&self, dig: &ResourcePath) -> Result<ContextId> {
        let prepared = self.prepare_instantiate(dig).await?;
        self.commit_instantiate(dig, prepared).await
    }

    /// The first half of instantiating: checks the DIG's state, reads its inputs, resolves placement and renders
    /// every app's chart (on the blocking pool). Writes nothing, so it needs no lock.
    pub async fn prepare_instantiate(&self, dig: &ResourcePath) -> Result<PreparedInstance> {
        let (state, _) = self.state(dig).await?;
        self.check_instantiable(dig, &state).await?;
        let inputs = self.read_inputs(dig).await?;
        let permit = self
            .renders
            .clone()
            .acquire_owned()
            .await
            .map_err(|err| LifecycleError::Renderer(err.to_string()))?;
        let limits = self.render_limits;
        let task_inputs = inputs.clone();
        let rendered = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            render_apps(&task_inputs, limits)
        })
        .await
        .map_err(|err| LifecycleError::Renderer(err.to_string()))??;
        let (meta, records) = build_context(dig, &inputs, rendered)?;
        Ok(PreparedInstance {
            inputs,
            meta,
            records,
        })
    }

    /// The second half of instantiating, to be called under the API's write lock: checks the state again, reads
    /// the inputs again (any change since [`Lifecycle::prepare_instantiate`] is [`LifecycleError::InputsChanged`]),
    /// then creates the AppContext with the `Instantiated` action in one transaction and tells the engine.
    pub async fn commit_instantiate(
        &self,
        dig: &ResourcePath,
        prepared: PreparedInstance,
    ) -> Result<ContextId> {
        let PreparedInstance {
            inputs,
            meta,
            records,
        } = prepared;
        let id = meta.id;
        let mut attempts = 0;
        loop {
            let (mut state, revision) = self.state(dig).await?;
            let superseded = self.check_instantiable(dig, &state).await?;
            if self.read_inputs(dig).await? != inputs {
                return Err(LifecycleError::InputsChanged {
                    dig: dig.name().to_string(),
                });
            }
            let (guard, ops) = AppContexts::create_txn_parts(&meta, &records);
            let mut txn = Txn::new().when([guard]).and_then(ops);
            let superseding = superseded.is_some();
            if let Some((mut old, old_revision)) = superseded {
                // The stopped termination the engine has not recorded yet ends here: the new context replaces it.
                old.status = ContextStatus::TerminateFailed;
                txn = txn
                    .when([AppContexts::meta_unchanged_since(old.id, old_revision)])
                    .and_then([AppContexts::meta_op(&old)]);
            }
            state.push(StateValue::Instantiated, Some(id), now_timestamp());
            match self.commit(dig, revision, &state, txn).await {
                Ok(()) => break,
                // The engine recorded the stop between our read and write (we hold the write lock, so nothing
                // else changed); read again.
                Err(LifecycleError::Catalog(CatalogError::Conflict(_))) if superseding && attempts < 3 => {
                    attempts += 1;
                }
                Err(other) => return Err(other),
            }
        }
        tracing::info!(dig = %dig.display_name(), context = %id, resources = records.iter().map(|c| c.resources.len()).sum::<usize>(), "instantiating");
        self.engine.instantiate(id);
        Ok(id)
    }

    /// Whether the DIG's state allows instantiating. Returns the previous context (and its meta revision) when
    /// its termination was stopped but the engine has not recorded it yet: the new instance supersedes it.
    async fn check_instantiable(
        &self,
        dig: &ResourcePath,
        state: &StateInfo,
    ) -> Result<Option<(ContextMeta, emco_store::Revision)>> {
        match state.current() {
            Some(StateValue::Approved | StateValue::Terminated | StateValue::TerminateStopped) => {}
            Some(StateValue::Created) => {
                return Err(invalid_state(
                    dig,
                    StateValue::Created,
                    "it must be approved before instantiating",
                ));
            }
            other => {
                return Err(invalid_state(
                    dig,
                    state_name(other),
                    "it has already been instantiated",
                ));
            }
        }
        let Some(previous) = state.last_context() else {
            return Ok(None);
        };
        let (meta, revision) = self.contexts.meta_with_revision(previous).await?;
        if meta.status.is_terminate_finished() {
            return Ok(None);
        }
        if meta.status == ContextStatus::Terminating && meta.stop_requested {
            return Ok(Some((meta, revision)));
        }
        Err(invalid_state(
            dig,
            format!(
                "{} (context {previous} is {})",
                state_name(state.current()),
                meta.status
            ),
            "the previous instance is still terminating; wait, or stop the termination",
        ))
    }

    /// Terminates an instantiated (or stopped) DIG; a running instantiation is cancelled by the engine first.
    pub async fn terminate(&self, dig: &ResourcePath) -> Result<ContextId> {
        loop {
            let (mut state, revision) = self.state(dig).await?;
            match state.current() {
                Some(StateValue::Instantiated | StateValue::InstantiateStopped) => {}
                other => return Err(invalid_state(dig, state_name(other), "it is not instantiated")),
            }
            let id = state
                .last_context()
                .ok_or_else(|| invalid_state(dig, "without context", "nothing to terminate"))?;
            let (mut meta, meta_revision) = self.contexts.meta_with_revision(id).await?;
            meta.status = ContextStatus::Terminating;
            meta.stop_requested = false;
            state.push(StateValue::Terminated, Some(id), now_timestamp());
            let txn = Txn::new()
                .when([AppContexts::meta_unchanged_since(id, meta_revision)])
                .and_then([AppContexts::meta_op(&meta)]);
            match self.commit(dig, revision, &state, txn).await {
                Ok(()) => {
                    self.engine.terminate(id);
                    return Ok(id);
                }
                // The engine moved the context on between our read and write; read again.
                Err(LifecycleError::Catalog(CatalogError::Conflict(_))) => continue,
                Err(other) => return Err(other),
            }
        }
    }

    /// Stops the running instantiation or termination of a DIG: records the stop and tells the engine; the
    /// engine ends the operation shortly after ([`Lifecycle::wait_stopped`] waits for it).
    pub async fn stop(&self, dig: &ResourcePath) -> Result<Stopping> {
        loop {
            let (mut state, revision) = self.state(dig).await?;
            let (stopped, running) = match state.current() {
                Some(StateValue::Instantiated) => {
                    (StateValue::InstantiateStopped, ContextStatus::Instantiating)
                }
                Some(StateValue::Terminated) => (StateValue::TerminateStopped, ContextStatus::Terminating),
                Some(current @ (StateValue::InstantiateStopped | StateValue::TerminateStopped)) => {
                    return Err(invalid_state(dig, current, "it is already stopped"));
                }
                other => {
                    return Err(invalid_state(
                        dig,
                        state_name(other),
                        "there is no instantiation or termination to stop",
                    ));
                }
            };
            let id = state
                .last_context()
                .ok_or_else(|| invalid_state(dig, "without context", "nothing to stop"))?;
            let (mut meta, meta_revision) = self.contexts.meta_with_revision(id).await?;
            if meta.status != running {
                return Err(invalid_state(
                    dig,
                    format!(
                        "{} (context {id} is {})",
                        state_name(state.current()),
                        meta.status
                    ),
                    "it is not instantiating or terminating",
                ));
            }
            meta.stop_requested = true;
            state.push(stopped, Some(id), now_timestamp());
            let txn = Txn::new()
                .when([AppContexts::meta_unchanged_since(id, meta_revision)])
                .and_then([AppContexts::meta_op(&meta)]);
            match self.commit(dig, revision, &state, txn).await {
                Ok(()) => {
                    self.engine.stop(id);
                    return Ok(Stopping { context: id, running });
                }
                Err(LifecycleError::Catalog(CatalogError::Conflict(_))) => continue,
                Err(other) => return Err(other),
            }
        }
    }

    /// Waits until the engine has recorded the stopped operation (its context no longer shows the running
    /// status), at most [`STOP_WAIT`]. Returns whether it did; after the wait the stop goes on in the background.
    pub async fn wait_stopped(&self, stopping: Stopping) -> bool {
        self.wait_stopped_within(stopping, STOP_WAIT).await
    }

    /// [`Lifecycle::wait_stopped`] with another bound.
    pub async fn wait_stopped_within(&self, stopping: Stopping, bound: Duration) -> bool {
        let started = Instant::now();
        loop {
            match self.contexts.meta(stopping.context).await {
                Ok(meta) if meta.status != stopping.running => return true,
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!(context = %stopping.context, error = %err, "cannot read the context being stopped");
                    return false;
                }
            }
            if started.elapsed() >= bound {
                tracing::warn!(context = %stopping.context, waited = ?bound, "the engine has not stopped the operation yet; answering anyway");
                return false;
            }
            tokio::time::sleep(STOP_POLL).await;
        }
    }

    /// Reads everything instantiating `dig_path` needs: the DIG, its composite app's apps with their charts, the
    /// app profiles of its composite profile, placement resolved to clusters, and app dependencies.
    async fn read_inputs(&self, dig_path: &ResourcePath) -> Result<Inputs> {
        let dig: DeploymentIntentGroup = self.catalog.get_as(dig_path).await?;
        let composite_app = dig_path.parent().expect("a DIG lives under a composite app");
        if !dig.spec.logical_cloud.is_empty() {
            return Err(LifecycleError::Incomplete(format!(
                "Logical Cloud '{}' not found: this emco has no logical clouds yet; leave spec.logicalCloud empty to deploy to the '{DEFAULT_NAMESPACE}' namespace",
                dig.spec.logical_cloud
            )));
        }
        let apps = self.catalog.list(Kind::App, composite_app.names()).await?;
        if apps.is_empty() {
            return Err(LifecycleError::Incomplete(format!(
                "composite app '{}' has no apps",
                composite_app.display_name()
            )));
        }
        let profile_path = composite_app.child(Kind::CompositeProfile, &[&dig.spec.composite_profile]);
        let profiles = self.catalog.list(Kind::AppProfile, profile_path.names()).await?;
        let placements = self.placements(dig_path).await?;
        let mut inputs = Vec::new();
        for app in &apps {
            let name = app.path.name().to_string();
            let failed = |message: &str| LifecycleError::Render {
                app: name.clone(),
                message: message.to_string(),
            };
            let intents = placements.get(&name).ok_or_else(|| {
                LifecycleError::Incomplete(format!(
                    "app '{name}' has no placement intent in DeploymentIntentGroup '{}'",
                    dig_path.name()
                ))
            })?;
            let clusters = self.resolve_clusters(&name, intents).await?;
            let chart = self
                .catalog
                .blob(&app.path)
                .await?
                .ok_or_else(|| failed("the app has no chart"))?;
            let profile = match profiles
                .iter()
                .find(|profile| profile.body["spec"]["app"].as_str() == Some(name.as_str()))
            {
                Some(profile) => {
                    let bytes = self
                        .catalog
                        .blob(&profile.path)
                        .await?
                        .ok_or_else(|| failed("the app profile has no file"))?;
                    Some((profile.path.name().to_string(), bytes))
                }
                None => None,
            };
            let dependencies = self
                .catalog
                .list_as::<AppDependency>(Kind::AppDependency, app.path.names())
                .await?
                .into_iter()
                .map(|(_, dependency)| dependency.spec)
                .collect();
            inputs.push(AppInput {
                name,
                chart,
                profile,
                clusters,
                dependencies,
            });
        }
        Ok(Inputs { dig, apps: inputs })
    }

    /// The app intents of every placement intent the DIG's group intents name, by app.
    async fn placements(&self, dig: &ResourcePath) -> Result<BTreeMap<String, Vec<AppIntent>>> {
        let mut by_app: BTreeMap<String, Vec<AppIntent>> = BTreeMap::new();
        let group_intents = self
            .catalog
            .list_as::<GroupIntent>(Kind::GroupIntent, dig.names())
            .await?;
        if group_intents.is_empty() {
            return Err(LifecycleError::Incomplete(format!(
                "DeploymentIntentGroup '{}' has no intents: add one naming its genericPlacementIntent",
                dig.name()
            )));
        }
        for (intent_path, intent) in group_intents {
            let Some(gpi_name) = intent.spec.intent.get(GENERIC_PLACEMENT_INTENT_KEY) else {
                continue;
            };
            let gpi = dig.child(Kind::GenericPlacementIntent, &[gpi_name]);
            if !self.catalog.exists(&gpi).await? {
                return Err(LifecycleError::Incomplete(format!(
                    "intent '{}' names generic placement intent '{gpi_name}', which does not exist",
                    intent_path.name()
                )));
            }
            for (_, app_intent) in self
                .catalog
                .list_as::<AppIntent>(Kind::AppIntent, gpi.names())
                .await?
            {
                by_app
                    .entry(app_intent.spec.app.clone())
                    .or_default()
                    .push(app_intent);
            }
        }
        Ok(by_app)
    }

    /// Every cluster an app's intents place it on (`provider+cluster`), mandatory and optional groups alike,
    /// in intent order without repeats; labels are resolved now.
    async fn resolve_clusters(&self, app: &str, intents: &[AppIntent]) -> Result<Vec<String>> {
        let mut clusters: Vec<String> = Vec::new();
        for intent in intents {
            let items = intent.spec.intent.all_of.iter().chain(&intent.spec.intent.any_of);
            for item in items {
                let nested: Vec<&PlacementItem> = if item.any_of.is_empty() {
                    vec![item]
                } else {
                    item.any_of.iter().collect()
                };
                for item in nested {
                    for cluster in self.resolve_item(app, &intent.metadata.name, item).await? {
                        if !clusters.contains(&cluster) {
                            clusters.push(cluster);
                        }
                    }
                }
            }
        }
        Ok(clusters)
    }

    async fn resolve_item(&self, app: &str, intent: &str, item: &PlacementItem) -> Result<Vec<String>> {
        let provider = &item.cluster_provider;
        if !item.cluster.is_empty() {
            let path = ResourcePath::new(Kind::Cluster, vec![provider.clone(), item.cluster.clone()]);
            if !self.catalog.exists(&path).await? {
                return Err(LifecycleError::Placement(format!(
                    "app intent '{intent}' of app '{app}' places it on cluster '{provider}+{}', which does not exist",
                    item.cluster
                )));
            }
            return Ok(vec![format!("{provider}+{}", item.cluster)]);
        }
        let mut matching = Vec::new();
        for cluster in self
            .catalog
            .list(Kind::Cluster, std::slice::from_ref(provider))
            .await?
        {
            let label = cluster.path.child(Kind::ClusterLabel, &[&item.cluster_label]);
            if self.catalog.exists(&label).await? {
                matching.push(format!("{provider}+{}", cluster.path.name()));
            }
        }
        if matching.is_empty() {
            return Err(LifecycleError::Placement(format!(
                "app intent '{intent}' of app '{app}' selects clusters of provider '{provider}' labelled '{}', and none has that label",
                item.cluster_label
            )));
        }
        Ok(matching)
    }
}

/// Renders every app of `inputs` in app order, each within `limits`: its resources in apply order, by app. Runs on
/// the blocking pool (each render on a thread of its own with a large stack).
fn render_apps(inputs: &Inputs, limits: RenderLimits) -> Result<Vec<Vec<ResourceRecord>>> {
    let release = Release {
        name: inputs.dig.spec.version.clone(),
        namespace: DEFAULT_NAMESPACE.to_string(),
    };
    inputs
        .apps
        .iter()
        .map(|app| render_app(app, &inputs.dig, &release, limits))
        .collect()
}

fn render_app(
    app: &AppInput,
    dig: &DeploymentIntentGroup,
    release: &Release,
    limits: RenderLimits,
) -> Result<Vec<ResourceRecord>> {
    let name = app.name.clone();
    let failed = |message: String| LifecycleError::Render {
        app: name.clone(),
        message,
    };
    let chart = emco_helm::load_archive(&app.chart).map_err(|err| failed(format!("chart: {err}")))?;
    // The user's values (profile, then overrides), coalesced over the chart's defaults by the renderer.
    let mut values = serde_json::Value::Object(Default::default());
    if let Some((profile, bytes)) = &app.profile {
        let overrides = emco_helm::read_app_profile(bytes)
            .map_err(|err| failed(format!("app profile '{profile}': {err}")))?;
        emco_helm::merge_values(&mut values, &overrides.values);
    }
    for entry in dig.spec.override_values.iter().filter(|entry| entry.app == name) {
        for (key, value) in &entry.values {
            emco_helm::apply_set(&mut values, key, value).map_err(|err| failed(err.to_string()))?;
        }
    }
    let manifests = render_chart_within(&chart, &values, release, limits).map_err(|err| match err {
        // Values the chart's values.schema.json refuses: the values are wrong, not the chart.
        emco_helm::RenderError::Chart(emco_helm::ChartError::Schema(message)) => LifecycleError::Values {
            app: name.clone(),
            message: message.trim_end().to_string(),
        },
        emco_helm::RenderError::Limit(hit) => LifecycleError::RenderLimit {
            app: name.clone(),
            message: hit.to_string(),
        },
        other => failed(other.to_string()),
    })?;
    if manifests.is_empty() {
        return Err(failed("the chart renders no Kubernetes objects".into()));
    }
    resources_of(manifests).map_err(failed)
}

/// The AppContext of a rendered instantiation: a new id, the apps in order with their dependencies and clusters,
/// and one record per (app, cluster). Refuses app dependencies that form a cycle.
fn build_context(
    dig_path: &ResourcePath,
    inputs: &Inputs,
    rendered: Vec<Vec<ResourceRecord>>,
) -> Result<(ContextMeta, Vec<ClusterRecord>)> {
    let dig = &inputs.dig;
    let id = AppContexts::new_id();
    let mut app_metas = Vec::new();
    let mut records = Vec::new();
    for (app, resources) in inputs.apps.iter().zip(rendered) {
        for cluster in &app.clusters {
            records.push(ClusterRecord::pending(&app.name, cluster, resources.clone()));
        }
        app_metas.push(AppMeta {
            name: app.name.clone(),
            dependencies: app.dependencies.clone(),
            clusters: app.clusters.clone(),
        });
    }
    let graph = app_metas
        .iter()
        .map(|app| (app.name.as_str(), app.dependencies.as_slice()));
    if let Some(cycle) = dependency_cycle(graph) {
        return Err(LifecycleError::DependencyCycle { cycle });
    }
    let meta = ContextMeta {
        id,
        project: dig_path.names()[0].clone(),
        composite_app: dig_path.names()[1].clone(),
        composite_app_version: dig_path.names()[2].clone(),
        composite_profile: dig.spec.composite_profile.clone(),
        deployment_intent_group: dig_path.name().to_string(),
        release: dig.spec.version.clone(),
        namespace: DEFAULT_NAMESPACE.to_string(),
        logical_cloud: String::new(),
        owner: Default::default(),
        credentials: None,
        apps: app_metas,
        status: ContextStatus::Instantiating,
        stop_requested: false,
        created: now_timestamp(),
    };
    Ok((meta, records))
}

/// The resources of an app in apply order, each with its role: the chart's CRDs (its `crds/` folder and rendered
/// CustomResourceDefinitions), the ordinary resources in install order, then the hooks in Helm's order (weight,
/// name, kind). `test` hooks are left out (EMCO never runs them); an object naming a hook event Helm does not know
/// is skipped, as Helm skips it.
fn resources_of(manifests: Vec<Manifest>) -> std::result::Result<Vec<ResourceRecord>, String> {
    let mut crds = Vec::new();
    let mut main = Vec::new();
    let mut hooks = Vec::new();
    for manifest in manifests {
        let resource = ResourceRecord::pending(
            &manifest.name,
            &manifest.kind,
            &manifest.api_version,
            manifest.object,
        );
        if manifest.from_crds {
            crds.push(resource.with_role(ResourceRole::Crd));
            continue;
        }
        match emco_helm::hooks::hook_of(&resource.manifest) {
            Ok(Some(hook)) if hook.is_test() => {}
            Ok(Some(hook)) => hooks.push(resource.with_role(ResourceRole::Hook(hook))),
            Ok(None) if resource.kind == "CustomResourceDefinition" => {
                crds.push(resource.with_role(ResourceRole::Crd))
            }
            Ok(None) => main.push(resource),
            Err(err @ emco_helm::hooks::HookError::UnknownEvent { .. }) => {
                tracing::warn!(object = %resource.key(), source = manifest.source, error = %err, "skipping an object with an unknown hook, as Helm does");
            }
            Err(err) => return Err(format!("{}: {}: {err}", manifest.source, resource.key())),
        }
    }
    emco_helm::hooks::order_hooks(&mut hooks, |resource| {
        let weight = resource.role.hook().map_or(0, |hook| hook.weight);
        (weight, resource.name.as_str())
    });
    crds.append(&mut main);
    crds.append(&mut hooks);
    Ok(crds)
}

#[cfg(test)]
mod hook_tests {
    use serde_json::json;

    use super::*;

    fn manifest(source: &str, kind: &str, name: &str, annotations: serde_json::Value) -> Manifest {
        Manifest {
            source: source.into(),
            api_version: "v1".into(),
            kind: kind.into(),
            name: name.into(),
            object: json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "annotations": annotations}}),
            from_crds: source.starts_with("crds/"),
        }
    }

    #[test]
    fn resources_carry_roles_in_apply_order_without_test_hooks() {
        let resources = resources_of(vec![
            manifest(
                "templates/a.yaml",
                "ConfigMap",
                "late",
                json!({"helm.sh/hook": "post-install", "helm.sh/hook-weight": "1"}),
            ),
            manifest("templates/a.yaml", "ConfigMap", "cm", json!({})),
            manifest(
                "templates/crd.yaml",
                "CustomResourceDefinition",
                "w.example.com",
                json!({}),
            ),
            manifest(
                "templates/t.yaml",
                "Pod",
                "smoke",
                json!({"helm.sh/hook": "test-success"}),
            ),
            manifest(
                "templates/j.yaml",
                "Job",
                "early",
                json!({"helm.sh/hook": "pre-install,post-delete", "helm.sh/hook-weight": "-1"}),
            ),
            manifest(
                "templates/u.yaml",
                "Job",
                "odd",
                json!({"helm.sh/hook": "crd-install"}),
            ),
            manifest(
                "crds/g.yaml",
                "CustomResourceDefinition",
                "g.example.com",
                json!({"helm.sh/hook": "pre-install"}),
            ),
        ])
        .unwrap();
        let keys: Vec<_> = resources
            .iter()
            .map(|r| {
                let role = match &r.role {
                    ResourceRole::Main => "main".to_string(),
                    ResourceRole::Crd => "crd".to_string(),
                    ResourceRole::Hook(hook) => format!("hook{}", hook.weight),
                    ResourceRole::Certificate => "certificate".to_string(),
                };
                (r.name.as_str(), role)
            })
            .collect();
        assert_eq!(
            keys,
            [
                ("w.example.com", "crd".to_string()),
                ("g.example.com", "crd".to_string()),
                ("cm", "main".to_string()),
                ("early", "hook-1".to_string()),
                ("late", "hook1".to_string()),
            ]
        );
        let bad = resources_of(vec![manifest(
            "templates/b.yaml",
            "Job",
            "b",
            json!({"helm.sh/hook": 7}),
        )]);
        assert!(bad.unwrap_err().contains("templates/b.yaml"));
    }
}
