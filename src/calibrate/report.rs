//! The fit report: every stop accounted for (where it came from, used or
//! dropped and why, per joint), the joints kept at their configured
//! figures and why; per fitted joint, the held-out stops' measured distance
//! against what the learned model, the best constant deceleration and the
//! configured figures predict, and the distance over speed with the
//! model's bound; the scores as a table. Self-contained HTML in the main
//! report's style.

use super::{Calibration, JointFit, summary};
use crate::report::svg::{Axes, SERIES, STOP, Svg, esc};
use std::fmt::Write;
use workcell_guard_core::cell::Manipulator;
use workcell_guard_core::forecast::calibrate::Score;

/// The report of `c` for manipulator `m`.
pub fn html(c: &Calibration, m: &Manipulator) -> String {
    let mut h = String::new();
    h.push_str(concat!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
        "<meta name=\"viewport\" content=\"width=device-width\">"
    ));
    let title = format!("Stopping model of {}", c.robot);
    let _ = write!(h, "<title>{}</title><style>{}</style></head><body>", esc(&title), crate::report::CSS);
    let _ = write!(
        h,
        "<section id=\"summary\"><h1>{}</h1><p>Reaction time under the model {:.1} ms (configured {:.1} ms).</p>",
        esc(&title),
        c.reaction_s * 1e3,
        c.configured.0 * 1e3
    );
    accounting(&mut h, c, m);
    h.push_str("<h2 id=\"fit\">The fit, scored on held-out stops</h2>");
    h.push_str(
        "<table><tr><th>joint</th><th>stops fitted</th><th>speeds covered</th><th>learned: covered / median over</th>\
         <th>best constant deceleration</th><th>configured</th></tr>",
    );
    let cell = |s: &Score| format!("{:.2} % / {:+.1} %", 100.0 * s.coverage(), 100.0 * s.median_over);
    for f in &c.joints {
        let j = dof(m, f);
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{:.3} – {:.3}</td><td>{}</td><td>{} ({:.1} ms, {:.2})</td><td>{} (at {:.2})</td></tr>",
            esc(&f.name),
            f.summary.stops,
            f.summary.speed_range.0,
            f.summary.speed_range.1,
            cell(&f.scores[0]),
            cell(&f.scores[1]),
            f.constant_react_s * 1e3,
            f.constant_decel,
            cell(&f.scores[2]),
            m.max_decel[j]
        );
    }
    h.push_str("</table>");
    kept_and_totals(&mut h, c, m);
    h.push_str("</section>");
    for f in &c.joints {
        let _ = write!(
            h,
            "<section id=\"{0}\"><h2>{0}</h2><p class=\"note\">Left: held-out stops, predicted against measured \
             distance (on the diagonal: exact; below it: too short). Right: the stops' distance over their speed, \
             with the model's bound at the middle of the positions covered. At most about 1500 and 2000 stops are \
             drawn, evenly through them.</p><figure>{1}</figure><figure>{2}</figure></section>",
            esc(&f.name),
            scatter(f, m),
            over_speed(f)
        );
    }
    h.push_str("</body></html>\n");
    h
}

/// The joints kept at their configured figures and why, and the held-out
/// scores over every joint.
fn kept_and_totals(h: &mut String, c: &Calibration, m: &Manipulator) {
    let cell = |s: &Score| format!("{:.2} % / {:+.1} %", 100.0 * s.coverage(), 100.0 * s.median_over);
    if !c.kept.is_empty() {
        h.push_str("<h2 id=\"kept\">Kept at their configured figures</h2><ul>");
        for l in summary::kept_lines(c, m) {
            let _ = write!(h, "<li>{}</li>", esc(&l));
        }
        h.push_str("</ul>");
    }
    let ([l, k, f], kept, used) = summary::held_out_scores(c, m);
    if !c.joints.is_empty() {
        let _ = write!(
            h,
            "<p>Held out, fitted joints ({} joint stops): learned {}; best constant deceleration {}; configured {}.</p>",
            l.stops,
            cell(&l),
            cell(&k),
            cell(&f)
        );
    }
    if !c.kept.is_empty() {
        let _ = write!(
            h,
            "<p>Held out, kept joints at their configured figures ({} joint stops): {}.</p>",
            kept.stops,
            cell(&kept)
        );
    }
    let _ = write!(
        h,
        "<p>Held out, every joint as the guard will forecast it ({} joint stops): {}.</p>",
        used.stops,
        cell(&used)
    );
}

