//! Status as a person reads it: one row per resource (and per object the cluster made, such as pods) with what
//! rsync did, what is in the cluster and whether it is ready, built from the three status answers (`type=rsync`,
//! `type=cluster`, `status=ready`), plus a one-line summary. It reads the status of every resource with a
//! lifecycle alike: a deployment intent group, a cluster's network intents
//! (`cluster-providers/{p}/clusters/{c}`) and a logical cloud (`projects/{p}/logical-clouds/{lc}`); the EMCO 22.x
//! shapes of the last two (one `cluster`, lifted `clusters`) are read as the app they stand for.
//! A cluster emco no longer hears from (its monitor stopped, the cluster dropped off) is answered as stale: its
//! IN CLUSTER and READY cells read `Unknown` and the summary line names it, with why.
//! Under the summary line, one line per (app, cluster) that is not ready or not propagated says why (the first
//! not-ready resource's condition message, the cluster's `propagation`); stale clusters are named apart, as stale.
//! The readiness answer asks for the state object (`readiness`), whose message ends the summary line when the
//! resource is not ready.
//! When any resource carries a `statusRemote` (the value a status config rolls up, issue #16 §4), the table gains a
//! REMOTE column with it. On a terminal, the CLUSTER cells of stale clusters are shown in their own colour.
//!
//! [`watch`] follows the three answers as server-sent event streams (`Accept: text/event-stream`; the server sends
//! an answer when it changed, at most one per its watch interval) instead of asking again and again: on a terminal
//! it redraws the table in place under a progress line (`412/1000 clusters ready`), piped it prints one line per
//! change; with `until` it ends when the state is reached, or early on a failure state.

use std::io::Write;
use std::time::Duration;

use serde_json::Value as Json;
use tokio::sync::mpsc;

use crate::client::{Body, ClientError, EmcoClient};
use crate::sse::{EventReader, SseError};

/// Why the status could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// No answer.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// An answer other than 200.
    #[error("GET {url} answered {status}: {body}")]
    Refused {
        /// The URL.
        url: String,
        /// The code.
        status: u16,
        /// The API's message (the body when it is not the API's error JSON).
        body: String,
    },
    /// The event stream failed.
    #[error("GET {url}: {source}")]
    Stream {
        /// The URL.
        url: String,
        /// Why.
        source: SseError,
    },
    /// The stream said the status can no longer be answered (the resource was deleted, the store failed).
    #[error("GET {url} (stream) ended: {message}")]
    StreamEnded {
        /// The URL.
        url: String,
        /// The server's message.
        message: String,
    },
    /// The output could not be written.
    #[error("cannot write the status: {0}")]
    Output(#[from] std::io::Error),
    /// A 200 whose body is not JSON.
    #[error("GET {url}: the answer is not JSON: {message}")]
    NotJson {
        /// The URL.
        url: String,
        /// The parser's message.
        message: String,
    },
}

/// A status anchor (`…/deployment-intent-groups/{dig}`, `cluster-providers/{p}/clusters/{c}`,
/// `projects/{p}/logical-clouds/{lc}`) as a `/v2` path, whether given with `/v2/`, `v2/` or neither, with or
/// without `/status`.
#[must_use]
pub fn dig_path(dig: &str) -> String {
    let dig = dig.trim_matches('/');
    let dig = dig.strip_prefix("v2/").unwrap_or(dig);
    let dig = dig.strip_suffix("/status").unwrap_or(dig);
    format!("/v2/{dig}")
}

/// GETs `{dig}/status?{query}` and returns the JSON answer.
pub async fn query(client: &EmcoClient, dig: &str, query: &str) -> Result<Json, StatusError> {
    get_json(client, &format!("{}/status", dig_path(dig)), query).await
}

/// GETs `path[?query]` and returns its JSON answer; another status than 200 is `Refused` with the API's message.
pub async fn get_json(client: &EmcoClient, path: &str, query: &str) -> Result<Json, StatusError> {
    let path = if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    };
    let reply = client.send("GET", &path, true, Body::Empty).await?;
    let url = client.url(&path);
    if reply.status != 200 {
        return Err(StatusError::Refused {
            url,
            status: reply.status,
            body: api_message(&reply),
        });
    }
    serde_json::from_slice(&reply.body).map_err(|err| StatusError::NotJson {
        url,
        message: err.to_string(),
    })
}

/// The `message` of the API's error JSON (`{"code","message"}`), else the body as text.
fn api_message(reply: &crate::client::Reply) -> String {
    serde_json::from_slice::<Json>(&reply.body)
        .ok()
        .and_then(|json| json.get("message").and_then(Json::as_str).map(str::to_string))
        .unwrap_or_else(|| reply.text())
}

/// The three answers a table is made of, each narrowed by `filters` (`app=…&cluster=…`, may be empty).
pub async fn fetch(client: &EmcoClient, dig: &str, filters: &str) -> Result<Answers, StatusError> {
    let with = |base: &str| match (base.is_empty(), filters.is_empty()) {
        (_, true) => base.to_string(),
        (true, false) => filters.to_string(),
        (false, false) => format!("{base}&{filters}"),
    };
    // `type=rsync` rather than no parameter: a logical cloud answers `status=ready` by default.
    Ok(Answers {
        rsync: query(client, dig, &with("type=rsync")).await?,
        cluster: query(client, dig, &with("type=cluster")).await?,
        ready: query(client, dig, &with("status=ready&readiness")).await?,
    })
}

/// The status answers a table is made of.
#[derive(Debug, Clone)]
pub struct Answers {
    /// The default answer (`type=rsync`): context status and rsync status per resource.
    pub rsync: Json,
    /// `type=cluster`: presence per resource, cluster-only objects.
    pub cluster: Json,
    /// `status=ready&readiness`: readiness per resource, with conditions, propagation and the state object.
    pub ready: Json,
}

