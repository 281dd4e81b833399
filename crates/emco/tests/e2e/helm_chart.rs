//! emco's own Helm chart (`deploy/helm/emco`) rendered with emco-helm, as `helm template` would: with default
//! values (the chart's 3-member etcd) and with `etcd.enabled=false` (an external etcd). Every document must be a
//! Kubernetes object that k8s-openapi reads back field for field, the Deployment must carry the probes and the
//! replica count, and the token Secret must hold a token file emco accepts.

use std::collections::BTreeMap;
use std::path::Path;

use emco_helm::{Manifest, Release};
use emco_k8s::k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use emco_k8s::k8s_openapi::api::core::v1::{Secret, Service, ServiceAccount};
use emco_k8s::k8s_openapi::api::networking::v1::NetworkPolicy;
use emco_k8s::k8s_openapi::api::policy::v1::PodDisruptionBudget;
use emco_k8s::k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use emco_server::auth::{Role as EmcoRole, TokenTable};
use serde_json::{Value as Json, json};

const NAMESPACE: &str = "emco-system";

fn chart_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/helm/emco")
}

/// The chart as a `.tgz`, its files under `emco/`, as `helm package` lays them out.
fn chart_archive() -> Vec<u8> {
    fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, files);
            } else {
                let relative = path.strip_prefix(root).unwrap().to_string_lossy().to_string();
                files.push((format!("emco/{relative}"), std::fs::read(&path).unwrap()));
            }
        }
    }
    let root = chart_dir();
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    let borrowed: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    emco_helm::archive::write_tgz(&borrowed)
}

fn release(name: &str) -> Release {
    Release {
        name: name.to_string(),
        namespace: NAMESPACE.to_string(),
    }
}

fn render(values: &Json) -> Result<Vec<Manifest>, emco_helm::RenderError> {
    let chart = emco_helm::load_archive(&chart_archive()).unwrap();
    emco_helm::render_chart(&chart, values, &release("emco"))
}

/// Reads `object` as `T` and writes it back: the same JSON means every field is one Kubernetes knows, with the
/// right type (a misspelt or misplaced field is dropped by the typed read, a wrongly typed one fails it).
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(manifest: &Manifest) {
    let typed: T = serde_json::from_value(manifest.object.clone())
        .unwrap_or_else(|err| panic!("{} {}: {err}", manifest.kind, manifest.name));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        back, manifest.object,
        "{} {} ({}) has fields Kubernetes does not know",
        manifest.kind, manifest.name, manifest.source
    );
}

/// Every object is a Kubernetes object of a known kind, named, in the release's namespace.
fn check_objects(manifests: &[Manifest]) -> BTreeMap<String, Vec<&Manifest>> {
    let mut by_kind: BTreeMap<String, Vec<&Manifest>> = BTreeMap::new();
    for manifest in manifests {
        assert!(
            !manifest.api_version.is_empty(),
            "{}: no apiVersion",
            manifest.source
        );
        assert!(!manifest.name.is_empty(), "{}: no metadata.name", manifest.source);
        assert_eq!(manifest.object["metadata"]["name"], manifest.name);
        assert_eq!(
            manifest.object["metadata"]["namespace"], NAMESPACE,
            "{} {}",
            manifest.kind, manifest.name
        );
        match manifest.kind.as_str() {
            "Deployment" => round_trip::<Deployment>(manifest),
            "StatefulSet" => round_trip::<StatefulSet>(manifest),
            "Service" => round_trip::<Service>(manifest),
            "ServiceAccount" => round_trip::<ServiceAccount>(manifest),
            "Secret" => round_trip::<Secret>(manifest),
            "Role" => round_trip::<Role>(manifest),
            "RoleBinding" => round_trip::<RoleBinding>(manifest),
            "PodDisruptionBudget" => round_trip::<PodDisruptionBudget>(manifest),
            "NetworkPolicy" => round_trip::<NetworkPolicy>(manifest),
            other => panic!("unexpected kind {other} from {}", manifest.source),
        }
        by_kind.entry(manifest.kind.clone()).or_default().push(manifest);
    }
    by_kind
}

