//! Convolution and pooling on the reference backend: small cases computed
//! by hand (each comment shows the arithmetic), every layout variant,
//! stride-0 broadcasts, zero-size and size-1 dims, every error path, and
//! property tests against a separately written definition.

mod common;
use common::*;

use oxmera_core::{DType, Error};
use oxmera_tensor::{Conv2dParams, Pool2dParams, Tensor};
use proptest::prelude::*;

/// 1..=9 as a 1x1x3x3 image:
/// ```text
/// 1 2 3
/// 4 5 6
/// 7 8 9
/// ```
const NINE: [f64; 9] = [1., 2., 3., 4., 5., 6., 7., 8., 9.];

/// The kernel
/// ```text
/// 1 2
/// 3 4
/// ```
const K: [f64; 4] = [1., 2., 3., 4.];

/// 0..16 as a 1x1x4x4 image.
fn sixteen() -> Vec<f64> {
    (0..16).map(f64::from).collect()
}

fn params(stride: usize, padding: usize, dilation: usize, groups: usize) -> Conv2dParams {
    Conv2dParams {
        stride: (stride, stride),
        padding: (padding, padding),
        dilation: (dilation, dilation),
        groups,
    }
}

fn pool(kernel: usize, stride: usize, padding: usize) -> Pool2dParams {
    Pool2dParams {
        kernel: (kernel, kernel),
        stride: (stride, stride),
        padding: (padding, padding),
    }
}

// ------------------------------------------------------------ conv2d

#[test]
fn conv2d_2x2_kernel_over_3x3_on_every_layout() {
    // out[0][0] = 1·1 + 2·2 + 4·3 + 5·4 = 37
    // out[0][1] = 2·1 + 3·2 + 5·3 + 6·4 = 47
    // out[1][0] = 4·1 + 5·2 + 7·3 + 8·4 = 67
    // out[1][1] = 5·1 + 6·2 + 8·3 + 9·4 = 77
    for (xn, x) in variants(&NINE, &[1, 1, 3, 3], DType::F32) {
        for (wn, w) in variants(&K, &[1, 1, 2, 2], DType::F32) {
            let y = x.conv2d(&w, None, Conv2dParams::default()).unwrap();
            assert_close(&y, &[37., 47., 67., 77.], &[1, 1, 2, 2], 0.0);
            let b = f32t(&[0.5], &[1]);
            let y = x.conv2d(&w, Some(&b), Conv2dParams::default()).unwrap();
            assert_close(&y, &[37.5, 47.5, 67.5, 77.5], &[1, 1, 2, 2], 0.0);
            assert_eq!(y.dtype(), DType::F32, "{xn} {wn}");
        }
    }
}

#[test]
fn conv2d_with_stride_2() {
    // 0..16 as 4x4, kernel [[1, 2], [3, 4]] stepping by 2 visits the four
    // 2x2 blocks: top-left 0·1 + 1·2 + 4·3 + 5·4 = 34, top-right
    // 2 + 6 + 18 + 28 = 54, bottom-left 8 + 18 + 36 + 52 = 114,
    // bottom-right 10 + 22 + 42 + 60 = 134.
    for (_, x) in variants(&sixteen(), &[1, 1, 4, 4], DType::F64) {
        let w = t(&K, &[1, 1, 2, 2], DType::F64);
        let y = x.conv2d(&w, None, params(2, 0, 1, 1)).unwrap();
        assert_close(&y, &[34., 54., 114., 134.], &[1, 1, 2, 2], 0.0);
    }
    // On 3x3 the second window would overhang: (3 - 2) / 2 + 1 = 1.
    let y = f32t(&NINE, &[1, 1, 3, 3])
        .conv2d(&f32t(&K, &[1, 1, 2, 2]), None, params(2, 0, 1, 1))
        .unwrap();
    assert_close(&y, &[37.], &[1, 1, 1, 1], 0.0);
}

