//! `workcell_guard demo`: the node and a cell's robots as separate DDS
//! participants on this machine only. The node runs as a child process
//! (the same binary, `--ros-args`, recording itself); the robots
//! ([`workcell_guard_sim::demo`]) are played here, through a participant of
//! their own ([`workcell_guard_ros::dds::peer`]): arms publish joint states
//! at 250 Hz and their plans, and move only as their grants, stops and
//! speed scalings allow; platen units publish their poses at 125 Hz, ask
//! for moves and paths, and drive as far as they are granted.
//!
//! Confinement: the demo first tries to re-run itself in a private network
//! namespace (`unshare -n`, or `unshare -rn` where only a user namespace is
//! allowed), with only loopback up; where neither works it stays in this
//! one, on DDS domain 142 unless `ROS_DOMAIN_ID` names one (so that nothing
//! of this machine's on the default domain hears the demo's robots). Either
//! way every participant binds and announces on 127.0.0.1 only
//! (`ROS_LOCALHOST_ONLY=1`). It says which it used.
//!
//! It prints one line per event as the wire shows it, a progress bar on a
//! terminal, a summary; and leaves in `--out` the node's recording
//! (`demo.mcap`), the node's log and `report.html` (the recording replayed,
//! its decisions compared with the live ones).

mod events;

use crate::AnyError;
use events::Events;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use workcell_guard_description::workcell::{self, Workcell};
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::bag::Msg;
use workcell_guard_ros::dds::peer::CellPeer;
use workcell_guard_ros::msg::{
    Duration as RosDuration, Header, JointState, JointTrajectory, JointTrajectoryPoint, PlatenMoveRequest,
    PlatenPathRequest, Point, Pose, Pose2D, PoseStamped, Quaternion, Time,
};
use workcell_guard_ros::startup;
use workcell_guard_ros::topics::Role;
use workcell_guard_sim::demo::{AskKind, DemoRobots, UnitAnswer};

/// `demo`'s arguments.
#[derive(clap::Args)]
pub struct DemoArgs {
    /// The workcell YAML.
    #[arg(long, default_value = "config/workcell.yaml")]
    pub workcell: PathBuf,
    /// The node's parameter file (its `workcell_file` is replaced by `--workcell`).
    #[arg(long, default_value = "config/workcell_guard.yaml")]
    pub params: PathBuf,
    /// How long the robots move, s.
    #[arg(long, default_value_t = 30.0)]
    pub duration_s: f64,
    /// Seed of the robots' random goals and targets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Directory for the recording, the node's log and the report.
    #[arg(long, default_value = "demo_out")]
    pub out: PathBuf,
    /// Do not try a private network namespace (loopback only, in this one).
    #[arg(long)]
    pub no_netns: bool,
}

/// Set in the re-run inside a private network namespace.
const NET_ENV: &str = "WORKCELL_GUARD_DEMO_NETNS";
/// The DDS domain outside a private network namespace, unless
/// `ROS_DOMAIN_ID` says otherwise.
const DEMO_DOMAIN: u16 = 142;
/// Joint states every this long, s.
const DT: f64 = 0.004;

