//! The padding modes of `F.pad` by hand — reflect, replicate and
//! circular — their gradients (each copy in the padding adds back to its
//! element), PyTorch's limits as typed errors, on the reference and cpu
//! backends.

use oxmera::prelude::*;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera::tensor::{PadMode, Tensor};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];
const MODES: [PadMode; 3] = [PadMode::Reflect, PadMode::Replicate, PadMode::Circular];

fn ints(t: &Tensor) -> Vec<i64> {
    t.to_vec::<i64>().unwrap()
}

#[test]
fn pads_by_hand() {
    for dev in DEVICES {
        let x = Tensor::from_vec(vec![1i64, 2, 3], [1, 3], dev).unwrap();
        let pad = |mode| ints(&x.pad_mode(&[(0, 0), (2, 2)], mode).unwrap());
        assert_eq!(pad(PadMode::Reflect), [3, 2, 1, 2, 3, 2, 1]);
        assert_eq!(pad(PadMode::Replicate), [1, 1, 1, 2, 3, 3, 3]);
        assert_eq!(pad(PadMode::Circular), [2, 3, 1, 2, 3, 1, 2]);
        // Circular by the whole size wraps once; one side only.
        let c = x.pad_mode(&[(0, 0), (3, 0)], PadMode::Circular).unwrap();
        assert_eq!(ints(&c), [1, 2, 3, 1, 2, 3]);
        // F.pad(arange(1, 10).view(1, 1, 3, 3), (1, 1, 1, 1), 'reflect').
        let x = Tensor::from_vec((1..=9).collect::<Vec<i64>>(), [1, 1, 3, 3], dev).unwrap();
        let y = x
            .pad_mode(&[(0, 0), (0, 0), (1, 1), (1, 1)], PadMode::Reflect)
            .unwrap();
        assert_eq!(y.dims(), &[1, 1, 5, 5]);
        #[rustfmt::skip]
        assert_eq!(ints(&y), [
            5, 4, 5, 6, 5,
            2, 1, 2, 3, 2,
            5, 4, 5, 6, 5,
            8, 7, 8, 9, 8,
            5, 4, 5, 6, 5,
        ]);
        // Replicate on the rows only, circular on the columns only.
        let y = x
            .pad_mode(&[(0, 0), (0, 0), (0, 2), (0, 0)], PadMode::Replicate)
            .unwrap();
        assert_eq!(ints(&y), [1, 2, 3, 4, 5, 6, 7, 8, 9, 7, 8, 9, 7, 8, 9]);
        let y = x
            .pad_mode(&[(0, 0), (0, 0), (0, 0), (1, 0)], PadMode::Circular)
            .unwrap();
        assert_eq!(ints(&y), [3, 1, 2, 3, 6, 4, 5, 6, 9, 7, 8, 9]);
        // An unbatched 3-D input pads dims 1 and 2; a transposed view.
        let u = Tensor::from_vec(vec![1i64, 2, 3, 4], [1, 2, 2], dev).unwrap();
        let y = u
            .transpose(1, 2)
            .unwrap()
            .pad_mode(&[(0, 0), (1, 0), (0, 1)], PadMode::Replicate)
            .unwrap();
        assert_eq!(y.dims(), &[1, 3, 3]);
        assert_eq!(ints(&y), [1, 3, 3, 1, 3, 3, 2, 4, 4]);
        // Floats keep their bits (NaN, -0.0); bool pads too.
        let f = Tensor::from_vec(vec![f32::NAN, -0.0, 1.5], [1, 3], dev).unwrap();
        let y = f.pad_mode(&[(0, 0), (1, 1)], PadMode::Reflect).unwrap();
        let bits: Vec<u32> = y
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        let want: Vec<u32> = [-0.0f32, f32::NAN, -0.0, 1.5, -0.0]
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(bits, want);
        let b = Tensor::from_vec(vec![true, false], [1, 2], dev).unwrap();
        let y = b.pad_mode(&[(0, 0), (1, 2)], PadMode::Circular).unwrap();
        assert_eq!(
            y.to_vec::<bool>().unwrap(),
            [false, true, false, true, false]
        );
        // An empty batch stays empty.
        let e = Tensor::zeros([0, 2, 3], DType::F32, dev).unwrap();
        let y = e
            .pad_mode(&[(0, 0), (0, 0), (2, 2)], PadMode::Reflect)
            .unwrap();
        assert_eq!(y.dims(), &[0, 2, 7]);
    }
}

