//! Sprig's keys, certificates and secrets (`genPrivateKey`, `genCA`, `genSelfSignedCert`, `genSignedCert`, `derivePassword`, `htpasswd`, `encryptAES`, `decryptAES`, `buildCustomCert`, …).
//!
//! Certificates are built as Go's `x509.CreateCertificate` builds them from Sprig's template: version 3, a random
//! 128-bit serial, subject `CN=…` only (PrintableString when Go would choose it), validity from now for `days × 24h`
//! (UTCTime before 2050), then the extensions in Go's order — key usage (critical; digital signature and key
//! encipherment, plus certificate signing for a CA), extended key usage (server and client auth), basic
//! constraints (critical), subject key identifier for a CA (the first 20 bytes of SHA-256 of the public key, as Go
//! 1.25+), authority key identifier (the issuer's subject key identifier, when not self-signed) and the subject
//! alternative names (DNS names, then IP addresses). Keys are RSA (2048 bits for certificates, 4096 for
//! `genPrivateKey`), ECDSA P-256 and Ed25519, written as Go writes them (PKCS#1 `RSA PRIVATE KEY`, SEC1 `EC PRIVATE
//! KEY`, PKCS#8 `PRIVATE KEY`). Certificates come back as `sprig.certificate` objects with `.Cert` and `.Key`.
//!
//! The DER is written and read here (a few dozen lines) rather than through an X.509 crate, so that every byte Go
//! chooses can be chosen the same way.

use std::rc::Rc;

use hmac::{KeyInit as _, Mac as _};
use rsa::pkcs1::{DecodeRsaPrivateKey as _, EncodeRsaPrivateKey as _};
use rsa::pkcs8::{DecodePrivateKey as _, EncodePublicKey as _};
use rsa::signature::{SignatureEncoding as _, Signer as _};
use sha2::Digest as _;

use super::encoding::{base64_decode, base64_encode};
use crate::gotemplate::fmt::sprint_value;
use crate::gotemplate::funcs::{check_text_len, param_int, param_list, param_str};
use crate::gotemplate::{Arity, FuncError, FuncMap, Map, Object, Runtime, Value};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("bcrypt", Arity::Exact(1), bcrypt_fn);
    map.add("htpasswd", Arity::Exact(2), htpasswd);
    map.add("genPrivateKey", Arity::Exact(1), gen_private_key);
    map.add("derivePassword", Arity::Exact(5), derive_password);
    map.add("buildCustomCert", Arity::Exact(2), build_custom_cert);
    map.add("genCA", Arity::Exact(2), gen_ca);
    map.add("genCAWithKey", Arity::Exact(3), gen_ca_with_key);
    map.add("genSelfSignedCert", Arity::Exact(4), gen_self_signed_cert);
    map.add(
        "genSelfSignedCertWithKey",
        Arity::Exact(5),
        gen_self_signed_cert_with_key,
    );
    map.add("genSignedCert", Arity::Exact(5), gen_signed_cert);
    map.add("genSignedCertWithKey", Arity::Exact(6), gen_signed_cert_with_key);
    map.add("encryptAES", Arity::Exact(2), encrypt_aes);
    map.add("decryptAES", Arity::Exact(2), decrypt_aes);
}

// ---------------------------------------------------------------------------------------------------------------
// bcrypt, htpasswd, derivePassword

/// Go's `bcrypt.GenerateFromPassword(password, 10)` in its `$2a$` form; Sprig returns failures as text.
fn bcrypt_hash(password: &str) -> String {
    if password.len() > 72 {
        return "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes".into();
    }
    match bcrypt::hash_with_result(password, 10) {
        Ok(parts) => parts.format_for_version(bcrypt::Version::TwoA),
        Err(error) => format!("failed to encrypt string with bcrypt: {error}"),
    }
}

fn bcrypt_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(bcrypt_hash(&param_str(&args[0])?)))
}

fn htpasswd(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let user = param_str(&args[0])?;
    let password = param_str(&args[1])?;
    if user.contains(':') {
        return Ok(Value::from(format!("invalid username: {user}")));
    }
    Ok(Value::from(format!("{user}:{}", bcrypt_hash(&password))))
}

const MASTER_PASSWORD_SEED: &str = "com.lyndir.masterpassword";

fn password_templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

fn template_characters(class: u8) -> &'static [u8] {
    match class {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        b'x' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
        _ => b"",
    }
}

/// The Master Password algorithm as Sprig implements it (scrypt N=32768 r=8 p=2, HMAC-SHA256, templates).
fn master_password(counter: u32, kind: &str, password: &str, user: &str, site: &str) -> String {
    let Some(templates) = password_templates(kind) else {
        return format!("cannot find password template {kind}");
    };
    let mut salt = MASTER_PASSWORD_SEED.as_bytes().to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let derived = scrypt::Params::new(15, 8, 2)
        .map_err(|error| error.to_string())
        .and_then(|params| {
            scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key).map_err(|e| e.to_string())
        });
    if let Err(error) = derived {
        return format!("failed to derive password: {error}");
    }
    let mut message = MASTER_PASSWORD_SEED.as_bytes().to_vec();
    message.extend_from_slice(&(site.len() as u32).to_be_bytes());
    message.extend_from_slice(site.as_bytes());
    message.extend_from_slice(&counter.to_be_bytes());
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key) else {
        return "failed to derive password: bad key".into();
    };
    mac.update(&message);
    let seed = mac.finalize().into_bytes();
    let template = templates[usize::from(seed[0]) % templates.len()];
    template
        .bytes()
        .enumerate()
        .map(|(index, class)| {
            let chars = template_characters(class);
            let pick = seed.get(index + 1).copied().unwrap_or(0);
            chars
                .get(usize::from(pick) % chars.len().max(1))
                .map_or('?', |c| char::from(*c))
        })
        .collect()
}

fn derive_password(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let counter = match &args[0] {
        Value::Int(n) => {
            u32::try_from(*n).map_err(|_| FuncError::new(format!("overflow: {n} for uint32")))?
        }
        Value::Nil => 0,
        other => return Err(crate::gotemplate::funcs::wrong_type("uint32", other)),
    };
    let kind = param_str(&args[1])?;
    let password = param_str(&args[2])?;
    let user = param_str(&args[3])?;
    let site = param_str(&args[4])?;
    Ok(Value::from(master_password(
        counter, &kind, &password, &user, &site,
    )))
}

// ---------------------------------------------------------------------------------------------------------------
// AES

fn aes_key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let bytes = password.as_bytes();
    let n = bytes.len().min(32);
    key[..n].copy_from_slice(&bytes[..n]);
    key
}

/// Sprig's `encryptAES`: AES-256-CBC with a random IV in front, PKCS#7 padding, base64.
pub(crate) fn aes_encrypt(password: &str, plaintext: &[u8]) -> Result<String, String> {
    use aes::cipher::{BlockCipherEncrypt as _, KeyInit as _};
    if plaintext.is_empty() {
        return Ok(String::new());
    }
    let cipher = aes::Aes256::new(&aes_key(password).into());
    let padding = 16 - plaintext.len() % 16;
    let mut content = plaintext.to_vec();
    content.extend(std::iter::repeat_n(padding as u8, padding));
    let mut iv = [0u8; 16];
    getrandom::fill(&mut iv).map_err(|error| error.to_string())?;
    let mut out = iv.to_vec();
    let mut previous = iv;
    for chunk in content.chunks(16) {
        let mut block = [0u8; 16];
        for (index, byte) in chunk.iter().enumerate() {
            block[index] = byte ^ previous[index];
        }
        let mut array = block.into();
        cipher.encrypt_block(&mut array);
        previous = array.into();
        out.extend_from_slice(&previous);
    }
    Ok(base64_encode(&out))
}

