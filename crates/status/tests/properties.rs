//! Properties of the status engine over random contexts and random filters: the counts equal the resources that
//! `output=all` lists, `output=summary` counts the same, and filters only ever narrow; the same for the single
//! `cluster` of cluster network intents and the `clusters` of a logical cloud.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use emco_appcontext::{AppMeta, ClusterRecord, ContextMeta, ContextOwner, ResourceRecord};
use emco_model::{ContextId, ContextStatus, RsyncStatus, StateInfo, StateValue};
use emco_status::{
    DigIdentity, NoDetail, StatusIndex, StatusRequest, Subject, parse_query, parse_query_for, write_status,
};
use proptest::prelude::*;
use serde_json::{Value as Json, json};

const KINDS: [(&str, &str); 4] = [
    ("apps/v1", "Deployment"),
    ("v1", "Service"),
    ("v1", "ConfigMap"),
    ("rbac.authorization.k8s.io/v1", "Role"),
];

#[derive(Debug, Clone)]
struct World {
    /// app → cluster index → resources (name index, kind index, status index)
    apps: Vec<Vec<Vec<(usize, usize, usize)>>>,
    clusters: usize,
}

fn world() -> impl Strategy<Value = World> {
    (1usize..4, 1usize..4).prop_flat_map(|(apps, clusters)| {
        let resource = (0usize..6, 0usize..KINDS.len(), 0usize..RsyncStatus::ALL.len());
        let cluster = proptest::collection::vec(resource, 0..5);
        let app = proptest::collection::vec(cluster, clusters..=clusters);
        proptest::collection::vec(app, apps..=apps).prop_map(move |apps| World { apps, clusters })
    })
}

fn build(world: &World, id: ContextId) -> StatusIndex {
    let cluster_names: Vec<String> = (0..world.clusters).map(|c| format!("p+c{c}")).collect();
    let mut index = StatusIndex::new();
    index.apply_meta(&ContextMeta {
        project: "p".into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "cp".into(),
        deployment_intent_group: "dig".into(),
        release: "r".into(),
        apps: (0..world.apps.len())
            .map(|a| AppMeta {
                name: format!("app{a}"),
                dependencies: vec![],
                clusters: cluster_names.clone(),
                excluded: Vec::new(),
            })
            .collect(),
        status: ContextStatus::Instantiated,
        created: String::new(),
        ..ContextMeta::for_owner(id, ContextOwner::DeploymentIntentGroup, "default", Vec::new())
    });
    for (a, clusters) in world.apps.iter().enumerate() {
        for (c, resources) in clusters.iter().enumerate() {
            let mut seen = std::collections::HashSet::new();
            let records = resources
                .iter()
                .filter(|(name, kind, _)| seen.insert((*name, *kind)))
                .map(|(name, kind, status)| {
                    let (api_version, kind) = KINDS[*kind];
                    let mut record =
                        ResourceRecord::pending(&format!("r{name}"), kind, api_version, json!({}));
                    record.status = RsyncStatus::ALL[*status];
                    record
                })
                .collect();
            index.apply_cluster(
                id,
                &ClusterRecord::pending(&format!("app{a}"), &cluster_names[c], records),
            );
        }
    }
    index
}

fn answer(index: &StatusIndex, id: ContextId, query: &[(String, String)]) -> Json {
    let query = parse_query(query).unwrap();
    let mut state = StateInfo::created("t".into());
    state.push(StateValue::Instantiated, Some(id), "t".into());
    let identity = DigIdentity {
        project: "p",
        composite_app: "ca",
        version: "v1",
        composite_profile: "cp",
        name: "dig",
    };
    let request = StatusRequest {
        subject: identity.into(),
        state: &state,
        context: index.context(id).map(|c| (id, c)),
        query: &query,
        detail: &NoDetail,
        freshness: None,
    };
    let mut out = Vec::new();
    write_status(&request, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// Counts the per-resource values under `key` in the listed apps.
fn listed(answer: &Json, key: &str) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for app in answer["apps"].as_array().into_iter().flatten() {
        assert!(
            !app["clusters"].as_array().unwrap().is_empty(),
            "an app without clusters is listed"
        );
        for cluster in app["clusters"].as_array().unwrap() {
            assert!(
                !cluster["resources"].as_array().unwrap().is_empty(),
                "a cluster without resources is listed"
            );
            for resource in cluster["resources"].as_array().unwrap() {
                if let Some(value) = resource[key].as_str() {
                    *counts.entry(value.to_string()).or_default() += 1;
                }
            }
        }
    }
    counts
}

fn counted(map: &Json) -> BTreeMap<String, u64> {
    map.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect())
        .unwrap_or_default()
}

