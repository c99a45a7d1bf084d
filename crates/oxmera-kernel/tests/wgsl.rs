//! Every kernel oxmera ships, written as WGSL and compiled offline by naga
//! (wgpu's shader compiler): parsed, validated (types, uniformity,
//! capabilities), and translated to SPIR-V (Vulkan), MSL (Metal) and HLSL
//! (DX12; MSL for every kernel without f64, which Metal lacks). No GPU is
//! needed, so the Metal and DX12 paths are at least compiled for every
//! kernel on every CI run.

use naga::valid::{Capabilities, ShaderStages, SubgroupOperationSet, ValidationFlags, Validator};
use oxmera_kernel::emit::wgsl::{WgslError, WgslKernel, WgslOptions, wgsl};
use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::kernel;
use oxmera_kernel::registry::{self, Origin};
use oxmera_kernel::target::Target;

mod constructs;
use constructs::{blocks, every_construct};

/// Parses and validates `k` with naga; on success translates it to SPIR-V,
/// MSL and HLSL. Returns naga's message on failure.
fn compile(k: &WgslKernel) -> Result<(), String> {
    let module =
        naga::front::wgsl::parse_str(&k.source).map_err(|e| e.emit_to_string(&k.source))?;
    let mut validator = Validator::new(ValidationFlags::all(), Capabilities::all());
    validator
        .subgroup_stages(ShaderStages::COMPUTE)
        .subgroup_operations(SubgroupOperationSet::all());
    let info = validator
        .validate(&module)
        .map_err(|e| e.emit_to_string(&k.source))?;
    let spv = naga::back::spv::write_vec(&module, &info, &Default::default(), None)
        .map_err(|e| format!("SPIR-V: {e}"))?;
    assert!(!spv.is_empty());
    // Metal has no f64: no Metal adapter offers SHADER_F64, so the
    // backend never emits an f64 kernel for one (and naga's MSL writer
    // has no f64 type to write).
    let has_f64 = module.types.iter().any(|(_, t)| match t.inner {
        naga::TypeInner::Scalar(s)
        | naga::TypeInner::Vector { scalar: s, .. }
        | naga::TypeInner::Atomic(s) => s.kind == naga::ScalarKind::Float && s.width == 8,
        _ => false,
    }) || k.source.contains("f64");
    if !has_f64 {
        let pipeline = naga::back::msl::PipelineOptions {
            entry_point: Some((naga::ShaderStage::Compute, k.entry_point.clone())),
            ..Default::default()
        };
        let (msl, _) =
            naga::back::msl::write_string(&module, &info, &Default::default(), &pipeline)
                .map_err(|e| format!("MSL: {e}"))?;
        assert!(msl.contains(&k.entry_point));
    }
    let mut hlsl = String::new();
    let (options, pipeline) = (Default::default(), Default::default());
    let mut writer = naga::back::hlsl::Writer::new(&mut hlsl, &options, &pipeline);
    writer
        .write(&module, &info, None)
        .map_err(|e| format!("HLSL: {e}"))?;
    Ok(())
}

#[test]
fn every_library_kernel_compiles_for_vulkan_metal_and_dx12_at_every_declared_block() {
    let targets = [Target::generic(), "lavapipe".parse::<Target>().unwrap()];
    let mut compiled = 0;
    for e in registry::entries() {
        if e.origin != Origin::Library || e.name == "flip" {
            continue;
        }
        let k = (e.kernel)();
        for target in &targets {
            for block in blocks(k) {
                let opts = WgslOptions::new(block).with_target(*target);
                let w = wgsl(k, &opts).unwrap_or_else(|err| panic!("{}: {err}", e.name));
                if let Err(msg) = compile(&w) {
                    panic!(
                        "{} at block {block} for {target}: naga refused it:\n{msg}\n{}",
                        e.name, w.source
                    );
                }
                compiled += 1;
            }
        }
    }
    assert!(compiled >= 30, "only {compiled} shaders compiled");
}

#[test]
fn the_broken_corpus_compiles_too_so_the_analysis_is_the_only_guard() {
    // The corpus kernels are wrong in ways oxmera's analysis catches:
    // divergent barriers, non-convergent collectives, races. naga (and so
    // wgpu) accepts every one of them: its uniformity analysis does not
    // reject a barrier under divergent control flow, and races are no
    // compiler's business. So on wgpu nothing but oxmera's own gate stands
    // between such a kernel and a hung or wrong GPU launch.
    let mut compiled = Vec::new();
    for e in registry::entries() {
        if e.origin != Origin::Corpus {
            continue;
        }
        let k = (e.kernel)();
        let block = blocks(k)[0];
        let w = match wgsl(k, &WgslOptions::new(block)) {
            Ok(w) => w,
            Err(WgslError::Unsupported { .. }) => continue,
            Err(err) => panic!("{}: {err}", e.name),
        };
        if let Err(msg) = compile(&w) {
            panic!("{}: naga refused it:\n{msg}\n{}", e.name, w.source);
        }
        compiled.push(e.name);
    }
    assert!(compiled.len() > 10, "{compiled:?}");
    for divergent in [
        "barrier_thread_guard",
        "barrier_early_return",
        "barrier_odd_lanes",
    ] {
        assert!(compiled.contains(&divergent), "{divergent}: {compiled:?}");
    }
}

