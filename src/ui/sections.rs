//! The analysis panel's sections, one table: each section's title and the function that draws it. The
//! panel lays them out as tabs and panes ([`super::analysis_panel`]); a new section is one row here.

use eframe::egui;
use serde::{Deserialize, Serialize};

use crate::app::command::Command;
use crate::app::state::AppState;

/// One section of the analysis panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Section {
    /// The action values: every legal move's value under the chosen rules, and its distribution.
    Values,
    /// All moves × buckets, as a heatmap.
    Heatmap,
    /// MAV-MCTS: its settings, counters and root moves.
    Search,
    /// The search tree explorer.
    Tree,
    /// Internal search: the explicit minimax and the model's own trace.
    InternalSearch,
    /// *Inside the model*: what it looks at and how its values form.
    Inside,
    /// The engine and the model package: device, threads, facts.
    Engine,
    /// The UCI engine beside the model.
    Uci,
}

/// What a section draws into: the panel's hovered move (shared by the sections that list moves) and the
/// commands for the end of the frame.
pub struct SectionOutput<'a> {
    /// The move (UCI) the pointer is over in any section, if any.
    pub hovered: &'a mut Option<String>,
    /// Commands the section returns.
    pub commands: &'a mut Vec<Command>,
}

/// A row of the table: a section, its tab title, and how it is drawn.
pub struct SectionRow {
    /// The section.
    pub section: Section,
    /// Its tab title.
    pub title: &'static str,
    /// Draws it.
    pub draw: fn(&mut egui::Ui, &AppState, &mut SectionOutput),
}

/// Every section, in the order the default layout shows them.
pub const SECTIONS: [SectionRow; 8] = [
    SectionRow {
        section: Section::Values,
        title: "Action values",
        draw: |ui, state, out| {
            out.commands.extend(super::values_panel::values_panel_ui(ui, state, out.hovered))
        },
    },
    SectionRow {
        section: Section::Heatmap,
        title: "All moves × buckets",
        draw: |ui, state, out| super::values_panel::buckets_heatmap_ui(ui, state, out.hovered),
    },
    SectionRow {
        section: Section::Search,
        title: "Search (MAV-MCTS)",
        draw: |ui, state, out| {
            out.commands.extend(super::search_panel::search_panel_ui(ui, state, out.hovered))
        },
    },
    SectionRow {
        section: Section::Tree,
        title: "Search tree",
        draw: |ui, state, out| out.commands.extend(super::tree_explorer::tree_explorer_ui(ui, state)),
    },
    SectionRow {
        section: Section::InternalSearch,
        title: "Internal search (minimax)",
        draw: |ui, state, out| {
            out.commands.extend(super::internal_search_panel::internal_search_panel_ui(ui, state));
        },
    },
    SectionRow {
        section: Section::Inside,
        title: "Inside the model",
        draw: |ui, state, out| {
            out.commands.extend(super::inside_panel::inside_panel_ui(
                ui,
                &state.analysis.inside,
                state.settings.scoring,
            ));
        },
    },
    SectionRow {
        section: Section::Engine,
        title: "Engine and model",
        draw: |ui, state, out| out.commands.extend(super::model_panel::model_panel_ui(ui, state)),
    },
    SectionRow {
        section: Section::Uci,
        title: "UCI engine",
        draw: |ui, state, out| out.commands.extend(super::uci_panel::uci_panel_ui(ui, state)),
    },
];

impl Section {
    /// Its row of [`SECTIONS`].
    pub fn row(self) -> &'static SectionRow {
        SECTIONS.iter().find(|r| r.section == self).unwrap_or(&SECTIONS[0])
    }

    /// Its tab title.
    pub fn title(self) -> &'static str {
        self.row().title
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_has_one_row_with_a_title_of_its_own() {
        let sections: std::collections::BTreeSet<Section> = SECTIONS.iter().map(|r| r.section).collect();
        assert_eq!(sections.len(), SECTIONS.len());
        for r in &SECTIONS {
            assert_eq!(r.section.row().title, r.title);
        }
        let titles: std::collections::BTreeSet<&str> = SECTIONS.iter().map(|r| r.title).collect();
        assert_eq!(titles.len(), SECTIONS.len());
    }
}
