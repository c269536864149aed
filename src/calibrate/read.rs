//! The stops of one manipulator in recordings: its joint states (in its
//! joints' order, positions only, in stamp order whatever order they were
//! logged in) and its stops (the stop flag, the speed
//! scaling at 0, a hold on the controller's command topic), measured by
//! [`workcell_guard_core::forecast::calibrate::measure_stops`].

use super::CalibrateError;
use crate::AnyError;
use std::path::{Path, PathBuf};
use workcell_guard_core::forecast::calibrate::{self as fit, StopSample};
use workcell_guard_description::workcell::Workcell;
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::bag::{self, Msg, record};
use workcell_guard_ros::convert::time_s;
use workcell_guard_ros::topics::{Role, Topics};

/// The workcell a recording's node ran with, if it names one.
pub fn recorded_workcell(file: &Path) -> Result<Option<PathBuf>, AnyError> {
    let meta = bag::read_metadata(file)?;
    Ok(meta.get(record::METADATA).and_then(|m| m.get("workcell_file")).map(PathBuf::from))
}

/// Which output of the guard (or of whoever stopped the robot) a stop
/// came from: counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sources {
    /// `<robot>/stop` turning true.
    pub flag: usize,
    /// The speed scaling falling to 0.
    pub scaling: usize,
    /// An empty trajectory on the controller's command topic (a hold).
    pub hold: usize,
}

/// One recording as measured.
#[derive(Clone, Debug)]
pub struct FileStops {
    /// The recording.
    pub path: PathBuf,
    /// Joint states read.
    pub states: usize,
    /// Of those, dropped for repeating an earlier stamp.
    pub repeated: usize,
    /// Their median spacing, s.
    pub period_s: f64,
    /// The window before a command the speed was fitted over, s.
    pub before_s: f64,
    /// Its stops.
    pub stops: usize,
}

/// Every stop of a robot in a set of recordings, measured and accounted for.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Per joint and stop (stop indices running on across files).
    pub samples: Vec<StopSample>,
    /// What became of every stop and joint.
    pub tally: fit::StopTally,
    /// Where the stops came from.
    pub sources: Sources,
    /// Per recording.
    pub files: Vec<FileStops>,
}

/// One recording's joint states and commands of robot `r`.
struct Series {
    stamps: Vec<f64>,
    positions: Vec<f64>,
    /// (instant on the stamps' clock, release instant).
    commands: Vec<(f64, f64)>,
    sources: Sources,
    period_s: f64,
    /// Joint states dropped for repeating an earlier stamp.
    repeated: usize,
}

/// Every stop of manipulator `r` in `files` measured (stop indices running
/// on across files); an error only where no stop is found or none can be
/// measured at all.
pub fn measured_stops(files: &[PathBuf], cell: &Workcell, r: usize) -> Result<Measured, AnyError> {
    let m = &cell.manipulators[r];
    let topics = Topics::new(&RosArgs::default(), cell);
    let mut all = Measured::default();
    for file in files {
        let s = series(file, &topics, cell, r)?;
        let before_s = fit::before_window_s(s.period_s);
        let mut here = Vec::new();
        let tally = fit::measure_stops(&s.stamps, &s.positions, m.robot.dof(), &s.commands, before_s, &mut here);
        let base = all.tally.found;
        all.samples.extend(here.into_iter().map(|x| StopSample { stop: x.stop + base, ..x }));
        all.tally.add(&tally);
        all.sources.flag += s.sources.flag;
        all.sources.scaling += s.sources.scaling;
        all.sources.hold += s.sources.hold;
        all.files.push(FileStops {
            path: file.clone(),
            states: s.stamps.len() + s.repeated,
            repeated: s.repeated,
            period_s: s.period_s,
            before_s,
            stops: s.commands.len(),
        });
    }
    let t = &all.tally;
    if t.found == 0 {
        let stop = topics.name(Role::Stop(r)).unwrap_or("?").to_string();
        return Err(CalibrateError::NoStops { robot: m.name.clone(), stop }.into());
    }
    if all.samples.is_empty() {
        let mut periods: Vec<f64> = all.files.iter().map(|f| f.period_s).collect();
        periods.sort_by(f64::total_cmp);
        let sum = |f: fn(&fit::JointTally) -> usize| t.joints.iter().map(f).sum::<usize>();
        return Err(CalibrateError::NoUsableStops {
            robot: m.name.clone(),
            found: t.found,
            before: t.too_few_before,
            standing: t.standing,
            moving: sum(|j| j.moving),
            released: sum(|j| j.released),
            ended: sum(|j| j.ended),
            never: sum(|j| j.never_at_rest),
            min_before: fit::MIN_BEFORE,
            window_ms: fit::before_window_s(periods[periods.len() / 2]) * 1e3,
            period_ms: periods[periods.len() / 2] * 1e3,
        }
        .into());
    }
    Ok(all)
}

