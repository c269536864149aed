"""ROS 2 message types for the Eclipse Cyclone DDS Python binding, written
for the workcell_guard tests from the .msg definitions (Humble/Jazzy wire
layout): the DDS type names rosidl generates (`pkg::msg::dds_::Name_`),
`final` extensibility, sent as XCDR1 (see QOS_* below), so that a ROS 2
node — ours, or any other — reads them as its own."""

import json
import sys
from dataclasses import dataclass, field

import cyclonedds.idl as idl
import cyclonedds.idl.annotations as annotate
from cyclonedds.core import Policy, Qos
from cyclonedds.idl.types import array, float32, float64, int32, int64, sequence, uint8, uint32, uint64
from cyclonedds.util import duration


def _name(pkg, kind, name):
    return f"{pkg}::{kind}::dds_::{name}_"


@dataclass
@annotate.final
class Time(idl.IdlStruct, typename=_name("builtin_interfaces", "msg", "Time")):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
@annotate.final
class Duration(idl.IdlStruct, typename=_name("builtin_interfaces", "msg", "Duration")):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
@annotate.final
class Clock(idl.IdlStruct, typename=_name("rosgraph_msgs", "msg", "Clock")):
    clock: Time = field(default_factory=Time)


@dataclass
@annotate.final
class Header(idl.IdlStruct, typename=_name("std_msgs", "msg", "Header")):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
@annotate.final
class Bool(idl.IdlStruct, typename=_name("std_msgs", "msg", "Bool")):
    data: bool = False


@dataclass
@annotate.final
class JointState(idl.IdlStruct, typename=_name("sensor_msgs", "msg", "JointState")):
    header: Header = field(default_factory=Header)
    name: sequence[str] = field(default_factory=list)
    position: sequence[float64] = field(default_factory=list)
    velocity: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)


@dataclass
@annotate.final
class JointTrajectoryPoint(idl.IdlStruct, typename=_name("trajectory_msgs", "msg", "JointTrajectoryPoint")):
    positions: sequence[float64] = field(default_factory=list)
    velocities: sequence[float64] = field(default_factory=list)
    accelerations: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)
    time_from_start: Duration = field(default_factory=Duration)


@dataclass
@annotate.final
class JointTrajectory(idl.IdlStruct, typename=_name("trajectory_msgs", "msg", "JointTrajectory")):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    points: sequence[JointTrajectoryPoint] = field(default_factory=list)


@dataclass
@annotate.final
class KeyValue(idl.IdlStruct, typename=_name("diagnostic_msgs", "msg", "KeyValue")):
    key: str = ""
    value: str = ""


@dataclass
@annotate.final
class DiagnosticStatus(idl.IdlStruct, typename=_name("diagnostic_msgs", "msg", "DiagnosticStatus")):
    level: uint8 = 0
    name: str = ""
    message: str = ""
    hardware_id: str = ""
    values: sequence[KeyValue] = field(default_factory=list)


@dataclass
@annotate.final
class DiagnosticArray(idl.IdlStruct, typename=_name("diagnostic_msgs", "msg", "DiagnosticArray")):
    header: Header = field(default_factory=Header)
    status: sequence[DiagnosticStatus] = field(default_factory=list)


@dataclass
@annotate.final
class Point(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "Point")):
    x: float64 = 0.0
    y: float64 = 0.0
    z: float64 = 0.0


@dataclass
@annotate.final
class Vector3(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "Vector3")):
    x: float64 = 0.0
    y: float64 = 0.0
    z: float64 = 0.0


@dataclass
@annotate.final
class Quaternion(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "Quaternion")):
    x: float64 = 0.0
    y: float64 = 0.0
    z: float64 = 0.0
    w: float64 = 1.0


@dataclass
@annotate.final
class Pose(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "Pose")):
    position: Point = field(default_factory=Point)
    orientation: Quaternion = field(default_factory=Quaternion)


@dataclass
@annotate.final
class ColorRGBA(idl.IdlStruct, typename=_name("std_msgs", "msg", "ColorRGBA")):
    r: float32 = 0.0
    g: float32 = 0.0
    b: float32 = 0.0
    a: float32 = 0.0


