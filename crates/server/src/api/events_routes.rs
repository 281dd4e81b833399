//! `GET /v2/events[?project=p]`: a server-sent event stream of lifecycle changes (issue #19 §1), which the web page
//! follows to keep its lists current without polling.
//!
//! The stream starts with `event: hello` (`id:` and `data: {"revision":N}`: the store revision it follows from),
//! then one `event: lifecycle` per write of a lifecycle history (the store's `/emco/v1/state/…` keys) of a
//! deployment intent group, a cluster's network intents or a logical cloud, `id:` its store revision, `data:`
//! `{"kind","project","compositeApp","version","name","state","revision","time"}` for a DIG,
//! `{"kind","clusterProvider","cluster","name","state","revision","time"}` for network intents and
//! `{"kind","project","name","state","revision","time"}` for a logical cloud (`state`: the last action's state,
//! `time`: its time stamp). `project` keeps only that project's DIGs and logical clouds. Deletions are not
//! events. `Last-Event-ID` (or `lastEventId`) replays the changes after that revision; when the store no
//! longer keeps them, `event: reset` (`data: {"revision":N}`) says to reload the lists and follows from `N`.
//! A reader that falls behind the store's watch buffer is dropped (it may resume with `Last-Event-ID`).

use super::contract::{Content, Operation, QueryValues, query};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use emco_appcontext::{Kind, ResourcePath, STATE_PREFIX, decode_state};
use emco_model::StateInfo;
use emco_store::Error as StoreError;
use serde_json::json;

use super::stream::{self, EventSink, StreamRequest};
use crate::{ApiError, AppState};

/// The path of the lifecycle event stream.
pub(crate) const EVENTS_PATH: &str = "/v2/events";

/// `GET /v2/events`.
pub(crate) async fn events(
    State(state): State<AppState>,
    request: StreamRequest,
) -> Result<Response, ApiError> {
    let mut project = None;
    for (name, value) in &request.pairs {
        match name.as_str() {
            "project" if project.is_none() && !value.is_empty() => project = Some(value.clone()),
            "project" => {
                return Err(invalid("'project' names one project, given once"));
            }
            other => {
                return Err(invalid(&format!(
                    "unknown query parameter '{}' (this stream takes project, lastEventId)",
                    emco_model::shown(other)
                )));
            }
        }
    }
    let from = request.last_event_id;
    let producing = state.clone();
    stream::open(&state, move |events| async move {
        lifecycle_events(&producing, events, from, project).await;
    })
}

fn invalid(message: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "InvalidQuery",
        format!("invalid query: {message}"),
    )
}

