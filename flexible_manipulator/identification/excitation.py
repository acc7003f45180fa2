"""An excitation to record for identification: per joint a multisine about a pose.

``excite MODEL.yaml [--pose Q...] [--duration S] [--band-edge HZ] [-o programs.yaml]``
(``ros2 run flexible_manipulator excite``; ``python -m
flexible_manipulator.identification.excitation`` without ROS) writes a program file
(doc/programs.md) with ``hold`` and ``excite``: a ``joint`` row of every joint on a
``multisine`` reference (`trajectories.MultisineReference`) about the pose, and prints
the band and each joint's peaks against its limits. Run ``excite`` on the arm while
``record`` records, then ``identify`` the recording (doc/hil.md, "Exciting your arm").

The design (`design`):

* band: from ``low`` (default: 1 / ``period``) to the band edge, by default
  `BAND_MARGIN` times the higher of the model's first elastic mode with the joints held
  and with them free (`elastic_modes`, linearized at the pose), up to a whole line: a
  joint that follows its reference closely drives the links at the held frequencies, the
  efforts at the free ones;
* lines: the harmonics of 1 / ``period`` in the band, dealt out to the joints in turn
  (joint j gets low + (j + n m) / period, n joints): the joints' contributions lie on
  disjoint lines, separable in the spectrum of one recording, and each joint's sum is
  periodic in ``period``;
* amplitudes: line k's shape is the largest amplitude one sinusoid at its frequency
  could have within the joint's budgets, min(X, V / w_k, A / w_k^2) (flat position,
  then velocity, then acceleration spectrum: small at the modes); the phases are
  Schroeder's for that velocity spectrum (a low crest factor); then one factor per
  joint scales the sum so that its peaks over a dense sampling (`OVERSAMPLING` points
  per period of the band edge) of the whole reference, ramps included, meet the budgets;
* budgets, with the ``share`` (default `SHARE`) as the margin: excursion X = share times
  the distance from the pose to the nearer joint limit, at most ``excursion`` (`EXCURSION`
  rad: near the pose the modes were computed at); velocity V = share times the velocity
  limit; acceleration A = share times (effort limit - |gravity torque at the pose|) /
  M_jj (the URDF gives no acceleration limit: what the effort left by gravity gives the
  joint alone); A is unbounded for a joint without an effort limit;
* window: the sum faded in and out over ``ramp`` seconds (quintic), ``duration`` in all:
  the program starts and ends at rest at the pose.

Bad input (a model file that cannot be read, a pose outside the joint limits, a joint
without a velocity limit, a band without a line per joint): one line naming the field,
exit status 2, nothing written.
"""

import argparse
from dataclasses import dataclass, field
import math
import os
import sys

import numpy as np
import yaml

from ..control.arm_modes import configuration_at, elastic_modes, Modes
from ..config_checks import ConfigError

BAND_MARGIN = 1.25      # the band edge over the first elastic mode (held or free)
SHARE = 0.25            # the peaks at most this share of each limit (module doc)
EXCURSION = 0.2         # rad (m): largest excursion from the pose
PERIOD = 10.0           # s: the multisine's period (its lines 0.1 Hz apart)
DURATION = 60.0         # s: the program's length, ramps included
RAMP = 2.0              # s: fade in, fade out
OVERSAMPLING = 20       # samples per period of the band edge where the peaks are taken
PROGRAM = 'excite'


