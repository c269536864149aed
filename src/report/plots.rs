//! The report's plots: clearance with the robots' intervals under it, the
//! grants timeline, the cycle-time histogram.

use super::svg::{self, Axes, Svg};
use super::{Trace, at};
use std::fmt::Write;
use workcell_guard_ros::bag::{Entry, Msg};
use workcell_guard_ros::msg::{ManipulatorGrant, PlatenGrant};
use workcell_guard_ros::topics::Role;

/// A robot's intervals of one kind: (from, to), s.
type Intervals = Vec<(f64, f64)>;

/// Per robot: stopped, held, slowed intervals.
pub struct Lanes {
    stop: Vec<Intervals>,
    hold: Vec<Intervals>,
    slow: Vec<Intervals>,
    /// Held back by the arbitration: its grant holds it, sends it back, or
    /// names a robot it yields to.
    held_back: Vec<Intervals>,
    /// Whether the robot's speed scaling was published at all.
    speed_seen: Vec<bool>,
}

/// Opens and closes intervals as a flag changes.
fn track(iv: &mut Intervals, open: &mut Option<f64>, on: bool, t: f64) {
    match (*open, on) {
        (None, true) => *open = Some(t),
        (Some(s), false) => {
            iv.push((s, t));
            *open = None;
        }
        _ => {}
    }
}

/// The robots' stop, hold and slow-down intervals from the decisions.
pub fn lanes(out: &[Entry], t0: u64, trace: &Trace) -> Lanes {
    let n = trace.arms.len();
    let mut l = Lanes {
        stop: vec![Vec::new(); n],
        hold: vec![Vec::new(); n],
        slow: vec![Vec::new(); n],
        held_back: vec![Vec::new(); n],
        speed_seen: vec![false; n],
    };
    let mut open = vec![[None::<f64>; 4]; n];
    for e in out {
        let t = at(e, t0);
        match (&e.role, &e.msg) {
            (Role::Stop(r), Msg::Bool(b)) => track(&mut l.stop[*r], &mut open[*r][0], b.data, t),
            (Role::ArmGrant(r), Msg::ArmGrant(g)) => {
                track(&mut l.hold[*r], &mut open[*r][1], g.state == ManipulatorGrant::HOLD, t);
                let back = matches!(g.state, ManipulatorGrant::HOLD | ManipulatorGrant::BACK_AWAY);
                track(&mut l.held_back[*r], &mut open[*r][3], back || !g.held_by.is_empty(), t)
            }
            (Role::Speed(r, _), m) if m.scaling().is_some() => {
                l.speed_seen[*r] = true;
                track(&mut l.slow[*r], &mut open[*r][2], m.scaling().is_some_and(|f| f < 0.999), t)
            }
            _ => {}
        }
    }
    for (r, o) in open.iter().enumerate() {
        for (k, s) in o.iter().enumerate() {
            if let Some(s) = s {
                [&mut l.stop, &mut l.hold, &mut l.slow, &mut l.held_back][k][r].push((*s, trace.span_s));
            }
        }
    }
    l
}

/// Per robot, the share of the recorded time at full speed (speed scaling
/// 1), slowed (below 1, not stopped), held on a grant, and stopped for
/// anything else: a table.
pub fn speed_shares(trace: &Trace, lanes: &Lanes) -> String {
    let span = trace.span_s.max(1e-9);
    let total = |iv: &Intervals| iv.iter().map(|(a, b)| (b - a).max(0.0)).sum::<f64>();
    let mut rows = String::new();
    for (r, name) in trace.arms.iter().enumerate() {
        // A stop (and a hold, which raises the stop flag) publishes 0: the
        // slowed intervals hold the stopped ones.
        let (slow, stop, hold) = (total(&lanes.slow[r]), total(&lanes.stop[r]), total(&lanes.hold[r]));
        let pct = |x: f64| 100.0 * (x / span).clamp(0.0, 1.0);
        if !lanes.speed_seen[r] {
            let _ =
                write!(rows, "<tr><td>{}</td><td colspan=\"8\">no speed scaling published</td></tr>", svg::esc(name));
            continue;
        }
        let u = moving_shares(trace, lanes, r);
        let share = |full: f64, of: f64| if of > 0.0 { format!("{:.1} %", 100.0 * full / of) } else { "–".into() };
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{:.1} %</td><td>{:.1} %</td><td>{:.1} %</td><td>{:.1} %</td>\
             <td>{:.1} s</td><td>{}</td><td>{:.1} s</td><td>{}</td></tr>",
            svg::esc(name),
            pct(span - slow),
            pct(slow - stop),
            pct(hold),
            pct(stop - hold),
            u.moving_s,
            share(u.moving_full_s, u.moving_s),
            u.free_s,
            share(u.free_full_s, u.free_s)
        );
    }
    format!(
        "<table><tr><th>robot</th><th>full speed</th><th>slowed</th><th>held on a grant</th><th>stopped</th>\
         <th>moving</th><th>full speed while moving</th><th>moving with nothing in its way</th>\
         <th>full speed then</th></tr>{rows}</table>"
    )
}

