//! Deployment intent groups described to the lifecycle engine: what instantiating one reads (the DIG, its
//! composite app's apps and charts, the app profiles of its composite profile, placement resolved to clusters, app
//! dependencies, the logical cloud it deploys on, and the controllers its intents name) and how its context is
//! built (every app's chart rendered with its profile and overrides, objects sorted into CRDs, main resources and
//! hooks, then changed by the controllers).

use std::collections::{BTreeMap, HashMap};

use emco_appcontext::ClusterCapabilities;
use emco_appcontext::{
    AppContexts, AppMeta, Catalog, ClusterRecord, ContextMeta, Kind, ResourcePath, ResourceRecord,
    ResourceRole,
};
use emco_helm::charts::{Capabilities, KubeVersion, VersionSet};
use emco_helm::{Manifest, Release, RenderLimits, render_chart_observed};
use emco_model::{
    AppDependency, AppDependencySpec, AppIntent, ContextStatus, DeploymentIntentGroup,
    GENERIC_PLACEMENT_INTENT_KEY, GroupIntent, PlacementItem, dependency_cycle, now_timestamp,
};

use super::controllers::{self, Deployed};
use super::logical_cloud::{self, Binding};
use super::{Built, LifecycleError, Result};

/// The namespace a DIG deploys to while it names no logical cloud.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Everything instantiating a DIG reads from the catalog.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Inputs {
    dig: DeploymentIntentGroup,
    apps: Vec<AppInput>,
    /// The logical cloud it deploys on (none: the `default` namespace with each cluster's own credentials).
    logical_cloud: Option<Binding>,
    /// The controllers its intents name, with their intents, in the order they run.
    controllers: controllers::Plan,
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
    /// The clusters placement requires (`allOf`), resolved.
    required: Vec<String>,
    dependencies: Vec<AppDependencySpec>,
}

pub(super) async fn read_inputs(
    catalog: &Catalog,
    contexts: &AppContexts,
    dig_path: &ResourcePath,
) -> Result<Inputs> {
    let dig: DeploymentIntentGroup = catalog.get_as(dig_path).await?;
    let composite_app = dig_path.parent().expect("a DIG lives under a composite app");
    let binding = if dig.spec.logical_cloud.is_empty() {
        None
    } else {
        Some(logical_cloud::binding(catalog, contexts, &dig_path.names()[0], &dig.spec.logical_cloud).await?)
    };
    let apps = catalog.list(Kind::App, composite_app.names()).await?;
    if apps.is_empty() {
        return Err(LifecycleError::Incomplete(format!(
            "composite app '{}' has no apps",
            composite_app.display_name()
        )));
    }
    let profile_path = composite_app.child(Kind::CompositeProfile, &[&dig.spec.composite_profile]);
    let profiles = catalog.list(Kind::AppProfile, profile_path.names()).await?;
    let placements = placements(catalog, dig_path).await?;
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
        let (mut clusters, mandatory) = resolve_clusters(catalog, &name, intents).await?;
        if let Some(binding) = &binding {
            // Every mandatory cluster must be in the logical cloud; optional ones outside it are left out.
            if let Some(outside) = mandatory
                .iter()
                .find(|cluster| !binding.clusters.contains(cluster))
            {
                return Err(LifecycleError::NotInLogicalCloud {
                    app: name.clone(),
                    cluster: outside.clone(),
                    logical_cloud: dig.spec.logical_cloud.clone(),
                });
            }
            clusters.retain(|cluster| binding.clusters.contains(cluster));
        }
        let chart = catalog
            .blob(&app.path)
            .await?
            .ok_or_else(|| failed("the app has no chart"))?;
        let profile = match profiles
            .iter()
            .find(|profile| profile.body["spec"]["app"].as_str() == Some(name.as_str()))
        {
            Some(profile) => {
                let bytes = catalog
                    .blob(&profile.path)
                    .await?
                    .ok_or_else(|| failed("the app profile has no file"))?;
                Some((profile.path.name().to_string(), bytes))
            }
            None => None,
        };
        let dependencies = catalog
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
            required: mandatory,
            dependencies,
        });
    }
    let app_clusters = inputs
        .iter()
        .map(|app| (app.name.clone(), app.clusters.clone()))
        .collect();
    let controllers =
        controllers::read_plan(catalog, dig_path, namespace_of(binding.as_ref()), &app_clusters).await?;
    Ok(Inputs {
        dig,
        apps: inputs,
        logical_cloud: binding,
        controllers,
    })
}

