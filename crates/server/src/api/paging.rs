//! Paging of lists: `?limit=N` answers at most N items (in creation order, as every list), and when more follow,
//! the answer's `Link: <…>; rel="next"` header (RFC 8288) names the next page's URL and `X-Continue` its
//! `continue` token; `?limit=N&continue=<token>` reads that page. Without `limit` a list answers everything, as
//! EMCO's do. The body stays a bare JSON array either way, so EMCO clients see no change.
//!
//! A token is opaque to clients; it holds the creation revision and name of the last item answered, so deleting
//! or adding items between two pages neither repeats nor skips the items that were there all along.

use axum::Json as JsonResponse;
use axum::http::{HeaderName, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use emco_appcontext::Entry;
use emco_store::Revision;

use super::contract::{QueryParameter, QueryValues, query};
use crate::ApiError;

/// The query parameter that limits a page.
pub(crate) const LIMIT: &str = "limit";
/// The query parameter that continues from a previous page.
pub(crate) const CONTINUE: &str = "continue";
/// `limit`, described.
pub(crate) const LIMIT_QUERY: QueryParameter =
    query(LIMIT, "At most this many items (1 to 10000); without it, all")
        .taking(QueryValues::Integer(1, MAX_LIMIT as i64));
/// `continue`, described: a token as [`Position::token`] writes it (`c<revision>/<name>/…`).
pub(crate) const CONTINUE_QUERY: QueryParameter = query(
    CONTINUE,
    "The page after the one whose X-Continue header gave this token (without limit: every item after it)",
)
.taking(QueryValues::Pattern(CONTINUE_PATTERN));
/// The shape of a `continue` token: the prefix, a store revision (at most 18 digits: always below 2^63), then
/// names (EMCO's name pattern each).
pub(crate) const CONTINUE_PATTERN: &str = "^c[0-9]{1,18}(/([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])+$";
/// The query parameters of paging, which every list takes.
pub(crate) const PAGING_QUERY: &[QueryParameter] = &[LIMIT_QUERY, CONTINUE_QUERY];
/// The header that repeats the next page's token.
pub(crate) const CONTINUE_HEADER: HeaderName = HeaderName::from_static("x-continue");
/// The largest `limit` accepted.
pub(crate) const MAX_LIMIT: usize = 10_000;
/// The prefix of every token (a token without it was not written by this server).
const TOKEN_PREFIX: &str = "c";

/// What a list request asks for of paging.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Page {
    limit: Option<usize>,
    after: Option<Position>,
}

/// Where a page ended: the last item's creation revision and own names (several items created in one
/// transaction share a revision; a list orders those by name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Position {
    create_revision: Revision,
    names: Vec<String>,
}

impl Position {
    fn of(entry: &Entry) -> Self {
        Self {
            create_revision: entry.create_revision,
            names: entry.path.names().to_vec(),
        }
    }

    fn token(&self) -> String {
        format!("{TOKEN_PREFIX}{}/{}", self.create_revision, self.names.join("/"))
    }

    fn parse(token: &str) -> Option<Self> {
        let rest = token.strip_prefix(TOKEN_PREFIX)?;
        let mut parts = rest.split('/');
        let create_revision = parts.next()?.parse::<Revision>().ok().filter(|r| *r >= 0)?;
        let names: Vec<String> = parts.map(str::to_string).collect();
        if names.is_empty()
            || names
                .iter()
                .any(|name| emco_model::validate_name("continue", name).is_err())
        {
            return None;
        }
        Some(Self {
            create_revision,
            names,
        })
    }
}