/// Runs `demo`.
pub fn run(a: &DemoArgs) -> Result<(), AnyError> {
    let netns = match std::env::var(NET_ENV) {
        Ok(how) => Some(how),
        Err(_) if !a.no_netns => {
            if let Some(code) = rerun_in_netns()? {
                std::process::exit(code);
            }
            None
        }
        Err(_) => None,
    };
    // Outside a private namespace, another domain than the default one
    // unless one is given: a guard or robots running on this machine on
    // domain 0 must not hear the demo's robots.
    let domain = match (&netns, std::env::var("ROS_DOMAIN_ID")) {
        (None, Err(_)) => Some(DEMO_DOMAIN),
        _ => None,
    };
    // SAFETY: no other thread runs yet (nothing has been started), so
    // nothing reads the environment while it changes.
    unsafe {
        std::env::set_var("ROS_LOCALHOST_ONLY", "1");
        if let Some(d) = domain {
            std::env::set_var("ROS_DOMAIN_ID", d.to_string());
        }
    }
    match &netns {
        Some(how) => println!("network: a private network namespace ({how}), loopback only"),
        None => println!(
            "network: this machine's namespace (no private one could be made), loopback only, ROS_DOMAIN_ID={}",
            std::env::var("ROS_DOMAIN_ID").unwrap_or_default()
        ),
    }
    let cell = workcell::load(&a.workcell)?;
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let out = std::fs::canonicalize(&a.out)?;
    let mcap = out.join("demo.mcap");
    let _ = std::fs::remove_file(&mcap);
    // The robots first: on a first run they compute the cell's collision
    // matrix and cache it, and the node then reads it from the cache.
    let robots = DemoRobots::new(cell.clone(), a.seed, startup::default_cache_dir().as_deref())?;
    let mut node = start_node(a, &out, &mcap)?;
    let result = play(a, &cell, robots, &mut node, &out);
    let stopped = node.stop();
    let (events, waited, speed) = result?;
    stopped?;
    println!("summary: {}", events.summary());
    println!("  moved for {:.1} s after {waited:.1} s waiting for the node", a.duration_s);
    for (m, [moving, full, free, free_full]) in cell.manipulators.iter().zip(&speed) {
        println!(
            "  {}: at full speed (speed scaling 1) {:.1} % of the {moving:.1} s it moved; {:.1} % of the {free:.1} s \
             it moved with nothing in its way (nothing approaching within slow_down_m past the clearance margin, no \
             robot above holding it back)",
            m.name,
            100.0 * full / moving.max(1e-9),
            100.0 * free_full / free.max(1e-9)
        );
    }
    let mut l = crate::replay::load(&mcap, Some(&a.workcell), &RosArgs::default())?;
    let report = out.join("report.html");
    let settings = vec![
        ("workcell".to_string(), a.workcell.display().to_string()),
        ("parameters".to_string(), a.params.display().to_string()),
        ("duration_s".to_string(), a.duration_s.to_string()),
        ("seed".to_string(), a.seed.to_string()),
        ("network".to_string(), netns.unwrap_or_else(|| "loopback only".into())),
    ];
    let title = format!("workcell_guard demo on {}", a.workcell.display());
    let r = crate::report::write(&mut l, &report, &title, &settings)?;
    println!("replay of the recording: {}", crate::replay::verdict(&r));
    println!("recording: {}", mcap.display());
    println!("report:    {}", report.display());
    if r.difference.is_some() {
        return Err("the recording's replay decided differently from the live node".into());
    }
    Ok(())
}

