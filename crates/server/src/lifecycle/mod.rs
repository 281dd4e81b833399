//! The one lifecycle engine (seeds 000/001; DESIGN §6) of every resource with a lifecycle: deployment intent
//! groups, cluster network intents (ncm) and logical clouds (dcm). Each is a [`Subject`], described to the engine
//! by its table in `emco_model::lifecycle` (which operation runs from which state, what it appends to
//! `state.Actions`) and by how its AppContext is built from the catalog (`dig.rs`, `networks.rs`,
//! `logical_cloud.rs`). Everything else is the same code for all three: approve, instantiate (`/apply` for network
//! intents), terminate and stop; the guards on modifying and deleting; contexts created in the same store
//! transaction as the action that records them, and only then the engine told (so the engine can resume from the
//! store after a restart).
//!
//! Instantiation has two halves, so that slow work never holds up other writes: [`Lifecycle::prepare_instantiate`]
//! reads the subject's inputs and builds its context (a DIG renders its charts on the blocking pool, at most
//! [`MAX_CONCURRENT_RENDERS`] at once, each app within its [`RenderLimits`]) holding nothing up;
//! [`Lifecycle::commit_instantiate`] stages the context's records (in pages when large), checks the state again,
//! reads the inputs again and refuses (409 `Conflict`) if any changed meanwhile, then writes the meta and the
//! action in one transaction guarded by the state's revision and the request's read set
//! (`emco_appcontext::read_set`). Two instantiations racing, on one replica or two, therefore create exactly one
//! context; the API runs the loser again, which then finds the state moved on.
//!
//! Stop returns once the engine has recorded the stopped operation ([`Lifecycle::wait_stopped`], bounded by
//! [`STOP_WAIT`]); an instantiation after a stopped termination supersedes it even if the engine has not recorded
//! it yet (the old context is marked `TerminateFailed` in the same transaction that creates the new one).
//!
//! Updates (`/update` of a logical cloud or a DIG, a DIG's `/rollback`) create a context whose meta `supersedes`
//! the current one, which goes `Updating` in the same transaction; the engine applies only what differs and
//! then hands over (the old context deletes what only it holds and ends `Updated`). A DIG records an update as
//! EMCO's orchestrator does, `Updated` (old context) then `Instantiated` (new context), its revision counting up
//! (`emco_model::lifecycle::revisions`); a rollback is an update whose context is a copy of an earlier
//! revision's. A change to an instantiated DIG (or its intents) is allowed and recorded as pending
//! (`StateInfo::modified`) until the next action; deleting its parts waits for its termination.
//!
//! A DIG's context passes through the controllers its intents name (`controllers.rs`; built in: `gac.rs`,
//! `ovnaction.rs`) after
//! its charts render and before it is committed: they add, patch or remove objects per app and cluster.
//!
//! Files: this one holds the engine's operations and guards; `subject.rs` the subjects, `error.rs` the errors,
//! `build.rs` the building of a context (and a DIG's preview) from the inputs the builders read.
//!
//! No HTTP here: errors are [`LifecycleError`]s, which the API maps to status codes.

mod build;
mod controllers;
mod dig;
mod dtc;
mod error;
pub(crate) mod gac;
mod hpa;
mod logical_cloud;
mod merge_patch;
mod networks;
mod outbound;
mod ovnaction;
pub mod patch_values;
mod subject;
pub(crate) mod webhooks;

use std::sync::Arc;
use std::time::{Duration, Instant};

use emco_appcontext::{
    AppContexts, Catalog, CatalogError, ClusterRecord, ContextMeta, Engine, ResourcePath, ResourceRecord,
};
use emco_helm::RenderLimits;
use emco_model::lifecycle::{Operation, Outcome, UpdateRecord, revision_context, revisions};
use emco_model::{ContextId, ContextStatus, StateInfo, StateValue, now_timestamp};
use emco_store::{Op, Txn};
use tokio::sync::Semaphore;

pub use build::{Preview, PreviewCell, PreviewResource};
pub use dig::DEFAULT_NAMESPACE;
pub use error::{LifecycleError, Result};
pub use logical_cloud::{LOGICAL_CLOUD_APP, user_kubeconfig};
pub use networks::NETWORK_INTENTS_APP;
pub use subject::Subject;

/// At most this many instantiations build at once (a DIG holds its charts, values and up to
/// [`RenderLimits::max_output_bytes`] of output per app in memory); the others wait their turn.
pub const MAX_CONCURRENT_RENDERS: usize = 4;

/// How long a stop waits for the engine to record the stopped operation before it answers anyway: an engine stops
/// between two requests to a cluster, which take well under this.
pub const STOP_WAIT: Duration = Duration::from_secs(10);

