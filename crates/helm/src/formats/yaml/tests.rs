//! Cases checked against Helm v4's own output (`toYaml`, values files read by Helm).

use super::*;
use crate::gotemplate::Map;

fn value(json: &str) -> Value {
    Value::from_json(&serde_json::from_str(json).unwrap_or_default())
}

#[test]
fn writer_matches_helm_on_tricky_values() {
    // testdata/tricky.json went through Helm's `{{ toYaml .Values }}`; tricky.yaml is what Helm printed.
    let input = value(include_str!("../testdata/tricky.json"));
    let expected = include_str!("../testdata/tricky.yaml");
    let ours = marshal(&input).unwrap_or_default();
    for (line, (a, b)) in ours.lines().zip(expected.lines()).enumerate() {
        assert_eq!(a, b, "line {}", line + 1);
    }
    assert_eq!(ours, expected);
}

#[test]
fn reader_matches_helm_on_tricky_values() {
    // testdata/reader.yaml as a chart's values.yaml; reader.json is what Helm's `{{ toJson .Values }}` printed.
    let json = parse(include_str!("../testdata/reader.yaml")).unwrap_or_default();
    let ours = crate::formats::json::marshal(&Value::from_json(&json), true, None).unwrap_or_default();
    assert_eq!(ours, include_str!("../testdata/reader.json"));
}

#[test]
fn reader_documents_and_bounds() {
    let docs = parse_documents("---\n# only a comment\n---\na: 1\n---\n---\n- x\n...\n").unwrap_or_default();
    assert_eq!(docs, vec![serde_json::json!({"a": 1}), serde_json::json!(["x"])]);
    assert_eq!(parse("").ok(), Some(Json::Null));
    let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..12 {
        laughs.push_str(&format!(
            "l{level}: &l{level} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n",
            p = if level == 1 {
                "a".to_string()
            } else {
                format!("l{}", level - 1)
            }
        ));
    }
    assert!(parse(&laughs).is_err_and(|err| err.0.contains("excessive aliasing")));
    let deep = "[".repeat(5000);
    assert!(parse(&deep).is_err());
}

#[test]
fn writers_match_helm_on_more_tricky_values() {
    // testdata/tricky2.json through Helm's `toYaml` and `toYamlPretty`: folding at 80 columns, long keys, key
    // order (v2 and v3 differ), a BOM escaping every character, timestamps and numbers quoted.
    let input = value(include_str!("../testdata/tricky2.json"));
    assert_eq!(
        marshal(&input).unwrap_or_default(),
        include_str!("../testdata/tricky2.yaml")
    );
    assert_eq!(
        marshal_pretty(&input).unwrap_or_default(),
        include_str!("../testdata/tricky2-pretty.yaml")
    );
}

#[test]
fn writer_matches_helm_on_config_files() {
    // Config-file texts (tabs, CRLF, trailing spaces, long lines) as `.Files.AsConfig` feeds them to `toYaml`.
    let input = value(include_str!("../testdata/configs.json"));
    assert_eq!(
        marshal(&input).unwrap_or_default(),
        include_str!("../testdata/configs.yaml")
    );
}

#[test]
fn writer_top_level_values() {
    let cases: [(Value, &str); 7] = [
        (Value::string("hello"), "hello\n"),
        (Value::Nil, "null\n"),
        (Value::Float(1234567.5), "1.2345675e+06\n"),
        (Value::list(vec![]), "[]\n"),
        (Value::Map(Map::new()), "{}\n"),
        (Value::string("a\n\n"), "|+\n  a\n\n"),
        (Value::Bytes(std::rc::Rc::from(&b"hi"[..])), "aGk=\n"),
    ];
    for (input, expected) in cases {
        assert_eq!(marshal(&input).as_deref(), Ok(expected), "{input:?}");
    }
    assert_eq!(
        marshal(&Value::string("a\u{7f}")).map_err(|err| err.0),
        Err("yaml: control characters are not allowed".to_string())
    );
    // NEL is a line break to go-yaml: Helm printed these.
    let nels = Value::list(
        ["a \u{85} b", "a\u{85}\u{85}b", " \u{85}x", "x\u{85}"]
            .into_iter()
            .map(Value::from)
            .collect(),
    );
    assert_eq!(
        marshal(&nels).as_deref(),
        Ok("- a b\n- |-\n  a\n  b\n- ' x'\n- 'x '\n")
    );
    assert_eq!(
        parse("a: \"x\u{85}y\"").ok(),
        Some(serde_json::json!({"a": "x y"}))
    );
}

#[test]
fn pretty_writer_matches_helm_on_tricky_values() {
    // testdata/tricky.json through Helm's `{{ toYamlPretty .Values }}`: go-yaml v3, no folding, tabs in literals.
    let input = value(include_str!("../testdata/tricky.json"));
    assert_eq!(
        marshal_pretty(&input).unwrap_or_default(),
        include_str!("../testdata/tricky-pretty.yaml")
    );
}

