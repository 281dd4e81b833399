//! Name rules: EMCO's resource-name rule and the Kubernetes label-value rule.
//!
//! EMCO checks every `metadata.name` with `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$` and at most 128 characters;
//! status-query filters use the Kubernetes label-value rule (the same pattern, at most 63 characters).

/// The longest `metadata.name` EMCO accepts.
pub const MAX_NAME_LEN: usize = 128;
/// EMCO's name rule as a regular expression (documented in the API's schemas; checked by [`validate_name`]).
pub const NAME_PATTERN: &str = "^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
/// EMCO's name rule, or empty (a name a body may leave out).
pub const OPTIONAL_NAME_PATTERN: &str = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";
/// The longest Kubernetes label value.
pub const MAX_LABEL_VALUE_LEN: usize = 63;
/// A DNS-1123 label (a namespace), as `is_dns_label` checks it.
pub const DNS_LABEL_PATTERN: &str = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$";
/// A DNS-1123 subdomain (at most 253 characters), as `is_dns_subdomain` checks it.
pub const DNS_SUBDOMAIN_PATTERN: &str =
    "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$";
/// A Kubernetes label key: `[DNS-subdomain/]name`.
pub const LABEL_KEY_PATTERN: &str = "^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$";

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("{what} name is empty")]
    Empty {
        /// What was being named, e.g. `project`.
        what: String,
    },
    /// The name is longer than allowed.
    #[error("{what} name '{name}' is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// What was being named.
        what: String,
        /// The offending name (its first 64 characters and `…` when longer).
        name: String,
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The name has a character outside the rule or starts/ends with a symbol.
    #[error(
        "{what} name '{name}' is invalid: use letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    )]
    BadCharacters {
        /// What was being named.
        what: String,
        /// The offending name (its first 64 characters and `…` when longer).
        name: String,
    },
}

/// How much of a refused name an error message repeats: a hostile name may be megabytes long.
const MAX_SHOWN_CHARS: usize = 64;

/// A refused input as messages show it: whole when short, else its first 64 characters and `…` (a hostile input
/// may be megabytes long, and a message repeats it).
pub fn shown(name: &str) -> String {
    match name.char_indices().nth(MAX_SHOWN_CHARS) {
        None => name.to_string(),
        Some((cut, _)) => format!("{}…", &name[..cut]),
    }
}

fn check_pattern(what: &str, name: &str, max: usize) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty {
            what: what.to_string(),
        });
    }
    let len = name.chars().count();
    if len > max {
        return Err(NameError::TooLong {
            what: what.to_string(),
            name: shown(name),
            len,
            max,
        });
    }
    let bytes = name.as_bytes();
    let inner_ok = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    let first_last_ok = bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric);
    if !first_last_ok || !bytes.iter().all(inner_ok) {
        return Err(NameError::BadCharacters {
            what: what.to_string(),
            name: shown(name),
        });
    }
    Ok(())
}

/// Checks an EMCO resource name (`metadata.name`, path segments).
pub fn validate_name(what: &str, name: &str) -> Result<(), NameError> {
    check_pattern(what, name, MAX_NAME_LEN)
}

/// Checks a field that follows EMCO's name rule with its own length limit (a workload's name: 254).
pub fn validate_name_up_to(what: &str, name: &str, max: usize) -> Result<(), NameError> {
    check_pattern(what, name, max)
}

/// Checks a Kubernetes label value (used by status filters and cluster labels).
pub fn validate_label_value(what: &str, value: &str) -> Result<(), NameError> {
    check_pattern(what, value, MAX_LABEL_VALUE_LEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_emco_example_names() {
        for name in [
            "testvfw",
            "vfw_deployment_intent_group",
            "vfw_composite-profile",
            "a",
            "edge01",
            "v1.2",
        ] {
            assert_eq!(validate_name("x", name), Ok(()), "{name}");
        }
    }

    #[test]
    fn refuses_bad_names_with_a_reason() {
        assert!(matches!(
            validate_name("project", ""),
            Err(NameError::Empty { .. })
        ));
        assert!(matches!(
            validate_name("project", "-a"),
            Err(NameError::BadCharacters { .. })
        ));
        assert!(matches!(
            validate_name("project", "a_"),
            Err(NameError::BadCharacters { .. })
        ));
        assert!(matches!(
            validate_name("project", "a b"),
            Err(NameError::BadCharacters { .. })
        ));
        assert!(matches!(
            validate_name("project", "a/b"),
            Err(NameError::BadCharacters { .. })
        ));
        assert!(matches!(
            validate_name("project", "é"),
            Err(NameError::BadCharacters { .. })
        ));
        let long = "a".repeat(129);
        assert!(matches!(
            validate_name("project", &long),
            Err(NameError::TooLong { len: 129, .. })
        ));
        assert_eq!(validate_name("project", &"a".repeat(128)), Ok(()));
        assert!(validate_label_value("app", &"a".repeat(64)).is_err());
        let message = validate_name("project", "a b").unwrap_err().to_string();
        assert!(message.contains("project name 'a b'"), "{message}");
    }
}
