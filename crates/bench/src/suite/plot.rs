//! PNG plots of a run's series: one file per plot, one line per series
//! (throughput against clients, the W5 growth curves, latency curves).
//! Text is drawn with DejaVu Sans, read from the system's fonts (Debian's
//! `fonts-dejavu-core`), so the plots need no C font libraries.

use super::report::Series;
use super::Res;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::OnceLock;

/// Where Debian, Fedora and Arch keep DejaVu Sans.
const FONT_PATHS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

/// Registers the font once; the error says how to get it.
fn font() -> Res<()> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let bytes = FONT_PATHS
            .iter()
            .find_map(|p| std::fs::read(p).ok())
            .ok_or("DejaVu Sans was not found for the plots (apt-get install fonts-dejavu-core)")?;
        plotters::style::register_font("sans-serif", FontStyle::Normal, Box::leak(bytes.into_boxed_slice()))
            .map_err(|_| "DejaVuSans.ttf is not a usable font".to_string())
    })
    .clone()
    .map_err(Into::into)
}

/// Draws every plot in `series` into `out/<plot>.png`; returns each
/// file's name and title.
pub fn draw_all(series: &[Series], out: &Path) -> Res<Vec<(String, String)>> {
    let mut plots: Vec<&str> = Vec::new();
    for s in series {
        if !plots.contains(&s.plot.as_str()) {
            plots.push(&s.plot);
        }
    }
    let mut files = Vec::new();
    for plot in plots {
        let lines: Vec<&Series> = series.iter().filter(|s| s.plot == plot).collect();
        let file = format!("{plot}.png");
        draw(&lines, &out.join(&file))?;
        files.push((file, lines[0].title.clone()));
    }
    Ok(files)
}

/// A quantile on the "nines" axis: 0.9 is 1, 0.99 is 2, 0.999 is 3.
fn nines(q: f64) -> f64 {
    -(1.0 - q).max(1e-9).log10()
}

const COLORS: [RGBColor; 6] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];

fn draw(lines: &[&Series], file: &Path) -> Res<()> {
    font()?;
    let first = lines[0];
    let quantile = first.quantile_x;
    let x_of = |x: f64| if quantile { nines(x) } else { x };
    let points = lines.iter().flat_map(|s| s.points.iter().map(|&(x, y)| (x_of(x), y)));
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for (x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if x0 >= x1 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let root = BitMapBackend::new(file, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&first.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(|e| e.to_string())?;
    let label_x = |x: &f64| {
        if quantile {
            format!("p{}", 100.0 * (1.0 - 10f64.powf(-x)))
        } else if (x - x.round()).abs() < 1e-9 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    };
    chart
        .configure_mesh()
        .x_desc(&first.x_label)
        .y_desc(&first.y_label)
        .x_label_formatter(&label_x)
        .y_label_formatter(&|y| super::report::number(*y))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, s) in lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (x_of(x), y)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(&s.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        if pts.len() <= 40 {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| e.to_string())?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}
