//! Helm-chart rendering for EMCO apps: read a chart archive (`.tgz`), merge its values with an app profile's
//! override values and a DIG's `key=value` overrides, render every template with Go template semantics and
//! Helm's common functions, and split the output into Kubernetes manifests.
//!
//! The template engine is `gotmpl` (a port of Go's text/template); this crate adds Helm's data (`.Values`,
//! `.Release`, `.Chart`, `.Capabilities`, `.Template`) and function layer ([`funcs`]). A template the renderer
//! cannot handle is an error that names the file (and the line, where the engine reports one); nothing panics.
//!
//! The replacement pipeline is being built beside it: [`gotemplate`] (Go's text/template), [`sprig`] (Sprig's
//! functions).
//!
//! Architecture invariant: pure computation over bytes handed in; no file system, network or store access.

pub mod archive;
pub mod chart;
pub mod charts;
pub mod engine;
pub mod formats;
pub mod funcs;
pub mod gotemplate;
pub mod hooks;
pub mod render;
pub mod sprig;
pub mod values;

pub use chart::{AppProfileValues, read_app_profile, read_chart};
pub use render::{Manifest, Release, RenderError, render_chart, render_templates};
pub use values::{ValuesError, apply_set, merge_values};
