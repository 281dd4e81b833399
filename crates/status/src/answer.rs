//! Writing a status answer straight from the index into JSON, in the seeds' shape (hyphenated keys,
//! `state.Actions`) or EMCO 22.x's (camelCase keys, `states`, `connectivity`), with the seeds' key order.
//! Beyond both, a cluster rsync is retrying says why: `connectivityReason` beside EMCO 22.x's `connectivity`, and
//! `connectivity` with `connectivity-reason` in the seed shape's `output=detail`; absent when there is no reason.
//! Three subjects share the code: a deployment intent group, the network intents of one cluster (whose EMCO 22.x
//! answer holds a single `cluster` object instead of `apps`) and a logical cloud (whose EMCO 22.x answer lifts the
//! `logical-cloud` app's clusters to `clusters`).
//!
//! Beyond both, a cluster of a live context that has not been heard from for longer than the request's grace is
//! stale ([`crate::freshness`]): in cluster/ready answers its resources' cluster status and readiness are `Unknown`
//! (counted so), the answer's `readyStatus` is NotReady, and its entry says so: `statusFresh: false` and
//! `statusMessage` (seed shape: `status-fresh`, `status-message`), with `lastHeard` (seed shape: `last-heard`, in
//! `output=detail` only). Answers about fresh clusters are unchanged.
//!
//! Beyond both, a resource whose kind has a status config carries `statusRemote` (the value at the config's
//! `statusPath`, or the whole status) in EMCO 22.x's cluster/ready answers and in every `output=detail` answer,
//! unless its cluster is stale; a resource whose kind's collection is disabled says `statusCollection: Disabled`
//! (seed shape: `status-collection`) in cluster/ready answers.
//!
//! Counts are written before the resources they count, so a filtered query makes two passes over what it selects:
//! one to count, one to write; an unfiltered summary reads only the context's counters.

use std::collections::BTreeSet;

use emco_k8s::readiness::Health;
use emco_k8s::secret::redact_secret_values;
use emco_model::{
    ClusterResourceStatus, Connectivity, ContextId, ContextStatus, ReadyStatus, RsyncStatus, StateInfo,
    StateValue,
};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value as Json;

use crate::freshness::{Freshness, Staleness, judge};
use crate::index::{AppEntry, ClusterEntry, ContextEntry, Counts, ResourceEntry, Verdict};
use crate::query::{ConditionsShown, ListQuery, Measure, Output, Shape, StatusQuery, SubjectKind};
use crate::state::state_object;

/// The one app of a logical cloud's AppContext, the only one its list queries look at.
const LOGICAL_CLOUD_APP: &str = "logical-cloud";

/// The identity of the DIG a status is about.
#[derive(Debug, Clone, Copy)]
pub struct DigIdentity<'a> {
    /// Project.
    pub project: &'a str,
    /// Composite app.
    pub composite_app: &'a str,
    /// Composite app version.
    pub version: &'a str,
    /// Composite profile.
    pub composite_profile: &'a str,
    /// The DIG's name.
    pub name: &'a str,
}

/// What a status answers for.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A deployment intent group.
    Dig(DigIdentity<'a>),
    /// The network intents of one cluster: one app `network-intents` on the cluster `provider+cluster`.
    ClusterNetworks {
        /// Cluster provider.
        provider: &'a str,
        /// The cluster's name.
        cluster: &'a str,
    },
    /// A logical cloud: one app `logical-cloud` with one cluster per cluster reference.
    LogicalCloud {
        /// Project.
        project: &'a str,
        /// The logical cloud's name.
        name: &'a str,
    },
}

impl Subject<'_> {
    /// The kind of subject, which decides the parameters it takes ([`crate::parse_query_for`]).
    #[must_use]
    pub fn kind(&self) -> SubjectKind {
        match self {
            Self::Dig(_) => SubjectKind::Dig,
            Self::ClusterNetworks { .. } => SubjectKind::ClusterNetworks,
            Self::LogicalCloud { .. } => SubjectKind::LogicalCloud,
        }
    }
}

impl<'a> From<DigIdentity<'a>> for Subject<'a> {
    fn from(identity: DigIdentity<'a>) -> Self {
        Self::Dig(identity)
    }
}

/// Where `output=detail` finds the object of a resource: the rendered manifest (deployed) or the object the
/// cluster reported (cluster/ready). The answer redacts Secret values from whatever a source returns
/// ([`emco_k8s::secret::redact_secret_values`]), so a source need not (and cannot forget to).
pub trait DetailSource {
    /// The object for `resource` of `app` on `cluster` (`provider+cluster`), if known.
    fn detail(&self, app: &str, cluster: &str, resource: &ResourceEntry, measure: Measure) -> Option<Json>;
}

/// No details (for queries that do not ask for them).
#[derive(Debug, Clone, Copy)]
pub struct NoDetail;

