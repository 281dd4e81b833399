//! Authentication, as the Kubernetes API server does it: a verified client certificate names the user (subject
//! CommonName) and groups (subject Organizations); otherwise a bearer token is looked up in the cluster's token
//! table, and an unknown token is a 401 `Unauthorized` Status; a request with neither is `system:anonymous`.
//! Every authenticated user is also in `system:authenticated`, the anonymous user in `system:unauthenticated`.

use std::sync::Arc;

use axum::http::{HeaderMap, header};

use crate::cluster::ClusterShared;
use crate::error::ApiError;

/// The user of a request without credentials.
pub const ANONYMOUS_USER: &str = "system:anonymous";
/// The group of every request without credentials.
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
/// The group of every authenticated request.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name (`kubesim-admin`, `system:serviceaccount:ns:name`, `system:anonymous`).
    pub name: String,
    /// Its groups, `system:authenticated` or `system:unauthenticated` included.
    pub groups: Vec<String>,
}

impl UserInfo {
    /// An authenticated user in `groups` (and `system:authenticated`).
    #[must_use]
    pub fn authenticated(name: &str, groups: &[String]) -> Self {
        let mut groups = groups.to_vec();
        if !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
            groups.push(AUTHENTICATED_GROUP.to_string());
        }
        Self {
            name: name.to_string(),
            groups,
        }
    }

    /// The anonymous user.
    #[must_use]
    pub fn anonymous() -> Self {
        Self {
            name: ANONYMOUS_USER.to_string(),
            groups: vec![UNAUTHENTICATED_GROUP.to_string()],
        }
    }

    /// Whether the user is anonymous.
    #[must_use]
    pub fn is_anonymous(&self) -> bool {
        self.name == ANONYMOUS_USER
    }

    /// Whether the user is in `group`.
    #[must_use]
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// The identity of the verified client certificate of a connection (none: no certificate, or plain HTTP); the
/// server puts it into every request of the connection.
#[derive(Debug, Clone, Default)]
pub struct PeerIdentity(pub Option<Arc<UserInfo>>);

impl PeerIdentity {
    /// The identity of a verified certificate chain (end-entity certificate first).
    #[must_use]
    pub fn from_chain(chain: Option<&[rustls::pki_types::CertificateDer<'_>]>) -> Self {
        let identity = chain
            .and_then(<[_]>::first)
            .and_then(|leaf| crate::tls::subject_identity(leaf))
            .map(|(user, groups)| Arc::new(UserInfo::authenticated(&user, &groups)));
        Self(identity)
    }
}

/// Who made a request: the certificate's user, else the bearer token's, else anonymous. An unknown token is a
/// 401 `Unauthorized` Status.
pub fn authenticate(
    cluster: &ClusterShared,
    peer: Option<&PeerIdentity>,
    headers: &HeaderMap,
) -> Result<UserInfo, ApiError> {
    if let Some(user) = peer.and_then(|p| p.0.as_deref()) {
        return Ok(user.clone());
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    match bearer {
        Some(token) => cluster.token_user(token).ok_or_else(ApiError::unauthorized),
        None => Ok(UserInfo::anonymous()),
    }
}