/// How many times terminate and stop read again when the engine (or another request) changed what they read
/// before they wrote; then the conflict goes to the caller (the API runs the request again on fresh reads).
const INNER_ATTEMPTS: usize = 5;

/// How long instantiating waits for the target clusters to say their Kubernetes version and API versions when a
/// chart reads `.Capabilities` (clusters asked recently answer from what they said then); a cluster that has not
/// answered by then gets the chart as Helm renders it by default.
pub const CAPABILITIES_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How often a stop looks whether the engine has recorded it.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Everything an instantiation reads from the catalog: read once to build the context, and again under the write
/// lock to check that nothing changed in between.
#[derive(Debug, Clone, PartialEq)]
enum Inputs {
    DeploymentIntentGroup(dig::Inputs),
    ClusterNetworks(networks::Inputs),
    LogicalCloud(logical_cloud::Inputs),
}

/// A context built from [`Inputs`]: its meta, one record per (app, cluster), and ops that must commit with it
/// (a logical cloud's new user key).
struct Built {
    meta: ContextMeta,
    records: Vec<ClusterRecord>,
    extra: Vec<Op>,
}

/// An instantiation or update waiting to be committed ([`Lifecycle::commit_prepared`]).
pub struct PreparedInstance {
    operation: Operation,
    prepared: Prepared,
}

enum Prepared {
    /// The table says there is nothing to do (an `/apply` of applied network intents).
    Unchanged,
    /// The inputs read and the context built from them.
    Build(Box<(Inputs, Built)>),
    /// A rollback: a copy of the context of an earlier revision (`revision`), taking over from `current`.
    Copy {
        built: Box<Built>,
        current: ContextId,
        revision: u64,
    },
}

/// A stop that was recorded; [`Lifecycle::wait_stopped`] waits until the engine has carried it out.
#[derive(Debug, Clone, Copy)]
pub struct Stopping {
    /// The context whose operation is stopping.
    pub context: ContextId,
    /// The status of the operation being stopped.
    running: ContextStatus,
}

fn state_name(state: Option<StateValue>) -> String {
    state.map_or_else(|| "without state".to_string(), |s| s.to_string())
}

/// Drives the lifecycles of every [`Subject`] over the catalog, AppContexts and an engine.
#[derive(Clone)]
pub struct Lifecycle {
    catalog: Catalog,
    contexts: AppContexts,
    engine: Arc<dyn Engine>,
    /// The bounds of each app's render.
    render_limits: RenderLimits,
    /// Where gac patch values may be fetched from.
    patch_value_sources: patch_values::PatchValueSources,
    /// Where webhook controllers may be called, and the bounds of a call.
    webhook_targets: webhooks::WebhookTargets,
    /// Bounds the builds running at once ([`MAX_CONCURRENT_RENDERS`]).
    renders: Arc<Semaphore>,
}

impl Lifecycle {
    /// A lifecycle over these parts.
    pub fn new(catalog: Catalog, contexts: AppContexts, engine: Arc<dyn Engine>) -> Self {
        Self {
            catalog,
            contexts,
            engine,
            render_limits: RenderLimits::default(),
            patch_value_sources: patch_values::PatchValueSources::default(),
            webhook_targets: webhooks::WebhookTargets::default(),
            renders: Arc::new(Semaphore::new(MAX_CONCURRENT_RENDERS)),
        }
    }

    /// The same lifecycle rendering each app within `limits`.
    #[must_use]
    pub fn with_render_limits(mut self, limits: RenderLimits) -> Self {
        self.render_limits = limits;
        self
    }

    /// The same lifecycle fetching gac patch values from `sources` only.
    #[must_use]
    pub fn with_patch_value_sources(mut self, sources: patch_values::PatchValueSources) -> Self {
        self.patch_value_sources = sources;
        self
    }

    /// The same lifecycle calling webhook controllers within `targets` only.
    #[must_use]
    pub fn with_webhook_targets(mut self, targets: webhooks::WebhookTargets) -> Self {
        self.webhook_targets = targets;
        self
    }

    fn subject(path: &ResourcePath) -> Subject {
        Subject::of(path.kind()).expect("lifecycle operations are routed only for resources with a lifecycle")
    }

    fn refused(path: &ResourcePath, state: impl std::fmt::Display, reason: &str) -> LifecycleError {
        let subject = Self::subject(path);
        LifecycleError::InvalidState {
            subject: subject.table().subject,
            name: subject.display(path),
            state: state.to_string(),
            reason: reason.to_string(),
        }
    }

