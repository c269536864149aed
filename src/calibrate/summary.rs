//! What `calibrate` prints: every stop accounted for, the per-joint fit
//! against the best constant deceleration and the configured figures, the
//! joints kept at their configured figures and why, and the held-out
//! scores. The accounting rows are the report's too.

use super::{Calibration, JointFit, configured_bound};
use workcell_guard_core::cell::Manipulator;
use workcell_guard_core::forecast::calibrate::{self as fit, Score, StopSample};

/// The columns of the per-joint accounting.
pub const JOINT_COLUMNS: [&str; 8] =
    ["joint", "stops seen", "moving", "used", "released before rest", "never at rest", "recording ended", "no travel"];

/// One row per joint under [`JOINT_COLUMNS`].
pub fn joint_rows(c: &Calibration, m: &Manipulator) -> Vec<[String; 8]> {
    let t = &c.measured.tally;
    m.robot
        .dof_names
        .iter()
        .zip(&t.joints)
        .map(|(name, j)| {
            [
                name.clone(),
                j.seen.to_string(),
                j.moving.to_string(),
                j.used.to_string(),
                j.released.to_string(),
                j.never_at_rest.to_string(),
                j.ended.to_string(),
                j.no_travel.to_string(),
            ]
        })
        .collect()
}

/// The stops found, where from, and what became of them, as sentences.
pub fn stop_lines(c: &Calibration) -> Vec<String> {
    let (t, s) = (&c.measured.tally, &c.measured.sources);
    let min_before = fit::MIN_BEFORE;
    let mut lines = vec![
        format!(
            "{} stops found in {} recording(s): stop flag {}, speed scaling falling to zero {}, controller hold {}",
            t.found,
            c.measured.files.len(),
            s.flag,
            s.scaling,
            s.hold
        ),
        format!("used {} (a joint or more measured), {} of them held out of the fit", t.used, c.held_stops),
        format!(
            "dropped {}: {} with fewer than {min_before} joint states in the window before the command, {} with no \
             joint moving at the command, {} with no moving joint measured (per joint below)",
            t.too_few_before + t.standing + t.unmeasured,
            t.too_few_before,
            t.standing,
            t.unmeasured
        ),
    ];
    for f in &c.measured.files {
        lines.push(format!(
            "{}: {} joint states ({} repeated stamps dropped) every {:.2} ms (median), speed fitted over the {:.0} ms \
             before a command, {} stops",
            f.path.display(),
            f.states,
            f.repeated,
            f.period_s * 1e3,
            f.before_s * 1e3,
            f.stops
        ));
    }
    lines
}

/// Each kept joint: its name and why, with what a fit would need.
pub fn kept_lines(c: &Calibration, m: &Manipulator) -> Vec<String> {
    c.kept
        .iter()
        .map(|k| {
            let j = m.robot.dof_names.iter().position(|n| *n == k.name).unwrap_or(0);
            let unit = if m.robot.dof_joint(j).kind.is_rotational() { "rad/s" } else { "m/s" };
            let held = if k.score.stops == 0 {
                String::new()
            } else {
                format!("; its {} held-out stops at those figures: {}", k.score.stops, score(&k.score))
            };
            format!("{}: {}{held}", k.name, k.need(unit))
        })
        .collect()
}

/// Held-out scores over every joint: (the fitted joints under the model,
/// the best constant deceleration, the configured figures; the kept
/// joints at their configured figures; every joint as the guard will
/// forecast it: learned where fitted, configured where kept).
pub fn held_out_scores(c: &Calibration, m: &Manipulator) -> ([Score; 3], Score, Score) {
    let fitted: Vec<StopSample> = c.joints.iter().flat_map(|f| f.held_out.iter().copied()).collect();
    let fit_of = |j: usize| c.joints.iter().find(|f| m.robot.dof_names.get(j) == Some(&f.name));
    let by = |k: usize| {
        fit::evaluate(&fitted, |s| {
            let Some(f) = fit_of(s.joint) else { return f64::INFINITY };
            let v = s.w.abs();
            match k {
                0 => f.model.bound(s.w, s.q),
                1 => v * f.constant_react_s + v * v / (2.0 * f.constant_decel),
                _ => configured_bound(m, s),
            }
        })
    };
    let kept: Vec<StopSample> = c.kept.iter().flat_map(|k| k.held_out.iter().copied()).collect();
    let all: Vec<StopSample> = fitted.iter().chain(&kept).copied().collect();
    let used =
        fit::evaluate(&all, |s| fit_of(s.joint).map_or_else(|| configured_bound(m, s), |f| f.model.bound(s.w, s.q)));
    ([by(0), by(1), by(2)], fit::evaluate(&kept, |s| configured_bound(m, s)), used)
}

fn score(s: &Score) -> String {
    format!("{:.3} % covered, median overestimate {:+.1} %", 100.0 * s.coverage(), 100.0 * s.median_over)
}

/// Prints `c` for manipulator `m`.
pub fn print(c: &Calibration, m: &Manipulator) {
    println!("{}:", c.robot);
    for l in stop_lines(c) {
        println!("  {l}");
    }
    let width = JOINT_COLUMNS.map(|h| h.len().max(14) + 2);
    let row = |cells: [String; 8]| cells.iter().zip(width).map(|(x, w)| format!("{x:>w$}")).collect::<String>();
    println!("{}", row(JOINT_COLUMNS.map(String::from)));
    for cells in joint_rows(c, m) {
        println!("{}", row(cells));
    }
    println!("reaction time under the model {:.4} s (configured {:.4} s)", c.reaction_s, c.configured.0);
    println!(
        "{:<16} {:>6} {:>15}  {:>22}  {:>22}  {:>22}",
        "joint", "stops", "speeds", "learned cover/median", "constant cover/median", "configured cover/median"
    );
    for f in &c.joints {
        print_joint(f, m);
    }
    for l in kept_lines(c, m) {
        println!("kept at its configured figures: {l}");
    }
    if c.joints.is_empty() {
        println!(
            "no joint could be fitted: the stopping file holds none, and every joint keeps its configured figures"
        );
    }
    let ([l, k, h], kept, used) = held_out_scores(c, m);
    if !c.joints.is_empty() {
        println!(
            "held out, fitted joints ({} joint stops): learned {:.3} % covered, median overestimate {:+.1} %; best \
         constant deceleration {:.3} % / {:+.1} %; configured {:.3} % / {:+.1} %",
            l.stops,
            100.0 * l.coverage(),
            100.0 * l.median_over,
            100.0 * k.coverage(),
            100.0 * k.median_over,
            100.0 * h.coverage(),
            100.0 * h.median_over
        );
    }
    if !c.kept.is_empty() {
        println!("held out, kept joints at their configured figures ({} joint stops): {}", kept.stops, score(&kept));
    }
    println!("held out, every joint as the guard will forecast it ({} joint stops): {}", used.stops, score(&used));
}

fn print_joint(f: &JointFit, m: &Manipulator) {
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
