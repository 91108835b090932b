//! A copy of a model package whose mav.json lists other games, for tests of how a package's `games` is
//! honoured (the weights and tokenizer are the original's).

use std::path::{Path, PathBuf};

/// Copies the package in `src` to a fresh temporary folder (one per process, thread and `games`) and
/// rewrites its mav.json `games` to `games`.
pub fn with_games(src: &Path, games: &[&str]) -> PathBuf {
    let name = src.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let thread =
        format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let dir = std::env::temp_dir().join(format!(
        "mavboard-{name}-{}-{}-{thread}",
        games.join("+"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for f in ["model.onnx", "tokenizer.json"] {
        std::fs::copy(src.join(f), dir.join(f)).expect("copy");
    }
    let text = std::fs::read_to_string(src.join("mav.json")).expect("mav.json");
    let mut manifest: serde_json::Value = serde_json::from_str(&text).expect("json");
    manifest["games"] = serde_json::json!(games);
    std::fs::write(dir.join("mav.json"), serde_json::to_string_pretty(&manifest).expect("json"))
        .expect("write");
    dir
}
