//! `--svg FILE`: the run as a picture (plotters, SVG backend). Three rows share one time
//! axis: the breaker's state, latency per second with and without the breaker, and calls
//! reaching the dependency per second. Every line is named where it ends and every state
//! band where it is drawn, so nothing needs a legend.

use std::path::Path;

use breaker_core::State;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::stats::Figures;
use super::timeline::Timeline;
use crate::units::Span;

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 720;
const LEFT: u32 = 80;
const RIGHT: u32 = 30;
const FONT: &str = "sans-serif";

const WITH: RGBColor = RGBColor(21, 101, 192);
const WITH_P99: RGBColor = RGBColor(100, 160, 230);
const WITHOUT: RGBColor = RGBColor(60, 60, 60);
const WITHOUT_P99: RGBColor = RGBColor(150, 150, 150);

/// The pale band colour and the strong label colour of a state.
fn state_colors(s: State) -> (RGBColor, RGBColor) {
    match s {
        State::Closed => (RGBColor(200, 230, 201), RGBColor(27, 94, 32)),
        State::Open => (RGBColor(255, 205, 210), RGBColor(183, 28, 28)),
        State::HalfOpen => (RGBColor(255, 236, 179), RGBColor(140, 90, 0)),
        _ => (RGBColor(224, 224, 224), RGBColor(66, 66, 66)),
    }
}

/// What the picture shows.
pub struct Picture<'a> {
    /// The first line of the picture.
    pub title: String,
    /// Lines under the title (config, traffic).
    pub subtitle: Vec<String>,
    /// Per-second figures, from second 0.
    pub seconds: &'a [Figures],
    /// The breaker's states.
    pub timeline: &'a Timeline,
    /// The outage windows.
    pub outages: &'a [Span],
    /// Length of the run, seconds.
    pub duration_s: f64,
}

/// One point per `step` seconds: latencies are call-weighted means of the seconds' means
/// and the largest of their p99s; counts are means per second.
struct Series {
    x: Vec<f64>,
    mean_with: Vec<Option<f64>>,
    p99_with: Vec<Option<f64>>,
    mean_without: Vec<Option<f64>>,
    p99_without: Vec<Option<f64>>,
    reached: Vec<f64>,
    calls: Vec<f64>,
}

fn series(seconds: &[Figures], step: usize) -> Series {
    let mut s = Series {
        x: Vec::new(),
        mean_with: Vec::new(),
        p99_with: Vec::new(),
        mean_without: Vec::new(),
        p99_without: Vec::new(),
        reached: Vec::new(),
        calls: Vec::new(),
    };
    for (i, chunk) in seconds.chunks(step).enumerate() {
        let calls: u64 = chunk.iter().map(|f| f.calls).sum();
        let weighted = |get: fn(&Figures) -> Option<f64>| {
            (calls > 0).then(|| {
                chunk
                    .iter()
                    .filter_map(|f| get(f).map(|v| v * f.calls as f64))
                    .sum::<f64>()
                    / calls as f64
            })
        };
        let max = |get: fn(&Figures) -> Option<f64>| {
            chunk
                .iter()
                .filter_map(get)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
        };
        // The point sits at the middle of the seconds it stands for.
        s.x.push((i * step) as f64 + chunk.len() as f64 / 2.0);
        s.mean_with.push(weighted(|f| f.with.mean_ms));
        s.mean_without.push(weighted(|f| f.without.mean_ms));
        s.p99_with.push(max(|f| f.with.p99_ms));
        s.p99_without.push(max(|f| f.without.p99_ms));
        let n = chunk.len() as f64;
        s.reached
            .push(chunk.iter().map(|f| f.reached).sum::<u64>() as f64 / n);
        s.calls.push(calls as f64 / n);
    }
    s
}

/// The unit of the time axis: seconds for short runs, minutes, then hours.
fn time_unit(duration_s: f64) -> (f64, &'static str) {
    if duration_s <= 900.0 {
        (1.0, "s")
    } else if duration_s <= 12.0 * 3600.0 {
        (60.0, "min")
    } else {
        (3600.0, "h")
    }
}

type Res<T> = Result<T, String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("cannot draw the SVG: {e:?}")
}

