//! kstatus-grade health of one Kubernetes object, with a one-line message an operator can act on
//! (`"Deployment firewall: 1 of 3 updated replicas available"`). Per-kind rules for the built-in kinds and emco's
//! ResourceBundleState; every other kind by the conventions kstatus documents (`deletionTimestamp`,
//! `observedGeneration`, `Stalled`/`Reconciling`/`Ready`/`Available` conditions). Pure: no clock, no I/O; reads only
//! fixed paths of the object and at most [`MAX_LIST_ENTRIES`] entries of any list, so any object is cheap to assess.

use emco_model::ReadyStatus;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// How many entries of a list in an object (conditions, container statuses, quota resources) are read: a real
/// object has a handful; more are ignored so a hostile object cannot make assessment slow.
pub const MAX_LIST_ENTRIES: usize = 256;
/// The longest a text taken from the object (name, reason, condition message) may be inside a message, in
/// characters; 253 is the longest Kubernetes object name.
pub const MAX_FIELD_CHARS: usize = 253;
/// How many objects of a ResourceBundleState are assessed: a bundle reports one app's objects in one cluster.
pub const MAX_BUNDLE_OBJECTS: usize = 10_000;
/// The longest message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 1024;

/// What an object's state means for whoever waits on it (kstatus's statuses, `Current` named `Ready`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Health {
    /// The object does what it was asked to do.
    Ready,
    /// Not yet: a rollout, scheduling, provisioning or a controller that has not caught up.
    InProgress,
    /// It will not get there without someone acting (a crash loop, a failed job, a denied request).
    Failed,
    /// Being deleted.
    Terminating,
    /// The object says too little, or says it does not know.
    Unknown,
}

impl Health {
    /// EMCO's two-valued readiness: Ready is Ready, everything else NotReady.
    #[must_use]
    pub fn ready_status(self) -> ReadyStatus {
        ReadyStatus::from(self)
    }
}

impl From<Health> for ReadyStatus {
    fn from(health: Health) -> Self {
        match health {
            Health::Ready => ReadyStatus::Ready,
            Health::InProgress | Health::Failed | Health::Terminating | Health::Unknown => {
                ReadyStatus::NotReady
            }
        }
    }
}

/// The health of one object and why, in one line naming its kind and name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assessment {
    /// The verdict.
    pub health: Health,
    /// One line: `"<Kind> <name>: <what holds it up or what is wrong>"`.
    pub message: String,
}

/// What the caller knows about custom kinds that the conventions do not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hints {
    /// The condition type whose `True` means ready (e.g. `Synced`, `Healthy`) for kinds without a rule of their
    /// own; `False` or absent then means in progress. Without it, `Ready` and then `Available` decide.
    pub ready_condition: Option<String>,
}

impl Hints {
    /// Hints naming the condition that means ready.
    #[must_use]
    pub fn ready_condition(mut self, condition_type: impl Into<String>) -> Self {
        self.ready_condition = Some(condition_type.into());
        self
    }
}

/// The health of one object by kstatus's rules (no hints).
#[must_use]
pub fn assess(object: &Json) -> Assessment {
    assess_with(object, &Hints::default())
}

/// The health of one object; `hints` may name the condition that means ready for custom kinds.
#[must_use]
pub fn assess_with(object: &Json, hints: &Hints) -> Assessment {
    if !object.is_object() {
        return Assessment {
            health: Health::Unknown,
            message: "not a Kubernetes object (not a map)".into(),
        };
    }
    let Some(kind) = object["kind"].as_str().filter(|kind| !kind.is_empty()) else {
        return Assessment {
            health: Health::Unknown,
            message: "not a Kubernetes object (no kind)".into(),
        };
    };
    let group = object["apiVersion"]
        .as_str()
        .and_then(|api_version| api_version.rsplit_once('/'))
        .map_or("", |(group, _)| group);
    let name = object["metadata"]["name"].as_str().unwrap_or("(unnamed)");
    let subject = format!("{} {}", clip(kind), clip(name));
    let (health, detail) = verdict(group, kind, object, hints);
    Assessment {
        health,
        message: one_line(&format!("{subject}: {detail}")),
    }
}

