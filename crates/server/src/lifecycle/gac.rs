//! The generic action controller (EMCO's `gac`): a DIG's generic-k8s-intent adds objects to an app's clusters
//! (`newObject: "true"`: the resource's file, a ConfigMap or Secret filled from the customization's files) or
//! patches an object of the app's render (`"false"`), on every cluster of the app or the clusters a
//! customization's scope selects — as `src/genericactioncontroller/internal/action` does, except that what EMCO
//! skips silently (an object the app does not render) is refused here naming it.

use std::collections::BTreeSet;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use emco_appcontext::{Catalog, Kind, ResourcePath, ResourceRecord};
use emco_model::gac::{
    CustomizationSpec, DataOptions, GacCustomization, GacResource, GacResourceSpec, external_patch_url,
};
use serde_json::{Map, Value as Json, json};

use super::controllers::Deployed;
use super::patch_values::FetchedValues;
use super::{LifecycleError, Result};

/// The name gac is registered under in EMCO's examples (`/v2/controllers/gac`).
pub(super) const CONTROLLER_NAME: &str = "gac";

/// A generic-k8s-intent, read for an instantiation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct GacIntent {
    name: String,
    resources: Vec<ResourceInput>,
}

/// A gac resource with its file and customizations.
#[derive(Debug, Clone, PartialEq)]
struct ResourceInput {
    name: String,
    spec: GacResourceSpec,
    file: Option<Vec<u8>>,
    customizations: Vec<CustomizationInput>,
}

/// A customization with its files and the clusters it selects.
#[derive(Debug, Clone, PartialEq)]
struct CustomizationInput {
    name: String,
    spec: CustomizationSpec,
    files: Vec<(String, Vec<u8>)>,
    clusters: Selection,
}

/// The clusters a customization applies to.
#[derive(Debug, Clone, PartialEq)]
enum Selection {
    /// Every cluster of the app (`clusterSpecific: "false"`).
    Every,
    /// These (`provider+cluster`), resolved when the intent is read.
    Only(BTreeSet<String>),
}

impl Selection {
    fn contains(&self, cluster: &str) -> bool {
        match self {
            Self::Every => true,
            Self::Only(clusters) => clusters.contains(cluster),
        }
    }
}

/// Reads the generic-k8s-intent `intent` of the DIG at `dig`: its resources and customizations in creation
/// order, each customization's clusters resolved (labels looked up now).
pub(super) async fn read(catalog: &Catalog, dig: &ResourcePath, intent: &str) -> Result<GacIntent> {
    let intent_path = dig.child(Kind::GenericK8sIntent, &[intent]);
    if !catalog.exists(&intent_path).await? {
        return Err(LifecycleError::Incomplete(format!(
            "DeploymentIntentGroup '{}' names gac intent '{intent}', which does not exist (create it under …/generic-k8s-intents)",
            dig.name()
        )));
    }
    let mut resources = Vec::new();
    for (resource_path, resource) in catalog
        .list_as::<GacResource>(Kind::GacResource, intent_path.names())
        .await?
    {
        let mut customizations = Vec::new();
        for (customization_path, customization) in catalog
            .list_as::<GacCustomization>(Kind::GacCustomization, resource_path.names())
            .await?
        {
            let files = match catalog.blob(&customization_path).await? {
                Some(blob) => decode_files(&blob).map_err(|message| {
                    LifecycleError::Invalid(format!(
                        "the files of customization '{}' cannot be read: {message}",
                        customization_path.display_name()
                    ))
                })?,
                None => Vec::new(),
            };
            let clusters = select(catalog, &customization.spec).await?;
            customizations.push(CustomizationInput {
                name: customization.metadata.name,
                spec: customization.spec,
                files,
                clusters,
            });
        }
        resources.push(ResourceInput {
            name: resource.metadata.name,
            spec: resource.spec,
            file: catalog.blob(&resource_path).await?,
            customizations,
        });
    }
    Ok(GacIntent {
        name: intent.to_string(),
        resources,
    })
}

