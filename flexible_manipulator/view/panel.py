"""The page's control panel: status, buttons, live plots, display toggles (ROS-free, viser).

`ControlPanel` lays the GUI out beside the 3D view; `nodes.view_node` feeds it and does
what its buttons ask. A button press is handed to ``request(action, argument)`` from
viser's thread (the node queues it for its own); ``action`` is one of `ACTIONS`. Each
group of buttons is disabled, with the reason shown, while the services it calls are not
there (`set_available`). `History` keeps the plots' sliding windows.

Who may press them is `access.Access`'s: a read-only page (served beyond loopback without
an access token) has no buttons that act, a note in their place; with a token, each page
gets its own "Access" field (viser's per-client GUI) and its presses (and its choice of
program) act only once it has given the token; a refused one is logged by the gate and
has no effect.

The plots' value axes are laid out here, not by uPlot (whose default labels keep three
decimals: residuals of 1e-4 read "0, 0, -0"): `value_ticks` puts ticks at multiples of 1,
2 or 5 times a power of ten over the window's values, `tick_labels` writes them in
engineering notation (``-200µ``, ``0``, ``1.5k``), and the axis is fixed to the ticks' span.
"""

from collections import deque
import html
import math

import numpy as np

from .access import Access, TOKEN

ACTIONS = ('pause', 'resume', 'reset', 'enable', 'disable', 'program')
WINDOW = 300            # samples per plot (at the node's sampling rate: ~30 s at 10 Hz)
# uPlot series colours, cycled (none is the tubes' colour map's).
SERIES_COLORS = ('#1f77b4', '#2ca02c', '#9467bd', '#8c564b', '#17becf', '#7f7f7f',
                 '#bcbd22', '#e377c2')
