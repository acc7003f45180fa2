"""A recording of a headless `Simulation` in the recorder's format, with sensor noise.

`record_simulation` runs a model's `Simulation` under given efforts (each held over one
period, as the plant holds a command) and writes what the plant node would publish: the
joint states (position, velocity and the effort applied over the period before each
state, `plant_node.fill_states`), the modal states and the robot description, each state
stamped with its simulated time, through the recorder's writer (`writer.write_messages`).
Zero-mean Gaussian noise of a stated standard deviation, independent per sample and entry,
is added to the measured positions and velocities (the efforts are written exact: they are
the input the simulation applied). A real driver's stamps can be given instead of the
period's (`jittered`: each cycle's length varies, and states are lost): the efforts are
then held over those intervals, and a lost state is simulated but not written. The
identification's tests and validation figures are made of such files (doc/hil.md,
"Identifying your arm"); `multisine` gives a rich input.
"""

import numpy as np

from sensor_msgs.msg import JointState
from std_msgs.msg import String

from .writer import write_bag, write_messages
from ..description.urdf import urdf
from ..mechanics.simulation import Simulation
from ..nodes.common import stamp
from ..nodes.plant_node import fill_states

NOISE_KEYS = ('joint_position', 'joint_velocity', 'modal_position', 'modal_velocity')


def multisine(count, period, amplitude, frequencies, seed=0):
    """Return ``count`` x len(amplitude) efforts: per input a sum of cosines, random phases.

    Input j at t_k = k ``period`` is sum_i cos(2 pi f_i t_k + phi_ij), the phases drawn
    uniformly (``seed``), scaled so that its peak over the ``count`` samples is
    ``amplitude[j]``; ``frequencies`` [Hz] are the excited lines.
    """
    rng = np.random.default_rng(seed)
    amplitude = np.atleast_1d(np.asarray(amplitude, dtype=float))
    frequencies = np.asarray(frequencies, dtype=float)
    t = np.arange(count) * period
    phases = rng.uniform(0.0, 2.0 * np.pi, (frequencies.size, amplitude.size))
    signal = np.cos(2.0 * np.pi * frequencies[None, :, None] * t[:, None, None]
                    + phases[None]).sum(axis=1)
    return signal * (amplitude / np.abs(signal).max(axis=0))


def jittered(count, period, jitter, lost=0.0, seed=0):
    """Stamps of ``count`` + 1 control cycles of a real driver, and the states it lost.

    Cycle k lasts ``period`` [s] plus a zero-mean uniform jitter of width ``jitter`` [s]
    (below ``period``), stamps rounded to the nanosecond (a header's); each state after the
    first is lost with probability ``lost`` (``seed`` draws both). Returns (stamps [s],
    indices of the lost states) for `record_simulation`'s ``times`` and ``dropped``.
    """
    if not 0.0 <= jitter < period:
        raise ValueError(f'jitter: expected a width in [0, period), got {jitter}')
    rng = np.random.default_rng(seed)
    cycles = period + jitter * rng.uniform(-0.5, 0.5, count)
    stamps = np.round(np.concatenate([[0.0], np.cumsum(cycles)]) * 1e9) / 1e9
    dropped = np.flatnonzero(rng.uniform(0.0, 1.0, count) < lost) + 1
    return stamps, dropped


def record_simulation(path, model, efforts, period, step, integrator='rk4', q0=None, v0=None,
                      noise=None, seed=0, modal_states=True, times=None, dropped=(),
                      bag=None):
    """Simulate ``model`` under ``efforts`` and write the recording to ``path`` (module doc).

    ``efforts``: K x nu, row k applied over [k, k + 1] ``period`` [s] (model input order);
    ``step``, ``integrator``: the `Simulation`'s; ``q0``, ``v0``: its initial state;
    ``noise``: standard deviations by `NOISE_KEYS` (a number or one per entry; missing:
    none); ``modal_states``: write them (a model with elastic coordinates); ``times``: the
    K + 1 stamps [s] in place of k ``period`` (row k then held over [t_k, t_k+1], in equal
    steps of at most ``step``, `Simulation.advance_over`); ``dropped``: indices of states
    simulated but not written (`jittered`); ``bag``: write ``path`` as a rosbag2 MCAP
    directory of that many files (`writer.write_bag`). Returns the stamps (K + 1) and the
    exact states (K + 1) x (nq + nv) the noisy ones were made of, the dropped ones
    included.
    """
    noise = dict(noise or {})
    unknown = sorted(set(noise) - set(NOISE_KEYS))
    if unknown:
        raise ValueError(f'noise: unknown key {unknown[0]!r} (known: {", ".join(NOISE_KEYS)})')
    rng = np.random.default_rng(seed)
    efforts = np.asarray(efforts, dtype=float).reshape(-1, model.nu)
    stamps = (np.arange(efforts.shape[0] + 1) * period if times is None
              else np.asarray(times, dtype=float))
    if stamps.shape != (efforts.shape[0] + 1,) or not np.all(np.diff(stamps) > 0.0):
        raise ValueError(f'times: expected {efforts.shape[0] + 1} increasing stamps, got '
                         f'{stamps.size}')
    dropped = set(int(k) for k in dropped)
    sim = Simulation(model, step, integrator, q0, v0)
    joint = JointState(name=list(model.joint_names))
    modal = JointState(name=list(model.mode_names))
    description = String(data=urdf(model, 'world'))
    applied = np.zeros(model.nu)
    times, states, messages = [], [], [('/robot_description', description, 0)]
    after = np.empty((1, sim.state.size))
    for k, t in enumerate(stamps.tolist()):
        if k:
            applied = efforts[k - 1]
            sim.advance_over(applied[None], [t - stamps[k - 1]], after)
        now, log_time = stamp(t), int(round(t * 1e9))
        times.append(t)
        states.append(sim.state.copy())
        if k in dropped:
            continue
        fill_states(model, now, sim.q, sim.v, applied, joint, modal)
        for message, kind in ((joint, 'joint'), (modal, 'modal')):
            for field in ('position', 'velocity'):
                sigma = noise.get(f'{kind}_{field}', 0.0)
                values = np.asarray(getattr(message, field), dtype=float)
                if values.size:
                    values = values + sigma * rng.standard_normal(values.size)
                setattr(message, field, values.tolist())
        messages.append(('/joint_states', _copy(joint), log_time))
        if modal_states and model.n_modes:
            messages.append(('/modal_states', _copy(modal), log_time))
    if bag:
        write_bag(path, messages, bag)
    else:
        write_messages(path, messages)
    return np.array(times), np.array(states)


def _copy(message):
    """Return a JointState with the same stamp, names and values (written later)."""
    copy = JointState(name=list(message.name), position=list(message.position),
                      velocity=list(message.velocity), effort=list(message.effort))
    copy.header.stamp = message.header.stamp
    return copy
