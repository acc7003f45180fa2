"""The articulated-body forward dynamics equals the composite-mass-matrix one.

Expected: `articulated_forward_dynamics` (``model.articulated``, O(n) in links)
and `composite_forward_dynamics` (M(q) and h from the walk, Cholesky
solve) solve the same equations M v' = B u - h, so on any state they agree to round-off:
1e-10 relative to the largest acceleration. Checked on random states of every shipped
chain model and of random chains that mix rigid and flexible links (modes in one or both
bending planes, geometric stiffening on and off), revolute joints on random axes and
prismatic joints, payloads, armature and joint friction (viscous and Coulomb), a fixed base
under gravity and a free-floating base. M(q) itself is checked against Pinocchio and a
brute-force kinetic energy in test_chain_pinocchio and test_flexible_validation, so
agreement here ties the new algorithm to those references.
"""

import glob
import os

import numpy as np
import pytest

from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.model_config import load_model

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')
TOLERANCE = 1e-10


def random_body(rng, mass_range=(0.1, 2.0)):
    a = rng.normal(size=(3, 3)) * 0.05
    return RigidBody(rng.uniform(*mass_range), tuple(rng.uniform(-0.1, 0.1, 3)),
                     tuple(map(tuple, a @ a.T + 1e-3 * np.eye(3))))


def random_chain(seed, n, floating=False, stiffening=True):
    """n links: every third rigid, the others flexible (1-3 modes, one or both planes)."""
    rng = np.random.default_rng(seed)
    links = []
    for j in range(n):
        axis = rng.normal(size=3)
        kind = 'prismatic' if j % 4 == 3 else 'revolute'
        joint = Joint(f'j{j}', kind, tuple(axis / np.linalg.norm(axis)),
                      tuple(rng.uniform(-0.1, 0.1, 3)), tuple(rng.uniform(-0.5, 0.5, 3)),
                      damping=rng.uniform(0.0, 0.2), armature=rng.uniform(0.0, 0.05),
                      friction=rng.uniform(0.0, 0.5), friction_velocity=rng.uniform(0.2, 2.0))
        beam = None
        if j % 3 != 2:
            modes = (int(rng.integers(1, 4)), int(rng.integers(0, 3)))
            beam = Beam(rng.uniform(0.2, 0.8), (rng.uniform(5, 50), rng.uniform(5, 50)),
                        modes, damping_ratio=rng.uniform(0.0, 0.05))
        payload = random_body(rng) if rng.uniform() < 0.5 else RigidBody()
        links.append(Link(f'l{j}', joint, rng.uniform(0.3, 0.9), random_body(rng), beam,
                          payload))
    base = random_body(rng, (5.0, 20.0)) if floating else None
    gravity = tuple(rng.normal(size=3) * 5.0)        # a floating base falls freely
    return chain_from_links(f'random{seed}', links, gravity_base=gravity,
                            geometric_stiffening=stiffening, floating_base=base)


def random_state(model, rng):
    q = model.neutral_configuration()
    nb = 6 if model.floating_base is not None else 0
    n, nv = model.n_joints, model.nv
    q[:n] += rng.uniform(-1.5, 1.5, n)
    q[n:nv - nb] += rng.normal(0.0, 0.05, nv - n - nb)
    if nb:
        axis = rng.normal(size=3)
        angle = rng.uniform(0, np.pi)
        q[nv - nb + 3:] = np.concatenate([[np.cos(angle / 2)],
                                          np.sin(angle / 2) * axis / np.linalg.norm(axis)])
        q[nv - nb:nv - nb + 3] = rng.normal(size=3)
    return q, rng.normal(0.0, 1.0, nv), rng.normal(0.0, 2.0, model.nu)


def assert_same_dynamics(model, seed, states=5):
    data = model.create_data()
    rng = np.random.default_rng(seed)
    for _ in range(states):
        q, v, u = random_state(model, rng)
        composite = model.composite_forward_dynamics(data, q, v, u)
        articulated = model.articulated_forward_dynamics(data, q, v, u)
        scale = max(1.0, np.max(np.abs(composite)))
        assert np.max(np.abs(articulated - composite)) <= TOLERANCE * scale, \
            (model.name, articulated - composite)


def chain_files():
    """The shipped model files of ``type: serial_chain``."""
    paths = sorted(glob.glob(os.path.join(MODELS, '*.yaml')))
    texts = {p: open(p).read() for p in paths}      # Cosserat chains (rod:): test_cosserat*
    return [p for p in paths if 'type: serial_chain' in texts[p] and 'rod:' not in texts[p]]


@pytest.mark.parametrize('path', chain_files(), ids=os.path.basename)
def test_shipped_chains(path):
    assert_same_dynamics(load_model(path), 0)


@pytest.mark.parametrize('seed, n, floating, stiffening', [
    (1, 1, False, True), (2, 3, False, True), (3, 5, False, False), (4, 8, False, True),
    (5, 2, True, True), (6, 6, True, False)])
def test_random_mixed_chains(seed, n, floating, stiffening):
    assert_same_dynamics(random_chain(seed, n, floating, stiffening), seed)


def test_size_checks_and_out():
    model = random_chain(7, 3)
    data = model.create_data()
    q, v, u = random_state(model, np.random.default_rng(7))
    out = np.zeros(model.nv)
    assert model.articulated_forward_dynamics(data, q, v, u, out=out) is out
    with pytest.raises(ValueError, match=r'^u: model'):
        model.articulated_forward_dynamics(data, q, v, np.zeros(model.nu + 1))


@pytest.mark.parametrize('seed, n, floating', [(8, 5, False), (9, 4, True)])
def test_explicit_stepper_on_either_algorithm_gives_the_same_motion(seed, n, floating):
    """2 ms of rk4 at 20 us (100 steps, below the random chains' fastest modal periods)
    under constant efforts: the state integrated with the articulated-body right-hand side
    equals the composite one to round-off (1e-9 of the state's size), and a chain of 4 or
    more links takes the articulated one by default."""
    from flexible_manipulator.mechanics.model.chain import ARTICULATED_FROM_LINKS
    from flexible_manipulator.mechanics.simulation import Simulation
    model = random_chain(seed, n, floating)
    assert n >= ARTICULATED_FROM_LINKS and model.dynamics_algorithm == 'articulated'
    q, v, u = random_state(model, np.random.default_rng(seed))
    states = []
    for algorithm in ('composite', 'articulated'):
        model.dynamics_algorithm = algorithm
        sim = Simulation(model, 2e-5, 'rk4', q, 0.1 * v)
        sim.advance(u, 2e-3)
        states.append(sim.state.copy())
    assert np.all(np.isfinite(states[0]))
    assert np.max(np.abs(states[1] - states[0])) <= 1e-9 * max(1.0, np.max(np.abs(states[0])))


def test_forward_dynamics_takes_the_algorithm_the_chain_names():
    """`forward_dynamics` is the articulated algorithm when `dynamics_algorithm` says so
    (chains of ARTICULATED_FROM_LINKS links or more) and the composite one otherwise:
    a singular articulated inertia names the articulated inertia, a singular M the mass
    matrix (a massless chain, links with no inertia at all)."""
    model = chain_from_links('massless', [Link(f'l{i}', Joint(f'j{i}'), 1.0) for i in range(2)])
    data, zero = model.create_data(), np.zeros(2)
    for algorithm, named in (('composite', 'mass matrix'), ('articulated', 'articulated')):
        model.dynamics_algorithm = algorithm
        with pytest.raises(np.linalg.LinAlgError, match=named):
            model.forward_dynamics(data, zero, zero, zero)
