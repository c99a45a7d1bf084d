//! The loader: shuffling, batching, resuming, and its checks on samples.

use oxmera_core::{DType, Device};
use oxmera_cpu as _;
use oxmera_data::{
    DataError, DataLoader, Dataset, LoaderConfig, Sample, Subset, Target, TargetKind,
    TensorDataset, split,
};
use oxmera_reference as _;
use proptest::prelude::*;

/// `n` samples whose single feature is the sample's own index, so a
/// batch's `x` says which samples it holds.
fn numbered(n: usize) -> TensorDataset {
    let features = (0..n).map(|i| i as f32).collect();
    let labels = (0..n).map(|i| (i % 3) as i64).collect();
    TensorDataset::classification(features, vec![1], labels, 3).unwrap()
}

fn epoch_indices<D: Dataset>(loader: &DataLoader<D>, epoch: u64) -> Vec<Vec<usize>> {
    loader
        .epoch(epoch)
        .map(|b| {
            let b = b.unwrap();
            // x holds each sample's index: the batch and its indices agree.
            let xs: Vec<usize> =
                b.x.to_vec::<f32>()
                    .unwrap()
                    .iter()
                    .map(|&v| v as usize)
                    .collect();
            assert_eq!(xs, b.indices);
            b.indices
        })
        .collect()
}

#[test]
fn shuffled_epoch_is_a_permutation_reproducible_and_fresh_each_epoch() {
    let ds = numbered(103);
    let loader = DataLoader::new(&ds, LoaderConfig::new(10).shuffled(42)).unwrap();
    let e0 = epoch_indices(&loader, 0);
    let mut all: Vec<usize> = e0.concat();
    assert_ne!(
        all,
        (0..103).collect::<Vec<_>>(),
        "epoch 0 was not shuffled"
    );
    all.sort_unstable();
    assert_eq!(all, (0..103).collect::<Vec<_>>());

    // Same (seed, epoch), a new loader: the same batches.
    let again = DataLoader::new(&ds, LoaderConfig::new(10).shuffled(42)).unwrap();
    assert_eq!(epoch_indices(&again, 0), e0);
    // Another epoch, or another seed: another order.
    assert_ne!(epoch_indices(&loader, 1), e0);
    let other_seed = DataLoader::new(&ds, LoaderConfig::new(10).shuffled(43)).unwrap();
    assert_ne!(epoch_indices(&other_seed, 0), e0);
}

#[test]
fn sequential_order_and_batch_sizes() {
    let ds = numbered(23);
    let loader = DataLoader::new(&ds, LoaderConfig::new(5)).unwrap();
    assert_eq!(loader.num_batches(), 5);
    let batches = epoch_indices(&loader, 0);
    let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![5, 5, 5, 5, 3]);
    assert_eq!(batches.concat(), (0..23).collect::<Vec<_>>());

    let dropping = DataLoader::new(&ds, LoaderConfig::new(5).drop_last()).unwrap();
    assert_eq!(dropping.num_batches(), 4);
    assert_eq!(dropping.epoch(0).len(), 4);
    assert!(dropping.epoch(0).all(|b| b.unwrap().x.dims() == [5, 1]));

    // An exact multiple loses nothing to drop_last.
    let exact = numbered(20);
    let l = DataLoader::new(&exact, LoaderConfig::new(5).drop_last()).unwrap();
    assert_eq!(epoch_indices(&l, 0).concat().len(), 20);

    // Fewer samples than one batch: one short batch, or none.
    let small = numbered(3);
    assert_eq!(
        DataLoader::new(&small, LoaderConfig::new(5))
            .unwrap()
            .num_batches(),
        1
    );
    let none = DataLoader::new(&small, LoaderConfig::new(5).drop_last()).unwrap();
    assert_eq!(none.epoch(0).count(), 0);
}

#[test]
fn batch_size_zero_is_an_error() {
    let ds = numbered(3);
    assert!(matches!(
        DataLoader::new(&ds, LoaderConfig::new(0)),
        Err(DataError::InvalidConfig {
            what: "batch_size",
            ..
        })
    ));
}

#[test]
fn resuming_mid_epoch_gives_the_remaining_batches() {
    let ds = numbered(50);
    let loader = DataLoader::new(&ds, LoaderConfig::new(8).shuffled(9)).unwrap();
    let full = epoch_indices(&loader, 3);
    let rest: Vec<Vec<usize>> = loader
        .epoch_from(3, 4)
        .map(|b| b.unwrap().indices)
        .collect();
    assert_eq!(rest, full[4..].to_vec());
    assert_eq!(loader.epoch_from(3, 100).count(), 0);
}

