//! HTTPS for a cluster: a certificate authority made when the cluster starts, the API's serving certificate and
//! an admin client certificate signed by it, and the rustls acceptor that serves TLS and asks for (but does not
//! require) a client certificate signed by that authority.
//!
//! Keys are ECDSA P-256 (rcgen with ring). A client certificate names its user in the subject's CommonName and
//! its groups in the subject's Organization entries, as the Kubernetes API server reads them; [`subject_identity`]
//! reads them back from a certificate the handshake has already verified.

use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The user of the admin client certificate every kubeconfig carries.
pub const ADMIN_USER: &str = "kubesim-admin";

/// The group that bypasses authorization, as in Kubernetes.
pub const MASTERS_GROUP: &str = "system:masters";

/// Why a cluster's certificates or TLS configuration cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// rcgen refused to make a key or certificate.
    #[error("making a certificate: {0}")]
    Certificate(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("configuring TLS: {0}")]
    Rustls(#[from] rustls::Error),
    /// The cluster serves plain HTTP: it has no CA to sign certificates with.
    #[error("the cluster serves plain HTTP and has no certificate authority")]
    PlainHttp,
}

impl From<TlsError> for std::io::Error {
    fn from(err: TlsError) -> Self {
        std::io::Error::other(err)
    }
}

/// A client certificate and its private key, both PEM.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The certificate.
    pub certificate_pem: String,
    /// The PKCS#8 private key.
    pub key_pem: String,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials").finish_non_exhaustive()
    }
}

/// The certificate authority of one cluster, its serving certificate and its admin credentials.
pub struct ClusterAuthority {
    issuer: Issuer<'static, KeyPair>,
    ca_pem: String,
    ca_der: CertificateDer<'static>,
    admin: ClientCredentials,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl ClusterAuthority {
    /// Makes a CA named after `cluster`, a serving certificate for `localhost`, `127.0.0.1` and `address`, and
    /// the admin client certificate (CN [`ADMIN_USER`], O [`MASTERS_GROUP`]).
    pub fn new(cluster: &str, address: IpAddr) -> Result<Self, TlsError> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::default();
        ca_params.distinguished_name = DistinguishedName::new();
        ca_params
            .distinguished_name
            .push(DnType::CommonName, format!("kubesim-ca-{cluster}"));
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let ca_pem = ca_cert.pem();
        let ca_der = ca_cert.der().clone();
        let issuer = Issuer::new(ca_params, ca_key);

        let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        // The name a shared listener knows the cluster by (when the cluster's name can be a DNS label).
        if is_dns_label(cluster) {
            names.push(server_name(cluster));
        }
        // Also an unspecified address (0.0.0.0), which kubeconfigs then name as the server.
        if !names.contains(&address.to_string()) {
            names.push(address.to_string());
        }
        let server_key = KeyPair::generate()?;
        let mut server_params = CertificateParams::new(names)?;
        server_params.distinguished_name = DistinguishedName::new();
        server_params
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        server_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let server_cert = server_params.signed_by(&server_key, &issuer)?;

        let admin = issue_client(&issuer, ADMIN_USER, Some(MASTERS_GROUP))?;
        let acceptor = acceptor(
            ca_der.clone(),
            server_cert.der().clone(),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
        )?;
        Ok(Self {
            issuer,
            ca_pem,
            ca_der,
            admin,
            acceptor,
        })
    }

    /// The CA certificate, PEM (a kubeconfig's `certificate-authority-data`, base64-encoded).
    #[must_use]
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The CA certificate, DER.
    #[must_use]
    pub fn ca_der(&self) -> &CertificateDer<'static> {
        &self.ca_der
    }

    /// The admin client certificate (CN [`ADMIN_USER`], O [`MASTERS_GROUP`]).
    #[must_use]
    pub fn admin(&self) -> &ClientCredentials {
        &self.admin
    }

    /// A client certificate for `user` in `group` (at most one: rcgen writes one Organization per subject),
    /// signed by this cluster's CA.
    pub fn issue_client(&self, user: &str, group: Option<&str>) -> Result<ClientCredentials, TlsError> {
        issue_client(&self.issuer, user, group)
    }

    /// A certificate for `key` with `params`, signed by this cluster's CA (PEM).
    pub fn sign(
        &self,
        params: &CertificateParams,
        key: &impl rcgen::PublicKeyData,
    ) -> Result<String, TlsError> {
        Ok(params.signed_by(key, &self.issuer)?.pem())
    }

    /// The acceptor that runs a server handshake on a connection.
    #[must_use]
    pub fn acceptor(&self) -> &tokio_rustls::TlsAcceptor {
        &self.acceptor
    }
}

/// The TLS server name (SNI) of `cluster` behind a shared listener ([`crate::server::SharedListener`]), and a DNS
/// name of its serving certificate: `<cluster>.kubesim`, lower case.
#[must_use]
pub fn server_name(cluster: &str) -> String {
    format!("{}.kubesim", cluster.to_ascii_lowercase())
}

/// Whether `name` can be the first label of a DNS name (letters, digits, inner hyphens; at most 63 bytes).
#[must_use]
pub fn is_dns_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