impl Page {
    /// Reads `limit` and `continue` from a query; 400 naming the parameter when one is malformed.
    pub(crate) fn from_query(query: &[(String, String)]) -> Result<Self, ApiError> {
        let mut page = Self::default();
        for (name, value) in query {
            if name == LIMIT {
                let limit = value
                    .parse::<usize>()
                    .ok()
                    .filter(|limit| (1..=MAX_LIMIT).contains(limit))
                    .ok_or_else(|| {
                        ApiError::invalid(format!(
                            "query parameter limit '{}' must be a whole number from 1 to {MAX_LIMIT}",
                            emco_model::shown(value)
                        ))
                    })?;
                page.limit = Some(limit);
            } else if name == CONTINUE {
                let after = Position::parse(value).ok_or_else(|| {
                    ApiError::invalid(format!(
                        "query parameter continue '{}' is not a token this server gave (take it from the \
                         previous page's X-Continue header)",
                        emco_model::shown(value)
                    ))
                })?;
                page.after = Some(after);
            }
        }
        // `continue` without `limit`: every item after the token.
        Ok(page)
    }

    /// The items of this page (of all, in a list's order: by creation revision, then name), and the token of the
    /// next page when more follow; `entry` tells each item's catalog entry.
    pub(crate) fn select<T>(&self, items: Vec<T>, entry: impl Fn(&T) -> &Entry) -> (Vec<T>, Option<String>) {
        let mut remaining: Vec<T> = match &self.after {
            Some(after) => items
                .into_iter()
                .filter(|item| Position::of(entry(item)) > *after)
                .collect(),
            None => items,
        };
        let Some(limit) = self.limit else {
            return (remaining, None);
        };
        if remaining.len() <= limit {
            return (remaining, None);
        }
        remaining.truncate(limit);
        let token = remaining.last().map(|last| Position::of(entry(last)).token());
        (remaining, token)
    }
}

/// A list's answer: the items as a JSON array, with the next page's `Link` and `X-Continue` when there is one.
pub(crate) fn answer<T: serde::Serialize>(items: Vec<T>, next: Option<String>, uri: &Uri) -> Response {
    let mut response = JsonResponse(items).into_response();
    if let Some(token) = next {
        let link = format!("<{}>; rel=\"next\"", next_url(uri, &token));
        for (name, value) in [(header::LINK, link), (CONTINUE_HEADER, token)] {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response.headers_mut().insert(name, value);
            }
        }
    }
    response
}

/// The request's URL with `continue` set to `token` (other parameters kept, in order).
fn next_url(uri: &Uri, token: &str) -> String {
    let mut url = uri.path().to_string();
    let mut separator = '?';
    for pair in uri.query().unwrap_or_default().split('&') {
        if pair.is_empty() || pair.split('=').next() == Some(CONTINUE) {
            continue;
        }
        url.push(separator);
        url.push_str(pair);
        separator = '&';
    }
    url.push(separator);
    url.push_str(CONTINUE);
    url.push('=');
    url.push_str(token);
    url
}

#[cfg(test)]
mod tests {
    use super::*;
    use emco_appcontext::{Kind, ResourcePath};

    fn itself(entry: &Entry) -> &Entry {
        entry
    }

    fn entries(revisions: &[Revision]) -> Vec<Entry> {
        revisions
            .iter()
            .enumerate()
            .map(|(index, revision)| Entry {
                path: ResourcePath::new(Kind::Project, vec![format!("p{revision}-{index:03}")]),
                body: serde_json::Value::Null,
                create_revision: *revision,
                mod_revision: *revision,
            })
            .collect()
    }

