//! Keeping Secret values out of what emco shows: [`redact_secret_values`] replaces every value of a Secret's
//! `data` and `stringData` (and its `kubectl.kubernetes.io/last-applied-configuration` annotation, which holds a
//! copy of them) with `"<redacted: N bytes>"`, keeping the keys. The status query applies it to every
//! `output=detail` object, whether it came from a staged manifest or from a cluster's report, so a bundle written
//! by an older or hostile monitor cannot leak values either.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value as Json;

/// The annotation `kubectl apply` writes: the whole applied object as JSON text, Secret data included.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Whether an object is a Kubernetes Secret by its own `apiVersion` and `kind` (core group, `v1`).
#[must_use]
pub fn is_secret(object: &Json) -> bool {
    object.get("apiVersion").and_then(Json::as_str) == Some("v1")
        && object.get("kind").and_then(Json::as_str) == Some("Secret")
}

/// The replacement for a secret value of `len` bytes.
fn marker(len: usize) -> Json {
    Json::String(format!("<redacted: {len} bytes>"))
}

/// The size a value stands for: for `data` (`base64`) the decoded size, or the encoded length if it is not valid
/// base64; for `stringData` and annotations the string's byte length; for anything that is not a string (only a
/// broken or hostile object has those) the length of its JSON text.
fn value_len(value: &Json, base64: bool) -> usize {
    match value {
        Json::String(text) if base64 => STANDARD
            .decode(text.as_bytes())
            .map_or(text.len(), |bytes| bytes.len()),
        Json::String(text) => text.len(),
        other => other.to_string().len(),
    }
}

/// Redacts one Secret in place: every value of `data` and `stringData` (keys kept) and the last-applied
/// annotation.
fn redact_one(secret: &mut Json) {
    let Some(map) = secret.as_object_mut() else {
        return;
    };
    for (field, base64) in [("data", true), ("stringData", false)] {
        match map.get_mut(field) {
            Some(Json::Object(values)) => {
                for value in values.values_mut() {
                    *value = marker(value_len(value, base64));
                }
            }
            // `null` says nothing; any other shape (a string, a list) is not a Secret's and is hidden whole.
            Some(Json::Null) | None => {}
            Some(other) => *other = marker(value_len(other, false)),
        }
    }
    if let Some(annotation) = map
        .get_mut("metadata")
        .and_then(|meta| meta.get_mut("annotations"))
        .and_then(|annotations| annotations.get_mut(LAST_APPLIED_ANNOTATION))
        .filter(|value| !value.is_null())
    {
        *annotation = marker(value_len(annotation, false));
    }
}