/// One row: app, cluster, kind, name, rsync status, in-cluster status, readiness (`-` where an answer has none).
pub type Row = [String; 7];

/// The column titles.
pub const HEADER: [&str; 7] = ["APP", "CLUSTER", "KIND", "NAME", "RSYNC", "IN CLUSTER", "READY"];

/// The rows: grouped by app (in the composite app's order) and cluster; within a group the placed resources first,
/// then what the cluster made from them, as the answers list them.
#[must_use]
pub fn rows(answers: &Answers) -> Vec<Row> {
    let key = |app: &Json, cluster: &Json, resource: &Json| -> [String; 4] {
        [
            app["name"].as_str().unwrap_or_default().to_string(),
            cluster["cluster"].as_str().unwrap_or_default().to_string(),
            resource["GVK"]["Kind"].as_str().unwrap_or_default().to_string(),
            resource["name"].as_str().unwrap_or_default().to_string(),
        ]
    };
    let mut rows: Vec<Row> = Vec::new();
    for (answer, column, field) in [
        (&answers.rsync, 4, "rsync-status"),
        (&answers.cluster, 5, "cluster-status"),
        (&answers.ready, 6, "readyStatus"),
    ] {
        for app in apps_of(answer).iter() {
            for cluster in app["clusters"].as_array().into_iter().flatten() {
                for resource in cluster["resources"].as_array().into_iter().flatten() {
                    let [a, c, k, n] = key(app, cluster, resource);
                    let index = match rows
                        .iter()
                        .position(|row| row[..4] == [a.clone(), c.clone(), k.clone(), n.clone()])
                    {
                        Some(index) => index,
                        None => {
                            rows.push([a, c, k, n, "-".into(), "-".into(), "-".into()]);
                            rows.len() - 1
                        }
                    };
                    rows[index][column] = resource[field].as_str().unwrap_or("-").to_string();
                }
            }
        }
    }
    let mut app_order: Vec<String> = Vec::new();
    for row in &rows {
        if !app_order.contains(&row[0]) {
            app_order.push(row[0].clone());
        }
    }
    rows.sort_by_key(|row| (app_order.iter().position(|app| *app == row[0]), row[1].clone()));
    rows
}

/// The apps of an answer: its `apps`, or, in EMCO 22.x's shapes without them, the one app a network-intents
/// answer's `cluster` or a logical cloud's lifted `clusters` stand for.
fn apps_of(answer: &Json) -> Vec<Json> {
    if let Some(apps) = answer["apps"].as_array() {
        return apps.clone();
    }
    if let Some(clusters) = answer["clusters"].as_array() {
        return vec![serde_json::json!({"name": "logical-cloud", "clusters": clusters})];
    }
    match answer["cluster"].as_object() {
        Some(cluster) if !cluster.is_empty() => {
            vec![serde_json::json!({"name": "network-intents", "clusters": [cluster]})]
        }
        _ => Vec::new(),
    }
}

/// The colour of a status word on a terminal: green for done and well, red for failed or missing, yellow for on its
/// way or unknown.
fn colour(word: &str) -> Option<comfy_table::Color> {
    match word {
        "Applied" | "Present" | "Ready" | "Instantiated" | "Deleted" | "Terminated" | "Available" => {
            Some(comfy_table::Color::Green)
        }
        "Failed" | "NotPresent" | "NotReady" | "InstantiateFailed" | "TerminateFailed" => {
            Some(comfy_table::Color::Red)
        }
        "Pending" | "Retrying" | "Unknown" | "Instantiating" | "Terminating" => {
            Some(comfy_table::Color::Yellow)
        }
        _ => None,
    }
}

/// The rows as a table; on a terminal the status columns are coloured (piped output stays plain text).
#[must_use]
pub fn table(rows: &[Row]) -> comfy_table::Table {
    table_with(rows, None, &[])
}

/// The longest REMOTE cell, in characters (longer values end in `…`).
pub const MAX_REMOTE_CELL_CHARS: usize = 40;

/// A `statusRemote` value as a cell: a string as is, anything else as JSON, cut to [`MAX_REMOTE_CELL_CHARS`].
fn remote_text(value: &Json) -> String {
    let text = match value {
        Json::String(text) => text.clone(),
        other => other.to_string(),
    };
    if text.chars().count() <= MAX_REMOTE_CELL_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_REMOTE_CELL_CHARS - 1).collect();
    format!("{cut}…")
}

/// The REMOTE column of `rows`: each row's `statusRemote` from the readiness answer (`-` where it has none), or
/// `None` when no resource has one (the table then has no such column).
#[must_use]
pub fn remote_column(answers: &Answers, rows: &[Row]) -> Option<Vec<String>> {
    let mut values: Vec<([String; 4], String)> = Vec::new();
    for app in apps_of(&answers.ready) {
        for cluster in app["clusters"].as_array().into_iter().flatten() {
            for resource in cluster["resources"].as_array().into_iter().flatten() {
                if let Some(remote) = resource.get("statusRemote") {
                    let key = [
                        app["name"].as_str().unwrap_or_default().to_string(),
                        cluster["cluster"].as_str().unwrap_or_default().to_string(),
                        resource["GVK"]["Kind"].as_str().unwrap_or_default().to_string(),
                        resource["name"].as_str().unwrap_or_default().to_string(),
                    ];
                    values.push((key, remote_text(remote)));
                }
            }
        }
    }
    if values.is_empty() {
        return None;
    }
    Some(
        rows.iter()
            .map(|row| {
                values
                    .iter()
                    .find(|(key, _)| row[..4] == key[..])
                    .map_or_else(|| "-".to_string(), |(_, text)| text.clone())
            })
            .collect(),
    )
}

