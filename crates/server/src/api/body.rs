//! Reading request inputs: path names, JSON bodies and multipart forms, each failure a clear 4xx that names the
//! offending input.

use axum::body::Bytes;
use axum::extract::Path;
use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::http::{HeaderMap, StatusCode, header};
use emco_model::validate_name;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use super::strict_json::{JsonPath, Step, StrictJsonError, parse_strict};
use crate::ApiError;

/// The path parameters of a route, in URL order.
pub(crate) type PathNames = Result<Path<Vec<(String, String)>>, PathRejection>;

/// The names in the URL, each checked with EMCO's name rule (a name can never hold a `/`).
pub(crate) fn path_names(path: PathNames) -> Result<Vec<String>, ApiError> {
    let Path(pairs) = path.map_err(|err| ApiError::invalid(format!("bad URL: {err}")))?;
    pairs
        .into_iter()
        .map(|(param, value)| {
            validate_name(&param.replace('_', " "), &value)?;
            Ok(value)
        })
        .collect()
}

fn body_rejection(status: StatusCode, detail: String, limit: usize) -> ApiError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            status,
            "PayloadTooLarge",
            format!("request body is larger than the limit of {limit} bytes"),
        )
    } else {
        ApiError::invalid(format!("cannot read the request body: {detail}"))
    }
}

/// A JSON object body: empty → 400, too large → 413, not sent as JSON (`Content-Type`) → 415, not JSON → 422,
/// not an object → 400.
pub(crate) fn json_body(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    limit: usize,
) -> Result<Json, ApiError> {
    let bytes = body.map_err(|rejection| body_rejection(rejection.status(), rejection.body_text(), limit))?;
    if !bytes.is_empty() {
        check_json_content_type(headers)?;
    }
    parse_json_object(&bytes, "request body")
}

/// 415 unless the `Content-Type` is `application/json` or `application/*+json` (parameters allowed). A browser
/// sends a cross-origin `text/plain` body without asking the server first; this makes such a request fail.
fn check_json_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Err(unsupported("the request has no Content-Type".to_string()));
    };
    let shown = String::from_utf8_lossy(value.as_bytes()).into_owned();
    if is_json_media_type(&shown) {
        Ok(())
    } else {
        Err(unsupported(format!("Content-Type '{shown}' is not supported")))
    }
}

fn unsupported(what: String) -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UnsupportedMediaType",
        format!("{what}: the request body must be JSON sent as Content-Type: application/json"),
    )
}

/// `application/json` or `application/<anything>+json`, case-insensitive, parameters ignored.
fn is_json_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let Some(subtype) = essence.strip_prefix("application/") else {
        return false;
    };
    subtype == "json"
        || subtype.strip_suffix("+json").is_some_and(|prefix| {
            !prefix.is_empty()
                && prefix.chars().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '!' | '#' | '$' | '&' | '^')
                })
        })
}

/// Parses bytes as a JSON object, naming `what` in errors: blank → 400, not JSON → 422, a key repeated in an
/// object or nesting deeper than [`super::strict_json::MAX_DEPTH`] → 400 naming the key or place, not an object
/// → 400.
pub(crate) fn parse_json_object(bytes: &[u8], what: &str) -> Result<Json, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid(format!(
            "Empty body: the {what} must be a JSON object"
        )));
    }
    let value = parse_strict(bytes).map_err(|err| match err {
        StrictJsonError::Malformed(err) => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "MalformedJson",
            format!("the {what} is not valid JSON: {err}"),
        ),
        duplicate @ StrictJsonError::DuplicateKey { .. } => ApiError::new(
            StatusCode::BAD_REQUEST,
            "DuplicateKey",
            format!("{duplicate} of the {what}: a key may appear only once in an object"),
        ),
        too_deep @ StrictJsonError::TooDeep { .. } => {
            ApiError::invalid(format!("the {what} is nested too deeply: {too_deep}"))
        }
    })?;
    if !value.is_object() {
        return Err(ApiError::invalid(format!(
            "the {what} must be a JSON object, not {}",
            describe(&value)
        )));
    }
    Ok(value)
}

