//! The targets that drive the node itself: messages as they arrive on its
//! topics (CDR, every subscribed type), calls on its services and
//! parameters, and recordings (MCAP). Each runs on a node of the sample
//! cell built afresh (so that a crash reproduces from its input alone).

use std::path::Path;
use std::sync::{Arc, OnceLock};
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::guard::{CollisionMatrix, Guard};
use workcell_guard_description::workcell::{self, Workcell};
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::bag::{self, Call, Entry, Recording};
use workcell_guard_ros::event_loop::{Rebuild, seconds};
use workcell_guard_ros::node::{GuardNode, check_param};
use workcell_guard_ros::params::NodeParams;
use workcell_guard_ros::replay;
use workcell_guard_ros::topics::{Role, Topics};

/// The sample cell, built once per process.
pub(crate) struct Sample {
    pub cell: Workcell,
    pub topics: Topics,
    field: DistanceField,
    matrix: CollisionMatrix,
}

pub(crate) fn sample() -> &'static Sample {
    static SAMPLE: OnceLock<Sample> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        // invariant: the repository's sample cell loads (the suite checks it).
        let mut cell = workcell::load(&crate::repo().join("config/workcell.yaml")).expect("the sample cell loads");
        // Voxels of 0.1 m rather than 0.02 m: the same cell with a field
        // 125 times smaller, so that a fresh node per input costs little.
        let g = &mut cell.voxel_grid;
        let extent = g.dims.map(|n| n as f64 * g.resolution_m);
        g.resolution_m = 0.1;
        g.dims = extent.map(|e| (e / 0.1).ceil() as usize);
        let field = DistanceField::from_workcell(&cell);
        let (matrix, _) = workcell_guard_description::matrix_cache::load_or_compute(&cell, None);
        let topics = Topics::new(&RosArgs::default(), &cell);
        Sample { cell, topics, field, matrix }
    })
}

/// A fresh node of the sample cell.
fn fresh() -> Option<GuardNode> {
    let s = sample();
    let guard = Guard::new(&s.cell, s.field.clone(), s.matrix.clone()).ok()?;
    GuardNode::new(s.cell.clone(), guard, NodeParams::default()).ok()
}

/// Log times start here (2023-11-14), where the seeds' stamps are.
pub const T0_NS: u64 = 1_700_000_000_000_000_000;

/// The inputs a record can carry: every subscribed topic's role, then the
/// calls.
fn input_roles(cell: &Workcell) -> Vec<Role> {
    let arms = cell.manipulators.len();
    let units = cell.platen.as_ref().map_or(0, |p| p.units.len());
    let mut roles: Vec<Role> = (0..arms).flat_map(|r| [Role::JointState(r), Role::Plan(r)]).collect();
    roles.extend((0..units).flat_map(|u| [Role::PlatenPose(u), Role::MoveRequest(u), Role::PathRequest(u)]));
    roles.push(Role::Points);
    roles
}

/// The number of call kinds after the roles.
const CALLS: usize = 4;

/// Splits the input into records: `[kind u8][Δt u8][len u16 LE][len
/// bytes]`. Δt moves the clock before the record: below 0xF0 by that many
/// tenths of a millisecond, 0xF0..=0xF7 ahead by 0.5 s to 4 s, 0xF8..=0xFF
/// back by 1 to 8 ms (jumps of the clock). A kind below the number of roles
/// is a serialized message on that role's topic; the next four are calls:
/// a parameter (`name\0json`), `set_priority` (`robot\0i32 LE`),
/// `set_contact` (`a\0b\0allowed`) and `reset_stop`.
pub fn records(data: &[u8]) -> Recording {
    let roles = input_roles(&sample().cell);
    let mut rec = Recording::default();
    let (mut rest, mut ns) = (data, T0_NS);
    while let [kind, dt, l0, l1, tail @ ..] = rest {
        let len = usize::from(u16::from_le_bytes([*l0, *l1])).min(tail.len());
        let (body, next) = tail.split_at(len);
        rest = next;
        ns = match *dt {
            d @ 0..0xF0 => ns + u64::from(d) * 100_000,
            d @ 0xF0..0xF8 => ns + u64::from(d - 0xEF) * 500_000_000,
            d => ns.saturating_sub(u64::from(d - 0xF7) * 1_000_000),
        };
        let k = usize::from(*kind) % (roles.len() + CALLS);
        if let Some(&role) = roles.get(k) {
            if let Ok(msg) = bag::decode_as(role, body) {
                rec.entries.push(Entry { log_time_ns: ns, role, msg });
            }
        } else if let Some(call) = call(k - roles.len(), body) {
            rec.calls.push((ns, call));
        }
    }
    rec
}

fn call(kind: usize, body: &[u8]) -> Option<Call> {
    let text = String::from_utf8_lossy(body);
    let mut parts = text.split('\0');
    let mut next = || parts.next().unwrap_or_default().to_string();
    Some(match kind {
        0 => Call::Param { name: next(), value: next() },
        1 => {
            let robot = next();
            let priority = next().parse().ok()?;
            Call::SetPriority { robot, priority }
        }
        2 => Call::SetContact { a: next(), b: next(), allowed: next() == "true" },
        _ => Call::ResetStop,
    })
}

/// A reload is not fuzzed here (it reads the workcell file again: the
/// `workcell_yaml` target's): the node keeps running, as on a refused one.
fn no_reload() -> Rebuild {
    Arc::new(|_| Err("reload is not part of this target".to_string()))
}

fn replay(rec: &Recording) {
    let _ = replay_on_sample(rec);
}

/// `rec` replayed through a fresh node of the sample cell at 500 Hz
/// (`None` where the node cannot be built).
pub fn replay_on_sample(rec: &Recording) -> Option<replay::Replayed> {
    let mut n = fresh()?;
    Some(replay::replay(&mut n, rec, &sample().topics, 500.0, &no_reload()))
}

/// Messages and calls (see [`records`]) through a fresh node at 500 Hz.
pub(crate) fn messages(data: &[u8]) {
    replay(&records(data));
}

/// A recording (MCAP): read as `workcell_guard replay` reads it, then
/// replayed through a fresh node when it reads.
pub(crate) fn mcap(data: &[u8]) {
    if let Ok(rec) = bag::read_bytes(data, Path::new("fuzzed.mcap"), &sample().topics) {
        replay(&rec);
    }
}

/// A parameter update as the parameter services check and apply it, then
/// a cycle of the node with it.
pub(crate) fn param_update(name: &str, value: &serde_json::Value) {
    let s = sample();
    let Some(mut n) = fresh() else { return };
    if check_param(&s.cell, n.params(), name, value).is_ok() && n.set_param(name, value).is_ok() {
        n.cycle(seconds(T0_NS));
    }
}
