"""The status panel's content from the nodes' diagnostics (ROS-free; `nodes.view_node` feeds it).

The controllers publish one status named ``<node>: program controller`` a second, the
simulated plants one named ``<node>: simulation`` (or ``servo simulation``): level,
message and key-value pairs (doc/nodes.md). `classify_controller` and `classify_plant`
read them into a `State`: a kind a glance reads (a colour), a line of text, the node name
(whose services the panel's buttons call). A real arm's driver publishes no plant status:
the plant's part then says so. `Figures` keeps the numbers the panel prints.
"""

from dataclasses import dataclass
import html
import math

OK, WARN, ERROR = 0, 1, 2           # diagnostic_msgs/DiagnosticStatus levels
CONTROLLER_SUFFIX = ': program controller'
PLANT_SUFFIXES = (': simulation', ': servo simulation')
# Colours of the kinds (CSS): green runs as asked, amber warns, red stopped on a fault,
# grey is off or unknown, blue paused.
COLORS = {'tracking': '#1a7f37', 'warning': '#b7791f', 'degraded': '#c05621',
          'stale': '#c05621', 'fault': '#c53030', 'disabled': '#555555',
          'running': '#1a7f37', 'paused': '#2b6cb0', 'absent': '#777777'}


@dataclass
class State:
    """One node's state: ``kind`` (a key of `COLORS`), ``text`` (one line), ``node``."""

    kind: str
    text: str
    node: str = ''

    @property
    def color(self):
        """Return the CSS colour of the kind."""
        return COLORS.get(self.kind, '#777777')


def level_of(level):
    """Return a status level as an int (rclpy gives the message's ``byte`` as bytes)."""
    if isinstance(level, (bytes, bytearray)):
        return level[0] if len(level) == 1 else ERROR
    return int(level)


def node_of(status_name):
    """Return the node name of a status named ``<node>: <what>``."""
    return status_name.split(':', 1)[0].strip()


def is_controller(status_name):
    """Tell whether a status comes from a controller node."""
    return status_name.endswith(CONTROLLER_SUFFIX)


def is_plant(status_name):
    """Tell whether a status comes from a simulated plant node."""
    return status_name.endswith(PLANT_SUFFIXES)


def named_numbers(text):
    """Return {name: value} of a diagnostics list ``"a: 1.5, b: -2"`` (unreadable: NaN)."""
    found = {}
    for item in (text or '').split(','):
        name, sep, value = item.rpartition(':')
        if not sep or not name.strip():
            continue
        try:
            found[name.strip()] = float(value)
        except ValueError:
            found[name.strip()] = math.nan
    return found


def classify_controller(name, level, message, values):
    """Return the controller's `State` from its status (module doc).

    A fault (level ERROR, or the ``fault`` value) before a degraded loop (``degraded``:
    switched to a safe program) before stale states (the watchdog acts) before disabled
    before a warning; else tracking the active program.
    """
    node, level = node_of(name), level_of(level)
    active = values.get('active_program', '?')
    if level >= ERROR or values.get('fault'):
        return State('fault', f'FAULT: {values.get("fault") or message}', node)
    if values.get('degraded'):
        return State('degraded', f'DEGRADED to {active!r}: {values["degraded"]}', node)
    if values.get('state_stale') == 'True':
        return State('stale', f'STALE: {message}', node)
    if values.get('enabled') == 'False':
        return State('disabled', 'DISABLED: zero effort', node)
    if level == WARN:
        return State('warning', f'TRACKING {active!r}, warning: {message}', node)
    return State('tracking', f'TRACKING {active!r}', node)


def classify_plant(name, level, message, values):
    """Return the simulated plant's `State`: fault, paused or running (with warnings)."""
    node, level = node_of(name), level_of(level)
    if level >= ERROR:
        return State('fault', f'FAULT: {message} (reset clears it)', node)
    if values.get('paused') == 'True':
        return State('paused', 'PAUSED', node)
    if level == WARN:
        return State('warning', f'RUNNING, warning: {message}', node)
    return State('running', 'RUNNING', node)


@dataclass
class Figures:
    """The numbers of the panel; None: not reported (yet)."""

    simulated_time: float = None      # [s]
    real_time_factor: float = None
    ticks_per_second: float = None    # control ticks per wall second
    program: str = None
    residual: float = None            # largest |residual| of the last second's rows
    controller_heard: bool = False    # (then its ticks are the rate, not the plant's)


def number(values, key):
    """Return the float of ``values[key]``, or None if absent or unreadable."""
    try:
        value = float(values[key])
    except (KeyError, TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def update_figures(figures, name, values):
    """Fold one status's values into ``figures`` (controller or plant, module doc)."""
    if is_plant(name):
        figures.simulated_time = number(values, 'simulated_time')
        figures.real_time_factor = number(values, 'real_time_factor')
        rate = number(values, 'lockstep_ticks_per_wall_second')
        if rate is not None and not figures.controller_heard:
            figures.ticks_per_second = rate     # since start: the controller's is current
    elif is_controller(name):
        figures.program = values.get('active_program')
        residuals = named_numbers(values.get('residual_max', ''))
        finite = [abs(v) for v in residuals.values() if math.isfinite(v)]
        figures.residual = max(finite) if finite else None
        # The controller's window is one wall second (its 1 Hz diagnostics timer).
        figures.ticks_per_second = number(values, 'ticks')
        figures.controller_heard = True


def _figure(value, fmt, unit=''):
    return '-' if value is None else f'{value:{fmt}}{unit}'


def panel_html(controller, plant, figures, notes=()):
    """Return the status panel's HTML: the two states (coloured) and the figures.

    ``controller``, ``plant``: `State` or None (not heard); ``notes``: lines about bad
    input (shown in the warning colour). Text from the graph is escaped.
    """
    def line(label, state):
        if state is None:
            state = State('absent', 'not heard (no diagnostics)')
        return (f'<div><b>{label}:</b> <span style="color:{state.color};font-weight:bold">'
                f'{html.escape(state.text)}</span></div>')
    rows = [line('Controller', controller), line('Plant', plant),
            f'<div>Program: {html.escape(figures.program or "-")}</div>',
            f'<div>Simulated time: {_figure(figures.simulated_time, ".2f", " s")}, '
            f'real-time factor: {_figure(figures.real_time_factor, ".2f")}</div>',
            f'<div>Control ticks per second: {_figure(figures.ticks_per_second, ".0f")}, '
            f'largest residual: {_figure(figures.residual, ".3g")}</div>']
    rows += [f'<div style="color:{COLORS["warning"]}">{html.escape(note)}</div>'
             for note in notes]
    return '<div style="font-size:0.85em">' + ''.join(rows) + '</div>'