#[test]
fn conv2d_with_padding_1() {
    // A 2x2 box of ones over 1..9 with a border of zeros sums each window:
    // the corners see one real element, the edges two, the middle four.
    #[rustfmt::skip]
    let expected = [
        1.,  3.,  5.,  3.,
        5., 12., 16.,  9.,
        11., 24., 28., 15.,
        7., 15., 17.,  9.,
    ];
    for (_, x) in variants(&NINE, &[1, 1, 3, 3], DType::F32) {
        let w = f32t(&[1.0; 4], &[1, 1, 2, 2]);
        let y = x.conv2d(&w, None, params(1, 1, 1, 1)).unwrap();
        assert_close(&y, &expected, &[1, 1, 4, 4], 0.0);
    }
    // Padding on one axis only: (3 + 0 - 2) + 1 = 2 rows, (3 + 2 - 2) + 1 = 4 columns.
    let x = f32t(&NINE, &[1, 1, 3, 3]);
    let p = Conv2dParams {
        padding: (0, 1),
        ..Conv2dParams::default()
    };
    let y = x.conv2d(&f32t(&[1.0; 4], &[1, 1, 2, 2]), None, p).unwrap();
    assert_close(
        &y,
        &[5., 12., 16., 9., 11., 24., 28., 15.],
        &[1, 1, 2, 4],
        0.0,
    );
}

#[test]
fn conv2d_with_dilation_2() {
    // Taps 2 apart: out[i][j] = x[i][j]·1 + x[i][j+2]·2 + x[i+2][j]·3 + x[i+2][j+2]·4.
    // On 0..16 as 4x4 (x[r][c] = 4r + c):
    // out[0][0] = 0 + 2·2 + 8·3 + 10·4 = 68,  out[0][1] = 1 + 6 + 27 + 44 = 78,
    // out[1][0] = 4 + 12 + 36 + 56 = 108,    out[1][1] = 5 + 14 + 39 + 60 = 118.
    for (_, x) in variants(&sixteen(), &[1, 1, 4, 4], DType::F32) {
        let w = f32t(&K, &[1, 1, 2, 2]);
        let y = x.conv2d(&w, None, params(1, 0, 2, 1)).unwrap();
        assert_close(&y, &[68., 78., 108., 118.], &[1, 1, 2, 2], 0.0);
    }
    // On 3x3 the dilated kernel spans exactly the corners: 1 + 3·2 + 7·3 + 9·4 = 64.
    let y = f32t(&NINE, &[1, 1, 3, 3])
        .conv2d(&f32t(&K, &[1, 1, 2, 2]), None, params(1, 0, 2, 1))
        .unwrap();
    assert_close(&y, &[64.], &[1, 1, 1, 1], 0.0);
}

#[test]
fn conv2d_with_groups_2() {
    // Two input channels, [[1, 2], [3, 4]] and [[5, 6], [7, 8]]; four
    // output channels in two groups: outputs 0 and 1 see channel 0 only,
    // outputs 2 and 3 see channel 1 only. Kernels alternate between the
    // diagonal [[1, 0], [0, 1]] and all ones:
    // out = [1 + 4, 1 + 2 + 3 + 4, 5 + 8, 5 + 6 + 7 + 8] = [5, 10, 13, 26].
    let x_values = [1., 2., 3., 4., 5., 6., 7., 8.];
    let w = f32t(
        &[
            1., 0., 0., 1., 1., 1., 1., 1., 1., 0., 0., 1., 1., 1., 1., 1.,
        ],
        &[4, 1, 2, 2],
    );
    for (_, x) in variants(&x_values, &[1, 2, 2, 2], DType::F32) {
        let y = x.conv2d(&w, None, params(1, 0, 1, 2)).unwrap();
        assert_close(&y, &[5., 10., 13., 26.], &[1, 4, 1, 1], 0.0);
        let b = f32t(&[1., 2., 3., 4.], &[4]);
        let y = x.conv2d(&w, Some(&b), params(1, 0, 1, 2)).unwrap();
        assert_close(&y, &[6., 12., 16., 30.], &[1, 4, 1, 1], 0.0);
    }
}

