//! Unit tests of the generic action controller: new objects (ConfigMap and Secret data from files, placement
//! before the hooks, a later customization replacing an earlier one's object), customised objects, and the
//! refusals.

use serde_json::json;

use super::*;

fn spec<T: serde::de::DeserializeOwned>(value: Json) -> T {
    serde_json::from_value(value).expect("a valid spec")
}

fn deployed(objects: Vec<Json>) -> Deployed {
    let records = objects.into_iter().map(ResourceRecord::pending_object).collect();
    Deployed::rendered(
        "app",
        &["p+a".to_string(), "p+b".to_string()],
        &[],
        vec![records, Vec::new()],
    )
}

fn customization(
    name: &str,
    spec_value: Json,
    files: &[(&str, &str)],
    clusters: Selection,
) -> CustomizationInput {
    CustomizationInput {
        name: name.into(),
        spec: spec(spec_value),
        files: files
            .iter()
            .map(|(name, content)| (name.to_string(), content.as_bytes().to_vec()))
            .collect(),
        clusters,
    }
}

fn intent(resources: Vec<ResourceInput>) -> GacIntent {
    GacIntent {
        name: "i".into(),
        resources,
    }
}

fn resource(
    name: &str,
    new_object: bool,
    kind: &str,
    file: Option<&str>,
    customizations: Vec<CustomizationInput>,
) -> ResourceInput {
    ResourceInput {
        name: name.into(),
        spec: spec(json!({"app": "app", "newObject": new_object.to_string(),
            "resourceGVK": {"apiVersion": "v1", "kind": kind, "name": name}})),
        file: file.map(|text| text.as_bytes().to_vec()),
        customizations,
    }
}

const EVERY: &str = r#"{"clusterSpecific": "false", "clusterInfo": {"scope": "label", "clusterProvider": "p", "mode": "allow"}}"#;

fn every() -> Json {
    serde_json::from_str(EVERY).unwrap()
}

#[test]
fn a_secret_gets_its_files_base64_encoded_and_lands_before_the_hooks() {
    let hook = ResourceRecord::pending_object(
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "h"}}),
    )
    .with_role(emco_appcontext::ResourceRole::Hook(emco_model::Hook {
        events: Vec::new(),
        weight: 0,
        delete_policies: Vec::new(),
    }));
    let mut apps = vec![deployed(vec![
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}),
    ])];
    apps[0].objects[0].push(hook);
    let mut options = every();
    options["secretOptions"] = json!({"dataKeyOptions": [{"fileName": "pw.txt", "keyName": "PASSWORD"}]});
    let gac = intent(vec![resource(
        "creds",
        true,
        "secret",
        None,
        vec![customization(
            "c",
            options,
            &[("pw.txt", "s3cret"), ("user", "admin")],
            Selection::Every,
        )],
    )]);
    apply(&gac, &mut apps, &FetchedValues::new()).unwrap();
    for objects in &apps[0].objects {
        let secret = objects
            .iter()
            .find(|r| r.kind == "Secret")
            .expect("on every cluster")
            .object();
        assert_eq!(secret["type"], "Opaque");
        assert_eq!(
            secret["data"],
            json!({"PASSWORD": "czNjcmV0", "user": "YWRtaW4="})
        );
    }
    let order: Vec<&str> = apps[0].objects[0].iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(order, ["Service", "Secret", "Job"]);
}

#[test]
fn a_later_customization_replaces_the_object_an_earlier_one_added_on_its_clusters() {
    let mut apps = vec![deployed(Vec::new())];
    let only_b = Selection::Only(["p+b".to_string()].into());
    let gac = intent(vec![resource(
        "cm",
        true,
        "ConfigMap",
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: '1'}\n"),
        vec![
            customization("first", every(), &[("x", "1")], Selection::Every),
            customization("second", every(), &[("y", "2")], only_b),
        ],
    )]);
    apply(&gac, &mut apps, &FetchedValues::new()).unwrap();
    let data = |cluster: usize| {
        let objects = &apps[0].objects[cluster];
        assert_eq!(objects.len(), 1, "one ConfigMap on cluster {cluster}");
        objects[0].object()["data"].clone()
    };
    assert_eq!(data(0), json!({"a": "1", "x": "1"}));
    assert_eq!(data(1), json!({"a": "1", "y": "2"}));
}