#[test]
fn naga_accepts_what_the_launch_aware_verdict_refuses() {
    // `flip` is clean at block 32 on a 32-wide target and a divergent
    // barrier at block 64 (or at block 32 on lavapipe's 8-wide subgroups).
    // Its WGSL compiles either way: the verdict is oxmera's alone.
    let k = oxmera_kernel::library::flip();
    for block in [32, 64] {
        let w = wgsl(k, &WgslOptions::new(Dim3::x(block))).unwrap();
        compile(&w).unwrap();
    }
}

#[test]
fn every_construct_of_the_language_compiles() {
    let k = every_construct();
    for target in ["generic", "lavapipe", "wave64"] {
        let target: Target = target.parse().unwrap();
        let w = wgsl(k, &WgslOptions::new(Dim3::x(64)).with_target(target)).unwrap();
        assert_eq!(w.subgroup_width, Some(target.warp_width()));
        if let Err(msg) = compile(&w) {
            panic!("{msg}\n{}", w.source);
        }
        assert!(w.source.contains("subgroupShuffle("));
        assert!(w.source.contains("atomic_add_g_bits"), "{}", w.source);
        assert!(
            w.source
                .contains("var<workgroup> s_hits: array<atomic<u32>, 4>;")
        );
        assert!(w.source.contains("storageBarrier();"));
        assert!(w.source.contains("bitcast<u32>(") && w.source.contains("bitcast<f32>("));
        // pow and erf as helpers: WGSL's pow leaves Rust's special cases
        // undefined, and WGSL has no erf.
        assert!(w.source.contains("fn pow_f32(x: f32, y: f32) -> f32"));
        assert!(w.source.contains("fn erf_f32(x: f32) -> f32"));
    }
}

#[test]
fn bindings_and_uniforms_follow_parameter_order() {
    let k = every_construct();
    let w = wgsl(k, &WgslOptions::new(Dim3::x(64))).unwrap();
    let names: Vec<_> = w.buffers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["x", "flags", "out", "counts", "signed", "bits"]);
    assert_eq!(w.uniform_binding, Some(6));
    assert_eq!(w.uniforms.len(), 4);
    let bytes = w.uniform_bytes(&[
        Value::U32(5),
        Value::F32(2.0),
        Value::Bool(true),
        Value::I32(-1),
    ]);
    assert_eq!(bytes.len(), 16);
    assert_eq!(&bytes[0..4], &5u32.to_le_bytes());
    assert_eq!(&bytes[4..8], &2.0f32.to_le_bytes());
    assert_eq!(&bytes[8..12], &1u32.to_le_bytes());
    assert_eq!(&bytes[12..16], &(-1i32).to_le_bytes());
}

#[test]
fn the_launch_is_compiled_in() {
    let k = oxmera_kernel::library::reduce_sum();
    let lavapipe: Target = "lavapipe".parse().unwrap();
    let w = wgsl(k, &WgslOptions::new(Dim3::x(128)).with_target(lavapipe)).unwrap();
    assert!(w.source.contains("@workgroup_size(128, 1, 1)"));
    // warp_size() is the target's: 8 lanes on lavapipe.
    assert!(w.source.contains("ws_4 = 8u;"), "{}", w.source);
    assert_eq!(w.subgroup_width, Some(8));
    let t = oxmera_kernel::library::transpose_tiled();
    let w = wgsl(t, &WgslOptions::new(Dim3::new(16, 16, 1))).unwrap();
    assert!(w.source.contains("array<f32, 272>"), "TILE*(TILE+1) = 272");
}

/// `if` and `match` as values, a statement `match` and `const` items: the
/// hidden locals they lower to are valid WGSL names, and naga takes it all.
#[kernel(block = [64])]
fn branching_values(x: &[f32], out: &mut [f32], codes: &mut [u32], n: u32) {
    const LIMIT: f32 = 1.5;
    let i = thread_idx_x();
    let v = if i < n { x[i] } else { 0.0 };
    let code = match i % 4 {
        0 => 10u32,
        1 | 2 => 20,
        _ => 30,
    };
    codes[i] = code;
    match code {
        10 => out[i] = v,
        _ => out[i] = if v > LIMIT { LIMIT } else { v },
    }
}

#[test]
fn value_branches_and_matches_compile_with_naga() {
    let k = wgsl(branching_values(), &WgslOptions::new(Dim3::x(64))).unwrap();
    compile(&k).unwrap_or_else(|e| panic!("{e}\n{}", k.source));
}
