//! Reading the Kubernetes protobuf encoding for the few kinds kubectl's imperative commands send with it
//! (`kubectl create namespace | configmap | secret | quota`, `kubectl certificate approve|deny`, the access
//! reviews of `kubectl auth can-i`). Other kinds sent as protobuf are refused with 415.
//!
//! The body is the magic `k8s\0` followed by a `runtime.Unknown` message whose `raw` field holds the object.

use base64::Engine as _;
use serde_json::{Map, Value as Json, json};

const MAGIC: &[u8] = b"k8s\0";

/// A protobuf body that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProtobufError(pub String);

fn err(message: &str) -> ProtobufError {
    ProtobufError(message.to_string())
}

/// One field of a protobuf message.
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.bytes.split_first().ok_or_else(|| err("truncated varint"))?;
            self.bytes = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(err("varint too long"))
    }

    fn next(&mut self) -> Result<Option<(u64, Field<'a>)>, ProtobufError> {
        if self.bytes.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = match key & 7 {
            0 => Field::Varint(self.varint()?),
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| err("length too large"))?;
                if len > self.bytes.len() {
                    return Err(err("truncated field"));
                }
                let (value, rest) = self.bytes.split_at(len);
                self.bytes = rest;
                Field::Bytes(value)
            }
            1 => {
                self.bytes = self.bytes.get(8..).ok_or_else(|| err("truncated fixed64"))?;
                Field::Fixed
            }
            5 => {
                self.bytes = self.bytes.get(4..).ok_or_else(|| err("truncated fixed32"))?;
                Field::Fixed
            }
            other => return Err(ProtobufError(format!("unsupported wire type {other}"))),
        };
        Ok(Some((key >> 3, field)))
    }
}

fn fields(bytes: &[u8]) -> Result<Vec<(u64, Field<'_>)>, ProtobufError> {
    let mut reader = Reader { bytes };
    let mut out = Vec::new();
    while let Some(field) = reader.next()? {
        out.push(field);
    }
    Ok(out)
}

fn text(bytes: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| err("a string field is not UTF-8"))
}

/// A `map<string, string>` (or `map<string, bytes>` rendered as base64) entry.
fn map_entry(bytes: &[u8], binary: bool) -> Result<(String, Json), ProtobufError> {
    let mut key = String::new();
    let mut value = Json::String(String::new());
    for (number, field) in fields(bytes)? {
        match (number, field) {
            (1, Field::Bytes(b)) => key = text(b)?,
            (2, Field::Bytes(b)) => {
                value = if binary {
                    json!(base64::engine::general_purpose::STANDARD.encode(b))
                } else {
                    json!(text(b)?)
                };
            }
            _ => {}
        }
    }
    Ok((key, value))
}

fn object_meta(bytes: &[u8]) -> Result<Json, ProtobufError> {
    let mut meta = Map::new();
    let mut labels = Map::new();
    let mut annotations = Map::new();
    let mut finalizers = Vec::new();
    for (number, field) in fields(bytes)? {
        let Field::Bytes(b) = field else { continue };
        match number {
            1 => {
                meta.insert("name".into(), json!(text(b)?));
            }
            2 => {
                meta.insert("generateName".into(), json!(text(b)?));
            }
            3 => {
                meta.insert("namespace".into(), json!(text(b)?));
            }
            11 => {
                let (k, v) = map_entry(b, false)?;
                labels.insert(k, v);
            }
            12 => {
                let (k, v) = map_entry(b, false)?;
                annotations.insert(k, v);
            }
            14 => finalizers.push(json!(text(b)?)),
            _ => {}
        }
    }
    if !labels.is_empty() {
        meta.insert("labels".into(), Json::Object(labels));
    }
    if !annotations.is_empty() {
        meta.insert("annotations".into(), Json::Object(annotations));
    }
    if !finalizers.is_empty() {
        meta.insert("finalizers".into(), Json::Array(finalizers));
    }
    Ok(Json::Object(meta))
}

/// A `metav1.Time` (seconds since the epoch) as RFC 3339.
fn time(bytes: &[u8]) -> Result<Json, ProtobufError> {
    let mut seconds = 0i64;
    for (number, field) in fields(bytes)? {
        if let (1, Field::Varint(v)) = (number, field) {
            seconds = i64::try_from(v).map_err(|_| err("time out of range"))?;
        }
    }
    let timestamp = jiff::Timestamp::from_second(seconds).map_err(|_| err("time out of range"))?;
    Ok(json!(timestamp.to_string()))
}

