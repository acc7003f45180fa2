"""PNG figures of a recorded run: ``ros2 run flexible_manipulator plot run.mcap [--out DIR]``.

For an arm: joint positions (against the program's reference when its rows are joints),
the program rows' measured value r + phi against their reference r and the residuals phi,
the applied efforts against their limits, the modal coordinates, the tip and the program
point (a lambda-point or the tip) in the plane against the program's path, and a filmstrip
of the deformed arm (its TF frames, joints to tip, at evenly spaced times). For a servo
plant: the contact point's path, the body-axis velocities, the constraint force, energy
and first integrals. Each figure is drawn from `series` only; `draw` returns the figures
too, so that tests can compare the plotted lines with the recording.
"""

import argparse
import os
import sys

import matplotlib
matplotlib.use('Agg')                       # files only: no display needed
import matplotlib.pyplot as plt             # noqa: E402 - after choosing the backend
import numpy as np                          # noqa: E402

from . import series                        # noqa: E402

FILMSTRIP_FRAMES = 8


def plot_named(axes, named, key='position', names=None, style='-', suffix=''):
    """Plot field ``key`` of a `series.Named` per entry (those in ``names``); return lines."""
    values = named.array(key)
    return [axes.plot(named.times, values[:, i], style, label=f'{name}{suffix}')[0]
            for i, name in enumerate(named.names) if names is None or name in names]


def named_figure(run, topic, key, ylabel, title, decorate=None):
    """Plot field ``key`` of ``topic``'s first series, then ``decorate(run, axes, named)``.

    Returns the figure, or None without such data.
    """
    named = run.first(topic)
    if named is None or not named.rows.get(key):
        return None
    figure, axes = plt.subplots()
    plot_named(axes, named, key)
    axes.set(xlabel='simulated time [s]', ylabel=ylabel, title=title)
    if decorate is not None:
        decorate(run, axes, named)
    axes.legend()
    return figure


def joints(run):
    """Draw the joint positions; the reference dashed for joint rows of the program."""
    def reference_rows(run, axes, states):
        reference = run.first('/controller/reference')
        if reference is not None:
            plot_named(axes, reference, names=states.names, style='--', suffix=' reference')
    return named_figure(run, '/joint_states', 'position', 'joint position [rad or m]',
                        'Joints', reference_rows)


def efforts(run):
    """Draw the effort applied at each joint against its limits."""
    def limits(run, axes, states):
        for name, line in zip(states.names, list(axes.lines)):
            if name in run.limits:
                axes.axhline(run.limits[name], color=line.get_color(), linestyle=':')
                axes.axhline(-run.limits[name], color=line.get_color(), linestyle=':')
    return named_figure(run, '/joint_states', 'effort', 'effort [N m or N]',
                        'Applied efforts (dotted: limits)', limits)


def modes(run):
    """Draw the modal coordinates."""
    return named_figure(run, '/modal_states', 'position', 'modal coordinate [m]', 'Modes')


def program(run):
    """Draw each program row's measured value r + phi, its reference r and residual phi."""
    reference, residuals = run.first('/controller/reference'), run.first('/controller/residuals')
    if reference is None or residuals is None:
        return None
    t, r = matched(reference, residuals)
    phi = residuals.array('position')[:len(t)]
    figure, (top, bottom) = plt.subplots(2, sharex=True)
    for i, name in enumerate(reference.names):
        top.plot(t, r[:, i] + phi[:, i], label=name)
        top.plot(t, r[:, i], '--', label=f'{name} reference')
        bottom.plot(t, phi[:, i], label=name)
    top.set(ylabel='r + phi, r', title='Program rows')
    bottom.set(xlabel='simulated time [s]', ylabel='residual phi')
    top.legend()
    bottom.legend()
    return figure


def matched(reference, residuals):
    """Return the stamps and references of the states both topics have, in order."""
    count = min(len(reference.t), len(residuals.t))
    return reference.times[:count], reference.array('position')[:count]


def chain_frames(run):
    """Return the arm's moving TF frames in chain order (fewest ancestors first), the root."""
    def ancestors(name):
        count = 0
        while name in run.frames or name in run.static:
            name = (run.frames.get(name) or run.static[name])[0]
            count += 1
        return count
    root = 'base_link' if 'base_link' in run.static else 'world'
    names = [name for name in run.frames]
    names += [name for name, (parent, _) in run.static.items() if parent in run.frames]
    return sorted(names, key=ancestors), root


