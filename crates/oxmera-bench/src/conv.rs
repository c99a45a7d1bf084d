//! Convolution rows: forward and backward of each shape, against PyTorch
//! (oneDNN) in the same run.
//!
//! The shapes are the CNN's own layers as `oxmera train --model cnn`
//! builds them on the digits (read from [`CnnConfig::conv_layers`]) at its
//! training batch size, and four image-sized layers: `[8,32,64,64]` 3 × 3
//! → 32 channels, and on `[8,64,56,56]` a 3 × 3 → 64, a 1 × 1 → 256 and a
//! 3 × 3 stride-2 → 128 (ResNet's stages). Padding is `k/2` throughout.
//!
//! Backward is one row: the CPU backend computes `∂x` and `∂W` in one
//! call ([`Backend::conv2d_backward`]), and PyTorch's peer runs the call
//! its autograd makes, `aten::convolution_backward` with both outputs
//! asked for. Its cost is twice the forward's multiply-adds.

use std::time::Instant;

use oxmera_core::{Device, Result};
use oxmera_nn::models::{CnnConfig, ConvLayerShape};
use oxmera_tensor::{Conv2dParams, registry};

use crate::measure::Contender;
use crate::{PyPeers, keep};
use crate::{Report, Sizes, Work, measure_and_record, python_contender, randn};

/// The batch size `oxmera train` uses unless told otherwise
/// (`--batch-size`'s default in the CLI, which this crate cannot depend
/// on).
pub const CNN_BATCH: usize = 32;

/// The digits' image: one channel of 8 × 8, ten classes.
pub const DIGITS: CnnConfig = CnnConfig {
    channels: 1,
    height: 8,
    width: 8,
    classes: 10,
};

/// One convolution to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConvShape {
    /// `[n, c_in, h, w]`.
    pub input: [usize; 4],
    pub c_out: usize,
    /// Square kernel.
    pub k: usize,
    pub stride: usize,
    /// Zero padding on each side (the model's own for its layers; `k / 2`,
    /// "same" at stride 1, for the image shapes).
    pub pad: usize,
    /// Where it comes from, for the table (`cnn layer 1`), if anywhere.
    pub label: Option<&'static str>,
}

impl ConvShape {
    fn of_layer(batch: usize, l: &ConvLayerShape, label: &'static str) -> ConvShape {
        ConvShape {
            input: [batch, l.in_channels, l.height, l.width],
            c_out: l.out_channels,
            k: l.kernel.0,
            stride: l.stride.0,
            pad: l.padding.0,
            label: Some(label),
        }
    }

    fn params(&self) -> Conv2dParams {
        Conv2dParams {
            stride: (self.stride, self.stride),
            padding: (self.pad, self.pad),
            ..Conv2dParams::default()
        }
    }

    /// Output height and width.
    fn out_hw(&self) -> (usize, usize) {
        let [_, _, h, w] = self.input;
        let o = |d: usize| (d + 2 * self.pad - self.k) / self.stride + 1;
        (o(h), o(w))
    }

    /// Floating-point operations of the forward pass.
    fn flops(&self) -> f64 {
        let [n, ci, _, _] = self.input;
        let (ho, wo) = self.out_hw();
        2.0 * (n * self.c_out * ho * wo * ci * self.k * self.k) as f64
    }

    /// `8x64x56x56_k3_s2_c128` (no `_s1`, so that the stride-1 rows keep
    /// the names of earlier reports).
    fn tag(&self) -> String {
        let [n, ci, h, w] = self.input;
        let s = if self.stride == 1 {
            String::new()
        } else {
            format!("_s{}", self.stride)
        };
        format!("{n}x{ci}x{h}x{w}_k{}{s}_c{}", self.k, self.c_out)
    }

    /// The peer's arguments: n, c_in, h, w, c_out, k, stride, padding.
    fn args(&self) -> Vec<usize> {
        let [n, ci, h, w] = self.input;
        vec![n, ci, h, w, self.c_out, self.k, self.stride, self.pad]
    }
}

