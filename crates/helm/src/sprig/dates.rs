//! Sprig's dates and durations with Go's layouts (`now`, `date`, `dateInZone`, `toDate`, `dateModify`, `ago`, `duration`, `durationRound`, `htmlDate`, `unixEpoch`, …).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
