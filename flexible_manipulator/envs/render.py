"""An RGB frame of the environment's arm, drawn with matplotlib (``render_mode='rgb_array'``).

The arm's centre line (each link's sections at `SAMPLES` points from its joint to its
tip, `section_pose` of the plant's model: a bent link is drawn bent), its joints as dots,
the trace of its tip over the episode, in the plane where the arm's start pose spreads
most (the two base axes of largest extent: a planar arm's plane, the UR5e's side view),
framed on the arm's reach about its base; the title gives the time, the residual |phi| and
the RMS so far. The same picture as the recording's filmstrip (`recording.figures`), one
instant per frame.
"""

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
import numpy as np

SAMPLES = 9                     # points per link along its centre line
SIZE = (4.8, 4.8)               # inches; at DPI: the frame's size in pixels
DPI = 80
MARGIN = 1.1                    # room about the arm's reach [-]
AXES = 'xyz'


def centre_line(model, data, q):
    """Return the arm's centre line, base to tip (k x 3, base frame), and its joints (n x 3)."""
    points, joints = [], []
    for index, part in enumerate(getattr(model, 'parts', model.links)):
        length = float(getattr(part, 'length', 0.0))
        for k, x in enumerate(np.linspace(0.0, length, SAMPLES if length > 0 else 1)):
            _, p = model.section_pose(data, q, index, x)
            points.append(np.array(p, dtype=float))
            if k == 0:
                joints.append(points[-1])
    return np.array(points), np.array(joints)


class ArmRenderer:
    """One figure reused for every frame of an environment (module doc)."""

    def __init__(self, env):
        """Choose the plane and the frame from the arm's start pose."""
        matplotlib.rcParams.setdefault('figure.max_open_warning', 0)
        model = env.model
        self.data = model.create_data()
        points, _ = centre_line(model, self.data, env.sim.q)
        base = np.zeros(3)
        spread = np.ptp(np.vstack([base, points]), axis=0)
        self.plane = tuple(sorted(np.argsort(spread)[-2:]))
        segments = np.diff(np.vstack([base, points]), axis=0)
        reach = float(np.sum(np.linalg.norm(segments, axis=1)))
        self.reach = MARGIN * max(reach, 1e-3)
        self.figure = Figure(figsize=SIZE, dpi=DPI)
        self.canvas = FigureCanvasAgg(self.figure)
        self.axes = self.figure.add_subplot()
        self.figure.subplots_adjust(left=0.17, bottom=0.12, right=0.96, top=0.92)
        self.trace = []

    def clear(self):
        """Forget the tip's trace (a new episode)."""
        self.trace = []

    def record(self, env):
        """Add the tip's position after a step to the trace."""
        points, _ = centre_line(env.model, self.data, env.sim.q)
        self.trace.append(points[-1][list(self.plane)])

    def frame(self, env):
        """Return the arm now as an RGB array (height x width x 3, uint8)."""
        model = env.model
        if model is not getattr(self, '_model', None):
            self.data, self._model = model.create_data(), model
        points, joints = centre_line(model, self.data, env.sim.q)
        i, j = self.plane
        axes = self.axes
        axes.clear()
        if self.trace:
            trace = np.array(self.trace)
            axes.plot(trace[:, 0], trace[:, 1], ':', color=(0.12, 0.35, 0.86), lw=1,
                      label='tip')
        axes.plot(points[:, i], points[:, j], '-', color=(0.78, 0.0, 0.78), lw=3,
                  label='arm')
        axes.plot(joints[:, i], joints[:, j], 'o', color=(0.27, 0.27, 0.31), ms=5)
        axes.plot([0.0], [0.0], 's', color=(0.27, 0.27, 0.31), ms=8)
        axes.set_xlim(-self.reach, self.reach)
        axes.set_ylim(-self.reach, self.reach)
        axes.set_aspect('equal')
        axes.set(xlabel=f'{AXES[i]} [m]', ylabel=f'{AXES[j]} [m]')
        residual = float(np.linalg.norm(env.loop.controller.status.residual))
        axes.set_title(f't = {env.sim.time:.2f} s   |phi| = {residual:.2e}   '
                       f'RMS {env._rms():.2e}', fontsize=9)
        axes.grid(True, lw=0.3)
        self.canvas.draw()
        return np.asarray(self.canvas.buffer_rgba())[:, :, :3].copy()

    def close(self):
        """Drop the figure."""
        self.figure.clear()
