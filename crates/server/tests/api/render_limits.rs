//! Instantiation under hostile charts and concurrent requests: a chart that exceeds a render limit (a function's
//! result size, `tpl` nesting, the time budget) answers 422 `RenderLimitExceeded` naming the app, the template file
//! and line and the limit, and leaves the DIG as it was; rendering holds no lock other requests need; the check
//! before writing catches a DIG or input that changed meanwhile, so racing instantiations create one context; and
//! an instantiate sent right after terminate and stop starts a new instance.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use emco_appcontext::{AppContexts, Catalog, Engine, Kind, NoopEngine, ResourcePath};
use emco_model::{ContextId, ContextStatus};
use emco_server::lifecycle::LifecycleError;
use emco_server::{Lifecycle, RenderLimits, ServerConfig};
use emco_store::Store;
use serde_json::json;

use crate::support::*;

const PROVIDER_URL: &str = "/v2/cluster-providers/p";

fn dig_url(project: &str) -> String {
    format!("/v2/projects/{project}/composite-apps/ca/v1/deployment-intent-groups/dig")
}

fn dig_path(project: &str) -> ResourcePath {
    ResourcePath::new(
        Kind::DeploymentIntentGroup,
        [project, "ca", "v1", "dig"].map(String::from).to_vec(),
    )
}

/// A chart `fw` holding `bomb.yaml` (or a ConfigMap when `None`) and `values`.
fn chart(bomb: Option<&str>, values: &str) -> Vec<u8> {
    let template = bomb.unwrap_or("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fw\n");
    emco_helm::archive::write_tgz(&[
        ("fw/Chart.yaml", b"apiVersion: v2\nname: fw\nversion: 0.1.0\n"),
        ("fw/values.yaml", values.as_bytes()),
        ("fw/templates/bomb.yaml", template.as_bytes()),
    ])
}

/// The cluster every project places its app on.
async fn onboard_cluster(api: &Api) {
    api.post("/v2/cluster-providers", json!({"metadata": {"name": "p"}}))
        .await
        .expect(StatusCode::CREATED);
    api.post_form(
        &format!("{PROVIDER_URL}/clusters"),
        Some(&json!({"metadata": {"name": "c1"}})),
        Some(&kubeconfig("c1")),
    )
    .await
    .expect(StatusCode::CREATED);
}

