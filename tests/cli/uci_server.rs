//! The UCI server with the mock evaluator: over in-memory pipes, and as a child process the way a
//! tournament manager (cutechess) drives it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use mavboard::engine::{EngineConfig, EvaluatorBox, EvaluatorFactory};
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;
use mavboard::game::fen::ModeChoice;
use mavboard::inference::material::MaterialEvaluator;
use mavboard::uci::info::parse_info;
use mavboard::uci::line_reader::spawn_line_reader;
use mavboard::uci_server::{BuiltModel, FactoryBuilder, serve};

const WAIT: Duration = Duration::from_secs(20);

fn mock_builder() -> FactoryBuilder {
    Box::new(|choice| {
        let factory: EvaluatorFactory =
            Arc::new(|w| Ok(Box::new(MaterialEvaluator::new(w as u64)) as EvaluatorBox));
        Ok(BuiltModel { factory, workers: choice.threads })
    })
}

/// Reads lines until one starts with `prefix`; returns every line read, that one last.
fn until(lines: &Receiver<String>, prefix: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        match lines.recv_timeout(WAIT) {
            Ok(line) => {
                let done = line.starts_with(prefix);
                seen.push(line);
                if done {
                    return seen;
                }
            }
            Err(e) => panic!("no '{prefix}' line ({e}); read so far: {seen:#?}"),
        }
    }
}

/// Checks a search's output: parseable `info` lines and a legal `bestmove` that the last PV starts with.
fn check_search(output: &[String], position: &ChessState, nodes: Option<u64>) -> String {
    let infos: Vec<_> = output
        .iter()
        .filter(|l| l.starts_with("info ") && !l.starts_with("info string"))
        .map(|l| parse_info(l).expect("a valid info line"))
        .collect();
    let last = infos.last().expect("at least one info line");
    let words: Vec<&str> =
        output.last().and_then(|l| l.strip_prefix("bestmove ")).expect("bestmove last").split(' ').collect();
    let best = words[0].to_owned();
    // `ponder` names the principal variation's second move.
    match words[1..] {
        [] => assert!(last.pv.len() < 2, "no ponder move with the pv {:?}", last.pv),
        ["ponder", reply] => assert_eq!(last.pv.get(1).map(String::as_str), Some(reply), "{:?}", last.pv),
        _ => panic!("a bestmove line with {words:?}"),
    }
    assert!(position.parse_action(&best).is_ok(), "bestmove {best} is not legal in {}", position.to_text());
    assert_eq!(last.pv.first(), Some(&best), "{last:?}");
    assert_eq!(last.depth, Some(last.pv.len() as u32));
    assert!(last.score.is_some() && last.nps.is_some() && last.time_ms.is_some());
    if let Some(n) = nodes {
        assert!(last.nodes.is_some_and(|s| s >= n && s < n + 16), "{last:?}");
    }
    best
}

struct PipeServer {
    input: std::io::PipeWriter,
    lines: Receiver<String>,
    thread: std::thread::JoinHandle<Result<(), mavboard::uci_server::UciServerError>>,
}

impl PipeServer {
    fn start() -> PipeServer {
        let (input_rx, input) = std::io::pipe().expect("a pipe");
        let (output_rx, output) = std::io::pipe().expect("a pipe");
        let thread =
            std::thread::spawn(move || serve(input_rx, output, mock_builder(), EngineConfig::default()));
        PipeServer { input, lines: spawn_line_reader("test-uci-output", output_rx), thread }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.input, "{line}").expect("the server reads");
    }
}

