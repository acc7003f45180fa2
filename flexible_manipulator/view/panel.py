"""The page's control panel: status, buttons, live plots, display toggles (ROS-free, viser).

`ControlPanel` lays the GUI out beside the 3D view; `nodes.view_node` feeds it and does
what its buttons ask. A button press is handed to ``request(action, argument)`` from
viser's thread (the node queues it for its own); ``action`` is one of `ACTIONS`. Each
group of buttons is disabled, with the reason shown, while the services it calls are not
there (`set_available`). `History` keeps the plots' sliding windows.
"""

from collections import deque
import html

import numpy as np

ACTIONS = ('pause', 'resume', 'reset', 'enable', 'disable', 'program')
WINDOW = 300            # samples per plot (at the node's sampling rate: ~30 s at 10 Hz)
# uPlot series colours, cycled (none is the tubes' colour map's).
SERIES_COLORS = ('#1f77b4', '#2ca02c', '#9467bd', '#8c564b', '#17becf', '#7f7f7f',
                 '#bcbd22', '#e377c2')


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

    def __init__(self, server, request):
        """Lay the panel out on viser ``server``; ``request(action, argument)`` (module doc)."""
        gui = server.gui
        self.gui = gui
        self.request = request
        with gui.add_folder('Status'):
            self.status = gui.add_html('<div>waiting for the graph\'s diagnostics</div>')
        with gui.add_folder('Controls'):
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
        self.pause.on_click(lambda _: request('pause', None))
        self.resume.on_click(lambda _: request('resume', None))
        self.reset.on_click(lambda _: request('reset', None))
        self.enable.on_click(lambda _: request('enable', None))
        self.disable.on_click(lambda _: request('disable', None))
        self.switch.on_click(lambda _: request('program', self.program.value))
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

    def set_status(self, content):
        """Show the status panel's HTML (`status.panel_html`)."""
        if self.status.content != content:
            self.status.content = content

    def set_reply(self, what, ok, text):
        """Show the reply of the service ``what``: success ``ok`` and its message."""
        color = '#1a7f37' if ok else '#c53030'
        self.reply.content = (f'<div style="font-size:0.85em">{html.escape(what)}: '
                              f'<span style="color:{color}">{html.escape(text)}</span></div>')

    def set_available(self, group, reason):
        """Enable the buttons of ``group`` ('plant', 'controller', 'program'), or disable them.

        ``reason``: why they are off (shown under them); '' or None: on.
        """
        buttons = {'plant': (self.pause, self.resume, self.reset),
                   'controller': (self.enable, self.disable),
                   'program': (self.switch, self.program)}[group]
        for button in buttons:
            if button.disabled != bool(reason):
                button.disabled = bool(reason)
        label = {'plant': self.plant_reason, 'controller': self.controller_reason,
                 'program': self.program_reason}[group]
        content = ('' if not reason else
                   f'<div style="font-size:0.8em;color:#777777">{html.escape(reason)}</div>')
        if label.content != content:
            label.content = content

    def set_programs(self, names, active):
        """Offer the programs ``names`` (the controller's list), ``active`` selected once."""
        names = tuple(names) or ('-',)
        if names != self._programs:
            self._programs = names
            self.program.options = names
            if active in names:
                self.program.value = active

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
            with self.plot_folder:
                self.plots[key] = self.gui.add_uplot(
                    data, series, title=title, aspect=1.6, order=order,
                    scales={'x': {'time': False}},
                    axes=({'label': 'simulated time [s]'}, {'label': ylabel}))
            history.take_changed()
        else:
            handle.data = data
