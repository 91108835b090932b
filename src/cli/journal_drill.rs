//! `mavboard journal-drill` (hidden): the crash journal under a scripted run of edits, without a window, for
//! the test that kills the app at random moments (`tests/cli/journal_kill.rs`).
//!
//! It builds the app's real state, starts the real journal in the state folder (`$XDG_STATE_HOME`), restores
//! the newest journal left by a run that died (through the same command as the *Restore* button), then
//! applies seeded random edits — moves, variations, comments, NAGs, deletions, promotions — through
//! `AppState::apply` and hands each state to the journal as the window's frame does. It prints one line per
//! event, flushed at once:
//!
//! - `restored GENERATION DIGEST`: the game restored from a journal (its generation and
//!   [`JournalEntry::digest`]), before any edit; `discarded GENERATION` for older journals also found;
//! - `handed GENERATION DIGEST`: a state about to be handed to the journal's writer (said first, so that
//!   no state can reach the disk before its line is out);
//! - `written GENERATION LAG_US`: the writer has that generation on disk, that many microseconds after the
//!   oldest edit it carried.

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, bail};
use mavboard::app::command::{BoardMove, Command, DocCommand, FileCommand, Navigate};
use mavboard::app::journal::JournalAnswer;
use mavboard::app::journal::entry::{DocCopy, JournalEntry};
use mavboard::app::line::MoveHistory;
use mavboard::app::settings::Settings;
use mavboard::app::state::AppState;
use mavboard::game::GameState;
use rand::{Rng, SeedableRng};

/// Arguments of `mavboard journal-drill`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The seed of the edits.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many edits to make before ending normally (which removes the journal).
    #[arg(long, default_value_t = 1_000_000)]
    edits: u64,
    /// The longest pause between two edits, in microseconds (each pause is random up to it).
    #[arg(long, default_value_t = 3000)]
    pause_us: u64,
}

/// Runs the drill.
pub fn run(args: Args) -> anyhow::Result<()> {
    let Some(dir) = mavboard::app::journal::journal_dir() else {
        bail!("no state folder: set XDG_STATE_HOME or HOME");
    };
    let mut state = AppState::new(Settings::default());
    state.start_journal(&dir);
    if !state.files.journal.is_on() {
        let why: Vec<String> = state.view.messages.items().iter().map(|m| m.text.clone()).collect();
        bail!("the journal did not start: {}", why.join("; "));
    }
    let mut out = std::io::stdout().lock();
    let mut say = |line: String| -> anyhow::Result<()> {
        writeln!(out, "{line}").and_then(|()| out.flush()).context("stdout")
    };
    // The newest journal is restored, older ones discarded.
    if let Some(first) = state.files.journal.offers.front() {
        let generation = first.entry.generation;
        state.apply(Command::File(FileCommand::AnswerJournal(JournalAnswer::Restore)));
        let entry = DocCopy::of(&state.doc).map(|c| JournalEntry::new(&c, generation, 0));
        let digest = entry.map_or(0, |e| e.digest());
        say(format!("restored {generation} {digest:016x}"))?;
        while let Some(next) = state.files.journal.offers.front() {
            let generation = next.entry.generation;
            state.apply(Command::File(FileCommand::AnswerJournal(JournalAnswer::Discard)));
            say(format!("discarded {generation}"))?;
        }
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(args.seed);
    let mut written = None;
    for n in 0..args.edits {
        for command in edit(&state, &mut rng, n) {
            state.apply(command);
        }
        // Said before it is handed over, so that no state reaches the disk before its line is out.
        if state.files.journal.would_hand(&state.doc) {
            let generation = state.files.journal.generation() + 1;
            let entry = DocCopy::of(&state.doc).map(|c| JournalEntry::new(&c, generation, 0));
            say(format!("handed {generation} {:016x}", entry.map_or(0, |e| e.digest())))?;
        }
        state.journal_frame();
        let status = state.files.journal.status();
        if status.written != written {
            written = status.written;
            if let Some(g) = written {
                say(format!("written {g} {}", status.last_lag.as_micros()))?;
            }
        }
        if let Some(e) = status.error {
            bail!("the journal could not be written: {e}");
        }
        if args.pause_us > 0 {
            std::thread::sleep(Duration::from_micros(rng.random_range(0..=args.pause_us)));
        }
    }
    Ok(())
}

/// The next edit: mostly moves, with variations, comments, NAGs, deletions and promotions among them.
fn edit(state: &AppState, rng: &mut impl Rng, n: u64) -> Vec<Command> {
    let line = &state.doc.line;
    let node = line.current_node();
    let doc = |c: DocCommand| Command::Doc(c);
    let roll = rng.random_range(0..100);
    let legal = line.current().legal_actions();
    if line.moves().len() > 40 {
        // Keep the game short: cut the line somewhere in its second half.
        let nodes = line.line_nodes();
        let at = rng.random_range(nodes.len() / 2..nodes.len());
        return vec![doc(DocCommand::DeleteFrom(nodes[at]))];
    }
    match roll {
        _ if legal.is_empty() => vec![doc(DocCommand::Navigate(Navigate::Start))],
        0..55 => {
            let mv = legal[rng.random_range(0..legal.len())];
            vec![doc(DocCommand::PlayMove(BoardMove::Chess(mv)))]
        }
        // A step or two back: the next move makes a variation.
        55..65 => vec![doc(DocCommand::Navigate(Navigate::To(
            line.cursor().saturating_sub(rng.random_range(1..3)),
        )))],
        65..77 if line.cursor() > 0 => vec![doc(DocCommand::SetComment(node, format!("note {n}")))],
        77..87 if line.cursor() > 0 => vec![doc(DocCommand::SetNags(node, vec![rng.random_range(1..=6)]))],
        87..91 if line.cursor() > 0 => vec![doc(DocCommand::DeleteFrom(node))],
        91..95 if line.cursor() > 0 => vec![doc(DocCommand::MakeMainline(node))],
        _ => vec![doc(DocCommand::Navigate(Navigate::End))],
    }
}
