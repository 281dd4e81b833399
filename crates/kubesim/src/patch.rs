//! The patch formats of the API: JSON merge patch (RFC 7386), JSON patch (RFC 6902, where testing a missing path
//! against `null` succeeds, as in Go) and strategic merge patch (merge keys for the lists kubectl patches, plus the
//! `$patch`, `$retainKeys`, `$deleteFromPrimitiveList` and `$setElementOrder` directives).

use serde_json::{Map, Value as Json};

/// RFC 7386 (JSON merge patch): `target` with `patch` merged in — objects merge recursively, `null` deletes,
/// anything else (arrays too) replaces. The result is built from the two, so what the patch replaces or deletes is
/// never copied: a monitor's status write replaces most of a ResourceBundleState, which a copy of the whole object
/// would clone first. Keys keep their places; a deleted key leaves the others in order.
#[must_use]
pub fn merge_patched(target: &Json, patch: &Json) -> Json {
    let Json::Object(patch) = patch else {
        return patch.clone();
    };
    let empty = Map::new();
    let target = target.as_object().unwrap_or(&empty);
    let mut merged = Map::new();
    for (key, value) in target {
        match patch.get(key) {
            None => {
                merged.insert(key.clone(), value.clone());
            }
            Some(Json::Null) => {}
            Some(change) => {
                merged.insert(key.clone(), merged_value(value, change));
            }
        }
    }
    for (key, change) in patch {
        if !change.is_null() && !target.contains_key(key) {
            merged.insert(key.clone(), merged_value(&Json::Null, change));
        }
    }
    Json::Object(merged)
}

/// One member of [`merge_patched`]: objects merge, anything else replaces.
fn merged_value(target: &Json, change: &Json) -> Json {
    if change.is_object() {
        merge_patched(target, change)
    } else {
        change.clone()
    }
}

/// Why a JSON patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PatchError(pub String);

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn tokens(pointer: &str) -> Result<Vec<String>, PatchError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let rest = pointer
        .strip_prefix('/')
        .ok_or_else(|| PatchError(format!("invalid JSON pointer '{pointer}'")))?;
    Ok(rest.split('/').map(unescape).collect())
}

fn resolve<'a>(root: &'a Json, path: &[String]) -> Option<&'a Json> {
    let mut node = root;
    for token in path {
        node = match node {
            Json::Object(map) => map.get(token)?,
            Json::Array(items) => items.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

fn parent_mut<'a>(
    root: &'a mut Json,
    path: &[String],
    pointer: &str,
) -> Result<(&'a mut Json, String), PatchError> {
    let (last, parents) = path
        .split_last()
        .ok_or_else(|| PatchError("cannot modify the document root".into()))?;
    let mut node = root;
    for token in parents {
        node = match node {
            Json::Object(map) => map.get_mut(token),
            Json::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| PatchError(format!("doc is missing path: \"{pointer}\"")))?;
    }
    Ok((node, last.clone()))
}

fn add(root: &mut Json, path: &[String], pointer: &str, value: Json) -> Result<(), PatchError> {
    if path.is_empty() {
        *root = value;
        return Ok(());
    }
    let (parent, last) = parent_mut(root, path, pointer)?;
    match parent {
        Json::Object(map) => {
            map.insert(last, value);
            Ok(())
        }
        Json::Array(items) => {
            let index = if last == "-" {
                items.len()
            } else {
                last.parse()
                    .map_err(|_| PatchError(format!("invalid index in \"{pointer}\"")))?
            };
            if index > items.len() {
                return Err(PatchError(format!("index out of range in \"{pointer}\"")));
            }
            items.insert(index, value);
            Ok(())
        }
        _ => Err(PatchError(format!("doc is missing path: \"{pointer}\""))),
    }
}

fn remove(root: &mut Json, path: &[String], pointer: &str) -> Result<Json, PatchError> {
    let (parent, last) = parent_mut(root, path, pointer)?;
    let missing = || PatchError(format!("doc is missing path: \"{pointer}\""));
    match parent {
        Json::Object(map) => map.remove(&last).ok_or_else(missing),
        Json::Array(items) => {
            let index: usize = last.parse().map_err(|_| missing())?;
            if index >= items.len() {
                return Err(missing());
            }
            Ok(items.remove(index))
        }
        _ => Err(missing()),
    }
}

/// RFC 6902, applied atomically (on error `target` is unchanged).
pub fn json_patch(target: &mut Json, patch: &Json) -> Result<(), PatchError> {
    let operations = patch
        .as_array()
        .ok_or_else(|| PatchError("a JSON patch must be an array of operations".into()))?;
    let mut working = target.clone();
    for operation in operations {
        let op = operation["op"].as_str().unwrap_or_default();
        let pointer = operation["path"]
            .as_str()
            .ok_or_else(|| PatchError(format!("operation '{op}' has no path")))?;
        let path = tokens(pointer)?;
        let value = || {
            operation
                .get("value")
                .cloned()
                .ok_or_else(|| PatchError(format!("operation '{op}' on \"{pointer}\" has no value")))
        };
        match op {
            "add" => add(&mut working, &path, pointer, value()?)?,
            "remove" => {
                remove(&mut working, &path, pointer)?;
            }
            "replace" => {
                remove(&mut working, &path, pointer)?;
                add(&mut working, &path, pointer, value()?)?;
            }
            "move" | "copy" => {
                let from_pointer = operation["from"]
                    .as_str()
                    .ok_or_else(|| PatchError(format!("operation '{op}' has no from")))?;
                let from = tokens(from_pointer)?;
                let moved = if op == "move" {
                    remove(&mut working, &from, from_pointer)?
                } else {
                    resolve(&working, &from)
                        .cloned()
                        .ok_or_else(|| PatchError(format!("doc is missing path: \"{from_pointer}\"")))?
                };
                add(&mut working, &path, pointer, moved)?;
            }
            "test" => {
                let expected = value()?;
                let actual = resolve(&working, &path);
                // Go's json-patch treats a missing path as null; kube-runtime's finalizer helper relies on it.
                let equal = match actual {
                    Some(actual) => *actual == expected,
                    None => expected.is_null(),
                };
                if !equal {
                    return Err(PatchError(format!("testing value {pointer} failed")));
                }
            }
            other => return Err(PatchError(format!("unknown JSON patch operation '{other}'"))),
        }
    }
    *target = working;
    Ok(())
}

/// The merge key of a list field for strategic merge patch, if it merges by key.
fn merge_key(field: &str, items: &[Json]) -> Option<&'static str> {
    match field {
        "containers" | "initContainers" | "ephemeralContainers" | "volumes" | "env" | "imagePullSecrets" => {
            Some("name")
        }
        "volumeMounts" => Some("mountPath"),
        "conditions" => Some("type"),
        "ownerReferences" => Some("uid"),
        // Container ports merge by containerPort, service ports by port.
        "ports" => Some(if items.iter().any(|item| item.get("containerPort").is_some()) {
            "containerPort"
        } else {
            "port"
        }),
        _ => None,
    }
}