proptest! {
    #[test]
    fn counts_equal_what_all_lists_and_summary_agrees(
        world in world(),
        app_filter in proptest::collection::vec(0usize..3, 0..3),
        cluster_filter in proptest::collection::vec(0usize..3, 0..3),
        resource_filter in proptest::collection::vec(0usize..6, 0..3),
    ) {
        let id = ContextId::new(42).unwrap();
        let index = build(&world, id);
        let mut filters: Vec<(String, String)> = Vec::new();
        filters.extend(app_filter.iter().map(|a| ("app".to_string(), format!("app{a}"))));
        filters.extend(cluster_filter.iter().map(|c| ("cluster".to_string(), format!("p+c{c}"))));
        filters.extend(resource_filter.iter().map(|r| ("resource".to_string(), format!("r{r}"))));
        for (measure, counts_key, resource_key) in [
            (vec![], "rsync-status", "rsync-status"),
            (vec![("type".to_string(), "cluster".to_string())], "cluster-status", "cluster-status"),
            (vec![("status".to_string(), "deployed".to_string())], "deployedCounts", "deployedStatus"),
            (vec![("status".to_string(), "ready".to_string())], "readyCounts", "readyStatus"),
        ] {
            let mut query = filters.clone();
            query.extend(measure.clone());
            let all = answer(&index, id, &query);
            prop_assert_eq!(counted(&all[counts_key]), listed(&all, resource_key), "query {:?}", query);
            query.push(("output".to_string(), "summary".to_string()));
            let summary = answer(&index, id, &query);
            prop_assert!(summary.get("apps").is_none());
            prop_assert_eq!(&summary[counts_key], &all[counts_key]);
            // Filters only narrow: unfiltered totals are at least as large, status by status.
            let mut unfiltered = measure.clone();
            unfiltered.push(("output".to_string(), "summary".to_string()));
            let everything = counted(&answer(&index, id, &unfiltered)[counts_key]);
            for (status, count) in counted(&all[counts_key]) {
                prop_assert!(everything.get(&status).copied().unwrap_or(0) >= count);
            }
        }
    }
}

