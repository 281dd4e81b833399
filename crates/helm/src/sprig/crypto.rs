//! Sprig's keys, certificates and secrets (`genPrivateKey`, `genCA`, `genSelfSignedCert`, `genSignedCert`, `derivePassword`, `htpasswd`, `encryptAES`, `decryptAES`, `buildCustomCert`, …).

use crate::gotemplate::FuncMap;

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    let _ = map;
}
