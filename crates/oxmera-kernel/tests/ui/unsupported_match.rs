use oxmera_kernel::kernel;

#[kernel]
fn pick(x: &[f32], out: &mut [f32], n: u32) {
    let i = thread_idx_x();
    match n {
        0 => out[i] = x[i],
        _ => {}
    }
}

fn main() {}