@dataclass
class Design:
    """An excitation (module doc): its lines per joint and what it reaches."""

    model_name: str
    joints: list
    pose: np.ndarray            # rad (m)
    modes: Modes
    low: float                  # Hz: the band
    edge: float
    period: float               # s
    duration: float
    ramp: float
    share: float
    frequencies: list           # per joint, Hz
    amplitudes: list            # per joint, rad
    phases: list                # per joint, rad
    budgets: dict = field(default_factory=dict)     # {'position'|...: per joint}
    limits: dict = field(default_factory=dict)      # the limits the budgets are shares of
    peaks: dict = field(default_factory=dict)       # what the written reference reaches

    def reference(self):
        """Return the ``multisine`` reference mapping of the program file."""
        return {'type': 'multisine', 'offset': _rounded(self.pose), 'ramp': self.ramp,
                'duration': self.duration,
                'frequencies': [_rounded(f) for f in self.frequencies],
                'amplitudes': [_significant(a) for a in self.amplitudes],
                'phases': [_rounded(p) for p in self.phases]}

    def programs(self):
        """Return (programs, default) of the program file: ``hold`` and ``excite``."""
        from ..control.arm_defaults import ALPHA
        return {
            'hold': {'description': 'hold the joints where the program starts',
                     'gains': {'alpha': ALPHA},
                     'rows': [{'type': 'hold', 'joints': list(self.joints)}]},
            PROGRAM: {
                'description': f'multisine excitation {self.low:g}-{self.edge:g} Hz about the '
                               'pose, from rest to rest',
                'gains': {'alpha': ALPHA},
                'rows': [{'type': 'joint', 'joints': list(self.joints),
                          'reference': self.reference()}]},
        }, 'hold'


def _rounded(values, decimals=6):
    """Return ``values`` as a list of floats rounded to ``decimals`` decimals."""
    return [round(float(x), decimals) for x in values]


def _significant(values, digits=6):
    """Return ``values`` as a list of floats to ``digits`` significant digits."""
    return [float(f'{float(x):.{digits - 1}e}') for x in values]


def lines(n_joints, period, low, edge):
    """Return per joint its harmonics of 1 / ``period`` in [low, edge] Hz (module doc)."""
    first = max(1, math.ceil(low * period - 1e-9))
    last = math.floor(edge * period + 1e-9)
    return [np.arange(first + j, last + 1, n_joints) for j in range(n_joints)]


def schroeder_phases(power):
    """Return Schroeder's phases [rad] for lines of relative ``power`` (any scale).

    phi_k = -2 pi sum_{l < k} (k - l) p_l, p the powers normalized to sum 1 (Schroeder
    1970): a sum of cosines with a low crest factor; for sines the same phases serve.
    """
    p = np.asarray(power, dtype=float)
    p = p / p.sum() if p.sum() > 0.0 else p
    k = np.arange(p.size)
    phases = np.array([-2.0 * math.pi * np.sum((i - k[:i]) * p[:i]) for i in k])
    return np.mod(phases, 2.0 * math.pi)


def budgets(model, pose, share, excursion):
    """Return (budgets, limits): per joint the excursion, speed and acceleration allowed.

    Each a {'position', 'velocity', 'acceleration'} mapping of arrays (module doc); the
    limits are what the budgets are ``share`` of (the distance to the nearer limit, the
    velocity limit, the acceleration the effort left by gravity gives the joint alone).
    """
    n = model.n_joints
    q = configuration_at(model, pose)
    data = model.create_data()
    inertia = np.diag(model.mass_matrix(data, q))[:n]
    gravity = np.abs(model.bias_forces(data, q, np.zeros(model.nv))[:n])
    effort = np.asarray(model.effort_limit, dtype=float)
    room = np.minimum(pose - np.asarray(model.lower, dtype=float),
                      np.asarray(model.upper, dtype=float) - pose)
    names = list(model.joint_names)
    spare = effort - gravity
    if np.any(spare <= 0.0):
        j = int(np.flatnonzero(spare <= 0.0)[0])
        raise ConfigError(f'pose: joint {names[j]!r} needs {gravity[j]:.4g} N m against '
                          f'gravity there, at least its effort limit {effort[j]:.4g}')
    limits = {'position': room, 'velocity': np.asarray(model.velocity_limit, dtype=float),
              'acceleration': np.where(np.isfinite(effort), spare / inertia, np.inf)}
    allowed = {key: share * value for key, value in limits.items()}
    allowed['position'] = np.minimum(allowed['position'], excursion)
    return allowed, limits


