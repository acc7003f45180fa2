"""Property-based fuzzing of the model API and of `Simulation`.

The contract (mechanics.arguments, mechanics.simulation): a model function returns a
finite result or raises `ValueError` whose message starts with the name of what is wrong
(the argument, or the function when finite coordinates overflow the model's arithmetic);
forward dynamics may also raise `numpy.linalg.LinAlgError` (an inertia not positive
definite). Inside the physical range (`control.state_range`, the bounds a controller
trusts) every call succeeds. `Simulation` refuses bad construction arguments and bad
``advance`` arguments with `ValueError` naming them, and a failed step raises
`StepFailedError` with the state left as it was. Models: the planar flexible arm, the
rigid arm and the soft Cosserat arm of config/models. Expected behaviour comes from those
documented contracts, not from a run.
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from flexible_manipulator.control.state_range import StateRange
from flexible_manipulator.mechanics.simulation import Simulation, StepFailedError
from fuzzing import all_finite, ANY_FLOAT, SPECIAL, TINY, vectors
from test_program_controller import CONFIG
from flexible_manipulator.model_config import load_model

MODELS = ('two_link_flexible', 'two_link_rigid', 'two_link_soft')
_LOADED = {}
# What a ValueError of the model API may start with (module doc).
ARGUMENTS = ('q:', 'v:', 'u:', 'a:', 'link_index:', 'abscissa', 'out:')
FUNCTIONS = ('mass_matrix', 'bias_forces', 'mass_and_bias', 'forward_dynamics', 'rnea',
             'section_kinematics', 'kinetic_energy', 'potential_energy')


def model(name):
    """The model, its workspace and its physical range (loaded once)."""
    if name not in _LOADED:
        chain = load_model(str(CONFIG / 'models' / f'{name}.yaml'))
        _LOADED[name] = (chain, chain.create_data(),
                         StateRange(chain, chain.velocity_limit))
    return _LOADED[name]


def call(chain, data, function, q, v, u, link, x, a=None):
    """Call one model function with the drawn arguments (``a``: rnea's accelerations)."""
    if function == 'mass_matrix':
        return [chain.mass_matrix(data, q)]
    if function == 'bias_forces':
        return [chain.bias_forces(data, q, v)]
    if function == 'mass_and_bias':
        return list(chain.mass_and_bias(data, q, v))
    if function == 'forward_dynamics':
        return [chain.forward_dynamics(data, q, v, u)]
    if function == 'rnea':
        return [chain.rnea(data, q, v, a)]
    if function == 'section_kinematics':
        return list(chain.section_kinematics(data, q, v, link, x))
    if function == 'kinetic_energy':
        return [chain.kinetic_energy(data, q, v)]
    return [chain.potential_energy(data, q)]


def in_range(chain, limits, q, v):
    """True if (q, v) has the model's sizes and lies in the physical range."""
    n = chain.n_joints
    if q.shape != (chain.nq,) or v.shape != (chain.nv,) or not all_finite(q, v):
        return False
    return (limits.joint_problem(q[:n], v[:n]) is None
            and (chain.nv == n or limits.modal_problem(q[n:], v[n:]) is None))


@given(name=st.sampled_from(MODELS), function=st.sampled_from(FUNCTIONS), data=st.data())
def test_model_api_returns_finite_results_or_names_the_argument(name, function, data):
    """Any arguments: a finite result, or ValueError/LinAlgError naming what is wrong."""
    chain, workspace, limits = model(name)
    q = data.draw(vectors(chain.nq), 'q')
    v = data.draw(vectors(chain.nv), 'v')
    u = data.draw(vectors(chain.nu), 'u')
    a = data.draw(vectors(chain.nv), 'a')
    link = data.draw(st.one_of(st.integers(0, len(chain.links) - 1), st.integers(-3, 5)),
                     'link')
    x = data.draw(st.one_of(st.floats(0.0, 0.3), ANY_FLOAT), 'x')
    try:
        results = call(chain, workspace, function, q, v, u, link, x, a)
    except np.linalg.LinAlgError:
        assert function == 'forward_dynamics' and not in_range(chain, limits, q, v)
        return
    except ValueError as error:
        message = str(error)
        assert message.startswith(ARGUMENTS + FUNCTIONS), message
        assert not (in_range(chain, limits, q, v) and u.shape == (chain.nu,)
                    and all_finite(u) and a.shape == (chain.nv,) and all_finite(a)
                    and np.max(np.abs(a), initial=0.0) < 1e100     # M a stays finite
                    and 0 <= link < len(chain.links)
                    and 0.0 <= x <= 0.3), message
        return
    for value in results:
        assert all_finite(value), (function, value)


def simulation_arguments():
    """Construction arguments of `Simulation`: mostly sane, some hostile."""
    step = st.one_of(st.sampled_from([1e-4, 5e-4, 1e-3]), ANY_FLOAT, st.just('1e-3'),
                     st.just(True), st.just(None))
    integrator = st.sampled_from(['rk4', 'rk4', 'rosenbrock2', 'rosenbrock3', 'euler', 'heun',
                                  'rk5', ''])
    return step, integrator


@given(name=st.sampled_from(MODELS[:2]), data=st.data())
def test_simulation_refuses_bad_arguments_and_keeps_its_state(name, data):
    """Construction: a `Simulation` or ValueError. ``advance``: a finite state, ValueError
    naming ``effort`` or ``duration`` (state unchanged), or `StepFailedError` with the
    state as it was before the call."""
    chain, _, _ = model(name)
    step_strategy, integrator_strategy = simulation_arguments()
    step, integrator = data.draw(step_strategy, 'step'), data.draw(integrator_strategy)
    q0 = data.draw(st.one_of(st.none(), vectors(chain.nq)), 'q0')
    v0 = data.draw(st.one_of(st.none(), vectors(chain.nv)), 'v0')
    try:
        sim = Simulation(chain, step, integrator, q0, v0, refuse_unstable=True)
    except ValueError:
        return
    assert all_finite(sim.state)
    for _ in range(data.draw(st.integers(1, 4))):
        effort = data.draw(vectors(chain.nu), 'effort')
        steps = data.draw(st.one_of(st.integers(1, 20), st.integers(-2, 0)), 'steps')
        # Hostile durations, but none that is a valid, huge number of steps (that is a
        # long simulation, not an error): a positive float stays below 1000 steps (a drawn
        # step of 1e-9 s made 0.01 s ten million steps, and the long profile never ended).
        most = min(0.01, 1000.0 * sim.step_size)
        duration = data.draw(st.one_of(st.just(steps * sim.step_size), SPECIAL, TINY,
                                       st.floats(-1e300, 0.0),
                                       st.floats(0.0, most).filter(lambda d: d > 0.0),
                                       st.just('0.1'), st.just(None)), 'duration')
        # The same bound for every strategy: a tiny duration over a tiny step (8e-7 s over
        # 1e-17 s: 8e10 steps) is a valid long simulation too (the long profile hung on it).
        assume(not (isinstance(duration, float) and duration > most))
        before = sim.state.copy()
        try:
            sim.advance(effort, duration)
        except ValueError as error:
            assert str(error).startswith(('effort:', 'duration')), str(error)
            np.testing.assert_array_equal(sim.state, before)
            continue
        except StepFailedError:
            np.testing.assert_array_equal(sim.state, before)
            continue
        assert all_finite(sim.state) and math.isfinite(sim.time)


def test_forward_dynamics_names_a_non_finite_argument_on_the_fast_path():
    """Float64 arrays of the right sizes skip the conversion (the fast path of forward
    dynamics); a NaN velocity must still be named, not returned as NaN accelerations."""
    chain, data, _ = model('two_link_flexible')
    v = np.zeros(chain.nv)
    v[1] = math.nan
    with pytest.raises(ValueError, match='^v:'):
        chain.forward_dynamics(data, chain.neutral_configuration(), v, np.zeros(chain.nu))
