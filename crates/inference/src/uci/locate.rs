//! Finding an engine binary: an explicit path, then `PATH`, then where Debian installs Stockfish.

use std::path::{Path, PathBuf};

use super::UciError;

/// Where Debian and Ubuntu's `stockfish` package installs the binary (not on root's `PATH`).
pub const DEBIAN_STOCKFISH: &str = "/usr/games/stockfish";

fn is_executable_file(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                meta.permissions().mode() & 0o111 != 0
            }
            #[cfg(not(unix))]
            {
                true
            }
        }
        _ => false,
    }
}

/// Finds Stockfish: `explicit` if given (and only it: a wrong explicit path is an error, not a reason to
/// silently use another binary), else `stockfish` on `PATH`, else [`DEBIAN_STOCKFISH`].
pub fn locate_stockfish(explicit: Option<&Path>) -> Result<PathBuf, UciError> {
    locate_engine(explicit, "stockfish", &[Path::new(DEBIAN_STOCKFISH)], std::env::var_os("PATH").as_deref())
}

/// Finds an engine: `explicit` if given, else the first executable `name` in the directories of
/// `path_var` (a `PATH`-style list), else the first executable of `fallbacks`. The error lists everything
/// tried.
pub fn locate_engine(
    explicit: Option<&Path>,
    name: &str,
    fallbacks: &[&Path],
    path_var: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, UciError> {
    if let Some(path) = explicit {
        // A bare name like `stockfish` given explicitly is looked up on PATH, as a shell would.
        if path.components().count() == 1 && !path.exists() {
            if let Some(found) = search_path(path, path_var) {
                return Ok(found);
            }
        } else if is_executable_file(path) {
            return Ok(path.to_path_buf());
        }
        return Err(UciError::NotFound { tried: vec![path.to_path_buf()] });
    }
    let mut tried = Vec::new();
    if let Some(found) = search_path(Path::new(name), path_var) {
        return Ok(found);
    }
    tried.push(PathBuf::from(format!("{name} on PATH")));
    for fallback in fallbacks {
        if is_executable_file(fallback) {
            return Ok(fallback.to_path_buf());
        }
        tried.push(fallback.to_path_buf());
    }
    Err(UciError::NotFound { tried })
}

fn search_path(name: &Path, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?).map(|dir| dir.join(name)).find(|p| is_executable_file(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_missing_path_is_named_with_the_fix() {
        let e =
            locate_engine(Some(Path::new("/nonexistent/sf")), "stockfish", &[], None).expect_err("missing");
        let msg = e.to_string();
        assert!(msg.contains("/nonexistent/sf"), "{msg}");
        assert!(msg.contains("apt-get install stockfish"), "{msg}");
        assert!(msg.contains("/usr/games/stockfish"), "{msg}");
        assert!(msg.contains("--stockfish PATH"), "{msg}");
    }

    #[test]
    fn path_then_fallbacks_in_order() {
        let dir = std::env::temp_dir().join(format!("mavboard-locate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let e =
            locate_engine(None, "no-such-engine-xyz", &[Path::new("/nonexistent/a")], Some(dir.as_os_str()))
                .expect_err("nothing there");
        let msg = e.to_string();
        assert!(msg.contains("no-such-engine-xyz on PATH") && msg.contains("/nonexistent/a"), "{msg}");
        // /bin/sh exists everywhere the tests run: as a fallback it is found; on PATH too.
        let sh = Path::new("/bin/sh");
        if is_executable_file(sh) {
            let found = locate_engine(None, "no-such-engine-xyz", &[Path::new("/nonexistent/a"), sh], None)
                .expect("fallback found");
            assert_eq!(found, sh);
            let found = locate_engine(None, "sh", &[], Some(std::ffi::OsStr::new("/nonexistent:/bin")))
                .expect("found on PATH");
            assert_eq!(found, sh);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