#[test]
fn batch_tensors_have_the_documented_shapes_and_dtypes() {
    let digits = oxmera_data::digits().unwrap();
    let loader = DataLoader::new(&digits, LoaderConfig::new(32).on(Device::Reference)).unwrap();
    let b = loader.epoch(0).next().unwrap().unwrap();
    assert_eq!(b.x.dims(), &[32, 1, 8, 8]);
    assert_eq!(b.x.dtype(), DType::F32);
    assert_eq!(b.y.dims(), &[32]);
    assert_eq!(b.y.dtype(), DType::I64);
    assert_eq!(b.y.to_vec::<i64>().unwrap()[0], 0);

    let reg = TensorDataset::regression(
        vec![1.0, 2.0, 3.0],
        vec![1],
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        2,
    )
    .unwrap();
    let b = DataLoader::new(&reg, LoaderConfig::new(2))
        .unwrap()
        .epoch(0)
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(b.y.dims(), &[2, 2]);
    assert_eq!(b.y.dtype(), DType::F32);
    assert_eq!(b.y.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn train_and_test_subsets_batch_only_their_samples() {
    let ds = numbered(40);
    let parts = split(ds.len(), 0.25, 1).unwrap();
    let test = Subset::new(&ds, parts.test.clone()).unwrap();
    let loader = DataLoader::new(&test, LoaderConfig::new(4)).unwrap();
    let seen: Vec<usize> = loader
        .epoch(0)
        .flat_map(|b| b.unwrap().x.to_vec::<f32>().unwrap())
        .map(|v| v as usize)
        .collect();
    assert_eq!(seen, parts.test);
    assert!(Subset::new(&ds, vec![40]).is_err());
}

/// A data set whose samples break its own declarations.
struct Liar {
    features: usize,
    target: Target,
}

impl Dataset for Liar {
    fn len(&self) -> usize {
        2
    }
    fn feature_shape(&self) -> &[usize] {
        &[2]
    }
    fn target_kind(&self) -> TargetKind {
        TargetKind::Classes { num_classes: 2 }
    }
    fn get(&self, _index: usize) -> Result<Sample, DataError> {
        Ok(Sample {
            features: vec![0.0; self.features],
            target: self.target.clone(),
        })
    }
}

#[test]
fn samples_that_break_the_declarations_are_typed_errors() {
    let short = Liar {
        features: 1,
        target: Target::Class(0),
    };
    let err = DataLoader::new(&short, LoaderConfig::new(2))
        .unwrap()
        .epoch(0)
        .next()
        .unwrap();
    assert!(matches!(
        err,
        Err(DataError::FeatureLength {
            expected: 2,
            got: 1,
            ..
        })
    ));

    let wrong_kind = Liar {
        features: 2,
        target: Target::Values(vec![1.0]),
    };
    let err = DataLoader::new(&wrong_kind, LoaderConfig::new(2))
        .unwrap()
        .epoch(0)
        .next()
        .unwrap();
    assert!(matches!(err, Err(DataError::TargetMismatch { .. })));

    let bad_label = Liar {
        features: 2,
        target: Target::Class(5),
    };
    let err = DataLoader::new(&bad_label, LoaderConfig::new(2))
        .unwrap()
        .epoch(0)
        .next()
        .unwrap();
    assert!(matches!(
        err,
        Err(DataError::LabelOutOfRange { label: 5, .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn every_epoch_visits_each_sample_once(n in 0usize..60, batch in 1usize..17, seed: u64, epoch in 0u64..1000, drop_last: bool) {
        let ds = numbered(n);
        let mut config = LoaderConfig::new(batch).shuffled(seed);
        config.drop_last = drop_last;
        let loader = DataLoader::new(&ds, config).unwrap();
        let batches: Vec<Vec<usize>> = loader.epoch(epoch).map(|b| b.unwrap().indices).collect();
        prop_assert_eq!(batches.len(), loader.num_batches());
        prop_assert!(batches.iter().all(|b| b.len() == batch || (!drop_last && b.len() < batch)));
        let mut all = batches.concat();
        if drop_last {
            prop_assert_eq!(all.len(), n - n % batch);
        }
        all.sort_unstable();
        all.dedup();
        prop_assert_eq!(all.len(), if drop_last { n - n % batch } else { n });
        prop_assert!(all.iter().all(|&i| i < n));
    }
}