#[test]
fn conv2d_sums_over_input_channels_and_keeps_batches_apart() {
    // A 1x1 kernel [1, 10] mixes two channels: out = ch0 + 10·ch1.
    // Batch 0: ch0 = [1, 2], ch1 = [3, 4] → [31, 42];
    // batch 1: ch0 = [5, 6], ch1 = [7, 8] → [75, 86].
    let x = f32t(&[1., 2., 3., 4., 5., 6., 7., 8.], &[2, 2, 1, 2]);
    let w = f32t(&[1., 10.], &[1, 2, 1, 1]);
    let y = x.conv2d(&w, None, Conv2dParams::default()).unwrap();
    assert_close(&y, &[31., 42., 75., 86.], &[2, 1, 1, 2], 0.0);
}

#[test]
fn conv2d_reads_stride_0_broadcasts() {
    // One row [1, 2, 3] repeated three times, boxed by 2x2 ones: each
    // window holds two copies of a pair of neighbours: 2·(1+2), 2·(2+3).
    let x = f32t(&[1., 2., 3.], &[1, 1, 1, 3])
        .broadcast_to([2, 1, 3, 3])
        .unwrap();
    let w = f32t(&[1.0], &[1, 1, 1, 1])
        .broadcast_to([1, 1, 2, 2])
        .unwrap();
    let b = f32t(&[1.0], &[]).broadcast_to([1]).unwrap();
    let y = x.conv2d(&w, Some(&b), Conv2dParams::default()).unwrap();
    assert_close(
        &y,
        &[7., 11., 7., 11., 7., 11., 7., 11.],
        &[2, 1, 2, 2],
        0.0,
    );
}

#[test]
fn conv2d_zero_size_and_size_1_dims() {
    let w = f32t(&[2.0], &[1, 1, 1, 1]);
    // An empty batch gives an empty output of the right shape.
    let y = f32t(&[], &[0, 1, 3, 3])
        .conv2d(&w, None, Conv2dParams::default())
        .unwrap();
    assert_eq!(y.dims(), &[0, 1, 3, 3]);
    // No input channels: every output is its bias.
    let x = f32t(&[], &[1, 0, 2, 2]);
    let w0 = f32t(&[], &[2, 0, 1, 1]);
    let b = f32t(&[1.0, -1.0], &[2]);
    let y = x.conv2d(&w0, Some(&b), Conv2dParams::default()).unwrap();
    assert_close(
        &y,
        &[1., 1., 1., 1., -1., -1., -1., -1.],
        &[1, 2, 2, 2],
        0.0,
    );
    // An empty image with padding: the one window sees only zeros.
    let y = f32t(&[], &[1, 1, 0, 0])
        .conv2d(&f32t(&K, &[1, 1, 2, 2]), None, params(1, 1, 1, 1))
        .unwrap();
    assert_close(&y, &[0.], &[1, 1, 1, 1], 0.0);
    // 1x1 everything.
    let y = f32t(&[3.0], &[1, 1, 1, 1])
        .conv2d(&w, None, Conv2dParams::default())
        .unwrap();
    assert_close(&y, &[6.], &[1, 1, 1, 1], 0.0);
}

#[test]
fn conv2d_in_every_float_dtype() {
    for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        let x = t(&NINE, &[1, 1, 3, 3], dtype);
        let w = t(&K, &[1, 1, 2, 2], dtype);
        let y = x.conv2d(&w, None, Conv2dParams::default()).unwrap();
        assert_eq!(y.dtype(), dtype);
        assert_close(&y, &[37., 47., 67., 77.], &[1, 1, 2, 2], 0.0);
    }
}