/// The colour of a CLUSTER cell on a terminal: stale clusters (emco no longer believes their reports) stand out in
/// magenta; fresh ones keep the terminal's colour.
#[must_use]
pub fn cluster_colour(cluster: &str, stale: &[(String, String)]) -> Option<comfy_table::Color> {
    stale
        .iter()
        .any(|(name, _)| name == cluster)
        .then_some(comfy_table::Color::Magenta)
}

/// The table of `answers`: the rows, a REMOTE column when any resource has a `statusRemote`, and stale clusters in
/// their own colour (on a terminal only, as every colour).
#[must_use]
pub fn view(answers: &Answers) -> comfy_table::Table {
    let rows = rows(answers);
    let remote = remote_column(answers, &rows);
    table_with(&rows, remote.as_deref(), &stale_clusters(answers))
}

/// The rows as a table with an optional REMOTE column (one cell per row) and the stale clusters marked.
fn table_with(rows: &[Row], remote: Option<&[String]>, stale: &[(String, String)]) -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    let mut header: Vec<&str> = HEADER.to_vec();
    if remote.is_some() {
        header.push("REMOTE");
    }
    table.set_header(header);
    for (index, row) in rows.iter().enumerate() {
        let mut cells: Vec<comfy_table::Cell> = row
            .iter()
            .enumerate()
            .map(|(column, text)| {
                let cell = comfy_table::Cell::new(text);
                let colour = match column {
                    1 => cluster_colour(text, stale),
                    4.. => colour(text),
                    _ => None,
                };
                match colour {
                    Some(colour) => cell.fg(colour),
                    None => cell,
                }
            })
            .collect();
        if let Some(remote) = remote {
            cells.push(comfy_table::Cell::new(
                remote.get(index).map_or("-", String::as_str),
            ));
        }
        table.add_row(cells);
    }
    table
}