    /// The state history of a resource with a lifecycle (which must exist) and its revision.
    pub async fn state(&self, path: &ResourcePath) -> Result<(StateInfo, i64)> {
        self.catalog.require(path).await?;
        Ok(self.catalog.state(path).await?)
    }

    /// What the table says `operation` does now; a refusal is an error naming the state.
    fn outcome(path: &ResourcePath, state: &StateInfo, operation: Operation) -> Result<Outcome> {
        match Self::subject(path).table().outcome(operation, state.current()) {
            Outcome::Refused(reason) => Err(Self::refused(path, state_name(state.current()), reason)),
            other => Ok(other),
        }
    }

    async fn commit(
        &self,
        path: &ResourcePath,
        revision: i64,
        state: &StateInfo,
        mut txn: Txn,
    ) -> Result<()> {
        txn.compares.push(Catalog::state_unchanged_since(path, revision));
        txn.success.push(Catalog::state_op(path, state));
        // Also guarded by everything the request read (the intents it checked, the contexts it looked at).
        if !self
            .catalog
            .store()
            .txn(emco_appcontext::read_set::guard(txn))
            .await
            .map_err(CatalogError::from)?
            .succeeded
        {
            return Err(CatalogError::Conflict(path.display_name()).into());
        }
        Ok(())
    }

    /// The history a new resource with a lifecycle starts with.
    #[must_use]
    pub fn created_op(path: &ResourcePath) -> Op {
        Catalog::state_op(path, &StateInfo::created(now_timestamp()))
    }

    /// Approves a DIG (Created, Terminated → Approved; Approved stays as it is).
    pub async fn approve(&self, path: &ResourcePath) -> Result<()> {
        let (mut state, revision) = self.state(path).await?;
        match Self::outcome(path, &state, Operation::Approve)? {
            Outcome::Enter(next) => {
                state.push(next, None, now_timestamp());
                self.commit(path, revision, &state, Txn::new()).await
            }
            _ => Ok(()),
        }
    }

    /// What modifying the resource with a lifecycle at `path` (or, with `part`, something it is built from) does
    /// to its state: refused while instantiated; a DIG that was approved or terminated returns to Created. Returns the
    /// op that records it (if any).
    pub async fn modification_ops(&self, path: &ResourcePath, part: bool) -> Result<Vec<Op>> {
        let (mut state, _) = self.state(path).await?;
        let operation = if part {
            Operation::ModifyPart
        } else {
            Operation::Modify
        };
        self.change_ops(path, &mut state, operation)
    }

    /// What writing a controller's part of the DIG at `path` (a gac intent, resource or customization) does to
    /// its state: as [`Lifecycle::modification_ops`] for a part, except that an approved DIG stays approved —
    /// EMCO's controllers keep their intents apart from the DIG's state, and EMCO's examples add them after
    /// approving.
    pub async fn controller_part_ops(&self, path: &ResourcePath) -> Result<Vec<Op>> {
        let (mut state, _) = self.state(path).await?;
        if state.current() == Some(StateValue::Approved) {
            return Ok(Vec::new());
        }
        self.change_ops(path, &mut state, Operation::ModifyPart)
    }

    /// What deleting something the resource at `path` is built from (a DIG's intents, a logical cloud's
    /// references, …) does to its state: as [`Lifecycle::modification_ops`], except that an instantiated DIG
    /// keeps its intents until it is terminated.
    pub async fn part_deletion_ops(&self, path: &ResourcePath) -> Result<Vec<Op>> {
        let (mut state, _) = self.state(path).await?;
        self.change_ops(path, &mut state, Operation::DeletePart)
    }

    fn change_ops(
        &self,
        path: &ResourcePath,
        state: &mut StateInfo,
        operation: Operation,
    ) -> Result<Vec<Op>> {
        match Self::outcome(path, state, operation)? {
            Outcome::Enter(next) if state.current() != Some(next) => {
                state.push(next, None, now_timestamp());
                Ok(vec![Catalog::state_op(path, state)])
            }
            _ if Self::subject(path)
                .table()
                .modification_is_pending_update(state.current()) =>
            {
                // Applied by the next /update; the state object shows it is pending.
                state.mark_modified(now_timestamp());
                Ok(vec![Catalog::state_op(path, state)])
            }
            _ => Ok(Vec::new()),
        }
    }

    /// The revision of the resource's last action (a DIG's revisions count up with every update; see
    /// `emco_model::lifecycle::revisions`).
    pub async fn revision(&self, path: &ResourcePath) -> Result<u64> {
        let (state, _) = self.state(path).await?;
        Ok(revisions(&state.actions).last().copied().unwrap_or(0))
    }