/// The app intents of every placement intent the DIG's group intents name, by app.
async fn placements(catalog: &Catalog, dig: &ResourcePath) -> Result<BTreeMap<String, Vec<AppIntent>>> {
    let mut by_app: BTreeMap<String, Vec<AppIntent>> = BTreeMap::new();
    let group_intents = catalog
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
        if !catalog.exists(&gpi).await? {
            return Err(LifecycleError::Incomplete(format!(
                "intent '{}' names generic placement intent '{gpi_name}', which does not exist",
                intent_path.name()
            )));
        }
        for (_, app_intent) in catalog.list_as::<AppIntent>(Kind::AppIntent, gpi.names()).await? {
            by_app
                .entry(app_intent.spec.app.clone())
                .or_default()
                .push(app_intent);
        }
    }
    Ok(by_app)
}

/// Every cluster an app's intents place it on (`provider+cluster`), mandatory and optional groups alike, in intent
/// order without repeats, and the mandatory ones (`allOf` items that are not `anyOf` lists); labels are resolved
/// now.
async fn resolve_clusters(
    catalog: &Catalog,
    app: &str,
    intents: &[AppIntent],
) -> Result<(Vec<String>, Vec<String>)> {
    let mut clusters: Vec<String> = Vec::new();
    let mut mandatory: Vec<String> = Vec::new();
    for intent in intents {
        let all_of = intent.spec.intent.all_of.iter().map(|item| (item, true));
        let any_of = intent.spec.intent.any_of.iter().map(|item| (item, false));
        for (item, required) in all_of.chain(any_of) {
            let (nested, required): (Vec<&PlacementItem>, bool) = if item.any_of.is_empty() {
                (vec![item], required)
            } else {
                (item.any_of.iter().collect(), false)
            };
            for item in nested {
                for cluster in resolve_item(catalog, app, &intent.metadata.name, item).await? {
                    if required && !mandatory.contains(&cluster) {
                        mandatory.push(cluster.clone());
                    }
                    if !clusters.contains(&cluster) {
                        clusters.push(cluster);
                    }
                }
            }
        }
    }
    Ok((clusters, mandatory))
}

async fn resolve_item(
    catalog: &Catalog,
    app: &str,
    intent: &str,
    item: &PlacementItem,
) -> Result<Vec<String>> {
    let provider = &item.cluster_provider;
    if !item.cluster.is_empty() {
        let path = ResourcePath::new(Kind::Cluster, vec![provider.clone(), item.cluster.clone()]);
        if !catalog.exists(&path).await? {
            return Err(LifecycleError::Placement(format!(
                "app intent '{intent}' of app '{app}' places it on cluster '{provider}+{}', which does not exist",
                item.cluster
            )));
        }
        return Ok(vec![format!("{provider}+{}", item.cluster)]);
    }
    let matching = clusters_with_label(catalog, provider, &item.cluster_label).await?;
    if matching.is_empty() {
        return Err(LifecycleError::Placement(format!(
            "app intent '{intent}' of app '{app}' selects clusters of provider '{provider}' labelled '{}', and none has that label",
            item.cluster_label
        )));
    }
    Ok(matching)
}

/// The clusters (`provider+cluster`) of `provider` labelled `label`, in creation order.
pub(super) async fn clusters_with_label(
    catalog: &Catalog,
    provider: &str,
    label: &str,
) -> Result<Vec<String>> {
    let mut matching = Vec::new();
    for cluster in catalog.list(Kind::Cluster, &[provider.to_string()]).await? {
        if catalog
            .exists(&cluster.path.child(Kind::ClusterLabel, &[label]))
            .await?
        {
            matching.push(format!("{provider}+{}", cluster.path.name()));
        }
    }
    Ok(matching)
}

/// The namespace a DIG bound to `logical_cloud` deploys to: its logical cloud's, else `default`.
fn namespace_of(logical_cloud: Option<&Binding>) -> &str {
    logical_cloud.map_or(DEFAULT_NAMESPACE, |binding| binding.namespace.as_str())
}

/// How many different sets of capabilities (Kubernetes version and API versions) one app is rendered for at most:
/// a chart that reads `.Capabilities` renders once per distinct set among its clusters.
pub(super) const MAX_RENDERS_PER_APP: usize = 32;

