//! The combined-status index: for each AppContext a caller registered (its DIG's status collection intents and
//! their compiled collectors), every object some intent selects, with each cluster's row already evaluated for
//! each collector and each collector's table already combined.
//!
//! Incremental: a cluster's (app, cluster) record changes → only that cluster's rows of the app's selected objects
//! are re-evaluated (a few CEL programs each), then those objects' tables are combined again from the cached rows
//! (no CEL); a query only reads tables. Contexts nobody registered cost nothing: their changes are skipped at the
//! first lookup. This keeps what combined status needs — the index of `index.rs` holds no manifests.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::Env;
use emco_appcontext::{ClusterRecord, ContextChange, ResourceRecord};
use emco_model::status_collector::StatusCollectionIntent;
use emco_model::{ContextId, Gvk};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value as Json;

use super::compile::{CompiledCollector, environment};
use super::table::{CollectorResult, RowEval, RowVariables, combine, evaluate_row};
use super::value::json_to_cel;

/// What the combined status of one context is made of: the DIG's status collection intents, the compiled collectors
/// they name, and the clusters' labels.
#[derive(Debug)]
pub struct Registration {
    /// The intents, in creation order.
    pub intents: Vec<StatusCollectionIntent>,
    /// The collectors the intents name (those that exist), by name.
    pub collectors: HashMap<String, Arc<CompiledCollector>>,
    /// Each cluster's (`provider+cluster`) labels, for `inventory.labels`.
    pub cluster_labels: HashMap<String, Vec<String>>,
    /// Identifies the intents and collectors this was built from: a caller re-registers when it differs.
    pub fingerprint: String,
}

impl Registration {
    /// The collectors applied to an object whose manifest carries `labels` (the union over the intents selecting
    /// it, in intent order), or `None` when no intent names a collector for it.
    fn collectors_for(
        &self,
        app: &str,
        resource: &ResourceRecord,
        labels: &Json,
    ) -> Option<Vec<Arc<CompiledCollector>>> {
        let mut found: Vec<Arc<CompiledCollector>> = Vec::new();
        for intent in &self.intents {
            if !intent.selects(app, &resource.kind, &resource.name, labels) {
                continue;
            }
            for name in &intent.spec.status_collectors {
                if let Some(collector) = self.collectors.get(name)
                    && !found.iter().any(|known| known.name == collector.name)
                {
                    found.push(collector.clone());
                }
            }
        }
        (!found.is_empty()).then_some(found)
    }
}

/// An object by app, name and kind (the answer's order).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The app.
    pub app: String,
    /// `metadata.name`.
    pub name: String,
    /// `kind`.
    pub kind: String,
}

/// One selected object: its rows per cluster and its tables.
#[derive(Debug)]
pub struct ObjectState {
    /// Its group, version and kind.
    pub gvk: Gvk,
    collectors: Vec<Arc<CompiledCollector>>,
    /// cluster → one evaluation per collector (in `collectors` order).
    rows: BTreeMap<String, Vec<RowEval>>,
    /// One table per collector.
    pub results: Vec<CollectorResult>,
}

impl ObjectState {
    fn recombine(&mut self) {
        self.results = self
            .collectors
            .iter()
            .enumerate()
            .map(|(i, collector)| {
                combine(
                    collector,
                    self.rows
                        .iter()
                        .filter_map(|(cluster, evals)| evals.get(i).map(|eval| (cluster.as_str(), eval))),
                )
            })
            .collect();
    }

    /// How many clusters have a row.
    #[must_use]
    pub fn clusters(&self) -> usize {
        self.rows.len()
    }
}

#[derive(Debug)]
struct ContextState {
    registration: Arc<Registration>,
    objects: BTreeMap<ObjectKey, ObjectState>,
}

/// Which objects and collectors an answer shows.
#[derive(Debug, Clone, Default)]
pub struct CombinedFilter {
    /// Only this app's objects.
    pub app: Option<String>,
    /// Only this object: (name, kind).
    pub resource: Option<(String, String)>,
    /// Only this collector's table.
    pub collector: Option<String>,
}

/// The combined-status index (see the module doc).
pub struct CombinedIndex {
    env: Arc<Env>,
    contexts: HashMap<ContextId, ContextState>,
}

impl std::fmt::Debug for CombinedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CombinedIndex")
            .field("contexts", &self.contexts)
            .finish_non_exhaustive()
    }
}

