//! The JSON resources of the API, described as data ([`ResourceKind`]) and served by one set of handlers:
//! list, create, get, replace and delete, with EMCO's parent, child, reference and DIG-state rules.

use axum::Json as JsonResponse;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{OriginalUri, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use emco_appcontext::{Entry, Kind, ResourcePath};
use emco_model::logical_cloud::{
    ClusterQuota, ClusterReference, LogicalCloud, LogicalCloudKv, UserPermission,
};
use emco_model::network::{Network, ProviderNetwork};
use emco_model::resources::{
    AppDependency, AppDependencySpec, AppIntent, ClusterLabel, CompositeApp, Controller,
    DeploymentIntentGroup, GroupIntent, MetadataOnly,
};
use emco_model::{dependency_cycle, validate_label_value, validate_name};
use emco_store::Op;
use serde_json::Value as Json;

use super::body::{PathNames, decode, json_body, path_names};
use super::contract::{Content, Endpoint, Operation, QueryParameter, RequestBody, SchemaFn, query};
use super::paging::{self, Page};
use super::preconditions::{self, IfMatch};
use crate::lifecycle::{Lifecycle, LifecycleError, Subject};
use crate::optimistic::{optimistic, resource_name};
use crate::{ApiError, AppState};

/// A decoded body and the resource's own path names taken from it.
pub(crate) type Parsed = (Json, Vec<String>);

/// A resource the body names, which must exist.
pub(crate) struct Reference {
    /// The body field that names it.
    pub(crate) field: &'static str,
    /// Its path.
    pub(crate) path: ResourcePath,
}

/// How a kind of JSON resource is read, checked and stored.
pub(crate) struct ResourceKind {
    /// The catalog kind.
    pub(crate) kind: Kind,
    /// The name of its body's schema in the API document (the kind's name).
    pub(crate) name: &'static str,
    /// Its body's JSON Schema: the schema of the type `parse` decodes.
    pub(crate) schema: SchemaFn,
    /// Decodes and validates a body.
    pub(crate) parse: fn(Json) -> Result<Parsed, ApiError>,
    /// The resources a body refers to (given the parent's path names).
    pub(crate) references: fn(&Json, &[String]) -> Vec<Reference>,
    /// What EMCO answers a PUT of this kind that succeeded.
    pub(crate) put_answer: PutAnswer,
    /// What an answer shows of a stored body ([`as_stored`]: all of it; a kind holding secrets leaves them out).
    pub(crate) shown: fn(Json) -> Json,
}

/// An answer shows the whole stored body.
pub(crate) fn as_stored(body: Json) -> Json {
    body
}

/// What EMCO answers a PUT that succeeded, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PutAnswer {
    /// 201 when it created, 200 when it replaced.
    CreatedOrReplaced,
    /// 201 either way (apps, app profiles, composite apps…).
    AlwaysCreated,
    /// 200 either way (hpa's intents, consumers and requirements).
    AlwaysOk,
}

impl PutAnswer {
    /// The status of a PUT that `created` (else replaced).
    pub(crate) fn status(self, created: bool) -> StatusCode {
        match (self, created) {
            (Self::AlwaysCreated, _) | (Self::CreatedOrReplaced, true) => StatusCode::CREATED,
            (Self::AlwaysOk, _) | (Self::CreatedOrReplaced, false) => StatusCode::OK,
        }
    }
}

fn no_references(_: &Json, _: &[String]) -> Vec<Reference> {
    Vec::new()
}

fn metadata_only(what: &'static str) -> impl FnOnce(Json) -> Result<Parsed, ApiError> {
    move |raw| {
        let (typed, body) = decode::<MetadataOnly>(raw, |r| Ok(r.metadata.validate(what)?))?;
        Ok((body, vec![typed.metadata.name]))
    }
}

/// The app `app` names under the composite app of `parents` (none when `app` is absent or empty).
pub(crate) fn app_reference(field: &'static str, app: Option<&str>, parents: &[String]) -> Vec<Reference> {
    match app {
        Some(app) if !app.is_empty() && parents.len() >= 3 => {
            let mut names = parents[..3].to_vec();
            names.push(app.to_string());
            vec![Reference {
                field,
                path: ResourcePath::new(Kind::App, names),
            }]
        }
        _ => Vec::new(),
    }
}