/// A CertificateSigningRequestSpec: request, signerName, usages, expirationSeconds (the requester fields are
/// the server's to set).
fn csr_spec(bytes: &[u8]) -> Result<Json, ProtobufError> {
    let mut spec = json!({});
    let mut usages = Vec::new();
    for (number, field) in fields(bytes)? {
        match (number, field) {
            (1, Field::Bytes(b)) => {
                spec["request"] = json!(base64::engine::general_purpose::STANDARD.encode(b))
            }
            (5, Field::Bytes(b)) => usages.push(json!(text(b)?)),
            (7, Field::Bytes(b)) => spec["signerName"] = json!(text(b)?),
            (8, Field::Varint(v)) => spec["expirationSeconds"] = json!(v),
            _ => {}
        }
    }
    spec["usages"] = Json::Array(usages);
    Ok(spec)
}

/// A CertificateSigningRequestStatus: its conditions and certificate.
fn csr_status(bytes: &[u8]) -> Result<Json, ProtobufError> {
    let mut conditions = Vec::new();
    let mut status = json!({});
    for (number, field) in fields(bytes)? {
        match (number, field) {
            (1, Field::Bytes(b)) => {
                let mut condition = json!({});
                for (n, f) in fields(b)? {
                    match (n, f) {
                        (1, Field::Bytes(v)) => condition["type"] = json!(text(v)?),
                        (2, Field::Bytes(v)) => condition["reason"] = json!(text(v)?),
                        (3, Field::Bytes(v)) => condition["message"] = json!(text(v)?),
                        (4, Field::Bytes(v)) => condition["lastUpdateTime"] = time(v)?,
                        (5, Field::Bytes(v)) => condition["lastTransitionTime"] = time(v)?,
                        (6, Field::Bytes(v)) => condition["status"] = json!(text(v)?),
                        _ => {}
                    }
                }
                conditions.push(condition);
            }
            (2, Field::Bytes(b)) => {
                status["certificate"] = json!(base64::engine::general_purpose::STANDARD.encode(b))
            }
            _ => {}
        }
    }
    status["conditions"] = Json::Array(conditions);
    Ok(status)
}

/// The string fields of a message, by number, under the names given (absent and empty ones left out).
fn string_fields(bytes: &[u8], names: &[(u64, &str)]) -> Result<Json, ProtobufError> {
    let mut object = json!({});
    for (number, field) in fields(bytes)? {
        if let (Some((_, name)), Field::Bytes(b)) = (names.iter().find(|(n, _)| *n == number), field) {
            let value = text(b)?;
            if !value.is_empty() {
                object[*name] = json!(value);
            }
        }
    }
    Ok(object)
}

/// The spec of an access review (`SelfSubjectAccessReviewSpec`, `SubjectAccessReviewSpec`) or of a
/// `SelfSubjectRulesReview`.
fn review_spec(kind: &str, bytes: &[u8]) -> Result<Json, ProtobufError> {
    if kind == "SelfSubjectRulesReview" {
        return string_fields(bytes, &[(1, "namespace")]);
    }
    let mut spec = json!({});
    let mut groups = Vec::new();
    for (number, field) in fields(bytes)? {
        match (number, field) {
            (1, Field::Bytes(b)) => {
                spec["resourceAttributes"] = string_fields(
                    b,
                    &[
                        (1, "namespace"),
                        (2, "verb"),
                        (3, "group"),
                        (4, "version"),
                        (5, "resource"),
                        (6, "subresource"),
                        (7, "name"),
                    ],
                )?;
            }
            (2, Field::Bytes(b)) => {
                spec["nonResourceAttributes"] = string_fields(b, &[(1, "path"), (2, "verb")])?;
            }
            (3, Field::Bytes(b)) => spec["user"] = json!(text(b)?),
            (4, Field::Bytes(b)) => groups.push(json!(text(b)?)),
            (6, Field::Bytes(b)) => spec["uid"] = json!(text(b)?),
            _ => {}
        }
    }
    if !groups.is_empty() {
        spec["groups"] = Json::Array(groups);
    }
    Ok(spec)
}

