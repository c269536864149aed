//! The voxel distance field of the cell (method text:
//! `voxel-distance-spheres.txt`): every voxel holds its distance to the
//! nearest obstacle, and a sphere collides when the value at its centre is
//! at most its radius.
//!
//! This release holds the exact distance transform ([`edt`]); occupancy from
//! the workcell, conservative sphere queries, incremental updates and `.npy`
//! import/export follow in issue 3.

pub mod edt;
