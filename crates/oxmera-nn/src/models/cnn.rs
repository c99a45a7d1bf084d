//! The small convolutional classifier `oxmera train --model cnn` trains:
//! two 3 × 3 "same" convolutions, each followed by a ReLU and 2 × 2 max
//! pooling, then two linear layers. An `h × w` image with `c` channels
//! leaves the convolutions as 32 maps of `(h/4) × (w/4)`.
//!
//! [`CnnConfig::conv_layers`] lists the convolutions with the shapes of
//! their inputs, so that a benchmark can time exactly the layers the model
//! runs (`oxmera-bench` does), and [`CnnConfig::build`] builds the network
//! from that same list.

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::Generator;

use crate::{Conv2d, Flatten, Linear, MaxPool2d, ReLU, Sequential};

/// The images and classes a [`CnnConfig::build`] network is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CnnConfig {
    /// Input channels (1 for the digits).
    pub channels: usize,
    /// Image height.
    pub height: usize,
    /// Image width.
    pub width: usize,
    /// Classes (the width of the last layer).
    pub classes: usize,
}

/// One convolution of the network, with its input's size: it maps
/// `[n, in_channels, height, width]` to `[n, out_channels, height_out,
/// width_out]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvLayerShape {
    /// Channels in.
    pub in_channels: usize,
    /// Channels out.
    pub out_channels: usize,
    /// Kernel `(height, width)`.
    pub kernel: (usize, usize),
    /// Stride `(height, width)`.
    pub stride: (usize, usize),
    /// Zero padding on each side, `(height, width)`.
    pub padding: (usize, usize),
    /// The input's height.
    pub height: usize,
    /// The input's width.
    pub width: usize,
}

/// Output channels of the two convolutions.
const WIDTHS: [usize; 2] = [16, 32];
/// Width of the hidden linear layer.
const HIDDEN: usize = 64;

impl CnnConfig {
    /// The convolutions in order, each with its input's size (each is
    /// followed by 2 × 2 pooling, which halves the next one's, rounding
    /// down).
    pub fn conv_layers(&self) -> Vec<ConvLayerShape> {
        let (mut c, mut h, mut w) = (self.channels, self.height, self.width);
        WIDTHS
            .iter()
            .map(|&out| {
                let layer = ConvLayerShape {
                    in_channels: c,
                    out_channels: out,
                    kernel: (3, 3),
                    stride: (1, 1),
                    padding: (1, 1),
                    height: h,
                    width: w,
                };
                (c, h, w) = (out, h / 2, w / 2);
                layer
            })
            .collect()
    }

    /// The network, its weights drawn from `rng` in layer order (so one
    /// seed gives one network), in `dtype` on `device`.
    ///
    /// Errors: as [`Conv2d::new`] and [`Linear::new`] (a zero size).
    pub fn build(&self, rng: &mut Generator, dtype: DType, device: Device) -> Result<Sequential> {
        let mut net = Sequential::new();
        let (mut c, mut h, mut w) = (self.channels, self.height, self.width);
        for l in self.conv_layers() {
            net = net
                .push(
                    Conv2d::new(l.in_channels, l.out_channels, l.kernel, rng, dtype, device)?
                        .stride(l.stride)
                        .padding(l.padding),
                )
                .push(ReLU)
                .push(MaxPool2d::new((2, 2)));
            (c, h, w) = (l.out_channels, h / 2, w / 2);
        }
        let flat = c * h * w;
        Ok(net
            .push(Flatten::new())
            .push(Linear::new(flat, HIDDEN, true, rng, dtype, device)?)
            .push(ReLU)
            .push(Linear::new(HIDDEN, self.classes, true, rng, dtype, device)?))
    }
}

#[cfg(test)]
mod tests {
    use oxmera_tensor::Tensor;

    use super::*;
    use crate::Module;

    /// The network as `oxmera train --model cnn` wrote it out before it
    /// moved here: the same layers in the same order, so one seed gives
    /// the same weights under the same names (checkpoints and runs of
    /// the CLI are unchanged by the move).
    #[test]
    fn build_matches_the_layers_written_out() {
        let (dt, dev) = (DType::F64, Device::Reference);
        let cfg = CnnConfig {
            channels: 1,
            height: 8,
            width: 8,
            classes: 10,
        };
        let rng = &mut Generator::new(5);
        let by_hand = Sequential::new()
            .push(
                Conv2d::new(1, 16, (3, 3), rng, dt, dev)
                    .unwrap()
                    .padding((1, 1)),
            )
            .push(ReLU)
            .push(MaxPool2d::new((2, 2)))
            .push(
                Conv2d::new(16, 32, (3, 3), rng, dt, dev)
                    .unwrap()
                    .padding((1, 1)),
            )
            .push(ReLU)
            .push(MaxPool2d::new((2, 2)))
            .push(Flatten::new())
            .push(Linear::new(32 * 2 * 2, 64, true, rng, dt, dev).unwrap())
            .push(ReLU)
            .push(Linear::new(64, 10, true, rng, dt, dev).unwrap());
        let built = cfg.build(&mut Generator::new(5), dt, dev).unwrap();
        let (a, b) = (by_hand.named_parameters(), built.named_parameters());
        assert_eq!(a.len(), b.len());
        for ((na, pa), (nb, pb)) in a.iter().zip(&b) {
            assert_eq!(na, nb);
            let (ta, tb) = (pa.tensor(), pb.tensor());
            assert_eq!(ta.dims(), tb.dims(), "{na}");
            assert_eq!(
                ta.to_vec::<f64>().unwrap(),
                tb.to_vec::<f64>().unwrap(),
                "{na}"
            );
        }
    }

    #[test]
    fn the_layers_follow_the_image_through_the_pools() {
        let digits = CnnConfig {
            channels: 1,
            height: 8,
            width: 8,
            classes: 10,
        };
        let l = digits.conv_layers();
        assert_eq!(l.len(), 2);
        assert_eq!(
            (l[0].in_channels, l[0].out_channels, l[0].height, l[0].width),
            (1, 16, 8, 8)
        );
        assert_eq!(
            (l[1].in_channels, l[1].out_channels, l[1].height, l[1].width),
            (16, 32, 4, 4)
        );
        let net = digits
            .build(&mut Generator::new(1), DType::F64, Device::Reference)
            .unwrap();
        let x = Tensor::zeros([3, 1, 8, 8], DType::F64, Device::Reference).unwrap();
        assert_eq!(net.forward(&x).unwrap().dims(), &[3, 10]);
    }
}
