//! `workcell_guard replay <file.mcap>`: a recording's inputs through the
//! guard offline ([`workcell_guard_ros::replay`]), its decisions printed
//! one line per change, and compared with the decisions recorded.

use crate::AnyError;
use std::path::{Path, PathBuf};
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::bag::{self, Entry, Msg, record};
use workcell_guard_ros::event_loop::Rebuild;
use workcell_guard_ros::msg::{ManipulatorGrant, PlatenGrant};
use workcell_guard_ros::node::GuardNode;
use workcell_guard_ros::params::NodeParams;
use workcell_guard_ros::replay::{CycleClock, Replayed};
use workcell_guard_ros::startup;
use workcell_guard_ros::topics::{Role, Topics};

/// `replay`'s arguments.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The recording: a rosbag2 MCAP (any writer; CDR messages).
    pub file: PathBuf,
    /// The workcell YAML (else the `workcell_file` parameter of `--ros-args`, else the recording's).
    #[arg(long)]
    pub workcell: Option<PathBuf>,
    /// Exit with an error where the replay's decisions differ from the recorded ones.
    #[arg(long)]
    pub strict: bool,
    /// Print only the summary, not one line per decision.
    #[arg(long)]
    pub quiet: bool,
    /// Where to write the report (default: the recording's path with `.html`).
    #[arg(long)]
    pub report: Option<PathBuf>,
}

/// A recording, read for the cell its node ran, and that node built
/// afresh with the parameters it ran with.
pub struct Loaded {
    /// The node, as built before the first input.
    pub node: GuardNode,
    /// Its topics.
    pub topics: Topics,
    /// The recording.
    pub rec: bag::Recording,
    /// Builds the node a reload swaps in.
    pub rebuild: Rebuild,
    /// Cycles per second where the recording has no cycle instants.
    pub rate: f64,
}

/// Reads `file` and builds its node: the parameters the node that wrote it
/// ran with, under those of `ros` (`-p` over them; parameter files under);
/// the workcell `workcell`, else the parameters', else the recording's.
pub fn load(file: &Path, workcell: Option<&Path>, ros: &RosArgs) -> Result<Loaded, AnyError> {
    let meta = bag::read_metadata(file)?;
    let recorded = meta.get(record::METADATA);
    let mut ros = ros.clone();
    if let Some(m) = recorded {
        let mut p: Vec<(String, String)> = m
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("param.")?.to_string(), v.clone())))
            .filter(|(k, v)| !k.ends_with("_file") && v != "\"\"")
            .collect();
        p.append(&mut ros.params);
        ros.params = p;
    }
    let ros = &ros;
    let node_name = ros.node_name.as_deref().unwrap_or(startup::NODE_NAME);
    let ns = ros.namespace.as_deref().unwrap_or("/");
    let mut params = NodeParams::load(ros, node_name, ns)?;
    let recorded_cell = recorded.and_then(|m| m.get("workcell_file")).map(PathBuf::from);
    params.workcell_file = workcell.map(Path::to_path_buf).or(params.workcell_file).or(recorded_cell);
    if params.workcell_file.is_none() {
        return Err("no workcell: give --workcell (the recording does not name one)".into());
    }
    let node = startup::build_from(params, startup::default_cache_dir().as_deref())?;
    let topics = Topics::new(ros, node.cell());
    let rec = bag::read(file, &topics)?;
    let rate = node.params().rate_hz;
    let cache = startup::default_cache_dir();
    let rebuild: Rebuild =
        std::sync::Arc::new(move |p| startup::build_from(p, cache.as_deref()).map_err(|e| e.to_string()));
    Ok(Loaded { node, topics, rec, rebuild, rate })
}

/// Runs `replay` (the ROS arguments name the node, its parameters and remaps).
pub fn run(a: &ReplayArgs, ros: &RosArgs) -> Result<(), AnyError> {
    let mut l = load(&a.file, a.workcell.as_deref(), ros)?;
    let report = a.report.clone().unwrap_or_else(|| a.file.with_extension("html"));
    let settings = vec![("recording".to_string(), a.file.display().to_string())];
    let title = format!("workcell_guard replay of {}", a.file.display());
    let r = crate::report::write(&mut l, &report, &title, &settings)?;
    if !a.quiet {
        for line in decision_lines(&r.out, &l.topics, l.node.cell()) {
            println!("{line}");
        }
    }
    print!("{}", summary(&r, &l.rec, &a.file));
    println!("  report: {}", report.display());
    match (&r.difference, a.strict) {
        (Some(_), true) => Err("the replay's decisions differ from the recorded ones".into()),
        _ => Ok(()),
    }
}

/// One line on how a replay's decisions compare with the recorded ones.
pub fn verdict(r: &Replayed) -> String {
    match (&r.difference, r.recorded_out) {
        (_, 0) => format!("{} decisions; the recording holds none to compare with", r.out.len()),
        (None, n) => format!("{} decisions, identical to the {n} recorded", r.out.len()),
        (Some(d), n) => format!(
            "{} decisions; they differ from the {n} recorded, first on {:?}, message {}",
            r.out.len(),
            d.role,
            d.index
        ),
    }
}

