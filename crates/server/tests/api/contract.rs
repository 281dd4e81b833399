//! The API document (`/v2/openapi.json`, `/v2/openapi.yaml`) against the router it describes: every method of
//! every documented path is served and every other method is refused with 405, so no route exists that the
//! document lacks; every reference resolves; the bodies the API answers validate against their schemas.

use std::collections::BTreeSet;

use axum::http::{Method, StatusCode};
use emco_server::{ServerConfig, TokenAuth};
use emco_store::Store;
use serde_json::{Value as Json, json};

use crate::support::*;

const METHODS: [&str; 5] = ["get", "post", "put", "delete", "patch"];

async fn document(api: &Api) -> Json {
    api.get("/v2/openapi.json").await.expect(StatusCode::OK).json()
}

/// A concrete URL of a path template: every parameter a name that exists nowhere.
fn sample(template: &str) -> String {
    template
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "absent0"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn every_route_is_documented_and_every_documented_method_is_served() {
    let api = Api::new(Store::memory());
    let doc = document(&api).await;
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 80, "{} paths", paths.len());
    let mut ids = BTreeSet::new();
    for (template, item) in paths {
        for method in METHODS {
            let documented = item.get(method);
            if let Some(operation) = documented {
                let id = operation["operationId"].as_str().unwrap();
                assert!(ids.insert(id.to_string()), "operationId {id} twice");
                assert!(
                    operation["responses"]["default"]["content"]["application/json"].is_object(),
                    "{id}"
                );
                let parameters: Vec<&str> = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "path")
                    .map(|p| p["name"].as_str().unwrap())
                    .collect();
                let in_template = template.matches('{').count();
                assert_eq!(
                    parameters.len(),
                    in_template,
                    "{id}: path parameters of {template}"
                );
            }
            // An event stream never ends: its GET is served, as a test of its own shows (`streams`).
            let streams = documented.is_some_and(|operation| {
                operation["responses"]["200"]["content"]
                    .get("text/event-stream")
                    .is_some()
            });
            if streams {
                continue;
            }
            let url = sample(template);
            let reply = api
                .call(
                    Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                    &url,
                    None,
                    Vec::new(),
                    None,
                )
                .await;
            if let Some(operation) = documented {
                assert_ne!(
                    reply.status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {template} is documented"
                );
                let answered = reply.status.as_u16().to_string();
                assert!(
                    reply.status.as_u16() < 500 || operation["responses"].get(&answered).is_some(),
                    "{method} {url}: an undocumented {answered}"
                );
            } else {
                assert_eq!(
                    reply.status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {template} is served but not documented"
                );
            }
        }
    }
    // A path outside the document is no route.
    let reply = api
        .get("/v2/projects/p/not-a-collection")
        .await
        .expect(StatusCode::NOT_FOUND);
    assert!(reply.message().contains("no API path"));
}

/// Every `$ref` of `value`, found recursively.
fn references(value: &Json, found: &mut BTreeSet<String>) {
    match value {
        Json::Object(map) => {
            if let Some(Json::String(target)) = map.get("$ref") {
                found.insert(target.clone());
            }
            map.values().for_each(|v| references(v, found));
        }
        Json::Array(items) => items.iter().for_each(|v| references(v, found)),
        _ => {}
    }
}

#[tokio::test]
async fn every_reference_resolves_and_the_yaml_is_the_same_document() {
    let api = Api::new(Store::memory());
    let doc = document(&api).await;
    let mut found = BTreeSet::new();
    references(&doc, &mut found);
    assert!(found.len() > 20, "{found:?}");
    for target in &found {
        let pointer = target
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("external reference {target}"));
        assert!(doc.pointer(pointer).is_some(), "{target} does not resolve");
    }
    let yaml = api.get("/v2/openapi.yaml").await.expect(StatusCode::OK);
    assert_eq!(yaml.headers["content-type"], "application/yaml");
    let from_yaml: Json = serde_saphyr::from_str(std::str::from_utf8(&yaml.bytes).unwrap()).unwrap();
    assert_eq!(from_yaml, doc);
    // No security scheme without authentication; the bearer scheme with it.
    assert!(doc["components"]["securitySchemes"].is_null());
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "admin-token-1,alice,100,emco:admin\n").unwrap();
    let secured = Api::with_config(
        Store::memory(),
        ServerConfig {
            token_auth: Some(TokenAuth::load(&tokens).unwrap()),
            ..ServerConfig::default()
        },
    )
    .with_token("admin-token-1");
    let doc = document(&secured).await;
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(doc["security"], json!([{"bearer": []}]));
    assert_eq!(doc["paths"]["/healthz"]["get"]["security"], json!([]));
}

