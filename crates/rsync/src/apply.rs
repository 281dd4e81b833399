//! One app on one cluster, in EMCO's per-cluster sequence, recorded in one AppContext write per batch.
//!
//! Apply: CRDs (the chart's `crds/` folder and rendered CustomResourceDefinitions) created if absent and waited
//! for until Established; `pre-install` hooks one at a time, each waited for; the main resources in order with
//! server-side apply; the app's ResourceBundleState; `post-install` hooks, each waited for. Delete: `pre-delete`
//! hooks (waited for); the main resources in reverse; once they are gone, `post-delete` hooks (waited for); then
//! every hook object and the CRDs this context created, ignoring errors; the ResourceBundleState last.
//!
//! A hook runs as Helm runs it: its previous object deleted first (`before-hook-creation`, the default), applied,
//! waited for when it is a Job or Pod (until it completes or fails) or a Deployment, DaemonSet or StatefulSet
//! (until ready), within `hook_timeout`, then deleted if its policy says so for the outcome (`hook-succeeded`,
//! `hook-failed`; CRD hooks are never deleted by policy). A failed hook fails the batch with a message naming it,
//! and nothing after it runs. Unreachable or failing clusters (connection refused, timeouts, 5xx, 429) are retried
//! with back-off — or after the delay a 429's or 5xx's `Retry-After` asks for — while the cluster's connectivity
//! and the batch's resources show `Retrying` and the connectivity carries the reason; hooks that already succeeded
//! in an earlier attempt of the same batch are not run again.
//!
//! A logical cloud user's certificate request (role Certificate) is applied among the main resources, then
//! approved with the cluster's own client and its issued certificate kept in the record. A context with
//! `credentials` applies and deletes its main resources and hooks as that user.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use emco_appcontext::{
    ClusterRecord, ContextError, JsonText, ResourceRecord, ResourceRole, UserCredentials, Waiting,
};
use emco_model::{Connectivity, ContextId, HookDeletePolicy, HookEvent, RsyncStatus, now_timestamp};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::core::{DynamicObject, GroupVersionKind};
use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;

use crate::engine::Inner;
use crate::error::SyncError;
use crate::labels::prepare;

/// What a batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchOutcome {
    /// Every resource reached its goal (Applied / Deleted).
    Succeeded,
    /// At least one resource is Failed, or a hook failed.
    Failed,
    /// The operation was stopped before the batch finished.
    Cancelled,
}

/// Apply, update from a predecessor, delete, or hand over to a successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Apply,
    /// Apply a context that takes over from the one named (an `/update` or `/rollback`): a resource whose
    /// manifest, role and namespace are those the predecessor applied on the same cluster is marked Applied
    /// without a request; the others are server-side applied (in place: same object, same uid). Upgrade hooks
    /// run instead of install hooks.
    Update(ContextId),
    Delete,
    /// Delete what this context applied and the context it names does not hold (an `/update` took over): on a
    /// cluster the successor still uses for the app, main resources only — no hooks run, CRDs and the shared
    /// ResourceBundleState stay; on a cluster it no longer uses, everything, as a terminate does.
    Supersede(ContextId),
    /// Apply again what an apply applied (a pull cluster's agent repairing changes made behind emco's back): CRDs
    /// created if absent, main resources server-side applied, the bundle; no hook runs.
    Repair,
}

fn is_crd_kind(resource: &ResourceRecord) -> bool {
    resource.kind == "CustomResourceDefinition" && resource.api_version.starts_with("apiextensions.k8s.io/")
}

/// Whether the resource belongs to the CRD phase (records written before roles existed mark CRDs as main).
fn in_crd_phase(resource: &ResourceRecord) -> bool {
    match resource.role {
        ResourceRole::Crd => true,
        ResourceRole::Main => is_crd_kind(resource),
        ResourceRole::Hook(_) | ResourceRole::Certificate => false,
    }
}

fn is_main(resource: &ResourceRecord) -> bool {
    resource.role.is_main() && !is_crd_kind(resource)
}

fn is_certificate(resource: &ResourceRecord) -> bool {
    matches!(resource.role, ResourceRole::Certificate)
}

/// Whether the resource is applied (and deleted) in the main phase, in order: ordinary resources and a logical
/// cloud user's certificate requests.
fn in_main_phase(resource: &ResourceRecord) -> bool {
    is_main(resource) || is_certificate(resource)
}

fn hook_at(resource: &ResourceRecord, event: HookEvent) -> bool {
    resource.role.hook().is_some_and(|hook| hook.runs_at(event))
}

/// Whether a batch in `direction` acts on the resource (hooks of other events stay as they are).
fn touched(resource: &ResourceRecord, direction: Direction) -> bool {
    match (&resource.role, direction) {
        (ResourceRole::Hook(hook), Direction::Apply) => {
            hook.runs_at(HookEvent::PreInstall) || hook.runs_at(HookEvent::PostInstall)
        }
        (ResourceRole::Hook(hook), Direction::Update(_)) => {
            hook.runs_at(HookEvent::PreUpgrade) || hook.runs_at(HookEvent::PostUpgrade)
        }
        (_, Direction::Supersede(_)) => in_main_phase(resource),
        (ResourceRole::Hook(_), Direction::Repair) => false,
        _ => true,
    }
}

/// What identifies the object of a resource in its cluster: API group, kind, namespace (as the manifest names it)
/// and name.
fn object_identity(resource: &ResourceRecord) -> (String, String, String, String) {
    (
        resource.gvk().group,
        resource.kind.clone(),
        resource.namespace(),
        resource.name.clone(),
    )
}

/// The index of each resource the predecessor applied, by object identity, when the batch updates from one.
/// A resource is unchanged when the predecessor applied (status Applied) an object of the same identity with the
/// same role and byte-identical manifest, in the same namespace with the same credentials (the caller passes no
/// predecessor otherwise): it needs no request.
pub(crate) fn unchanged_resources(
    record: &ClusterRecord,
    previous: Option<&ClusterRecord>,
) -> Vec<Option<usize>> {
    let Some(previous) = previous else {
        return vec![None; record.resources.len()];
    };
    record
        .resources
        .iter()
        .map(|resource| {
            let identity = object_identity(resource);
            previous.resources.iter().position(|before| {
                before.status == RsyncStatus::Applied
                    && before.role == resource.role
                    && object_identity(before) == identity
                    && before.api_version == resource.api_version
                    && before.manifest == resource.manifest
            })
        })
        .collect()
}

fn gvk_of(resource: &ResourceRecord) -> GroupVersionKind {
    let gvk = resource.gvk();
    GroupVersionKind::gvk(&gvk.group, &gvk.version, &gvk.kind)
}