/// The clusters a customization selects, as EMCO's `isValidClusterToApplyBy{Label,Name}`: scope `label` the
/// provider's clusters with the label, scope `name` the one cluster; mode `deny` selects none (EMCO applies a
/// customization only where mode is `allow`).
async fn select(catalog: &Catalog, spec: &CustomizationSpec) -> Result<Selection> {
    if !spec.is_cluster_specific() {
        return Ok(Selection::Every);
    }
    let info = &spec.cluster_info;
    let mut selected = BTreeSet::new();
    if info.mode != "allow" {
        return Ok(Selection::Only(selected));
    }
    let provider = &info.cluster_provider;
    if info.scope == "name" {
        selected.insert(format!("{provider}+{}", info.cluster));
        return Ok(Selection::Only(selected));
    }
    selected.extend(super::dig::clusters_with_label(catalog, provider, &info.cluster_label).await?);
    Ok(Selection::Only(selected))
}

/// Applies the intent to the rendered objects of the DIG's apps: each resource, each of its customizations in
/// creation order, on the clusters it selects.
pub(super) fn apply(
    intent: &GacIntent,
    apps: &mut [Deployed],
    fetched: &FetchedValues,
) -> std::result::Result<(), String> {
    for resource in &intent.resources {
        let failed = |customization: Option<&str>, cluster: Option<&str>, message: String| {
            let mut place = format!("gac intent '{}', resource '{}'", intent.name, resource.name);
            if let Some(customization) = customization {
                place.push_str(&format!(", customization '{customization}'"));
            }
            if let Some(cluster) = cluster {
                place.push_str(&format!(", cluster '{cluster}'"));
            }
            format!("{place}: {message}")
        };
        let app = apps
            .iter_mut()
            .find(|app| app.app == resource.spec.app)
            .ok_or_else(|| {
                failed(
                    None,
                    None,
                    format!("the composite app has no app '{}'", resource.spec.app),
                )
            })?;
        for customization in &resource.customizations {
            let name = Some(customization.name.as_str());
            if resource.spec.is_new_object() {
                let object = new_object(resource, customization, fetched)
                    .map_err(|message| failed(name, None, message))?;
                add_object(app, &customization.clusters, &object)
                    .map_err(|(cluster, message)| failed(name, Some(&cluster), message))?;
            } else {
                customise(app, resource, customization, fetched)
                    .map_err(|(cluster, message)| failed(name, cluster.as_deref(), message))?;
            }
        }
    }
    Ok(())
}

/// The object a new-object resource adds for one customization: its file (a ConfigMap or Secret gets the
/// customization's files as data), patched by the customization.
fn new_object(
    resource: &ResourceInput,
    customization: &CustomizationInput,
    fetched: &FetchedValues,
) -> std::result::Result<Json, String> {
    let gvk = &resource.spec.resource_gvk;
    let from_file = match &resource.file {
        Some(bytes) => object_of_file(bytes)?,
        None => None,
    };
    let kind = gvk.kind.to_ascii_lowercase();
    let mut object = match (kind.as_str(), from_file) {
        ("configmap" | "secret", None) => json!({
            "apiVersion": "v1",
            "kind": if kind == "secret" { "Secret" } else { "ConfigMap" },
            "metadata": {"name": gvk.name},
        }),
        (_, Some(object)) => object,
        (_, None) => return Err("the resource has no file: a new object is its file".into()),
    };
    for field in ["apiVersion", "kind"] {
        if object[field].as_str().is_none_or(str::is_empty) {
            return Err(format!("the resource's file has no {field}"));
        }
    }
    if object["metadata"].is_null() {
        object["metadata"] = json!({});
    }
    let Some(metadata) = object["metadata"].as_object_mut() else {
        return Err("the resource's file has a metadata that is not a mapping".into());
    };
    if metadata
        .get("name")
        .and_then(Json::as_str)
        .is_none_or(str::is_empty)
    {
        metadata.insert("name".into(), json!(gvk.name));
    }
    match kind.as_str() {
        "configmap" => add_data(
            &mut object,
            customization,
            &customization.spec.config_map_options,
            false,
        )?,
        "secret" => {
            if object["type"].as_str().is_none_or(str::is_empty) {
                object["type"] = json!("Opaque");
            }
            add_data(
                &mut object,
                customization,
                &customization.spec.secret_options,
                true,
            )?;
        }
        _ => {}
    }
    patch(&mut object, &kind, customization, fetched)?;
    Ok(object)
}