#[test]
fn conv2d_errors_are_typed() {
    let x = f32t(&[0.0; 75], &[1, 3, 5, 5]);
    let w = f32t(&[0.0; 54], &[2, 3, 3, 3]);
    let ok = Conv2dParams::default();

    let e = t(&[0.0; 9], &[1, 1, 3, 3], DType::I32)
        .conv2d(&t(&[0.0], &[1, 1, 1, 1], DType::I32), None, ok)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "conv2d: not defined for dtype i32 (cast to a float dtype first)"
    );
    let e = x
        .conv2d(&t(&[0.0; 54], &[2, 3, 3, 3], DType::F64), None, ok)
        .unwrap_err();
    assert!(
        matches!(e, Error::DTypeMismatch { op: "conv2d", .. }),
        "{e}"
    );
    let e = x
        .conv2d(&w, Some(&t(&[0.0; 2], &[2], DType::F16)), ok)
        .unwrap_err();
    assert!(
        matches!(e, Error::DTypeMismatch { op: "conv2d", .. }),
        "{e}"
    );

    let e = f32t(&[0.0; 75], &[3, 5, 5])
        .conv2d(&w, None, ok)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "conv2d",
                expected: 4,
                ..
            }
        ),
        "{e}"
    );
    let e = f32t(&[1.0], &[]).conv2d(&w, None, ok).unwrap_err();
    assert!(matches!(e, Error::RankMismatch { expected: 4, .. }), "{e}");
    let e = x.conv2d(&f32t(&[0.0; 9], &[3, 3]), None, ok).unwrap_err();
    assert!(matches!(e, Error::RankMismatch { expected: 4, .. }), "{e}");
    let e = x
        .conv2d(&w, Some(&f32t(&[0.0; 2], &[1, 2])), ok)
        .unwrap_err();
    assert!(matches!(e, Error::RankMismatch { expected: 1, .. }), "{e}");
    let e = x.conv2d(&w, Some(&f32t(&[0.0; 3], &[3])), ok).unwrap_err();
    assert!(
        matches!(e, Error::ShapeMismatch { op: "conv2d", .. }),
        "{e}"
    );

    for (p, name) in [
        (params(0, 0, 1, 1), "stride"),
        (params(1, 0, 0, 1), "dilation"),
        (params(1, 0, 1, 0), "groups"),
        (params(1, 0, 1, 2), "groups"),
    ] {
        let e = x.conv2d(&w, None, p).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { op: "conv2d", name: n, .. } if n == name),
            "{e}"
        );
    }
    let e = x.conv2d(&f32t(&[], &[2, 3, 0, 3]), None, ok).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                name: "kernel size",
                ..
            }
        ),
        "{e}"
    );

    let e = x
        .conv2d(&f32t(&[0.0; 36], &[2, 2, 3, 3]), None, ok)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "conv2d: input [1, 3, 5, 5] has 3 channels, but weight [2, 2, 3, 3] with groups 1 expects 2"
    );
    // Groups that divide both counts but disagree with the weight.
    let x4 = f32t(&[0.0; 16], &[1, 4, 2, 2]);
    let e = x4
        .conv2d(&f32t(&[0.0; 8], &[2, 4, 1, 1]), None, params(1, 0, 1, 2))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::ChannelMismatch {
                groups: 2,
                channels: 4,
                expected: 8,
                ..
            }
        ),
        "{e}"
    );

    let small = f32t(&[0.0; 4], &[1, 1, 2, 2]);
    let e = small
        .conv2d(&f32t(&[0.0; 9], &[1, 1, 3, 3]), None, ok)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "conv2d: a window spanning 3 does not fit along height: input extent 2 with padding 0 on each side"
    );
    // Dilation 3 stretches a 2-tap kernel to span 4 > 3.
    let e = f32t(&[0.0; 9], &[1, 1, 3, 3])
        .conv2d(&f32t(&K, &[1, 1, 2, 2]), None, params(1, 0, 3, 1))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::WindowTooLarge {
                op: "conv2d",
                window: 4,
                input: 3,
                ..
            }
        ),
        "{e}"
    );
    // Padding can make it fit.
    assert!(
        small
            .conv2d(&f32t(&[0.0; 9], &[1, 1, 3, 3]), None, params(1, 1, 1, 1))
            .is_ok()
    );
}

// ------------------------------------------------------------ pooling

#[test]
fn max_pool2d_on_every_layout() {
    // 0..16 as 4x4; 2x2 windows stepping by 2 keep each block's
    // bottom-right element: 5, 7, 13, 15.
    for (_, x) in variants(&sixteen(), &[1, 1, 4, 4], DType::F32) {
        let y = x.max_pool2d(Pool2dParams::new((2, 2))).unwrap();
        assert_close(&y, &[5., 7., 13., 15.], &[1, 1, 2, 2], 0.0);
        // Overlapping windows (stride 1): 3x3 output.
        let y = x.max_pool2d(pool(2, 1, 0)).unwrap();
        assert_close(
            &y,
            &[5., 6., 7., 9., 10., 11., 13., 14., 15.],
            &[1, 1, 3, 3],
            0.0,
        );
    }
}

