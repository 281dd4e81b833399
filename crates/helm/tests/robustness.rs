//! Hostile charts: whatever a chart archive holds — random bytes, random files, templates assembled from random
//! actions and functions, random values — rendering answers `Ok` or a clear error and never panics, and each bound
//! of the renderer (output size, nesting, steps, string and list sizes) stops a template that would exhaust memory,
//! stack or time, leaving the process able to render the next chart.

use emco_helm::archive::write_tgz;
use emco_helm::render::{Release, RenderError, render_chart};
use proptest::prelude::*;
use serde_json::{Value as Json, json};

fn release() -> Release {
    Release {
        name: "r1".into(),
        namespace: "default".into(),
    }
}

/// Renders a chart made of `files` (paths below the chart folder) with `values`.
fn render(files: &[(&str, &str)], values: &Json) -> Result<usize, String> {
    let mut all: Vec<(String, Vec<u8>)> = vec![(
        "c/Chart.yaml".into(),
        b"apiVersion: v2\nname: c\nversion: 0.1.0\n".to_vec(),
    )];
    all.extend(
        files
            .iter()
            .map(|(path, text)| (format!("c/{path}"), text.as_bytes().to_vec())),
    );
    let borrowed: Vec<(&str, &[u8])> = all.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    let chart = emco_helm::load_archive(&write_tgz(&borrowed)).map_err(|err| err.to_string())?;
    match render_chart(&chart, values, &release()) {
        Ok(manifests) => Ok(manifests.len()),
        Err(RenderError::Thread(why)) => panic!("the renderer died: {why}"),
        Err(err) => Err(err.to_string()),
    }
}

fn template(text: &str) -> Result<usize, String> {
    render(&[("templates/a.yaml", text)], &json!({}))
}

