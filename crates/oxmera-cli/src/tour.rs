//! `oxmera tour`: a printed walk through the tensor API.
//!
//! Every value shown is computed as the tour runs, on the device the user
//! picks, so the tour doubles as a smoke test of that backend.

use std::process::ExitCode;

use anstream::println;
use oxmera::prelude::*;

use crate::style::Paint;

/// Arguments of `oxmera tour`.
#[derive(Debug, clap::Args)]
pub struct TourArgs {
    /// The device to run on (reference, cpu, ...).
    #[arg(long, default_value = "reference")]
    device: String,
}

/// Runs the tour.
pub fn run(args: TourArgs) -> ExitCode {
    let paint = Paint::for_stdout();
    let device = match args.device.parse::<Device>() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match tour(device, paint) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn section(paint: Paint, title: &str) {
    println!("\n{}", paint.bold(&format!("── {title} ──")));
}

fn show(paint: Paint, code: &str, value: impl std::fmt::Display) {
    println!("{} {code}", paint.dim("»"));
    for line in value.to_string().lines() {
        println!("  {line}");
    }
}

fn tour(device: Device, paint: Paint) -> Result<()> {
    println!(
        "oxmera {} — a tour of tensors on the {device} device",
        env!("CARGO_PKG_VERSION")
    );

    section(paint, "1. A tensor is a layout over shared storage");
    let a = Tensor::arange(0.0, 6.0, 1.0, DType::F32, device)?.reshape([2, 3])?;
    show(
        paint,
        "let a = Tensor::arange(0.0, 6.0, 1.0, F32)?.reshape([2, 3])?",
        &a,
    );
    show(paint, "a.strides()", format!("{:?}", a.strides()));

    section(paint, "2. Views never copy");
    let t = a.t()?;
    show(paint, "let t = a.t()?", &t);
    show(
        paint,
        "(t.strides(), t.is_contiguous(), t.shares_storage(&a))",
        format!(
            "({:?}, {}, {})",
            t.strides(),
            t.is_contiguous(),
            t.shares_storage(&a)
        ),
    );
    let every_other = a.slice(1, 0, 3, 2)?;
    show(
        paint,
        "a.slice(1, 0, 3, 2)?   // every other column",
        &every_other,
    );
    let refused = t.view([6]).unwrap_err();
    show(
        paint,
        "t.view([6])   // a transpose cannot be flattened in place",
        &refused,
    );
    show(
        paint,
        "t.reshape([6])?   // reshape copies when it must",
        t.reshape([6])?,
    );

    section(paint, "3. Broadcasting stretches size-1 dims with stride 0");
    let col = Tensor::from_vec(vec![10.0f32, 20.0], [2, 1], device)?;
    show(paint, "let col = [[10], [20]]   // shape [2, 1]", &col);
    show(paint, "(&a + &col)?", (&a + &col)?);
    show(
        paint,
        "col.broadcast_to([2, 3])?.strides()",
        format!("{:?}", col.broadcast_to([2, 3])?.strides()),
    );

    section(paint, "4. Matrix products follow numpy.matmul");
    let b = Tensor::ones([3, 2], DType::F32, device)?;
    show(
        paint,
        "a.matmul(&Tensor::ones([3, 2], F32)?)?",
        a.matmul(&b)?,
    );

    section(paint, "5. Reductions and a stable softmax");
    show(paint, "a.sum(&[1], false)?", a.sum(&[1], false)?);
    show(paint, "a.softmax(-1)?", a.softmax(-1)?);

    section(paint, "6. Gradients");
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], device)?.with_requires_grad(true)?;
    let loss = x.square()?.sum_all()?;
    show(
        paint,
        "let x = [1, 2, 3] (requires grad); let loss = Σ x²",
        &loss,
    );
    loss.backward()?;
    let grad = x.grad().expect("backward filled the leaf's gradient");
    show(
        paint,
        "loss.backward()?; x.grad()   // d/dx Σ x² = 2x",
        grad,
    );

    section(
        paint,
        "7. Every bad input is a typed error that names the op",
    );
    let c = Tensor::zeros([4, 5], DType::F32, device)?;
    let err = a.matmul(&c).unwrap_err();
    show(paint, "a.matmul(&zeros([4, 5]))", &err);
    let err = Tensor::from_vec(vec![1.0f32; 5], [2, 3], device).unwrap_err();
    show(paint, "Tensor::from_vec(vec![1.0; 5], [2, 3])", &err);

    println!(
        "\nNext: {} trains a network, {} shows the exercise ladder.",
        paint.bold("oxmera train"),
        paint.bold("oxmera ladder")
    );
    Ok(())
}
