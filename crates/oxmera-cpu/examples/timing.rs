//! Times a few kernels in isolation: `cargo run --release -p oxmera-cpu
//! --example timing`. (The full comparison with peers is `oxmera-bench`.)

use std::time::Instant;

use oxmera_core::{DType, Device};
use oxmera_tensor::Generator;
// Linking the crate registers the backend.
use oxmera_cpu as _;

fn median(label: &str, reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[reps / 2];
    println!("{label:<28} {:>9.3} ms (median of {reps})", median * 1e3);
    median
}

fn main() -> oxmera_core::Result<()> {
    let mut g = Generator::new(1);
    let x = g.randn([4096, 4096], DType::F32, Device::Cpu)?;
    median("softmax 4096x4096", 10, || {
        x.softmax(1).unwrap();
    });
    let flat = x.reshape([1 << 24])?;
    median("exp 16M", 10, || {
        flat.exp().unwrap();
    });
    median("sum 16M", 10, || {
        flat.sum_all().unwrap();
    });
    median("add 16M", 10, || {
        flat.add(&flat).unwrap();
    });
    for n in [512usize, 1024, 2048] {
        let a = g.randn([n, n], DType::F32, Device::Cpu)?;
        let b = g.randn([n, n], DType::F32, Device::Cpu)?;
        let s = median(&format!("matmul {n}"), 9, || {
            a.matmul(&b).unwrap();
        });
        println!("{:>38.1} GFLOP/s", 2.0 * (n as f64).powi(3) / s / 1e9);
    }
    Ok(())
}
