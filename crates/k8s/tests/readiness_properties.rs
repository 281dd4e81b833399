//! Properties of `assess` over hostile input: no object makes it panic, whatever the shapes under `status`,
//! `spec` and `metadata`; the message is one line of bounded length however long the names and messages in the
//! object; deep and huge objects are assessed without blowing the stack or taking long.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use emco_k8s::readiness::{Health, Hints, MAX_MESSAGE_CHARS, assess, assess_with, readiness};
use emco_model::ReadyStatus;
use proptest::prelude::*;
use serde_json::{Value as Json, json};

/// The kinds with a rule of their own, and a custom one.
const KINDS: &[(&str, &str)] = &[
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("v1", "Pod"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Service"),
    ("networking.k8s.io/v1", "Ingress"),
    ("policy/v1", "PodDisruptionBudget"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("v1", "Namespace"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"),
    ("v1", "ResourceQuota"),
    ("v1", "ConfigMap"),
    ("k8splugin.io/v1alpha1", "ResourceBundleState"),
    ("example.com/v1", "Widget"),
];

/// Any JSON value, with words an assessment looks for among the strings and keys.
fn any_json() -> impl Strategy<Value = Json> {
    let word = prop::sample::select(vec![
        "Ready",
        "True",
        "False",
        "Stalled",
        "Reconciling",
        "Running",
        "Pending",
        "Failed",
        "Succeeded",
        "Bound",
        "Lost",
        "CrashLoopBackOff",
        "Complete",
        "Approved",
        "Denied",
        "LoadBalancer",
        "OnDelete",
        "type",
        "status",
        "reason",
        "message",
        "conditions",
        "phase",
        "state",
        "waiting",
        "replicas",
        "name",
    ])
    .prop_map(str::to_string);
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<f64>().prop_map(Json::from),
        word.clone().prop_map(Json::from),
        ".{0,20}".prop_map(Json::from),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::from),
            prop::collection::btree_map(word.clone(), inner, 0..6)
                .prop_map(|map| Json::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_object_gets_a_bounded_one_line_verdict(
        kind in prop::sample::select(KINDS),
        metadata in any_json(),
        spec in any_json(),
        status in any_json(),
        hint in prop::option::of("[A-Za-z]{1,10}"),
    ) {
        let object = json!({"apiVersion": kind.0, "kind": kind.1, "metadata": metadata, "spec": spec, "status": status});
        let hints = Hints { ready_condition: hint };
        let assessment = assess_with(&object, &hints);
        prop_assert!(!assessment.message.chars().any(char::is_control), "{:?}", assessment.message);
        prop_assert!(assessment.message.chars().count() <= MAX_MESSAGE_CHARS + 1);
        prop_assert!(assessment.message.starts_with(kind.1), "{:?}", assessment.message);
        prop_assert_eq!(
            ReadyStatus::from(assessment.health) == ReadyStatus::Ready,
            assessment.health == Health::Ready
        );
        // The two-valued rule answers for the same objects without panicking.
        let group = kind.0.rsplit_once('/').map_or("", |(group, _)| group);
        let _ = readiness(group, kind.1, &object);
    }

    #[test]
    fn anything_at_all_is_assessed(value in any_json()) {
        let assessment = assess(&value);
        prop_assert!(!assessment.message.contains('\n'));
    }
}

#[test]
fn huge_objects_give_short_messages() {
    let long = "x".repeat(1 << 20);
    let conditions: Vec<Json> = (0..3)
        .map(|i| json!({"type": format!("C{i}"), "status": "True", "message": long.clone()}))
        .chain((0..100_000).map(|_| json!({"type": "Other", "status": "False"})))
        .chain([json!({"type": "Ready", "status": "False", "reason": long, "message": long})])
        .collect();
    let object = json!({
        "apiVersion": "example.com/v1", "kind": long, "metadata": {"name": long},
        "status": {"conditions": conditions},
    });
    let assessment = assess(&object);
    assert!(assessment.message.chars().count() <= MAX_MESSAGE_CHARS + 1);
    // The Ready condition is beyond the entries read: the object counts as having no readiness conditions.
    assert_eq!(assessment.health, Health::Ready, "{}", assessment.message);

    let many_containers: Vec<Json> = (0..50_000)
        .map(
            |i| json!({"name": format!("c{i}"), "ready": false, "restartCount": 0, "state": {"running": {}}}),
        )
        .collect();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
                     "status": {"phase": "Running", "containerStatuses": many_containers}});
    let assessment = assess(&pod);
    assert_eq!(assessment.health, Health::InProgress);
    assert!(
        assessment.message.contains("0 of 50000 containers ready"),
        "{}",
        assessment.message
    );
}

/// `{"status": {"status": … "bottom"}}`, `depth` levels deep (built without recursion).
fn deep(depth: usize) -> Json {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = json!({"status": value, "conditions": [{"type": "Ready", "status": "True"}]});
    }
    value
}

#[test]
fn deep_objects_are_assessed() {
    let object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                        "spec": deep(1_000), "status": deep(1_000)});
    let assessment = assess(&object);
    assert_eq!(assessment.health, Health::InProgress, "{}", assessment.message);
    assert!(
        assessment.message.starts_with("Deployment d: "),
        "{}",
        assessment.message
    );
    // serde_json drops a value recursively: forget this one rather than risk the test thread's stack.
    std::mem::forget(object);
}
