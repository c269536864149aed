//! The message definitions a rosbag2 MCAP carries with each channel
//! (schema encoding `ros2msg`): the type's `.msg` text, then each type it
//! uses, at any depth, once, after a line of 80 `=` and `MSG: pkg/Name`
//! (the concatenation rosbag2 writes and MCAP's registry describes).
//! Standard types as their packages define them; ours from
//! `interfaces/workcell_guard_msgs`.

/// One message type's own `.msg` text and the types it names.
struct Def {
    /// `pkg/Name`.
    name: &'static str,
    text: &'static str,
    uses: &'static [&'static str],
}

const DEFS: &[Def] = &[
    Def { name: "builtin_interfaces/Time", text: "int32 sec\nuint32 nanosec\n", uses: &[] },
    Def { name: "builtin_interfaces/Duration", text: "int32 sec\nuint32 nanosec\n", uses: &[] },
    Def {
        name: "std_msgs/Header",
        text: "builtin_interfaces/Time stamp\nstring frame_id\n",
        uses: &["builtin_interfaces/Time"],
    },
    Def { name: "std_msgs/Bool", text: "bool data\n", uses: &[] },
    Def { name: "std_msgs/Float64", text: "float64 data\n", uses: &[] },
    Def { name: "control_msgs/SpeedScalingFactor", text: "float64 factor\n", uses: &[] },
    Def { name: "geometry_msgs/Pose2D", text: "float64 x\nfloat64 y\nfloat64 theta\n", uses: &[] },
    Def { name: "geometry_msgs/Point", text: "float64 x\nfloat64 y\nfloat64 z\n", uses: &[] },
    Def { name: "geometry_msgs/Quaternion", text: "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n", uses: &[] },
    Def {
        name: "geometry_msgs/Pose",
        text: "geometry_msgs/Point position\ngeometry_msgs/Quaternion orientation\n",
        uses: &["geometry_msgs/Point", "geometry_msgs/Quaternion"],
    },
    Def {
        name: "geometry_msgs/PoseStamped",
        text: "std_msgs/Header header\ngeometry_msgs/Pose pose\n",
        uses: &["std_msgs/Header", "geometry_msgs/Pose"],
    },
    Def {
        name: "sensor_msgs/JointState",
        text: "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n",
        uses: &["std_msgs/Header"],
    },
    Def {
        name: "sensor_msgs/PointField",
        text: "uint8 INT8 = 1\nuint8 UINT8 = 2\nuint8 INT16 = 3\nuint8 UINT16 = 4\nuint8 INT32 = 5\nuint8 UINT32 = 6\n\
               uint8 FLOAT32 = 7\nuint8 FLOAT64 = 8\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n",
        uses: &[],
    },
    Def {
        name: "sensor_msgs/PointCloud2",
        text: "std_msgs/Header header\nuint32 height\nuint32 width\nsensor_msgs/PointField[] fields\nbool is_bigendian\n\
               uint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n",
        uses: &["std_msgs/Header", "sensor_msgs/PointField"],
    },
    Def {
        name: "trajectory_msgs/JointTrajectoryPoint",
        text: "float64[] positions\nfloat64[] velocities\nfloat64[] accelerations\nfloat64[] effort\n\
               builtin_interfaces/Duration time_from_start\n",
        uses: &["builtin_interfaces/Duration"],
    },
    Def {
        name: "trajectory_msgs/JointTrajectory",
        text: "std_msgs/Header header\nstring[] joint_names\ntrajectory_msgs/JointTrajectoryPoint[] points\n",
        uses: &["std_msgs/Header", "trajectory_msgs/JointTrajectoryPoint"],
    },
    Def {
        name: "workcell_guard_msgs/ManipulatorGrant",
        text: include_str!("../../../../interfaces/workcell_guard_msgs/msg/ManipulatorGrant.msg"),
        uses: &["std_msgs/Header", "builtin_interfaces/Time", "builtin_interfaces/Duration"],
    },
    Def {
        name: "workcell_guard_msgs/PlatenGrant",
        text: include_str!("../../../../interfaces/workcell_guard_msgs/msg/PlatenGrant.msg"),
        uses: &["std_msgs/Header", "geometry_msgs/Pose2D"],
    },
    Def {
        name: "workcell_guard_msgs/PlatenMoveRequest",
        text: include_str!("../../../../interfaces/workcell_guard_msgs/msg/PlatenMoveRequest.msg"),
        uses: &["std_msgs/Header", "geometry_msgs/Pose2D"],
    },
    Def {
        name: "workcell_guard_msgs/PlatenPathRequest",
        text: include_str!("../../../../interfaces/workcell_guard_msgs/msg/PlatenPathRequest.msg"),
        uses: &["std_msgs/Header", "geometry_msgs/Pose2D"],
    },
];

const RULE: &str = "================================================================================";

fn def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name == name)
}

/// The concatenated definition of `pkg/Name` (or `pkg/msg/Name`), or
/// `None` for a type this table does not hold.
pub fn definition(name: &str) -> Option<String> {
    let top = def(&short_name(name))?;
    let mut out = top.text.to_string();
    let mut seen: Vec<&str> = vec![top.name];
    let mut todo: Vec<&str> = top.uses.iter().rev().copied().collect();
    while let Some(n) = todo.pop() {
        if seen.contains(&n) {
            continue;
        }
        seen.push(n);
        let d = def(n)?;
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(RULE);
        out.push_str("\nMSG: ");
        out.push_str(d.name);
        out.push('\n');
        out.push_str(d.text);
        todo.extend(d.uses.iter().rev());
    }
    Some(out)
}

/// `pkg/msg/Name` as `pkg/Name` (a name without `msg/` as it is).
pub fn short_name(name: &str) -> String {
    match name.split('/').collect::<Vec<_>>()[..] {
        [pkg, "msg", n] => format!("{pkg}/{n}"),
        _ => name.to_string(),
    }
}

/// `pkg/Name` as rosbag2 names a schema: `pkg/msg/Name`.
pub fn bag_name(name: &str) -> String {
    match name.split('/').collect::<Vec<_>>()[..] {
        [pkg, n] => format!("{pkg}/msg/{n}"),
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_named_is_defined_and_each_dependency_comes_once() {
        for d in DEFS {
            let text = definition(d.name).unwrap_or_else(|| panic!("{} has an undefined dependency", d.name));
            for u in d.uses {
                assert_eq!(text.matches(&format!("MSG: {u}\n")).count(), 1, "{}: {u}", d.name);
            }
        }
        let js = definition("sensor_msgs/msg/JointState").unwrap();
        assert!(js.starts_with("std_msgs/Header header\n"));
        assert!(js.contains("MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"), "{js}");
        assert_eq!(definition("nav_msgs/msg/Odometry"), None);
        assert_eq!(bag_name("sensor_msgs/JointState"), "sensor_msgs/msg/JointState");
    }
}