/// A validator of the component `name` of the document.
fn validator(doc: &Json, name: &str) -> jsonschema::Validator {
    let root = json!({
        "$ref": format!("#/components/schemas/{name}"),
        "components": doc["components"],
    });
    jsonschema::options()
        .should_validate_formats(false)
        .build(&root)
        .unwrap_or_else(|err| panic!("{name}: {err}"))
}

#[tokio::test]
async fn the_answers_of_the_onboarded_vfw_validate_against_their_schemas() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let doc = document(&api).await;
    let mut checked = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        let Some(list) = item.get("get") else { continue };
        let schema = &list["responses"]["200"]["content"]["application/json"]["schema"];
        let Some(reference) = schema["items"]["$ref"].as_str() else {
            continue;
        };
        let name = reference.rsplit('/').next().unwrap();
        // Lists of the vFW's own resources: the templates filled with its names.
        let url = template
            .replace("{project}", "testvfw")
            .replace("{composite_app}", "compositevfw")
            .replace("{version}", "v1")
            .replace("{dig}", "vfw_deployment_intent_group")
            .replace("{provider}", "vfw-cluster-provider")
            .replace("{gpi}", "fw-generic-placement-intent")
            .replace("{composite_profile}", "vfw_composite-profile")
            .replace("{app}", "firewall");
        if url.contains('{') {
            continue;
        }
        let reply = api.get(&url).await;
        if reply.status != StatusCode::OK {
            continue;
        }
        let validate = validator(&doc, name);
        for body in reply.json().as_array().unwrap() {
            if let Err(err) = validate.validate(body) {
                panic!("{url}: an item does not match {name}: {err}\n{body}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} bodies checked");
}

#[test]
fn api_md_is_the_document_rendered() {
    let generated = emco_server::api_reference_markdown();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api.md");
    if std::env::var_os("EMCO_WRITE_API_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        written == generated,
        "docs/api.md is not the document rendered: run EMCO_WRITE_API_DOCS=1 cargo test -p emco-server --test api api_md"
    );
    for needle in [
        "### `POST /v2/projects`",
        "createProject",
        "## Schemas",
        "### Error",
        "PreconditionFailed",
    ] {
        assert!(generated.contains(needle), "{needle}");
    }
}

#[tokio::test]
async fn status_answers_of_every_shape_validate_against_the_status_schema() {
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let doc = document(&api).await;
    let validate = validator(&doc, "StatusAnswer");
    // The seeds' golden answers.
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut checked = 0;
    for entry in std::fs::read_dir(golden).unwrap() {
        let answer: Json = serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap();
        if let Err(err) = validate.validate(&answer) {
            panic!("a golden answer does not match StatusAnswer: {err}");
        }
        checked += 1;
    }
    // A DIG before and after instantiation, a cluster's network intents, a logical cloud: every query shape.
    let queries = [
        "",
        "?type=cluster",
        "?output=summary",
        "?output=detail",
        "?status=deployed",
        "?status=ready",
        "?status=ready&output=detail&readiness",
        "?status=deployed&output=summary",
        "?apps",
        "?clusters",
        "?resources",
        "?status=ready&clusters",
        "?readiness",
        "?app=firewall&cluster=vfw-cluster-provider%2Bedge01",
    ];
    api.post(
        "/v2/projects/testvfw/logical-clouds",
        json!({"metadata": {"name": "lc1"}, "spec": {"level": "0"}}),
    )
    .await;
    let subjects = [
        format!("{DIG}/status"),
        format!("{PROVIDER}/clusters/edge01/status"),
        "/v2/projects/testvfw/logical-clouds/lc1/status".to_string(),
    ];
    for step in ["created", "instantiated"] {
        if step == "instantiated" {
            api.approve_and_instantiate_vfw().await;
        }
        for subject in &subjects {
            for query in queries {
                let reply = api.get(&format!("{subject}{query}")).await;
                if reply.status != StatusCode::OK {
                    assert!(
                        reply.status.is_client_error(),
                        "{subject}{query}: {}",
                        reply.status
                    );
                    continue;
                }
                let answer = reply.json();
                if let Err(err) = validate.validate(&answer) {
                    panic!("{step} {subject}{query}: {err}\n{answer}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "only {checked} answers checked");
}
