//! `oxmera export CHECKPOINT --format onnx OUT.onnx`: a trained model as
//! an ONNX graph that other runtimes load (ONNX Runtime, and through it
//! most deployment stacks).
//!
//! The graph is written by hand against ONNX's protobuf schema
//! (`onnx.proto`: `ModelProto`, `GraphProto`, `NodeProto`,
//! `TensorProto`, …) with the wire encoder of `oxmera-tensorboard`,
//! rather than through a protobuf code generator: the handful of messages
//! an MLP or a small CNN needs fits in this file, and a learner can read
//! every byte's origin. IR version 7 with opset 13 (ONNX 1.8+), which
//! every ONNX Runtime since 1.6 loads. The weights are initializers
//! (`raw_data`, little-endian f32); the batch dimension is symbolic.
//!
//! Each layer of the two networks `oxmera train` builds maps to one ONNX
//! operator: `Flatten` (axis 1), `Linear` → `Gemm` (transB = 1, as the
//! weight is `[out, in]`), `ReLU` → `Relu`, `Conv2d` → `Conv` (pads,
//! strides, dilations, group), `MaxPool2d` → `MaxPool` (floor mode, as
//! oxmera pools). `--sample N` also writes the first N test samples and
//! oxmera's logits for them as `.npy` files, so that another runtime's
//! outputs can be compared with oxmera's (CI does, with ONNX Runtime).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use oxmera::Tensor;
use oxmera_data::{DataLoader, LoaderConfig};
use oxmera_tensorboard::wire::Message;

use super::ModelKind;
use super::error::TrainError;
use super::eval::{Restored, restore, say};

/// The file formats `oxmera export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// ONNX (IR 7, opset 13).
    Onnx,
}

/// Arguments of `oxmera export`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// A checkpoint written by `oxmera train`.
    pub checkpoint: PathBuf,
    /// The format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Onnx)]
    pub format: ExportFormat,
    /// The file to write.
    pub output: PathBuf,
    /// Also write the first N test samples and oxmera's logits for them,
    /// as OUTPUT.inputs.npy and OUTPUT.logits.npy.
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
}

