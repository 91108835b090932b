//! App state and glue: persisted [`settings`] apart from the runtime [`state`]; panels return
//! [`command`]s that are applied at the end of each frame (by `crate::shell`, which draws the UI over this
//! state). Nothing here imports the UI.

pub mod analysis;
pub mod board_analysis;
pub mod board_game;
pub mod board_model;
pub mod command;
pub mod compare_model;
pub mod document;
pub mod effect;
pub mod engine_link;
pub mod error;
pub mod file_dialog;
pub mod file_review;
pub mod files;
pub mod game;
pub mod game_link;
pub mod game_list;
pub mod game_review;
pub mod inside;
pub mod internal_search;
pub mod journal;
pub mod line;
pub mod messages;
pub mod model_runtime;
pub mod pgn_loader;
pub mod play;
pub mod position_evals;
pub mod pv_preview;
pub mod review_job;
pub mod server_health;
pub mod settings;
pub mod settings_file;
pub mod soak;
pub mod state;
pub mod tree_explorer;
pub mod uci_panel;
pub mod uci_review;
pub mod unsaved;
pub mod view;

use command::{DocCommand, FileCommand};

/// What the command line asked the board to open: a file (a PGN, or a FEN or EPD file, whose first
/// position is set up) and/or a FEN. A file that cannot be read is opened anyway, so the board reports it
/// the way it reports any file it cannot open.
pub fn startup_commands(file: Option<&std::path::Path>, fen: Option<&str>) -> Vec<command::Command> {
    let mut out = Vec::new();
    if let Some(path) = file {
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        let first_position = (ext == "fen" || ext == "epd")
            .then(|| std::fs::read_to_string(path).ok())
            .flatten()
            .and_then(|text| text.lines().map(str::trim).find(|l| !l.is_empty()).map(epd_to_fen));
        out.push(match first_position {
            Some(fen) => command::Command::Doc(DocCommand::LoadFen(fen)),
            None => command::Command::File(FileCommand::OpenPath(path.to_path_buf())),
        });
    }
    if let Some(fen) = fen {
        out.push(command::Command::Doc(DocCommand::LoadFen(fen.trim().to_owned())));
    }
    out
}

/// A FEN from a FEN or EPD line: an EPD's four position fields, with its operations dropped and the move
/// counters set (`0 1`); a line with all six FEN fields is kept as it is.
fn epd_to_fen(line: &str) -> String {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let counters = |f: &str| f.bytes().all(|b| b.is_ascii_digit());
    if fields.len() >= 6 && counters(fields[4]) && counters(fields[5]) {
        return fields[..6].join(" ");
    }
    match fields.get(..4) {
        Some(four) => format!("{} 0 1", four.join(" ")),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::command::{Command, DocCommand, FileCommand};
    use super::*;

    #[test]
    fn command_line_files_and_fens_become_commands() {
        let dir = std::env::temp_dir().join(format!("mavboard-startup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let epd = dir.join("suite.epd");
        std::fs::write(&epd, "\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5; id \"x\";\n")
            .expect("write");
        assert_eq!(
            startup_commands(Some(&epd), None),
            [Command::Doc(DocCommand::LoadFen(
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into()
            ))]
        );
        let fen = dir.join("pos.fen");
        std::fs::write(&fen, "8/8/8/8/8/8/8/K1k5 w - - 12 40\n").expect("write");
        assert_eq!(
            startup_commands(Some(&fen), None),
            [Command::Doc(DocCommand::LoadFen("8/8/8/8/8/8/8/K1k5 w - - 12 40".into()))]
        );
        let pgn = dir.join("games.pgn");
        assert_eq!(
            startup_commands(Some(&pgn), Some(" 8/8/8/8/8/8/8/K1k5 b - - 0 1 ")),
            [
                Command::File(FileCommand::OpenPath(pgn.clone())),
                Command::Doc(DocCommand::LoadFen("8/8/8/8/8/8/8/K1k5 b - - 0 1".into()))
            ]
        );
        assert!(startup_commands(None, None).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
