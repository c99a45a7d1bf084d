use oxmera_kernel::kernel;

#[kernel(block = [32, 64])]
fn guarded(x: &[f32], out: &mut [f32], n: u32) {
    let i = thread_idx_x();
    if warp_id() == 0 {
        sync_threads();
    }
    if i < n {
        out[i] = x[i];
    }
}

fn main() {}
