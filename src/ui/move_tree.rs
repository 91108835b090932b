//! The game tree as Lichess shows it: the main line as flowing text, each variation of a main-line move in
//! its own indented block, deeper variations inline in parentheses; comments and NAGs beside their moves.
//! Click a move to go there; right-click for promote, delete, comment and NAGs.

use eframe::egui::{self, RichText};

use crate::app::command::Command;
use crate::app::command::{DocCommand, ViewCommand};
use crate::app::game::first_ply;
use crate::app::state::{AppState, Dialog};
use crate::pgn::{GameTree, NodeId};

/// One piece of the move text.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A move number (`12.` or `12...`).
    Number(String),
    /// A move: its node, SAN and NAG glyphs.
    Move {
        /// The node.
        id: NodeId,
        /// The SAN.
        san: String,
        /// NAGs as glyphs (`!`, `?!`, `$14`).
        nags: String,
    },
    /// A comment's text.
    Comment(String),
    /// A variation starts.
    Open,
    /// A variation ends.
    Close,
}

/// A run of items drawn as one wrapped paragraph, indented by `indent` levels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    /// Indentation level (0 for the main line).
    pub indent: usize,
    /// The items.
    pub items: Vec<Item>,
}

/// A NAG as its usual glyph.
pub fn nag_glyph(nag: u8) -> String {
    match nag {
        1 => "!".into(),
        2 => "?".into(),
        3 => "!!".into(),
        4 => "??".into(),
        5 => "!?".into(),
        6 => "?!".into(),
        n => format!(" ${n}"),
    }
}

/// Lays the tree out in blocks.
pub fn layout(tree: &GameTree) -> Vec<Block> {
    let mut blocks = vec![Block::default()];
    if let Some(root) = tree.node(NodeId::ROOT) {
        for c in root.comments_after() {
            push(&mut blocks, Item::Comment(c.text()));
        }
    }
    walk(tree, NodeId::ROOT, first_ply(tree.start()), 0, true, &mut blocks);
    blocks.retain(|b| !b.items.is_empty());
    blocks
}

fn push(blocks: &mut [Block], item: Item) {
    if let Some(b) = blocks.last_mut() {
        b.items.push(item);
    }
}

/// Emits `id` (a move at `ply`), numbered when White moves or when `number` asks; returns whether the
/// next move needs its number (after a comment).
fn emit(tree: &GameTree, id: NodeId, ply: u32, number: bool, blocks: &mut [Block]) -> bool {
    let Some(node) = tree.node(id) else { return false };
    for c in node.comments_before() {
        push(blocks, Item::Comment(c.text()));
    }
    let full = ply.div_ceil(2);
    if ply % 2 == 1 {
        push(blocks, Item::Number(format!("{full}.")));
    } else if number || !node.comments_before().is_empty() {
        push(blocks, Item::Number(format!("{full}...")));
    }
    let nags: String = node.nags().iter().map(|n| nag_glyph(n.0)).collect();
    push(blocks, Item::Move { id, san: node.san_text().unwrap_or_else(|| "--".into()), nags });
    for c in node.comments_after() {
        push(blocks, Item::Comment(c.text()));
    }
    !node.comments_after().is_empty()
}

/// Emits the continuation after `parent` (whose children move at `ply`); `number` says whether its first
/// move needs a number even when Black plays it.
fn walk(
    tree: &GameTree,
    mut parent: NodeId,
    mut ply: u32,
    depth: usize,
    mut number: bool,
    blocks: &mut Vec<Block>,
) {
    loop {
        let Some(children) = tree.node(parent).map(|n| n.children().to_vec()) else { return };
        let Some((&main, variations)) = children.split_first() else { return };
        number = emit(tree, main, ply, number, blocks);
        if !variations.is_empty() {
            for &v in variations {
                if depth == 0 {
                    blocks.push(Block { indent: 1, items: Vec::new() });
                }
                push(blocks, Item::Open);
                let after = emit(tree, v, ply, true, blocks);
                walk(tree, v, ply + 1, depth + 1, after, blocks);
                push(blocks, Item::Close);
            }
            if depth == 0 {
                blocks.push(Block { indent: 0, items: Vec::new() });
            }
            number = true;
        }
        parent = main;
        ply += 1;
    }
}