/// Replaces the values of `object`'s Secret data with `"<redacted: N bytes>"` (N: the decoded size of a `data`
/// value, or its encoded length when it is not valid base64; the byte length of a `stringData` value), keeping the
/// keys, and redacts the Secret's `kubectl.kubernetes.io/last-applied-configuration` annotation the same way.
///
/// `object` is a Secret when its own `apiVersion`/`kind` say `v1`/`Secret`, or when `known_secret` is set (the
/// caller found it where only Secrets belong, e.g. a bundle's `secretStatuses`, which may omit the type fields).
/// The items of a `List` (or a `SecretList`) are redacted the same way, at any depth. Anything else is left as it
/// is. Never panics, whatever the input.
pub fn redact_secret_values(object: &mut Json, known_secret: bool) {
    // An explicit stack rather than recursion: nested lists from a hostile source cannot exhaust the stack.
    let mut pending: Vec<(&mut Json, bool)> = vec![(object, known_secret)];
    while let Some((object, known_secret)) = pending.pop() {
        if known_secret || is_secret(object) {
            redact_one(object);
            continue;
        }
        let Some(kind) = object.get("kind").and_then(Json::as_str) else {
            continue;
        };
        if !kind.ends_with("List") {
            continue;
        }
        let items_are_secrets = kind == "SecretList";
        if let Some(items) = object.get_mut("items").and_then(Json::as_array_mut) {
            pending.extend(items.iter_mut().map(|item| (item, items_are_secrets)));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn redacted(mut object: Json) -> Json {
        redact_secret_values(&mut object, false);
        object
    }

    #[test]
    fn data_values_become_their_decoded_size() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "type": "Opaque", "data": {"password": "aHVudGVyMg==", "user": "YWRtaW4="}});
        assert_eq!(
            redacted(secret),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "type": "Opaque",
                "data": {"password": "<redacted: 7 bytes>", "user": "<redacted: 5 bytes>"}})
        );
    }

    #[test]
    fn string_data_values_become_their_byte_length() {
        let secret =
            json!({"apiVersion": "v1", "kind": "Secret", "stringData": {"token": "héllo", "empty": ""}});
        assert_eq!(
            redacted(secret)["stringData"],
            json!({"token": "<redacted: 6 bytes>", "empty": "<redacted: 0 bytes>"})
        );
    }

    #[test]
    fn both_fields_are_redacted_and_nothing_else_changes() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"a": "b"}},
            "data": {"k": "dmFsdWU="}, "stringData": {"k2": "value2"}, "immutable": true});
        let out = redacted(secret);
        assert_eq!(out["data"], json!({"k": "<redacted: 5 bytes>"}));
        assert_eq!(out["stringData"], json!({"k2": "<redacted: 6 bytes>"}));
        assert_eq!(out["metadata"], json!({"name": "s", "labels": {"a": "b"}}));
        assert_eq!(out["immutable"], true);
        let text = out.to_string();
        assert!(!text.contains("dmFsdWU=") && !text.contains("value2"), "{text}");
    }

    #[test]
    fn empty_and_missing_data_stay_as_they_are() {
        let empty = json!({"apiVersion": "v1", "kind": "Secret", "data": {}, "stringData": {}});
        assert_eq!(redacted(empty.clone()), empty);
        let none = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": null});
        assert_eq!(redacted(none.clone()), none);
    }

    #[test]
    fn invalid_base64_counts_the_encoded_length() {
        let secret =
            json!({"apiVersion": "v1", "kind": "Secret", "data": {"bad": "not base64!", "unpadded": "YWI"}});
        assert_eq!(
            redacted(secret)["data"],
            json!({"bad": "<redacted: 11 bytes>", "unpadded": "<redacted: 3 bytes>"})
        );
    }

    #[test]
    fn odd_shapes_are_hidden_whole() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "data": {"n": 12345, "o": {"nested": "x"}}, "stringData": "plain-secret"});
        let out = redacted(secret);
        assert_eq!(
            out["data"],
            json!({"n": "<redacted: 5 bytes>", "o": "<redacted: 14 bytes>"})
        );
        assert_eq!(out["stringData"], "<redacted: 12 bytes>");
        // Not objects at all: nothing to do, no panic.
        for mut value in [json!(null), json!("Secret"), json!([1, 2]), json!(3)] {
            let before = value.clone();
            redact_secret_values(&mut value, true);
            assert_eq!(value, before);
        }
    }

    #[test]
    fn non_secrets_are_untouched() {
        for object in [
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "dmFsdWU="},
                "metadata": {"annotations": {LAST_APPLIED_ANNOTATION: "{\"data\":{}}"}}}),
            json!({"apiVersion": "example.com/v1", "kind": "Secret", "data": {"k": "v"}}),
            json!({"kind": "Secret", "data": {"k": "v"}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2}}),
        ] {
            assert_eq!(redacted(object.clone()), object);
        }
    }

    #[test]
    fn known_secrets_are_redacted_without_type_fields() {
        let mut object = json!({"metadata": {"name": "s"}, "data": {"k": "dmFsdWU="}});
        redact_secret_values(&mut object, true);
        assert_eq!(object["data"], json!({"k": "<redacted: 5 bytes>"}));
    }

    #[test]
    fn the_last_applied_annotation_of_a_secret_is_redacted() {
        let applied = r#"{"apiVersion":"v1","data":{"password":"aHVudGVyMg=="},"kind":"Secret"}"#;
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "annotations": {LAST_APPLIED_ANNOTATION: applied, "team": "db"}},
            "data": {"password": "aHVudGVyMg=="}});
        let out = redacted(secret);
        assert_eq!(
            out["metadata"]["annotations"],
            json!({LAST_APPLIED_ANNOTATION: format!("<redacted: {} bytes>", applied.len()), "team": "db"})
        );
        assert!(!out.to_string().contains("aHVudGVyMg=="));
    }

    #[test]
    fn secrets_inside_lists_are_redacted() {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Secret", "data": {"a": "YWI="}},
            {"apiVersion": "v1", "kind": "ConfigMap", "data": {"b": "YWI="}},
            {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Secret", "stringData": {"c": "xyz"}}]},
        ]});
        let out = redacted(list);
        assert_eq!(out["items"][0]["data"], json!({"a": "<redacted: 2 bytes>"}));
        assert_eq!(out["items"][1]["data"], json!({"b": "YWI="}));
        assert_eq!(
            out["items"][2]["items"][0]["stringData"],
            json!({"c": "<redacted: 3 bytes>"})
        );
        let secrets = json!({"apiVersion": "v1", "kind": "SecretList", "items": [{"data": {"d": "YWI="}}]});
        assert_eq!(
            redacted(secrets)["items"][0]["data"],
            json!({"d": "<redacted: 2 bytes>"})
        );
    }
}
