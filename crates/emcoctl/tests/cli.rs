//! The `emcoctl` binary: exit codes and messages for bad files, unknown anchors, missing file parts and an
//! unreachable API, against an in-process emco API; `https://` targets verified with `--ca-file`.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::process::Output;

async fn emco() -> String {
    let server = emco_server::Server::new(
        emco_store::Store::memory(),
        None,
        emco_server::ServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = server.run(listener, std::future::pending()).await;
    });
    format!("http://{address}")
}

async fn emcoctl(target: &str, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_emcoctl"))
        .arg("--emco")
        .arg(target)
        .args(args)
        .env_remove("EMCO_URL")
        .env_remove("EMCO_CA_FILE")
        .output()
        .await
        .unwrap()
}

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_clear_message_and_a_non_zero_exit() {
    let target = emco().await;
    let dir = tempfile::tempdir().unwrap();

    let project = file(
        &dir,
        "project.yaml",
        "resourceContext: {anchor: projects}\nmetadata: {name: p1}\n",
    );
    let ok = emcoctl(&target, &["apply", "-f", &project]).await;
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert_eq!(ok.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with(&format!(
            "POST  --> URL: {target}/v2/projects\nResponse Code: 201\nResponse: "
        )),
        "{stdout}"
    );

    // Several documents piped: every answer on stdout, nothing drawn on stderr (the progress bar is for terminals).
    let two = file(
        &dir,
        "two.yaml",
        "resourceContext: {anchor: projects}\nmetadata: {name: p2}\n---\nresourceContext: {anchor: projects}\nmetadata: {name: p3}\n",
    );
    let piped = emcoctl(&target, &["apply", "-f", &two]).await;
    assert_eq!(piped.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&piped.stdout)
            .matches("Response Code: 201")
            .count(),
        2
    );
    assert!(
        piped.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );

    // The same again: 409 from the API, exit 1.
    let again = emcoctl(&target, &["apply", "-f", &project]).await;
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stdout).contains("Response Code: 409"));

    let cases: [(&str, &str, i32, &str); 4] = [
        (
            "broken.yaml",
            "resourceContext: {anchor: projects\n",
            2,
            "broken.yaml: not YAML",
        ),
        (
            "no-anchor.yaml",
            "resourceContext: {anchor: projects}\nmetadata: {name: a}\n---\nmetadata: {name: b}\n",
            2,
            "no-anchor.yaml, document 2: resourceContext.anchor is missing",
        ),
        (
            "unknown.yaml",
            "resourceContext: {anchor: projects/p1/no-such-things}\nmetadata: {name: x}\n",
            1,
            "Response Code: 404",
        ),
        (
            "missing-part.yaml",
            "resourceContext: {anchor: cluster-providers/cp/clusters}\nmetadata: {name: c}\nfile: absent.yaml\n",
            2,
            "document 1: cannot read",
        ),
    ];
    for (name, text, code, message) in cases {
        let path = file(&dir, name, text);
        let output = emcoctl(&target, &["apply", "-f", &path]).await;
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(code), "{name}: {all}");
        assert!(all.contains(message), "{name}: {all}");
    }
    // Nothing was created by the failed files.
    let get = emcoctl(&target, &["get", "projects/p1/no-such-things"]).await;
    assert_eq!(get.status.code(), Some(1));

    // Status of a deployment intent group that does not exist: the API's 404, exit 1; a bad format is a usage error.
    let status = emcoctl(
        &target,
        &[
            "status",
            "projects/p1/composite-apps/ca/v1/deployment-intent-groups/nope",
        ],
    )
    .await;
    assert_eq!(status.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&status.stderr).contains("answered 404"),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert_eq!(
        emcoctl(&target, &["status", "projects/p1", "-o", "xml"])
            .await
            .status
            .code(),
        Some(2)
    );

    // Usage mistakes exit 2; an API nobody serves exits 1 and names it.
    assert_eq!(emcoctl(&target, &["apply"]).await.status.code(), Some(2));
    assert_eq!(
        emcoctl("ftp://x", &["get", "projects"]).await.status.code(),
        Some(2)
    );
    let unreachable = emcoctl("http://127.0.0.1:9", &["get", "projects"]).await;
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("http://127.0.0.1:9/v2/projects"));
}

