//! `/v2/status-configs[/{name}]`: per-kind status configurations (issue #16 §4; emco-model's
//! [`StatusConfig`]), served by the generic onboarding handlers (strict JSON, 400s naming the field, `Location`,
//! optimistic writes; writes need the admin role like every other write) plus a bound on how many may exist.
//!
//! A config takes effect at the next instantiate or update of a deployment: rsync copies the configs of the kinds an
//! app holds into the app's ResourceBundleState spec when it applies the app, and each cluster's monitor learns
//! them from there (never by calling emco).

use super::contract::{Endpoint, RequestBody};
use super::resources::collection_operations;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{OriginalUri, Query, State};
use axum::http::HeaderMap;
use axum::routing::{MethodRouter, get};
use emco_appcontext::Kind;
use emco_model::status_config::{MAX_STATUS_CONFIGS, StatusConfig};

use super::body::{PathNames, decode};
use super::paging::{self, PAGING_QUERY, Page};
use super::resources::{ResourceKind, create, list_entries, list_query};
use crate::{ApiError, AppState};

/// The status config kind: the body is checked by [`StatusConfig::validate`] (a bad `statusPath` is a 400 naming
/// `spec.statusPath`).
pub(crate) static STATUS_CONFIG: ResourceKind = ResourceKind {
    kind: Kind::StatusConfig,
    name: "StatusConfig",
    schema: |generator| <StatusConfig as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<StatusConfig>(raw, |config| {
            config
                .validate()
                .map_err(|err| ApiError::invalid(err.to_string()))
        })?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |_, _| Vec::new(),
    put_answer: super::resources::PutAnswer::CreatedOrReplaced,
    shown: super::resources::as_stored,
};

/// GET lists, POST creates (refused with 409 `TooManyStatusConfigs` once [`MAX_STATUS_CONFIGS`] exist). The count
/// is read outside the create's read set, so creates racing each other may pass it by a few; the monitor
/// and rsync bound what they read on their own.
pub(crate) fn status_configs() -> MethodRouter<AppState> {
    get(
        |state: State<AppState>,
         OriginalUri(uri): OriginalUri,
         query: Result<Query<Vec<(String, String)>>, QueryRejection>| async move {
            let query = list_query(query, PAGING_QUERY)?;
            let page = Page::from_query(&query)?;
            let (entries, next) =
                page.select(list_entries(&state, Kind::StatusConfig, &[], None).await?, |e| e);
            let bodies: Vec<_> = entries.into_iter().map(|entry| entry.body).collect();
            Ok::<_, ApiError>(paging::answer(bodies, next, &uri))
        },
    )
    .post(
        |state: State<AppState>,
         uri: OriginalUri,
         path: PathNames,
         headers: HeaderMap,
         body: Result<Bytes, BytesRejection>| async move {
            let existing = state.catalog().list(Kind::StatusConfig, &[]).await?.len();
            if existing >= MAX_STATUS_CONFIGS {
                return Err(ApiError::conflict(
                    "TooManyStatusConfigs",
                    format!("{existing} status configs exist; at most {MAX_STATUS_CONFIGS} are allowed"),
                ));
            }
            create(&STATUS_CONFIG, state, uri, path, headers, body).await
        },
    )
}

/// The collection's route, described.
pub(crate) fn collection_endpoint(path: &str) -> Endpoint {
    let mut operations = collection_operations(
        STATUS_CONFIG.kind,
        STATUS_CONFIG.name,
        STATUS_CONFIG.schema,
        "status",
        PAGING_QUERY,
        RequestBody::Json(STATUS_CONFIG.name, STATUS_CONFIG.schema),
    );
    operations[1] = operations[1]
        .clone()
        .errors(&[(409, "As many status configs exist as are allowed")]);
    Endpoint::new(path, status_configs(), operations)
}