/// A robot's moving time, and of it the time with nothing in its way, each
/// with its share at full speed, s.
#[derive(Debug, Default, PartialEq)]
pub struct Moving {
    pub moving_s: f64,
    pub moving_full_s: f64,
    pub free_s: f64,
    pub free_full_s: f64,
}

/// Robot `r`'s [`Moving`] from the trace's samples: each sample that finds
/// it moved counts the time since the last sample (at most
/// 5 × [`super::SAMPLE_S`]: a gap in the recording is not moving time), at
/// full speed when no slowed interval covers it, with nothing in its way
/// when nothing approached it and no held-back interval covers it.
pub fn moving_shares(trace: &Trace, lanes: &Lanes, r: usize) -> Moving {
    let within = |iv: &Intervals, t: f64| iv.iter().any(|&(a, b)| a <= t && t < b);
    let mut m = Moving::default();
    let (Some(moving), Some(near)) = (trace.moving.get(r), trace.approached.get(r)) else { return m };
    for k in 1..trace.t.len().min(moving.len()).min(near.len()) {
        if !moving[k] {
            continue;
        }
        let (t, dt) = (trace.t[k], (trace.t[k] - trace.t[k - 1]).clamp(0.0, 5.0 * super::SAMPLE_S));
        let full = !within(&lanes.slow[r], t);
        let free = !near[k] && !within(&lanes.held_back[r], t);
        m.moving_s += dt;
        m.moving_full_s += if full { dt } else { 0.0 };
        m.free_s += if free { dt } else { 0.0 };
        m.free_full_s += if free && full { dt } else { 0.0 };
    }
    m
}

/// Clearance over time, the robots' lanes under it.
pub fn clearance(trace: &Trace, lanes: &Lanes, margin_m: f64) -> String {
    let n = trace.arms.len();
    let (w, plot_h, lane_h) = (1100.0, 300.0, 16.0);
    let h = 40.0 + plot_h + 50.0 + lane_h * n as f64 + 40.0;
    let mut s = Svg::new("clearance", w, h);
    let ax = Axes { px: (60.0, 30.0, w - 260.0, plot_h), x: (0.0, trace.span_s.max(1e-3)), y: (-0.02, 0.3) };
    ax.draw(&mut s, "time, s", "clearance, mm", 1000.0);
    s.line((ax.sx(0.0), ax.sy(margin_m)), (ax.sx(ax.x.1), ax.sy(margin_m)), svg::STOP, 1.0, true);
    let mut legend = Vec::new();
    let mut k = 0;
    for (a, b, v) in &trace.pairs {
        legend.push((format!("{} – {}", trace.arms[*a], trace.arms[*b]), svg::SERIES[k % 8]));
        series(&mut s, &ax, &trace.t, v, svg::SERIES[k % 8]);
        k += 1;
    }
    for (r, v) in trace.cell.iter().enumerate() {
        legend.push((format!("{} – cell", trace.arms[r]), svg::SERIES[k % 8]));
        series(&mut s, &ax, &trace.t, v, svg::SERIES[k % 8]);
        k += 1;
    }
    for (i, (name, c)) in legend.iter().enumerate() {
        let y = 40.0 + 18.0 * i as f64;
        s.line((w - 190.0, y), (w - 170.0, y), c, 3.0, false);
        s.text(w - 165.0, y + 4.0, 12.0, "start", name);
    }
    s.text(w - 190.0, 40.0 + 18.0 * legend.len() as f64 + 4.0, 11.0, "start", "dashed red: the clearance margin");
    let top = 30.0 + plot_h + 45.0;
    for r in 0..n {
        let y = top + lane_h * r as f64;
        s.rect((ax.px.0, y, ax.px.2, lane_h - 2.0), "#f3f3f3", 1.0, None);
        s.text(ax.px.0 - 6.0, y + 12.0, 11.0, "end", &trace.arms[r]);
        for (iv, colour, what) in [
            (&lanes.slow[r], svg::SLOW, "slowed"),
            (&lanes.hold[r], svg::HOLD, "held"),
            (&lanes.stop[r], svg::STOP, "stopped"),
        ] {
            for &(a, b) in iv {
                let title = format!("{} {what} {a:.3}–{b:.3} s", trace.arms[r]);
                s.rect((ax.sx(a), y, ax.sx(b) - ax.sx(a), lane_h - 2.0), colour, 0.85, Some(&title));
            }
        }
    }
    s.finish()
}