/// An app's chart and values, loaded, and its objects rendered with Helm's default capabilities.
pub(super) struct FirstRender {
    chart: emco_helm::Chart,
    values: serde_json::Value,
    /// The objects with Helm's defaults, or why they do not render.
    objects: std::result::Result<Vec<ResourceRecord>, RenderFailure>,
    /// Whether the objects depend on the capabilities (a template read them, or the chart's `kubeVersion` was
    /// checked): then each cluster's own are asked for and the chart rendered for each distinct set.
    per_cluster: bool,
}

/// Loads every app's chart and values and renders it with Helm's defaults (on the blocking pool). A chart that
/// fails to render fails the instantiation here unless its outcome depends on the clusters' capabilities.
pub(super) fn render_with_defaults(inputs: &Inputs, limits: RenderLimits) -> Result<Vec<FirstRender>> {
    let release = release_of(inputs);
    inputs
        .apps
        .iter()
        .map(|app| {
            let (chart, values) = load_app(app, &inputs.dig)?;
            let (objects, per_cluster) =
                render_loaded(&chart, &values, &release, &Capabilities::default(), limits);
            if !per_cluster && let Err(failure) = &objects {
                return Err(failure.clone().into_error(&app.name, None));
            }
            Ok(FirstRender {
                chart,
                values,
                objects,
                per_cluster,
            })
        })
        .collect()
}

/// The URLs the DIG's controllers take patch values from.
pub(super) fn patch_value_urls(inputs: &Inputs) -> Vec<String> {
    inputs.controllers.patch_value_urls()
}

/// The clusters whose nodes the DIG's placement controllers read.
pub(super) fn node_clusters(inputs: &Inputs) -> Vec<String> {
    inputs.controllers.node_clusters()
}

/// The clusters whose capabilities the apps' charts depend on.
pub(super) fn clusters_to_ask(inputs: &Inputs, first: &[FirstRender]) -> Vec<String> {
    let mut clusters: Vec<String> = inputs
        .apps
        .iter()
        .zip(first)
        .filter(|(_, render)| render.per_cluster)
        .flat_map(|(app, _)| app.clusters.iter().cloned())
        .collect();
    clusters.sort();
    clusters.dedup();
    clusters
}

/// Builds the DIG's context from its apps' objects after its controllers ran (on the blocking pool).
pub(super) fn build(dig_path: &ResourcePath, inputs: &Inputs, deployed: Vec<Deployed>) -> Result<Built> {
    let (meta, records) = build_context(dig_path, inputs, deployed)?;
    Ok(Built {
        meta,
        records,
        extra: Vec::new(),
    })
}

impl Inputs {
    /// The controllers the DIG's intents name, in the order they run.
    pub(super) fn controllers(&self) -> &controllers::Plan {
        &self.controllers
    }

    /// Every (app, cluster) its placement intents place, before any placement controller narrowed them: what a
    /// preview shows at most.
    pub(super) fn cells(&self) -> impl Iterator<Item = (&str, &str)> {
        self.apps.iter().flat_map(|app| {
            app.clusters
                .iter()
                .map(move |cluster| (app.name.as_str(), cluster.as_str()))
        })
    }
}

/// Every app's objects on each of its clusters from the first renders, before any controller ran: an app whose
/// objects depend on the capabilities is rendered again for each distinct set among its clusters (`known`: what the
/// clusters said; a cluster that said nothing keeps Helm's defaults), on the blocking pool.
pub(super) fn rendered(
    inputs: &Inputs,
    first: Vec<FirstRender>,
    known: &HashMap<String, ClusterCapabilities>,
    limits: RenderLimits,
) -> Result<Vec<Deployed>> {
    let release = release_of(inputs);
    let mut deployed = Vec::with_capacity(first.len());
    for (app, render) in inputs.apps.iter().zip(first) {
        let objects = objects_per_cluster(app, render, &release, known, limits)?;
        deployed.push(Deployed::rendered(
            &app.name,
            &app.clusters,
            &app.required,
            objects,
        ));
    }
    Ok(deployed)
}

