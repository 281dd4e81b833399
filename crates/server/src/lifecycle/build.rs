//! Building a context from a subject's inputs, on the blocking pool within the render permits: a DIG's charts
//! rendered, its clusters' capabilities asked, its patch values fetched and its controllers run; network intents
//! and logical clouds from their parts. A DIG's preview is the same build without a context.

use std::collections::HashMap;
use std::sync::Arc;

use emco_appcontext::{ClusterCapabilities, ResourcePath, ResourceRecord};
use emco_model::lifecycle::Operation;
use emco_model::{ContextId, StateValue};

use super::controllers::{self, Asked};
use super::{
    Built, CAPABILITIES_WAIT, Inputs, Lifecycle, LifecycleError, Result, Subject, dig, gac, hpa,
    logical_cloud, networks, patch_values, webhooks,
};

/// What a DIG would apply now ([`Lifecycle::preview`]).
#[derive(Debug)]
pub struct Preview {
    /// Each (app, cluster) with its objects, apps in order, clusters in placement order.
    pub cells: Vec<PreviewCell>,
    /// The context applied now, if the DIG has one that is not terminated.
    pub applied: Option<ContextId>,
}

/// An app's objects on one cluster in a preview.
#[derive(Debug)]
pub struct PreviewCell {
    /// The app.
    pub app: String,
    /// The cluster (`provider+cluster`).
    pub cluster: String,
    /// Its objects in apply order.
    pub resources: Vec<PreviewResource>,
}

/// One object of a preview.
#[derive(Debug)]
pub struct PreviewResource {
    /// The object as it would be stored.
    pub record: ResourceRecord,
    /// The controllers that added or changed it, in the order they ran.
    pub changed_by: Vec<String>,
}

impl Lifecycle {
    /// Builds the context of `inputs` on the blocking pool, within the render permits: a DIG as
    /// [`Lifecycle::render_dig`] prepares it, network intents from their networks, a logical cloud with a key it
    /// makes.
    pub(super) async fn build(&self, path: &ResourcePath, inputs: &Inputs) -> Result<Built> {
        let path = path.clone();
        match inputs {
            Inputs::DeploymentIntentGroup(inputs) => {
                let inputs = Arc::new(inputs.clone());
                let deployed = self.deployed(&inputs).await?;
                self.on_render_pool(move || dig::build(&path, &inputs, deployed))
                    .await
            }
            Inputs::ClusterNetworks(inputs) => {
                let inputs = inputs.clone();
                self.on_render_pool(move || networks::build(&path, &inputs)).await
            }
            Inputs::LogicalCloud(inputs) => {
                let inputs = inputs.clone();
                self.on_render_pool(move || logical_cloud::build(&path, &inputs))
                    .await
            }
        }
    }

    /// What a DIG's context is built from besides its inputs: its charts rendered with Helm's defaults (on the
    /// blocking pool), the capabilities of the clusters whose chart read them (asked holding no permit, at most
    /// [`CAPABILITIES_WAIT`]; each such chart is rendered again per distinct set), the patch values its
    /// controllers take from URLs (fetched within the operator's allowed prefixes and bounds) and the nodes of the
    /// clusters its placement controllers read (each within [`hpa::NODES_WAIT`]).
    async fn render_dig(
        &self,
        inputs: &dig::Inputs,
    ) -> Result<(Vec<dig::FirstRender>, HashMap<String, ClusterCapabilities>, Asked)> {
        let limits = self.render_limits;
        let task_inputs = inputs.clone();
        let first = self
            .on_render_pool(move || dig::render_with_defaults(&task_inputs, limits))
            .await?;
        let to_ask = dig::clusters_to_ask(inputs, &first);
        let known = if to_ask.is_empty() {
            HashMap::new()
        } else {
            self.engine.capabilities(to_ask, CAPABILITIES_WAIT).await
        };
        let values = patch_values::fetch_all(&self.patch_value_sources, dig::patch_value_urls(inputs))
            .await
            .map_err(|message| LifecycleError::Action {
                controller: gac::CONTROLLER_NAME.to_string(),
                message,
            })?;
        let node_clusters = dig::node_clusters(inputs);
        let nodes = if node_clusters.is_empty() {
            HashMap::new()
        } else {
            self.engine.nodes(node_clusters, hpa::NODES_WAIT).await
        };
        Ok((first, known, Asked { values, nodes }))
    }

