//! Status answers of the two subjects besides deployment intent groups, from the same index and code: the network
//! intents of a cluster (seed 000's example reproduced as JSON text, so key order counts; EMCO 22.x's single
//! `cluster` object) and logical clouds (EMCO 22.x's `clusters`, `status=ready` by default, the list queries).

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use emco_appcontext::{AppMeta, ClusterRecord, ContextMeta, ContextOwner, JsonText, ResourceRecord};
use emco_model::{Connectivity, ContextId, ContextStatus, RsyncStatus, StateInfo, StateValue};
use emco_status::{NoDetail, StatusIndex, StatusRequest, Subject, parse_query_for, write_status};
use serde_json::{Value as Json, json};

/// Seed 000's "cluster network intents status query" example, verbatim.
const SEED_NCM_EXAMPLE: &str = r#"{
  "name": "vfw-cluster-provider+edge01",
  "state": {
    "Actions": [
      {
        "State": "Created",
        "ContextId": "",
        "TimeStamp": "2020-08-21T18:17:02.464Z"
      },
      {
        "State": "Applied",
        "ContextId": "9116473999070524329",
        "TimeStamp": "2020-08-21T18:17:11.983Z"
      }
    ]
  },
  "status": "Instantiated",
  "rsync-status": {
    "Applied": 3
  },
  "apps": [
    {
      "name": "network-intents",
      "clusters": [
        {
          "cluster-provider": "vfw-cluster-provider",
          "cluster": "edge01",
          "resources": [
            {
              "GVK": {
                "Group": "k8s.plugin.opnfv.org",
                "Version": "v1alpha1",
                "Kind": "ProviderNetwork"
              },
              "name": "emco-private-net",
              "rsync-status": "Applied"
            },
            {
              "GVK": {
                "Group": "k8s.plugin.opnfv.org",
                "Version": "v1alpha1",
                "Kind": "Network"
              },
              "name": "protected-private-net",
              "rsync-status": "Applied"
            },
            {
              "GVK": {
                "Group": "k8s.plugin.opnfv.org",
                "Version": "v1alpha1",
                "Kind": "ProviderNetwork"
              },
              "name": "unprotected-private-net",
              "rsync-status": "Applied"
            }
          ]
        }
      ]
    }
  ]
}"#;

const NCM_CONTEXT: u64 = 9116473999070524329;
const NCM: Subject<'static> = Subject::ClusterNetworks {
    provider: "vfw-cluster-provider",
    cluster: "edge01",
};

const LC_CONTEXT: u64 = 4242;
const LC: Subject<'static> = Subject::LogicalCloud {
    project: "proj",
    name: "lc1",
};
const LC_CLUSTERS: [&str; 2] = ["prov+c1", "prov+c2"];

/// A context's meta for one app on `clusters`.
fn meta(id: ContextId, app: &str, clusters: &[&str], status: ContextStatus) -> ContextMeta {
    ContextMeta {
        apps: vec![AppMeta {
            name: app.into(),
            dependencies: vec![],
            clusters: clusters.iter().map(|c| (*c).to_string()).collect(),
            excluded: Vec::new(),
        }],
        status,
        created: String::new(),
        ..ContextMeta::for_owner(id, ContextOwner::DeploymentIntentGroup, "default", Vec::new())
    }
}

/// Resources (name, apiVersion, kind) in `status`.
fn resources(list: &[(&str, &str, &str)], status: RsyncStatus) -> Vec<ResourceRecord> {
    list.iter()
        .map(|(name, api_version, kind)| {
            let mut resource = ResourceRecord::pending(
                name,
                kind,
                api_version,
                json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}),
            );
            resource.status = status;
            resource
        })
        .collect()
}

/// The network intents of seed 000's example: three CRs applied on `vfw-cluster-provider+edge01`, listed here out
/// of order (the answer lists them in `<name>+<Kind>` order).
fn ncm_index() -> StatusIndex {
    let id = ContextId::new(NCM_CONTEXT).unwrap();
    let cluster = "vfw-cluster-provider+edge01";
    let mut index = StatusIndex::new();
    index.apply_meta(&meta(
        id,
        "network-intents",
        &[cluster],
        ContextStatus::Instantiated,
    ));
    let group = "k8s.plugin.opnfv.org/v1alpha1";
    let mut record = ClusterRecord::pending(
        "network-intents",
        cluster,
        resources(
            &[
                ("unprotected-private-net", group, "ProviderNetwork"),
                ("protected-private-net", group, "Network"),
                ("emco-private-net", group, "ProviderNetwork"),
            ],
            RsyncStatus::Applied,
        ),
    );
    record.connectivity = Connectivity::Available;
    index.apply_cluster(id, &record);
    index
}