@dataclass
@annotate.final
class CompressedImage(idl.IdlStruct, typename=_name("sensor_msgs", "msg", "CompressedImage")):
    header: Header = field(default_factory=Header)
    format: str = ""
    data: sequence[uint8] = field(default_factory=list)


@dataclass
@annotate.final
class UVCoordinate(idl.IdlStruct, typename=_name("visualization_msgs", "msg", "UVCoordinate")):
    u: float32 = 0.0
    v: float32 = 0.0


@dataclass
@annotate.final
class MeshFile(idl.IdlStruct, typename=_name("visualization_msgs", "msg", "MeshFile")):
    filename: str = ""
    data: sequence[uint8] = field(default_factory=list)


@dataclass
@annotate.final
class Marker(idl.IdlStruct, typename=_name("visualization_msgs", "msg", "Marker")):
    header: Header = field(default_factory=Header)
    ns: str = ""
    id: int32 = 0
    type: int32 = 0
    action: int32 = 0
    pose: Pose = field(default_factory=Pose)
    scale: Vector3 = field(default_factory=Vector3)
    color: ColorRGBA = field(default_factory=ColorRGBA)
    lifetime: Duration = field(default_factory=Duration)
    frame_locked: bool = False
    points: sequence[Point] = field(default_factory=list)
    colors: sequence[ColorRGBA] = field(default_factory=list)
    texture_resource: str = ""
    texture: CompressedImage = field(default_factory=CompressedImage)
    uv_coordinates: sequence[UVCoordinate] = field(default_factory=list)
    text: str = ""
    mesh_resource: str = ""
    mesh_file: MeshFile = field(default_factory=MeshFile)
    mesh_use_embedded_materials: bool = False


@dataclass
@annotate.final
class MarkerArray(idl.IdlStruct, typename=_name("visualization_msgs", "msg", "MarkerArray")):
    markers: sequence[Marker] = field(default_factory=list)


@dataclass
@annotate.final
class ParameterValue(idl.IdlStruct, typename=_name("rcl_interfaces", "msg", "ParameterValue")):
    type: uint8 = 0
    bool_value: bool = False
    integer_value: int64 = 0
    double_value: float64 = 0.0
    string_value: str = ""
    byte_array_value: sequence[uint8] = field(default_factory=list)
    bool_array_value: sequence[bool] = field(default_factory=list)
    integer_array_value: sequence[int64] = field(default_factory=list)
    double_array_value: sequence[float64] = field(default_factory=list)
    string_array_value: sequence[str] = field(default_factory=list)


PARAMETER_DOUBLE = 3


@dataclass
@annotate.final
class Parameter(idl.IdlStruct, typename=_name("rcl_interfaces", "msg", "Parameter")):
    name: str = ""
    value: ParameterValue = field(default_factory=ParameterValue)


@dataclass
@annotate.final
class SetParametersResult(idl.IdlStruct, typename=_name("rcl_interfaces", "msg", "SetParametersResult")):
    successful: bool = False
    reason: str = ""


@dataclass
@annotate.final
class SetParameters_Request(idl.IdlStruct, typename=_name("rcl_interfaces", "srv", "SetParameters_Request")):
    parameters: sequence[Parameter] = field(default_factory=list)


@dataclass
@annotate.final
class SetParameters_Response(idl.IdlStruct, typename=_name("rcl_interfaces", "srv", "SetParameters_Response")):
    results: sequence[SetParametersResult] = field(default_factory=list)


@dataclass
@annotate.final
class Pose2D(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "Pose2D")):
    x: float64 = 0.0
    y: float64 = 0.0
    theta: float64 = 0.0


@dataclass
@annotate.final
class PoseStamped(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "PoseStamped")):
    header: Header = field(default_factory=Header)
    pose: Pose = field(default_factory=Pose)


