//! Parsing request targets: the URL grammar of the Kubernetes API and its query parameters.

use std::collections::HashMap;

/// Decoded query parameters (first value wins; empty pairs are tolerated).
#[derive(Debug, Clone, Default)]
pub struct Query(HashMap<String, String>);

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Query {
    /// Parses a raw query string.
    #[must_use]
    pub fn parse(raw: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for pair in raw.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            map.entry(percent_decode(key))
                .or_insert_with(|| percent_decode(value));
        }
        Self(map)
    }

    /// A parameter's value.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A parameter that is `true` or `1`.
    #[must_use]
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

/// Where a resource request points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural.
    pub plural: String,
    /// Namespace (empty for cluster-scoped or all namespaces).
    pub namespace: Option<String>,
    /// Object name (absent for collections).
    pub name: Option<String>,
    /// Subresource (`status`, `scale`).
    pub subresource: Option<String>,
}

/// What a path asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`
    Version,
    /// `/healthz`, `/readyz`, `/livez`
    Health,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/{g}`
    Group(String),
    /// `/api/v1`, `/apis/{g}/{v}`
    Resources(String, String),
    /// `/openapi/v3`
    OpenApiIndex,
    /// `/openapi/v3/...`
    OpenApiDocument(String, String),
    /// A resource URL.
    Resource(Target),
    /// Anything else.
    Unknown,
}

/// Parses a path (without query); `/api/v1/namespaces/{name}` is a Namespace, `/api/v1/namespaces/{ns}/{plural}`
/// a namespaced collection.
pub fn route(path: &str) -> Route {
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "readyz" | "livez", ..] => Route::Health,
        ["api"] => Route::CoreVersions,
        ["apis"] => Route::Groups,
        ["apis", group] => Route::Group((*group).to_string()),
        ["api", version] => Route::Resources(String::new(), (*version).to_string()),
        ["apis", group, version] => Route::Resources((*group).to_string(), (*version).to_string()),
        ["openapi", "v3"] => Route::OpenApiIndex,
        ["openapi", "v3", "api", version] => Route::OpenApiDocument(String::new(), (*version).to_string()),
        ["openapi", "v3", "apis", group, version] => {
            Route::OpenApiDocument((*group).to_string(), (*version).to_string())
        }
        ["api", version, rest @ ..] => resource_route("", version, rest),
        ["apis", group, version, rest @ ..] => resource_route(group, version, rest),
        _ => Route::Unknown,
    }
}

fn resource_route(group: &str, version: &str, rest: &[&str]) -> Route {
    let target = |namespace: Option<&str>, plural: &str, name: Option<&str>, sub: Option<&str>| {
        Route::Resource(Target {
            group: group.to_string(),
            version: version.to_string(),
            plural: plural.to_string(),
            namespace: namespace.map(String::from),
            name: name.map(String::from),
            subresource: sub.map(String::from),
        })
    };
    match rest {
        // Namespaces themselves (cluster-scoped): /namespaces, /namespaces/{n}, /namespaces/{n}/status|finalize
        ["namespaces"] if group.is_empty() => target(None, "namespaces", None, None),
        ["namespaces", name] if group.is_empty() => target(None, "namespaces", Some(name), None),
        ["namespaces", name, sub @ ("status" | "finalize")] if group.is_empty() => {
            target(None, "namespaces", Some(name), Some(sub))
        }
        ["namespaces", ns, plural] => target(Some(ns), plural, None, None),
        ["namespaces", ns, plural, name] => target(Some(ns), plural, Some(name), None),
        ["namespaces", ns, plural, name, sub] => target(Some(ns), plural, Some(name), Some(sub)),
        [plural] => target(None, plural, None, None),
        [plural, name] => target(None, plural, Some(name), None),
        [plural, name, sub] => target(None, plural, Some(name), Some(sub)),
        _ => Route::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_routes() {
        assert_eq!(
            route("/api/v1/namespaces/t1"),
            Route::Resource(Target {
                group: String::new(),
                version: "v1".into(),
                plural: "namespaces".into(),
                namespace: None,
                name: Some("t1".into()),
                subresource: None
            })
        );
        let Route::Resource(pods) = route("/api/v1/namespaces/t1/pods/web-1/status") else {
            panic!()
        };
        assert_eq!(
            (
                pods.namespace.as_deref(),
                pods.plural.as_str(),
                pods.name.as_deref(),
                pods.subresource.as_deref()
            ),
            (Some("t1"), "pods", Some("web-1"), Some("status"))
        );
        let Route::Resource(all) = route("/apis/apps/v1/deployments") else {
            panic!()
        };
        assert_eq!(
            (all.group.as_str(), all.namespace, all.name),
            ("apps", None, None)
        );
        assert_eq!(
            route("/apis/apps/v1"),
            Route::Resources("apps".into(), "v1".into())
        );
        assert_eq!(
            route("/openapi/v3/apis/apps/v1"),
            Route::OpenApiDocument("apps".into(), "v1".into())
        );
        assert_eq!(route("/nope"), Route::Unknown);
    }

    #[test]
    fn queries_tolerate_empty_pairs_and_decode() {
        let query = Query::parse(Some(
            "&watch=true&labelSelector=app%3Dweb%2Ctier+in+%28a%29&&timeoutSeconds=290",
        ));
        assert!(query.flag("watch"));
        assert_eq!(query.get("labelSelector"), Some("app=web,tier in (a)"));
        assert_eq!(query.get("timeoutSeconds"), Some("290"));
        assert_eq!(query.get("missing"), None);
    }
}