impl DetailSource for NoDetail {
    fn detail(&self, _: &str, _: &str, _: &ResourceEntry, _: Measure) -> Option<Json> {
        None
    }
}

/// Everything an answer is made of.
pub struct StatusRequest<'a> {
    /// What the status is of.
    pub subject: Subject<'a>,
    /// Its lifecycle history.
    pub state: &'a StateInfo,
    /// The context queried (latest, or `instance`), `None` before the first instantiate.
    pub context: Option<(ContextId, &'a ContextEntry)>,
    /// The checked query.
    pub query: &'a StatusQuery,
    /// Details for `output=detail`.
    pub detail: &'a dyn DetailSource,
    /// The clock and grace stale clusters are judged by; `None` judges none stale.
    pub freshness: Option<Freshness>,
}

/// Writes the answer to `request` as JSON into `out`.
pub fn write_status(request: &StatusRequest<'_>, out: impl std::io::Write) -> serde_json::Result<()> {
    serde_json::to_writer(out, &Answer(request))
}

/// Which apps an answer looks at.
#[derive(Clone, Copy)]
enum AppFilter<'a> {
    /// These (the `app` filter; empty: all).
    Named(&'a [String]),
    /// Only this one.
    Only(&'static str),
}

/// Which resources the filters keep.
struct Selection<'a> {
    query: &'a StatusQuery,
    apps: AppFilter<'a>,
}

impl<'a> Selection<'a> {
    /// The selection of the full status: the `app` filter applies to a DIG only.
    fn full(request: &StatusRequest<'a>) -> Self {
        let apps = match request.subject {
            Subject::Dig(_) => request.query.apps.as_slice(),
            Subject::ClusterNetworks { .. } | Subject::LogicalCloud { .. } => &[],
        };
        Self {
            query: request.query,
            apps: AppFilter::Named(apps),
        }
    }

    /// The selection of a list query: dcm lists its `logical-cloud` app only.
    fn list(request: &StatusRequest<'a>) -> Self {
        match request.subject {
            Subject::LogicalCloud { .. } => Self {
                query: request.query,
                apps: AppFilter::Only(LOGICAL_CLOUD_APP),
            },
            Subject::Dig(_) | Subject::ClusterNetworks { .. } => Self::full(request),
        }
    }

    fn all_apps(&self) -> bool {
        matches!(self.apps, AppFilter::Named(names) if names.is_empty())
    }

    fn app(&self, app: &AppEntry) -> bool {
        match self.apps {
            AppFilter::Named(names) => names.is_empty() || names.iter().any(|name| **name == *app.name),
            AppFilter::Only(name) => *app.name == *name,
        }
    }

    fn cluster(&self, cluster: &ClusterEntry) -> bool {
        self.query.clusters.is_empty()
            || self
                .query
                .clusters
                .iter()
                .any(|name| **name == *cluster.full_name)
    }

    fn resource(&self, resource: &ResourceEntry) -> bool {
        self.query.resources.is_empty() || self.query.resources.iter().any(|name| **name == *resource.name)
    }

    /// The selected entries of a cluster: its AppContext resources, and for cluster status and readiness also
    /// the objects only the cluster reports.
    fn resources<'c>(&'c self, cluster: &'c ClusterEntry) -> impl Iterator<Item = &'c ResourceEntry> + 'c {
        let extras: &[ResourceEntry] = if self.query.measure == Measure::Cluster {
            &cluster.cluster_only
        } else {
            &[]
        };
        cluster
            .resources
            .iter()
            .chain(extras)
            .filter(move |resource| self.resource(resource))
    }

    fn cluster_has_resources(&self, cluster: &ClusterEntry) -> bool {
        self.cluster(cluster) && self.resources(cluster).next().is_some()
    }

    fn app_has_resources(&self, app: &AppEntry) -> bool {
        self.app(app)
            && app
                .clusters
                .iter()
                .any(|cluster| self.cluster_has_resources(cluster))
    }

    /// The counts of the selected resources, from the counters wherever the filters allow.
    fn counts(&self, context: &ContextEntry) -> Counts {
        let query = self.query;
        if self.all_apps() && query.clusters.is_empty() && query.resources.is_empty() {
            return context.counts;
        }
        let mut counts = Counts::default();
        for app in context.apps.iter().filter(|app| self.app(app)) {
            if query.clusters.is_empty() && query.resources.is_empty() {
                add(&mut counts, &app.counts);
                continue;
            }
            for cluster in app.clusters.iter().filter(|cluster| self.cluster(cluster)) {
                if query.resources.is_empty() {
                    add(&mut counts, &cluster.counts);
                } else {
                    for resource in cluster.resources.iter().filter(|r| self.resource(r)) {
                        counts.count(resource);
                    }
                    for resource in cluster.cluster_only.iter().filter(|r| self.resource(r)) {
                        counts.count_cluster_only(resource);
                    }
                }
            }
        }
        counts
    }

    /// The counts of the selected resources, with the reports of stale clusters counted as `Unknown`.
    fn tally(&self, context: &ContextEntry, staleness: &Staleness<'_>) -> Tally {
        let mut tally = Tally {
            counts: self.counts(context),
            ready_unknown: 0,
            any_stale: false,
        };
        if !staleness.any_stale() {
            return tally;
        }
        for app in context.apps.iter().filter(|app| self.app(app)) {
            for cluster in app.clusters.iter().filter(|cluster| {
                staleness.is_stale(&cluster.full_name) && self.cluster_has_resources(cluster)
            }) {
                tally.any_stale = true;
                let mut own = Counts::default();
                for resource in cluster.resources.iter().filter(|r| self.resource(r)) {
                    own.count(resource);
                }
                for resource in cluster.cluster_only.iter().filter(|r| self.resource(r)) {
                    own.count_cluster_only(resource);
                }
                for (total, stale) in tally.counts.cluster.iter_mut().zip(own.cluster) {
                    *total = total.saturating_sub(stale);
                }
                tally.counts.cluster[ClusterResourceStatus::Unknown as usize] +=
                    own.cluster.iter().sum::<u32>();
                for (total, stale) in tally.counts.ready.iter_mut().zip(own.ready) {
                    *total = total.saturating_sub(stale);
                }
                tally.ready_unknown += own.ready.iter().sum::<u32>();
            }
        }
        tally
    }
}

