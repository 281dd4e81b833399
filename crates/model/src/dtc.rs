//! Bodies of EMCO's distributed traffic controller (`dtc`): a DIG's traffic-group-intents, their inbound (server)
//! intents — which app serves which port behind which label — the clients allowed in (`clients`: by app label, by
//! address range) and what each client may reach (`access-points`), as EMCO's JSON schemas (`src/dtc/json-schemas`)
//! and module types check them.

use serde::{Deserialize, Serialize};

use crate::names::{NAME_PATTERN, validate_name};
use crate::resources::{MetadataOnly, Resource, ValidationError, check_len, require};

/// The longest app, label, service or mesh field.
pub const MAX_DTC_FIELD_LEN: usize = 128;
/// The longest certificate or key of an inbound intent.
pub const MAX_DTC_CERT_LEN: usize = 8192;
/// The most namespaces, address ranges, URLs or methods in one list.
pub const MAX_DTC_LIST_LEN: usize = 256;
/// The longest namespace or address range.
pub const MAX_DTC_ITEM_LEN: usize = 253;
/// The longest access-point URL.
pub const MAX_DTC_URL_LEN: usize = 4096;
/// EMCO's pattern of an app label (`app=httpbin`).
pub const APP_LABEL_PATTERN: &str = "^([A-Za-z0-9][-A-Za-z0-9_.=]*)?[A-Za-z0-9]$";
/// EMCO's pattern of an access-point URL (`/status/*`).
pub const ACCESS_URL_PATTERN: &str = "^(/)([A-Za-z0-9][-A-Za-z0-9_./]*)?[A-Za-z0-9*]$";

/// An app in a traffic intent: the app, the label of its pods (`key=value`) and its service.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["app", "appLabel", "serviceName"]))]
pub struct AppService {
    /// The app.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_DTC_FIELD_LEN), pattern(NAME_PATTERN))]
    pub app: String,
    /// The label of its pods, `key=value`.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_DTC_FIELD_LEN), pattern(APP_LABEL_PATTERN))]
    pub app_label: String,
    /// Its service.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_DTC_FIELD_LEN), pattern(NAME_PATTERN))]
    pub service_name: String,
}

impl AppService {
    fn validate(&self) -> Result<(), ValidationError> {
        validate_name("spec.app", &self.app)?;
        app_label("spec.appLabel", &self.app_label)?;
        Ok(validate_name("spec.serviceName", &self.service_name)?)
    }
}

/// A traffic-group-intent (`…/deployment-intent-groups/{dig}/traffic-group-intents/{intent}`).
pub type TrafficGroupIntent = MetadataOnly;

/// An inbound (server) intent (`…/traffic-group-intents/{intent}/inbound-intents/{server}`).
pub type InboundServerIntent = Resource<InboundServerSpec>;

/// Spec of an inbound intent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["app", "appLabel", "serviceName", "port", "protocol"]))]
pub struct InboundServerSpec {
    /// The app that serves, its pods' label and its service.
    #[serde(flatten)]
    pub service: AppService,
    /// The name it is reached by from outside.
    #[serde(default)]
    #[schemars(length(max = MAX_DTC_FIELD_LEN))]
    pub external_name: String,
    /// The port it serves.
    #[serde(default)]
    #[schemars(range(min = 1, max = 65535))]
    pub port: i64,
    /// `TCP`, `UDP`, `SCTP`.
    #[serde(default)]
    #[schemars(length(min = 1, max = 5), pattern(NAME_PATTERN))]
    pub protocol: String,
    /// Whether clients outside the cluster (address ranges) are let in.
    #[serde(default)]
    pub external_support: bool,
    /// The service mesh (`istio`), or none.
    #[serde(default)]
    #[schemars(length(max = MAX_DTC_FIELD_LEN))]
    pub service_mesh: String,
    /// The edge CNF (`sdewan`), or none.
    #[serde(default, rename = "edgeCNF")]
    #[schemars(length(max = MAX_DTC_FIELD_LEN))]
    pub edge_cnf: String,
    /// Service-mesh management.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub management: Option<MeshManagement>,
    /// Certificates for access from outside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalAccess>,
}

