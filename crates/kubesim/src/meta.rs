//! Server-owned metadata: uids, timestamps, generated names, and the small helpers every write uses.

use rand::Rng;
use serde_json::Value as Json;

/// The alphabet Kubernetes uses for generated name suffixes and hashes.
pub const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A random suffix of `len` characters from [`SAFE_ALPHABET`].
#[must_use]
pub fn random_suffix(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| SAFE_ALPHABET[rng.random_range(0..SAFE_ALPHABET.len())] as char)
        .collect()
}

/// A stable string hash rendered in [`SAFE_ALPHABET`] (for `pod-template-hash` and revision names).
#[must_use]
pub fn stable_hash(value: &Json, len: usize) -> String {
    // FNV-1a over the canonical JSON text: stable across runs and processes.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in value.to_string().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let mut out = String::with_capacity(len);
    for _ in 0..len {
        out.push(SAFE_ALPHABET[(hash % SAFE_ALPHABET.len() as u64) as usize] as char);
        hash /= SAFE_ALPHABET.len() as u64;
        if hash == 0 {
            hash = 0x9e37_79b9_7f4a_7c15;
        }
    }
    out
}

/// A random UUIDv4.
#[must_use]
pub fn uuid() -> String {
    let bytes: [u8; 16] = rand::random();
    let mut b = bytes;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    format!(
        "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
    )
}

/// The current time as Kubernetes writes it (seconds, UTC).
#[must_use]
pub fn now() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

/// `metadata.name` of an object.
#[must_use]
pub fn name(object: &Json) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// `metadata.namespace` of an object.
#[must_use]
pub fn namespace(object: &Json) -> &str {
    object["metadata"]["namespace"].as_str().unwrap_or_default()
}

/// `metadata.uid` of an object.
#[must_use]
pub fn uid(object: &Json) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

/// Whether the object is being deleted.
#[must_use]
pub fn is_deleting(object: &Json) -> bool {
    object["metadata"]["deletionTimestamp"].is_string()
}

/// The object's labels (empty when it has none).
#[must_use]
pub fn labels(object: &Json) -> serde_json::Map<String, Json> {
    object["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// A DNS-1123 subdomain (object names): lower-case alphanumerics, '-' and '.', at most 253 characters.
#[must_use]
pub fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && name.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_values_have_kubernetes_shapes() {
        let id = uuid();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(random_suffix(5).bytes().all(|b| SAFE_ALPHABET.contains(&b)));
        let value = serde_json::json!({"a": 1});
        assert_eq!(stable_hash(&value, 10), stable_hash(&value, 10));
        assert_ne!(
            stable_hash(&value, 10),
            stable_hash(&serde_json::json!({"a": 2}), 10)
        );
        assert!(now().ends_with('Z') && !now().contains('.'));
        assert!(is_dns_subdomain("web-1.x") && !is_dns_subdomain("Web") && !is_dns_subdomain("-a"));
    }
}
