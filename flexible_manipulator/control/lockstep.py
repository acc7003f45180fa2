"""The closed loop in lock-step, in one process: a simulated plant and a controller.

What the lockstep plant node and the controller node do over DDS (one state, one command,
one control period; ``bringup --timing-mode lockstep``), without ROS: per tick, the
controller takes the plant's state at t (joints, and the modal coordinates when
``measured``), its effort is clipped at the plant's effort limits (the amplifier, as the
plant node does) and held over one period, ``input_delay`` periods late (a real driver's
transport and computation delay, `mechanics.delay_line`; the plant node's
``input_delay_periods``). Studies (the mismatch benchmark, a plant whose
parameters differ from the controller's model) and tests run it; nothing on the nodes'
path does.
"""

from dataclasses import dataclass, field
import math

import numpy as np

from ..mechanics.delay_line import DelayLine
from ..mechanics.simulation import StepFailedError


@dataclass
class LoopRun:
    """What one run did. Residuals are per tick, the largest |phi| of the rows [m or rad]."""

    residual: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fault: str = ''            # the controller's fault or the plant's failure ('' if none)
    fault_time: float = math.nan
    ticks: int = 0

    @property
    def rms(self):
        """Root mean square of the per-tick residual (nan if no tick tracked)."""
        return float(np.sqrt(np.mean(self.residual ** 2))) if self.residual.size else math.nan

    @property
    def peak(self):
        """Largest per-tick residual (nan if no tick tracked)."""
        return float(np.max(self.residual)) if self.residual.size else math.nan


def run_lockstep(controller, simulation, duration, period, measured=True, residual=None,
                 on_tick=None, input_delay=0):
    """Close the loop for ``duration`` [s] in periods of ``period`` [s]; return a `LoopRun`.

    ``controller``: a `ProgramController` (enabled by the caller); ``simulation``: the
    plant (`mechanics.simulation.Simulation`, any model with the controller's joints first
    and the same mode names); ``measured``: pass the plant's modal coordinates to the
    controller (a simulation publishes them), else joints only; ``residual(controller,
    simulation)``: the per-tick figure to record instead of the controller's own max |phi|
    (e.g. the rows evaluated on the plant's whole state). Stops at the first tick that is
    not tracking (a fault) or a plant step that fails. ``on_tick(status, applied)``: called
    per tracked tick with the controller's status and the effort applied over the period
    that follows (clipped and delayed; the array is reused), e.g. to keep a run's summary
    figures. ``input_delay``: the periods by which each effort reaches the plant late (the
    controller's ``delay_periods`` says what its checks allow), or a
    `mechanics.delay_line.DelayLine` to go on with (the efforts in flight at the end of an
    earlier run); the plant reports the effort it applied, as a plant node does.
    """
    n, plant = controller.n_joints, simulation.model
    limit = plant.effort_limit
    figures = np.zeros(int(round(duration / period)))
    run = LoopRun()
    applied = np.zeros(plant.nu)            # the effort of the last period, as plants report
    clipped = np.zeros(plant.nu)            # this tick's command at the plant's limits
    if isinstance(input_delay, DelayLine):
        line = input_delay
    else:
        line = DelayLine(plant.nu, input_delay)
    for k in range(figures.size):
        q, v = simulation.q, simulation.v
        if measured and plant.nv > n:
            effort = controller.update(simulation.time, q[:n], v[:n], q[n:], v[n:],
                                       applied_effort=applied)
        else:
            effort = controller.update(simulation.time, q[:n], v[:n], applied_effort=applied)
        status = controller.status
        if not status.tracking:
            run.fault, run.fault_time = status.message, simulation.time
            break
        figures[k] = (float(np.max(np.abs(status.residual))) if residual is None
                      else residual(controller, simulation))
        try:
            np.clip(effort, -limit, limit, out=clipped)
            line.push(clipped, applied)
            if on_tick is not None:
                on_tick(status, applied)
            simulation.advance(applied, period)
        except StepFailedError as error:
            run.fault, run.fault_time = f'plant: {error}', simulation.time
            break
        run.ticks = k + 1
    run.residual = figures[:run.ticks]
    return run


def task_error(model, name, spec, period):
    """Make a per-tick figure for `run_lockstep`: ``spec``'s rows on the plant's whole state.

    The program ``spec`` (one program of a file, as written: a tip row stays the tip) on
    ``model``'s full coordinates, every mode's deflection included; the figure is max
    |phi| at the controller's program time; hold rows hold where the plant is at the first
    call. The same figure for every law (a law's own residual sees its control model
    only: the rigid twin's, no deflection at all). One figure per run.
    """
    from .program_controller import ControllerSettings, ProgramController
    from .uncertainty import EXACT_MODEL
    entry = ProgramController(model, {name: dict(spec, non_minimum_phase='allow')},
                              ControllerSettings(period=period, uncertainty=EXACT_MODEL,
                                                 realization='servo', control_model='full',
                                                 delay_periods=0)   # lock-step: no delay
                              ).entry
    rows, started = entry.program, []

    def error(controller, simulation):
        if not started:                 # hold rows: where the arm is at the first tick
            for hold in entry.holds:
                hold.capture(simulation.q)
            started.append(True)
        rows.evaluate(controller.status.program_time, simulation.q, simulation.v)
        return float(np.max(np.abs(rows.phi)))
    return error
