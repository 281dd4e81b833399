//! The conventions HTTP clients expect of the API: every answer carries the request's id (`X-Request-Id`),
//! lists page with `?limit=&continue=`, and resources carry an `ETag` that `If-Match` checks before a write.

use axum::http::{Method, StatusCode};
use emco_store::Store;
use serde_json::json;

use crate::support::*;

fn is_uuid(text: &str) -> bool {
    text.len() == 36
        && text.chars().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

#[tokio::test]
async fn every_answer_carries_the_request_id() {
    let api = Api::new(Store::memory());
    // None sent: a fresh UUID on every answer, successes and errors alike (the fallback, a guard, a route).
    let created = api
        .post("/v2/projects", json!({"metadata": {"name": "p1"}}))
        .await;
    let missing = api.get("/v2/projects/nope").await;
    let unknown = api.get("/v2/no-such-path").await;
    let mut seen = Vec::new();
    for reply in [&created, &missing, &unknown] {
        let id = reply.headers["x-request-id"].to_str().unwrap().to_string();
        assert!(is_uuid(&id), "{id}");
        seen.push(id);
    }
    seen.dedup();
    assert_eq!(seen.len(), 3, "each request gets its own id: {seen:?}");

    // A client's plain id is echoed as sent.
    let reply = api
        .request(
            Method::GET,
            "/v2/projects/p1",
            &[("x-request-id", "script-42:step.7")],
            Vec::new(),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(reply.headers["x-request-id"], "script-42:step.7");

    // One that could forge a log line, or is too long, is replaced.
    let long = "a".repeat(emco_server::request_id::MAX_REQUEST_ID_LEN + 1);
    for sent in ["two words", "x\"}{\"level\":\"ERROR", long.as_str()] {
        let reply = api
            .request(Method::GET, "/v2/projects", &[("x-request-id", sent)], Vec::new())
            .await
            .expect(StatusCode::OK);
        let echoed = reply.headers["x-request-id"].to_str().unwrap();
        assert!(is_uuid(echoed), "{sent:?} was answered with {echoed:?}");
    }
}

fn names(reply: &Reply) -> Vec<String> {
    reply
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn lists_page_with_limit_and_continue() {
    let api = Api::new(Store::memory());
    let all: Vec<String> = (0..7).map(|i| format!("project{i}")).collect();
    for name in &all {
        api.post("/v2/projects", json!({"metadata": {"name": name}}))
            .await
            .expect(StatusCode::CREATED);
    }
    // Without limit: everything, no next page (EMCO's answer, unchanged).
    let whole = api.get("/v2/projects").await.expect(StatusCode::OK);
    assert_eq!(names(&whole), all);
    assert!(whole.headers.get("link").is_none() && whole.headers.get("x-continue").is_none());

    // Pages of 3, following the Link header; a project deleted between two pages shifts nothing.
    let mut url = "/v2/projects?limit=3".to_string();
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let page = api.get(&url).await.expect(StatusCode::OK);
        pages += 1;
        seen.extend(names(&page));
        if pages == 1 {
            api.delete("/v2/projects/project0")
                .await
                .expect(StatusCode::NO_CONTENT);
        }
        let Some(link) = page.headers.get("link") else {
            assert!(page.headers.get("x-continue").is_none());
            break;
        };
        let link = link.to_str().unwrap();
        let token = page.headers["x-continue"].to_str().unwrap();
        assert!(link.ends_with(">; rel=\"next\""), "{link}");
        url = link
            .trim_start_matches('<')
            .split('>')
            .next()
            .unwrap()
            .to_string();
        assert!(
            url.starts_with("/v2/projects?limit=3&continue=") && url.ends_with(token),
            "{url}"
        );
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, all, "every project once, in creation order");

    // Clusters filtered by label page over the matching ones.
    api.post("/v2/cluster-providers", json!({"metadata": {"name": "cp"}}))
        .await
        .expect(StatusCode::CREATED);
    for i in 0..5 {
        let cluster = format!("edge{i}");
        api.post_form(
            "/v2/cluster-providers/cp/clusters",
            Some(&json!({"metadata": {"name": cluster}})),
            Some(&kubeconfig(&cluster)),
        )
        .await
        .expect(StatusCode::CREATED);
        if i % 2 == 0 {
            api.post(
                &format!("/v2/cluster-providers/cp/clusters/{cluster}/labels"),
                json!({"clusterLabel": "even"}),
            )
            .await
            .expect(StatusCode::CREATED);
        }
    }
    let first = api
        .get("/v2/cluster-providers/cp/clusters?label=even&limit=2")
        .await
        .expect(StatusCode::OK);
    assert_eq!(first.json(), json!(["edge0", "edge2"]));
    let token = first.headers["x-continue"].to_str().unwrap();
    let second = api
        .get(&format!(
            "/v2/cluster-providers/cp/clusters?label=even&limit=2&continue={token}"
        ))
        .await
        .expect(StatusCode::OK);
    assert_eq!(second.json(), json!(["edge4"]));
    assert!(second.headers.get("link").is_none());
}

#[tokio::test]
async fn a_malformed_page_or_an_unknown_list_parameter_is_refused_by_name() {
    let api = Api::new(Store::memory());
    for (query, named) in [
        ("limit=0", "limit"),
        ("limit=many", "limit"),
        ("limit=2&continue=bogus", "continue"),
        ("continue=bogus", "continue"),
        ("lmit=2", "lmit"),
    ] {
        let reply = api
            .get(&format!("/v2/projects?{query}"))
            .await
            .expect(StatusCode::BAD_REQUEST);
        assert_eq!(reply.code(), "InvalidInput");
        assert!(reply.message().contains(named), "{query}: {}", reply.message());
    }
    let reply = api
        .get("/v2/status-configs?limit=1&color=red")
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(reply.message().contains("color"), "{}", reply.message());
}

#[tokio::test]
async fn if_match_refuses_a_write_over_a_change_it_did_not_see() {
    let api = Api::new(Store::memory());
    api.post(
        "/v2/projects",
        json!({"metadata": {"name": "p1", "description": "one"}}),
    )
    .await
    .expect(StatusCode::CREATED);
    let read = api.get("/v2/projects/p1").await.expect(StatusCode::OK);
    let tag = read.headers["etag"].to_str().unwrap().to_string();
    assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
    // GET again: the same tag while nothing changed.
    assert_eq!(api.get("/v2/projects/p1").await.headers["etag"], tag.as_str());

    // Script A writes with the tag it read: done, and the tag moves on.
    let put = |description: &'static str, condition: Option<String>| {
        let api = api.clone();
        async move {
            let body =
                serde_json::to_vec(&json!({"metadata": {"name": "p1", "description": description}})).unwrap();
            let mut headers = vec![("content-type", "application/json".to_string())];
            if let Some(condition) = condition {
                headers.push(("if-match", condition));
            }
            let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            api.request(Method::PUT, "/v2/projects/p1", &headers, body).await
        }
    };
    put("by A", Some(tag.clone())).await.expect(StatusCode::OK);
    let now = api.get("/v2/projects/p1").await;
    let new_tag = now.headers["etag"].to_str().unwrap().to_string();
    assert_ne!(new_tag, tag);
    assert_eq!(now.json()["metadata"]["description"], "by A");

    // Script B, holding the old tag, is refused and writes nothing.
    let refused = put("by B", Some(tag.clone()))
        .await
        .expect(StatusCode::PRECONDITION_FAILED);
    assert_eq!(refused.code(), "PreconditionFailed");
    assert!(
        refused.message().contains("p1") && refused.message().contains(&new_tag),
        "{}",
        refused.message()
    );
    assert_eq!(
        api.get("/v2/projects/p1").await.json()["metadata"]["description"],
        "by A"
    );

    // DELETE with a stale tag is refused too; with the current one it deletes; `*` needs the resource.
    let delete = |condition: String| {
        let api = api.clone();
        async move {
            api.request(
                Method::DELETE,
                "/v2/projects/p1",
                &[("if-match", condition.as_str())],
                Vec::new(),
            )
            .await
        }
    };
    delete(tag.clone()).await.expect(StatusCode::PRECONDITION_FAILED);
    delete(format!("\"999999\", {new_tag}"))
        .await
        .expect(StatusCode::NO_CONTENT);
    let gone = put("again", Some("*".to_string()))
        .await
        .expect(StatusCode::PRECONDITION_FAILED);
    assert!(gone.message().contains("does not exist"), "{}", gone.message());
    assert_eq!(api.get("/v2/projects/p1").await.status, StatusCode::NOT_FOUND);

    // A malformed If-Match is a 400 naming the header; without one, writes go through as before.
    put("x", Some("no-quotes".to_string()))
        .await
        .expect(StatusCode::BAD_REQUEST);
    put("unconditional", None).await.expect(StatusCode::CREATED);
}

#[tokio::test]
async fn a_cluster_with_its_kubeconfig_has_an_etag_too() {
    let api = Api::new(Store::memory());
    api.post("/v2/cluster-providers", json!({"metadata": {"name": "cp"}}))
        .await
        .expect(StatusCode::CREATED);
    api.post_form(
        "/v2/cluster-providers/cp/clusters",
        Some(&json!({"metadata": {"name": "edge1"}})),
        Some(&kubeconfig("edge1")),
    )
    .await
    .expect(StatusCode::CREATED);
    let read = api
        .get("/v2/cluster-providers/cp/clusters/edge1")
        .await
        .expect(StatusCode::OK);
    let tag = read.headers["etag"].to_str().unwrap().to_string();
    api.request(
        Method::DELETE,
        "/v2/cluster-providers/cp/clusters/edge1",
        &[("if-match", "\"1\"")],
        Vec::new(),
    )
    .await
    .expect(StatusCode::PRECONDITION_FAILED);
    api.request(
        Method::DELETE,
        "/v2/cluster-providers/cp/clusters/edge1",
        &[("if-match", tag.as_str())],
        Vec::new(),
    )
    .await
    .expect(StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn answers_are_gzipped_when_the_client_accepts_it_but_streams_are_not() {
    use std::io::Read as _;
    use tower::ServiceExt as _;
    let api = Api::new(Store::memory());
    api.onboard_vfw().await;
    let url = format!("{DIG}/status?output=all");
    let plain = api.get(&url).await.expect(StatusCode::OK);
    assert!(plain.headers.get("content-encoding").is_none());
    let zipped = api
        .request(Method::GET, &url, &[("accept-encoding", "gzip")], Vec::new())
        .await
        .expect(StatusCode::OK);
    assert_eq!(zipped.headers["content-encoding"], "gzip");
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(&zipped.bytes[..])
        .read_to_end(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, plain.bytes.to_vec());
    // An event stream: its headers come at once, uncompressed (the body never ends, so it is not read).
    let request = axum::http::Request::builder()
        .uri(format!("{DIG}/status?watch=true"))
        .header("accept-encoding", "gzip")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = api.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert!(response.headers().get("content-encoding").is_none());
}
