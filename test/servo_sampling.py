"""Sampling helpers shared by the servoconstraint tests (not a test module)."""

import numpy as np

from flexible_manipulator.mechanics.simulation import Simulation


def run(model, q0, v0, times, step=1e-3, method='rk4', u=None):
    """Simulate and sample (q, v, outputs) at the given times (multiples of the step).

    q0 None starts from the model's neutral configuration; u is the held input of a
    ``free`` model (zero when omitted).
    """
    sim = Simulation(model, step, method, q0, v0)
    data = model.create_data()
    qs, vs, outs = [], [], []
    for t in times:
        if t > sim.time + 0.5 * step:
            sim.advance(u if u is not None else np.zeros(model.nu), t - sim.time)
        qs.append(sim.q.copy())
        vs.append(sim.v.copy())
        outs.append(model.outputs(data, sim.q, sim.v, u))
    return np.array(qs), np.array(vs), np.array(outs)


def output(model, outs, name):
    """Column ``name`` of sampled outputs."""
    return outs[:, model.output_names.index(name)]
