//! Conformance with Helm: every case of the chart corpus (`../shared/helm-corpus`: a chart with its default values,
//! and one case per file in its `ci/` folder) is rendered by emco-helm and compared, template by template and object
//! by object, with what real Helm rendered for it (`tests/goldens/`, produced by `scripts/helm-goldens.py`).
//!
//! Lines that differ between two runs of Helm itself (generated passwords, keys, UUIDs) are compared by shape: the
//! same key, a value present or absent alike. A case Helm rejects must be rejected by emco too.
//!
//! The test fails when fewer than 98 % of the cases are identical, or when a case that is not identical is missing
//! from `tests/known-gaps.txt` (one line per case: `<corpus>/<chart>/<case>: <reason>`), or when a case listed there
//! passes (so the list stays true). Without the corpus (`EMCO_HELM_CORPUS` or `../shared/helm-corpus` beside the
//! repository) it prints why and passes: the corpus is not part of the repository.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use emco_helm::render::{Release, render_templates};
use serde_json::Value as Json;

const REQUIRED_IDENTICAL: f64 = 0.98;

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("EMCO_HELM_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/helm-corpus"),
        PathBuf::from,
    );
    dir.is_dir().then_some(dir)
}

fn goldens_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/goldens")
}

fn golden_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            golden_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            found.push(path);
        }
    }
}

/// What happened to one case.
enum Outcome {
    Identical,
    Different(String),
}

/// Replaces, in emco's output, the lines Helm itself renders differently each run with Helm's line, when they have
/// the same shape (same text before the value, a value present or absent alike).
fn neutralise_random(ours: &str, helm: &str, lines: &[usize]) -> Result<String, String> {
    let mut ours: Vec<&str> = ours.split('\n').collect();
    let helm: Vec<&str> = helm.split('\n').collect();
    for &line in lines {
        let index = line - 1;
        let (Some(mine), Some(theirs)) = (ours.get(index), helm.get(index)) else {
            return Err(format!("line {line} (random in Helm) is missing"));
        };
        let key = |text: &str| match text.find(": ") {
            Some(at) => text[..at].to_string(),
            None => text.chars().take_while(|c| *c == ' ').collect(),
        };
        let has_value = |text: &str| !text.trim_end().ends_with(':') && !text.trim().is_empty();
        if key(mine) != key(theirs) || has_value(mine) != has_value(theirs) {
            return Err(format!(
                "line {line} (random in Helm) has another shape: {mine:?} vs Helm's {theirs:?}"
            ));
        }
        ours[index] = theirs;
    }
    Ok(ours.join("\n"))
}

fn objects(name: &str, text: &str) -> Result<Vec<Json>, String> {
    emco_helm::formats::yaml::parse_documents(text).map_err(|err| format!("{name}: not YAML: {err}"))
}

fn first_difference(path: &str, ours: &Json, helm: &Json) -> String {
    match (ours, helm) {
        (Json::Object(a), Json::Object(b)) => {
            for key in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) if x == y => {}
                    (Some(x), Some(y)) => return first_difference(&format!("{path}/{key}"), x, y),
                    (x, y) => {
                        return format!("{path}/{key}: emco {} vs Helm {}", short(x), short(y));
                    }
                }
            }
            format!("{path}: differs")
        }
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    return first_difference(&format!("{path}/{index}"), x, y);
                }
            }
            format!("{path}: differs")
        }
        _ => format!("{path}: emco {} vs Helm {}", short(Some(ours)), short(Some(helm))),
    }
}

fn short(value: Option<&Json>) -> String {
    let text = value.map_or_else(|| "absent".to_string(), Json::to_string);
    if text.len() > 120 {
        format!("{}…", text.chars().take(120).collect::<String>())
    } else {
        text
    }
}

fn run_case(corpus: &Path, golden: &Json) -> Outcome {
    let chart_name = golden["chart"].as_str().unwrap_or_default();
    let chart_dir = corpus.join(chart_name);
    let folder = chart_dir
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default()
        .to_string();
    let tgz = match emco_helm::archive::pack_dir(&chart_dir, &format!("{folder}/")) {
        Ok(tgz) => tgz,
        Err(err) => return Outcome::Different(format!("cannot pack the chart: {err}")),
    };
    let values = match golden["values"].as_str() {
        None => Json::Object(Default::default()),
        Some(file) => {
            let text = std::fs::read_to_string(chart_dir.join(file)).unwrap_or_default();
            match emco_helm::formats::yaml::parse(&text) {
                Ok(Json::Null) => Json::Object(Default::default()),
                Ok(values) => values,
                Err(err) => return Outcome::Different(format!("{file}: {err}")),
            }
        }
    };
    let release = Release {
        name: "r1".into(),
        namespace: "default".into(),
    };
    let result = emco_helm::charts::load_archive(&tgz)
        .map_err(|err| err.to_string())
        .and_then(|chart| render_templates(&chart, &values, &release).map_err(|err| err.to_string()));
    match (golden["outcome"].as_str(), result) {
        (Some("error"), Err(err)) => {
            let helm = golden["error"].as_str().unwrap_or_default();
            if err != helm {
                eprintln!(
                    "same outcome, other words: emco {err:?}\n                             Helm {helm:?}"
                );
            }
            Outcome::Identical
        }
        (Some("error"), Ok(_)) => Outcome::Different(format!(
            "Helm rejects it ({}), emco renders it",
            golden["error"]
                .as_str()
                .unwrap_or_default()
                .lines()
                .next()
                .unwrap_or_default()
        )),
        (_, Err(err)) => Outcome::Different(format!(
            "emco fails: {}",
            err.lines().collect::<Vec<_>>().join(" ⏎ ")
        )),
        (_, Ok(rendered)) => compare(golden, &rendered),
    }
}

