//! Where the app keeps its settings between runs: a file in the platform's *config* folder, not in its data
//! folder (where eframe puts state by default).
//!
//! - Linux and other Unix systems: `$XDG_CONFIG_HOME/mavboard/settings.ron` (default `~/.config/mavboard/`);
//! - macOS: `~/Library/Application Support/mavboard/settings.ron`;
//! - Windows: `%APPDATA%\mavboard\settings.ron`.
//!
//! Versions before this one let eframe save to its default file (`~/.local/share/mavboard/app.ron` on
//! Linux). [`prepare`] copies that file to the new place once, so nobody loses their settings, and leaves
//! the old one where it was.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The settings file's name inside [`config_dir`].
pub const FILE_NAME: &str = "settings.ron";

/// Why the settings file could not be prepared (the app then runs without saving settings).
#[derive(Debug, thiserror::Error)]
pub enum SettingsFileError {
    /// The platform's config folder is unknown (no home folder in the environment).
    #[error("the config folder is unknown: set HOME (or XDG_CONFIG_HOME)")]
    NoConfigDir,
    /// The config folder could not be created.
    #[error("cannot create the settings folder {path}: {source}")]
    CreateDir {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The earlier settings file could not be copied.
    #[error("cannot copy the earlier settings {from} to {to}: {source}")]
    Migrate {
        /// The earlier file.
        from: PathBuf,
        /// The new file.
        to: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// The platform's config folder for mavboard, reading the environment through `var`
/// (`std::env::var_os` in the app; tests pass their own).
pub fn config_dir_with(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(target_os = "windows") {
        return var("APPDATA").map(|d| d.join("mavboard"));
    }
    if cfg!(target_os = "macos") {
        return var("HOME").map(|h| h.join("Library/Application Support/mavboard"));
    }
    var("XDG_CONFIG_HOME")
        .filter(|d| d.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".config")))
        .map(|d| d.join("mavboard"))
}

/// The platform's config folder for mavboard (see the module docs); `None` when the home folder is unknown.
pub fn config_dir() -> Option<PathBuf> {
    config_dir_with(|name| std::env::var_os(name))
}

/// Copies the settings an earlier version saved at `legacy` to `file` when `file` does not exist yet;
/// returns whether it copied. The copy is written beside `file` and renamed, so a crash leaves no half file.
pub fn migrate(legacy: &Path, file: &Path) -> Result<bool, SettingsFileError> {
    if file.exists() || !legacy.is_file() {
        return Ok(false);
    }
    let err = |source| SettingsFileError::Migrate { from: legacy.to_owned(), to: file.to_owned(), source };
    let tmp = file.with_extension("ron.part");
    std::fs::copy(legacy, &tmp).map_err(err)?;
    std::fs::rename(&tmp, file).map_err(err)?;
    Ok(true)
}

/// The settings file for this run, its folder created and earlier settings (`app.ron` in `legacy_dir`,
/// the folder where eframe kept them by default; the shell asks eframe for it) copied in on first use.
pub fn prepare(legacy_dir: Option<PathBuf>) -> Result<PathBuf, SettingsFileError> {
    let dir = config_dir().ok_or(SettingsFileError::NoConfigDir)?;
    std::fs::create_dir_all(&dir)
        .map_err(|source| SettingsFileError::CreateDir { path: dir.clone(), source })?;
    let file = dir.join(FILE_NAME);
    if let Some(old) = legacy_dir {
        let legacy = old.join("app.ron");
        if migrate(&legacy, &file)? {
            tracing::info!("settings copied from {} to {}", legacy.display(), file.display());
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, OsString)> =
            pairs.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn the_config_folder_follows_xdg() {
        let dir = config_dir_with(env(&[("HOME", "/home/ann"), ("XDG_CONFIG_HOME", "/cfg")]));
        assert_eq!(dir, Some(PathBuf::from("/cfg/mavboard")));
        // a relative or empty XDG_CONFIG_HOME is ignored, as the XDG base directory spec says
        let dir = config_dir_with(env(&[("HOME", "/home/ann"), ("XDG_CONFIG_HOME", "cfg")]));
        assert_eq!(dir, Some(PathBuf::from("/home/ann/.config/mavboard")));
        let dir = config_dir_with(env(&[("HOME", "/home/ann"), ("XDG_CONFIG_HOME", "")]));
        assert_eq!(dir, Some(PathBuf::from("/home/ann/.config/mavboard")));
        assert_eq!(config_dir_with(env(&[])), None);
    }

    #[test]
    fn earlier_settings_are_copied_once_and_never_over_newer_ones() {
        let dir = std::env::temp_dir().join(format!("mavboard-settings-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let legacy = dir.join("app.ron");
        let file = dir.join("cfg").join(FILE_NAME);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        // nothing earlier: nothing to copy
        assert!(!migrate(&legacy, &file).expect("no legacy"));
        assert!(!file.exists());
        std::fs::write(&legacy, "(theme: \"light\")").expect("write");
        assert!(migrate(&legacy, &file).expect("copy"));
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "(theme: \"light\")");
        assert!(legacy.exists(), "the earlier file stays where it was");
        // the new file is the user's from now on: a second run copies nothing over it
        std::fs::write(&file, "(theme: \"dark\")").expect("write");
        assert!(!migrate(&legacy, &file).expect("kept"));
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "(theme: \"dark\")");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn a_copy_that_fails_names_both_files() {
        let dir = std::env::temp_dir().join(format!("mavboard-settings-fail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let legacy = dir.join("app.ron");
        std::fs::write(&legacy, "()").expect("write");
        let file = dir.join("missing-folder").join(FILE_NAME);
        let msg = migrate(&legacy, &file).expect_err("no folder").to_string();
        assert!(msg.contains("app.ron") && msg.contains("missing-folder"), "{msg}");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
