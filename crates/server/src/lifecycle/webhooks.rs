//! Controllers of one's own: a controller registered with a `url` (HTTPS; `caCert`: the CAs its certificate is
//! checked against) is called in its place among the DIG's controllers — priority order with the built-in ones —
//! with the DIG's objects after the controllers before it, and answers what to change. Only URLs under a prefix
//! the operator allowed (`emco serve --controller-url-prefix`; none by default) are called, without following
//! redirects, within a time limit, the request and the answer each within a size bound; a webhook that fails, times
//! out or answers what cannot apply fails the instantiation naming it.
//!
//! The request (`POST`, JSON): `{"controller", "intent", "type": "action"|"placement", "project", "compositeApp",
//! "compositeAppVersion", "deploymentIntentGroup", "apps": [{"name", "clusters": [{"cluster": "provider+cluster",
//! "objects": [<object>, …]}]}]}`. The answer (200, JSON; every key optional): `{"patches": [{"app", "cluster"
//! (absent: every cluster of the app), "kind", "name", "patch": [<RFC 6902 operation>, …]}], "objects": [{"app",
//! "cluster" (absent: every cluster), "object"}], "exclude": [{"app", "cluster", "reason"}]}` — `exclude` takes a
//! cluster away from an app (placement), recorded with the reason as hpa's are.

use std::time::Duration;

use emco_appcontext::{Exclusion, ResourcePath, ResourceRecord};
use emco_model::ControllerSpec;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use serde::Deserialize;
use serde_json::{Value as Json, json};

use super::controllers::Deployed;
use super::outbound::{https_client, url_refusal};

/// The default time a webhook has to answer.
pub(crate) const DEFAULT_WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// The default largest request sent to a webhook (the DIG's objects).
pub(crate) const DEFAULT_WEBHOOK_MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;
/// The default largest answer read from a webhook.
pub(crate) const DEFAULT_WEBHOOK_MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;
/// The most changes (patches, objects, exclusions together) one answer may hold.
pub(crate) const MAX_WEBHOOK_CHANGES: usize = 100_000;

/// Where webhook controllers may be, and the bounds of calling one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookTargets {
    /// URL prefixes (`https://controllers.example.com/`); a webhook's URL must start with one.
    pub prefixes: Vec<String>,
    /// The longest a call may take.
    pub timeout: Duration,
    /// The largest request sent.
    pub max_request_bytes: usize,
    /// The largest answer read.
    pub max_answer_bytes: usize,
}

impl Default for WebhookTargets {
    fn default() -> Self {
        Self {
            prefixes: Vec::new(),
            timeout: DEFAULT_WEBHOOK_TIMEOUT,
            max_request_bytes: DEFAULT_WEBHOOK_MAX_REQUEST_BYTES,
            max_answer_bytes: DEFAULT_WEBHOOK_MAX_ANSWER_BYTES,
        }
    }
}

impl WebhookTargets {
    /// Why `url` may not be called, or `None` when it may.
    #[must_use]
    pub fn refusal(&self, url: &str) -> Option<String> {
        url_refusal(
            url,
            &self.prefixes,
            "webhook controllers",
            "--controller-url-prefix",
            false,
        )
    }
}

/// A webhook controller with its intent, as the plan runs it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Webhook {
    url: String,
    ca_cert: String,
    intent: String,
    placement: bool,
    /// The DIG's path names: project, composite app, version, DIG.
    dig: Vec<String>,
}

impl Webhook {
    /// The webhook a registration describes, called for `intent` of the DIG at `dig`.
    pub(super) fn registered(
        spec: &ControllerSpec,
        intent: &str,
        dig: &ResourcePath,
        placement: bool,
    ) -> Self {
        Self {
            url: spec.url.clone(),
            ca_cert: spec.ca_cert.clone(),
            intent: intent.to_string(),
            placement,
            dig: dig.names().to_vec(),
        }
    }
}

