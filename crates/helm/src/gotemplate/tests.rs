//! Tests of the template engine as a whole: syntax, control structures, data access, errors and limits, with
//! expected values taken from what Helm v4 printed for the same templates (probe charts rendered by Helm's SDK).

use super::*;

fn upper(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(funcs::param_str(&args[0])?.to_uppercase()))
}

fn fail(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Err(FuncError::new(funcs::param_str(&args[0])?))
}

fn include(rt: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(rt.include(&funcs::param_str(&args[0])?, &args[1])?))
}

fn tpl(rt: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(rt.tpl(&funcs::param_str(&args[0])?, &args[1])?))
}

/// `upper` as Go types it: a `string` parameter, so nil is refused (`invalid value; expected string`).
fn strict_upper(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    match &args[0] {
        Value::Nil => Err(FuncError::new("invalid value; expected string")),
        other => Ok(Value::from(funcs::param_str(other)?.to_uppercase())),
    }
}

fn list(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::list(args.to_vec()))
}

fn tname(rt: &mut dyn Runtime, _: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(rt.template_name()))
}

fn test_funcs() -> FuncMap {
    let mut map = FuncMap::new();
    map.add("upper", Arity::Exact(1), upper);
    map.add("fail", Arity::Exact(1), fail);
    map.add("include", Arity::Exact(2), include);
    map.add("tpl", Arity::Exact(2), tpl);
    map.add("list", Arity::AtLeast(0), list);
    map.add("strictUpper", Arity::Exact(1), strict_upper);
    map.add("tname", Arity::Exact(0), tname);
    map
}

/// The values the Helm probes used: `.Values` = {"a":{"b":1},"s":"str","l":[1,2,3],"n":null}.
fn data() -> Value {
    Value::from_json(&serde_json::json!({
        "Values": {"a": {"b": 1}, "s": "str", "l": [1, 2, 3], "n": null}
    }))
}

const NAME: &str = "p/templates/t.txt";

#[allow(clippy::result_large_err)] // Go's error fields, returned once per call
fn render_with(text: &str, limits: Limits) -> Result<String, TemplateError> {
    let mut set = Templates::new(test_funcs()).with_limits(limits);
    set.parse(NAME, text)?;
    set.execute(NAME, &data())
}

fn render(text: &str) -> Result<String, String> {
    render_with(text, Limits::default()).map_err(|e| e.to_string())
}

