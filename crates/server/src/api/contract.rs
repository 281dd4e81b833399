//! The API's contract: every route as data — its path template, its handler and, for each method it serves,
//! what the operation takes and answers ([`Operation`]). The router is built from this one table, and so is the
//! OpenAPI 3.1 document served at [`OPENAPI_JSON_PATH`] and [`OPENAPI_YAML_PATH`] ([`document`]): a route cannot
//! exist without its description. Request and answer bodies are described by the model types' own JSON Schemas
//! (schemars, draft 2020-12 — OpenAPI 3.1's dialect), the document's frame by utoipa's OpenAPI model.
//!
//! Every operation also answers the `{"code","message"}` error (the `default` answer) and, with authentication
//! on, needs the bearer token (the `bearer` security scheme) — except the few that need none.

use std::collections::BTreeMap;

use axum::routing::MethodRouter;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Value as Json, json};
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, Paths};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{ComponentsBuilder, InfoBuilder, OpenApiBuilder, Ref, RefOr, Required, Schema};

use crate::AppState;

/// Where the document is served as JSON.
pub(crate) const OPENAPI_JSON_PATH: &str = "/v2/openapi.json";
/// Where the document is served as YAML.
pub(crate) const OPENAPI_YAML_PATH: &str = "/v2/openapi.yaml";
/// The component name of the error answer.
const ERROR_SCHEMA: &str = "Error";

/// A JSON Schema of a body, from the generator that collects the document's components.
pub(crate) type SchemaFn = fn(&mut SchemaGenerator) -> schemars::Schema;

/// One route: its path template, its handler, and the operations it serves.
pub(crate) struct Endpoint {
    /// The path template (axum's and OpenAPI's syntax agree: `{name}`).
    pub(crate) path: String,
    /// What serves it.
    pub(crate) handler: MethodRouter<AppState>,
    /// One per method the handler serves.
    pub(crate) operations: Vec<Operation>,
}

impl Endpoint {
    /// A route and the operations it serves.
    pub(crate) fn new(
        path: impl Into<String>,
        handler: MethodRouter<AppState>,
        operations: Vec<Operation>,
    ) -> Self {
        Self {
            path: path.into(),
            handler,
            operations,
        }
    }
}

