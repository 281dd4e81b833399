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
    let mut archive = tar::Archive::new(SkipForward::new(decoder.take(MAX_UNPACKED_BYTES + 1)));
    let mut files = Vec::new();
    let mut total: u64 = 0;
    let entries = archive
        .entries_with_seek()
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

/// A stream that can "seek" forward by reading and dropping bytes, so the tar reader skips entry padding and
/// unread data through one scratch buffer instead of zeroing a fresh 32 KiB buffer for every entry (a large share
/// of reading a small chart). Seeking backwards is refused; the tar reader never does it.
struct SkipForward<R> {
    inner: R,
    /// Bytes read (or skipped) so far: the stream position the tar reader asks about.
    position: u64,
    scratch: Vec<u8>,
}

impl<R: Read> SkipForward<R> {
    /// The size of the scratch buffer skipped bytes are read into.
    const SCRATCH_BYTES: usize = 8 * 1024;

    fn new(inner: R) -> Self {
        Self {
            inner,
            position: 0,
            scratch: Vec::new(),
        }
    }

    fn skip(&mut self, mut amount: u64) -> std::io::Result<()> {
        if amount > 0 && self.scratch.is_empty() {
            self.scratch = vec![0; Self::SCRATCH_BYTES];
        }
        while amount > 0 {
            let chunk = usize::try_from(amount).map_or(self.scratch.len(), |n| n.min(self.scratch.len()));
            let read = self.inner.read(&mut self.scratch[..chunk])?;
            if read == 0 {
                return Err(std::io::Error::other("unexpected EOF during skip"));
            }
            self.position += read as u64;
            amount -= read as u64;
        }
        Ok(())
    }
}

impl<R: Read> Read for SkipForward<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.position += read as u64;
        Ok(read)
    }
}

impl<R: Read> std::io::Seek for SkipForward<R> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            std::io::SeekFrom::Start(target) => Some(target),
            std::io::SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
            std::io::SeekFrom::End(_) => None,
        };
        match target {
            Some(target) if target >= self.position => {
                self.skip(target - self.position)?;
                Ok(self.position)
            }
            _ => Err(std::io::Error::other(format!(
                "cannot seek backwards or from the end in a compressed stream (at byte {})",
                self.position
            ))),
        }
    }
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
    use std::io::{Seek, SeekFrom};

    #[test]
    fn skips_forward_and_refuses_to_go_back() {
        let data: Vec<u8> = (0..=255u8).cycle().take(20_000).collect();
        let mut stream = SkipForward::new(data.as_slice());
        let mut byte = [0u8; 1];
        assert_eq!(stream.stream_position().unwrap(), 0);
        assert_eq!(stream.seek(SeekFrom::Current(10_000)).unwrap(), 10_000);
        stream.read_exact(&mut byte).unwrap();
        assert_eq!(byte[0], data[10_000]);
        assert_eq!(stream.seek(SeekFrom::Start(15_001)).unwrap(), 15_001);
        stream.read_exact(&mut byte).unwrap();
        assert_eq!(byte[0], data[15_001]);
        assert!(stream.seek(SeekFrom::Start(3)).is_err());
        assert!(stream.seek(SeekFrom::Current(-1)).is_err());
        assert!(stream.seek(SeekFrom::End(0)).is_err());
        let past_end = stream.seek(SeekFrom::Current(10_000)).unwrap_err();
        assert!(past_end.to_string().contains("unexpected EOF"));
    }

    #[test]
    fn reads_files_after_unread_entries() {
        // A directory entry and a symlink carry no file data the reader keeps; the files around them are intact.
        let mut builder = tar::Builder::new(Vec::new());
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut header = tar::Header::new_gnu();
        header.set_size(big.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, "c/big.bin", big.as_slice())
            .unwrap();
        let mut dir = tar::Header::new_gnu();
        dir.set_entry_type(tar::EntryType::Directory);
        dir.set_size(0);
        dir.set_mode(0o755);
        dir.set_cksum();
        builder
            .append_data(&mut dir, "c/templates/", std::io::empty())
            .unwrap();
        let mut link = tar::Header::new_gnu();
        link.set_entry_type(tar::EntryType::Symlink);
        link.set_size(0);
        link.set_cksum();
        builder.append_link(&mut link, "c/link", "big.bin").unwrap();
        let mut small = tar::Header::new_gnu();
        small.set_size(3);
        small.set_mode(0o644);
        small.set_cksum();
        builder
            .append_data(&mut small, "c/templates/a.yaml", &b"a: 1"[..3])
            .unwrap();
        let tar = builder.into_inner().unwrap();
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut encoder, &tar).unwrap();
        let files = read_tgz(&encoder.finish().unwrap()).unwrap();
        let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(paths, ["c/big.bin", "c/templates/a.yaml"]);
        assert_eq!(files[0].bytes, big);
        assert_eq!(files[1].bytes, b"a: ");
    }

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
