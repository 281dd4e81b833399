//! Who may use the API: the static token table of `emco serve --token-auth-file`, in the format of
//! kube-apiserver's `--token-auth-file`, and the role each user has.
//!
//! The file is CSV, one token a line: `token,user,uid[,"group1,group2"]` (the group list quoted when it holds
//! more than one group). Fields may be surrounded by spaces, which are dropped; a line ending `\r\n` is read as
//! one ending `\n`, a leading byte-order mark and blank lines are skipped (as Go's CSV reader skips them). Anything
//! else is refused when the file is loaded, naming the file and the line, never the token: fewer than three or more than four fields, an
//! empty token or user, a token with spaces, quotes or control characters, an unterminated quote, the same token
//! twice (both lines named), a file with no token at all. Sizes are bounded ([`MAX_FILE_BYTES`], [`MAX_LINE_BYTES`]).
//!
//! Roles come from groups: `emco:admin` may do everything, `emco:viewer` may only read (GET and HEAD); a user
//! with neither group may do nothing.
//!
//! [`TokenAuth`] is the table the server consults, shared with whoever reloads it (`emco serve` does on
//! SIGHUP): [`TokenAuth::reload`] replaces the table only when the new file is entirely valid, so a bad edit
//! keeps the old tokens working. Presented tokens are compared with every entry in constant time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use subtle::{Choice, ConditionallySelectable as _, ConstantTimeEq as _};

/// The largest token file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The longest line of a token file, in bytes.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The group whose members may do everything.
pub const ADMIN_GROUP: &str = "emco:admin";
/// The group whose members may only read.
pub const VIEWER_GROUP: &str = "emco:viewer";

/// Why a token file cannot be used. Messages name the file and the line, never a token.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file cannot be read.
    #[error("cannot read the token file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("the token file {path} is larger than {MAX_FILE_BYTES} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// One line is malformed.
    #[error("the token file {path}, line {line}: {reason}")]
    Line {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// Two lines hold the same token.
    #[error("the token file {path}, line {line}: the same token as line {first}")]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// The first line with the token.
        first: usize,
        /// The line that repeats it.
        line: usize,
    },
    /// The file holds no token.
    #[error("the token file {path} holds no token")]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// What a user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Member of `emco:admin`: everything.
    Admin,
    /// Member of `emco:viewer` (and not of `emco:admin`): GET and HEAD only.
    Viewer,
    /// Member of neither group: nothing.
    None,
}

impl Role {
    /// The role of a member of `groups`.
    #[must_use]
    pub fn of_groups(groups: &[String]) -> Self {
        if groups.iter().any(|group| group == ADMIN_GROUP) {
            Self::Admin
        } else if groups.iter().any(|group| group == VIEWER_GROUP) {
            Self::Viewer
        } else {
            Self::None
        }
    }
}

/// A user of the token file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The user name (second field).
    pub user: String,
    /// The user's uid (third field).
    pub uid: String,
    /// The groups (fourth field, comma-separated).
    pub groups: Vec<String>,
    /// The role the groups give.
    pub role: Role,
}

/// One line of the table.
struct Entry {
    token: Box<[u8]>,
    identity: Arc<Identity>,
}

/// A parsed token file.
pub struct TokenTable {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for TokenTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Tokens are never printed.
        f.debug_struct("TokenTable")
            .field("tokens", &self.entries.len())
            .finish()
    }
}

impl TokenTable {
    /// Parses the text of a token file; `path` is only used in messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Self, TokenFileError> {
        let line_error = |line: usize, reason: &str| TokenFileError::Line {
            path: path.to_path_buf(),
            line,
            reason: reason.to_string(),
        };
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(TokenFileError::TooLarge { path: path.into() });
        }
        // A byte-order mark some editors write is not part of the first token.
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let mut entries: Vec<Entry> = Vec::new();
        // Each token's line, to name both lines of a repeat.
        let mut lines_of_tokens: HashMap<Box<[u8]>, usize> = HashMap::new();
        if !body.is_empty() {
            for (index, raw) in body.split(|byte| *byte == b'\n').enumerate() {
                let number = index + 1;
                let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
                if raw.len() > MAX_LINE_BYTES {
                    return Err(line_error(number, &format!("longer than {MAX_LINE_BYTES} bytes")));
                }
                let text = std::str::from_utf8(raw).map_err(|_| line_error(number, "not UTF-8 text"))?;
                if text.trim().is_empty() {
                    continue;
                }
                let fields = split_csv_line(text).map_err(|reason| line_error(number, reason))?;
                let (token, identity) = entry(&fields).map_err(|reason| line_error(number, &reason))?;
                let token: Box<[u8]> = token.into_bytes().into_boxed_slice();
                if let Some(first) = lines_of_tokens.insert(token.clone(), number) {
                    return Err(TokenFileError::Duplicate {
                        path: path.into(),
                        first,
                        line: number,
                    });
                }
                entries.push(Entry {
                    token,
                    identity: Arc::new(identity),
                });
            }
        }
        if entries.is_empty() {
            return Err(TokenFileError::Empty { path: path.into() });
        }
        Ok(Self { entries })
    }

    /// Reads and parses the token file at `path`.
    pub fn load(path: &Path) -> Result<Self, TokenFileError> {
        let read_error = |source| TokenFileError::Read {
            path: path.into(),
            source,
        };
        let file = std::fs::File::open(path).map_err(read_error)?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_FILE_BYTES + 1), &mut bytes)
            .map_err(read_error)?;
        Self::parse(path, &bytes)
    }

    /// How many tokens the table holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table holds no token (never true for a table that was parsed).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The identity whose token is `presented`. Every entry is compared, in constant time for tokens of equal
    /// length, whatever matches: the time taken does not tell which entry matched or how much of a token did.
    #[must_use]
    pub fn authenticate(&self, presented: &[u8]) -> Option<Arc<Identity>> {
        let mut found = Choice::from(0);
        let mut index = 0u64;
        for (position, entry) in (0u64..).zip(&self.entries) {
            let equal = entry.token.as_ref().ct_eq(presented);
            index.conditional_assign(&position, equal);
            found |= equal;
        }
        if bool::from(found) {
            let index = usize::try_from(index).ok()?;
            self.entries.get(index).map(|entry| Arc::clone(&entry.identity))
        } else {
            None
        }
    }
}

