//! The league table: each agent's games, wins, draws, losses, score and Elo (± the 95 % interval), and the
//! crosstable of points scored against each opponent.

use super::LeagueError;
use super::elo::{EloOptions, PairScore, Rating, fit};
use super::record::{GameRecord, GameResult};

/// One agent's line.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Standing {
    /// The agent.
    pub label: String,
    /// Games played.
    pub games: u32,
    /// Won.
    pub wins: u32,
    /// Drawn.
    pub draws: u32,
    /// Lost.
    pub losses: u32,
    /// Points (win 1, draw ½).
    pub points: f64,
    /// The rating, when it could be estimated.
    pub rating: Option<Rating>,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Table {
    /// The agents, in the order given (rows and columns of `cross`).
    pub labels: Vec<String>,
    /// One line per agent, best rating first (unrated last).
    pub standings: Vec<Standing>,
    /// `cross[i][j]`: (points of agent i against agent j, games between them).
    pub cross: Vec<Vec<(f64, u32)>>,
    /// The agent rated [`EloOptions::anchor_elo`].
    pub anchor: String,
    /// The virtual draws per pair of the rating fit.
    pub prior_draws: f64,
    /// Why there are no ratings, if there are none.
    pub elo_note: Option<String>,
}

/// Builds the table of `records` for the agents `labels` (agents found only in the records are added at
/// the end); ratings are anchored at `anchor` (a label; the first agent if `None` or unknown).
pub fn build(labels: &[String], records: &[GameRecord], anchor: Option<&str>, prior_draws: f64) -> Table {
    let mut labels = labels.to_vec();
    for r in records {
        for l in [&r.white, &r.black] {
            if !labels.contains(l) {
                labels.push(l.clone());
            }
        }
    }
    let n = labels.len();
    let index = |l: &str| labels.iter().position(|x| x == l);
    let mut cross = vec![vec![(0.0, 0u32); n]; n];
    let mut wdl = vec![(0u32, 0u32, 0u32); n];
    for r in records {
        let (Some(w), Some(b)) = (index(&r.white), index(&r.black)) else { continue };
        let pw = r.result.white_points();
        cross[w][b].0 += pw;
        cross[w][b].1 += 1;
        cross[b][w].0 += 1.0 - pw;
        cross[b][w].1 += 1;
        match r.result {
            GameResult::WhiteWins => {
                wdl[w].0 += 1;
                wdl[b].2 += 1;
            }
            GameResult::BlackWins => {
                wdl[w].2 += 1;
                wdl[b].0 += 1;
            }
            GameResult::Draw => {
                wdl[w].1 += 1;
                wdl[b].1 += 1;
            }
        }
    }
    let anchor_index = anchor.and_then(index).unwrap_or(0);
    let mut pairs = Vec::new();
    for (i, row) in cross.iter().enumerate() {
        for (j, &(points, games)) in row.iter().enumerate().skip(i + 1) {
            if games > 0 {
                pairs.push(PairScore { a: i, b: j, games: f64::from(games), points_a: points });
            }
        }
    }
    let options = EloOptions { anchor: anchor_index, prior_draws, ..EloOptions::default() };
    let (ratings, elo_note) = if n == 0 {
        (Vec::new(), Some("no agents".to_owned()))
    } else {
        match fit(n, &pairs, &options) {
            Ok(r) => (r, None),
            Err(LeagueError::Elo(why)) => (vec![None; n], Some(why)),
            Err(e) => (vec![None; n], Some(e.to_string())),
        }
    };
    let mut standings: Vec<Standing> = (0..n)
        .map(|i| Standing {
            label: labels[i].clone(),
            games: wdl[i].0 + wdl[i].1 + wdl[i].2,
            wins: wdl[i].0,
            draws: wdl[i].1,
            losses: wdl[i].2,
            points: cross[i].iter().map(|c| c.0).sum(),
            rating: ratings.get(i).copied().flatten(),
        })
        .collect();
    standings.sort_by(|a, b| {
        let key = |s: &Standing| s.rating.map_or(f64::NEG_INFINITY, |r| r.elo);
        key(b).total_cmp(&key(a)).then(b.points.total_cmp(&a.points))
    });
    Table {
        anchor: labels.get(anchor_index).cloned().unwrap_or_default(),
        labels,
        standings,
        cross,
        prior_draws,
        elo_note,
    }
}

fn points_text(p: f64) -> String {
    if p.fract() == 0.0 { format!("{p:.0}") } else { format!("{p:.1}") }
}

