//! The *Inside* panel's state: what the model looks at and how its values form, for the board position.
//! When the panel is on, each new position (or model, or head setting) is sent to the inspection worker
//! ([`InspectWorker`], its own thread: a frame never waits for it), which runs the package's inspection
//! graph once as trained and, when heads are scaled, once more with them; the panel reads the answer
//! through the functions here (the best move, the layer where it takes the lead, the change each move
//! sees when heads are switched off).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::Repaint;
use crate::engine::inspection::{InspectJob, InspectRequest, InspectWorker};
use crate::inference::inspect::{HeadScale, Inspection};
use crate::inference::onnx::SessionOptions;
use crate::mav::scoring::Scoring;
use crate::mav::state::MavState;

/// What the user changes in the panel.
#[derive(Debug, Clone, PartialEq)]
pub enum InsideCommand {
    /// Turn inspection on or off.
    Enable(bool),
    /// Show this layer's attention (from 0).
    Layer(usize),
    /// Show this head's attention, or all heads of the layer side by side (`None`).
    Head(Option<usize>),
    /// Look from this token: a board cell (`e4`) or a move (`e2e4`); `None`: the best move.
    Query(Option<String>),
    /// Show the value distributions read after this layer (`None`: the last, the model's output).
    DepthLayer(Option<usize>),
    /// Multiply a head's output by `value` (1 = as trained, 0 = switched off).
    ScaleHead {
        /// The layer, from 0.
        layer: usize,
        /// The head, from 0.
        head: usize,
        /// The multiplier.
        value: f32,
    },
    /// Every head as trained again.
    ResetHeads,
}

/// The newest inspection of the board position.
#[derive(Debug, Clone)]
pub struct InsideView {
    /// The position (its text) inspected.
    pub position: String,
    /// The model as trained.
    pub clean: Inspection,
    /// The model with the head scale, when some head is scaled.
    pub scaled: Option<Inspection>,
}

impl InsideView {
    /// The pass the panel shows: the scaled one when there is one.
    pub fn shown(&self) -> &Inspection {
        self.scaled.as_ref().unwrap_or(&self.clean)
    }
}

/// What was last asked of the worker.
#[derive(Debug, Clone, PartialEq)]
struct Asked {
    position: String,
    dir: PathBuf,
    scaled: Vec<(usize, usize, f32)>,
    /// The query when it is a legal move: an action-value model reads one sequence per move, and the
    /// attention kept is this move's.
    focus: Option<String>,
}

/// The *Inside* panel's state (runtime, not saved).
#[derive(Debug, Clone, Default)]
pub struct InsideState {
    /// Inspection is on.
    pub enabled: bool,
    /// The layer whose attention is shown.
    pub layer: usize,
    /// The head shown, or all heads of the layer.
    pub head: Option<usize>,
    /// The query token: a cell name or a move; `None`: the best move.
    pub query: Option<String>,
    /// The layer whose value distributions are shown; `None`: the last.
    pub depth_layer: Option<usize>,
    /// The heads' multipliers (`None`: as trained).
    pub scale: Option<HeadScale>,
    /// The newest answer for the board position.
    pub view: Option<InsideView>,
    /// Why the position could not be inspected.
    pub error: Option<String>,
    /// A request is out.
    pub running: bool,
    worker: Option<Arc<InspectWorker>>,
    next_tag: u64,
    waiting: Option<(u64, String)>,
    asked: Option<Asked>,
}

impl InsideState {
    /// Applies a panel command.
    pub fn apply(&mut self, command: InsideCommand) {
        match command {
            InsideCommand::Enable(on) => {
                self.enabled = on;
                if !on {
                    self.asked = None;
                }
            }
            InsideCommand::Layer(l) => self.layer = l,
            InsideCommand::Head(h) => self.head = h,
            InsideCommand::Query(q) => self.query = q,
            InsideCommand::DepthLayer(l) => self.depth_layer = l,
            InsideCommand::ScaleHead { layer, head, value } => {
                let Some(view) = &self.view else { return };
                let (layers, heads) = (view.clean.num_layers(), view.clean.num_heads());
                let scale = self.scale.get_or_insert_with(|| HeadScale::ones(layers, heads));
                if scale.set(layer, head, value).is_err() {
                    self.error = Some(format!(
                        "layer {layer} head {head} is outside the model's {layers} layers × {heads} heads"
                    ));
                }
                if scale.changed().is_empty() {
                    self.scale = None;
                }
            }
            InsideCommand::ResetHeads => self.scale = None,
        }
    }

    /// The heads scaled away from 1: (layer, head, multiplier).
    pub fn scaled_heads(&self) -> Vec<(usize, usize, f32)> {
        self.scale.as_ref().map(HeadScale::changed).unwrap_or_default()
    }