/// Decodes a JSON value into a model type and checks it, returning the normalized body (what is stored and
/// echoed: unknown fields dropped, defaults filled). `metadata` and `spec`, wherever a body has them, must be
/// objects (also for kinds that ignore their `spec`); a field of the wrong type is refused naming it
/// (`spec.wait: expected a non-negative integer, found a string`).
pub(crate) fn decode<T: DeserializeOwned + Serialize>(
    raw: Json,
    validate: impl FnOnce(&T) -> Result<(), ApiError>,
) -> Result<(T, Json), ApiError> {
    for field in ["metadata", "spec"] {
        if let Some(value) = raw.get(field)
            && !value.is_object()
        {
            return Err(ApiError::invalid(format!(
                "{field}: expected an object, found {}",
                describe(value)
            )));
        }
    }
    let typed: T = match serde_path_to_error::deserialize(&raw) {
        Ok(typed) => typed,
        Err(err) => {
            // JSON Schema's integers include `2704.0`: a whole number written with a fraction is that integer.
            let whole = whole_numbers_as_integers(&raw);
            match (whole != raw).then(|| serde_path_to_error::deserialize(&whole)) {
                Some(Ok(typed)) => typed,
                _ => return Err(ApiError::invalid(wrong_shape(&raw, &err))),
            }
        }
    };
    let normalized = serde_json::to_value(&typed).map_err(ApiError::internal)?;
    // serde reads a struct from an array too (`"rollout": [null, null]`): an object field given as an array is
    // refused, as the document's `type: object` says.
    if let Some(field) = array_for_object(&raw, &normalized, String::new()) {
        return Err(ApiError::invalid(format!(
            "{field}: expected an object, found an array"
        )));
    }
    validate(&typed)?;
    Ok((typed, normalized))
}

/// The first field (`spec.rollout`) where `raw` holds an array and the decoded body an object.
fn array_for_object(raw: &Json, decoded: &Json, path: String) -> Option<String> {
    match (raw, decoded) {
        (Json::Array(_), Json::Object(_)) => Some(path),
        (Json::Object(raw), Json::Object(decoded)) => raw.iter().find_map(|(key, value)| {
            let inner = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            decoded
                .get(key)
                .and_then(|decoded| array_for_object(value, decoded, inner))
        }),
        (Json::Array(raw), Json::Array(decoded)) => raw
            .iter()
            .zip(decoded)
            .enumerate()
            .find_map(|(index, (raw, decoded))| array_for_object(raw, decoded, format!("{path}[{index}]"))),
        _ => None,
    }
}

