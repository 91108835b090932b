//! FEN text: reading never panics in any mode, and a position that reads is written back into a FEN
//! that reads again into the same position.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::game::fen::{CastlingNotation, FenOptions, ModeChoice, parse_fen_with, write_fen};
use mavboard::mav::searchless::tokenize_fen;
use shakmaty::EnPassantMode;

fuzz_target!(|text: &str| {
    for mode in [ModeChoice::Auto, ModeChoice::Standard, ModeChoice::Chess960] {
        for strict in [false, true] {
            let Ok(parsed) = parse_fen_with(text, FenOptions { mode, strict }) else { continue };
            for notation in [CastlingNotation::XFen, CastlingNotation::Shredder] {
                let fen = write_fen(&parsed.position, notation, EnPassantMode::Legal);
                let again = parse_fen_with(&fen, FenOptions { mode: ModeChoice::Auto, strict: false })
                    .unwrap_or_else(|e| panic!("{text:?} read, but its written FEN {fen:?} does not: {e}"));
                assert_eq!(
                    write_fen(&again.position, notation, EnPassantMode::Legal),
                    fen,
                    "{text:?}: writing is not stable"
                );
                let _ = tokenize_fen(&fen);
            }
        }
    }
    let _ = tokenize_fen(text);
});
