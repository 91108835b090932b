//! Hugging Face equality: the exported tokenizer.json, loaded by the Python `tokenizers` library, gives
//! the Rust ids on rendered examples and traces. Runs tests/python/check_tokenizer.py with the
//! interpreter in $MAVBOARD_PYTHON (default `python3`); skips with a message when that interpreter has no
//! `tokenizers` package.

use std::process::Command;

use mavboard_core::mav::sample::{random_examples, random_traces};
use mavboard_core::mav::tokenizer::Tokenizer;

#[test]
fn python_tokenizers_gives_the_rust_ids() {
    let python = std::env::var("MAVBOARD_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let has =
        Command::new(&python).args(["-c", "import tokenizers"]).output().is_ok_and(|o| o.status.success());
    if !has {
        println!(
            "skipped: {python} cannot import `tokenizers` (pip install tokenizers, or set MAVBOARD_PYTHON)"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("mavboard-hf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let t = Tokenizer::new();
    std::fs::write(dir.join("tokenizer.json"), t.to_hf_json()).expect("write tokenizer.json");
    let mut lines = String::new();
    let texts = random_examples(150, 31)
        .iter()
        .chain(&random_traces(15, 31))
        .map(|e| e.text())
        .chain(["[%FEN 1b1b4/b2b4/8/8/8/8/8/K6k b - - 0 1]".to_owned(), "xyz e2e4 é [%state".to_owned()])
        .collect::<Vec<_>>();
    for text in &texts {
        lines.push_str(&serde_json::json!({ "text": text, "ids": t.encode(text) }).to_string());
        lines.push('\n');
    }
    std::fs::write(dir.join("examples.jsonl"), lines).expect("write examples.jsonl");
    let script = mavboard_core::checkout_dir().join("tests/python/check_tokenizer.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(dir.join("tokenizer.json"))
        .arg(dir.join("examples.jsonl"))
        .output()
        .expect("python runs");
    std::fs::remove_dir_all(&dir).ok();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("ok: {} texts", texts.len())), "{stdout}");
}
