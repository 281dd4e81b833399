//! emcoctl: EMCO's command-line client. Reads emcoctl resource files ([`documents`]) and drives the EMCO API with
//! them.

pub mod client;
pub mod commands;
pub mod config;
pub mod documents;
pub mod status;
