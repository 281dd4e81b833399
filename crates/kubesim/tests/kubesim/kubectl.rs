//! The kubectl conformance checks of `reference/kube-api-subset.md` §7, run with the real `kubectl` against
//! kubesim. Each test prints a skip and passes only where no kubectl is installed.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use kubesim::{ClusterConfig, Credentials, Simulator};
use serde_json::Value as Json;
use tokio::io::AsyncWriteExt;

struct Kubectl {
    sim: Simulator,
    kubeconfig: PathBuf,
    dir: tempfile::TempDir,
}

struct Output {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Output {
    #[track_caller]
    fn expect_ok(self) -> Self {
        assert!(
            self.ok,
            "kubectl failed\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    fn expect_err(self, needle: &str) -> Self {
        assert!(!self.ok, "kubectl should have failed\nstdout: {}", self.stdout);
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}: {}",
            self.stderr
        );
        self
    }

    fn json(&self) -> Json {
        serde_json::from_str(&self.stdout).unwrap_or_else(|err| panic!("not JSON ({err}): {}", self.stdout))
    }
}

fn kubectl_path() -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("kubectl"))
        .find(|candidate| candidate.is_file())
}

impl Kubectl {
    /// A cluster with `nodes` nodes and kubectl pointed at it; `None` (after a printed skip) without kubectl.
    async fn start(nodes: usize) -> Option<Self> {
        if kubectl_path().is_none() {
            eprintln!("skipping kubectl conformance: no kubectl on PATH");
            return None;
        }
        let mut config = ClusterConfig::new("edge01");
        config.nodes = nodes;
        let sim = Simulator::start(vec![config]).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = sim.write_kubeconfigs(dir.path()).unwrap().remove(0);
        Some(Self { sim, kubeconfig, dir })
    }

    async fn run_with(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.run_as(&self.kubeconfig, args, stdin).await
    }