/// Service-mesh management of an inbound intent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["sidecarProxy", "tlsType"]))]
pub struct MeshManagement {
    /// `yes` or `no`.
    #[serde(default)]
    #[schemars(with = "String", length(max = 4))]
    pub sidecar_proxy: Option<String>,
    /// `MUTUAL`, `SIMPLE`, `NONE`.
    #[serde(default)]
    #[schemars(with = "String", length(max = 8))]
    pub tls_type: Option<String>,
}

/// Access from outside: the certificates.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAccess {
    /// The certificates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_certs: Option<ExternalCerts>,
}

/// The certificates of access from outside (base64 PEM, as EMCO's examples give them).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalCerts {
    /// The service's certificate.
    #[serde(default)]
    #[schemars(length(max = MAX_DTC_CERT_LEN))]
    pub service_certificate: String,
    /// The service's key.
    #[serde(default)]
    #[schemars(length(max = MAX_DTC_CERT_LEN))]
    pub service_private_key: String,
    /// The CA's certificate.
    #[serde(default)]
    #[schemars(length(max = MAX_DTC_CERT_LEN))]
    pub ca_certificate: String,
}

impl InboundServerIntent {
    /// Checks EMCO's inbound-server schema.
    pub fn validate_inbound_server(&self) -> Result<(), ValidationError> {
        self.metadata.validate("inbound server intent")?;
        let spec = &self.spec;
        spec.service.validate()?;
        check_len("spec.externalName", &spec.external_name, MAX_DTC_FIELD_LEN)?;
        if !(1..=65535).contains(&spec.port) {
            return Err(ValidationError::invalid(
                "spec.port",
                format!("{} is not a port (1 to 65535)", spec.port),
            ));
        }
        require("spec.protocol", &spec.protocol)?;
        check_len("spec.protocol", &spec.protocol, 5)?;
        validate_name("spec.protocol", &spec.protocol)?;
        check_len("spec.serviceMesh", &spec.service_mesh, MAX_DTC_FIELD_LEN)?;
        check_len("spec.edgeCNF", &spec.edge_cnf, MAX_DTC_FIELD_LEN)?;
        if let Some(management) = &spec.management {
            for (field, value, max) in [
                ("spec.management.sidecarProxy", &management.sidecar_proxy, 4),
                ("spec.management.tlsType", &management.tls_type, 8),
            ] {
                let Some(value) = value else {
                    return Err(ValidationError::Missing {
                        field: field.to_string(),
                    });
                };
                check_len(field, value, max)?;
            }
        }
        if let Some(certs) = spec
            .external
            .as_ref()
            .and_then(|external| external.external_certs.as_ref())
        {
            for (field, value) in [
                (
                    "spec.external.externalCerts.serviceCertificate",
                    &certs.service_certificate,
                ),
                (
                    "spec.external.externalCerts.servicePrivateKey",
                    &certs.service_private_key,
                ),
                ("spec.external.externalCerts.caCertificate", &certs.ca_certificate),
            ] {
                check_len(field, value, MAX_DTC_CERT_LEN)?;
            }
        }
        Ok(())
    }
}

/// Refuses an app label breaking EMCO's pattern.
fn app_label(field: &str, value: &str) -> Result<(), ValidationError> {
    require(field, value)?;
    check_len(field, value, MAX_DTC_FIELD_LEN)?;
    let bytes = value.as_bytes();
    let edge = |b: u8| b.is_ascii_alphanumeric();
    let inner = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'=');
    let ok = edge(bytes[0]) && edge(bytes[bytes.len() - 1]) && bytes.iter().all(|&b| inner(b));
    if !ok {
        return Err(ValidationError::invalid(
            field,
            format!(
                "'{}' does not match {APP_LABEL_PATTERN}",
                crate::names::shown(value)
            ),
        ));
    }
    Ok(())
}

