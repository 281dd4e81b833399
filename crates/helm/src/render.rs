//! Rendering a chart: build Helm's template data, execute every template with Helm's functions, split the output
//! into manifests and order them as Helm installs them.

use std::sync::Arc;

use gotmpl::{Template, TemplateError};
use serde_json::{Value as Json, json};

use crate::chart::Chart;
use crate::funcs::{TemplateSlot, helm_funcs, json_to_value};

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
    /// The template file it came from.
    pub source: String,
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// The whole object.
    pub object: Json,
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
    /// A template does not parse or fails while executing.
    #[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Template {
        /// The template file.
        file: String,
        /// The line, where the engine reports one.
        line: Option<usize>,
        /// What went wrong.
        message: String,
    },
    /// A template rendered something that is not a Kubernetes object.
    #[error("{file}: {message}")]
    Manifest {
        /// The template file.
        file: String,
        /// What is wrong with its output.
        message: String,
    },
}

fn template_error(file: &str, err: &TemplateError) -> RenderError {
    match err {
        TemplateError::Parse { line, message, .. } | TemplateError::Lex { line, message, .. } => {
            RenderError::Template {
                file: file.to_string(),
                line: Some(*line),
                message: message.clone(),
            }
        }
        other => RenderError::Template {
            file: file.to_string(),
            line: None,
            message: other.to_string(),
        },
    }
}

/// Adds a line to an execution error when the failing function or template is named on exactly one line of the
/// file (the engine reports positions only for syntax errors).
fn with_exec_line(error: RenderError, source: &str, err: &TemplateError) -> RenderError {
    let RenderError::Template {
        file,
        line: None,
        message,
    } = error
    else {
        return error;
    };
    let needle = match err {
        TemplateError::Exec(text) => text.split_once(": ").map(|(name, _)| name.to_string()),
        TemplateError::ArgCount { name, .. } => Some(name.clone()),
        TemplateError::UndefinedTemplate(name) => Some(format!("\"{name}\"")),
        TemplateError::MissingKey { key } => Some(key.clone()),
        _ => None,
    };
    let line = needle
        .filter(|needle| !needle.is_empty() && !needle.contains(' '))
        .and_then(|needle| {
            let mut lines = source
                .lines()
                .enumerate()
                .filter(|(_, text)| text.contains(&needle));
            match (lines.next(), lines.next()) {
                (Some((index, _)), None) => Some(index + 1),
                _ => None,
            }
        });
    RenderError::Template { file, line, message }
}

/// Helm's install order by kind; kinds not listed come last, in output order.
const INSTALL_ORDER: &[&str] = &[
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
];

fn install_rank(kind: &str) -> usize {
    INSTALL_ORDER
        .iter()
        .position(|known| *known == kind)
        .unwrap_or(INSTALL_ORDER.len())
}

fn data_for(chart: &Chart, values: &Json, release: &Release, template_path: &str) -> Json {
    json!({
        "Values": values,
        "Release": {
            "Name": release.name,
            "Namespace": release.namespace,
            "Revision": 1,
            "IsInstall": true,
            "IsUpgrade": false,
            "Service": "Helm",
        },
        "Chart": {"Name": chart.name, "Version": chart.version, "AppVersion": chart.app_version},
        "Capabilities": {
            "KubeVersion": {"Version": "v1.33.0", "Major": "1", "Minor": "33", "GitVersion": "v1.33.0"},
            "APIVersions": [],
        },
        "Template": {"Name": template_path, "BasePath": "templates"},
    })
}