/// An app's objects for each of its clusters (in the app's cluster order).
fn objects_per_cluster(
    app: &AppInput,
    render: FirstRender,
    release: &Release,
    known: &HashMap<String, ClusterCapabilities>,
    limits: RenderLimits,
) -> Result<Vec<Vec<ResourceRecord>>> {
    if !render.per_cluster {
        let objects = render
            .objects
            .map_err(|failure| failure.into_error(&app.name, None))?;
        return Ok(vec![objects; app.clusters.len()]);
    }
    // The clusters of each distinct set of capabilities (none: Helm's defaults), in first-seen order.
    let mut groups: Vec<(Option<&ClusterCapabilities>, Vec<usize>)> = Vec::new();
    for (index, cluster) in app.clusters.iter().enumerate() {
        let capabilities = known
            .get(cluster)
            .filter(|c| KubeVersion::parse(&c.kube_version).is_some());
        match groups.iter_mut().find(|(set, _)| *set == capabilities) {
            Some((_, members)) => members.push(index),
            None => groups.push((capabilities, vec![index])),
        }
    }
    if groups.len() > MAX_RENDERS_PER_APP {
        return Err(LifecycleError::Render {
            app: app.name.clone(),
            message: format!(
                "the chart reads .Capabilities and its {} clusters present {} different Kubernetes versions and API version sets; at most {MAX_RENDERS_PER_APP} are rendered",
                app.clusters.len(),
                groups.len()
            ),
        });
    }
    let mut per_cluster = vec![Vec::new(); app.clusters.len()];
    for (capabilities, members) in groups {
        let objects = match capabilities {
            None => render.objects.clone(),
            Some(set) => {
                render_loaded(
                    &render.chart,
                    &render.values,
                    release,
                    &helm_capabilities(set),
                    limits,
                )
                .0
            }
        };
        let objects = objects.map_err(|failure| {
            let place = placement(capabilities, members.iter().map(|&i| app.clusters[i].as_str()));
            failure.into_error(&app.name, Some(place))
        })?;
        for index in members {
            per_cluster[index] = objects.clone();
        }
    }
    Ok(per_cluster)
}

/// Helm's `.Capabilities` of a cluster that said its version and API versions.
fn helm_capabilities(set: &ClusterCapabilities) -> Capabilities {
    Capabilities {
        kube_version: KubeVersion::parse(&set.kube_version)
            .unwrap_or_else(|| Capabilities::default().kube_version),
        api_versions: VersionSet(set.api_versions.clone()),
        ..Capabilities::default()
    }
}

/// Which clusters a render was for, and with which version: `for cluster a, b and 3 more (Kubernetes v1.23.17)`.
fn placement<'a>(
    capabilities: Option<&ClusterCapabilities>,
    clusters: impl Iterator<Item = &'a str>,
) -> String {
    let mut names: Vec<&str> = clusters.collect();
    let more = names.len().saturating_sub(3);
    names.truncate(3);
    let mut which = names.join(", ");
    if more > 0 {
        which.push_str(&format!(" and {more} more"));
    }
    let version = capabilities.map_or_else(
        || "Helm's default capabilities: the clusters did not say their version".to_string(),
        |set| format!("Kubernetes {}", set.kube_version),
    );
    format!("for cluster {which} ({version})")
}

/// Why an app's chart did not render (kept per set of capabilities until the app's error is made).
#[derive(Debug, Clone)]
enum RenderFailure {
    /// The chart, values or a template failed.
    Chart(String),
    /// Rendering exceeded a bound.
    Limit(String),
    /// The chart's values schema refused the values.
    Values(String),
}

impl RenderFailure {
    /// The lifecycle error of app `app`, saying for which clusters when the render was for some of them.
    fn into_error(self, app: &str, place: Option<String>) -> LifecycleError {
        let placed = |message: String| match &place {
            Some(place) => format!("{place}: {message}"),
            None => message,
        };
        let app = app.to_string();
        match self {
            Self::Chart(message) => LifecycleError::Render {
                app,
                message: placed(message),
            },
            Self::Limit(message) => LifecycleError::RenderLimit {
                app,
                message: placed(message),
            },
            Self::Values(message) => LifecycleError::Values {
                app,
                message: placed(message),
            },
        }
    }
}

/// The release every app of `inputs` is rendered as: the DIG's version in its namespace.
fn release_of(inputs: &Inputs) -> Release {
    Release {
        name: inputs.dig.spec.version.clone(),
        namespace: namespace_of(inputs.logical_cloud.as_ref()).to_string(),
    }
}

