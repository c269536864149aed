//! An increment of a robot's plan: sampled at plan times, posed in one
//! batch, each link's spheres inflated for the travel between samples.

use super::*;

impl Increment {
    /// Samples `plan` evenly from plan time `s0` to `end` (either way; its
    /// segment at `s0` is `hint`), each sample shifted by `offset` (the
    /// robot's standing offset from its plan), and sets each joint's half
    /// step to half the largest travel between neighbouring samples.
    pub(super) fn sample(&mut self, plan: &JointPlan, s0: f64, end: f64, hint: usize, offset: &[f64]) {
        let dof = self.half_step.len();
        let last = MAX_SAMPLES - 1;
        self.half_step.fill(0.0);
        // Each sample's segment is looked for from the last one's.
        let mut hint = hint;
        for k in 0..MAX_SAMPLES {
            let s = s0 + (end - s0) * k as f64 / last as f64;
            self.times[k] = s;
            let out = &mut self.q[k * dof..(k + 1) * dof];
            hint = plan.at_time_from(s, hint, out);
            for (o, d) in out.iter_mut().zip(offset) {
                *o += d;
            }
            if k > 0 {
                self.travel.fill(0.0);
                let prev = self.times[k - 1];
                plan.travel_from(prev.min(s), prev.max(s), hint, &mut self.travel);
                for (h, t) in self.half_step.iter_mut().zip(&self.travel) {
                    *h = h.max(t / 2.0);
                }
            }
        }
    }

    /// Poses and inflates the samples (`q`): whether the poser took them.
    pub(super) fn pose(&mut self, model: &ArmModel) -> bool {
        let dof = self.half_step.len();
        let qs: [&[f64]; BATCH] = std::array::from_fn(|k| &self.q[k * dof..(k + 1) * dof]);
        self.posed = model.poser.pose_batch(&qs, &mut self.batch).is_ok();
        if self.posed {
            self.inflate(&model.ranges, &model.lever);
        }
        self.posed
    }

    /// Inflates every sphere of the posed samples by its link's lever on
    /// the joints' half steps (per link, as `ranges` lists them; `lever`:
    /// per link, per joint), and sets the boxes: per link over all
    /// samples, per sample over all links, and around all of them.
    pub(super) fn inflate(&mut self, ranges: &[(u32, u32, u32)], lever: &[f64]) {
        let dof = self.half_step.len();
        let mut widest = 0.0f32;
        for &(l, s0, s1) in ranges {
            let l = l as usize;
            let e: f64 = lever[l * dof..(l + 1) * dof].iter().zip(&self.half_step).map(|(x, y)| x * y).sum();
            self.inflation[l] = e as f32;
            for s in s0 as usize..s1 as usize {
                self.inflated_r[s] = self.batch.r[s] + e as f32;
            }
            let lb = &self.batch.boxes[l];
            self.link_reach[l] = std::array::from_fn(|c| {
                let lanes = lb[c].iter().copied();
                if c < 3 {
                    lanes.fold(f32::INFINITY, f32::min) - e as f32
                } else {
                    lanes.fold(f32::NEG_INFINITY, f32::max) + e as f32
                }
            });
            widest = widest.max(e as f32);
        }
        self.widest = widest;
        for (lane, bx) in self.boxes.iter_mut().enumerate() {
            *bx =
                [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
            for &(l, _, _) in ranges {
                let lb = &self.batch.boxes[l as usize];
                for c in 0..3 {
                    bx[c] = bx[c].min(lb[c][lane] - widest);
                    bx[3 + c] = bx[3 + c].max(lb[3 + c][lane] + widest);
                }
            }
        }
        self.reach = std::array::from_fn(|c| {
            let sides = self.boxes.iter().map(|b| b[c]);
            if c < 3 { sides.fold(f32::INFINITY, f32::min) } else { sides.fold(f32::NEG_INFINITY, f32::max) }
        });
    }
}
