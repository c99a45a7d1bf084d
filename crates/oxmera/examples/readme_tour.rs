//! The API tour from the README, as a program that checks itself.
//!
//! `cargo run -p oxmera --example readme_tour` (on the CPU), or on a GPU:
//! `cargo run -p oxmera --features wgpu --example readme_tour -- wgpu:0`

use oxmera::prelude::*;

fn main() -> oxmera::Result<()> {
    // The device: the first argument (`cpu`, `reference`, or `wgpu:0` in a
    // build with `--features wgpu`), else the CPU.
    let dev = match std::env::args().nth(1) {
        Some(name) => oxmera::tensor::registry::parse_device(&name)?,
        None => Device::Cpu,
    };
    // A 2x3 tensor, and views of it that share its storage.
    let a = Tensor::arange(0.0, 6.0, 1.0, DType::F32, dev)?.reshape([2, 3])?;
    let t = a.t()?; // strides [1, 3], no copy
    assert!(t.shares_storage(&a) && !t.is_contiguous());
    let every_other = a.slice(1, 0, 3, 2)?; // a stepped view
    assert_eq!(every_other.dims(), &[2, 2]);

    // Broadcasting: [2, 3] + [2, 1] -> [2, 3], the column stretched with stride 0.
    let col = Tensor::from_vec(vec![10.0f32, 20.0], [2, 1], dev)?;
    let b = (&a + &col)?;
    assert_eq!(b.to_vec::<f32>()?, vec![10., 11., 12., 23., 24., 25.]);

    // numpy.matmul semantics, and a typed error when shapes disagree.
    let c = a.matmul(&t)?; // [2, 3] @ [3, 2]
    assert_eq!(c.dims(), &[2, 2]);
    let err = a.matmul(&a).unwrap_err();
    assert_eq!(
        err.to_string(),
        "matmul: inner dimensions differ: [2, 3] @ [2, 3] (3 != 2)"
    );

    // Gradients.
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], dev)?.with_requires_grad(true)?;
    x.square()?.sum_all()?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f32>()?, vec![2.0, 4.0, 6.0]);

    // Moving between devices copies; the values come back as they left.
    let on_host = b.to_device(Device::Reference)?;
    assert_eq!(on_host.to_device(dev)?.to_vec::<f32>()?, b.to_vec::<f32>()?);
    println!("the tour ran on {dev}");
    Ok(())
}