fn template(args: &[&str]) -> Output {
    let mut all = vec!["template"];
    all.extend_from_slice(args);
    emcoctl_offline(&all)
}

#[test]
fn template_renders_a_chart_offline_as_emco_applies_it() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("web");
    std::fs::create_dir_all(chart.join("templates/tests")).unwrap();
    std::fs::create_dir_all(chart.join("crds")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "replicas: 1\nimage: nginx\n").unwrap();
    std::fs::write(
        chart.join("templates/deploy.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-web\n  namespace: {{ .Release.Namespace }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n      - name: web\n        image: {{ .Values.image | quote }}\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  tag: {{ required \"tag is required\" .Values.tag | quote }}\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/tests/probe.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-probe\n  annotations:\n    helm.sh/hook: test\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("crds/widgets.yaml"),
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n",
    )
    .unwrap();
    let values = file(&dir, "v.yaml", "replicas: 2\ntag: v1\n");
    let chart = chart.display().to_string();

    // A value the chart requires is missing: Helm's message, exit 1.
    let missing = template(&[&chart]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim(),
        "emcoctl: execution error at (web/templates/cm.yaml:6:10): tag is required"
    );

    // YAML stream: the CRD first, then Helm's install order; the test hook left out; files then --set.
    let yaml = template(&[
        &chart,
        "-f",
        &values,
        "--set",
        "image=httpd",
        "--name",
        "fw0",
        "--namespace",
        "edge",
    ]);
    assert_eq!(
        yaml.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&yaml.stderr)
    );
    let stdout = String::from_utf8_lossy(&yaml.stdout);
    let sources: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("# Source: "))
        .collect();
    assert_eq!(
        sources,
        [
            "web/crds/widgets.yaml",
            "web/templates/cm.yaml",
            "web/templates/deploy.yaml"
        ]
    );
    assert!(
        stdout.contains("  name: fw0-web\n  namespace: edge\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  replicas: 2\n") && stdout.contains("image: \"httpd\"\n"),
        "{stdout}"
    );

    // JSON: a list of the same objects; --skip-crds --include-tests prints what `helm template` prints.
    let json = template(&[
        &chart,
        "-f",
        &values,
        "-o",
        "json",
        "--skip-crds",
        "--include-tests",
    ]);
    let objects: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    let names: Vec<&str> = objects
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["web-config", "web-probe", "r1-web"]);

    // A chart that is not there, or an output format that does not exist: exit 2.
    let absent = template(&[&dir.path().join("nope").display().to_string()]);
    assert_eq!(absent.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&absent.stderr).contains("nope"));
    assert_eq!(template(&[&chart, "-o", "xml"]).status.code(), Some(2));
}

#[test]
fn template_prints_each_rendered_document_as_helm_template_does() {
    // `helm template` (Helm v4's pkg/cmd/template.go): the release's manifest — `---`, `# Source: <file>`, the
    // document as rendered and a line break, objects in install order — trimmed and ended by one line break, then
    // each hook the same way. Key order, comments and quoting are the template's.
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("app");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/config.yaml"),
        "# the settings\nkind: ConfigMap\napiVersion: v1\nmetadata:\n  name: settings\ndata:\n  zeta: \"1\"\n  alpha: |\n    line\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n{{- /* trims the last line break */ -}}\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/hook.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    \"helm.sh/hook\": pre-install\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/old-crd-hook.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: skipped\n  annotations:\n    helm.sh/hook: crd-install\n",
    )
    .unwrap();
    let output = template(&[&chart.display().to_string(), "--name", "r1"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "---\n# Source: app/templates/config.yaml\n# the settings\nkind: ConfigMap\napiVersion: v1\nmetadata:\n  name: settings\ndata:\n  zeta: \"1\"\n  alpha: |\n    line\n\n---\n# Source: app/templates/config.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n---\n# Source: app/templates/hook.yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    \"helm.sh/hook\": pre-install\n\n"
    );
}

