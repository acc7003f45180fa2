"""The servoconstraint model files: they load, simulate, satisfy what their comments claim,
and bad fields are refused by name.

The conditions each file must satisfy are evaluated here from Kozlov's formulas (2015, as
rebuilt in shared/science/kozlov_servoconstraints.md), from the YAML text read with PyYAML,
never from values the loader computed.
"""

import copy
import math
import os

import numpy as np
import pytest
import yaml

from flexible_manipulator.mechanics.servo import BASE_OUTPUTS, ServoSystem
from flexible_manipulator.mechanics.simulation import NonFiniteStateError, Simulation
from flexible_manipulator.model_config import ConfigError, load_model, model_from_dict

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config',
                      'models')
RIGID = ['suslov_classical', 'suslov_servo_generic', 'suslov_linear_integral',
         'suslov_invariant_measure', 'suslov_heavy_kharlamova', 'suslov_free_actuated']
SLEIGH = ['sleigh_servo', 'sleigh_incline', 'sleigh_classical', 'sleigh_free_actuated']
BLOW_UP = 'suslov_servo_generic'


def path(name):
    return os.path.join(MODELS, name + '.yaml')


def raw(name):
    with open(path(name), encoding='utf-8') as stream:
        return yaml.safe_load(stream)


def tensor(values):
    ixx, iyy, izz, ixy, ixz, iyz = values
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


@pytest.mark.parametrize('name', RIGID + SLEIGH)
@pytest.mark.parametrize('method', ['rk4', 'rosenbrock2', 'rosenbrock3'])
def test_every_servo_config_loads_and_simulates_one_second(name, method):
    """Sizes, names and outputs as the spec says; 1 s from the file's initial state stays
    finite with finite outputs, except the generic top, whose blow-up is reported."""
    spec = raw(name)
    model = load_model(path(name))
    assert isinstance(model, ServoSystem) and model.name == name
    assert model.kind == ('rigid_body' if name in RIGID else 'sleigh')
    assert model.realization == spec.get('realization', 'servo')
    assert model.nu == (1 if model.realization == 'free' else 0)
    assert (model.nq, model.nv) == ((4, 3) if name in RIGID else (3, 3))
    np.testing.assert_array_equal(model.initial_q, spec['initial']['q'])
    np.testing.assert_array_equal(model.initial_v, spec['initial']['v'])
    assert model.output_names[:len(BASE_OUTPUTS)] == BASE_OUTPUTS
    sim = Simulation(model, 1e-3, method, model.initial_q, model.initial_v)
    u = np.zeros(model.nu)
    if name == BLOW_UP:
        with pytest.raises(NonFiniteStateError, match='blow-up'):
            sim.advance(u, 1.0)
        return
    sim.advance(u, 1.0)
    values = model.outputs(model.create_data(), sim.q, sim.v, u if model.nu else None)
    assert values.shape == (len(model.output_names),) and np.all(np.isfinite(values))
    assert np.all(np.isfinite(sim.state))


def paper_frame_quantities(spec):
    """I', b' in Kozlov's frame (e3 = a/|a|, e2 along b's part orthogonal to a)."""
    inertia, a, b = tensor(spec['inertia']), np.array(spec['a'], float), np.array(spec['b'], float)
    e3 = a / np.linalg.norm(a)
    n = b - (b @ e3) * e3
    e2 = n / np.linalg.norm(n)
    P = np.column_stack([np.cross(e2, e3), e2, e3])
    return P.T @ inertia @ P, P.T @ b


