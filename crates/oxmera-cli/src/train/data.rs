//! The data sets `oxmera train` knows, split into train and test parts.

use oxmera_data::{
    CharVocab, Dataset, MoonsConfig, SpiralsConfig, Subset, TargetKind, TensorDataset, TextSplit,
    moons, spirals, split,
};

use super::error::TrainError;
use super::{DatasetKind, ModelKind, TrainArgs};

/// A training set and a test set drawn from one source.
pub struct Parts {
    /// What the samples are, for the summary line.
    pub description: String,
    pub train: Subset<TensorDataset>,
    pub test: Subset<TensorDataset>,
    /// Per-sample feature shape (`[c, h, w]` for images).
    pub feature_shape: Vec<usize>,
    pub num_classes: usize,
}

/// The fraction of a data set held out for testing when it has no
/// official test part.
const TEST_FRACTION: f64 = 0.2;

/// A text as ids, split for training and validation, with its vocabulary.
pub struct TextParts {
    /// What the text is, for the summary line.
    pub description: String,
    /// The ids, split into training and validation parts.
    pub split: TextSplit,
    /// The sorted distinct characters.
    pub vocab: CharVocab,
}

/// The share of a text held out for validation: its last tenth.
pub(crate) const VALID_FRACTION: f64 = 0.1;

/// The text `args` ask for (`--model transformer`).
pub fn load_text(args: &TrainArgs) -> Result<TextParts, TrainError> {
    if args.dataset() != DatasetKind::Shakespeare {
        return Err(TrainError::Usage(format!(
            "--model transformer reads text: --dataset shakespeare (the default for it), not {:?}",
            args.dataset()
        )));
    }
    let text = oxmera_data::shakespeare()?;
    let vocab = CharVocab::from_text(&text);
    let split = TextSplit::new(vocab.encode(&text)?, VALID_FRACTION)?;
    let description = format!(
        "shakespeare (8 plays, embedded): {} train / {} validation characters, {} distinct",
        split.train.len(),
        split.valid.len(),
        vocab.len()
    );
    Ok(TextParts {
        description,
        split,
        vocab,
    })
}

/// The train and test parts `args` ask for.
pub fn load(args: &TrainArgs) -> Result<Parts, TrainError> {
    let (description, whole) = match args.dataset() {
        DatasetKind::Digits => ("digits (8x8, embedded)", oxmera_data::digits()?),
        DatasetKind::Spirals => {
            let config = SpiralsConfig {
                seed: args.seed,
                ..SpiralsConfig::default()
            };
            ("spirals (3 arms, procedural)", spirals(config)?)
        }
        DatasetKind::Moons => {
            let config = MoonsConfig {
                seed: args.seed,
                ..MoonsConfig::default()
            };
            ("moons (procedural)", moons(config)?)
        }
        DatasetKind::Mnist => return load_mnist(args),
        DatasetKind::Shakespeare => {
            return Err(TrainError::Usage(
                "--dataset shakespeare is text: train it with --model transformer".into(),
            ));
        }
    };
    let parts = split(whole.len(), TEST_FRACTION, args.seed)?;
    let description = format!(
        "{description}: {} train / {} test, seeded {:.0}/{:.0} split",
        parts.train.len(),
        parts.test.len(),
        100.0 * (1.0 - TEST_FRACTION),
        100.0 * TEST_FRACTION
    );
    finish(
        description,
        whole.clone(),
        parts.train,
        whole,
        parts.test,
        args,
    )
}

fn load_mnist(args: &TrainArgs) -> Result<Parts, TrainError> {
    let Some(dir) = &args.data else {
        return Err(TrainError::Usage(
            "--dataset mnist needs --data DIR, the directory holding the four IDX files \
             (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, \
             t10k-labels-idx1-ubyte; .gz accepted)"
                .into(),
        ));
    };
    let mnist = oxmera_data::mnist(dir)?;
    let (n_train, n_test) = (mnist.train.len(), mnist.test.len());
    let description = format!(
        "IDX files in {}: {n_train} train / {n_test} test",
        dir.display()
    );
    finish(
        description,
        mnist.train,
        (0..n_train).collect(),
        mnist.test,
        (0..n_test).collect(),
        args,
    )
}

fn finish(
    description: String,
    train_source: TensorDataset,
    train: Vec<usize>,
    test_source: TensorDataset,
    test: Vec<usize>,
    args: &TrainArgs,
) -> Result<Parts, TrainError> {
    let TargetKind::Classes { num_classes } = train_source.target_kind() else {
        return Err(TrainError::Usage(
            "oxmera train trains classifiers; this data set has real-valued targets".into(),
        ));
    };
    // An empty part would "train" to exit 0 on nothing: refuse it first.
    if train.is_empty() || test.is_empty() {
        return Err(TrainError::Usage(format!(
            "{description}: the {} part has no samples; there is nothing to {}",
            if train.is_empty() { "training" } else { "test" },
            if train.is_empty() {
                "train on"
            } else {
                "score"
            }
        )));
    }
    let feature_shape = train_source.feature_shape().to_vec();
    if args.model == ModelKind::Cnn && feature_shape.len() != 3 {
        return Err(TrainError::Usage(format!(
            "--model cnn needs image data (digits or mnist); this data set's samples have shape {feature_shape:?}"
        )));
    }
    Ok(Parts {
        description,
        train: Subset::new(train_source, train)?,
        test: Subset::new(test_source, test)?,
        feature_shape,
        num_classes,
    })
}
