//! The function interface of the template engine: how a function is registered (name, arity, implementation), how
//! it reaches back into the executing template set (`include`, `tpl`), its errors, and the argument conversions Go's
//! reflection-based calls perform.
//!
//! Go checks a function's argument count before calling it and converts each argument to the parameter's type;
//! [`FuncDef::arity`] and the `param_*` helpers reproduce that, including Go's messages, so that a chart Helm rejects
//! is rejected here with the same words.

use std::collections::HashMap;

use super::Limit;
use super::value::Value;

/// The largest string or byte value a function may build (`repeat`, `indent`, `printf "%*d"`, …). Bigger results
/// are an error, never an allocation.
pub const MAX_TEXT_BYTES: usize = 32 << 20;

/// The most items a function may put in a list (`until`, `seq`, `splitList`, …).
pub const MAX_LIST_ITEMS: usize = 1 << 20;

/// A function's failure; the engine reports it as Go does: `error calling NAME: MESSAGE`.
///
/// Go errors wrap other errors, and Helm formats a failed render by walking that chain (`errors.Unwrap`), so an
/// error keeps the texts of the errors it wraps: `chain[0]` is `Error()` of the first wrapped error, `chain[1]` of
/// the one it wraps, and so on (empty for an error that wraps nothing). `include` fills it with the failed inner
/// execution's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuncError {
    /// `Error()` of this error.
    pub message: String,
    /// `Error()` of each error it wraps, outermost first.
    pub chain: Vec<String>,
    /// The bound the function refused to exceed, if that is why it failed.
    pub limit: Option<Limit>,
}

impl FuncError {
    /// An error with `message` that wraps nothing.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            chain: Vec::new(),
            limit: None,
        }
    }

    /// An error with `message` for a result that would exceed `limit`.
    pub fn over_limit(limit: Limit, message: impl Into<String>) -> Self {
        Self {
            limit: Some(limit),
            ..Self::new(message)
        }
    }

    /// An error with `message` wrapping errors whose texts are `chain` (outermost first).
    pub fn wrapping(message: impl Into<String>, chain: Vec<String>) -> Self {
        Self {
            message: message.into(),
            chain,
            limit: None,
        }
    }
}

impl std::fmt::Display for FuncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FuncError {}

/// What a running function may ask of the template set that is executing it.
pub trait Runtime {
    /// Executes the template named `name` with `data` and returns its output (Helm's `include`).
    fn include(&mut self, name: &str, data: &Value) -> Result<String, FuncError>;
    /// Parses `text` as a template of the executing set (its definitions visible, its own `define`s private to this
    /// call) and executes it with `data` (Helm's `tpl`).
    fn tpl(&mut self, text: &str, data: &Value) -> Result<String, FuncError>;
    /// The name of the template being executed (`.Template.Name` of the caller; `tpl` names its text after it).
    fn template_name(&self) -> String;
}

/// A function implementation.
pub type FuncImpl = fn(&mut dyn Runtime, &[Value]) -> Result<Value, FuncError>;

/// How many arguments a function takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// Exactly n.
    Exact(usize),
    /// n or more (a variadic last parameter).
    AtLeast(usize),
}

impl Arity {
    /// Go's check before a call: `wrong number of args for NAME: want N got M` (variadic: `want at least N`).
    pub fn check(self, name: &str, got: usize) -> Result<(), FuncError> {
        match self {
            Arity::Exact(want) if got != want => Err(FuncError::new(format!(
                "wrong number of args for {name}: want {want} got {got}"
            ))),
            Arity::AtLeast(want) if got < want => Err(FuncError::new(format!(
                "wrong number of args for {name}: want at least {want} got {got}"
            ))),
            _ => Ok(()),
        }
    }
}

/// A registered function.
#[derive(Clone, Copy)]
pub struct FuncDef {
    /// Its name in templates.
    pub name: &'static str,
    /// How many arguments it takes.
    pub arity: Arity,
    /// The implementation.
    pub call: FuncImpl,
}

/// The functions a template set knows, by name. Parsing refuses a call to a name not in the map, as Go does.
#[derive(Clone, Default)]
pub struct FuncMap {
    funcs: HashMap<&'static str, FuncDef, std::hash::BuildHasherDefault<NameHasher>>,
}

/// FNV-1a over a function name. Every identifier of every template is looked up here while parsing, and the
/// names are short, where SipHash's setup dominates; only the map's own fixed names are ever inserted, so no
/// template can make lookups collide. (The parser's table of a text's own names uses it too: that table holds one
/// entry per distinct name of the text, so collisions cost at most what the text's size allows.)
pub(crate) struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

