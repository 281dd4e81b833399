//! Sprig's JSON as Sprig writes it (`toJson`, `toPrettyJson`, `toRawJson`, `mustToJson`, …).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
