//! The kubeconfig policy at the API: every hostile kubeconfig is refused with a 422 naming the cluster, the entry
//! and the field, and nothing is stored.

use axum::http::StatusCode;
use emco_store::Store;
use serde_json::json;

use crate::support::*;

/// A kubeconfig for cluster entry `c` and user `admin` with extra `cluster` and `user` lines.
fn hostile(cluster: &str, user: &str) -> Vec<u8> {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n{cluster}contexts:\n- name: x\n  context:\n    cluster: c\n    user: admin\ncurrent-context: x\nusers:\n- name: admin\n  user:\n{user}"
    )
    .into_bytes()
}

const SERVER: &str = "    server: https://10.0.0.1:6443\n";

#[tokio::test]
async fn hostile_kubeconfigs_are_refused_with_422_naming_cluster_entry_and_field() {
    let api = Api::new(Store::memory());
    api.post(
        "/v2/cluster-providers",
        json!({"metadata": {"name": "vfw-cluster-provider"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let marker = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"touch /tmp/emco-marker\"]\n";
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            hostile(SERVER, marker),
            "kubeconfig user 'admin': exec credential plugins are not allowed",
        ),
        (
            hostile(
                SERVER,
                "    auth-provider:\n      name: gcp\n      config:\n        cmd-path: /bin/sh\n        cmd-args: -c id\n",
            ),
            "kubeconfig user 'admin': auth-provider plugins are not allowed",
        ),
        (
            hostile(
                SERVER,
                "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n",
            ),
            "kubeconfig user 'admin': a token file path is not allowed (use inline 'token')",
        ),
        (
            hostile(SERVER, "    token-file: /etc/shadow\n"),
            "kubeconfig user 'admin': a token file path is not allowed (use inline 'token')",
        ),
        (
            hostile(
                SERVER,
                "    client-certificate: /etc/emco/tls.crt\n    client-key-data: eA==\n",
            ),
            "kubeconfig user 'admin': a client-certificate file path is not allowed (use 'client-certificate-data')",
        ),
        (
            hostile(
                SERVER,
                "    client-certificate-data: eA==\n    client-key: /etc/emco/tls.key\n",
            ),
            "kubeconfig user 'admin': a client-key file path is not allowed (use 'client-key-data')",
        ),
        (
            hostile(
                &format!("{SERVER}    certificate-authority: /etc/ssl/private/ca.pem\n"),
                "    token: t\n",
            ),
            "kubeconfig cluster 'c': a certificate-authority file path is not allowed (use 'certificate-authority-data')",
        ),
        (
            hostile(
                &format!("{SERVER}    proxy-url: http://attacker.example:3128\n"),
                "    token: t\n",
            ),
            "kubeconfig cluster 'c': proxy-url is not allowed",
        ),
        (
            hostile("    server: file:///etc/passwd\n", "    token: t\n"),
            "kubeconfig cluster 'c': 'server' must be an http(s)://host[:port][/path] URL",
        ),
        (
            hostile("    server: https://user:pw@10.0.0.1:6443\n", "    token: t\n"),
            "kubeconfig cluster 'c': 'server' must be an http(s)://host[:port][/path] URL",
        ),
    ];
    let clusters = format!("{PROVIDER}/clusters");
    let revision = api.store.revision();
    for (file, expected) in cases {
        let reply = api
            .post_form(
                &clusters,
                Some(&json!({"metadata": {"name": "edge01"}})),
                Some(&file),
            )
            .await
            .expect(StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(reply.code(), "InvalidFile");
        assert_eq!(reply.message(), format!("cluster 'edge01': {expected}"));
    }
    assert_eq!(api.store.revision(), revision, "nothing was stored");
    api.get(&format!("{clusters}/edge01"))
        .await
        .expect(StatusCode::NOT_FOUND);
    // The allowed form is accepted.
    api.post_form(
        &clusters,
        Some(&json!({"metadata": {"name": "edge01"}})),
        Some(&hostile(SERVER, "    token: t\n")),
    )
    .await
    .expect(StatusCode::CREATED);
}
