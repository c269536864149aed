//! `workcell_guard record`: a live cell's topics into a rosbag2 MCAP
//! ([`workcell_guard_ros::dds::recorder`]).

use crate::AnyError;
use std::path::PathBuf;
use workcell_guard_description::workcell;
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::dds::recorder;

/// `record`'s arguments.
#[derive(clap::Args)]
pub struct RecordArgs {
    /// The workcell YAML: which robots and units, so which topics.
    #[arg(long)]
    pub workcell: PathBuf,
    /// The MCAP file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Stop after this long, s (else at SIGINT or SIGTERM).
    #[arg(long)]
    pub duration_s: Option<f64>,
}

/// Runs `record` (the ROS arguments give the namespace and remaps).
pub fn run(a: &RecordArgs, ros: &RosArgs) -> Result<(), AnyError> {
    let cell = workcell::load(&a.workcell)?;
    eprintln!("recording the topics of {} into {} (Ctrl-C ends it)", a.workcell.display(), a.out.display());
    let got = recorder::record(ros, &cell, &a.out, a.duration_s)?;
    let total: usize = got.per_topic.values().sum();
    println!("wrote {total} messages to {}", a.out.display());
    for (topic, n) in &got.per_topic {
        println!("  {topic}: {n}");
    }
    for (topic, n) in &got.undecodable {
        println!("  {topic}: {n} samples not decoded (not written)");
    }
    Ok(())
}
