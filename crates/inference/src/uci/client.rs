//! A UCI engine running as a child process.
//!
//! [`UciEngine::start`] spawns the binary and does the handshake (`uci` … `uciok`, reading `id` and
//! `option` lines). Requests are written to its stdin; its stdout is read by a background line reader
//! (from [`super::line_reader`]) so that waits for `uciok` and `readyok` can time out. The process
//! is killed when the value is dropped.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::UciError;
use super::info::{Info, parse_info};
use crate::uci::line_reader::spawn_line_reader;

/// How long [`UciEngine::start`] waits for `uciok` and [`UciEngine::is_ready`] for `readyok` by default.
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// An option the engine advertised in the handshake (`option name … type … default …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOption {
    /// The option's name (may contain spaces, e.g. `Skill Level`).
    pub name: String,
    /// Its type: `check`, `spin`, `combo`, `button` or `string`.
    pub kind: String,
    /// The default value, if one was given.
    pub default: Option<String>,
    /// The minimum of a `spin` option.
    pub min: Option<i64>,
    /// The maximum of a `spin` option.
    pub max: Option<i64>,
    /// The choices of a `combo` option.
    pub vars: Vec<String>,
}

/// When a search should stop. Several limits may be combined; the engine stops at the first reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SearchLimits {
    /// Search this many plies.
    pub depth: Option<u32>,
    /// Search about this many nodes.
    pub nodes: Option<u64>,
    /// Search for this long.
    pub movetime: Option<Duration>,
    /// Search until `stop` (then use [`UciEngine::start_search`] and [`UciEngine::stop`]).
    pub infinite: bool,
}

impl SearchLimits {
    /// Search to a fixed depth.
    pub fn depth(depth: u32) -> Self {
        SearchLimits { depth: Some(depth), ..Self::default() }
    }

    /// Search a fixed number of nodes.
    pub fn nodes(nodes: u64) -> Self {
        SearchLimits { nodes: Some(nodes), ..Self::default() }
    }

    /// Search for a fixed time.
    pub fn movetime(time: Duration) -> Self {
        SearchLimits { movetime: Some(time), ..Self::default() }
    }

    /// Search until stopped.
    pub fn infinite() -> Self {
        SearchLimits { infinite: true, ..Self::default() }
    }

    /// The `go …` command for these limits.
    pub fn command(&self) -> String {
        let mut cmd = String::from("go");
        if let Some(d) = self.depth {
            cmd.push_str(&format!(" depth {d}"));
        }
        if let Some(n) = self.nodes {
            cmd.push_str(&format!(" nodes {n}"));
        }
        if let Some(t) = self.movetime {
            cmd.push_str(&format!(" movetime {}", t.as_millis().max(1)));
        }
        if self.infinite {
            cmd.push_str(" infinite");
        }
        cmd
    }
}

/// What a finished search produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchResult {
    /// The last `info` line that had a score and a PV, for each MultiPV line, best first (`lines[0]` is
    /// `multipv 1`). Lines without a `multipv` field count as `multipv 1`.
    pub lines: Vec<Info>,
    /// The move the engine chose, in UCI notation; `None` when it said `bestmove (none)` (no legal move).
    pub bestmove: Option<String>,
    /// The move it expects in reply, if it said.
    pub ponder: Option<String>,
}

/// A running UCI engine.
pub struct UciEngine {
    path: PathBuf,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    name: Option<String>,
    author: Option<String>,
    options: Vec<EngineOption>,
    reply_timeout: Duration,
    searching: bool,
}

