"""The controller for your own arm: its parameters and programs from the arm's model file.

``hil_config my_arm.yaml -o my_arm_hil.yaml`` (``ros2 run flexible_manipulator
hil_config``; ``python -m flexible_manipulator.hil_config`` without ROS) writes two files
the controller starts from unedited: a parameter file (the settings of config/hil.yaml
that are not about one arm, then the arm's joints, effort limits at
``effort_limit_fraction`` of the model's, the model's velocity limits and the analysis pose
of `control.arm_defaults`, each with a comment saying what it is) and a program file
(``hold`` and ``joint_sine``, `control.arm_defaults.generated_programs`). A model the
controller cannot run on a real arm (a joint without a finite effort or velocity limit,
`control.arm_defaults.require_limits`), a file that cannot be read or a bad argument:
one line naming the field, exit status 2, nothing written.

`for_model` is what ``launch/hil.launch.py model:=<arm>`` passes when the model is not
its parameter file's: the file's parameters less `ARM_PARAMETERS` (they are about the
file's arm), so the controller takes those from the model (doc/hil.md); and
``safe_action: hold`` becomes ``gravity`` on an arm whose hold law the start-up checks
refuse (`safe_action_for`).
"""

import argparse
import os
import sys
import textwrap

import numpy as np
import yaml

from .control.arm_defaults import analysis_pose, generated_programs, require_limits
from .control.program_controller import ControllerSettings
from .config_checks import ConfigError
from .config_files import resolve_config_path, resolve_model_path
from .model_config import load_model
from .settings import flatten, parameter_file_problem, schema

# Parameters that describe one arm (its joints, limits, pose, programs and the law chosen
# for it): a parameter file's values of these are not used for another model.
ARM_PARAMETERS = ('joints', 'effort_limits', 'effort_rate_limits', 'velocity_limits',
                  'analysis_positions', 'posture', 'posture_stiffness', 'posture_damping',
                  'program_file', 'active_program', 'delay_program', 'realization',
                  'control_model', 'control_modes', 'model_following')
NODE = 'controller'
BASE = 'hil.yaml'           # in the package's config/: the settings for a real arm


def controller_parameters(params_file):
    """Return the controller's parameters in ``params_file`` as {dotted name: value}.

    The section of the node ``controller`` (or ``/controller``, ``/**``: all nodes), as
    rcl reads it; `ConfigError` when the file cannot be read or has none.
    """
    problem = parameter_file_problem(params_file)
    if problem is not None:
        raise ConfigError(problem)
    try:
        with open(params_file, encoding='utf-8') as stream:
            content = yaml.safe_load(stream)
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f'{params_file}: {" ".join(str(error).split())}') from None
    parameters = {}
    for key in ('/**', NODE, f'/{NODE}'):
        section = (content or {}).get(key) if isinstance(content, dict) else None
        if isinstance(section, dict) and isinstance(section.get('ros__parameters'), dict):
            parameters.update(flatten(section['ros__parameters']))
    if not parameters:
        raise ConfigError(f'{params_file}: no ros__parameters for the node {NODE!r}')
    return parameters


def same_model(first, second):
    """Whether two ``model`` values (names in config/models or paths) name one file."""
    return os.path.realpath(resolve_model_path(str(first))) == \
        os.path.realpath(resolve_model_path(str(second)))


def for_model(params_file, model):
    """Return (parameters, dropped) of ``params_file`` for the controller of ``model``.

    ``parameters``: {name: value}, ``model`` set; when the file names another model (or
    none), without the file's `ARM_PARAMETERS` (``dropped``, sorted), which the controller
    then takes from ``model`` (its joints and limits, `arm_defaults`).
    """
    parameters = controller_parameters(params_file)
    dropped = []
    if 'model' not in parameters or not same_model(parameters['model'], model):
        dropped = sorted(name for name in parameters if name in ARM_PARAMETERS)
        for name in dropped:
            del parameters[name]
    parameters['model'] = model
    if dropped and parameters.get('safe_action') == 'hold':
        parameters['safe_action'] = safe_action_for(model, parameters)
    return parameters, dropped