/// `value` with every number that is a whole number written with a fraction (`2704.0`, within ±2^53, where a
/// double is exact) as that integer. The body's nesting is bounded by the strict reader already.
fn whole_numbers_as_integers(value: &Json) -> Json {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match value {
        Json::Number(number) if !number.is_i64() && !number.is_u64() => match number.as_f64() {
            #[allow(clippy::cast_possible_truncation)] // whole and within ±2^53: exact
            Some(float) if float.fract() == 0.0 && float.abs() <= EXACT => Json::from(float as i64),
            _ => value.clone(),
        },
        Json::Array(items) => Json::Array(items.iter().map(whole_numbers_as_integers).collect()),
        Json::Object(map) => Json::Object(
            map.iter()
                .map(|(key, item)| (key.clone(), whole_numbers_as_integers(item)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What a JSON value is, for messages (never a string's content: it may be long or secret).
fn describe(value: &Json) -> String {
    match value {
        Json::Null => "null".to_string(),
        Json::Bool(value) => format!("a boolean ({value})"),
        Json::Number(number) => format!("a number ({number})"),
        Json::String(_) => "a string".to_string(),
        Json::Array(_) => "an array".to_string(),
        Json::Object(_) => "an object".to_string(),
    }
}

/// serde's description of what it expected, in JSON's words.
fn expected_in_json_words(expected: &str) -> String {
    let words = match expected.trim() {
        "a map" | "map" => "an object",
        "a sequence" | "sequence" => "an array",
        "a string" | "string" | "a borrowed string" | "a character" | "char" => "a string",
        "a boolean" | "bool" => "true or false",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "f32" | "f64" => "a number",
        other if other.starts_with("struct ") => "an object",
        other if other.starts_with("tuple") => "an array",
        other => return other.to_string(),
    };
    words.to_string()
}

/// The message for a body that is JSON but not the shape of the resource: the field's path, then what was
/// expected and what was found (`spec: expected an object, found an array`).
fn wrong_shape(raw: &Json, err: &serde_path_to_error::Error<serde_json::Error>) -> String {
    use serde_path_to_error::Segment;
    let steps = err
        .path()
        .iter()
        .map(|segment| match segment {
            Segment::Seq { index } => Step::Index(*index),
            Segment::Map { key } => Step::Key(key.clone()),
            Segment::Enum { variant } => Step::Key(variant.clone()),
            Segment::Unknown => Step::Key("?".to_string()),
        })
        .collect();
    let path = JsonPath::new(steps);
    let inner = err.inner().to_string();
    if let Some(field) = inner
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return format!("{} is required", path.key(field));
    }
    let mismatch = inner
        .strip_prefix("invalid type: ")
        .or_else(|| inner.strip_prefix("invalid value: "));
    if let Some((serde_found, expected)) = mismatch.and_then(|rest| rest.rsplit_once(", expected ")) {
        let found = path.find(raw).map_or_else(|| serde_found.to_string(), describe);
        let expected = expected_in_json_words(expected);
        return if path.is_root() {
            format!("expected {expected}, found {found}")
        } else {
            format!("{path}: expected {expected}, found {found}")
        };
    }
    // Anything else serde says quotes the input between backticks (`unknown variant `…`, expected one of …`):
    // each quote shortened, as every message quotes input.
    let inner = shorten_quotes(&inner);
    if path.is_root() {
        inner
    } else {
        format!("{path}: {inner}")
    }
}

/// `text` with each part between a pair of backticks quoted through [`emco_model::shown`].
fn shorten_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(1024));
    let mut parts = text.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (index, part) in parts.enumerate() {
        out.push('`');
        if index % 2 == 0 {
            out.push_str(&emco_model::shown(part));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The parts of a multipart request.
#[derive(Default)]
pub(crate) struct FormParts {
    /// The `metadata` part, as JSON.
    pub(crate) metadata: Option<Json>,
    /// The `file` part.
    pub(crate) file: Option<Bytes>,
    /// The `files` parts (gac customizations): each file's name and content, in the order sent.
    pub(crate) files: Vec<(String, Bytes)>,
}

/// The most `files` parts one form holds.
pub(crate) const MAX_FORM_FILES: usize = 64;

/// Reads a multipart form with parts `metadata` (JSON) and `file` (bytes); other parts are ignored.
pub(crate) async fn form_parts(
    form: Result<Multipart, MultipartRejection>,
    limit: usize,
) -> Result<FormParts, ApiError> {
    let mut form = form.map_err(|rejection| {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!(
                "expected multipart/form-data with parts 'metadata' and 'file': {}",
                rejection.body_text()
            ),
        )
    })?;
    let mut parts = FormParts::default();
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(err) => return Err(body_rejection(err.status(), err.body_text(), limit)),
        };
        let name = field.name().unwrap_or_default().to_string();
        let file_name = field.file_name().unwrap_or_default().to_string();
        let bytes = field
            .bytes()
            .await
            .map_err(|err| body_rejection(err.status(), err.body_text(), limit))?;
        match name.as_str() {
            "metadata" => parts.metadata = Some(parse_json_object(&bytes, "multipart part 'metadata'")?),
            "file" => parts.file = Some(bytes),
            "files" if parts.files.len() >= MAX_FORM_FILES => {
                return Err(ApiError::invalid(format!(
                    "multipart parts 'files': at most {MAX_FORM_FILES} files are accepted"
                )));
            }
            "files" => parts.files.push((file_name, bytes)),
            _ => {}
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::{decode, is_json_media_type, shorten_quotes};

    #[test]
    fn a_whole_number_written_with_a_fraction_is_that_integer() {
        let body = |port: serde_json::Value| serde_json::json!({"metadata": {"name": "c"}, "spec": {"host": "h", "port": port}});
        let (controller, stored) =
            decode::<emco_model::Controller>(body(serde_json::json!(2704.0)), |_| Ok(())).expect("accepted");
        assert_eq!(
            (controller.spec.port, &stored["spec"]["port"]),
            (2704, &serde_json::json!(2704))
        );
        let err = decode::<emco_model::DeploymentIntentGroup>(
            serde_json::json!({"metadata": {"name": "d"}, "spec": {"compositeProfile": "p", "version": "v", "rollout": [null, null]}}),
            |_| Ok(()),
        )
        .expect_err("an array is no rollout");
        assert!(
            format!("{err:?}").contains("spec.rollout: expected an object, found an array"),
            "{err:?}"
        );
        for refused in [
            serde_json::json!(2704.5),
            serde_json::json!(-1.0),
            serde_json::json!(1e300),
        ] {
            let err =
                decode::<emco_model::Controller>(body(refused.clone()), |_| Ok(())).expect_err("refused");
            assert!(format!("{err:?}").contains("spec.port"), "{refused}: {err:?}");
        }
    }

    #[test]
    fn serde_quotes_are_shortened() {
        let long = "a".repeat(5000);
        let shortened = shorten_quotes(&format!("unknown variant `{long}`, expected `Set` or `Get`"));
        assert!(shortened.len() < 200, "{shortened}");
        assert!(shortened.ends_with("…`, expected `Set` or `Get`"), "{shortened}");
        assert_eq!(shorten_quotes("missing `x` here"), "missing `x` here");
    }

    #[test]
    fn json_media_types() {
        for yes in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/merge-patch+json",
            "application/vnd.emco.v2+json ; q=1",
        ] {
            assert!(is_json_media_type(yes), "{yes}");
        }
        for no in [
            "text/plain",
            "text/json",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/+json",
            "application/jsonp",
            "",
        ] {
            assert!(!is_json_media_type(no), "{no}");
        }
    }
}
