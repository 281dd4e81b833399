//! Field ownership for server-side apply: the leaf fields an object sets (with list-map semantics for the lists
//! that merge by key), `managedFields` in `FieldsV1` form, conflicts between managers, and the apply merge that
//! removes what a manager stopped applying (unless someone else owns it).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value as Json, json};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// An object field: `f:name`.
    Field(String),
    /// A list element by merge key: `k:{"name":"app"}`.
    Key(String),
    /// A set element: `v:"x"`.
    Value(String),
}

impl Step {
    fn render(&self) -> String {
        match self {
            Self::Field(name) => format!("f:{name}"),
            Self::Key(key) => format!("k:{key}"),
            Self::Value(value) => format!("v:{value}"),
        }
    }

    fn parse(text: &str) -> Option<Self> {
        if let Some(name) = text.strip_prefix("f:") {
            Some(Self::Field(name.to_string()))
        } else if let Some(key) = text.strip_prefix("k:") {
            Some(Self::Key(key.to_string()))
        } else {
            text.strip_prefix("v:")
                .map(|value| Self::Value(value.to_string()))
        }
    }
}

/// A field path.
pub type Path = Vec<Step>;
/// A set of owned leaf paths.
pub type FieldSet = BTreeSet<Path>;

/// The merge key of a list field, if its elements are identified by a key.
#[must_use]
pub fn list_key(field: &str, items: &[Json]) -> Option<&'static str> {
    match field {
        "containers" | "initContainers" | "ephemeralContainers" | "volumes" | "env" | "imagePullSecrets" => {
            Some("name")
        }
        "volumeMounts" => Some("mountPath"),
        "conditions" => Some("type"),
        "ownerReferences" => Some("uid"),
        "ports" => Some(if items.iter().any(|item| item.get("containerPort").is_some()) {
            "containerPort"
        } else {
            "port"
        }),
        _ => None,
    }
}

fn is_set(field: &str) -> bool {
    field == "finalizers"
}

fn element_key(item: &Json, key: &str) -> Option<String> {
    let value = item.get(key)?;
    Some(json!({ key: value }).to_string())
}

/// The metadata fields an apply configuration owns (identity fields are not owned).
const OWNED_METADATA: &[&str] = &["labels", "annotations", "finalizers", "ownerReferences"];

/// The leaf fields `object` sets. `status` is included only when `status_only`; otherwise it is skipped (it has its
/// own subresource).
#[must_use]
pub fn leaf_fields(object: &Json, status_only: bool) -> FieldSet {
    let mut fields = FieldSet::new();
    let Json::Object(map) = object else { return fields };
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                if status_only {
                    continue;
                }
                if let Json::Object(meta) = value {
                    for owned in OWNED_METADATA {
                        if let Some(v) = meta.get(*owned) {
                            collect(
                                v,
                                vec![Step::Field("metadata".into()), Step::Field((*owned).into())],
                                owned,
                                &mut fields,
                            );
                        }
                    }
                }
            }
            "status" if !status_only => {}
            other if status_only && other != "status" => {}
            _ => collect(value, vec![Step::Field(key.clone())], key, &mut fields),
        }
    }
    fields
}

fn collect(value: &Json, path: Path, field: &str, out: &mut FieldSet) {
    match value {
        Json::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                let mut child_path = path.clone();
                child_path.push(Step::Field(key.clone()));
                collect(child, child_path, key, out);
            }
        }
        Json::Array(items) if is_set(field) => {
            for item in items {
                let mut child_path = path.clone();
                child_path.push(Step::Value(item.to_string()));
                out.insert(child_path);
            }
        }
        Json::Array(items) => match list_key(field, items) {
            Some(key) if items.iter().all(|item| element_key(item, key).is_some()) => {
                for item in items {
                    let mut element_path = path.clone();
                    element_path.push(Step::Key(element_key(item, key).unwrap_or_default()));
                    match item {
                        Json::Object(map) => {
                            for (child_key, child) in map {
                                let mut child_path = element_path.clone();
                                child_path.push(Step::Field(child_key.clone()));
                                collect(child, child_path, child_key, out);
                            }
                        }
                        _ => {
                            out.insert(element_path);
                        }
                    }
                }
            }
            _ => {
                out.insert(path);
            }
        },
        _ => {
            out.insert(path);
        }
    }
}

