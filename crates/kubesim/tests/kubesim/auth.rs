//! HTTPS, authentication and RBAC authorization, through kube-rs and the `kubesim` binary: admin kubeconfigs
//! pass emco's kubeconfig policy and work, a user bound by a RoleBinding reads its namespace and gets Kubernetes'
//! exact 403 elsewhere, an unknown token is a 401, no credentials is `system:anonymous`, and `--insecure-http`
//! serves plain HTTP.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Config};
use kubesim::{ClusterConfig, Credentials, SimCluster, Simulator};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Creates namespaces `t1` and `t2`, a Role reading pods in `t1`, and a RoleBinding of it to user `alice` and
/// group `readers`.
async fn pod_reader_in_t1(cluster: &SimCluster) {
    let admin = cluster.client().unwrap();
    let apply = PatchParams::apply("test").force();
    let namespaces: Api<emco_k8s::k8s_openapi::api::core::v1::Namespace> = Api::all(admin.clone());
    for name in ["t1", "t2"] {
        namespaces
            .patch(
                name,
                &apply,
                &Patch::Apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})),
            )
            .await
            .unwrap();
    }
    let roles: Api<kube::api::DynamicObject> = Api::namespaced_with(
        admin.clone(),
        "t1",
        &kube::core::ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "Role"),
            "roles",
        ),
    );
    roles
        .patch(
            "pod-reader",
            &apply,
            &Patch::Apply(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "pod-reader", "namespace": "t1"},
                "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]}]})),
        )
        .await
        .unwrap();
    let bindings: Api<kube::api::DynamicObject> = Api::namespaced_with(
        admin,
        "t1",
        &kube::core::ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", "RoleBinding"),
            "rolebindings",
        ),
    );
    bindings
        .patch(
            "pod-readers",
            &apply,
            &Patch::Apply(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "pod-readers", "namespace": "t1"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
                             {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "readers"}]}),
            ),
        )
        .await
        .unwrap();
}

fn client_as(cluster: &SimCluster, credentials: &Credentials) -> Client {
    Client::try_from(cluster.client_config_for(credentials).unwrap()).unwrap()
}