#[test]
fn the_gradient_adds_the_copies() {
    for dev in DEVICES {
        let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], [1, 3], dev)
            .unwrap()
            .with_requires_grad(true)
            .unwrap();
        // Reflect by (1, 1): [x1, x0, x1, x2, x1]; replicate by (2, 2):
        // [x0, x0, x0, x1, x2, x2, x2]; circular by (2, 2):
        // [x1, x2, x0, x1, x2, x0, x1].
        let cases = [
            (PadMode::Reflect, (1, 1), [1.0, 3.0, 1.0]),
            (PadMode::Replicate, (2, 2), [3.0, 1.0, 3.0]),
            (PadMode::Circular, (2, 2), [2.0, 3.0, 2.0]),
        ];
        for (mode, pads, want) in cases {
            x.zero_grad();
            let y = x.pad_mode(&[(0, 0), pads], mode).unwrap();
            y.sum_all().unwrap().backward().unwrap();
            assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), want, "{mode:?}");
        }
        // Weighted: reflect by (2, 0) is [x2, x1, x0, x1, x2] times 1..=5.
        x.zero_grad();
        let w = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0], [1, 5], dev).unwrap();
        let y = x.pad_mode(&[(0, 0), (2, 0)], PadMode::Reflect).unwrap();
        y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), [3.0, 6.0, 6.0]);

        let m = Tensor::from_vec(
            (0..24).map(|v| (v as f64 * 0.37).sin()).collect::<Vec<_>>(),
            [1, 2, 3, 4],
            dev,
        )
        .unwrap();
        for mode in MODES {
            // Within reflect's limits (pads below 3 rows and 4 columns).
            let pads = [(0, 0), (0, 0), (2, 1), (3, 2)];
            let r = gradcheck(
                |x| x[0].pad_mode(&pads, mode),
                std::slice::from_ref(&m),
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(r.passed(), "{mode:?} on {dev}: {r}");
        }
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = Tensor::zeros([2, 3], DType::F32, dev).unwrap();
        let bad = |r: Result<Tensor>| {
            assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        };
        for mode in MODES {
            // One pair per dim; rank 2 to 5; dim 0 never padded.
            bad(x.pad_mode(&[(1, 1)], mode));
            let v = Tensor::zeros([3], DType::F32, dev).unwrap();
            bad(v.pad_mode(&[(1, 1)], mode));
            let six = Tensor::zeros([1, 1, 1, 1, 1, 2], DType::F32, dev).unwrap();
            bad(six.pad_mode(&[(0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (1, 1)], mode));
            bad(x.pad_mode(&[(1, 0), (0, 0)], mode));
            // Only the last three dims of a 5-D input.
            let five = Tensor::zeros([1, 2, 2, 2, 2], DType::F32, dev).unwrap();
            bad(five.pad_mode(&[(0, 0), (1, 1), (0, 0), (0, 0), (0, 0)], mode));
            // Sizes past usize or past memory.
            let r = x.pad_mode(&[(0, 0), (usize::MAX, 1)], mode);
            assert!(r.is_err(), "{r:?}");
        }
        // reflect: pad < size; circular: pad <= size; replicate: non-empty.
        bad(x.pad_mode(&[(0, 0), (3, 0)], PadMode::Reflect));
        bad(x.pad_mode(&[(0, 0), (0, 3)], PadMode::Reflect));
        assert!(x.pad_mode(&[(0, 0), (2, 2)], PadMode::Reflect).is_ok());
        bad(x.pad_mode(&[(0, 0), (4, 0)], PadMode::Circular));
        assert!(x.pad_mode(&[(0, 0), (3, 3)], PadMode::Circular).is_ok());
        let e = Tensor::zeros([2, 0], DType::F32, dev).unwrap();
        bad(e.pad_mode(&[(0, 0), (1, 0)], PadMode::Replicate));
        bad(e.pad_mode(&[(0, 0), (1, 0)], PadMode::Reflect));
        bad(e.pad_mode(&[(0, 0), (1, 0)], PadMode::Circular));
        // Replicate has no size limit, but memory does.
        let r = x.pad_mode(&[(0, 0), (1 << 50, 0)], PadMode::Replicate);
        assert!(r.is_err(), "{r:?}");
        assert_eq!(
            x.pad_mode(&[(0, 0), (5, 0)], PadMode::Replicate)
                .unwrap()
                .dims(),
            &[2, 8]
        );
    }
}