/// What a summary says about a replay.
fn summary(r: &Replayed, rec: &bag::Recording, file: &std::path::Path) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let span = match (rec.entries.first(), rec.entries.last()) {
        (Some(a), Some(b)) => (b.log_time_ns - a.log_time_ns) as f64 * 1e-9,
        _ => 0.0,
    };
    let _ = writeln!(s, "replayed {} ({span:.2} s recorded)", file.display());
    let how = match r.clock {
        CycleClock::Recorded => "at the recorded instants",
        CycleClock::GrantStamps => "at the recorded grants' stamps",
        CycleClock::Rate => "at the node's rate",
    };
    let _ = writeln!(
        s,
        "  {} inputs, {} cycles {how}, {} decisions, {} goal cancels",
        r.inputs,
        r.cycles,
        r.out.len(),
        r.cancels
    );
    if r.idle_skipped_s > 0.0 {
        let _ = writeln!(
            s,
            "  {:.1} s without input skipped (each gap cycled through for its first {} s only)",
            r.idle_skipped_s,
            workcell_guard_ros::replay::IDLE_CYCLED_NS / 1_000_000_000
        );
    }
    let lacking = rec.metadata.get(record::UNRECORDED).and_then(|m| m.get("display_trajectories"));
    if let Some(n) = lacking.filter(|n| *n != "0") {
        let _ = writeln!(
            s,
            "  the node took {n} MoveIt display trajectories the recording lacks: decisions after the first may differ"
        );
    }
    if !rec.skipped.is_empty() {
        let list: Vec<String> = rec.skipped.iter().map(|(t, n)| format!("{t} ({n})")).collect();
        let _ = writeln!(s, "  skipped (topics the cell does not use): {}", list.join(", "));
    }
    match (&r.difference, r.recorded_out) {
        (_, 0) => {
            let _ = writeln!(s, "  the recording holds no decisions to compare with");
        }
        (None, n) => {
            let _ = writeln!(s, "  identical to the {n} recorded decisions");
        }
        (Some(d), n) => {
            let t0 = rec.entries.first().map_or(0, |e| e.log_time_ns);
            let at = |e: &Option<Entry>| match e {
                Some(e) => format!("{:?} at +{:.3} s", e.msg, (e.log_time_ns.saturating_sub(t0)) as f64 * 1e-9),
                None => "nothing".into(),
            };
            let _ = writeln!(
                s,
                "  differs from the {n} recorded decisions: first on {:?}, message {}: recorded {}, replayed {}",
                d.role,
                d.index,
                at(&d.recorded),
                at(&d.replayed)
            );
        }
    }
    s
}

/// One line per change of a decision: stops set and released, grant
/// states (and who holds whom), retreats, platen grants.
pub fn decision_lines(
    out: &[Entry],
    topics: &Topics,
    cell: &workcell_guard_description::workcell::Workcell,
) -> Vec<String> {
    decision_events(out, cell)
        .into_iter()
        .map(|(t, l, role)| format!("+{t:8.3} s  {l}  [{}]", topics.name(role).unwrap_or("")))
        .collect()
}

/// Each change of a decision: (time from the first decision, s, what, its
/// topic's role).
pub fn decision_events(
    out: &[Entry],
    cell: &workcell_guard_description::workcell::Workcell,
) -> Vec<(f64, String, Role)> {
    let t0 = out.first().map_or(0, |e| e.log_time_ns);
    let arm = |r: usize| cell.manipulators.get(r).map_or("?", |m| m.name.as_str());
    let unit = |u: usize| cell.platen.iter().flat_map(|p| &p.units).nth(u).map_or("?", |x| x.name.as_str());
    let mut last_stop = vec![None; cell.manipulators.len()];
    let mut last_grant: Vec<Option<(u8, String)>> = vec![None; cell.manipulators.len()];
    let mut events = Vec::new();
    for e in out {
        let t = (e.log_time_ns.saturating_sub(t0)) as f64 * 1e-9;
        let line = match (&e.role, &e.msg) {
            (Role::Stop(r), Msg::Bool(b)) if last_stop[*r] != Some(b.data) => {
                last_stop[*r] = Some(b.data);
                Some(format!("{} {}", arm(*r), if b.data { "STOP" } else { "released" }))
            }
            (Role::ArmGrant(r), Msg::ArmGrant(g)) => {
                let key = (g.state, g.held_by.clone());
                (last_grant[*r].as_ref() != Some(&key)).then(|| {
                    last_grant[*r] = Some(key);
                    format!("{} grant {}{}: {}", arm(*r), arm_state(g.state), held(g), g.reason)
                })
            }
            (Role::Command(r), Msg::Trajectory(tr)) if !tr.points.is_empty() => {
                Some(format!("{} retreat sent ({} points)", arm(*r), tr.points.len()))
            }
            (Role::PlatenGrant(u), Msg::PlatenGrant(g)) => Some(format!(
                "{} {} (request {}) to ({:.3}, {:.3}){}",
                unit(*u),
                platen_result(g.result),
                g.request_id,
                g.goal.x,
                g.goal.y,
                if g.blocker.is_empty() && g.reason.is_empty() {
                    String::new()
                } else {
                    format!(": {}{}", g.blocker, g.reason)
                }
            )),
            _ => None,
        };
        if let Some(l) = line {
            events.push((t, l, e.role));
        }
    }
    events
}

fn held(g: &ManipulatorGrant) -> String {
    if g.held_by.is_empty() { String::new() } else { format!(" (by {})", g.held_by) }
}

/// A grant state's constant name.
pub fn arm_state(s: u8) -> &'static str {
    match s {
        ManipulatorGrant::PROCEED => "PROCEED",
        ManipulatorGrant::HOLD => "HOLD",
        ManipulatorGrant::BACK_AWAY => "BACK_AWAY",
        ManipulatorGrant::DONE => "DONE",
        ManipulatorGrant::NO_PLAN => "NO_PLAN",
        _ => "?",
    }
}

/// A platen result's constant name.
pub fn platen_result(r: u8) -> &'static str {
    match r {
        PlatenGrant::GRANTED => "GRANTED",
        PlatenGrant::PARTIAL => "PARTIAL",
        PlatenGrant::DENIED => "DENIED",
        PlatenGrant::REFUSED => "REFUSED",
        _ => "?",
    }
}
