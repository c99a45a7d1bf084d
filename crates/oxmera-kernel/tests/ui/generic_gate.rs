use oxmera_kernel::kernel;

// The gate checks every declared launch of every instance, and names the
// instance in each error.
#[kernel(block = [64], dtypes(T = [f32, i32]))]
fn guarded<T: Number>(x: &mut [T]) {
    let i = thread_idx_x();
    if i < 32 {
        sync_threads();
    }
    x[i] = x[0];
}

// A float literal is fine for f32 and an error for the i32 instance.
#[kernel(block = [32])]
fn scaled<T: Number>(x: &mut [T]) {
    x[0] = x[0] * 2.0;
}

fn main() {}
