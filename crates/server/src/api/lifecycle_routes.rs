//! The lifecycle POSTs of every resource with a lifecycle — a DIG's approve, instantiate, update, rollback,
//! migrate, resume (of a paused progressive rollout), terminate and stop; a cluster's network-intents apply, terminate
//! and stop; a logical cloud's instantiate, update, terminate and stop — one set of handlers over the one
//! lifecycle engine. Each answers `202 Accepted` with a `Location` header naming the status URL, where the
//! progress of the asynchronous work shows. A DIG's update and rollback answer, as EMCO's orchestrator does,
//! the new revision as a bare JSON integer.
//!
//! Every operation runs optimistically (`crate::optimistic`): a lost race runs it again, at most three times, then
//! 409 `Conflict`. Stop records the stop, then waits a bounded time for the engine to carry it out, so that an
//! instantiate sent right after it finds the operation stopped.

use super::contract::{Content, Operation, RequestBody};
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use emco_appcontext::ResourcePath;

use super::body::{PathNames, json_body, path_names};
use crate::lifecycle::Subject;
use crate::optimistic::{optimistic, resource_name};
use crate::{ApiError, AppState};

fn subject_path(subject: Subject, path: PathNames) -> Result<ResourcePath, ApiError> {
    Ok(ResourcePath::new(subject.kind(), path_names(path)?))
}

/// The status URL of a resource with a lifecycle.
pub(crate) fn status_url(subject: Subject, path: &ResourcePath) -> String {
    let names = path.names();
    match subject {
        Subject::DeploymentIntentGroup => format!(
            "/v2/projects/{}/composite-apps/{}/{}/deployment-intent-groups/{}/status",
            names[0], names[1], names[2], names[3]
        ),
        Subject::ClusterNetworks => {
            format!("/v2/cluster-providers/{}/clusters/{}/status", names[0], names[1])
        }
        Subject::LogicalCloud => format!("/v2/projects/{}/logical-clouds/{}/status", names[0], names[1]),
    }
}

/// The URL of a lifecycle operation (`update`, `rollback`, …) of a resource: its status URL with the operation in
/// place of `status`.
pub(crate) fn operation_url(subject: Subject, path: &ResourcePath, operation: &str) -> String {
    let status = status_url(subject, path);
    let base = status.strip_suffix("/status").unwrap_or(&status);
    format!("{base}/{operation}")
}

/// `202` naming the status URL, with the new revision as the body.
fn accepted_revision(subject: Subject, path: &ResourcePath, revision: u64) -> Response {
    (
        StatusCode::ACCEPTED,
        [
            (header::LOCATION, status_url(subject, path)),
            (header::CONTENT_TYPE, "application/json".to_string()),
        ],
        revision.to_string(),
    )
        .into_response()
}

/// The revision a rollback body asks for: `{"metadata":{"description":""},"spec":{"revision":"1"}}`, the
/// revision a string of digits, as EMCO's schema has it (400 naming the field otherwise).
fn rollback_revision(body: &serde_json::Value) -> Result<u64, ApiError> {
    let field = &body["spec"]["revision"];
    let text = field.as_str().ok_or_else(|| {
        ApiError::invalid(format!(
            "spec.revision must be a string holding a revision number (e.g. \"1\"), not {}",
            if field.is_null() {
                "absent".to_string()
            } else {
                field.to_string()
            }
        ))
    })?;
    text.parse::<u64>()
        .ok()
        .filter(|revision| *revision > 0 && text.len() <= 20)
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "spec.revision '{}' is not a revision number (a positive integer)",
                text.chars().take(40).collect::<String>()
            ))
        })
}

fn accepted(subject: Subject, path: &ResourcePath) -> Response {
    (
        StatusCode::ACCEPTED,
        [(header::LOCATION, status_url(subject, path))],
    )
        .into_response()
}

