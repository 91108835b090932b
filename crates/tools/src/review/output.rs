//! The output side of a batch run: the partial files, what is written for each game (framed by the bytes
//! that preceded it in the input, or copied through with a `%` note), the resume state's lengths, the
//! final JSON report, and the rename into place.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::annotate::comment_text;
use super::batch_settings::{BatchOptions, BatchPaths};
use super::error::ReviewError;
use super::resume::{ResumeState, reopen_truncated, with_suffix};

/// A game waiting for its output.
pub(super) enum Slot {
    /// At a worker.
    Waiting { leading: Option<String>, original: String },
    /// A game's text, framed by what stood before it when it is written.
    Text { leading: Option<String>, text: String, report: String },
    /// Bytes to write as they are.
    Raw { bytes: Vec<u8>, report: String },
}

/// The output files being written and their committed lengths.
pub(super) struct Sink {
    out: BufWriter<File>,
    pub(super) out_len: u64,
    ends_with_newline: bool,
    report: Option<(BufWriter<File>, u64)>,
}

impl Sink {
    fn write(&mut self, bytes: &[u8], report: &str, paths: &BatchPaths) -> Result<(), ReviewError> {
        self.out.write_all(bytes).map_err(|e| ReviewError::io(&paths.partial(), &e))?;
        self.out_len += bytes.len() as u64;
        if let Some(&last) = bytes.last() {
            self.ends_with_newline = last == b'\n';
        }
        if let (Some((w, len)), Some(path)) = (&mut self.report, paths.report_partial()) {
            w.write_all(report.as_bytes())
                .and_then(|()| w.write_all(b"\n"))
                .map_err(|e| ReviewError::io(&path, &e))?;
            *len += report.len() as u64 + 1;
        }
        Ok(())
    }

    pub(super) fn write_slot(&mut self, slot: Slot, paths: &BatchPaths) -> Result<(), ReviewError> {
        match slot {
            Slot::Text { leading, text, report } => {
                let bytes = framed(leading.as_deref(), &text, self.ends_with_newline, self.out_len == 0);
                self.write(&bytes, &report, paths)
            }
            Slot::Raw { bytes, report } => self.write(&bytes, &report, paths),
            Slot::Waiting { .. } => Ok(()),
        }
    }

    pub(super) fn end_with_newline(&mut self, paths: &BatchPaths) -> Result<(), ReviewError> {
        if !self.ends_with_newline {
            self.out.write_all(b"\n").map_err(|e| ReviewError::io(&paths.partial(), &e))?;
            self.out_len += 1;
            self.ends_with_newline = true;
        }
        Ok(())
    }

    fn flush(&mut self, paths: &BatchPaths) -> Result<(), ReviewError> {
        self.out.flush().map_err(|e| ReviewError::io(&paths.partial(), &e))?;
        if let (Some((w, _)), Some(path)) = (&mut self.report, paths.report_partial()) {
            w.flush().map_err(|e| ReviewError::io(&path, &e))?;
        }
        Ok(())
    }
}