#[test]
fn max_pool2d_pads_with_negative_infinity() {
    // −1..−9 as 3x3; a 3x3 window with padding 1 takes the max of each
    // neighbourhood. Zero padding would give 0 at the borders; -inf
    // padding never wins, so every output is a real element.
    let neg: Vec<f64> = NINE.iter().map(|v| -v).collect();
    #[rustfmt::skip]
    let expected = [
        -1., -1., -2.,
        -1., -1., -2.,
        -4., -4., -5.,
    ];
    for (_, x) in variants(&neg, &[1, 1, 3, 3], DType::F32) {
        let y = x.max_pool2d(pool(3, 1, 1)).unwrap();
        assert_close(&y, &expected, &[1, 1, 3, 3], 0.0);
    }
}

#[test]
fn max_pool2d_propagates_nan_and_keeps_infinities() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    // Windows: [1, nan, 3, 4] → NaN, [−inf, 0, −inf, 2] → 2,
    //          [5, 6, 7, 8] → 8,   [−inf, −inf, −inf, −inf] → −inf.
    #[rustfmt::skip]
    let x = f32t(&[
        1., nan, -inf, 0.,
        3., 4., -inf, 2.,
        5., 6., -inf, -inf,
        7., 8., -inf, -inf,
    ], &[1, 1, 4, 4]);
    let y = x.max_pool2d(Pool2dParams::new((2, 2))).unwrap();
    assert_close(&y, &[nan, 2., 8., -inf], &[1, 1, 2, 2], 0.0);
    // The NaN comes first in its window in one case and last in another.
    let x = f32t(&[inf, nan, nan, 1.0], &[1, 1, 1, 4]);
    let y = x.max_pool2d(Pool2dParams::new((1, 2))).unwrap();
    assert_close(&y, &[nan, nan], &[1, 1, 1, 2], 0.0);
}

#[test]
fn avg_pool2d_on_every_layout() {
    // 2x2 blocks of 0..16: (0+1+4+5)/4 = 2.5, (2+3+6+7)/4 = 4.5,
    // (8+9+12+13)/4 = 10.5, (10+11+14+15)/4 = 12.5.
    for (_, x) in variants(&sixteen(), &[1, 1, 4, 4], DType::F64) {
        let y = x.avg_pool2d(Pool2dParams::new((2, 2))).unwrap();
        assert_close(&y, &[2.5, 4.5, 10.5, 12.5], &[1, 1, 2, 2], 0.0);
    }
}

#[test]
fn avg_pool2d_counts_padding_in_the_divisor() {
    // 3x3 windows with padding 1 over 1..9: every window divides by 9,
    // however many of its taps are padding. Corner (0,0): (1+2+4+5)/9.
    #[rustfmt::skip]
    let sums = [
        12., 21., 16.,
        27., 45., 33.,
        24., 39., 28.,
    ];
    let expected: Vec<f64> = sums.iter().map(|s| s / 9.0).collect();
    for (_, x) in variants(&NINE, &[1, 1, 3, 3], DType::F64) {
        let y = x.avg_pool2d(pool(3, 1, 1)).unwrap();
        assert_close(&y, &expected, &[1, 1, 3, 3], 1e-15);
    }
}

