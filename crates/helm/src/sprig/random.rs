//! Sprig's randomness (`randAlphaNum`, `randAlpha`, `randNumeric`, `randAscii`, `randInt`, `randBytes`, `uuidv4`, `shuffle`).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