impl std::fmt::Debug for UciEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UciEngine")
            .field("path", &self.path)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn parse_option(line: &str) -> Option<EngineOption> {
    // option name <words…> type <t> [default <words…>] [min n] [max n] [var <words…>]*
    let words: Vec<&str> = line.split_whitespace().collect();
    let keys = ["name", "type", "default", "min", "max", "var"];
    let mut fields: Vec<(&str, Vec<&str>)> = Vec::new();
    for w in words.iter().skip(1) {
        // `name` and `default` values may contain words like `type`; only the first `name` starts the
        // name, and inside it only `type` ends it.
        let in_name = matches!(fields.last(), Some(("name", _)));
        if keys.contains(w) && (!in_name || *w == "type") {
            fields.push((w, Vec::new()));
        } else if let Some((_, vals)) = fields.last_mut() {
            vals.push(w);
        }
    }
    let get = |k: &str| fields.iter().find(|(key, _)| *key == k).map(|(_, v)| v.join(" "));
    Some(EngineOption {
        name: get("name").filter(|n| !n.is_empty())?,
        kind: get("type").unwrap_or_default(),
        default: get("default"),
        min: get("min").and_then(|v| v.parse().ok()),
        max: get("max").and_then(|v| v.parse().ok()),
        vars: fields.iter().filter(|(k, _)| *k == "var").map(|(_, v)| v.join(" ")).collect(),
    })
}

fn check_one_line(what: &str, text: &str) -> Result<(), UciError> {
    if text.contains(['\n', '\r']) {
        return Err(UciError::InvalidRequest(format!("{what} must not contain a line break: {text:?}")));
    }
    Ok(())
}

impl UciEngine {
    /// Starts the engine at `path` with `args` and does the UCI handshake, waiting up to
    /// [`DEFAULT_REPLY_TIMEOUT`] for `uciok`.
    pub fn start(path: &Path, args: &[String]) -> Result<Self, UciError> {
        Self::start_with_timeout(path, args, DEFAULT_REPLY_TIMEOUT)
    }