/// The request to `webhook` (registered as `controller`) over the apps' objects now, refused past `max_bytes`.
pub(super) fn request(
    webhook: &Webhook,
    controller: &str,
    apps: &[Deployed],
    max_bytes: usize,
) -> Result<Vec<u8>, String> {
    let name = |index: usize| webhook.dig.get(index).map_or("", String::as_str);
    let apps: Vec<Json> = apps
        .iter()
        .map(|app| {
            let clusters: Vec<Json> = app
                .clusters
                .iter()
                .zip(&app.objects)
                .map(|(cluster, objects)| {
                    json!({"cluster": cluster, "objects": objects.iter().map(ResourceRecord::object).collect::<Vec<_>>()})
                })
                .collect();
            json!({"name": app.app, "clusters": clusters})
        })
        .collect();
    let body = json!({
        "controller": controller,
        "intent": webhook.intent,
        "type": if webhook.placement { "placement" } else { "action" },
        "project": name(0),
        "compositeApp": name(1),
        "compositeAppVersion": name(2),
        "deploymentIntentGroup": name(3),
        "apps": apps,
    });
    let bytes = serde_json::to_vec(&body).map_err(|err| err.to_string())?;
    if bytes.len() > max_bytes {
        return Err(format!(
            "the DIG's objects are {} bytes as JSON; a webhook is sent at most {max_bytes}",
            bytes.len()
        ));
    }
    Ok(bytes)
}

/// Calls `webhook` with `body` within the targets' bounds and answers its answer's bytes.
pub(super) async fn call(
    targets: &WebhookTargets,
    webhook: &Webhook,
    body: Vec<u8>,
) -> Result<Vec<u8>, String> {
    let shown = emco_model::shown(&webhook.url);
    if let Some(refusal) = targets.refusal(&webhook.url) {
        return Err(format!("webhook URL '{shown}': {refusal}"));
    }
    let ca = (!webhook.ca_cert.is_empty()).then_some(webhook.ca_cert.as_str());
    let client = https_client::<Full<Bytes>>(ca).map_err(|err| format!("webhook URL '{shown}': {err}"))?;
    let request = hyper::Request::post(webhook.url.as_str())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|err| format!("webhook URL '{shown}': not a URL: {err}"))?;
    let exchange = async {
        let response = client.request(request).await.map_err(|err| {
            use std::error::Error as _;
            let cause = err
                .source()
                .map(|source| format!(": {source}"))
                .unwrap_or_default();
            format!("{err}{cause}")
        })?;
        let status = response.status();
        if status != hyper::StatusCode::OK {
            return Err(format!(
                "answered {status}, not 200 OK (redirects are not followed)"
            ));
        }
        let max = targets.max_answer_bytes;
        Limited::new(response.into_body(), max)
            .collect()
            .await
            .map(|collected| collected.to_bytes().to_vec())
            .map_err(|_| format!("the answer is larger than {max} bytes, or broke off"))
    };
    tokio::time::timeout(targets.timeout, exchange)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {:?}", targets.timeout)))
        .map_err(|message| format!("webhook URL '{shown}': {message}"))
}

/// What a webhook answers.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    #[serde(default)]
    patches: Vec<PatchChange>,
    #[serde(default)]
    objects: Vec<ObjectChange>,
    #[serde(default)]
    exclude: Vec<ExcludeChange>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchChange {
    app: String,
    #[serde(default)]
    cluster: Option<String>,
    kind: String,
    name: String,
    patch: json_patch::Patch,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ObjectChange {
    app: String,
    #[serde(default)]
    cluster: Option<String>,
    object: Json,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExcludeChange {
    app: String,
    cluster: String,
    #[serde(default)]
    reason: String,
}

/// The indexes of the app's clusters a change names (`None`: all of them).
fn clusters_of(app: &Deployed, cluster: Option<&str>) -> Result<Vec<usize>, String> {
    match cluster {
        None => Ok((0..app.clusters.len()).collect()),
        Some(cluster) => app
            .clusters
            .iter()
            .position(|known| known == cluster)
            .map(|index| vec![index])
            .ok_or_else(|| {
                format!(
                    "app '{}' is not placed on cluster '{}'",
                    app.app,
                    emco_model::shown(cluster)
                )
            }),
    }
}

fn app_named<'a>(apps: &'a mut [Deployed], name: &str) -> Result<&'a mut Deployed, String> {
    apps.iter_mut()
        .find(|app| app.app == name)
        .ok_or_else(|| format!("the composite app has no app '{}'", emco_model::shown(name)))
}

