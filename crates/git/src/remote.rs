//! Where a repository is and how emco reaches it: its URL (http or https, no credentials, query or fragment in it),
//! branch, user name and token (a [`Secret`], never shown), the CA certificates its server is checked against; and
//! the bounds of talking to it ([`Limits`]).

use std::fmt;
use std::time::Duration;

use crate::{GitError, Result};

/// The longest URL accepted.
const MAX_URL_LEN: usize = 2048;
/// The longest branch or user name accepted.
const MAX_NAME_LEN: usize = 255;
/// The longest token accepted.
const MAX_TOKEN_LEN: usize = 4096;

/// A secret string: kept, used, never shown by `Debug` or `Display`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    #[must_use]
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that sends it.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// A repository branch and the credentials to push to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// `https://git.example.com/org/repo` (or `http://` where the operator allows it).
    pub url: String,
    /// The branch emco commits to.
    pub branch: String,
    /// The user name sent with the token (HTTP basic authentication).
    pub username: String,
    /// The token (or password); empty: none is sent.
    pub token: Secret,
    /// PEM CA certificates the server is checked against; none: the system's.
    pub ca_pem: Option<String>,
}

impl Remote {
    /// Refuses a remote emco would not use, naming what is wrong: a URL that is not `http(s)://host/…`, carries
    /// credentials, a query or a fragment, or is too long; a branch that is not a valid branch name; a user name or
    /// token that is too long or holds a control character.
    pub fn check(&self) -> Result<()> {
        let refuse = |message: String| Err(GitError::Remote(message));
        let url = self.url.as_str();
        if url.len() > MAX_URL_LEN {
            return refuse(format!(
                "the URL is {} characters long; at most {MAX_URL_LEN}",
                url.len()
            ));
        }
        let Some(rest) = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
        else {
            return refuse("the URL must start with https:// (or http://)".into());
        };
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.is_empty() {
            return refuse("the URL names no host".into());
        }
        if authority.contains('@') {
            return refuse("the URL carries credentials: give the token as gitToken instead".into());
        }
        if url.contains(['?', '#']) || url.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return refuse("the URL holds a query, a fragment, a space or a control character".into());
        }
        if self.branch.is_empty()
            || self.branch.len() > MAX_NAME_LEN
            || !git2::Reference::is_valid_name(&format!("refs/heads/{}", self.branch))
        {
            return refuse(format!("'{}' is not a branch name", shown(&self.branch)));
        }
        if self.username.len() > MAX_NAME_LEN || self.username.contains([':', '\n', '\r']) {
            return refuse("the user name is too long or holds ':' or a line break".into());
        }
        let token = self.token.expose();
        if token.len() > MAX_TOKEN_LEN || token.chars().any(char::is_control) {
            return refuse("the token is too long or holds a control character".into());
        }
        Ok(())
    }

    /// Whether the URL is plain `http://`.
    #[must_use]
    pub fn is_plain_http(&self) -> bool {
        self.url.starts_with("http://")
    }
}

/// `value` cut to 64 characters, for messages.
fn shown(value: &str) -> String {
    value.chars().take(64).collect()
}

/// The bounds of talking to a Git server and of what is read from a branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest one HTTP exchange may take.
    pub request_timeout: Duration,
    /// The largest answer read (a fetch's pack).
    pub max_response_bytes: usize,
    /// The largest request sent (a push's pack).
    pub max_request_bytes: usize,
    /// How many times a rejected push is fetched, rebased and tried again.
    pub push_attempts: u32,
    /// The most files [`crate::Mirror::read`] answers.
    pub max_read_files: usize,
    /// The most bytes [`crate::Mirror::read`] answers.
    pub max_read_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(60),
            max_response_bytes: 512 * 1024 * 1024,
            max_request_bytes: 512 * 1024 * 1024,
            push_attempts: 5,
            max_read_files: 100_000,
            max_read_bytes: 256 * 1024 * 1024,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(url: &str, branch: &str) -> Remote {
        Remote {
            url: url.into(),
            branch: branch.into(),
            username: "emco".into(),
            token: Secret::new("t0k3n"),
            ca_pem: None,
        }
    }

    #[test]
    fn a_remote_is_checked_and_its_token_never_shown() {
        remote("https://git.example.com/org/fleet.git", "main")
            .check()
            .unwrap();
        remote("http://127.0.0.1:8080/fleet.git", "env/edge")
            .check()
            .unwrap();
        for (url, branch, needle) in [
            ("ssh://git@example.com/fleet", "main", "must start with https://"),
            ("https://user:pw@example.com/fleet", "main", "carries credentials"),
            ("https://example.com/fleet?x=1", "main", "query"),
            ("https:///fleet", "main", "names no host"),
            ("https://example.com/fleet", "a..b", "not a branch name"),
            ("https://example.com/fleet", "", "not a branch name"),
        ] {
            let refused = remote(url, branch).check().unwrap_err().to_string();
            assert!(refused.contains(needle), "{url} {branch}: {refused}");
        }
        let shown = format!("{:?}", remote("https://example.com/f", "main"));
        assert!(!shown.contains("t0k3n"), "{shown}");
    }
}
