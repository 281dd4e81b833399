//! Go's `text/template`, as Helm uses it: lexer, parser, executor and the builtin functions, over [`Value`]s.
//!
//! The engine is ours rather than a crate's because Helm's contract needs three things the Rust ports lack: maps
//! that templates mutate in place (Sprig's `set`/`merge`), functions that call back into the executing template
//! set (`include`, `tpl`), and positions (`file:line:col`) on execution errors as Go reports them.
//!
//! Usage: build a [`Templates`] set with a [`FuncMap`], [`Templates::parse`] each file under its name (its
//! `define`s join the set; a later non-empty definition replaces an earlier one, as Go's), then
//! [`Templates::execute`] a name with data. Every execution is bounded by [`Limits`].

pub mod fmt;
pub mod funcs;
pub mod value;

pub use funcs::{Arity, FuncDef, FuncError, FuncImpl, FuncMap, NoRuntime, Runtime};
pub use value::{Kind, Map, MapScope, Object, Value, ValueError};
