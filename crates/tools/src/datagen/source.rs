//! Where seed positions come from: files of FEN/EPD lines (plain or zipped), mixed in stated proportions.
//!
//! A source is anything implementing [`PositionSource`] (random access by index), so a PGN-backed source
//! can be added beside [`EpdSource`].

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

use super::DatagenError;
use super::error::EpdError;
use crate::game::chess::ChessState;

/// A finite, indexable collection of positions.
pub trait PositionSource: Send + Sync {
    /// A short name stored in every record seeded from here (e.g. `2moves_v1`).
    fn tag(&self) -> &str;
    /// Where the positions come from (a path, for the manifest).
    fn origin(&self) -> String;
    /// The number of positions.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Position `index` (0 ≤ index < len).
    fn position(&self, index: usize) -> Result<ChessState, DatagenError>;
}

/// Positions from an EPD or FEN file, one per line (`.epd` plain, or an `.zip` holding one `.epd`).
///
/// Lines are parsed when sampled; a bad line is reported with its file and line number.
pub struct EpdSource {
    tag: String,
    path: PathBuf,
    chess960: bool,
    /// (line number from 1, text) of every non-empty, non-comment line.
    lines: Vec<(usize, String)>,
}

fn read_text(path: &Path) -> Result<String, DatagenError> {
    let is_zip = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    if !is_zip {
        return std::fs::read_to_string(path).map_err(|e| DatagenError::io(path, e));
    }
    let file = std::fs::File::open(path).map_err(|e| DatagenError::io(path, e))?;
    let zip_err = |reason: String| DatagenError::Zip { path: path.to_path_buf(), reason };
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| zip_err(format!("not a readable zip archive: {e}")))?;
    let name = archive
        .file_names()
        .filter_map(Result::ok)
        .map(|n| n.into_owned())
        .filter(|n| n.to_ascii_lowercase().ends_with(".epd") || n.to_ascii_lowercase().ends_with(".fen"))
        .min()
        .ok_or_else(|| zip_err("the archive holds no .epd or .fen file".into()))?;
    let mut entry = archive.by_name(&name).map_err(|e| zip_err(format!("cannot open {name} inside: {e}")))?;
    let mut text = String::new();
    entry.read_to_string(&mut text).map_err(|e| zip_err(format!("cannot unpack {name}: {e}")))?;
    Ok(text)
}

/// The FEN part of an EPD or FEN line: board, side, castling, en passant, and the two clocks if present.
fn fen_fields(line: &str) -> String {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let mut n = fields.len().min(4);
    while n < fields.len().min(6) && fields[n].parse::<u32>().is_ok() {
        n += 1;
    }
    fields[..n].join(" ")
}

/// Parses one EPD/FEN line. With `chess960`, castling rights are read as Chess960 (X-FEN `KQkq` means the
/// outermost rooks; Shredder-FEN names files). Without it, a castling field naming files also switches
/// to Chess960, since only Chess960 positions are written that way.
pub fn parse_epd_line(line: &str, chess960: bool) -> Result<ChessState, EpdError> {
    let text = fen_fields(line);
    let fen: Fen = text.parse().map_err(|source| EpdError::InvalidFen { text: text.clone(), source })?;
    let castling = text.split_whitespace().nth(2).unwrap_or("-");
    let shredder = castling.chars().any(|c| !matches!(c, 'K' | 'Q' | 'k' | 'q' | '-'));
    let mode = if chess960 || shredder { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let pos: Chess = fen
        .into_position(mode)
        .map_err(|source| EpdError::IllegalPosition { text: text.clone(), source: Box::new(source) })?;
    Ok(ChessState::new(pos, mode))
}

impl EpdSource {
    /// Reads `path` (plain text, or a zip archive holding an `.epd`). `chess960` says how to read castling
    /// rights (see [`parse_epd_line`]). Blank lines and lines starting with `#` are skipped.
    pub fn open(path: &Path, tag: &str, chess960: bool) -> Result<Self, DatagenError> {
        let text = read_text(path)?;
        let lines: Vec<(usize, String)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|(i, l)| (i + 1, l.trim().to_owned()))
            .collect();
        if lines.is_empty() {
            return Err(DatagenError::EmptySource { path: path.to_path_buf() });
        }
        Ok(EpdSource { tag: tag.to_owned(), path: path.to_path_buf(), chess960, lines })
    }

    /// The tag for a file: its name without `.zip` and `.epd` (`UHO_4060_v2.epd.zip` → `UHO_4060_v2`).
    pub fn tag_for(path: &Path) -> String {
        let mut name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for ext in [".zip", ".epd", ".fen"] {
            if name.to_ascii_lowercase().ends_with(ext) {
                name.truncate(name.len() - ext.len());
            }
        }
        name
    }
}

impl PositionSource for EpdSource {
    fn tag(&self) -> &str {
        &self.tag
    }

    fn origin(&self) -> String {
        self.path.display().to_string()
    }

    fn len(&self) -> usize {
        self.lines.len()
    }

    fn position(&self, index: usize) -> Result<ChessState, DatagenError> {
        let Some((line_no, text)) = self.lines.get(index) else {
            return Err(DatagenError::Settings(format!(
                "position {index} asked of {} which has {}",
                self.path.display(),
                self.lines.len()
            )));
        };
        parse_epd_line(text, self.chess960).map_err(|reason| DatagenError::BadPosition {
            path: self.path.clone(),
            line: *line_no,
            reason,
        })
    }
}

