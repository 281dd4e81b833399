//! The generic action controller through the API: its intents, resources (with the object's file) and
//! customizations (with their files) kept as EMCO keeps them; a DIG naming a controller emco cannot run refused
//! at instantiate; the objects of each cluster changed as the customizations say, and a customization that
//! cannot apply refused naming the intent, resource, customization and cluster.

use axum::http::{Method, StatusCode};
use emco_appcontext::AppContexts;
use serde_json::{Value as Json, json};

use crate::support::*;

const GAC: &str = "/v2/projects/testvfw/composite-apps/compositevfw/v1/deployment-intent-groups/vfw_deployment_intent_group/generic-k8s-intents";

async fn send_files(api: &Api, method: Method, uri: &str, metadata: &Json, files: &[(&str, &[u8])]) -> Reply {
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    api.call(
        method,
        uri,
        Some(&content_type),
        form_with(
            Some(metadata),
            &files
                .iter()
                .map(|(name, content)| ("files", *name, *content))
                .collect::<Vec<_>>(),
        ),
        None,
    )
    .await
}

fn resource(name: &str, app: &str, new_object: bool, kind: &str, object: &str) -> Json {
    json!({"metadata": {"name": name}, "spec": {"app": app, "newObject": new_object.to_string(),
        "resourceGVK": {"apiVersion": if kind == "Deployment" { "apps/v1" } else { "v1" }, "kind": kind, "name": object}}})
}

fn customization(name: &str, spec: Json) -> Json {
    json!({"metadata": {"name": name}, "spec": spec})
}

fn everywhere() -> Json {
    json!({"clusterSpecific": "false", "clusterInfo": {"scope": "label", "clusterProvider": "vfw-cluster-provider", "clusterLabel": "edge-cluster", "mode": "allow"}})
}

/// A customization spec for every cluster applying these RFC 6902 operations.
fn json_patch(operations: Json) -> Json {
    let mut spec = everywhere();
    spec["patchType"] = json!("json");
    spec["patchJson"] = operations;
    spec
}

/// Creates a resource of the intent `site` (201).
async fn add_resource(api: &Api, body: Json) {
    api.post_form(&format!("{GAC}/site/resources"), Some(&body), None)
        .await
        .expect(StatusCode::CREATED);
}

/// Creates a customization of the resource `resource` of the intent `site`, with these files (201).
async fn add_customization(api: &Api, resource: &str, body: Json, files: &[(&str, &[u8])]) {
    send_files(
        api,
        Method::POST,
        &format!("{GAC}/site/resources/{resource}/customizations"),
        &body,
        files,
    )
    .await
    .expect(StatusCode::CREATED);
}

/// Approves the DIG and answers its instantiate, which must be refused (409).
async fn instantiate_refused(api: &Api) -> Reply {
    api.approve_vfw().await;
    api.post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT)
}

/// Registers gac and names it in the DIG's intents.
async fn use_gac(api: &Api) {
    api.post(
        "/v2/controllers",
        json!({"metadata": {"name": "gac"}, "spec": {"host": "gac", "port": 9033, "type": "action", "priority": 1}}),
    )
    .await
    .expect(StatusCode::CREATED);
    api.name_controller("gac", "site").await;
    api.post(GAC, json!({"metadata": {"name": "site"}}))
        .await
        .expect(StatusCode::CREATED);
}

