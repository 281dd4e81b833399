//! Loading a chart as Helm's `pkg/chart/v2/loader` does: from a `.tgz` ([`load_archive`], `LoadArchive`: the top
//! folder stripped, no `.helmignore`) or from a directory's files ([`load_files`], `LoadDir`: the top folder
//! stripped and `.helmignore` applied), then `LoadFiles`: `Chart.yaml`, `requirements.yaml`, `values.yaml` (every
//! document merged), `values.schema.json`, `templates/`, subcharts under `charts/` (folders and `.tgz` archives,
//! recursively) and every other file into `.Files`.
//!
//! Nesting is bounded ([`MAX_CHART_DEPTH`]) and so are the files and bytes of all nested archives together
//! ([`crate::archive::MAX_FILES`], [`crate::archive::MAX_UNPACKED_BYTES`]), each file by [`MAX_FILE_BYTES`].

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::helmignore::Rules;
use super::metadata::Metadata;
use super::{Chart, ChartError, File};
use crate::archive::{ArchiveFile, MAX_FILES, MAX_UNPACKED_BYTES, read_tgz};
use crate::formats::yaml;

/// How deep subcharts may nest (`charts/a/charts/b/…`).
pub const MAX_CHART_DEPTH: usize = 32;

/// The largest single file of a chart (Helm's `MaxDecompressedFileSize`, 5 MiB).
pub const MAX_FILE_BYTES: usize = 5 * 1024 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// What nested archives may still unpack.
struct Budget {
    files: usize,
    bytes: u64,
}

impl Budget {
    fn spend(&mut self, files: &[ArchiveFile]) -> Result<(), ChartError> {
        let bytes: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
        if files.len() > self.files || bytes > self.bytes {
            return Err(ChartError::Archive(crate::archive::ArchiveError::TooLarge(
                format!(
                    "the chart and its nested archives hold more than {MAX_FILES} files or {MAX_UNPACKED_BYTES} bytes"
                ),
            )));
        }
        self.files -= files.len();
        self.bytes -= bytes;
        Ok(())
    }
}

/// Loads a chart from `.tgz` bytes (Helm's `loader.LoadArchive`).
pub fn load_archive(tgz: &[u8]) -> Result<Chart, ChartError> {
    let mut budget = Budget {
        files: MAX_FILES,
        bytes: MAX_UNPACKED_BYTES,
    };
    load_archive_within(tgz, &mut budget, 0)
}

fn load_archive_within(tgz: &[u8], budget: &mut Budget, depth: usize) -> Result<Chart, ChartError> {
    let files = read_tgz(tgz)?;
    budget.spend(&files)?;
    let files = strip_top_folder(files)?;
    load_chart_files(files, budget, depth)
}

/// Loads a chart from the files of a directory, each path starting with the chart's folder (as
/// [`crate::archive::pack_dir`] lays them out with a `"name/"` prefix): Helm's `loader.LoadDir`, so the chart's
/// `.helmignore` applies.
pub fn load_files(files: Vec<ArchiveFile>) -> Result<Chart, ChartError> {
    let mut budget = Budget {
        files: MAX_FILES,
        bytes: MAX_UNPACKED_BYTES,
    };
    budget.spend(&files)?;
    let files = strip_top_folder(files)?;
    let rules = match files.iter().find(|f| f.name == ".helmignore") {
        Some(file) => Rules::parse(&super::file_text(&file.data))?,
        None => Rules::parse("")?,
    };
    let files = files
        .into_iter()
        .filter(|f| !rules.ignore_file(&f.name))
        .collect();
    load_chart_files(files, &mut budget, 0)
}