/// Whether a CRD reports `Established=True`.
fn is_established(crd: &DynamicObject) -> bool {
    crd.data["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

/// Waits until a CRD reports `Established=True`, starting from `written`, the CRD as the cluster answered its
/// write: when that answer says so already, no read is needed.
pub(crate) async fn wait_established(
    api: &Api<DynamicObject>,
    written: &DynamicObject,
    timeout: Duration,
) -> Result<(), SyncError> {
    if is_established(written) {
        return Ok(());
    }
    let name = written.metadata.name.as_deref().unwrap_or_default();
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if is_established(&api.get(name).await?) {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(SyncError::Rejected(format!(
                "CustomResourceDefinition {name} was not established within {timeout:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether rsync waits for a hook of this kind to succeed (the kinds EMCO and Helm wait for).
fn waits_for(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("batch", "Job") | ("", "Pod") | ("apps", "Deployment" | "DaemonSet" | "StatefulSet")
    )
}

/// What a hook's object says of its run.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    /// Still running (or not ready yet).
    Running,
    /// Done: a Job complete, a Pod succeeded, a workload ready.
    Succeeded,
    /// Failed, with the object's reason.
    Failed(String),
}

fn verdict(group: &str, kind: &str, object: &Json) -> Verdict {
    let status = &object["status"];
    match (group, kind) {
        ("batch", "Job") => {
            let conditions = status["conditions"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let holds = |kind: &str| {
                conditions
                    .iter()
                    .find(|c| c["type"] == kind && c["status"] == "True")
            };
            if holds("Complete").is_some() {
                Verdict::Succeeded
            } else if let Some(failed) = holds("Failed") {
                let reason = failed["message"]
                    .as_str()
                    .or_else(|| failed["reason"].as_str())
                    .unwrap_or("the Job failed");
                Verdict::Failed(reason.to_string())
            } else {
                Verdict::Running
            }
        }
        ("", "Pod") => match status["phase"].as_str() {
            Some("Succeeded") => Verdict::Succeeded,
            Some("Failed") => Verdict::Failed(
                status["message"]
                    .as_str()
                    .or_else(|| status["reason"].as_str())
                    .unwrap_or("the Pod failed")
                    .to_string(),
            ),
            _ => Verdict::Running,
        },
        _ => {
            if emco_k8s::readiness::readiness(group, kind, object) == emco_model::ReadyStatus::Ready {
                Verdict::Succeeded
            } else {
                Verdict::Running
            }
        }
    }
}

/// One resource's result: its status and, when it failed, why.
pub(crate) type Outcome = (RsyncStatus, Option<String>);

/// The result of each resource in a batch; `None` for resources the batch did not act on.
pub(crate) type Results = Vec<Option<Outcome>>;

/// The certificate (PEM) each certificate request of a batch was issued; `None` for every other resource.
pub(crate) type Certificates = Vec<Option<String>>;

/// What became of a certificate request after it was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Issue {
    /// The cluster issued this certificate (PEM).
    Issued(String),
    /// Denied, failed, or no certificate in time: why.
    Failed(String),
    /// Stopped while waiting.
    Cancelled,
}

/// The only signer whose requests emco approves: client certificates the API server accepts.
const API_SERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

/// The reason emco's approval carries (`kubectl certificate approve` says `KubectlApprove`).
const APPROVAL_REASON: &str = "EmcoApproved";

/// The largest certificate emco keeps from a cluster.
const MAX_CERTIFICATE_BYTES: usize = 64 * 1024;

/// The first condition of `kind` a CertificateSigningRequest holds (`status: "True"`), if any.
fn csr_condition<'a>(object: &'a Json, kind: &str) -> Option<&'a Json> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|condition| condition["type"] == kind && condition["status"] == "True")
}

/// The message of a condition, else its reason.
fn condition_text(condition: &Json) -> String {
    condition["message"]
        .as_str()
        .filter(|m| !m.is_empty())
        .or_else(|| condition["reason"].as_str())
        .unwrap_or("no reason given")
        .to_string()
}

/// The certificate in a CertificateSigningRequest's `status.certificate` (base64 of PEM), decoded; `Ok(None)`
/// while there is none.
fn issued_certificate(object: &Json) -> Result<Option<String>, String> {
    use base64::Engine as _;
    let Some(encoded) = object["status"]["certificate"].as_str().filter(|c| !c.is_empty()) else {
        return Ok(None);
    };
    if encoded.len() > MAX_CERTIFICATE_BYTES * 2 {
        return Err(format!(
            "status.certificate is larger than {MAX_CERTIFICATE_BYTES} bytes"
        ));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|err| format!("status.certificate is not base64: {err}"))?;
    let pem = String::from_utf8(bytes).map_err(|_| "status.certificate is not PEM text".to_string())?;
    if pem.len() > MAX_CERTIFICATE_BYTES || !pem.contains("-----BEGIN CERTIFICATE-----") {
        return Err("status.certificate is not a PEM certificate".to_string());
    }
    Ok(Some(pem))
}

/// Whether the request in the cluster is the one emco applied, for the signer emco approves: the same
/// `spec.request` as the record's manifest and signer `kubernetes.io/kube-apiserver-client`.
fn check_request(object: &Json, manifest: &Json) -> Result<(), String> {
    let signer = object["spec"]["signerName"].as_str().unwrap_or_default();
    if signer != API_SERVER_CLIENT_SIGNER {
        return Err(format!(
            "is for signer '{signer}'; emco approves only {API_SERVER_CLIENT_SIGNER} requests"
        ));
    }
    if object["spec"]["request"] != manifest["spec"]["request"] {
        return Err("in the cluster holds another certificate request than the one emco applied".to_string());
    }
    Ok(())
}

/// The body of an `/approval` request: the request as read, with emco's `Approved` condition added to its
/// conditions.
fn approval_body(object: &Json) -> Json {
    let mut body = object.clone();
    let mut conditions = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions.push(serde_json::json!({
        "type": "Approved",
        "status": "True",
        "reason": APPROVAL_REASON,
        "message": "This CSR was approved by emco for a logical cloud's user.",
        "lastUpdateTime": now_timestamp(),
    }));
    body["status"]["conditions"] = Json::Array(conditions);
    body
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Every phase ran.
    Done,
    /// A resource the batch depends on failed (a CRD, a hook, a main resource).
    Failed,
    /// Stopped between two requests.
    Cancelled,
}

/// A hook's run in one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HookEnd {
    Succeeded,
    Failed,
    Cancelled,
}

/// A rejection (4xx) is the resource's failure; anything else aborts the attempt.
fn rejected(err: SyncError) -> Result<Outcome, SyncError> {
    match err {
        SyncError::Rejected(message) => Ok((RsyncStatus::Failed, Some(message))),
        other => Err(other),
    }
}

/// The error of a write: a 404 for the resource's URL itself (the cluster does not serve the kind — a built-in kind
/// is resolved without discovery) says so as discovery would.
fn write_error(err: kube::Error, resource: &ResourceRecord) -> SyncError {
    match &err {
        kube::Error::Api(status)
            if status.code == 404
                && status
                    .message
                    .starts_with("the server could not find the requested resource") =>
        {
            crate::clients::not_served(&gvk_of(resource), &status.message)
        }
        _ => SyncError::from(err),
    }
}

fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 404)
}

/// The API of a resource, discovered with the cluster's own client and used through `client`.
async fn api_for(
    inner: &Inner,
    cluster: &str,
    discovery: &kube::Client,
    client: &kube::Client,
    resource: &ResourceRecord,
    namespace: &str,
) -> Result<(Api<DynamicObject>, Option<String>), SyncError> {
    let resolved = inner
        .clients
        .resolve(cluster, discovery, &gvk_of(resource))
        .await?;
    if resolved.namespaced {
        let named = resource.namespace();
        let ns = if named.is_empty() {
            namespace.to_string()
        } else {
            named
        };
        Ok((
            Api::namespaced_with(client.clone(), &ns, &resolved.resource),
            Some(ns),
        ))
    } else {
        Ok((Api::all_with(client.clone(), &resolved.resource), None))
    }
}

/// Whether `resource` is absent from `cluster` (read with `client`, objects naming no namespace in `namespace`):
/// `false` when it is there or the cluster could not say.
pub(crate) async fn is_absent(
    inner: &Inner,
    cluster: &str,
    client: &kube::Client,
    resource: &ResourceRecord,
    namespace: &str,
) -> bool {
    let Ok((api, _)) = api_for(inner, cluster, client, client, resource, namespace).await else {
        return false;
    };
    matches!(api.get_metadata_opt(&resource.name).await, Ok(None))
}

/// One attempt at a batch: what it needs and what it found so far.
struct Batch<'a> {
    inner: &'a Inner,
    /// The context applied.
    id: ContextId,
    cluster: &'a str,
    /// The client of the cluster's own kubeconfig: discovery, CRDs, the ResourceBundleState, approvals.
    client: kube::Client,
    /// The client of a logical cloud's user, when the context is applied with its credentials: main resources,
    /// certificate requests and hooks.
    user_client: Option<kube::Client>,
    /// The tracking label value, `<contextId>-<app>`.
    label: String,
    params: PatchParams,
    namespace: &'a str,
    record: &'a ClusterRecord,
    cancel: &'a CancellationToken,
    results: Results,
    certificates: Certificates,
    /// Hooks that succeeded in an earlier attempt of the same batch (not run again).
    hooks_done: &'a mut HashSet<(usize, HookEvent)>,
    /// An update's predecessor's record of the same app and cluster, when it had one in the same namespace with
    /// the same credentials.
    previous: Option<ClusterRecord>,
    /// How many objects the apply wrote.
    written: usize,
}