/// `POST …/approve`.
pub(crate) fn approve(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        optimistic(&resource_name(&path), || async {
            Ok(state.lifecycle().approve(&path).await?)
        })
        .await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/instantiate` (`…/apply` for network intents).
pub(crate) fn instantiate(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        optimistic(&resource_name(&path), || async {
            let prepared = state.lifecycle().prepare_instantiate(&path).await?;
            state.lifecycle().commit_instantiate(&path, prepared).await?;
            Ok(())
        })
        .await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/update` (logical clouds): a new context from the resource as it is now takes over from the current one.
pub(crate) fn update(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        optimistic(&resource_name(&path), || async {
            let prepared = state.lifecycle().prepare_update(&path).await?;
            state.lifecycle().commit_prepared(&path, prepared).await?;
            Ok(())
        })
        .await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/deployment-intent-groups/{dig}/update`: a new context from the DIG and its intents as they are now
/// takes over from the current one; answers the new revision.
pub(crate) fn update_dig() -> MethodRouter<AppState> {
    let subject = Subject::DeploymentIntentGroup;
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        optimistic(&resource_name(&path), || async {
            let prepared = state.lifecycle().prepare_update(&path).await?;
            state.lifecycle().commit_prepared(&path, prepared).await?;
            Ok(())
        })
        .await?;
        let revision = state.lifecycle().revision(&path).await?;
        Ok::<_, ApiError>(accepted_revision(subject, &path, revision))
    })
}

/// `POST …/deployment-intent-groups/{dig}/rollback`: a new context with the content of the revision the body
/// names takes over from the current one; answers the new revision (404 for a revision the current
/// instantiation does not have).
pub(crate) fn rollback() -> MethodRouter<AppState> {
    let subject = Subject::DeploymentIntentGroup;
    post(
        move |State(state): State<AppState>,
              path: PathNames,
              headers: HeaderMap,
              body: Result<Bytes, BytesRejection>| async move {
            let path = subject_path(subject, path)?;
            let body = json_body(&headers, body, state.config().max_body_bytes)?;
            let revision = rollback_revision(&body)?;
            optimistic(&resource_name(&path), || async {
                let prepared = state.lifecycle().prepare_rollback(&path, revision).await?;
                state.lifecycle().commit_prepared(&path, prepared).await?;
                Ok(())
            })
            .await?;
            let revision = state.lifecycle().revision(&path).await?;
            Ok::<_, ApiError>(accepted_revision(subject, &path, revision))
        },
    )
}

/// The DIG a migrate body names: `{"metadata":{"description":""},"spec":{"targetCompositeAppVersion":"v2",
/// "targetDeploymentIntentGroup":"dig2"}}`, of the source's project and composite app (400 naming the field
/// otherwise).
fn migration_target(source: &ResourcePath, body: &serde_json::Value) -> Result<ResourcePath, ApiError> {
    let field = |name: &str| -> Result<String, ApiError> {
        let value = &body["spec"][name];
        let text = value.as_str().ok_or_else(|| {
            ApiError::invalid(format!(
                "spec.{name} must be a string naming the target, not {}",
                if value.is_null() {
                    "absent".to_string()
                } else {
                    value.to_string()
                }
            ))
        })?;
        emco_model::validate_name(&format!("spec.{name}"), text)
            .map_err(|err| ApiError::invalid(err.to_string()))?;
        Ok(text.to_string())
    };
    let version = field("targetCompositeAppVersion")?;
    let dig = field("targetDeploymentIntentGroup")?;
    let names = source.names();
    Ok(ResourcePath::new(
        source.kind(),
        vec![names[0].clone(), names[1].clone(), version, dig],
    ))
}

/// `POST …/deployment-intent-groups/{dig}/migrate`: the target DIG the body names (Approved) takes over what this
/// one deployed, as an update does; answers 202 naming the target's status URL.
pub(crate) fn migrate() -> MethodRouter<AppState> {
    let subject = Subject::DeploymentIntentGroup;
    post(
        move |State(state): State<AppState>,
              path: PathNames,
              headers: HeaderMap,
              body: Result<Bytes, BytesRejection>| async move {
            let path = subject_path(subject, path)?;
            let body = json_body(&headers, body, state.config().max_body_bytes)?;
            let target = migration_target(&path, &body)?;
            optimistic(&resource_name(&path), || async {
                Ok(state.lifecycle().migrate(&path, &target).await?)
            })
            .await?;
            Ok::<_, ApiError>(accepted(subject, &target))
        },
    )
}

/// `POST …/deployment-intent-groups/{dig}/resume`: a progressive rollout paused past its failure threshold goes
/// on with its next batch (409 when none is paused).
pub(crate) fn resume() -> MethodRouter<AppState> {
    let subject = Subject::DeploymentIntentGroup;
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        optimistic(&resource_name(&path), || async {
            Ok(state.lifecycle().resume(&path).await?)
        })
        .await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/terminate`.
pub(crate) fn terminate(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        optimistic(&resource_name(&path), || async {
            Ok(state.lifecycle().terminate(&path).await?)
        })
        .await?;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// `POST …/stop`.
pub(crate) fn stop(subject: Subject) -> MethodRouter<AppState> {
    post(move |State(state): State<AppState>, path: PathNames| async move {
        let path = subject_path(subject, path)?;
        let stopping = optimistic(&resource_name(&path), || async {
            Ok(state.lifecycle().stop(&path).await?)
        })
        .await?;
        state.lifecycle().wait_stopped(stopping).await;
        Ok::<_, ApiError>(accepted(subject, &path))
    })
}

/// A lifecycle POST, described: no body, `202 Accepted` naming the status URL.
pub(crate) fn lifecycle_operation(id: &str, summary: &str, tag: &'static str) -> Operation {
    Operation::post(id, tag, summary)
        .answer(
            202,
            "Accepted: the work runs on; its progress shows at the status URL",
            Content::Empty,
        )
        .header("Location", "The status URL")
        .errors(&[
            (404, "It does not exist"),
            (
                409,
                "Its lifecycle state does not allow this now, or a concurrent change won (retry)",
            ),
        ])
}

/// `POST …/update` of a DIG, described.
pub(crate) fn update_operation() -> Operation {
    lifecycle_operation(
        "updateDeploymentIntentGroup",
        "Update an instantiated deployment intent group in place to its intents as they are now",
        "deployment",
    )
    .answer(
        202,
        "Accepted: the new revision, as a bare JSON integer",
        Content::Json("Revision", revision_schema),
    )
    .header("Location", "The status URL")
}

/// `POST …/rollback`, described.
pub(crate) fn rollback_operation() -> Operation {
    update_operation_named(
        "rollbackDeploymentIntentGroup",
        "Roll back to an earlier revision of the current instantiation (a new revision with its content)",
    )
    .body(RequestBody::Json("RollbackRequest", rollback_schema))
    .errors(&[(400, "spec.revision is not a revision number (named)")])
}

/// `POST …/migrate`, described.
pub(crate) fn migrate_operation() -> Operation {
    lifecycle_operation(
        "migrateDeploymentIntentGroup",
        "Migrate to another approved DIG of the composite app, which takes the objects over in place",
        "deployment",
    )
    .body(RequestBody::Json("MigrateRequest", migrate_schema))
    .errors(&[(400, "The body names no target, or this DIG itself (named)")])
}

fn update_operation_named(id: &str, summary: &str) -> Operation {
    lifecycle_operation(id, summary, "deployment")
        .answer(
            202,
            "Accepted: the new revision, as a bare JSON integer",
            Content::Json("Revision", revision_schema),
        )
        .header("Location", "The status URL")
}

fn revision_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 1, "description": "A revision of the DIG's instantiation."})
}

/// The body `rollback_revision` reads.
fn rollback_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["spec"],
        "properties": {
            "metadata": {"type": "object", "properties": {"description": {"type": "string"}}},
            "spec": {
                "type": "object",
                "required": ["revision"],
                "properties": {"revision": {"type": "string", "pattern": "^[1-9][0-9]{0,18}$", "description": "The revision to roll back to (see the DIG's history), as a string of digits."}}
            }
        }
    })
}

/// The body `migration_target` reads.
fn migrate_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["spec"],
        "properties": {
            "metadata": {"type": "object", "properties": {"description": {"type": "string"}}},
            "spec": {
                "type": "object",
                "required": ["targetCompositeAppVersion", "targetDeploymentIntentGroup"],
                "properties": {
                    "targetCompositeAppVersion": {"type": "string", "minLength": 1, "maxLength": emco_model::MAX_NAME_LEN, "pattern": emco_model::names::NAME_PATTERN, "description": "The composite app version of the target DIG."},
                    "targetDeploymentIntentGroup": {"type": "string", "minLength": 1, "maxLength": emco_model::MAX_NAME_LEN, "pattern": emco_model::names::NAME_PATTERN, "description": "The target DIG (Approved)."}
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_rollback_names_its_revision_as_a_string() {
        let body = |revision: serde_json::Value| json!({"metadata": {"description": ""}, "spec": {"revision": revision}});
        assert_eq!(rollback_revision(&body(json!("2"))).unwrap(), 2);
        for (bad, says) in [
            (json!(2), "not 2"),
            (json!("two"), "'two' is not a revision number"),
            (json!("0"), "'0' is not"),
            (json!("-1"), "'-1' is not"),
            (serde_json::Value::Null, "not absent"),
        ] {
            let err = rollback_revision(&body(bad)).unwrap_err();
            let text = format!("{err:?}");
            assert!(text.contains("spec.revision") && text.contains(says), "{text}");
        }
        assert!(rollback_revision(&json!({})).is_err());
    }

    #[test]
    fn a_migration_names_its_target_in_the_same_composite_app() {
        let source = ResourcePath::new(
            emco_appcontext::Kind::DeploymentIntentGroup,
            vec!["p".into(), "ca".into(), "v1".into(), "dig".into()],
        );
        let body = |spec: serde_json::Value| json!({"metadata": {"description": ""}, "spec": spec});
        let target = migration_target(
            &source,
            &body(json!({"targetCompositeAppVersion": "v2", "targetDeploymentIntentGroup": "dig2"})),
        )
        .unwrap();
        assert_eq!(target.names(), ["p", "ca", "v2", "dig2"]);
        for (spec, says) in [
            (
                json!({"targetDeploymentIntentGroup": "d"}),
                "spec.targetCompositeAppVersion must be a string",
            ),
            (
                json!({"targetCompositeAppVersion": "v2", "targetDeploymentIntentGroup": 3}),
                "not 3",
            ),
            (
                json!({"targetCompositeAppVersion": "v2", "targetDeploymentIntentGroup": "a/b"}),
                "spec.targetDeploymentIntentGroup",
            ),
        ] {
            let text = format!("{:?}", migration_target(&source, &body(spec)).unwrap_err());
            assert!(text.contains(says), "{text}");
        }
    }

    #[test]
    fn operation_urls_sit_beside_the_status_url() {
        let path = ResourcePath::new(
            emco_appcontext::Kind::DeploymentIntentGroup,
            vec!["p".into(), "ca".into(), "v1".into(), "dig".into()],
        );
        assert_eq!(
            operation_url(Subject::DeploymentIntentGroup, &path, "update"),
            "/v2/projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/update"
        );
    }
}
