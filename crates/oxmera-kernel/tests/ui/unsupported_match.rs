use oxmera_kernel::kernel;

// `match` takes integers and bools; a float scrutinee is refused at it.
#[kernel]
fn pick(x: &[f32], out: &mut [f32], n: u32) {
    let i = thread_idx_x();
    match x[i] {
        0 => out[i] = x[i],
        _ => {}
    }
}

fn main() {}
