//! The games of an opened PGN file (or pasted text): each one read into a tree, or the reason it could not
//! be, so the good games open and the broken ones are listed with their error.

use crate::pgn::{GameTree, PgnReader};

/// One game of the file.
#[derive(Debug, Clone)]
pub struct GameEntry {
    /// Its number in the file, from 1.
    pub number: usize,
    /// The game, or why it could not be read (with the line in the file).
    pub game: Result<GameTree, String>,
}

impl GameEntry {
    /// A header of the game (empty when it has none, `?` values kept as written).
    pub fn header(&self, name: &str) -> &str {
        self.game.as_ref().ok().and_then(|g| g.header(name)).unwrap_or("")
    }

    /// Moves on the main line (0 for a broken game).
    pub fn plies(&self) -> usize {
        self.game.as_ref().map_or(0, |g| g.mainline().count())
    }

    /// Whether the game matches a filter: every word of `filter` appears (case-insensitively) in one of
    /// its White, Black, Event, Site, Date, Result or Opening headers, or in its error.
    pub fn matches(&self, filter: &str) -> bool {
        let hay = match &self.game {
            Ok(g) => ["White", "Black", "Event", "Site", "Date", "Result", "Opening", "ECO"]
                .iter()
                .filter_map(|h| g.header(h))
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase(),
            Err(e) => e.to_lowercase(),
        };
        filter.split_whitespace().all(|w| hay.contains(&w.to_lowercase()))
    }
}

/// All games of one source.
#[derive(Debug, Clone)]
pub struct GameList {
    /// Where the games came from (a file name, or "pasted text").
    pub source: String,
    /// The games in file order.
    pub entries: Vec<GameEntry>,
}

impl GameList {
    /// Reads every game of `text`; a broken game becomes an entry with its error and the others still read.
    pub fn read(text: &str, source: &str) -> GameList {
        let entries = PgnReader::new(text.as_bytes())
            .enumerate()
            .map(|(i, r)| GameEntry { number: i + 1, game: r.map_err(|e| e.to_string()) })
            .collect();
        GameList { source: source.to_owned(), entries }
    }

    /// Games that were read.
    pub fn good(&self) -> usize {
        self.entries.iter().filter(|e| e.game.is_ok()).count()
    }

    /// Games that could not be read.
    pub fn broken(&self) -> usize {
        self.entries.len() - self.good()
    }

    /// The first game that was read.
    pub fn first_good(&self) -> Option<&GameEntry> {
        self.entries.iter().find(|e| e.game.is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_games_are_listed_and_the_others_read() {
        let text = "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 *\n\n[White \"C\"]\n\n1. e4 e4 *\n\n[White \"D\"]\n[Event \"Club\"]\n\n1. d4 *\n";
        let list = GameList::read(text, "test.pgn");
        assert_eq!(list.entries.len(), 3);
        assert_eq!((list.good(), list.broken()), (2, 1));
        let broken = &list.entries[1];
        let err = broken.game.as_ref().expect_err("e4 e4 is illegal");
        assert!(err.contains("game 2") && err.contains("e4"), "{err}");
        assert_eq!(list.first_good().map(|e| e.header("White")), Some("A"));
        assert_eq!(list.entries[0].plies(), 2);
        assert!(list.entries[2].matches("club d"));
        assert!(!list.entries[2].matches("club x"));
        assert!(broken.matches("illegal") || broken.matches("not a legal"));
    }
}
