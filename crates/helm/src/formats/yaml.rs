//! YAML as `sigs.k8s.io/yaml` writes and reads it (Helm's `toYaml`, `fromYaml`, values files, rendered manifests).
//!
//! STUB: signatures are the contract; the Go-compatible writer and YAML 1.1 reader replace these bodies.

use serde_json::Value as Json;

use crate::gotemplate::Value;

/// Why YAML could not be written or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct YamlError(pub String);

/// `sigs.k8s.io/yaml.Marshal(value)`: the YAML text Go writes, ending in a newline.
pub fn marshal(value: &Value) -> Result<String, YamlError> {
    let json = value.to_json().map_err(|err| YamlError(err.to_string()))?;
    serde_saphyr::to_string(&json).map_err(|err| YamlError(err.to_string()))
}

/// `sigs.k8s.io/yaml.Unmarshal` into `interface{}`: one YAML document as JSON (YAML 1.1 scalars, keys stringified).
pub fn parse(text: &str) -> Result<Json, YamlError> {
    serde_saphyr::from_str(text).map_err(|err| YamlError(err.to_string()))
}

/// Every non-empty document of a multi-document stream, as JSON.
pub fn parse_documents(text: &str) -> Result<Vec<Json>, YamlError> {
    serde_saphyr::from_multiple(text).map_err(|err| YamlError(err.to_string()))
}
