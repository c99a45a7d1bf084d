//! `oxmera export CHECKPOINT --format onnx OUT.onnx`: a trained model as
//! an ONNX graph that other runtimes load (ONNX Runtime, and through it
//! most deployment stacks).
//!
//! The graph is written by hand against ONNX's protobuf schema
//! (`onnx.proto`: `ModelProto`, `GraphProto`, `NodeProto`,
//! `TensorProto`, …) with the wire encoder of `oxmera-tensorboard`,
//! rather than through a protobuf code generator: the handful of messages
//! these networks need fits in two files, and a learner can read every
//! byte's origin. The weights are initializers (`raw_data`, little-endian
//! f32) under their state-dict names; the batch dimension is symbolic.
//!
//! The classifiers (IR 7, opset 13, which every ONNX Runtime since 1.6
//! loads): each layer of the two networks `oxmera train` builds maps to one
//! ONNX operator: `Flatten` (axis 1), `Linear` → `Gemm` (transB = 1, as the
//! weight is `[out, in]`), `ReLU` → `Relu`, `Conv2d` → `Conv` (pads,
//! strides, dilations, group), `MaxPool2d` → `MaxPool` (floor mode, as
//! oxmera pools). The transformer (IR 8, opset 17): see [`transformer`].
//!
//! `--sample N` also writes N inputs (test samples, or validation windows
//! of text) and oxmera's logits for them as `.npy` files, so that another
//! runtime's outputs can be compared with oxmera's (CI does, with ONNX
//! Runtime).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use oxmera::Tensor;
use oxmera_data::{DataLoader, LoaderConfig};
use oxmera_tensorboard::wire::Message;

use super::ModelKind;
use super::error::TrainError;
use super::eval::{Restored, restore, say};
use super::sample::transformer_from;
use super::task::MODEL_CONFIG_KEY;

mod transformer;

/// The file formats `oxmera export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// ONNX (IR 7 and opset 13 for the classifiers, IR 8 and opset 17 for
    /// the transformer).
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
    /// Also write the first N test samples (a transformer: N validation
    /// windows of token ids) and oxmera's logits for them, as
    /// OUTPUT.inputs.npy and OUTPUT.logits.npy.
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

/// An ONNX opset version and the IR version that goes with it.
#[derive(Debug, Clone, Copy)]
struct Opset {
    version: i64,
    ir_version: i64,
}

/// The classifiers' graphs need nothing past opset 13 (ONNX 1.8), which
/// every ONNX Runtime since 1.6 loads.
const CLASSIFIER_OPSET: Opset = Opset {
    version: 13,
    ir_version: 7,
};
/// `TensorProto.DataType.FLOAT`.
const FLOAT: u64 = 1;
/// `TensorProto.DataType.INT64`.
const INT64: u64 = 7;

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
        // `export` sends a transformer's checkpoint to `transformer` first.
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
    node_outputs(op, inputs, &[output], attributes)
}

/// A node with several outputs (`Split`); it is named after the first.
fn node_outputs(op: &str, inputs: &[&str], outputs: &[&str], attributes: &[Message]) -> Message {
    let mut n = Message::new();
    // NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5.
    for i in inputs {
        n.string(1, i);
    }
    for o in outputs {
        n.string(2, o);
    }
    n.string(3, outputs[0]).string(4, op);
    for a in attributes {
        n.message(5, a);
    }
    n
}

fn attr_float(name: &str, value: f32) -> Message {
    let mut a = Message::new();
    // f = 2, type = 20 (FLOAT = 1).
    a.string(1, name).float(2, value).varint(20, 1);
    a
}

/// A float `TensorProto` initializer holding `t` as f32.
fn initializer(name: &str, t: &Tensor) -> Result<Message, TrainError> {
    let values = t.to_dtype(oxmera::DType::F32)?.to_vec::<f32>()?;
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok(raw_initializer(name, t.dims(), FLOAT, &raw))
}

/// A `TensorProto` initializer of `data_type` from little-endian bytes:
/// dims = 1, data_type = 2, name = 8, raw_data = 9.
fn raw_initializer(name: &str, dims: &[usize], data_type: u64, raw: &[u8]) -> Message {
    let mut m = Message::new();
    for &d in dims {
        m.int64(1, d as i64);
    }
    m.varint(2, data_type).string(8, name).bytes(9, raw);
    m
}

