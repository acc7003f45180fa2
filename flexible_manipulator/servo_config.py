"""Servoconstraint model files: ``type: servo_rigid_body`` and ``type: servo_sleigh``.

`servo_model_from_dict` builds a `ServoRigidBody` or a `ServoSleigh` (``mechanics``); its
docstring gives the fields. Errors are `ConfigError` naming the field.
"""

import numpy as np

from .config_checks import check_keys, ConfigError, name, number, vector
from .mechanics.servo import REALIZATIONS
from .mechanics.servo_rigid_body import ServoRigidBody
from .mechanics.servo_sleigh import ServoSleigh

SERVO_TYPES = ('servo_rigid_body', 'servo_sleigh')
_SERVO_COMMON = ('description', 'realization', 'stabilization', 'omega_max', 'initial')


def _servo_options(spec):
    """Keyword arguments shared by both servo models (realization, stabilization, omega_max)."""
    realization = spec.get('realization', 'servo')
    if realization not in REALIZATIONS:
        raise ConfigError(f'realization: expected one of {", ".join(REALIZATIONS)}, got '
                          f'{realization!r}')
    return dict(realization=realization,
                stabilization=number(spec.get('stabilization', 0.0), 'stabilization', 0.0),
                omega_max=number(spec.get('omega_max', 1e3), 'omega_max', 0.0,
                                 strict_minimum=True))


def _servo_initial(model, spec):
    """Set the model's initial state from ``initial: {q: [...], v: [...]}`` (checked)."""
    initial = spec.get('initial', {})
    check_keys(initial, 'initial', required=(), optional=('q', 'v'))
    q = (vector(initial['q'], 'initial.q', model.nq) if 'q' in initial
         else model.neutral_configuration())
    v = vector(initial['v'], 'initial.v', model.nv) if 'v' in initial else np.zeros(model.nv)
    try:
        model.set_initial_state(q, v)
    except ValueError as error:
        raise ConfigError(f'initial.{error}') from None
    residual = float(model.a @ v)
    if (model.realization == 'servo' and model.stabilization == 0.0
            and abs(residual) > 1e-9 * np.linalg.norm(model.a) * max(1.0, np.linalg.norm(v))):
        raise ConfigError(f'initial.v: violates the constraint <a, v> = 0 (residual '
                          f'{residual:.6g}); without stabilization the residual would stay; '
                          f'start on the constraint or set stabilization > 0')


def servo_model_from_dict(spec, source='model'):
    """Build a `ServoRigidBody` or `ServoSleigh` from a parsed model file.

    ``type: servo_rigid_body``::

        inertia: [ixx, iyy, izz, ixy, ixz, iyz]   # about the fixed point, body axes [kg m^2]
        a: [0, 0, 1]                   # constraint covector: <a, w> = 0
        b: [0, 0.6, 0.8]               # control-torque direction: torque lambda b [N m]
        weight_moment: [0, 0, 0]       # c_g = weight x centre of mass (body) [N m]
        position: [0, 0, 1]            # fixed point in the world [m]
        initial: {q: [1, 0, 0, 0], v: [wx, wy, wz]}   # quaternion (w, x, y, z), rad/s

    ``type: servo_sleigh``::

        mass: 2.0                      # kg
        inertia: 0.05                  # about the vertical through the blade point O [kg m^2]
        control: [a_s, b_s, c_s]       # force lambda (a_s along u, b_s normal), torque lambda c_s
        offset: 0.0                    # centre of mass on the running axis [m]
        slope: 0.0                     # inclination of the plane [rad]
        initial: {q: [x, y, phi], v: [omega, u, v_lat]}

    Both take ``realization`` (servo | free), ``stabilization`` (Baumgarte gain [1/s]),
    ``omega_max`` (blow-up threshold) and ``description``. A ``servo`` model started off its
    constraint needs ``stabilization`` > 0. Errors are `ConfigError` naming the field.
    """
    kind = spec['type']
    try:
        if kind == 'servo_rigid_body':
            check_keys(spec, '', required=('name', 'type', 'inertia', 'a', 'b'),
                       optional=_SERVO_COMMON + ('weight_moment', 'position'))
            ixx, iyy, izz, ixy, ixz, iyz = vector(spec['inertia'], 'inertia', 6)
            model = ServoRigidBody(
                name(spec['name'], 'name'),
                inertia=[[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]],
                a=vector(spec['a'], 'a', 3), b=vector(spec['b'], 'b', 3),
                weight_moment=vector(spec.get('weight_moment', [0.0] * 3), 'weight_moment', 3),
                position=vector(spec.get('position', [0.0] * 3), 'position', 3),
                **_servo_options(spec))
        else:
            check_keys(spec, '', required=('name', 'type', 'mass', 'inertia', 'control'),
                       optional=_SERVO_COMMON + ('offset', 'slope'))
            model = ServoSleigh(
                name(spec['name'], 'name'),
                mass=number(spec['mass'], 'mass', 0.0, strict_minimum=True),
                inertia=number(spec['inertia'], 'inertia', 0.0, strict_minimum=True),
                control=vector(spec['control'], 'control', 3),
                offset=number(spec.get('offset', 0.0), 'offset'),
                slope=number(spec.get('slope', 0.0), 'slope'), **_servo_options(spec))
        _servo_initial(model, spec)
    except ConfigError as error:
        raise ConfigError(f'{source}: {error}') from None
    except ValueError as error:          # the model's own checks name the field first
        raise ConfigError(f'{source}: {error}') from None
    except ArithmeticError as error:     # values so far out that the checks overflow
        raise ConfigError(f'{source}: {kind}: the values overflow the model\'s arithmetic '
                          f'({type(error).__name__}: {error})') from None
    return model