#[test]
fn pooling_rounds_the_output_down_and_keeps_planes_apart() {
    // 3x3 with 2x2 windows stepping by 2: one window; the last row and
    // column are never read.
    let x = f32t(&NINE, &[1, 1, 3, 3]);
    assert_close(
        &x.max_pool2d(Pool2dParams::new((2, 2))).unwrap(),
        &[5.],
        &[1, 1, 1, 1],
        0.0,
    );
    assert_close(
        &x.avg_pool2d(Pool2dParams::new((2, 2))).unwrap(),
        &[3.],
        &[1, 1, 1, 1],
        0.0,
    );
    // Non-square windows: 1x3 rows of 1..9 → each row's max and mean.
    assert_close(
        &x.max_pool2d(Pool2dParams::new((1, 3))).unwrap(),
        &[3., 6., 9.],
        &[1, 1, 3, 1],
        0.0,
    );
    assert_close(
        &x.avg_pool2d(Pool2dParams::new((1, 3))).unwrap(),
        &[2., 5., 8.],
        &[1, 1, 3, 1],
        0.0,
    );
    // Two batches of two channels, each 1x2: pooled separately.
    let x = f32t(&[1., 2., 3., 4., 5., 6., 7., 8.], &[2, 2, 1, 2]);
    let y = x.max_pool2d(Pool2dParams::new((1, 2))).unwrap();
    assert_close(&y, &[2., 4., 6., 8.], &[2, 2, 1, 1], 0.0);
    let y = x.avg_pool2d(Pool2dParams::new((1, 2))).unwrap();
    assert_close(&y, &[1.5, 3.5, 5.5, 7.5], &[2, 2, 1, 1], 0.0);
}

#[test]
fn pooling_of_broadcasts_zero_size_and_every_float_dtype() {
    let x = f32t(&[1., 2., 3., 4.], &[1, 1, 1, 4])
        .broadcast_to([2, 1, 2, 4])
        .unwrap();
    let y = x.max_pool2d(Pool2dParams::new((2, 2))).unwrap();
    assert_close(&y, &[2., 4., 2., 4.], &[2, 1, 1, 2], 0.0);
    let y = x.avg_pool2d(Pool2dParams::new((2, 2))).unwrap();
    assert_close(&y, &[1.5, 3.5, 1.5, 3.5], &[2, 1, 1, 2], 0.0);
    let y = f32t(&[], &[0, 3, 4, 4])
        .max_pool2d(Pool2dParams::new((2, 2)))
        .unwrap();
    assert_eq!(y.dims(), &[0, 3, 2, 2]);
    let y = f32t(&[], &[2, 0, 4, 4])
        .avg_pool2d(Pool2dParams::new((2, 2)))
        .unwrap();
    assert_eq!(y.dims(), &[2, 0, 2, 2]);
    for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        let x = t(&sixteen(), &[1, 1, 4, 4], dtype);
        let y = x.avg_pool2d(Pool2dParams::new((2, 2))).unwrap();
        assert_eq!(y.dtype(), dtype);
        assert_close(&y, &[2.5, 4.5, 10.5, 12.5], &[1, 1, 2, 2], 0.0);
        let y = x.max_pool2d(Pool2dParams::new((2, 2))).unwrap();
        assert_close(&y, &[5., 7., 13., 15.], &[1, 1, 2, 2], 0.0);
    }
}

#[test]
fn pooling_errors_are_typed() {
    let x = f32t(&NINE, &[1, 1, 3, 3]);
    let e = x.max_pool2d(pool(2, 1, 2)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "max_pool2d: invalid padding: padding (2, 2) must be at most half the kernel (2, 2) on each axis"
    );
    let e = x.avg_pool2d(pool(3, 1, 2)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                op: "avg_pool2d",
                name: "padding",
                ..
            }
        ),
        "{e}"
    );
    let e = x.max_pool2d(pool(0, 1, 0)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                name: "kernel size",
                ..
            }
        ),
        "{e}"
    );
    let e = x.avg_pool2d(pool(2, 0, 0)).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "stride", .. }),
        "{e}"
    );
    let e = x.max_pool2d(pool(4, 1, 0)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::WindowTooLarge {
                op: "max_pool2d",
                axis: "height",
                window: 4,
                input: 3,
                padding: 0
            }
        ),
        "{e}"
    );
    let e = f32t(&[], &[1, 1, 0, 2])
        .avg_pool2d(Pool2dParams::new((1, 1)))
        .unwrap_err();
    assert!(
        matches!(e, Error::WindowTooLarge { axis: "height", .. }),
        "{e}"
    );
    let e = f32t(&[0.0; 4], &[1, 1, 4, 1])
        .avg_pool2d(Pool2dParams::new((1, 2)))
        .unwrap_err();
    assert!(
        matches!(e, Error::WindowTooLarge { axis: "width", .. }),
        "{e}"
    );
    let e = f32t(&NINE, &[1, 3, 3])
        .max_pool2d(Pool2dParams::new((2, 2)))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "max_pool2d",
                expected: 4,
                ..
            }
        ),
        "{e}"
    );
    let e = f32t(&[1.0], &[])
        .avg_pool2d(Pool2dParams::new((1, 1)))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "avg_pool2d",
                ..
            }
        ),
        "{e}"
    );
    let e = t(&NINE, &[1, 1, 3, 3], DType::I64)
        .avg_pool2d(Pool2dParams::new((2, 2)))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDType {
                op: "avg_pool2d",
                dtype: DType::I64,
                ..
            }
        ),
        "{e}"
    );
    let e = t(&NINE, &[1, 1, 3, 3], DType::U8)
        .max_pool2d(Pool2dParams::new((2, 2)))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDType {
                op: "max_pool2d",
                ..
            }
        ),
        "{e}"
    );
}

