//! Unit tests of the kubeconfig policy: every refused field named, the allowed forms accepted, unknown keys and
//! Go's key spellings still checked.

use super::*;

/// The default (strict) policy.
fn check(bytes: &[u8]) -> Result<CheckedKubeconfig, KubeconfigError> {
    check_kubeconfig(bytes, KubeconfigPolicy::default())
}

const CA: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==";

/// A kubeconfig with cluster entry `c` (`cluster` lines) and user `admin` (`user` lines).
fn config(cluster: &str, user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n{cluster}contexts:\n- name: x\n  context:\n    cluster: c\n    user: admin\n    namespace: ns\ncurrent-context: x\nusers:\n- name: admin\n  user:\n{user}"
    )
}

const SERVER: &str = "    server: https://10.0.0.1:6443\n";

fn refusal(cluster: &str, user: &str) -> String {
    check(config(cluster, user).as_bytes()).unwrap_err().to_string()
}

#[test]
fn every_refused_user_field_is_named() {
    let cases = [
        (
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"touch /tmp/x\"]\n",
            "kubeconfig user 'admin': exec credential plugins are not allowed",
        ),
        (
            "    auth-provider:\n      name: gcp\n      config:\n        cmd-path: /bin/sh\n",
            "kubeconfig user 'admin': auth-provider plugins are not allowed",
        ),
        (
            "    tokenFile: /var/run/secrets/token\n",
            "kubeconfig user 'admin': a token file path is not allowed (use inline 'token')",
        ),
        (
            "    token-file: /etc/shadow\n",
            "kubeconfig user 'admin': a token file path is not allowed (use inline 'token')",
        ),
        (
            "    client-certificate: /etc/emco/cert.pem\n",
            "kubeconfig user 'admin': a client-certificate file path is not allowed (use 'client-certificate-data')",
        ),
        (
            "    client-key: /etc/emco/key.pem\n",
            "kubeconfig user 'admin': a client-key file path is not allowed (use 'client-key-data')",
        ),
    ];
    for (user, expected) in cases {
        assert_eq!(refusal(SERVER, user), expected, "{user}");
        // Beside an allowed inline credential too.
        assert_eq!(
            refusal(SERVER, &format!("    token: abc\n{user}")),
            expected,
            "{user}"
        );
    }
}

#[test]
fn every_refused_cluster_field_is_named() {
    let cases = [
        (
            format!("{SERVER}    certificate-authority: /etc/ssl/ca.pem\n"),
            "kubeconfig cluster 'c': a certificate-authority file path is not allowed (use 'certificate-authority-data')",
        ),
        (
            format!("{SERVER}    proxy-url: http://attacker:3128\n"),
            "kubeconfig cluster 'c': proxy-url is not allowed",
        ),
        (
            "    insecure-skip-tls-verify: true\n".to_string(),
            "kubeconfig cluster 'c': 'server' is missing",
        ),
    ];
    for (cluster, expected) in cases {
        assert_eq!(refusal(&cluster, "    token: t\n"), expected, "{cluster}");
    }
}

#[test]
fn servers_must_be_http_host_port_path() {
    for bad in [
        "file:///etc/passwd",
        "unix:///var/run/docker.sock",
        "ftp://host",
        "https://",
        "https://user:pw@host:6443",
        "https://host:6443?x=1",
        "https://host/#frag",
        "https://host:0",
        "https://host:99999",
        "https://host:",
        "https://ho st",
        "https://[::1",
        "HTTPS://host",
        " https://host",
        "https://host/a b",
        "https://host\\@evil",
    ] {
        let cluster = format!("    server: {}\n", serde_json::to_string(bad).unwrap());
        assert_eq!(
            refusal(&cluster, "    token: t\n"),
            "kubeconfig cluster 'c': 'server' must be an http(s)://host[:port][/path] URL",
            "{bad}"
        );
    }
    let number = refusal("    server: 6443\n", "    token: t\n");
    assert!(number.contains("'server' must be"), "{number}");
    for good in [
        "http://127.0.0.1:6443",
        "https://k8s.example.com",
        "https://k8s.example.com:443/clusters/edge01",
        "https://[fd00::1]:6443/",
        "http://localhost/api-proxy/k8s_1",
    ] {
        let cluster = format!("    server: {good}\n");
        assert!(
            check(config(&cluster, "    token: t\n").as_bytes()).is_ok(),
            "{good}"
        );
    }
}