    /// Once per frame: takes the worker's answer, and asks again when the position, the model (`model`:
    /// its package folder and session options) or the head scale changed.
    pub fn frame<S: MavState + Send + 'static>(
        &mut self,
        here: &S,
        model: Option<(&Path, &SessionOptions)>,
        repaint: &Repaint,
    ) {
        self.poll();
        if !self.enabled {
            return;
        }
        let Some((dir, options)) = model else {
            self.view = None;
            self.asked = None;
            self.error = Some(
                "No model is loaded: load a package with an inspection graph (mav-encoder or action-value)."
                    .into(),
            );
            return;
        };
        let focus =
            self.query.clone().filter(|q| here.legal_actions().iter().any(|a| here.action_to_text(*a) == *q));
        let asked =
            Asked { position: here.to_text(), dir: dir.to_path_buf(), scaled: self.scaled_heads(), focus };
        if self.asked.as_ref() == Some(&asked) {
            return;
        }
        if self.view.as_ref().is_some_and(|v| v.position != asked.position) {
            self.view = None;
        }
        self.error = None;
        let worker = match &self.worker {
            Some(w) => Arc::clone(w),
            None => match InspectWorker::start(repaint.clone()) {
                Ok(w) => Arc::clone(self.worker.insert(Arc::new(w))),
                Err(e) => {
                    self.error = Some(format!("The inspection thread could not start: {e}"));
                    return;
                }
            },
        };
        let state = here.clone();
        let scale = self.scale.clone();
        let focus = asked.focus.clone();
        let job: InspectJob = Box::new(move |inspector| {
            let dims = (inspector.num_layers(), inspector.num_heads());
            let ones = HeadScale::ones(dims.0, dims.1);
            // As trained, then with the heads scaled (when the scale fits this model).
            let scaled = scale.filter(|s| (s.layers(), s.heads()) == dims);
            let mut passes = Vec::new();
            for scale in std::iter::once(ones).chain(scaled) {
                passes.push(match &focus {
                    Some(m) => inspector.inspect_move(&state, &scale, m)?,
                    None => inspector.inspect(&state, &scale)?,
                });
            }
            Ok(passes)
        });
        self.next_tag += 1;
        let request =
            InspectRequest { tag: self.next_tag, dir: dir.to_path_buf(), options: options.clone(), job };
        if let Err(e) = worker.send(request) {
            self.worker = None;
            self.error = Some(format!("{e}; turn Inside off and on again"));
            return;
        }
        self.waiting = Some((self.next_tag, asked.position.clone()));
        self.asked = Some(asked);
        self.running = true;
    }

    /// Takes the answer to the newest request (older ones are dropped).
    fn poll(&mut self) {
        let Some(worker) = self.worker.clone() else { return };
        while let Some(answer) = worker.try_recv() {
            let Some((tag, position)) = self.waiting.clone() else { continue };
            if answer.tag != tag {
                continue;
            }
            self.waiting = None;
            self.running = false;
            match answer.result {
                Ok(mut passes) if !passes.is_empty() => {
                    let clean = passes.remove(0);
                    if self
                        .scale
                        .as_ref()
                        .is_some_and(|s| (s.layers(), s.heads()) != (clean.num_layers(), clean.num_heads()))
                    {
                        // Another model: its heads are not the ones that were scaled.
                        self.scale = None;
                    }
                    self.layer = self.layer.min(clean.num_layers().saturating_sub(1));
                    self.head = self.head.filter(|&h| h < clean.num_heads());
                    self.view = Some(InsideView { position, clean, scaled: passes.pop() });
                }
                Ok(_) => self.error = Some("the inspection graph gave no answer".into()),
                Err(e) => {
                    self.view = None;
                    self.error = Some(e.to_string());
                }
            }
        }
    }
}

/// The index of the move the model values most (its output), if any.
pub fn best_move(inspection: &Inspection, scoring: Scoring) -> Option<usize> {
    let values: Vec<f64> = inspection.moves.iter().map(|m| scoring.value(&m.value)).collect();
    (0..values.len()).max_by(|&a, &b| values[a].total_cmp(&values[b]).then(b.cmp(&a)))
}

/// The first layer from which the final best move is valued highest at every later layer (ties count as
/// leading); `None` when there is no move.
pub fn lead_layer(inspection: &Inspection, scoring: Scoring) -> Option<usize> {
    let best = best_move(inspection, scoring)?;
    let layers = inspection.moves[best].layers.len();
    let leads = |l: usize| {
        let v = scoring.value(&inspection.moves[best].layers[l]);
        inspection.moves.iter().all(|m| m.layers.get(l).is_none_or(|d| scoring.value(d) <= v))
    };
    let mut first = layers;
    while first > 0 && leads(first - 1) {
        first -= 1;
    }
    Some(first.min(layers.saturating_sub(1)))
}

/// The query token for `query` (a cell name or a move; `None`: the best move), if the input has it.
pub fn query_token(inspection: &Inspection, query: Option<&str>, scoring: Scoring) -> Option<usize> {
    match query {
        Some(q) => {
            inspection.cell_token(q).or_else(|| inspection.move_index(q).map(|i| inspection.moves[i].token))
        }
        None => best_move(inspection, scoring).map(|i| inspection.moves[i].token),
    }
}

