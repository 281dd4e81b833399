//! `emcoctl template`: renders a chart offline exactly as emco would apply it — the same renderer, the same values
//! layering (`-f` files in order, then `--set`), the objects in apply order (CRDs of `crds/` folders first, then
//! Helm's install order), Helm test hooks left out as emco leaves them out — as `helm template` prints them (each
//! document as rendered, under `---` and `# Source: <file>`, hooks after the other objects) or a JSON list of
//! objects. A chart Helm rejects fails with Helm's message. `--skip-crds --include-tests` prints what `helm
//! template` prints.

use std::io::Write;
use std::path::{Path, PathBuf};

use emco_helm::charts::{Capabilities, KubeVersion};
use emco_helm::render::{Manifest, Release, RenderLimits, render_chart_within};
use emco_helm::{Chart, ChartError};
use serde_json::Value as Json;

/// Why `emcoctl template` could not print objects.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The chart, a values file or a `--set` cannot be read (exit 2).
    #[error("{0}")]
    Input(String),
    /// The chart does not render (exit 1): Helm's message.
    #[error("{0}")]
    Render(String),
    /// The output cannot be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// What to render and how to print it.
#[derive(Debug, Clone)]
pub struct TemplateRequest {
    /// A chart directory or `.tgz`.
    pub chart: PathBuf,
    /// Values files, later ones over earlier ones.
    pub values: Vec<PathBuf>,
    /// `key=value` overrides (Helm's `--set`), applied after the files.
    pub set: Vec<String>,
    /// `.Release.Name`.
    pub name: String,
    /// `.Release.Namespace`.
    pub namespace: String,
    /// `yaml` or `json`.
    pub output: String,
    /// Leave out the objects of `crds/` folders (`helm template` leaves them out unless `--include-crds`).
    pub skip_crds: bool,
    /// Print Helm test hooks too (emco never applies them; `helm template` prints them).
    pub include_tests: bool,
    /// `.Capabilities.KubeVersion` instead of Helm's default (`helm template --kube-version`).
    pub kube_version: Option<String>,
    /// API versions added to `.Capabilities.APIVersions` (`helm template --api-versions`).
    pub api_versions: Vec<String>,
}

fn load_chart(path: &Path) -> Result<Chart, TemplateError> {
    let input = |message: String| TemplateError::Input(format!("{}: {message}", path.display()));
    let loaded: Result<Chart, ChartError> = if path.is_dir() {
        let folder = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("chart")
            .to_string();
        let tgz = emco_helm::archive::pack_dir(path, &format!("{folder}/"))
            .map_err(|err| input(err.to_string()))?;
        // A directory is loaded as Helm loads one (its `.helmignore` applies).
        emco_helm::archive::read_tgz(&tgz)
            .map_err(ChartError::from)
            .and_then(emco_helm::charts::load_files)
    } else {
        let bytes = std::fs::read(path).map_err(|err| input(err.to_string()))?;
        emco_helm::load_archive(&bytes)
    };
    loaded.map_err(|err| input(err.to_string()))
}

fn user_values(request: &TemplateRequest) -> Result<Json, TemplateError> {
    let mut values = Json::Object(Default::default());
    for file in &request.values {
        let input = |message: String| TemplateError::Input(format!("{}: {message}", file.display()));
        let text = std::fs::read_to_string(file).map_err(|err| input(err.to_string()))?;
        let layer = match emco_helm::formats::yaml::parse(&text).map_err(|err| input(err.to_string()))? {
            Json::Null => Json::Object(Default::default()),
            layer @ Json::Object(_) => layer,
            _ => return Err(input("the top level must be a mapping".into())),
        };
        emco_helm::merge_values(&mut values, &layer);
    }
    for entry in &request.set {
        let Some((key, value)) = entry.split_once('=') else {
            return Err(TemplateError::Input(format!("--set {entry}: expected key=value")));
        };
        emco_helm::apply_set(&mut values, key, value)
            .map_err(|err| TemplateError::Input(format!("--set {entry}: {err}")))?;
    }
    Ok(values)
}

/// Whether emco applies the object: everything but Helm test hooks and objects naming a hook event Helm does not
/// know (Helm skips those too).
fn applied(manifest: &Manifest) -> bool {
    match emco_helm::hooks::hook_of(&manifest.object) {
        Ok(Some(hook)) => !hook.is_test(),
        Ok(None) => true,
        Err(emco_helm::hooks::HookError::UnknownEvent { .. }) => false,
        Err(emco_helm::hooks::HookError::NotText { .. }) => true,
    }
}

/// Whether Helm prints the object among the hooks, after the release's manifest.
fn is_hook(manifest: &Manifest) -> bool {
    matches!(emco_helm::hooks::hook_of(&manifest.object), Ok(Some(_)))
}

/// Renders the request's chart and writes the objects to `out`.
pub fn run(request: &TemplateRequest, out: &mut impl Write) -> Result<(), TemplateError> {
    if !["yaml", "json"].contains(&request.output.as_str()) {
        return Err(TemplateError::Input(format!(
            "-o {}: expected yaml or json",
            request.output
        )));
    }
    let chart = load_chart(&request.chart)?;
    let values = user_values(request)?;
    let release = Release {
        name: request.name.clone(),
        namespace: request.namespace.clone(),
    };
    let mut capabilities = Capabilities::default().with_api_versions(&request.api_versions);
    if let Some(text) = &request.kube_version {
        // As Helm does, a version that does not parse is refused before rendering.
        let version = KubeVersion::parse(text).ok_or_else(|| {
            TemplateError::Input(format!(
                "invalid kube version '{text}': expected major.minor, e.g. 1.23"
            ))
        })?;
        capabilities = capabilities.with_kube_version(version);
    }
    let manifests: Vec<Manifest> =
        render_chart_within(&chart, &values, &release, &capabilities, RenderLimits::default())
            .map_err(|err| TemplateError::Render(err.to_string()))?
            .into_iter()
            .filter(|manifest| !(request.skip_crds && manifest.from_crds))
            .filter(|manifest| request.include_tests || applied(manifest))
            .collect();
    if request.output == "json" {
        let objects: Vec<&Json> = manifests.iter().map(|manifest| &manifest.object).collect();
        let text = serde_json::to_string_pretty(&objects).map_err(std::io::Error::other)?;
        writeln!(out, "{text}")?;
        return Ok(());
    }
    // As `helm template` prints a release: the manifest (CRDs, then the objects in install order, each document as
    // rendered under `---` and `# Source:`), trimmed, then each hook the same way.
    let (hooks, objects): (Vec<&Manifest>, Vec<&Manifest>) =
        manifests.iter().partition(|manifest| is_hook(manifest));
    let mut release = String::new();
    for manifest in objects {
        release.push_str(&format!(
            "---\n# Source: {}\n{}\n",
            manifest.source, manifest.text
        ));
    }
    writeln!(out, "{}", release.trim())?;
    for hook in hooks {
        write!(out, "---\n# Source: {}\n{}\n", hook.source, hook.text)?;
    }
    Ok(())
}
