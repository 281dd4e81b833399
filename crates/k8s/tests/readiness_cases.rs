//! The table of `assess` cases in `tests/readiness/*.yaml`: each case an object, the health expected and a
//! substring of the message expected (optionally a `hint`: the condition type that means ready). Every file is
//! read, so a new file of cases needs no code.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use emco_k8s::readiness::{Health, Hints, MAX_MESSAGE_CHARS, assess_with};
use serde_json::Value as Json;

/// Every case of every file: (file, case).
fn cases() -> Vec<(String, Json)> {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/readiness");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "yaml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let list: Vec<Json> =
            serde_saphyr::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        cases.extend(list.into_iter().map(|case| (name.clone(), case)));
    }
    cases
}

#[test]
fn every_case_gets_its_health_and_message() {
    let cases = cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for (file, case) in &cases {
        let title = format!("{file}: {}", case["case"].as_str().unwrap());
        let expected: Health = serde_json::from_value(case["health"].clone())
            .unwrap_or_else(|err| panic!("{title}: health: {err}"));
        let expected_message = case["message"].as_str().unwrap();
        let hints = match case["hint"].as_str() {
            Some(condition) => Hints::default().ready_condition(condition),
            None => Hints::default(),
        };
        let assessment = assess_with(&case["object"], &hints);
        if assessment.health != expected || !assessment.message.contains(expected_message) {
            failures.push(format!(
                "{title}: got {:?} {:?}, want {expected:?} with {expected_message:?}",
                assessment.health, assessment.message
            ));
        }
        assert!(
            !assessment.message.contains('\n') && assessment.message.chars().count() <= MAX_MESSAGE_CHARS + 1,
            "{title}: message not one bounded line: {:?}",
            assessment.message
        );
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_cases_cover_every_health() {
    let cases = cases();
    for health in ["Ready", "InProgress", "Failed", "Terminating", "Unknown"] {
        assert!(
            cases.iter().any(|(_, case)| case["health"] == health),
            "no case expects {health}"
        );
    }
}
