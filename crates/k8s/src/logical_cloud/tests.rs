//! Unit tests of level-1 logical cloud credentials and objects: key → request (parsed and its signature checked)
//! → certificate from a test CA → the user's kubeconfig parsed back; the objects' shapes, names and order; every
//! refusal naming its input.

use p256::ecdsa::{Signature, VerifyingKey, signature::Verifier as _};
use rcgen::{BasicConstraints, IsCa, Issuer, KeyUsagePurpose, PublicKeyData as _};

use super::*;

/// One DER element of `input`: its tag, its contents and what follows it.
fn der(input: &[u8]) -> (u8, &[u8], &[u8]) {
    let tag = input[0];
    let first = input[1];
    let (len, header) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let count = usize::from(first & 0x7f);
        let len = input[2..2 + count]
            .iter()
            .fold(0usize, |len, byte| len << 8 | usize::from(*byte));
        (len, 2 + count)
    };
    (tag, &input[header..header + len], &input[header + len..])
}

/// The DER inside a PEM text.
fn pem_der(pem: &str) -> Vec<u8> {
    let body: String = pem.lines().filter(|line| !line.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD.decode(body).unwrap()
}

/// What a PKCS#10 request holds: the subject's CommonName, the public key and whether the signature verifies.
fn read_request(pem: &str) -> (String, Vec<u8>, bool) {
    let request_der = pem_der(pem);
    let (tag, request, _) = der(&request_der);
    assert_eq!(tag, 0x30);
    let (tag, info, after_info) = der(request);
    assert_eq!(tag, 0x30);
    let signed = &request[..request.len() - after_info.len()];
    let (_, _algorithm, after_algorithm) = der(after_info);
    let (tag, signature_bits, _) = der(after_algorithm);
    assert_eq!(tag, 0x03);

    let (_, _version, rest) = der(info);
    let (tag, subject, rest) = der(rest);
    assert_eq!(tag, 0x30);
    let (_, spki, _) = der(rest);
    let (_, _key_algorithm, key_rest) = der(spki);
    let (_, key_bits, _) = der(key_rest);
    let public_key = key_bits[1..].to_vec();

    let mut common_name = String::new();
    let mut sets = subject;
    while !sets.is_empty() {
        let (_, set, rest) = der(sets);
        let (_, attribute, _) = der(set);
        let (_, oid, value) = der(attribute);
        if oid == [0x55, 0x04, 0x03] {
            common_name = String::from_utf8(der(value).1.to_vec()).unwrap();
        }
        sets = rest;
    }

    let verifies = VerifyingKey::from_sec1_bytes(&public_key)
        .ok()
        .zip(Signature::from_der(&signature_bits[1..]).ok())
        .is_some_and(|(key, signature)| key.verify(signed, &signature).is_ok());
    (common_name, public_key, verifies)
}

/// A test CA and a client certificate it issues for `user` with the public key of `key_pem`.
fn issue(user: &str, key_pem: &str) -> (String, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::default();
    ca_params.distinguished_name.push(DnType::CommonName, "test-ca");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let user_key = KeyPair::from_pem(key_pem).unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, user);
    let certificate = params.signed_by(&user_key, &issuer).unwrap();
    (ca.pem(), certificate.pem())
}

const ADMIN_TOKEN: &str = "admin-token-must-not-leak";
const ADMIN_KEY: &str = "QURNSU4tS0VZLU1VU1QtTk9ULUxFQUs=";

/// A cluster kubeconfig with two clusters; the current context names `edge` (with `ca` and a TLS server name).
fn cluster_kubeconfig(ca_pem: &str, current: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n\
         - name: other\n  cluster:\n    server: https://10.9.9.9:6443\n    certificate-authority-data: T1RIRVI=\n\
         - name: edge\n  cluster:\n    server: https://127.0.0.1:7443\n    certificate-authority-data: {ca}\n    tls-server-name: kubesim\n\
         users:\n- name: admin\n  user:\n    token: {ADMIN_TOKEN}\n    client-key-data: {ADMIN_KEY}\n\
         contexts:\n- name: other-ctx\n  context:\n    cluster: other\n    user: admin\n\
         - name: edge-ctx\n  context:\n    cluster: edge\n    user: admin\n    namespace: kube-system\n\
         current-context: {current}\n"
    )
}