/// The verdict and its detail (without the subject).
fn verdict(group: &str, kind: &str, object: &Json, hints: &Hints) -> (Health, String) {
    let metadata = &object["metadata"];
    let status = &object["status"];
    if let Some(since) = metadata["deletionTimestamp"].as_str() {
        return (
            Health::Terminating,
            format!("terminating (deletion requested at {})", clip(since)),
        );
    }
    if let (Some(generation), Some(observed)) = (
        metadata["generation"].as_i64(),
        status["observedGeneration"].as_i64(),
    ) && observed < generation
    {
        return (
            Health::InProgress,
            format!("generation {generation} not yet observed by its controller (observed {observed})"),
        );
    }
    let conditions = Conditions(status);
    if let Some(stalled) = conditions.with("Stalled", "True") {
        return (Health::Failed, format!("stalled{}", stalled.why()));
    }
    if let Some(reconciling) = conditions.with("Reconciling", "True") {
        return (Health::InProgress, format!("reconciling{}", reconciling.why()));
    }
    match (group, kind) {
        ("apps" | "extensions", "Deployment") => deployment(object),
        ("apps" | "extensions", "ReplicaSet") => replica_set(object),
        ("apps", "StatefulSet") => stateful_set(object),
        ("apps" | "extensions", "DaemonSet") => daemon_set(object),
        ("", "Pod") => pod(status),
        ("batch", "Job") => job(object),
        ("batch", "CronJob") => cron_job(object),
        ("", "PersistentVolumeClaim") => persistent_volume_claim(object),
        ("", "Service") => service(object),
        ("networking.k8s.io" | "extensions", "Ingress") => ingress(status),
        ("policy", "PodDisruptionBudget") => pod_disruption_budget(status),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => custom_resource_definition(status),
        ("", "Namespace") => namespace(status),
        ("certificates.k8s.io", "CertificateSigningRequest") => certificate_signing_request(status),
        ("", "ResourceQuota") => resource_quota(status),
        (
            "",
            "ConfigMap" | "Secret" | "ServiceAccount" | "Endpoints" | "LimitRange" | "PersistentVolume"
            | "PodTemplate",
        )
        | ("rbac.authorization.k8s.io", "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding")
        | ("networking.k8s.io", "NetworkPolicy" | "IngressClass")
        | ("storage.k8s.io", "StorageClass")
        | ("scheduling.k8s.io", "PriorityClass") => (Health::Ready, "present".into()),
        (crate::RBS_GROUP, crate::RBS_KIND) => resource_bundle_state(status, hints),
        _ => by_conditions(status, hints),
    }
}

/// The conditions of a status (the first [`MAX_LIST_ENTRIES`]).
#[derive(Clone, Copy)]
struct Conditions<'a>(&'a Json);

impl<'a> Conditions<'a> {
    fn iter(self) -> impl Iterator<Item = Condition<'a>> {
        self.0["conditions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .take(MAX_LIST_ENTRIES)
            .map(Condition)
    }

    /// The condition of this type, whatever its status.
    fn of(self, condition_type: &str) -> Option<Condition<'a>> {
        self.iter().find(|c| c.0["type"] == condition_type)
    }

    /// Whether the status holds no condition at all.
    fn is_empty(self) -> bool {
        self.iter().next().is_none()
    }

    /// The condition of this type if it has this status.
    fn with(self, condition_type: &str, status: &str) -> Option<Condition<'a>> {
        self.of(condition_type).filter(|c| c.0["status"] == status)
    }
}

#[derive(Clone, Copy)]
struct Condition<'a>(&'a Json);

impl Condition<'_> {
    fn text(self, field: &str) -> Option<String> {
        self.0[field].as_str().filter(|text| !text.is_empty()).map(clip)
    }

    /// ` (Reason: message)`, ` (Reason)`, ` (message)` or nothing.
    fn why(self) -> String {
        match (self.text("reason"), self.text("message")) {
            (Some(reason), Some(message)) => format!(" ({reason}: {message})"),
            (Some(text), None) | (None, Some(text)) => format!(" ({text})"),
            (None, None) => String::new(),
        }
    }
}