#[test]
fn pretty_writer_indents_sequences() {
    let input = value(r#"{"f":[1.5,1e21,1e-7,-0.0],"l":[{"b":1,"a":[]},{}],"n":null}"#);
    assert_eq!(
        marshal_pretty(&input).as_deref(),
        Ok("f:\n  - 1.5\n  - 1e+21\n  - 1e-07\n  - -0\nl:\n  - a: []\n    b: 1\n  - {}\n\"n\": null\n")
    );
}

/// Reads every path listed (one a line) in `$FORMATS_CORPUS_LIST` and writes `marshal(parse(file))` next to the
/// name `$FORMATS_CORPUS_OUT/<n>.yaml` (or the error as `<n>.err`). Run by hand against Helm's output.
#[test]
#[ignore = "corpus comparison, run by hand"]
fn corpus_roundtrip() {
    let (Ok(list), Ok(out)) = (
        std::env::var("FORMATS_CORPUS_LIST"),
        std::env::var("FORMATS_CORPUS_OUT"),
    ) else {
        return;
    };
    let list = std::fs::read_to_string(list).unwrap_or_default();
    for (index, path) in list.lines().enumerate() {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let result = parse(&text).and_then(|mut json| {
            // Helm's coalescing drops null map entries from the chart's values; the probe chart sees the rest.
            prune_nulls(&mut json, 0);
            let value = Value::from_json(&json);
            let value = if value.is_nil() {
                Value::Map(crate::gotemplate::Map::new())
            } else {
                value
            };
            if std::env::var("FORMATS_CORPUS_PRETTY").is_ok() {
                marshal_pretty(&value)
            } else {
                marshal(&value)
            }
        });
        match result {
            Ok(yaml) => std::fs::write(format!("{out}/{index}.yaml"), yaml),
            Err(err) => std::fs::write(format!("{out}/{index}.err"), err.0),
        }
        .unwrap_or_default();
    }
}

fn prune_nulls(json: &mut Json, depth: usize) {
    if depth > 200 {
        return;
    }
    if let Json::Object(map) = json {
        map.retain(|_, value| !value.is_null());
        for value in map.values_mut() {
            prune_nulls(value, depth + 1);
        }
    }
}

/// Prints `toJson` of `parse($FORMATS_YAML_FILE)` (by hand, to compare with Helm's `{{ toJson .Values }}`).
#[test]
#[ignore = "probe, run by hand"]
fn probe_yaml_to_json() {
    let Ok(path) = std::env::var("FORMATS_YAML_FILE") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap_or_default();
    match parse(&text) {
        Ok(json) => println!(
            "JSON:{}",
            crate::formats::json::marshal(&Value::from_json(&json), true, None).unwrap_or_default()
        ),
        Err(err) => println!("ERR:{err}"),
    }
}

/// Prints `marshal_pretty` of the JSON in `$FORMATS_JSON_FILE` (by hand, against Helm's `toYamlPretty`).
#[test]
#[ignore = "probe, run by hand"]
fn probe_pretty() {
    let Ok(path) = std::env::var("FORMATS_JSON_FILE") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap_or_default();
    print!("{}", marshal_pretty(&value(&text)).unwrap_or_default());
}

/// Prints `marshal` of the JSON in `$FORMATS_JSON_FILE` (by hand, against Helm's `toYaml`).
#[test]
#[ignore = "probe, run by hand"]
fn probe_marshal() {
    let Ok(path) = std::env::var("FORMATS_JSON_FILE") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap_or_default();
    print!("{}", marshal(&value(&text)).unwrap_or_default());
}

#[test]
fn reader_takes_a_lone_dash_in_flow_as_go_yaml_does() {
    // Helm printed {"a":["x","-",true]} for `{{ "a: [x, -, y]" | fromYaml | toJson }}`.
    assert_eq!(
        parse("a: [x, -, y]").ok(),
        Some(serde_json::json!({"a": ["x", "-", true]}))
    );
    assert_eq!(
        parse_documents("a: [-]\n---\nb: {c: -}\n").ok(),
        Some(vec![
            serde_json::json!({"a": ["-"]}),
            serde_json::json!({"b": {"c": "-"}})
        ])
    );
}

#[test]
fn writer_refuses_a_shared_value_that_explodes_as_text() {
    let mut value = Value::list(vec![Value::string("x".repeat(100))]);
    for _ in 0..40 {
        value = Value::list(vec![value.clone(), value]);
    }
    assert!(marshal(&value).is_err());
    assert!(crate::formats::json::marshal(&value, true, None).is_err());
    assert!(
        crate::formats::toml::marshal(&Value::Map({
            let map = Map::new();
            map.insert("a", value);
            map
        }))
        .is_err()
    );
}

#[test]
fn deep_values_are_errors_not_stack_overflows() {
    let mut value = Value::from("x");
    for _ in 0..990 {
        value = Value::list(vec![value]);
    }
    assert!(marshal(&value).is_ok());
    assert!(marshal_pretty(&value).is_ok());
    assert!(crate::formats::json::marshal(&value, true, None).is_ok());
    for _ in 0..100 {
        value = Value::list(vec![value]);
    }
    assert!(marshal(&value).is_err());
    let deep = format!("{}{}", "[".repeat(990), "]".repeat(990));
    let _ = parse(&deep);
    let _ = crate::formats::json::unmarshal(&deep);
    let deep_block: String = (0..990).map(|i| format!("{}- \n", "  ".repeat(i))).collect();
    let _ = parse(&deep_block);
}
