use super::*;
use proptest::prelude::*;

fn offer(priority: i64, committed: usize) -> Offer {
    Offer {
        priority,
        samples: MAX_SAMPLES,
        committed,
        planned: true,
        still: committed == 0,
        retreating: false,
        at_start: false,
        setting_off: false,
    }
}

fn decide(offers: &[Offer], c: &Conflicts) -> Vec<Grant> {
    let mut a = Arbiter::new(offers.len());
    let mut out = vec![Grant::NONE; offers.len()];
    a.decide(offers, c, &mut out);
    out
}

#[test]
fn robots_that_meet_nobody_all_proceed_to_their_increments_end() {
    let offers = [offer(1, 2), offer(5, 3), offer(3, 0)];
    let g = decide(&offers, &Conflicts::new(3));
    for x in g {
        assert_eq!(x, Grant { state: GrantState::Proceed, last_sample: Some(MAX_SAMPLES - 1), held_by: None });
    }
}

#[test]
fn where_two_increments_cross_the_higher_proceeds_and_the_lower_holds_before_the_crossing() {
    let mut c = Conflicts::new(2);
    // Robot 0's sample 5 meets robot 1's sample 4: beyond both stopping paths.
    c.set(0, 5, 1, 4);
    let g = decide(&[offer(1, 2), offer(9, 2)], &c);
    assert_eq!(g[1].state, GrantState::Proceed);
    // Two samples short of the higher one's claim: one to keep out of it,
    // one of slack (samples shift from cycle to cycle).
    assert_eq!(g[0], Grant { state: GrantState::Hold, last_sample: Some(3), held_by: Some(1) });
    // Swapped priorities swap the roles.
    let g = decide(&[offer(9, 2), offer(1, 2)], &c);
    assert_eq!(g[0].state, GrantState::Proceed);
    assert_eq!(g[1], Grant { state: GrantState::Hold, last_sample: Some(2), held_by: Some(0) });
    // A tie goes to the lower index.
    let g = decide(&[offer(4, 2), offer(4, 2)], &c);
    assert_eq!((g[0].state, g[1].state), (GrantState::Proceed, GrantState::Hold));
}

#[test]
fn a_still_robot_in_the_way_of_a_higher_one_backs_away_and_the_higher_waits_short_of_it() {
    let mut c = Conflicts::new(2);
    // Robot 1 (high) would reach robot 0 where it stands at its sample 4.
    c.set(1, 4, 0, 0);
    let g = decide(&[offer(1, 0), offer(9, 2)], &c);
    assert_eq!(g[1], Grant { state: GrantState::Hold, last_sample: Some(3), held_by: Some(0) });
    assert_eq!(g[0], Grant { state: GrantState::BackAway, last_sample: None, held_by: Some(1) });
    // Moving, with its stopping path (to its sample 2) in the higher one's
    // way: the higher one waits short of it; it is held, and told so even
    // though it cannot stop short of the higher one's increment (the stop
    // decides that).
    let mut c = Conflicts::new(2);
    c.set(1, 4, 0, 2);
    let g = decide(&[offer(1, 2), offer(9, 2)], &c);
    assert_eq!(g[1], Grant { state: GrantState::Hold, last_sample: Some(3), held_by: Some(0) });
    assert_eq!(g[0], Grant { state: GrantState::Hold, last_sample: Some(0), held_by: Some(1) });
}

