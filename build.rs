//! Build script: on Windows targets, compiles mavboard.exe's resources — its icon
//! (`packaging/windows/mavboard.ico`, rendered by `packaging/icons.sh`) and its version information — with
//! mingw-w64's `windres` and links them into the binary. Other targets get nothing from it.
//!
//! The resource compiler is `$WINDRES` if set, else `<arch>-w64-mingw32-windres` (Debian's mingw-w64),
//! else `windres` (MSYS2 on Windows). Only the GNU target (`x86_64-pc-windows-gnu`) is supported: an MSVC
//! build gets a warning and no resources.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        return;
    }
    if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() != Ok("gnu") {
        println!(
            "cargo:warning=mavboard.exe gets no icon or version resource on this target (only windows-gnu)"
        );
        return;
    }
    let manifest = PathBuf::from(env_var("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env_var("OUT_DIR"));
    let icon = manifest.join("packaging").join("windows").join("mavboard.ico");
    println!("cargo:rerun-if-changed={}", icon.display());
    println!("cargo:rerun-if-env-changed=WINDRES");
    if !icon.is_file() {
        panic!(
            "{} is missing: it is rendered from packaging/linux/mavboard.svg by `bash packaging/icons.sh` \
             (`./packaging/dev.sh windows` runs it before the build)",
            icon.display()
        );
    }
    let rc = out.join("mavboard.rc");
    std::fs::write(&rc, resource_script(&icon)).unwrap_or_else(|e| panic!("writing {}: {e}", rc.display()));
    let object = out.join("mavboard-resources.o");
    let windres = windres();
    let result = Command::new(&windres)
        .arg("--input-format=rc")
        .arg("--output-format=coff")
        .arg("--codepage=65001")
        .arg("-i")
        .arg(&rc)
        .arg("-o")
        .arg(&object)
        .output()
        .unwrap_or_else(|e| panic!("running {windres} (set WINDRES to mingw-w64's windres): {e}"));
    if !result.status.success() {
        panic!(
            "{windres} failed on {} ({}):\n{}",
            rc.display(),
            result.status,
            String::from_utf8_lossy(&result.stderr)
        );
    }
    // An object file on the link line (not a library), so the linker keeps its .rsrc section although no
    // symbol refers to it. Only the executable: the library and the tests need no icon.
    println!("cargo:rustc-link-arg-bin=mavboard={}", object.display());
}

fn env_var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo sets {name} for build scripts"))
}

/// `$WINDRES`, else the mingw-w64 cross tool for the target's architecture if it runs, else `windres`.
fn windres() -> String {
    if let Ok(tool) = std::env::var("WINDRES")
        && !tool.is_empty()
    {
        return tool;
    }
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_else(|_| "x86_64".into());
    let cross = format!("{arch}-w64-mingw32-windres");
    if Command::new(&cross).arg("--version").output().is_ok_and(|o| o.status.success()) {
        return cross;
    }
    "windres".into()
}

/// A string as a resource-script literal: `"` doubled, `\` escaped.
fn rc_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\"\""))
}

/// The resource script: icon 1 (the one Explorer and the taskbar show) and a VERSIONINFO block from
/// Cargo.toml's version and description. Numbers instead of winver.h's names, so no header is needed:
/// VOS_NT_WINDOWS32 = 0x40004, VFT_APP = 1, language 0x409 (US English) in code page 1200 (UTF-16).
fn resource_script(icon: &Path) -> String {
    let version = env_var("CARGO_PKG_VERSION");
    let part = |name: &str| env_var(name).parse::<u16>().unwrap_or(0);
    let numeric = format!(
        "{},{},{},0",
        part("CARGO_PKG_VERSION_MAJOR"),
        part("CARGO_PKG_VERSION_MINOR"),
        part("CARGO_PKG_VERSION_PATCH")
    );
    let description = std::env::var("CARGO_PKG_DESCRIPTION").unwrap_or_else(|_| "mavboard".into());
    let strings = [
        ("CompanyName", "mavboard developers".to_string()),
        ("FileDescription", description),
        ("FileVersion", version.clone()),
        ("InternalName", "mavboard".to_string()),
        ("LegalCopyright", "mavboard developers, GPL-3.0-or-later".to_string()),
        ("OriginalFilename", "mavboard.exe".to_string()),
        ("ProductName", "mavboard".to_string()),
        ("ProductVersion", version),
    ];
    let mut rc = String::new();
    rc.push_str(&format!("1 ICON {}\n\n", rc_string(&icon.display().to_string())));
    rc.push_str(&format!(
        "1 VERSIONINFO\nFILEVERSION {numeric}\nPRODUCTVERSION {numeric}\nFILEFLAGSMASK 0x3f\nFILEFLAGS 0\n\
         FILEOS 0x40004\nFILETYPE 1\nFILESUBTYPE 0\nBEGIN\n  BLOCK \"StringFileInfo\"\n  BEGIN\n    \
         BLOCK \"040904B0\"\n    BEGIN\n"
    ));
    for (key, value) in strings {
        rc.push_str(&format!("      VALUE {}, {}\n", rc_string(key), rc_string(&value)));
    }
    rc.push_str(
        "    END\n  END\n  BLOCK \"VarFileInfo\"\n  BEGIN\n    VALUE \"Translation\", 0x409, 1200\n  END\nEND\n",
    );
    rc
}