impl Batch<'_> {
    fn indices(&self, select: impl Fn(&ResourceRecord) -> bool) -> Vec<usize> {
        (0..self.record.resources.len())
            .filter(|i| select(&self.record.resources[*i]))
            .collect()
    }

    /// The API of a resource through the client it is applied with: the cluster's own for CRDs, else the
    /// logical cloud user's when there is one.
    async fn api(&self, index: usize) -> Result<(Api<DynamicObject>, Option<String>), SyncError> {
        let resource = &self.record.resources[index];
        let client = match &self.user_client {
            Some(user_client) if !in_crd_phase(resource) => user_client,
            _ => &self.client,
        };
        api_for(
            self.inner,
            self.cluster,
            &self.client,
            client,
            resource,
            self.namespace,
        )
        .await
    }

    /// Approves an applied certificate request (unless it is already) and waits, within `hook_timeout`, for the
    /// certificate the cluster issues; a request already issued is only read. Denied or failed requests, and no
    /// certificate in time, are the resource's failure.
    async fn collect_certificate(&self, index: usize) -> Result<Issue, SyncError> {
        let mut noted = false;
        let issue = self.await_certificate(index, &mut noted).await;
        if noted {
            self.note_waiting(None).await;
        }
        issue
    }

    /// [`Self::collect_certificate`]; sets `noted` once the status says that the batch waits for the certificate.
    async fn await_certificate(&self, index: usize, noted: &mut bool) -> Result<Issue, SyncError> {
        let resource = &self.record.resources[index];
        let what = format!("CertificateSigningRequest {}", resource.name);
        let (api, _) = match api_for(
            self.inner,
            self.cluster,
            &self.client,
            &self.client,
            resource,
            self.namespace,
        )
        .await
        {
            Ok(found) => found,
            Err(err) => {
                let (_, message) = rejected(err)?;
                return Ok(Issue::Failed(message.unwrap_or_default()));
            }
        };
        let timeout = self.inner.config.hook_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        // The request emco made, read once for every poll.
        let requested = resource.object();
        loop {
            let object = match api.get(&resource.name).await.map_err(SyncError::from) {
                Ok(object) => serde_json::to_value(&object).unwrap_or(Json::Null),
                Err(SyncError::Rejected(message)) => {
                    return Ok(Issue::Failed(format!("{what} cannot be read: {message}")));
                }
                Err(other) => return Err(other),
            };
            if let Some(denied) = csr_condition(&object, "Denied") {
                return Ok(Issue::Failed(format!(
                    "{what} was denied: {}",
                    condition_text(denied)
                )));
            }
            if let Some(failed) = csr_condition(&object, "Failed") {
                return Ok(Issue::Failed(format!(
                    "{what} failed: {}",
                    condition_text(failed)
                )));
            }
            // Never approve (nor keep the certificate of) a request emco did not make: its key is not emco's.
            if let Err(message) = check_request(&object, &requested) {
                return Ok(Issue::Failed(format!("{what} {message}")));
            }
            match issued_certificate(&object) {
                Ok(Some(pem)) => return Ok(Issue::Issued(pem)),
                Ok(None) => {}
                Err(message) => return Ok(Issue::Failed(format!("{what}: {message}"))),
            }
            if csr_condition(&object, "Approved").is_none() {
                match api
                    .replace_subresource(
                        "approval",
                        &resource.name,
                        &PostParams::default(),
                        &approval_body(&object),
                    )
                    .await
                {
                    // The answer may already carry the certificate (kubesim and some signers issue at once).
                    Ok(approved) => {
                        let approved = serde_json::to_value(&approved).unwrap_or(Json::Null);
                        if let Ok(Some(pem)) = issued_certificate(&approved) {
                            return Ok(Issue::Issued(pem));
                        }
                    }
                    // Changed since it was read: it is read again after the pause.
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(err) => match SyncError::from(err) {
                        SyncError::Rejected(message) => {
                            return Ok(Issue::Failed(format!("{what} could not be approved: {message}")));
                        }
                        other => return Err(other),
                    },
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(Issue::Failed(format!(
                    "{what}: the cluster issued no certificate within {}s of its approval",
                    timeout.as_secs()
                )));
            }
            if !*noted {
                self.note_waiting(Some(Waiting::starting_now(
                    format!("{what} to be issued"),
                    Some((
                        deadline.saturating_duration_since(tokio::time::Instant::now()),
                        "fails",
                    )),
                )))
                .await;
                *noted = true;
            }
            tokio::select! {
                () = tokio::time::sleep(self.inner.config.hook_poll) => {}
                () = self.cancel.cancelled() => return Ok(Issue::Cancelled),
            }
        }
    }

    /// The object to send for a resource: its manifest labelled for this batch, in `ns` unless it names one; a
    /// manifest whose text nests deeper than the parser reads fails the resource.
    fn body(&self, index: usize, ns: Option<&str>) -> Result<Json, Outcome> {
        match self.record.resources[index].manifest.to_json() {
            Ok(manifest) => Ok(prepare(manifest, &self.label, ns)),
            Err(err) => Err((
                RsyncStatus::Failed,
                Some(format!("its stored manifest cannot be read: {err}")),
            )),
        }
    }

    /// Records what the batch now waits for on this cluster, or that the wait is over (`None`); a write that fails
    /// only leaves the status less precise, so it is logged.
    async fn note_waiting(&self, waiting: Option<Waiting>) {
        let record = self.record;
        if let Err(err) = self
            .inner
            .update_cluster(self.id, &record.app, &record.cluster, |stored| {
                stored.waiting.clone_from(&waiting);
            })
            .await
        {
            tracing::debug!(context = %self.id, app = record.app, cluster = self.cluster, error = %err, "cannot record what rsync waits for");
        }
    }

    /// Waits until a CRD the cluster answered is Established, saying so in the status when it is not at once.
    async fn wait_crd(
        &self,
        api: &Api<DynamicObject>,
        written: &DynamicObject,
        resource: &ResourceRecord,
    ) -> Result<(), SyncError> {
        if is_established(written) {
            return Ok(());
        }
        let timeout = self.inner.config.crd_timeout;
        self.note_waiting(Some(Waiting::starting_now(
            format!("CustomResourceDefinition/{} to be Established", resource.name),
            Some((timeout, "fails")),
        )))
        .await;
        let result = wait_established(api, written, timeout).await;
        self.note_waiting(None).await;
        result
    }

    /// Server-side applies a resource (a CRD is waited for until Established).
    async fn apply(&self, index: usize) -> Result<Outcome, SyncError> {
        let resource = &self.record.resources[index];
        let (api, ns) = match self.api(index).await {
            Ok(found) => found,
            Err(err) => return rejected(err),
        };
        let body = match self.body(index, ns.as_deref()) {
            Ok(body) => body,
            Err(outcome) => return Ok(outcome),
        };
        match api
            .patch(&resource.name, &self.params, &Patch::Apply(&body))
            .await
        {
            Ok(applied) if is_crd_kind(resource) => match self.wait_crd(&api, &applied, resource).await {
                Ok(()) => Ok((RsyncStatus::Applied, None)),
                Err(err) => rejected(err),
            },
            Ok(_) => Ok((RsyncStatus::Applied, None)),
            Err(err) => rejected(write_error(err, resource)),
        }
    }

    /// Creates a CRD-phase object unless it exists (never updates it), then waits until a CRD is Established.
    async fn create_if_absent(&self, index: usize) -> Result<Outcome, SyncError> {
        let resource = &self.record.resources[index];
        let (api, ns) = match self.api(index).await {
            Ok(found) => found,
            Err(err) => return rejected(err),
        };
        let body = match self.body(index, ns.as_deref()) {
            Ok(body) => body,
            Err(outcome) => return Ok(outcome),
        };
        let object: DynamicObject = match serde_json::from_value(body) {
            Ok(object) => object,
            Err(err) => {
                return Ok((
                    RsyncStatus::Failed,
                    Some(format!("not a Kubernetes object: {err}")),
                ));
            }
        };
        let created = match api.create(&PostParams::default(), &object).await {
            Ok(created) => created,
            // There already: whether it is established is read below.
            Err(kube::Error::Api(status)) if status.code == 409 => object,
            Err(err) => return rejected(write_error(err, resource)),
        };
        if is_crd_kind(resource)
            && let Err(err) = self.wait_crd(&api, &created, resource).await
        {
            return rejected(err);
        }
        Ok((RsyncStatus::Applied, None))
    }

    /// Deletes a resource; one that is not there counts as deleted.
    async fn delete(&self, index: usize) -> Result<Outcome, SyncError> {
        let resource = &self.record.resources[index];
        let (api, _) = match self.api(index).await {
            Ok(found) => found,
            Err(err) => return rejected(err),
        };
        match api.delete(&resource.name, &DeleteParams::background()).await {
            Ok(_) => Ok((RsyncStatus::Deleted, None)),
            Err(err) if is_not_found(&err) => Ok((RsyncStatus::Deleted, None)),
            Err(err) => rejected(SyncError::from(err)),
        }
    }

    /// Deletes a CRD only if this context created it (it carries this context's tracking label), so that a CRD
    /// that was there before, or that another context created, survives this context's terminate.
    async fn delete_crd_if_ours(&self, index: usize) -> Result<Option<Outcome>, SyncError> {
        let resource = &self.record.resources[index];
        let (api, _) = match self.api(index).await {
            Ok(found) => found,
            Err(err) => return rejected(err).map(Some),
        };
        let existing = match api.get(&resource.name).await {
            Ok(existing) => existing,
            Err(err) if is_not_found(&err) => return Ok(Some((RsyncStatus::Deleted, None))),
            Err(err) => return rejected(SyncError::from(err)).map(Some),
        };
        let ours = existing
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(emco_k8s::DEPLOYMENT_ID_LABEL))
            .is_some_and(|value| *value == self.label);
        if !ours {
            return Ok(None);
        }
        let params = DeleteParams {
            preconditions: existing.metadata.uid.map(|uid| Preconditions {
                uid: Some(uid),
                resource_version: None,
            }),
            ..DeleteParams::background()
        };
        match api.delete(&resource.name, &params).await {
            Ok(_) => Ok(Some((RsyncStatus::Deleted, None))),
            Err(err) if is_not_found(&err) => Ok(Some((RsyncStatus::Deleted, None))),
            Err(err) => rejected(SyncError::from(err)).map(Some),
        }
    }

    /// Waits until `name` is gone: `Ok(false)` when the wait timed out or was cancelled.
    async fn wait_gone(&self, api: &Api<DynamicObject>, name: &str) -> Result<bool, SyncError> {
        let deadline = tokio::time::Instant::now() + self.inner.config.hook_timeout;
        loop {
            match api.get_opt(name).await {
                Ok(None) => return Ok(true),
                Ok(Some(_)) => {}
                Err(err) => return Err(SyncError::from(err)),
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::select! {
                () = tokio::time::sleep(self.inner.config.hook_poll) => {}
                () = self.cancel.cancelled() => return Ok(false),
            }
        }
    }

    /// Reads a hook's object until it succeeds, fails or `hook_timeout` passes; `None` when cancelled.
    async fn wait_hook(
        &self,
        api: &Api<DynamicObject>,
        resource: &ResourceRecord,
    ) -> Result<Option<Verdict>, SyncError> {
        let gvk = resource.gvk();
        let timeout = self.inner.config.hook_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let found = match api.get_opt(&resource.name).await.map_err(SyncError::from) {
                Ok(found) => found,
                // The cluster refuses to show the object: the hook cannot be seen to succeed.
                Err(SyncError::Rejected(message)) => return Ok(Some(Verdict::Failed(message))),
                Err(other) => return Err(other),
            };
            let object = match found {
                Some(object) => serde_json::to_value(&object).unwrap_or(Json::Null),
                None => {
                    return Ok(Some(Verdict::Failed(
                        "its object disappeared before it succeeded".into(),
                    )));
                }
            };
            match verdict(&gvk.group, &gvk.kind, &object) {
                Verdict::Running => {}
                done => return Ok(Some(done)),
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(Some(Verdict::Failed(format!(
                    "it did not succeed within {}s",
                    timeout.as_secs()
                ))));
            }
            tokio::select! {
                () = tokio::time::sleep(self.inner.config.hook_poll) => {}
                () = self.cancel.cancelled() => return Ok(None),
            }
        }
    }

    /// Deletes a hook's object as its policy asks, after the run; a failure here is logged, not fatal.
    async fn delete_by_policy(&self, api: &Api<DynamicObject>, resource: &ResourceRecord) {
        match api.delete(&resource.name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(err) if is_not_found(&err) => {}
            Err(err) => tracing::warn!(
                cluster = self.cluster,
                hook = %resource.key(),
                error = %err,
                "cannot delete a hook's object as its delete policy asks"
            ),
        }
    }

    /// Runs one hook at `event`, recording its result.
    async fn run_hook(&mut self, index: usize, event: HookEvent) -> Result<HookEnd, SyncError> {
        let record = self.record;
        let resource = &record.resources[index];
        let Some(hook) = resource.role.hook() else {
            return Ok(HookEnd::Succeeded);
        };
        if self.hooks_done.contains(&(index, event)) {
            self.results[index] = Some((RsyncStatus::Applied, None));
            return Ok(HookEnd::Succeeded);
        }
        let what = format!("{event} hook {}/{}", resource.kind, resource.name);
        let fail = |message: String| Some((RsyncStatus::Failed, Some(format!("{what} failed: {message}"))));
        let (api, ns) = match self.api(index).await {
            Ok(found) => found,
            Err(err) => {
                let (_, message) = rejected(err)?;
                self.results[index] = fail(message.unwrap_or_default());
                return Ok(HookEnd::Failed);
            }
        };
        // Helm never deletes CRD hooks by policy (their removal would cascade to every custom resource).
        let deletable = !is_crd_kind(resource);
        if deletable && hook.deletes_on(HookDeletePolicy::BeforeHookCreation) {
            match api.delete(&resource.name, &DeleteParams::background()).await {
                Ok(_) => {}
                Err(err) if is_not_found(&err) => {}
                Err(err) => {
                    let (_, message) = rejected(SyncError::from(err))?;
                    self.results[index] = fail(format!(
                        "its previous object could not be deleted: {}",
                        message.unwrap_or_default()
                    ));
                    return Ok(HookEnd::Failed);
                }
            }
            let gone = match self.wait_gone(&api, &resource.name).await {
                Ok(gone) => gone,
                Err(SyncError::Rejected(message)) => {
                    self.results[index] = fail(format!("its previous object cannot be read: {message}"));
                    return Ok(HookEnd::Failed);
                }
                Err(other) => return Err(other),
            };
            if !gone {
                if self.cancel.is_cancelled() {
                    return Ok(HookEnd::Cancelled);
                }
                self.results[index] = fail(format!(
                    "its previous object was not gone within {}s",
                    self.inner.config.hook_timeout.as_secs()
                ));
                return Ok(HookEnd::Failed);
            }
        }
        let body = match self.body(index, ns.as_deref()) {
            Ok(body) => body,
            Err((_, message)) => {
                self.results[index] = fail(message.unwrap_or_default());
                return Ok(HookEnd::Failed);
            }
        };
        if let Err(err) = api
            .patch(&resource.name, &self.params, &Patch::Apply(&body))
            .await
        {
            let (_, message) = rejected(SyncError::from(err))?;
            self.results[index] = fail(message.unwrap_or_default());
            return Ok(HookEnd::Failed);
        }
        let gvk = resource.gvk();
        let verdict = if waits_for(&gvk.group, &gvk.kind) {
            self.note_waiting(Some(Waiting::starting_now(
                format!("{what} to complete"),
                Some((self.inner.config.hook_timeout, "fails")),
            )))
            .await;
            let waited = self.wait_hook(&api, resource).await;
            self.note_waiting(None).await;
            match waited? {
                Some(verdict) => verdict,
                None => {
                    self.results[index] = Some((RsyncStatus::Applied, None));
                    return Ok(HookEnd::Cancelled);
                }
            }
        } else {
            Verdict::Succeeded
        };
        match verdict {
            Verdict::Succeeded | Verdict::Running => {
                if deletable && hook.deletes_on(HookDeletePolicy::HookSucceeded) {
                    self.delete_by_policy(&api, resource).await;
                }
                self.results[index] = Some((RsyncStatus::Applied, None));
                self.hooks_done.insert((index, event));
                Ok(HookEnd::Succeeded)
            }
            Verdict::Failed(message) => {
                if deletable && hook.deletes_on(HookDeletePolicy::HookFailed) {
                    self.delete_by_policy(&api, resource).await;
                }
                tracing::warn!(cluster = self.cluster, app = record.app, hook = %resource.key(), %event, message, "hook failed");
                self.results[index] = fail(message);
                Ok(HookEnd::Failed)
            }
        }
    }

    /// Runs the hooks of `event` one at a time, in the record's order (Helm's: weight, name, kind).
    async fn run_hooks(&mut self, event: HookEvent) -> Result<End, SyncError> {
        for index in self.indices(|r| hook_at(r, event)) {
            if self.cancel.is_cancelled() {
                return Ok(End::Cancelled);
            }
            match self.run_hook(index, event).await? {
                HookEnd::Succeeded => {}
                HookEnd::Failed => return Ok(End::Failed),
                HookEnd::Cancelled => return Ok(End::Cancelled),
            }
        }
        Ok(End::Done)
    }

    async fn bundle_api(&self) -> Result<Api<DynamicObject>, SyncError> {
        // rsync installed the CRD itself (`ensure_bundle_crd`): its plural and scope need no discovery.
        Ok(Api::namespaced_with(
            self.client.clone(),
            self.namespace,
            &kube::core::ApiResource::erase::<crate::watch::BundleState>(&()),
        ))
    }

    /// Applies the batch, running the `hooks` events before and after the main resources (none: a repair); the
    /// resources an update's predecessor applied unchanged are only marked Applied.
    async fn apply_all(&mut self, hooks: Option<(HookEvent, HookEvent)>) -> Result<End, SyncError> {
        let unchanged = unchanged_resources(self.record, self.previous.as_ref());
        self.written = 0;
        self.inner
            .clients
            .ensure_bundle_crd(self.cluster, &self.client)
            .await?;
        let crds: Vec<usize> = self
            .indices(in_crd_phase)
            .into_iter()
            .filter(|index| {
                let same = unchanged[*index].is_some();
                if same {
                    self.results[*index] = Some((RsyncStatus::Applied, None));
                }
                !same
            })
            .collect();
        for index in &crds {
            if self.cancel.is_cancelled() {
                return Ok(End::Cancelled);
            }
            self.written += 1;
            let outcome = self.create_if_absent(*index).await?;
            let failed = outcome.0 == RsyncStatus::Failed;
            self.results[*index] = Some(outcome);
            if failed {
                return Ok(End::Failed);
            }
        }
        if !crds.is_empty() {
            // Kinds the CRDs just added must be discovered afresh.
            self.inner.clients.forget_kinds(self.cluster);
        }
        if let Some((pre, _)) = hooks {
            match self.run_hooks(pre).await? {
                End::Done => {}
                other => return Ok(other),
            }
        }
        let mut failed = false;
        for index in self.indices(in_main_phase) {
            if self.cancel.is_cancelled() {
                return Ok(End::Cancelled);
            }
            if let Some(before) = unchanged[index] {
                // Unchanged since the predecessor applied it: no request (a certificate request keeps the
                // certificate issued to it; without one it is applied again, to collect it).
                let previous = self.previous.as_ref().map(|previous| &previous.resources[before]);
                let certificate = previous.and_then(|previous| previous.certificate.clone());
                if !is_certificate(&self.record.resources[index]) || certificate.is_some() {
                    self.certificates[index] = certificate;
                    self.results[index] = Some((RsyncStatus::Applied, None));
                    continue;
                }
            }
            self.written += 1;
            let mut outcome = self.apply(index).await?;
            if outcome.0 == RsyncStatus::Applied && is_certificate(&self.record.resources[index]) {
                match self.collect_certificate(index).await? {
                    Issue::Issued(pem) => self.certificates[index] = Some(pem),
                    Issue::Failed(message) => outcome = (RsyncStatus::Failed, Some(message)),
                    Issue::Cancelled => {
                        self.results[index] = Some(outcome);
                        return Ok(End::Cancelled);
                    }
                }
            }
            failed |= outcome.0 == RsyncStatus::Failed;
            self.results[index] = Some(outcome);
        }
        if self.cancel.is_cancelled() {
            return Ok(End::Cancelled);
        }
        // The app's ResourceBundleState, once the resources are there (an update that wrote nothing on a cluster
        // its predecessor used finds it there already; one that wrote something writes it only when its spec —
        // the kinds and the status configs — changed).
        if !self.record.resources.is_empty() && (self.written > 0 || self.previous.is_none()) {
            let api = self.bundle_api().await?;
            let clients = &self.inner.clients;
            let configs = crate::status_configs::for_record(
                clients.catalog(),
                clients,
                self.cluster,
                Some(&self.client),
                self.record,
            )
            .await;
            // The kinds the app holds: the monitor watches those (and pods), not every kind it knows.
            let kinds = self
                .record
                .resources
                .iter()
                .map(|resource| emco_k8s::bundle::BundleKind::of(&resource.gvk()));
            let bundle = emco_k8s::bundle::rbs_object_with(&self.label, self.namespace, kinds, &configs);
            let unchanged = match &self.previous {
                Some(_) => api
                    .get_opt(&self.label)
                    .await?
                    .is_some_and(|existing| existing.data.get("spec") == bundle.get("spec")),
                None => false,
            };
            if !unchanged {
                api.patch(&self.label, &self.params, &Patch::Apply(bundle))
                    .await?;
            }
        }
        if failed {
            // Post-install hooks run after the release's resources are created, and not all of them were.
            return Ok(End::Failed);
        }
        match hooks {
            Some((_, post)) => self.run_hooks(post).await,
            None => Ok(End::Done),
        }
    }

    async fn delete_all(&mut self) -> Result<End, SyncError> {
        match self.run_hooks(HookEvent::PreDelete).await? {
            End::Done => {}
            other => return Ok(other),
        }
        let mut failed = false;
        let main: Vec<usize> = self.indices(in_main_phase).into_iter().rev().collect();
        for index in &main {
            if self.cancel.is_cancelled() {
                return Ok(End::Cancelled);
            }
            let outcome = self.delete(*index).await?;
            failed |= outcome.0 == RsyncStatus::Failed;
            self.results[*index] = Some(outcome);
        }
        let post_delete = self.indices(|r| hook_at(r, HookEvent::PostDelete));
        if !post_delete.is_empty() {
            // Post-delete hooks run once the main objects are gone, not merely asked to go (those whose delete
            // failed are not waited for).
            for index in &main {
                if self.results[*index].as_ref().map(|(status, _)| *status) != Some(RsyncStatus::Deleted) {
                    continue;
                }
                if self.cancel.is_cancelled() {
                    return Ok(End::Cancelled);
                }
                let resource = &self.record.resources[*index];
                let Ok((api, _)) = self.api(*index).await else {
                    continue;
                };
                match self.wait_gone(&api, &resource.name).await {
                    Ok(true) => {}
                    Ok(false) | Err(SyncError::Rejected(_)) if !self.cancel.is_cancelled() => {
                        tracing::warn!(cluster = self.cluster, object = %resource.key(), "maybe still there when post-delete hooks start");
                    }
                    Ok(false) | Err(SyncError::Rejected(_)) => {}
                    Err(other) => return Err(other),
                }
            }
            match self.run_hooks(HookEvent::PostDelete).await? {
                End::Done => {}
                other => return Ok(other),
            }
        }
        // Every hook object and the CRDs this context created go last; errors are recorded, not fatal (EMCO
        // ignores them).
        for index in self.indices(|r| r.role.hook().is_some()).into_iter().rev() {
            if self.cancel.is_cancelled() {
                return Ok(End::Cancelled);
            }
            let outcome = self.delete(index).await?;
            self.results[index] = Some(outcome);
        }
        for index in self.indices(in_crd_phase).into_iter().rev() {
            if self.cancel.is_cancelled() {
                return Ok(End::Cancelled);
            }
            if let Some(outcome) = self.delete_crd_if_ours(index).await? {
                self.results[index] = Some(outcome);
            }
        }
        if self.cancel.is_cancelled() {
            return Ok(End::Cancelled);
        }
        self.delete_bundle().await?;
        Ok(if failed { End::Failed } else { End::Done })
    }
}

