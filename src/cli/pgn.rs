//! `mavboard pgn`.

/// Arguments of `mavboard pgn`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mavboard pgn`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("mavboard pgn is not built yet")
}
