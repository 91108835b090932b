//! `mavboard eval --move-matching GAMES.pgn`: the rated moves of a PGN file, each model's move-matching
//! accuracy by 100-point band of the mover's rating, the models side by side, and the plot.

use std::path::Path;

use anyhow::Context;
use mavboard::eval::move_matching::{BAND, MatchingReport, RatedMove, rated_moves};
use mavboard::eval::plot::{PlotText, Series, share_svg};
use mavboard::pgn::reader::read_all;

/// The rated moves of the PGN file at `path` from ply `skip_plies` of each game on (at most `limit`); says how
/// many games were read and how many did not (those are left out, the others kept).
pub fn read(path: &Path, skip_plies: usize, limit: Option<usize>) -> anyhow::Result<Vec<RatedMove>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let (mut games, mut broken, mut unrated) = (0usize, 0usize, 0usize);
    let mut first_error = None;
    let mut moves = Vec::new();
    for g in read_all(&text) {
        match g {
            Ok(tree) => {
                games += 1;
                match rated_moves(&tree, skip_plies) {
                    Ok(m) if m.is_empty() => unrated += 1,
                    Ok(m) => moves.extend(m),
                    Err(e) => {
                        broken += 1;
                        first_error.get_or_insert_with(|| e.to_string());
                    }
                }
            }
            Err(e) => {
                broken += 1;
                first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    if let Some(n) = limit {
        moves.truncate(n);
    }
    outln!(
        "move matching: {} rated moves from {games} games of {} (from ply {skip_plies}; {unrated} games without a \
         rated move)",
        moves.len(),
        path.display()
    );
    if let Some(e) = first_error {
        outln!("  {broken} game(s) left out, they do not read (the first: {e})");
    }
    anyhow::ensure!(
        !moves.is_empty(),
        "{} has no move by a rated player (a WhiteElo or BlackElo tag with a number)",
        path.display()
    );
    Ok(moves)
}

/// Prints one model's report.
pub fn print(m: &MatchingReport) {
    let how = if m.by_policy == m.total.moves {
        "its policy's top move"
    } else if m.by_policy == 0 {
        "its best-valued move"
    } else {
        "its policy's top move where it gave one, else its best-valued move"
    };
    outln!(
        "move matching ({how}): {} of {} moves, {:.1}%{}",
        m.total.matched,
        m.total.moves,
        100.0 * m.total.accuracy(),
        if m.failed > 0 { format!("; {} not evaluated", m.failed) } else { String::new() }
    );
    outln!("  {:<11} {:>7} {:>9}", "rating", "moves", "matched");
    for b in &m.bands {
        outln!(
            "  {:<11} {:>7} {:>8.1}%",
            format!("{}-{}", b.from, b.from + BAND - 1),
            b.moves,
            100.0 * b.accuracy()
        );
    }
}

/// Prints the models side by side, one row per band (the bands any model has).
pub fn print_side_by_side(runs: &[(String, &MatchingReport)]) {
    let mut bands: Vec<u32> = runs.iter().flat_map(|(_, m)| m.bands.iter().map(|b| b.from)).collect();
    bands.sort_unstable();
    bands.dedup();
    let mut head = format!("\n{:<11} {:>7}", "rating", "moves");
    for (name, _) in runs {
        head.push_str(&format!(" {name:>16}"));
    }
    outln!("{head}");
    for from in bands {
        let moves =
            runs.iter().find_map(|(_, m)| m.bands.iter().find(|b| b.from == from)).map_or(0, |b| b.moves);
        let mut line = format!("{:<11} {moves:>7}", format!("{}-{}", from, from + BAND - 1));
        for (_, m) in runs {
            match m.bands.iter().find(|b| b.from == from) {
                Some(b) => line.push_str(&format!(" {:>15.1}%", 100.0 * b.accuracy())),
                None => line.push_str(&format!(" {:>16}", "-")),
            }
        }
        outln!("{line}");
    }
    let mut all = format!("{:<11} {:>7}", "all", runs.first().map_or(0, |(_, m)| m.total.moves));
    for (_, m) in runs {
        all.push_str(&format!(" {:>15.1}%", 100.0 * m.total.accuracy()));
    }
    outln!("{all}");
}

/// The plot of the runs, one line per model: the share matched against the band's middle rating, bands of
/// at least `min_moves` moves only (a band of a handful of moves is noise).
pub fn plot_svg(runs: &[(String, &MatchingReport)], min_moves: u64) -> anyhow::Result<String> {
    let lines: Vec<Series> = runs
        .iter()
        .map(|(name, m)| Series {
            name: name.clone(),
            points: m
                .bands
                .iter()
                .filter(|b| b.moves >= min_moves)
                .map(|b| (f64::from(b.from) + f64::from(BAND) / 2.0, b.accuracy()))
                .collect(),
        })
        .collect();
    let text = PlotText {
        caption: "Move matching by the mover's rating".into(),
        x_desc: format!("mover's rating (middle of each {BAND}-point band)"),
        y_desc: "moves matched %".into(),
        band: f64::from(BAND),
    };
    share_svg(&lines, &text).context("--plot")
}
