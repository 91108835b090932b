//! The Linux packages, unpacked as a user would install them.
//!
//! The Debian package: the `.deb` that `./packaging/dev.sh package` builds (or `$MAVBOARD_DEB`) is
//! extracted under a temporary root with `dpkg-deb -x`, and the binary there analyses a position from an
//! unrelated working directory without `ORT_DYLIB_PATH`, so its models and ONNX Runtime must come from the
//! unpacked tree. The package's file list and its desktop entry are checked too.
//!
//! The tarball: `target/mavboard-<version>-linux-<arch>.tar.gz` from the same command (or
//! `$MAVBOARD_TARBALL`) is unpacked with `tar` into a temporary folder and checked the same way: its one top
//! folder is an installation prefix (`bin/mavboard`, `lib/mavboard/`, `share/…`) with the README, the
//! licence and the install notes on top.
//!
//! Without a package (or without `dpkg-deb`, `tar`) these tests skip with a message, unless
//! `MAVBOARD_REQUIRE_DEB=1` (set by `./packaging/dev.sh test`, which packages the binary it built first, as
//! a `.deb` and as a tarball), where they fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::packaging_common;
use packaging_common::Scratch;

fn required() -> bool {
    std::env::var("MAVBOARD_REQUIRE_DEB").is_ok_and(|v| v == "1")
}

/// Skips (returns `None` after saying why) or, with `MAVBOARD_REQUIRE_DEB=1`, fails.
fn skip(why: &str) -> Option<PathBuf> {
    assert!(!required(), "MAVBOARD_REQUIRE_DEB=1 but {why}");
    eprintln!(
        "SKIP: {why}; build the packages with `./packaging/dev.sh package` (or set MAVBOARD_DEB=FILE.deb, \
         MAVBOARD_TARBALL=FILE.tar.gz)"
    );
    None
}

/// The cargo target folder: `$CARGO_TARGET_DIR`, else the checkout's `target/`.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// The most recently modified file in `dir` whose name passes `wanted`.
fn newest_in(dir: &Path, wanted: impl Fn(&str) -> bool) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&wanted))
        .filter_map(|p| Some((std::fs::metadata(&p).and_then(|m| m.modified()).ok()?, p)))
        .max()
        .map(|(_, p)| p)
}

/// The package to test: `$MAVBOARD_DEB`, else the newest `target/debian/*.deb`; `None` when the test skips.
fn package() -> Option<PathBuf> {
    if Command::new("dpkg-deb").arg("--version").output().is_err() {
        return skip("dpkg-deb is not installed (apt-get install dpkg)");
    }
    if let Some(path) = std::env::var_os("MAVBOARD_DEB").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "MAVBOARD_DEB={} is not a file", path.display());
        return Some(path);
    }
    let dir = target_dir().join("debian");
    match newest_in(&dir, |name| name.ends_with(".deb")) {
        Some(p) => Some(p),
        None => skip(&format!("no .deb in {}", dir.display())),
    }
}

/// The tarball to test: `$MAVBOARD_TARBALL`, else the newest `target/mavboard-*-linux-*.tar.gz`; `None`
/// when the test skips.
fn tarball() -> Option<PathBuf> {
    if Command::new("tar").arg("--version").output().is_err() {
        return skip("tar is not installed");
    }
    if let Some(path) = std::env::var_os("MAVBOARD_TARBALL").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "MAVBOARD_TARBALL={} is not a file", path.display());
        return Some(path);
    }
    let dir = target_dir();
    let wanted =
        |name: &str| name.starts_with("mavboard-") && name.contains("-linux-") && name.ends_with(".tar.gz");
    match newest_in(&dir, wanted) {
        Some(p) => Some(p),
        None => skip(&format!("no mavboard-*-linux-*.tar.gz in {}", dir.display())),
    }
}

/// Unpacks `archive` into `into` and returns its one top folder (every entry must be under it).
fn unpack_tarball(archive: &Path, into: &Path) -> PathBuf {
    let out = Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(into).output().expect("run tar -x");
    assert!(out.status.success(), "tar -xzf {}: {}", archive.display(), String::from_utf8_lossy(&out.stderr));
    let top: Vec<PathBuf> =
        std::fs::read_dir(into).expect("read the unpacked folder").flatten().map(|e| e.path()).collect();
    assert_eq!(top.len(), 1, "{} should hold one top folder, it holds {top:?}", archive.display());
    assert!(top[0].is_dir(), "{} is not a folder", top[0].display());
    top[0].clone()
}

