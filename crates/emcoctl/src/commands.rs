//! The file commands, as EMCO's emcoctl does them: `apply` POSTs each document to its anchor, `update` PUTs it to
//! `anchor/<name>`, `get` GETs `anchor/<name>`, `delete` walks the documents in reverse and DELETEs them (an
//! `instantiate` anchor becomes a `terminate`). Each request is printed as `<METHOD>  --> URL: …`,
//! `Response Code: …`, `Response: …`, the format scripts parse.
//!
//! The DIG commands: `update` POSTs a DIG's `/update`, `rollback` its `/rollback` with a revision, each printed
//! as above (the answer is the new revision); `history` prints the DIG's revisions, when each was made and how
//! its context ended, from the DIG's state actions.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::Value as Json;

use crate::client::{Body, ClientError, EmcoClient, Reply};
use crate::documents::Document;

/// What a file command does with each document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// POST to the anchor.
    Apply,
    /// GET `anchor/<name>`.
    Get,
    /// PUT to `anchor/<name>`.
    Update,
    /// DELETE `anchor/<name>`, in reverse order.
    Delete,
}

/// Options of the file commands.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Stop at the first request that does not succeed.
    pub stop_on_failure: bool,
    /// After a 202 (an accepted lifecycle operation), wait this long before the next document.
    pub wait_after_accepted: Duration,
    /// Advanced once per document (the binary draws it on a terminal's stderr; hidden when piped).
    pub progress: Option<indicatif::ProgressBar>,
}

/// Why a command could not go on.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// A request got no answer.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A file a document names cannot be read.
    #[error("document {index}: cannot read {path}: {source}")]
    File {
        /// The document (1-based).
        index: usize,
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The output cannot be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
    /// What names a DIG does not.
    #[error(
        "'{0}' does not name a deployment intent group: give projects/P/composite-apps/CA/V/deployment-intent-groups/DIG (or its URL), or P/CA/V/DIG"
    )]
    NotADig(String),
    /// The DIG's status could not be read.
    #[error(transparent)]
    Status(#[from] crate::status::StatusError),
}

/// At most this many revisions are looked up by `history` (the latest).
pub const MAX_HISTORY_REVISIONS: usize = 100;

/// The `/v2/…/deployment-intent-groups/{dig}` path of a DIG named by `spec`: its URL or path (with or without
/// `/v2/`, ending in the DIG or one of its operations: `/update`, `/rollback`, `/status`), or the four names
/// `project/composite-app/version/dig`.
pub fn dig_path(spec: &str) -> Result<String, CommandError> {
    let not_a_dig = || CommandError::NotADig(spec.chars().take(200).collect());
    let mut path = spec.trim();
    if let Some((_, rest)) = path.split_once("://") {
        path = rest.find('/').map_or("", |slash| &rest[slash..]);
    }
    let path = path.trim_matches('/');
    let path = path.strip_prefix("v2/").unwrap_or(path);
    let segments: Vec<&str> = path.split('/').collect();
    let names: Vec<&str> = match segments.as_slice() {
        // Four names, unless they read as another API path (a project named `projects` needs its path).
        [project, composite_app, version, dig] if !matches!(*project, "projects" | "cluster-providers") => {
            vec![project, composite_app, version, dig]
        }
        [
            "projects",
            project,
            "composite-apps",
            composite_app,
            version,
            "deployment-intent-groups",
            dig,
            rest @ ..,
        ] if rest.is_empty()
            || matches!(
                rest,
                ["update" | "rollback" | "resume" | "migrate" | "status" | "history"]
            ) =>
        {
            vec![project, composite_app, version, dig]
        }
        _ => return Err(not_a_dig()),
    };
    if names
        .iter()
        .any(|name| name.is_empty() || name.contains(['?', '#', '%', ' ']) || *name == "." || *name == "..")
    {
        return Err(not_a_dig());
    }
    Ok(format!(
        "/v2/projects/{}/composite-apps/{}/{}/deployment-intent-groups/{}",
        names[0], names[1], names[2], names[3]
    ))
}

