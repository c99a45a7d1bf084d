//! Times a few kernels in isolation: `cargo run --release -p oxmera-cpu
//! --example timing`. (The full comparison with peers is `oxmera-bench`.)

use std::time::Instant;

use oxmera_core::{DType, Device};
use oxmera_tensor::Generator;
// Linking the crate registers the backend.
use oxmera_cpu as _;

fn best(label: &str, reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{label:<28} {:>9.3} ms (best of {reps})", best * 1e3);
    best
}

fn main() -> oxmera_core::Result<()> {
    let mut g = Generator::new(1);
    let x = g.randn([4096, 4096], DType::F32, Device::Cpu)?;
    best("softmax 4096x4096", 10, || {
        x.softmax(1).unwrap();
    });
    let flat = x.reshape([1 << 24])?;
    best("exp 16M", 10, || {
        flat.exp().unwrap();
    });
    best("sum 16M", 10, || {
        flat.sum_all().unwrap();
    });
    best("add 16M", 10, || {
        flat.add(&flat).unwrap();
    });
    for n in [1024usize, 2048] {
        let a = g.randn([n, n], DType::F32, Device::Cpu)?;
        let b = g.randn([n, n], DType::F32, Device::Cpu)?;
        let s = best(&format!("matmul {n}"), 5, || {
            a.matmul(&b).unwrap();
        });
        println!("{:>38.1} GFLOP/s", 2.0 * (n as f64).powi(3) / s / 1e9);
    }
    Ok(())
}