/// The counts an answer writes.
struct Tally {
    /// By rsync status, cluster status (stale clusters' under `Unknown`) and readiness (fresh clusters' only).
    counts: Counts,
    /// Resources of stale clusters that had a readiness.
    ready_unknown: u32,
    /// Whether a selected cluster is stale.
    any_stale: bool,
}

/// Readiness of a resource of a stale cluster, and its key in `readyCounts`.
const UNKNOWN: &str = "Unknown";

fn add(total: &mut Counts, more: &Counts) {
    for (a, b) in total.rsync.iter_mut().zip(more.rsync) {
        *a += b;
    }
    for (a, b) in total.cluster.iter_mut().zip(more.cluster) {
        *a += b;
    }
    for (a, b) in total.ready.iter_mut().zip(more.ready) {
        *a += b;
    }
}

/// A map of the non-zero counts, keyed by status name, in status order.
struct CountMap<'a>(&'a [u32], &'a [&'static str]);

impl Serialize for CountMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (count, name) in self.0.iter().zip(self.1) {
            if *count > 0 {
                map.serialize_entry(name, count)?;
            }
        }
        map.end()
    }
}

fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().map(|value| name(*value)).collect()
}

struct Answer<'a, 'b>(&'b StatusRequest<'a>);

impl Serialize for Answer<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.0;
        let query = request.query;
        let kind = request.subject.kind();
        // ncm has only the full query; dcm has no apps list.
        let list = match (kind, query.list) {
            (SubjectKind::ClusterNetworks, _) | (SubjectKind::LogicalCloud, Some(ListQuery::Apps)) => None,
            (_, list) => list,
        };
        if let Some(list) = list {
            return ListAnswer { request, list }.serialize(serializer);
        }
        let seed = query.shape == Shape::Seed;
        let mut map = serializer.serialize_map(None)?;
        if seed {
            write_seed_identity(&mut map, request.subject)?;
            map.serialize_entry("state", request.state)?;
        } else {
            write_emco22_identity(&mut map, request.subject)?;
            map.serialize_entry(
                "states",
                &States {
                    state: request.state,
                    kind,
                },
            )?;
        }
        // EMCO 22.x's ncm answer always has its `cluster`, `{}` when there is nothing to show.
        let single_cluster = !seed && kind == SubjectKind::ClusterNetworks;
        // The state object (seed 002), when asked for, comes last in every shape: the keys before it keep their
        // order and answers that do not ask are unchanged.
        let readiness = |map: &mut S::SerializeMap, context: Option<&ContextEntry>| {
            if query.readiness {
                let mut object = state_object(kind, request.state, context, request.freshness);
                if let Subject::Dig(dig) = request.subject {
                    object.name_update_url(&format!(
                        "/v2/projects/{}/composite-apps/{}/{}/deployment-intent-groups/{}/update",
                        dig.project, dig.composite_app, dig.version, dig.name
                    ));
                }
                map.serialize_entry("readiness", &object)
            } else {
                Ok(())
            }
        };
        let Some((_, context)) = request.context else {
            if single_cluster {
                map.serialize_entry("cluster", &EmptyObject)?;
            }
            readiness(&mut map, None)?;
            return map.end();
        };
        let selection = Selection::full(request);
        let staleness = match query.measure {
            Measure::Cluster => judge(context, request.freshness),
            Measure::Deployed => Staleness::default(),
        };
        let tally = selection.tally(context, &staleness);
        let counts = tally.counts;
        let rsync_names = names(RsyncStatus::ALL, RsyncStatus::as_str);
        match (seed, query.measure) {
            (true, Measure::Deployed) => {
                map.serialize_entry("status", &context.status)?;
                map.serialize_entry("rsync-status", &CountMap(&counts.rsync, &rsync_names))?;
            }
            (true, Measure::Cluster) => {
                let cluster_names = names(ClusterResourceStatus::ALL, ClusterResourceStatus::as_str);
                map.serialize_entry("status", &context.status)?;
                map.serialize_entry("cluster-status", &CountMap(&counts.cluster, &cluster_names))?;
            }
            (false, Measure::Deployed) => {
                map.serialize_entry("deployedStatus", &context.status)?;
                if counts.rsync.iter().any(|count| *count > 0) {
                    map.serialize_entry("deployedCounts", &CountMap(&counts.rsync, &rsync_names))?;
                }
            }
            (false, Measure::Cluster) => {
                let mut ready_names = names(ReadyStatus::ALL, ReadyStatus::as_str);
                ready_names.push(UNKNOWN);
                let ready_counts: Vec<u32> = counts
                    .ready
                    .iter()
                    .copied()
                    .chain([tally.ready_unknown])
                    .collect();
                let not_ready = counts.ready[ReadyStatus::NotReady as usize]
                    + counts.ready[ReadyStatus::NotPresent as usize];
                let aggregate = if not_ready > 0 || tally.any_stale {
                    ReadyStatus::NotReady
                } else {
                    ReadyStatus::Ready
                };
                map.serialize_entry("deployedStatus", &context.status)?;
                map.serialize_entry("readyStatus", &aggregate)?;
                if ready_counts.iter().any(|count| *count > 0) {
                    map.serialize_entry("readyCounts", &CountMap(&ready_counts, &ready_names))?;
                }
            }
        }
        if let Some(progress) = &context.rollout {
            map.serialize_entry("rollout", &RolloutView(progress))?;
        }
        if query.output == Output::Summary {
            if single_cluster {
                map.serialize_entry("cluster", &EmptyObject)?;
            }
            readiness(&mut map, Some(context))?;
            return map.end();
        }
        let apps = Apps {
            request,
            context,
            selection: &selection,
            staleness: &staleness,
        };
        let mut with_resources = context.apps.iter().filter(|app| selection.app_has_resources(app));
        match (seed, kind) {
            (true, _) | (false, SubjectKind::Dig) => {
                if seed || with_resources.next().is_some() {
                    map.serialize_entry("apps", &apps)?;
                }
            }
            // The first app's first cluster with a selected resource, as ncm takes it.
            (false, SubjectKind::ClusterNetworks) => match with_resources.next() {
                Some(app) => {
                    let app = AppView { apps: &apps, app };
                    match app
                        .app
                        .clusters
                        .iter()
                        .find(|cluster| selection.cluster_has_resources(cluster))
                    {
                        Some(cluster) => {
                            map.serialize_entry("cluster", &ClusterView { app: &app, cluster })?
                        }
                        None => map.serialize_entry("cluster", &EmptyObject)?,
                    }
                }
                None => map.serialize_entry("cluster", &EmptyObject)?,
            },
            // The first app's clusters (its only one, `logical-cloud`), lifted; absent when nothing matched.
            (false, SubjectKind::LogicalCloud) => {
                if let Some(app) = with_resources.next() {
                    let app = AppView { apps: &apps, app };
                    map.serialize_entry("clusters", &ClustersView { view: &app })?;
                }
            }
        }
        readiness(&mut map, Some(context))?;
        map.end()
    }
}

