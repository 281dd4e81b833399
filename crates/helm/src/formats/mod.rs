//! Data formats exactly as Helm's Go libraries write and read them: YAML (`sigs.k8s.io/yaml`, i.e. go-yaml with
//! YAML 1.1 scalars, through JSON), JSON (`encoding/json`) and TOML, plus the template functions built on them
//! (`toYaml`, `fromYaml`, `toJson`, `fromJson`, `toToml`, …).
//!
//! Byte-exact output matters: charts paste `toYaml` into text with `nindent` and hash rendered files into checksum
//! annotations.
//!
//! - [`yaml`]: `sigs.k8s.io/yaml` (go-yaml v2 emitter and YAML 1.1 reader; go-yaml v3 for `toYamlPretty`). The
//!   reader is built on `granit-parser`'s events (the parser `serde-saphyr` uses), resolving scalars itself.
//! - [`json`]: `encoding/json` (writer, Go's float format, Go's syntax-error messages).
//! - [`toml`]: BurntSushi/toml's encoder; reading through `toml_edit`.
//! - [`funcs`]: Helm's template functions over them; register them after Sprig's (`crate::sprig`), whose
//!   `toJson`/`mustToJson`/`fromJson` they replace, as Helm does.

pub mod funcs;
pub mod json;
pub mod toml;
pub mod yaml;

/// Runs one level of a recursive walk, on a fresh stack segment when the current one runs low: values may nest up
/// to `MAX_VALUE_DEPTH` levels, more than a thread's default stack holds in debug builds.
pub(crate) fn deeper<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, f)
}
