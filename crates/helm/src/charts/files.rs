//! `.Files`: Helm's `engine.files` (a `map[string][]byte` of a chart's non-template files) with its methods `Get`,
//! `GetBytes`, `Glob` (gobwas/glob with `/` as separator: `*`, `**`, `?`, `[a-z]`, `[!a]`, `{a,b}`; a bad pattern
//! matches everything, as Helm falls back to `**`), `Lines`, `AsConfig` and `AsSecrets`.

use std::collections::BTreeMap;
use std::rc::Rc;

use base64::Engine as _;

use crate::gotemplate::funcs::param_str;
use crate::gotemplate::{Map, Object, Value};

/// A chart's files as templates see them.
#[derive(Clone, Debug, Default)]
pub struct Files {
    files: BTreeMap<String, Rc<[u8]>>,
}

impl Files {
    /// Files from `(path, bytes)` pairs (a later duplicate wins, as in Helm's map).
    #[must_use]
    pub fn new<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Self {
        Self {
            files: files
                .into_iter()
                .map(|(name, data)| (name.to_string(), Rc::from(data)))
                .collect(),
        }
    }

    /// The file names (sorted).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// `GetBytes`: the file's bytes, empty when missing.
    #[must_use]
    pub fn get_bytes(&self, name: &str) -> Rc<[u8]> {
        self.files.get(name).cloned().unwrap_or_else(|| Rc::from(&[][..]))
    }

    /// `Get`: the file as text (invalid UTF-8 kept as Go keeps bytes, replaced here), empty when missing.
    #[must_use]
    pub fn get(&self, name: &str) -> String {
        super::file_text(&self.get_bytes(name)).into_owned()
    }

    /// `Glob`: the files whose path matches `pattern`.
    #[must_use]
    pub fn glob(&self, pattern: &str) -> Files {
        let compiled = Glob::compile(pattern).unwrap_or(Glob {
            nodes: vec![Node::SuperStar],
        });
        Files {
            files: self
                .files
                .iter()
                .filter(|(name, _)| compiled.matches(name))
                .map(|(name, data)| (name.clone(), data.clone()))
                .collect(),
        }
    }

    /// `Lines`: the file split at newlines (one trailing newline dropped); empty for a missing or empty file.
    #[must_use]
    pub fn lines(&self, name: &str) -> Vec<String> {
        let text = self.get(name);
        if text.is_empty() {
            return Vec::new();
        }
        let text = text.strip_suffix('\n').unwrap_or(&text);
        text.split('\n').map(str::to_string).collect()
    }

    fn as_map(&self, encode: impl Fn(&[u8]) -> String) -> String {
        let map = Map::new();
        for (name, data) in &self.files {
            let base = name.rsplit('/').next().unwrap_or(name);
            map.insert(base, Value::string(encode(data)));
        }
        match crate::formats::yaml::marshal(&Value::Map(map)) {
            Ok(text) => text.strip_suffix('\n').unwrap_or(&text).to_string(),
            Err(_) => String::new(),
        }
    }

    /// `AsConfig`: YAML of base name → content.
    #[must_use]
    pub fn as_config(&self) -> String {
        self.as_map(|data| super::file_text(data).into_owned())
    }

    /// `AsSecrets`: YAML of base name → base64 of the content.
    #[must_use]
    pub fn as_secrets(&self) -> String {
        self.as_map(|data| base64::engine::general_purpose::STANDARD.encode(data))
    }
}

fn go_bytes(data: &[u8]) -> String {
    format!(
        "[{}]",
        data.iter().map(u8::to_string).collect::<Vec<_>>().join(" ")
    )
}

fn arity(name: &str, want: usize, args: &[Value]) -> Result<(), String> {
    if args.len() == want {
        Ok(())
    } else {
        Err(format!(
            "wrong number of args for {name}: want {want} got {}",
            args.len()
        ))
    }
}

