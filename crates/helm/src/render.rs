//! Rendering a chart for EMCO: the chart and its subcharts prepared with the user's values (Helm's dependency
//! processing, coalescing and schema validation), every template executed by Helm's engine, the output split into
//! Kubernetes objects as Helm splits it, hooks told apart from ordinary objects, and everything ordered as Helm
//! installs it. CRDs from `crds/` folders come first, unrendered.
//!
//! Rendering runs on a thread of its own with a large stack and bounded work ([`Limits`], and the caller's
//! [`RenderLimits`]: output bytes of the whole chart and a wall-clock budget): a hostile chart fails with an error
//! ([`RenderError::Limit`] when a bound stopped it, naming the file, line and bound), it cannot exhaust the
//! caller's stack, memory or time.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value as Json;

use crate::charts::{self, Capabilities, Chart, ChartError, ReleaseInfo};
use crate::engine::{self, EngineError};
use crate::gotemplate::{Deadline, LimitExceeded, Limits, MapScope};

/// The stack rendering runs on: deep include chains in real charts need more than a default thread's.
const RENDER_STACK_BYTES: usize = 64 << 20;

/// The default output budget of one chart's render, all templates together: 32 MiB is far above what real
/// charts render (the biggest objects, CRDs, are not templated) and small enough that a few renders at once
/// cannot exhaust a server's memory.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 32 << 20;

/// The default wall-clock budget of one chart's template execution: real charts render in milliseconds; 10 s
/// leaves room for a busy machine while a template that loops for minutes is stopped.
pub const DEFAULT_RENDER_TIMEOUT: Duration = Duration::from_secs(10);

/// Bounds on one chart's render that a caller may choose (the others are fixed: template nesting 100, 10⁸
/// evaluation steps, parse nesting 1,000, native stack).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderLimits {
    /// Bytes all templates of the chart may write together.
    pub max_output_bytes: usize,
    /// How long executing the chart's templates may take.
    pub timeout: Duration,
}

impl Default for RenderLimits {
    fn default() -> Self {
        Self {
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            timeout: DEFAULT_RENDER_TIMEOUT,
        }
    }
}

/// The release a chart is rendered for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// `.Release.Name` (EMCO: the DIG's `spec.version`).
    pub name: String,
    /// `.Release.Namespace`.
    pub namespace: String,
}

/// One rendered Kubernetes object.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The template file it came from (`chart/templates/x.yaml`, or `chart/crds/x.yaml` for a CRD).
    pub source: String,
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// The whole object.
    pub object: Json,
    /// Whether it comes from a `crds/` folder (never templated; EMCO creates it if absent, before anything else).
    pub from_crds: bool,
    /// Its document's text as Helm splits a rendered file ([`split_documents`]): key order, comments and line
    /// ends as rendered (what `helm template` prints).
    pub text: String,
}

impl Manifest {
    /// The AppContext key of the object: `<metadata.name>+<kind>`.
    #[must_use]
    pub fn key(&self) -> String {
        format!("{}+{}", self.name, self.kind)
    }
}

/// Why a chart could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The chart, its dependencies or its values are refused (Helm's message).
    #[error(transparent)]
    Chart(#[from] ChartError),
    /// A template does not parse or fails while executing (Helm's message, naming `file:line:col`).
    #[error("{message}")]
    Template {
        /// The template that failed.
        template: String,
        /// Helm's message.
        message: String,
    },
    /// Rendering stopped at a bound (output size, time, nesting, steps, a function's result size): the file and
    /// line of the template and the bound.
    #[error("{0}")]
    Limit(LimitExceeded),
    /// A template rendered something that is not a Kubernetes object.
    #[error("{file}: {message}")]
    Manifest {
        /// The template file.
        file: String,
        /// What is wrong with its output.
        message: String,
    },
    /// The renderer's own thread could not run.
    #[error("rendering could not start: {0}")]
    Thread(String),
}

impl From<EngineError> for RenderError {
    fn from(err: EngineError) -> Self {
        match err.limit {
            Some(limit) => RenderError::Limit(limit),
            None => RenderError::Template {
                template: err.template,
                message: err.message,
            },
        }
    }
}

