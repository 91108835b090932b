//! The analysis panel's layout: its sections ([`super::sections`]) as tabs in panes that the user drags,
//! splits and resizes (egui_tiles). The arrangement is kept in the settings as egui_tiles' own JSON (text
//! the app keeps without reading it), so it comes back at the next start; *View → Reset analysis panel
//! layout* brings back the default, where the values, the search and *Inside the model* are all in view on
//! a laptop screen and each pane scrolls on its own.

use std::collections::BTreeMap;

use eframe::egui;
use egui_tiles::{
    Behavior, EditAction, Linear, LinearDir, SimplificationOptions, Tile, TileId, Tiles, Tree, UiResponse,
};

use super::sections::{SECTIONS, Section, SectionOutput};
use crate::app::command::{Command, ViewCommand};
use crate::app::state::AppState;

/// The default layout: three rows of tabs — the values (with the heatmap and the engine's facts), the
/// search (with its tree and the UCI engine), and *Inside the model* (with internal search).
pub fn default_tree() -> Tree<Section> {
    let mut tiles = Tiles::default();
    let mut tabs = |sections: &[Section]| {
        let panes = sections.iter().map(|&s| tiles.insert_pane(s)).collect();
        tiles.insert_tab_tile(panes)
    };
    // Each row's titles fit the panel's default width, so no tab starts hidden behind the tab bar's arrows.
    let rows = [
        (tabs(&[Section::Values, Section::Heatmap, Section::Engine]), 0.40),
        (tabs(&[Section::Search, Section::Tree, Section::Uci]), 0.32),
        (tabs(&[Section::Inside, Section::InternalSearch]), 0.28),
    ];
    let mut column = Linear::new(LinearDir::Vertical, rows.iter().map(|r| r.0).collect());
    for (id, share) in rows {
        column.shares.set_share(id, share);
    }
    let root = tiles.insert_container(column);
    Tree::new(egui::Id::unique("analysis_panes"), root, tiles)
}

/// Why a saved panel layout is not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The text is not a layout.
    #[error("unreadable layout: {0}")]
    Unreadable(String),
    /// A section is missing or shown twice.
    #[error("the layout does not hold the section {0} exactly once")]
    Section(&'static str),
}

/// The layout in `text` (the settings), checked to hold every section exactly once; else why not.
pub fn tree_from_text(text: &str) -> Result<Tree<Section>, LayoutError> {
    let tree: Tree<Section> =
        serde_json::from_str(text).map_err(|e| LayoutError::Unreadable(e.to_string()))?;
    let mut count: BTreeMap<Section, usize> = BTreeMap::new();
    for tile in tree.tiles.tiles() {
        if let Tile::Pane(s) = tile {
            *count.entry(*s).or_default() += 1;
        }
    }
    match SECTIONS.iter().find(|r| count.get(&r.section) != Some(&1)) {
        Some(r) => Err(LayoutError::Section(r.title)),
        None => Ok(tree),
    }
}

/// The panel's tree of tabs and panes, and the settings text it was built from.
pub struct Panes {
    tree: Tree<Section>,
    /// `settings.panel_layout` when the tree was built or last written (`None`: not built yet).
    built_from: Option<Option<String>>,
}

impl Default for Panes {
    fn default() -> Panes {
        Panes { tree: default_tree(), built_from: None }
    }
}

impl Panes {
    /// Whether the layout shows `section`'s pane now (its tab is the active one wherever it sits).
    pub fn is_visible(&self, section: Section) -> bool {
        self.tree
            .active_tiles()
            .iter()
            .any(|id| matches!(self.tree.tiles.get(*id), Some(Tile::Pane(s)) if *s == section))
    }

    /// Draws the sections in their panes; the user's changes to the layout come back as a
    /// [`ViewCommand::SetPanelLayout`], so the settings keep them.
    pub fn ui(&mut self, ui: &mut egui::Ui, state: &AppState, out: &mut SectionOutput) {
        let wanted = &state.settings.panel_layout;
        if self.built_from.as_ref() != Some(wanted) {
            self.tree = match wanted.as_deref().map(tree_from_text) {
                None => default_tree(),
                Some(Ok(tree)) => tree,
                Some(Err(e)) => {
                    tracing::warn!("the analysis panel's saved layout is not used ({e}); the default is");
                    default_tree()
                }
            };
            self.built_from = Some(wanted.clone());
        }
        let mut behavior = PaneBehavior { state, out, edited: false, tab_selected: false };
        self.tree.ui(&mut behavior, ui);
        if behavior.tab_selected {
            // The pane of the chosen tab is drawn at once, not a frame later: egui runs this frame again.
            ui.ctx().request_discard("a tab of the analysis panel was chosen");
        }
        if behavior.edited
            && let Ok(text) = serde_json::to_string(&self.tree)
            && self.built_from.as_ref().and_then(Option::as_ref) != Some(&text)
        {
            self.built_from = Some(Some(text.clone()));
            out.commands.push(Command::View(ViewCommand::SetPanelLayout(Some(text))));
        }
    }
}

/// How egui_tiles draws a section and tells of edits.
struct PaneBehavior<'a, 'b> {
    state: &'a AppState,
    out: &'a mut SectionOutput<'b>,
    /// The user changed the layout this frame (moved, resized or selected a tab).
    edited: bool,
    /// The user chose a tab this frame.
    tab_selected: bool,
}

impl Behavior<Section> for PaneBehavior<'_, '_> {
    fn pane_ui(&mut self, ui: &mut egui::Ui, _tile_id: TileId, pane: &mut Section) -> UiResponse {
        let row = pane.row();
        egui::ScrollArea::vertical().id_salt(("analysis_pane", *pane)).auto_shrink([false, false]).show(
            ui,
            |ui| {
                egui::Frame::new().inner_margin(egui::Margin::symmetric(6, 4)).show(ui, |ui| {
                    (row.draw)(ui, self.state, self.out);
                });
            },
        );
        UiResponse::None
    }

    fn tab_title_for_pane(&mut self, pane: &Section) -> egui::WidgetText {
        pane.title().into()
    }

    fn on_edit(&mut self, edit_action: EditAction) {
        self.edited = true;
        self.tab_selected |= edit_action == EditAction::TabSelected;
    }

    fn simplification_options(&self) -> SimplificationOptions {
        SimplificationOptions { all_panes_must_have_tabs: true, ..SimplificationOptions::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_layout_holds_every_section_once_and_reads_back_from_its_text() {
        let text = serde_json::to_string(&default_tree()).expect("serializes");
        let tree = tree_from_text(&text).expect("reads back");
        assert_eq!(tree.tiles.tiles().filter(|t| matches!(t, Tile::Pane(_))).count(), SECTIONS.len());
    }

    #[test]
    fn a_layout_missing_a_section_or_garbled_is_refused_with_the_reason() {
        let mut tree = default_tree();
        let inside =
            tree.tiles.iter().find(|(_, t)| matches!(t, Tile::Pane(Section::Inside))).map(|(id, _)| *id);
        tree.tiles.remove(inside.expect("the default has Inside"));
        let text = serde_json::to_string(&tree).expect("serializes");
        let e = tree_from_text(&text).expect_err("refused");
        assert_eq!(e, LayoutError::Section("Inside the model"));
        assert!(matches!(tree_from_text("{not json"), Err(LayoutError::Unreadable(_))));
    }
}
