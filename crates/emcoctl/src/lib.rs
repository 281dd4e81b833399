//! emcoctl: EMCO's command-line client. Reads emcoctl resource files ([`documents`]) and drives the EMCO API with
//! them; renders charts offline as emco would apply them ([`template`]); judges the health of Kubernetes objects in
//! a file ([`readiness`]); prints a DIG's combined status as tables ([`combined`]) and what a DIG would apply per
//! cluster ([`preview`]).

pub mod client;
pub mod combined;
pub mod commands;
pub mod config;
pub mod documents;
pub mod preview;
pub mod readiness;
pub mod sse;
pub mod status;
pub mod template;