/// Sprig's `decryptAES`, with Go's errors (and Go's runtime panics, as text/template reports them).
pub(crate) fn aes_decrypt(password: &str, crypt64: &str) -> Result<Vec<u8>, String> {
    use aes::cipher::{BlockCipherDecrypt as _, KeyInit as _};
    if crypt64.is_empty() {
        return Ok(Vec::new());
    }
    let crypt = base64_decode(crypt64.as_bytes())?;
    if crypt.len() < 16 {
        return Err(format!(
            "runtime error: slice bounds out of range [:16] with capacity {}",
            crypt.len()
        ));
    }
    let (iv, body) = crypt.split_at(16);
    if body.len() % 16 != 0 {
        return Err("crypto/cipher: input not full blocks".into());
    }
    let cipher = aes::Aes256::new(&aes_key(password).into());
    let mut previous: [u8; 16] = iv.try_into().map_err(|_| "bad iv".to_string())?;
    let mut out = Vec::with_capacity(body.len());
    for chunk in body.chunks(16) {
        let block: [u8; 16] = chunk.try_into().map_err(|_| "bad block".to_string())?;
        let mut array = block.into();
        cipher.decrypt_block(&mut array);
        let plain: [u8; 16] = array.into();
        out.extend(plain.iter().zip(previous.iter()).map(|(a, b)| a ^ b));
        previous = block;
    }
    let Some(&last) = out.last() else {
        return Err("runtime error: index out of range [-1]".into());
    };
    let keep = out.len() as i64 - i64::from(last);
    if keep < 0 {
        return Err(format!("runtime error: slice bounds out of range [:{keep}]"));
    }
    out.truncate(keep as usize);
    Ok(out)
}

fn encrypt_aes(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let password = param_str(&args[0])?;
    let plaintext = param_str(&args[1])?;
    check_text_len("encryptAES", (plaintext.len() as u128 + 32) / 3 * 4 + 4)?;
    aes_encrypt(&password, plaintext.as_bytes())
        .map(Value::from)
        .map_err(FuncError::new)
}

fn decrypt_aes(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let password = param_str(&args[0])?;
    let crypt = param_str(&args[1])?;
    let bytes = aes_decrypt(&password, &crypt).map_err(FuncError::new)?;
    Ok(Value::from(String::from_utf8_lossy(&bytes).into_owned()))
}

// ---------------------------------------------------------------------------------------------------------------
// DER writing and reading

mod der {
    //! The DER this module needs: definite lengths, a handful of universal types.

    pub(super) fn len(out: &mut Vec<u8>, length: usize) {
        if length < 0x80 {
            out.push(length as u8);
        } else {
            let bytes = length.to_be_bytes();
            let skip = bytes.iter().take_while(|b| **b == 0).count();
            out.push(0x80 | (bytes.len() - skip) as u8);
            out.extend_from_slice(&bytes[skip..]);
        }
    }

    pub(super) fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(content.len() + 6);
        out.push(tag);
        len(&mut out, content.len());
        out.extend_from_slice(content);
        out
    }

    pub(super) fn seq(parts: &[&[u8]]) -> Vec<u8> {
        tlv(0x30, &parts.concat())
    }

    /// An unsigned big-endian integer, minimally encoded.
    pub(super) fn uint(bytes: &[u8]) -> Vec<u8> {
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        let mut content = Vec::with_capacity(bytes.len() + 1);
        let trimmed = &bytes[skip..];
        if trimmed.first().is_none_or(|b| *b & 0x80 != 0) {
            content.push(0);
        }
        content.extend_from_slice(trimmed);
        tlv(0x02, &content)
    }

    pub(super) fn bit_string(bytes: &[u8], unused: u8) -> Vec<u8> {
        let mut content = vec![unused];
        content.extend_from_slice(bytes);
        tlv(0x03, &content)
    }

    /// One element: (tag, content, whole encoding, rest).
    pub(super) struct Element<'a> {
        pub(super) tag: u8,
        pub(super) content: &'a [u8],
        pub(super) raw: &'a [u8],
    }

    pub(super) fn read(input: &[u8]) -> Option<(Element<'_>, &[u8])> {
        let tag = *input.first()?;
        if tag & 0x1f == 0x1f {
            return None;
        }
        let first = *input.get(1)?;
        let (length, header) = if first < 0x80 {
            (usize::from(first), 2)
        } else {
            let count = usize::from(first & 0x7f);
            if count == 0 || count > 4 {
                return None;
            }
            let mut length = 0usize;
            for index in 0..count {
                length = length << 8 | usize::from(*input.get(2 + index)?);
            }
            (length, 2 + count)
        };
        let end = header.checked_add(length)?;
        if end > input.len() {
            return None;
        }
        Some((
            Element {
                tag,
                content: &input[header..end],
                raw: &input[..end],
            },
            &input[end..],
        ))
    }

    /// Every element of a constructed value's content.
    pub(super) fn children(mut content: &[u8]) -> Option<Vec<Element<'_>>> {
        let mut out = Vec::new();
        while !content.is_empty() {
            let (element, rest) = read(content)?;
            out.push(element);
            content = rest;
        }
        Some(out)
    }
}

const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_SHA256_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];
const OID_EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_ECDSA_SHA256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];
const OID_COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
const OID_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x0f];
const OID_EXT_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25];
const OID_BASIC_CONSTRAINTS: &[u8] = &[0x55, 0x1d, 0x13];
const OID_SUBJECT_KEY_ID: &[u8] = &[0x55, 0x1d, 0x0e];
const OID_AUTHORITY_KEY_ID: &[u8] = &[0x55, 0x1d, 0x23];
const OID_SUBJECT_ALT_NAME: &[u8] = &[0x55, 0x1d, 0x11];
const OID_SERVER_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01];
const OID_CLIENT_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02];

fn oid(bytes: &[u8]) -> Vec<u8> {
    der::tlv(0x06, bytes)
}

// ---------------------------------------------------------------------------------------------------------------
// PEM

/// Go's `pem.EncodeToMemory` (no headers).
fn pem_encode(kind: &str, der: &[u8]) -> String {
    let body = base64_encode(der);
    let mut out = format!("-----BEGIN {kind}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {kind}-----\n"));
    out
}

/// Go's `pem.Decode`: the first well-formed block (type and DER), headers skipped.
fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let type_end = after.find("-----")?;
        let kind = &after[..type_end];
        let body_start = &after[type_end + 5..];
        let end_marker = format!("-----END {kind}-----");
        if !kind.contains('\n')
            && (body_start.starts_with('\n') || body_start.starts_with("\r\n"))
            && let Some(end) = body_start.find(&end_marker)
        {
            let body = &body_start[..end];
            // Skip RFC 1421 headers ("Key: value" lines followed by a blank line).
            let body = match body.find("\n\n") {
                Some(blank) if body[..blank].contains(':') => &body[blank + 2..],
                _ => body,
            };
            let clean: Vec<u8> = body.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            if let Ok(der) = base64_decode(&clean) {
                return Some((kind.to_string(), der));
            }
        }
        rest = &rest[start + 11..];
    }
    None
}

// ---------------------------------------------------------------------------------------------------------------
// Keys

/// Go's refusal to sign a certificate with a DSA key.
const NOT_A_SIGNER: &str = "x509: certificate private key does not implement crypto.Signer";

enum PrivateKey {
    Rsa(Box<rsa::RsaPrivateKey>),
    Ec(p256::SecretKey),
    Ed25519([u8; 32]),
    /// A DSA key Sprig can read and print but Go cannot sign certificates with (its DER, as Sprig writes it).
    Dsa(Vec<u8>),
}

fn rng() -> rsa::rand_core::UnwrapErr<getrandom::SysRng> {
    rsa::rand_core::UnwrapErr(getrandom::SysRng)
}

fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|error| error.to_string())?;
    Ok(bytes)
}

impl PrivateKey {
    fn generate_rsa(bits: usize) -> Result<PrivateKey, String> {
        rsa::RsaPrivateKey::new(&mut rng(), bits)
            .map(|key| PrivateKey::Rsa(Box::new(key)))
            .map_err(|error| error.to_string())
    }