/// Applies a webhook's `answer` to the apps' objects: its patches, new objects and exclusions, in that order.
pub(super) fn apply(
    webhook: &Webhook,
    controller: &str,
    answer: &[u8],
    apps: &mut [Deployed],
) -> Result<(), String> {
    let answer: Answer = serde_json::from_slice(answer).map_err(|err| {
        format!(
            "the answer of '{}' is not a webhook answer ({{\"patches\", \"objects\", \"exclude\"}}): {err}",
            emco_model::shown(&webhook.url)
        )
    })?;
    let changes = answer.patches.len() + answer.objects.len() + answer.exclude.len();
    if changes > MAX_WEBHOOK_CHANGES {
        return Err(format!(
            "the answer holds {changes} changes; at most {MAX_WEBHOOK_CHANGES} are applied"
        ));
    }
    for (index, change) in answer.patches.iter().enumerate() {
        let failed = |message: String| format!("patches[{index}]: {message}");
        let app = app_named(apps, &change.app).map_err(failed)?;
        for at in clusters_of(app, change.cluster.as_deref()).map_err(failed)? {
            let cluster = app.clusters[at].clone();
            let Some(record) = app.objects[at]
                .iter_mut()
                .find(|record| record.kind == change.kind && record.name == change.name)
            else {
                return Err(failed(format!(
                    "app '{}' has no {} '{}' on cluster '{cluster}'",
                    app.app,
                    emco_model::shown(&change.kind),
                    emco_model::shown(&change.name)
                )));
            };
            let mut object = record.object();
            json_patch::patch(&mut object, &change.patch)
                .map_err(|err| failed(format!("on cluster '{cluster}': {err}")))?;
            check_identity(&object, &change.kind, &change.name)
                .map_err(|message| failed(format!("on cluster '{cluster}': {message}")))?;
            let role = record.role.clone();
            *record = ResourceRecord::pending_object(object).with_role(role);
        }
    }
    for (index, change) in answer.objects.iter().enumerate() {
        let failed = |message: String| format!("objects[{index}]: {message}");
        let kind = change.object["kind"].as_str().unwrap_or_default();
        let name = change.object["metadata"]["name"].as_str().unwrap_or_default();
        if !change.object.is_object()
            || change.object["apiVersion"].as_str().is_none_or(str::is_empty)
            || kind.is_empty()
            || name.is_empty()
        {
            return Err(failed(
                "the object needs apiVersion, kind and metadata.name".into(),
            ));
        }
        let app = app_named(apps, &change.app).map_err(failed)?;
        for at in clusters_of(app, change.cluster.as_deref()).map_err(failed)? {
            let record = ResourceRecord::pending_object(change.object.clone());
            app.add_object(at, record).map_err(failed)?;
        }
    }
    for (index, change) in answer.exclude.iter().enumerate() {
        let failed = |message: String| format!("exclude[{index}]: {message}");
        let app = app_named(apps, &change.app).map_err(failed)?;
        let at = clusters_of(app, Some(&change.cluster)).map_err(failed)?[0];
        if app.required.contains(&change.cluster) {
            return Err(failed(format!(
                "app '{}' must run on cluster '{}' (allOf)",
                app.app, change.cluster
            )));
        }
        if app.clusters.len() == 1 {
            return Err(failed(format!(
                "it takes away the last cluster of app '{}'",
                app.app
            )));
        }
        let kept: Vec<usize> = (0..app.clusters.len()).filter(|&index| index != at).collect();
        app.keep_clusters(&kept);
        app.excluded.push(Exclusion {
            cluster: change.cluster.clone(),
            controller: controller.to_string(),
            reason: if change.reason.is_empty() {
                "taken away by the webhook".into()
            } else {
                change.reason.chars().take(1024).collect()
            },
        });
    }
    Ok(())
}

