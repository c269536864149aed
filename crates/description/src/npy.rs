//! NumPy `.npy` files (format versions 1–3) for 3-D grids.
//!
//! Grids are written as `[x, y, z]`-indexed arrays: shape `(nx, ny, nz)` in
//! Fortran order, which is exactly our `x`-fastest layout, so
//! `numpy.load(f)[x, y, z]` is voxel `(x, y, z)`. Reading accepts either
//! order and reads the array the same way, as `[x, y, z]`.
//!
//! The format is a magic string, a version, a Python-literal header (dtype,
//! order, shape) and the raw little-endian data; it is small enough to read
//! and write here rather than pull an n-dimensional array crate.

use std::path::{Path, PathBuf};

/// Why a `.npy` file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not a `.npy` array this reader understands.
    #[error("{path}: {problem}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

/// Element types written by [`write`](fn@write).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `<f4`
    F32,
    /// `<u4`
    U32,
    /// `|u1`
    U8,
}

impl Dtype {
    fn descr(self) -> &'static str {
        match self {
            Dtype::F32 => "<f4",
            Dtype::U32 => "<u4",
            Dtype::U8 => "|u1",
        }
    }
}

/// Writes a 3-D grid (`x` fastest) of already little-endian encoded
/// elements as an `[x, y, z]`-indexed array.
pub fn write(path: &Path, dims: [usize; 3], dtype: Dtype, data: &[u8]) -> Result<(), NpyError> {
    let bytes = encode(dims, dtype, data);
    std::fs::write(path, bytes).map_err(|source| NpyError::Io { path: path.into(), source })
}

/// The bytes of a `.npy` file holding a 3-D grid; see [`write`](fn@write).
pub fn encode(dims: [usize; 3], dtype: Dtype, data: &[u8]) -> Vec<u8> {
    encode_ordered(dims, dtype, data, true)
}

fn encode_ordered(dims: [usize; 3], dtype: Dtype, data: &[u8], fortran: bool) -> Vec<u8> {
    let [nx, ny, nz] = dims;
    let order = if fortran { "True" } else { "False" };
    let mut header =
        format!("{{'descr': '{}', 'fortran_order': {order}, 'shape': ({nx}, {ny}, {nz}), }}", dtype.descr());
    // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// Writes `f32` values.
pub fn write_f32(path: &Path, dims: [usize; 3], values: &[f32]) -> Result<(), NpyError> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(path, dims, Dtype::F32, &data)
}

/// Writes `u32` values.
pub fn write_u32(path: &Path, dims: [usize; 3], values: &[u32]) -> Result<(), NpyError> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(path, dims, Dtype::U32, &data)
}

/// Writes an occupancy grid as `uint8` 0/1.
pub fn write_bool(path: &Path, dims: [usize; 3], values: &[bool]) -> Result<(), NpyError> {
    let data: Vec<u8> = values.iter().map(|&b| b as u8).collect();
    write(path, dims, Dtype::U8, &data)
}

/// A 3-D array read from a `.npy` file, as `f64` values with `x` fastest.
#[derive(Clone, Debug)]
pub struct Grid3 {
    /// Extents along x, y, z (the array's shape).
    pub dims: [usize; 3],
    /// Values, `x` fastest.
    pub values: Vec<f64>,
}

impl Grid3 {
    /// Nonzero elements as occupied voxels.
    pub fn occupancy(&self) -> Vec<bool> {
        self.values.iter().map(|&v| v != 0.0).collect()
    }
}

/// Reads a 3-D array of booleans, integers or floats (little-endian or
/// single-byte), in either order, as `[x, y, z]`.
pub fn read(path: &Path) -> Result<Grid3, NpyError> {
    let bytes = std::fs::read(path).map_err(|source| NpyError::Io { path: path.into(), source })?;
    decode(&bytes).map_err(|problem| NpyError::Format { path: path.into(), problem })
}