#[test]
fn a_robot_backing_away_runs_its_retreat_to_its_end_even_once_clear() {
    let mut a = Arbiter::new(2);
    let mut out = vec![Grant::NONE; 2];
    let mut in_way = Conflicts::new(2);
    in_way.set(1, 4, 0, 0);
    a.decide(&[offer(1, 0), offer(9, 2)], &in_way, &mut out);
    assert_eq!(out[0].state, GrantState::BackAway);
    // Out of the higher one's increment, moving back, its retreat not at
    // its end: it backs away on, and the higher one proceeds.
    let retreating = Offer { still: false, retreating: true, ..offer(1, 0) };
    a.decide(&[retreating, offer(9, 2)], &Conflicts::new(2), &mut out);
    assert_eq!(out[0], Grant { state: GrantState::BackAway, last_sample: None, held_by: Some(1) });
    assert_eq!(out[1].state, GrantState::Proceed);
    // The retreat at its end: it is granted its plan again.
    a.decide(&[offer(1, 0), offer(9, 2)], &Conflicts::new(2), &mut out);
    assert_eq!(out[0].state, GrantState::Proceed);
    // A retreat from a robot that is no longer on plan stops.
    a.decide(&[offer(1, 0), offer(9, 2)], &in_way, &mut out);
    let off_plan = Offer { planned: false, ..offer(9, 2) };
    a.decide(&[retreating, off_plan], &Conflicts::new(2), &mut out);
    assert_eq!(out[0].state, GrantState::Proceed);
}

#[test]
fn a_robot_standing_at_its_plans_start_in_the_way_does_not_hold_the_one_above() {
    let mut c = Conflicts::new(2);
    c.set(1, 4, 0, 0);
    let at_start = Offer { at_start: true, ..offer(1, 0) };
    let g = decide(&[at_start, offer(9, 2)], &c);
    // The one above proceeds (the stop check guards the pass); the one at
    // its start, where it stands in the one above's claim, holds there.
    assert_eq!(g[1].state, GrantState::Proceed);
    assert_eq!(g[0], Grant { state: GrantState::Hold, last_sample: None, held_by: Some(1) });
    // Not at its start, it would back away and hold the one above.
    let g = decide(&[offer(1, 0), offer(9, 2)], &c);
    assert_eq!(g[0].state, GrantState::BackAway);
    assert_eq!(g[1].state, GrantState::Hold);
}

#[test]
fn a_robot_without_a_plan_is_an_obstacle_its_stopping_path_long() {
    let mut c = Conflicts::new(2);
    c.set(0, 6, 1, 2);
    let unplanned = Offer {
        priority: 100,
        samples: 4,
        committed: 3,
        planned: false,
        still: false,
        retreating: false,
        at_start: false,
        setting_off: false,
    };
    let g = decide(&[offer(1, 2), unplanned], &c);
    assert_eq!(g[1], Grant::NONE);
    assert_eq!(g[0], Grant { state: GrantState::Hold, last_sample: Some(5), held_by: Some(1) });
}

#[test]
fn one_held_by_a_higher_robot_claims_only_its_grant_so_a_lower_one_may_pass_behind_it() {
    // 2 > 1 > 0. 2 cuts 1 at its sample 3; 0 crosses 1's path at 1's
    // sample 6, beyond 1's grant: 0 proceeds.
    let mut c = Conflicts::new(3);
    c.set(1, 4, 2, 4);
    c.set(0, 5, 1, 6);
    let g = decide(&[offer(1, 2), offer(5, 2), offer(9, 2)], &c);
    assert_eq!(g[2].state, GrantState::Proceed);
    assert_eq!(g[1], Grant { state: GrantState::Hold, last_sample: Some(2), held_by: Some(2) });
    assert_eq!(g[0].state, GrantState::Proceed);
    // Within 1's grant (its sample 2) it holds, one sample short (1 claims
    // no more than it is committed to: no slack).
    c.set(0, 3, 1, 2);
    let g = decide(&[offer(1, 2), offer(5, 2), offer(9, 2)], &c);
    assert_eq!(g[0], Grant { state: GrantState::Hold, last_sample: Some(2), held_by: Some(1) });
}