@dataclass
@annotate.final
class PlatenMoveRequest(idl.IdlStruct, typename=_name("workcell_guard_msgs", "msg", "PlatenMoveRequest")):
    header: Header = field(default_factory=Header)
    request_id: uint64 = 0
    target: Pose2D = field(default_factory=Pose2D)


@dataclass
@annotate.final
class PlatenPathRequest(idl.IdlStruct, typename=_name("workcell_guard_msgs", "msg", "PlatenPathRequest")):
    header: Header = field(default_factory=Header)
    unit: str = ""
    request_id: uint32 = 0
    waypoints: sequence[Pose2D] = field(default_factory=list)
    speed_mps: float64 = 0.0


@dataclass
@annotate.final
class PlatenGrant(idl.IdlStruct, typename=_name("workcell_guard_msgs", "msg", "PlatenGrant")):
    header: Header = field(default_factory=Header)
    request_id: uint64 = 0
    result: uint8 = 0
    goal: Pose2D = field(default_factory=Pose2D)
    fraction: float64 = 0.0
    retry_after_s: float64 = 0.0
    blocker: str = ""
    reason: str = ""


@dataclass
@annotate.final
class ManipulatorGrant(idl.IdlStruct, typename=_name("workcell_guard_msgs", "msg", "ManipulatorGrant")):
    header: Header = field(default_factory=Header)
    robot: str = ""
    plan_stamp: Time = field(default_factory=Time)
    state: uint8 = 0
    granted_until: Duration = field(default_factory=Duration)
    granted_point: uint32 = 0
    held_by: str = ""
    reason: str = ""


@dataclass
@annotate.final
class Trigger_Request(idl.IdlStruct, typename=_name("std_srvs", "srv", "Trigger_Request")):
    structure_needs_at_least_one_member: uint8 = 0


@dataclass
@annotate.final
class Trigger_Response(idl.IdlStruct, typename=_name("std_srvs", "srv", "Trigger_Response")):
    success: bool = False
    message: str = ""


@dataclass
@annotate.final
class SetContact_Request(idl.IdlStruct, typename=_name("workcell_guard_msgs", "srv", "SetContact_Request")):
    body_a: str = ""
    body_b: str = ""
    allowed: bool = False


@dataclass
@annotate.final
class SetContact_Response(idl.IdlStruct, typename=_name("workcell_guard_msgs", "srv", "SetContact_Response")):
    success: bool = False
    message: str = ""


@dataclass
@annotate.final
class SetPriority_Request(idl.IdlStruct, typename=_name("workcell_guard_msgs", "srv", "SetPriority_Request")):
    robot: str = ""
    priority: int32 = 0


@dataclass
@annotate.final
class SetPriority_Response(idl.IdlStruct, typename=_name("workcell_guard_msgs", "srv", "SetPriority_Response")):
    success: bool = False
    message: str = ""


@dataclass
@annotate.final
class Float64(idl.IdlStruct, typename=_name("std_msgs", "msg", "Float64")):
    data: float64 = 0.0


@dataclass
@annotate.final
class SpeedScalingFactor(idl.IdlStruct, typename=_name("control_msgs", "msg", "SpeedScalingFactor")):
    factor: float64 = 0.0


@dataclass
@annotate.final
class GuardState(idl.IdlStruct, typename=_name("workcell_guard_msgs", "msg", "GuardState")):
    header: Header = field(default_factory=Header)
    robot: str = ""
    decision: uint8 = 0
    source: uint8 = 0
    reason: uint8 = 0
    reason_text: str = ""
    closest_link: str = ""
    closest_other: str = ""
    clearance_m: float64 = 0.0
    time_to_contact_s: float64 = 0.0
    speed_scale: float64 = 0.0
    grant_state: uint8 = 0
    on_plan: bool = False


# rmw_cyclonedds_cpp's request mapping: a header (the client GUID's low 8
# bytes, a sequence number) before the request and the reply. These twins
# share the plain types' names, so a participant may hold one or the other.
@dataclass
@annotate.final
class Trigger_Request_Cyclone(idl.IdlStruct, typename=_name("std_srvs", "srv", "Trigger_Request")):
    guid_low: array[uint8, 8] = field(default_factory=lambda: [0] * 8)
    seq: int64 = 0
    structure_needs_at_least_one_member: uint8 = 0


