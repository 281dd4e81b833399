//! What each template sees, as Helm's engine builds it (`allTemplates`/`recAllTpls`, `sortTemplates`): one job per
//! template with its full name (`parent/charts/sub/templates/x.yaml`), its text and the dot it executes with
//! (`.Values`, `.Chart`, `.Release`, `.Capabilities`, `.Template`, `.Files`, `.Subcharts`), in Helm's order.
//!
//! Order: Helm parses and executes templates sorted by path depth, deepest first, and within one depth in reverse
//! lexical order; a later `define` of the same name replaces an earlier one, so the parent's definitions (parsed
//! last) win over its subcharts'. Partials (`_*`) are parsed but not executed; a library chart contributes only its
//! partials.
//!
//! All templates of one chart share one dot map, as in Helm: `.Template` is set on it just before each template
//! runs ([`TemplateJob::enter`]), and `.Subcharts.NAME` is the subchart's dot itself. The values inside are shared
//! too (`.Values.sub` of the parent is the subchart's `.Values`). [`Value`]s are `Rc`-based: build the jobs on the
//! thread that renders them.

use std::rc::Rc;

use serde_json::Value as Json;

use super::capabilities::Capabilities;
use super::files::Files;
use super::{Chart, ChartError};
use crate::gotemplate::{Map, Value};
use crate::sprig::semver::is_compatible_range;

/// The release a chart is rendered for (`.Release`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseInfo {
    /// `.Release.Name`.
    pub name: String,
    /// `.Release.Namespace`.
    pub namespace: String,
    /// `.Release.Revision` (an `int`).
    pub revision: i64,
    /// `.Release.IsInstall`.
    pub is_install: bool,
    /// `.Release.IsUpgrade`.
    pub is_upgrade: bool,
}

/// One template to parse (and, when [`TemplateJob::renders`], execute).
#[derive(Clone)]
pub struct TemplateJob {
    /// Its name in the template set, e.g. `parent/charts/sub/templates/y.yaml` (the chart names are aliases).
    pub name: String,
    /// Its text (invalid UTF-8 replaced).
    pub text: String,
    /// The dot it executes with (its chart's shared map).
    pub data: Value,
    /// `.Template.BasePath`, e.g. `parent/charts/sub/templates`.
    pub base_path: String,
    /// Whether Helm executes it (false for partials `_*`).
    pub renders: bool,
}

impl TemplateJob {
    /// Sets `.Template` (`{Name, BasePath}`) on the shared dot and returns the dot: call right before executing.
    #[must_use]
    pub fn enter(&self) -> Value {
        if let Some(map) = self.data.as_map() {
            map.insert("Template", template_value(&self.name, &self.base_path));
        }
        self.data.clone()
    }
}

fn template_value(name: &str, base_path: &str) -> Value {
    let map = Map::new();
    map.insert("BasePath", Value::string(base_path));
    map.insert("Name", Value::string(name));
    Value::Map(map)
}

/// Helm's `sortTemplates` as a comparison of template names: more deeply nested paths first, then reverse lexical
/// order — so that a parent chart's definitions, parsed last, replace its subcharts' definitions of the same name.
#[must_use]
pub fn helm_template_order(a: &str, b: &str) -> std::cmp::Ordering {
    let depth = |name: &str| name.matches('/').count();
    depth(b).cmp(&depth(a)).then_with(|| b.cmp(a))
}

/// Every template of the (prepared) chart tree with the dot it sees, in Helm's parse order (which is also its
/// execution order for the jobs that render). `chart` and `top_values` are what [`super::prepare`] returned.
#[must_use]
pub fn template_jobs(
    chart: &Chart,
    top_values: &Json,
    release: &ReleaseInfo,
    caps: &Capabilities,
) -> Vec<TemplateJob> {
    template_jobs_with(chart, top_values, release, Value::Object(Rc::new(caps.clone())))
}

