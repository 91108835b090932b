//! The games of an opened PGN file (or pasted text), as an index: where each game lies in its source, its
//! headers, and whether it reads (its moves counted) or why not. The trees themselves are not kept: a
//! game is read again from its source when it is opened ([`GameList::game`]), so a file of any size costs
//! only its index in memory. Good games open and broken ones are listed with their error.
//!
//! A file's list fills while the file is read in the background (see [`super::pgn_loader`]); entries
//! arrive in file order through [`GameList::extend`].

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::error::AppError;
use crate::pgn::index::{IndexedGame, index_games, parse_game, read_game};
use crate::pgn::{GameError, GameTree, ReadOptions};

/// Source of [`GameList::id`]s.
static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

fn next_list_id() -> u64 {
    NEXT_LIST_ID.fetch_add(1, Ordering::Relaxed)
}

/// What reading a game found, without its tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GameFacts {
    /// Moves (plies) on its main line; `None` when the game was indexed but not checked (a big file's
    /// games are checked when they are opened). 32 bits: a list of a million games keeps one per game.
    pub plies: Option<u32>,
}

/// One game of the file.
#[derive(Debug, Clone)]
pub struct GameEntry {
    /// Where it lies in the source (its number in the file too: [`GameEntry::number`]), and its tags.
    pub index: IndexedGame,
    /// Whether it reads (and what it holds), or why it could not be read (with the line in the file).
    /// The tree is read again from the source when the game is opened ([`GameList::game`]); the error
    /// keeps no prefix of the game (the list holds only its index). Boxed: most games read, and a list of
    /// a million games then holds a pointer each rather than an error's room (about 100 bytes).
    pub game: Result<GameFacts, Box<GameError>>,
}

impl GameEntry {
    /// Checks a game: parses `bytes` (its text) and keeps only what the list shows.
    pub fn check(index: IndexedGame, bytes: &[u8]) -> GameEntry {
        let game = parse_game(bytes, &index, ReadOptions { keep_source: false })
            .map(|tree| GameFacts { plies: Some(u32::try_from(tree.mainline().count()).unwrap_or(u32::MAX)) })
            .map_err(|e| Box::new(GameError { prefix: None, ..e }));
        GameEntry { index, game }
    }

    /// A game indexed but not checked: listed as readable until it is opened (a big file's list does
    /// not wait for every game to be parsed).
    pub fn unchecked(index: IndexedGame) -> GameEntry {
        GameEntry { index, game: Ok(GameFacts { plies: None }) }
    }

    /// Its number in the file, from 1.
    pub fn number(&self) -> usize {
        self.index.number
    }

    /// A header of the game (empty when it has none, `?` values kept as written).
    pub fn header(&self, name: &str) -> &str {
        self.index.tags.get(name).unwrap_or("")
    }

    /// Moves on the main line (0 for a broken game; `None` for a game not checked).
    pub fn plies(&self) -> Option<usize> {
        self.game.as_ref().map_or(Some(0), |f| f.plies.map(|p| p as usize))
    }

    /// Whether the game matches a filter: every word of `filter` appears (case-insensitively) in one of
    /// its White, Black, Event, Site, Date, Result, Opening or ECO headers; for a broken game, in its
    /// error (which names the game and the line).
    pub fn matches(&self, filter: &str) -> bool {
        let words: Vec<String> = filter.split_whitespace().map(str::to_lowercase).collect();
        self.matches_words(&words, &mut String::new())
    }

    /// [`GameEntry::matches`] with the words already lower-cased; `hay` is scratch space.
    fn matches_words(&self, words: &[String], hay: &mut String) -> bool {
        if words.is_empty() {
            return true;
        }
        hay.clear();
        match &self.game {
            Ok(_) => {
                for h in FILTERED {
                    if let Some(v) = self.index.tags.get(h) {
                        hay.push_str(v);
                        hay.push(' ');
                    }
                }
            }
            Err(e) => {
                use std::fmt::Write as _;
                let _ = write!(hay, "{e}");
            }
        }
        let hay = hay.to_lowercase();
        words.iter().all(|w| hay.contains(w.as_str()))
    }
}

/// The headers a filter looks in.
const FILTERED: [&str; 8] = ["White", "Black", "Event", "Site", "Date", "Result", "Opening", "ECO"];

