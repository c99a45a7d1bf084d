//! The IDX file format of MNIST and Fashion-MNIST, and a loader for them.
//!
//! An IDX file is a 4-byte magic number — two zero bytes, a type code
//! (`0x08` for unsigned bytes) and the number of dimensions — then each
//! dimension as a big-endian `u32`, then the elements, row-major. MNIST's
//! images are `0x00000803` (`[n, rows, cols]`) and its labels `0x00000801`
//! (`[n]`). Files may be gzip-compressed, as they are distributed; this
//! reader recognises gzip by its first two bytes, whatever the name.
//!
//! A header may claim any size. The reader checks the claim against the
//! file's length (for plain files) before allocating, and for compressed
//! files grows its buffer only as data actually arrives, so a hostile or
//! damaged header costs an error, never a huge allocation.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::{DataError, TensorDataset};

/// The magic number of an IDX file of unsigned-byte images `[n, rows, cols]`.
pub const IDX_IMAGES_MAGIC: u32 = 0x0000_0803;
/// The magic number of an IDX file of unsigned-byte labels `[n]`.
pub const IDX_LABELS_MAGIC: u32 = 0x0000_0801;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The contents of an IDX file of unsigned bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxArray {
    /// The dimensions from the header.
    pub dims: Vec<usize>,
    /// The elements, row-major.
    pub data: Vec<u8>,
}

/// Reads an IDX file whose magic number must be `magic` (one of
/// [`IDX_IMAGES_MAGIC`], [`IDX_LABELS_MAGIC`] or any other unsigned-byte
/// IDX magic), plain or gzip-compressed.
pub fn read_idx(path: impl AsRef<Path>, magic: u32) -> Result<IdxArray, DataError> {
    let path = path.as_ref();
    if (magic >> 8) & 0xff != 0x08 || magic >> 16 != 0 {
        return Err(DataError::config(
            "read_idx",
            "magic",
            format!("0x{magic:08x} is not an unsigned-byte IDX magic (0x000008NN)"),
        ));
    }
    let io_err = |source: io::Error| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io_err)?;
    let file_len = file.metadata().map_err(io_err)?.len();
    let mut sniff = [0u8; 2];
    let sniffed = read_up_to(&mut file, &mut sniff).map_err(io_err)?;
    let head = io::Cursor::new(sniff[..sniffed].to_vec());
    let compressed = sniff[..sniffed] == GZIP_MAGIC;
    let mut reader: Box<dyn Read> = if compressed {
        // Multi-member: `cat a.gz b.gz` (and some mirrors) write several
        // gzip members back to back, which decompress to one stream.
        Box::new(MultiGzDecoder::new(BufReader::new(head.chain(file))))
    } else {
        Box::new(BufReader::new(head.chain(file)))
    };

    let mut magic_bytes = [0u8; 4];
    read_exact_or_truncated(&mut reader, &mut magic_bytes, path, 4, 0)?;
    let found = u32::from_be_bytes(magic_bytes);
    if found != magic {
        return Err(DataError::WrongMagic {
            path: path.to_path_buf(),
            what: match magic {
                IDX_IMAGES_MAGIC => "images",
                IDX_LABELS_MAGIC => "labels",
                _ => "unsigned-byte",
            },
            expected: magic,
            found,
        });
    }
    let rank = (magic & 0xff) as usize;
    let header_len = 4 + 4 * rank as u64;
    let mut dim_bytes = vec![0u8; 4 * rank];
    read_exact_or_truncated(&mut reader, &mut dim_bytes, path, header_len, 4)?;
    let raw_dims: Vec<u32> = dim_bytes
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let overflow = || DataError::DimsOverflow {
        path: path.to_path_buf(),
        dims: raw_dims.clone(),
    };
    let count = raw_dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
        .ok_or_else(overflow)?;
    let expected = header_len.checked_add(count).ok_or_else(overflow)?;
    let count_usize = usize::try_from(count).map_err(|_| overflow())?;
    if count > MAX_IDX_BYTES {
        return Err(DataError::IdxTooLarge {
            path: path.to_path_buf(),
            dims: raw_dims.clone(),
            max: MAX_IDX_BYTES,
        });
    }

    let mut data = if compressed {
        // The decompressed length is unknown until the stream ends: grow
        // with the data instead of trusting the header.
        Vec::new()
    } else {
        if file_len < expected {
            return Err(DataError::Truncated {
                path: path.to_path_buf(),
                expected,
                actual: file_len,
            });
        }
        Vec::with_capacity(count_usize)
    };
    let read = (&mut reader).take(count).read_to_end(&mut data);
    match read {
        Ok(_) => {}
        // A cut gzip stream ends with this error; what arrived is in `data`.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {}
        Err(e) => return Err(io_err(e)),
    }
    if (data.len() as u64) < count {
        return Err(DataError::Truncated {
            path: path.to_path_buf(),
            expected,
            actual: header_len + data.len() as u64,
        });
    }
    // Past the declared data, stop at the first excess: a gzip bomb after a
    // valid header would otherwise be decompressed to its end. A plain
    // file's excess is known from its length.
    let extra = if compressed {
        io::copy(&mut (&mut reader).take(TRAILING_PROBE), &mut io::sink()).map_err(io_err)?
    } else {
        file_len.saturating_sub(expected)
    };
    if extra > 0 {
        return Err(DataError::TrailingBytes {
            path: path.to_path_buf(),
            expected,
            extra,
        });
    }
    Ok(IdxArray {
        dims: raw_dims.iter().map(|&d| d as usize).collect(),
        data,
    })
}

