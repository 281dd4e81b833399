//! A JSON value a record keeps as the text it was written as: a resource's rendered manifest and the
//! ResourceBundleState status heard from a cluster. Reading and rewriting a record copies such a value without
//! building its tree; whoever needs the value parses it ([`JsonText::to_json`]) or reads the part it needs
//! ([`JsonText::read`]).

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use serde_json::value::RawValue;

/// A JSON value held as its (compact) text; stored exactly as a JSON value in place would be.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonText(Box<RawValue>);

impl JsonText {
    /// The text of `value`.
    #[must_use]
    pub fn new(value: &Json) -> Self {
        // A JSON tree always serializes: its map keys are strings.
        Self(serde_json::value::to_raw_value(value).expect("a JSON value serializes"))
    }

    /// Checks that `text` is one JSON value and keeps it as it is.
    ///
    /// # Errors
    /// The parser's error when it is not.
    pub fn from_text(text: String) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text).map(Self)
    }

    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The value as a JSON tree.
    ///
    /// # Errors
    /// The parser's error: the text is valid JSON, but may nest deeper than the parser's limit.
    pub fn to_json(&self) -> Result<Json, serde_json::Error> {
        self.read()
    }

    /// Reads the value into `T`, which may name only the fields it needs (the others are skipped unread).
    ///
    /// # Errors
    /// The parser's error when the value does not have `T`'s shape.
    pub fn read<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }
}

impl From<&Json> for JsonText {
    fn from(value: &Json) -> Self {
        Self::new(value)
    }
}

impl From<Box<RawValue>> for JsonText {
    fn from(text: Box<RawValue>) -> Self {
        Self(text)
    }
}

impl From<Json> for JsonText {
    fn from(value: Json) -> Self {
        Self::new(&value)
    }
}

/// Equal when the texts are: the same value written in another key order differs (a record compares what it
/// wrote with what it writes, both from the same writer).
impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for JsonText {}

impl fmt::Debug for JsonText {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Holder {
        manifest: JsonText,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<JsonText>,
    }

    #[test]
    fn a_value_is_stored_as_the_json_in_its_place_and_read_back_as_text() {
        let manifest =
            json!({"kind": "ConfigMap", "metadata": {"name": "a \"quoted\" name"}, "data": {"k": "v"}});
        let holder = Holder {
            manifest: JsonText::new(&manifest),
            status: None,
        };
        let bytes = serde_json::to_vec(&holder).unwrap();
        // The same bytes a tree in its place writes.
        assert_eq!(bytes, serde_json::to_vec(&json!({"manifest": manifest})).unwrap());
        let back: Holder = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, holder);
        assert_eq!(back.manifest.to_json().unwrap(), manifest);
        // Text written with spaces by another writer is kept as written.
        let spaced: Holder =
            serde_json::from_str(r#"{"manifest": { "kind" : "Service" }, "status": [1, 2]}"#).unwrap();
        assert_eq!(spaced.manifest.as_str(), r#"{ "kind" : "Service" }"#);
        assert_eq!(spaced.status.unwrap().to_json().unwrap(), json!([1, 2]));
    }

    #[test]
    fn parts_are_read_without_the_rest_and_bad_text_is_refused() {
        #[derive(Deserialize)]
        struct Kind {
            kind: String,
        }
        let text = JsonText::new(&json!({"kind": "Deployment", "spec": {"replicas": 3}}));
        assert_eq!(text.read::<Kind>().unwrap().kind, "Deployment");
        assert!(JsonText::new(&json!([1])).read::<Kind>().is_err());
        assert!(JsonText::from_text("{\"a\":".into()).is_err());
        assert!(JsonText::from_text("{} {}".into()).is_err());
        assert_eq!(
            JsonText::from_text("{\"a\":1}".into()).unwrap().as_str(),
            "{\"a\":1}"
        );
        // Valid text nested deeper than the parser's limit is kept, and refused when a tree is asked for.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        if let Ok(text) = JsonText::from_text(deep) {
            assert!(text.to_json().is_err());
        }
    }
}