fn only<'a>(by_kind: &BTreeMap<String, Vec<&'a Manifest>>, kind: &str) -> &'a Json {
    let objects = &by_kind[kind];
    assert_eq!(objects.len(), 1, "{kind}");
    &objects[0].object
}

fn args(deployment: &Json) -> Vec<String> {
    deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap().to_string())
        .collect()
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .find_map(|arg| arg.strip_prefix(&format!("{name}=")).map(str::to_string))
}

fn token_table(secret: &Json) -> TokenTable {
    use base64::Engine as _;
    let encoded = secret["data"]["tokens.csv"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).unwrap();
    TokenTable::parse(Path::new("tokens.csv"), &bytes).unwrap()
}

#[test]
fn default_values_render_emco_with_a_three_member_etcd() {
    let manifests = render(&json!({})).unwrap();
    let by_kind = check_objects(&manifests);
    let kinds: Vec<(&str, usize)> = by_kind
        .iter()
        .map(|(kind, objects)| (kind.as_str(), objects.len()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Deployment", 1),
            ("NetworkPolicy", 1),
            // etcd's only: one emco replica gets no budget.
            ("PodDisruptionBudget", 1),
            ("Role", 1),
            ("RoleBinding", 1),
            ("Secret", 1),
            ("Service", 2),
            ("ServiceAccount", 1),
            ("StatefulSet", 1),
        ]
    );

    let deployment = only(&by_kind, "Deployment");
    assert_eq!(deployment["metadata"]["name"], "emco");
    assert_eq!(deployment["spec"]["replicas"], 1);
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["readinessProbe"]["httpGet"]["port"], "http");
    assert_eq!(container["ports"][0]["containerPort"], 9015);
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert!(container["resources"]["requests"]["memory"].is_string());

    let args = args(deployment);
    assert_eq!(args[0], "serve");
    assert_eq!(flag(&args, "--listen").as_deref(), Some("0.0.0.0:9015"));
    let endpoints: Vec<String> = (0..3)
        .map(|n| format!("http://emco-etcd-{n}.emco-etcd.{NAMESPACE}.svc:2379"))
        .collect();
    assert_eq!(flag(&args, "--etcd-endpoints"), Some(endpoints.join(",")));
    assert_eq!(flag(&args, "--etcd-prefix").as_deref(), Some("/emco"));
    assert_eq!(
        flag(&args, "--token-auth-file").as_deref(),
        Some("/etc/emco/auth/tokens.csv")
    );
    assert!(!args.iter().any(|arg| arg == "--insecure-allow-unauthenticated"));
    assert!(!args.iter().any(|arg| arg == "--metrics-without-auth"));

    // The etcd members and their headless Service.
    let etcd = only(&by_kind, "StatefulSet");
    assert_eq!(etcd["spec"]["replicas"], 3);
    assert_eq!(etcd["spec"]["serviceName"], "emco-etcd");
    assert_eq!(etcd["spec"]["podManagementPolicy"], "Parallel");
    let command = etcd["spec"]["template"]["spec"]["containers"][0]["command"]
        .as_array()
        .unwrap();
    let initial_cluster = (0..3)
        .map(|n| format!("emco-etcd-{n}=http://emco-etcd-{n}.emco-etcd.{NAMESPACE}.svc:2380"))
        .collect::<Vec<_>>()
        .join(",");
    assert!(command.contains(&json!(format!("--initial-cluster={initial_cluster}"))));
    // emco writes a whole context in one transaction: etcd's limits are raised for large deployments.
    assert!(command.contains(&json!("--max-txn-ops=100000")), "{command:?}");
    assert!(
        command.contains(&json!("--max-request-bytes=67108864")),
        "{command:?}"
    );
    let headless = by_kind["Service"]
        .iter()
        .find(|service| service.name == "emco-etcd")
        .unwrap();
    assert_eq!(headless.object["spec"]["clusterIP"], "None");
    // The Service's selector picks exactly the StatefulSet's pods, and the API Service exactly the Deployment's.
    assert_eq!(
        headless.object["spec"]["selector"],
        etcd["spec"]["selector"]["matchLabels"]
    );
    let api = by_kind["Service"]
        .iter()
        .find(|service| service.name == "emco")
        .unwrap();
    assert_eq!(
        api.object["spec"]["selector"],
        deployment["spec"]["selector"]["matchLabels"]
    );
    assert_ne!(
        api.object["spec"]["selector"],
        headless.object["spec"]["selector"]
    );

    // Least privilege: a namespaced Role that grants nothing, no ClusterRole.
    assert_eq!(only(&by_kind, "Role")["rules"], json!([]));

    // No tokens given: one generated admin token, in the format emco reads.
    let tokens = token_table(only(&by_kind, "Secret"));
    assert_eq!(tokens.len(), 1);
}

