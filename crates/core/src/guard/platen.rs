//! The platen's part of the cell, beside the arms' guard: the allocator
//! and the inputs taken for it since the last cycle (pose updates, move
//! and path requests). It shares nothing with the arms' cycle but the
//! entry point and the clock: [`Guard::cycle`] runs it after the arms
//! ([`PlatenPart::run`]), and [`Guard::answer_requests`] answers requests
//! as they arrive.

use super::*;
use crate::platen::{PathFault, PoseError, Refusal};

/// The platen allocator and its inputs awaiting the next cycle.
pub(super) struct PlatenPart {
    /// The allocator, if the cell has a platen.
    allocator: Option<BitAllocator>,
    /// Per unit, its status after the last cycle.
    status: Vec<UnitStatus>,
    /// The last cycle's answers: (unit, answer).
    answers: Vec<(usize, Answer)>,
    /// Answers given on a request's arrival ([`Guard::answer_requests`]).
    early_answers: Vec<(usize, Answer)>,
    /// Pose updates taken since the last cycle.
    poses: Vec<PlatenPoseIn>,
    /// Poses the adapter refused (a frame it cannot place), by unit.
    refused: Vec<(usize, PoseError)>,
    move_requests: Vec<MoveRequest>,
    path_requests: Vec<PathRequest>,
}

impl PlatenPart {
    /// The part of `cell`'s platen (none without one).
    pub(super) fn new(platen: Option<&crate::cell::Platen>) -> Result<PlatenPart, GuardError> {
        let allocator = platen.map(BitAllocator::new).transpose()?;
        Ok(PlatenPart {
            status: Vec::with_capacity(allocator.as_ref().map_or(0, |p| p.units())),
            answers: Vec::with_capacity(64),
            early_answers: Vec::with_capacity(64),
            allocator,
            poses: Vec::with_capacity(64),
            refused: Vec::with_capacity(8),
            move_requests: Vec::with_capacity(64),
            path_requests: Vec::new(),
        })
    }

    /// The cycle's platen stage: applies the pose updates and answers the
    /// requests taken since the last cycle, then advances the paths.
    /// Returns the inputs that named no unit (or came without a platen).
    pub(super) fn run(&mut self, now_s: f64) -> usize {
        self.answers.clear();
        let mut answers = std::mem::take(&mut self.answers);
        let unknown = self.take_inputs(now_s, &mut answers);
        self.answers = answers;
        if let Some(p) = &mut self.allocator {
            p.advance_paths(now_s, &mut self.answers);
            self.status.clear();
            self.status.extend((0..p.units()).map(|i| p.status(i, now_s)));
        }
        unknown
    }

    /// Answers the requests taken so far now ([`Guard::answer_requests`]);
    /// returns the answers and the inputs that named no unit.
    pub(super) fn answer_now(&mut self, now_s: f64) -> (&[(usize, Answer)], usize) {
        self.early_answers.clear();
        let mut unknown = 0;
        if self.allocator.is_some() {
            let mut answers = std::mem::take(&mut self.early_answers);
            unknown = self.take_inputs(now_s, &mut answers);
            self.early_answers = answers;
        }
        (&self.early_answers, unknown)
    }

    /// Applies the pose updates and answers the requests taken so far, the
    /// answers appended to `out`; returns the inputs that named no unit.
    fn take_inputs(&mut self, now_s: f64, out: &mut Vec<(usize, Answer)>) -> usize {
        let mut unknown = 0;
        if let Some(p) = &mut self.allocator {
            for u in &self.poses {
                if u.unit >= p.units() {
                    unknown += 1;
                    continue;
                }
                p.pose_update(now_s, u.unit, u.stamp_s, u.pose);
            }
            for &(unit, e) in &self.refused {
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
            unknown += self.poses.len() + self.move_requests.len() + self.path_requests.len();
        }
        self.poses.clear();
        self.refused.clear();
        self.move_requests.clear();
        self.path_requests.clear();
        unknown
    }

    /// Per unit, its status after the last cycle.
    pub(super) fn status(&self) -> &[UnitStatus] {
        &self.status
    }

    /// The last cycle's answers.
    pub(super) fn answers(&self) -> &[(usize, Answer)] {
        &self.answers
    }
}

impl Guard {
    /// Answers the move and path requests taken since the last cycle now,
    /// after the pose updates taken before them, rather than at the next
    /// cycle: what a node does as a request arrives, so that its grant
    /// leaves within the round trip. These answers are not repeated by the
    /// next cycle. Without a platen, nothing is answered (the cycle counts
    /// the inputs as unknown).
    pub fn answer_requests(&mut self, now_s: f64) -> &[(usize, Answer)] {
        let (answers, unknown) = self.platen.answer_now(now_s);
        self.unknown_inputs += unknown;
        answers
    }

    /// Takes a platen unit's pose, applied at the next cycle (in arrival
    /// order, before the move requests).
    pub fn take_platen_pose(&mut self, p: PlatenPoseIn) {
        self.platen.poses.push(p);
    }

    /// Takes a platen unit's pose update that could not be read (`e`: a
    /// frame it cannot be placed in): the unit is stopped at the next
    /// cycle, as for a pose the allocator refuses, until a good one comes.
    pub fn refuse_platen_pose(&mut self, unit: usize, e: PoseError) {
        self.platen.refused.push((unit, e));
    }

    /// Takes a platen move request, answered at the next cycle.
    pub fn take_move_request(&mut self, r: MoveRequest) {
        self.platen.move_requests.push(r);
    }

    /// Takes a platen path request, answered at the next cycle (its first
    /// increment; the next ones as the unit moves on).
    pub fn take_path_request(&mut self, r: PathRequest) {
        self.platen.path_requests.push(r);
    }

    /// The platen allocator, if the cell has a platen.
    pub fn platen(&self) -> Option<&BitAllocator> {
        self.platen.allocator.as_ref()
    }
}
