//! Authentication, as the Kubernetes API server does it: a verified client certificate names the user (subject
//! CommonName) and groups (subject Organizations); otherwise a bearer token is looked up in the cluster's token
//! table, and an unknown token is a 401 `Unauthorized` Status; a request with neither is `system:anonymous`.
//! Every authenticated user is also in `system:authenticated`, the anonymous user in `system:unauthenticated`.
//! A request may then act as another user (`Impersonate-User`, `Impersonate-Group`: `kubectl --as`) when RBAC
//! lets its user `impersonate` them.

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

    /// The cluster's administrator (`kubesim-admin` in `system:masters`), as its admin certificate and token say.
    #[must_use]
    pub fn admin() -> Self {
        Self::authenticated(crate::tls::ADMIN_USER, &[crate::tls::MASTERS_GROUP.to_string()])
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

/// The header naming the user a request acts as.
pub const IMPERSONATE_USER: &str = "impersonate-user";
/// The header (repeated) naming the groups a request acts as.
pub const IMPERSONATE_GROUP: &str = "impersonate-group";
/// The most groups a request may act as.
const MAX_IMPERSONATED_GROUPS: usize = 64;

/// The user a request acts as: `user` itself, or — with `Impersonate-User` (and `Impersonate-Group`), what
/// `kubectl --as`/`--as-group` send — the impersonated user, if `user` may `impersonate` that user (resource
/// `users`, or `serviceaccounts` in their namespace) and each group (resource `groups`). A denial is the 403
/// Kubernetes answers, e.g. `users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API
/// group "" at the cluster scope`.
pub fn impersonate(
    cluster: &ClusterShared,
    user: UserInfo,
    headers: &HeaderMap,
) -> Result<UserInfo, ApiError> {
    let header_text = |value: &axum::http::HeaderValue| {
        value
            .to_str()
            .map(String::from)
            .map_err(|_| ApiError::bad_request("impersonation headers must be visible ASCII"))
    };
    let groups = headers
        .get_all(IMPERSONATE_GROUP)
        .iter()
        .map(header_text)
        .collect::<Result<Vec<_>, _>>()?;
    let Some(target) = headers.get(IMPERSONATE_USER) else {
        if groups.is_empty() {
            return Ok(user);
        }
        return Err(ApiError::bad_request(format!(
            "requested {groups:?} without impersonating a user"
        )));
    };
    let target = header_text(target)?;
    if target.is_empty() {
        return Err(ApiError::bad_request("Impersonate-User must name a user"));
    }
    if groups.len() > MAX_IMPERSONATED_GROUPS {
        return Err(ApiError::bad_request(format!(
            "at most {MAX_IMPERSONATED_GROUPS} groups may be impersonated"
        )));
    }
    let service_account = target
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
        .map(|(namespace, name)| (namespace.to_string(), name.to_string()));
    let mut asked = vec![match &service_account {
        Some((namespace, name)) => impersonation("serviceaccounts", Some(namespace), name),
        None => impersonation("users", None, &target),
    }];
    asked.extend(groups.iter().map(|group| impersonation("groups", None, group)));
    if !user.in_group(crate::tls::MASTERS_GROUP) {
        let store = cluster.store();
        if let Some(denied) = asked
            .iter()
            .find(|attributes| !crate::rbac::allows_resource(&store, &user, attributes))
        {
            return Err(denied.forbidden(&user));
        }
    }
    let mut acting = groups;
    if target == ANONYMOUS_USER {
        return Ok(UserInfo {
            name: target,
            groups: acting,
        });
    }
    if let Some((namespace, _)) = &service_account {
        for group in [
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{namespace}"),
        ] {
            if !acting.contains(&group) {
                acting.push(group);
            }
        }
    }
    Ok(UserInfo::authenticated(&target, &acting))
}

fn impersonation(resource: &str, namespace: Option<&str>, name: &str) -> crate::rbac::ResourceAttributes {
    crate::rbac::ResourceAttributes {
        verb: "impersonate".into(),
        group: String::new(),
        resource: resource.into(),
        subresource: None,
        namespace: namespace.map(String::from),
        name: Some(name.to_string()),
    }
}
