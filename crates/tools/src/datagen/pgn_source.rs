//! Seed positions from real games: every main-line position of every game in PGN files that has legal
//! moves left (games that fail to parse are skipped and counted, never fatal).

use std::path::{Path, PathBuf};

use super::{DatagenError, PositionSource};
use crate::game::GameState;
use crate::game::chess::ChessState;
use crate::pgn::PgnReader;

/// All main-line positions of the games in one PGN file.
pub struct PgnSource {
    tag: String,
    path: PathBuf,
    positions: Vec<ChessState>,
    /// Games that could not be read (kept out, reported by [`PgnSource::skipped`]).
    skipped: usize,
}

impl PgnSource {
    /// Reads `path`; `tag` names the source in records (e.g. `game:twic1599`).
    pub fn open(path: &Path, tag: &str) -> Result<PgnSource, DatagenError> {
        let file = std::fs::File::open(path).map_err(|e| DatagenError::io(path, e))?;
        let mut positions = Vec::new();
        let mut skipped = 0;
        for game in PgnReader::new(std::io::BufReader::new(file)) {
            let Ok(tree) = game else {
                skipped += 1;
                continue;
            };
            match tree.mainline_positions() {
                Ok(list) => positions
                    .extend(list.into_iter().map(|(_, s)| s).filter(|s| !s.legal_actions().is_empty())),
                Err(_) => skipped += 1,
            }
        }
        if positions.is_empty() {
            return Err(DatagenError::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "no readable game positions in this PGN file",
                ),
            ));
        }
        Ok(PgnSource { tag: tag.to_owned(), path: path.to_path_buf(), positions, skipped })
    }

    /// The tag `game:<file stem>`.
    pub fn tag_for(path: &Path) -> String {
        format!("game:{}", path.file_stem().and_then(|s| s.to_str()).unwrap_or("pgn"))
    }

    /// Games that were skipped because they did not parse.
    pub fn skipped(&self) -> usize {
        self.skipped
    }
}

impl PositionSource for PgnSource {
    fn tag(&self) -> &str {
        &self.tag
    }

    fn origin(&self) -> String {
        self.path.display().to_string()
    }

    fn len(&self) -> usize {
        self.positions.len()
    }

    fn position(&self, index: usize) -> Result<ChessState, DatagenError> {
        self.positions.get(index).cloned().ok_or_else(|| {
            DatagenError::io(
                &self.path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("position {index} out of range"),
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_main_line_positions_and_skips_broken_games() {
        let path = crate::checkout_dir().join("tests/fixtures/pgn/broken-middle.pgn");
        let src = PgnSource::open(&path, "game:test").expect("fixture has good games");
        assert!(src.len() > 10);
        assert_eq!(src.skipped(), 2);
        let first = src.position(0).expect("in range");
        assert!(!first.legal_actions().is_empty());
        assert!(src.position(src.len()).is_err());
    }
}
