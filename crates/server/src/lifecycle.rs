//! The deployment-intent-group lifecycle (seeds 000/001; DESIGN §6): approve, instantiate, terminate and stop,
//! the rule that modifying an approved DIG or its intents returns it to Created, and the guards on modifying and
//! deleting an instantiated DIG. Instantiate resolves placement, renders every app's chart and creates the
//! AppContext in the same store transaction that records the `Instantiated` action; only then is the engine told.
//!
//! No HTTP here: errors are [`LifecycleError`]s, which the API maps to status codes.

use std::collections::BTreeMap;
use std::sync::Arc;

use emco_appcontext::{
    AppContexts, AppMeta, Catalog, CatalogError, ClusterRecord, ContextError, ContextMeta, Engine, Kind,
    ResourcePath, ResourceRecord, ResourceRole,
};
use emco_helm::{Manifest, Release, render_chart};
use emco_model::{
    AppDependency, AppIntent, ContextId, ContextStatus, DeploymentIntentGroup, GENERIC_PLACEMENT_INTENT_KEY,
    GroupIntent, PlacementItem, StateInfo, StateValue, dependency_cycle, now_timestamp,
};
use emco_store::{Op, Txn};

/// The namespace a DIG deploys to while it names no logical cloud.
pub const DEFAULT_NAMESPACE: &str = "default";

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
}

/// The result type of lifecycle operations.
pub type Result<T, E = LifecycleError> = std::result::Result<T, E>;

/// Drives DIG lifecycles over the catalog, AppContexts and an engine.
#[derive(Clone)]
pub struct Lifecycle {
    catalog: Catalog,
    contexts: AppContexts,
    engine: Arc<dyn Engine>,
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
        }
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

    /// Instantiates an approved (or terminated) DIG: a new AppContext, then the engine.
    pub async fn instantiate(&self, dig: &ResourcePath) -> Result<ContextId> {
        let (mut state, revision) = self.state(dig).await?;
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
        if let Some(previous) = state.last_context() {
            let status = self.contexts.meta(previous).await?.status;
            if !status.is_terminate_finished() {
                return Err(invalid_state(
                    dig,
                    format!("{} (context {previous} is {status})", state_name(state.current())),
                    "the previous instance is still terminating; wait, or stop the termination",
                ));
            }
        }
        let (meta, clusters) = self.build_context(dig).await?;
        let id = meta.id;
        let (guard, ops) = AppContexts::create_txn_parts(&meta, &clusters);
        state.push(StateValue::Instantiated, Some(id), now_timestamp());
        self.commit(dig, revision, &state, Txn::new().when([guard]).and_then(ops))
            .await?;
        tracing::info!(dig = %dig.display_name(), context = %id, resources = clusters.iter().map(|c| c.resources.len()).sum::<usize>(), "instantiating");
        self.engine.instantiate(id);
        Ok(id)
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

    /// Stops the running instantiation or termination of a DIG.
    pub async fn stop(&self, dig: &ResourcePath) -> Result<()> {
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
                    return Ok(());
                }
                Err(LifecycleError::Catalog(CatalogError::Conflict(_))) => continue,
                Err(other) => return Err(other),
            }
        }
    }

    async fn build_context(&self, dig_path: &ResourcePath) -> Result<(ContextMeta, Vec<ClusterRecord>)> {
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

        let release = Release {
            name: dig.spec.version.clone(),
            namespace: DEFAULT_NAMESPACE.to_string(),
        };
        let id = AppContexts::new_id();
        let mut app_metas = Vec::new();
        let mut records = Vec::new();
        for app in &apps {
            let name = app.path.name().to_string();
            let intents = placements.get(&name).ok_or_else(|| {
                LifecycleError::Incomplete(format!(
                    "app '{name}' has no placement intent in DeploymentIntentGroup '{}'",
                    dig_path.name()
                ))
            })?;
            let clusters = self.resolve_clusters(&name, intents).await?;
            let profile = profiles
                .iter()
                .find(|profile| profile.body["spec"]["app"].as_str() == Some(name.as_str()));
            let resources = self
                .render_app(&app.path, profile.map(|p| &p.path), &dig, &release)
                .await?;
            let dependencies = self
                .catalog
                .list_as::<AppDependency>(Kind::AppDependency, app.path.names())
                .await?
                .into_iter()
                .map(|(_, dependency)| dependency.spec)
                .collect();
            for cluster in &clusters {
                records.push(ClusterRecord::pending(&name, cluster, resources.clone()));
            }
            app_metas.push(AppMeta {
                name,
                dependencies,
                clusters,
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
            apps: app_metas,
            status: ContextStatus::Instantiating,
            stop_requested: false,
            created: now_timestamp(),
        };
        Ok((meta, records))
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

    async fn render_app(
        &self,
        app: &ResourcePath,
        profile: Option<&ResourcePath>,
        dig: &DeploymentIntentGroup,
        release: &Release,
    ) -> Result<Vec<ResourceRecord>> {
        let name = app.name().to_string();
        let failed = |message: String| LifecycleError::Render {
            app: name.clone(),
            message,
        };
        let chart_bytes = self
            .catalog
            .blob(app)
            .await?
            .ok_or_else(|| failed("the app has no chart".into()))?;
        let chart = emco_helm::load_archive(&chart_bytes).map_err(|err| failed(format!("chart: {err}")))?;
        // The user's values (profile, then overrides), coalesced over the chart's defaults by the renderer.
        let mut values = serde_json::Value::Object(Default::default());
        if let Some(profile) = profile {
            let bytes = self
                .catalog
                .blob(profile)
                .await?
                .ok_or_else(|| failed("the app profile has no file".into()))?;
            let overrides = emco_helm::read_app_profile(&bytes)
                .map_err(|err| failed(format!("app profile '{}': {err}", profile.name())))?;
            emco_helm::merge_values(&mut values, &overrides.values);
        }
        for entry in dig.spec.override_values.iter().filter(|entry| entry.app == name) {
            for (key, value) in &entry.values {
                emco_helm::apply_set(&mut values, key, value).map_err(|err| failed(err.to_string()))?;
            }
        }
        let manifests = render_chart(&chart, &values, release).map_err(|err| match err {
            // Values the chart's values.schema.json refuses: the values are wrong, not the chart.
            emco_helm::RenderError::Chart(emco_helm::ChartError::Schema(message)) => LifecycleError::Values {
                app: name.clone(),
                message: message.trim_end().to_string(),
            },
            other => failed(other.to_string()),
        })?;
        if manifests.is_empty() {
            return Err(failed("the chart renders no Kubernetes objects".into()));
        }
        resources_of(manifests).map_err(failed)
    }
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