#[track_caller]
fn status_of(err: kube::Error) -> (u16, String, String) {
    match err {
        kube::Error::Api(status) => (status.code, status.reason.clone(), status.message.clone()),
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn admin_kubeconfigs_carry_the_ca_and_a_client_certificate_and_pass_emcos_policy() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    assert!(
        cluster.url().starts_with("https://127.0.0.1:"),
        "{}",
        cluster.url()
    );
    let kubeconfig = cluster.kubeconfig();
    for field in [
        "certificate-authority-data:",
        "client-certificate-data:",
        "client-key-data:",
    ] {
        assert!(kubeconfig.contains(field), "{kubeconfig}");
    }
    assert!(!kubeconfig.contains("token:"), "{kubeconfig}");
    // The same path rsync takes: the policy, then kube-rs from what the policy kept.
    let checked = emco_k8s::kubeconfig::check_kubeconfig(kubeconfig.as_bytes(), Default::default()).unwrap();
    let parsed: kube::config::Kubeconfig = serde_json::from_value(checked.as_json().clone()).unwrap();
    let config = Config::from_custom_kubeconfig(parsed, &Default::default())
        .await
        .unwrap();
    let client = Client::try_from(config).unwrap();
    let nodes: Api<Node> = Api::all(client);
    assert_eq!(nodes.list(&ListParams::default()).await.unwrap().items.len(), 1);
}

#[tokio::test]
async fn a_role_binding_lets_a_user_read_pods_in_its_namespace_and_nothing_else() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    pod_reader_in_t1(cluster).await;
    let alice = client_as(
        cluster,
        &Credentials::Certificate(cluster.issue_client_certificate("alice", None).unwrap()),
    );
    let pods_t1: Api<Pod> = Api::namespaced(alice.clone(), "t1");
    assert!(
        pods_t1
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    // Discovery is open to every authenticated user.
    assert_eq!(
        alice.apiserver_version().await.unwrap().git_version,
        kubesim::KubernetesVersion::NEWEST.git_version()
    );
    kube::Discovery::new(alice.clone()).run().await.unwrap();

    let pods_t2: Api<Pod> = Api::namespaced(alice.clone(), "t2");
    assert_eq!(
        status_of(pods_t2.list(&ListParams::default()).await.unwrap_err()),
        (
            403,
            "Forbidden".into(),
            "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"t2\"".into()
        )
    );
    let config_maps: Api<ConfigMap> = Api::namespaced(alice.clone(), "t1");
    assert_eq!(
        status_of(config_maps.get("settings").await.unwrap_err()).2,
        "configmaps \"settings\" is forbidden: User \"alice\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"t1\""
    );
    let created = config_maps
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "settings"}})).unwrap(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        status_of(created).2,
        "configmaps is forbidden: User \"alice\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"t1\""
    );
    let nodes: Api<Node> = Api::all(alice.clone());
    assert_eq!(
        status_of(nodes.list(&ListParams::default()).await.unwrap_err()).2,
        "nodes is forbidden: User \"alice\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
    );
    let deployments: Api<emco_k8s::k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(alice, "t1");
    assert_eq!(
        status_of(deployments.get("web").await.unwrap_err()).2,
        "deployments.apps \"web\" is forbidden: User \"alice\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"t1\""
    );

    // A token of a user in the bound group reads pods in t1 too; another user with a certificate does not.
    cluster.add_token("readers-token", "bob", &["readers"]);
    let bob = client_as(cluster, &Credentials::Token("readers-token".into()));
    let bob_pods: Api<Pod> = Api::namespaced(bob, "t1");
    bob_pods.list(&ListParams::default()).await.unwrap();
    let carol = client_as(
        cluster,
        &Credentials::Certificate(cluster.issue_client_certificate("carol", Some("others")).unwrap()),
    );
    let carol_pods: Api<Pod> = Api::namespaced(carol, "t1");
    assert_eq!(
        status_of(carol_pods.list(&ListParams::default()).await.unwrap_err()).2,
        "pods is forbidden: User \"carol\" cannot list resource \"pods\" in API group \"\" in the namespace \"t1\""
    );
}

#[tokio::test]
async fn an_unknown_token_is_unauthorized_and_no_credentials_is_anonymous() {
    let sim = Simulator::start_named(2).await.unwrap();
    let cluster = &sim.clusters()[0];
    let stranger = client_as(cluster, &Credentials::Token("not-a-token".into()));
    let pods: Api<Pod> = Api::namespaced(stranger.clone(), "default");
    assert_eq!(
        status_of(pods.list(&ListParams::default()).await.unwrap_err()),
        (401, "Unauthorized".into(), "Unauthorized".into())
    );
    assert_eq!(status_of(stranger.apiserver_version().await.unwrap_err()).0, 401);

    let mut config = cluster.client_config().unwrap();
    config.auth_info = Default::default();
    let anonymous = Client::try_from(config).unwrap();
    // /version is public; discovery and resources are not.
    anonymous.apiserver_version().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(anonymous.clone(), "default");
    assert_eq!(
        status_of(pods.list(&ListParams::default()).await.unwrap_err()).2,
        "pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
    );
    let err = anonymous.list_api_groups().await.unwrap_err();
    assert_eq!(
        status_of(err).2,
        "forbidden: User \"system:anonymous\" cannot get path \"/apis\""
    );

    // A certificate of another cluster's CA does not get past the handshake.
    let other = &sim.clusters()[1];
    let foreign = other
        .issue_client_certificate("kubesim-admin", Some("system:masters"))
        .unwrap();
    let intruder = client_as(cluster, &Credentials::Certificate(foreign));
    let pods: Api<Pod> = Api::namespaced(intruder, "default");
    assert!(
        !matches!(
            pods.list(&ListParams::default()).await,
            Ok(_) | Err(kube::Error::Api(_))
        ),
        "a foreign certificate was accepted"
    );
}