@dataclass
@annotate.final
class Trigger_Response_Cyclone(idl.IdlStruct, typename=_name("std_srvs", "srv", "Trigger_Response")):
    guid_low: array[uint8, 8] = field(default_factory=lambda: [0] * 8)
    seq: int64 = 0
    success: bool = False
    message: str = ""


@dataclass
@annotate.final
class SetParameters_Request_Cyclone(idl.IdlStruct, typename=_name("rcl_interfaces", "srv", "SetParameters_Request")):
    guid_low: array[uint8, 8] = field(default_factory=lambda: [0] * 8)
    seq: int64 = 0
    parameters: sequence[Parameter] = field(default_factory=list)


@dataclass
@annotate.final
class SetParameters_Response_Cyclone(idl.IdlStruct, typename=_name("rcl_interfaces", "srv", "SetParameters_Response")):
    guid_low: array[uint8, 8] = field(default_factory=lambda: [0] * 8)
    seq: int64 = 0
    results: sequence[SetParametersResult] = field(default_factory=list)


@dataclass
@annotate.final
class GetParameters_Request(idl.IdlStruct, typename=_name("rcl_interfaces", "srv", "GetParameters_Request")):
    names: sequence[str] = field(default_factory=list)


@dataclass
@annotate.final
class GetParameters_Response(idl.IdlStruct, typename=_name("rcl_interfaces", "srv", "GetParameters_Response")):
    values: sequence[ParameterValue] = field(default_factory=list)


@dataclass
@annotate.final
class FloatingPointRange(idl.IdlStruct, typename=_name("rcl_interfaces", "msg", "FloatingPointRange")):
    from_value: float64 = 0.0
    to_value: float64 = 0.0
    step: float64 = 0.0


@dataclass
@annotate.final
class IntegerRange(idl.IdlStruct, typename=_name("rcl_interfaces", "msg", "IntegerRange")):
    from_value: int64 = 0
    to_value: int64 = 0
    step: uint64 = 0


@dataclass
@annotate.final
class ParameterDescriptor(idl.IdlStruct, typename=_name("rcl_interfaces", "msg", "ParameterDescriptor")):
    name: str = ""
    type: uint8 = 0
    description: str = ""
    additional_constraints: str = ""
    read_only: bool = False
    dynamic_typing: bool = False
    floating_point_range: sequence[FloatingPointRange, 1] = field(default_factory=list)
    integer_range: sequence[IntegerRange, 1] = field(default_factory=list)


@dataclass
@annotate.final
class DescribeParameters_Request_Cyclone(idl.IdlStruct, typename=_name("rcl_interfaces", "srv", "DescribeParameters_Request")):
    guid_low: array[uint8, 8] = field(default_factory=lambda: [0] * 8)
    seq: int64 = 0
    names: sequence[str] = field(default_factory=list)


@dataclass
@annotate.final
class DescribeParameters_Response_Cyclone(idl.IdlStruct, typename=_name("rcl_interfaces", "srv", "DescribeParameters_Response")):
    guid_low: array[uint8, 8] = field(default_factory=lambda: [0] * 8)
    seq: int64 = 0
    descriptors: sequence[ParameterDescriptor] = field(default_factory=list)


@dataclass
@annotate.final
class UUID(idl.IdlStruct, typename=_name("unique_identifier_msgs", "msg", "UUID")):
    uuid: array[uint8, 16] = field(default_factory=lambda: [0] * 16)


@dataclass
@annotate.final
class GoalInfo(idl.IdlStruct, typename=_name("action_msgs", "msg", "GoalInfo")):
    goal_id: UUID = field(default_factory=UUID)
    stamp: Time = field(default_factory=Time)


@dataclass
@annotate.final
class CancelGoal_Request(idl.IdlStruct, typename=_name("action_msgs", "srv", "CancelGoal_Request")):
    goal_info: GoalInfo = field(default_factory=GoalInfo)