#[test]
fn key_request_certificate_and_kubeconfig_fit_together() {
    let key_pem = generate_user_key().unwrap();
    assert!(key_pem.starts_with("-----BEGIN PRIVATE KEY-----"), "{key_pem}");
    let key = KeyPair::from_pem(&key_pem).unwrap();
    assert_eq!(key.algorithm(), &rcgen::PKCS_ECDSA_P256_SHA256);

    let request = certificate_request("alice", &key_pem).unwrap();
    assert!(
        request.starts_with("-----BEGIN CERTIFICATE REQUEST-----"),
        "{request}"
    );
    let (common_name, public_key, verifies) = read_request(&request);
    assert_eq!(common_name, "alice");
    assert_eq!(public_key, key.der_bytes());
    assert!(verifies, "the request's signature verifies with its own key");
    // The check is not vacuous: a request whose subject was altered does not verify.
    let mut tampered = pem_der(&request);
    let at = tampered.windows(5).position(|window| window == b"alice").unwrap();
    tampered[at + 4] = b'x';
    let tampered_pem = format!(
        "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
        base64::engine::general_purpose::STANDARD.encode(&tampered)
    );
    let (tampered_name, _, tampered_verifies) = read_request(&tampered_pem);
    assert_eq!((tampered_name.as_str(), tampered_verifies), ("alicx", false));

    let (ca_pem, certificate_pem) = issue("alice", &key_pem);
    let kubeconfig = user_kubeconfig(
        cluster_kubeconfig(&ca_pem, "edge-ctx").as_bytes(),
        "prov1+edge01",
        "alice",
        "ns1",
        &certificate_pem,
        &key_pem,
    )
    .unwrap();
    assert!(
        !kubeconfig.contains(ADMIN_TOKEN) && !kubeconfig.contains(ADMIN_KEY),
        "{kubeconfig}"
    );
    assert!(
        !kubeconfig.contains("T1RIRVI="),
        "only the current context's cluster: {kubeconfig}"
    );

    let parsed: Json = serde_saphyr::from_str(&kubeconfig).unwrap();
    let decode = |field: &Json| {
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(field.as_str().unwrap())
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!(parsed["current-context"], "alice@prov1+edge01");
    let cluster = &parsed["clusters"][0];
    assert_eq!(parsed["clusters"].as_array().unwrap().len(), 1);
    assert_eq!(cluster["name"], "prov1+edge01");
    assert_eq!(cluster["cluster"]["server"], "https://127.0.0.1:7443");
    assert_eq!(cluster["cluster"]["tls-server-name"], "kubesim");
    assert_eq!(decode(&cluster["cluster"]["certificate-authority-data"]), ca_pem);
    let users = parsed["users"].as_array().unwrap();
    assert_eq!(users.len(), 1);
    assert_eq!(users[0]["name"], "alice");
    assert_eq!(
        users[0]["user"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["client-certificate-data", "client-key-data"]
    );
    assert_eq!(
        decode(&users[0]["user"]["client-certificate-data"]).trim(),
        certificate_pem.trim()
    );
    assert_eq!(
        decode(&users[0]["user"]["client-key-data"]).trim(),
        key_pem.trim()
    );
    let context = &parsed["contexts"][0];
    assert_eq!(context["name"], "alice@prov1+edge01");
    assert_eq!(context["context"]["cluster"], "prov1+edge01");
    assert_eq!(context["context"]["user"], "alice");
    assert_eq!(context["context"]["namespace"], "ns1");
    // What is handed out passes the same policy rsync applies.
    check_kubeconfig(kubeconfig.as_bytes(), KubeconfigPolicy::default()).unwrap();
}

#[test]
fn kubeconfig_takes_the_current_contexts_cluster_only() {
    let key_pem = generate_user_key().unwrap();
    let (ca_pem, certificate_pem) = issue("bob", &key_pem);
    let make =
        |config: &str| user_kubeconfig(config.as_bytes(), "c", "bob", "ns1", &certificate_pem, &key_pem);
    let other = make(&cluster_kubeconfig(&ca_pem, "other-ctx")).unwrap();
    let parsed: Json = serde_saphyr::from_str(&other).unwrap();
    assert_eq!(
        parsed["clusters"][0]["cluster"]["server"],
        "https://10.9.9.9:6443"
    );
    assert!(parsed["clusters"][0]["cluster"].get("tls-server-name").is_none());

    // One cluster and no current-context: that cluster.
    let single = "clusters:\n- name: only\n  cluster:\n    server: https://h:1\n";
    let parsed: Json = serde_saphyr::from_str(&make(single).unwrap()).unwrap();
    assert_eq!(parsed["clusters"][0]["cluster"]["server"], "https://h:1");
    // Two clusters and no current-context: refused.
    let two = "clusters:\n- name: a\n  cluster:\n    server: https://a:1\n- name: b\n  cluster:\n    server: https://b:1\n";
    assert!(matches!(make(two), Err(LogicalCloudError::NoServer(_))));

    // An exec admin does not matter (no user entry is read); a refused cluster field still does.
    let exec = format!(
        "{}users:\n- name: cloud\n  user:\n    exec:\n      command: aws\n",
        single
    );
    make(&exec).unwrap();
    let proxy =
        "clusters:\n- name: only\n  cluster:\n    server: https://h:1\n    proxy-url: http://evil:3128\n";
    let err = make(proxy).unwrap_err();
    assert!(matches!(err, LogicalCloudError::ClusterKubeconfig(_)), "{err}");
    assert!(err.to_string().contains("proxy-url"), "{err}");
}

#[test]
fn refusals_name_their_input() {
    let key_pem = generate_user_key().unwrap();
    let field = |err: LogicalCloudError| match err {
        LogicalCloudError::Input { field, .. } => field,
        other => panic!("not an input error: {other}"),
    };
    assert_eq!(
        field(certificate_request("system:admin", &key_pem).unwrap_err()),
        "user"
    );
    assert_eq!(field(certificate_request("", &key_pem).unwrap_err()), "user");
    assert_eq!(
        field(certificate_request("alice", "not a key").unwrap_err()),
        "key_pem"
    );
    let not_a_key = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
    assert_eq!(
        field(certificate_request("alice", not_a_key).unwrap_err()),
        "key_pem"
    );
    let huge = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----",
        "A".repeat(70_000)
    );
    assert_eq!(field(certificate_request("alice", &huge).unwrap_err()), "key_pem");

    let (ca_pem, certificate_pem) = issue("alice", &key_pem);
    let config = cluster_kubeconfig(&ca_pem, "edge-ctx");
    let make = |user: &str, namespace: &str, certificate: &str, key: &str| {
        field(user_kubeconfig(config.as_bytes(), "c", user, namespace, certificate, key).unwrap_err())
    };
    assert_eq!(make("alice", "NS", &certificate_pem, &key_pem), "namespace");
    assert_eq!(make("a b", "ns1", &certificate_pem, &key_pem), "user");
    assert_eq!(make("alice", "ns1", &key_pem, &key_pem), "certificate_pem");
    assert_eq!(
        make("alice", "ns1", &certificate_pem, &certificate_pem),
        "key_pem"
    );
    let err = user_kubeconfig(b"", "c", "alice", "ns1", &certificate_pem, &key_pem).unwrap_err();
    assert!(matches!(err, LogicalCloudError::ClusterKubeconfig(_)), "{err}");
}

fn logical_cloud(body: &str) -> LogicalCloud {
    serde_json::from_str(body).unwrap()
}

fn permission(name: &str, namespace: &str) -> UserPermission {
    serde_json::from_str(&format!(
        r#"{{"metadata":{{"name":"{name}"}},"spec":{{"namespace":"{namespace}","apiGroups":["","apps"],
            "resources":["pods","deployments"],"verbs":["get","list"]}}}}"#
    ))
    .unwrap()
}

