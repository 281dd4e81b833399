//! The Kubernetes minor version a simulated cluster plays: what `/version` answers and which API group versions
//! its discovery serves (the [catalog](crate::catalog) keeps, per built-in type, the releases that served it).

use std::fmt;
use std::str::FromStr;

/// A Kubernetes `1.<minor>` release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubernetesVersion {
    minor: u32,
}

impl KubernetesVersion {
    /// The oldest release kubesim plays (every removal a chart still meets happened after it).
    pub const OLDEST: KubernetesVersion = KubernetesVersion { minor: 19 };
    /// The newest release kubesim plays, and the default.
    pub const NEWEST: KubernetesVersion = KubernetesVersion { minor: 33 };

    /// `1.<minor>`, if kubesim plays it.
    #[must_use]
    pub fn new(minor: u32) -> Option<Self> {
        (Self::OLDEST.minor..=Self::NEWEST.minor)
            .contains(&minor)
            .then_some(Self { minor })
    }

    /// The minor number.
    #[must_use]
    pub const fn minor(self) -> u32 {
        self.minor
    }

    /// `/version`'s `gitVersion`, e.g. `v1.23.0+kubesim` (build metadata, not a pre-release: a chart's
    /// `semverCompare ">=1.23"` holds, as it does for `v1.23.0` itself).
    #[must_use]
    pub fn git_version(self) -> String {
        format!("v1.{}.0+kubesim", self.minor)
    }
}

impl Default for KubernetesVersion {
    fn default() -> Self {
        Self::NEWEST
    }
}

impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor)
    }
}

/// Why a Kubernetes version was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Kubernetes version '{given}': expected 1.<minor> (a leading v and a patch number are allowed) with minor {} to {}",
    KubernetesVersion::OLDEST.minor,
    KubernetesVersion::NEWEST.minor
)]
pub struct VersionError {
    /// What was given.
    pub given: String,
}

impl FromStr for KubernetesVersion {
    type Err = VersionError;

    /// `1.23`, `v1.23` or `1.23.5`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let refused = || VersionError {
            given: text.to_string(),
        };
        let body = text.strip_prefix('v').unwrap_or(text);
        let mut parts = body.split('.');
        let (Some("1"), Some(minor)) = (parts.next(), parts.next()) else {
            return Err(refused());
        };
        let patch_ok = match parts.next() {
            None => true,
            Some(patch) => {
                !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit()) && parts.next().is_none()
            }
        };
        if !patch_ok || minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) || minor.len() > 3 {
            return Err(refused());
        }
        minor.parse().ok().and_then(Self::new).ok_or_else(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_in_the_forms_people_write_them() {
        for text in ["1.23", "v1.23", "1.23.5", "v1.23.17"] {
            assert_eq!(text.parse::<KubernetesVersion>().unwrap().minor(), 23, "{text}");
        }
        for text in [
            "", "1", "2.23", "1.18", "1.99", "1.x", "1.23.", "1.23.4.5", "1.-3", "v",
        ] {
            let err = text.parse::<KubernetesVersion>().unwrap_err();
            assert_eq!(err.given, text);
            assert!(err.to_string().contains("19 to 33"), "{err}");
        }
        assert_eq!(KubernetesVersion::default().git_version(), "v1.33.0+kubesim");
    }
}
