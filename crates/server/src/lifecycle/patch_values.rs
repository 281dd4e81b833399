//! Patch values a gac customization takes from a URL (`"value": "$(https://…)$"`, as EMCO does): fetched only from
//! the URL prefixes the operator allowed when starting emco (`emco serve --patch-value-url-prefix`; none by
//! default), over HTTPS unless a prefix itself is `http://`, without following redirects, within a time limit and a
//! size bound, before the DIG renders — never because a request alone names a URL.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt as _;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use serde_json::Value as Json;

use super::outbound::{Connector, https_client, url_refusal};

/// The default time one fetch may take.
pub const DEFAULT_PATCH_VALUE_TIMEOUT: Duration = Duration::from_secs(5);
/// The default largest answer read.
pub const DEFAULT_PATCH_VALUE_MAX_BYTES: usize = 64 * 1024;
/// The most distinct URLs one instantiation fetches.
pub const MAX_PATCH_VALUE_URLS: usize = 64;
/// How many patch values are fetched at once.
const CONCURRENT_FETCHES: usize = 8;

/// Where patch values may come from, and the bounds of fetching one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchValueSources {
    /// URL prefixes (`https://values.example.com/emco/`); a value's URL must start with one.
    pub prefixes: Vec<String>,
    /// The longest one fetch may take.
    pub timeout: Duration,
    /// The largest answer read.
    pub max_bytes: usize,
}

impl Default for PatchValueSources {
    fn default() -> Self {
        Self {
            prefixes: Vec::new(),
            timeout: DEFAULT_PATCH_VALUE_TIMEOUT,
            max_bytes: DEFAULT_PATCH_VALUE_MAX_BYTES,
        }
    }
}

impl PatchValueSources {
    /// Why `url` may not be fetched, or `None` when it may: it must start with an allowed prefix and be `https://`
    /// (or `http://` under an `http://` prefix).
    #[must_use]
    pub fn refusal(&self, url: &str) -> Option<String> {
        url_refusal(
            url,
            &self.prefixes,
            "patch values",
            "--patch-value-url-prefix",
            true,
        )
    }
}

/// Fetched values by URL.
pub(super) type FetchedValues = HashMap<String, Json>;

/// Fetches each of `urls` (at most [`MAX_PATCH_VALUE_URLS`]) and reads its answer's `value`, as EMCO does; the first
/// failure is the error, naming the URL and what went wrong.
pub(super) async fn fetch_all(
    sources: &PatchValueSources,
    urls: Vec<String>,
) -> Result<FetchedValues, String> {
    if urls.len() > MAX_PATCH_VALUE_URLS {
        return Err(format!(
            "the DIG's customizations take patch values from {} URLs; at most {MAX_PATCH_VALUE_URLS} are fetched",
            urls.len()
        ));
    }
    let mut values = HashMap::new();
    if urls.is_empty() {
        return Ok(values);
    }
    for url in &urls {
        if let Some(refusal) = sources.refusal(url) {
            return Err(format!("patch value URL '{}': {refusal}", emco_model::shown(url)));
        }
    }
    let client = client()?;
    // Fetched [`CONCURRENT_FETCHES`] at a time: the instantiation waits for the slowest, not their sum.
    let mut answers = futures::stream::iter(urls)
        .map(|url| {
            let client = &client;
            async move {
                let value = tokio::time::timeout(sources.timeout, fetch(client, &url, sources.max_bytes))
                    .await
                    .unwrap_or_else(|_| Err(format!("no answer within {:?}", sources.timeout)))
                    .map_err(|message| format!("patch value URL '{}': {message}", emco_model::shown(&url)))?;
                Ok::<_, String>((url, value))
            }
        })
        .buffer_unordered(CONCURRENT_FETCHES);
    while let Some(answer) = answers.next().await {
        let (url, value) = answer?;
        values.insert(url, value);
    }
    Ok(values)
}

type HttpsClient = Client<Connector, Empty<Bytes>>;

fn client() -> Result<HttpsClient, String> {
    https_client(None)
}

async fn fetch(client: &HttpsClient, url: &str, max_bytes: usize) -> Result<Json, String> {
    let uri: hyper::Uri = url.parse().map_err(|err| format!("not a URL: {err}"))?;
    let response = client.get(uri).await.map_err(|err| err.to_string())?;
    let status = response.status();
    if status != hyper::StatusCode::OK {
        return Err(format!(
            "answered {status}, not 200 OK (redirects are not followed)"
        ));
    }
    let body = Limited::new(response.into_body(), max_bytes)
        .collect()
        .await
        .map_err(|_| format!("the answer is larger than {max_bytes} bytes, or broke off"))?
        .to_bytes();
    let answer: Json =
        serde_json::from_slice(&body).map_err(|err| format!("the answer is not JSON: {err}"))?;
    answer
        .get("value")
        .cloned()
        .ok_or_else(|| "the answer has no \"value\"".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_urls_under_an_allowed_prefix_may_be_fetched() {
        let none = PatchValueSources::default();
        assert!(
            none.refusal("https://values.example.com/a")
                .unwrap()
                .contains("--patch-value-url-prefix")
        );
        let some = PatchValueSources {
            prefixes: vec!["https://values.example.com/emco/".into()],
            ..PatchValueSources::default()
        };
        assert_eq!(some.refusal("https://values.example.com/emco/p/c"), None);
        for refused in [
            "https://values.example.com/other",
            "http://values.example.com/emco/p/c",
            "https://values.example.com.evil/emco/",
            "file:///etc/passwd",
        ] {
            assert!(some.refusal(refused).is_some(), "{refused}");
        }
    }
}
