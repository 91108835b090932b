//! Other text a user or an engine hands over: Connect Four move strings, Hex SGF files, Hex cell
//! names and UCI `info` lines. Reading never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::game::connect_four::record::read_moves;
use mavboard::game::hex::Cell;
use mavboard::game::hex::record::read_sgf;
use mavboard::uci::info::parse_info;

fuzz_target!(|text: &str| {
    if let Ok(record) = read_moves(text) {
        let again = read_moves(&record.to_move_string()).expect("a written move string reads back");
        assert_eq!(again.moves(), record.moves());
    }
    let _ = read_sgf(text);
    let _ = Cell::parse(text);
    let _ = parse_info(text);
});