def test_rigid_body_configs_satisfy_their_conditions():
    """Each rigid-body file is the case its name says (Kozlov section 5, 8), the inertia is
    a physical rigid body's (principal moments obey the triangle inequality), and the model
    lists the integrals of its case."""
    for name in RIGID:
        inertia = tensor(raw(name)['inertia'])
        moments = np.linalg.eigvalsh(inertia)
        assert moments[0] > 0 and moments[0] + moments[1] >= moments[2], name
    spec = raw('suslov_classical')
    assert np.linalg.norm(np.cross(spec['a'], spec['b'])) == 0.0
    inertia = tensor(spec['inertia'])
    assert inertia[0, 1] == inertia[1, 2] == 0.0 and inertia[0, 2] != 0.0   # the tanh/sech frame
    Ip, (b1, b2, b3) = paper_frame_quantities(raw('suslov_servo_generic'))
    I11, I22, I12, I13, I23 = Ip[0, 0], Ip[1, 1], Ip[0, 1], Ip[0, 2], Ip[1, 2]
    assert abs(b2) > 0.1
    assert abs(b3 * I13 + b2 * I12) > 0.1                                  # (5.9)
    assert abs(I12 * (I23 ** 2 - I13 ** 2) - (I22 - I11) * I13 * I23) > 0.1   # (5.13)
    assert abs(b3 * (I11 * I22 - I12 ** 2) - b2 * (I11 * I23 - I12 * I13)) > 1   # (5.5)
    for name in ('suslov_linear_integral', 'suslov_free_actuated'):
        spec = raw(name)
        inertia = tensor(spec['inertia'])
        assert spec['a'] == [0.0, 0.0, 1.0] and inertia[0, 2] == inertia[1, 2] == 0.0
        assert spec['b'][0] ** 2 + spec['b'][1] ** 2 > 0 and spec['b'][2] != 0
        assert 'linear_integral' in load_model(path(name)).output_names
    Ip, (_, b2, b3) = paper_frame_quantities(raw('suslov_invariant_measure'))
    I11, I22, I12, I13, I23 = Ip[0, 0], Ip[1, 1], Ip[0, 1], Ip[0, 2], Ip[1, 2]
    assert abs(b2 * (I11 ** 2 - I11 * I22 + 2 * I12 ** 2 + I13 ** 2)
               + b3 * (I12 * I13 - I11 * I23)) < 1e-12                     # (5.15)
    assert abs(b2 * (I11 * I12 + I12 * I22 + I13 * I23) + b3 * (I13 * I22 - I12 * I23)) < 1e-12
    assert abs(b2) > 0.1 and abs(b3 * (I11 * I22 - I12 ** 2) - b2 * (I11 * I23 - I12 * I13)) > 1
    assert 'cubic_integral' in load_model(path('suslov_invariant_measure')).output_names
    spec = raw('suslov_heavy_kharlamova')
    inertia, a, b, c = (tensor(spec['inertia']), np.array(spec['a']), np.array(spec['b']),
                        np.array(spec['weight_moment']))
    assert np.linalg.norm(np.cross(inertia @ a, a)) == 0.0 and c @ a == 0.0 and c @ b == 0.0
    assert np.linalg.norm(c) > 0 and np.linalg.norm(np.cross(a, b)) > 0   # heavy, servo
    assert load_model(path('suslov_heavy_kharlamova')).output_names[-2:] == (
        'kharlamova_integral', 'gamma_norm')


def test_sleigh_configs_satisfy_their_conditions():
    """sleigh_servo: gamma = beta u - alpha w > 0 and 0 < beta u < gamma (the curl of
    (6.5)); sleigh_incline: c = c_s/b_s > 0 on a slope (Theorem 6); sleigh_classical:
    a_s = c_s = 0 and eps > 0 (tanh/sech); the free sleigh is the servo sleigh's body."""
    spec = raw('sleigh_servo')
    a_s, b_s, c_s = spec['control']
    alpha, beta = a_s / b_s, spec['mass'] * c_s / (spec['inertia'] * b_s)
    omega, u, lateral = spec['initial']['v']
    gamma = beta * u - alpha * omega
    assert alpha > 0 and beta > 0 and gamma > 0 and 0 < beta * u < gamma and lateral == 0
    assert spec.get('offset', 0.0) == 0.0 and spec.get('slope', 0.0) == 0.0
    spec = raw('sleigh_incline')
    assert spec['control'][2] / spec['control'][1] > 0 and 0 < spec['slope'] < math.pi / 2
    assert spec['initial']['q'][2] == pytest.approx(math.pi / 2 - 0.1, abs=1e-15)
    spec = raw('sleigh_classical')
    assert spec['control'][0] == spec['control'][2] == 0 and spec['offset'] > 0
    assert spec['inertia'] > spec['mass'] * spec['offset'] ** 2
    free, servo_spec = raw('sleigh_free_actuated'), raw('sleigh_servo')
    for key in ('mass', 'inertia', 'control', 'offset', 'slope', 'initial'):
        assert free[key] == servo_spec[key], key
    assert free['realization'] == 'free'


def rigid_spec():
    return copy.deepcopy(raw('suslov_linear_integral'))


def sleigh_spec():
    return copy.deepcopy(raw('sleigh_servo'))