/// A project with one app `fw` of `chart`, placed on `p+c1`, its DIG approved.
async fn onboard_project(api: &Api, project: &str, chart: &[u8]) {
    api.post("/v2/projects", json!({"metadata": {"name": project}}))
        .await
        .expect(StatusCode::CREATED);
    let ca = format!("/v2/projects/{project}/composite-apps/ca/v1");
    api.post(
        &format!("/v2/projects/{project}/composite-apps"),
        json!({"metadata": {"name": "ca"}, "spec": {"compositeAppVersion": "v1"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.post_form(
        &format!("{ca}/apps"),
        Some(&json!({"metadata": {"name": "fw"}})),
        Some(chart),
    )
    .await
    .expect(StatusCode::CREATED);
    api.post(
        &format!("{ca}/composite-profiles"),
        json!({"metadata": {"name": "cp"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.post(
        &format!("{ca}/deployment-intent-groups"),
        json!({"metadata": {"name": "dig"}, "spec": {"compositeProfile": "cp", "version": "r1"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let dig = dig_url(project);
    api.post(
        &format!("{dig}/intents"),
        json!({"metadata": {"name": "i"}, "spec": {"intent": {"genericPlacementIntent": "gpi"}}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.post(
        &format!("{dig}/generic-placement-intents"),
        json!({"metadata": {"name": "gpi"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.post(
        &format!("{dig}/generic-placement-intents/gpi/app-intents"),
        json!({"metadata": {"name": "fw-placement"},
               "spec": {"app": "fw", "intent": {"allOf": [{"clusterProvider": "p", "cluster": "c1"}]}}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.post_empty(&format!("{dig}/approve"))
        .await
        .expect(StatusCode::ACCEPTED);
}

async fn state_of(api: &Api, project: &str) -> String {
    let (state, _) = Catalog::new(api.store.clone())
        .state(&dig_path(project))
        .await
        .unwrap();
    state.current().map(|s| s.to_string()).unwrap_or_default()
}

async fn context_count(api: &Api) -> usize {
    AppContexts::new(api.store.clone()).ids().await.unwrap().len()
}

/// Runs until stopped by a budget: 10¹⁰ iterations.
/// Ten billion iterations that write nothing: only the time limit can stop it (never the output limit, however
/// fast the machine renders).
const SLOW: &str = "x: 1\n{{ range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}";

#[tokio::test]
async fn template_bombs_answer_422_naming_app_file_and_limit_and_change_nothing() {
    let api = Api::new(Store::memory());
    onboard_cluster(&api).await;
    let bombs = [
        (
            "indent",
            "a: 1\n\n{{ indent 9223372036854775807 \"x\" }}",
            "",
            "the size limit of 32 MiB for one function's result",
        ),
        (
            "tpl",
            "a: 1\n\n{{ tpl .Values.t . }}",
            "t: \"{{ tpl .Values.t . }}\"\n",
            "the nesting limit of 100 template/include/tpl calls",
        ),
        (
            "repeat",
            "a: 1\n\n{{ repeat 1000000000 \"x\" }}",
            "",
            "the size limit of 32 MiB for one function's result",
        ),
    ];
    let peak_before = peak_memory_bytes();
    for (project, bomb, values, limit) in bombs {
        onboard_project(&api, project, &chart(Some(bomb), values)).await;
        let reply = api
            .post_empty(&format!("{}/instantiate", dig_url(project)))
            .await
            .expect(StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(reply.code(), "RenderLimitExceeded", "{project}");
        let message = reply.message();
        assert!(
            message.starts_with(&format!(
                "app 'fw': fw/templates/bomb.yaml:3: rendering exceeded {limit}"
            )),
            "{project}: {message}"
        );
        assert_eq!(state_of(&api, project).await, "Approved", "{project}");
        assert_eq!(context_count(&api).await, 0, "{project}");
    }
    // Memory stayed bounded: without the limits, `repeat` alone would allocate a GB and `indent` fail to.
    if let (Some(before), Some(after)) = (peak_before, peak_memory_bytes()) {
        assert!(
            after.saturating_sub(before) < 512 << 20,
            "the bombs raised the peak memory by {} MiB",
            (after - before) >> 20
        );
    }
    // The process and every other DIG go on: a well-formed chart instantiates.
    onboard_project(&api, "good", &chart(None, "")).await;
    api.post_empty(&format!("{}/instantiate", dig_url("good")))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(state_of(&api, "good").await, "Instantiated");
    assert_eq!(context_count(&api).await, 1);
}

#[tokio::test]
async fn other_render_failures_stay_409() {
    let api = Api::new(Store::memory());
    onboard_cluster(&api).await;
    onboard_project(&api, "failing", &chart(Some("{{ fail \"no\" }}"), "")).await;
    let reply = api
        .post_empty(&format!("{}/instantiate", dig_url("failing")))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(reply.code(), "RenderFailed");
    assert_eq!(
        reply.message(),
        "app 'fw': execution error at (fw/templates/bomb.yaml:1:3): no"
    );
}

fn with_render_timeout(timeout: Duration) -> Api {
    Api::with_config(
        Store::memory(),
        ServerConfig {
            render_limits: RenderLimits {
                timeout,
                ..RenderLimits::default()
            },
            ..ServerConfig::default()
        },
    )
}

#[tokio::test]
async fn a_slow_chart_answers_422_naming_the_time_limit() {
    let api = with_render_timeout(Duration::from_millis(300));
    onboard_cluster(&api).await;
    onboard_project(&api, "slow", &chart(Some(SLOW), "")).await;
    let reply = api
        .post_empty(&format!("{}/instantiate", dig_url("slow")))
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.code(), "RenderLimitExceeded");
    assert!(
        reply
            .message()
            .starts_with("app 'fw': fw/templates/bomb.yaml:2: rendering exceeded the time limit of 300ms"),
        "{}",
        reply.message()
    );
    assert_eq!(state_of(&api, "slow").await, "Approved");
    assert_eq!(context_count(&api).await, 0);
}

#[tokio::test]
async fn a_chart_over_the_output_budget_answers_422_naming_it() {
    let api = Api::with_config(
        Store::memory(),
        ServerConfig {
            render_limits: RenderLimits {
                max_output_bytes: 1 << 20,
                ..RenderLimits::default()
            },
            ..ServerConfig::default()
        },
    );
    onboard_cluster(&api).await;
    // 100 lines of 100 kB: 10 MB in all, each piece far below the size limit of one function's result.
    let big = "a: 1\n{{ range until 100 }}# {{ repeat 100000 \"x\" }}\n{{ end }}";
    onboard_project(&api, "big", &chart(Some(big), "")).await;
    let reply = api
        .post_empty(&format!("{}/instantiate", dig_url("big")))
        .await
        .expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.code(), "RenderLimitExceeded");
    assert!(
        reply
            .message()
            .starts_with("app 'fw': fw/templates/bomb.yaml:2: rendering exceeded the output limit of 1 MiB"),
        "{}",
        reply.message()
    );
    assert_eq!(state_of(&api, "big").await, "Approved");
    assert_eq!(context_count(&api).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_writes_are_served_while_a_chart_renders() {
    let api = Arc::new(with_render_timeout(Duration::from_secs(4)));
    onboard_cluster(&api).await;
    onboard_project(&api, "slow", &chart(Some(SLOW), "")).await;
    let started = Instant::now();
    let render = tokio::spawn({
        let api = api.clone();
        async move { api.post_empty(&format!("{}/instantiate", dig_url("slow"))).await }
    });
    // Let the instantiation reach its render (it reads a few records first).
    tokio::time::sleep(Duration::from_millis(500)).await;
    api.get("/v2/projects").await.expect(StatusCode::OK);
    api.post("/v2/projects", json!({"metadata": {"name": "meanwhile"}}))
        .await
        .expect(StatusCode::CREATED);
    // Both were answered while the render was still running: it holds no lock they need.
    assert!(
        !render.is_finished(),
        "the render ended before the other requests were answered"
    );
    let reply = render.await.unwrap().expect(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        reply.message().contains("time limit of 4s"),
        "{}",
        reply.message()
    );
    assert!(started.elapsed() >= Duration::from_secs(4));
}

/// A lifecycle over the API's store, to run the two halves of instantiating apart.
fn lifecycle(api: &Api, engine: Arc<dyn Engine>) -> Lifecycle {
    Lifecycle::new(
        Catalog::new(api.store.clone()),
        AppContexts::new(api.store.clone()),
        engine,
    )
}

#[tokio::test]
async fn inputs_that_change_during_the_render_fail_the_commit_with_409() {
    let api = Api::new(Store::memory());
    onboard_cluster(&api).await;
    onboard_project(&api, "x", &chart(None, "")).await;
    let lifecycle = lifecycle(&api, NoopEngine::new(AppContexts::new(api.store.clone())));
    let dig = dig_path("x");

    // The app's chart is replaced while the DIG renders.
    let prepared = lifecycle.prepare_instantiate(&dig).await.unwrap();
    api.put_form(
        "/v2/projects/x/composite-apps/ca/v1/apps/fw",
        &json!({"metadata": {"name": "fw"}}),
        &chart(None, "changed: true\n"),
    )
    .await
    .expect(StatusCode::CREATED);
    let err = lifecycle.commit_instantiate(&dig, prepared).await.unwrap_err();
    assert!(matches!(err, LifecycleError::InputsChanged { .. }), "{err}");
    assert_eq!(emco_server::ApiError::from(err).status, StatusCode::CONFLICT);
    assert_eq!(context_count(&api).await, 0);

    // The DIG is modified (back to Created) while it renders.
    let prepared = lifecycle.prepare_instantiate(&dig).await.unwrap();
    api.put(
        &dig_url("x"),
        json!({"metadata": {"name": "dig"}, "spec": {"compositeProfile": "cp", "version": "r2"}}),
    )
    .await
    .expect(StatusCode::OK);
    let err = lifecycle.commit_instantiate(&dig, prepared).await.unwrap_err();
    assert!(err.to_string().contains("must be approved"), "{err}");
    assert_eq!(context_count(&api).await, 0);

    // Nothing changed: the commit goes through.
    api.post_empty(&format!("{}/approve", dig_url("x")))
        .await
        .expect(StatusCode::ACCEPTED);
    let prepared = lifecycle.prepare_instantiate(&dig).await.unwrap();
    lifecycle.commit_instantiate(&dig, prepared).await.unwrap();
    assert_eq!(state_of(&api, "x").await, "Instantiated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_instantiations_create_exactly_one_context() {
    let api = Arc::new(Api::new(Store::memory()));
    onboard_cluster(&api).await;
    onboard_project(&api, "x", &chart(None, "")).await;

    // Both rendered before either commits.
    let lifecycle = lifecycle(&api, NoopEngine::new(AppContexts::new(api.store.clone())));
    let dig = dig_path("x");
    let first = lifecycle.prepare_instantiate(&dig).await.unwrap();
    let second = lifecycle.prepare_instantiate(&dig).await.unwrap();
    lifecycle.commit_instantiate(&dig, first).await.unwrap();
    let err = lifecycle.commit_instantiate(&dig, second).await.unwrap_err();
    assert!(err.to_string().contains("already been instantiated"), "{err}");
    assert_eq!(context_count(&api).await, 1);

    // And through the API, sent at once.
    onboard_project(&api, "y", &chart(None, "")).await;
    let url = format!("{}/instantiate", dig_url("y"));
    let (a, b) = tokio::join!(api.post_empty(&url), api.post_empty(&url));
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::ACCEPTED, StatusCode::CONFLICT]);
    assert_eq!(context_count(&api).await, 2);
}

#[tokio::test]
async fn terminate_stop_instantiate_back_to_back_starts_a_new_instance() {
    let api = Api::new(Store::memory());
    onboard_cluster(&api).await;
    onboard_project(&api, "x", &chart(None, "")).await;
    let dig = dig_url("x");
    for op in ["instantiate", "terminate", "stop", "instantiate"] {
        api.post_empty(&format!("{dig}/{op}"))
            .await
            .expect(StatusCode::ACCEPTED);
    }
    assert_eq!(state_of(&api, "x").await, "Instantiated");
    let contexts = AppContexts::new(api.store.clone());
    let ids = contexts.ids().await.unwrap();
    assert_eq!(ids.len(), 2);
    let mut statuses = Vec::new();
    for id in ids {
        statuses.push(contexts.meta(id).await.unwrap().status);
    }
    statuses.sort_by_key(ToString::to_string);
    assert_eq!(
        statuses,
        [ContextStatus::Instantiating, ContextStatus::TerminateFailed]
    );
}

/// An engine that never carries out a stop (an engine slow to stop, seen from the lifecycle).
struct DeafToStop;

impl Engine for DeafToStop {
    fn instantiate(&self, _: ContextId) {}
    fn terminate(&self, _: ContextId) {}
    fn stop(&self, _: ContextId) {}
}

#[tokio::test]
async fn an_instantiation_supersedes_a_stopped_termination_the_engine_has_not_ended() {
    let api = Api::new(Store::memory());
    onboard_cluster(&api).await;
    onboard_project(&api, "x", &chart(None, "")).await;
    let lifecycle = lifecycle(&api, Arc::new(DeafToStop));
    let dig = dig_path("x");
    let old = lifecycle.instantiate(&dig).await.unwrap();
    lifecycle.terminate(&dig).await.unwrap();
    let stopping = lifecycle.stop(&dig).await.unwrap();
    assert!(
        !lifecycle
            .wait_stopped_within(stopping, Duration::from_millis(50))
            .await
    );
    let contexts = AppContexts::new(api.store.clone());
    assert_eq!(
        contexts.meta(old).await.unwrap().status,
        ContextStatus::Terminating
    );

    // The stop was recorded but not carried out: the new instance supersedes the old termination.
    let new = lifecycle.instantiate(&dig).await.unwrap();
    assert_ne!(new, old);
    assert_eq!(
        contexts.meta(old).await.unwrap().status,
        ContextStatus::TerminateFailed
    );
    assert_eq!(
        contexts.meta(new).await.unwrap().status,
        ContextStatus::Instantiating
    );
    assert_eq!(state_of(&api, "x").await, "Instantiated");
    // A termination that was not stopped still holds a new instance back.
    lifecycle.terminate(&dig).await.unwrap();
    let err = lifecycle.instantiate(&dig).await.unwrap_err();
    assert!(err.to_string().contains("still terminating"), "{err}");
}

/// The process's peak resident memory (Linux `VmHWM`), when the platform tells.
fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