/// `{"Applied": 12}` as `Applied 12`, `-` when empty.
#[must_use]
pub fn counts_text(counts: &Json) -> String {
    match counts.as_object() {
        Some(map) if !map.is_empty() => map
            .iter()
            .map(|(state, n)| format!("{state} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "-".to_string(),
    }
}

/// The clusters the readiness answer calls stale (`statusFresh: false`), each once, in answer order, with its
/// `statusMessage`.
#[must_use]
pub fn stale_clusters(answers: &Answers) -> Vec<(String, String)> {
    let mut stale: Vec<(String, String)> = Vec::new();
    for app in apps_of(&answers.ready) {
        for cluster in app["clusters"].as_array().into_iter().flatten() {
            if cluster["statusFresh"] != false {
                continue;
            }
            let name = cluster["cluster"].as_str().unwrap_or("?").to_string();
            if stale.iter().any(|(known, _)| *known == name) {
                continue;
            }
            let message = cluster["statusMessage"]
                .as_str()
                .unwrap_or("no recent report")
                .to_string();
            stale.push((name, message));
        }
    }
    stale
}

/// One line: the context's status, the resources' rsync counts and the readiness counts, where a progressive
/// rollout stands (with its failed clusters) and the stale clusters if any.
#[must_use]
pub fn summary_line(answers: &Answers) -> String {
    let mut line = format!(
        "{}: {} · resources: {} · ready: {} ({})",
        answers.rsync["name"].as_str().unwrap_or("?"),
        answers.rsync["status"].as_str().unwrap_or("?"),
        counts_text(&answers.rsync["rsync-status"]),
        answers.ready["readyStatus"].as_str().unwrap_or("?"),
        counts_text(&answers.ready["readyCounts"]),
    );
    if let Some(rollout) = answers.rsync["rollout"]["summary"].as_str() {
        line.push_str(&format!(" · rollout: {rollout}"));
        if let Some(failed) = answers.rsync["rollout"]["failed"].as_array()
            && !failed.is_empty()
        {
            let names: Vec<&str> = failed.iter().filter_map(Json::as_str).collect();
            line.push_str(&format!(" ({})", names.join(", ")));
        }
    }
    let stale = stale_clusters(answers);
    if !stale.is_empty() {
        let named: Vec<String> = stale
            .iter()
            .map(|(cluster, message)| format!("{cluster} ({message})"))
            .collect();
        line.push_str(&format!(" · stale: {}", named.join(", ")));
    }
    if answers.ready["readiness"]["ready"] == false
        && let Some(message) = answers.ready["readiness"]["message"].as_str()
    {
        line.push_str(&format!(" · not ready: {message}"));
    }
    for cluster in cluster_lines(answers) {
        line.push_str("\n  ");
        line.push_str(&cluster);
    }
    line
}

/// One line per (app, cluster) of the readiness answer that is fresh but not propagated, waited on or not ready:
/// `web on edge02: CreationFailed`, `web on edge02: waiting for pre-install hook Pod/migrate to complete (since …,
/// fails at …)` and/or `web on edge02: not ready: Pod web-x: … (and 2 more)`. Stale clusters
/// are left to the summary's `stale:` (their resources' conditions are not shown). Pairs with the same reason
/// share a line, the first named, the rest counted: `web on edge0001: waiting for rsync to apply it (…) (and 999
/// more (app, cluster) pairs alike)` — an instantiation's queue at 1,000 clusters is one line, not a thousand.
#[must_use]
pub fn cluster_lines(answers: &Answers) -> Vec<String> {
    // (the first pair's line, how many more pairs share its reason), in the order the reasons first appear.
    let mut lines: Vec<(String, usize)> = Vec::new();
    let mut by_reason: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for app in apps_of(&answers.ready) {
        let app_name = app["name"].as_str().unwrap_or("?");
        for cluster in app["clusters"].as_array().into_iter().flatten() {
            if cluster["statusFresh"] == false {
                continue;
            }
            let cluster_name = cluster["cluster"].as_str().unwrap_or("?");
            let mut why: Vec<String> = Vec::new();
            if let Some(propagation) = cluster["propagation"].as_str() {
                why.push(propagation.to_string());
            }
            if let Some(waiting) = cluster["waiting"]["for"].as_str() {
                let since = cluster["waiting"]["since"].as_str().unwrap_or("?");
                let until = match (
                    cluster["waiting"]["until"].as_str(),
                    cluster["waiting"]["then"].as_str(),
                ) {
                    (Some(until), Some(then)) => format!(", {then} at {until}"),
                    (Some(until), None) => format!(", until {until}"),
                    _ => String::new(),
                };
                why.push(format!("waiting for {waiting} (since {since}{until})"));
            }
            let not_ready: Vec<&str> = cluster["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|resource| resource["conditions"].as_array().into_iter().flatten())
                .filter(|condition| condition["type"] == "Ready" && condition["status"] == "False")
                .filter_map(|condition| condition["message"].as_str())
                .collect();
            if let Some(first) = not_ready.first() {
                let more = match not_ready.len() - 1 {
                    0 => String::new(),
                    more => format!(" (and {more} more)"),
                };
                why.push(format!("not ready: {first}{more}"));
            }
            if why.is_empty() {
                continue;
            }
            let reason = why.join("; ");
            match by_reason.get(&reason) {
                Some(&line) => lines[line].1 += 1,
                None => {
                    by_reason.insert(reason.clone(), lines.len());
                    lines.push((format!("{app_name} on {cluster_name}: {reason}"), 0));
                }
            }
        }
    }
    lines
        .into_iter()
        .map(|(line, more)| match more {
            0 => line,
            1 => format!("{line} (and 1 more (app, cluster) pair alike)"),
            more => format!("{line} (and {more} more (app, cluster) pairs alike)"),
        })
        .collect()
}

/// Whether the answers have reached `state`: the context's status (Instantiated, Terminated, …) or the readiness
/// (Ready, NotReady).
#[must_use]
pub fn reached(answers: &Answers, state: &str) -> bool {
    answers.rsync["status"] == state || answers.ready["readyStatus"] == state
}

/// `(ready, total)` clusters of the readiness answer: a cluster is ready when it is fresh and every resource of
/// every app on it is `Ready`.
#[must_use]
pub fn ready_clusters(answers: &Answers) -> (usize, usize) {
    let mut clusters: Vec<(String, bool)> = Vec::new();
    for app in apps_of(&answers.ready) {
        for cluster in app["clusters"].as_array().into_iter().flatten() {
            let name = cluster["cluster"].as_str().unwrap_or("?").to_string();
            let ready = cluster["statusFresh"] != false
                && cluster["resources"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .all(|resource| resource["readyStatus"] == "Ready");
            match clusters.iter_mut().find(|(known, _)| *known == name) {
                Some((_, all_ready)) => *all_ready &= ready,
                None => clusters.push((name, ready)),
            }
        }
    }
    (
        clusters.iter().filter(|(_, ready)| *ready).count(),
        clusters.len(),
    )
}

/// The progress line: `412/1000 clusters ready`.
#[must_use]
pub fn progress_line(answers: &Answers) -> String {
    let (ready, total) = ready_clusters(answers);
    format!("{ready}/{total} clusters ready")
}

/// Whether the answers reached `until`: `ready` (every resource ready), `instantiated`, `terminated` (the
/// context's status), case aside; any other word as [`reached`] reads it (a context status or a readiness).
#[must_use]
pub fn until_reached(answers: &Answers, until: &str) -> bool {
    match until.to_ascii_lowercase().as_str() {
        "ready" => answers.ready["readyStatus"] == "Ready" || answers.ready["readiness"]["ready"] == true,
        "instantiated" => answers.rsync["status"] == "Instantiated",
        "terminated" => answers.rsync["status"] == "Terminated",
        _ => reached(answers, until),
    }
}

/// The failure state that keeps `until` from being reached, if any: the context's status ending in `Failed`
/// (`InstantiateFailed`, `TerminateFailed`, …), or, waiting for `ready`, a readiness failed (a pod that crashes).
#[must_use]
pub fn failure(answers: &Answers, until: &str) -> Option<String> {
    if let Some(status) = answers.rsync["status"].as_str()
        && status.ends_with("Failed")
    {
        return Some(format!(
            "{}: {status}",
            answers.rsync["name"].as_str().unwrap_or("?")
        ));
    }
    if !until.eq_ignore_ascii_case("ready") {
        return None;
    }
    let failed = answers.ready["readiness"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|condition| condition["type"] == "Ready" && condition["reason"] == "Failed")?;
    Some(format!(
        "not ready: {}",
        failed["message"]
            .as_str()
            .or_else(|| answers.ready["readiness"]["message"].as_str())
            .unwrap_or("Failed")
    ))
}

/// How `status --watch` behaves.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Stop once this is reached (see [`until_reached`]); `None`: watch until the timeout.
    pub until: Option<String>,
    /// Give up after this long.
    pub timeout: Duration,
    /// Redraw in place (a terminal); else one line per change.
    pub terminal: bool,
}

/// How a watch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEnd {
    /// `until` was reached.
    Reached,
    /// A failure state was reached first (what it is).
    Failed(String),
    /// The timeout passed first.
    TimedOut,
}

/// Which answer a stream carries.
#[derive(Debug, Clone, Copy)]
enum Which {
    Rsync,
    Cluster,
    Ready,
}

/// How long a broken stream waits before it connects again (resuming with `Last-Event-ID`).
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);

/// Follows the status of `dig` (narrowed by `filters`) over three event streams, writing to `out` as
/// [`WatchOptions`] say, until `until` is reached, a failure state is, or the timeout passes.
pub async fn watch(
    client: &EmcoClient,
    dig: &str,
    filters: &str,
    options: &WatchOptions,
    out: &mut (dyn Write + Send),
) -> Result<WatchEnd, StatusError> {
    let deadline = tokio::time::Instant::now() + options.timeout;
    let (sender, mut receiver) = mpsc::channel(16);
    let with = |base: &str| match filters.is_empty() {
        true => base.to_string(),
        false => format!("{base}&{filters}"),
    };
    let mut followers = Vec::new();
    for (which, query) in [
        (Which::Rsync, with("type=rsync")),
        (Which::Cluster, with("type=cluster")),
        (Which::Ready, with("status=ready&readiness")),
    ] {
        let path = format!("{}/status?{query}", dig_path(dig));
        followers.push(tokio::spawn(follow(client.clone(), path, which, sender.clone())));
    }
    drop(sender);
    let ended = async {
        let (mut rsync, mut cluster, mut ready) = (None, None, None);
        let mut shown = String::new();
        loop {
            let Some(update) = tokio::time::timeout_at(deadline, receiver.recv())
                .await
                .ok()
                .flatten()
            else {
                return Ok(WatchEnd::TimedOut);
            };
            let (which, answer) = update?;
            match which {
                Which::Rsync => rsync = Some(answer),
                Which::Cluster => cluster = Some(answer),
                Which::Ready => ready = Some(answer),
            }
            let (Some(r), Some(c), Some(d)) = (&rsync, &cluster, &ready) else {
                continue;
            };
            let answers = Answers {
                rsync: r.clone(),
                cluster: c.clone(),
                ready: d.clone(),
            };
            show(&answers, options.terminal, &mut shown, out)?;
            if let Some(until) = &options.until {
                if until_reached(&answers, until) {
                    return Ok(WatchEnd::Reached);
                }
                if let Some(failure) = failure(&answers, until) {
                    return Ok(WatchEnd::Failed(failure));
                }
            }
        }
    }
    .await;
    for follower in followers {
        follower.abort();
    }
    ended
}

/// Writes the answers if they look different from what was shown: on a terminal the screen redrawn (progress,
/// summary, table), else one line (progress and summary).
fn show(
    answers: &Answers,
    terminal: bool,
    shown: &mut String,
    out: &mut (dyn Write + Send),
) -> Result<(), StatusError> {
    let summary = summary_line(answers);
    let text = if terminal {
        format!("{}\n{summary}\n{}", progress_line(answers), view(answers))
    } else {
        format!(
            "{} · {}",
            progress_line(answers),
            summary.lines().next().unwrap_or_default()
        )
    };
    if text == *shown {
        return Ok(());
    }
    if terminal {
        writeln!(out, "\x1b[H\x1b[2J{text}")?;
    } else {
        writeln!(out, "{text}")?;
    }
    out.flush()?;
    *shown = text;
    Ok(())
}

/// Follows one stream, connecting again after a break (resuming from the last event): sends each answer, or the
/// error that ends the watch (a refusal, an answer that is not JSON, a stream the server ended).
async fn follow(
    client: EmcoClient,
    path: String,
    which: Which,
    sender: mpsc::Sender<Result<(Which, Json), StatusError>>,
) {
    let url = client.url(&path);
    let mut last_id: Option<String> = None;
    let mut connected_once = false;
    loop {
        let reply = match client.stream(&path, last_id.as_deref()).await {
            Ok(reply) => reply,
            Err(err) if !connected_once => {
                let _ = sender.send(Err(err.into())).await;
                return;
            }
            Err(_) => {
                tokio::time::sleep(RECONNECT_PAUSE).await;
                continue;
            }
        };
        if reply.status != 200 {
            let mut events = EventReader::new(reply.body);
            let mut body = String::new();
            // An error answer is one JSON document; read it as one "line" at most.
            if let Ok(Some(text)) = events.remaining_text().await {
                body = text;
            }
            let message = serde_json::from_str::<Json>(&body)
                .ok()
                .and_then(|json| json.get("message").and_then(Json::as_str).map(str::to_string))
                .unwrap_or(body);
            let _ = sender
                .send(Err(StatusError::Refused {
                    url,
                    status: reply.status,
                    body: message,
                }))
                .await;
            return;
        }
        connected_once = true;
        let mut events = EventReader::new(reply.body);
        loop {
            match events.next_event().await {
                Ok(Some(event)) if event.name == "status" => {
                    last_id = event.id.or(last_id);
                    let answer = match serde_json::from_str::<Json>(&event.data) {
                        Ok(answer) => answer,
                        Err(err) => {
                            let _ = sender
                                .send(Err(StatusError::NotJson {
                                    url,
                                    message: err.to_string(),
                                }))
                                .await;
                            return;
                        }
                    };
                    if sender.send(Ok((which, answer))).await.is_err() {
                        return;
                    }
                }
                Ok(Some(event)) if event.name == "error" => {
                    let message = serde_json::from_str::<Json>(&event.data)
                        .ok()
                        .and_then(|json| json["message"].as_str().map(str::to_string))
                        .unwrap_or(event.data);
                    let _ = sender.send(Err(StatusError::StreamEnded { url, message })).await;
                    return;
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(SseError::Broken(_)) => break,
                Err(source) => {
                    let _ = sender.send(Err(StatusError::Stream { url, source })).await;
                    return;
                }
            }
        }
        tokio::time::sleep(RECONNECT_PAUSE).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answers() -> Answers {
        let resource = |kind: &str, name: &str, field: &str, value: &str| json!({"GVK": {"Group": "", "Version": "v1", "Kind": kind}, "name": name, field: value});
        Answers {
            rsync: json!({"name": "dig", "status": "Instantiated", "rsync-status": {"Applied": 2},
                "apps": [{"name": "web", "clusters": [{"cluster": "edge01", "resources": [resource("Deployment", "web", "rsync-status", "Applied")]}]},
                         {"name": "db", "clusters": [{"cluster": "edge01", "resources": [resource("ConfigMap", "db", "rsync-status", "Applied")]}]}]}),
            cluster: json!({"apps": [{"name": "web", "clusters": [{"cluster": "edge01", "resources": [resource("Deployment", "web", "cluster-status", "Present"), resource("Pod", "web-1", "cluster-status", "Present")]}]},
                                     {"name": "db", "clusters": [{"cluster": "edge01", "resources": [resource("ConfigMap", "db", "cluster-status", "NotPresent")]}]}]}),
            ready: json!({"readyStatus": "NotReady", "readyCounts": {"Ready": 2, "NotPresent": 1},
                "apps": [{"name": "db", "clusters": [{"cluster": "edge01", "resources": [resource("ConfigMap", "db", "readyStatus", "NotPresent")]}]},
                         {"name": "web", "clusters": [{"cluster": "edge01", "resources": [resource("Deployment", "web", "readyStatus", "Ready"), resource("Pod", "web-1", "readyStatus", "Ready")]}]}]}),
        }
    }

    #[test]
    fn watching_counts_ready_clusters_and_knows_when_to_stop() {
        let resource = |ready: &str| json!({"GVK": {"Kind": "Pod"}, "name": "p", "readyStatus": ready});
        let mut answers = Answers {
            rsync: json!({"name": "dig", "status": "Instantiated"}),
            cluster: json!({}),
            ready: json!({"readyStatus": "NotReady", "apps": [
                {"name": "a", "clusters": [{"cluster": "edge01", "resources": [resource("Ready")]},
                                           {"cluster": "edge02", "resources": [resource("Ready")]},
                                           {"cluster": "edge03", "statusFresh": false, "resources": [resource("Ready")]}]},
                {"name": "b", "clusters": [{"cluster": "edge02", "resources": [resource("NotReady")]}]}]}),
        };
        assert_eq!(
            ready_clusters(&answers),
            (1, 3),
            "edge02 waits on b, edge03 is stale"
        );
        assert_eq!(progress_line(&answers), "1/3 clusters ready");
        assert!(until_reached(&answers, "instantiated") && until_reached(&answers, "Instantiated"));
        assert!(!until_reached(&answers, "ready") && !until_reached(&answers, "terminated"));
        assert_eq!(failure(&answers, "ready"), None);
        answers.ready["readiness"] = json!({"ready": false, "conditions": [
            {"type": "Ready", "status": "False", "reason": "Failed", "message": "Pod p: CrashLoopBackOff"}]});
        assert_eq!(
            failure(&answers, "ready").as_deref(),
            Some("not ready: Pod p: CrashLoopBackOff")
        );
        assert_eq!(
            failure(&answers, "terminated"),
            None,
            "a crashing pod does not keep termination back"
        );
        answers.rsync["status"] = json!("TerminateFailed");
        assert_eq!(
            failure(&answers, "terminated").as_deref(),
            Some("dig: TerminateFailed")
        );
        answers.ready["readyStatus"] = json!("Ready");
        assert!(until_reached(&answers, "READY"));
    }

    #[test]
    fn a_change_is_one_line_when_piped() {
        let answers = answers();
        let mut shown = String::new();
        let mut out = Vec::new();
        show(&answers, false, &mut shown, &mut out).unwrap();
        show(&answers, false, &mut shown, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.lines().count(),
            1,
            "the same answers are not shown twice: {text}"
        );
        assert!(
            text.starts_with("0/1 clusters ready · dig: Instantiated"),
            "{text}"
        );
        let mut redrawn = Vec::new();
        show(&answers, true, &mut String::new(), &mut redrawn).unwrap();
        let redrawn = String::from_utf8(redrawn).unwrap();
        assert!(
            redrawn.starts_with("\u{1b}[H\u{1b}[2J0/1 clusters ready\n") && redrawn.contains("┌"),
            "{redrawn}"
        );
    }

    #[test]
    fn the_table_joins_the_three_answers() {
        let answers = answers();
        let expected = "\
┌─────┬─────────┬────────────┬───────┬─────────┬────────────┬────────────┐
│ APP ┆ CLUSTER ┆ KIND       ┆ NAME  ┆ RSYNC   ┆ IN CLUSTER ┆ READY      │
╞═════╪═════════╪════════════╪═══════╪═════════╪════════════╪════════════╡
│ web ┆ edge01  ┆ Deployment ┆ web   ┆ Applied ┆ Present    ┆ Ready      │
│ web ┆ edge01  ┆ Pod        ┆ web-1 ┆ -       ┆ Present    ┆ Ready      │
│ db  ┆ edge01  ┆ ConfigMap  ┆ db    ┆ Applied ┆ NotPresent ┆ NotPresent │
└─────┴─────────┴────────────┴───────┴─────────┴────────────┴────────────┘";
        assert_eq!(
            table(&rows(&answers)).to_string(),
            expected,
            "not a terminal: plain text"
        );
        let mut coloured = table(&rows(&answers));
        coloured.enforce_styling();
        assert!(
            coloured.to_string().contains('\u{1b}'),
            "on a terminal the statuses are coloured"
        );
        assert_eq!(
            summary_line(&answers),
            "dig: Instantiated · resources: Applied 2 · ready: NotReady (Ready 2, NotPresent 1)"
        );
        assert!(
            reached(&answers, "Instantiated") && reached(&answers, "NotReady") && !reached(&answers, "Ready")
        );
        let mut paused = answers.clone();
        paused.rsync["rollout"] = json!({"state": "Paused", "failed": ["p+edge02", "p+edge03"],
            "summary": "batch 1/2, 0/2 clusters updated, 2 failed (paused)"});
        assert_eq!(
            summary_line(&paused),
            "dig: Instantiated · resources: Applied 2 · ready: NotReady (Ready 2, NotPresent 1) · rollout: batch 1/2, 0/2 clusters updated, 2 failed (paused) (p+edge02, p+edge03)"
        );
        assert_eq!(
            dig_path("/v2/projects/p/composite-apps/c/v1/deployment-intent-groups/d/status"),
            "/v2/projects/p/composite-apps/c/v1/deployment-intent-groups/d"
        );
        assert_eq!(
            dig_path("projects/p/composite-apps/c/v1/deployment-intent-groups/d"),
            "/v2/projects/p/composite-apps/c/v1/deployment-intent-groups/d"
        );
    }

    #[test]
    fn stale_clusters_read_unknown_and_are_named_in_the_summary() {
        let resource = |kind: &str, name: &str, field: &str, value: &str| json!({"GVK": {"Group": "", "Version": "v1", "Kind": kind}, "name": name, field: value});
        let stale = |app: &str, kind: &str, name: &str| {
            json!({"name": app, "clusters": [
            {"cluster": "edge01", "resources": [resource(kind, name, "readyStatus", "Ready")]},
            {"cluster": "edge02", "statusFresh": false, "statusMessage": "no report from edge02 for 95 s",
             "lastHeard": "2026-11-23T10:00:00Z", "resources": [resource(kind, name, "readyStatus", "Unknown")]}]})
        };
        let answers = Answers {
            rsync: json!({"name": "dig", "status": "Instantiated", "rsync-status": {"Applied": 4}, "apps": []}),
            cluster: json!({"apps": [{"name": "web", "clusters": [
                {"cluster": "edge02", "status-fresh": false, "resources": [resource("Deployment", "web", "cluster-status", "Unknown")]}]}]}),
            ready: json!({"readyStatus": "NotReady", "readyCounts": {"Ready": 2, "Unknown": 2},
                "apps": [stale("web", "Deployment", "web"), stale("db", "ConfigMap", "db")]}),
        };
        assert_eq!(
            stale_clusters(&answers),
            [("edge02".to_string(), "no report from edge02 for 95 s".to_string())],
            "once, however many apps it holds"
        );
        assert_eq!(
            summary_line(&answers),
            "dig: Instantiated · resources: Applied 4 · ready: NotReady (Ready 2, Unknown 2) · stale: edge02 (no report from edge02 for 95 s)"
        );
        let rows = rows(&answers);
        let web_on_edge02 = rows
            .iter()
            .find(|row| row[0] == "web" && row[1] == "edge02")
            .unwrap();
        assert_eq!((&*web_on_edge02[5], &*web_on_edge02[6]), ("Unknown", "Unknown"));
        assert_eq!(colour("Unknown"), Some(comfy_table::Color::Yellow));
        let fresh = answers.ready["apps"][0]["clusters"][0].clone();
        assert!(
            stale_clusters(&Answers {
                ready: json!({"apps": [{"name": "web", "clusters": [fresh]}]}),
                ..answers
            })
            .is_empty()
        );
    }

    #[test]
    fn a_cluster_rsync_waits_on_says_for_what_since_and_until_when() {
        let answers = Answers {
            rsync: json!({"name": "dig", "status": "Instantiating", "rsync-status": {"Pending": 4}}),
            cluster: json!({}),
            ready: json!({"readyStatus": "NotReady", "readyCounts": {},
                "apps": [{"name": "nginx", "clusters": [
                    {"cluster": "cluster1", "waiting": {"for": "pre-install hook Pod/pre-install-hook-pod to complete",
                        "since": "2026-11-28T10:00:00Z", "until": "2026-11-28T10:05:00Z", "then": "fails"}, "resources": []},
                    {"cluster": "cluster2", "waiting": {"for": "app operator to be Ready, then 10 s",
                        "since": "2026-11-28T10:00:01Z"}, "resources": []}]}]}),
        };
        assert_eq!(
            cluster_lines(&answers),
            [
                "nginx on cluster1: waiting for pre-install hook Pod/pre-install-hook-pod to complete (since 2026-11-28T10:00:00Z, fails at 2026-11-28T10:05:00Z)",
                "nginx on cluster2: waiting for app operator to be Ready, then 10 s (since 2026-11-28T10:00:01Z)",
            ]
        );
    }

    #[test]
    fn pairs_waiting_for_the_same_thing_share_a_line() {
        let queued = |cluster: &str| {
            json!({"cluster": cluster, "waiting": {"for": "rsync to apply it", "since": "2026-12-03T10:00:00Z"},
                "resources": []})
        };
        let hook = json!({"cluster": "edge09", "waiting": {"for": "pre-install hook Pod/migrate to complete",
            "since": "2026-12-03T10:00:02Z"}, "resources": []});
        let answers = Answers {
            rsync: json!({"name": "dig", "status": "Instantiating"}),
            cluster: json!({}),
            ready: json!({"readyStatus": "NotReady", "readyCounts": {}, "apps": [
                {"name": "web", "clusters": [queued("edge01"), hook, queued("edge02"), queued("edge03")]},
                {"name": "db", "clusters": [queued("edge01")]}]}),
        };
        assert_eq!(
            cluster_lines(&answers),
            [
                "web on edge01: waiting for rsync to apply it (since 2026-12-03T10:00:00Z) (and 3 more (app, cluster) pairs alike)",
                "web on edge09: waiting for pre-install hook Pod/migrate to complete (since 2026-12-03T10:00:02Z)",
            ]
        );
    }

    #[test]
    fn clusters_not_ready_say_why_under_the_summary() {
        let resource = |name: &str, ready: &str, message: Option<&str>| {
            let mut resource = json!({"GVK": {"Group": "", "Version": "v1", "Kind": "Pod"}, "name": name, "readyStatus": ready});
            if let Some(message) = message {
                resource["conditions"] =
                    json!([{"type": "Ready", "status": "False", "reason": "Failed", "message": message}]);
            }
            resource
        };
        let answers = Answers {
            rsync: json!({"name": "dig", "status": "Instantiated", "rsync-status": {"Applied": 3}}),
            cluster: json!({}),
            ready: json!({"readyStatus": "NotReady", "readyCounts": {"Ready": 1, "NotReady": 2},
                "apps": [{"name": "sink", "clusters": [
                    {"cluster": "edge01", "resources": [resource("sink-a", "Ready", None)]},
                    {"cluster": "edge02", "propagation": "CreationFailed", "resources": [
                        resource("sink-b", "NotReady", Some("Pod sink-b: container sink CrashLoopBackOff (restarted 5 times)")),
                        resource("sink-c", "NotReady", Some("Pod sink-c: not scheduled"))]},
                    {"cluster": "edge03", "statusFresh": false, "statusMessage": "no report from edge03 for 95 s",
                     "resources": [resource("sink-d", "Unknown", None)]}]}],
                "readiness": {"ready": false, "message": "sink on edge02: Pod sink-b: container sink CrashLoopBackOff (restarted 5 times)"}}),
        };
        assert_eq!(
            cluster_lines(&answers),
            [
                "sink on edge02: CreationFailed; not ready: Pod sink-b: container sink CrashLoopBackOff (restarted 5 times) (and 1 more)"
            ]
        );
        let summary = summary_line(&answers);
        let lines: Vec<&str> = summary.lines().collect();
        assert_eq!(
            lines[0],
            "dig: Instantiated · resources: Applied 3 · ready: NotReady (Ready 1, NotReady 2) · stale: edge03 (no report from edge03 for 95 s) · not ready: sink on edge02: Pod sink-b: container sink CrashLoopBackOff (restarted 5 times)"
        );
        assert_eq!(lines.len(), 2, "edge01 is ready, edge03 is named as stale only");
        assert!(lines[1].starts_with("  sink on edge02: CreationFailed"));
    }

    #[test]
    fn a_remote_column_appears_when_a_resource_rolls_up_a_value() {
        let mut answers = answers();
        assert_eq!(remote_column(&answers, &rows(&answers)), None);
        assert!(
            !view(&answers).to_string().contains("REMOTE"),
            "no status config: no column"
        );
        answers.ready["apps"][1]["clusters"][0]["resources"][0]["statusRemote"] = json!(3);
        answers.ready["apps"][1]["clusters"][0]["resources"][1]["statusRemote"] =
            json!({"phase": "x".repeat(60)});
        let rows = rows(&answers);
        let remote = remote_column(&answers, &rows).unwrap();
        assert_eq!(remote[0], "3");
        assert!(remote[1].starts_with("{\"phase\"") && remote[1].chars().count() == MAX_REMOTE_CELL_CHARS);
        assert_eq!(remote[2], "-", "the ConfigMap has none");
        let text = view(&answers).to_string();
        assert!(text.lines().nth(1).unwrap().contains("REMOTE"), "{text}");
        assert!(!text.contains('\u{1b}'), "not a terminal: plain text");
    }

    #[test]
    fn stale_clusters_have_their_own_colour() {
        let stale = [("edge02".to_string(), "no report from edge02 for 95 s".to_string())];
        assert_eq!(
            cluster_colour("edge02", &stale),
            Some(comfy_table::Color::Magenta)
        );
        assert_eq!(cluster_colour("edge01", &stale), None);
        assert_eq!(cluster_colour("edge02", &[]), None);
        let rows = [[
            "web",
            "edge02",
            "Deployment",
            "web",
            "Applied",
            "Unknown",
            "Unknown",
        ]
        .map(String::from)];
        let plain = table_with(&rows, None, &stale).to_string();
        assert_eq!(plain, table(&rows).to_string(), "piped output is unchanged");
        let mut coloured = table_with(&rows, None, &stale);
        coloured.enforce_styling();
        let mut fresh = table(&rows);
        fresh.enforce_styling();
        let (coloured, fresh) = (coloured.to_string(), fresh.to_string());
        let edge02_line = |text: &str| {
            text.lines()
                .find(|line| line.contains("edge02"))
                .unwrap()
                .to_string()
        };
        assert!(
            edge02_line(&coloured).contains("\u{1b}[") && edge02_line(&coloured) != edge02_line(&fresh),
            "on a terminal the stale cluster's cell is coloured: {coloured:?} vs {fresh:?}"
        );
    }

    /// EMCO 22.x's network-intents (`cluster`) and logical-cloud (`clusters`) readiness answers fill the READY
    /// column as the app they stand for.
    #[test]
    fn network_intents_and_logical_clouds_fill_the_table() {
        let resource = |kind: &str, name: &str, field: &str, value: &str| json!({"GVK": {"Group": "", "Version": "v1", "Kind": kind}, "name": name, field: value});
        let lc = Answers {
            rsync: json!({"name": "lc1", "status": "Instantiated", "apps": [{"name": "logical-cloud", "clusters": [{"cluster": "edge01", "resources": [resource("Namespace", "t1", "rsync-status", "Applied")]}]}]}),
            cluster: json!({}),
            ready: json!({"readyStatus": "Ready", "clusters": [{"clusterProvider": "p", "cluster": "edge01", "resources": [resource("Namespace", "t1", "readyStatus", "Ready")]}]}),
        };
        assert_eq!(
            rows(&lc),
            [[
                "logical-cloud",
                "edge01",
                "Namespace",
                "t1",
                "Applied",
                "-",
                "Ready"
            ]
            .map(String::from)]
        );
        let ncm = Answers {
            rsync: json!({"name": "p+edge01", "apps": [{"name": "network-intents", "clusters": [{"cluster": "edge01", "resources": [resource("Network", "n", "rsync-status", "Applied")]}]}]}),
            cluster: json!({}),
            ready: json!({"cluster": {"cluster": "edge01", "resources": [resource("Network", "n", "readyStatus", "Ready")]}}),
        };
        assert_eq!(
            rows(&ncm),
            [[
                "network-intents",
                "edge01",
                "Network",
                "n",
                "Applied",
                "-",
                "Ready"
            ]
            .map(String::from)]
        );
        assert!(apps_of(&json!({"cluster": {}})).is_empty());
    }
}
