//! Sprig's integer and float math (`add`, `sub`, `mul`, `div`, `mod`, `max`, `min`, `floor`, `ceil`, `round`, `addf`, …).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