    /// The ops that delete a resource's AppContexts, after checking that its state allows deleting and that its
    /// last termination has completed.
    pub async fn deletion_ops(&self, path: &ResourcePath) -> Result<Vec<Op>> {
        let (state, _) = self.state(path).await?;
        Self::outcome(path, &state, Operation::Delete)?;
        if matches!(
            state.current(),
            Some(StateValue::Terminated | StateValue::TerminateStopped)
        ) && let Some(last) = state.last_context()
        {
            let status = self.contexts.meta(last).await?.status;
            if !status.is_terminate_finished() {
                return Err(Self::refused(
                    path,
                    format!("{} (context {last} is {status})", state_name(state.current())),
                    "it has not completed terminating; wait, or stop the termination",
                ));
            }
        }
        Ok(state.contexts().into_iter().map(AppContexts::delete_op).collect())
    }

    /// Instantiates (applies) a resource: a new AppContext, then the engine. Both halves in one call (the API
    /// calls them apart, inside its optimistic retry). Returns the new context, or the current
    /// one when the table says there is nothing to do.
    pub async fn instantiate(&self, path: &ResourcePath) -> Result<ContextId> {
        let prepared = self.prepare_instantiate(path).await?;
        self.commit_instantiate(path, prepared).await
    }

    /// The first half of instantiating: checks the state, reads the inputs and builds the context (rendering on
    /// the blocking pool). Writes nothing, so it needs no lock.
    pub async fn prepare_instantiate(&self, path: &ResourcePath) -> Result<PreparedInstance> {
        self.prepare(path, Operation::Instantiate).await
    }

    /// The first half of updating (`/update`, logical clouds): as [`Lifecycle::prepare_instantiate`], for a new
    /// context that takes over from the current one, which must have finished instantiating.
    pub async fn prepare_update(&self, path: &ResourcePath) -> Result<PreparedInstance> {
        self.prepare(path, Operation::Update).await
    }

    /// The first half of a DIG's `/rollback` to `revision`: checks the state as an update does, finds the context
    /// of that revision (404 [`LifecycleError::UnknownRevision`] if the current instantiation has none) and
    /// copies its content into a new context, every resource pending. Reads and writes nothing else.
    pub async fn prepare_rollback(&self, path: &ResourcePath, revision: u64) -> Result<PreparedInstance> {
        let (state, _) = self.state(path).await?;
        let current = self.check_updatable(path, &state).await?;
        let subject = Self::subject(path);
        let target =
            revision_context(&state.actions, revision).ok_or_else(|| LifecycleError::UnknownRevision {
                subject: subject.table().subject,
                name: subject.display(path),
                revision,
                latest: revisions(&state.actions).iter().copied().max().unwrap_or(0),
            })?;
        let mut meta = self.contexts.meta(target).await?;
        let records = self
            .contexts
            .clusters(target)
            .await?
            .into_iter()
            .map(|record| {
                let resources = record
                    .resources
                    .into_iter()
                    .map(|resource| {
                        ResourceRecord::pending(
                            &resource.name,
                            &resource.kind,
                            &resource.api_version,
                            resource.manifest,
                        )
                        .with_role(resource.role)
                    })
                    .collect();
                ClusterRecord::pending(&record.app, &record.cluster, resources)
            })
            .collect();
        meta.id = AppContexts::new_id();
        meta.supersedes = None;
        meta.lineage = None;
        meta.status = ContextStatus::Instantiating;
        meta.stop_requested = false;
        meta.created = now_timestamp();
        // The rollback reaches the clusters as the DIG's rollout says now.
        let dig: emco_model::DeploymentIntentGroup = self.catalog.get_as(path).await?;
        meta.plan_rollout(dig.spec.rollout.as_ref());
        Ok(PreparedInstance {
            operation: Operation::Update,
            prepared: Prepared::Copy {
                built: Box::new(Built {
                    meta,
                    records,
                    extra: Vec::new(),
                }),
                current,
                revision,
            },
        })
    }

    /// Updates a resource: both halves in one call.
    pub async fn update(&self, path: &ResourcePath) -> Result<ContextId> {
        let prepared = self.prepare_update(path).await?;
        self.commit_prepared(path, prepared).await
    }

    async fn prepare(&self, path: &ResourcePath, operation: Operation) -> Result<PreparedInstance> {
        let (state, _) = self.state(path).await?;
        let unchanged = PreparedInstance {
            operation,
            prepared: Prepared::Unchanged,
        };
        match operation {
            Operation::Update => {
                self.check_updatable(path, &state).await?;
            }
            _ => {
                if self.check_instantiable(path, &state).await?.is_none() {
                    return Ok(unchanged);
                }
            }
        }
        let inputs = self.read_inputs(path, operation).await?;
        if operation == Operation::Update && Self::subject(path) == Subject::LogicalCloud {
            let Inputs::LogicalCloud(lc_inputs) = &inputs else {
                unreachable!("a logical cloud's inputs")
            };
            logical_cloud::check_update(&self.catalog, &self.contexts, path, lc_inputs).await?;
        }
        let built = self.build(path, &inputs).await?;
        Ok(PreparedInstance {
            operation,
            prepared: Prepared::Build(Box::new((inputs, built))),
        })
    }