def peaks(reference, design_times):
    """Return {'position', 'velocity', 'acceleration'}: per joint the sampled peak.

    The position's is the largest |r - offset|.
    """
    r, dr, ddr = reference.sample(design_times)
    return {'position': np.abs(r - reference.offset).max(axis=0),
            'velocity': np.abs(dr).max(axis=0), 'acceleration': np.abs(ddr).max(axis=0)}


def sample_times(duration, ramp, period, edge):
    """Return the times [s] where the peaks are taken: ramp in and a period, ramp out.

    Between the ramps the reference repeats with the period: one period covers it.
    """
    step = 1.0 / (OVERSAMPLING * edge)
    head = np.arange(0.0, min(duration, ramp + period) + step, step)
    tail = np.arange(max(0.0, duration - ramp), duration + step, step)
    return np.concatenate([head, tail])


def design(model, pose=None, duration=DURATION, band_edge=None, period=PERIOD, low=None,
           ramp=RAMP, share=SHARE, excursion=EXCURSION):
    """Return the `Design` of an excitation of ``model``'s joints about ``pose`` (module doc).

    ``pose``: joint angles [rad] (None: `arm_defaults.analysis_pose`); ``band_edge``,
    ``low`` [Hz] (None: from the modes, 1 / period). `ConfigError` naming the field on
    bad input.
    """
    from ..control.arm_defaults import analysis_pose, per_joint
    from ..control.trajectories import MultisineReference
    if not hasattr(model, 'joint_names') or not getattr(model, 'n_joints', 0):
        raise ConfigError(f'model: {getattr(model, "name", model)!r} is not an arm with '
                          'joints (a serial_chain model file)')
    n = model.n_joints
    names = list(model.joint_names)
    pose = analysis_pose(model) if pose is None else per_joint(pose, model, 'pose')
    for j in range(n):
        if not (model.lower[j] < pose[j] < model.upper[j]) or not math.isfinite(pose[j]):
            raise ConfigError(f'pose: joint {names[j]!r} at {pose[j]:g} is outside its limits '
                              f'({model.lower[j]:g}, {model.upper[j]:g})')
    velocity = np.asarray(model.velocity_limit, dtype=float)
    if not np.all(np.isfinite(velocity)):
        j = int(np.flatnonzero(~np.isfinite(velocity))[0])
        raise ConfigError(f'velocity_limits: joint {names[j]!r} of model {model.name!r} has '
                          'no velocity limit (a URDF <limit velocity>): the excitation is '
                          'scaled to it')
    for key, value, strict in (('period', period, True), ('ramp', ramp, False),
                               ('share', share, True), ('excursion', excursion, True)):
        if not (value > 0.0 if strict else value >= 0.0) or not math.isfinite(value):
            raise ConfigError(f'{key}: must be {">" if strict else ">="} 0, got {value}')
    if share > 1.0:
        raise ConfigError(f'share: must be at most 1 (a share of each limit), got {share}')
    if not duration >= period + 2.0 * ramp or not math.isfinite(duration):
        raise ConfigError(f'duration: must be at least a period and the two ramps '
                          f'({period + 2.0 * ramp:g} s), got {duration}')
    modes = elastic_modes(model, pose)
    if band_edge is None:
        if not modes.held.size:
            raise ConfigError(f'band_edge: model {model.name!r} has no elastic mode to '
                              'choose it from: give it')
        # Up to a whole line: the edge is the last line's frequency.
        band_edge = math.ceil(BAND_MARGIN * modes.first * period - 1e-9) / period
    low = 1.0 / period if low is None else low
    if not 0.0 < low < band_edge or not math.isfinite(band_edge):
        raise ConfigError(f'band_edge: must be a number above the low end of the band '
                          f'({low:g} Hz), got {band_edge}')
    harmonics = lines(n, period, low, band_edge)
    if any(h.size == 0 for h in harmonics):
        raise ConfigError(f'band_edge: {band_edge:g} Hz leaves a joint without a line '
                          f'(lines 1/{period:g} s apart from {low:g} Hz, dealt out to {n} '
                          'joints): raise it, or the period')
    allowed, limits = budgets(model, pose, share, excursion)
    frequencies = [h / period for h in harmonics]
    shapes, phases = [], []
    for j, f in enumerate(frequencies):
        omega = 2.0 * math.pi * f
        shape = np.minimum(np.minimum(allowed['position'][j], allowed['velocity'][j] / omega),
                           allowed['acceleration'][j] / omega ** 2)
        shapes.append(shape)
        phases.append(schroeder_phases((shape * omega) ** 2))
    times = sample_times(duration, ramp, period, band_edge)
    unit = peaks(MultisineReference(pose, frequencies, shapes, phases, ramp, duration), times)
    scale = np.min([allowed[key] / unit[key] for key in allowed], axis=0)
    result = Design(model.name, names, np.asarray(pose, dtype=float), modes, float(low),
                    float(band_edge), float(period), float(duration), float(ramp),
                    float(share), frequencies, [scale[j] * shapes[j] for j in range(n)],
                    phases, allowed, limits)
    # The peaks of the reference as written (rounded), what the report states.
    spec = result.reference()
    written = MultisineReference(spec['offset'], spec['frequencies'], spec['amplitudes'],
                                 spec['phases'], ramp, duration)
    result.peaks = peaks(written, times)
    return result