#[test]
fn committed_regions_that_meet_leave_no_grant_to_the_lower_one() {
    let mut c = Conflicts::new(2);
    c.set(0, 1, 1, 1);
    let g = decide(&[offer(1, 2), offer(9, 2)], &c);
    assert_eq!(g[1], Grant { state: GrantState::Hold, last_sample: Some(0), held_by: Some(0) });
    // (1 has the right of way and claims its whole increment: 0 is kept a
    // sample further back.)
    assert_eq!(g[0], Grant { state: GrantState::Hold, last_sample: None, held_by: Some(1) });
    c.set(0, 0, 1, 0);
    let g = decide(&[offer(1, 2), offer(9, 2)], &c);
    assert_eq!(g[0].last_sample, None);
}

#[test]
fn a_conflict_unset_is_gone_from_both_sides_and_the_others_stay() {
    let mut c = Conflicts::new(3);
    c.set(0, 2, 1, 5);
    c.set(0, 3, 1, 5);
    c.set(1, 0, 2, 0);
    c.unset(1, 5, 0, 2);
    assert!(!c.get(0, 2, 1, 5) && !c.get(1, 5, 0, 2));
    assert!(c.get(0, 3, 1, 5) && c.get(1, 5, 0, 3) && c.get(2, 0, 1, 0));
    assert_eq!((c.count(0, 1), c.count(1, 0), c.first_meeting(0, 1, 7)), (1, 1, Some(3)));
}

/// Sample `i` of robot `a` meets sample `j` of robot `b`.
type Meeting = (usize, usize, usize, usize);

fn arb_case() -> impl Strategy<Value = (Vec<Offer>, Vec<Meeting>)> {
    (2usize..6).prop_flat_map(|n| {
        let offer = (0i64..4, 1usize..=MAX_SAMPLES, 0usize..MAX_SAMPLES, any::<bool>(), any::<bool>()).prop_map(
            |(priority, samples, c, planned, still)| {
                let committed = if still { 0 } else { c.min(samples - 1) };
                Offer {
                    priority,
                    samples,
                    committed,
                    planned,
                    still,
                    retreating: false,
                    at_start: false,
                    setting_off: false,
                }
            },
        );
        let pair = (0..n, 0..MAX_SAMPLES, 0..n, 0..MAX_SAMPLES);
        (prop::collection::vec(offer, n), prop::collection::vec(pair, 0..12))
    })
}

proptest! {
    /// What two robots may occupy (granted, or committed where the grant
    /// falls short) meets only where both are committed: the arbiter never
    /// grants its way into a conflict. The highest robot whose increment
    /// meets nobody's committed samples proceeds. The same input gives the
    /// same answer.
    #[test]
    fn grants_never_meet_beyond_what_is_committed((offers, pairs) in arb_case()) {
        let n = offers.len();
        let mut c = Conflicts::new(n);
        for (a, i, b, j) in pairs {
            if a != b && i < offers[a].samples && j < offers[b].samples {
                c.set(a, i, b, j);
            }
        }
        let g = decide(&offers, &c);
        prop_assert_eq!(&g, &decide(&offers, &c));
        let occupied = |r: usize| -> usize {
            if !offers[r].planned || g[r].state == GrantState::BackAway {
                return offers[r].committed;
            }
            g[r].last_sample.map_or(offers[r].committed, |l| l.max(offers[r].committed))
        };
        for a in 0..n {
            for b in 0..n {
                if a == b {
                    continue;
                }
                for i in 0..=occupied(a) {
                    for j in 0..=occupied(b) {
                        if c.get(a, i, b, j) {
                            prop_assert!(i <= offers[a].committed && j <= offers[b].committed,
                                "{a}:{i} meets {b}:{j} outside what both are committed to: {g:?}");
                        }
                    }
                }
            }
        }
        let top = (0..n)
            .filter(|&r| offers[r].planned)
            .max_by(|&x, &y| offers[x].priority.cmp(&offers[y].priority).then(y.cmp(&x)));
        if let Some(t) = top {
            let clear = (0..n).filter(|&o| o != t).all(|o| c.first_meeting(t, o, offers[o].committed).is_none());
            if clear {
                prop_assert_eq!(g[t].state, GrantState::Proceed);
            }
        }
    }
}