impl Batch<'_> {
    /// Deletes this context's ResourceBundleState of the app on the cluster (gone already counts as deleted).
    async fn delete_bundle(&self) -> Result<(), SyncError> {
        if !self.record.resources.is_empty()
            && let Ok(api) = self.bundle_api().await
        {
            match api.delete(&self.label, &DeleteParams::background()).await {
                Ok(_) => {}
                Err(err) if is_not_found(&err) => {}
                Err(err) => return Err(err.into()),
            }
        }
        Ok(())
    }

    /// Deletes, last first, the main resources whose objects `keep` (the taking-over context's resources on this
    /// cluster) does not hold. Hooks do not run, CRDs and the ResourceBundleState stay (the taking-over context
    /// carries the same tracking label): the application goes on under the new context. An object without a
    /// namespace of its own lives in its context's namespace: when the successor deploys to another one
    /// (`successor_namespace`), it holds none of this context's namespaced objects of that kind (cluster-scoped
    /// ones it does hold).
    async fn supersede_all(
        &mut self,
        keep: &[ResourceRecord],
        successor_namespace: &str,
    ) -> Result<End, SyncError> {
        let kept: HashSet<_> = keep.iter().map(object_identity).collect();
        let moved = successor_namespace != self.namespace;
        let mut failed = false;
        for index in self.indices(in_main_phase).into_iter().rev() {
            if self.cancel.is_cancelled() {
                return Ok(End::Cancelled);
            }
            let identity = object_identity(&self.record.resources[index]);
            if kept.contains(&identity) {
                let stays =
                    !moved || !identity.2.is_empty() || matches!(self.api(index).await, Ok((_, None)));
                if stays {
                    continue;
                }
            }
            let outcome = self.delete(index).await?;
            failed |= outcome.0 == RsyncStatus::Failed;
            self.results[index] = Some(outcome);
        }
        if moved {
            // The successor's ResourceBundleState is in its own namespace.
            self.delete_bundle().await?;
        }
        Ok(if failed { End::Failed } else { End::Done })
    }
}

