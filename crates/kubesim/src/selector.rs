//! Label and field selectors of list and watch requests.

use serde_json::Value as Json;

use crate::error::ApiError;

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector (requirements ANDed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

impl LabelSelector {
    /// Parses `k=v,k!=v,k in (a,b),k notin (a),k,!k`.
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        let bad = |part: &str| {
            ApiError::bad_request(format!(
                "unable to parse requirement: found '{part}', expected a label selector"
            ))
        };
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let requirement = if let Some(key) = part.strip_prefix('!') {
                Requirement::DoesNotExist(key.trim().to_string())
            } else if let Some((key, value)) = part.split_once("!=") {
                Requirement::NotEquals(key.trim().to_string(), value.trim().to_string())
            } else if let Some((key, value)) = part.split_once("==") {
                Requirement::Equals(key.trim().to_string(), value.trim().to_string())
            } else if let Some((key, value)) = part.split_once('=') {
                Requirement::Equals(key.trim().to_string(), value.trim().to_string())
            } else if let Some((key, rest)) = part.split_once(" notin ") {
                Requirement::NotIn(key.trim().to_string(), Self::set(rest).ok_or_else(|| bad(part))?)
            } else if let Some((key, rest)) = part.split_once(" in ") {
                Requirement::In(key.trim().to_string(), Self::set(rest).ok_or_else(|| bad(part))?)
            } else {
                Requirement::Exists(part.to_string())
            };
            let key = match &requirement {
                Requirement::Equals(k, _)
                | Requirement::NotEquals(k, _)
                | Requirement::In(k, _)
                | Requirement::NotIn(k, _)
                | Requirement::Exists(k)
                | Requirement::DoesNotExist(k) => k,
            };
            if !valid_key(key) {
                return Err(bad(part));
            }
            requirements.push(requirement);
        }
        Ok(Self(requirements))
    }

    fn set(text: &str) -> Option<Vec<String>> {
        let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
        Some(
            inner
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect(),
        )
    }

    /// A selector from `matchLabels` (as workloads carry them).
    #[must_use]
    pub fn from_match_labels(labels: &serde_json::Map<String, Json>) -> Self {
        Self(
            labels
                .iter()
                .map(|(k, v)| Requirement::Equals(k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
        )
    }

    /// Whether the selector selects nothing in particular (matches everything).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether an object's labels match.
    #[must_use]
    pub fn matches(&self, object: &Json) -> bool {
        let labels = object["metadata"]["labels"].as_object();
        let get = |key: &str| labels.and_then(|l| l.get(key)).and_then(Json::as_str);
        self.0.iter().all(|requirement| match requirement {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, values) => get(k).is_some_and(|actual| values.iter().any(|v| v == actual)),
            Requirement::NotIn(k, values) => get(k).is_none_or(|actual| !values.iter().any(|v| v == actual)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// A parsed field selector (`=`, `==`, `!=`, ANDed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

/// The fields every kind supports.
const COMMON_FIELDS: &[&str] = &["metadata.name", "metadata.namespace"];

fn supported_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "Pod" => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        "Event" => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "type",
            "source",
            "reportingComponent",
        ],
        "Secret" => &["type"],
        "Node" => &["spec.unschedulable"],
        "Namespace" => &["status.phase"],
        "Job" => &["status.successful"],
        _ => &[],
    }
}

/// The value at a dotted field path (`status.phase`); null where the object has none.
fn at_path<'a>(object: &'a Json, path: &str) -> &'a Json {
    path.split('.').fold(object, |node, step| &node[step])
}

/// What selectors and the controllers' transition checks read of an object: its name, namespace, labels and
/// deletion mark, and the fields a field selector on its kind may name. A logged change keeps this of the object
/// before it rather than the whole object: holding whole previous versions kept a second copy of every recently
/// changed object alive (a monitor's ResourceBundleState, rewritten at every report, is most of a cluster's data).
#[must_use]
pub fn selectable_part(kind: &str, object: &Json) -> Json {
    let mut part = Json::Object(serde_json::Map::new());
    let paths = ["metadata.labels", "metadata.deletionTimestamp"]
        .iter()
        .chain(COMMON_FIELDS)
        .chain(supported_fields(kind));
    for path in paths {
        let node = at_path(object, path);
        if node.is_null() {
            continue;
        }
        let mut target = &mut part;
        for step in path.split('.') {
            target = &mut target[step];
        }
        *target = node.clone();
    }
    part
}

