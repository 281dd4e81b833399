//! The tokens of pull clusters' agents: one per pull cluster, issued when the cluster is registered and replaced
//! by `POST …/clusters/{c}/agent-token`, each admitting only its own cluster's agent endpoints.
//!
//! A token reads `emco-agent.<provider>+<cluster>.<secret>`: the cluster it belongs to, so the server finds the one
//! record to check without trying every cluster, and 32 random bytes (base64url). emco keeps only the secret's
//! SHA-256, in the cluster's blob (a pull cluster has no kubeconfig to keep there), so a copy of the store admits
//! no agent; rotating the token replaces that digest, and the old token fails at its next use. The presented
//! digest is compared in constant time.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

/// How every agent token begins.
pub const AGENT_TOKEN_PREFIX: &str = "emco-agent.";
/// Random bytes in a token's secret.
const SECRET_BYTES: usize = 32;
/// The longest token read (a cluster key of two 128-character names and the secret fit well inside).
const MAX_TOKEN_BYTES: usize = 512;

/// Why an agent token cannot be issued or read.
#[derive(Debug, thiserror::Error)]
pub enum AgentTokenError {
    /// The system's random source failed.
    #[error("cannot draw random bytes for an agent token: {0}")]
    Random(String),
    /// The presented text is not an agent token's shape.
    #[error("the agent token is malformed: {0}")]
    Malformed(&'static str),
    /// The cluster's stored digest cannot be read (it is not a pull cluster's record).
    #[error("the cluster's agent token record cannot be read: {0}")]
    Record(String),
}

/// A freshly issued token: the text for the agent (shown once) and the record emco keeps.
#[derive(Debug)]
pub struct IssuedAgentToken {
    /// The token, for the agent's `--token-file`.
    pub token: String,
    /// What the cluster's blob holds from now on (the secret's digest).
    pub record: Vec<u8>,
}

/// What a pull cluster's blob holds.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AgentTokenRecord {
    schema: u32,
    /// The SHA-256 of the secret, base64url.
    agent_token_sha256: String,
}

/// A presented agent token, split into its cluster and its secret.
#[derive(Debug, PartialEq, Eq)]
pub struct PresentedAgentToken<'a> {
    /// The provider of the cluster the token names.
    pub provider: &'a str,
    /// The cluster the token names.
    pub cluster: &'a str,
    secret: &'a str,
}

/// Whether a bearer token is an agent token (by its prefix; whether it is valid is another matter).
#[must_use]
pub fn is_agent_token(token: &str) -> bool {
    token.starts_with(AGENT_TOKEN_PREFIX)
}

/// Issues a new token for `provider`'s `cluster`.
pub fn issue(provider: &str, cluster: &str) -> Result<IssuedAgentToken, AgentTokenError> {
    let mut random = [0u8; SECRET_BYTES];
    getrandom::fill(&mut random).map_err(|err| AgentTokenError::Random(err.to_string()))?;
    let secret = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random);
    let record = AgentTokenRecord {
        schema: 1,
        agent_token_sha256: digest(&secret),
    };
    let record = serde_json::to_vec(&record).map_err(|err| AgentTokenError::Record(err.to_string()))?;
    Ok(IssuedAgentToken {
        token: format!("{AGENT_TOKEN_PREFIX}{provider}+{cluster}.{secret}"),
        record,
    })
}

/// Reads a presented agent token (its cluster and secret), refusing anything of another shape.
pub fn parse(token: &str) -> Result<PresentedAgentToken<'_>, AgentTokenError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(AgentTokenError::Malformed("it is too long"));
    }
    let rest = token
        .strip_prefix(AGENT_TOKEN_PREFIX)
        .ok_or(AgentTokenError::Malformed("it does not begin with 'emco-agent.'"))?;
    // The secret is base64url, which has no '.', so the last '.' ends the cluster's name.
    let (cluster_key, secret) = rest
        .rsplit_once('.')
        .ok_or(AgentTokenError::Malformed("it names no secret"))?;
    let (provider, cluster) = cluster_key
        .split_once('+')
        .ok_or(AgentTokenError::Malformed("it names no 'provider+cluster'"))?;
    if provider.is_empty() || cluster.is_empty() || secret.is_empty() {
        return Err(AgentTokenError::Malformed("a part of it is empty"));
    }
    Ok(PresentedAgentToken {
        provider,
        cluster,
        secret,
    })
}

impl PresentedAgentToken<'_> {
    /// The cluster's key, `provider+cluster`.
    #[must_use]
    pub fn cluster_key(&self) -> String {
        format!("{}+{}", self.provider, self.cluster)
    }

    /// Whether the token is the one whose digest `record` (the cluster's blob) holds.
    pub fn matches(&self, record: &[u8]) -> Result<bool, AgentTokenError> {
        let stored: AgentTokenRecord =
            serde_json::from_slice(record).map_err(|err| AgentTokenError::Record(err.to_string()))?;
        let presented = digest(self.secret);
        Ok(bool::from(
            presented.as_bytes().ct_eq(stored.agent_token_sha256.as_bytes()),
        ))
    }
}

fn digest(secret: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(secret.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_token_matches_its_record_and_no_other() {
        let first = issue("edge", "site-1").unwrap();
        let second = issue("edge", "site-1").unwrap();
        assert_ne!(first.token, second.token);
        let presented = parse(&first.token).unwrap();
        assert_eq!(presented.cluster_key(), "edge+site-1");
        assert!(presented.matches(&first.record).unwrap());
        assert!(!presented.matches(&second.record).unwrap());
        // The record keeps a digest, never the secret.
        let secret = first.token.rsplit_once('.').unwrap().1;
        assert!(!String::from_utf8_lossy(&first.record).contains(secret));
    }

    #[test]
    fn names_with_dots_keep_the_secret_apart() {
        let issued = issue("edge.eu", "site.1").unwrap();
        let presented = parse(&issued.token).unwrap();
        assert_eq!((presented.provider, presented.cluster), ("edge.eu", "site.1"));
        assert!(presented.matches(&issued.record).unwrap());
    }

    #[test]
    fn other_shapes_are_refused() {
        for bad in [
            "abc",
            "emco-agent.",
            "emco-agent.edge+site",
            "emco-agent.edgesite.secret",
            "emco-agent.+site.secret",
            "emco-agent.edge+.secret",
            "emco-agent.edge+site.",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(&format!("emco-agent.e+c.{}", "x".repeat(600))).is_err());
        let presented = parse("emco-agent.e+c.secret").unwrap();
        assert!(presented.matches(b"not json").is_err());
    }
}