fn int(value: &Json) -> Option<i64> {
    value.as_i64()
}

fn count(value: &Json) -> i64 {
    int(value).unwrap_or(0)
}

fn plural(number: i64, one: &str, many: &str) -> String {
    if number == 1 {
        format!("{number} {one}")
    } else {
        format!("{number} {many}")
    }
}

/// kstatus's extra-pods rule for workloads: replicas beyond those asked for are still being removed.
fn extra_replicas(existing: i64, replicas: i64) -> Option<(Health, String)> {
    (existing > replicas).then(|| {
        (
            Health::InProgress,
            format!(
                "{} pending termination",
                plural(existing - replicas, "extra replica", "extra replicas")
            ),
        )
    })
}

fn deployment(object: &Json) -> (Health, String) {
    let (spec, status) = (&object["spec"], &object["status"]);
    let conditions = Conditions(status);
    if let Some(progressing) = conditions.with("Progressing", "False")
        && progressing.0["reason"] == "ProgressDeadlineExceeded"
    {
        return (Health::Failed, format!("rollout stuck{}", progressing.why()));
    }
    if let Some(failure) = conditions.with("ReplicaFailure", "True") {
        return (Health::Failed, format!("cannot create pods{}", failure.why()));
    }
    if spec["paused"].as_bool() == Some(true) {
        return (Health::Ready, "rollout paused".into());
    }
    let replicas = int(&spec["replicas"]).unwrap_or(1);
    let updated = count(&status["updatedReplicas"]);
    let available = count(&status["availableReplicas"]);
    let ready = count(&status["readyReplicas"]);
    let existing = count(&status["replicas"]);
    if updated < replicas {
        return (
            Health::InProgress,
            format!("{updated} of {replicas} replicas updated"),
        );
    }
    if existing > updated {
        return (
            Health::InProgress,
            format!(
                "{} pending termination",
                plural(existing.saturating_sub(updated), "old replica", "old replicas")
            ),
        );
    }
    if available < updated {
        return (
            Health::InProgress,
            format!("{available} of {updated} updated replicas available"),
        );
    }
    if ready < replicas {
        return (
            Health::InProgress,
            format!("{ready} of {replicas} replicas ready"),
        );
    }
    if let Some(verdict) = extra_replicas(existing, replicas) {
        return verdict;
    }
    // kstatus: with a progress deadline the controller's Progressing condition must say the new ReplicaSet is
    // available, and Available must be True. A cluster that writes no conditions at all (an older or simulated
    // one) is judged by the counters above.
    if !conditions.is_empty() {
        let deadline = int(&spec["progressDeadlineSeconds"]).unwrap_or(i64::from(i32::MAX));
        let progressed = deadline == i64::from(i32::MAX)
            || conditions
                .with("Progressing", "True")
                .is_some_and(|c| c.0["reason"] == "NewReplicaSetAvailable");
        if !progressed {
            let why = conditions.of("Progressing").map(|c| c.why()).unwrap_or_default();
            return (Health::InProgress, format!("rollout not finished{why}"));
        }
        if conditions.with("Available", "True").is_none() {
            let why = conditions.of("Available").map(|c| c.why()).unwrap_or_default();
            return (Health::InProgress, format!("not available{why}"));
        }
    }
    (
        Health::Ready,
        format!("{available} of {replicas} replicas available"),
    )
}

