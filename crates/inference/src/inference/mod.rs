//! Inference backends: the engine's only way to see a model.
//!
//! [`ort_lib`] finds and loads ONNX Runtime, [`device`] chooses the execution provider. Search never sees a
//! tensor: it talks to an `Evaluator` with requests and results. Evaluators without a model:
//! [`material::MaterialEvaluator`] (chess by material, `mavboard uci --mock`) and the test evaluators in
//! [`mock`].

pub mod action_value;
pub mod answers;
pub mod backend;
pub mod behavioral_cloning;
pub mod cache;
pub mod complete;
pub mod completer;
pub mod continuer;
pub mod device;
pub mod encoder;
pub mod evaluator;
pub mod inspect;
pub mod lc0;
pub mod lm;
pub mod load;
pub mod material;
pub mod material_net;
pub mod mock;

pub use load::{LoadError, LoadedModel, load_evaluator, load_evaluator_for};
pub mod onnx;
pub mod ort_lib;
pub mod policy_value;
pub mod remote;
pub mod remote_error;
pub mod screen;
pub mod state_value;
mod synthetic;
pub mod thread_plan;