/// A `ResourceQuotaSpec`: `hard` (quantities, as their strings), `scopes` and `scopeSelector`.
fn quota_spec(bytes: &[u8]) -> Result<Json, ProtobufError> {
    let mut hard = Map::new();
    let mut scopes = Vec::new();
    let mut expressions = Vec::new();
    for (number, field) in fields(bytes)? {
        match (number, field) {
            (1, Field::Bytes(entry)) => {
                let mut resource = String::new();
                let mut amount = String::new();
                for (n, f) in fields(entry)? {
                    match (n, f) {
                        (1, Field::Bytes(b)) => resource = text(b)?,
                        (2, Field::Bytes(quantity)) => {
                            amount = string_fields(quantity, &[(1, "string")])?["string"]
                                .as_str()
                                .unwrap_or("0")
                                .to_string();
                        }
                        _ => {}
                    }
                }
                hard.insert(resource, json!(amount));
            }
            (2, Field::Bytes(b)) => scopes.push(json!(text(b)?)),
            (3, Field::Bytes(selector)) => {
                for (n, f) in fields(selector)? {
                    let (1, Field::Bytes(requirement)) = (n, f) else {
                        continue;
                    };
                    let mut expression = json!({});
                    let mut values = Vec::new();
                    for (m, g) in fields(requirement)? {
                        match (m, g) {
                            (1, Field::Bytes(b)) => expression["scopeName"] = json!(text(b)?),
                            (2, Field::Bytes(b)) => expression["operator"] = json!(text(b)?),
                            (3, Field::Bytes(b)) => values.push(json!(text(b)?)),
                            _ => {}
                        }
                    }
                    if !values.is_empty() {
                        expression["values"] = Json::Array(values);
                    }
                    expressions.push(expression);
                }
            }
            _ => {}
        }
    }
    let mut spec = json!({"hard": hard});
    if !scopes.is_empty() {
        spec["scopes"] = Json::Array(scopes);
    }
    if !expressions.is_empty() {
        spec["scopeSelector"] = json!({"matchExpressions": expressions});
    }
    Ok(spec)
}

const REVIEW_KINDS: &[&str] = &[
    "SelfSubjectReview",
    "SelfSubjectAccessReview",
    "SubjectAccessReview",
    "LocalSubjectAccessReview",
    "SelfSubjectRulesReview",
];

