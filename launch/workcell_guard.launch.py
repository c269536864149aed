"""Start the workcell_guard node (and, optionally, rviz showing its markers).

    ros2 launch workcell_guard workcell_guard.launch.py
    ros2 launch workcell_guard workcell_guard.launch.py namespace:=cell_a \
        params_file:=/path/to/my_guard.yaml use_sim_time:=true rviz:=true

Arguments:
  namespace     the node's namespace (its topics are relative to it), default none
  params_file   ROS parameter file, default <share>/config/workcell_guard.yaml,
                whose workcell_file points at the workcell description
  use_sim_time  follow /clock, default false
  rviz          also start rviz2 with config/workcell_guard.rviz, default false
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory("workcell_guard")
    namespace = LaunchConfiguration("namespace")
    params_file = LaunchConfiguration("params_file")
    use_sim_time = LaunchConfiguration("use_sim_time")
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node and its topics"),
        DeclareLaunchArgument("params_file", default_value=os.path.join(share, "config", "workcell_guard.yaml"),
                              description="ROS parameter file (workcell_file, rate_hz, margins, ...)"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="follow /clock"),
        DeclareLaunchArgument("rviz", default_value="false", description="also start rviz2 showing the markers"),
        Node(
            package="workcell_guard",
            executable="workcell_guard",
            name="workcell_guard",
            namespace=namespace,
            parameters=[params_file, {"use_sim_time": use_sim_time}],
            output="screen",
            emulate_tty=True,
        ),
        Node(
            package="rviz2",
            executable="rviz2",
            namespace=namespace,
            arguments=["-d", os.path.join(share, "config", "workcell_guard.rviz")],
            parameters=[{"use_sim_time": use_sim_time}],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
    ])