/// Helm's `LoadArchiveFiles` naming: the first path segment dropped, the rest cleaned; a BOM dropped.
fn strip_top_folder(files: Vec<ArchiveFile>) -> Result<Vec<File>, ChartError> {
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let delimiter = if file.path.contains('\\') { '\\' } else { '/' };
        let parts: Vec<&str> = file.path.split(delimiter).collect();
        if parts[0] == "Chart.yaml" {
            return Err(ChartError::Load("chart yaml not in base directory".into()));
        }
        let joined = parts[1..].join("/");
        if joined.starts_with('/') {
            return Err(ChartError::Load("chart illegally contains absolute paths".into()));
        }
        let name = crate::sprig::paths::clean(&joined);
        if name == "." {
            return Err(ChartError::Load(format!(
                "chart illegally contains content outside the base directory: {:?}",
                file.path
            )));
        }
        if name.starts_with("..") {
            return Err(ChartError::Load(
                "chart illegally references parent directory".into(),
            ));
        }
        let bytes = name.as_bytes();
        if bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/' {
            return Err(ChartError::Load("chart contains illegally named files".into()));
        }
        if file.bytes.len() > MAX_FILE_BYTES {
            return Err(ChartError::Load(format!(
                "decompressed chart file {:?} is larger than the maximum file size {MAX_FILE_BYTES}",
                file.path
            )));
        }
        let data = match file.bytes.strip_prefix(UTF8_BOM) {
            Some(rest) => rest.to_vec(),
            None => file.bytes,
        };
        out.push(File { name, data });
    }
    if out.is_empty() {
        return Err(ChartError::Load("no files in chart archive".into()));
    }
    Ok(out)
}

/// Helm's `LoadValues`: every YAML document of `values.yaml` merged into one map.
pub(crate) fn load_values(data: &[u8]) -> Result<Json, String> {
    let text = super::file_text(data);
    let documents =
        yaml::parse_documents(&text).map_err(|err| format!("error reading yaml document: {err}"))?;
    let mut values = serde_json::Map::new();
    for document in documents {
        match document {
            Json::Null => {}
            Json::Object(map) => merge_maps(&mut values, map),
            other => {
                let kind = match other {
                    Json::Bool(_) => "bool",
                    Json::Number(_) => "number",
                    Json::String(_) => "string",
                    _ => "array",
                };
                return Err(format!(
                    "cannot unmarshal yaml document: error unmarshaling JSON: while decoding JSON: json: cannot \
                     unmarshal {kind} into Go value of type map[string]interface {{}}"
                ));
            }
        }
    }
    Ok(Json::Object(values))
}

/// Helm's loader `MergeMaps`: later documents win, maps merged recursively.
fn merge_maps(into: &mut serde_json::Map<String, Json>, from: serde_json::Map<String, Json>) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Json::Object(existing)), Json::Object(incoming)) => merge_maps(existing, incoming),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

fn parse_yaml(data: &[u8]) -> Result<Json, String> {
    yaml::parse(&super::file_text(data)).map_err(|err| err.to_string())
}

