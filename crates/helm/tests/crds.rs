//! A CRD a chart ships in `crds/` and also renders from a template (as older charts do with `.Files.Glob`) is one
//! object after rendering, as in a cluster Helm installed; a template object rendered twice is still refused.

use emco_helm::archive::ArchiveFile;
use emco_helm::render::{Release, render_chart};

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    source: crds-folder
spec:
  group: example.com
";

fn chart(templates: &[(&str, &str)]) -> emco_helm::Chart {
    let mut files = vec![
        ArchiveFile {
            path: "c/Chart.yaml".into(),
            bytes: b"apiVersion: v2\nname: c\nversion: 0.1.0\n".to_vec(),
        },
        ArchiveFile {
            path: "c/crds/widgets.yaml".into(),
            bytes: CRD.as_bytes().to_vec(),
        },
    ];
    files.extend(templates.iter().map(|(name, text)| ArchiveFile {
        path: format!("c/templates/{name}"),
        bytes: text.as_bytes().to_vec(),
    }));
    emco_helm::charts::load_files(files).expect("chart loads")
}

fn release() -> Release {
    Release {
        name: "r1".into(),
        namespace: "default".into(),
    }
}

fn widgets(chart: &emco_helm::Chart) -> Vec<(bool, String)> {
    render_chart(chart, &serde_json::json!({}), &release())
        .expect("renders")
        .into_iter()
        .filter(|manifest| manifest.name == "widgets.example.com")
        .map(|manifest| {
            let source = manifest.object["metadata"]["annotations"]["source"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (manifest.from_crds, source)
        })
        .collect()
}

#[test]
fn a_crd_read_into_a_template_as_a_crd_install_hook_stays_the_crds_folder_copy() {
    // prometheus-operator's charts: `{{ range $path, $_ := .Files.Glob "crds/*.yaml" }}{{ $.Files.Get $path }}`,
    // the files annotated `helm.sh/hook: crd-install` (Helm 2), an event Helm 3 and 4 skip.
    let template = "{{- range $path, $_ := .Files.Glob \"crds/*.yaml\" }}\n{{ $.Files.Get $path | replace \"source: crds-folder\" \"source: template\\n    helm.sh/hook: crd-install\" }}\n---\n{{- end }}\n";
    let chart = chart(&[("crds.yaml", template)]);
    assert_eq!(widgets(&chart), [(true, "crds-folder".to_string())]);
}

#[test]
fn a_crd_rendered_by_an_ordinary_template_replaces_the_crds_folder_copy() {
    let template = CRD.replace("source: crds-folder", "source: template");
    let chart = chart(&[("crd.yaml", &template)]);
    assert_eq!(widgets(&chart), [(false, "template".to_string())]);
}

#[test]
fn an_object_two_templates_render_is_still_refused() {
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n";
    let chart = chart(&[("a.yaml", config), ("b.yaml", config)]);
    let err = render_chart(&chart, &serde_json::json!({}), &release()).expect_err("refused");
    assert!(err.to_string().contains("rendered twice"), "{err}");
}
