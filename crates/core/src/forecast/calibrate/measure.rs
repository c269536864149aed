//! Recorded stops measured from joint positions alone: per stop command
//! and joint, the velocity and position at the command (a line through
//! the states just before it) and the distance and time to rest.
//!
//! Each joint in a stop stands on its own: one that is not at rest before
//! the release is left out of that stop, the others kept. Every stop and
//! every joint in it is accounted for in a [`StopTally`].
//!
//! Rest is where a joint's positions, over [`REST_S`] (and at least four
//! states), lie on a line within their noise band whose slope is below
//! [`DRIFT_SPEED`]: a joint that creeps under gravity once the brake
//! holds is at rest, a joint still braking is not (its positions bend away
//! from any line). The noise band is eight times the scatter of the states
//! before the command about their line.

use super::StopSample;

/// Window before the command the speed and position are fitted over, at
/// least, s; longer where the states come less often
/// ([`before_window_s`]).
pub const BEFORE_S: f64 = 0.02;
/// The longest that window grows to, s: states sparser than
/// [`MIN_BEFORE`] in it are too sparse to measure a stop by.
pub const MAX_BEFORE_S: f64 = 0.1;
/// Joint states needed in that window.
pub const MIN_BEFORE: usize = 5;
/// A joint is at rest once it stays on a slow line this long, s.
pub const REST_S: f64 = 0.03;
/// A joint slower than this at the command is not stopping (rad/s or m/s).
pub const MIN_SPEED: f64 = 0.01;
/// A joint at rest may still creep this fast (a brake slipping under
/// gravity, a controller settling), rad/s or m/s.
pub const DRIFT_SPEED: f64 = 0.5 * MIN_SPEED;
/// A joint still moving this long after the command never came to rest, s.
pub const MAX_STOP_S: f64 = 5.0;

/// The window before the command for joint states `period_s` apart (their
/// median spacing): [`BEFORE_S`], or long enough to hold one state more
/// than [`MIN_BEFORE`], up to [`MAX_BEFORE_S`].
pub fn before_window_s(period_s: f64) -> f64 {
    if period_s.is_finite() { (period_s * (MIN_BEFORE + 1) as f64).clamp(BEFORE_S, MAX_BEFORE_S) } else { BEFORE_S }
}

/// What became of one joint in the stops measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JointTally {
    /// Stops with enough joint states before the command to measure it.
    pub seen: usize,
    /// Of those, stops with this joint moving at the command (faster than
    /// [`MIN_SPEED`] and its noise allows telling).
    pub moving: usize,
    /// Of those, measured: a sample.
    pub used: usize,
    /// Released (or commanded again) before it came to rest.
    pub released: usize,
    /// The recording ended before it came to rest.
    pub ended: usize,
    /// Still moving [`MAX_STOP_S`] after the command.
    pub never_at_rest: usize,
    /// At rest no farther along its motion than at the command.
    pub no_travel: usize,
}

impl JointTally {
    /// Stops with this joint moving that gave no sample.
    pub fn dropped(&self) -> usize {
        self.released + self.ended + self.never_at_rest + self.no_travel
    }

    fn add(&mut self, o: &JointTally) {
        self.seen += o.seen;
        self.moving += o.moving;
        self.used += o.used;
        self.released += o.released;
        self.ended += o.ended;
        self.never_at_rest += o.never_at_rest;
        self.no_travel += o.no_travel;
    }
}

/// Every stop accounted for: `found = too_few_before + standing + used +
/// unmeasured`, and per joint `moving = used + dropped`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StopTally {
    /// Stop commands found.
    pub found: usize,
    /// Dropped whole: fewer than [`MIN_BEFORE`] joint states in the
    /// window before the command.
    pub too_few_before: usize,
    /// No joint moving at the command (the robot already stood).
    pub standing: usize,
    /// At least one joint measured.
    pub used: usize,
    /// Joints moving, none measured (the reasons are per joint).
    pub unmeasured: usize,
    /// Per joint (`dof` order).
    pub joints: Vec<JointTally>,
}

impl StopTally {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &StopTally) {
        self.found += o.found;
        self.too_few_before += o.too_few_before;
        self.standing += o.standing;
        self.used += o.used;
        self.unmeasured += o.unmeasured;
        if self.joints.len() < o.joints.len() {
            self.joints.resize(o.joints.len(), JointTally::default());
        }
        for (a, b) in self.joints.iter_mut().zip(&o.joints) {
            a.add(b);
        }
    }
}

/// Why a moving joint gave no sample.
enum Rest {
    Released,
    Ended,
    Never,
}

