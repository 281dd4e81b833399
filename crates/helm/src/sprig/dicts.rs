//! Sprig's dicts (`dict`, `get`, `set`, `unset`, `hasKey`, `pluck`, `dig`, `merge`, `mergeOverwrite`, `pick`, `omit`, `deepCopy`, …).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