#[test]
fn the_generated_token_is_an_admin_token_emco_accepts() {
    let manifests = render(&json!({})).unwrap();
    let secret = manifests.iter().find(|m| m.kind == "Secret").unwrap();
    use base64::Engine as _;
    let text = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(secret.object["data"]["tokens.csv"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    let token = text.split(',').next().unwrap();
    assert_eq!(token.len(), 40);
    let identity = token_table(&secret.object)
        .authenticate(token.as_bytes())
        .unwrap();
    assert_eq!(identity.role, EmcoRole::Admin);
}

#[test]
fn an_external_etcd_replaces_the_statefulset() {
    let values = json!({
        "replicaCount": 3,
        "etcd": {"enabled": false},
        "externalEtcd": {
            "endpoints": ["https://etcd-a.example:2379", "https://etcd-b.example:2379"],
            "prefix": "/emco-prod",
            "tlsSecret": "etcd-client"
        },
        "metrics": {"withoutAuth": true},
        "auth": {"tokens": [
            {"token": "t-admin", "user": "alice", "uid": 100, "groups": ["emco:admin"]},
            {"token": "t-viewer", "user": "ann", "groups": ["emco:viewer", "ops"]}
        ]}
    });
    let manifests = render(&values).unwrap();
    let by_kind = check_objects(&manifests);
    assert!(!by_kind.contains_key("StatefulSet"));
    assert!(!by_kind.contains_key("NetworkPolicy"));
    assert_eq!(by_kind["Service"].len(), 1);

    let deployment = only(&by_kind, "Deployment");
    assert_eq!(deployment["spec"]["replicas"], 3);
    let args = args(deployment);
    assert_eq!(
        flag(&args, "--etcd-endpoints").as_deref(),
        Some("https://etcd-a.example:2379,https://etcd-b.example:2379")
    );
    assert_eq!(flag(&args, "--etcd-prefix").as_deref(), Some("/emco-prod"));
    assert_eq!(
        flag(&args, "--etcd-ca-file").as_deref(),
        Some("/etc/emco/etcd-tls/ca.crt")
    );
    assert!(args.iter().any(|arg| arg == "--metrics-without-auth"));
    let annotations = &deployment["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"], "true");
    assert_eq!(annotations["prometheus.io/port"], "9015");
    let volumes = deployment["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap();
    assert!(volumes.iter().any(|v| v["secret"]["secretName"] == "etcd-client"));

    let tokens = token_table(only(&by_kind, "Secret"));
    assert_eq!(tokens.len(), 2);
    let viewer = tokens.authenticate(b"t-viewer").unwrap();
    assert_eq!((viewer.user.as_str(), viewer.role), ("ann", EmcoRole::Viewer));
    assert_eq!(tokens.authenticate(b"t-admin").unwrap().role, EmcoRole::Admin);
}

#[test]
fn an_external_etcd_needs_endpoints() {
    let err = render(&json!({"etcd": {"enabled": false}})).unwrap_err();
    assert!(err.to_string().contains("externalEtcd.endpoints"), "{err}");
}

#[test]
fn notes_tell_how_to_read_the_generated_token() {
    let chart = emco_helm::load_archive(&chart_archive()).unwrap();
    let rendered = emco_helm::render_templates(&chart, &json!({}), &release("prod")).unwrap();
    let notes = rendered
        .iter()
        .find(|(file, _)| file.ends_with("NOTES.txt"))
        .map(|(_, text)| text)
        .unwrap();
    assert!(notes.contains("secret prod-emco-tokens"), "{notes}");
    assert!(notes.contains("port-forward svc/prod-emco 9015:9015"), "{notes}");
}