/// Measures every stop: `t` the joint-state stamps (ascending), `q` their
/// positions flat (`dof` per state), `commands` each stop's instant and
/// the instant it was released (∞ if never), `before_s` the window before
/// the command ([`before_window_s`]). Samples go to `out`.
pub fn measure_stops(
    t: &[f64],
    q: &[f64],
    dof: usize,
    commands: &[(f64, f64)],
    before_s: f64,
    out: &mut Vec<StopSample>,
) -> StopTally {
    let mut tally =
        StopTally { found: commands.len(), joints: vec![JointTally::default(); dof], ..StopTally::default() };
    let n = t.len().min(q.len() / dof.max(1));
    let series = Series { t: &t[..n], q, dof };
    for (stop, &(tc, release)) in commands.iter().enumerate() {
        let ic = series.t.partition_point(|&x| x <= tc);
        let i0 = series.t[..ic].partition_point(|&x| x < tc - before_s);
        if ic - i0 < MIN_BEFORE {
            tally.too_few_before += 1;
            continue;
        }
        let (mut moving, mut used) = (0, 0);
        for j in 0..dof {
            let count = &mut tally.joints[j];
            count.seen += 1;
            let (w, q0, sigma) = line_fit(&series.t[i0..ic], |i| q[(i0 + i) * dof + j], tc);
            if w.abs() < MIN_SPEED.max(10.0 * sigma / (series.t[ic - 1] - series.t[i0]).max(BEFORE_S)) {
                continue;
            }
            moving += 1;
            count.moving += 1;
            let band = (8.0 * sigma).max(1e-7);
            let until = Until { release, give_up: tc + MAX_STOP_S };
            match series.rest_after(j, ic, band, until) {
                Ok((tr, qr)) => {
                    let dist = (qr - q0) * w.signum();
                    if dist > 0.0 {
                        out.push(StopSample { stop, joint: j, w, q: q0, dist, time_s: tr - tc });
                        count.used += 1;
                        used += 1;
                    } else {
                        count.no_travel += 1;
                    }
                }
                Err(Rest::Released) => count.released += 1,
                Err(Rest::Ended) => count.ended += 1,
                Err(Rest::Never) => count.never_at_rest += 1,
            }
        }
        match (moving, used) {
            (0, _) => tally.standing += 1,
            (_, 0) => tally.unmeasured += 1,
            _ => tally.used += 1,
        }
    }
    tally
}

/// The joint states being measured.
struct Series<'a> {
    t: &'a [f64],
    q: &'a [f64],
    dof: usize,
}

/// When the search for rest stops: at the release, or [`MAX_STOP_S`]
/// after the command.
#[derive(Clone, Copy)]
struct Until {
    release: f64,
    give_up: f64,
}

impl Series<'_> {
    /// The first state from `from` on where joint `j` is at rest (the
    /// module text): its stamp and the rest line's position there.
    fn rest_after(&self, j: usize, from: usize, band: f64, until: Until) -> Result<(f64, f64), Rest> {
        let (t, n) = (self.t, self.t.len());
        for i in from..n {
            if t[i] + REST_S > until.release {
                return Err(Rest::Released);
            }
            if t[i] > until.give_up {
                return Err(Rest::Never);
            }
            let mut end = i;
            while end < n && (t[end] <= t[i] + REST_S || end - i < 4) {
                end += 1;
            }
            if end >= n {
                return Err(Rest::Ended);
            }
            let y = |k: usize| self.q[(i + k) * self.dof + j];
            let (slope, at, _) = line_fit(&t[i..end], y, t[i]);
            if slope.abs() > DRIFT_SPEED {
                continue;
            }
            let off = |k: usize| y(k) - at - slope * (t[i + k] - t[i]);
            let (lo, hi) =
                (0..end - i).map(off).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
            if hi - lo <= band {
                return Ok((t[i], at));
            }
        }
        Err(Rest::Ended)
    }
}

/// Least-squares line through `(t[i], y(i))`: its slope, its value at
/// `at`, and the residuals' standard deviation.
fn line_fit(t: &[f64], y: impl Fn(usize) -> f64, at: f64) -> (f64, f64, f64) {
    let n = t.len() as f64;
    let tm = t.iter().sum::<f64>() / n;
    let ym = (0..t.len()).map(&y).sum::<f64>() / n;
    let (mut stt, mut sty) = (0.0, 0.0);
    for (i, &ti) in t.iter().enumerate() {
        stt += (ti - tm) * (ti - tm);
        sty += (ti - tm) * (y(i) - ym);
    }
    let slope = if stt > 0.0 { sty / stt } else { 0.0 };
    let ss: f64 = t.iter().enumerate().map(|(i, &ti)| (y(i) - ym - slope * (ti - tm)).powi(2)).sum();
    let sigma = (ss / (n - 2.0).max(1.0)).sqrt();
    (slope, ym + slope * (at - tm), sigma)
}
