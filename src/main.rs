//! `workcell_guard`: the command-line front end.
//!
//! - `check <workcell.yaml>`: validate a workcell and summarise it.
//! - `model <urdf> [--joint NAME=VALUE ...] [--json]`: link poses and posed
//!   spheres for one configuration, for comparison with other tools.
//! - `spheres <workcell.yaml> --robot NAME --out FILE`: write a robot's
//!   fitted sphere set as YAML for hand-tuning.
//! - `field [<workcell.yaml>] [--occupancy in.npy] --out dist.npy`: the
//!   cell's distance field, or the exact distance transform of a raw
//!   occupancy grid, as a NumPy array indexed `[x, y, z]`.
//! - no subcommand, or `node`, with `--ros-args …` (what `ros2 run` and
//!   `ros2 launch` pass): the ROS 2 node, on the `dds` transport (on `r2r`
//!   when built with that feature).
//! - `record --workcell <cell.yaml> --out <file.mcap>`: a live cell's
//!   topics into a rosbag2 MCAP.
//! - `replay <file.mcap>`: a recording's inputs through the guard offline,
//!   its decisions printed and compared with the recorded ones.
//! - `calibrate <recording.mcap>... --robot NAME`: a manipulator's stopping
//!   model fitted to recorded stops, written as its `stopping:` file.
//! - `simulate-stops <workcell.yaml> --robot NAME --out <file.mcap>`:
//!   recorded stops of a simulated manipulator, for `calibrate`.
//! - `simulate <workcell.yaml> [--arms N] [--episodes N]`: the closed-loop
//!   simulation of the cell's arms under the guard (contacts, stops, false
//!   stops, time per guard cycle).

mod calibrate;
mod demo;
mod record;
mod render;
mod replay;
mod report;
mod tools;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tools::{Units, field, model, write_spheres};
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::guard::PairClass;
use workcell_guard_core::model::{SphereParams, SpherePoser, coverage};
use workcell_guard_description::build_guard;
use workcell_guard_description::workcell::{self, SphereSource, Workcell};
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::startup;
use workcell_guard_sim::arms::{self as sim, Sim, SimOptions};

