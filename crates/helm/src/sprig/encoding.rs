//! Sprig's encodings (`b64enc`, `b64dec`, `b32enc`, `b32dec`) and hashes (`sha1sum`, `sha256sum`, `sha512sum`, `adler32sum`).
//!
//! Every function takes a Go `string` (a number is Go's "wrong type" error). The decoders follow Go's
//! `encoding/base64` and `encoding/base32` standard encodings: padding is required, `\r` and `\n` are skipped, and a
//! bad input is not an error but the error's text returned as the result (Sprig's choice), e.g.
//! `illegal base64 data at input byte 0`.

use sha1::Digest as _;

use crate::gotemplate::funcs::{check_text_len, param_str};
use crate::gotemplate::{Arity, FuncError, FuncMap, Runtime, Value};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("b64enc", Arity::Exact(1), b64enc);
    map.add("b64dec", Arity::Exact(1), b64dec);
    map.add("b32enc", Arity::Exact(1), b32enc);
    map.add("b32dec", Arity::Exact(1), b32dec);
    map.add("sha1sum", Arity::Exact(1), sha1sum);
    map.add("sha256sum", Arity::Exact(1), sha256sum);
    map.add("sha512sum", Arity::Exact(1), sha512sum);
    map.add("adler32sum", Arity::Exact(1), adler32sum);
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// Lower-case hex of `bytes` (Go's `hex.EncodeToString`).
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 15)]));
    }
    out
}

/// Go's `base64.StdEncoding.EncodeToString`.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Go's `base64.StdEncoding.DecodeString`, with its error (`illegal base64 data at input byte N`).
pub(crate) fn base64_decode(src: &[u8]) -> Result<Vec<u8>, String> {
    let mut map = [0xffu8; 256];
    for (index, byte) in B64.iter().enumerate() {
        map[usize::from(*byte)] = index as u8;
    }
    let corrupt = |at: usize| format!("illegal base64 data at input byte {at}");
    let mut out = Vec::with_capacity(src.len() / 4 * 3 + 3);
    let mut si = 0usize;
    loop {
        // One quantum, as Go's decodeQuantum.
        let mut dbuf = [0u8; 4];
        let mut dlen = 4usize;
        let mut trailing_error = None;
        let mut j = 0usize;
        let mut finished = false;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                // Padding is required by the standard encoding.
                return Err(corrupt(si - j));
            }
            let input = src[si];
            si += 1;
            let decoded = map[usize::from(input)];
            if decoded != 0xff {
                dbuf[j] = decoded;
                j += 1;
                continue;
            }
            if input == b'\n' || input == b'\r' {
                continue;
            }
            if input != b'=' {
                return Err(corrupt(si - 1));
            }
            match j {
                0 | 1 => return Err(corrupt(si - 1)),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(corrupt(src.len()));
                    }
                    if src[si] != b'=' {
                        return Err(corrupt(si - 1));
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                trailing_error = Some(corrupt(si));
            }
            dlen = j;
            finished = true;
            break;
        }
        let val = u32::from(dbuf[0]) << 18
            | u32::from(dbuf[1]) << 12
            | u32::from(dbuf[2]) << 6
            | u32::from(dbuf[3]);
        let bytes = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
        out.extend_from_slice(&bytes[..dlen - 1]);
        if let Some(error) = trailing_error {
            return Err(error);
        }
        if finished {
            // Go's Decode stops at the padding; anything after it was reported above.
            return Ok(out);
        }
    }
}

