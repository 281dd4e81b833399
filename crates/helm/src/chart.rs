//! Charts and app-profile archives: what is inside a Helm chart `.tgz` (Chart.yaml, values.yaml, templates) and
//! an EMCO app profile `.tgz` (manifest.yaml naming an override-values file).

use serde::Deserialize;
use serde_json::Value as Json;

use crate::archive::{ArchiveError, read_tgz};

/// Why a chart or profile archive was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChartError {
    /// The archive itself is unreadable.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// No `Chart.yaml` at the top of the chart.
    #[error("the chart has no Chart.yaml (expected <name>/Chart.yaml)")]
    MissingChartYaml,
    /// A YAML file of the chart or profile does not parse.
    #[error("{file}: {message}")]
    Yaml {
        /// The file.
        file: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A required field is missing.
    #[error("{file}: {field} is required")]
    MissingField {
        /// The file.
        file: String,
        /// The field.
        field: String,
    },
    /// A file is not UTF-8 text.
    #[error("{0}: not UTF-8 text")]
    NotText(String),
    /// The chart uses a Helm feature that is not supported.
    #[error("{0}")]
    Unsupported(String),
    /// The profile archive lacks its manifest or the values file it names.
    #[error("app profile: {0}")]
    Profile(String),
}

/// A parsed chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// `name` from Chart.yaml.
    pub name: String,
    /// `version` from Chart.yaml.
    pub version: String,
    /// `appVersion` from Chart.yaml.
    pub app_version: String,
    /// The chart's default values (an object; empty when values.yaml is absent).
    pub values: Json,
    /// Template files (`templates/...`), path relative to the chart root, in path order.
    pub templates: Vec<TemplateFile>,
    /// Files of the `crds/` folder with a manifest extension (`.yaml`, `.yml`, `.json`), path relative to the
    /// chart root, in path order. Helm never templates them; they hold CRDs (several documents per file allowed).
    pub crds: Vec<TemplateFile>,
}

/// One file under `templates/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateFile {
    /// Path relative to the chart root, e.g. `templates/deployment.yaml`.
    pub path: String,
    /// The template text.
    pub text: String,
}

impl TemplateFile {
    /// Helpers (`_*.tpl`, any file whose name starts with `_`) hold only definitions and render nothing.
    #[must_use]
    pub fn is_partial(&self) -> bool {
        self.path
            .rsplit('/')
            .next()
            .is_some_and(|name| name.starts_with('_'))
    }

    /// Whether rendering this file yields manifests (YAML or JSON, not NOTES.txt).
    #[must_use]
    pub fn yields_manifests(&self) -> bool {
        !self.is_partial() && self.has_manifest_extension()
    }

    /// Whether the file is YAML or JSON by its name.
    #[must_use]
    pub fn has_manifest_extension(&self) -> bool {
        self.path.ends_with(".yaml") || self.path.ends_with(".yml") || self.path.ends_with(".json")
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChartYaml {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: Json,
    #[serde(default)]
    app_version: Json,
}

fn scalar_text(value: &Json) -> String {
    match value {
        Json::String(text) => text.clone(),
        Json::Null => String::new(),
        other => other.to_string(),
    }
}

fn text(path: &str, bytes: &[u8]) -> Result<String, ChartError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ChartError::NotText(path.to_string()))
}

/// Parses YAML text into JSON; an empty document is an empty object.
pub(crate) fn parse_yaml_object(file: &str, source: &str) -> Result<Json, ChartError> {
    if source.trim().is_empty() {
        return Ok(Json::Object(Default::default()));
    }
    let value: Json = serde_saphyr::from_str(source).map_err(|err| ChartError::Yaml {
        file: file.to_string(),
        message: err.to_string(),
    })?;
    match value {
        Json::Null => Ok(Json::Object(Default::default())),
        Json::Object(_) => Ok(value),
        _ => Err(ChartError::Yaml {
            file: file.to_string(),
            message: "the top level must be a mapping".into(),
        }),
    }
}

/// Reads a Helm chart archive.
pub fn read_chart(tgz: &[u8]) -> Result<Chart, ChartError> {
    let files = read_tgz(tgz)?;
    let chart_yaml = files
        .iter()
        .filter(|file| file.path == "Chart.yaml" || file.path.matches('/').count() == 1)
        .find(|file| file.path.ends_with("Chart.yaml"))
        .ok_or(ChartError::MissingChartYaml)?;
    let root = chart_yaml.path.trim_end_matches("Chart.yaml").to_string();
    let meta: ChartYaml =
        serde_saphyr::from_str(&text(&chart_yaml.path, &chart_yaml.bytes)?).map_err(|err| {
            ChartError::Yaml {
                file: chart_yaml.path.clone(),
                message: err.to_string(),
            }
        })?;
    if meta.name.is_empty() {
        return Err(ChartError::MissingField {
            file: chart_yaml.path.clone(),
            field: "name".into(),
        });
    }
    let mut values = Json::Object(Default::default());
    let mut templates = Vec::new();
    let mut crds = Vec::new();
    for file in &files {
        let Some(relative) = file.path.strip_prefix(&root) else {
            continue;
        };
        if relative == "values.yaml" {
            values = parse_yaml_object(&file.path, &text(&file.path, &file.bytes)?)?;
        } else if relative.starts_with("charts/") {
            return Err(ChartError::Unsupported(format!(
                "{}: subcharts are not supported; package each app as its own chart",
                file.path
            )));
        } else if relative.starts_with("templates/") {
            templates.push(TemplateFile {
                path: relative.to_string(),
                text: text(&file.path, &file.bytes)?,
            });
        } else if relative.starts_with("crds/") {
            let crd = TemplateFile {
                path: relative.to_string(),
                text: text(&file.path, &file.bytes)?,
            };
            if crd.has_manifest_extension() {
                crds.push(crd);
            }
        }
    }
    templates.sort_by(|a, b| a.path.cmp(&b.path));
    crds.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Chart {
        name: meta.name,
        version: scalar_text(&meta.version),
        app_version: scalar_text(&meta.app_version),
        values,
        templates,
        crds,
    })
}