/// Every path under `root`, relative to it with `/` between names; a link is listed by its own path.
fn tree(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read an unpacked folder").flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            let rel = if rel.is_empty() { name } else { format!("{rel}/{name}") };
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            out.push(rel.clone());
            if is_dir {
                walk(&entry.path(), &rel, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, "", &mut out);
    out.sort();
    out
}

/// The paths in the package's data archive (`dpkg-deb -c`), without the leading `./`; a link is listed by
/// its own path.
fn file_list(deb: &Path) -> Vec<String> {
    let out = Command::new("dpkg-deb").arg("-c").arg(deb).output().expect("run dpkg-deb -c");
    assert!(out.status.success(), "dpkg-deb -c {}: {}", deb.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            // "-rw-r--r-- root/root 1234 2026-01-01 00:00 ./usr/bin/mavboard", links end in " -> target".
            let path = line.split_once(" ./").map(|(_, rest)| rest)?;
            let path = path.split_once(" -> ").map_or(path, |(link, _)| link);
            Some(path.trim_end_matches('/').to_owned())
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// The `[Desktop Entry]` group of a desktop file as key → value; panics on a line that is neither a
/// comment, a group header nor `key=value`.
fn desktop_entry(text: &str) -> BTreeMap<String, String> {
    let mut group = None;
    let mut entry = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            group = Some(name.to_owned());
            continue;
        }
        let (key, value) =
            line.split_once('=').unwrap_or_else(|| panic!("line {}: not key=value: {line}", n + 1));
        assert!(group.is_some(), "line {}: a key before any group", n + 1);
        if group.as_deref() == Some("Desktop Entry") {
            let previous = entry.insert(key.trim().to_owned(), value.trim().to_owned());
            assert!(previous.is_none(), "line {}: {key} twice", n + 1);
        }
    }
    entry
}

/// Every file under the checkout's assets/models/, as a path relative to that folder.
fn checkout_model_files() -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read assets/models").flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            let rel = if rel.is_empty() { name } else { format!("{rel}/{name}") };
            if entry.path().is_dir() {
                walk(&entry.path(), &rel, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets").join("models"), "", &mut files);
    files.sort();
    files
}

/// Checks that `files` (paths relative to the package root) hold, under `prefix` (`usr/` for the `.deb`,
/// the top folder for the tarball), the binary, ONNX Runtime, every model file and the desktop files.
fn assert_holds_installation(files: &[String], prefix: &str, what: &Path) {
    let has = |p: &str| files.iter().any(|f| f == p);
    let missing = |p: &str| format!("{p} is not in {}; it holds:\n{}", what.display(), files.join("\n"));
    let bin = format!("{prefix}bin/mavboard");
    assert!(has(&bin), "{}", missing(&bin));
    let lib = format!("{prefix}lib/mavboard/libonnxruntime.so");
    assert!(has(&lib), "{}", missing(&lib));
    assert!(
        files.iter().any(|f| f.starts_with(&format!("{lib}."))),
        "{}",
        missing(&format!("the versioned {lib}.*"))
    );
    // Everything under assets/models/, folders kept; at least one model.
    let models = checkout_model_files();
    assert!(
        models.iter().any(|f| f.ends_with("/model.onnx")),
        "no model.onnx under assets/models: {models:?}"
    );
    for file in models {
        let path = format!("{prefix}share/mavboard/assets/models/{file}");
        assert!(has(&path), "{} (is the package older than assets/models/?)", missing(&path));
    }
    // The documentation pages the README links to (docs/*.md, beside the README's own folder), with the
    // screenshot it shows.
    for page in std::fs::read_dir(mavboard::checkout_dir().join("docs")).expect("docs/").flatten() {
        let name = page.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") || name.ends_with(".png") {
            let path = format!("{prefix}share/doc/mavboard/docs/{name}");
            assert!(has(&path), "{}", missing(&path));
        }
    }
    for path in [
        "share/applications/mavboard.desktop",
        "share/icons/hicolor/scalable/apps/mavboard.svg",
        "share/mime/packages/mavboard.xml",
    ] {
        let path = format!("{prefix}{path}");
        assert!(has(&path), "{}", missing(&path));
    }
}

#[test]
fn package_holds_binary_runtime_models_and_desktop_files() {
    let Some(deb) = package() else { return };
    assert_holds_installation(&file_list(&deb), "usr/", &deb);
}

#[test]
fn unpacked_package_analyses_from_another_directory() {
    let Some(deb) = package() else { return };
    let root = Scratch::new("root");
    let out = Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root.0).output().expect("run dpkg-deb -x");
    assert!(out.status.success(), "dpkg-deb -x: {}", String::from_utf8_lossy(&out.stderr));
    // Compare real paths: the temporary folder may itself be reached through a link.
    let root_path = std::fs::canonicalize(&root.0).expect("root");
    assert_installation_runs(&root_path.join("usr"), "deb");
}

