//! `Chart.yaml` as Helm's `chart.Metadata`: decoding with Go's `encoding/json` rules after `sigs.k8s.io/yaml`
//! (field names matched case-insensitively, scalars turned into text for string fields), `Validate()` with Helm's
//! messages and string sanitising, and the `.Chart` map templates see (`structToMap`: Go field names).

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::ChartError;
use crate::gotemplate::{Map, Value};

/// A chart maintainer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Maintainer {
    /// `name`.
    pub name: String,
    /// `email`.
    pub email: String,
    /// `url`.
    pub url: String,
}

/// One `dependencies` entry of `Chart.yaml` (or `requirements.yaml`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dependency {
    /// `name` (the alias once dependencies are processed).
    pub name: String,
    /// `version`: a semver range the subchart's version must satisfy.
    pub version: String,
    /// `repository`.
    pub repository: String,
    /// `condition`: comma-separated value paths.
    pub condition: String,
    /// `tags`.
    pub tags: Vec<String>,
    /// `enabled` (recomputed by dependency processing).
    pub enabled: bool,
    /// `import-values`: strings or `{child, parent}` maps, kept as decoded.
    pub import_values: Vec<Json>,
    /// `alias`.
    pub alias: String,
}

/// `Chart.yaml`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    /// `name`.
    pub name: String,
    /// `home`.
    pub home: String,
    /// `sources`.
    pub sources: Vec<String>,
    /// `version`.
    pub version: String,
    /// `description`.
    pub description: String,
    /// `keywords`.
    pub keywords: Vec<String>,
    /// `maintainers` (`None` entries are `null` nodes, which validation refuses).
    pub maintainers: Vec<Option<Maintainer>>,
    /// `icon`.
    pub icon: String,
    /// `apiVersion` (`v1` when absent).
    pub api_version: String,
    /// `condition` (unused by Helm v2 charts' own metadata).
    pub condition: String,
    /// `tags` (a string in `Chart.yaml`).
    pub tags: String,
    /// `appVersion`.
    pub app_version: String,
    /// `deprecated`.
    pub deprecated: bool,
    /// `annotations` (`None` when absent: `.Chart.Annotations` is then nil).
    pub annotations: Option<BTreeMap<String, String>>,
    /// `kubeVersion`.
    pub kube_version: String,
    /// `dependencies` (`None` when absent, which differs from an empty list for dependency processing; `None`
    /// entries are `null` nodes).
    pub dependencies: Option<Vec<Option<Dependency>>>,
    /// `type`: `application`, `library` or empty.
    pub chart_type: String,
}