/// Several sources with weights: a seed is drawn from source `i` with probability `wᵢ / Σw`, then
/// uniformly within it.
#[derive(Clone, Default)]
pub struct SourceMix {
    entries: Vec<(Arc<dyn PositionSource>, f64)>,
}

impl SourceMix {
    /// An empty mix.
    pub fn new() -> Self {
        SourceMix::default()
    }

    /// Adds a source with a weight (> 0, finite).
    pub fn add(&mut self, source: Arc<dyn PositionSource>, weight: f64) -> Result<(), DatagenError> {
        if !(weight.is_finite() && weight > 0.0) {
            return Err(DatagenError::Settings(format!(
                "the weight of source {} must be a positive number, not {weight}",
                source.tag()
            )));
        }
        if source.is_empty() {
            return Err(DatagenError::Settings(format!("source {} has no positions", source.tag())));
        }
        self.entries.push((source, weight));
        Ok(())
    }

    /// The sources and their weights, in the order added.
    pub fn entries(&self) -> &[(Arc<dyn PositionSource>, f64)] {
        &self.entries
    }

    /// Draws a seed: (the source, the position index within it).
    pub fn pick(&self, rng: &mut impl Rng) -> Result<(&dyn PositionSource, usize), DatagenError> {
        let total: f64 = self.entries.iter().map(|(_, w)| w).sum();
        if self.entries.is_empty() {
            return Err(DatagenError::Settings("no position sources were given".into()));
        }
        let mut x = rng.random::<f64>() * total;
        let mut chosen = &self.entries[self.entries.len() - 1].0;
        for (source, w) in &self.entries {
            if x < *w {
                chosen = source;
                break;
            }
            x -= w;
        }
        let index = rng.random_range(0..chosen.len());
        Ok((chosen.as_ref(), index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameKind, GameState};

    #[test]
    fn epd_lines_with_and_without_clocks() {
        let s = parse_epd_line("rn1qkbnr/ppp1pppp/8/3p1b2/2P5/1P6/P2PPPPP/RNBQKBNR w KQkq - 0 3", false)
            .expect("2moves line");
        assert_eq!(s.kind(), GameKind::Chess);
        assert_eq!(s.to_text(), "rn1qkbnr/ppp1pppp/8/3p1b2/2P5/1P6/P2PPPPP/RNBQKBNR w KQkq - 0 3");
        // UHO lines have four fields, sometimes an en-passant square, sometimes EPD operations.
        let s = parse_epd_line(
            "r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ d6 bm Nxd6; id \"x\";",
            false,
        )
        .expect("UHO line");
        // No white pawn can take en passant on d6, so the square is dropped (as Stockfish and Lichess write).
        assert_eq!(s.to_text(), "r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ - 0 1");
        let e = parse_epd_line("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1", false)
            .expect_err("bad");
        assert!(matches!(e, EpdError::InvalidFen { .. }) && e.to_string().contains("invalid FEN"), "{e}");
        let e = parse_epd_line("8/8/8/8/8/8/8/8 w - - 0 1", false).expect_err("no kings");
        assert!(
            matches!(e, EpdError::IllegalPosition { .. }) && e.to_string().contains("illegal position"),
            "{e}"
        );
    }

    #[test]
    fn chess960_castling_in_x_fen_and_shredder_fen() {
        // FRC_openings writes KQkq for the outermost rooks; after clearing f1 and g1… castle king-side.
        let s =
            parse_epd_line("bqnb1rkr/pppppppp/8/8/8/8/PPPPPPPP/BQNB1RKR w KQkq - 0 1", true).expect("960");
        assert_eq!(s.kind(), GameKind::Chess960);
        let s = parse_epd_line("bqnbr1kr/pppppppp/8/8/8/8/PPPPPPPP/BQNBR1KR w HEhe - 0 1", false)
            .expect("Shredder-FEN switches to 960");
        assert_eq!(s.kind(), GameKind::Chess960);
        let castles: Vec<String> =
            s.legal_actions().into_iter().filter(|m| m.is_castle()).map(|m| s.action_to_text(m)).collect();
        assert_eq!(castles, ["g1h1"]);
    }

    #[test]
    fn tags_and_mix_proportions() {
        assert_eq!(EpdSource::tag_for(Path::new("/x/UHO_4060_v2.epd.zip")), "UHO_4060_v2");
        assert_eq!(EpdSource::tag_for(Path::new("2moves_v1.epd")), "2moves_v1");
        struct Fixed(&'static str, usize);
        impl PositionSource for Fixed {
            fn tag(&self) -> &str {
                self.0
            }
            fn origin(&self) -> String {
                "test".into()
            }
            fn len(&self) -> usize {
                self.1
            }
            fn position(&self, _: usize) -> Result<ChessState, DatagenError> {
                Ok(ChessState::startpos())
            }
        }
        let mut mix = SourceMix::new();
        mix.add(Arc::new(Fixed("a", 10)), 3.0).expect("ok");
        mix.add(Arc::new(Fixed("b", 5)), 1.0).expect("ok");
        assert!(mix.add(Arc::new(Fixed("c", 5)), 0.0).is_err());
        assert!(mix.add(Arc::new(Fixed("d", 0)), 1.0).is_err());
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(7);
        let mut a = 0;
        for _ in 0..4000 {
            let (s, i) = mix.pick(&mut rng).expect("pick");
            assert!(i < s.len());
            if s.tag() == "a" {
                a += 1;
            }
        }
        assert!((2850..3150).contains(&a), "{a} of 4000 from the weight-3 source");
    }
}
