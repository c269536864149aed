//! `workcell_guard calibrate <recording.mcap>... --robot NAME`: one
//! manipulator's stopping model fitted to the stops in recordings
//! ([`workcell_guard_core::forecast::calibrate`]), written as its
//! workcell `stopping:` file, with an HTML report of the fit.
//!
//! A stop is where the robot's stop flag (`<robot>/stop`) turns true or
//! its speed scaling falls to 0, at the command's log time; it ends where
//! the flag turns false or the scaling rises again. The joint states are
//! read at their header stamps (log times where the stamps are zero); the
//! commands are moved onto the stamps' clock by the median lag between
//! the joint states' log times and stamps.

mod read;
mod report;
pub mod stops;

use crate::AnyError;
use std::path::{Path, PathBuf};
use workcell_guard_core::forecast::calibrate::{self as fit, FitOptions, Score, StopSample};
use workcell_guard_core::forecast::stopping::JointStopping;
use workcell_guard_description::stopping_file::{self, RawJointStopping, RawSource, RawStopping};
use workcell_guard_description::workcell::Workcell;

/// `calibrate`'s arguments.
#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// The recordings (rosbag2 MCAP): the robot's joint states and its stop or speed-scaling commands.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The manipulator to calibrate.
    #[arg(long)]
    pub robot: String,
    /// The workcell YAML (else the one the first recording names).
    #[arg(long)]
    pub workcell: Option<PathBuf>,
    /// Where to write the stopping file (default: `stopping/<robot>.yaml` beside the workcell).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Where to write the fit report (default: the stopping file's path with `.html`).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Share of the stops held out of the fit to score it (every n-th stop).
    #[arg(long, default_value_t = 0.2)]
    pub holdout: f64,
    /// Recordings to score the fit on instead of held-out stops (with --holdout 0, the fit uses every stop
    /// of FILES).
    #[arg(long = "test", value_name = "MCAP")]
    pub test: Vec<PathBuf>,
    /// Share of stops the model's bound may fall short of.
    #[arg(long, default_value_t = FitOptions::default().miss_rate)]
    pub miss_rate: f64,
    /// Stops needed per joint (a joint that never moves is left out instead).
    #[arg(long, default_value_t = FitOptions::default().min_stops)]
    pub min_stops: usize,
}

/// Why calibration could not be done.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// No workcell given or named.
    #[error("no workcell: give --workcell (the recording {0} does not name one)")]
    NoWorkcell(PathBuf),
    /// The robot is not in the workcell.
    #[error("no manipulator `{robot}` in {workcell} (manipulators: {known})")]
    UnknownRobot {
        /// The name asked for.
        robot: String,
        /// The workcell.
        workcell: PathBuf,
        /// Its manipulators.
        known: String,
    },
    /// A recording has none of the robot's joint states.
    #[error("{file}: no joint states of `{robot}` on {topic}")]
    NoJointStates {
        /// The recording.
        file: PathBuf,
        /// The robot.
        robot: String,
        /// The topic looked for.
        topic: String,
    },
    /// A joint state does not name the robot's joints.
    #[error("{file}: joint state {index} on {topic}: {why}")]
    JointNames {
        /// The recording.
        file: PathBuf,
        /// The topic.
        topic: String,
        /// Its index among the topic's messages.
        index: usize,
        /// What is wrong.
        why: String,
    },
    /// No stop commands at all.
    #[error("no stops of `{robot}` in the recordings: neither {stop} turns true nor its speed scaling falls to 0")]
    NoStops {
        /// The robot.
        robot: String,
        /// Its stop topic.
        stop: String,
    },
    /// Stops, but none measurable.
    #[error(
        "{found} stops of `{robot}`, none measurable: {before} with fewer than {min_before} joint states in the \
         {window_ms} ms before the command (joint states come every {period_ms:.1} ms), {ended} ending before the \
         robot stood, {released} released before it stood"
    )]
    NoUsableStops {
        /// The robot.
        robot: String,
        /// Stops found.
        found: usize,
        /// Skipped for too few states before.
        before: usize,
        /// Skipped for ending before rest.
        ended: usize,
        /// Skipped for a release before rest.
        released: usize,
        /// States needed before.
        min_before: usize,
        /// The window, ms.
        window_ms: f64,
        /// The median joint-state period, ms.
        period_ms: f64,
    },
    /// A joint's fit failed.
    #[error("joint `{joint}` of `{robot}`: {source}")]
    Fit {
        /// The robot.
        robot: String,
        /// The joint.
        joint: String,
        /// Why.
        source: fit::FitError,
    },
    /// The options make no sense.
    #[error("--{option} = {value}: {why}")]
    Option {
        /// The option.
        option: &'static str,
        /// Its value.
        value: String,
        /// Why.
        why: &'static str,
    },
}

