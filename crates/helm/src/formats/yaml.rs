//! YAML as `sigs.k8s.io/yaml` writes and reads it (Helm's `toYaml`, `fromYaml`, values files, rendered manifests).
//!
//! - [`marshal`]: `sigs.k8s.io/yaml.Marshal` — the value goes through `encoding/json` (sorted keys, integral floats
//!   as integers, `[]byte` as base64), then go-yaml v2 reads that JSON and writes YAML with its emitter (2-space
//!   indentation, sequences under a key not indented, go-yaml's "natural" key order, 80-column folding).
//! - [`marshal_pretty`]: go-yaml v3's encoder with `SetIndent(2)` (Helm's `toYamlPretty`; sequences indented).
//! - [`parse`], [`parse_documents`]: `sigs.k8s.io/yaml.Unmarshal` into `interface{}` — YAML 1.1 scalars as go-yaml
//!   v2 resolves them (`n` is `false`, `0755` is 493), merge keys, keys stringified as JSON needs them; numbers come
//!   back as JSON numbers (Helm turns them all into `float64`).

mod read;
mod resolve;
mod write;

use serde_json::Value as Json;

use crate::gotemplate::Value;

pub use read::{MAX_DEPTH, MAX_EXPANDED_NODES, MAX_INPUT_BYTES};

/// Why YAML could not be written or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct YamlError(pub String);

/// `sigs.k8s.io/yaml.Marshal(value)`: the YAML text Go writes, ending in a newline.
pub fn marshal(value: &Value) -> Result<String, YamlError> {
    write::marshal(value, write::Flavor::SigsV2)
}

/// go-yaml v3's `Encoder` with `SetIndent(2)` (Helm's `toYamlPretty`), ending in a newline.
pub fn marshal_pretty(value: &Value) -> Result<String, YamlError> {
    write::marshal(value, write::Flavor::PrettyV3)
}

/// `sigs.k8s.io/yaml.Unmarshal` into `interface{}`: the first YAML document as JSON (YAML 1.1 scalars, keys
/// stringified); `null` when the text holds no document.
pub fn parse(text: &str) -> Result<Json, YamlError> {
    read::first_document(text)
}

/// Every non-empty document of a multi-document stream, as JSON.
pub fn parse_documents(text: &str) -> Result<Vec<Json>, YamlError> {
    Ok(read::documents(text)?.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests;