/// What a request body is.
#[derive(Clone, Copy)]
pub(crate) enum RequestBody {
    /// A JSON document of this schema, named as a component.
    Json(&'static str, SchemaFn),
    /// A multipart form: a `metadata` part (JSON of this schema) and a `file` part.
    Multipart {
        /// The metadata part's component name and schema.
        metadata: (&'static str, SchemaFn),
        /// What the file part holds.
        file: &'static str,
        /// The files travel as any number of parts named `files` (gac customizations), not one named `file`.
        many: bool,
        /// A condition on the whole form (JSON Schema, e.g. `if`/`then` making the file required for some
        /// metadata), registered with the form as component `{name}Form`.
        rule: Option<fn() -> Json>,
    },
}

/// What an answer's body is.
#[derive(Clone, Copy)]
pub(crate) enum Content {
    /// None (204, 202).
    Empty,
    /// A JSON document of this schema, named as a component.
    Json(&'static str, SchemaFn),
    /// A JSON array of items of this schema, named as a component.
    JsonArray(&'static str, SchemaFn),
    /// A JSON document of this schema, or (with `watch` or `Accept: text/event-stream`) a stream of server-sent
    /// events whose data is that document as it changes.
    JsonOrStream(&'static str, SchemaFn),
    /// Another media type (text, binary, a multipart form, an event stream), described in words.
    Other(&'static str),
}

/// A query parameter.
#[derive(Clone, Copy)]
pub(crate) struct QueryParameter {
    /// Its name.
    pub(crate) name: &'static str,
    /// What it does.
    pub(crate) description: &'static str,
    /// Whether it may be given more than once.
    pub(crate) repeatable: bool,
    /// The values the server takes.
    pub(crate) values: QueryValues,
}

/// The values a query parameter takes, as the server checks them.
#[derive(Clone, Copy)]
pub(crate) enum QueryValues {
    /// Any text.
    Text,
    /// A whole number within these bounds.
    Integer(i64, i64),
    /// Text matching this pattern.
    Pattern(&'static str),
    /// Text matching this pattern, at most this many characters.
    PatternUpTo(&'static str, usize),
    /// One of these words.
    OneOf(&'static [&'static str]),
}

/// A query parameter given at most once.
pub(crate) const fn query(name: &'static str, description: &'static str) -> QueryParameter {
    QueryParameter {
        name,
        description,
        repeatable: false,
        values: QueryValues::Text,
    }
}

/// A query parameter that may be repeated.
pub(crate) const fn repeatable(name: &'static str, description: &'static str) -> QueryParameter {
    QueryParameter {
        name,
        description,
        repeatable: true,
        values: QueryValues::Text,
    }
}

impl QueryParameter {
    /// The same parameter, taking only `values`.
    pub(crate) const fn taking(mut self, values: QueryValues) -> Self {
        self.values = values;
        self
    }

    fn schema(&self) -> RefOr<Schema> {
        let text = ObjectBuilder::new().schema_type(Type::String);
        let builder = match self.values {
            QueryValues::Text => return string_schema(),
            QueryValues::Integer(min, max) => ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(min))
                .maximum(Some(max)),
            QueryValues::Pattern(pattern) => text.pattern(Some(pattern)),
            QueryValues::PatternUpTo(pattern, max) => text.pattern(Some(pattern)).max_length(Some(max)),
            QueryValues::OneOf(words) => text.enum_values(Some(words.iter().copied())),
        };
        RefOr::T(Schema::Object(builder.build()))
    }
}

/// An answer of an operation.
#[derive(Clone)]
struct Answer {
    status: u16,
    description: String,
    content: Content,
    headers: Vec<(&'static str, &'static str)>,
}

/// One method of a route, described.
#[derive(Clone)]
pub(crate) struct Operation {
    method: HttpMethod,
    id: String,
    summary: String,
    tag: &'static str,
    query: Vec<QueryParameter>,
    body: Option<RequestBody>,
    answers: Vec<Answer>,
    public: bool,
    /// Schemas its answers refer to by name, to be in the document's components.
    also: Vec<(&'static str, SchemaFn)>,
}

impl Operation {
    fn new(method: HttpMethod, id: impl Into<String>, tag: &'static str, summary: impl Into<String>) -> Self {
        Self {
            method,
            id: id.into(),
            summary: summary.into(),
            tag,
            query: Vec::new(),
            body: None,
            answers: Vec::new(),
            public: false,
            also: Vec::new(),
        }
    }

    /// A GET.
    pub(crate) fn get(id: impl Into<String>, tag: &'static str, summary: impl Into<String>) -> Self {
        Self::new(HttpMethod::Get, id, tag, summary)
    }

    /// A POST.
    pub(crate) fn post(id: impl Into<String>, tag: &'static str, summary: impl Into<String>) -> Self {
        Self::new(HttpMethod::Post, id, tag, summary)
    }

    /// A PUT.
    pub(crate) fn put(id: impl Into<String>, tag: &'static str, summary: impl Into<String>) -> Self {
        Self::new(HttpMethod::Put, id, tag, summary)
    }

    /// A DELETE.
    pub(crate) fn delete(id: impl Into<String>, tag: &'static str, summary: impl Into<String>) -> Self {
        Self::new(HttpMethod::Delete, id, tag, summary)
    }

    /// Its query parameters.
    pub(crate) fn query(mut self, parameters: &[QueryParameter]) -> Self {
        self.query.extend_from_slice(parameters);
        self
    }

    /// Its request body.
    pub(crate) fn body(mut self, body: RequestBody) -> Self {
        self.body = Some(body);
        self
    }

    /// One of its answers.
    pub(crate) fn answer(mut self, status: u16, description: impl Into<String>, content: Content) -> Self {
        self.answers.push(Answer {
            status,
            description: description.into(),
            content,
            headers: Vec::new(),
        });
        self
    }

    /// A header of the answer added last.
    pub(crate) fn header(mut self, name: &'static str, description: &'static str) -> Self {
        if let Some(last) = self.answers.last_mut() {
            last.headers.push((name, description));
        }
        self
    }

    /// The error answers it may give besides the `default` one, each described.
    pub(crate) fn errors(mut self, errors: &[(u16, &'static str)]) -> Self {
        for (status, description) in errors {
            self = self.answer(*status, *description, Content::Json(ERROR_SCHEMA, error_schema));
        }
        self
    }

    /// Named schemas that its own schemas refer to (`#/components/schemas/<name>`).
    pub(crate) fn also(mut self, schemas: &[(&'static str, SchemaFn)]) -> Self {
        self.also.extend_from_slice(schemas);
        self
    }

    /// Served without a token even when authentication is on.
    pub(crate) fn public(mut self) -> Self {
        self.public = true;
        self
    }
}

/// The `{"code","message"}` answer of every failure.
fn error_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "description": "Every failure: a stable, machine-readable code and a message naming the offending input.",
        "required": ["code", "message"],
        "properties": {
            "code": {"type": "string", "description": "A stable name, e.g. InvalidInput, NotFound, AlreadyExists, Conflict, PreconditionFailed."},
            "message": {"type": "string", "description": "What went wrong, naming the offending input."}
        },
        "additionalProperties": false
    })
}

/// The names of a path template's parameters, in order.
pub(crate) fn path_parameters(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{').and_then(|rest| rest.strip_suffix('}')))
        .collect()
}

/// Collects named schemas as the document's components.
struct Components {
    generator: SchemaGenerator,
    named: BTreeMap<String, Json>,
}

impl Components {
    fn new() -> Self {
        let settings = SchemaSettings::draft2020_12().with(|settings| {
            settings.definitions_path = "/components/schemas".into();
        });
        Self {
            generator: settings.into_generator(),
            named: BTreeMap::new(),
        }
    }

    /// A reference to the component `name`, whose schema `schema` gives (generated once).
    fn reference(&mut self, name: &str, schema: SchemaFn) -> RefOr<Schema> {
        if !self.named.contains_key(name) {
            let generated = schema(&mut self.generator);
            self.named.insert(name.to_string(), generated.to_value());
        }
        RefOr::Ref(Ref::from_schema_name(name))
    }

    /// A reference to the component `name`: the multipart `form` and, in `allOf`, `rule`.
    fn form_with_rule(
        &mut self,
        name: &str,
        form: &utoipa::openapi::schema::Object,
        rule: Json,
    ) -> RefOr<Schema> {
        let mut schema = serde_json::to_value(form).unwrap_or_default();
        schema["allOf"] = Json::Array(vec![rule]);
        self.named.insert(name.to_string(), schema);
        RefOr::Ref(Ref::from_schema_name(name))
    }

    /// Every component: the named ones and the definitions they refer to.
    fn into_schemas(mut self) -> serde_json::Map<String, Json> {
        let mut schemas: serde_json::Map<String, Json> =
            self.generator.take_definitions(true).into_iter().collect();
        for (name, schema) in self.named {
            schemas.insert(name, schema);
        }
        schemas
    }
}

/// A path parameter: an EMCO name, as every route checks it (`body::path_names`: `validate_name`), so a client
/// generated from the document never sends one the server refuses.
fn name_schema() -> RefOr<Schema> {
    RefOr::T(Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(emco_model::MAX_NAME_LEN))
            .pattern(Some(emco_model::names::NAME_PATTERN))
            .build(),
    ))
}

/// One server-sent event of a status stream.
fn event_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "description": "A server-sent event: `event` (status), `id` (the store revision the answer reflects, for Last-Event-ID) and `data`, the answer's JSON.",
        "required": ["data"],
        "properties": {
            "event": {"type": "string"},
            "id": {"type": "string"},
            "data": {"type": "string", "contentMediaType": "application/json"}
        }
    })
}

/// A resource as `<name>+<Kind>` (`firewall+Deployment`), as `split_resource` checks it: an EMCO name, `+`, a kind.
pub(crate) const RESOURCE_KEY_PATTERN: &str =
    "^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\\+[A-Za-z][A-Za-z0-9]*$";

/// The path parameter `{resource}`: `<name>+<Kind>`.
fn resource_key_schema() -> RefOr<Schema> {
    RefOr::T(Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(3))
            .max_length(Some(emco_model::MAX_NAME_LEN + 1 + 128))
            .pattern(Some(RESOURCE_KEY_PATTERN))
            .build(),
    ))
}

fn string_schema() -> RefOr<Schema> {
    RefOr::T(Schema::Object(
        ObjectBuilder::new().schema_type(Type::String).build(),
    ))
}

fn content(
    components: &mut Components,
    content: Content,
) -> Option<(&'static str, utoipa::openapi::Content)> {
    match content {
        Content::Empty => None,
        Content::Json(name, schema) => Some((
            "application/json",
            ContentBuilder::new()
                .schema(Some(components.reference(name, schema)))
                .build(),
        )),
        Content::JsonArray(name, schema) => {
            let items = components.reference(name, schema);
            let array = Schema::Array(ArrayBuilder::new().items(items).build());
            Some((
                "application/json",
                ContentBuilder::new().schema(Some(array)).build(),
            ))
        }
        Content::Other(media_type) => Some((media_type, ContentBuilder::new().build())),
        // The JSON media type here; `describe` adds the stream's.
        Content::JsonOrStream(name, schema) => Some((
            "application/json",
            ContentBuilder::new()
                .schema(Some(components.reference(name, schema)))
                .build(),
        )),
    }
}

fn describe(
    components: &mut Components,
    path: &str,
    operation: &Operation,
    auth: bool,
) -> utoipa::openapi::path::Operation {
    for (name, schema) in &operation.also {
        components.reference(name, *schema);
    }
    let mut builder = OperationBuilder::new()
        .operation_id(Some(operation.id.clone()))
        .summary(Some(operation.summary.clone()))
        .tag(operation.tag);
    for name in path_parameters(path) {
        builder = builder.parameter(
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .schema(Some(if name == "resource" {
                    resource_key_schema()
                } else {
                    name_schema()
                })),
        );
    }
    for parameter in &operation.query {
        let schema = if parameter.repeatable {
            RefOr::T(Schema::Array(
                ArrayBuilder::new().items(parameter.schema()).build(),
            ))
        } else {
            parameter.schema()
        };
        builder = builder.parameter(
            ParameterBuilder::new()
                .name(parameter.name)
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .description(Some(parameter.description))
                .schema(Some(schema)),
        );
    }
    if let Some(body) = operation.body {
        let request = match body {
            RequestBody::Json(name, schema) => RequestBodyBuilder::new().content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(components.reference(name, schema)))
                    .build(),
            ),
            RequestBody::Multipart {
                metadata,
                file,
                many,
                rule,
            } => {
                let form_name = format!("{}Form", metadata.0);
                let metadata = components.reference(metadata.0, metadata.1);
                let file_part = ObjectBuilder::new()
                    .schema_type(Type::String)
                    .content_media_type("application/octet-stream")
                    .description(Some(file))
                    .build();
                let (part, file_part) = if many {
                    let files = utoipa::openapi::schema::ArrayBuilder::new()
                        .items(file_part)
                        .max_items(Some(super::body::MAX_FORM_FILES))
                        .description(Some(file))
                        .build();
                    ("files", Schema::Array(files))
                } else {
                    ("file", Schema::Object(file_part))
                };
                // The form holds these two parts only: the server reads no other.
                let form = ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .property("metadata", metadata)
                    .property(part, file_part)
                    .required("metadata")
                    .additional_properties(Some(AdditionalProperties::FreeForm(false)))
                    .build();
                let form = match rule {
                    Some(rule) => components.form_with_rule(&form_name, &form, rule()),
                    None => RefOr::T(Schema::Object(form)),
                };
                RequestBodyBuilder::new().content(
                    "multipart/form-data",
                    ContentBuilder::new().schema(Some(form)).build(),
                )
            }
        };
        builder = builder.request_body(Some(request.required(Some(Required::True)).build()));
    }
    for answer in &operation.answers {
        let mut response = ResponseBuilder::new().description(answer.description.clone());
        if let Some((media_type, body)) = content(components, answer.content) {
            response = response.content(media_type, body);
        }
        if let Content::JsonOrStream(..) = answer.content {
            // Each event's data is the JSON document.
            response = response.content(
                "text/event-stream",
                ContentBuilder::new()
                    .schema(Some(components.reference("ServerSentEvent", event_schema)))
                    .build(),
            );
        }
        for (name, description) in &answer.headers {
            response = response.header(
                *name,
                HeaderBuilder::new()
                    .schema(Some(string_schema()))
                    .description(Some(*description))
                    .build(),
            );
        }
        response = response.header(
            "X-Request-Id",
            HeaderBuilder::new()
                .schema(Some(string_schema()))
                .description(Some(
                    "The request's id (the client's own when it sent a plain one).",
                ))
                .build(),
        );
        builder = builder.response(answer.status.to_string(), response);
    }
    let error = content(components, Content::Json(ERROR_SCHEMA, error_schema));
    let mut default = ResponseBuilder::new().description(
        "Any other failure, e.g. 401/403 (authentication, roles), 413 (body too large), 414 (URI too long), \
         415 (content type), 500",
    );
    if let Some((media_type, body)) = error {
        default = default.content(media_type, body);
    }
    builder = builder.response("default", default);
    if auth && operation.public {
        builder = builder.securities(Some(Vec::<SecurityRequirement>::new()));
    }
    builder.build()
}

