//! Conformance with Helm: every case of the chart corpus (`../shared/helm-corpus`: a chart with its default values,
//! and one case per file in its `ci/` folder) and of the repository's own conformance charts (`tests/corpus`: number
//! literals, block scalars ending a document) is rendered by emco-helm and compared with what real Helm rendered for
//! it (`tests/goldens/`, produced by `scripts/helm-goldens.py`): each rendered file's text exactly, and each of its
//! documents as an object — split as Helm splits a manifest and read by emco's YAML reader, against the digest of
//! what Helm's own YAML reader (go-yaml) made of Helm's text. (Comparing objects that emco's reader made of both texts,
//! as this test once did, cannot see a reader that is wrong the same way on both: a block scalar ending a document
//! got a final line break Go does not give it, in 22 cases of the corpus.)
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

/// The repository's own conformance charts, whose goldens sit under `tests/goldens/conformance`.
fn own_corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

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

/// Where two texts first differ: the line, and both lines (their ends shown, so a missing line break is seen).
fn first_text_difference(ours: &str, helm: &str) -> String {
    let mut ours_lines = ours.split_inclusive('\n');
    let mut helm_lines = helm.split_inclusive('\n');
    let mut number = 1;
    loop {
        match (ours_lines.next(), helm_lines.next()) {
            (Some(a), Some(b)) if a == b => number += 1,
            (a, b) => {
                return format!(
                    "text differs at line {number}: emco {:?} vs Helm {:?}",
                    a.unwrap_or("(end)"),
                    b.unwrap_or("(end)")
                );
            }
        }
    }
}

/// The SHA-256 (hex) of an object's canonical JSON text, as `scripts/helm-goldens.py` computes it for Helm's.
fn digest(value: &Json) -> String {
    use sha2::Digest;
    let mut text = String::new();
    canonical(value, &mut text);
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Keys sorted, integral numbers below 2^53 as integers, any other number as Go's `%.17g` (the script's Python
/// `%.17g` prints the same), strings as JSON escapes them.
fn canonical(value: &Json, out: &mut String) {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Json::Number(number) => {
            let float = number.as_f64().unwrap_or_default();
            if let Some(int) = number.as_i64().filter(|int| int.unsigned_abs() < 1 << 53) {
                out.push_str(&int.to_string());
            } else if float.fract() == 0.0 && float.abs() < EXACT {
                out.push_str(&(float as i64).to_string());
            } else {
                out.push_str(&emco_helm::gotemplate::fmt::format_float(float, 'g', 17));
            }
        }
        Json::String(text) => out.push_str(&Json::String(text.clone()).to_string()),
        Json::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Json::Object(fields) => {
            out.push('{');
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Json::String(key.clone()).to_string());
                out.push(':');
                canonical(&fields[key], out);
            }
            out.push('}');
        }
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
    let own = own_corpus_dir().join(chart_name);
    let chart_dir = if own.is_dir() {
        own
    } else {
        corpus.join(chart_name)
    };
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
        if ours != helm_text {
            return Outcome::Different(format!("{name}: {}", first_text_difference(&ours, helm_text)));
        }
        let Some(helm_digests) = golden["objects"].get(name).and_then(Json::as_array) else {
            return Outcome::Different(format!(
                "{name}: the golden has no object digests (run scripts/helm-goldens.py)"
            ));
        };
        let documents = emco_helm::render::split_documents(&ours);
        if documents.len() != helm_digests.len() {
            return Outcome::Different(format!(
                "{name}: {} documents, Helm {}",
                documents.len(),
                helm_digests.len()
            ));
        }
        for (index, (document, helm_digest)) in documents.iter().zip(helm_digests).enumerate() {
            let ours = emco_helm::formats::yaml::parse(document)
                .ok()
                .map(|object| match object {
                    // go-yaml reads a document of comments only as an empty map.
                    Json::Null => Json::Object(serde_json::Map::new()),
                    object => object,
                });
            let our_digest = ours.as_ref().map(digest);
            if our_digest.as_deref() != helm_digest.as_str() {
                return Outcome::Different(format!(
                    "{name}#{index}: emco's YAML reader makes {} of the document, Helm's {}",
                    ours.map_or_else(|| "an error".to_string(), |object| short(Some(&object))),
                    if helm_digest.is_null() {
                        "an error"
                    } else {
                        "another object"
                    }
                ));
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
    let mut files = Vec::new();
    let corpus = match corpus_dir() {
        Some(corpus) => {
            golden_files(&goldens_dir(), &mut files);
            corpus
        }
        None => {
            eprintln!(
                "the Helm chart corpus is not here (set EMCO_HELM_CORPUS or put it at ../shared/helm-corpus): only the repository's own conformance charts run"
            );
            golden_files(&goldens_dir().join("conformance"), &mut files);
            own_corpus_dir()
        }
    };
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
