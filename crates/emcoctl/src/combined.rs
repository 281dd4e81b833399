//! `emcoctl get combined-status <dig…>`: a DIG's combined status (issue #17, seed 003) as one table per object and
//! status collector, its columns the collector's, numbers as the API writes them (`2`, `2.5`), objects and lists as
//! JSON.

use serde_json::Value as Json;

use crate::client::EmcoClient;
use crate::status::{StatusError, dig_path, get_json};

/// The longest cell shown (characters; longer ones end with `…`).
pub const MAX_CELL_CHARS: usize = 60;

/// GETs `{dig}/combined-status[?{query}]`.
pub async fn fetch(client: &EmcoClient, dig: &str, query: &str) -> Result<Json, StatusError> {
    get_json(client, &format!("{}/combined-status", dig_path(dig)), query).await
}

/// A cell as text: `Number` its decimal string, `String` itself, `Bool` `true`/`false`, `Object`/`Array` JSON,
/// `Null` empty.
#[must_use]
pub fn cell_text(cell: &Json) -> String {
    let text = match cell["type"].as_str() {
        Some("Number") => cell["float"].as_str().unwrap_or_default().to_string(),
        Some("String") => cell["string"].as_str().unwrap_or_default().to_string(),
        Some("Bool") => cell["bool"].to_string(),
        Some("Object") => cell["object"].to_string(),
        Some("Array") => cell["array"].to_string(),
        _ => String::new(),
    };
    if text.chars().count() > MAX_CELL_CHARS {
        let cut: String = text.chars().take(MAX_CELL_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// One table per (object, collector): a title (`web · Deployment web · pod-phase`) and the table; evaluation
/// errors, when there were some, follow the title (`3 evaluation errors, first: …`).
#[must_use]
pub fn tables(answer: &Json) -> Vec<(String, comfy_table::Table)> {
    let mut found = Vec::new();
    for object in answer.as_array().into_iter().flatten() {
        let app = object["app"].as_str().unwrap_or_default();
        let kind = object["resource"]["GVK"]["Kind"].as_str().unwrap_or_default();
        let name = object["resource"]["name"].as_str().unwrap_or_default();
        for result in object["results"].as_array().into_iter().flatten() {
            let mut title = format!(
                "{app} · {kind} {name} · {}",
                result["name"].as_str().unwrap_or_default()
            );
            if let Some(errors) = result["evaluationErrors"].as_u64() {
                let first = &result["errors"][0];
                title.push_str(&format!(
                    " ({errors} evaluation errors; first on {}: {}: {})",
                    first["cluster"].as_str().unwrap_or_default(),
                    first["field"].as_str().unwrap_or_default(),
                    first["message"].as_str().unwrap_or_default()
                ));
            }
            let mut table = comfy_table::Table::new();
            table.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
            table.set_header(
                result["columnNames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|name| name.as_str().unwrap_or_default().to_uppercase()),
            );
            for row in result["rows"].as_array().into_iter().flatten() {
                table.add_row(row["columns"].as_array().into_iter().flatten().map(cell_text));
            }
            found.push((title, table));
        }
    }
    found
}

/// The answer as text: each table under its title, a blank line between them; `no combined status` when empty.
#[must_use]
pub fn render(dig: &str, answer: &Json) -> String {
    let tables = tables(answer);
    if tables.is_empty() {
        return format!(
            "{}: no combined status (no status collection intent selects an instantiated object)\n",
            dig_path(dig)
        );
    }
    tables
        .iter()
        .map(|(title, table)| format!("{title}\n{table}\n"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_histogram_prints_as_a_table_under_its_title() {
        let answer = serde_json::json!([{
            "app": "web",
            "resource": {"GVK": {"Group": "", "Version": "v1", "Kind": "Pod"}, "name": "probe"},
            "results": [{"name": "pod-phase", "columnNames": ["phase", "count"], "rows": [
                {"columns": [{"type": "String", "string": "Failed"}, {"type": "Number", "float": "1"}]},
                {"columns": [{"type": "String", "string": "Running"}, {"type": "Number", "float": "4"}]}]}]
        }]);
        let text = render(
            "projects/p/composite-apps/ca/v1/deployment-intent-groups/d",
            &answer,
        );
        assert!(text.starts_with("web · Pod probe · pod-phase\n"), "{text}");
        assert!(text.contains("PHASE") && text.contains("COUNT"), "{text}");
        let running = text.lines().find(|line| line.contains("Running")).unwrap();
        assert!(running.contains('4'), "{text}");
        assert!(render("d", &serde_json::json!([])).contains("no combined status"));
    }

    #[test]
    fn cells_show_their_values() {
        assert_eq!(
            cell_text(&serde_json::json!({"type": "Number", "float": "2.5"})),
            "2.5"
        );
        assert_eq!(
            cell_text(&serde_json::json!({"type": "Bool", "bool": false})),
            "false"
        );
        assert_eq!(cell_text(&serde_json::json!({"type": "Null"})), "");
        assert_eq!(
            cell_text(&serde_json::json!({"type": "Object", "object": {"a": 1}})),
            "{\"a\":1}"
        );
        let long = cell_text(&serde_json::json!({"type": "String", "string": "x".repeat(100)}));
        assert_eq!(long.chars().count(), MAX_CELL_CHARS);
    }
}