/// The value at `path` in `object`.
#[must_use]
pub fn value_at<'a>(object: &'a Json, path: &[Step]) -> Option<&'a Json> {
    let mut node = object;
    let mut field = "";
    for step in path {
        node = match step {
            Step::Field(name) => {
                field = name;
                node.get(name.as_str())?
            }
            Step::Key(key) => {
                let wanted: Json = serde_json::from_str(key).ok()?;
                let (key_name, key_value) = wanted.as_object()?.iter().next()?;
                let _ = field;
                node.as_array()?
                    .iter()
                    .find(|item| item.get(key_name) == Some(key_value))?
            }
            Step::Value(value) => {
                let wanted: Json = serde_json::from_str(value).ok()?;
                node.as_array()?.iter().find(|item| **item == wanted)?
            }
        };
    }
    Some(node)
}

/// Removes the field at `path` (and an emptied list element or object stays as it is).
pub fn remove_at(object: &mut Json, path: &[Step]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = object;
    for step in parents {
        let next = match step {
            Step::Field(name) => node.get_mut(name.as_str()),
            Step::Key(key) => {
                let Ok(wanted) = serde_json::from_str::<Json>(key) else {
                    return;
                };
                let Some((key_name, key_value)) = wanted.as_object().and_then(|m| m.iter().next()) else {
                    return;
                };
                let (key_name, key_value) = (key_name.clone(), key_value.clone());
                node.as_array_mut().and_then(|items| {
                    items
                        .iter_mut()
                        .find(|item| item.get(&key_name) == Some(&key_value))
                })
            }
            Step::Value(_) => None,
        };
        let Some(next) = next else { return };
        node = next;
    }
    match last {
        Step::Field(name) => {
            if let Some(map) = node.as_object_mut() {
                map.remove(name);
            }
        }
        Step::Key(key) => {
            let Ok(wanted) = serde_json::from_str::<Json>(key) else {
                return;
            };
            let Some((key_name, key_value)) = wanted.as_object().and_then(|m| m.iter().next()) else {
                return;
            };
            if let Some(items) = node.as_array_mut() {
                items.retain(|item| item.get(key_name) != Some(key_value));
            }
        }
        Step::Value(value) => {
            let Ok(wanted) = serde_json::from_str::<Json>(value) else {
                return;
            };
            if let Some(items) = node.as_array_mut() {
                items.retain(|item| *item != wanted);
            }
        }
    }
}

/// Renders a field set as a `fieldsV1` tree.
#[must_use]
pub fn to_fields_v1(fields: &FieldSet) -> Json {
    let mut root = Map::new();
    for path in fields {
        let mut node = &mut root;
        for (index, step) in path.iter().enumerate() {
            let entry = node
                .entry(step.render())
                .or_insert_with(|| Json::Object(Map::new()));
            if matches!(step, Step::Key(_))
                && index + 1 < path.len()
                && let Json::Object(map) = entry
            {
                map.entry(".").or_insert_with(|| Json::Object(Map::new()));
            }
            let Json::Object(map) = entry else { break };
            node = map;
        }
    }
    Json::Object(root)
}

/// Parses a `fieldsV1` tree back into leaf paths.
#[must_use]
pub fn from_fields_v1(tree: &Json) -> FieldSet {
    let mut fields = FieldSet::new();
    fn walk(node: &Json, path: &mut Path, out: &mut FieldSet) {
        let Json::Object(map) = node else { return };
        let children: Vec<_> = map.iter().filter(|(k, _)| k.as_str() != ".").collect();
        if children.is_empty() {
            if !path.is_empty() {
                out.insert(path.clone());
            }
            return;
        }
        for (key, child) in children {
            if let Some(step) = Step::parse(key) {
                path.push(step);
                walk(child, path, out);
                path.pop();
            }
        }
    }
    walk(tree, &mut Vec::new(), &mut fields);
    fields
}

/// Renders a path as `.spec.replicas` for conflict messages.
#[must_use]
pub fn describe(path: &[Step]) -> String {
    path.iter()
        .map(|step| match step {
            Step::Field(name) => format!(".{name}"),
            Step::Key(key) => format!("[{key}]"),
            Step::Value(value) => format!("[{value}]"),
        })
        .collect()
}

/// One managedFields entry, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manager {
    /// The manager's name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// `status` for status writes.
    pub subresource: Option<String>,
    /// Its fields.
    pub fields: FieldSet,
    /// The apiVersion it wrote with.
    pub api_version: String,
    /// When it last wrote.
    pub time: String,
}