@dataclass
@annotate.final
class Transform(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "Transform")):
    translation: Vector3 = field(default_factory=Vector3)
    rotation: Quaternion = field(default_factory=Quaternion)


@dataclass
@annotate.final
class Twist(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "Twist")):
    linear: Vector3 = field(default_factory=Vector3)
    angular: Vector3 = field(default_factory=Vector3)


@dataclass
@annotate.final
class Wrench(idl.IdlStruct, typename=_name("geometry_msgs", "msg", "Wrench")):
    force: Vector3 = field(default_factory=Vector3)
    torque: Vector3 = field(default_factory=Vector3)


@dataclass
@annotate.final
class MultiDOFJointTrajectoryPoint(idl.IdlStruct, typename=_name("trajectory_msgs", "msg", "MultiDOFJointTrajectoryPoint")):
    transforms: sequence[Transform] = field(default_factory=list)
    velocities: sequence[Twist] = field(default_factory=list)
    accelerations: sequence[Twist] = field(default_factory=list)
    time_from_start: Duration = field(default_factory=Duration)


@dataclass
@annotate.final
class MultiDOFJointTrajectory(idl.IdlStruct, typename=_name("trajectory_msgs", "msg", "MultiDOFJointTrajectory")):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    points: sequence[MultiDOFJointTrajectoryPoint] = field(default_factory=list)


@dataclass
@annotate.final
class RobotTrajectory(idl.IdlStruct, typename=_name("moveit_msgs", "msg", "RobotTrajectory")):
    joint_trajectory: JointTrajectory = field(default_factory=JointTrajectory)
    multi_dof_joint_trajectory: MultiDOFJointTrajectory = field(default_factory=MultiDOFJointTrajectory)


@dataclass
@annotate.final
class MultiDOFJointState(idl.IdlStruct, typename=_name("sensor_msgs", "msg", "MultiDOFJointState")):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    transforms: sequence[Transform] = field(default_factory=list)
    twist: sequence[Twist] = field(default_factory=list)
    wrench: sequence[Wrench] = field(default_factory=list)


@dataclass
@annotate.final
class AttachedCollisionObjectStub(idl.IdlStruct, typename=_name("moveit_msgs", "msg", "AttachedCollisionObject")):
    # Only ever sent empty here: the node does not read trajectory_start.
    link_name: str = ""


@dataclass
@annotate.final
class RobotState(idl.IdlStruct, typename=_name("moveit_msgs", "msg", "RobotState")):
    joint_state: JointState = field(default_factory=JointState)
    multi_dof_joint_state: MultiDOFJointState = field(default_factory=MultiDOFJointState)
    attached_collision_objects: sequence[AttachedCollisionObjectStub] = field(default_factory=list)
    is_diff: bool = False


@dataclass
@annotate.final
class DisplayTrajectory(idl.IdlStruct, typename=_name("moveit_msgs", "msg", "DisplayTrajectory")):
    model_id: str = ""
    trajectory: sequence[RobotTrajectory] = field(default_factory=list)
    trajectory_start: RobotState = field(default_factory=RobotState)


_XCDR1 = Policy.DataRepresentation(use_cdrv0_representation=True)
# Reliable, volatile, keep last 10 (ROS's default profile).
QOS_RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.Volatile, Policy.History.KeepLast(10), _XCDR1)
# Reliable, transient local, keep last 1 (latched topics such as <robot>/stop).
QOS_LATCHED = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.TransientLocal, Policy.History.KeepLast(1), _XCDR1)
# Best effort, keep last 5 (ROS's sensor-data profile).
QOS_SENSOR = Qos(Policy.Reliability.BestEffort, Policy.Durability.Volatile, Policy.History.KeepLast(5), _XCDR1)

# Keeps Cyclone DDS on loopback: no multicast, the only peer 127.0.0.1.
LOOPBACK_CONFIG = """<?xml version="1.0" encoding="UTF-8"?>
<CycloneDDS xmlns="https://cdds.io/config">
  <Domain Id="any">
    <General>
      <Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>
      <AllowMulticast>false</AllowMulticast>
    </General>
    <Discovery>
      <ParticipantIndex>auto</ParticipantIndex>
      <MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>
      <Peers><Peer address="127.0.0.1"/></Peers>
    </Discovery>
  </Domain>
</CycloneDDS>
"""