    fn generate_ec() -> Result<PrivateKey, String> {
        loop {
            let bytes = random_bytes::<32>()?;
            if let Ok(key) = p256::SecretKey::from_slice(&bytes) {
                return Ok(PrivateKey::Ec(key));
            }
        }
    }

    /// Go's `dsa.GenerateParameters(L2048N256)` and `dsa.GenerateKey`, kept as Sprig's `DSAKeyFormat` DER.
    fn generate_dsa() -> Result<PrivateKey, String> {
        let mut rng = getrandom::SysRng;
        let components =
            dsa::Components::try_generate_from_rng_with_key_size(&mut rng, dsa::KeySize::DSA_2048_256)
                .map_err(|error| format!("failed to generate dsa params: {error}"))?;
        let key = dsa::SigningKey::try_generate_from_rng_with_components(&mut rng, components)
            .map_err(|error| error.to_string())?;
        let public = key.verifying_key();
        let parts = public.components();
        let int = |value: &rsa::BoxedUint| der::uint(&value.to_be_bytes());
        let der = der::seq(&[
            &der::tlv(0x02, &[0]),
            &int(parts.p().as_ref()),
            &int(parts.q().as_ref()),
            &int(parts.g().as_ref()),
            &int(public.y().as_ref()),
            &int(key.x().as_ref()),
        ]);
        Ok(PrivateKey::Dsa(der))
    }

    fn generate_ed25519() -> Result<PrivateKey, String> {
        Ok(PrivateKey::Ed25519(random_bytes::<32>()?))
    }

    /// Sprig's `pemBlockForKey`.
    fn to_pem(&self) -> Result<String, String> {
        Ok(match self {
            PrivateKey::Rsa(key) => {
                let der = key.to_pkcs1_der().map_err(|error| error.to_string())?;
                pem_encode("RSA PRIVATE KEY", der.as_bytes())
            }
            PrivateKey::Ec(key) => {
                let der = key.to_sec1_der().map_err(|error| error.to_string())?;
                pem_encode("EC PRIVATE KEY", &der)
            }
            PrivateKey::Ed25519(seed) => {
                let inner = der::tlv(0x04, seed);
                let der = der::seq(&[
                    &der::tlv(0x02, &[0]),
                    &der::seq(&[&oid(OID_ED25519)]),
                    &der::tlv(0x04, &inner),
                ]);
                pem_encode("PRIVATE KEY", &der)
            }
            PrivateKey::Dsa(der) => pem_encode("DSA PRIVATE KEY", der),
        })
    }

    /// Sprig's `parsePrivateKeyPEM`, with its messages.
    fn from_pem(text: &str) -> Result<PrivateKey, String> {
        let (kind, der) = pem_decode(text).ok_or_else(|| "no PEM data in input".to_string())?;
        if kind == "PRIVATE KEY" {
            return Self::from_pkcs8(&der).map_err(|error| format!("decoding PEM as PKCS#8: {error}"));
        }
        let Some(prefix) = kind.strip_suffix(" PRIVATE KEY") else {
            return Err(format!("no private key data in PEM block of type {kind}"));
        };
        match prefix {
            "RSA" => rsa::RsaPrivateKey::from_pkcs1_der(&der)
                .map(|key| PrivateKey::Rsa(Box::new(key)))
                .map_err(|error| {
                    format!("parsing RSA private key from PEM: x509: failed to parse private key ({error})")
                }),
            "EC" => p256::SecretKey::from_sec1_der(&der)
                .map(PrivateKey::Ec)
                .map_err(|_| {
                    "parsing EC private key from PEM: x509: failed to parse EC private key".to_string()
                }),
            "DSA" => {
                let ok = der::read(&der).and_then(|(element, rest)| {
                    (element.tag == 0x30 && rest.is_empty()).then_some(())?;
                    let parts = der::children(element.content)?;
                    (parts.len() == 6 && parts.iter().all(|p| p.tag == 0x02)).then_some(())
                });
                ok.map(|()| PrivateKey::Dsa(der.clone()))
                    .ok_or_else(|| "parsing DSA private key from PEM: asn1: structure error".to_string())
            }
            _ => Err(format!("invalid private key type {kind}")),
        }
    }

    fn from_pkcs8(der: &[u8]) -> Result<PrivateKey, String> {
        let algorithm = der::read(der)
            .and_then(|(element, _)| der::children(element.content))
            .and_then(|parts| {
                let algorithm = der::children(parts.get(1)?.content)?;
                Some(algorithm.first()?.content.to_vec())
            })
            .ok_or_else(|| "x509: malformed PKCS#8 private key".to_string())?;
        if algorithm == OID_RSA {
            rsa::RsaPrivateKey::from_pkcs8_der(der)
                .map(|key| PrivateKey::Rsa(Box::new(key)))
                .map_err(|error| format!("x509: failed to parse RSA private key embedded in PKCS#8: {error}"))
        } else if algorithm == OID_EC_PUBLIC_KEY {
            p256::SecretKey::from_pkcs8_der(der)
                .map(PrivateKey::Ec)
                .map_err(|error| format!("x509: failed to parse EC private key embedded in PKCS#8: {error}"))
        } else if algorithm == OID_ED25519 {
            let seed = der::read(der)
                .and_then(|(element, _)| der::children(element.content))
                .and_then(|parts| {
                    let (inner, _) = der::read(parts.get(2)?.content)?;
                    <[u8; 32]>::try_from(inner.content).ok()
                })
                .ok_or_else(|| "x509: invalid Ed25519 private key".to_string())?;
            Ok(PrivateKey::Ed25519(seed))
        } else {
            Err(format!(
                "x509: PKCS#8 wrapping contained private key with unknown algorithm: {algorithm:?}"
            ))
        }
    }

    /// The SubjectPublicKeyInfo DER.
    fn public_key_info(&self) -> Result<Vec<u8>, String> {
        match self {
            PrivateKey::Rsa(key) => key
                .to_public_key()
                .to_public_key_der()
                .map(|doc| doc.as_bytes().to_vec())
                .map_err(|error| error.to_string()),
            PrivateKey::Ec(key) => key
                .public_key()
                .to_public_key_der()
                .map(|doc| doc.as_bytes().to_vec())
                .map_err(|error| error.to_string()),
            PrivateKey::Ed25519(seed) => {
                let public = ed25519_dalek::SigningKey::from_bytes(seed)
                    .verifying_key()
                    .to_bytes();
                Ok(der::seq(&[
                    &der::seq(&[&oid(OID_ED25519)]),
                    &der::bit_string(&public, 0),
                ]))
            }
            PrivateKey::Dsa(_) => Err("x509: unsupported public key type: *dsa.PublicKey".into()),
        }
    }

    /// The signature algorithm Go picks for this key, as an AlgorithmIdentifier.
    fn signature_algorithm(&self) -> Result<Vec<u8>, String> {
        match self {
            PrivateKey::Rsa(_) => Ok(der::seq(&[&oid(OID_SHA256_RSA), &[0x05, 0x00]])),
            PrivateKey::Ec(_) => Ok(der::seq(&[&oid(OID_ECDSA_SHA256)])),
            PrivateKey::Ed25519(_) => Ok(der::seq(&[&oid(OID_ED25519)])),
            PrivateKey::Dsa(_) => Err(NOT_A_SIGNER.into()),
        }
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            PrivateKey::Rsa(key) => {
                let signer = rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new(key.as_ref().clone());
                let signature = signer.try_sign(message).map_err(|error| error.to_string())?;
                Ok(signature.to_vec())
            }
            PrivateKey::Ec(key) => {
                let signer = p256::ecdsa::SigningKey::from(key);
                let signature: p256::ecdsa::Signature =
                    rsa::signature::Signer::try_sign(&signer, message).map_err(|error| error.to_string())?;
                Ok(signature.to_der().as_bytes().to_vec())
            }
            PrivateKey::Ed25519(seed) => {
                let signer = ed25519_dalek::SigningKey::from_bytes(seed);
                Ok(ed25519_dalek::Signer::sign(&signer, message).to_bytes().to_vec())
            }
            PrivateKey::Dsa(_) => Err(NOT_A_SIGNER.into()),
        }
    }
}