/// The tags of the document, in order, with what each groups.
const TAGS: &[(&str, &str)] = &[
    (
        "projects",
        "Projects, composite apps, apps and their profiles and dependencies",
    ),
    (
        "deployment",
        "Deployment intent groups, their intents and their lifecycle",
    ),
    (
        "clusters",
        "Cluster providers, clusters, labels and network intents",
    ),
    (
        "logical-clouds",
        "Logical clouds and their references, permissions, quotas and pairs",
    ),
    ("status", "Status answers, status configs and combined status"),
    ("controllers", "Controllers"),
    (
        "operations",
        "Health, readiness, metrics, replicas, events and the API document",
    ),
];

/// The OpenAPI 3.1 document of these endpoints, as JSON; `auth`: whether requests need a bearer token.
pub(crate) fn document(endpoints: &[Endpoint], auth: bool) -> Json {
    let mut components = Components::new();
    let mut paths = Paths::new();
    for endpoint in endpoints {
        for operation in &endpoint.operations {
            let described = describe(&mut components, &endpoint.path, operation, auth);
            paths.add_path_operation(&endpoint.path, vec![operation.method.clone()], described);
        }
    }
    let info = InfoBuilder::new()
        .title("emco-rs API")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(
            "EMCO's REST API (/v2) as emco-rs serves it: onboarding, lifecycles, status. Every failure is \
             {\"code\",\"message\"}; every answer carries X-Request-Id; lists page with ?limit=&continue=; \
             GETs of resources carry an ETag that If-Match checks on PUT and DELETE.",
        ))
        .build();
    let mut builder = OpenApiBuilder::new()
        .info(info)
        .paths(paths)
        .tags(Some(TAGS.iter().map(|(name, description)| {
            TagBuilder::new()
                .name(*name)
                .description(Some(*description))
                .build()
        })));
    if auth {
        builder = builder
            .components(Some(
                ComponentsBuilder::new()
                    .security_scheme(
                        "bearer",
                        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
                    )
                    .build(),
            ))
            .security(Some(vec![SecurityRequirement::new(
                "bearer",
                Vec::<String>::new(),
            )]));
    }
    let mut document = serde_json::to_value(builder.build()).unwrap_or_else(|_| json!({}));
    let mut schemas = components.into_schemas();
    require_specs_that_require(&mut schemas);
    if let Some(object) = document.as_object_mut() {
        let components = object.entry("components").or_insert_with(|| json!({}));
        if let Some(components) = components.as_object_mut() {
            components.insert("schemas".to_string(), Json::Object(schemas));
        }
    }
    document
}