#[test]
fn tarball_holds_the_installation_and_its_notes() {
    let Some(archive) = tarball() else { return };
    let unpacked = Scratch::new("tar-list");
    let top = unpack_tarball(&archive, &unpacked.0);
    let files = tree(&top);
    assert_holds_installation(&files, "", &archive);
    for note in ["README.md", "LICENSE", "INSTALL.md"] {
        assert!(files.iter().any(|f| f == note), "{note} is not on top of {}: {files:?}", archive.display());
    }
    // The pages the README links to, where its links lead (docs/… beside it).
    for page in std::fs::read_dir(mavboard::checkout_dir().join("docs")).expect("docs/").flatten() {
        let name = page.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") || name.ends_with(".png") {
            let path = format!("docs/{name}");
            assert!(
                files.contains(&path),
                "{path} is not in {}: the README's link to it breaks",
                archive.display()
            );
        }
    }
    // The top folder is a prefix and nothing else: no usr/ left over from the .deb.
    for file in &files {
        let first = file.split('/').next().unwrap_or_default();
        assert!(
            ["bin", "lib", "share", "docs", "README.md", "LICENSE", "INSTALL.md"].contains(&first),
            "unexpected {file} in {}",
            archive.display()
        );
    }
    // The library's links survive the archive.
    let lib = top.join("lib/mavboard/libonnxruntime.so");
    assert!(lib.is_file(), "{} does not lead to a file", lib.display());
}

#[test]
fn unpacked_tarball_analyses_from_another_directory() {
    let Some(archive) = tarball() else { return };
    let unpacked = Scratch::new("tar-root");
    let top = unpack_tarball(&archive, &unpacked.0);
    // Compare real paths: the temporary folder may itself be reached through a link.
    assert_installation_runs(&std::fs::canonicalize(&top).expect("top folder"), "tar");
}

/// Checks an unpacked installation prefix (`ROOT/usr`, or the tarball's top folder): its desktop entry and
/// MIME file, and its binary analysing the start position from an unrelated folder without
/// `ORT_DYLIB_PATH`, with its model and ONNX Runtime taken from `usr`. `tag` names its scratch folder
/// (tests run side by side).
fn assert_installation_runs(usr: &Path, tag: &str) {
    // The desktop entry: it parses, starts the installed binary on a file, and claims PGN.
    let desktop =
        std::fs::read_to_string(usr.join("share/applications/mavboard.desktop")).expect("desktop file");
    let entry = desktop_entry(&desktop);
    assert_eq!(entry.get("Type").map(String::as_str), Some("Application"), "{entry:?}");
    let exec = entry.get("Exec").expect("Exec");
    let program = exec.split_whitespace().next().expect("Exec names a program");
    assert!(usr.join("bin").join(program).is_file(), "Exec={exec} does not name usr/bin/{program}");
    assert!(exec.contains("%f") || exec.contains("%F"), "Exec={exec} takes no file");
    let mime_types: Vec<&str> = entry.get("MimeType").expect("MimeType").split(';').collect();
    assert!(mime_types.contains(&"application/x-chess-pgn"), "MimeType={mime_types:?}");
    let icon = entry.get("Icon").expect("Icon");
    assert!(
        usr.join(format!("share/icons/hicolor/scalable/apps/{icon}.svg")).is_file(),
        "Icon={icon} not installed"
    );
    let mime = std::fs::read_to_string(usr.join("share/mime/packages/mavboard.xml")).expect("mime xml");
    assert!(
        mime.contains(r#"type="application/x-chess-pgn""#) && mime.contains(r#"pattern="*.pgn""#),
        "{mime}"
    );

    // The binary, run from an empty folder elsewhere with no hint where ONNX Runtime is.
    let elsewhere = Scratch::new(&format!("{tag}-cwd"));
    let bin = usr.join("bin").join("mavboard");
    let out = Command::new(&bin)
        .args(["analyse", "--fen", "startpos"])
        .current_dir(&elsewhere.0)
        .env_remove("ORT_DYLIB_PATH")
        .env("RUST_LOG", "mavboard=info")
        .output()
        .expect("run the unpacked mavboard");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{} failed ({}):\n{stdout}\n{stderr}", bin.display(), out.status);

    // Its model and its ONNX Runtime are the unpacked ones, not the checkout's.
    let models = usr.join("share/mavboard/assets/models");
    let model_line = stdout.lines().find(|l| l.starts_with("model")).expect("a model line");
    assert!(model_line.contains(&models.display().to_string()), "model not from the package: {model_line}");
    let lib_dir = usr.join("lib/mavboard");
    assert!(
        stderr.contains(&format!("ONNX Runtime library loaded from {}", lib_dir.display())),
        "ONNX Runtime not from {}:\n{stderr}",
        lib_dir.display()
    );

    // Move values: all twenty first moves, each with its max and mean win probability.
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() >= 3 && w[0].len() == 4 && w[0].chars().all(|c| c.is_ascii_alphanumeric()))
        .filter(|w| w[1].parse::<f64>().is_ok() && w[2].parse::<f64>().is_ok())
        .collect();
    assert_eq!(rows.len(), 20, "expected 20 moves with values:\n{stdout}");
    assert!(rows.iter().any(|w| w[0] == "e2e4"), "{stdout}");
    for w in &rows {
        for v in &w[1..3] {
            let p: f64 = v.parse().expect("number");
            assert!((0.0..=100.0).contains(&p), "value {p} out of range in {w:?}");
        }
    }
}
