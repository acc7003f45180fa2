"""Recorded against simulated signals, before and after the fit: one PNG per fitted signal.

Each figure (`recording.figures`' style and size) shows a signal as recorded, as the model
file's parameters replay it from the measured window starts (before the fit) and as the
fitted parameters and starts replay it (after), with the windows' starts dotted; below,
the residual after the fit against its RMS. `draw` returns the figures too, so that tests
can compare the plotted lines with the fit.
"""

import re

import matplotlib.pyplot as plt
import numpy as np

from ..recording.figures import save


def file_name(signal):
    """PNG name of a signal: 'shoulder position' -> 'identify_shoulder_position'."""
    return 'identify_' + re.sub(r'\W+', '_', signal.name).strip('_')


def figure(result, index):
    """Draw the figure of signal ``index`` of a `Result`."""
    data, outcome = result.data, result.outcome
    signal, t = data.signals[index], data.times
    rms = result.rms()[index]
    drawn, (top, bottom) = plt.subplots(2, sharex=True, figsize=(8, 6),
                                        gridspec_kw={'height_ratios': [2, 1]})
    top.plot(t, data.values[:, index], '.', color='0.6', markersize=2, label='recorded')
    top.plot(t, outcome.before[:, index], '--', label='simulated, model file')
    top.plot(t, outcome.after[:, index], '-', label='simulated, fitted')
    bottom.plot(t, outcome.residual[:, index], '-', linewidth=0.8,
                label=f'recorded - fitted (RMS {rms:.3g})')
    for axes in (top, bottom):
        for first, _ in result.windows[1:]:
            axes.axvline(t[first], color='0.8', linestyle=':')
    bottom.axhline(rms, color='0.4', linestyle=':')
    bottom.axhline(-rms, color='0.4', linestyle=':')
    top.set(ylabel=f'{signal.name} [{signal.unit}]',
            title=f'{signal.name}: recorded and replayed (dotted: window starts)')
    bottom.set(xlabel='simulated time [s]', ylabel=f'residual [{signal.unit}]')
    top.legend(fontsize='small')
    bottom.legend(fontsize='small')
    return drawn


def draw(result, directory):
    """Write the figure of every fitted signal to ``directory``; {name: (path, figure)}."""
    drawn = {}
    for index, signal in enumerate(result.data.signals):
        if not np.any(np.isfinite(result.data.values[:, index])):
            continue
        made = figure(result, index)
        name = file_name(signal)
        drawn[name] = (save(made, directory, name), made)
    return drawn