#[test]
fn template_renders_for_a_given_kubernetes_version_and_api_versions() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("pdb");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: pdb\nversion: 0.1.0\nkubeVersion: \">=1.19.0-0\"\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/pdb.yaml"),
        "apiVersion: {{ if semverCompare \">=1.21-0\" .Capabilities.KubeVersion.Version }}policy/v1{{ else }}policy/v1beta1{{ end }}\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n  annotations:\n    psp: {{ .Capabilities.APIVersions.Has \"policy/v1beta1/PodSecurityPolicy\" | quote }}\n",
    )
    .unwrap();
    let chart = chart.display().to_string();
    let rendered = |args: &[&str]| {
        let mut all = vec![chart.as_str(), "-o", "json"];
        all.extend_from_slice(args);
        let output = template(&all);
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        let objects: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap_or_default();
        (
            output.status.code(),
            objects.first().map(|o| {
                (
                    o["apiVersion"].clone(),
                    o["metadata"]["annotations"]["psp"].clone(),
                )
            }),
            stderr,
        )
    };
    let (code, object, _) = rendered(&[]);
    assert_eq!(
        (code, object),
        (
            Some(0),
            Some((serde_json::json!("policy/v1"), serde_json::json!("false")))
        )
    );
    let (code, object, _) = rendered(&[
        "--kube-version",
        "1.20",
        "-a",
        "policy/v1beta1/PodSecurityPolicy,x/v1",
    ]);
    assert_eq!(
        (code, object),
        (
            Some(0),
            Some((serde_json::json!("policy/v1beta1"), serde_json::json!("true")))
        )
    );
    let (code, _, stderr) = rendered(&["--kube-version", "1.18"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("chart requires kubeVersion: >=1.19.0-0 which is incompatible with Kubernetes v1.18"),
        "{stderr}"
    );
    let (code, _, stderr) = rendered(&["--kube-version", "one.two"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("one.two"), "{stderr}");
}

#[test]
fn template_prints_helms_objects_of_kube_prometheus_stack() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/helm-corpus");
    let chart = corpus.join("emco-examples/kube-prometheus-stack");
    if !chart.is_dir() {
        eprintln!("skipped: the Helm chart corpus is not at {}", corpus.display());
        return;
    }
    let count = |args: &[&str]| {
        let output = template(args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let objects: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap();
        objects
    };
    let chart = chart.display().to_string();
    // What `helm template` prints: 136 objects (Helm v4.2.3, same chart and values).
    assert_eq!(
        count(&[&chart, "-o", "json", "--skip-crds", "--include-tests"]).len(),
        136
    );
    // What emco applies: the 8 CRDs of its crds/ folder first, and no test hook.
    let applied = count(&[&chart, "-o", "json"]);
    assert_eq!(applied.len(), 136 + 8 - 1);
    assert!(
        applied[..8]
            .iter()
            .all(|o| o["kind"] == "CustomResourceDefinition")
    );
}

/// An emco API requiring the tokens of `tokens` (a kube-apiserver token file's text).
async fn emco_with_tokens(dir: &tempfile::TempDir, tokens: &str) -> String {
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, tokens).unwrap();
    let server = emco_server::Server::new(
        emco_store::Store::memory(),
        None,
        emco_server::ServerConfig {
            token_auth: Some(emco_server::TokenAuth::load(&path).unwrap()),
            ..emco_server::ServerConfig::default()
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = server.run(listener, std::future::pending()).await;
    });
    format!("http://{address}")
}