impl Default for CombinedIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl CombinedIndex {
    /// An empty index.
    #[must_use]
    pub fn new() -> Self {
        Self {
            env: environment(),
            contexts: HashMap::new(),
        }
    }

    /// The CEL environment collectors must be compiled in.
    #[must_use]
    pub fn env(&self) -> &Arc<Env> {
        &self.env
    }

    /// The registration of a context, if any.
    #[must_use]
    pub fn registration(&self, id: ContextId) -> Option<&Registration> {
        self.contexts.get(&id).map(|state| &*state.registration)
    }

    /// Registers (or replaces) what a context's combined status is made of; its rows start empty, to be filled by
    /// [`CombinedIndex::apply_record`] for each of its current records, then kept by [`CombinedIndex::apply`].
    pub fn register(&mut self, id: ContextId, registration: Registration) {
        self.contexts.insert(
            id,
            ContextState {
                registration: Arc::new(registration),
                objects: BTreeMap::new(),
            },
        );
    }

    /// Forgets every row (the registrations stay), before a full reload applies every record again.
    pub fn clear_rows(&mut self) {
        for state in self.contexts.values_mut() {
            state.objects.clear();
        }
    }

    /// Applies one change of the store (changes of unregistered contexts cost one lookup).
    pub fn apply(&mut self, change: &ContextChange) {
        match change {
            ContextChange::Cluster(id, record) => self.apply_record(*id, record),
            ContextChange::MetaDeleted(id) => {
                self.contexts.remove(id);
            }
            // A heartbeat changes no row: `propagation.lastReturnedUpdateTimestamp` is the last status update.
            ContextChange::Heard { .. } => {}
            ContextChange::ClusterDeleted { id, app, cluster } => {
                if let Some(state) = self.contexts.get_mut(id) {
                    for (key, object) in &mut state.objects {
                        if key.app == *app && object.rows.remove(cluster).is_some() {
                            object.recombine();
                        }
                    }
                }
            }
            ContextChange::Meta(meta) => {
                if let Some(state) = self.contexts.get_mut(&meta.id) {
                    for (key, object) in &mut state.objects {
                        let placed = meta.apps.iter().find(|app| app.name == key.app);
                        let before = object.rows.len();
                        object
                            .rows
                            .retain(|cluster, _| placed.is_some_and(|app| app.clusters.contains(cluster)));
                        if object.rows.len() != before {
                            object.recombine();
                        }
                    }
                }
            }
        }
    }

    /// Applies an (app, cluster) record of a registered context: the rows of that cluster for every selected object
    /// of the app are evaluated again and those objects' tables combined again.
    pub fn apply_record(&mut self, id: ContextId, record: &ClusterRecord) {
        let Some(state) = self.contexts.get_mut(&id) else {
            return;
        };
        let registration = state.registration.clone();
        let inventory = inventory_value(record, &registration);
        let propagation = json_to_cel(&match &record.heard_at {
            Some(heard_at) => serde_json::json!({ "lastReturnedUpdateTimestamp": heard_at }),
            None => serde_json::json!({}),
        });
        let bundle = record.heard_status();
        for resource in &record.resources {
            let manifest = resource.object();
            let labels = &manifest["metadata"]["labels"];
            let Some(collectors) = registration.collectors_for(&record.app, resource, labels) else {
                continue;
            };
            let gvk = resource.gvk();
            let Some(variables) = RowVariables::new(
                inventory.clone(),
                json_to_cel(&staged_object(&manifest)),
                json_to_cel(&returned_value(bundle.as_ref(), &gvk, &resource.name)),
                propagation.clone(),
            ) else {
                continue;
            };
            let key = ObjectKey {
                app: record.app.clone(),
                name: resource.name.clone(),
                kind: resource.kind.clone(),
            };
            let object = state.objects.entry(key).or_insert_with(|| ObjectState {
                gvk: gvk.clone(),
                collectors: Vec::new(),
                rows: BTreeMap::new(),
                results: Vec::new(),
            });
            let same = object.collectors.len() == collectors.len()
                && object
                    .collectors
                    .iter()
                    .zip(&collectors)
                    .all(|(a, b)| Arc::ptr_eq(a, b));
            if !same {
                // The set of collectors changed (another record said more labels): rows made for the old set go.
                object.rows.clear();
                object.collectors = collectors;
            }
            let evals = object
                .collectors
                .iter()
                .map(|collector| evaluate_row(&self.env, collector, &variables))
                .collect();
            object.gvk = gvk;
            object.rows.insert(record.cluster.clone(), evals);
            object.recombine();
        }
    }