/// The shapes of a run: the CNN's layers on the digits, then the image
/// layers (in quick mode, tiny stand-ins for them).
pub(crate) fn shapes(quick: bool) -> Vec<ConvShape> {
    let labels = ["cnn layer 1", "cnn layer 2", "cnn layer 3", "cnn layer 4"];
    let batch = if quick { 2 } else { CNN_BATCH };
    let mut v: Vec<ConvShape> = DIGITS
        .conv_layers()
        .iter()
        .zip(labels)
        .map(|(l, label)| ConvShape::of_layer(batch, l, label))
        .collect();
    let image = |input, c_out, k, stride| ConvShape {
        input,
        c_out,
        k,
        stride,
        pad: k / 2,
        label: None,
    };
    if quick {
        v.push(image([2, 3, 8, 8], 4, 3, 1));
        v.push(image([2, 4, 9, 9], 8, 3, 2));
        v.push(image([2, 4, 8, 8], 8, 1, 1));
    } else {
        v.push(image([8, 32, 64, 64], 32, 3, 1));
        v.push(image([8, 64, 56, 56], 64, 3, 1));
        v.push(image([8, 64, 56, 56], 256, 1, 1));
        v.push(image([8, 64, 56, 56], 128, 3, 2));
    }
    v
}

/// Forward and backward rows for every shape of the run.
pub(crate) fn rows(report: &mut Report, sizes: &Sizes, py: &PyPeers<'_>) -> Result<()> {
    for s in &sizes.conv {
        forward(report, sizes, py, s)?;
        backward(report, sizes, py, s)?;
    }
    Ok(())
}

fn forward(report: &mut Report, sizes: &Sizes, py: &PyPeers<'_>, s: &ConvShape) -> Result<()> {
    let [_, ci, _, _] = s.input;
    let x = randn(31, &s.input, Device::Cpu)?;
    let wt = randn(32, &[s.c_out, ci, s.k, s.k], Device::Cpu)?;
    let bias = randn(33, &[s.c_out], Device::Cpu)?;
    let params = s.params();
    let mut cs = vec![Contender::reporting("oxmera", || {
        let t = Instant::now();
        keep(x.conv2d(&wt, Some(&bias), params))?;
        Ok(t.elapsed().as_secs_f64())
    })];
    if s.flops() <= 1e7 {
        let (rx, rw, rb) = (
            x.to_device(Device::Reference)?,
            wt.to_device(Device::Reference)?,
            bias.to_device(Device::Reference)?,
        );
        cs.push(Contender::reporting("reference", move || {
            let t = Instant::now();
            keep(rx.conv2d(&rw, Some(&rb), params))?;
            Ok(t.elapsed().as_secs_f64())
        }));
    }
    if py.has("torch") {
        cs.push(python_contender(py.process, "torch", "conv", s.args()));
    }
    if let Some(label) = s.label {
        report.note(&format!("{label} of the digits CNN, batch {}:", s.input[0]));
    }
    let name = format!("conv2d_f32_{}", s.tag());
    measure_and_record(report, sizes.plan, &name, Work::Flops(s.flops()), cs)
}

fn backward(report: &mut Report, sizes: &Sizes, py: &PyPeers<'_>, s: &ConvShape) -> Result<()> {
    let [n, ci, _, _] = s.input;
    let (ho, wo) = s.out_hw();
    let x = randn(34, &s.input, Device::Cpu)?;
    let wt = randn(35, &[s.c_out, ci, s.k, s.k], Device::Cpu)?;
    let gy = randn(36, &[n, s.c_out, ho, wo], Device::Cpu)?;
    let params = s.params();
    let backend = registry::backend(Device::Cpu)?;
    let mut cs = vec![Contender::reporting("oxmera", move || {
        let t = Instant::now();
        keep(backend.conv2d_backward(&x, &wt, &gy, params))?;
        Ok(t.elapsed().as_secs_f64())
    })];
    if py.has("torch") {
        cs.push(python_contender(py.process, "torch", "conv_bwd", s.args()));
    }
    let name = format!("conv2d_bwd_f32_{}", s.tag());
    measure_and_record(report, sizes.plan, &name, Work::Flops(2.0 * s.flops()), cs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cnn_layers_come_first_and_name_their_shapes() {
        let full = shapes(false);
        assert_eq!(full.len(), 6);
        assert_eq!(full[0].input, [CNN_BATCH, 1, 8, 8]);
        assert_eq!((full[0].c_out, full[0].label), (16, Some("cnn layer 1")));
        assert_eq!(full[1].input, [CNN_BATCH, 16, 4, 4]);
        assert_eq!(full[2].tag(), "8x32x64x64_k3_c32");
        let s2 = full[5];
        assert_eq!(s2.tag(), "8x64x56x56_k3_s2_c128");
        assert_eq!(s2.out_hw(), (28, 28));
        assert_eq!(s2.args(), vec![8, 64, 56, 56, 128, 3, 2, 1]);
        assert_eq!(s2.flops(), 2.0 * (8 * 128 * 28 * 28 * 64 * 9) as f64);
        assert_eq!(full[4].out_hw(), (56, 56));
        assert_eq!(full[4].params().padding, (0, 0));
    }
}