/// A line through (t, v), broken where v is not finite or the robot had no pose.
fn series(s: &mut Svg, ax: &Axes, t: &[f64], v: &[f64], colour: &str) {
    let pts: Vec<(f64, f64)> =
        t.iter().zip(v).map(|(&t, &v)| (ax.sx(t), ax.sy(if v.is_finite() { v } else { ax.y.1 }))).collect();
    s.polyline(&pts, colour, 1.5);
}

/// The grants timeline: one lane per robot, one per platen unit.
pub fn grants(out: &[Entry], t0: u64, trace: &Trace) -> String {
    let (n, m) = (trace.arms.len(), trace.units.len());
    let lane = 26.0;
    let w = 1100.0;
    let h = 30.0 + lane * (n + m) as f64 + 50.0;
    let mut s = Svg::new("grants", w, h);
    let ax =
        Axes { px: (110.0, 20.0, w - 140.0, lane * (n + m) as f64), x: (0.0, trace.span_s.max(1e-3)), y: (0.0, 1.0) };
    let mut last: Vec<Option<(f64, u8, String)>> = vec![None; n];
    let colour = |st: u8| match st {
        ManipulatorGrant::PROCEED => svg::PROCEED,
        ManipulatorGrant::HOLD => svg::HOLD,
        ManipulatorGrant::BACK_AWAY => svg::BACK,
        ManipulatorGrant::DONE => "#bbbbbb",
        _ => "#e6e6e6",
    };
    let close = |s: &mut Svg, r: usize, (from, st, why): (f64, u8, String), to: f64| {
        let y = 20.0 + lane * r as f64;
        let title = format!("{} {} {from:.3}–{to:.3} s{why}", trace.arms[r], crate::replay::arm_state(st));
        s.rect((ax.sx(from), y + 3.0, ax.sx(to) - ax.sx(from), lane - 6.0), colour(st), 0.9, Some(&title));
    };
    for e in out {
        let t = at(e, t0);
        match (&e.role, &e.msg) {
            (Role::ArmGrant(r), Msg::ArmGrant(g)) => {
                let why =
                    if g.held_by.is_empty() { String::new() } else { format!(": held by {}: {}", g.held_by, g.reason) };
                if last[*r].as_ref().is_some_and(|(_, st, w)| *st == g.state && *w == why) {
                    continue;
                }
                if let Some(prev) = last[*r].take() {
                    close(&mut s, *r, prev, t);
                }
                last[*r] = Some((t, g.state, why));
            }
            (Role::PlatenGrant(u), Msg::PlatenGrant(g)) => {
                let y = 20.0 + lane * (n + *u) as f64 + lane / 2.0;
                let c = match g.result {
                    PlatenGrant::GRANTED => svg::PROCEED,
                    PlatenGrant::PARTIAL => svg::HOLD,
                    PlatenGrant::DENIED => svg::STOP,
                    _ => "#888888",
                };
                let mut title = String::new();
                let _ = write!(
                    title,
                    "{} request {} {} at {t:.3} s {}",
                    trace.units[*u],
                    g.request_id,
                    crate::replay::platen_result(g.result),
                    g.reason
                );
                s.rect((ax.sx(t) - 2.0, y - 8.0, 4.0, 16.0), c, 1.0, Some(&title));
            }
            _ => {}
        }
    }
    for (r, l) in last.into_iter().enumerate() {
        if let Some(prev) = l {
            close(&mut s, r, prev, trace.span_s);
        }
    }
    for (i, name) in trace.arms.iter().chain(&trace.units).enumerate() {
        s.text(104.0, 20.0 + lane * i as f64 + lane / 2.0 + 4.0, 12.0, "end", name);
    }
    let base = 20.0 + lane * (n + m) as f64;
    s.line((ax.px.0, base), (ax.px.0 + ax.px.2, base), "#333", 1.0, false);
    for k in 0..=5 {
        let x = ax.x.1 * k as f64 / 5.0;
        s.text(ax.sx(x), base + 16.0, 11.0, "middle", &format!("{x:.1}"));
    }
    s.text(ax.px.0 + ax.px.2 / 2.0, base + 34.0, 12.0, "middle", "time, s");
    s.finish()
}

