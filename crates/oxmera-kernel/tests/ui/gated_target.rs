use oxmera_kernel::kernel;

// Clean on the generic target: a 32-thread block is one warp of 32.
#[kernel(block = [32])]
fn guarded_generic(out: &mut [f32]) {
    let i = thread_idx_x();
    if warp_id() == 0 {
        sync_threads();
    }
    out[i] = 1.0;
}

// The same kernel for lavapipe: four subgroups of 8, and only the first
// reaches the barrier.
#[kernel(block = [32], target = "lavapipe")]
fn guarded_lavapipe(out: &mut [f32]) {
    let i = thread_idx_x();
    if warp_id() == 0 {
        sync_threads();
    }
    out[i] = 1.0;
}

// 64 KiB of shared memory fits compute capability 8.0's opt-in limit...
#[kernel(block = [64], cc = 80)]
fn tile_sm80(out: &mut [f32]) {
    let s = shared::<f32>(16384);
    let i = thread_idx_x();
    s[i] = 1.0;
    sync_threads();
    out[i] = s[i];
}

// ...but not the generic 48 KiB static cap.
#[kernel(block = [64])]
fn tile_generic(out: &mut [f32]) {
    let s = shared::<f32>(16384);
    let i = thread_idx_x();
    s[i] = 1.0;
    sync_threads();
    out[i] = s[i];
}

#[kernel(block = [32], target = "tpu")]
fn unknown_target(out: &mut [f32]) {
    out[thread_idx_x()] = 1.0;
}

fn main() {}