#[derive(Parser)]
#[command(
    name = "workcell_guard",
    version,
    about = "Keeps the robots of one workcell from hitting each other and the cell"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a workcell file and summarise robots, joints, links, spheres and added volume.
    Check {
        /// The workcell YAML.
        workcell: PathBuf,
    },
    /// Print every link's pose (URDF root frame, 4×4 row-major) and the posed spheres.
    Model {
        /// The URDF file.
        urdf: PathBuf,
        /// Joint position, NAME=VALUE (rad or m); actuated joints not named are at 0.
        #[arg(long = "joint", value_name = "NAME=VALUE")]
        joints: Vec<String>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Sphere fitting: how far a sphere may reach beyond the geometry, metres.
        #[arg(long, default_value_t = SphereParams::default().max_overshoot_m)]
        max_overshoot_m: f64,
        /// Sphere fitting: at most this many spheres per link.
        #[arg(long, default_value_t = SphereParams::default().max_spheres)]
        max_spheres: usize,
        /// Use this sphere file instead of fitting.
        #[arg(long)]
        spheres: Option<PathBuf>,
    },
    /// Write a manipulator's sphere set as YAML (`config/spheres/<robot>.yaml`) for hand-tuning.
    Spheres {
        /// The workcell YAML.
        workcell: PathBuf,
        /// Manipulator name.
        #[arg(long)]
        robot: String,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
        /// yaml (this package's sphere file), curobo (cuRobo's collision-spheres YAML) or srdf
        /// (`<link_sphere_approximation>` elements).
        #[arg(long, value_enum, default_value_t = tools::SphereFormat::Yaml)]
        format: tools::SphereFormat,
    },
    /// Write the distance field as a NumPy .npy array indexed [x, y, z].
    ///
    /// With a workcell: its obstacles (plus --occupancy, if given, as sensed voxels of the same grid),
    /// its saturation and outside policy. With only --occupancy: the exact, untruncated distance
    /// transform of that grid (nonzero = occupied), the outside counting as free.
    Field {
        /// The workcell YAML.
        workcell: Option<PathBuf>,
        /// A 3-D .npy occupancy grid (bool, int or float; nonzero = occupied).
        #[arg(long)]
        occupancy: Option<PathBuf>,
        /// Output .npy file.
        #[arg(long)]
        out: PathBuf,
        /// What to write: metres, voxels, the integer layer (0 occupied, n where n-1 <= d < n), or 0/1.
        #[arg(long, value_enum, default_value_t = Units::Metres)]
        units: Units,
        /// Voxel edge in metres, for --units metres without a workcell.
        #[arg(long)]
        resolution_m: Option<f64>,
    },
    /// Closed-loop simulation: random arm motions under the guard, with an
    /// oracle counting sphere-level (or exact) contacts and false stops.
    Simulate(SimulateArgs),
    /// The node and a cell's simulated robots over DDS on this machine: events, recording, report.
    Demo(demo::DemoArgs),
    /// The cell at an instant of a recording, as SVG (and PNG where rsvg-convert is present).
    Render(render::RenderArgs),
    /// Runs a recording's inputs (a rosbag2 MCAP) through the guard offline, in recorded time, prints
    /// its decisions and compares them with the recorded ones. `--ros-args` sets parameters and remaps.
    Replay(replay::ReplayArgs),
    /// Records a live cell's topics (the node's inputs and outputs) into a rosbag2 MCAP, until Ctrl-C
    /// or --duration-s. `--ros-args` gives the namespace and remaps.
    Record(record::RecordArgs),
    /// Fits a manipulator's stopping model (reaction time, distance over speed and position per joint) to the
    /// stops in recordings, writes it as the workcell's `stopping:` file and an HTML report of the fit.
    Calibrate(calibrate::CalibrateArgs),
    /// Records stops of one simulated manipulator under a braking physics the guard does not know, as a
    /// rosbag2 MCAP for `calibrate`.
    SimulateStops(calibrate::stops::SimulateStopsArgs),
}