BAD_RIGID = [
    ('inertia', [1.0, 1.0, 1.0, 2.0, 0.0, 0.0], r'inertia: must be positive definite'),
    ('inertia', [1.0, 1.0], r'inertia: expected a list of 6 numbers'),
    ('a', [0.0, 0.0, 0.0], r'a: must not be the zero vector'),
    ('b', [1.0, 0.0, 0.0], r'b: realizability margin <I\^-1 a, b> = 0'),
    ('b', [0.0, 'x', 1.0], r'b\[1\]: expected a number'),
    ('realization', 'ideal', r'realization: expected one of servo, free'),
    ('stabilization', -2.0, r'stabilization: must be >= 0'),
    ('omega_max', 0.0, r'omega_max: must be > 0'),
    ('weight_moment', [0.0, float('nan'), 0.0], r'weight_moment\[1\]: expected a finite'),
    ('initial', {'q': [1.0, 0.0, 0.0, 0.5], 'v': [0.0, 0.0, 0.0]},
     r'initial\.q: the attitude quaternion must be unit'),
    ('initial', {'v': [0.0, float('nan'), 0.0]}, r'initial\.v\[1\]: expected a finite number'),
    ('initial', {'v': [0.0, float('inf'), 0.0]}, r'initial\.v\[1\]: expected a finite number'),
    ('initial', {'v': [0.0, 1.0, 0.5]}, r'initial\.v: violates the constraint'),
    ('initial', {'w': [0.0, 0.0, 0.0]}, r'initial\.w: unknown field'),
    ('gravity', [0.0, 0.0, -9.81], r'gravity: unknown field'),
]
BAD_SLEIGH = [
    ('control', [0.5, 0.0, 0.01], r'control: realizability margin'),
    ('mass', 0.0, r'mass: must be > 0'),
    ('inertia', [0.05], r'inertia: expected a number'),
    ('offset', 0.5, r'inertia: the moment of inertia about O must exceed m eps\^2'),
    ('slope', 1.6, r'slope: must be in \(-pi/2, pi/2\)'),
    ('initial', {'q': [0.0, float('nan'), 0.0]}, r'initial\.q\[1\]: expected a finite'),
]


BAD = [('rigid',) + case for case in BAD_RIGID] + [('sleigh',) + case for case in BAD_SLEIGH]


@pytest.mark.parametrize('kind, field, value, message', BAD,
                         ids=[f'{case[0]}-{i}-{case[1]}' for i, case in enumerate(BAD)])
def test_bad_fields_are_refused_by_name(kind, field, value, message):
    """Every refusal is a ConfigError whose message names the source and the field."""
    spec = rigid_spec() if kind == 'rigid' else sleigh_spec()
    spec[field] = value
    with pytest.raises(ConfigError, match=r'^servo\.yaml: ' + message):
        model_from_dict(spec, source='servo.yaml')


def test_missing_fields_unknown_type_and_stabilized_start():
    """A missing required field is named; an unknown type lists the servo types; with a
    stabilization gain an initial state off the constraint is allowed (it decays)."""
    spec = rigid_spec()
    del spec['b']
    with pytest.raises(ConfigError, match=r'^m: b: required field is missing'):
        model_from_dict(spec, source='m')
    spec = sleigh_spec()
    spec['type'] = 'servo_skate'
    with pytest.raises(ConfigError, match='servo_rigid_body, servo_sleigh'):
        model_from_dict(spec)
    spec = rigid_spec()
    spec['initial'] = {'v': [0.0, 1.0, 0.5]}
    spec['stabilization'] = 2.0
    model = model_from_dict(spec)
    assert model.initial_v[2] == 0.5 and model.stabilization == 2.0


def test_load_model_names_the_file(tmp_path):
    """load_model prefixes the path; a quaternion within 1e-6 of unit is normalized."""
    spec = rigid_spec()
    spec['initial'] = {'q': [1.0 + 1e-7, 0.0, 0.0, 0.0]}
    target = tmp_path / 'top.yaml'
    target.write_text(yaml.safe_dump(spec))
    model = load_model(str(target))
    assert np.linalg.norm(model.initial_q) == 1.0
    spec['a'] = [0.0, 0.0]
    target.write_text(yaml.safe_dump(spec))
    with pytest.raises(ConfigError, match=f'^{target}: a: expected a list of 3 numbers'):
        load_model(str(target))
