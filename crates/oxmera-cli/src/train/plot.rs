//! The PNG of a run's curves: training loss on the left, train and test
//! accuracy on the right, one point per epoch.

use std::path::Path;

use plotters::prelude::*;

use super::report::Metrics;

/// The font the charts are lettered in, embedded so that drawing needs no
/// system font library (see `assets/fonts/PROVENANCE.md`).
const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono.ttf");
const FAMILY: &str = "oxmera-mono";

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Only fails on bytes that are not a font, which these are.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

/// Draws the curves of `metrics` into a PNG at `path`.
pub fn curves(
    path: &Path,
    metrics: &Metrics,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    register_font();
    let root = BitMapBackend::new(path, (1000, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(500);
    let epochs = metrics.epochs.len().max(1) as f64;

    let losses: Vec<(f64, f64)> = metrics
        .epochs
        .iter()
        .map(|e| (e.epoch as f64, e.loss))
        .collect();
    let max_loss = losses.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-3) * 1.05;
    let mut chart = ChartBuilder::on(&left)
        .caption("training loss", (FAMILY, 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..epochs, 0.0..max_loss)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .label_style((FAMILY, 12))
        .draw()?;
    chart.draw_series(LineSeries::new(losses, BLUE.stroke_width(2)))?;

    let mut chart = ChartBuilder::on(&right)
        .caption("accuracy", (FAMILY, 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..epochs, 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .label_style((FAMILY, 12))
        .draw()?;
    let train: Vec<(f64, f64)> = metrics
        .epochs
        .iter()
        .map(|e| (e.epoch as f64, e.train_accuracy))
        .collect();
    let test: Vec<(f64, f64)> = metrics
        .epochs
        .iter()
        .map(|e| (e.epoch as f64, e.test_accuracy))
        .collect();
    chart
        .draw_series(LineSeries::new(train, GREEN.stroke_width(2)))?
        .label("train")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], GREEN.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(test, RED.stroke_width(2)))?
        .label("test")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FAMILY, 12))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
