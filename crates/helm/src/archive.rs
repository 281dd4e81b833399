//! Reading gzip-compressed tar archives safely: bounded total size and file count, no paths outside the archive.

use std::io::Read;

/// The most bytes all files of one archive may hold once uncompressed (guards against decompression bombs).
pub const MAX_UNPACKED_BYTES: u64 = 64 * 1024 * 1024;
/// The most files one archive may hold.
pub const MAX_FILES: usize = 4096;

/// Why an archive could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    /// Not a gzip-compressed tar archive, or a damaged one.
    #[error("not a valid .tgz archive: {0}")]
    Format(String),
    /// Larger than [`MAX_UNPACKED_BYTES`] or with more than [`MAX_FILES`] files.
    #[error("archive too large: {0}")]
    TooLarge(String),
}

/// One regular file of an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    /// Its path inside the archive, with `/` separators and no leading `./`.
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Reads every regular file of a `.tgz`.
pub fn read_tgz(bytes: &[u8]) -> Result<Vec<ArchiveFile>, ArchiveError> {
    if bytes.len() < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b {
        return Err(ArchiveError::Format("the data is not gzip-compressed".into()));
    }
    let decoder = flate2::read::GzDecoder::new(bytes);
    let mut archive = tar::Archive::new(decoder.take(MAX_UNPACKED_BYTES + 1));
    let mut files = Vec::new();
    let mut total: u64 = 0;
    let entries = archive
        .entries()
        .map_err(|err| ArchiveError::Format(err.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|err| ArchiveError::Format(err.to_string()))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .map_err(|err| ArchiveError::Format(err.to_string()))?;
        let path = path.to_string_lossy().trim_start_matches("./").to_string();
        if path.split('/').any(|part| part == "..") || path.starts_with('/') {
            return Err(ArchiveError::Format(format!(
                "file '{path}' points outside the archive"
            )));
        }
        let size = entry
            .header()
            .size()
            .map_err(|err| ArchiveError::Format(err.to_string()))?;
        total = total.saturating_add(size);
        if total > MAX_UNPACKED_BYTES {
            return Err(ArchiveError::TooLarge(format!(
                "more than {MAX_UNPACKED_BYTES} bytes uncompressed"
            )));
        }
        if files.len() == MAX_FILES {
            return Err(ArchiveError::TooLarge(format!("more than {MAX_FILES} files")));
        }
        let mut content = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        entry
            .read_to_end(&mut content)
            .map_err(|err| ArchiveError::Format(format!("{path}: {err}")))?;
        files.push(ArchiveFile { path, bytes: content });
    }
    if files.is_empty() {
        return Err(ArchiveError::Format("the archive holds no files".into()));
    }
    Ok(files)
}

/// Packs files into a `.tgz` (used to build charts and profiles in tests, demos and tools).
pub fn write_tgz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(encoder);
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        // Writing into a Vec cannot fail; a failure here would be a bug in the tar crate.
        builder
            .append_data(&mut header, path, *bytes)
            .expect("append to an in-memory tar");
    }
    let encoder = builder.into_inner().expect("finish an in-memory tar");
    encoder.finish().expect("finish an in-memory gzip stream")
}

/// Packs every file under `dir` (sorted, recursively) into a `.tgz`, each named `prefix` + its path relative to
/// `dir` (`"firewall/"` for a chart, as `helm package` lays it out; `""` for a profile). A directory without files
/// is an error naming it.
pub fn pack_dir(dir: &std::path::Path, prefix: &str) -> std::io::Result<Vec<u8>> {
    fn collect(
        root: &std::path::Path,
        dir: &std::path::Path,
        prefix: &str,
        files: &mut Vec<(String, Vec<u8>)>,
    ) -> std::io::Result<()> {
        let with_path =
            |err: std::io::Error| std::io::Error::new(err.kind(), format!("{}: {err}", dir.display()));
        let mut entries = std::fs::read_dir(dir)
            .map_err(with_path)?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(with_path)?;
        entries.sort();
        for path in entries {
            if path.is_dir() {
                collect(root, &path, prefix, files)?;
            } else {
                let relative = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                let bytes = std::fs::read(&path)
                    .map_err(|err| std::io::Error::new(err.kind(), format!("{}: {err}", path.display())))?;
                files.push((format!("{prefix}{relative}"), bytes));
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    collect(dir, dir, prefix, &mut files)?;
    if files.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} has no files", dir.display()),
        ));
    }
    let borrowed: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    Ok(write_tgz(&borrowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_a_directory_under_a_prefix() {
        let dir = std::env::temp_dir().join(format!("emco-helm-pack-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("templates")).unwrap();
        std::fs::write(dir.join("Chart.yaml"), "name: c").unwrap();
        std::fs::write(dir.join("templates/cm.yaml"), "kind: ConfigMap").unwrap();
        let files = read_tgz(&pack_dir(&dir, "c/").unwrap()).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(names, ["c/Chart.yaml", "c/templates/cm.yaml"]);
        assert_eq!(files[1].bytes, b"kind: ConfigMap");
        let empty = dir.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(
            pack_dir(&empty, "")
                .unwrap_err()
                .to_string()
                .contains("has no files")
        );
        assert!(
            pack_dir(&dir.join("absent"), "")
                .unwrap_err()
                .to_string()
                .contains("absent")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn round_trips_files_and_refuses_garbage() {
        let tgz = write_tgz(&[("c/Chart.yaml", b"name: c"), ("c/values.yaml", b"")]);
        let files = read_tgz(&tgz).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, "c/Chart.yaml");
        assert!(matches!(read_tgz(b"plain text"), Err(ArchiveError::Format(_))));
        let mut truncated = tgz.clone();
        truncated.truncate(tgz.len() / 2);
        assert!(read_tgz(&truncated).is_err());
    }

    #[test]
    fn refuses_decompression_bombs() {
        let big = vec![0u8; (MAX_UNPACKED_BYTES + 1) as usize];
        let tgz = write_tgz(&[("bomb", &big)]);
        assert!(tgz.len() < 1024 * 1024, "compresses well");
        assert!(matches!(read_tgz(&tgz), Err(ArchiveError::TooLarge(_))));
    }
}
