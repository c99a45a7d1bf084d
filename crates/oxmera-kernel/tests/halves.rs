//! The half-float conversions, exhaustively where it is cheap: every one of
//! the 65,536 `f16` and `bf16` bit patterns widened, and every `f32` sign,
//! exponent and top mantissa bits with the dropped bits at each rounding
//! edge (0, 1, just under half, half, just over half, all ones) narrowed —
//! each equal, bit for bit, to the `half` crate's conversion (any NaN for a
//! NaN).

use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{f32_to_halves, half_mode, halves_to_f32};
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};

fn launch(threads: usize) -> LaunchConfig {
    LaunchConfig {
        grid: Dim3::x((threads as u32).div_ceil(256)),
        block: Dim3::x(256),
    }
}

fn view(n: usize, brain: bool) -> Vec<Arg> {
    vec![
        Arg::Buffer(Buffer::from_u32(&[n as u32])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Scalar(Value::U32(1)),
        Arg::Scalar(Value::U32(n as u32)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(if brain {
            half_mode::BF16
        } else {
            half_mode::F16
        })),
    ]
}

fn half_nan(h: u16, brain: bool) -> bool {
    if brain {
        h & 0x7f80 == 0x7f80 && h & 0x7f != 0
    } else {
        h & 0x7c00 == 0x7c00 && h & 0x3ff != 0
    }
}

#[test]
fn every_half_pattern_widens_exactly() {
    for brain in [false, true] {
        let words: Vec<u32> = (0..=u16::MAX as u32)
            .step_by(2)
            .map(|h| h | ((h + 1) << 16))
            .collect();
        let mut args = vec![
            Arg::Buffer(Buffer::from_u32(&words)),
            Arg::Buffer(Buffer::from_u32(&vec![0; 65536])),
        ];
        args.extend(view(65536, brain));
        sim::run(
            halves_to_f32(),
            launch(65536),
            &mut args,
            &SimOptions::default(),
        )
        .unwrap();
        let got = args[1].buffer().unwrap().to_f32();
        for h in 0..=u16::MAX {
            let want = if brain {
                half::bf16::from_bits(h).to_f32()
            } else {
                half::f16::from_bits(h).to_f32()
            };
            let g = got[h as usize];
            if half_nan(h, brain) {
                assert!(g.is_nan(), "{h:#06x} (brain {brain}): {g}");
            } else {
                assert_eq!(g.to_bits(), want.to_bits(), "{h:#06x} (brain {brain})");
            }
        }
    }
}

#[test]
fn f32_narrows_to_nearest_even_at_every_rounding_edge() {
    for brain in [false, true] {
        // The bits a narrowing drops: 16 for bf16, 13 for a normal f16.
        let drop = if brain { 16 } else { 13 };
        let half = 1u32 << (drop - 1);
        let edges = [0, 1, half - 1, half, half + 1, (1 << drop) - 1];
        let xs: Vec<u32> = (0..1u32 << (32 - drop))
            .flat_map(|top| edges.map(|e| (top << drop) | e))
            .collect();
        let n = xs.len();
        let mut args = vec![
            Arg::Buffer(Buffer::from_u32(&xs)),
            Arg::Buffer(Buffer::from_u32(&vec![0; n.div_ceil(2)])),
        ];
        args.extend(view(n, brain));
        sim::run(
            f32_to_halves(),
            launch(n.div_ceil(2)),
            &mut args,
            &SimOptions::default(),
        )
        .unwrap();
        let words = args[1].buffer().unwrap().to_u32();
        for (i, &x) in xs.iter().enumerate() {
            let got = (words[i / 2] >> (16 * (i % 2))) as u16;
            let v = f32::from_bits(x);
            let want = if brain {
                half::bf16::from_f32(v).to_bits()
            } else {
                half::f16::from_f32(v).to_bits()
            };
            if v.is_nan() {
                assert!(
                    half_nan(got, brain),
                    "{x:#010x} (brain {brain}): {got:#06x}"
                );
            } else {
                assert_eq!(got, want, "{x:#010x} = {v:e} (brain {brain})");
            }
        }
    }
}

/// The bits mode moves every pattern unchanged, both ways, through a
/// reversed view (what the data-movement ops of half tensors run on).
#[test]
fn the_bits_mode_moves_every_pattern_unchanged() {
    let words: Vec<u32> = (0..=u16::MAX as u32)
        .step_by(2)
        .map(|h| h | ((h + 1) << 16))
        .collect();
    let reversed = |args: &mut Vec<Arg>, n: usize| {
        args.extend([
            Arg::Buffer(Buffer::from_u32(&[n as u32])),
            Arg::Buffer(Buffer::from_i32(&[-1])),
            Arg::Scalar(Value::U32(1)),
            Arg::Scalar(Value::U32(n as u32)),
            Arg::Scalar(Value::I32(n as i32 - 1)),
            Arg::Scalar(Value::U32(half_mode::BITS)),
        ]);
    };
    let mut args = vec![
        Arg::Buffer(Buffer::from_u32(&words)),
        Arg::Buffer(Buffer::from_u32(&vec![0; 65536])),
    ];
    reversed(&mut args, 65536);
    sim::run(
        halves_to_f32(),
        launch(65536),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let wide = args[1].buffer().unwrap().to_u32();
    assert!(wide.iter().enumerate().all(|(i, &w)| w == 65535 - i as u32));
    let mut back = vec![
        Arg::Buffer(Buffer::from_u32(&wide)),
        Arg::Buffer(Buffer::from_u32(&vec![0; 32768])),
    ];
    reversed(&mut back, 65536);
    sim::run(
        f32_to_halves(),
        launch(32768),
        &mut back,
        &SimOptions::default(),
    )
    .unwrap();
    assert_eq!(back[1].buffer().unwrap().to_u32(), words);
}