/// The producer: hello, then every lifecycle change after `from` (default: now).
async fn lifecycle_events(
    state: &AppState,
    mut events: EventSink,
    from: Option<i64>,
    project: Option<String>,
) {
    let mut after = from.unwrap_or_else(|| state.store().revision());
    let hello = json!({"revision": after}).to_string();
    if events
        .send(stream::event("hello", Some(after), hello.as_bytes()))
        .is_err()
    {
        return;
    }
    loop {
        let mut watcher = match state.store().watch(STATE_PREFIX, Some(after)) {
            Ok(watcher) => watcher,
            Err(StoreError::Compacted { .. }) => {
                after = state.store().revision();
                if reset(&mut events, after).is_err() {
                    return;
                }
                continue;
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot watch lifecycle states; ending an event stream");
                return;
            }
        };
        loop {
            let batch = match events.wait(watcher.next_batch()).await {
                Ok(Some(Ok(batch))) => batch,
                Ok(Some(Err(StoreError::Compacted { .. }))) => {
                    after = state.store().revision();
                    if reset(&mut events, after).is_err() {
                        return;
                    }
                    break;
                }
                Ok(Some(Err(err))) => {
                    tracing::info!(error = %err, "an event stream fell behind the store; dropping it");
                    return;
                }
                Ok(None) | Err(stream::Stop::Ended) => return,
            };
            let (revision, changes) = batch;
            for change in changes {
                if change.kind != emco_store::EventKind::Put {
                    continue;
                }
                let (path, history) = match decode_state(&change.kv.key, &change.kv.value) {
                    Some(Ok(decoded)) => decoded,
                    Some(Err(err)) => {
                        tracing::warn!(error = %err, "unreadable lifecycle history; not an event");
                        continue;
                    }
                    None => continue,
                };
                let Some(data) = lifecycle_data(&path, &history, revision, project.as_deref()) else {
                    continue;
                };
                if events
                    .send(stream::event(
                        "lifecycle",
                        Some(revision),
                        data.to_string().as_bytes(),
                    ))
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}

fn reset(events: &mut EventSink, revision: i64) -> Result<(), stream::Stop> {
    let data = json!({"revision": revision}).to_string();
    events.send(stream::event("reset", Some(revision), data.as_bytes()))
}

/// The `data` of a lifecycle event, or `None` for a kind without a lifecycle, an empty history or another project.
fn lifecycle_data(
    path: &ResourcePath,
    history: &StateInfo,
    revision: i64,
    project: Option<&str>,
) -> Option<serde_json::Value> {
    let last = history.actions.last()?;
    let names = path.names();
    let mut data = match path.kind() {
        Kind::DeploymentIntentGroup => json!({
            "kind": "deploymentIntentGroup",
            "project": names[0],
            "compositeApp": names[1],
            "version": names[2],
            "name": names[3],
        }),
        Kind::Cluster if project.is_none() => json!({
            "kind": "clusterNetworkIntents",
            "clusterProvider": names[0],
            "cluster": names[1],
            "name": names[1],
        }),
        Kind::LogicalCloud => json!({
            "kind": "logicalCloud",
            "project": names[0],
            "name": names[1],
        }),
        _ => return None,
    };
    if let Some(project) = project
        && data["project"] != project
    {
        return None;
    }
    data["state"] = json!(last.state.as_str());
    data["revision"] = json!(revision);
    data["time"] = json!(last.timestamp);
    Some(data)
}

/// `GET /v2/events`, described.
pub(crate) fn events_operation() -> Operation {
    Operation::get(
        "streamEvents",
        "operations",
        "A server-sent event stream of every lifecycle state change",
    )
    .query(&[
        query("lastEventId", "Resume after this event")
            .taking(QueryValues::Pattern(super::stream::EVENT_ID_PATTERN)),
        query("access_token", "A short-lived stream token"),
    ])
    .answer(200, "The events", Content::Other("text/event-stream"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use emco_model::StateValue;

    fn history(state: StateValue) -> StateInfo {
        let mut history = StateInfo::created("2026-11-23T10:00:00Z".into());
        history.push(state, None, "2026-11-23T10:01:00Z".into());
        history
    }

    #[test]
    fn events_name_the_resource_its_state_and_revision() {
        let dig = ResourcePath::new(
            Kind::DeploymentIntentGroup,
            ["p", "ca", "v1", "d"].map(String::from).to_vec(),
        );
        let data = lifecycle_data(&dig, &history(StateValue::Instantiated), 7, None).unwrap();
        assert_eq!(
            data,
            json!({"kind": "deploymentIntentGroup", "project": "p", "compositeApp": "ca", "version": "v1",
                   "name": "d", "state": "Instantiated", "revision": 7, "time": "2026-11-23T10:01:00Z"})
        );
        assert!(lifecycle_data(&dig, &history(StateValue::Approved), 7, Some("q")).is_none());
        assert!(lifecycle_data(&dig, &history(StateValue::Approved), 7, Some("p")).is_some());
        let networks = ResourcePath::new(Kind::Cluster, ["prov", "edge01"].map(String::from).to_vec());
        let data = lifecycle_data(&networks, &history(StateValue::Applied), 9, None).unwrap();
        assert_eq!(data["kind"], "clusterNetworkIntents");
        assert_eq!(
            (&data["clusterProvider"], &data["cluster"]),
            (&json!("prov"), &json!("edge01"))
        );
        assert!(
            lifecycle_data(&networks, &history(StateValue::Applied), 9, Some("p")).is_none(),
            "network intents belong to no project"
        );
        let cloud = ResourcePath::new(Kind::LogicalCloud, ["p", "lc"].map(String::from).to_vec());
        assert_eq!(
            lifecycle_data(&cloud, &history(StateValue::Terminated), 3, None).unwrap()["kind"],
            "logicalCloud"
        );
        let project = ResourcePath::new(Kind::Project, vec!["p".into()]);
        assert!(lifecycle_data(&project, &history(StateValue::Created), 3, None).is_none());
        assert!(lifecycle_data(&dig, &StateInfo::default(), 3, None).is_none());
    }
}
