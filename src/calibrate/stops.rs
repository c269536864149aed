//! `workcell_guard simulate-stops <workcell> --robot NAME --stops N --out
//! stops.mcap`: recorded stops of one simulated manipulator under a
//! braking physics the guard does not know
//! ([`workcell_guard_sim::braking`]), written as a rosbag2 MCAP the way
//! `record` writes a live cell: the joint states on the manipulator's
//! topic, its stop flag on `<robot>/stop`, and the workcell named in the
//! recording's metadata.

use crate::AnyError;
use std::collections::BTreeMap;
use std::path::PathBuf;
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::bag::{BagWriter, record};
use workcell_guard_ros::convert::to_time;
use workcell_guard_ros::msg::{Bool, Header, JointState};
use workcell_guard_ros::topics::{Role, Topics};
use workcell_guard_sim::braking::BrakePhysics;
use workcell_guard_sim::stops::record_stops;

/// `simulate-stops`' arguments.
#[derive(clap::Args)]
pub struct SimulateStopsArgs {
    /// The workcell YAML.
    pub workcell: PathBuf,
    /// The manipulator.
    #[arg(long)]
    pub robot: String,
    /// Stops to record.
    #[arg(long, default_value_t = 2000)]
    pub stops: usize,
    /// Seed of the motions, reaction times and noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The recording to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// Log time of a joint state after its stamp, s (the driver's latency).
const LOG_LAG_S: f64 = 0.0005;
/// When the recording starts, s since the epoch.
const START_S: f64 = 1.7e9;

/// Runs `simulate-stops`.
pub fn run(a: &SimulateStopsArgs) -> Result<(), AnyError> {
    let cell = workcell_guard_description::workcell::load(&a.workcell)?;
    let Some(r) = cell.manipulators.iter().position(|m| m.name == a.robot) else {
        let known: Vec<&str> = cell.manipulators.iter().map(|m| m.name.as_str()).collect();
        return Err(format!(
            "no manipulator `{}` in {} (manipulators: {})",
            a.robot,
            a.workcell.display(),
            known.join(", ")
        )
        .into());
    };
    let m = &cell.manipulators[r];
    let physics = BrakePhysics::for_manipulator(m);
    let log = record_stops(m, &physics, a.stops, a.seed, START_S);
    let topics = Topics::new(&RosArgs::default(), &cell);
    let js_topic = topics.name(Role::JointState(r)).ok_or("no joint-state topic")?.to_string();
    let stop_topic = topics.name(Role::Stop(r)).ok_or("no stop topic")?.to_string();
    let mut bag = BagWriter::create(&a.out)?;
    let abs = std::path::absolute(&a.workcell).unwrap_or_else(|_| a.workcell.clone());
    bag.metadata(record::METADATA, BTreeMap::from([("workcell_file".to_string(), abs.display().to_string())]))?;
    let ns = |t: f64| (t * 1e9).round() as u64;
    let dof = m.robot.dof();
    let mut msg = JointState { name: m.robot.dof_names.clone(), ..JointState::default() };
    let mut c = 0;
    bag.write(&stop_topic, ns(START_S), &Bool { data: false })?;
    for (k, &t) in log.stamps.iter().enumerate() {
        // Commands due before this state's log time go first.
        while let Some(&(tc, release)) = log.commands.get(c) {
            if tc > t + LOG_LAG_S {
                break;
            }
            bag.write(&stop_topic, ns(tc), &Bool { data: true })?;
            c += 1;
            // Readers sort by log time: the release may be written now.
            bag.write(&stop_topic, ns(release), &Bool { data: false })?;
        }
        msg.header = Header { stamp: to_time(t).ok_or("stamp out of range")?, frame_id: String::new() };
        msg.position.clear();
        msg.position.extend_from_slice(&log.positions[k * dof..(k + 1) * dof]);
        bag.write(&js_topic, ns(t + LOG_LAG_S), &msg)?;
    }
    bag.finish()?;
    println!(
        "{}: {} stops of `{}`, {} joint states, {:.1} s ({})",
        a.out.display(),
        log.commands.len(),
        m.name,
        log.stamps.len(),
        log.stamps.last().unwrap_or(&START_S) - START_S,
        physics_note(&physics)
    );
    Ok(())
}

fn physics_note(p: &BrakePhysics) -> String {
    format!(
        "reaction {:.1}–{:.1} ms, decelerations {}",
        p.reaction_s.0 * 1e3,
        p.reaction_s.1 * 1e3,
        p.joints.iter().map(|j| format!("{:.1}", j.decel)).collect::<Vec<_>>().join("/")
    )
}