    /// What instantiating (or updating) the DIG at `path` would apply now, without storing anything: the objects
    /// of every (app, cluster) cell `wanted` keeps, after the charts rendered and the controllers ran, each with
    /// the controllers that added or changed it; and the context applied now, if any (to compare with). More than
    /// `max_cells` wanted cells are refused before anything renders.
    pub async fn preview(
        &self,
        path: &ResourcePath,
        wanted: impl Fn(&str, &str) -> bool,
        max_cells: usize,
    ) -> Result<Preview> {
        let (state, _) = self.state(path).await?;
        let Inputs::DeploymentIntentGroup(inputs) = self.read_inputs(path, Operation::Instantiate).await?
        else {
            return Err(LifecycleError::Invalid(
                "only a deployment intent group has a preview".into(),
            ));
        };
        let placed = inputs
            .cells()
            .filter(|(app, cluster)| wanted(app, cluster))
            .count();
        if placed > max_cells {
            return Err(LifecycleError::Invalid(format!(
                "the preview holds {placed} app-cluster cells; at most {max_cells} are shown at once: name a cluster (cluster=<provider>+<cluster>) or an app"
            )));
        }
        let deployed = self.deployed(&Arc::new(inputs)).await?;
        let mut cells = Vec::new();
        for mut app in deployed {
            for (cluster, objects) in app.clusters.iter().zip(app.objects) {
                if !wanted(&app.app, cluster) {
                    continue;
                }
                let mut changes = app.changed_by.remove(cluster).unwrap_or_default();
                let resources = objects
                    .into_iter()
                    .map(|record| PreviewResource {
                        changed_by: changes.remove(&record.key()).unwrap_or_default(),
                        record,
                    })
                    .collect();
                cells.push(PreviewCell {
                    app: app.app.clone(),
                    cluster: cluster.clone(),
                    resources,
                });
            }
        }
        let applied = match state.current() {
            Some(StateValue::Terminated) | None => None,
            Some(_) => state.last_context(),
        };
        Ok(Preview { cells, applied })
    }

    /// Every app's objects on each of its clusters, rendered ([`Lifecycle::render_dig`]) and then changed by the
    /// DIG's controllers in their order: the built-in ones on the blocking pool, each webhook called in its place
    /// between them (its request built and its answer applied on the blocking pool, the call holding no permit).
    async fn deployed(&self, inputs: &Arc<dig::Inputs>) -> Result<Vec<controllers::Deployed>> {
        let (first, known, asked) = self.render_dig(inputs).await?;
        let limits = self.render_limits;
        let asked = Arc::new(asked);
        let (task_inputs, task_asked) = (inputs.clone(), asked.clone());
        let (mut apps, mut next) = self
            .on_render_pool(move || {
                let mut apps = dig::rendered(&task_inputs, first, &known, limits)?;
                let next = controllers::run_built_in(task_inputs.controllers(), 0, &mut apps, &task_asked)?;
                Ok((apps, next))
            })
            .await?;
        while next < inputs.controllers().len() {
            let max_request = self.webhook_targets.max_request_bytes;
            let task_inputs = inputs.clone();
            let (body, taken) = self
                .on_render_pool(move || {
                    let plan = task_inputs.controllers();
                    let (controller, webhook) = plan.webhook(next).expect("run_built_in stops at a webhook");
                    let body =
                        webhooks::request(webhook, controller, &apps, max_request).map_err(|message| {
                            LifecycleError::Action {
                                controller: controller.to_string(),
                                message,
                            }
                        })?;
                    Ok((body, apps))
                })
                .await?;
            apps = taken;
            let (controller, webhook) = inputs.controllers().webhook(next).expect("a webhook");
            let answer = webhooks::call(&self.webhook_targets, webhook, body)
                .await
                .map_err(|message| LifecycleError::Action {
                    controller: controller.to_string(),
                    message,
                })?;
            let (task_inputs, task_asked) = (inputs.clone(), asked.clone());
            (apps, next) = self
                .on_render_pool(move || {
                    let plan = task_inputs.controllers();
                    controllers::apply_webhook_answer(plan, next, &mut apps, &answer)?;
                    let next = controllers::run_built_in(plan, next + 1, &mut apps, &task_asked)?;
                    Ok((apps, next))
                })
                .await?;
        }
        Ok(apps)
    }

    /// Runs `work` on the blocking pool once a render permit is free.
    async fn on_render_pool<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let permit = self
            .renders
            .clone()
            .acquire_owned()
            .await
            .map_err(|err| LifecycleError::Renderer(err.to_string()))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work()
        })
        .await
        .map_err(|err| LifecycleError::Renderer(err.to_string()))?
    }

    /// Reads everything instantiating (or updating) `path` needs, as its subject describes.
    pub(super) async fn read_inputs(&self, path: &ResourcePath, operation: Operation) -> Result<Inputs> {
        Ok(match Self::subject(path) {
            Subject::DeploymentIntentGroup => {
                Inputs::DeploymentIntentGroup(dig::read_inputs(&self.catalog, &self.contexts, path).await?)
            }
            Subject::ClusterNetworks => {
                Inputs::ClusterNetworks(networks::read_inputs(&self.catalog, path).await?)
            }
            Subject::LogicalCloud => {
                // An update keeps the user's key, so its certificate requests stay the same objects.
                let keep_key = operation == Operation::Update;
                Inputs::LogicalCloud(
                    logical_cloud::read_inputs(&self.catalog, &self.contexts, path, keep_key).await?,
                )
            }
        })
    }
}