/// `{}`.
struct EmptyObject;

impl Serialize for EmptyObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_map(Some(0))?.end()
    }
}

/// The identity of the seeds' shape: a DIG's hyphenated names, a cluster's `provider+cluster`, a logical cloud's
/// project and name.
fn write_seed_identity<M: SerializeMap>(map: &mut M, subject: Subject<'_>) -> Result<(), M::Error> {
    match subject {
        Subject::Dig(identity) => {
            map.serialize_entry("project", identity.project)?;
            map.serialize_entry("composite-app-name", identity.composite_app)?;
            map.serialize_entry("composite-app-version", identity.version)?;
            map.serialize_entry("composite-profile-name", identity.composite_profile)?;
            map.serialize_entry("name", identity.name)
        }
        Subject::ClusterNetworks { .. } | Subject::LogicalCloud { .. } => write_emco22_identity(map, subject),
    }
}

/// The identity of EMCO 22.x's shape.
fn write_emco22_identity<M: SerializeMap>(map: &mut M, subject: Subject<'_>) -> Result<(), M::Error> {
    match subject {
        Subject::Dig(identity) => {
            map.serialize_entry("project", identity.project)?;
            map.serialize_entry("compositeApp", identity.composite_app)?;
            map.serialize_entry("compositeAppVersion", identity.version)?;
            map.serialize_entry("compositeProfile", identity.composite_profile)?;
            map.serialize_entry("name", identity.name)
        }
        Subject::ClusterNetworks { provider, cluster } => {
            map.serialize_entry("name", &format_args!("{provider}+{cluster}"))
        }
        Subject::LogicalCloud { project, name } => {
            map.serialize_entry("project", project)?;
            map.serialize_entry("name", name)
        }
    }
}