/// Every stop accounted for: where the stops came from, used or dropped
/// and why, per joint.
fn accounting(h: &mut String, c: &Calibration, m: &Manipulator) {
    h.push_str("<h2 id=\"stops\">Every stop accounted for</h2><ul>");
    for l in summary::stop_lines(c) {
        let _ = write!(h, "<li>{}</li>", esc(&l));
    }
    h.push_str("</ul><table><tr>");
    for col in summary::JOINT_COLUMNS {
        let _ = write!(h, "<th>{}</th>", esc(col));
    }
    h.push_str("</tr>");
    for row in summary::joint_rows(c, m) {
        h.push_str("<tr>");
        for x in row {
            let _ = write!(h, "<td>{}</td>", esc(&x));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

fn dof(m: &Manipulator, f: &JointFit) -> usize {
    m.robot.dof_names.iter().position(|n| *n == f.name).unwrap_or(0)
}

/// Predicted against measured stopping distance, mm.
fn scatter(f: &JointFit, m: &Manipulator) -> String {
    let j = dof(m, f);
    let (w, h) = (440.0, 400.0);
    let mut s = Svg::new("predicted against measured stopping distance", w, h);
    let top = f.held_out.iter().map(|x| x.dist).fold(0.0, f64::max) * 1.6e3;
    let ax = Axes { px: (60.0, 30.0, w - 90.0, h - 80.0), x: (0.0, top.max(1e-3)), y: (0.0, top.max(1e-3)) };
    ax.draw(&mut s, "measured distance, mm (rad or m ×1000)", "predicted, mm", 1.0);
    s.line((ax.sx(0.0), ax.sy(0.0)), (ax.sx(top), ax.sy(top)), "#333", 1.0, true);
    let r = f.constant_react_s;
    let (cr, ca) = (m.reaction_time_s, m.max_decel[j]);
    let a = f.constant_decel;
    // At most about 1500 stops drawn (evenly through them), so that the
    // page stays light; the scores in the table count every one.
    let every = f.held_out.len().div_ceil(1500).max(1);
    for x in f.held_out.iter().step_by(every) {
        let v = x.w.abs();
        let d = x.dist * 1e3;
        s.circle((ax.sx(d), ax.sy((v * cr + v * v / (2.0 * ca)) * 1e3)), 1.5, SERIES[7], 0.4, None);
        s.circle((ax.sx(d), ax.sy((v * r + v * v / (2.0 * a)) * 1e3)), 1.5, SERIES[1], 0.5, None);
        let p = f.model.bound(x.w, x.q);
        let colour = if p >= x.dist { SERIES[0] } else { STOP };
        s.circle((ax.sx(d), ax.sy(p * 1e3)), 1.8, colour, 0.8, None);
    }
    s.text(70.0, 44.0, 12.0, "start", "learned (blue; red: short)");
    s.text(70.0, 58.0, 12.0, "start", "best constant deceleration (orange)");
    s.text(70.0, 72.0, 12.0, "start", "configured (grey)");
    s.finish()
}

/// Distance over speed, with the bound.
fn over_speed(f: &JointFit) -> String {
    let (w, h) = (440.0, 400.0);
    let mut s = Svg::new("stopping distance over speed", w, h);
    let (lo, hi) = f.summary.speed_range;
    let all = f.train.iter().chain(&f.held_out);
    let top = all.clone().map(|x| x.dist).fold(0.0, f64::max) * 1.2e3;
    let ax = Axes { px: (60.0, 30.0, w - 90.0, h - 80.0), x: (0.0, hi * 1.05), y: (0.0, top.max(1e-3)) };
    ax.draw(&mut s, "speed at the command (rad/s or m/s)", "distance, mm", 1.0);
    let every = (f.train.len() + f.held_out.len()).div_ceil(2000).max(1);
    for x in all.step_by(every) {
        s.circle((ax.sx(x.w.abs()), ax.sy(x.dist * 1e3)), 1.3, SERIES[2], 0.35, None);
    }
    let q = 0.5 * (f.summary.position_range.0 + f.summary.position_range.1);
    for (dir, colour) in [(1.0, SERIES[0]), (-1.0, SERIES[3])] {
        let pts: Vec<(f64, f64)> = (0..=64)
            .map(|k| {
                let v = lo + (hi - lo) * k as f64 / 64.0;
                (ax.sx(v), ax.sy(f.model.bound(dir * v, q) * 1e3))
            })
            .collect();
        s.polyline(&pts, colour, 1.5);
    }
    s.text(70.0, 44.0, 12.0, "start", &format!("bound at q = {q:.2}, moving + (blue) and − (purple)"));
    s.finish()
}
