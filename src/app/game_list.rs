//! The games of an opened PGN file (or pasted text): each one read into a tree, or the reason it could not
//! be, so the good games open and the broken ones are listed with their error.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::pgn::{GameTree, PgnReader};

/// Source of [`GameList::id`]s.
static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

fn next_list_id() -> u64 {
    NEXT_LIST_ID.fetch_add(1, Ordering::Relaxed)
}

/// One game of the file.
#[derive(Debug, Clone)]
pub struct GameEntry {
    /// Its number in the file, from 1.
    pub number: usize,
    /// The game, or why it could not be read (with the line in the file).
    pub game: Result<GameTree, String>,
    /// For a game that could not be read: its text as it stood in the file (up to where reading stopped),
    /// so an export copies it through instead of dropping it.
    pub raw: Option<String>,
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

/// A byte slice read through [`std::io::Read`] that counts what was taken from it.
struct Counted<'a> {
    rest: &'a [u8],
    consumed: &'a std::cell::Cell<usize>,
}

impl std::io::Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.read(buf)?;
        self.consumed.set(self.consumed.get() + n);
        Ok(n)
    }
}

/// All games of one source.
#[derive(Debug, Clone)]
pub struct GameList {
    /// Identifies this reading of the source (a new one per [`GameList::read`]), so work on its games
    /// (a file review) knows when the list was replaced.
    pub id: u64,
    /// Where the games came from (a file name, or "pasted text").
    pub source: String,
    /// The games in file order.
    pub entries: Vec<GameEntry>,
}

impl GameList {
    /// Reads every game of `text`; a broken game becomes an entry with its error and the others still read.
    pub fn read(text: &str, source: &str) -> GameList {
        let all = GameList::read_with_progress(text, source, |_, _| true);
        all.unwrap_or_else(|| GameList { id: next_list_id(), source: source.to_owned(), entries: Vec::new() })
    }

    /// Like [`GameList::read`], calling `progress(games read, bytes of `text` consumed)` after each game;
    /// it stops (returning `None`) as soon as `progress` returns false.
    pub fn read_with_progress(
        text: &str,
        source: &str,
        mut progress: impl FnMut(usize, usize) -> bool,
    ) -> Option<GameList> {
        let consumed = std::cell::Cell::new(0);
        let mut entries = Vec::new();
        let mut reader = PgnReader::new(Counted { rest: text.as_bytes(), consumed: &consumed });
        while let Some(r) = reader.next() {
            let raw = match &r {
                Err(e) if !e.is_fatal() => {
                    reader.failed_source().map(|f| String::from_utf8_lossy(&f.text).into_owned())
                }
                _ => None,
            };
            entries.push(GameEntry { number: entries.len() + 1, game: r.map_err(|e| e.to_string()), raw });
            if !progress(entries.len(), consumed.get()) {
                return None;
            }
        }
        Some(GameList { id: next_list_id(), source: source.to_owned(), entries })
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
        let raw = broken.raw.as_deref().expect("a broken game keeps its text");
        assert!(raw.starts_with("[White \"C\"]") && raw.contains("1. e4 e4"), "{raw:?}");
        assert!(list.entries[0].raw.is_none());
        assert_ne!(GameList::read(text, "test.pgn").id, list.id, "every reading is a new list");
    }

    #[test]
    fn progress_counts_games_and_bytes_and_can_stop() {
        let text = "1. e4 *\n\n1. d4 *\n\n1. c4 *\n";
        let mut seen = Vec::new();
        let list = GameList::read_with_progress(text, "t", |g, b| {
            seen.push((g, b));
            true
        })
        .expect("not stopped");
        assert_eq!(list.entries.len(), 3);
        assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1) && seen[2].1 == text.len(), "{seen:?}");
        let mut calls = 0;
        assert!(
            GameList::read_with_progress(text, "t", |_, _| {
                calls += 1;
                calls < 2
            })
            .is_none()
        );
        assert_eq!(calls, 2, "reading stops when asked");
    }
}
