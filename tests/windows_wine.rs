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