/// A body whose `spec` has required fields (or must match one of several shapes) cannot leave the `spec` out: the
/// server decodes an absent `spec` as an empty one, which its checks refuse naming the first required field.
fn require_specs_that_require(schemas: &mut serde_json::Map<String, Json>) {
    let demanding = |schema: &Json| {
        schema["required"]
            .as_array()
            .is_some_and(|required| !required.is_empty())
            || schema.get("anyOf").is_some()
            || schema.get("oneOf").is_some()
            || schema.get("allOf").is_some()
    };
    let bodies: Vec<String> = schemas
        .iter()
        .filter(|(_, schema)| {
            let Some(reference) = schema["properties"]["spec"]["$ref"].as_str() else {
                return false;
            };
            let name = reference.rsplit('/').next().unwrap_or_default();
            schemas.get(name).is_some_and(demanding)
        })
        .map(|(name, _)| name.clone())
        .collect();
    for name in bodies {
        if let Some(schema) = schemas.get_mut(&name).and_then(Json::as_object_mut) {
            let required = schema.entry("required").or_insert_with(|| json!([]));
            if let Some(required) = required.as_array_mut()
                && !required.iter().any(|field| field == "spec")
            {
                required.push(json!("spec"));
            }
        }
    }
    // A required field's `default` (what the server's decoder fills in, e.g. an empty name) is never used and would
    // contradict the field's own constraints.
    for schema in schemas.values_mut() {
        let required: Vec<String> = schema["required"]
            .as_array()
            .map(|fields| {
                fields
                    .iter()
                    .filter_map(|f| f.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        for field in required {
            if let Some(property) = schema
                .get_mut("properties")
                .and_then(|properties| properties.get_mut(&field))
                .and_then(Json::as_object_mut)
            {
                property.remove("default");
            }
        }
    }
}

/// `docs/api.md`: the document as a page to read — per tag, each operation with its parameters, body and answers,
/// then every schema's fields. Generated, never edited: a test keeps the file equal to this.
pub(crate) fn markdown(document: &Json) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "# emco-rs API reference\n");
    let _ = writeln!(
        out,
        "<!-- Generated from the OpenAPI document the server serves at {OPENAPI_JSON_PATH}; do not edit. \
         Regenerate: EMCO_WRITE_API_DOCS=1 cargo test -p emco-server --test api api_md -->\n"
    );
    if let Some(description) = document["info"]["description"].as_str() {
        let _ = writeln!(out, "{description}\n");
    }
    let paths = document["paths"].as_object().cloned().unwrap_or_default();
    for tag in document["tags"].as_array().into_iter().flatten() {
        let name = tag["name"].as_str().unwrap_or_default();
        let _ = writeln!(
            out,
            "## {name}\n\n{}\n",
            tag["description"].as_str().unwrap_or_default()
        );
        for (path, item) in &paths {
            for method in ["get", "post", "put", "delete", "patch"] {
                let Some(operation) = item.get(method) else {
                    continue;
                };
                if !operation["tags"]
                    .as_array()
                    .is_some_and(|tags| tags.iter().any(|t| t == name))
                {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "### `{} {path}`\n\n{} (`{}`)\n",
                    method.to_uppercase(),
                    operation["summary"].as_str().unwrap_or_default(),
                    operation["operationId"].as_str().unwrap_or_default()
                );
                let query: Vec<String> = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "query")
                    .map(|p| {
                        format!(
                            "`{}`{} — {}",
                            p["name"].as_str().unwrap_or_default(),
                            if p["schema"]["type"] == "array" {
                                " (repeatable)"
                            } else {
                                ""
                            },
                            p["description"].as_str().unwrap_or_default()
                        )
                    })
                    .collect();
                if !query.is_empty() {
                    let _ = writeln!(out, "Query:\n");
                    for line in query {
                        let _ = writeln!(out, "- {line}");
                    }
                    let _ = writeln!(out);
                }
                if let Some(content) = operation["requestBody"]["content"].as_object() {
                    for (media_type, body) in content {
                        let _ = writeln!(out, "Body: `{media_type}` {}\n", schema_words(&body["schema"]));
                    }
                }
                let _ = writeln!(out, "Answers:\n");
                for (status, answer) in operation["responses"].as_object().into_iter().flatten() {
                    let body = answer["content"]
                        .as_object()
                        .and_then(|content| content.iter().next())
                        .map(|(media_type, body)| match body.get("schema") {
                            Some(schema) => format!(" — {}", schema_words(schema)),
                            None => format!(" — `{media_type}`"),
                        })
                        .unwrap_or_default();
                    let headers: Vec<String> = answer["headers"]
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(name, _)| format!("`{name}`"))
                        .filter(|name| name != "`X-Request-Id`")
                        .collect();
                    let headers = if headers.is_empty() {
                        String::new()
                    } else {
                        format!(" (headers {})", headers.join(", "))
                    };
                    let _ = writeln!(
                        out,
                        "- {status}: {}{body}{headers}",
                        answer["description"].as_str().unwrap_or_default()
                    );
                }
                let _ = writeln!(out);
            }
        }
    }
    let _ = writeln!(out, "## Schemas\n");
    for (name, schema) in document["components"]["schemas"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let _ = writeln!(out, "### {name}\n");
        if let Some(description) = schema["description"].as_str() {
            let _ = writeln!(out, "{description}\n");
        }
        if let Some(reference) = schema["$ref"].as_str() {
            let _ = writeln!(out, "See {}.\n", reference_link(reference));
            continue;
        }
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .collect();
        if let Some(properties) = schema["properties"].as_object() {
            let _ = writeln!(out, "| Field | Type | Description |\n|---|---|---|");
            for (field, property) in properties {
                let mark = if required.contains(&field.as_str()) {
                    " (required)"
                } else {
                    ""
                };
                let description = property["description"]
                    .as_str()
                    .unwrap_or_default()
                    .replace('\n', " ")
                    .replace('|', "\\|");
                let _ = writeln!(
                    out,
                    "| `{field}`{mark} | {} | {description} |",
                    schema_words(property)
                );
            }
            let _ = writeln!(out);
        } else {
            let _ = writeln!(out, "{}\n", schema_words(schema));
        }
    }
    out
}

