"""``identify run.mcap --model my_arm.yaml --fit forearm.beam.bending_stiffness,...``.

Fits the named parameters of a model file to a recording (`identification.identify`),
prints the estimates with their confidence intervals, each signal's residual RMS and
whiteness, draws recorded against simulated signals (PNG, next to the recording or in
``--out``) and, with ``--write [PATH]``, writes the model file with the estimates (in place
without PATH; comments kept). The recording is an MCAP file or the directory of
``ros2 bag record -s mcap``. Exit status: 0 fitted, 2 bad input (one line naming it,
nothing written), 3 refused: the recording cannot determine the parameter set (the line
names the parameters). doc/hil.md, "Identifying your arm".
"""

import argparse
import os
import sys

from . import identify, IdentificationError, plots, Unidentifiable, WINDOW
from .fit import LEVEL
from ..mechanics.integrators import METHODS
from ..config_checks import ConfigError
from ..config_files import load_yaml, resolve_model_path

BAD_INPUT, REFUSED = 2, 3


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit status 2."""

    def error(self, message):
        """Print ``identify: <message>`` and exit 2."""
        print(f'{self.prog}: {message}', file=sys.stderr)
        sys.exit(BAD_INPUT)


def parser():
    """Build the command's arguments (module doc)."""
    options = Parser(prog='identify', description=__doc__.splitlines()[0])
    options.add_argument('recording', help='MCAP file written by the recorder, or a '
                                           'ros2 bag record -s mcap directory')
    options.add_argument('--model', required=True,
                         help='model file: a path, or a name in config/models')
    options.add_argument('--fit', required=True,
                         help='comma-separated parameter paths, e.g. '
                              'forearm.beam.bending_stiffness,forearm.payload.mass')
    options.add_argument('--window', type=float, default=WINDOW,
                         help=f'window length [s] (default {WINDOW:g}); each window\'s '
                              'initial state is estimated')
    options.add_argument('--integrator', choices=METHODS,
                         help='replay integrator (default: rk4 at the largest stable step '
                              'dividing the recording\'s period, else rosenbrock3)')
    options.add_argument('--step', type=float, help='replay integration step [s]')
    options.add_argument('--level', type=float, default=LEVEL,
                         help=f'confidence level of the intervals (default {LEVEL:g})')
    options.add_argument('--joint-states', default='/joint_states',
                         help='joint state topic (default /joint_states)')
    options.add_argument('--modal-states', default='/modal_states',
                         help='modal state topic, or none to fit the joints alone '
                              '(default /modal_states, used when recorded)')
    options.add_argument('--driver-compensation', default='',
                         help='what the arm\'s driver adds to the efforts it reports: gravity '
                              '(the controller\'s driver_compensation; default: nothing)')
    options.add_argument('--out', help='directory for the figures (default: next to the '
                                       'recording, <name>_identification)')
    options.add_argument('--no-figures', action='store_true', help='draw no figures')
    options.add_argument('--write', nargs='?', const='', metavar='PATH',
                         help='write the model file with the estimates: to PATH, or over '
                              'the model file itself when PATH is left out')
    return options


def target(options):
    """Where ``--write`` writes (None without it); bad input raises IdentificationError."""
    if options.write is None:
        return None
    path = options.write or resolve_model_path(options.model)
    if not os.path.exists(path) and not options.write:
        return path                     # no model file: `identify` names it
    if not options.write and not (os.path.exists(options.model)
                                  and os.path.samefile(path, options.model)):
        raise IdentificationError(f'--write: the model {options.model!r} is a file of the '
                                  'package; give the path to write (--write PATH)')
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise IdentificationError(f'--write {path}: no directory {directory!r}')
    model = resolve_model_path(options.model)
    if os.path.exists(model) and directory != os.path.dirname(os.path.abspath(model)):
        try:
            urdf = load_yaml(model).get('urdf')
        except ConfigError:
            urdf = None                 # `identify` names what is wrong with the file
        if (isinstance(urdf, str) and urdf != '-' and not os.path.isabs(urdf)
                and '://' not in urdf):
            raise IdentificationError(f'--write {path}: the model file\'s urdf: {urdf} is '
                                      'relative to its own directory: write there, or make '
                                      'the path absolute')
    return path


def figures_directory(options):
    """Where the figures go: ``--out``, or ``<recording>_identification`` beside it."""
    if options.out:
        return options.out
    recording = options.recording.rstrip(os.sep)
    if not os.path.isdir(recording):
        recording = os.path.splitext(recording)[0]
    return recording + '_identification'


def main(argv=None):
    """Entry point of the ``identify`` executable; returns the exit status."""
    options = parser().parse_args(argv)
    modal = None if options.modal_states.lower() == 'none' else options.modal_states
    try:
        written = target(options)
        result = identify(options.recording, options.model, options.fit, options.window,
                          options.integrator, options.step, options.level,
                          options.joint_states, modal,
                          [e for e in options.driver_compensation.split(',') if e])
        text = result.rewrite(open(result.model_path).read()) if written else None
    except Unidentifiable as error:
        print(f'identify: {error}', file=sys.stderr)
        return REFUSED
    except IdentificationError as error:
        print(f'identify: {error}', file=sys.stderr)
        return BAD_INPUT
    print(result.report())
    if not options.no_figures:
        directory = figures_directory(options)
        drawn = plots.draw(result, directory)
        for _, figure in drawn.values():
            plots.plt.close(figure)
        names = ', '.join(os.path.basename(path) for path, _ in drawn.values())
        print(f'\nfigures {directory}/ ({names})')
    if written:
        partial = f'{written}.identify-{os.getpid()}'
        with open(partial, 'w') as stream:
            stream.write(text)
        os.replace(partial, written)
        print(f'wrote {written}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
