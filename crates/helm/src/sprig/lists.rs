//! Sprig's lists (`list`, `append`, `first`, `rest`, `has`, `uniq`, `sortAlpha`, `until`, `seq`, …).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