#[test]
fn each_bound_stops_a_hostile_template_with_a_clear_error() {
    let cases: &[(&str, &str)] = &[
        ("{{ indent 9223372036854775807 \"x\" }}", "indent"),
        ("{{ repeat 1000000000 \"x\" }}", "repeat"),
        ("{{ until 1000000000000 }}", "until"),
        ("{{ printf \"%*d\" 1000000000 1 }}", ""),
        (
            "{{ define \"a\" }}{{ template \"a\" . }}{{ end }}{{ template \"a\" . }}",
            "depth",
        ),
        (
            "{{ define \"a\" }}{{ include \"a\" . }}{{ end }}{{ include \"a\" . }}",
            "depth",
        ),
        ("{{ tpl \"{{ tpl .Values.t . }}\" . }}", ""),
        (
            "{{ range $i := until 1000000 }}{{ range $j := until 1000000 }}{{ end }}{{ end }}",
            "steps",
        ),
        (
            "{{ $d := dict }}{{ $_ := set $d \"self\" $d }}{{ toYaml $d }}{{ toJson $d }}",
            "",
        ),
    ];
    for (text, _) in cases {
        // Each fails cleanly (or renders within bounds) and the next chart still renders.
        let outcome = template(text);
        assert!(outcome.is_err() || outcome.is_ok(), "{text}");
        assert_eq!(
            template("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after\n"),
            Ok(1),
            "rendering after {text}"
        );
    }
    for (text, word) in cases.iter().filter(|(_, word)| !word.is_empty()) {
        let err = template(text).expect_err(text);
        assert!(err.contains(word), "{text}: {err}");
    }
    let deep_parens = format!("{{{{ {}1{} }}}}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(template(&deep_parens).is_err());
    let deep_ifs = format!("{}x{}", "{{ if true }}".repeat(5_000), "{{ end }}".repeat(5_000));
    assert!(template(&deep_ifs).is_err());
    // Deeper than any walk over values may go (values reach emco through YAML and JSON readers that stop at
    // 1,000 and 128 levels; this one is built directly).
    let deep_values = (0..1_500).fold(json!(1), |inner, _| json!({ "a": inner }));
    let outcome = render(&[("templates/a.yaml", "{{ toYaml .Values }}")], &deep_values);
    assert!(outcome.is_err(), "{outcome:?}");
}

const ACTIONS: &[&str] = &[
    "{{ .Values.a }}",
    "{{ .Values.a.b.c }}",
    "{{ $x := .Values }}{{ $x.a }}",
    "{{ if .Values.a }}a{{ else }}b{{ end }}",
    "{{ range $k, $v := .Values }}{{ $k }}={{ $v }}{{ end }}",
    "{{ with .Values.list }}{{ index . 0 }}{{ end }}",
    "{{ include \"h\" . }}",
    "{{ tpl \"{{ .Values.a }}\" . }}",
    "{{ toYaml .Values | nindent 2 }}",
    "{{ .Values | toJson | fromJson | toYaml }}",
    "{{ printf \"%s-%d-%v\" .Values.a 3 .Values.list }}",
    "{{ default \"x\" .Values.missing | quote }}",
    "{{ merge (dict \"a\" 1) .Values | keys | sortAlpha | join \",\" }}",
    "{{ required \"need a\" .Values.a }}",
    "{{ semverCompare \">=1.2\" \"1.3.0\" }}",
    "{{ b64enc (toString .Values.a) | b64dec }}",
    "{{ regexReplaceAll \"(a+)\" (toString .Values.a) \"${1}x\" }}",
    "{{ .Files.Get \"x\" }}{{ range $p, $_ := .Files.Glob \"**\" }}{{ $p }}{{ end }}",
    "{{ .Capabilities.APIVersions.Has \"v1\" }}",
    "{{ add .Values.n 1 }}",
    "{{ eq .Values.n 1 }}",
    "{{ len .Values.list }}",
    "{{ trunc 3 .Values.a }}",
    "{{- /* c */ -}}",
    "{{ fail \"stop\" }}",
    "{{",
    "}}",
    "{{ end }}",
    "{{ range }}",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    "---\n",
    ": :\n- [\n",
];

fn values() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i32>().prop_map(Json::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Json::from),
        "[a-z{}%.$ ]{0,8}".prop_map(Json::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::from),
            prop::collection::btree_map("[a-z]{1,3}|a|b|c|n|list", inner, 0..5)
                .prop_map(|map| Json::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn random_templates_and_values_never_panic(
        picks in prop::collection::vec(0..ACTIONS.len(), 0..12),
        helper in prop::collection::vec(0..ACTIONS.len(), 0..4),
        values in values(),
    ) {
        let text: String = picks.iter().map(|&i| ACTIONS[i]).collect();
        let helper: String = format!(
            "{{{{ define \"h\" }}}}{}{{{{ end }}}}",
            helper.iter().map(|&i| ACTIONS[i]).collect::<String>()
        );
        let values = match values { Json::Object(_) => values, other => json!({ "a": other }) };
        let _ = render(&[("templates/a.yaml", &text), ("templates/_h.tpl", &helper), ("x", "file")], &values);
    }

    #[test]
    fn random_archives_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = emco_helm::load_archive(&bytes);
    }

    #[test]
    fn random_chart_files_never_panic(
        files in prop::collection::vec(("(Chart\\.yaml|values\\.yaml|values\\.schema\\.json|\\.helmignore|requirements\\.yaml|charts/s/Chart\\.yaml|crds/x\\.yaml|templates/t\\.yaml)", "[ -~\n]{0,64}"), 0..6),
    ) {
        let mut all: Vec<(String, Vec<u8>)> = Vec::new();
        for (path, text) in &files {
            all.push((format!("c/{path}"), text.as_bytes().to_vec()));
        }
        let borrowed: Vec<(&str, &[u8])> = all.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
        if let Ok(chart) = emco_helm::load_archive(&write_tgz(&borrowed))
            && let Err(RenderError::Thread(why)) = render_chart(&chart, &json!({}), &release())
        {
            panic!("the renderer died: {why}");
        }
    }
}