/// EMCO 22.x's `states`: the status context and the actions with lower-case keys and a revision.
///
/// The orchestrator and ncm record revision 1 for every instantiation (ncm: apply), and 0 for every other action
/// except a DIG's update, whose `Updated` carries the revision it ends and whose instantiation that one + 1
/// (`emco_model::lifecycle::revisions`); they take the status context from the last instantiation. dcm counts a revision up with every action and takes the
/// status context from every action but `Updated`.
struct States<'a> {
    state: &'a StateInfo,
    kind: SubjectKind,
}

/// Whether an action instantiated (ncm: applied) its subject.
fn instantiates(state: StateValue) -> bool {
    matches!(state, StateValue::Instantiated | StateValue::Applied)
}

impl Serialize for States<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Actions<'a>(&'a States<'a>);
        impl Serialize for Actions<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let States { state, kind } = self.0;
                let mut seq = serializer.serialize_seq(Some(state.actions.len()))?;
                let handover = emco_model::lifecycle::revisions(&state.actions);
                for (position, action) in state.actions.iter().enumerate() {
                    let instance = action.context_id.map(|id| id.to_string()).unwrap_or_default();
                    let revision = match kind {
                        SubjectKind::LogicalCloud => position as u64,
                        SubjectKind::Dig | SubjectKind::ClusterNetworks => handover[position],
                    };
                    seq.serialize_element(&serde_json::json!({
                        "state": action.state, "instance": instance, "time": action.timestamp, "revision": revision,
                    }))?;
                }
                seq.end()
            }
        }
        let status_action = match self.kind {
            SubjectKind::LogicalCloud => self
                .state
                .actions
                .iter()
                .rev()
                .find(|action| action.state != StateValue::Updated),
            SubjectKind::Dig | SubjectKind::ClusterNetworks => self
                .state
                .actions
                .iter()
                .rev()
                .find(|action| instantiates(action.state)),
        };
        let status_context = status_action
            .and_then(|action| action.context_id)
            .map(|id| id.to_string())
            .unwrap_or_default();
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("statusctxid", &status_context)?;
        map.serialize_entry("actions", &Actions(self))?;
        map.end()
    }
}

struct Apps<'a, 'b> {
    request: &'b StatusRequest<'a>,
    context: &'a ContextEntry,
    selection: &'b Selection<'b>,
    staleness: &'b Staleness<'a>,
}

impl Serialize for Apps<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for app in self
            .context
            .apps
            .iter()
            .filter(|app| self.selection.app_has_resources(app))
        {
            seq.serialize_element(&AppView { apps: self, app })?;
        }
        seq.end()
    }
}

struct AppView<'a, 'b, 'c> {
    apps: &'c Apps<'a, 'b>,
    app: &'a AppEntry,
}

impl Serialize for AppView<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", &*self.app.name)?;
        map.serialize_entry("clusters", &ClustersView { view: self })?;
        if !self.app.excluded.is_empty() {
            map.serialize_entry("excludedClusters", &*self.app.excluded)?;
        }
        map.end()
    }
}

struct ClustersView<'a, 'b, 'c, 'd> {
    view: &'d AppView<'a, 'b, 'c>,
}

impl Serialize for ClustersView<'_, '_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let selection = self.view.apps.selection;
        let mut seq = serializer.serialize_seq(None)?;
        for cluster in self
            .view
            .app
            .clusters
            .iter()
            .filter(|cluster| selection.cluster_has_resources(cluster))
        {
            seq.serialize_element(&ClusterView {
                app: self.view,
                cluster,
            })?;
        }
        seq.end()
    }
}

struct ClusterView<'a, 'b, 'c, 'd> {
    app: &'d AppView<'a, 'b, 'c>,
    cluster: &'a ClusterEntry,
}