/// One attempt at the whole batch. Retryable errors abort the attempt; rejections mark single resources Failed; a
/// cancellation ends it between two requests, with the results so far (so nothing applied is lost track of).
#[allow(clippy::too_many_arguments)] // the batch's parts: what, where, which way, as whom, and its cancellation
async fn attempt(
    inner: &Inner,
    id: ContextId,
    label_id: ContextId,
    record: &ClusterRecord,
    namespace: &str,
    direction: Direction,
    credentials: Option<&UserCredentials>,
    cancel: &CancellationToken,
    hooks_done: &mut HashSet<(usize, HookEvent)>,
) -> Result<Attempt, SyncError> {
    let cluster = record.cluster.as_str();
    // A pull cluster is never dialled: its agent takes the order and reports its outcome.
    if inner.clients.is_pull(cluster).await? {
        return crate::pull::attempt(
            inner,
            id,
            label_id,
            record,
            namespace,
            direction,
            credentials,
            cancel,
        )
        .await;
    }
    if let Some(target) = inner.clients.git_target(cluster).await? {
        if cancel.is_cancelled() {
            let unchanged = vec![None; record.resources.len()];
            return Ok(Attempt {
                certificates: vec![None; unchanged.len()],
                results: unchanged,
                end: End::Cancelled,
                heard: None,
            });
        }
        return crate::gitops::attempt(inner, id, label_id, record, namespace, direction, &target).await;
    }
    let client = inner.clients.client(cluster).await?;
    let user_client = match credentials {
        Some(credentials) => Some(
            inner
                .clients
                .user_client(&inner.contexts, cluster, credentials)
                .await?,
        ),
        None => None,
    };
    let mut batch = Batch {
        inner,
        id,
        cluster,
        client,
        user_client,
        label: format!("{label_id}-{}", record.app),
        params: PatchParams::apply(&inner.config.field_manager).force(),
        namespace,
        record,
        cancel,
        results: vec![None; record.resources.len()],
        certificates: vec![None; record.resources.len()],
        hooks_done,
        previous: None,
        written: 0,
    };
    if cancel.is_cancelled() {
        return Ok(Attempt {
            results: batch.results,
            certificates: batch.certificates,
            end: End::Cancelled,
            heard: None,
        });
    }
    let mut heard = None;
    let end = match direction {
        Direction::Apply => {
            batch
                .apply_all(Some((HookEvent::PreInstall, HookEvent::PostInstall)))
                .await?
        }
        Direction::Repair => batch.apply_all(None).await?,
        Direction::Update(predecessor) => {
            batch.previous = predecessor_record(inner, predecessor, record, namespace, credentials).await?;
            let end = batch
                .apply_all(Some((HookEvent::PreUpgrade, HookEvent::PostUpgrade)))
                .await?;
            // Nothing changed here: the objects are the predecessor's, and so is their status (the bundle,
            // labelled for the whole update chain, reports the next change to this context too).
            if end == End::Done
                && batch.written == 0
                && let Some(previous) = &batch.previous
            {
                heard = previous
                    .cluster_status
                    .clone()
                    .map(|status| (status, previous.heard_at.clone()));
            }
            end
        }
        Direction::Delete => batch.delete_all().await?,
        Direction::Supersede(successor) => {
            let successor_namespace = match inner.contexts.meta(successor).await {
                Ok(meta) => meta.namespace,
                Err(err) => return Err(SyncError::Context(err.to_string())),
            };
            match inner.contexts.cluster(successor, &record.app, cluster).await {
                Ok(successor) => {
                    batch
                        .supersede_all(&successor.resources, &successor_namespace)
                        .await?
                }
                // The successor no longer places the app here: the app leaves the cluster as in a terminate.
                Err(ContextError::NoSuchCluster { .. }) => batch.delete_all().await?,
                Err(err) => return Err(SyncError::Context(err.to_string())),
            }
        }
    };
    let end = if cancel.is_cancelled() {
        End::Cancelled
    } else {
        end
    };
    Ok(Attempt {
        results: batch.results,
        certificates: batch.certificates,
        end,
        heard,
    })
}

