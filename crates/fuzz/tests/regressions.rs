//! Every seed, and every input a fuzzer once crashed or hung on
//! (`regressions/<target>/`), through its target: each returns.

use workcell_guard_fuzz::{TARGETS, seeds, target};

#[test]
fn every_target_has_seeds_and_takes_them() {
    for (name, run) in TARGETS {
        let s = seeds(name);
        assert!(!s.is_empty(), "{name}: no seeds");
        for input in &s {
            run(input);
        }
    }
}

#[test]
fn inputs_that_once_crashed_are_taken() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut taken = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let run = target(&name).unwrap_or_else(|| panic!("regressions/{name}: no such target"));
        for f in std::fs::read_dir(entry.path()).unwrap() {
            let path = f.unwrap().path();
            run(&std::fs::read(&path).unwrap());
            taken += 1;
        }
    }
    eprintln!("{taken} regression inputs taken");
}

#[test]
fn the_message_seeds_reach_every_input_and_call() {
    let rich = &seeds("messages")[1];
    let rec = workcell_guard_fuzz::records(rich);
    let mut roles: Vec<String> = rec.entries.iter().map(|e| format!("{:?}", e.role)).collect();
    roles.sort();
    roles.dedup();
    // Both arms' joint states and the first's plan, the cloud, and a platen
    // unit's pose, move and path requests: all decoded.
    assert!(roles.len() >= 7, "decoded roles: {roles:?}");
    assert_eq!(rec.calls.len(), 3, "{:?}", rec.calls);
}

#[test]
fn the_crashes_fuzzing_found_are_refused_with_their_reason() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    // mesh-loader reached a `todo!()` on this COLLADA file.
    let dae = std::fs::read(dir.join("mesh/collada-todo-in-positions")).unwrap();
    let e = workcell_guard_description::mesh::load_bytes(&dae[1..], std::path::Path::new("f.dae"), [1.0; 3]);
    let e = e.map(drop).expect_err("refused").to_string();
    assert!(e.contains("mesh parser failed"), "{e}");
    assert!(!workcell_guard_description::contain::active());
    // ... and looked up a source the file does not have.
    let dae = std::fs::read(dir.join("mesh/collada-missing-source-key")).unwrap();
    let e = workcell_guard_description::mesh::load_bytes(&dae[1..], std::path::Path::new("f.dae"), [1.0; 3]);
    assert!(e.map(drop).expect_err("refused").to_string().contains("mesh parser failed"));
    // A shape whose element count times the item size overflowed.
    let npy = std::fs::read(dir.join("npy/shape-times-item-size-overflows")).unwrap();
    assert_eq!(workcell_guard_description::npy::decode(&npy).err().as_deref(), Some("shape overflows"));
    // A record inside a compressed MCAP chunk claimed 192 PiB; mcap's
    // message stream reserved that much and aborted the process.
    let bag = std::fs::read(dir.join("mcap/record-claims-192-pib")).unwrap();
    let cell =
        workcell_guard_description::workcell::load(&workcell_guard_fuzz::repo().join("config/workcell.yaml")).unwrap();
    let topics = workcell_guard_ros::topics::Topics::new(&Default::default(), &cell);
    let e = workcell_guard_ros::bag::read_bytes(&bag, std::path::Path::new("f.mcap"), &topics);
    let e = e.map(drop).expect_err("refused").to_string();
    assert!(e.contains("not a readable MCAP file") && e.contains("exceeds limit"), "{e}");
    // mcap's record parser sliced past a record's end and panicked.
    let bag = std::fs::read(dir.join("mcap/record-parser-slice-panic")).unwrap();
    let e = workcell_guard_ros::bag::read_bytes(&bag, std::path::Path::new("f.mcap"), &topics);
    let e = e.map(drop).expect_err("refused").to_string();
    assert!(e.contains("not a readable MCAP file"), "{e}");
    assert!(!workcell_guard_description::contain::active());
    // Log times years apart: the replay cycled through every 2 ms between
    // them, its decisions filling gigabytes. Now each gap is cycled through
    // for 10 s, the rest skipped.
    let bag = std::fs::read(dir.join("mcap/log-times-far-apart")).unwrap();
    let rec = workcell_guard_ros::bag::read_bytes(&bag, std::path::Path::new("f.mcap"), &topics).unwrap();
    let span_s = rec.entries.last().unwrap().log_time_ns.abs_diff(rec.entries[0].log_time_ns) as f64 * 1e-9;
    assert!(span_s > 1e3, "{span_s} s");
    let r = workcell_guard_fuzz::replay_on_sample(&rec).unwrap();
    assert!(r.idle_skipped_s > 1e3 && r.cycles < 50_000, "{} s skipped, {} cycles", r.idle_skipped_s, r.cycles);
}

#[test]
fn the_parameter_set_seeds_decode_in_both_mappings_and_pass_the_checks() {
    use ros2_client::rcl_interfaces::SetParametersRequest;
    use workcell_guard_ros::dds::services::decode_request_bytes;
    let sets: Vec<Vec<u8>> = seeds("service_requests").into_iter().filter(|s| s[0] & 7 == 5).collect();
    assert_eq!(sets.len(), 3, "plain, enhanced and Cyclone");
    let cell =
        workcell_guard_description::workcell::load(&workcell_guard_fuzz::repo().join("config/workcell.yaml")).unwrap();
    for s in &sets {
        let q: SetParametersRequest = decode_request_bytes(&s[1..], false, s[0] & 16 != 0).unwrap();
        assert_eq!(q.parameter.len(), 3);
        let p = workcell_guard_ros::dds::param_services::check_set(&cell, &Default::default(), &q.parameter).unwrap();
        assert!(p.cycle_on_joint_state);
    }
}