/// Sends a plain-HTTP `GET /version` and returns what came back before the connection closed (or 2 s passed).
async fn plain_get_version(url_host: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(url_host).await.unwrap();
    stream
        .write_all(b"GET /version HTTP/1.1\r\nHost: kubesim\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn insecure_http_serves_plain_http_with_the_admin_token() {
    let mut config = ClusterConfig::new("edge01");
    config.insecure_http = true;
    let sim = Simulator::start(vec![config, ClusterConfig::new("edge02")])
        .await
        .unwrap();
    let plain = &sim.clusters()[0];
    assert!(plain.url().starts_with("http://127.0.0.1:"), "{}", plain.url());
    assert!(plain.ca_pem().is_none());
    let kubeconfig = plain.kubeconfig();
    assert!(
        kubeconfig.contains("token: \"kubesim\"") && !kubeconfig.contains("certificate-authority-data"),
        "{kubeconfig}"
    );
    assert!(plain.issue_client_certificate("alice", None).is_err());
    let nodes: Api<Node> = Api::all(plain.client().unwrap());
    nodes.list(&ListParams::default()).await.unwrap();
    let answer = plain_get_version(plain.url().trim_start_matches("http://")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // The HTTPS cluster does not answer plain HTTP.
    let https = &sim.clusters()[1];
    let answer = plain_get_version(https.url().trim_start_matches("https://")).await;
    assert!(!answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// Waits (up to 30 s) for `path` to exist.
async fn wait_for_file(path: &Path) {
    for _ in 0..300 {
        if path.exists() {
            // Written in one call; give the writer a moment to finish it.
            tokio::time::sleep(Duration::from_millis(100)).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{} was never written", path.display());
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_binary_serves_https_by_default_and_plain_http_with_insecure_http() {
    for insecure in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_kubesim"));
        command
            .args([
                "--clusters",
                "1",
                "--admin",
                &format!("127.0.0.1:{}", free_port()),
            ])
            .args(["--token", "team-token=dana,readers"])
            .arg("--kubeconfig-dir")
            .arg(dir.path())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if insecure {
            command.arg("--insecure-http");
        }
        let mut child = command.spawn().unwrap();
        let path = dir.path().join("edge01.yaml");
        wait_for_file(&path).await;
        let kubeconfig = std::fs::read_to_string(&path).unwrap();
        let scheme = if insecure {
            "server: http://"
        } else {
            "server: https://"
        };
        assert!(kubeconfig.contains(scheme), "{kubeconfig}");
        assert_eq!(
            kubeconfig.contains("client-certificate-data:"),
            !insecure,
            "{kubeconfig}"
        );
        let parsed = kube::config::Kubeconfig::from_yaml(&kubeconfig).unwrap();
        let mut config = Config::from_custom_kubeconfig(parsed, &Default::default())
            .await
            .unwrap();
        let nodes: Api<Node> = Api::all(Client::try_from(config.clone()).unwrap());
        assert_eq!(nodes.list(&ListParams::default()).await.unwrap().items.len(), 1);
        // The --token user is authenticated (and, unbound, forbidden).
        config.auth_info = serde_json::from_value(json!({"token": "team-token"})).unwrap();
        let pods: Api<Pod> = Api::namespaced(Client::try_from(config).unwrap(), "default");
        assert_eq!(
            status_of(pods.list(&ListParams::default()).await.unwrap_err()).2,
            "pods is forbidden: User \"dana\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
        );
        child.kill().await.unwrap();
    }
}

/// A key and a PEM certificate request for `user` in `group`.
fn certificate_request(user: &str, group: &str) -> (rcgen::KeyPair, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, user);
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, group);
    let pem = params.serialize_request(&key).unwrap().pem().unwrap();
    (key, pem)
}

#[tokio::test]
async fn an_approved_certificate_signing_request_yields_a_working_client_certificate() {
    use base64::Engine as _;
    use emco_k8s::k8s_openapi::api::certificates::v1::CertificateSigningRequest;

    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let csrs: Api<CertificateSigningRequest> = Api::all(cluster.client().unwrap());
    let (key, request) = certificate_request("erin", "team");
    let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let csr = |name: &str, request: &str| -> CertificateSigningRequest {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"request": request,
            "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}}))
        .unwrap()
    };
    // A request that is not a certificate request is refused.
    let refused = csrs
        .create(&PostParams::default(), &csr("bad", &encode("not a request")))
        .await
        .unwrap_err();
    assert_eq!(
        status_of(refused),
        (
            422,
            "Invalid".into(),
            "CertificateSigningRequest.certificates.k8s.io \"bad\" is invalid: spec.request: Invalid value: PEM block type must be CERTIFICATE REQUEST".into()
        )
    );
    let created = csrs
        .create(&PostParams::default(), &csr("erin", &encode(&request)))
        .await
        .unwrap();
    assert_eq!(created.spec.username.as_deref(), Some("kubesim-admin"));
    assert!(created.status.and_then(|s| s.certificate).is_none());

    // Approval, as `kubectl certificate approve` sends it: the object with an Approved condition, PUT to /approval.
    let mut approval = serde_json::to_value(csrs.get("erin").await.unwrap()).unwrap();
    approval["status"]["conditions"] =
        json!([{"type": "Approved", "status": "True", "reason": "Test", "message": "approved"}]);
    let approved = csrs
        .replace_subresource("approval", "erin", &PostParams::default(), &approval)
        .await
        .unwrap();
    let certificate = approved.status.unwrap().certificate.unwrap().0;
    let certificate = String::from_utf8(certificate).unwrap();
    assert!(
        certificate.starts_with("-----BEGIN CERTIFICATE-----"),
        "{certificate}"
    );

    // The issued certificate authenticates erin (in team), whom RBAC has not bound to anything.
    let erin = client_as(
        cluster,
        &Credentials::Certificate(kubesim::ClientCredentials {
            certificate_pem: certificate,
            key_pem: key.serialize_pem(),
        }),
    );
    let pods: Api<Pod> = Api::namespaced(erin, "default");
    assert_eq!(
        status_of(pods.list(&ListParams::default()).await.unwrap_err()).2,
        "pods is forbidden: User \"erin\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
    );
}

/// A server-side apply that creates a request is admitted as a create: checked, and stamped with its requester
/// whatever the body claims.
#[tokio::test]
async fn a_certificate_signing_request_created_by_server_side_apply_is_admitted_as_a_create() {
    use base64::Engine as _;
    use emco_k8s::k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    use kube::api::{Patch, PatchParams};

    let sim = Simulator::start_named(1).await.unwrap();
    let csrs: Api<CertificateSigningRequest> = Api::all(sim.clusters()[0].client().unwrap());
    let (_key, request) = certificate_request("frank", "team");
    let body = |name: &str, request: &str| {
        json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": request, "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"],
                     "username": "system:admin", "groups": ["system:masters"]}})
    };
    let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let apply = PatchParams::apply("test");
    let refused = csrs
        .patch(
            "junk",
            &apply,
            &Patch::Apply(body("junk", &encode("not a request"))),
        )
        .await
        .unwrap_err();
    assert_eq!(status_of(refused).0, 422);
    let created = csrs
        .patch("frank", &apply, &Patch::Apply(body("frank", &encode(&request))))
        .await
        .unwrap();
    assert_eq!(created.spec.username.as_deref(), Some("kubesim-admin"));
}

#[tokio::test]
async fn access_reviews_answer_from_rbac_and_impersonation_needs_permission() {
    use emco_k8s::k8s_openapi::api::authorization::v1::{SelfSubjectAccessReview, SubjectAccessReview};
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    pod_reader_in_t1(cluster).await;
    let alice = client_as(
        cluster,
        &Credentials::Certificate(cluster.issue_client_certificate("alice", None).unwrap()),
    );
    let ask = |verb: &str, namespace: &str| -> SelfSubjectAccessReview {
        serde_json::from_value(json!({"spec": {"resourceAttributes": {"verb": verb, "resource": "pods", "namespace": namespace}}}))
            .unwrap()
    };
    let reviews: Api<SelfSubjectAccessReview> = Api::all(alice.clone());
    let post = PostParams::default();
    let allowed = reviews
        .create(&post, &ask("list", "t1"))
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(allowed.allowed);
    assert_eq!(
        allowed.reason.as_deref(),
        Some("RBAC: allowed by RoleBinding \"pod-readers/t1\" of Role \"pod-reader\" to User \"alice\"")
    );
    assert!(
        !reviews
            .create(&post, &ask("create", "t1"))
            .await
            .unwrap()
            .status
            .unwrap()
            .allowed
    );
    assert!(
        !reviews
            .create(&post, &ask("list", "t2"))
            .await
            .unwrap()
            .status
            .unwrap()
            .allowed
    );

    // The admin asks about others; alice may not.
    let about: SubjectAccessReview =
        serde_json::from_value(json!({"spec": {"user": "carol", "groups": ["readers"],
        "resourceAttributes": {"verb": "watch", "resource": "pods", "namespace": "t1"}}}))
        .unwrap();
    let admin_reviews: Api<SubjectAccessReview> = Api::all(cluster.client().unwrap());
    let answer = admin_reviews.create(&post, &about).await.unwrap().status.unwrap();
    assert!(answer.allowed);
    assert_eq!(
        answer.reason.as_deref(),
        Some("RBAC: allowed by RoleBinding \"pod-readers/t1\" of Role \"pod-reader\" to Group \"readers\"")
    );
    let alice_asks: Api<SubjectAccessReview> = Api::all(alice.clone());
    assert_eq!(
        status_of(alice_asks.create(&post, &about).await.unwrap_err()).2,
        "subjectaccessreviews.authorization.k8s.io is forbidden: User \"alice\" cannot create resource \"subjectaccessreviews\" in API group \"authorization.k8s.io\" at the cluster scope"
    );
    // Reviews are answered, not stored.
    let admin_lists: Api<SelfSubjectAccessReview> = Api::all(cluster.client().unwrap());
    assert_eq!(
        status_of(admin_lists.list(&ListParams::default()).await.unwrap_err()).0,
        405
    );

    // The admin may act as alice; alice may not act as anyone.
    let mut as_alice = cluster.client_config().unwrap();
    as_alice.auth_info.impersonate = Some("alice".into());
    let as_alice = Client::try_from(as_alice).unwrap();
    Api::<Pod>::namespaced(as_alice.clone(), "t1")
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(
        status_of(
            Api::<Pod>::namespaced(as_alice, "t2")
                .list(&ListParams::default())
                .await
                .unwrap_err()
        )
        .2,
        "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"t2\""
    );
    let mut alice_as_admin = cluster
        .client_config_for(&Credentials::Certificate(
            cluster.issue_client_certificate("alice", None).unwrap(),
        ))
        .unwrap();
    alice_as_admin.auth_info.impersonate = Some("kubesim-admin".into());
    alice_as_admin.auth_info.impersonate_groups = Some(vec!["system:masters".into()]);
    let alice_as_admin = Client::try_from(alice_as_admin).unwrap();
    assert_eq!(
        status_of(
            Api::<Pod>::namespaced(alice_as_admin, "t1")
                .list(&ListParams::default())
                .await
                .unwrap_err()
        )
        .2,
        "users \"kubesim-admin\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
}
