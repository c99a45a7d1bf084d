//! What the emitters' tests share: one kernel that holds every construct
//! of the language (whatever an emitter cannot write shows up here first),
//! and the blocks a kernel is emitted at.

use oxmera_kernel::ir::{Dim3, Kernel};
use oxmera_kernel::kernels;

pub use all::every_construct;

/// The blocks a kernel declares, or a 64-thread block if it declares none.
pub fn blocks(k: &Kernel) -> Vec<Dim3> {
    if k.launch.blocks.is_empty() {
        vec![Dim3::x(64)]
    } else {
        k.launch.blocks.clone()
    }
}

/// Every construct of the language in one kernel, helpers included.
#[kernels]
pub mod all {
    /// A pure helper with a value `if`: callable inside any expression.
    #[helper]
    fn wrapped(i: u32, n: u32) -> u32 {
        let j = i * 3 + 1;
        if j < n { j } else { i }
    }

    /// A helper that writes (through a shared array it is given) and calls
    /// another: a statement.
    #[helper]
    fn tally(hits: &mut [u32], slot: u32, n: u32) {
        atomic_add(hits, slot, wrapped(slot, n) - wrapped(slot, n) + 1u32);
    }

    /// Every construct of the language in one kernel.
    #[kernel]
    pub fn every_construct(
        x: &[f32],
        flags: &[bool],
        out: &mut [f32],
        counts: &mut [u32],
        signed: &mut [i32],
        bits: &mut [f32],
        n: u32,
        scale: f32,
        negate: bool,
        shift: i32,
    ) {
        let s = shared::<f32>(64);
        let hits = shared::<u32>(4);
        let tid = thread_idx_x();
        let i = block_idx_x() * block_dim_x() + tid;
        if i >= n {
            return;
        }
        let mut v = x[wrapped(i, n)] * scale;
        if negate && flags[i] {
            v = -v;
        }
        let k = v as i32;
        let u = v as u32;
        let b = k != 0;
        let back = k as f32 + u as f32 + b as u32 as f32 + (u as i32) as f32 + (k as u32) as f32;
        let m = v.min(back).max(-1.0e30).abs().sqrt().exp().ln().tanh();
        let trig = m.sin() + m.cos() + m.exp2() + m.log2() + m.powf(v) + pow(v, 3.0) + erf(v);
        let r = rsqrt(m).floor() + m.ceil() + v.mul_add(2.0, 1.0) + trig;
        let mut acc = 0i32;
        for j in (0i32..8).step_by(3) {
            acc += j << (shift & 7);
            acc ^= (j >> 1) | (j & 3);
            if j == 6 {
                continue;
            }
        }
        for j in (1i32..=7).step_by(2) {
            acc += j;
        }
        let mut w = 0u32;
        while w < 4 {
            w += 1;
            if w == 3 {
                break;
            }
        }
        let lane = lane_id();
        let sh = shfl_xor_sync(0xffff_ffffu32, r, 1)
            + shfl_down_sync(0xffff_ffffu32, r, 1)
            + shfl_up_sync(0xffff_ffffu32, r, 1)
            + shfl_sync(0xffff_ffffu32, r, 0);
        let ballot = ballot_sync(0xffff_ffffu32, v > 0.0);
        let any = any_sync(0xffff_ffffu32, v > 0.0);
        let all = all_sync(0xffff_ffffu32, v > 0.0);
        s[tid] = sh + (lane + warp_id() + warp_size()) as f32;
        tally(hits, 0, n);
        sync_threads();
        atomic_add(counts, 0, ballot);
        atomic_max(signed, 0, acc);
        atomic_min(signed, 1, -acc);
        atomic_exch(signed, 2, k);
        atomic_cas(signed, 3, 0, 1);
        atomic_add(bits, 0, 1.0);
        atomic_cas(bits, 1, 0.0, f32::INFINITY);
        atomic_min(bits, 2, v);
        atomic_max(bits, 3, v);
        atomic_sub(signed, 4, k);
        atomic_and(counts, 1, u);
        atomic_or(counts, 2, u);
        atomic_xor(signed, 5, k);
        atomic_inc(counts, 3, 15u32);
        atomic_min(hits, 1, lane);
        let h = hits[0];
        if any || all {
            let bits = i.count_ones() + k.leading_zeros() + u.trailing_zeros();
            out[i] = s[tid] + h as f32 + w as f32 + (i % 7) as f32 - (i / 3) as f32 + bits as f32;
        }
        // Bit casts: a sign flip on the bits, and an exact NaN test.
        let flipped = f32::from_bits(v.to_bits() ^ 0x8000_0000u32);
        if (flipped.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32 {
            out[i] = f32::NEG_INFINITY;
        }
        // Local arrays (1-D, 2-D, from a list, of bools) and a 2-D shared tile.
        let tile = shared::<[f32; 5]>(4);
        let mut regs = [v; 4];
        let mut grid2 = [[0u32; 3]; 2];
        let picks = [1i32, 2, 3];
        let mut seen = [false; 2];
        for j in 0..4u32 {
            regs[j] += j as f32;
            grid2[j % 2][j % 3] += j;
        }
        seen[tid % 2] = true;
        if tid == 0 {
            tile[1][2] = regs[3];
        }
        sync_threads();
        if seen[1] {
            signed[6] = picks[(tid % 3) as i32] + grid2[1][2] as i32 + tile[1][2] as i32;
        }
    }
}
