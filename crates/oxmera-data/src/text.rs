//! Text for character-level language models: the embedded Shakespeare
//! corpus, a character vocabulary, and batches of windows.
//!
//! A language model's "sample" is a window of `context` characters and
//! the same window shifted by one (the next character at every position),
//! so text does not go through [`crate::Dataset`]'s one-target samples:
//! [`TextSplit::train_batch`] and [`TextSplit::spread_batch`] cut windows
//! straight into `i64` id tensors.

use std::io::Read;

use flate2::read::GzDecoder;
use oxmera_core::Device;
use oxmera_tensor::Tensor;

use crate::DataError;
use crate::random::Stream;

/// Eight plays, gzip-compressed (see `data/PROVENANCE.md`: public-domain
/// texts from the `shakespeare` package of the Open Knowledge Foundation,
/// Project Gutenberg editions; CC BY 2.5).
const PLAYS_GZ: &[u8] = include_bytes!("../data/plays.txt.gz");
const SOURCE: &str = "plays.txt.gz";
/// The stream text batches draw from (below the procedural data sets').
const TEXT_STREAM: u64 = u64::MAX - 16;

/// The embedded text of eight Shakespeare plays (Hamlet, Macbeth, Romeo
/// and Juliet, King Lear, Othello, Julius Caesar, The Tempest, A
/// Midsummer Night's Dream): 1,036,483 characters of ASCII, 76 distinct.
///
/// ```
/// let text = oxmera_data::shakespeare()?;
/// assert_eq!(text.len(), 1_036_483);
/// assert!(text.contains("ROMEO"));
/// # Ok::<(), oxmera_data::DataError>(())
/// ```
pub fn shakespeare() -> Result<String, DataError> {
    let mut text = String::new();
    GzDecoder::new(PLAYS_GZ)
        .read_to_string(&mut text)
        .map_err(|source| DataError::Io {
            path: SOURCE.into(),
            source,
        })?;
    Ok(text)
}

/// The characters of a text, sorted, each numbered by its position: the
/// model's vocabulary.
///
/// ```
/// use oxmera_data::CharVocab;
/// let vocab = CharVocab::from_text("hello");
/// assert_eq!(vocab.chars(), "ehlo");
/// assert_eq!(vocab.encode("hole")?, vec![1, 3, 2, 0]);
/// assert_eq!(vocab.decode(&[2, 0]), "le");
/// # Ok::<(), oxmera_data::DataError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharVocab {
    chars: Vec<char>,
}

impl CharVocab {
    /// The distinct characters of `text`, sorted.
    pub fn from_text(text: &str) -> Self {
        let mut chars: Vec<char> = text.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        CharVocab { chars }
    }

    /// A vocabulary from its characters as [`CharVocab::chars`] wrote
    /// them (what a checkpoint stores); [`DataError::InvalidConfig`] if
    /// they are not sorted and distinct.
    pub fn from_chars(chars: &str) -> Result<Self, DataError> {
        let chars: Vec<char> = chars.chars().collect();
        if chars.windows(2).any(|w| w[0] >= w[1]) {
            return Err(DataError::config(
                "CharVocab",
                "chars",
                "the characters must be sorted and distinct",
            ));
        }
        Ok(CharVocab { chars })
    }

    /// The characters in id order, as one string.
    pub fn chars(&self) -> String {
        self.chars.iter().collect()
    }

    /// The number of characters.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The ids of `text`'s characters; [`DataError::InvalidConfig`] naming
    /// the first character outside the vocabulary.
    pub fn encode(&self, text: &str) -> Result<Vec<i64>, DataError> {
        text.chars()
            .map(|c| {
                self.chars.binary_search(&c).map(|i| i as i64).map_err(|_| {
                    DataError::config(
                        "CharVocab::encode",
                        "text",
                        format!("{c:?} is not in the vocabulary {:?}", self.chars()),
                    )
                })
            })
            .collect()
    }

    /// The characters of `ids`; an id outside the vocabulary becomes `�`.
    pub fn decode(&self, ids: &[i64]) -> String {
        ids.iter()
            .map(|&i| {
                usize::try_from(i)
                    .ok()
                    .and_then(|i| self.chars.get(i).copied())
                    .unwrap_or('\u{fffd}')
            })
            .collect()
    }
}

/// A text as ids, cut once into a training part and a validation part
/// (the last `valid_fraction` of the text, so no window straddles both).
#[derive(Debug, Clone)]
pub struct TextSplit {
    /// The training ids.
    pub train: Vec<i64>,
    /// The validation ids.
    pub valid: Vec<i64>,
}

impl TextSplit {
    /// `ids` split at `1 − valid_fraction` of their length (a fraction in
    /// `(0, 1)`; [`DataError::InvalidConfig`] otherwise).
    pub fn new(ids: Vec<i64>, valid_fraction: f64) -> Result<Self, DataError> {
        if !(valid_fraction > 0.0 && valid_fraction < 1.0) {
            return Err(DataError::config(
                "TextSplit",
                "valid_fraction",
                format!("must lie strictly between 0 and 1, got {valid_fraction}"),
            ));
        }
        let cut = ((ids.len() as f64) * (1.0 - valid_fraction)).round() as usize;
        let mut train = ids;
        let valid = train.split_off(cut);
        Ok(TextSplit { train, valid })
    }