/// Decodes a protobuf request body into the JSON object it encodes.
pub fn decode(body: &[u8]) -> Result<Json, ProtobufError> {
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| err("the body lacks the k8s protobuf magic"))?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (number, field) in fields(envelope)? {
        match (number, field) {
            (1, Field::Bytes(type_meta)) => {
                for (n, f) in fields(type_meta)? {
                    match (n, f) {
                        (1, Field::Bytes(b)) => api_version = text(b)?,
                        (2, Field::Bytes(b)) => kind = text(b)?,
                        _ => {}
                    }
                }
            }
            (2, Field::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let mut object = json!({"apiVersion": api_version, "kind": kind});
    let (mut data, mut binary_data) = (Map::new(), Map::new());
    for (number, field) in fields(raw)? {
        match (kind.as_str(), number, field) {
            (_, 1, Field::Bytes(b)) => object["metadata"] = object_meta(b)?,
            ("Namespace", 2, Field::Bytes(b)) => {
                let finalizers: Vec<Json> = fields(b)?
                    .into_iter()
                    .filter_map(|(n, f)| match (n, f) {
                        (1, Field::Bytes(v)) => text(v).ok().map(Json::String),
                        _ => None,
                    })
                    .collect();
                object["spec"] = json!({"finalizers": finalizers});
            }
            ("ConfigMap", 2, Field::Bytes(b)) => {
                let (k, v) = map_entry(b, false)?;
                data.insert(k, v);
            }
            ("ConfigMap", 3, Field::Bytes(b)) | ("Secret", 2, Field::Bytes(b)) => {
                let (k, v) = map_entry(b, true)?;
                if kind == "Secret" {
                    data.insert(k, v)
                } else {
                    binary_data.insert(k, v)
                };
            }
            ("Secret", 3, Field::Bytes(b)) => object["type"] = json!(text(b)?),
            ("ConfigMap", 4, Field::Varint(v)) | ("Secret", 5, Field::Varint(v)) => {
                object["immutable"] = json!(v != 0)
            }
            ("CertificateSigningRequest", 2, Field::Bytes(b)) => object["spec"] = csr_spec(b)?,
            ("CertificateSigningRequest", 3, Field::Bytes(b)) => object["status"] = csr_status(b)?,
            ("ResourceQuota", 2, Field::Bytes(b)) => object["spec"] = quota_spec(b)?,
            (review, 2, Field::Bytes(b)) if REVIEW_KINDS.contains(&review) => {
                object["spec"] = review_spec(review, b)?;
            }
            ("Namespace" | "ConfigMap" | "Secret" | "CertificateSigningRequest" | "ResourceQuota", _, _) => {}
            (review, _, _) if REVIEW_KINDS.contains(&review) => {}
            (other, _, _) => {
                return Err(ProtobufError(format!(
                    "kind {other} is not readable from protobuf; send JSON"
                )));
            }
        }
    }
    if !data.is_empty() {
        object["data"] = Json::Object(data);
    }
    if !binary_data.is_empty() {
        object["binaryData"] = Json::Object(binary_data);
    }
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u64, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![u8::try_from((number << 3) | 2).unwrap()];
        out.push(u8::try_from(bytes.len()).unwrap());
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn decodes_a_certificate_approval_like_kubectl_sends_it() {
        let condition = [
            field(1, b"Approved"),
            field(2, b"KubectlApprove"),
            field(4, &[8, 100]),
            field(6, b"True"),
        ]
        .concat();
        let raw = [
            field(1, &field(1, b"erin")),
            field(
                2,
                &[
                    field(1, b"PEM"),
                    field(5, b"client auth"),
                    field(7, b"kubernetes.io/kube-apiserver-client"),
                ]
                .concat(),
            ),
            field(3, &field(1, &condition)),
        ]
        .concat();
        let type_meta = [
            field(1, b"certificates.k8s.io/v1"),
            field(2, b"CertificateSigningRequest"),
        ]
        .concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        let object = decode(&body).unwrap();
        assert_eq!(object["metadata"]["name"], "erin");
        assert_eq!(
            object["spec"],
            json!({"request": "UEVN", "usages": ["client auth"], "signerName": "kubernetes.io/kube-apiserver-client"})
        );
        assert_eq!(
            object["status"],
            json!({"conditions": [{"type": "Approved", "reason": "KubectlApprove", "lastUpdateTime": "1970-01-01T00:01:40Z", "status": "True"}]})
        );
    }

    #[test]
    fn decodes_a_configmap_like_kubectl_sends_it() {
        let meta = [
            field(1, b"demo"),
            field(3, b"t1"),
            field(11, &[field(1, b"app"), field(2, b"web")].concat()),
        ]
        .concat();
        let raw = [
            field(1, &meta),
            field(2, &[field(1, b"a"), field(2, b"1")].concat()),
        ]
        .concat();
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        let object = decode(&body).unwrap();
        assert_eq!(
            object,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo", "namespace": "t1", "labels": {"app": "web"}}, "data": {"a": "1"}})
        );
        assert!(decode(b"not protobuf").is_err());
        let deployment = [
            MAGIC.to_vec(),
            field(1, &[field(1, b"apps/v1"), field(2, b"Deployment")].concat()),
            field(2, &field(2, b"x")),
        ]
        .concat();
        assert!(decode(&deployment).unwrap_err().0.contains("Deployment"));
    }

    #[test]
    fn decodes_a_resource_quota_like_kubectl_create_quota_sends_it() {
        let hard = field(
            1,
            &[field(1, b"requests.cpu"), field(2, &field(1, b"500m"))].concat(),
        );
        let selector = field(
            3,
            &field(
                1,
                &[field(1, b"PriorityClass"), field(2, b"In"), field(3, b"high")].concat(),
            ),
        );
        let spec = [hard, field(2, b"NotBestEffort"), selector].concat();
        let type_meta = [field(1, b"v1"), field(2, b"ResourceQuota")].concat();
        let raw = [field(1, &field(1, b"q")), field(2, &spec)].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        assert_eq!(
            decode(&body).unwrap()["spec"],
            json!({"hard": {"requests.cpu": "500m"}, "scopes": ["NotBestEffort"],
                "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}})
        );
    }

    #[test]
    fn decodes_an_access_review_like_kubectl_auth_can_i_sends_it() {
        let attributes = [field(1, b"t1"), field(2, b"create"), field(5, b"pods")].concat();
        let type_meta = [
            field(1, b"authorization.k8s.io/v1"),
            field(2, b"SubjectAccessReview"),
        ]
        .concat();
        let spec = [
            field(1, &attributes),
            field(3, b"alice"),
            field(4, b"team"),
            field(4, b"ops"),
        ]
        .concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &field(2, &spec))].concat();
        assert_eq!(
            decode(&body).unwrap()["spec"],
            json!({"resourceAttributes": {"namespace": "t1", "verb": "create", "resource": "pods"}, "user": "alice", "groups": ["team", "ops"]})
        );
        let rules_meta = [
            field(1, b"authorization.k8s.io/v1"),
            field(2, b"SelfSubjectRulesReview"),
        ]
        .concat();
        let body = [
            MAGIC.to_vec(),
            field(1, &rules_meta),
            field(2, &field(2, &field(1, b"t2"))),
        ]
        .concat();
        assert_eq!(decode(&body).unwrap()["spec"], json!({"namespace": "t2"}));
    }
}