/// One joint's outcome.
pub struct JointFit {
    /// Its name.
    pub name: String,
    /// The model.
    pub model: JointStopping,
    /// How the fit came out.
    pub summary: fit::FitSummary,
    /// The held-out stops.
    pub held_out: Vec<StopSample>,
    /// The training stops.
    pub train: Vec<StopSample>,
    /// Scores on the held-out stops: the model, the best constant
    /// deceleration, the configured figures.
    pub scores: [Score; 3],
    /// The best constant deceleration, and the reaction time it goes with
    /// ([`fit::best_constant`]).
    pub constant_decel: f64,
    /// See `constant_decel`, s.
    pub constant_react_s: f64,
}

/// Everything calibrate found.
pub struct Calibration {
    /// The robot.
    pub robot: String,
    /// Stops found, measured, held out.
    pub stops: (usize, usize, usize),
    /// Calibrated joints.
    pub joints: Vec<JointFit>,
    /// Joints that never moved in a stop.
    pub left_out: Vec<String>,
    /// The robot's reaction time under the model, s.
    pub reaction_s: f64,
    /// The configured reaction time and decelerations.
    pub configured: (f64, Vec<f64>),
}

/// Runs `calibrate`.
pub fn run(a: &CalibrateArgs) -> Result<(), AnyError> {
    if !(0.0..0.9).contains(&a.holdout) {
        return Err(CalibrateError::Option {
            option: "holdout",
            value: a.holdout.to_string(),
            why: "must be in 0..0.9",
        }
        .into());
    }
    if !(a.miss_rate > 0.0 && a.miss_rate < 0.5) {
        return Err(CalibrateError::Option {
            option: "miss-rate",
            value: a.miss_rate.to_string(),
            why: "must be in (0, 0.5)",
        }
        .into());
    }
    let workcell_path = match &a.workcell {
        Some(w) => w.clone(),
        None => read::recorded_workcell(&a.files[0])?.ok_or_else(|| CalibrateError::NoWorkcell(a.files[0].clone()))?,
    };
    let cell = workcell_guard_description::workcell::load(&workcell_path)?;
    let r = cell.manipulators.iter().position(|m| m.name == a.robot).ok_or_else(|| CalibrateError::UnknownRobot {
        robot: a.robot.clone(),
        workcell: workcell_path.clone(),
        known: cell.manipulators.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", "),
    })?;
    let opts = FitOptions { miss_rate: a.miss_rate, min_stops: a.min_stops, ..FitOptions::default() };
    let c = calibrate(&a.files, &a.test, &cell, r, a.holdout, &opts)?;
    let out = a.out.clone().unwrap_or_else(|| {
        workcell_path.parent().unwrap_or(Path::new(".")).join("stopping").join(format!("{}.yaml", a.robot))
    });
    write_model(&c, &a.files, &out)?;
    let report = a.report.clone().unwrap_or_else(|| out.with_extension("html"));
    std::fs::write(&report, report::html(&c, &cell.manipulators[r]))
        .map_err(|e| format!("{}: {e}", report.display()))?;
    print_summary(&c, &cell.manipulators[r]);
    let rel = pathdiff(&out, workcell_path.parent().unwrap_or(Path::new(".")));
    println!("wrote {} and {}", out.display(), report.display());
    println!("the workcell uses it with, in manipulator `{}`:  stopping: {{file: {}}}", a.robot, rel.display());
    Ok(())
}

