//! Renders one chart of the corpus a number of times, as the render bench does once per timed run (archive bytes →
//! text, then archive bytes → objects), without timing anything: a steady workload to count instructions with
//! `valgrind --tool=callgrind`, which repeats exactly under load where wall-clock times do not.
//!
//! `cargo run --release -p emco-helm --example render_loop -- <chart dir> [runs]`

use emco_helm::render::{Release, render_chart, render_templates};
use serde_json::Value as Json;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: render_loop <chart dir> [runs]")?;
    let runs: usize = args.next().map_or(Ok(1), |runs| {
        runs.parse().map_err(|_| format!("runs: not a number: {runs}"))
    })?;
    let dir = std::path::Path::new(&dir);
    let name = dir
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| format!("{}: no folder name", dir.display()))?;
    let tgz = emco_helm::archive::pack_dir(dir, &format!("{name}/")).map_err(|err| err.to_string())?;
    let release = Release {
        name: "r1".into(),
        namespace: "default".into(),
    };
    let values = Json::Object(Default::default());
    let mut objects = 0;
    let mut bytes = 0;
    for _ in 0..runs {
        let chart = emco_helm::charts::load_archive(&tgz).map_err(|err| err.to_string())?;
        let text = render_templates(&chart, &values, &release).map_err(|err| err.to_string())?;
        bytes = text.values().map(String::len).sum::<usize>();
        let chart = emco_helm::charts::load_archive(&tgz).map_err(|err| err.to_string())?;
        objects = render_chart(&chart, &values, &release)
            .map_err(|err| err.to_string())?
            .len();
    }
    println!("{name}: {objects} objects, {bytes} bytes of text per run, {runs} runs");
    Ok(())
}
