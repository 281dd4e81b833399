//! JSON as Go's `encoding/json` writes it (sorted keys, `<`, `>`, `&` escaped unless raw, Go's float format).
//!
//! STUB: signatures are the contract.

use crate::gotemplate::Value;

/// Why a value could not be written as JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonError(pub String);

/// `json.Marshal(value)` (`escape_html`: Go's default; Sprig's `toRawJson` turns it off), indented like
/// `json.MarshalIndent(value, "", indent)` when `indent` is given.
pub fn marshal(value: &Value, escape_html: bool, indent: Option<&str>) -> Result<String, JsonError> {
    let _ = escape_html;
    let json = value.to_json().map_err(|err| JsonError(err.to_string()))?;
    match indent {
        Some(_) => serde_json::to_string_pretty(&json),
        None => serde_json::to_string(&json),
    }
    .map_err(|err| JsonError(err.to_string()))
}