/// A ConfigMap's or Secret's data from the customization's files (those that are not merge patches): each keyed
/// by its option's `keyName` or its own name; a Secret's values base64-encoded.
fn add_data(
    object: &mut Json,
    customization: &CustomizationInput,
    options: &DataOptions,
    secret: bool,
) -> std::result::Result<(), String> {
    let object_name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if !object["data"].is_object() {
        object["data"] = json!({});
    }
    let Some(data) = object["data"].as_object_mut() else {
        return Ok(());
    };
    for (file_name, content) in &customization.files {
        if options.is_merge_patch(file_name) {
            continue;
        }
        let key = options.key_of(file_name);
        if !is_config_map_key(key) {
            return Err(format!(
                "file '{file_name}': '{key}' is not a valid data key (letters, digits, '-', '_' and '.', at most 253, not '.' or '..')"
            ));
        }
        if data.contains_key(key) {
            return Err(format!(
                "file '{file_name}': the object '{object_name}' already has the data key '{key}'"
            ));
        }
        let value = if secret {
            BASE64.encode(content)
        } else {
            String::from_utf8(content.clone()).map_err(|_| format!("file '{file_name}' is not UTF-8 text"))?
        };
        data.insert(key.to_string(), Json::String(value));
    }
    Ok(())
}