/// The EMCO 22.x answer for another subject than a DIG.
fn subject_answer(
    subject: Subject<'_>,
    index: &StatusIndex,
    id: ContextId,
    query: &[(String, String)],
) -> Json {
    let query = parse_query_for(query, subject.kind()).unwrap();
    let mut state = StateInfo::created("t".into());
    state.push(StateValue::Instantiated, Some(id), "t".into());
    let request = StatusRequest {
        subject,
        state: &state,
        context: index.context(id).map(|c| (id, c)),
        query: &query,
        detail: &NoDetail,
        freshness: None,
    };
    let mut out = Vec::new();
    write_status(&request, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// Counts the per-resource values under `key` in `clusters`.
fn listed_in(clusters: &[Json], key: &str) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for cluster in clusters {
        let resources = cluster["resources"].as_array().unwrap();
        assert!(!resources.is_empty(), "a cluster without resources is listed");
        for resource in resources {
            if let Some(value) = resource[key].as_str() {
                *counts.entry(value.to_string()).or_default() += 1;
            }
        }
    }
    counts
}

proptest! {
    #[test]
    fn other_subjects_count_what_they_list(
        world in world(),
        cluster_filter in proptest::collection::vec(0usize..3, 0..3),
        resource_filter in proptest::collection::vec(0usize..6, 0..3),
    ) {
        let id = ContextId::new(43).unwrap();
        let mut filters: Vec<(String, String)> = Vec::new();
        filters.extend(cluster_filter.iter().map(|c| ("cluster".to_string(), format!("p+c{c}"))));
        filters.extend(resource_filter.iter().map(|r| ("resource".to_string(), format!("r{r}"))));
        // A logical cloud has one app on every cluster; cluster network intents one app on one cluster.
        let cloud = build(&World { apps: world.apps[..1].to_vec(), clusters: world.clusters }, id);
        let network = build(&World { apps: vec![world.apps[0][..1].to_vec()], clusters: 1 }, id);
        for (status, counts_key, resource_key) in [
            ("deployed", "deployedCounts", "deployedStatus"),
            ("ready", "readyCounts", "readyStatus"),
        ] {
            let mut query = filters.clone();
            query.push(("status".to_string(), status.to_string()));

            let answer = subject_answer(Subject::LogicalCloud { project: "p", name: "lc" }, &cloud, id, &query);
            let clusters = answer.get("clusters").and_then(Json::as_array).cloned().unwrap_or_default();
            prop_assert_eq!(counted(&answer[counts_key]), listed_in(&clusters, resource_key), "query {:?}", query);

            let answer = subject_answer(Subject::ClusterNetworks { provider: "p", cluster: "c0" }, &network, id, &query);
            let cluster = &answer["cluster"];
            prop_assert!(cluster.is_object(), "`cluster` is always there");
            let clusters: Vec<Json> = if cluster.as_object().unwrap().is_empty() { vec![] } else { vec![cluster.clone()] };
            prop_assert_eq!(counted(&answer[counts_key]), listed_in(&clusters, resource_key), "query {:?}", query);
        }
    }
}

/// Query pairs as a hostile client may send them: the real parameter names (and some others) with values that
/// are sometimes valid and sometimes anything at all.
fn hostile_query() -> impl Strategy<Value = Vec<(String, String)>> {
    let key = prop::sample::select(vec![
        "type",
        "status",
        "output",
        "instance",
        "app",
        "cluster",
        "resource",
        "apps",
        "clusters",
        "resources",
        "other",
        "",
    ]);
    let value = prop_oneof![
        prop::sample::select(vec![
            "rsync", "cluster", "deployed", "ready", "summary", "all", "detail", "1", "0", "p+c0", "app0",
            "",
        ])
        .prop_map(str::to_string),
        any::<String>(),
        "[a-z0-9+.:_-]{0,300}",
    ];
    proptest::collection::vec((key.prop_map(str::to_string), value), 0..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The parser never panics; what it accepts is safe to look up, and a refusal names a parameter that was sent.
    #[test]
    fn the_query_parser_accepts_only_checked_filters(pairs in hostile_query()) {
        match parse_query(&pairs) {
            Ok(query) => {
                for app in &query.apps {
                    prop_assert!(emco_model::validate_label_value("app", app).is_ok(), "app filter {:?}", app);
                }
                for resource in &query.resources {
                    prop_assert!(
                        !resource.is_empty() && resource.len() <= 253 && resource.bytes().all(|b| b.is_ascii_graphic()),
                        "resource filter {:?}", resource
                    );
                }
            }
            Err(err) => {
                prop_assert!(pairs.iter().any(|(key, _)| key == err.parameter), "{} for {:?}", err, pairs);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Cluster network intents and logical clouds parse the same hostile queries without panicking, refuse by a
    /// parameter that was sent, and never keep what they do not take.
    #[test]
    fn other_subjects_keep_only_their_parameters(pairs in hostile_query()) {
        use emco_status::{ListQuery, SubjectKind};
        for kind in [SubjectKind::ClusterNetworks, SubjectKind::LogicalCloud] {
            match parse_query_for(&pairs, kind) {
                Ok(query) => {
                    prop_assert!(query.apps.is_empty());
                    match kind {
                        SubjectKind::ClusterNetworks => prop_assert_eq!(query.list, None),
                        _ => prop_assert_ne!(query.list, Some(ListQuery::Apps)),
                    }
                }
                Err(err) => {
                    prop_assert!(pairs.iter().any(|(key, _)| key == err.parameter), "{} for {:?}", err, pairs);
                    prop_assert!(kind != SubjectKind::LogicalCloud || err.parameter != "app");
                }
            }
        }
    }
}