#[derive(clap::Args)]
struct SimulateArgs {
    /// The workcell YAML.
    workcell: PathBuf,
    /// Arms in the simulated cell (2-4; the cell's arms, then copies of them on extra pedestals).
    #[arg(long, default_value_t = 2)]
    arms: usize,
    /// Episodes to run.
    #[arg(long, default_value_t = 100)]
    episodes: usize,
    /// Seed of the first episode (episode k uses seed + k).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Goals per arm and episode (a planned trajectory to each in turn).
    #[arg(long, default_value_t = SimOptions::default().goals)]
    goals: usize,
    /// Which episodes hand their planned trajectories to the guard: half (even seeds), always, never.
    #[arg(long, default_value = "half")]
    plans: sim::PlanMode,
    /// The arms obey every output: their speed scaling and their grants (never past a grant's end, back along
    /// the plan when told to back away), as a cell under the guard does; by default they run at full pace until
    /// stopped.
    #[arg(long)]
    obey_scaling: bool,
    /// Robot against robot by whole swept volumes (the baseline), not time-matched.
    #[arg(long)]
    swept: bool,
    /// The guard refines link pairs within the margin by their exact shapes (parry3d), whatever the
    /// workcell's `guard.exact_links` says (true by default).
    #[arg(long, conflicts_with = "spheres_only")]
    exact_links: bool,
    /// The guard decides link pairs by their spheres alone, whatever the workcell's `guard.exact_links`
    /// says: the baseline (add --exact-oracle to judge it as the refining guard is judged).
    #[arg(long)]
    spheres_only: bool,
    /// The oracle judges contacts and stops by the links' exact shapes where their spheres come within the
    /// margin: always where the guard refines by them (`guard.exact_links`); with --spheres-only, the
    /// spheres-only guard judged alike.
    #[arg(long)]
    exact_oracle: bool,
    /// Crossing plans, the arms obeying their grants, beside one arm at a time in the shared zone and the
    /// unguarded run: `--episodes` counts episodes run (seeds without crossing plans skipped, up to 40 each).
    #[arg(long)]
    crossing: bool,
    /// Arms at their plan's start (or setting off) give way to lower ones on their way (`give_way_at_start`).
    #[arg(long)]
    give_way: bool,
    /// Priority alone decides, even where a lower arm on its way is caught in a higher one's increment
    /// (`give_way_when_caught` false).
    #[arg(long)]
    strict_priority: bool,
    /// A robot in a higher one's way goes on where its increment ahead is clear (`go_on_when_clear`).
    #[arg(long)]
    go_on: bool,
    /// A robot waiting for a higher one longer than this goes first (`priority_boost_after_s`), s.
    #[arg(long)]
    boost_after: Option<f64>,
    /// Threads running episodes (each seed still gives the same episode).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Fraction of the URDF speed limits used.
    #[arg(long, default_value_t = SimOptions::default().speed_fraction)]
    speed_fraction: f64,
    /// The speed scaling's slow-down distance (the node's `slow_down_m`), m; default the node's.
    #[arg(long)]
    slow_down_m: Option<f64>,
    /// The arms brake under a physics the guard does not know (what `simulate-stops` records: a reaction time
    /// drawn per stop, deceleration varying with speed and position, derived from the configured figures so that
    /// those stay conservative), not exactly at the configured figures.
    #[arg(long)]
    physics: bool,
    /// Directory for the cached collision matrix.
    #[arg(long)]
    matrix_cache: Option<PathBuf>,
    /// Override guard.max_path_samples.
    #[arg(long)]
    max_path_samples: Option<usize>,
    /// Override guard.near_path_samples (raised to the cap when below it).
    #[arg(long)]
    near_path_samples: Option<usize>,
    /// Platen episodes (when the cell has a platen): its units move to random poses under the allocator.
    #[arg(long, default_value_t = 20)]
    platen_episodes: usize,
    /// Length of a platen episode, s.
    #[arg(long, default_value_t = 10.0)]
    platen_duration_s: f64,
    /// Platen units on crossing paths: this many episodes for 2, 3 and 4 units, and the swap and ring scenarios.
    #[arg(long, default_value_t = 0)]
    platen_paths: usize,
}

