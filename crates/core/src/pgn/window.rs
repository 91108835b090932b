//! What a PGN reader has read of its source: the [`Window`] of bytes since the game being read began (with
//! the line count up to there), filled by the [`Tracked`] source beneath the parser, so that a game's byte
//! range, line and column can be told after the parser has moved on. Shared by the whole-file reader
//! ([`super::PgnReader`]) and the index ([`super::index`]).

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::{Arc, Mutex, MutexGuard};

/// The bytes read from the source since (at least) the start of the game being read, with line bookkeeping.
/// Shared between the [`Tracked`] source (which appends) and its reader.
#[derive(Debug, Default)]
pub(super) struct Window {
    bytes: Vec<u8>,
    /// Source offset of `bytes[0]`.
    base: u64,
    /// Source offset up to which newlines are counted.
    counted: u64,
    /// Newlines before `counted`.
    lines: u64,
    /// The source's read error, until the reader takes it.
    pub(super) failure: Option<String>,
}

impl Window {
    /// Bytes kept before the current game are dropped once they exceed this.
    const KEEP: usize = 1 << 16;

    /// Moves the line count forward to `offset` and returns the line number (from 1) there. Bytes before
    /// `offset` may be forgotten afterwards, except the ones after `keep_from`.
    pub(super) fn advance_to(&mut self, offset: u64, keep_from: u64) -> u64 {
        let from = self.index(self.counted);
        let to = self.index(offset);
        self.lines += count_newlines(&self.bytes[from..to]);
        self.counted = self.counted.max(offset);
        let cut = self.index(keep_from.min(offset));
        if cut > Self::KEEP {
            self.bytes.drain(..cut);
            self.base += cut as u64;
        }
        self.lines + 1
    }

    /// The source offset just past the last byte read.
    pub(super) fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }

    fn index(&self, offset: u64) -> usize {
        (offset.saturating_sub(self.base) as usize).min(self.bytes.len())
    }

    /// The column (from 1, in characters) of source offset `offset` on its line. Counted from the line's
    /// start when it is still kept (bytes are dropped only before a game that follows more than
    /// [`Window::KEEP`] bytes of the previous one), a byte order mark at the start of the file left out.
    pub(super) fn column(&self, offset: u64) -> u32 {
        let before = &self.bytes[..self.index(offset)];
        let line = match before.iter().rposition(|&b| b == b'\n') {
            Some(newline) => &before[newline + 1..],
            None if self.base == 0 => before.strip_prefix(super::movetext::BOM).unwrap_or(before),
            None => before,
        };
        super::movetext::columns(line) + 1
    }

    /// The bytes between two source offsets (as far as they are still kept).
    pub(super) fn range(&self, from: u64, to: u64) -> &[u8] {
        let (from, to) = (self.index(from), self.index(to));
        &self.bytes[from.min(to)..to]
    }
}

/// The newlines in `bytes`.
pub(super) fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// The window, whether or not a thread panicked holding it (its bytes stay valid).
pub(super) fn lock(window: &Mutex<Window>) -> MutexGuard<'_, Window> {
    window.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A source that copies what it reads into the shared [`Window`] and knows its stream position
/// (the only "seek" it supports), so game offsets and line numbers can be recovered.
#[derive(Debug)]
pub(super) struct Tracked<R> {
    inner: R,
    window: Arc<Mutex<Window>>,
    pos: u64,
}

impl<R> Tracked<R> {
    /// `inner` read from its start, copying into `window`.
    pub(super) fn new(inner: R, window: Arc<Mutex<Window>>) -> Tracked<R> {
        Tracked { inner, window, pos: 0 }
    }
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                lock(&self.window).bytes.extend_from_slice(&buf[..n]);
                self.pos += n as u64;
                Ok(n)
            }
            Err(e) => {
                lock(&self.window).failure = Some(e.to_string());
                Err(e)
            }
        }
    }
}

impl<R> Seek for Tracked<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match pos {
            SeekFrom::Current(0) => Ok(self.pos),
            _ => Err(io::Error::new(io::ErrorKind::Unsupported, "the PGN source only reports its position")),
        }
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.pos)
    }
}
