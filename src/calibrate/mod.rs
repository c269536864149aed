//! `workcell_guard calibrate <recording.mcap>... --robot NAME`: one
//! manipulator's stopping model fitted to the stops in recordings
//! ([`workcell_guard_core::forecast::calibrate`]), written as its
//! workcell `stopping:` file, with an HTML report of the fit.
//!
//! A stop is where the robot's stop flag (`<robot>/stop`) turns true, its
//! speed scaling falls to 0, or its controller is told to hold (an empty
//! trajectory on the controller's command topic), at the command's log
//! time; it ends where the flag turns false, the scaling rises again or
//! the controller is given a trajectory. The joint states (positions only)
//! are read at their header stamps (log times where the stamps are zero);
//! the commands are moved onto the stamps' clock by the median lag between
//! the joint states' log times and stamps.
//!
//! Each joint is fitted on its own: one without enough stops or speed
//! range keeps its configured figures and is named, with what the
//! recordings would need; the stopping file holds the joints that fit.
//! Every stop found is accounted for (used, or dropped and why, per
//! joint), printed and in the report.

mod read;
mod report;
pub mod stops;
mod summary;

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
    /// Recordings to score the fit on beside the held-out stops (one or more; with --holdout 0, the fit uses
    /// every stop of FILES).
    #[arg(long = "test", value_name = "MCAP", num_args = 1..)]
    pub test: Vec<PathBuf>,
    /// Share of stops the model's bound may fall short of.
    #[arg(long, default_value_t = FitOptions::default().miss_rate)]
    pub miss_rate: f64,
    /// Stops needed to fit a joint (one with fewer keeps its configured figures, and is named).
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
         {window_ms:.0} ms before the command (joint states come every {period_ms:.1} ms), {standing} with no joint \
         moving at the command; of {moving} joint stops, {released} released before the joint stood, {never} never \
         at rest, {ended} ending before it stood"
    )]
    NoUsableStops {
        /// The robot.
        robot: String,
        /// Stops found.
        found: usize,
        /// Dropped for too few states before.
        before: usize,
        /// Stops with no joint moving.
        standing: usize,
        /// Joint stops with the joint moving.
        moving: usize,
        /// Joint stops released before rest.
        released: usize,
        /// Joint stops ending before rest.
        ended: usize,
        /// Joint stops never at rest.
        never: usize,
        /// States needed before.
        min_before: usize,
        /// The window, ms.
        window_ms: f64,
        /// The median joint-state period, ms.
        period_ms: f64,
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

/// A joint the recordings could not fit: its configured figures stand.
pub struct Kept {
    /// Its name.
    pub name: String,
    /// Why.
    pub why: KeptWhy,
    /// Its held-out stops, scored at the configured figures.
    pub held_out: Vec<StopSample>,
    /// Score of the configured figures on them.
    pub score: Score,
}

/// Why a joint keeps its configured figures.
pub enum KeptWhy {
    /// It never moved at a stop that could be measured.
    NeverMoving,
    /// Its fit could not be made from the stops there are.
    Fit(fit::FitError),
}

impl Kept {
    /// Why, and what the recordings would need to hold for a fit; `unit`
    /// the joint's speed unit.
    pub fn need(&self, unit: &str) -> String {
        match self.why {
            KeptWhy::NeverMoving => format!("never moving faster than {} {unit} at a measured stop", fit::MIN_SPEED),
            KeptWhy::Fit(fit::FitError::TooFewStops { got, need }) => format!(
                "{got} stops with it moving in the fit; {need} are needed: {} more with it moving faster than {} {unit} \
                 (or --min-stops)",
                need - got,
                fit::MIN_SPEED
            ),
            KeptWhy::Fit(fit::FitError::NarrowSpeedRange { lo, hi, ratio }) => format!(
                "its stops cover {lo:.3}..{hi:.3} {unit} only; stops at {:.3} {unit} or faster are needed (the fastest \
                 at least {ratio}× the slowest)",
                ratio * lo
            ),
            KeptWhy::Fit(fit::FitError::Degenerate) => {
                "its stops gave no finite fit; stops over more speeds and positions are needed".to_string()
            }
        }
    }
}

/// Everything calibrate found.
pub struct Calibration {
    /// The robot.
    pub robot: String,
    /// The stops measured, and what became of each.
    pub measured: read::Measured,
    /// Stops held out of the fit to score it (with those of `--test`).
    pub held_stops: usize,
    /// Calibrated joints.
    pub joints: Vec<JointFit>,
    /// Joints that keep their configured figures.
    pub kept: Vec<Kept>,
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
    summary::print(&c, &cell.manipulators[r]);
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
/// every joint the stops allow, holding out every n-th stop (`holdout`
/// share); scored on the held-out stops and those of `test`. A joint
/// without enough stops or speed range keeps its configured figures.
pub fn calibrate(
    files: &[PathBuf],
    test: &[PathBuf],
    cell: &Workcell,
    r: usize,
    holdout: f64,
    opts: &FitOptions,
) -> Result<Calibration, AnyError> {
    let m = &cell.manipulators[r];
    let measured = read::measured_stops(files, cell, r)?;
    let tested = if test.is_empty() { Vec::new() } else { read::measured_stops(test, cell, r)?.samples };
    let every = if holdout > 0.0 { (1.0 / holdout).round().max(2.0) as usize } else { usize::MAX };
    let held = |stop: usize| every != usize::MAX && stop % every == every - 1;
    let (mut joints, mut kept) = (Vec::new(), Vec::new());
    for (j, name) in m.robot.dof_names.iter().enumerate() {
        let (mut held_out, train): (Vec<StopSample>, Vec<StopSample>) =
            measured.samples.iter().filter(|s| s.joint == j).partition(|s| held(s.stop));
        held_out.extend(tested.iter().filter(|s| s.joint == j));
        let rotational = m.robot.dof_joint(j).kind.is_rotational();
        let why = if train.is_empty() && held_out.is_empty() {
            KeptWhy::NeverMoving
        } else {
            match fit::fit_joint(&train, rotational, opts) {
                Ok((model, summary)) => {
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
                    continue;
                }
                Err(e) => KeptWhy::Fit(e),
            }
        };
        let score = fit::evaluate(&held_out, |s| configured_bound(m, s));
        kept.push(Kept { name: name.clone(), why, held_out, score });
    }
    let reaction_s = joints.iter().map(|f| f.model.reaction_s.max(0.0)).fold(f64::INFINITY, f64::min);
    let reaction_s = if reaction_s.is_finite() { reaction_s } else { m.reaction_time_s };
    for f in &mut joints {
        (f.constant_react_s, f.constant_decel) = fit::best_constant(&f.train, opts.miss_rate);
        let (r, a) = (f.constant_react_s, f.constant_decel);
        let model = &f.model;
        f.scores = [
            fit::evaluate(&f.held_out, |s| model.bound(s.w, s.q)),
            fit::evaluate(&f.held_out, |s| s.w.abs() * r + s.w * s.w / (2.0 * a)),
            fit::evaluate(&f.held_out, |s| configured_bound(m, s)),
        ];
    }
    let held_stops = (0..measured.tally.found).filter(|&k| held(k)).count()
        + tested.iter().map(|s| s.stop).collect::<std::collections::BTreeSet<_>>().len();
    Ok(Calibration {
        robot: m.name.clone(),
        measured,
        held_stops,
        joints,
        kept,
        reaction_s,
        configured: (m.reaction_time_s, m.max_decel.clone()),
    })
}

/// The stopping distance the configured figures give for stop `s`.
pub fn configured_bound(m: &workcell_guard_core::cell::Manipulator, s: &StopSample) -> f64 {
    let v = s.w.abs();
    v * m.reaction_time_s + v * v / (2.0 * m.max_decel[s.joint])
}

/// Writes `c` as a stopping file at `out`: the fitted joints (the kept
/// ones absent, so their configured figures stand).
fn write_model(c: &Calibration, files: &[PathBuf], out: &Path) -> Result<(), AnyError> {
    let raw = RawStopping {
        file: None,
        source: Some(RawSource {
            recordings: files.iter().map(|f| f.display().to_string()).collect(),
            stops: c.measured.tally.used,
            held_out: c.held_stops,
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