#[test]
fn a_robot_at_its_start_gives_way_to_a_lower_one_already_on_its_way_until_its_plan_ends() {
    let mut a = Arbiter::new(2);
    a.set_give_way(true);
    let mut g = vec![Grant::NONE; 2];
    // Robot 1 (high) has just been given a plan; robot 0 (low) moves
    // through where robot 1's increment goes (its sample 5 meets robot 1's 3).
    let mut c = Conflicts::new(2);
    c.set(0, 5, 1, 3);
    let high_at_start = Offer { at_start: true, ..offer(9, 0) };
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), Some(0));
    assert_eq!(g[0], Grant { state: GrantState::Proceed, last_sample: Some(MAX_SAMPLES - 1), held_by: None });
    assert_eq!(g[1], Grant { state: GrantState::Hold, last_sample: Some(1), held_by: Some(0) });
    // It goes on giving way while the other is on its way, wherever their
    // increments are now.
    a.decide(&[offer(1, 2), high_at_start], &Conflicts::new(2), &mut g);
    assert_eq!(a.giving_way(1), Some(0));
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!((g[0].state, g[1].state), (GrantState::Proceed, GrantState::Hold));
    // Its plan done (or standing still): priorities as they are again.
    let done = Offer { planned: false, ..offer(1, 2) };
    a.decide(&[done, high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    a.decide(&[offer(1, 2), Offer { at_start: false, ..offer(9, 0) }], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!(g[1].state, GrantState::Proceed);
    // Not at its start (under way), it does not give way.
    a.decide(&[offer(1, 2), offer(9, 2)], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[1].state), (GrantState::Hold, GrantState::Proceed));
    // Off (the default): priority alone decides.
    let mut a = Arbiter::new(2);
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[1].state), (GrantState::Hold, GrantState::Proceed));
}

#[test]
fn a_robot_setting_off_gives_way_only_while_it_can_stop_short_of_the_lower_ones_increment() {
    let mut g = vec![Grant::NONE; 2];
    // Robot 1 (high) has moved off its plan's start (committed to its
    // samples 0..=2); robot 0 (low) is on its way, its sample 5 meeting
    // robot 1's sample 4: robot 1 can still stop short, and gives way.
    let mut c = Conflicts::new(2);
    c.set(0, 5, 1, 4);
    let setting_off = Offer { setting_off: true, ..offer(9, 2) };
    let mut a = Arbiter::new(2);
    a.set_give_way(true);
    a.decide(&[offer(1, 2), setting_off], &c, &mut g);
    assert_eq!(a.giving_way(1), Some(0));
    assert_eq!((g[0].state, g[1].state), (GrantState::Proceed, GrantState::Hold));
    // Once per plan: the other stood still (giving way ends), then moves
    // again: priority decides (two robots setting off would otherwise
    // take turns sending each other back).
    let standing = Offer { still: true, ..offer(1, 2) };
    a.decide(&[standing, setting_off], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    a.decide(&[offer(1, 2), setting_off], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[1].state), (GrantState::Hold, GrantState::Proceed));
    // Off plan between plans: it may give way again on the next.
    a.decide(&[offer(1, 2), Offer { planned: false, ..setting_off }], &c, &mut g);
    a.decide(&[offer(1, 2), setting_off], &c, &mut g);
    assert_eq!(a.giving_way(1), Some(0));
    // What it is committed to already meets the other's increment: it
    // goes on (giving way, it would be stopped inside that increment).
    c.set(0, 6, 1, 2);
    let mut a = Arbiter::new(2);
    a.set_give_way(true);
    a.decide(&[offer(1, 2), setting_off], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[1].state), (GrantState::Hold, GrantState::Proceed));
    // Past setting off, or with giving way off: priority alone decides.
    c.unset(0, 6, 1, 2);
    a.decide(&[offer(1, 2), offer(9, 2)], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    let mut a = Arbiter::new(2);
    a.decide(&[offer(1, 2), setting_off], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[1].state), (GrantState::Hold, GrantState::Proceed));
}

