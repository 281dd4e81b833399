//! `emcoctl template --dig DIG`: what instantiating or updating a deployment intent group would apply now, per
//! cluster, after its action controllers ran (the API's `…/preview`), as a YAML stream with a comment heading each
//! object (its cluster, app and the controllers that changed it); with `--diff`, one line per object that differs
//! from what is applied (`+` added, `~` changed, `-` removed).

use serde_json::Value as Json;

use crate::client::EmcoClient;
use crate::commands::{CommandError, dig_path};
use crate::status::{StatusError, get_json};

/// Why a preview could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// The DIG is not named right.
    #[error(transparent)]
    Dig(#[from] CommandError),
    /// The API refused or did not answer.
    #[error(transparent)]
    Api(#[from] StatusError),
}

/// GETs the preview of `dig`, for one cluster (`provider+cluster`) and app if given, compared with what is applied
/// when `diff`.
pub async fn fetch(
    client: &EmcoClient,
    dig: &str,
    cluster: Option<&str>,
    app: Option<&str>,
    diff: bool,
) -> Result<Json, PreviewError> {
    let path = format!("{}/preview", dig_path(dig)?);
    let encode = |value: &str| value.replace('%', "%25").replace('+', "%2B").replace('&', "%26");
    let mut query = Vec::new();
    if let Some(cluster) = cluster {
        query.push(format!("cluster={}", encode(cluster)));
    }
    if let Some(app) = app {
        query.push(format!("app={}", encode(app)));
    }
    if diff {
        query.push("diff=true".to_string());
    }
    Ok(get_json(client, &path, &query.join("&")).await?)
}

/// The preview as a YAML stream: each object headed by `# cluster <c> · app <a> · changed by <controllers>`.
#[must_use]
pub fn render(answer: &Json) -> String {
    let mut out = String::new();
    for (cluster, app, resource) in resources(answer) {
        out.push_str(&format!("---\n# cluster {cluster} · app {app}"));
        let changed = changed_by(resource);
        if !changed.is_empty() {
            out.push_str(&format!(" · changed by {changed}"));
        }
        out.push('\n');
        out.push_str(&serde_saphyr::to_string(&resource["object"]).unwrap_or_default());
    }
    out
}

/// The differences of a `diff=true` preview, one line each (`+ cluster app Kind/name (changed by gac)`), and
/// whether there are any.
#[must_use]
pub fn render_diff(answer: &Json) -> (String, bool) {
    let mut out = String::new();
    for (cluster, app, resource) in resources(answer) {
        let mark = match resource["diff"].as_str() {
            Some("added") => '+',
            Some("changed") => '~',
            _ => continue,
        };
        let changed = changed_by(resource);
        let by = if changed.is_empty() {
            String::new()
        } else {
            format!(" (changed by {changed})")
        };
        out.push_str(&format!(
            "{mark} {cluster} {app} {}/{}{by}\n",
            resource["kind"].as_str().unwrap_or_default(),
            resource["name"].as_str().unwrap_or_default()
        ));
    }
    for cluster in answer["clusters"].as_array().into_iter().flatten() {
        for app in cluster["apps"].as_array().into_iter().flatten() {
            for removed in app["removed"].as_array().into_iter().flatten() {
                out.push_str(&format!(
                    "- {} {} {}/{}\n",
                    cluster["cluster"].as_str().unwrap_or_default(),
                    app["app"].as_str().unwrap_or_default(),
                    removed["kind"].as_str().unwrap_or_default(),
                    removed["name"].as_str().unwrap_or_default()
                ));
            }
        }
    }
    let differs = !out.is_empty();
    (out, differs)
}

/// Every (cluster, app, resource) of an answer, in its order.
fn resources(answer: &Json) -> impl Iterator<Item = (&str, &str, &Json)> {
    answer["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|cluster| {
            let name = cluster["cluster"].as_str().unwrap_or_default();
            cluster["apps"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(move |app| {
                    let app_name = app["app"].as_str().unwrap_or_default();
                    app["resources"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(move |resource| (name, app_name, resource))
                })
        })
}

fn changed_by(resource: &Json) -> String {
    resource["changedBy"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn answer() -> Json {
        json!({"clusters": [{"cluster": "p+a", "apps": [{"app": "sink",
            "resources": [
                {"name": "cm", "kind": "ConfigMap", "changedBy": ["gac"], "diff": "added", "object": {"kind": "ConfigMap", "metadata": {"name": "cm"}}},
                {"name": "s", "kind": "Service", "changedBy": [], "diff": "unchanged", "object": {"kind": "Service"}}
            ],
            "removed": [{"name": "old", "kind": "Secret"}]}]}]})
    }

    #[test]
    fn objects_are_headed_by_their_cluster_app_and_controllers() {
        let text = render(&answer());
        assert!(
            text.starts_with("---\n# cluster p+a · app sink · changed by gac\nkind: ConfigMap\n"),
            "{text}"
        );
        assert!(
            text.contains("---\n# cluster p+a · app sink\nkind: Service\n"),
            "{text}"
        );
    }

    #[test]
    fn a_diff_lists_what_differs() {
        let (text, differs) = render_diff(&answer());
        assert_eq!(
            text,
            "+ p+a sink ConfigMap/cm (changed by gac)\n- p+a sink Secret/old\n"
        );
        assert!(differs);
        let (empty, differs) = render_diff(&json!({"clusters": []}));
        assert!(empty.is_empty() && !differs);
    }
}