HEADER = """\
# An excitation of {name!r} for identification, written by excite
# (format: doc/programs.md).
# {command}
# Record while it runs, then identify (doc/hil.md, "Exciting your arm"):
#   put the pose below into the controller's analysis_positions, bring the arm to it and
#   hold it there (program hold), then switch: ros2 param set /controller active_program
#   excite. It starts and ends at rest at the pose ({duration:g} s, ramps of {ramp:g} s).
# Band {low:g}-{edge:g} Hz: lines 1/{period:g} s apart dealt out to the joints in turn
# (joint j has every {n}th line from {low:g} + j/{period:g} Hz). First elastic modes at
# the pose: {held} Hz with the joints held, {free} Hz with them free.
# Amplitudes [rad] per line: flat position, velocity, then acceleration spectrum, Schroeder
# phases [rad]; each joint scaled so that its peaks stay within {share:g} of its limits:
"""


def header(result, command):
    """Return the program file's comment lines: the design and the peaks per joint."""
    modes = result.modes
    text = HEADER.format(
        name=result.model_name, command=command, duration=result.duration,
        ramp=result.ramp, low=result.low, edge=result.edge, period=result.period,
        n=len(result.joints), share=result.share,
        held=', '.join(f'{f:.4g}' for f in modes.held[:2]) or 'none',
        free=', '.join(f'{f:.4g}' for f in modes.free[:2]) or 'none')
    return text + ''.join(f'#   {line}\n' for line in table(result))


def table(result):
    """Return the lines of the per-joint table: each peak against its limit."""
    rows = [f'{"joint":<20} {"lines":>5} {"excursion [rad]":>24} {"velocity [rad/s]":>24} '
            f'{"acceleration [rad/s^2]":>24}']
    for j, name in enumerate(result.joints):
        cells = []
        for key, width in (('position', 24), ('velocity', 24), ('acceleration', 24)):
            peak, limit = result.peaks[key][j], result.limits[key][j]
            fraction = f'{peak / limit:.3f}' if math.isfinite(limit) else '-'
            cells.append(f'{f"{peak:.3g} / {limit:.3g} = {fraction}":>{width}}')
        rows.append(f'{name:<20} {len(result.frequencies[j]):>5} ' + ' '.join(cells))
    return rows


