//! SVG plots of the report (plotters' SVG backend, no system fonts): ns/block against
//! kernel size per phase (log-log), and per-kernel Gyre / LLVM ratio bars.

use plotters::prelude::*;
use std::path::Path;

/// One line of a log-log plot: a label and its (blocks, ns/block) points.
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points, ascending in blocks.
    pub points: Vec<(f64, f64)>,
    /// Dashed look for LLVM lines (drawn thinner, with point markers).
    pub llvm: bool,
}

fn err(e: impl std::fmt::Display) -> String {
    format!("plot: {e}")
}

/// A log-log plot of ns/block against blocks, one line per series.
pub fn speed_plot(path: &Path, title: &str, series: &[Series]) -> Result<(), String> {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        if x > 0.0 && y > 0.0 {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if x0 > x1 {
        return Err(format!("plot {title}: no points"));
    }
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (x0 / 1.5..x1 * 1.5).log_scale(),
            (y0 / 2.0..y1 * 2.0).log_scale(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("blocks")
        .y_desc("ns/block")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let width = if s.llvm { 1 } else { 2 };
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|&(x, y)| x > 0.0 && y > 0.0)
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(width)))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
        if s.llvm {
            chart
                .draw_series(pts.iter().map(|&p| Cross::new(p, 4, color.stroke_width(1))))
                .map_err(err)?;
        } else {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Horizontal bars of Gyre / LLVM ratios per kernel (1.0 marked): red above 1 (Gyre's
/// code is larger or slower), green at or below.
pub fn ratio_bars(path: &Path, title: &str, bars: &[(String, f64)]) -> Result<(), String> {
    if bars.is_empty() {
        return Err(format!("plot {title}: no bars"));
    }
    let n = bars.len();
    let max = bars.iter().map(|b| b.1).fold(1.0f64, f64::max) * 1.1;
    let height = (60 + 18 * n).max(200) as u32;
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    // Room to the right of the longest bar for its label.
    let max = max * 1.6;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(10)
        .build_cartesian_2d(0.0..max, 0.0..n as f64)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_desc("Gyre / LLVM")
        .draw()
        .map_err(err)?;
    // Each bar's label (kernel and ratio) just right of it.
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (name, r))| {
            let y = (n - 1 - i) as f64;
            Text::new(
                format!("{name} {r:.2}"),
                (*r + max * 0.01, y + 0.75),
                ("sans-serif", 12),
            )
        }))
        .map_err(err)?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (_, r))| {
            let y = (n - 1 - i) as f64;
            let color = if *r > 1.0 {
                RED.mix(0.7)
            } else {
                GREEN.mix(0.7)
            };
            Rectangle::new([(0.0, y + 0.15), (*r, y + 0.85)], color.filled())
        }))
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            [(1.0, 0.0), (1.0, n as f64)],
            BLACK.stroke_width(1),
        )))
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_svg_files() {
        let dir = std::env::temp_dir().join(format!("gyre-perf-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("speed.svg");
        let s = [
            Series {
                label: "cfg".into(),
                points: vec![(1e3, 20.0), (1e4, 22.0), (1e5, 30.0)],
                llvm: false,
            },
            Series {
                label: "LLVM".into(),
                points: vec![(1e3, 2000.0), (1e4, 2500.0)],
                llvm: true,
            },
        ];
        speed_plot(&p, "nest", &s).expect("plots");
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("<svg") && text.contains("ns/block") && text.contains("cfg"));
        let b = dir.join("bars.svg");
        ratio_bars(&b, "static", &[("a".into(), 1.5), ("b".into(), 0.5)]).expect("plots");
        let text = std::fs::read_to_string(&b).unwrap();
        assert!(text.contains("<rect") && text.contains("Gyre / LLVM"));
        assert!(text.contains("a 1.50") && text.contains("b 0.50"), "{text}");
        assert!(speed_plot(&dir.join("x.svg"), "none", &[]).is_err());
        assert!(ratio_bars(&dir.join("y.svg"), "none", &[]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
