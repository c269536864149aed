//! The self check: a robot's sampled spheres against its own links that
//! the collision matrix keeps; a pair within the margin is refined by the
//! links' exact shapes ([`super::exact_pairs`]).

use super::exact_pairs::{At, ExactFrames};
use super::*;

with_avx2!(pub(super) stage fn check_self = check_self_avx2_fma / check_self_impl(
    arms: &mut [Arm],
    checked: Checked<'_>,
    exact: &mut ExactFrames,
    lim: Limits,
    part: Part
));

/// Every arm `part` covers: its sampled spheres against its own links the
/// matrix and the allowed contacts leave checked, noted in its track.
#[inline(always)]
fn check_self_impl(arms: &mut [Arm], checked: Checked<'_>, exact: &mut ExactFrames, lim: Limits, part: Part) {
    exact.forget();
    for (ri, a) in arms.iter_mut().enumerate() {
        if a.scratch.forecast.n_cfg == 0 || a.model.self_pairs.is_empty() || !part.arm(ri) {
            continue;
        }
        self_arm(a, ri, checked, exact, lim);
    }
}

/// Robot `ri`'s sampled spheres against its own links, batch by batch:
/// pairs whose boxes come within reach, then their spheres near the other
/// link's box; within the margin, the links' exact shapes decide too.
#[inline(always)]
// long: the lane loops of one batch share its boxes and candidates; split, they would pass a dozen slices
fn self_arm(a: &mut Arm, ri: usize, checked: Checked<'_>, exact: &mut ExactFrames, lim: Limits) {
    let Checked { matrix, allowed } = checked;
    let (margin, release) = (lim.margin, lim.release);
    let nl = matrix.total_links();
    let e2 = 2.0 * a.scratch.posed.inflate;
    // Where its own links may slow it (with the cell: off plan), it looks
    // as far past the margin as the speed scaling does.
    let slows = a.scratch.look.slowed[0];
    let far = if slows { release.max(margin + lim.slow_down) } else { release };
    let reach = far.max(margin) + e2;
    let model = &a.model;
    let ArmModel { self_pairs, link_slots, .. } = model;
    let ArmScratch { forecast, posed, look, track } = &mut a.scratch;
    let (n_cfg, path_q) = (forecast.n_cfg, &forecast.path_q);
    let (batches, pair_inflation, candidates) = (&posed.batches, &posed.pair_inflation, &mut look.candidates);
    let now_self = &mut look.now_self;
    now_self.fill([f32::INFINITY; 2]);
    let escaping = track.escape.target == Some(Target::Own);
    for (bi, batch) in batches.iter().enumerate().take(n_cfg.div_ceil(BATCH)) {
        let lbox = &batch.boxes;
        for pi in 0..self_pairs.len() {
            let (la, lb) = self_pairs[pi];
            let (la, lb) = (la as usize, lb as usize);
            let bit = matrix.global(ri, la) * nl + matrix.global(ri, lb);
            if allowed[bit / 64] >> (bit % 64) & 1 == 1 {
                continue;
            }
            let (ba, bb) = (&lbox[la], &lbox[lb]);
            let near = (0..BATCH).any(|lane| {
                (0..3).all(|c| ba[c][lane] - bb[3 + c][lane] <= reach && bb[c][lane] - ba[3 + c][lane] <= reach)
            });
            if !near {
                continue;
            }
            let (ra, rb) = (link_slots[la], link_slots[lb]);
            let mut lane_min = [f32::INFINITY; BATCH];
            // Spheres of each link near the other link's box in some lane.
            let near_box = |i: usize, bx: &[[f32; BATCH]; 6]| {
                let ri = batch.r[i] + reach;
                let (x, y, z) = (lanes(&batch.x, i), lanes(&batch.y, i), lanes(&batch.z, i));
                (0..BATCH).any(|l| {
                    x[l] + ri >= bx[0][l]
                        && x[l] - ri <= bx[3][l]
                        && y[l] + ri >= bx[1][l]
                        && y[l] - ri <= bx[4][l]
                        && z[l] + ri >= bx[2][l]
                        && z[l] - ri <= bx[5][l]
                })
            };
            candidates.clear();
            candidates.extend((rb.0..rb.1).filter(|&j| near_box(j, ba)).map(|j| j as u32));
            if candidates.is_empty() {
                continue;
            }
            for i in ra.0..ra.1 {
                if !near_box(i, bb) {
                    continue;
                }
                let (xi, yi, zi) = (lanes(&batch.x, i), lanes(&batch.y, i), lanes(&batch.z, i));
                for &j in candidates.iter() {
                    let j = j as usize;
                    let rr = batch.r[i] + batch.r[j] + pair_inflation[pi];
                    let (xj, yj, zj) = (lanes(&batch.x, j), lanes(&batch.y, j), lanes(&batch.z, j));
                    for l in 0..BATCH {
                        let (dx, dy, dz) = (xi[l] - xj[l], yi[l] - yj[l], zi[l] - zj[l]);
                        lane_min[l] = lane_min[l].min((dx * dx + dy * dy + dz * dz).sqrt() - rr);
                    }
                }
            }
            let pair =
                (Body::Link { robot: ri as u16, link: la as u16 }, Body::Link { robot: ri as u16, link: lb as u16 });
            let mut least = f32::INFINITY;
            for (lane, &g) in lane_min.iter().enumerate() {
                let k = bi * BATCH + lane;
                if k < n_cfg {
                    // Within the margin: the links' exact shapes decide as
                    // well, whether it stops (the rest takes the spheres'
                    // gap, as the robot checks do).
                    let [fine, shapes] = if g <= margin {
                        let at = |link: usize| At { model, path_q, robot: ri, link, sample: k };
                        exact.refine(at(la), at(lb), g, pair_inflation[pi], margin)
                    } else {
                        [g; 2]
                    };
                    // What its stopping path takes it nearer to slows it,
                    // as the cell does (the speed scaling's measure).
                    if k == 0 {
                        now_self[pi] = [g, shapes];
                    } else {
                        if slows {
                            track.approach(0, now_self[pi][0], g);
                        }
                        // Escaping from its own links, no pair of them may
                        // close in within the margin by their shapes (the
                        // spheres' least gap may grow while they do).
                        let now = now_self[pi][1];
                        if escaping && shapes <= margin && (shapes < now || now.is_nan()) {
                            track.escape.closes_in();
                        }
                    }
                    track.found_refined([g, fine], k, pair, Reason::SelfCollision, margin);
                    least = if g.is_nan() { g } else { least.min(g) };
                }
            }
            track.found_class(1, least, pair);
        }
    }
}
