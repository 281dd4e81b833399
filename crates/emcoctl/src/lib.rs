//! emcoctl: EMCO's command-line client. Reads emcoctl resource files ([`documents`]) and drives the EMCO API with
//! them; renders charts offline as emco would apply them ([`template`]).

pub mod client;
pub mod commands;
pub mod config;
pub mod documents;
pub mod status;
pub mod template;
