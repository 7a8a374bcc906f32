//! The `Full HTML` and `Full PDF` reports: the figures of the `Minimal JSON` report as
//! a table, then three plots — the track (longitude, latitude), the height over time,
//! the horizontal position σ over time — drawn from at most [`MAX_PLOT_POINTS`] epochs.
//! HTML draws them as inline SVG; PDF as vector paths on one A4 page (PDF 1.4, the
//! standard Helvetica font, no compression), so that both open anywhere.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde_json::Value;

use super::solution::{Solution, State};

/// The most epochs a plot draws (evenly picked).
const MAX_PLOT_POINTS: usize = 2000;

/// A plot: its title and its points, already in its own units.
struct Plot {
    title: &'static str,
    points: Vec<(f64, f64)>,
}

fn plots(solution: &Solution<'_>) -> [Plot; 3] {
    let n = solution.len();
    let step = n.div_ceil(MAX_PLOT_POINTS).max(1);
    let states: Vec<State> = (0..n).step_by(step).map(|i| solution.at(i)).collect();
    let start = states.first().map_or(0.0, |s| s.time_ms);
    let minutes = |s: &State| (s.time_ms - start) / 60_000.0;
    [
        Plot {
            title: "Track (longitude, latitude)",
            points: states.iter().map(|s| (s.lon, s.lat)).collect(),
        },
        Plot {
            title: "Height (m) over time (min)",
            points: states.iter().map(|s| (minutes(s), s.height)).collect(),
        },
        Plot {
            title: "Horizontal position sigma (m) over time (min)",
            points: states
                .iter()
                .map(|s| (minutes(s), s.position_std[0].hypot(s.position_std[1])))
                .collect(),
        },
    ]
}

/// The figures as (label, text) rows.
fn rows(figures: &Value) -> Vec<(String, String)> {
    figures
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(key, value)| {
                    let text = match value {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (key.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `points` scaled into a `width` × `height` box (y up), as (x, y) pairs.
fn scaled(points: &[(f64, f64)], width: f64, height: f64) -> Vec<(f64, f64)> {
    let bounds = |pick: fn(&(f64, f64)) -> f64| {
        points
            .iter()
            .map(pick)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let (x0, x1) = bounds(|p| p.0);
    let (y0, y1) = bounds(|p| p.1);
    let span = |lo: f64, hi: f64| if hi - lo > 0.0 { hi - lo } else { 1.0 };
    points
        .iter()
        .map(|(x, y)| {
            (
                (x - x0) / span(x0, x1) * width,
                (y - y0) / span(y0, y1) * height,
            )
        })
        .collect()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes the `Full HTML` report.
pub(super) fn html(
    figures: &Value,
    solution: &Solution<'_>,
    out: &mut impl Write,
) -> io::Result<()> {
    let mut page = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Processing report</title></head><body>\n<h1>Processing report</h1>\n<table>\n",
    );
    for (label, text) in rows(figures) {
        let _ = writeln!(
            page,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(&label),
            escape(&text)
        );
    }
    page.push_str("</table>\n");
    for plot in plots(solution) {
        let (w, h) = (600.0, 300.0);
        let path: Vec<String> = scaled(&plot.points, w, h)
            .iter()
            .map(|(x, y)| format!("{x:.1},{:.1}", h - y))
            .collect();
        let _ = writeln!(
            page,
            "<h2>{}</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\"><rect width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"#999\"/><polyline fill=\"none\" stroke=\"#1f77b4\" points=\"{}\"/></svg>",
            escape(plot.title),
            path.join(" ")
        );
    }
    page.push_str("</body></html>\n");
    out.write_all(page.as_bytes())
}

/// Text for a PDF string: printable ASCII, `\`, `(` and `)` escaped.
fn pdf_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\\' | '(' | ')' => format!("\\{c}"),
            c if c.is_ascii() && !c.is_ascii_control() => c.to_string(),
            _ => "?".to_owned(),
        })
        .collect()
}

/// Writes the `Full PDF` report: one A4 page.
pub(super) fn pdf(
    figures: &Value,
    solution: &Solution<'_>,
    out: &mut impl Write,
) -> io::Result<()> {
    let mut content = String::from("BT /F1 16 Tf 50 800 Td (Processing report) Tj ET\n");
    let mut y = 780.0;
    for (label, text) in rows(figures) {
        let line: String = format!("{label}: {text}").chars().take(100).collect();
        let _ = writeln!(
            content,
            "BT /F1 8 Tf 50 {y:.0} Td ({}) Tj ET",
            pdf_text(&line)
        );
        y -= 11.0;
    }
    let (w, h) = (480.0, 150.0);
    for plot in plots(solution) {
        y -= h + 30.0;
        let _ = writeln!(
            content,
            "BT /F1 9 Tf 50 {:.0} Td ({}) Tj ET",
            y + h + 8.0,
            pdf_text(plot.title)
        );
        let _ = writeln!(content, "0.6 G 50 {y:.1} {w} {h} re S 0.12 0.47 0.71 RG");
        for (i, (px, py)) in scaled(&plot.points, w, h).iter().enumerate() {
            let op = if i == 0 { "m" } else { "l" };
            let _ = writeln!(content, "{:.2} {:.2} {op}", 50.0 + px, y + py);
        }
        content.push_str("S\n");
    }
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{content}endstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut file = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(file.len());
        let _ = write!(file, "{} 0 obj\n{object}\nendobj\n", i + 1);
    }
    let xref = file.len();
    let _ = write!(file, "xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        let _ = writeln!(file, "{offset:010} 00000 n ");
    }
    let _ = write!(
        file,
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    );
    out.write_all(file.as_bytes())
}
