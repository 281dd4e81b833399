//! `emcoctl readiness -f FILE`: the health of every Kubernetes object in a YAML (multi-document) or JSON file, by
//! emco-k8s's `assess` rules, as a table or a JSON array of `{"kind","name","namespace","status","message"}`.
//! `List`s (`kind: List` with `items`) expand to their items. No API is needed: the file is what a cluster
//! reported (e.g. `kubectl get deploy,pods -o yaml`).

use std::io::Write;
use std::path::{Path, PathBuf};

use emco_k8s::readiness::{Health, assess};
use serde_json::{Value as Json, json};

/// The largest file read, in bytes: far above any `kubectl get -o yaml` of one namespace, and small enough to parse
/// in memory.
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// The most objects assessed from one file (documents plus `List` items).
pub const MAX_OBJECTS: usize = 100_000;

/// Why a file cannot be assessed. Each names the file, and the document (counted from 1) at fault where there is
/// one.
#[derive(Debug, thiserror::Error)]
pub enum ReadinessError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{path}: {size} bytes is more than the {MAX_FILE_BYTES} bytes emcoctl reads")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// The file is neither YAML nor JSON.
    #[error("{path}: not YAML or JSON: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// One document is not a Kubernetes object.
    #[error("{path}, document {index}: not a Kubernetes object: {message}")]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// 1-based document number.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// More than [`MAX_OBJECTS`] objects.
    #[error("{path}: more than {MAX_OBJECTS} objects")]
    TooMany {
        /// The file.
        path: PathBuf,
    },
    /// The file holds no object at all.
    #[error("{path}: no Kubernetes object in the file")]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// The verdict on one object: a row of the table, an element of the JSON array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `kind`.
    pub kind: String,
    /// `metadata.name` (empty when absent).
    pub name: String,
    /// `metadata.namespace` (empty for cluster-scoped objects or when absent).
    pub namespace: String,
    /// The health.
    pub status: Health,
    /// One line naming kind and name, saying what holds the object up.
    pub message: String,
}

impl Verdict {
    /// `{"kind","name","namespace","status","message"}`.
    #[must_use]
    pub fn to_json(&self) -> Json {
        json!({
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "status": self.status,
            "message": self.message,
        })
    }
}

/// Reads a file of objects ([`parse_objects`]), refusing files over [`MAX_FILE_BYTES`].
///
/// # Errors
/// The file is unreadable, too large, not YAML/JSON, or holds something other than Kubernetes objects.
pub fn read_objects(path: &Path) -> Result<Vec<Json>, ReadinessError> {
    let read_error = |source| ReadinessError::Read {
        path: path.into(),
        source,
    };
    let size = std::fs::metadata(path).map_err(read_error)?.len();
    if size > MAX_FILE_BYTES {
        return Err(ReadinessError::TooLarge {
            path: path.into(),
            size,
        });
    }
    let text = std::fs::read_to_string(path).map_err(read_error)?;
    parse_objects(path, &text)
}

/// The objects of a file's text: a JSON value (an object, a `List`, or an array of objects) or a multi-document
/// YAML stream; empty documents are skipped and each `List` expands to its items. `path` only names the file in
/// errors.
///
/// # Errors
/// The text is neither YAML nor JSON, a document (or a `List` item) is not an object with `apiVersion` and `kind`,
/// there are more than [`MAX_OBJECTS`] objects, or none.
pub fn parse_objects(path: &Path, text: &str) -> Result<Vec<Json>, ReadinessError> {
    let documents: Vec<Json> = match serde_json::from_str::<Json>(text) {
        Ok(Json::Array(items)) => vec![json!({"apiVersion": "v1", "kind": "List", "items": items})],
        Ok(value) => vec![value],
        Err(_) => serde_saphyr::from_multiple(text).map_err(|err| ReadinessError::Syntax {
            path: path.into(),
            message: err.to_string(),
        })?,
    };
    let mut objects = Vec::new();
    for (position, document) in documents.into_iter().enumerate() {
        let index = position + 1;
        let not_an_object = |message: String| ReadinessError::NotAnObject {
            path: path.into(),
            index,
            message,
        };
        if document.is_null() {
            continue;
        }
        check_object(&document).map_err(not_an_object)?;
        if document["kind"] == "List" {
            let Some(items) = document["items"].as_array() else {
                return Err(not_an_object("a List without an items list".into()));
            };
            for (item_position, item) in items.iter().enumerate() {
                check_object(item)
                    .and_then(|()| {
                        if item["kind"] == "List" {
                            Err("a List inside a List".into())
                        } else {
                            Ok(())
                        }
                    })
                    .map_err(|message| not_an_object(format!("item {}: {message}", item_position + 1)))?;
            }
            objects.extend(items.iter().cloned());
        } else {
            objects.push(document);
        }
        if objects.len() > MAX_OBJECTS {
            return Err(ReadinessError::TooMany { path: path.into() });
        }
    }
    if objects.is_empty() {
        return Err(ReadinessError::Empty { path: path.into() });
    }
    Ok(objects)
}

