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
    fn size(self) -> usize {
        match self {
            Dtype::F32 | Dtype::U32 => 4,
            Dtype::U8 => 1,
        }
    }

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
    write_items(path, dims, Dtype::F32, values.iter().map(|v| v.to_le_bytes()))
}

/// Writes an occupancy grid as `uint8` 0/1.
pub fn write_bool(path: &Path, dims: [usize; 3], values: &[bool]) -> Result<(), NpyError> {
    write_items(path, dims, Dtype::U8, values.iter().map(|&b| [b as u8]))
}

/// Writes a 3-D grid (`x` fastest) whose elements, already little-endian
/// encoded, come from `items`: streamed through a fixed buffer, so no copy
/// of the whole grid is made. `items` must yield exactly one element per
/// voxel.
pub fn write_items<const W: usize>(
    path: &Path,
    dims: [usize; 3],
    dtype: Dtype,
    items: impl Iterator<Item = [u8; W]>,
) -> Result<(), NpyError> {
    use std::io::Write;
    debug_assert_eq!(W, dtype.size());
    let io = |source| NpyError::Io { path: path.into(), source };
    let mut file = std::fs::File::create(path).map_err(io)?;
    file.write_all(&encode_ordered(dims, dtype, &[], true)).map_err(io)?;
    let mut buf = vec![0u8; STREAM_CHUNK];
    let (mut len, mut count) = (0, 0usize);
    for item in items {
        buf[len..len + W].copy_from_slice(&item);
        len += W;
        count += 1;
        if len + W > buf.len() {
            file.write_all(&buf[..len]).map_err(io)?;
            len = 0;
        }
    }
    file.write_all(&buf[..len]).map_err(io)?;
    let want = dims.iter().product::<usize>();
    if count != want {
        let problem = format!("{count} elements written for shape {dims:?}, expected {want}");
        return Err(NpyError::Format { path: path.into(), problem });
    }
    Ok(())
}

/// Bytes per read or write of the payload.
const STREAM_CHUNK: usize = 1 << 20;

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

/// An occupancy grid read by [`read_occupancy`]: one `T` per voxel, `x`
/// fastest.
#[derive(Clone, Debug)]
pub struct Mask<T> {
    /// Extents along x, y, z (the array's shape).
    pub dims: [usize; 3],
    /// `occupied` where the file's element is nonzero, else `free`.
    pub values: Vec<T>,
    /// How many elements were nonzero.
    pub occupied: usize,
}

/// Reads a 3-D array of booleans, integers or floats (little-endian or
/// single-byte), in either order, as `[x, y, z]`.
pub fn read(path: &Path) -> Result<Grid3, NpyError> {
    let (dims, values) = read_streamed(path, 0.0, |o, v| *o = v)?;
    Ok(Grid3 { dims, values })
}

/// Reads the same arrays as [`read`], straight into one `T` per voxel
/// (`occupied` where nonzero, as [`Grid3::occupancy`] does), streaming the
/// payload: no other copy of the grid is held.
pub fn read_occupancy<T: Copy>(path: &Path, occupied: T, free: T) -> Result<Mask<T>, NpyError> {
    let mut count = 0usize;
    let (dims, values) = read_streamed(path, free, |o, v| {
        if v != 0.0 {
            *o = occupied;
            count += 1;
        }
    })?;
    Ok(Mask { dims, values, occupied: count })
}

fn read_streamed<T: Copy>(
    path: &Path,
    init: T,
    put: impl FnMut(&mut T, f64),
) -> Result<([usize; 3], Vec<T>), NpyError> {
    let io = |source| NpyError::Io { path: path.into(), source };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    stream(&mut file, size, init, put).map_err(|e| match e {
        Stream::Io(source) => io(source),
        Stream::Format(problem) => NpyError::Format { path: path.into(), problem },
    })
}

/// Parses the bytes of a `.npy` file; see [`read`].
pub fn decode(bytes: &[u8]) -> Result<Grid3, String> {
    let mut reader = bytes;
    let (dims, values) = stream(&mut reader, bytes.len(), 0.0, |o, v| *o = v).map_err(|e| match e {
        Stream::Io(e) => e.to_string(),
        Stream::Format(problem) => problem,
    })?;
    Ok(Grid3 { dims, values })
}

