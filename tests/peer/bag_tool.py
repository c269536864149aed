"""An independent rosbag2 MCAP writer and reader for the recording tests
(`mcap` and `mcap-ros2-support` from PyPI: their own CDR encoder and
decoder, and the message definitions written out here, not the node's).

  bag_tool.py write IN.json OUT.mcap   messages listed in IN.json, written
                                       as rosbag2 writes them (profile ros2,
                                       ros2msg schemas, CDR, zstd chunks)
  bag_tool.py read IN.mcap OUT.json    every message decoded by its schema:
                                       topics, schema names, counts, the
                                       profile, and each Bool's value and
                                       each grant's state in order

IN.json: {"messages": [{"topic", "type", "log_time_ns", "msg"}]} where type
is one of the keys of DEFINITIONS and msg holds the message's fields.
"""

import json
import sys

RULE = "=" * 80
HEADER = "builtin_interfaces/Time stamp\nstring frame_id\n"
TIME = "int32 sec\nuint32 nanosec\n"

DEFINITIONS = {
    "sensor_msgs/msg/JointState": (
        "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n"
        f"{RULE}\nMSG: std_msgs/Header\n{HEADER}{RULE}\nMSG: builtin_interfaces/Time\n{TIME}"
    ),
    "trajectory_msgs/msg/JointTrajectory": (
        "std_msgs/Header header\nstring[] joint_names\nJointTrajectoryPoint[] points\n"
        f"{RULE}\nMSG: std_msgs/Header\n{HEADER}{RULE}\nMSG: builtin_interfaces/Time\n{TIME}"
        f"{RULE}\nMSG: trajectory_msgs/JointTrajectoryPoint\n"
        "float64[] positions\nfloat64[] velocities\nfloat64[] accelerations\nfloat64[] effort\n"
        "builtin_interfaces/Duration time_from_start\n"
        f"{RULE}\nMSG: builtin_interfaces/Duration\n{TIME}"
    ),
    "std_msgs/msg/String": "string data\n",
}


def write(spec_path, out_path):
    from mcap_ros2.writer import Writer

    with open(spec_path) as f:
        spec = json.load(f)
    schemas = {}
    with open(out_path, "wb") as f:
        w = Writer(f)
        for m in spec["messages"]:
            t = m["type"]
            if t not in schemas:
                schemas[t] = w.register_msgdef(t, DEFINITIONS[t])
            w.write_message(m["topic"], schemas[t], m["msg"], log_time=m["log_time_ns"],
                            publish_time=m["log_time_ns"])
        w.finish()


def read(bag_path, out_path):
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    counts = {}
    bools = {}
    grants = {}
    with open(bag_path, "rb") as f:
        r = make_reader(f, decoder_factories=[DecoderFactory()])
        profile = r.get_header().profile
        for schema, channel, _message, m in r.iter_decoded_messages():
            key = f"{channel.topic} {schema.name} {schema.encoding} {channel.message_encoding}"
            counts[key] = counts.get(key, 0) + 1
            if schema.name == "std_msgs/msg/Bool":
                bools.setdefault(channel.topic, []).append(bool(m.data))
            if schema.name == "workcell_guard_msgs/msg/ManipulatorGrant":
                grants.setdefault(channel.topic, []).append(int(m.state))
    with open(out_path, "w") as f:
        json.dump({"profile": profile, "counts": counts, "bools": bools, "grants": grants}, f)


if __name__ == "__main__":
    mode, a, b = sys.argv[1:4]
    {"write": write, "read": read}[mode](a, b)
