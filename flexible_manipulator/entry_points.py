"""Console-script entry points that catch Ctrl-C from their first instant.

Importing a node module takes seconds (numpy, the numba kernels, rclpy); without a flag
installed first, a SIGINT meanwhile would end the process with a KeyboardInterrupt
traceback ("process has died [exit code -2]" under ``ros2 launch``). Each entry point here
installs the shutdown flag (`ShutdownRequest`) before that import, and `nodes.common.run`
takes it over: a request made during the import ends the process with 0 before rclpy
starts. This module imports nothing heavy.

``python -m flexible_manipulator.entry_points <module> [args]`` does the same for a node
run as a module (``nodes.bringup`` starts its nodes so): the flag first, then the import.
"""

import importlib
import signal
import sys


class ShutdownRequest:
    """Turns SIGINT and SIGTERM into a flag the spin loop checks (`nodes.common.run`).

    rclpy's own handlers shut the context down at once, while a timer or subscription
    callback may still be publishing: that callback then dies with "publisher's context
    is invalid" and the node exits 1 with a traceback. Here the signal only asks; the loop
    finishes its callback, the node is destroyed (timers, publishers) and then the context.
    Both signals are installed explicitly: a process started in the background by a shell
    script inherits SIGINT ignored, and would otherwise never stop on it.
    """

    installed = None            # the process's request, once one is installed

    def __init__(self):
        """Install the handlers for SIGINT and SIGTERM."""
        self.requested = None
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, self.on_signal)
        ShutdownRequest.installed = self

    def on_signal(self, number, frame):
        """Record the request (the spin loop sees it within one wait period)."""
        self.requested = signal.Signals(number).name

    @classmethod
    def current(cls):
        """Return the installed request, installing one if there is none yet."""
        return cls.installed or cls()


def _entry(module):
    """Return a ``main`` that installs the flag, then imports ``module`` and runs its main."""
    def main(args=None):
        ShutdownRequest.current()
        return importlib.import_module(module).main(args)
    main.__doc__ = f'Run ``{module}.main`` with Ctrl-C caught from the start.'
    return main


plant = _entry('flexible_manipulator.nodes.plant_node')
servo_plant = _entry('flexible_manipulator.nodes.servo_node')
controller = _entry('flexible_manipulator.nodes.controller_node')
servo_controller = _entry('flexible_manipulator.nodes.servo_controller_node')
record = _entry('flexible_manipulator.recording.recorder')
view = _entry('flexible_manipulator.nodes.view_node')
container = _entry('flexible_manipulator.nodes.container')


if __name__ == '__main__':
    _entry(sys.argv.pop(1))()