    /// The second half of instantiating: stages the context's records, checks the state again, reads
    /// the inputs again (any change since [`Lifecycle::prepare_instantiate`] is
    /// [`LifecycleError::InputsChanged`]), then creates the AppContext with the instantiated action in one
    /// transaction and tells the engine.
    pub async fn commit_instantiate(
        &self,
        path: &ResourcePath,
        prepared: PreparedInstance,
    ) -> Result<ContextId> {
        self.commit_prepared(path, prepared).await
    }

    /// The second half of an instantiation or update prepared by [`Lifecycle::prepare_instantiate`] or
    /// [`Lifecycle::prepare_update`].
    pub async fn commit_prepared(
        &self,
        path: &ResourcePath,
        prepared: PreparedInstance,
    ) -> Result<ContextId> {
        let operation = prepared.operation;
        let mut note = None;
        // The inputs to check again (none for a rollback's copy, which must still take over from the context it
        // was prepared against).
        let (inputs, expected_current, built) = match prepared.prepared {
            Prepared::Unchanged => {
                let (state, _) = self.state(path).await?;
                return state
                    .last_context()
                    .ok_or_else(|| Self::refused(path, state_name(state.current()), "nothing to apply"));
            }
            Prepared::Build(prepared) => {
                let (inputs, built) = *prepared;
                (Some(inputs), None, built)
            }
            Prepared::Copy {
                built,
                current,
                revision,
            } => {
                tracing::info!(name = %path.display_name(), revision, "rolling back");
                note = Some(format!("rollback to revision {revision}"));
                (None, Some(current), *built)
            }
        };
        let Built {
            mut meta,
            records,
            extra,
        } = built;
        let subject = Self::subject(path);
        let id = meta.id;
        // The records go ahead in pages when they are many; the meta, last, makes the context exist. When this
        // call ends without writing it, the pages are removed again.
        let staged = self.contexts.stage(&meta, &records).await?;
        let mut unfinished = UnfinishedContext {
            contexts: staged.is_paged().then(|| self.contexts.clone()),
            id,
        };
        let mut attempts = 0;
        loop {
            let (mut state, revision) = self.state(path).await?;
            let mut taken_over = None;
            let (superseded, entered) = if operation == Operation::Update {
                let current = self.check_updatable(path, &state).await?;
                if expected_current.is_some_and(|expected| expected != current) {
                    return Err(LifecycleError::InputsChanged {
                        subject: subject.table().subject,
                        name: subject.display(path),
                    });
                }
                taken_over = Some(self.take_over(current, &mut meta).await?);
                let Outcome::Enter(entered) = Self::outcome(path, &state, Operation::Update)? else {
                    return Err(Self::refused(
                        path,
                        state_name(state.current()),
                        "nothing to update",
                    ));
                };
                (None, entered)
            } else {
                let Some(superseded) = self.check_instantiable(path, &state).await? else {
                    // Instantiated by someone else meanwhile (an /apply that is a no-op now).
                    return state
                        .last_context()
                        .ok_or_else(|| Self::refused(path, state_name(state.current()), "nothing to apply"));
                };
                (superseded, subject.table().instantiated)
            };
            if let Some(inputs) = &inputs
                && self.read_inputs(path, operation).await? != *inputs
            {
                return Err(LifecycleError::InputsChanged {
                    subject: subject.table().subject,
                    name: subject.display(path),
                });
            }
            let (guards, ops) = staged.create_parts(&meta);
            let mut txn = Txn::new().when(guards).and_then(ops).and_then(extra.clone());
            let superseding = superseded.is_some();
            if let Some((mut old, old_revision)) = superseded {
                // The stopped termination the engine has not recorded yet ends here: the new context replaces it.
                old.status = ContextStatus::TerminateFailed;
                txn = txn
                    .when([AppContexts::meta_unchanged_since(old.id, old_revision)])
                    .and_then([AppContexts::meta_op(&old)]);
            }
            if let Some((current, guard, mark)) = taken_over {
                txn = txn.when([guard]).and_then([mark]);
                if subject.table().update_record == UpdateRecord::Handover {
                    state.push_noted(StateValue::Updated, Some(current), now_timestamp(), note.clone());
                }
            }
            state.push_noted(entered, Some(id), now_timestamp(), note.clone());
            match self.commit(path, revision, &state, txn).await {
                Ok(()) => break,
                // The engine recorded the stop between our read and write (or another change won); read again.
                // Past these attempts the API runs the whole request again.
                Err(LifecycleError::Catalog(CatalogError::Conflict(_))) if superseding && attempts < 3 => {
                    attempts += 1;
                }
                Err(other) => return Err(other),
            }
        }
        unfinished.contexts = None;
        tracing::info!(subject = subject.table().subject, name = %subject.display(path), context = %id, operation = operation.verb(), resources = records.iter().map(|c| c.resources.len()).sum::<usize>(), "instantiating");
        self.engine.instantiate(id);
        Ok(id)
    }

