//! Readiness judged by kstatus (sigs.k8s.io/cli-utils, `pkg/kstatus/status`): every case of kstatus's own compute
//! tests (`fixtures/kstatus-compute.json`, brought in by `scripts/kstatus-fixtures.py`) is assessed by emco's
//! `assess`; its health must be the status kstatus expects (`Ready` is kstatus's `Current`) for at least 95 % of the
//! cases, and every case where it is not must be a deliberate difference listed, with its reason, in
//! `kstatus-differences.txt` (the test fails on an unlisted difference and on a listed case that agrees, so the list
//! stays true).

use std::collections::BTreeMap;

use emco_k8s::readiness::{Health, assess};
use serde_json::Value as Json;

const REQUIRED_AGREEMENT: f64 = 0.95;

fn kstatus_name(health: Health) -> &'static str {
    match health {
        Health::Ready => "Current",
        Health::InProgress => "InProgress",
        Health::Failed => "Failed",
        Health::Terminating => "Terminating",
        Health::Unknown => "Unknown",
    }
}

fn listed_differences() -> BTreeMap<String, String> {
    include_str!("kstatus-differences.txt")
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once(": "))
        .map(|(case, reason)| (case.trim().to_string(), reason.trim().to_string()))
        .collect()
}

#[test]
fn readiness_agrees_with_kstatus_on_its_own_cases() {
    let fixture: Json =
        serde_json::from_str(include_str!("fixtures/kstatus-compute.json")).expect("the fixture is JSON");
    let cases = fixture["cases"].as_array().expect("cases");
    assert!(cases.len() >= 50, "the fixture holds kstatus's cases");
    let listed = listed_differences();
    let mut agreed = 0usize;
    let mut unlisted = Vec::new();
    let mut now_agree = Vec::new();
    for case in cases {
        let name = format!(
            "{}/{}",
            case["test"].as_str().unwrap_or("?"),
            case["case"].as_str().unwrap_or("?")
        );
        let expected = case["expected"].as_str().unwrap_or("?");
        let assessment = assess(&case["object"]);
        let ours = kstatus_name(assessment.health);
        if ours == expected {
            agreed += 1;
            if listed.contains_key(&name) {
                now_agree.push(name);
            }
        } else {
            eprintln!(
                "differs: {name}: emco {ours} ({}), kstatus {expected}",
                assessment.message
            );
            if !listed.contains_key(&name) {
                unlisted.push(format!(
                    "{name}: emco {ours} ({}), kstatus {expected}",
                    assessment.message
                ));
            }
        }
    }
    let share = agreed as f64 / cases.len() as f64;
    eprintln!(
        "kstatus agreement: {agreed} of {} cases ({:.1} %)",
        cases.len(),
        share * 100.0
    );
    assert!(
        unlisted.is_empty(),
        "differences from kstatus not in kstatus-differences.txt: {unlisted:#?}"
    );
    assert!(
        now_agree.is_empty(),
        "listed differences that now agree with kstatus; remove them: {now_agree:#?}"
    );
    assert!(
        share >= REQUIRED_AGREEMENT,
        "{agreed} of {} cases agree ({:.1} %), need {:.0} %",
        cases.len(),
        share * 100.0,
        REQUIRED_AGREEMENT * 100.0
    );
}