/// Renders every template of `chart` with `values` (already merged) for `release`, returning the manifests in
/// Helm's install order, preceded by the objects of the chart's `crds/` folder (not templated, in file order;
/// their `source` starts with `crds/`). Keys (`<name>+<kind>`) are unique within the result.
pub fn render_chart(chart: &Chart, values: &Json, release: &Release) -> Result<Vec<Manifest>, RenderError> {
    let partials: Vec<_> = chart.templates.iter().filter(|file| file.is_partial()).collect();
    // Check each partial on its own so that a syntax error names the right file.
    for partial in &partials {
        Template::new(&partial.path)
            .funcs(helm_funcs(&TemplateSlot::default()))
            .parse(&partial.text)
            .map_err(|err| template_error(&partial.path, &err))?;
    }
    let mut manifests = Vec::new();
    for file in chart.templates.iter().filter(|file| file.yields_manifests()) {
        let slot = TemplateSlot::default();
        let mut template = Template::new(&file.path).funcs(helm_funcs(&slot));
        for partial in &partials {
            template = template
                .parse(&partial.text)
                .map_err(|err| template_error(&partial.path, &err))?;
        }
        let template = Arc::new(
            template
                .parse(&file.text)
                .map_err(|err| template_error(&file.path, &err))?,
        );
        slot.fill(&template);
        let data = json_to_value(&data_for(
            chart,
            values,
            release,
            &format!("{}/{}", chart.name, file.path),
        ));
        let output = template
            .execute_to_string(&data)
            .map_err(|err| with_exec_line(template_error(&file.path, &err), &file.text, &err))?;
        // Go prints a missing value as "<no value>"; Helm blanks it.
        let output = output.replace("<no value>", "");
        manifests.extend(split_manifests(&file.path, &output)?);
    }
    manifests.sort_by_key(|manifest| install_rank(&manifest.kind));
    let mut crds = Vec::new();
    for file in &chart.crds {
        crds.extend(split_manifests(&file.path, &file.text)?);
    }
    crds.append(&mut manifests);
    let manifests = crds;
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

fn split_manifests(file: &str, output: &str) -> Result<Vec<Manifest>, RenderError> {
    if output.trim().is_empty() {
        return Ok(Vec::new());
    }
    let documents: Vec<Json> = serde_saphyr::from_multiple(output).map_err(|err| RenderError::Manifest {
        file: file.to_string(),
        message: format!("rendered output is not YAML: {err}"),
    })?;
    let mut manifests = Vec::new();
    for (index, document) in documents.into_iter().enumerate() {
        if document.is_null() {
            continue;
        }
        let bad = |message: String| RenderError::Manifest {
            file: file.to_string(),
            message,
        };
        let Json::Object(object) = &document else {
            return Err(bad(format!("document {} is not a mapping", index + 1)));
        };
        let field = |name: &str| {
            object
                .get(name)
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        let name = object
            .get("metadata")
            .and_then(|meta| meta.get("name"))
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string();
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
            object: document,
        });
    }
    Ok(manifests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::write_tgz;
    use crate::chart::read_chart;

    fn release() -> Release {
        Release {
            name: "r1".into(),
            namespace: "default".into(),
        }
    }

    fn chart(files: &[(&str, &str)]) -> Chart {
        let mut all: Vec<(&str, &[u8])> = vec![("c/Chart.yaml", b"name: sink\nversion: 0.1.0\n")];
        all.extend(files.iter().map(|(path, text)| (*path, text.as_bytes())));
        read_chart(&write_tgz(&all)).unwrap()
    }

    #[test]
    fn renders_values_release_chart_and_helpers_in_install_order() {
        let chart = chart(&[
            ("c/values.yaml", "replicas: 1\nprefix: fw0\n"),
            (
                "c/templates/_helpers.tpl",
                "{{- define \"sink.name\" -}}{{ .Values.prefix }}-{{ .Chart.Name }}{{- end -}}\n",
            ),
            (
                "c/templates/deployment.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"sink.name\" . }}\n  labels:\n    release: {{ .Release.Name | quote }}\nspec:\n  replicas: {{ .Values.replicas }}\n",
            ),
            (
                "c/templates/configmap.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sink-configmap\n---\n# empty\n",
            ),
            ("c/templates/NOTES.txt", "{{ .nothing.here }}"),
        ]);
        let manifests = render_chart(&chart, &chart.values, &release()).unwrap();
        let keys: Vec<_> = manifests.iter().map(Manifest::key).collect();
        assert_eq!(keys, ["sink-configmap+ConfigMap", "fw0-sink+Deployment"]);
        assert_eq!(manifests[1].object["spec"]["replicas"], 1);
        assert_eq!(manifests[1].object["metadata"]["labels"]["release"], "r1");
    }

    #[test]
    fn crds_folder_objects_come_first_untemplated() {
        let chart = chart(&[
            (
                "c/crds/widgets.yaml",
                "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n  annotations:\n    note: \"{{ not a template }}\"\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.com\n",
            ),
            (
                "c/templates/ns.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: n1\n",
            ),
        ]);
        let manifests = render_chart(&chart, &chart.values, &release()).unwrap();
        let keys: Vec<_> = manifests.iter().map(|m| (m.source.as_str(), m.key())).collect();
        assert_eq!(
            keys,
            [
                (
                    "crds/widgets.yaml",
                    "widgets.example.com+CustomResourceDefinition".to_string()
                ),
                (
                    "crds/widgets.yaml",
                    "gadgets.example.com+CustomResourceDefinition".to_string()
                ),
                ("templates/ns.yaml", "n1+Namespace".to_string()),
            ]
        );
        assert_eq!(
            manifests[0].object["metadata"]["annotations"]["note"],
            "{{ not a template }}"
        );
        let broken = self::chart(&[("c/crds/bad.yaml", "kind: [")]);
        let err = render_chart(&broken, &broken.values, &release())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("crds/bad.yaml:"), "{err}");
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let broken = chart(&[(
            "c/templates/svc.yaml",
            "apiVersion: v1\nkind: Service\n{{ if .Values.x }\n",
        )]);
        let err = render_chart(&broken, &broken.values, &release()).unwrap_err();
        assert!(
            matches!(&err, RenderError::Template { file, line: Some(3), .. } if file == "templates/svc.yaml"),
            "{err:?}"
        );

        let broken_helper = chart(&[
            ("c/templates/_h.tpl", "{{ define \"x\" }}{{ .a }"),
            ("c/templates/a.yaml", ""),
        ]);
        let err = render_chart(&broken_helper, &broken_helper.values, &release())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("templates/_h.tpl"), "{err}");

        let nameless = chart(&[("c/templates/a.yaml", "apiVersion: v1\nkind: ConfigMap\n")]);
        let err = render_chart(&nameless, &nameless.values, &release())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("templates/a.yaml") && err.contains("metadata.name"),
            "{err}"
        );

        let required = chart(&[(
            "c/templates/a.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ required \"name is required\" .Values.name }}\n",
        )]);
        let err = render_chart(&required, &required.values, &release()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "templates/a.yaml:4: execution error: required: name is required"
        );

        let twice = chart(&[
            (
                "c/templates/a.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
            ),
            (
                "c/templates/b.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
            ),
        ]);
        assert!(
            render_chart(&twice, &twice.values, &release())
                .unwrap_err()
                .to_string()
                .contains("rendered twice")
        );
    }
}
