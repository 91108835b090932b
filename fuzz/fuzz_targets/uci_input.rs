//! The UCI server's input: any lines a GUI (or anything on the other end of the pipe) sends. The server,
//! driving a real engine thread with the material evaluator, never panics or fails, answers only with
//! UCI's own words, never says `bestmove` more often than it was told `go`, and every `bestmove` is
//! followed by a move or `0000`, never by an empty word.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use mavboard::engine::EngineConfig;
use mavboard::engine::{EvaluatorBox, EvaluatorFactory};
use mavboard::inference::material::MaterialEvaluator;
use mavboard::uci_server::{BuiltModel, FactoryBuilder, serve};

fn material() -> FactoryBuilder {
    Box::new(|choice| {
        let factory: EvaluatorFactory =
            Arc::new(|w| Ok(Box::new(MaterialEvaluator::new(w as u64)) as EvaluatorBox));
        Ok(BuiltModel { factory, workers: choice.threads })
    })
}

const ANSWERS: &[&str] = &["id", "option", "uciok", "readyok", "info", "bestmove"];

fuzz_target!(|text: &str| {
    // Whatever came, the GUI then stops the search and quits, so that each run ends.
    let input = format!("{text}\nstop\nquit\n").into_bytes();
    let mut output = Vec::new();
    serve(std::io::Cursor::new(input), &mut output, material(), EngineConfig::default())
        .expect("the server ends without an error on any input");
    let output = String::from_utf8(output).expect("the server writes UTF-8");
    let gos = text.lines().filter(|l| l.split_whitespace().next() == Some("go")).count();
    let mut bestmoves = 0;
    for line in output.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        assert!(ANSWERS.contains(&first), "not a UCI answer: {line:?}");
        if first == "bestmove" {
            bestmoves += 1;
            assert!(line.split_whitespace().nth(1).is_some_and(|m| !m.is_empty()), "{line:?}");
        }
    }
    assert!(bestmoves <= gos, "{bestmoves} bestmove for {gos} go:\n{output}");
});
