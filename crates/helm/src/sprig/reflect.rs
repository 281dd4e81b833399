//! Sprig's type inspection and comparison (`typeOf`, `typeIs`, `kindOf`, `kindIs`, `deepEqual`) and defaults (`default`, `empty`, `coalesce`, `all`, `any`, `ternary`, `fail`).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