impl Object for Files {
    fn type_name(&self) -> &str {
        "engine.files"
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "AsConfig" => Some(Value::string(self.as_config())),
            "AsSecrets" => Some(Value::string(self.as_secrets())),
            "Get" | "GetBytes" | "Glob" | "Lines" => None,
            // `files` is a map: any other name is a key (missing: the zero []byte).
            key => Some(Value::Bytes(self.get_bytes(key))),
        }
    }

    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        let one_string = |args: &[Value]| -> Result<String, String> {
            arity(name, 1, args)?;
            param_str(&args[0]).map_err(|err| err.to_string())
        };
        Some(match name {
            "Get" => one_string(args).map(|path| Value::string(self.get(&path))),
            "GetBytes" => one_string(args).map(|path| Value::Bytes(self.get_bytes(&path))),
            "Glob" => one_string(args).map(|pattern| Value::Object(Rc::new(self.glob(&pattern)))),
            "Lines" => one_string(args)
                .map(|path| Value::list(self.lines(&path).into_iter().map(Value::from).collect())),
            "AsConfig" => arity(name, 0, args).map(|()| Value::string(self.as_config())),
            "AsSecrets" => arity(name, 0, args).map(|()| Value::string(self.as_secrets())),
            _ => return None,
        })
    }

    fn display(&self) -> String {
        format!(
            "map[{}]",
            self.files
                .iter()
                .map(|(name, data)| format!("{name}:{}", go_bytes(data)))
                .collect::<Vec<_>>()
                .join(" ")
        )
    }

    fn to_value(&self) -> Value {
        Value::Map(Map::from_entries(
            self.files
                .iter()
                .map(|(name, data)| (name.clone(), Value::Bytes(data.clone())))
                .collect(),
        ))
    }

    fn collection(&self) -> Option<Value> {
        Some(self.to_value())
    }
}

/// A compiled gobwas/glob pattern with `/` as the separator.
#[derive(Debug, Clone)]
struct Glob {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone)]
enum Node {
    Literal(char),
    /// `?`: one character, not a separator.
    Single,
    /// `*`: any run of non-separators.
    Star,
    /// `**`: any run.
    SuperStar,
    /// `[…]` / `[!…]`.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    /// `{a,b}`.
    Any(Vec<Vec<Node>>),
}

impl Glob {
    fn compile(pattern: &str) -> Option<Glob> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut index = 0;
        let nodes = parse_seq(&chars, &mut index, false)?;
        if index != chars.len() {
            return None;
        }
        Some(Glob { nodes })
    }

    fn matches(&self, name: &str) -> bool {
        let chars: Vec<char> = name.chars().collect();
        let mut budget = 200_000usize;
        match_nodes(&self.nodes, &chars, &mut budget)
    }
}