fn replica_set(object: &Json) -> (Health, String) {
    let (spec, status) = (&object["spec"], &object["status"]);
    // kstatus: a ReplicaFailure (a quota, an admission webhook) is in progress: the controller keeps trying.
    if let Some(failure) = Conditions(status).with("ReplicaFailure", "True") {
        return (
            Health::InProgress,
            format!("cannot create pods yet{}", failure.why()),
        );
    }
    let replicas = int(&spec["replicas"]).unwrap_or(1);
    let existing = count(&status["replicas"]);
    let ready = count(&status["readyReplicas"]);
    let available = count(&status["availableReplicas"]);
    if existing < replicas {
        return (
            Health::InProgress,
            format!("{existing} of {replicas} replicas created"),
        );
    }
    if ready < replicas {
        return (
            Health::InProgress,
            format!("{ready} of {replicas} replicas ready"),
        );
    }
    if available < replicas {
        return (
            Health::InProgress,
            format!("{available} of {replicas} replicas available"),
        );
    }
    if let Some(verdict) = extra_replicas(existing, replicas) {
        return verdict;
    }
    (Health::Ready, format!("{ready} of {replicas} replicas ready"))
}

fn stateful_set(object: &Json) -> (Health, String) {
    let (spec, status) = (&object["spec"], &object["status"]);
    let replicas = int(&spec["replicas"]).unwrap_or(1);
    let existing = count(&status["replicas"]);
    let ready = count(&status["readyReplicas"]);
    let updated = count(&status["updatedReplicas"]);
    if existing < replicas {
        return (
            Health::InProgress,
            format!("{existing} of {replicas} replicas created"),
        );
    }
    if ready < replicas {
        return (
            Health::InProgress,
            format!("{ready} of {replicas} replicas ready"),
        );
    }
    if let Some(verdict) = extra_replicas(existing, replicas) {
        return verdict;
    }
    let strategy = &spec["updateStrategy"];
    if strategy["type"] == "OnDelete" {
        return (
            Health::Ready,
            format!("{ready} of {replicas} replicas ready (OnDelete: pods update when deleted)"),
        );
    }
    // kstatus: a partition given (even 0) is a partitioned rollout: the replicas above it updated is done.
    if int(&strategy["rollingUpdate"]["partition"]).is_some() {
        let partition = count(&strategy["rollingUpdate"]["partition"]).clamp(0, replicas.max(0));
        let to_update = replicas - partition;
        if updated < to_update {
            return (
                Health::InProgress,
                format!("{updated} of {to_update} replicas updated (partition {partition})"),
            );
        }
        return (
            Health::Ready,
            format!("partitioned rollout complete ({updated} of {replicas} replicas updated)"),
        );
    }
    let current_revision = status["currentRevision"].as_str().unwrap_or_default();
    let update_revision = status["updateRevision"].as_str().unwrap_or_default();
    if !update_revision.is_empty() && current_revision != update_revision {
        return (
            Health::InProgress,
            format!(
                "{updated} of {replicas} replicas updated to revision {}",
                clip(update_revision)
            ),
        );
    }
    let current = count(&status["currentReplicas"]);
    if current < replicas {
        return (
            Health::InProgress,
            format!("{current} of {replicas} replicas at the current revision"),
        );
    }
    (Health::Ready, format!("{ready} of {replicas} replicas ready"))
}

fn daemon_set(object: &Json) -> (Health, String) {
    let status = &object["status"];
    let Some(desired) = int(&status["desiredNumberScheduled"]) else {
        return (Health::InProgress, "not yet scheduled by its controller".into());
    };
    let updated = count(&status["updatedNumberScheduled"]);
    let available = count(&status["numberAvailable"]);
    let ready = count(&status["numberReady"]);
    let on_delete = object["spec"]["updateStrategy"]["type"] == "OnDelete";
    if updated < desired && !on_delete {
        return (Health::InProgress, format!("{updated} of {desired} pods updated"));
    }
    if available < desired {
        return (
            Health::InProgress,
            format!("{available} of {desired} pods available"),
        );
    }
    if ready < desired {
        return (Health::InProgress, format!("{ready} of {desired} pods ready"));
    }
    (Health::Ready, format!("{ready} of {desired} pods ready"))
}

/// Container waiting reasons that do not resolve by waiting.
const FAILED_WAITING_REASONS: &[&str] = &[
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "RunContainerError",
];

