//! `mavboard mav`.

/// Arguments of `mavboard mav`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mavboard mav`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("mavboard mav is not built yet")
}
