//! Writing a review into its game: `[%eval]`, a NAG on classified moves and a short comment with the best
//! move, all appended after what the move already has, so the original text stays byte for byte and only
//! the new tokens are inserted (see [`crate::pgn::source_with_additions`]).

use pgn_reader::Nag;

use super::classify::Classification;
use super::error::ReviewError;
use super::eval_text::eval_command;
use super::report::{GameReview, MoveReview};
use crate::mav::scoring::Scoring;
use crate::pgn::{Comment, GameTree, NodeId, WriteOptions, game_to_string};

/// A comment text made safe for PGN (`}` would end the comment).
pub fn comment_text(text: &str) -> String {
    text.replace('}', ")").replace(['\r', '\n'], " ")
}

fn comment(text: String) -> Result<Comment, ReviewError> {
    Ok(Comment::new(text).map_err(crate::pgn::TreeError::from)?)
}

fn percent(p: f64) -> String {
    format!("{:.1}%", 100.0 * p)
}

/// The comment written after a reviewed move: `[%eval]` (unless the move already has one, which is kept
/// as the only one, or the move ended the game: a finished game has nothing left to evaluate), then for a
/// classified move its class, and when another move was better, that move with its values under the review's scoring and the compared rule
/// (win probabilities for the mover); when a model ran beside a UCI judge and classes the move
/// differently, what the model thinks.
pub fn move_comment(m: &MoveReview, scoring: Scoring, has_eval: bool) -> String {
    let mut parts = Vec::new();
    if !has_eval && !m.ends_game {
        let white_p = if m.white { m.value_after } else { 1.0 - m.value_after };
        parts.push(eval_command(white_p));
    }
    if let Some(word) = m.classification.word() {
        parts.push(format!("{word}."));
    }
    if m.best_uci != m.uci {
        // A judging engine's value is one number: both rules agree.
        if (m.best.value - m.best.compare).abs() < 0.001 {
            parts.push(format!("Best {} ({}).", m.best_san, percent(m.best.value)));
        } else {
            // The two rules in the catalogue's order (max before mean).
            let mut two = [(scoring, m.best.value), (scoring.tie_breaker(), m.best.compare)];
            two.sort_by_key(|&(s, _)| s.catalogue_place());
            parts.push(format!(
                "Best {} ({} {}, {} {}).",
                m.best_san,
                two[0].0,
                percent(two[0].1),
                two[1].0,
                percent(two[1].1)
            ));
        }
    }
    if let Some(v) = m.model.as_ref().filter(|v| v.disagrees) {
        let class = match v.classification {
            Classification::Good => "a good move",
            Classification::Inaccuracy => "an inaccuracy",
            Classification::Mistake => "a mistake",
            Classification::Blunder => "a blunder",
        };
        parts.push(format!(
            "Model disagrees: {class} (rank {} of {}, prefers {}).",
            v.played_rank, v.moves, v.favourite_san
        ));
    }
    parts.join(" ")
}

/// The game comment: what reviewed the game, and each player's accuracy and average loss.
pub fn summary_comment(review: &GameReview, model: &str) -> String {
    let player = |name: &str, s: &super::report::PlayerSummary| match (s.accuracy, s.average_loss) {
        (Some(a), Some(l)) => format!(
            "{name} accuracy {a:.1}%, average loss {}, {}/{}/{} inaccuracies/mistakes/blunders",
            percent(l),
            s.inaccuracies,
            s.mistakes,
            s.blunders
        ),
        _ => format!("{name} no moves reviewed"),
    };
    let disagrees = review.moves.iter().any(|m| m.model.is_some()).then(|| {
        format!(
            "; the model disagrees on {} of White's and {} of Black's moves",
            review.white.model_disagrees, review.black.model_disagrees
        )
    });
    comment_text(&format!(
        "mavboard review ({model}, {}): {}; {}{}",
        review.method,
        player("White", &review.white),
        player("Black", &review.black),
        disagrees.unwrap_or_default()
    ))
}

/// Whether a NAG judges the move itself (`$1`..`$6`: `!`, `?`, `!!`, `??`, `!?`, `?!`).
fn is_move_assessment(nag: Nag) -> bool {
    (1..=6).contains(&nag.0)
}