// ---------------------------------------------------------- the laws

/// The definition of a grouped, strided, padded, dilated convolution,
/// written independently of the reference: pad the image with zeros
/// first, then slide the dilated kernel over the padded image.
#[allow(clippy::too_many_arguments)]
fn direct_conv2d(
    x: &[f64],
    [n, c_in, h, w]: [usize; 4],
    k: &[f64],
    [c_out, c_in_g, kh, kw]: [usize; 4],
    bias: &[f64],
    p: Conv2dParams,
) -> Option<(Vec<f64>, [usize; 4])> {
    let (hp, wp) = (h + 2 * p.padding.0, w + 2 * p.padding.1);
    let mut padded = vec![0.0; n * c_in * hp * wp];
    for b in 0..n {
        for c in 0..c_in {
            for i in 0..h {
                for j in 0..w {
                    padded[((b * c_in + c) * hp + i + p.padding.0) * wp + j + p.padding.1] =
                        x[((b * c_in + c) * h + i) * w + j];
                }
            }
        }
    }
    let span_h = p.dilation.0 * (kh - 1) + 1;
    let span_w = p.dilation.1 * (kw - 1) + 1;
    if span_h > hp || span_w > wp {
        return None;
    }
    let oh = (hp - span_h) / p.stride.0 + 1;
    let ow = (wp - span_w) / p.stride.1 + 1;
    let per_group = c_out / p.groups;
    let mut out = vec![0.0; n * c_out * oh * ow];
    for b in 0..n {
        for o in 0..c_out {
            let g = o / per_group;
            for i in 0..oh {
                for j in 0..ow {
                    let mut s = bias[o];
                    for c in 0..c_in_g {
                        for u in 0..kh {
                            for v in 0..kw {
                                let (r, q) = (
                                    i * p.stride.0 + u * p.dilation.0,
                                    j * p.stride.1 + v * p.dilation.1,
                                );
                                s += padded[((b * c_in + g * c_in_g + c) * hp + r) * wp + q]
                                    * k[((o * c_in_g + c) * kh + u) * kw + v];
                            }
                        }
                    }
                    out[((b * c_out + o) * oh + i) * ow + j] = s;
                }
            }
        }
    }
    Some((out, [n, c_out, oh, ow]))
}

/// Small integers, so every sum is exact and the comparison can be too.
fn small_values(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec((-3i32..=3).prop_map(f64::from), n)
}

#[derive(Debug, Clone)]
struct ConvCase {
    x_dims: [usize; 4],
    w_dims: [usize; 4],
    params: Conv2dParams,
}