fn issue_client(
    issuer: &Issuer<'static, KeyPair>,
    user: &str,
    group: Option<&str>,
) -> Result<ClientCredentials, TlsError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, user);
    if let Some(group) = group {
        params.distinguished_name.push(DnType::OrganizationName, group);
    }
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let cert = params.signed_by(&key, issuer)?;
    Ok(ClientCredentials {
        certificate_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// How many TLS sessions a cluster remembers for resumption.
const SESSION_CACHE: usize = 8;

fn acceptor(
    ca: CertificateDer<'static>,
    server_cert: CertificateDer<'static>,
    server_key: PrivateKeyDer<'static>,
) -> Result<tokio_rustls::TlsAcceptor, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca)?;
    let client_verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .allow_unauthenticated()
            .build()
            .map_err(|err| rustls::Error::General(err.to_string()))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(client_verifier)
        .with_single_cert(vec![server_cert], server_key)?;
    // HTTP/2 when the client offers it (kubectl does), as the Kubernetes API server serves; else HTTP/1.1.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // A simulated cluster has a handful of clients; rustls's default cache for 256 resumable sessions is
    // allocated up front (≈ 25 KB per cluster, 250 MB at 10,000 clusters).
    config.session_storage = rustls::server::ServerSessionMemoryCache::new(SESSION_CACHE);
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// One DER element: its tag, its contents and what follows it. `None` on anything malformed (a length past the
/// end, an indefinite or over-long length).
pub(crate) fn der_element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, rest) = rest.split_at(count);
        let length = bytes
            .iter()
            .fold(0usize, |acc, byte| (acc << 8) | usize::from(*byte));
        (length, rest)
    };
    if rest.len() < length {
        return None;
    }
    let (contents, rest) = rest.split_at(length);
    Some((tag, contents, rest))
}

/// The whole encoding (tag, length, contents) of the first DER element of `input`.
pub(crate) fn der_element_bytes(input: &[u8]) -> Option<&[u8]> {
    let (_, _, rest) = der_element(input)?;
    input.get(..input.len() - rest.len())
}

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const OID: u8 = 0x06;
const COMMON_NAME_OID: [u8; 3] = [0x55, 0x04, 0x03];
const ORGANIZATION_OID: [u8; 3] = [0x55, 0x04, 0x0a];

/// The user (subject CommonName) and groups (subject Organizations, in order) of a DER certificate; `None` when
/// it is malformed or has no CommonName.
#[must_use]
pub fn subject_identity(certificate: &[u8]) -> Option<(String, Vec<String>)> {
    let (SEQUENCE, certificate, _) = der_element(certificate)? else {
        return None;
    };
    let (SEQUENCE, tbs, _) = der_element(certificate)? else {
        return None;
    };
    let mut rest = tbs;
    // [0] version (optional), serialNumber, signature, issuer, validity, then subject.
    let (tag, _, after) = der_element(rest)?;
    if tag == 0xa0 {
        rest = after;
    }
    for _ in 0..4 {
        rest = der_element(rest)?.2;
    }
    name_identity(rest)
}

/// The user (CommonName) and groups (Organizations, in order) of a DER X.501 Name; `None` when it is malformed or
/// has no CommonName.
pub(crate) fn name_identity(name: &[u8]) -> Option<(String, Vec<String>)> {
    let (SEQUENCE, mut name, _) = der_element(name)? else {
        return None;
    };
    let mut user = None;
    let mut groups = Vec::new();
    while !name.is_empty() {
        let (SET, mut set, next) = der_element(name)? else {
            return None;
        };
        name = next;
        while !set.is_empty() {
            let (SEQUENCE, pair, next) = der_element(set)? else {
                return None;
            };
            set = next;
            let (OID, oid, value) = der_element(pair)? else {
                return None;
            };
            let (_, value, _) = der_element(value)?;
            let Ok(value) = std::str::from_utf8(value) else {
                continue;
            };
            if oid == COMMON_NAME_OID {
                user = Some(value.to_string());
            } else if oid == ORGANIZATION_OID {
                groups.push(value.to_string());
            }
        }
    }
    user.map(|user| (user, groups))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject as _;

    #[test]
    fn client_certificates_name_their_user_and_group() {
        let authority = ClusterAuthority::new("edge01", IpAddr::from([127, 0, 0, 1])).expect("authority");
        let der = CertificateDer::from_pem_slice(authority.admin().certificate_pem.as_bytes()).expect("PEM");
        assert_eq!(
            subject_identity(&der),
            Some((ADMIN_USER.to_string(), vec![MASTERS_GROUP.to_string()]))
        );
        let alice = authority.issue_client("alice", None).expect("issued");
        let der = CertificateDer::from_pem_slice(alice.certificate_pem.as_bytes()).expect("PEM");
        assert_eq!(subject_identity(&der), Some(("alice".to_string(), Vec::new())));
    }

    #[test]
    fn malformed_certificates_have_no_identity() {
        assert_eq!(subject_identity(&[]), None);
        assert_eq!(subject_identity(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(subject_identity(&[0x30, 0x03, 0x30, 0x01]), None);
        let authority = ClusterAuthority::new("edge01", IpAddr::from([127, 0, 0, 1])).expect("authority");
        let der = authority.ca_der().to_vec();
        for cut in 0..der.len() {
            // Truncations never panic; the CA's own subject has a CommonName only when whole.
            let _ = subject_identity(&der[..cut]);
        }
    }
}