fn ncm_state() -> StateInfo {
    let mut state = StateInfo::created("2020-08-21T18:17:02.464Z".into());
    state.push(
        StateValue::Applied,
        ContextId::new(NCM_CONTEXT),
        "2020-08-21T18:17:11.983Z".into(),
    );
    state
}

/// A level-1 logical cloud on two clusters: Namespace, ResourceQuota, Role, RoleBinding and the user's
/// CertificateSigningRequest on each; the first cluster reports the CSR, the second reports nothing yet.
fn lc_index() -> StatusIndex {
    let id = ContextId::new(LC_CONTEXT).unwrap();
    let mut index = StatusIndex::new();
    index.apply_meta(&meta(
        id,
        "logical-cloud",
        &LC_CLUSTERS,
        ContextStatus::Instantiated,
    ));
    for cluster in LC_CLUSTERS {
        let mut record = ClusterRecord::pending(
            "logical-cloud",
            cluster,
            resources(
                &[
                    ("lc1-ns", "v1", "Namespace"),
                    ("lc1-quota", "v1", "ResourceQuota"),
                    ("lc1-role", "rbac.authorization.k8s.io/v1", "Role"),
                    ("lc1-rolebinding", "rbac.authorization.k8s.io/v1", "RoleBinding"),
                    (
                        "lc1-user-csr",
                        "certificates.k8s.io/v1",
                        "CertificateSigningRequest",
                    ),
                ],
                RsyncStatus::Applied,
            ),
        );
        record.connectivity = Connectivity::Available;
        if cluster == LC_CLUSTERS[0] {
            record.cluster_status = Some(JsonText::from(json!({
                "ready": true, "resourceCount": 1,
                "csrStatuses": [{"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                    "metadata": {"name": "lc1-user-csr"}, "status": {"certificate": "Y2VydA=="}}],
            })));
        }
        index.apply_cluster(id, &record);
    }
    index
}

fn lc_state() -> StateInfo {
    let mut state = StateInfo::created("2026-11-23T10:00:00Z".into());
    state.push(
        StateValue::Instantiated,
        ContextId::new(LC_CONTEXT),
        "2026-11-23T10:00:01Z".into(),
    );
    state
}

fn pairs(query: &[(&str, &str)]) -> Vec<(String, String)> {
    query
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

/// The answer's text for `subject` whose latest context is `id` (if indexed).
fn answer_text(
    subject: Subject<'_>,
    state: &StateInfo,
    index: &StatusIndex,
    id: Option<u64>,
    query: &[(&str, &str)],
) -> String {
    let query = parse_query_for(&pairs(query), subject.kind()).unwrap();
    let context = id
        .and_then(ContextId::new)
        .and_then(|id| index.context(id).map(|entry| (id, entry)));
    let request = StatusRequest {
        subject,
        state,
        context,
        query: &query,
        detail: &NoDetail,
        freshness: None,
    };
    let mut out = Vec::new();
    write_status(&request, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn ncm_answer(query: &[(&str, &str)]) -> Json {
    let text = answer_text(NCM, &ncm_state(), &ncm_index(), Some(NCM_CONTEXT), query);
    serde_json::from_str(&text).unwrap()
}

fn lc_answer(query: &[(&str, &str)]) -> Json {
    let text = answer_text(LC, &lc_state(), &lc_index(), Some(LC_CONTEXT), query);
    serde_json::from_str(&text).unwrap()
}

fn keys(value: &Json) -> Vec<&str> {
    value.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn cluster_network_intents_reproduce_the_seed_example_byte_for_byte() {
    // serde_json keeps key order (preserve_order): the seed re-serialized compactly is the expected text.
    let expected = serde_json::to_string(&serde_json::from_str::<Json>(SEED_NCM_EXAMPLE).unwrap()).unwrap();
    for query in [vec![], vec![("type", "rsync")], vec![("output", "all")]] {
        let text = answer_text(NCM, &ncm_state(), &ncm_index(), Some(NCM_CONTEXT), &query);
        assert_eq!(text, expected, "query {query:?}");
    }
}

#[test]
fn cluster_network_intents_type_cluster_has_the_dig_cluster_status_skeleton() {
    let answer = ncm_answer(&[("type", "cluster")]);
    assert_eq!(
        keys(&answer),
        ["name", "state", "status", "cluster-status", "apps"]
    );
    // No ResourceBundleState reports Network CRs: their presence is unknown.
    assert_eq!(answer["cluster-status"], json!({"Unknown": 3}));
    let cluster = &answer["apps"][0]["clusters"][0];
    assert_eq!(keys(cluster), ["cluster-provider", "cluster", "resources"]);
    assert_eq!(
        cluster["resources"][1],
        json!({"GVK": {"Group": "k8s.plugin.opnfv.org", "Version": "v1alpha1", "Kind": "Network"},
               "name": "protected-private-net", "cluster-status": "Unknown"})
    );
    let summary = ncm_answer(&[("type", "cluster"), ("output", "summary")]);
    assert_eq!(keys(&summary), ["name", "state", "status", "cluster-status"]);
}

#[test]
fn cluster_network_intents_emco22_answer_holds_one_cluster() {
    let deployed = ncm_answer(&[("status", "deployed")]);
    assert_eq!(
        keys(&deployed),
        [
            "name",
            "states",
            "deployedStatus",
            "deployedCounts",
            "cluster",
            "readiness"
        ]
    );
    assert_eq!(deployed["name"], "vfw-cluster-provider+edge01");
    // Applied counts as ncm's instantiation: it sets the status context and has revision 1.
    assert_eq!(
        deployed["states"],
        json!({"statusctxid": "9116473999070524329", "actions": [
            {"state": "Created", "instance": "", "time": "2020-08-21T18:17:02.464Z", "revision": 0},
            {"state": "Applied", "instance": "9116473999070524329", "time": "2020-08-21T18:17:11.983Z", "revision": 1},
        ]})
    );
    assert_eq!(deployed["deployedStatus"], "Instantiated");
    assert_eq!(deployed["deployedCounts"], json!({"Applied": 3}));
    let cluster = &deployed["cluster"];
    assert_eq!(
        keys(cluster),
        ["clusterProvider", "cluster", "connectivity", "resources"]
    );
    assert_eq!(
        (
            &cluster["clusterProvider"],
            &cluster["cluster"],
            &cluster["connectivity"]
        ),
        (
            &json!("vfw-cluster-provider"),
            &json!("edge01"),
            &json!("Available")
        )
    );
    let names: Vec<&str> = cluster["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "emco-private-net",
            "protected-private-net",
            "unprotected-private-net"
        ]
    );
    assert_eq!(cluster["resources"][0]["deployedStatus"], "Applied");

    // Network CRs are not kinds the monitor tracks: no readiness, nothing counted, all Ready.
    let ready = ncm_answer(&[("status", "ready")]);
    assert_eq!(
        keys(&ready),
        [
            "name",
            "states",
            "deployedStatus",
            "readyStatus",
            "cluster",
            "readiness"
        ]
    );
    assert_eq!(ready["readyStatus"], "Ready");
    assert_eq!(keys(&ready["cluster"]["resources"][2]), ["GVK", "name"]);

    // The resource filter narrows the cluster's resources and the counts.
    let one = ncm_answer(&[("status", "deployed"), ("resource", "protected-private-net")]);
    assert_eq!(one["deployedCounts"], json!({"Applied": 1}));
    assert_eq!(one["cluster"]["resources"].as_array().unwrap().len(), 1);
}

#[test]
fn cluster_network_intents_emco22_cluster_is_empty_without_anything_to_show() {
    let summary = ncm_answer(&[("status", "deployed"), ("output", "summary")]);
    assert_eq!(
        keys(&summary),
        [
            "name",
            "states",
            "deployedStatus",
            "deployedCounts",
            "cluster",
            "readiness"
        ]
    );
    assert_eq!(summary["cluster"], json!({}));

    let nothing = ncm_answer(&[("status", "deployed"), ("resource", "no-such-net")]);
    assert_eq!(
        keys(&nothing),
        ["name", "states", "deployedStatus", "cluster", "readiness"]
    );
    assert_eq!(nothing["cluster"], json!({}));
    let elsewhere = ncm_answer(&[("status", "ready"), ("cluster", "vfw-cluster-provider+edge02")]);
    assert_eq!(elsewhere["cluster"], json!({}));

    // Before the first apply: the name, the history and an empty cluster.
    let created = StateInfo::created("2020-08-21T18:17:02.464Z".into());
    let text = answer_text(
        NCM,
        &created,
        &StatusIndex::new(),
        None,
        &[("status", "ready"), ("readiness", "false")],
    );
    assert_eq!(
        text,
        r#"{"name":"vfw-cluster-provider+edge01","states":{"statusctxid":"","actions":[{"state":"Created","instance":"","time":"2020-08-21T18:17:02.464Z","revision":0}]},"cluster":{}}"#
    );
    // The seed shape has no `cluster` at all.
    let text = answer_text(NCM, &created, &StatusIndex::new(), None, &[]);
    assert_eq!(
        text,
        r#"{"name":"vfw-cluster-provider+edge01","state":{"Actions":[{"State":"Created","ContextId":"","TimeStamp":"2020-08-21T18:17:02.464Z"}]}}"#
    );
}

#[test]
fn cluster_network_intents_ignore_list_flags_and_the_app_filter() {
    let full = ncm_answer(&[("status", "deployed")]);
    for flag in ["apps", "clusters", "resources"] {
        assert_eq!(
            ncm_answer(&[("status", "deployed"), (flag, "")]),
            full,
            "?{flag} is not an ncm query"
        );
    }
    assert_eq!(ncm_answer(&[("status", "deployed"), ("app", "other")]), full);
    assert_eq!(
        serde_json::to_string(&ncm_answer(&[("app", "other")])).unwrap(),
        serde_json::to_string(&serde_json::from_str::<Json>(SEED_NCM_EXAMPLE).unwrap()).unwrap()
    );
}

#[test]
fn logical_clouds_default_to_status_ready_with_the_clusters_lifted() {
    let answer = lc_answer(&[]);
    assert_eq!(
        keys(&answer),
        [
            "project",
            "name",
            "states",
            "deployedStatus",
            "readyStatus",
            "readyCounts",
            "clusters",
            "readiness"
        ]
    );
    assert_eq!(
        (&answer["project"], &answer["name"]),
        (&json!("proj"), &json!("lc1"))
    );
    assert_eq!(answer, lc_answer(&[("status", "ready")]));
    // The first cluster reports the CSR, the second nothing yet; RBAC, Namespace and quota have no readiness.
    assert_eq!(answer["readyStatus"], "NotReady");
    assert_eq!(answer["readyCounts"], json!({"Ready": 1, "NotPresent": 1}));
    let clusters = answer["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 2);
    assert_eq!(
        keys(&clusters[1]),
        ["clusterProvider", "cluster", "connectivity", "resources"]
    );
    assert_eq!(
        (&clusters[1]["clusterProvider"], &clusters[1]["cluster"]),
        (&json!("prov"), &json!("c2"))
    );
    let csr = |cluster: &Json| {
        cluster["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "lc1-user-csr")
            .unwrap()["readyStatus"]
            .clone()
    };
    assert_eq!(
        (csr(&clusters[0]), csr(&clusters[1])),
        (json!("Ready"), json!("NotPresent"))
    );
    assert_eq!(clusters[0]["resources"].as_array().unwrap().len(), 5);

    let deployed = lc_answer(&[("status", "deployed")]);
    assert_eq!(
        keys(&deployed),
        [
            "project",
            "name",
            "states",
            "deployedStatus",
            "deployedCounts",
            "clusters",
            "readiness"
        ]
    );
    assert_eq!(deployed["deployedCounts"], json!({"Applied": 10}));
    assert_eq!(
        deployed["clusters"][0]["resources"][0]["deployedStatus"],
        "Applied"
    );

    let filtered = lc_answer(&[("cluster", "prov+c2"), ("app", "ignored")]);
    assert_eq!(filtered["clusters"].as_array().unwrap().len(), 1);
    assert_eq!(filtered["readyCounts"], json!({"NotPresent": 1}));

    let summary = lc_answer(&[("output", "summary")]);
    assert!(summary.get("clusters").is_none());
    assert_eq!(summary["readyCounts"], answer["readyCounts"]);
}

#[test]
fn logical_cloud_revisions_count_every_action_and_updates_keep_the_status_context() {
    let mut state = lc_state();
    state.push(
        StateValue::Updated,
        ContextId::new(77),
        "2026-11-23T11:00:00Z".into(),
    );
    let text = answer_text(
        LC,
        &state,
        &lc_index(),
        Some(LC_CONTEXT),
        &[("output", "summary")],
    );
    let answer: Json = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["states"]["statusctxid"], LC_CONTEXT.to_string());
    let revisions: Vec<u64> = answer["states"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["revision"].as_u64().unwrap())
        .collect();
    assert_eq!(revisions, [0, 1, 2]);
    state.push(
        StateValue::Terminated,
        ContextId::new(77),
        "2026-11-23T12:00:00Z".into(),
    );
    let text = answer_text(
        LC,
        &state,
        &lc_index(),
        Some(LC_CONTEXT),
        &[("output", "summary")],
    );
    let answer: Json = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["states"]["statusctxid"], "77");
}

#[test]
fn a_level_0_logical_cloud_shows_its_status_only() {
    let id = ContextId::new(5).unwrap();
    let mut index = StatusIndex::new();
    index.apply_meta(&meta(
        id,
        "logical-cloud",
        &LC_CLUSTERS,
        ContextStatus::Instantiated,
    ));
    for cluster in LC_CLUSTERS {
        index.apply_cluster(id, &ClusterRecord::pending("logical-cloud", cluster, vec![]));
    }
    let mut state = StateInfo::created("t0".into());
    state.push(StateValue::Instantiated, Some(id), "t1".into());
    let answer: Json = serde_json::from_str(&answer_text(LC, &state, &index, Some(5), &[])).unwrap();
    assert_eq!(
        keys(&answer),
        [
            "project",
            "name",
            "states",
            "deployedStatus",
            "readyStatus",
            "readiness"
        ]
    );
    assert_eq!(
        (&answer["deployedStatus"], &answer["readyStatus"]),
        (&json!("Instantiated"), &json!("Ready"))
    );
}

#[test]
fn logical_cloud_list_queries_name_the_logical_cloud() {
    let clusters = lc_answer(&[("clusters", ""), ("app", "ignored")]);
    assert_eq!(
        serde_json::to_string(&clusters).unwrap(),
        r#"{"project":"proj","name":"lc1","clustersByApp":[{"app":"logical-cloud","clusters":[{"clusterProvider":"prov","cluster":"c1"},{"clusterProvider":"prov","cluster":"c2"}]}]}"#
    );
    // `apps` is no dcm query: `clusters` after it still is.
    assert_eq!(lc_answer(&[("apps", ""), ("clusters", "")]), clusters);
    assert_eq!(lc_answer(&[("apps", "")]), lc_answer(&[]));

    let resources = lc_answer(&[("resources", ""), ("cluster", "prov+c1")]);
    assert_eq!(keys(&resources), ["project", "name", "resourcesByApp"]);
    let entries = resources["resourcesByApp"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(
        keys(&entries[0]),
        ["app", "clusterProvider", "cluster", "resources"]
    );
    assert_eq!(entries[0]["app"], "logical-cloud");
    assert_eq!(
        entries[0]["resources"][0],
        json!({"name": "lc1-ns", "GVK": {"Group": "", "Version": "v1", "Kind": "Namespace"}})
    );
    assert_eq!(keys(&entries[0]["resources"][0]), ["name", "GVK"]);
}

#[test]
fn logical_clouds_in_the_seed_shape_have_the_dig_skeleton() {
    let answer = lc_answer(&[("type", "rsync")]);
    assert_eq!(
        keys(&answer),
        ["project", "name", "state", "status", "rsync-status", "apps"]
    );
    assert_eq!(answer["rsync-status"], json!({"Applied": 10}));
    assert_eq!(answer["apps"][0]["name"], "logical-cloud");
    assert_eq!(
        keys(&answer["apps"][0]["clusters"][0]),
        ["cluster-provider", "cluster", "resources"]
    );
    let cluster = lc_answer(&[("type", "cluster"), ("output", "summary")]);
    assert_eq!(
        keys(&cluster),
        ["project", "name", "state", "status", "cluster-status"]
    );
}
