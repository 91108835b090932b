//! The results file (one finished game per JSON line, appended and synced as each game ends, so a run
//! stopped at any point resumes where it was) and the files regenerated from it, each written atomically.

use std::fs;
use std::io::Write;
use std::path::Path;

use super::LeagueError;
use super::record::GameRecord;

/// Reads the finished games. A last line cut short (the process died while appending it) is dropped and
/// the file rewritten without it; any other unreadable line is an error. A missing file holds no games.
pub fn load(path: &Path) -> Result<Vec<GameRecord>, LeagueError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(LeagueError::io(path, &e)),
    };
    let mut records = Vec::new();
    let lines: Vec<&str> = text.split('\n').collect();
    // Without a final newline the last append did not finish: drop it if unreadable, and rewrite the file
    // so the next append starts on its own line.
    let torn = !text.is_empty() && !text.ends_with('\n');
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<GameRecord>(line) {
            Ok(r) => records.push(r),
            // The last piece has no newline after it: an append that did not finish.
            Err(_) if n + 1 == lines.len() && torn => {}
            Err(e) => {
                return Err(LeagueError::Io {
                    path: path.to_path_buf(),
                    why: format!("line {}: {e}", n + 1),
                });
            }
        }
    }
    if torn {
        let mut text = String::new();
        for r in &records {
            text.push_str(&line_of(r, path)?);
        }
        write_atomic(path, text.as_bytes())?;
    }
    Ok(records)
}

fn line_of(record: &GameRecord, path: &Path) -> Result<String, LeagueError> {
    let mut line = serde_json::to_string(record)
        .map_err(|e| LeagueError::Io { path: path.to_path_buf(), why: e.to_string() })?;
    line.push('\n');
    Ok(line)
}

/// Appends one finished game and syncs the file.
pub fn append(path: &Path, record: &GameRecord) -> Result<(), LeagueError> {
    let line = line_of(record, path)?;
    let mut f =
        fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| LeagueError::io(path, &e))?;
    f.write_all(line.as_bytes()).map_err(|e| LeagueError::io(path, &e))?;
    f.sync_all().map_err(|e| LeagueError::io(path, &e))
}

/// Writes `bytes` to a temporary file beside `path`, syncs it and renames it over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LeagueError> {
    let name = path.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| LeagueError::io(path, &e))
}

/// Every game's PGN, one after the other (separated by an empty line).
pub fn all_pgn(records: &[GameRecord]) -> String {
    let mut out = String::new();
    for r in records {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(r.pgn.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::league::record::GameResult;

    fn record(id: &str) -> GameRecord {
        GameRecord {
            id: id.into(),
            white: "a".into(),
            black: "b".into(),
            book_index: 0,
            opening_fen: "fen".into(),
            moves: vec!["e2e4".into()],
            result: GameResult::Draw,
            termination: "t".into(),
            adjudicated: false,
            seconds: 1.0,
            pgn: format!("[Event \"{id}\"]\n\n1. e4 1/2-1/2\n"),
        }
    }

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("mavboard-league-results-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn appended_games_read_back_and_a_torn_line_is_dropped() {
        let dir = temp("torn");
        let path = dir.join("results.jsonl");
        assert!(load(&path).expect("missing is empty").is_empty());
        append(&path, &record("x")).expect("appends");
        append(&path, &record("y")).expect("appends");
        // A crash in the middle of the third append.
        let mut f = fs::OpenOptions::new().append(true).open(&path).expect("opens");
        f.write_all(b"{\"id\":\"z\",\"whi").expect("writes");
        drop(f);
        let got = load(&path).expect("loads");
        assert_eq!(got.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), vec!["x", "y"]);
        // The file was repaired: the next append starts on its own line.
        append(&path, &record("z")).expect("appends");
        assert_eq!(load(&path).expect("loads").len(), 3);
        // A bad line in the middle is an error, not silently skipped.
        fs::write(&path, "garbage\n{}\n").expect("writes");
        assert!(load(&path).is_err());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn pgn_of_all_games() {
        let text = all_pgn(&[record("x"), record("y")]);
        assert_eq!(crate::pgn::reader::read_all(&text).len(), 2);
        let dir = temp("atomic");
        let p = dir.join("games.pgn");
        write_atomic(&p, text.as_bytes()).expect("writes");
        assert_eq!(fs::read_to_string(&p).expect("reads"), text);
        assert!(!dir.join(".games.pgn.tmp").exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