    fn query(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn revisions(entries: &[Entry]) -> Vec<Revision> {
        entries.iter().map(|entry| entry.create_revision).collect()
    }

    #[test]
    fn the_documented_continue_pattern_is_what_tokens_look_like_and_what_parses() {
        let pattern =
            jsonschema::validator_for(&serde_json::json!({"type": "string", "pattern": CONTINUE_PATTERN}))
                .unwrap();
        let first = Page::from_query(&query(&[("limit", "1")])).unwrap();
        let (_, next) = first.select(entries(&[3, 5]), itself);
        let token = next.unwrap();
        assert!(pattern.is_valid(&serde_json::json!(token)), "{token}");
        // Anything of the documented shape parses; anything else is refused (the server reads it back).
        for shaped in ["c0/a", "c12/p1-000/x.y"] {
            assert!(pattern.is_valid(&serde_json::json!(shaped)));
            assert!(
                Page::from_query(&query(&[("continue", shaped)])).is_ok(),
                "{shaped}"
            );
        }
        // Without `limit`, every item after the token.
        let rest = Page::from_query(&query(&[("continue", &token)])).unwrap();
        let (items, next) = rest.select(entries(&[3, 5, 8]), itself);
        assert_eq!((revisions(&items), next), (vec![5, 8], None));
        for unshaped in ["", "c", "c1", "x1/a", "c1/-a", "c1/a/"] {
            assert!(!pattern.is_valid(&serde_json::json!(unshaped)), "{unshaped}");
            assert!(
                Page::from_query(&query(&[("continue", unshaped)])).is_err(),
                "{unshaped}"
            );
        }
    }

    #[test]
    fn pages_walk_the_list_once() {
        let all = entries(&[3, 5, 8, 9, 12]);
        let first = Page::from_query(&query(&[("limit", "2")])).unwrap();
        let (items, next) = first.select(all.clone(), itself);
        assert_eq!(revisions(&items), [3, 5]);
        let token = next.unwrap();
        // An item of the first page deleted and one added meanwhile: nothing repeated, nothing skipped.
        let changed = entries(&[5, 8, 9, 12, 13]);
        let second = Page::from_query(&query(&[("limit", "2"), ("continue", &token)])).unwrap();
        let (items, next) = second.select(changed.clone(), itself);
        assert_eq!(revisions(&items), [8, 9]);
        let third = Page::from_query(&query(&[("limit", "2"), ("continue", &next.unwrap())])).unwrap();
        let (items, next) = third.select(changed, itself);
        assert_eq!(revisions(&items), [12, 13]);
        assert_eq!(next, None, "an exactly full last page has no next");
        let (items, next) = Page::default().select(all, itself);
        assert_eq!((items.len(), next), (5, None));
    }

    #[test]
    fn items_created_together_page_by_name() {
        let all: Vec<Entry> = entries(&[4, 4, 4, 7]);
        let page = Page::from_query(&query(&[("limit", "2")])).unwrap();
        let (items, next) = page.select(all.clone(), itself);
        assert_eq!(items.len(), 2);
        let token = next.unwrap();
        let (rest, next) = Page::from_query(&query(&[("limit", "2"), ("continue", &token)]))
            .unwrap()
            .select(all.clone(), itself);
        assert_eq!(next, None);
        let mut seen: Vec<&Entry> = items.iter().chain(&rest).collect();
        seen.dedup();
        assert_eq!(seen.len(), 4, "every item once: {token}");
    }

    #[test]
    fn malformed_parameters_are_named() {
        for (pairs, named) in [
            (vec![("limit", "0")], "limit"),
            (vec![("limit", "-1")], "limit"),
            (vec![("limit", "10001")], "limit"),
            (vec![("limit", "ten")], "limit"),
            (vec![("limit", "2"), ("continue", "12/p1")], "continue"),
            (vec![("limit", "2"), ("continue", "c-4/p1")], "continue"),
            (vec![("limit", "2"), ("continue", "c4")], "continue"),
            (vec![("limit", "2"), ("continue", "c4/a b")], "continue"),
        ] {
            let err = Page::from_query(&query(&pairs)).unwrap_err();
            assert_eq!(err.status, axum::http::StatusCode::BAD_REQUEST);
            assert!(err.message.contains(named), "{pairs:?}: {}", err.message);
        }
    }

    #[test]
    fn the_next_url_keeps_the_other_parameters() {
        let uri: Uri = "/v2/projects/p/composite-apps?limit=2&continue=c4/x&app=a"
            .parse()
            .unwrap();
        assert_eq!(
            next_url(&uri, "c9/y"),
            "/v2/projects/p/composite-apps?limit=2&app=a&continue=c9/y"
        );
    }
}
