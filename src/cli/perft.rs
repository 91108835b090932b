//! `mavboard perft`.

/// Arguments of `mavboard perft`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mavboard perft`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("mavboard perft is not built yet")
}
