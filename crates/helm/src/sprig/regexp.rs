//! Sprig's regular expressions (`regexMatch`, `regexFind`, `regexReplaceAll`, `regexSplit`, `regexQuoteMeta`, `must…`).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
