//! Saving and loading a state dict with its metadata.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::str::FromStr;

use oxmera_core::{DType, Device, Shape};
use oxmera_tensor::{Generator, Tensor};

use crate::atomic::write_atomic;
use crate::codec::{decode, encode, to_safetensors};
use crate::header::{self, MAX_HEADER_LEN, MAX_METADATA_KEYS, METADATA_KEY};
use crate::{CheckpointError, RNG_OFFSET_KEY, RNG_SEED_KEY};

/// A loaded checkpoint: named tensors and string metadata.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// The tensors, by name.
    pub tensors: BTreeMap<String, Tensor>,
    /// The metadata, by key.
    pub metadata: BTreeMap<String, String>,
}

/// One tensor's bytes, in the form the safetensors writer asks for.
struct Encoded {
    dtype: safetensors::Dtype,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl safetensors::View for &Encoded {
    fn dtype(&self) -> safetensors::Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn data_len(&self) -> usize {
        self.bytes.len()
    }
}

/// The bytes of a safetensors file holding `tensors` and `metadata`.
/// A header longer than [`MAX_HEADER_LEN`] (hundreds of thousands of
/// tensors or megabytes of metadata) is [`CheckpointError::HeaderTooLarge`]
/// and more than [`MAX_METADATA_KEYS`] metadata keys is
/// [`CheckpointError::TooManyMetadataKeys`]: either could not be loaded. Tensors are written in logical (row-major) order whatever their
/// strides, so a transposed view is saved as the matrix it shows.
pub fn to_bytes(
    tensors: &BTreeMap<String, Tensor>,
    metadata: &BTreeMap<String, String>,
) -> Result<Vec<u8>, CheckpointError> {
    if metadata.len() > MAX_METADATA_KEYS {
        return Err(CheckpointError::TooManyMetadataKeys {
            count: metadata.len(),
            limit: MAX_METADATA_KEYS,
        });
    }
    let mut encoded = Vec::with_capacity(tensors.len());
    for (name, tensor) in tensors {
        if name == METADATA_KEY {
            return Err(CheckpointError::ReservedName { name: name.clone() });
        }
        let host = tensor.to_host().map_err(|source| CheckpointError::Tensor {
            name: name.clone(),
            source,
        })?;
        encoded.push((
            name.as_str(),
            Encoded {
                dtype: to_safetensors(tensor.dtype()),
                shape: tensor.dims().to_vec(),
                bytes: encode(&host),
            },
        ));
    }
    let info: Option<HashMap<String, String>> = if metadata.is_empty() {
        None
    } else {
        Some(
            metadata
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    };
    let bytes = safetensors::serialize(encoded.iter().map(|(n, e)| (*n, e)), info)?;
    // Never write what `load` would refuse: the header length is the
    // first eight bytes.
    let header_len = bytes
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes);
    if header_len > MAX_HEADER_LEN {
        return Err(CheckpointError::HeaderTooLarge {
            claimed: header_len,
            limit: MAX_HEADER_LEN,
        });
    }
    Ok(bytes)
}

/// Saves `tensors` and `metadata` to `path` in the safetensors format,
/// atomically: the file at `path` is replaced only once the new one is
/// complete and on disk, so a crash at any moment leaves either the old
/// checkpoint or the new one, never a torn mix.
///
/// ```
/// use std::collections::BTreeMap;
/// use oxmera_core::{DType, Device};
/// use oxmera_tensor::Tensor;
/// # use oxmera_reference as _; // links the reference backend
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("model.safetensors");
/// let mut tensors = BTreeMap::new();
/// tensors.insert("model.w".to_string(),
///     Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2], Device::Reference)?);
/// let metadata = BTreeMap::from([("step".to_string(), "100".to_string())]);
/// oxmera_checkpoint::save(&path, &tensors, &metadata)?;
///
/// let ckpt = oxmera_checkpoint::load(&path, Device::Reference)?;
/// let w = ckpt.expect("model.w", [2, 2], DType::F32)?;
/// assert_eq!(w.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
/// assert_eq!(ckpt.metadata_value::<u64>("step")?, 100);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save(
    path: impl AsRef<Path>,
    tensors: &BTreeMap<String, Tensor>,
    metadata: &BTreeMap<String, String>,
) -> Result<(), CheckpointError> {
    save_with_hook(path.as_ref(), tensors, metadata, |_| Ok(()))
}

