//! Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), so `kubectl get` shows the
//! familiar columns (pods READY/STATUS/RESTARTS, deployments READY/UP-TO-DATE/AVAILABLE, quotas REQUEST/LIMIT)
//! instead of NAME/AGE only.

use serde_json::{Value as Json, json};

use crate::catalog::ResourceType;

/// Whether the Accept header asks for a Table first.
#[must_use]
pub fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table") && first.contains("g=meta.k8s.io"))
}

fn age(object: &Json) -> String {
    let Some(created) = object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    else {
        return "<unknown>".into();
    };
    let seconds = (jiff::Timestamp::now().as_second() - created.as_second()).max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

fn column(name: &str, kind: &str) -> Json {
    json!({"name": name, "type": kind, "format": if name == "Name" { "name" } else { "" }, "description": "", "priority": 0})
}

fn pod_status(pod: &Json) -> String {
    if pod["metadata"]["deletionTimestamp"].is_string() {
        return "Terminating".into();
    }
    for status in pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(reason) = status["state"]["waiting"]["reason"].as_str() {
            return reason.to_string();
        }
        if let Some(reason) = status["state"]["terminated"]["reason"].as_str() {
            return reason.to_string();
        }
    }
    pod["status"]["phase"].as_str().unwrap_or("Pending").to_string()
}

/// A quota's REQUEST and LIMIT columns: `resource: used/hard` for each limited resource in name order, the
/// `limits.*` ones under LIMIT.
fn quota_columns(quota: &Json) -> (String, String) {
    let (mut request, mut limit) = (Vec::new(), Vec::new());
    let mut limited: Vec<(&String, &Json)> = quota["status"]["hard"]
        .as_object()
        .into_iter()
        .flatten()
        .collect();
    limited.sort_by_key(|(resource, _)| *resource);
    for (resource, hard) in limited {
        let used = quota["status"]["used"][resource].as_str().unwrap_or("0");
        let entry = format!("{resource}: {used}/{}", hard.as_str().unwrap_or_default());
        if resource.split('.').next() == Some("limits") && resource.contains('.') {
            limit.push(entry);
        } else {
            request.push(entry);
        }
    }
    (request.join(", "), limit.join(", "))
}

fn cells(t: &ResourceType, object: &Json) -> (Vec<Json>, Vec<Json>) {
    let name = json!(object["metadata"]["name"]);
    match (t.group.as_str(), t.kind.as_str()) {
        ("", "Pod") => {
            let statuses = object["status"]["containerStatuses"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let total = object["spec"]["containers"].as_array().map_or(0, Vec::len);
            let ready = statuses
                .iter()
                .filter(|s| s["ready"].as_bool() == Some(true))
                .count();
            let restarts: i64 = statuses
                .iter()
                .map(|s| s["restartCount"].as_i64().unwrap_or(0))
                .sum();
            (
                vec![
                    column("Name", "string"),
                    column("Ready", "string"),
                    column("Status", "string"),
                    column("Restarts", "string"),
                    column("Age", "string"),
                ],
                vec![
                    name,
                    json!(format!("{ready}/{total}")),
                    json!(pod_status(object)),
                    json!(restarts.to_string()),
                    json!(age(object)),
                ],
            )
        }
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet") => {
            let status = &object["status"];
            let desired = object["spec"]["replicas"].as_i64().unwrap_or(1);
            let ready = status["readyReplicas"].as_i64().unwrap_or(0);
            if t.kind == "Deployment" {
                (
                    vec![
                        column("Name", "string"),
                        column("Ready", "string"),
                        column("Up-to-date", "integer"),
                        column("Available", "integer"),
                        column("Age", "string"),
                    ],
                    vec![
                        name,
                        json!(format!("{ready}/{desired}")),
                        json!(status["updatedReplicas"].as_i64().unwrap_or(0)),
                        json!(status["availableReplicas"].as_i64().unwrap_or(0)),
                        json!(age(object)),
                    ],
                )
            } else {
                (
                    vec![
                        column("Name", "string"),
                        column("Desired", "integer"),
                        column("Current", "integer"),
                        column("Ready", "integer"),
                        column("Age", "string"),
                    ],
                    vec![
                        name,
                        json!(desired),
                        json!(status["replicas"].as_i64().unwrap_or(0)),
                        json!(ready),
                        json!(age(object)),
                    ],
                )
            }
        }
        ("", "Service") => (
            vec![
                column("Name", "string"),
                column("Type", "string"),
                column("Cluster-IP", "string"),
                column("Age", "string"),
            ],
            vec![
                name,
                object["spec"]["type"].clone(),
                object["spec"]["clusterIP"].clone(),
                json!(age(object)),
            ],
        ),
        ("", "ResourceQuota") => {
            let (request, limit) = quota_columns(object);
            (
                vec![
                    column("Name", "string"),
                    column("Age", "string"),
                    column("Request", "string"),
                    column("Limit", "string"),
                ],
                vec![name, json!(age(object)), json!(request), json!(limit)],
            )
        }
        ("", "Namespace") => (
            vec![
                column("Name", "string"),
                column("Status", "string"),
                column("Age", "string"),
            ],
            vec![name, object["status"]["phase"].clone(), json!(age(object))],
        ),
        _ => (
            vec![column("Name", "string"), column("Age", "string")],
            vec![name, json!(age(object))],
        ),
    }
}

fn row(t: &ResourceType, object: &Json) -> Json {
    let (_, cells) = cells(t, object);
    json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]}})
}

/// A Table of objects.
#[must_use]
pub fn table(
    t: &ResourceType,
    objects: &[&Json],
    resource_version: &str,
    continue_token: Option<&str>,
) -> Json {
    let columns = cells(t, objects.first().copied().unwrap_or(&json!({}))).0;
    let mut metadata = json!({"resourceVersion": resource_version});
    if let Some(token) = continue_token {
        metadata["continue"] = json!(token);
    }
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "columnDefinitions": columns,
        "rows": objects.iter().map(|o| row(t, o)).collect::<Vec<_>>()})
}
