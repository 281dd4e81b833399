//! emcoctl resource files: a multi-document YAML stream, optionally a Go template rendered with a values file
//! first. Each document names the collection it is posted to (`resourceContext.anchor`) and carries `metadata`,
//! `spec`, an optional `clusterLabel`, and `file` / `files` to upload as multipart parts.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

/// Why a resource file cannot be used. Each names the file, and the document (counted from 1) where one is at fault.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// The file (or the values file) cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The values file is not a YAML map.
    #[error("{path}: values must be a YAML map: {message}")]
    Values {
        /// The values file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The template does not parse or does not render with the values.
    #[error("{path}: template: {message}")]
    Template {
        /// The resource file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The (rendered) file is not YAML.
    #[error("{path}: not YAML: {message}")]
    Yaml {
        /// The resource file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// One document lacks or misuses a field.
    #[error("{path}, document {index}: {message}")]
    Document {
        /// The resource file.
        path: PathBuf,
        /// 1-based.
        index: usize,
        /// What is wrong.
        message: String,
    },
}

/// One document of a resource file.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// 1-based position in the file.
    pub index: usize,
    /// The collection path under `/v2`, without slashes at either end (e.g. `projects/p/composite-apps`).
    pub anchor: String,
    /// `metadata` (null when absent).
    pub metadata: Json,
    /// `spec` (null when absent).
    pub spec: Json,
    /// Top-level `clusterLabel`, for cluster labels.
    pub cluster_label: Option<String>,
    /// Files to upload: `file` (one part named `file`) or `files` (parts named `files`), resolved against the
    /// resource file's directory.
    pub files: Vec<PathBuf>,
    /// Whether the parts are named `files` (from the `files` list) rather than `file`.
    pub many_files: bool,
}

impl Document {
    /// `metadata.name`, if any.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.metadata["name"].as_str()
    }

    /// The JSON body EMCO's emcoctl sends: `metadata`, `clusterLabel` and `spec`, empty ones dropped.
    #[must_use]
    pub fn body(&self) -> Json {
        let mut body = Map::new();
        if !is_empty(&self.metadata) {
            body.insert("metadata".into(), self.metadata.clone());
        }
        if let Some(label) = &self.cluster_label {
            body.insert("clusterLabel".into(), Json::String(label.clone()));
        }
        if !is_empty(&self.spec) {
            body.insert("spec".into(), self.spec.clone());
        }
        Json::Object(body)
    }
}

fn is_empty(value: &Json) -> bool {
    match value {
        Json::Null => true,
        Json::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// Reads a values file (YAML map) for templating.
pub fn read_values(path: &Path) -> Result<Json, DocumentError> {
    let text = std::fs::read_to_string(path).map_err(|source| DocumentError::Read {
        path: path.into(),
        source,
    })?;
    let values: Json = serde_saphyr::from_str(&text).map_err(|err| DocumentError::Values {
        path: path.into(),
        message: err.to_string(),
    })?;
    match values {
        Json::Object(_) => Ok(values),
        Json::Null => Ok(Json::Object(Map::new())),
        other => Err(DocumentError::Values {
            path: path.into(),
            message: format!("found {}", kind_of(&other)),
        }),
    }
}

fn kind_of(value: &Json) -> &'static str {
    match value {
        Json::Null => "nothing",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a map",
    }
}

/// Reads a resource file, rendering it with `values` first when given.
pub fn read_documents(path: &Path, values: Option<&Json>) -> Result<Vec<Document>, DocumentError> {
    let text = std::fs::read_to_string(path).map_err(|source| DocumentError::Read {
        path: path.into(),
        source,
    })?;
    let text = match values {
        Some(values) => render(path, &text, values)?,
        None => text,
    };
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    parse_documents(path, base, &text)
}

fn render(path: &Path, text: &str, values: &Json) -> Result<String, DocumentError> {
    use emco_helm::gotemplate::{MapScope, Templates, Value};
    let template_error = |message: String| DocumentError::Template {
        path: path.into(),
        message,
    };
    let _maps = MapScope::open();
    let name = path.display().to_string();
    let mut templates = Templates::new(emco_helm::engine::helm_funcs());
    templates
        .parse(&name, text)
        .map_err(|err| template_error(err.to_string()))?;
    let output = templates
        .execute(&name, &Value::from_json(values))
        .map_err(|err| template_error(err.to_string()))?;
    // As Helm does, a missing value prints nothing.
    Ok(output.replace("<no value>", ""))
}

/// `text` with each tab that leads a line inside a flow collection (`[ … ]`, `{ … }`) replaced by spaces, or
/// `None` when it has none. A bracket opens a collection where a value starts (after `: `, `- `, a line's
/// indentation, or inside another collection), outside quotes and comments.
fn flow_tabs_as_spaces(text: &str) -> Option<String> {
    let mut depth = 0usize;
    let mut changed = false;
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let body = if depth > 0 {
            let trimmed = line.trim_start_matches([' ', '\t']);
            let lead = &line[..line.len() - trimmed.len()];
            if lead.contains('\t') {
                changed = true;
                out.push_str(&lead.replace('\t', "        "));
                trimmed
            } else {
                line
            }
        } else {
            line
        };
        out.push_str(body);
        let mut quote: Option<char> = None;
        let mut previous = ' ';
        for ch in line.chars() {
            match (quote, ch) {
                (Some(open), _) if ch == open => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') if depth > 0 || matches!(previous, ' ' | '\t' | ':') => quote = Some(ch),
                (None, '#') if matches!(previous, ' ' | '\t') => break,
                (None, '[' | '{') if depth > 0 || matches!(previous, ' ' | '\t' | ':' | '-') => depth += 1,
                (None, ']' | '}') if depth > 0 => depth -= 1,
                _ => {}
            }
            previous = ch;
        }
    }
    changed.then_some(out)
}

