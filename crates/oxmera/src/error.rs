//! [`AnyError`]: one error type for a program's `main`, into which every
//! error oxmera returns converts.
//!
//! Each layer keeps its own error type — the tensor ops' [`Error`], the
//! checkpoint format's [`CheckpointError`], the data sets' [`DataError`],
//! the kernel tools' — because each names what its own layer knows. A
//! program that uses several of them wants one `?` for all: `AnyError` has
//! a variant per source (with `From` for each), so `?` converts and the
//! original error, with every structured field, is still there to match
//! on: `AnyError::Tensor(Error::ShapeMismatch { .. })`.
//!
//! This is the one piece of logic the facade crate holds (ARCHITECTURE.md
//! says why): a type that names every layer's error can live only above
//! all of them, and the facade is the crate a program depends on.
//!
//! ```
//! use std::collections::BTreeMap;
//! use oxmera::prelude::*;
//!
//! fn main() -> AnyResult<()> {
//!     let dir = std::env::temp_dir().join(format!("anyerror-demo-{}", std::process::id()));
//!     std::fs::create_dir_all(&dir)?; // an io::Error
//!     let x = Tensor::new([[1f32, 2.], [3., 4.]], Device::Cpu)?; // a tensor Error
//!     let path = dir.join("x.safetensors");
//!     let tensors = BTreeMap::from([("x".to_string(), x.clone())]);
//!     oxmera::checkpoint::save(&path, &tensors, &BTreeMap::new())?; // a CheckpointError
//!     let back = oxmera::checkpoint::load(&path, Device::Cpu)?;
//!     let digits = oxmera::data::digits()?; // a DataError
//!     assert_eq!(back.tensor("x")?.to_vec::<f32>()?, x.to_vec::<f32>()?);
//!     assert_eq!(oxmera::data::Dataset::len(&digits), 1797);
//!     std::fs::remove_dir_all(&dir)?;
//!
//!     // The source error is still there, fields and all.
//!     let err: AnyError = x.matmul(&Tensor::zeros([3, 1], DType::F32, Device::Cpu)?).unwrap_err().into();
//!     assert!(matches!(err, AnyError::Tensor(Error::MatmulInner { .. })));
//!     Ok(())
//! }
//! ```

use oxmera_checkpoint::CheckpointError;
use oxmera_core::Error;
use oxmera_data::DataError;

/// Every error oxmera returns, by the layer that returned it (see the
/// [module docs](self)). New sources may be added: match with a `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnyError {
    /// A tensor operation, layer, optimizer or device error.
    #[error(transparent)]
    Tensor(#[from] Error),
    /// Saving or loading a checkpoint.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// Reading or batching a data set.
    #[error(transparent)]
    Data(#[from] DataError),
    /// A file or stream outside oxmera's own formats.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Emitting WGSL or PTX from a kernel.
    #[cfg(feature = "kernel")]
    #[error(transparent)]
    KernelEmit(#[from] oxmera_kernel::emit::EmitError),
    /// NVIDIA's `ptxas` refusing (or missing for) a PTX module.
    #[cfg(feature = "kernel")]
    #[error(transparent)]
    Ptxas(#[from] oxmera_kernel::emit::ptx::PtxasError),
    /// The kernel simulator stopping on a bug it found.
    #[cfg(feature = "kernel")]
    #[error(transparent)]
    KernelSim(#[from] oxmera_kernel::sim::SimError),
    /// Kernel arguments that do not fit the kernel's parameters.
    #[cfg(feature = "kernel")]
    #[error(transparent)]
    KernelArgs(#[from] oxmera_kernel::sim::ArgError),
    /// A launch (grid, block, shared memory) a kernel or target refuses.
    #[cfg(feature = "kernel")]
    #[error(transparent)]
    KernelLaunch(#[from] oxmera_kernel::launch::LaunchError),
    /// A kernel target that cannot be built or parsed.
    #[cfg(feature = "kernel")]
    #[error(transparent)]
    KernelTarget(#[from] oxmera_kernel::target::TargetError),
    /// The convergence analysis refusing a kernel.
    #[cfg(feature = "kernel")]
    #[error(transparent)]
    KernelCheck(#[from] oxmera_kernel::analysis::CheckError),
    /// Reading a conformance corpus.
    #[cfg(feature = "conformance")]
    #[error(transparent)]
    Corpus(#[from] oxmera_conformance::CorpusError),
    /// Reading or running the exercise ladder.
    #[cfg(feature = "ladder")]
    #[error(transparent)]
    Ladder(#[from] oxmera_ladder::Error),
}

/// `Result` with [`AnyError`]: the return type of a program's `main`.
pub type AnyResult<T> = std::result::Result<T, AnyError>;

impl AnyError {
    /// The tensor-level error inside, if that is what this is.
    pub fn as_tensor_error(&self) -> Option<&Error> {
        match self {
            AnyError::Tensor(e) => Some(e),
            _ => None,
        }
    }
}
