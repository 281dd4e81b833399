//! Template values: what Go's `reflect.Value` is to text/template, for the data Helm charts see.
//!
//! Helm's data is Go values decoded from JSON (numbers are `float64`, objects `map[string]interface{}`), the results
//! of Sprig functions (`int`, `int64`, `[]string`, `map[string]interface{}`) and a few Go objects with methods
//! (`.Files`, `.Capabilities`). Maps are *shared and mutable*, as Go maps are: Sprig's `set`, `unset`, `merge` change a
//! dict in place and charts rely on every holder seeing the change. Lists are immutable (Sprig copies them).
//!
//! Maps may form cycles (`set $d "self" $d`); every recursive walk over values is depth-bounded
//! ([`MAX_VALUE_DEPTH`]) and every map created while a [`MapScope`] is alive is cleared when the scope ends, so a
//! cycle can neither hang a walk nor leak memory past one render.

use std::cell::{Ref, RefCell, RefMut};
use std::collections::BTreeMap;
use std::fmt;
use std::rc::{Rc, Weak};

use serde_json::Value as Json;

/// How deep a recursive walk over a value (printing, JSON, YAML, deep copy, equality) may go.
pub const MAX_VALUE_DEPTH: usize = 1_000;

/// A template value.
#[derive(Clone, Default)]
pub enum Value {
    /// Go's untyped nil (also a missing map key, which Helm's `missingkey=zero` yields as a nil interface).
    #[default]
    Nil,
    /// `bool`.
    Bool(bool),
    /// `int` / `int64`.
    Int(i64),
    /// `float64` (every number that comes from values or JSON).
    Float(f64),
    /// `string`.
    String(Rc<str>),
    /// `[]byte` (`.Files.GetBytes`).
    Bytes(Rc<[u8]>),
    /// `[]interface{}` / `[]string`.
    List(Rc<Vec<Value>>),
    /// `map[string]interface{}`, shared and mutable.
    Map(Map),
    /// A Go object with fields and methods (`.Files`, `.Capabilities`, …).
    Object(Rc<dyn Object>),
}

/// A Go object exposed to templates: fields, methods with arguments, and how Go would print or marshal it.
pub trait Object {
    /// Go's type name as `%T` prints it, e.g. `*common.Capabilities`.
    fn type_name(&self) -> &str;
    /// A field or a method without arguments (`.Capabilities.KubeVersion`, `.KubeVersion.Version`); `None` if the
    /// type has no such field or method (Go: "can't evaluate field X in type T").
    fn field(&self, name: &str) -> Option<Value>;
    /// Calls method `name` with `args` (`.Files.Get "x"`, `.APIVersions.Has "policy/v1"`); `None` if the type has no
    /// such method.
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>>;
    /// How `%v` prints it (a `String()` method's result, or Go's struct printing).
    fn display(&self) -> String;
    /// What `json.Marshal` (and so `toJson`/`toYaml`) makes of it.
    fn to_value(&self) -> Value;
    /// The list or map a Go object *is* when it is a slice or map type with methods (`.Files` is a
    /// `map[string][]byte`, `.Capabilities.APIVersions` a `[]string`): what `range`, `len` and `index` see. `None`
    /// for structs.
    fn collection(&self) -> Option<Value> {
        None
    }
}

/// A shared, mutable `map[string]interface{}` with Go's key order (sorted) for `range` and printing.
#[derive(Clone)]
pub struct Map(Rc<RefCell<BTreeMap<String, Value>>>);

/// The maps created while one [`MapScope`] was alive.
type ScopeMaps = Vec<Weak<RefCell<BTreeMap<String, Value>>>>;

thread_local! {
    static SCOPES: RefCell<Vec<ScopeMaps>> = const { RefCell::new(Vec::new()) };
}

impl Map {
    /// A new empty map.
    #[must_use]
    pub fn new() -> Self {
        Self::from_entries(BTreeMap::new())
    }

    /// A new map holding `entries`.
    #[must_use]
    pub fn from_entries(entries: BTreeMap<String, Value>) -> Self {
        let inner = Rc::new(RefCell::new(entries));
        SCOPES.with(|scopes| {
            if let Some(scope) = scopes.borrow_mut().last_mut() {
                scope.push(Rc::downgrade(&inner));
            }
        });
        Self(inner)
    }

