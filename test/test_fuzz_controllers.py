"""Property-based fuzzing of the controllers' ``update`` (ROS-free), as call sequences,
and of the name mapping through which the controller node takes a message's entries.

The contract (control.safety, the module docs of both controllers): ``update`` never
raises; it returns the controller's effort array, finite and within the effort limits;
anything but tracking commands zero effort; ``status.mode`` is one of tracking, disabled,
fault, and a fault has a reason. A state that cannot be taken (wrong length, NaN, inf) or
a failure of any step latches a fault; `enable` then recovers: the next sane state is
tracked again. `hypothesis.stateful` draws sequences of states (finite, huge, tiny, NaN,
inf, wrong lengths), times that jump backwards and forwards, enables, disables and program
switches. Expected values come from that contract, not from a run: zero effort is the safe
action, and the sane state is the program's designed start (START_Q, START_V of
test_program_controller, the plant's initial state in config/sim.yaml), which the
nominal law tracks.
"""

import math

import numpy as np
import pytest
from hypothesis import event, given, strategies as st
from hypothesis.stateful import initialize, rule, RuleBasedStateMachine

from flexible_manipulator.control.program_config import load_program_file
from flexible_manipulator.control.program_controller import ProgramController
from flexible_manipulator.control.servo_controller import ServoController, ServoSettings
from flexible_manipulator.model_config import load_model
from flexible_manipulator.nodes.name_map import Match, NameMap, Problem
from fuzzing import ANY_FLOAT, name_lists, vectors
from test_program_controller import (FLEXIBLE, FLEXIBLE_PROGRAMS, flexible_settings,
                                     START_Q, START_V)
from test_servo_closed_loop import interface_models

MODES = ('tracking', 'disabled', 'fault')
TIME_STEPS = st.one_of(st.sampled_from([0.002, 0.002, 0.002, 0.0, -0.002, 0.5, 3.0]),
                       st.floats(-10.0, 10.0), ANY_FLOAT)
_CONTROLLERS = {}


def program_controller(elastic_state):
    """One controller per elastic-state source, built once (construction runs checks).

    ``following``: model following (the law on an internal model), modes measured.

    Every program of the demo's file, ``allow``ed: with the estimated elastic state the
    start-up check refuses the joint programs (their sampled loop is slowly unstable), and
    what is fuzzed here is the tick's contract, not the loop's stability.
    """
    if elastic_state not in _CONTROLLERS:
        programs, default = load_program_file(FLEXIBLE_PROGRAMS)
        programs = {name: dict(spec, non_minimum_phase='allow')
                    for name, spec in programs.items()}
        settings = (flexible_settings(model_following=True) if elastic_state == 'following'
                    else flexible_settings(elastic_state=elastic_state))
        _CONTROLLERS[elastic_state] = ProgramController(
            load_model(str(FLEXIBLE)), programs, settings, default)
    return _CONTROLLERS[elastic_state]


def fresh(controller, default):
    """Bring a reused controller to the state of a new one: disabled, no fault, no past."""
    controller.enable()
    controller.disable()
    controller.switch(default)


class ControllerContract(RuleBasedStateMachine):
    """What every tick must satisfy, whatever came before (module doc)."""

    controller = None
    t = 0.0

    def tick(self, *state):
        """One update at the current time; check what it returned."""
        effort = self.controller.update(self.t, *state)
        assert effort is self.controller.effort
        self.effort = effort
        self.effort_is_safe()
        return effort

    def advance(self, dt):
        """Move the clock (any float, even absurd: then the tick must latch a fault)."""
        self.t = self.t + dt if math.isfinite(self.t) else 0.0

    @rule()
    def enable(self):
        """Enable (clears a fault)."""
        self.controller.enable()

    @rule()
    def disable(self):
        """Disable."""
        self.controller.disable()

    def effort_is_safe(self):
        """After a tick: finite, within the limits, zero unless tracking; a fault has a
        reason; tracking only when enabled without a fault."""
        controller, status = self.controller, self.controller.status
        assert np.all(np.isfinite(self.effort))
        assert np.all(np.abs(self.effort) <= controller.effort_limit * (1 + 1e-12))
        assert status.mode in MODES
        if status.mode != 'tracking':
            assert not self.effort.any()
        if status.mode == 'fault':
            assert status.fault and controller.fault
        if status.mode == 'tracking':
            assert not controller.fault and controller.enabled