// long: one arm per subcommand
fn main() -> ExitCode {
    // `ros2 run` and `ros2 launch` start the node with only `--ros-args …`;
    // `workcell_guard node --ros-args …` says the same explicitly.
    let parsed = RosArgs::parse(std::env::args());
    // Logging: `--log-level` where given, else RUST_LOG, else warnings (the
    // DDS libraries' errors only: on loopback RustDDS warns dozens of times
    // a second about what is normal there).
    let node_name =
        parsed.as_ref().ok().and_then(|(r, _)| r.node_name.clone()).unwrap_or_else(|| startup::NODE_NAME.into());
    let from_args = parsed.as_ref().ok().and_then(|(r, _)| r.log_filter(&node_name));
    let filter = match from_args {
        Some(f) => tracing_subscriber::EnvFilter::new(f),
        None => tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
            // The demo's own participant: RustDDS's chatter (loopback-only
            // discovery, shutdown) is not for its audience.
            if std::env::args().nth(1).as_deref() == Some("demo") {
                "warn,rustdds=off"
            } else {
                "warn,rustdds=error,ros2_client=error"
            }
            .into()
        }),
    };
    // Colour only on a terminal (and never with NO_COLOR set): a log file,
    // a launch file's output or journald gets plain text.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colour).init();
    let (ros, rest) = match parsed {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for a in &ros.no_effect {
        tracing::debug!("ROS argument `{a}` taken: it has no effect on this node");
    }
    for (logger, level) in ros.log_levels.iter().filter_map(|(l, v)| Some((l.as_deref()?, v))) {
        if logger != node_name && logger != "workcell_guard" && !logger.starts_with(&format!("{node_name}.")) {
            tracing::debug!("--log-level {logger}:={level} taken: no logger of that name here");
        }
    }
    if rest.len() <= 1 || rest.get(1).is_some_and(|a| a == "node") {
        if rest.len() > 2 {
            eprintln!("error: `node` takes only --ros-args …, got {:?}", &rest[2..]);
            return ExitCode::from(2);
        }
        #[cfg(feature = "r2r")]
        let run = workcell_guard_ros::r2r::run;
        #[cfg(not(feature = "r2r"))]
        let run = workcell_guard_ros::dds::run;
        return match run(&ros, startup::default_cache_dir().as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
    let cli = Cli::parse_from(rest);
    let result = match cli.command {
        Command::Check { workcell } => check(&workcell),
        Command::Model { urdf, joints, json, max_overshoot_m, max_spheres, spheres } => {
            model(&urdf, &joints, json, SphereParams { max_overshoot_m, max_spheres }, spheres)
        }
        Command::Spheres { workcell, robot, out, format } => write_spheres(&workcell, &robot, &out, format),
        Command::Field { workcell, occupancy, out, units, resolution_m } => {
            field(workcell.as_deref(), occupancy.as_deref(), &out, units, resolution_m)
        }
        Command::Simulate(args) => simulate(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Render(args) => render::run(&args, &ros),
        Command::Replay(args) => replay::run(&args, &ros),
        Command::Record(args) => record::run(&args, &ros),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::SimulateStops(args) => calibrate::stops::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

type AnyError = Box<dyn std::error::Error>;

fn simulate(a: &SimulateArgs) -> Result<(), AnyError> {
    if !(2..=4).contains(&a.arms) {
        return Err(format!("--arms {}: between 2 and 4", a.arms).into());
    }
    if !(a.goals > 0 && a.speed_fraction > 0.0 && a.speed_fraction <= 1.0) {
        return Err("--goals must be positive and --speed-fraction in (0, 1]".into());
    }
    if a.slow_down_m.is_some_and(|m| !(m.is_finite() && m > 0.0)) {
        return Err("--slow-down-m must be a positive number of metres".into());
    }
    let base = workcell::load(&a.workcell)?;
    if base.manipulators.is_empty() {
        println!("{}: no manipulators, so no arm episodes", a.workcell.display());
    } else {
        simulate_arms(a, &base)?;
    }
    if let (Some(p), true) = (&base.platen, a.platen_episodes > 0) {
        simulate_platen(a, p)?;
    }
    if a.platen_paths > 0 {
        let (text, bad) = workcell_guard_sim::platen_paths::suite(a.seed, a.platen_paths, 0.005)?;
        print!("{text}");
        if bad > 0 {
            return Err(format!("platen paths: {bad} episodes with an overlap or a deadlock").into());
        }
    }
    Ok(())
}

/// Closed-loop episodes of the cell's arms (copies added up to `--arms`).
fn simulate_arms(a: &SimulateArgs, base: &workcell::Workcell) -> Result<(), AnyError> {
    let mut cell = sim::cell_with_arms(base, a.arms);
    let g = &mut cell.guard;
    g.max_path_samples = a.max_path_samples.map_or(g.max_path_samples, |n| n.clamp(1, 1024));
    g.near_path_samples = a.near_path_samples.map_or(g.near_path_samples, |n| n.clamp(1, 1024));
    cell.guard.near_path_samples = cell.guard.near_path_samples.max(cell.guard.max_path_samples);
    cell.guard.exact_links = (cell.guard.exact_links || a.exact_links) && !a.spheres_only;
    let opts = SimOptions {
        goals: a.goals,
        plans: if a.crossing { sim::PlanMode::Always } else { a.plans },
        obey_scaling: a.obey_scaling || a.crossing,
        obey_grants: a.crossing || a.obey_scaling,
        give_way: a.give_way,
        strict_priority: a.strict_priority,
        go_on: a.go_on,
        boost_after_s: a.boost_after.filter(|s| s.is_finite() && *s > 0.0),
        swept: a.swept,
        speed_fraction: a.speed_fraction,
        physics: a.physics,
        slow_down_m: a.slow_down_m.filter(|m| m.is_finite() && *m > 0.0),
        hazards: a.obey_scaling && !a.crossing,
        exact_oracle: a.exact_oracle,
        ..SimOptions::default()
    };
    let cache = a.matrix_cache.clone().or_else(startup::default_cache_dir);
    let sims: Vec<Sim> =
        (0..a.jobs.clamp(1, 64)).map(|_| Sim::new(cell.clone(), opts, cache.as_deref())).collect::<Result<_, _>>()?;
    let total = sim::run_episodes(sims, a.seed, a.episodes, a.crossing);
    print!("{}", total.summary(a.arms, opts.dt_s));
    if total.episodes < a.episodes {
        return Err(format!("only {} of {} episodes could be drawn", total.episodes, a.episodes).into());
    }
    if total.contacts() > 0 {
        return Err(format!("{} cycles with a contact", total.contacts()).into());
    }
    Ok(())
}

/// Closed-loop episodes of the platen's units under the allocator.
fn simulate_platen(a: &SimulateArgs, p: &workcell::Platen) -> Result<(), AnyError> {
    if a.platen_duration_s.is_nan() || a.platen_duration_s <= 0.0 {
        return Err("--platen-duration-s must be positive".into());
    }
    let dt = 0.01;
    let mut t = workcell_guard_sim::platen::PlatenSimReport::default();
    for k in 0..a.platen_episodes as u64 {
        t.merge(&workcell_guard_sim::platen::episode(p, a.seed + k, a.platen_duration_s, dt)?);
    }
    print!("{}", t.summary(p.units.len(), a.platen_duration_s, dt));
    if t.overlaps > 0 || t.stops > 0 {
        return Err(format!("platen: {} overlaps, {} stopped cycles", t.overlaps, t.stops).into());
    }
    Ok(())
}

fn check(path: &std::path::Path) -> Result<(), AnyError> {
    let wc = workcell::load(path)?;
    print_summary(&wc);
    let start = std::time::Instant::now();
    let f = DistanceField::from_workcell(&wc);
    println!(
        "\ndistance field: {} occupied of {} voxels, {:.1} MB, built in {:.1} ms",
        f.occupied_count(),
        f.voxel_distances().len(),
        f.memory_bytes() as f64 / 1e6,
        start.elapsed().as_secs_f64() * 1e3
    );
    for m in &wc.manipulators {
        let poser = SpherePoser::new(&m.robot, &m.spheres, m.base);
        let mut posed = poser.posed();
        poser.pose(&vec![0.0; m.robot.dof()], &mut posed)?;
        let (c, i) = f.min_clearance(&posed);
        let link = &m.robot.links[posed.link[i] as usize].name;
        println!(
            "  `{}` at zero joint positions: least conservative clearance to the cell {:.3} m (link `{link}`){}",
            m.name,
            c,
            if c <= wc.margins.clearance_m as f32 {
                " - within the margin (allowed contacts are applied by the guard)"
            } else {
                ""
            }
        );
    }
    let gs = &wc.guard;
    println!(
        "\nguard: watchdog {} s, release after {} s clear by {} m, velocity filter window {}, at most {} samples per stopping path ({} near something)",
        gs.watchdog_s,
        gs.release_hold_s,
        wc.margins.release_m,
        gs.velocity_filter_window,
        gs.max_path_samples,
        gs.near_path_samples
    );
    let start = std::time::Instant::now();
    let cache = startup::default_cache_dir();
    let (guard, outcome) = build_guard(&wc, f, cache.as_deref())?;
    let (within, across) = guard.matrix().counts();
    println!(
        "collision matrix ({} samples per robot, never-slack {} m; {:?} in {:.2} s):",
        gs.matrix_samples,
        gs.matrix_never_slack_m,
        outcome,
        start.elapsed().as_secs_f64()
    );
    let names = ["sometimes (checked)", "adjacent", "always", "never", "rigid", "default"];
    for (k, name) in names.iter().enumerate() {
        println!("  {name:<20} {:>4} pairs within robots, {:>4} across robots", within[k], across[k]);
    }
    if across[PairClass::Always as usize] > 0 {
        println!("  warning: link pairs of two robots are within the margin in almost every pose: check the bases");
    }
    Ok(())
}

// long: the summary's lines, one statement each
fn print_summary(wc: &Workcell) {
    let g = &wc.voxel_grid;
    println!("workcell {}: valid", wc.file.display());
    println!(
        "cell frame `{}`; voxel grid {}×{}×{} at {} m from {:?}, distances exact to {} m, outside counts as {:?}; margins: clearance {} m, release {} m",
        wc.cell_frame,
        g.dims[0],
        g.dims[1],
        g.dims[2],
        g.resolution_m,
        g.origin_m,
        g.max_distance_m,
        g.outside,
        wc.margins.clearance_m,
        wc.margins.release_m
    );
    let (mut all_geom, mut all_union) = (0.0, 0.0);
    for m in &wc.manipulators {
        let r = &m.robot;
        println!(
            "\nmanipulator `{}`: robot `{}` from {}\n  priority {}, reaction {} s, {} actuated joints, {} links, {} spheres",
            m.name,
            r.name,
            m.urdf_path.display(),
            m.priority,
            m.reaction_time_s,
            r.dof(),
            r.links.len(),
            m.spheres.fine_count()
        );
        for (d, name) in r.dof_names.iter().enumerate() {
            let j = r.dof_joint(d);
            let unit = if j.kind.is_rotational() { "rad/s²" } else { "m/s²" };
            let learned = m.stopping.as_ref().and_then(|s| s.joints[d].as_ref()).map_or(String::new(), |js| {
                let (lo, hi) = js.range();
                format!(", learned stopping for speeds {lo:.3}..{hi:.3}")
            });
            println!(
                "  joint {:<24} {:<10} max decel {} {}{learned}",
                name,
                format!("{:?}", j.kind).to_lowercase(),
                m.max_decel[d],
                unit
            );
        }
        if let Some(st) = &m.stopping {
            println!(
                "  stopping model: learned for {} of {} joints, reaction {:.4} s (beyond a joint's speeds: its configured figures)",
                st.joints.iter().flatten().count(),
                r.dof(),
                st.reaction_s().unwrap_or(m.reaction_time_s)
            );
        }
        match &m.sphere_source {
            SphereSource::Fitted(_) => println!("  spheres fitted from URDF geometry"),
            SphereSource::File { path, .. } => println!("  spheres read from {}", path.display()),
        }
        println!(
            "  {:<24} {:>10} {:>7} {:>10} {:>11} {:>11} {:>11} {:>8}",
            "link", "geometry", "spheres", "bound r m", "overshoot m", "geom m³", "spheres m³", "added"
        );
        let (mut geom_sum, mut union_sum) = (0.0, 0.0);
        for (li, (l, s)) in r.links.iter().zip(&m.spheres.links).enumerate() {
            let kinds: Vec<&str> = l.collisions.iter().map(|c| c.shape.kind()).collect();
            let geom = coverage::geometry_volume(&l.collisions);
            let union = coverage::union_volume(&s.fine, 48);
            geom_sum += geom;
            union_sum += union;
            let uncovered = match &m.sphere_source {
                SphereSource::File { coverage, .. } if coverage[li].uncovered > 0 => {
                    format!(
                        "  WARNING {} of {} samples uncovered (gap {:.4} m)",
                        coverage[li].uncovered, coverage[li].samples, coverage[li].worst_gap_m
                    )
                }
                _ => String::new(),
            };
            println!(
                "  {:<24} {:>10} {:>7} {:>10} {:>11} {:>11.6} {:>11.6} {:>8}{}",
                l.name,
                if kinds.is_empty() { "-".to_string() } else { kinds.join("+") },
                s.fine.len(),
                s.bounding.map(|b| format!("{:.4}", b.radius)).unwrap_or_else(|| "-".into()),
                if s.overshoot_bound_m.is_nan() { "n/a".into() } else { format!("{:.4}", s.overshoot_bound_m) },
                geom,
                union,
                percent(union - geom, geom),
                uncovered
            );
        }
        println!(
            "  total: {} spheres; sphere volume {:.6} m³ over {:.6} m³ of geometry: spheres add {:.6} m³ ({})",
            m.spheres.fine_count(),
            union_sum,
            geom_sum,
            union_sum - geom_sum,
            percent(union_sum - geom_sum, geom_sum)
        );
        all_geom += geom_sum;
        all_union += union_sum;
    }
    println!(
        "\nadded volume, all manipulators: {:.6} m³ over {:.6} m³ of geometry ({})",
        all_union - all_geom,
        all_geom,
        percent(all_union - all_geom, all_geom)
    );
    if let Some(p) = &wc.platen {
        print_platen(p);
    }
    println!("\nobstacles: {}", wc.obstacles.len());
    for o in &wc.obstacles {
        println!("  `{}`: {} at {:?}", o.name, o.shape.kind(), o.pose.trans.as_slice());
    }
    println!("allowed contacts: {}", wc.allowed_contacts.len());
}

fn print_platen(p: &workcell_guard_core::cell::Platen) {
    println!(
        "\nplaten: {} × {} m surface at {} m cells, {} units",
        p.size_xy_m[0],
        p.size_xy_m[1],
        p.cell_m,
        p.units.len()
    );
    for u in &p.units {
        let cord = match &u.umbilical {
            None => "no umbilical cord".to_string(),
            Some(c) => format!(
                "umbilical cord {} m wide from {:?}{} to {:?} on the unit",
                c.width_m,
                c.anchor_xy_m,
                if c.via_xy_m.is_empty() { String::new() } else { format!(" via {:?}", c.via_xy_m) },
                c.attach_xy_m
            ),
        };
        println!(
            "  unit `{}`: {}-gon footprint, {cord}, max {} m/s, brakes at {} m/s², priority {}, starts at {:?}",
            u.name,
            u.footprint_xy_m.len(),
            u.max_speed_mps,
            u.max_decel_mps2,
            u.priority,
            u.initial_pose
        );
    }
    for o in &p.obstacles {
        println!("  fixed obstacle `{}`: {}-gon", o.name, o.polygon_xy_m.len());
    }
    let a = &p.allocation;
    println!(
        "  allocation: retry after {} s, pose timeout {} s, arrival within {} m / {} rad, release lag {} m, path check {} s",
        a.retry_after_s,
        a.pose_timeout_s,
        a.arrive_tolerance_m,
        a.arrive_tolerance_rad,
        a.release_lag_m,
        a.path_check_s
    );
    match workcell_guard_core::platen::BitAllocator::new(p) {
        Ok(al) => {
            let g = al.grid();
            println!(
                "  maps: {} × {} cells, {} words each; the initial layout is free (world holds {} cells)",
                g.cols,
                g.rows,
                g.cols.div_ceil(64) * g.rows,
                workcell_guard_core::platen::CellMap::count(al.world())
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn percent(part: f64, whole: f64) -> String {
    if whole > 0.0 { format!("+{:.0} %", 100.0 * part / whole) } else { "n/a".into() }
}