#[test]
fn refusals_name_what_cannot_be_done() {
    let rendered =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}});
    // A new object the app renders already.
    let mut apps = vec![deployed(vec![rendered.clone()])];
    let clash = intent(vec![resource(
        "cm",
        true,
        "ConfigMap",
        None,
        vec![customization("c", every(), &[], Selection::Every)],
    )]);
    let err = apply(&clash, &mut apps, &FetchedValues::new()).unwrap_err();
    assert_eq!(
        err,
        "gac intent 'i', resource 'cm', customization 'c', cluster 'p+a': app 'app' already renders ConfigMap 'cm'; a resource with newObject \"false\" customises it"
    );
    // A data key twice; a key Kubernetes refuses.
    let mut apps = vec![deployed(Vec::new())];
    let twice = intent(vec![resource(
        "cm2",
        true,
        "ConfigMap",
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm2}\ndata: {k: v}\n"),
        vec![customization("c", every(), &[("k", "again")], Selection::Every)],
    )]);
    assert!(
        apply(&twice, &mut apps, &FetchedValues::new())
            .unwrap_err()
            .ends_with("file 'k': the object 'cm2' already has the data key 'k'")
    );
    let bad_key = intent(vec![resource(
        "cm3",
        true,
        "ConfigMap",
        None,
        vec![customization("c", every(), &[("a b", "x")], Selection::Every)],
    )]);
    assert!(
        apply(&bad_key, &mut apps, &FetchedValues::new())
            .unwrap_err()
            .contains("'a b' is not a valid data key")
    );
    // Customising without a patch; a merge patch with no patch file.
    let mut apps = vec![deployed(vec![rendered])];
    let no_patch = intent(vec![resource(
        "cm",
        false,
        "ConfigMap",
        None,
        vec![customization("c", every(), &[], Selection::Every)],
    )]);
    assert!(
        apply(&no_patch, &mut apps, &FetchedValues::new())
            .unwrap_err()
            .ends_with("it has no patchType: an object of the app's render is changed only by a patch")
    );
    let mut merge = every();
    merge["patchType"] = json!("merge");
    let no_file = intent(vec![resource(
        "cm",
        false,
        "configmap",
        None,
        vec![customization("c", merge, &[("data.txt", "x")], Selection::Every)],
    )]);
    assert!(
        apply(&no_file, &mut apps, &FetchedValues::new())
            .unwrap_err()
            .ends_with("patchType merge, and no file of the customization is a merge patch")
    );
}

#[test]
fn a_configmap_merge_patch_file_patches_rather_than_adds_data_and_deny_selects_nothing() {
    let mut apps = vec![deployed(vec![
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}}),
    ])];
    let mut merge = every();
    merge["patchType"] = json!("merge");
    merge["configMapOptions"] =
        json!({"dataKeyOptions": [{"fileName": "p.yaml", "keyName": "unused", "mergePatch": "true"}]});
    let gac = intent(vec![resource(
        "cm",
        false,
        "ConfigMap",
        None,
        vec![
            customization(
                "m",
                merge,
                &[("p.yaml", "data:\n  a: null\n  b: '2'\n")],
                Selection::Only(["p+a".to_string()].into()),
            ),
            customization(
                "deny",
                json!({"clusterSpecific": "true", "clusterInfo": {"scope": "name", "clusterProvider": "p", "cluster": "a", "mode": "deny"},
                "patchType": "json", "patchJson": [{"op": "add", "path": "/data/denied", "value": "x"}]}),
                &[],
                Selection::Only(Default::default()),
            ),
        ],
    )]);
    apply(&gac, &mut apps, &FetchedValues::new()).unwrap();
    assert_eq!(apps[0].objects[0][0].object()["data"], json!({"b": "2"}));
}

#[test]
fn stored_files_read_back_as_they_were_uploaded() {
    let files = vec![
        ("a.txt".to_string(), b"one".to_vec()),
        ("b.bin".to_string(), vec![0, 255, 7]),
    ];
    assert_eq!(decode_files(&encode_files(&files)).unwrap(), files);
    assert!(decode_files(b"{}").is_err());
}
