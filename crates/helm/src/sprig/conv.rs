//! Sprig's type conversions (`int`, `int64`, `float64`, `toString`, `toStrings`, `atoi`, `toDecimal`, …) and the loose conversions other families share.

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