/// `emcoctl update DIG`: POSTs the DIG's `/update` (a new revision from its intents as they are now).
pub async fn update_dig(client: &EmcoClient, dig: &str, out: &mut impl Write) -> Result<bool, CommandError> {
    let path = format!("{}/update", dig_path(dig)?);
    let reply = client.send("POST", &path, false, Body::Empty).await?;
    print(out, "POST", &client.url(&path), &reply)?;
    Ok(reply.is_success())
}

/// `emcoctl migrate DIG --target-version V --target-dig NAME`: POSTs the DIG's `/migrate` to the DIG `NAME` of
/// its composite app at version `V` (which must be Approved).
pub async fn migrate_dig(
    client: &EmcoClient,
    dig: &str,
    target_version: &str,
    target_dig: &str,
    out: &mut impl Write,
) -> Result<bool, CommandError> {
    let path = format!("{}/migrate", dig_path(dig)?);
    let body = serde_json::json!({"metadata": {"description": ""},
        "spec": {"targetCompositeAppVersion": target_version, "targetDeploymentIntentGroup": target_dig}});
    let reply = client.send("POST", &path, false, Body::Json(body)).await?;
    print(out, "POST", &client.url(&path), &reply)?;
    Ok(reply.is_success())
}

/// `emcoctl resume DIG`: POSTs the DIG's `/resume` (its progressive rollout, paused past its failure
/// threshold, goes on with the next batch).
pub async fn resume_dig(client: &EmcoClient, dig: &str, out: &mut impl Write) -> Result<bool, CommandError> {
    let path = format!("{}/resume", dig_path(dig)?);
    let reply = client.send("POST", &path, false, Body::Empty).await?;
    print(out, "POST", &client.url(&path), &reply)?;
    Ok(reply.is_success())
}

/// `emcoctl rollback DIG --revision N`: POSTs the DIG's `/rollback` to revision `revision`.
pub async fn rollback_dig(
    client: &EmcoClient,
    dig: &str,
    revision: u64,
    out: &mut impl Write,
) -> Result<bool, CommandError> {
    let path = format!("{}/rollback", dig_path(dig)?);
    let body =
        serde_json::json!({"metadata": {"description": ""}, "spec": {"revision": revision.to_string()}});
    let reply = client.send("POST", &path, false, Body::Json(body)).await?;
    print(out, "POST", &client.url(&path), &reply)?;
    Ok(reply.is_success())
}

/// One revision of a DIG: an instantiation (1) or an update or rollback (2, 3, …) of its current or an earlier
/// instantiation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The revision.
    pub revision: u64,
    /// `Instantiate`, `Update`, or what emco noted made it: `Rollback to revision 1`, `Migrated from v1/dig1`.
    pub operation: String,
    /// When it was asked for.
    pub time: String,
    /// Its context.
    pub context: String,
    /// How its context stands: `Instantiated`, `Updated` (a later revision took over), `InstantiateFailed`, …
    pub outcome: String,
    /// What took over from it, when emco noted it (`migrated to v2/dig2`).
    pub ended_by: Option<String>,
}