/// The override values an app profile carries.
#[derive(Debug, Clone, PartialEq)]
pub struct AppProfileValues {
    /// The values file's name inside the archive.
    pub file: String,
    /// Its content (an object).
    pub values: Json,
}

#[derive(Deserialize)]
struct ProfileManifest {
    #[serde(default, rename = "type")]
    kind: ProfileManifestType,
}

#[derive(Deserialize, Default)]
struct ProfileManifestType {
    #[serde(default)]
    values: String,
}

/// Reads an app profile archive: `manifest.yaml` (`{version: v1, type: {values: <file>}}`) and that values file.
pub fn read_app_profile(tgz: &[u8]) -> Result<AppProfileValues, ChartError> {
    let files = read_tgz(tgz)?;
    let base = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
    let manifest = files
        .iter()
        .find(|file| base(&file.path) == "manifest.yaml")
        .ok_or_else(|| ChartError::Profile("manifest.yaml is missing".into()))?;
    let parsed: ProfileManifest =
        serde_saphyr::from_str(&text(&manifest.path, &manifest.bytes)?).map_err(|err| ChartError::Yaml {
            file: manifest.path.clone(),
            message: err.to_string(),
        })?;
    let wanted = parsed.kind.values;
    if wanted.is_empty() {
        return Err(ChartError::MissingField {
            file: manifest.path.clone(),
            field: "type.values".into(),
        });
    }
    let values_file = files
        .iter()
        .find(|file| file.path == wanted || base(&file.path) == wanted)
        .ok_or_else(|| {
            ChartError::Profile(format!(
                "manifest.yaml names values file '{wanted}', which is missing"
            ))
        })?;
    let values = parse_yaml_object(&values_file.path, &text(&values_file.path, &values_file.bytes)?)?;
    Ok(AppProfileValues {
        file: values_file.path.clone(),
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::write_tgz;

    #[test]
    fn reads_a_chart_with_values_and_templates() {
        let tgz = write_tgz(&[
            (
                "fw/Chart.yaml",
                b"apiVersion: v2\nname: firewall\nversion: 0.1.0\nappVersion: 1.16\n",
            ),
            ("fw/values.yaml", b"replicaCount: 1\n"),
            ("fw/templates/deployment.yaml", b"kind: Deployment"),
            ("fw/templates/_helpers.tpl", b"{{define \"x\"}}{{end}}"),
            ("fw/README.md", b"ignored"),
            ("fw/crds/widgets.yaml", b"kind: CustomResourceDefinition"),
            ("fw/crds/README.md", b"not a manifest"),
        ]);
        let chart = read_chart(&tgz).unwrap();
        assert_eq!(
            (
                chart.name.as_str(),
                chart.version.as_str(),
                chart.app_version.as_str()
            ),
            ("firewall", "0.1.0", "1.16")
        );
        assert_eq!(chart.values["replicaCount"], 1);
        let paths: Vec<_> = chart.templates.iter().map(|t| t.path.as_str()).collect();
        assert_eq!(paths, ["templates/_helpers.tpl", "templates/deployment.yaml"]);
        assert!(chart.templates[0].is_partial() && !chart.templates[0].yields_manifests());
        let crds: Vec<_> = chart.crds.iter().map(|t| t.path.as_str()).collect();
        assert_eq!(crds, ["crds/widgets.yaml"]);
    }

    #[test]
    fn explains_what_is_wrong_with_a_chart() {
        let no_chart = write_tgz(&[("x/values.yaml", b"a: 1")]);
        assert_eq!(read_chart(&no_chart), Err(ChartError::MissingChartYaml));
        let bad_values = write_tgz(&[("x/Chart.yaml", b"name: x"), ("x/values.yaml", b"a: [1, 2")]);
        let err = read_chart(&bad_values).unwrap_err().to_string();
        assert!(err.starts_with("x/values.yaml:"), "{err}");
        let nameless = write_tgz(&[("x/Chart.yaml", b"version: 1")]);
        assert!(
            read_chart(&nameless)
                .unwrap_err()
                .to_string()
                .contains("name is required")
        );
    }

    #[test]
    fn reads_app_profile_values() {
        let tgz = write_tgz(&[
            (
                "manifest.yaml",
                b"version: v1\ntype:\n  values: override_values.yaml\n",
            ),
            ("override_values.yaml", b"replicaCount: 2\n"),
        ]);
        let profile = read_app_profile(&tgz).unwrap();
        assert_eq!(profile.values["replicaCount"], 2);
        let missing = write_tgz(&[("manifest.yaml", b"version: v1\ntype:\n  values: other.yaml\n")]);
        assert!(
            read_app_profile(&missing)
                .unwrap_err()
                .to_string()
                .contains("other.yaml")
        );
    }
}
