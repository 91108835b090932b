//! The pairing: every pair of agents plays every opening twice, once with each colour (the paper's method,
//! so that an opening's bias cancels out). Games are ordered opening by opening, so a league cut short
//! still has both colours of the openings it reached.

/// One game to play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledGame {
    /// Stable identity: `o<book index>:<white label>-<black label>` (the key of the results file).
    pub id: String,
    /// The index of the opening in the chosen list.
    pub opening: usize,
    /// The opening's index in the book.
    pub book_index: usize,
    /// The agent with White (an index into the agent list).
    pub white: usize,
    /// The agent with Black.
    pub black: usize,
}

/// The games of a round robin over `labels` from openings with these book indices.
pub fn round_robin(labels: &[String], book_indices: &[usize]) -> Vec<ScheduledGame> {
    let mut games = Vec::new();
    for (opening, &book_index) in book_indices.iter().enumerate() {
        for a in 0..labels.len() {
            for b in (a + 1)..labels.len() {
                for (white, black) in [(a, b), (b, a)] {
                    games.push(ScheduledGame {
                        id: game_id(book_index, &labels[white], &labels[black]),
                        opening,
                        book_index,
                        white,
                        black,
                    });
                }
            }
        }
    }
    games
}

/// The games of `schedule` whose ids are not in `done` (the results file's), in schedule order.
pub fn remaining<'a>(
    schedule: &'a [ScheduledGame],
    done: &std::collections::HashSet<String>,
) -> Vec<&'a ScheduledGame> {
    schedule.iter().filter(|g| !done.contains(&g.id)).collect()
}

/// The key of a game.
pub fn game_id(book_index: usize, white: &str, black: &str) -> String {
    format!("o{book_index}:{white}-{black}")
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;

    #[test]
    fn finished_games_are_not_replayed() {
        let labels: Vec<String> = ["a", "b"].iter().map(|s| (*s).to_owned()).collect();
        let games = round_robin(&labels, &[1, 2]);
        let done: HashSet<String> = [games[0].id.clone(), games[3].id.clone(), "o99:x-y".to_owned()].into();
        let left: Vec<&str> = remaining(&games, &done).iter().map(|g| g.id.as_str()).collect();
        assert_eq!(left, vec!["o1:b-a", "o2:a-b"]);
        assert!(remaining(&games, &games.iter().map(|g| g.id.clone()).collect()).is_empty());
    }

    #[test]
    fn every_pair_plays_every_opening_with_both_colours() {
        let labels: Vec<String> = ["a", "b", "c"].iter().map(|s| (*s).to_owned()).collect();
        let games = round_robin(&labels, &[7, 12]);
        // 3 pairs × 2 openings × 2 colours.
        assert_eq!(games.len(), 12);
        let ids: HashSet<&str> = games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids.len(), games.len(), "ids are unique");
        let mut per_pair: HashMap<(usize, usize, usize), usize> = HashMap::new();
        for g in &games {
            assert_ne!(g.white, g.black);
            *per_pair.entry((g.book_index, g.white, g.black)).or_default() += 1;
        }
        for g in &games {
            assert_eq!(per_pair[&(g.book_index, g.white, g.black)], 1);
            assert_eq!(per_pair[&(g.book_index, g.black, g.white)], 1, "{} has its reverse", g.id);
        }
        // Both colours of an opening are next to each other; the first opening comes first.
        assert_eq!(games[0].id, "o7:a-b");
        assert_eq!(games[1].id, "o7:b-a");
        assert!(games[..6].iter().all(|g| g.opening == 0) && games[6..].iter().all(|g| g.opening == 1));
        // Each agent plays as many Whites as Blacks.
        for i in 0..3 {
            let w = games.iter().filter(|g| g.white == i).count();
            let b = games.iter().filter(|g| g.black == i).count();
            assert_eq!((w, b), (4, 4));
        }
    }
}