def safe_action_for(model, parameters):
    """Return ``hold`` when the start-up checks admit its hold law on ``model``, else gravity.

    A hold law refused on an arm (the rigid twin's computed torque unstable with its
    flexible links and the delay over the uncertainty) would stop the controller; gravity
    still holds the arm up (doc/hil.md, "Safe action").
    """
    from .control.program_controller import build_hold_law
    from .settings import from_parameters
    arm = load_model(resolve_model_path(model))
    try:
        build_hold_law(arm, from_parameters(ControllerSettings, parameters))
    except ConfigError:
        return 'gravity'
    return 'hold'


def arm_values(model, parameters):
    """Return {name: value} of the arm's parameters for ``model`` (module doc).

    ``parameters``: the base settings (their ``effort_limit_fraction``); refuses a model
    without the limits a real arm needs (`require_limits`).
    """
    fraction = parameters.get('effort_limit_fraction',
                              ControllerSettings().effort_limit_fraction)
    effort = fraction * np.asarray(model.effort_limit, dtype=float)
    require_limits(model, effort, model.velocity_limit)
    return {'joints': list(model.joint_names),
            'effort_limits': [round(float(x), 6) for x in effort],
            'velocity_limits': [round(float(x), 6) for x in model.velocity_limit],
            'analysis_positions': [round(float(x), 6) for x in analysis_pose(model)]}


def _value(value):
    """Return ``value`` as YAML on one line."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1000).strip()
    return text[:-4].strip() if text.endswith('...') else text


def _comment(text, indent):
    """Return ``text`` as comment lines at ``indent`` spaces, wrapped at 99 columns."""
    prefix = ' ' * indent + '# '
    return textwrap.wrap(text, 99, initial_indent=prefix, subsequent_indent=prefix)


def _descriptions():
    """Return {parameter: description} of the controller's settings (for the comments)."""
    from .nodes import controller_base, controller_node     # rclpy: only when writing
    settings = (*schema(ControllerSettings), *controller_node.NODE_SETTINGS,
                *controller_base.NODE_SETTINGS)
    return {setting.name: setting.text for setting in settings}


def params_text(model_name, model, values, base, programs_path, source):
    """Return the parameter file's text: the arm's values, then the base settings."""
    fraction = base.get('effort_limit_fraction', ControllerSettings().effort_limit_fraction)
    arm = [
        ('model', model_name, "the arm's model file (a path, or a name in config/models)"),
        ('joints', values['joints'], "order of the entries of each effort command: the "
         "driver's effort controller's joint order (edit to match it)"),
        ('program_file', programs_path, 'hold and joint_sine, written beside this file'),
        ('active_program', 'hold', 'hold where enabled; then switch: ros2 param set '
         '/controller active_program joint_sine'),
        ('effort_limits', values['effort_limits'],
         f"N m (N for prismatic joints): efforts clipped here; {fraction:g} of the model's "
         f"{_value([round(float(x), 6) for x in model.effort_limit])} "
         '(effort_limit_fraction). Lower them for a first run'),
        ('velocity_limits', values['velocity_limits'],
         "rad/s: the model's; a joint faster than this latches a fault (zero effort)"),
        ('analysis_positions', values['analysis_positions'],
         'rad: the pose the start-up checks linearize at and joint_sine moves about (0.3 rad '
         "clamped into the middle half of each joint's travel): put the arm's working pose "
         'here, and the same offsets in the program file'),
    ]
    descriptions = _descriptions()
    lines = [f'# The controller for {model.name!r} on the real arm (hardware in the loop),',
             f'# written by hil_config from {source}.',
             '# Start it (the driver running):',
             '#   ros2 launch flexible_manipulator hil.launch.py params_file:=<this file> \\',
             '#       joint_states_topic:=/<arm>/joint_states '
             'effort_command_topic:=/<arm>/commands',
             '# or: ros2 run flexible_manipulator controller --ros-args --params-file <this '
             'file> -r ...',
             "# Units: SI, radians. Every parameter: doc/nodes.md ('controller'); the steps: "
             'doc/hil.md.',
             f'{NODE}:', '  ros__parameters:', '    # The arm (from its model file):']
    for name, value, comment in arm:
        lines += _comment(comment, 4)
        lines.append(f'    {name}: {_value(value)}')
    lines += ['    # effort_rate_limits: [...]   # N m/s per joint; unset: none',
              f'    # For a real arm (from {BASE}):']
    groups = {}
    for name, value in base.items():
        if name in ARM_PARAMETERS or name == 'model':
            continue
        head, _, key = name.partition('.')
        groups.setdefault(head if key else name, []).append((name, key, value))
    for head, items in groups.items():
        if len(items) == 1 and not items[0][1]:
            name, _, value = items[0]
            lines += _comment(descriptions.get(name, name), 4)
            lines.append(f'    {name}: {_value(value)}')
            continue
        lines.append(f'    {head}:')
        for name, key, value in items:
            lines += _comment(descriptions.get(name, name), 6)
            lines.append(f'      {key}: {_value(value)}')
    return '\n'.join(lines) + '\n'


