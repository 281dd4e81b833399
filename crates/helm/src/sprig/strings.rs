//! Sprig's strings (`trim`, `upper`, `replace`, `indent`, `nindent`, `quote`, `trunc`, `substr`, `wrap`, …).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