fn quota(name: &str) -> ClusterQuota {
    serde_json::from_str(&format!(
        r#"{{"metadata":{{"name":"{name}"}},"spec":{{"pods":"10","limits.cpu":"4"}}}}"#
    ))
    .unwrap()
}

#[test]
fn level1_objects_have_emcos_shapes_names_and_order() {
    let lc = logical_cloud(
        r#"{"metadata":{"name":"lc1"},"spec":{"namespace":"ns1","labels":{"geo":"eu"},
            "user":{"userName":"alice","type":"certificate"}}}"#,
    );
    let key_pem = generate_user_key().unwrap();
    let request = certificate_request("alice", &key_pem).unwrap();
    let permissions = [permission("p0", "ns1"), permission("p1", "")];
    let objects = level1_objects(&lc, &[quota("quota1")], &permissions, &request).unwrap();
    let summary: Vec<(String, String, String)> = objects
        .iter()
        .map(|object| {
            (
                object["kind"].as_str().unwrap().to_string(),
                object["metadata"]["name"].as_str().unwrap().to_string(),
                object["metadata"]["namespace"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected = [
        ("Namespace", "ns1", ""),
        ("CertificateSigningRequest", "lc1-user-csr", ""),
        ("ResourceQuota", "quota1", "ns1"),
        ("Role", "lc1-role0", "ns1"),
        ("ClusterRole", "lc1-clusterrole1", ""),
        ("RoleBinding", "lc1-rolebinding0", "ns1"),
        ("ClusterRoleBinding", "lc1-clusterrolebinding1", ""),
    ]
    .map(|(kind, name, namespace)| (kind.to_string(), name.to_string(), namespace.to_string()));
    assert_eq!(summary, expected);
    for (_, name, _) in &summary {
        assert!(emco_model::network::is_dns_subdomain(name), "{name}");
    }

    assert_eq!(objects[0]["apiVersion"], "v1");
    assert_eq!(objects[0]["metadata"]["labels"]["geo"], "eu");

    let csr = &objects[1];
    assert_eq!(csr["apiVersion"], "certificates.k8s.io/v1");
    assert_eq!(csr["spec"]["signerName"], "kubernetes.io/kube-apiserver-client");
    assert_eq!(csr["spec"]["usages"], json!(["client auth"]));
    let sent = base64::engine::general_purpose::STANDARD
        .decode(csr["spec"]["request"].as_str().unwrap())
        .unwrap();
    assert_eq!(String::from_utf8(sent).unwrap().trim(), request.trim());
    assert_eq!(csr_name("lc1"), "lc1-user-csr");

    assert_eq!(
        objects[2]["spec"]["hard"],
        json!({"pods": "10", "limits.cpu": "4"})
    );

    let role = &objects[3];
    assert_eq!(role["apiVersion"], "rbac.authorization.k8s.io/v1");
    assert_eq!(
        role["rules"],
        json!([{"apiGroups": ["", "apps"], "resources": ["pods", "deployments"], "verbs": ["get", "list"]}])
    );
    let binding = &objects[5];
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}])
    );
    assert_eq!(
        binding["roleRef"],
        json!({"kind": "Role", "name": "lc1-role0", "apiGroup": "rbac.authorization.k8s.io"})
    );
    assert_eq!(objects[6]["roleRef"]["kind"], "ClusterRole");
    assert_eq!(objects[6]["roleRef"]["name"], "lc1-clusterrole1");

    // No labels: no labels block on the Namespace.
    let bare =
        logical_cloud(r#"{"metadata":{"name":"lc2"},"spec":{"namespace":"ns1","user":{"userName":"a"}}}"#);
    let objects = level1_objects(&bare, &[], &permissions[..1], &request).unwrap();
    assert_eq!(objects.len(), 4);
    assert!(objects[0]["metadata"].get("labels").is_none());
}