/// What one attempt at a batch did.
pub(crate) struct Attempt {
    pub(crate) results: Results,
    pub(crate) certificates: Certificates,
    pub(crate) end: End,
    /// The cluster's status of objects the batch found unchanged, and when it was heard (an update that wrote
    /// nothing on the cluster).
    pub(crate) heard: Option<(JsonText, Option<String>)>,
}

/// At most this many contexts back an update looks for the one that last applied a cluster.
const MAX_PREDECESSOR_HOPS: usize = 16;

/// The record of the same app and cluster in the context an update takes over from, when that context applied
/// it in the same namespace with the same credentials (otherwise nothing counts as unchanged). When that context
/// never reached the cluster (a progressive rollout paused before it), the one before it holds what is there.
pub(crate) async fn predecessor_record(
    inner: &Inner,
    predecessor: ContextId,
    record: &ClusterRecord,
    namespace: &str,
    credentials: Option<&UserCredentials>,
) -> Result<Option<ClusterRecord>, SyncError> {
    let mut predecessor = predecessor;
    for _ in 0..MAX_PREDECESSOR_HOPS {
        let meta = match inner.contexts.meta(predecessor).await {
            Ok(meta) => meta,
            Err(ContextError::NotFound(_)) => return Ok(None),
            Err(err) => return Err(SyncError::Context(err.to_string())),
        };
        if meta.namespace != namespace || meta.credentials.as_ref() != credentials {
            return Ok(None);
        }
        let previous = match inner
            .contexts
            .cluster(predecessor, &record.app, &record.cluster)
            .await
        {
            Ok(previous) => previous,
            Err(ContextError::NoSuchCluster { .. }) => return Ok(None),
            Err(err) => return Err(SyncError::Context(err.to_string())),
        };
        let reached = previous
            .resources
            .iter()
            .any(|resource| resource.status != RsyncStatus::Pending);
        match meta.supersedes {
            Some(older) if !reached => predecessor = older,
            _ => return Ok(Some(previous)),
        }
    }
    Ok(None)
}

/// Writes a batch's outcome: every resource's status and error, the certificates issued to its certificate
/// requests, the cluster's connectivity (with the reason rsync retries, while it does) and, for a record that has
/// no cluster status yet, the status `heard` of the objects the batch found unchanged, in one write.
#[allow(clippy::too_many_arguments)] // one write of everything a batch learnt
async fn record_results(
    inner: &Inner,
    id: ContextId,
    record: &ClusterRecord,
    results: Option<&Results>,
    certificates: Option<&Certificates>,
    connectivity: (Connectivity, Option<String>),
    retrying: Option<(Direction, &Waiting)>,
    heard: Option<&(JsonText, Option<String>)>,
) -> Result<(), SyncError> {
    let time = now_timestamp();
    let (connectivity, reason) = connectivity;
    inner
        .update_cluster(id, &record.app, &record.cluster, |stored| {
            stored.connectivity = connectivity;
            stored.connectivity_reason = reason.clone();
            if results.is_some() {
                // The batch is over: it waits for nothing more.
                stored.waiting = None;
            } else if let Some((_, waiting)) = retrying {
                stored.waiting = Some(waiting.clone());
            }
            if let Some((status, heard_at)) = heard
                && stored.cluster_status.is_none()
            {
                stored.cluster_status = Some(status.clone());
                stored.heard_at.clone_from(heard_at);
            }
            for (index, resource) in stored.resources.iter_mut().enumerate() {
                if let Some(pem) = certificates.and_then(|c| c.get(index)).and_then(Option::as_ref) {
                    resource.certificate = Some(pem.clone());
                }
                if let Some((status, error)) = results.and_then(|r| r.get(index)).and_then(Option::as_ref) {
                    resource.status = *status;
                    resource.error = error.clone();
                    resource.updated = Some(time.clone());
                } else if retrying.is_some_and(|(direction, _)| touched(resource, direction))
                    && !matches!(resource.status, RsyncStatus::Failed)
                {
                    resource.status = RsyncStatus::Retrying;
                    resource.updated = Some(time.clone());
                }
            }
        })
        .await?;
    Ok(())
}