fn parse_seq(chars: &[char], index: &mut usize, in_braces: bool) -> Option<Vec<Node>> {
    let mut nodes = Vec::new();
    while *index < chars.len() {
        let c = chars[*index];
        match c {
            '}' | ',' if in_braces => return Some(nodes),
            '*' => {
                if chars.get(*index + 1) == Some(&'*') {
                    *index += 2;
                    nodes.push(Node::SuperStar);
                } else {
                    *index += 1;
                    nodes.push(Node::Star);
                }
            }
            '?' => {
                *index += 1;
                nodes.push(Node::Single);
            }
            '\\' => {
                let escaped = *chars.get(*index + 1)?;
                *index += 2;
                nodes.push(Node::Literal(escaped));
            }
            '[' => {
                *index += 1;
                let negated = chars.get(*index) == Some(&'!');
                if negated {
                    *index += 1;
                }
                let mut ranges = Vec::new();
                loop {
                    let c = *chars.get(*index)?;
                    if c == ']' {
                        *index += 1;
                        break;
                    }
                    if chars.get(*index + 1) == Some(&'-') && chars.get(*index + 2).is_some_and(|c| *c != ']')
                    {
                        let high = chars[*index + 2];
                        ranges.push((c, high));
                        *index += 3;
                    } else {
                        ranges.push((c, c));
                        *index += 1;
                    }
                }
                if ranges.is_empty() {
                    return None;
                }
                nodes.push(Node::Class { negated, ranges });
            }
            '{' => {
                *index += 1;
                let mut alternatives = Vec::new();
                loop {
                    alternatives.push(parse_seq(chars, index, true)?);
                    match chars.get(*index) {
                        Some(',') => *index += 1,
                        Some('}') => {
                            *index += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                nodes.push(Node::Any(alternatives));
            }
            other => {
                *index += 1;
                nodes.push(Node::Literal(other));
            }
        }
    }
    if in_braces {
        return None;
    }
    Some(nodes)
}

fn match_nodes(nodes: &[Node], name: &[char], budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let Some(first) = nodes.first() else {
        return name.is_empty();
    };
    let rest = &nodes[1..];
    match first {
        Node::Literal(c) => name.first() == Some(c) && match_nodes(rest, &name[1..], budget),
        Node::Single => name.first().is_some_and(|c| *c != '/') && match_nodes(rest, &name[1..], budget),
        Node::Class { negated, ranges } => {
            name.first().is_some_and(|c| {
                let inside = ranges.iter().any(|(low, high)| low <= c && c <= high);
                inside != *negated
            }) && match_nodes(rest, &name[1..], budget)
        }
        Node::Star => {
            for split in 0..=name.len() {
                if match_nodes(rest, &name[split..], budget) {
                    return true;
                }
                if split < name.len() && name[split] == '/' {
                    return false;
                }
            }
            false
        }
        Node::SuperStar => (0..=name.len()).any(|split| match_nodes(rest, &name[split..], budget)),
        Node::Any(alternatives) => alternatives.iter().any(|alternative| {
            let mut combined = alternative.clone();
            combined.extend_from_slice(rest);
            match_nodes(&combined, name, budget)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe_files() -> Files {
        // The files of probe chart p1 (Helm v4.2.3 printed the Glob results asserted below).
        Files::new([
            (".helmignore", &b"ignored/\n"[..]),
            ("README.md", b"r\n"),
            ("charts/sub1.prov", b"lock\n"),
            ("crds/crd.yaml", b"kind: CustomResourceDefinition\n"),
            ("files/a.txt", b"line1\nline2\n"),
            ("files/b.yaml", b"bee"),
            ("files/sub/c.txt", b"deep"),
        ])
    }

    fn names(files: &Files) -> Vec<&str> {
        files.names().collect()
    }

    #[test]
    fn glob_matches_like_gobwas() {
        let files = probe_files();
        assert_eq!(names(&files.glob("**.txt")), ["files/a.txt", "files/sub/c.txt"]);
        assert_eq!(
            names(&files.glob("files/{a,b}.*")),
            ["files/a.txt", "files/b.yaml"]
        );
        assert_eq!(names(&files.glob("*")), [".helmignore", "README.md"]);
        assert_eq!(
            names(&files.glob("files/[a-b]*")),
            ["files/a.txt", "files/b.yaml"]
        );
        assert_eq!(names(&files.glob("files/?.txt")), ["files/a.txt"]);
        assert_eq!(names(&files.glob("[")).len(), 7);
        assert_eq!(names(&files.glob("files/*")), ["files/a.txt", "files/b.yaml"]);
        assert_eq!(names(&files.glob("files/[!a]*")), ["files/b.yaml"]);
    }

    #[test]
    fn methods_return_what_helm_returns() {
        let files = probe_files();
        assert_eq!(files.lines("files/a.txt"), ["line1", "line2"]);
        assert!(files.lines("missing").is_empty());
        assert_eq!(files.get("missing"), "");
        assert_eq!(
            files.glob("files/a.txt").display(),
            "map[files/a.txt:[108 105 110 101 49 10 108 105 110 101 50 10]]"
        );
        assert_eq!(
            files.glob("files/a.txt").to_value().to_json().unwrap(),
            serde_json::json!({"files/a.txt": "bGluZTEKbGluZTIK"})
        );
        assert_eq!(files.type_name(), "engine.files");
        match files.call("Get", &[]) {
            Some(Err(message)) => assert_eq!(message, "wrong number of args for Get: want 1 got 0"),
            other => panic!("{other:?}"),
        }
        match files.call("Get", &[Value::Int(1)]) {
            Some(Err(message)) => assert!(message.contains("expected string"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert!(files.call("Nope", &[]).is_none());
    }

    #[test]
    fn as_config_is_yaml_of_base_names() {
        // Helm v4.2.3 printed (probe p1) for `(.Files.Glob "files/*").AsConfig`:
        let want = "a.txt: |\n  line1\n  line2\nb.yaml: bee";
        assert_eq!(probe_files().glob("files/*").as_config(), want);
        assert_eq!(probe_files().glob("nomatch/*").as_config(), "{}");
    }

    #[test]
    fn as_secrets_encodes_base64_by_base_name() {
        // Helm: "a.txt: bGluZTEKbGluZTIK\nb.yaml: YmVl\nc.txt: ZGVlcA==" for files/**.
        let secrets = probe_files().glob("files/**").as_secrets();
        assert_eq!(secrets, "a.txt: bGluZTEKbGluZTIK\nb.yaml: YmVl\nc.txt: ZGVlcA==");
    }
}