/// The revisions of a DIG's state actions (`state.Actions` of a status answer), oldest first, without outcomes;
/// none when the actions cannot be read. The revisions are emco's (`emco_model::lifecycle::revisions`).
#[must_use]
pub fn revisions_of(actions: &Json) -> Vec<Revision> {
    let Ok(actions) = serde_json::from_value::<Vec<emco_model::Action>>(actions.clone()) else {
        return Vec::new();
    };
    let numbers = emco_model::lifecycle::revisions(&actions);
    actions
        .iter()
        .enumerate()
        .filter(|(_, action)| action.state == emco_model::StateValue::Instantiated)
        .map(|(index, action)| {
            let updated = index > 0 && actions[index - 1].state == emco_model::StateValue::Updated;
            let operation = match &action.note {
                Some(note) => capitalized(note),
                None if updated => "Update".to_string(),
                None => "Instantiate".to_string(),
            };
            // The action that ended this revision, if it says what: an `Updated` naming this context.
            let ended_by = actions[index + 1..]
                .iter()
                .find(|later| {
                    later.state == emco_model::StateValue::Updated && later.context_id == action.context_id
                })
                .and_then(|later| later.note.clone())
                .filter(|note| note.starts_with("migrated"));
            Revision {
                revision: numbers[index],
                operation,
                time: action.timestamp.clone(),
                context: action.context_id.map(|id| id.to_string()).unwrap_or_default(),
                outcome: String::new(),
                ended_by,
            }
        })
        .collect()
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `emcoctl history DIG`: a table of the DIG's revisions (the latest [`MAX_HISTORY_REVISIONS`]), each with its
/// time, context and the status of that context.
pub async fn history(client: &EmcoClient, dig: &str, out: &mut impl Write) -> Result<bool, CommandError> {
    let dig = dig_path(dig)?;
    let answer = crate::status::query(client, &dig, "output=summary").await?;
    let mut revisions = revisions_of(&answer["state"]["Actions"]);
    let skip = revisions.len().saturating_sub(MAX_HISTORY_REVISIONS);
    let mut revisions = revisions.split_off(skip);
    for revision in &mut revisions {
        revision.outcome = match crate::status::query(
            client,
            &dig,
            &format!("output=summary&instance={}", revision.context),
        )
        .await
        {
            Ok(answer) => answer["status"].as_str().unwrap_or("-").to_string(),
            Err(_) => "-".to_string(),
        };
        if let Some(ended_by) = &revision.ended_by {
            revision.outcome = format!("{} ({ended_by})", revision.outcome);
        }
    }
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(["REVISION", "OPERATION", "TIME", "CONTEXT", "OUTCOME"]);
    for revision in &revisions {
        table.add_row([
            revision.revision.to_string(),
            revision.operation.clone(),
            revision.time.clone(),
            revision.context.clone(),
            revision.outcome.clone(),
        ]);
    }
    writeln!(out, "{table}")?;
    Ok(true)
}

/// The lifecycle segment an anchor ends with, if it is a lifecycle anchor.
fn lifecycle(anchor: &str) -> Option<&str> {
    let last = anchor.rsplit('/').next().unwrap_or_default();
    [
        "approve",
        "instantiate",
        "terminate",
        "apply",
        "migrate",
        "update",
        "rollback",
        "stop",
        "status",
    ]
    .contains(&last)
    .then_some(last)
}

/// `anchor/<name>`: labels by their label, composite apps with their version.
fn item_path(document: &Document) -> String {
    let anchor = &document.anchor;
    let last = anchor.rsplit('/').next().unwrap_or_default();
    let name = match (last, &document.cluster_label) {
        ("labels", Some(label)) => Some(label.as_str()),
        _ => document.name(),
    };
    match (name, last, document.spec["compositeAppVersion"].as_str()) {
        (Some(name), "composite-apps", Some(version)) => format!("/v2/{anchor}/{name}/{version}"),
        (Some(name), _, _) => format!("/v2/{anchor}/{name}"),
        (None, _, _) => format!("/v2/{anchor}"),
    }
}

/// GETs under these collections ask for JSON (their default answer is multipart).
fn wants_json(anchor: &str) -> bool {
    let last = anchor.rsplit('/').next().unwrap_or_default();
    ["apps", "profiles", "clusters", "resources", "customizations"].contains(&last)
}

/// A file part's content: the file, or a directory packed as `.tgz` (a chart directory — one with `Chart.yaml` —
/// under its own name, as `helm package` does; any other directory, such as a profile, at the archive's root).
fn read_part(index: usize, path: &Path) -> Result<(String, Vec<u8>), CommandError> {
    let error = |source: std::io::Error| CommandError::File {
        index,
        path: path.display().to_string(),
        source,
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !path.is_dir() {
        return Ok((file_name, std::fs::read(path).map_err(error)?));
    }
    let prefix = if path.join("Chart.yaml").is_file() {
        format!("{file_name}/")
    } else {
        String::new()
    };
    Ok((
        format!("{file_name}.tgz"),
        emco_helm::archive::pack_dir(path, &prefix).map_err(error)?,
    ))
}

fn body_of(document: &Document) -> Result<Body, CommandError> {
    if document.files.is_empty() {
        let body = document.body();
        return Ok(if body.as_object().is_some_and(serde_json::Map::is_empty) {
            Body::Empty
        } else {
            Body::Json(body)
        });
    }
    let part = if document.many_files { "files" } else { "file" };
    let files = document
        .files
        .iter()
        .map(|path| read_part(document.index, path).map(|(name, content)| (part.to_string(), name, content)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Body::Multipart {
        metadata: document.body(),
        files,
    })
}

fn print(out: &mut impl Write, method: &str, url: &str, reply: &Reply) -> std::io::Result<()> {
    writeln!(out, "{method}  --> URL: {url}")?;
    writeln!(out, "Response Code: {}", reply.status)?;
    let text = reply.text();
    match serde_json::from_str::<Json>(&text) {
        Ok(json) => writeln!(
            out,
            "Response: {}",
            serde_json::to_string_pretty(&json).unwrap_or(text)
        )?,
        Err(_) => writeln!(out, "Response: {}", text.trim_end())?,
    }
    Ok(())
}

/// Runs `verb` over the documents; `Ok(true)` when every request succeeded.
pub async fn run(
    client: &EmcoClient,
    verb: Verb,
    documents: &[Document],
    options: &Options,
    out: &mut impl Write,
) -> Result<bool, CommandError> {
    let mut all_ok = true;
    let ordered: Vec<&Document> = match verb {
        Verb::Delete => documents.iter().rev().collect(),
        _ => documents.iter().collect(),
    };
    for document in ordered {
        let anchor = &document.anchor;
        let (method, path, body, accept_json) = match (verb, lifecycle(anchor)) {
            (Verb::Apply, _) => ("POST", format!("/v2/{anchor}"), body_of(document)?, false),
            (Verb::Get | Verb::Update, Some(_)) => continue,
            (Verb::Get, None) => ("GET", item_path(document), Body::Empty, wants_json(anchor)),
            (Verb::Update, None) => ("PUT", item_path(document), body_of(document)?, false),
            (Verb::Delete, Some("instantiate" | "apply")) => {
                let parent = anchor.rsplit_once('/').map_or("", |(parent, _)| parent);
                ("POST", format!("/v2/{parent}/terminate"), Body::Empty, false)
            }
            (Verb::Delete, Some(_)) => continue,
            (Verb::Delete, None) => ("DELETE", item_path(document), Body::Empty, false),
        };
        if let Some(progress) = &options.progress {
            progress.set_message(format!("{method} {path}"));
        }
        let reply = client.send(method, &path, accept_json, body).await?;
        match &options.progress {
            Some(progress) => {
                progress.suspend(|| print(out, method, &client.url(&path), &reply))?;
                progress.inc(1);
            }
            None => print(out, method, &client.url(&path), &reply)?,
        }
        if !reply.is_success() {
            all_ok = false;
            if options.stop_on_failure {
                break;
            }
        } else if reply.status == 202 && !options.wait_after_accepted.is_zero() {
            tokio::time::sleep(options.wait_after_accepted).await;
        }
    }
    Ok(all_ok)
}

/// `apply|get|delete <anchor>` without a file: one request to the anchor (an empty POST for lifecycle anchors).
pub async fn run_anchor(
    client: &EmcoClient,
    verb: Verb,
    anchor: &str,
    out: &mut impl Write,
) -> Result<bool, CommandError> {
    let anchor = anchor.trim_matches('/');
    let anchor = anchor.strip_prefix("v2/").unwrap_or(anchor);
    let method = match verb {
        Verb::Apply => "POST",
        Verb::Get => "GET",
        Verb::Update => "PUT",
        Verb::Delete => "DELETE",
    };
    let path = format!("/v2/{anchor}");
    let accept_json = verb == Verb::Get && wants_json(anchor.split('?').next().unwrap_or(anchor));
    let reply = client.send(method, &path, accept_json, Body::Empty).await?;
    print(out, method, &client.url(&path), &reply)?;
    Ok(reply.is_success())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document(anchor: &str, metadata: Json, spec: Json, label: Option<&str>) -> Document {
        Document {
            index: 1,
            anchor: anchor.into(),
            metadata,
            spec,
            cluster_label: label.map(Into::into),
            files: Vec::new(),
            many_files: false,
        }
    }

    #[test]
    fn items_are_addressed_as_emcoctl_does() {
        let ca = document(
            "projects/p/composite-apps",
            json!({"name": "vfw"}),
            json!({"compositeAppVersion": "v1"}),
            None,
        );
        assert_eq!(item_path(&ca), "/v2/projects/p/composite-apps/vfw/v1");
        let label = document(
            "cluster-providers/cp/clusters/c1/labels",
            Json::Null,
            Json::Null,
            Some("edge"),
        );
        assert_eq!(
            item_path(&label),
            "/v2/cluster-providers/cp/clusters/c1/labels/edge"
        );
        let project = document("projects", json!({"name": "p"}), Json::Null, None);
        assert_eq!(item_path(&project), "/v2/projects/p");
        assert_eq!(
            lifecycle("projects/p/composite-apps/ca/v1/deployment-intent-groups/d/instantiate"),
            Some("instantiate")
        );
        assert_eq!(lifecycle("projects/p/composite-apps"), None);
        assert!(wants_json("projects/p/composite-apps/ca/v1/apps"));
        assert!(!wants_json("projects"));
    }

    #[test]
    fn a_dig_is_named_by_its_url_path_or_names() {
        let expected = "/v2/projects/p/composite-apps/ca/v1/deployment-intent-groups/d";
        for spec in [
            "p/ca/v1/d",
            "projects/p/composite-apps/ca/v1/deployment-intent-groups/d",
            "/v2/projects/p/composite-apps/ca/v1/deployment-intent-groups/d/",
            "http://emco:9015/v2/projects/p/composite-apps/ca/v1/deployment-intent-groups/d/update",
            "v2/projects/p/composite-apps/ca/v1/deployment-intent-groups/d/status",
        ] {
            assert_eq!(dig_path(spec).unwrap(), expected, "{spec}");
        }
        for bad in [
            "",
            "p/ca/v1",
            "projects/p/logical-clouds/lc",
            "projects/p/composite-apps/ca/v1/deployment-intent-groups/d/apps",
            "p/ca/v1/d?x",
            "p/../v1/d",
        ] {
            let err = dig_path(bad).unwrap_err();
            assert!(
                err.to_string()
                    .contains("does not name a deployment intent group"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn revisions_count_up_with_updates_and_restart_with_an_instantiation() {
        let action = |state: &str, context: &str, time: &str| json!({"State": state, "ContextId": context, "TimeStamp": time});
        let actions = json!([
            action("Created", "", "t0"),
            action("Approved", "", "t1"),
            action("Instantiated", "1", "t2"),
            action("Updated", "1", "t3"),
            action("Instantiated", "2", "t3"),
            action("Updated", "2", "t4"),
            action("Instantiated", "3", "t4"),
            action("Terminated", "3", "t5"),
            action("Instantiated", "4", "t6"),
        ]);
        let revisions = revisions_of(&actions);
        let summary: Vec<(u64, &str, &str)> = revisions
            .iter()
            .map(|r| (r.revision, r.operation.as_str(), r.context.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                (1, "Instantiate", "1"),
                (2, "Update", "2"),
                (3, "Update", "3"),
                (1, "Instantiate", "4")
            ]
        );
        assert_eq!(revisions[1].time, "t3");
        assert!(revisions_of(&Json::Null).is_empty());
        let noted = |state: &str, context: &str, note: &str| json!({"State": state, "ContextId": context, "TimeStamp": "t", "Note": note});
        let actions = json!([
            action("Instantiated", "1", "t0"),
            action("Updated", "1", "t1"),
            action("Instantiated", "2", "t1"),
            noted("Updated", "2", "rollback to revision 1"),
            noted("Instantiated", "3", "rollback to revision 1"),
            noted("Updated", "3", "migrated to v2/dig2"),
        ]);
        let revisions = revisions_of(&actions);
        let labels: Vec<(&str, Option<&str>)> = revisions
            .iter()
            .map(|r| (r.operation.as_str(), r.ended_by.as_deref()))
            .collect();
        assert_eq!(
            labels,
            [
                ("Instantiate", None),
                ("Update", None),
                ("Rollback to revision 1", Some("migrated to v2/dig2"))
            ]
        );
    }
}