/// How many times a batch tries to record its outcome when the store fails (with the engine's back-off between).
const RECORD_ATTEMPTS: u32 = 20;

/// Applies or deletes one app on one cluster until it succeeds, is rejected, or is cancelled; with a logical
/// cloud user's `credentials`, main resources and hooks as that user.
#[allow(clippy::too_many_arguments)] // the batch's parts: what, where, which way, as whom, and its cancellation
pub(crate) async fn sync_cluster(
    inner: Arc<Inner>,
    id: ContextId,
    app: String,
    cluster: String,
    namespace: String,
    direction: Direction,
    credentials: Option<UserCredentials>,
    cancel: CancellationToken,
) -> BatchOutcome {
    // Every context of an update chain labels its objects with the first one's id, so that an object the update
    // leaves unchanged needs no write and stays in the same ResourceBundleState.
    let label_id = crate::engine::lineage_root(&inner, id).await;
    inner.watchers.hold(&inner, id, &cluster);
    inner.watchers.join_lineage(label_id, id);
    let mut attempt_number = 0u32;
    // When the first attempt of this batch failed with an error worth retrying.
    let mut retrying_since: Option<String> = None;
    let mut hooks_done = HashSet::new();
    loop {
        if cancel.is_cancelled() {
            return BatchOutcome::Cancelled;
        }
        let record = match inner.contexts.cluster(id, &app, &cluster).await {
            Ok(record) => record,
            Err(err) => {
                tracing::warn!(context = %id, app, cluster, error = %err, "cannot read the AppContext");
                return BatchOutcome::Failed;
            }
        };
        let result = {
            let permit = tokio::select! {
                permit = inner.permits.acquire() => permit,
                () = cancel.cancelled() => return BatchOutcome::Cancelled,
            };
            let Ok(_permit) = permit else {
                return BatchOutcome::Cancelled;
            };
            // With replicas: touch the cluster only while this replica still owns the context.
            if !inner.still_owns(id).await {
                inner.fenced_out(id);
                return BatchOutcome::Cancelled;
            }
            attempt(
                &inner,
                id,
                label_id,
                &record,
                &namespace,
                direction,
                credentials.as_ref(),
                &cancel,
                &mut hooks_done,
            )
            .await
        };
        match result {
            Ok(Attempt {
                results,
                certificates,
                end,
                heard,
            }) => {
                // What the batch did must reach the AppContext: a store that is briefly unreachable (etcd
                // restarting) is waited for; a lost claim (with replicas) cancels the batch and ends this.
                let mut record_attempt = 0u32;
                loop {
                    let recorded = record_results(
                        &inner,
                        id,
                        &record,
                        Some(&results),
                        Some(&certificates),
                        (Connectivity::Available, None),
                        None,
                        heard.as_ref(),
                    )
                    .await;
                    let Err(err) = recorded else { break };
                    record_attempt += 1;
                    if cancel.is_cancelled() || record_attempt >= RECORD_ATTEMPTS {
                        tracing::warn!(context = %id, app, cluster, error = %err, "cannot record the batch");
                        break;
                    }
                    tracing::info!(context = %id, app, cluster, error = %err, "cannot record the batch yet; trying again");
                    tokio::select! {
                        () = tokio::time::sleep(inner.config.backoff(record_attempt)) => {}
                        () = cancel.cancelled() => {}
                    }
                }
                return match end {
                    End::Cancelled => BatchOutcome::Cancelled,
                    End::Failed => BatchOutcome::Failed,
                    End::Done => BatchOutcome::Succeeded,
                };
            }
            Err(
                err @ (SyncError::Kubeconfig { .. }
                | SyncError::KubeconfigRefused(_)
                | SyncError::Credentials { .. }
                | SyncError::GitOps { .. }),
            ) => {
                let message = err.to_string();
                let results: Results =
                    vec![Some((RsyncStatus::Failed, Some(message))); record.resources.len()];
                let unchanged = (record.connectivity, record.connectivity_reason.clone());
                let _ =
                    record_results(&inner, id, &record, Some(&results), None, unchanged, None, None).await;
                return BatchOutcome::Failed;
            }
            Err(err) if err.is_retryable() => {
                attempt_number += 1;
                // The cluster's Retry-After, when it gave one, replaces the back-off (within bounds) and is
                // honoured; a cluster that could not be reached at all is probed meanwhile and retried as soon as
                // it answers, so its own attempts back off further.
                let asked = err.retry_after();
                let unreachable = matches!(err, SyncError::Unreachable(_));
                let (delay, reason) = match asked {
                    Some(asked) => {
                        let delay = inner.config.retry_after_delay(asked);
                        let reason = format!(
                            "{}, retrying after {}s",
                            err.retry_reason().unwrap_or_default(),
                            delay.as_secs() + u64::from(delay.subsec_nanos() > 0)
                        );
                        (delay, reason)
                    }
                    None if unreachable => (
                        inner.config.unreachable_delay(),
                        err.retry_reason().unwrap_or_default().to_string(),
                    ),
                    None => (
                        inner.config.backoff(attempt_number),
                        err.retry_reason().unwrap_or_default().to_string(),
                    ),
                };
                // What the batch waits for now, since its first failed attempt (the hook or CRD it waited for
                // before is noted again once the cluster answers), and when it tries next at the latest.
                let since = retrying_since.get_or_insert_with(now_timestamp).clone();
                // A GitOps cluster's batch waits for its Git server, never for the cluster.
                let waited = if matches!(err, SyncError::GitServer(_)) {
                    "the cluster's Git server to take the commit"
                } else {
                    "the cluster to answer"
                };
                let what = if asked.is_some() {
                    format!("{waited} ({reason})")
                } else if unreachable {
                    format!(
                        "{waited} ({reason}; it is probed every {} or so and tried again at once when it answers)",
                        short_duration(inner.config.probe_interval)
                    )
                } else {
                    format!(
                        "{waited} ({reason}; attempts back off up to {} s)",
                        inner.config.backoff_max.as_secs().max(1)
                    )
                };
                let waiting = Waiting {
                    what,
                    since,
                    until: timestamp_after(delay),
                    then: None,
                };
                let retrying = (Connectivity::Retrying, Some(reason.clone()));
                if let Err(write_err) = record_results(
                    &inner,
                    id,
                    &record,
                    None,
                    None,
                    retrying,
                    Some((direction, &waiting)),
                    None,
                )
                .await
                {
                    tracing::warn!(context = %id, app, cluster, error = %write_err, "cannot record Retrying");
                }
                if inner.config.max_retries.is_some_and(|max| attempt_number > max) {
                    let message = format!("Retries exceeded max: {cluster} ({err})");
                    let results: Results =
                        vec![Some((RsyncStatus::Failed, Some(message))); record.resources.len()];
                    let retrying = (Connectivity::Retrying, Some(reason));
                    let _ =
                        record_results(&inner, id, &record, Some(&results), None, retrying, None, None).await;
                    return BatchOutcome::Failed;
                }
                tracing::debug!(context = %id, app, cluster, error = %err, ?delay, "retrying");
                let mut probed =
                    unreachable.then(|| crate::reachability::Reachability::wait(&inner, &cluster));
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = async {
                        match probed.as_mut() {
                            Some(wait) => wait.answered().await,
                            None => std::future::pending().await,
                        }
                    } => {}
                    () = cancel.cancelled() => {
                        // Stopped or superseded while waiting to try again: nothing waits any more.
                        if let Err(err) = inner
                            .update_cluster(id, &record.app, &record.cluster, |stored| stored.waiting = None)
                            .await
                        {
                            tracing::debug!(context = %id, app, cluster, error = %err, "cannot clear what rsync waited for");
                        }
                        return BatchOutcome::Cancelled;
                    }
                }
            }
            Err(err) => {
                tracing::warn!(context = %id, app, cluster, error = %err, "batch failed");
                return BatchOutcome::Failed;
            }
        }
    }
}

/// A short duration as people write it: `200 ms`, `2 s`.
fn short_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{} s", duration.as_secs())
    }
}

/// The time `delay` from now (RFC 3339), as waits record their end.
fn timestamp_after(delay: Duration) -> Option<String> {
    let delay = jiff::SignedDuration::try_from(delay).ok()?;
    let at = jiff::Timestamp::now().checked_add(delay).ok()?;
    Some(emco_model::format_timestamp(at))
}

