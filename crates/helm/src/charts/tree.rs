//! Values as Go holds them while Helm coalesces: `map[string]interface{}` tables are *shared references*, so a
//! shallow copy (`copyMap`) aliases its nested tables and a later merge into the copy changes the original. Helm's
//! results depend on that (a subchart's default `global` values leak into the parent's nested globals), so the
//! coalescing code works on [`Tree`]s with shared tables and converts to and from JSON at its edges.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value as Json;

/// A shared table.
pub(crate) type Table = Rc<RefCell<BTreeMap<String, Tree>>>;

/// A value during coalescing.
#[derive(Clone, Debug)]
pub(crate) enum Tree {
    /// `nil`.
    Null,
    /// Anything that is not a table (lists included: Helm never merges into lists).
    Scalar(Json),
    /// `map[string]interface{}`.
    Table(Table),
}

/// How deep conversions and merges go (deeper nesting is cut off, never a stack overflow).
pub(crate) const MAX_DEPTH: usize = 512;

pub(crate) fn new_table() -> Table {
    Rc::new(RefCell::new(BTreeMap::new()))
}

impl Tree {
    /// A deep copy of JSON (Go's `copystructure.Copy`): fresh tables.
    pub(crate) fn from_json(json: &Json) -> Tree {
        Self::from_json_at(json, 0)
    }

    fn from_json_at(json: &Json, depth: usize) -> Tree {
        match json {
            Json::Null => Tree::Null,
            Json::Object(map) if depth < MAX_DEPTH => Tree::Table(Rc::new(RefCell::new(
                map.iter()
                    .map(|(key, value)| (key.clone(), Self::from_json_at(value, depth + 1)))
                    .collect(),
            ))),
            Json::Object(_) => Tree::Table(new_table()),
            other => Tree::Scalar(other.clone()),
        }
    }

    /// The JSON of a value (shared tables written out at each place).
    pub(crate) fn to_json(&self) -> Json {
        self.to_json_at(0)
    }

    fn to_json_at(&self, depth: usize) -> Json {
        match self {
            Tree::Null => Json::Null,
            Tree::Scalar(json) => json.clone(),
            Tree::Table(table) => {
                if depth >= MAX_DEPTH {
                    return Json::Object(serde_json::Map::new());
                }
                let entries: Vec<(String, Tree)> = snapshot(table);
                Json::Object(
                    entries
                        .into_iter()
                        .map(|(key, value)| (key, value.to_json_at(depth + 1)))
                        .collect(),
                )
            }
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Tree::Null)
    }

    /// A deep copy (`copystructure.Copy`).
    pub(crate) fn deep_copy(&self) -> Tree {
        self.deep_copy_at(0)
    }

    fn deep_copy_at(&self, depth: usize) -> Tree {
        match self {
            Tree::Null => Tree::Null,
            Tree::Scalar(json) => Tree::Scalar(json.clone()),
            Tree::Table(table) if depth < MAX_DEPTH => Tree::Table(Rc::new(RefCell::new(
                table
                    .borrow()
                    .iter()
                    .map(|(key, value)| (key.clone(), value.deep_copy_at(depth + 1)))
                    .collect(),
            ))),
            Tree::Table(_) => Tree::Table(new_table()),
        }
    }
}

/// The entries of a table, cloned (tables inside stay shared), so no borrow is held while they are used.
pub(crate) fn snapshot(table: &Table) -> Vec<(String, Tree)> {
    table
        .borrow()
        .iter()
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

pub(crate) fn get(table: &Table, key: &str) -> Option<Tree> {
    table.borrow().get(key).cloned()
}

pub(crate) fn set(table: &Table, key: &str, value: Tree) {
    table.borrow_mut().insert(key.to_string(), value);
}

/// `common.Values.Table(path)`: the table at a dotted path.
pub(crate) fn table_at(table: &Table, path: &str) -> Option<Table> {
    let mut current = table.clone();
    for part in path.split('.') {
        let next = match get(&current, part) {
            Some(Tree::Table(next)) => next,
            _ => return None,
        };
        current = next;
    }
    Some(current)
}

/// `common.Values.PathValue(path)`: a non-table value at a dotted path (`None`: no value there).
pub(crate) fn path_value(table: &Table, path: &str) -> Option<Tree> {
    if path.is_empty() {
        return None;
    }
    let (parent, key) = match path.rsplit_once('.') {
        Some((parent, key)) => (table_at(table, parent)?, key),
        None => (table.clone(), path),
    };
    match get(&parent, key) {
        Some(Tree::Table(_)) | None => None,
        Some(value) => Some(value),
    }
}

/// Go's `%v` of a JSON scalar (for `import-values` map entries, warnings).
pub(crate) fn go_sprint(json: &Json) -> String {
    match json {
        Json::Null => "<nil>".into(),
        Json::Bool(flag) => flag.to_string(),
        Json::Number(number) => match number.as_f64() {
            Some(float) => format_g(float, false),
            None => number.to_string(),
        },
        Json::String(text) => text.clone(),
        Json::Array(items) => format!("[{}]", items.iter().map(go_sprint).collect::<Vec<_>>().join(" ")),
        Json::Object(map) => format!(
            "map[{}]",
            map.iter()
                .map(|(key, value)| format!("{key}:{}", go_sprint(value)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// Go's shortest `%g` (`strconv.FormatFloat(f, 'g', -1, 32 or 64)`, also what `%v` prints for a float64).
pub(crate) fn format_g(value: f64, single: bool) -> String {
    let (sci, is_inf, is_nan) = if single {
        let single = value as f32;
        (format!("{single:e}"), single.is_infinite(), single.is_nan())
    } else {
        (format!("{value:e}"), value.is_infinite(), value.is_nan())
    };
    if is_nan {
        return "NaN".into();
    }
    if is_inf {
        return if value > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if mantissa.starts_with('-') { "-" } else { "" };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return "0".into();
    }
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    if exp < 0 {
        let zeros = "0".repeat(usize::try_from(-exp - 1).unwrap_or(0));
        return format!("{sign}0.{zeros}{digits}");
    }
    let point = usize::try_from(exp).unwrap_or(0) + 1;
    if digits.len() <= point {
        format!("{sign}{digits}{}", "0".repeat(point - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..point], &digits[point..])
    }
}