/// Kubernetes' `IsConfigMapKey`.
fn is_config_map_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 253
        && key != "."
        && key != ".."
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Applies the customization's patch, if it has one: `json` its RFC 6902 operations, `merge` its files (for a
/// ConfigMap or Secret only those its options mark `mergePatch`) as merge patches.
fn patch(
    object: &mut Json,
    kind: &str,
    customization: &CustomizationInput,
    fetched: &FetchedValues,
) -> std::result::Result<(), String> {
    let spec = &customization.spec;
    match spec.patch_type.as_str() {
        "json" => {
            let mut operations = Vec::with_capacity(spec.patch_json.len());
            for operation in &spec.patch_json {
                let mut operation = operation.clone();
                if let Some(url) = operation.get("value").and_then(external_patch_url) {
                    let url = fetch_url(url, spec);
                    let value = fetched
                        .get(&url)
                        .ok_or_else(|| format!("the patch value of '{url}' was not fetched"))?;
                    operation.insert("value".into(), value.clone());
                }
                operations.push(Json::Object(operation));
            }
            let operations = Json::Array(operations);
            let patch: json_patch::Patch = serde_json::from_value(operations)
                .map_err(|err| format!("patchJson is not an RFC 6902 patch: {err}"))?;
            json_patch::patch(object, &patch).map_err(|err| format!("patchJson: {err}"))
        }
        "merge" => {
            let options = match kind {
                "configmap" => Some(&spec.config_map_options),
                "secret" => Some(&spec.secret_options),
                _ => None,
            };
            let patches = customization
                .files
                .iter()
                .filter(|(name, _)| options.is_none_or(|options| options.is_merge_patch(name)));
            let mut applied = 0;
            for (file_name, content) in patches {
                let patch = object_of_file(content)
                    .map_err(|err| format!("merge patch file '{file_name}': {err}"))?
                    .unwrap_or_else(|| json!({}));
                super::merge_patch::apply(object, &patch)
                    .map_err(|err| format!("merge patch file '{file_name}': {err}"))?;
                applied += 1;
            }
            if applied == 0 {
                return Err("patchType merge, and no file of the customization is a merge patch".into());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Adds `object` to each selected cluster of the app, after its ordinary resources (EMCO appends it to the
/// cluster's resource order); an object gac added before under the same key is replaced.
fn add_object(
    app: &mut Deployed,
    clusters: &Selection,
    object: &Json,
) -> std::result::Result<(), (String, String)> {
    let record = ResourceRecord::pending_object(object.clone());
    for index in 0..app.clusters.len() {
        let cluster = app.clusters[index].clone();
        if !clusters.contains(&cluster) {
            continue;
        }
        app.add_object(index, record.clone()).map_err(|message| {
            (
                cluster,
                format!("{message}; a resource with newObject \"false\" customises it"),
            )
        })?;
    }
    Ok(())
}

/// Patches the app's rendered object the resource names on each selected cluster.
fn customise(
    app: &mut Deployed,
    resource: &ResourceInput,
    customization: &CustomizationInput,
    fetched: &FetchedValues,
) -> std::result::Result<(), (Option<String>, String)> {
    if customization.spec.patch_type.is_empty() {
        return Err((
            None,
            "it has no patchType: an object of the app's render is changed only by a patch".into(),
        ));
    }
    let gvk = &resource.spec.resource_gvk;
    let kind = gvk.kind.to_ascii_lowercase();
    for (cluster, objects) in app.clusters.iter().zip(app.objects.iter_mut()) {
        if !customization.clusters.contains(cluster) {
            continue;
        }
        let Some(existing) = objects
            .iter_mut()
            .find(|existing| existing.name == gvk.name && existing.kind.eq_ignore_ascii_case(&gvk.kind))
        else {
            return Err((
                Some(cluster.clone()),
                format!("app '{}' renders no {} '{}' there", app.app, gvk.kind, gvk.name),
            ));
        };
        let mut object = existing.object();
        patch(&mut object, &kind, customization, fetched)
            .map_err(|message| (Some(cluster.clone()), message))?;
        let role = existing.role.clone();
        *existing = ResourceRecord::pending_object(object).with_role(role);
    }
    Ok(())
}

/// The URL a `$(…)$` patch value is fetched from: its placeholders `{clusterProvider}` and `{cluster}` replaced
/// by the customization's `clusterInfo`, as EMCO does.
fn fetch_url(url: &str, spec: &CustomizationSpec) -> String {
    url.replace("{clusterProvider}", &spec.cluster_info.cluster_provider)
        .replace("{cluster}", &spec.cluster_info.cluster)
}

/// The URLs the intent's customizations take patch values from (placeholders replaced), each once.
pub(super) fn patch_value_urls(intent: &GacIntent) -> BTreeSet<String> {
    intent
        .resources
        .iter()
        .flat_map(|resource| &resource.customizations)
        .filter(|customization| customization.spec.patch_type == "json")
        .flat_map(|customization| {
            customization
                .spec
                .patch_json
                .iter()
                .filter_map(|operation| operation.get("value").and_then(external_patch_url))
                .map(|url| fetch_url(url, &customization.spec))
        })
        .collect()
}

/// The object of a resource or merge-patch file: its first YAML document as JSON (`None` when it holds none).
///
/// # Errors
/// Why it is not one YAML mapping.
pub(crate) fn object_of_file(bytes: &[u8]) -> std::result::Result<Option<Json>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "the file is not UTF-8 text".to_string())?;
    match emco_helm::formats::yaml::parse(text).map_err(|err| err.to_string())? {
        Json::Null => Ok(None),
        object @ Json::Object(_) => Ok(Some(object)),
        _ => Err("the file must hold one YAML mapping (an object)".into()),
    }
}

/// How a customization's files are stored beside it: their names and contents, in upload order.
pub(crate) fn encode_files(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let list: Vec<Json> = files
        .iter()
        .map(|(name, content)| json!({"fileName": name, "content": BASE64.encode(content)}))
        .collect();
    serde_json::to_vec(&list).unwrap_or_default()
}

/// The files [`encode_files`] stored.
///
/// # Errors
/// What is damaged.
pub(crate) fn decode_files(blob: &[u8]) -> std::result::Result<Vec<(String, Vec<u8>)>, String> {
    let list: Vec<Map<String, Json>> = serde_json::from_slice(blob).map_err(|err| err.to_string())?;
    list.into_iter()
        .map(|file| {
            let name = file.get("fileName").and_then(Json::as_str).unwrap_or_default();
            let content = file.get("content").and_then(Json::as_str).unwrap_or_default();
            let content = BASE64
                .decode(content)
                .map_err(|err| format!("file '{name}': {err}"))?;
            Ok((name.to_string(), content))
        })
        .collect()
}

#[cfg(test)]
mod tests;