fn pod(status: &Json) -> (Health, String) {
    let containers = ["initContainerStatuses", "containerStatuses"]
        .iter()
        .flat_map(|field| {
            status[*field]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .take(MAX_LIST_ENTRIES)
        })
        .collect::<Vec<_>>();
    let phase = status["phase"].as_str().unwrap_or_default();
    match phase {
        "Succeeded" => return (Health::Ready, "completed".into()),
        "Failed" => {
            let reason = [status["reason"].as_str(), status["message"].as_str()]
                .into_iter()
                .flatten()
                .filter(|text| !text.is_empty())
                .map(clip)
                .collect::<Vec<_>>()
                .join(": ");
            return (
                Health::Failed,
                if reason.is_empty() {
                    "failed".into()
                } else {
                    format!("failed ({reason})")
                },
            );
        }
        "Unknown" => return (Health::Unknown, "state unknown (its node does not report)".into()),
        _ => {}
    }
    for container in &containers {
        let waiting = &container["state"]["waiting"];
        if let Some(reason) = waiting["reason"].as_str()
            && FAILED_WAITING_REASONS.contains(&reason)
        {
            let name = clip(container["name"].as_str().unwrap_or("?"));
            let restarts = count(&container["restartCount"]);
            let detail = if restarts > 0 {
                format!(" (restarted {})", plural(restarts, "time", "times"))
            } else {
                waiting["message"]
                    .as_str()
                    .filter(|message| !message.is_empty())
                    .map(|message| format!(" ({})", clip(message)))
                    .unwrap_or_default()
            };
            return (Health::Failed, format!("container {name} {reason}{detail}"));
        }
    }
    let conditions = Conditions(status);
    if let Some(unscheduled) = conditions.with("PodScheduled", "False") {
        // kstatus fails a pod the scheduler calls Unschedulable once it is 15 s old; verdicts read no clock, so
        // it is Failed at once (the scheduler keeps trying; the verdict changes when it succeeds).
        if unscheduled.0["reason"] == "Unschedulable" {
            return (Health::Failed, format!("unschedulable{}", unscheduled.why()));
        }
        return (Health::InProgress, format!("not scheduled{}", unscheduled.why()));
    }
    if phase.is_empty() {
        return (Health::InProgress, "not yet scheduled".into());
    }
    let main_containers = status["containerStatuses"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let total = main_containers.len();
    let ready = main_containers
        .iter()
        .take(MAX_LIST_ENTRIES)
        .filter(|container| container["ready"] == true)
        .count();
    if conditions.with("Ready", "True").is_some() {
        return (
            Health::Ready,
            format!("running, {ready} of {total} containers ready"),
        );
    }
    if phase == "Pending" {
        let waiting = containers
            .iter()
            .find_map(|container| {
                let reason = container["state"]["waiting"]["reason"].as_str()?;
                Some(format!(
                    " (container {} {})",
                    clip(container["name"].as_str().unwrap_or("?")),
                    clip(reason)
                ))
            })
            .unwrap_or_default();
        return (Health::InProgress, format!("pending{waiting}"));
    }
    (
        Health::InProgress,
        format!(
            "{phase}, {ready} of {total} containers ready",
            phase = clip(phase)
        ),
    )
}

fn job(object: &Json) -> (Health, String) {
    let (spec, status) = (&object["spec"], &object["status"]);
    let conditions = Conditions(status);
    let succeeded = count(&status["succeeded"]);
    let failed = count(&status["failed"]);
    let active = count(&status["active"]);
    let completions = int(&spec["completions"]).unwrap_or(1);
    for failure in ["Failed", "FailureTarget"] {
        if let Some(condition) = conditions.with(failure, "True") {
            let reason = condition
                .text("reason")
                .unwrap_or_else(|| "no reason given".into());
            return (Health::Failed, format!("failed ({reason})"));
        }
    }
    if conditions.with("Complete", "True").is_some()
        || conditions.with("SuccessCriteriaMet", "True").is_some()
    {
        return (
            Health::Ready,
            format!("complete ({succeeded} of {completions} succeeded)"),
        );
    }
    if conditions.with("Suspended", "True").is_some() || spec["suspend"].as_bool() == Some(true) {
        return (Health::InProgress, "suspended".into());
    }
    // Without conditions (an older or simulated cluster), the counters decide as EMCO's rule does.
    let backoff_limit = int(&spec["backoffLimit"]).unwrap_or(6);
    if failed > backoff_limit {
        return (
            Health::Failed,
            format!(
                "failed ({} beyond the backoff limit {backoff_limit})",
                plural(failed, "failure", "failures")
            ),
        );
    }
    if active == 0 && succeeded >= completions {
        return (
            Health::Ready,
            format!("complete ({succeeded} of {completions} succeeded)"),
        );
    }
    // kstatus: a Job that started and neither completed nor failed is Current (it is doing its work).
    if status["startTime"].is_string() {
        return (
            Health::Ready,
            format!("running: {active} active, {succeeded} of {completions} succeeded, {failed} failed"),
        );
    }
    (
        Health::InProgress,
        format!("{active} active, {succeeded} of {completions} succeeded, {failed} failed"),
    )
}

fn cron_job(object: &Json) -> (Health, String) {
    let schedule = clip(object["spec"]["schedule"].as_str().unwrap_or("?"));
    let active = object["status"]["active"].as_array().map_or(0, Vec::len);
    let suspended = if object["spec"]["suspend"].as_bool() == Some(true) {
        ", suspended"
    } else {
        ""
    };
    let last = object["status"]["lastScheduleTime"]
        .as_str()
        .map(|time| format!(", last run {}", clip(time)))
        .unwrap_or_default();
    (
        Health::Ready,
        format!("schedule \"{schedule}\", {active} active{last}{suspended}"),
    )
}

fn persistent_volume_claim(object: &Json) -> (Health, String) {
    let status = &object["status"];
    match status["phase"].as_str() {
        Some("Bound") => {
            let volume = object["spec"]["volumeName"]
                .as_str()
                .map(|volume| format!(" to {}", clip(volume)))
                .unwrap_or_default();
            (Health::Ready, format!("bound{volume}"))
        }
        Some("Lost") => (
            Health::Failed,
            "lost its volume (the bound PersistentVolume is gone)".into(),
        ),
        Some("Pending") | None => {
            let class = object["spec"]["storageClassName"]
                .as_str()
                .map(|class| format!(" of storage class {}", clip(class)))
                .unwrap_or_default();
            (
                Health::InProgress,
                format!("pending, waiting for a volume{class}"),
            )
        }
        Some(other) => (Health::Unknown, format!("phase {}", clip(other))),
    }
}

fn has_entries(value: &Json) -> bool {
    value.as_array().is_some_and(|list| !list.is_empty())
}

fn first_address(ingress: &Json) -> Option<String> {
    let first = ingress.as_array()?.first()?;
    first["ip"]
        .as_str()
        .or_else(|| first["hostname"].as_str())
        .map(clip)
}

fn service(object: &Json) -> (Health, String) {
    let (spec, status) = (&object["spec"], &object["status"]);
    let service_type = spec["type"].as_str().unwrap_or("ClusterIP");
    if service_type == "ExternalName" {
        return (
            Health::Ready,
            format!(
                "external name {}",
                clip(spec["externalName"].as_str().unwrap_or("?"))
            ),
        );
    }
    // kstatus: only a LoadBalancer without a cluster IP is in progress (its address may come later; EMCO's
    // readiness rule still waits for it).
    let Some(cluster_ip) = spec["clusterIP"].as_str().filter(|ip| !ip.is_empty()) else {
        if service_type == "LoadBalancer" {
            return (Health::InProgress, "no cluster IP assigned yet".into());
        }
        return (Health::Ready, "no cluster IP reported".into());
    };
    if service_type == "LoadBalancer" {
        if let Some(address) = first_address(&status["loadBalancer"]["ingress"]) {
            return (Health::Ready, format!("load balancer at {address}"));
        }
        if has_entries(&spec["externalIPs"]) {
            return (Health::Ready, "reachable on its external IPs".into());
        }
        return (
            Health::Ready,
            format!("cluster IP {}, load balancer address pending", clip(cluster_ip)),
        );
    }
    (Health::Ready, format!("cluster IP {}", clip(cluster_ip)))
}

fn ingress(status: &Json) -> (Health, String) {
    match first_address(&status["loadBalancer"]["ingress"]) {
        Some(address) => (Health::Ready, format!("served at {address}")),
        None => (
            Health::InProgress,
            "waiting for an address from the ingress controller".into(),
        ),
    }
}

fn pod_disruption_budget(status: &Json) -> (Health, String) {
    let (Some(healthy), Some(desired)) = (int(&status["currentHealthy"]), int(&status["desiredHealthy"]))
    else {
        // kstatus: a budget whose generation the controller observed is Current.
        if int(&status["observedGeneration"]).is_some() {
            return (Health::Ready, "observed by the disruption controller".into());
        }
        return (
            Health::InProgress,
            "not yet observed by the disruption controller".into(),
        );
    };
    if healthy < desired {
        return (
            Health::InProgress,
            format!("{healthy} of {desired} required pods healthy"),
        );
    }
    let allowed = count(&status["disruptionsAllowed"]);
    (
        Health::Ready,
        format!("{} allowed", plural(allowed, "disruption", "disruptions")),
    )
}

fn custom_resource_definition(status: &Json) -> (Health, String) {
    let conditions = Conditions(status);
    if let Some(rejected) = conditions.with("NamesAccepted", "False") {
        return (Health::Failed, format!("names not accepted{}", rejected.why()));
    }
    if conditions.with("Established", "True").is_some() {
        return (Health::Ready, "established".into());
    }
    (Health::InProgress, "not yet established".into())
}

fn namespace(status: &Json) -> (Health, String) {
    if status["phase"] == "Terminating" {
        let stuck = Conditions(status)
            .iter()
            .find(|c| c.0["status"] == "True")
            .map(Condition::why)
            .unwrap_or_default();
        return (Health::Terminating, format!("terminating{stuck}"));
    }
    (Health::Ready, "active".into())
}

fn certificate_signing_request(status: &Json) -> (Health, String) {
    let conditions = Conditions(status);
    if let Some(denied) = conditions.with("Denied", "True") {
        return (Health::Failed, format!("denied{}", denied.why()));
    }
    if let Some(failed) = conditions.with("Failed", "True") {
        return (Health::Failed, format!("signing failed{}", failed.why()));
    }
    if conditions.with("Approved", "True").is_some() {
        if status["certificate"]
            .as_str()
            .is_some_and(|certificate| !certificate.is_empty())
        {
            return (Health::Ready, "approved and issued".into());
        }
        return (
            Health::InProgress,
            "approved, waiting for the signer to issue the certificate".into(),
        );
    }
    (Health::InProgress, "waiting for approval".into())
}

fn resource_quota(status: &Json) -> (Health, String) {
    let Some(hard) = status["hard"].as_object() else {
        return (
            Health::InProgress,
            "usage not yet calculated by the quota controller".into(),
        );
    };
    let used = &status["used"];
    let at_limit = hard
        .iter()
        .take(MAX_LIST_ENTRIES)
        .filter(|(resource, limit)| used[resource.as_str()] == **limit)
        .map(|(resource, limit)| format!("{} {}", clip(resource), clip(limit.as_str().unwrap_or("?"))))
        .collect::<Vec<_>>();
    if at_limit.is_empty() {
        return (
            Health::Ready,
            format!(
                "{} limited, none at its limit",
                plural(
                    i64::try_from(hard.len()).unwrap_or(i64::MAX),
                    "resource",
                    "resources"
                )
            ),
        );
    }
    (Health::Ready, format!("at its limit: {}", at_limit.join(", ")))
}

/// A ResourceBundleState by the objects it reports (EMCO's own monitor never computes its `ready` field, so the
/// objects decide; `ready` only when it reports none): any failed → Failed, else any unknown → Unknown, else any
/// not ready → InProgress. Generic entries count by their `res` object when it is one (emco's monitor), as present
/// otherwise (EMCO's base64 `res`); bundles inside a bundle count as present.
fn resource_bundle_state(status: &Json, hints: &Hints) -> (Health, String) {
    if !status.is_object() {
        return (Health::InProgress, "not yet reported by the monitor".into());
    }
    let typed = crate::bundle::TYPED_ARRAYS
        .iter()
        .flat_map(|(field, group, kind)| {
            status[*field]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(move |object| (*group, *kind, object))
        });
    let generic = status["resourceStatuses"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|entry| {
            (
                entry["group"].as_str().unwrap_or_default(),
                entry["kind"].as_str().unwrap_or_default(),
                entry,
            )
        });
    let mut total = 0_i64;
    let mut failed = Vec::new();
    let mut unknown = Vec::new();
    let mut not_ready = Vec::new();
    for (group, kind, object) in typed.chain(generic).take(MAX_BUNDLE_OBJECTS) {
        total += 1;
        // A generic entry names the object and carries it in `res`.
        let name = object["metadata"]["name"]
            .as_str()
            .or_else(|| object["name"].as_str())
            .unwrap_or("(unnamed)");
        // Bundles inside a bundle, and EMCO's base64 `res`, count as present.
        let object = match object.get("res") {
            _ if kind == crate::RBS_KIND => continue,
            Some(res @ Json::Object(_)) => res,
            Some(_) => continue,
            None => object,
        };
        let (health, detail) = verdict(group, kind, object, hints);
        let line = || format!("{} {}: {detail}", clip(kind), clip(name));
        match health {
            Health::Ready => {}
            Health::Failed => failed.push(line()),
            Health::Unknown => unknown.push(line()),
            Health::InProgress | Health::Terminating => not_ready.push(line()),
        }
    }
    if total == 0 {
        let resources = count(&status["resourceCount"]);
        return match status["ready"].as_bool() {
            Some(true) => (
                Health::Ready,
                format!(
                    "{} reported, all ready",
                    plural(resources, "resource", "resources")
                ),
            ),
            _ => (Health::InProgress, "no objects reported yet".into()),
        };
    }
    let objects = plural(total, "object", "objects");
    for (health, list, what) in [
        (Health::Failed, &failed, "failed"),
        (Health::Unknown, &unknown, "unknown"),
        (Health::InProgress, &not_ready, "not ready"),
    ] {
        if let Some(first) = list.first() {
            return (
                health,
                format!("{} of {objects} {what}; first: {first}", list.len()),
            );
        }
    }
    (Health::Ready, format!("{objects}, all ready"))
}

/// Kinds without a rule: the hinted condition, else `Ready`, else `Available`, else present means ready.
fn by_conditions(status: &Json, hints: &Hints) -> (Health, String) {
    let conditions = Conditions(status);
    if let Some(condition_type) = &hints.ready_condition {
        let shown = clip(condition_type);
        return match conditions.of(condition_type) {
            Some(condition) if condition.0["status"] == "True" => (Health::Ready, shown),
            Some(condition) => (Health::InProgress, format!("not {shown}{}", condition.why())),
            None => (Health::InProgress, format!("waiting for condition {shown}")),
        };
    }
    for condition_type in ["Ready", "Available"] {
        if let Some(condition) = conditions.of(condition_type) {
            return if condition.0["status"] == "True" {
                (Health::Ready, condition_type.to_lowercase())
            } else {
                (
                    Health::InProgress,
                    format!("not {}{}", condition_type.to_lowercase(), condition.why()),
                )
            };
        }
    }
    (Health::Ready, "present (no readiness conditions)".into())
}

/// A text from the object, at most [`MAX_FIELD_CHARS`] characters.
fn clip(text: &str) -> String {
    if text.chars().count() <= MAX_FIELD_CHARS {
        return text.to_string();
    }
    let mut clipped: String = text.chars().take(MAX_FIELD_CHARS).collect();
    clipped.push('…');
    clipped
}

/// The message on one line (control characters as spaces), at most [`MAX_MESSAGE_CHARS`] characters.
fn one_line(text: &str) -> String {
    let mut line: String = text
        .chars()
        .take(MAX_MESSAGE_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(MAX_MESSAGE_CHARS).is_some() {
        line.push('…');
    }
    line
}
