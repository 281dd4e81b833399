//! Render time of real charts, emco-helm beside Helm itself in the same run.
//!
//! `cargo bench -p emco-helm --bench render` renders each chart of the corpus listed below with its default values
//! 20 times, from the chart archive to the rendered text (what Helm's render returns) and to the objects (what
//! instantiate stores), and prints the medians and ranges. With `EMCO_HELM_PYTHON=/path/to/python` (a Python with
//! `helm-python-sdk`, see `scripts/helm-goldens.py`) it also times Helm rendering the same chart archives, loaded from
//! their bytes (`scripts/helm-render-time.py`), and prints the ratios emco / Helm (goal ≤ 0.5). Without the corpus
//! (`EMCO_HELM_CORPUS` or `../shared/helm-corpus`) it says so and exits. `EMCO_BENCH_CHARTS=a,b` narrows the run,
//! `EMCO_BENCH_RUNS=n` changes the number of timed renders.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use emco_helm::render::{Release, render_chart, render_templates};
use serde_json::Value as Json;

const CHARTS: &[&str] = &[
    "emco-examples/kube-prometheus-stack",
    "prometheus-community/prometheus",
    "emco-examples/nginx",
    "prometheus-community/prometheus-operator-crds",
    "emco-examples/composite-cnf-firewall--firewall",
];
const RUNS: usize = 20;

/// `EMCO_BENCH_RUNS` overrides [`RUNS`] (for profiling).
fn runs() -> usize {
    std::env::var("EMCO_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(RUNS)
}

fn stats(mut times: Vec<f64>) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or_default();
    (
        median,
        times.first().copied().unwrap_or_default(),
        times.last().copied().unwrap_or_default(),
    )
}

/// Runs `work` RUNS times after two warm-ups: its last result and the median, fastest and slowest milliseconds.
fn time<T>(mut work: impl FnMut() -> Result<T, String>) -> Result<(T, (f64, f64, f64)), String> {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs() + 2 {
        let start = Instant::now();
        let result = work()?;
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        last = Some(result);
    }
    let result = last.ok_or("no run")?;
    Ok((result, stats(times.split_off(2))))
}

/// Helm's median, fastest and slowest milliseconds per archive path, when EMCO_HELM_PYTHON is set.
fn time_helm(archives: &[PathBuf]) -> Option<Json> {
    let python = std::env::var("EMCO_HELM_PYTHON").ok()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/helm-render-time.py");
    let output = std::process::Command::new(python)
        .arg(script)
        .arg("--runs")
        .arg(runs().to_string())
        .args(archives)
        .output()
        .ok()?;
    serde_json::from_slice(&output.stdout).ok()
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
    let only = std::env::var("EMCO_BENCH_CHARTS").ok();
    let charts: Vec<&str> = CHARTS
        .iter()
        .copied()
        .filter(|chart| {
            only.as_deref()
                .is_none_or(|only| only.split(',').any(|name| chart.contains(name)))
        })
        .collect();
    // Both renderers start from the same archives: emco from the bytes, Helm from the file's bytes.
    let folder = std::env::temp_dir().join(format!("emco-render-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&folder);
    let mut archives: HashMap<&str, (PathBuf, Vec<u8>)> = HashMap::new();
    for chart in &charts {
        let dir = corpus.join(chart);
        let name = dir
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default()
            .to_string();
        let path = folder.join(format!("{}.tgz", chart.replace('/', "_")));
        if let Ok(tgz) = emco_helm::archive::pack_dir(&dir, &format!("{name}/"))
            && std::fs::write(&path, &tgz).is_ok()
        {
            archives.insert(chart, (path, tgz));
        }
    }
    let helm = time_helm(
        &charts
            .iter()
            .filter_map(|chart| archives.get(chart))
            .map(|(path, _)| path.clone())
            .collect::<Vec<_>>(),
    );
    let release = Release {
        name: "r1".into(),
        namespace: "default".into(),
    };
    let values = Json::Object(Default::default());
    println!(
        "| chart | objects | emco text (ms) | emco objects (ms) | Helm render (ms) | text / Helm | objects / Helm |"
    );
    println!("|---|---|---|---|---|---|---|");
    for chart in &charts {
        let Some((archive, tgz)) = archives.get(chart) else {
            println!("| {chart} | cannot pack | | | | | |");
            continue;
        };
        let text = time(|| {
            emco_helm::charts::load_archive(tgz)
                .map_err(|err| err.to_string())
                .and_then(|chart| render_templates(&chart, &values, &release).map_err(|err| err.to_string()))
        });
        let objects = time(|| {
            emco_helm::charts::load_archive(tgz)
                .map_err(|err| err.to_string())
                .and_then(|chart| render_chart(&chart, &values, &release).map_err(|err| err.to_string()))
                .map(|manifests| manifests.len())
        });
        let ((_, (text_median, text_low, text_high)), (count, (median, low, high))) = match (text, objects) {
            (Ok(text), Ok(objects)) => (text, objects),
            (Err(err), _) | (_, Err(err)) => {
                println!("| {chart} | fails: {err} | | | | | |");
                continue;
            }
        };
        let helm_times = helm
            .as_ref()
            .and_then(|helm| helm.get(archive.to_string_lossy().as_ref()))
            .and_then(Json::as_array);
        let (helm_text, ratios) =
            match helm_times.map(|t| t.iter().filter_map(Json::as_f64).collect::<Vec<_>>()) {
                Some(t) if t.len() == 3 => (
                    format!("{:.1} ({:.1}–{:.1})", t[0], t[1], t[2]),
                    format!("{:.2} | {:.2}", text_median / t[0], median / t[0]),
                ),
                _ => (
                    "not measured (set EMCO_HELM_PYTHON)".to_string(),
                    " | ".to_string(),
                ),
            };
        println!(
            "| {chart} | {count} | {text_median:.1} ({text_low:.1}–{text_high:.1}) | {median:.1} ({low:.1}–{high:.1}) | {helm_text} | {ratios} |"
        );
    }
    let _ = std::fs::remove_dir_all(&folder);
}
