//! The Helm chart model: loading a chart (archive or file list) with its subcharts, `Chart.yaml` metadata,
//! dependencies (`condition`, `tags`, `alias`, `import-values`), values coalescing with `global`, `values.schema.json`
//! validation, `.helmignore`, the `.Files` object and `.Capabilities`, and what each template sees.
//!
//! The pipeline mirrors Helm v4's `helm template`:
//! 1. [`load_archive`] / [`load_files`] (Helm's `loader.LoadArchive` / `loader.LoadDir`) build a [`Chart`] tree;
//! 2. [`prepare`] runs `CheckDependencies`, `ProcessDependencies` (enabled subcharts, aliases, `import-values`),
//!    `CoalesceValues` and the schema validation, and returns the enabled tree with the top-level values;
//! 3. [`template_jobs`] builds, on the rendering thread, every template's text and the dot it executes with, in
//!    Helm's parse/execution order.
//!
//! Nothing here reads the file system, the environment or the network: charts arrive as bytes.

mod capabilities;
mod coalesce;
mod dependencies;
mod files;
mod helmignore;
mod load;
mod metadata;
mod schema;
mod templates;
mod tree;

pub use capabilities::{BuildInfo, Capabilities, DEFAULT_API_VERSIONS, KubeVersion, VersionSet};
pub use coalesce::{coalesce_values, prepare, prepare_with_warnings};
pub use dependencies::{check_dependencies, process_dependencies};
pub use files::Files;
pub use load::{MAX_CHART_DEPTH, MAX_FILE_BYTES, load_archive, load_files};
pub use metadata::{Dependency, Maintainer, Metadata};
pub use schema::validate_against_schema;
pub(crate) use templates::template_jobs_observed;
pub use templates::{
    ReleaseInfo, TemplateJob, check_installable, check_kube_version, helm_template_order, template_jobs,
};

use serde_json::Value as Json;

/// A chart file's bytes as text, invalid UTF-8 replaced as Go's conversions replace it (the check of valid text,
/// which nearly every file is, is much faster than the replacing walk).
pub(crate) fn file_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Why a chart could not be loaded, prepared or validated; each message is Helm's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChartError {
    /// The archive itself is damaged or too large.
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
    /// The chart's files are not a valid chart (Helm's loader messages, e.g. `Chart.yaml file is missing`,
    /// `validation: chart.metadata.name is required`, `cannot load values.yaml: …`).
    #[error("{0}")]
    Load(String),
    /// Dependencies declared in `Chart.yaml` without a chart in `charts/`.
    #[error(
        "an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to \
         fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {0}"
    )]
    MissingDependencies(String),
    /// Values that cannot be coalesced (`type mismatch on sub: %!t(string=x)`).
    #[error("{0}")]
    Values(String),
    /// Values that break a chart's `values.schema.json` (`values don't meet the specifications of the schema(s)
    /// in the following chart(s):\n…`).
    #[error("{0}")]
    Schema(String),
    /// The chart cannot be rendered for this cluster or at all (`kubeVersion`, library charts).
    #[error("{0}")]
    NotInstallable(String),
}

/// One file of a chart (a template, a file under `.Files`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Its path relative to its chart, e.g. `templates/deployment.yaml`.
    pub name: String,
    /// Its bytes (a leading UTF-8 byte order mark removed, as Helm does).
    pub data: Vec<u8>,
}

/// A loaded chart with its subcharts (Helm's `chart.Chart`).
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// `Chart.yaml` (with `requirements.yaml` merged in for apiVersion v1 charts).
    pub metadata: Metadata,
    /// `values.yaml` (every document merged), an object; shared, as rendering copies a chart to rewrite its
    /// dependencies but reads its values.
    pub values: std::sync::Arc<Json>,
    /// `values.schema.json`, as found.
    pub schema: Option<Vec<u8>>,
    /// Files under `templates/`.
    pub templates: Vec<File>,
    /// Every other file: what `.Files` holds (`crds/`, `README.md`, `.helmignore`, `charts/*.prov`, …).
    pub files: Vec<File>,
    /// The subcharts found in `charts/` (sorted by their folder or archive name).
    pub dependencies: Vec<Chart>,
}

impl Chart {
    /// The chart's name (`.Chart.Name`; an alias once dependencies are processed).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// Whether `type: library`.
    #[must_use]
    pub fn is_library(&self) -> bool {
        self.metadata.chart_type.eq_ignore_ascii_case("library")
    }

    /// Every file under `crds/` with a manifest extension in this chart and its subcharts, as Helm's
    /// `CRDObjects` lists them: `(path like "parent/charts/sub/crds/x.yaml", bytes)`.
    #[must_use]
    pub fn crd_objects(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        self.collect_crds(self.name(), &mut out);
        out
    }