fn gen_private_key(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let kind = param_str(&args[0])?;
    let key = match kind.as_str() {
        "" | "rsa" => PrivateKey::generate_rsa(4096),
        "ecdsa" => PrivateKey::generate_ec(),
        "ed25519" => PrivateKey::generate_ed25519(),
        "dsa" => PrivateKey::generate_dsa(),
        other => return Ok(Value::from(format!("Unknown type {other}"))),
    };
    Ok(Value::from(match key.and_then(|key| key.to_pem()) {
        Ok(pem) => pem,
        Err(error) => format!("failed to generate private key: {error}"),
    }))
}

// ---------------------------------------------------------------------------------------------------------------
// Certificates

/// Sprig's `certificate` struct.
#[derive(Debug, Clone)]
pub(crate) struct Certificate {
    cert: String,
    key: String,
}

impl Object for Certificate {
    fn type_name(&self) -> &str {
        "sprig.certificate"
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::from(self.cert.as_str())),
            "Key" => Some(Value::from(self.key.as_str())),
            _ => None,
        }
    }

    fn call(&self, _name: &str, _args: &[Value]) -> Option<Result<Value, String>> {
        None
    }

    fn display(&self) -> String {
        format!("{{{} {}}}", self.cert, self.key)
    }

    fn to_value(&self) -> Value {
        let map = Map::new();
        map.insert("Cert", Value::from(self.cert.as_str()));
        map.insert("Key", Value::from(self.key.as_str()));
        Value::Map(map)
    }
}

fn certificate_value(cert: String, key: String) -> Value {
    Value::Object(Rc::new(Certificate { cert, key }))
}

/// A `certificate` parameter: only Sprig's own objects convert (Go's reflection rule).
fn param_certificate(value: &Value) -> Result<Certificate, FuncError> {
    match value {
        Value::Object(object) if object.type_name() == "sprig.certificate" => {
            let text = |name: &str| {
                object
                    .field(name)
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            };
            Ok(Certificate {
                cert: text("Cert"),
                key: text("Key"),
            })
        }
        Value::Nil => Ok(Certificate {
            cert: String::new(),
            key: String::new(),
        }),
        other => Err(crate::gotemplate::funcs::wrong_type("sprig.certificate", other)),
    }
}

/// What Sprig's `getBaseCertTemplate` fills in.
struct Template {
    common_name: String,
    ips: Vec<std::net::IpAddr>,
    dns_names: Vec<String>,
    days_valid: i64,
    is_ca: bool,
}

fn template(cn: &Value, ips: &Value, dns: &Value, days: &Value) -> Result<Template, FuncError> {
    let common_name = param_str(cn)?;
    let ips = param_list(ips)?;
    let dns = param_list(dns)?;
    let days_valid = param_int(days)?;
    let mut addresses = Vec::with_capacity(ips.len());
    for ip in &ips {
        let Value::String(text) = ip else {
            return Err(FuncError::new(format!(
                "error parsing ip: {} is not a string",
                sprint_value(ip)
            )));
        };
        let address: std::net::IpAddr = text
            .parse()
            .map_err(|_| FuncError::new(format!("error parsing ip: {text}")))?;
        addresses.push(address);
    }
    let mut dns_names = Vec::with_capacity(dns.len());
    for name in &dns {
        let Value::String(text) = name else {
            return Err(FuncError::new(format!(
                "error processing alternate dns name: {} is not a string",
                sprint_value(name)
            )));
        };
        dns_names.push(text.to_string());
    }
    Ok(Template {
        common_name,
        ips: addresses,
        dns_names,
        days_valid,
        is_ca: false,
    })
}

/// Go's asn1 choice for a string: PrintableString when every byte allows it, else UTF8String.
fn directory_string(text: &str) -> Vec<u8> {
    let printable = text.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b' ' | b'\'' | b'(' | b')' | b'+' | b',' | b'-' | b'.' | b'/' | b':' | b'=' | b'?'
            )
    });
    der::tlv(if printable { 0x13 } else { 0x0c }, text.as_bytes())
}

fn subject_name(common_name: &str) -> Vec<u8> {
    if common_name.is_empty() {
        return der::seq(&[]);
    }
    let attribute = der::seq(&[&oid(OID_COMMON_NAME), &directory_string(common_name)]);
    der::seq(&[&der::tlv(0x31, &attribute)])
}

/// Go's encoding of a certificate time: UTCTime for 1950–2049, GeneralizedTime otherwise.
fn asn1_time(unix: i64) -> Result<Vec<u8>, String> {
    let timestamp = jiff::Timestamp::from_second(unix).map_err(|error| error.to_string())?;
    let civil = timestamp.to_zoned(jiff::tz::TimeZone::UTC).datetime();
    let year = i64::from(civil.year());
    let rest = format!(
        "{:02}{:02}{:02}{:02}{:02}Z",
        civil.month(),
        civil.day(),
        civil.hour(),
        civil.minute(),
        civil.second()
    );
    Ok(if (1950..2050).contains(&year) {
        der::tlv(0x17, format!("{:02}{rest}", year % 100).as_bytes())
    } else {
        der::tlv(0x18, format!("{year:04}{rest}").as_bytes())
    })
}

fn extension(id: &[u8], critical: bool, value: &[u8]) -> Vec<u8> {
    if critical {
        der::seq(&[&oid(id), &[0x01, 0x01, 0xff], &der::tlv(0x04, value)])
    } else {
        der::seq(&[&oid(id), &der::tlv(0x04, value)])
    }
}

/// The parts of an issuer certificate a signed certificate needs.
struct Issuer {
    subject: Vec<u8>,
    subject_key_id: Option<Vec<u8>>,
    public_key_info: Vec<u8>,
}

/// Reads what Go's `x509.ParseCertificate` would need of a CA certificate; `None` when it is not one.
fn parse_certificate(der: &[u8]) -> Option<Issuer> {
    let (certificate, rest) = der::read(der)?;
    if certificate.tag != 0x30 || !rest.is_empty() {
        return None;
    }
    let parts = der::children(certificate.content)?;
    if parts.len() != 3 || parts[0].tag != 0x30 || parts[2].tag != 0x03 {
        return None;
    }
    let tbs = der::children(parts[0].content)?;
    let mut index = 0;
    if tbs.first()?.tag == 0xa0 {
        index = 1;
    }
    // serial, signature, issuer, validity, subject, subjectPublicKeyInfo
    let fields = tbs.get(index..index + 6)?;
    if fields[0].tag != 0x02 || fields.iter().skip(1).any(|f| f.tag != 0x30) {
        return None;
    }
    let subject = fields[4].raw.to_vec();
    let public_key_info = fields[5].raw.to_vec();
    let mut subject_key_id = None;
    if let Some(extensions) = tbs.iter().find(|element| element.tag == 0xa3) {
        let (list, _) = der::read(extensions.content)?;
        for ext in der::children(list.content)? {
            let items = der::children(ext.content)?;
            if items.first()?.content == OID_SUBJECT_KEY_ID {
                let value = items.last()?;
                let (inner, _) = der::read(value.content)?;
                subject_key_id = Some(inner.content.to_vec());
            }
        }
    }
    Some(Issuer {
        subject,
        subject_key_id,
        public_key_info,
    })
}

/// The key bits of a SubjectPublicKeyInfo (what key identifiers hash).
fn public_key_bits(spki: &[u8]) -> Option<Vec<u8>> {
    let (info, _) = der::read(spki)?;
    let parts = der::children(info.content)?;
    let bits = parts.get(1)?;
    Some(bits.content.get(1..)?.to_vec())
}

