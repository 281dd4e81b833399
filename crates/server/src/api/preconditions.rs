//! Entity tags and `If-Match` (RFC 9110 §8.8.3, §13.1.1), so that two scripts cannot silently overwrite each
//! other: a GET of a resource answers an `ETag` naming the stored revision of what PUT writes (the lifecycle
//! `state` shown beside a DIG or logical cloud is not part of it); a PUT or DELETE sent with `If-Match` is
//! carried out only while the resource is still at one of the tags it names (`*`: while it exists), else it is
//! refused with 412 `PreconditionFailed` and nothing is written.
//!
//! The check reads the resource inside the write's optimistic read set, so a write that lands between the check
//! and the commit makes the commit fail and the check run again: it cannot pass on a stale read.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use emco_appcontext::{Entry, ResourcePath};
use emco_store::Revision;

use crate::{ApiError, AppState};

/// The most entity tags one `If-Match` may list.
const MAX_TAGS: usize = 32;

/// The `ETag` of a stored resource: its revision, as a strong tag.
pub(crate) fn etag(entry: &Entry) -> HeaderValue {
    HeaderValue::from_str(&format!("\"{}\"", entry.mod_revision)).expect("digits are a valid header value")
}

/// What an `If-Match` header asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IfMatch {
    /// `*`: the resource exists.
    Exists,
    /// One of these strong tags (weak tags never match a strong comparison, so they are dropped).
    Tags(Vec<String>),
}

impl IfMatch {
    /// The request's `If-Match`, if it has one; 400 naming the header when it is not a list of entity tags.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Option<Self>, ApiError> {
        let mut values = headers.get_all(header::IF_MATCH).iter().peekable();
        if values.peek().is_none() {
            return Ok(None);
        }
        let mut tags = Vec::new();
        let mut any = false;
        let mut items = 0;
        for value in values {
            let text = value.to_str().map_err(|_| malformed("it is not visible ASCII"))?;
            for item in text.split(',').map(str::trim).filter(|item| !item.is_empty()) {
                items += 1;
                if item == "*" {
                    any = true;
                    continue;
                }
                let (weak, quoted) = match item.strip_prefix("W/") {
                    Some(rest) => (true, rest),
                    None => (false, item),
                };
                let tag = quoted
                    .strip_prefix('"')
                    .and_then(|rest| rest.strip_suffix('"'))
                    .filter(|tag| !tag.contains('"'))
                    .ok_or_else(|| {
                        malformed(&format!(
                            "'{}' is not an entity tag (a quoted string, as the ETag header gave it)",
                            emco_model::shown(item)
                        ))
                    })?;
                if items > MAX_TAGS {
                    return Err(malformed(&format!("it lists more than {MAX_TAGS} entity tags")));
                }
                if !weak {
                    tags.push(tag.to_string());
                }
            }
        }
        if items == 0 {
            Err(malformed("it is empty"))
        } else if any {
            Ok(Some(Self::Exists))
        } else {
            Ok(Some(Self::Tags(tags)))
        }
    }

    /// Whether a resource at `current` (`None`: absent) satisfies the condition.
    fn holds(&self, current: Option<Revision>) -> bool {
        match (self, current) {
            (_, None) => false,
            (Self::Exists, Some(_)) => true,
            (Self::Tags(tags), Some(revision)) => {
                let current = revision.to_string();
                tags.contains(&current)
            }
        }
    }
}

fn malformed(why: &str) -> ApiError {
    ApiError::invalid(format!("header If-Match is malformed: {why}"))
}

/// Checks a write's `If-Match` against the stored resource (read into the write's read set): 412
/// `PreconditionFailed` naming the resource and its current tag when it does not hold. No condition passes.
pub(crate) async fn check(
    state: &AppState,
    condition: Option<&IfMatch>,
    path: &ResourcePath,
) -> Result<(), ApiError> {
    let Some(condition) = condition else {
        return Ok(());
    };
    let current = state.catalog().find(path).await?.map(|entry| entry.mod_revision);
    if condition.holds(current) {
        return Ok(());
    }
    let now = match current {
        Some(revision) => format!("its ETag is now \"{revision}\""),
        None => "it does not exist".to_string(),
    };
    Err(ApiError::new(
        StatusCode::PRECONDITION_FAILED,
        "PreconditionFailed",
        format!(
            "If-Match does not hold for {} '{}': {now}; read it again and retry",
            path.kind().type_name(),
            path.display_name()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(values: &[&str]) -> Result<Option<IfMatch>, ApiError> {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::IF_MATCH, HeaderValue::from_str(value).unwrap());
        }
        IfMatch::from_headers(&headers)
    }

    #[test]
    fn if_match_is_read_as_rfc_9110_says() {
        assert_eq!(parse(&[]).unwrap(), None);
        assert_eq!(parse(&["*"]).unwrap(), Some(IfMatch::Exists));
        assert_eq!(
            parse(&["\"12\", W/\"13\"", "\"14\""]).unwrap(),
            Some(IfMatch::Tags(vec!["12".into(), "14".into()]))
        );
        for bad in ["12", "\"12", "\"1\"2\"", ""] {
            let err = parse(&[bad]).unwrap_err();
            assert!(err.message.contains("If-Match"), "{bad:?}: {}", err.message);
        }
        let many = vec!["\"1\""; MAX_TAGS + 1].join(",");
        assert!(parse(&[&many]).is_err());
    }

    #[test]
    fn only_the_current_strong_tag_or_a_star_holds() {
        let tags = IfMatch::Tags(vec!["7".into(), "9".into()]);
        assert!(tags.holds(Some(9)));
        assert!(!tags.holds(Some(8)));
        assert!(!tags.holds(None));
        assert!(IfMatch::Exists.holds(Some(1)));
        assert!(!IfMatch::Exists.holds(None));
        assert!(!parse(&["W/\"9\""]).unwrap().unwrap().holds(Some(9)));
    }
}
