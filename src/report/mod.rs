//! `report.html`: a run to look at, built from its recording by replaying
//! it through the guard ([`workcell_guard_ros::replay`]) and watching each
//! cycle. Self-contained: inline SVG and CSS, no script, no external
//! resource (its content security policy forbids loading any).
//!
//! Sections (each an anchor, `report.html#clearance` shows that one alone):
//! the summary, clearance over time per robot pair (the spheres' least
//! gap) and per robot to the cell (what the guard's check found along the
//! stopping path) with each robot's stop, hold and slow-down intervals
//! shaded under it; the grants timeline (who held whom); platen occupancy
//! snapshots; the cycle-time histogram with p50 and p99; a view of the cell
//! at each stop; the event table; the run's settings.

mod plots;
pub mod svg;
pub mod views;

use crate::replay::Loaded;
use std::fmt::Write;
use svg::esc;
use workcell_guard_core::model::PosedSpheres;
use workcell_guard_ros::bag::{Entry, Msg};
use workcell_guard_ros::node::GuardNode;
use workcell_guard_ros::replay::{self, Observed, Replayed};
use workcell_guard_ros::topics::Role;

/// Clearance samples are taken this often (recorded time), s.
const SAMPLE_S: f64 = 0.02;
/// At most this many cell views (at stops) and platen snapshots.
const MAX_VIEWS: usize = 6;

/// What a replay was watched for.
#[derive(Default)]
pub struct Trace {
    /// Robot names.
    pub arms: Vec<String>,
    /// Unit names.
    pub units: Vec<String>,
    /// Sample instants, s from the recording's start.
    pub t: Vec<f64>,
    /// Per robot pair (a, b): the least gap between their spheres, m.
    pub pairs: Vec<(usize, usize, Vec<f64>)>,
    /// Per robot: its least clearance to the cell along its stopping path
    /// as the guard's check found it, m (+∞ beyond the check's reach).
    pub cell: Vec<Vec<f64>>,
    /// Every cycle's time here, µs.
    pub took_us: Vec<f64>,
    /// Cell views: (instant, SVG).
    pub views: Vec<(f64, String)>,
    /// Platen snapshots: (instant, SVG).
    pub platen: Vec<(f64, String)>,
    /// Length of the recording, s.
    pub span_s: f64,
    /// Per robot, at each sample: whether it moved since the last one (a
    /// sphere's centre by more than [`MOVED_M`]).
    pub moving: Vec<Vec<bool>>,
    /// Per robot, at each sample: whether something approaches it, within
    /// the clearance margin plus `slow_down_m` (`zone_m`) and nearer than
    /// at the last sample: another robot's spheres, or the cell along its
    /// stopping path as the guard's check found it.
    pub approached: Vec<Vec<bool>>,
    /// The clearance margin plus the node's `slow_down_m`, m.
    pub zone_m: f64,
}

/// A robot whose spheres' centres moved no more than this between two
/// samples stood still, m (half a millimetre in 20 ms: 2.5 cm/s).
const MOVED_M: f32 = 5e-4;

/// Clearances closer than this to the last sample's are not approaching, m.
const APPROACH_EPS_M: f64 = 1e-4;

struct Watch {
    t0: u64,
    next_sample: f64,
    seen: usize,
    stops: Vec<bool>,
    posed: Vec<PosedSpheres>,
    /// The spheres at the last sample.
    before: Vec<PosedSpheres>,
    occupancy: views::Occupancy,
    last_platen: f64,
    grants: Vec<String>,
}

