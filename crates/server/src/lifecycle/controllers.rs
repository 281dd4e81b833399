//! The controller stage of instantiate and update: the controllers a DIG's intents name (`spec.intent` maps a
//! registered controller's name to its intent), checked against the registry (`/v2/controllers`) and run in
//! EMCO's order — placement controllers first, then action controllers, each by priority, lower number first —
//! over the rendered objects of every app on every cluster, between render and the AppContext's commit.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use emco_appcontext::{Catalog, Exclusion, Kind, ResourcePath, ResourceRecord};
use emco_model::{Controller, GENERIC_PLACEMENT_INTENT_KEY, GroupIntent};

use super::patch_values::FetchedValues;
use super::{LifecycleError, Result};
use super::{dtc, gac, hpa, ovnaction, webhooks};

/// The names emco's built-in controllers are registered under, for messages.
fn built_in() -> String {
    let mut names = vec![
        gac::CONTROLLER_NAME,
        ovnaction::CONTROLLER_NAME,
        dtc::CONTROLLER_NAME,
    ];
    names.extend(hpa::PLACEMENT_CONTROLLERS);
    names.extend(hpa::ACTION_CONTROLLERS);
    names.join(", ")
}

/// What the controllers learned before they run, outside the catalog: the patch values gac takes from URLs and
/// the nodes of the clusters hpa places on.
#[derive(Debug, Default)]
pub(super) struct Asked {
    /// gac's patch values, by URL.
    pub(super) values: FetchedValues,
    /// Each cluster's nodes (hpa), or why they could not be read.
    pub(super) nodes: hpa::ClusterNodes,
}

/// An app's objects on each of its clusters while the controllers run.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Deployed {
    /// The app.
    pub(super) app: String,
    /// Its clusters (`provider+cluster`).
    pub(super) clusters: Vec<String>,
    /// The clusters its placement requires (`allOf`): a placement controller may not take them away.
    pub(super) required: Vec<String>,
    /// The clusters placement controllers took away, with why.
    pub(super) excluded: Vec<Exclusion>,
    /// Its objects on each cluster, in the order of `clusters`.
    pub(super) objects: Vec<Vec<ResourceRecord>>,
    /// The keys (`name+Kind`) of the objects controllers added, by cluster.
    pub(super) added: HashMap<String, BTreeSet<String>>,
    /// The controllers that added or changed each object (by cluster, then key).
    pub(super) changed_by: HashMap<String, BTreeMap<String, Vec<String>>>,
}

impl Deployed {
    /// An app's rendered objects, before any controller ran.
    pub(super) fn rendered(
        app: &str,
        clusters: &[String],
        required: &[String],
        objects: Vec<Vec<ResourceRecord>>,
    ) -> Self {
        Self {
            app: app.to_string(),
            clusters: clusters.to_vec(),
            required: required.to_vec(),
            excluded: Vec::new(),
            objects,
            added: HashMap::new(),
            changed_by: HashMap::new(),
        }
    }
}

impl Deployed {
    /// Adds `record` to the app's objects on its cluster at `index`, before the hooks (EMCO appends an added
    /// object to the cluster's resource order); an object a controller added before under the same key is
    /// replaced; one the app renders itself is refused (a controller changes that one instead).
    pub(super) fn add_object(
        &mut self,
        index: usize,
        record: ResourceRecord,
    ) -> std::result::Result<(), String> {
        let cluster = &self.clusters[index];
        let objects = &mut self.objects[index];
        let same = |existing: &ResourceRecord| {
            existing.name == record.name && existing.kind.eq_ignore_ascii_case(&record.kind)
        };
        if let Some(position) = self.added.get(cluster).and_then(|added| {
            objects
                .iter()
                .position(|existing| same(existing) && added.contains(&existing.key()))
        }) {
            objects[position] = record;
            return Ok(());
        }
        if objects.iter().any(same) {
            return Err(format!(
                "app '{}' already renders {} '{}'",
                self.app, record.kind, record.name
            ));
        }
        let position = objects
            .iter()
            .position(|existing| matches!(existing.role, emco_appcontext::ResourceRole::Hook(_)))
            .unwrap_or(objects.len());
        self.added
            .entry(cluster.clone())
            .or_default()
            .insert(record.key());
        objects.insert(position, record);
        Ok(())
    }

    /// Keeps the clusters at `kept` (indexes into `clusters`, ascending) with their objects; drops the others.
    pub(super) fn keep_clusters(&mut self, kept: &[usize]) {
        let clusters = std::mem::take(&mut self.clusters);
        let objects = std::mem::take(&mut self.objects);
        for (index, (cluster, objects)) in clusters.into_iter().zip(objects).enumerate() {
            if kept.contains(&index) {
                self.clusters.push(cluster);
                self.objects.push(objects);
            } else {
                self.added.remove(&cluster);
                self.changed_by.remove(&cluster);
            }
        }
    }
}

