//! The report's charts, drawn with plotters' SVG backend into strings. Text becomes SVG
//! `<text>` elements (escaped by the backend) that the browser renders with its own fonts,
//! so nothing here needs a font file.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

/// A chart's failure to draw (only a bug can cause one: the backend writes to a string).
type Result<T> = std::result::Result<T, String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

const BAR: RGBColor = RGBColor(0x4c, 0x78, 0xa8);
const WHISKER: RGBColor = RGBColor(0x22, 0x22, 0x22);
const FONT: &str = "sans-serif";

/// One bar: its label, value, and optional interval.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
}

/// Labels cut to `n` characters for axes (the tables beside carry the full text).
fn short(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        None => s.to_owned(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// Vertical bars with interval whiskers where given.
pub fn bars(title: &str, y_label: &str, bars: &[Bar]) -> Result<String> {
    let mut svg = String::new();
    let k = bars.len().max(1);
    let width = (120 + 70 * k).clamp(360, 1100) as u32;
    let lo = bars
        .iter()
        .map(|b| b.interval.map_or(b.value, |i| i.0).min(b.value))
        .fold(0.0f64, f64::min);
    let hi = bars
        .iter()
        .map(|b| b.interval.map_or(b.value, |i| i.1).max(b.value))
        .fold(0.0f64, f64::max);
    let hi = if hi <= lo {
        lo + 1.0
    } else {
        hi + (hi - lo) * 0.05
    };
    {
        let root = SVGBackend::with_string(&mut svg, (width, 320)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let labels: Vec<String> = bars.iter().map(|b| short(&b.label, 14)).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(55)
            // One bar still gets two slots: a segmented axis of one slot has no width.
            .build_cartesian_2d((0..k.max(2) - 1).into_segmented(), lo..hi)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(y_label)
            .x_labels(k)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .label_style((FONT, 12))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let mut r = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), 0.0),
                        (SegmentValue::Exact(i + 1), b.value),
                    ],
                    BAR.filled(),
                );
                r.set_margin(0, 0, 8, 8);
                r
            }))
            .map_err(err)?;
        chart
            .draw_series(bars.iter().enumerate().filter_map(|(i, b)| {
                b.interval.map(|(l, h)| {
                    ErrorBar::new_vertical(
                        SegmentValue::CenterOf(i),
                        l,
                        b.value,
                        h,
                        WHISKER.stroke_width(2),
                        10,
                    )
                })
            }))
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// A heatmap of a confusion matrix: actual classes down, predicted across; each cell shows
/// its count and its share of the actual class's row, shaded by that share.
pub fn heatmap(title: &str, classes: &[String], counts: &[Vec<u64>]) -> Result<String> {
    let k = classes.len().max(1);
    let cell = (480 / k).clamp(28, 90) as i32;
    let left = 130;
    let top = 60;
    let w = (left + cell * k as i32 + 20) as u32;
    let h = (top + cell * k as i32 + 30) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let style = |size: i32| TextStyle::from((FONT, size).into_font()).color(&BLACK);
        root.draw(&Text::new(title.to_owned(), (10, 8), style(16)))
            .map_err(err)?;
        root.draw(&Text::new(
            "predicted →".to_owned(),
            (left, top - 36),
            style(12),
        ))
        .map_err(err)?;
        root.draw(&Text::new("actual ↓".to_owned(), (10, top - 18), style(12)))
            .map_err(err)?;
        for (j, c) in classes.iter().enumerate() {
            let x = left + cell * j as i32 + 2;
            root.draw(&Text::new(short(c, 8), (x, top - 18), style(11)))
                .map_err(err)?;
        }
        for (i, row) in counts.iter().enumerate() {
            let total: u64 = row.iter().sum();
            let y = top + cell * i as i32;
            root.draw(&Text::new(
                short(&classes[i], 16),
                (10, y + cell / 2 - 6),
                style(11),
            ))
            .map_err(err)?;
            for (j, &n) in row.iter().enumerate() {
                let rate = if total > 0 {
                    n as f64 / total as f64
                } else {
                    0.0
                };
                let x = left + cell * j as i32;
                let shade = (255.0 - 200.0 * rate).round() as u8;
                let fill = RGBColor(shade, (255.0 - 120.0 * rate) as u8, 255);
                root.draw(&Rectangle::new(
                    [(x, y), (x + cell, y + cell)],
                    fill.filled(),
                ))
                .map_err(err)?;
                root.draw(&Rectangle::new(
                    [(x, y), (x + cell, y + cell)],
                    WHITE.stroke_width(1),
                ))
                .map_err(err)?;
                let color = if rate > 0.6 { WHITE } else { BLACK };
                let text = TextStyle::from((FONT, 12).into_font()).color(&color);
                root.draw(&Text::new(n.to_string(), (x + 4, y + 4), text.clone()))
                    .map_err(err)?;
                root.draw(&Text::new(
                    format!("{:.0}%", rate * 100.0),
                    (x + 4, y + 20),
                    text,
                ))
                .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One line of a forest plot.
#[derive(Debug, Clone)]
pub struct Forest {
    pub label: String,
    pub diff: f64,
    pub interval: Option<(f64, f64)>,
}

/// Differences with their intervals, one per line, around a vertical line at zero.
pub fn forest(title: &str, rows: &[Forest]) -> Result<String> {
    points(title, "new − base", rows, Some(0.0))
}

/// Values with their intervals, one per line (ratings, ranked), around a vertical line at
/// `reference` when given.
pub fn points(
    title: &str,
    x_desc: &str,
    rows: &[Forest],
    reference: Option<f64>,
) -> Result<String> {
    let m = rows.len().max(1);
    let start = reference.or(rows.first().map(|r| r.diff)).unwrap_or(0.0);
    let mut lo = rows
        .iter()
        .map(|r| r.interval.map_or(r.diff, |i| i.0).min(r.diff))
        .fold(start, f64::min);
    let mut hi = rows
        .iter()
        .map(|r| r.interval.map_or(r.diff, |i| i.1).max(r.diff))
        .fold(start, f64::max);
    if hi - lo < 1e-9 {
        lo -= 0.05;
        hi += 0.05;
    }
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let labels: Vec<String> = rows.iter().map(|r| short(&r.label, 32)).collect();
    let mut svg = String::new();
    {
        let h = (80 + 26 * m) as u32;
        let root = SVGBackend::with_string(&mut svg, (820, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(230)
            .build_cartesian_2d(lo..hi, (0..m).into_segmented())
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(x_desc)
            .y_labels(m)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .label_style((FONT, 12))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(reference.map(|x| {
                PathElement::new(
                    vec![(x, SegmentValue::Exact(0)), (x, SegmentValue::Exact(m))],
                    RED.stroke_width(1),
                )
            }))
            .map_err(err)?;
        chart
            .draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
                r.interval.map(|(l, h)| {
                    ErrorBar::new_horizontal(
                        SegmentValue::CenterOf(i),
                        l,
                        r.diff,
                        h,
                        WHISKER.stroke_width(2),
                        8,
                    )
                })
            }))
            .map_err(err)?;
        chart
            .draw_series(
                rows.iter().enumerate().map(|(i, r)| {
                    Circle::new((r.diff, SegmentValue::CenterOf(i)), 4, BAR.filled())
                }),
            )
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One bin of a reliability diagram: the mean score (confidence), the share of positives
/// (accuracy) and the rows.
#[derive(Debug, Clone)]
pub struct Bin {
    pub confidence: f64,
    pub accuracy: f64,
    pub rows: u64,
}

/// A reliability diagram: each bin's accuracy against its mean confidence, over the diagonal
/// of perfect calibration.
pub fn reliability(title: &str, bins: &[Bin]) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (420, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0f64..1.0, 0.0f64..1.0)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("mean score (confidence)")
            .y_desc("accuracy")
            .label_style((FONT, 12))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), (1.0, 1.0)],
                RED.stroke_width(1),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                bins.iter()
                    .map(|b| (b.confidence, b.accuracy))
                    .collect::<Vec<_>>(),
                BAR.stroke_width(2),
            )))
            .map_err(err)?;
        chart
            .draw_series(
                // A bin's dot grows with its rows.
                bins.iter().map(|b| {
                    let r = 3.0 + (b.rows.max(1) as f64).log2().min(8.0) / 2.0;
                    Circle::new((b.confidence, b.accuracy), r as i32, BAR.filled())
                }),
            )
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}