    /// The selected objects of a context, in (app, name, kind) order.
    pub fn objects(&self, id: ContextId) -> impl Iterator<Item = (&ObjectKey, &ObjectState)> + '_ {
        self.contexts
            .get(&id)
            .into_iter()
            .flat_map(|state| state.objects.iter())
    }

    /// Writes the answer of `GET …/combined-status` for a context (`[]` when it is not registered) as JSON:
    /// `[{"app","resource":{"GVK","name"},"results":[{"name","columnNames","rows":[{"columns":[…]}]}]}]`.
    pub fn write_answer(
        &self,
        id: Option<ContextId>,
        filter: &CombinedFilter,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        let objects: Vec<ObjectView<'_>> = id
            .map(|id| {
                self.objects(id)
                    .filter(|(key, _)| filter.app.as_ref().is_none_or(|app| *app == key.app))
                    .filter(|(key, _)| {
                        filter
                            .resource
                            .as_ref()
                            .is_none_or(|(name, kind)| *name == key.name && *kind == key.kind)
                    })
                    .map(|(key, object)| ObjectView {
                        key,
                        object,
                        collector: filter.collector.as_deref(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        serde_json::to_writer(out, &objects)
    }
}

/// One object of the answer.
struct ObjectView<'a> {
    key: &'a ObjectKey,
    object: &'a ObjectState,
    collector: Option<&'a str>,
}

impl Serialize for ObjectView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("app", &self.key.app)?;
        map.serialize_entry(
            "resource",
            &serde_json::json!({"GVK": &self.object.gvk, "name": &self.key.name}),
        )?;
        let results: Vec<&CollectorResult> = self
            .object
            .results
            .iter()
            .filter(|result| self.collector.is_none_or(|only| only == result.name))
            .collect();
        map.serialize_entry("results", &results)?;
        map.end()
    }
}

/// `inventory`: `name` (`provider+cluster`), `provider`, `cluster`, `labels`.
fn inventory_value(record: &ClusterRecord, registration: &Registration) -> cel::Value {
    let labels = registration
        .cluster_labels
        .get(&record.cluster)
        .cloned()
        .unwrap_or_default();
    json_to_cel(&serde_json::json!({
        "name": record.cluster,
        "provider": record.provider(),
        "cluster": record.cluster_name(),
        "labels": labels,
    }))
}

/// The object as staged, without `status`.
#[must_use]
pub fn staged_object(manifest: &Json) -> Json {
    let mut object = manifest.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    object
}

/// The object as the cluster reported it in its ResourceBundleState (typed arrays hold the object; generic
/// entries hold it under `res`), if it did.
#[must_use]
pub fn reported_object<'a>(bundle: Option<&'a Json>, gvk: &Gvk, name: &str) -> Option<&'a Json> {
    let entry = emco_k8s::bundle::find_object(bundle?, &gvk.group, &gvk.kind, name)?;
    Some(entry.get("res").unwrap_or(entry))
}