impl Watch {
    fn observe(&mut self, trace: &mut Trace, node: &mut GuardNode, o: &Observed<'_>) {
        let t = o.ns.saturating_sub(self.t0) as f64 * 1e-9;
        trace.took_us.push(o.took_s * 1e6);
        let mut platen_answer = false;
        for e in &o.out[self.seen..] {
            match (&e.role, &e.msg) {
                (Role::ArmGrant(r), Msg::ArmGrant(g)) => {
                    self.grants[*r] = format!(
                        "{}: {}{}",
                        trace.arms[*r],
                        crate::replay::arm_state(g.state),
                        if g.held_by.is_empty() { String::new() } else { format!(" (held by {})", g.held_by) }
                    );
                }
                (Role::PlatenGrant(_), _) => platen_answer = true,
                _ => {}
            }
        }
        self.seen = o.out.len();
        // A platen snapshot at an answer, whichever cycle it lands on (not
        // only on the clearance samples' cycles).
        if (platen_answer || trace.platen.is_empty())
            && trace.platen.len() < MAX_VIEWS
            && t - self.last_platen >= 1.0
            && let Some(svg) = views::platen_view(node, &format!("{t:.3} s"))
        {
            self.last_platen = t;
            trace.platen.push((t, svg));
        }
        let stopped: Vec<usize> = (0..self.stops.len()).filter(|&r| node.stops()[r].data && !self.stops[r]).collect();
        for (r, s) in self.stops.iter_mut().enumerate() {
            *s = node.stops()[r].data;
        }
        // A view at each stop; in a run with none by half way, one there,
        // so the report always shows the cell.
        let quiet = trace.views.is_empty() && t >= 0.5 * trace.span_s;
        let view = (!stopped.is_empty() || quiet) && trace.views.len() < MAX_VIEWS;
        if t < self.next_sample && !view {
            return;
        }
        for r in 0..self.posed.len() {
            match node.posed_spheres(r) {
                Some(p) => self.posed[r].clone_from(p),
                None => self.posed[r].x.clear(),
            }
        }
        let all_posed = self.posed.iter().all(|p| !p.x.is_empty());
        if all_posed && t >= self.next_sample {
            self.next_sample = t + SAMPLE_S;
            trace.t.push(t);
            for (a, b, v) in &mut trace.pairs {
                v.push(least_gap(&self.posed[*a], &self.posed[*b]));
            }
            for (r, v) in trace.cell.iter_mut().enumerate() {
                v.push(node.guard().clearances(r).map_or(f64::INFINITY, |c| f64::from(c.cell_m)));
            }
            self.usefulness(trace);
        }
        if view && all_posed {
            let who: Vec<&str> = stopped.iter().map(|&r| trace.arms[r].as_str()).collect();
            let title = if who.is_empty() {
                format!("{t:.3} s: no robot stopped so far")
            } else {
                format!("{:.3} s: {} stopped", t, who.join(", "))
            };
            let mut lines = self.grants.clone();
            for &r in &stopped {
                lines.push(format!("{}: {}", trace.arms[r], node.stop_cause(r)));
            }
            trace.views.push((t, views::cell_view(node, &self.posed, &self.occupancy, &title, &lines)));
        }
    }

    /// At a new sample: per robot, whether it moved since the last one and
    /// whether something approaches it ([`Trace::moving`],
    /// [`Trace::approached`]).
    fn usefulness(&mut self, trace: &mut Trace) {
        let k = trace.t.len() - 1;
        let zone = trace.zone_m;
        let closing = |v: &[f64]| k > 0 && v[k] < zone && v[k] < v[k - 1] - APPROACH_EPS_M;
        for r in 0..self.posed.len() {
            let (p, b) = (&self.posed[r], &self.before[r]);
            let moved = p.len() == b.len()
                && (0..p.len()).any(|i| {
                    (p.x[i] - b.x[i]).powi(2) + (p.y[i] - b.y[i]).powi(2) + (p.z[i] - b.z[i]).powi(2)
                        > MOVED_M * MOVED_M
                });
            trace.moving[r].push(moved);
            let by_robot = trace.pairs.iter().any(|(a, o, v)| (*a == r || *o == r) && closing(v));
            trace.approached[r].push(by_robot || closing(&trace.cell[r]));
            self.before[r].clone_from(p);
        }
    }
}

