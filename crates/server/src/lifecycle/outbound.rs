//! emco's outbound HTTP(S): which URLs it may open (only under prefixes the operator allowed when starting it, over
//! HTTPS unless a caller allows plain HTTP under an `http://` prefix) and the client it opens them with (rustls with
//! ring, checking servers against given CAs or the system's). gac's patch values and webhook controllers use both.

use std::sync::Arc;

use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// Why emco may not open `url` for `what`, or `None` when it may: it must start with one of the operator's
/// `prefixes` (set by `flag`) and be `https://` — or `http://` under an `http://` prefix, where `plain_allowed`.
pub(super) fn url_refusal(
    url: &str,
    prefixes: &[String],
    what: &str,
    flag: &str,
    plain_allowed: bool,
) -> Option<String> {
    let plain = url.starts_with("http://");
    let opened = url.starts_with("https://") || (plain && plain_allowed);
    if !opened {
        return Some(if plain_allowed {
            "only http(s) URLs are opened".into()
        } else {
            "only https:// URLs are opened".into()
        });
    }
    if prefixes.is_empty() {
        return Some(format!(
            "emco opens no URL for {what} unless the operator allows its prefix (emco serve {flag})"
        ));
    }
    if !prefixes.iter().any(|prefix| url.starts_with(prefix.as_str())) {
        return Some(format!(
            "it is under none of the URL prefixes allowed for {what} ({})",
            prefixes.join(", ")
        ));
    }
    None
}

/// The connector of emco's outbound HTTPS clients.
pub(super) type Connector = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;

/// An HTTP client that speaks HTTPS (and plain HTTP where a caller allows it), checking servers against `ca_pem`'s
/// certificates when given, else the system's CAs; ring only, as the rest of emco.
pub(super) fn https_client<B>(ca_pem: Option<&str>) -> Result<Client<Connector, B>, String>
where
    B: hyper::body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|err| err.to_string())?;
    let tls = match ca_pem {
        Some(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            for certificate in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                let certificate =
                    certificate.map_err(|err| format!("the CA certificates do not read: {err}"))?;
                roots
                    .add(certificate)
                    .map_err(|err| format!("a CA certificate is not usable: {err}"))?;
            }
            if roots.is_empty() {
                return Err("the CA certificates hold no certificate".into());
            }
            tls.with_root_certificates(roots)
        }
        None => hyper_rustls::ConfigBuilderExt::with_native_roots(tls)
            .map_err(|err| format!("the system's CA certificates cannot be read: {err}"))?,
    }
    .with_no_client_auth();
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}
