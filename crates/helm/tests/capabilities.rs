//! Rendering for a cluster: `.Capabilities` carries the cluster's Kubernetes version and API versions, so a chart
//! that switches on them renders what fits the cluster; a chart whose `kubeVersion` excludes the cluster is
//! refused with Helm's message.

use emco_helm::archive::ArchiveFile;
use emco_helm::charts::{Capabilities, KubeVersion, VersionSet};
use emco_helm::render::{Release, RenderError, RenderLimits, render_chart_observed, render_chart_within};

const TEMPLATE: &str = r#"{{- if .Capabilities.APIVersions.Has "policy/v1beta1/PodSecurityPolicy" }}
apiVersion: policy/v1beta1
kind: PodSecurityPolicy
metadata:
  name: restricted
spec:
  privileged: false
---
{{- end }}
apiVersion: {{ if semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version }}policy/v1{{ else }}policy/v1beta1{{ end }}
kind: PodDisruptionBudget
metadata:
  name: web
  annotations:
    kube: {{ .Capabilities.KubeVersion.Version | quote }}
    minor: {{ .Capabilities.KubeVersion.Minor | quote }}
spec:
  minAvailable: 1
"#;

fn chart(kube_version: &str) -> emco_helm::Chart {
    let metadata = format!("apiVersion: v2\nname: c\nversion: 0.1.0\nkubeVersion: \"{kube_version}\"\n");
    emco_helm::charts::load_files(vec![
        ArchiveFile {
            path: "c/Chart.yaml".into(),
            bytes: metadata.into_bytes(),
        },
        ArchiveFile {
            path: "c/templates/policy.yaml".into(),
            bytes: TEMPLATE.as_bytes().to_vec(),
        },
    ])
    .expect("chart loads")
}

/// A cluster as its discovery describes it: `/version`'s gitVersion and its group versions and kinds.
fn cluster(git_version: &str, api_versions: &[&str]) -> Capabilities {
    Capabilities {
        kube_version: KubeVersion::parse(git_version).expect("a version"),
        api_versions: VersionSet(api_versions.iter().map(|v| (*v).to_string()).collect()),
        ..Capabilities::default()
    }
}

fn render(
    chart: &emco_helm::Chart,
    capabilities: &Capabilities,
) -> Result<Vec<(String, String, String)>, RenderError> {
    let release = Release {
        name: "r1".into(),
        namespace: "default".into(),
    };
    let manifests = render_chart_within(
        chart,
        &serde_json::json!({}),
        &release,
        capabilities,
        RenderLimits::default(),
    )?;
    Ok(manifests
        .into_iter()
        .map(|manifest| {
            let kube = manifest.object["metadata"]["annotations"]["kube"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (manifest.api_version, manifest.kind, kube)
        })
        .collect())
}

#[test]
fn a_chart_renders_what_fits_the_cluster_it_lands_on() {
    let chart = chart(">=1.19.0-0");
    let old = cluster(
        "v1.23.0+kubesim",
        &[
            "v1",
            "policy/v1",
            "policy/v1beta1",
            "policy/v1beta1/PodSecurityPolicy",
        ],
    );
    assert_eq!(
        render(&chart, &old).expect("renders"),
        [
            ("policy/v1beta1".into(), "PodSecurityPolicy".into(), String::new()),
            (
                "policy/v1".into(),
                "PodDisruptionBudget".into(),
                "v1.23.0+kubesim".into()
            ),
        ]
    );
    let older = cluster("v1.20.15", &["v1", "policy/v1beta1"]);
    assert_eq!(
        render(&chart, &older).expect("renders"),
        [(
            "policy/v1beta1".into(),
            "PodDisruptionBudget".into(),
            "v1.20.15".into()
        )]
    );
    // Helm's `helm template` defaults: the newest Kubernetes, which serves no PodSecurityPolicy kind.
    assert_eq!(
        render(&chart, &Capabilities::default()).expect("renders"),
        [("policy/v1".into(), "PodDisruptionBudget".into(), "v1.36.0".into())]
    );
}

#[test]
fn a_chart_whose_kube_version_excludes_the_cluster_is_refused_with_helms_message() {
    let chart = chart(">=1.25.0-0");
    let err = render(&chart, &cluster("v1.23.0+kubesim", &["v1"])).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "chart requires kubeVersion: >=1.25.0-0 which is incompatible with Kubernetes v1.23.0+kubesim"
    );
    assert!(render(&chart, &cluster("v1.30.2", &["v1"])).is_ok());
}

#[test]
fn a_render_says_whether_it_depends_on_the_capabilities() {
    let release = Release {
        name: "r1".into(),
        namespace: "default".into(),
    };
    let render = |kube_version: &str, template: &str| {
        let metadata = format!("apiVersion: v2\nname: c\nversion: 0.1.0\nkubeVersion: \"{kube_version}\"\n");
        let chart = emco_helm::charts::load_files(vec![
            ArchiveFile {
                path: "c/Chart.yaml".into(),
                bytes: metadata.into_bytes(),
            },
            ArchiveFile {
                path: "c/templates/x.yaml".into(),
                bytes: template.as_bytes().to_vec(),
            },
        ])
        .expect("chart loads");
        let (manifests, read) = render_chart_observed(
            &chart,
            &serde_json::json!({}),
            &release,
            &Capabilities::default(),
            RenderLimits::default(),
        );
        (manifests.map(|m| m.len()).map_err(|err| err.to_string()), read)
    };
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    assert_eq!(render("", config_map), (Ok(1), false));
    // Passing the dot (and so .Capabilities) along reads nothing of it.
    assert_eq!(
        render(
            "",
            &format!(
                "{{{{- $dot := . }}}}{{{{ include \"x\" $dot }}}}{{{{ define \"x\" }}}}{config_map}{{{{ end }}}}"
            )
        ),
        (Ok(1), false)
    );
    assert_eq!(
        render(
            "",
            &format!("{{{{ if .Capabilities.APIVersions.Has \"v1\" }}}}{config_map}{{{{ end }}}}")
        ),
        (Ok(1), true)
    );
    assert_eq!(
        render(
            "",
            &format!("# {{{{ .Capabilities.KubeVersion.Minor }}}}\n{config_map}")
        ),
        (Ok(1), true)
    );
    assert_eq!(
        render(
            "",
            &format!("# {{{{ toYaml $.Capabilities | sha256sum }}}}\n{config_map}")
        ),
        (Ok(1), true)
    );
    // A kubeVersion constraint makes the outcome depend on the cluster, even when it refuses.
    assert_eq!(render(">=1.20.0-0", config_map), (Ok(1), true));
    let (refused, read) = render("<1.20.0", config_map);
    assert!(refused.is_err() && read);
}