/// Runs `oxmera export`: exit 0, or 2 with the error.
pub fn run(args: ExportArgs) -> ExitCode {
    match export(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The ONNX opset the graph is written against, and the IR version that
/// goes with it.
const OPSET: i64 = 13;
const IR_VERSION: i64 = 7;
/// `TensorProto.DataType.FLOAT`.
const FLOAT: u64 = 1;

/// One layer of the networks `oxmera train` builds, by its index in the
/// `Sequential` (which is its state-dict prefix).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Layer {
    Flatten,
    Linear(usize),
    Relu,
    /// A 3x3 convolution with padding 1 (as `model.rs` builds them).
    Conv(usize),
    /// 2x2 max pooling with stride 2.
    MaxPool,
}

/// The layers of `kind`, in order (mirrors `model::build`; a test checks
/// that the two agree on every parameter).
fn layers(kind: ModelKind) -> Vec<Layer> {
    use Layer::*;
    match kind {
        // `restore` refuses a transformer's checkpoint before export asks.
        ModelKind::Transformer => Vec::new(),
        ModelKind::Mlp => vec![Flatten, Linear(1), Relu, Linear(3), Relu, Linear(5)],
        ModelKind::Cnn => vec![
            Conv(0),
            Relu,
            MaxPool,
            Conv(3),
            Relu,
            MaxPool,
            Flatten,
            Linear(7),
            Relu,
            Linear(9),
        ],
    }
}

fn attr_int(name: &str, value: i64) -> Message {
    let mut a = Message::new();
    // AttributeProto: name = 1, i = 3, type = 20 (INT = 2).
    a.string(1, name).int64(3, value).varint(20, 2);
    a
}

fn attr_ints(name: &str, values: &[i64]) -> Message {
    let mut a = Message::new();
    // ints = 8 (repeated, unpacked as onnx.proto's proto2 schema writes
    // them), type = 20 (INTS = 7).
    a.string(1, name);
    for &v in values {
        a.int64(8, v);
    }
    a.varint(20, 7);
    a
}

fn node(op: &str, inputs: &[&str], output: &str, attributes: &[Message]) -> Message {
    let mut n = Message::new();
    // NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5.
    for i in inputs {
        n.string(1, i);
    }
    n.string(2, output).string(3, output).string(4, op);
    for a in attributes {
        n.message(5, a);
    }
    n
}

/// A float `TensorProto` initializer: dims = 1, data_type = 2, name = 8,
/// raw_data = 9.
fn initializer(name: &str, t: &Tensor) -> Result<Message, TrainError> {
    let values = t.to_dtype(oxmera::DType::F32)?.to_vec::<f32>()?;
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut m = Message::new();
    for &d in t.dims() {
        m.int64(1, d as i64);
    }
    m.varint(2, FLOAT).string(8, name).bytes(9, &raw);
    Ok(m)
}

/// A `ValueInfoProto` of a float tensor whose first dim is the symbolic
/// batch: name = 1, type = 2 → TypeProto.tensor_type = 1 → elem_type = 1,
/// shape = 2 → dim = 1 → dim_value = 1 / dim_param = 2.
fn value_info(name: &str, dims: &[usize]) -> Message {
    let mut shape = Message::new();
    let mut batch = Message::new();
    batch.string(2, "batch");
    shape.message(1, &batch);
    for &d in dims {
        let mut dim = Message::new();
        dim.int64(1, d as i64);
        shape.message(1, &dim);
    }
    let mut tensor = Message::new();
    tensor.varint(1, FLOAT).message(2, &shape);
    let mut ty = Message::new();
    ty.message(1, &tensor);
    let mut v = Message::new();
    v.string(1, name).message(2, &ty);
    v
}

/// The ONNX model of `kind` with the weights of `state` (the model's
/// state dict), for samples of `feature_shape` and `classes` outputs.
fn onnx_model(
    kind: ModelKind,
    state: &BTreeMap<String, Tensor>,
    feature_shape: &[usize],
    classes: usize,
) -> Result<Vec<u8>, TrainError> {
    let mut graph = Message::new();
    let mut current = "input".to_string();
    let weight = |name: String| {
        state.get(&name).cloned().ok_or_else(|| {
            TrainError::Usage(format!(
                "the checkpoint has no {name}: not an oxmera train model"
            ))
        })
    };
    for (i, layer) in layers(kind).into_iter().enumerate() {
        let out = format!("x{i}");
        let n = match layer {
            Layer::Flatten => node("Flatten", &[&current], &out, &[attr_int("axis", 1)]),
            Layer::Relu => node("Relu", &[&current], &out, &[]),
            Layer::MaxPool => node(
                "MaxPool",
                &[&current],
                &out,
                &[
                    attr_ints("kernel_shape", &[2, 2]),
                    attr_ints("strides", &[2, 2]),
                ],
            ),
            Layer::Linear(k) | Layer::Conv(k) => {
                let (w, b) = (format!("{k}.weight"), format!("{k}.bias"));
                graph.message(5, &initializer(&w, &weight(w.clone())?)?);
                graph.message(5, &initializer(&b, &weight(b.clone())?)?);
                if matches!(layer, Layer::Linear(_)) {
                    node("Gemm", &[&current, &w, &b], &out, &[attr_int("transB", 1)])
                } else {
                    node(
                        "Conv",
                        &[&current, &w, &b],
                        &out,
                        &[
                            attr_ints("kernel_shape", &[3, 3]),
                            attr_ints("pads", &[1, 1, 1, 1]),
                            attr_ints("strides", &[1, 1]),
                            attr_ints("dilations", &[1, 1]),
                            attr_int("group", 1),
                        ],
                    )
                }
            }
        };
        graph.message(1, &n);
        current = out;
    }
    // The last node's output is the graph's output, under a clear name.
    graph.message(1, &node("Identity", &[&current], "logits", &[]));
    graph.string(2, &format!("oxmera-{kind:?}").to_lowercase());
    graph.message(11, &value_info("input", feature_shape));
    graph.message(12, &value_info("logits", &[classes]));

    let mut opset = Message::new();
    opset.string(1, "").int64(2, OPSET);
    let mut model = Message::new();
    model
        .int64(1, IR_VERSION)
        .string(2, "oxmera")
        .string(3, env!("CARGO_PKG_VERSION"))
        .message(7, &graph)
        .message(8, &opset);
    Ok(model.into_bytes())
}

fn export(args: &ExportArgs) -> Result<(), TrainError> {
    let device = oxmera::Device::Cpu;
    let Restored {
        net, kind, parts, ..
    } = restore(&args.checkpoint, device, None, None)?;
    let bytes = onnx_model(
        kind,
        &net.state_dict(),
        &parts.feature_shape,
        parts.num_classes,
    )?;
    oxmera_checkpoint::write_file_atomic(&args.output, &bytes)?;
    say(format_args!(
        "wrote {} ({} bytes; ONNX IR {IR_VERSION}, opset {OPSET}; input [batch, {}], output logits [batch, {}])",
        args.output.display(),
        bytes.len(),
        parts
            .feature_shape
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        parts.num_classes
    ));
    if let Some(n) = args.sample {
        let loader = DataLoader::new(&parts.test, LoaderConfig::new(n.max(1)).on(device))?;
        let batch = loader
            .epoch(0)
            .next()
            .ok_or_else(|| TrainError::Usage("the test split is empty".into()))??;
        let logits = oxmera::tensor::no_grad(|| net.forward(&batch.x))?;
        for (suffix, t) in [("inputs", &batch.x), ("logits", &logits)] {
            let path = sibling(&args.output, suffix);
            oxmera_checkpoint::write_file_atomic(&path, &npy(t)?)?;
            say(format_args!("wrote {}", path.display()));
        }
    }
    Ok(())
}

/// `OUT.onnx` → `OUT.onnx.SUFFIX.npy`.
fn sibling(output: &Path, suffix: &str) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(format!(".{suffix}.npy"));
    PathBuf::from(name)
}