fn now_unix() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// Go's `x509.CreateCertificate(rand, template, parent, pub, signer)` followed by Sprig's PEM encoding.
fn create_certificate(
    template: &Template,
    key: &PrivateKey,
    issuer: Option<(&Issuer, &PrivateKey)>,
) -> Result<Certificate, String> {
    let signer = issuer.map_or(key, |(_, signer)| signer);
    let algorithm = signer
        .signature_algorithm()
        .map_err(|error| format!("error creating certificate: {error}"))?;
    let spki = key
        .public_key_info()
        .map_err(|error| format!("error creating certificate: {error}"))?;
    let subject = subject_name(&template.common_name);
    let issuer_name = issuer.map_or_else(|| subject.clone(), |(issuer, _)| issuer.subject.clone());
    if let Some((parent, signing_key)) = issuer {
        let signer_spki = signing_key
            .public_key_info()
            .map_err(|error| format!("error creating certificate: {error}"))?;
        if signer_spki != parent.public_key_info {
            return Err(
                "error creating certificate: x509: provided PrivateKey doesn't match parent's PublicKey"
                    .into(),
            );
        }
    }

    let serial = random_bytes::<16>()?;
    let now = now_unix();
    let valid_nanos = template.days_valid.wrapping_mul(24 * 3_600 * 1_000_000_000);
    let not_after = now.saturating_add(valid_nanos.div_euclid(1_000_000_000));

    let mut extensions = Vec::new();
    let usage: u8 = if template.is_ca { 0xa4 } else { 0xa0 };
    let unused = if template.is_ca { 2 } else { 5 };
    extensions.push(extension(OID_KEY_USAGE, true, &der::bit_string(&[usage], unused)));
    extensions.push(extension(
        OID_EXT_KEY_USAGE,
        false,
        &der::seq(&[&oid(OID_SERVER_AUTH), &oid(OID_CLIENT_AUTH)]),
    ));
    let basic = if template.is_ca {
        der::seq(&[&[0x01, 0x01, 0xff]])
    } else {
        der::seq(&[])
    };
    extensions.push(extension(OID_BASIC_CONSTRAINTS, true, &basic));
    if template.is_ca {
        let bits = public_key_bits(&spki).ok_or("error creating certificate: bad public key")?;
        let id = &sha2::Sha256::digest(&bits)[..20];
        extensions.push(extension(OID_SUBJECT_KEY_ID, false, &der::tlv(0x04, id)));
    }
    if let Some((parent, _)) = issuer
        && parent.subject != subject
        && let Some(id) = &parent.subject_key_id
    {
        extensions.push(extension(
            OID_AUTHORITY_KEY_ID,
            false,
            &der::seq(&[&der::tlv(0x80, id)]),
        ));
    }
    if !template.dns_names.is_empty() || !template.ips.is_empty() {
        let mut names = Vec::new();
        for name in &template.dns_names {
            names.extend(der::tlv(0x82, name.as_bytes()));
        }
        for ip in &template.ips {
            let bytes = match ip {
                std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
                std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                    Some(v4) => v4.octets().to_vec(),
                    None => v6.octets().to_vec(),
                },
            };
            names.extend(der::tlv(0x87, &bytes));
        }
        extensions.push(extension(
            OID_SUBJECT_ALT_NAME,
            template.common_name.is_empty(),
            &der::tlv(0x30, &names),
        ));
    }

    let extension_refs: Vec<&[u8]> = extensions.iter().map(Vec::as_slice).collect();
    let tbs = der::seq(&[
        &der::tlv(0xa0, &der::tlv(0x02, &[2])),
        &der::uint(&serial),
        &algorithm,
        &issuer_name,
        &der::seq(&[&asn1_time(now)?, &asn1_time(not_after)?]),
        &subject,
        &spki,
        &der::tlv(0xa3, &der::seq(&extension_refs)),
    ]);
    let signature = signer
        .sign(&tbs)
        .map_err(|error| format!("error creating certificate: {error}"))?;
    let certificate = der::seq(&[&tbs, &algorithm, &der::bit_string(&signature, 0)]);
    Ok(Certificate {
        cert: pem_encode("CERTIFICATE", &certificate),
        key: key.to_pem()?,
    })
}

fn rsa_2048() -> Result<PrivateKey, FuncError> {
    PrivateKey::generate_rsa(2048)
        .map_err(|error| FuncError::new(format!("error generating rsa key: {error}")))
}

fn key_from_pem(value: &Value) -> Result<PrivateKey, FuncError> {
    let text = param_str(value)?;
    PrivateKey::from_pem(&text).map_err(|error| FuncError::new(format!("parsing private key: {error}")))
}

fn finish(result: Result<Certificate, String>) -> Result<Value, FuncError> {
    result
        .map(|c| certificate_value(c.cert, c.key))
        .map_err(FuncError::new)
}

fn ca(args: &[Value], key: PrivateKey) -> Result<Value, FuncError> {
    let mut template = template(&args[0], &Value::Nil, &Value::Nil, &args[1])?;
    template.is_ca = true;
    finish(create_certificate(&template, &key, None))
}

fn gen_ca(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    param_str(&args[0])?;
    param_int(&args[1])?;
    ca(args, rsa_2048()?)
}

fn gen_ca_with_key(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    param_str(&args[0])?;
    param_int(&args[1])?;
    let key = key_from_pem(&args[2])?;
    ca(args, key)
}

fn self_signed(args: &[Value], key: PrivateKey) -> Result<Value, FuncError> {
    let template = template(&args[0], &args[1], &args[2], &args[3])?;
    finish(create_certificate(&template, &key, None))
}

fn gen_self_signed_cert(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    check_template_args(args)?;
    self_signed(args, rsa_2048()?)
}

fn gen_self_signed_cert_with_key(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    check_template_args(args)?;
    let key = key_from_pem(&args[4])?;
    self_signed(args, key)
}

/// Go converts every argument before the call: report a type error before doing any work.
fn check_template_args(args: &[Value]) -> Result<(), FuncError> {
    param_str(&args[0])?;
    param_list(&args[1])?;
    param_list(&args[2])?;
    param_int(&args[3])?;
    Ok(())
}

fn signed(args: &[Value], ca: &Certificate, key: PrivateKey) -> Result<Value, FuncError> {
    let (_, der) = pem_decode(&ca.cert).ok_or_else(|| FuncError::new("unable to decode certificate"))?;
    let issuer = parse_certificate(&der).ok_or_else(|| {
        FuncError::new("error parsing certificate: decodedSignerCert.Bytes: x509: malformed certificate")
    })?;
    let signer = PrivateKey::from_pem(&ca.key)
        .map_err(|error| FuncError::new(format!("error parsing private key: {error}")))?;
    let template = template(&args[0], &args[1], &args[2], &args[3])?;
    finish(create_certificate(&template, &key, Some((&issuer, &signer))))
}

fn gen_signed_cert(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    check_template_args(args)?;
    let ca = param_certificate(&args[4])?;
    signed(args, &ca, rsa_2048()?)
}

fn gen_signed_cert_with_key(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    check_template_args(args)?;
    let ca = param_certificate(&args[4])?;
    let key = key_from_pem(&args[5])?;
    signed(args, &ca, key)
}