#[test]
fn a_gitops_cluster_takes_a_service_account_in_place_of_the_users_request() {
    let lc = logical_cloud(
        r#"{"metadata":{"name":"lc1"},"spec":{"namespace":"ns1","user":{"userName":"alice","type":"certificate"}}}"#,
    );
    let key_pem = generate_user_key().unwrap();
    let request = certificate_request("alice", &key_pem).unwrap();
    let permissions = [permission("p0", "ns1"), permission("p1", "")];
    let objects = level1_objects(&lc, &[quota("quota1")], &permissions, &request).unwrap();
    let taken = gitops_level1_objects(&objects, "lc1", "ns1");
    let kinds: Vec<(&str, &str)> = taken
        .iter()
        .map(|object| {
            (
                object["kind"].as_str().unwrap(),
                object["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("Namespace", "ns1"),
            ("ServiceAccount", "lc1-sa"),
            ("ResourceQuota", "quota1"),
            ("Role", "lc1-role0"),
            ("ClusterRole", "lc1-clusterrole1"),
            ("RoleBinding", "lc1-rolebinding0"),
            ("ClusterRoleBinding", "lc1-clusterrolebinding1"),
        ]
    );
    assert_eq!(taken[1]["metadata"]["namespace"], "ns1");
    for binding in &taken[5..] {
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "lc1-sa", "namespace": "ns1"}]),
            "{binding}"
        );
    }
}

