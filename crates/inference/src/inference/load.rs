//! Opening a model package as an [`Evaluator`], whatever its format.

use std::path::Path;

use super::backend::TensorBackend;
use super::device::DeviceStatus;
use super::encoder::EncoderEvaluator;
use super::evaluator::Evaluator;
use super::onnx::OnnxBackend;
use super::onnx::session::{SessionError, SessionOptions};
use super::remote::{RemoteBackend, RemoteError};
use super::screen::game_names;
use crate::game::GameKind;
use crate::game::chess::ChessState;
use crate::mav::state::MavState;
use crate::model::{ModelError, ModelFormat, ModelPackage};

/// Why a package cannot be opened as an evaluator.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoadError {
    /// The package or its session.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The package itself.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A remote package's server could not be used (unreachable, not ready, a different model).
    #[error("remote model of {dir}: {error}", dir = .dir.display())]
    Remote {
        /// The package's folder.
        dir: std::path::PathBuf,
        /// What went wrong (in the message, so not a separate error source).
        error: Box<RemoteError>,
    },
    /// The package was not trained on the game it was asked to play.
    #[error(
        "the model in {dir} was not trained on {game}: its mav.json lists {games} only; open a package \
         whose games include {game}"
    )]
    WrongGame {
        /// The package's folder.
        dir: std::path::PathBuf,
        /// The game asked for.
        game: &'static str,
        /// The games the package lists (comma-separated).
        games: String,
    },
    /// The package's format cannot evaluate this game (an action-value package is chess-only).
    #[error("a {format} package evaluates chess positions only, not {game}")]
    FormatNotForGame {
        /// The package's format.
        format: &'static str,
        /// The game asked for.
        game: &'static str,
    },
}

/// Opens the package in `dir` and checks at load time that its mav.json `games` lists at least one of
/// `accepted` (the first is named in the error).
pub(crate) fn open_for(dir: &Path, accepted: &[GameKind]) -> Result<ModelPackage, LoadError> {
    let package = ModelPackage::open(dir)?;
    if accepted.iter().any(|g| package.manifest.games.contains(g)) {
        return Ok(package);
    }
    Err(LoadError::WrongGame {
        dir: dir.to_path_buf(),
        game: accepted.first().map_or("this game", |g| g.name()),
        games: game_names(&package.manifest.games),
    })
}

/// The backend of a one-pass package: its server when mav.json has a `remote` section, else its model.onnx
/// in an ONNX Runtime session.
fn open_backend(
    package: &ModelPackage,
    options: &SessionOptions,
) -> Result<Box<dyn TensorBackend>, LoadError> {
    if package.manifest.remote.is_some() {
        let remote = RemoteBackend::connect(package, options.device)
            .map_err(|e| LoadError::Remote { dir: package.dir.clone(), error: Box::new(e) })?;
        return Ok(Box::new(remote));
    }
    Ok(OnnxBackend::boxed(package, options)?)
}

/// Opens an evaluator of `S` positions on an opened package. An `action-value` package is chess-only: it
/// opens for the games of [`super::action_value::GAMES`] and is refused for any other game (its evaluator
/// is generic, and screens each request's game too). A package with a mav.json `remote`
/// section runs on its server (mav-encoder and action-value over the Open Inference Protocol, mav-lm over
/// the OpenAI completions API).
pub(crate) fn build<S: MavState>(
    package: &ModelPackage,
    options: &SessionOptions,
    game: GameKind,
) -> Result<(Box<dyn Evaluator<S> + Send>, DeviceStatus), LoadError> {
    match package.manifest.format {
        ModelFormat::MavEncoder => {
            let e = EncoderEvaluator::with_backend(package, open_backend(package, options)?)?;
            let status = e.status().clone();
            Ok((Box::new(e), status))
        }
        ModelFormat::MavLm => {
            let e = super::lm::MavLmEvaluator::load(package, options)?;
            let status = e.status().clone();
            Ok((Box::new(e), status))
        }
        ModelFormat::ActionValue => {
            for_games(package, &super::action_value::GAMES, game)?;
            let e = if package.manifest.remote.is_some() {
                let backend = open_backend(package, options)?;
                super::action_value::ActionValueEvaluator::with_backend(package, || Ok(backend))?
            } else {
                super::action_value::ActionValueEvaluator::open(package, options)?
            };
            let status = e.status().clone();
            Ok((Box::new(e), status))
        }
        ModelFormat::StateValue => {
            for_games(package, &super::state_value::GAMES, game)?;
            local_only(package, options)?;
            let e = super::state_value::StateValueEvaluator::open(package, options)?;
            let status = e.status().clone();
            Ok((Box::new(e), status))
        }
        ModelFormat::BehavioralCloning => {
            for_games(package, &super::behavioral_cloning::GAMES, game)?;
            local_only(package, options)?;
            let e = super::behavioral_cloning::PolicyEvaluator::open(package, options)?;
            let status = e.status().clone();
            Ok((Box::new(e), status))
        }
        ModelFormat::Lc0 => {
            for_games(package, &super::lc0::GAMES, game)?;
            local_only(package, options)?;
            let e = super::lc0::Lc0Evaluator::open(package, options)?;
            let status = e.status().clone();
            Ok((Box::new(e), status))
        }
    }
}

