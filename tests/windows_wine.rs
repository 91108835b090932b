//! The Windows build, run under wine from the built artefacts and checked against this (Linux) build.
//!
//! `./packaging/dev.sh test-windows` cross-builds the folder that the zip and the installer are made of,
//! target/windows/mavboard-<version>/, and runs this file with `MAVBOARD_WINDOWS_DIR` set to it,
//! `MAVBOARD_WINDOWS_INSTALLER` to the installer and `MAVBOARD_WINE_PRNG_DLL` to the ProcessPrng stand-in
//! (packaging/windows/processprng-wine.c) that Debian's wine 8.0 needs and Windows does not. The folder is
//! copied to a path with spaces and non-ASCII letters, the stand-in put beside the exe there (never in the
//! shipped folder), and its `mavboard.exe` is run under wine: `--version`, `analyse --json` on 20 positions
//! (every number within 1e-5 of the Linux binary's), `analyse --sims 64`, `perft`, a scripted UCI exchange,
//! `pgn check` on the PGN fixtures (the same counts as Linux) and on a CRLF copy in a folder with spaces and
//! non-ASCII letters; then the installer, per user and then machine-wide (`/ALLUSERS`): a silent install,
//! the installed exe analyses, the Start-menu entry and the `.pgn` association are there, and the silent
//! uninstall removes them and every file.
//!
//! Without `MAVBOARD_WINDOWS_DIR`, wine or the stand-in, each test skips with a message, unless
//! `MAVBOARD_REQUIRE_WINDOWS=1` (set by `dev.sh test-windows`), where it fails.

mod mlserver_common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The numbers of the Windows build must equal the Linux build's within this.
const TOLERANCE: f64 = 1e-5;

/// The test copy's folder name: spaces and non-ASCII letters.
const ODD_NAME: &str = "mavboard wine tést Ünïcode ♞";

fn required() -> bool {
    std::env::var("MAVBOARD_REQUIRE_WINDOWS").is_ok_and(|v| v == "1")
}

/// What the tests run: the test copy of the folder and the wine prefix.
struct Setup {
    /// The copy of the folder, with the ProcessPrng stand-in beside the exe.
    dir: PathBuf,
    /// The installer, when one was given.
    installer: Option<PathBuf>,
    /// The stand-in DLL.
    prng_dll: PathBuf,
    /// The wine prefix (a folder of the build, kept between runs: its first start takes about 30 s).
    prefix: PathBuf,
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy's folder");
    for entry in std::fs::read_dir(from).expect("read the folder") {
        let entry = entry.expect("folder entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy a file");
        }
    }
}

/// The shared set-up, made once: `None` (after saying why) when the tests skip.
fn setup() -> Option<&'static Setup> {
    static SETUP: OnceLock<Option<Setup>> = OnceLock::new();
    SETUP.get_or_init(make_setup).as_ref()
}

fn skip(why: &str) -> Option<Setup> {
    assert!(!required(), "MAVBOARD_REQUIRE_WINDOWS=1 but {why}");
    eprintln!(
        "SKIP: {why}; run `./packaging/dev.sh test-windows` (it builds the Windows folder and installs wine)"
    );
    None
}

fn make_setup() -> Option<Setup> {
    let Some(dir) = std::env::var_os("MAVBOARD_WINDOWS_DIR").filter(|d| !d.is_empty()).map(PathBuf::from)
    else {
        return skip("MAVBOARD_WINDOWS_DIR is not set");
    };
    assert!(dir.join("mavboard.exe").is_file(), "MAVBOARD_WINDOWS_DIR={} has no mavboard.exe", dir.display());
    if Command::new("wine").arg("--version").output().is_err() {
        return skip("wine is not installed (apt-get install wine wine64)");
    }
    let Some(prng_dll) =
        std::env::var_os("MAVBOARD_WINE_PRNG_DLL").filter(|d| !d.is_empty()).map(PathBuf::from)
    else {
        return skip("MAVBOARD_WINE_PRNG_DLL (the ProcessPrng stand-in wine 8.0 needs) is not set");
    };
    assert!(prng_dll.is_file(), "MAVBOARD_WINE_PRNG_DLL={} is not a file", prng_dll.display());
    let installer =
        std::env::var_os("MAVBOARD_WINDOWS_INSTALLER").filter(|d| !d.is_empty()).map(PathBuf::from);
    let root = target_dir().join("windows").join("wine-test");
    let copy = root.join(ODD_NAME);
    if copy.exists() {
        std::fs::remove_dir_all(&copy).expect("remove the old test copy");
    }
    copy_dir(&dir, &copy);
    assert!(
        !dir.join("bcryptprimitives.dll").exists(),
        "the shipped folder must not carry the wine stand-in"
    );
    std::fs::copy(&prng_dll, copy.join("bcryptprimitives.dll"))
        .expect("the stand-in beside the test copy's exe");
    let prefix = std::env::var_os("WINEPREFIX").map(PathBuf::from).unwrap_or_else(|| root.join("prefix"));
    let setup = Setup { dir: copy, installer, prng_dll, prefix };
    // The prefix is made (or updated) once, before the tests run wine side by side.
    let started = Instant::now();
    let out = wine(&setup).arg("wineboot").arg("--init").output().expect("run wineboot");
    assert!(out.status.success(), "wineboot failed: {}", String::from_utf8_lossy(&out.stderr));
    // wineboot leaves work running (services, the prefix update); wait until the prefix is idle, so that no
    // test's first program races it.
    let waited = Command::new("wineserver").env("WINEPREFIX", &setup.prefix).arg("-w").status();
    assert!(waited.is_ok_and(|s| s.success()), "wineserver -w failed");
    eprintln!("wine prefix {} ready in {:.1} s", setup.prefix.display(), started.elapsed().as_secs_f64());
    Some(setup)
}

/// A wine command in the tests' prefix, without the desktop integration and the Mono/Gecko prompts; wine's
/// own error lines stay on (they show in a failure's message).
fn wine(setup: &Setup) -> Command {
    let mut cmd = Command::new("wine");
    cmd.env("WINEPREFIX", &setup.prefix)
        .env("WINEDLLOVERRIDES", "winemenubuilder.exe=d;mscoree=d;mshtml=d")
        .env_remove("ORT_DYLIB_PATH")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
    cmd
}

