//! Comments of a game record, kept as written, with parsed access to embedded `[%cmd ...]` commands.
//!
//! Lichess, ChessBase and most GUIs embed machine-readable data in comments: `[%eval 0.23]`,
//! `[%clk 0:03:00]`, `[%emt 0:00:05]`, `[%csl Ga1]`, ... A [`Comment`] stores the exact text between the
//! braces (so writing it back is byte-identical) and parses the commands on demand.

use std::time::Duration;

/// The text of one `{ ... }` comment, exactly as written between the braces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Comment {
    raw: String,
}

/// Why a comment text cannot be stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommentError {
    /// PGN comments end at the first `}` and have no escape for it.
    #[error("a PGN comment cannot contain '}}' (it would end the comment); remove it or use ')' instead")]
    ClosingBrace,
}

/// One embedded command such as `[%clk 0:03:00]`: its name (`clk`) and its argument text (`0:03:00`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command<'a> {
    /// The command name, without the `%`.
    pub name: &'a str,
    /// Everything between the name and the closing `]`, trimmed.
    pub args: &'a str,
}

/// An engine evaluation from `[%eval ...]`, from White's point of view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Eval {
    /// A score in pawns (`[%eval 0.23]`, `[%eval -1.5]`).
    Pawns(f64),
    /// Mate in this many moves; negative when Black mates (`[%eval #-3]`).
    Mate(i32),
}

impl Comment {
    /// A comment with the given text; fails if the text contains `}`.
    pub fn new(text: impl Into<String>) -> Result<Comment, CommentError> {
        let raw = text.into();
        if raw.contains('}') {
            return Err(CommentError::ClosingBrace);
        }
        Ok(Comment { raw })
    }

    /// Builds a comment from text read between braces (which cannot contain `}`).
    pub(crate) fn from_read(raw: String) -> Comment {
        Comment { raw }
    }

    /// The exact text between the braces, spaces and commands included.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The human-readable text: the comment with its `[%...]` commands removed and whitespace trimmed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut rest = self.raw.as_str();
        while let Some(start) = rest.find("[%") {
            out.push_str(&rest[..start]);
            match rest[start..].find(']') {
                Some(end) => rest = &rest[start + end + 1..],
                None => {
                    rest = &rest[start..];
                    break;
                }
            }
        }
        out.push_str(rest);
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Every well-formed `[%name args]` command, in order.
    pub fn commands(&self) -> Vec<Command<'_>> {
        let mut found = Vec::new();
        let mut rest = self.raw.as_str();
        while let Some(start) = rest.find("[%") {
            let body_start = start + 2;
            let Some(len) = rest[body_start..].find(']') else { break };
            let body = &rest[body_start..body_start + len];
            let (name, args) = match body.find(char::is_whitespace) {
                Some(split) => (&body[..split], body[split..].trim()),
                None => (body, ""),
            };
            if !name.is_empty() {
                found.push(Command { name, args });
            }
            rest = &rest[body_start + len + 1..];
        }
        found
    }

    /// The argument text of the first command called `name`.
    pub fn command(&self, name: &str) -> Option<&str> {
        self.commands().into_iter().find(|c| c.name == name).map(|c| c.args)
    }

    /// The evaluation in `[%eval ...]`, if present and readable (a trailing `,depth` is ignored).
    pub fn eval(&self) -> Option<Eval> {
        let args = self.command("eval")?;
        let score = args.split(',').next()?.trim();
        if let Some(mate) = score.strip_prefix('#') {
            return mate.parse().ok().map(Eval::Mate);
        }
        score.parse::<f64>().ok().filter(|p| p.is_finite()).map(Eval::Pawns)
    }

    /// The search depth in `[%eval score,depth]`, if given.
    pub fn eval_depth(&self) -> Option<u32> {
        self.command("eval")?.split(',').nth(1)?.trim().parse().ok()
    }

    /// The remaining clock time in `[%clk h:mm:ss]`.
    pub fn clock(&self) -> Option<Duration> {
        parse_clock(self.command("clk")?)
    }

    /// The time spent on the move in `[%emt h:mm:ss]`.
    pub fn elapsed(&self) -> Option<Duration> {
        parse_clock(self.command("emt")?)
    }
}

/// Reads `h:mm:ss`, `mm:ss` or `ss`, each with optional decimal seconds (`0:00:07.5`).
pub fn parse_clock(text: &str) -> Option<Duration> {
    let mut parts = text.trim().rsplit(':');
    let seconds: f64 = parts.next()?.parse().ok()?;
    let minutes: u64 = match parts.next() {
        Some(m) => m.parse().ok()?,
        None => 0,
    };
    let hours: u64 = match parts.next() {
        Some(h) => h.parse().ok()?,
        None => 0,
    };
    if parts.next().is_some() || !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    let whole = (hours * 60 + minutes) as f64 * 60.0 + seconds;
    Duration::try_from_secs_f64(whole).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lichess_comment_parses_and_keeps_raw_text() {
        let c = Comment::new(" [%eval 0.17] [%clk 0:00:30] good move ").expect("no brace");
        assert_eq!(c.raw(), " [%eval 0.17] [%clk 0:00:30] good move ");
        assert_eq!(c.eval(), Some(Eval::Pawns(0.17)));
        assert_eq!(c.clock(), Some(Duration::from_secs(30)));
        assert_eq!(c.text(), "good move");
        assert_eq!(c.commands().len(), 2);
    }

    #[test]
    fn mate_depth_and_other_commands() {
        let c = Comment::new("[%eval #-3,24][%csl Ga1,Rb2][%emt 1:02:03.5]").expect("no brace");
        assert_eq!(c.eval(), Some(Eval::Mate(-3)));
        assert_eq!(c.eval_depth(), Some(24));
        assert_eq!(c.command("csl"), Some("Ga1,Rb2"));
        assert_eq!(c.elapsed(), Some(Duration::from_secs_f64(3723.5)));
        assert_eq!(c.text(), "");
    }

    #[test]
    fn malformed_commands_are_not_values() {
        let c = Comment::new("[%eval abc] [%clk 1:xx:00] [%unterminated").expect("no brace");
        assert_eq!(c.eval(), None);
        assert_eq!(c.clock(), None);
        assert!(Comment::new("a } b").is_err());
    }
}