impl Serialize for ClusterView<'_, '_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let seed = self.app.apps.request.query.shape == Shape::Seed;
        let mut map = serializer.serialize_map(None)?;
        let reason = self.cluster.connectivity_reason.as_deref();
        let detail = self.app.apps.request.query.output == Output::Detail;
        let freshness = self.app.apps.staleness.cluster(&self.cluster.full_name);
        let stale = freshness.and_then(|freshness| freshness.stale.as_deref());
        let last_heard = freshness.and_then(|freshness| freshness.last_heard);
        if seed {
            map.serialize_entry("cluster-provider", self.cluster.provider())?;
            map.serialize_entry("cluster", self.cluster.cluster())?;
            // Beyond the seed: why rsync is retrying, in the detail view and only while it is.
            if let Some(reason) = reason
                && detail
            {
                map.serialize_entry("connectivity", &self.cluster.connectivity)?;
                map.serialize_entry("connectivity-reason", reason)?;
            }
            if let Some(message) = stale {
                map.serialize_entry("status-fresh", &false)?;
                map.serialize_entry("status-message", message)?;
            }
            if let Some(at) = last_heard
                && detail
            {
                map.serialize_entry("last-heard", &format_args!("{at}"))?;
            }
            if let Some(waiting) = self.cluster.waits_for(self.app.apps.context)
                && detail
            {
                map.serialize_entry("waiting", &*waiting)?;
            }
        } else {
            map.serialize_entry("clusterProvider", self.cluster.provider())?;
            map.serialize_entry("cluster", self.cluster.cluster())?;
            map.serialize_entry("connectivity", &self.cluster.connectivity)?;
            if let Some(reason) = reason {
                map.serialize_entry("connectivityReason", reason)?;
            }
            if let Some(message) = stale {
                map.serialize_entry("statusFresh", &false)?;
                map.serialize_entry("statusMessage", message)?;
            }
            if let Some(at) = last_heard {
                map.serialize_entry("lastHeard", &format_args!("{at}"))?;
            }
            if let Some(propagation) = propagation(self.cluster, self.app.apps.context.status) {
                map.serialize_entry("propagation", propagation.as_str())?;
            }
            if let Some(waiting) = self.cluster.waits_for(self.app.apps.context) {
                map.serialize_entry("waiting", &*waiting)?;
            }
        }
        map.serialize_entry("resources", &ResourcesView { cluster: self })?;
        map.end()
    }
}

struct ResourcesView<'a, 'b, 'c, 'd, 'e> {
    cluster: &'e ClusterView<'a, 'b, 'c, 'd>,
}

impl Serialize for ResourcesView<'_, '_, '_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let view = self.cluster;
        let request = view.app.apps.request;
        let query = request.query;
        let app = &*view.app.app.name;
        let cluster = &*view.cluster.full_name;
        let stale = view.app.apps.staleness.is_stale(cluster);
        // A resource rsync has not applied yet says what rsync waits for first, in the detail views.
        let waiting = matches!(query.output, Output::Detail | Output::All)
            .then(|| {
                let now = request
                    .freshness
                    .map_or_else(jiff::Timestamp::now, |freshness| freshness.now);
                view.cluster.waiting_message(app, view.app.apps.context, now)
            })
            .flatten();
        let mut seq = serializer.serialize_seq(None)?;
        for resource in view.app.apps.selection.resources(view.cluster) {
            let detail = if query.output == Output::Detail {
                request
                    .detail
                    .detail(app, cluster, resource, query.measure)
                    .map(|mut object| {
                        // Whatever the source (a staged manifest, a cluster's report), Secret values never leave.
                        let listed_as_secret = resource.gvk.group.is_empty() && resource.gvk.kind == "Secret";
                        redact_secret_values(&mut object, listed_as_secret);
                        object
                    })
            } else {
                None
            };
            let changed_by = view.cluster.changed_by.as_deref().and_then(|changes| {
                changes
                    .get(&format!("{}+{}", resource.name, resource.gvk.kind))
                    .map(Vec::as_slice)
            });
            seq.serialize_element(&ResourceView {
                resource,
                query,
                detail,
                stale,
                waiting: waiting.as_deref(),
                changed_by,
            })?;
        }
        seq.end()
    }
}

struct ResourceView<'a> {
    resource: &'a ResourceEntry,
    query: &'a StatusQuery,
    detail: Option<Json>,
    /// Its cluster's report is not believed: cluster status and readiness are `Unknown`.
    stale: bool,
    /// What rsync waits for on its cluster (detail views), said of a resource it has not applied yet.
    waiting: Option<&'a str>,
    /// The controllers that added or changed it, in the order they ran.
    changed_by: Option<&'a [String]>,
}

