//! Resources that travel with a file in a multipart form (`metadata` + `file`): apps with their Helm chart, app
//! profiles with their override values, clusters with their kubeconfig. The file is checked before anything is
//! stored; a kubeconfig is never returned.

use axum::Json as JsonResponse;
use axum::body::Body;
use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::extract::rejection::QueryRejection;
use axum::extract::{OriginalUri, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use emco_appcontext::{Kind, ResourcePath};
use emco_model::resources::{AppProfile, Cluster, MetadataOnly};
use emco_model::validate_name;
use serde_json::{Value as Json, json};

use super::body::{PathNames, decode, form_parts, path_names};
use super::contract::{Content, Endpoint, QueryParameter, RequestBody, SchemaFn, query};
use super::paging::{self, Page};
use super::preconditions::{self, IfMatch};
use super::resources::{
    LIST_QUERY, Parsed, PutAnswer, Reference, app_reference, check_put_names, check_references,
    collection_operations, delete_resource, deleted_location, item_operations, list_bodies, list_entries,
    list_query, location, query_value, replace_operation, write_ops,
};
use crate::optimistic::{optimistic, resource_name};
use crate::{ApiError, AppState, ServerConfig};

/// Checks a metadata part against the server's settings; `Err` is the answer.
type BodyCheck = fn(&ServerConfig, &Json) -> Result<(), ApiError>;

/// Checks a file part, given the server's settings and the resource's own names; `Err` is the 422 message.
type FileCheck = fn(&ServerConfig, &[String], &[u8]) -> Result<(), String>;

/// How a kind with a file part is read and checked.
pub(crate) struct FileKind {
    kind: Kind,
    /// The name of its metadata part's schema in the API document (the kind's name).
    name: &'static str,
    /// Its metadata part's JSON Schema: the schema of the type `parse` decodes.
    schema: SchemaFn,
    /// What its file part holds (for the API document).
    file: &'static str,
    parse: fn(Json) -> Result<Parsed, ApiError>,
    references: fn(&Json, &[String]) -> Vec<Reference>,
    /// Checks the file part.
    check_file: FileCheck,
    /// Whether a file is required given the metadata.
    file_required: fn(&Json) -> bool,
    /// Whether a file part is left unread given the metadata (a GitOps cluster's: EMCO's emcoctl sends its values
    /// file there, and EMCO keeps nothing of it).
    file_ignored: fn(&Json) -> bool,
    /// GET may return the file (by Accept header).
    file_readable: bool,
    /// PUT is allowed.
    replaceable: bool,
    /// What EMCO answers a PUT that succeeded (apps and app profiles: 201 even when it replaced).
    put_answer: PutAnswer,
    /// The files travel as parts named `files` (any number, kept with their names), not one part `file`.
    many_files: bool,
    /// When the file is required, as a JSON Schema condition on the form (the API document's `file_required`).
    form_rule: Option<fn() -> Json>,
    /// Checks the metadata against the server's settings (after `parse`); `Err` is the answer.
    check_body: Option<BodyCheck>,
}

fn invalid_file(message: String) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "InvalidFile", message)
}

