//! Strict reading of JSON request documents. `serde_json` keeps the last of two equal keys in an object without a
//! word, so `{"metadata":{"name":"a","name":"b"}}` would store `b` while the sender may have meant `a`; here the
//! document is walked once, building the same `serde_json::Value` serde_json builds, and a repeated key anywhere
//! is refused naming it and where it is. Nesting is bounded ([`MAX_DEPTH`]), whatever serde_json's own limit.
//!
//! [`JsonPath`] is the one way the API writes a place in a document (`spec.overrideValues[0].app`), used for
//! duplicate keys here and for wrongly typed fields when a body is decoded.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value as Json};

/// How deeply objects and arrays may nest in a request document (EMCO's bodies nest fewer than ten levels).
pub(crate) const MAX_DEPTH: usize = 64;

/// The longest key shown in a message; longer keys are cut (a key can be megabytes long).
const MAX_SHOWN_KEY: usize = 64;

/// Why a document was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StrictJsonError {
    /// Not JSON at all (syntax, truncation, trailing bytes, numbers out of range).
    #[error("{0}")]
    Malformed(serde_json::Error),
    /// An object holds the same key twice.
    #[error("duplicate key '{key}' at line {line} column {column}")]
    DuplicateKey {
        /// The repeated key with its path.
        key: JsonPath,
        /// Where the second one is.
        line: usize,
        /// Its column.
        column: usize,
    },
    /// Objects and arrays nest deeper than [`MAX_DEPTH`].
    #[error("'{at}' nests deeper than {MAX_DEPTH} levels (line {line} column {column})")]
    TooDeep {
        /// The container that is one level too deep.
        at: JsonPath,
        /// Where it starts.
        line: usize,
        /// Its column.
        column: usize,
    },
}

/// A place in a JSON document: object keys and array indices from the root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct JsonPath(Vec<Step>);

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

impl JsonPath {
    /// A path from its steps, root first.
    pub(crate) fn new(steps: Vec<Step>) -> Self {
        Self(steps)
    }

    /// Whether this is the document itself.
    pub(crate) fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// This path extended by an object member.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut steps = self.0.clone();
        steps.push(Step::Key(key.to_string()));
        Self(steps)
    }

    /// The value at this path in `document`, if there is one.
    pub(crate) fn find<'a>(&self, document: &'a Json) -> Option<&'a Json> {
        self.0.iter().try_fold(document, |value, step| match step {
            Step::Key(key) => value.get(key.as_str()),
            Step::Index(index) => value.get(*index),
        })
    }
}

impl fmt::Display for JsonPath {
    /// `metadata.name`, `spec.overrideValues[0].app`; a key that is not a plain word is quoted (`labels["a.b"]`),
    /// and a long one is cut to 64 characters followed by `…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(the document)");
        }
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Index(index) => write!(f, "[{index}]")?,
                Step::Key(key) if is_plain_key(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Step::Key(key) => {
                    let shown: String = key.chars().take(MAX_SHOWN_KEY).collect();
                    let cut = if shown.len() < key.len() { "…" } else { "" };
                    write!(f, "[{}{cut}]", Json::String(shown))?;
                }
            }
        }
        Ok(())
    }
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key.chars().count() <= MAX_SHOWN_KEY
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$' | '@'))
}

/// Parses a whole JSON document, refusing repeated keys and nesting deeper than [`MAX_DEPTH`].
pub(crate) fn parse_strict(bytes: &[u8]) -> Result<Json, StrictJsonError> {
    let refusal = Cell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let node = Node {
        at: &Place::Root,
        depth: 0,
        refusal: &refusal,
    };
    let parsed = node.deserialize(&mut deserializer).and_then(|value| {
        deserializer.end()?;
        Ok(value)
    });
    parsed.map_err(|err| match refusal.take() {
        Some(Refusal::DuplicateKey(key)) => StrictJsonError::DuplicateKey {
            key,
            line: err.line(),
            column: err.column(),
        },
        Some(Refusal::TooDeep(at)) => StrictJsonError::TooDeep {
            at,
            line: err.line(),
            column: err.column(),
        },
        None => StrictJsonError::Malformed(err),
    })
}

/// What the walk refused; serde_json's error only carries text, so the reason travels beside it.
enum Refusal {
    DuplicateKey(JsonPath),
    TooDeep(JsonPath),
}

/// Where the walk is, as a chain borrowed from the callers (no allocation per value).
enum Place<'a> {
    Root,
    Key(&'a Place<'a>, &'a str),
    Index(&'a Place<'a>, usize),
}

impl Place<'_> {
    fn path(&self) -> JsonPath {
        let mut steps = Vec::new();
        let mut place = self;
        loop {
            match place {
                Place::Root => break,
                Place::Key(parent, key) => {
                    steps.push(Step::Key((*key).to_string()));
                    place = parent;
                }
                Place::Index(parent, index) => {
                    steps.push(Step::Index(*index));
                    place = parent;
                }
            }
        }
        steps.reverse();
        JsonPath(steps)
    }
}

/// One value of the document being read: a seed and visitor that builds it as serde_json's `Value` does.
struct Node<'a> {
    at: &'a Place<'a>,
    depth: usize,
    refusal: &'a Cell<Option<Refusal>>,
}