/// The least gap between two sets of spheres, m.
fn least_gap(a: &PosedSpheres, b: &PosedSpheres) -> f64 {
    let mut best = f32::INFINITY;
    for i in 0..a.len() {
        for j in 0..b.len() {
            let d = ((a.x[i] - b.x[j]).powi(2) + (a.y[i] - b.y[j]).powi(2) + (a.z[i] - b.z[j]).powi(2)).sqrt();
            best = best.min(d - a.r[i] - b.r[j]);
        }
    }
    f64::from(best)
}

/// Replays `l` and watches it: the replay and the trace for a report.
pub fn replay_traced(l: &mut Loaded) -> (Replayed, Trace) {
    let cell = l.node.cell();
    let arms: Vec<String> = cell.manipulators.iter().map(|m| m.name.clone()).collect();
    let units: Vec<String> = cell.platen.iter().flat_map(|p| &p.units).map(|u| u.name.clone()).collect();
    let n = arms.len();
    let t0 = l.rec.entries.first().map_or(0, |e| e.log_time_ns);
    let span_s = l.rec.entries.last().map_or(0, |e| e.log_time_ns.saturating_sub(t0)) as f64 * 1e-9;
    let mut trace = Trace {
        pairs: (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b, Vec::new()))).collect(),
        cell: vec![Vec::new(); n],
        arms,
        units,
        span_s,
        moving: vec![Vec::new(); n],
        approached: vec![Vec::new(); n],
        zone_m: cell.margins.clearance_m + l.node.params().slow_down_m,
        ..Trace::default()
    };
    let mut watch = Watch {
        t0,
        next_sample: 0.0,
        seen: 0,
        stops: vec![false; n],
        posed: (0..n).map(|_| PosedSpheres::default()).collect(),
        before: (0..n).map(|_| PosedSpheres::default()).collect(),
        occupancy: views::Occupancy::new(&l.node),
        last_platen: f64::NEG_INFINITY,
        grants: vec![String::new(); n],
    };
    let r = replay::replay_observed(&mut l.node, &l.rec, &l.topics, l.rate, &l.rebuild, &mut |node, o| {
        watch.observe(&mut trace, node, o)
    });
    (r, trace)
}

