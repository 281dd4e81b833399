//! `GET …/deployment-intent-groups/{dig}/preview`: what instantiating or updating the DIG would apply now — each
//! app's objects on each cluster after its charts rendered and its controllers ran, with the controllers that
//! changed each — optionally compared with what is applied (`diff=true`). Nothing is stored.

use std::collections::HashMap;

use axum::Json as JsonResponse;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use emco_appcontext::{Kind, ResourcePath, ResourceRecord, ResourceRole};
use serde_json::{Value as Json, json};

use super::body::{PathNames, path_names};
use super::contract::{Content, Operation, QueryParameter, QueryValues, query};
use super::resources::{list_query, query_value};
use crate::{ApiError, AppState};

/// The most (app, cluster) cells one answer shows: a larger DIG is previewed a cluster (or an app) at a time.
pub(crate) const MAX_PREVIEW_CELLS: usize = 256;

const PREVIEW_QUERY: &[QueryParameter] = &[
    query("cluster", "Only this cluster, as <provider>+<cluster>"),
    query("app", "Only this app"),
    query("diff", "true: compare each object with what is applied now")
        .taking(QueryValues::OneOf(&["true", "false"])),
];

/// The route.
pub(crate) fn preview() -> MethodRouter<AppState> {
    get(
        |State(state): State<AppState>,
         path: PathNames,
         query: Result<Query<Vec<(String, String)>>, QueryRejection>| async move {
            let names = path_names(path)?;
            let query = list_query(query, PREVIEW_QUERY)?;
            answer(&state, names, &query).await
        },
    )
}

async fn answer(
    state: &AppState,
    names: Vec<String>,
    query: &[(String, String)],
) -> Result<Response, ApiError> {
    let dig = ResourcePath::new(Kind::DeploymentIntentGroup, names);
    let cluster = query_value(query, "cluster");
    let app = query_value(query, "app");
    let diff = match query_value(query, "diff") {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "diff is '{}': true or false",
                emco_model::shown(other)
            )));
        }
    };
    let wanted = |cell_app: &str, cell_cluster: &str| {
        cluster.is_none_or(|c| cell_cluster == c) && app.is_none_or(|a| cell_app == a)
    };
    let preview = state.lifecycle().preview(&dig, wanted, MAX_PREVIEW_CELLS).await?;
    let cells = preview.cells;
    // What is applied now, by (app, cluster), when asked to compare.
    let mut applied: HashMap<(String, String), Vec<ResourceRecord>> = HashMap::new();
    if diff && let Some(context) = preview.applied {
        for record in state.contexts().clusters(context).await? {
            applied.insert((record.app, record.cluster), record.resources);
        }
    }
    let mut clusters: Vec<(String, Vec<Json>)> = Vec::new();
    for cell in cells {
        let before = applied.remove(&(cell.app.clone(), cell.cluster.clone()));
        let mut resources = Vec::with_capacity(cell.resources.len());
        for resource in &cell.resources {
            let record = &resource.record;
            let mut shown = json!({
                "name": record.name,
                "kind": record.kind,
                "apiVersion": record.api_version,
                "role": role_name(&record.role),
                "changedBy": resource.changed_by,
                "object": record.object(),
            });
            if diff {
                let old = before.iter().flatten().find(|old| old.key() == record.key());
                shown["diff"] = json!(match old {
                    None => "added",
                    Some(old) if old.object() == record.object() => "unchanged",
                    Some(_) => "changed",
                });
            }
            resources.push(shown);
        }
        let mut entry = json!({"app": cell.app, "resources": resources});
        if diff {
            let removed: Vec<Json> = before
                .iter()
                .flatten()
                .filter(|old| !cell.resources.iter().any(|new| new.record.key() == old.key()))
                .map(|old| json!({"name": old.name, "kind": old.kind, "apiVersion": old.api_version}))
                .collect();
            entry["removed"] = Json::Array(removed);
        }
        match clusters.iter_mut().find(|(name, _)| *name == cell.cluster) {
            Some((_, apps)) => apps.push(entry),
            None => clusters.push((cell.cluster, vec![entry])),
        }
    }
    let clusters: Vec<Json> = clusters
        .into_iter()
        .map(|(cluster, apps)| json!({"cluster": cluster, "apps": apps}))
        .collect();
    Ok(JsonResponse(json!({
        "deploymentIntentGroup": dig.name(),
        "appliedContext": preview.applied.map(|id| id.to_string()),
        "clusters": clusters,
    }))
    .into_response())
}

fn role_name(role: &ResourceRole) -> &'static str {
    match role {
        ResourceRole::Main => "main",
        ResourceRole::Crd => "crd",
        ResourceRole::Hook(_) => "hook",
        ResourceRole::Certificate => "certificate",
    }
}

/// The route, described.
pub(crate) fn preview_operation() -> Operation {
    Operation::get(
        "previewDeploymentIntentGroup",
        "deployment",
        "What instantiating or updating the DIG would apply now, per cluster, after its controllers ran (nothing is stored)",
    )
    .query(PREVIEW_QUERY)
    .answer(
        200,
        "Each cluster's apps and their objects, with the controllers that changed each (and, with diff, how each differs from what is applied)",
        Content::Json("DigPreview", preview_schema),
    )
    .errors(&[
        (400, "A query parameter is malformed, or the preview is too large to show at once (name a cluster)"),
        (404, "The DIG does not exist"),
        (409, "The DIG cannot be built now (its placement, charts or controllers refuse; the message says which)"),
        (422, "A chart exceeded a render bound"),
    ])
}

fn preview_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["deploymentIntentGroup", "clusters"],
        "properties": {
            "deploymentIntentGroup": {"type": "string"},
            "appliedContext": {"type": ["string", "null"], "description": "The context applied now, if any."},
            "clusters": {"type": "array", "items": {
                "type": "object",
                "required": ["cluster", "apps"],
                "properties": {
                    "cluster": {"type": "string"},
                    "apps": {"type": "array", "items": {
                        "type": "object",
                        "required": ["app", "resources"],
                        "properties": {
                            "app": {"type": "string"},
                            "resources": {"type": "array", "items": {
                                "type": "object",
                                "required": ["name", "kind", "apiVersion", "role", "changedBy", "object"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "kind": {"type": "string"},
                                    "apiVersion": {"type": "string"},
                                    "role": {"enum": ["main", "crd", "hook", "certificate"]},
                                    "changedBy": {"type": "array", "items": {"type": "string"}},
                                    "diff": {"enum": ["added", "changed", "unchanged"]},
                                    "object": {"type": ["object", "null"]}
                                }
                            }},
                            "removed": {"type": "array", "items": {"type": "object"}}
                        }
                    }}
                }
            }}
        }
    })
}
