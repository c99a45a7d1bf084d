//! The API tour from the README, as a program that checks itself.
//!
//! `cargo run -p oxmera --example readme_tour` (on the CPU), or on a GPU:
//! `cargo run -p oxmera --features wgpu --example readme_tour -- wgpu:0`

use oxmera::prelude::*;

fn main() -> AnyResult<()> {
    // The device: the first argument (`cpu`, `reference`, or `wgpu:0` in a
    // build with `--features wgpu`), else the CPU.
    let dev = match std::env::args().nth(1) {
        Some(name) => oxmera::tensor::registry::parse_device(&name)?,
        None => Device::Cpu,
    };
    // A 2x3 tensor from nested arrays (shape and dtype read off the data),
    // and views of it that share its storage.
    let a = Tensor::new([[0f32, 1., 2.], [3., 4., 5.]], dev)?;
    let t = a.t()?; // strides [1, 3], no copy
    assert!(t.shares_storage(&a) && !t.is_contiguous());
    let last_col = a.i((.., -1))?; // a[:, -1]
    assert_eq!(last_col.to_vec::<f32>()?, vec![2., 5.]);
    assert_eq!(a.i((1, 1..))?.to_vec::<f32>()?, vec![4., 5.]); // a[1, 1:]

    // Broadcasting: [2, 3] + [2, 1] -> [2, 3], the column stretched with
    // stride 0; scalars of any number type; one `?` per expression.
    let col = Tensor::new([[10f32], [20.]], dev)?;
    let b = (&a * 2 + &col)?;
    assert_eq!(b.to_vec::<f32>()?, vec![10., 12., 14., 26., 28., 30.]);

    // numpy.matmul semantics; results chain; a typed error when shapes disagree.
    let bias = Tensor::new([-20f32, 0.], dev)?;
    let c = (a.matmul(&t) + &bias).relu()?; // relu(a @ aᵀ + bias)
    assert_eq!(c.to_vec::<f32>()?, vec![0., 14., 0., 50.]);
    let err = a.matmul(&a).unwrap_err();
    assert_eq!(
        err.to_string(),
        "matmul: inner dimensions differ: [2, 3] @ [2, 3] (3 != 2)"
    );

    // Gradients.
    let x = Tensor::new([1f32, 2., 3.], dev)?.with_requires_grad(true)?;
    x.square().sum_all()?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f32>()?, vec![2.0, 4.0, 6.0]);

    // Moving between devices copies; the values come back as they left.
    let on_host = b.to_device(Device::Reference)?;
    assert_eq!(on_host.to_device(dev)?.to_vec::<f32>()?, b.to_vec::<f32>()?);
    println!("the tour ran on {dev}");
    Ok(())
}
