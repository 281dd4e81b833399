//! The web page in Chromium (issue #19 §4): headless Chromium driven over WebDriver (a local chromedriver,
//! spoken to with the e2e's own HTTP client: the protocol is a few JSON calls). The demo's DIG shows edge01 and
//! edge02 Ready; a pod failing in kubesim turns its cell failed without a reload and the cell's detail names the
//! pod's failure; a cluster whose monitor stopped turns stale. A generated answer of 1,000 clusters renders one
//! page of cells, filters and pages; behind authentication the page asks for the token and then works.
//!
//! Skipped (with the reason printed) when chromium or chromedriver is missing, unless `EMCO_REQUIRE_BROWSER=1`.
//! With `EMCO_UI_SCREENSHOT=<file.png>` the DIG view is saved there (how `docs/ui.png` is made).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_monitor::MonitorConfig;
use emco_server::{ServerConfig, TokenAuth};
use emco_store::Store;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value as Json, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(30);
/// How long the page may take to show what the API already answers (it streams, or polls every second).
const PAGE_FOLLOWS: Duration = Duration::from_secs(2);
/// How long a navigation or a click may take to show its result.
const PAGE_LOADS: Duration = Duration::from_secs(10);

/// The first of `names` found on `PATH`, or the path in `variable` when set (`None` when that is no file).
fn find_program(variable: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable) {
        return Some(PathBuf::from(path)).filter(|path| path.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Chromium and chromedriver, or `None` (after saying why) when the test should skip.
fn browser_programs() -> Option<(PathBuf, PathBuf)> {
    let chromium = find_program(
        "EMCO_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    );
    let driver = find_program("EMCO_CHROMEDRIVER", &["chromedriver"]);
    match (chromium, driver) {
        (Some(chromium), Some(driver)) => Some((chromium, driver)),
        (chromium, driver) => {
            let missing = [
                chromium.is_none().then_some("chromium"),
                driver.is_none().then_some("chromedriver"),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" and ");
            assert!(
                std::env::var("EMCO_REQUIRE_BROWSER").as_deref() != Ok("1"),
                "EMCO_REQUIRE_BROWSER=1 but {missing} is not installed (apt-get install chromium chromium-driver)"
            );
            eprintln!(
                "skipped: {missing} not found (apt-get install chromium chromium-driver to run the browser tests)"
            );
            None
        }
    }
}

/// One WebDriver call: its status and JSON answer. chromedriver keeps the connection open whatever the request
/// says, so the answer is read by its `Content-Length`, not to the end of the stream.
async fn webdriver_call(driver: SocketAddr, method: &str, path: &str, body: &Json) -> (u16, Json) {
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let mut stream = tokio::net::TcpStream::connect(driver).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {driver}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = vec![0_u8; 64 * 1024];
    let (head_end, length) = loop {
        let read = stream.read(&mut buffer).await.unwrap();
        assert!(
            read > 0,
            "chromedriver closed the connection: {}",
            String::from_utf8_lossy(&received)
        );
        received.extend_from_slice(&buffer[..read]);
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&received[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length);
        }
    };
    while received.len() < head_end + length {
        let read = stream.read(&mut buffer).await.unwrap();
        assert!(read > 0, "chromedriver closed the connection mid-answer");
        received.extend_from_slice(&buffer[..read]);
    }
    let status = String::from_utf8_lossy(&received[..head_end])
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let answer = serde_json::from_slice(&received[head_end..head_end + length]).unwrap_or(Json::Null);
    (status, answer)
}

/// A headless Chromium session behind a chromedriver of its own. chromedriver runs in a process group of its own,
/// with the Chromium it starts; dropping the session kills the group, so a failed test leaves no browser behind.
struct Browser {
    driver: SocketAddr,
    session: String,
    process: tokio::process::Child,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(pid) = self.process.id() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

impl Browser {
    async fn start(chromium: &std::path::Path, chromedriver: &std::path::Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = tokio::process::Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .unwrap();
        let driver = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = tokio::time::Instant::now() + PAGE_LOADS;
        loop {
            if tokio::net::TcpStream::connect(driver).await.is_ok()
                && webdriver_call(driver, "GET", "/status", &Json::Null).await.1["value"]["ready"] == true
            {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "chromedriver did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1400,900", "--no-first-run", "--no-default-browser-check",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        }}});
        let (_, answer) = webdriver_call(driver, "POST", "/session", &capabilities).await;
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {answer}"))
            .to_string();
        Self {
            driver,
            session,
            process,
            _profile: profile,
        }
    }

    /// A WebDriver command's `value`; panics with the driver's message when it fails.
    async fn command(&self, method: &str, path: &str, body: Json) -> Json {
        let path = format!("/session/{}{path}", self.session);
        let (status, answer) = webdriver_call(self.driver, method, &path, &body).await;
        assert_eq!(status, 200, "WebDriver {method} {path}: {answer}");
        answer["value"].clone()
    }

    async fn goto(&self, url: &str) {
        self.command("POST", "/url", json!({"url": url})).await;
    }

    /// Runs `script` (a function body: `arguments[i]` are `args`) in the page and returns what it returns.
    async fn execute(&self, script: &str, args: Json) -> Json {
        self.command("POST", "/execute/sync", json!({"script": script, "args": args}))
            .await
    }

    /// Polls `script` until it returns something other than null or false (or panics after `timeout`, naming
    /// `what` and the last value).
    async fn wait_for(&self, what: &str, timeout: Duration, script: &str, args: Json) -> Json {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let value = self.execute(script, args.clone()).await;
            if !(value.is_null() || value == false) {
                return value;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the page did not show {what} within {timeout:?}; {}",
                self.execute(DESCRIBE_PAGE, json!([])).await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The WebDriver reference of the element `css` selects.
    async fn find(&self, css: &str) -> String {
        let value = self
            .command("POST", "/element", json!({"using": "css selector", "value": css}))
            .await;
        value
            .as_object()
            .and_then(|reference| reference.values().next())
            .and_then(Json::as_str)
            .unwrap_or_else(|| panic!("no element reference for {css}: {value}"))
            .to_string()
    }

    async fn click(&self, css: &str) {
        self.on_element(css, "click", json!({})).await;
    }

    async fn type_into(&self, css: &str, text: &str) {
        self.on_element(css, "value", json!({"text": text})).await;
    }

    /// Finds `css` and sends it `action`. The page redraws its grid when a new answer streams in, so an element
    /// found a moment ago may be gone (stale) or not laid out yet (not interactable): then it is found again (a few
    /// times, a moment apart) and the action sent to the new one.
    async fn on_element(&self, css: &str, action: &str, body: Json) {
        for _ in 0..5 {
            let element = self.find(css).await;
            let path = format!("/session/{}/element/{element}/{action}", self.session);
            let (status, answer) = webdriver_call(self.driver, "POST", &path, &body).await;
            if status == 200 {
                return;
            }
            let error = answer["value"]["error"].as_str().unwrap_or_default();
            assert!(
                matches!(error, "stale element reference" | "element not interactable"),
                "WebDriver POST {path}: {answer}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{css} was redrawn under every attempt to {action} it");
    }

    async fn screenshot(&self) -> Vec<u8> {
        let value = self.command("GET", "/screenshot", Json::Null).await;
        base64::engine::general_purpose::STANDARD
            .decode(value.as_str().unwrap())
            .unwrap()
    }

    async fn quit(self) {
        self.command("DELETE", "", Json::Null).await;
    }
}

/// What a failed wait shows: the live line, the counts and every cell's state.
const DESCRIBE_PAGE: &str = "return 'live: ' + (document.getElementById('live') || {}).textContent \
    + '; counts: ' + ((document.getElementById('counts') || {}).textContent || '-') \
    + '; cells: ' + [...document.querySelectorAll('button.cell')].slice(0, 12) \
        .map(c => c.dataset.app + '@' + c.dataset.cluster + '=' + c.dataset.state).join(' ') \
    + '; main: ' + document.getElementById('main').textContent.slice(0, 400);";

/// The states of every cell of `cluster`, as `app=state` (null while there is none).
const CELLS_OF_CLUSTER: &str = "const cells = [...document.querySelectorAll('button.cell')] \
    .filter(c => c.dataset.cluster === arguments[0]); \
    return cells.length ? cells.map(c => c.dataset.app + '=' + c.dataset.state).join(' ') : null;";

/// The state of the cell of (`arguments[0]` app, `arguments[1]` cluster), when it is `arguments[2]`.
const CELL_IS: &str = "const c = [...document.querySelectorAll('button.cell')] \
    .find(c => c.dataset.app === arguments[0] && c.dataset.cluster === arguments[1]); \
    return c && c.dataset.state === arguments[2] ? c.dataset.state : null;";

/// Whether every cell of cluster `arguments[0]` is in state `arguments[1]`.
const ALL_CELLS_ARE: &str = "const cells = [...document.querySelectorAll('button.cell')] \
    .filter(c => c.dataset.cluster === arguments[0]); \
    return cells.length > 0 && cells.every(c => c.dataset.state === arguments[1]);";

fn cell_selector(app: &str, cluster: &str) -> String {
    format!(r#"button.cell[data-app="{app}"][data-cluster="{cluster}"]"#)
}

/// Whether `answer` (`status=ready`) shows a resource of `app` on `cluster` whose condition says Failed.
fn failed_on(answer: &Json, app: &str, cluster: &str) -> bool {
    answer["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["name"] == app)
        .flat_map(|a| a["clusters"].as_array().into_iter().flatten())
        .filter(|c| c["cluster"] == cluster)
        .flat_map(|c| c["resources"].as_array().into_iter().flatten())
        .any(|r| {
            r["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["reason"] == "Failed")
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_the_dig_grid_live_failures_and_stale_clusters() {
    let Some((chromium, chromedriver)) = browser_programs() else {
        return;
    };
    let sim = vfw_clusters(2).await;
    let heartbeating = MonitorConfig {
        heartbeat: Duration::from_secs(1),
        ..quick_monitor_config()
    };
    let monitors = Monitors(
        sim.clusters()
            .iter()
            .map(|cluster| start_monitor_with(cluster, heartbeating.clone()))
            .collect(),
    );
    let emco = Emco::start_with_configs(
        Store::memory(),
        test_rsync_config(),
        ServerConfig {
            status_grace: Duration::from_secs(3),
            ..ServerConfig::default()
        },
    )
    .await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?status=ready", SETTLE, |a| a["readyStatus"] == "Ready")
        .await;
    // A pull cluster whose agent never came, beside the two direct ones.
    emco.http
        .post_form(
            "/v2/cluster-providers/vfw-cluster-provider/clusters",
            json!({"metadata": {"name": "site9"}, "spec": {"pull": {}}}),
            b"",
        )
        .await
        .expect(201);

    let browser = Browser::start(&chromium, &chromedriver).await;
    browser.goto(&format!("http://{}/ui/", emco.http.address)).await;
    // Home: the project, its composite app and DIG with its state badge, the clusters.
    browser
        .wait_for(
            "the DIG's link with a Ready badge",
            PAGE_LOADS,
            "const a = document.querySelector('a[href^=\"#/dig/\"]'); \
             return a && a.parentElement.textContent.includes('Ready') ? a.textContent : null;",
            json!([]),
        )
        .await;
    let home = browser
        .execute("return document.getElementById('main').textContent;", json!([]))
        .await;
    let home = home.as_str().unwrap();
    for name in [
        "testvfw",
        "compositevfw",
        "vfw-cluster-provider",
        "edge01",
        "edge02",
    ] {
        assert!(home.contains(name), "the home page names {name}: {home}");
    }
    // Each cluster says how emco reaches it.
    for line in ["edge01 direct", "edge02 direct", "site9 pull · agent not seen"] {
        assert!(home.contains(line), "the home page says '{line}': {home}");
    }
    browser.click(r##"a[href^="#/dig/"]"##).await;

    // The grid: every app Ready on both clusters, and the counts say so.
    for cluster in ["edge01", "edge02"] {
        browser
            .wait_for(
                &format!("{cluster} Ready"),
                PAGE_LOADS,
                ALL_CELLS_ARE,
                json!([cluster, "ready"]),
            )
            .await;
        let cells = browser.execute(CELLS_OF_CLUSTER, json!([cluster])).await;
        for app in APPS {
            assert!(
                cells.as_str().unwrap().contains(&format!("{app}=ready")),
                "{cluster}: {cells}"
            );
        }
    }
    let counts = browser
        .execute(
            "return document.getElementById('clusters-ready').textContent;",
            json!([]),
        )
        .await;
    assert_eq!(counts, "2/2 clusters ready");
    let history = browser
        .execute(
            "return document.getElementById('history').textContent;",
            json!([]),
        )
        .await;
    assert!(
        history.as_str().unwrap().contains("Instantiated"),
        "the action history: {history}"
    );

    // Keyboard: a cell is a button; Enter opens its detail.
    browser
        .type_into(&cell_selector("firewall", "edge01"), "\u{E007}")
        .await;
    browser
        .wait_for(
            "firewall on edge01's detail after Enter",
            PAGE_LOADS,
            "const d = document.getElementById('detail'); \
             return d.querySelector('h2') && d.querySelector('h2').textContent === 'firewall on edge01' \
                 && d.querySelector('#detail-resources') ? true : null;",
            json!([]),
        )
        .await;

    // The grid follows the status stream (server-sent events), not polling.
    browser
        .wait_for(
            "the live indicator to say the page streams",
            PAGE_LOADS,
            "const t = document.getElementById('live').textContent; \
             return t.startsWith('live: streaming') ? t : null;",
            json!([]),
        )
        .await;

    // A status collector attached to the DIG shows as a combined-status table, live.
    emco.http
        .post(
            "/v2/projects/testvfw/status-collectors",
            json!({"metadata": {"name": "count-clusters"},
                "spec": {"combinedFields": [{"name": "clusters", "type": "COUNT"}]}}),
        )
        .await
        .expect(201);
    emco.http
        .post(
            &format!("{DIG}/status-collection-intents"),
            json!({"metadata": {"name": "sink"}, "spec": {"app": "sink",
                "resources": [{"kind": "Deployment", "name": "fw0-sink"}], "statusCollectors": ["count-clusters"]}}),
        )
        .await
        .expect(201);
    let counted = browser
        .wait_for(
            "the count-clusters table of fw0-sink",
            PAGE_LOADS,
            "const f = document.querySelector('#combined figure[data-collector=\"count-clusters\"]'); \
             return f && f.querySelector('td') && f.dataset.object === 'fw0-sink+Deployment' \
                 ? [f.querySelector('figcaption').textContent, f.querySelector('th').textContent, \
                    f.querySelector('td').textContent] : null;",
            json!([]),
        )
        .await;
    assert_eq!(
        counted,
        json!(["sink · Deployment fw0-sink · count-clusters", "clusters", "2"])
    );

    // The sink's pods crash on edge01: once the API says so, the page shows it without a reload.
    browser
        .execute("window.emcoNoReload = true; return true;", json!([]))
        .await;
    let edge01 = &sim.clusters()[0];
    assert_eq!(edge01.name(), "edge01");
    Api::<Deployment>::namespaced(edge01.client().unwrap(), "default")
        .patch(
            "fw0-sink",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"metadata": {"annotations": {"kubesim.io/fail": "CrashLoopBackOff"}}}}})),
        )
        .await
        .unwrap();
    emco.http
        .wait_for("?status=ready&app=sink", SETTLE, |a| {
            failed_on(a, "sink", "edge01")
        })
        .await;
    browser
        .wait_for(
            "sink on edge01 failed",
            PAGE_FOLLOWS,
            CELL_IS,
            json!(["sink", "edge01", "failed"]),
        )
        .await;
    let not_reloaded = browser
        .execute("return window.emcoNoReload === true;", json!([]))
        .await;
    assert_eq!(not_reloaded, true, "the page was reloaded");
    let counts = browser
        .execute("return document.getElementById('counts').textContent;", json!([]))
        .await;
    assert!(
        counts.as_str().unwrap().contains("1/2 clusters ready")
            && counts.as_str().unwrap().contains("Failed 1"),
        "{counts}"
    );

    // Its detail names the failing pod and why.
    browser.click(&cell_selector("sink", "edge01")).await;
    let detail = browser
        .wait_for(
            "the failing pod in sink on edge01's detail",
            PAGE_LOADS,
            "const d = document.getElementById('detail'); \
             const t = d.textContent; \
             return d.querySelector('h2') && d.querySelector('h2').textContent === 'sink on edge01' \
                 && t.includes('CrashLoopBackOff') ? t : null;",
            json!([]),
        )
        .await;
    let detail = detail.as_str().unwrap();
    assert!(detail.contains("Pod fw0-sink-"), "names the pod: {detail}");
    assert!(detail.contains("Applied"), "shows rsync's status: {detail}");
    if let Some(path) = std::env::var_os("EMCO_UI_SCREENSHOT") {
        std::fs::write(&path, browser.screenshot().await).unwrap();
        eprintln!("wrote the DIG view to {}", PathBuf::from(path).display());
    }

    // edge02's monitor stops: after the grace its cells are stale.
    let position = sim
        .clusters()
        .iter()
        .position(|cluster| cluster.name() == "edge02")
        .unwrap();
    monitors.0[position].abort();
    browser
        .wait_for("edge02 stale", SETTLE, ALL_CELLS_ARE, json!(["edge02", "stale"]))
        .await;
    let stale = browser
        .execute(
            "return document.querySelector('button.cell[data-cluster=\"edge02\"]').title;",
            json!([]),
        )
        .await;
    assert!(
        stale.as_str().unwrap().starts_with("no report from edge02"),
        "a stale cell says why: {stale}"
    );
    browser.quit().await;
}

/// A generated EMCO 22.x `status=ready` answer: `clusters` clusters × the vFW apps, every 100th cluster's sink
/// failed and every 250th cluster stale, the rest ready.
fn generated_answer(clusters: usize) -> Json {
    let entry = |index: usize, app: &str| {
        let name = format!("edge{index:04}");
        let mut entry = json!({
            "clusterProvider": "p", "cluster": name, "connectivity": "Available",
            "resources": [{"GVK": {"Group": "apps", "Version": "v1", "Kind": "Deployment"}, "name": app, "readyStatus": "Ready"}],
        });
        if index.is_multiple_of(250) {
            entry["statusFresh"] = json!(false);
            entry["statusMessage"] = json!(format!("no report from {name} for 60 s"));
        } else if index.is_multiple_of(100) && app == "sink" {
            entry["resources"][0]["readyStatus"] = json!("NotReady");
            entry["resources"][0]["conditions"] =
                json!([{"type": "Ready", "status": "False", "reason": "Failed", "message": "crashed"}]);
        }
        entry
    };
    json!({
        "name": "generated", "deployedStatus": "Instantiated", "readyStatus": "NotReady",
        "states": {"actions": [{"state": "Instantiated", "instance": "1", "time": "2026-01-01T00:00:00Z", "revision": 1}]},
        "apps": APPS.iter().map(|app| json!({
            "name": app,
            "clusters": (1..=clusters).map(|index| entry(index, app)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cells_detail_names_the_controllers_that_changed_its_objects() {
    let Some((chromium, chromedriver)) = browser_programs() else {
        return;
    };
    let example = crate::hpa::run_hpa_example().await;
    let browser = Browser::start(&chromium, &chromedriver).await;
    let dig = crate::hpa::DIG
        .trim_start_matches("/v2/projects/")
        .replace("/composite-apps/", "/")
        .replace("/deployment-intent-groups/", "/");
    browser
        .goto(&format!("http://{}/ui/#/dig/{dig}", example.emco.http.address))
        .await;
    browser
        .wait_for(
            "the client's cell on edge01",
            PAGE_LOADS,
            "return document.querySelector(arguments[0]) ? true : null;",
            json!([cell_selector("http-client", "edge01")]),
        )
        .await;
    browser.click(&cell_selector("http-client", "edge01")).await;
    let changed = browser
        .wait_for(
            "the client Deployment's row",
            PAGE_LOADS,
            "const row = document.querySelector('#detail-resources tr[data-kind=\"Deployment\"][data-name=\"r1-http-client\"]'); \
             return row ? row.querySelector('td.changed-by').textContent : null;",
            json!([]),
        )
        .await;
    assert_eq!(changed, "hpa-action-controller-1");
    let untouched = browser
        .execute(
            "const row = document.querySelector('#detail-resources tr[data-kind=\"ServiceAccount\"]'); \
             return row ? row.querySelector('td.changed-by').textContent : null;",
            json!([]),
        )
        .await;
    assert_eq!(untouched, "—");
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_clusters_render_one_page_filter_and_page() {
    let Some((chromium, chromedriver)) = browser_programs() else {
        return;
    };
    let emco = Emco::start().await;
    let browser = Browser::start(&chromium, &chromedriver).await;
    browser.goto(&format!("http://{}/ui/", emco.http.address)).await;
    browser
        .wait_for(
            "the page's script",
            PAGE_LOADS,
            "return window.emcoUi ? true : null;",
            json!([]),
        )
        .await;
    browser
        .execute(
            "window.emcoUi.preview(arguments[0]); return true;",
            json!([generated_answer(1000)]),
        )
        .await;
    let text = |id: &str| format!("return document.getElementById('{id}').textContent;");
    let cells = "return document.querySelectorAll('button.cell').length;";
    // Counts are over every cluster; cells only for the page shown.
    let counts = browser
        .execute(
            "return [...document.getElementById('counts').children].map(c => c.textContent).join(' | ');",
            json!([]),
        )
        .await;
    // 1000 clusters: 4 stale (every 250th: 12 cells), 8 more with a failed sink (the other multiples of 100), the
    // other 988 ready (2980 cells).
    assert_eq!(
        counts,
        "988/1000 clusters ready | Ready 2980 | Failed 8 | Stale 12"
    );
    assert_eq!(browser.execute(cells, json!([])).await, 300);
    assert_eq!(
        browser.execute(&text("page-label"), json!([])).await,
        "clusters 1–100 of 1000 (page 1/10)"
    );
    browser.click("#page-next").await;
    assert_eq!(
        browser.execute(&text("page-label"), json!([])).await,
        "clusters 101–200 of 1000 (page 2/10)"
    );
    assert_eq!(
        browser
            .execute(
                "return document.querySelector('tbody th.cluster').textContent;",
                json!([])
            )
            .await,
        "edge0101"
    );
    // The filter: by name, then by state.
    browser.type_into("#filter", "edge0999").await;
    assert_eq!(browser.execute(cells, json!([])).await, 3);
    browser
        .execute(
            "const f = document.getElementById('filter'); f.value = ''; f.dispatchEvent(new Event('input')); return true;",
            json!([]),
        )
        .await;
    browser.type_into("#filter", "stale").await;
    assert_eq!(
        browser.execute(&text("page-label"), json!([])).await,
        "clusters 1–4 of 4"
    );
    assert_eq!(
        browser
            .execute(
                "return [...document.querySelectorAll('tbody th.cluster')].map(t => t.textContent).join(' ');",
                json!([])
            )
            .await,
        "edge0250 edge0500 edge0750 edge1000"
    );
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_authentication_the_page_asks_for_a_token_and_uses_it() {
    let Some((chromium, chromedriver)) = browser_programs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "ui-viewer-token,vera,2,emco:viewer\n").unwrap();
    let emco = Emco::start_with_configs(
        Store::memory(),
        test_rsync_config(),
        ServerConfig {
            token_auth: Some(TokenAuth::load(&tokens).unwrap()),
            ..ServerConfig::default()
        },
    )
    .await;
    let admin_free = emco.http.get("/v2/projects").await;
    assert_eq!(admin_free.status, 401, "the API needs a token");
    let page = emco.http.get("/ui/").await.expect(200);
    assert!(
        page.header("content-security-policy")
            .is_some_and(|policy| policy.contains("script-src 'self'")),
        "{}",
        page.head
    );

    let browser = Browser::start(&chromium, &chromedriver).await;
    browser.goto(&format!("http://{}/ui/", emco.http.address)).await;
    browser
        .wait_for(
            "the token dialog",
            PAGE_LOADS,
            "return document.getElementById('auth').open ? true : null;",
            json!([]),
        )
        .await;
    browser.type_into("#auth-token", "ui-viewer-token\u{E007}").await;
    browser
        .wait_for(
            "the home page read with the token",
            PAGE_LOADS,
            "return !document.getElementById('auth').open \
                 && document.getElementById('projects').textContent.includes('No projects.') ? true : null;",
            json!([]),
        )
        .await;
    let kept = browser
        .execute("return sessionStorage.getItem('emco.token');", json!([]))
        .await;
    assert_eq!(kept, "ui-viewer-token", "kept for this tab only");
    browser.quit().await;
}