impl Serialize for ResourceView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let resource = self.resource;
        let mut map = serializer.serialize_map(None)?;
        // Written as the index wrote it once (answers are serde_json's: it writes a raw value as it is).
        map.serialize_entry("GVK", resource.gvk.json())?;
        map.serialize_entry("name", &*resource.name)?;
        if let Some(controllers) = self.changed_by {
            map.serialize_entry("changedBy", controllers)?;
        }
        match (self.query.shape, self.query.measure) {
            (Shape::Seed, Measure::Deployed) => {
                map.serialize_entry("rsync-status", &resource.rsync)?;
                // Why a resource Failed: the cluster's own message; what a Pending one waits for.
                if let Some(error) = &resource.error {
                    map.serialize_entry("message", &**error)?;
                } else if let Some(waiting) = self.waiting.filter(|_| resource.rsync == RsyncStatus::Pending)
                {
                    map.serialize_entry("message", waiting)?;
                }
                if let Some(detail) = &self.detail {
                    map.serialize_entry("detail", detail)?;
                }
            }
            (Shape::Seed, Measure::Cluster) if self.stale => {
                // The last report, for what it is worth, and that it is not believed.
                if let Some(detail) = &self.detail {
                    map.serialize_entry("detail", detail)?;
                }
                map.serialize_entry("cluster-status", &ClusterResourceStatus::Unknown)?;
            }
            (Shape::Seed, Measure::Cluster) => match &self.detail {
                // The seed's detail example shows a present object by its detail alone: being listed is "Present".
                Some(detail) => map.serialize_entry("detail", detail)?,
                None => map.serialize_entry("cluster-status", &resource.cluster)?,
            },
            (Shape::Emco22, measure) => {
                if let Some(detail) = &self.detail {
                    map.serialize_entry("detail", detail)?;
                }
                match measure {
                    Measure::Deployed => {
                        map.serialize_entry("deployedStatus", &resource.rsync)?;
                        if let Some(error) = &resource.error {
                            map.serialize_entry("message", &**error)?;
                        } else if let Some(waiting) =
                            self.waiting.filter(|_| resource.rsync == RsyncStatus::Pending)
                        {
                            map.serialize_entry("message", waiting)?;
                        }
                    }
                    Measure::Cluster => {
                        match resource.ready {
                            Some(_) if self.stale => map.serialize_entry("readyStatus", UNKNOWN)?,
                            Some(ready) => map.serialize_entry("readyStatus", &ready)?,
                            None => {}
                        }
                        // Why it is not ready (or, with `conditions=all`, that it is), unless the report is stale.
                        if let Some(verdict) = resource.verdict.as_deref()
                            && !self.stale
                        {
                            let shown = match self.query.conditions {
                                ConditionsShown::All => true,
                                ConditionsShown::None => false,
                                ConditionsShown::NotReady => {
                                    resource.ready.is_some() && !resource.condition_ready()
                                }
                            };
                            if shown {
                                map.serialize_entry(
                                    "conditions",
                                    &[ReadyCondition {
                                        ready: resource.condition_ready(),
                                        verdict,
                                    }],
                                )?;
                            }
                        }
                    }
                }
            }
        }
        // Beyond both: what status configs roll up (issue #16 §4), unless the cluster's report is stale.
        let seed = self.query.shape == Shape::Seed;
        let cluster_view = self.query.measure == Measure::Cluster;
        if let Some(remote) = resource.status_remote.as_deref()
            && !self.stale
            && ((cluster_view && !seed) || self.detail.is_some())
        {
            map.serialize_entry("statusRemote", remote)?;
        }
        if resource.collection_disabled && cluster_view {
            map.serialize_entry(
                if seed {
                    "status-collection"
                } else {
                    "statusCollection"
                },
                "Disabled",
            )?;
        }
        map.end()
    }
}

/// A resource's `Ready` condition in metav1.Condition's shape and key order (`type`, `status`,
/// `observedGeneration`, `lastTransitionTime`, `reason`, `message`); `reason` is the verdict's health.
struct ReadyCondition<'a> {
    ready: bool,
    verdict: &'a Verdict,
}

impl Serialize for ReadyCondition<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let verdict = self.verdict;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "Ready")?;
        map.serialize_entry("status", if self.ready { "True" } else { "False" })?;
        if let Some(generation) = verdict.generation {
            map.serialize_entry("observedGeneration", &generation)?;
        }
        if let Some(since) = verdict.since {
            map.serialize_entry("lastTransitionTime", &format_args!("{since}"))?;
        }
        // EMCO's readiness and the verdict may disagree (EMCO's rules are its own); the status is EMCO's, so the
        // reason never contradicts it.
        let reason = match (self.ready, verdict.health) {
            (true, _) => Health::Ready,
            (false, Health::Ready) => Health::InProgress,
            (false, health) => health,
        };
        map.serialize_entry("reason", &reason)?;
        map.serialize_entry("message", &*verdict.message)?;
        map.end()
    }
}

/// Why a cluster's part of a deployment is not propagated (kubefed's PropagationStatus names, seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// The cluster refused a resource while it was applied.
    CreationFailed,
    /// The cluster refused a resource's deletion.
    DeletionFailed,
    /// rsync cannot reach the cluster or it answers errors worth retrying (5xx, 429).
    ClusterNotReady,
    /// No client could be built: the kubeconfig is missing or refused, or a logical cloud's credentials are.
    ClientRetrievalFailed,
    /// A wait (a hook, a certificate) timed out.
    CreationTimedOut,
}