    /// Makes the new context `meta` take over from context `current` (an update, rollback or migration): it
    /// supersedes it and joins its lineage. Returns `current`, the guard on its meta and the write that marks it
    /// `Updating` until the engine has handed over.
    async fn take_over(
        &self,
        current: ContextId,
        meta: &mut ContextMeta,
    ) -> Result<(ContextId, emco_store::Compare, emco_store::Op)> {
        let (mut old, old_revision) = self.contexts.meta_with_revision(current).await?;
        meta.supersedes = Some(current);
        meta.lineage = old.lineage_for_successor();
        old.status = ContextStatus::Updating;
        Ok((
            current,
            AppContexts::meta_unchanged_since(current, old_revision),
            AppContexts::meta_op(&old),
        ))
    }

    /// Migrates an instantiated DIG (`source`) to another DIG of its project (`target`, of the same composite app
    /// at another version, or another DIG of it), which must be Approved: the target's new context takes over
    /// from the source's current one as an update does (objects of the same identity are patched in place, the
    /// others created, those only the source holds deleted once the target is instantiated). The source records
    /// `Updated`, the target `Instantiated`, both noting the migration, in one transaction. Returns the new
    /// context.
    pub async fn migrate(&self, source: &ResourcePath, target: &ResourcePath) -> Result<ContextId> {
        if source == target {
            return Err(LifecycleError::Invalid(format!(
                "DeploymentIntentGroup '{}' cannot migrate to itself",
                source.name()
            )));
        }
        let (target_state, _) = self.state(target).await?;
        Self::check_migration_target(target, &target_state)?;
        let (source_state, _) = self.state(source).await?;
        let current = self.check_updatable(source, &source_state).await?;
        let Prepared::Build(prepared) = self.prepare(target, Operation::Instantiate).await?.prepared else {
            return Err(Self::refused(target, "Approved", "nothing to instantiate"));
        };
        let (inputs, built) = *prepared;
        let Built {
            mut meta,
            records,
            extra,
        } = built;
        let id = meta.id;
        let staged = self.contexts.stage(&meta, &records).await?;
        let mut unfinished = UnfinishedContext {
            contexts: staged.is_paged().then(|| self.contexts.clone()),
            id,
        };
        let names = |path: &ResourcePath| format!("{}/{}", path.names()[2], path.name());
        let mut attempts = 0;
        loop {
            attempts += 1;
            let (mut source_state, source_revision) = self.state(source).await?;
            let (mut target_state, target_revision) = self.state(target).await?;
            Self::check_migration_target(target, &target_state)?;
            if self.check_updatable(source, &source_state).await? != current
                || self.read_inputs(target, Operation::Instantiate).await? != inputs
            {
                return Err(LifecycleError::InputsChanged {
                    subject: Subject::DeploymentIntentGroup.table().subject,
                    name: Subject::DeploymentIntentGroup.display(target),
                });
            }
            let (_, guard, mark) = self.take_over(current, &mut meta).await?;
            let (guards, ops) = staged.create_parts(&meta);
            let now = now_timestamp();
            source_state.push_noted(
                StateValue::Updated,
                Some(current),
                now.clone(),
                Some(format!("migrated to {}", names(target))),
            );
            target_state.push_noted(
                StateValue::Instantiated,
                Some(id),
                now,
                Some(format!("migrated from {}", names(source))),
            );
            let mut txn = Txn::new()
                .when(guards)
                .and_then(ops)
                .and_then(extra.clone())
                .when([guard])
                .and_then([mark]);
            txn.compares
                .push(Catalog::state_unchanged_since(target, target_revision));
            txn.success.push(Catalog::state_op(target, &target_state));
            match self.commit(source, source_revision, &source_state, txn).await {
                Ok(()) => break,
                Err(LifecycleError::Catalog(CatalogError::Conflict(_))) if attempts < INNER_ATTEMPTS => {}
                Err(other) => return Err(other),
            }
        }
        unfinished.contexts = None;
        tracing::info!(source = %source.display_name(), target = %target.display_name(), context = %id, "migrating");
        self.engine.instantiate(id);
        Ok(id)
    }