/// [`save`] with a hook that runs when the temporary file is complete and
/// synced, just before it is renamed over the target.
pub(crate) fn save_with_hook(
    path: &Path,
    tensors: &BTreeMap<String, Tensor>,
    metadata: &BTreeMap<String, String>,
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> Result<(), CheckpointError> {
    let bytes = to_bytes(tensors, metadata)?;
    write_atomic(path, |w| w.write_all(&bytes), before_rename)
}

/// Loads the checkpoint at `path`, placing its tensors on `device`.
///
/// The file is checked before it is trusted: the header length against
/// the file's size before the header is read, then every tensor's dtype,
/// shape and offsets against the data actually present (see
/// [`Checkpoint::from_bytes`]). A damaged or hostile file is a
/// [`CheckpointError`], never a panic or an outsized allocation.
pub fn load(path: impl AsRef<Path>, device: Device) -> Result<Checkpoint, CheckpointError> {
    let path = path.as_ref();
    let io_err = |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io_err)?;
    let file_len = file.metadata().map_err(io_err)?.len();
    let mut first8 = [0u8; 8];
    if file_len < 8 {
        return Err(CheckpointError::TooShort { len: file_len });
    }
    file.read_exact(&mut first8).map_err(io_err)?;
    // Refuse an impossible header length before reading anything more;
    // then read the header alone and check every tensor's extent against
    // the file's real length, so that a hostile or damaged file is refused
    // before its data is read (a sparse gigabyte behind a tiny header
    // costs nothing).
    let n = header::header_len(first8, file_len)?;
    let mut text = vec![0u8; n as usize];
    file.read_exact(&mut text).map_err(io_err)?;
    let parsed = header::parse_header(&text, file_len - 8 - n)?;
    drop(text);
    // The data section is exactly what the entries tile (checked above).
    let mut data = Vec::with_capacity((file_len - 8 - n) as usize);
    file.read_to_end(&mut data).map_err(io_err)?;
    build(parsed, &data, device)
}

/// The tensors of a validated header over its data section.
fn build(
    header: header::Header,
    data: &[u8],
    device: Device,
) -> Result<Checkpoint, CheckpointError> {
    let mut tensors = BTreeMap::new();
    for entry in &header.entries {
        // A file that changed length since its header was checked.
        let bytes = data
            .get(entry.start..entry.end)
            .ok_or(CheckpointError::OffsetOutOfRange {
                name: entry.name.to_string(),
                start: entry.start as u64,
                end: entry.end as u64,
                data_len: data.len() as u64,
            })?;
        let buf = decode(&entry.name, entry.dtype, bytes)?;
        let tensor = Tensor::from_host(buf, entry.shape.to_vec(), device, "checkpoint::load")
            .map_err(|source| CheckpointError::Tensor {
                name: entry.name.to_string(),
                source,
            })?;
        tensors.insert(entry.name.to_string(), tensor);
    }
    Ok(Checkpoint {
        tensors,
        metadata: header.metadata,
    })
}

impl Checkpoint {
    /// Parses a whole safetensors file held in memory, placing its tensors
    /// on `device`. The header is validated first (see the `header`
    /// module, the one reader of the format here): each failure names the
    /// tensor at fault.
    pub fn from_bytes(bytes: &[u8], device: Device) -> Result<Checkpoint, CheckpointError> {
        let header = header::parse(bytes)?;
        let data = &bytes[header.data_start..];
        build(header, data, device)
    }

    /// The tensor called `name`.
    pub fn tensor(&self, name: &str) -> Result<&Tensor, CheckpointError> {
        self.tensors
            .get(name)
            .ok_or_else(|| CheckpointError::MissingTensor {
                name: name.to_string(),
            })
    }

    /// The tensor called `name`, checked to have `shape` and `dtype`: the
    /// way to restore a parameter whose shape the model already knows.
    pub fn expect(
        &self,
        name: &str,
        shape: impl Into<Shape>,
        dtype: DType,
    ) -> Result<&Tensor, CheckpointError> {
        let tensor = self.tensor(name)?;
        check_tensor(name, tensor, &shape.into(), dtype)?;
        Ok(tensor)
    }

    /// The tensors whose names start with `prefix`, with the prefix
    /// removed (`with_prefix("model.")` gives the model's state dict).
    pub fn with_prefix(&self, prefix: &str) -> BTreeMap<String, Tensor> {
        self.tensors
            .iter()
            .filter_map(|(k, t)| Some((k.strip_prefix(prefix)?.to_string(), t.clone())))
            .collect()
    }

    /// The metadata value under `key`, parsed as `T`.
    pub fn metadata_value<T: FromStr>(&self, key: &str) -> Result<T, CheckpointError>
    where
        T::Err: std::fmt::Display,
    {
        let value = self
            .metadata
            .get(key)
            .ok_or_else(|| CheckpointError::MissingMetadata {
                key: key.to_string(),
            })?;
        value
            .parse()
            .map_err(|e: T::Err| CheckpointError::BadMetadata {
                key: key.to_string(),
                value: value.clone(),
                detail: e.to_string(),
            })
    }

    /// The random generator saved under the `rng_seed` and `rng_offset`
    /// keys (see [`rng_metadata`]).
    pub fn generator(&self) -> Result<Generator, CheckpointError> {
        Ok(Generator::from_state(
            self.metadata_value(RNG_SEED_KEY)?,
            self.metadata_value(RNG_OFFSET_KEY)?,
        ))
    }
}