/// Parses the documents of a (rendered) resource file; `base` resolves relative `file`/`files` paths.
pub fn parse_documents(path: &Path, base: &Path, text: &str) -> Result<Vec<Document>, DocumentError> {
    let raw: Vec<Json> = match serde_saphyr::from_multiple(text) {
        Ok(raw) => raw,
        Err(err) => {
            // go-yaml, which EMCO's emcoctl reads files with, takes tabs anywhere inside a flow collection (EMCO's
            // own examples indent `patchJson: [ … ]` with them); read such a file again with those tabs as spaces.
            let retried =
                flow_tabs_as_spaces(text).and_then(|spaced| serde_saphyr::from_multiple(&spaced).ok());
            retried.ok_or_else(|| DocumentError::Yaml {
                path: path.into(),
                message: err.to_string(),
            })?
        }
    };
    let mut documents = Vec::new();
    for (position, value) in raw.into_iter().enumerate() {
        let index = position + 1;
        let fail = |message: String| DocumentError::Document {
            path: path.into(),
            index,
            message,
        };
        if value.is_null() {
            continue;
        }
        let Json::Object(map) = value else {
            return Err(fail(format!(
                "a document must be a map, found {}",
                kind_of(&value)
            )));
        };
        let anchor = map
            .get("resourceContext")
            .and_then(|context| context.get("anchor"))
            .and_then(Json::as_str)
            .map(|anchor| anchor.trim_matches('/').to_string())
            .filter(|anchor| !anchor.is_empty())
            .ok_or_else(|| fail("resourceContext.anchor is missing (the collection to post to, e.g. projects/p1/composite-apps)".into()))?;
        let metadata = map.get("metadata").cloned().unwrap_or(Json::Null);
        if !(metadata.is_null() || metadata.is_object()) {
            return Err(fail(format!(
                "metadata must be a map, found {}",
                kind_of(&metadata)
            )));
        }
        let spec = map.get("spec").cloned().unwrap_or(Json::Null);
        let cluster_label = match map.get("clusterLabel") {
            None | Some(Json::Null) => None,
            Some(Json::String(label)) => Some(label.clone()),
            Some(other) => {
                return Err(fail(format!(
                    "clusterLabel must be a string, found {}",
                    kind_of(other)
                )));
            }
        };
        let (files, many_files) = match (map.get("file"), map.get("files")) {
            (Some(_), Some(_)) => return Err(fail("give either file or files, not both".into())),
            (Some(Json::String(file)), None) => (vec![base.join(file)], false),
            (Some(other), None) => {
                return Err(fail(format!("file must be a path, found {}", kind_of(other))));
            }
            (None, Some(Json::Array(list))) => {
                let files = list
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map(|file| base.join(file))
                            .ok_or_else(|| fail("files must be a list of paths".into()))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                (files, true)
            }
            (None, Some(other)) => {
                return Err(fail(format!(
                    "files must be a list of paths, found {}",
                    kind_of(other)
                )));
            }
            (None, None) => (Vec::new(), false),
        };
        documents.push(Document {
            index,
            anchor,
            metadata,
            spec,
            cluster_label,
            files,
            many_files,
        });
    }
    Ok(documents)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Result<Vec<Document>, DocumentError> {
        parse_documents(Path::new("vfw.yaml"), Path::new("/examples"), text)
    }

    #[test]
    fn tabs_inside_a_flow_collection_read_as_go_yaml_reads_them() {
        let text = "resourceContext: {anchor: projects}\nspec:\n  patchJson: [\n    {\n\t    \"op\": \"replace\", # a tab-indented line\n\t    \"value\": 1\n\t  }\n\t]\n  next: \"[\"\n";
        let docs = parse_documents(Path::new("f.yaml"), Path::new("/"), text).unwrap();
        assert_eq!(
            docs[0].body()["spec"]["patchJson"],
            serde_json::json!([{"op": "replace", "value": 1}])
        );
        assert_eq!(docs[0].body()["spec"]["next"], "[");
        // A tab that indents block content is still an error, as in go-yaml.
        let err = parse_documents(
            Path::new("f.yaml"),
            Path::new("/"),
            "resourceContext: {anchor: p}\na:\n\tb: 1\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("tab"), "{err}");
    }

    #[test]
    fn documents_carry_anchor_body_and_files() {
        let docs = parse(
            "version: emco/v2\nresourceContext:\n  anchor: /projects/\nmetadata:\n  name: p1\n---\n\
             resourceContext: {anchor: projects/p1/composite-apps/ca/v1/apps}\nmetadata: {name: fw}\nfile: charts/fw.tgz\n---\n\
             resourceContext: {anchor: cluster-providers/cp/clusters/c1/labels}\nclusterLabel: edge\n",
        )
        .unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(
            (docs[0].anchor.as_str(), docs[0].name()),
            ("projects", Some("p1"))
        );
        assert_eq!(docs[0].body(), json!({"metadata": {"name": "p1"}}));
        assert_eq!(docs[1].files, vec![PathBuf::from("/examples/charts/fw.tgz")]);
        assert!(!docs[1].many_files);
        assert_eq!(docs[2].body(), json!({"clusterLabel": "edge"}));
    }

    #[test]
    fn mistakes_name_the_document() {
        let missing_anchor =
            parse("resourceContext: {anchor: projects}\n---\nmetadata: {name: x}\n").unwrap_err();
        assert_eq!(
            missing_anchor.to_string(),
            "vfw.yaml, document 2: resourceContext.anchor is missing (the collection to post to, e.g. projects/p1/composite-apps)"
        );
        let both = parse("resourceContext: {anchor: a}\nfile: x\nfiles: [y]\n").unwrap_err();
        assert!(
            both.to_string().contains("document 1: give either file or files"),
            "{both}"
        );
        let broken = parse("resourceContext: {anchor: a\n").unwrap_err();
        assert!(matches!(broken, DocumentError::Yaml { .. }), "{broken}");
        let list = parse("- a\n- b\n").unwrap_err();
        assert!(
            list.to_string()
                .contains("a document must be a map, found a list"),
            "{list}"
        );
    }

    #[test]
    fn values_fill_the_template() {
        let dir = std::env::temp_dir().join(format!("emcoctl-docs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.yaml");
        std::fs::write(
            &file,
            "resourceContext: {anchor: projects}\nmetadata:\n  name: {{ .ProjectName }}\n",
        )
        .unwrap();
        let docs = read_documents(&file, Some(&json!({"ProjectName": "proj1"}))).unwrap();
        assert_eq!(docs[0].name(), Some("proj1"));
        std::fs::write(&file, "metadata: {{ .Broken \n").unwrap();
        let err = read_documents(&file, Some(&json!({}))).unwrap_err();
        assert!(matches!(err, DocumentError::Template { .. }), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