/// Helm's `LoadFiles`.
fn load_chart_files(files: Vec<File>, budget: &mut Budget, depth: usize) -> Result<Chart, ChartError> {
    if depth > MAX_CHART_DEPTH {
        return Err(ChartError::Load(format!(
            "subcharts nest deeper than {MAX_CHART_DEPTH} levels"
        )));
    }
    let mut metadata: Option<Metadata> = None;
    for file in files.iter().filter(|f| f.name == "Chart.yaml") {
        let md = metadata.get_or_insert_with(Metadata::default);
        let json = parse_yaml(&file.data)
            .map_err(|err| ChartError::Load(format!("cannot load Chart.yaml: {err}")))?;
        md.merge_yaml(&json)
            .map_err(|err| ChartError::Load(format!("cannot load Chart.yaml: {err}")))?;
        if md.api_version.is_empty() {
            md.api_version = "v1".into();
        }
    }
    let mut chart_values = Json::Object(serde_json::Map::new());
    let mut schema = None;
    let mut templates = Vec::new();
    let mut chart_files = Vec::new();
    let mut subcharts: BTreeMap<String, Vec<File>> = BTreeMap::new();
    for file in files {
        match file.name.as_str() {
            "Chart.yaml" => {}
            "Chart.lock" => {
                parse_yaml(&file.data)
                    .map_err(|err| ChartError::Load(format!("cannot load Chart.lock: {err}")))?;
            }
            "values.yaml" => {
                chart_values = load_values(&file.data)
                    .map_err(|err| ChartError::Load(format!("cannot load values.yaml: {err}")))?;
            }
            "values.schema.json" => schema = Some(file.data),
            "requirements.yaml" | "requirements.lock" => {
                let md = metadata.get_or_insert_with(Metadata::default);
                let json = parse_yaml(&file.data)
                    .map_err(|err| ChartError::Load(format!("cannot load {}: {err}", file.name)))?;
                if file.name == "requirements.yaml" {
                    md.merge_yaml(&json)
                        .map_err(|err| ChartError::Load(format!("cannot load requirements.yaml: {err}")))?;
                }
                if md.api_version == "v1" {
                    chart_files.push(file);
                }
            }
            name if name.starts_with("templates/") => templates.push(file),
            name if name.starts_with("charts/") => {
                if name.ends_with(".prov") {
                    chart_files.push(file);
                    continue;
                }
                let rest = &name["charts/".len()..];
                let sub = rest.split('/').next().unwrap_or("").to_string();
                subcharts.entry(sub).or_default().push(File {
                    name: rest.to_string(),
                    data: file.data,
                });
            }
            _ => chart_files.push(file),
        }
    }
    let Some(mut metadata) = metadata else {
        return Err(ChartError::Load("Chart.yaml file is missing".into()));
    };
    metadata.validate()?;
    let chart_name = metadata.name.clone();
    let mut dependencies = Vec::new();
    for (sub, files) in subcharts {
        if sub.starts_with('_') || sub.starts_with('.') {
            continue;
        }
        let wrap = |err: ChartError| match err {
            ChartError::Load(msg) => {
                ChartError::Load(format!("error unpacking subchart {sub} in {chart_name}: {msg}"))
            }
            other => other,
        };
        let loaded = if sub.ends_with(".tgz") && sub.len() > ".tgz".len() {
            let file = &files[0];
            if file.name != sub {
                return Err(ChartError::Load(format!(
                    "error unpacking subchart tar in {chart_name}: expected {sub}, got {}",
                    file.name
                )));
            }
            load_archive_within(&file.data, budget, depth + 1).map_err(wrap)?
        } else {
            let inner: Vec<File> = files
                .into_iter()
                .filter_map(|file| {
                    let (_, rest) = file.name.split_once('/')?;
                    Some(File {
                        name: rest.to_string(),
                        data: file.data,
                    })
                })
                .collect();
            load_chart_files(inner, budget, depth + 1).map_err(wrap)?
        };
        dependencies.push(loaded);
    }
    Ok(Chart {
        metadata,
        values: std::sync::Arc::new(chart_values),
        schema,
        templates,
        files: chart_files,
        dependencies,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::write_tgz;

    fn file(path: &str, text: &str) -> ArchiveFile {
        ArchiveFile {
            path: path.into(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn cleans_paths_like_go() {
        assert_eq!(crate::sprig::paths::clean("a/./b//c"), "a/b/c");
        assert_eq!(crate::sprig::paths::clean("a/../.."), "..");
        assert_eq!(crate::sprig::paths::clean(""), ".");
    }

    #[test]
    fn loads_a_chart_with_subcharts_files_and_helmignore() {
        let sub_tgz = write_tgz(&[(
            "packed/Chart.yaml",
            b"apiVersion: v2\nname: packed\nversion: 0.1.0\n",
        )]);
        let mut files = vec![
            file("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n"),
            file("c/values.yaml", "a: 1\nb: {c: 2}\n---\na: 5\nb: {d: 3}\n"),
            file("c/.helmignore", "*.bak\nignored/\n"),
            file("c/x.bak", "no"),
            file("c/ignored/y", "no"),
            file("c/README.md", "readme"),
            file("c/crds/crd.yaml", "kind: CustomResourceDefinition"),
            file("c/templates/a.yaml", "a"),
            file("c/templates/.hidden", "h"),
            file(
                "c/charts/sub/Chart.yaml",
                "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
            ),
            file("c/charts/sub/templates/s.yaml", "s"),
            file("c/charts/_skip/Chart.yaml", "broken"),
            file("c/charts/sub.prov", "prov"),
        ];
        files.push(ArchiveFile {
            path: "c/charts/packed-0.1.0.tgz".into(),
            bytes: sub_tgz,
        });
        let chart = load_files(files).unwrap();
        assert_eq!(chart.name(), "c");
        assert_eq!(*chart.values, serde_json::json!({"a": 5, "b": {"c": 2, "d": 3}}));
        let names: Vec<&str> = chart.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [".helmignore", "README.md", "crds/crd.yaml", "charts/sub.prov"]
        );
        let templates: Vec<&str> = chart.templates.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(templates, ["templates/a.yaml"]);
        let subs: Vec<&str> = chart.dependencies.iter().map(Chart::name).collect();
        assert_eq!(subs, ["packed", "sub"]);
        assert_eq!(chart.dependencies[1].templates[0].name, "templates/s.yaml");
        assert_eq!(chart.crd_objects()[0].0, "c/crds/crd.yaml");
    }

    #[test]
    fn helmignore_quirks_match_helm() {
        // Probe p5 of Helm v4.2.3: a listed .helmignore is not in .Files; `docs/`, `/other.txt`, `keep/*.txt`.
        let files = |ignore: &str| {
            vec![
                file("p5/Chart.yaml", "apiVersion: v2\nname: p5\nversion: 0.1.0\n"),
                file("p5/.helmignore", ignore),
                file("p5/keep.txt", "k"),
                file("p5/other.txt", "o"),
                file("p5/docs/d.txt", "d"),
                file("p5/keep/keep.txt", "k2"),
                file("p5/templates/a.yaml", "a"),
            ]
        };
        let chart = load_files(files(".helmignore\ndocs/\n/other.txt\nkeep/*.txt\n")).unwrap();
        let names: Vec<&str> = chart.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["keep.txt"]);
        // A negated rule ignores every path it does not match, Chart.yaml included (Helm says so too).
        let err = load_files(files(".helmignore\n!keep.txt\n")).unwrap_err();
        assert_eq!(err.to_string(), "Chart.yaml file is missing");
    }

    #[test]
    fn errors_are_helms() {
        let missing = load_files(vec![file("c/values.yaml", "a: 1")]).unwrap_err();
        assert_eq!(missing.to_string(), "Chart.yaml file is missing");
        let nameless = load_files(vec![file("c/Chart.yaml", "apiVersion: v2\nversion: 1.0.0")]).unwrap_err();
        assert_eq!(
            nameless.to_string(),
            "validation: chart.metadata.name is required"
        );
        let sub = load_files(vec![
            file("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0"),
            file("c/charts/s/values.yaml", "a: 1"),
        ])
        .unwrap_err();
        assert_eq!(
            sub.to_string(),
            "error unpacking subchart s in c: Chart.yaml file is missing"
        );
        let top = load_archive(&write_tgz(&[("Chart.yaml", b"name: x")])).unwrap_err();
        assert_eq!(top.to_string(), "chart yaml not in base directory");
        let values = load_files(vec![
            file("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0"),
            file("c/values.yaml", "- a"),
        ])
        .unwrap_err();
        assert!(
            values.to_string().starts_with("cannot load values.yaml: "),
            "{values}"
        );
    }

    #[test]
    fn nested_archives_are_bounded() {
        let mut tgz = write_tgz(&[("leaf/Chart.yaml", b"apiVersion: v2\nname: leaf\nversion: 0.1.0\n")]);
        for level in 0..(MAX_CHART_DEPTH + 2) {
            let chart_yaml = format!("apiVersion: v2\nname: n{level}\nversion: 0.1.0\n");
            tgz = write_tgz(&[
                (&format!("n{level}/Chart.yaml"), chart_yaml.as_bytes()),
                (&format!("n{level}/charts/c.tgz"), &tgz),
            ]);
        }
        let err = load_archive(&tgz).unwrap_err();
        assert!(err.to_string().contains("nest deeper"), "{err}");
    }
}
