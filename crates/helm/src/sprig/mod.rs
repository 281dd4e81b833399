//! Sprig's template functions, as Helm registers them (Sprig's `TxtFuncMap` without `env` and `expandenv`).
//!
//! One module per family, as Sprig's own files are organised; each registers its functions into a [`FuncMap`].

mod conv;
mod crypto;
mod dates;
mod dicts;
mod encoding;
mod json;
mod lists;
mod math;
pub(crate) mod paths;
mod random;
mod reflect;
mod regexp;
pub(crate) mod semver;
mod strings;

use crate::gotemplate::FuncMap;

/// Every Sprig function Helm exposes.
#[must_use]
pub fn sprig_funcs() -> FuncMap {
    let mut map = FuncMap::new();
    strings::register(&mut map);
    lists::register(&mut map);
    dicts::register(&mut map);
    math::register(&mut map);
    conv::register(&mut map);
    regexp::register(&mut map);
    reflect::register(&mut map);
    paths::register(&mut map);
    encoding::register(&mut map);
    crypto::register(&mut map);
    random::register(&mut map);
    semver::register(&mut map);
    dates::register(&mut map);
    json::register(&mut map);
    // Helm removes the functions that read the process environment.
    map.remove("env");
    map.remove("expandenv");
    map
}
