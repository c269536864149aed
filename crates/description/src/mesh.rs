//! Mesh files (STL binary and ASCII, OBJ, COLLADA) through `mesh-loader`.
//!
//! The format is chosen by the file's extension in any letter case (`.STL`,
//! `.Dae`), falling back to the content. COLLADA `<unit>` is applied by
//! `mesh-loader`. The URDF scale is applied here; a negative scale mirrors
//! the mesh, and the triangle winding is flipped so that normals still point
//! outward (an odd number of negative factors reverses orientation).

use nalgebra::Point3;
use std::path::{Path, PathBuf};
use workcell_guard_core::model::geometry::TriMesh;

/// A mesh file that could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MeshError {
    /// The file could not be read or parsed.
    #[error("cannot load mesh {path}: {source}")]
    Load {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no triangle.
    #[error("mesh {path} has no triangles")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A vertex is NaN or infinite, or a scale factor is zero or not finite.
    #[error("mesh {path}: {what}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
}

/// Loads a mesh file and applies `scale`.
pub fn load(path: &Path, scale: [f64; 3]) -> Result<TriMesh, MeshError> {
    let bytes = std::fs::read(path).map_err(|source| MeshError::Load { path: path.to_path_buf(), source })?;
    load_bytes(&bytes, path, scale)
}

/// [`load`] on a mesh file's bytes: `path` chooses the format by its
/// extension and names the mesh in errors.
pub fn load_bytes(bytes: &[u8], path: &Path, scale: [f64; 3]) -> Result<TriMesh, MeshError> {
    if scale.iter().any(|s| !s.is_finite() || *s == 0.0) {
        return Err(MeshError::Invalid {
            path: path.to_path_buf(),
            what: format!("scale {scale:?} must be finite and non-zero"),
        });
    }
    let loader = mesh_loader::Loader::default().merge_meshes(true);
    let ext = path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase());
    let err = |source| MeshError::Load { path: path.to_path_buf(), source };
    // mesh-loader panics on some malformed files: contained, the panic
    // refuses the file like any other parse error.
    let scene = crate::contain::contain(|| match ext.as_deref() {
        Some("stl") => loader.load_stl_from_slice(bytes, path),
        Some("dae") => loader.load_collada_from_slice(bytes, path),
        Some("obj") => loader.load_obj_from_slice(bytes, path),
        _ => loader.load_from_slice(bytes, path),
    })
    .unwrap_or_else(|p| Err(std::io::Error::other(format!("the mesh parser failed on this file: {p}"))))
    .map_err(err)?;

    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for m in &scene.meshes {
        let base = vertices.len() as u32;
        vertices.extend(
            m.vertices.iter().map(|v| {
                Point3::new(f64::from(v[0]) * scale[0], f64::from(v[1]) * scale[1], f64::from(v[2]) * scale[2])
            }),
        );
        triangles.extend(m.faces.iter().map(|f| [f[0] + base, f[1] + base, f[2] + base]));
    }
    if triangles.is_empty() {
        return Err(MeshError::Empty { path: path.to_path_buf() });
    }
    if let Some(bad) = vertices.iter().find(|v| !v.coords.iter().all(|c| c.is_finite())) {
        return Err(MeshError::Invalid { path: path.to_path_buf(), what: format!("vertex {bad:?} is not finite") });
    }
    if let Some(t) = triangles.iter().find(|t| t.iter().any(|&i| i as usize >= vertices.len())) {
        return Err(MeshError::Invalid {
            path: path.to_path_buf(),
            what: format!("triangle {t:?} names a vertex beyond {}", vertices.len()),
        });
    }
    let mirrored = scale.iter().filter(|s| **s < 0.0).count() % 2 == 1;
    if mirrored {
        for t in &mut triangles {
            t.swap(1, 2);
        }
    }
    Ok(TriMesh { path: path.to_path_buf(), scale, vertices, triangles })
}