/// Where the games' text is.
#[derive(Debug, Clone)]
enum Origin {
    /// In memory (pasted text, or a small file as it was read): the bytes from source offset `base` on.
    Text(Arc<[u8]>, u64),
    /// In a file, read again for each game.
    File(PathBuf),
}

/// The bytes of `entry` in `text` (which starts at source offset `base`); empty when they are not there.
fn text_range<'a>(text: &'a [u8], base: u64, entry: &GameEntry) -> &'a [u8] {
    let Some(start) = entry.index.offset.checked_sub(base).and_then(|s| usize::try_from(s).ok()) else {
        return &[];
    };
    let end = start.saturating_add(usize::try_from(entry.index.len).unwrap_or(usize::MAX));
    text.get(start..end).unwrap_or_default()
}

/// The last filter's matches, extended as entries arrive.
#[derive(Debug, Default)]
struct FilterCache {
    filter: String,
    /// Entries looked at.
    scanned: usize,
    /// Indices (into the entries) of the matches.
    hits: Vec<u32>,
}

/// All games of one source.
#[derive(Debug)]
pub struct GameList {
    /// Identifies this reading of the source (a new one per list), so work on its games (a file review)
    /// knows when the list was replaced.
    pub id: u64,
    /// Where the games came from (a file name, or "pasted text").
    pub source: String,
    /// The games in file order (so far, while the file is still being read).
    pub entries: Vec<GameEntry>,
    /// Whether every game of the source is listed (false while the file is still being read).
    pub complete: bool,
    origin: Origin,
    filter: Mutex<FilterCache>,
}

impl Clone for GameList {
    fn clone(&self) -> Self {
        GameList {
            id: self.id,
            source: self.source.clone(),
            entries: self.entries.clone(),
            complete: self.complete,
            origin: self.origin.clone(),
            filter: Mutex::default(),
        }
    }
}

impl GameList {
    /// Reads every game of `text`; a broken game becomes an entry with its error and the others still read.
    pub fn read(text: &str, source: &str) -> GameList {
        let bytes: Arc<[u8]> = Arc::from(text.as_bytes());
        let mut entries = Vec::new();
        // Reading from memory fails only when stopped, and nothing stops it.
        let _ = index_games(&*bytes, &AtomicBool::new(false), |game, text| {
            entries.push(GameEntry::check(game, text));
        });
        GameList {
            id: next_list_id(),
            source: source.to_owned(),
            entries,
            complete: true,
            origin: Origin::Text(bytes, 0),
            filter: Mutex::default(),
        }
    }

    /// An empty list of the games of the file at `path`, filled by [`GameList::extend`] as it is read.
    pub fn for_file(path: PathBuf, source: &str) -> GameList {
        GameList {
            id: next_list_id(),
            source: source.to_owned(),
            entries: Vec::new(),
            complete: false,
            origin: Origin::File(path),
            filter: Mutex::default(),
        }
    }

    /// Keeps the file's text in memory (`text` starts at offset `base` of the file), so its games are
    /// read from there instead of the file: for small files, and for sources that cannot be read twice
    /// (a pipe).
    pub(super) fn keep_text(&mut self, text: Vec<u8>, base: u64) {
        self.origin = Origin::Text(Arc::from(text), base);
    }

    /// Adds the next games of the file (in file order).
    pub fn extend(&mut self, entries: impl IntoIterator<Item = GameEntry>) {
        self.entries.extend(entries);
    }

    /// Game `number` (from 1) read again from the source: its tree (with its source text, so an unchanged
    /// game is saved byte for byte), or why it cannot be read (or is no longer in the file).
    pub fn game(&self, number: usize) -> Result<GameTree, AppError> {
        let entry = self.entry(number).ok_or_else(|| self.no_game(number))?;
        if let Err(e) = &entry.game {
            return Err(AppError::from((**e).clone()));
        }
        let options = ReadOptions::default();
        match &self.origin {
            Origin::Text(text, base) => {
                Ok(parse_game(text_range(text, *base, entry), &entry.index, options)?)
            }
            Origin::File(path) => {
                let mut file = std::fs::File::open(path).map_err(|e| AppError::Reopen {
                    path: path.clone(),
                    number,
                    reason: e.to_string(),
                })?;
                Ok(read_game(&mut file, &entry.index, options)?)
            }
        }
    }