/// emcoctl with `args` and the environment values `environment`, without a token from the caller's environment.
async fn emcoctl_with(target: &str, args: &[&str], environment: &[(&str, &str)]) -> (Option<i32>, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_emcoctl"))
        .arg("--emco")
        .arg(target)
        .args(args)
        .env_remove("EMCO_URL")
        .env_remove("EMCO_TOKEN")
        .envs(environment.iter().copied())
        .output()
        .await
        .unwrap();
    (
        output.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

/// PEM files `(ca, cert, key)` of a CA and a server certificate for `127.0.0.1` signed by it (emco-helm's Sprig
/// `genCA`/`genSignedCert`).
fn certificates(dir: &tempfile::TempDir) -> (String, String, String) {
    use emco_helm::gotemplate::{MapScope, Templates, Value};
    let _maps = MapScope::open();
    let mut templates = Templates::new(emco_helm::engine::helm_funcs());
    let text = r#"{{- $ca := genCA "emcoctl-test-ca" 30 -}}
{{- $cert := genSignedCert "localhost" (list "127.0.0.1") (list "localhost") 30 $ca -}}
{{ $ca.Cert }}@@{{ $cert.Cert }}@@{{ $cert.Key }}"#;
    templates.parse("certs", text).unwrap();
    let output = templates
        .execute("certs", &Value::from_json(&serde_json::json!({})))
        .unwrap();
    let parts: Vec<&str> = output.split("@@").collect();
    (
        file(dir, "ca.pem", parts[0]),
        file(dir, "cert.pem", parts[1]),
        file(dir, "key.pem", parts[2]),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_from_the_flag_the_environment_or_the_config_file_are_sent_and_refusals_show_the_apis_message()
{
    const ADMIN: &str = "adm-7f3c9e";
    const VIEWER: &str = "view-51b2d0";
    let dir = tempfile::tempdir().unwrap();
    let target = emco_with_tokens(
        &dir,
        &format!("{ADMIN},alice,1,emco:admin\n{VIEWER},ann,2,emco:viewer\n"),
    )
    .await;
    let project = |name: &str| {
        file(
            &dir,
            &format!("{name}.yaml"),
            &format!("resourceContext: {{anchor: projects}}\nmetadata: {{name: {name}}}\n"),
        )
    };

    // --token.
    let (code, all) = emcoctl_with(&target, &["--token", ADMIN, "apply", "-f", &project("p1")], &[]).await;
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("Response Code: 201"), "{all}");
    // EMCO_TOKEN.
    let (code, all) = emcoctl_with(
        &target,
        &["apply", "-f", &project("p2")],
        &[("EMCO_TOKEN", ADMIN)],
    )
    .await;
    assert_eq!(code, Some(0), "{all}");
    // The config file's token (key case ignored).
    let config = file(&dir, "emco.yaml", &format!("Token: {VIEWER}\n"));
    let (code, all) = emcoctl_with(&target, &["--config", &config, "get", "projects/p1"], &[]).await;
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("Response Code: 200"), "{all}");
    // A viewer's change: the API's 403 message.
    let (code, all) = emcoctl_with(
        &target,
        &["apply", "-f", &project("p3")],
        &[("EMCO_TOKEN", VIEWER)],
    )
    .await;
    assert_eq!(code, Some(1), "{all}");
    assert!(all.contains("Response Code: 403"), "{all}");
    assert!(
        all.contains("user 'ann' has role emco:viewer, which may only read"),
        "{all}"
    );

    // No token: the API's 401 message, exit 1, for files and for status alike.
    let (code, all) = emcoctl_with(&target, &["get", "projects/p1"], &[]).await;
    assert_eq!(code, Some(1), "{all}");
    assert!(all.contains("Response Code: 401"), "{all}");
    assert!(
        all.contains("this API requires authentication: send 'Authorization: Bearer <token>'"),
        "{all}"
    );
    let (code, all) = emcoctl_with(
        &target,
        &[
            "status",
            "projects/p1/composite-apps/ca/v1/deployment-intent-groups/d",
        ],
        &[],
    )
    .await;
    assert_eq!(code, Some(1), "{all}");
    assert!(
        all.contains("answered 401: this API requires authentication"),
        "{all}"
    );
    // A wrong token is refused by the API; a token a header cannot carry by emcoctl. Neither is ever printed.
    let (code, all) = emcoctl_with(&target, &["--token", "wrong-9d8e7f", "get", "projects"], &[]).await;
    assert_eq!(code, Some(1), "{all}");
    assert!(
        all.contains("the bearer token is not valid") && !all.contains("wrong-9d8e7f"),
        "{all}"
    );
    let (code, all) = emcoctl_with(&target, &["get", "projects"], &[("EMCO_TOKEN", "bad token-4c1a")]).await;
    assert_eq!(code, Some(2), "{all}");
    assert!(
        all.contains("the token holds characters") && !all.contains("4c1a"),
        "{all}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_targets_are_verified_with_the_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(&dir);
    let server = emco_server::Server::new(
        emco_store::Store::memory(),
        None,
        emco_server::ServerConfig::default(),
    );
    let options = emco_server::ServeOptions {
        tls: Some(
            emco_server::TlsConfig::from_pem_files(std::path::Path::new(&cert), std::path::Path::new(&key))
                .unwrap(),
        ),
        ..emco_server::ServeOptions::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = server.run_with(listener, options, std::future::pending()).await;
    });

    let trusted = emcoctl(&target, &["--ca-file", &ca, "get", "projects"]).await;
    let stdout = String::from_utf8_lossy(&trusted.stdout);
    assert_eq!(
        trusted.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    assert_eq!(
        stdout,
        format!("GET  --> URL: {target}/v2/projects\nResponse Code: 200\nResponse: []\n")
    );

    // Without --ca-file the system's CAs are used, and they do not know this one.
    let untrusted = emcoctl(&target, &["get", "projects"]).await;
    let stderr = String::from_utf8_lossy(&untrusted.stderr);
    assert_eq!(untrusted.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("GET {target}/v2/projects: "))
            && stderr.contains("invalid peer certificate: UnknownIssuer")
            && stderr.contains("give its CA with --ca-file"),
        "{stderr}"
    );

    // A --ca-file that is not a CA bundle is a command-line error naming it.
    let bad = emcoctl(&target, &["--ca-file", &key, "get", "projects"]).await;
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("--ca-file {key}: holds no PEM certificate")),
        "{stderr}"
    );
}