    /// Like [`UciEngine::start`], waiting up to `reply_timeout` for `uciok` (and later for `readyok`).
    pub fn start_with_timeout(
        path: &Path,
        args: &[String],
        reply_timeout: Duration,
    ) -> Result<Self, UciError> {
        let mut child = Command::new(path)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => UciError::NotFound { tried: vec![path.to_path_buf()] },
                _ => UciError::Spawn { path: path.to_path_buf(), source },
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(UciError::Spawn {
                path: path.to_path_buf(),
                source: std::io::Error::other("the child process has no stdin/stdout pipe"),
            });
        };
        let lines = spawn_line_reader("uci-stdout", stdout);
        let mut engine = UciEngine {
            path: path.to_path_buf(),
            child,
            stdin,
            lines,
            name: None,
            author: None,
            options: Vec::new(),
            reply_timeout,
            searching: false,
        };
        engine.send("uci")?;
        let deadline = Instant::now() + reply_timeout;
        loop {
            let line = engine.read_line(Some(deadline), "uciok")?;
            let mut words = line.split_whitespace();
            match (words.next(), words.next()) {
                (Some("uciok"), _) => break,
                (Some("id"), Some("name")) => engine.name = Some(words.collect::<Vec<_>>().join(" ")),
                (Some("id"), Some("author")) => engine.author = Some(words.collect::<Vec<_>>().join(" ")),
                (Some("option"), _) => {
                    if let Some(opt) = parse_option(&line) {
                        engine.options.push(opt);
                    }
                }
                // Banners and anything else before uciok are allowed by the protocol and ignored.
                _ => {}
            }
        }
        Ok(engine)
    }

    /// The binary this engine runs.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The engine's name from `id name` (e.g. `Stockfish 15.1`), or the binary's file name if it sent none.
    pub fn name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        })
    }

    /// The engine's author from `id author`, if sent.
    pub fn author(&self) -> Option<&str> {
        self.author.as_deref()
    }

    /// The options it advertised.
    pub fn options(&self) -> &[EngineOption] {
        &self.options
    }

    /// Sets an option (`setoption name … value …`). The name must be one the engine advertised (compared
    /// case-insensitively, as UCI says); for `button` options the value is ignored.
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), UciError> {
        check_one_line("an option name", name)?;
        check_one_line("an option value", value)?;
        let Some(opt) = self.options.iter().find(|o| o.name.eq_ignore_ascii_case(name)) else {
            return Err(UciError::UnknownOption {
                name: name.to_owned(),
                offered: self.options.iter().map(|o| o.name.as_str()).collect::<Vec<_>>().join(", "),
            });
        };
        let cmd = if opt.kind == "button" {
            format!("setoption name {}", opt.name)
        } else {
            format!("setoption name {} value {value}", opt.name)
        };
        self.send(&cmd)
    }

    /// Sends `isready` and waits for `readyok` (up to the reply timeout).
    pub fn is_ready(&mut self) -> Result<(), UciError> {
        self.send("isready")?;
        let deadline = Instant::now() + self.reply_timeout;
        loop {
            if self.read_line(Some(deadline), "readyok")?.trim() == "readyok" {
                return Ok(());
            }
        }
    }

    /// Tells the engine a new game starts (`ucinewgame`, which clears its hash table) and waits until it
    /// is ready.
    pub fn new_game(&mut self) -> Result<(), UciError> {
        self.send("ucinewgame")?;
        self.is_ready()
    }

    /// Sets the position: `fen` is a FEN or `startpos`, followed by `moves` in UCI notation.
    pub fn position(&mut self, fen: &str, moves: &[&str]) -> Result<(), UciError> {
        check_one_line("a FEN", fen)?;
        let mut cmd = if fen.trim() == "startpos" {
            "position startpos".to_owned()
        } else {
            format!("position fen {fen}")
        };
        if !moves.is_empty() {
            cmd.push_str(" moves");
            for m in moves {
                check_one_line("a move", m)?;
                cmd.push(' ');
                cmd.push_str(m);
            }
        }
        self.send(&cmd)
    }

    /// Searches the current position with finite `limits` and returns the final lines and `bestmove`.
    /// Infinite searches must use [`UciEngine::start_search`] and [`UciEngine::stop`].
    pub fn go(&mut self, limits: &SearchLimits) -> Result<SearchResult, UciError> {
        self.go_with(limits, &mut |_| {})
    }

    /// Like [`UciEngine::go`], calling `on_info` with every parsed `info` line as it arrives.
    pub fn go_with(
        &mut self,
        limits: &SearchLimits,
        on_info: &mut dyn FnMut(&Info),
    ) -> Result<SearchResult, UciError> {
        if limits.infinite || *limits == SearchLimits::default() {
            return Err(UciError::InvalidRequest(
                "go needs a finite limit (depth, nodes or movetime); run infinite searches with start_search \
                 and stop"
                    .into(),
            ));
        }
        self.start_search(limits)?;
        self.collect(None, on_info)
    }

    /// Starts a search and returns at once; finish it with [`UciEngine::stop`].
    pub fn start_search(&mut self, limits: &SearchLimits) -> Result<(), UciError> {
        if self.searching {
            return Err(UciError::InvalidRequest("a search is already running; stop it first".into()));
        }
        self.send(&limits.command())?;
        self.searching = true;
        Ok(())
    }

    /// Stops the running search (`stop`) and returns its result. Waits up to the reply timeout for
    /// `bestmove`. Without a running search it returns an empty result.
    pub fn stop(&mut self) -> Result<SearchResult, UciError> {
        if !self.searching {
            return Ok(SearchResult::default());
        }
        self.send("stop")?;
        let deadline = Instant::now() + self.reply_timeout;
        self.collect(Some(deadline), &mut |_| {})
    }

    /// Whether a search started with [`UciEngine::start_search`] is still running.
    pub fn is_searching(&self) -> bool {
        self.searching
    }

    /// While a search runs: waits up to `wait` for the engine's next line and returns it when it is an
    /// `info` line. `Ok(None)` when nothing came in time or the line was something else (a line that does
    /// not parse is skipped, so one odd line does not end live analysis); a `bestmove` ends the search
    /// ([`UciEngine::is_searching`] turns false). Without a running search it returns `Ok(None)` at once.
    pub fn next_info(&mut self, wait: Duration) -> Result<Option<Info>, UciError> {
        if !self.searching {
            return Ok(None);
        }
        let line = match self.read_line(Some(Instant::now() + wait), "info") {
            Ok(line) => line,
            Err(UciError::Timeout { .. }) => return Ok(None),
            Err(e) => {
                self.searching = false;
                return Err(e);
            }
        };
        match line.split_whitespace().next() {
            Some("info") => Ok(parse_info(&line).ok()),
            Some("bestmove") => {
                self.searching = false;
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// Sends `quit` and waits briefly for the process to exit; kills it if it does not.
    pub fn quit(mut self) -> Result<(), UciError> {
        let sent = self.send("quit");
        self.shut_down();
        sent
    }

    fn shut_down(&mut self) {
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn collect(
        &mut self,
        deadline: Option<Instant>,
        on_info: &mut dyn FnMut(&Info),
    ) -> Result<SearchResult, UciError> {
        let mut result = SearchResult::default();
        let mut first_error = None;
        loop {
            let line = self.read_line(deadline, "bestmove")?;
            let mut words = line.split_whitespace();
            match words.next() {
                Some("info") => match parse_info(&line) {
                    Ok(info) => {
                        on_info(&info);
                        if info.score.is_some() && !info.pv.is_empty() {
                            let slot = info.multipv.unwrap_or(1).max(1) as usize - 1;
                            if result.lines.len() <= slot {
                                result.lines.resize(slot + 1, Info::default());
                            }
                            result.lines[slot] = info;
                        }
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                },
                Some("bestmove") => {
                    self.searching = false;
                    result.bestmove = match words.next() {
                        Some("(none)") | Some("0000") => None,
                        Some(m) => Some(m.to_owned()),
                        None => {
                            return Err(UciError::Malformed {
                                line: line.clone(),
                                reason: "`bestmove` without a move".into(),
                            });
                        }
                    };
                    if words.next() == Some("ponder") {
                        result.ponder = words.next().map(str::to_owned);
                    }
                    break;
                }
                _ => {}
            }
        }
        // Lines never filled (a MultiPV slot the engine skipped) are dropped rather than left empty.
        result.lines.retain(|l| l.score.is_some());
        match first_error {
            Some(e) => Err(e),
            None => Ok(result),
        }
    }

    fn send(&mut self, cmd: &str) -> Result<(), UciError> {
        let written = self.stdin.write_all(cmd.as_bytes()).and_then(|()| self.stdin.write_all(b"\n"));
        written
            .and_then(|()| self.stdin.flush())
            .map_err(|_| UciError::Died { path: self.path.clone(), during: format!("receiving `{cmd}`") })
    }

    fn read_line(&mut self, deadline: Option<Instant>, expected: &'static str) -> Result<String, UciError> {
        let received = match deadline {
            Some(d) => self.lines.recv_deadline(d),
            None => self.lines.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        received.map_err(|e| match e {
            RecvTimeoutError::Timeout => {
                UciError::Timeout { path: self.path.clone(), expected, waited: self.reply_timeout }
            }
            RecvTimeoutError::Disconnected => {
                UciError::Died { path: self.path.clone(), during: format!("waiting for `{expected}`") }
            }
        })
    }
}

impl Drop for UciEngine {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.send("quit");
            self.shut_down();
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration) -> Result<UciEngine, UciError> {
        UciEngine::start_with_timeout(Path::new("/bin/sh"), &["-c".to_owned(), script.to_owned()], timeout)
    }

    #[test]
    fn option_lines() {
        let o = parse_option("option name Skill Level type spin default 20 min 0 max 20").expect("option");
        assert_eq!(
            (o.name.as_str(), o.kind.as_str(), o.default.as_deref()),
            ("Skill Level", "spin", Some("20"))
        );
        assert_eq!((o.min, o.max), (Some(0), Some(20)));
        let o = parse_option("option name Style type combo default Normal var Solid var Normal var Risky")
            .expect("option");
        assert_eq!(o.vars, ["Solid", "Normal", "Risky"]);
        let o = parse_option("option name Debug Log File type string default ").expect("option");
        assert_eq!(o.default.as_deref(), Some(""));
        assert!(parse_option("option type spin").is_none());
    }

    #[test]
    fn limits_render_as_go_commands() {
        assert_eq!(SearchLimits::depth(6).command(), "go depth 6");
        assert_eq!(SearchLimits::nodes(1000).command(), "go nodes 1000");
        assert_eq!(SearchLimits::movetime(Duration::from_millis(250)).command(), "go movetime 250");
        assert_eq!(SearchLimits::infinite().command(), "go infinite");
    }

    #[test]
    fn scripted_engine_handshake_search_and_options() {
        // A tiny engine in sh: answers the handshake, readyok, and one canned MultiPV search.
        let script = r#"
            while read -r cmd rest; do
              case "$cmd" in
                uci) echo "Fake banner"; echo "id name Fake Engine 1"; echo "id author Someone";
                     echo "option name MultiPV type spin default 1 min 1 max 500"; echo uciok ;;
                isready) echo readyok ;;
                go) echo "info string starting";
                    echo "info depth 1 multipv 1 score cp 20 nodes 10 pv e2e4";
                    echo "info depth 1 multipv 2 score cp 10 nodes 10 pv d2d4";
                    echo "info depth 2 currmove e2e4 currmovenumber 1";
                    echo "info depth 2 multipv 1 score cp 25 lowerbound nodes 30 pv e2e4 e7e5";
                    echo "info depth 2 multipv 2 score mate -4 nodes 30 pv d2d4";
                    echo "bestmove e2e4 ponder e7e5" ;;
                quit) exit 0 ;;
              esac
            done"#;
        let mut e = sh(script, Duration::from_secs(5)).expect("fake engine starts");
        assert_eq!(e.name(), "Fake Engine 1");
        assert_eq!(e.author(), Some("Someone"));
        assert_eq!(e.options().len(), 1);
        e.set_option("multipv", "2").expect("known option, any case");
        let err = e.set_option("Hash", "16").expect_err("not advertised");
        assert!(err.to_string().contains("Hash") && err.to_string().contains("MultiPV"), "{err}");
        e.new_game().expect("readyok");
        e.position("startpos", &["e2e4"]).expect("sent");
        assert!(e.go(&SearchLimits::infinite()).is_err());
        let mut seen = 0;
        let r = e.go_with(&SearchLimits::depth(2), &mut |_| seen += 1).expect("search");
        assert_eq!(seen, 6);
        assert_eq!(r.bestmove.as_deref(), Some("e2e4"));
        assert_eq!(r.ponder.as_deref(), Some("e7e5"));
        assert_eq!(r.lines.len(), 2);
        assert_eq!(r.lines[0].pv, ["e2e4", "e7e5"]);
        assert_eq!(r.lines[1].score.map(|s| s.value), Some(crate::uci::ScoreValue::Mate(-4)));
        e.quit().expect("quits");
    }

    #[test]
    fn live_infos_until_bestmove() {
        let script = r#"
            while read -r cmd rest; do
              case "$cmd" in
                uci) echo uciok ;;
                isready) echo readyok ;;
                go) echo "info depth 1 multipv 1 score cp 20 pv e2e4";
                    echo "info depth nonsense";
                    echo "info depth 2 multipv 1 score cp 30 pv e2e4 e7e5" ;;
                stop) echo "bestmove e2e4" ;;
                quit) exit 0 ;;
              esac
            done"#;
        let mut e = sh(script, Duration::from_secs(5)).expect("fake engine starts");
        assert_eq!(e.next_info(Duration::from_millis(10)).expect("idle"), None);
        e.start_search(&SearchLimits::infinite()).expect("go");
        assert!(e.is_searching());
        let mut got = Vec::new();
        for _ in 0..3 {
            if let Some(info) = e.next_info(Duration::from_secs(5)).expect("alive") {
                got.push(info.depth);
            }
        }
        assert_eq!(got, [Some(1), Some(2)]);
        // Nothing more while it thinks: a timeout is not an error.
        assert_eq!(e.next_info(Duration::from_millis(50)).expect("still alive"), None);
        assert!(e.is_searching());
        e.stop().expect("bestmove");
        assert!(!e.is_searching());
        e.quit().expect("quits");
    }

    #[test]
    fn silence_times_out_and_exit_is_death() {
        // `cat >/dev/null` reads forever and never answers.
        let e = sh("cat >/dev/null", Duration::from_millis(300)).expect_err("no uciok");
        assert!(matches!(e, UciError::Timeout { expected: "uciok", .. }), "{e}");
        let e = sh("exit 0", Duration::from_secs(5)).expect_err("exits at once");
        assert!(matches!(e, UciError::Died { .. }), "{e}");
        let e = UciEngine::start(Path::new("/nonexistent/engine"), &[]).expect_err("no binary");
        assert!(e.to_string().contains("/nonexistent/engine"), "{e}");
    }
}
