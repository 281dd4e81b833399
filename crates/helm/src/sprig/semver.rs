//! Sprig's semantic versions as Masterminds/semver has them (`semver`, `semverCompare`).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
