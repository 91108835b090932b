//! The crash journal's reader: a journal file left by an app that died may hold anything (a disk error, a
//! hand edit, another version). Reading never panics; what reads either restores into a fresh app or is
//! refused with a message; a restored document, journaled again, reads and restores to the same games.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::app::journal::entry::{DocCopy, JournalEntry};
use mavboard::app::settings::Settings;
use mavboard::app::state::AppState;

fuzz_target!(|text: &str| {
    let Ok(entry) = JournalEntry::from_json(text) else { return };
    let _ = entry.describe();
    let mut app = AppState::new(Settings::default());
    if app.restore_entry(&entry).is_err() {
        return;
    }
    let Some(copy) = DocCopy::of(&app.doc) else { return };
    let first = JournalEntry::new(&copy, 1, 0);
    let json = first.to_json().expect("an entry writes as JSON");
    let read = JournalEntry::from_json(&json).expect("a written journal reads");
    let mut again = AppState::new(Settings::default());
    again.restore_entry(&read).expect("a written journal restores");
    let second = JournalEntry::new(&DocCopy::of(&again.doc).expect("still unsaved"), 1, 0);
    assert_eq!(first.digest(), second.digest(), "restoring a restored journal changed its games");
});
