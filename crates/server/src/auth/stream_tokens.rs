//! Short-lived stream tokens (`POST /v2/tokens/stream`, issue #19 §1): a browser's `EventSource` cannot send an
//! `Authorization` header, so a page mints one of these with its real token and opens the stream with
//! `?access_token=<stream token>`. The real token never travels in a URL (where logs and histories keep it).
//!
//! A stream token carries the identity (and so the role) of whoever minted it, is accepted for
//! [`STREAM_TOKEN_LIFETIME`] after minting and only on GET requests that open a stream (the authentication guard
//! checks that), and is random (256 bits). At most [`MAX_STREAM_TOKENS`] are outstanding; expired ones are
//! forgotten as new ones are minted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;
use tokio::time::Instant;

use super::Identity;

/// How long a stream token may be used to start a stream (a stream it started runs on).
pub const STREAM_TOKEN_LIFETIME: Duration = Duration::from_secs(60);
/// The most stream tokens outstanding at once.
pub const MAX_STREAM_TOKENS: usize = 10_000;
/// Random bytes in a token.
const TOKEN_BYTES: usize = 32;

/// Why a stream token cannot be minted.
#[derive(Debug, thiserror::Error)]
pub enum StreamTokenError {
    /// [`MAX_STREAM_TOKENS`] unexpired tokens are outstanding.
    #[error("{0} stream tokens are outstanding, the most this server keeps; try again in a minute")]
    TooMany(usize),
    /// The system's random source failed.
    #[error("cannot draw a random stream token: {0}")]
    Random(String),
}

/// A minted token.
#[derive(Debug, Clone)]
pub struct MintedToken {
    /// The token (URL-safe base64, no padding).
    pub token: String,
    /// When it stops being accepted.
    pub expires_at: jiff::Timestamp,
}

/// The outstanding stream tokens.
pub struct StreamTokens {
    max: usize,
    lifetime: Duration,
    tokens: Mutex<HashMap<String, (Arc<Identity>, Instant)>>,
}

impl StreamTokens {
    /// No token yet; at most `max` outstanding, each accepted for [`STREAM_TOKEN_LIFETIME`].
    #[must_use]
    pub fn new(max: usize) -> Self {
        Self::with_lifetime(max, STREAM_TOKEN_LIFETIME)
    }

    /// No token yet; at most `max` outstanding, each accepted for `lifetime`.
    #[must_use]
    pub fn with_lifetime(max: usize, lifetime: Duration) -> Self {
        Self {
            max,
            lifetime,
            tokens: Mutex::new(HashMap::new()),
        }
    }

    /// A new token for `identity`, accepted for the tokens' lifetime.
    pub fn mint(&self, identity: Arc<Identity>) -> Result<MintedToken, StreamTokenError> {
        let mut random = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut random).map_err(|err| StreamTokenError::Random(err.to_string()))?;
        let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random);
        let now = Instant::now();
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        if tokens.len() >= self.max {
            tokens.retain(|_, (_, expires)| *expires > now);
            if tokens.len() >= self.max {
                return Err(StreamTokenError::TooMany(self.max));
            }
        }
        tokens.insert(token.clone(), (identity, now + self.lifetime));
        let lifetime = jiff::SignedDuration::try_from(self.lifetime).unwrap_or(jiff::SignedDuration::ZERO);
        let expires_at = jiff::Timestamp::now()
            .checked_add(lifetime)
            .unwrap_or_else(|_| jiff::Timestamp::now());
        Ok(MintedToken { token, expires_at })
    }

    /// The identity of an unexpired token.
    #[must_use]
    pub fn redeem(&self, presented: &str) -> Option<Arc<Identity>> {
        let tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        let (identity, expires) = tokens.get(presented)?;
        (*expires > Instant::now()).then(|| identity.clone())
    }

    /// How many tokens are kept (expired ones included until a mint forgets them).
    #[must_use]
    pub fn len(&self) -> usize {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no token is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Role;

    fn viewer() -> Arc<Identity> {
        Arc::new(Identity {
            user: "ann".into(),
            uid: "1".into(),
            groups: vec!["emco:viewer".into()],
            role: Role::Viewer,
        })
    }

    #[test]
    fn a_token_carries_its_identity_until_it_expires() {
        let tokens = StreamTokens::new(10);
        let minted = tokens.mint(viewer()).unwrap();
        assert_eq!(minted.token.len(), 43, "256 bits in URL-safe base64");
        assert_eq!(tokens.redeem(&minted.token).unwrap().user, "ann");
        assert!(tokens.redeem("not-a-token").is_none());
        let other = tokens.mint(viewer()).unwrap();
        assert_ne!(other.token, minted.token);
        assert!(minted.expires_at > jiff::Timestamp::now());
        let expiring = StreamTokens::with_lifetime(10, Duration::ZERO);
        let expired = expiring.mint(viewer()).unwrap();
        assert!(expiring.redeem(&expired.token).is_none(), "expired");
    }

    #[test]
    fn outstanding_tokens_are_bounded_and_expired_ones_make_room() {
        let tokens = StreamTokens::new(2);
        tokens.mint(viewer()).unwrap();
        tokens.mint(viewer()).unwrap();
        assert!(matches!(tokens.mint(viewer()), Err(StreamTokenError::TooMany(2))));
        let expiring = StreamTokens::with_lifetime(2, Duration::ZERO);
        expiring.mint(viewer()).unwrap();
        expiring.mint(viewer()).unwrap();
        expiring.mint(viewer()).unwrap();
        assert_eq!(expiring.len(), 1, "the expired ones were forgotten");
    }
}
