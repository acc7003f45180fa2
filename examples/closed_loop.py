"""A program-constraint controller closing the loop on the simulated flexible arm, no ROS.

The demo's program: the forearm's lambda-point (lambda_circle in
config/programs_two_link_flexible.yaml) follows a circle, realized as a servo constraint on
the joints; the elastic state is measured (a real arm would use
``elastic_state='estimated'``). Prints the tracking residual over 2 s.
"""
import numpy as np

from flexible_manipulator.control.program_controller import controller_from_files
from flexible_manipulator.mechanics.simulation import Simulation
from flexible_manipulator.model_config import load_model, resolve_config_path, resolve_model_path

MODEL = resolve_model_path('two_link_flexible')
PROGRAMS = resolve_config_path('programs_two_link_flexible', 'config')
PERIOD = 0.002                                       # control period [s]

controller = controller_from_files(MODEL, PROGRAMS, period=PERIOD, control_modes=1,
                                   analysis_positions=[-0.3, 1.5])  # as config/sim.yaml
controller.enable()
model = load_model(MODEL)
q0, v0 = np.zeros(model.nv), np.zeros(model.nv)
q0[:2], v0[:2] = [-0.23226582, 1.38217994], [0.3716835, -0.25451391]  # on the circle
sim = Simulation(model, 5e-4, 'rk4', q0=q0, v0=v0)   # the plant: 0.5 ms rk4 steps
n, worst = model.n_joints, 0.0
for _ in range(int(2.0 / PERIOD)):
    effort = controller.update(sim.time, sim.q[:n], sim.v[:n], sim.q[n:], sim.v[n:])
    worst = max(worst, float(np.max(np.abs(controller.status.residual))))
    sim.advance(effort, PERIOD)                       # efforts held for one period
print(f'program {controller.active!r}: {controller.status.message}')
print(f'largest residual over {sim.time:.1f} s: {worst:.2e} m')
