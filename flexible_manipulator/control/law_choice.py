"""Which law the program controller runs: its realization and control model.

Control model. The law evaluates M, h and B of a control model: the full model of the
file, a reduced one (``control_modes``: at most that many assumed modes per link and plane,
the rest unmodelled; 0 is rigid) or the rigid twin (``control_model: rigid_twin``). A
sampled servo law that inverts fast, lightly damped modes can be unstable at periods far
shorter than those modes' periods (checked below): on the default arm the loop with the
2nd and 3rd modes modelled is unstable at 2, 1 and 0.5 ms, with the first mode of each
link only it is stable at 2 ms.

``realization`` and ``control_model`` (`controller_settings.ControllerSettings`) resolve
by `choose_law`: ``auto`` is the servo realization on the full model of a flexible arm
and the ideal one on a rigid arm or on the rigid twin. With both ``auto``, a servo law the
checks refuse gives way to the first of `ROBUST_ALTERNATIVES` they admit
(`controller_setup`); `closest` says which came closest when none is.
"""

from collections import namedtuple

from ..config_checks import ConfigError

# The robust alternatives of a flexible law, in order of preference: settings, description.
ROBUST_ALTERNATIVES = ((dict(model_following=True), 'model following (the same law on an '
                        'internal model, the arm following its joints on the rigid twin)'),
                       (dict(realization='ideal', control_model='rigid_twin'),
                        'computed torque on the rigid twin'))

# What `choose_law` resolves: 'servo' or 'ideal'; 'full' or 'rigid_twin'; the rigid twin
# (the model itself when rigid; None when the model has none); the model the law evaluates.
LawChoice = namedtuple('LawChoice', 'realization control_model_kind rigid_twin control_model')


def choose_law(model, settings):
    """Resolve ``realization`` and ``control_model`` of ``settings`` on ``model`` (module doc).

    Returns a `LawChoice`; raises `ConfigError` naming the setting that cannot be met.
    """
    s = settings
    flexible = model.nv > model.nu
    kind = s.realization
    if kind == 'auto':
        kind = 'ideal' if s.control_model == 'rigid_twin' or not flexible else 'servo'
    control = s.control_model
    if control == 'auto':
        control = 'rigid_twin' if kind == 'ideal' and flexible else 'full'
    try:
        rigid_twin = model.rigid_twin() if flexible else model
    except ValueError as error:         # Cosserat chains with clamps or pre-curved rods
        if control == 'rigid_twin':
            raise ConfigError(f'control_model: {error}') from None
        rigid_twin = None
    modes = s.control_modes
    if modes is not None and (isinstance(modes, bool) or not isinstance(modes, int)
                              or modes < 0):
        raise ConfigError(f'control_modes: expected a number of modes >= 0 (or None: '
                          f'all), got {modes!r}')
    if control == 'rigid_twin':
        control_model = rigid_twin
    else:
        try:
            control_model = (model.with_modes(modes) if flexible and modes is not None
                             else model)
        except ValueError as error:
            raise ConfigError(f'control_modes: {error}') from None
    if kind == 'ideal' and control_model.nv > control_model.nu:
        raise ConfigError(f'realization: ideal on a control model with '
                          f'{control_model.nv - control_model.nu} modal '
                          'coordinates would need forces on them; use realization: servo, '
                          'control_model: rigid_twin or control_modes: 0')
    return LawChoice(kind, control, rigid_twin, control_model)


def closest(tried):
    """Say which law came closest when ``auto`` finds every law it knows refused."""
    measured = [(refusal.radius, what) for what, refusal in tried
                if refusal.radius is not None]
    if not measured:
        return 'auto: no law it knows is admitted'
    radius, what = min(measured)
    others = ', '.join(f'{w} {r:.6g}' for r, w in sorted(measured)[1:])
    return (f'auto: no law it knows is admitted; closest: {what} (worst spectral radius '
            f'{radius:.6g}, {100 * (radius - 1):.3g} % past 1)'
            + (f'; then {others}' if others else ''))
