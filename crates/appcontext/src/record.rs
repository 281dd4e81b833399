//! The versioned envelope of every stored JSON record: `{"schema": N, ...}`.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StringDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

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

/// Encodes `value` with the schema field `schema` first: an object's fields follow it; any other value is the
/// field `value`. The record is written straight from `value` (no intermediate JSON tree).
pub(crate) fn encode_with_schema<T: Serialize>(value: &T, schema: u64) -> Vec<u8> {
    // Serializing our own record types cannot fail: they hold only strings, numbers, maps and JSON values.
    let body = serde_json::to_vec(value).expect("records serialize to JSON");
    let mut bytes = Vec::with_capacity(body.len() + 24);
    bytes.extend_from_slice(format!("{{\"schema\":{schema}").as_bytes());
    match body.as_slice() {
        b"{}" => bytes.push(b'}'),
        [b'{', fields @ ..] => {
            bytes.push(b',');
            bytes.extend_from_slice(fields);
        }
        other => {
            bytes.extend_from_slice(b",\"value\":");
            bytes.extend_from_slice(other);
            bytes.push(b'}');
        }
    }
    bytes
}

/// Decodes a record written by [`encode`], checking its schema. The record is read straight into `T` (no
/// intermediate JSON tree); the schema field is taken out on the way.
pub(crate) fn decode<T: DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<T, RecordError> {
    let damaged = |message: String| RecordError::Damaged {
        key: key.to_string(),
        message,
    };
    let mut schema = None;
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let decoded = Envelope::<T> {
        schema: &mut schema,
        record: PhantomData,
    }
    .deserialize(&mut deserializer)
    .and_then(|record| deserializer.end().map(|()| record));
    // A newer schema explains a record this build cannot read, so it is checked before the decoder's verdict.
    match schema {
        Some(found) if found > NEWEST_SCHEMA => Err(RecordError::TooNew {
            key: key.to_string(),
            found,
        }),
        _ => {
            let record = decoded.map_err(|err| damaged(err.to_string()))?;
            match schema {
                Some(_) => Ok(record),
                None => Err(damaged("no schema".into())),
            }
        }
    }
}

/// Reads a record object into `T`, handing every field but `schema` to `T` and keeping `schema` aside.
struct Envelope<'s, T> {
    schema: &'s mut Option<u64>,
    record: PhantomData<T>,
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for Envelope<'_, T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for Envelope<'_, T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a record object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(WithoutSchema {
            map,
            schema: self.schema,
        }))
    }
}

/// The fields of a record object without its `schema` field, which goes to `schema`.
struct WithoutSchema<'s, A> {
    map: A,
    schema: &'s mut Option<u64>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WithoutSchema<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        loop {
            match self.map.next_key::<FieldName<'de>>()? {
                None => return Ok(None),
                Some(FieldName::Schema) => *self.schema = Some(self.map.next_value()?),
                Some(FieldName::Borrowed(name)) => {
                    return seed.deserialize(BorrowedStrDeserializer::new(name)).map(Some);
                }
                Some(FieldName::Owned(name)) => {
                    return seed.deserialize(StringDeserializer::new(name)).map(Some);
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A record field's name: `schema`, or another, borrowed from the record's bytes where it has no escapes.
enum FieldName<'de> {
    Schema,
    Borrowed(&'de str),
    Owned(String),
}

impl<'de> Deserialize<'de> for FieldName<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(FieldNameVisitor)
    }
}

struct FieldNameVisitor;

impl<'de> Visitor<'de> for FieldNameVisitor {
    type Value = FieldName<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a field name")
    }

    fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<FieldName<'de>, E> {
        Ok(match name {
            "schema" => FieldName::Schema,
            _ => FieldName::Borrowed(name),
        })
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<FieldName<'de>, E> {
        Ok(match name {
            "schema" => FieldName::Schema,
            _ => FieldName::Owned(name.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::Value as Json;

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

    /// A record type with an optional field, an escaped field name and a nested JSON value.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        name: String,
        #[serde(rename = "quoted\"field")]
        quoted: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        body: Json,
    }

    fn sample() -> Sample {
        Sample {
            name: "web \"one\"".into(),
            quoted: 7,
            note: None,
            body: serde_json::json!({"schema": "inner, not the record's", "list": [1, "two"]}),
        }
    }

    #[test]
    fn typed_records_round_trip_without_the_schema_field_reaching_them() {
        let bytes = encode_with_schema(&sample(), 2);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.starts_with(r#"{"schema":2,"name":"#), "{text}");
        assert_eq!(decode::<Sample>("k", &bytes).unwrap(), sample());
        // The schema where another writer put it, among the fields, is found too.
        let moved = br#"{"name":"a","quoted\"field":1,"schema":1,"body":null}"#;
        assert_eq!(decode::<Sample>("k", moved).unwrap().quoted, 1);
        // A map-shaped record does not see the schema field; a nested "schema" is data.
        let back: Json = decode("k", &bytes).unwrap();
        assert!(back.get("schema").is_none());
        assert_eq!(back["body"]["schema"], "inner, not the record's");
        // Values that are not objects are kept under "value".
        let list = encode(&vec![1, 2]);
        assert_eq!(
            String::from_utf8(list.clone()).unwrap(),
            r#"{"schema":1,"value":[1,2]}"#
        );
        let empty = encode(&serde_json::json!({}));
        assert_eq!(String::from_utf8(empty).unwrap(), r#"{"schema":1}"#);
    }

    #[test]
    fn damaged_and_newer_records_are_named() {
        let damaged = |bytes: &[u8]| match decode::<Sample>("the/key", bytes) {
            Err(RecordError::Damaged { key, message }) => {
                assert_eq!(key, "the/key");
                message
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(
            damaged(br#"{"name":"a","quoted\"field":1,"body":1}"#),
            "no schema"
        );
        assert!(damaged(br#"{"schema":1,"name":"a"}"#).contains("missing field"));
        assert!(damaged(br#"{"schema":"one","name":"a"}"#).contains("invalid type"));
        assert!(damaged(br#"[1, 2]"#).contains("a record object"));
        assert!(
            damaged(br#"{"schema":1,"name":"a","quoted\"field":1,"body":1} trailing"#).contains("trailing")
        );
        // A newer schema is reported as such even when this build cannot read the rest.
        assert!(matches!(
            decode::<Sample>("k", br#"{"schema":9,"name":{"new":"shape"}}"#),
            Err(RecordError::TooNew { found: 9, .. })
        ));
    }
}