def programs_text(result, command):
    """Return the program file's text: the header, then hold and excite."""
    programs, default = result.programs()
    body = yaml.safe_dump({'default': default, 'programs': programs}, sort_keys=False,
                          default_flow_style=None, width=99)
    return header(result, command) + body


def write(model_name, output, command='', **options):
    """Design the excitation of ``model_name`` and write its program file; return the design.

    ``options``: those of `design`. Raises `ConfigError` (one line naming the field)
    before anything is written.
    """
    from ..config_files import resolve_model_path
    from ..model_config import load_model
    try:
        model = load_model(resolve_model_path(model_name))
    except ValueError as error:             # ConfigError and the URDF reader's errors
        raise ConfigError(' '.join(str(error).split())) from None
    result = design(model, **options)
    text = programs_text(result, command)
    output = os.path.abspath(output)
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with open(output, 'w', encoding='utf-8') as stream:
        stream.write(text)
    return result


def _pose(text):
    """Parse a --pose value: numbers separated by commas or spaces."""
    try:
        return [float(x) for x in text.replace(',', ' ').split()]
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected numbers, got {text!r}') from None


def main(argv=None):
    """Entry point of ``excite``: exit 0 with the file written, 2 on bad input."""
    parser = argparse.ArgumentParser(prog='excite', description=__doc__.split('\n')[0])
    parser.add_argument('model', help="the arm's model file (a path, or a name in "
                                      'config/models)')
    parser.add_argument('--pose', type=_pose, nargs='+', help='joint angles [rad] to '
                        'excite about, one per joint (default: the analysis pose)')
    parser.add_argument('--duration', type=float, default=DURATION,
                        help=f'length of the program [s], ramps included (default {DURATION:g})')
    parser.add_argument('--band-edge', type=float, help=f'highest line [Hz] (default: '
                        f'{BAND_MARGIN:g} x the first elastic mode)')
    parser.add_argument('--low', type=float, help='lowest line [Hz] (default: 1 / period)')
    parser.add_argument('--period', type=float, default=PERIOD,
                        help=f'the multisine\'s period [s]: its lines are 1/period apart '
                             f'(default {PERIOD:g})')
    parser.add_argument('--ramp', type=float, default=RAMP,
                        help=f'fade in and out [s] (default {RAMP:g})')
    parser.add_argument('--share', type=float, default=SHARE,
                        help=f'peaks at most this share of each limit (default {SHARE:g})')
    parser.add_argument('--excursion', type=float, default=EXCURSION,
                        help=f'largest excursion from the pose [rad] (default {EXCURSION:g})')
    parser.add_argument('-o', '--output', help='the program file to write (default: '
                                               '<model name>_excite.yaml here)')
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:              # argparse's usage and one line: exit 2
        return stop.code
    output = args.output or (os.path.splitext(os.path.basename(args.model))[0]
                             + '_excite.yaml')
    pose = None if args.pose is None else [x for part in args.pose for x in part]
    command = 'excite ' + ' '.join(sys.argv[1:] if argv is None else argv)
    try:
        result = write(args.model, output, command, pose=pose, duration=args.duration,
                       band_edge=args.band_edge, period=args.period, low=args.low,
                       ramp=args.ramp, share=args.share, excursion=args.excursion)
    except ConfigError as error:
        print(f'excite: {error}', file=sys.stderr, flush=True)
        return 2
    modes = result.modes
    first = (f'first elastic modes {modes.held[0]:.4g} Hz (joints held), '
             f'{modes.free[0]:.4g} Hz (free)' if modes.held.size else 'no elastic mode')
    print(f'excite: wrote {os.path.abspath(output)} (program {PROGRAM!r}, '
          f'{result.duration:g} s)\nband {result.low:g}-{result.edge:g} Hz; {first}',
          flush=True)
    for line in table(result):
        print(line, flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
