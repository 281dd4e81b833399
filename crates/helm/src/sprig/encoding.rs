//! Sprig's encodings (`b64enc`, `b64dec`, `b32enc`, `b32dec`) and hashes (`sha1sum`, `sha256sum`, `sha512sum`, `adler32sum`).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