fn ok(text: &str) -> String {
    render(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn err(text: &str) -> String {
    match render(text) {
        Ok(out) => panic!("{text}: expected an error, got {out:?}"),
        Err(e) => e,
    }
}

fn exec_err(ctx: &str, message: &str, line: usize, col: usize) -> String {
    format!("template: {NAME}:{line}:{col}: executing \"{NAME}\" at <{ctx}>: {message}")
}

fn parse_err(message: &str) -> String {
    format!("template: {NAME}:1: {message}")
}

#[test]
fn text_comments_and_trimming() {
    assert_eq!(ok("a {{- /* c */ -}} b {{/* x */}} c"), "ab  c");
    assert_eq!(ok("x\n  {{- 1 -}}  \n y"), "x1y");
    assert_eq!(ok("{{ 1 }} {{- 2 }}"), "12");
    assert_eq!(ok("{{3 -}}\n\n4"), "34");
}

#[test]
fn constants() {
    assert_eq!(
        ok("{{ 'a' }} {{ 0x1F }} {{ 1_000 }} {{ 0o17 }} {{ 017 }} {{ 0b101 }} {{ -3 }} {{ +3 }}"),
        "97 31 1000 15 15 5 -3 3"
    );
    assert_eq!(
        ok(r#"{{ "\x41\u00e9\101" }} {{ `raw\n` }} {{ true }} {{ false }}"#),
        "AéA raw\\n true false"
    );
    assert_eq!(ok("{{ printf \"%d\" 7 }}"), "7");
    assert_eq!(
        err("{{ 99999999999999999999 }}"),
        parse_err("integer overflow: \"99999999999999999999\"")
    );
    assert_eq!(err("{{ 0x }}"), parse_err("illegal number syntax: \"0x\""));
    assert_eq!(err("{{ 'ab' }}"), parse_err("malformed character constant: 'ab'"));
}

#[test]
fn go_number_literals_as_helm_reads_them() {
    // Each expected output and refusal was taken from Helm v4 (helm-python-sdk 0.2.2).
    let cases = [
        ("0x1p60", "1.152921504606847e+18"),
        ("-0x1p60", "-1.152921504606847e+18"),
        ("0x1.8p1", "3"),
        ("0x1p-2", "0.25"),
        ("0x_1p4", "16"),
        ("0X1P+3", "8"),
        ("0x.8p1", "1"),
        ("0x1.fffffffffffff8p0", "2"),
        ("1_000.5", "1000.5"),
        ("1e21", "1e+21"),
        ("1e-7", "1e-07"),
        ("1i", "(0+1i)"),
        ("0i", "(0+0i)"),
        ("2.5i", "(0+2.5i)"),
        ("1e3i", "(0+1000i)"),
        ("1+2i", "(1+2i)"),
        ("1.5-2i", "(1.5-2i)"),
        ("1e3+1e-3i", "(1000+0.001i)"),
        ("0x1p4+1i", "(16+1i)"),
    ];
    for (literal, printed) in cases {
        assert_eq!(ok(&format!("{{{{ {literal} }}}}")), printed, "{literal}");
    }
    for refused in ["0x1.8", "1__0", "1+2", "1_", "0x10i", "08", "0x1p2000"] {
        assert!(
            render(&format!("{{{{ {refused} }}}}")).is_err(),
            "{refused} is refused by Helm"
        );
    }
    assert_eq!(err("{{ 0x1.8 }}"), parse_err("illegal number syntax: \"0x1.8\""));
}

#[test]
fn float_and_int_constants_keep_their_kinds() {
    // 1.5 and 3e2 are float64 constants, 1 an int: `eq` refuses to compare int with float64.
    assert_eq!(
        err("{{ eq 1 1.0 }}"),
        exec_err(
            "eq 1 1.0",
            "error calling eq: incompatible types for comparison: int and float64",
            1,
            3
        )
    );
    assert_eq!(
        err("{{ lt 1 1.5 }}"),
        exec_err(
            "lt 1 1.5",
            "error calling lt: incompatible types for comparison: int and float64",
            1,
            3
        )
    );
}

#[test]
fn fields_and_missing_keys() {
    assert_eq!(ok("{{ .Values.a.b }}"), "1");
    assert_eq!(ok("{{ .Values.missing }}"), "<no value>");
    assert_eq!(ok("{{ (.Values.a).b }} {{ $.Values.s }}"), "1 str");
    assert_eq!(
        err("{{ .Values.x.y }}"),
        exec_err(".Values.x.y", "nil pointer evaluating interface {}.y", 1, 10)
    );
    assert_eq!(
        err("{{ .Values.s.y }}"),
        exec_err(
            ".Values.s.y",
            "can't evaluate field y in type interface {}",
            1,
            10
        )
    );
    assert_eq!(
        err("{{ .Values.a.b 1 }}"),
        exec_err(".Values.a.b", "b is not a method but has arguments", 1, 10)
    );
    assert_eq!(
        err("{{ \"x\" | .Values.a.b }}"),
        exec_err(".Values.a.b", "b is not a method but has arguments", 1, 16)
    );
    assert_eq!(
        err("{{ .Values.a.b.c.d.e.f.g.h.i.j.k.l.m }}"),
        exec_err(
            ".Values.a.b.c.d.e.f.g.h.i.j.k.l.m",
            "can't evaluate field c in type interface {}",
            1,
            10
        )
    );
    // A nil that came out of a pipeline is Go's invalid value: fields of it are silently nothing.
    assert_eq!(ok("{{ $x := .Values.missing }}{{ $x.y }}"), "<no value>");
    assert_eq!(ok("{{ (.Values.missing).y }}"), "<no value>");
    assert_eq!(
        err("{{ range .Values.l }}{{ .x }}{{ end }}"),
        exec_err(".x", "can't evaluate field x in type interface {}", 1, 24)
    );
    assert_eq!(
        err("{{ $x := \"s\" }}{{ $x.y }}"),
        exec_err("$x.y", "can't evaluate field y in type string", 1, 20)
    );
    assert_eq!(
        err("{{ (print \"a\").y }}"),
        exec_err("\"a\"", "can't evaluate field y in type string", 1, 10)
    );
}

#[test]
fn commands_that_are_not_functions() {
    assert_eq!(
        err("{{ \"a\" \"b\" }}"),
        exec_err("\"a\"", "can't give argument to non-function \"a\"", 1, 3)
    );
    assert_eq!(err("{{ nil }}"), exec_err("nil", "nil is not a command", 1, 3));
    assert_eq!(
        err("{{ (1) 2 }}"),
        exec_err("(1) 2", "can't give argument to non-function 1", 1, 3)
    );
}

#[test]
fn parse_errors_use_gos_words() {
    assert_eq!(err("{{ } }}"), parse_err("unexpected \"}\" in command"));
    assert_eq!(
        err("{{ nofunc 1 }}"),
        parse_err("function \"nofunc\" not defined")
    );
    assert_eq!(err("{{ $x }}"), parse_err("undefined variable \"$x\""));
    assert_eq!(err("{{ if }}{{ end }}"), parse_err("missing value for if"));
    assert_eq!(err("{{ end }}"), parse_err("unexpected {{end}}"));
    assert_eq!(err("{{ else }}"), parse_err("unexpected {{else}}"));
    assert_eq!(err("{{ if 1 }}"), parse_err("unexpected EOF"));
    assert_eq!(
        err("{{ . | 1 }}"),
        parse_err("non executable command in pipeline stage 2")
    );
    assert_eq!(
        err("{{ range $a, $b, $c := . }}{{end}}"),
        parse_err("too many declarations in range")
    );
    assert_eq!(err("{{ nil.x }}"), parse_err("unexpected . after term \"nil\""));
    assert_eq!(err("{{ .Values.a. }}"), parse_err("unexpected <.> in operand"));
    assert_eq!(err("{{ \"abc }}"), parse_err("unterminated quoted string"));
    assert_eq!(
        err("{{ define \"x\" }}{{ break }}{{ end }}"),
        parse_err("{{break}} outside {{range}}")
    );
    assert_eq!(
        err("{{ with $x := 1 }}{{ $x }}{{ end }}{{ $x }}"),
        parse_err("undefined variable \"$x\"")
    );
    assert_eq!(
        err("a\nb\n{{ nofunc }}"),
        format!("template: {NAME}:3: function \"nofunc\" not defined")
    );
}

#[test]
fn control_structures() {
    assert_eq!(
        ok("{{ if eq 1 2 }}a{{ else if eq 1 1 }}b{{ else }}c{{ end }}"),
        "b"
    );
    assert_eq!(
        ok("{{ with .Values.missing }}a{{ else with .Values.s }}{{ . }}{{ end }}"),
        "str"
    );
    assert_eq!(
        ok("{{ range $i, $e := .Values.l }}{{ $i }}={{ $e }},{{ end }}"),
        "0=1,1=2,2=3,"
    );
    assert_eq!(
        ok("{{ range $k, $v := .Values.a }}{{ $k }}:{{ $v }}{{ end }}"),
        "b:1"
    );
    assert_eq!(
        ok("{{ range .Values.missing }}x{{ else }}empty{{ end }}"),
        "empty"
    );
    assert_eq!(ok("{{ range 3 }}{{.}}{{end}}"), "012");
    assert_eq!(
        ok("{{ range $i := 3 }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ $i }}{{ end }}"),
        "02"
    );
    assert_eq!(ok("{{ range .Values.l }}{{ . }}{{ break }}{{ end }}"), "1");
    assert_eq!(
        ok(
            "{{ define \"x\" }}X{{ . }}{{ end }}{{ template \"x\" 5 }}{{ block \"y\" \"b\" }}Y{{ . }}{{ end }}"
        ),
        "X5Yb"
    );
    assert_eq!(
        err("{{ range $i, $e := 3 }}{{ end }}"),
        exec_err("3", "can't use 3 to iterate over more than one variable", 1, 19)
    );
    assert_eq!(
        err("{{ range .Values.s }}{{ end }}"),
        exec_err(".Values.s", "range can't iterate over str", 1, 16)
    );
    assert_eq!(
        err("{{ template \"nope\" }}"),
        exec_err("{{template \"nope\"}}", "template \"nope\" not defined", 1, 12)
    );
}

#[test]
fn variable_scoping() {
    assert_eq!(
        ok("{{ $x := 1 }}{{ with $x := 2 }}{{ $x }}{{ end }}{{ $x }}"),
        "21"
    );
    assert_eq!(
        ok("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}"),
        "2"
    );
    assert_eq!(
        ok("{{ $s := 0 }}{{ range .Values.l }}{{ $s = . }}{{ end }}{{ $s }}"),
        "3"
    );
    assert_eq!(err("{{ $x = 1 }}"), exec_err("1", "undefined variable: $x", 1, 8));
    // Templates inherit no variables: `$` is the data passed.
    assert_eq!(
        ok("{{ define \"t\" }}{{ $ }}{{ end }}{{ $x := 1 }}{{ template \"t\" 7 }}"),
        "7"
    );
}

#[test]
fn pipelines_and_builtins() {
    assert_eq!(ok("{{ 1 | printf \"%v %v\" 2 }}"), "2 1");
    assert_eq!(ok("{{ .Values.l | len | printf \"%d\" }}"), "3");
    assert_eq!(ok("{{ .Values.a.b | printf \"%v-%v\" 1 }}"), "1-1");
    assert_eq!(ok("{{ and 1 0 2 }} {{ or 0 \"\" 3 }} {{ not 0 }}"), "0 3 true");
    // and/or short-circuit: the failing call is never made.
    assert_eq!(ok("{{ or 1 (fail \"no\") }} {{ and 0 (fail \"no\") }}"), "1 0");
    assert_eq!(
        ok("{{ index .Values.l 1 }} {{ index .Values.a \"zz\" }} {{ index .Values.s 1 }}"),
        "2 <no value> 116"
    );
    assert_eq!(ok("{{ print 1 2 \"a\" 3 }}"), "1 2a3");
    assert_eq!(ok("{{ println 1 \"a\" }}"), "1 a\n");
    assert_eq!(
        ok("{{ eq .Values.n nil }} {{ ne 1 2 }} {{ eq \"a\" \"b\" \"a\" }}"),
        "true true true"
    );
    assert_eq!(ok("{{ upper \"x\" | printf \"%s!\" }}"), "X!");
    assert_eq!(
        err("{{ len 3 }}"),
        exec_err("len 3", "error calling len: len of type int", 1, 3)
    );
    assert_eq!(
        err("{{ len .Values.missing }}"),
        exec_err(
            "len .Values.missing",
            "error calling len: len of nil pointer",
            1,
            3
        )
    );
    assert_eq!(
        err("{{ index .Values.l 5 }}"),
        exec_err(
            "index .Values.l 5",
            "error calling index: index out of range: 5",
            1,
            3
        )
    );
    assert_eq!(
        err("{{ eq .Values.l 1 }}"),
        exec_err(
            "eq .Values.l 1",
            "error calling eq: incompatible types for comparison: []interface {} and int",
            1,
            3
        )
    );
    assert_eq!(
        err("{{ lt true false }}"),
        exec_err(
            "lt true false",
            "error calling lt: invalid type for comparison",
            1,
            3
        )
    );
    assert_eq!(
        err("{{ eq 1 }}"),
        exec_err("eq 1", "error calling eq: missing argument for comparison", 1, 3)
    );
    assert_eq!(
        err("{{ call .Values.s 1 }}"),
        exec_err(
            "call .Values.s 1",
            "error calling call: non-function .Values.s of type string",
            1,
            3
        )
    );
}

#[test]
fn arity_errors_point_at_the_function() {
    assert_eq!(
        err("{{ and 1 0 2 }} {{ or 0 \"\" 3 }} {{ and }}"),
        exec_err(
            "and",
            "wrong number of args for and: want at least 1 got 0",
            1,
            35
        )
    );
    assert_eq!(
        err("{{ ne 1 2 3 }}"),
        exec_err("ne", "wrong number of args for ne: want 2 got 3", 1, 3)
    );
    assert_eq!(
        err("{{ \"a\" | upper \"b\" }}"),
        exec_err("upper", "wrong number of args for upper: want 1 got 2", 1, 9)
    );
}

#[test]
fn function_errors_carry_positions() {
    assert_eq!(
        err("a\n  {{ fail \"boom\" }}"),
        exec_err("fail \"boom\"", "error calling fail: boom", 2, 5)
    );
}

#[test]
fn funcmap_shadows_builtins() {
    fn my_len(_: &mut dyn Runtime, _: &[Value]) -> Result<Value, FuncError> {
        Ok(Value::from("mine"))
    }
    let mut funcs = test_funcs();
    funcs.add("len", Arity::Exact(1), my_len);
    let mut set = Templates::new(funcs);
    set.parse("t", "{{ len 3 }}").expect("parse");
    assert_eq!(set.execute("t", &Value::Nil).expect("exec"), "mine");
}

#[test]
fn include_tpl_and_template_names() {
    let mut set = Templates::new(test_funcs());
    set.parse("helpers.tpl", "{{ define \"h\" }}H{{ .x }}{{ end }}")
        .expect("parse");
    set.parse(
        "main",
        "{{ include \"h\" (.) | upper }} {{ tpl \"{{ define \\\"d\\\" }}D{{ end }}{{ include \\\"d\\\" . }}{{ .x }}\" . }} {{ tname }}",
    )
    .expect("parse");
    let data = Value::from_json(&serde_json::json!({"x": "v"}));
    assert_eq!(set.execute("main", &data).expect("exec"), "HV Dv main");
    // tpl's defines do not leak into the set.
    set.parse("after", "{{ include \"d\" . }}").expect("parse");
    let error = set
        .execute("after", &data)
        .expect_err("d is private to the tpl call");
    assert_eq!(
        error.to_string(),
        "template: after:1:3: executing \"after\" at <include \"d\" .>: error calling include: template: no template \"d\" associated with template \"gotpl\""
    );
    // Errors inside a define report the define's file and the define's name.
    set.parse("bad.tpl", "\n{{ define \"bad\" }}\n {{ fail \"x\" }}{{ end }}")
        .expect("parse");
    set.parse("uses-bad", "{{ include \"bad\" . }}").expect("parse");
    assert_eq!(
        set.execute("uses-bad", &data).expect_err("fails").to_string(),
        "template: uses-bad:1:3: executing \"uses-bad\" at <include \"bad\" .>: error calling include: template: bad.tpl:3:4: executing \"bad\" at <fail \"x\">: error calling fail: x"
    );
}

#[test]
fn tpl_errors_are_wrapped_as_helm_does() {
    assert_eq!(
        err("{{ tpl \"{{ .Values.s.y }}\" . }}"),
        exec_err(
            "tpl \"{{ .Values.s.y }}\" .",
            "error calling tpl: error during tpl function execution for \"{{ .Values.s.y }}\": template: gotpl:1:10: executing \"gotpl\" at <.Values.s.y>: can't evaluate field y in type interface {}",
            1,
            3
        )
    );
    assert_eq!(
        err("{{ tpl \"{{ if }}\" . }}"),
        exec_err(
            "tpl \"{{ if }}\" .",
            "error calling tpl: cannot parse template \"{{ if }}\": template: gotpl:1: missing value for if",
            1,
            3
        )
    );
}

#[test]
fn later_definitions_replace_earlier_unless_empty() {
    let mut set = Templates::new(test_funcs());
    set.parse("a", "{{ define \"x\" }}one{{ end }}").expect("parse");
    set.parse("b", "{{ define \"x\" }}two{{ end }}").expect("parse");
    set.parse("c", "{{ define \"x\" }}  {{ end }}").expect("parse");
    set.parse("main", "{{ template \"x\" }}").expect("parse");
    assert_eq!(set.execute("main", &Value::Nil).expect("exec"), "two");
    assert!(set.contains("x") && set.contains("a") && !set.contains("zz"));
    let twice =
        Templates::new(test_funcs()).parse("d", "{{ define \"y\" }}1{{ end }}{{ define \"y\" }}2{{ end }}");
    assert_eq!(
        twice.expect_err("duplicate").to_string(),
        "template: d:1: template: multiple definition of template \"y\""
    );
}

struct Caps;

impl Object for Caps {
    fn type_name(&self) -> &str {
        "*common.Capabilities"
    }
    fn field(&self, name: &str) -> Option<Value> {
        (name == "KubeVersion").then(|| Value::from("v1.30.0"))
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        (name == "Has").then(|| match args {
            [Value::String(v)] => Ok(Value::Bool(&**v == "policy/v1")),
            _ => Err(format!("wrong number of args for Has: want 1 got {}", args.len())),
        })
    }
    fn display(&self) -> String {
        "caps".into()
    }
    fn to_value(&self) -> Value {
        Value::Nil
    }
}

#[test]
fn objects_fields_and_methods() {
    let map = Map::new();
    map.insert("Capabilities", Value::Object(Rc::new(Caps)));
    let mut set = Templates::new(test_funcs());
    set.parse(
        "t",
        "{{ .Capabilities.KubeVersion }} {{ .Capabilities.Has \"policy/v1\" }} {{ \"x\" | .Capabilities.Has }} {{ .Capabilities }}",
    )
    .expect("parse");
    assert_eq!(
        set.execute("t", &Value::Map(map.clone())).expect("exec"),
        "v1.30.0 true false caps"
    );
    set.parse("u", "{{ .Capabilities.Nope }}").expect("parse");
    assert_eq!(
        set.execute("u", &Value::Map(map))
            .expect_err("no field")
            .to_string(),
        "template: u:1:16: executing \"u\" at <.Capabilities.Nope>: can't evaluate field Nope in type *common.Capabilities"
    );
}

#[test]
fn self_recursive_template_hits_the_depth_limit() {
    let error =
        render("{{ define \"a\" }}{{ template \"a\" }}{{ end }}{{ template \"a\" }}").expect_err("limit");
    assert!(error.contains("exceeded maximum template depth (100)"), "{error}");
    let error =
        render("{{ define \"a\" }}{{ include \"a\" . }}{{ end }}{{ include \"a\" . }}").expect_err("limit");
    assert!(
        error.contains("exceeded maximum template depth (100)"),
        "{}",
        &error[..200.min(error.len())]
    );
    let error =
        render("{{ define \"a\" }}{{ tpl \"{{ include \\\"a\\\" . }}\" . }}{{ end }}{{ include \"a\" . }}")
            .expect_err("limit");
    assert!(error.contains("max_depth"));
}

#[test]
fn deeply_nested_parens_fail_cleanly() {
    let text = format!("{{{{ {}1{} }}}}", "(".repeat(10_000), ")".repeat(10_000));
    let error = err(&text);
    assert!(error.contains("max expression depth exceeded"), "{error}");
    let text = format!("{}x{}", "{{ if 1 }}".repeat(5_000), "{{ end }}".repeat(5_000));
    assert!(err(&text).contains("max expression depth exceeded"));
    let small = Limits {
        max_parse_depth: 20,
        ..Limits::default()
    };
    let text = format!("{{{{ {}1{} }}}}", "(".repeat(30), ")".repeat(30));
    let error = render_with(&text, small).expect_err("depth").to_string();
    assert!(error.contains("max_parse_depth = 20"), "{error}");
    // Within the limits, nesting runs.
    let text = format!("{{{{ {}1{} }}}}", "(".repeat(60), ")".repeat(60));
    assert_eq!(ok(&text), "1");
}

#[test]
fn huge_ranges_hit_the_step_limit() {
    let limits = Limits {
        max_steps: 100_000,
        ..Limits::default()
    };
    let error = render_with("{{ range 1000000000000 }}{{ end }}", limits).expect_err("steps");
    assert!(error.to_string().contains("max_steps"), "{error}");
    let error = render_with(
        "{{ range 1000000000000 }}x{{ end }}",
        Limits::default().with_output(1000),
    )
    .expect_err("output");
    assert!(error.to_string().contains("max_output_bytes"), "{error}");
}

#[test]
fn errors_carry_the_bound_that_stopped_them_through_include_and_tpl() {
    let limits = Limits {
        max_steps: 1000,
        ..Limits::default()
    };
    let text = "x\n{{ define \"loop\" }}{{ range 100000 }}{{ end }}{{ end }}{{ include \"loop\" . | upper }}";
    let error = render_with(text, limits).expect_err("steps");
    // Reported where the top template called `include`, with the bound hit inside it.
    assert_eq!((error.line, error.limit), (2, Some(Limit::Steps(1000))));
    let hit = error.limit_exceeded().expect("a limit");
    assert_eq!(
        hit.to_string(),
        format!("{NAME}:2: rendering exceeded the limit of 1000 evaluation steps (at <include \"loop\" .>)")
    );
    let error = render_with("{{ tpl \"{{ range 100000 }}{{ end }}\" . }}", limits).expect_err("steps");
    assert_eq!(error.limit, Some(Limit::Steps(1000)));
    let error = render_with(
        "{{ tpl \"{{ tpl \\\"{{ 1 }}\\\" . }}\" . }}",
        Limits {
            max_depth: 1,
            ..limits
        },
    )
    .expect_err("depth");
    assert_eq!(error.limit, Some(Limit::Depth(1)));
    let deep = format!("{}1{}", "(".repeat(30), ")".repeat(30));
    let error = render_with(
        &format!("{{{{ tpl \"{{{{ {deep} }}}}\" . }}}}"),
        Limits {
            max_parse_depth: 20,
            ..limits
        },
    )
    .expect_err("parse depth");
    assert_eq!(error.limit, Some(Limit::ParseDepth(20)));
    // Errors that are not bounds carry none.
    let error = render_with("{{ include \"missing\" . }}", limits).expect_err("missing");
    assert_eq!(error.limit, None);
}

#[test]
fn a_passed_deadline_stops_execution_and_the_output_budget_is_shared() {
    let passed = Limits {
        deadline: Some(Deadline::after(std::time::Duration::ZERO)),
        ..Limits::default()
    };
    let error = render_with("{{ range 1000000000000 }}{{ end }}", passed).expect_err("time");
    assert_eq!(error.limit, Some(Limit::Time(std::time::Duration::ZERO)));
    assert!(
        error.to_string().contains("exceeded the time limit of 0ns"),
        "{error}"
    );

    let mut set = Templates::new(test_funcs()).with_limits(Limits::default().with_output(10));
    set.parse(NAME, "123456").unwrap();
    let mut usage = Usage::default();
    assert_eq!(set.execute_sharing(NAME, &data(), &mut usage).unwrap(), "123456");
    assert_eq!(usage.output_bytes, 6);
    let error = set
        .execute_sharing(NAME, &data(), &mut usage)
        .expect_err("output");
    assert_eq!(error.limit, Some(Limit::Output(10)));
    // Each plain execution has the whole budget.
    assert_eq!(set.execute(NAME, &data()).unwrap(), "123456");
}

impl Limits {
    fn with_output(self, max_output_bytes: usize) -> Self {
        Self {
            max_output_bytes,
            ..self
        }
    }
}

#[test]
fn positions_in_multiline_actions_and_other_files() {
    assert_eq!(
        err("a\n{{ if\n  }}"),
        format!("template: {NAME}:3: missing value for if")
    );
    assert_eq!(
        err("a\n{{ .Values.a\n  .b | nofn }}"),
        format!("template: {NAME}:3: function \"nofn\" not defined")
    );
    let mut set = Templates::new(test_funcs());
    set.parse(
        "p/templates/_h.tpl",
        "\n{{ define \"x\" }}\n  {{ .Values.s.q }}{{ end }}",
    )
    .expect("parse");
    set.parse(NAME, "{{ template \"x\" . }}").expect("parse");
    assert_eq!(
        set.execute(NAME, &data())
            .expect_err("field of string")
            .to_string(),
        "template: p/templates/_h.tpl:3:12: executing \"x\" at <.Values.s.q>: can't evaluate field q in type interface {}"
    );
}

#[test]
fn more_helm_probed_behaviour() {
    assert_eq!(ok("x {{- 3 -}} y {{- \"a\" }}\n{{ 5 -}}\n\n z"), "x3ya\n5z");
    assert_eq!(
        ok("{{ define \"x\" }}[{{ .a }}]{{ end }}{{ template \"x\" }}"),
        "[<no value>]"
    );
    assert_eq!(ok("{{ with $x := .Values.a }}{{ $x.b }}{{ .b }}{{ end }}"), "11");
    assert_eq!(
        err("{{ $x := 5 }}{{ define \"y\" }}{{ $x }}{{ end }}"),
        parse_err("undefined variable \"$x\"")
    );
    assert_eq!(
        err("{{ range $i, $e := .Values.l }}{{ $e.x }}{{ end }}"),
        exec_err("$e.x", "can't evaluate field x in type interface {}", 1, 36)
    );
    assert_eq!(
        err("{{ (list 1 2).x }}"),
        exec_err("2", "can't evaluate field x in type []interface {}", 1, 11)
    );
    assert_eq!(
        err("{{ index .Values.a \"b\" \"c\" }}"),
        exec_err(
            "index .Values.a \"b\" \"c\"",
            "error calling index: can't index item of type float64",
            1,
            3
        )
    );
    assert_eq!(
        err("{{ index .Values.a 1 }}"),
        exec_err(
            "index .Values.a 1",
            "error calling index: value has type int; should be string",
            1,
            3
        )
    );
    assert_eq!(
        err("{{ not }}"),
        exec_err("not", "wrong number of args for not: want 1 got 0", 1, 3)
    );
    assert_eq!(
        err("{{ $.Values.missing.x }}"),
        exec_err(
            "$.Values.missing.x",
            "nil pointer evaluating interface {}.x",
            1,
            4
        )
    );
    assert_eq!(
        err("{{ if .Values.missing.x }}{{ end }}"),
        exec_err(
            ".Values.missing.x",
            "nil pointer evaluating interface {}.x",
            1,
            13
        )
    );
}

/// A chart-sized workload: 300 helpers, each including the next through a chain 20 deep, rendered 200 times.
/// Run with `cargo test --release -p emco-helm --lib gotemplate::tests::bench -- --ignored --nocapture`.
#[test]
#[ignore = "benchmark"]
fn bench_many_includes() {
    let mut helpers = String::new();
    for i in 0..300 {
        let next = if i % 20 == 19 {
            "{{ .Values.s }}".to_string()
        } else {
            format!("{{{{ include \"h{}\" . | upper }}}}", i + 1)
        };
        helpers.push_str(&format!(
            "{{{{- define \"h{i}\" -}}}}\n{{{{- if .Values.a }}}}{{{{ range $k, $v := .Values.a }}}}{{{{ $k }}}}={{{{ $v }}}}{{{{ end }}}}{{{{ end }}}}-{next}\n{{{{- end }}}}\n"
        ));
    }
    let mut set = Templates::new(test_funcs());
    set.parse("_helpers.tpl", &helpers).expect("parse");
    let mut main = String::new();
    for i in (0..300).step_by(20) {
        main.push_str(&format!("{{{{ include \"h{i}\" . }}}}\n"));
    }
    set.parse("main", &main).expect("parse");
    let data = data();
    let start = std::time::Instant::now();
    let mut total = 0;
    for _ in 0..200 {
        total += set.execute("main", &data).expect("exec").len();
    }
    eprintln!(
        "200 renders of 300 includes: {:?} ({total} bytes)",
        start.elapsed()
    );
    // Duplicate definitions in one file are an error, so rename each copy's helpers.
    let big: String = (0..10)
        .map(|copy| helpers.replace("\"h", &format!("\"c{copy}h")))
        .collect();
    let start = std::time::Instant::now();
    let mut set = Templates::new(test_funcs());
    set.parse("big", &big).expect("parse");
    eprintln!("parsing {} bytes: {:?}", big.len(), start.elapsed());
}

#[test]
fn executing_an_unknown_template() {
    let set = Templates::new(test_funcs());
    assert_eq!(
        set.execute("nope", &Value::Nil).expect_err("unknown").to_string(),
        "template: no template \"nope\" associated with template \"gotpl\""
    );
}

#[test]
fn trim_markers_after_any_space() {
    assert_eq!(ok("a {{ 3\n-}} b"), "a 3b");
    assert_eq!(ok("a {{ 3\t-}} b"), "a 3b");
    assert_eq!(ok("a {{ 3  -}} b"), "a 3b");
    assert_eq!(ok("a {{-\n3 }} b"), "a3 b");
    assert_eq!(ok("a {{-\t3 }} b"), "a3 b");
    assert_eq!(ok("a {{ 3 -}}"), "a 3");
}

#[test]
fn more_parse_errors() {
    let at = |line: usize, message: &str| format!("template: {NAME}:{line}: {message}");
    assert_eq!(
        err("a\n{{ if 1\n  \"abc\n }}{{end}}"),
        at(
            3,
            "unterminated quoted string in action started at p/templates/t.txt:2"
        )
    );
    assert_eq!(
        err("a\n{{ 1\n"),
        at(3, "unclosed action started at p/templates/t.txt:2")
    );
    assert_eq!(
        err("{{ define \"x\" }}{{ else }}{{ end }}"),
        at(1, "unexpected {{else}} in define clause")
    );
    assert_eq!(
        err("{{ if 1 }}{{ else }}{{ else }}{{ end }}"),
        at(1, "expected end; found {{else}}")
    );
    assert_eq!(ok("{{ 1 | }}"), "1");
    assert_eq!(err("{{ (1 }}"), at(1, "unclosed left paren"));
    assert_eq!(err("{{ 1) }}"), at(1, "unexpected right paren"));
    assert_eq!(err("{{ $x := }}"), at(1, "missing value for command"));
    assert_eq!(
        err("{{ range $i, 3 }}{{ end }}"),
        at(1, "range can only initialize variables")
    );
    assert_eq!(err("{{ .a.b@ }}"), at(1, "bad character U+0040 '@'"));
    assert_eq!(err("{{ /* x */ }}"), at(1, "unexpected \"/\" in command"));
    assert_eq!(
        err("{{/* x */ 1 }}"),
        at(1, "comment ends before closing delimiter")
    );
    assert_eq!(
        err("{{ template x }}"),
        at(1, "unexpected \"x\" in template clause")
    );
}

#[test]
fn argument_conversion_errors_point_at_the_argument() {
    assert_eq!(
        err("{{ upper 1 }}"),
        exec_err("1", "expected string; found 1", 1, 9)
    );
    assert_eq!(
        err("{{ 1 | upper }}"),
        exec_err("upper", "wrong type for value; expected string; got int", 1, 7)
    );
    assert_eq!(
        err("{{ upper .Values.a }}"),
        exec_err(
            ".Values.a",
            "wrong type for value; expected string; got map[string]interface {}",
            1,
            16
        )
    );
}

#[test]
fn printf_format_must_be_a_string() {
    assert_eq!(
        err("{{ printf 1 }}"),
        exec_err("1", "expected string; found 1", 1, 10)
    );
}

#[test]
fn ranges_and_scopes_as_helm() {
    assert_eq!(ok("{{ range $v := .Values.a }}{{ $v }}{{ end }}"), "1");
    assert_eq!(
        ok(
            "{{ range $i, $e := .Values.l }}{{ range $.Values.l }}{{ if eq . 2.0 }}{{ break }}{{ end }}{{ . }}{{ end }};{{ end }}"
        ),
        "1;1;1;"
    );
    assert_eq!(
        ok("{{ with $x := 0 }}a{{ else with $y := \"q\" }}{{ $y }}{{ end }}"),
        "q"
    );
    assert_eq!(
        ok("{{ range $e := .Values.l }}{{ $e = 5 }}{{ $e }}{{ end }}"),
        "555"
    );
    assert_eq!(ok("{{ if and .Values.a (not .Values.missing) }}y{{ end }}"), "y");
    assert_eq!(
        ok("{{ $v := \"x\" }}{{ range .Values.l }}{{ $v }}{{ end }}"),
        "xxx"
    );
    assert_eq!(ok("{{ range 0 }}x{{ else }}none{{ end }}"), "none");
    assert_eq!(ok("{{ range -2 }}x{{ else }}neg{{ end }}"), "neg");
    assert_eq!(
        ok("{{ define \"a\" }}{{ $ }}{{ end }}{{ template \"a\" .Values.a.b }}"),
        "1"
    );
    assert_eq!(ok("{{ $x := list }}{{ range $x }}{{ else }}e{{ end }}"), "e");
    assert_eq!(
        ok("{{ \"a\" | printf \"%s%s\" \"b\" | printf \"%s%s\" \"c\" }}"),
        "cba"
    );
}

/// Random fragments of template syntax, parsed and executed: every outcome must be a value or an error, never a
/// panic, a hang or a stack overflow.
#[test]
fn random_templates_never_panic() {
    const PIECES: &[&str] = &[
        "{{", "}}", "{{-", "-}}", " ", "\n", "(", ")", "|", "$x", ":=", "=", "$", ".", ".Values", ".a", ".b",
        ".l", "if", "else", "end", "range", "with", "define", "template", "block", "break", "continue",
        "\"s\"", "`r`", "'c'", "1", "-2", "0x1F", "1.5", "1e3", "nil", "true", "eq", "lt", "and", "or",
        "not", "len", "index", "slice", "print", "printf", "html", "js", "urlquery", "call", "upper",
        "include", "tpl", "list", ",", "/*", "*/", "\"t\"", "x", "@", "\"", "é",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let limits = Limits {
        max_steps: 10_000,
        max_output_bytes: 10_000,
        max_depth: 20,
        ..Limits::default()
    };
    let mut parsed = 0;
    for round in 0..20_000 {
        let len = (next() % 40) as usize;
        let mut text = String::new();
        for _ in 0..len {
            let piece = PIECES[(next() % PIECES.len() as u64) as usize];
            if round % 2 == 0 {
                text.push_str(piece);
            } else {
                // Mostly well-formed actions: `{{ piece piece }}`.
                text.push_str("{{ ");
                text.push_str(piece);
                text.push(' ');
                text.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
                text.push_str(" }}");
            }
        }
        let mut set = Templates::new(test_funcs()).with_limits(limits);
        if set.parse("t", &text).is_ok() {
            parsed += 1;
            let _ = set.execute("t", &data());
        }
    }
    assert!(parsed > 500, "only {parsed} random templates parsed");
}

#[test]
fn parse_error_lines() {
    let at = |line: usize, message: &str| format!("template: {NAME}:{line}: {message}");
    assert_eq!(err("{{ if 1 }}\n\nabc"), at(3, "unexpected EOF"));
    assert_eq!(
        err("{{ if 1 }}\n\n{{ else }}{{ else }}"),
        at(3, "expected end; found {{else}}")
    );
    assert_eq!(err("a\n\n{{ end }}"), at(3, "unexpected {{end}}"));
    assert_eq!(
        err("{{ define \"x\" }}\n\n{{ $y }}{{ end }}"),
        at(3, "undefined variable \"$y\"")
    );
}

#[test]
fn nil_for_a_typed_parameter_is_worded_by_its_origin() {
    // Helm's texts for `upper` (a `string` parameter), here through a stand-in that refuses nil as Go does.
    assert_eq!(
        err("{{ .Values.missing | strictUpper }}"),
        exec_err("strictUpper", "invalid value; expected string", 1, 21)
    );
    assert_eq!(
        err("{{ $x := .Values.missing }}{{ strictUpper $x }}"),
        exec_err("$x", "invalid value; expected string", 1, 42)
    );
    assert_eq!(
        err("{{ strictUpper (index .Values \"missing\") }}"),
        exec_err("\"missing\"", "invalid value; expected string", 1, 30)
    );
    assert_eq!(
        err("{{ strictUpper .Values.missing }}"),
        exec_err(
            ".Values.missing",
            "wrong type for value; expected string; got interface {}",
            1,
            22
        )
    );
    assert_eq!(
        err("{{ strictUpper nil }}"),
        exec_err("nil", "cannot assign nil to string", 1, 15)
    );
}

#[test]
fn string_literals_keep_their_value_and_source_form() {
    // Plain, escaped and raw literals: the value is unescaped, while error contexts quote each as it was written.
    assert_eq!(
        ok(r#"{{ "a b" }}|{{ "t\tx\"q" }}|{{ `r\n` }}"#),
        "a b|t\tx\"q|r\\n"
    );
    assert_eq!(
        err(r#"{{ fail "plain" }}"#),
        exec_err(r#"fail "plain""#, "error calling fail: plain", 1, 3)
    );
    assert_eq!(
        err(r#"{{ fail "esc\x41" }}"#),
        exec_err(r#"fail "esc\x41""#, "error calling fail: escA", 1, 3)
    );
    assert_eq!(
        err("{{ fail `raw` }}"),
        exec_err("fail `raw`", "error calling fail: raw", 1, 3)
    );
}
