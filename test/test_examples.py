"""The scripts in examples/ run as a user would run them, with ROS out of reach.

Expected: each exits 0 in a fresh interpreter whose environment has no AMENT_PREFIX_PATH
(the shipped models and programs are then found in the checkout). The dynamics example
prints the accelerations of the spinning arm without torque: finite, and nonzero from the
centrifugal and Coriolis forces (gravity is normal to the plane of motion,
config/models/two_link_flexible.yaml, and does no work). The closed loop runs the demo's
lambda-point circle for 2 s, whose residual stays below 5e-4 m in
test_program_controller's same loop (the designed decay from the start on the circle).
"""

import os
import re
import subprocess
import sys

from conftest import REPO


def run_example(name):
    env = {key: value for key, value in os.environ.items() if key != 'AMENT_PREFIX_PATH'}
    result = subprocess.run([sys.executable, os.path.join('examples', name)], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_dynamics_example_prints_the_arm_s_accelerations():
    out = run_example('dynamics.py')
    assert 'coordinates: shoulder, elbow, upper_arm_y1' in out
    values = [float(x) for x in re.search(r'spinning: \[(.*)\]', out, re.S).group(1).split()]
    assert len(values) == 8 and all(abs(x) < 1e6 for x in values) and any(values)


def test_closed_loop_example_tracks_the_lambda_point_circle():
    out = run_example('closed_loop.py')
    assert "program 'lambda_circle'" in out
    worst = float(re.search(r'largest residual over 2.0 s: (\S+) m', out).group(1))
    assert worst < 5e-4