#[test]
fn allowed_forms_are_accepted_and_only_allowed_fields_kept() {
    let cluster = format!(
        "{SERVER}    certificate-authority-data: {CA}\n    tls-server-name: k8s\n    insecure-skip-tls-verify: false\n    extensions:\n    - name: client.authentication.k8s.io/exec\n      extension: {{audience: x}}\n"
    );
    let user = format!(
        "    token: abc\n    client-certificate-data: {CA}\n    client-key-data: {CA}\n    username: u\n    password: p\n    as: someone\n    as-groups: [g]\n    favourite-colour: blue\n"
    );
    let checked = check(config(&cluster, &user).as_bytes()).unwrap();
    let json = checked.as_json();
    assert_eq!(json["current-context"], "x");
    assert_eq!(json["contexts"][0]["context"]["namespace"], "ns");
    let kept_cluster = json["clusters"][0]["cluster"].as_object().unwrap();
    let mut keys: Vec<_> = kept_cluster.keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "certificate-authority-data",
            "insecure-skip-tls-verify",
            "server",
            "tls-server-name"
        ]
    );
    let kept_user = json["users"][0]["user"].as_object().unwrap();
    assert_eq!(kept_user["token"], "abc");
    assert_eq!(kept_user["as-groups"], serde_json::json!(["g"]));
    assert!(!kept_user.contains_key("favourite-colour"));
    assert_eq!(kept_user.len(), 7);
    // Credentials never show in Debug output.
    assert!(!format!("{checked:?}").contains("abc"));
    // Basic auth alone, and no user at all, are fine.
    assert!(check(config(SERVER, "    username: u\n    password: p\n").as_bytes()).is_ok());
    assert!(check(config(SERVER, "    {}\n").as_bytes()).is_ok());
}

#[test]
fn unknown_keys_and_go_spellings_do_not_hide_a_refused_field() {
    // Unknown keys everywhere, the exec in flow style among them.
    let text = format!(
        "x-vendor: {{a: 1}}\napiVersion: v1\nclusters:\n- name: c\n  x-note: hi\n  cluster:\n{SERVER}    x-extra: [1, 2]\nusers:\n- name: admin\n  x-note: hi\n  user: {{x-extra: 1, token: t, exec: {{command: /bin/sh, args: [-c, id], unknownKey: 1}}}}\n"
    );
    assert_eq!(
        check(text.as_bytes()).unwrap_err().to_string(),
        "kubeconfig user 'admin': exec credential plugins are not allowed"
    );
    // Case and separators as Go's JSON decoding would match them.
    for user in [
        "    Exec: {command: sh}\n",
        "    token_file: /t\n",
        "    TokenFile: /t\n",
        "    Auth_Provider: {name: x}\n",
    ] {
        let message = refusal(SERVER, user);
        assert!(
            message.starts_with("kubeconfig user 'admin': "),
            "{user}: {message}"
        );
    }
    let message = refusal(&format!("{SERVER}    Proxy_URL: http://p\n"), "    token: t\n");
    assert_eq!(message, "kubeconfig cluster 'c': proxy-url is not allowed");
    // `user` under another spelling is still the user entry.
    let text = format!(
        "clusters:\n- name: c\n  cluster:\n{SERVER}users:\n- name: admin\n  User:\n    exec: {{command: sh}}\n"
    );
    assert!(check(text.as_bytes()).unwrap_err().to_string().contains("exec"));
    // A second spelling of `server` is refused rather than guessed at.
    let message = refusal(&format!("{SERVER}    Server: http://other\n"), "    token: t\n");
    assert!(message.contains("'server' must be"), "{message}");
    // A user entry that no context uses is checked too.
    let text = format!(
        "{}- name: spare\n  user:\n    exec: {{command: sh}}\n",
        config(SERVER, "    token: t\n")
    );
    assert_eq!(
        check(text.as_bytes()).unwrap_err().to_string(),
        "kubeconfig user 'spare': exec credential plugins are not allowed"
    );
}