fn compare(golden: &Json, rendered: &BTreeMap<String, String>) -> Outcome {
    let empty = serde_json::Map::new();
    let helm = golden["manifests"].as_object().unwrap_or(&empty);
    let helm_names: BTreeSet<&str> = helm.keys().map(String::as_str).collect();
    let our_names: BTreeSet<&str> = rendered.keys().map(String::as_str).collect();
    if helm_names != our_names {
        let missing: Vec<_> = helm_names.difference(&our_names).take(3).collect();
        let extra: Vec<_> = our_names.difference(&helm_names).take(3).collect();
        return Outcome::Different(format!("templates differ: missing {missing:?}, extra {extra:?}"));
    }
    for (name, helm_text) in helm {
        if name.ends_with("NOTES.txt") {
            continue;
        }
        let helm_text = helm_text.as_str().unwrap_or_default();
        let mut ours = rendered.get(name).cloned().unwrap_or_default();
        if let Some(lines) = golden["random"].get(name).and_then(Json::as_array) {
            let lines: Vec<usize> = lines
                .iter()
                .filter_map(Json::as_u64)
                .map(|l| l as usize)
                .collect();
            match neutralise_random(&ours, helm_text, &lines) {
                Ok(text) => ours = text,
                Err(why) => return Outcome::Different(format!("{name}: {why}")),
            }
        }
        let (mine, theirs) = match (objects(name, &ours), objects(name, helm_text)) {
            (Ok(mine), Ok(theirs)) => (mine, theirs),
            (Err(err), _) => return Outcome::Different(err),
            (_, Err(err)) => return Outcome::Different(format!("Helm's output: {err}")),
        };
        if mine.len() != theirs.len() {
            return Outcome::Different(format!("{name}: {} objects, Helm {}", mine.len(), theirs.len()));
        }
        for (index, (a, b)) in mine.iter().zip(&theirs).enumerate() {
            if a != b {
                return Outcome::Different(format!("{name}#{index}: {}", first_difference("", a, b)));
            }
        }
    }
    Outcome::Identical
}

fn known_gaps() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/known-gaps.txt"))
        .unwrap_or_default();
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once(": "))
        .map(|(case, reason)| (case.trim().to_string(), reason.trim().to_string()))
        .collect()
}

#[test]
fn renders_the_corpus_as_helm_does() {
    let Some(corpus) = corpus_dir() else {
        eprintln!(
            "skipped: the Helm chart corpus is not here (set EMCO_HELM_CORPUS or put it at ../shared/helm-corpus)"
        );
        return;
    };
    let mut files = Vec::new();
    golden_files(&goldens_dir(), &mut files);
    files.sort();
    assert!(!files.is_empty(), "no goldens under {}", goldens_dir().display());
    let gaps = known_gaps();
    let mut identical = 0usize;
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    for file in &files {
        let case = file
            .strip_prefix(goldens_dir())
            .unwrap_or(file)
            .with_extension("")
            .to_string_lossy()
            .replace('\\', "/");
        let golden: Json =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap_or_default()).unwrap_or_default();
        let outcome = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn({
                let corpus = corpus.clone();
                move || run_case(&corpus, &golden)
            })
            .and_then(|handle| {
                handle
                    .join()
                    .map_err(|_| std::io::Error::other("render panicked"))
            })
            .unwrap_or_else(|err| Outcome::Different(format!("panicked: {err}")));
        match outcome {
            Outcome::Identical => {
                identical += 1;
                if gaps.contains_key(&case) {
                    fixed.push(case);
                }
            }
            Outcome::Different(why) => {
                eprintln!("differs: {case}: {why}");
                if !gaps.contains_key(&case) {
                    unexpected.push(format!("{case}: {why}"));
                }
            }
        }
    }
    let share = identical as f64 / files.len() as f64;
    eprintln!(
        "conformance: {identical} of {} cases identical to Helm ({:.1} %)",
        files.len(),
        share * 100.0
    );
    assert!(
        fixed.is_empty(),
        "cases listed in known-gaps.txt now match Helm; remove them: {fixed:#?}"
    );
    assert!(
        unexpected.is_empty(),
        "cases differ from Helm and are not in known-gaps.txt: {unexpected:#?}"
    );
    assert!(
        share >= REQUIRED_IDENTICAL,
        "only {identical} of {} cases identical ({:.1} %, need {:.0} %)",
        files.len(),
        share * 100.0,
        REQUIRED_IDENTICAL * 100.0
    );
}
