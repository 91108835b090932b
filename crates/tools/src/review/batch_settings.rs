//! What a batch review run is told: its files ([`BatchPaths`]: input, output, report, and the partial and
//! resume files beside them) and its settings ([`BatchOptions`], [`JudgeSpec`]), shared by the run and its
//! output.

use std::path::{Path, PathBuf};

use super::options::ReviewOptions;
use super::resume::with_suffix;
use crate::uci::SearchLimits;

/// The files of a batch run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchPaths {
    /// The PGN file to review.
    pub input: PathBuf,
    /// The annotated PGN to write.
    pub output: PathBuf,
    /// The JSON report to write, if any.
    pub report: Option<PathBuf>,
}

impl BatchPaths {
    /// The default output beside the input: `games.pgn` → `games.annotated.pgn`.
    pub fn default_output(input: &Path) -> PathBuf {
        let stem = input.file_stem().map(|s| s.to_os_string()).unwrap_or_default();
        let mut name = stem;
        name.push(".annotated.pgn");
        input.with_file_name(name)
    }

    /// The output being written: `OUT.partial`.
    pub fn partial(&self) -> PathBuf {
        with_suffix(&self.output, ".partial")
    }

    /// The resume state: `OUT.resume.json`.
    pub fn state(&self) -> PathBuf {
        with_suffix(&self.output, ".resume.json")
    }

    /// The report's games being written, one JSON object a line: `REPORT.partial`.
    pub fn report_partial(&self) -> Option<PathBuf> {
        self.report.as_deref().map(|r| with_suffix(r, ".partial"))
    }
}

/// Settings of a batch run.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOptions {
    /// What each game's review computes.
    pub review: ReviewOptions,
    /// Worker threads, each with its own evaluator; games are spread over them.
    pub workers: usize,
    /// The model's name, for comments, the report and the resume check.
    pub model: String,
    /// A UCI engine that judges the moves instead of the model; the model's view is then recorded beside
    /// each move ([`super::report::ModelView`]).
    pub judge: Option<JudgeSpec>,
}

/// The UCI engine judging a review: each worker starts its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeSpec {
    /// The engine's executable.
    pub path: PathBuf,
    /// How long it searches each position.
    pub limits: SearchLimits,
}
