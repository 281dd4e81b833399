//! EMCO app profiles: an archive with `manifest.yaml` (`{version: v1, type: {values: <file>}}`) naming a values file
//! whose content overrides the chart's values for one app of a composite profile.

use serde_json::Value as Json;

use crate::archive::{ArchiveError, read_tgz};

/// Why a profile archive was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// The archive itself is unreadable.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// `manifest.yaml` is missing, names no values file, or names one that is missing.
    #[error("app profile: {0}")]
    Manifest(String),
    /// A YAML file of the profile does not parse or is not a mapping.
    #[error("{file}: {message}")]
    Yaml {
        /// The file.
        file: String,
        /// What is wrong with it.
        message: String,
    },
}

/// The override values an app profile carries.
#[derive(Debug, Clone, PartialEq)]
pub struct AppProfileValues {
    /// The values file's name inside the archive.
    pub file: String,
    /// Its content (an object).
    pub values: Json,
}

/// Parses a YAML file of the profile into a mapping (empty text is an empty mapping).
fn yaml_mapping(file: &str, bytes: &[u8]) -> Result<Json, ProfileError> {
    let bad = |message: String| ProfileError::Yaml {
        file: file.to_string(),
        message,
    };
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".into()))?;
    match crate::formats::yaml::parse(text).map_err(|err| bad(err.to_string()))? {
        Json::Null => Ok(Json::Object(Default::default())),
        object @ Json::Object(_) => Ok(object),
        _ => Err(bad("the top level must be a mapping".into())),
    }
}

/// Reads an app profile archive: `manifest.yaml` and the values file it names.
pub fn read_app_profile(tgz: &[u8]) -> Result<AppProfileValues, ProfileError> {
    let files = read_tgz(tgz)?;
    let base = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
    let manifest = files
        .iter()
        .find(|file| base(&file.path) == "manifest.yaml")
        .ok_or_else(|| ProfileError::Manifest("manifest.yaml is missing".into()))?;
    let parsed = yaml_mapping(&manifest.path, &manifest.bytes)?;
    let wanted = parsed["type"]["values"].as_str().unwrap_or_default().to_string();
    if wanted.is_empty() {
        return Err(ProfileError::Manifest(format!(
            "{}: type.values is required",
            manifest.path
        )));
    }
    let values_file = files
        .iter()
        .find(|file| file.path == wanted || base(&file.path) == wanted)
        .ok_or_else(|| {
            ProfileError::Manifest(format!(
                "manifest.yaml names values file '{wanted}', which is missing"
            ))
        })?;
    Ok(AppProfileValues {
        file: values_file.path.clone(),
        values: yaml_mapping(&values_file.path, &values_file.bytes)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::write_tgz;

    #[test]
    fn reads_app_profile_values() {
        let tgz = write_tgz(&[
            (
                "manifest.yaml",
                b"version: v1\ntype:\n  values: override_values.yaml\n",
            ),
            ("override_values.yaml", b"replicaCount: 2\nenabled: yes\n"),
        ]);
        let profile = read_app_profile(&tgz).expect("profile");
        assert_eq!(profile.values["replicaCount"], 2);
        // YAML 1.1, as Helm reads values.
        assert_eq!(profile.values["enabled"], true);
    }

    #[test]
    fn names_what_is_missing_or_broken() {
        let missing = write_tgz(&[("manifest.yaml", b"version: v1\ntype:\n  values: other.yaml\n")]);
        assert!(
            read_app_profile(&missing)
                .unwrap_err()
                .to_string()
                .contains("other.yaml")
        );
        let no_manifest = write_tgz(&[("values.yaml", b"a: 1\n")]);
        assert!(
            read_app_profile(&no_manifest)
                .unwrap_err()
                .to_string()
                .contains("manifest.yaml is missing")
        );
        let unnamed = write_tgz(&[("manifest.yaml", b"version: v1\n")]);
        assert!(
            read_app_profile(&unnamed)
                .unwrap_err()
                .to_string()
                .contains("type.values is required")
        );
        let broken = write_tgz(&[
            ("manifest.yaml", b"version: v1\ntype:\n  values: v.yaml\n"),
            ("v.yaml", b"a: [1, 2\n"),
        ]);
        assert!(
            read_app_profile(&broken)
                .unwrap_err()
                .to_string()
                .starts_with("v.yaml: ")
        );
        let list = write_tgz(&[
            ("manifest.yaml", b"version: v1\ntype:\n  values: v.yaml\n"),
            ("v.yaml", b"- 1\n"),
        ]);
        assert!(
            read_app_profile(&list)
                .unwrap_err()
                .to_string()
                .contains("must be a mapping")
        );
    }
}
