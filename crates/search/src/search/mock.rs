//! The old home of the test evaluators, kept as re-exports for the app's tests: they live in
//! [`crate::inference::mock`] and [`crate::inference::material`] now.

pub use crate::inference::material::{MaterialEvaluator, material_balance};
pub use crate::inference::mock::{CentreEvaluator, HashEvaluator, peaked_distribution};
