//! The C heap under the app: glibc's `malloc`, which the C and C++ libraries below mavboard use (ONNX
//! Runtime's sessions and weights, Mesa's drivers), whatever Rust's allocator is.
//!
//! Left as it is, glibc gives each thread that allocates one of up to eight arenas per core, and raises its
//! threshold for mapping large blocks each time such a block is freed, so that later ones come from the
//! arenas. A model loaded again on new worker threads then takes fresh arena memory while the freed
//! memory of the last load stays in other arenas: in a 21-minute soak (results/soak-2026-11-28c) the
//! arenas of the app's threads grew from 108 to 231 MiB, at each model switch, while mimalloc's part stayed
//! level; with the settings here they stayed between 9 and 19 MiB. [`tune`] caps the arenas
//! and fixes the threshold, so that large blocks (weights, ONNX Runtime's arena chunks) are mapped and
//! unmapped with their owner; [`release_freed`] hands the free pages inside the arenas back to the system,
//! and is called when a model's sessions are dropped.
//!
//! Elsewhere than Linux with glibc both do nothing.

/// Arenas glibc may create for the app's threads (its default is eight per core).
pub const ARENA_MAX: i32 = 2;

/// Blocks at least this large are mapped on their own and unmapped when freed (fixed: glibc would
/// otherwise raise it after each such free, up to 32 MiB).
pub const MMAP_THRESHOLD: i32 = 256 * 1024;

/// A setting glibc refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("glibc's malloc refused the setting {name} = {value} (the app runs with its defaults)")]
pub struct TuneError {
    /// The `mallopt` parameter's name.
    pub name: &'static str,
    /// The value asked for.
    pub value: i32,
}

/// Sets glibc's arena cap ([`ARENA_MAX`]) and mapping threshold ([`MMAP_THRESHOLD`]); call it first in
/// `main`, before any thread starts. Does nothing (and succeeds) off glibc.
pub fn tune() -> Result<(), TuneError> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        for (name, param, value) in [
            ("M_ARENA_MAX", libc::M_ARENA_MAX, ARENA_MAX),
            ("M_MMAP_THRESHOLD", libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        ] {
            // SAFETY: `mallopt` takes a parameter and a value, reads no memory of ours, and is safe to
            // call at any time (glibc takes its arenas' locks).
            #[allow(unsafe_code)]
            let ok = unsafe { libc::mallopt(param, value) };
            if ok != 1 {
                return Err(TuneError { name, value });
            }
        }
    }
    Ok(())
}

/// Hands the free memory inside glibc's arenas back to the system (`malloc_trim`): whole free pages
/// anywhere in them, not only at their tops. Returns whether any was given back (always `false` off
/// glibc). Takes a few milliseconds: call it off the UI thread, after large C++ objects (a model's
/// sessions) were dropped.
pub fn release_freed() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` walks glibc's own free lists under their locks and touches no memory that
        // is in use.
        #[allow(unsafe_code)]
        let released = unsafe { libc::malloc_trim(0) };
        released == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_takes_the_settings() {
        assert_eq!(tune(), Ok(()));
    }

    // The tests run on glibc's allocator (only the binary installs mimalloc), so Rust's own blocks below the
    // mapping threshold come from glibc's arenas.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_blocks_inside_an_arena_go_back_to_the_system() {
        let handle = std::thread::spawn(|| {
            let mut blocks: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 100 * 1024]).collect();
            // The last block stays, so the freed ones are not at the arena's top (where `free` itself
            // would give them back).
            let last = blocks.pop();
            drop(blocks);
            let released = release_freed();
            (released, last.map(|b| b.len()))
        });
        let (released, kept) = handle.join().expect("the test thread ends");
        assert!(released, "6 MiB freed below a live block, and nothing went back to the system");
        assert_eq!(kept, Some(100 * 1024));
    }
}
