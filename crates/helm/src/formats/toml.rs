//! TOML as Helm's `toToml` writes it (BurntSushi/toml's encoder).
//!
//! STUB: filled in with the formats work.