    /// Reads the entries.
    ///
    /// # Panics
    /// Never while no borrow_mut is held across a call back into templates (functions take and drop borrows).
    #[must_use]
    pub fn borrow(&self) -> Ref<'_, BTreeMap<String, Value>> {
        self.0.borrow()
    }

    /// Changes the entries.
    #[must_use]
    pub fn borrow_mut(&self) -> RefMut<'_, BTreeMap<String, Value>> {
        self.0.borrow_mut()
    }

    /// The value under `key` (a clone: maps and lists inside are shared).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Value> {
        self.0.borrow().get(key).cloned()
    }

    /// Sets `key` to `value`.
    pub fn insert(&self, key: impl Into<String>, value: Value) {
        self.0.borrow_mut().insert(key.into(), value);
    }

    /// Removes `key`.
    pub fn remove(&self, key: &str) -> Option<Value> {
        self.0.borrow_mut().remove(key)
    }

    /// Whether `key` is present.
    #[must_use]
    pub fn contains_key(&self, key: &str) -> bool {
        self.0.borrow().contains_key(key)
    }

    /// Number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }

    /// Whether the map is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }

    /// The keys in Go's order (sorted).
    #[must_use]
    pub fn keys(&self) -> Vec<String> {
        self.0.borrow().keys().cloned().collect()
    }

    /// The entries in Go's order (sorted), cloned so callers hold no borrow.
    #[must_use]
    pub fn entries(&self) -> Vec<(String, Value)> {
        self.0
            .borrow()
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    }

    /// Whether both are the same map (Go: the same map header).
    #[must_use]
    pub fn ptr_eq(&self, other: &Map) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Default for Map {
    fn default() -> Self {
        Self::new()
    }
}

/// Clears every map created while it was alive when dropped (so reference cycles made by templates are broken and
/// freed). Scopes nest; a map belongs to the innermost scope alive when it was created.
#[must_use = "maps are cleared when the scope is dropped"]
pub struct MapScope {
    _private: (),
}

impl MapScope {
    /// Opens a scope.
    pub fn open() -> Self {
        SCOPES.with(|scopes| scopes.borrow_mut().push(Vec::new()));
        Self { _private: () }
    }
}

impl Drop for MapScope {
    fn drop(&mut self) {
        let maps = SCOPES
            .with(|scopes| scopes.borrow_mut().pop())
            .unwrap_or_default();
        for map in maps {
            if let Some(map) = map.upgrade() {
                // Values dropped here may drop other maps; take them out first so no borrow is held meanwhile.
                let entries = std::mem::take(&mut *map.borrow_mut());
                drop(entries);
            }
        }
    }
}

/// Go's reflect kinds, as Sprig's `kindOf` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// nil interface
    Invalid,
    /// `bool`
    Bool,
    /// `int`, `int64`
    Int,
    /// `float64`
    Float64,
    /// `string`
    String,
    /// slices
    Slice,
    /// maps
    Map,
    /// structs and pointers to them
    Struct,
}

impl Kind {
    /// The name Go's `reflect.Kind.String()` gives.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Kind::Invalid => "invalid",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Float64 => "float64",
            Kind::String => "string",
            Kind::Slice => "slice",
            Kind::Map => "map",
            Kind::Struct => "struct",
        }
    }
}

impl Value {
    /// A string value.
    #[must_use]
    pub fn string(text: impl AsRef<str>) -> Self {
        Value::String(Rc::from(text.as_ref()))
    }

    /// A list value.
    #[must_use]
    pub fn list(items: Vec<Value>) -> Self {
        Value::List(Rc::new(items))
    }

