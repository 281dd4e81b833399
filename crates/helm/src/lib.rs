//! Helm-chart rendering for EMCO apps, exactly as Helm v4 renders: read a chart archive with its subcharts, layer the
//! user's values (an app profile's values, a DIG's `key=value` overrides) over the chart's defaults, render every
//! template with Go's text/template semantics and every Sprig and Helm function, and split the output into
//! Kubernetes objects, hooks and CRDs as Helm does.
//!
//! The pipeline mirrors Helm's, one module per stage: [`charts`] (loading, dependencies, values coalescing, schema,
//! `.Files`, `.Capabilities`, what each template sees), [`gotemplate`] (Go's text/template and fmt), [`sprig`] and
//! [`formats`] (the function library, Go-exact YAML/JSON/TOML), [`engine`] (Helm's own functions, parse and execute
//! order, Helm's error messages), [`render`] (objects for EMCO) and [`hooks`] (Helm hook annotations). Rendering is
//! bounded in time, memory and stack; a chart the renderer refuses gets Helm's message; nothing panics.
//!
//! Architecture invariant: pure computation over bytes handed in; no file system, network or store access.

pub mod archive;
pub mod charts;
pub mod engine;
pub mod formats;
pub mod gotemplate;
pub mod hooks;
pub mod profile;
pub mod render;
pub mod sprig;
pub mod values;

pub use charts::{Chart, ChartError, load_archive};
pub use profile::{AppProfileValues, ProfileError, read_app_profile};
pub use render::{
    Manifest, Release, RenderError, RenderLimits, render_chart, render_chart_observed, render_chart_within,
    render_templates, render_templates_within,
};
pub use values::{ValuesError, apply_set, merge_values};