impl Node<'_> {
    fn enter<E: de::Error>(&self) -> Result<(), E> {
        if self.depth >= MAX_DEPTH {
            self.refusal.set(Some(Refusal::TooDeep(self.at.path())));
            return Err(E::custom("nested too deeply"));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Json;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Json, E> {
        Ok(Json::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Json, E> {
        Ok(Json::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Json, E> {
        Ok(Json::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Json, E> {
        // As serde_json: a float that is not finite becomes null (the parser never yields one).
        Ok(Number::from_f64(value).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Json, E> {
        Ok(Json::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Json, E> {
        Ok(Json::String(value))
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        self.enter()?;
        let mut items = Vec::new();
        loop {
            let at = Place::Index(self.at, items.len());
            let node = Node {
                at: &at,
                depth: self.depth + 1,
                refusal: self.refusal,
            };
            match seq.next_element_seed(node)? {
                Some(item) => items.push(item),
                None => return Ok(Json::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        self.enter()?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let at = Place::Key(self.at, &key);
                self.refusal.set(Some(Refusal::DuplicateKey(at.path())));
                return Err(de::Error::custom("duplicate key"));
            }
            let at = Place::Key(self.at, &key);
            let value = map.next_value_seed(Node {
                at: &at,
                depth: self.depth + 1,
                refusal: self.refusal,
            })?;
            object.insert(key, value);
        }
        Ok(Json::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[track_caller]
    fn refusal(text: &str) -> String {
        parse_strict(text.as_bytes())
            .expect_err("the document is refused")
            .to_string()
    }

    #[test]
    fn builds_what_serde_json_builds() {
        for text in [
            r#"{"a":1,"b":[1,-2,3.5,1e400,true,null,"x\u00e9"],"c":{"d":{},"e":[]},"z":18446744073709551615}"#,
            "[]",
            "\"s\"",
            "  -0.0  ",
            r#"{"z":1,"a":2,"m":{"y":1,"b":2}}"#,
        ] {
            let ours = parse_strict(text.as_bytes());
            let theirs: Result<Json, _> = serde_json::from_str(text);
            match (ours, theirs) {
                (Ok(ours), Ok(theirs)) => {
                    assert_eq!(ours, theirs, "{text}");
                    assert_eq!(ours.to_string(), theirs.to_string(), "key order of {text}");
                }
                (Err(StrictJsonError::Malformed(_)), Err(_)) => {}
                (ours, theirs) => panic!("{text}: {ours:?} vs {theirs:?}"),
            }
        }
    }

    #[test]
    fn repeated_keys_are_refused_naming_the_key_and_its_place() {
        assert_eq!(
            refusal(r#"{"metadata":{"name":"a","name":"b"}}"#),
            "duplicate key 'metadata.name' at line 1 column 30"
        );
        assert!(refusal(r#"{"a":1,"a":1}"#).starts_with("duplicate key 'a' "));
        assert!(
            refusal(r#"{"spec":{"items":[{},{"k":1,"k":2}]}}"#)
                .starts_with("duplicate key 'spec.items[1].k' ")
        );
        assert!(refusal(r#"{"x":{"a.b":1,"a.b":2}}"#).starts_with(r#"duplicate key 'x["a.b"]' "#));
        // Escapes are decoded before keys are compared.
        assert!(refusal(r#"{"n":1,"\u006e":2}"#).starts_with("duplicate key 'n' "));
        // The same key in two different objects is fine.
        assert!(parse_strict(br#"{"a":{"k":1},"b":{"k":1}}"#).is_ok());
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        assert!(parse_strict(deep(MAX_DEPTH).as_bytes()).is_ok());
        let message = refusal(&deep(MAX_DEPTH + 1));
        assert!(message.contains("nests deeper than 64 levels"), "{message}");
        let message = refusal(&deep(100_000));
        assert!(message.contains("nests deeper"), "{message}");
    }

    proptest::proptest! {
        /// Against serde_json itself: whatever it parses, the strict parse gives the same value (key order
        /// included) unless it found a repeated key or too deep a nesting; whatever it refuses is refused.
        #[test]
        fn agrees_with_serde_json_on_anything(text in "[\\[\\]{}\":,. 0-9a-e\\\\-]{0,80}|\\{(\"[ab]\":[0-9],?){0,4}\\}") {
            let ours = parse_strict(text.as_bytes());
            match (serde_json::from_str::<Json>(&text), ours) {
                (Ok(theirs), Ok(ours)) => {
                    proptest::prop_assert_eq!(ours.to_string(), theirs.to_string());
                }
                (Ok(_), Err(StrictJsonError::DuplicateKey { .. } | StrictJsonError::TooDeep { .. })) => {}
                (Err(_), Err(_)) => {}
                (theirs, ours) => proptest::prop_assert!(false, "{text:?}: serde_json {theirs:?}, strict {ours:?}"),
            }
        }
    }

    #[test]
    fn paths_find_their_values_and_print_plainly() {
        let document = json!({"spec": {"list": [{"app": "x"}]}});
        let path = JsonPath::new(vec![
            Step::Key("spec".into()),
            Step::Key("list".into()),
            Step::Index(0),
            Step::Key("app".into()),
        ]);
        assert_eq!(path.to_string(), "spec.list[0].app");
        assert_eq!(path.find(&document), Some(&json!("x")));
        assert_eq!(JsonPath::default().key("k").to_string(), "k");
        let long = "k".repeat(100);
        assert_eq!(
            JsonPath::default().key(&long).to_string(),
            format!("[\"{}\"…]", "k".repeat(64))
        );
    }
}