    /// Go's truth (`if`, `with`, `and`, `or`, `not`, Sprig's `empty`): false for nil, false, 0, "", and empty
    /// lists and maps.
    #[must_use]
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(flag) => *flag,
            Value::Int(int) => *int != 0,
            Value::Float(float) => *float != 0.0,
            Value::String(text) => !text.is_empty(),
            Value::Bytes(bytes) => !bytes.is_empty(),
            Value::List(items) => !items.is_empty(),
            Value::Map(map) => !map.is_empty(),
            // A slice or map type with methods is true when it is not empty; a struct always is.
            Value::Object(object) => object
                .collection()
                .is_none_or(|collection| collection.is_truthy()),
        }
    }

    /// Go's reflect kind.
    #[must_use]
    pub fn kind(&self) -> Kind {
        match self {
            Value::Nil => Kind::Invalid,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Int,
            Value::Float(_) => Kind::Float64,
            Value::String(_) => Kind::String,
            Value::Bytes(_) | Value::List(_) => Kind::Slice,
            Value::Map(_) => Kind::Map,
            Value::Object(_) => Kind::Struct,
        }
    }

    /// Go's type name as `%T` prints it.
    #[must_use]
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "<nil>".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Float(_) => "float64".into(),
            Value::String(_) => "string".into(),
            Value::Bytes(_) => "[]uint8".into(),
            Value::List(_) => "[]interface {}".into(),
            Value::Map(_) => "map[string]interface {}".into(),
            Value::Object(object) => object.type_name().into(),
        }
    }

    /// The text of a string value.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    /// The map of a map value.
    #[must_use]
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(map) => Some(map),
            _ => None,
        }
    }

    /// The items of a list value.
    #[must_use]
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// Whether it is nil.
    #[must_use]
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    /// Converts decoded JSON into a value the way Helm's data is: every number becomes a `float64`.
    #[must_use]
    pub fn from_json(json: &Json) -> Self {
        match json {
            Json::Null => Value::Nil,
            Json::Bool(flag) => Value::Bool(*flag),
            Json::Number(number) => Value::Float(number.as_f64().unwrap_or(0.0)),
            Json::String(text) => Value::string(text),
            Json::Array(items) => Value::list(items.iter().map(Value::from_json).collect()),
            Json::Object(map) => Value::Map(Map::from_entries(
                map.iter()
                    .map(|(key, value)| (key.clone(), Value::from_json(value)))
                    .collect(),
            )),
        }
    }

    /// Converts to JSON as `json.Marshal` would see it (objects through [`Object::to_value`]); `Err` when the value
    /// nests deeper than [`MAX_VALUE_DEPTH`] (a cycle) or holds a float JSON cannot carry (NaN, ±Inf).
    pub fn to_json(&self) -> Result<Json, ValueError> {
        self.to_json_at(0)
    }

    fn to_json_at(&self, depth: usize) -> Result<Json, ValueError> {
        if depth > MAX_VALUE_DEPTH {
            return Err(ValueError::TooDeep);
        }
        Ok(match self {
            Value::Nil => Json::Null,
            Value::Bool(flag) => Json::Bool(*flag),
            Value::Int(int) => Json::from(*int),
            Value::Float(float) => {
                if float.is_finite() && float.fract() == 0.0 && float.abs() < 9.007_199_254_740_992e15 {
                    // Integral floats are whole numbers in JSON text either way; keep them as integers so that
                    // consumers (Kubernetes) see `replicas: 1`, not `1.0`.
                    Json::from(*float as i64)
                } else {
                    Json::Number(serde_json::Number::from_f64(*float).ok_or(ValueError::NotFinite(*float))?)
                }
            }
            Value::String(text) => Json::String(text.to_string()),
            Value::Bytes(bytes) => {
                // json.Marshal writes []byte as base64.
                use base64::Engine as _;
                Json::String(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
            Value::List(items) => Json::Array(
                items
                    .iter()
                    .map(|item| item.to_json_at(depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(map) => {
                let mut object = serde_json::Map::new();
                for (key, value) in map.entries() {
                    object.insert(key, value.to_json_at(depth + 1)?);
                }
                Json::Object(object)
            }
            Value::Object(object) => object.to_value().to_json_at(depth + 1)?,
        })
    }

    /// A deep copy (Sprig's `deepCopy`): maps and lists are copied, so changing the copy leaves the original alone.
    pub fn deep_copy(&self) -> Result<Value, ValueError> {
        self.deep_copy_at(0)
    }

    fn deep_copy_at(&self, depth: usize) -> Result<Value, ValueError> {
        if depth > MAX_VALUE_DEPTH {
            return Err(ValueError::TooDeep);
        }
        Ok(match self {
            Value::List(items) => Value::list(
                items
                    .iter()
                    .map(|item| item.deep_copy_at(depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(map) => {
                let mut copy = BTreeMap::new();
                for (key, value) in map.entries() {
                    copy.insert(key, value.deep_copy_at(depth + 1)?);
                }
                Value::Map(Map::from_entries(copy))
            }
            other => other.clone(),
        })
    }
}

impl From<bool> for Value {
    fn from(flag: bool) -> Self {
        Value::Bool(flag)
    }
}

impl From<i64> for Value {
    fn from(int: i64) -> Self {
        Value::Int(int)
    }
}

impl From<f64> for Value {
    fn from(float: f64) -> Self {
        Value::Float(float)
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::string(text)
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::String(Rc::from(text))
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Self {
        Value::list(items)
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Self {
        Value::Map(map)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => write!(f, "Nil"),
            Value::Bool(flag) => write!(f, "Bool({flag})"),
            Value::Int(int) => write!(f, "Int({int})"),
            Value::Float(float) => write!(f, "Float({float})"),
            Value::String(text) => write!(f, "String({text:?})"),
            Value::Bytes(bytes) => write!(f, "Bytes({} bytes)", bytes.len()),
            Value::List(items) => f.debug_list().entries(items.iter()).finish(),
            Value::Map(map) => match map.0.try_borrow() {
                // Depth-unbounded, but Debug is for tests and logs of small values only.
                Ok(entries) => f.debug_map().entries(entries.iter().take(64)).finish(),
                Err(_) => write!(f, "Map(<borrowed>)"),
            },
            Value::Object(object) => write!(f, "Object({})", object.type_name()),
        }
    }
}

/// Why a walk over a value stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// The value nests deeper than [`MAX_VALUE_DEPTH`] (usually a map that contains itself).
    #[error("value nests deeper than {MAX_VALUE_DEPTH} levels (a map that contains itself?)")]
    TooDeep,
    /// A float JSON cannot represent.
    #[error("json: unsupported value: {0}")]
    NotFinite(f64),
}

/// A `complex128`: what a template's complex or imaginary constant (`1i`, `1+2i`) evaluates to. Go prints it
/// `(1+2i)`, each part as `%v` prints a float; `encoding/json` cannot marshal it (Go's `toJson` and `toYaml` then
/// give an empty string; here it marshals as `null`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Complex(pub f64, pub f64);

impl Object for Complex {
    fn type_name(&self) -> &str {
        "complex128"
    }

    fn field(&self, _name: &str) -> Option<Value> {
        None
    }

    fn call(&self, _name: &str, _args: &[Value]) -> Option<Result<Value, String>> {
        None
    }

    fn display(&self) -> String {
        let real = super::fmt::sprint_value(&Value::Float(self.0));
        let imaginary = super::fmt::sprint_value(&Value::Float(self.1));
        let sign = if imaginary.starts_with(['-', '+']) {
            ""
        } else {
            "+"
        };
        format!("({real}{sign}{imaginary}i)")
    }

    fn to_value(&self) -> Value {
        Value::Nil
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_are_shared_and_cycles_are_freed_with_their_scope() {
        let weak;
        {
            let _scope = MapScope::open();
            let map = Map::new();
            let alias = Value::Map(map.clone());
            map.insert("self", alias.clone());
            assert!(alias.as_map().is_some_and(|m| m.contains_key("self")));
            assert_eq!(Value::Map(map.clone()).to_json(), Err(ValueError::TooDeep));
            weak = Rc::downgrade(&map.0);
        }
        assert!(weak.upgrade().is_none(), "the cycle outlived its scope");
    }

    #[test]
    fn json_numbers_become_floats_and_integral_floats_marshal_as_integers() {
        let value = Value::from_json(&serde_json::json!({"n": 3, "f": 1.5, "l": [true, null, "x"]}));
        let map = value.as_map().expect("map");
        assert!(matches!(map.get("n"), Some(Value::Float(n)) if n == 3.0));
        assert_eq!(
            value.to_json(),
            Ok(serde_json::json!({"f": 1.5, "l": [true, null, "x"], "n": 3}))
        );
        let copy = value.deep_copy().expect("copy");
        copy.as_map().expect("map").insert("n", Value::Int(4));
        assert!(matches!(map.get("n"), Some(Value::Float(_))));
    }
}