/// The token and identity of one line's fields.
fn entry(fields: &[String]) -> Result<(String, Identity), String> {
    let (token, user, uid, groups) = match fields {
        [token, user, uid] => (token, user, uid, None),
        [token, user, uid, groups] => (token, user, uid, Some(groups)),
        _ if fields.len() < 3 => {
            return Err(format!(
                "{} field(s); expected token,user,uid[,\"group1,group2\"]",
                fields.len()
            ));
        }
        _ => {
            return Err(format!(
                "{} fields; expected token,user,uid[,\"group1,group2\"] (quote a list of several groups)",
                fields.len()
            ));
        }
    };
    if token.is_empty() {
        return Err("the token is empty".into());
    }
    if !token
        .bytes()
        .all(|byte| byte.is_ascii_graphic() && byte != b'"' && byte != b',')
    {
        return Err(
            "the token may only hold printable ASCII characters without spaces, quotes or commas".into(),
        );
    }
    if user.is_empty() {
        return Err("the user name is empty".into());
    }
    if user.chars().any(char::is_control) || uid.chars().any(char::is_control) {
        return Err("the user name or uid holds a control character".into());
    }
    let groups: Vec<String> = groups
        .map(|groups| {
            groups
                .split(',')
                .map(str::trim)
                .filter(|group| !group.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let role = Role::of_groups(&groups);
    Ok((
        token.clone(),
        Identity {
            user: user.clone(),
            uid: uid.clone(),
            groups,
            role,
        },
    ))
}

/// Splits one CSV line into fields (RFC 4180 quoting: `"…"` with `""` for a quote), each trimmed of the spaces
/// and tabs around it.
fn split_csv_line(line: &str) -> Result<Vec<String>, &'static str> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err("a quote is not closed"),
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                chars.next();
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(_) => return Err("text after a closing quote"),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field.trim_end_matches([' ', '\t']).to_string());
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some('"') => return Err("a quote inside an unquoted field"),
                    Some(c) => field.push(c),
                }
            }
            fields.push(field.trim_end_matches([' ', '\t']).to_string());
        }
    }
}

/// The token table the API consults, reloadable from its file. Clones share one table.
#[derive(Clone)]
pub struct TokenAuth {
    inner: Arc<TokenAuthInner>,
}

struct TokenAuthInner {
    /// The token file.
    path: PathBuf,
    /// The table in force; replaced whole by a successful reload.
    table: RwLock<Arc<TokenTable>>,
}

impl std::fmt::Debug for TokenAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenAuth")
            .field("path", &self.inner.path)
            .field("tokens", &self.table().len())
            .finish()
    }
}

/// Two handles are equal when they share one table.
impl PartialEq for TokenAuth {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for TokenAuth {}

impl TokenAuth {
    /// Loads the token file at `path`.
    pub fn load(path: &Path) -> Result<Self, TokenFileError> {
        let table = TokenTable::load(path)?;
        Ok(Self {
            inner: Arc::new(TokenAuthInner {
                path: path.to_path_buf(),
                table: RwLock::new(Arc::new(table)),
            }),
        })
    }

    /// The token file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Reads the file again and, when it is valid, replaces the table; returns how many tokens it now holds.
    /// On an error the old table stays in force.
    pub fn reload(&self) -> Result<usize, TokenFileError> {
        let table = TokenTable::load(&self.inner.path)?;
        let count = table.len();
        *self.inner.table.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(table);
        Ok(count)
    }

    /// The identity whose token is `presented` (see [`TokenTable::authenticate`]).
    #[must_use]
    pub fn authenticate(&self, presented: &[u8]) -> Option<Arc<Identity>> {
        self.table().authenticate(presented)
    }

    fn table(&self) -> Arc<TokenTable> {
        Arc::clone(&self.inner.table.read().unwrap_or_else(PoisonError::into_inner))
    }
}

pub mod agent_tokens;
pub mod stream_tokens;

#[cfg(test)]
mod tests;