/// Re-runs this command in a private network namespace with loopback up,
/// where one can be made: its exit code, else `None`.
fn rerun_in_netns() -> Result<Option<i32>, AnyError> {
    let exe = std::env::current_exe()?;
    for flags in ["-n", "-rn"] {
        let probe = Command::new("unshare")
            .args([flags, "sh", "-c", "ip link set lo up"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !probe.is_ok_and(|s| s.success()) {
            continue;
        }
        let status = Command::new("unshare")
            .args([flags, "sh", "-c", "ip link set lo up && exec \"$0\" \"$@\""])
            .arg(&exe)
            .args(std::env::args_os().skip(1))
            .env(NET_ENV, format!("unshare {flags}"))
            .status()?;
        return Ok(Some(status.code().unwrap_or(1)));
    }
    Ok(None)
}

/// The node as a child process, ended with SIGINT (as `ros2 launch` ends it).
struct NodeProcess {
    child: Child,
    log: PathBuf,
}

impl NodeProcess {
    /// Whether it still runs; else the end of its log.
    fn check(&mut self) -> Result<(), AnyError> {
        match self.child.try_wait()? {
            None => Ok(()),
            Some(status) => {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(15).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                Err(format!("the node exited ({status}); its log ({}) ends:\n{}", self.log.display(), tail.join("\n"))
                    .into())
            }
        }
    }

    /// SIGINT, then up to 15 s for it to finish its recording.
    fn stop(&mut self) -> Result<(), AnyError> {
        if self.child.try_wait()?.is_some() {
            return Ok(());
        }
        let _ = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status();
        let until = Instant::now() + Duration::from_secs(15);
        while Instant::now() < until {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        Err("the node did not end within 15 s of SIGINT (killed; its recording may be incomplete)".into())
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}

fn start_node(a: &DemoArgs, out: &Path, mcap: &Path) -> Result<NodeProcess, AnyError> {
    let exe = std::env::current_exe()?;
    let cell = std::fs::canonicalize(&a.workcell).map_err(|e| format!("{}: {e}", a.workcell.display()))?;
    let log = out.join("node.log");
    let file = std::fs::File::create(&log)?;
    let child = Command::new(exe)
        .arg("--ros-args")
        .arg("--params-file")
        .arg(&a.params)
        .arg("-p")
        .arg(format!("workcell_file:={}", cell.display()))
        .arg("-p")
        .arg(format!("record_file:={}", mcap.display()))
        // RustDDS's chatter (loopback-only discovery, shutdown) stays out
        // of the node's log unless asked for.
        .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "warn,rustdds=off".into()))
        .stdout(file.try_clone()?)
        .stderr(file)
        .spawn()?;
    Ok(NodeProcess { child, log })
}

fn now_time() -> (Time, u64) {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    (Time { sec: i32::try_from(d.as_secs()).unwrap_or(i32::MAX), nanosec: d.subsec_nanos() }, ns)
}

fn header(stamp: Time, frame: &str) -> Header {
    Header { stamp, frame_id: frame.to_string() }
}

/// What the robots' side returns: the events, how long it waited, and per
/// arm the seconds it moved and of those at full speed, then the seconds it
/// moved with nothing in its way and of those at full speed.
type Played = (Events, f64, Vec<[f64; 4]>);

/// The robots' side: waits for the node, then plays `a.duration_s` seconds.
/// Returns the events, how long it waited, and per arm its moving
/// seconds ([`Played`]).
// long: the demo's loop: the node's answers, the robots' moves and the event lines
fn play(
    a: &DemoArgs,
    cell: &Workcell,
    mut robots: DemoRobots,
    node: &mut NodeProcess,
    out: &Path,
) -> Result<Played, AnyError> {
    let peer = CellPeer::new(&RosArgs::default(), cell, "workcell_guard_demo_robots")?;
    let arms: Vec<String> = cell.manipulators.iter().map(|m| m.name.clone()).collect();
    let units: Vec<String> = cell.platen.iter().flat_map(|p| &p.units).map(|u| u.name.clone()).collect();
    let joints: Vec<Vec<String>> = cell
        .manipulators
        .iter()
        .map(|m| (0..m.robot.dof()).map(|d| m.robot.dof_joint(d).name.clone()).collect())
        .collect();
    let mut events = Events::new(arms.clone(), units);
    let terminal = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let bar = if terminal { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    bar.set_message("waiting for the node (it builds its guard; the first time, its collision matrix)");
    bar.enable_steady_tick(Duration::from_millis(200));
    // Until the node answers every arm (a grant each), the robots stand.
    let start = Instant::now();
    let mut answers = Vec::new();
    let mut granted = vec![false; arms.len()];
    let mut tick = 0u64;
    while granted.iter().any(|g| !g) || (arms.is_empty() && start.elapsed().as_secs_f64() < 3.0) {
        node.check()?;
        if start.elapsed() > Duration::from_secs(180) {
            return Err(
                format!("the node answered no grant within 180 s (see {})", out.join("node.log").display()).into()
            );
        }
        publish_states(&peer, &robots, &joints, tick)?;
        answers.clear();
        peer.answers(&mut answers);
        for (role, msg) in &answers {
            if let Role::ArmGrant(r) = role {
                granted[*r] = true;
            }
            events.take(0.0, *role, msg, &mut Vec::new());
        }
        tick += 1;
        std::thread::sleep(Duration::from_secs_f64(DT));
    }
    let waited = start.elapsed().as_secs_f64();
    events.counts.clear();
    bar.disable_steady_tick();
    let style = ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} s  {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar.set_length(a.duration_s.ceil() as u64);
    bar.set_message("");
    let t0 = Instant::now();
    let mut last = 0.0;
    let mut lines = Vec::new();
    loop {
        let t = t0.elapsed().as_secs_f64();
        if t >= a.duration_s {
            break;
        }
        node.check()?;
        answers.clear();
        peer.answers(&mut answers);
        // A hold and its stop arrive together: the grant first, so the
        // stop's line says what it is for.
        answers.sort_by_key(|(role, _)| matches!(role, Role::Stop(_)));
        if let Some(d) = peer.diagnostics() {
            events.diagnostics(t, &d, &mut lines);
        }
        for (role, msg) in &answers {
            apply(&mut robots, *role, msg, t);
            events.take(t, *role, msg, &mut lines);
        }
        for l in lines.drain(..) {
            if terminal { bar.println(l) } else { println!("{l}") }
        }
        let dt = (t - last).clamp(0.0, 3.0 * DT);
        last = t;
        let asks = robots.step(t, dt).to_vec();
        for ask in asks {
            send_ask(&peer, &units_of(cell), ask)?;
        }
        for (r, names) in joints.iter().enumerate() {
            if let Some(plan) = robots.take_plan(r) {
                let (stamp, ns) = now_time();
                let points = (0..plan.len())
                    .map(|k| JointTrajectoryPoint {
                        positions: plan.point(k).to_vec(),
                        time_from_start: duration(plan.time(k)),
                        ..JointTrajectoryPoint::default()
                    })
                    .collect();
                peer.plan(r, JointTrajectory { header: header(stamp, ""), joint_names: names.clone(), points })?;
                robots.plan_sent(r, ns, t);
            }
        }
        publish_states(&peer, &robots, &joints, tick)?;
        tick += 1;
        bar.set_position(t as u64);
        bar.set_message(events.short());
        let next = t0 + Duration::from_secs_f64(t + DT);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait.min(Duration::from_secs_f64(DT)));
        }
    }
    bar.finish_and_clear();
    let speed = robots.arms.iter().map(|a| [a.moving_s, a.full_speed_s, a.free_s, a.free_full_speed_s]).collect();
    Ok((events, waited, speed))
}

fn units_of(cell: &Workcell) -> Vec<String> {
    cell.platen.iter().flat_map(|p| &p.units).map(|u| u.name.clone()).collect()
}

fn duration(s: f64) -> RosDuration {
    let s = s.max(0.0);
    RosDuration { sec: s.floor() as i32, nanosec: ((s - s.floor()) * 1e9).round().min(999_999_999.0) as u32 }
}

/// Joint states every tick; unit poses every other.
fn publish_states(peer: &CellPeer, robots: &DemoRobots, joints: &[Vec<String>], tick: u64) -> Result<(), AnyError> {
    let (stamp, _) = now_time();
    for (r, a) in robots.arms.iter().enumerate() {
        peer.joint_state(
            r,
            JointState {
                header: header(stamp, ""),
                name: joints[r].clone(),
                position: a.arm.q.clone(),
                velocity: a.arm.v.clone(),
                effort: Vec::new(),
            },
        )?;
    }
    if tick.is_multiple_of(2) {
        for (u, unit) in robots.units.iter().enumerate() {
            let [x, y, th] = unit.pose;
            let pose = Pose {
                position: Point { x, y, z: 0.0 },
                orientation: Quaternion { x: 0.0, y: 0.0, z: (th / 2.0).sin(), w: (th / 2.0).cos() },
            };
            peer.pose(u, PoseStamped { header: header(stamp, "surface"), pose })?;
        }
    }
    Ok(())
}

fn send_ask(peer: &CellPeer, units: &[String], ask: workcell_guard_sim::demo::Ask) -> Result<(), AnyError> {
    let (stamp, _) = now_time();
    let [x, y, theta] = ask.target;
    let target = Pose2D { x, y, theta };
    match ask.kind {
        AskKind::Move => {
            peer.move_request(ask.unit, PlatenMoveRequest { header: header(stamp, ""), request_id: ask.id, target })?
        }
        AskKind::Path => peer.path_request(
            ask.unit,
            PlatenPathRequest {
                header: header(stamp, ""),
                unit: units[ask.unit].clone(),
                request_id: u32::try_from(ask.id).unwrap_or(u32::MAX),
                waypoints: vec![target],
                speed_mps: ask.speed_mps,
            },
        )?,
    }
    Ok(())
}

/// Hands the node's answer to the robots.
fn apply(robots: &mut DemoRobots, role: Role, msg: &Msg, t: f64) {
    match (role, msg) {
        (Role::Stop(r), Msg::Bool(b)) => robots.on_stop(r, b.data, t),
        (Role::Speed(r, _), m) if m.scaling().is_some() => robots.on_speed(r, m.scaling().unwrap_or(0.0)),
        (Role::ArmGrant(r), Msg::ArmGrant(g)) => {
            let stamp = u64::try_from(g.plan_stamp.sec).unwrap_or(0) * 1_000_000_000 + u64::from(g.plan_stamp.nanosec);
            let until = f64::from(g.granted_until.sec) + f64::from(g.granted_until.nanosec) * 1e-9;
            robots.on_grant(r, stamp, (g.state, !g.held_by.is_empty()), until, t);
        }
        (Role::PlatenGrant(u), Msg::PlatenGrant(g)) => {
            let a = UnitAnswer {
                id: g.request_id,
                result: g.result,
                goal: [g.goal.x, g.goal.y, g.goal.theta],
                retry_after_s: g.retry_after_s,
            };
            robots.on_answer(u, &a, t)
        }
        _ => {}
    }
}
