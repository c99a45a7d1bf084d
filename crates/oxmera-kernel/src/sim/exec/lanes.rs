//! Per-lane arithmetic: builtins, unary and binary operations over a
//! whole 32-lane register at once (inactive lanes compute too; their
//! results are never stored), so the engine's loop stays branch-free per
//! lane. These are the 32-bit types' operations: each reads the low 32
//! bits of a lane and writes its result zero-extended.

use super::*;

/// A builtin's value in each lane of the warp whose lane 0 is thread `base`,
/// on a target with warps of `width` lanes.
#[inline]
pub(super) fn builtin_lanes(
    b: Builtin,
    base: u32,
    width: u32,
    launch: LaunchConfig,
    block: Dim3,
) -> Lanes {
    let mut o = [0u64; W];
    let bd = launch.block;
    match b {
        Builtin::BlockIdx(a) => o = [block.get(a) as u64; W],
        Builtin::BlockDim(a) => o = [bd.get(a) as u64; W],
        Builtin::GridDim(a) => o = [launch.grid.get(a) as u64; W],
        Builtin::WarpSize => o = [width as u64; W],
        Builtin::WarpId => o = [(base / width) as u64; W],
        Builtin::LaneId => {
            for (l, x) in o.iter_mut().enumerate() {
                *x = l as u64;
            }
        }
        Builtin::ThreadIdx(a) => {
            for (l, x) in o.iter_mut().enumerate() {
                *x = launch.thread_index(base + l as u32).get(a) as u64;
            }
            let _ = bd;
        }
    }
    o
}

#[inline]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

#[inline]
pub(super) fn unary(k: UnK, a: &Lanes) -> Lanes {
    let mut o = [0u64; W];
    macro_rules! each {
        ($e:expr) => {
            for l in 0..W {
                let x = a[l] as u32;
                o[l] = $e(x) as u64;
            }
        };
    }
    match k {
        UnK::NegF => each!(|x: u32| x ^ 0x8000_0000),
        UnK::NegI => each!(|x: u32| x.wrapping_neg()),
        UnK::NotB => each!(|x: u32| (x == 0) as u32),
        UnK::NotI => each!(|x: u32| !x),
        UnK::F2S => each!(|x: u32| f(x) as i32 as u32),
        UnK::F2U => each!(|x: u32| f(x) as u32),
        UnK::S2F => each!(|x: u32| (x as i32 as f32).to_bits()),
        UnK::U2F => each!(|x: u32| (x as f32).to_bits()),
        UnK::Id => each!(|x: u32| x),
        UnK::Exp => each!(|x: u32| f(x).exp().to_bits()),
        UnK::Log => each!(|x: u32| f(x).ln().to_bits()),
        UnK::Sqrt => each!(|x: u32| f(x).sqrt().to_bits()),
        UnK::Rsqrt => each!(|x: u32| (1.0 / f(x).sqrt()).to_bits()),
        UnK::Tanh => each!(|x: u32| f(x).tanh().to_bits()),
        UnK::Floor => each!(|x: u32| f(x).floor().to_bits()),
        UnK::Ceil => each!(|x: u32| f(x).ceil().to_bits()),
        UnK::AbsF => each!(|x: u32| x & 0x7fff_ffff),
        UnK::AbsS => each!(|x: u32| (x as i32).wrapping_abs() as u32),
        UnK::Sin => each!(|x: u32| f(x).sin().to_bits()),
        UnK::Cos => each!(|x: u32| f(x).cos().to_bits()),
        UnK::Exp2 => each!(|x: u32| f(x).exp2().to_bits()),
        UnK::Log2 => each!(|x: u32| f(x).log2().to_bits()),
        UnK::Popc => each!(|x: u32| x.count_ones()),
        UnK::Clz => each!(|x: u32| x.leading_zeros()),
        UnK::Ctz => each!(|x: u32| x.trailing_zeros()),
        UnK::Erf => each!(|x: u32| oxmera_kernel_ir::erf::erf_f32(f(x)).to_bits()),
    }
    o
}

