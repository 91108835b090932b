//! Move classification by win-probability loss, with Lichess's thresholds.
//!
//! Lichess judges a move by how much it lowers the mover's "winning chances" on the −1..1 scale
//! (winning chances = 2·win probability − 1): a drop of at least 0.3 is a blunder, 0.2 a mistake, 0.1 an
//! inaccuracy (lila `modules/analyse/src/main/Advice.scala`). On the 0..1 win-probability scale that the
//! model speaks, the same thresholds are 0.15, 0.1 and 0.05.

use pgn_reader::Nag;
use serde::{Deserialize, Serialize};

use super::error::ReviewError;

/// How bad a move was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    /// Below every threshold.
    Good,
    /// At least the inaccuracy threshold (`?!`).
    Inaccuracy,
    /// At least the mistake threshold (`?`).
    Mistake,
    /// At least the blunder threshold (`??`).
    Blunder,
}

impl Classification {
    /// The NAG written on the move: `$6` (`?!`), `$2` (`?`), `$4` (`??`); none for a good move.
    pub fn nag(self) -> Option<Nag> {
        match self {
            Classification::Good => None,
            Classification::Inaccuracy => Some(Nag::DUBIOUS_MOVE),
            Classification::Mistake => Some(Nag::MISTAKE),
            Classification::Blunder => Some(Nag::BLUNDER),
        }
    }

    /// The word for a comment ("Inaccuracy", "Mistake", "Blunder"); `None` for a good move.
    pub fn word(self) -> Option<&'static str> {
        match self {
            Classification::Good => None,
            Classification::Inaccuracy => Some("Inaccuracy"),
            Classification::Mistake => Some("Mistake"),
            Classification::Blunder => Some("Blunder"),
        }
    }
}

/// The classification thresholds, as drops of winning chances on the −1..1 scale (Lichess's scale).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// A drop of at least this is an inaccuracy (Lichess: 0.1).
    pub inaccuracy: f64,
    /// A drop of at least this is a mistake (Lichess: 0.2).
    pub mistake: f64,
    /// A drop of at least this is a blunder (Lichess: 0.3).
    pub blunder: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { inaccuracy: 0.1, mistake: 0.2, blunder: 0.3 }
    }
}

impl Thresholds {
    /// Checks that the thresholds are finite, positive, at most 2 (the whole −1..1 range) and ordered.
    pub fn validate(&self) -> Result<(), ReviewError> {
        let all = [self.inaccuracy, self.mistake, self.blunder];
        if all.iter().any(|t| !t.is_finite() || *t <= 0.0 || *t > 2.0) {
            return Err(ReviewError::InvalidOption {
                name: "thresholds",
                why: format!("{all:?}: each must be in (0, 2] on the −1..1 winning-chances scale"),
            });
        }
        if !(self.inaccuracy <= self.mistake && self.mistake <= self.blunder) {
            return Err(ReviewError::InvalidOption {
                name: "thresholds",
                why: format!("{all:?}: inaccuracy ≤ mistake ≤ blunder is required"),
            });
        }
        Ok(())
    }

    /// Parses `inaccuracy,mistake,blunder` (e.g. `0.1,0.2,0.3`) and validates it.
    pub fn parse(text: &str) -> Result<Thresholds, ReviewError> {
        let bad = |why: String| ReviewError::InvalidOption { name: "thresholds", why };
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let [a, b, c] = parts.as_slice() else {
            return Err(bad(format!("{text:?}: give three numbers, inaccuracy,mistake,blunder")));
        };
        let num = |s: &str| s.parse::<f64>().map_err(|e| bad(format!("{s:?}: {e}")));
        let t = Thresholds { inaccuracy: num(a)?, mistake: num(b)?, blunder: num(c)? };
        t.validate()?;
        Ok(t)
    }

    /// The class of a move that lost `loss` win probability (0..1 scale; the drop in winning chances is
    /// twice that).
    pub fn classify(&self, loss: f64) -> Classification {
        let drop = 2.0 * loss;
        if drop >= self.blunder {
            Classification::Blunder
        } else if drop >= self.mistake {
            Classification::Mistake
        } else if drop >= self.inaccuracy {
            Classification::Inaccuracy
        } else {
            Classification::Good
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lichess_thresholds_on_the_win_probability_scale() {
        let t = Thresholds::default();
        assert_eq!(t.classify(0.0), Classification::Good);
        assert_eq!(t.classify(0.049), Classification::Good);
        assert_eq!(t.classify(0.05), Classification::Inaccuracy);
        assert_eq!(t.classify(0.099), Classification::Inaccuracy);
        assert_eq!(t.classify(0.1), Classification::Mistake);
        assert_eq!(t.classify(0.149), Classification::Mistake);
        assert_eq!(t.classify(0.15), Classification::Blunder);
        assert_eq!(t.classify(0.9), Classification::Blunder);
        assert_eq!(t.classify(-0.2), Classification::Good);
    }

    #[test]
    fn nags_and_words() {
        assert_eq!(Classification::Good.nag(), None);
        assert_eq!(Classification::Inaccuracy.nag().map(|n| n.to_string()).as_deref(), Some("$6"));
        assert_eq!(Classification::Mistake.nag().map(|n| n.to_string()).as_deref(), Some("$2"));
        assert_eq!(Classification::Blunder.nag().map(|n| n.to_string()).as_deref(), Some("$4"));
        assert_eq!(Classification::Blunder.word(), Some("Blunder"));
    }

    #[test]
    fn custom_thresholds_parse_and_validate() {
        let t = Thresholds::parse("0.2, 0.4,0.6").expect("valid");
        assert_eq!(t.classify(0.1), Classification::Inaccuracy);
        assert_eq!(t.classify(0.29), Classification::Mistake);
        assert_eq!(t.classify(0.3), Classification::Blunder);
        assert!(Thresholds::parse("0.3,0.2,0.1").is_err());
        assert!(Thresholds::parse("0.1,0.2").is_err());
        assert!(Thresholds::parse("0,0.2,0.3").is_err());
        assert!(Thresholds::parse("0.1,x,0.3").is_err());
        assert!(Thresholds::parse("0.1,0.2,NaN").is_err());
    }
}
