//! TLS for the API: the certificate chain and private key of `emco serve --tls-cert-file --tls-key-file`, read
//! from PEM files and checked (readable, PEM, a certificate, a key, the key matching the certificate) before the
//! server starts, so a bad file stops the start with a message naming it instead of failing every handshake.
//!
//! rustls with the ring provider, TLS 1.2 and 1.3, ALPN `http/1.1` (the API speaks HTTP/1.1 only).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::{self, PemObject as _};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Largest certificate or key file read: a PEM chain of a few certificates is a few KiB.
const MAX_PEM_FILE_BYTES: u64 = 1024 * 1024;

/// Why the certificate and key cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is larger than any certificate chain or key.
    #[error("{path} is larger than {MAX_PEM_FILE_BYTES} bytes; it is not a PEM certificate chain or key")]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// A file is not valid PEM.
    #[error("{path} is not valid PEM: {message}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What the PEM reader found wrong.
        message: String,
    },
    /// The certificate file holds no certificate.
    #[error("{path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)")]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// The key file holds no private key.
    #[error("{path} holds no PEM private key (PKCS#8, PKCS#1 RSA or SEC1 EC)")]
    NoKey {
        /// The file.
        path: PathBuf,
    },
    /// The key is not the certificate's.
    #[error("the private key in {key} does not match the certificate in {cert}")]
    KeyMismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
    },
    /// rustls refuses the certificate or the key (a malformed certificate, an unsupported key type).
    #[error("the certificate in {cert} or the key in {key} cannot be used: {message}")]
    Unusable {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason.
        message: String,
    },
}

/// A checked certificate chain and key, ready to accept TLS connections.
#[derive(Clone)]
pub struct TlsConfig {
    acceptor: tokio_rustls::TlsAcceptor,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig").finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// Reads the certificate chain (end-entity certificate first) from `cert_file` and the private key from
    /// `key_file`, both PEM, and checks that the key is the certificate's.
    pub fn from_pem_files(cert_file: &Path, key_file: &Path) -> Result<Self, TlsError> {
        let cert_pem = read_bounded(cert_file)?;
        let key_pem = read_bounded(key_file)?;
        let pem_error = |path: &Path, err: pem::Error| TlsError::Pem {
            path: path.into(),
            message: err.to_string(),
        };
        let chain = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| pem_error(cert_file, err))?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate {
                path: cert_file.into(),
            });
        }
        let key = match PrivateKeyDer::from_pem_slice(&key_pem) {
            Ok(key) => key,
            Err(pem::Error::NoItemsFound) => {
                return Err(TlsError::NoKey {
                    path: key_file.into(),
                });
            }
            Err(err) => return Err(pem_error(key_file, err)),
        };
        let unusable = |message: String| TlsError::Unusable {
            cert: cert_file.into(),
            key: key_file.into(),
            message,
        };
        let mut config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(|err| unusable(err.to_string()))?
                .with_no_client_auth()
                .with_single_cert(chain, key)
                .map_err(|err| match err {
                    rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                        TlsError::KeyMismatch {
                            cert: cert_file.into(),
                            key: key_file.into(),
                        }
                    }
                    other => unusable(other.to_string()),
                })?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        })
    }

    /// The acceptor that runs a server handshake on a connection.
    pub(crate) fn acceptor(&self) -> &tokio_rustls::TlsAcceptor {
        &self.acceptor
    }
}

/// The bytes of a file of at most [`MAX_PEM_FILE_BYTES`].
fn read_bounded(path: &Path) -> Result<Vec<u8>, TlsError> {
    let read_error = |source| TlsError::Read {
        path: path.into(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_PEM_FILE_BYTES {
        return Err(TlsError::TooLarge { path: path.into() });
    }
    Ok(bytes)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A CA and a server certificate for `localhost`/`127.0.0.1` signed by it, made by emco-helm's Sprig
    /// functions: `(ca_cert_pem, server_cert_pem, server_key_pem)`.
    pub(crate) fn test_certificates() -> (String, String, String) {
        use emco_helm::gotemplate::{MapScope, Templates, Value};
        let _maps = MapScope::open();
        let mut templates = Templates::new(emco_helm::engine::helm_funcs());
        let text = r#"{{- $ca := genCA "emco-test-ca" 30 -}}
{{- $cert := genSignedCert "localhost" (list "127.0.0.1") (list "localhost") 30 $ca -}}
{{ $ca.Cert }}@@{{ $cert.Cert }}@@{{ $cert.Key }}"#;
        templates.parse("certs", text).expect("the template parses");
        let output = templates
            .execute("certs", &Value::from_json(&serde_json::json!({})))
            .expect("the template runs");
        let parts: Vec<&str> = output.split("@@").collect();
        assert_eq!(parts.len(), 3, "{output}");
        (parts[0].to_string(), parts[1].to_string(), parts[2].to_string())
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("the test file is written");
        path
    }

    fn message(cert: &Path, key: &Path) -> String {
        TlsConfig::from_pem_files(cert, key)
            .err()
            .map(|err| err.to_string())
            .unwrap_or_else(|| "accepted".into())
    }

    #[test]
    fn a_certificate_and_its_key_are_accepted_and_bad_files_are_named() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (ca, cert, key) = test_certificates();
        let (_, other_cert, _) = test_certificates();
        let cert_file = write(dir.path(), "cert.pem", &cert);
        let key_file = write(dir.path(), "key.pem", &key);
        assert!(TlsConfig::from_pem_files(&cert_file, &key_file).is_ok());

        let missing = dir.path().join("missing.pem");
        let text = message(&missing, &key_file);
        assert!(
            text.starts_with(&format!("cannot read {}", missing.display())),
            "{text}"
        );
        let text = message(&cert_file, &missing);
        assert!(text.contains(&missing.display().to_string()), "{text}");

        let junk = write(dir.path(), "junk.pem", "not a certificate\n");
        assert_eq!(
            message(&junk, &key_file),
            format!(
                "{} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                junk.display()
            )
        );
        assert_eq!(
            message(&cert_file, &cert_file),
            format!(
                "{} holds no PEM private key (PKCS#8, PKCS#1 RSA or SEC1 EC)",
                cert_file.display()
            )
        );
        let broken = write(
            dir.path(),
            "broken.pem",
            "-----BEGIN CERTIFICATE-----\n@@@@\n-----END CERTIFICATE-----\n",
        );
        let text = message(&broken, &key_file);
        assert!(
            text.starts_with(&format!("{} is not valid PEM", broken.display())),
            "{text}"
        );

        let other_file = write(dir.path(), "other.pem", &other_cert);
        assert_eq!(
            message(&other_file, &key_file),
            format!(
                "the private key in {} does not match the certificate in {}",
                key_file.display(),
                other_file.display()
            )
        );
        // A CA certificate with the server's key: also not the key's certificate.
        let ca_file = write(dir.path(), "ca.pem", &ca);
        assert!(message(&ca_file, &key_file).contains("does not match"));
    }
}