class ProgramControllerContract(ControllerContract):
    """`ProgramController` on the flexible arm: modes measured, estimated, or the internal
    model's (model following)."""

    @initialize(source=st.sampled_from(['measured', 'estimated', 'following']))
    def build(self, source):
        """The controller of the demo (servo realization, first mode of each link)."""
        self.controller = program_controller(source)
        fresh(self.controller, self.controller.program_names[0])
        self.n = self.controller.n_joints
        self.m = self.controller.model.nv - self.n

    @rule(dt=TIME_STEPS, data=st.data())
    def state(self, dt, data):
        """A drawn state: joints and (half the time) modes of any class and size."""
        self.advance(dt)
        q, v = data.draw(vectors(self.n)), data.draw(vectors(self.n))
        if data.draw(st.booleans()):
            self.tick(q, v, data.draw(vectors(self.m)), data.draw(vectors(self.m)))
        else:
            self.tick(q, v)

    @rule(name=st.sampled_from(['lambda_circle', 'joint_sine', 'hold', 'unknown']))
    def switch(self, name):
        """Switch program (an unknown name is a ValueError, nothing else)."""
        if name in self.controller.program_names:
            self.controller.switch(name)
        else:
            with pytest.raises(ValueError, match='unknown program'):
                self.controller.switch(name)

    @rule()
    def recover(self):
        """After `enable`, the program's designed start is tracked with a finite effort."""
        self.controller.enable()
        self.advance(1.0)
        effort = self.tick(np.array(START_Q), np.array(START_V), np.zeros(self.m),
                           np.zeros(self.m))
        assert self.controller.status.mode == 'tracking', self.controller.status.message
        assert np.all(np.isfinite(effort))


class ServoControllerContract(ControllerContract):
    """`ServoController` on the Suslov top and the Chaplygin sleigh (every term on)."""

    @initialize(index=st.sampled_from([0, 1]))
    def build(self, index):
        """A servo controller on a free model of test_servo_closed_loop."""
        model = interface_models()[index]
        self.controller = ServoController(model, ServoSettings(gain=7.0, period=1e-3))
        self.nq, self.nv = model.nq, model.nv
        self.sane = (np.array(model.initial_q, dtype=float),
                     np.array(model.initial_v, dtype=float))

    @rule(dt=TIME_STEPS, data=st.data())
    def state(self, dt, data):
        """A drawn state of any class and size."""
        self.advance(dt)
        self.tick(data.draw(vectors(self.nq)), data.draw(vectors(self.nv)))

    @rule()
    def recover(self):
        """After `enable`, the model's initial state is tracked with a finite effort."""
        self.controller.enable()
        self.advance(1.0)
        effort = self.tick(*self.sane)
        assert self.controller.status.mode == 'tracking', self.controller.status.message
        assert np.all(np.isfinite(effort))


TestProgramController = ProgramControllerContract.TestCase
TestServoController = ServoControllerContract.TestCase


# One map of each kind for all examples: its cache of name lists is fuzzed too (a cached
# match must equal a fresh one).
ARM = ('shoulder', 'elbow')
_SHARED = {extras: NameMap(ARM, extras=extras) for extras in (True, False)}


@given(extras=st.booleans(), names=name_lists(ARM), data=st.data())
def test_name_mapping_takes_each_entry_by_name_or_names_the_problem(extras, names, data):
    """`NameMap.match` and `Match.pick` on the names of a message (the controller's joint
    and modal states, the plant's ros2_control commands): drawn lists with extra,
    missing and doubled names, values of any class and of wrong lengths. Contract (the
    module doc of `name_map`): a name twice is refused first, then (without ``extras``)
    a name not wanted, then a wanted name missing, each `Problem` naming a name of that
    kind; otherwise each wanted entry is the value the message gives its name, or, for
    values not one per name, nothing is written. Never another exception."""
    shared, fresh = _SHARED[extras].match(names), NameMap(ARM, extras=extras).match(names)
    doubled = [n for n in names if names.count(n) > 1]
    unknown = [n for n in names if n not in ARM]
    missing = [n for n in ARM if n not in names]
    if doubled:
        expected = ('twice', doubled)
    elif unknown and not extras:
        expected = ('unknown', unknown)
    elif missing:
        expected = ('missing', missing)
    else:
        expected = None
    event('a match' if expected is None else f'refused: {expected[0]}')
    for result in (shared, fresh):
        if expected is None:
            assert isinstance(result, Match)
            assert result.ignored == tuple(unknown) and result.count == len(names)
        else:
            assert isinstance(result, Problem) and result.kind == expected[0]
            assert result.name in expected[1]
            assert result.text('joint', ARM)
    if expected is not None:
        return
    values = data.draw(vectors(len(names)))
    out = np.full(len(ARM), 7.0)
    if shared.pick(values, out):
        by_name = dict(zip(names, values))
        np.testing.assert_array_equal(out, [by_name[n] for n in ARM])
    else:
        assert len(values) != len(names) and out.tolist() == [7.0, 7.0]