impl FuncMap {
    /// An empty map.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers (or replaces) a function.
    pub fn add(&mut self, name: &'static str, arity: Arity, call: FuncImpl) {
        self.funcs.insert(name, FuncDef { name, arity, call });
    }

    /// Removes a function (Helm removes Sprig's `env` and `expandenv`).
    pub fn remove(&mut self, name: &str) {
        self.funcs.remove(name);
    }

    /// The function named `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&FuncDef> {
        self.funcs.get(name)
    }

    /// Whether `name` is registered.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.funcs.contains_key(name)
    }

    /// Every registered name (unordered).
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.funcs.keys().copied()
    }
}

/// Go's message when an argument cannot be converted to a parameter's type.
#[must_use]
pub fn wrong_type(expected: &str, got: &Value) -> FuncError {
    FuncError::new(format!(
        "wrong type for value; expected {expected}; got {}",
        got.type_name()
    ))
}

/// A `string` parameter: Go accepts only a string; nil is refused (`invalid value; expected string`, which the
/// engine words as Go does for where the nil came from).
pub fn param_str(value: &Value) -> Result<String, FuncError> {
    match value {
        Value::String(text) => Ok(text.to_string()),
        Value::Nil => Err(FuncError::new("invalid value; expected string")),
        other => Err(wrong_type("string", other)),
    }
}

/// An `int` parameter: Go accepts only an integer; nil is refused.
pub fn param_int(value: &Value) -> Result<i64, FuncError> {
    match value {
        Value::Int(int) => Ok(*int),
        Value::Nil => Err(FuncError::new("invalid value; expected int")),
        other => Err(wrong_type("int", other)),
    }
}

/// A `float64` parameter: Go accepts a float, and an integer constant (converted); nil is refused.
pub fn param_float(value: &Value) -> Result<f64, FuncError> {
    match value {
        Value::Float(float) => Ok(*float),
        Value::Int(int) => Ok(*int as f64),
        Value::Nil => Err(FuncError::new("invalid value; expected float64")),
        other => Err(wrong_type("float64", other)),
    }
}

/// A `bool` parameter.
pub fn param_bool(value: &Value) -> Result<bool, FuncError> {
    match value {
        Value::Bool(flag) => Ok(*flag),
        Value::Nil => Err(FuncError::new("invalid value; expected bool")),
        other => Err(wrong_type("bool", other)),
    }
}

/// A `[]interface{}` parameter (Sprig list functions take `interface{}` and reflect; this is for the ones that
/// take a slice type). A slice may be nil in Go, so nil is an empty list.
pub fn param_list(value: &Value) -> Result<Vec<Value>, FuncError> {
    match value {
        Value::List(items) => Ok(items.to_vec()),
        Value::Nil => Ok(Vec::new()),
        other => Err(wrong_type("[]interface {}", other)),
    }
}

/// Refuses a result longer than [`MAX_TEXT_BYTES`] before it is built.
pub fn check_text_len(name: &str, bytes: u128) -> Result<(), FuncError> {
    if bytes > MAX_TEXT_BYTES as u128 {
        return Err(FuncError::over_limit(
            Limit::TextSize(MAX_TEXT_BYTES),
            format!("{name}: result of {bytes} bytes exceeds the limit of {MAX_TEXT_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Refuses a list longer than [`MAX_LIST_ITEMS`] before it is built.
pub fn check_list_len(name: &str, items: u128) -> Result<(), FuncError> {
    if items > MAX_LIST_ITEMS as u128 {
        return Err(FuncError::over_limit(
            Limit::ListItems(MAX_LIST_ITEMS),
            format!("{name}: list of {items} items exceeds the limit of {MAX_LIST_ITEMS} items"),
        ));
    }
    Ok(())
}

/// A [`Runtime`] for calling functions outside a template (unit tests, offline helpers): `include` and `tpl`
/// fail.
#[derive(Debug, Default)]
pub struct NoRuntime;

impl Runtime for NoRuntime {
    fn include(&mut self, name: &str, _data: &Value) -> Result<String, FuncError> {
        Err(FuncError::new(format!(
            "no template \"{name}\" associated with template"
        )))
    }

    fn tpl(&mut self, _text: &str, _data: &Value) -> Result<String, FuncError> {
        Err(FuncError::new("tpl needs an executing template"))
    }

    fn template_name(&self) -> String {
        String::new()
    }
}