/// A schema in a few words: its type, or a link to the schema it refers to.
fn schema_words(schema: &Json) -> String {
    if let Some(reference) = schema["$ref"].as_str() {
        return reference_link(reference);
    }
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        return format!("one of {}", values.join(", "));
    }
    for combinator in ["oneOf", "anyOf"] {
        if let Some(options) = schema[combinator].as_array() {
            let options: Vec<String> = options.iter().map(schema_words).collect();
            return options.join(" or ");
        }
    }
    match &schema["type"] {
        Json::String(kind) if kind == "array" => format!("array of {}", schema_words(&schema["items"])),
        Json::String(kind) if kind == "object" && schema["additionalProperties"].is_object() => {
            format!("map of {}", schema_words(&schema["additionalProperties"]))
        }
        Json::String(kind) => kind.clone(),
        Json::Array(kinds) => kinds
            .iter()
            .filter_map(Json::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_string(),
    }
}

fn reference_link(reference: &str) -> String {
    let name = reference.rsplit('/').next().unwrap_or(reference);
    format!("[{name}](#{})", name.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_parameters_are_read_from_the_template() {
        assert_eq!(
            path_parameters("/v2/projects/{project}/composite-apps/{composite_app}/{version}"),
            ["project", "composite_app", "version"]
        );
        assert!(path_parameters("/v2/projects").is_empty());
    }
}