fn emcoctl_offline(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_emcoctl"))
        .args(args)
        .env_remove("EMCO_URL")
        .output()
        .unwrap()
}

#[test]
fn completion_scripts_and_man_pages_come_from_the_commands_themselves() {
    let commands = [
        "apply",
        "status",
        "rollback",
        "migrate",
        "resume",
        "completion",
        "man",
    ];
    let bash = emcoctl_offline(&["completion", "bash"]);
    assert!(bash.status.success());
    let script = String::from_utf8(bash.stdout).unwrap();
    for command in commands {
        assert!(script.contains(command), "bash completion lacks {command}");
    }
    assert!(
        script.contains("--target-version"),
        "subcommand flags are completed"
    );
    // bash itself parses the script.
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "emcoctl.bash", &script);
    let parsed = std::process::Command::new("bash")
        .args(["-n", &path])
        .output()
        .unwrap();
    assert!(
        parsed.status.success(),
        "{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = emcoctl_offline(&["completion", shell]);
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("migrate"),
            "{shell}"
        );
    }
    let unknown = emcoctl_offline(&["completion", "tcsh"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("tcsh"));

    let man = emcoctl_offline(&["man"]);
    assert!(man.status.success());
    let page = String::from_utf8(man.stdout).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH emcoctl 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    for command in commands {
        assert!(page.contains(command), "the man page lacks {command}");
    }
    let pages = dir.path().join("man1");
    let written = emcoctl_offline(&["man", "--dir", pages.to_str().unwrap()]);
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    for page in ["emcoctl.1", "emcoctl-status.1", "emcoctl-migrate.1"] {
        let text = std::fs::read_to_string(pages.join(page)).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
    let status_page = std::fs::read_to_string(pages.join("emcoctl-status.1")).unwrap();
    assert!(
        status_page.contains("until"),
        "the status page documents its flags"
    );
}
