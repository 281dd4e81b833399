//! Sprig's randomness (`randAlphaNum`, `randAlpha`, `randNumeric`, `randAscii`, `randInt`, `randBytes`, `uuidv4`, `shuffle`).
//!
//! The strings come from the operating system's generator (Sprig uses `crypto/rand` through goutils); `randInt` and
//! `shuffle` use a seeded generator as Go's `math/rand` does. A negative length gives "" (goutils' error is
//! swallowed by Sprig); `randInt` with an empty range and `randBytes` with a negative count fail with Go's panic
//! texts, which text/template reports as errors.

use rand::Rng as _;
use rand::seq::SliceRandom as _;

use crate::gotemplate::funcs::{check_text_len, param_int, param_str};
use crate::gotemplate::{Arity, FuncError, FuncMap, Runtime, Value};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("randAlphaNum", Arity::Exact(1), rand_alpha_num);
    map.add("randAlpha", Arity::Exact(1), rand_alpha);
    map.add("randNumeric", Arity::Exact(1), rand_numeric);
    map.add("randAscii", Arity::Exact(1), rand_ascii);
    map.add("randInt", Arity::Exact(2), rand_int);
    map.add("randBytes", Arity::Exact(1), rand_bytes);
    map.add("uuidv4", Arity::Exact(0), uuidv4);
    map.add("shuffle", Arity::Exact(1), shuffle);
}

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &[u8] = b"0123456789";

/// `count` characters drawn from `alphabet`; "" for a negative count (as Sprig returns).
fn random_string(name: &str, count: &Value, alphabet: &[u8]) -> Result<Value, FuncError> {
    let count = param_int(count)?;
    if count <= 0 {
        return Ok(Value::from(""));
    }
    check_text_len(name, count as u128)?;
    let mut rng = rand::rng();
    let text: String = (0..count)
        .map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())]))
        .collect();
    Ok(Value::from(text))
}

fn rand_alpha_num(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let alphabet: Vec<u8> = LETTERS.iter().chain(DIGITS).copied().collect();
    random_string("randAlphaNum", &args[0], &alphabet)
}

fn rand_alpha(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    random_string("randAlpha", &args[0], LETTERS)
}

fn rand_numeric(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    random_string("randNumeric", &args[0], DIGITS)
}

fn rand_ascii(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    // goutils' CryptoRandomAscii: code points 32 through 126.
    let alphabet: Vec<u8> = (32u8..127).collect();
    random_string("randAscii", &args[0], &alphabet)
}

fn rand_int(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let min = param_int(&args[0])?;
    let max = param_int(&args[1])?;
    // Go: rand.Intn(max-min) + min, wrapping as Go's int arithmetic does; Intn panics on n <= 0.
    let span = max.wrapping_sub(min);
    if span <= 0 {
        return Err(FuncError::new("invalid argument to Intn"));
    }
    let offset = rand::rng().random_range(0..span);
    Ok(Value::Int(offset.wrapping_add(min)))
}

fn rand_bytes(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let count = param_int(&args[0])?;
    if count < 0 {
        return Err(FuncError::new("runtime error: makeslice: len out of range"));
    }
    check_text_len("randBytes", (count as u128).div_ceil(3) * 4)?;
    let mut bytes = vec![0u8; count as usize];
    rand::rng().fill(bytes.as_mut_slice());
    Ok(Value::from(super::encoding::base64_encode(&bytes)))
}

fn uuidv4(_: &mut dyn Runtime, _args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(uuid::Uuid::new_v4().hyphenated().to_string()))
}

fn shuffle(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    // xstrings.Shuffle permutes the runes.
    let text = param_str(&args[0])?;
    let mut runes: Vec<char> = text.chars().collect();
    runes.shuffle(&mut rand::rng());
    Ok(Value::from(runes.into_iter().collect::<String>()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::NoRuntime;

    fn call(name: &str, args: &[Value]) -> Result<Value, FuncError> {
        let mut map = FuncMap::new();
        register(&mut map);
        let def = map.get(name).ok_or_else(|| FuncError::new("no such function"))?;
        def.arity.check(name, args.len())?;
        (def.call)(&mut NoRuntime, args)
    }

    fn text(value: Result<Value, FuncError>) -> String {
        value
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "<err>".into())
    }

    #[test]
    fn random_strings_have_the_right_shape() {
        let alnum = text(call("randAlphaNum", &[Value::Int(40)]));
        assert_eq!(alnum.len(), 40);
        assert!(alnum.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert!(
            text(call("randAlpha", &[Value::Int(30)]))
                .bytes()
                .all(|b| b.is_ascii_alphabetic())
        );
        assert!(
            text(call("randNumeric", &[Value::Int(30)]))
                .bytes()
                .all(|b| b.is_ascii_digit())
        );
        let ascii = text(call("randAscii", &[Value::Int(50)]));
        assert!(ascii.len() == 50 && ascii.bytes().all(|b| (32..127).contains(&b)));
        assert_eq!(text(call("randAlphaNum", &[Value::Int(-1)])), "");
        assert_eq!(text(call("randAlphaNum", &[Value::Int(0)])), "");
        assert!(call("randAlpha", &[Value::Float(2.0)]).is_err());
        assert!(call("randAlpha", &[Value::Int(1 << 40)]).is_err());
    }

    #[test]
    fn ints_bytes_uuids_and_shuffles() {
        for _ in 0..20 {
            assert!(matches!(
                call("randInt", &[Value::Int(5), Value::Int(7)]),
                Ok(Value::Int(5 | 6))
            ));
        }
        assert_eq!(
            call("randInt", &[Value::Int(5), Value::Int(5)]).err(),
            Some(FuncError::new("invalid argument to Intn"))
        );
        assert_eq!(
            call("randBytes", &[Value::Int(-1)]).err(),
            Some(FuncError::new("runtime error: makeslice: len out of range"))
        );
        let bytes = text(call("randBytes", &[Value::Int(3)]));
        assert_eq!(
            super::super::encoding::base64_decode(bytes.as_bytes()).map(|b| b.len()),
            Ok(3)
        );
        let id = text(call("uuidv4", &[]));
        assert!(uuid::Uuid::parse_str(&id).is_ok_and(|u| u.get_version_num() == 4));
        assert_eq!(id.len(), 36);
        let mut shuffled: Vec<char> = text(call("shuffle", &[Value::from("héllo")])).chars().collect();
        shuffled.sort_unstable();
        assert_eq!(shuffled, vec!['h', 'l', 'l', 'o', 'é']);
    }
}