/// One move's value as trained and with the heads scaled.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadEffect {
    /// The move.
    pub text: String,
    /// Its value as trained.
    pub clean: f64,
    /// Its value with the heads scaled.
    pub now: f64,
}

impl HeadEffect {
    /// What the scaling changed.
    pub fn delta(&self) -> f64 {
        self.now - self.clean
    }
}

/// Every move's value as trained and under the scale, the moves that lost most first (what the scaled
/// heads were holding up).
pub fn head_effects(view: &InsideView, scoring: Scoring) -> Vec<HeadEffect> {
    let Some(scaled) = &view.scaled else { return Vec::new() };
    let mut rows: Vec<HeadEffect> = view
        .clean
        .moves
        .iter()
        .filter_map(|m| {
            let now = scaled.moves.iter().find(|s| s.text == m.text)?;
            Some(HeadEffect {
                text: m.text.clone(),
                clean: scoring.value(&m.value),
                now: scoring.value(&now.value),
            })
        })
        .collect();
    rows.sort_by(|a, b| a.delta().total_cmp(&b.delta()).then_with(|| a.text.cmp(&b.text)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::game::chess::ChessState;
    use crate::model::package::default_package_dir;
    use std::time::{Duration, Instant};

    fn inspected(inside: &mut InsideState, here: &ChessState, dir: &Path) {
        let options = SessionOptions::default();
        let repaint: Repaint = Arc::new(|| {});
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            inside.frame(here, Some((dir, &options)), &repaint);
            if !inside.running && (inside.view.is_some() || inside.error.is_some()) {
                return;
            }
            assert!(Instant::now() < deadline, "no inspection: {inside:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn inspects_the_board_position_and_shows_what_a_switched_off_head_changes() {
        let dir = default_package_dir().expect("shipped model");
        let mut inside = InsideState::default();
        let here = ChessState::startpos();
        inside.frame(&here, Some((&dir, &SessionOptions::default())), &(Arc::new(|| {}) as Repaint));
        assert!(!inside.running && inside.view.is_none(), "nothing is asked while the panel is off");

        inside.apply(InsideCommand::Enable(true));
        inspected(&mut inside, &here, &dir);
        let view = inside.view.clone().expect("inspected");
        assert_eq!(view.position, here.to_text());
        assert!(view.scaled.is_none());
        let clean = &view.clean;
        assert_eq!(clean.moves.len(), 20);
        let best = best_move(clean, Scoring::Mean).expect("a best move");
        let lead = lead_layer(clean, Scoring::Mean).expect("a lead layer");
        assert!(lead < clean.num_layers());
        let last = clean.moves[best].layers.len() - 1;
        // From the lead layer on, the best move is valued highest at every depth.
        for l in lead..=last {
            let v = Scoring::Mean.value(&clean.moves[best].layers[l]);
            assert!(clean.moves.iter().all(|m| Scoring::Mean.value(&m.layers[l]) <= v + 1e-12), "layer {l}");
        }
        assert_eq!(query_token(clean, None, Scoring::Mean), Some(clean.moves[best].token));
        assert!(query_token(clean, Some("e2"), Scoring::Mean).is_some());
        assert!(query_token(clean, Some("e2e4"), Scoring::Mean).is_some());
        assert_eq!(query_token(clean, Some("z9"), Scoring::Mean), None);

        // Every head of the first layer off: a second pass, and the values move.
        for head in 0..clean.num_heads() {
            inside.apply(InsideCommand::ScaleHead { layer: 0, head, value: 0.0 });
        }
        assert_eq!(inside.scaled_heads().len(), clean.num_heads());
        inspected(&mut inside, &here, &dir);
        let view = inside.view.clone().expect("inspected again");
        let effects = head_effects(&view, Scoring::Mean);
        assert_eq!(effects.len(), 20);
        assert!(effects.iter().any(|e| e.delta().abs() > 1e-6), "removing a layer's heads moves values");
        assert!(effects.windows(2).all(|w| w[0].delta() <= w[1].delta()), "most hurt first");

        // Back to 1: the scale is gone and the next answer has one pass.
        inside.apply(InsideCommand::ResetHeads);
        assert!(inside.scaled_heads().is_empty());
        inspected(&mut inside, &here, &dir);
        assert!(inside.view.as_ref().is_some_and(|v| v.scaled.is_none()));
    }

    #[test]
    fn a_folder_without_an_inspection_graph_says_so() {
        let dir = std::env::temp_dir().join(format!("mavboard-inside-{}", std::process::id()));
        let mut inside = InsideState::default();
        inside.apply(InsideCommand::Enable(true));
        inspected(&mut inside, &ChessState::startpos(), &dir);
        assert!(inside.view.is_none());
        assert!(inside.error.as_deref().is_some_and(|e| !e.is_empty()), "{inside:?}");
        inside.frame(&ChessState::startpos(), None, &(Arc::new(|| {}) as Repaint));
        assert!(inside.error.as_deref().is_some_and(|e| e.contains("No model")));
    }
}