/// A Linux path as the Windows program sees it (wine maps `Z:` to `/`).
fn win_path(path: &Path) -> String {
    let abs = std::path::absolute(path).expect("absolute path");
    format!("Z:{}", abs.to_str().expect("UTF-8 path").replace('/', "\\"))
}

/// Runs `exe` under wine with `args`, from an unrelated working folder; panics with its output on failure.
fn run_windows(setup: &Setup, exe: &Path, args: &[&str]) -> Output {
    let out = wine(setup).arg(exe).args(args).current_dir(std::env::temp_dir()).output().expect("run wine");
    assert!(
        out.status.success(),
        "{} {args:?} under wine failed ({}):\n{}\n{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn run_linux(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_mavboard")).args(args).output().expect("run the Linux binary");
    assert!(out.status.success(), "Linux mavboard {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// The largest difference between two JSON documents' numbers; panics where their shape, strings or
/// booleans differ.
fn json_diff(a: &serde_json::Value, b: &serde_json::Value, at: &str) -> f64 {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().expect("number"), y.as_f64().expect("number"));
            (x - y).abs()
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: lengths differ");
            x.iter()
                .zip(y)
                .enumerate()
                .map(|(i, (x, y))| json_diff(x, y, &format!("{at}[{i}]")))
                .fold(0.0, f64::max)
        }
        (Value::Object(x), Value::Object(y)) => {
            let keys = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(x), keys(y), "{at}: fields differ");
            x.iter().map(|(k, v)| json_diff(v, &y[k], &format!("{at}.{k}"))).fold(0.0, f64::max)
        }
        _ => {
            assert_eq!(a, b, "{at} differs");
            0.0
        }
    }
}

/// 20 positions: the start, openings, middlegames with captures and checks, promotions, endgames,
/// castling rights of every kind and Chess960.
const POSITIONS: [&str; 20] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
    "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
    "8/8/8/8/8/8/6k1/4K2R w K - 0 1",
    "8/P7/8/8/8/8/7k/K7 w - - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    "rnbqkbnr/ppppp2p/5p2/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3",
    "8/8/4k3/8/2p5/8/B2P4/4K3 w - - 0 1",
    "2r3k1/1q1nbppp/r3p3/3pP3/pPpP4/P1Q2N2/2RN1PPP/2R4K b - b3 0 23",
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "3k4/3p4/8/K1P4r/8/8/8/8 b - - 0 1",
    "r1b1k2r/ppppnppp/2n2q2/2b5/3NP3/2P1B3/PP3PPP/RN1QKB1R w KQkq - 0 1",
];

#[test]
fn version_is_the_linux_builds() {
    let Some(s) = setup() else { return };
    let win = stdout(&run_windows(s, &s.dir.join("mavboard.exe"), &["--version"]));
    let linux = stdout(&run_linux(&["--version"]));
    assert_eq!(win.trim_end(), linux.trim_end());
}

#[test]
fn analyse_equals_linux_on_20_positions() {
    let Some(s) = setup() else { return };
    let exe = s.dir.join("mavboard.exe");
    let mut worst = 0.0f64;
    let mut moves = 0;
    for fen in POSITIONS {
        let win: serde_json::Value =
            serde_json::from_str(&stdout(&run_windows(s, &exe, &["analyse", "--json", "--fen", fen])))
                .expect("Windows JSON");
        let linux: serde_json::Value =
            serde_json::from_str(&stdout(&run_linux(&["analyse", "--json", "--fen", fen])))
                .expect("Linux JSON");
        let n = linux["moves"].as_array().expect("moves").len();
        assert!(n > 0, "{fen}: no moves");
        moves += n;
        let diff = json_diff(&win, &linux, fen);
        assert!(diff <= TOLERANCE, "{fen}: the Windows build differs from Linux by {diff}");
        worst = worst.max(diff);
    }
    eprintln!("analyse: {} positions, {moves} moves, worst difference from Linux {worst:e}", POSITIONS.len());
}

#[test]
fn analyse_with_64_simulations_equals_linux() {
    let Some(s) = setup() else { return };
    let exe = s.dir.join("mavboard.exe");
    let mut worst = 0.0f64;
    for fen in [POSITIONS[0], POSITIONS[4], POSITIONS[12]] {
        let args = ["analyse", "--json", "--sims", "64", "--fen", fen];
        let win: serde_json::Value =
            serde_json::from_str(&stdout(&run_windows(s, &exe, &args))).expect("Windows JSON");
        let linux: serde_json::Value = serde_json::from_str(&stdout(&run_linux(&args))).expect("Linux JSON");
        assert!(win["search"].is_object(), "{fen}: no search in {win}");
        let diff = json_diff(&win, &linux, fen);
        assert!(diff <= TOLERANCE, "{fen}: the search differs from Linux by {diff}");
        worst = worst.max(diff);
    }
    eprintln!("analyse --sims 64: 3 positions, worst difference from Linux {worst:e}");
}

#[test]
fn perft_counts() {
    let Some(s) = setup() else { return };
    let exe = s.dir.join("mavboard.exe");
    for (fen, depth, nodes) in [
        ("startpos", "4", "197281"),
        ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", "3", "97862"),
        ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", "3", "12189"),
    ] {
        let out = stdout(&run_windows(s, &exe, &["perft", "--fen", fen, "--depth", depth]));
        assert!(out.contains(&format!("depth {depth}: {nodes} nodes")), "{fen}: {out}");
    }
}

