//! Helm's function layer on top of Go templates: the Sprig and Helm functions simple real charts use (`default`,
//! `quote`, `toYaml`, `include`, `nindent`, `required`, `tpl`, string and list helpers), plus conversions between
//! JSON values and template values.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, Weak};

use gotmpl::{FuncMap, Template, TemplateError, Value};
use serde_json::Value as Json;

/// How deep `include` and `tpl` may nest before rendering stops (a self-including template would loop forever).
const MAX_INCLUDE_DEPTH: usize = 64;

/// Converts JSON into a template value (objects become maps, so a missing key reads as nil, not an error).
#[must_use]
pub fn json_to_value(json: &Json) -> Value {
    match json {
        Json::Null => Value::Nil,
        Json::Bool(flag) => Value::Bool(*flag),
        Json::Number(number) => match number.as_i64() {
            Some(int) => Value::Int(int),
            None => number
                .as_u64()
                .map_or_else(|| Value::Float(number.as_f64().unwrap_or(0.0)), Value::Uint),
        },
        Json::String(text) => Value::String(text.as_str().into()),
        Json::Array(items) => Value::List(items.iter().map(json_to_value).collect()),
        Json::Object(map) => Value::Map(Arc::new(
            map.iter()
                .map(|(key, value)| (Arc::from(key.as_str()), json_to_value(value)))
                .collect(),
        )),
    }
}

/// Converts a template value back to JSON (functions become null).
#[must_use]
pub fn value_to_json(value: &Value) -> Json {
    match value {
        Value::Bool(flag) => Json::Bool(*flag),
        Value::Int(int) => Json::from(*int),
        Value::Uint(uint) => Json::from(*uint),
        Value::Float(float) => serde_json::Number::from_f64(*float).map_or(Json::Null, Json::Number),
        Value::String(text) => Json::String(text.to_string()),
        Value::List(items) => Json::Array(items.iter().map(value_to_json).collect()),
        Value::Map(map) => Json::Object(
            map.iter()
                .map(|(key, value)| (key.to_string(), value_to_json(value)))
                .collect(),
        ),
        _ => Json::Null,
    }
}

fn err(name: &str, message: impl std::fmt::Display) -> TemplateError {
    TemplateError::Exec(format!("{name}: {message}"))
}

fn arity(name: &str, args: &[Value], expected: usize) -> Result<(), TemplateError> {
    if args.len() != expected {
        return Err(TemplateError::ArgCount {
            name: name.to_string(),
            expected,
            got: args.len(),
        });
    }
    Ok(())
}

/// Go's `fmt.Sprint` of a value, with nil as the empty string (as Sprig's string functions do).
fn text_of(value: &Value) -> String {
    match value {
        Value::Nil => String::new(),
        Value::String(text) => text.to_string(),
        other => other.to_string(),
    }
}

fn int_of(name: &str, value: &Value) -> Result<i64, TemplateError> {
    match value {
        Value::Int(int) => Ok(*int),
        Value::Uint(uint) => i64::try_from(*uint).map_err(|_| err(name, "number out of range")),
        Value::Float(float) => Ok(*float as i64),
        Value::String(text) => text
            .trim()
            .parse()
            .map_err(|_| err(name, format!("'{text}' is not a number"))),
        Value::Nil => Ok(0),
        Value::Bool(flag) => Ok(i64::from(*flag)),
        other => Err(err(
            name,
            format!("cannot convert {} to a number", other.type_name()),
        )),
    }
}

/// Sprig's `empty`: nil, false, 0, "", and empty lists and maps.
fn is_empty(value: &Value) -> bool {
    !gotmpl::is_true(value)
}

fn string(text: impl Into<String>) -> Value {
    Value::String(text.into().into())
}