/// Writes the picture to `path`.
///
/// # Errors
/// The file cannot be written.
pub fn write(path: &Path, p: &Picture<'_>) -> Res<()> {
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    draw(&root, p)?;
    root.present()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn draw(root: &DrawingArea<SVGBackend<'_>, Shift>, p: &Picture<'_>) -> Res<()> {
    root.fill(&WHITE).map_err(err)?;
    let (head, rest) = root.split_vertically(40 + 17 * p.subtitle.len() as u32);
    head.draw(&Text::new(
        p.title.clone(),
        (LEFT as i32, 8),
        (FONT, 20).into_font().style(FontStyle::Bold),
    ))
    .map_err(err)?;
    for (i, line) in p.subtitle.iter().enumerate() {
        head.draw(&Text::new(
            line.clone(),
            (LEFT as i32, 34 + 17 * i as i32),
            (FONT, 13).into_font().color(&RGBColor(80, 80, 80)),
        ))
        .map_err(err)?;
    }
    let (strip, rest) = rest.split_vertically(92);
    let (latency_area, calls_area) = rest.split_vertically(340);

    let (unit, unit_name) = time_unit(p.duration_s);
    let x_end = p.duration_s / unit;
    let step = p.seconds.len().div_ceil(1500).max(1);
    let s = series(p.seconds, step);
    let xs: Vec<f64> = s.x.iter().map(|x| x / unit).collect();
    let bands: Vec<(f64, f64, State)> = p
        .timeline
        .bands((p.duration_s * 1e9) as u64)
        .into_iter()
        .map(|(a, b, st)| (a as f64 / 1e9 / unit, b as f64 / 1e9 / unit, st))
        .collect();
    let outages: Vec<(f64, f64)> = p
        .outages
        .iter()
        .map(|o| {
            (
                o.start.as_secs_f64() / unit,
                (o.end.as_secs_f64() / unit).min(x_end),
            )
        })
        .filter(|(a, _)| *a < x_end)
        .collect();
    let per = if step == 1 {
        "per second".to_string()
    } else {
        format!("per {step} s")
    };

    state_strip(&strip, &bands, &outages, x_end, root)?;

    // Latency panel.
    let y_max = s
        .p99_without
        .iter()
        .chain(&s.p99_with)
        .flatten()
        .fold(1.0f64, |m, v| m.max(*v))
        * 1.08;
    // Wide pale lines for the breaker, thin dark ones on top for no breaker: where the two
    // agree, both stay visible.
    let lines: [(&str, &Vec<Option<f64>>, RGBColor, u32); 4] = [
        ("p99 with breaker", &s.p99_with, WITH_P99, 3),
        ("mean with breaker", &s.mean_with, WITH, 4),
        ("p99 without", &s.p99_without, WITHOUT_P99, 1),
        ("mean without", &s.mean_without, WITHOUT, 1),
    ];
    let title = format!("Latency {per}:");
    let key: Vec<(&str, RGBColor, u32)> = lines.iter().map(|l| (l.0, l.2, l.3)).collect();
    let mut chart = panel(
        &latency_area,
        x_end,
        y_max,
        "latency (ms; rejected call: 0)",
        None,
    )?;
    shade(&mut chart, &bands, &outages, y_max, root)?;
    panel_title(&latency_area, &title, &key)?;
    for (_, values, color, width) in lines {
        let pts = xs
            .iter()
            .zip(values)
            .filter_map(|(x, v)| v.map(|v| (*x, v)));
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(width)))
            .map_err(err)?;
    }

    // Calls panel.
    let c_max = s.calls.iter().fold(1.0f64, |m, v| m.max(*v)) * 1.12;
    let mut chart = panel(
        &calls_area,
        x_end,
        c_max,
        "calls / s",
        Some(format!("time ({unit_name})")),
    )?;
    shade(&mut chart, &bands, &outages, c_max, root)?;
    let calls_lines = [
        ("with breaker", &s.reached, WITH, 4),
        ("without breaker (every call)", &s.calls, WITHOUT, 1),
    ];
    let key: Vec<(&str, RGBColor, u32)> = calls_lines.iter().map(|l| (l.0, l.2, l.3)).collect();
    panel_title(
        &calls_area,
        &format!("Calls reaching the dependency {per}:"),
        &key,
    )?;
    for (_, values, color, width) in calls_lines {
        let pts = xs.iter().copied().zip(values.iter().copied());
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(width)))
            .map_err(err)?;
    }
    Ok(())
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A panel with its axes: time across, `y_desc` up to `y_max`.
fn panel<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    x_end: f64,
    y_max: f64,
    y_desc: &str,
    x_desc: Option<String>,
) -> Res<Chart<'a, 'b>> {
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(RIGHT)
        .margin_top(28)
        .margin_bottom(4)
        .x_label_area_size(if x_desc.is_some() { 42 } else { 24 })
        .y_label_area_size(LEFT - 8)
        .build_cartesian_2d(0f64..x_end, 0f64..y_max)
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .y_desc(y_desc)
        .y_max_light_lines(1)
        .x_label_formatter(&|v| format!("{v}"))
        .y_label_formatter(&|v| format!("{v}"))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(RGBColor(245, 245, 245));
    if let Some(x) = x_desc {
        mesh.x_desc(x);
    }
    mesh.draw().map_err(err)?;
    Ok(chart)
}

