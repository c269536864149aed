//! A plan that arrives while a lower robot is already crossing: the
//! higher robot, standing at its plan's start, lets it pass when it can no
//! longer stop short of the new increment (`give_way_when_caught`).

use crate::arbitration::{Follower, at_rest_facing_away, q_left, q_right, sphere_gap, turn};
use crate::common;

use common::cell::feed;
use workcell_guard_core::arbiter::GrantState;
use workcell_guard_core::guard::{ArbitrationPolicy, StopSource};

const DT: f64 = 0.002;

/// What became of one crossing whose higher arm got its plan late.
#[derive(Debug)]
pub(crate) struct Late {
    /// Cycles arm_left (priority 20) gave way to arm_right (10).
    pub(crate) gave_way: usize,
    /// Cycles arm_right was told to back away.
    pub(crate) backed: usize,
    /// Cycles each arm was stopped by a check (not by its grant).
    pub(crate) stops: [usize; 2],
    /// When each arm finished, s since arm_right's plan.
    pub(crate) finished: [Option<f64>; 2],
    /// The least distance between the arms' spheres, m.
    pub(crate) least_gap: f32,
}

/// arm_right sets off across the front on its plan; `delay_s` later
/// arm_left, at rest at its start, is given its plan across the front the
/// other way. Both follow their grants and speed scaling until done.
pub(crate) fn late_plan(delay_s: f64, policy: ArbitrationPolicy) -> Late {
    let cell = common::cell::sample_cell();
    let (mut g, mut qs, mut t) = at_rest_facing_away();
    g.set_arbitration_policy(policy);
    let plans = [turn(q_left, 1.5, -1.5, 2.0), turn(q_right, -1.5, 1.5, 2.0)];
    let mut arms: Vec<Follower> =
        plans.iter().zip(&cell.manipulators).map(|(p, m)| Follower::new(p.clone(), m.max_decel[0])).collect();
    // Past the release hold of the start, as a cell that has run a while
    // (the DDS peer, tests/peer/arbitration.py, waits for it too).
    for _ in 0..200 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    g.set_plan(1, Some(plans[1].clone())).unwrap();
    let start = t;
    let mut r = Late { gave_way: 0, backed: 0, stops: [0; 2], finished: [None; 2], least_gap: f32::INFINITY };
    let mut sent = false;
    while t < start + 12.0 && r.finished.iter().any(Option::is_none) {
        t += DT;
        if !sent && t - start >= delay_s {
            g.set_plan(0, Some(plans[0].clone())).unwrap();
            sent = true;
        }
        feed(&mut g, &qs, t);
        r.gave_way += usize::from(g.giving_way(0) == Some(1));
        let commands = g.commands().to_vec();
        for (i, arm) in arms.iter_mut().enumerate() {
            let c = commands[i];
            r.stops[i] += usize::from(c.stop && c.source != StopSource::Grant);
            r.backed += usize::from(i == 1 && c.grant.state == GrantState::BackAway);
            if i == 0 && !sent {
                continue;
            }
            arm.step(&c, &mut qs[i]);
            if arm.done() && r.finished[i].is_none() {
                r.finished[i] = Some(t - start);
            }
        }
        r.least_gap = r.least_gap.min(sphere_gap(cell, &qs));
    }
    r
}

fn strict() -> ArbitrationPolicy {
    ArbitrationPolicy { give_way_when_caught: false, ..ArbitrationPolicy::default() }
}

/// The plan comes 0.3 s after arm_right set off: it can still stop short
/// of arm_left's first increment, and priority decides (arm_left first,
/// arm_right held, not sent back). From 0.5 to 0.7 s it cannot: with
/// priority alone it is sent back along its plan and finishes last; with
/// `give_way_when_caught` arm_left lets it pass, no arm is stopped or sent
/// back, and the cell finishes sooner. At 0.85 s arm_right is past where
/// arm_left's first increment reaches: neither policy holds or sends back
/// either arm. (Swept every 50 ms, the rule holds from 0.45 to 0.70 s; it
/// held from 0.50 to 0.95 s while increments reached 0.25 s past the
/// stopping path, not 0.1 s; tests/peer/arbitration.py --late plays 0.6 s
/// over DDS.)
#[test]
fn a_higher_arm_given_its_plan_while_a_lower_one_crosses_lets_it_pass() {
    let early = late_plan(0.3, ArbitrationPolicy::default());
    println!("0.30 s: {early:?}");
    assert_eq!((early.gave_way, early.backed, early.stops), (0, 0, [0, 0]), "{early:?}");
    let [Some(l), Some(r)] = early.finished else { panic!("an arm did not finish: {early:?}") };
    assert!(l < r, "arm_left goes first where arm_right can stop short: {early:?}");
    let (on, off) = (late_plan(0.85, ArbitrationPolicy::default()), late_plan(0.85, strict()));
    println!("0.85 s: {on:?}\n   priority alone: {off:?}");
    for r in [&on, &off] {
        assert_eq!((r.gave_way, r.backed, r.stops), (0, 0, [0, 0]), "0.85 s: {r:?}");
        assert!(r.least_gap > 0.0, "0.85 s: the arms met: {r:?}");
    }
    assert_eq!(on.finished, off.finished, "0.85 s: the policies differ where neither gives way");
    for delay in [0.5, 0.6, 0.7] {
        let (on, off) = (late_plan(delay, ArbitrationPolicy::default()), late_plan(delay, strict()));
        println!("{delay:.2} s: {on:?}\n   priority alone: {off:?}");
        assert!(on.gave_way > 0, "{delay} s: arm_left did not give way: {on:?}");
        assert_eq!((on.backed, on.stops), (0, [0, 0]), "{delay} s: {on:?}");
        assert!(on.least_gap > 0.0 && off.least_gap > 0.0, "{delay} s: the arms met: {on:?} {off:?}");
        let ([Some(l), Some(r)], [Some(l0), Some(r0)]) = (on.finished, off.finished) else {
            panic!("{delay} s: an arm did not finish: {on:?} {off:?}")
        };
        assert!(r < l, "{delay} s: arm_right passes first: {on:?}");
        assert!(l.max(r) < l0.max(r0), "{delay} s: giving way finishes sooner: {on:?} against {off:?}");
        assert!(off.backed > 0, "{delay} s: priority alone sends arm_right back: {off:?}");
    }
}
