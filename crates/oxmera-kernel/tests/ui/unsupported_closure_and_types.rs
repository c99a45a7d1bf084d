use oxmera_kernel::kernel;

#[kernel]
fn narrow(x: &[i8], out: &mut [f32]) {
    out[0] = 1.0;
}

#[kernel]
fn closure(out: &mut [f32]) {
    let f = |v: f32| v * 2.0;
}

fn main() {}