/// Checks that `tensor` (called `name`) has `shape` and `dtype`.
pub fn check_tensor(
    name: &str,
    tensor: &Tensor,
    shape: &Shape,
    dtype: DType,
) -> Result<(), CheckpointError> {
    if tensor.shape() != shape {
        return Err(CheckpointError::ShapeMismatch {
            name: name.to_string(),
            expected: shape.clone(),
            found: tensor.shape().clone(),
        });
    }
    if tensor.dtype() != dtype {
        return Err(CheckpointError::DTypeMismatch {
            name: name.to_string(),
            expected: dtype,
            found: tensor.dtype(),
        });
    }
    Ok(())
}

/// The tensors of `dict` renamed to `prefix` + name, for composing one
/// checkpoint out of several state dicts.
pub fn prefixed(prefix: &str, dict: &BTreeMap<String, Tensor>) -> BTreeMap<String, Tensor> {
    dict.iter()
        .map(|(k, t)| (format!("{prefix}{k}"), t.clone()))
        .collect()
}

/// A generator's state as the metadata entries `rng_seed` and
/// `rng_offset` ([`Checkpoint::generator`] reads them back).
pub fn rng_metadata(generator: &Generator) -> [(String, String); 2] {
    [
        (RNG_SEED_KEY.to_string(), generator.seed().to_string()),
        (RNG_OFFSET_KEY.to_string(), generator.offset().to_string()),
    ]
}

#[cfg(test)]
mod tests {
    //! Atomicity: a save stopped at any point leaves the old file loadable.

    use super::*;
    use oxmera_reference as _;

    fn dict(value: f32) -> BTreeMap<String, Tensor> {
        BTreeMap::from([(
            "w".to_string(),
            Tensor::from_vec(vec![value; 4], [2, 2], Device::Reference).unwrap(),
        )])
    }

    fn value_at(path: &Path) -> f32 {
        load(path, Device::Reference).unwrap().tensors["w"]
            .to_vec::<f32>()
            .unwrap()[0]
    }

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn failure_mid_write_keeps_the_old_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ckpt.safetensors");
        save(&path, &dict(1.0), &BTreeMap::new()).unwrap();

        // The writer dies halfway through the new bytes (a full disk, say).
        let new = to_bytes(&dict(2.0), &BTreeMap::new()).unwrap();
        let result = write_atomic(
            &path,
            |w| {
                w.write_all(&new[..new.len() / 2])?;
                Err(io::Error::other("injected failure mid-write"))
            },
            |_| Ok(()),
        );
        assert!(matches!(result, Err(CheckpointError::Io { .. })));
        assert_eq!(value_at(&path), 1.0);
        assert_eq!(dir_entries(dir.path()), vec!["ckpt.safetensors"]);
    }

    #[test]
    fn stopping_just_before_the_rename_keeps_the_old_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ckpt.safetensors");
        save(&path, &dict(1.0), &BTreeMap::new()).unwrap();

        let mut staged = None;
        let result = save_with_hook(&path, &dict(2.0), &BTreeMap::new(), |temp| {
            // The temporary file is complete: it alone already loads as the
            // new checkpoint. Only the rename is missing.
            staged = Some((temp.to_path_buf(), value_at(temp)));
            Err(io::Error::other("injected stop before rename"))
        });
        assert!(result.is_err());
        let (temp, staged_value) = staged.expect("the hook ran");
        assert_eq!(staged_value, 2.0);
        assert_eq!(
            temp.parent(),
            path.parent(),
            "temp file in the target's directory"
        );
        assert_eq!(value_at(&path), 1.0);
        assert!(!temp.exists(), "the failed save cleans up after itself");
    }

    #[test]
    fn a_crashed_writers_leftovers_do_not_disturb_the_next_save() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ckpt.safetensors");
        save(&path, &dict(1.0), &BTreeMap::new()).unwrap();
        // What a process killed mid-write leaves: a torn temporary file.
        let torn = to_bytes(&dict(9.0), &BTreeMap::new()).unwrap();
        let leftover = dir.path().join(".ckpt.safetensors.1.0.tmp");
        std::fs::write(&leftover, &torn[..torn.len() - 3]).unwrap();
        assert_eq!(value_at(&path), 1.0);

        save(&path, &dict(3.0), &BTreeMap::new()).unwrap();
        assert_eq!(value_at(&path), 3.0);
        assert_eq!(
            dir_entries(dir.path()),
            vec![".ckpt.safetensors.1.0.tmp", "ckpt.safetensors"]
        );
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        assert!(matches!(
            save("..", &dict(1.0), &BTreeMap::new()),
            Err(CheckpointError::NotAFilePath { .. })
        ));
    }
}