    /// The training batch of step `step`: `batch` windows at start offsets
    /// drawn uniformly from the training ids, a pure function of `(seed,
    /// step)` — so a resumed run draws exactly the batches the run it
    /// continues would have. `(x, y)`, both `[batch, context]` `i64`, `y`
    /// being `x` shifted by one character.
    pub fn train_batch(
        &self,
        seed: u64,
        step: u64,
        batch: usize,
        context: usize,
        device: Device,
    ) -> Result<(Tensor, Tensor), DataError> {
        let span = windows(&self.train, context, "train")?;
        // Step s reads from counter s·batch on. A rejected draw in `below`
        // (odds under 2^-40 for a text this size) reads one word of the
        // next step's: the batch is still a function of (seed, step).
        let mut stream = Stream::new(seed, TEXT_STREAM);
        stream.skip(step.wrapping_mul(batch as u64));
        let starts: Vec<usize> = (0..batch)
            .map(|_| stream.below(span as u64) as usize)
            .collect();
        cut(&self.train, &starts, context, device)
    }

    /// Windows `index·stride` of `part` for `index` in `first..first +
    /// batch` (fewer at the end), with `stride` spreading `count` windows
    /// evenly over that part: a fixed set, the same at every evaluation.
    /// `None` once `first >= count`.
    pub fn spread_batch(
        &self,
        part: TextPart,
        first: usize,
        batch: usize,
        count: usize,
        context: usize,
        device: Device,
    ) -> Result<Option<(Tensor, Tensor)>, DataError> {
        let (ids, name) = match part {
            TextPart::Train => (&self.train, "train"),
            TextPart::Valid => (&self.valid, "validation"),
        };
        let span = windows(ids, context, name)?;
        let count = count.min(span);
        if first >= count {
            return Ok(None);
        }
        let stride = span / count;
        let starts: Vec<usize> = (first..(first + batch).min(count))
            .map(|i| i * stride)
            .collect();
        cut(ids, &starts, context, device).map(Some)
    }
}

/// Which part of a [`TextSplit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextPart {
    /// The training text.
    Train,
    /// The held-out validation text.
    Valid,
}

/// How many windows of `context + 1` ids fit in `ids`.
fn windows(ids: &[i64], context: usize, part: &str) -> Result<usize, DataError> {
    if context == 0 || ids.len() <= context {
        return Err(DataError::config(
            "TextSplit",
            "context",
            format!(
                "the {part} text has {} characters, too few for windows of {context} + 1",
                ids.len()
            ),
        ));
    }
    Ok(ids.len() - context)
}

/// Inputs and next-character targets for windows at `starts`.
fn cut(
    ids: &[i64],
    starts: &[usize],
    context: usize,
    device: Device,
) -> Result<(Tensor, Tensor), DataError> {
    let mut x = Vec::with_capacity(starts.len() * context);
    let mut y = Vec::with_capacity(starts.len() * context);
    for &s in starts {
        x.extend_from_slice(&ids[s..s + context]);
        y.extend_from_slice(&ids[s + 1..s + context + 1]);
    }
    let shape = [starts.len(), context];
    Ok((
        Tensor::from_vec(x, shape, device)?,
        Tensor::from_vec(y, shape, device)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmera_reference as _;

    #[test]
    fn the_embedded_text_is_the_documented_one() {
        let text = shakespeare().unwrap();
        assert_eq!(text.len(), 1_036_483);
        assert!(text.is_ascii());
        let vocab = CharVocab::from_text(&text);
        assert_eq!(vocab.len(), 76);
        let ids = vocab.encode(&text).unwrap();
        assert_eq!(vocab.decode(&ids), text);
        assert_eq!(CharVocab::from_chars(&vocab.chars()).unwrap(), vocab);
        assert!(CharVocab::from_chars("ba").is_err());
        assert!(vocab.encode("é").is_err());
    }

    #[test]
    fn batches_are_windows_and_their_shift_and_a_function_of_the_step() {
        let ids: Vec<i64> = (0..1000).collect();
        let split = TextSplit::new(ids, 0.1).unwrap();
        assert_eq!((split.train.len(), split.valid.len()), (900, 100));
        let dev = Device::Reference;
        let (x, y) = split.train_batch(7, 3, 4, 8, dev).unwrap();
        assert_eq!(x.dims(), &[4, 8]);
        let (xs, ys) = (x.to_vec::<i64>().unwrap(), y.to_vec::<i64>().unwrap());
        for (wx, wy) in xs.chunks(8).zip(ys.chunks(8)) {
            // Consecutive ids: a window of the text; y is x moved by one.
            assert!(wx.windows(2).all(|p| p[1] == p[0] + 1));
            assert!(wx.iter().zip(wy).all(|(a, b)| *b == a + 1));
            assert!(wy[7] < 900, "within the training part");
        }
        let again = split.train_batch(7, 3, 4, 8, dev).unwrap().0;
        assert_eq!(again.to_vec::<i64>().unwrap(), xs);
        let next = split.train_batch(7, 4, 4, 8, dev).unwrap().0;
        assert_ne!(next.to_vec::<i64>().unwrap(), xs);
        // Validation: a fixed set of evenly spread windows, in batches.
        let (v, _) = split
            .spread_batch(TextPart::Valid, 0, 3, 5, 8, dev)
            .unwrap()
            .unwrap();
        assert_eq!(v.to_vec::<i64>().unwrap()[..2], [900, 901]);
        assert_eq!(v.dims(), &[3, 8]);
        let (rest, _) = split
            .spread_batch(TextPart::Valid, 3, 3, 5, 8, dev)
            .unwrap()
            .unwrap();
        assert_eq!(rest.dims(), &[2, 8]);
        assert!(
            split
                .spread_batch(TextPart::Valid, 6, 3, 5, 8, dev)
                .unwrap()
                .is_none()
        );
        assert!(split.train_batch(0, 0, 1, 900, dev).is_err());
        assert!(TextSplit::new(vec![1, 2], 1.0).is_err());
    }
}