fn indent_text(width: i64, text: &str) -> String {
    let pad = " ".repeat(usize::try_from(width).unwrap_or(0));
    text.split('\n')
        .map(|line| format!("{pad}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn to_yaml(value: &Value) -> Result<String, TemplateError> {
    let json = value_to_json(value);
    if matches!(&json, Json::Object(map) if map.is_empty()) {
        return Ok("{}".to_string());
    }
    if matches!(&json, Json::Array(items) if items.is_empty()) {
        return Ok("[]".to_string());
    }
    let text = serde_saphyr::to_string(&json).map_err(|e| err("toYaml", e))?;
    Ok(text.trim_end_matches('\n').to_string())
}

/// A slot through which `include` and `tpl` reach the template set they run in; filled once it is parsed.
#[derive(Clone, Default)]
pub struct TemplateSlot {
    template: Arc<OnceLock<Weak<Template>>>,
    depth: Arc<std::sync::atomic::AtomicUsize>,
}

impl TemplateSlot {
    /// Points the slot at the parsed template (a weak reference, so the template's functions do not keep it alive).
    pub fn fill(&self, template: &Arc<Template>) {
        let _ = self.template.set(Arc::downgrade(template));
    }

    fn with_template<T>(
        &self,
        name: &str,
        run: impl FnOnce(&Template) -> Result<T, TemplateError>,
    ) -> Result<T, TemplateError> {
        use std::sync::atomic::Ordering;
        let template = self
            .template
            .get()
            .and_then(Weak::upgrade)
            .ok_or_else(|| err(name, "no template set"))?;
        if self.depth.fetch_add(1, Ordering::SeqCst) >= MAX_INCLUDE_DEPTH {
            self.depth.fetch_sub(1, Ordering::SeqCst);
            return Err(err(
                name,
                format!("nested more than {MAX_INCLUDE_DEPTH} levels deep (a template includes itself?)"),
            ));
        }
        let result = run(&template);
        self.depth.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

type Func = fn(&[Value]) -> Result<Value, TemplateError>;

fn simple_funcs() -> BTreeMap<&'static str, Func> {
    let mut funcs: BTreeMap<&'static str, Func> = BTreeMap::new();
    funcs.insert("default", |args| match args {
        [fallback] => Ok(fallback.clone()),
        [fallback, given] => Ok(if is_empty(given) {
            fallback.clone()
        } else {
            given.clone()
        }),
        _ => Err(TemplateError::ArgCount {
            name: "default".into(),
            expected: 2,
            got: args.len(),
        }),
    });
    funcs.insert("empty", |args| {
        arity("empty", args, 1)?;
        Ok(Value::Bool(is_empty(&args[0])))
    });
    funcs.insert("coalesce", |args| {
        Ok(args
            .iter()
            .find(|value| !is_empty(value))
            .cloned()
            .unwrap_or(Value::Nil))
    });
    funcs.insert("ternary", |args| {
        arity("ternary", args, 3)?;
        Ok(if gotmpl::is_true(&args[2]) {
            args[0].clone()
        } else {
            args[1].clone()
        })
    });
    funcs.insert("quote", |args| {
        Ok(string(
            args.iter()
                .filter(|v| !matches!(v, Value::Nil))
                .map(|v| format!("{:?}", text_of(v)))
                .collect::<Vec<_>>()
                .join(" "),
        ))
    });
    funcs.insert("squote", |args| {
        Ok(string(
            args.iter()
                .filter(|v| !matches!(v, Value::Nil))
                .map(|v| format!("'{}'", text_of(v)))
                .collect::<Vec<_>>()
                .join(" "),
        ))
    });
    funcs.insert("toYaml", |args| {
        arity("toYaml", args, 1)?;
        Ok(string(to_yaml(&args[0])?))
    });
    funcs.insert("toJson", |args| {
        arity("toJson", args, 1)?;
        Ok(string(value_to_json(&args[0]).to_string()))
    });
    funcs.insert("fromYaml", |args| {
        arity("fromYaml", args, 1)?;
        let parsed: Json = serde_saphyr::from_str(&text_of(&args[0])).map_err(|e| err("fromYaml", e))?;
        Ok(json_to_value(&parsed))
    });
    funcs.insert("indent", |args| {
        arity("indent", args, 2)?;
        Ok(string(indent_text(
            int_of("indent", &args[0])?,
            &text_of(&args[1]),
        )))
    });
    funcs.insert("nindent", |args| {
        arity("nindent", args, 2)?;
        Ok(string(format!(
            "\n{}",
            indent_text(int_of("nindent", &args[0])?, &text_of(&args[1]))
        )))
    });
    funcs.insert("required", |args| {
        arity("required", args, 2)?;
        if matches!(&args[1], Value::Nil) || matches!(&args[1], Value::String(s) if s.is_empty()) {
            return Err(TemplateError::Exec(format!("required: {}", text_of(&args[0]))));
        }
        Ok(args[1].clone())
    });
    funcs.insert("trunc", |args| {
        arity("trunc", args, 2)?;
        let length = int_of("trunc", &args[0])?;
        let text: Vec<char> = text_of(&args[1]).chars().collect();
        let kept: String = if length >= 0 {
            text.iter().take(usize::try_from(length).unwrap_or(0)).collect()
        } else {
            let skip = text.len().saturating_sub(usize::try_from(-length).unwrap_or(0));
            text[skip..].iter().collect()
        };
        Ok(string(kept))
    });
    funcs.insert("trimSuffix", |args| {
        arity("trimSuffix", args, 2)?;
        let (suffix, text) = (text_of(&args[0]), text_of(&args[1]));
        Ok(string(text.strip_suffix(suffix.as_str()).unwrap_or(&text)))
    });
    funcs.insert("trimPrefix", |args| {
        arity("trimPrefix", args, 2)?;
        let (prefix, text) = (text_of(&args[0]), text_of(&args[1]));
        Ok(string(text.strip_prefix(prefix.as_str()).unwrap_or(&text)))
    });
    funcs.insert("trim", |args| {
        arity("trim", args, 1)?;
        Ok(string(text_of(&args[0]).trim()))
    });
    funcs.insert("upper", |args| {
        arity("upper", args, 1)?;
        Ok(string(text_of(&args[0]).to_uppercase()))
    });
    funcs.insert("lower", |args| {
        arity("lower", args, 1)?;
        Ok(string(text_of(&args[0]).to_lowercase()))
    });
    funcs.insert("title", |args| {
        arity("title", args, 1)?;
        let titled = text_of(&args[0])
            .split(' ')
            .map(|word| {
                let mut chars = word.chars();
                chars
                    .next()
                    .map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
            })
            .collect::<Vec<_>>()
            .join(" ");
        Ok(string(titled))
    });
    funcs.insert("replace", |args| {
        arity("replace", args, 3)?;
        Ok(string(
            text_of(&args[2]).replace(&text_of(&args[0]), &text_of(&args[1])),
        ))
    });
    funcs.insert("contains", |args| {
        arity("contains", args, 2)?;
        Ok(Value::Bool(text_of(&args[1]).contains(&text_of(&args[0]))))
    });
    funcs.insert("hasPrefix", |args| {
        arity("hasPrefix", args, 2)?;
        Ok(Value::Bool(text_of(&args[1]).starts_with(&text_of(&args[0]))))
    });
    funcs.insert("hasSuffix", |args| {
        arity("hasSuffix", args, 2)?;
        Ok(Value::Bool(text_of(&args[1]).ends_with(&text_of(&args[0]))))
    });
    funcs.insert("repeat", |args| {
        arity("repeat", args, 2)?;
        Ok(string(text_of(&args[1]).repeat(
            usize::try_from(int_of("repeat", &args[0])?).unwrap_or(0),
        )))
    });
    funcs.insert("toString", |args| {
        arity("toString", args, 1)?;
        Ok(string(text_of(&args[0])))
    });
    funcs.insert("int", |args| {
        arity("int", args, 1)?;
        Ok(Value::Int(int_of("int", &args[0])?))
    });
    funcs.insert("int64", |args| {
        arity("int64", args, 1)?;
        Ok(Value::Int(int_of("int64", &args[0])?))
    });
    funcs.insert("float64", |args| {
        arity("float64", args, 1)?;
        match &args[0] {
            Value::String(text) => text
                .trim()
                .parse()
                .map(Value::Float)
                .map_err(|_| err("float64", "not a number")),
            other => Ok(Value::Float(
                other.as_float().unwrap_or(int_of("float64", other)? as f64),
            )),
        }
    });
    funcs.insert("add", |args| {
        Ok(Value::Int(
            args.iter().map(|v| int_of("add", v)).sum::<Result<i64, _>>()?,
        ))
    });
    funcs.insert("sub", |args| {
        arity("sub", args, 2)?;
        Ok(Value::Int(int_of("sub", &args[0])? - int_of("sub", &args[1])?))
    });
    funcs.insert("mul", |args| {
        Ok(Value::Int(args.iter().try_fold(1i64, |acc, v| {
            Ok::<_, TemplateError>(acc.saturating_mul(int_of("mul", v)?))
        })?))
    });
    funcs.insert("div", |args| {
        arity("div", args, 2)?;
        let divisor = int_of("div", &args[1])?;
        if divisor == 0 {
            return Err(err("div", "division by zero"));
        }
        Ok(Value::Int(int_of("div", &args[0])? / divisor))
    });
    funcs.insert("max", |args| {
        args.iter()
            .map(|v| int_of("max", v))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .max()
            .map(Value::Int)
            .ok_or_else(|| err("max", "no arguments"))
    });
    funcs.insert("min", |args| {
        args.iter()
            .map(|v| int_of("min", v))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .min()
            .map(Value::Int)
            .ok_or_else(|| err("min", "no arguments"))
    });
    funcs.insert("list", |args| Ok(Value::List(args.iter().cloned().collect())));
    funcs.insert("dict", |args| {
        if args.len() % 2 != 0 {
            return Err(err("dict", "needs key and value pairs"));
        }
        let map = args
            .chunks(2)
            .map(|pair| (Arc::from(text_of(&pair[0]).as_str()), pair[1].clone()))
            .collect();
        Ok(Value::Map(Arc::new(map)))
    });
    funcs.insert("hasKey", |args| {
        arity("hasKey", args, 2)?;
        match &args[0] {
            Value::Map(map) => Ok(Value::Bool(map.contains_key(text_of(&args[1]).as_str()))),
            other => Err(err(
                "hasKey",
                format!("first argument is a {}, not a map", other.type_name()),
            )),
        }
    });
    funcs.insert("keys", |args| {
        let mut keys = Vec::new();
        for arg in args {
            match arg {
                Value::Map(map) => keys.extend(map.keys().map(|key| Value::String(key.clone()))),
                other => {
                    return Err(err(
                        "keys",
                        format!("argument is a {}, not a map", other.type_name()),
                    ));
                }
            }
        }
        Ok(Value::List(keys.into()))
    });
    funcs.insert("get", |args| {
        arity("get", args, 2)?;
        match &args[0] {
            Value::Map(map) => Ok(map
                .get(text_of(&args[1]).as_str())
                .cloned()
                .unwrap_or_else(|| string(""))),
            other => Err(err(
                "get",
                format!("first argument is a {}, not a map", other.type_name()),
            )),
        }
    });
    funcs.insert("join", |args| {
        arity("join", args, 2)?;
        match &args[1] {
            Value::List(items) => Ok(string(
                items
                    .iter()
                    .map(text_of)
                    .collect::<Vec<_>>()
                    .join(&text_of(&args[0])),
            )),
            other => Ok(string(text_of(other))),
        }
    });
    funcs.insert("splitList", |args| {
        arity("splitList", args, 2)?;
        Ok(Value::List(
            text_of(&args[1])
                .split(text_of(&args[0]).as_str())
                .map(string)
                .collect(),
        ))
    });
    funcs.insert("kindIs", |args| {
        arity("kindIs", args, 2)?;
        let kind = match &args[1] {
            Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int64",
            Value::Uint(_) => "uint64",
            Value::Float(_) => "float64",
            Value::String(_) => "string",
            Value::List(_) => "slice",
            Value::Map(_) => "map",
            _ => "func",
        };
        Ok(Value::Bool(text_of(&args[0]) == kind))
    });
    funcs
}

/// Every Helm function, with `include` and `tpl` bound to `slot`.
#[must_use]
pub fn helm_funcs(slot: &TemplateSlot) -> FuncMap {
    let mut map = FuncMap::new();
    for (name, func) in simple_funcs() {
        map.insert(name.to_string(), Arc::new(func));
    }
    let include_slot = slot.clone();
    map.insert(
        "include".to_string(),
        Arc::new(move |args: &[Value]| {
            if args.is_empty() || args.len() > 2 {
                return Err(TemplateError::ArgCount {
                    name: "include".into(),
                    expected: 2,
                    got: args.len(),
                });
            }
            let name = text_of(&args[0]);
            let data = args.get(1).cloned().unwrap_or(Value::Nil);
            include_slot.with_template("include", |template| {
                template.execute_template_to_string(&name, &data).map(string)
            })
        }),
    );
    let tpl_slot = slot.clone();
    map.insert(
        "tpl".to_string(),
        Arc::new(move |args: &[Value]| {
            arity("tpl", args, 2)?;
            let source = text_of(&args[0]);
            tpl_slot.with_template("tpl", |template| {
                // The snippet sees the chart's named templates and the same functions.
                let inner_slot = TemplateSlot::default();
                let mut inner = Template::new("tpl").funcs(helm_funcs(&inner_slot));
                for name in template.templates() {
                    if let Some(tree) = template.lookup(name) {
                        inner = inner.add_parse_tree(name, tree.clone());
                    }
                }
                let inner = Arc::new(inner.parse(&source)?);
                inner_slot.fill(&inner);
                inner.execute_to_string(&args[1]).map(string)
            })
        }),
    );
    map
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn render(source: &str, data: Json) -> Result<String, TemplateError> {
        let slot = TemplateSlot::default();
        let template = Arc::new(Template::new("t").funcs(helm_funcs(&slot)).parse(source)?);
        slot.fill(&template);
        template.execute_to_string(&json_to_value(&data))
    }

    #[track_caller]
    fn check(source: &str, data: Json, expected: &str) {
        assert_eq!(render(source, data).unwrap(), expected, "{source}");
    }

    #[test]
    fn string_functions_behave_like_sprig() {
        check(
            r#"{{ .missing | default "x" }}|{{ .v | default "x" }}"#,
            json!({"v": "set"}),
            "x|set",
        );
        check(r#"{{ 0 | default 5 }}"#, json!({}), "5");
        check(
            r#"{{ .v | quote }} {{ .v | squote }}"#,
            json!({"v": "a\"b"}),
            r#""a\"b" 'a"b'"#,
        );
        check(
            r#"{{ "abcdef" | trunc 3 }} {{ "name-" | trimSuffix "-" }} {{ "a.b" | replace "." "-" }}"#,
            json!({}),
            "abc name a-b",
        );
        check(
            r#"{{ upper "ab" }}{{ lower "CD" }} {{ title "hello world" }}"#,
            json!({}),
            "ABcd Hello World",
        );
        check(
            r#"{{ if contains "ell" "hello" }}yes{{ end }} {{ hasPrefix "he" "hello" }}"#,
            json!({}),
            "yes true",
        );
        check(
            r#"{{ list 1 2 3 | join "," }} {{ add 1 2 }} {{ int "7" }}"#,
            json!({}),
            "1,2,3 3 7",
        );
        check(
            r#"{{ $d := dict "a" 1 }}{{ hasKey $d "a" }} {{ ternary "y" "n" false }}"#,
            json!({}),
            "true n",
        );
    }

    #[test]
    fn yaml_and_indentation_functions() {
        check(
            "x:{{ .m | toYaml | nindent 2 }}",
            json!({"m": {"a": 1, "b": "two"}}),
            "x:\n  a: 1\n  b: two",
        );
        check("{{ .m | toYaml | indent 4 }}", json!({"m": {"a": 1}}), "    a: 1");
        check("{{ .m | toYaml }}", json!({"m": {}}), "{}");
        check("{{ .m | toJson }}", json!({"m": {"a": [1]}}), r#"{"a":[1]}"#);
    }

    #[test]
    fn include_and_tpl_reach_named_templates() {
        let source = r#"{{- define "name" -}}{{ .Values.prefix }}-app{{- end -}}{{ include "name" . | upper }} {{ tpl "{{ .Values.prefix }}!" . }}"#;
        check(source, json!({"Values": {"prefix": "fw0"}}), "FW0-APP fw0!");
    }

    #[test]
    fn failures_are_errors_not_panics() {
        assert!(
            render(
                r#"{{ required "image is required" .Values.image }}"#,
                json!({"Values": {}})
            )
            .unwrap_err()
            .to_string()
            .contains("image is required")
        );
        let looping = r#"{{ define "loop" }}{{ include "loop" . }}{{ end }}{{ include "loop" . }}"#;
        assert!(
            render(looping, json!({}))
                .unwrap_err()
                .to_string()
                .contains("nested more than")
        );
        assert!(render(r#"{{ div 1 0 }}"#, json!({})).is_err());
        assert!(render(r#"{{ nosuch 1 }}"#, json!({})).is_err());
    }
}
