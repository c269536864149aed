//! Moves that separate two robots already within the margin of each other.
//!
//! The conflict table says which samples of two robots' increments come
//! within the clearance margin. Where two robots already stand that close
//! (their samples 0 meet: the stop check's finer margin let them come
//! there, or one was stopped short of a retreat), every sample of either
//! meets the other near its start, so the arbiter grants neither anything:
//! neither can go on or back, and both wait for ever (the "knot" of the
//! crossing runs). Yet one of them can often move *away* from the other.
//!
//! So for such a pair the table keeps only the conflicts that bring the two
//! nearer: sample `i` of `a` and sample `j` of `b` still conflict where
//! the spheres' own gap (not inflated) between them is less than between
//! `a`'s sample before and `b`'s `j`, or between `a`'s `i` and `b`'s
//! sample before. Where they stand now (samples 0 and 0) no longer counts:
//! the stop check, exact to its margin, guards it and releases a robot
//! only for a move that separates the two. A robot whose next sample comes
//! nearer the other is still held, so of two robots in a knot the one that
//! can draw away does, and the other waits for it.
//!
//! Only pairs whose samples 0 meet and that both stood still since they
//! last did not (a knot holds them) are looked at: once in a knot, the two
//! stay in it until their samples 0 no longer meet, so a robot creeping
//! out of it is not held again for moving. Robots under way whose samples 0 meet are only
//! passing near (their spheres are inflated by their travel): the arbiter
//! decides them as before, and a cycle without a knot does no more work
//! (walking the gaps of two moving robots' samples cost 0.3 ms a cycle in
//! `cargo bench --bench arbitration`, 18 times the arbitration).

use super::Increment;
use super::conflicts::View;
use super::*;
use crate::arbiter::MAX_SAMPLES;

/// The gap between two increments' samples beyond which gaps are not told
/// apart, m: beyond the margin and both robots' widest inflations, samples
/// do not meet, so a meeting sample's gap is always less (a sample before
/// it that far off: it comes nearer). Looking no farther keeps the sphere
/// walk to the links that come that near.
pub(super) fn gap_cap(margin: f32, a: &Increment, b: &Increment) -> f32 {
    margin + a.widest + b.widest + 1e-3
}

impl Guard {
    /// Keeps, for each pair of robots on plans that stand still with their
    /// samples 0 meeting, only the conflicts that bring the two nearer (the
    /// module's text).
    pub(super) fn keep_approaching(&mut self) {
        let n = self.arms.len();
        for a in 0..n {
            for b in a + 1..n {
                let ar = &mut self.arbitration;
                let (oa, ob) = (&ar.offers[a], &ar.offers[b]);
                let knot = &mut ar.knots[a * n + b];
                if !ar.conflicts.get(a, 0, b, 0) {
                    *knot = false;
                    continue;
                }
                // A knot lasts until the two are apart: a robot creeping
                // out of one is not stopped again for not standing still.
                *knot |= oa.still && ob.still;
                if *knot {
                    self.keep_approaching_pair(a, b);
                }
            }
        }
    }

    fn keep_approaching_pair(&mut self, a: usize, b: usize) {
        let (sa, sb) = (self.arbitration.offers[a].samples, self.arbitration.offers[b].samples);
        let ar = &self.arbitration;
        let cap = gap_cap(self.margins.clearance_m as f32, &ar.inc[a], &ar.inc[b]);
        // Gaps between samples, worked out as needed (NaN: not yet).
        let mut gaps = [[f32::NAN; MAX_SAMPLES]; MAX_SAMPLES];
        let mut gap = |g: &Guard, i: usize, j: usize| {
            if gaps[i][j].is_nan() {
                let (ia, ib) = (&g.arbitration.inc[a], &g.arbitration.inc[b]);
                gaps[i][j] = g.views_gap(a, &View::bare(ia, i), b, &View::bare(ib, j), cap);
            }
            gaps[i][j]
        };
        for i in 0..sa.min(MAX_SAMPLES) {
            for j in 0..sb.min(MAX_SAMPLES) {
                if !self.arbitration.conflicts.get(a, i, b, j) {
                    continue;
                }
                let here = gap(self, i, j);
                let nearer = (i > 0 && here < gap(self, i - 1, j)) || (j > 0 && here < gap(self, i, j - 1));
                if !nearer {
                    self.arbitration.conflicts.unset(a, i, b, j);
                }
            }
        }
    }
}