/// Fields whose lists are sets of primitives merged by value.
fn is_primitive_set(field: &str) -> bool {
    field == "finalizers"
}

/// Strategic merge patch for built-in kinds.
pub fn strategic_merge_patch(target: &mut Json, patch: &Json) {
    let Json::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    match patch_map.get("$patch").and_then(Json::as_str) {
        Some("replace") => {
            let mut replacement = patch_map.clone();
            replacement.remove("$patch");
            *target = Json::Object(replacement);
            return;
        }
        Some("delete") => {
            *target = Json::Null;
            return;
        }
        _ => {}
    }
    if !target.is_object() {
        *target = Json::Object(Map::new());
    }
    let Json::Object(target_map) = target else { return };
    for (key, value) in patch_map {
        if key == "$patch" || key == "$retainKeys" || key.starts_with("$setElementOrder/") {
            continue;
        }
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Json::Array(existing)), Some(remove)) = (target_map.get_mut(field), value.as_array())
            {
                existing.retain(|item| !remove.contains(item));
            }
            continue;
        }
        if value.is_null() {
            target_map.remove(key);
            continue;
        }
        match value {
            Json::Array(items) => {
                if let Some(merge_key) = merge_key(key, items) {
                    merge_keyed_list(
                        target_map
                            .entry(key.clone())
                            .or_insert_with(|| Json::Array(Vec::new())),
                        items,
                        merge_key,
                    );
                } else if is_primitive_set(key) {
                    let existing = target_map
                        .entry(key.clone())
                        .or_insert_with(|| Json::Array(Vec::new()));
                    if let Json::Array(existing) = existing {
                        for item in items {
                            if !existing.contains(item) {
                                existing.push(item.clone());
                            }
                        }
                    } else {
                        *existing = value.clone();
                    }
                } else {
                    target_map.insert(key.clone(), value.clone());
                }
            }
            Json::Object(_) => {
                strategic_merge_patch(target_map.entry(key.clone()).or_insert(Json::Null), value)
            }
            _ => {
                target_map.insert(key.clone(), value.clone());
            }
        }
    }
    if let Some(Json::Array(retain)) = patch_map.get("$retainKeys") {
        target_map.retain(|key, _| retain.iter().any(|k| k.as_str() == Some(key.as_str())));
    }
}

