//! mavboard-tools' integration tests: training labels for Connect Four and Hex.

mod datagen_games;
