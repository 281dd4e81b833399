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
mod semver;
mod templates;
mod tree;

pub use capabilities::{Capabilities, DEFAULT_API_VERSIONS, KubeVersion};
pub use coalesce::{coalesce_values, prepare, prepare_with_warnings};
pub use dependencies::{check_dependencies, process_dependencies};
pub use files::Files;
pub use load::{MAX_CHART_DEPTH, MAX_FILE_BYTES, load_archive, load_files};
pub use metadata::{Dependency, Maintainer, Metadata};
pub use schema::validate_against_schema;
pub use templates::{ReleaseInfo, TemplateJob, check_installable, check_kube_version, template_jobs};

use serde_json::Value as Json;

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
    /// `values.yaml` (every document merged), an object.
    pub values: Json,
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