enum Stream {
    Io(std::io::Error),
    Format(String),
}

impl From<String> for Stream {
    fn from(s: String) -> Stream {
        Stream::Format(s)
    }
}

impl From<&str> for Stream {
    fn from(s: &str) -> Stream {
        Stream::Format(s.into())
    }
}

/// Reads exactly `buf.len()` bytes, or says the file ended first.
fn fill(r: &mut impl std::io::Read, buf: &mut [u8], what: &str) -> Result<(), Stream> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Stream::Format(format!("{what} runs past the end of the file")),
        _ => Stream::Io(e),
    })
}

/// The element types read, with their size in bytes.
#[derive(Clone, Copy)]
enum Elem {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F32,
    F64,
}

impl Elem {
    fn parse(descr: &str) -> Result<Elem, String> {
        Ok(match descr {
            "|b1" | "|u1" | "<u1" => Elem::U8,
            "|i1" | "<i1" => Elem::I8,
            "<u2" => Elem::U16,
            "<i2" => Elem::I16,
            "<u4" => Elem::U32,
            "<i4" => Elem::I32,
            "<u8" => Elem::U64,
            "<i8" => Elem::I64,
            "<f4" => Elem::F32,
            "<f8" => Elem::F64,
            d => return Err(format!("unsupported dtype {d:?} (little-endian bool, int or float expected)")),
        })
    }

    fn size(self) -> usize {
        match self {
            Elem::U8 | Elem::I8 => 1,
            Elem::U16 | Elem::I16 => 2,
            Elem::U32 | Elem::I32 | Elem::F32 => 4,
            Elem::U64 | Elem::I64 | Elem::F64 => 8,
        }
    }

    /// Every element of `data` (whole elements only) as `f64`, in order.
    fn each(self, data: &[u8], mut f: impl FnMut(f64)) {
        fn go<const S: usize>(data: &[u8], f: &mut impl FnMut(f64), conv: impl Fn([u8; S]) -> f64) {
            let (items, _) = data.as_chunks::<S>();
            for item in items {
                f(conv(*item));
            }
        }
        match self {
            Elem::U8 => go::<1>(data, &mut f, |s| s[0] as f64),
            Elem::I8 => go::<1>(data, &mut f, |s| s[0] as i8 as f64),
            Elem::U16 => go(data, &mut f, |s| u16::from_le_bytes(s) as f64),
            Elem::I16 => go(data, &mut f, |s| i16::from_le_bytes(s) as f64),
            Elem::U32 => go(data, &mut f, |s| u32::from_le_bytes(s) as f64),
            Elem::I32 => go(data, &mut f, |s| i32::from_le_bytes(s) as f64),
            Elem::U64 => go(data, &mut f, |s| u64::from_le_bytes(s) as f64),
            Elem::I64 => go(data, &mut f, |s| i64::from_le_bytes(s) as f64),
            Elem::F32 => go(data, &mut f, |s| f32::from_le_bytes(s) as f64),
            Elem::F64 => go(data, &mut f, f64::from_le_bytes),
        }
    }
}