/// Whether every resource of `app` reports Ready from its clusters' ResourceBundleStates.
pub(crate) fn app_ready(records: &[ClusterRecord], app: &str) -> bool {
    let mut any = false;
    for record in records.iter().filter(|r| r.app == app) {
        any = true;
        if !record_ready(record) {
            return false;
        }
    }
    any
}

/// Whether every main resource of one (app, cluster) record reports Ready from the cluster's
/// ResourceBundleState (hooks and CRDs are not part of an app's readiness: a hook's object may be gone by policy).
pub(crate) fn record_ready(record: &ClusterRecord) -> bool {
    let Some(bundle) = record.heard_status() else {
        return false;
    };
    record.resources.iter().filter(|r| is_main(r)).all(|resource| {
        let gvk = resource.gvk();
        emco_k8s::bundle::find_object(&bundle, &gvk.group, &gvk.kind, &resource.name).is_some_and(|object| {
            let object: &Json = object.get("res").unwrap_or(object);
            emco_k8s::readiness::readiness(&gvk.group, &gvk.kind, object) == emco_model::ReadyStatus::Ready
        })
    })
}

#[cfg(test)]
mod tests {
    use emco_model::{Hook, HookDeletePolicy};
    use serde_json::json;

    use super::*;

    fn hook(events: &[HookEvent]) -> ResourceRole {
        ResourceRole::Hook(Hook {
            events: events.to_vec(),
            weight: 0,
            delete_policies: vec![HookDeletePolicy::BeforeHookCreation],
        })
    }

    #[test]
    fn hooks_are_judged_by_completion_failure_or_readiness() {
        let job = |conditions: Json| json!({"status": {"conditions": conditions}});
        assert_eq!(verdict("batch", "Job", &job(json!([]))), Verdict::Running);
        assert_eq!(
            verdict(
                "batch",
                "Job",
                &job(json!([{"type": "Complete", "status": "True"}]))
            ),
            Verdict::Succeeded
        );
        assert_eq!(
            verdict(
                "batch",
                "Job",
                &job(json!([{"type": "Complete", "status": "False"}]))
            ),
            Verdict::Running
        );
        assert_eq!(
            verdict(
                "batch",
                "Job",
                &job(
                    json!([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}])
                )
            ),
            Verdict::Failed("Job has reached the specified backoff limit".into())
        );
        assert_eq!(
            verdict("", "Pod", &json!({"status": {"phase": "Running"}})),
            Verdict::Running
        );
        assert_eq!(
            verdict("", "Pod", &json!({"status": {"phase": "Succeeded"}})),
            Verdict::Succeeded
        );
        assert_eq!(
            verdict("", "Pod", &json!({"status": {"phase": "Failed"}})),
            Verdict::Failed("the Pod failed".into())
        );
        let deployment = |ready: i64| {
            json!({"metadata": {"generation": 1}, "spec": {"replicas": 2},
                   "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": ready, "availableReplicas": ready}})
        };
        assert_eq!(verdict("apps", "Deployment", &deployment(0)), Verdict::Running);
        assert_eq!(verdict("apps", "Deployment", &deployment(2)), Verdict::Succeeded);
        assert!(waits_for("batch", "Job") && waits_for("apps", "StatefulSet") && waits_for("", "Pod"));
        assert!(!waits_for("", "ConfigMap") && !waits_for("example.com", "Job"));
    }

    #[test]
    fn certificate_requests_are_checked_approved_and_decoded() {
        use base64::Engine as _;
        let manifest = json!({"spec": {"request": "UkVR", "signerName": API_SERVER_CLIENT_SIGNER}});
        let mut object = manifest.clone();
        object["status"] = json!({"conditions": [{"type": "Other", "status": "True"}]});
        assert_eq!(check_request(&object, &manifest), Ok(()));
        let mut other_request = object.clone();
        other_request["spec"]["request"] = json!("T1RIRVI=");
        assert!(check_request(&other_request, &manifest).is_err());
        let mut other_signer = object.clone();
        other_signer["spec"]["signerName"] = json!("example.com/anything");
        assert_eq!(
            check_request(&other_signer, &manifest),
            Err("is for signer 'example.com/anything'; emco approves only kubernetes.io/kube-apiserver-client requests".into())
        );

        // The approval keeps the conditions there were and adds emco's.
        let body = approval_body(&object);
        assert_eq!(body["status"]["conditions"][0]["type"], "Other");
        let approved = csr_condition(&body, "Approved").unwrap();
        assert_eq!(approved["reason"], APPROVAL_REASON);
        assert!(csr_condition(&object, "Approved").is_none());
        let not_yet = json!({"status": {"conditions": [{"type": "Denied", "status": "False"}]}});
        assert!(csr_condition(&not_yet, "Denied").is_none());
        assert_eq!(
            condition_text(&json!({"reason": "AdminDenied", "message": ""})),
            "AdminDenied"
        );

        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let issued =
            json!({"status": {"certificate": base64::engine::general_purpose::STANDARD.encode(pem)}});
        assert_eq!(issued_certificate(&issued), Ok(Some(pem.to_string())));
        assert_eq!(issued_certificate(&object), Ok(None));
        assert!(issued_certificate(&json!({"status": {"certificate": "not base64!"}})).is_err());
        let key = json!({"status": {"certificate": base64::engine::general_purpose::STANDARD.encode("-----BEGIN PRIVATE KEY-----")}});
        assert!(issued_certificate(&key).is_err());
    }

    #[test]
    fn only_what_the_predecessor_applied_unchanged_is_skipped() {
        let config_map = |name: &str, value: &str| {
            ResourceRecord::pending(
                name,
                "ConfigMap",
                "v1",
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": value}}),
            )
        };
        let applied = |mut resource: ResourceRecord| {
            resource.status = RsyncStatus::Applied;
            resource
        };
        let mut failed = config_map("failed", "v");
        failed.status = RsyncStatus::Failed;
        let previous = ClusterRecord::pending(
            "app",
            "p+c",
            vec![
                applied(config_map("changed", "old")),
                applied(config_map("same", "v")),
                failed,
                applied(config_map("hook", "v")).with_role(hook(&[HookEvent::PreInstall])),
            ],
        );
        let record = ClusterRecord::pending(
            "app",
            "p+c",
            vec![
                config_map("new", "v"),
                config_map("same", "v"),
                config_map("changed", "new"),
                config_map("failed", "v"),
                config_map("hook", "v"),
            ],
        );
        assert_eq!(
            unchanged_resources(&record, Some(&previous)),
            [None, Some(1), None, None, None]
        );
        assert_eq!(unchanged_resources(&record, None), [None; 5]);
    }

    #[test]
    fn phases_follow_roles() {
        let resource = |kind: &str, api_version: &str, role: ResourceRole| {
            ResourceRecord::pending("x", kind, api_version, json!({})).with_role(role)
        };
        let crd = resource(
            "CustomResourceDefinition",
            "apiextensions.k8s.io/v1",
            ResourceRole::Crd,
        );
        let legacy_crd = resource(
            "CustomResourceDefinition",
            "apiextensions.k8s.io/v1",
            ResourceRole::Main,
        );
        let main = resource("ConfigMap", "v1", ResourceRole::Main);
        let install = resource("Job", "batch/v1", hook(&[HookEvent::PreInstall]));
        let delete = resource("Job", "batch/v1", hook(&[HookEvent::PostDelete]));
        let upgrade = resource("Job", "batch/v1", hook(&[HookEvent::PreUpgrade]));
        assert!(in_crd_phase(&crd) && in_crd_phase(&legacy_crd) && !in_crd_phase(&install));
        assert!(is_main(&main) && !is_main(&legacy_crd) && !is_main(&install));
        let certificate = resource(
            "CertificateSigningRequest",
            "certificates.k8s.io/v1",
            ResourceRole::Certificate,
        );
        assert!(in_main_phase(&certificate) && in_main_phase(&main) && !is_main(&certificate));
        assert!(!in_main_phase(&crd) && !in_main_phase(&install) && !in_crd_phase(&certificate));
        assert!(touched(&certificate, Direction::Apply) && touched(&certificate, Direction::Delete));
        assert!(hook_at(&install, HookEvent::PreInstall) && !hook_at(&install, HookEvent::PostInstall));
        // Instantiate leaves delete and upgrade hooks alone; terminate removes every hook object.
        assert!(touched(&install, Direction::Apply) && !touched(&delete, Direction::Apply));
        assert!(!touched(&upgrade, Direction::Apply) && touched(&upgrade, Direction::Delete));
        assert!(touched(&main, Direction::Apply) && touched(&crd, Direction::Delete));
    }
}
