//! User values: layering what the user supplies (an app profile's values, then a DIG's `key=value` overrides) as
//! Helm layers `-f` files and `--set` flags, before the chart model coalesces them over the chart's defaults.

use serde_json::{Map, Value as Json};

/// A `--set` entry that cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValuesError {
    /// The key is empty or has an empty segment.
    #[error("override key '{0}' is not a dotted path of names")]
    BadKey(String),
    /// The path crosses a value that is not a mapping.
    #[error("override key '{key}': '{segment}' is not a mapping in the values")]
    NotAMapping {
        /// The full key.
        key: String,
        /// The segment that is not a mapping.
        segment: String,
    },
}

/// Merges `overlay` into `base` as Helm merges its `-f` files (`mergeMaps`): mappings merge key by key, anything
/// else replaces. A `null` is kept: when the values are coalesced over the chart's defaults it removes that default.
pub fn merge_values(base: &mut Json, overlay: &Json) {
    match (base, overlay) {
        (Json::Object(base), Json::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge_values(existing, value)
                    }
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

/// Helm's `--set` typing: `true`/`false` are booleans, integers are numbers, `null` is null, the rest strings.
fn typed(raw: &str) -> Json {
    match raw {
        "true" => Json::Bool(true),
        "false" => Json::Bool(false),
        "null" => Json::Null,
        _ => match raw.parse::<i64>() {
            // Keep leading zeros ("007") as strings, as Helm does.
            Ok(number) if !(raw.len() > 1 && raw.starts_with('0')) => Json::from(number),
            _ => Json::String(raw.to_string()),
        },
    }
}

/// Applies `key=value` (`key` a dotted path, `\.` for a literal dot) to `values`, creating mappings on the way.
pub fn apply_set(values: &mut Json, key: &str, raw: &str) -> Result<(), ValuesError> {
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'.') => {
                current.push('.');
                chars.next();
            }
            '.' => segments.push(std::mem::take(&mut current)),
            other => current.push(other),
        }
    }
    segments.push(current);
    if segments.iter().any(String::is_empty) {
        return Err(ValuesError::BadKey(key.to_string()));
    }
    let (last, parents) = segments
        .split_last()
        .ok_or_else(|| ValuesError::BadKey(key.to_string()))?;
    let mut node = values;
    for segment in parents {
        if !node.is_object() {
            return Err(ValuesError::NotAMapping {
                key: key.to_string(),
                segment: segment.clone(),
            });
        }
        let map = node
            .as_object_mut()
            .ok_or_else(|| ValuesError::BadKey(key.to_string()))?;
        let child = map
            .entry(segment.clone())
            .or_insert_with(|| Json::Object(Map::new()));
        if child.is_null() {
            *child = Json::Object(Map::new());
        }
        if !child.is_object() {
            return Err(ValuesError::NotAMapping {
                key: key.to_string(),
                segment: segment.clone(),
            });
        }
        node = child;
    }
    let map = node
        .as_object_mut()
        .ok_or_else(|| ValuesError::BadKey(key.to_string()))?;
    map.insert(last.clone(), typed(raw));
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn layers_merge_deeply_and_keep_nulls_for_coalescing() {
        let mut values = json!({"image": {"repository": "nginx", "tag": "1"}, "replicas": 1, "drop": 1});
        merge_values(
            &mut values,
            &json!({"image": {"tag": "2"}, "replicas": 3, "drop": null}),
        );
        assert_eq!(
            values,
            json!({"image": {"repository": "nginx", "tag": "2"}, "replicas": 3, "drop": null})
        );
    }

    #[test]
    fn set_types_values_like_helm() {
        let mut values = json!({"a": {"b": 1}});
        apply_set(&mut values, "a.c", "2").unwrap();
        apply_set(&mut values, "flag", "true").unwrap();
        apply_set(&mut values, "zip", "007").unwrap();
        apply_set(&mut values, "dotted\\.key", "x").unwrap();
        assert_eq!(
            values,
            json!({"a": {"b": 1, "c": 2}, "flag": true, "zip": "007", "dotted.key": "x"})
        );
        assert_eq!(
            apply_set(&mut values, "a..b", "1"),
            Err(ValuesError::BadKey("a..b".into()))
        );
        assert!(matches!(
            apply_set(&mut values, "a.b.c", "1"),
            Err(ValuesError::NotAMapping { .. })
        ));
    }
}
