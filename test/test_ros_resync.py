"""A lockstep loop outlives its controller: after each restart it resumes, in lockstep.

Plant (lockstep) and controller (config/sim.yaml) run in their own processes. The
controller is killed (SIGKILL: its shared-memory ports stay behind, and the new one takes
them over) and started again, five times. Expected each time:

* the loop resumes within the new controller's start-up (measured here: from its start to
  its 'controlling' line) plus two of Fast DDS's participant announcement periods (3 s, the
  middleware's default: a controller that missed the plant's announcement discovers it at
  the next one, as measured; one may be missed) plus four resend periods;
* the loop stays in lockstep: one state in flight. The controller is then stopped
  (SIGSTOP) for two resend periods, as a loaded machine delays a controller's answers:
  the plant re-sends its waiting state meanwhile, and the controller finds the copies
  queued and answers each. The plant must advance once for all of them: each extra step
  would stay in the loop for good as one more state in flight, every later command acting
  periods late. The controller measures that delay from the efforts the states report
  (`input_delay`, 0 in lockstep): once the loop runs again, it must be 0. (The stop stays
  short: a process stopped for about a second, the period of Fast DDS's shared-memory
  port health check, can be taken for dead.) The copies published while it was stopped
  are not answered again (`skipped_copies`): at least one over the six stops, as each stop
  lasts two resend periods.

The plant is reset after each kill, so the new controller starts on its program (a
controller started mid-motion starts its program over: the transient can fault it and take
the arm out of the range of states it answers).
"""

import os
import signal
import time

import pytest
import yaml

from conftest import CONFIG, CONTROLLER, PLANT

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

PARAMETERS = yaml.safe_load(open(os.path.join(CONFIG, 'sim.yaml')))['plant']['ros__parameters']
RESEND = PARAMETERS['lockstep_resend_period']       # s (wall)
PERIOD = PARAMETERS['update_period']                # s (simulated)
ANNOUNCEMENT = 3.0      # s: Fast DDS's default participant announcement period
RESTARTS = 5


def seconds(header):
    """Stamp of a header in seconds."""
    return header.stamp.sec + 1e-9 * header.stamp.nanosec


def controller_values(messages, after):
    """Values of the controller's diagnostics received from index ``after`` on, in order."""
    return [{v.key: v.value for v in status.values} for msg in messages[after:]
            for status in msg.status if status.name.endswith('program controller')]


@pytest.mark.slow
def test_lockstep_loop_resumes_in_lockstep_after_each_controller_restart(probe, start_node):
    """Five SIGKILL restarts: the loop resumes within the bound and keeps one state in
    flight (module doc)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    states = probe.subscribe(JointState, '/joint_states', 1000)
    diagnostics = probe.subscribe(DiagnosticArray, '/diagnostics', 100)
    start_node(PLANT, parameters=[('timing_mode', 'lockstep')])
    probe.spin_until(lambda: states, 60, 'the initial state')
    controller = None
    skipped = 0
    for run in range(RESTARTS + 1):        # the first start, then the restarts
        reset = len(states)
        if controller is not None:
            controller.process.kill()
            controller.wait(10)
            assert probe.call(Trigger, '/plant/reset', Trigger.Request()).success
        started = time.monotonic()
        controller = start_node(CONTROLLER, name=f'controller{run}')
        probe.spin_until(lambda: 'controlling' in controller.output(), 120,
                         f'controller {run} to start')
        bound = time.monotonic() - started + 2 * ANNOUNCEMENT + 4 * RESEND

        def resumed():
            # The reset state (t = 0) comes first, then states stepped from it.
            times = [seconds(s.header) for s in states[reset:]]
            return 0.0 in times and times[-1] >= 10 * PERIOD
        probe.spin_until(resumed, 120, f'the loop to resume with controller {run}')
        took = time.monotonic() - started
        assert took <= bound, f'controller {run}: resumed after {took:.2f} s > {bound:.2f} s'

        controller.process.send_signal(signal.SIGSTOP)
        probe.spin_for(2 * RESEND)
        controller.process.send_signal(signal.SIGCONT)
        frozen = seconds(states[-1].header)
        probe.spin_until(lambda: seconds(states[-1].header) >= frozen + 10 * PERIOD, 60,
                         f'the loop to run again after controller {run} was stopped')
        count = len(diagnostics)
        # The second report from now on covers ticks of the running loop only.
        probe.spin_until(lambda: len(controller_values(diagnostics, count)) >= 2, 10,
                         'two controller diagnostics after the stop')
        values = controller_values(diagnostics, count)[-1]
        assert values['input_delay_periods'] == '0', (
            f'controller {run}: after the stop the commands act '
            f'{values["input_delay_periods"]} periods late (in lockstep: 0)')
        assert values['active_program'] == 'lambda_circle'
        assert 'periods late' not in controller.output()
        skipped += int(values['skipped_copies'])
    assert skipped >= 1, 'no copy of an answered state was skipped'
