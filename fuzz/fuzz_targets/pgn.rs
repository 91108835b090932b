//! PGN files: reading never panics, and every game that reads is written back into text that reads
//! again as one game with the same main line and result.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::pgn::{GameTree, PgnReader, ReadOptions, WriteOptions, game_to_string};

fn mainline_sans(tree: &GameTree) -> Vec<Option<String>> {
    tree.mainline().map(|id| tree.node(id).and_then(|n| n.san_text())).collect()
}

fuzz_target!(|data: &[u8]| {
    let reader = PgnReader::with_options(data, ReadOptions { keep_source: true });
    for game in reader.take(64) {
        let Ok(tree) = game else { continue };
        let written = game_to_string(&tree, &WriteOptions { line_width: 80, use_source: false });
        let again: Vec<_> = PgnReader::new(written.as_bytes()).collect();
        assert_eq!(again.len(), 1, "one game was written as {} games:\n{written}", again.len());
        let Some(Ok(reread)) = again.first() else {
            panic!("a game that was read does not read back after writing:\n{written}\n{again:?}");
        };
        assert_eq!(mainline_sans(&tree), mainline_sans(reread), "main line changed by writing:\n{written}");
        assert_eq!(tree.result(), reread.result(), "result changed by writing:\n{written}");
    }
});