/// An app rendering `object` on two clusters, `p+a` and `p+b` (for the controllers' tests).
#[cfg(test)]
pub(super) fn on_two_clusters(app: &str, object: &serde_json::Value) -> Deployed {
    let record = ResourceRecord::pending_object(object.clone());
    Deployed::rendered(
        app,
        &["p+a".to_string(), "p+b".to_string()],
        &[],
        vec![vec![record.clone()], vec![record]],
    )
}

/// The controllers an instantiation runs, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Plan {
    runs: Vec<Run>,
}

/// One controller with its intent.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    controller: String,
    placement: bool,
    priority: i64,
    work: Work,
}

/// What a controller does, with the intent it read.
#[derive(Debug, Clone, PartialEq)]
enum Work {
    Gac(gac::GacIntent),
    Ovn(ovnaction::OvnIntent),
    /// hpa placement, with the clusters whose nodes it reads.
    HpaPlacement(hpa::HpaIntents, Vec<String>),
    HpaAction(hpa::HpaIntents),
    Dtc(dtc::DtcIntent),
    /// A controller of the user's own, called over HTTPS.
    Webhook(webhooks::Webhook),
}

/// Reads the controllers the DIG at `dig`'s group intents name, with their intents (`namespace`: where the DIG
/// deploys; `app_clusters`: where each app is placed); refuses a controller that is not registered, has no type, or is not one emco has.
pub(super) async fn read_plan(
    catalog: &Catalog,
    dig: &ResourcePath,
    namespace: &str,
    app_clusters: &BTreeMap<String, Vec<String>>,
) -> Result<Plan> {
    let mut named: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (intent_path, intent) in catalog
        .list_as::<GroupIntent>(Kind::GroupIntent, dig.names())
        .await?
    {
        for (controller, controller_intent) in intent.spec.intent {
            if controller != GENERIC_PLACEMENT_INTENT_KEY {
                named.insert(controller, (intent_path.name().to_string(), controller_intent));
            }
        }
    }
    let mut runs = Vec::with_capacity(named.len());
    // hpa's placement and action controllers read the same intents: read once.
    let mut hpa_intents = None;
    for (controller, (group_intent, intent)) in named {
        let registration = ResourcePath::new(Kind::Controller, vec![controller.clone()]);
        let Some(entry) = catalog.find(&registration).await? else {
            return Err(LifecycleError::Controller(format!(
                "intent '{group_intent}' names controller '{controller}', which is not registered: register it under /v2/controllers"
            )));
        };
        let registered: Controller = serde_json::from_value(entry.body).map_err(|err| {
            LifecycleError::Controller(format!(
                "the registration of controller '{controller}' does not read: {err}"
            ))
        })?;
        let placement = match registered.spec.controller_type.as_str() {
            "placement" => true,
            "action" => false,
            other => {
                return Err(LifecycleError::Controller(format!(
                    "intent '{group_intent}' names controller '{controller}', which is registered with type '{}': only action and placement controllers take intents",
                    emco_model::shown(other)
                )));
            }
        };
        let work = match controller.as_str() {
            _ if !registered.spec.url.is_empty() => Work::Webhook(webhooks::Webhook::registered(
                &registered.spec,
                &intent,
                dig,
                placement,
            )),
            gac::CONTROLLER_NAME => Work::Gac(gac::read(catalog, dig, &intent).await?),
            ovnaction::CONTROLLER_NAME => {
                Work::Ovn(ovnaction::read(catalog, dig, &intent, app_clusters).await?)
            }
            dtc::CONTROLLER_NAME => {
                Work::Dtc(dtc::read(catalog, dig, &intent, namespace, app_clusters).await?)
            }
            name if hpa::PLACEMENT_CONTROLLERS.contains(&name) => {
                let intents = read_hpa_once(&mut hpa_intents, catalog, dig).await?;
                let mut clusters: Vec<String> = intents
                    .apps()
                    .filter_map(|app| app_clusters.get(app))
                    .flatten()
                    .cloned()
                    .collect();
                clusters.sort();
                clusters.dedup();
                Work::HpaPlacement(intents, clusters)
            }
            name if hpa::ACTION_CONTROLLERS.contains(&name) => {
                Work::HpaAction(read_hpa_once(&mut hpa_intents, catalog, dig).await?)
            }
            _ => {
                return Err(LifecycleError::Controller(format!(
                    "intent '{group_intent}' names controller '{controller}', which emco does not have (built in: {})",
                    built_in()
                )));
            }
        };
        runs.push(Run {
            controller,
            placement,
            priority: registered.spec.priority,
            work,
        });
    }
    runs.sort_by(|a, b| {
        (!a.placement, a.priority, &a.controller).cmp(&(!b.placement, b.priority, &b.controller))
    });
    Ok(Plan { runs })
}