/// `path` relative to `base` where it lies below it, else as given.
fn pathdiff(path: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    abs(path).strip_prefix(abs(base)).map(Path::to_path_buf).unwrap_or_else(|_| abs(path))
}

/// Measures the stops of manipulator `r` of `cell` in `files` and fits
/// every joint that moved, holding out every n-th stop (`holdout` share);
/// scored on the held-out stops and those of `test`.
pub fn calibrate(
    files: &[PathBuf],
    test: &[PathBuf],
    cell: &Workcell,
    r: usize,
    holdout: f64,
    opts: &FitOptions,
) -> Result<Calibration, AnyError> {
    let m = &cell.manipulators[r];
    let (samples, found) = read::measured_stops(files, cell, r)?;
    let tested = if test.is_empty() { Vec::new() } else { read::measured_stops(test, cell, r)?.0 };
    let measured = samples.iter().map(|s| s.stop).collect::<std::collections::BTreeSet<_>>().len();
    let every = if holdout > 0.0 { (1.0 / holdout).round().max(2.0) as usize } else { usize::MAX };
    let held = |s: &StopSample| every != usize::MAX && s.stop % every == every - 1;
    let mut joints = Vec::new();
    let mut left_out = Vec::new();
    for (j, name) in m.robot.dof_names.iter().enumerate() {
        let (mut held_out, train): (Vec<StopSample>, Vec<StopSample>) =
            samples.iter().filter(|s| s.joint == j).partition(|s| held(s));
        held_out.extend(tested.iter().filter(|s| s.joint == j));
        if train.is_empty() && held_out.is_empty() {
            left_out.push(name.clone());
            continue;
        }
        let rotational = m.robot.dof_joint(j).kind.is_rotational();
        let (model, summary) = fit::fit_joint(&train, rotational, opts).map_err(|source| CalibrateError::Fit {
            robot: m.name.clone(),
            joint: name.clone(),
            source,
        })?;
        joints.push(JointFit {
            name: name.clone(),
            model,
            summary,
            held_out,
            train,
            scores: [Score::default(); 3],
            constant_decel: 0.0,
            constant_react_s: 0.0,
        });
    }
    let reaction_s = joints.iter().map(|f| f.model.reaction_s.max(0.0)).fold(f64::INFINITY, f64::min);
    let reaction_s = if reaction_s.is_finite() { reaction_s } else { m.reaction_time_s };
    for f in &mut joints {
        let j = m.robot.dof_names.iter().position(|n| *n == f.name).unwrap_or(0);
        (f.constant_react_s, f.constant_decel) = fit::best_constant(&f.train, opts.miss_rate);
        let (r, a, cfg_a, cfg_r) = (f.constant_react_s, f.constant_decel, m.max_decel[j], m.reaction_time_s);
        let model = &f.model;
        f.scores = [
            fit::evaluate(&f.held_out, |s| model.bound(s.w, s.q)),
            fit::evaluate(&f.held_out, |s| s.w.abs() * r + s.w * s.w / (2.0 * a)),
            fit::evaluate(&f.held_out, |s| s.w.abs() * cfg_r + s.w * s.w / (2.0 * cfg_a)),
        ];
    }
    let held_stops = (0..found).filter(|k| every != usize::MAX && k % every == every - 1).count()
        + tested.iter().map(|s| s.stop).collect::<std::collections::BTreeSet<_>>().len();
    Ok(Calibration {
        robot: m.name.clone(),
        stops: (found, measured, held_stops),
        joints,
        left_out,
        reaction_s,
        configured: (m.reaction_time_s, m.max_decel.clone()),
    })
}

