//! The versioned envelope of every stored JSON record: `{"schema": N, ...}`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

/// The record schema this build writes by default.
pub(crate) const SCHEMA: u64 = 1;

/// The newest schema this build reads. Schema 2: (app, cluster) records whose resources carry roles (CRDs and
/// Helm hooks); such records are written as 2 and every other record as 1, so an older build refuses exactly the
/// records it would misread. Schema 3: (app, cluster) records holding a certificate request emco approves, and
/// context metas that apply with a logical cloud user's credentials: an older build would apply those as the
/// cluster's administrator.
pub(crate) const NEWEST_SCHEMA: u64 = 3;

/// A stored record that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The bytes are not the JSON this build expects.
    #[error("record '{key}' is damaged: {message}")]
    Damaged {
        /// The store key.
        key: String,
        /// The decoder's message.
        message: String,
    },
    /// The record was written by a newer emco.
    #[error("record '{key}' has schema {found}; this emco reads up to {NEWEST_SCHEMA}")]
    TooNew {
        /// The store key.
        key: String,
        /// The schema found.
        found: u64,
    },
}

/// Encodes `value` (an object) with the schema field first.
pub(crate) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    encode_with_schema(value, SCHEMA)
}

/// Encodes `value` (an object) with the schema field `schema` first.
pub(crate) fn encode_with_schema<T: Serialize>(value: &T, schema: u64) -> Vec<u8> {
    let mut object = serde_json::Map::new();
    object.insert("schema".into(), Json::from(schema));
    // Serializing our own record types cannot fail: they hold only strings, numbers, maps and JSON values.
    match serde_json::to_value(value).expect("records serialize to JSON") {
        Json::Object(fields) => object.extend(fields),
        other => {
            object.insert("value".into(), other);
        }
    }
    serde_json::to_vec(&Json::Object(object)).expect("a JSON object serializes")
}

/// Decodes a record written by [`encode`], checking its schema.
pub(crate) fn decode<T: DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<T, RecordError> {
    let damaged = |message: String| RecordError::Damaged {
        key: key.to_string(),
        message,
    };
    let mut value: Json = serde_json::from_slice(bytes).map_err(|err| damaged(err.to_string()))?;
    let object = value
        .as_object_mut()
        .ok_or_else(|| damaged("not a JSON object".into()))?;
    let schema = object
        .remove("schema")
        .and_then(|s| s.as_u64())
        .ok_or_else(|| damaged("no schema".into()))?;
    if schema > NEWEST_SCHEMA {
        return Err(RecordError::TooNew {
            key: key.to_string(),
            found: schema,
        });
    }
    serde_json::from_value(value).map_err(|err| damaged(err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_and_check_their_schema() {
        let bytes = encode(&serde_json::json!({"a": 1}));
        assert_eq!(String::from_utf8(bytes.clone()).unwrap(), r#"{"schema":1,"a":1}"#);
        let back: Json = decode("k", &bytes).unwrap();
        assert_eq!(back, serde_json::json!({"a": 1}));
        assert!(decode::<Json>("k", br#"{"schema":3}"#).is_ok());
        assert!(matches!(
            decode::<Json>("k", br#"{"schema":4}"#),
            Err(RecordError::TooNew { found: 4, .. })
        ));
        assert!(matches!(
            decode::<Json>("k", b"garbage"),
            Err(RecordError::Damaged { .. })
        ));
    }
}