/// Refuses a patch that changed what the object is (its kind or name).
fn check_identity(object: &Json, kind: &str, name: &str) -> Result<(), String> {
    if object["kind"].as_str() != Some(kind) || object["metadata"]["name"].as_str() != Some(name) {
        return Err(format!(
            "the patch changes the object's kind or name ({kind} '{name}'); add a new object instead"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apps() -> Vec<Deployed> {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "r1-sink"},
            "spec": {"template": {"metadata": {"labels": {"app": "sink"}}, "spec": {"containers": []}}}});
        vec![super::super::controllers::on_two_clusters("sink", &deployment)]
    }

    fn webhook() -> Webhook {
        Webhook {
            url: "https://controllers.example.com/sample".into(),
            ca_cert: String::new(),
            intent: "sample-intent".into(),
            placement: false,
            dig: ["proj", "ca", "v1", "dig"].map(String::from).to_vec(),
        }
    }

    #[test]
    fn the_request_names_the_dig_and_carries_every_cluster_s_objects() {
        let body: Json =
            serde_json::from_slice(&request(&webhook(), "sample", &apps(), 1 << 20).unwrap()).unwrap();
        assert_eq!(body["intent"], "sample-intent");
        assert_eq!(body["deploymentIntentGroup"], "dig");
        assert_eq!(body["apps"][0]["clusters"][1]["cluster"], "p+b");
        assert_eq!(
            body["apps"][0]["clusters"][1]["objects"][0]["metadata"]["name"],
            "r1-sink"
        );
        let refused = request(&webhook(), "sample", &apps(), 100).unwrap_err();
        assert!(refused.contains("at most 100"), "{refused}");
    }

    #[test]
    fn an_answer_patches_adds_and_excludes_or_is_refused_naming_the_change() {
        let mut apps = apps();
        let answer = json!({
            "patches": [{"app": "sink", "kind": "Deployment", "name": "r1-sink",
                "patch": [{"op": "add", "path": "/metadata/labels", "value": {"sampled": "yes"}}]}],
            "objects": [{"app": "sink", "cluster": "p+a", "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sample"}}}],
            "exclude": [{"app": "sink", "cluster": "p+b", "reason": "no room"}]
        });
        apply(&webhook(), "sample", answer.to_string().as_bytes(), &mut apps).unwrap();
        assert_eq!(apps[0].clusters, ["p+a"]);
        assert_eq!(apps[0].objects[0].len(), 2);
        assert_eq!(
            apps[0].objects[0][0].object()["metadata"]["labels"]["sampled"],
            "yes"
        );
        assert_eq!(apps[0].excluded[0].reason, "no room");
        for (answer, needle) in [
            (
                json!({"patches": [{"app": "sink", "kind": "Deployment", "name": "other", "patch": []}]}),
                "patches[0]: app 'sink' has no Deployment 'other'",
            ),
            (
                json!({"patches": [{"app": "sink", "kind": "Deployment", "name": "r1-sink", "patch": [{"op": "replace", "path": "/metadata/name", "value": "x"}]}]}),
                "changes the object's kind or name",
            ),
            (
                json!({"objects": [{"app": "sink", "object": {"kind": "ConfigMap"}}]}),
                "objects[0]: the object needs apiVersion",
            ),
            (json!({"objects": [{"app": "vpn", "object": {}}]}), "objects[0]"),
            (
                json!({"exclude": [{"app": "sink", "cluster": "p+z"}]}),
                "not placed on cluster 'p+z'",
            ),
            (json!({"surprise": true}), "is not a webhook answer"),
        ] {
            let refused = apply(
                &webhook(),
                "sample",
                answer.to_string().as_bytes(),
                &mut self::apps(),
            )
            .unwrap_err();
            assert!(refused.contains(needle), "{needle}: {refused}");
        }
    }

    #[test]
    fn only_https_urls_under_an_allowed_prefix_are_called() {
        let none = WebhookTargets::default();
        assert!(
            none.refusal("https://c.example.com/x")
                .unwrap()
                .contains("--controller-url-prefix")
        );
        let some = WebhookTargets {
            prefixes: vec!["https://c.example.com/".into()],
            ..WebhookTargets::default()
        };
        assert_eq!(some.refusal("https://c.example.com/sample"), None);
        assert!(
            some.refusal("http://c.example.com/sample")
                .unwrap()
                .contains("only https://")
        );
        assert!(some.refusal("https://other.example.com/").is_some());
    }
}