/// The most data an IDX file may declare: 4 GiB, about six times the
/// largest IDX data set in common use (EMNIST ByClass, 0.7 GB
/// uncompressed), and what a 32-bit-indexed buffer on a GPU can address. A
/// header declaring more is refused before anything is read or allocated.
pub const MAX_IDX_BYTES: u64 = 1 << 32;

/// How much of a compressed file's excess is decompressed before it is
/// refused: enough to say how much followed for a small excess, bounded
/// for a bomb.
const TRAILING_PROBE: u64 = 1 << 20;

/// Fills as much of `buf` as the reader has; returns how much.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Fills `buf`, or reports the file truncated: `expected` is the byte
/// count the header needs so far, `before` what was read before `buf`.
fn read_exact_or_truncated(
    reader: &mut impl Read,
    buf: &mut [u8],
    path: &Path,
    expected: u64,
    before: u64,
) -> Result<(), DataError> {
    let got = match read_up_to(reader, buf) {
        Ok(n) => n,
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => 0,
        Err(source) => {
            return Err(DataError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if got < buf.len() {
        return Err(DataError::Truncated {
            path: path.to_path_buf(),
            expected,
            actual: before + got as u64,
        });
    }
    Ok(())
}

/// Reads an IDX image file and its label file into a classification data
/// set: features of shape `[1, rows, cols]` (one channel) with pixels
/// divided by 255 into `[0, 1]`, labels checked to lie in `0..10`.
pub fn read_idx_pair(
    images_path: impl AsRef<Path>,
    labels_path: impl AsRef<Path>,
) -> Result<TensorDataset, DataError> {
    let (images_path, labels_path) = (images_path.as_ref(), labels_path.as_ref());
    let images = read_idx(images_path, IDX_IMAGES_MAGIC)?;
    let labels = read_idx(labels_path, IDX_LABELS_MAGIC)?;
    if images.dims[0] != labels.dims[0] {
        return Err(DataError::IdxCountMismatch {
            images_path: images_path.to_path_buf(),
            images: images.dims[0],
            labels_path: labels_path.to_path_buf(),
            labels: labels.dims[0],
        });
    }
    let features = images.data.iter().map(|&p| f32::from(p) / 255.0).collect();
    let labels = labels.data.iter().map(|&l| i64::from(l)).collect();
    TensorDataset::classification(
        features,
        vec![1, images.dims[1], images.dims[2]],
        labels,
        10,
    )
}

/// The training and test parts of MNIST (or of any data set in its
/// layout, such as Fashion-MNIST).
#[derive(Debug, Clone)]
pub struct Mnist {
    /// The 60,000 training samples (for the official files).
    pub train: TensorDataset,
    /// The 10,000 test samples (for the official files).
    pub test: TensorDataset,
}

/// Loads MNIST or Fashion-MNIST from the four IDX files in `dir`, under
/// their distributed names (`train-images-idx3-ubyte`,
/// `train-labels-idx1-ubyte`, `t10k-images-idx3-ubyte`,
/// `t10k-labels-idx1-ubyte`), each also accepted with a `.` before `idx`
/// and with a `.gz` suffix. A missing file is a
/// [`DataError::MissingFile`] listing every path tried.
pub fn mnist(dir: impl AsRef<Path>) -> Result<Mnist, DataError> {
    let dir = dir.as_ref();
    let train_images = find(dir, "train images", "train-images", "idx3-ubyte")?;
    let train_labels = find(dir, "train labels", "train-labels", "idx1-ubyte")?;
    let test_images = find(dir, "test images", "t10k-images", "idx3-ubyte")?;
    let test_labels = find(dir, "test labels", "t10k-labels", "idx1-ubyte")?;
    Ok(Mnist {
        train: read_idx_pair(train_images, train_labels)?,
        test: read_idx_pair(test_images, test_labels)?,
    })
}

fn find(dir: &Path, what: &'static str, stem: &str, kind: &str) -> Result<PathBuf, DataError> {
    let mut tried = Vec::new();
    for sep in ['-', '.'] {
        for suffix in ["", ".gz"] {
            let path = dir.join(format!("{stem}{sep}{kind}{suffix}"));
            if path.is_file() {
                return Ok(path);
            }
            tried.push(path);
        }
    }
    Err(DataError::MissingFile { what, tried })
}