/// [`template_jobs`] with `caps` noting whether a template read them (see [`super::capabilities::Observed`]).
pub(crate) fn template_jobs_observed(
    chart: &Chart,
    top_values: &Json,
    release: &ReleaseInfo,
    caps: &Capabilities,
    read: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Vec<TemplateJob> {
    let observed = super::capabilities::Observed::new(caps.clone(), read);
    template_jobs_with(chart, top_values, release, Value::Object(Rc::new(observed)))
}

fn template_jobs_with(
    chart: &Chart,
    top_values: &Json,
    release: &ReleaseInfo,
    caps: Value,
) -> Vec<TemplateJob> {
    let release_map = Map::new();
    release_map.insert("IsInstall", Value::Bool(release.is_install));
    release_map.insert("IsUpgrade", Value::Bool(release.is_upgrade));
    release_map.insert("Name", Value::string(&release.name));
    release_map.insert("Namespace", Value::string(&release.namespace));
    release_map.insert("Revision", Value::Int(release.revision));
    release_map.insert("Service", Value::string("Helm"));
    let shared = Shared {
        release: Value::Map(release_map),
        caps,
    };
    let mut jobs = Vec::new();
    collect(
        chart,
        true,
        Value::from_json(top_values),
        chart.name(),
        &shared,
        &mut jobs,
        0,
    );
    jobs.sort_by(|a, b| helm_template_order(&a.name, &b.name));
    for job in &jobs {
        let _ = job.enter();
    }
    jobs
}

struct Shared {
    release: Value,
    caps: Value,
}

fn collect(
    chart: &Chart,
    is_root: bool,
    values: Value,
    full_path: &str,
    shared: &Shared,
    jobs: &mut Vec<TemplateJob>,
    depth: usize,
) -> Value {
    let dot = Map::new();
    dot.insert("Chart", chart.metadata.to_template_map(is_root));
    let files = Files::new(chart.files.iter().map(|f| (f.name.as_str(), f.data.as_slice())));
    dot.insert("Files", Value::Object(Rc::new(files)));
    dot.insert("Release", shared.release.clone());
    dot.insert("Capabilities", shared.caps.clone());
    dot.insert("Values", values.clone());
    let subcharts = Map::new();
    dot.insert("Subcharts", Value::Map(subcharts.clone()));
    if depth < super::load::MAX_CHART_DEPTH {
        for sub in &chart.dependencies {
            // `values.Table("Values." + name)`: the subchart's table inside this chart's values, or an empty map.
            let mut scoped = Some(values.clone());
            for part in sub.name().split('.') {
                scoped = scoped
                    .as_ref()
                    .and_then(Value::as_map)
                    .and_then(|map| map.get(part))
                    .filter(|value| value.as_map().is_some());
            }
            let sub_values = scoped.unwrap_or_else(|| Value::Map(Map::new()));
            let sub_path = format!("{full_path}/charts/{}", sub.name());
            let sub_dot = collect(sub, false, sub_values, &sub_path, shared, jobs, depth + 1);
            subcharts.insert(sub.name(), sub_dot);
        }
    }
    let base_path = format!("{full_path}/templates");
    let data = Value::Map(dot);
    for template in &chart.templates {
        let base = template.name.rsplit('/').next().unwrap_or(&template.name);
        let partial = base.starts_with('_');
        if chart.is_library() && !partial {
            continue;
        }
        jobs.push(TemplateJob {
            name: format!("{full_path}/{}", template.name),
            text: super::file_text(&template.data).into_owned(),
            data: data.clone(),
            base_path: base_path.clone(),
            renders: !partial,
        });
    }
    data
}

/// Helm's `kubeVersion` check before rendering: `chart requires kubeVersion: X which is incompatible with
/// Kubernetes vY`.
pub fn check_kube_version(chart: &Chart, caps: &Capabilities) -> Result<(), ChartError> {
    let wanted = &chart.metadata.kube_version;
    if wanted.is_empty() || is_compatible_range(wanted, &caps.kube_version.normalized) {
        return Ok(());
    }
    Err(ChartError::NotInstallable(format!(
        "chart requires kubeVersion: {wanted} which is incompatible with Kubernetes {}",
        caps.kube_version.version
    )))
}

/// Helm's `CheckIfInstallable`: only application charts (type empty or `application`) render.
pub fn check_installable(chart: &Chart) -> Result<(), ChartError> {
    match chart.metadata.chart_type.as_str() {
        "" | "application" => Ok(()),
        other => Err(ChartError::NotInstallable(format!(
            "{other} charts are not installable"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::charts::{File, Metadata};

    fn chart(name: &str, templates: &[&str], deps: Vec<Chart>) -> Chart {
        Chart {
            metadata: Metadata {
                name: name.into(),
                version: "0.1.0".into(),
                api_version: "v2".into(),
                ..Metadata::default()
            },
            values: json!({}).into(),
            schema: None,
            templates: templates
                .iter()
                .map(|name| File {
                    name: format!("templates/{name}"),
                    data: b"x".to_vec(),
                })
                .collect(),
            files: vec![File {
                name: "files/a.txt".into(),
                data: b"a".to_vec(),
            }],
            dependencies: deps,
        }
    }

    fn release() -> ReleaseInfo {
        ReleaseInfo {
            name: "r1".into(),
            namespace: "default".into(),
            revision: 1,
            is_install: true,
            is_upgrade: false,
        }
    }

    #[test]
    fn jobs_follow_helms_order_and_dots() {
        let deep = chart("deep", &["d.yaml"], vec![]);
        let sub = chart("sub1", &["s.yaml", "_h.tpl"], vec![deep]);
        let top = chart(
            "p1",
            &["a.yaml", "files.yaml", "_helpers.tpl", "sub/x.yaml"],
            vec![sub],
        );
        let values = json!({"top": 1, "sub1": {"child": "override", "deep": {"d": 1}}});
        let jobs = template_jobs(&top, &values, &release(), &Capabilities::default());
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "p1/charts/sub1/charts/deep/templates/d.yaml",
                "p1/charts/sub1/templates/s.yaml",
                "p1/charts/sub1/templates/_h.tpl",
                "p1/templates/sub/x.yaml",
                "p1/templates/files.yaml",
                "p1/templates/a.yaml",
                "p1/templates/_helpers.tpl",
            ]
        );
        let renders: Vec<bool> = jobs.iter().map(|j| j.renders).collect();
        assert_eq!(renders, [true, true, false, true, true, true, false]);
        let dot = jobs[5].enter();
        let json = |v: &Value| v.to_json().unwrap();
        let map = dot.as_map().unwrap();
        assert_eq!(
            json(&map.get("Template").unwrap()),
            json!({"BasePath": "p1/templates", "Name": "p1/templates/a.yaml"})
        );
        assert_eq!(
            json(&map.get("Release").unwrap()),
            json!({"IsInstall": true, "IsUpgrade": false, "Name": "r1", "Namespace": "default", "Revision": 1, "Service": "Helm"})
        );
        assert!(matches!(
            map.get("Release").unwrap().as_map().unwrap().get("Revision"),
            Some(Value::Int(1))
        ));
        assert_eq!(
            json(&map.get("Chart").unwrap()),
            json!({"APIVersion":"v2","Annotations":null,"AppVersion":"","Condition":"","Dependencies":[],
                   "Deprecated":false,"Description":"","Home":"","Icon":"","IsRoot":true,"Keywords":[],"KubeVersion":"",
                   "Maintainers":[],"Name":"p1","Sources":[],"Tags":"","Type":"","Version":"0.1.0"})
        );
        // The subchart's .Values is the parent's .Values.sub1 itself (shared, as Go maps are).
        let sub_dot = jobs[1].enter();
        let sub_values = sub_dot.as_map().unwrap().get("Values").unwrap();
        sub_values.as_map().unwrap().insert("set", Value::Bool(true));
        let parent_sub = map.get("Values").unwrap().as_map().unwrap().get("sub1").unwrap();
        assert!(parent_sub.as_map().unwrap().contains_key("set"));
        // .Subcharts.sub1 is the subchart's dot.
        let subcharts = map.get("Subcharts").unwrap();
        assert!(
            subcharts
                .as_map()
                .unwrap()
                .get("sub1")
                .unwrap()
                .as_map()
                .unwrap()
                .ptr_eq(sub_dot.as_map().unwrap())
        );
        assert_eq!(
            json(&sub_dot.as_map().unwrap().get("Chart").unwrap())["IsRoot"],
            json!(false)
        );
    }

    #[test]
    fn library_charts_contribute_only_partials() {
        let mut lib = chart("lib", &["_l.tpl", "ignored.yaml"], vec![]);
        lib.metadata.chart_type = "library".into();
        let top = chart("app", &[], vec![lib.clone()]);
        let jobs = template_jobs(&top, &json!({}), &release(), &Capabilities::default());
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["app/charts/lib/templates/_l.tpl"]);
        assert_eq!(
            check_installable(&lib).unwrap_err().to_string(),
            "library charts are not installable"
        );
    }

    #[test]
    fn kube_version_constraints_are_checked() {
        let mut c = chart("k", &[], vec![]);
        c.metadata.kube_version = ">=1.20.0-0".into();
        assert!(check_kube_version(&c, &Capabilities::default()).is_ok());
        c.metadata.kube_version = ">=99.0.0".into();
        assert_eq!(
            check_kube_version(&c, &Capabilities::default())
                .unwrap_err()
                .to_string(),
            "chart requires kubeVersion: >=99.0.0 which is incompatible with Kubernetes v1.36.0"
        );
    }
}