/// Parses the bytes of a `.npy` file; see [`read`].
pub fn decode(bytes: &[u8]) -> Result<Grid3, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes.get(start..start + hlen).ok_or("header runs past the end of the file")?;
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let descr = dict_value(header, "descr").ok_or("header has no 'descr'")?;
    let descr = descr.trim().trim_matches(|c| c == '\'' || c == '"');
    let fortran = match dict_value(header, "fortran_order").map(str::trim) {
        Some("True") => true,
        Some("False") => false,
        _ => return Err("header has no valid 'fortran_order'".into()),
    };
    let shape = dict_value(header, "shape").ok_or("header has no 'shape'")?;
    let shape: Vec<usize> = shape
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|_| format!("bad shape entry {s:?}")))
        .collect::<Result<_, _>>()?;
    let [a, b, c] = shape[..] else {
        return Err(format!("a 3-D array is needed, this one has shape {shape:?}"));
    };
    let n = a.checked_mul(b).and_then(|ab| ab.checked_mul(c)).ok_or("shape overflows")?;
    let (size, read): (usize, fn(&[u8]) -> f64) = match descr {
        "|b1" | "|u1" | "<u1" => (1, |s| s[0] as f64),
        "|i1" | "<i1" => (1, |s| s[0] as i8 as f64),
        "<u2" => (2, |s| u16::from_le_bytes([s[0], s[1]]) as f64),
        "<i2" => (2, |s| i16::from_le_bytes([s[0], s[1]]) as f64),
        // invariant: chunks_exact hands out slices of exactly the item size
        "<u4" => (4, |s| u32::from_le_bytes(s.try_into().expect("4 bytes")) as f64),
        // invariant: chunks_exact hands out slices of exactly the item size
        "<i4" => (4, |s| i32::from_le_bytes(s.try_into().expect("4 bytes")) as f64),
        // invariant: chunks_exact hands out slices of exactly the item size
        "<u8" => (8, |s| u64::from_le_bytes(s.try_into().expect("8 bytes")) as f64),
        // invariant: chunks_exact hands out slices of exactly the item size
        "<i8" => (8, |s| i64::from_le_bytes(s.try_into().expect("8 bytes")) as f64),
        // invariant: chunks_exact hands out slices of exactly the item size
        "<f4" => (4, |s| f32::from_le_bytes(s.try_into().expect("4 bytes")) as f64),
        // invariant: chunks_exact hands out slices of exactly the item size
        "<f8" => (8, |s| f64::from_le_bytes(s.try_into().expect("8 bytes"))),
        d => return Err(format!("unsupported dtype {d:?} (little-endian bool, int or float expected)")),
    };
    let data = &bytes[start + hlen..];
    let want = n.checked_mul(size).ok_or("shape overflows")?;
    if data.len() != want {
        return Err(format!("{} data bytes for shape {shape:?} of {descr}, expected {want}", data.len()));
    }
    let mut values = vec![0.0; n];
    for (k, chunk) in data.chunks_exact(size).enumerate() {
        // Element k of the file is array[i, j, l]; store it at x = i, y = j, z = l.
        let (i, j, l) = if fortran { (k % a, (k / a) % b, k / (a * b)) } else { (k / (b * c), (k / c) % b, k % c) };
        values[(l * b + j) * a + i] = read(chunk);
    }
    Ok(Grid3 { dims: [a, b, c], values })
}

/// The text after `'key':` up to the next top-level comma or the end.
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat1 = format!("'{key}':");
    let pat2 = format!("\"{key}\":");
    let at = header.find(&pat1).map(|i| i + pat1.len()).or_else(|| header.find(&pat2).map(|i| i + pat2.len()))?;
    let rest = &header[at..];
    let mut depth = 0;
    for (i, ch) in rest.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(&rest[..i]),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_round_trip_in_both_orders() {
        let dims = [3, 4, 5];
        let vals: Vec<f32> = (0..60).map(|i| i as f32 * 0.5).collect();
        let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let g = decode(&encode(dims, Dtype::F32, &data)).unwrap();
        assert_eq!(g.dims, dims);
        assert_eq!(g.values, vals.iter().map(|&v| v as f64).collect::<Vec<_>>());
        // The same array in C order: element [x, y, z] at (x·4 + y)·5 + z.
        let mut c = Vec::new();
        for x in 0..3 {
            for y in 0..4 {
                for z in 0..5 {
                    c.extend_from_slice(&vals[(z * 4 + y) * 3 + x].to_le_bytes());
                }
            }
        }
        let bytes = encode_ordered(dims, Dtype::F32, &c, false);
        assert_eq!(decode(&bytes).unwrap().values, g.values);
        assert_eq!((bytes.len() - data.len()) % 64, 0, "header padded to 64 bytes");
    }

    fn patch(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
        assert_eq!(from.len(), to.len());
        let at = bytes.windows(from.len()).position(|w| w == from.as_bytes()).expect("pattern present");
        let mut out = bytes.to_vec();
        out[at..at + to.len()].copy_from_slice(to.as_bytes());
        out
    }

    #[test]
    fn malformed_files_are_refused_with_a_reason() {
        assert!(decode(b"hello").unwrap_err().contains("magic"));
        let good = encode([2, 2, 2], Dtype::U8, &[0; 8]);
        assert!(decode(&good[..good.len() - 1]).unwrap_err().contains("data bytes"));
        assert!(decode(&patch(&good, "|u1", ">f8")).unwrap_err().contains("unsupported dtype"));
        assert!(decode(&patch(&good, "(2, 2, 2)", "(4, 2)   ")).unwrap_err().contains("3-D"));
    }
}
