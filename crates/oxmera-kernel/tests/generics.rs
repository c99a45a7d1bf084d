//! Generic kernels through the macro: the generated API (by type, by scalar,
//! every instance), several type parameters, a generic kernel calling a
//! helper, and an instance simulated against the host.

use oxmera_kernel::ir::{ParamKind, Scalar, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
use oxmera_kernel::{kernel, kernels};

/// `out[i] = x[idx[i]] * scale`: a float gathered by an integer index.
#[kernel(block = [32], dtypes(T = [f32], I = [i32, u32]))]
pub fn gather_scaled<T: Float, I: Int>(x: &[T], idx: &[I], out: &mut [T], scale: T) {
    let i = thread_idx_x();
    out[i] = x[idx[i] as u32] * scale;
}

#[kernels]
mod with_helper {
    /// The element `i` of a row-major `rows x cols` view read transposed.
    #[helper]
    fn transposed(i: u32, rows: u32, cols: u32) -> u32 {
        (i % rows) * cols + i / rows
    }

    /// `out[i] = x[transposed(i)] + T::MIN`, any number type.
    #[kernel(block = [32])]
    pub fn shifted<T: Number>(x: &[T], out: &mut [T]) {
        let i = thread_idx_x();
        out[i] = x[transposed(i, 4, 8)] + T::MIN;
    }
}

#[test]
fn several_type_parameters_make_the_product_of_their_dtypes() {
    let names: Vec<&str> = gather_scaled_instances()
        .iter()
        .map(|b| b().name.as_str())
        .collect();
    assert_eq!(
        names,
        ["gather_scaled<f32, i32>", "gather_scaled<f32, u32>"]
    );
    let k = gather_scaled::<f32, u32>();
    assert_eq!(k.type_arg_scalars(), [Scalar::F32, Scalar::U32]);
    assert_eq!(
        k.params[1].kind,
        ParamKind::Buffer {
            elem: Scalar::U32,
            writable: false
        }
    );
    assert!(std::ptr::eq(
        gather_scaled_instance(&[Scalar::F32, Scalar::I32]).unwrap(),
        gather_scaled::<f32, i32>()
    ));
    assert!(gather_scaled_instance(&[Scalar::F32]).is_none());
}

#[test]
fn an_instance_runs_in_the_simulator_as_its_dtype() {
    // x = 0.5, 1.5, 2.5, ..; idx reverses 32 elements; scale 2:
    // out[i] = (31 - i + 0.5) * 2 = 63 - 2i, exact in f32.
    let x: Vec<f32> = (0..32).map(|i| i as f32 + 0.5).collect();
    let idx: Vec<i32> = (0..32).rev().collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_i32(&idx)),
        Arg::Buffer(Buffer::from_f32(&[0.0; 32])),
        Arg::Scalar(Value::F32(2.0)),
    ];
    let launch = LaunchConfig {
        grid: oxmera_kernel::ir::Dim3::x(1),
        block: oxmera_kernel::ir::Dim3::x(32),
    };
    sim::run(
        gather_scaled::<f32, i32>(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let out = args[2].buffer().unwrap().to_f32();
    let want: Vec<f32> = (0..32).map(|i| 63.0 - 2.0 * i as f32).collect();
    assert_eq!(out, want);
}

#[test]
fn a_generic_kernel_inlines_a_helper_in_every_instance() {
    let names: Vec<&str> = with_helper::shifted_instances()
        .iter()
        .map(|b| b().name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "shifted<f32>",
            "shifted<i32>",
            "shifted<u32>",
            "shifted<f64>",
            "shifted<i64>",
            "shifted<u64>",
            "shifted<u8>",
            "shifted<u16>",
            "shifted<f16>",
            "shifted<bf16>"
        ]
    );
    for build in with_helper::shifted_instances() {
        let k = build();
        assert_eq!(k.inlined.len(), 1, "{}", k.name);
        assert_eq!(k.inlined[0].helper, "transposed");
    }
    // u32: T::MIN is 0, so out is x read transposed. x = 0..32 as a 4 x 8
    // row-major matrix: out[i] = x[(i % 4) * 8 + i / 4], e.g. out[1] = 8.
    let mut args = vec![
        Arg::Buffer(Buffer::from_u32(&(0..32).collect::<Vec<u32>>())),
        Arg::Buffer(Buffer::from_u32(&[0; 32])),
    ];
    let launch = LaunchConfig {
        grid: oxmera_kernel::ir::Dim3::x(1),
        block: oxmera_kernel::ir::Dim3::x(32),
    };
    sim::run(
        with_helper::shifted::<u32>(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let out = args[1].buffer().unwrap().to_u32();
    assert_eq!(&out[..6], &[0, 8, 16, 24, 1, 9]);
}

#[test]
fn the_dtype_markers_name_the_scalars_rust_lacks() {
    // Markers hold no value; they only select an instance by type.
    fn name_of<T>() -> &'static str {
        std::any::type_name::<T>()
    }
    assert!(name_of::<oxmera_kernel::dtype::f16>().ends_with("dtype::f16"));
    assert!(name_of::<oxmera_kernel::dtype::bf16>().ends_with("dtype::bf16"));
    assert_eq!(name_of::<oxmera_kernel::dtype::f32>(), "f32");
}
