//! Render time of real charts, emco-helm beside Helm itself in the same run.
//!
//! `cargo bench -p emco-helm --bench render` renders each chart of the corpus listed below with its default values
//! (chart archive → objects, as instantiate does) 20 times and prints the median and range. With
//! `EMCO_HELM_PYTHON=/path/to/python` (a Python with `helm-python-sdk`, see `scripts/helm-goldens.py`) it also times
//! Helm rendering the same charts (`scripts/helm-render-time.py`) and prints the ratio emco / Helm (goal ≤ 0.5).
//! Without the corpus (`EMCO_HELM_CORPUS` or `../shared/helm-corpus`) it says so and exits.

use std::path::{Path, PathBuf};
use std::time::Instant;

use emco_helm::render::{Release, render_chart};
use serde_json::Value as Json;

const CHARTS: &[&str] = &[
    "emco-examples/kube-prometheus-stack",
    "prometheus-community/prometheus",
    "emco-examples/nginx",
    "prometheus-community/prometheus-operator-crds",
    "emco-examples/composite-cnf-firewall--firewall",
];
const RUNS: usize = 20;

fn stats(mut times: Vec<f64>) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or_default();
    (
        median,
        times.first().copied().unwrap_or_default(),
        times.last().copied().unwrap_or_default(),
    )
}

fn main() {
    let corpus = std::env::var_os("EMCO_HELM_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/helm-corpus"),
        PathBuf::from,
    );
    if !corpus.is_dir() {
        println!("skipped: no Helm chart corpus at {}", corpus.display());
        return;
    }
    let release = Release {
        name: "r1".into(),
        namespace: "default".into(),
    };
    let helm = std::env::var("EMCO_HELM_PYTHON").ok().and_then(|python| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/helm-render-time.py");
        let mut command = std::process::Command::new(python);
        command.arg(script).arg("--runs").arg(RUNS.to_string());
        for chart in CHARTS {
            command.arg(corpus.join(chart));
        }
        let output = command.output().ok()?;
        serde_json::from_slice::<Json>(&output.stdout).ok()
    });
    println!("| chart | objects | emco median (range) ms | Helm median (range) ms | emco / Helm |");
    println!("|---|---|---|---|---|");
    for chart in CHARTS {
        let dir = corpus.join(chart);
        let folder = dir
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default()
            .to_string();
        let Ok(tgz) = emco_helm::archive::pack_dir(&dir, &format!("{folder}/")) else {
            println!("| {chart} | cannot pack | | | |");
            continue;
        };
        let mut times = Vec::new();
        let mut objects = 0;
        for _ in 0..RUNS + 2 {
            let start = Instant::now();
            let rendered = emco_helm::charts::load_archive(&tgz)
                .map_err(|err| err.to_string())
                .and_then(|chart| {
                    render_chart(&chart, &Json::Object(Default::default()), &release)
                        .map_err(|err| err.to_string())
                });
            times.push(start.elapsed().as_secs_f64() * 1000.0);
            match rendered {
                Ok(manifests) => objects = manifests.len(),
                Err(err) => {
                    println!("| {chart} | fails: {err} | | | |");
                    break;
                }
            }
        }
        let (median, low, high) = stats(times.split_off(2));
        let helm_times = helm
            .as_ref()
            .and_then(|helm| helm.get(dir.to_string_lossy().as_ref()))
            .and_then(Json::as_array);
        let (helm_text, ratio) =
            match helm_times.map(|t| t.iter().filter_map(Json::as_f64).collect::<Vec<_>>()) {
                Some(t) if t.len() == 3 => (
                    format!("{:.1} ({:.1}–{:.1})", t[0], t[1], t[2]),
                    format!("{:.2}", median / t[0]),
                ),
                _ => ("not measured (set EMCO_HELM_PYTHON)".to_string(), String::new()),
            };
        println!("| {chart} | {objects} | {median:.1} ({low:.1}–{high:.1}) | {helm_text} | {ratio} |");
    }
}