/// A panel's title, then a sample of each line with its name, in the line's colour.
fn panel_title(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    key: &[(&str, RGBColor, u32)],
) -> Res<()> {
    area.draw(&Text::new(
        title.to_string(),
        (LEFT as i32, 6),
        (FONT, 14).into_font().style(FontStyle::Bold),
    ))
    .map_err(err)?;
    // About 7.5 px a character at 14 px bold, 6.5 at 13 px (sans-serif, generous).
    let mut x = LEFT as i32 + (title.len() as f64 * 7.5) as i32 + 14;
    for (name, color, width) in key {
        area.draw(&PathElement::new(
            vec![(x, 14), (x + 22, 14)],
            color.stroke_width(*width + 1),
        ))
        .map_err(err)?;
        area.draw(&Text::new(
            name.to_string(),
            (x + 28, 7),
            (FONT, 13).into_font().color(color),
        ))
        .map_err(err)?;
        x += 28 + (name.len() as f64 * 6.5) as i32 + 18;
    }
    Ok(())
}

/// State bands (pale) and the outage windows (edges) behind a panel's lines.
fn shade(
    chart: &mut Chart<'_, '_>,
    bands: &[(f64, f64, State)],
    outages: &[(f64, f64)],
    y_max: f64,
    root: &DrawingArea<SVGBackend<'_>, Shift>,
) -> Res<()> {
    chart
        .draw_series(
            bands
                .iter()
                .filter(|(_, _, s)| *s != State::Closed)
                .map(|(a, b, s)| {
                    Rectangle::new(
                        [(*a, 0.0), (*b, y_max)],
                        state_colors(*s).0.mix(0.5).filled(),
                    )
                }),
        )
        .map_err(err)?;
    let edge = RGBColor(110, 110, 110).stroke_width(1);
    for (a, b) in outages {
        for x in [*a, *b] {
            let top = chart.backend_coord(&(x, y_max));
            let bottom = chart.backend_coord(&(x, 0.0));
            root.draw(&PathElement::new(vec![top, bottom], edge))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Two rows: the breaker's state, one coloured band per span with its name when it fits,
/// and the dependency (healthy, or down during an outage).
fn state_strip(
    strip: &DrawingArea<SVGBackend<'_>, Shift>,
    bands: &[(f64, f64, State)],
    outages: &[(f64, f64)],
    x_end: f64,
    root: &DrawingArea<SVGBackend<'_>, Shift>,
) -> Res<()> {
    let mut chart = ChartBuilder::on(strip)
        .margin_left(8)
        .margin_right(RIGHT)
        .margin_top(26)
        .margin_bottom(4)
        .y_label_area_size(LEFT - 8)
        .build_cartesian_2d(0f64..x_end, 0f64..2.1f64)
        .map_err(err)?;
    let mut key = Vec::new();
    for s in [State::Closed, State::Open, State::HalfOpen] {
        key.push((s.name(), state_colors(s).1, 8));
    }
    panel_title(strip, "Breaker state and dependency:", &key)?;
    chart
        .draw_series(
            bands.iter().map(|(a, b, s)| {
                Rectangle::new([(*a, 1.1), (*b, 2.1)], state_colors(*s).0.filled())
            }),
        )
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(0.0, 0.0), (x_end, 1.0)],
            RGBColor(232, 245, 233).filled(),
        )))
        .map_err(err)?;
    chart
        .draw_series(
            outages.iter().map(|(a, b)| {
                Rectangle::new([(*a, 0.0), (*b, 1.0)], RGBColor(97, 97, 97).filled())
            }),
        )
        .map_err(err)?;
    let small = |c: RGBColor| {
        (FONT, 11)
            .into_font()
            .color(&c)
            .pos(Pos::new(HPos::Center, VPos::Center))
    };
    for (a, b, s) in bands {
        let (x0, y) = chart.backend_coord(&(*a, 1.6));
        let (x1, _) = chart.backend_coord(&(*b, 1.6));
        let name = s.name();
        // About 7 px a character at 11 px.
        if (x1 - x0) as usize > name.len() * 7 + 4 {
            root.draw(&Text::new(
                name,
                ((x0 + x1) / 2, y),
                small(state_colors(*s).1),
            ))
            .map_err(err)?;
        }
    }
    for (a, b) in outages {
        let (x0, y) = chart.backend_coord(&(*a, 0.5));
        let (x1, _) = chart.backend_coord(&(*b, 0.5));
        if x1 - x0 > 50 {
            root.draw(&Text::new("OUTAGE", ((x0 + x1) / 2, y), small(WHITE)))
                .map_err(err)?;
        }
    }
    for (row, label) in [(1.6, "breaker"), (0.5, "dependency")] {
        let (x0, y) = chart.backend_coord(&(0.0, row));
        root.draw(&Text::new(
            label,
            (x0 - 6, y),
            (FONT, 12)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(err)?;
    }
    Ok(())
}
