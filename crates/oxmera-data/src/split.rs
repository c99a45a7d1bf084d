//! Seeded train/test splits.

use crate::DataError;
use crate::random::{SPLIT_STREAM, permutation};

/// The test fraction of the default split (80% train, 20% test).
pub const DEFAULT_TEST_FRACTION: f64 = 0.2;

/// Two disjoint sets of sample indices that together cover `0..n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Indices of the training samples, in shuffled order.
    pub train: Vec<usize>,
    /// Indices of the test samples, in shuffled order.
    pub test: Vec<usize>,
}

/// Splits `0..n` at random into a training and a test part: the test part
/// gets `round(n * test_fraction)` indices. A pure function of its
/// arguments, so the same seed always gives the same split.
///
/// Wrap the parts with [`crate::Subset`] to get data sets:
///
/// ```
/// use oxmera_data::{Dataset, Subset, split};
/// let digits = oxmera_data::digits()?;
/// let parts = split(digits.len(), 0.2, 42)?;
/// assert_eq!(parts.test.len(), 359);
/// let train = Subset::new(&digits, parts.train)?;
/// assert_eq!(train.len(), 1438);
/// # Ok::<(), oxmera_data::DataError>(())
/// ```
pub fn split(n: usize, test_fraction: f64, seed: u64) -> Result<Split, DataError> {
    if !(0.0..=1.0).contains(&test_fraction) {
        return Err(DataError::config(
            "split",
            "test_fraction",
            format!("need a value in [0, 1], got {test_fraction}"),
        ));
    }
    let n_test = ((n as f64) * test_fraction).round() as usize;
    let mut order = permutation(n, seed, SPLIT_STREAM);
    let test = order.split_off(n - n_test.min(n));
    Ok(Split { train: order, test })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_fractions_outside_the_unit_interval() {
        assert!(split(10, 1.5, 0).is_err());
        assert!(split(10, -0.1, 0).is_err());
        assert!(split(10, f64::NAN, 0).is_err());
    }

    #[test]
    fn eighty_twenty_of_ten() {
        let s = split(10, DEFAULT_TEST_FRACTION, 5).unwrap();
        assert_eq!((s.train.len(), s.test.len()), (8, 2));
        let all = split(10, 1.0, 5).unwrap();
        assert!(all.train.is_empty());
        assert_eq!(all.test.len(), 10);
    }

    proptest! {
        #[test]
        fn parts_are_disjoint_and_cover(n in 0usize..300, frac in 0.0f64..=1.0, seed: u64) {
            let s = split(n, frac, seed).unwrap();
            prop_assert_eq!(s.test.len(), ((n as f64) * frac).round() as usize);
            let mut all: Vec<usize> = s.train.iter().chain(&s.test).copied().collect();
            all.sort_unstable();
            prop_assert_eq!(all, (0..n).collect::<Vec<_>>());
            prop_assert_eq!(&s, &split(n, frac, seed).unwrap());
        }
    }
}