/// Renders every template of `chart` (and its enabled subcharts) with `user_values` over the chart's defaults, as
/// Helm's `template` does: template name → output, partials left out, `NOTES.txt` included. Bounded by the
/// default [`RenderLimits`].
pub fn render_templates(
    chart: &Chart,
    user_values: &Json,
    release: &Release,
) -> Result<BTreeMap<String, String>, RenderError> {
    render_templates_within(
        chart,
        user_values,
        release,
        &Capabilities::default(),
        RenderLimits::default(),
    )
}

/// [`render_templates`] for a cluster of `capabilities` (its Kubernetes version and API versions, as Helm asks a
/// live cluster; [`Capabilities::default`] is `helm template`'s), within `bounds`. A chart whose `kubeVersion`
/// excludes the cluster's version is refused, as Helm refuses it.
pub fn render_templates_within(
    chart: &Chart,
    user_values: &Json,
    release: &Release,
    capabilities: &Capabilities,
    bounds: RenderLimits,
) -> Result<BTreeMap<String, String>, RenderError> {
    render_templates_observed(
        chart,
        user_values,
        release,
        capabilities,
        bounds,
        &Default::default(),
    )
}

/// [`render_templates_within`], setting `read` when the outcome depends on `capabilities`: a template read them,
/// or the chart's `kubeVersion` was checked against them.
fn render_templates_observed(
    chart: &Chart,
    user_values: &Json,
    release: &Release,
    capabilities: &Capabilities,
    bounds: RenderLimits,
    read: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<BTreeMap<String, String>, RenderError> {
    let deadline = Deadline::after(bounds.timeout);
    if !chart.metadata.kube_version.is_empty() {
        read.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    charts::check_kube_version(chart, capabilities)?;
    on_render_thread(|| {
        let _maps = MapScope::open();
        let (tree, values) = charts::prepare(chart, user_values)?;
        let info = ReleaseInfo {
            name: release.name.clone(),
            namespace: release.namespace.clone(),
            revision: 1,
            is_install: true,
            is_upgrade: false,
        };
        let jobs = charts::template_jobs_observed(&tree, &values, &info, capabilities, read.clone());
        let limits = Limits {
            // The render thread's stack is RENDER_STACK_BYTES; leave a margin for the caller's frames.
            max_stack_bytes: RENDER_STACK_BYTES / 2,
            max_output_bytes: bounds.max_output_bytes,
            deadline: Some(deadline),
            ..Limits::default()
        };
        Ok(engine::render_jobs(&jobs, limits)?)
    })
}

fn on_render_thread<T: Send>(work: impl FnOnce() -> Result<T, RenderError> + Send) -> Result<T, RenderError> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("helm-render".into())
            .stack_size(RENDER_STACK_BYTES)
            .spawn_scoped(scope, work)
            .map_err(|err| RenderError::Thread(err.to_string()))?
            .join()
            .map_err(|_| RenderError::Thread("the renderer stopped unexpectedly".into()))?
    })
}