pub(crate) static CONTROLLER: ResourceKind = ResourceKind {
    kind: Kind::Controller,
    name: "Controller",
    schema: |generator| <Controller as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<Controller>(raw, |r| Ok(r.validate_controller()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static PROJECT: ResourceKind = ResourceKind {
    kind: Kind::Project,
    name: "Project",
    schema: |generator| <MetadataOnly as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| metadata_only("project")(raw),
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static COMPOSITE_APP: ResourceKind = ResourceKind {
    kind: Kind::CompositeApp,
    name: "CompositeApp",
    schema: |generator| <CompositeApp as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<CompositeApp>(raw, |r| {
            r.metadata.validate("composite app")?;
            Ok(validate_name(
                "spec.compositeAppVersion",
                &r.spec.composite_app_version,
            )?)
        })?;
        Ok((body, vec![typed.metadata.name, typed.spec.composite_app_version]))
    },
    references: no_references,
    put_answer: PutAnswer::AlwaysCreated,
    shown: as_stored,
};

pub(crate) static APP_DEPENDENCY: ResourceKind = ResourceKind {
    kind: Kind::AppDependency,
    name: "AppDependency",
    schema: |generator| <AppDependency as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<AppDependency>(raw, |r| Ok(r.validate_dependency()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| app_reference("spec.app", body["spec"]["app"].as_str(), parents),
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static COMPOSITE_PROFILE: ResourceKind = ResourceKind {
    kind: Kind::CompositeProfile,
    name: "CompositeProfile",
    schema: |generator| <MetadataOnly as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| metadata_only("composite profile")(raw),
    references: no_references,
    put_answer: PutAnswer::AlwaysCreated,
    shown: as_stored,
};

pub(crate) static DEPLOYMENT_INTENT_GROUP: ResourceKind = ResourceKind {
    kind: Kind::DeploymentIntentGroup,
    name: "DeploymentIntentGroup",
    schema: |generator| <DeploymentIntentGroup as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<DeploymentIntentGroup>(raw, |r| Ok(r.validate_dig()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| {
        let mut references = Vec::new();
        if let Some(profile) = body["spec"]["compositeProfile"].as_str() {
            let mut names = parents.to_vec();
            names.push(profile.to_string());
            references.push(Reference {
                field: "spec.compositeProfile",
                path: ResourcePath::new(Kind::CompositeProfile, names),
            });
        }
        for entry in body["spec"]["overrideValues"].as_array().into_iter().flatten() {
            references.extend(app_reference(
                "spec.overrideValues[].app",
                entry["app"].as_str(),
                parents,
            ));
        }
        references
    },
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static GROUP_INTENT: ResourceKind = ResourceKind {
    kind: Kind::GroupIntent,
    name: "GroupIntent",
    schema: |generator| <GroupIntent as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<GroupIntent>(raw, |r| {
            r.metadata.validate("intent")?;
            for (controller, intent) in &r.spec.intent {
                validate_name(&format!("spec.intent.{controller}"), intent)?;
            }
            Ok(())
        })?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static GENERIC_K8S_INTENT: ResourceKind = ResourceKind {
    kind: Kind::GenericK8sIntent,
    name: "GenericK8sIntent",
    schema: |generator| <MetadataOnly as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| metadata_only("generic k8s intent")(raw),
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static NETWORK_CONTROLLER_INTENT: ResourceKind = ResourceKind {
    kind: Kind::NetworkControllerIntent,
    name: "NetworkControllerIntent",
    schema: |generator| <MetadataOnly as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| metadata_only("network controller intent")(raw),
    references: no_references,
    put_answer: PutAnswer::AlwaysCreated,
    shown: as_stored,
};

pub(crate) static WORKLOAD_INTENT: ResourceKind = ResourceKind {
    kind: Kind::WorkloadIntent,
    name: "WorkloadIntent",
    schema: |generator| {
        <emco_model::ovnaction::WorkloadIntent as schemars::JsonSchema>::json_schema(generator)
    },
    parse: |raw| {
        let (typed, body) =
            decode::<emco_model::ovnaction::WorkloadIntent>(raw, |r| Ok(r.validate_workload_intent()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| app_reference("spec.app", body["spec"]["app"].as_str(), parents),
    put_answer: PutAnswer::AlwaysCreated,
    shown: as_stored,
};

pub(crate) static WORKLOAD_INTERFACE: ResourceKind = ResourceKind {
    kind: Kind::WorkloadInterface,
    name: "WorkloadInterface",
    schema: |generator| {
        <emco_model::ovnaction::WorkloadInterface as schemars::JsonSchema>::json_schema(generator)
    },
    parse: |raw| {
        let (mut typed, _) = decode::<emco_model::ovnaction::WorkloadInterface>(raw, |_| Ok(()))?;
        typed.validate_interface()?;
        // Stored as validated: `defaultGateway` filled in, as EMCO's handler stores it.
        let body = serde_json::to_value(&typed).map_err(ApiError::internal)?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::AlwaysCreated,
    shown: as_stored,
};

pub(crate) static HPA_INTENT: ResourceKind = ResourceKind {
    kind: Kind::HpaIntent,
    name: "HpaIntent",
    schema: |generator| <emco_model::hpa::HpaIntent as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<emco_model::hpa::HpaIntent>(raw, |r| Ok(r.validate_hpa_intent()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| app_reference("spec.app", body["spec"]["app"].as_str(), parents),
    put_answer: PutAnswer::AlwaysOk,
    shown: as_stored,
};

pub(crate) static HPA_CONSUMER: ResourceKind = ResourceKind {
    kind: Kind::HpaConsumer,
    name: "HpaConsumer",
    schema: |generator| <emco_model::hpa::HpaConsumer as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<emco_model::hpa::HpaConsumer>(raw, |r| Ok(r.validate_hpa_consumer()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::AlwaysOk,
    shown: as_stored,
};

pub(crate) static HPA_REQUIREMENT: ResourceKind = ResourceKind {
    kind: Kind::HpaRequirement,
    name: "HpaRequirement",
    schema: |generator| <emco_model::hpa::HpaRequirement as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) =
            decode::<emco_model::hpa::HpaRequirement>(raw, |r| Ok(r.validate_hpa_requirement()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::AlwaysOk,
    shown: as_stored,
};

pub(crate) static TRAFFIC_GROUP_INTENT: ResourceKind = ResourceKind {
    kind: Kind::TrafficGroupIntent,
    name: "TrafficGroupIntent",
    schema: |generator| <MetadataOnly as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| metadata_only("traffic group intent")(raw),
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static INBOUND_SERVER_INTENT: ResourceKind = ResourceKind {
    kind: Kind::InboundServerIntent,
    name: "InboundServerIntent",
    schema: |generator| {
        <emco_model::dtc::InboundServerIntent as schemars::JsonSchema>::json_schema(generator)
    },
    parse: |raw| {
        let (typed, body) =
            decode::<emco_model::dtc::InboundServerIntent>(raw, |r| Ok(r.validate_inbound_server()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| app_reference("spec.app", body["spec"]["app"].as_str(), parents),
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static INBOUND_CLIENTS_INTENT: ResourceKind = ResourceKind {
    kind: Kind::InboundClientsIntent,
    name: "InboundClientsIntent",
    schema: |generator| {
        <emco_model::dtc::InboundClientsIntent as schemars::JsonSchema>::json_schema(generator)
    },
    parse: |raw| {
        let (typed, body) =
            decode::<emco_model::dtc::InboundClientsIntent>(raw, |r| Ok(r.validate_inbound_clients()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| app_reference("spec.app", body["spec"]["app"].as_str(), parents),
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static INBOUND_CLIENTS_ACCESS_INTENT: ResourceKind = ResourceKind {
    kind: Kind::InboundClientsAccessIntent,
    name: "InboundClientsAccessIntent",
    schema: |generator| {
        <emco_model::dtc::InboundClientsAccessIntent as schemars::JsonSchema>::json_schema(generator)
    },
    parse: |raw| {
        let (typed, body) =
            decode::<emco_model::dtc::InboundClientsAccessIntent>(raw, |r| Ok(r.validate_inbound_access()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static GENERIC_PLACEMENT_INTENT: ResourceKind = ResourceKind {
    kind: Kind::GenericPlacementIntent,
    name: "GenericPlacementIntent",
    schema: |generator| <MetadataOnly as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| metadata_only("generic placement intent")(raw),
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static APP_INTENT: ResourceKind = ResourceKind {
    kind: Kind::AppIntent,
    name: "AppIntent",
    schema: |generator| <AppIntent as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<AppIntent>(raw, |r| Ok(r.validate_app_intent()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, parents| app_reference("spec.app", body["spec"]["app"].as_str(), parents),
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static CLUSTER_PROVIDER: ResourceKind = ResourceKind {
    kind: Kind::ClusterProvider,
    name: "ClusterProvider",
    schema: |generator| <MetadataOnly as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| metadata_only("cluster provider")(raw),
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static CLUSTER_LABEL: ResourceKind = ResourceKind {
    kind: Kind::ClusterLabel,
    name: "ClusterLabel",
    schema: |generator| <ClusterLabel as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<ClusterLabel>(raw, |r| {
            Ok(validate_label_value("clusterLabel", &r.cluster_label)?)
        })?;
        Ok((body, vec![typed.cluster_label]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static CLUSTER_KV: ResourceKind = ResourceKind {
    kind: Kind::ClusterKv,
    name: "ClusterKvPairs",
    schema: |generator| <emco_model::ClusterKvPairs as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<emco_model::ClusterKvPairs>(raw, |r| Ok(r.validate_kv()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

/// A cluster provider's sync object: key-value pairs a GitOps cluster names (its repository, its agent); the
/// values of [`emco_model::SECRET_SYNC_KEYS`] are kept and never answered. EMCO answers every PUT 201.
pub(crate) static CLUSTER_SYNC_OBJECT: ResourceKind = ResourceKind {
    kind: Kind::ClusterSyncObject,
    name: "ClusterSyncObject",
    schema: |generator| <emco_model::ClusterSyncObjects as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<emco_model::ClusterSyncObjects>(raw, |r| Ok(r.validate_kv()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::AlwaysCreated,
    shown: without_secrets,
};

/// A sync object's body without its secret values.
fn without_secrets(mut body: Json) -> Json {
    if let Ok(spec) = serde_json::from_value::<emco_model::KvSpec>(body["spec"].clone())
        && let Ok(shown) = serde_json::to_value(spec.without_secrets())
    {
        body["spec"] = shown;
    }
    body
}

/// A cluster-event listener registered as EMCO's clm registers one (kept and shown; emco's own controllers read
/// clusters when they run).
pub(crate) static CLM_CONTROLLER: ResourceKind = ResourceKind {
    kind: Kind::ClmController,
    name: "ClmController",
    schema: |generator| <Controller as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<Controller>(raw, |r| Ok(r.validate_controller()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static DTC_CONTROLLER: ResourceKind = ResourceKind {
    kind: Kind::DtcController,
    name: "DtcController",
    schema: |generator| <Controller as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<Controller>(raw, |r| Ok(r.validate_controller()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static NETWORK: ResourceKind = ResourceKind {
    kind: Kind::Network,
    name: "Network",
    schema: |generator| <Network as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<Network>(raw, |r| Ok(r.validate_network()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static PROVIDER_NETWORK: ResourceKind = ResourceKind {
    kind: Kind::ProviderNetwork,
    name: "ProviderNetwork",
    schema: |generator| <ProviderNetwork as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<ProviderNetwork>(raw, |r| Ok(r.validate_provider_network()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static LOGICAL_CLOUD: ResourceKind = ResourceKind {
    kind: Kind::LogicalCloud,
    name: "LogicalCloud",
    schema: emco_model::logical_cloud::logical_cloud_schema,
    parse: |raw| {
        let (typed, body) = decode::<LogicalCloud>(raw, |r| Ok(r.validate_logical_cloud()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static CLUSTER_REFERENCE: ResourceKind = ResourceKind {
    kind: Kind::ClusterReference,
    name: "ClusterReference",
    schema: |generator| <ClusterReference as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<ClusterReference>(raw, |r| Ok(r.validate_cluster_reference()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: |body, _| match (
        body["spec"]["clusterProvider"].as_str(),
        body["spec"]["cluster"].as_str(),
    ) {
        (Some(provider), Some(cluster)) => vec![Reference {
            field: "spec.cluster",
            path: ResourcePath::new(Kind::Cluster, vec![provider.to_string(), cluster.to_string()]),
        }],
        _ => Vec::new(),
    },
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static USER_PERMISSION: ResourceKind = ResourceKind {
    kind: Kind::UserPermission,
    name: "UserPermission",
    schema: |generator| <UserPermission as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<UserPermission>(raw, |r| Ok(r.validate_user_permission()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static CLUSTER_QUOTA: ResourceKind = ResourceKind {
    kind: Kind::ClusterQuota,
    name: "ClusterQuota",
    schema: emco_model::logical_cloud::cluster_quota_schema,
    parse: |raw| {
        let (typed, body) = decode::<ClusterQuota>(raw, |r| Ok(r.validate_cluster_quota()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

pub(crate) static LOGICAL_CLOUD_KV: ResourceKind = ResourceKind {
    kind: Kind::LogicalCloudKv,
    name: "LogicalCloudKv",
    schema: |generator| <LogicalCloudKv as schemars::JsonSchema>::json_schema(generator),
    parse: |raw| {
        let (typed, body) = decode::<LogicalCloudKv>(raw, |r| Ok(r.validate_kv()?))?;
        Ok((body, vec![typed.metadata.name]))
    },
    references: no_references,
    put_answer: PutAnswer::CreatedOrReplaced,
    shown: as_stored,
};

/// A collection's route, described: GET lists, POST creates.
pub(crate) fn collection_endpoint(
    path: impl Into<String>,
    desc: &'static ResourceKind,
    tag: &'static str,
) -> Endpoint {
    Endpoint::new(
        path,
        collection(desc),
        collection_operations(
            desc.kind,
            desc.name,
            desc.schema,
            tag,
            LIST_QUERY,
            RequestBody::Json(desc.name, desc.schema),
        ),
    )
}

/// The operations of a collection of `kind`: its list (with these query parameters) and its create (this body).
pub(crate) fn collection_operations(
    kind: Kind,
    name: &'static str,
    schema: SchemaFn,
    tag: &'static str,
    list_query: &[QueryParameter],
    body: RequestBody,
) -> Vec<Operation> {
    let what = kind.type_name();
    vec![
        Operation::get(
            format!("list{name}s"),
            tag,
            format!("List the {what}s, in creation order"),
        )
        .query(list_query)
        .answer(
            200,
            format!("The {what}s (a page of them with `limit`)"),
            Content::JsonArray(name, schema),
        )
        .header(
            "Link",
            "`<URL>; rel=\"next\"`: the next page, when `limit` left some out",
        )
        .header(
            "X-Continue",
            "The next page's `continue` token, when `limit` left some out",
        )
        .errors(&[
            (400, "A query parameter is malformed or unknown (named)"),
            (404, "The parent does not exist"),
        ]),
        Operation::post(format!("create{name}"), tag, format!("Create a {what}"))
            .body(body)
            .answer(
                201,
                format!("Created: the {what} as stored"),
                Content::Json(name, schema),
            )
            .header("Location", "The new resource's URL")
            .errors(&[
                (400, "The body is malformed or a field is invalid (named)"),
                (
                    409,
                    "It exists already, its parent does not, or it names a resource that does not exist",
                ),
                (422, "The file part is invalid"),
            ]),
    ]
}

/// An item's route, described: GET, PUT, DELETE.
pub(crate) fn item_endpoint(
    path: impl Into<String>,
    desc: &'static ResourceKind,
    tag: &'static str,
) -> Endpoint {
    let mut operations = item_operations(desc.kind, desc.name, desc.schema, tag);
    operations.insert(
        1,
        replace_operation(
            desc.kind,
            (desc.name, desc.schema),
            tag,
            RequestBody::Json(desc.name, desc.schema),
            desc.put_answer,
        ),
    );
    Endpoint::new(path, item(desc), operations)
}

/// The GET and DELETE of one resource of `kind`.
pub(crate) fn item_operations(
    kind: Kind,
    name: &'static str,
    schema: SchemaFn,
    tag: &'static str,
) -> Vec<Operation> {
    let what = kind.type_name();
    vec![
        Operation::get(format!("get{name}"), tag, format!("Read a {what}"))
            .answer(200, format!("The {what}"), Content::Json(name, schema))
            .header("ETag", "The stored revision, for If-Match")
            .errors(&[(404, "It does not exist")]),
        Operation::delete(format!("delete{name}"), tag, format!("Delete a {what}"))
            .answer(204, "Deleted", Content::Empty)
            .header("Location", "Where the deleted resource's state is read")
            .errors(&[
                (400, "If-Match is malformed"),
                (404, "It does not exist"),
                (409, "Something still uses it, or its lifecycle forbids it"),
                (412, "If-Match does not hold: it changed since it was read"),
            ]),
    ]
}

/// The PUT of one resource of `kind`.
pub(crate) fn replace_operation(
    kind: Kind,
    (name, schema): (&'static str, SchemaFn),
    tag: &'static str,
    body: RequestBody,
    answer: PutAnswer,
) -> Operation {
    let what = kind.type_name();
    let mut operation = Operation::put(
        format!("replace{name}"),
        tag,
        format!("Create or replace a {what}"),
    )
    .body(body);
    let answers: &[(u16, &str)] = match answer {
        PutAnswer::CreatedOrReplaced => &[(200, "Replaced"), (201, "Created")],
        PutAnswer::AlwaysCreated => &[(201, "Created or replaced (EMCO answers 201 either way)")],
        PutAnswer::AlwaysOk => &[(200, "Created or replaced (EMCO answers 200 either way)")],
    };
    for (status, description) in answers {
        operation = operation
            .answer(*status, *description, Content::Json(name, schema))
            .header("Location", "The resource's URL");
    }
    operation.errors(&[
        (
            400,
            "The body is malformed, a field is invalid, or its name differs from the URL's",
        ),
        (
            409,
            "It names a resource that does not exist, or its lifecycle forbids changing it",
        ),
        (412, "If-Match does not hold: it changed since it was read"),
    ])
}

/// The routes of a collection: GET lists, POST creates.
pub(crate) fn collection(desc: &'static ResourceKind) -> MethodRouter<AppState> {
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
              headers: HeaderMap,
              body: Result<Bytes, BytesRejection>| { create(desc, state, uri, path, headers, body) },
    )
}

/// The routes of one resource: GET, PUT, DELETE.
pub(crate) fn item(desc: &'static ResourceKind) -> MethodRouter<AppState> {
    get(move |state: State<AppState>, path: PathNames| read(desc, state, path))
        .put(
            move |state: State<AppState>,
                  uri: OriginalUri,
                  path: PathNames,
                  headers: HeaderMap,
                  body: Result<Bytes, BytesRejection>| {
                replace(desc, state, uri, path, headers, body)
            },
        )
        .delete(
            move |state: State<AppState>, uri: OriginalUri, path: PathNames, headers: HeaderMap| {
                remove(desc.kind, state, uri, path, headers)
            },
        )
}

/// The `?app=` filter of a list, if any.
pub(crate) fn query_value<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
}

async fn list(
    desc: &'static ResourceKind,
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    path: PathNames,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let parents = path_names(path)?;
    let query = list_query(query, LIST_QUERY)?;
    let page = Page::from_query(&query)?;
    let entries = list_entries(&state, desc.kind, &parents, query_value(&query, "app")).await?;
    let (entries, next) = page.select(entries, |entry| entry);
    let bodies: Vec<Json> = entries
        .into_iter()
        .map(|entry| (desc.shown)(entry.body))
        .collect();
    Ok(paging::answer(bodies, next, &uri))
}

/// The query parameters of a list: `app` (only items whose `spec.app` is that app) and paging's.
pub(crate) const LIST_QUERY: &[QueryParameter] = &[
    query("app", "Only the items whose spec.app is this app"),
    paging::LIMIT_QUERY,
    paging::CONTINUE_QUERY,
];

/// A list's query, refused with 400 naming the parameter when it holds one the list does not know (a misspelt
/// `?lmit=` silently ignored would answer everything).
pub(crate) fn list_query(
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    known: &[QueryParameter],
) -> Result<Vec<(String, String)>, ApiError> {
    let Query(query) = query.map_err(|err| ApiError::invalid(format!("bad query: {err}")))?;
    if let Some((unknown, _)) = query
        .iter()
        .find(|(name, _)| !known.iter().any(|parameter| parameter.name == name))
    {
        let names: Vec<&str> = known.iter().map(|parameter| parameter.name).collect();
        return Err(ApiError::invalid(format!(
            "unknown query parameter '{}': this list takes {}",
            emco_model::shown(unknown),
            names.join(", ")
        )));
    }
    Ok(query)
}

/// The bodies of a collection, in creation order, optionally only those whose `spec.app` is `app`.
pub(crate) async fn list_bodies(
    state: &AppState,
    kind: Kind,
    parents: &[String],
    app: Option<&str>,
) -> Result<Vec<Json>, ApiError> {
    let entries = list_entries(state, kind, parents, app).await?;
    Ok(entries.into_iter().map(|entry| entry.body).collect())
}

/// The entries of a collection, in creation order, optionally only those whose `spec.app` is `app`; 404 when
/// the parent does not exist.
pub(crate) async fn list_entries(
    state: &AppState,
    kind: Kind,
    parents: &[String],
    app: Option<&str>,
) -> Result<Vec<Entry>, ApiError> {
    if let Some(parent) = kind.parent() {
        state
            .catalog()
            .require(&ResourcePath::new(parent, parents.to_vec()))
            .await?;
    }
    let entries = state.catalog().list(kind, parents).await?;
    Ok(entries
        .into_iter()
        .filter(|entry| app.is_none_or(|app| entry.body["spec"]["app"].as_str() == Some(app)))
        .collect())
}

/// Checks that every resource a body refers to exists.
pub(crate) async fn check_references(state: &AppState, references: Vec<Reference>) -> Result<(), ApiError> {
    for reference in references {
        if !state.catalog().exists(&reference.path).await? {
            return Err(ApiError::conflict(
                "ReferenceNotFound",
                format!(
                    "{} names {} '{}', which does not exist",
                    reference.field,
                    reference.path.kind().type_name(),
                    reference.path.display_name()
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses writing the app dependency at `path` (new or replacing) when it would close a cycle among the apps of
/// its composite app: 409 `DependencyCycle` naming the cycle, the same refusal instantiate gives. The lists read
/// are in the request's read set, so two writes cannot close a cycle together. Other kinds pass.
async fn check_dependency_cycle(state: &AppState, path: &ResourcePath, body: &Json) -> Result<(), ApiError> {
    if path.kind() != Kind::AppDependency {
        return Ok(());
    }
    let written: AppDependency = serde_json::from_value(body.clone()).map_err(ApiError::internal)?;
    let composite_app = &path.names()[..Kind::CompositeApp.depth()];
    let depending_app = &path.names()[Kind::App.depth() - 1];
    let mut graph: Vec<(String, Vec<AppDependencySpec>)> = Vec::new();
    for app in state.catalog().list(Kind::App, composite_app).await? {
        let mut dependencies: Vec<AppDependencySpec> = state
            .catalog()
            .list_as::<AppDependency>(Kind::AppDependency, app.path.names())
            .await?
            .into_iter()
            .filter(|(stored, _)| stored != path)
            .map(|(_, dependency)| dependency.spec)
            .collect();
        if app.path.name() == depending_app {
            dependencies.push(written.spec.clone());
        }
        graph.push((app.path.name().to_string(), dependencies));
    }
    match dependency_cycle(graph.iter().map(|(app, on)| (app.as_str(), on.as_slice()))) {
        Some(cycle) => Err(LifecycleError::DependencyCycle { cycle }.into()),
        None => Ok(()),
    }
}

/// The lifecycle ops that go with writing `path`: a new resource with a lifecycle (DIG, logical cloud) starts its
/// history at Created; changing one, or what it is built from (a DIG's intents, a cluster's networks, a logical
/// cloud's references, permissions, quotas and pairs), is refused while it is instantiated and returns an approved
/// DIG to Created.
pub(crate) async fn write_ops(
    state: &AppState,
    path: &ResourcePath,
    exists: bool,
) -> Result<Vec<Op>, ApiError> {
    if !exists && Subject::of(path.kind()).is_some() {
        return Ok(vec![Lifecycle::created_op(path)]);
    }
    match Subject::governing(path) {
        Some(governing) if Subject::is_controller_part(path.kind()) => {
            Ok(state.lifecycle().controller_part_ops(&governing).await?)
        }
        Some(governing) => {
            let part = governing != *path;
            Ok(state.lifecycle().modification_ops(&governing, part).await?)
        }
        None => Ok(Vec::new()),
    }
}

pub(crate) async fn create(
    desc: &'static ResourceKind,
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    path: PathNames,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let parents = path_names(path)?;
    let raw = json_body(&headers, body, state.config().max_body_bytes)?;
    let (body, own) = (desc.parse)(raw)?;
    let created_url = format!("{}/{}", uri.path().trim_end_matches('/'), own.join("/"));
    let mut names = parents.clone();
    names.extend(own);
    let path = ResourcePath::new(desc.kind, names);
    optimistic(&resource_name(&path), || {
        create_checked(desc, &state, &path, &parents, &body)
    })
    .await?;
    Ok((
        StatusCode::CREATED,
        location(&created_url),
        JsonResponse((desc.shown)(body)),
    )
        .into_response())
}

/// The checks and the write of a create, run again when a concurrent write wins the race.
async fn create_checked(
    desc: &'static ResourceKind,
    state: &AppState,
    path: &ResourcePath,
    parents: &[String],
    body: &Json,
) -> Result<(), ApiError> {
    if let Some(parent) = path.parent() {
        state.catalog().require(&parent).await.map_err(|_| {
            ApiError::conflict(
                "ParentNotFound",
                format!(
                    "cannot create {} '{}': {} '{}' not found",
                    desc.kind.type_name(),
                    path.name(),
                    parent.kind().type_name(),
                    parent.display_name()
                ),
            )
        })?;
    }
    if state.catalog().exists(path).await? {
        return Err(ApiError::conflict(
            "AlreadyExists",
            format!(
                "{} already exists: {}",
                desc.kind.type_name(),
                path.display_name()
            ),
        ));
    }
    check_references(state, (desc.references)(body, parents)).await?;
    check_dependency_cycle(state, path, body).await?;
    let extra = write_ops(state, path, false).await?;
    state.catalog().create(path, body, None, extra).await?;
    Ok(())
}

async fn read(
    desc: &'static ResourceKind,
    State(state): State<AppState>,
    path: PathNames,
) -> Result<Response, ApiError> {
    let path = ResourcePath::new(desc.kind, path_names(path)?);
    let entry = state.catalog().get(&path).await?;
    let tag = preconditions::etag(&entry);
    // A resource with a lifecycle shows its state object beside what was stored (seed 002).
    let body = super::status_routes::with_state(&state, &path, (desc.shown)(entry.body)).await?;
    Ok(([(header::ETAG, tag)], JsonResponse(body)).into_response())
}

/// The `Location` of a mutation's answer: where the state of what it changed is read.
pub(crate) fn location(url: &str) -> [(axum::http::HeaderName, String); 1] {
    [(axum::http::header::LOCATION, url.to_string())]
}

/// Where a deleted resource's state is read: the status of a resource with a lifecycle (its terminated contexts
/// stay there until the history goes), else its own URL (which answers 404 once it is gone).
pub(crate) fn deleted_location(path: &ResourcePath, url: &str) -> String {
    match Subject::of(path.kind()) {
        Some(subject) => super::lifecycle_routes::status_url(subject, path),
        None => url.to_string(),
    }
}

/// Checks that the names in a PUT body match the URL.
pub(crate) fn check_put_names(url_names: &[String], own: &[String]) -> Result<(), ApiError> {
    let url_own = &url_names[url_names.len() - own.len()..];
    if own.iter().any(String::is_empty) {
        return Err(ApiError::invalid("Missing name in PUT request"));
    }
    if url_own != own {
        return Err(ApiError::invalid(format!(
            "Mismatched name in PUT request: the URL names '{}', the body '{}'",
            url_own.join("/"),
            own.join("/")
        )));
    }
    Ok(())
}

async fn replace(
    desc: &'static ResourceKind,
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    path: PathNames,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let names = path_names(path)?;
    let condition = IfMatch::from_headers(&headers)?;
    let raw = json_body(&headers, body, state.config().max_body_bytes)?;
    let (body, own) = (desc.parse)(raw)?;
    check_put_names(&names, &own)?;
    let path = ResourcePath::new(desc.kind, names);
    let parents = path.parent().map(|p| p.names().to_vec()).unwrap_or_default();
    let created = optimistic(&resource_name(&path), || async {
        preconditions::check(&state, condition.as_ref(), &path).await?;
        check_references(&state, (desc.references)(&body, &parents)).await?;
        check_dependency_cycle(&state, &path, &body).await?;
        let exists = state.catalog().exists(&path).await?;
        let extra = write_ops(&state, &path, exists).await?;
        Ok(state.catalog().upsert(&path, &body, None, extra).await?)
    })
    .await?;
    let status = desc.put_answer.status(created);
    Ok((status, location(uri.path()), JsonResponse((desc.shown)(body))).into_response())
}

async fn remove(
    kind: Kind,
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    path: PathNames,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let path = ResourcePath::new(kind, path_names(path)?);
    let condition = IfMatch::from_headers(&headers)?;
    let answer = delete_resource(&state, &path, condition.as_ref()).await?;
    Ok((location(&deleted_location(&path, uri.path())), answer).into_response())
}

/// Deletes a resource, with the lifecycle rules of DIGs and their intents, if the request's `If-Match` holds
/// (optimistically: run again when a concurrent write wins the race).
pub(crate) async fn delete_resource(
    state: &AppState,
    path: &ResourcePath,
    condition: Option<&IfMatch>,
) -> Result<Response, ApiError> {
    optimistic(&resource_name(path), || delete_checked(state, path, condition)).await
}

async fn delete_checked(
    state: &AppState,
    path: &ResourcePath,
    condition: Option<&IfMatch>,
) -> Result<Response, ApiError> {
    preconditions::check(state, condition, path).await?;
    state.catalog().get(path).await?;
    crate::usage::check_unused(state.catalog(), state.contexts(), path).await?;
    let extra = if Subject::of(path.kind()).is_some() {
        state.lifecycle().deletion_ops(path).await?
    } else if let Some(governing) = Subject::governing(path) {
        state.lifecycle().part_deletion_ops(&governing).await?
    } else {
        write_ops(state, path, true).await?
    };
    state.catalog().delete(path, extra).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
