//! The built-in digits data set, embedded in the binary.

use std::io::Read;

use flate2::read::GzDecoder;

use crate::{DataError, TensorDataset};

/// The gzip-compressed CSV (see `data/PROVENANCE.md` for its origin,
/// license and attribution: CC BY 4.0, E. Alpaydin and C. Kaynak, UCI).
pub(crate) const DIGITS_CSV_GZ: &[u8] = include_bytes!("../data/digits.csv.gz");

const SOURCE: &str = "digits.csv.gz";
const PIXELS: usize = 64;
const MAX_PIXEL: f32 = 16.0;

/// The 1797 handwritten digits of the UCI "Optical Recognition of
/// Handwritten Digits" test set (E. Alpaydin and C. Kaynak, 1998; CC BY
/// 4.0), embedded in the crate so training needs no download.
///
/// Each sample is an 8x8 image of feature shape `[1, 8, 8]` (one channel,
/// ready for a convolution; use [`TensorDataset::with_feature_shape`] with
/// `[64]` for an MLP). The original pixels are counts 0..16 of "on" pixels
/// in 4x4 blocks of a 32x32 bitmap; they are divided by 16 here, so every
/// feature lies in `[0, 1]`. Labels are the classes 0..9, in file order.
///
/// ```
/// use oxmera_data::{Dataset, Target};
/// let digits = oxmera_data::digits()?;
/// assert_eq!(digits.len(), 1797);
/// assert_eq!(digits.get(0)?.target, Target::Class(0));
/// # Ok::<(), oxmera_data::DataError>(())
/// ```
pub fn digits() -> Result<TensorDataset, DataError> {
    let mut text = String::new();
    GzDecoder::new(DIGITS_CSV_GZ)
        .read_to_string(&mut text)
        .map_err(|source| DataError::Io {
            path: SOURCE.into(),
            source,
        })?;
    let mut features = Vec::with_capacity(1797 * PIXELS);
    let mut labels = Vec::with_capacity(1797);
    for (i, line) in text.lines().enumerate() {
        let parse_error = |detail: String| DataError::Parse {
            source_name: SOURCE.into(),
            line: i + 1,
            detail,
        };
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != PIXELS + 1 {
            return Err(parse_error(format!(
                "{} fields, expected {}",
                fields.len(),
                PIXELS + 1
            )));
        }
        for field in &fields[..PIXELS] {
            let v: u8 = field
                .trim()
                .parse()
                .map_err(|e| parse_error(format!("pixel {field:?}: {e}")))?;
            if f32::from(v) > MAX_PIXEL {
                return Err(parse_error(format!("pixel {v} is above {MAX_PIXEL}")));
            }
            features.push(f32::from(v) / MAX_PIXEL);
        }
        let label: i64 = fields[PIXELS]
            .trim()
            .parse()
            .map_err(|e| parse_error(format!("label {:?}: {e}", fields[PIXELS])))?;
        labels.push(label);
    }
    TensorDataset::classification(features, vec![1, 8, 8], labels, 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dataset, Target};
    use sha2::{Digest, Sha256};

    #[test]
    fn embedded_file_is_the_documented_one() {
        let digest = Sha256::digest(DIGITS_CSV_GZ);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"
        );
        assert_eq!(DIGITS_CSV_GZ.len(), 57_523);
    }

    #[test]
    fn rows_labels_and_scale() {
        let ds = digits().unwrap();
        assert_eq!(ds.len(), 1797);
        assert_eq!(ds.feature_shape(), &[1, 8, 8]);
        let mut histogram = [0usize; 10];
        for &l in ds.labels().unwrap() {
            histogram[l as usize] += 1;
        }
        // Counted from the file with `zcat | cut -d, -f65 | sort | uniq -c`.
        assert_eq!(
            histogram,
            [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
        );
        assert!(ds.features().iter().all(|&v| (0.0..=1.0).contains(&v)));
        // Both ends of the range occur.
        assert!(ds.features().contains(&0.0) && ds.features().contains(&1.0));
        // The first row of the file begins 0,0,5,13,9,1 and is a 0.
        let first = ds.get(0).unwrap();
        assert_eq!(
            &first.features[..6],
            &[0.0, 0.0, 5.0 / 16.0, 13.0 / 16.0, 9.0 / 16.0, 1.0 / 16.0]
        );
        assert_eq!(first.target, Target::Class(0));
    }
}