    /// Runs kubectl with another kubeconfig (another user).
    async fn run_as(&self, kubeconfig: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Output {
        let cache = self.dir.path().join("cache");
        let mut command = tokio::process::Command::new(kubectl_path().unwrap());
        command
            .arg(format!("--kubeconfig={}", kubeconfig.display()))
            .arg(format!("--cache-dir={}", cache.display()))
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().unwrap();
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(input.as_bytes()).await.unwrap();
        }
        let output = tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
            .await
            .expect("kubectl finished")
            .unwrap();
        Output {
            ok: output.status.success(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    async fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, None).await
    }

    async fn apply(&self, manifest: &str, extra: &[&str]) -> Output {
        let mut args = vec!["apply", "-f", "-"];
        args.extend_from_slice(extra);
        self.run_with(&args, Some(manifest)).await
    }
}

const CONFIGMAP: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  namespace: t1\ndata:\n  a: \"1\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_namespaces_and_configmap_crud() {
    let Some(k) = Kubectl::start(1).await else { return };
    // 1-3: version, resources, discovery consistency.
    let version = k.run(&["version", "-o", "json"]).await.expect_ok().json();
    assert_eq!(
        version["serverVersion"]["gitVersion"],
        kubesim::KubernetesVersion::NEWEST.git_version()
    );
    let resources = k.run(&["api-resources", "-o", "wide"]).await.expect_ok();
    assert!(
        resources.stdout.contains("deployments") && resources.stdout.contains("deploy"),
        "{}",
        resources.stdout
    );
    assert!(resources.stderr.is_empty(), "{}", resources.stderr);
    let groups = k.run(&["get", "--raw", "/apis"]).await.expect_ok().json();
    for group in groups["groups"].as_array().unwrap() {
        let gv = group["preferredVersion"]["groupVersion"].as_str().unwrap();
        k.run(&["get", "--raw", &format!("/apis/{gv}")]).await.expect_ok();
    }
    // 4: namespaces get their service account.
    k.run(&["create", "ns", "t1"]).await.expect_ok();
    assert_eq!(
        k.run(&["get", "ns", "t1", "-o", "jsonpath={.status.phase}"])
            .await
            .expect_ok()
            .stdout,
        "Active"
    );
    k.run(&["get", "sa", "default", "-n", "t1"]).await.expect_ok();
    // 5-7: apply twice, change, create again, missing object.
    assert!(
        k.apply(CONFIGMAP, &[])
            .await
            .expect_ok()
            .stdout
            .contains("created")
    );
    assert!(
        k.apply(CONFIGMAP, &[])
            .await
            .expect_ok()
            .stdout
            .contains("unchanged")
    );
    assert!(
        k.apply(&CONFIGMAP.replace("\"1\"", "\"2\""), &[])
            .await
            .expect_ok()
            .stdout
            .contains("configured")
    );
    k.run_with(&["create", "-f", "-"], Some(CONFIGMAP))
        .await
        .expect_err("AlreadyExists");
    k.run(&["get", "cm", "nope", "-n", "t1"])
        .await
        .expect_err("configmaps \"nope\" not found");
    // 8: replace with a stale copy conflicts.
    let stale = k
        .run(&["get", "cm", "demo", "-n", "t1", "-o", "json"])
        .await
        .expect_ok()
        .stdout;
    k.run(&["patch", "cm", "demo", "-n", "t1", "-p", r#"{"data":{"x":"1"}}"#])
        .await
        .expect_ok();
    k.run_with(&["replace", "-f", "-"], Some(&stale))
        .await
        .expect_err("the object has been modified");
    // 9: a JSON patch testing a missing path against null.
    k.run(&["patch", "cm", "demo", "-n", "t1", "--type=json", "-p", r#"[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["x/y"]}]"#])
        .await
        .expect_ok();
    // 23: the finalizer holds a delete until it is removed.
    k.run(&["delete", "cm", "demo", "-n", "t1", "--wait=false"])
        .await
        .expect_ok();
    assert!(
        !k.run(&[
            "get",
            "cm",
            "demo",
            "-n",
            "t1",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}"
        ])
        .await
        .expect_ok()
        .stdout
        .is_empty()
    );
    k.run(&[
        "patch",
        "cm",
        "demo",
        "-n",
        "t1",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ])
    .await
    .expect_ok();
    k.run(&["get", "cm", "demo", "-n", "t1"])
        .await
        .expect_err("NotFound");
    // 10: server-side apply, a conflict, forcing it, and both managers listed.
    let ssa = CONFIGMAP
        .replace("demo", "ssa")
        .replace("  a: \"1\"\n", "  a: \"1\"\n  b: \"2\"\n");
    assert!(
        k.apply(&ssa, &["--server-side"])
            .await
            .expect_ok()
            .stdout
            .contains("serverside-applied")
    );
    let changed = ssa.replace("\"1\"", "\"9\"");
    k.apply(&changed, &["--server-side", "--field-manager=other"])
        .await
        .expect_err("conflict");
    k.apply(
        &changed,
        &["--server-side", "--field-manager=other", "--force-conflicts"],
    )
    .await
    .expect_ok();
    let managed = k
        .run(&[
            "get",
            "cm",
            "ssa",
            "-n",
            "t1",
            "-o",
            "json",
            "--show-managed-fields",
        ])
        .await
        .expect_ok()
        .json();
    let managers: Vec<&str> = managed["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(
        managers.contains(&"other") && managers.iter().any(|m| m.starts_with("kubectl")),
        "{managers:?}"
    );
    // 18: pagination.
    // kubectl's imperative `create configmap` sends protobuf.
    k.run(&["create", "cm", "imperative", "-n", "t1", "--from-literal=k=v"])
        .await
        .expect_ok();
    assert_eq!(
        k.run(&["get", "cm", "imperative", "-n", "t1", "-o", "jsonpath={.data.k}"])
            .await
            .expect_ok()
            .stdout,
        "v"
    );
    k.run(&["create", "deployment", "imperative", "-n", "t1", "--image=nginx"])
        .await
        .expect_err("send JSON");
    let pages: String = (0..25)
        .map(|i| {
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: page-{i:02}\n  namespace: t1\n---\n")
        })
        .collect();
    k.apply(&pages, &[]).await.expect_ok();
    let page = k
        .run(&["get", "--raw", "/api/v1/namespaces/t1/configmaps?limit=10"])
        .await
        .expect_ok()
        .json();
    assert_eq!(page["items"].as_array().unwrap().len(), 10);
    assert!(
        !page["metadata"]["continue"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
            && page["metadata"]["resourceVersion"].is_string()
    );
    let chunked = k
        .run(&["get", "cm", "-n", "t1", "--chunk-size=10", "-o", "name"])
        .await
        .expect_ok();
    assert_eq!(
        chunked
            .stdout
            .lines()
            .filter(|l| l.starts_with("configmap/page-"))
            .count(),
        25
    );
    // 31: server-side dry run persists nothing; diff works.
    k.apply(&CONFIGMAP.replace("demo", "dry"), &["--dry-run=server"])
        .await
        .expect_ok();
    k.run(&["get", "cm", "dry", "-n", "t1"])
        .await
        .expect_err("NotFound");
    let diff = k.run_with(&["diff", "-f", "-"], Some(&ssa)).await;
    assert!(
        diff.stderr.is_empty() || !diff.stderr.contains("error"),
        "{}",
        diff.stderr
    );
    // 32: deleting the namespace removes it and its contents.
    k.run(&["delete", "ns", "t1", "--wait=false"]).await.expect_ok();
    k.run(&["wait", "--for=delete", "ns/t1", "--timeout=30s"])
        .await
        .expect_ok();
    k.run(&["get", "cm", "page-00", "-n", "t1"])
        .await
        .expect_err("NotFound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_watches_bookmarks_expiry_and_initial_events() {
    let Some(k) = Kubectl::start(1).await else { return };
    k.apply("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w1\n", &[])
        .await
        .expect_ok();
    let rv = k
        .run(&["get", "cm", "-o", "jsonpath={.metadata.resourceVersion}"])
        .await
        .expect_ok()
        .stdout;
    // 19: a watch from the list's revision, with bookmarks, ending after its timeout.
    let started = std::time::Instant::now();
    let watch = k.run(&["get", "--raw", &format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=2")]).await.expect_ok();
    assert!(started.elapsed() >= Duration::from_secs(2));
    let events: Vec<Json> = watch
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "BOOKMARK" && e["object"]["metadata"]["resourceVersion"].is_string()),
        "{}",
        watch.stdout
    );
    // 20: a revision the log no longer holds.
    let expired = k
        .run(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1",
        ])
        .await
        .expect_ok();
    let events: Vec<Json> = expired
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 1);
    assert_eq!(
        (
            events[0]["type"].as_str(),
            events[0]["object"]["code"].as_i64(),
            events[0]["object"]["reason"].as_str()
        ),
        (Some("ERROR"), Some(410), Some("Expired"))
    );
    // 21: streaming lists.
    let initial = k.run(&["get", "--raw", "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"]).await.expect_ok();
    let events: Vec<Json> = initial
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = events
        .iter()
        .position(|e| e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true")
        .expect("end-of-initial-events bookmark");
    assert!(
        events[..end].iter().all(|e| e["type"] == "ADDED") && end >= 2,
        "{}",
        initial.stdout
    );
    // 17: kubectl wait for a delete.
    let waiter = tokio::spawn({
        let kubeconfig = k.kubeconfig.clone();
        let cache = k.dir.path().join("cache-wait");
        async move {
            tokio::process::Command::new(kubectl_path().unwrap())
                .args([
                    &format!("--kubeconfig={}", kubeconfig.display()),
                    &format!("--cache-dir={}", cache.display()),
                    "wait",
                    "--for=delete",
                    "cm/w1",
                    "--timeout=20s",
                ])
                .output()
                .await
                .unwrap()
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    k.run(&["delete", "cm", "w1"]).await.expect_ok();
    assert!(waiter.await.unwrap().status.success());
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web, tier: front}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployments_roll_out_scale_and_cascade() {
    let Some(k) = Kubectl::start(2).await else { return };
    // 11-12: roll out.
    k.apply(DEPLOYMENT, &[]).await.expect_ok();
    assert!(
        k.run(&["rollout", "status", "deploy/web", "--timeout=60s"])
            .await
            .expect_ok()
            .stdout
            .contains("successfully rolled out")
    );
    let web = k
        .run(&["get", "deploy", "web", "-o", "json"])
        .await
        .expect_ok()
        .json();
    assert_eq!(web["metadata"]["generation"], web["status"]["observedGeneration"]);
    let listed = k
        .run(&["get", "rs,pods", "-l", "app=web", "-o", "json"])
        .await
        .expect_ok()
        .json();
    let items = listed["items"].as_array().unwrap();
    let rs: Vec<&Json> = items.iter().filter(|i| i["kind"] == "ReplicaSet").collect();
    assert_eq!(rs.len(), 1);
    let hash = rs[0]["metadata"]["labels"]["pod-template-hash"].as_str().unwrap();
    assert_eq!(rs[0]["metadata"]["name"], format!("web-{hash}"));
    assert_eq!(rs[0]["metadata"]["ownerReferences"][0]["kind"], "Deployment");
    for pod in items.iter().filter(|i| i["kind"] == "Pod") {
        assert_eq!(pod["status"]["phase"], "Running");
        assert!(pod["status"]["podIP"].is_string());
    }
    // 13: a new image is a new revision.
    k.run(&["set", "image", "deploy/web", "app=nginx:2"])
        .await
        .expect_ok();
    k.run(&["rollout", "status", "deploy/web", "--timeout=60s"])
        .await
        .expect_ok();
    let web = k
        .run(&["get", "deploy", "web", "-o", "json"])
        .await
        .expect_ok()
        .json();
    assert_eq!(
        (
            web["metadata"]["generation"].as_i64(),
            web["metadata"]["annotations"]["deployment.kubernetes.io/revision"].as_str()
        ),
        (Some(2), Some("2"))
    );
    let replica_sets = k
        .run(&["get", "rs", "-l", "app=web", "-o", "json"])
        .await
        .expect_ok()
        .json();
    let replicas: Vec<i64> = replica_sets["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rs| rs["spec"]["replicas"].as_i64().unwrap())
        .collect();
    assert_eq!(replicas.iter().filter(|r| **r == 0).count(), 1, "{replicas:?}");
    // 14: scale.
    k.run(&["scale", "deploy/web", "--replicas=5"]).await.expect_ok();
    k.run(&[
        "wait",
        "--for=jsonpath={.status.availableReplicas}=5",
        "deploy/web",
        "--timeout=30s",
    ])
    .await
    .expect_ok();
    // 15: selectors.
    let selected = k
        .run(&["get", "pods", "-l", "app in (web),tier!=db", "-o", "name"])
        .await
        .expect_ok();
    assert_eq!(selected.stdout.lines().count(), 5);
    assert_eq!(
        k.run(&["get", "pods", "-l", "!canary", "-o", "name"])
            .await
            .expect_ok()
            .stdout
            .lines()
            .count(),
        5
    );
    let running = k
        .run(&[
            "get",
            "pods",
            "--field-selector",
            "status.phase=Running,metadata.namespace=default",
            "-o",
            "name",
        ])
        .await
        .expect_ok();
    assert_eq!(running.stdout.lines().count(), 5);
    k.run(&["get", "pods", "--field-selector", "spec.foo=x"])
        .await
        .expect_err("field label not supported");
    // 16: a watch sees pods come and go.
    let mut watch = tokio::process::Command::new(kubectl_path().unwrap())
        .args([
            &format!("--kubeconfig={}", k.kubeconfig.display()),
            &format!("--cache-dir={}", k.dir.path().join("cache-w").display()),
            "get",
            "pods",
            "-w",
            "--output-watch-events",
        ])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    k.run(&["scale", "deploy/web", "--replicas=2"]).await.expect_ok();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    watch.start_kill().unwrap();
    let seen = String::from_utf8_lossy(&watch.wait_with_output().await.unwrap().stdout).into_owned();
    assert!(seen.contains("ADDED") && seen.contains("DELETED"), "{seen}");
    // 22: cascades.
    k.run(&["delete", "deploy", "web"]).await.expect_ok();
    k.run(&["wait", "--for=delete", "pods", "-l", "app=web", "--timeout=30s"])
        .await
        .expect_ok();
    assert!(
        k.run(&["get", "rs", "-l", "app=web", "-o", "name"])
            .await
            .expect_ok()
            .stdout
            .trim()
            .is_empty()
    );
    k.apply(DEPLOYMENT, &[]).await.expect_ok();
    k.run(&["rollout", "status", "deploy/web", "--timeout=60s"])
        .await
        .expect_ok();
    k.run(&["delete", "deploy", "web", "--cascade=orphan"])
        .await
        .expect_ok();
    let orphans = k
        .run(&["get", "rs", "-l", "app=web", "-o", "json"])
        .await
        .expect_ok()
        .json();
    assert_eq!(orphans["items"].as_array().unwrap().len(), 1);
    assert!(
        orphans["items"][0]["metadata"]["ownerReferences"].is_null(),
        "{}",
        orphans["items"][0]["metadata"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_jobs_failures_and_daemonsets() {
    let Some(k) = Kubectl::start(2).await else { return };
    // 24-26: CRDs.
    let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names:\n    plural: widgets\n    singular: widget\n    kind: Widget\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    subresources:\n      status: {}\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n";
    k.apply(crd, &[]).await.expect_ok();
    k.run(&[
        "wait",
        "--for",
        "condition=established",
        "crd/widgets.example.com",
        "--timeout=10s",
    ])
    .await
    .expect_ok();
    assert!(
        k.run(&["api-resources", "--api-group=example.com"])
            .await
            .expect_ok()
            .stdout
            .contains("widgets")
    );
    let widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 1\n";
    k.apply(widget, &[]).await.expect_ok();
    assert!(
        k.apply(&widget.replace("size: 1", "size: 2"), &[])
            .await
            .expect_ok()
            .stdout
            .contains("configured")
    );
    let generation = k
        .run(&["get", "widget", "w1", "-o", "jsonpath={.metadata.generation}"])
        .await
        .expect_ok()
        .stdout;
    k.run(&[
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"ok":true}}"#,
    ])
    .await
    .expect_ok();
    k.run(&[
        "patch",
        "widget",
        "w1",
        "--type=merge",
        "-p",
        r#"{"status":{"ok":false}}"#,
    ])
    .await
    .expect_ok();
    let w1 = k
        .run(&["get", "widget", "w1", "-o", "json"])
        .await
        .expect_ok()
        .json();
    assert_eq!(w1["status"]["ok"], true);
    assert_eq!(w1["metadata"]["generation"].to_string(), generation);
    k.run(&["delete", "crd", "widgets.example.com"]).await.expect_ok();
    // A fresh discovery cache: kubectl keeps discovery for hours otherwise.
    let fresh = format!("--cache-dir={}", k.dir.path().join("cache-after-crd").display());
    k.run(&[&fresh, "get", "widgets"])
        .await
        .expect_err("the server doesn't have a resource type \"widgets\"");
    // 27: a job completes.
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: pi\n        image: perl:5\n";
    k.apply(job, &[]).await.expect_ok();
    k.run(&["wait", "--for=condition=complete", "job/pi", "--timeout=60s"])
        .await
        .expect_ok();
    assert_eq!(
        k.run(&["get", "job", "pi", "-o", "jsonpath={.status.succeeded}"])
            .await
            .expect_ok()
            .stdout,
        "1"
    );
    // 28: an image that cannot be pulled stalls the rollout past its deadline.
    let bad = DEPLOYMENT
        .replace("name: web", "name: bad")
        .replace("nginx:1.27", "registry.local/doesnotexist:1")
        .replace("replicas: 3", "replicas: 1\n  progressDeadlineSeconds: 2");
    k.apply(&bad, &[]).await.expect_ok();
    k.run(&["rollout", "status", "deploy/bad", "--timeout=30s"])
        .await
        .expect_err("exceeded its progress deadline");
    let pods = k
        .run(&["get", "pods", "-l", "app=web", "-o", "json"])
        .await
        .expect_ok()
        .json();
    assert_eq!(
        pods["items"][0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "ImagePullBackOff"
    );
    // 29: unschedulable.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nowhere\nspec:\n  nodeSelector: {x: none}\n  containers:\n  - name: app\n    image: nginx:1.27\n";
    k.apply(pod, &[]).await.expect_ok();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let reason = k
        .run(&[
            "get",
            "pod",
            "nowhere",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}"#,
        ])
        .await
        .expect_ok()
        .stdout;
    assert_eq!(reason, "Unschedulable");
    assert_eq!(
        k.run(&["get", "pod", "nowhere", "-o", "jsonpath={.status.phase}"])
            .await
            .expect_ok()
            .stdout,
        "Pending"
    );
    // 30: a DaemonSet runs one pod per node.
    let ds = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector:\n    matchLabels: {app: agent}\n  template:\n    metadata:\n      labels: {app: agent}\n    spec:\n      containers:\n      - name: agent\n        image: busybox:1\n";
    k.apply(ds, &[]).await.expect_ok();
    k.run(&["rollout", "status", "ds/agent", "--timeout=60s"])
        .await
        .expect_ok();
    assert_eq!(
        k.run(&[
            "get",
            "ds",
            "agent",
            "-o",
            "jsonpath={.status.desiredNumberScheduled}"
        ])
        .await
        .expect_ok()
        .stdout,
        "2"
    );
}

const POD_READER_IN_T1: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: t1
---
apiVersion: v1
kind: Namespace
metadata:
  name: t2
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-reader
  namespace: t1
rules:
- apiGroups: [\"\"]
  resources: [pods]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: pod-readers
  namespace: t1
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: pod-reader
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: alice
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: readers
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_users_bound_by_roles_and_kubernetes_denials() {
    let Some(kubectl) = Kubectl::start(1).await else {
        return;
    };
    let cluster = &kubectl.sim.clusters()[0];
    assert!(cluster.url().starts_with("https://"));
    // The admin kubeconfig: the cluster's CA and a system:masters client certificate.
    kubectl.apply(POD_READER_IN_T1, &[]).await.expect_ok();
    let roles = kubectl
        .run(&["get", "roles", "-n", "t1", "-o", "json"])
        .await
        .expect_ok()
        .json();
    assert_eq!(roles["items"][0]["metadata"]["name"], "pod-reader");

    let write = |name: &str, text: String| {
        let path = kubectl.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let alice = write(
        "alice.yaml",
        cluster.kubeconfig_for(
            "alice",
            &Credentials::Certificate(cluster.issue_client_certificate("alice", None).unwrap()),
        ),
    );
    let listed = kubectl
        .run_as(&alice, &["get", "pods", "-n", "t1", "-o", "json"], None)
        .await
        .expect_ok();
    assert_eq!(listed.json()["items"], serde_json::json!([]));
    kubectl
        .run_as(&alice, &["get", "pods", "-n", "t2"], None)
        .await
        .expect_err("Error from server (Forbidden): pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"t2\"");
    kubectl
        .run_as(&alice, &["get", "configmap", "settings", "-n", "t1"], None)
        .await
        .expect_err("Error from server (Forbidden): configmaps \"settings\" is forbidden: User \"alice\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"t1\"");

    cluster.add_token("readers-token", "bob", &["readers"]);
    let bob = write(
        "bob.yaml",
        cluster.kubeconfig_for("bob", &Credentials::Token("readers-token".into())),
    );
    kubectl
        .run_as(&bob, &["get", "pods", "-n", "t1"], None)
        .await
        .expect_ok();
    kubectl
        .run_as(&bob, &["get", "nodes"], None)
        .await
        .expect_err("nodes is forbidden: User \"bob\" cannot list resource \"nodes\" in API group \"\" at the cluster scope");

    // A certificate signing request approved with kubectl is signed; its certificate authenticates its user.
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, "erin");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "readers");
    let request = params.serialize_request(&key).unwrap().pem().unwrap();
    let manifest = format!(
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: erin\nspec:\n  request: {}\n  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &request)
    );
    kubectl.apply(&manifest, &[]).await.expect_ok();
    kubectl.run(&["certificate", "approve", "erin"]).await.expect_ok();
    let csr = kubectl
        .run(&["get", "csr", "erin", "-o", "json"])
        .await
        .expect_ok()
        .json();
    assert_eq!(csr["status"]["conditions"][0]["type"], "Approved", "{csr}");
    let certificate = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        csr["status"]["certificate"].as_str().unwrap(),
    )
    .unwrap();
    let erin = write(
        "erin.yaml",
        cluster.kubeconfig_for(
            "erin",
            &Credentials::Certificate(kubesim::ClientCredentials {
                certificate_pem: String::from_utf8(certificate).unwrap(),
                key_pem: key.serialize_pem(),
            }),
        ),
    );
    kubectl
        .run_as(&erin, &["get", "pods", "-n", "t1"], None)
        .await
        .expect_ok();
    kubectl
        .run_as(&erin, &["get", "pods", "-n", "t2"], None)
        .await
        .expect_err("pods is forbidden: User \"erin\" cannot list resource \"pods\" in API group \"\" in the namespace \"t2\"");

    let stranger = write(
        "stranger.yaml",
        cluster.kubeconfig_for("stranger", &Credentials::Token("not-a-token".into())),
    );
    kubectl
        .run_as(&stranger, &["get", "pods"], None)
        .await
        .expect_err("Unauthorized");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_can_i_answers_from_rbac_for_a_user_kubeconfig_and_with_as() {
    let Some(kubectl) = Kubectl::start(1).await else {
        return;
    };
    let cluster = &kubectl.sim.clusters()[0];
    kubectl.apply(POD_READER_IN_T1, &[]).await.expect_ok();
    let alice = kubectl.dir.path().join("alice.yaml");
    std::fs::write(
        &alice,
        cluster.kubeconfig_for(
            "alice",
            &Credentials::Certificate(cluster.issue_client_certificate("alice", None).unwrap()),
        ),
    )
    .unwrap();
    let can_i = |kubeconfig: std::path::PathBuf, args: Vec<&'static str>| {
        let kubectl = &kubectl;
        async move {
            let mut full = vec!["auth", "can-i"];
            full.extend(args);
            kubectl.run_as(&kubeconfig, &full, None).await
        }
    };
    // With alice's own kubeconfig: yes where her Role allows, no elsewhere (kubectl exits 1 on no).
    let yes = can_i(alice.clone(), vec!["list", "pods", "-n", "t1"])
        .await
        .expect_ok();
    assert_eq!(yes.stdout.trim(), "yes");
    let no = can_i(alice.clone(), vec!["create", "pods", "-n", "t1"]).await;
    assert!(!no.ok);
    assert_eq!(no.stdout.trim(), "no");
    let elsewhere = can_i(alice.clone(), vec!["get", "pods", "-n", "t2"]).await;
    assert_eq!(elsewhere.stdout.trim(), "no");
    // The admin asking as alice gets the same answers.
    let admin = kubectl.kubeconfig.clone();
    let as_alice = can_i(admin.clone(), vec!["list", "pods", "-n", "t1", "--as", "alice"])
        .await
        .expect_ok();
    assert_eq!(as_alice.stdout.trim(), "yes");
    let as_alice = can_i(admin.clone(), vec!["create", "pods", "-n", "t1", "--as", "alice"]).await;
    assert_eq!(as_alice.stdout.trim(), "no");
    let itself = can_i(admin.clone(), vec!["create", "pods", "-n", "t1"])
        .await
        .expect_ok();
    assert_eq!(itself.stdout.trim(), "yes");
    // A binding changes the answer.
    kubectl
        .apply(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: alice-edits\n  namespace: t1\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n- kind: User\n  name: alice\n",
            &[],
        )
        .await
        .expect_ok();
    let now = can_i(alice.clone(), vec!["create", "pods", "-n", "t1"])
        .await
        .expect_ok();
    assert_eq!(now.stdout.trim(), "yes");
    // Her rules, listed.
    let listed = can_i(alice.clone(), vec!["--list", "-n", "t2"]).await.expect_ok();
    assert!(
        listed
            .stdout
            .contains("selfsubjectaccessreviews.authorization.k8s.io"),
        "{}",
        listed.stdout
    );
    assert!(!listed.stdout.contains("pods "), "{}", listed.stdout);
    // Who she is, and who the admin acts as.
    let whoami = kubectl
        .run_as(&alice, &["auth", "whoami", "-o", "json"], None)
        .await
        .expect_ok()
        .json();
    assert_eq!(
        whoami["status"]["userInfo"],
        serde_json::json!({"username": "alice", "groups": ["system:authenticated"]})
    );
    let acting = kubectl
        .run(&[
            "auth",
            "whoami",
            "--as",
            "alice",
            "--as-group",
            "team",
            "-o",
            "json",
        ])
        .await
        .expect_ok()
        .json();
    assert_eq!(
        acting["status"]["userInfo"]["groups"],
        serde_json::json!(["team", "system:authenticated"])
    );
    // Alice may not act as someone else.
    can_i(alice, vec!["get", "pods", "--as", "bob"])
        .await
        .expect_err("users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compute_quotas_refuse_pods_with_kubernetes_messages_through_kubectl() {
    let Some(kubectl) = Kubectl::start(1).await else {
        return;
    };
    kubectl
        .apply(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: t1\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\n  namespace: t1\nspec:\n  hard:\n    requests.cpu: 1200m\n    limits.cpu: \"2\"\n    pods: \"5\"\n",
            &[],
        )
        .await
        .expect_ok();
    let pod = |name: &str, resources: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: t1\nspec:\n  containers:\n  - name: c1\n    image: registry.local/x:1\n    resources: {resources}\n"
        )
    };
    let half = "{requests: {cpu: 500m}, limits: {cpu: 500m}}";
    kubectl.apply(&pod("a", half), &[]).await.expect_ok();
    kubectl.apply(&pod("b", half), &[]).await.expect_ok();
    kubectl
        .apply(&pod("p", half), &[])
        .await
        .expect_err("pods \"p\" is forbidden: exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1200m");
    kubectl
        .apply(&pod("c", "{requests: {cpu: 100m}}"), &[])
        .await
        .expect_err("pods \"c\" is forbidden: failed quota: q: must specify limits.cpu for: c1");
    // `kubectl create quota` (sent as protobuf) limits too.
    kubectl
        .run(&[
            "create",
            "quota",
            "few",
            "-n",
            "t1",
            "--hard=pods=2,limits.memory=1Gi",
        ])
        .await
        .expect_ok();
    kubectl
        .apply(&pod("m", half), &[])
        .await
        .expect_err("pods \"m\" is forbidden: failed quota: few: must specify limits.memory for: c1");
    // kubectl shows what is used against each limit.
    let mut shown = String::new();
    for _ in 0..100 {
        shown = kubectl
            .run(&["get", "quota", "q", "-n", "t1"])
            .await
            .expect_ok()
            .stdout;
        if shown.contains("requests.cpu: 1/1200m") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        shown.contains("pods: 2/5, requests.cpu: 1/1200m") && shown.contains("limits.cpu: 1/2"),
        "{shown}"
    );
    // A Deployment whose pod a quota refuses: kubectl describe shows the ReplicaSet's condition and event.
    kubectl
        .apply(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: t1\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: main\n        image: registry.local/web:1\n        resources: {limits: {cpu: 100m, memory: 64Mi}}\n",
            &[],
        )
        .await
        .expect_ok();
    let mut described = String::new();
    for _ in 0..100 {
        described = kubectl
            .run(&["describe", "rs", "-n", "t1", "-l", "app=web"])
            .await
            .expect_ok()
            .stdout;
        if described.contains("ReplicaFailure") && described.contains("Warning  FailedCreate") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        described.contains("ReplicaFailure   True    FailedCreate")
            && described.contains(
                "is forbidden: exceeded quota: few, requested: pods=1, used: pods=2, limited: pods=2"
            ),
        "{described}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reaches_clusters_behind_one_listener_by_server_name_over_http2() {
    if kubectl_path().is_none() {
        eprintln!("skipping kubectl conformance: no kubectl on PATH");
        return;
    }
    let listener = kubesim::server::SharedListener::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let sim = Simulator::start_shared(
        vec![ClusterConfig::new("edge01"), ClusterConfig::new("edge02")],
        &listener,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfigs = sim.write_kubeconfigs(dir.path()).unwrap();
    let k = Kubectl {
        sim,
        kubeconfig: kubeconfigs[0].clone(),
        dir,
    };
    k.apply(CONFIGMAP, &[])
        .await
        .expect_err("namespaces \"t1\" not found");
    k.run(&["create", "namespace", "t1"]).await.expect_ok();
    k.apply(CONFIGMAP, &[]).await.expect_ok();
    let on_edge01 = k
        .run(&["get", "configmap", "demo", "-n", "t1", "-o", "json"])
        .await
        .expect_ok()
        .json();
    assert_eq!(on_edge01["data"]["a"], "1");
    k.run_as(&kubeconfigs[1], &["get", "namespace", "t1"], None)
        .await
        .expect_err("not found");
    let requests = k.sim.clusters()[0].shared().requests();
    assert!(!requests.is_empty());
    assert!(
        requests.iter().all(|r| r.version == http::Version::HTTP_2),
        "kubectl speaks HTTP/2 when the server offers it: {:?}",
        requests.iter().map(|r| r.version).collect::<Vec<_>>()
    );
    assert_eq!(k.sim.clusters()[1].writes(), 0);
}
