"""Stop a command N times as a terminal's Ctrl-C does and check that it ends cleanly.

The manual check of doc/setup.md ("Checking the launch files by hand"), for the real
``ros2 launch`` and ``ros2 run``::

    python tools/ctrl_c_launch.py -n 20 -- ros2 launch flexible_manipulator sim.launch.py
    python tools/ctrl_c_launch.py --signal TERM --any-exit -- ros2 run flexible_manipulator plant

Each run starts the command in a process group of its own, waits ``--settle`` seconds,
sends the signal to the whole group (a terminal's Ctrl-C reaches every process of the
foreground group, and ``ros2 launch`` with a terminal on stdin, as here, relies on that: it
does not forward SIGINT itself), and waits up to ``--timeout`` seconds for the group to be
empty. A run passes when the
command exits 0 (any code with ``--any-exit``: ``ros2 run`` has no SIGTERM handler and dies
of it, while its node still shuts down), its output has no "process has died", no
"Traceback" and no non-zero "exit code", and no process of the group is left. One line
per run, then the total; the exit code is the number of failed runs. Failed runs' logs are
kept.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

BAD = re.compile(r'process has died|Traceback|exit code (?!0\b)-?\d+|failed to terminate')


def group_members(pgid):
    """Return the pids of the live (not zombie) processes of process group ``pgid``."""
    members = []
    for entry in os.listdir('/proc'):
        try:
            with open(f'/proc/{entry}/stat') as stream:
                fields = stream.read().rsplit(')', 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != 'Z' and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def one_run(command, number, options):
    """Start, settle, signal and watch ``command`` once; return (passed, seconds, line)."""
    log = tempfile.NamedTemporaryFile('w+', prefix='ctrl_c_', suffix='.log', delete=False)
    terminal, stdin = os.openpty() if options.tty else (None, subprocess.DEVNULL)
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=stdin,
                               start_new_session=True)
    time.sleep(options.settle)
    running = len(group_members(process.pid))
    start = time.monotonic()
    os.killpg(process.pid, getattr(signal, 'SIG' + options.signal))
    while time.monotonic() - start < options.timeout:
        if process.poll() is not None and not group_members(process.pid):
            break
        time.sleep(0.05)
    seconds = time.monotonic() - start
    left = group_members(process.pid)
    names = []
    for pid in left:
        try:
            with open(f'/proc/{pid}/comm') as stream:
                names.append(stream.read().strip())
        except OSError:
            pass
    if left or process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    code = process.wait()
    if terminal is not None:
        os.close(terminal)
        os.close(stdin)
    log.seek(0)
    text = log.read()
    log.close()
    bad = sorted({match.group(0) for match in BAD.finditer(text)})
    passed = not bad and not left and (code == 0 or options.any_exit)
    if passed:
        os.unlink(log.name)
    line = (f'run {number}: exit {code}, {seconds:.2f} s, {running} processes at the signal, '
            f'{text.count("finished cleanly")} finished cleanly, {len(left)} left behind'
            f'{" " + repr(names) if names else ""}'
            f'{", found " + repr(bad) if bad else ""}: '
            f'{"ok" if passed else "FAILED, log " + log.name}')
    return passed, seconds, line


def main(argv=None):
    """Run the command ``-n`` times and print one line per run and a total."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('-n', '--runs', type=int, default=20)
    parser.add_argument('--settle', type=float, default=12.0,
                        help='seconds between the start and the signal')
    parser.add_argument('--timeout', type=float, default=15.0,
                        help='seconds the group may take to end after the signal')
    parser.add_argument('--signal', choices=['INT', 'TERM'], default='INT')
    parser.add_argument('--any-exit', action='store_true',
                        help="accept any exit code of the command itself (not its nodes')")
    parser.add_argument('--no-tty', dest='tty', action='store_false',
                        help='stdin /dev/null instead of a terminal: ros2 launch is then '
                             'non-interactive and sends SIGINT to its nodes itself too')
    parser.add_argument('command', nargs='+')
    options = parser.parse_args(argv)
    # A script started in the background inherits SIGINT ignored, and so would the command
    # (Python then installs no handler and launch never sees the signal): a handler set
    # here is reset to the default in the child.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    results = []
    for number in range(1, options.runs + 1):
        results.append(one_run(options.command, number, options))
        print(results[-1][2], flush=True)
    times = [seconds for _, seconds, _ in results]
    passed = sum(ok for ok, _, _ in results)
    print(f'{passed} of {len(results)} passed (SIG{options.signal}); shutdown '
          f'{min(times):.2f}-{max(times):.2f} s: {" ".join(options.command)}')
    return len(results) - passed


if __name__ == '__main__':
    sys.exit(main())