#[test]
fn a_robot_holds_at_the_edge_of_the_way_ahead_of_one_above_unless_committed_into_it() {
    let mut a = Arbiter::new(2);
    let mut g = vec![Grant::NONE; 2];
    let c = Conflicts::new(2);
    // Robot 1 (low) would enter, at its sample 5, where robot 0 (high)
    // goes past its increment (the way ahead's sample 2).
    a.ahead_pair(1, 0);
    a.ahead_mut().set(1, 5, 0, 2);
    a.decide(&[offer(9, 2), offer(1, 2)], &c, &mut g);
    assert_eq!(g[0], Grant { state: GrantState::Proceed, last_sample: Some(MAX_SAMPLES - 1), held_by: None });
    assert_eq!(g[1], Grant { state: GrantState::Hold, last_sample: Some(4), held_by: Some(0) });
    // Committed into it (it cannot stop short): the increments decide.
    a.decide(&[offer(9, 2), offer(1, 5)], &c, &mut g);
    assert_eq!(g[1].state, GrantState::Proceed);
    // The one above held itself (by robot 2, off plan, where its
    // sample 3 goes): the lower one is not kept out of its way ahead.
    let mut b = Arbiter::new(3);
    let mut g3 = vec![Grant::NONE; 3];
    let mut held = Conflicts::new(3);
    held.set(0, 3, 2, 0);
    b.ahead_pair(1, 0);
    b.ahead_mut().set(1, 5, 0, 2);
    let obstacle = Offer { planned: false, samples: 1, ..offer(20, 0) };
    b.decide(&[offer(9, 2), offer(1, 2), obstacle], &held, &mut g3);
    assert_eq!(g3[0].state, GrantState::Hold);
    assert_eq!(g3[1].state, GrantState::Proceed);
    // Priorities swapped since the table was filled: not read transposed.
    a.decide(&[offer(1, 1), offer(9, 2)], &c, &mut g);
    assert_eq!((g[0].state, g[1].state), (GrantState::Proceed, GrantState::Proceed));
    // An empty table: priority and increments alone.
    let mut d = Arbiter::new(2);
    d.decide(&[offer(9, 2), offer(1, 2)], &c, &mut g);
    assert_eq!((g[0].state, g[1].state), (GrantState::Proceed, GrantState::Proceed));
}

#[test]
fn a_robot_at_its_start_gives_way_only_to_one_caught_in_its_increment_that_was_under_way() {
    let mut g = vec![Grant::NONE; 2];
    let high_at_start = Offer { at_start: true, ..offer(9, 0) };
    // Robot 0 (low) on its way, committed to its samples 0..=2; its
    // sample 5 meets robot 1's sample 3: it can still stop short.
    let mut c = Conflicts::new(2);
    c.set(0, 5, 1, 3);
    let mut a = Arbiter::new(2);
    a.set_give_way_when_caught(true);
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), None, "one that can stop short is held as priority has it");
    assert_eq!((g[0].state, g[1].state), (GrantState::Hold, GrantState::Proceed));
    // Its committed sample 2 meets robot 1's increment: caught, it passes
    // first and robot 1 holds at its start.
    c.set(0, 2, 1, 4);
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), Some(0));
    assert_eq!(g[0].state, GrantState::Proceed);
    assert_eq!((g[1].state, g[1].held_by), (GrantState::Hold, Some(0)));
    // Setting off from its start, it goes on giving way while robot 0 is on its way.
    let setting_off = Offer { setting_off: true, ..offer(9, 1) };
    a.decide(&[offer(1, 2), setting_off], &c, &mut g);
    assert_eq!(a.giving_way(1), Some(0));
    // Off: priority alone decides. Robot 0 is held (it cannot stop short:
    // the stop acts) and robot 1 is held short of where robot 0 is
    // committed to go all the same.
    let mut a = Arbiter::new(2);
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[1].state, g[1].held_by), (GrantState::Hold, GrantState::Hold, Some(0)));
    // Two setting off together: robot 0 was at its start too while robot 1
    // stood at its start, so robot 1 (higher) does not give way once both
    // are moving, caught or not.
    let mut a = Arbiter::new(2);
    a.set_give_way_when_caught(true);
    let low_at_start = Offer { at_start: true, ..offer(1, 0) };
    a.decide(&[low_at_start, high_at_start], &c, &mut g);
    a.decide(&[Offer { setting_off: true, ..offer(1, 2) }, setting_off], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[0].held_by), (GrantState::Hold, Some(1)));
}

