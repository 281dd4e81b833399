//! Cases checked against Helm v4's own output (`toYaml`, values files read by Helm).

use super::*;

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
            marshal(&value)
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