/// An inbound clients intent (`…/inbound-intents/{server}/clients/{clients}`).
pub type InboundClientsIntent = Resource<InboundClientsSpec>;

/// Spec of an inbound clients intent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["app", "appLabel", "serviceName", "namespaces", "cidrs"]))]
pub struct InboundClientsSpec {
    /// The client app, its pods' label and its service.
    #[serde(flatten)]
    pub service: AppService,
    /// The namespaces it runs in.
    #[serde(default)]
    #[schemars(with = "Vec<String>", length(max = MAX_DTC_LIST_LEN), inner(length(max = MAX_DTC_ITEM_LEN)))]
    pub namespaces: Option<Vec<String>>,
    /// The address ranges it comes from (with the server's `externalSupport`).
    #[serde(default)]
    #[schemars(with = "Vec<String>", length(max = MAX_DTC_LIST_LEN), inner(length(max = MAX_DTC_ITEM_LEN)))]
    pub cidrs: Option<Vec<String>>,
}

impl InboundClientsIntent {
    /// Checks EMCO's inbound-clients schema.
    pub fn validate_inbound_clients(&self) -> Result<(), ValidationError> {
        self.metadata.validate("inbound clients intent")?;
        let spec = &self.spec;
        spec.service.validate()?;
        for (field, list) in [("spec.namespaces", &spec.namespaces), ("spec.cidrs", &spec.cidrs)] {
            let Some(list) = list else {
                return Err(ValidationError::Missing {
                    field: field.to_string(),
                });
            };
            bounded_list(field, list, MAX_DTC_ITEM_LEN)?;
        }
        Ok(())
    }
}

/// Refuses a list longer than [`MAX_DTC_LIST_LEN`] or an item longer than `max`.
fn bounded_list(field: &str, list: &[String], max: usize) -> Result<(), ValidationError> {
    if list.len() > MAX_DTC_LIST_LEN {
        return Err(ValidationError::invalid(
            field,
            format!("{} items; at most {MAX_DTC_LIST_LEN}", list.len()),
        ));
    }
    for (index, item) in list.iter().enumerate() {
        check_len(&format!("{field}[{index}]"), item, max)?;
    }
    Ok(())
}

/// An access point of clients (`…/clients/{clients}/access-points/{access}`).
pub type InboundClientsAccessIntent = Resource<InboundClientsAccessSpec>;

/// Spec of an access point.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["action", "url", "access"]))]
pub struct InboundClientsAccessSpec {
    /// `ALLOW`.
    #[serde(default)]
    #[schemars(extend("enum" = ["ALLOW"]))]
    pub action: String,
    /// The URLs (`/status/*`).
    #[serde(default)]
    #[schemars(
        with = "Vec<String>",
        length(max = MAX_DTC_LIST_LEN),
        inner(length(max = MAX_DTC_URL_LEN), pattern(ACCESS_URL_PATTERN))
    )]
    pub url: Option<Vec<String>>,
    /// The methods: `GET`, `PUT`, `POST`, `DELETE`.
    #[serde(default)]
    #[schemars(schema_with = "access_methods")]
    pub access: Option<Vec<String>>,
}

/// The schema of `access`: a list of `GET`, `PUT`, `POST`, `DELETE`.
fn access_methods(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "maxItems": 8,
        "items": {"type": "string", "enum": ["GET", "PUT", "POST", "DELETE"]}
    })
}