    /// The target of a migration must be an Approved DIG.
    fn check_migration_target(target: &ResourcePath, state: &StateInfo) -> Result<()> {
        if state.current() == Some(StateValue::Approved) {
            return Ok(());
        }
        Err(Self::refused(
            target,
            state_name(state.current()),
            "the target of a migration must be Approved",
        ))
    }

    /// Whether the state allows updating: the table must allow it and the current context must have finished
    /// instantiating. Returns the current context, which the new one takes over from.
    async fn check_updatable(&self, path: &ResourcePath, state: &StateInfo) -> Result<ContextId> {
        Self::outcome(path, state, Operation::Update)?;
        let current = state
            .last_context()
            .ok_or_else(|| Self::refused(path, state_name(state.current()), "nothing to update"))?;
        let meta = self.contexts.meta(current).await?;
        let status = meta.status;
        // A failed update may be followed by another update (or a rollback) that repairs it; a paused rollout
        // by one that replaces or reverts it.
        let failed_update = status == ContextStatus::InstantiateFailed && meta.supersedes.is_some();
        if status != ContextStatus::Instantiated && !failed_update && !meta.rollout_paused() {
            return Err(Self::refused(
                path,
                format!("{} (context {current} is {status})", state_name(state.current())),
                "only an instance that finished instantiating can be updated; wait for it, or terminate it",
            ));
        }
        Ok(current)
    }

    /// Whether the state allows instantiating: `None` when the table says there is nothing to do; otherwise the
    /// previous context (and its meta revision) when its termination was stopped but the engine has not
    /// recorded it yet, which the new instance supersedes.
    #[allow(clippy::type_complexity)]
    async fn check_instantiable(
        &self,
        path: &ResourcePath,
        state: &StateInfo,
    ) -> Result<Option<Option<(ContextMeta, emco_store::Revision)>>> {
        if Self::outcome(path, state, Operation::Instantiate)? == Outcome::Unchanged {
            return Ok(None);
        }
        let Some(previous) = state.last_context() else {
            return Ok(Some(None));
        };
        let (meta, revision) = self.contexts.meta_with_revision(previous).await?;
        if meta.status.is_terminate_finished() {
            return Ok(Some(None));
        }
        if meta.status == ContextStatus::Terminating && meta.stop_requested {
            return Ok(Some(Some((meta, revision))));
        }
        Err(Self::refused(
            path,
            format!(
                "{} (context {previous} is {})",
                state_name(state.current()),
                meta.status
            ),
            "the previous instance is still terminating; wait, or stop the termination",
        ))
    }

    /// Terminates an instantiated (or stopped) resource; a running instantiation is cancelled by the engine
    /// first. Returns the context being terminated (the last one, when the table says there is nothing to do).
    pub async fn terminate(&self, path: &ResourcePath) -> Result<ContextId> {
        if Self::subject(path) == Subject::LogicalCloud {
            logical_cloud::check_unused(&self.catalog, &self.contexts, path).await?;
        }
        let mut attempts = 0;
        loop {
            attempts += 1;
            let (mut state, revision) = self.state(path).await?;
            let outcome = Self::outcome(path, &state, Operation::Terminate)?;
            let id = state
                .last_context()
                .ok_or_else(|| Self::refused(path, "without context", "nothing to terminate"))?;
            let Outcome::Enter(next) = outcome else {
                return Ok(id);
            };
            let (mut meta, meta_revision) = self.contexts.meta_with_revision(id).await?;
            meta.status = ContextStatus::Terminating;
            meta.stop_requested = false;
            state.push(next, Some(id), now_timestamp());
            let mut txn = Txn::new()
                .when([AppContexts::meta_unchanged_since(id, meta_revision)])
                .and_then([AppContexts::meta_op(&meta)]);
            // Earlier contexts an update took over from that still hold objects (the handover has not finished,
            // or the update failed) terminate with the current one.
            let mut earlier = Vec::new();
            for previous in state.contexts().into_iter().filter(|previous| *previous != id) {
                let (mut previous_meta, previous_revision) =
                    self.contexts.meta_with_revision(previous).await?;
                if previous_meta.status.may_hold_objects() {
                    previous_meta.status = ContextStatus::Terminating;
                    previous_meta.stop_requested = false;
                    txn = txn
                        .when([AppContexts::meta_unchanged_since(previous, previous_revision)])
                        .and_then([AppContexts::meta_op(&previous_meta)]);
                    earlier.push(previous);
                }
            }
            match self.commit(path, revision, &state, txn).await {
                Ok(()) => {
                    self.engine.terminate(id);
                    for previous in earlier {
                        self.engine.terminate(previous);
                    }
                    return Ok(id);
                }
                // The engine moved the context on between our read and write; read again (a few times: past
                // them, the API runs the whole request again on a fresh read set).
                Err(LifecycleError::Catalog(CatalogError::Conflict(_))) if attempts < INNER_ATTEMPTS => {
                    continue;
                }
                Err(other) => return Err(other),
            }
        }
    }