/// The DIG's hpa intents, read from the catalog the first time they are asked for.
async fn read_hpa_once(
    read: &mut Option<hpa::HpaIntents>,
    catalog: &Catalog,
    dig: &ResourcePath,
) -> Result<hpa::HpaIntents> {
    if let Some(intents) = read {
        return Ok(intents.clone());
    }
    let intents = hpa::read(catalog, dig).await?;
    *read = Some(intents.clone());
    Ok(intents)
}

impl Plan {
    /// The URLs the plan's intents take patch values from, each once.
    pub(super) fn patch_value_urls(&self) -> Vec<String> {
        let mut urls = BTreeSet::new();
        for run in &self.runs {
            if let Work::Gac(intent) = &run.work {
                urls.extend(gac::patch_value_urls(intent));
            }
        }
        urls.into_iter().collect()
    }

    /// The clusters whose nodes the plan's placement controllers read.
    pub(super) fn node_clusters(&self) -> Vec<String> {
        let mut clusters: Vec<String> = self
            .runs
            .iter()
            .filter_map(|run| match &run.work {
                Work::HpaPlacement(_, clusters) => Some(clusters.iter().cloned()),
                _ => None,
            })
            .flatten()
            .collect();
        clusters.sort();
        clusters.dedup();
        clusters
    }
    /// How many controllers the plan runs.
    pub(super) fn len(&self) -> usize {
        self.runs.len()
    }

    /// The webhook controller at `index` of the plan, with its name, if that run is one.
    pub(super) fn webhook(&self, index: usize) -> Option<(&str, &webhooks::Webhook)> {
        match &self.runs.get(index)?.work {
            Work::Webhook(webhook) => Some((self.runs[index].controller.as_str(), webhook)),
            _ => None,
        }
    }
}

/// Runs the plan's built-in controllers from run `from` on, in order, over the apps' objects (`asked`: what they
/// learned beforehand), up to the first webhook controller (whose index it answers; the plan's length when none is
/// left), noting which controller added or changed each object (`Deployed::changed_by`).
pub(super) fn run_built_in(plan: &Plan, from: usize, apps: &mut [Deployed], asked: &Asked) -> Result<usize> {
    for (index, run) in plan.runs.iter().enumerate().skip(from) {
        let outcome = match &run.work {
            Work::Webhook(_) => return Ok(index),
            Work::Gac(intent) => noting(apps, &run.controller, |apps| {
                gac::apply(intent, apps, &asked.values)
            }),
            Work::Ovn(intent) => noting(apps, &run.controller, |apps| ovnaction::apply(intent, apps)),
            Work::HpaPlacement(intents, _) => noting(apps, &run.controller, |apps| {
                hpa::place(intents, apps, &asked.nodes, &run.controller)
            }),
            Work::HpaAction(intents) => noting(apps, &run.controller, |apps| hpa::act(intents, apps)),
            Work::Dtc(intent) => noting(apps, &run.controller, |apps| dtc::apply(intent, apps)),
        };
        outcome.map_err(|message| LifecycleError::Action {
            controller: run.controller.clone(),
            message,
        })?;
    }
    Ok(plan.runs.len())
}

/// Applies the answer of the webhook controller at `index` of the plan to the apps' objects.
pub(super) fn apply_webhook_answer(
    plan: &Plan,
    index: usize,
    apps: &mut [Deployed],
    answer: &[u8],
) -> Result<()> {
    let Some((controller, webhook)) = plan.webhook(index) else {
        return Ok(());
    };
    noting(apps, controller, |apps| {
        webhooks::apply(webhook, controller, answer, apps)
    })
    .map_err(|message| LifecycleError::Action {
        controller: controller.to_string(),
        message,
    })
}

/// Runs `change` over the apps, then notes `controller` against every object it added or changed.
fn noting(
    apps: &mut [Deployed],
    controller: &str,
    change: impl FnOnce(&mut [Deployed]) -> std::result::Result<(), String>,
) -> std::result::Result<(), String> {
    let before: Vec<HashMap<String, Vec<ResourceRecord>>> = apps
        .iter()
        .map(|app| {
            app.clusters
                .iter()
                .cloned()
                .zip(app.objects.iter().cloned())
                .collect()
        })
        .collect();
    change(apps)?;
    for (app, before) in apps.iter_mut().zip(before) {
        record_changes(app, &before, controller);
    }
    Ok(())
}

/// Notes `controller` against every object of `app` that is new or different since `before` (by cluster).
fn record_changes(app: &mut Deployed, before: &HashMap<String, Vec<ResourceRecord>>, controller: &str) {
    for (cluster, objects) in app.clusters.iter().zip(&app.objects) {
        let before = before.get(cluster).map(Vec::as_slice).unwrap_or_default();
        for object in objects {
            let unchanged = before.iter().any(|old| {
                old.name == object.name
                    && old.kind == object.kind
                    && old.manifest.as_str() == object.manifest.as_str()
            });
            if !unchanged {
                app.changed_by
                    .entry(cluster.clone())
                    .or_default()
                    .entry(object.key())
                    .or_default()
                    .push(controller.to_string());
            }
        }
    }
}
