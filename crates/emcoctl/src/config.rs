//! Where emcoctl sends its requests: `--emco URL`, else `EMCO_URL`, else the emcoctl config file (`--config`, or
//! `~/.emco.yaml`: EMCO's keys, case-insensitive — `ingress` when set, else `orchestrator`, each with `host`, `port`
//! and, for an API served over TLS, `scheme: https`), else
//! `http://localhost:9015`. emco-rs serves every EMCO service from one API, so every anchor goes to the same place.
//!
//! The bearer token for an API that requires one comes the same way: `--token`, else `EMCO_TOKEN`, else the
//! config file's top-level `token` key. It is never printed, not even in an error.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

/// The API when nothing says otherwise (EMCO's orchestrator port).
pub const DEFAULT_TARGET: &str = "http://localhost:9015";

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not the emcoctl configuration.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The URL of the API from the flag, the environment value of `EMCO_URL` and the config file, in that order.
pub fn resolve(
    flag: Option<&str>,
    environment: Option<&str>,
    config_file: Option<&Path>,
) -> Result<String, ConfigError> {
    if let Some(url) = flag.or(environment).filter(|url| !url.is_empty()) {
        return Ok(url.to_string());
    }
    let Some(path) = config_file else {
        return Ok(DEFAULT_TARGET.to_string());
    };
    let config = read_config(path)?;
    let section = |name: &str| {
        config.as_object().and_then(|map| {
            map.iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        })
    };
    let field = |section: &Json, name: &str| {
        section.as_object().and_then(|map| {
            map.iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        })
    };
    for name in ["ingress", "orchestrator"] {
        let Some(section) = section(name) else { continue };
        let host = field(&section, "host")
            .and_then(|h| h.as_str().map(str::to_string))
            .filter(|h| !h.is_empty());
        let port = field(&section, "port")
            .and_then(|p| p.as_u64().or_else(|| p.as_str().and_then(|s| s.parse().ok())));
        // Not one of EMCO's keys: `scheme: https` for an API served over TLS (http when absent).
        let scheme = match field(&section, "scheme") {
            None | Some(Json::Null) => "http",
            Some(Json::String(scheme)) if scheme.eq_ignore_ascii_case("http") => "http",
            Some(Json::String(scheme)) if scheme.eq_ignore_ascii_case("https") => "https",
            Some(_) => {
                return Err(ConfigError::Invalid {
                    path: path.into(),
                    message: format!("{name}.scheme must be http or https"),
                });
            }
        };
        match (host, port) {
            (Some(host), Some(port)) => return Ok(format!("{scheme}://{host}:{port}")),
            (None, None) => continue,
            _ => {
                return Err(ConfigError::Invalid {
                    path: path.into(),
                    message: format!("{name} needs both host and port"),
                });
            }
        }
    }
    Ok(DEFAULT_TARGET.to_string())
}

/// The bearer token from the flag, the environment value of `EMCO_TOKEN` and the config file's `token` key, in
/// that order (`None`: send no token). Empty values count as absent.
pub fn resolve_token(
    flag: Option<&str>,
    environment: Option<&str>,
    config_file: Option<&Path>,
) -> Result<Option<String>, ConfigError> {
    if let Some(token) = flag.or(environment).filter(|token| !token.is_empty()) {
        return Ok(Some(token.to_string()));
    }
    let Some(path) = config_file else {
        return Ok(None);
    };
    let config = read_config(path)?;
    let token = config.as_object().and_then(|map| {
        map.iter()
            .find(|(key, _)| key.eq_ignore_ascii_case("token"))
            .map(|(_, value)| value)
    });
    match token {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(token)) if token.is_empty() => Ok(None),
        Some(Json::String(token)) => Ok(Some(token.clone())),
        Some(_) => Err(ConfigError::Invalid {
            path: path.into(),
            message: "token must be a string".into(),
        }),
    }
}

/// The config file as JSON.
fn read_config(path: &Path) -> Result<Json, ConfigError> {
    // The default file is optional; a file named with --config is not (the caller passes only existing
    // defaults).
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.into(),
        source,
    })?;
    serde_saphyr::from_str(&text).map_err(|err| ConfigError::Invalid {
        path: path.into(),
        message: format!("not YAML: {err}"),
    })
}

/// A duration on a command line (`--timeout`, emco's duration flags): see [`emco_model::duration::parse_duration`].
pub use emco_model::duration::parse_duration;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_then_environment_then_file() {
        let dir = std::env::temp_dir().join(format!("emcoctl-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("emco.yaml");
        std::fs::write(
            &file,
            "Orchestrator:\n  Host: emco.example\n  Port: 9015\nclm: {host: x, port: 1}\n",
        )
        .unwrap();
        assert_eq!(
            resolve(Some("http://a:1"), Some("http://b:2"), Some(&file)).unwrap(),
            "http://a:1"
        );
        assert_eq!(
            resolve(None, Some("http://b:2"), Some(&file)).unwrap(),
            "http://b:2"
        );
        assert_eq!(
            resolve(None, None, Some(&file)).unwrap(),
            "http://emco.example:9015"
        );
        std::fs::write(
            &file,
            "orchestrator: {host: o, port: 1}\ningress: {host: gw, port: \"8080\"}\n",
        )
        .unwrap();
        assert_eq!(resolve(None, None, Some(&file)).unwrap(), "http://gw:8080");
        std::fs::write(&file, "orchestrator: {host: o, port: 9015, Scheme: HTTPS}\n").unwrap();
        assert_eq!(resolve(None, None, Some(&file)).unwrap(), "https://o:9015");
        std::fs::write(&file, "orchestrator: {host: o, port: 9015, scheme: ftp}\n").unwrap();
        assert!(
            resolve(None, None, Some(&file))
                .unwrap_err()
                .to_string()
                .contains("orchestrator.scheme must be http or https")
        );
        std::fs::write(&file, "orchestrator: {host: o}\n").unwrap();
        assert!(
            resolve(None, None, Some(&file))
                .unwrap_err()
                .to_string()
                .contains("orchestrator needs both host and port")
        );
        assert_eq!(resolve(None, None, None).unwrap(), DEFAULT_TARGET);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn token_from_flag_then_environment_then_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("emco.yaml");
        std::fs::write(
            &file,
            "orchestrator: {host: o, port: 1}
Token: from-file
",
        )
        .unwrap();
        let token = |flag, environment, file| resolve_token(flag, environment, file).unwrap();
        assert_eq!(token(Some("f"), Some("e"), Some(&file)).as_deref(), Some("f"));
        assert_eq!(token(None, Some("e"), Some(&file)).as_deref(), Some("e"));
        assert_eq!(
            token(Some(""), Some(""), Some(&file)).as_deref(),
            Some("from-file")
        );
        assert_eq!(token(None, None, None), None);
        std::fs::write(
            &file,
            "orchestrator: {host: o, port: 1}
",
        )
        .unwrap();
        assert_eq!(token(None, None, Some(&file)), None);
        std::fs::write(
            &file,
            "token: [not, a, string]
",
        )
        .unwrap();
        let err = resolve_token(None, None, Some(&file)).unwrap_err().to_string();
        assert!(err.ends_with("token must be a string"), "{err}");
    }
}
