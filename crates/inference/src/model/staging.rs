//! Writing a new package folder all at once: a package tool (`import searchless`, `package quantize`)
//! fills a scratch folder beside the target, which is renamed into place only when everything is written,
//! so a failed or interrupted run leaves no half package and never touches a folder that has files.

use std::path::{Path, PathBuf};

/// Why the target folder, or a file of the package written into it, cannot be written: the file-system
/// error of every package tool (`import searchless`, `import hf`, `import lc0`, `package quantize`), which
/// each keep it as their `Files` variant.
#[derive(Debug, thiserror::Error)]
pub enum StagingError {
    /// The target has files in it.
    #[error("{} already exists and is not empty; choose another folder or remove it", .0.display())]
    OutputExists(PathBuf),
    /// A file or folder could not be read, written, made or renamed.
    #[error("{path}: {reason}", path = .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
}

/// The error of a file operation on `path`, for the `?` of any error that holds a [`StagingError`]:
/// `fs::read(p).map_err(io(p))?`.
pub fn io(path: &Path) -> impl Fn(std::io::Error) -> StagingError + '_ {
    move |e| StagingError::Io { path: path.to_path_buf(), reason: e.to_string() }
}

/// Runs `write` on a scratch folder beside `out` (which must not exist or be empty) and renames the folder
/// to `out` when it succeeds; when it fails, the scratch folder is removed and `out` is as it was.
pub fn write_staged<T, E: From<StagingError>>(
    out: &Path,
    write: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    if out.exists() && std::fs::read_dir(out).map_err(io(out))?.next().is_some() {
        return Err(StagingError::OutputExists(out.to_path_buf()).into());
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let leaf = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "package".into());
    let tmp = parent.join(format!(".{leaf}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    match write(&tmp) {
        Ok(value) => {
            if out.exists() {
                std::fs::remove_dir(out).map_err(io(out))?;
            }
            std::fs::rename(&tmp, out).map_err(io(out))?;
            Ok(value)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_nothing_and_a_full_folder_is_refused() {
        let dir = std::env::temp_dir().join(format!("mavboard-staging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = dir.join("pkg");
        let failed: Result<(), StagingError> = write_staged(&out, |tmp| {
            std::fs::write(tmp.join("half"), "x").expect("write");
            Err(StagingError::Io { path: tmp.to_path_buf(), reason: "stopped".into() })
        });
        assert!(failed.is_err());
        assert!(!out.exists());
        assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 0, "no scratch folder left");
        let ok: Result<u8, StagingError> = write_staged(&out, |tmp| {
            std::fs::write(tmp.join("mav.json"), "{}").expect("write");
            Ok(7)
        });
        assert_eq!(ok.expect("written"), 7);
        assert!(out.join("mav.json").is_file());
        let again: Result<(), StagingError> = write_staged(&out, |_| Ok(()));
        assert!(matches!(again, Err(StagingError::OutputExists(_))));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
