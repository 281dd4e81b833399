//! Unit tests of the token file: the kube-apiserver format (quoted groups, spaces, CRLF), every malformed line
//! refused naming the file and line and never the token, duplicates naming both lines, roles from groups, and a
//! property test that no input panics the parser.

use proptest::prelude::*;

use super::*;

fn parse(text: &str) -> Result<TokenTable, TokenFileError> {
    TokenTable::parse(Path::new("/etc/emco/tokens.csv"), text.as_bytes())
}

fn refusal(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

fn who(table: &TokenTable, token: &str) -> Option<(String, String, Vec<String>, Role)> {
    table
        .authenticate(token.as_bytes())
        .map(|id| (id.user.clone(), id.uid.clone(), id.groups.clone(), id.role))
}

#[test]
fn lines_with_quoted_groups_are_read_as_kube_apiserver_reads_them() {
    let table = parse(
        "t-admin,alice,1,\"emco:admin,ops\"\nt-view,ann,2,emco:viewer\nt-none,bob,3\nt-both,carl,4,\"emco:viewer, emco:admin\"\n",
    )
    .unwrap();
    assert_eq!(table.len(), 4);
    assert_eq!(
        who(&table, "t-admin"),
        Some((
            "alice".into(),
            "1".into(),
            vec!["emco:admin".into(), "ops".into()],
            Role::Admin
        ))
    );
    assert_eq!(who(&table, "t-view").map(|w| w.3), Some(Role::Viewer));
    assert_eq!(
        who(&table, "t-none"),
        Some(("bob".into(), "3".into(), vec![], Role::None))
    );
    // Admin wins over viewer; spaces around a group are dropped.
    assert_eq!(
        who(&table, "t-both").map(|w| (w.2, w.3)),
        Some((vec!["emco:viewer".into(), "emco:admin".into()], Role::Admin))
    );
    assert_eq!(who(&table, "t-adm"), None);
    assert_eq!(who(&table, "t-admin2"), None);
    assert_eq!(who(&table, ""), None);
}

#[test]
fn spaces_around_fields_and_crlf_line_ends_are_dropped() {
    let table = parse("  tok1 , ann , 7 , \"emco:viewer\"  \r\n\"tok2\",\"bob\",\"8\"\r\n").unwrap();
    assert_eq!(
        who(&table, "tok1"),
        Some(("ann".into(), "7".into(), vec!["emco:viewer".into()], Role::Viewer))
    );
    assert_eq!(who(&table, "tok2").map(|w| w.0), Some("bob".into()));
    assert_eq!(who(&table, " tok1"), None);
    // No final newline is fine too, and so is a byte-order mark.
    assert_eq!(parse("tok,ann,1").unwrap().len(), 1);
    assert!(who(&parse("\u{feff}tok,ann,1\n").unwrap(), "tok").is_some());
    // Blank lines are skipped, as kube-apiserver's CSV reader skips them; line numbers still count them.
    let table = parse("\nok,ann,1\n   \nx,bob,2\n\n").unwrap();
    assert!(who(&table, "ok").is_some() && who(&table, "x").is_some());
}

#[test]
fn malformed_lines_are_refused_naming_the_file_and_line_never_the_token() {
    let cases = [
        ("secret1,ann\n", "line 1: 2 field(s); expected token,user,uid"),
        ("ok,ann,1\nsecret1\n", "line 2: 1 field(s)"),
        (
            "secret1,ann,1,emco:admin,ops\n",
            "line 1: 5 fields; expected token,user,uid[,\"group1,group2\"] (quote a list of several groups)",
        ),
        ("ok,ann,1\n\nsecret1\n", "line 3: 1 field(s)"),
        (",ann,1\n", "line 1: the token is empty"),
        ("secret1,,1\n", "line 1: the user name is empty"),
        (
            "sec ret1,ann,1\n",
            "line 1: the token may only hold printable ASCII",
        ),
        ("secret1,ann,1,\"emco:admin\n", "line 1: a quote is not closed"),
        (
            "secret1,ann,1,\"emco:admin\"x\n",
            "line 1: text after a closing quote",
        ),
        ("secret1,a\"nn,1\n", "line 1: a quote inside an unquoted field"),
        (
            "secret1,ann\u{7},1\n",
            "line 1: the user name or uid holds a control character",
        ),
    ];
    for (text, expected) in cases {
        let message = refusal(text);
        assert!(
            message.starts_with("the token file /etc/emco/tokens.csv, ") && message.contains(expected),
            "{text:?}: {message}"
        );
        assert!(!message.contains("secret1"), "{text:?}: {message}");
    }
    assert_eq!(refusal(""), "the token file /etc/emco/tokens.csv holds no token");
    assert_eq!(
        refusal("\n"),
        "the token file /etc/emco/tokens.csv holds no token"
    );
    let invalid_utf8 = TokenTable::parse(Path::new("t.csv"), b"ok,ann,1\n\xff,bob,2\n")
        .unwrap_err()
        .to_string();
    assert_eq!(invalid_utf8, "the token file t.csv, line 2: not UTF-8 text");
    let long = format!("{},ann,1\n", "x".repeat(MAX_LINE_BYTES + 1));
    assert!(refusal(&long).contains("line 1: longer than"));
    let huge = vec![b'a'; usize::try_from(MAX_FILE_BYTES).unwrap() + 1];
    assert!(
        TokenTable::parse(Path::new("t.csv"), &huge)
            .unwrap_err()
            .to_string()
            .contains("larger than")
    );
}

#[test]
fn a_repeated_token_is_refused_naming_both_lines() {
    assert_eq!(
        refusal("secret1,ann,1\nother,bob,2\n secret1 ,carl,3\n"),
        "the token file /etc/emco/tokens.csv, line 3: the same token as line 1"
    );
}

#[test]
fn reload_replaces_the_table_only_when_the_new_file_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, "old,ann,1,emco:admin\n").unwrap();
    let auth = TokenAuth::load(&path).unwrap();
    let shared = auth.clone();
    assert_eq!(shared, auth);
    assert!(auth.authenticate(b"old").is_some());

    std::fs::write(&path, "new,bob,2,emco:viewer\n").unwrap();
    assert_eq!(shared.reload().unwrap(), 1);
    assert!(auth.authenticate(b"old").is_none());
    assert_eq!(
        auth.authenticate(b"new").map(|id| id.user.clone()),
        Some("bob".into())
    );

    std::fs::write(&path, "new,bob,2\nbroken\n").unwrap();
    let err = shared.reload().unwrap_err().to_string();
    assert!(err.contains("tokens.csv, line 2"), "{err}");
    assert!(
        auth.authenticate(b"new").is_some(),
        "the old table stays in force"
    );
    // Debug output names the file and counts tokens, never shows one.
    let debug = format!("{auth:?}");
    assert!(debug.contains("tokens: 1") && !debug.contains("new"), "{debug}");

    std::fs::remove_file(&path).unwrap();
    assert!(
        shared
            .reload()
            .unwrap_err()
            .to_string()
            .starts_with("cannot read the token file")
    );
    assert!(TokenAuth::load(&dir.path().join("absent.csv")).is_err());
}

proptest! {
    #[test]
    fn no_input_panics_the_parser(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = TokenTable::parse(Path::new("t.csv"), &bytes);
    }

    #[test]
    fn csv_like_lines_parse_or_are_refused_with_a_line_number(
        lines in proptest::collection::vec("[a-z\", \\t:\\r]{0,24}", 0..8)
    ) {
        let text = lines.join("\n");
        match TokenTable::parse(Path::new("t.csv"), text.as_bytes()) {
            Ok(table) => prop_assert!(!table.is_empty()),
            Err(TokenFileError::Line { line, .. } | TokenFileError::Duplicate { line, .. }) => {
                prop_assert!(line >= 1 && line <= lines.len().max(1));
            }
            Err(TokenFileError::Empty { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected {other}"),
        }
    }
}