impl InboundClientsAccessIntent {
    /// Checks EMCO's inbound-clients-access schema.
    pub fn validate_inbound_access(&self) -> Result<(), ValidationError> {
        self.metadata.validate("inbound clients access intent")?;
        let spec = &self.spec;
        if spec.action != "ALLOW" {
            return Err(crate::resources::not_allowed(
                "spec.action",
                &spec.action,
                "ALLOW",
            ));
        }
        let Some(urls) = &spec.url else {
            return Err(ValidationError::Missing {
                field: "spec.url".into(),
            });
        };
        bounded_list("spec.url", urls, MAX_DTC_URL_LEN)?;
        for (index, url) in urls.iter().enumerate() {
            let bytes = url.as_bytes();
            let inner_ok = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/');
            let ok = match bytes {
                [b'/'] => false,
                [b'/', rest @ ..] => {
                    let (last, middle) = rest.split_last().map_or((0, &[][..]), |(l, m)| (*l, m));
                    (last.is_ascii_alphanumeric() || last == b'*')
                        && (middle.is_empty()
                            || (middle[0].is_ascii_alphanumeric() && middle.iter().all(inner_ok)))
                }
                _ => false,
            };
            if !ok {
                return Err(ValidationError::invalid(
                    &format!("spec.url[{index}]"),
                    format!(
                        "'{}' does not match {ACCESS_URL_PATTERN}",
                        crate::names::shown(url)
                    ),
                ));
            }
        }
        let Some(access) = &spec.access else {
            return Err(ValidationError::Missing {
                field: "spec.access".into(),
            });
        };
        bounded_list("spec.access", access, 8)?;
        for (index, method) in access.iter().enumerate() {
            if !matches!(method.as_str(), "GET" | "PUT" | "POST" | "DELETE") {
                return Err(crate::resources::not_allowed(
                    &format!("spec.access[{index}]"),
                    method,
                    "GET, PUT, POST, DELETE",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn emcos_example_bodies_are_accepted_and_broken_ones_refused_naming_the_field() {
        let server: InboundServerIntent = serde_json::from_value(json!({"metadata": {"name": "httpbin-server"},
            "spec": {"app": "httpbin", "appLabel": "app=httpbin", "serviceName": "httpbin", "externalName": "httpbin.example.com",
                "port": 8000, "protocol": "TCP", "serviceMesh": "istio", "externalSupport": true,
                "management": {"sidecarProxy": "yes", "tlsType": "MUTUAL"}}}))
        .unwrap();
        server.validate_inbound_server().unwrap();
        let mut bad = server.clone();
        bad.spec.service.app_label = "app=".into();
        assert!(
            bad.validate_inbound_server()
                .unwrap_err()
                .to_string()
                .contains("spec.appLabel")
        );
        bad.spec = InboundServerSpec {
            port: 0,
            ..server.spec.clone()
        };
        assert!(
            bad.validate_inbound_server()
                .unwrap_err()
                .to_string()
                .contains("spec.port")
        );
        let clients: InboundClientsIntent = serde_json::from_value(json!({"metadata": {"name": "sleep-client"},
            "spec": {"app": "sleep", "appLabel": "app=sleep", "serviceName": "sleep", "namespaces": [], "cidrs": []}}))
        .unwrap();
        clients.validate_inbound_clients().unwrap();
        let access: InboundClientsAccessIntent = serde_json::from_value(json!({"metadata": {"name": "a"},
            "spec": {"action": "ALLOW", "url": ["/status/*", "/status/418"], "access": ["GET"]}}))
        .unwrap();
        access.validate_inbound_access().unwrap();
        for (spec, field) in [
            (json!({"action": "DENY", "url": [], "access": []}), "spec.action"),
            (
                json!({"action": "ALLOW", "url": ["status"], "access": []}),
                "spec.url[0]",
            ),
            (
                json!({"action": "ALLOW", "url": ["/"], "access": []}),
                "spec.url[0]",
            ),
            (
                json!({"action": "ALLOW", "url": [], "access": ["PATCH"]}),
                "spec.access[0]",
            ),
            (json!({"action": "ALLOW", "url": []}), "spec.access"),
        ] {
            let access: InboundClientsAccessIntent =
                serde_json::from_value(json!({"metadata": {"name": "a"}, "spec": spec})).unwrap();
            let refused = access.validate_inbound_access().unwrap_err().to_string();
            assert!(refused.contains(field), "{field}: {refused}");
        }
    }
}