#[test]
fn uci_exchange() {
    let Some(s) = setup() else { return };
    let mut child = wine(s)
        .arg(s.dir.join("mavboard.exe"))
        .arg("uci")
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the UCI engine under wine");
    let mut stdin = child.stdin.take().expect("stdin");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line.trim_end_matches('\r').to_string()).is_err() {
                break;
            }
        }
    });
    let until = |want: &str| -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx.recv_timeout(left).unwrap_or_else(|_| panic!("no `{want}` in time; got {seen:?}"));
            let done = line.starts_with(want);
            seen.push(line);
            if done {
                return seen;
            }
        }
    };
    writeln!(stdin, "uci").expect("write");
    let hello = until("uciok");
    assert!(hello.iter().any(|l| l.starts_with("id name mavboard")), "{hello:?}");
    writeln!(stdin, "isready").expect("write");
    until("readyok");
    writeln!(stdin, "ucinewgame\nposition startpos moves e2e4 e7e5 g1f3\ngo nodes 32").expect("write");
    let search = until("bestmove");
    let best = search.last().expect("bestmove").split_whitespace().nth(1).expect("a move").to_string();
    assert!(search.iter().any(|l| l.starts_with("info ")), "no info line: {search:?}");
    // A legal move for Black after 1. e4 e5 2. Nf3.
    let fen: shakmaty::fen::Fen =
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2".parse().expect("FEN");
    let position: shakmaty::Chess = fen.into_position(shakmaty::CastlingMode::Standard).expect("position");
    let uci: shakmaty::uci::UciMove = best.parse().unwrap_or_else(|_| panic!("bestmove {best} is not UCI"));
    assert!(uci.to_move(&position).is_ok(), "bestmove {best} is not legal: {search:?}");
    eprintln!("uci under wine: bestmove {best} after {} lines", search.len());
    writeln!(stdin, "quit").expect("write");
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "uci exited with {status}");
            break;
        }
        assert!(Instant::now() < deadline, "the engine did not quit");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// "N games read, M with errors" from `pgn check`'s line for one file.
fn pgn_counts(out: &str) -> (u64, u64) {
    let line = out.lines().find(|l| l.contains("games read")).unwrap_or_else(|| panic!("no count in {out}"));
    let number_before = |word: &str| -> u64 {
        let head = &line[..line.find(word).unwrap_or_else(|| panic!("no `{word}` in {line}"))];
        head.split_whitespace().last().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{line}"))
    };
    (number_before(" games read"), number_before(" with errors"))
}

#[test]
fn pgn_check_counts_equal_linux_with_crlf_and_odd_paths() {
    let Some(s) = setup() else { return };
    let exe = s.dir.join("mavboard.exe");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn");
    for name in [
        "blank-lines.pgn",
        "broken-middle.pgn",
        "strict-errors.pgn",
        "kokopu-chess960.pgn",
        "unrecognized-tokens.pgn",
    ] {
        let file = fixtures.join(name);
        let win = pgn_counts(&stdout(&run_windows(s, &exe, &["pgn", "check", &win_path(&file)])));
        let linux = pgn_counts(&stdout(&run_linux(&["pgn", "check", file.to_str().expect("UTF-8")])));
        assert_eq!(win, linux, "{name}: Windows (games, errors) vs Linux");
    }
    // A CRLF copy of a real sample, in a folder with spaces and non-ASCII letters.
    let odd = target_dir().join("windows").join("wine-test").join("Partien mit Umlauten äöü");
    std::fs::create_dir_all(&odd).expect("folder");
    let lf = std::fs::read_to_string(fixtures.join("twic1599_sample_1MB.pgn")).expect("sample");
    let crlf_file = odd.join("games CRLF é.pgn");
    std::fs::write(&crlf_file, lf.replace("\r\n", "\n").replace('\n', "\r\n")).expect("write the CRLF copy");
    let win = pgn_counts(&stdout(&run_windows(s, &exe, &["pgn", "check", &win_path(&crlf_file)])));
    let linux = pgn_counts(&stdout(&run_linux(&[
        "pgn",
        "check",
        fixtures.join("twic1599_sample_1MB.pgn").to_str().expect("UTF-8"),
    ])));
    assert!(linux.0 > 10, "{linux:?}");
    assert_eq!(win, linux, "the CRLF copy under Windows vs the LF file under Linux");
}

/// `reg query KEY [/v VALUE]` in the prefix: the output when the key (value) exists.
fn reg_query(setup: &Setup, key: &str, value: Option<&str>) -> Option<String> {
    let mut cmd = wine(setup);
    cmd.args(["reg", "query", key]);
    if let Some(v) = value {
        cmd.args(["/v", v]);
    }
    let out = cmd.output().expect("run reg");
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path.strip_prefix(dir).expect("under").to_path_buf());
        }
    }
    out
}

#[test]
fn installer_installs_silently_and_uninstalls_what_it_installed() {
    let Some(s) = setup() else { return };
    let Some(installer) = s.installer.as_ref() else {
        assert!(!required(), "MAVBOARD_REQUIRE_WINDOWS=1 but MAVBOARD_WINDOWS_INSTALLER is not set");
        eprintln!("SKIP: MAVBOARD_WINDOWS_INSTALLER is not set");
        return;
    };
    // Per user (the default), then machine-wide (`/ALLUSERS`), one after the other in the one prefix.
    install_and_uninstall(s, installer, false);
    install_and_uninstall(s, installer, true);
}