/// The output of a game that was read: what stood before it, then its text.
fn framed(leading: Option<&str>, body: &str, ends_with_newline: bool, first: bool) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(body.len() + 2);
    match leading {
        Some(l) => bytes.extend_from_slice(l.as_bytes()),
        None => {
            if !ends_with_newline {
                bytes.push(b'\n');
            }
            if !first {
                bytes.push(b'\n');
            }
        }
    }
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// The output of a game copied through: what stood before it, a `%` line with `note`, its bytes.
pub(super) fn copied(leading: &[u8], note: &str, text: &[u8]) -> Vec<u8> {
    let mut bytes = leading.to_vec();
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(b"% ");
    bytes.extend_from_slice(comment_text(note).as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(text);
    bytes
}

fn create(path: &Path) -> Result<File, ReviewError> {
    File::create(path).map_err(|e| ReviewError::io(path, &e))
}

/// Opens (resuming) or creates the partial files and returns the state to continue from.
pub(super) fn open_sink(
    paths: &BatchPaths,
    input_len: u64,
    settings: &str,
) -> Result<(Sink, ResumeState), ReviewError> {
    let state_path = paths.state();
    let mismatch =
        |why: String| ReviewError::StateMismatch { state: state_path.clone(), partial: paths.partial(), why };
    if let Some(state) = ResumeState::load(&state_path)? {
        if let Some(why) = state.mismatch(&paths.input, input_len, settings) {
            return Err(mismatch(why));
        }
        let mut out =
            reopen_truncated(&paths.partial(), state.output_len).map_err(|e| mismatch(e.to_string()))?;
        let mut ends_with_newline = true;
        if state.output_len > 0 {
            let mut last = [0u8; 1];
            out.seek(SeekFrom::End(-1))
                .and_then(|_| out.read_exact(&mut last))
                .and_then(|()| out.seek(SeekFrom::End(0)))
                .map_err(|e| ReviewError::io(&paths.partial(), &e))?;
            ends_with_newline = last[0] == b'\n';
        }
        let report = match (paths.report_partial(), state.report_len) {
            (Some(path), Some(len)) => Some((
                BufWriter::new(reopen_truncated(&path, len).map_err(|e| mismatch(e.to_string()))?),
                len,
            )),
            _ => None,
        };
        let sink = Sink { out: BufWriter::new(out), out_len: state.output_len, ends_with_newline, report };
        return Ok((sink, state));
    }
    let out = BufWriter::new(create(&paths.partial())?);
    let report = match paths.report_partial() {
        Some(path) => Some((BufWriter::new(create(&path)?), 0)),
        None => None,
    };
    let state = ResumeState {
        input: paths.input.clone(),
        input_len,
        settings: settings.to_owned(),
        games_done: 0,
        output_len: 0,
        report_len: report.as_ref().map(|_| 0),
    };
    state.save(&state_path)?;
    Ok((Sink { out, out_len: 0, ends_with_newline: true, report }, state))
}

/// Writes the final JSON report from the partial one (one game a line) and removes the partial.
fn finish_report(paths: &BatchPaths, options: &BatchOptions) -> Result<(), ReviewError> {
    let (Some(report), Some(partial)) = (&paths.report, paths.report_partial()) else { return Ok(()) };
    let tmp = with_suffix(report, ".tmp");
    let write = || -> std::io::Result<()> {
        let lines = BufReader::new(File::open(&partial)?);
        let mut out = BufWriter::new(File::create(&tmp)?);
        let head = serde_json::json!({
            "input": paths.input.display().to_string(),
            "model": options.model,
            "method": options.review.describe(),
            "thresholds": options.review.thresholds,
        });
        let head = head.to_string();
        // The header object without its closing brace, then the games.
        out.write_all(head.strip_suffix('}').unwrap_or(&head).as_bytes())?;
        out.write_all(b",\"games\":[\n")?;
        for (i, line) in lines.lines().enumerate() {
            if i > 0 {
                out.write_all(b",\n")?;
            }
            out.write_all(line?.as_bytes())?;
        }
        out.write_all(b"\n]}\n")?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, report)?;
        fs::remove_file(&partial)
    };
    write().map_err(|e| ReviewError::io(report, &e))
}

/// Copies what follows the last game in the input (trailing blank lines, the skipped rest of a last game
/// that could not be read) to the output.
pub(super) fn copy_tail(
    input: &Path,
    offset: u64,
    sink: &mut Sink,
    paths: &BatchPaths,
) -> Result<(), ReviewError> {
    let mut tail = Vec::new();
    File::open(input)
        .and_then(|mut f| {
            f.seek(SeekFrom::Start(offset))?;
            f.read_to_end(&mut tail)
        })
        .map_err(|e| ReviewError::io(input, &e))?;
    if tail.is_empty() {
        return Ok(());
    }
    sink.out.write_all(&tail).map_err(|e| ReviewError::io(&paths.partial(), &e))?;
    sink.out_len += tail.len() as u64;
    sink.ends_with_newline = tail.ends_with(b"\n");
    Ok(())
}

pub(super) fn save(sink: &mut Sink, state: &mut ResumeState, paths: &BatchPaths) -> Result<(), ReviewError> {
    sink.flush(paths)?;
    state.output_len = sink.out_len;
    state.report_len = sink.report.as_ref().map(|(_, len)| *len);
    state.save(&paths.state())
}

pub(super) fn finish(sink: Sink, paths: &BatchPaths, options: &BatchOptions) -> Result<(), ReviewError> {
    let partial = paths.partial();
    let file = sink.out.into_inner().map_err(|e| ReviewError::io(&partial, e.error()))?;
    file.sync_all().map_err(|e| ReviewError::io(&partial, &e))?;
    drop(file);
    if let Some((w, _)) = sink.report {
        let path = paths.report_partial().unwrap_or_default();
        w.into_inner().map_err(|e| ReviewError::io(&path, e.error()))?;
    }
    finish_report(paths, options)?;
    fs::rename(&partial, &paths.output).map_err(|e| ReviewError::io(&paths.output, &e))?;
    fs::remove_file(paths.state()).map_err(|e| ReviewError::io(&paths.state(), &e))
}
