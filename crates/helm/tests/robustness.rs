//! Hostile charts: whatever a chart archive holds — random bytes, random files, templates assembled from random
//! actions and functions, random values — rendering answers `Ok` or a clear error and never panics, and each bound
//! of the renderer (output size, nesting, steps, string and list sizes) stops a template that would exhaust memory,
//! stack or time, leaving the process able to render the next chart.

use std::time::{Duration, Instant};

use emco_helm::archive::write_tgz;
use emco_helm::gotemplate::Limit;
use emco_helm::render::{Release, RenderError, RenderLimits, render_chart, render_chart_within};
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
    render_within(files, values, RenderLimits::default()).map_err(|err| err.to_string())
}

/// [`render`] within `bounds`, answering the renderer's error itself.
fn render_within(files: &[(&str, &str)], values: &Json, bounds: RenderLimits) -> Result<usize, RenderError> {
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
    let chart = emco_helm::load_archive(&write_tgz(&borrowed)).map_err(RenderError::Chart)?;
    match render_chart_within(
        &chart,
        values,
        &release(),
        &emco_helm::charts::Capabilities::default(),
        bounds,
    ) {
        Ok(manifests) => Ok(manifests.len()),
        Err(RenderError::Thread(why)) => panic!("the renderer died: {why}"),
        Err(err) => Err(err),
    }
}

/// The bound a render stopped at, with its file and line, or a panic naming what happened instead.
#[track_caller]
fn limit_of(outcome: Result<usize, RenderError>) -> (String, usize, Limit) {
    match outcome {
        Err(RenderError::Limit(hit)) => (hit.file, hit.line, hit.limit),
        other => panic!("expected a limit error, got {other:?}"),
    }
}

#[test]
fn bombs_stop_at_a_named_limit_with_their_file_and_line() {
    let bombs: &[(&str, Json, Limit)] = &[
        (
            "a: 1\n\n{{ indent 9223372036854775807 \"x\" }}",
            json!({}),
            Limit::TextSize(32 << 20),
        ),
        (
            "a: 1\n\n{{ repeat 1000000000 \"x\" }}",
            json!({}),
            Limit::TextSize(32 << 20),
        ),
        (
            "a: 1\n\n{{ tpl .Values.t . }}",
            json!({"t": "{{ tpl .Values.t . }}"}),
            Limit::Depth(100),
        ),
    ];
    for (text, values, limit) in bombs {
        let started = Instant::now();
        let (file, line, hit) = limit_of(render_within(
            &[("templates/bomb.yaml", text)],
            values,
            RenderLimits::default(),
        ));
        assert_eq!(
            (file.as_str(), line, hit),
            ("c/templates/bomb.yaml", 3, *limit),
            "{text}"
        );
        // Refused before the work, not after it.
        assert!(started.elapsed() < Duration::from_secs(30), "{text}");
    }
    let message = render(&[("templates/bomb.yaml", bombs[1].0)], &json!({})).unwrap_err();
    assert_eq!(
        message,
        "c/templates/bomb.yaml:3: rendering exceeded the size limit of 32 MiB for one function's result \
         (at <repeat 1000000000 \"x\">)"
    );
}

#[test]
fn the_output_budget_spans_every_template_of_the_chart() {
    // Two templates of 3 MiB each: each fits a 4 MiB budget alone, together they do not.
    let big = "{{ repeat 3145728 \"x\" | printf \"# %s\" }}";
    let bounds = RenderLimits {
        max_output_bytes: 4 << 20,
        ..RenderLimits::default()
    };
    assert_eq!(
        render_within(&[("templates/a.yaml", big)], &json!({}), bounds),
        Ok(0)
    );
    let (file, line, limit) = limit_of(render_within(
        &[("templates/a.yaml", big), ("templates/b.yaml", big)],
        &json!({}),
        bounds,
    ));
    assert_eq!(limit, Limit::Output(4 << 20));
    assert!(file.ends_with(".yaml") && line == 1, "{file}:{line}");
    let message = render_within(
        &[("templates/a.yaml", big), ("templates/b.yaml", big)],
        &json!({}),
        bounds,
    )
    .unwrap_err()
    .to_string();
    assert!(
        message.contains(": rendering exceeded the output limit of 4 MiB"),
        "{message}"
    );
}

#[test]
fn the_time_budget_stops_a_slow_template_and_names_it() {
    let slow = "x: 1\n{{ range $i := until 100000 }}{{ range $j := until 100000 }}{{ $j }}{{ end }}{{ end }}";
    let bounds = RenderLimits {
        timeout: Duration::from_millis(300),
        ..RenderLimits::default()
    };
    let started = Instant::now();
    let (file, line, limit) = limit_of(render_within(
        &[("templates/slow.yaml", slow)],
        &json!({}),
        bounds,
    ));
    assert_eq!(
        (file.as_str(), line, limit),
        (
            "c/templates/slow.yaml",
            2,
            Limit::Time(Duration::from_millis(300))
        )
    );
    // Stopped at the deadline, not at the step limit (10⁸ steps take far longer than this bound).
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let message = render_within(&[("templates/slow.yaml", slow)], &json!({}), bounds)
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("c/templates/slow.yaml:2: rendering exceeded the time limit of 300ms (at <"),
        "{message}"
    );
    // Heavy function calls in a loop are stopped too: the clock is read after every call.
    let heavy = "{{ range until 100000 }}{{ $_ := repeat 10000000 \"x\" }}{{ end }}";
    let (_, _, limit) = limit_of(render_within(
        &[("templates/heavy.yaml", heavy)],
        &json!({}),
        bounds,
    ));
    assert_eq!(limit, Limit::Time(Duration::from_millis(300)));
    // A chart within its budget renders.
    assert_eq!(
        render_within(
            &[(
                "templates/ok.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n"
            )],
            &json!({}),
            bounds
        ),
        Ok(1)
    );
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
            "nesting limit of 100",
        ),
        (
            "{{ define \"a\" }}{{ include \"a\" . }}{{ end }}{{ include \"a\" . }}",
            "nesting limit of 100",
        ),
        ("{{ tpl \"{{ tpl .Values.t . }}\" . }}", ""),
        (
            "{{ range $i := until 1000000 }}{{ range $j := until 1000000 }}{{ end }}{{ end }}",
            // Whichever comes first: 10⁸ steps or the 10 s budget.
            "evaluation steps|time limit of 10s",
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
        assert!(word.split('|').any(|word| err.contains(word)), "{text}: {err}");
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