/// The `q` quantile of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// A histogram of cycle times (µs), p50 and p99 marked.
pub fn histogram(took_us: &[f64]) -> String {
    let mut v: Vec<f64> = took_us.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let (p50, p99) = (quantile(&v, 0.5), quantile(&v, 0.99));
    let hi = (p99 * 1.5).max(1.0);
    let bins = 60;
    let mut count = vec![0usize; bins];
    for x in &v {
        count[((x / hi * bins as f64) as usize).min(bins - 1)] += 1;
    }
    let most = count.iter().copied().max().unwrap_or(0).max(1);
    let (w, h) = (700.0, 300.0);
    let mut s = Svg::new("cycle time", w, h);
    let ax = Axes { px: (60.0, 30.0, w - 90.0, h - 80.0), x: (0.0, hi), y: (0.0, most as f64) };
    ax.draw(&mut s, "cycle time, µs (last bin: slower)", "cycles", 1.0);
    for (b, &c) in count.iter().enumerate() {
        let (x0, x1) = (ax.sx(hi * b as f64 / bins as f64), ax.sx(hi * (b + 1) as f64 / bins as f64));
        s.rect((x0, ax.sy(c as f64), x1 - x0 - 1.0, ax.sy(0.0) - ax.sy(c as f64)), svg::SERIES[0], 0.8, None);
    }
    for (q, name) in [(p50, "p50"), (p99, "p99")] {
        s.line((ax.sx(q), ax.px.1), (ax.sx(q), ax.px.1 + ax.px.3), svg::STOP, 1.5, true);
        s.text(ax.sx(q) + 3.0, ax.px.1 + 12.0, 12.0, "start", &format!("{name} {q:.1} µs"));
    }
    s.text(w - 30.0, 20.0, 12.0, "end", &format!("{} cycles", v.len()));
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_time_counts_samples_that_moved_split_by_what_was_in_the_way() {
        // Samples every 20 ms over 1 s; the robot moves from 0.2 s on,
        // something approaches it from 0.6 s to 0.7 s, it is slowed from
        // 0.4 s to 0.5 s and held back by a grant from 0.8 s on.
        let t: Vec<f64> = (0..=50).map(|k| k as f64 * 0.02).collect();
        let trace = Trace {
            arms: vec!["a".into()],
            moving: vec![t.iter().map(|&t| t > 0.2 - 1e-9).collect()],
            approached: vec![t.iter().map(|&t| (0.6 - 1e-9..0.7 - 1e-9).contains(&t)).collect()],
            t,
            span_s: 1.0,
            ..Trace::default()
        };
        let lanes = Lanes {
            stop: vec![Vec::new()],
            hold: vec![Vec::new()],
            slow: vec![vec![(0.4, 0.5)]],
            held_back: vec![vec![(0.8, 1.0)]],
            speed_seen: vec![true],
        };
        let m = moving_shares(&trace, &lanes, 0);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(m.moving_s, 0.82), "{m:?}");
        assert!(near(m.moving_full_s, 0.72), "{m:?}");
        // Moving, not approached (0.1 s) and not held back (0.2 s).
        assert!(near(m.free_s, 0.52), "{m:?}");
        assert!(near(m.free_full_s, 0.42), "{m:?}");
        // A robot the trace has no samples for moved for no time.
        assert_eq!(moving_shares(&trace, &lanes, 3), Moving::default());
    }
}