/// Whether a value looks like a Kubernetes object: a map with string `apiVersion` and `kind` and, if any, a map
/// `metadata`.
fn check_object(value: &Json) -> Result<(), String> {
    let Some(map) = value.as_object() else {
        return Err(format!("a {} where an object was expected", type_name(value)));
    };
    for field in ["apiVersion", "kind"] {
        match map.get(field) {
            Some(Json::String(text)) if !text.is_empty() => {}
            Some(_) => return Err(format!("{field} is not a non-empty string")),
            None => return Err(format!("no {field}")),
        }
    }
    match map.get("metadata") {
        None | Some(Json::Object(_)) => Ok(()),
        Some(_) => Err("metadata is not a map".into()),
    }
}

fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "list",
        Json::Object(_) => "map",
    }
}

/// The verdict on each object, in order.
#[must_use]
pub fn verdicts(objects: &[Json]) -> Vec<Verdict> {
    objects
        .iter()
        .map(|object| {
            let text = |value: &Json| value.as_str().unwrap_or_default().to_string();
            let assessment = assess(object);
            Verdict {
                kind: text(&object["kind"]),
                name: text(&object["metadata"]["name"]),
                namespace: text(&object["metadata"]["namespace"]),
                status: assessment.health,
                message: assessment.message,
            }
        })
        .collect()
}

/// Whether every object is Ready.
#[must_use]
pub fn all_ready(verdicts: &[Verdict]) -> bool {
    verdicts.iter().all(|verdict| verdict.status == Health::Ready)
}

/// The word a status shows as.
fn status_word(status: Health) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The verdicts as a table (KIND, NAMESPACE, NAME, STATUS, MESSAGE); on a terminal the status is coloured.
#[must_use]
pub fn table(verdicts: &[Verdict]) -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(["KIND", "NAMESPACE", "NAME", "STATUS", "MESSAGE"]);
    for verdict in verdicts {
        let colour = match verdict.status {
            Health::Ready => comfy_table::Color::Green,
            Health::Failed => comfy_table::Color::Red,
            Health::InProgress | Health::Terminating | Health::Unknown => comfy_table::Color::Yellow,
        };
        table.add_row([
            comfy_table::Cell::new(&verdict.kind),
            comfy_table::Cell::new(&verdict.namespace),
            comfy_table::Cell::new(&verdict.name),
            comfy_table::Cell::new(status_word(verdict.status)).fg(colour),
            comfy_table::Cell::new(&verdict.message),
        ]);
    }
    table
}

/// The verdicts as a pretty JSON array.
#[must_use]
pub fn json_array(verdicts: &[Verdict]) -> String {
    let array = Json::Array(verdicts.iter().map(Verdict::to_json).collect());
    serde_json::to_string_pretty(&array).unwrap_or_default()
}

/// How `emcoctl readiness` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A comfy-table table.
    Table,
    /// A JSON array.
    Json,
}

