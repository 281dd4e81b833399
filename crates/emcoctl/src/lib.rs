//! emcoctl: EMCO's command-line client. Reads emcoctl resource files ([`documents`]) and drives the EMCO API with
//! them.

pub mod documents;
