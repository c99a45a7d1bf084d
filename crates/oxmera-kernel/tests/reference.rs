//! The library kernels in the simulator agree with the reference backend on
//! the same inputs. Tolerance: each demo's f32 error bound (from its error
//! analysis against exact arithmetic) plus one ulp for the reference's own
//! rounding of its f64 result to f32.

use oxmera_core::Device;
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::library;
use oxmera_kernel::sim::{self, Arg, SimOptions};
use oxmera_reference as _;
use oxmera_tensor::Tensor;

fn buf(args: &[Arg], i: usize) -> Vec<f32> {
    args[i].buffer().unwrap().to_f32()
}

fn t(v: Vec<f32>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(v, shape.to_vec(), Device::Reference).unwrap()
}

/// The reference result for a demo's inputs, in the demo's output order.
fn reference(name: &str, args: &[Arg]) -> Vec<f32> {
    let out = match name {
        "add" => t(buf(args, 0), &[1000])
            .add(&t(buf(args, 1), &[1000]))
            .unwrap(),
        "binary_strided" => t(buf(args, 0), &[3, 1, 7])
            .mul(&t(buf(args, 1), &[5, 7]))
            .unwrap(),
        "unary_strided" => t(buf(args, 0), &[7, 5, 3])
            .permute(&[2, 1, 0])
            .unwrap()
            .tanh()
            .unwrap(),
        "softmax_rows" => t(buf(args, 0), &[6, 100]).softmax(1).unwrap(),
        "transpose_tiled" => t(buf(args, 0), &[37, 45]).t().unwrap(),
        "matmul_tiled" => t(buf(args, 0), &[33, 29])
            .matmul(&t(buf(args, 1), &[29, 21]))
            .unwrap(),
        _ => unreachable!("no reference mapping for {name}"),
    };
    out.contiguous().unwrap().to_vec::<f32>().unwrap()
}

#[test]
fn library_kernels_match_the_reference_backend() {
    let names = [
        "add",
        "binary_strided",
        "unary_strided",
        "softmax_rows",
        "transpose_tiled",
        "matmul_tiled",
    ];
    for name in names {
        let e = oxmera_kernel::registry::find(name).unwrap();
        let block = (e.kernel)().launch.blocks[0];
        let mut d = library::prepare(name, block, 5).unwrap();
        let want = reference(name, &d.args);
        sim::run((e.kernel)(), d.launch, &mut d.args, &SimOptions::default()).unwrap();
        let got = buf(&d.args, d.output);
        assert_eq!(got.len(), want.len(), "{name}");
        for (k, ((g, r), tol)) in got.iter().zip(&want).zip(&d.tolerance).enumerate() {
            let ulp = (r.abs() * f32::EPSILON) as f64;
            assert!(
                ((*g - *r) as f64).abs() <= tol + ulp,
                "{name}[{k}]: simulator {g}, reference {r}, tolerance {}",
                tol + ulp
            );
        }
    }
}

#[test]
fn block_sums_add_up_to_the_reference_sum() {
    let block = Dim3::x(256);
    let mut d = library::prepare("reduce_sum", block, 9).unwrap();
    let x = buf(&d.args, 0);
    let n = x.len();
    let abs: f64 = x.iter().map(|v| v.abs() as f64).sum();
    let want = t(x, &[n])
        .sum(&[0], false)
        .unwrap()
        .to_vec::<f32>()
        .unwrap()[0];
    sim::run(
        library::reduce_sum(),
        d.launch,
        &mut d.args,
        &SimOptions::default(),
    )
    .unwrap();
    let partials = buf(&d.args, 1);
    let got: f64 = partials.iter().map(|v| *v as f64).sum();
    // Per-block error bound (the demo's) summed, plus the reference's rounding.
    let tol: f64 = d.tolerance.iter().sum::<f64>() + abs * f32::EPSILON as f64;
    assert!(
        (got - want as f64).abs() <= tol,
        "simulator {got}, reference {want}, tolerance {tol}"
    );
}
