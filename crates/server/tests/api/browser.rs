//! Cross-site requests from a browser: JSON bodies need a JSON Content-Type, foreign origins are refused before
//! anything is stored, preflights of allowed origins are answered, and every error is the API's JSON.

use axum::http::{Method, StatusCode, header};
use emco_server::ServerConfig;
use emco_store::Store;
use serde_json::json;

use crate::support::{Api, PROVIDER, Reply};

const UI: &str = "https://ui.example";

fn api() -> Api {
    Api::with_config(
        Store::memory(),
        ServerConfig {
            cors_allowed_origins: vec![UI.to_string()],
            ..ServerConfig::default()
        },
    )
}

fn project(name: &str) -> Vec<u8> {
    json!({"metadata": {"name": name}}).to_string().into_bytes()
}

#[track_caller]
fn assert_json_error(reply: &Reply, status: StatusCode, code: &str) {
    assert_eq!(
        reply.status,
        status,
        "body: {}",
        String::from_utf8_lossy(&reply.bytes)
    );
    assert_eq!(
        reply
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    assert_eq!(reply.code(), code);
    assert!(!reply.message().is_empty());
}

#[tokio::test]
async fn json_bodies_need_a_json_content_type() {
    let api = api();
    let before = api.store.revision();
    for content_type in [
        Some("text/plain"),
        Some("text/plain;charset=UTF-8"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let headers: Vec<(&str, &str)> = content_type.map(|ct| ("content-type", ct)).into_iter().collect();
        let reply = api
            .request(Method::POST, "/v2/projects", &headers, project("p"))
            .await;
        assert_json_error(&reply, StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType");
        let message = reply.message();
        assert!(message.contains("application/json"), "{message}");
        match content_type {
            Some(ct) => assert!(message.contains(ct), "{message}"),
            None => assert!(message.contains("no Content-Type"), "{message}"),
        }
        // PUT is checked as POST is.
        let reply = api
            .request(Method::PUT, "/v2/projects/p", &headers, project("p"))
            .await;
        assert_json_error(&reply, StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType");
    }
    assert_eq!(api.store.revision(), before, "a refused request stored something");
    api.get("/v2/projects/p").await.expect(StatusCode::NOT_FOUND);
    // An empty body keeps its answer (400), whatever the Content-Type.
    let reply = api
        .request(
            Method::POST,
            "/v2/projects",
            &[("content-type", "text/plain")],
            Vec::new(),
        )
        .await;
    assert_json_error(&reply, StatusCode::BAD_REQUEST, "InvalidInput");
    // A multipart endpoint wants multipart/form-data.
    api.post("/v2/cluster-providers", json!({"metadata": {"name": "cp"}}))
        .await
        .expect(StatusCode::CREATED);
    let before = api.store.revision();
    let reply = api
        .request(
            Method::POST,
            "/v2/cluster-providers/cp/clusters",
            &[("content-type", "application/json")],
            project("c1"),
        )
        .await;
    assert_json_error(&reply, StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType");
    assert_eq!(api.store.revision(), before);
}

#[tokio::test]
async fn json_content_types_with_parameters_and_suffixes_are_accepted() {
    let api = api();
    for (name, content_type) in [
        ("p1", "application/json; charset=utf-8"),
        ("p2", "application/merge-patch+json"),
        ("p3", "Application/JSON"),
    ] {
        api.request(
            Method::POST,
            "/v2/projects",
            &[("content-type", content_type)],
            project(name),
        )
        .await
        .expect(StatusCode::CREATED);
        api.get(&format!("/v2/projects/{name}"))
            .await
            .expect(StatusCode::OK);
    }
    let body = json!({"metadata": {"name": "p1", "description": "changed"}})
        .to_string()
        .into_bytes();
    api.request(
        Method::PUT,
        "/v2/projects/p1",
        &[("content-type", "application/vnd.emco+json")],
        body,
    )
    .await
    .expect(StatusCode::OK);
    let stored = api.get("/v2/projects/p1").await.expect(StatusCode::OK).json();
    assert_eq!(stored["metadata"]["description"], "changed");
}

#[tokio::test]
async fn foreign_origins_are_refused_and_change_nothing() {
    let api = api();
    let before = api.store.revision();
    for (method, body, content_type) in [
        (Method::POST, project("evil"), "application/json"),
        (Method::POST, project("evil"), "text/plain"),
        (Method::GET, Vec::new(), "application/json"),
    ] {
        for origin in [
            "https://evil.example",
            "null",
            "http://emco.local:9016",
            "https://ui.example:8443",
        ] {
            let reply = api
                .request(
                    method.clone(),
                    "/v2/projects",
                    &[
                        ("host", "emco.local:9015"),
                        ("origin", origin),
                        ("content-type", content_type),
                    ],
                    body.clone(),
                )
                .await;
            assert_json_error(&reply, StatusCode::FORBIDDEN, "OriginNotAllowed");
            assert!(reply.message().contains(origin), "{}", reply.message());
            assert!(reply.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        }
    }
    // A lifecycle POST with an empty body is refused as well.
    let reply = api
        .request(
            Method::POST,
            "/v2/projects/p/composite-apps/ca/v1/deployment-intent-groups/d/approve",
            &[("origin", "https://evil.example")],
            Vec::new(),
        )
        .await;
    assert_json_error(&reply, StatusCode::FORBIDDEN, "OriginNotAllowed");
    assert_eq!(api.store.revision(), before, "a refused request stored something");
    api.get("/v2/projects/evil").await.expect(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn same_origin_and_allowed_origins_are_served() {
    let api = api();
    // The server's own origin, as the browser spells it for a page served from the Host.
    for (name, host, origin) in [
        ("same1", "emco.local:9015", "http://emco.local:9015"),
        ("same2", "EMCO.local", "http://emco.local:80"),
        ("same3", "emco.local:443", "https://emco.local"),
    ] {
        let reply = api
            .request(
                Method::POST,
                "/v2/projects",
                &[
                    ("host", host),
                    ("origin", origin),
                    ("content-type", "application/json"),
                ],
                project(name),
            )
            .await
            .expect(StatusCode::CREATED);
        assert!(reply.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    }
    // A listed origin, with or without a Host.
    for (name, host) in [("allowed1", Some("emco.local:9015")), ("allowed2", None)] {
        let mut headers = vec![("origin", UI), ("content-type", "application/json")];
        headers.extend(host.map(|h| ("host", h)));
        let reply = api
            .request(Method::POST, "/v2/projects", &headers, project(name))
            .await
            .expect(StatusCode::CREATED);
        assert_eq!(
            reply
                .headers
                .get(header::ACCESS_CONTROL_ALLOW_ORIGIN)
                .and_then(|v| v.to_str().ok()),
            Some(UI)
        );
    }
    let list = api.get("/v2/projects").await.expect(StatusCode::OK).json();
    assert_eq!(list.as_array().map(Vec::len), Some(5), "{list}");
    // Errors of an allowed origin carry the CORS header too, so the page can read them.
    let reply = api
        .request(Method::GET, "/v2/projects/nope", &[("origin", UI)], Vec::new())
        .await;
    assert_json_error(&reply, StatusCode::NOT_FOUND, "NotFound");
    assert!(reply.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_some());
}

#[tokio::test]
async fn preflights_of_allowed_origins_are_answered() {
    let api = api();
    let preflight = |origin: &'static str| {
        let api = &api;
        async move {
            api.request(
                Method::OPTIONS,
                "/v2/projects",
                &[
                    ("origin", origin),
                    ("access-control-request-method", "POST"),
                    ("access-control-request-headers", "content-type"),
                ],
                Vec::new(),
            )
            .await
        }
    };
    let reply = preflight(UI).await;
    assert!(reply.status.is_success(), "{}", reply.status);
    let header_of = |name: header::HeaderName| {
        reply
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    assert_eq!(header_of(header::ACCESS_CONTROL_ALLOW_ORIGIN), UI);
    for method in ["get", "post", "put", "delete"] {
        assert!(header_of(header::ACCESS_CONTROL_ALLOW_METHODS).contains(method));
    }
    assert!(header_of(header::ACCESS_CONTROL_ALLOW_HEADERS).contains("content-type"));
    assert!(header_of(header::VARY).contains("origin"));

    let reply = preflight("https://evil.example").await;
    assert_json_error(&reply, StatusCode::FORBIDDEN, "OriginNotAllowed");
    assert!(reply.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    assert!(reply.headers.get(header::ACCESS_CONTROL_ALLOW_METHODS).is_none());

    // OPTIONS that is not a preflight is a method the API does not have.
    let reply = api
        .request(Method::OPTIONS, "/v2/projects", &[], Vec::new())
        .await;
    assert_json_error(&reply, StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed");
}

#[tokio::test]
async fn unknown_routes_wrong_methods_and_long_uris_answer_json() {
    let api = api();
    let reply = api.get("/v2/no/such/thing").await;
    assert_json_error(&reply, StatusCode::NOT_FOUND, "NotFound");
    assert!(reply.message().contains("/v2/no/such/thing"));
    let reply = api.get("/elsewhere").await;
    assert_json_error(&reply, StatusCode::NOT_FOUND, "NotFound");

    let reply = api.request(Method::PATCH, "/v2/projects", &[], Vec::new()).await;
    assert_json_error(&reply, StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed");
    let allow = reply
        .headers
        .get(header::ALLOW)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(allow.contains("POST") && allow.contains("GET"), "Allow: {allow}");
    assert!(reply.message().contains("PATCH"), "{}", reply.message());
    let reply = api.delete("/v2/projects").await;
    assert_json_error(&reply, StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed");
    let reply = api
        .get(&format!("{PROVIDER}/clusters/c/labels/l/extra/approve"))
        .await;
    assert_json_error(&reply, StatusCode::NOT_FOUND, "NotFound");

    let long = format!("/v2/projects/{}", "a".repeat(10_000));
    let reply = api.get(&long).await;
    assert_json_error(&reply, StatusCode::URI_TOO_LONG, "UriTooLong");
}
