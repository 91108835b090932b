//! PGN files: reading never panics, every game that reads is written back into text that reads again as
//! one game with the same main line and result, and a token that is not PGN is named where it stands: the
//! error's line and column point at the token, and the game's readable prefix is written and read back
//! too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::pgn::{GameErrorKind, GameTree, PgnReader, ReadOptions, WriteOptions, game_to_string};

fn mainline_sans(tree: &GameTree) -> Vec<Option<String>> {
    tree.mainline().map(|id| tree.node(id).and_then(|n| n.san_text())).collect()
}

/// Where line `line`, column `column` (from 1, in characters; a byte order mark at the start left out) of
/// `data` starts, as text; `None` when that line is not UTF-8.
fn text_at(data: &[u8], line: u64, column: u32) -> Option<String> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let line = data.split(|&b| b == b'\n').nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let line = std::str::from_utf8(line).ok()?;
    Some(line.chars().skip(usize::try_from(column).ok()?.checked_sub(1)?).collect())
}

fn check_written(tree: &GameTree) {
    let written = game_to_string(tree, &WriteOptions { line_width: 80, use_source: false });
    let again: Vec<_> = PgnReader::new(written.as_bytes()).collect();
    assert_eq!(again.len(), 1, "one game was written as {} games:\n{written}", again.len());
    let Some(Ok(reread)) = again.first() else {
        panic!("a game that was read does not read back after writing:\n{written}\n{again:?}");
    };
    assert_eq!(mainline_sans(tree), mainline_sans(reread), "main line changed by writing:\n{written}");
    assert_eq!(tree.result(), reread.result(), "result changed by writing:\n{written}");
}

fuzz_target!(|data: &[u8]| {
    let reader = PgnReader::with_options(data, ReadOptions { keep_source: true });
    for game in reader.take(64) {
        let tree = match game {
            Ok(tree) => tree,
            Err(e) => {
                if let GameErrorKind::Unrecognized { token } = &e.kind {
                    let column = e.column.expect("a token's error has a column");
                    if let Some(there) = text_at(data, e.line, column) {
                        let token = token.strip_suffix('…').unwrap_or(token);
                        assert!(
                            there.starts_with(token),
                            "{e} but line {}, column {column} is {there:?}",
                            e.line
                        );
                    }
                    check_written(e.prefix.as_deref().expect("a token's error has the readable prefix"));
                }
                continue;
            }
        };
        check_written(&tree);
    }
});
