// A barrier inside a helper, called under a divergent branch at a declared
// block: the build fails at the call and at the barrier. A `#[helper]`
// outside a `#[kernels]` module says where it belongs.
use oxmera_kernel::{helper, kernels};

#[kernels]
mod staged {
    #[helper]
    fn stage(s: &mut [f32], x: &[f32], t: u32) {
        s[t] = x[t];
        sync_threads();
    }

    #[kernel(block = [64])]
    pub fn guarded(x: &[f32], out: &mut [f32]) {
        let s = shared::<f32>(64);
        let t = thread_idx_x();
        if t < 32 {
            stage(s, x, t);
        }
        out[t] = s[t];
    }
}

#[helper]
fn lonely(i: u32) -> u32 {
    i + 1
}

fn main() {}
