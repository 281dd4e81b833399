//! The CertificateSigningRequest API (`certificates.k8s.io/v1`): a create is checked (`spec.request` a PEM
//! certificate request whose signature its own key verifies, ECDSA P-256 or RSA with SHA-256; `spec.signerName`
//! given) and stamped with the requester (`spec.username`, `spec.groups`), as the API server does; the
//! `/approval` subresource sets the `Approved`/`Denied` conditions; and an approved request for the
//! `kubernetes.io/kube-apiserver-client` signer is signed at once by the cluster's CA into `status.certificate`.
//!
//! The issued certificate carries the request's CommonName and its first Organization (rcgen writes one per
//! subject) and the default validity.

use std::sync::Arc;

use base64::Engine as _;
use rcgen::{CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, KeyUsagePurpose};
use rustls::SignatureScheme;
use rustls::pki_types::pem::PemObject as _;
use serde_json::{Value as Json, json};

use crate::auth::UserInfo;
use crate::catalog::ResourceType;
use crate::error::ApiError;
use crate::store::Store;
use crate::tls::{ClusterAuthority, der_element, der_element_bytes};

/// The signer kubesim signs for: client certificates the API server accepts.
pub const API_SERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

/// Largest certificate request accepted (a PEM request of a 4096-bit RSA key is about 1.7 KiB).
const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// Why a certificate request cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CsrError {
    /// Not base64, not PEM, or no `CERTIFICATE REQUEST` block.
    #[error("PEM block type must be CERTIFICATE REQUEST")]
    NotPem,
    /// Larger than any certificate request.
    #[error("the request is larger than {MAX_REQUEST_BYTES} bytes")]
    TooLarge,
    /// The DER structure is malformed.
    #[error("the certificate request is malformed")]
    Malformed,
    /// A key or signature algorithm kubesim does not sign.
    #[error("unsupported key or signature algorithm (ECDSA P-256 or RSA, with SHA-256)")]
    Unsupported,
    /// The signature does not verify with the request's own key.
    #[error("the certificate request's signature is invalid")]
    BadSignature,
    /// The subject has no CommonName.
    #[error("the subject has no CommonName")]
    NoCommonName,
    /// rcgen could not make the certificate.
    #[error("signing: {0}")]
    Signing(String),
}

const ID_EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const PRIME256V1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const ECDSA_WITH_SHA256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
const SHA256_WITH_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];

/// A parsed, signature-checked certificate request.
#[derive(Debug)]
struct CertificateRequest {
    user: String,
    groups: Vec<String>,
    key: RequestedKey,
}

/// The public key of a request, in the form rcgen writes into a certificate.
#[derive(Debug)]
struct RequestedKey {
    /// The BIT STRING contents of the SubjectPublicKeyInfo.
    key: Vec<u8>,
    algorithm: &'static rcgen::SignatureAlgorithm,
}

impl rcgen::PublicKeyData for RequestedKey {
    fn der_bytes(&self) -> &[u8] {
        &self.key
    }

    fn algorithm(&self) -> &'static rcgen::SignatureAlgorithm {
        self.algorithm
    }
}

/// The contents of a BIT STRING without its unused-bits byte (which must be 0).
fn bit_string(contents: &[u8]) -> Option<&[u8]> {
    match contents.split_first() {
        Some((0, bits)) => Some(bits),
        _ => None,
    }
}

