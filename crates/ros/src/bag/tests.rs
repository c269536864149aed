use super::*;
use crate::msg::Header;
use crate::topics::{Role, Topics};
use std::io::Cursor;

fn topics() -> Topics {
    Topics {
        all: vec![
            ("/left/joint_states".into(), Role::JointState(0)),
            ("/left/planned_trajectory".into(), Role::Plan(0)),
            ("/unit_a/path_request".into(), Role::PathRequest(0)),
            ("/left/stop".into(), Role::Stop(0)),
            ("/left/grant".into(), Role::ArmGrant(0)),
            ("/workcell_guard/cycle".into(), Role::Cycle),
        ],
    }
}

fn state(t: u32, q: f64) -> JointState {
    JointState {
        header: Header { stamp: Time { sec: 5, nanosec: t }, frame_id: String::new() },
        name: vec!["a".into(), "b".into()],
        position: vec![q, -q],
        velocity: vec![],
        effort: vec![],
    }
}

#[test]
fn a_written_bag_reads_back_in_log_time_order_with_foreign_topics_counted() {
    let mut buf = Cursor::new(Vec::new());
    {
        let mut w = BagWriter::new(&mut buf, Path::new("mem.mcap")).unwrap();
        w.write("/left/joint_states", 30, &state(30, 0.5)).unwrap();
        w.write("/left/planned_trajectory", 10, &JointTrajectory::default()).unwrap();
        w.write("/other/speed", 20, &Float64 { data: 2.5 }).unwrap();
        w.write("/workcell_guard/cycle", 40, &Time { sec: 0, nanosec: 40 }).unwrap();
        w.write("/left/stop", 60, &Bool { data: true }).unwrap();
        w.call(45, &Call::SetPriority { robot: "left".into(), priority: 3 }).unwrap();
        w.call(44, &Call::Param { name: "clearance_m".into(), value: "0.02".into() }).unwrap();
        w.finish().unwrap();
    }
    let rec = read_bytes(buf.get_ref(), Path::new("mem.mcap"), &topics()).unwrap();
    assert_eq!(rec.profile, "ros2");
    let times: Vec<u64> = rec.entries.iter().map(|e| e.log_time_ns).collect();
    assert_eq!(times, [10, 30, 40, 60]);
    assert_eq!(rec.entries[1].msg, Msg::JointState(state(30, 0.5)));
    assert_eq!(rec.entries[1].role, Role::JointState(0));
    assert_eq!(rec.entries[3].msg, Msg::Bool(Bool { data: true }));
    assert_eq!(rec.skipped.get("/other/speed"), Some(&1));
    assert_eq!(
        rec.calls,
        [
            (44, Call::Param { name: "clearance_m".into(), value: "0.02".into() }),
            (45, Call::SetPriority { robot: "left".into(), priority: 3 })
        ]
    );
}

/// A bag with one channel as given, on a topic of the cell.
fn one_channel(topic: &str, schema: &str, encoding: &str, data: &[u8]) -> Vec<u8> {
    let mut buf = Cursor::new(Vec::new());
    {
        let mut w = mcap::WriteOptions::new().profile("ros2").create(&mut buf).unwrap();
        let s = w.add_schema(schema, "ros2msg", b"bool data\n").unwrap();
        let c = w.add_channel(s, topic, encoding, &BTreeMap::new()).unwrap();
        let h = mcap::records::MessageHeader { channel_id: c, sequence: 1, log_time: 5, publish_time: 5 };
        w.write_to_known_channel(&h, data).unwrap();
        w.finish().unwrap();
    }
    buf.into_inner()
}

#[test]
fn bad_bags_get_specific_errors_naming_the_file_and_topic() {
    let p = Path::new("bad.mcap");
    let ok_bool = [0x00, 0x01, 0x00, 0x00, 0x01];
    let e = read_bytes(&one_channel("/left/stop", "std_msgs/msg/Bool", "json", &ok_bool), p, &topics()).unwrap_err();
    assert!(matches!(&e, BagError::Encoding { what: "message encoding", found, .. } if found == "json"), "{e}");
    assert!(e.to_string().contains("/left/stop"), "{e}");
    let e = read_bytes(&one_channel("/left/stop", "std_msgs/msg/String", "cdr", &ok_bool), p, &topics()).unwrap_err();
    assert!(matches!(&e, BagError::Encoding { what: "schema", .. }), "{e}");
    let xcdr2 = [0x00, 0x07, 0x00, 0x00, 0x01];
    let e = read_bytes(&one_channel("/left/stop", "std_msgs/msg/Bool", "cdr", &xcdr2), p, &topics()).unwrap_err();
    assert!(matches!(&e, BagError::Decode { index: 0, .. }), "{e}");
    assert!(e.to_string().contains("not plain CDR"), "{e}");
    let short = [0x00, 0x01];
    let e = read_bytes(&one_channel("/left/stop", "std_msgs/msg/Bool", "cdr", &short), p, &topics()).unwrap_err();
    assert!(matches!(&e, BagError::Decode { .. }), "{e}");
    // The same channel on a topic the cell does not use: skipped, counted.
    let rec = read_bytes(&one_channel("/else/stop", "std_msgs/msg/String", "json", &short), p, &topics()).unwrap();
    assert_eq!((rec.entries.len(), rec.skipped.get("/else/stop")), (0, Some(&1)));
    let e = read_bytes(b"not an mcap file at all", p, &topics()).unwrap_err();
    assert!(matches!(&e, BagError::Corrupt { messages: 0, .. }), "{e}");
}

#[test]
fn a_truncated_bag_is_refused_with_how_far_it_was_read() {
    let mut buf = Cursor::new(Vec::new());
    {
        // Small chunks, so that the messages before the cut can be read.
        let mut w = BagWriter::with_chunk_size(&mut buf, Path::new("cut.mcap"), 64).unwrap();
        for k in 0..200u32 {
            w.write("/left/joint_states", u64::from(k) * 1000, &state(k, f64::from(k))).unwrap();
        }
        w.finish().unwrap();
    }
    let whole = buf.into_inner();
    let cut = &whole[..whole.len() / 2];
    let e = read_bytes(cut, Path::new("cut.mcap"), &topics()).unwrap_err();
    let BagError::Corrupt { messages, .. } = &e else { panic!("{e}") };
    assert!((40..200).contains(messages), "{e}");
    assert!(e.to_string().contains("cut.mcap"), "{e}");
}