#[test]
fn handshake_search_options_and_errors_over_pipes() {
    let mut s = PipeServer::start();
    s.send("uci");
    let hello = until(&s.lines, "uciok");
    assert!(hello.iter().any(|l| l.starts_with("id name mavboard")));
    for name in [
        "Simulations",
        "CPuct",
        "Batch",
        "Scoring",
        "WorldModel",
        "SearchStyle",
        "Lc0CPuct",
        "TwoFoldDraws",
        "DirichletNoiseEpsilon",
        "DirichletNoiseAlpha",
        "ModelPath",
        "Device",
        "Threads",
        "Move Overhead",
    ] {
        assert!(hello.iter().any(|l| l.starts_with(&format!("option name {name} type"))), "{name}");
    }
    assert!(hello.iter().any(|l| l == "option name UCI_Chess960 type check default false"));
    s.send("isready");
    assert_eq!(until(&s.lines, "readyok"), ["readyok"]);

    s.send("ucinewgame");
    s.send("position startpos moves e2e4 e7e5");
    s.send("go nodes 200");
    let after =
        ChessState::from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").expect("FEN");
    check_search(&until(&s.lines, "bestmove"), &after, Some(200));

    // A FEN with a free queen to take, clocks instead of nodes, and settings changed.
    s.send("setoption name Scoring value max");
    s.send("setoption name CPuct value 2.5");
    s.send("setoption name Batch value 4");
    s.send("position fen 3q3k/8/8/8/8/8/6PP/3R3K w - - 0 1");
    s.send("go wtime 10000 btime 10000 winc 0 binc 0");
    let fen = ChessState::from_fen("3q3k/8/8/8/8/8/6PP/3R3K w - - 0 1").expect("FEN");
    assert_eq!(check_search(&until(&s.lines, "bestmove"), &fen, None), "d1d8");
    // Every scoring rule in its text form; a word that is none is named.
    s.send("setoption name Scoring value median");
    s.send("isready");
    let said = until(&s.lines, "readyok");
    assert!(
        said.iter().any(|l| l.starts_with("info string") && l.contains("unknown scoring 'median'")),
        "{said:?}"
    );
    s.send("setoption name Scoring value quantile:0.25");
    s.send("isready");
    let said = until(&s.lines, "readyok");
    assert!(said.iter().all(|l| !l.contains("Scoring")), "accepted: {said:?}");
    s.send("go nodes 64");
    check_search(&until(&s.lines, "bestmove"), &fen, Some(64));

    // Infinite: no bestmove before stop, then one at once.
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(400));
    let early: Vec<String> = s.lines.try_iter().collect();
    assert!(early.iter().all(|l| !l.starts_with("bestmove")), "{early:?}");
    assert!(early.iter().any(|l| l.starts_with("info depth")), "infos while searching: {early:?}");
    let asked = Instant::now();
    s.send("stop");
    let out = until(&s.lines, "bestmove");
    assert!(asked.elapsed() < Duration::from_secs(1), "stop took {:?}", asked.elapsed());
    check_search(&out, &ChessState::startpos(), None);

    // Bad input is reported and changes nothing.
    s.send("setoption name Batch value zero");
    assert!(until(&s.lines, "info string")[0].contains("Batch"));
    s.send("setoption name Move Overhead value 9999");
    assert!(until(&s.lines, "info string")[0].contains("option Move Overhead: '9999' is not a whole number"));
    s.send("setoption name Hash value 16");
    assert!(until(&s.lines, "info string")[0].contains("unknown option 'Hash'"));
    s.send("setoption name Threads value 1000");
    let said = until(&s.lines, "info string").pop().unwrap_or_default();
    assert!(said.contains("Threads") && said.contains("1 to 256"), "{said}");
    s.send("setoption name SearchStyle value alphabeta");
    assert!(until(&s.lines, "info string")[0].contains("not a search style: auto, mav or lc0"));
    s.send("position startpos moves e2e5");
    assert!(until(&s.lines, "info string")[0].contains("e2e5"));
    s.send("position fen not a fen");
    assert!(until(&s.lines, "info string")[0].contains("bad FEN"));
    s.send("go nodes 50");
    check_search(&until(&s.lines, "bestmove"), &ChessState::startpos(), Some(50));

    // Chess960: castling is written king-takes-rook.
    s.send("setoption name UCI_Chess960 value true");
    let fen960 = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
    s.send(&format!("position fen {fen960}"));
    s.send("go nodes 100");
    let pos = ChessState::from_fen_mode(fen960, ModeChoice::Chess960).expect("FEN");
    check_search(&until(&s.lines, "bestmove"), &pos, Some(100));

    s.send("quit");
    s.thread.join().expect("no panic").expect("clean exit");
}

