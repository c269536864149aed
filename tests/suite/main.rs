//! The in-process integration tests, one binary so that they build and
//! link once: models, fields, forecasts, the guard and its twins, the
//! platen allocator, the node without middleware, the command line.
//!
//! The tests over real DDS (`ros_e2e`, `ros_robustness`) stay binaries of
//! their own, so that their timing does not share a process with these.

#[path = "../common/mod.rs"]
mod common;

mod alloc;
mod arbitration;
mod architecture;
mod at_start;

mod bad_inputs;
mod calibrate;
mod calibrate_foreign;
mod caught;
mod cli;
mod coverage;
mod crossing;
mod ends;
mod escape;
mod exact;
mod exact_cell;
mod exact_refine;
mod field;
mod fk_oracle;
mod forecast;
mod guard;
mod guard_twins;
mod guard_ur10;
mod model_batch;
mod model_kinematics;
mod obstacles;
mod platen;
mod platen_alloc;
mod platen_cells;
mod platen_paths;
mod recording;
mod refine;
mod ros_files;
mod ros_integrator;
mod ros_node;
mod ros_state;
mod scaling;
