//! mavboard's rules and formats: games (chess, Chess960, Connect Four, Hex), FEN, PGN, the MAV text protocol, lc0's network format, logging.
//!
//! One layer of mavboard as a crate (the map is `docs/ARCHITECTURE.md` in the repository).

pub mod bounded_map;
pub mod c_heap;
pub mod game;
pub mod lc0;
pub mod logging;
pub mod mav;
pub mod pgn;

use std::path::Path;

/// The folder of the source checkout this crate was built from (the workspace's root): where a build run
/// from `target/` finds `assets/`, `training/` and `tests/fixtures/`. Installed builds look beside their
/// executable first.
pub fn checkout_dir() -> &'static Path {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().nth(2).unwrap_or(manifest)
}