pub(crate) static APP: FileKind = FileKind {
    kind: Kind::App,
    name: "App",
    schema: |generator| <MetadataOnly as schemars::JsonSchema>::json_schema(generator),
    file: "The app's Helm chart (.tgz)",
    parse: |raw| {
        let (typed, body) = decode::<MetadataOnly>(raw, |r| Ok(r.metadata.validate("app")?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |_, _| Vec::new(),
    check_file: |_, _, bytes| {
        // What can be known before values: the chart loads and every template parses (Helm's own messages).
        // Whether it renders depends on the profile and overrides, so that is decided at instantiate.
        let chart =
            emco_helm::load_archive(bytes).map_err(|err| format!("Error in file format: chart: {err}"))?;
        emco_helm::engine::check_templates(&chart)
            .map_err(|err| format!("Error in file format: chart: {err}"))
    },
    file_required: |_| true,
    file_ignored: |_| false,
    file_readable: true,
    replaceable: true,
    put_answer: PutAnswer::AlwaysCreated,
    many_files: false,
    form_rule: None,
    check_body: None,
};

pub(crate) static APP_PROFILE: FileKind = FileKind {
    kind: Kind::AppProfile,
    name: "AppProfile",
    schema: |generator| <AppProfile as schemars::JsonSchema>::json_schema(generator),
    file: "The profile's override values (.tgz)",
    parse: |raw| {
        let (typed, body) = decode::<AppProfile>(raw, |r| {
            r.metadata.validate("app profile")?;
            Ok(validate_name("spec.app", &r.spec.app)?)
        })?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| app_reference("spec.app", body["spec"]["app"].as_str(), parents),
    check_file: |_, _, bytes| {
        emco_helm::read_app_profile(bytes)
            .map(|_| ())
            .map_err(|err| format!("Error in file format: {err}"))
    },
    file_required: |_| true,
    file_ignored: |_| false,
    file_readable: true,
    replaceable: true,
    put_answer: PutAnswer::AlwaysCreated,
    many_files: false,
    form_rule: None,
    check_body: None,
};

pub(crate) static CLUSTER: FileKind = FileKind {
    kind: Kind::Cluster,
    name: "Cluster",
    schema: |generator| <Cluster as schemars::JsonSchema>::json_schema(generator),
    file: "The cluster's kubeconfig (required unless spec.gitOps names a GitOps type or spec.pull makes it a pull cluster)",
    parse: |raw| {
        let (typed, body) = decode::<Cluster>(raw, |r| Ok(r.validate_cluster()?))?;
        if let Some(git_ops) = typed.git_ops().filter(|git_ops| !git_ops.served()) {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "GitOpsTypeNotServed",
                format!(
                    "cluster '{}': spec.gitOps.gitOpsType '{}' is not served yet; emco serves GitOps clusters with Flux v2 (fluxv2, fluxcd)",
                    typed.metadata.name, git_ops.git_ops_type
                ),
            ));
        }
        Ok((body, vec![typed.metadata.name]))
    },
    references: git_ops_objects,
    // emco-k8s's kubeconfig policy (rsync checks the stored file again before it builds a client).
    check_file: |config, own, bytes| {
        emco_k8s::kubeconfig::check_kubeconfig(bytes, config.kubeconfig_policy)
            .map(|_| ())
            .map_err(|err| emco_k8s::kubeconfig::refusal_message(own.last().map_or("", String::as_str), &err))
    },
    file_required: |body| !is_git_ops_cluster(body) && !is_pull_cluster(body),
    file_ignored: |body| is_git_ops_cluster(body) || is_pull_cluster(body),
    file_readable: false,
    replaceable: false,
    put_answer: PutAnswer::AlwaysCreated,
    many_files: false,
    form_rule: None,
    check_body: None,
};

/// Whether a cluster body names a GitOps type (then it has no kubeconfig).
pub(crate) fn is_git_ops_cluster(body: &Json) -> bool {
    !body["spec"]["gitOps"]["gitOpsType"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
}

/// Whether a cluster body makes it a pull cluster (then its agent reaches emco, and it has no kubeconfig: its blob
/// holds its agent token's digest).
pub(crate) fn is_pull_cluster(body: &Json) -> bool {
    body["spec"].get("pull").is_some_and(Json::is_object)
}

/// The cluster sync objects a GitOps cluster names (under its provider, `parents`), which must exist.
fn git_ops_objects(body: &Json, parents: &[String]) -> Vec<Reference> {
    if !is_git_ops_cluster(body) {
        return Vec::new();
    }
    let git_ops = &body["spec"]["gitOps"];
    [
        ("spec.gitOps.gitOpsReferenceObject", "gitOpsReferenceObject"),
        ("spec.gitOps.gitOpsResourceObject", "gitOpsResourceObject"),
    ]
    .into_iter()
    .filter_map(|(field, key)| {
        let name = git_ops[key].as_str()?;
        let mut names = parents.to_vec();
        names.push(name.to_string());
        Some(Reference {
            field,
            path: ResourcePath::new(Kind::ClusterSyncObject, names),
        })
    })
    .collect()
}

pub(crate) static GAC_RESOURCE: FileKind = FileKind {
    kind: Kind::GacResource,
    name: "GacResource",
    schema: |generator| <emco_model::gac::GacResource as schemars::JsonSchema>::json_schema(generator),
    file: "The object's YAML (required for a new object other than a ConfigMap or Secret)",
    parse: |raw| {
        let (typed, body) = decode::<emco_model::gac::GacResource>(raw, |r| Ok(r.validate_gac_resource()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| app_reference("spec.app", body["spec"]["app"].as_str(), parents),
    check_file: |_, _, bytes| {
        crate::lifecycle::gac::object_of_file(bytes)
            .map(|_| ())
            .map_err(|err| format!("Error in file format: {err}"))
    },
    file_required: |body| {
        let kind = body["spec"]["resourceGVK"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        body["spec"]["newObject"] == "true" && kind != "configmap" && kind != "secret"
    },
    file_ignored: |_| false,
    file_readable: true,
    replaceable: true,
    put_answer: PutAnswer::CreatedOrReplaced,
    many_files: false,
    form_rule: Some(|| {
        json!({
            "if": {"required": ["metadata"], "properties": {"metadata": {"required": ["spec"], "properties": {"spec": {
                "required": ["newObject", "resourceGVK"],
                "properties": {
                    "newObject": {"const": "true"},
                    "resourceGVK": {"required": ["kind"], "properties": {"kind": {"not": {"pattern": "^([Cc][Oo][Nn][Ff][Ii][Gg][Mm][Aa][Pp]|[Ss][Ee][Cc][Rr][Ee][Tt])$"}}}}
                }
            }}}}},
            "then": {"required": ["file"]}
        })
    }),
    check_body: None,
};

pub(crate) static GAC_CUSTOMIZATION: FileKind = FileKind {
    kind: Kind::GacCustomization,
    name: "GacCustomization",
    schema: |generator| <emco_model::gac::GacCustomization as schemars::JsonSchema>::json_schema(generator),
    file: "The customization's files: ConfigMap or Secret data, or merge patches (UTF-8 text)",
    parse: |raw| {
        let (typed, body) =
            decode::<emco_model::gac::GacCustomization>(raw, |r| Ok(r.validate_customization()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |_, _| Vec::new(),
    check_file: |_, _, bytes| {
        std::str::from_utf8(bytes)
            .map(|_| ())
            .map_err(|_| "Error in file format: a customization file must be UTF-8 text".to_string())
    },
    file_required: |_| false,
    file_ignored: |_| false,
    file_readable: true,
    replaceable: true,
    put_answer: PutAnswer::CreatedOrReplaced,
    many_files: true,
    form_rule: None,
    check_body: Some(check_patch_value_urls),
};

/// Refuses a JSON-patch value to be fetched from a URL (`$(http…)$`, as EMCO takes them) that is not under a prefix
/// the operator allowed: emco never opens a URL only because a request names it.
fn check_patch_value_urls(config: &ServerConfig, body: &Json) -> Result<(), ApiError> {
    for (index, operation) in body["spec"]["patchJson"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(url) = emco_model::gac::external_patch_url(&operation["value"]) else {
            continue;
        };
        if let Some(refusal) = config.patch_value_sources.refusal(url) {
            return Err(ApiError::invalid(format!(
                "spec.patchJson[{index}].value: the value would be fetched from '{}': {refusal}",
                emco_model::shown(url)
            )));
        }
    }
    Ok(())
}

/// A collection's route, described: GET lists, POST creates (a multipart form).
pub(crate) fn collection_endpoint(
    path: impl Into<String>,
    desc: &'static FileKind,
    tag: &'static str,
) -> Endpoint {
    let list_query = if desc.kind == Kind::Cluster {
        CLUSTER_LIST_QUERY
    } else {
        LIST_QUERY
    };
    let body = RequestBody::Multipart {
        metadata: (desc.name, desc.schema),
        file: desc.file,
        many: desc.many_files,
        rule: desc.form_rule,
    };
    Endpoint::new(
        path,
        collection(desc),
        collection_operations(desc.kind, desc.name, desc.schema, tag, list_query, body),
    )
}

/// An item's route, described: GET (metadata, or with `Accept` the file too), PUT where allowed, DELETE.
pub(crate) fn item_endpoint(path: impl Into<String>, desc: &'static FileKind, tag: &'static str) -> Endpoint {
    let mut operations = item_operations(desc.kind, desc.name, desc.schema, tag);
    if desc.file_readable {
        operations[0] = operations[0]
            .clone()
            .answer(
                200,
                "Accept: multipart/form-data — the metadata and file parts",
                Content::Other("multipart/form-data"),
            )
            .answer(
                200,
                "Accept: application/octet-stream — the file",
                Content::Other("application/octet-stream"),
            )
            .errors(&[(
                300,
                "Accept names none of JSON, multipart/form-data, application/octet-stream",
            )]);
    }
    if desc.replaceable {
        let body = RequestBody::Multipart {
            metadata: (desc.name, desc.schema),
            file: desc.file,
            many: desc.many_files,
            rule: desc.form_rule,
        };
        operations.insert(
            1,
            replace_operation(desc.kind, (desc.name, desc.schema), tag, body, desc.put_answer),
        );
    }
    Endpoint::new(path, item(desc), operations)
}

/// GET lists, POST creates.
pub(crate) fn collection(desc: &'static FileKind) -> MethodRouter<AppState> {
    get(
        move |state: State<AppState>,
              uri: OriginalUri,
              path: PathNames,
              query: Result<Query<Vec<(String, String)>>, QueryRejection>| {
            list(desc, state, uri, path, query)
        },
    )
    .post(
        move |state: State<AppState>,
              uri: OriginalUri,
              path: PathNames,
              form: Result<Multipart, MultipartRejection>| { create(desc, state, uri, path, form) },
    )
}

/// GET, PUT (where allowed), DELETE.
pub(crate) fn item(desc: &'static FileKind) -> MethodRouter<AppState> {
    let router = get(
        move |state: State<AppState>, path: PathNames, headers: HeaderMap| read(desc, state, path, headers),
    )
    .delete(
        move |State(state): State<AppState>,
              OriginalUri(uri): OriginalUri,
              path: PathNames,
              headers: HeaderMap| async move {
            let path = ResourcePath::new(desc.kind, path_names(path)?);
            let condition = IfMatch::from_headers(&headers)?;
            let answer = delete_resource(&state, &path, condition.as_ref()).await?;
            Ok::<_, ApiError>((location(&deleted_location(&path, uri.path())), answer).into_response())
        },
    );
    if desc.replaceable {
        router.put(
            move |state: State<AppState>,
                  uri: OriginalUri,
                  path: PathNames,
                  headers: HeaderMap,
                  form: Result<Multipart, MultipartRejection>| {
                replace(desc, state, uri, path, headers, form)
            },
        )
    } else {
        router
    }
}

async fn list(
    desc: &'static FileKind,
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    path: PathNames,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let parents = path_names(path)?;
    let known = if desc.kind == Kind::Cluster {
        CLUSTER_LIST_QUERY
    } else {
        LIST_QUERY
    };
    let query = list_query(query, known)?;
    let page = Page::from_query(&query)?;
    let entries = list_entries(&state, desc.kind, &parents, query_value(&query, "app")).await?;
    // Clusters: `?label=<l>` lists the names of the clusters with that label; `?withLabels=true` adds labels.
    let label = query_value(&query, "label");
    let with_labels = query_value(&query, "withLabels").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if desc.kind != Kind::Cluster || (label.is_none() && !with_labels) {
        let (entries, next) = page.select(entries, |entry| entry);
        let bodies: Vec<Json> = entries
            .into_iter()
            .map(|entry| match desc.kind {
                Kind::Cluster => {
                    super::agent_routes::with_connection(&state, &entry.path.names().join("+"), entry.body)
                }
                _ => entry.body,
            })
            .collect();
        return Ok(paging::answer(bodies, next, &uri));
    }
    let mut labelled = Vec::new();
    for entry in entries {
        let labels = list_bodies(&state, Kind::ClusterLabel, entry.path.names(), None).await?;
        if label.is_none_or(|label| labels.iter().any(|l| l["clusterLabel"].as_str() == Some(label))) {
            labelled.push((entry, labels));
        }
    }
    // Paged after the label filter, so a page holds `limit` matching clusters.
    let (labelled, next) = page.select(labelled, |(entry, _)| entry);
    let answer: Vec<Json> = labelled
        .into_iter()
        .map(|(entry, labels)| match label {
            Some(_) => Json::String(entry.path.name().to_string()),
            None => json!({"metadata": entry.body["metadata"], "labels": labels}),
        })
        .collect();
    Ok(paging::answer(answer, next, &uri))
}

/// The query parameters of the cluster list: the list's, `label` and `withLabels`.
const CLUSTER_LIST_QUERY: &[QueryParameter] = &[
    query("app", "Only the items whose spec.app is this app"),
    paging::LIMIT_QUERY,
    paging::CONTINUE_QUERY,
    query(
        "label",
        "Only the clusters with this label; the answer lists their names",
    ),
    query("withLabels", "true: each cluster's metadata with its labels"),
];

struct Upload {
    body: Json,
    own: Vec<String>,
    file: Option<Vec<u8>>,
}

async fn read_upload(
    desc: &FileKind,
    state: &AppState,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Upload, ApiError> {
    let parts = form_parts(form, state.config().max_body_bytes).await?;
    let metadata = parts
        .metadata
        .ok_or_else(|| ApiError::invalid("multipart part 'metadata' is missing"))?;
    let (body, own) = (desc.parse)(metadata)?;
    if let Some(check) = desc.check_body {
        check(state.config(), &body)?;
    }
    if desc.many_files {
        let mut files = Vec::with_capacity(parts.files.len());
        for (name, bytes) in parts.files {
            (desc.check_file)(state.config(), &own, &bytes)
                .map_err(|err| invalid_file(format!("file '{}': {err}", emco_model::shown(&name))))?;
            files.push((name, bytes.to_vec()));
        }
        let file = (!files.is_empty()).then(|| crate::lifecycle::gac::encode_files(&files));
        return Ok(Upload { body, own, file });
    }
    let file = match parts.file {
        Some(_) if (desc.file_ignored)(&body) => None,
        Some(bytes) => {
            (desc.check_file)(state.config(), &own, &bytes).map_err(invalid_file)?;
            Some(bytes.to_vec())
        }
        None if (desc.file_required)(&body) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "MissingFile",
                "Unable to process file: multipart part 'file' is missing",
            ));
        }
        None => None,
    };
    Ok(Upload { body, own, file })
}

async fn create(
    desc: &'static FileKind,
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    path: PathNames,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Response, ApiError> {
    let parents = path_names(path)?;
    let mut upload = read_upload(desc, &state, form).await?;
    // A pull cluster's blob is its agent token's digest; the token is answered this once.
    let agent_token = match (desc.kind, parents.as_slice(), upload.own.as_slice()) {
        (Kind::Cluster, [provider], [cluster]) if is_pull_cluster(&upload.body) => {
            let issued = super::agent_routes::issue_for(provider, cluster)?;
            upload.file = Some(issued.record.clone());
            Some(issued)
        }
        _ => None,
    };
    let created_url = format!("{}/{}", uri.path().trim_end_matches('/'), upload.own.join("/"));
    let mut names = parents.clone();
    names.extend(upload.own);
    let path = ResourcePath::new(desc.kind, names);
    optimistic(&resource_name(&path), || async {
        check_references(&state, (desc.references)(&upload.body, &parents)).await?;
        // A cluster starts the history of its network intents at Created, as clm records it; a part of a DIG
        // (a gac resource) is a change to the DIG.
        let extra = write_ops(&state, &path, false).await?;
        state
            .catalog()
            .create(&path, &upload.body, upload.file.as_deref(), extra)
            .await?;
        Ok(())
    })
    .await?;
    let body = match &agent_token {
        Some(issued) => super::agent_routes::with_agent_token(upload.body, issued),
        None => upload.body,
    };
    Ok((StatusCode::CREATED, location(&created_url), JsonResponse(body)).into_response())
}

async fn replace(
    desc: &'static FileKind,
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    path: PathNames,
    headers: HeaderMap,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Response, ApiError> {
    let names = path_names(path)?;
    let condition = IfMatch::from_headers(&headers)?;
    let upload = read_upload(desc, &state, form).await?;
    check_put_names(&names, &upload.own)?;
    let path = ResourcePath::new(desc.kind, names);
    let parents = path.parent().map(|p| p.names().to_vec()).unwrap_or_default();
    let created = optimistic(&resource_name(&path), || async {
        preconditions::check(&state, condition.as_ref(), &path).await?;
        check_references(&state, (desc.references)(&upload.body, &parents)).await?;
        let exists = state.catalog().exists(&path).await?;
        let extra = write_ops(&state, &path, exists).await?;
        Ok(state
            .catalog()
            .upsert(&path, &upload.body, upload.file.as_deref(), extra)
            .await?)
    })
    .await?;
    let status = desc.put_answer.status(created);
    Ok((status, location(uri.path()), JsonResponse(upload.body)).into_response())
}

/// What a GET of a resource with a file asks for.
#[derive(Debug, PartialEq, Eq)]
enum Wanted {
    Metadata,
    File,
    Both,
}

fn negotiate(headers: &HeaderMap) -> Result<Wanted, ApiError> {
    let Some(accept) = headers.get(header::ACCEPT) else {
        return Ok(Wanted::Metadata);
    };
    let accept = accept.to_str().map_err(|_| {
        ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "NotAcceptable",
            "the Accept header is not readable text",
        )
    })?;
    let types: Vec<&str> = accept
        .split(',')
        .map(|part| part.split(';').next().unwrap_or("").trim())
        .collect();
    if types.contains(&"multipart/form-data") {
        Ok(Wanted::Both)
    } else if types.contains(&"application/octet-stream") {
        Ok(Wanted::File)
    } else if types
        .iter()
        .any(|t| matches!(*t, "application/json" | "*/*" | "application/*" | ""))
    {
        Ok(Wanted::Metadata)
    } else {
        Err(ApiError::new(
            StatusCode::MULTIPLE_CHOICES,
            "AcceptNotSupported",
            "set Accept: multipart/form-data, application/json or application/octet-stream",
        ))
    }
}

async fn read(
    desc: &'static FileKind,
    State(state): State<AppState>,
    path: PathNames,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let path = ResourcePath::new(desc.kind, path_names(path)?);
    let entry = state.catalog().get(&path).await?;
    let tag = [(header::ETAG, preconditions::etag(&entry))];
    let wanted = if desc.file_readable {
        negotiate(&headers)?
    } else {
        Wanted::Metadata
    };
    if wanted == Wanted::Metadata {
        // A cluster's metadata view shows the state of its network intents (seed 002) and how emco reaches it.
        let mut body = super::status_routes::with_state(&state, &path, entry.body).await?;
        if desc.kind == Kind::Cluster {
            body = super::agent_routes::with_connection(&state, &path.names().join("+"), body);
        }
        return Ok((tag, JsonResponse(body)).into_response());
    }
    let blob = state.catalog().blob(&path).await?.unwrap_or_default();
    // The parts to send: (part name, file name, content).
    let files: Vec<(&str, String, Vec<u8>)> = if desc.many_files && !blob.is_empty() {
        crate::lifecycle::gac::decode_files(&blob)
            .map_err(ApiError::internal)?
            .into_iter()
            .map(|(name, content)| ("files", name, content))
            .collect()
    } else if desc.many_files {
        Vec::new()
    } else {
        vec![("file", format!("{}.tgz", path.name()), blob)]
    };
    if wanted == Wanted::File {
        let [(_, _, file)] = <[_; 1]>::try_from(files).map_err(|files: Vec<_>| {
            ApiError::new(
                StatusCode::NOT_ACCEPTABLE,
                "NotAcceptable",
                format!(
                    "{} '{}' has {} files: ask for multipart/form-data",
                    desc.kind.type_name(),
                    path.name(),
                    files.len()
                ),
            )
        })?;
        return Ok((tag, [(header::CONTENT_TYPE, "application/octet-stream")], file).into_response());
    }
    let boundary = format!("emco-{:016x}", rand_boundary());
    let metadata = serde_json::to_vec(&entry.body).map_err(ApiError::internal)?;
    let mut body = Vec::with_capacity(metadata.len() + blob_len(&files) + 256);
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"metadata\"\r\nContent-Type: application/json\r\n\r\n").as_bytes());
    body.extend_from_slice(&metadata);
    for (part, file_name, content) in &files {
        let file_name = file_name.replace(['"', '\r', '\n'], "_");
        body.extend_from_slice(format!("\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"{part}\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
        body.extend_from_slice(content);
    }
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Ok((
        tag,
        [(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )],
        Body::from(body),
    )
        .into_response())
}

fn blob_len(files: &[(&str, String, Vec<u8>)]) -> usize {
    files
        .iter()
        .map(|(_, name, content)| name.len() + content.len() + 128)
        .sum()
}

fn rand_boundary() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}