/// The stop signals of one robot as a recording changes them: on while
/// any is on. A hold ends with the next trajectory the controller is
/// given, or with the release of the stop flag or the scaling it came
/// with (the guard sends both).
#[derive(Default)]
struct Signals {
    flag: bool,
    zero: bool,
    hold: bool,
}

impl Signals {
    fn on(&self) -> bool {
        self.flag || self.zero || self.hold
    }
}

/// Reads robot `r`'s series from `file`.
// long: one pass over the recording, each message kind read where it comes
fn series(file: &Path, topics: &Topics, cell: &Workcell, r: usize) -> Result<Series, AnyError> {
    let m = &cell.manipulators[r];
    let rec = bag::read(file, topics)?;
    let js_topic = topics.name(Role::JointState(r)).unwrap_or("?").to_string();
    let dof = m.robot.dof();
    let mut map = workcell_guard_ros::convert::JointMap::of_robot(&m.robot);
    let (mut stamps, mut positions, mut lags) = (Vec::new(), Vec::new(), Vec::new());
    // Changes of "stopped", at log times, with what turned it on.
    let mut sig = Signals::default();
    let mut changes: Vec<(f64, Option<u8>)> = Vec::new();
    let mut index = 0;
    for e in &rec.entries {
        let log_s = e.log_time_ns as f64 * 1e-9;
        let was = sig.on();
        let mut cause = 0;
        match (&e.role, &e.msg) {
            (Role::JointState(x), Msg::JointState(js)) if *x == r => {
                index += 1;
                let mapped = map.map(js).map_err(|err| CalibrateError::JointNames {
                    file: file.to_path_buf(),
                    topic: js_topic.clone(),
                    index: index - 1,
                    why: err.to_string(),
                })?;
                let stamp = time_s(js.header.stamp).filter(|&t| t > 0.0).unwrap_or(log_s);
                if mapped.positions.len() != dof || mapped.positions.iter().any(|p| !p.is_finite()) {
                    continue;
                }
                stamps.push(stamp);
                positions.extend_from_slice(mapped.positions);
                lags.push(log_s - stamp);
            }
            (Role::Stop(x), Msg::Bool(b)) if *x == r => {
                sig.hold &= b.data;
                sig.flag = b.data;
            }
            (Role::Speed(x, _), msg) if *x == r => {
                if let Some(v) = msg.scaling() {
                    sig.zero = v <= 1e-6;
                    sig.hold &= sig.zero;
                    cause = 1;
                }
            }
            (Role::Command(x), Msg::Trajectory(tr)) if *x == r => {
                sig.hold = tr.points.is_empty();
                cause = 2;
            }
            _ => {}
        }
        let now = sig.on();
        if now != was {
            changes.push((log_s, now.then_some(cause)));
        }
    }
    if stamps.is_empty() {
        return Err(
            CalibrateError::NoJointStates { file: file.to_path_buf(), robot: m.name.clone(), topic: js_topic }.into()
        );
    }
    // Logged in arrival order, measured in stamp order; a stamp repeated
    // keeps its first state.
    let mut order: Vec<usize> = (0..stamps.len()).collect();
    order.sort_by(|&a, &b| stamps[a].total_cmp(&stamps[b]));
    order.dedup_by(|b, a| stamps[*a] == stamps[*b]);
    let repeated = stamps.len() - order.len();
    let positions: Vec<f64> = order.iter().flat_map(|&i| positions[i * dof..(i + 1) * dof].iter().copied()).collect();
    let stamps: Vec<f64> = order.iter().map(|&i| stamps[i]).collect();
    lags.sort_by(f64::total_cmp);
    let lag = lags[lags.len() / 2];
    let mut commands = Vec::new();
    let mut sources = Sources::default();
    for (k, &(t, on)) in changes.iter().enumerate() {
        let Some(cause) = on else { continue };
        let release = changes.get(k + 1).map_or(f64::INFINITY, |&(t, _)| t - lag);
        commands.push((t - lag, release));
        match cause {
            0 => sources.flag += 1,
            1 => sources.scaling += 1,
            _ => sources.hold += 1,
        }
    }
    let mut gaps: Vec<f64> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_by(f64::total_cmp);
    let period_s = gaps.get(gaps.len() / 2).copied().unwrap_or(f64::NAN);
    Ok(Series { stamps, positions, commands, sources, period_s, repeated })
}