#[inline]
pub(super) fn binary(k: BinK, a: &Lanes, b: &Lanes) -> Lanes {
    let mut o = [0u64; W];
    macro_rules! each {
        ($e:expr) => {
            for l in 0..W {
                let r: u32 = $e(a[l] as u32, b[l] as u32);
                o[l] = r as u64;
            }
        };
    }
    use BinK::*;
    match k {
        AddF => each!(|x: u32, y: u32| (f(x) + f(y)).to_bits()),
        SubF => each!(|x, y| (f(x) - f(y)).to_bits()),
        MulF => each!(|x, y| (f(x) * f(y)).to_bits()),
        DivF => each!(|x, y| (f(x) / f(y)).to_bits()),
        RemF => each!(|x, y| (f(x) % f(y)).to_bits()),
        AddI => each!(|x: u32, y| x.wrapping_add(y)),
        SubI => each!(|x: u32, y| x.wrapping_sub(y)),
        MulI => each!(|x: u32, y| x.wrapping_mul(y)),
        DivU => each!(|x: u32, y: u32| x.checked_div(y).unwrap_or(0)),
        RemU => each!(|x: u32, y: u32| x.checked_rem(y).unwrap_or(0)),
        DivS => each!(|x: u32, y: u32| (x as i32).checked_div(y as i32).unwrap_or(i32::MIN) as u32),
        RemS => each!(|x: u32, y: u32| (x as i32).checked_rem(y as i32).unwrap_or(0) as u32),
        And => each!(|x, y| x & y),
        Or => each!(|x, y| x | y),
        Xor => each!(|x, y| x ^ y),
        Shl => each!(|x: u32, y: u32| x.wrapping_shl(y)),
        ShrU => each!(|x: u32, y: u32| x.wrapping_shr(y)),
        ShrS => each!(|x: u32, y: u32| (x as i32).wrapping_shr(y) as u32),
        EqBits => each!(|x, y| (x == y) as u32),
        NeBits => each!(|x, y| (x != y) as u32),
        EqF => each!(|x, y| (f(x) == f(y)) as u32),
        NeF => each!(|x, y| (f(x) != f(y)) as u32),
        LtF => each!(|x, y| (f(x) < f(y)) as u32),
        LeF => each!(|x, y| (f(x) <= f(y)) as u32),
        GtF => each!(|x, y| (f(x) > f(y)) as u32),
        GeF => each!(|x, y| (f(x) >= f(y)) as u32),
        LtU => each!(|x: u32, y: u32| (x < y) as u32),
        LeU => each!(|x: u32, y: u32| (x <= y) as u32),
        GtU => each!(|x: u32, y: u32| (x > y) as u32),
        GeU => each!(|x: u32, y: u32| (x >= y) as u32),
        LtS => each!(|x: u32, y: u32| ((x as i32) < (y as i32)) as u32),
        LeS => each!(|x: u32, y: u32| ((x as i32) <= (y as i32)) as u32),
        GtS => each!(|x: u32, y: u32| ((x as i32) > (y as i32)) as u32),
        GeS => each!(|x: u32, y: u32| ((x as i32) >= (y as i32)) as u32),
        MinF => each!(|x, y| f(x).min(f(y)).to_bits()),
        MaxF => each!(|x, y| f(x).max(f(y)).to_bits()),
        MinU => each!(|x: u32, y: u32| x.min(y)),
        MaxU => each!(|x: u32, y: u32| x.max(y)),
        MinS => each!(|x: u32, y: u32| (x as i32).min(y as i32) as u32),
        MaxS => each!(|x: u32, y: u32| (x as i32).max(y as i32) as u32),
        PowF => each!(|x, y| f(x).powf(f(y)).to_bits()),
    }
    o
}
