//! Puzzle accuracy by rating as an SVG plot (the searchless paper's Figure 2): one line per model and rule,
//! the share of puzzles solved in each rating band of [`super::run::PuzzleMetrics::by_rating`].

use plotters::prelude::*;

use super::run::PuzzleMetrics;

/// Why the plot could not be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlotError {
    /// No puzzle was tried, so there is nothing to draw.
    #[error("no puzzle was tried, so there is no accuracy to plot")]
    Empty,
    /// The drawing library failed.
    #[error("the plot could not be drawn: {0}")]
    Draw(String),
}

/// One line of the plot: its name in the legend and its points (band's middle rating, share solved).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The line's name (`mav-enc-tiny · mean`).
    pub name: String,
    /// (rating, share solved from 0 to 1), lowest rating first.
    pub points: Vec<(f64, f64)>,
}

/// The lines of `metrics` (a model's puzzle run named `model`): one per rule tried.
pub fn series(model: &str, metrics: &PuzzleMetrics) -> Vec<Series> {
    metrics
        .scored
        .iter()
        .enumerate()
        .map(|(slot, s)| Series {
            name: format!("{model} · {}", s.scoring),
            points: metrics
                .by_rating
                .iter()
                .filter_map(|b| {
                    let mean = b.solved.get(slot)?;
                    (mean.count > 0).then(|| (f64::from(b.from + b.to) / 2.0, mean.mean))
                })
                .collect(),
        })
        .collect()
}

fn draw_err(e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// The words of a plot of shares against rating bands.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotText {
    /// The title.
    pub caption: String,
    /// The x axis.
    pub x_desc: String,
    /// The y axis.
    pub y_desc: String,
    /// The width of a rating band (the x range leaves half a band either side).
    pub band: f64,
}

impl PlotText {
    /// Puzzles solved by Lichess puzzle rating, in 200-point bands.
    pub fn puzzles() -> PlotText {
        PlotText {
            caption: "Puzzles solved by Lichess rating".into(),
            x_desc: "puzzle rating (middle of each 200-point band)".into(),
            y_desc: "solved %".into(),
            band: f64::from(super::run::RATING_BAND),
        }
    }
}

/// The SVG text of the plot of `lines` (accuracy in percent against the puzzles' rating).
pub fn rating_svg(lines: &[Series]) -> Result<String, PlotError> {
    share_svg(lines, &PlotText::puzzles())
}

/// The SVG text of the plot of `lines` (shares, drawn in percent, against rating) with `text`'s words.
pub fn share_svg(lines: &[Series], text: &PlotText) -> Result<String, PlotError> {
    let all = || lines.iter().flat_map(|s| s.points.iter());
    let (lo, hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    if !lo.is_finite() {
        return Err(PlotError::Empty);
    }
    let band = text.band;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(text.caption.as_str(), ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d((lo - band / 2.0)..(hi + band / 2.0), 0.0..100.0)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .x_desc(text.x_desc.as_str())
            .y_desc(text.y_desc.as_str())
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(draw_err)?;
        for (i, s) in lines.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().map(|&(x, y)| (x, 100.0 * y)),
                    color.stroke_width(2),
                ))
                .map_err(draw_err)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
            chart
                .draw_series(s.points.iter().map(|&(x, y)| Circle::new((x, 100.0 * y), 3, color.filled())))
                .map_err(draw_err)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(draw_err)?;
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::metrics::Mean;
    use crate::eval::run::{PuzzleScore, RatingBand};
    use crate::mav::scoring::Scoring;

    fn mean(hits: &[bool]) -> Mean {
        let mut m = Mean::default();
        for &h in hits {
            m.hit(h);
        }
        m
    }

    #[test]
    fn one_line_per_rule_with_a_point_per_band_and_the_names_in_the_svg() {
        let metrics = PuzzleMetrics {
            scored: vec![
                PuzzleScore { scoring: Scoring::Max, ..PuzzleScore::default() },
                PuzzleScore { scoring: Scoring::Mean, ..PuzzleScore::default() },
            ],
            by_rating: vec![
                RatingBand { from: 800, to: 1000, solved: vec![mean(&[true, false]), mean(&[true, true])] },
                RatingBand {
                    from: 1400,
                    to: 1600,
                    solved: vec![mean(&[false]), mean(&[true, false, false, false])],
                },
            ],
            ..PuzzleMetrics::default()
        };
        let lines = series("tiny", &metrics);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].name, "tiny · max");
        assert_eq!(lines[0].points, [(900.0, 0.5), (1500.0, 0.0)]);
        assert_eq!(lines[1].points, [(900.0, 1.0), (1500.0, 0.25)]);
        let svg = rating_svg(&lines).expect("drawn");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{svg}");
        for text in ["tiny · max", "tiny · mean", "solved %", "Puzzles solved by Lichess rating"] {
            assert!(svg.contains(text), "the plot names {text}");
        }
        assert_eq!(rating_svg(&series("none", &PuzzleMetrics::default())), Err(PlotError::Empty));
    }
}