    fn collect_crds(&self, full_path: &str, out: &mut Vec<(String, Vec<u8>)>) {
        for file in &self.files {
            let manifest = [".yaml", ".yml", ".json"]
                .iter()
                .any(|ext| file.name.ends_with(ext));
            if file.name.starts_with("crds/") && manifest {
                out.push((format!("{full_path}/{}", file.name), file.data.clone()));
            }
        }
        for dep in &self.dependencies {
            dep.collect_crds(&format!("{full_path}/charts/{}", dep.name()), out);
        }
    }
}

#[cfg(test)]
mod corpus_tests {
    //! Loads the real charts of `shared/helm-corpus` (skipped when absent) and, when `CHARTS_GOLD` names a JSON
    //! file of Helm's results (`{"dir__chart::case": {"input": …, "values": …} | {"error": …}}`), compares the
    //! top-level values with Helm's.

    use std::path::{Path, PathBuf};

    use super::*;

    fn corpus() -> Option<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/helm-corpus");
        if dir.is_dir() {
            Some(dir)
        } else {
            println!("skipped: {} is absent", dir.display());
            None
        }
    }

    /// Whether a load error comes from the YAML reader (a stub until `formats::yaml` is YAML-1.1-exact).
    fn yaml_reader_error(err: &ChartError) -> bool {
        let text = err.to_string();
        text.contains("cannot load values.yaml: error reading yaml document")
            || text.contains("cannot load Chart.yaml: ")
            || text.contains("cannot load requirements.yaml: ")
    }

    fn load_dir(dir: &Path) -> Result<Chart, ChartError> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tgz = crate::archive::pack_dir(dir, &format!("{name}/"))
            .map_err(|e| ChartError::Load(e.to_string()))?;
        load_files(crate::archive::read_tgz(&tgz)?)
    }

    /// Equality with numbers compared as float64 (Helm's values are float64: `60.0` and `60` are one value).
    fn json_eq(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value as J;
        match (a, b) {
            (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
            (J::Array(x), J::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q)),
            (J::Object(x), J::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
            }
            _ => a == b,
        }
    }

    /// The first places where two JSON values differ.
    fn json_diff(path: &str, got: &serde_json::Value, want: &serde_json::Value, out: &mut Vec<String>) {
        if out.len() >= 5 || json_eq(got, want) {
            return;
        }
        match (got, want) {
            (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                for key in a.keys().chain(b.keys()) {
                    let null = serde_json::Value::Null;
                    let (x, y) = (a.get(key), b.get(key));
                    if x.is_none() || y.is_none() {
                        if out.len() < 5 && x != y {
                            out.push(format!(
                                "{path}/{key}: got {:?}, want {:?}",
                                x.map(ToString::to_string),
                                y.map(ToString::to_string)
                            ));
                        }
                        continue;
                    }
                    json_diff(
                        &format!("{path}/{key}"),
                        x.unwrap_or(&null),
                        y.unwrap_or(&null),
                        out,
                    );
                }
            }
            _ => out.push(format!("{path}: got {got}, want {want}")),
        }
    }

    fn chart_dirs(root: &Path) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for group in std::fs::read_dir(root).into_iter().flatten().flatten() {
            for chart in std::fs::read_dir(group.path()).into_iter().flatten().flatten() {
                if chart.path().join("Chart.yaml").is_file() {
                    dirs.push(chart.path());
                }
            }
        }
        dirs.sort();
        dirs
    }

    #[test]
    fn corpus_charts_load_and_prepare() {
        let Some(root) = corpus() else { return };
        let (mut subcharts, mut loaded) = (0, 0);
        for dir in chart_dirs(&root) {
            let chart = match load_dir(&dir) {
                Ok(chart) => chart,
                Err(err) if yaml_reader_error(&err) => {
                    println!(
                        "skipped {} (YAML reader): {}",
                        dir.display(),
                        err.to_string().lines().next().unwrap_or("")
                    );
                    continue;
                }
                Err(err) => panic!("{}: {err}", dir.display()),
            };
            loaded += 1;
            subcharts += chart.dependencies.len();
            let (prepared, values) = prepare(&chart, &serde_json::json!({}))
                .unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
            assert!(values.is_object(), "{}", dir.display());
            let jobs = template_jobs(
                &prepared,
                &values,
                &ReleaseInfo {
                    name: "r1".into(),
                    namespace: "default".into(),
                    revision: 1,
                    is_install: true,
                    is_upgrade: false,
                },
                &Capabilities::default(),
            );
            assert!(
                jobs.iter().any(|job| job.renders) || prepared.templates.is_empty(),
                "{}",
                dir.display()
            );
        }
        println!("{loaded} corpus charts loaded and prepared");
        assert!(subcharts > 0, "the corpus has charts with subcharts");
    }

    #[test]
    fn corpus_values_match_helm() {
        let Some(root) = corpus() else { return };
        let Some(gold) = std::env::var_os("CHARTS_GOLD") else {
            println!("skipped: CHARTS_GOLD is not set");
            return;
        };
        let gold: serde_json::Value =
            serde_json::from_slice(&std::fs::read(gold).expect("read CHARTS_GOLD")).expect("gold JSON");
        let (mut same, mut different) = (0, Vec::new());
        for (key, expected) in gold.as_object().expect("gold object") {
            let (chart_key, _case) = key.split_once("::").expect("key");
            let dir = root.join(chart_key.replace("__", "/"));
            let chart = match load_dir(&dir) {
                Ok(chart) => chart,
                Err(err) if yaml_reader_error(&err) => {
                    println!("skipped {key} (YAML reader)");
                    continue;
                }
                Err(err) => panic!("{key}: {err}"),
            };
            let input = expected.get("input").cloned().unwrap_or(serde_json::Value::Null);
            let input = if input.is_null() {
                serde_json::json!({})
            } else {
                input
            };
            match (prepare(&chart, &input), expected.get("values")) {
                (Ok((_, values)), Some(want)) if json_eq(&values, want) => same += 1,
                // Helm failed in a template, after the values were prepared: nothing to compare.
                (Ok(_), None)
                    if expected["error"]
                        .as_str()
                        .is_some_and(|e| e.contains("/templates/")) =>
                {
                    same += 1
                }
                (Err(_), None) => same += 1,
                (got, want) => {
                    let mut diff = Vec::new();
                    match (&got, want) {
                        (Ok((_, values)), Some(want)) => json_diff("", values, want, &mut diff),
                        (Ok(_), None) => diff.push(format!("Helm failed: {}", expected["error"])),
                        (Err(err), _) => diff.push(format!("error: {err}")),
                    }
                    different.push(format!("{key}: {}", diff.join("; ")));
                }
            }
        }
        println!("{same} cases match Helm");
        assert!(
            different.is_empty(),
            "{} differ:\n{}",
            different.len(),
            different.join("\n")
        );
    }
}

