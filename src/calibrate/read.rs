//! The stops of one manipulator in recordings: its joint states (in its
//! joints' order) and its stop commands, measured by
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

/// One recording's joint states and commands of robot `r`.
struct Series {
    stamps: Vec<f64>,
    positions: Vec<f64>,
    /// (instant on the stamps' clock, release instant).
    commands: Vec<(f64, f64)>,
    period_s: f64,
}

/// Every measurable stop of manipulator `r` in `files` (stop indices
/// running on across files), and the number of stops found.
pub fn measured_stops(files: &[PathBuf], cell: &Workcell, r: usize) -> Result<(Vec<StopSample>, usize), AnyError> {
    let m = &cell.manipulators[r];
    let topics = Topics::new(&RosArgs::default(), cell);
    let mut out = Vec::new();
    let mut found = 0;
    let mut skipped = fit::Skipped::default();
    let mut periods = Vec::new();
    for file in files {
        let s = series(file, &topics, cell, r)?;
        let mut here = Vec::new();
        let k = fit::measure_stops(&s.stamps, &s.positions, m.robot.dof(), &s.commands, &mut here);
        out.extend(here.into_iter().map(|x| StopSample { stop: x.stop + found, ..x }));
        found += s.commands.len();
        skipped.too_few_before += k.too_few_before;
        skipped.ended += k.ended;
        skipped.released += k.released;
        periods.push(s.period_s);
    }
    if found == 0 {
        let stop = topics.name(Role::Stop(r)).unwrap_or("?").to_string();
        return Err(CalibrateError::NoStops { robot: m.name.clone(), stop }.into());
    }
    if out.is_empty() {
        periods.sort_by(f64::total_cmp);
        return Err(CalibrateError::NoUsableStops {
            robot: m.name.clone(),
            found,
            before: skipped.too_few_before,
            ended: skipped.ended,
            released: skipped.released,
            min_before: fit::MIN_BEFORE,
            window_ms: fit::BEFORE_S * 1e3,
            period_ms: periods[periods.len() / 2] * 1e3,
        }
        .into());
    }
    Ok((out, found))
}

/// Reads robot `r`'s series from `file`.
fn series(file: &Path, topics: &Topics, cell: &Workcell, r: usize) -> Result<Series, AnyError> {
    let m = &cell.manipulators[r];
    let rec = bag::read(file, topics)?;
    let js_topic = topics.name(Role::JointState(r)).unwrap_or("?").to_string();
    let dof = m.robot.dof();
    let mut map = workcell_guard_ros::convert::JointMap::of_robot(&m.robot);
    let (mut stamps, mut positions, mut lags) = (Vec::new(), Vec::new(), Vec::new());
    // Changes of the stop flag and of "scaled to 0", at log times.
    let (mut flag, mut zero) = (false, false);
    let mut changes: Vec<(f64, bool)> = Vec::new();
    let mut index = 0;
    for e in &rec.entries {
        let log_s = e.log_time_ns as f64 * 1e-9;
        let was = flag || zero;
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
                if stamps.last().is_some_and(|&l| stamp <= l) {
                    continue; // repeated or older: the series stays ascending
                }
                stamps.push(stamp);
                positions.extend_from_slice(mapped.positions);
                lags.push(log_s - stamp);
            }
            (Role::Stop(x), Msg::Bool(b)) if *x == r => flag = b.data,
            (Role::Speed(x, _), msg) if *x == r => {
                if let Some(v) = msg.scaling() {
                    zero = v <= 1e-6;
                }
            }
            _ => {}
        }
        let now = flag || zero;
        if now != was {
            changes.push((log_s, now));
        }
    }
    if stamps.is_empty() {
        return Err(
            CalibrateError::NoJointStates { file: file.to_path_buf(), robot: m.name.clone(), topic: js_topic }.into()
        );
    }
    lags.sort_by(f64::total_cmp);
    let lag = lags[lags.len() / 2];
    let mut commands = Vec::new();
    for (k, &(t, on)) in changes.iter().enumerate() {
        if on {
            let release = changes.get(k + 1).map_or(f64::INFINITY, |&(t, _)| t - lag);
            commands.push((t - lag, release));
        }
    }
    let mut gaps: Vec<f64> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_by(f64::total_cmp);
    let period_s = gaps.get(gaps.len() / 2).copied().unwrap_or(f64::NAN);
    Ok(Series { stamps, positions, commands, period_s })
}
