//! The Helm chart model: loading a chart (archive or file list) with its subcharts, `Chart.yaml` metadata,
//! dependencies (`condition`, `tags`, `alias`, `import-values`), values coalescing with `global`, `values.schema.json`
//! validation, `.helmignore`, the `.Files` object and `.Capabilities`.
//!
//! STUB: filled in by the chart-model work; it replaces `crate::chart` and `crate::values`.