    fn no_game(&self, number: usize) -> AppError {
        AppError::NoGame { number, list: self.source.clone() }
    }

    /// The text of game `number` as it stands in the source (lossily decoded), for copying it through.
    pub fn raw(&self, number: usize) -> Result<String, AppError> {
        let entry = self.entry(number).ok_or_else(|| self.no_game(number))?;
        let bytes = match &self.origin {
            Origin::Text(text, base) => text_range(text, *base, entry).to_vec(),
            Origin::File(path) => {
                let mut file = std::fs::File::open(path).map_err(|e| AppError::Reopen {
                    path: path.clone(),
                    number,
                    reason: e.to_string(),
                })?;
                crate::pgn::index::read_game_bytes(&mut file, &entry.index)?
            }
        };
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The entry of game `number` (from 1).
    pub fn entry(&self, number: usize) -> Option<&GameEntry> {
        let e = self.entries.get(number.checked_sub(1)?)?;
        (e.number() == number).then_some(e)
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

    /// Calls `f` with the indices (into [`GameList::entries`]) of the games matching `filter` (see
    /// [`GameEntry::matches`]). The matches are kept, so the next call with the same filter only looks
    /// at games added since, and a filter that only adds to the last one only looks at its matches.
    pub fn with_matches<T>(&self, filter: &str, f: impl FnOnce(&[u32]) -> T) -> T {
        let mut cache = self.filter.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let words: Vec<String> = filter.split_whitespace().map(str::to_lowercase).collect();
        let mut hay = String::new();
        if cache.filter != filter {
            if !cache.filter.trim().is_empty() && filter.starts_with(cache.filter.as_str()) {
                // Narrower than the last filter: only its matches can match.
                let entries = &self.entries;
                cache
                    .hits
                    .retain(|&i| entries.get(i as usize).is_some_and(|e| e.matches_words(&words, &mut hay)));
            } else {
                cache.hits.clear();
                cache.scanned = 0;
            }
            cache.filter = filter.to_owned();
        }
        let from = cache.scanned.min(self.entries.len());
        for (i, e) in self.entries.iter().enumerate().skip(from) {
            if e.matches_words(&words, &mut hay) {
                cache.hits.push(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        cache.scanned = self.entries.len();
        f(&cache.hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_stays_small_for_lists_of_a_million_games() {
        // The index of a 1 GB file holds about 800,000 entries (the soak's file): each byte here is 0.8 MB.
        assert!(std::mem::size_of::<GameEntry>() <= 80, "{} bytes", std::mem::size_of::<GameEntry>());
    }

    #[test]
    fn broken_games_are_listed_and_the_others_read() {
        let text = "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 *\n\n[White \"C\"]\n\n1. e4 e4 *\n\n[White \"D\"]\n[Event \"Club\"]\n\n1. d4 *\n";
        let list = GameList::read(text, "test.pgn");
        assert_eq!(list.entries.len(), 3);
        assert_eq!((list.good(), list.broken()), (2, 1));
        let broken = &list.entries[1];
        let err = broken.game.as_ref().expect_err("e4 e4 is illegal").to_string();
        assert!(err.contains("game 2") && err.contains("e4"), "{err}");
        let whole = crate::pgn::reader::read_all(text);
        assert_eq!(
            whole[1].as_ref().map_err(ToString::to_string).err().as_ref(),
            Some(&err),
            "as the whole-file reader says"
        );
        assert_eq!(
            list.game(2).map_err(|e| e.to_string()),
            Err(err.clone()),
            "opening it gives the same error"
        );
        assert_eq!(list.first_good().map(|e| e.header("White")), Some("A"));
        assert_eq!(broken.header("White"), "C", "a broken game keeps its headers");
        assert_eq!(list.entries[0].plies(), Some(2));
        assert!(list.entries[2].matches("club d"));
        assert!(!list.entries[2].matches("club x"));
        assert!(broken.matches("illegal") || broken.matches("not a legal"));
        let raw = list.raw(2).expect("a broken game keeps its text");
        assert_eq!(raw, "[White \"C\"]\n\n1. e4 e4 *\n\n");
        let first = list.game(1).expect("reads");
        assert_eq!((first.header("Black"), first.mainline().count()), (Some("B"), 2));
        assert_eq!(
            first.source(),
            Some("[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 *\n"),
            "saved byte for byte"
        );
        assert!(list.game(4).is_err() && list.entry(0).is_none());
        assert_ne!(GameList::read(text, "test.pgn").id, list.id, "every reading is a new list");
    }

    #[test]
    fn games_with_tokens_that_are_not_pgn_are_listed_with_their_place() {
        let text = "[White \"A\"]\n\n1. pawn goes to e4 *\n\n[White \"B\"]\n\n1. d4 *\n";
        let list = GameList::read(text, "words.pgn");
        assert_eq!((list.good(), list.broken()), (1, 1));
        let broken = &list.entries[0];
        let err = broken.game.as_ref().expect_err("`pawn` is not PGN").to_string();
        assert!(err.starts_with("game 1, line 3, column 4: `pawn` is not PGN"), "{err}");
        assert_eq!(broken.header("White"), "A", "listed with its headers");
        assert!(broken.matches("pawn"), "the filter finds it by its error");
        assert_eq!(
            list.game(1).map_err(|e| e.to_string()),
            Err(err.clone()),
            "opening it gives the same error"
        );
        assert_eq!(list.raw(1).expect("kept"), "[White \"A\"]\n\n1. pawn goes to e4 *\n\n", "text kept");
        // The same from the file, read again game by game (the large-file path).
        let dir = std::env::temp_dir().join(format!("mavboard-game-list-words-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("words.pgn");
        std::fs::write(&path, text).expect("write");
        let mut from_file = GameList::for_file(path.clone(), "words.pgn");
        let mut entries = Vec::new();
        let file = std::fs::File::open(&path).expect("open");
        index_games(file, &AtomicBool::new(false), |game, _| entries.push(GameEntry::unchecked(game)))
            .expect("indexed");
        from_file.extend(entries);
        assert_eq!(
            from_file.game(1).map(|t| t.mainline().count()).map_err(|e| e.to_string()),
            Err(err.clone())
        );
        assert_eq!(from_file.raw(1).expect("kept"), list.raw(1).expect("kept"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn games_are_read_again_from_the_file() {
        let dir = std::env::temp_dir().join(format!("mavboard-game-list-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("two.pgn");
        let text = "[Event \"a\"]\n\n1. e4 *\n\n[Event \"b\"]\n\n1. d4 d5 2. c4 *\n";
        std::fs::write(&path, text).expect("write");
        let mut list = GameList::for_file(path.clone(), "two.pgn");
        assert!(!list.complete && list.entries.is_empty());
        list.extend(GameList::read(text, "x").entries);
        let tree = list.game(2).expect("read from the file");
        assert_eq!((tree.header("Event"), tree.mainline().count()), (Some("b"), 3));
        std::fs::write(&path, "").expect("truncate");
        let err = list.game(2).expect_err("the file changed").to_string();
        assert!(err.contains("game 2") && err.contains("open the file again"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
        assert!(list.game(1).is_err_and(|e| e.to_string().contains("cannot be opened again")));
    }

    #[test]
    fn filter_matches_are_kept_and_extended() {
        let text = "[White \"Anand\"]\n\n1. e4 *\n\n[White \"Carlsen\"]\n\n1. d4 *\n\n[White \"Caruana\"]\n\n1. c4 *\n";
        let mut list = GameList::read(text, "x");
        assert_eq!(list.with_matches("", <[u32]>::to_vec), [0, 1, 2]);
        assert_eq!(list.with_matches("ca", <[u32]>::to_vec), [1, 2]);
        assert_eq!(list.with_matches("car", <[u32]>::to_vec), [1, 2]);
        assert_eq!(list.with_matches("carl", <[u32]>::to_vec), [1]);
        assert_eq!(list.with_matches("CA", <[u32]>::to_vec), [1, 2], "a wider filter looks again");
        list.extend(GameList::read("[White \"Carlsen\"]\n\n1. e4 *\n", "y").entries.into_iter().map(
            |mut e| {
                e.index.number = 4;
                e
            },
        ));
        assert_eq!(list.with_matches("CA", <[u32]>::to_vec), [1, 2, 3], "new games are looked at");
        assert_eq!(list.clone().with_matches("anand", <[u32]>::to_vec), [0]);
    }
}