/// Writes `c` as a stopping file at `out`.
fn write_model(c: &Calibration, files: &[PathBuf], out: &Path) -> Result<(), AnyError> {
    let raw = RawStopping {
        file: None,
        source: Some(RawSource {
            recordings: files.iter().map(|f| f.display().to_string()).collect(),
            stops: c.stops.1,
            held_out: c.stops.2,
        }),
        joints: c
            .joints
            .iter()
            .map(|f| {
                (f.name.clone(), RawJointStopping::from_model(&f.model, f.summary.stops, f.summary.position_range))
            })
            .collect(),
    };
    let text = stopping_file::to_yaml(&raw, &c.robot)?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(())
}

/// The per-joint table, as `calibrate` prints it.
fn print_summary(c: &Calibration, m: &workcell_guard_core::cell::Manipulator) {
    let (found, measured, held) = c.stops;
    println!(
        "{}: {found} stops found, {measured} measured, {held} held out; reaction time {:.4} s (configured {:.4} s)",
        c.robot, c.reaction_s, c.configured.0
    );
    println!(
        "{:<16} {:>6} {:>15}  {:>22}  {:>22}  {:>22}",
        "joint", "stops", "speeds", "learned cover/median", "constant cover/median", "configured cover/median"
    );
    for f in &c.joints {
        let j = m.robot.dof_names.iter().position(|n| *n == f.name).unwrap_or(0);
        let cell = |s: &Score| format!("{:.2} % / {:+.1} %", 100.0 * s.coverage(), 100.0 * s.median_over);
        println!(
            "{:<16} {:>6} {:>6.3}..{:<6.3}  {:>22}  {:>22}  {:>22}   (constant {:.1} ms + {:.2}, configured {:.2})",
            f.name,
            f.summary.stops,
            f.summary.speed_range.0,
            f.summary.speed_range.1,
            cell(&f.scores[0]),
            cell(&f.scores[1]),
            cell(&f.scores[2]),
            f.constant_react_s * 1e3,
            f.constant_decel,
            m.max_decel[j]
        );
    }
    let all = |k: usize| {
        let held: Vec<StopSample> = c.joints.iter().flat_map(|f| f.held_out.iter().copied()).collect();
        let preds: Vec<&JointFit> = c.joints.iter().collect();
        overall(&held, &preds, k, m)
    };
    let [l, k, h] = [all(0), all(1), all(2)];
    println!(
        "held out, all joints: learned {:.3} % covered, median overestimate {:+.1} %; best constant deceleration {:.3} % / {:+.1} %; configured {:.3} % / {:+.1} %",
        100.0 * l.coverage(),
        100.0 * l.median_over,
        100.0 * k.coverage(),
        100.0 * k.median_over,
        100.0 * h.coverage(),
        100.0 * h.median_over
    );
    if !c.left_out.is_empty() {
        println!("not calibrated (never moving at a stop; their configured figures stand): {}", c.left_out.join(", "));
    }
}

/// Scores prediction `k` (0 learned, 1 constant, 2 configured) over the
/// held-out stops of every joint.
pub fn overall(held: &[StopSample], fits: &[&JointFit], k: usize, m: &workcell_guard_core::cell::Manipulator) -> Score {
    let fit_of = |j: usize| fits.iter().find(|f| m.robot.dof_names.get(j) == Some(&f.name));
    fit::evaluate(held, |s| {
        let Some(f) = fit_of(s.joint) else { return f64::INFINITY };
        let v = s.w.abs();
        match k {
            0 => f.model.bound(s.w, s.q),
            1 => v * f.constant_react_s + v * v / (2.0 * f.constant_decel),
            _ => v * m.reaction_time_s + v * v / (2.0 * m.max_decel[s.joint]),
        }
    })
}
