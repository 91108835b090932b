//! The keyboard shortcuts in one table, read by the key handler ([`shortcuts_ui`]), the menus (their
//! hover text, [`keys_for`]) and the About dialog's list of keys.

use eframe::egui::{self, Key};

use crate::app::command::{AnalysisCommand, Command, DocCommand, FileCommand, Navigate, ViewCommand};

/// Which modifier keys a shortcut needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifiers {
    /// Neither Ctrl (⌘ on macOS) nor Alt.
    Plain,
    /// Ctrl (⌘ on macOS).
    Command,
    /// Whatever is held.
    Any,
}

/// One keyboard shortcut.
#[derive(Debug, Clone, Copy)]
pub struct Shortcut {
    /// The keys as shown to the user, e.g. `Ctrl+O`.
    pub keys: &'static str,
    /// What it does, in words.
    pub what: &'static str,
    /// The key and modifiers the handler reacts to; `None` for keys handled where they apply (Esc by
    /// the board, Ctrl+V through the paste event).
    pub key: Option<(Key, Modifiers)>,
    /// The command it gives (`None` with `key: None`).
    pub command: Option<fn() -> Command>,
}

/// Every shortcut, in the order the About dialog lists them.
pub const SHORTCUTS: &[Shortcut] = &[
    Shortcut {
        keys: "F",
        what: "flip the board",
        key: Some((Key::F, Modifiers::Plain)),
        command: Some(|| Command::View(ViewCommand::Flip)),
    },
    Shortcut {
        keys: "Left",
        what: "one move back",
        key: Some((Key::ArrowLeft, Modifiers::Any)),
        command: Some(|| Command::Doc(DocCommand::Navigate(Navigate::Back))),
    },
    Shortcut {
        keys: "Right",
        what: "one move forward",
        key: Some((Key::ArrowRight, Modifiers::Any)),
        command: Some(|| Command::Doc(DocCommand::Navigate(Navigate::Forward))),
    },
    Shortcut {
        keys: "Home",
        what: "first position",
        key: Some((Key::Home, Modifiers::Any)),
        command: Some(|| Command::Doc(DocCommand::Navigate(Navigate::Start))),
    },
    Shortcut {
        keys: "End",
        what: "last position",
        key: Some((Key::End, Modifiers::Any)),
        command: Some(|| Command::Doc(DocCommand::Navigate(Navigate::End))),
    },
    Shortcut {
        keys: "Down",
        what: "next variation at a fork",
        key: Some((Key::ArrowDown, Modifiers::Any)),
        command: Some(|| Command::Doc(DocCommand::SwitchVariation { down: true })),
    },
    Shortcut {
        keys: "Up",
        what: "previous variation at a fork",
        key: Some((Key::ArrowUp, Modifiers::Any)),
        command: Some(|| Command::Doc(DocCommand::SwitchVariation { down: false })),
    },
    Shortcut { keys: "Esc", what: "cancel a selection or promotion", key: None, command: None },
    Shortcut {
        keys: "Space",
        what: "start / stop the search",
        key: Some((Key::Space, Modifiers::Plain)),
        command: Some(|| Command::Analysis(AnalysisCommand::ToggleSearch)),
    },
    Shortcut {
        keys: "Ctrl+O",
        what: "open PGN",
        key: Some((Key::O, Modifiers::Command)),
        command: Some(|| Command::File(FileCommand::OpenFileDialog)),
    },
    Shortcut {
        keys: "Ctrl+S",
        what: "save PGN",
        key: Some((Key::S, Modifiers::Command)),
        command: Some(|| Command::File(FileCommand::SaveFileDialog)),
    },
    Shortcut { keys: "Ctrl+V", what: "paste a FEN or PGN (outside text fields)", key: None, command: None },
];

/// The keys of the shortcut that gives `command`, for a menu item's hover text.
pub fn keys_for(command: &Command) -> Option<&'static str> {
    SHORTCUTS.iter().find(|s| s.command.is_some_and(|c| c() == *command)).map(|s| s.keys)
}

fn held(modifiers: Modifiers, held: egui::Modifiers) -> bool {
    match modifiers {
        Modifiers::Plain => !held.command && !held.alt,
        Modifiers::Command => held.command,
        Modifiers::Any => true,
    }
}

/// Keyboard shortcuts, pasted text and dropped files (keys only when no text field has the keyboard).
pub fn shortcuts_ui(ctx: &egui::Context) -> Vec<Command> {
    let mut out = Vec::new();
    let dropped: Vec<std::path::PathBuf> = ctx.input(|i| {
        i.raw
            .dropped_files
            .iter()
            .map(|f| f.path().to_path_buf())
            .filter(|p| !p.as_os_str().is_empty())
            .collect()
    });
    out.extend(dropped.into_iter().map(|p| Command::File(FileCommand::OpenPath(p))));
    if ctx.text_edit_focused() {
        return out;
    }
    ctx.input(|i| {
        for s in SHORTCUTS {
            if let (Some((key, modifiers)), Some(command)) = (s.key, s.command)
                && held(modifiers, i.modifiers)
                && i.key_pressed(key)
            {
                out.push(command());
            }
        }
        for e in &i.events {
            if let egui::Event::Paste(text) = e {
                out.push(Command::Doc(DocCommand::LoadPasted(text.clone())));
            }
        }
    });
    out
}

/// The About dialog's list of keys.
pub fn keys_grid_ui(ui: &mut egui::Ui) {
    egui::Grid::new("keys").num_columns(2).show(ui, |ui| {
        for s in SHORTCUTS {
            ui.monospace(s.keys);
            ui.label(s.what);
            ui.end_row();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_bound_once_and_has_a_command() {
        for (i, a) in SHORTCUTS.iter().enumerate() {
            assert_eq!(a.key.is_some(), a.command.is_some(), "{}", a.keys);
            for b in &SHORTCUTS[i + 1..] {
                assert_ne!(a.keys, b.keys);
                if a.key.is_some() {
                    assert_ne!(a.key, b.key, "{} and {} are the same key", a.keys, b.keys);
                }
            }
        }
    }

    #[test]
    fn menus_find_the_keys_of_a_command() {
        assert_eq!(keys_for(&Command::File(FileCommand::OpenFileDialog)), Some("Ctrl+O"));
        assert_eq!(keys_for(&Command::View(ViewCommand::Flip)), Some("F"));
        assert_eq!(keys_for(&Command::Doc(DocCommand::CopyRecord)), None);
    }

    #[test]
    fn the_handler_reads_the_table() {
        let ctx = egui::Context::default();
        let press = |key, modifiers| egui::Event::Key {
            key,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers,
        };
        let frame = |modifiers, keys: &[Key]| {
            let input = egui::RawInput {
                events: std::iter::once(egui::Event::ModifiersChanged(modifiers))
                    .chain(keys.iter().map(|k| press(*k, modifiers)))
                    .collect(),
                ..Default::default()
            };
            let mut got = Vec::new();
            let mut output = ctx.run_ui(input, |ui| got = shortcuts_ui(ui.ctx()));
            output.textures_delta.clear();
            got
        };
        assert_eq!(frame(egui::Modifiers::NONE, &[Key::F, Key::O]), [Command::View(ViewCommand::Flip)]);
        assert_eq!(
            frame(egui::Modifiers::COMMAND, &[Key::S, Key::Space, Key::ArrowLeft]),
            [Command::Doc(DocCommand::Navigate(Navigate::Back)), Command::File(FileCommand::SaveFileDialog)]
        );
    }
}
