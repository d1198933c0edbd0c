//! Charts drawn on the server as inline SVG: no script, no external file, styled with
//! presentation attributes (the Content-Security-Policy allows no inline style). Each chart has
//! a `<title>` and an `aria-label` and sits beside a table of the same figures, so nothing is
//! only in the picture.

use jiff::Timestamp;
use maud::{html, Markup};

/// The most points drawn on one line chart; older points are left out of the picture (the
/// table beside it still lists them).
pub const MAX_POINTS: usize = 500;

/// The most bars drawn on one bar chart.
pub const MAX_BARS: usize = 30;

const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 36.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// A line chart of scores (0 to 100) over time, oldest left.
pub fn score_over_time(label: &str, points: &[(Timestamp, u8)]) -> Markup {
    let mut points: Vec<(Timestamp, u8)> = points.to_vec();
    points.sort_by_key(|(at, _)| *at);
    let skip = points.len().saturating_sub(MAX_POINTS);
    let points = &points[skip..];
    let (first, last) = match (points.first(), points.last()) {
        (Some(first), Some(last)) => (first.0.as_second(), last.0.as_second()),
        _ => return html! {},
    };
    let span = (last - first).max(1) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|(at, score)| {
            let x = if points.len() == 1 {
                LEFT + plot_w / 2.0
            } else {
                LEFT + plot_w * (at.as_second() - first) as f64 / span
            };
            (x, TOP + plot_h * (1.0 - f64::from(*score) / 100.0))
        })
        .collect();
    let path: Vec<String> = xy.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let start = points[0].0.strftime("%Y-%m-%d").to_string();
    let end = points[points.len() - 1].0.strftime("%Y-%m-%d").to_string();
    html! {
        svg.chart viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label=(label) xmlns="http://www.w3.org/2000/svg" {
            title { (label) }
            @for score in [0u8, 50, 100] {
                @let y = TOP + plot_h * (1.0 - f64::from(score) / 100.0);
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(y) y2=(y) stroke="#d0d7de" stroke-width="1" {}
                text x=(LEFT - 6.0) y=(y + 4.0) text-anchor="end" font-size="11" fill="#4b5563" { (score) }
            }
            polyline points=(path.join(" ")) fill="none" stroke="#0b5cad" stroke-width="2" {}
            @for (x, y) in &xy {
                circle cx=(format!("{x:.1}")) cy=(format!("{y:.1}")) r="3" fill="#0b5cad" {}
            }
            text x=(LEFT) y=(HEIGHT - 8.0) font-size="11" fill="#4b5563" { (start) }
            text x=(WIDTH - RIGHT) y=(HEIGHT - 8.0) text-anchor="end" font-size="11" fill="#4b5563" { (end) }
        }
    }
}

/// A horizontal bar chart of `(label, value)`.
pub fn bars(label: &str, rows: &[(String, f64)]) -> Markup {
    let rows = &rows[..rows.len().min(MAX_BARS)];
    let max = rows
        .iter()
        .map(|(_, v)| *v)
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let row_h = 22.0;
    let label_w = 190.0;
    let height = row_h * rows.len() as f64 + 8.0;
    let bar_w = WIDTH - label_w - 60.0;
    html! {
        svg.chart viewBox=(format!("0 0 {WIDTH} {height}")) role="img" aria-label=(label) xmlns="http://www.w3.org/2000/svg" {
            title { (label) }
            @for (i, (name, value)) in rows.iter().enumerate() {
                @let y = 4.0 + row_h * i as f64;
                @let w = (bar_w * value / max).max(1.0);
                text x=(label_w - 6.0) y=(y + 15.0) text-anchor="end" font-size="12" fill="#1b1f24" { (crate::html::visible(name)) }
                rect x=(label_w) y=(y + 3.0) width=(format!("{w:.1}")) height=(row_h - 6.0) fill="#0b5cad" {}
                text x=(label_w + w + 4.0) y=(y + 15.0) font-size="12" fill="#1b1f24" { (format_value(*value)) }
            }
        }
    }
}

fn format_value(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}