    /// Resumes a DIG's progressive rollout that paused past its failure threshold: the failures so far are
    /// accepted (only new ones count against the threshold) and the engine goes on with the next batch. Returns
    /// the rollout's context; 409 when there is no paused rollout.
    pub async fn resume(&self, path: &ResourcePath) -> Result<ContextId> {
        let meta = self
            .change_current_context(path, Operation::Resume, |_, _, meta| {
                if !meta.rollout_paused() {
                    return Err("there is no paused rollout to resume");
                }
                if let Some(rollout) = meta.rollout.as_mut() {
                    rollout.paused = false;
                    rollout.accepted_failures = rollout.failed.len() as u64;
                }
                Ok(())
            })
            .await?;
        tracing::info!(name = %path.display_name(), context = %meta.id, "resuming the rollout");
        self.engine.instantiate(meta.id);
        Ok(meta.id)
    }

    /// Changes the current context of `path` for `operation` (a stop, a resume): the table must allow the
    /// operation; `change` gets what the table says, the history and the context's meta and changes them, or
    /// refuses with a reason (named with the state and the context's status). The history and the meta are
    /// written in one transaction; a lost race reads both again. Returns the meta as written.
    async fn change_current_context(
        &self,
        path: &ResourcePath,
        operation: Operation,
        mut change: impl FnMut(Outcome, &mut StateInfo, &mut ContextMeta) -> std::result::Result<(), &'static str>,
    ) -> Result<ContextMeta> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let (mut state, revision) = self.state(path).await?;
            let outcome = Self::outcome(path, &state, operation)?;
            let id = state.last_context().ok_or_else(|| {
                Self::refused(
                    path,
                    "without context",
                    &format!("nothing to {}", operation.verb()),
                )
            })?;
            let (mut meta, meta_revision) = self.contexts.meta_with_revision(id).await?;
            let current = state_name(state.current());
            if let Err(reason) = change(outcome, &mut state, &mut meta) {
                return Err(Self::refused(
                    path,
                    format!("{current} (context {id} is {})", meta.status),
                    reason,
                ));
            }
            let txn = Txn::new()
                .when([AppContexts::meta_unchanged_since(id, meta_revision)])
                .and_then([AppContexts::meta_op(&meta)]);
            match self.commit(path, revision, &state, txn).await {
                Ok(()) => return Ok(meta),
                // The engine moved the context on between our read and write; read again.
                Err(LifecycleError::Catalog(CatalogError::Conflict(_))) if attempts < INNER_ATTEMPTS => {}
                Err(other) => return Err(other),
            }
        }
    }

    /// Stops the running instantiation or termination: records the stop and tells the engine; the engine ends
    /// the operation shortly after ([`Lifecycle::wait_stopped`] waits for it).
    pub async fn stop(&self, path: &ResourcePath) -> Result<Stopping> {
        let mut running = ContextStatus::Instantiating;
        let meta = self
            .change_current_context(path, Operation::Stop, |outcome, state, meta| {
                let Outcome::Enter(stopped) = outcome else {
                    return Err("there is nothing to stop");
                };
                running = if stopped == StateValue::InstantiateStopped {
                    ContextStatus::Instantiating
                } else {
                    ContextStatus::Terminating
                };
                if meta.status != running {
                    return Err("it is not instantiating or terminating");
                }
                meta.stop_requested = true;
                state.push(stopped, Some(meta.id), now_timestamp());
                Ok(())
            })
            .await?;
        self.engine.stop(meta.id);
        Ok(Stopping {
            context: meta.id,
            running,
        })
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
}

/// The pages of a context whose creating transaction has not committed: removed (in the background) when the
/// commit is given up, unless `contexts` was taken first.
struct UnfinishedContext {
    contexts: Option<AppContexts>,
    id: ContextId,
}

impl Drop for UnfinishedContext {
    fn drop(&mut self) {
        let (Some(contexts), Ok(runtime)) = (self.contexts.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let id = self.id;
        runtime.spawn(async move {
            if let Err(err) = contexts.discard_staged(id).await {
                tracing::warn!(context = %id, error = %err, "cannot remove the pages of an unfinished context; the sweep will");
            }
        });
    }
}
