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
    // The held-out loss beside it where the run recorded one that the
    // table shows (the language model's validation loss).
    let held_out: Vec<(f64, f64)> = metrics
        .epochs
        .iter()
        .filter(|_| metrics.config.model == "transformer")
        .filter_map(|e| e.test_loss.map(|l| (e.epoch as f64, l)))
        .collect();
    let max_loss = losses
        .iter()
        .chain(&held_out)
        .map(|p| p.1)
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.05;
    let caption = if held_out.is_empty() {
        "training loss"
    } else {
        "loss (blue: training, red: validation)"
    };
    let mut chart = ChartBuilder::on(&left)
        .caption(caption, (FAMILY, 18))
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
    if !held_out.is_empty() {
        chart.draw_series(LineSeries::new(held_out, RED.stroke_width(2)))?;
    }

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

/// Draws a confusion matrix (`matrix[true][predicted]`) as a PNG at
/// `path`: one cell per pair, shaded by its share of the true class's
/// samples, its count written in it.
pub fn confusion(
    path: &Path,
    matrix: &[Vec<u64>],
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    register_font();
    let n = matrix.len().max(1);
    let root = BitMapBackend::new(path, (560, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("confusion (rows: true, columns: predicted)", (FAMILY, 16))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(40)
        .build_cartesian_2d((0..n - 1).into_segmented(), (0..n - 1).into_segmented())?;
    // (A segmented range a..b has a segment for every value of a..=b.)
    // Segment k of the y axis holds the true class n-1-k, so that class 0
    // is the top row, as in the printed table.
    let class = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(k) | SegmentValue::Exact(k) if *k < n => k.to_string(),
        _ => String::new(),
    };
    let row_class = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(k) | SegmentValue::Exact(k) if *k < n => (n - 1 - k).to_string(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(n)
        .y_labels(n)
        .x_label_formatter(&class)
        .y_label_formatter(&row_class)
        .x_desc("predicted")
        .y_desc("true")
        .label_style((FAMILY, 12))
        .draw()?;
    for (t, row) in matrix.iter().enumerate() {
        let total = row.iter().sum::<u64>().max(1) as f64;
        let y = n - 1 - t;
        for (p, &count) in row.iter().enumerate() {
            let share = count as f64 / total;
            let shade = RGBColor(
                (255.0 * (1.0 - 0.8 * share)) as u8,
                (255.0 * (1.0 - 0.6 * share)) as u8,
                255,
            );
            chart.draw_series(std::iter::once(Rectangle::new(
                [
                    (SegmentValue::Exact(p), SegmentValue::Exact(y)),
                    (SegmentValue::Exact(p + 1), SegmentValue::Exact(y + 1)),
                ],
                shade.filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                count.to_string(),
                (SegmentValue::CenterOf(p), SegmentValue::CenterOf(y)),
                (FAMILY, 12),
            )))?;
        }
    }
    root.present()?;
    Ok(())
}