impl Propagation {
    /// The name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CreationFailed => "CreationFailed",
            Self::DeletionFailed => "DeletionFailed",
            Self::ClusterNotReady => "ClusterNotReady",
            Self::ClientRetrievalFailed => "ClientRetrievalFailed",
            Self::CreationTimedOut => "CreationTimedOut",
        }
    }
}

/// What went wrong propagating `cluster`'s resources (`None`: nothing); a refused resource outranks retrying.
#[must_use]
pub fn propagation(cluster: &ClusterEntry, status: ContextStatus) -> Option<Propagation> {
    let failed = cluster
        .resources
        .iter()
        .find(|resource| resource.rsync == RsyncStatus::Failed);
    if let Some(failed) = failed {
        let error = failed.error.as_deref().unwrap_or_default();
        return Some(
            // rsync's words for a client it could not build: `kubeconfig of cluster …`, a refused kubeconfig
            // (its message names the kubeconfig), `credentials of logical cloud …`.
            if error.contains("kubeconfig") || error.starts_with("credentials of logical cloud") {
                Propagation::ClientRetrievalFailed
            } else if error.contains("timed out") {
                Propagation::CreationTimedOut
            } else if matches!(
                status,
                ContextStatus::Terminating | ContextStatus::Terminated | ContextStatus::TerminateFailed
            ) {
                Propagation::DeletionFailed
            } else {
                Propagation::CreationFailed
            },
        );
    }
    let retrying = cluster.connectivity == Connectivity::Retrying
        || cluster
            .resources
            .iter()
            .any(|resource| resource.rsync == RsyncStatus::Retrying);
    retrying.then_some(Propagation::ClusterNotReady)
}

/// EMCO 22.x's list queries: app names, clusters by app, resources by app and cluster.
struct ListAnswer<'a, 'b> {
    request: &'b StatusRequest<'a>,
    list: ListQuery,
}

impl Serialize for ListAnswer<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.request;
        let selection = Selection::list(request);
        let apps: Vec<&AppEntry> = request
            .context
            .map(|(_, context)| context.apps.iter().collect())
            .unwrap_or_default();
        let mut map = serializer.serialize_map(None)?;
        write_emco22_identity(&mut map, request.subject)?;
        match self.list {
            ListQuery::Apps => {
                let names: BTreeSet<&str> = apps.iter().map(|app| &*app.name).collect();
                map.serialize_entry("apps", &names)?;
            }
            ListQuery::Clusters => {
                let entries: Vec<Json> = apps
                    .iter()
                    .filter(|app| selection.app(app))
                    .map(|app| {
                        let clusters: Vec<Json> = app
                            .clusters
                            .iter()
                            .map(|c| serde_json::json!({"clusterProvider": c.provider(), "cluster": c.cluster()}))
                            .collect();
                        serde_json::json!({"app": &*app.name, "clusters": clusters})
                    })
                    .collect();
                map.serialize_entry("clustersByApp", &entries)?;
            }
            ListQuery::Resources => {
                let mut entries = Vec::new();
                for app in apps.iter().filter(|app| selection.app(app)) {
                    for cluster in app.clusters.iter().filter(|cluster| selection.cluster(cluster)) {
                        let extras: &[ResourceEntry] = if request.query.measure == Measure::Cluster {
                            &cluster.cluster_only
                        } else {
                            &[]
                        };
                        let resources: Vec<Json> = cluster
                            .resources
                            .iter()
                            .chain(extras)
                            .map(|r| serde_json::json!({"name": &*r.name, "GVK": &**r.gvk}))
                            .collect();
                        entries.push(serde_json::json!({
                            "app": &*app.name, "clusterProvider": cluster.provider(), "cluster": cluster.cluster(),
                            "resources": resources,
                        }));
                    }
                }
                map.serialize_entry("resourcesByApp", &entries)?;
            }
        }
        map.end()
    }
}

/// Where a progressive rollout stands: `{"state":"Paused","batch":2,"batches":4,"clustersUpdated":8,
/// "clusters":20,"failed":["p+c9",…],"summary":"batch 2/4, 8/20 clusters updated, 2 failed (paused)"}`.
struct RolloutView<'a>(&'a emco_model::rollout::RolloutProgress);

impl Serialize for RolloutView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let progress = self.0;
        let mut map = serializer.serialize_map(Some(7))?;
        map.serialize_entry("state", progress.state())?;
        map.serialize_entry("batch", &progress.batch())?;
        map.serialize_entry("batches", &progress.plan.batches())?;
        map.serialize_entry("clustersUpdated", &progress.clusters_updated())?;
        map.serialize_entry("clusters", &progress.plan.clusters)?;
        map.serialize_entry("failed", &progress.failed)?;
        map.serialize_entry("summary", &progress.summary())?;
        map.end()
    }
}