#[test]
fn shape_errors_are_named() {
    let err = |text: &str| check(text.as_bytes()).unwrap_err().to_string();
    assert!(err("").contains("empty"));
    assert!(err("a: [").contains("not YAML"));
    assert!(err("clusters: []").contains("no clusters"));
    assert!(err("- 1").contains("not a mapping"));
    let good = config(SERVER, "    token: t\n");
    assert!(err(&format!("{good}---\n{good}")).contains("more than one YAML document"));
    assert!(err(&good.replace("current-context: x", "current-context: other")).contains("'other'"));
    assert!(err(&good.replace("    token: t", "    token: [t]")).contains("'token' must be a string"));
    assert!(err("clusters: {a: 1}").contains("clusters must be a list"));
    assert_eq!(
        refusal_message("edge01", &KubeconfigError::Shape("no clusters".into())),
        "cluster 'edge01': kubeconfig: no clusters"
    );
}

#[test]
fn exec_plugins_pass_only_when_the_policy_allows_them_and_only_their_documented_fields() {
    let allow = KubeconfigPolicy { allow_exec: true };
    let user = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n      args: [eks, get-token, --cluster-name, edge01]\n      env:\n      - {name: AWS_PROFILE, value: emco}\n      interactiveMode: Always\n      provideClusterInfo: false\n      unknownKey: 1\n";
    let text = config(SERVER, user);
    assert_eq!(
        check(text.as_bytes()).unwrap_err().to_string(),
        "kubeconfig user 'admin': exec credential plugins are not allowed"
    );
    let checked = check_kubeconfig(text.as_bytes(), allow).unwrap();
    let exec = &checked.as_json()["users"][0]["user"]["exec"];
    assert_eq!(
        exec,
        &serde_json::json!({
            "command": "aws",
            "apiVersion": "client.authentication.k8s.io/v1",
            "args": ["eks", "get-token", "--cluster-name", "edge01"],
            "env": [{"name": "AWS_PROFILE", "value": "emco"}],
            "provideClusterInfo": false,
            "interactiveMode": "Never",
        })
    );
    // Go's spellings of the key are one plugin; two of them are refused rather than guessed at.
    let checked = check_kubeconfig(
        config(SERVER, "    Exec: {command: gke-gcloud-auth-plugin}\n").as_bytes(),
        allow,
    )
    .unwrap();
    assert_eq!(
        checked.as_json()["users"][0]["user"]["exec"]["command"],
        "gke-gcloud-auth-plugin"
    );
    let refused = |user: &str| {
        check_kubeconfig(config(SERVER, user).as_bytes(), allow)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused("    exec: {command: a}\n    Exec: {command: b}\n"),
        "kubeconfig user 'admin': 'exec' is given more than once"
    );
    assert_eq!(
        refused("    exec: {args: [x]}\n"),
        "kubeconfig user 'admin': 'exec.command' must be a non-empty string"
    );
    assert_eq!(
        refused("    exec: sh\n"),
        "kubeconfig user 'admin': 'exec' must be a mapping"
    );
    assert_eq!(
        refused("    exec: {command: a, env: [{name: A}]}\n"),
        "kubeconfig user 'admin': exec: 'env' must be a list of {name, value} strings"
    );
    // Everything else stays refused.
    assert_eq!(
        refused("    exec: {command: a}\n    tokenFile: /t\n"),
        "kubeconfig user 'admin': a token file path is not allowed (use inline 'token')"
    );
    assert_eq!(
        refused("    auth-provider: {name: gcp}\n"),
        "kubeconfig user 'admin': auth-provider plugins are not allowed"
    );
    assert_eq!(
        check_kubeconfig(
            config(
                &format!("{SERVER}    proxy-url: http://p\n"),
                "    exec: {command: a}\n"
            )
            .as_bytes(),
            allow
        )
        .unwrap_err()
        .to_string(),
        "kubeconfig cluster 'c': proxy-url is not allowed"
    );
}