impl FieldSelector {
    /// Parses a field selector for objects of `kind`; unsupported fields are 400.
    pub fn parse(text: &str, kind: &str) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            if !COMMON_FIELDS.contains(&field) && !supported_fields(kind).contains(&field) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            terms.push((field.to_string(), equal, value.trim().to_string()));
        }
        Ok(Self(terms))
    }

    /// The name an equality on `metadata.name` asks for (lets a list skip to one object).
    #[must_use]
    pub fn exact_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|(f, eq, _)| f == "metadata.name" && *eq)
            .map(|(_, _, v)| v.as_str())
    }

    /// Whether an object matches.
    #[must_use]
    pub fn matches(&self, object: &Json) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let actual = match at_path(object, field) {
                Json::String(s) => s.clone(),
                Json::Null => String::new(),
                other => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn label_selectors_follow_kubernetes_semantics() {
        let web = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}});
        let bare = json!({"metadata": {}});
        let check = |text: &str, object: &Json| LabelSelector::parse(text).unwrap().matches(object);
        assert!(check("app=web", &web) && check("app==web", &web) && !check("app=db", &web));
        assert!(check("app in (web,db),tier!=db", &web));
        assert!(check("tier!=db", &bare), "!= matches objects without the key");
        assert!(check("app notin (db)", &bare));
        assert!(check("!canary", &web) && !check("canary", &web) && check("app", &web));
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("a b=c").is_err());
    }

    #[test]
    fn field_selectors_check_supported_fields() {
        let pod = json!({"metadata": {"name": "p", "namespace": "t1"}, "status": {"phase": "Running"}});
        let selector = FieldSelector::parse("status.phase=Running,metadata.namespace=t1", "Pod").unwrap();
        assert!(selector.matches(&pod));
        assert!(
            !FieldSelector::parse("metadata.name!=p", "Pod")
                .unwrap()
                .matches(&pod)
        );
        let err = FieldSelector::parse("spec.foo=x", "Pod").unwrap_err();
        assert_eq!(err.message, "field label not supported: spec.foo");
        assert_eq!(
            FieldSelector::parse("metadata.name=p", "ConfigMap")
                .unwrap()
                .exact_name(),
            Some("p")
        );
    }

    #[test]
    fn the_selectable_part_answers_every_selector_as_the_object_does_and_holds_nothing_else() {
        let pod = json!({
            "metadata": {"name": "p", "namespace": "t1", "labels": {"app": "web"},
                         "deletionTimestamp": "2026-01-01T00:00:00Z", "annotations": {"big": "x"}},
            "spec": {"nodeName": "n1", "hostNetwork": false, "containers": [{"name": "main"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "conditions": []},
        });
        let part = selectable_part("Pod", &pod);
        for (labels, fields) in [
            ("app=web", "status.phase=Running"),
            ("app=db", ""),
            ("", "spec.nodeName=n1,metadata.namespace=t1"),
            ("", "spec.hostNetwork=false,status.podIP!=10.0.0.1"),
            ("!app", "metadata.name=p"),
        ] {
            let labels = LabelSelector::parse(labels).unwrap();
            let fields = FieldSelector::parse(fields, "Pod").unwrap();
            assert_eq!(
                labels.matches(&part) && fields.matches(&part),
                labels.matches(&pod) && fields.matches(&pod),
                "{labels:?} {fields:?}"
            );
        }
        assert!(crate::meta::is_deleting(&part));
        assert!(part["spec"].get("containers").is_none() && part["metadata"].get("annotations").is_none());
        assert!(part["status"].get("conditions").is_none());
        let config_map = json!({"metadata": {"name": "c", "namespace": "t1"}, "data": {"k": "v"}});
        assert_eq!(
            selectable_part("ConfigMap", &config_map),
            json!({"metadata": {"name": "c", "namespace": "t1"}})
        );
    }
}
