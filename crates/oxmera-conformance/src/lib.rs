//! The conformance suite: the reference's definition of correct, made
//! executable for every backend.
//!
//! The reference backend computes every op naively in `f64` and rounds
//! once; it *defines* the right answer. A fast backend reorders sums,
//! vectorizes transcendentals and blocks its matrix products, so it cannot
//! match bit for bit — but it must stay within an error that can be
//! *derived*, op by op, from how such an implementation rounds. This crate
//! holds that derivation ([`tolerance`]), a corpus of cases that probes
//! every op of the [`oxmera_tensor::Backend`] trait with the inputs that
//! break implementations (NaN, infinities, signed zeros, subnormals, huge
//! and tiny magnitudes, ties, zero-size and size-1 dims, and inputs that
//! are permuted, stepped, broadcast or offset into their storage), and one
//! runner that executes the corpus on any device and on the reference and
//! compares — outputs, and the gradients of every differentiable op.
//!
//! The corpus is data: TOML files under `corpus/`, embedded at compile
//! time, in the format `CORPUS.md` documents. A case is added by writing
//! a few lines there, not Rust.
//!
//! ```
//! use oxmera_core::Device;
//!
//! // The reference against itself: trivially, every comparison passes.
//! let report = oxmera_conformance::run(Device::Reference, Some("softmax"));
//! assert!(report.passed());
//! assert!(report.rows().iter().any(|r| r.op == "log_softmax"));
//! println!("{report}");
//! ```
//!
//! What this crate must never know about: how any backend computes. It
//! sees a backend only through the tensor front end on a [`Device`], so
//! the same corpus and the same bounds serve the CPU backend, a GPU
//! backend, or a deliberately broken one in a test.

mod apply;
mod composite;
mod corpus;
mod error;
mod layout;
mod ops;
mod report;
mod runner;
pub mod tolerance;
mod values;

// Naming the reference crate keeps its link-time backend provider, so
// `Device::Reference` works wherever this crate is used.
use oxmera_reference as _;

use oxmera_core::Device;

pub use composite::Composite;
pub use corpus::{Case, Corpus, InputSpec};
pub use error::CorpusError;
pub use layout::LayoutClass;
pub use ops::{Op, backend_op_names};
pub use report::{Declined, Failure, Phase, Report, Row, Tally};
pub use runner::run_corpus;
pub use values::{Scalar, ValueSpec, specials};

/// Runs the built-in corpus on `device` against the reference, keeping
/// the cases whose id or op name contains `filter` (all for `None`).
///
/// # Panics
/// If the embedded corpus does not parse, which the crate's own tests
/// rule out; use [`Corpus::builtin`] and [`run_corpus`] to handle that
/// case as an error.
pub fn run(device: Device, filter: Option<&str>) -> Report {
    let corpus = match Corpus::builtin() {
        Ok(c) => c,
        Err(e) => panic!("the built-in conformance corpus is malformed: {e}"),
    };
    run_corpus(&corpus, device, filter)
}