/// The report of replay `r` of `l`, watched as `trace`; `title` heads it,
/// `verdict` says how the replay compared, `settings` are shown beside
/// the recording's own.
// long: the report's sections in page order
pub fn html(
    l: &Loaded,
    r: &Replayed,
    trace: &Trace,
    title: &str,
    verdict: &str,
    settings: &[(String, String)],
) -> String {
    let t0 = l.rec.entries.first().map_or(0, |e| e.log_time_ns);
    let mut h = String::new();
    h.push_str(concat!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
        "<meta name=\"viewport\" content=\"width=device-width\">"
    ));
    let _ = write!(h, "<title>{}</title><style>{}</style></head><body>", esc(title), CSS);
    let _ = write!(h, "<section id=\"summary\"><h1>{}</h1><p>{}</p>", esc(title), esc(verdict));
    let _ = write!(
        h,
        "<p>{:.1} s recorded · {} inputs · {} cycles · {} decisions · {} cell views · {} platen snapshots</p></section>",
        trace.span_s,
        r.inputs,
        r.cycles,
        r.out.len(),
        trace.views.len(),
        trace.platen.len()
    );
    let section = |h: &mut String, id: &str, head: &str, note: &str, body: &str| {
        let _ = write!(h, "<section id=\"{id}\"><h2>{head}</h2><p class=\"note\">{}</p>{body}</section>", esc(note));
    };
    let lanes = plots::lanes(&r.out, t0, trace);
    section(
        &mut h,
        "clearance",
        "Clearance over time",
        "Robot pairs: the least gap between their spheres. Robot to cell: the least clearance the guard's check found \
         along the stopping path (top edge: beyond the check's reach). Under the plot, per robot: stopped (red), held on \
         a grant (amber), slowed (yellow).",
        &plots::clearance(trace, &lanes, l.node.cell().margins.clearance_m),
    );
    section(
        &mut h,
        "speed",
        "Speed",
        "Per robot, the share of the recorded time at full speed (speed scaling 1), slowed, held on its grant and \
         stopped, from the speed scaling, grants and stops the node published. Then the time it moved (its spheres \
         posed from its joint states, sampled every 20 ms) and the share of it at full speed; and the same for the \
         time it moved with nothing in its way: no other robot's spheres and not the cell (along its stopping path) \
         approaching within the clearance margin plus slow_down_m, and no robot above holding it back (its grant \
         not hold or back away, and naming no robot it yields to).",
        &plots::speed_shares(trace, &lanes),
    );
    section(
        &mut h,
        "grants",
        "Grants timeline",
        "Per robot, its grant's state (proceed green, hold amber, back away purple, done grey); hover for who held it. \
         Per platen unit, each answer (granted green, partial amber, denied red, refused grey).",
        &plots::grants(&r.out, t0, trace),
    );
    let platen: String = trace.platen.iter().map(|(_, s)| format!("<figure>{s}</figure>")).collect();
    section(
        &mut h,
        "platen",
        "Platen occupancy",
        "Allocations (light), footprints and cords, at the answers.",
        &platen,
    );
    section(
        &mut h,
        "cycle",
        "Cycle time",
        "The guard's cycle as replayed on this machine (not the live node's).",
        &plots::histogram(&trace.took_us),
    );
    let cells: String = trace.views.iter().map(|(_, s)| format!("<figure>{s}</figure>")).collect();
    let none = if cells.is_empty() { "<p>No stops.</p>" } else { "" };
    section(
        &mut h,
        "views",
        "The cell at each stop",
        "Spheres coloured by clearance (red within the margin, amber within the slow-down distance); dashed: each \
         sphere's reach before its robot stops.",
        &format!("{cells}{none}"),
    );
    let mut rows = String::new();
    for (t, what, topic) in crate::replay::decision_events(&r.out, l.node.cell()) {
        let _ = write!(
            rows,
            "<tr><td>{t:.3}</td><td>{}</td><td>{}</td></tr>",
            esc(&what),
            esc(l.topics.name(topic).unwrap_or(""))
        );
    }
    section(
        &mut h,
        "events",
        "Events",
        "Each change of a decision, at its time from the recording's start.",
        &format!("<table><tr><th>s</th><th>decision</th><th>topic</th></tr>{rows}</table>"),
    );
    let mut set = String::new();
    for (k, v) in settings {
        let _ = write!(set, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    }
    for (name, m) in &l.rec.metadata {
        for (k, v) in m {
            let _ = write!(set, "<tr><td>{}: {}</td><td>{}</td></tr>", esc(name), esc(k), esc(v));
        }
    }
    section(&mut h, "settings", "Settings", "The run's and the recording's.", &format!("<table>{set}</table>"));
    h.push_str("</body></html>\n");
    h
}

pub(crate) const CSS: &str = "body{font-family:sans-serif;margin:1.5em;max-width:1200px;color:#222}\
section{margin-bottom:2em}h2{border-bottom:1px solid #ccc}.note{color:#555;font-size:90%}\
figure{display:inline-block;margin:0.5em}table{border-collapse:collapse;font-size:90%}\
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}\
body:has(section:target) section:not(:target){display:none}";

/// Writes the report of `l` to `out` (replaying it); returns the replay.
pub fn write(
    l: &mut Loaded,
    out: &std::path::Path,
    title: &str,
    settings: &[(String, String)],
) -> Result<Replayed, crate::AnyError> {
    let (r, trace) = replay_traced(l);
    let verdict = crate::replay::verdict(&r);
    std::fs::write(out, html(l, &r, &trace, title, &verdict, settings))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(r)
}

/// The decision entries' times, s from `t0` (ns).
pub(crate) fn at(e: &Entry, t0: u64) -> f64 {
    e.log_time_ns.saturating_sub(t0) as f64 * 1e-9
}