fn merge_keyed_list(target: &mut Json, items: &[Json], merge_key: &str) {
    if items
        .iter()
        .any(|item| item.get("$patch").and_then(Json::as_str) == Some("replace"))
    {
        *target = Json::Array(
            items
                .iter()
                .filter(|item| item.get("$patch").is_none())
                .cloned()
                .collect(),
        );
        return;
    }
    if !target.is_array() {
        *target = Json::Array(Vec::new());
    }
    let Json::Array(existing) = target else { return };
    for item in items {
        let key = item.get(merge_key);
        let position = key.and_then(|key| existing.iter().position(|e| e.get(merge_key) == Some(key)));
        let delete = item.get("$patch").and_then(Json::as_str) == Some("delete");
        match (position, delete) {
            (Some(index), true) => {
                existing.remove(index);
            }
            (None, true) => {}
            (Some(index), false) => strategic_merge_patch(&mut existing[index], item),
            (None, false) => {
                let mut fresh = Json::Null;
                strategic_merge_patch(&mut fresh, item);
                existing.push(fresh);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// RFC 7386's `MergePatch` pseudo-code transcribed: the target changed in place. The reference the property
    /// test holds [`merge_patched`] to.
    fn merge_patch_in_place(target: &mut Json, patch: &Json) {
        let Json::Object(patch) = patch else {
            *target = patch.clone();
            return;
        };
        if !target.is_object() {
            *target = Json::Object(Map::new());
        }
        let Json::Object(target) = target else { return };
        for (key, value) in patch {
            if value.is_null() {
                target.remove(key);
            } else {
                merge_patch_in_place(target.entry(key.clone()).or_insert(Json::Null), value);
            }
        }
    }

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let doc = json!({"a": 1, "b": {"c": 2, "d": 3}, "list": [1, 2]});
        let merged = merge_patched(&doc, &json!({"a": null, "b": {"c": 5}, "list": [3]}));
        assert_eq!(merged, json!({"b": {"c": 5, "d": 3}, "list": [3]}));
    }

    /// A JSON value of at most `depth` levels, with few distinct keys so that patches meet their targets' keys.
    fn any_json(depth: u32) -> impl proptest::strategy::Strategy<Value = Json> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::from),
            (0i64..4).prop_map(Json::from),
            "[ab]{0,2}".prop_map(Json::from),
        ];
        leaf.prop_recursive(depth, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Json::from),
                prop::collection::btree_map("[abcs]", inner, 0..4)
                    .prop_map(|members| Json::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Building the merged copy gives what patching a clone in place gives, for any target and patch.
        #[test]
        fn a_merged_copy_is_the_in_place_merge_of_a_clone(target in any_json(3), patch in any_json(3)) {
            let mut in_place = target.clone();
            merge_patch_in_place(&mut in_place, &patch);
            proptest::prop_assert_eq!(merge_patched(&target, &patch), in_place);
        }
    }

    #[test]
    fn a_merged_copy_keeps_the_order_of_the_keys_left() {
        let target = json!({"a": 1, "b": 2, "c": {"x": 1, "y": 2}, "d": 4});
        let merged = merge_patched(&target, &json!({"b": null, "c": {"x": null, "z": 3}, "e": 5}));
        assert_eq!(merged.to_string(), r#"{"a":1,"c":{"y":2,"z":3},"d":4,"e":5}"#);
    }

    #[test]
    fn json_patch_is_atomic_and_missing_equals_null() {
        let mut doc = json!({"metadata": {"name": "x"}});
        let add_finalizer = json!([{"op": "test", "path": "/metadata/finalizers", "value": null},
                                   {"op": "add", "path": "/metadata/finalizers", "value": ["x/y"]}]);
        json_patch(&mut doc, &add_finalizer).unwrap();
        assert_eq!(doc["metadata"]["finalizers"], json!(["x/y"]));
        let failing = json!([{"op": "replace", "path": "/metadata/name", "value": "y"}, {"op": "test", "path": "/metadata/name", "value": "z"}]);
        assert!(json_patch(&mut doc, &failing).is_err());
        assert_eq!(doc["metadata"]["name"], "x", "a failed patch changes nothing");
        json_patch(&mut doc, &json!([{"op": "add", "path": "/metadata/finalizers/-", "value": "a/b"}, {"op": "move", "from": "/metadata/name", "path": "/metadata/old"}])).unwrap();
        assert_eq!(doc["metadata"], json!({"finalizers": ["x/y", "a/b"], "old": "x"}));
    }

    #[test]
    fn strategic_merge_patch_merges_containers_by_name() {
        let mut deployment = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1", "ports": [{"containerPort": 80}]},
            {"name": "side", "image": "busybox"}]}}}});
        strategic_merge_patch(
            &mut deployment,
            &json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "side"}],
            "containers": [{"name": "app", "image": "nginx:2"}, {"name": "side", "$patch": "delete"}]}}}}),
        );
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"],
            json!([{"name": "app", "image": "nginx:2", "ports": [{"containerPort": 80}]}])
        );
        let mut object = json!({"metadata": {"finalizers": ["a"], "labels": {"x": "1", "y": "2"}}});
        strategic_merge_patch(
            &mut object,
            &json!({"metadata": {"finalizers": ["b"], "$deleteFromPrimitiveList/finalizers": ["a"], "labels": {"$patch": "replace", "z": "3"}}}),
        );
        assert_eq!(
            object["metadata"],
            json!({"finalizers": ["b"], "labels": {"z": "3"}})
        );
    }
}
