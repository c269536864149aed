"""Show one of the bundled robots in rviz with sliders for its joints.

    ros2 launch workcell_guard view_robot.launch.py robot:=wg_arm7

Arguments: robot (wg_arm6 | wg_arm7 | wg_platen), rviz (true | false).
Needs robot_state_publisher, joint_state_publisher_gui and rviz2.
The mesh URIs (package://workcell_guard/urdf/meshes/...) resolve once the
package is installed with colcon.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _nodes(context):
    robot = LaunchConfiguration("robot").perform(context)
    share = get_package_share_directory("workcell_guard")
    urdf = os.path.join(share, "urdf", robot + ".urdf")
    with open(urdf) as f:
        description = f.read()
    return [
        Node(package="robot_state_publisher", executable="robot_state_publisher",
             parameters=[{"robot_description": description}]),
        Node(package="joint_state_publisher_gui", executable="joint_state_publisher_gui"),
        Node(package="rviz2", executable="rviz2", condition=IfCondition(LaunchConfiguration("rviz"))),
    ]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="wg_arm6", description="wg_arm6, wg_arm7 or wg_platen"),
        DeclareLaunchArgument("rviz", default_value="true"),
        OpaqueFunction(function=_nodes),
    ])
