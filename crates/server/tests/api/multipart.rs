//! The multipart reader under hostile bodies: broken boundaries, truncated or garbled parts, unknown and repeated
//! part names, files that are not charts, metadata that is not JSON. Every answer is 2xx or a 4xx with the API's
//! `{"code","message"}` JSON — never a 5xx, never a panic — an accepted upload can be read back whole, and the
//! server keeps serving.

use axum::http::{Method, StatusCode};
use emco_store::Store;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;

use crate::support::{Api, CA, PROJECT, PROVIDER, chart, kubeconfig};

const BOUNDARY: &str = "hostile-7f3a";

/// One part of a multipart body, before mutation.
#[derive(Debug, Clone)]
struct Part {
    name: &'static str,
    file_name: Option<&'static str>,
    content: Vec<u8>,
}

fn content(files: (Vec<u8>, Vec<u8>)) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(json!({"metadata": {"name": "up1"}}).to_string().into_bytes()),
        Just(
            json!({"metadata": {"name": "bad name!"}})
                .to_string()
                .into_bytes()
        ),
        Just(b"{\"metadata\": ".to_vec()),
        Just(files.0),
        Just(files.1),
        proptest::collection::vec(any::<u8>(), 0..300),
        Just(b"{}".to_vec()),
    ]
}

fn part(files: (Vec<u8>, Vec<u8>)) -> impl Strategy<Value = Part> {
    (
        prop::sample::select(vec!["metadata", "file", "other", ""]),
        prop::option::of(prop::sample::select(vec![
            "f.tgz",
            "",
            "../../etc/passwd",
            "x\"y",
        ])),
        content(files),
    )
        .prop_map(|(name, file_name, content)| Part {
            name,
            file_name,
            content,
        })
}

/// A whole body: parts, then a mutation (cut at a point, bytes spliced in), and the boundary the header names.
#[derive(Debug, Clone)]
struct Case {
    target: usize,
    parts: Vec<Part>,
    cut: Option<prop::sample::Index>,
    splice: Option<(prop::sample::Index, Vec<u8>)>,
    header_boundary: &'static str,
    close: bool,
}

fn case(files: (Vec<u8>, Vec<u8>)) -> impl Strategy<Value = Case> {
    (0usize..2)
        .prop_flat_map(move |target| {
            // Half the cases start from a valid upload for the target, so that mutations hit every stage.
            let valid = vec![
                Part {
                    name: "metadata",
                    file_name: None,
                    content: json!({"metadata": {"name": "up1"}}).to_string().into_bytes(),
                },
                Part {
                    name: "file",
                    file_name: Some("f.tgz"),
                    content: if target == 0 {
                        files.0.clone()
                    } else {
                        files.1.clone()
                    },
                },
            ];
            let parts = prop_oneof![
                proptest::collection::vec(part(files.clone()), 0..2).prop_map(move |extra| {
                    let mut parts = valid.clone();
                    parts.extend(extra);
                    parts
                }),
                proptest::collection::vec(part(files.clone()), 0..4),
            ];
            (
                Just(target),
                parts,
                prop::option::weighted(0.3, any::<prop::sample::Index>()),
                prop::option::weighted(
                    0.3,
                    (
                        any::<prop::sample::Index>(),
                        proptest::collection::vec(any::<u8>(), 1..40),
                    ),
                ),
                prop_oneof![4 => Just(BOUNDARY), 1 => Just("other-boundary"), 1 => Just("")],
                prop::bool::weighted(0.8),
            )
        })
        .prop_map(|(target, parts, cut, splice, header_boundary, close)| Case {
            target,
            parts,
            cut,
            splice,
            header_boundary,
            close,
        })
}

fn encode(case: &Case) -> Vec<u8> {
    let mut body = Vec::new();
    for part in &case.parts {
        let file_name = part
            .file_name
            .map(|name| format!("; filename=\"{name}\""))
            .unwrap_or_default();
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{}\"{file_name}\r\n\r\n",
                part.name
            )
            .as_bytes(),
        );
        body.extend_from_slice(&part.content);
        body.extend_from_slice(b"\r\n");
    }
    if case.close {
        body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    }
    if let Some((at, bytes)) = &case.splice {
        let at = at.index(body.len() + 1);
        body.splice(at..at, bytes.iter().copied());
    }
    if let Some(cut) = &case.cut {
        body.truncate(cut.index(body.len() + 1));
    }
    body
}

#[test]
fn hostile_multipart_bodies_get_json_answers() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let api = runtime.block_on(async {
        let api = Api::new(Store::memory());
        api.post("/v2/projects", json!({"metadata": {"name": "testvfw"}}))
            .await
            .expect(StatusCode::CREATED);
        api.post(
            &format!("{PROJECT}/composite-apps"),
            json!({"metadata": {"name": "compositevfw"}, "spec": {"compositeAppVersion": "v1"}}),
        )
        .await
        .expect(StatusCode::CREATED);
        api.post(
            "/v2/cluster-providers",
            json!({"metadata": {"name": "vfw-cluster-provider"}}),
        )
        .await
        .expect(StatusCode::CREATED);
        api
    });
    let targets = [format!("{CA}/apps"), format!("{PROVIDER}/clusters")];
    // Valid files for both targets, so that some cases reach the checks behind the reader.
    let files = (chart("firewall"), kubeconfig("edge01"));
    let accepted = std::cell::Cell::new(0u32);
    let refused = std::cell::Cell::new(0u32);
    let mut runner = TestRunner::new(Config::with_cases(256));
    let result = runner.run(&case(files), |case| {
        let target = &targets[case.target];
        let content_type = if case.header_boundary.is_empty() {
            "multipart/form-data".to_string()
        } else {
            format!("multipart/form-data; boundary={}", case.header_boundary)
        };
        let reply =
            runtime.block_on(api.call(Method::POST, target, Some(&content_type), encode(&case), None));
        prop_assert!(
            reply.status.is_success() || reply.status.is_client_error(),
            "{} for {:?}: {}",
            reply.status,
            case,
            String::from_utf8_lossy(&reply.bytes)
        );
        if reply.status.is_client_error() {
            let body: serde_json::Value = serde_json::from_slice(&reply.bytes)
                .map_err(|_| TestCaseError::fail(format!("not JSON: {:?}", reply.bytes)))?;
            prop_assert!(
                body["code"].is_string() && body["message"].is_string(),
                "{}",
                body
            );
            refused.set(refused.get() + 1);
        } else {
            // Accepted: the upload reads back, and is removed for the next case.
            let item = format!("{target}/up1");
            let read = runtime.block_on(api.get(&item));
            prop_assert_eq!(read.status, StatusCode::OK);
            let deleted = runtime.block_on(api.delete(&item));
            prop_assert!(deleted.status.is_success(), "{}", deleted.status);
            accepted.set(accepted.get() + 1);
        }
        Ok(())
    });
    if let Err(err) = result {
        panic!("{err}");
    }
    eprintln!("accepted {}, refused {}", accepted.get(), refused.get());
    assert!(refused.get() > 0, "the cases reach no refusal");
    assert!(accepted.get() > 0, "the cases reach no accepted upload");
    runtime.block_on(async {
        api.get("/v2/projects").await.expect(StatusCode::OK);
        let apps = api.get(&format!("{CA}/apps")).await.expect(StatusCode::OK).json();
        assert_eq!(apps, json!([]), "no half-written app is left behind");
    });
}
