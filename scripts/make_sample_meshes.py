#!/usr/bin/env python3
"""Writes the bundled sample cell's meshes into urdf/meshes/.

The meshes are written for this project, in four formats and with the quirks
real robot descriptions carry, so the loaders are exercised on every path:
  shoulder_housing.stl  binary STL whose 80-byte header starts with "solid"
  forearm_shell.STL     ASCII STL, upper-case extension
  wrist_cap.obj         Wavefront OBJ
  gripper_finger.dae    COLLADA (used mirrored by a negative URDF scale)
Run it again after changing a shape: `python3 scripts/make_sample_meshes.py`.
"""
import math
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "urdf", "meshes")


def prism(n, radius, z0, z1):
    """Closed n-gon prism along z: (vertices, triangles), outward winding."""
    verts = []
    for z in (z0, z1):
        for k in range(n):
            a = 2 * math.pi * k / n
            verts.append((radius * math.cos(a), radius * math.sin(a), z))
    verts += [(0.0, 0.0, z0), (0.0, 0.0, z1)]
    c0, c1 = 2 * n, 2 * n + 1
    tris = []
    for k in range(n):
        a, b = k, (k + 1) % n
        tris += [(a, b, n + b), (a, n + b, n + a)]
        tris += [(c0, b, a), (c1, n + a, n + b)]
    return verts, tris


def frustum_box(w0, w1, h):
    """Closed tapered box from a w0 square at z=0 to a w1 square at z=h."""
    verts = []
    for w, z in ((w0, 0.0), (w1, h)):
        s = w / 2
        verts += [(-s, -s, z), (s, -s, z), (s, s, z), (-s, s, z)]
    quads = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    tris = []
    for a, b, c, d in quads:
        tris += [(a, b, c), (a, c, d)]
    return verts, tris


def icosphere(radius, levels):
    t = (1 + 5 ** 0.5) / 2
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6),
         (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10),
         (8, 6, 7), (9, 8, 1)]
    v = [tuple(c / math.sqrt(sum(x * x for x in p)) for c in p) for p in v]
    for _ in range(levels):
        mid = {}

        def m(a, b):
            key = (min(a, b), max(a, b))
            if key not in mid:
                p = [(v[a][i] + v[b][i]) / 2 for i in range(3)]
                n = math.sqrt(sum(c * c for c in p))
                v.append(tuple(c / n for c in p))
                mid[key] = len(v) - 1
            return mid[key]

        nf = []
        for a, b, c in f:
            ab, bc, ca = m(a, b), m(b, c), m(c, a)
            nf += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        f = nf
    return [tuple(radius * c for c in p) for p in v], f


def finger():
    """A wedge-shaped finger, 20 mm wide, 70 mm long, tapering in x."""
    verts = [(0.0, -0.01, 0.0), (0.02, -0.01, 0.0), (0.02, 0.01, 0.0), (0.0, 0.01, 0.0),
             (0.0, -0.01, 0.07), (0.008, -0.01, 0.07), (0.008, 0.01, 0.07), (0.0, 0.01, 0.07)]
    quads = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    tris = []
    for a, b, c, d in quads:
        tris += [(a, b, c), (a, c, d)]
    return verts, tris


def normal(a, b, c):
    u = [b[i] - a[i] for i in range(3)]
    w = [c[i] - a[i] for i in range(3)]
    n = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
    length = math.sqrt(sum(x * x for x in n)) or 1.0
    return tuple(x / length for x in n)


def write_binary_stl(path, verts, tris):
    header = b"solid wg_shoulder_housing (binary STL, header deliberately starts with 'solid')"
    with open(path, "wb") as f:
        f.write(header.ljust(80, b" ")[:80])
        f.write(struct.pack("<I", len(tris)))
        for t in tris:
            a, b, c = (verts[i] for i in t)
            f.write(struct.pack("<12fH", *normal(a, b, c), *a, *b, *c, 0))


def write_ascii_stl(path, name, verts, tris):
    with open(path, "w") as f:
        f.write(f"solid {name}\n")
        for t in tris:
            a, b, c = (verts[i] for i in t)
            f.write("  facet normal %.6e %.6e %.6e\n    outer loop\n" % normal(a, b, c))
            for p in (a, b, c):
                f.write("      vertex %.6e %.6e %.6e\n" % p)
            f.write("    endloop\n  endfacet\n")
        f.write(f"endsolid {name}\n")


def write_obj(path, verts, tris):
    with open(path, "w") as f:
        f.write("# wrist cap for the workcell_guard sample arm\no wrist_cap\n")
        for p in verts:
            f.write("v %.6f %.6f %.6f\n" % p)
        for t in tris:
            f.write("f %d %d %d\n" % tuple(i + 1 for i in t))


def write_dae(path, verts, tris):
    pos = " ".join("%.6f %.6f %.6f" % p for p in verts)
    idx = " ".join("%d %d %d" % t for t in tris)
    with open(path, "w") as f:
        f.write(f"""<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="meter" meter="1"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries>
    <geometry id="finger-mesh" name="finger">
      <mesh>
        <source id="finger-positions">
          <float_array id="finger-positions-array" count="{3 * len(verts)}">{pos}</float_array>
          <technique_common>
            <accessor source="#finger-positions-array" count="{len(verts)}" stride="3">
              <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
            </accessor>
          </technique_common>
        </source>
        <vertices id="finger-vertices"><input semantic="POSITION" source="#finger-positions"/></vertices>
        <triangles count="{len(tris)}">
          <input semantic="VERTEX" source="#finger-vertices" offset="0"/>
          <p>{idx}</p>
        </triangles>
      </mesh>
    </geometry>
  </library_geometries>
  <library_visual_scenes>
    <visual_scene id="Scene" name="Scene">
      <node id="finger" name="finger"><instance_geometry url="#finger-mesh"/></node>
    </visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#Scene"/></scene>
</COLLADA>
""")


def main():
    os.makedirs(OUT, exist_ok=True)
    write_binary_stl(os.path.join(OUT, "shoulder_housing.stl"), *prism(16, 0.075, -0.08, 0.08))
    write_ascii_stl(os.path.join(OUT, "forearm_shell.STL"), "forearm_shell", *frustum_box(0.11, 0.08, 0.38))
    write_obj(os.path.join(OUT, "wrist_cap.obj"), *icosphere(0.05, 1))
    write_dae(os.path.join(OUT, "gripper_finger.dae"), *finger())


if __name__ == "__main__":
    main()