/// Refuses `game` for a package whose format serves only `games` (the searchless formats: chess).
fn for_games(package: &ModelPackage, games: &[GameKind], game: GameKind) -> Result<(), LoadError> {
    if games.contains(&game) {
        return Ok(());
    }
    Err(LoadError::FormatNotForGame { format: package.manifest.format.name(), game: game.name() })
}

/// Refuses a `remote` section for a format no server runs, with the remote module's own message.
fn local_only(package: &ModelPackage, options: &SessionOptions) -> Result<(), LoadError> {
    if package.manifest.remote.is_some() {
        open_backend(package, options)?;
    }
    Ok(())
}

/// A model package opened as an evaluator of `S` positions (chess unless said otherwise): what every
/// loader returns.
pub struct LoadedModel<S = ChessState> {
    /// The evaluator: the only way search and the app see the model.
    pub evaluator: Box<dyn Evaluator<S> + Send>,
    /// The package it was opened from.
    pub package: ModelPackage,
    /// Where its session runs: the provider actually in use and any fallback notice.
    pub device: DeviceStatus,
}

impl<S> std::fmt::Debug for LoadedModel<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedModel")
            .field("package", &self.package.dir)
            .field("device", &self.device)
            .finish()
    }
}

/// Opens the package in `dir` as an evaluator of `game` positions held in `S` (e.g.
/// `load_evaluator_for::<ConnectFourState>(dir, options, GameKind::ConnectFour)`). A package whose mav.json
/// `games` does not list `game` is refused here, before any session is built, with an error naming the
/// game and the package's games; the evaluators check every request's game again.
pub fn load_evaluator_for<S: MavState>(
    dir: &Path,
    options: &SessionOptions,
    game: GameKind,
) -> Result<LoadedModel<S>, LoadError> {
    let package = open_for(dir, &[game])?;
    let (evaluator, device) = build::<S>(&package, options, game)?;
    Ok(LoadedModel { evaluator, package, device })
}

/// Opens an already opened package as an evaluator of chess positions, with its session's device status.
/// For a package changed in memory after [`ModelPackage::open`], e.g. a remote package pointed at another
/// endpoint or given another `max_in_flight` (the benchmarks do that); the package must list chess or
/// Chess960.
pub fn load_package_evaluator(
    package: &ModelPackage,
    options: &SessionOptions,
) -> Result<LoadedModel, LoadError> {
    if !package.manifest.games.iter().any(|g| matches!(g, GameKind::Chess | GameKind::Chess960)) {
        return Err(LoadError::WrongGame {
            dir: package.dir.clone(),
            game: GameKind::Chess.name(),
            games: game_names(&package.manifest.games),
        });
    }
    let (evaluator, device) = build::<ChessState>(package, options, GameKind::Chess)?;
    Ok(LoadedModel { evaluator, package: package.clone(), device })
}

/// Opens the package in `dir` as an evaluator of chess positions, with the device status of its session
/// (the provider actually in use and any fallback notice). The package must list chess or Chess960.
pub fn load_evaluator(dir: &Path, options: &SessionOptions) -> Result<LoadedModel, LoadError> {
    let package = open_for(dir, &[GameKind::Chess, GameKind::Chess960])?;
    let (evaluator, device) = build::<ChessState>(&package, options, GameKind::Chess)?;
    Ok(LoadedModel { evaluator, package, device })
}