TICK_INTERVALS = 4          # whole steps in the values' span at most (value_ticks)
# SI prefixes of the powers of a thousand; outside them a label ends in e<exponent>.
PREFIXES = {-12: 'p', -9: 'n', -6: 'µ', -3: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T'}


def value_ticks(values, intervals=TICK_INTERVALS):
    """Return (ticks, step) of a value axis spanning the finite ``values``, or None.

    The step is the smallest of 1, 2, 5 times a power of ten that cuts the values' span in
    at most ``intervals`` pieces; the ticks are its multiples from the one at or below the
    smallest value to the one at or above the largest. Equal values get a span of a tenth
    of their size about them (zero: -1 to 1).
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values):
        return None
    low, high = float(values.min()), float(values.max())
    if high == low:
        pad = abs(low) / 10.0 or 1.0
        low, high = low - pad, high + pad
    raw = (high - low) / intervals
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-12))
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    return [k * step for k in range(first, last + 1)], step


def tick_labels(ticks, step):
    """Return the labels of ``ticks`` spaced by ``step``: engineering notation.

    One power of a thousand for the axis, the largest tick's (a prefix of `PREFIXES`, else
    ``e<exponent>``), and the decimals the step needs at that power; zero is ``0`` (never
    ``-0``).
    """
    largest = max(abs(t) for t in ticks)
    exponent = 3 * math.floor(math.log10(largest) / 3 + 1e-9) if largest else 0
    suffix = PREFIXES.get(exponent, f'e{exponent}')
    scale = 10.0 ** exponent
    decimals = max(0, math.ceil(-math.log10(step / scale) - 1e-9))
    labels = []
    for tick in ticks:
        text = f'{tick / scale:.{decimals}f}'
        labels.append('0' if float(text) == 0 else text + suffix)
    return labels


class History:
    """A sliding window of named series sampled together: (t, values) pairs.

    When the names change (another program, other rows) the window starts again.
    """

    def __init__(self, size=WINDOW):
        """Start empty, keeping the last ``size`` samples."""
        self.size = size
        self.names = ()
        self.samples = deque(maxlen=size)
        self.changed = False        # the names changed since `take_changed`

    def add(self, t, names, values):
        """Add the ``values`` (one per name) at time ``t`` [s]; a time going back restarts."""
        names = tuple(names)
        if names != self.names or (self.samples and t < self.samples[-1][0]):
            self.names, self.changed = names, self.changed or names != self.names
            self.samples.clear()
        self.samples.append((float(t), np.asarray(values, dtype=float)))

    def take_changed(self):
        """Return whether the names changed since the last call."""
        changed, self.changed = self.changed, False
        return changed

    def arrays(self):
        """Return (t, series...) as 1-D arrays for uPlot (non-finite values as NaN)."""
        if not self.samples:
            return (np.zeros(0),) + tuple(np.zeros(0) for _ in self.names)
        t = np.array([s[0] for s in self.samples])
        values = np.array([s[1] for s in self.samples]).reshape(len(t), -1)
        return (t,) + tuple(values[:, k] for k in range(values.shape[1]))


class ControlPanel:
    """The GUI of the page (module doc)."""

    PLOTS = (('residuals', 'Program residuals φ'),
             ('efforts', 'Effort / limit'),
             ('deflection', 'Largest elastic deflection [m]'))

    def __init__(self, server, request, access=None):
        """Lay the panel out on viser ``server``; ``request(action, argument)`` (module doc).

        ``access``: the `access.Access` gate of the page's controls (None: open to all).
        """
        gui = server.gui
        self.gui = gui
        self.request = request
        self.access = access or Access('127.0.0.1')
        self.notes = {}                 # page id -> its "Access" note (TOKEN mode)
        with gui.add_folder('Status'):
            self.status = gui.add_html('<div>waiting for the graph\'s diagnostics</div>')
        with gui.add_folder('Controls'):
            if self.access.controls:
                self.add_controls(gui)
            else:
                self.read_only = gui.add_html(note_html(
                    f'Read-only page: served on {self.access.host}, beyond loopback, '
                    'without an access token: no controls here (the view served on '
                    'loopback, or with the parameter access_token, has them).'))
        self.plot_folder = gui.add_folder('Plots')
        self.plots = {}
        with gui.add_folder('Display'):
            self.show_world = gui.add_checkbox('World frame', False)
            self.show_tool = gui.add_checkbox('Tool frame', True)
            self.show_trace = gui.add_checkbox('Tip trace', True)
            self.legend = gui.add_html('')
        self.set_available('plant', 'no simulated plant heard yet')
        self.set_available('controller', 'no controller heard yet')
        self.set_available('program', 'no controller heard yet')
        self._programs = None
        self._legend = None
        if self.access.mode == TOKEN:
            server.on_client_connect(self.add_access)
            server.on_client_disconnect(self.drop_access)

    def add_controls(self, gui):
        """Add the buttons, each press going through the gate (`press`)."""
        self.pause = gui.add_button('Pause plant')
        self.resume = gui.add_button('Resume plant')
        self.reset = gui.add_button('Reset plant')
        self.plant_reason = gui.add_html('')
        self.enable = gui.add_button('Enable controller')
        self.disable = gui.add_button('Disable controller')
        self.controller_reason = gui.add_html('')
        self.program = gui.add_dropdown('Program', ('-',))
        self.switch = gui.add_button('Switch program')
        self.program_reason = gui.add_html('')
        self.reply = gui.add_html('')
        self._choice = self.program.value
        for button, action in ((self.pause, 'pause'), (self.resume, 'resume'),
                               (self.reset, 'reset'), (self.enable, 'enable'),
                               (self.disable, 'disable'), (self.switch, 'program')):
            button.on_click(self.presser(action))
        self.program.on_update(self.choose)

    def presser(self, action):
        """Return the click callback of ``action``'s button (`press`).

        Coroutines: viser runs them on its event loop in the order the pages' messages
        came (a plain function would run on a thread pool, racing a choice of program).
        """
        async def pressed(event):
            self.press(action, event)
        return pressed

    def press(self, action, event):
        """Request ``action`` for a press the gate lets through; say so to a refused page."""
        if not self.access.check(action, event.client_id):
            return self.tell(event.client_id, f'{action}: refused (give the access token '
                                              'first); nothing was done')
        self.request(action, self._choice if action == 'program' else None)

    async def choose(self, event):
        """Keep a page's choice of program if the gate lets it; else put the last one back.

        The dropdown is shared by every page: a refused page must not pick what another's
        Switch sends (a coroutine: `presser`).
        """
        if event.client_id is None:
            # The panel's own assignment (set_programs, a put-back), whose callback viser
            # runs later on its loop: it set the choice itself, and by now the value may
            # be a page's pick that this would take for granted.
            return
        if self.access.check('choose program', event.client_id):
            self._choice = self.program.value
        elif self.program.value != self._choice:
            self.program.value = self._choice
            self.tell(event.client_id, 'choosing a program: refused (give the access token '
                                       'first)')

    def add_access(self, client):
        """Give page ``client`` its "Access" field (TOKEN mode): the token, and Unlock."""
        with client.gui.add_folder('Access', order=-1.0):
            field = client.gui.add_text('Access token', '', hint='The token the view was '
                                        'started with (parameter access_token).')
            unlock = client.gui.add_button('Unlock controls')
            self.notes[client.client_id] = client.gui.add_html(note_html(
                'The controls act once this page has given the access token.'))

        async def on_unlock(event):
            presented, field.value = field.value, ''
            if event.client_id != client.client_id:      # not this page's own field
                return
            if self.access.unlock(client.client_id, presented):
                field.visible = unlock.visible = False
                self.tell(client.client_id, 'controls unlocked on this page', ok=True)
            else:
                self.tell(client.client_id, 'wrong access token: refused')
        unlock.on_click(on_unlock)

    def drop_access(self, client):
        """Forget page ``client`` (closed)."""
        self.access.forget(client.client_id)
        self.notes.pop(client.client_id, None)

    def tell(self, client, text, ok=False):
        """Show ``text`` in page ``client``'s own "Access" note (where it has one)."""
        note = self.notes.get(client)
        if note is not None:
            color = '#1a7f37' if ok else '#c53030'
            note.content = (f'<div style="font-size:0.85em;color:{color}">'
                            f'{html.escape(text)}</div>')

    def set_status(self, content):
        """Show the status panel's HTML (`status.panel_html`)."""
        if self.status.content != content:
            self.status.content = content

    def set_reply(self, what, ok, text):
        """Show the reply of the service ``what``: success ``ok`` and its message."""
        if not self.access.controls:
            return
        color = '#1a7f37' if ok else '#c53030'
        self.reply.content = (f'<div style="font-size:0.85em">{html.escape(what)}: '
                              f'<span style="color:{color}">{html.escape(text)}</span></div>')

    def set_available(self, group, reason):
        """Enable the buttons of ``group`` ('plant', 'controller', 'program'), or disable them.

        ``reason``: why they are off (shown under them); '' or None: on. A read-only
        page has none.
        """
        if not self.access.controls:
            return
        buttons = {'plant': (self.pause, self.resume, self.reset),
                   'controller': (self.enable, self.disable),
                   'program': (self.switch, self.program)}[group]
        for button in buttons:
            if button.disabled != bool(reason):
                button.disabled = bool(reason)
        label = {'plant': self.plant_reason, 'controller': self.controller_reason,
                 'program': self.program_reason}[group]
        content = note_html(reason) if reason else ''
        if label.content != content:
            label.content = content

    def set_programs(self, names, active):
        """Offer the programs ``names`` (the controller's list), ``active`` selected once."""
        names = tuple(names) or ('-',)
        if names != self._programs and self.access.controls:
            self._programs = names
            self.program.options = names
            if active in names:
                self.program.value = active
            self._choice = self.program.value

    def set_legend(self, content):
        """Show the tubes' colour legend (`geometry.legend_html`)."""
        if content != self._legend:
            self._legend = content
            self.legend.content = content

    def plot(self, key, history, ylabel=''):
        """Draw the sliding window ``history`` in the plot ``key`` (one of `PLOTS`)."""
        data = history.arrays()
        if len(data[0]) < 2 or not history.names:
            return
        handle = self.plots.get(key)
        if handle is not None and (history.take_changed() or
                                   len(handle.series) != len(data)):
            handle.remove()
            handle = None
        if handle is None:
            title = dict(self.PLOTS)[key]
            series = ({'label': 't [s]'},) + tuple(
                {'label': name, 'stroke': SERIES_COLORS[k % len(SERIES_COLORS)], 'width': 1.5}
                for k, name in enumerate(history.names))
            order = [k for k, _ in self.PLOTS].index(key)      # the same place when remade
            scales, axes = value_axis(data[1:], ylabel)
            with self.plot_folder:
                self.plots[key] = self.gui.add_uplot(
                    data, series, title=title, aspect=1.6, order=order,
                    scales=scales, axes=axes, padding=(10, 24, 0, 0))   # room: top label
            history.take_changed()
        else:
            handle.data = data
            scales, axes = value_axis(data[1:], ylabel)
            if axes != handle.axes:         # new ticks: the page draws the chart again
                handle.scales, handle.axes = scales, axes


def note_html(text):
    """Return a grey note's HTML (under the buttons)."""
    return f'<div style="font-size:0.8em;color:#777777">{html.escape(text)}</div>'


def value_axis(series, label):
    """Return uPlot's (scales, axes) for plotting ``series`` against simulated time.

    The value axis is fixed to `value_ticks`' span, its ticks labelled by `tick_labels`.
    """
    time_axis = {'label': 'simulated time [s]'}
    found = value_ticks(np.concatenate(series)) if len(series) else None
    if found is None:
        return {'x': {'time': False}}, (time_axis, {'label': label})
    ticks, step = found
    return ({'x': {'time': False}, 'y': {'range': (ticks[0], ticks[-1])}},
            (time_axis, {'label': label, 'splits': tuple(ticks),
                         'values': tuple(tick_labels(ticks, step))}))