/// Parses and verifies a DER certificate request.
fn parse_request(der: &[u8]) -> Result<CertificateRequest, CsrError> {
    let malformed = || CsrError::Malformed;
    let (0x30, request, _) = der_element(der).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let info_bytes = der_element_bytes(request).ok_or_else(malformed)?;
    let (0x30, info, after_info) = der_element(request).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let (0x30, signature_algorithm, after_algorithm) = der_element(after_info).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let (0x03, signature, _) = der_element(after_algorithm).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let signature = bit_string(signature).ok_or_else(malformed)?;
    let (0x06, signature_oid, _) = der_element(signature_algorithm).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };

    // version, subject, subjectPKInfo, attributes
    let (0x02, _, after_version) = der_element(info).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let subject_bytes = der_element_bytes(after_version).ok_or_else(malformed)?;
    let (_, _, after_subject) = der_element(after_version).ok_or_else(malformed)?;
    let (0x30, spki, _) = der_element(after_subject).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let (0x30, key_algorithm, after_key_algorithm) = der_element(spki).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let (0x03, key, _) = der_element(after_key_algorithm).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let key = bit_string(key).ok_or_else(malformed)?;
    let (0x06, key_oid, key_parameters) = der_element(key_algorithm).ok_or_else(malformed)? else {
        return Err(CsrError::Malformed);
    };
    let (scheme, algorithm) = match (key_oid, signature_oid) {
        (ID_EC_PUBLIC_KEY, ECDSA_WITH_SHA256) => {
            let (0x06, curve, _) = der_element(key_parameters).ok_or_else(malformed)? else {
                return Err(CsrError::Unsupported);
            };
            if curve != PRIME256V1 {
                return Err(CsrError::Unsupported);
            }
            (
                SignatureScheme::ECDSA_NISTP256_SHA256,
                &rcgen::PKCS_ECDSA_P256_SHA256,
            )
        }
        (RSA_ENCRYPTION, SHA256_WITH_RSA) => (SignatureScheme::RSA_PKCS1_SHA256, &rcgen::PKCS_RSA_SHA256),
        _ => return Err(CsrError::Unsupported),
    };
    let provider = rustls::crypto::ring::default_provider();
    let verifiers = provider
        .signature_verification_algorithms
        .mapping
        .iter()
        .find(|(candidate, _)| *candidate == scheme)
        .map(|(_, verifiers)| *verifiers)
        .ok_or(CsrError::Unsupported)?;
    if !verifiers
        .iter()
        .any(|verifier| verifier.verify_signature(key, info_bytes, signature).is_ok())
    {
        return Err(CsrError::BadSignature);
    }
    let (user, groups) = crate::tls::name_identity(subject_bytes).ok_or(CsrError::NoCommonName)?;
    Ok(CertificateRequest {
        user,
        groups,
        key: RequestedKey {
            key: key.to_vec(),
            algorithm,
        },
    })
}

/// The DER request inside `spec.request` (base64 of a PEM `CERTIFICATE REQUEST`).
fn request_der(object: &Json) -> Result<Vec<u8>, CsrError> {
    let encoded = object["spec"]["request"].as_str().ok_or(CsrError::NotPem)?;
    if encoded.len() > MAX_REQUEST_BYTES * 2 {
        return Err(CsrError::TooLarge);
    }
    let pem = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| CsrError::NotPem)?;
    let der = rustls::pki_types::CertificateSigningRequestDer::from_pem_slice(&pem)
        .map_err(|_| CsrError::NotPem)?;
    Ok(der.as_ref().to_vec())
}

/// Checks a new CertificateSigningRequest and stamps it with its requester.
pub fn admit_create(object: &mut Json, user: &UserInfo) -> Result<(), ApiError> {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let invalid = |field: &str, message: &str| {
        ApiError::invalid_message(format!(
            "CertificateSigningRequest.certificates.k8s.io \"{name}\" is invalid: {field}: {message}"
        ))
    };
    if object["spec"]["signerName"].as_str().is_none_or(str::is_empty) {
        return Err(invalid("spec.signerName", "Required value"));
    }
    request_der(object)
        .and_then(|der| parse_request(&der))
        .map_err(|err| invalid("spec.request", &format!("Invalid value: {err}")))?;
    object["spec"]["username"] = json!(user.name);
    object["spec"]["groups"] = json!(user.groups);
    Ok(())
}

fn has_condition(object: &Json, kind: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] != "False")
}