def loopback(tmp, domain, rust_log):
    """Points this process's Cyclone DDS at a loopback-only configuration
    (written into `tmp`) and returns the environment for a node on
    `domain`, localhost only, logging at `rust_log`."""
    import os

    cfg = os.path.join(tmp, "cyclonedds.xml")
    with open(cfg, "w") as f:
        f.write(LOOPBACK_CONFIG)
    os.environ["CYCLONEDDS_URI"] = "file://" + cfg
    return dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_LOCALHOST_ONLY="1", RUST_LOG=rust_log)


def stamp(t):
    sec = int(t // 1)
    return Time(sec=sec, nanosec=min(int(round((t - sec) * 1e9)), 999_999_999))


def peer_args(workcell=False):
    """A peer's command line: the node's binary, its parameter file, the
    output file (and a workcell file)."""
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--node", required=True)
    ap.add_argument("--params", required=True)
    if workcell:
        ap.add_argument("--workcell", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--node-arg", action="append", default=[], help="one more argument for the node (after --ros-args)")
    ap.add_argument("--alongside", action="append", default=[],
                    help="one word of a command run beside the node on the same DDS set-up (ended after it)")
    return ap.parse_args()


# Processes started beside the node (`--alongside`), ended after it.
ALONGSIDE = []


def start_node(args, domain, prefix, extra=()):
    """Starts the node (`args.node` with `args.params` and `extra` ROS
    arguments) on `domain`, loopback only, logging to a file in a fresh
    temporary directory; returns the process and the log's path."""
    import os
    import subprocess
    import tempfile

    tmp = tempfile.mkdtemp(prefix=prefix)
    env = loopback(tmp, domain, "warn,rustdds=off,ros2_client=error")
    node_log = os.path.join(tmp, "node.log")
    more = getattr(args, "node_arg", [])
    if getattr(args, "alongside", []):
        ALONGSIDE.append(subprocess.Popen(args.alongside, env=env, stdout=open(node_log + ".alongside", "w"),
                                          stderr=subprocess.STDOUT))
    node = subprocess.Popen([args.node, "--ros-args", "--params-file", args.params, *extra, *more], env=env,
                            stdout=open(node_log, "w"), stderr=subprocess.STDOUT)
    return node, node_log


def endpoints(domain):
    """A DomainParticipant on `domain` and two helpers that open a writer
    and a reader on a topic (name, type, QoS): (participant, writer, reader)."""
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    dp = DomainParticipant(domain)

    def writer(name, typ, qos):
        return DataWriter(dp, Topic(dp, name, typ, qos=qos), qos=qos)

    def reader(name, typ, qos):
        return DataReader(dp, Topic(dp, name, typ, qos=qos), qos=qos)

    return dp, writer, reader


def stop_and_save(node, out_path, log):
    """Ends a peer's run: ends the node if it still runs and writes the
    run's log (JSON) for the Rust test."""
    if node.poll() is None:
        # SIGINT first, as ros2 launch does: the node leaves stopped and
        # completes its recording; killed if it has not ended in 10 s.
        import signal
        import subprocess

        node.send_signal(signal.SIGINT)
        try:
            node.wait(timeout=10)
        except subprocess.TimeoutExpired:
            node.kill()
    for p in ALONGSIDE:
        import signal
        import subprocess

        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    with open(out_path, "w") as f:
        json.dump(log, f)


def exit_on_failure(log, node_log):
    """Exits 1, saying which expectation failed, with the tail of the
    node's log, unless the run went through."""
    if log["ok"]:
        return
    with open(node_log) as f:
        tail = f.read()[-3000:]
    print("FAILED:", log.get("failure", "an unexpected error"), file=sys.stderr)
    print("node log tail:\n" + tail, file=sys.stderr)
    sys.exit(1)
