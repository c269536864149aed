//! `workcell_guard render <file.mcap> --at T`: the cell at time `T` of a
//! recording (s from its start), replayed up to there: top and side views
//! of every robot's spheres coloured by clearance, their stopping reach,
//! the static cell, the platen surface with its units and their
//! allocations, and the grants. SVG, and PNG where `rsvg-convert` is on
//! the PATH.

use crate::AnyError;
use crate::report::views;
use std::path::PathBuf;
use workcell_guard_core::model::PosedSpheres;
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::bag::Msg;
use workcell_guard_ros::replay::replay_observed;
use workcell_guard_ros::topics::Role;

/// `render`'s arguments.
#[derive(clap::Args)]
pub struct RenderArgs {
    /// The recording (rosbag2 MCAP).
    pub file: PathBuf,
    /// The instant, s from the recording's start.
    #[arg(long)]
    pub at: f64,
    /// The SVG to write (a PNG beside it where `rsvg-convert` is present).
    #[arg(long, default_value = "cell.svg")]
    pub out: PathBuf,
    /// The workcell YAML (else the recording's).
    #[arg(long)]
    pub workcell: Option<PathBuf>,
}

/// Runs `render`.
pub fn run(a: &RenderArgs, ros: &RosArgs) -> Result<(), AnyError> {
    let mut l = crate::replay::load(&a.file, a.workcell.as_deref(), ros)?;
    let t0 = l.rec.entries.first().map_or(0, |e| e.log_time_ns);
    let n = l.node.cell().manipulators.len();
    let occupancy = views::Occupancy::new(&l.node);
    let mut drawn: Option<(String, Option<String>)> = None;
    let mut seen = 0;
    let mut grants = vec![String::new(); n];
    replay_observed(&mut l.node, &l.rec, &l.topics, l.rate, &l.rebuild, &mut |node, o| {
        for e in &o.out[seen..] {
            if let (Role::ArmGrant(r), Msg::ArmGrant(g)) = (&e.role, &e.msg) {
                let who = node.cell().manipulators[*r].name.clone();
                let held = if g.held_by.is_empty() { String::new() } else { format!(" (held by {})", g.held_by) };
                grants[*r] = format!("{who}: {}{held}: {}", crate::replay::arm_state(g.state), g.reason);
            }
        }
        seen = o.out.len();
        let t = o.ns.saturating_sub(t0) as f64 * 1e-9;
        if drawn.is_some() || t < a.at {
            return;
        }
        let posed: Vec<PosedSpheres> = (0..n).filter_map(|r| node.posed_spheres(r).cloned()).collect();
        if posed.len() < n {
            return;
        }
        let mut lines = grants.clone();
        for r in 0..n {
            if node.stops()[r].data {
                lines.push(format!("{} stopped: {}", node.cell().manipulators[r].name, node.stop_cause(r)));
            }
        }
        let title = format!("{} at {t:.3} s", a.file.display());
        let cell = views::cell_view(node, &posed, &occupancy, &title, &lines);
        drawn = Some((cell, views::platen_view(node, &format!("platen at {t:.3} s"))));
    });
    let Some((cell, platen)) = drawn else {
        return Err(format!("the recording has no cycle with every robot's joint state at or after {} s", a.at).into());
    };
    std::fs::write(&a.out, &cell).map_err(|e| format!("{}: {e}", a.out.display()))?;
    println!("wrote {}", a.out.display());
    if let Some(p) = platen {
        let path = a.out.with_extension("platen.svg");
        std::fs::write(&path, p).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    let png = a.out.with_extension("png");
    match std::process::Command::new("rsvg-convert").arg("-o").arg(&png).arg(&a.out).status() {
        Ok(s) if s.success() => println!("wrote {}", png.display()),
        _ => println!("(no PNG: rsvg-convert is not available)"),
    }
    Ok(())
}