/// Reads `path`, prints the verdicts to `out` and answers whether every object is Ready (exit 0) or not (exit 1).
/// A closed output (`| head`) only ends the printing.
///
/// # Errors
/// The file cannot be used ([`read_objects`]): exit 2.
pub fn run(path: &Path, format: Format, out: &mut impl Write) -> Result<bool, ReadinessError> {
    let verdicts = verdicts(&read_objects(path)?);
    let text = match format {
        Format::Table => table(&verdicts).to_string(),
        Format::Json => json_array(&verdicts),
    };
    let _ = writeln!(out, "{text}");
    Ok(all_ready(&verdicts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Json>, ReadinessError> {
        parse_objects(Path::new("objects.yaml"), text)
    }

    const MIXED: &str = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: app}
---
---
apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: firewall, namespace: app}
    spec: {replicas: 3}
    status: {replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}
  - apiVersion: v1
    kind: Namespace
    metadata: {name: app}
    status: {phase: Active}
";

    #[test]
    fn documents_and_list_items_are_assessed_in_order() {
        let verdicts = verdicts(&parse(MIXED).unwrap());
        let rows: Vec<_> = verdicts
            .iter()
            .map(|v| (v.kind.as_str(), v.name.as_str(), v.namespace.as_str(), v.status))
            .collect();
        assert_eq!(
            rows,
            [
                ("ConfigMap", "cfg", "app", Health::Ready),
                ("Deployment", "firewall", "app", Health::InProgress),
                ("Namespace", "app", "", Health::Ready),
            ]
        );
        assert_eq!(
            verdicts[1].message,
            "Deployment firewall: 1 of 3 updated replicas available"
        );
        assert!(!all_ready(&verdicts));
        assert!(all_ready(&verdicts[..1]));

        let array: Json = serde_json::from_str(&json_array(&verdicts)).unwrap();
        assert_eq!(
            array[1],
            json!({"kind": "Deployment", "name": "firewall", "namespace": "app", "status": "InProgress",
                   "message": "Deployment firewall: 1 of 3 updated replicas available"})
        );
        let table = table(&verdicts).to_string();
        assert!(
            table.contains("KIND") && table.contains("InProgress") && table.contains("firewall"),
            "{table}"
        );
    }

    #[test]
    fn json_files_are_read_as_objects_lists_or_arrays() {
        let list = r#"{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": "p"}, "status": {"phase": "Succeeded"}}]}"#;
        assert_eq!(parse(list).unwrap().len(), 1);
        let array = r#"[{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}},
                        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"}}]"#;
        let verdicts = verdicts(&parse(array).unwrap());
        assert_eq!(verdicts.len(), 2);
        assert!(all_ready(&verdicts));
    }

    #[test]
    fn what_is_not_a_kubernetes_object_is_named() {
        let cases = [
            (
                "apiVersion: v1\nkind: ConfigMap\n---\njust a string\n",
                "document 2: not a Kubernetes object: a string",
            ),
            (
                "kind: ConfigMap\nmetadata: {name: x}\n",
                "document 1: not a Kubernetes object: no apiVersion",
            ),
            (
                "apiVersion: v1\nkind: 3\n",
                "document 1: not a Kubernetes object: kind is not a non-empty string",
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata: [1]\n",
                "document 1: not a Kubernetes object: metadata is not a map",
            ),
            (
                "apiVersion: v1\nkind: List\n",
                "document 1: not a Kubernetes object: a List without an items list",
            ),
            (
                "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: List, items: []}]\n",
                "document 1: not a Kubernetes object: item 1: a List inside a List",
            ),
            ("{a: [unclosed\n", "objects.yaml: not YAML or JSON"),
            ("---\n---\n", "objects.yaml: no Kubernetes object"),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn deep_documents_are_refused_not_followed() {
        for text in [
            "[".repeat(100_000),
            "{\"a\":".repeat(100_000),
            "a:\n".to_string()
                + &(1..2_000)
                    .map(|depth| format!("{}b:\n", " ".repeat(depth)))
                    .collect::<String>(),
        ] {
            let err = parse(&text).unwrap_err();
            assert!(matches!(err, ReadinessError::Syntax { .. }), "{err}");
        }
    }

    #[test]
    fn too_many_objects_are_refused() {
        let item = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let list = json!({"apiVersion": "v1", "kind": "List", "items": vec![item; MAX_OBJECTS + 1]});
        let err = parse(&list.to_string()).unwrap_err();
        assert!(matches!(err, ReadinessError::TooMany { .. }), "{err}");
    }

    #[test]
    fn run_reads_a_file_and_answers_whether_all_is_ready() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("objects.yaml");
        std::fs::write(&path, MIXED).unwrap();
        let mut out = Vec::new();
        assert!(!run(&path, Format::Json, &mut out).unwrap());
        let printed: Json = serde_json::from_slice(&out).unwrap();
        assert_eq!(printed.as_array().unwrap().len(), 3);

        let missing = dir.path().join("missing.yaml");
        let err = run(&missing, Format::Table, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().starts_with("cannot read "), "{err}");
    }
}