/// An app's chart and its values: the app profile's, then the DIG's overrides, coalesced over the chart's
/// defaults by the renderer.
fn load_app(app: &AppInput, dig: &DeploymentIntentGroup) -> Result<(emco_helm::Chart, serde_json::Value)> {
    let failed = |message: String| LifecycleError::Render {
        app: app.name.clone(),
        message,
    };
    let chart = emco_helm::load_archive(&app.chart).map_err(|err| failed(format!("chart: {err}")))?;
    let mut values = serde_json::Value::Object(Default::default());
    if let Some((profile, bytes)) = &app.profile {
        let overrides = emco_helm::read_app_profile(bytes)
            .map_err(|err| failed(format!("app profile '{profile}': {err}")))?;
        emco_helm::merge_values(&mut values, &overrides.values);
    }
    for entry in dig
        .spec
        .override_values
        .iter()
        .filter(|entry| entry.app == app.name)
    {
        for (key, value) in &entry.values {
            emco_helm::apply_set(&mut values, key, value).map_err(|err| failed(err.to_string()))?;
        }
    }
    Ok((chart, values))
}

/// Renders a loaded app for `capabilities` within `limits`: its resources in apply order, and whether they depend
/// on the capabilities.
fn render_loaded(
    chart: &emco_helm::Chart,
    values: &serde_json::Value,
    release: &Release,
    capabilities: &Capabilities,
    limits: RenderLimits,
) -> (std::result::Result<Vec<ResourceRecord>, RenderFailure>, bool) {
    let (manifests, per_cluster) = render_chart_observed(chart, values, release, capabilities, limits);
    let manifests = manifests.map_err(|err| match err {
        // Values the chart's values.schema.json refuses: the values are wrong, not the chart.
        emco_helm::RenderError::Chart(emco_helm::ChartError::Schema(message)) => {
            RenderFailure::Values(message.trim_end().to_string())
        }
        emco_helm::RenderError::Limit(hit) => RenderFailure::Limit(hit.to_string()),
        other => RenderFailure::Chart(other.to_string()),
    });
    let objects = manifests.and_then(|manifests| {
        if manifests.is_empty() {
            return Err(RenderFailure::Chart(
                "the chart renders no Kubernetes objects".into(),
            ));
        }
        resources_of(manifests).map_err(RenderFailure::Chart)
    });
    (objects, per_cluster)
}

/// The AppContext of a rendered instantiation: a new id, the apps in order with their dependencies, the clusters
/// the controllers left them (and those placement controllers took away), and one record per (app, cluster) with
/// the controllers that added or changed each of its resources.
/// Refuses app dependencies that form a cycle.
fn build_context(
    dig_path: &ResourcePath,
    inputs: &Inputs,
    deployed: Vec<Deployed>,
) -> Result<(ContextMeta, Vec<ClusterRecord>)> {
    let dig = &inputs.dig;
    let id = AppContexts::new_id();
    let mut app_metas = Vec::new();
    let mut records = Vec::new();
    for (app, mut deployed) in inputs.apps.iter().zip(deployed) {
        for (cluster, resources) in deployed.clusters.iter().zip(deployed.objects) {
            let mut record = ClusterRecord::pending(&app.name, cluster, resources);
            record.changed_by = deployed.changed_by.remove(cluster).unwrap_or_default();
            records.push(record);
        }
        app_metas.push(AppMeta {
            name: app.name.clone(),
            dependencies: app.dependencies.clone(),
            clusters: deployed.clusters,
            excluded: deployed.excluded,
        });
    }
    let graph = app_metas
        .iter()
        .map(|app| (app.name.as_str(), app.dependencies.as_slice()));
    if let Some(cycle) = dependency_cycle(graph) {
        return Err(LifecycleError::DependencyCycle { cycle });
    }
    let mut meta = ContextMeta {
        id,
        project: dig_path.names()[0].clone(),
        composite_app: dig_path.names()[1].clone(),
        composite_app_version: dig_path.names()[2].clone(),
        composite_profile: dig.spec.composite_profile.clone(),
        deployment_intent_group: dig_path.name().to_string(),
        release: dig.spec.version.clone(),
        namespace: namespace_of(inputs.logical_cloud.as_ref()).to_string(),
        logical_cloud: dig.spec.logical_cloud.clone(),
        owner: Default::default(),
        credentials: inputs
            .logical_cloud
            .as_ref()
            .and_then(|binding| binding.credentials.clone()),
        supersedes: None,
        lineage: None,
        apps: app_metas,
        status: ContextStatus::Instantiating,
        stop_requested: false,
        rollout: None,
        created: now_timestamp(),
    };
    meta.plan_rollout(dig.spec.rollout.as_ref());
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
            &manifest.object,
        );
        if manifest.from_crds {
            crds.push(resource.with_role(ResourceRole::Crd));
            continue;
        }
        match emco_helm::hooks::hook_of(&manifest.object) {
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
            text: String::new(),
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