/// Helm's install order by kind (`InstallOrder`); unknown kinds come last, alphabetically.
const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// Helm's `lessByKind`: known kinds by their rank, unknown kinds after them by name; equal ranks keep their order
/// (the sort using it is stable).
fn by_install_order(a: &str, b: &str) -> std::cmp::Ordering {
    let rank = |kind: &str| INSTALL_ORDER.iter().position(|known| *known == kind);
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Helm v4's `releaseutil.SplitManifests`: documents separated by lines starting `---` (the separator with the
/// spaces and tabs after it), leading whitespace trimmed, blank documents dropped. The end of a document is kept as
/// rendered: a file whose last action trims the final line break ends its last document without one.
pub fn split_documents(text: &str) -> Vec<&str> {
    let text = text.trim_start();
    let mut documents = Vec::new();
    let mut start = 0;
    let mut line_start = 0;
    let bytes = text.as_bytes();
    while line_start <= text.len() {
        // A byte scan: rendered output has many short lines, where a searcher's setup per line dominates.
        let line_end = bytes[line_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |at| line_start + at);
        if text[line_start..line_end].starts_with("---") {
            documents.push(&text[start..line_start]);
            // The separator is `---` plus spaces and tabs; the rest of the line belongs to the next document.
            let mut after = line_start + 3;
            while after < line_end && matches!(bytes.get(after), Some(b' ' | b'\t')) {
                after += 1;
            }
            start = after;
        }
        if line_end == text.len() {
            break;
        }
        line_start = line_end + 1;
    }
    documents.push(&text[start..]);
    documents
        .into_iter()
        .filter(|document| !document.trim().is_empty())
        .map(str::trim_start)
        .collect()
}

/// Parses one rendered file into objects: comment-only documents are skipped; anything else must be a Kubernetes
/// object with `apiVersion`, `kind` and `metadata.name`.
fn file_manifests(file: &str, text: &str) -> Result<Vec<Manifest>, RenderError> {
    let mut manifests = Vec::new();
    for (index, document) in split_documents(text).into_iter().enumerate() {
        let bad = |message: String| RenderError::Manifest {
            file: file.to_string(),
            message,
        };
        let object = crate::formats::yaml::parse(document)
            .map_err(|err| bad(format!("YAML parse error (document {}): {err}", index + 1)))?;
        if object.is_null() {
            continue;
        }
        let Json::Object(fields) = &object else {
            return Err(bad(format!("document {} is not a mapping", index + 1)));
        };
        let text_of = |value: Option<&Json>| value.and_then(Json::as_str).unwrap_or_default().to_string();
        let api_version = text_of(fields.get("apiVersion"));
        let kind = text_of(fields.get("kind"));
        let name = text_of(fields.get("metadata").and_then(|meta| meta.get("name")));
        if api_version.is_empty() || kind.is_empty() || name.is_empty() {
            return Err(bad(format!(
                "document {} needs apiVersion, kind and metadata.name (found apiVersion '{api_version}', kind '{kind}', name '{name}')",
                index + 1
            )));
        }
        manifests.push(Manifest {
            source: file.to_string(),
            api_version,
            kind,
            name,
            object,
            from_crds: false,
            text: document.to_string(),
        });
    }
    Ok(manifests)
}

/// Parses the rendered files into objects on up to [`PARSE_THREADS`] threads (parsing big outputs such as CRDs is
/// most of a render's time), keeping the files' order.
fn parse_in_parallel(files: &[(&String, &String)]) -> Vec<Result<Vec<Manifest>, RenderError>> {
    let total: usize = files.iter().map(|(_, text)| text.len()).sum();
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(PARSE_THREADS);
    if threads < 2 || total < PARALLEL_PARSE_BYTES {
        return files
            .iter()
            .map(|(file, text)| file_manifests(file, text))
            .collect();
    }
    // Contiguous shares of about equal bytes, so results concatenate in order.
    let share = total.div_ceil(threads);
    let mut chunks: Vec<&[(&String, &String)]> = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (index, (_, text)) in files.iter().enumerate() {
        bytes += text.len();
        if bytes >= share && chunks.len() + 1 < threads {
            chunks.push(&files[start..=index]);
            (start, bytes) = (index + 1, 0);
        }
    }
    chunks.push(&files[start..]);
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                std::thread::Builder::new()
                    .name("helm-parse".into())
                    .stack_size(RENDER_STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        chunk
                            .iter()
                            .map(|(file, text)| file_manifests(file, text))
                            .collect::<Vec<_>>()
                    })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| {
                match handle.map_err(|err| err.to_string()).and_then(|h| {
                    h.join()
                        .map_err(|_| "the parser stopped unexpectedly".to_string())
                }) {
                    Ok(results) => results,
                    Err(why) => vec![Err(RenderError::Thread(why))],
                }
            })
            .collect()
    })
}

/// At most this many threads parse one chart's output.
const PARSE_THREADS: usize = 4;

/// Below this much output, one thread parses it all (threads cost more than they save).
const PARALLEL_PARSE_BYTES: usize = 256 << 10;

