"""Figures of a study: its main figures against each swept parameter, one file per parameter.

Per parameter with numeric values: the RMS and the largest program residual [m or rad],
the peak effort over the inputs [N m or N] and the real-time factor of each run that
tracked to the end (status ok), against the parameter's value; the runs that stopped on a
fault or failed are counted in the title. Written with matplotlib's file backend (no
display needed).
"""

import math
import os
import re

MAIN = (('residual_rms', 'residual RMS [m or rad]'), ('residual_max', 'residual max [m or rad]'),
        ('effort_peak', 'peak effort [N m or N]'), ('real_time_factor', 'real-time factor'))


def _value(row, name):
    if name == 'effort_peak':
        peaks = [v for k, v in row.items() if k.startswith('effort_peak.')
                 and isinstance(v, (int, float))]
        return max(peaks) if peaks else math.nan
    value = row.get(name)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def sweep_figures(study, rows, directory):
    """Write one PNG per numeric parameter into ``directory``; return their paths."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot
    paths = []
    for parameter in study.parameters:
        values = [row.get(parameter.path) for row in rows]
        if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                 for v in values):
            continue
        os.makedirs(directory, exist_ok=True)
        ok = [row for row in rows if row.get('status') == 'ok']
        figure, axes = pyplot.subplots(2, 2, figsize=(9, 6.5), sharex=True)
        for axis, (name, label) in zip(axes.ravel(), MAIN):
            axis.plot([row[parameter.path] for row in ok], [_value(row, name) for row in ok],
                      'o', markersize=4)
            axis.set_ylabel(label)
            axis.grid(True, alpha=0.3)
        for axis in axes[1]:
            axis.set_xlabel(parameter.path)
        faults = sum(row.get('status') == 'fault' for row in rows)
        errors = sum(row.get('status') == 'error' for row in rows)
        figure.suptitle(f'{study.source}: {len(ok)} runs tracked, {faults} stopped on a fault, '
                        f'{errors} failed')
        figure.tight_layout()
        path = os.path.join(directory, re.sub(r'[^\w.-]+', '_', parameter.path) + '.png')
        figure.savefig(path, dpi=80)
        pyplot.close(figure)
        paths.append(path)
    return paths
