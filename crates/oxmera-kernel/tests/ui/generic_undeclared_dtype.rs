use oxmera_kernel::kernel;

/// `y = a x + y` for f32 only.
#[kernel(block = [64], dtypes(T = [f32]))]
pub fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = thread_idx_x();
    y[i] = a * x[i] + y[i];
}

fn main() {
    // Declared: compiles.
    let _ = axpy::<f32>();
    // Not declared: a compile error that lists the instances.
    let _ = axpy::<u8>();
}