#[test]
fn level1_objects_refuse_what_emco_refuses() {
    let key_pem = generate_user_key().unwrap();
    let request = certificate_request("alice", &key_pem).unwrap();
    let lc = logical_cloud(
        r#"{"metadata":{"name":"lc1"},"spec":{"namespace":"ns1","user":{"userName":"alice"}}}"#,
    );
    let own = [permission("p0", "ns1")];

    let admin = logical_cloud(r#"{"metadata":{"name":"lc0"},"spec":{"level":"0"}}"#);
    assert_eq!(
        level1_objects(&admin, &[], &own, &request).unwrap_err(),
        LogicalCloudError::NotLevel1("lc0".into())
    );
    let err = level1_objects(&lc, &[], &[permission("p0", "ns2")], &request).unwrap_err();
    assert!(
        matches!(err, LogicalCloudError::Invalid(ValidationError::Missing { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("'ns1'"), "{err}");

    let mut bad_quota = quota("q");
    bad_quota.spec.insert("pods".into(), "many".into());
    let err = level1_objects(&lc, &[bad_quota], &own, &request).unwrap_err();
    assert!(err.to_string().contains("spec.pods"), "{err}");

    let mut bad_permission = permission("p0", "ns1");
    bad_permission.spec.verbs.clear();
    let err = level1_objects(&lc, &[], &[bad_permission], &request).unwrap_err();
    assert!(err.to_string().contains("spec.verbs"), "{err}");

    let err = level1_objects(&lc, &[], &own, &key_pem).unwrap_err();
    assert!(
        matches!(&err, LogicalCloudError::Input { field, .. } if field == "certificate_request_pem"),
        "{err}"
    );

    let mut unnamed = lc.clone();
    unnamed.spec.user.user_name.clear();
    let err = level1_objects(&unnamed, &[], &own, &request).unwrap_err();
    assert!(err.to_string().contains("spec.user.userName"), "{err}");

    let many = vec![permission("p", "ns1"); MAX_LEVEL1_ITEMS + 1];
    assert!(matches!(
        level1_objects(&lc, &[], &many, &request),
        Err(LogicalCloudError::TooMany { .. })
    ));
}

#[test]
fn approval_and_issued_certificate() {
    let condition = csr_approval_condition("2026-11-23T14:00:00Z");
    assert_eq!(condition["type"], "Approved");
    assert_eq!(condition["status"], "True");

    let pending = json!({"status": {}});
    assert_eq!(issued_certificate(&pending).unwrap(), None);
    let pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    let signed = json!({"status": {"certificate": base64::engine::general_purpose::STANDARD.encode(pem)}});
    assert_eq!(issued_certificate(&signed).unwrap().as_deref(), Some(pem));
    let garbage = json!({"status": {"certificate": "!!"}});
    assert!(issued_certificate(&garbage).is_err());
}
