#!/usr/bin/env python3
"""Forward kinematics oracle for the Rust tests, using yourdfpy.

stdin:  {"urdf": PATH, "links": [NAME, ...], "configs": [{JOINT: VALUE, ...}, ...]}
stdout: {"root": NAME, "poses": [[[16 floats, row-major] per link] per config]}
Poses are of each link in the URDF root link's frame. Joints not named in a
config are at zero; mimic joints follow their source, as yourdfpy computes.
`robots-dir` as the only argument prints example-robot-data's robots folder.
"""
import glob
import json
import os
import sys


def robots_dir():
    from importlib.metadata import distribution
    distribution("example-robot-data")  # raises when the package is not installed
    for base in sys.path:
        hits = glob.glob(os.path.join(base, "cmeel.prefix", "share", "example-robot-data", "robots"))
        if hits:
            return hits[0]
    raise SystemExit("example-robot-data is installed but its robots folder was not found")


def main():
    if sys.argv[1:] == ["robots-dir"]:
        print(robots_dir())
        return
    import numpy as np
    import yourdfpy

    req = json.load(sys.stdin)
    robot = yourdfpy.URDF.load(req["urdf"], build_scene_graph=True, load_meshes=False,
                               load_collision_meshes=False, build_collision_scene_graph=False)
    root = robot.base_link
    actuated = list(robot.actuated_joint_names)
    out = []
    for cfg in req["configs"]:
        unknown = set(cfg) - set(actuated)
        if unknown:
            raise SystemExit(f"joints {sorted(unknown)} are not actuated joints of {req['urdf']}")
        robot.update_cfg(np.array([float(cfg.get(n, 0.0)) for n in actuated]))
        poses = []
        for link in req["links"]:
            t = robot.get_transform(frame_to=link, frame_from=root)
            poses.append([float(v) for v in np.asarray(t, dtype=np.float64).reshape(16)])
        out.append(poses)
    json.dump({"root": root, "poses": out}, sys.stdout)


if __name__ == "__main__":
    main()
