//! Properties of the kubeconfig policy over hostile input: no input makes it panic, and whatever it accepts
//! carries no field that could make a client run a command, read a local file or use a proxy — under any of
//! the spellings Go's JSON decoding would match (`Exec`, `token_file`, `Client-Key`, …).

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use emco_k8s::kubeconfig::{KubeconfigPolicy, check_kubeconfig};
use proptest::prelude::*;
use serde_json::{Map, Value as Json, json};

/// Refused user fields, in their kubeconfig spelling.
const USER_REFUSED: [&str; 5] = [
    "exec",
    "auth-provider",
    "tokenFile",
    "client-certificate",
    "client-key",
];
/// Refused cluster fields.
const CLUSTER_REFUSED: [&str; 2] = ["certificate-authority", "proxy-url"];

/// A key as Go matches it: case and `-`/`_` ignored.
fn normalized(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// One of the spellings Go would match for `key`.
fn spelling(key: &'static str) -> impl Strategy<Value = String> {
    (any::<bool>(), any::<bool>()).prop_map(move |(upper, underscores)| {
        let mut out = if underscores {
            key.replace('-', "_")
        } else {
            key.to_string()
        };
        if upper {
            let mut chars = out.chars();
            out = chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default();
        }
        out
    })
}

fn refused_field(fields: &'static [&'static str]) -> impl Strategy<Value = (String, Json)> {
    (0..fields.len())
        .prop_flat_map(move |i| spelling(fields[i]))
        .prop_map(|key| (key, json!("/etc/shadow")))
}

fn user_body() -> impl Strategy<Value = (Map<String, Json>, bool)> {
    let allowed = prop::sample::subsequence(
        vec![
            ("token", json!("t0k3n")),
            ("client-certificate-data", json!("Y2VydA==")),
            ("client-key-data", json!("a2V5")),
            ("username", json!("u")),
            ("password", json!("p")),
            ("as-groups", json!(["g"])),
        ],
        0..4,
    );
    (allowed, prop::option::of(refused_field(&USER_REFUSED))).prop_map(|(allowed, refused)| {
        let mut body: Map<String, Json> = allowed.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let is_refused = refused.is_some();
        if let Some((key, value)) = refused {
            body.insert(key, value);
        }
        (body, is_refused)
    })
}

fn cluster_body() -> impl Strategy<Value = (Map<String, Json>, bool)> {
    let server = prop::sample::select(vec![
        ("https://10.0.0.1:6443", true),
        ("http://edge-01.example:8080/k8s", true),
        ("https://[fd00::1]:443", true),
        ("file:///etc/passwd", false),
        ("https://user:pw@host", false),
        ("https://host:99999", false),
        ("", false),
    ]);
    (
        server,
        prop::option::of(refused_field(&CLUSTER_REFUSED)),
        any::<bool>(),
    )
        .prop_map(|((server, server_ok), refused, with_ca)| {
            let mut body = Map::new();
            body.insert("server".into(), json!(server));
            if with_ca {
                body.insert("certificate-authority-data".into(), json!("Y2E="));
            }
            let is_refused = refused.is_some() || !server_ok;
            if let Some((key, value)) = refused {
                body.insert(key, value);
            }
            (body, is_refused)
        })
}

/// Every key of `value`, at any depth.
fn keys(value: &Json, out: &mut Vec<String>) {
    match value {
        Json::Object(map) => {
            for (key, inner) in map {
                out.push(key.clone());
                keys(inner, out);
            }
        }
        Json::Array(items) => items.iter().for_each(|item| keys(item, out)),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), allow_exec in any::<bool>()) {
        let _ = check_kubeconfig(&bytes, KubeconfigPolicy { allow_exec });
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[a-z:\\-\\[\\]{}\" \n&*!|>0-9]{0,256}", allow_exec in any::<bool>()) {
        let _ = check_kubeconfig(text.as_bytes(), KubeconfigPolicy { allow_exec });
    }

    #[test]
    fn accepted_configs_hold_no_refused_field(
        users in proptest::collection::vec(user_body(), 0..3),
        clusters in proptest::collection::vec(cluster_body(), 1..3),
    ) {
        let any_refused = users.iter().chain(&clusters).any(|(_, refused)| *refused);
        let config = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": clusters.iter().enumerate()
                .map(|(i, (body, _))| json!({"name": format!("c{i}"), "cluster": body}))
                .collect::<Vec<_>>(),
            "users": users.iter().enumerate()
                .map(|(i, (body, _))| json!({"name": format!("u{i}"), "user": body}))
                .collect::<Vec<_>>(),
            "contexts": [{"name": "ctx", "context": {"cluster": "c0", "user": "u0"}}],
            "current-context": "ctx",
        });
        // JSON is YAML: the policy reads it as an uploaded kubeconfig.
        let result = check_kubeconfig(config.to_string().as_bytes(), KubeconfigPolicy::default());
        prop_assert_eq!(result.is_err(), any_refused, "{:?}", result.as_ref().err());
        if let Ok(checked) = result {
            let mut all = Vec::new();
            keys(checked.as_json(), &mut all);
            let forbidden: Vec<String> = USER_REFUSED.iter().chain(&CLUSTER_REFUSED).map(|k| normalized(k)).collect();
            for key in all {
                prop_assert!(!forbidden.contains(&normalized(&key)), "accepted config keeps '{}'", key);
            }
            prop_assert!(!checked.as_json().to_string().contains("/etc/shadow"));
        }
    }
}