/// Renders `chart` for EMCO: the CRDs of its `crds/` folders (root and subcharts) first, then every rendered object
/// in Helm's install order. Object keys (`<name>+<kind>`) are unique in the result. Bounded by the default
/// [`RenderLimits`].
pub fn render_chart(
    chart: &Chart,
    user_values: &Json,
    release: &Release,
) -> Result<Vec<Manifest>, RenderError> {
    render_chart_within(
        chart,
        user_values,
        release,
        &Capabilities::default(),
        RenderLimits::default(),
    )
}

/// A CRD that a chart ships in `crds/` and also renders from a template (older charts read `crds/` into a template
/// with `.Files.Glob`) is one object, as it ends up in a cluster Helm installed: a template's copy annotated with a
/// hook event Helm does not know (Helm 2's `crd-install`) is skipped by Helm, so the `crds/` copy stays; any other
/// template copy is what the chart renders, so it replaces the `crds/` copy (which Helm would skip as existing).
fn one_object_per_crd(mut manifests: Vec<Manifest>, crd_count: usize) -> Vec<Manifest> {
    let templates = manifests.split_off(crd_count);
    let from_crds: std::collections::HashSet<String> = manifests.iter().map(Manifest::key).collect();
    let mut replaced = std::collections::HashSet::new();
    let mut rendered = Vec::with_capacity(templates.len());
    for manifest in templates {
        let key = manifest.key();
        if from_crds.contains(&key) {
            if matches!(
                crate::hooks::hook_of(&manifest.object),
                Err(crate::hooks::HookError::UnknownEvent { .. })
            ) {
                continue;
            }
            replaced.insert(key);
        }
        rendered.push(manifest);
    }
    manifests.retain(|crd| !replaced.contains(&crd.key()));
    manifests.extend(rendered);
    manifests
}

/// [`render_chart`] for a cluster of `capabilities` (see [`render_templates_within`]), within `bounds`.
pub fn render_chart_within(
    chart: &Chart,
    user_values: &Json,
    release: &Release,
    capabilities: &Capabilities,
    bounds: RenderLimits,
) -> Result<Vec<Manifest>, RenderError> {
    render_chart_observed(chart, user_values, release, capabilities, bounds).0
}

/// [`render_chart_within`], and whether its outcome depends on `capabilities` (a template read them, or the
/// chart's `kubeVersion` was checked against them): when it does not, the same objects fit every cluster.
pub fn render_chart_observed(
    chart: &Chart,
    user_values: &Json,
    release: &Release,
    capabilities: &Capabilities,
    bounds: RenderLimits,
) -> (Result<Vec<Manifest>, RenderError>, bool) {
    let read = std::sync::Arc::default();
    let rendered = render_objects(chart, user_values, release, capabilities, bounds, &read);
    (rendered, read.load(std::sync::atomic::Ordering::Relaxed))
}

fn render_objects(
    chart: &Chart,
    user_values: &Json,
    release: &Release,
    capabilities: &Capabilities,
    bounds: RenderLimits,
    read: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<Vec<Manifest>, RenderError> {
    let rendered = render_templates_observed(chart, user_values, release, capabilities, bounds, read)?;
    let mut manifests = Vec::new();
    for (file, bytes) in chart.crd_objects() {
        let crds = file_manifests(&file, &String::from_utf8_lossy(&bytes))?;
        manifests.extend(crds.into_iter().map(|crd| Manifest {
            from_crds: true,
            ..crd
        }));
    }
    let crd_count = manifests.len();
    let files: Vec<(&String, &String)> = rendered
        .iter()
        .filter(|(file, _)| !file.ends_with("NOTES.txt"))
        .collect();
    for parsed in parse_in_parallel(&files) {
        manifests.extend(parsed?);
    }
    manifests[crd_count..].sort_by(|a, b| by_install_order(&a.kind, &b.kind));
    let manifests = one_object_per_crd(manifests, crd_count);
    let mut seen = std::collections::HashSet::new();
    for manifest in &manifests {
        if !seen.insert(manifest.key()) {
            return Err(RenderError::Manifest {
                file: manifest.source.clone(),
                message: format!(
                    "object '{}' is rendered twice; names must be unique per kind",
                    manifest.key()
                ),
            });
        }
    }
    Ok(manifests)
}