/// Reads `metadata.managedFields`.
#[must_use]
pub fn managers(object: &Json) -> Vec<Manager> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|entry| Manager {
                    manager: entry["manager"].as_str().unwrap_or_default().to_string(),
                    operation: entry["operation"].as_str().unwrap_or("Update").to_string(),
                    subresource: entry["subresource"].as_str().map(String::from),
                    fields: from_fields_v1(&entry["fieldsV1"]),
                    api_version: entry["apiVersion"].as_str().unwrap_or_default().to_string(),
                    time: entry["time"].as_str().unwrap_or_default().to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Writes `metadata.managedFields` (entries without fields are dropped).
pub fn set_managers(object: &mut Json, managers: &[Manager]) {
    let entries: Vec<Json> = managers
        .iter()
        .filter(|m| !m.fields.is_empty())
        .map(|m| {
            let mut entry = json!({"manager": m.manager, "operation": m.operation, "apiVersion": m.api_version,
                "time": m.time, "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(&m.fields)});
            if let Some(subresource) = &m.subresource {
                entry["subresource"] = json!(subresource);
            }
            entry
        })
        .collect();
    if let Some(meta) = object.get_mut("metadata").and_then(Json::as_object_mut) {
        if entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Json::Array(entries));
        }
    }
}

/// Merges an apply configuration into an object: maps merge, keyed lists merge by key, other lists and scalars
/// replace; nothing is removed here.
pub fn apply_merge(target: &mut Json, applied: &Json, field: &str) {
    match applied {
        Json::Object(applied_map) => {
            if !target.is_object() {
                *target = Json::Object(Map::new());
            }
            let Json::Object(target_map) = target else { return };
            for (key, value) in applied_map {
                apply_merge(target_map.entry(key.clone()).or_insert(Json::Null), value, key);
            }
        }
        Json::Array(items) if is_set(field) => {
            if let Json::Array(existing) = target {
                for item in items {
                    if !existing.contains(item) {
                        existing.push(item.clone());
                    }
                }
            } else {
                *target = applied.clone();
            }
        }
        Json::Array(items) => match (list_key(field, items), target.as_array_mut()) {
            (Some(key), Some(existing)) if items.iter().all(|i| i.get(key).is_some()) => {
                for item in items {
                    match existing.iter_mut().find(|e| e.get(key) == item.get(key)) {
                        Some(found) => apply_merge(found, item, ""),
                        None => existing.push(item.clone()),
                    }
                }
            }
            _ => *target = applied.clone(),
        },
        _ => *target = applied.clone(),
    }
}

/// The leaf paths whose values differ between two objects (added, changed or removed).
#[must_use]
pub fn changed_fields(before: &Json, after: &Json, status_only: bool) -> (FieldSet, FieldSet) {
    let old = leaf_fields(before, status_only);
    let new = leaf_fields(after, status_only);
    let changed = new
        .iter()
        .filter(|path| value_at(before, path) != value_at(after, path))
        .cloned()
        .collect();
    let removed = old.difference(&new).cloned().collect();
    (changed, removed)
}

/// Groups managers by name for lookups.
#[must_use]
pub fn by_name(managers: &[Manager]) -> BTreeMap<(String, String, Option<String>), usize> {
    managers
        .iter()
        .enumerate()
        .map(|(i, m)| ((m.manager.clone(), m.operation.clone(), m.subresource.clone()), i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_fields_use_list_keys_and_round_trip_fields_v1() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "app", "image": "nginx"}]}}}, "status": {"replicas": 1}});
        let fields = leaf_fields(&deployment, false);
        let rendered: Vec<String> = fields.iter().map(|p| describe(p)).collect();
        assert_eq!(
            rendered,
            [
                ".metadata.labels.app",
                ".spec.replicas",
                ".spec.template.spec.containers[{\"name\":\"app\"}].image",
                ".spec.template.spec.containers[{\"name\":\"app\"}].name"
            ]
        );
        let tree = to_fields_v1(&fields);
        assert_eq!(
            tree["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]["."],
            json!({})
        );
        assert_eq!(from_fields_v1(&tree), fields);
        assert_eq!(
            value_at(&deployment, &fields.iter().nth(2).unwrap()[..]),
            Some(&json!("nginx"))
        );
        let status = leaf_fields(&deployment, true);
        assert_eq!(status.len(), 1);
    }

    #[test]
    fn apply_merge_keeps_other_fields_and_merges_by_key() {
        let mut object = json!({"spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "app", "image": "a", "ports": [{"containerPort": 80}]}]}}}});
        apply_merge(
            &mut object,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "b"}, {"name": "side", "image": "s"}]}}}}),
            "",
        );
        assert_eq!(object["spec"]["replicas"], 1);
        let containers = object["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap();
        assert_eq!(containers.len(), 2);
        assert_eq!(
            containers[0],
            json!({"name": "app", "image": "b", "ports": [{"containerPort": 80}]})
        );
        let mut path = vec![
            Step::Field("spec".into()),
            Step::Field("template".into()),
            Step::Field("spec".into()),
            Step::Field("containers".into()),
        ];
        path.push(Step::Key("{\"name\":\"side\"}".into()));
        remove_at(&mut object, &path);
        assert_eq!(
            object["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
}
