//! A plan that ends in a lower robot's way: the lower robot goes first.
//! The right arm, raised above the left one, swings to a goal where it
//! parks in the left arm's way; the left arm pans across that place from
//! one side to the other. Both obey their speed scaling and grants. The
//! left arm is lifted over the right one as soon as both are on their
//! plans, passes first, and both finish; neither is stopped by the robot
//! check. (Before, the right arm went first and parked there, and the left
//! one was held short of it for good.)

use crate::at_start::{Obeying, first_touch, plan};
use crate::common;
use crate::refine::{LEFT_PAN, Spheres, q_left, q_right};
use common::cell::{guard, sample_cell};

#[test]
fn a_robot_whose_plan_ends_in_a_lower_ones_way_lets_it_pass_first() {
    let margin = sample_cell().margins.clearance_m;
    let mut sp = Spheres::new();
    let (start, touch) = (-1.5, first_touch(&mut sp, -1.5));
    // The right arm parks past where it meets the left arm at LEFT_PAN.
    let park = touch + 0.15;
    let clear = |sp: &mut Spheres, pan: f64| sp.least_on_path(pan, (start, park));
    let (from, to) = (LEFT_PAN + 1.2, LEFT_PAN - 1.2);
    for pan in [from, to] {
        assert!(clear(&mut sp, pan) > margin + 0.02, "pan {pan} is in the right arm's way");
    }
    assert!(sp.gap_at(LEFT_PAN, park) < margin, "the right arm's goal is not in the left arm's way");

    let mut g = guard();
    assert!(g.set_priority(1, 30), "the right arm raised above the left one");
    let mut run = Obeying::new(0.0, (from, start));
    run.stand(&mut g, 400);
    g.set_plan(0, Some(plan(from, to, q_left))).unwrap();
    g.set_plan(1, Some(plan(start, park, q_right))).unwrap();
    let at = |s_left: f64, s_right: f64| {
        (from + (to - from) * (s_left / (to - from).abs()).min(1.0), start + s_right.min(park - start))
    };
    for _ in 0..8000 {
        let c = run.look(&mut g);
        if run.obey(&g, &c, true, (&mut sp, at)) {
            break;
        }
    }
    run.finish(&g, margin);
    assert!(run.lifted, "the left arm was not let pass first");
}