#[tokio::test]
async fn resources_and_customizations_are_kept_with_their_files() {
    let api = Api::new(emco_store::Store::memory());
    api.onboard_vfw().await;
    use_gac(&api).await;
    let resources = format!("{GAC}/site/resources");
    let site_cm = resource("site-cm", "sink", true, "ConfigMap", "site-config");
    let created = api
        .post_form(
            &resources,
            Some(&site_cm),
            Some(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: site-config\n"),
        )
        .await
        .expect(StatusCode::CREATED);
    assert_eq!(created.json()["spec"]["resourceGVK"]["name"], "site-config");
    assert_eq!(
        api.post_form(&resources, Some(&site_cm), None).await.code(),
        "AlreadyExists"
    );
    // A new Deployment is its file, one YAML mapping; a resource of an app the composite app does not have is
    // refused.
    let web = resource("web", "sink", true, "Deployment", "web");
    let refusals: [(&Json, Option<&[u8]>, StatusCode, &str); 3] = [
        (&web, None, StatusCode::UNPROCESSABLE_ENTITY, "'file' is missing"),
        (
            &web,
            Some(b"- a list\n"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "one YAML mapping",
        ),
        (
            &resource("x", "vpn", true, "ConfigMap", "x"),
            None,
            StatusCode::CONFLICT,
            "spec.app names App",
        ),
    ];
    for (body, file, status, needle) in refusals {
        let refused = api.post_form(&resources, Some(body), file).await.expect(status);
        assert!(refused.message().contains(needle), "{}", refused.message());
    }
    let replaced = api
        .put_form(
            &format!("{resources}/site-cm"),
            &site_cm,
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: site-config\ndata:\n  a: b\n",
        )
        .await;
    assert_eq!(
        replaced.status,
        StatusCode::OK,
        "a replacement is 200, as gac answers it"
    );

    // A customization keeps its files, with their names, in the order sent.
    let customizations = format!("{resources}/site-cm/customizations");
    let body = customization("all", everywhere());
    send_files(
        &api,
        Method::POST,
        &customizations,
        &body,
        &[("site.properties", b"zone=east\n"), ("b.json", b"{}")],
    )
    .await
    .expect(StatusCode::CREATED);
    let both = api
        .call(
            Method::GET,
            &format!("{customizations}/all"),
            None,
            Vec::new(),
            Some("multipart/form-data"),
        )
        .await
        .expect(StatusCode::OK);
    let text = String::from_utf8_lossy(&both.bytes);
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing in {text}"))
    };
    assert!(
        at("filename=\"site.properties\"") < at("zone=east") && at("zone=east") < at("filename=\"b.json\""),
        "{text}"
    );
    let one = api
        .call(
            Method::GET,
            &format!("{customizations}/all"),
            None,
            Vec::new(),
            Some("application/octet-stream"),
        )
        .await
        .expect(StatusCode::NOT_ACCEPTABLE);
    assert!(one.message().contains("has 2 files"), "{}", one.message());

    // A patch value fetched from a URL is refused before anything is stored, naming the value.
    let mut fetched = everywhere();
    fetched["patchType"] = json!("json");
    fetched["patchJson"] =
        json!([{"op": "add", "path": "/data/a", "value": "$(http://169.254.169.254/latest)$"}]);
    let refused = send_files(
        &api,
        Method::POST,
        &customizations,
        &customization("fetch", fetched),
        &[],
    )
    .await
    .expect(StatusCode::BAD_REQUEST);
    assert!(
        refused.message().contains("'http://169.254.169.254/latest'"),
        "{}",
        refused.message()
    );
    api.get(&format!("{customizations}/fetch"))
        .await
        .expect(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_dig_naming_a_controller_emco_cannot_run_is_refused_at_instantiate() {
    let api = Api::new(emco_store::Store::memory());
    api.onboard_vfw().await;
    api.name_controller("gac", "site").await;
    api.approve_vfw().await;
    let unregistered = api
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert_eq!(unregistered.code(), "ControllerUnavailable");
    assert!(
        unregistered
            .message()
            .contains("controller 'gac', which is not registered"),
        "{}",
        unregistered.message()
    );

    api.post("/v2/controllers", json!({"metadata": {"name": "gac"}, "spec": {"host": "gac", "port": 9033, "type": "action", "priority": 1}}))
        .await
        .expect(StatusCode::CREATED);
    let no_intent = api
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        no_intent
            .message()
            .contains("gac intent 'site', which does not exist"),
        "{}",
        no_intent.message()
    );

    api.post("/v2/controllers", json!({"metadata": {"name": "sample"}, "spec": {"host": "s", "port": 9099, "type": "action", "priority": 2}}))
        .await
        .expect(StatusCode::CREATED);
    api.name_controller("sample", "s").await;
    api.approve_vfw().await;
    let unknown = api
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    assert!(
        unknown
            .message()
            .contains("controller 'sample', which emco does not have (built in: gac, ovnaction, dtc, hpa, hpa-placement-controller, hpa-placement-controller-1, hpa-action-controller, hpa-action-controller-1)"),
        "{}",
        unknown.message()
    );
    assert_eq!(api.states().await.last().map(String::as_str), Some("Approved"));
}

#[tokio::test]
async fn customizations_change_the_objects_of_the_clusters_they_select() {
    let api = Api::new(emco_store::Store::memory());
    api.onboard_vfw().await;
    use_gac(&api).await;
    let resources = format!("{GAC}/site/resources");
    // A ConfigMap for edge01 only, its data from two files (one renamed), then patched.
    add_resource(
        &api,
        resource("site-cm", "sink", true, "ConfigMap", "site-config"),
    )
    .await;
    let edge01_only = json!({"clusterSpecific": "true", "clusterInfo": {"scope": "name", "clusterProvider": "vfw-cluster-provider", "cluster": "edge01", "mode": "allow"},
        "patchType": "json", "patchJson": [{"op": "add", "path": "/metadata/labels", "value": {"site": "edge01"}}],
        "configMapOptions": {"dataKeyOptions": [{"fileName": "zone.txt", "keyName": "zone"}]}});
    add_customization(
        &api,
        "site-cm",
        customization("edge01", edge01_only),
        &[("zone.txt", b"east"), ("limits.json", b"{\"max\": 3}")],
    )
    .await;
    // The firewall's Deployment on every cluster: three replicas and a sidecar merged in by name.
    add_resource(
        &api,
        resource("fw", "firewall", false, "Deployment", "fw0-firewall"),
    )
    .await;
    let replicas = json_patch(json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]));
    add_customization(&api, "fw", customization("replicas", replicas), &[]).await;
    let mut sidecar = everywhere();
    sidecar["patchType"] = json!("merge");
    send_files(&api, Method::POST, &format!("{resources}/fw/customizations"), &customization("sidecar", sidecar),
        &[("sidecar.yaml", b"spec:\n  template:\n    spec:\n      containers:\n      - name: probe\n        image: busybox\n")])
        .await
        .expect(StatusCode::CREATED);
    // The preview shows what each cluster would get, and which controller changed it, before anything is stored.
    let preview = api
        .get(&format!("{DIG}/preview?cluster=vfw-cluster-provider%2Bedge01"))
        .await
        .expect(StatusCode::OK)
        .json();
    let edge01 = &preview["clusters"][0];
    assert_eq!(edge01["cluster"], "vfw-cluster-provider+edge01");
    assert_eq!(preview["clusters"].as_array().map(Vec::len), Some(1));
    let changed: Vec<(String, Json)> = edge01["apps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|app| app["resources"].as_array().unwrap().iter())
        .map(|r| {
            (
                format!("{}+{}", r["name"].as_str().unwrap(), r["kind"].as_str().unwrap()),
                r["changedBy"].clone(),
            )
        })
        .collect();
    assert!(
        changed.contains(&("site-config+ConfigMap".into(), json!(["gac"]))),
        "{changed:?}"
    );
    assert!(
        changed.contains(&("fw0-firewall+Deployment".into(), json!(["gac"]))),
        "{changed:?}"
    );
    assert!(
        changed.contains(&("fw0-sink+Deployment".into(), json!([]))),
        "{changed:?}"
    );
    assert!(
        AppContexts::new(api.store.clone())
            .ids()
            .await
            .unwrap()
            .is_empty(),
        "a preview stores nothing"
    );
    api.approve_and_instantiate_vfw().await;

    let contexts = AppContexts::new(api.store.clone());
    let id = contexts.ids().await.unwrap()[0];
    let records = contexts.clusters(id).await.unwrap();
    let object = |app: &str, cluster: &str, key: &str| {
        records
            .iter()
            .find(|r| r.app == app && r.cluster == format!("vfw-cluster-provider+{cluster}"))
            .and_then(|r| r.resources.iter().find(|resource| resource.key() == key))
            .map(|resource| resource.object())
    };
    let config = object("sink", "edge01", "site-config+ConfigMap").expect("the ConfigMap on edge01");
    assert_eq!(
        config["data"],
        json!({"zone": "east", "limits.json": "{\"max\": 3}"})
    );
    assert_eq!(config["metadata"]["labels"], json!({"site": "edge01"}));
    assert_eq!(
        object("sink", "edge02", "site-config+ConfigMap"),
        None,
        "edge02 is not selected"
    );
    for cluster in ["edge01", "edge02"] {
        let firewall = object("firewall", cluster, "fw0-firewall+Deployment").unwrap();
        assert_eq!(firewall["spec"]["replicas"], 3, "{cluster}");
        let containers: Vec<&str> = firewall["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(containers.len(), 2, "{cluster}: {containers:?}");
        assert_eq!(containers[1], "probe");
    }

    // Compared with what is applied: unchanged, until a customization changes; then only that object differs.
    let diff_of = |preview: &Json| -> Vec<(String, String)> {
        let mut diffs: Vec<(String, String)> = preview["clusters"][0]["apps"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|app| app["resources"].as_array().unwrap().iter())
            .filter(|r| r["diff"] != "unchanged")
            .map(|r| {
                (
                    r["name"].as_str().unwrap().to_string(),
                    r["diff"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        diffs.sort();
        diffs
    };
    let same = api
        .get(&format!(
            "{DIG}/preview?cluster=vfw-cluster-provider%2Bedge02&diff=true"
        ))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(diff_of(&same), Vec::<(String, String)>::new());
    let five = json_patch(json!([{"op": "replace", "path": "/spec/replicas", "value": 5}]));
    send_files(
        &api,
        Method::PUT,
        &format!("{resources}/fw/customizations/replicas"),
        &customization("replicas", five),
        &[],
    )
    .await
    .expect(StatusCode::OK);
    let changed = api
        .get(&format!(
            "{DIG}/preview?cluster=vfw-cluster-provider%2Bedge02&diff=true"
        ))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(
        diff_of(&changed),
        [("fw0-firewall".to_string(), "changed".to_string())]
    );
    let refused = api
        .get(&format!("{DIG}/preview?diff=maybe"))
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(refused.message().contains("diff"), "{}", refused.message());
}

#[tokio::test]
async fn a_customization_that_cannot_apply_is_refused_naming_where() {
    let api = Api::new(emco_store::Store::memory());
    api.onboard_vfw().await;
    use_gac(&api).await;
    let resources = format!("{GAC}/site/resources");
    add_resource(
        &api,
        resource("fw", "firewall", false, "Deployment", "fw0-firewall"),
    )
    .await;
    let bad_path = json_patch(json!([{"op": "replace", "path": "/spec/nothing/here", "value": 1}]));
    add_customization(&api, "fw", customization("bad", bad_path), &[]).await;
    let refused = instantiate_refused(&api).await;
    assert_eq!(refused.code(), "ActionFailed");
    let message = refused.message();
    assert!(
        message.starts_with("controller 'gac': gac intent 'site', resource 'fw', customization 'bad', cluster 'vfw-cluster-provider+edge01': patchJson:"),
        "{message}"
    );
    assert!(message.contains("/spec/nothing/here"), "{message}");

    // An object the app does not render.
    api.delete(&format!("{resources}/fw/customizations/bad"))
        .await
        .expect(StatusCode::NO_CONTENT);
    add_resource(&api, resource("ghost", "sink", false, "Deployment", "no-such")).await;
    let replicas = json_patch(json!([{"op": "replace", "path": "/spec/replicas", "value": 1}]));
    add_customization(&api, "ghost", customization("r", replicas), &[]).await;
    let refused = instantiate_refused(&api).await;
    assert!(
        refused
            .message()
            .ends_with("app 'sink' renders no Deployment 'no-such' there"),
        "{}",
        refused.message()
    );
}

/// A value server on loopback: `/values/{provider}/{cluster}` answers `{"value": 3}`, `/big` more than 64 KiB,
/// `/slow` never; the paths asked for are recorded.
async fn value_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::routing::get;
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let app = axum::Router::new()
        .route(
            "/values/{provider}/{cluster}",
            get(move |uri: axum::http::Uri| {
                let seen = seen.clone();
                async move {
                    seen.lock().unwrap().push(uri.path().to_string());
                    axum::Json(json!({"value": 3}))
                }
            }),
        )
        .route(
            "/values/big",
            get(|| async { format!("{{\"value\": \"{}\"}}", "x".repeat(70_000)) }),
        )
        .route(
            "/values/slow",
            get(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                "{}"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_values_come_only_from_allowed_url_prefixes_within_bounds() {
    let (server, asked) = value_server().await;
    let config = emco_server::ServerConfig {
        patch_value_sources: emco_server::PatchValueSources {
            prefixes: vec![format!("{server}/values/")],
            timeout: std::time::Duration::from_secs(1),
            ..emco_server::PatchValueSources::default()
        },
        ..emco_server::ServerConfig::default()
    };
    let api = Api::with_config(emco_store::Store::memory(), config);
    api.onboard_vfw().await;
    use_gac(&api).await;
    let resources = format!("{GAC}/site/resources");
    add_resource(
        &api,
        resource("fw", "firewall", false, "Deployment", "fw0-firewall"),
    )
    .await;
    let customizations = format!("{resources}/fw/customizations");
    let with_value = |value: &str| {
        let mut spec = json!({"clusterSpecific": "false", "clusterInfo": {"scope": "name", "clusterProvider": "vfw-cluster-provider", "cluster": "edge01", "mode": "allow"}});
        spec["patchType"] = json!("json");
        spec["patchJson"] = json!([{"op": "replace", "path": "/spec/replicas", "value": value}]);
        customization("replicas", spec)
    };
    // Outside the allowed prefix: refused before anything is stored, naming the URL.
    let outside = send_files(
        &api,
        Method::POST,
        &customizations,
        &with_value(&format!("$({server}/elsewhere)$")),
        &[],
    )
    .await
    .expect(StatusCode::BAD_REQUEST);
    assert!(
        outside.message().contains("under none of the URL prefixes"),
        "{}",
        outside.message()
    );
    // Inside it: fetched at instantiate, with the placeholders filled from clusterInfo, and used.
    send_files(
        &api,
        Method::POST,
        &customizations,
        &with_value(&format!("$({server}/values/{{clusterProvider}}/{{cluster}})$")),
        &[],
    )
    .await
    .expect(StatusCode::CREATED);
    api.approve_and_instantiate_vfw().await;
    assert_eq!(*asked.lock().unwrap(), ["/values/vfw-cluster-provider/edge01"]);
    let contexts = AppContexts::new(api.store.clone());
    let id = contexts.ids().await.unwrap()[0];
    let firewall = contexts
        .clusters(id)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.app == "firewall")
        .unwrap();
    assert_eq!(firewall.resources[0].object()["spec"]["replicas"], 3);

    // An answer past the size bound, or none within the time limit: the preview (as an instantiate) is refused
    // naming the URL and the bound, and the server keeps serving.
    for (path, expected) in [
        ("big", "larger than 65536 bytes"),
        ("slow", "no answer within 1s"),
    ] {
        send_files(
            &api,
            Method::PUT,
            &format!("{customizations}/replicas"),
            &with_value(&format!("$({server}/values/{path})$")),
            &[],
        )
        .await
        .expect(StatusCode::OK);
        let refused = api
            .get(&format!("{DIG}/preview"))
            .await
            .expect(StatusCode::CONFLICT);
        assert!(
            refused.message().contains(&format!("/values/{path}'")),
            "{}",
            refused.message()
        );
        assert!(refused.message().contains(expected), "{}", refused.message());
    }
    api.get(&format!("{DIG}/status")).await.expect(StatusCode::OK);
}

#[tokio::test]
async fn a_preview_of_more_cells_than_its_bound_is_refused_and_a_narrower_one_answers() {
    let api = Api::new(emco_store::Store::memory());
    api.onboard_vfw().await;
    // 128 more clusters labelled edge-cluster: packetgen and sink (placed by the label) are on 130 each.
    api.add_labelled_clusters("site", 128).await;
    let refused = api
        .get(&format!("{DIG}/preview"))
        .await
        .expect(StatusCode::BAD_REQUEST);
    assert!(
        refused.message().contains("262 app-cluster cells; at most 256"),
        "{}",
        refused.message()
    );
    let sink = api
        .get(&format!("{DIG}/preview?app=sink"))
        .await
        .expect(StatusCode::OK)
        .json();
    assert_eq!(sink["clusters"].as_array().map(Vec::len), Some(130));
    let one = api
        .get(&format!("{DIG}/preview?cluster=vfw-cluster-provider%2Bsite007"))
        .await
        .expect(StatusCode::OK)
        .json();
    let apps: Vec<&str> = one["clusters"][0]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|app| app["app"].as_str().unwrap())
        .collect();
    assert_eq!(
        apps,
        ["packetgen", "sink"],
        "the firewall is placed on edge01 and edge02 only"
    );
}
