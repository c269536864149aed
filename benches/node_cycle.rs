//! The node's joint-state path in process: `on_joint_state` then
//! `cycle_first` for arm_right of the sample cell, that is the work between
//! a joint state's arrival and its stop's publication, without DDS.
//!
//! Four cases: arm_right holding still or swinging (0.1 rad at 6 rad/s, as
//! the latency peer plays it; its whole stopping path is checked), each
//! warm (cycles back to back) and cold (64 MB written between two cycles,
//! as when the node idles between joint states and other processes run).
//! States arrive 5 ms apart, as in `ros_latency`. Printed beside each, from
//! the same run: the whole cycle (`cycle`, every check and every robot's
//! decision), which is what a joint state cost before the split.
//!
//! `cargo bench --bench node_cycle` (`WG_NODE_CYCLES` cycles per case,
//! 8,000 by default).

use std::hint::black_box;
use std::time::Instant;
use workcell_guard_core::field::DistanceField;
use workcell_guard_description::workcell;
use workcell_guard_ros::msg::{Header, JointState, Time};
use workcell_guard_ros::node::GuardNode;
use workcell_guard_ros::params::NodeParams;

const LEFT: [&str; 7] = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"];
const RIGHT: [&str; 8] = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"];
const Q_LEFT: [f64; 7] = [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02];
const Q_RIGHT: [f64; 8] = [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0];
const DT: f64 = 0.005;

fn stamp(t: f64) -> Time {
    let sec = t.floor();
    Time { sec: sec as i32, nanosec: ((t - sec) * 1e9) as u32 }
}

fn state(names: &[&str], q: &[f64], t: f64) -> JointState {
    JointState {
        header: Header { stamp: stamp(t), frame_id: String::new() },
        name: names.iter().map(|s| s.to_string()).collect(),
        position: q.to_vec(),
        velocity: Vec::new(),
        effort: Vec::new(),
    }
}

fn q_right(moving: bool, t: f64, q: &mut [f64]) {
    for (j, x) in q.iter_mut().enumerate() {
        *x = if moving && j < 7 { Q_RIGHT[j] + 0.1 * (6.0 * t + j as f64).sin() } else { Q_RIGHT[j] };
    }
}

struct Case {
    node: GuardNode,
    left: JointState,
    right: JointState,
    t: f64,
    moving: bool,
    junk: Vec<u64>,
}

impl Case {
    fn new(moving: bool) -> Case {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let cell = workcell::load(&root.join("config/workcell.yaml")).expect("sample cell");
        let field = DistanceField::from_workcell(&cell);
        let cache = std::env::temp_dir().join("workcell_guard_bench_cache");
        let (guard, _) = workcell_guard_description::build_guard(&cell, field, Some(&cache)).expect("guard");
        let mut c = Case {
            node: GuardNode::new(cell, guard, NodeParams::default()).expect("node"),
            left: state(&LEFT, &Q_LEFT, 0.0),
            right: state(&RIGHT, &Q_RIGHT, 0.0),
            t: 10.0,
            moving,
            junk: vec![0; 8 << 20],
        };
        // Warm-up: past the estimator's stencil and the watchdog's start.
        for _ in 0..400 {
            c.advance();
            c.node.on_joint_state(1, &c.right, c.t).expect("right state");
            c.node.cycle(c.t);
        }
        c
    }

    /// The next states: arm_left's taken (it arrives on its own message),
    /// arm_right's made ready.
    fn advance(&mut self) {
        self.t += DT;
        let s = stamp(self.t);
        self.left.header.stamp = s;
        self.right.header.stamp = s;
        q_right(self.moving, self.t, &mut self.right.position);
        self.node.on_joint_state(0, &self.left, self.t).expect("left state");
    }

    #[inline(never)]
    fn evict(&mut self) {
        for (i, w) in self.junk.iter_mut().enumerate() {
            *w = w.wrapping_add(i as u64);
        }
        black_box(&self.junk);
    }

    /// p50 and p99 (µs) of arm_right's state taken and its decision made:
    /// the first half alone (`split`) or the whole cycle.
    fn measure(&mut self, cycles: usize, cold: bool, split: bool) -> (f64, f64) {
        let mut us = Vec::with_capacity(cycles);
        for _ in 0..cycles {
            self.advance();
            if cold {
                self.evict();
            }
            let t0 = Instant::now();
            self.node.on_joint_state(1, &self.right, self.t).expect("right state");
            if split {
                black_box(self.node.cycle_first(self.t, 1));
            } else {
                self.node.cycle(self.t);
            }
            us.push(t0.elapsed().as_secs_f64() * 1e6);
            if split {
                self.node.cycle_rest(self.t);
            }
        }
        us.sort_by(f64::total_cmp);
        (us[us.len() / 2], us[us.len() * 99 / 100])
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("node_cycle: benchmark");
        return;
    }
    let cycles: usize = std::env::var("WG_NODE_CYCLES").ok().and_then(|s| s.parse().ok()).unwrap_or(8_000);
    println!("node_cycle: on_joint_state + decision for arm_right, sample cell, {cycles} cycles per row (µs)");
    println!(
        "{:<8} {:<5} {:>22} {:>22} {:>8}",
        "arm", "cache", "first half p50 / p99", "whole cycle p50 / p99", "p50 ratio"
    );
    // `WG_NODE_ONLY=moving-cold` (etc.) runs one row, for profiling.
    let only = std::env::var("WG_NODE_ONLY").unwrap_or_default();
    for moving in [false, true] {
        let mut case = Case::new(moving);
        for cold in [false, true] {
            let name = format!("{}-{}", if moving { "moving" } else { "still" }, if cold { "cold" } else { "warm" });
            if !only.is_empty() && only != name {
                continue;
            }
            // Alternate in blocks so that a noisy machine's drifts hit both.
            let (mut first, mut whole) = (Vec::new(), Vec::new());
            for _ in 0..4 {
                first.push(case.measure(cycles / 4, cold, true));
                whole.push(case.measure(cycles / 4, cold, false));
            }
            let med = |v: &mut Vec<(f64, f64)>, k: usize| {
                let mut x: Vec<f64> = v.iter().map(|p| if k == 0 { p.0 } else { p.1 }).collect();
                x.sort_by(f64::total_cmp);
                (x[1] + x[2]) / 2.0
            };
            let (f50, f99, w50, w99) = (med(&mut first, 0), med(&mut first, 1), med(&mut whole, 0), med(&mut whole, 1));
            println!(
                "{:<8} {:<5} {:>12.1} / {:>7.1} {:>12.1} / {:>7.1} {:>8.2}",
                if moving { "moving" } else { "still" },
                if cold { "cold" } else { "warm" },
                f50,
                f99,
                w50,
                w99,
                f50 / w50
            );
        }
    }
}