#[test]
fn cutechess_style_session_with_the_binary() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["uci", "--mock"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("mavboard starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let lines = spawn_line_reader("test-mavboard-stdout", child.stdout.take().expect("stdout"));
    let mut send = |line: &str| writeln!(stdin, "{line}").expect("mavboard reads");
    send("uci");
    until(&lines, "uciok");
    send("setoption name Threads value 2");
    send("isready");
    until(&lines, "readyok");
    send("ucinewgame");
    send("position startpos moves e2e4 c7c5 g1f3");
    send("isready");
    until(&lines, "readyok");
    send("go nodes 200");
    let after =
        ChessState::from_fen("rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2").expect("FEN");
    check_search(&until(&lines, "bestmove"), &after, Some(200));
    send("quit");
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(Instant::now() < deadline, "mavboard did not quit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn without_a_model_flag_the_engine_plays_with_the_shipped_model() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(["uci"])
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("mavboard starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let lines = spawn_line_reader("test-mavboard-default-model", child.stdout.take().expect("stdout"));
    let mut send = |line: &str| writeln!(stdin, "{line}").expect("mavboard reads");
    send("uci");
    until(&lines, "uciok");
    send("isready");
    until(&lines, "readyok");
    send("position startpos moves e2e4");
    send("go nodes 20");
    let output = until(&lines, "bestmove");
    assert!(!output.iter().any(|l| l.contains("no model is set")), "{output:?}");
    let after =
        ChessState::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").expect("FEN");
    check_search(&output, &after, Some(20));
    send("quit");
    let deadline = Instant::now() + WAIT;
    while child.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < deadline, "mavboard did not quit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The move of the `bestmove` line that ends a search's output (without its `ponder` move).
fn best_of(output: &[String]) -> String {
    let line = output.last().and_then(|l| l.strip_prefix("bestmove ")).expect("bestmove last");
    line.split(' ').next().unwrap_or_default().to_owned()
}

/// The `info` lines of a search's output (not `info string`).
fn infos(output: &[String]) -> Vec<mavboard::uci::info::Info> {
    output
        .iter()
        .filter(|l| l.starts_with("info ") && !l.starts_with("info string"))
        .map(|l| parse_info(l).expect("a valid info line"))
        .collect()
}

#[test]
fn multipv_wdl_mate_depth_searchmoves_ponder_and_ucinewgame() {
    use mavboard::uci::info::ScoreValue;
    let mut s = PipeServer::start();
    s.send("uci");
    let hello = until(&s.lines, "uciok");
    for option in [
        "option name MultiPV type spin default 1 min 1 max 500",
        "option name UCI_ShowWDL type check default false",
        "option name Ponder type check default false",
    ] {
        assert!(hello.iter().any(|l| l == option), "{option}");
    }
    s.send("setoption name MultiPV value 3");
    s.send("setoption name UCI_ShowWDL value true");
    s.send("isready");
    until(&s.lines, "readyok");

    // Three lines per report, numbered, each with wdl; the last three are the final ones, the search's
    // choice first.
    s.send("position fen 3q3k/8/8/8/8/8/6PP/3R3K w - - 0 1");
    s.send("go nodes 300");
    let out = until(&s.lines, "bestmove");
    assert_eq!(best_of(&out), "d1d8");
    let all = infos(&out);
    let last: Vec<_> = all[all.len() - 3..].to_vec();
    assert_eq!(last.iter().map(|i| i.multipv).collect::<Vec<_>>(), [Some(1), Some(2), Some(3)]);
    assert_eq!(last[0].pv[0], "d1d8");
    for info in &last {
        let [w, d, l] = info.wdl.expect("wdl");
        assert_eq!(w + d + l, 1000);
        assert!(info.seldepth.is_some() && info.hashfull.is_some(), "{info:?}");
    }

    // A mate in one is scored as such, and `go mate 1` stops once it is found.
    s.send("setoption name MultiPV value 1");
    s.send("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1");
    s.send("go mate 1");
    let out = until(&s.lines, "bestmove");
    assert_eq!(best_of(&out), "d1d8");
    let last = infos(&out).pop().expect("an info line");
    assert_eq!(last.score.map(|s| s.value), Some(ScoreValue::Mate(1)), "{out:?}");
    assert_eq!(last.wdl, Some([1000, 0, 0]));
    assert!(last.nodes.is_some_and(|n| n < 800), "stopped at the mate, not at the default 800: {last:?}");

    // `go depth 3` ends once the principal variation is three plies long.
    s.send("position startpos");
    s.send("go depth 3");
    let last = infos(&until(&s.lines, "bestmove")).pop().expect("an info line");
    assert!(last.depth.is_some_and(|d| d >= 3), "{last:?}");
    assert!(last.nodes.is_some_and(|n| n < 800), "{last:?}");

    // searchmoves: only the moves named are searched and chosen, though taking the queen is better.
    s.send("position fen 3q3k/8/8/8/8/8/6PP/3R3K w - - 0 1");
    s.send("go nodes 200 searchmoves h2h3 g2g4");
    let out = until(&s.lines, "bestmove");
    let best = out.last().and_then(|l| l.strip_prefix("bestmove ")).expect("bestmove");
    let best = best.split(' ').next().unwrap_or_default();
    assert!(["h2h3", "g2g4"].contains(&best), "{out:?}");
    assert!(infos(&out).iter().all(|i| ["h2h3", "g2g4"].contains(&i.pv[0].as_str())), "{out:?}");
    // An illegal one is an error and the search answers with no move.
    s.send("go nodes 50 searchmoves e2e4");
    let out = until(&s.lines, "bestmove");
    assert!(out.iter().any(|l| l.starts_with("info string") && l.contains("e2e4")), "{out:?}");
    // The next go searches every move again (on the same tree: the restricted moves keep their visits).
    s.send("go nodes 800");
    assert_eq!(best_of(&until(&s.lines, "bestmove")), "d1d8");

    // Ponder: no bestmove until ponderhit, then the go's own limits apply; stop while pondering answers.
    s.send("position startpos moves e2e4 e7e5");
    s.send("go ponder nodes 100");
    std::thread::sleep(Duration::from_millis(300));
    let early: Vec<String> = s.lines.try_iter().collect();
    assert!(early.iter().all(|l| !l.starts_with("bestmove")), "{early:?}");
    s.send("ponderhit");
    let out = until(&s.lines, "bestmove");
    assert_eq!(out.iter().filter(|l| l.starts_with("bestmove")).count(), 1);
    let after =
        ChessState::from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").expect("FEN");
    check_search(&out, &after, None);
    s.send("go ponder wtime 60000 btime 60000");
    std::thread::sleep(Duration::from_millis(200));
    s.send("stop");
    check_search(&until(&s.lines, "bestmove"), &after, None);
    // Nothing else follows: no second bestmove from the ponder search.
    s.send("isready");
    assert_eq!(until(&s.lines, "readyok"), ["readyok"]);

    // ucinewgame empties the cache: a search right after reports hashfull 0 at its first line.
    s.send("go nodes 100");
    let full = infos(&until(&s.lines, "bestmove")).pop().and_then(|i| i.hashfull).expect("hashfull");
    assert!(full > 0, "the cache holds this search's answers");
    s.send("ucinewgame");
    s.send("position startpos moves e2e4 e7e5");
    s.send("go nodes 1");
    let first = infos(&until(&s.lines, "bestmove")).pop().and_then(|i| i.hashfull).expect("hashfull");
    assert!(first < full, "{first} after ucinewgame, {full} before");

    s.send("quit");
    s.thread.join().expect("no panic").expect("clean exit");
}

/// The bestmove lines among `lines`.
fn bestmoves(lines: &[String]) -> Vec<String> {
    lines.iter().filter(|l| l.starts_with("bestmove ")).cloned().collect()
}

#[test]
fn a_search_replaced_without_stop_is_not_answered_and_a_stray_ponderhit_is_named() {
    // What python-chess sends when an analysis follows a pondering `play` on a board it changed since: a
    // new `position` and `go` while the ponder search runs, and later a `ponderhit` with none running.
    let mut s = PipeServer::start();
    s.send("isready");
    until(&s.lines, "readyok");
    let e4 = ChessState::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").expect("FEN");
    let d4 = ChessState::from_fen("rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1").expect("FEN");
    for first in ["go ponder wtime 60000 btime 60000", "go infinite", "go movetime 60000"] {
        s.send("position startpos moves e2e4");
        s.send(first);
        std::thread::sleep(Duration::from_millis(250));
        s.send("position startpos moves d2d4");
        s.send("go nodes 60");
        let out = until(&s.lines, "bestmove");
        assert_eq!(bestmoves(&out).len(), 1, "{first}: {out:#?}");
        check_search(&out, &d4, Some(60));
        // Nothing more is owed: the replaced search writes no second bestmove.
        s.send("isready");
        let rest = until(&s.lines, "readyok");
        assert!(bestmoves(&rest).is_empty(), "{first}: {rest:#?}");
    }

    // A `stop` is always answered, even when the next `go` comes before the stopped search ended: two
    // answers, in order, each legal in its own position.
    s.send("position startpos moves e2e4");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(250));
    s.send("stop");
    s.send("position startpos moves d2d4");
    s.send("go nodes 60");
    let first = until(&s.lines, "bestmove");
    let second = until(&s.lines, "bestmove");
    check_search(&first, &e4, None);
    check_search(&second, &d4, Some(60));

    // A ponderhit with no ponder search running is named, and the engine still answers what comes next.
    s.send("ponderhit");
    s.send("isready");
    let out = until(&s.lines, "readyok");
    assert!(
        out.iter()
            .any(|l| l.starts_with("info string") && l.contains("ponderhit with no 'go ponder' running")),
        "{out:#?}"
    );
    assert!(bestmoves(&out).is_empty(), "{out:#?}");
    s.send("go nodes 30");
    check_search(&until(&s.lines, "bestmove"), &d4, Some(30));
    s.send("quit");
    s.thread.join().expect("no panic").expect("clean exit");
}

/// Runs `mavboard uci` with `input` on stdin, closed at its end as a pipe from `printf` closes it; returns
/// the lines it printed once it exited (it must exit by itself, successfully, within [`WAIT`]).
fn piped_session(args: &[&str], input: &str) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mavboard"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("mavboard starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("mavboard reads");
    drop(stdin);
    let lines = spawn_line_reader("test-mavboard-piped", child.stdout.take().expect("stdout"));
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "mavboard did not exit at the end of its input; printed {:#?}",
                lines.try_iter().collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    lines.iter().collect()
}

#[test]
fn end_of_input_answers_readyok_and_the_running_search_first() {
    // As `printf 'uci\nisready\nposition startpos\ngo nodes 100\n' | mavboard uci`: Stockfish prints readyok
    // and bestmove, taking the end of its input as `quit` after the running search.
    let output = piped_session(&["uci", "--mock"], "uci\nisready\nposition startpos\ngo nodes 100\n");
    assert!(output.iter().any(|l| l == "readyok"), "{output:#?}");
    let best = output.iter().position(|l| l.starts_with("bestmove ")).expect("a bestmove");
    check_search(&output[..=best], &ChessState::startpos(), Some(100));
    assert_eq!(best, output.len() - 1, "bestmove is the last line: {output:#?}");
}

#[test]
fn end_of_input_stops_an_infinite_or_ponder_search_with_a_bestmove() {
    for go in ["go infinite", "go ponder wtime 1000 btime 1000"] {
        let output =
            piped_session(&["uci", "--mock"], &format!("isready\nposition startpos moves e2e4\n{go}\n"));
        let after =
            ChessState::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").expect("FEN");
        let bests: Vec<_> = output.iter().filter(|l| l.starts_with("bestmove ")).collect();
        assert_eq!(bests.len(), 1, "{go}: {output:#?}");
        let best = bests[0].trim_start_matches("bestmove ").split_whitespace().next().expect("a move");
        assert!(after.parse_action(best).is_ok(), "{go}: bestmove {best} is not legal");
    }
}

#[test]
fn end_of_input_with_the_shipped_model_answers_too() {
    let output = piped_session(&["uci"], "uci\nisready\nposition startpos\ngo nodes 30\n");
    assert!(output.iter().any(|l| l == "readyok"), "{output:#?}");
    assert!(output.last().is_some_and(|l| l.starts_with("bestmove ")), "{output:#?}");
}