#[cfg(test)]
mod probe_tests {
    //! Probe chart p1 end to end (subchart folders, a condition, tags, two aliases of one chart, import-values in
    //! both forms, nested globals, .helmignore); the expected JSON is what Helm v4.2.3 printed for
    //! `{{ toJson .Values }}` and `{{ toJson .Chart }}` with user values `{"sub1":{"removed":null},"global":{"u":1}}`.

    use super::*;
    use crate::archive::ArchiveFile;

    const FILES: &[(&str, &str)] = &[
        (
            "p1/.helmignore",
            r#"ignored/
*.bak
"#,
        ),
        (
            "p1/Chart.yaml",
            r#"apiVersion: v2
name: p1
version: 0.1.0
appVersion: "1.0"
annotations:
  a: b
maintainers:
  - name: me
    email: me@x
dependencies:
  - name: sub1
    version: "*"
    condition: sub1.enabled,global.sub1on
    tags: [front]
    import-values:
      - data
      - child: deeper.x
        parent: imported
  - name: sub2
    alias: second
    version: 0.1.0
    condition: second.enabled
  - name: sub2
    alias: third
    tags: [back]
"#,
        ),
        (
            "p1/README.md",
            r#"r
"#,
        ),
        (
            "p1/values.yaml",
            r#"top: 1
nulled: x
global:
  g1: parentg
  nest:
    a:
      b: 1
tags:
  back: false
sub1:
  fromParent: true
  child: override
second:
  enabled: true
list: [1, 2]
"#,
        ),
        (
            "p1/x.bak", r#"y
"#,
        ),
        (
            "p1/charts/sub1.prov",
            r#"lock
"#,
        ),
        (
            "p1/charts/sub1/Chart.yaml",
            r#"apiVersion: v2
name: sub1
version: 1.2.3
dependencies:
  - name: deep
    version: 0.0.1
"#,
        ),
        (
            "p1/charts/sub1/values.yaml",
            r#"enabled: true
child: default
removed: here
global:
  g1: childg
  g2: childonly
  nest:
    a:
      b: 2
      c: 3
exports:
  data:
    exportedKey: ev
deeper:
  x:
    xv: 1
"#,
        ),
        (
            "p1/charts/sub1/charts/deep/Chart.yaml",
            r#"apiVersion: v2
name: deep
version: 0.0.1
"#,
        ),
        (
            "p1/charts/sub1/charts/deep/values.yaml",
            r#"d: 1
"#,
        ),
        ("p1/charts/sub1/charts/deep/templates/d.yaml", r#"x"#),
        ("p1/charts/sub1/templates/s.yaml", r#"x"#),
        (
            "p1/charts/sub2/Chart.yaml",
            r#"apiVersion: v2
name: sub2
version: 0.1.0
"#,
        ),
        (
            "p1/charts/sub2/values.yaml",
            r#"enabled: false
s2: v
"#,
        ),
        ("p1/charts/sub2/templates/x.yaml", r#"x"#),
        (
            "p1/crds/crd.yaml",
            r#"kind: CustomResourceDefinition
"#,
        ),
        (
            "p1/files/a.txt",
            r#"line1
line2
"#,
        ),
        ("p1/files/b.yaml", r#"bee"#),
        ("p1/files/sub/c.txt", r#"deep"#),
        (
            "p1/ignored/x",
            r#"x
"#,
        ),
        (
            "p1/templates/_helpers.tpl",
            r#"{{ define "p1.x" }}parent{{ end }}
"#,
        ),
        ("p1/templates/a.yaml", r#"x"#),
        ("p1/templates/files.yaml", r#"x"#),
    ];

    #[test]
    fn probe_p1_matches_helm() {
        let files = FILES
            .iter()
            .map(|(path, text)| ArchiveFile {
                path: (*path).into(),
                bytes: text.as_bytes().to_vec(),
            })
            .collect();
        let chart = load_files(files).expect("load p1");
        let user = serde_json::json!({"sub1": {"removed": null}, "global": {"u": 1}});
        let (prepared, values) = prepare(&chart, &user).expect("prepare p1");
        let want: serde_json::Value = serde_json::from_str(r#"{"exportedKey":"ev","global":{"g1":"parentg","nest":{"a":{"b":1,"c":3}},"u":1},"imported":{"xv":1},"list":[1,2],"nulled":"x","second":{"enabled":true,"global":{"g1":"parentg","nest":{"a":{"b":1,"c":3}},"u":1},"s2":"v"},"sub1":{"child":"override","deep":{"d":1,"global":{"g1":"parentg","g2":"childonly","nest":{"a":{"b":1,"c":3}},"u":1}},"deeper":{"x":{"xv":1}},"enabled":true,"exports":{"data":{"exportedKey":"ev"}},"fromParent":true,"global":{"g1":"parentg","g2":"childonly","nest":{"a":{"b":1,"c":3}},"u":1}},"tags":{"back":false},"top":1}"#).expect("json");
        assert_eq!(values, want);
        let want_chart: serde_json::Value = serde_json::from_str(r#"{"APIVersion":"v2","Annotations":{"a":"b"},"AppVersion":"1.0","Condition":"","Dependencies":[{"Alias":"","Condition":"sub1.enabled,global.sub1on","Enabled":true,"ImportValues":[{"child":"exports.data","parent":"."},{"child":"deeper.x","parent":"imported"}],"Name":"sub1","Repository":"","Tags":["front"],"Version":"*"},{"Alias":"second","Condition":"second.enabled","Enabled":true,"ImportValues":[],"Name":"second","Repository":"","Tags":[],"Version":"0.1.0"}],"Deprecated":false,"Description":"","Home":"","Icon":"","IsRoot":true,"Keywords":[],"KubeVersion":"","Maintainers":[{"Email":"me@x","Name":"me","URL":""}],"Name":"p1","Sources":[],"Tags":"","Type":"","Version":"0.1.0"}"#).expect("json");
        assert_eq!(
            prepared.metadata.to_template_map(true).to_json().expect("json"),
            want_chart
        );
        let jobs = template_jobs(
            &prepared,
            &values,
            &ReleaseInfo {
                name: "r1".into(),
                namespace: "default".into(),
                revision: 1,
                is_install: true,
                is_upgrade: false,
            },
            &Capabilities::default(),
        );
        let names: Vec<&str> = jobs.iter().map(|job| job.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "p1/charts/sub1/charts/deep/templates/d.yaml",
                "p1/charts/sub1/templates/s.yaml",
                "p1/charts/second/templates/x.yaml",
                "p1/templates/files.yaml",
                "p1/templates/a.yaml",
                "p1/templates/_helpers.tpl",
            ]
        );
        let sub_values = jobs[1]
            .enter()
            .as_map()
            .and_then(|dot| dot.get("Values"))
            .expect("values");
        let want_sub: serde_json::Value = serde_json::from_str(r#"{"child":"override","deep":{"d":1,"global":{"g1":"parentg","g2":"childonly","nest":{"a":{"b":1,"c":3}},"u":1}},"deeper":{"x":{"xv":1}},"enabled":true,"exports":{"data":{"exportedKey":"ev"}},"fromParent":true,"global":{"g1":"parentg","g2":"childonly","nest":{"a":{"b":1,"c":3}},"u":1}}"#).expect("json");
        assert_eq!(sub_values.to_json().expect("json"), want_sub);
        // .Files of the root: Helm listed .helmignore,README.md,charts/sub1.prov,crds/crd.yaml,files/a.txt,
        // files/b.yaml,files/sub/c.txt (x.bak and ignored/ are .helmignore'd).
        let names: Vec<&str> = chart.files.iter().map(|f| f.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [
                ".helmignore",
                "README.md",
                "charts/sub1.prov",
                "crds/crd.yaml",
                "files/a.txt",
                "files/b.yaml",
                "files/sub/c.txt"
            ]
        );
    }
}

#[cfg(test)]
mod probe_archive_tests {
    //! Probe chart p2 as an archive: apiVersion v1 with `requirements.yaml`, a multi-document `values.yaml`, a
    //! nested `.tgz` subchart; expected JSON printed by Helm v4.2.3.

    use super::*;
    use crate::archive::write_tgz;

    #[test]
    fn probe_p2_matches_helm() {
        let packed = write_tgz(&[
            (
                "packed/Chart.yaml",
                b"apiVersion: v2\nname: packed\nversion: 0.1.0\n",
            ),
            ("packed/values.yaml", b"pv: 1\n"),
            ("packed/templates/p.yaml", b"packed: {{ toJson .Values }}\n"),
        ]);
        let chart_yaml = "apiVersion: v1\nname: p2\nversion: 1.0.0-rc.1\ndescription: \"desc\\there\"\nkeywords: [a, b]\n\
                          home: https://h\nsources: [https://s]\nicon: https://i\ndeprecated: true\n\
                          kubeVersion: \">=1.20.0-0\"\ntype: application\n";
        let requirements = "dependencies:\n  - name: packed\n    version: 0.1.0\n    repository: file://x\n    enabled: false\n";
        let values = "a: 1\nb: {c: 2, d: 3}\ne: [1]\nf: str\ng: {h: 1}\n---\nsecond: doc\na: 5\n";
        let tgz = write_tgz(&[
            ("p2/Chart.yaml", chart_yaml.as_bytes()),
            ("p2/requirements.yaml", requirements.as_bytes()),
            ("p2/values.yaml", values.as_bytes()),
            ("p2/templates/a.yaml", b"a"),
            ("p2/charts/packed-0.1.0.tgz", &packed),
        ]);
        let chart = load_archive(&tgz).expect("load p2");
        let names: Vec<&str> = chart.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["requirements.yaml"]);
        let user = serde_json::json!({"b": {"c": null, "x": 1}, "e": {"m": 1}, "f": {"n": 1}, "g": "scalar",
                                      "packed": {"pv": null, "z": 2}});
        let (prepared, values, warnings) = prepare_with_warnings(&chart, &user).expect("prepare p2");
        assert_eq!(
            values,
            serde_json::json!({"a":5,"b":{"d":3,"x":1},"e":{"m":1},"f":{"n":1},"g":"scalar",
                               "packed":{"global":{},"z":2},"second":"doc"})
        );
        assert!(
            warnings
                .iter()
                .any(|w| w == "warning: skipped value for p2.e: Not a table."),
            "{warnings:?}"
        );
        let want_chart: serde_json::Value = serde_json::from_str(
            r#"{"APIVersion":"v1","Annotations":null,"AppVersion":"","Condition":"","Dependencies":[{"Alias":"","Condition":"","Enabled":true,"ImportValues":[],"Name":"packed","Repository":"file://x","Tags":[],"Version":"0.1.0"}],"Deprecated":true,"Description":"desc here","Home":"https://h","Icon":"https://i","IsRoot":true,"Keywords":["a","b"],"KubeVersion":"\u003e=1.20.0-0","Maintainers":[],"Name":"p2","Sources":["https://s"],"Tags":"","Type":"application","Version":"1.0.0-rc.1"}"#,
        )
        .expect("json");
        assert_eq!(
            prepared.metadata.to_template_map(true).to_json().expect("json"),
            want_chart
        );
        assert!(check_kube_version(&prepared, &Capabilities::default()).is_ok());
    }
}