/// A tensor as a NumPy `.npy` file (format 1.0: magic, a Python-dict
/// header padded to a multiple of 64 bytes, little-endian f32 data).
fn npy(t: &Tensor) -> Result<Vec<u8>, TrainError> {
    let values = t.to_dtype(oxmera::DType::F32)?.to_vec::<f32>()?;
    let shape: Vec<String> = t.dims().iter().map(usize::to_string).collect();
    let shape = if shape.len() == 1 {
        format!("({},)", shape[0])
    } else {
        format!("({})", shape.join(", "))
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + header length (2) + header + '\n'.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use oxmera::{Device, Generator};

    use super::*;
    use crate::train::model;

    #[test]
    fn every_parameter_of_both_networks_is_exported() {
        for (kind, shape) in [
            (ModelKind::Mlp, vec![1, 8, 8]),
            (ModelKind::Cnn, vec![1, 8, 8]),
        ] {
            let net = model::build(kind, &shape, 10, &mut Generator::new(0), Device::Cpu).unwrap();
            let state = net.state_dict();
            let exported: Vec<String> = layers(kind)
                .into_iter()
                .filter_map(|l| match l {
                    Layer::Linear(k) | Layer::Conv(k) => Some(k),
                    _ => None,
                })
                .flat_map(|k| [format!("{k}.bias"), format!("{k}.weight")])
                .collect();
            let mut names: Vec<String> = state.keys().cloned().collect();
            let mut exported_sorted = exported.clone();
            names.sort();
            exported_sorted.sort();
            assert_eq!(names, exported_sorted, "{kind:?}");
            let bytes = onnx_model(kind, &state, &shape, 10).unwrap();
            assert!(bytes.len() > state.values().map(|t| 4 * t.numel()).sum::<usize>());
        }
    }

    #[test]
    fn npy_headers_are_64_byte_aligned() {
        let t = Tensor::zeros([2, 3], oxmera::DType::F32, Device::Cpu).unwrap();
        let bytes = npy(&t).unwrap();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes.len(), 10 + header_len + 6 * 4);
        assert!(String::from_utf8_lossy(&bytes[10..10 + header_len]).contains("'shape': (2, 3)"));
    }
}