/// The `/approval` subresource: takes the conditions of `body`, then signs an approved request for the
/// kube-apiserver-client signer.
pub fn approve(
    store: &mut Store,
    authority: Option<&ClusterAuthority>,
    t: &Arc<ResourceType>,
    name: &str,
    body: &Json,
) -> Result<Arc<Json>, ApiError> {
    let existing = store
        .get(&t.key(), "", name)
        .ok_or_else(|| ApiError::not_found(t, name))?;
    if let Some(version) = body["metadata"]["resourceVersion"]
        .as_str()
        .filter(|v| !v.is_empty())
        && existing["metadata"]["resourceVersion"].as_str() != Some(version)
    {
        return Err(ApiError::conflict(
            t,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        ));
    }
    let mut status = existing["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    let mut conditions = body["status"]["conditions"].clone();
    for condition in conditions.as_array_mut().into_iter().flatten() {
        if condition.get("lastUpdateTime").is_none_or(Json::is_null) {
            condition["lastUpdateTime"] = json!(crate::meta::now());
        }
    }
    status["conditions"] = conditions;
    let mut next = (*existing).clone();
    next["status"] = status;
    if has_condition(&next, "Approved") && has_condition(&next, "Denied") {
        return Err(ApiError::invalid_message(format!(
            "CertificateSigningRequest.certificates.k8s.io \"{name}\" is invalid: status.conditions: Invalid value: \"Approved\": Approved and Denied conditions are mutually exclusive"
        )));
    }
    let signs = has_condition(&next, "Approved")
        && next["spec"]["signerName"] == API_SERVER_CLIENT_SIGNER
        && next["status"]["certificate"].as_str().is_none_or(str::is_empty);
    if signs && let Some(authority) = authority {
        match request_der(&next).and_then(|der| sign(authority, &der)) {
            Ok(pem) => {
                next["status"]["certificate"] = json!(base64::engine::general_purpose::STANDARD.encode(pem));
            }
            Err(err) => {
                if let Some(conditions) = next["status"]["conditions"].as_array_mut() {
                    conditions.push(
                        json!({"type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                        "message": err.to_string(), "lastUpdateTime": crate::meta::now()}),
                    );
                }
            }
        }
    }
    store.write_status(t, "", name, next["status"].clone())
}

/// A client certificate for a request, signed by the cluster's CA (PEM).
fn sign(authority: &ClusterAuthority, der: &[u8]) -> Result<String, CsrError> {
    let request = parse_request(der)?;
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, request.user.as_str());
    if let Some(group) = request.groups.first() {
        params
            .distinguished_name
            .push(DnType::OrganizationName, group.as_str());
    }
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    authority
        .sign(&params, &request.key)
        .map_err(|err| CsrError::Signing(err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request_pem(user: &str, group: &str) -> (String, rcgen::KeyPair) {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, user);
        params.distinguished_name.push(DnType::OrganizationName, group);
        let csr = params.serialize_request(&key).expect("request");
        (csr.pem().expect("PEM"), key)
    }

    #[test]
    fn requests_are_parsed_verified_and_signed() {
        let (pem, _) = request_pem("erin", "team");
        let der =
            rustls::pki_types::CertificateSigningRequestDer::from_pem_slice(pem.as_bytes()).expect("PEM");
        let request = parse_request(der.as_ref()).expect("a valid request");
        assert_eq!(
            (request.user.as_str(), request.groups.as_slice()),
            ("erin", &["team".to_string()][..])
        );
        let authority =
            ClusterAuthority::new("edge01", std::net::IpAddr::from([127, 0, 0, 1])).expect("authority");
        let certificate = sign(&authority, der.as_ref()).expect("signed");
        let cert_der = rustls::pki_types::CertificateDer::from_pem_slice(certificate.as_bytes())
            .expect("certificate PEM");
        assert_eq!(
            crate::tls::subject_identity(&cert_der),
            Some(("erin".to_string(), vec!["team".to_string()]))
        );

        // A flipped byte in the signed part fails the signature; truncations never panic.
        let mut tampered = der.as_ref().to_vec();
        let position = tampered
            .windows(4)
            .position(|w| w == b"erin")
            .expect("the name is in the request");
        tampered[position] = b'x';
        assert_eq!(parse_request(&tampered).err(), Some(CsrError::BadSignature));
        for cut in 0..der.as_ref().len() {
            assert!(parse_request(&der.as_ref()[..cut]).is_err());
        }
    }
}