/// Reads a `.npy` file of `size` bytes from `r`: the header, then the
/// payload in fixed chunks, calling `put(voxel, value)` for every element on
/// a grid (`x` fastest) that starts as `init`. Returns the shape and grid.
// long: the header's fields read and checked in the order the format lays them out, then the payload
fn stream<T: Copy>(
    r: &mut impl std::io::Read,
    size: usize,
    init: T,
    mut put: impl FnMut(&mut T, f64),
) -> Result<([usize; 3], Vec<T>), Stream> {
    let mut lead = [0u8; 10];
    if size < 10 {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    fill(r, &mut lead, "header")?;
    if &lead[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (hlen, start) = match lead[6] {
        1 => (u16::from_le_bytes([lead[8], lead[9]]) as usize, 10),
        2 | 3 if size >= 12 => {
            let mut more = [0u8; 2];
            fill(r, &mut more, "header")?;
            (u32::from_le_bytes([lead[8], lead[9], more[0], more[1]]) as usize, 12)
        }
        v => return Err(format!("unsupported .npy version {v}").into()),
    };
    if size - start < hlen {
        return Err("header runs past the end of the file".into());
    }
    let mut header = vec![0u8; hlen];
    fill(r, &mut header, "header")?;
    let header = std::str::from_utf8(&header).map_err(|_| "header is not text")?;
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
        return Err(format!("a 3-D array is needed, this one has shape {shape:?}").into());
    };
    let n = a.checked_mul(b).and_then(|ab| ab.checked_mul(c)).ok_or("shape overflows")?;
    let elem = Elem::parse(descr)?;
    let want = n.checked_mul(elem.size()).ok_or("shape overflows")?;
    let have = size - start - hlen;
    if have != want {
        return Err(format!("{have} data bytes for shape {shape:?} of {descr}, expected {want}").into());
    }
    let mut grid = vec![init; n];
    // Element k of the file is array[i, j, l]; it goes to x = i, y = j,
    // z = l. In C order l runs fastest, then j, then i.
    let (mut i, mut j, mut l) = (0, 0, 0);
    let mut k = 0;
    let per = (STREAM_CHUNK / elem.size()).max(1) * elem.size();
    let mut buf = vec![0u8; per.min(want)];
    let mut left = want;
    while left > 0 {
        let chunk = &mut buf[..per.min(left)];
        fill(r, chunk, "data")?;
        left -= chunk.len();
        if fortran {
            elem.each(chunk, |v| {
                put(&mut grid[k], v);
                k += 1;
            });
        } else {
            elem.each(chunk, |v| {
                put(&mut grid[(l * b + j) * a + i], v);
                l += 1;
                if l == c {
                    l = 0;
                    j += 1;
                    if j == b {
                        j = 0;
                        i += 1;
                    }
                }
            });
        }
    }
    Ok(([a, b, c], grid))
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

    #[test]
    fn occupancy_streams_from_files_in_both_orders_and_writers_round_trip() {
        let dir = std::env::temp_dir().join(format!("npy_test_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dims = [3, 4, 5];
        let occ: Vec<bool> = (0..60).map(|i| i % 7 == 2).collect();
        // Int16 in C order: element [x, y, z] at (x·4 + y)·5 + z, -3 where occupied.
        let mut c = Vec::new();
        for x in 0..3 {
            for y in 0..4 {
                for z in 0..5 {
                    let v: i16 = if occ[(z * 4 + y) * 3 + x] { -3 } else { 0 };
                    c.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        let mut bytes = encode_ordered(dims, Dtype::U8, &c, false);
        let at = bytes.windows(3).position(|w| w == b"|u1").unwrap();
        bytes[at..at + 3].copy_from_slice(b"<i2");
        let cfile = dir.join("c.npy");
        std::fs::write(&cfile, &bytes).unwrap();
        let m = read_occupancy(&cfile, 1u8, 0u8).unwrap();
        assert_eq!(m.dims, dims);
        assert_eq!(m.occupied, occ.iter().filter(|&&o| o).count());
        assert_eq!(m.values, occ.iter().map(|&o| o as u8).collect::<Vec<_>>());
        // Fortran order, written by the streaming writer, read back.
        let ffile = dir.join("f.npy");
        write_bool(&ffile, dims, &occ).unwrap();
        let m = read_occupancy(&ffile, 0.0f32, 9.0).unwrap();
        assert_eq!(m.values, occ.iter().map(|&o| if o { 0.0 } else { 9.0 }).collect::<Vec<_>>());
        let vals: Vec<f32> = (0..60).map(|i| i as f32 - 7.5).collect();
        write_f32(&ffile, dims, &vals).unwrap();
        assert_eq!(read(&ffile).unwrap().values, vals.iter().map(|&v| v as f64).collect::<Vec<_>>());
        // A writer given the wrong count says so; a cut file is refused.
        let e = write_items(&ffile, dims, Dtype::U8, [[1u8]; 59].into_iter()).unwrap_err();
        assert!(e.to_string().contains("59 elements written for shape [3, 4, 5], expected 60"), "{e}");
        std::fs::write(&cfile, &bytes[..bytes.len() - 1]).unwrap();
        let e = read_occupancy(&cfile, 1u8, 0u8).unwrap_err().to_string();
        assert!(e.contains("119 data bytes for shape [3, 4, 5] of <i2, expected 120"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
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
