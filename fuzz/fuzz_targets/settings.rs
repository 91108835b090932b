//! The settings file: whatever eframe's storage hands back for mavboard's key (RON), or a settings text
//! in JSON. Settings that read give a start-up state, engine settings with a batch of at least one and a
//! timeout above zero, and search parameters that either fail validation with an error or run a search;
//! written and read again they are the same settings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mavboard::app::settings::Settings;
use mavboard::app::state::AppState;
use mavboard::game::chess::ChessState;
use mavboard::inference::material::MaterialEvaluator;
use mavboard::search::mcts::{Mcts, RunLimits};

fn check(settings: Settings) {
    let again: Settings =
        ron::from_str(&ron::to_string(&settings).expect("settings write as RON")).expect("and read back");
    // NaN is not equal to itself: compare the written forms.
    assert_eq!(ron::to_string(&again).ok(), ron::to_string(&settings).ok());
    let config = settings.search.engine_config();
    assert!(config.batch_size >= 1 && !config.eval_timeout.is_zero());
    let _ = settings.search.go_limits();
    for scoring in settings.scoring_rules() {
        let params = settings.search.params(scoring);
        if params.validate().is_ok() {
            let mut mcts = Mcts::new(ChessState::startpos(), 0, params).expect("validated parameters");
            let mut e = MaterialEvaluator::new(1);
            let _ = mcts.run(&mut e, RunLimits { simulations: 16, batch_size: config.batch_size.min(8) });
        }
    }
    let _ = AppState::new(settings);
}

fuzz_target!(|text: &str| {
    if let Ok(settings) = ron::from_str::<Settings>(text) {
        check(settings);
    }
    if let Ok(settings) = serde_json::from_str::<Settings>(text) {
        check(settings);
    }
});