/// Go's `base32.StdEncoding.EncodeToString`.
pub(crate) fn base32_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    for chunk in bytes.chunks(5) {
        let mut block = [0u8; 5];
        block[..chunk.len()].copy_from_slice(chunk);
        let bits = block.iter().fold(0u64, |acc, byte| acc << 8 | u64::from(*byte));
        let chars = match chunk.len() {
            1 => 2,
            2 => 4,
            3 => 5,
            4 => 7,
            _ => 8,
        };
        for index in 0..8 {
            if index < chars {
                let value = (bits >> (35 - 5 * index)) & 31;
                out.push(char::from(B32[value as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Go's `base32.StdEncoding.DecodeString`, with its error (`illegal base32 data at input byte N`).
pub(crate) fn base32_decode(input: &[u8]) -> Result<Vec<u8>, String> {
    let mut map = [0xffu8; 256];
    for (index, byte) in B32.iter().enumerate() {
        map[usize::from(*byte)] = index as u8;
    }
    let corrupt = |at: usize| format!("illegal base32 data at input byte {at}");
    // DecodeString drops newlines first; offsets count in what remains.
    let src: Vec<u8> = input
        .iter()
        .copied()
        .filter(|byte| *byte != b'\n' && *byte != b'\r')
        .collect();
    let olen = src.len();
    let mut rest: &[u8] = &src;
    let mut out = Vec::with_capacity(olen / 8 * 5 + 5);
    let mut end = false;
    while !rest.is_empty() && !end {
        let mut dbuf = [0u8; 8];
        let mut dlen = 8usize;
        let mut j = 0usize;
        while j < 8 {
            let Some((&byte, tail)) = rest.split_first() else {
                return Err(corrupt(olen - rest.len() - j));
            };
            rest = tail;
            if byte == b'=' && j >= 2 && rest.len() < 8 {
                if rest.len() + j < 8 - 1 {
                    return Err(corrupt(olen));
                }
                for k in 0..(8 - 1 - j) {
                    if rest.len() > k && rest[k] != b'=' {
                        return Err(corrupt((olen - rest.len() + k).saturating_sub(1)));
                    }
                }
                dlen = j;
                end = true;
                if matches!(dlen, 1 | 3 | 6) {
                    return Err(corrupt(olen - rest.len() - 1));
                }
                break;
            }
            dbuf[j] = map[usize::from(byte)];
            if dbuf[j] == 0xff {
                return Err(corrupt(olen - rest.len() - 1));
            }
            j += 1;
        }
        let bits = dbuf.iter().fold(0u64, |acc, value| acc << 5 | u64::from(*value));
        let bytes = [
            (bits >> 32) as u8,
            (bits >> 24) as u8,
            (bits >> 16) as u8,
            (bits >> 8) as u8,
            bits as u8,
        ];
        let produced = match dlen {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            _ => 0,
        };
        out.extend_from_slice(&bytes[..produced]);
    }
    Ok(out)
}

/// Go's `string(bytes)`: our strings are UTF-8, so invalid sequences become U+FFFD.
fn bytes_to_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

fn b64enc(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    check_text_len("b64enc", (text.len() as u128).div_ceil(3) * 4)?;
    Ok(Value::from(base64_encode(text.as_bytes())))
}

fn b64dec(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    Ok(Value::from(match base64_decode(text.as_bytes()) {
        Ok(bytes) => bytes_to_string(bytes),
        Err(message) => message,
    }))
}

fn b32enc(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    check_text_len("b32enc", (text.len() as u128).div_ceil(5) * 8)?;
    Ok(Value::from(base32_encode(text.as_bytes())))
}

fn b32dec(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    Ok(Value::from(match base32_decode(text.as_bytes()) {
        Ok(bytes) => bytes_to_string(bytes),
        Err(message) => message,
    }))
}

fn sha1sum(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    Ok(Value::from(hex(&sha1::Sha1::digest(text.as_bytes()))))
}

fn sha256sum(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    Ok(Value::from(hex(&sha2::Sha256::digest(text.as_bytes()))))
}

fn sha512sum(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    Ok(Value::from(hex(&sha2::Sha512::digest(text.as_bytes()))))
}

/// Go's `hash/adler32.Checksum`.
fn adler32(bytes: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in bytes.chunks(5_552) {
        for byte in chunk {
            a += u32::from(*byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    b << 16 | a
}

fn adler32sum(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let text = param_str(&args[0])?;
    Ok(Value::from(adler32(text.as_bytes()).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::NoRuntime;

    fn call(name: &str, args: &[Value]) -> Result<String, FuncError> {
        let mut map = FuncMap::new();
        register(&mut map);
        let def = map.get(name).ok_or_else(|| FuncError::new("no such function"))?;
        def.arity.check(name, args.len())?;
        let value = (def.call)(&mut NoRuntime, args)?;
        Ok(value.as_str().unwrap_or_default().to_string())
    }

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    #[test]
    fn encodings_match_helm() {
        // Expected values printed by Helm v4.2.3.
        assert_eq!(call("b64enc", &[s("hi")]), Ok("aGk=".into()));
        assert_eq!(call("b32enc", &[s("hi")]), Ok("NBUQ====".into()));
        assert_eq!(
            call("b64dec", &[s("!!!")]),
            Ok("illegal base64 data at input byte 0".into())
        );
        assert_eq!(
            call("b32dec", &[s("!!")]),
            Ok("illegal base32 data at input byte 0".into())
        );
        assert_eq!(call("adler32sum", &[s("hello")]), Ok("103547413".into()));
        assert_eq!(
            call("sha512sum", &[s("abc")]),
            Ok("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f".into())
        );
        assert_eq!(call("b64dec", &[s("aGk=")]), Ok("hi".into()));
        assert_eq!(call("b32dec", &[s("NBUQ====")]), Ok("hi".into()));
        assert_eq!(
            call("sha1sum", &[Value::Float(1.5)]),
            Err(FuncError::new(
                "wrong type for value; expected string; got float64"
            ))
        );
    }

    #[test]
    fn decoder_errors_match_helm() {
        // Inputs and outputs printed by Helm v4.2.3.
        let b64 = [
            ("aGk", "illegal base64 data at input byte 0"),
            ("aGk=x", "illegal base64 data at input byte 4"),
            ("aG=k", "illegal base64 data at input byte 2"),
            ("a===", "illegal base64 data at input byte 1"),
            ("aGk=\n", "hi"),
            ("aGVsbG8=aGk=", "illegal base64 data at input byte 8"),
            ("aG\nk=", "hi"),
            ("aGVsbA==", "hell"),
            ("aGVsbA=", "illegal base64 data at input byte 7"),
            ("aGVsbA", "illegal base64 data at input byte 4"),
            ("YQ==YQ==", "illegal base64 data at input byte 4"),
        ];
        for (input, output) in b64 {
            let input = input.replace("\\n", "\n");
            assert_eq!(call("b64dec", &[s(&input)]), Ok(output.to_string()), "{input:?}");
        }
        let b32 = [
            ("NBUQ===", "illegal base32 data at input byte 7"),
            ("NBUQ====X", "hi"),
            ("NB======", "h"),
            ("N=======", "illegal base32 data at input byte 1"),
            ("NBUQ====NBUQ====", "illegal base32 data at input byte 4"),
            ("NBU=====", "illegal base32 data at input byte 3"),
            ("MFRGG===", "abc"),
            ("MFRGGZDF", "abcde"),
            ("MFRGGZD=", "abcd"),
        ];
        for (input, output) in b32 {
            assert_eq!(call("b32dec", &[s(input)]), Ok(output.to_string()), "{input:?}");
        }
    }

    #[test]
    fn round_trips() {
        for text in ["", "a", "ab", "abc", "abcd", "abcde", "abcdef", "hello world!"] {
            assert_eq!(
                base64_decode(base64_encode(text.as_bytes()).as_bytes()),
                Ok(text.as_bytes().to_vec())
            );
            assert_eq!(
                base32_decode(base32_encode(text.as_bytes()).as_bytes()),
                Ok(text.as_bytes().to_vec())
            );
        }
        assert_eq!(
            hex(&sha2::Sha256::digest(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