/// One dim of a graph input's or output's shape.
#[derive(Debug, Clone, Copy)]
enum Dim {
    /// Chosen by whoever runs the graph (`batch`, `tokens`).
    Named(&'static str),
    /// Fixed by the model.
    Size(usize),
}

/// A `ValueInfoProto` of a tensor of `elem_type` and `dims`: name = 1,
/// type = 2 → TypeProto.tensor_type = 1 → elem_type = 1, shape = 2 →
/// dim = 1 → dim_value = 1 / dim_param = 2.
fn value_info(name: &str, elem_type: u64, dims: &[Dim]) -> Message {
    let mut shape = Message::new();
    for d in dims {
        let mut dim = Message::new();
        match *d {
            Dim::Named(param) => dim.string(2, param),
            Dim::Size(n) => dim.int64(1, n as i64),
        };
        shape.message(1, &dim);
    }
    let mut tensor = Message::new();
    tensor.varint(1, elem_type).message(2, &shape);
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
    let batch = |rest: &[usize]| {
        std::iter::once(Dim::Named("batch"))
            .chain(rest.iter().map(|&d| Dim::Size(d)))
            .collect::<Vec<_>>()
    };
    graph.message(11, &value_info("input", FLOAT, &batch(feature_shape)));
    graph.message(12, &value_info("logits", FLOAT, &batch(&[classes])));
    Ok(model_bytes(&graph, CLASSIFIER_OPSET))
}

/// A `ModelProto` around `graph`, written against `opset`.
fn model_bytes(graph: &Message, opset: Opset) -> Vec<u8> {
    let mut import = Message::new();
    import.string(1, "").int64(2, opset.version);
    let mut model = Message::new();
    model
        .int64(1, opset.ir_version)
        .string(2, "oxmera")
        .string(3, env!("CARGO_PKG_VERSION"))
        .message(7, graph)
        .message(8, &import);
    model.into_bytes()
}

fn export(args: &ExportArgs) -> Result<(), TrainError> {
    let device = oxmera::Device::Cpu;
    let checkpoint = oxmera_checkpoint::load(&args.checkpoint, device)?;
    if checkpoint.metadata.contains_key(MODEL_CONFIG_KEY) {
        let (model, vocab) = transformer_from(&checkpoint, &args.checkpoint, device)?;
        return transformer::export(args, &model, &vocab);
    }
    let Restored {
        net, kind, parts, ..
    } = restore(&args.checkpoint, device, None, None)?;
    let bytes = onnx_model(
        kind,
        &net.state_dict(),
        &parts.feature_shape,
        parts.num_classes,
    )?;
    let dims = |d: &[usize]| {
        d.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    wrote(
        args,
        &bytes,
        CLASSIFIER_OPSET,
        &format!(
            "input [batch, {}], output logits [batch, {}]",
            dims(&parts.feature_shape),
            parts.num_classes
        ),
    )?;
    if let Some(n) = args.sample {
        let loader = DataLoader::new(&parts.test, LoaderConfig::new(n.max(1)).on(device))?;
        let batch = loader
            .epoch(0)
            .next()
            .ok_or_else(|| TrainError::Usage("the test split is empty".into()))??;
        let logits = oxmera::tensor::no_grad(|| net.forward(&batch.x))?;
        write_sample(args, &batch.x, &logits)?;
    }
    Ok(())
}

/// Writes the model's bytes to the output and says what it holds.
fn wrote(args: &ExportArgs, bytes: &[u8], opset: Opset, shapes: &str) -> Result<(), TrainError> {
    oxmera_checkpoint::write_file_atomic(&args.output, bytes)?;
    say(format_args!(
        "wrote {} ({} bytes; ONNX IR {}, opset {}; {shapes})",
        args.output.display(),
        bytes.len(),
        opset.ir_version,
        opset.version,
    ));
    Ok(())
}

/// `--sample`: the inputs and oxmera's logits for them, as `.npy` files
/// beside the model.
fn write_sample(args: &ExportArgs, inputs: &Tensor, logits: &Tensor) -> Result<(), TrainError> {
    for (suffix, t) in [("inputs", inputs), ("logits", logits)] {
        let path = sibling(&args.output, suffix);
        oxmera_checkpoint::write_file_atomic(&path, &npy(t)?)?;
        say(format_args!("wrote {}", path.display()));
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
/// header padded to a multiple of 64 bytes, little-endian data): token
/// ids as `i8` (64-bit integers), anything else as `f4`.
fn npy(t: &Tensor) -> Result<Vec<u8>, TrainError> {
    let (descr, data): (&str, Vec<u8>) = if t.dtype() == oxmera::DType::I64 {
        let values = t.to_vec::<i64>()?;
        ("<i8", values.iter().flat_map(|v| v.to_le_bytes()).collect())
    } else {
        let values = t.to_dtype(oxmera::DType::F32)?.to_vec::<f32>()?;
        ("<f4", values.iter().flat_map(|v| v.to_le_bytes()).collect())
    };
    let shape: Vec<String> = t.dims().iter().map(usize::to_string).collect();
    let shape = if shape.len() == 1 {
        format!("({},)", shape[0])
    } else {
        format!("({})", shape.join(", "))
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + header length (2) + header + '\n'.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend(data);
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