/// A silent install, per user or machine-wide, into the default folder (NSIS takes `/D=` only unquoted, and
/// wine quotes an argument with spaces, so the odd paths are the zip copy's); its files, registry entries
/// and Start-menu entry; the installed exe analysing; the silent uninstall removing all of it.
fn install_and_uninstall(s: &Setup, installer: &Path, all_users: bool) {
    let shipped = std::env::var_os("MAVBOARD_WINDOWS_DIR").map(PathBuf::from).expect("set in setup");
    let drive_c = s.prefix.join("drive_c");
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let home = drive_c.join("users").join(&user);
    let (inst, hive, start_menu, inst_win) = if all_users {
        (
            drive_c.join("Program Files").join("mavboard"),
            "HKLM",
            drive_c.join("ProgramData/Microsoft/Windows/Start Menu/Programs"),
            "C:\\Program Files\\mavboard\\mavboard.exe",
        )
    } else {
        (
            home.join("AppData").join("Local").join("Programs").join("mavboard"),
            "HKCU",
            home.join("AppData/Roaming/Microsoft/Windows/Start Menu/Programs"),
            "AppData\\Local\\Programs\\mavboard\\mavboard.exe",
        )
    };
    let mode = if all_users { "machine-wide" } else { "per user" };
    if inst.exists() {
        std::fs::remove_dir_all(&inst).expect("remove an old install");
    }
    let started = Instant::now();
    let args: &[&str] = if all_users { &["/S", "/ALLUSERS"] } else { &["/S"] };
    run_windows(s, installer, args);
    eprintln!("silent install ({mode}): {:.1} s", started.elapsed().as_secs_f64());
    let mut want = files_under(&shipped);
    want.push(PathBuf::from("uninstall.exe"));
    want.sort();
    let mut got = files_under(&inst);
    got.sort();
    assert_eq!(got, want, "the installed files ({mode})");

    let classes = format!("{hive}\\Software\\Classes");
    let assoc = reg_query(s, &format!("{classes}\\.pgn"), None).expect("the .pgn key");
    assert!(assoc.contains("mavboard.pgn"), "{assoc}");
    let open =
        reg_query(s, &format!("{classes}\\mavboard.pgn\\shell\\open\\command"), None).expect("open command");
    assert!(open.contains(&format!("{inst_win}\" \"%1\"")), "{open}");
    let uninstall_key = format!("{hive}\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\mavboard");
    assert!(reg_query(s, &uninstall_key, Some("UninstallString")).is_some(), "no uninstall entry ({mode})");
    let shortcut = start_menu.join("mavboard.lnk");
    assert!(shortcut.is_file(), "no Start-menu entry at {}", shortcut.display());

    // The installed exe analyses (the wine stand-in beside it for this run only).
    let shim = inst.join("bcryptprimitives.dll");
    std::fs::copy(&s.prng_dll, &shim).expect("stand-in");
    let win: serde_json::Value = serde_json::from_str(&stdout(&run_windows(
        s,
        &inst.join("mavboard.exe"),
        &["analyse", "--json", "--fen", POSITIONS[4]],
    )))
    .expect("JSON");
    std::fs::remove_file(&shim).expect("remove the stand-in");
    let linux: serde_json::Value =
        serde_json::from_str(&stdout(&run_linux(&["analyse", "--json", "--fen", POSITIONS[4]])))
            .expect("JSON");
    let diff = json_diff(&win, &linux, "installed");
    assert!(diff <= TOLERANCE, "the installed exe differs from Linux by {diff}");

    // The uninstaller copies itself to the temporary folder and returns at once; wait for the folder to go.
    run_windows(s, &inst.join("uninstall.exe"), &["/S"]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while inst.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(!inst.exists(), "the uninstaller left {:?}", files_under(&inst));
    assert!(!shortcut.exists(), "the Start-menu entry is still there ({mode})");
    assert!(reg_query(s, &uninstall_key, None).is_none(), "the uninstall entry is still there ({mode})");
    assert!(
        reg_query(s, &format!("{classes}\\mavboard.pgn"), None).is_none(),
        "the PGN class is still there ({mode})"
    );
    if let Some(pgn) = reg_query(s, &format!("{classes}\\.pgn"), None) {
        assert!(!pgn.contains("mavboard.pgn"), "the .pgn association is still there: {pgn}");
    }
    eprintln!("installer ({mode}): {} files installed, all removed with the entries", got.len());
}

// ---- The exe's own resources: its icon and version information (build.rs, windres) ----

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The resources of a PE32+ image: (type, id, language) → the data, read through the resource directory of
/// the optional header (names are not used by mavboard's resources and are listed as id `u32::MAX`).
fn pe_resources(image: &[u8]) -> std::collections::BTreeMap<(u32, u32, u32), Vec<u8>> {
    assert_eq!(&image[..2], b"MZ", "not an MZ executable");
    let pe = u32_at(image, 0x3c) as usize;
    assert_eq!(&image[pe..pe + 4], b"PE\0\0", "no PE signature");
    let coff = pe + 4;
    let sections = u16_at(image, coff + 2) as usize;
    let optional = coff + 20;
    let optional_size = u16_at(image, coff + 16) as usize;
    assert_eq!(u16_at(image, optional), 0x20b, "not PE32+");
    // The data directories start 112 bytes into a PE32+ optional header; the resource table is the third.
    let (rsrc_rva, rsrc_size) = (u32_at(image, optional + 112 + 16), u32_at(image, optional + 112 + 20));
    assert!(rsrc_rva != 0 && rsrc_size != 0, "the exe has no resource table");
    let table = optional + optional_size;
    let to_offset = |rva: u32| -> usize {
        (0..sections)
            .map(|i| table + 40 * i)
            .find_map(|s| {
                let (va, vsize) = (u32_at(image, s + 12), u32_at(image, s + 8));
                let (raw, raw_size) = (u32_at(image, s + 20), u32_at(image, s + 16));
                (rva >= va && rva < va + vsize.max(raw_size)).then(|| (rva - va + raw) as usize)
            })
            .unwrap_or_else(|| panic!("RVA {rva:#x} is in no section"))
    };
    let root = to_offset(rsrc_rva);
    // One directory's entries: (id, offset of the entry's target from the resource root, is a directory).
    let entries = |dir: usize| -> Vec<(u32, usize, bool)> {
        let n = u16_at(image, dir + 12) as usize + u16_at(image, dir + 14) as usize;
        (0..n)
            .map(|i| {
                let e = dir + 16 + 8 * i;
                let (name, target) = (u32_at(image, e), u32_at(image, e + 4));
                let id = if name & 0x8000_0000 != 0 { u32::MAX } else { name };
                (id, (target & 0x7fff_ffff) as usize, target & 0x8000_0000 != 0)
            })
            .collect()
    };
    let mut out = std::collections::BTreeMap::new();
    for (kind, types, is_dir) in entries(root) {
        assert!(is_dir, "resource type {kind} is not a directory");
        for (id, names, is_dir) in entries(root + types) {
            assert!(is_dir, "resource {kind}/{id} is not a directory");
            for (lang, data, is_dir) in entries(root + names) {
                assert!(!is_dir, "resource {kind}/{id}/{lang} is not data");
                let (rva, size) = (u32_at(image, root + data), u32_at(image, root + data + 4) as usize);
                let at = to_offset(rva);
                out.insert((kind, id, lang), image[at..at + size].to_vec());
            }
        }
    }
    out
}

/// The images of an .ico file, in its order: (width, height, bits per pixel, the image's bytes).
fn ico_images(ico: &[u8]) -> Vec<(u8, u8, u16, Vec<u8>)> {
    assert_eq!((u16_at(ico, 0), u16_at(ico, 2)), (0, 1), "not an icon file");
    (0..u16_at(ico, 4) as usize)
        .map(|i| {
            let e = 6 + 16 * i;
            let (size, at) = (u32_at(ico, e + 8) as usize, u32_at(ico, e + 12) as usize);
            (ico[e], ico[e + 1], u16_at(ico, e + 6), ico[at..at + size].to_vec())
        })
        .collect()
}

fn utf16(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// The shipped (stripped) mavboard.exe holds the icon build.rs compiled from packaging/windows/mavboard.ico —
/// an icon group whose every image is byte for byte the .ico's, in its order — and a version resource with
/// Cargo.toml's version, both as numbers and as strings. Needs no wine.
#[test]
fn exe_carries_the_icon_and_version_information() {
    let Some(dir) = std::env::var_os("MAVBOARD_WINDOWS_DIR").filter(|d| !d.is_empty()).map(PathBuf::from)
    else {
        assert!(!required(), "MAVBOARD_REQUIRE_WINDOWS=1 but MAVBOARD_WINDOWS_DIR is not set");
        eprintln!("SKIP: MAVBOARD_WINDOWS_DIR is not set; run `./packaging/dev.sh test-windows`");
        return;
    };
    let image = std::fs::read(dir.join("mavboard.exe")).expect("read mavboard.exe");
    let resources = pe_resources(&image);
    const RT_ICON: u32 = 3;
    const RT_GROUP_ICON: u32 = 14;
    const RT_VERSION: u32 = 16;
    let groups: Vec<_> = resources.iter().filter(|((kind, _, _), _)| *kind == RT_GROUP_ICON).collect();
    assert_eq!(groups.len(), 1, "one icon group: {:?}", resources.keys().collect::<Vec<_>>());
    let (&(_, group_id, _), group) = groups[0];
    assert_eq!(group_id, 1, "the icon group is resource 1, the one Explorer shows");
    let ico = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/windows/mavboard.ico"))
        .expect("packaging/windows/mavboard.ico (packaging/icons.sh renders it)");
    let images = ico_images(&ico);
    assert_eq!(u16_at(group, 4) as usize, images.len(), "the group lists every image of the .ico");
    for (i, (width, height, bits, bytes)) in images.iter().enumerate() {
        let e = 6 + 14 * i;
        assert_eq!((group[e], group[e + 1], u16_at(group, e + 6)), (*width, *height, *bits), "image {i}");
        let id = u32::from(u16_at(group, e + 12));
        let icon = resources
            .iter()
            .find(|((kind, rid, _), _)| *kind == RT_ICON && *rid == id)
            .unwrap_or_else(|| panic!("the group's image {i} (icon {id}) is missing"))
            .1;
        assert!(icon == bytes, "icon {id} differs from the .ico's image {i} ({width}×{height})");
    }
    let version = resources
        .iter()
        .find(|((kind, id, _), _)| *kind == RT_VERSION && *id == 1)
        .expect("a version resource")
        .1;
    let fixed =
        version.windows(4).position(|w| w == 0xfeef_04bd_u32.to_le_bytes()).expect("VS_FIXEDFILEINFO");
    let (major, minor, patch) = (
        env!("CARGO_PKG_VERSION_MAJOR").parse::<u32>().expect("major"),
        env!("CARGO_PKG_VERSION_MINOR").parse::<u32>().expect("minor"),
        env!("CARGO_PKG_VERSION_PATCH").parse::<u32>().expect("patch"),
    );
    assert_eq!(
        (u32_at(version, fixed + 8), u32_at(version, fixed + 12)),
        ((major << 16) | minor, patch << 16),
        "FILEVERSION"
    );
    for text in ["ProductVersion", env!("CARGO_PKG_VERSION"), "mavboard.exe", "GPL-3.0-or-later"] {
        let needle = utf16(text);
        assert!(version.windows(needle.len()).any(|w| w == needle), "the version resource lacks {text:?}");
    }
    eprintln!(
        "resources: icon group 1 with {} images ({}), version {}",
        images.len(),
        images.iter().map(|(w, h, _, b)| format!("{w}×{h} {} B", b.len())).collect::<Vec<_>>().join(", "),
        env!("CARGO_PKG_VERSION")
    );
}

// ---- Importing lc0 networks, and a remote package, under wine ----

/// Positions for the imported and remote packages: the start, Kiwipete, a promotion, a middlegame.
const FEW: [usize; 4] = [0, 4, 7, 13];

/// The largest difference between the Windows and the Linux `analyse --json` of `FEW`, with each side's own
/// `--model` folder.
fn analyse_diff(s: &Setup, win_model: &Path, linux_model: &Path, what: &str) -> f64 {
    let exe = s.dir.join("mavboard.exe");
    let mut worst = 0.0f64;
    for fen in FEW.map(|i| POSITIONS[i]) {
        let win_args = ["analyse", "--json", "--model", &win_path(win_model), "--fen", fen];
        let win: serde_json::Value =
            serde_json::from_str(&stdout(&run_windows(s, &exe, &win_args))).expect("Windows JSON");
        let linux_args =
            ["analyse", "--json", "--model", linux_model.to_str().expect("UTF-8 path"), "--fen", fen];
        let linux: serde_json::Value =
            serde_json::from_str(&stdout(&run_linux(&linux_args))).expect("Linux JSON");
        assert!(linux["moves"].as_array().is_some_and(|m| !m.is_empty()), "{what} {fen}: no moves: {linux}");
        let diff = json_diff(&win, &linux, &format!("{what} {fen}"));
        assert!(diff <= TOLERANCE, "{what} {fen}: the Windows build differs from Linux by {diff}");
        worst = worst.max(diff);
    }
    worst
}

/// `mavboard.exe import lc0` writes the same package as the Linux build (every file byte for byte), and
/// the Windows exe's analysis of its package equals the Linux build's of its own within 1e-5: residual
/// networks with classical input (random weights and Maia 1900), an attention body, and an ONNX export
/// (leela2onnx) with its input format given, each into a folder with spaces and non-ASCII letters.
#[test]
fn lc0_import_equals_linux() {
    let Some(s) = setup() else { return };
    let exe = s.dir.join("mavboard.exe");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lc0");
    let root = target_dir().join("windows").join("wine-test").join("lc0 Netze ü");
    if root.exists() {
        std::fs::remove_dir_all(&root).expect("remove the old imports");
    }
    std::fs::create_dir_all(&root).expect("folder");
    // leela2onnx's export is kept gzipped in the fixtures; the importer reads plain ONNX.
    let onnx = root.join("leela2onnx random castling.onnx");
    let gz = std::fs::File::open(fixtures.join("leela2onnx-random-res-castling.onnx.gz")).expect("fixture");
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut plain).expect("gunzip");
    std::fs::write(&onnx, plain).expect("write the ONNX export");
    let nets: [(PathBuf, &[&str]); 4] = [
        (fixtures.join("random-res-classical.pb.gz"), &[]),
        (fixtures.join("maia-1900.pb.gz"), &[]),
        (fixtures.join("random-attention-body.pb.gz"), &[]),
        (onnx.clone(), &["--input-format", "castling-plane"]),
    ];
    for (net, extra) in nets {
        let name = net.file_name().and_then(|n| n.to_str()).expect("name").to_string();
        let (win_out, linux_out) = (root.join(format!("{name} Windows")), root.join(format!("{name} Linux")));
        let started = Instant::now();
        let mut args =
            vec!["import".to_string(), "lc0".into(), win_path(&net), "-o".into(), win_path(&win_out)];
        args.extend(extra.iter().map(|a| a.to_string()));
        run_windows(s, &exe, &args.iter().map(String::as_str).collect::<Vec<_>>());
        let win_secs = started.elapsed().as_secs_f64();
        let mut args =
            vec!["import", "lc0", net.to_str().expect("UTF-8"), "-o", linux_out.to_str().expect("UTF-8")];
        args.extend(extra);
        run_linux(&args);
        let (mut win_files, mut linux_files) = (files_under(&win_out), files_under(&linux_out));
        win_files.sort();
        linux_files.sort();
        assert_eq!(win_files, linux_files, "{name}: the packages' files");
        assert!(
            win_files.iter().any(|f| f == Path::new("model.onnx")),
            "{name}: no model.onnx in {win_files:?}"
        );
        for file in &win_files {
            let (w, l) = (
                std::fs::read(win_out.join(file)).expect("read"),
                std::fs::read(linux_out.join(file)).expect("read"),
            );
            assert!(w == l, "{name}: {} differs between the Windows and the Linux import", file.display());
        }
        let worst = analyse_diff(s, &win_out, &linux_out, &name);
        eprintln!(
            "import lc0 {name}: {} files equal byte for byte, import under wine {win_secs:.1} s, analyse on {} positions worst difference {worst:e}",
            win_files.len(),
            FEW.len()
        );
    }
}

/// A remote package (mav-enc-tiny's manifest with a `remote` section, no model.onnx) pointing at MLServer
/// on 127.0.0.1 (`packaging/mlserver/`, started here on Linux, as tests/ui/remote_mlserver.rs does): the
/// Windows exe analyses through it under wine — plain HTTP over wine's sockets — and its values equal the
/// Linux build's local analysis of the shipped package within 1e-5. Needs `.venv-serve/` as well
/// (`dev.sh test-windows` installs it and sets MAVBOARD_REQUIRE_SERVE=1).
#[test]
fn remote_package_under_wine_equals_local() {
    let Some(s) = setup() else { return };
    let Some(python) = mlserver_common::serve_python() else { return };
    let package = mlserver_common::asset("mav-enc-tiny");
    let server = mlserver_common::Server::start(&python, &package, "mav-enc-tiny");
    let remote = mlserver_common::remote_package(&package, "wine", &server.endpoint(), "mav-enc-tiny", 2);
    let manifest = std::fs::read_to_string(remote.join("mav.json")).expect("mav.json");
    assert!(manifest.contains("\"remote\""), "{manifest}");
    assert!(!remote.join("model.onnx").exists(), "a remote package has no model.onnx");
    let started = Instant::now();
    let worst = analyse_diff(s, &remote, &package, "remote");
    eprintln!(
        "remote under wine through MLServer at {}: {} positions, worst difference from local {worst:e} ({:.1} s)",
        server.endpoint(),
        FEW.len(),
        started.elapsed().as_secs_f64()
    );
    // The server saw the Windows exe's calls: it did the work, not a local fallback.
    let exe = s.dir.join("mavboard.exe");
    drop(server);
    let out = wine(s)
        .arg(&exe)
        .args(["analyse", "--json", "--model", &win_path(&remote), "--fen", POSITIONS[0]])
        .current_dir(std::env::temp_dir())
        .output()
        .expect("run wine");
    assert!(!out.status.success(), "analysed with the server gone: {}", String::from_utf8_lossy(&out.stdout));
    eprintln!("with the server gone: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
}

// ---- Where the Windows build keeps its files ----

/// `%APPDATA%` and `%LOCALAPPDATA%` of a wine prefix, as Linux paths (wine names the user folder after the
/// Unix user).
fn app_data(prefix: &Path) -> (PathBuf, PathBuf) {
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let home = prefix.join("drive_c").join("users").join(user);
    (home.join("AppData").join("Roaming"), home.join("AppData").join("Local"))
}

fn journals(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// The crash journal of unsaved work goes to `%LOCALAPPDATA%\mavboard\journal` (crates/app/src/app/journal): the
/// hidden `journal-drill` runs the app's real state and journal without a window; while it edits, its
/// journal is there and reads as JSON (written through a temporary file renamed over it, under wine's
/// file locks), and when it ends normally the journal is gone.
#[test]
fn crash_journal_goes_to_local_app_data() {
    let Some(s) = setup() else { return };
    let dir = app_data(&s.prefix).1.join("mavboard").join("journal");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("remove an old journal folder");
    }
    let mut child = wine(s)
        .arg(s.dir.join("mavboard.exe"))
        .args(["journal-drill", "--seed", "5", "--edits", "600", "--pause-us", "4000"])
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start journal-drill under wine");
    let out = child.stdout.take().expect("stdout");
    let mut seen = None;
    let mut lines = 0;
    for line in BufReader::new(out).lines().map_while(Result::ok) {
        lines += 1;
        if seen.is_none() && line.starts_with("written ") {
            // On disk once said; the next write replaces it by a rename, so look a few times.
            let deadline = Instant::now() + Duration::from_secs(5);
            while seen.is_none() && Instant::now() < deadline {
                if let Some(name) = journals(&dir).into_iter().next() {
                    let text = std::fs::read_to_string(dir.join(&name)).unwrap_or_default();
                    if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
                        seen = Some((name, text.len()));
                    }
                }
                if seen.is_none() {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }
    let end = child.wait_with_output().expect("wait");
    assert!(end.status.success(), "journal-drill failed: {}", String::from_utf8_lossy(&end.stderr));
    let (name, bytes) =
        seen.unwrap_or_else(|| panic!("no journal appeared in {} ({lines} lines)", dir.display()));
    assert!(journals(&dir).is_empty(), "the journal stayed after a normal end: {:?}", journals(&dir));
    eprintln!(
        "journal under wine: {} ({bytes} bytes) in {}, removed at the end; {lines} lines",
        name,
        dir.display()
    );
}

/// An X server of the test's own (Xvfb on a free display, chosen by the server), killed on drop.
struct Xvfb {
    child: std::process::Child,
    display: String,
}

impl Xvfb {
    fn start() -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb (apt-get install xvfb)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("Xvfb's display");
        let number: u32 = line.trim().parse().unwrap_or_else(|_| panic!("Xvfb said {line:?}, not a display"));
        Xvfb { child, display: format!(":{number}") }
    }

    /// A screenshot of the whole screen into `file` (ImageMagick's `import`), for a failure's message.
    fn screenshot(&self, file: &Path) -> String {
        let out =
            Command::new("import").args(["-window", "root"]).arg(file).env("DISPLAY", &self.display).output();
        match out {
            Ok(o) if o.status.success() => format!("screenshot: {}", file.display()),
            _ => "no screenshot (ImageMagick's import failed)".into(),
        }
    }

    fn xdotool(&self, args: &[&str]) -> Output {
        Command::new("xdotool").args(args).env("DISPLAY", &self.display).output().expect("run xdotool")
    }

    /// The first window whose whole name is `name`, waiting up to `secs`; with `mapped`, only a window
    /// that is shown (eframe maps its window after the first frame; wine's dialogs show through another X
    /// window than the named one, so for them any window with the name counts).
    fn window(&self, name: &str, mapped: bool, secs: u64) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let pattern = format!("^{name}$");
        loop {
            let mut args = vec!["search"];
            if mapped {
                args.push("--onlyvisible");
            }
            args.extend(["--name", &pattern]);
            let out = self.xdotool(&args);
            if let Some(id) = String::from_utf8_lossy(&out.stdout).lines().next() {
                return Some(id.to_string());
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Gives `window` the X focus (wine takes keys only in a window with the X focus, and there is no
    /// window manager to give it) and presses `keys` (xdotool's names, e.g. `alt+F4`), if any.
    fn keys(&self, window: &str, keys: &[&str]) {
        let focus = self.xdotool(&["windowfocus", "--sync", window]);
        assert!(focus.status.success(), "xdotool windowfocus: {}", String::from_utf8_lossy(&focus.stderr));
        std::thread::sleep(Duration::from_millis(500));
        if keys.is_empty() {
            return;
        }
        let mut args = vec!["key", "--delay", "100"];
        args.extend(keys);
        let out = self.xdotool(&args);
        assert!(out.status.success(), "xdotool key {keys:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// The window under wine (Xvfb, wgpu on Vulkan through wine's winevulkan and Mesa's lavapipe) keeps its
/// files where Windows programs do: its log in `%LOCALAPPDATA%\mavboard\logs\mavboard.log`, its settings
/// in `%APPDATA%\mavboard\settings.ron`. Between the two, File → Open PGN… (clicked) opens the system's
/// file dialog (rfd's IFileDialog, wine's implementation), a CRLF PGN file in a folder with spaces is
/// typed into it and opened, and Alt+F4 closes the window normally; the settings written at the close
/// name that file among the recent files, so the dialog's answer reached the app.
#[test]
fn window_keeps_settings_and_log_in_the_windows_places() {
    let Some(s) = setup() else { return };
    for tool in ["Xvfb", "xdotool"] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| !o.status.success())
        {
            assert!(!required(), "MAVBOARD_REQUIRE_WINDOWS=1 but {tool} is not installed");
            eprintln!("SKIP: {tool} is not installed (apt-get install xvfb xdotool)");
            return;
        }
    }
    // A prefix of its own: the prefix's desktop process takes the display of the first program that starts
    // it, and the other tests run wine without one (then: "Application tried to create a window, but no
    // driver could be loaded"). Made once, kept between runs like the shared one.
    let prefix = s.prefix.with_file_name("prefix-window");
    let boot =
        wine(s).env("WINEPREFIX", &prefix).args(["wineboot", "--init"]).output().expect("run wineboot");
    assert!(boot.status.success(), "wineboot failed: {}", String::from_utf8_lossy(&boot.stderr));
    let idle = Command::new("wineserver").env("WINEPREFIX", &prefix).arg("-w").status();
    assert!(idle.is_ok_and(|s| s.success()), "wineserver -w failed");
    let (roaming, local) = app_data(&prefix);
    let (settings_dir, log_dir) = (roaming.join("mavboard"), local.join("mavboard").join("logs"));
    for dir in [&settings_dir, &log_dir] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).expect("remove the old settings and logs");
        }
    }
    // The file to open: a CRLF copy of a real sample, in a folder with spaces. ASCII only: xdotool types a
    // letter that is not on the keyboard map by remapping a key for it, and under wine such letters were
    // sometimes lost ("Path does not exist"); non-ASCII paths are the command-line tests' (and a path with
    // umlauts typed into this dialog by hand opened its file).
    let odd = target_dir().join("windows").join("wine-test").join("Fenster oeffnen");
    std::fs::create_dir_all(&odd).expect("folder");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pgn");
    let lf = std::fs::read_to_string(fixtures.join("twic1599_sample_1MB.pgn")).expect("sample");
    let pgn = odd.join("Partie mit CRLF.pgn");
    std::fs::write(&pgn, lf.replace("\r\n", "\n").replace('\n', "\r\n")).expect("write the CRLF copy");

    let x = Xvfb::start();
    let started = Instant::now();
    // wine's messages go to a file: a pipe nobody reads would stop the program once full.
    let wine_log = target_dir().join("windows").join("wine-test").join("window-wine-stderr.txt");
    let mut app = wine(s)
        .arg(s.dir.join("mavboard.exe"))
        .env("WINEPREFIX", &prefix)
        .env("DISPLAY", &x.display)
        .env("WGPU_BACKEND", "vulkan")
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&wine_log).expect("create the wine log"))
        .spawn()
        .expect("start the window under wine");
    let wine_says = || std::fs::read_to_string(&wine_log).unwrap_or_default();
    let Some(window) = x.window("mavboard", true, 240) else {
        app.kill().ok();
        app.wait().ok();
        panic!("no mavboard window in 240 s: {}", wine_says());
    };
    eprintln!("window {window} on {} after {:.1} s", x.display, started.elapsed().as_secs_f64());
    let log = log_dir.join("mavboard.log");
    assert!(log.is_file(), "no log at {}", log.display());
    assert!(settings_dir.is_dir(), "the settings folder {} was not made at start", settings_dir.display());

    std::thread::sleep(Duration::from_secs(3));
    // File → Open PGN… with the mouse (window coordinates of the menu and its first item in the 1440×880
    // window). Keys sent to the main window right after it is mapped were sometimes lost under wine with
    // no window manager (Ctrl+O, checked by hand, opens the same dialog); clicks always arrived.
    let dialog = (0..3)
        .find_map(|_| {
            let file = x.xdotool(&["mousemove", "--window", &window, "18", "12", "click", "1"]);
            assert!(file.status.success(), "click File: {}", String::from_utf8_lossy(&file.stderr));
            std::thread::sleep(Duration::from_secs(2));
            let open = x.xdotool(&["mousemove", "--window", &window, "50", "38", "click", "1"]);
            assert!(open.status.success(), "click Open PGN: {}", String::from_utf8_lossy(&open.stderr));
            x.window("Open PGN", false, 30)
        })
        .unwrap_or_else(|| {
            let shot =
                x.screenshot(&target_dir().join("windows").join("wine-test").join("window-test-failed.png"));
            panic!(
                "File → Open PGN… opened no dialog titled \"Open PGN\" in three tries; {shot}: {}",
                wine_says()
            )
        });
    // The path typed into the dialog's file-name box (which has the focus), then Enter; typed again, the
    // box emptied first, if the dialog is still open after 20 s.
    let path = win_path(&pgn);
    let chars = path.chars().count();
    let closed = (0..3).any(|attempt| {
        // The dialog fills its panes after its window exists; type once it is drawn.
        std::thread::sleep(Duration::from_secs(if attempt == 0 { 5 } else { 1 }));
        if attempt > 0 {
            x.keys(&dialog, &["End"]);
            let back =
                x.xdotool(&["key", "--repeat", &(chars + 10).to_string(), "--delay", "10", "BackSpace"]);
            assert!(back.status.success(), "xdotool BackSpace");
        } else {
            x.keys(&dialog, &[]);
        }
        let typed = x.xdotool(&["type", "--delay", "40", &path]);
        assert!(typed.status.success(), "xdotool type: {}", String::from_utf8_lossy(&typed.stderr));
        x.keys(&dialog, &["Return"]);
        let deadline = Instant::now() + Duration::from_secs(20);
        while x.window("Open PGN", false, 0).is_some() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(500));
        }
        x.window("Open PGN", false, 0).is_none()
    });
    let shot = target_dir().join("windows").join("wine-test").join("window-test-failed.png");
    assert!(closed, "the dialog did not take the path in three tries; {}", x.screenshot(&shot));
    std::thread::sleep(Duration::from_secs(5));

    // Alt+F4: wine turns it into WM_CLOSE, and the app closes normally (nothing unsaved), saving settings.
    // Sent again every 20 s if the window is still open (at most 4 times): keys can be lost as above.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut pressed: Option<Instant> = None;
    let status = loop {
        if let Some(status) = app.try_wait().expect("wait") {
            break status;
        }
        if pressed.is_none_or(|t| t.elapsed() > Duration::from_secs(20)) {
            x.keys(&window, &["alt+F4"]);
            pressed = Some(Instant::now());
        }
        if Instant::now() > deadline {
            app.kill().ok();
            app.wait().ok();
            panic!("the window did not close on Alt+F4: {}", wine_says());
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(status.success(), "the window ended with {status}: {}", wine_says());

    let settings = std::fs::read_to_string(settings_dir.join("settings.ron"))
        .unwrap_or_else(|e| panic!("no settings at {}: {e}", settings_dir.join("settings.ron").display()));
    assert!(settings.contains("mavboard.settings"), "not the app's settings: {settings}");
    // The recent file as RON writes it inside the settings string: each `\` of the path doubled twice.
    let recent = win_path(&pgn).replace('\\', "\\\\\\\\");
    assert!(settings.contains(&recent), "the opened file {recent} is not among the recent files: {settings}");
    let log_text = std::fs::read_to_string(&log).expect("read the log");
    // wgpu names its backend in the log only when it warns (a software rasteriser, as lavapipe here).
    if log_text.contains("backend: ") {
        assert!(log_text.contains("backend: Vulkan"), "WGPU_BACKEND=vulkan, but the log says: {log_text}");
    }
    eprintln!(
        "window under wine: settings {} ({} bytes), log {} ({} bytes), the dialog opened {}; {:.1} s in all",
        settings_dir.join("settings.ron").display(),
        settings.len(),
        log.display(),
        log_text.len(),
        pgn.display(),
        started.elapsed().as_secs_f64()
    );
}