impl Table {
    /// The table as text: standings, then the crosstable (row agent's points / games against the column).
    pub fn render(&self) -> String {
        let w = self.labels.iter().map(String::len).max().unwrap_or(5).max(5);
        let mut s = format!(
            "{:<3} {:<w$} {:>7} {:>6} {:>6} {:>4} {:>4} {:>4} {:>7}\n",
            "#", "agent", "Elo", "±95%", "games", "W", "D", "L", "score%"
        );
        for (rank, st) in self.standings.iter().enumerate() {
            let (elo, ci) = match st.rating {
                Some(r) if st.label == self.anchor => (format!("{:.0}", r.elo), "anchor".to_owned()),
                Some(r) => (format!("{:+.0}", r.elo), format!("{:.0}", r.ci)),
                None => ("-".to_owned(), "-".to_owned()),
            };
            let pct = if st.games > 0 { 100.0 * st.points / f64::from(st.games) } else { 0.0 };
            s.push_str(&format!(
                "{:<3} {:<w$} {:>7} {:>6} {:>6} {:>4} {:>4} {:>4} {:>7.1}\n",
                rank + 1,
                st.label,
                elo,
                ci,
                st.games,
                st.wins,
                st.draws,
                st.losses,
                pct
            ));
        }
        s.push_str(&format!(
            "Elo: maximum likelihood of the logistic Elo model (draws = half a point), anchored at {} = 0, with \
             {} virtual draw(s) per pair that played; ±95%: 1.96 standard errors relative to the anchor.\n",
            self.anchor,
            points_text(self.prior_draws)
        ));
        if let Some(note) = &self.elo_note {
            s.push_str(&format!("No ratings: {note}\n"));
        }
        s.push_str("\ncrosstable (row's points / games against the column)\n");
        let cw = w.max(7);
        s.push_str(&format!("{:<w$}", ""));
        for l in &self.labels {
            s.push_str(&format!(" {l:>cw$}"));
        }
        s.push('\n');
        for (i, l) in self.labels.iter().enumerate() {
            s.push_str(&format!("{l:<w$}"));
            for (j, &(p, g)) in self.cross[i].iter().enumerate() {
                let cell = if i == j {
                    "—".to_owned()
                } else if g == 0 {
                    ".".to_owned()
                } else {
                    format!("{}/{g}", points_text(p))
                };
                s.push_str(&format!(" {cell:>cw$}"));
            }
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(white: &str, black: &str, result: GameResult) -> GameRecord {
        GameRecord {
            id: format!("{white}-{black}"),
            white: white.into(),
            black: black.into(),
            book_index: 0,
            opening_fen: String::new(),
            moves: Vec::new(),
            result,
            termination: String::new(),
            adjudicated: false,
            seconds: 0.0,
            pgn: String::new(),
        }
    }

    #[test]
    fn counts_points_and_orders_by_rating() {
        use GameResult::*;
        let labels: Vec<String> = ["a", "b", "c"].iter().map(|s| (*s).to_owned()).collect();
        let records = vec![
            game("a", "b", WhiteWins),
            game("b", "a", Draw),
            game("a", "c", BlackWins),
            game("c", "a", WhiteWins),
            game("b", "c", BlackWins),
            game("c", "b", Draw),
        ];
        let t = build(&labels, &records, Some("a"), 1.0);
        // a: 1 + 0.5 against b, 0 against c.
        assert_eq!(t.cross[0][1], (1.5, 2));
        assert_eq!(t.cross[1][0], (0.5, 2));
        assert_eq!(t.cross[0][2], (0.0, 2));
        assert_eq!(t.cross[2][1], (1.5, 2));
        let order: Vec<&str> = t.standings.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(order, vec!["c", "a", "b"]);
        let c = &t.standings[0];
        assert_eq!((c.games, c.wins, c.draws, c.losses, c.points), (4, 3, 1, 0, 3.5));
        let a = t.standings.iter().find(|s| s.label == "a").expect("a");
        assert_eq!(a.rating.expect("rated").elo, 0.0);
        let text = t.render();
        assert!(text.contains("anchor") && text.contains("1.5/2") && text.contains("crosstable"), "{text}");
        // Every game counts once for each side.
        let total: u32 = t.standings.iter().map(|s| s.games).sum();
        assert_eq!(total, 2 * records.len() as u32);
    }

    #[test]
    fn agents_only_in_the_records_are_added_and_plain_mle_failure_is_explained() {
        let labels = vec!["a".to_owned()];
        let records = vec![game("a", "z", GameResult::WhiteWins)];
        let t = build(&labels, &records, None, 0.0);
        assert_eq!(t.labels, vec!["a", "z"]);
        assert!(t.elo_note.is_some());
        assert!(t.render().contains("No ratings"));
        let t = build(&labels, &records, None, 1.0);
        assert!(t.elo_note.is_none());
    }
}
