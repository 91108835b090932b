//! The reference rows of `mavboard bench search --lc0 BIN --lc0-weights NET`: lc0's own benchmark (a binary
//! built from its public source) on the same network and the same positions at each of the same batch sizes
//! (its `--minibatch-size`) and thread count, run once per position with `benchmark --fen … --nodes …`, its
//! nodes per second read from its summary lines.

use std::path::Path;
use std::process::Command;

use anyhow::Context;
use mavboard::game::GameState;
use mavboard::game::chess::ChessState;

/// What lc0 did over all positions.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Lc0Run {
    /// Nodes searched, summed over the positions.
    pub nodes: u64,
    /// lc0's own search time, summed (milliseconds).
    pub millis: u64,
}

impl Lc0Run {
    /// Nodes per second.
    pub fn nodes_per_s(&self) -> f64 {
        self.nodes as f64 * 1e3 / (self.millis.max(1) as f64)
    }
}

/// The number after `label` and a colon on one of `text`'s lines (lc0 prints `Nodes searched  : 3002`).
fn summary_value(text: &str, label: &str) -> Option<u64> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(label))
        .filter_map(|rest| rest.trim_start().strip_prefix(':'))
        .find_map(|v| v.trim().parse().ok())
}

/// Runs `bin benchmark` on each position with `weights`, `nodes` nodes, `threads` search threads, batches of
/// `minibatch` positions and the `backend` (lc0's name: `blas`, `eigen`, …).
pub fn run(
    bin: &Path,
    weights: &Path,
    backend: &str,
    positions: &[ChessState],
    nodes: u64,
    threads: usize,
    minibatch: usize,
) -> anyhow::Result<Lc0Run> {
    let mut total = Lc0Run::default();
    for s in positions {
        let out = Command::new(bin)
            .arg("benchmark")
            .arg(format!("--weights={}", weights.display()))
            .arg(format!("--backend={backend}"))
            .arg(format!("--nodes={nodes}"))
            .arg(format!("--threads={}", threads.max(1)))
            .arg(format!("--minibatch-size={}", minibatch.max(1)))
            .arg(format!("--fen={}", s.to_text()))
            .output()
            .with_context(|| {
                format!("running {} (--lc0: lc0's binary, built from its source)", bin.display())
            })?;
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let (Some(millis), Some(n)) =
            (summary_value(&text, "Total time (ms)"), summary_value(&text, "Nodes searched"))
        else {
            let tail: Vec<&str> = text.lines().rev().take(5).collect();
            anyhow::bail!(
                "{} benchmark printed no summary (status {}); its last lines: {}",
                bin.display(),
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            );
        };
        total.nodes += n;
        total.millis += millis;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lc0s_summary() {
        let text = "Benchmark time 2819 ms, 3002 nodes, 1065 nps, move f5d3\nbestmove f5d3\n\n\
                    ===========================\nTotal time (ms) : 9194\nNodes searched  : 12062\nNodes/second    : 1312\n";
        assert_eq!(summary_value(text, "Total time (ms)"), Some(9194));
        assert_eq!(summary_value(text, "Nodes searched"), Some(12062));
        assert_eq!(summary_value(text, "Nodes/second"), Some(1312));
        assert_eq!(summary_value("Nodes searched: many", "Nodes searched"), None);
        let run = Lc0Run { nodes: 12062, millis: 9194 };
        assert!((run.nodes_per_s() - 1311.9).abs() < 0.1);
    }
}