/// Appends the review to `tree`: the summary as a game comment (before the first move), and on each
/// reviewed move its comment and, for a classified move without a move assessment of its own, the NAG.
pub fn annotate(tree: &mut GameTree, review: &GameReview, model: &str) -> Result<(), ReviewError> {
    tree.append_comment(NodeId::ROOT, comment(summary_comment(review, model))?)?;
    for m in &review.moves {
        let node = tree.node(m.node).ok_or(crate::pgn::TreeError::NoSuchNode(m.node.index()))?;
        let has_eval = node.comments_after().iter().any(|c| c.command("eval").is_some());
        let assessed = node.nags().iter().any(|&n| is_move_assessment(n));
        if let Some(nag) = m.classification.nag()
            && !assessed
        {
            tree.append_nag(m.node, nag)?;
        }
        let text = comment_text(&move_comment(m, review.scoring, has_eval));
        if !text.is_empty() {
            tree.append_comment(m.node, comment(text)?)?;
        }
    }
    Ok(())
}

/// Notes on the game that it could not be reviewed, and why (a game comment).
pub fn annotate_failure(tree: &mut GameTree, why: &ReviewError) -> Result<(), ReviewError> {
    let text = comment_text(&format!("mavboard could not review this game: {why}"));
    tree.append_comment(NodeId::ROOT, comment(text)?)?;
    Ok(())
}

/// The game's PGN text: its original bytes with the additions inserted when it kept its source (and the
/// splice re-reads as the same tree), else written afresh.
pub fn game_text(tree: &GameTree) -> String {
    crate::pgn::source_with_additions(tree).unwrap_or_else(|| game_to_string(tree, &WriteOptions::default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::material::MaterialEvaluator;
    use crate::pgn::reader::read_all;
    use crate::review::game::review_game;
    use crate::review::options::ReviewOptions;

    #[test]
    fn annotations_are_inserted_and_the_rest_is_kept() {
        let pgn = "[Event \"t\"]\n[Result \"*\"]\n\n{Start} 1. e4 {[%clk 0:03:00]} d5 2. Qg4 $1 {[%eval 0.3]} \
                   (2. exd5 Qxd5) 2... Nf6 3. Qxc8 Qxc8 *\n";
        let mut tree = read_all(pgn).remove(0).expect("valid");
        let original = tree.clone();
        let review =
            review_game(&tree, &mut MaterialEvaluator::new(3), &ReviewOptions::default()).expect("review");
        annotate(&mut tree, &review, "mock").expect("annotates");
        let text = game_text(&tree);
        // A mate has no eval after it (the game is over) and is never a mistake.
        let mut mated = read_all("1. f3 e5 2. g4 Qh4# 0-1\n").remove(0).expect("valid");
        let mate_review =
            review_game(&mated, &mut MaterialEvaluator::new(3), &ReviewOptions::default()).expect("review");
        annotate(&mut mated, &mate_review, "mock").expect("annotates");
        let mated = game_text(&mated);
        assert!(mated.ends_with(" Qh4# 0-1\n"), "{mated}");
        assert!(!mated.contains("Qh4# {"), "{mated}");
        // Every original byte is there, in order, and only whole tokens were inserted.
        let mut rest = pgn;
        for c in text.chars() {
            if rest.starts_with(c) {
                rest = &rest[c.len_utf8()..];
            }
        }
        assert!(rest.is_empty(), "original text not kept: {rest:?} left in\n{text}");
        assert!(
            text.starts_with("[Event \"t\"]\n[Result \"*\"]\n\n{Start} {mavboard review (mock, mean scoring")
        );
        // 2. Qg4 already had `!` and an eval: no NAG and no second eval, but the best move is named.
        assert!(text.contains("2. Qg4 $1 {[%eval 0.3]} {"), "{text}");
        assert!(text.contains("Best exd5 (max "), "{text}");
        // 2... Nf6 is a blunder: `$4`, an eval and the capture it missed.
        assert!(text.contains("2... Nf6 $4 {[%eval "), "{text}");
        assert!(text.contains("Blunder. Best Bxg4"), "{text}");
        let reread = read_all(&text).remove(0).expect("re-reads");
        assert_eq!(reread.headers(), original.headers());
        let main = |t: &GameTree| t.mainline().filter_map(|id| t.node(id)?.san_text()).collect::<Vec<_>>();
        assert_eq!(main(&reread), main(&original));
        assert_eq!(reread.move_count(), original.move_count());
        assert_eq!(reread, tree);
    }

    #[test]
    fn comments_are_made_safe() {
        assert_eq!(comment_text("a}b\nc"), "a)b c");
        let mut tree = read_all("1. e4 *\n").remove(0).expect("valid");
        let why = ReviewError::InvalidOption { name: "x", why: "a } b".into() };
        annotate_failure(&mut tree, &why).expect("annotates");
        assert!(
            game_text(&tree)
                .starts_with("{mavboard could not review this game: invalid review setting x: a ) b} 1. e4")
        );
    }
}