fn type_err(json: &Json, field: &str, want: &str) -> String {
    let got = match json {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    };
    format!(
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {got} into Go struct field {field} of type {want}"
    )
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`, what `sigs.k8s.io/yaml` makes of a float for a string field.
fn format_float32(value: f64) -> String {
    super::tree::format_g(value, true)
}

/// A string field: `sigs.k8s.io/yaml` turns YAML scalars into text when the target is a string.
fn string_field(json: &Json, field: &str) -> Result<String, String> {
    match json {
        Json::Null => Ok(String::new()),
        Json::String(text) => Ok(text.clone()),
        Json::Bool(flag) => Ok(flag.to_string()),
        Json::Number(number) => {
            if let Some(int) = number.as_i64() {
                Ok(int.to_string())
            } else if let Some(int) = number.as_u64() {
                Ok(int.to_string())
            } else {
                Ok(format_float32(number.as_f64().unwrap_or(0.0)))
            }
        }
        other => Err(type_err(other, field, "string")),
    }
}

fn bool_field(json: &Json, field: &str) -> Result<bool, String> {
    match json {
        Json::Null => Ok(false),
        Json::Bool(flag) => Ok(*flag),
        other => Err(type_err(other, field, "bool")),
    }
}

fn string_list(json: &Json, field: &str) -> Result<Vec<String>, String> {
    match json {
        Json::Null => Ok(Vec::new()),
        Json::Array(items) => items.iter().map(|item| string_field(item, field)).collect(),
        other => Err(type_err(other, field, "[]string")),
    }
}

/// Go's `encoding/json` field lookup: an exact key first, then a case-insensitive one.
fn lookup<'a>(object: &'a serde_json::Map<String, Json>, name: &str) -> Option<&'a Json> {
    object.get(name).or_else(|| {
        object
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    })
}

fn decode_maintainer(json: &Json) -> Result<Option<Maintainer>, String> {
    match json {
        Json::Null => Ok(None),
        Json::Object(object) => {
            let get = |key: &str, field: &str| {
                lookup(object, key).map_or(Ok(String::new()), |value| string_field(value, field))
            };
            Ok(Some(Maintainer {
                name: get("name", "Maintainer.name")?,
                email: get("email", "Maintainer.email")?,
                url: get("url", "Maintainer.url")?,
            }))
        }
        other => Err(type_err(other, "Metadata.maintainers", "chart.Maintainer")),
    }
}

fn decode_dependency(json: &Json) -> Result<Option<Dependency>, String> {
    match json {
        Json::Null => Ok(None),
        Json::Object(object) => {
            let text = |key: &str| {
                lookup(object, key).map_or(Ok(String::new()), |value| {
                    string_field(value, &format!("Dependency.{key}"))
                })
            };
            let import_values = match lookup(object, "import-values") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Array(items)) => items.clone(),
                Some(other) => return Err(type_err(other, "Dependency.import-values", "[]interface {}")),
            };
            Ok(Some(Dependency {
                name: text("name")?,
                version: text("version")?,
                repository: text("repository")?,
                condition: text("condition")?,
                tags: lookup(object, "tags").map_or(Ok(Vec::new()), |v| string_list(v, "Dependency.tags"))?,
                enabled: lookup(object, "enabled")
                    .map_or(Ok(false), |v| bool_field(v, "Dependency.enabled"))?,
                import_values,
                alias: text("alias")?,
            }))
        }
        other => Err(type_err(other, "Metadata.dependencies", "chart.Dependency")),
    }
}

impl Metadata {
    /// Decodes `Chart.yaml` (or `requirements.yaml`) on top of `self`, as `yaml.Unmarshal(data, metadata)` does:
    /// only the fields present change. `Err` holds the text after `cannot load Chart.yaml: `.
    pub(crate) fn merge_yaml(&mut self, json: &Json) -> Result<(), String> {
        let object = match json {
            Json::Null => return Ok(()),
            Json::Object(object) => object,
            other => {
                return Err(type_err(other, "", "chart.Metadata")
                    .replace("Go struct field  of type", "Go value of type"));
            }
        };
        for (key, field) in [
            ("name", &mut self.name),
            ("home", &mut self.home),
            ("version", &mut self.version),
            ("description", &mut self.description),
            ("icon", &mut self.icon),
            ("apiVersion", &mut self.api_version),
            ("condition", &mut self.condition),
            ("tags", &mut self.tags),
            ("appVersion", &mut self.app_version),
            ("kubeVersion", &mut self.kube_version),
            ("type", &mut self.chart_type),
        ] {
            if let Some(value) = lookup(object, key)
                && !value.is_null()
            {
                *field = string_field(value, &format!("Metadata.{key}"))?;
            }
        }
        if let Some(value) = lookup(object, "sources") {
            self.sources = string_list(value, "Metadata.sources")?;
        }
        if let Some(value) = lookup(object, "keywords") {
            self.keywords = string_list(value, "Metadata.keywords")?;
        }
        if let Some(value) = lookup(object, "deprecated") {
            self.deprecated = bool_field(value, "Metadata.deprecated")?;
        }
        if let Some(value) = lookup(object, "maintainers") {
            self.maintainers = match value {
                Json::Null => Vec::new(),
                Json::Array(items) => items.iter().map(decode_maintainer).collect::<Result<_, _>>()?,
                other => return Err(type_err(other, "Metadata.maintainers", "[]*chart.Maintainer")),
            };
        }
        if let Some(value) = lookup(object, "annotations") {
            self.annotations = match value {
                Json::Null => None,
                Json::Object(map) => Some(
                    map.iter()
                        .map(|(key, value)| Ok((key.clone(), string_field(value, "Metadata.annotations")?)))
                        .collect::<Result<_, String>>()?,
                ),
                other => return Err(type_err(other, "Metadata.annotations", "map[string]string")),
            };
        }
        if let Some(value) = lookup(object, "dependencies") {
            self.dependencies = match value {
                Json::Null => None,
                Json::Array(items) => Some(items.iter().map(decode_dependency).collect::<Result<_, _>>()?),
                other => return Err(type_err(other, "Metadata.dependencies", "[]*chart.Dependency")),
            };
        }
        Ok(())
    }

    /// Helm's `Metadata.Validate()`: sanitises strings and checks the required fields; the message is Helm's.
    pub(crate) fn validate(&mut self) -> Result<(), ChartError> {
        let invalid = |msg: String| ChartError::Load(format!("validation: {msg}"));
        for field in [
            &mut self.name,
            &mut self.description,
            &mut self.home,
            &mut self.icon,
            &mut self.condition,
            &mut self.tags,
            &mut self.app_version,
            &mut self.kube_version,
        ] {
            *field = sanitize(field);
        }
        for item in self.sources.iter_mut().chain(self.keywords.iter_mut()) {
            *item = sanitize(item);
        }
        if self.api_version.is_empty() {
            return Err(invalid("chart.metadata.apiVersion is required".into()));
        }
        if self.name.is_empty() {
            return Err(invalid("chart.metadata.name is required".into()));
        }
        if self.name == "." || self.name == ".." {
            return Err(invalid(format!(
                "chart.metadata.name {:?} is not allowed",
                self.name
            )));
        }
        if self.name.contains('/') {
            return Err(invalid(format!("chart.metadata.name {:?} is invalid", self.name)));
        }
        if self.version.is_empty() {
            return Err(invalid("chart.metadata.version is required".into()));
        }
        if !crate::sprig::semver::is_valid_version(&self.version) {
            return Err(invalid(format!(
                "chart.metadata.version {:?} is invalid",
                self.version
            )));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return Err(invalid(
                "chart.metadata.type must be application or library".into(),
            ));
        }
        for maintainer in &mut self.maintainers {
            let Some(maintainer) = maintainer else {
                return Err(invalid("maintainers must not contain empty or null nodes".into()));
            };
            maintainer.name = sanitize(&maintainer.name);
            maintainer.email = sanitize(&maintainer.email);
            maintainer.url = sanitize(&maintainer.url);
        }
        let mut seen = std::collections::BTreeSet::new();
        for dependency in self.dependencies.iter_mut().flatten() {
            let Some(dependency) = dependency else {
                return Err(invalid(
                    "dependencies must not contain empty or null nodes".into(),
                ));
            };
            dependency.name = sanitize(&dependency.name);
            dependency.version = sanitize(&dependency.version);
            dependency.repository = sanitize(&dependency.repository);
            dependency.condition = sanitize(&dependency.condition);
            for tag in &mut dependency.tags {
                *tag = sanitize(tag);
            }
            if !dependency.alias.is_empty()
                && !dependency
                    .alias
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(invalid(format!(
                    "dependency {:?} has disallowed characters in the alias",
                    dependency.name
                )));
            }
            let key = if dependency.alias.is_empty() {
                dependency.name.clone()
            } else {
                dependency.alias.clone()
            };
            if !seen.insert(key.clone()) {
                return Err(invalid(format!(
                    "more than one dependency with name or alias {key:?}"
                )));
            }
        }
        Ok(())
    }

    /// The declared dependencies that are not `null` nodes.
    pub(crate) fn deps(&self) -> impl Iterator<Item = &Dependency> {
        self.dependencies.iter().flatten().flatten()
    }

    /// `.Chart` as Helm v4 builds it (`structToMap` of the metadata plus `IsRoot`).
    #[must_use]
    pub fn to_template_map(&self, is_root: bool) -> Value {
        let strings = |items: &[String]| Value::list(items.iter().map(Value::string).collect());
        let map = Map::new();
        map.insert("APIVersion", Value::string(&self.api_version));
        map.insert(
            "Annotations",
            match &self.annotations {
                None => Value::Nil,
                Some(entries) => Value::Map(Map::from_entries(
                    entries
                        .iter()
                        .map(|(k, v)| (k.clone(), Value::string(v)))
                        .collect(),
                )),
            },
        );
        map.insert("AppVersion", Value::string(&self.app_version));
        map.insert("Condition", Value::string(&self.condition));
        let dependencies = self
            .dependencies
            .iter()
            .flatten()
            .map(|dependency| match dependency {
                None => Value::Nil,
                Some(dep) => {
                    let entry = Map::new();
                    entry.insert("Alias", Value::string(&dep.alias));
                    entry.insert("Condition", Value::string(&dep.condition));
                    entry.insert("Enabled", Value::Bool(dep.enabled));
                    entry.insert(
                        "ImportValues",
                        Value::list(dep.import_values.iter().map(Value::from_json).collect()),
                    );
                    entry.insert("Name", Value::string(&dep.name));
                    entry.insert("Repository", Value::string(&dep.repository));
                    entry.insert("Tags", strings(&dep.tags));
                    entry.insert("Version", Value::string(&dep.version));
                    Value::Map(entry)
                }
            })
            .collect();
        map.insert("Dependencies", Value::list(dependencies));
        map.insert("Deprecated", Value::Bool(self.deprecated));
        map.insert("Description", Value::string(&self.description));
        map.insert("Home", Value::string(&self.home));
        map.insert("Icon", Value::string(&self.icon));
        map.insert("IsRoot", Value::Bool(is_root));
        map.insert("Keywords", strings(&self.keywords));
        map.insert("KubeVersion", Value::string(&self.kube_version));
        let maintainers = self
            .maintainers
            .iter()
            .map(|maintainer| match maintainer {
                None => Value::Nil,
                Some(m) => {
                    let entry = Map::new();
                    entry.insert("Email", Value::string(&m.email));
                    entry.insert("Name", Value::string(&m.name));
                    entry.insert("URL", Value::string(&m.url));
                    Value::Map(entry)
                }
            })
            .collect();
        map.insert("Maintainers", Value::list(maintainers));
        map.insert("Name", Value::string(&self.name));
        map.insert("Sources", strings(&self.sources));
        map.insert("Tags", Value::string(&self.tags));
        map.insert("Type", Value::string(&self.chart_type));
        map.insert("Version", Value::string(&self.version));
        Value::Map(map)
    }
}

/// Helm's `sanitizeString`: whitespace becomes a space, unprintable characters are dropped.
fn sanitize(text: &str) -> String {
    text.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if c.is_control()
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{feff}')
            {
                None
            } else {
                Some(c)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_for_string_fields_print_as_go_float32_g() {
        assert_eq!(format_float32(1.0), "1");
        assert_eq!(format_float32(1.1), "1.1");
        assert_eq!(format_float32(1.10), "1.1");
        assert_eq!(format_float32(0.5), "0.5");
        assert_eq!(format_float32(1_000_000.0), "1e+06");
        assert_eq!(format_float32(123_456.0), "123456");
        assert_eq!(format_float32(0.0001), "0.0001");
        assert_eq!(format_float32(0.00001), "1e-05");
    }

    #[test]
    fn decodes_and_validates_like_helm() {
        let mut md = Metadata::default();
        md.merge_yaml(
            &serde_json::json!({"Name": "x", "version": 1.0, "appVersion": 1.10,
            "description": "a\tb", "apiVersion": "v2"}),
        )
        .unwrap();
        md.validate().unwrap();
        assert_eq!(
            (md.name.as_str(), md.version.as_str(), md.app_version.as_str()),
            ("x", "1", "1.1")
        );
        assert_eq!(md.description, "a b");
        let mut bad = Metadata {
            api_version: "v2".into(),
            version: "1.0.0".into(),
            ..Metadata::default()
        };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "validation: chart.metadata.name is required"
        );
        let mut bad = Metadata {
            api_version: "v2".into(),
            name: "x".into(),
            version: "one".into(),
            ..Metadata::default()
        };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "validation: chart.metadata.version \"one\" is invalid"
        );
        let err = Metadata::default()
            .merge_yaml(&serde_json::json!({"keywords": "x"}))
            .unwrap_err();
        assert!(
            err.contains("cannot unmarshal string into Go struct field Metadata.keywords of type []string"),
            "{err}"
        );
    }
}