fn build_custom_cert(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let cert64 = param_str(&args[0])?;
    let key64 = param_str(&args[1])?;
    let cert = base64_decode(cert64.as_bytes())
        .map_err(|_| FuncError::new("unable to decode base64 certificate"))?;
    let key =
        base64_decode(key64.as_bytes()).map_err(|_| FuncError::new("unable to decode base64 private key"))?;
    let cert = String::from_utf8_lossy(&cert).into_owned();
    let key = String::from_utf8_lossy(&key).into_owned();
    let (_, der) = pem_decode(&cert).ok_or_else(|| FuncError::new("unable to decode certificate"))?;
    if parse_certificate(&der).is_none() {
        return Err(FuncError::new(
            "error parsing certificate: decodedCert.Bytes: x509: malformed certificate",
        ));
    }
    PrivateKey::from_pem(&key)
        .map_err(|error| FuncError::new(format!("error parsing private key: {error}")))?;
    Ok(certificate_value(cert, key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::NoRuntime;
    use rsa::signature::Verifier as _;

    /// A CA certificate and key printed by Helm v4.2.3 (`genCA "fixture-ca" 36500`).
    const HELM_CA_CERT: &str = r"-----BEGIN CERTIFICATE-----
MIIDFzCCAf+gAwIBAgIQJgvDeHt0/o9h8RRf2CnDKTANBgkqhkiG9w0BAQsFADAV
MRMwEQYDVQQDEwpmaXh0dXJlLWNhMCAXDTI2MTEyMzA5MTIzMloYDzIxMjYxMDMw
MDkxMjMyWjAVMRMwEQYDVQQDEwpmaXh0dXJlLWNhMIIBIjANBgkqhkiG9w0BAQEF
AAOCAQ8AMIIBCgKCAQEAqEcWSgJb0O6kNoNkT+Ywn207hckGiyEtA4Vp6JJLYRYR
9iX3aG7I2rblmNjR/2KG34d8sM1H7BOukaLUSiukdijgaG2K5z8Ej8lURb3t1u2p
vdhACQObnbohtM9uwVZW/3bXVA+dWji9hIslsMYOs1JM73M6o9BMcE1Kebg75J26
iKfQWx3AlXguqEXb20ZNy/aNZIODC+oixQkgrjlKLCmXhFA4J2Mz4Jd4G1x+VrES
TGSmisbvKA73CGIvQDQXhC77TMkC7H9dWElRORYcICe33UQaiiGujmLFhG4lGTqJ
3pRp1FNOF3FAVlhoGxHM3h2fc47o5z/avNkD1YB0CQIDAQABo2EwXzAOBgNVHQ8B
Af8EBAMCAqQwHQYDVR0lBBYwFAYIKwYBBQUHAwEGCCsGAQUFBwMCMA8GA1UdEwEB
/wQFMAMBAf8wHQYDVR0OBBYEFKW8+NGUV3aJ5LBs3JoLCUJEUf/VMA0GCSqGSIb3
DQEBCwUAA4IBAQAhgDpoBMbyhip/JK+cvMW7Uxn5Tl/Jbqe8fVn20aNqrzJUo/WU
SAtWcR/k9ZxQNTSSquZNH8RMjVOennq9Lv6KVy6Jmi0OlErgoaBhpZZbVIyKRBvc
F/nHpIiSBn3hTTpuKwD4bymb0JmCk1iQoRWtlmbbUaZDCYitRBK/ae4aF9wyDgTt
i6EpA3LdkTIwwkTIHFydvWd1K2A8hpsUlqPCWpBCqQpeZqEzfzSQJxUoxVwZFzhx
wIoKHMKoVXgM7E++WqVuY/DqnjU+oBQugsGi7AX4jQOl+ANRH2qsY70j66NrAbdq
R/gCKV7Bk6zpn5FtE5+j8yLYfGJ3AtvqYTcw
-----END CERTIFICATE-----
";
    const HELM_CA_KEY: &str = r"-----BEGIN RSA PRIVATE KEY-----
MIIEogIBAAKCAQEAqEcWSgJb0O6kNoNkT+Ywn207hckGiyEtA4Vp6JJLYRYR9iX3
aG7I2rblmNjR/2KG34d8sM1H7BOukaLUSiukdijgaG2K5z8Ej8lURb3t1u2pvdhA
CQObnbohtM9uwVZW/3bXVA+dWji9hIslsMYOs1JM73M6o9BMcE1Kebg75J26iKfQ
Wx3AlXguqEXb20ZNy/aNZIODC+oixQkgrjlKLCmXhFA4J2Mz4Jd4G1x+VrESTGSm
isbvKA73CGIvQDQXhC77TMkC7H9dWElRORYcICe33UQaiiGujmLFhG4lGTqJ3pRp
1FNOF3FAVlhoGxHM3h2fc47o5z/avNkD1YB0CQIDAQABAoIBACAJcJ/kdRCA7niG
aUmg3G7tv+BHllxUk5pRAwnJGFrCdebz8XdLaCfjnDCOTuSdIGpcBAww+NlkId8O
LfZ0+pmYTKj0+fXulHK/dLDWaPp7Qs6m5gIRUsYjkpk2yLI8OtHmETaqxl1P4hzi
1Okju9a9+3G28VoQpQzYWi50OcrbQXusvg06MJDVcHq/Fc3XI0Jk5l8rlj42yG7b
t4s+9fUccmdJGWkCcrx8Xa0yN02E5ukwpnErIBfwaWsd57hOHi30K92pNxZXXpQP
aV6fKXfBsKYvqkr49rInSmGsyT/PWgoz8oNJFHxEiHAsZPuGLcYJoIP8oQIUtNiE
H6GCq9ECgYEAyBFU92KsotxbubRmxzRCBoqCp61MzwsT+5dNMXdT9C1MKXPZOvEk
HYJyGRvxyibn8K2HoufPQMw5buqxJfg4X86em5Q0XYdVmwLMhf5Ib2XbX3p0rle/
zZ8zI2dbhMU1wFp1y7g4wqlnbapzZMWodfzr2/TXf6oTqT84/D3zGL0CgYEA11KS
Wwh7VpPKDRaDqayjyAOhJM5rjGM39+nBd0n3jS/VIVVaZMNEkiHXmwAoXBa/83lo
LFO3X4H3W68n4OCeP9KRoRLQ6XDuUiJRAAqtqkmsTGf5aaO3lo4YqbSyDP+d6gu+
AV6xMND5fzDVIQuGFCGHo73OOhhZX/q49KlgOz0CgYAS/oJAkl+tfpo+wT/Yvb9e
+5t3694U8gpNoomzno6b6gkHDnabP/Wbz5yhgaOs+5CdqvvrnXJxxnHVc/apki1X
+zfXsXRfRM/9zYA5YHDkEpmHMQsO2kndbbXfMJrhug9mWbBBTRYmdQrawIoAETvz
J7YExfQHrM/9C4GPgRopSQKBgFt1cj8CikkK+0612nTupJ6nlAHrP9lgp3xBKPD/
VQv+XjwLYhrcqjqb71WiKoJ7E0tarTnu0TvbG3MxIfIt1mnrifnt4RjW5BO1CczH
vF5RbsMBgvoxFSD4+FbVLq/Av5WTKUCxtPe0O9Wfq1ee6nOQjmmpjHg2sXfIKlmZ
vAtNAoGANMwpGowEc74QDwZUA6iDYnLs+6P4bEuWZbNaA1oBqAfePJ7sXFTpJYiE
WSbpzT6CjEKyF9SV0gZ/CQYE8HTr1FM+bluORzegah9EW+vSKkzqk/UaSzYS1NGk
iGSGtnE4rNaVsbStwapQ90zoUIfkFDnoXlQU+ZDsZReYKngWxKI=
-----END RSA PRIVATE KEY-----
";
    /// Keys printed by Helm's `genPrivateKey "ecdsa"` and `genPrivateKey "ed25519"`.
    const HELM_EC_KEY: &str = r"-----BEGIN EC PRIVATE KEY-----
MHcCAQEEICiROPrNP+1ceOrQhSNrQqr5oQJ1IneftPTHGU+3jQEGoAoGCCqGSM49
AwEHoUQDQgAEEYqVsog/KfuKDosea6Q777fD9wlUKDJpv+GjuqDTZp7t3RF7Cdxy
+OS2SdG3HMI9QFyn4ROwaR4bzFi7AVnjFw==
-----END EC PRIVATE KEY-----
";
    const HELM_ED25519_KEY: &str = r"-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIMGpqo48ucFLoEvPcOpu91Wq6GjN5g1y3zHRxIzhDPJ0
-----END PRIVATE KEY-----
";

    fn call(name: &str, args: &[Value]) -> Result<Value, FuncError> {
        let mut map = FuncMap::new();
        register(&mut map);
        let def = map.get(name).ok_or_else(|| FuncError::new("no such function"))?;
        def.arity.check(name, args.len())?;
        (def.call)(&mut NoRuntime, args)
    }

    fn text(value: Result<Value, FuncError>) -> String {
        match value {
            Ok(Value::String(text)) => text.to_string(),
            other => format!("{other:?}"),
        }
    }

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    fn list(items: &[&str]) -> Value {
        Value::list(items.iter().map(|item| s(item)).collect())
    }

    fn cert_of(value: &Value) -> Certificate {
        param_certificate(value).unwrap_or_else(|error| panic!("not a certificate: {error}"))
    }

    /// The parts of a certificate the tests look at.
    struct Parsed {
        tbs: Vec<u8>,
        signature: Vec<u8>,
        subject: Vec<u8>,
        issuer: Vec<u8>,
        spki: Vec<u8>,
        extensions: Vec<(Vec<u8>, bool, Vec<u8>)>,
    }

    fn parse(pem: &str) -> Parsed {
        let (kind, der) = pem_decode(pem).unwrap_or_default();
        assert_eq!(kind, "CERTIFICATE");
        let (certificate, _) = der::read(&der).unwrap_or_else(|| panic!("bad der"));
        let parts = der::children(certificate.content).unwrap_or_default();
        let tbs = der::children(parts[0].content).unwrap_or_default();
        let (list, _) = der::read(tbs[7].content).unwrap_or_else(|| panic!("no extensions"));
        let extensions = der::children(list.content)
            .unwrap_or_default()
            .iter()
            .map(|ext| {
                let items = der::children(ext.content).unwrap_or_default();
                (
                    items[0].content.to_vec(),
                    items.len() == 3,
                    items[items.len() - 1].content.to_vec(),
                )
            })
            .collect();
        Parsed {
            tbs: parts[0].raw.to_vec(),
            signature: parts[2].content[1..].to_vec(),
            issuer: tbs[3].raw.to_vec(),
            subject: tbs[5].raw.to_vec(),
            spki: tbs[6].raw.to_vec(),
            extensions,
        }
    }

    fn extension<'a>(parsed: &'a Parsed, id: &[u8]) -> Option<&'a (Vec<u8>, bool, Vec<u8>)> {
        parsed.extensions.iter().find(|(oid, _, _)| oid == id)
    }

    fn rsa_verify(spki: &[u8], tbs: &[u8], signature: &[u8]) -> bool {
        use rsa::pkcs8::DecodePublicKey as _;
        let Ok(public) = rsa::RsaPublicKey::from_public_key_der(spki) else {
            return false;
        };
        let verifier = rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(public);
        let Ok(signature) = rsa::pkcs1v15::Signature::try_from(signature) else {
            return false;
        };
        verifier.verify(tbs, &signature).is_ok()
    }

    #[test]
    fn ca_and_signed_certificates_have_go_s_fields() {
        let ca = call("genCA", &[s("my-ca"), Value::Int(365)]).unwrap_or_else(|e| panic!("{e}"));
        let Value::Object(object) = &ca else {
            panic!("not an object")
        };
        assert_eq!(object.type_name(), "sprig.certificate");
        let ca_cert = cert_of(&ca);
        assert!(ca_cert.key.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"));
        let parsed = parse(&ca_cert.cert);
        assert_eq!(parsed.subject, subject_name("my-ca"));
        assert_eq!(parsed.issuer, parsed.subject);
        assert!(
            rsa_verify(&parsed.spki, &parsed.tbs, &parsed.signature),
            "CA not self-signed"
        );
        assert_eq!(
            extension(&parsed, OID_KEY_USAGE).map(|e| (e.1, e.2.clone())),
            Some((true, vec![3, 2, 2, 0xa4]))
        );
        assert_eq!(
            extension(&parsed, OID_BASIC_CONSTRAINTS).map(|e| (e.1, e.2.clone())),
            Some((true, vec![0x30, 3, 1, 1, 0xff]))
        );
        let key = PrivateKey::from_pem(&ca_cert.key).unwrap_or_else(|e| panic!("{e}"));
        let PrivateKey::Rsa(rsa_key) = &key else {
            panic!("not rsa")
        };
        assert_eq!(rsa::traits::PublicKeyParts::size(rsa_key.as_ref()), 256);
        let skid = extension(&parsed, OID_SUBJECT_KEY_ID)
            .map(|e| e.2.clone())
            .unwrap_or_default();
        assert_eq!(skid.len(), 22);
        assert!(extension(&parsed, OID_AUTHORITY_KEY_ID).is_none());

        let leaf = call(
            "genSignedCert",
            &[
                s("svc.ns"),
                list(&["10.0.0.1", "::1"]),
                list(&["svc", "svc.ns.svc"]),
                Value::Int(30),
                ca.clone(),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let parsed_leaf = parse(&cert_of(&leaf).cert);
        assert_eq!(parsed_leaf.issuer, parsed.subject);
        assert!(
            rsa_verify(&parsed.spki, &parsed_leaf.tbs, &parsed_leaf.signature),
            "leaf not signed by CA"
        );
        assert_eq!(
            extension(&parsed_leaf, OID_KEY_USAGE).map(|e| e.2.clone()),
            Some(vec![3, 2, 5, 0xa0])
        );
        assert_eq!(
            extension(&parsed_leaf, OID_BASIC_CONSTRAINTS).map(|e| e.2.clone()),
            Some(vec![0x30, 0])
        );
        let akid = extension(&parsed_leaf, OID_AUTHORITY_KEY_ID)
            .map(|e| e.2.clone())
            .unwrap_or_default();
        assert_eq!(&akid[4..], &skid[2..]);
        let san = extension(&parsed_leaf, OID_SUBJECT_ALT_NAME)
            .cloned()
            .unwrap_or_default();
        assert!(!san.1, "SAN is critical only without a subject");
        let mut expected = Vec::new();
        expected.extend(der::tlv(0x82, b"svc"));
        expected.extend(der::tlv(0x82, b"svc.ns.svc"));
        expected.extend(der::tlv(0x87, &[10, 0, 0, 1]));
        expected.extend(der::tlv(0x87, &std::net::Ipv6Addr::LOCALHOST.octets()));
        assert_eq!(san.2, der::tlv(0x30, &expected));
        assert!(sprint_value(&leaf).starts_with("{-----BEGIN CERTIFICATE-----\n"));
    }

    #[test]
    fn helm_s_ca_signs_our_certificates() {
        let helm_ca = call(
            "buildCustomCert",
            &[
                s(&base64_encode(HELM_CA_CERT.as_bytes())),
                s(&base64_encode(HELM_CA_KEY.as_bytes())),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let ca = parse(HELM_CA_CERT);
        for key in [HELM_EC_KEY, HELM_ED25519_KEY] {
            let leaf = call(
                "genSignedCertWithKey",
                &[
                    s("leaf"),
                    Value::Nil,
                    list(&["a.example"]),
                    Value::Int(1),
                    helm_ca.clone(),
                    s(key),
                ],
            )
            .unwrap_or_else(|e| panic!("{e}"));
            let leaf = cert_of(&leaf);
            assert_eq!(leaf.key, key, "the given key comes back as Go writes it");
            let parsed = parse(&leaf.cert);
            assert!(rsa_verify(&ca.spki, &parsed.tbs, &parsed.signature));
            assert_eq!(parsed.issuer, ca.subject);
        }
        // A key that is not the CA's own is refused as Go refuses it.
        let wrong = Certificate {
            cert: HELM_CA_CERT.into(),
            key: HELM_EC_KEY.into(),
        };
        let wrong = certificate_value(wrong.cert, wrong.key);
        let error = call(
            "genSignedCert",
            &[s("x"), Value::Nil, Value::Nil, Value::Int(1), wrong],
        )
        .err();
        assert_eq!(
            error,
            Some(FuncError::new(
                "error creating certificate: x509: provided PrivateKey doesn't match parent's PublicKey"
            ))
        );
    }

    #[test]
    fn self_signed_certificates_and_keys_of_each_kind() {
        for kind in ["ecdsa", "ed25519"] {
            let pem = text(call("genPrivateKey", &[s(kind)]));
            let cert = call(
                "genSelfSignedCertWithKey",
                &[
                    s(""),
                    list(&["1.2.3.4"]),
                    list(&["*.x.io"]),
                    Value::Int(10),
                    s(&pem),
                ],
            )
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
            let parsed = parse(&cert_of(&cert).cert);
            assert_eq!(parsed.subject, vec![0x30, 0]);
            let san = extension(&parsed, OID_SUBJECT_ALT_NAME)
                .cloned()
                .unwrap_or_default();
            assert!(san.1, "SAN is critical without a subject");
            if kind == "ed25519" {
                let key = PrivateKey::from_pem(&pem).unwrap_or_else(|e| panic!("{e}"));
                let PrivateKey::Ed25519(seed) = key else {
                    panic!("not ed25519")
                };
                let public = ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key();
                let signature =
                    ed25519_dalek::Signature::from_slice(&parsed.signature).unwrap_or_else(|e| panic!("{e}"));
                assert!(public.verify_strict(&parsed.tbs, &signature).is_ok());
            }
        }
        assert!(
            PrivateKey::from_pem(HELM_CA_KEY)
                .is_ok_and(|key| key.to_pem().ok().as_deref() == Some(HELM_CA_KEY)),
            "an RSA key is written back byte for byte as Go wrote it"
        );
        assert!(
            PrivateKey::from_pem(HELM_EC_KEY)
                .is_ok_and(|key| key.to_pem().ok().as_deref() == Some(HELM_EC_KEY))
        );
        assert!(
            PrivateKey::from_pem(HELM_ED25519_KEY)
                .is_ok_and(|key| key.to_pem().ok().as_deref() == Some(HELM_ED25519_KEY))
        );
        assert_eq!(text(call("genPrivateKey", &[s("nope")])), "Unknown type nope");
        let dsa = text(call("genPrivateKey", &[s("dsa")]));
        assert!(dsa.starts_with("-----BEGIN DSA PRIVATE KEY-----\n"), "{dsa}");
        let Ok(PrivateKey::Dsa(der)) = PrivateKey::from_pem(&dsa) else {
            panic!("not dsa")
        };
        let parts = der::read(&der)
            .and_then(|(e, _)| der::children(e.content))
            .unwrap_or_default();
        let sizes: Vec<usize> = parts.iter().map(|p| p.content.len()).collect();
        assert_eq!(
            (sizes[0], sizes[1], sizes[2]),
            (1, 257, 33),
            "version, 2048-bit p, 256-bit q"
        );
        assert_eq!(
            call(
                "genSelfSignedCertWithKey",
                &[s("x"), Value::Nil, Value::Nil, Value::Int(1), s(&dsa)]
            )
            .err(),
            Some(FuncError::new(format!(
                "error creating certificate: {NOT_A_SIGNER}"
            )))
        );
        let cert = call(
            "genSelfSignedCert",
            &[s("*.example.com"), Value::Nil, Value::Nil, Value::Int(1)],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let parsed = parse(&cert_of(&cert).cert);
        assert_eq!(parsed.subject[6..8], [0x06, 0x03]);
        assert_eq!(parsed.subject[11], 0x0c, "a `*` makes Go choose UTF8String");
        assert!(rsa_verify(&parsed.spki, &parsed.tbs, &parsed.signature));
    }

    #[test]
    fn rsa_4096_private_key() {
        let pem = text(call("genPrivateKey", &[s("rsa")]));
        let Ok(PrivateKey::Rsa(key)) = PrivateKey::from_pem(&pem) else {
            panic!("not rsa: {pem}")
        };
        assert_eq!(rsa::traits::PublicKeyParts::size(key.as_ref()), 512);
    }

    #[test]
    fn certificate_argument_errors_match_go() {
        assert_eq!(
            call(
                "genSelfSignedCert",
                &[s("x"), list(&["nope"]), Value::Nil, Value::Int(1)]
            )
            .err(),
            Some(FuncError::new("error parsing ip: nope"))
        );
        assert_eq!(
            call(
                "genSelfSignedCert",
                &[
                    s("x"),
                    Value::list(vec![Value::Float(1.0)]),
                    Value::Nil,
                    Value::Int(1)
                ]
            )
            .err(),
            Some(FuncError::new("error parsing ip: 1 is not a string"))
        );
        assert_eq!(
            call(
                "genSignedCert",
                &[
                    s("x"),
                    Value::Nil,
                    Value::Nil,
                    Value::Int(1),
                    Value::Map(Map::new())
                ]
            )
            .err(),
            Some(FuncError::new(
                "wrong type for value; expected sprig.certificate; got map[string]interface {}"
            ))
        );
        assert_eq!(
            call("genCAWithKey", &[s("x"), Value::Int(1), s("junk")]).err(),
            Some(FuncError::new("parsing private key: no PEM data in input"))
        );
        assert_eq!(
            call("buildCustomCert", &[s("!"), s("")]).err(),
            Some(FuncError::new("unable to decode base64 certificate"))
        );
    }

    #[test]
    fn derive_password_matches_helm() {
        // Printed by Helm v4.2.3.
        let derive = |counter: i64, kind: &str, password: &str, user: &str, site: &str| {
            text(call(
                "derivePassword",
                &[Value::Int(counter), s(kind), s(password), s(user), s(site)],
            ))
        };
        assert_eq!(
            derive(1, "long", "password", "user", "example.com"),
            "ZedaFaxcZaso9*"
        );
        assert_eq!(derive(1, "maximum", "pw", "u", "s"), "o2-3WFZN4Khgl8(&IuEk");
        assert_eq!(derive(3, "pin", "pw", "", ""), "5554");
        assert_eq!(
            derive(1, "nope", "pw", "u", "s"),
            "cannot find password template nope"
        );
    }

    #[test]
    fn bcrypt_and_htpasswd() {
        let line = text(call("htpasswd", &[s("u"), s("p")]));
        let hash = line.strip_prefix("u:").unwrap_or_default();
        assert!(hash.starts_with("$2a$10$"));
        assert!(bcrypt::verify("p", hash).unwrap_or(false));
        // Helm's own output verifies too.
        assert!(
            bcrypt::verify(
                "p",
                "$2a$10$HjM1GFZ8eHcke1aeiOGqX.TKume7zSLlM3WfiNDCXCsItrD.YWssO"
            )
            .unwrap_or(false)
        );
        assert_eq!(
            text(call("htpasswd", &[s("u:x"), s("p")])),
            "invalid username: u:x"
        );
        assert!(text(call("bcrypt", &[s("x")])).starts_with("$2a$10$"));
    }

    #[test]
    fn aes_round_trips_and_reads_helm_s_output() {
        // `encryptAES "secretkey" "plaintext"` as Helm printed it.
        assert_eq!(
            text(call(
                "decryptAES",
                &[s("secretkey"), s("AlskTk/Lz1ConWZl3h29cxsQK4nKx5tquXwhddY2WPU=")]
            )),
            "plaintext"
        );
        for plain in ["a", "exactly sixteen!", "a longer text with ünïcode"] {
            let crypt = text(call("encryptAES", &[s("k"), s(plain)]));
            assert_eq!(text(call("decryptAES", &[s("k"), s(&crypt)])), plain);
        }
        assert_eq!(text(call("encryptAES", &[s("k"), s("")])), "");
        assert_eq!(
            call("decryptAES", &[s("k"), s("AAAA")]).err(),
            Some(FuncError::new(
                "runtime error: slice bounds out of range [:16] with capacity 3"
            ))
        );
        assert_eq!(
            call("decryptAES", &[s("k"), s("!")]).err(),
            Some(FuncError::new("illegal base64 data at input byte 0"))
        );
    }
}
