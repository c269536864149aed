//! The platen's part of the cycle: pose updates, move and path requests,
//! the paths' next increments.

use super::*;
use crate::platen::{PathFault, Refusal};

impl Guard {
    /// Applies the platen pose updates and answers the move requests taken
    /// since the last cycle.
    pub(super) fn run_platen(&mut self, now_s: f64) {
        self.answers.clear();
        let mut answers = std::mem::take(&mut self.answers);
        self.platen_inputs(now_s, &mut answers);
        self.answers = answers;
        if let Some(p) = &mut self.platen {
            p.advance_paths(now_s, &mut self.answers);
            self.platen_status.clear();
            self.platen_status.extend((0..p.units()).map(|i| p.status(i, now_s)));
        }
    }

    /// Answers the move and path requests taken since the last cycle now,
    /// after the pose updates taken before them, rather than at the next
    /// cycle: what a node does as a request arrives, so that its grant
    /// leaves within the round trip. These answers are not repeated by the
    /// next cycle. Without a platen, nothing is answered (the cycle counts
    /// the inputs as unknown).
    pub fn answer_requests(&mut self, now_s: f64) -> &[(usize, Answer)] {
        self.early_answers.clear();
        if self.platen.is_some() {
            let mut answers = std::mem::take(&mut self.early_answers);
            self.platen_inputs(now_s, &mut answers);
            self.early_answers = answers;
        }
        &self.early_answers
    }

    /// Applies the pose updates and answers the requests taken so far, the
    /// answers appended to `out`.
    fn platen_inputs(&mut self, now_s: f64, out: &mut Vec<(usize, Answer)>) {
        if let Some(p) = &mut self.platen {
            for u in &self.platen_poses {
                if u.unit >= p.units() {
                    self.unknown_inputs += 1;
                    continue;
                }
                p.pose_update(now_s, u.unit, u.stamp_s, u.pose);
            }
            for &(unit, e) in &self.platen_refused {
                p.refuse_pose(unit, e);
            }
            for r in &self.move_requests {
                let answer = p.request(now_s, r.unit, r.request_id, r.target);
                out.push((r.unit, answer));
            }
            for r in &self.path_requests {
                let named = r.unit >= p.units() || r.unit_name.is_empty() || r.unit_name == p.unit_name(r.unit);
                let answer = if named {
                    p.request_path(now_s, r.unit, r.request_id, &r.waypoints, r.speed_mps)
                } else {
                    Answer::Refused { request_id: r.request_id, reason: Refusal::BadPath(PathFault::WrongUnit) }
                };
                out.push((r.unit, answer));
            }
        } else {
            self.unknown_inputs += self.platen_poses.len() + self.move_requests.len() + self.path_requests.len();
        }
        self.platen_poses.clear();
        self.platen_refused.clear();
        self.move_requests.clear();
        self.path_requests.clear();
    }

    /// Takes a platen unit's pose, applied at the next cycle (in arrival
    /// order, before the move requests).
    pub fn take_platen_pose(&mut self, p: PlatenPoseIn) {
        self.platen_poses.push(p);
    }

    /// Takes a platen unit's pose update that could not be read (`e`: a
    /// frame it cannot be placed in): the unit is stopped at the next
    /// cycle, as for a pose the allocator refuses, until a good one comes.
    pub fn refuse_platen_pose(&mut self, unit: usize, e: crate::platen::PoseError) {
        self.platen_refused.push((unit, e));
    }

    /// Takes a platen move request, answered at the next cycle.
    pub fn take_move_request(&mut self, r: MoveRequest) {
        self.move_requests.push(r);
    }

    /// Takes a platen path request, answered at the next cycle (its first
    /// increment; the next ones as the unit moves on).
    pub fn take_path_request(&mut self, r: PathRequest) {
        self.path_requests.push(r);
    }

    /// The platen allocator, if the cell has a platen.
    pub fn platen(&self) -> Option<&BitAllocator> {
        self.platen.as_ref()
    }
}