def paths(run):
    """Draw the tip and the program point in the plane against the program's path."""
    reference, residuals = run.first('/controller/reference'), run.first('/controller/residuals')
    if reference is None or residuals is None or not run.frames:
        return None
    rows = reference.names
    pairs = [(i, rows.index(name[:-2] + '_y')) for i, name in enumerate(rows)
             if name.endswith('_x') and name[:-2] + '_y' in rows]
    if not pairs:
        return None
    t, r = matched(reference, residuals)
    phi = residuals.array('position')[:len(t)]
    figure, axes = plt.subplots()
    for i, j in pairs:
        label = rows[i][:-2]
        axes.plot(r[:, i], r[:, j], '--', label=f'{label}: program path')
        axes.plot(r[:, i] + phi[:, i], r[:, j] + phi[:, j], label=f'{label}: measured')
    frames, root = chain_frames(run)
    _, tip = run.frame_positions(frames[-1], root)
    axes.plot(tip[:, 0], tip[:, 1], ':', label=f'{frames[-1]} (TF)')
    axes.set(xlabel=f'x in {root} [m]', ylabel=f'y in {root} [m]', title='Paths in the plane')
    axes.set_aspect('equal', adjustable='datalim')
    axes.legend()
    return figure


def filmstrip(run, count=FILMSTRIP_FRAMES):
    """Draw the deformed arm (its TF frames joined, joints to tip) at ``count`` times."""
    if not run.frames or run.first('/joint_states') is None:     # an arm's run only
        return None
    frames, root = chain_frames(run)
    times = run.frame_positions(frames[0], root)[0]
    picks = times[np.linspace(0, len(times) - 1, min(count, len(times))).astype(int)]
    points = np.array([run.frame_positions(name, root, picks)[1] for name in frames])
    figure, axes = plt.subplots()
    for k, t in enumerate(picks):
        arm = np.vstack([np.zeros(3), points[:, k]])         # the root first
        axes.plot(arm[:, 0], arm[:, 1], '.-', label=f't = {t:.2f} s')
    axes.set(xlabel=f'x in {root} [m]', ylabel=f'y in {root} [m]',
             title='The deformed arm (TF frames, joints to tip)')
    axes.set_aspect('equal', adjustable='datalim')
    axes.legend(fontsize='small')
    return figure


def servo(run):
    """Draw a servo plant's contact path, velocities, constraint force, energy, integrals."""
    outputs = run.first('/servo_state')
    if not run.odometry and outputs is None:
        return None
    figure, ((path, twist), (force, energy)) = plt.subplots(2, 2, figsize=(10, 8))
    if run.odometry:
        odometry = run.odometry
        path.plot(odometry['position'][:, 0], odometry['position'][:, 1])
        path.set(xlabel='x [m]', ylabel='y [m]', title='Contact point path')
        path.set_aspect('equal', adjustable='datalim')
        for i, name in enumerate(('u', 'v', 'w', 'omega_x', 'omega_y', 'omega_z')):
            twist.plot(odometry['t'], odometry['twist'][:, i], label=name)
        twist.set(xlabel='simulated time [s]', title='Velocities (body axes)')
        twist.legend(fontsize='small')
    if outputs is not None:
        values = outputs.array('position')
        for i, name in enumerate(outputs.names):
            axes = force if name == 'lambda' else energy
            if name in ('lambda', 'energy') or name.endswith('_integral') or \
                    name == 'gamma_norm':
                axes.plot(outputs.times, values[:, i], label=name)
        force.set(xlabel='simulated time [s]', title='Constraint force lambda')
        energy.set(xlabel='simulated time [s]', title='Energy and first integrals')
        energy.legend(fontsize='small')
    return figure


FIGURES = {'joints': joints, 'program': program, 'efforts': efforts, 'modes': modes,
           'paths': paths, 'filmstrip': filmstrip, 'servo': servo}


def save(figure, directory, name):
    """Write ``figure`` as ``directory/name.png`` (the package's figure size); its path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f'{name}.png')
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    return path


def draw(run, directory):
    """Draw every figure the run has data for into ``directory``; return {name: (path, fig)}."""
    os.makedirs(directory, exist_ok=True)
    drawn = {}
    for name, make in FIGURES.items():
        figure = make(run)
        if figure is None:
            continue
        drawn[name] = (save(figure, directory, name), figure)
    return drawn


def plot_recording(recording, directory=None):
    """Draw the figures of ``recording``; return their paths.

    ``directory``: default next to the recording, ``<name without .mcap>_figures``.
    """
    if not directory:
        recording = recording.rstrip(os.sep)
        directory = (recording if os.path.isdir(recording)
                     else os.path.splitext(recording)[0]) + '_figures'
    paths = []
    for path, figure in draw(series.read(recording), directory).values():
        plt.close(figure)
        paths.append(path)
    return paths


def main(argv=None):
    """Entry point of the ``plot`` executable."""
    parser = argparse.ArgumentParser(prog='plot', description=__doc__.splitlines()[0])
    parser.add_argument('recording', help='MCAP file written by the recorder, or a '
                                          'ros2 bag record -s mcap directory')
    parser.add_argument('--out', help='directory for the PNG files (default: next to the '
                                      'recording, <name>_figures)')
    options = parser.parse_args(argv)
    if not os.path.isfile(options.recording) and not os.path.isdir(options.recording):
        print(f'plot: no recording {options.recording!r}', file=sys.stderr)
        return 2
    if os.path.isdir(options.recording):
        try:
            series.bag_files(options.recording)
        except series.BagError as error:
            print(f'plot: {error}', file=sys.stderr)
            return 2
    for path in plot_recording(options.recording, options.out):
        print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