fn move_menu_ui(ui: &mut egui::Ui, id: NodeId, out: &mut Vec<Command>) {
    if ui.button("Promote variation").clicked() {
        out.push(Command::Doc(DocCommand::PromoteVariation(id)));
    }
    if ui.button("Make main line").clicked() {
        out.push(Command::Doc(DocCommand::MakeMainline(id)));
    }
    if ui.button("Delete from here").clicked() {
        out.push(Command::Doc(DocCommand::DeleteFrom(id)));
    }
    ui.separator();
    if ui.button("Comment…").clicked() {
        out.push(Command::Doc(DocCommand::SelectNode(id)));
        out.push(Command::View(ViewCommand::ShowDialog(Some(Dialog::Comment(id)))));
    }
    ui.horizontal(|ui| {
        for nag in 1..=6u8 {
            if ui.button(nag_glyph(nag)).clicked() {
                out.push(Command::Doc(DocCommand::SetNags(id, vec![nag])));
            }
        }
        if ui.button("clear").on_hover_text("Remove the move's annotation glyphs").clicked() {
            out.push(Command::Doc(DocCommand::SetNags(id, Vec::new())));
        }
    });
}

/// The move tree.
pub fn move_tree_ui(ui: &mut egui::Ui, state: &AppState) -> Vec<Command> {
    let mut out = Vec::new();
    let tree = state.doc.line.tree();
    let current = state.doc.line.current_node();
    let on_line: std::collections::HashSet<NodeId> = state.doc.line.line_nodes().iter().copied().collect();
    // The review's classes, until they are written into the game as NAGs.
    let reviewed =
        crate::app::game_review::for_doc(state.analysis.game_review.as_ref(), state.doc.line.stamp())
            .filter(|r| !r.annotated);
    for block in layout(tree) {
        ui.horizontal_wrapped(|ui| {
            ui.spacing_mut().item_spacing.x = 4.0;
            if block.indent > 0 {
                ui.add_space(14.0 * block.indent as f32);
            }
            for item in &block.items {
                match item {
                    Item::Number(n) => {
                        ui.label(RichText::new(n).weak());
                    }
                    Item::Move { id, san, nags } => {
                        let mut text = RichText::new(format!("{san}{nags}"));
                        if block.indent == 0 || on_line.contains(id) {
                            text = text.strong();
                        }
                        let r = ui.selectable_label(*id == current, text);
                        if r.clicked() {
                            out.push(Command::Doc(DocCommand::SelectNode(*id)));
                        }
                        r.context_menu(|ui| move_menu_ui(ui, *id, &mut out));
                        if let Some((glyph, class)) = reviewed
                            .filter(|_| nags.is_empty())
                            .and_then(|r| r.class_of(*id))
                            .and_then(|c| Some((c.nag().map(|n| nag_glyph(n.0))?, c)))
                        {
                            ui.label(
                                RichText::new(glyph)
                                    .strong()
                                    .color(crate::ui::eval_graph::class_colour(class)),
                            )
                            .on_hover_text(class.word().unwrap_or_default());
                        }
                    }
                    Item::Comment(c) => {
                        ui.label(RichText::new(c).italics().color(ui.visuals().weak_text_color()));
                    }
                    Item::Open => {
                        ui.label(RichText::new("(").weak());
                    }
                    Item::Close => {
                        ui.label(RichText::new(")").weak());
                    }
                }
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgn::reader::read_all;

    fn text(blocks: &[Block]) -> Vec<String> {
        blocks
            .iter()
            .map(|b| {
                let words: Vec<String> = b
                    .items
                    .iter()
                    .map(|i| match i {
                        Item::Number(n) => n.clone(),
                        Item::Move { san, nags, .. } => format!("{san}{nags}"),
                        Item::Comment(c) => format!("{{{c}}}"),
                        Item::Open => "(".into(),
                        Item::Close => ")".into(),
                    })
                    .collect();
                format!("{}{}", "  ".repeat(b.indent), words.join(" "))
            })
            .collect()
    }

    #[test]
    fn variations_get_their_own_blocks_and_numbers_resume() {
        let pgn = "1. e4 e5 2. Nf3 $1 {good} (2. Bc4 Nf6 (2... Bc5 3. Qh5)) 2... Nc6 3. Bb5 *";
        let tree = read_all(pgn).into_iter().next().expect("game").expect("parses");
        assert_eq!(
            text(&layout(&tree)),
            ["1. e4 e5 2. Nf3! {good}", "  ( 2. Bc4 Nf6 ( 2... Bc5 3. Qh5 ) )", "2... Nc6 3. Bb5",]
        );
    }
}