fn conv_case() -> impl Strategy<Value = ConvCase> {
    (
        (1usize..=2, 1usize..=2, 1usize..=2, 1usize..=2),
        (1usize..=5, 1usize..=5, 1usize..=3, 1usize..=3),
        (
            1usize..=2,
            1usize..=2,
            0usize..=1,
            0usize..=1,
            1usize..=2,
            1usize..=2,
        ),
    )
        .prop_map(
            |((n, groups, cig, cog), (h, w, kh, kw), (sh, sw, ph, pw, dh, dw))| ConvCase {
                x_dims: [n, groups * cig, h, w],
                w_dims: [groups * cog, cig, kh, kw],
                params: Conv2dParams {
                    stride: (sh, sw),
                    padding: (ph, pw),
                    dilation: (dh, dw),
                    groups,
                },
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn conv2d_matches_the_direct_definition(
        (case, xv, kv, bv, layout) in conv_case().prop_flat_map(|case| {
            let xn = case.x_dims.iter().product();
            let kn = case.w_dims.iter().product();
            let bn = case.w_dims[0];
            (Just(case), small_values(xn), small_values(kn), small_values(bn), 0usize..4)
        })
    ) {
        let (_, x) = variants(&xv, &case.x_dims, DType::F64).swap_remove(layout);
        let w = t(&kv, &case.w_dims, DType::F64);
        let b = t(&bv, &[case.w_dims[0]], DType::F64);
        let got = x.conv2d(&w, Some(&b), case.params);
        match direct_conv2d(&xv, case.x_dims, &kv, case.w_dims, &bv, case.params) {
            Some((expected, dims)) => {
                let got = got.unwrap();
                prop_assert_eq!(got.dims(), dims.as_slice());
                prop_assert_eq!(got.to_f64_vec().unwrap(), expected);
            }
            None => {
                let e = got.unwrap_err();
                prop_assert!(matches!(e, Error::WindowTooLarge { .. }), "{}", e);
            }
        }
    }

    #[test]
    fn avg_pool2d_is_a_depthwise_conv_with_a_uniform_kernel(
        (dims, xv) in (1usize..=2, 1usize..=3, 2usize..=5, 2usize..=5)
            .prop_flat_map(|(n, c, h, w)| (Just([n, c, h, w]), small_values(n * c * h * w))),
        k in 1usize..=2,
        s in 1usize..=2,
        pad in 0usize..=1,
    ) {
        prop_assume!(pad <= k / 2);
        let x = t(&xv, &dims, DType::F64);
        let c = dims[1];
        let kernel = Tensor::full([c, 1, k, k], 1.0 / (k * k) as f64, DType::F64, x.device()).unwrap();
        let conv = Conv2dParams { stride: (s, s), padding: (pad, pad), dilation: (1, 1), groups: c };
        let by_conv = x.conv2d(&kernel, None, conv).unwrap();
        let by_pool = x.avg_pool2d(pool(k, s, pad)).unwrap();
        prop_assert_eq!(by_pool.dims(), by_conv.dims());
        for (a, b) in by_pool.to_f64_vec().unwrap().iter().zip(by_conv.to_f64_vec().unwrap()) {
            prop_assert!((a - b).abs() <= 1e-12, "{} vs {}", a, b);
        }
    }

    #[test]
    fn max_pool2d_bounds_every_element_of_its_window(
        (dims, xv) in (1usize..=2, 1usize..=2, 1usize..=5, 1usize..=5)
            .prop_flat_map(|(n, c, h, w)| (Just([n, c, h, w]), small_values(n * c * h * w))),
        k in 1usize..=3,
        s in 1usize..=2,
    ) {
        prop_assume!(k <= dims[2] && k <= dims[3]);
        let x = t(&xv, &dims, DType::F32);
        let y = x.max_pool2d(pool(k, s, 0)).unwrap();
        let (oh, ow) = (y.dims()[2], y.dims()[3]);
        let yv = y.to_f64_vec().unwrap();
        let [_, _, h, w] = dims;
        for plane in 0..dims[0] * dims[1] {
            for i in 0..oh {
                for j in 0..ow {
                    let window: Vec<f64> = (0..k * k)
                        .map(|t| xv[plane * h * w + (i * s + t / k) * w + j * s + t % k])
                        .collect();
                    let m = yv[(plane * oh + i) * ow + j];
                    prop_assert!(window.iter().all(|&v| v <= m) && window.contains(&m));
                }
            }
        }
    }
}