#[test]
fn a_robot_setting_off_does_not_give_way_to_one_that_began_its_next_plan_after_it() {
    let mut g = vec![Grant::NONE; 2];
    // Robot 0 (low) on its way while robot 1 (high) stands at its start;
    // robot 0 can stop short of robot 1's increment.
    let mut c = Conflicts::new(2);
    c.set(0, 5, 1, 3);
    let mut a = Arbiter::new(2);
    a.set_give_way_when_caught(true);
    a.decide(&[offer(1, 2), Offer { at_start: true, ..offer(9, 0) }], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    // Robot 1 sets off; robot 0 ends that plan and stands at its next
    // one's start, in robot 1's increment (where it stands meets it).
    let setting_off = Offer { setting_off: true, ..offer(9, 1) };
    c.set(0, 0, 1, 4);
    let low_at_start = Offer { at_start: true, ..offer(1, 0) };
    a.decide(&[low_at_start, setting_off], &c, &mut g);
    // It came second: robot 1 goes on, robot 0 waits at its start.
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[0].held_by, g[1].state), (GrantState::Hold, Some(1), GrantState::Proceed));
    a.decide(&[low_at_start, setting_off], &c, &mut g);
    assert_eq!((a.giving_way(1), g[1].state), (None, GrantState::Proceed));
    // Had robot 0 still been under way on the plan it was on, caught
    // there, robot 1 would have let it through.
    let mut b = Arbiter::new(2);
    b.set_give_way_when_caught(true);
    let mut c = Conflicts::new(2);
    c.set(0, 5, 1, 3);
    b.decide(&[offer(1, 2), Offer { at_start: true, ..offer(9, 0) }], &c, &mut g);
    c.set(0, 2, 1, 4);
    b.decide(&[offer(1, 2), setting_off], &c, &mut g);
    assert_eq!(b.giving_way(1), Some(0));
}

#[test]
fn a_robot_does_not_give_way_to_one_whose_plan_ends_in_its_way() {
    let mut g = vec![Grant::NONE; 2];
    let high_at_start = Offer { at_start: true, ..offer(9, 0) };
    // Robot 0 (low) on its way and caught in robot 1's increment (its
    // committed sample 2 meets it): robot 1 gives way.
    let mut c = Conflicts::new(2);
    c.set(0, 2, 1, 4);
    let mut a = Arbiter::new(2);
    a.set_give_way_when_caught(true);
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), Some(0));
    // Robot 0's plan ends where robot 1's still has to pass: let through,
    // it would park there. Priority alone decides, as with giving way
    // off: robot 0 is held (the stop acts) and robot 1 held short of
    // where robot 0 is committed to go.
    let mut a = Arbiter::new(2);
    a.set_give_way_when_caught(true);
    a.set_ends_in_way(1, 0, true);
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), None);
    assert_eq!((g[0].state, g[1].state, g[1].held_by), (GrantState::Hold, GrantState::Hold, Some(0)));
    // The finding for the other order of the pair changes nothing.
    let mut a = Arbiter::new(2);
    a.set_give_way_when_caught(true);
    a.set_ends_in_way(0, 1, true);
    a.decide(&[offer(1, 2), high_at_start], &c, &mut g);
    assert_eq!(a.giving_way(1), Some(0));
    // Out of range: ignored.
    a.set_ends_in_way(2, 0, true);
}