PROGRAMS_HEADER = """\
# Programs of the controller for {name!r}, written by hil_config
# (format: doc/programs.md).
# One is active at a time; switch with `ros2 param set /controller active_program <name>`.
# Units: SI, radians, seconds.
#   gains.alpha [1/s]: the rows' stabilization, critically damped (beta = alpha)
#   hold: each listed joint held where the program starts
#   joint_sine: each joint on offset + amplitude sin(2 pi frequency t + phase) [rad, rad,
#     Hz, rad]; phase -pi/2 starts it at rest at offset - amplitude. The offsets are the
#     parameter file's analysis_positions; the peak speed 2 pi frequency amplitude is at
#     most a tenth of each joint's velocity limit. Keep offset +- amplitude inside the
#     joint limits when you edit them.
"""


def programs_text(model, values):
    """Return the program file's text: `generated_programs` with a header of comments."""
    programs, default = generated_programs(model, values['analysis_positions'],
                                           values['velocity_limits'])
    body = yaml.safe_dump({'default': default, 'programs': programs}, sort_keys=False,
                          default_flow_style=None, width=99)
    return PROGRAMS_HEADER.format(name=model.name) + body


def write(model_name, output, programs_output=None, params_file=None):
    """Write the parameter and program files for ``model_name``; return their paths.

    ``params_file``: the base settings (default: the package's config/hil.yaml). Raises
    `ConfigError` (one line naming the field) before anything is written.
    """
    params_file = params_file or resolve_config_path(BASE, 'config')
    base, _ = for_model(params_file, model_name)
    try:
        model = load_model(resolve_model_path(model_name))
    except ValueError as error:             # ConfigError and the URDF reader's errors
        raise ConfigError(' '.join(str(error).split())) from None
    values = arm_values(model, base)
    output = os.path.abspath(output)
    if programs_output is None:
        programs_output = os.path.splitext(output)[0] + '_programs.yaml'
    programs_output = os.path.abspath(programs_output)
    given = model_name if not os.path.exists(model_name) else os.path.abspath(model_name)
    programs = programs_text(model, values)
    params = params_text(given, model, values, base, programs_output,
                         os.path.basename(resolve_model_path(model_name)))
    for path, text in ((programs_output, programs), (output, params)):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as stream:
            stream.write(text)
    return output, programs_output


def main(argv=None):
    """Entry point of ``hil_config``: exit 0 with the files written, 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('model', help='the arm\'s model file (a path, or a name in '
                                      'config/models)')
    parser.add_argument('-o', '--output', help='the parameter file to write (default: '
                                               '<model name>_hil.yaml here)')
    parser.add_argument('--programs', help='the program file to write (default: the '
                                           'parameter file with _programs.yaml)')
    parser.add_argument('--params-file', help=f'the settings for a real arm (default: the '
                                              f'package\'s config/{BASE})')
    args = parser.parse_args(argv)
    output = args.output or (os.path.splitext(os.path.basename(args.model))[0] + '_hil.yaml')
    try:
        written = write(args.model, output, args.programs, args.params_file)
    except ConfigError as error:
        print(f'hil_config: {error}', file=sys.stderr, flush=True)
        return 2
    print(f'hil_config: wrote {written[0]} and {written[1]}', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