/// `returned`: `{"status": …}` as reported, `{}` when the cluster did not report the object (or its status).
fn returned_value(bundle: Option<&Json>, gvk: &Gvk, name: &str) -> Json {
    match reported_object(bundle, gvk, name).and_then(|object| object.get("status")) {
        Some(status) => serde_json::json!({ "status": status }),
        None => serde_json::json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::super::compile::compile_collector;
    use super::*;
    use emco_appcontext::JsonText;
    use emco_model::status_collector::StatusCollectorSpec;

    fn record(cluster: &str, available: i64) -> ClusterRecord {
        let manifest = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 2}, "status": {"stale": true}});
        let mut record = ClusterRecord::pending(
            "app",
            cluster,
            vec![
                ResourceRecord::pending("web", "Deployment", "apps/v1", manifest),
                ResourceRecord::pending(
                    "other",
                    "ConfigMap",
                    "v1",
                    serde_json::json!({"kind": "ConfigMap"}),
                ),
            ],
        );
        record.cluster_status = Some(JsonText::from(serde_json::json!({"deploymentStatuses": [
            {"metadata": {"name": "web"}, "status": {"availableReplicas": available}}]})));
        record.heard_at = Some("2026-11-23T20:00:00Z".into());
        record
    }

    fn index_with(spec: serde_json::Value) -> (CombinedIndex, ContextId) {
        let mut index = CombinedIndex::new();
        let id = ContextId::new(1).unwrap();
        let spec: StatusCollectorSpec = serde_json::from_value(spec).unwrap();
        let collector = Arc::new(compile_collector(index.env(), "c", &spec).unwrap());
        let intent: StatusCollectionIntent = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "i"},
            "spec": {"resources": [{"kind": "Deployment", "name": "web"}], "statusCollectors": ["c"]}}))
        .unwrap();
        index.register(
            id,
            Registration {
                intents: vec![intent],
                collectors: HashMap::from([("c".to_string(), collector)]),
                cluster_labels: HashMap::from([("p+a".to_string(), vec!["edge".to_string()])]),
                fingerprint: "f".into(),
            },
        );
        (index, id)
    }

    fn rows(index: &CombinedIndex, id: ContextId) -> Vec<Vec<String>> {
        let (_, object) = index.objects(id).next().unwrap();
        object.results[0]
            .rows
            .iter()
            .map(|row| {
                row.columns
                    .iter()
                    .map(super::super::value::Cell::display)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn one_clusters_report_changes_only_its_row() {
        let (mut index, id) = index_with(serde_json::json!({
            "groupBy": [{"name": "n", "def": "returned.status.availableReplicas"}],
            "combinedFields": [{"name": "count", "type": "COUNT"}]}));
        for cluster in ["p+a", "p+b", "p+c"] {
            index.apply_record(id, &record(cluster, 2));
        }
        assert_eq!(index.objects(id).count(), 1, "only the selected object is kept");
        assert_eq!(rows(&index, id), [["2", "3"]]);
        index.apply_record(id, &record("p+b", 1));
        assert_eq!(rows(&index, id), [["1", "1"], ["2", "2"]]);
        index.apply(&ContextChange::ClusterDeleted {
            id,
            app: "app".into(),
            cluster: "p+b".into(),
        });
        assert_eq!(rows(&index, id), [["2", "2"]]);
        // An unregistered context costs nothing and shows nothing.
        let other = ContextId::new(2).unwrap();
        index.apply_record(other, &record("p+a", 2));
        assert_eq!(index.objects(other).count(), 0);
        let mut body = Vec::new();
        index
            .write_answer(Some(other), &CombinedFilter::default(), &mut body)
            .unwrap();
        assert_eq!(body, b"[]");
        index.apply(&ContextChange::MetaDeleted(id));
        assert!(index.registration(id).is_none());
    }

    #[test]
    fn the_seed_variables_are_what_the_cluster_and_the_context_say() {
        let (mut index, id) = index_with(serde_json::json!({"select": [
            {"name": "name", "def": "inventory.name"},
            {"name": "cluster", "def": "inventory.cluster"},
            {"name": "labels", "def": "inventory.labels"},
            {"name": "staged", "def": "has(obj.status)"},
            {"name": "available", "def": "returned.status.availableReplicas"},
            {"name": "time", "def": "propagation.lastReturnedUpdateTimestamp"}]}));
        index.apply_record(id, &record("p+a", 1));
        assert_eq!(
            rows(&index, id),
            [["p+a", "a", "[\"edge\"]", "false", "1", "2026-11-23T20:00:00Z"]]
        );
        let mut body = Vec::new();
        let filter = CombinedFilter {
            resource: Some(("web".into(), "Deployment".into())),
            ..CombinedFilter::default()
        };
        index.write_answer(Some(id), &filter, &mut body).unwrap();
        let answer: Json = serde_json::from_slice(&body).unwrap();
        assert_eq!(answer[0]["app"], "app");
        assert_eq!(
            answer[0]["resource"],
            serde_json::json!({"GVK": {"Group": "apps", "Version": "v1", "Kind": "Deployment"}, "name": "web"})
        );
        assert_eq!(answer[0]["results"][0]["columnNames"][0], "name");
        let filter = CombinedFilter {
            collector: Some("nope".into()),
            ..CombinedFilter::default()
        };
        body.clear();
        index.write_answer(Some(id), &filter, &mut body).unwrap();
        let answer: Json = serde_json::from_slice(&body).unwrap();
        assert_eq!(answer[0]["results"], serde_json::json!([]));
    }
}
